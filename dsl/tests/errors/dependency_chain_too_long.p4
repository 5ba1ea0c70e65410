// error: 24:11: table Ing.t5 must go in stage 4 or later (after table Ing.t4, which it depends on), but the pipe has 4 stages (short by 1 stage(s))
// chip: teaching
header eth_h { bit<48> dst; bit<48> src; bit<16> ether_type; }
struct headers_t { eth_h eth; }
struct meta_t { bit<8> a; bit<16> b; bit<32> c; }
parser IP(packet_in pkt, out headers_t hdr, out meta_t meta,
          out ingress_intrinsic_metadata_t ig_intr_md) {
    state start { pkt.extract(hdr.eth); transition accept; }
}
control Ing(inout headers_t hdr, inout meta_t meta,
            in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action s1() { meta.a = 1; }
    action s2(bit<16> v) { meta.b = v; }
    action s3(bit<32> v) { meta.c = v; }
    action s4(bit<48> v) { hdr.eth.src = v; }
    action s5(bit<16> v) { hdr.eth.ether_type = v; }
    table t1 { key = { hdr.eth.dst : exact; } actions = { s1; } size = 16; }
    table t2 { key = { meta.a : exact; } actions = { s2; } size = 16; }
    table t3 { key = { meta.b : exact; } actions = { s3; } size = 16; }
    table t4 { key = { meta.c : exact; } actions = { s4; } size = 16; }
    table t5 { key = { hdr.eth.src : exact; } actions = { s5; } size = 16; }
    apply {
        t1.apply();
        t2.apply();
        t3.apply();
        t4.apply();
        t5.apply();
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
