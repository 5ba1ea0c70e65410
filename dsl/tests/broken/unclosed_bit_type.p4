// error: 3:11: expected `>`
header eth_h {
    bit<48 dst;
}
