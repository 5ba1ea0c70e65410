// error: 4:12: expected a name, found keyword `state`
header eth_h {
    bit<48> dst;
    bit<16> state;
}
