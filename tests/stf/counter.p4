// counter: an indexed counter (per ingress port) and a direct counter (per entry).
//
// A test program for tests/stf/counter.stf (see docs/STF.md). Packets with EtherType 0x88b5
// carry a probe header: inputs `a` and `b`, outputs `res` and `res16`; everything is sent to
// port 1 unless the program says otherwise.

header ethernet_h {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

// 16 bytes on the wire.
header probe_h {
    bit<32> a;
    bit<32> b;
    bit<32> res;
    bit<16> res16;
    bit<16> pad;
}

struct headers_t {
    ethernet_h ethernet;
    probe_h    probe;
}

struct metadata_t {
}

parser IngressParser(packet_in pkt,
                     out headers_t hdr,
                     out metadata_t meta,
                     out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            0x88b5: parse_probe;
            default: accept;
        }
    }
    state parse_probe {
        pkt.extract(hdr.probe);
        transition accept;
    }
}

control Ingress(inout headers_t hdr,
                inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {

    action send(bit<9> port) {
        ig_tm_md.ucast_egress_port = port;
    }

    action drop() {
        ig_dprsr_md.drop_ctl = 1;
    }

    // Every packet goes to port 1 unless a later table says otherwise.
    table forward {
        actions = { send; }
        default_action = send(1);
    }

    Counter<bit<64>, bit<9>>(16, CounterType_t.PACKETS_AND_BYTES) per_port;
    DirectCounter<bit<64>>(CounterType_t.PACKETS_AND_BYTES) by_a_hits;

    action count_port() {
        per_port.count(ig_intr_md.ingress_port);
    }

    table port_count {
        actions = { count_port; }
        default_action = count_port();
    }

    action mark(bit<32> v) {
        hdr.probe.res = v;
        by_a_hits.count();
    }

    action unmarked() {
        by_a_hits.count();
    }

    // Counts every entry's hits, and the misses.
    table by_a {
        key = { hdr.probe.a : exact; }
        actions = { mark; unmarked; }
        default_action = unmarked();
        size = 16;
        counters = by_a_hits;
    }

    apply {
        forward.apply();
        port_count.apply();
        if (hdr.probe.isValid()) {
            by_a.apply();
        }
    }
}

control IngressDeparser(packet_out pkt,
                        inout headers_t hdr,
                        in metadata_t meta,
                        in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.probe);
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
