// error: 3:9: expected `(` or `<`
parser IP(packet_in pkt, out headers_t hdr) {
    stat start {
        transition accept;
    }
}
