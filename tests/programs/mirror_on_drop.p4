// mirror_on_drop: a test program for the what-if mirror-on-drop (tests/asic/mirror_on_drop.rs).
// Every packet starts with a control header: the port to send it to and its queue. A
// mirror-on-drop copy (ig_intr_md.mirror_on_drop_flag, back from the recirculation port) is a
// trimmed header: the program marks it in the header and sends it to the same port's queue 1,
// the header queue (served first under strict priority). Test program.

header ctl_h {
    bit<16> port;
    bit<8>  qid;
    bit<8>  trimmed;
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
        ig_tm_md.ucast_egress_port = (bit<9>)hdr.ctl.port;
        if (ig_intr_md.mirror_on_drop_flag == 1) {
            hdr.ctl.trimmed = 1;
            ig_tm_md.qid = 1;
        } else {
            ig_tm_md.qid = (bit<7>)hdr.ctl.qid;
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
        transition accept;
    }
}

control Egress(inout headers_t hdr,
               inout metadata_t meta,
               in egress_intrinsic_metadata_t eg_intr_md,
               in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
               inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply {}
}

control EgressDeparser(packet_out pkt,
                       inout headers_t hdr,
                       in metadata_t meta,
                       in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply {}
}

Pipeline(IngressParser(), Ingress(), IngressDeparser(),
         EgressParser(), Egress(), EgressDeparser()) pipe;
Switch(pipe) main;
