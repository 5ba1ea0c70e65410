// plumbing: a test program for the chip's plumbing (tests/asic/plumbing.rs). Every packet starts
// with a control header that says what to ask of the chip; the program copies it into the
// intrinsic metadata. Test program.
//
// Ingress: `loops` > 0: decrement it and recirculate (this pipe's first recirculation port).
// Otherwise `mcast` > 0: replicate to that group (cleared in the packet); otherwise unicast
// to `port`/`qid`. Always: deflect-on-drop from `dod`, ingress mirror session `mirror`
// (cleared in the packet, so copies do not mirror again) with truncation `trunc`, and the
// AFC request `afc` (cleared). Egress: records the replication id (when non-zero), the
// deflection flag and the egress port into the header; mirrors to `emirror` (cleared). A
// packet that asked for deflect-on-drop mirrors only if it was deflected, and is then dropped
// after its copy, which asks for no deflection (the trimming paper's UPDATE: a truncated copy
// of the deflected packet, the packet dropped).

header ctl_h {
    bit<8>  loops;
    bit<16> port;
    bit<8>  qid;
    bit<16> mcast;
    bit<8>  dod;
    bit<16> mirror;
    bit<16> trunc;
    bit<32> afc;
    bit<16> emirror;
    bit<16> rid;
    bit<8>  deflected;
    bit<16> egress_port;
}

struct headers_t {
    ctl_h ctl;
}

struct metadata_t {}

parser IngressParser(packet_in pkt,
                     out headers_t hdr,
                     out metadata_t meta,
                     out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(hdr.ctl);
        transition accept;
    }
}

control Ingress(inout headers_t hdr,
                inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply {
        ig_tm_md.qid = (bit<7>)hdr.ctl.qid;
        ig_tm_md.deflect_on_drop = (bit<1>)hdr.ctl.dod;
        ig_dprsr_md.mirror_session = (bit<10>)hdr.ctl.mirror;
        ig_dprsr_md.mtu_trunc_len = (bit<14>)hdr.ctl.trunc;
        ig_dprsr_md.adv_flow_ctl = hdr.ctl.afc;
        hdr.ctl.mirror = 0;
        hdr.ctl.afc = 0;
        if (hdr.ctl.loops != 0) {
            hdr.ctl.loops = hdr.ctl.loops - 1;
            ig_tm_md.recirculate = 1;
        } else {
            if (hdr.ctl.mcast != 0) {
                ig_tm_md.mcast_grp_a = hdr.ctl.mcast;
                hdr.ctl.mcast = 0;
            } else {
                ig_tm_md.ucast_egress_port = (bit<9>)hdr.ctl.port;
            }
        }
    }
}

control IngressDeparser(packet_out pkt,
                        inout headers_t hdr,
                        in metadata_t meta,
                        in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply {
        pkt.emit(hdr.ctl);
    }
}

parser EgressParser(packet_in pkt,
                    out headers_t hdr,
                    out metadata_t meta,
                    out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(hdr.ctl);
        transition accept;
    }
}

control Egress(inout headers_t hdr,
               inout metadata_t meta,
               in egress_intrinsic_metadata_t eg_intr_md,
               in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
               inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply {
        if (hdr.ctl.dod == 0) {
            eg_dprsr_md.mirror_session = (bit<10>)hdr.ctl.emirror;
        }
        if (eg_intr_md.deflection_flag != 0) {
            hdr.ctl.deflected = 1;
            if (hdr.ctl.emirror != 0) {
                eg_dprsr_md.mirror_session = (bit<10>)hdr.ctl.emirror;
                eg_dprsr_md.drop_ctl = 1;
                hdr.ctl.dod = 0;
            }
        }
        hdr.ctl.emirror = 0;
        hdr.ctl.egress_port = (bit<16>)eg_intr_md.egress_port;
        if (eg_intr_md.egress_rid != 0) {
            hdr.ctl.rid = eg_intr_md.egress_rid;
        }
    }
}

control EgressDeparser(packet_out pkt,
                       inout headers_t hdr,
                       in metadata_t meta,
                       in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply {
        pkt.emit(hdr.ctl);
    }
}

Pipeline(IngressParser(), Ingress(), IngressDeparser(),
         EgressParser(), Egress(), EgressDeparser()) pipe;
Switch(pipe) main;
