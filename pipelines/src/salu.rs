//! Register arrays and the stateful ALU: one read-modify-write of one element per packet.
//!
//! Why a separate unit: a register's element is read, updated and written back by the
//! stateful ALU beside the SRAM in a single pass, and what that ALU can do per packet is
//! small and fixed (a few comparisons, a few predicated updates, a few predicated outputs;
//! the profile's `salu` limits, enforced by the verifier). Modelling exactly that shape,
//! rather than arbitrary code, keeps the model honest about what a program can do.
//!
//! One execution, for element `i` (the index is taken modulo the array size by the caller):
//! 1. `old = reg[i]`;
//! 2. each condition `k` compares two operands (unsigned, at the register's width) and sets
//!    bit `k` of the outcome vector;
//! 3. the first update whose predicate holds for the outcome vector computes `new`
//!    (an ALU operation at the register's width); if none holds, `new = old`;
//! 4. the first output whose predicate holds gives the value returned to the PHV (none: 0);
//! 5. `reg[i] = new`.
//!
//! PHV operands are read as the PHV was before the action (like every VLIW operation) and
//! truncated to the register's width, as the ALU's input crossbar is.

use crate::alu::alu;
use crate::phv::mask;
use crate::program::{MinMax, SaluOperand, SaluValue, StatefulAlu};

/// A register array's elements. Elements are at most 64 bits wide (the verifier checks the
/// program's widths against the profile, whose widest is 32 bits today).
#[derive(Clone, Debug)]
pub struct RegisterBank {
    width: u8,
    values: Vec<u64>,
}

impl RegisterBank {
    /// `size` elements of `width` bits, all `init` (truncated to the width).
    pub fn new(size: u32, width: u8, init: u128) -> RegisterBank {
        RegisterBank {
            width,
            values: vec![(init & mask(width as u32)) as u64; size as usize],
        }
    }

    /// Element width in bits.
    pub fn width(&self) -> u8 {
        self.width
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether the array has no elements.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Element `i`.
    pub fn read(&self, i: usize) -> u64 {
        self.values[i]
    }

    /// Set element `i`; `Err` if the value does not fit the width.
    pub fn write(&mut self, i: usize, v: u128) -> Result<(), String> {
        if v > mask(self.width as u32) {
            return Err(format!(
                "value {v} does not fit a {}-bit register element",
                self.width
            ));
        }
        self.values[i] = v as u64;
        Ok(())
    }

    /// All elements.
    pub fn values(&self) -> &[u64] {
        &self.values
    }
}

/// What one execution did, for traces and tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SaluResult {
    /// Element before.
    pub old: u64,
    /// Element after.
    pub new: u64,
    /// Condition outcome vector.
    pub outcomes: u8,
    /// Value returned to the PHV.
    pub output: u128,
    /// The lane a min/max program selected (0 otherwise).
    pub lane: u8,
}

/// Lanes of one SRAM word for elements of `width` bits, if the min/max unit takes them.
pub fn minmax_lanes(width: u8) -> Option<u16> {
    matches!(width, 8 | 16).then(|| MinMax::WORD_BITS / width as u16)
}

/// Run `salu` on element `index` of `reg` (for a min/max program, on word `index`: the
/// caller takes it modulo [`RegisterBank::len`] / lanes); `field(f)` reads PHV field `f`
/// (pre-action).
#[inline]
pub fn execute(
    salu: &StatefulAlu,
    reg: &mut RegisterBank,
    index: usize,
    field: impl Fn(u16) -> u128,
) -> SaluResult {
    if let Some(mm) = &salu.minmax {
        return execute_minmax(mm, reg, index, field);
    }
    let w = reg.width as u16;
    let m = mask(w as u32);
    let old = reg.values[index] as u128;
    let val = |o: SaluOperand| {
        (match o {
            SaluOperand::Register => old,
            SaluOperand::Field(f) => field(f),
            SaluOperand::Const(c) => c,
        }) & m
    };
    let mut outcomes = 0u8;
    for (k, c) in salu.conditions.iter().enumerate() {
        if c.op.holds(val(c.a), val(c.b)) {
            outcomes |= 1 << k;
        }
    }
    let new = salu
        .updates
        .iter()
        .find(|u| u.when.holds(outcomes))
        .map_or(old, |u| alu(u.alu, val(u.a), val(u.b), w));
    let output = salu
        .outputs
        .iter()
        .find(|o| o.when.holds(outcomes))
        .map_or(0, |o| match o.value {
            SaluValue::Old => old,
            SaluValue::New => new,
            SaluValue::Operand(x) => val(x),
            SaluValue::Predicate => outcomes as u128,
        });
    reg.values[index] = new as u64;
    SaluResult {
        old: old as u64,
        new: new as u64,
        outcomes,
        output,
        lane: 0,
    }
}

/// The min/max unit on word `word` (see [`MinMax`] for the semantics and assumptions).
fn execute_minmax(
    mm: &MinMax,
    reg: &mut RegisterBank,
    word: usize,
    field: impl Fn(u16) -> u128,
) -> SaluResult {
    let w = reg.width;
    // The verifier only loads widths the unit takes.
    let lanes = minmax_lanes(w).map_or(1, usize::from);
    let lane_max = mask(w as u32) as u64;
    let operand = |o: SaluOperand| match o {
        SaluOperand::Register => 0,
        SaluOperand::Field(f) => field(f),
        SaluOperand::Const(c) => c,
    };
    let enabled = operand(mm.mask);
    let base = word * lanes;
    let lane_values = &mut reg.values[base..base + lanes];
    let mut best: Option<(usize, u64)> = None;
    for (l, &v) in lane_values.iter().enumerate() {
        if enabled >> l & 1 == 0 {
            continue;
        }
        let better = match best {
            None => true,
            Some((_, b)) => (mm.max && v > b) || (!mm.max && v < b),
        };
        if better {
            best = Some((l, v));
        }
    }
    let Some((lane, value)) = best else {
        let none = if mm.max { 0 } else { lane_max };
        return SaluResult {
            old: none,
            new: none,
            outcomes: 0,
            output: none as u128,
            lane: 0,
        };
    };
    // Two's complement at the lane width: the top bit set means subtract.
    let m = operand(mm.postmod) as u64 & lane_max;
    let new = if m >> (w - 1) & 1 == 1 {
        value.saturating_sub((lane_max - m) + 1)
    } else {
        value.saturating_add(m).min(lane_max)
    };
    lane_values[lane] = new;
    SaluResult {
        old: value,
        new,
        outcomes: 0,
        output: value as u128,
        lane: lane as u8,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::{AluOp, CmpOp, Predicate, SaluCond, SaluOutput, SaluUpdate};

    /// Predicate "condition 0 true": outcome vectors 1 and 3 (of 0..4), bits 1 and 3.
    const C0: Predicate = Predicate(0b1010_1010_1010_1010);
    /// Predicate "condition 0 false".
    const NOT_C0: Predicate = Predicate(!0b1010_1010_1010_1010);

    /// A saturating counter with a threshold flag: `if (reg < limit) reg = reg + 1;` and
    /// return the old value; conditions on a field.
    fn capped_counter() -> StatefulAlu {
        StatefulAlu {
            name: "capped".into(),
            register: 0,
            conditions: vec![SaluCond {
                a: SaluOperand::Register,
                op: CmpOp::Lt,
                b: SaluOperand::Field(7),
            }],
            updates: vec![SaluUpdate {
                when: C0,
                alu: AluOp::Add,
                a: SaluOperand::Register,
                b: SaluOperand::Const(1),
            }],
            outputs: vec![SaluOutput {
                when: Predicate::ALWAYS,
                value: SaluValue::Old,
            }],
            minmax: None,
        }
    }

    #[test]
    fn read_modify_write_follows_the_predicates() {
        let mut r = RegisterBank::new(4, 8, 0);
        let s = capped_counter();
        let limit = |_f: u16| 2u128;
        let a = execute(&s, &mut r, 1, limit);
        assert_eq!((a.old, a.new, a.outcomes, a.output), (0, 1, 1, 0));
        let b = execute(&s, &mut r, 1, limit);
        assert_eq!((b.old, b.new, b.output), (1, 2, 1));
        // 2 < 2 is false: no update applies, the element keeps its value.
        let c = execute(&s, &mut r, 1, limit);
        assert_eq!((c.old, c.new, c.outcomes, c.output), (2, 2, 0, 2));
        assert_eq!(r.values(), &[0, 2, 0, 0]);
    }

    #[test]
    fn second_update_and_outputs_by_predicate() {
        // if (reg == f) { reg = 0; return 1 (predicate) } else { reg = reg ^ f; return new }
        let s = StatefulAlu {
            name: "x".into(),
            register: 0,
            conditions: vec![SaluCond {
                a: SaluOperand::Register,
                op: CmpOp::Eq,
                b: SaluOperand::Field(0),
            }],
            updates: vec![
                SaluUpdate {
                    when: C0,
                    alu: AluOp::Set,
                    a: SaluOperand::Const(0),
                    b: SaluOperand::Const(0),
                },
                SaluUpdate {
                    when: NOT_C0,
                    alu: AluOp::Xor,
                    a: SaluOperand::Register,
                    b: SaluOperand::Field(0),
                },
            ],
            outputs: vec![
                SaluOutput {
                    when: C0,
                    value: SaluValue::Predicate,
                },
                SaluOutput {
                    when: NOT_C0,
                    value: SaluValue::New,
                },
            ],
            minmax: None,
        };
        let mut r = RegisterBank::new(1, 16, 0x00ff);
        // 0x00ff != 0x0f0f: reg = 0x00ff ^ 0x0f0f = 0x0ff0, returned.
        let a = execute(&s, &mut r, 0, |_| 0x0f0f);
        assert_eq!((a.new, a.output), (0x0ff0, 0x0ff0));
        // Equal: reg = 0; returns the outcome vector, 1.
        let b = execute(&s, &mut r, 0, |_| 0x0ff0);
        assert_eq!((b.new, b.output), (0, 1));
        // PHV operands are truncated to the register width: 0x1_0000 reads as 0.
        let c = execute(&s, &mut r, 0, |_| 0x1_0000);
        assert_eq!(c.outcomes, 1);
    }

    /// A min8 claim: the least-used enabled lane, incremented; the same unit releases a lane
    /// by enabling only it with postmod -1.
    fn claim() -> StatefulAlu {
        StatefulAlu {
            name: "claim".into(),
            register: 0,
            conditions: vec![],
            updates: vec![],
            outputs: vec![SaluOutput {
                when: Predicate::ALWAYS,
                value: SaluValue::Old,
            }],
            minmax: Some(MinMax {
                max: false,
                mask: SaluOperand::Field(0),
                postmod: SaluOperand::Field(1),
            }),
        }
    }

    #[test]
    fn min8_picks_the_lowest_enabled_lane_and_post_modifies_it() {
        // Two words of 16 lanes; word 1 is elements 16..32.
        let mut r = RegisterBank::new(32, 8, 0);
        let s = claim();
        let phv = |mask: u128, post: u128| move |f: u16| if f == 0 { mask } else { post };
        // Lanes 0..3 enabled, all 0: ties go to the lowest lane, which becomes 1.
        let a = execute(&s, &mut r, 1, phv(0b1111, 1));
        assert_eq!((a.output, a.lane, a.new), (0, 0, 1));
        let b = execute(&s, &mut r, 1, phv(0b1111, 1));
        assert_eq!((b.output, b.lane), (0, 1));
        assert_eq!(&r.values()[16..20], &[1, 1, 0, 0]);
        assert!(r.values()[..16].iter().all(|&v| v == 0), "word 0 untouched");
        // Release lane 0 (postmod 0xff = -1), then it is the least used again.
        let c = execute(&s, &mut r, 1, phv(0b0001, 0xff));
        assert_eq!((c.output, c.lane, c.new), (1, 0, 0));
        assert_eq!(execute(&s, &mut r, 1, phv(0b1111, 0)).lane, 0);
        // -1 on 0 saturates; +1 on 255 saturates.
        assert_eq!(execute(&s, &mut r, 0, phv(0b100, 0xff)).new, 0);
        r.write(5, 255).unwrap();
        assert_eq!(execute(&s, &mut r, 0, phv(1 << 5, 1)).new, 255);
        // No lane enabled: the lane maximum, lane 0, nothing written.
        let before = r.values().to_vec();
        let d = execute(&s, &mut r, 0, phv(0, 1));
        assert_eq!((d.output, d.lane), (255, 0));
        assert_eq!(r.values(), &before[..]);
    }

    #[test]
    fn max16_takes_eight_lanes_of_a_word() {
        let mut r = RegisterBank::new(16, 16, 0);
        for (i, v) in [3u128, 9, 9, 1, 0, 0, 0, 7].into_iter().enumerate() {
            r.write(8 + i, v).unwrap();
        }
        let s = StatefulAlu {
            minmax: Some(MinMax {
                max: true,
                mask: SaluOperand::Const(0xff),
                postmod: SaluOperand::Const(0xfff8), // -8
            }),
            ..claim()
        };
        let a = execute(&s, &mut r, 1, |_| 0);
        assert_eq!((a.output, a.lane, a.new), (9, 1, 1));
        assert_eq!(minmax_lanes(16), Some(8));
        assert_eq!(minmax_lanes(8), Some(16));
        assert_eq!(minmax_lanes(32), None);
    }

    #[test]
    fn writes_must_fit_the_width() {
        let mut r = RegisterBank::new(2, 8, 0x1ff);
        assert_eq!(r.read(0), 0xff);
        assert!(r.write(1, 256).is_err());
        r.write(1, 255).unwrap();
        assert_eq!(r.read(1), 255);
    }
}
