//! The parser as a program: states that extract headers and set metadata, and transitions
//! that select on extracted fields or lookahead bits.

use super::layout::{FieldId, HeaderId};
use serde::{Deserialize, Serialize};

/// Index into [`ParserProgram::states`].
pub type StateId = u16;

/// The parser: a state machine over the packet's bytes.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParserProgram {
    /// All states.
    pub states: Vec<ParserState>,
    /// The first state.
    pub start: StateId,
    /// What happens to a packet the parser fails on.
    #[serde(default)]
    pub on_error: ParserErrorPolicy,
}

/// What the chip does with a packet whose parse failed (rejected, truncated, too deep).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum ParserErrorPolicy {
    /// Drop it and count the error.
    #[default]
    Drop,
    /// Count the error, set [`crate::program::Intrinsic::ParserError`] and run the control on what was
    /// extracted; the unparsed bytes stay payload.
    Continue,
}

/// One parser state: extract headers, then choose the next state.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParserState {
    /// Source name of the state.
    pub name: String,
    /// What the state does, in order.
    pub ops: Vec<ParserOp>,
    /// Where it goes next.
    pub transition: Transition,
}

/// A parser action.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ParserOp {
    /// Copy the header's bytes at the cursor into its fields, mark it valid and advance.
    Extract(HeaderId),
    /// Skip bits (a whole number of bytes) without extracting them.
    Advance(u32),
    /// Write a constant into a field (metadata initialisation).
    SetConst {
        /// Destination field.
        field: FieldId,
        /// Value (truncated to the field's width).
        value: u128,
    },
}

/// The end of a parser state.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Transition {
    /// Go to a fixed next step.
    Direct(Next),
    /// Match a key built from fields and lookahead bits against cases in order.
    Select {
        /// Key parts, concatenated most significant first.
        keys: Vec<SelectKey>,
        /// Cases tried in order; the first match wins.
        cases: Vec<SelectCase>,
        /// Taken when no case matches.
        default: Next,
    },
}

/// Where a parser state goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Next {
    /// Stop parsing; the rest of the packet is payload.
    Accept,
    /// Stop parsing and take the parser-error path.
    Reject,
    /// Continue in a state.
    State(StateId),
}

/// One part of a select key.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum SelectKey {
    /// Bits `lo ..= hi` of an already extracted field.
    Field {
        /// The field.
        field: FieldId,
        /// Highest bit (inclusive).
        hi: u16,
        /// Lowest bit.
        lo: u16,
    },
    /// Bits of the packet ahead of the cursor, not consumed.
    Lookahead {
        /// Offset from the cursor in bits.
        offset_bits: u32,
        /// Number of bits (1..=128).
        width: u16,
    },
}

/// A select case pattern over the concatenated key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum CasePattern {
    /// Matches when `key & mask == value & mask` (an exact value has an all-ones mask).
    Masked {
        /// Value to compare.
        value: u128,
        /// Bits that take part.
        mask: u128,
    },
    /// Matches when `lo <= key <= hi`.
    Range {
        /// Lowest matching key.
        lo: u128,
        /// Highest matching key.
        hi: u128,
    },
}

/// A case of a select transition.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SelectCase {
    /// What the key must match.
    pub pattern: CasePattern,
    /// Where to go on a match.
    pub next: Next,
}
