// pyrrha: congestion-root-based per-hop flow control (Zhang et al., "Analysis of Pyrrha",
// IEEE/ACM ToN 2025) as a program on the chip, with the stock router's ECMP routing.
// programs/pyrrha/README.md explains the design against the paper; deploy/src/pyrrha.rs
// generates the entries and the chip configuration it needs.
//
// Queues of every port: 0 is the output queue (OQ), never paused; 1..niq are isolation
// queues (IQs), one per (this port, downstream congestion root), paused and resumed by the
// downstream's PAUSE and RESUME; the last queue carries the frames (strict priority).
// A root is a port of the network, named by a dense id the deployment gives every chip port
// (the paper's <switch-id:port-id>).
//
// A data packet, at ingress:
// 1. route (ipv4_lpm / ecmp_select, as programs/ecmp_router), giving the egress port and the
//    flow hash;
// 2. path calculation: `member1` gives the port the next chip's ECMP group will choose, from
//    the egress port and the bits of the flow hash that chip reads; `path1` to `path4` the
//    ports the packet will leave the next four chips by (their root ids), from the egress
//    port, the destination, that choice and (`path1`, `path2`) the bits chips further on
//    read (tables the deployment generates with the path oracle, deploy/src/paths.rs); four
//    reach a host from the edge of a 3-tier fat tree;
// 3. root matching and queue choice: `assign1` to `assign4` hold, per (port, root n hops
//    downstream), the IQ this chip gave that root on that port; the nearest matched root's
//    IQ takes the packet, else the nearest soft-merging one's, else the OQ;
// 4. detection: the chosen queue's published depth above K_pause makes this chip ask its
//    upstream to pause: PAUSE(own root of the egress port, hop 1) for the OQ (a
//    self-nominated root), PAUSE(the IQ's root, its hop + 1) for an IQ (a relay), sent once
//    per (upstream port, queue) until the queue falls below K_resume (`up_map`), as a copy
//    mirrored to the ingress port's frame queue, which egress turns into the frame.
// At egress: `armed` watches each queue's depth as packets leave it; the first departure
// below K_resume after one at or above it sends a record (DEQ) back to ingress, which sends
// RESUME to every upstream port `up_map` says it paused (the record becomes the first
// RESUME, a mirrored copy walks on to the next, one per recirculated pass); a
// departure that leaves an IQ empty sends one too, and ingress releases the IQ if every
// PAUSE on it has been resumed (`iq_paused` counts them): a pass of its own clears its
// root's assignment and puts it back on the stack, and the RESUMEs follow.
// Received frames: PAUSE(R, n) on port p finds or gives (p, R) an IQ (popped from p's stack
// of free IQs, `top` and `stack`; the install is a second, recirculated pass; with none
// free, R's low bits pick one, shared) and pauses it by advanced flow control; RESUME
// resumes it when no other PAUSE on it is outstanding (and releases it if it is already
// empty). A frame naming one of this chip's own ports is ignored (`own_root`: the paper's
// guard against routing loops). Two races of the passes are closed: a PAUSE that finds its
// root's IQ released since (the release's own pass, which clears the assignment, not yet
// run) takes its count off again and gives the root a new IQ (a REDO pass); a RESUME or a
// MERGE for a root the port does not know is tried once more as a record, behind an
// install its PAUSE may have started.
// MERGE (§IV-A): PAUSE(R) naming a new root on port p makes p's OQ, if it is a root,
// resign: MERGE(old: p, new: R) goes to the upstream ports it paused (a walk, as RESUME's).
// MERGE(old O, new R) received on port q: O's IQ there is no longer held by O and turns
// soft-merging (bit 7 of its assignment): it keeps the flows that cross no other known
// root until it is empty and released, and forwards the MERGE to the ports it paused. If it
// holds packets, R takes an IQ on q (an MNEW pass, then INSTALL) counted once as waiting
// behind it (`iq_next`); the release lifts that count (a LIFT pass). So a flow that moves
// from the old IQ to the new one leaves in order: the single-tier stand-in for HIQ's
// soft-merging IQ feeding the next level.
//
// A chip whose ports span pipes: each pipe keeps its copy of the root tables and the IQs'
// roots (which its data packets and walks read) and its own ports' `up_map`; the pipe of a
// port alone keeps its IQs' counts, stack and `iq_next` and sends its AFC (`home`). So a
// record that changes the tables (INSTALL, the release's WALK) goes to every pipe's
// recirculation port (`fan`), a departure's DEQ to every pipe (a mirror session with a
// multicast group), a MERGE from the wire to every pipe first, as a record; an INSTALL from
// a PAUSE makes the OQ resign in the other pipes too. On a chip in one pipe none of this
// happens and nothing changes.
//
// Internal packets (records) start with 0xB7, which no model MAC starts with (a multicast,
// globally administered address that data never carries).
//
// Not yet (programs/pyrrha/README.md): a flow crossing two known roots takes the nearer
// one's IQ.

const bit<16> ETHERTYPE_IPV4    = 0x0800;
const bit<16> ETHERTYPE_PYRRHA  = 0x88B6;  // asic_net::ctrl: the flow-group pause frame
const bit<8>  IP_PROTO_UDP      = 17;
const bit<16> MODEL_UDP_PORT    = 4791;

const bit<8> OP_PAUSE  = 1;
const bit<8> OP_RESUME = 2;
const bit<8> OP_MERGE  = 3;

const bit<8> REC_MAGIC = 0xB7;
const bit<8> K_DATA    = 0;  // bridged with a data packet
const bit<8> K_PASS    = 1;  // bridged with a frame made at ingress: egress strips it
const bit<8> K_PAUSE   = 2;  // mirror header of a pause copy: egress makes the PAUSE frame
const bit<8> K_DEQ     = 3;  // from egress: queue `q` of `port` fell below K_resume / emptied
const bit<8> K_WALK    = 4;  // frames (RESUME or MERGE: `op`) for upstream ports `todo`
const bit<8> K_INSTALL = 5;  // give root `root` at hop `hop` the IQ `q` of `port`
const bit<8> K_MNEW    = 6;  // a MERGE's new root `root` at hop `hop` on `port`, behind IQ `link`
const bit<8> K_LIFT    = 7;  // IQ `q` of `port` no longer waits behind a soft-merging IQ
const bit<8> K_REDO    = 8;  // root `root` was steered to IQ `q`, released: undo; a new IQ
// What a received frame is, apart from the records' kinds: its opcode with this bit.
const bit<8> K_FRAME   = 0x10;
const bit<8> K_FPAUSE  = 0x11;  // K_FRAME | OP_PAUSE
const bit<8> K_FRESUME = 0x12;  // K_FRAME | OP_RESUME
const bit<8> K_FMERGE  = 0x13;  // K_FRAME | OP_MERGE

typedef bit<48> mac_addr_t;
typedef bit<32> ipv4_addr_t;

header rec_h {
    bit<8>  magic;
    bit<8>  kind;
    bit<16> port;     // DATA: ingress port; others: the (egress) port
    bit<8>  q;        // DEQ, WALK, INSTALL, LIFT: the queue
    bit<8>  hop;      // PAUSE, WALK, INSTALL, MNEW: the hop count (of the root the frame names)
    bit<16> root;     // PAUSE, WALK, INSTALL, MNEW: the root id
    bit<8>  sess;     // DATA: the mirror session back to the ingress pipe
    bit<8>  empty;    // DEQ: the departure left the queue empty; WALK: `q` was released
    bit<16> old_root; // WALK of MERGEs: the old root
    bit<32> todo;     // WALK: upstream ports (bit = pipe-local index) still to send to
    bit<8>  op;       // WALK: the frames' opcode
    bit<8>  old_hop;  // WALK of MERGEs: the old root's hop
    bit<8>  link;     // MNEW, INSTALL: the soft-merging IQ the new root's IQ waits behind
    bit<8>  fresh;    // MERGE, RESUME: the frame as it came from the wire (not a retry)
}

header ethernet_h {
    mac_addr_t dst_addr;
    mac_addr_t src_addr;
    bit<16>    ether_type;
}

// Pyrrha's frames: PAUSE and RESUME name a root and how many hops away it is; MERGE names
// the new root and the old one it takes the place of, with their hops.
header pyrrha_h {
    bit<8>  opcode;
    bit<8>  hop;
    bit<16> root;
    bit<16> old_root;
    bit<8>  old_hop;
    bit<8>  reserved;
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

struct headers_t {
    rec_h      mrec;  // the mirror header (never emitted with the packet itself)
    rec_h      rec;
    ethernet_h ethernet;
    pyrrha_h   pyr;
    ipv4_h     ipv4;
    udp_h      udp;
}

struct metadata_t {
    bit<16> ecmp_group;
    bit<16> ecmp_hash;
    bit<8>  kind;
    bit<16> in_port;
    bit<16> out_port;
    // ingress_cfg: the mirror session of a pause copy to this port (0: send no frames), the
    // session of records back into this pipe, this port's bit among the pipe's ports
    bit<8>  pause_sess;
    bit<8>  rec_sess;
    bit<32> in_bit;
    // ... the session of a departure's record (DEQ): to every pipe's recirculation port on
    // a chip whose ports span pipes, else `rec_sess`; the multicast group of the other
    // pipes' recirculation ports (0: one pipe); this pipe
    bit<16> deq_sess;
    bit<16> fan;
    bit<16> my_pipe;
    // egress_cfg: the port's own root id, thresholds (cells), frame queue
    bit<16> own_root;
    bit<19> k_pause;
    bit<7>  ctrl_q;
    // ... and the port's pipe: a record about a port of this pipe acts on the state only
    // its pipe keeps (`home`: the IQs' counts and stack, AFC); every pipe keeps its copy of
    // the root tables, the IQs' roots and its own ports' `up_map`
    bit<16> port_pipe;
    bit<16> afc_id;  // the port as advanced flow control names it: pipe[1:0] ++ mac[3:0]
    bit<1>  home;
    bit<1>  resign;  // an INSTALL from a PAUSE, in another pipe: its OQ resigns there too
    // path and roots
    bit<16> m1;      // the port the next chip's ECMP sends the packet out of (`member1`)
    bit<1>  fr_ok;   // a frame this chip acts on (not its own root; a hop it tracks)
    bit<8>  f_empty; // a walk record's: its IQ was released; a MERGE's: spread it to all pipes
    bit<8>  known;   // the frame's root's IQ on its port (0: none)
    bit<8>  known12; // ... in the tables of hops 1 and 2
    bit<8>  known34; // ... of hops 3 and 4
    bit<16> r1;
    bit<16> r2;
    bit<16> r3;
    bit<16> r4;
    bit<18> a1_idx;
    bit<18> a2_idx;
    bit<18> a3_idx;
    bit<18> a4_idx;
    bit<8>  a1_op;   // 1 read, 2 set if free (to new_q), 3 clear
    bit<8>  a2_op;
    bit<8>  a3_op;
    bit<8>  a4_op;
    bit<8>  new_q;
    bit<8>  a1;
    bit<8>  a2;
    bit<8>  a3;
    bit<8>  a4;
    bit<7>  q;
    bit<16> q_root;
    bit<8>  q_hop;
    bit<19> qlen;
    // up_map: 1 set `in_bit`, 2 read and clear
    bit<2>  um_op;
    bit<1>  above;   // the queue's depth past K_pause
    bit<13> um_idx;
    bit<32> um_old;
    bit<32> um_hit;
    // a frame from downstream
    bit<1>  own;
    bit<16> f_port;
    bit<8>  f_hop;
    bit<16> f_root;
    // IQ records and the free-IQ stack: 1 pop, 2 push
    bit<13> iq_idx;
    bit<2>  ir_op;   // iq_root: 1 read, 2 write, 3 read and clear (a release)
    bit<16> ir_val;
    bit<16> ir_old;
    bit<2>  ip_op;   // iq_paused: 1 count a PAUSE, 2 count a RESUME, 3 read
    bit<8>  ip_old;
    bit<2>  st_op;
    bit<6>  st_port;
    bit<8>  top_old;
    bit<13> st_idx;
    bit<8>  st_val;
    bit<8>  hash_q;
    bit<1>  afc;
    bit<15> credit;
    bit<16> afc_port;
    bit<7>  afc_q;
    bit<1>  release;
    // the RESUME walk
    bit<32> todo;
    bit<32> todo_rest;
    bit<16> walk_port;
    bit<32> walk_clear;
    bit<1>  walk;        // a DEQ or RESUME record: RESUME upstream ports `todo`
    bit<16> w_root;      // the root the RESUMEs name, and its hop for the receiver
    bit<8>  w_hop;
    bit<8>  w_clear;     // the assignment of the released IQ's root still to clear
    bit<8>  w_op;        // the walk's frames: RESUME or MERGE (with the old root and hop)
    bit<16> w_old;
    bit<8>  w_old_hop;
    // MERGE and soft-merging
    bit<8>  n_hop;       // a MERGE frame's new root's hop (`f_hop` is the old one's)
    bit<16> f_old;       // a MERGE frame's old root (`f_root` is the new one); else `f_root`
    bit<1>  merging;     // the data packet's IQ is soft-merging
    bit<1>  fresh;       // a frame from the wire (not a RESUME retried as a record)
    bit<8>  link;        // MNEW, INSTALL: the soft-merging IQ to wait behind
    bit<2>  nx_op;       // iq_next: 1 set if free, 2 set (0: read and clear)
    bit<13> nx_idx;
    bit<8>  nx_val;
    bit<8>  nx_old;
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
            ETHERTYPE_PYRRHA: parse_pyrrha;
            default: accept;
        }
    }
    state parse_pyrrha {
        pkt.extract(hdr.pyr);
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

    Hash<bit<16>>(HashAlgorithm_t.CRC16) ecmp_hash;
    QueueDepth() qd;

    // Per (port[5:0], root[11:0]): the IQ this chip gave the root n hops downstream of that
    // port (0: none), with bit 7 set once a MERGE has made it soft-merging.
    Register<bit<8>, bit<18>>(262144, 0) assign1;
    Register<bit<8>, bit<18>>(262144, 0) assign2;
    Register<bit<8>, bit<18>>(262144, 0) assign3;
    Register<bit<8>, bit<18>>(262144, 0) assign4;
    // Per (port[5:0], IQ[6:0]): its root (hop[3:0] ++ root[11:0]; the first root given
    // it, when others are hashed onto it) and how many PAUSEs on it are not yet resumed
    // (paused while not 0).
    Register<bit<16>, bit<13>>(8192, 0) iq_root;
    Register<bit<8>, bit<13>>(8192, 0) iq_paused;
    // Per port: how many IQs are free, and the free ones (a stack, one segment per port; the
    // deployment fills it with 1..niq).
    Register<bit<8>, bit<6>>(64, 0) top;
    Register<bit<8>, bit<13>>(8192, 0) stack;
    // Per (egress port[5:0], queue[6:0]): the upstream ports (bit = pipe-local index) this
    // chip sent PAUSE for that queue and has not resumed.
    Register<bit<32>, bit<13>>(8192, 0) up_map;
    // Per (port[5:0], IQ[6:0]) of a soft-merging IQ: the IQ a MERGE's new root took, which
    // waits (one count in `iq_paused`) until this one is released, so that no flow's later
    // packets leave before its earlier ones (0xff: reserved by the MERGE, none taken).
    Register<bit<8>, bit<13>>(8192, 0) iq_next;

    RegisterAction<bit<8>, bit<18>, bit<8>>(assign1) assign1_step = {
        void apply(inout bit<8> value, out bit<8> rv) {
            rv = value;
            if ((bit<8>)meta.a1_op == 3 || (bit<8>)meta.a1_op == 2 && value == 0) {
                value = meta.new_q;
            } else {
                if ((bit<8>)meta.a1_op == 4 && value != 0) {
                    value = value | 0x80;
                }
            }
        }
    };
    RegisterAction<bit<8>, bit<18>, bit<8>>(assign2) assign2_step = {
        void apply(inout bit<8> value, out bit<8> rv) {
            rv = value;
            if ((bit<8>)meta.a2_op == 3 || (bit<8>)meta.a2_op == 2 && value == 0) {
                value = meta.new_q;
            } else {
                if ((bit<8>)meta.a2_op == 4 && value != 0) {
                    value = value | 0x80;
                }
            }
        }
    };
    RegisterAction<bit<8>, bit<18>, bit<8>>(assign3) assign3_step = {
        void apply(inout bit<8> value, out bit<8> rv) {
            rv = value;
            if ((bit<8>)meta.a3_op == 3 || (bit<8>)meta.a3_op == 2 && value == 0) {
                value = meta.new_q;
            } else {
                if ((bit<8>)meta.a3_op == 4 && value != 0) {
                    value = value | 0x80;
                }
            }
        }
    };
    RegisterAction<bit<8>, bit<18>, bit<8>>(assign4) assign4_step = {
        void apply(inout bit<8> value, out bit<8> rv) {
            rv = value;
            if ((bit<8>)meta.a4_op == 3 || (bit<8>)meta.a4_op == 2 && value == 0) {
                value = meta.new_q;
            } else {
                if ((bit<8>)meta.a4_op == 4 && value != 0) {
                    value = value | 0x80;
                }
            }
        }
    };
    RegisterAction<bit<16>, bit<13>, bit<16>>(iq_root) iq_root_step = {
        void apply(inout bit<16> value, out bit<16> rv) {
            rv = value;
            if ((bit<16>)meta.ir_op == 2 && value == 0) {
                value = meta.ir_val;
            } else {
                if ((bit<16>)meta.ir_op == 3) {
                    value = 0;
                }
            }
        }
    };
    RegisterAction<bit<8>, bit<13>, bit<8>>(iq_paused) iq_paused_step = {
        void apply(inout bit<8> value, out bit<8> rv) {
            rv = value;
            if ((bit<8>)meta.ip_op == 1 && value != 0xff) {
                value = value + 1;
            } else {
                if ((bit<8>)meta.ip_op == 2 && value != 0) {
                    value = value - 1;
                }
            }
        }
    };
    RegisterAction<bit<8>, bit<13>, bit<8>>(iq_next) iq_next_step = {
        void apply(inout bit<8> value, out bit<8> rv) {
            rv = value;
            if ((bit<8>)meta.nx_op == 2 || (bit<8>)meta.nx_op == 1 && value == 0) {
                value = meta.nx_val;
            }
        }
    };
    // Push: one more free IQ, returning the slot to write it in (the count before); pop:
    // one fewer, returning the slot to read (the count after), or 0xff if none was free.
    RegisterAction<bit<8>, bit<6>, bit<8>>(top) top_step = {
        void apply(inout bit<8> value, out bit<8> rv) {
            if ((bit<8>)meta.st_op == 2) {
                rv = value;
                value = value + 1;
            } else {
                if (value != 0) {
                    value = value - 1;
                    rv = value;
                } else {
                    rv = 0xff;
                }
            }
        }
    };
    RegisterAction<bit<8>, bit<13>, bit<8>>(stack) stack_step = {
        void apply(inout bit<8> value, out bit<8> rv) {
            rv = value;
            if ((bit<8>)meta.st_op == 2) {
                value = meta.st_val;
            }
        }
    };
    // Op 1 (a data packet): while the queue is a root (past K_pause now, or it has paused an
    // upstream port and not yet resumed), the packet's ingress port joins the map and `rv`
    // is the map before; otherwise the map stays and `rv` is all ones (nothing to send).
    RegisterAction<bit<32>, bit<13>, bit<32>>(up_map) up_map_step = {
        void apply(inout bit<32> value, out bit<32> rv) {
            rv = value;
            if ((bit<32>)meta.um_op == 1) {
                if ((bit<32>)meta.above == 1 || value != 0) {
                    value = value | meta.in_bit;
                } else {
                    rv = 0xffffffff;
                }
            } else {
                if ((bit<32>)meta.um_op == 2) {
                    value = 0;
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

    // ---- per-port configuration ----
    action set_ingress(bit<8> pause_sess, bit<8> rec_sess, bit<16> deq_sess, bit<32> in_bit,
                       bit<7> ctrl_q, bit<16> fan, bit<16> pipe) {
        meta.pause_sess = pause_sess;
        meta.rec_sess = rec_sess;
        meta.deq_sess = deq_sess;
        meta.in_bit = in_bit;
        meta.ctrl_q = ctrl_q;
        meta.fan = fan;
        meta.my_pipe = pipe;
    }
    table ingress_cfg {
        key = { ig_intr_md.ingress_port : exact; }
        actions = { set_ingress; NoAction; }
        default_action = NoAction();
        size = 256;
    }
    action set_egress(bit<16> own_root, bit<19> k_pause, bit<16> pipe, bit<16> afc_id) {
        meta.own_root = own_root;
        meta.k_pause = k_pause;
        meta.port_pipe = pipe;
        meta.afc_id = afc_id;
    }
    table egress_cfg {
        key = { meta.out_port : exact; }
        actions = { set_egress; NoAction; }
        default_action = NoAction();
        size = 256;
    }

    // ---- path calculation ----
    // `idx` is the root's index in `assign1` to `assign4`: the egress port's low 6 bits, then
    // the root's low 12.
    action hop1(bit<16> root, bit<18> idx) {
        meta.r1 = root;
        meta.a1_op = 1;
        meta.a1_idx = idx;
    }
    action hop2(bit<16> root, bit<18> idx) {
        meta.r2 = root;
        meta.a2_op = 1;
        meta.a2_idx = idx;
    }
    action hop3(bit<16> root, bit<18> idx) {
        meta.r3 = root;
        meta.a3_op = 1;
        meta.a3_idx = idx;
    }
    action hop4(bit<16> root, bit<18> idx) {
        meta.r4 = root;
        meta.a4_op = 1;
        meta.a4_idx = idx;
    }
    // The port the next chip's ECMP group sends a packet out of, by this chip's egress port
    // and the bits of the flow hash the next chip reads: one row per bucket of its group, so
    // that the path tables need a row per port it may choose rather than per bucket (the
    // issue's "a core's table replicated once"). Egress ports whose next chip has no group,
    // or groups that differ by destination, have none.
    action set_m1(bit<16> port) {
        meta.m1 = port;
    }
    table member1 {
        key = {
            meta.out_port       : exact;
            meta.ecmp_hash      : ternary;
        }
        actions = { set_m1; NoAction; }
        default_action = NoAction();
        size = 2048;
    }
    // The port the next chip sends the packet out of (its root id), by this chip's egress
    // port, the destination, the port the next chip's ECMP group chooses (`member1`) and
    // the bits of the flow hash chips further on read.
    table path1 {
        key = {
            meta.out_port       : exact;
            hdr.ipv4.dst_addr   : ternary;
            meta.m1             : ternary;
            meta.ecmp_hash      : ternary;
        }
        actions = { hop1; NoAction; }
        default_action = NoAction();
        size = 512;
    }
    // The same for the chip after it.
    table path2 {
        key = {
            meta.out_port       : exact;
            hdr.ipv4.dst_addr   : ternary;
            meta.m1             : ternary;
            meta.ecmp_hash      : ternary;
        }
        actions = { hop2; NoAction; }
        default_action = NoAction();
        size = 1024;
    }
    // The third and the fourth chip: by the destination and the next chip's choice alone
    // (the chips beyond it do not hash: a fat tree's and a leaf-spine's down paths), so a
    // row is 44 bits, one TCAM block wide, and they hold a row per remote host.
    table path3 {
        key = {
            meta.out_port[5:0]  : exact;
            hdr.ipv4.dst_addr   : ternary;
            meta.m1[5:0]        : ternary;
        }
        actions = { hop3; NoAction; }
        default_action = NoAction();
        size = 3072;
    }
    table path4 {
        key = {
            meta.out_port[5:0]  : exact;
            hdr.ipv4.dst_addr   : ternary;
            meta.m1[5:0]        : ternary;
        }
        actions = { hop4; NoAction; }
        default_action = NoAction();
        size = 3072;
    }

    // ---- frames ----
    action mine() {
        meta.own = 1;
    }
    // Root ids of this chip's own ports: a frame naming one is ignored.
    table own_root {
        key = { hdr.pyr.root : exact; }
        actions = { mine; NoAction; }
        default_action = NoAction();
        size = 256;
    }

    // What a frame or a record does to the root tables of hops 1 to 4: a frame (not naming
    // one of this chip's ports) reads its hop's table (1) and is acted on (`fr_ok`), a
    // MERGE marks its old root's entry soft-merging (4) and an MNEW record reads its new
    // root's; an INSTALL record sets its hop's entry if free (2); the walk record of a
    // released IQ (`empty`) clears the entry of its root, one hop nearer than the hop it
    // carries (3). One table, not a condition per case: they would fill a stage's table
    // slots.
    action ops(bit<8> o1, bit<8> o2, bit<8> o3, bit<8> o4, bit<1> ok) {
        meta.a1_op = o1;
        meta.a2_op = o2;
        meta.a3_op = o3;
        meta.a4_op = o4;
        meta.fr_ok = ok;
    }
    table hop_ops {
        key = {
            meta.kind    : exact;
            meta.f_hop   : exact;
            meta.own     : exact;
            meta.f_empty : exact;
        }
        actions = { ops; NoAction; }
        default_action = NoAction();
        size = 32;
        const entries = {
            (K_FPAUSE, 1, 0, 0) : ops(1, 0, 0, 0, 1);
            (K_FPAUSE, 2, 0, 0) : ops(0, 1, 0, 0, 1);
            (K_FPAUSE, 3, 0, 0) : ops(0, 0, 1, 0, 1);
            (K_FPAUSE, 4, 0, 0) : ops(0, 0, 0, 1, 1);
            (K_FRESUME, 1, 0, 0) : ops(1, 0, 0, 0, 1);
            (K_FRESUME, 2, 0, 0) : ops(0, 1, 0, 0, 1);
            (K_FRESUME, 3, 0, 0) : ops(0, 0, 1, 0, 1);
            (K_FRESUME, 4, 0, 0) : ops(0, 0, 0, 1, 1);
            (K_INSTALL, 1, 0, 0) : ops(2, 0, 0, 0, 0);
            (K_INSTALL, 2, 0, 0) : ops(0, 2, 0, 0, 0);
            (K_INSTALL, 3, 0, 0) : ops(0, 0, 2, 0, 0);
            (K_INSTALL, 4, 0, 0) : ops(0, 0, 0, 2, 0);
            (K_FMERGE, 1, 0, 0) : ops(4, 0, 0, 0, 1);
            (K_FMERGE, 2, 0, 0) : ops(0, 4, 0, 0, 1);
            (K_FMERGE, 3, 0, 0) : ops(0, 0, 4, 0, 1);
            (K_FMERGE, 4, 0, 0) : ops(0, 0, 0, 4, 1);
            (K_MNEW, 1, 0, 0) : ops(1, 0, 0, 0, 1);
            (K_MNEW, 2, 0, 0) : ops(0, 1, 0, 0, 1);
            (K_MNEW, 3, 0, 0) : ops(0, 0, 1, 0, 1);
            (K_MNEW, 4, 0, 0) : ops(0, 0, 0, 1, 1);
            (K_REDO, 1, 0, 0) : ops(1, 0, 0, 0, 1);
            (K_REDO, 2, 0, 0) : ops(0, 1, 0, 0, 1);
            (K_REDO, 3, 0, 0) : ops(0, 0, 1, 0, 1);
            (K_REDO, 4, 0, 0) : ops(0, 0, 0, 1, 1);
            (K_WALK, 2, 0, 1) : ops(3, 0, 0, 0, 0);
            (K_WALK, 3, 0, 1) : ops(0, 3, 0, 0, 0);
            (K_WALK, 4, 0, 1) : ops(0, 0, 3, 0, 0);
            (K_WALK, 5, 0, 1) : ops(0, 0, 0, 3, 0);
        }
    }
    action set_hash_q(bit<8> q) {
        meta.hash_q = q;
    }
    // Out of free IQs: the root's id, hashed onto the IQs (the paper's fallback).
    table root_hash {
        key = { meta.f_root[7:0] : exact; }
        actions = { set_hash_q; }
        default_action = set_hash_q(1);
        size = 256;
    }
    // The walk of RESUMEs or MERGEs: the lowest upstream port still to send to, and the
    // mask that clears it.
    action walk_to(bit<16> port, bit<32> clear) {
        meta.walk_port = port;
        meta.walk_clear = clear;
    }
    table lowest_port {
        key = { meta.todo : ternary; }
        actions = { walk_to; NoAction; }
        default_action = NoAction();
        size = 64;
    }

    // The steps are written in the order of the stages they take, the data packets', the
    // frames' and the records' side by side, so that independent steps share stages (the
    // allocator never places a step before one written earlier on its path).
    apply {
        // ---- what the packet is ----
        meta.in_port = (bit<16>)ig_intr_md.ingress_port;
        meta.out_port = 0x1ff;
        ingress_cfg.apply();
        meta.ecmp_hash = ecmp_hash.get({ hdr.ipv4.src_addr, hdr.ipv4.dst_addr,
                                         hdr.ipv4.protocol, hdr.udp.src_port,
                                         hdr.udp.dst_port });
        if (hdr.rec.isValid()) {
            meta.kind = hdr.rec.kind;
            meta.f_port = hdr.rec.port;
            meta.f_root = hdr.rec.root;
            meta.f_hop = hdr.rec.hop;
            meta.out_port = hdr.rec.port;
            meta.todo = hdr.rec.todo;
            meta.iq_idx = hdr.rec.port[5:0] ++ hdr.rec.q[6:0];
            meta.a1_idx = hdr.rec.port[5:0] ++ hdr.rec.root[11:0];
            meta.a2_idx = hdr.rec.port[5:0] ++ hdr.rec.root[11:0];
            meta.a3_idx = hdr.rec.port[5:0] ++ hdr.rec.root[11:0];
            meta.a4_idx = hdr.rec.port[5:0] ++ hdr.rec.root[11:0];
            meta.link = hdr.rec.link;
            meta.fresh = hdr.rec.fresh[0:0];
            if (hdr.rec.kind == K_DEQ) {
                // Whom to resume; whether to release the IQ.
                meta.um_op = 2;
                meta.um_idx = hdr.rec.port[5:0] ++ hdr.rec.q[6:0];
                meta.ir_op = 1;
                meta.ip_op = 3;
            } else {
                if (hdr.rec.kind == K_INSTALL) {
                    meta.new_q = hdr.rec.q;
                    meta.nx_idx = hdr.rec.port[5:0] ++ hdr.rec.link[6:0];
                } else {
                    if (hdr.rec.kind == K_WALK) {
                        // A released IQ's root loses its assignment (`empty` says so), and
                        // the IQ waiting behind it, if any, is found (and lifted next pass).
                        meta.walk = 1;
                        meta.w_root = hdr.rec.root;
                        meta.w_hop = hdr.rec.hop;
                        meta.w_op = hdr.rec.op;
                        meta.w_old = hdr.rec.old_root;
                        meta.w_old_hop = hdr.rec.old_hop;
                        meta.f_empty = hdr.rec.empty;
                        if (hdr.rec.empty == 1) {
                            meta.nx_op = 2;
                        }
                        meta.nx_idx = hdr.rec.port[5:0] ++ hdr.rec.q[6:0];
                    } else {
                        if (hdr.rec.kind == K_MNEW) {
                            meta.nx_idx = hdr.rec.port[5:0] ++ hdr.rec.link[6:0];
                        } else {
                            if (hdr.rec.kind == K_FMERGE) {
                                // A MERGE spread to every pipe or tried again: the record
                                // names the old root (looked up) and carries the new one.
                                meta.f_root = hdr.rec.old_root;
                                meta.n_hop = hdr.rec.old_hop;
                                meta.f_old = hdr.rec.root;
                                drop();
                            } else {
                                if (hdr.rec.kind != K_LIFT && hdr.rec.kind != K_REDO) {
                                    drop();
                                }
                            }
                        }
                    }
                }
            }
        } else {
            if (hdr.pyr.isValid()) {
                // A frame from the chip downstream of this port.
                meta.kind = hdr.pyr.opcode | K_FRAME;
                meta.fresh = 1;
                meta.f_port = meta.in_port;
                meta.f_root = hdr.pyr.root;
                meta.out_port = meta.in_port;
                if (hdr.pyr.opcode == OP_MERGE) {
                    // The old root's entry: its IQ becomes soft-merging.
                    meta.f_hop = hdr.pyr.old_hop;
                    meta.n_hop = hdr.pyr.hop;
                    meta.f_old = hdr.pyr.old_root;
                    meta.a1_idx = ig_intr_md.ingress_port[5:0] ++ hdr.pyr.old_root[11:0];
                    meta.a2_idx = ig_intr_md.ingress_port[5:0] ++ hdr.pyr.old_root[11:0];
                    meta.a3_idx = ig_intr_md.ingress_port[5:0] ++ hdr.pyr.old_root[11:0];
                    meta.a4_idx = ig_intr_md.ingress_port[5:0] ++ hdr.pyr.old_root[11:0];
                } else {
                    meta.f_hop = hdr.pyr.hop;
                    meta.f_old = hdr.pyr.root;
                    meta.a1_idx = ig_intr_md.ingress_port[5:0] ++ hdr.pyr.root[11:0];
                    meta.a2_idx = ig_intr_md.ingress_port[5:0] ++ hdr.pyr.root[11:0];
                    meta.a3_idx = ig_intr_md.ingress_port[5:0] ++ hdr.pyr.root[11:0];
                    meta.a4_idx = ig_intr_md.ingress_port[5:0] ++ hdr.pyr.root[11:0];
                }
                own_root.apply();
                drop();
                if (hdr.pyr.opcode == OP_MERGE && meta.fan != 0) {
                    // Every pipe keeps its ports' `up_map` and its copy of the root tables:
                    // the MERGE goes to all of them first, as a record (`hop_ops` matches
                    // no MERGE with this set: the pass acts on nothing).
                    meta.f_empty = 1;
                }
            } else {
                if (hdr.ipv4.isValid() && hdr.ipv4.ttl > 1) {
                    // A data packet: route it; its bridged record (written here, not
                    // where its queue is known, so that no later record pass has to wait
                    // for it).
                    meta.kind = K_DATA;
                    hdr.rec.setValid();
                    hdr.rec.magic = REC_MAGIC;
                    hdr.rec.kind = K_DATA;
                    hdr.rec.port = meta.in_port;
                    hdr.rec.sess = meta.deq_sess[7:0];
                    ipv4_lpm.apply();
                    if (meta.ecmp_group != 0) {
                        ecmp_select.apply();
                    }
                } else {
                    drop();
                }
            }
        }

        // ---- which hop's root table a frame or a record reads or writes ----
        if (meta.kind != K_DATA) {
            hop_ops.apply();
        }

        // ---- the data packet's path ----
        egress_cfg.apply();
        if (meta.kind == K_DATA && meta.out_port != 0x1ff) {
            member1.apply();
        }
        if (meta.kind == K_DATA && meta.out_port != 0x1ff) {
            path1.apply();
            path2.apply();
            path3.apply();
            path4.apply();
        }

        // ---- whose state a record is about: this pipe's port's, or another's ----
        if (meta.my_pipe == meta.port_pipe) {
            meta.home = 1;
        }

        // ---- the roots this chip knows downstream, by hop ----
        if (meta.a1_op != 0) {
            meta.a1 = assign1_step.execute(meta.a1_idx);
        }
        if (meta.a2_op != 0) {
            meta.a2 = assign2_step.execute(meta.a2_idx);
        }
        if (meta.a3_op != 0) {
            meta.a3 = assign3_step.execute(meta.a3_idx);
        }
        if (meta.a4_op != 0) {
            meta.a4 = assign4_step.execute(meta.a4_idx);
        }

        // ---- a data packet's queue: the nearest matched root's IQ, else the nearest
        // soft-merging one's (it keeps the flows that cross no root beyond it until it is
        // empty), else the OQ ----
        if (meta.kind == K_DATA && meta.a1 != 0 && meta.a1 < 0x80) {
            meta.q = meta.a1[6:0];
            meta.q_root = meta.r1;
            meta.q_hop = 2;
            meta.qlen = qd.read(meta.out_port[8:0], meta.a1[6:0]);
        } else {
            if (meta.kind == K_DATA && meta.a2 != 0 && meta.a2 < 0x80) {
                meta.q = meta.a2[6:0];
                meta.q_root = meta.r2;
                meta.q_hop = 3;
                meta.qlen = qd.read(meta.out_port[8:0], meta.a2[6:0]);
            } else {
                if (meta.kind == K_DATA && meta.a3 != 0 && meta.a3 < 0x80) {
                    meta.q = meta.a3[6:0];
                    meta.q_root = meta.r3;
                    meta.q_hop = 4;
                    meta.qlen = qd.read(meta.out_port[8:0], meta.a3[6:0]);
                } else {
                    if (meta.kind == K_DATA && meta.a4 != 0 && meta.a4 < 0x80) {
                        meta.q = meta.a4[6:0];
                        meta.q_root = meta.r4;
                        meta.q_hop = 5;
                        meta.qlen = qd.read(meta.out_port[8:0], meta.a4[6:0]);
                    } else {
                        if (meta.kind == K_DATA && meta.a1 != 0) {
                            meta.q = meta.a1[6:0];
                            meta.merging = 1;
                        } else {
                            if (meta.kind == K_DATA && meta.a2 != 0) {
                                meta.q = meta.a2[6:0];
                                meta.merging = 1;
                            } else {
                                if (meta.kind == K_DATA && meta.a3 != 0) {
                                    meta.q = meta.a3[6:0];
                                    meta.merging = 1;
                                } else {
                                    if (meta.kind == K_DATA && meta.a4 != 0) {
                                        meta.q = meta.a4[6:0];
                                        meta.merging = 1;
                                    } else {
                                        if (meta.kind == K_DATA) {
                                            meta.q = 0;
                                            meta.q_root = meta.own_root;
                                            meta.q_hop = 1;
                                            meta.qlen = qd.read(meta.out_port[8:0], 0);
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        if (meta.kind != K_DATA) {
            // (One hop's table answers a frame or a record: the others read 0.)
            meta.known12 = meta.a1 | meta.a2;
            meta.known34 = meta.a3 | meta.a4;
        }
        if (meta.kind != K_DATA) {
            meta.known = meta.known12 | meta.known34;
        }

        // ---- what to do: pause upstream; pause, resume, install or give back an IQ ----
        if (meta.kind == K_DATA) {
            ig_tm_md.qid = meta.q;
        }
        if (meta.kind == K_FMERGE) {
            // The soft-merging IQ: the upstream ports it paused, to forward the MERGE to.
            meta.um_idx = meta.f_port[5:0] ++ meta.known[6:0];
        } else {
            if (meta.kind != K_DEQ) {
                // A data packet's queue; a PAUSE's port's OQ (`q` is 0).
                meta.um_idx = meta.out_port[5:0] ++ meta.q;
            }
        }
        if (meta.kind == K_DATA && meta.pause_sess != 0 && meta.merging == 0) {
            meta.um_op = 1;
        }
        if (meta.kind == K_DATA && meta.qlen > meta.k_pause) {
            meta.above = 1;
        }
        if (meta.kind == K_FPAUSE && meta.fr_ok == 1 && meta.known != 0) {
            // Known root: pause its IQ (and read its record: released, the assignment was
            // stale, a REDO pass follows).
            meta.afc = 1;
            meta.new_q = meta.known;
            meta.ip_op = 1;
            meta.iq_idx = meta.f_port[5:0] ++ meta.known[6:0];
            meta.ir_op = 1;
        } else {
            if (meta.kind == K_MNEW && meta.fr_ok == 1 && meta.known != 0
                    && meta.known[6:0] != meta.link[6:0]) {
                // A MERGE's new root has an IQ: it waits behind the soft-merging one.
                meta.afc = 1;
                meta.new_q = meta.known;
                meta.ip_op = 1;
                meta.iq_idx = meta.f_port[5:0] ++ meta.known[6:0];
                meta.ir_op = 1;
                meta.nx_op = 2;
                meta.nx_val = 1w0 ++ meta.known[6:0];
            } else {
                if (meta.kind == K_FPAUSE && meta.fr_ok == 1
                        || meta.kind == K_MNEW && meta.fr_ok == 1 && meta.known == 0) {
                    // New root: pop a free IQ; a second pass installs it.
                    meta.st_op = 1;
                    meta.st_port = meta.f_port[5:0];
                } else {
                    if (meta.kind == K_REDO) {
                        // The count a stale assignment put on a released IQ comes off;
                        // the root gets an IQ as a new one (the release has cleared its
                        // assignment by now: its pass was ahead in the recirculation).
                        meta.afc = 1;
                        meta.credit = 1;
                        meta.new_q = hdr.rec.q;
                        meta.ip_op = 2;
                        meta.st_op = 1;
                        meta.st_port = meta.f_port[5:0];
                    } else {
                        if ((meta.kind == K_FRESUME || meta.kind == K_FMERGE) && meta.known != 0
                                && meta.home == 1) {
                            // RESUME; MERGE: the old root no longer holds its IQ (soft-merging;
                            // again if it was, after the old root paused it once more).
                            meta.afc = 1;
                            meta.credit = 1;
                            meta.new_q = meta.known;
                            meta.ip_op = 2;
                            meta.iq_idx = meta.f_port[5:0] ++ meta.known[6:0];
                            meta.release = 1;
                            meta.qlen = qd.read(meta.f_port[8:0], meta.known[6:0]);
                        } else {
                            if (meta.kind == K_LIFT) {
                                // The soft-merging IQ it waited behind is released.
                                meta.afc = 1;
                                meta.credit = 1;
                                meta.new_q = hdr.rec.q;
                                meta.ip_op = 2;
                                meta.release = 1;
                                meta.qlen = qd.read(meta.f_port[8:0], hdr.rec.q[6:0]);
                            } else {
                                if (meta.kind == K_INSTALL && meta.known != 0 && meta.home == 1) {
                                    // The root had an IQ already: pause it (unless it is the
                                    // one to wait behind), give the popped one back.
                                    meta.st_op = 2;
                                    meta.st_port = hdr.rec.port[5:0];
                                    meta.st_val = hdr.rec.q;
                                    if (meta.known[6:0] != meta.link[6:0]) {
                                        meta.afc = 1;
                                        meta.new_q = meta.known;
                                        meta.ip_op = 1;
                                        meta.iq_idx = hdr.rec.port[5:0] ++ meta.known[6:0];
                                        meta.ir_op = 1;
                                    }
                                    if (meta.link != 0 && meta.known[6:0] != meta.link[6:0]) {
                                        meta.nx_op = 2;
                                        meta.nx_val = 1w0 ++ meta.known[6:0];
                                    }
                                } else {
                                    if (meta.kind == K_INSTALL && meta.known == 0) {
                                        // (Every pipe keeps the IQ's root, for the
                                        // RESUMEs its walks send.)
                                        meta.ir_op = 2;
                                        meta.ir_val = hdr.rec.hop[3:0] ++ hdr.rec.root[11:0];
                                        if (hdr.rec.q != meta.link && meta.home == 1) {
                                            meta.afc = 1;
                                            meta.ip_op = 1;
                                        }
                                        if (meta.link != 0 && hdr.rec.q != meta.link
                                                && meta.home == 1) {
                                            meta.nx_op = 2;
                                            meta.nx_val = hdr.rec.q;
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        if (meta.kind == K_WALK && meta.f_empty == 1 && meta.home == 1) {
            // The pass of a released IQ, in its port's pipe: back on the stack, as its root's
            // assignment goes (so no root can take it while one still names it).
            meta.st_op = 2;
            meta.st_port = hdr.rec.port[5:0];
            meta.st_val = hdr.rec.q;
        }

        if (meta.kind == K_FPAUSE && meta.fr_ok == 1 && meta.known == 0
                || meta.kind == K_INSTALL && meta.home == 0 && meta.known == 0
                    && hdr.rec.op == OP_MERGE) {
            // A new root downstream: if this port's OQ is a root it resigns, and the
            // upstream ports it paused get MERGE(old: this port, new: the frame's root);
            // in the other pipes, when the INSTALL that PAUSE made reaches them.
            meta.um_op = 2;
        }
        if (meta.kind == K_INSTALL && meta.home == 0 && meta.known == 0
                && hdr.rec.op == OP_MERGE) {
            meta.resign = 1;
        }
        if (meta.kind == K_FMERGE && meta.known != 0) {
            // Forward the MERGE to the upstream ports this IQ paused (in every pipe);
            // reserve its place for the IQ the new root takes here (taken already if it was
            // soft-merging with packets: no second one).
            meta.um_op = 2;
            if (meta.home == 1) {
                meta.nx_op = 1;
                meta.nx_val = 0xff;
                meta.nx_idx = meta.f_port[5:0] ++ meta.known[6:0];
            }
        }

        // ---- the state behind it: who was paused upstream; the IQ's root and state ----
        if (meta.um_op != 0) {
            meta.um_old = up_map_step.execute(meta.um_idx);
        }
        if (meta.nx_op != 0) {
            meta.nx_old = iq_next_step.execute(meta.nx_idx);
        }
        if (meta.ip_op != 0) {
            meta.ip_old = iq_paused_step.execute(meta.iq_idx);
        }

        // ---- the free-IQ stack: a pop for a new root, a push for a released IQ ----
        if (meta.st_op != 0) {
            meta.top_old = top_step.execute(meta.st_port);
            meta.st_idx = meta.st_port ++ meta.top_old[6:0];
        }
        if (meta.afc == 1) {
            meta.afc_port = meta.afc_id;
            meta.afc_q = meta.new_q[6:0];
        }
        if (meta.kind == K_DEQ && hdr.rec.empty == 1 && hdr.rec.q != 0 && meta.ip_old == 0
                && meta.home == 1 || meta.kind == K_WALK && meta.f_empty == 1) {
            // Empty and resumed: released, if it is still given out (its record goes, so a
            // second record for the same IQ, from packets the pipe had already steered to
            // it, finds none and cannot put it on the stack twice). The walk of a released
            // IQ takes its root from the other pipes' copies.
            meta.ir_op = 3;
        }
        if (meta.ir_op != 0) {
            meta.ir_old = iq_root_step.execute(meta.iq_idx);
        }
        if (meta.st_op != 0 && meta.top_old != 0xff) {
            meta.hash_q = stack_step.execute(meta.st_idx);
        }
        if (meta.st_op == 1 && meta.top_old == 0xff) {
            // Out of free IQs: the root's id hashed onto them.
            root_hash.apply();
        }

        if (meta.um_op == 1) {
            meta.um_hit = meta.um_old & meta.in_bit;
        }
        if (meta.kind == K_DEQ) {
            // The upstream ports to resume: this record sends the first RESUME itself.
            meta.walk = 1;
        }
        if (meta.kind == K_DEQ || meta.kind == K_FPAUSE || meta.kind == K_FMERGE
                || meta.resign == 1) {
            meta.todo = meta.um_old;
        }
        if (meta.walk == 1) {
            lowest_port.apply();
        }
        if (meta.kind == K_DEQ && meta.ir_op == 3 && meta.ir_old != 0) {
            // Empty and resumed: release it (its walk's pass puts it back on the stack).
            meta.release = 1;
            meta.w_clear = 1;
        }
        if (meta.w_clear == 1 || meta.kind == K_FPAUSE || meta.kind == K_FMERGE
                || meta.resign == 1) {
            // Every frame of the walk goes in later passes.
            meta.todo_rest = meta.todo;
        } else {
            if (meta.walk == 1) {
                meta.todo_rest = meta.todo & meta.walk_clear;
            }
        }
        if (meta.kind == K_DEQ && hdr.rec.q != 0) {
            // An IQ's RESUME names its root, one hop further; the OQ's, this port.
            meta.w_root = (bit<16>)meta.ir_old[11:0];
            meta.w_hop = (bit<8>)meta.ir_old[15:12] + 1;
            meta.w_op = OP_RESUME;
        } else {
            if (meta.kind == K_DEQ) {
                meta.w_root = meta.own_root;
                meta.w_hop = 1;
                meta.w_op = OP_RESUME;
            } else {
                if (meta.kind == K_FPAUSE || meta.resign == 1) {
                    // MERGE(old: this port, new: the frame's root), each a hop further.
                    meta.w_root = meta.f_root;
                    meta.w_hop = meta.f_hop + 1;
                    meta.w_op = OP_MERGE;
                    meta.w_old = meta.own_root;
                    meta.w_old_hop = 1;
                } else {
                    if (meta.kind == K_FMERGE) {
                        meta.w_root = meta.f_root;
                        meta.w_hop = meta.n_hop + 1;
                        meta.w_op = OP_MERGE;
                        meta.w_old = meta.f_old;
                        meta.w_old_hop = meta.f_hop + 1;
                    }
                }
            }
        }
        if (meta.afc == 1 && meta.ip_old < 2) {
            // Advanced flow control on this chip's IQ of the frame's port, when its count
            // of PAUSEs leaves or reaches 0 (a RESUME with another PAUSE outstanding, from
            // a root hashed onto the IQ or the same root from two queues downstream, leaves
            // it paused).
            ig_dprsr_md.adv_flow_ctl = 1w1 ++ meta.afc_port[5:0] ++ 3w0 ++ meta.afc_q
                ++ meta.credit;
        }

        // ---- the PAUSE copy ----
        if (meta.kind == K_DATA && meta.um_op == 1 && meta.um_hit == 0) {
            // The first time past K_pause since the last resume: PAUSE the upstream, as a
            // copy to the ingress port's frame queue.
            hdr.mrec.setValid();
            hdr.mrec.magic = REC_MAGIC;
            hdr.mrec.kind = K_PAUSE;
            hdr.mrec.root = meta.q_root;
            hdr.mrec.hop = meta.q_hop;
            ig_dprsr_md.mirror_session = (bit<10>)meta.pause_sess;
        }

        // ---- records: what the pass leaves for the next (one choice, one stage); a
        // record that changes the root tables goes to every pipe's recirculation port
        // (`fan`: the other pipes'), the others to this pipe's ----
        if (meta.kind == K_FMERGE && meta.f_empty == 1
                || (meta.kind == K_FRESUME || meta.kind == K_FMERGE) && meta.fresh == 1
                    && meta.fr_ok == 1 && meta.known == 0 && meta.home == 1) {
            // A MERGE from the wire on a chip whose ports span pipes: to every pipe, as a
            // record that is fresh (`f_empty` says so). A RESUME or MERGE for a root this
            // port does not know: its PAUSE may have just popped an IQ whose install pass is
            // still in the recirculation (or a REDO pass is giving it one), so it is tried
            // once more, as a record, behind it (not fresh: once only).
            hdr.rec.setValid();
            hdr.rec.magic = REC_MAGIC;
            hdr.rec.kind = meta.kind;
            hdr.rec.port = meta.f_port;
            hdr.rec.hop = meta.f_hop;
            hdr.rec.root = meta.f_old;
            hdr.rec.old_root = meta.f_root;
            hdr.rec.old_hop = meta.n_hop;
            hdr.rec.fresh = meta.f_empty;
            hdr.ethernet.setInvalid();
            hdr.pyr.setInvalid();
            ig_dprsr_md.drop_ctl = 0;
            ig_tm_md.recirculate = 1;
            ig_tm_md.mcast_grp_a = meta.fan;
        } else {
            if (meta.ir_op == 1 && meta.ir_old == 0 && meta.kind != K_DEQ) {
                // The root's assignment named an IQ released since (in the window before the
                // release's own pass clears the assignment): a REDO pass.
                hdr.rec.setValid();
                hdr.rec.magic = REC_MAGIC;
                hdr.rec.kind = K_REDO;
                hdr.rec.port = meta.f_port;
                hdr.rec.q = 1w0 ++ meta.known[6:0];
                hdr.rec.hop = meta.f_hop;
                hdr.rec.root = meta.f_root;
                hdr.rec.link = meta.link;
                hdr.ethernet.setInvalid();
                hdr.pyr.setInvalid();
                ig_dprsr_md.drop_ctl = 0;
                ig_tm_md.recirculate = 1;
            } else {
                if ((meta.kind == K_FPAUSE || meta.kind == K_MNEW || meta.kind == K_REDO)
                        && meta.st_op == 1) {
                    // Install the popped (or hashed) IQ in a second pass.
                    hdr.rec.setValid();
                    hdr.rec.magic = REC_MAGIC;
                    hdr.rec.kind = K_INSTALL;
                    hdr.rec.port = meta.f_port;
                    hdr.rec.q = meta.hash_q;
                    hdr.rec.hop = meta.f_hop;
                    hdr.rec.root = meta.f_root;
                    hdr.rec.link = meta.link;
                    hdr.rec.op = meta.w_op;
                    hdr.ethernet.setInvalid();
                    hdr.pyr.setInvalid();
                    ig_dprsr_md.drop_ctl = 0;
                    ig_tm_md.recirculate = 1;
                    ig_tm_md.mcast_grp_a = meta.fan;
                } else {
                    if ((meta.kind == K_FRESUME || meta.kind == K_FMERGE || meta.kind == K_LIFT)
                            && meta.release == 1 && meta.qlen == 0 && meta.ip_old < 2) {
                        // Resumed and already empty: a DEQ record releases it.
                        hdr.rec.setValid();
                        hdr.rec.magic = REC_MAGIC;
                        hdr.rec.kind = K_DEQ;
                        hdr.rec.port = meta.f_port;
                        hdr.rec.q = 1w0 ++ meta.new_q[6:0];
                        hdr.rec.empty = 1;
                        hdr.ethernet.setInvalid();
                        hdr.pyr.setInvalid();
                        ig_dprsr_md.drop_ctl = 0;
                        ig_tm_md.recirculate = 1;
                    } else {
                        if (meta.kind == K_FMERGE && meta.release == 1 && meta.nx_old == 0) {
                            // Soft-merging with packets in it: the new root takes an IQ here
                            // that waits behind it (an MNEW pass).
                            hdr.rec.setValid();
                            hdr.rec.magic = REC_MAGIC;
                            hdr.rec.kind = K_MNEW;
                            hdr.rec.port = meta.f_port;
                            hdr.rec.hop = meta.n_hop;
                            hdr.rec.root = meta.f_root;
                            hdr.rec.link = 1w0 ++ meta.new_q[6:0];
                            hdr.ethernet.setInvalid();
                            hdr.pyr.setInvalid();
                            ig_dprsr_md.drop_ctl = 0;
                            ig_tm_md.recirculate = 1;
                        } else {
                            if (meta.kind == K_INSTALL || meta.kind == K_MNEW
                                    || meta.kind == K_LIFT) {
                                drop();
                            } else {
                                if (meta.w_clear == 1) {
                                    // Released: a pass of its own clears its root's assignment
                                    // and finds the IQ waiting behind it; the RESUMEs follow, a
                                    // copy walking them.
                                    hdr.rec.kind = K_WALK;
                                    hdr.rec.todo = 0;
                                    hdr.rec.empty = 1;
                                    hdr.rec.root = meta.w_root;
                                    hdr.rec.hop = meta.w_hop;
                                    ig_tm_md.recirculate = 1;
                                    ig_tm_md.mcast_grp_a = meta.fan;
                                } else {
                                    if (meta.walk == 1 && meta.todo != 0) {
                                        // The frame to the lowest upstream port left, in place of
                                        // the record.
                                        hdr.rec.kind = K_PASS;
                                        hdr.ethernet.setValid();
                                        hdr.ethernet.dst_addr = 0x0180C2000001;
                                        hdr.ethernet.src_addr = 0x02fe00000000;
                                        hdr.ethernet.ether_type = ETHERTYPE_PYRRHA;
                                        hdr.pyr.setValid();
                                        hdr.pyr.opcode = meta.w_op;
                                        hdr.pyr.hop = meta.w_hop;
                                        hdr.pyr.root = meta.w_root;
                                        hdr.pyr.old_root = meta.w_old;
                                        hdr.pyr.old_hop = meta.w_old_hop;
                                        hdr.pyr.reserved = 0;
                                        ig_tm_md.ucast_egress_port = meta.walk_port[8:0];
                                        ig_tm_md.qid = meta.ctrl_q;
                                        ig_dprsr_md.drop_ctl = 0;
                                    } else {
                                        if (meta.kind == K_WALK && meta.nx_old != 0
                                                && meta.nx_old < 0x80) {
                                            // The IQ that waited behind the released one: a LIFT
                                            // pass lets it go.
                                            hdr.rec.kind = K_LIFT;
                                            hdr.rec.q = meta.nx_old;
                                            ig_tm_md.recirculate = 1;
                                        } else {
                                            if (meta.walk == 1) {
                                                drop();
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        if (meta.todo_rest != 0) {
            // A copy walks on to the other upstream ports.
            hdr.mrec.setValid();
            hdr.mrec.magic = REC_MAGIC;
            hdr.mrec.kind = K_WALK;
            hdr.mrec.port = meta.f_port;
            hdr.mrec.op = meta.w_op;
            hdr.mrec.hop = meta.w_hop;
            hdr.mrec.root = meta.w_root;
            hdr.mrec.old_root = meta.w_old;
            hdr.mrec.old_hop = meta.w_old_hop;
            hdr.mrec.todo = meta.todo_rest;
            ig_dprsr_md.mirror_session = (bit<10>)meta.rec_sess;
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
        pkt.emit(hdr.pyr);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.udp);
    }
}

parser EgressParser(packet_in pkt,
                    out headers_t hdr,
                    out metadata_t meta,
                    out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(hdr.rec);
        transition accept;
    }
}

control Egress(inout headers_t hdr,
               inout metadata_t meta,
               in egress_intrinsic_metadata_t eg_intr_md,
               in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
               inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    // Per (port[5:0], queue[6:0]): a departure since the last DEQ record left the queue at or
    // above K_resume.
    Register<bit<8>, bit<13>>(8192, 0) armed;
    bit<19> k_resume;
    bit<8>  was;
    bit<19> depth;
    bit<13> a_idx;
    bit<8>  up;

    RegisterAction<bit<8>, bit<13>, bit<8>>(armed) armed_step = {
        void apply(inout bit<8> value, out bit<8> rv) {
            rv = value;
            value = up;
        }
    };
    action set_resume(bit<19> k) {
        k_resume = k;
    }
    table port_resume {
        key = { eg_intr_md.egress_port : exact; }
        actions = { set_resume; NoAction; }
        default_action = NoAction();
        size = 256;
    }

    apply {
        if (hdr.rec.kind == K_DATA) {
            port_resume.apply();
            depth = eg_intr_md.deq_qdepth;
            a_idx = eg_intr_md.egress_port[5:0] ++ eg_intr_md.egress_qid;
            if (depth >= k_resume) {
                up = 1;
            }
            was = armed_step.execute(a_idx);
            // Below K_resume after a departure at or above it, or an IQ left empty: a DEQ
            // record back to the ingress pipe that holds the state.
            if (depth < k_resume && was == 1
                    || depth == 0 && eg_intr_md.egress_qid != 0) {
                hdr.mrec.setValid();
                hdr.mrec.magic = REC_MAGIC;
                hdr.mrec.kind = K_DEQ;
                hdr.mrec.port = (bit<16>)eg_intr_md.egress_port;
                hdr.mrec.q = (bit<8>)eg_intr_md.egress_qid;
                if (depth == 0) {
                    hdr.mrec.empty = 1;
                }
                eg_dprsr_md.mirror_session = (bit<10>)hdr.rec.sess;
            }
            hdr.rec.setInvalid();
        } else {
            if (hdr.rec.kind == K_PAUSE) {
                // The PAUSE frame, in place of the copy's bytes.
                hdr.ethernet.setValid();
                hdr.ethernet.dst_addr = 0x0180C2000001;
                hdr.ethernet.src_addr = 0x02fe00000000;
                hdr.ethernet.ether_type = ETHERTYPE_PYRRHA;
                hdr.pyr.setValid();
                hdr.pyr.opcode = OP_PAUSE;
                hdr.pyr.hop = hdr.rec.hop;
                hdr.pyr.root = hdr.rec.root;
                hdr.pyr.old_root = 0;
                hdr.pyr.old_hop = 0;
                hdr.pyr.reserved = 0;
                hdr.rec.setInvalid();
            } else {
                if (hdr.rec.kind == K_PASS) {
                    // A frame made at ingress.
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
        pkt.emit(hdr.pyr);
    }
}

Pipeline(IngressParser(), Ingress(), IngressDeparser(),
         EgressParser(), Egress(), EgressDeparser()) pipe;
Switch(pipe) main;
