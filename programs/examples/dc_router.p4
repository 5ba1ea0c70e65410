// dc_router: a data-centre style L3 pipeline of fourteen tables.
//
// Ingress: the port picks a VRF and a traffic class; the destination MAC says whether to
// route. Routing looks up the host table first and falls back to longest-prefix match, both
// per VRF; the next hop gives the port and an index into the MAC rewrite tables. A ternary
// ACL may deny; the class maps to a DSCP; some ports are mirrored. Bridged packets use an
// exact MAC table.
//
// The chain port_vrf -> ipv4_host -> ipv4_lpm -> nexthop -> dmac_rewrite needs five stages
// one after the other (each reads what the previous one wrote), so the program fits a
// Tofino-like pipe but not the four-stage `teaching` chip.

const bit<16> ETHERTYPE_IPV4 = 0x0800;

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

struct headers_t {
    ethernet_h ethernet;
    ipv4_h     ipv4;
}

struct metadata_t {
    bit<8>  vrf;
    bit<3>  tc;
    bit<1>  routed;
    bit<16> nexthop;
    bit<12> dmac_idx;
    bit<1>  deny;
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

    action drop() { ig_dprsr_md.drop_ctl = 1; }

    action set_vrf(bit<8> vrf) { meta.vrf = vrf; }
    table port_vrf {
        key = { ig_intr_md.ingress_port : exact; }
        actions = { set_vrf; }
        default_action = set_vrf(0);
        size = 512;
    }

    action set_tc(bit<3> tc) { meta.tc = tc; ig_tm_md.ingress_cos = tc; }
    table port_qos {
        key = { ig_intr_md.ingress_port : exact; }
        actions = { set_tc; }
        default_action = set_tc(0);
        size = 512;
    }

    action set_routed() { meta.routed = 1; }
    table my_mac {
        key = { hdr.ethernet.dst_addr : exact; }
        actions = { set_routed; NoAction; }
        default_action = NoAction();
        size = 64;
    }

    action set_nexthop(bit<16> nexthop) { meta.nexthop = nexthop; }
    table ipv4_host {
        key = { meta.vrf : exact; hdr.ipv4.dst_addr : exact; }
        actions = { set_nexthop; NoAction; }
        default_action = NoAction();
        size = 16384;
    }
    table ipv4_lpm {
        key = { meta.vrf : exact; hdr.ipv4.dst_addr : lpm; }
        actions = { set_nexthop; drop; }
        default_action = drop();
        size = 2048;
    }

    action set_port(bit<9> port, bit<12> dmac_idx) {
        ig_tm_md.ucast_egress_port = port;
        meta.dmac_idx = dmac_idx;
    }
    table nexthop {
        key = { meta.nexthop : exact; }
        actions = { set_port; drop; }
        default_action = drop();
        size = 4096;
    }

    action set_dmac(mac_addr_t dmac) { hdr.ethernet.dst_addr = dmac; }
    table dmac_rewrite {
        key = { meta.dmac_idx : exact; }
        actions = { set_dmac; }
        default_action = set_dmac(0);
        size = 4096;
    }

    action set_smac(mac_addr_t smac) { hdr.ethernet.src_addr = smac; }
    table smac_rewrite {
        key = { ig_tm_md.ucast_egress_port : exact; }
        actions = { set_smac; }
        default_action = set_smac(0);
        size = 512;
    }

    action deny() { meta.deny = 1; }
    action permit() { meta.deny = 0; }
    table acl {
        key = {
            hdr.ipv4.src_addr : ternary;
            hdr.ipv4.dst_addr : ternary;
            hdr.ipv4.protocol : ternary;
        }
        actions = { deny; permit; }
        default_action = permit();
        size = 512;
    }

    action set_dscp(bit<6> dscp) { hdr.ipv4.dscp = dscp; }
    table dscp_map {
        key = { meta.tc : exact; }
        actions = { set_dscp; NoAction; }
        default_action = NoAction();
        size = 8;
    }

    action mirror(bit<10> session) { ig_dprsr_md.mirror_session = session; }
    table port_mirror {
        key = { ig_intr_md.ingress_port : exact; }
        actions = { mirror; NoAction; }
        default_action = NoAction();
        size = 512;
    }

    action bridge(bit<9> port) { ig_tm_md.ucast_egress_port = port; }
    table l2_fwd {
        key = { hdr.ethernet.dst_addr : exact; }
        actions = { bridge; drop; }
        default_action = drop();
        size = 8192;
    }

    apply {
        port_vrf.apply();
        port_qos.apply();
        port_mirror.apply();
        my_mac.apply();
        if (meta.routed == 1 && hdr.ipv4.isValid()) {
            if (!ipv4_host.apply().hit) {
                ipv4_lpm.apply();
            }
            nexthop.apply();
            dmac_rewrite.apply();
            smac_rewrite.apply();
            acl.apply();
            if (meta.deny == 1) {
                drop();
            }
            dscp_map.apply();
            hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
        } else {
            l2_fwd.apply();
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
        pkt.emit(hdr);
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
