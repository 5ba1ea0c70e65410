// bfc: Backpressure Flow Control (Goyal et al., NSDI 2022) as a program on the chip, with
// the stock router's ECMP routing. programs/bfc/README.md explains the design against the
// paper; deploy/src/bfc.rs generates the entries and the chip configuration it needs.
//
// Per data packet, at ingress (the paper's enqueue path, §3.3):
// 1. route (ipv4_lpm / ecmp_select, as programs/ecmp_router);
// 2. flow table: three register arrays indexed by egress port ++ CRC32(5-tuple)[9:0]:
//    `size` (packets resident), `stamp` (ns of the last enqueue or dequeue), `qassign`.
//    Per egress port, `claims` holds a credit per queue: free, held (an idle entry's), or
//    active. An entry's first packet takes, of the port's data queues, the one with the
//    most credit, searched and taken in one pass of the stateful min/max unit (`max8`), so
//    no two new flows get the same queue however close together they arrive. An entry
//    going idle (size 1 -> 0, on the dequeue path) gives its queue back as held; when its
//    flow returns, it takes that queue again (from `qlast`, written by the dequeue path, as
//    `qassign` is only written after the claim's stage). Within the sticky time it keeps
//    the queue even if another flow took it meanwhile; after it (size was 0 and the stamp
//    is older than the sticky time: reassigned), a queue taken meanwhile is given up for a
//    random data queue (`rand_q`), as is a search that finds every queue active. `mode`
//    (ingress_cfg) selects the baselines: 1 hashes the flow to a fixed queue (BFC +
//    stochastic), 2 puts every flow in queue 0 (BFC + single);
// 3. backpressure: if the assigned queue's published depth exceeds Th (pause_th, keyed by
//    the port's speed class and N_active = data queues neither empty nor paused), and
//    (ingress, egress) is not elided (bp_elide), pause_ctr[ingress port ++ upstreamQ] += 1;
//    on 0 -> 1 the packet is mirrored to the ingress port's control queue, where egress turns
//    the copy into a pause frame for upstreamQ.
// At egress: the transport header's `queue` (upstreamQ) is stamped with the queue the packet
// left, and the departing packet is mirrored, as a 16-byte record, to the recirculation port
// of its ingress pipe: the dequeue path (size -= 1; if it counted, pause_ctr -= 1 and on
// 1 -> 0 the record becomes a resume frame to the ingress port).
// Refresh: a packet-generator tick per pipe walks the pipe's ports (recirculating a record),
// sending each port a bitmap of the upstream queues that should be paused (pause_map).
// Upstream side: received pause/resume frames become advanced flow control on the named queue
// of the port they came in on, and are remembered in `afc_map`; a received bitmap is compared
// with `afc_map` and each differing queue is fixed, one per recirculated pass.
//
// Internal packets (records) start with the byte 0xBF, which no model MAC starts with (a
// multicast, globally administered address that BFC data never carries): bridged metadata,
// mirror headers and generator packets all share the `rec_h` layout.

const bit<16> ETHERTYPE_IPV4   = 0x0800;
const bit<16> ETHERTYPE_QPAUSE = 0x88B5;
const bit<8>  IP_PROTO_UDP     = 17;
const bit<16> MODEL_UDP_PORT   = 4791;

const bit<8> OP_PAUSE  = 1;
const bit<8> OP_RESUME = 2;
const bit<8> OP_BITMAP = 3;

const bit<8> REC_MAGIC = 0xBF;
const bit<8> K_DATA  = 0;  // bridged with a data packet
const bit<8> K_PASS  = 1;  // bridged with a control frame made at ingress: egress strips it
const bit<8> K_PAUSE = 2;  // mirror header of a pause copy: egress makes the pause frame
const bit<8> K_DEQ   = 3;  // mirror header of a dequeue record, back to ingress
const bit<8> K_TICK  = 4;  // refresh walk at `port`
const bit<8> K_FIX   = 5;  // applying a received bitmap (`idx`), queues `todo` left
const bit<8> K_QP    = 6;  // (metadata only) a per-queue pause frame from downstream

// What the flow-table and pause-counter steps do with this packet.
const bit<2> ST_NONE = 0;
const bit<2> ST_ENQ  = 1;
const bit<2> ST_DEQ  = 2;

typedef bit<48> mac_addr_t;
typedef bit<32> ipv4_addr_t;

header rec_h {
    bit<8>  magic;
    bit<8>  kind;
    bit<16> port;   // ingress port of the data packet; TICK: port walked; FIX: port fixed
    bit<8>  up_q;   // upstreamQ the data packet arrived with
    bit<8>  incr;   // 1: the packet incremented its pause counter
    bit<8>  sess;   // egress mirror session of the dequeue record (0: none)
    bit<8>  q;      // DEQ: the queue the data packet left
    bit<32> idx;    // flow-table index; FIX: the bitmap received
    bit<32> todo;   // FIX: queues still to fix
}

header ethernet_h {
    mac_addr_t dst_addr;
    mac_addr_t src_addr;
    bit<16>    ether_type;
}

// The model's per-queue pause frame (net/src/ctrl.rs).
header qpause_h {
    bit<8>  opcode;
    bit<8>  reserved;
    bit<16> queue_id;
    bit<16> bitmap_len;
}

// Bitmap of a refresh frame: byte i holds queues 8i..8i+7, least significant bit first.
header bitmap_h {
    bit<8> b0;
    bit<8> b1;
    bit<8> b2;
    bit<8> b3;
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

// The first bytes of the model's transport header (net/src/packet.rs): `queue` is upstreamQ.
header transport_h {
    bit<8>  flags;
    bit<8>  class;
    bit<16> queue;
}

struct headers_t {
    rec_h       mrec;  // the mirror header (never emitted with the packet itself)
    rec_h       rec;
    ethernet_h  ethernet;
    qpause_h    qp;
    bitmap_h    bm;
    ipv4_h      ipv4;
    udp_h       udp;
    transport_h tp;
}

struct metadata_t {
    bit<16> ecmp_group;
    bit<16> ecmp_hash;
    bit<32> fid;
    bit<2>  step;
    bit<16> idx;
    bit<16> in_port;
    bit<16> out_port;
    bit<8>  up_q;
    bit<8>  pause_sess;
    bit<8>  deq_sess;
    // egress_cfg
    bit<4>  speed;
    bit<7>  ctrl_q;
    bit<32> data_mask;
    bit<32> sticky_ns;
    bit<2>  mode;
    // queue assignment
    bit<32> empty;
    bit<32> idle;
    bit<16> old_size;
    bit<32> old_stamp;
    bit<32> now;
    bit<1>  reassign;
    bit<8>  rnd;
    bit<7>  q;
    bit<8>  q8;
    bit<8>  qlast;   // the entry's queue at its last dequeue
    bit<7>  lq;      // the one queue to claim or give back when there is no search
    bit<16> e_lo;    // published-empty data queues 0..15
    bit<16> e_hi;    // published-empty data queues 16..31
    // the claim (min/max unit): lanes searched, the lane's queue base, the word, the lane
    // taken, the credit change (-128 takes, +1 gives back)
    bit<16> cmask;
    bit<8>  cbase;
    bit<7>  cword;
    bit<8>  clane;
    bit<8>  cpost;
    // N_active: data queues neither empty nor paused, counted a byte of `idle` at a time
    bit<8>  n0;
    bit<8>  n1;
    bit<8>  n2;
    bit<8>  n3;
    bit<8>  n_active;
    // backpressure
    bit<19> qlen;
    bit<19> th;
    bit<1>  elide;
    bit<1>  incr;
    bit<2>  ctr_op;   // 1: +1, 2: -1
    bit<12> ctr_idx;
    bit<16> old_ctr;
    bit<2>  map_op;   // pause_map / afc_map: 1 set `mask`, 2 clear `mask`, 3 read
    bit<7>  map_idx;
    bit<32> mask;
    bit<32> map_old;
    bit<32> diff;
    bit<7>  fixq;
    bit<1>  walk_more;
    bit<16> walk_next;
    bit<8>  kind;
    bit<16> afc_port;
    bit<15> credit;
    bit<32> bits;
    bit<2>  pm_op;   // pause_map: 1 set, 2 clear, 0 read
    bit<7>  pm_idx;
    bit<32> pm_set;
    bit<32> pm_clr;
    bit<32> nmask;
    bit<32> expire;
    bit<8>  cval;    // the claimed lane's credit before the claim (0: it was active)
    bit<7>  rq;
    bit<32> pm_old;
}

parser IngressParser(packet_in pkt,
                     out headers_t hdr,
                     out metadata_t meta,
                     out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        transition select(pkt.lookahead<bit<8>>()) {
            REC_MAGIC: parse_rec;
            default: parse_ethernet;
        }
    }
    state parse_rec {
        pkt.extract(hdr.rec);
        transition accept;
    }
    state parse_ethernet {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_IPV4: parse_ipv4;
            ETHERTYPE_QPAUSE: parse_qpause;
            default: accept;
        }
    }
    state parse_qpause {
        pkt.extract(hdr.qp);
        transition select(hdr.qp.opcode) {
            OP_BITMAP: parse_bitmap;
            default: accept;
        }
    }
    state parse_bitmap {
        pkt.extract(hdr.bm);
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
        transition select(hdr.udp.dst_port) {
            MODEL_UDP_PORT: parse_transport;
            default: accept;
        }
    }
    state parse_transport {
        pkt.extract(hdr.tp);
        transition accept;
    }
}

control Ingress(inout headers_t hdr,
                inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {

    Hash<bit<16>>(HashAlgorithm_t.CRC16) ecmp_hash;
    Hash<bit<32>>(HashAlgorithm_t.CRC32) flow_hash;
    Random<bit<8>>() rng;
    QueueDepth() qd;

    // The flow table (three arrays, one per field, as the paper), plus the entry's queue as
    // of its last dequeue (`qlast`, 0xff: never dequeued), which a returning flow claims
    // again before `qassign`'s stage.
    Register<bit<16>, bit<16>>(65536, 0) size;
    Register<bit<32>, bit<16>>(65536, 0) stamp;
    Register<bit<8>, bit<16>>(65536, 0) qassign;
    Register<bit<8>, bit<16>>(65536, 0xff) qlast;
    // Per egress port (out_port[5:0]) and half of its queues, a credit per queue: 2 free,
    // 1 held for an idle entry (until the entry returns, or a search finds no free queue),
    // 0 active (an entry with size > 0 has it). One 128-bit word of 16 8-bit lanes, which the
    // min/max unit searches and claims in one pass, so two new flows can never take the same
    // queue, and a new flow takes a held queue only when no free one is left.
    Register<bit<8>, bit<11>>(2048, 2) claims;
    // Pause counters by ingress port ++ upstreamQ, and per ingress port the upstream queues
    // that should be paused (the refresh bitmap).
    Register<bit<16>, bit<12>>(4096, 0) pause_ctr;
    Register<bit<32>, bit<7>>(128, 0) pause_map;
    // Upstream side: per egress port, the queues this chip was told to pause.
    Register<bit<32>, bit<7>>(128, 0) afc_map;

    RegisterAction<bit<16>, bit<16>, bit<16>>(size) size_step = {
        void apply(inout bit<16> value, out bit<16> rv) {
            rv = value;
            if ((bit<16>)meta.step == 1) {
                value = value + 1;
            } else {
                value = value |-| 1;
            }
        }
    };
    // The entry's sticky expiry: the last enqueue or dequeue plus the sticky time.
    RegisterAction<bit<32>, bit<16>, bit<32>>(stamp) stamp_step = {
        void apply(inout bit<32> value, out bit<32> rv) {
            rv = value;
            value = meta.expire;
        }
    };
    RegisterAction<bit<8>, bit<16>, bit<8>>(qassign) qassign_step = {
        void apply(inout bit<8> value, out bit<8> rv) {
            if ((bit<8>)meta.reassign == 1) {
                if (meta.cval != 0) {
                    value = meta.clane | meta.cbase;
                } else {
                    value = (bit<8>)meta.rq;
                }
            }
            rv = value;
        }
    };
    // Enqueue: read; dequeue: the queue the packet left.
    RegisterAction<bit<8>, bit<16>, bit<8>>(qlast) qlast_step = {
        void apply(inout bit<8> value, out bit<8> rv) {
            rv = value;
            if ((bit<8>)meta.step == 2) {
                value = hdr.rec.q;
            }
        }
    };
    // A new entry: the enabled queue with the most credit, taken (cpost -128: to 0); a
    // returning entry or the stochastic/single queue: that queue, taken; an entry going idle:
    // its queue, +1 (held for it). Returns the credit before (0: the queue was active).
    MinMaxAction<bit<8>, bit<7>, bit<8>>(claims) claim_step = {
        void apply(inout bit<128> value, out bit<8> rv, out bit<8> lane) {
            rv = this.max8(value, meta.cmask, lane, meta.cpost);
        }
    };
    RegisterAction<bit<16>, bit<12>, bit<16>>(pause_ctr) ctr_step = {
        void apply(inout bit<16> value, out bit<16> rv) {
            rv = value;
            if ((bit<16>)meta.ctr_op == 1) {
                value = value + 1;
            } else {
                value = value |-| 1;
            }
        }
    };
    RegisterAction<bit<32>, bit<7>, bit<32>>(pause_map) pause_map_step = {
        void apply(inout bit<32> value, out bit<32> rv) {
            rv = value;
            if ((bit<32>)meta.pm_op == 1) {
                value = value | meta.pm_set;
            } else {
                if ((bit<32>)meta.pm_op == 2) {
                    value = value & meta.pm_clr;
                }
            }
        }
    };
    RegisterAction<bit<32>, bit<7>, bit<32>>(afc_map) afc_map_step = {
        void apply(inout bit<32> value, out bit<32> rv) {
            rv = value;
            if ((bit<32>)meta.map_op == 1) {
                value = value | meta.mask;
            } else {
                if ((bit<32>)meta.map_op == 2) {
                    value = value & meta.nmask;
                }
            }
        }
    };

    action drop() {
        ig_dprsr_md.drop_ctl = 1;
    }

    // ---- routing (as programs/ecmp_router) ----
    action set_nexthop(bit<9> port, mac_addr_t dmac, mac_addr_t smac) {
        ig_tm_md.ucast_egress_port = port;
        meta.out_port = (bit<16>)port;
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
        size = 1024;
    }
    table ecmp_select {
        key = {
            meta.ecmp_group : exact;
            meta.ecmp_hash  : ternary;
        }
        actions = { set_nexthop; drop; }
        default_action = drop();
        size = 512;
    }
    // The testbed's looped-back ports emulate several switches on one chip: a route that
    // depends on the port the packet came in on wins over ipv4_lpm.
    table port_route {
        key = {
            ig_intr_md.ingress_port : exact;
            hdr.ipv4.dst_addr       : exact;
        }
        actions = { set_nexthop; NoAction; }
        default_action = NoAction();
        size = 1024;
    }

    // ---- per-port configuration ----
    action set_ingress(bit<8> pause_sess, bit<8> deq_sess, bit<32> sticky_ns, bit<2> mode) {
        meta.pause_sess = pause_sess;
        meta.deq_sess = deq_sess;
        meta.sticky_ns = sticky_ns;
        meta.mode = mode;
    }
    table ingress_cfg {
        key = { ig_intr_md.ingress_port : exact; }
        actions = { set_ingress; NoAction; }
        default_action = NoAction();
        size = 256;
    }
    action set_egress(bit<4> speed, bit<7> ctrl_q, bit<32> data_mask) {
        meta.speed = speed;
        meta.ctrl_q = ctrl_q;
        meta.data_mask = data_mask;
    }
    table egress_cfg {
        key = { meta.out_port : exact; }
        actions = { set_egress; NoAction; }
        default_action = NoAction();
        size = 256;
    }
    action elide() {
        meta.elide = 1;
    }
    table bp_elide {
        key = {
            ig_intr_md.ingress_port : exact;
            meta.out_port           : exact;
        }
        actions = { elide; NoAction; }
        default_action = NoAction();
        size = 4096;
    }

    // ---- queue choice ----
    action set_rq(bit<7> q) {
        meta.rq = q;
    }
    action set_lane(bit<16> lanes, bit<8> base, bit<1> half) {
        meta.cmask = lanes;
        meta.cbase = base;
        meta.cword[0:0] = half;
    }
    // The claim word's lane mask for one queue `lq`: 1 << (lq % 16), in half lq / 16.
    table lane_mask {
        key = { meta.lq : exact; }
        actions = { set_lane; }
        default_action = set_lane(1, 0, 0);
        size = 128;
    }
    // A uniform data queue for a random (dynamic) or hashed (stochastic) byte.
    table rand_q {
        key = { meta.rnd : exact; }
        actions = { set_rq; }
        default_action = set_rq(0);
        size = 256;
    }

    // ---- N_active and Th ----
    action set_n0(bit<8> n) { meta.n0 = n; }
    action set_n1(bit<8> n) { meta.n1 = n; }
    action set_n2(bit<8> n) { meta.n2 = n; }
    action set_n3(bit<8> n) { meta.n3 = n; }
    table popcount0 { key = { meta.idle[7:0] : exact; } actions = { set_n0; } default_action = set_n0(0); size = 256; }
    table popcount1 { key = { meta.idle[15:8] : exact; } actions = { set_n1; } default_action = set_n1(0); size = 256; }
    table popcount2 { key = { meta.idle[23:16] : exact; } actions = { set_n2; } default_action = set_n2(0); size = 256; }
    table popcount3 { key = { meta.idle[31:24] : exact; } actions = { set_n3; } default_action = set_n3(0); size = 256; }
    action set_th(bit<19> th) {
        meta.th = th;
    }
    // Th = HRTT · µ / N_active, in cells.
    table pause_th {
        key = {
            meta.speed    : exact;
            meta.n_active : exact;
        }
        actions = { set_th; }
        default_action = set_th(0x7ffff);
        size = 512;
    }

    // ---- bitmaps ----
    action set_mask(bit<32> mask, bit<32> nmask) {
        meta.mask = mask;
        meta.nmask = nmask;
    }
    // 1 << q (a table, as a stage cannot shift by a packet's value).
    table queue_mask {
        key = { meta.fixq : exact; }
        actions = { set_mask; }
        default_action = set_mask(0, 0xffffffff);
        size = 128;
    }
    action set_pm_mask(bit<32> set, bit<32> clr) {
        meta.pm_set = set;
        meta.pm_clr = clr;
    }
    // 1 << upstreamQ.
    table upstream_mask {
        key = { meta.up_q : exact; }
        actions = { set_pm_mask; }
        default_action = set_pm_mask(0, 0xffffffff);
        size = 256;
    }
    // The lowest set bit of `diff`.
    action fix_queue(bit<7> q, bit<2> map_op, bit<15> credit) {
        meta.fixq = q;
        meta.map_op = map_op;
        meta.credit = credit;
    }
    // A fix pass: the lowest queue still to fix (`todo`) and whether the bitmap (`idx`)
    // pauses it (map_op 1, credit 0) or resumes it (map_op 2, credit 1).
    table lowest_bit {
        key = {
            hdr.rec.todo : ternary;
            hdr.rec.idx  : ternary;
        }
        actions = { fix_queue; }
        default_action = fix_queue(0, 0, 0);
        size = 64;
    }
    action walk_to(bit<16> next) {
        meta.walk_more = 1;
        meta.walk_next = next;
    }
    // The next port of this pipe the refresh visits.
    table walk {
        key = { hdr.rec.port : exact; }
        actions = { walk_to; NoAction; }
        default_action = NoAction();
        size = 256;
    }

    // A control frame made in place of the packet, to `out_port`'s control queue.
    action ctrl_frame(bit<8> opcode) {
        hdr.rec.setValid();
        hdr.rec.magic = REC_MAGIC;
        hdr.rec.kind = K_PASS;
        hdr.ethernet.setValid();
        hdr.ethernet.dst_addr = 0x0180C2000001;
        hdr.ethernet.src_addr = 0x02fe00000000;
        hdr.ethernet.ether_type = ETHERTYPE_QPAUSE;
        hdr.qp.setValid();
        hdr.qp.opcode = opcode;
        hdr.qp.reserved = 0;
        hdr.qp.queue_id = 0;
        hdr.qp.bitmap_len = 0;
        ig_tm_md.ucast_egress_port = meta.out_port[8:0];
        ig_tm_md.qid = meta.ctrl_q;
    }

    apply {
        // ---- what the packet is; the chip's settings; what needs no routing ----
        meta.now = ig_prsr_md.global_tstamp[31:0];
        meta.in_port = (bit<16>)ig_intr_md.ingress_port;
        meta.out_port = 0x1ff;
        ingress_cfg.apply();
        meta.ecmp_hash = ecmp_hash.get({ hdr.ipv4.src_addr, hdr.ipv4.dst_addr,
                                         hdr.ipv4.protocol, hdr.udp.src_port,
                                         hdr.udp.dst_port });
        meta.fid = flow_hash.get({ hdr.ipv4.src_addr, hdr.ipv4.dst_addr,
                                   hdr.ipv4.protocol, hdr.udp.src_port,
                                   hdr.udp.dst_port });
        meta.rnd = rng.get();
        if (hdr.rec.isValid()) {
            meta.kind = hdr.rec.kind;
            if (hdr.rec.kind == K_DEQ) {
                // The dequeue path.
                meta.step = ST_DEQ;
                meta.idx = hdr.rec.idx[15:0];
                meta.cword[6:1] = hdr.rec.idx[15:10];
                meta.lq = hdr.rec.q[6:0];
                meta.cpost = 1;
                meta.up_q = hdr.rec.up_q;
                meta.pm_idx = hdr.rec.port[6:0];
                meta.out_port = hdr.rec.port;
                if (hdr.rec.incr == 1) {
                    meta.ctr_op = 2;
                    meta.ctr_idx = hdr.rec.port[6:0] ++ hdr.rec.up_q[4:0];
                }
            } else {
                if (hdr.rec.kind == K_TICK) {
                    meta.pm_idx = hdr.rec.port[6:0];
                    meta.out_port = hdr.rec.port;
                } else {
                    if (hdr.rec.kind == K_FIX) {
                        lowest_bit.apply();
                        meta.afc_port = hdr.rec.port;
                        meta.map_idx = hdr.rec.port[6:0];
                    } else {
                        drop();
                    }
                }
            }
        } else {
            if (hdr.qp.isValid()) {
                // A frame from the downstream chip about our queue on this port.
                meta.kind = K_QP;
                meta.fixq = hdr.qp.queue_id[6:0];
                meta.afc_port = meta.in_port;
                meta.map_idx = ig_intr_md.ingress_port[6:0];
                meta.map_op = 3;
                meta.bits = hdr.bm.b3 ++ hdr.bm.b2 ++ hdr.bm.b1 ++ hdr.bm.b0;
                if (hdr.qp.opcode == OP_PAUSE) {
                    meta.map_op = 1;
                }
                if (hdr.qp.opcode == OP_RESUME) {
                    meta.map_op = 2;
                    meta.credit = 1;
                }
                drop();
            } else {
                if (hdr.ipv4.isValid() && hdr.ipv4.ttl > 1) {
                    // A data packet: route it.
                    meta.kind = K_DATA;
                    if (port_route.apply().miss) {
                        ipv4_lpm.apply();
                        if (meta.ecmp_group != 0) {
                            ecmp_select.apply();
                        }
                    }
                } else {
                    drop();
                }
            }
        }

        // ---- a data packet's enqueue path begins once it has a port ----
        if (meta.kind == K_DATA && hdr.tp.isValid() && meta.out_port != 0x1ff) {
            meta.step = ST_ENQ;
            meta.up_q = hdr.tp.queue[7:0];
            meta.pm_idx = meta.in_port[6:0];
            meta.idx = meta.out_port[5:0] ++ meta.fid[9:0];
            meta.cword[6:1] = meta.out_port[5:0];
            meta.cpost = 0x80;
            meta.map_op = 3;
            meta.map_idx = meta.out_port[6:0];
        }
        meta.expire = meta.now + meta.sticky_ns;
        if (meta.mode == 1) {
            meta.rnd = meta.fid[23:16];
        }
        egress_cfg.apply();
        upstream_mask.apply();
        if (meta.kind == K_FIX || meta.kind == K_QP) {
            queue_mask.apply();
        }
        rand_q.apply();

        // ---- state read at once: afc_map, the flow table, the published depths ----
        // afc_map: the queues of each egress port the downstream paused.
        if (meta.map_op != 0) {
            meta.map_old = afc_map_step.execute(meta.map_idx);
        }
        if (meta.step != ST_NONE) {
            meta.old_size = size_step.execute(meta.idx);
            meta.old_stamp = stamp_step.execute(meta.idx);
            meta.qlast = qlast_step.execute(meta.idx);
        }
        if (meta.step == ST_ENQ) {
            // The queue to claim unless a new flow searches: the stochastic or single
            // variant's, or the dynamic variant's random one when no queue is empty.
            meta.lq = meta.rq;
            bp_elide.apply();
            meta.empty = qd.empty(meta.out_port[8:0]);
            hdr.rec.setValid();
            hdr.rec.magic = REC_MAGIC;
            hdr.rec.kind = K_DATA;
            hdr.rec.port = meta.in_port;
            hdr.rec.up_q = meta.up_q;
            hdr.rec.sess = meta.deq_sess;
            hdr.rec.idx = (bit<32>)meta.idx;
        }
        if (meta.map_op == 1 || meta.map_op == 2) {
            // Pause (credit 0) or resume our queue `fixq` of port `afc_port`.
            ig_dprsr_md.adv_flow_ctl = 1w1 ++ meta.afc_port[5:0] ++ 3w0 ++ meta.fixq
                ++ meta.credit;
        }
        if (meta.kind == K_FIX) {
            hdr.rec.todo = hdr.rec.todo & meta.nmask;
        }
        if (meta.kind == K_QP && meta.map_op == 3) {
            meta.diff = meta.bits ^ meta.map_old;
        }
        if (meta.step == ST_ENQ) {
            // Queues neither empty nor paused count towards N_active (the popcount tables
            // count the data queues whose bit in `idle` is 0).
            meta.idle = meta.empty | meta.map_old;
            meta.e_lo = meta.empty[15:0] & meta.data_mask[15:0];
            meta.e_hi = meta.empty[31:16] & meta.data_mask[31:16];
            if (meta.old_size == 0) {
                if (meta.now > meta.old_stamp) {
                    meta.reassign = 1;
                }
                if (meta.mode == 0 && meta.qlast[7:7] == 0) {
                    // A returning flow: its queue, claimed again (held for it while idle,
                    // so no search; an empty queue, as the paper's reassignment wants).
                    meta.lq = meta.qlast[6:0];
                }
            }
        }
        // ---- queue choice: the claim, then the flow table's assignment ----
        if (meta.step == ST_ENQ) {
            popcount0.apply();
            popcount1.apply();
            popcount2.apply();
            popcount3.apply();
        }
        if (meta.step == ST_ENQ && meta.reassign == 1 && meta.mode == 0
                && meta.qlast[7:7] == 1) {
            // A new entry searches the data queues of one half of the port's queues (the flow
            // hash's, unless only the other has queues published empty) for the one with the
            // most credit. The credits, not the published depths, say which queues are free:
            // the depths lag by the export's period and delay, the credits change in the
            // pass that takes or gives back a queue.
            if ((meta.fid[10:10] == 0 && meta.e_lo != 0) || meta.e_hi == 0) {
                meta.cmask = meta.data_mask[15:0];
                meta.cbase = 0;
                meta.cword[0:0] = 0;
            } else {
                meta.cmask = meta.data_mask[31:16];
                meta.cbase = 16;
                meta.cword[0:0] = 1;
            }
        } else {
            lane_mask.apply();
        }
        // An entry becoming active (size 0 -> 1) takes its queue; one going idle gives it back.
        if ((meta.step == ST_ENQ && meta.old_size == 0)
                || (meta.step == ST_DEQ && meta.old_size == 1)) {
            meta.cval = claim_step.execute(meta.cword, meta.clane);
        }
        // ---- a received bitmap: fix the queues where it differs, one per pass ----
        if (meta.kind == K_QP && meta.map_op == 3 && meta.diff != 0) {
            hdr.rec.setValid();
            hdr.rec.magic = REC_MAGIC;
            hdr.rec.kind = K_FIX;
            hdr.rec.port = meta.in_port;
            hdr.rec.idx = meta.bits;
            hdr.rec.todo = meta.diff;
            hdr.ethernet.setInvalid();
            hdr.qp.setInvalid();
            hdr.bm.setInvalid();
            ig_dprsr_md.drop_ctl = 0;
            ig_tm_md.recirculate = 1;
        }
        if (meta.kind == K_FIX) {
            if (hdr.rec.todo != 0) {
                ig_tm_md.recirculate = 1;
            } else {
                drop();
            }
        }

        if (meta.step == ST_ENQ) {
            meta.n0 = meta.n0 + meta.n1;
            meta.n2 = meta.n2 + meta.n3;
            meta.q8 = qassign_step.execute(meta.idx);
        }
        if (meta.step == ST_ENQ) {
            meta.n_active = meta.n0 + meta.n2;
            meta.q = meta.q8[6:0];
            ig_tm_md.qid = meta.q8[6:0];
        }
        // ---- backpressure ----
        if (meta.step == ST_ENQ) {
            pause_th.apply();
            meta.qlen = qd.read(meta.out_port[8:0], meta.q);
        }
        if (meta.step == ST_ENQ && meta.qlen > meta.th && meta.elide == 0) {
            hdr.rec.incr = 1;
            meta.ctr_op = 1;
            meta.ctr_idx = meta.in_port[6:0] ++ meta.up_q[4:0];
        }

        // ---- pause counters ----
        if (meta.ctr_op != 0) {
            meta.old_ctr = ctr_step.execute(meta.ctr_idx);
        }
        if (meta.ctr_op == 1 && meta.old_ctr == 0) {
            // 0 -> 1: pause upstreamQ: a copy to the ingress port's control queue, which
            // egress turns into the pause frame.
            meta.pm_op = 1;
            hdr.mrec.setValid();
            hdr.mrec.magic = REC_MAGIC;
            hdr.mrec.kind = K_PAUSE;
            hdr.mrec.port = meta.in_port;
            hdr.mrec.up_q = meta.up_q;
            ig_dprsr_md.mirror_session = (bit<10>)meta.pause_sess;
        }
        if (meta.step == ST_DEQ) {
            if (meta.ctr_op == 2 && meta.old_ctr == 1) {
                // 1 -> 0: the record becomes the resume frame.
                meta.pm_op = 2;
                ctrl_frame(OP_RESUME);
                hdr.qp.queue_id = (bit<16>)meta.up_q;
            } else {
                drop();
            }
        }
        // pause_map: per ingress port, the upstream queues that should be paused (bit
        // upstreamQ set while its counter is non-zero), which the refresh reads.
        if (meta.pm_op != 0 || meta.kind == K_TICK) {
            meta.pm_old = pause_map_step.execute(meta.pm_idx);
        }

        // ---- the refresh walk: this port's bitmap, then on to the next port ----
        if (meta.kind == K_TICK) {
            walk.apply();
            ctrl_frame(OP_BITMAP);
            hdr.qp.bitmap_len = 4;
            hdr.bm.setValid();
            hdr.bm.b0 = meta.pm_old[7:0];
            hdr.bm.b1 = meta.pm_old[15:8];
            hdr.bm.b2 = meta.pm_old[23:16];
            hdr.bm.b3 = meta.pm_old[31:24];
            if (meta.walk_more == 1) {
                hdr.mrec.setValid();
                hdr.mrec.magic = REC_MAGIC;
                hdr.mrec.kind = K_TICK;
                hdr.mrec.port = meta.walk_next;
                ig_dprsr_md.mirror_session = (bit<10>)meta.deq_sess;
            }
        }

    }
}

control IngressDeparser(packet_out pkt,
                        inout headers_t hdr,
                        in metadata_t meta,
                        in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    Mirror() mirror;
    Checksum() ipv4_checksum;
    apply {
        hdr.ipv4.hdr_checksum = ipv4_checksum.update({
            hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.dscp, hdr.ipv4.ecn, hdr.ipv4.total_len,
            hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.frag_offset,
            hdr.ipv4.ttl, hdr.ipv4.protocol, hdr.ipv4.src_addr, hdr.ipv4.dst_addr
        });
        mirror.emit(hdr.mrec);
        pkt.emit(hdr.rec);
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.qp);
        pkt.emit(hdr.bm);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.udp);
        pkt.emit(hdr.tp);
    }
}

parser EgressParser(packet_in pkt,
                    out headers_t hdr,
                    out metadata_t meta,
                    out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(hdr.rec);
        transition select(hdr.rec.kind) {
            K_DATA: parse_ethernet;
            K_PAUSE: parse_bridge;
            default: accept;
        }
    }
    // A pause copy: the data packet's bridged record follows the mirror header.
    state parse_bridge {
        pkt.extract(hdr.mrec);
        transition accept;
    }
    state parse_ethernet {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_IPV4: parse_ipv4;
            default: accept;
        }
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
        transition select(hdr.udp.dst_port) {
            MODEL_UDP_PORT: parse_transport;
            default: accept;
        }
    }
    state parse_transport {
        pkt.extract(hdr.tp);
        transition accept;
    }
}

control Egress(inout headers_t hdr,
               inout metadata_t meta,
               in egress_intrinsic_metadata_t eg_intr_md,
               in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
               inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply {
        if (hdr.rec.kind == K_DATA) {
            // upstreamQ for the next hop: the queue the packet left.
            if (hdr.tp.isValid()) {
                hdr.tp.queue = (bit<16>)eg_intr_md.egress_qid;
            }
            if (hdr.rec.sess != 0) {
                // The dequeue record, back to the ingress pipe that holds the state.
                hdr.mrec.setValid();
                hdr.mrec.magic = REC_MAGIC;
                hdr.mrec.kind = K_DEQ;
                hdr.mrec.port = hdr.rec.port;
                hdr.mrec.up_q = hdr.rec.up_q;
                hdr.mrec.incr = hdr.rec.incr;
                hdr.mrec.q = (bit<8>)eg_intr_md.egress_qid;
                hdr.mrec.idx = hdr.rec.idx;
                eg_dprsr_md.mirror_session = (bit<10>)hdr.rec.sess;
            }
            hdr.rec.setInvalid();
        } else {
            if (hdr.rec.kind == K_PAUSE) {
                // The pause frame, in place of the copy's headers.
                hdr.ethernet.setValid();
                hdr.ethernet.dst_addr = 0x0180C2000001;
                hdr.ethernet.src_addr = 0x02fe00000000;
                hdr.ethernet.ether_type = ETHERTYPE_QPAUSE;
                hdr.qp.setValid();
                hdr.qp.opcode = OP_PAUSE;
                hdr.qp.reserved = 0;
                hdr.qp.queue_id = (bit<16>)hdr.rec.up_q;
                hdr.qp.bitmap_len = 0;
                hdr.rec.setInvalid();
                hdr.mrec.setInvalid();
            } else {
                if (hdr.rec.kind == K_PASS) {
                    hdr.rec.setInvalid();
                }
            }
        }
    }
}

control EgressDeparser(packet_out pkt,
                       inout headers_t hdr,
                       in metadata_t meta,
                       in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    Mirror() mirror;
    apply {
        mirror.emit(hdr.mrec);
        pkt.emit(hdr.rec);
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.qp);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.udp);
        pkt.emit(hdr.tp);
    }
}

Pipeline(IngressParser(), Ingress(), IngressDeparser(),
         EgressParser(), Egress(), EgressDeparser()) pipe;
Switch(pipe) main;
