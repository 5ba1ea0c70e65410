//! What every part of the checker applies: the types, the rule that a value fits its width
//! (and how a mismatch reads), and the rule that a name is declared once.

use std::collections::HashSet;

use pipelines::phv::mask;

use crate::ast::*;
use crate::error::{err, CompileError, ErrorKind, Result};
use crate::tna::IntrinsicType;

/// A resolved type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ty {
    /// `bit<N>`.
    Bits(u16),
    /// `bool` (one bit in the PHV).
    Bool,
    /// A header type, by name.
    Header(String),
    /// A user struct type, by name.
    Struct(String),
    /// A built-in intrinsic metadata struct.
    Intrinsic(&'static IntrinsicType),
    /// `packet_in` / `packet_out`.
    Packet,
}

impl Ty {
    /// Width in bits of a scalar type.
    pub(super) fn scalar_width(&self) -> Option<u16> {
        match self {
            Ty::Bits(w) => Some(*w),
            Ty::Bool => Some(1),
            _ => None,
        }
    }
}

/// Every name of a list declared once.
pub(super) fn check_unique<'x>(names: impl Iterator<Item = &'x Ident>) -> Result<()> {
    let mut seen = HashSet::new();
    for n in names {
        if !seen.insert(&n.name) {
            return Err(err(
                ErrorKind::Duplicate,
                n.span,
                format!("`{}` is declared twice", n.name),
            ));
        }
    }
    Ok(())
}

/// `v`'s low `w` bits.
pub(super) fn truncate(v: u128, w: u16) -> u128 {
    v & mask(w as u32)
}

/// A constant that must fit `w` bits (a literal is never silently truncated).
pub(super) fn check_fits(v: u128, w: u16, span: Span) -> Result<()> {
    if truncate(v, w) != v {
        return Err(err(
            ErrorKind::Type,
            span,
            format!("constant {v} does not fit in bit<{w}>"),
        ));
    }
    Ok(())
}

/// The error for an operand of the wrong width: widths never change implicitly.
pub(super) fn width_mismatch(span: Span, what: &str, have: u16, want: u16) -> CompileError {
    err(
        ErrorKind::Type,
        span,
        format!("`{what}` is bit<{have}> but bit<{want}> is expected (use a cast)"),
    )
}
