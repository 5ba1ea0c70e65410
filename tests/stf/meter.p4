// meter: a packet meter (RFC 2698 two-rate three-colour) and a counter per colour.
//
// A test program for tests/stf/meter.stf (see docs/STF.md). Packets with EtherType 0x88b5
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
    bit<8> color;
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

    Meter<bit<8>>(16, MeterType_t.PACKETS) m;
    Counter<bit<32>, bit<2>>(4, CounterType_t.PACKETS) colours;

    // Colour the packet with meter a[7:0]: 0 green, 1 yellow, 3 red.
    action police() {
        meta.color = m.execute(hdr.probe.a[7:0]);
    }

    table policer {
        actions = { police; }
        default_action = police();
    }

    // Count the colour and report it in res16.
    action report() {
        colours.count(meta.color[1:0]);
        hdr.probe.res16 = 8w0 ++ meta.color;
    }

    table reporting {
        actions = { report; }
        default_action = report();
    }

    apply {
        forward.apply();
        if (hdr.probe.isValid()) {
            policer.apply();
            reporting.apply();
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
