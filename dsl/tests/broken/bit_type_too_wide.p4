// error: 3:5: bit<256>: widths must be 1..=128
header eth_h {
    bit<256> dst;
}
