// error: 44:11: table Ing.t4 does not fit in stage 3: it needs 1 stateful ALUs and stage 3, the closest, has 0 free (short by 1)
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
    Register<bit<16>, bit<8>>(256) r0;
    RegisterAction<bit<16>, bit<8>, bit<16>>(r0) inc0 = {
        void apply(inout bit<16> value) { value = value + 1; }
    };
    action a0() { inc0.execute(meta.a); }
    table t0 { actions = { a0; } default_action = a0(); }
    Register<bit<16>, bit<8>>(256) r1;
    RegisterAction<bit<16>, bit<8>, bit<16>>(r1) inc1 = {
        void apply(inout bit<16> value) { value = value + 1; }
    };
    action a1() { inc1.execute(meta.a); }
    table t1 { actions = { a1; } default_action = a1(); }
    Register<bit<16>, bit<8>>(256) r2;
    RegisterAction<bit<16>, bit<8>, bit<16>>(r2) inc2 = {
        void apply(inout bit<16> value) { value = value + 1; }
    };
    action a2() { inc2.execute(meta.a); }
    table t2 { actions = { a2; } default_action = a2(); }
    Register<bit<16>, bit<8>>(256) r3;
    RegisterAction<bit<16>, bit<8>, bit<16>>(r3) inc3 = {
        void apply(inout bit<16> value) { value = value + 1; }
    };
    action a3() { inc3.execute(meta.a); }
    table t3 { actions = { a3; } default_action = a3(); }
    Register<bit<16>, bit<8>>(256) r4;
    RegisterAction<bit<16>, bit<8>, bit<16>>(r4) inc4 = {
        void apply(inout bit<16> value) { value = value + 1; }
    };
    action a4() { inc4.execute(meta.a); }
    table t4 { actions = { a4; } default_action = a4(); }
    apply { t0.apply(); t1.apply(); t2.apply(); t3.apply(); t4.apply(); }
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
