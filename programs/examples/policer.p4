// policer: per-port two-rate three-colour metering with per-colour statistics, and random
// early ECN marking at egress.
//
// Ingress bridges on the destination MAC (a direct counter counts the hits and misses of
// the table). Only bridged packets are policed: a byte meter per ingress port colours them
// (0 green, 1 yellow, 3 red), a counter array counts packets and bytes per colour, and red
// packets are dropped. Egress draws a random byte and marks ECN CE on IPv4 packets that
// leave a queue deeper than 1000 cells, with probability 64/256.
//
// Shows: Meter, Counter indexed by a slice, DirectCounter, switch on action_run, Random,
// a control-level local variable, concatenation and min().

const bit<16> ETHERTYPE_IPV4 = 0x0800;

enum bit<8> color_t {
    GREEN = 0,
    YELLOW = 1,
    RED = 3
}

header ethernet_h {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

header ipv4_h {
    bit<4>  version;
    bit<4>  ihl;
    bit<6>  dscp;
    bit<2>  ecn;
    bit<16> total_len;
    bit<16> identification;
    bit<3>  flags;
    bit<13> frag_offset;
    bit<8>  ttl;
    bit<8>  protocol;
    bit<16> hdr_checksum;
    bit<32> src_addr;
    bit<32> dst_addr;
}

struct headers_t {
    ethernet_h ethernet;
    ipv4_h     ipv4;
}

struct metadata_t {
    color_t color;
    bit<16> tag;
}

parser IngressParser(packet_in pkt,
                     out headers_t hdr,
                     out metadata_t meta,
                     out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_IPV4: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition accept;
    }
}

control Ingress(inout headers_t hdr,
                inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {

    Meter<bit<9>>(512, MeterType_t.BYTES) port_meter;
    Counter<bit<64>, bit<2>>(4, CounterType_t.PACKETS_AND_BYTES) color_stats;
    DirectCounter<bit<32>>(CounterType_t.PACKETS) l2_hits;

    action drop() {
        ig_dprsr_md.drop_ctl = 1;
    }

    action bridge(bit<9> port, bit<3> cos) {
        ig_tm_md.ucast_egress_port = port;
        ig_tm_md.ingress_cos = cos;
        // A tag of the ingress port and class, for debugging: 4 + 9 + 3 bits.
        meta.tag = 4w0 ++ ig_intr_md.ingress_port ++ cos;
        l2_hits.count();
    }

    table l2_fwd {
        key = { hdr.ethernet.dst_addr : exact; }
        actions = { bridge; drop; }
        default_action = drop();
        size = 256;
        counters = l2_hits;
    }

    action police() {
        meta.color = port_meter.execute(ig_intr_md.ingress_port);
    }

    table policer {
        actions = { police; }
        default_action = police();
    }

    action count_color() {
        color_stats.count(meta.color[1:0]);
    }

    table color_count {
        actions = { count_color; }
        default_action = count_color();
    }

    table on_color {
        key = { meta.color : exact; }
        actions = { drop; NoAction; }
        default_action = NoAction();
        size = 4;
        const entries = {
            color_t.RED : drop();
        }
    }

    apply {
        switch (l2_fwd.apply().action_run) {
            bridge: {
                policer.apply();
                color_count.apply();
                on_color.apply();
            }
            default: { }
        }
    }
}

control IngressDeparser(packet_out pkt,
                        inout headers_t hdr,
                        in metadata_t meta,
                        in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.ipv4);
    }
}

parser EgressParser(packet_in pkt,
                    out headers_t hdr,
                    out metadata_t meta,
                    out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_IPV4: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition accept;
    }
}

control Egress(inout headers_t hdr,
               inout metadata_t meta,
               in egress_intrinsic_metadata_t eg_intr_md,
               in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
               inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    Random<bit<8>>() coin_flip;
    bit<8> coin;

    action flip() {
        coin = coin_flip.get();
    }

    action mark_ce() {
        hdr.ipv4.ecn = 3;
        // Never let the TTL of a marked packet exceed 64.
        hdr.ipv4.ttl = min(hdr.ipv4.ttl, 64);
    }

    apply {
        flip();
        if (hdr.ipv4.isValid() && hdr.ipv4.ecn != 0 && eg_intr_md.enq_qdepth > 1000 && coin < 64) {
            mark_ce();
        }
    }
}

control EgressDeparser(packet_out pkt,
                       inout headers_t hdr,
                       in metadata_t meta,
                       in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    Checksum() ipv4_checksum;
    apply {
        hdr.ipv4.hdr_checksum = ipv4_checksum.update({
            hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.dscp, hdr.ipv4.ecn, hdr.ipv4.total_len,
            hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.frag_offset,
            hdr.ipv4.ttl, hdr.ipv4.protocol, hdr.ipv4.src_addr, hdr.ipv4.dst_addr
        });
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.ipv4);
    }
}

Pipeline(IngressParser(), Ingress(), IngressDeparser(),
         EgressParser(), Egress(), EgressDeparser()) pipe;
Switch(pipe) main;
