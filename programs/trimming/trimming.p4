// trimming: packet trimming on a Tofino-1-like chip, the design of `ndp.p4` (Popa et al.,
// "Implementing packet trimming support in hardware", 2022, §4-5; seeds/trimming-on-tofino.txt),
// with the stock router's LPM and ECMP routing. programs/trimming/README.md explains each part
// against the paper; deploy/src/trimming.rs generates the entries and the chip configuration
// (mirror sessions, multicast groups, meters, queues, deflect-on-drop) for any topology.
//
// Data packets (model DATA frames not yet trimmed) go to the data queue of their egress port
// with deflect-on-drop set; everything else (ACK, NACK, PULL, headers trimmed upstream, other
// frames) goes to the port's header queue, which the TM serves first.
//
// Ingress trimming, per (pipe, egress port): three byte meters run on every data packet:
// `m_opt` at the port's line rate, `m_half` at half of it, `m_pess` at a quarter (each a
// virtual output queue of the data queue's size). Two registers hold when the port's
// pessimistic (`t0_reg`) and half-pessimistic (`t1_reg`) modes end: the port is pessimistic
// while now <= t0_reg, half-pessimistic while now <= t1_reg, optimistic after (and then both
// are cleared, as ndp.p4 does). `trim_decide` maps (mode, the three colours, the depth test)
// to trimming: a red colour of the mode's meter trims. A trimmed packet is mirrored,
// truncated, to its port's header queue (one mirror session per port) and the original is
// dropped; its transport flags get TRIMMED.
//
// Deflect-on-drop and the feedback loop: what overflows the data queue is deflected by the
// TM, whole, to its ingress pipe's recirculation port (the DoD queue). Egress recognises it
// (deflection_flag), makes a truncated copy with an UPDATE header in front (one mirror
// session per pipe, to that pipe's recirculation port) and drops the original. Back in
// ingress, the UPDATE becomes a NOTIFY multicast to every pipe's recirculation port and, as
// the same group's last member, the trimmed header (flags TRIMMED | DOD_TRIMMED) to its
// destination's header queue. A NOTIFY arriving in ingress sets the port's t0_reg to now + T0
// and t1_reg to now + T1, and is consumed. `ingress_cfg.notify` selects the variants: no
// feedback (the header goes on alone), or the originating pipe only (the UPDATE itself arms
// the registers).
//
// The MoD variant (the paper's Mirror-on-Drop baseline, on the chip's what-if
// `mirror_on_drop`): no ingress trimming and no deflection; what overflows the data queue is
// dropped and the TM offers its first bytes (ctl_h as ingress left it, then the headers) to the
// pipe's recirculation port. Egress keeps its ctl_h (a K_DATA packet leaving by a port other
// than its own), and back in ingress `mirror_on_drop_flag` makes it the trimmed header, as an
// UPDATE's without feedback: to its destination's header queue.
//
// The Tofino 2 variant: `qd.read` gives the data queue's depth as the TM publishes it to
// ingress; when `port_trim` gives a threshold, a depth above it trims (`trim_decide`'s `over`
// key). On tofino1-like the deployment never sets a threshold: its depth export is an
// assumption of the model (SYNC packets), not a feature of the chip.
//
// Internal packets start with `ctl_h` (first byte CTL_MAGIC, a multicast MAC prefix no model
// host or chip uses): bridged with every packet from ingress to egress (carrying the egress
// port a deflected packet was meant for), and the mirror header of UPDATEs. Times are the
// low 32 bits of nanoseconds: a 32-bit register wraps after 4.29 s, which ndp.p4 does not
// handle either.

const bit<16> ETHERTYPE_IPV4 = 0x0800;
const bit<8>  IP_PROTO_UDP   = 17;
const bit<16> MODEL_UDP_PORT = 4791;

// The model's transport flags (net/src/packet.rs).
const bit<8> F_DATA        = 0x01;
const bit<8> F_TRIMMED     = 0x10;
const bit<8> F_DOD_TRIMMED = 0x80;
const bit<8> F_TRIMMED_DOD = 0x90;  // F_TRIMMED | F_DOD_TRIMMED (a constant: one ALU operation)

const bit<8> CTL_MAGIC = 0xD5;
const bit<8> K_DATA    = 0;  // bridged with a packet from ingress: egress strips it
const bit<8> K_UPDATE  = 1;  // mirror header of a deflected packet's copy, back to ingress
const bit<8> K_NOTIFY  = 2;  // the congestion signal, multicast to every pipe

// Queues of every port (deploy/src/trimming.rs configures them).
const bit<7> DATA_Q = 0;    // data: small, deflect-on-drop
const bit<7> HDR_Q  = 1;    // headers, control packets, UPDATEs and NOTIFYs: served first

// Multicast replication id of the NOTIFY copies (the destination's header copy has 0).
const bit<16> RID_NOTIFY = 1;

// ingress_cfg.notify: what an UPDATE does.
const bit<2> N_ALL  = 0;  // NOTIFY every pipe (the paper's design)
const bit<2> N_NONE = 1;  // no feedback: the header goes on to its destination alone
const bit<2> N_SELF = 2;  // arm this pipe only (the pipe whose DoD queue the packet left)

// Port modes.
const bit<2> M_OPT  = 0;
const bit<2> M_HALF = 1;
const bit<2> M_PESS = 2;

typedef bit<48> mac_addr_t;
typedef bit<32> ipv4_addr_t;

header ctl_h {
    bit<8>  magic;
    bit<8>  kind;
    bit<16> port;   // the egress port of the data packet
}

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

// The first bytes of the model's transport header (net/src/packet.rs).
header transport_h {
    bit<8>  flags;
    bit<8>  class;
    bit<16> queue;
}

struct headers_t {
    ctl_h       mctl;  // the mirror header (never emitted with the packet itself)
    ctl_h       ctl;
    ethernet_h  ethernet;
    ipv4_h      ipv4;
    udp_h       udp;
    transport_h tp;
}

struct metadata_t {
    bit<16> ecmp_group;
    bit<16> ecmp_hash;
    bit<16> flow_hash;
    bit<16> rnd;
    bit<1>  spray;
    bit<2>  notify;
    bit<32> t0_ns;
    bit<32> t1_ns;
    bit<32> now;
    bit<16> eport;
    bit<1>  data;     // a data packet: metered, may be trimmed
    bit<32> arm;      // 1: a NOTIFY (or a self-notifying UPDATE) arms the port's timers (32 bits: the timers' stateful ALUs compare it)
    bit<32> t0v;      // t0_reg as read
    bit<32> t1v;      // t1_reg as read
    bit<2>  mode;
    bit<2>  c_opt;
    bit<2>  c_half;
    bit<2>  c_pess;
    bit<19> depth;
    bit<19> depth_thr;
    bit<1>  over;
    bit<10> hdr_sess;
    bit<16> grp;
    bit<16> trim_ip_len;
    bit<16> trim_udp_len;
}

parser IngressParser(packet_in pkt,
                     out headers_t hdr,
                     out metadata_t meta,
                     out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        transition select(pkt.lookahead<bit<8>>()) {
            CTL_MAGIC: parse_ctl;
            default: parse_ethernet;
        }
    }
    // An UPDATE and a mirror-on-drop copy (K_DATA) carry the refused packet's headers; a
    // NOTIFY nothing more.
    state parse_ctl {
        pkt.extract(hdr.ctl);
        transition select(hdr.ctl.kind) {
            K_NOTIFY: accept;
            default: parse_ethernet;
        }
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

control Ingress(inout headers_t hdr,
                inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {

    Hash<bit<16>>(HashAlgorithm_t.CRC16) flow_hash;
    Random<bit<16>>() spray_rng;

    Meter<bit<7>>(128, MeterType_t.BYTES) m_opt;
    Meter<bit<7>>(128, MeterType_t.BYTES) m_half;
    Meter<bit<7>>(128, MeterType_t.BYTES) m_pess;

    Register<bit<32>, bit<7>>(128, 0) t0_reg;
    Register<bit<32>, bit<7>>(128, 0) t1_reg;

    // Trims per egress port: made in this pipe's ingress, and made of packets deflected from
    // this pipe's ingress (counted when their UPDATE or mirror-on-drop copy comes back);
    // NOTIFYs received per port.
    Counter<bit<64>, bit<7>>(128, CounterType_t.PACKETS) trims_ingress;
    Counter<bit<64>, bit<7>>(128, CounterType_t.PACKETS) trims_dod;
    Counter<bit<64>, bit<7>>(128, CounterType_t.PACKETS) notifies;

    QueueDepth() qd;

    // A NOTIFY sets the end of the port's pessimistic mode; a data packet reads it and
    // clears it once passed (ndp.p4's reset to 0).
    RegisterAction<bit<32>, bit<7>, bit<32>>(t0_reg) t0_step = {
        void apply(inout bit<32> value, out bit<32> rv) {
            rv = value;
            if (meta.arm == 1) {
                value = meta.now + meta.t0_ns;
            } else if (value < meta.now) {
                value = 0;
            }
        }
    };
    // The same for the end of the half-pessimistic mode.
    RegisterAction<bit<32>, bit<7>, bit<32>>(t1_reg) t1_step = {
        void apply(inout bit<32> value, out bit<32> rv) {
            rv = value;
            if (meta.arm == 1) {
                value = meta.now + meta.t1_ns;
            } else if (value < meta.now) {
                value = 0;
            }
        }
    };

    action drop() {
        ig_dprsr_md.drop_ctl = 1;
    }

    // Routes, as programs/ecmp_router (deploy/src/routers.rs generates both tables).
    action set_nexthop(bit<9> port, mac_addr_t dmac, mac_addr_t smac) {
        ig_tm_md.ucast_egress_port = port;
        meta.eport = (bit<16>)port;
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

    // Per ingress port: per-packet spraying, what an UPDATE does, T0 and T1 (ns).
    action set_cfg(bit<1> spray, bit<2> notify, bit<32> t0_ns, bit<32> t1_ns) {
        meta.spray = spray;
        meta.notify = notify;
        meta.t0_ns = t0_ns;
        meta.t1_ns = t1_ns;
    }

    table ingress_cfg {
        key = { ig_intr_md.ingress_port : exact; }
        actions = { set_cfg; }
        default_action = set_cfg(0, N_NONE, 0, 0);
        size = 128;
    }

    // Per egress port: its header mirror session, its NOTIFY multicast group, the lengths of
    // a trimmed header's IPv4 and UDP headers, and the Tofino 2 variant's depth threshold
    // (cells; the most a 19-bit depth holds: never).
    action set_port(bit<10> sess, bit<16> grp, bit<16> ip_len, bit<16> udp_len,
                    bit<19> depth_thr) {
        meta.hdr_sess = sess;
        meta.grp = grp;
        meta.trim_ip_len = ip_len;
        meta.trim_udp_len = udp_len;
        meta.depth_thr = depth_thr;
        meta.depth = qd.read(meta.eport[8:0], DATA_Q);
    }

    table port_trim {
        key = { meta.eport : exact; }
        actions = { set_port; NoAction; }
        default_action = NoAction();
        size = 128;
    }

    action run_meters() {
        meta.c_opt = m_opt.execute(meta.eport[6:0]);
        meta.c_half = m_half.execute(meta.eport[6:0]);
        meta.c_pess = m_pess.execute(meta.eport[6:0]);
    }

    table meters {
        actions = { run_meters; }
        default_action = run_meters();
    }

    action read_t0() {
        meta.t0v = t0_step.execute(meta.eport[6:0]);
    }

    // The timers go a stage after the meters: on Tofino 1 a stage's four meter ALUs are also
    // its stateful ALUs, and the three meters and two registers would need five.
    @stage(4)
    table timer_t0 {
        actions = { read_t0; }
        default_action = read_t0();
    }

    action read_t1() {
        meta.t1v = t1_step.execute(meta.eport[6:0]);
    }

    @stage(4)
    table timer_t1 {
        actions = { read_t1; }
        default_action = read_t1();
    }

    // Trim: a truncated copy to the port's header queue, the original dropped.
    action trim() {
        ig_dprsr_md.mirror_session = meta.hdr_sess;
        ig_dprsr_md.drop_ctl = 1;
        hdr.tp.flags = hdr.tp.flags | F_TRIMMED;
        hdr.ipv4.total_len = min(hdr.ipv4.total_len, meta.trim_ip_len);
        hdr.udp.length = min(hdr.udp.length, meta.trim_udp_len);
        trims_ingress.count(meta.eport[6:0]);
    }

    // (mode, colours of the three meters, depth above threshold) -> trim or not; the
    // deployment writes the variant's rules.
    table trim_decide {
        key = {
            meta.mode   : ternary;
            meta.c_opt  : ternary;
            meta.c_half : ternary;
            meta.c_pess : ternary;
            meta.over   : ternary;
        }
        actions = { trim; NoAction; }
        default_action = NoAction();
        size = 64;
    }

    // A deflected packet's header, back from the DoD queue, or a mirror-on-drop copy:
    // trimmed, on to its destination, and (an UPDATE's) the congestion signal to every pipe
    // (or to none). F_DOD_TRIMMED marks both: trimmed at the TM's refusal.
    action dod_header() {
        hdr.tp.flags = hdr.tp.flags | F_TRIMMED_DOD;
        hdr.ipv4.total_len = min(hdr.ipv4.total_len, meta.trim_ip_len);
        hdr.udp.length = min(hdr.udp.length, meta.trim_udp_len);
        ig_tm_md.qid = HDR_Q;
        trims_dod.count(meta.eport[6:0]);
    }

    table dod_trim {
        actions = { dod_header; }
        default_action = dod_header();
    }

    action count_notify() {
        notifies.count(meta.eport[6:0]);
    }

    table notify_count {
        actions = { count_notify; }
        default_action = count_notify();
    }

    apply {
        meta.now = ig_prsr_md.global_tstamp[31:0];
        meta.flow_hash = flow_hash.get({ hdr.ipv4.src_addr, hdr.ipv4.dst_addr,
                                         hdr.ipv4.protocol, hdr.udp.src_port,
                                         hdr.udp.dst_port });
        meta.rnd = spray_rng.get();
        ingress_cfg.apply();
        if (hdr.ctl.isValid()) {
            meta.eport = hdr.ctl.port;
        } else if (hdr.ipv4.isValid() && hdr.ipv4.ttl > 1) {
            ipv4_lpm.apply();
            if (hdr.tp.isValid() && hdr.tp.flags[0:0] == 1 && hdr.tp.flags[4:4] == 0) {
                meta.data = 1;
            }
        } else {
            drop();
        }

        // ---- the ECMP member: by the flow hash, or (spraying) at random per packet ----
        if (meta.spray == 1) {
            meta.ecmp_hash = meta.rnd;
        } else {
            meta.ecmp_hash = meta.flow_hash;
        }
        if (hdr.ctl.kind == K_NOTIFY || (hdr.ctl.kind == K_UPDATE && meta.notify == N_SELF)) {
            meta.arm = 1;
        }
        if (meta.ecmp_group != 0) {
            ecmp_select.apply();
        }

        // ---- per egress port: configuration, meters, timers, the published depth ----
        port_trim.apply();
        if (meta.data == 1) {
            meters.apply();
        }
        if (meta.data == 1 || meta.arm == 1) {
            timer_t0.apply();
            timer_t1.apply();
        }

        // ---- the port's mode, and the decision ----
        if (meta.now <= meta.t0v) {
            meta.mode = M_PESS;
        } else if (meta.now <= meta.t1v) {
            meta.mode = M_HALF;
        }
        if (meta.depth > meta.depth_thr) {
            meta.over = 1;
        }

        if (hdr.ctl.isValid()) {
            if (hdr.ctl.kind == K_UPDATE || ig_intr_md.mirror_on_drop_flag == 1) {
                dod_trim.apply();
                if (hdr.ctl.kind == K_UPDATE && meta.notify == N_ALL) {
                    hdr.ctl.kind = K_NOTIFY;
                    ig_tm_md.mcast_grp_a = meta.grp;
                } else {
                    hdr.ctl.kind = K_DATA;
                    ig_tm_md.ucast_egress_port = meta.eport[8:0];
                }
            } else {
                drop();
            }
            if (meta.arm == 1) {
                notify_count.apply();
            }
        } else {
            hdr.ctl.setValid();
            hdr.ctl.magic = CTL_MAGIC;
            hdr.ctl.kind = K_DATA;
            hdr.ctl.port = meta.eport;
            if (meta.data == 1) {
                ig_tm_md.qid = DATA_Q;
                ig_tm_md.deflect_on_drop = 1;
                trim_decide.apply();
            } else {
                ig_tm_md.qid = HDR_Q;
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
        pkt.emit(hdr.ctl);
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.udp);
        pkt.emit(hdr.tp);
    }
}

parser EgressParser(packet_in pkt,
                    out headers_t hdr,
                    out metadata_t meta,
                    out egress_intrinsic_metadata_t eg_intr_md) {
    // Every packet from ingress starts with ctl_h.
    state start {
        pkt.extract(hdr.ctl);
        transition parse_ethernet;
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
    bit<10> upd_sess;

    // Per recirculation port: the mirror session of its pipe's UPDATEs.
    action set_update(bit<10> sess) {
        upd_sess = sess;
    }

    table egress_cfg {
        key = { eg_intr_md.egress_port : exact; }
        actions = { set_update; NoAction; }
        default_action = NoAction();
        size = 16;
    }

    apply {
        if (hdr.ctl.kind == K_DATA) {
            if (eg_intr_md.deflection_flag == 1) {
                // Deflected on drop: a truncated copy with the UPDATE header in front goes
                // back to this pipe's ingress; the packet itself ends here.
                egress_cfg.apply();
                hdr.mctl.setValid();
                hdr.mctl.magic = CTL_MAGIC;
                hdr.mctl.kind = K_UPDATE;
                hdr.mctl.port = hdr.ctl.port;
                hdr.ctl.setInvalid();
                eg_dprsr_md.mirror_session = upd_sess;
                eg_dprsr_md.drop_ctl = 1;
            } else if (hdr.ctl.port == (bit<16>)eg_intr_md.egress_port) {
                hdr.ctl.setInvalid();
            }
            // Otherwise a mirror-on-drop copy on its way to the recirculation port: it keeps
            // ctl_h, which ingress reads back.
        } else if (hdr.ctl.kind == K_NOTIFY) {
            if (eg_intr_md.egress_rid == RID_NOTIFY) {
                // The signal recirculates alone.
                hdr.ethernet.setInvalid();
                hdr.ipv4.setInvalid();
                hdr.udp.setInvalid();
                hdr.tp.setInvalid();
            } else {
                // The destination's copy: the trimmed header.
                hdr.ctl.setInvalid();
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
        mirror.emit(hdr.mctl);
        pkt.emit(hdr.ctl);
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.udp);
        pkt.emit(hdr.tp);
    }
}

Pipeline(IngressParser(), Ingress(), IngressDeparser(),
         EgressParser(), Egress(), EgressDeparser()) pipe;
Switch(pipe) main;
