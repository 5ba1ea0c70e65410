// Step 4 of docs/TUTORIAL.md: step 2's router with a policer on every ingress port.
//
// A two-rate three-colour meter (RFC 2698) per ingress port colours each IPv4 packet by the
// bytes its port has sent lately: green within the committed rate, yellow above it but
// within the peak rate, red above the peak rate. A counter array counts packets and bytes
// per colour; yellow packets leave marked with DSCP AF12 (a higher drop precedence, RFC
// 2597), red ones are dropped. The rates are the control plane's (4-entries.ron).

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

struct headers_t {
    ethernet_h ethernet;
    ipv4_h     ipv4;
}

struct metadata_t {
    bit<2> colour;    // the meter's verdict: 0 green, 1 yellow, 3 red (TNA's encoding)
}

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
        transition accept;
    }
}

control Ingress(inout headers_t hdr,
                inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {

    // One byte meter per port; the control plane sets each one's rates and bursts.
    Meter<bit<9>>(512, MeterType_t.BYTES) port_meter;

    // Packets and bytes per colour (indices 0, 1 and 3).
    Counter<bit<64>, bit<2>>(4, CounterType_t.PACKETS_AND_BYTES) colour_stats;

    action police() {
        meta.colour = port_meter.execute(ig_intr_md.ingress_port);
    }

    table policer {
        actions = { police; }
        default_action = police();
    }

    action count_colour() {
        colour_stats.count(meta.colour);
    }

    table colour_counter {
        actions = { count_colour; }
        default_action = count_colour();
    }

    // DSCP is the top six bits of the old TOS byte; AF12 is 12.
    action mark_af12() {
        hdr.ipv4.diffserv[7:2] = 12;
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

    // What each colour does: green passes as it is.
    table on_colour {
        key = { meta.colour : exact; }
        actions = { mark_af12; drop; NoAction; }
        default_action = NoAction();
        size = 4;
        const entries = {
            1 : mark_af12();
            3 : drop();
        }
    }

    apply {
        if (hdr.ipv4.isValid()) {
            if (hdr.ipv4.ttl <= 1) {
                drop();
            } else {
                ipv4_lpm.apply();
            }
            policer.apply();
            colour_counter.apply();
            on_colour.apply();
        } else {
            mac_table.apply();
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
