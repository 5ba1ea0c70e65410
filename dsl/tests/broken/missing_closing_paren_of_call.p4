// error: 4:29: expected `)` or `,`
parser IP(packet_in pkt, out headers_t hdr) {
    state start {
        pkt.extract(hdr.ipv4;
        transition accept;
    }
}
