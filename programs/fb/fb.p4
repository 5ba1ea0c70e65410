// fb: the Flexible Buffer deployment's program (Apostolaki et al., "FB: A Flexible Buffer
// Management Scheme for Data Center Switches", 2021, §6): the stock ECMP router
// (programs/ecmp_router) and a classifier that puts each packet in its buffer class by the
// tag its host set (the IPv4 DSCP, `class << 3` in the host frames):
// - multi-queue: the query (high-priority) tag goes to the high queue, each of the four
//   low (web-search) tags to its low queue; the TM's per-queue α does the rest (DT, FB or
//   FBA by the chip's TM configuration);
// - single-queue: every packet to queue 0, its class as its colour (`packet_color`), which
//   the what-if single-queue Flexible Buffer turns into its α and priority
//   (`tm.color.classes`).
// The classifier's entries come from deploy/src/fb.rs; a packet whose tag has no entry takes
// the default action's queue and colour (the low class's first queue, yellow).
//
// Routing (ipv4_lpm / ecmp_select) is programs/ecmp_router's, entries from
// deploy/src/routers.rs.

const bit<16> ETHERTYPE_IPV4 = 0x0800;
const bit<8>  IP_PROTO_UDP   = 17;

typedef bit<48> mac_addr_t;
typedef bit<32> ipv4_addr_t;

header ethernet_h {
    mac_addr_t dst_addr;
    mac_addr_t src_addr;
    bit<16>    ether_type;
}

header ipv4_h {
    bit<4>      version;
    bit<4>      ihl;
    bit<6>      dscp;
    bit<2>      ecn;
    bit<16>     total_len;
    bit<16>     identification;
    bit<3>      flags;
    bit<13>     frag_offset;
    bit<8>      ttl;
    bit<8>      protocol;
    bit<16>     hdr_checksum;
    ipv4_addr_t src_addr;
    ipv4_addr_t dst_addr;
}

header udp_h {
    bit<16> src_port;
    bit<16> dst_port;
    bit<16> length;
    bit<16> checksum;
}

struct headers_t {
    ethernet_h ethernet;
    ipv4_h     ipv4;
    udp_h      udp;
}

struct metadata_t {
    bit<16> ecmp_group;
    bit<16> ecmp_hash;
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
        transition select(hdr.ipv4.protocol) {
            IP_PROTO_UDP: parse_udp;
            default: accept;
        }
    }
    state parse_udp {
        pkt.extract(hdr.udp);
        transition accept;
    }
}

control Ingress(inout headers_t hdr,
                inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {

    Hash<bit<16>>(HashAlgorithm_t.CRC16) flow_hash;

    action drop() {
        ig_dprsr_md.drop_ctl = 1;
    }

    action set_nexthop(bit<9> port, mac_addr_t dmac, mac_addr_t smac) {
        ig_tm_md.ucast_egress_port = port;
        hdr.ethernet.dst_addr = dmac;
        hdr.ethernet.src_addr = smac;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
    }

    action set_ecmp(bit<16> group) {
        meta.ecmp_group = group;
    }

    table ipv4_lpm {
        key = { hdr.ipv4.dst_addr : lpm; }
        actions = { set_nexthop; set_ecmp; drop; }
        default_action = drop();
        size = 128;
    }

    // The buffer class of the packet's tag: its queue and colour.
    action set_class(bit<7> qid, bit<2> color) {
        ig_tm_md.qid = qid;
        ig_tm_md.packet_color = color;
    }

    table classify {
        key = { hdr.ipv4.dscp : exact; }
        actions = { set_class; }
        default_action = set_class(1, 1);
        size = 64;
    }

    table ecmp_select {
        key = {
            meta.ecmp_group : exact;
            meta.ecmp_hash  : ternary;
        }
        actions = { set_nexthop; drop; }
        default_action = drop();
        size = 256;
    }

    apply {
        if (hdr.ipv4.isValid()) {
            if (hdr.ipv4.ttl <= 1) {
                drop();
            } else {
                meta.ecmp_group = 0;
                meta.ecmp_hash = flow_hash.get({ hdr.ipv4.src_addr, hdr.ipv4.dst_addr,
                                                 hdr.ipv4.protocol, hdr.udp.src_port,
                                                 hdr.udp.dst_port });
                ipv4_lpm.apply();
                if (meta.ecmp_group != 0) {
                    ecmp_select.apply();
                }
                classify.apply();
            }
        } else {
            drop();
        }
    }
}

control IngressDeparser(packet_out pkt,
                        inout headers_t hdr,
                        in metadata_t meta,
                        in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    Checksum() ipv4_checksum;
    apply {
        hdr.ipv4.hdr_checksum = ipv4_checksum.update({
            hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.dscp, hdr.ipv4.ecn, hdr.ipv4.total_len,
            hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.frag_offset,
            hdr.ipv4.ttl, hdr.ipv4.protocol, hdr.ipv4.src_addr, hdr.ipv4.dst_addr
        });
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.udp);
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

// ECN as on Tofino: the traffic manager flags a packet whose queue's ECN configuration
// marks it (enq_congest_stat); the egress program sets CE if the sender is ECN-capable.
control Egress(inout headers_t hdr,
               inout metadata_t meta,
               in egress_intrinsic_metadata_t eg_intr_md,
               in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
               inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply {
        if (hdr.ipv4.isValid() && eg_intr_md.enq_congest_stat != 0 && hdr.ipv4.ecn != 0) {
            hdr.ipv4.ecn = 3;
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
