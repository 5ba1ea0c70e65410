// hash: hash units: CRC32 and CRC16 of the probe's inputs.
//
// A test program for tests/stf/hash.stf (see docs/STF.md). Packets with EtherType 0x88b5
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

    Hash<bit<32>>(HashAlgorithm_t.CRC32) h32;
    Hash<bit<16>>(HashAlgorithm_t.CRC16) h16;

    action hash() {
        hdr.probe.res = h32.get({ hdr.probe.a, hdr.probe.b });
        hdr.probe.res16 = h16.get({ hdr.probe.a, hdr.probe.b });
    }

    table hashing {
        actions = { hash; }
        default_action = hash();
    }

    apply {
        forward.apply();
        if (hdr.probe.isValid()) {
            hashing.apply();
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
