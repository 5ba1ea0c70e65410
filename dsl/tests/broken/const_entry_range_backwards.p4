// error: 19:13: const entry 1: key `meta.count` (bit<32>, Range): the range 1000000..65536 runs backwards: its low end is above its high end
header eth_h { bit<48> dst; bit<48> src; bit<16> ether_type; }
struct headers_t { eth_h eth; }
struct meta_t { bit<32> count; }
parser IP(packet_in pkt, out headers_t hdr, out meta_t meta,
          out ingress_intrinsic_metadata_t ig_intr_md) {
    state start { pkt.extract(hdr.eth); transition accept; }
}
control Ing(inout headers_t hdr, inout meta_t meta,
            in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action drop() { ig_dprsr_md.drop_ctl = 1; }
    table heavy {
        key = { meta.count : range; }
        actions = { drop; NoAction; }
        const entries = {
            1000000 .. 65536 : drop();
        }
    }
    apply { heavy.apply(); }
}
control ID(packet_out pkt, inout headers_t hdr, in meta_t meta,
           in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply { pkt.emit(hdr.eth); }
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
