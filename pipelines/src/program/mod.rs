//! The executable program format: what a compiled program tells the pipe to do.
//!
//! A [`Program`] holds one [`GressProgram`] for ingress and one for egress. Each is a parser
//! (a state machine that extracts headers into PHV fields), a control (tables and gateways
//! placed in MAU stages, linked by next-table pointers) and a deparser (headers to emit and
//! checksums to recompute). Fields live in PHV containers at positions the compiler chose;
//! everything the pipe executes refers to fields by [`FieldId`], and every field maps to
//! container slices, so PHV use is explicit and checkable.
//!
//! The format is plain data (serde), so `asic compile --emit ir` can dump it as RON and a
//! program can be checked against a chip with [`crate::verify`] before it runs.
//!
//! One module per part, all re-exported here: `layout` (fields, headers, intrinsics),
//! `parser`, `operation` (operands, ALU operations, conditions), `externs`, `control` and
//! `deparser`.

mod control;
mod deparser;
mod externs;
mod layout;
mod operation;
mod parser;

pub use control::*;
pub use deparser::*;
pub use externs::*;
pub use layout::*;
pub use operation::*;
pub use parser::*;

use serde::{Deserialize, Serialize};

/// A compiled program: ingress and egress.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Program {
    /// Program name (from the source file).
    pub name: String,
    /// The ingress gress.
    pub ingress: GressProgram,
    /// The egress gress.
    pub egress: GressProgram,
}

/// Ingress or egress.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Gress {
    /// From the ingress MAC to the traffic manager.
    Ingress,
    /// From the traffic manager to the egress MAC.
    Egress,
}

/// One gress: parser, match-action control and deparser over one PHV layout.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GressProgram {
    /// Where every field lives in the PHV.
    pub phv: PhvLayout,
    /// The parser state machine.
    pub parser: ParserProgram,
    /// Tables, actions and gateways placed in stages.
    pub control: ControlProgram,
    /// Headers to emit and checksums to update.
    pub deparser: DeparserProgram,
}
