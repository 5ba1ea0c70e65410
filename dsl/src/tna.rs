//! The built-in architecture (TNA-like): intrinsic metadata types, their fields and the
//! chip signals they stand for, and the roles of the six blocks of a `Pipeline`.
//!
//! Programs do not declare these types (there is no `#include <tna.p4>`); the compiler knows
//! them, and only the fields listed here exist. A field's [`Intrinsic`] says whether the chip
//! writes it (read-only to the program) or reads it.

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
pub const INTRINSIC_TYPES: &[IntrinsicType] = &[
    IntrinsicType {
        name: "ingress_intrinsic_metadata_t",
        gress: Gress::Ingress,
        fields: &[
            ("ingress_port", 9, Intrinsic::IngressPort),
            ("ingress_mac_tstamp", 48, Intrinsic::IngressMacTimestamp),
        ],
    },
    IntrinsicType {
        name: "ingress_intrinsic_metadata_from_parser_t",
        gress: Gress::Ingress,
        fields: &[("global_tstamp", 48, Intrinsic::GlobalTimestamp)],
    },
    IntrinsicType {
        name: "ingress_intrinsic_metadata_for_tm_t",
        gress: Gress::Ingress,
        fields: &[
            ("ucast_egress_port", 9, Intrinsic::UcastEgressPort),
            ("qid", 7, Intrinsic::QueueId),
        ],
    },
    IntrinsicType {
        name: "ingress_intrinsic_metadata_for_deparser_t",
        gress: Gress::Ingress,
        fields: &[("drop_ctl", 3, Intrinsic::DropCtl)],
    },
    IntrinsicType {
        name: "egress_intrinsic_metadata_t",
        gress: Gress::Egress,
        fields: &[
            ("egress_port", 9, Intrinsic::EgressPort),
            ("egress_qid", 7, Intrinsic::EgressQueue),
            ("enq_qdepth", 19, Intrinsic::EnqQueueDepthCells),
            ("deq_qdepth", 19, Intrinsic::DeqQueueDepthCells),
            ("pkt_length", 16, Intrinsic::PacketLength),
            ("deq_timedelta", 32, Intrinsic::QueueDelay),
        ],
    },
    IntrinsicType {
        name: "egress_intrinsic_metadata_from_parser_t",
        gress: Gress::Egress,
        fields: &[("global_tstamp", 48, Intrinsic::GlobalTimestamp)],
    },
    IntrinsicType {
        name: "egress_intrinsic_metadata_for_deparser_t",
        gress: Gress::Egress,
        fields: &[("drop_ctl", 3, Intrinsic::DropCtl)],
    },
];

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
