// error: 4:12: expected a name
header eth_h {
    bit<48> dst;
    bit<48>;
}
