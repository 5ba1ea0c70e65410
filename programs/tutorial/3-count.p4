// Step 3 of docs/TUTORIAL.md: step 2's router, counting the packets of every flow.
//
// The parser also reads the first four bytes of UDP and TCP (the ports). A hash of the
// 5-tuple picks one of 256 elements of a register array, and the stateful ALU beside the
// array adds one to it: a read-modify-write per packet, at line rate, with no CPU involved.
// Two flows whose hashes are equal share an element. Routing is step 2's.

// 14 bytes.
header ethernet_h {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

// 20 bytes (no options).
header ipv4_h {
    bit<4>  version;
    bit<4>  ihl;
    bit<8>  diffserv;
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

// The first four bytes of UDP and TCP: the ports.
header l4_ports_h {
    bit<16> src_port;
    bit<16> dst_port;
}

struct headers_t {
    ethernet_h ethernet;
    ipv4_h     ipv4;
    l4_ports_h l4;
}

struct metadata_t {}

// ----------------------------------------------------------------------------------------
// Ingress

parser IngressParser(packet_in pkt,
                     out headers_t hdr,
                     out metadata_t meta,
                     out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            0x0800: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition select(hdr.ipv4.protocol) {
            6: parse_l4;     // TCP
            17: parse_l4;    // UDP
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

    // 256 packet counts of 32 bits, all 0 at the start.
    Register<bit<32>, bit<8>>(256, 0) flow_packets;

    // The stateful ALU's program: read the element, add one, write it back.
    RegisterAction<bit<32>, bit<8>, bit<32>>(flow_packets) count_packet = {
        void apply(inout bit<32> value) {
            value = value + 1;
        }
    };

    // The low 8 bits of a CRC16 of the 5-tuple: the flow's element.
    Hash<bit<8>>(HashAlgorithm_t.CRC16) flow_hash;

    action count() {
        count_packet.execute(flow_hash.get({
            hdr.ipv4.src_addr, hdr.ipv4.dst_addr, hdr.ipv4.protocol,
            hdr.l4.src_port, hdr.l4.dst_port
        }));
    }

    // Keyless: every packet that reaches it runs `count`.
    table flow_counter {
        actions = { count; }
        default_action = count();
    }

    action forward(bit<9> port) {
        ig_tm_md.ucast_egress_port = port;
    }

    action drop() {
        ig_dprsr_md.drop_ctl = 1;
    }

    // Route: four writes, one VLIW instruction, all in the same stage.
    action set_nexthop(bit<9> port, bit<48> dmac, bit<48> smac) {
        ig_tm_md.ucast_egress_port = port;
        hdr.ethernet.dst_addr = dmac;
        hdr.ethernet.src_addr = smac;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
    }

    // Longest-prefix match: a TCAM table.
    table ipv4_lpm {
        key = { hdr.ipv4.dst_addr : lpm; }
        actions = { set_nexthop; drop; }
        default_action = drop();
        size = 64;
    }

    // Step 1's table, for frames that are not IPv4.
    table mac_table {
        key = { hdr.ethernet.dst_addr : exact; }
        actions = { forward; drop; }
        default_action = drop();
        size = 256;
    }

    apply {
        if (hdr.ipv4.isValid()) {
            if (hdr.ipv4.ttl <= 1) {
                drop();
            } else {
                ipv4_lpm.apply();
            }
        } else {
            mac_table.apply();
        }
        if (hdr.l4.isValid()) {
            flow_counter.apply();
        }
    }
}

control IngressDeparser(packet_out pkt,
                        inout headers_t hdr,
                        in metadata_t meta,
                        in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    Checksum() ipv4_checksum;
    apply {
        // RFC 791's header checksum over every field but itself.
        hdr.ipv4.hdr_checksum = ipv4_checksum.update({
            hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.total_len,
            hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.frag_offset,
            hdr.ipv4.ttl, hdr.ipv4.protocol, hdr.ipv4.src_addr, hdr.ipv4.dst_addr
        });
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.l4);
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
