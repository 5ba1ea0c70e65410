// error: 5:31: expected `;`
parser IP(packet_in pkt, out headers_t hdr) {
    state start {
        transition select(hdr.eth.ether_type) {
            0x0800: parse_ipv4
            default: accept;
        }
    }
}
