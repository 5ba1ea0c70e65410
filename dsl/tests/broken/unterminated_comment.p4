// error: 3:18: comment not closed: expected `*/`
header eth_h {
    bit<48> dst; /* the destination
    bit<48> src;
}
