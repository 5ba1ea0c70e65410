// error: 16:5: `@name(ipv4_host)`: the name is one string of letters, digits, `_` and `.`, such as `@name("ipv4_route")` (a leading dot: a global name)
header eth_h { bit<48> dst; bit<48> src; bit<16> ether_type; }
header ipv4_h { bit<32> src; bit<32> dst; bit<8> ttl; bit<8> proto; }
struct headers_t { eth_h eth; ipv4_h ipv4; }
struct meta_t { bit<8> a; bit<16> b; bit<32> c; }
parser IP(packet_in pkt, out headers_t hdr, out meta_t meta,
          out ingress_intrinsic_metadata_t ig_intr_md) {
    state start { pkt.extract(hdr.eth); pkt.extract(hdr.ipv4); transition accept; }
}
control Ing(inout headers_t hdr, inout meta_t meta,
            in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action set(bit<8> v) { meta.a = v; }
    @name(ipv4_host)
    table t { key = { hdr.ipv4.dst : exact; } actions = { set; } }
    apply { t.apply(); }
}
control ID(packet_out pkt, inout headers_t hdr, in meta_t meta,
           in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply { pkt.emit(hdr.eth); pkt.emit(hdr.ipv4); }
}
parser EP(packet_in pkt, out headers_t hdr, out meta_t meta,
          out egress_intrinsic_metadata_t eg_intr_md) {
    state start { transition accept; }
}
control Eg(inout headers_t hdr, inout meta_t meta, in egress_intrinsic_metadata_t eg_intr_md,
           in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
           inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { }
}
control ED(packet_out pkt, inout headers_t hdr, in meta_t meta,
           in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { }
}
Pipeline(IP(), Ing(), ID(), EP(), Eg(), ED()) pipe;
Switch(pipe) main;
