// error: 3:5: bit<0>: widths must be 1..=128
header eth_h {
    bit<0> dst;
}
