// flow_counter: count packets per flow in a register array and mark the heavy flows.
//
// Ingress forwards by ingress port (a port-to-port patch panel) and adds the packet's length
// to its port's byte count (a second register array), then, for TCP and UDP over
// IPv4, hashes the 5-tuple with CRC16 into a 1024-entry register array whose stateful ALU
// increments the flow's count (saturating) and returns it. A range table on the count marks
// flows above a threshold with DSCP AF11. Packets the parser fails on are dropped by the
// program itself: it reads `parser_err`, so the parser lets them through (bf-p4c's rule).
//
// Shows: Register + RegisterAction with a condition, Hash as a register index, an enum with
// values, a lookahead select, slices, a keyless table, and the parser-error policy.

const bit<16> ETHERTYPE_IPV4 = 0x0800;
const bit<32> FLOW_LIMIT = 1000000;

enum bit<8> ip_proto_t {
    TCP = 6,
    UDP = 17
}

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
    ip_proto_t  protocol;
    bit<16>     hdr_checksum;
    ipv4_addr_t src_addr;
    ipv4_addr_t dst_addr;
}

// The first four bytes of TCP and UDP: the ports.
header l4_ports_h {
    bit<16> src_port;
    bit<16> dst_port;
}

struct headers_t {
    ethernet_h ethernet;
    ipv4_h     ipv4;
    l4_ports_h l4;
}

struct metadata_t {
    bit<32> count;
}

parser IngressParser(packet_in pkt,
                     out headers_t hdr,
                     out metadata_t meta,
                     out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_IPV4: check_ipv4;
            default: accept;
        }
    }
    // Peek at version and IHL: only option-less IPv4 (0x45) is parsed further.
    state check_ipv4 {
        transition select(pkt.lookahead<bit<8>>()) {
            0x45: parse_ipv4;
            default: reject;
        }
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition select(hdr.ipv4.frag_offset, hdr.ipv4.protocol) {
            (0, ip_proto_t.TCP): parse_l4;
            (0, ip_proto_t.UDP): parse_l4;
            default: accept;
        }
    }
    state parse_l4 {
        pkt.extract(hdr.l4);
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
    Register<bit<32>, bit<16>>(1024, 0) flow_count;

    // One read-modify-write per packet: add one unless the count is saturated, and return
    // the count as written.
    RegisterAction<bit<32>, bit<16>, bit<32>>(flow_count) count_packet = {
        void apply(inout bit<32> value, out bit<32> rv) {
            if (value != 0xffffffff) {
                value = value + 1;
            }
            rv = value;
        }
    };

    // Bytes received per port, saturating.
    Register<bit<32>, bit<9>>(512, 0) port_bytes;
    RegisterAction<bit<32>, bit<9>, bit<32>>(port_bytes) add_bytes = {
        void apply(inout bit<32> value) {
            value = value |+| (bit<32>) ig_intr_md.pkt_length;
        }
    };

    action count_bytes() {
        add_bytes.execute(ig_intr_md.ingress_port);
    }

    table port_stats {
        actions = { count_bytes; }
        default_action = count_bytes();
    }

    action drop() {
        ig_dprsr_md.drop_ctl = 1;
    }

    action forward(bit<9> port) {
        ig_tm_md.ucast_egress_port = port;
    }

    table port_fwd {
        key = { ig_intr_md.ingress_port : exact; }
        actions = { forward; drop; }
        default_action = drop();
        size = 64;
    }

    action count_flow() {
        meta.count = count_packet.execute(flow_hash.get({
            hdr.ipv4.src_addr, hdr.ipv4.dst_addr, hdr.ipv4.protocol,
            hdr.l4.src_port, hdr.l4.dst_port
        }));
    }

    // Keyless: always runs `count_flow`.
    table flow {
        actions = { count_flow; }
        default_action = count_flow();
    }

    // DSCP is the top six bits of the old TOS byte.
    action mark(bit<6> dscp) {
        hdr.ipv4.diffserv[7:2] = dscp;
    }

    table heavy_hitter {
        key = { meta.count : range; }
        actions = { mark; NoAction; }
        default_action = NoAction();
        size = 16;
        const entries = {
            FLOW_LIMIT .. 0xffffffff : mark(10);
        }
    }

    apply {
        if (ig_prsr_md.parser_err != 0) {
            drop();
        } else {
            port_fwd.apply();
            port_stats.apply();
            if (hdr.l4.isValid()) {
                flow.apply();
                heavy_hitter.apply();
            }
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
