// Step 1 of docs/TUTORIAL.md: a switch with one table.
//
// The parser takes the Ethernet header off the front of the packet; one exact-match table
// looks up the destination MAC address and says which port the packet leaves by; the
// deparser puts the header back. A MAC the table does not know is dropped. Egress does
// nothing.

// 14 bytes: the first thing on the wire after the preamble.
header ethernet_h {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

// Every header the program knows, in the order they sit in the packet.
struct headers_t {
    ethernet_h ethernet;
}

// No metadata of our own yet.
struct metadata_t {}

// ----------------------------------------------------------------------------------------
// Ingress

parser IngressParser(packet_in pkt,
                     out headers_t hdr,
                     out metadata_t meta,
                     out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}

control Ingress(inout headers_t hdr,
                inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {

    // Tell the traffic manager which port the packet leaves by.
    action forward(bit<9> port) {
        ig_tm_md.ucast_egress_port = port;
    }

    // Drop the packet at the end of ingress.
    action drop() {
        ig_dprsr_md.drop_ctl = 1;
    }

    // The MAC table: destination MAC -> port. An unknown MAC runs the default action.
    table mac_table {
        key = { hdr.ethernet.dst_addr : exact; }
        actions = { forward; drop; }
        default_action = drop();
        size = 256;
    }

    apply {
        mac_table.apply();
    }
}

control IngressDeparser(packet_out pkt,
                        inout headers_t hdr,
                        in metadata_t meta,
                        in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply {
        pkt.emit(hdr.ethernet);
    }
}

// ----------------------------------------------------------------------------------------
// Egress: nothing to do, so the chip does not run it.

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
