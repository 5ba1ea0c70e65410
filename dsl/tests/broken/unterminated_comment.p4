// error: 3:18: the comment is not closed: expected `*/`
header eth_h {
    bit<48> dst; /* the destination
    bit<48> src;
}
