// host_routes: 200,000 IPv4 host routes, a table larger than a stage.
//
// Ingress looks the destination up among the host routes (exact, one entry per address),
// then, for an address no host route covers, among the prefixes (LPM); either gives a next
// hop, which picks the port and the next hop's MAC. Non-IPv4 packets are dropped.
//
// The host table needs 196 SRAM blocks and hash bits for 196 ways, more than one stage has:
// the compiler splits it across consecutive stages, each part holding a share of the entries
// (`asic compile programs/examples/host_routes.p4` shows the parts). The prefix table writes
// the same field and the next-hop table matches on it, so both go after the host table's last
// part.
//
// Shows: a table split across stages, `#include` of the system files, `.miss`.

#include <tna.p4>
#include <common/headers.p4>

struct headers_t {
    ethernet_h ethernet;
    ipv4_h     ipv4;
}

struct metadata_t {
    bit<16> nexthop;
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

    action drop() {
        ig_dprsr_md.drop_ctl = 1;
    }

    action set_nexthop(bit<16> nexthop) {
        meta.nexthop = nexthop;
    }

    // One entry per destination address: split across stages.
    table ipv4_host {
        key = { hdr.ipv4.dst_addr : exact; }
        actions = { set_nexthop; }
        size = 200000;
    }

    // Prefixes, for the addresses no host route covers.
    table ipv4_lpm {
        key = { hdr.ipv4.dst_addr : lpm; }
        actions = { set_nexthop; drop; }
        default_action = drop();
        size = 1024;
    }

    action forward(PortId_t port, mac_addr_t dmac) {
        ig_tm_md.ucast_egress_port = port;
        hdr.ethernet.dst_addr = dmac;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
    }

    table nexthop {
        key = { meta.nexthop : exact; }
        actions = { forward; drop; }
        default_action = drop();
        size = 4096;
    }

    apply {
        if (hdr.ipv4.isValid()) {
            if (ipv4_host.apply().miss) {
                ipv4_lpm.apply();
            }
            nexthop.apply();
        } else {
            drop();
        }
    }
}

// The TTL changed: the header checksum is recomputed.
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
