// ecmp_router: the stock router of network experiments: IPv4 longest-prefix routing to a next
// hop or to an ECMP group, the group member chosen by a hash of the 5-tuple computed in the
// program (so one flow keeps one path, and flows spread over the members).
//
// Ingress: a packet with TTL <= 1 is dropped; else `ipv4_lpm` either routes it
// (`set_nexthop`) or names an ECMP group (`set_ecmp`); for a group, `ecmp_select` matches the
// group id exactly and bits of the CRC16 hash of (src, dst, protocol, UDP ports)
// ternary-wise (a ToR's from bit 4, the next tier's from bit 8: deploy/src/routers.rs): 16
// buckets (4 bits) for a group whose size divides 16, else 256 (8 bits), each holding one
// member's next hop (a group of n members fills the buckets round-robin, so members get
// buckets/n each, within one; 256 entries hold one group of 3). Non-IPv4 frames are dropped.
// The ingress deparser recomputes the IPv4 checksum (the TTL changed).
//
// Entries are generated from the topology by its deployment (`deploy: Routers(Ecmp)`;
// see deploy/src/routers.rs); a hand-written entries file uses the same tables:
//   (table: "ipv4_lpm", key: [Lpm("10.1.0.0", 16)], action: "set_ecmp", args: [1]),
//   (table: "ecmp_select", key: [Exact(1), Ternary(48, 240)], action: "set_nexthop",
//    args: [4, "02:fe:00:04:00:00", "02:fe:00:00:00:04"]),

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
