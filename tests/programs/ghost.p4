// ghost: a test program for the queue depths the TM publishes to ingress (tests/asic/ghost.rs).
// Every packet starts with a header naming its egress port and queue. A probe (`kind` = 1)
// also names a queue to read: ingress writes that queue's published depth (cells, as in force
// when the probe is in the reading table's stage) into `depth`, and every packet records the
// cycle it entered the ingress parser in `tstamp` (ns). The read depends on an earlier copy,
// so it is not in the first stage. Test program.

header probe_h {
    bit<8>  kind;
    bit<7>  pad0;
    bit<9>  port;
    bit<1>  pad1;
    bit<7>  qid;
    bit<7>  pad2;
    bit<9>  read_port;
    bit<1>  pad3;
    bit<7>  read_qid;
    bit<5>  pad4;
    bit<19> depth;
    bit<48> tstamp;
}

struct headers_t {
    probe_h p;
}

struct metadata_t {
    bit<9> read_port;
    bit<7> read_qid;
}

parser IngressParser(packet_in pkt,
                     out headers_t hdr,
                     out metadata_t meta,
                     out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(hdr.p);
        transition accept;
    }
}

control Ingress(inout headers_t hdr,
                inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    QueueDepth() qd;

    apply {
        ig_tm_md.ucast_egress_port = hdr.p.port;
        ig_tm_md.qid = hdr.p.qid;
        hdr.p.tstamp = ig_prsr_md.global_tstamp;
        // Copied first, so the read depends on them and lands in a later stage.
        meta.read_port = hdr.p.read_port;
        meta.read_qid = hdr.p.read_qid;
        if (hdr.p.kind == 1) {
            hdr.p.depth = qd.read(meta.read_port, meta.read_qid);
        }
    }
}

control IngressDeparser(packet_out pkt,
                        inout headers_t hdr,
                        in metadata_t meta,
                        in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply {
        pkt.emit(hdr.p);
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
    apply { }
}

control EgressDeparser(packet_out pkt,
                       inout headers_t hdr,
                       in metadata_t meta,
                       in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { }
}

Pipeline(IngressParser(), Ingress(), IngressDeparser(),
         EgressParser(), Egress(), EgressDeparser()) pipe;
Switch(pipe) main;
