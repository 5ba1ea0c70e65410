//! What an ALU computes: operands, the operations of a VLIW slot, comparisons and gateway
//! conditions. Shared by actions, gateways and the stateful ALUs.

use super::layout::FieldId;
use serde::{Deserialize, Serialize};

/// A source operand of an ALU operation or a gateway comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Operand {
    /// A PHV field.
    Field(FieldId),
    /// A constant (from the instruction's immediate or action data RAM).
    Const(u128),
    /// An action parameter (action data), by index.
    Param(u8),
    /// Bits `hi ..= lo` of a field, as an unsigned value.
    Slice {
        /// The field.
        field: FieldId,
        /// Highest bit (inclusive).
        hi: u16,
        /// Lowest bit.
        lo: u16,
    },
}

/// The ALU operations of a VLIW slot (unsigned arithmetic modulo the destination width).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum AluOp {
    /// `dst = a`.
    Set,
    /// `dst = a + b`.
    Add,
    /// `dst = a - b`.
    Sub,
    /// `dst = a |+| b` (saturating at the destination's maximum).
    AddSat,
    /// `dst = a |-| b` (saturating at zero).
    SubSat,
    /// `dst = a & b`.
    And,
    /// `dst = a | b`.
    Or,
    /// `dst = a ^ b`.
    Xor,
    /// `dst = ~a`.
    Not,
    /// `dst = a << b`.
    Shl,
    /// `dst = a >> b`.
    Shr,
    /// `dst = min(a, b)`.
    Min,
    /// `dst = max(a, b)`.
    Max,
}

/// One VLIW operation writing one field.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Op {
    /// The field written.
    pub dst: FieldId,
    /// Only bits `hi ..= lo` of `dst` are written (the others keep their value): the
    /// deposit-field form of the instruction.
    #[serde(default)]
    pub dst_slice: Option<(u16, u16)>,
    /// The operation.
    pub alu: AluOp,
    /// First operand.
    pub a: Operand,
    /// Second operand (ignored by `Set` and `Not`).
    pub b: Operand,
}

/// Comparison operators of a gateway.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum CmpOp {
    /// `==`.
    Eq,
    /// `!=`.
    Ne,
    /// `<`.
    Lt,
    /// `<=`.
    Le,
    /// `>`.
    Gt,
    /// `>=`.
    Ge,
}

impl CmpOp {
    /// The operator as P4 writes it (for traces, graphs and reports).
    pub fn symbol(self) -> &'static str {
        match self {
            CmpOp::Eq => "==",
            CmpOp::Ne => "!=",
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
        }
    }

    /// `a op b`, unsigned (gateways and stateful-ALU predicates compare alike).
    #[inline(always)]
    pub fn holds(self, a: u128, b: u128) -> bool {
        match self {
            CmpOp::Eq => a == b,
            CmpOp::Ne => a != b,
            CmpOp::Lt => a < b,
            CmpOp::Le => a <= b,
            CmpOp::Gt => a > b,
            CmpOp::Ge => a >= b,
        }
    }
}

/// A gateway condition: comparisons combined with and/or/not.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Cond {
    /// Always true.
    True,
    /// A comparison of two operands (unsigned).
    Cmp {
        /// Left operand.
        a: Operand,
        /// Operator.
        op: CmpOp,
        /// Right operand.
        b: Operand,
    },
    /// Both hold.
    And(Box<Cond>, Box<Cond>),
    /// Either holds.
    Or(Box<Cond>, Box<Cond>),
    /// Negation.
    Not(Box<Cond>),
}
