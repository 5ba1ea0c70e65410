// fb_pisa: PISA FB (Apostolaki et al., "FB: A Flexible Buffer Management Scheme for Data
// Center Switches", 2021, §5.1): Flexible Buffer approximated in the match-action pipeline of
// a chip whose TM runs Dynamic Threshold, deployed by `deploy: Fb((buffer: Pisa(...)))`
// (deploy/src/fb/pisa.rs makes the entries). Routing and the classifier are programs/fb/fb.p4's
// (multi-queue: the query tag to the high queue, each low tag to a queue of its own); then:
// - a data packet's queue (`fb_queue`, by egress port and queue) names its elements of the
//   ingress registers: its queue's length (`qlen_in`), its port's count of non-empty queues
//   (`n_port`, FB's γ = 1/N_Port under round robin) and its priority's (`n_prio`, N_p); with
//   `remaining` (B − Q) the `shift` table turns (α class, N_Port, N_Priority) into n, and
//   the packet is dropped in ingress unless its queue is below `threshold = Remaining >> n`
//   (a left shift where α·γ/N_p > 1);
// - the registers are copies, refreshed by SYNC packets: the packet generator starts a walk
//   every period, which visits one queue per pass (a stateful ALU does one access per
//   packet). On Tofino 1 (`depths: Egress`) a pass reads the queue's length from the egress
//   register `qlen_eg` (written by every packet leaving that queue with its `deq_qdepth`),
//   recirculates and writes the copy; on Tofino 2 (`depths: Ingress`) it reads the depth the
//   TM publishes to ingress (`QueueDepth`) and the data packets read their own queue's depth
//   there too. A pass updates `remaining`, `n_port` and `n_prio` by the difference between
//   the new and the old copy, so every register always agrees with the copies, whichever
//   queue was refreshed last.
//
// Routing (ipv4_lpm / ecmp_select) is programs/ecmp_router's, entries from
// deploy/src/routers.rs.

const bit<16> ETHERTYPE_IPV4 = 0x0800;
const bit<16> ETHERTYPE_SYNC = 0x88B6;   // IEEE local experimental ethertype 2
const bit<8>  IP_PROTO_UDP   = 17;

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

header udp_h {
    bit<16> src_port;
    bit<16> dst_port;
    bit<16> length;
    bit<16> checksum;
}

// A SYNC packet of PISA FB, made by the packet generator (template: deploy/src/fb.rs).
header sync_h {
    bit<7>  pad;
    bit<1>  ghost;      // read depths in ingress (Tofino 2), not from the egress copy
    bit<7>  pad2;
    bit<1>  loaded;     // `qlen` holds queue `index`'s length from the egress register
    bit<16> index;      // the queue this pass refreshes
    bit<32> qlen;
}

struct headers_t {
    ethernet_h ethernet;
    sync_h     sync;
    ipv4_h     ipv4;
    udp_h      udp;
}

struct metadata_t {
    bit<16> ecmp_group;
    bit<16> ecmp_hash;
    // PISA FB
    bit<1>  tracked;     // a data packet to a queue PISA FB admits
    bit<1>  ghost;
    bit<32> write;       // 1: a SYNC pass with a new length for queue `q_index` (as wide as
                         // the registers whose stateful ALUs compare it)
    bit<1>  last;        // ... its walk's last queue
    bit<16> dcong;       // 1: the queue became non-empty, 2: it became empty
    bit<2>  alpha_class;
    bit<16> q_index;
    bit<16> port_index;
    bit<16> prio;
    bit<16> next;
    bit<9>  sport;
    bit<7>  sqid;
    bit<19> depth;       // a depth the TM published (Tofino 2)
    bit<32> new_qlen;
    bit<32> old_qlen;
    bit<1>  self_empty;  // the packet's own queue is empty (FB counts it as congested)
    bit<32> delta;
    bit<32> remaining;
    bit<16> nport;
    bit<16> nprio;
    bit<32> threshold;
}

parser IngressParser(packet_in pkt,
                     out headers_t hdr,
                     out metadata_t meta,
                     out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_IPV4: parse_ipv4;
            ETHERTYPE_SYNC: parse_sync;
            default: accept;
        }
    }
    state parse_sync {
        pkt.extract(hdr.sync);
        transition accept;
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition select(hdr.ipv4.protocol) {
            IP_PROTO_UDP: parse_udp;
            default: accept;
        }
    }
    state parse_udp {
        pkt.extract(hdr.udp);
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

    action drop() {
        ig_dprsr_md.drop_ctl = 1;
    }

    action set_nexthop(bit<9> port, mac_addr_t dmac, mac_addr_t smac) {
        ig_tm_md.ucast_egress_port = port;
        hdr.ethernet.dst_addr = dmac;
        hdr.ethernet.src_addr = smac;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
    }

    action set_ecmp(bit<16> group) {
        meta.ecmp_group = group;
    }

    table ipv4_lpm {
        key = { hdr.ipv4.dst_addr : lpm; }
        actions = { set_nexthop; set_ecmp; drop; }
        default_action = drop();
        size = 128;
    }

    // The buffer class of the packet's tag: its queue and colour.
    action set_class(bit<7> qid, bit<2> color) {
        ig_tm_md.qid = qid;
        ig_tm_md.packet_color = color;
    }

    table classify {
        key = { hdr.ipv4.dscp : exact; }
        actions = { set_class; }
        default_action = set_class(1, 1);
        size = 64;
    }

    table ecmp_select {
        key = {
            meta.ecmp_group : exact;
            meta.ecmp_hash  : ternary;
        }
        actions = { set_nexthop; drop; }
        default_action = drop();
        size = 256;
    }

    // ---- PISA FB ----
    QueueDepth() qd;

    // The ingress copies: each queue's length, B − Q, each port's and each priority's count of
    // non-empty queues (cells and queues, as the copies say).
    Register<bit<32>, bit<16>>(1024, 0) qlen_in;
    Register<bit<32>, bit<1>>(1, 0) remaining;
    Register<bit<16>, bit<16>>(64, 0) n_port;
    Register<bit<16>, bit<16>>(4, 0) n_prio;

    // A data packet reads its queue's copy; a SYNC pass with a new length writes it and
    // returns the old one.
    RegisterAction<bit<32>, bit<16>, bit<32>>(qlen_in) qlen_step = {
        void apply(inout bit<32> value, out bit<32> rv) {
            rv = value;
            if (meta.write == 1) {
                value = meta.new_qlen;
            }
        }
    };
    RegisterAction<bit<32>, bit<1>, bit<32>>(remaining) remaining_step = {
        void apply(inout bit<32> value, out bit<32> rv) {
            rv = value;
            if (meta.write == 1) {
                value = value + meta.delta;
            }
        }
    };
    RegisterAction<bit<16>, bit<16>, bit<16>>(n_port) n_port_step = {
        void apply(inout bit<16> value, out bit<16> rv) {
            rv = value;
            if (meta.dcong == 1) {
                value = value + 1;
            } else if (meta.dcong == 2) {
                value = value - 1;
            }
        }
    };
    RegisterAction<bit<16>, bit<16>, bit<16>>(n_prio) n_prio_step = {
        void apply(inout bit<16> value, out bit<16> rv) {
            rv = value;
            if (meta.dcong == 1) {
                value = value + 1;
            } else if (meta.dcong == 2) {
                value = value - 1;
            }
        }
    };

    // The Routing table's second half (§5.1): the register elements and α class of the
    // packet's queue. A miss: a queue PISA FB leaves to the TM.
    action set_queue(bit<16> index, bit<16> port_index, bit<16> prio, bit<2> alpha_class,
                     bit<1> ghost) {
        meta.tracked = 1;
        meta.q_index = index;
        meta.port_index = port_index;
        meta.prio = prio;
        meta.alpha_class = alpha_class;
        meta.ghost = ghost;
    }
    table fb_queue {
        key = {
            ig_tm_md.ucast_egress_port : exact;
            ig_tm_md.qid               : exact;
        }
        actions = { set_queue; NoAction; }
        default_action = NoAction();
        size = 1024;
    }

    // What a SYNC pass refreshes: queue `index`'s elements, the port and queue a Tofino 2
    // reads its depth from, the walk's next queue (or its end), and the recirculation port.
    action sync_at(bit<16> port_index, bit<16> prio, bit<9> port, bit<7> qid, bit<16> next,
                   bit<1> last, bit<9> recirc_port) {
        meta.q_index = hdr.sync.index;
        meta.port_index = port_index;
        meta.prio = prio;
        meta.sport = port;
        meta.sqid = qid;
        meta.next = next;
        meta.last = last;
        ig_tm_md.ucast_egress_port = recirc_port;
        ig_tm_md.qid = 0;
    }
    table sync_queue {
        key = { hdr.sync.index : exact; }
        actions = { sync_at; drop; }
        default_action = drop();
        size = 1024;
    }

    action sync_from_ingress() {
        meta.depth = qd.read(meta.sport, meta.sqid);
        meta.write = 1;
    }
    table sync_depth { actions = { sync_from_ingress; } default_action = sync_from_ingress(); }

    action own_from_ingress() {
        meta.depth = qd.read(ig_tm_md.ucast_egress_port, ig_tm_md.qid);
    }
    table own_depth { actions = { own_from_ingress; } default_action = own_from_ingress(); }

    action read_qlen() { meta.old_qlen = qlen_step.execute(meta.q_index); }
    table qlen_copy { actions = { read_qlen; } default_action = read_qlen(); }
    action read_remaining() { meta.remaining = remaining_step.execute(0); }
    table remaining_copy { actions = { read_remaining; } default_action = read_remaining(); }
    action read_n_port() { meta.nport = n_port_step.execute(meta.port_index); }
    table n_port_copy { actions = { read_n_port; } default_action = read_n_port(); }
    action read_n_prio() { meta.nprio = n_prio_step.execute(meta.prio); }
    table n_prio_copy { actions = { read_n_prio; } default_action = read_n_prio(); }

    // The Shift table: `threshold = Remaining >> n` (or `<< n`), n the control plane's
    // power-of-two approximation of α·γ/N_p for this (α class, N_Port, N_Priority).
    action shr0() { meta.threshold = meta.remaining; }
    action shr1() { meta.threshold = meta.remaining >> 1; }
    action shr2() { meta.threshold = meta.remaining >> 2; }
    action shr3() { meta.threshold = meta.remaining >> 3; }
    action shr4() { meta.threshold = meta.remaining >> 4; }
    action shr5() { meta.threshold = meta.remaining >> 5; }
    action shr6() { meta.threshold = meta.remaining >> 6; }
    action shr7() { meta.threshold = meta.remaining >> 7; }
    action shr8() { meta.threshold = meta.remaining >> 8; }
    action shl1() { meta.threshold = meta.remaining << 1; }
    action shl2() { meta.threshold = meta.remaining << 2; }
    action shl3() { meta.threshold = meta.remaining << 3; }
    action shl4() { meta.threshold = meta.remaining << 4; }
    action shl5() { meta.threshold = meta.remaining << 5; }
    table shift {
        key = {
            meta.alpha_class : exact;
            meta.nport       : exact;
            meta.nprio       : exact;
            meta.self_empty  : exact;
        }
        actions = { shr0; shr1; shr2; shr3; shr4; shr5; shr6; shr7; shr8;
                    shl1; shl2; shl3; shl4; shl5; }
        default_action = shr8();
        size = 4096;
    }

    apply {
        if (hdr.sync.isValid()) {
            sync_queue.apply();
            if (hdr.sync.ghost == 1) {
                sync_depth.apply();
                meta.new_qlen = (bit<32>)meta.depth;
            } else if (hdr.sync.loaded == 1) {
                meta.new_qlen = hdr.sync.qlen;
                meta.write = 1;
            }
        } else if (hdr.ipv4.isValid()) {
            if (hdr.ipv4.ttl <= 1) {
                drop();
            } else {
                meta.ecmp_group = 0;
                meta.ecmp_hash = flow_hash.get({ hdr.ipv4.src_addr, hdr.ipv4.dst_addr,
                                                 hdr.ipv4.protocol, hdr.udp.src_port,
                                                 hdr.udp.dst_port });
                ipv4_lpm.apply();
                if (meta.ecmp_group != 0) {
                    ecmp_select.apply();
                }
                classify.apply();
                fb_queue.apply();
                own_depth.apply();   // a read takes no stage resource; ghost queues use it
            }
        } else {
            drop();
        }

        if (meta.tracked == 1 || meta.write == 1) {
            qlen_copy.apply();
            meta.delta = meta.old_qlen - meta.new_qlen;
            if (meta.write == 1) {
                if (meta.old_qlen == 0 && meta.new_qlen != 0) {
                    meta.dcong = 1;
                } else if (meta.old_qlen != 0 && meta.new_qlen == 0) {
                    meta.dcong = 2;
                }
            }
            remaining_copy.apply();
            n_port_copy.apply();
            n_prio_copy.apply();
        }

        if (meta.tracked == 1) {
            if (meta.ghost == 1) {
                if (meta.depth == 0) {
                    meta.self_empty = 1;
                }
            } else if (meta.old_qlen == 0) {
                meta.self_empty = 1;
            }
            shift.apply();
            if (meta.ghost == 1) {
                if ((bit<32>)meta.depth >= meta.threshold) {
                    drop();
                }
            } else if (meta.old_qlen >= meta.threshold) {
                drop();
            }
        }

        if (hdr.sync.isValid()) {
            if (meta.write == 1 && meta.last == 1) {
                drop();                          // the walk's end: the SYNC is consumed
            } else if (meta.write == 1) {
                hdr.sync.index = meta.next;
                hdr.sync.loaded = 0;
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
            hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.dscp, hdr.ipv4.ecn, hdr.ipv4.total_len,
            hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.frag_offset,
            hdr.ipv4.ttl, hdr.ipv4.protocol, hdr.ipv4.src_addr, hdr.ipv4.dst_addr
        });
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.sync);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.udp);
    }
}

parser EgressParser(packet_in pkt,
                    out headers_t hdr,
                    out egress_metadata_t meta,
                    out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_IPV4: parse_ipv4;
            ETHERTYPE_SYNC: parse_sync;
            default: accept;
        }
    }
    state parse_sync {
        pkt.extract(hdr.sync);
        transition accept;
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition accept;
    }
}

struct egress_metadata_t {
    bit<1>  access;     // a packet that reads or writes `qlen_eg`
    bit<32> write;      // 1: a data packet, which writes its queue's length
    bit<16> q_index;
    bit<32> depth;
    bit<32> qlen;
}

// ECN as on Tofino: the traffic manager flags a packet whose queue's ECN configuration
// marks it (enq_congest_stat); the egress program sets CE if the sender is ECN-capable.
// PISA FB on Tofino 1: every packet leaving a queue PISA FB admits writes the queue's length
// after it left into `qlen_eg`; a SYNC pass bound for the recirculation port reads the queue
// its walk is at.
control Egress(inout headers_t hdr,
               inout egress_metadata_t meta,
               in egress_intrinsic_metadata_t eg_intr_md,
               in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
               inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    Register<bit<32>, bit<16>>(1024, 0) qlen_eg;
    RegisterAction<bit<32>, bit<16>, bit<32>>(qlen_eg) qlen_eg_step = {
        void apply(inout bit<32> value, out bit<32> rv) {
            rv = value;
            if (meta.write == 1) {
                value = meta.depth;
            }
        }
    };
    action qlen_eg_access() { meta.qlen = qlen_eg_step.execute(meta.q_index); }
    table qlen_egress { actions = { qlen_eg_access; } default_action = qlen_eg_access(); }

    action set_eg_queue(bit<16> index) {
        meta.access = 1;
        meta.write = 1;
        meta.q_index = index;
        meta.depth = (bit<32>)eg_intr_md.deq_qdepth;
    }
    table eg_queue {
        key = {
            eg_intr_md.egress_port : exact;
            eg_intr_md.egress_qid  : exact;
        }
        actions = { set_eg_queue; NoAction; }
        default_action = NoAction();
        size = 1024;
    }

    apply {
        if (hdr.sync.isValid()) {
            if (hdr.sync.ghost == 0 && hdr.sync.loaded == 0) {
                meta.access = 1;
                meta.q_index = hdr.sync.index;
            }
        } else {
            if (hdr.ipv4.isValid() && eg_intr_md.enq_congest_stat != 0 && hdr.ipv4.ecn != 0) {
                hdr.ipv4.ecn = 3;
            }
            eg_queue.apply();
        }
        if (meta.access == 1) {
            qlen_egress.apply();
            if (hdr.sync.isValid()) {
                hdr.sync.qlen = meta.qlen;
                hdr.sync.loaded = 1;
            }
        }
    }
}

control EgressDeparser(packet_out pkt,
                       inout headers_t hdr,
                       in egress_metadata_t meta,
                       in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    Checksum() ipv4_checksum;
    apply {
        hdr.ipv4.hdr_checksum = ipv4_checksum.update({
            hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.dscp, hdr.ipv4.ecn, hdr.ipv4.total_len,
            hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.frag_offset,
            hdr.ipv4.ttl, hdr.ipv4.protocol, hdr.ipv4.src_addr, hdr.ipv4.dst_addr
        });
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.sync);
        pkt.emit(hdr.ipv4);
    }
}

Pipeline(IngressParser(), Ingress(), IngressDeparser(),
         EgressParser(), Egress(), EgressDeparser()) pipe;
Switch(pipe) main;
