// error: 2:6: expected `(` or `<`
heder eth_h {
    bit<48> dst;
}
