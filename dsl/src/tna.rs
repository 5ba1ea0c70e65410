//! The built-in architecture (TNA-like): intrinsic metadata types, their fields and the
//! chip signals they stand for, and the roles of the six blocks of a `Pipeline`.
//!
//! Programs need not declare these types; the compiler knows them, and only the fields listed
//! here exist. The system file `tna.p4` (`dsl/include/`, see [`crate::include`]) declares them
//! for people to read, and a declaration of one is checked against this list. A field's
//! [`Intrinsic`] says whether the chip writes it (read-only to the program) or reads it.

use pipelines::program::{Gress, Intrinsic};

/// An intrinsic metadata struct type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IntrinsicType {
    /// TNA type name.
    pub name: &'static str,
    /// The gress whose blocks may take it as a parameter.
    pub gress: Gress,
    /// Fields: name, width, chip signal.
    pub fields: &'static [(&'static str, u16, Intrinsic)],
}

impl IntrinsicType {
    /// The width and signal of field `name`.
    pub fn field(&self, name: &str) -> Option<(u16, Intrinsic)> {
        self.fields.iter().find(|f| f.0 == name).map(|f| (f.1, f.2))
    }
}

/// All intrinsic metadata types.
///
/// Names follow TNA. Model-specific additions (not in TNA) are marked: `pkt_length` at
/// ingress, the what-if `mirror_on_drop_flag` at ingress (no Tofino has a mirror-on-drop),
/// `ig_tm_md.recirculate` (TNA recirculates by choosing a recirculation port; this model has
/// an explicit request), `mirror_session`/`mtu_trunc_len` in the deparser metadata
/// (TNA picks the session in the deparser's `Mirror` extern), and the egress
/// `enq_qdepth_pkts`/`deq_qdepth_pkts` (queue depth in packets, beside TNA's depth in cells).
pub const INTRINSIC_TYPES: &[IntrinsicType] = &[
    IntrinsicType {
        name: "ingress_intrinsic_metadata_t",
        gress: Gress::Ingress,
        fields: &[
            ("ingress_port", 9, Intrinsic::IngressPort),
            ("ingress_mac_tstamp", 48, Intrinsic::IngressMacTimestamp),
            ("pkt_length", 16, Intrinsic::PacketLength),
            ("mirror_on_drop_flag", 1, Intrinsic::MirrorOnDrop),
        ],
    },
    IntrinsicType {
        name: "ingress_intrinsic_metadata_from_parser_t",
        gress: Gress::Ingress,
        fields: &[
            ("global_tstamp", 48, Intrinsic::GlobalTimestamp),
            ("parser_err", 16, Intrinsic::ParserError),
        ],
    },
    IntrinsicType {
        name: "ingress_intrinsic_metadata_for_tm_t",
        gress: Gress::Ingress,
        fields: &[
            ("ucast_egress_port", 9, Intrinsic::UcastEgressPort),
            ("qid", 7, Intrinsic::QueueId),
            ("mcast_grp_a", 16, Intrinsic::McastGroup),
            ("deflect_on_drop", 1, Intrinsic::DeflectOnDrop),
            ("ingress_cos", 3, Intrinsic::IngressCos),
            ("bypass_egress", 1, Intrinsic::BypassEgress),
            ("recirculate", 1, Intrinsic::Recirculate),
            ("packet_color", 2, Intrinsic::PacketColor),
        ],
    },
    IntrinsicType {
        name: "ingress_intrinsic_metadata_for_deparser_t",
        gress: Gress::Ingress,
        fields: &[
            ("drop_ctl", 3, Intrinsic::DropCtl),
            ("mirror_session", 10, Intrinsic::MirrorSession),
            ("mtu_trunc_len", 14, Intrinsic::MirrorTruncateBytes),
            ("adv_flow_ctl", 32, Intrinsic::AdvFlowCtl),
        ],
    },
    IntrinsicType {
        name: "egress_intrinsic_metadata_t",
        gress: Gress::Egress,
        fields: &[
            ("egress_port", 9, Intrinsic::EgressPort),
            ("egress_qid", 7, Intrinsic::EgressQueue),
            ("enq_qdepth", 19, Intrinsic::EnqQueueDepthCells),
            ("deq_qdepth", 19, Intrinsic::DeqQueueDepthCells),
            ("enq_qdepth_pkts", 19, Intrinsic::EnqQueueDepthPackets),
            ("deq_qdepth_pkts", 19, Intrinsic::DeqQueueDepthPackets),
            ("pkt_length", 16, Intrinsic::PacketLength),
            ("deq_timedelta", 32, Intrinsic::QueueDelay),
            ("enq_congest_stat", 2, Intrinsic::EnqCongestStat),
            ("egress_rid", 16, Intrinsic::ReplicationId),
            ("deflection_flag", 1, Intrinsic::Deflected),
        ],
    },
    IntrinsicType {
        name: "egress_intrinsic_metadata_from_parser_t",
        gress: Gress::Egress,
        fields: &[
            ("global_tstamp", 48, Intrinsic::GlobalTimestamp),
            ("parser_err", 16, Intrinsic::ParserError),
        ],
    },
    IntrinsicType {
        name: "egress_intrinsic_metadata_for_deparser_t",
        gress: Gress::Egress,
        fields: &[
            ("drop_ctl", 3, Intrinsic::DropCtl),
            ("mirror_session", 10, Intrinsic::MirrorSession),
            ("mtu_trunc_len", 14, Intrinsic::MirrorTruncateBytes),
            ("adv_flow_ctl", 32, Intrinsic::AdvFlowCtl),
        ],
    },
];

/// Whether the program may write this intrinsic (a request to the chip) rather than only read
/// it (a value the chip provides). Kept here, beside the field table, so the language's
/// read-only rule is one list.
pub fn is_writable(i: Intrinsic) -> bool {
    matches!(
        i,
        Intrinsic::UcastEgressPort
            | Intrinsic::UcastEgressPortValid
            | Intrinsic::QueueId
            | Intrinsic::DropCtl
            | Intrinsic::McastGroup
            | Intrinsic::DeflectOnDrop
            | Intrinsic::IngressCos
            | Intrinsic::BypassEgress
            | Intrinsic::MirrorSession
            | Intrinsic::MirrorTruncateBytes
            | Intrinsic::Recirculate
            | Intrinsic::AdvFlowCtl
            | Intrinsic::PacketColor
    )
}

/// Types of TNA that name features this model does not have; using one is an error that
/// names the feature and what to use instead.
pub const NOT_YET: &[(&str, &str)] = &[(
    "ghost_intrinsic_metadata_t",
    "the ghost thread as a program block; read the published queue depths at ingress with \
     `QueueDepth() qd;` and `qd.read(port, qid)`",
)];

/// The intrinsic type called `name`.
pub fn intrinsic_type(name: &str) -> Option<&'static IntrinsicType> {
    INTRINSIC_TYPES.iter().find(|t| t.name == name)
}

/// Extern object types that appear only as block parameters.
pub const PACKET_IN: &str = "packet_in";
/// See [`PACKET_IN`].
pub const PACKET_OUT: &str = "packet_out";
/// The deparser checksum extern.
pub const CHECKSUM: &str = "Checksum";
/// The deparser's mirror extern (`Mirror() m; m.emit(hdr.h);`): headers that start every
/// mirrored copy (TNA's mirror header), before the deparsed packet.
pub const MIRROR: &str = "Mirror";
/// `Register<T, I>(size[, init])`.
pub const REGISTER: &str = "Register";
/// `RegisterAction<T, I, U>(register) name = { void apply(inout T value, out U rv) {...} };`
pub const REGISTER_ACTION: &str = "RegisterAction";
/// `MinMaxAction<T, I, U>(register) name = { void apply(inout bit<128> value, out U rv, out U
/// lane) { rv = this.min8(value, mask, lane, postmod); } };` (T2NA; the JBay min/max unit).
pub const MINMAX_ACTION: &str = "MinMaxAction";
/// `Meter<I>(size, MeterType_t.BYTES | PACKETS)`.
pub const METER: &str = "Meter";
/// `Counter<W, I>(size, CounterType_t.X)`.
pub const COUNTER: &str = "Counter";
/// `DirectCounter<W>(CounterType_t.X)`, attached with the table property `counters`.
pub const DIRECT_COUNTER: &str = "DirectCounter";
/// `Hash<W>(HashAlgorithm_t.X[, seed])`.
pub const HASH: &str = "Hash";
/// `Random<W>()`.
pub const RANDOM: &str = "Random";
/// `QueueDepth()`, ingress only (a model-specific extern, not in TNA): `qd.read(port, qid)`
/// is the bit<19> depth in cells of that queue as the TM last published it to ingress
/// (Tofino2's ghost thread, which TNA exposes as a `ghost` control block instead).
pub const QUEUE_DEPTH: &str = "QueueDepth";
/// The pipeline package: six blocks.
pub const PIPELINE: &str = "Pipeline";
/// The top-level package: one pipeline.
pub const SWITCH: &str = "Switch";
/// The action every table may name, which does nothing.
pub const NO_ACTION: &str = "NoAction";

/// The six positions of a `Pipeline(...)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// A parser.
    Parser,
    /// A match-action control.
    Control,
    /// A deparser control.
    Deparser,
}

/// `Pipeline(...)` arguments in order.
pub const PIPELINE_ROLES: [(Gress, Role); 6] = [
    (Gress::Ingress, Role::Parser),
    (Gress::Ingress, Role::Control),
    (Gress::Ingress, Role::Deparser),
    (Gress::Egress, Role::Parser),
    (Gress::Egress, Role::Control),
    (Gress::Egress, Role::Deparser),
];

/// Name of a gress as used in messages.
pub fn gress_name(g: Gress) -> &'static str {
    match g {
        Gress::Ingress => "ingress",
        Gress::Egress => "egress",
    }
}
