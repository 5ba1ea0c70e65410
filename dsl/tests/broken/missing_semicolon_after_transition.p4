// error: 5:26: expected `;`
parser IP(packet_in pkt, out headers_t hdr) {
    state start {
        pkt.extract(hdr.ipv4);
        transition accept
    }
}
