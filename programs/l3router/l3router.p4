// l3router: a minimal L2/L3 router for the TNA-like chip.
//
// Ingress: IPv4 packets are routed by longest-prefix match on the destination address
// (rewriting the MACs and decrementing the TTL); packets whose TTL would expire are dropped
// first. Non-IPv4 packets are bridged by an exact match on the destination MAC. The ingress
// deparser recomputes the IPv4 header checksum because routing changed the TTL.
// Egress does nothing: packets leave as ingress built them.

// The intrinsic metadata (tna.p4), and Ethernet and IPv4 with their EtherTypes
// (common/headers.p4): files shipped with the compiler.
#include <tna.p4>
#include <common/headers.p4>

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

    // Mark the packet to be dropped at the end of ingress.
    action drop() {
        ig_dprsr_md.drop_ctl = 1;
    }

    // Route: choose the port, rewrite the MACs for the next hop and age the packet.
    // Each statement is one VLIW operation; they all happen at once in one stage.
    action set_nexthop(bit<9> port, mac_addr_t dmac, mac_addr_t smac) {
        ig_tm_md.ucast_egress_port = port;
        hdr.ethernet.dst_addr = dmac;
        hdr.ethernet.src_addr = smac;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
    }

    // Bridge: send the frame out of the port that learned its destination MAC.
    action l2_forward(bit<9> port) {
        ig_tm_md.ucast_egress_port = port;
    }

    // Longest-prefix match on the destination address (a TCAM table). 128 routes fill the
    // `teaching` chip's two 64-entry TCAM blocks; the router fits every built-in chip.
    table ipv4_lpm {
        key = { hdr.ipv4.dst_addr : lpm; }
        actions = { set_nexthop; drop; }
        default_action = drop();
        size = 128;
    }

    // Exact match on the destination MAC (a hash table in SRAM).
    table l2_fwd {
        key = { hdr.ethernet.dst_addr : exact; }
        actions = { l2_forward; drop; }
        default_action = drop();
        size = 512;
    }

    apply {
        if (hdr.ipv4.isValid()) {
            // A packet arriving with TTL 0 or 1 must not be forwarded.
            if (hdr.ipv4.ttl <= 1) {
                drop();
            } else {
                ipv4_lpm.apply();
            }
        } else {
            l2_fwd.apply();
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
