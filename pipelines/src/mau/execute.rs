//! Execution: the per-packet walk through the decoded control ([`run_control`]), running
//! each matched action as micro-ops or through the general VLIW path ([`run_action`]), with
//! the externs it drives. Both tell a [`GressTracer`] what they do ([`crate::trace`]; the
//! untraced walk passes [`crate::trace::NoTrace`], which compiles to nothing).

use super::decode::{ControlPlan, Gate, GateOperand, KeyRead, MicroOp, Src, Step, StepNext};
use super::externs::{ExternState, PacketCtx};
use crate::alu::alu;
use crate::phv::{mask, Phv};
use crate::program::{
    Action, AluOp, Cond, ControlProgram, ExternCall, ExternIndex, Op, Operand, PhvLayout,
};
use crate::salu::{execute, minmax_lanes};
use crate::table::{KeyValues, TableState};
use crate::trace::GressTracer;
use rand_core::Rng;
use smallvec::SmallVec;

/// Statistics of one pass through the control, for traces and counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ControlStats {
    /// Tables applied.
    pub tables_applied: u32,
    /// Tables that hit an entry.
    pub hits: u32,
}

#[inline(always)]
fn operand(o: &Operand, args: &[u128], layout: &PhvLayout, phv: &Phv) -> u128 {
    match *o {
        Operand::Field(f) => phv.get(&layout.fields[f as usize]),
        Operand::Const(c) => c,
        Operand::Param(i) => args[i as usize],
        Operand::Slice { field, hi, lo } => {
            (phv.get(&layout.fields[field as usize]) >> lo) & mask((hi - lo + 1) as u32)
        }
    }
}

#[inline]
#[allow(clippy::too_many_arguments)]
fn extern_index(
    i: ExternIndex,
    size: usize,
    args: &[u128],
    control: &ControlProgram,
    ext: &ExternState,
    layout: &PhvLayout,
    phv: &Phv,
    tracer: &mut impl GressTracer,
) -> usize {
    let v = match i {
        ExternIndex::Operand(o) => operand(&o, args, layout, phv),
        ExternIndex::Hash(h) => {
            let v = ext.hashes[h as usize].compute(&control.hashes[h as usize], layout, phv);
            tracer.hash(h, v);
            v
        }
    };
    (v % size.max(1) as u128) as usize
}

#[inline(always)]
fn src(s: Src, args: &[u128], phv: &Phv) -> u32 {
    match s {
        Src::Bits(b) => b.get(phv),
        Src::Imm(v) => v,
        Src::Param { index, shift } => (args[index as usize] >> shift) as u32,
    }
}

/// Run a hazard-free action's decoded operations in order. Inlined into each walk, traced
/// or not (a second caller would otherwise keep it out of line in the untraced one).
#[inline(always)]
pub(super) fn run_micro_ops(
    ops: &[MicroOp],
    action: &Action,
    args: &[u128],
    layout: &PhvLayout,
    phv: &mut Phv,
) {
    for m in ops {
        match *m {
            MicroOp::Set { dst, a } => {
                dst.set(phv, src(a, args, phv));
            }
            MicroOp::Narrow { dst, alu, a, b } => {
                let (a, b) = (src(a, args, phv), src(b, args, phv));
                let r = match alu {
                    AluOp::Add => a.wrapping_add(b),
                    AluOp::Sub => a.wrapping_sub(b),
                    AluOp::And => a & b,
                    AluOp::Or => a | b,
                    AluOp::Xor => a ^ b,
                    AluOp::Not => !a,
                    _ => unreachable!("decoded as narrow only for these"),
                };
                dst.set(phv, r);
            }
            MicroOp::SetField { dst, a } => {
                let v = operand(&a, args, layout, phv);
                phv.set(&layout.fields[dst as usize], v);
            }
            MicroOp::General(i) => {
                let op = &action.ops[i as usize];
                let (v, m) = op_result(op, args, layout, phv);
                write_result(op.dst, v, m, layout, phv);
            }
        }
    }
}

/// Run one action with its action data, and the externs it drives, for a table in `stage`.
#[allow(clippy::too_many_arguments)]
pub fn run_action(
    action: &Action,
    stage: u16,
    args: &[u128],
    control: &ControlProgram,
    layout: &PhvLayout,
    phv: &mut Phv,
    ext: &mut ExternState,
    pkt: &PacketCtx,
    tracer: &mut impl GressTracer,
) {
    // (field, value, bits written): written after every operation and extern has read.
    let mut results: SmallVec<[(u16, u128, u128); 16]> = SmallVec::new();
    for op in &action.ops {
        let (v, m) = op_result(op, args, layout, phv);
        results.push((op.dst, v, m));
    }
    for call in &action.externs {
        match *call {
            ExternCall::Stateful {
                salu,
                index,
                dst,
                lane_dst,
            } => {
                let s = &control.salus[salu as usize];
                let reg = &ext.registers[s.register as usize];
                // A min/max program addresses words of `lanes` elements.
                let lanes = match s.minmax {
                    Some(_) => minmax_lanes(reg.width()).unwrap_or(1) as usize,
                    None => 1,
                };
                let size = reg.len() / lanes;
                let i = extern_index(index, size, args, control, ext, layout, phv, tracer);
                let r = execute(s, &mut ext.registers[s.register as usize], i, |f| {
                    phv.get(&layout.fields[f as usize])
                });
                tracer.register(salu, i, r.old, r.new, r.output);
                if let Some(d) = dst {
                    results.push((d, r.output, u128::MAX));
                }
                if let Some(d) = lane_dst {
                    results.push((d, r.lane as u128, u128::MAX));
                }
            }
            ExternCall::Meter { meter, index, dst } => {
                let size = ext.meters[meter as usize].len();
                let i = extern_index(index, size, args, control, ext, layout, phv, tracer);
                let t = pkt.stage_time(control.meters[meter as usize].stage);
                let colour = ext.meters[meter as usize].color(i, t, pkt.bytes);
                tracer.meter(meter, i, colour);
                results.push((dst, colour as u128, u128::MAX));
            }
            ExternCall::Count { counter, index } => {
                let size = ext.counters[counter as usize].len();
                let i = extern_index(index, size, args, control, ext, layout, phv, tracer);
                ext.counters[counter as usize].count(i, pkt.bytes);
                tracer.counter(counter, i);
            }
            ExternCall::Hash { hash, dst } => {
                let v =
                    ext.hashes[hash as usize].compute(&control.hashes[hash as usize], layout, phv);
                tracer.hash(hash, v);
                results.push((dst, v, u128::MAX));
            }
            ExternCall::Random { dst } => {
                // One 64-bit draw per number, two for a destination wider than 64 bits:
                // the sequence depends only on the seed and the packets, never the host.
                let w = layout.fields[dst as usize].width;
                let lo = ext.rng.next_u64() as u128;
                let v = if w > 64 {
                    lo | (ext.rng.next_u64() as u128) << 64
                } else {
                    lo
                };
                tracer.random(dst, v);
                results.push((dst, v, u128::MAX));
            }
            ExternCall::QueueDepth { port, queue, dst } => {
                // Runtime values beyond the id widths read 0, like ports the chip lacks.
                let id = |o| u16::try_from(operand(&o, args, layout, phv)).ok();
                let d = match (id(port), id(queue)) {
                    (Some(p), Some(q)) => {
                        let d = pkt.depths.depth_cells(p, q, pkt.stage_time(stage));
                        tracer.queue_depth(p, Some(q), d as u128);
                        d
                    }
                    _ => 0,
                };
                let max = mask(layout.fields[dst as usize].width as u32);
                results.push((dst, (d as u128).min(max), u128::MAX));
            }
            ExternCall::EmptyQueues { port, dst } => {
                let w = layout.fields[dst as usize].width;
                let m = match u16::try_from(operand(&port, args, layout, phv)) {
                    Ok(p) => {
                        let m = pkt.depths.empty_queues(p, w, pkt.stage_time(stage));
                        tracer.queue_depth(p, None, m);
                        m
                    }
                    Err(_) => mask(w as u32),
                };
                results.push((dst, m & mask(w as u32), u128::MAX));
            }
        }
    }
    // By reference: moving the inline buffer out would copy all of it.
    for &(dst, v, m) in &results {
        write_result(dst, v, m, layout, phv);
    }
}

/// What one VLIW operation writes: (value, bits of the destination it writes).
#[inline]
pub(super) fn op_result(op: &Op, args: &[u128], layout: &PhvLayout, phv: &Phv) -> (u128, u128) {
    let a = operand(&op.a, args, layout, phv);
    let b = operand(&op.b, args, layout, phv);
    match op.dst_slice {
        None => (
            alu(op.alu, a, b, layout.fields[op.dst as usize].width),
            u128::MAX,
        ),
        // Deposit-field: the ALU works at the slice's width and the other bits keep
        // their value (disjoint slices of one field may be written by several ops).
        Some((hi, lo)) => {
            let m = mask((hi - lo + 1) as u32) << lo;
            (alu(op.alu, a, b, hi - lo + 1) << lo, m)
        }
    }
}

/// Write `v` into the bits `m` of field `dst` (all of it when `m` is all ones).
#[inline]
pub(super) fn write_result(dst: u16, v: u128, m: u128, layout: &PhvLayout, phv: &mut Phv) {
    let f = &layout.fields[dst as usize];
    let v = if m == u128::MAX {
        v
    } else {
        (phv.get(f) & !m) | (v & m)
    };
    phv.set(f, v);
}

pub(super) fn eval(c: &Cond, layout: &PhvLayout, phv: &Phv) -> bool {
    match c {
        Cond::True => true,
        Cond::Cmp { a, op, b } => {
            let (a, b) = (operand(a, &[], layout, phv), operand(b, &[], layout, phv));
            op.holds(a, b)
        }
        Cond::And(x, y) => eval(x, layout, phv) && eval(y, layout, phv),
        Cond::Or(x, y) => eval(x, layout, phv) || eval(y, layout, phv),
        Cond::Not(x) => !eval(x, layout, phv),
    }
}

/// Run the control over a parsed PHV. Never inlined: one function per tracer, so the
/// untraced gress keeps the shape it has without tracing (the walk apart from the parser and
/// deparser around it), which the measured instructions per hop depend on. The tracer is
/// taken by value: [`crate::trace::NoTrace`] is then no argument at all (a recording tracer
/// is a reference).
#[allow(clippy::too_many_arguments)]
#[inline(never)]
pub fn run_control<T: GressTracer>(
    control: &ControlProgram,
    plan: &ControlPlan,
    layout: &PhvLayout,
    tables: &mut [TableState],
    phv: &mut Phv,
    ext: &mut ExternState,
    pkt: &PacketCtx,
    mut tracer: T,
) -> ControlStats {
    let mut stats = ControlStats::default();
    // The stage of the last step traced (tracing only).
    let mut traced_stage = None;
    // `DONE` is past the last step.
    let mut at = plan.entry;
    while let Some(step) = plan.steps.get(at as usize) {
        if T::ON {
            let stage = match step {
                Step::Gate { id, .. } => control.gateways[*id as usize].stage,
                Step::Table { stage, .. } => *stage,
            };
            if traced_stage != Some(stage) {
                traced_stage = Some(stage);
                tracer.stage(stage, phv);
            }
        }
        at = match step {
            Step::Gate {
                gate,
                id,
                on_true,
                on_false,
            } => {
                let holds = match *gate {
                    Gate::BitsConst { a, op, b } => op.holds(a.get(phv) as u128, b),
                    Gate::Cmp(a, op, b) => op.holds(a.value(layout, phv), b.value(layout, phv)),
                    Gate::Cond => eval(&control.gateways[*id as usize].cond, layout, phv),
                };
                tracer.gateway(*id, holds);
                if holds {
                    *on_true
                } else {
                    *on_false
                }
            }
            Step::Table {
                id,
                stage,
                keys,
                next,
            } => {
                // One key is looked up as it is; several are pushed one by one (collecting
                // through the iterator costs several times more).
                let (one, mut many);
                let key: &[u128] = match keys.as_slice() {
                    [k] => {
                        one = k.value(layout, phv);
                        std::slice::from_ref(&one)
                    }
                    keys => {
                        many = KeyValues::new();
                        for k in keys {
                            many.push(k.value(layout, phv));
                        }
                        &many
                    }
                };
                let state = &mut tables[*id as usize];
                let found = state.lookup_entry(key);
                let (call, slot, writes) = match found {
                    Some(e) => (&e.call, Some(e.slot), &e.writes),
                    None => {
                        let (call, writes) = state.default_entry();
                        (call, None, writes)
                    }
                };
                let hit = slot.is_some();
                tracer.table(*id, key, state, slot, call);
                let action = &control.actions[call.action as usize];
                match &plan.actions[call.action as usize].ops {
                    Some(ops) => {
                        run_micro_ops(ops, action, &call.args, layout, phv);
                        writes.apply(phv);
                    }
                    None => {
                        // A hit runs in the stage of the part holding it, a miss in `stage`.
                        let at = found.map_or(*stage, |e| state.part_stage(key, e));
                        let (args, t) = (&call.args, &mut tracer);
                        run_action(action, at, args, control, layout, phv, ext, pkt, t)
                    }
                }
                let action_run = call.action;
                state.count_direct(slot, pkt.bytes);
                stats.tables_applied += 1;
                stats.hits += hit as u32;
                match next {
                    StepNext::Always(n) => *n,
                    StepNext::HitMiss { hit: h, miss: m } => {
                        if hit {
                            *h
                        } else {
                            *m
                        }
                    }
                    StepNext::ByAction { cases, default } => cases
                        .iter()
                        .find(|(a, _)| *a == action_run)
                        .map_or(*default, |&(_, n)| n),
                }
            }
        };
    }
    tracer.end(phv);
    stats
}

impl GateOperand {
    #[inline(always)]
    fn value(&self, layout: &PhvLayout, phv: &Phv) -> u128 {
        match self {
            GateOperand::Ref(r) => r.get(layout, phv),
            GateOperand::Const(c) => *c,
            GateOperand::General(o) => operand(o, &[], layout, phv),
        }
    }
}

impl KeyRead {
    /// The key's value in `phv`.
    #[inline(always)]
    pub(super) fn value(self, layout: &PhvLayout, phv: &Phv) -> u128 {
        match self {
            KeyRead::Bits(b) => b.get(phv) as u128,
            KeyRead::Field(f, slice) => {
                let v = f.get(layout, phv);
                match slice {
                    Some((hi, lo)) => (v >> lo) & mask((hi - lo + 1) as u32),
                    None => v,
                }
            }
        }
    }
}
