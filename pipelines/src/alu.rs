//! The ALU of a VLIW slot: one operation on unsigned values, modulo the destination width.
//!
//! Its own module because two units compute with it: the MAU's per-container action ALUs
//! ([`crate::mau`]) and the stateful ALU's update expressions ([`crate::salu`]), which on
//! the chip are the same arithmetic at different widths. Keeping it apart from both means
//! neither imports the other.

use crate::phv::mask;
use crate::program::AluOp;

/// The result of one ALU operation on `width`-bit unsigned values.
#[inline]
pub fn alu(op: AluOp, a: u128, b: u128, width: u16) -> u128 {
    let m = mask(width as u32);
    let (a, b) = (a & m, b);
    let r = match op {
        AluOp::Set => a,
        AluOp::Add => a.wrapping_add(b),
        AluOp::Sub => a.wrapping_sub(b),
        AluOp::AddSat => a.saturating_add(b & m).min(m),
        AluOp::SubSat => a.saturating_sub(b & m),
        AluOp::And => a & b,
        AluOp::Or => a | b,
        AluOp::Xor => a ^ b,
        AluOp::Not => !a,
        AluOp::Shl => a.checked_shl(b.min(128) as u32).unwrap_or(0),
        AluOp::Shr => a.checked_shr(b.min(128) as u32).unwrap_or(0),
        AluOp::Min => a.min(b & m),
        AluOp::Max => a.max(b & m),
    };
    r & m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alu_wraps_and_saturates_at_the_destination_width() {
        assert_eq!(alu(AluOp::Add, 250, 10, 8), 4);
        assert_eq!(alu(AluOp::AddSat, 250, 10, 8), 255);
        assert_eq!(alu(AluOp::Sub, 1, 2, 8), 255);
        assert_eq!(alu(AluOp::SubSat, 1, 2, 8), 0);
        assert_eq!(alu(AluOp::Not, 0x0f, 0, 8), 0xf0);
        assert_eq!(alu(AluOp::Shl, 0x81, 1, 8), 0x02);
        assert_eq!(alu(AluOp::Shr, 0x80, 200, 8), 0);
        assert_eq!(alu(AluOp::Min, 7, 3, 8), 3);
        assert_eq!(alu(AluOp::Max, 7, 3, 8), 7);
    }
}
