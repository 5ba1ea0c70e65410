// qpause: a chip that obeys the model's per-queue pause frame (net/src/ctrl.rs) in its
// PROGRAM, by turning it into an advanced-flow-control request (tests/asic/plumbing_more.rs).
// Test program.
//
// Ingress:
// - EtherType 0x88B5 (per-queue pause, IEEE 802 local experimental 1): opcode 1 (pause) or 2
//   (resume) for `queue_id`. The frame came from the link partner on `ingress_port`, so it
//   asks this chip to stop (or restart) queue `queue_id` of that same port: the program sets
//   `adv_flow_ctl` = qfc(1) | pipe(2) | mac(4) | pad(3) | qid(7) | credit(15) with credit 0
//   to pause and 1 to resume, and drops the frame (`drop_ctl`). (pipe, mac) is taken as the
//   six low bits of `ingress_port`, which is right when the chip has one pipe of at most 16
//   ports or 16 ports per pipe. Other opcodes (the bitmap refresh) are dropped unobeyed.
// - EtherType 0x88B6 (local experimental 2): a data frame with a forwarding header that
//   names the egress port and queue.
// - Anything else: dropped (no egress port).
// Egress does nothing.

const bit<16> ETHERTYPE_QPAUSE = 0x88B5;
const bit<16> ETHERTYPE_FWD = 0x88B6;
const bit<8> OP_PAUSE = 1;
const bit<8> OP_RESUME = 2;

header ethernet_h {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

// The per-queue pause frame after the Ethernet header (net/src/ctrl.rs).
header qpause_h {
    bit<8>  opcode;
    bit<8>  reserved;
    bit<16> queue_id;
    bit<16> bitmap_len;
}

// Data frames: where to send them.
header fwd_h {
    bit<16> port;
    bit<8>  qid;
}

struct headers_t {
    ethernet_h ethernet;
    qpause_h   qpause;
    fwd_h      fwd;
}

struct metadata_t {}

parser IngressParser(packet_in pkt,
                     out headers_t hdr,
                     out metadata_t meta,
                     out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_QPAUSE: parse_qpause;
            ETHERTYPE_FWD: parse_fwd;
            default: accept;
        }
    }
    state parse_qpause {
        pkt.extract(hdr.qpause);
        transition accept;
    }
    state parse_fwd {
        pkt.extract(hdr.fwd);
        transition accept;
    }
}

control Ingress(inout headers_t hdr,
                inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply {
        if (hdr.qpause.isValid()) {
            // The frame is the MAC's business, not data: it never leaves the chip.
            ig_dprsr_md.drop_ctl = 1;
            // qfc 1, (pipe, mac) from the port, pad, queue, credit: one concatenation.
            if (hdr.qpause.opcode == OP_PAUSE) {
                ig_dprsr_md.adv_flow_ctl = 1w1 ++ ig_intr_md.ingress_port[5:0] ++ 3w0
                    ++ hdr.qpause.queue_id[6:0] ++ 15w0;
            } else {
                if (hdr.qpause.opcode == OP_RESUME) {
                    ig_dprsr_md.adv_flow_ctl = 1w1 ++ ig_intr_md.ingress_port[5:0] ++ 3w0
                        ++ hdr.qpause.queue_id[6:0] ++ 15w1;
                }
            }
        } else {
            if (hdr.fwd.isValid()) {
                ig_tm_md.ucast_egress_port = (bit<9>)hdr.fwd.port;
                ig_tm_md.qid = (bit<7>)hdr.fwd.qid;
            }
        }
    }
}

control IngressDeparser(packet_out pkt,
                        inout headers_t hdr,
                        in metadata_t meta,
                        in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.qpause);
        pkt.emit(hdr.fwd);
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
