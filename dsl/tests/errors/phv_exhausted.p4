// error: 10:9: PHV (ingress): needs 19 32-bit containers, the chip has 16 (and no wider container is free)
// chip: teaching
header eth_h { bit<48> dst; bit<48> src; bit<16> ether_type; }
struct headers_t { eth_h eth; }
struct meta_t { bit<8> a; bit<16> b; bit<32> c; bit<32> w0; bit<32> w1; bit<32> w2; bit<32> w3; bit<32> w4; bit<32> w5; bit<32> w6; bit<32> w7; bit<32> w8; bit<32> w9; bit<32> w10; bit<32> w11; bit<32> w12; bit<32> w13; bit<32> w14; bit<32> w15; bit<32> w16; }
parser IP(packet_in pkt, out headers_t hdr, out meta_t meta,
          out ingress_intrinsic_metadata_t ig_intr_md) {
    state start { pkt.extract(hdr.eth); transition accept; }
}
control Ing(inout headers_t hdr, inout meta_t meta,
            in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply {
        meta.w0 = 0;
        meta.w1 = 1;
        meta.w2 = 2;
        meta.w3 = 3;
        meta.w4 = 4;
        meta.w5 = 5;
        meta.w6 = 6;
        meta.w7 = 7;
        meta.w8 = 8;
        meta.w9 = 9;
        meta.w10 = 10;
        meta.w11 = 11;
        meta.w12 = 12;
        meta.w13 = 13;
        meta.w14 = 14;
        meta.w15 = 15;
        meta.w16 = 16;
    }
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
