// net_plumbing: the L3 router of programs/l3router with the chip's plumbing switched on, for
// the network tests of per-chip configuration (tests/asic/net_config.rs). Its routes are the
// stock router's (`set_nexthop`); besides, a route may replicate to a multicast group
// (`set_mcast`), `port_tap` mirrors what enters a port to a session, and every packet asks
// for deflect-on-drop. A packet with TTL 1 is dropped (mirrored if tapped), with TTL 0
// dropped without a mirror copy. Test program.

const bit<16> ETHERTYPE_IPV4 = 0x0800;

typedef bit<48> mac_addr_t;
typedef bit<32> ipv4_addr_t;

// 14 bytes on the wire.
header ethernet_h {
    mac_addr_t dst_addr;
    mac_addr_t src_addr;
    bit<16>    ether_type;
}

// 20 bytes on the wire (no options).
header ipv4_h {
    bit<4>      version;
    bit<4>      ihl;
    bit<8>      diffserv;
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

// All headers the program knows, in the order they sit in the packet.
struct headers_t {
    ethernet_h ethernet;
    ipv4_h     ipv4;
}

// The router keeps no per-packet state of its own.
struct metadata_t {}

// ----------------------------------------------------------------------------------------
// Ingress

// Ethernet, then IPv4 if the EtherType says so; anything else is payload.
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

    action drop() {
        ig_dprsr_md.drop_ctl = 1;
    }

    action set_nexthop(bit<9> port, mac_addr_t dmac, mac_addr_t smac) {
        ig_tm_md.ucast_egress_port = port;
        hdr.ethernet.dst_addr = dmac;
        hdr.ethernet.src_addr = smac;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
    }

    action set_mcast(bit<16> group) {
        ig_tm_md.mcast_grp_a = group;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
    }

    action tap(bit<10> session) {
        ig_dprsr_md.mirror_session = session;
    }

    action no_tap() { }

    table ipv4_lpm {
        key = { hdr.ipv4.dst_addr : lpm; }
        actions = { set_nexthop; set_mcast; drop; }
        default_action = drop();
        size = 128;
    }

    table port_tap {
        key = { ig_intr_md.ingress_port : exact; }
        actions = { tap; no_tap; }
        default_action = no_tap();
        size = 64;
    }

    apply {
        ig_tm_md.deflect_on_drop = 1;
        port_tap.apply();
        if (hdr.ipv4.isValid()) {
            if (hdr.ipv4.ttl == 0) {
                // Dropped with its mirror copy disabled (drop_ctl bit 2).
                ig_dprsr_md.drop_ctl = 5;
            } else if (hdr.ipv4.ttl == 1) {
                drop();
            } else {
                ipv4_lpm.apply();
            }
        } else {
            drop();
        }
    }
}

// The TTL changed, so the header checksum must be recomputed before the packet leaves.
control IngressDeparser(packet_out pkt,
                        inout headers_t hdr,
                        in metadata_t meta,
                        in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    Checksum() ipv4_checksum;
    apply {
        hdr.ipv4.hdr_checksum = ipv4_checksum.update({
            hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.total_len,
            hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.frag_offset,
            hdr.ipv4.ttl, hdr.ipv4.protocol, hdr.ipv4.src_addr, hdr.ipv4.dst_addr
        });
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.ipv4);
    }
}

// ----------------------------------------------------------------------------------------
// Egress: nothing to do.

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
