// error: 4:12: `ingress_intrinsic_metadata_t` is built in, as { bit<9> ingress_port; bit<48> ingress_mac_tstamp; bit<16> pkt_length; bit<1> mirror_on_drop_flag }: field 1 is `ingress_port`, not `resubmit_flag`
// TNA's own declaration has fields the model does not.
header ingress_intrinsic_metadata_t {
    bit<1> resubmit_flag;
    bit<1> _pad1;
    bit<2> packet_version;
    bit<3> _pad2;
    bit<9> ingress_port;
    bit<48> ingress_mac_tstamp;
}
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
    apply { }
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
