// error: 4:17: expected `bit`, `bool`, `}` or a name, found keyword `struct`
header eth_h {
    bit<48> dst;
    bit<48> src;
struct headers_t { eth_h eth; }
