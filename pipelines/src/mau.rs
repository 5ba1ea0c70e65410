//! The match-action stages: walk the control flow through gateways and tables, running the
//! actions that match.
//!
//! Nodes are visited in stage order (the verifier guarantees that every path goes forward
//! in stages), so walking the graph gives the same result as the stages running one after
//! another, each seeing the PHV the previous stage produced. An action's operations read
//! the PHV as it was before any of them writes: one VLIW instruction, executed by the
//! per-container ALUs in parallel.

use crate::phv::{mask, Phv};
use crate::program::{
    Action, AluOp, CmpOp, Cond, ControlProgram, Node, Operand, PhvLayout, TableNext,
};
use crate::table::{KeyValues, TableState};
use smallvec::SmallVec;

/// Statistics of one pass through the control, for traces and counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ControlStats {
    /// Tables applied.
    pub tables_applied: u32,
    /// Tables that hit an entry.
    pub hits: u32,
}

#[inline]
fn operand(o: Operand, args: &[u128], layout: &PhvLayout, phv: &Phv) -> u128 {
    match o {
        Operand::Field(f) => phv.get(&layout.fields[f as usize]),
        Operand::Const(c) => c,
        Operand::Param(i) => args[i as usize],
        Operand::Slice { field, hi, lo } => {
            (phv.get(&layout.fields[field as usize]) >> lo) & mask((hi - lo + 1) as u32)
        }
    }
}

/// The result of one ALU operation on `width`-bit unsigned values.
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

/// Run one action with its action data.
pub fn run_action(action: &Action, args: &[u128], layout: &PhvLayout, phv: &mut Phv) {
    let mut results: SmallVec<[(u16, u128); 16]> = SmallVec::new();
    for op in &action.ops {
        let a = operand(op.a, args, layout, phv);
        let b = operand(op.b, args, layout, phv);
        let dst = &layout.fields[op.dst as usize];
        let v = match op.dst_slice {
            None => alu(op.alu, a, b, dst.width),
            // Deposit-field: the ALU works at the slice's width and the other bits keep
            // their value.
            Some((hi, lo)) => {
                let m = mask((hi - lo + 1) as u32) << lo;
                let r = alu(op.alu, a, b, hi - lo + 1) << lo;
                (phv.get(dst) & !m) | r
            }
        };
        results.push((op.dst, v));
    }
    for (dst, v) in results {
        phv.set(&layout.fields[dst as usize], v);
    }
}

fn eval(c: &Cond, layout: &PhvLayout, phv: &Phv) -> bool {
    match c {
        Cond::True => true,
        Cond::Cmp { a, op, b } => {
            let (a, b) = (operand(*a, &[], layout, phv), operand(*b, &[], layout, phv));
            match op {
                CmpOp::Eq => a == b,
                CmpOp::Ne => a != b,
                CmpOp::Lt => a < b,
                CmpOp::Le => a <= b,
                CmpOp::Gt => a > b,
                CmpOp::Ge => a >= b,
            }
        }
        Cond::And(x, y) => eval(x, layout, phv) && eval(y, layout, phv),
        Cond::Or(x, y) => eval(x, layout, phv) || eval(y, layout, phv),
        Cond::Not(x) => !eval(x, layout, phv),
    }
}

/// Run the control over a parsed PHV.
pub fn run_control(
    control: &ControlProgram,
    layout: &PhvLayout,
    tables: &[TableState],
    phv: &mut Phv,
) -> ControlStats {
    let mut stats = ControlStats::default();
    let mut node = control.entry;
    while let Some(n) = node {
        node = match n {
            Node::Gateway(g) => {
                let gw = &control.gateways[g as usize];
                if eval(&gw.cond, layout, phv) {
                    gw.on_true
                } else {
                    gw.on_false
                }
            }
            Node::Table(t) => {
                let table = &control.tables[t as usize];
                let key: KeyValues = table
                    .keys
                    .iter()
                    .map(|k| phv.get(&layout.fields[k.field as usize]))
                    .collect();
                let found = tables[t as usize].lookup(&key);
                let hit = found.is_some();
                let call = found.unwrap_or(&table.default_action);
                run_action(
                    &control.actions[call.action as usize],
                    &call.args,
                    layout,
                    phv,
                );
                stats.tables_applied += 1;
                stats.hits += hit as u32;
                match &table.next {
                    TableNext::Always(n) => *n,
                    TableNext::HitMiss { hit: h, miss: m } => {
                        if hit {
                            *h
                        } else {
                            *m
                        }
                    }
                    TableNext::ByAction { cases, default } => cases
                        .iter()
                        .find(|(a, _)| *a == call.action)
                        .map_or(*default, |&(_, n)| n),
                }
            }
        };
    }
    stats
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
