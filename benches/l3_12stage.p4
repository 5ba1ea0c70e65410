// l3_12stage: a twelve-stage L3 router, the workload of the speed benchmarks (docs/PERFORMANCE.md).
//
// Every ingress table reads what the previous one wrote, so the compiler needs all twelve
// stages of a Tofino-like pipe, one table per stage, and every packet crosses every table:
// port -> VRF -> route (LPM) -> ECMP member -> bridge domain -> router interface -> next-hop
// MAC index -> destination MAC -> egress port -> traffic class -> queue -> ACL class -> ACL
// action. The deparser recomputes the IPv4 checksum (routing decrements the TTL). Egress
// parses Ethernet and IPv4 and counts the packet per egress port.

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

struct headers_t {
    ethernet_h ethernet;
    ipv4_h     ipv4;
}

struct metadata_t {
    bit<8>  vrf;
    bit<16> nexthop;
    bit<16> member;
    bit<12> bd;
    bit<10> rif;
    bit<12> dmac_idx;
    bit<8>  smac_idx;
    bit<9>  port;
    bit<3>  tc;
    bit<7>  qid;
    bit<8>  acl_class;
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

    action set_nexthop(bit<16> nexthop) {
        meta.nexthop = nexthop;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
    }
    table ipv4_lpm {
        key = { meta.vrf : exact; hdr.ipv4.dst_addr : lpm; }
        actions = { set_nexthop; drop; }
        default_action = drop();
        size = 1024;
    }

    action set_member(bit<16> member) { meta.member = member; }
    table ecmp_member {
        key = { meta.nexthop : exact; }
        actions = { set_member; drop; }
        default_action = drop();
        size = 1024;
    }

    action set_bd(bit<12> bd) { meta.bd = bd; }
    table member_bd {
        key = { meta.member : exact; }
        actions = { set_bd; drop; }
        default_action = drop();
        size = 1024;
    }

    action set_rif(bit<10> rif) { meta.rif = rif; }
    table bd_rif {
        key = { meta.bd : exact; }
        actions = { set_rif; drop; }
        default_action = drop();
        size = 1024;
    }

    action set_dmac_idx(bit<12> idx) { meta.dmac_idx = idx; }
    table rif_nexthop {
        key = { meta.rif : exact; }
        actions = { set_dmac_idx; drop; }
        default_action = drop();
        size = 1024;
    }

    action set_dmac(mac_addr_t dmac, bit<8> smac_idx) {
        hdr.ethernet.dst_addr = dmac;
        meta.smac_idx = smac_idx;
    }
    table dmac_rewrite {
        key = { meta.dmac_idx : exact; }
        actions = { set_dmac; drop; }
        default_action = drop();
        size = 1024;
    }

    action set_smac(mac_addr_t smac, bit<9> port) {
        hdr.ethernet.src_addr = smac;
        meta.port = port;
    }
    table smac_rewrite {
        key = { meta.smac_idx : exact; }
        actions = { set_smac; drop; }
        default_action = drop();
        size = 256;
    }

    action set_port(bit<9> port, bit<3> tc) {
        ig_tm_md.ucast_egress_port = port;
        meta.tc = tc;
    }
    table egress_port {
        key = { meta.port : exact; }
        actions = { set_port; drop; }
        default_action = drop();
        size = 512;
    }

    action set_qid(bit<7> qid) { meta.qid = qid; ig_tm_md.qid = qid; }
    table tc_queue {
        key = { meta.tc : exact; }
        actions = { set_qid; }
        default_action = set_qid(0);
        size = 8;
    }

    action set_acl_class(bit<8> class) { meta.acl_class = class; }
    table acl_classify {
        key = { meta.qid : exact; hdr.ipv4.protocol : ternary; }
        actions = { set_acl_class; }
        default_action = set_acl_class(0);
        size = 256;
    }

    table acl_action {
        key = { meta.acl_class : exact; }
        actions = { drop; NoAction; }
        default_action = NoAction();
        size = 256;
    }

    apply {
        port_vrf.apply();
        ipv4_lpm.apply();
        ecmp_member.apply();
        member_bd.apply();
        bd_rif.apply();
        rif_nexthop.apply();
        dmac_rewrite.apply();
        smac_rewrite.apply();
        egress_port.apply();
        tc_queue.apply();
        acl_classify.apply();
        acl_action.apply();
    }
}

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
