//! The match-action stages: walk the control flow through gateways and tables, running the
//! actions that match.
//!
//! Nodes are visited in stage order (the verifier guarantees that every path goes forward
//! in stages), so walking the graph gives the same result as the stages running one after
//! another, each seeing the PHV the previous stage produced. An action's operations read
//! the PHV as it was before any of them writes: one VLIW instruction, executed by the
//! per-container ALUs in parallel.
//!
//! The externs an action drives (stateful ALUs, meters, counters, hash units, the random
//! number generator) read the PHV as it was before the action too, and their outputs are
//! written together with the operations' results. Their state lives in [`ExternState`];
//! what they need to know about the packet (its length, and when it is in each stage, for
//! meters and queue-depth reads) comes in a [`PacketCtx`], with the chip's read-only
//! [`DepthView`] of the queue depths the TM publishes to ingress.
//!
//! Actions are decoded when the gress loads ([`ControlPlan`]). The fast path runs a
//! decoded action operation by operation, each writing at once, with its `Set`s of action
//! data and constants written from the table entry afterwards; the reference is the
//! general path ([`run_action`]), which computes every result before writing any. They
//! agree (a property test compares them on random actions and layouts) because:
//! - an action runs as micro-ops only if it drives no extern and none of its operations
//!   reads a container an earlier one writes, by [`crate::dataflow`]'s reads and writes: each
//!   then reads what it would have read before the action;
//! - the entry's `Set`s go last only if no other operation writes their bits (or the last
//!   write of a bit could change), and they read nothing;
//! - a field's slices hold distinct container bits (the verifier refuses others), so a
//!   wide `Set` split slice by slice writes what [`Phv::set`] writes.

use crate::action_data::{ActionShape, DataSet, DataSets, DataSrc};
use crate::alu::alu;
use crate::counter::CounterBank;
use crate::dataflow;
use crate::hash::HashEngine;
use crate::meter::MeterBank;
use crate::phv::{mask, Bits, FieldRef, Phv};
use crate::program::{
    Action, ActionId, AluOp, CmpOp, Cond, ControlProgram, ExternCall, ExternIndex, FieldId,
    GatewayId, Node, Op, Operand, PhvLayout, TableId, TableKey, TableNext,
};
use crate::salu::{execute, minmax_lanes, RegisterBank};
use crate::table::{KeyValues, TableState};
use crate::time::{Clock, Time};
use rand_chacha::ChaCha8Rng;
use rand_core::{Rng, SeedableRng};
use smallvec::SmallVec;

/// The state of a gress's externs: register arrays, meters, counters, hash units and the
/// random number generator, indexed like the program's arrays.
pub struct ExternState {
    /// One per [`ControlProgram::registers`].
    pub registers: Vec<RegisterBank>,
    /// One per [`ControlProgram::meters`].
    pub meters: Vec<MeterBank>,
    /// One per [`ControlProgram::counters`].
    pub counters: Vec<CounterBank>,
    /// One per [`ControlProgram::hashes`].
    pub hashes: Vec<HashEngine>,
    /// The gress's generator for `Random` (ChaCha8, seeded at load).
    pub rng: ChaCha8Rng,
}

impl ExternState {
    /// Every extern of `control` in its initial state (registers at their `init`, meters
    /// unconfigured, counters at 0), and the generator seeded with `seed`. `control` is
    /// verified: its CRC parameters fit.
    pub fn new(c: &ControlProgram, seed: u64) -> ExternState {
        ExternState {
            registers: c
                .registers
                .iter()
                .map(|r| RegisterBank::new(r.size, r.width, r.init))
                .collect(),
            meters: c
                .meters
                .iter()
                .map(|m| MeterBank::new(m.size, m.unit))
                .collect(),
            counters: c
                .counters
                .iter()
                .map(|k| CounterBank::new(k.size as usize, k.kind))
                .collect(),
            hashes: c
                .hashes
                .iter()
                .map(|h| HashEngine::new(&h.algorithm).expect("verified: CRC parameters fit"))
                .collect(),
            rng: ChaCha8Rng::seed_from_u64(seed),
        }
    }
}

/// The queue depths the traffic manager publishes to ingress (Tofino2's ghost thread), as
/// [`ExternCall::QueueDepth`] reads them. The chip implements it; the gress only reads.
pub trait DepthView {
    /// Depth in cells of `queue` of egress port `port` in the copy in force at time `at`:
    /// the snapshot taken at the last multiple of the export period at or before
    /// `at − delay` (0 before the first one is visible, and for a port or queue the chip
    /// does not have). `at` may be in the recent past (a gress runs at its exit cycle).
    fn depth_cells(&self, port: u16, queue: u16, at: Time) -> u32;

    /// Bit `q` set for each queue `q < queues.min(128)` of `port` whose depth in the copy in
    /// force at `at` is 0 (as [`DepthView::depth_cells`] reads it).
    fn empty_queues(&self, port: u16, queues: u16, at: Time) -> u128 {
        (0..queues.min(128))
            .filter(|&q| self.depth_cells(port, q, at) == 0)
            .fold(0, |m, q| m | 1u128 << q)
    }
}

/// No published depths: every read is 0. For egress (which never reads them) and for a
/// gress run outside a chip.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoDepths;

impl DepthView for NoDepths {
    fn depth_cells(&self, _port: u16, _queue: u16, _at: Time) -> u32 {
        0
    }
}

/// What the externs need to know about the packet being processed.
#[derive(Clone, Copy)]
pub struct PacketCtx<'a> {
    /// Packet length in bytes as stored (no FCS): what byte counters and meters count.
    pub bytes: u32,
    /// The cycle the packet was issued into the gress.
    pub issue_cycle: u64,
    /// The pipe clock.
    pub clock: Clock,
    /// Cycles from issue to the entry of each stage.
    pub stage_entry: &'a [u32],
    /// The queue depths published to ingress.
    pub depths: &'a dyn DepthView,
}

impl std::fmt::Debug for PacketCtx<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PacketCtx")
            .field("bytes", &self.bytes)
            .field("issue_cycle", &self.issue_cycle)
            .field("clock", &self.clock)
            .field("stage_entry", &self.stage_entry)
            .finish_non_exhaustive()
    }
}

impl PacketCtx<'_> {
    /// When the packet enters stage `s`: the time a stage's meter (or queue-depth read)
    /// sees it.
    #[inline]
    pub fn stage_time(&self, s: u16) -> Time {
        let off = self.stage_entry.get(s as usize).copied().unwrap_or(0);
        self.clock.time_of(self.issue_cycle + off as u64)
    }
}

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
fn extern_index(
    i: ExternIndex,
    size: usize,
    args: &[u128],
    control: &ControlProgram,
    ext: &ExternState,
    layout: &PhvLayout,
    phv: &Phv,
) -> usize {
    let v = match i {
        ExternIndex::Operand(o) => operand(&o, args, layout, phv),
        ExternIndex::Hash(h) => {
            ext.hashes[h as usize].compute(&control.hashes[h as usize], layout, phv)
        }
    };
    (v % size.max(1) as u128) as usize
}

/// A pre-decoded operand of a narrow operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Src {
    Bits(Bits),
    Imm(u32),
    /// Action data `index`, from its bit `shift` up.
    Param {
        index: u8,
        shift: u8,
    },
}

/// One operation of an action, decoded when the gress loads.
#[derive(Clone, Debug, PartialEq, Eq)]
enum MicroOp {
    /// `Set` of bits in one container: a `Set` whose destination is in one container, or
    /// one slice of a wider field set from action data or a constant (one per slice).
    Set { dst: Bits, a: Src },
    /// The destination bits sit in one container (at most 32 bits) and the operation's
    /// result modulo 2^width depends only on its operands modulo 2^width (`Add`, `Sub`,
    /// `And`, `Or`, `Xor`, `Not`; a `Set` is a [`MicroOp::Set`]): computed in 32 bits.
    Narrow {
        dst: Bits,
        alu: AluOp,
        a: Src,
        b: Src,
    },
    /// `Set` of a whole field (any width) from an operand.
    SetField { dst: FieldId, a: Operand },
    /// Anything else: `action.ops[i]` as the general path runs it.
    General(u16),
}

/// How an action runs: operation by operation, each writing at once, when no operation
/// reads a container an earlier one writes and there are no externs (the result is then
/// the VLIW's: every read sees the PHV as it was before the action); else through the
/// general path, which computes every result before writing any.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ActionPlan {
    ops: Option<Vec<MicroOp>>,
    /// The `Set`s from action data and constants taken out of `ops`, which the entries
    /// hold decoded ([`crate::table::TableState`]): written after `ops`.
    sets: DataSets,
}

/// A gateway operand, decoded: a field in one container, or anything else.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum GateOperand {
    Ref(FieldRef),
    Const(u128),
    General(Operand),
}

impl GateOperand {
    fn new(o: &Operand, layout: &PhvLayout) -> GateOperand {
        match *o {
            Operand::Field(f) => GateOperand::Ref(FieldRef::new(layout, Some(f))),
            Operand::Const(c) => GateOperand::Const(c),
            other => GateOperand::General(other),
        }
    }

    #[inline(always)]
    fn value(&self, layout: &PhvLayout, phv: &Phv) -> u128 {
        match self {
            GateOperand::Ref(r) => r.get(layout, phv),
            GateOperand::Const(c) => *c,
            GateOperand::General(o) => operand(o, &[], layout, phv),
        }
    }
}

/// A gateway, decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Gate {
    /// Bits of one container against a constant (`hdr.ipv4.ttl <= 1`, a validity bit):
    /// one shift and mask, one comparison.
    BitsConst { a: Bits, op: CmpOp, b: u128 },
    /// Two operands.
    Cmp(GateOperand, CmpOp, GateOperand),
    /// Anything else: the gateway's [`Cond`].
    Cond,
}

impl Gate {
    fn new(cond: &Cond, layout: &PhvLayout) -> Gate {
        let Cond::Cmp { a, op, b } = cond else {
            return Gate::Cond;
        };
        let bits = match *a {
            Operand::Field(f) => bits_of(layout, f, None),
            Operand::Slice { field, hi, lo } => bits_of(layout, field, Some((hi, lo))),
            Operand::Const(_) | Operand::Param(_) => None,
        };
        match (bits, *b) {
            (Some(a), Operand::Const(b)) => Gate::BitsConst { a, op: *op, b },
            _ => Gate::Cmp(
                GateOperand::new(a, layout),
                *op,
                GateOperand::new(b, layout),
            ),
        }
    }
}

/// A table key, decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum KeyRead {
    /// The key's bits lie in one container: one shift and mask.
    Bits(Bits),
    /// A field in several containers, and the bits `hi ..= lo` of it matched, if a slice.
    Field(FieldRef, Option<(u16, u16)>),
}

impl KeyRead {
    fn new(k: &TableKey, layout: &PhvLayout) -> KeyRead {
        match bits_of(layout, k.field, k.slice) {
            Some(b) => KeyRead::Bits(b),
            None => KeyRead::Field(FieldRef::new(layout, Some(k.field)), k.slice),
        }
    }

    /// The key's value in `phv`.
    #[inline(always)]
    fn value(self, layout: &PhvLayout, phv: &Phv) -> u128 {
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

/// A table's keys, decoded.
type KeyPlan = SmallVec<[KeyRead; 4]>;

/// A control-flow node decoded when the gress loads, with its successors as step numbers
/// ([`ControlPlan::steps`]; [`DONE`] ends the control): the walk reads one step, not the
/// program's node, its decoded form and its successors from three places.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Step {
    /// A gateway.
    Gate {
        gate: Gate,
        /// The gateway (for [`Gate::Cond`]).
        id: GatewayId,
        on_true: u32,
        on_false: u32,
    },
    /// A table.
    Table {
        id: TableId,
        /// Its MAU stage (for the externs of its actions).
        stage: u16,
        keys: KeyPlan,
        next: StepNext,
    },
}

/// Where the control goes after a table, as step numbers.
#[derive(Clone, Debug, PartialEq, Eq)]
enum StepNext {
    Always(u32),
    HitMiss {
        hit: u32,
        miss: u32,
    },
    ByAction {
        cases: Vec<(ActionId, u32)>,
        default: u32,
    },
}

/// The step number that ends the control (no step has it).
const DONE: u32 = u32::MAX;

/// What a control runs, decoded when the gress loads: [`ActionPlan`]s indexed like
/// [`ControlProgram::actions`], and the control flow as `Step`s (the gateways' first,
/// then the tables', each indexed like theirs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ControlPlan {
    actions: Vec<ActionPlan>,
    steps: Vec<Step>,
    /// The first step ([`DONE`] for an empty control).
    entry: u32,
}

impl ControlPlan {
    /// Decode `control`'s actions, gateways and tables over `layout`.
    pub fn new(control: &ControlProgram, layout: &PhvLayout) -> ControlPlan {
        let gateways = control.gateways.len() as u32;
        let at = |n: Option<Node>| match n {
            Some(Node::Gateway(g)) => g as u32,
            Some(Node::Table(t)) => gateways + t as u32,
            None => DONE,
        };
        let gates = control
            .gateways
            .iter()
            .enumerate()
            .map(|(id, g)| Step::Gate {
                gate: Gate::new(&g.cond, layout),
                id: id as GatewayId,
                on_true: at(g.on_true),
                on_false: at(g.on_false),
            });
        let tables = control
            .tables
            .iter()
            .enumerate()
            .map(|(id, t)| Step::Table {
                id: id as TableId,
                stage: t.stage,
                keys: t.keys.iter().map(|k| KeyRead::new(k, layout)).collect(),
                next: match &t.next {
                    TableNext::Always(n) => StepNext::Always(at(*n)),
                    TableNext::HitMiss { hit, miss } => StepNext::HitMiss {
                        hit: at(*hit),
                        miss: at(*miss),
                    },
                    TableNext::ByAction { cases, default } => StepNext::ByAction {
                        cases: cases.iter().map(|&(a, n)| (a, at(n))).collect(),
                        default: at(*default),
                    },
                },
            });
        ControlPlan {
            actions: control
                .actions
                .iter()
                .map(|a| ActionPlan::new(a, layout))
                .collect(),
            steps: gates.chain(tables).collect(),
            entry: at(control.entry),
        }
    }

    /// Per action of `control` (indexed like [`ControlProgram::actions`]), what installing
    /// an entry needs to know of it.
    pub fn action_shapes(&self, control: &ControlProgram) -> Vec<ActionShape> {
        control
            .actions
            .iter()
            .zip(&self.actions)
            .map(|(a, plan)| ActionShape {
                params: a.params.len(),
                sets: plan.sets.clone(),
            })
            .collect()
    }
}

/// The bits of `field` (or of its bits `hi ..= lo`) if they sit in one container.
fn bits_of(layout: &PhvLayout, field: FieldId, range: Option<(u16, u16)>) -> Option<Bits> {
    let (lo, width) = match range {
        Some((hi, lo)) => (lo, hi - lo + 1),
        None => (0, layout.fields[field as usize].width),
    };
    Bits::of_field(layout, field, lo, width).and_then(|(bits, all)| all.then_some(bits))
}

impl ActionPlan {
    fn new(action: &Action, layout: &PhvLayout) -> ActionPlan {
        let Some(ops) = Self::micro_ops(action, layout) else {
            return ActionPlan {
                ops: None,
                sets: DataSets::default(),
            };
        };
        // The `Set`s from action data and constants become the entries' container writes,
        // made after the other operations: those read no container an earlier operation
        // writes (or there would be no micro-ops), so they read what they would have; and
        // if no other operation writes their bits, the last write of every bit is the same.
        let data_set = |m: &MicroOp| match *m {
            MicroOp::Set {
                dst,
                a: Src::Imm(v),
            } => Some((dst, DataSrc::Imm(v))),
            MicroOp::Set {
                dst,
                a: Src::Param { index, shift },
            } => Some((dst, DataSrc::Param { index, shift })),
            _ => None,
        };
        let sets: Vec<DataSet> = ops
            .iter()
            .filter_map(data_set)
            .map(|(dst, src)| DataSet {
                container: dst.container,
                lsb: dst.lsb,
                mask: dst.mask,
                src,
            })
            .collect();
        let rest: Vec<MicroOp> = ops
            .iter()
            .filter(|m| data_set(m).is_none())
            .cloned()
            .collect();
        let others: Vec<(u16, u32)> = rest
            .iter()
            .flat_map(|m| Self::written(m, action, layout))
            .collect();
        let apart = sets.iter().all(|d| {
            others
                .iter()
                .all(|&(c, bits)| c != d.container || bits & d.mask << d.lsb == 0)
        });
        if !apart {
            // Every micro-op in the action's order, one after another.
            return ActionPlan {
                ops: Some(ops),
                sets: DataSets::default(),
            };
        }
        ActionPlan {
            ops: Some(rest),
            sets: DataSets(sets),
        }
    }

    /// The container bits a micro-op writes (a whole field's for a general operation).
    fn written(m: &MicroOp, action: &Action, layout: &PhvLayout) -> Vec<(u16, u32)> {
        match *m {
            MicroOp::Set { dst, .. } | MicroOp::Narrow { dst, .. } => {
                vec![(dst.container, dst.mask << dst.lsb)]
            }
            MicroOp::SetField { dst, .. } => dataflow::field_bits(layout, dst).collect(),
            MicroOp::General(i) => {
                dataflow::field_bits(layout, action.ops[i as usize].dst).collect()
            }
        }
    }

    /// The action's micro-ops, if it has no externs and no operation reads a container an
    /// earlier one writes.
    fn micro_ops(action: &Action, layout: &PhvLayout) -> Option<Vec<MicroOp>> {
        if !action.externs.is_empty() {
            return None;
        }
        let containers = |f: FieldId| dataflow::field_bits(layout, f).map(|(c, _)| c);
        let mut written: Vec<u16> = Vec::new();
        let mut ops = Vec::new();
        for (i, op) in action.ops.iter().enumerate() {
            if dataflow::op_reads(op)
                .flat_map(|r| containers(r.field))
                .any(|c| written.contains(&c))
            {
                return None;
            }
            written.extend(containers(dataflow::op_writes(op).field));
            match Self::split(op, layout) {
                Some(sets) => ops.extend(sets),
                None => ops.push(Self::decode(op, i, layout)),
            }
        }
        Some(ops)
    }

    /// A `Set` of a whole field in several containers from action data or a constant, as
    /// one [`MicroOp::Set`] per slice (each its bits of the value: the slices are most
    /// significant first, as [`Phv::set`] writes them).
    fn split(op: &Op, layout: &PhvLayout) -> Option<Vec<MicroOp>> {
        let slices = &layout.fields[op.dst as usize].slices;
        if op.alu != AluOp::Set || op.dst_slice.is_some() || slices.len() < 2 {
            return None;
        }
        let mut shift = 0u32;
        let mut sets: Vec<MicroOp> = slices
            .iter()
            .rev()
            .map(|s| {
                let a = match op.a {
                    Operand::Param(index) => Some(Src::Param {
                        index,
                        shift: u8::try_from(shift).ok()?,
                    }),
                    Operand::Const(c) => Some(Src::Imm(c.checked_shr(shift).unwrap_or(0) as u32)),
                    Operand::Field(_) | Operand::Slice { .. } => None,
                };
                let dst = Bits {
                    container: s.container,
                    lsb: s.lsb,
                    mask: ((1u64 << s.width) - 1) as u32,
                };
                shift += s.width as u32;
                Some(MicroOp::Set { dst, a: a? })
            })
            .collect::<Option<_>>()?;
        sets.reverse();
        Some(sets)
    }

    fn decode(op: &Op, i: usize, layout: &PhvLayout) -> MicroOp {
        let narrow_alu = matches!(
            op.alu,
            AluOp::Set | AluOp::Add | AluOp::Sub | AluOp::And | AluOp::Or | AluOp::Xor | AluOp::Not
        );
        let src = |o: &Operand| match *o {
            Operand::Field(f) => bits_of(layout, f, None).map(Src::Bits),
            Operand::Slice { field, hi, lo } => bits_of(layout, field, Some((hi, lo)))
                .filter(|_| hi - lo < 32)
                .map(Src::Bits),
            // Only the low bits count modulo 2^width (width <= 32).
            Operand::Const(c) => Some(Src::Imm(c as u32)),
            Operand::Param(index) => Some(Src::Param { index, shift: 0 }),
        };
        if narrow_alu {
            if let (Some(dst), Some(a), Some(b)) = (
                bits_of(layout, op.dst, op.dst_slice),
                src(&op.a),
                src(&op.b),
            ) {
                if op.alu == AluOp::Set {
                    return MicroOp::Set { dst, a };
                }
                return MicroOp::Narrow {
                    dst,
                    alu: op.alu,
                    a,
                    b,
                };
            }
        }
        if op.alu == AluOp::Set && op.dst_slice.is_none() {
            return MicroOp::SetField {
                dst: op.dst,
                a: op.a,
            };
        }
        MicroOp::General(i as u16)
    }
}

#[inline(always)]
fn src(s: Src, args: &[u128], phv: &Phv) -> u32 {
    match s {
        Src::Bits(b) => b.get(phv),
        Src::Imm(v) => v,
        Src::Param { index, shift } => (args[index as usize] >> shift) as u32,
    }
}

/// Run a hazard-free action's decoded operations in order.
#[inline]
fn run_micro_ops(
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
                let i = extern_index(index, reg.len() / lanes, args, control, ext, layout, phv);
                let r = execute(s, &mut ext.registers[s.register as usize], i, |f| {
                    phv.get(&layout.fields[f as usize])
                });
                if let Some(d) = dst {
                    results.push((d, r.output, u128::MAX));
                }
                if let Some(d) = lane_dst {
                    results.push((d, r.lane as u128, u128::MAX));
                }
            }
            ExternCall::Meter { meter, index, dst } => {
                let size = ext.meters[meter as usize].len();
                let i = extern_index(index, size, args, control, ext, layout, phv);
                let t = pkt.stage_time(control.meters[meter as usize].stage);
                let colour = ext.meters[meter as usize].color(i, t, pkt.bytes);
                results.push((dst, colour as u128, u128::MAX));
            }
            ExternCall::Count { counter, index } => {
                let size = ext.counters[counter as usize].len();
                let i = extern_index(index, size, args, control, ext, layout, phv);
                ext.counters[counter as usize].count(i, pkt.bytes);
            }
            ExternCall::Hash { hash, dst } => {
                let v =
                    ext.hashes[hash as usize].compute(&control.hashes[hash as usize], layout, phv);
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
                results.push((dst, v, u128::MAX));
            }
            ExternCall::QueueDepth { port, queue, dst } => {
                // Runtime values beyond the id widths read 0, like ports the chip lacks.
                let id = |o| u16::try_from(operand(&o, args, layout, phv)).ok();
                let d = match (id(port), id(queue)) {
                    (Some(p), Some(q)) => pkt.depths.depth_cells(p, q, pkt.stage_time(stage)),
                    _ => 0,
                };
                let max = mask(layout.fields[dst as usize].width as u32);
                results.push((dst, (d as u128).min(max), u128::MAX));
            }
            ExternCall::EmptyQueues { port, dst } => {
                let w = layout.fields[dst as usize].width;
                let m = match u16::try_from(operand(&port, args, layout, phv)) {
                    Ok(p) => pkt.depths.empty_queues(p, w, pkt.stage_time(stage)),
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
fn op_result(op: &Op, args: &[u128], layout: &PhvLayout, phv: &Phv) -> (u128, u128) {
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
fn write_result(dst: u16, v: u128, m: u128, layout: &PhvLayout, phv: &mut Phv) {
    let f = &layout.fields[dst as usize];
    let v = if m == u128::MAX {
        v
    } else {
        (phv.get(f) & !m) | (v & m)
    };
    phv.set(f, v);
}

fn eval(c: &Cond, layout: &PhvLayout, phv: &Phv) -> bool {
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

/// Run the control over a parsed PHV.
pub fn run_control(
    control: &ControlProgram,
    plan: &ControlPlan,
    layout: &PhvLayout,
    tables: &mut [TableState],
    phv: &mut Phv,
    ext: &mut ExternState,
    pkt: &PacketCtx,
) -> ControlStats {
    let mut stats = ControlStats::default();
    // `DONE` is past the last step.
    let mut at = plan.entry;
    while let Some(step) = plan.steps.get(at as usize) {
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
                let (call, slot, writes) = match state.lookup_entry(key) {
                    Some(e) => (&e.call, Some(e.slot), &e.writes),
                    None => {
                        let (call, writes) = state.default_entry();
                        (call, None, writes)
                    }
                };
                let hit = slot.is_some();
                let action = &control.actions[call.action as usize];
                match &plan.actions[call.action as usize].ops {
                    Some(ops) => {
                        run_micro_ops(ops, action, &call.args, layout, phv);
                        writes.apply(phv);
                    }
                    None => run_action(action, *stage, &call.args, control, layout, phv, ext, pkt),
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
    stats
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::{Field, PhvSlice};

    /// A gateway comparing a field's or a slice's bits in one container with a constant
    /// holds when the condition does.
    #[test]
    fn a_gateway_on_bits_of_one_container_is_the_condition() {
        let layout = PhvLayout {
            fields: vec![Field {
                name: "ttl".into(),
                width: 8,
                slices: vec![PhvSlice {
                    container: 0,
                    lsb: 8,
                    width: 8,
                }],
            }],
            headers: Vec::new(),
            intrinsics: Vec::new(),
        };
        let ops = [
            CmpOp::Eq,
            CmpOp::Ne,
            CmpOp::Lt,
            CmpOp::Le,
            CmpOp::Gt,
            CmpOp::Ge,
        ];
        let operands = [
            Operand::Field(0),
            Operand::Slice {
                field: 0,
                hi: 6,
                lo: 2,
            },
        ];
        for a in operands {
            for op in ops {
                for b in [0, 1, 9, 255, 1 << 40] {
                    let cond = Cond::Cmp {
                        a,
                        op,
                        b: Operand::Const(b),
                    };
                    let gate = Gate::new(&cond, &layout);
                    let Gate::BitsConst { a: bits, op, b } = gate else {
                        panic!("one container");
                    };
                    for v in [0u32, 1, 2, 0x7c, 0xff] {
                        let mut phv = Phv::new(1);
                        phv.set(&layout.fields[0], v as u128);
                        phv.deposit(0, 0, 8, 0xa5);
                        assert_eq!(
                            op.holds(bits.get(&phv) as u128, b),
                            eval(&cond, &layout, &phv)
                        );
                    }
                }
            }
        }
    }

    /// A key in one container (a field, or bits of it) reads what the field's bits are.
    #[test]
    fn a_key_in_one_container_reads_the_fields_bits() {
        let layout = PhvLayout {
            fields: vec![Field {
                name: "k".into(),
                width: 12,
                slices: vec![PhvSlice {
                    container: 0,
                    lsb: 3,
                    width: 12,
                }],
            }],
            headers: Vec::new(),
            intrinsics: Vec::new(),
        };
        let mut phv = Phv::new(1);
        phv.deposit(0, 0, 32, 0xdead_beef);
        for slice in [
            None,
            Some((11, 0)),
            Some((7, 4)),
            Some((11, 11)),
            Some((15, 8)),
        ] {
            let key = TableKey {
                field: 0,
                kind: crate::program::MatchKind::Exact,
                name: "k".into(),
                slice,
            };
            let general = KeyRead::Field(FieldRef::new(&layout, Some(0)), slice);
            let read = KeyRead::new(&key, &layout);
            assert_eq!(matches!(read, KeyRead::Bits(_)), slice != Some((15, 8)));
            assert_eq!(read.value(&layout, &phv), general.value(&layout, &phv));
        }
    }

    /// `Set`s of a field in two containers from action data and from a constant run as one
    /// `Set` per slice, with the general path's result.
    #[test]
    fn a_wide_set_runs_slice_by_slice() {
        use crate::phv::tests::field;
        let layout = PhvLayout {
            fields: vec![
                field(48, &[(0, 0, 32), (1, 4, 16)]),
                field(9, &[(2, 0, 9)]),
                field(40, &[(3, 0, 8), (4, 0, 32)]),
            ],
            headers: Vec::new(),
            intrinsics: Vec::new(),
        };
        let set = |dst, a| Op {
            dst,
            dst_slice: None,
            alu: AluOp::Set,
            a,
            b: Operand::Const(0),
        };
        let action = Action {
            name: "a".into(),
            params: Vec::new(),
            ops: vec![
                set(0, Operand::Param(1)),
                set(1, Operand::Param(0)),
                set(2, Operand::Const(0xff_1122_3344_5566)),
            ],
            externs: Vec::new(),
        };
        let plan = ActionPlan::new(&action, &layout);
        let ops = plan.ops.as_deref().expect("no hazards");
        // Every `Set` is of action data or a constant: all are the entries' writes.
        assert!(ops.is_empty());
        assert_eq!(plan.sets.0.len(), 5);
        let args = [0x3ff, 0xaabb_ccdd_eeff_0011];
        let mut fast = Phv::new(5);
        run_micro_ops(ops, &action, &args, &layout, &mut fast);
        plan.sets.decode(&args).apply(&mut fast);
        let mut general = Phv::new(5);
        for op in &action.ops {
            let (v, m) = op_result(op, &args, &layout, &general);
            write_result(op.dst, v, m, &layout, &mut general);
        }
        assert_eq!(fast.containers(), general.containers());
        assert_eq!(fast.get(&layout.fields[0]), 0xccdd_eeff_0011);
        assert_eq!(fast.get(&layout.fields[2]), 0x22_3344_5566);
    }

    /// An action mixing `Set`s of action data with other operations runs those first and
    /// the writes last, with the general path's result; a `Set` whose bits another operation
    /// writes stays a micro-op in the action's order.
    #[test]
    fn sets_of_action_data_are_written_after_the_other_operations() {
        use crate::phv::tests::field;
        let layout = PhvLayout {
            fields: vec![
                // A TTL and a port sharing a container, a MAC in two.
                field(8, &[(0, 0, 8)]),
                field(9, &[(0, 8, 9)]),
                field(48, &[(1, 0, 32), (2, 0, 16)]),
                field(8, &[(3, 0, 8)]),
            ],
            headers: Vec::new(),
            intrinsics: Vec::new(),
        };
        let op = |dst, alu, a, b| Op {
            dst,
            dst_slice: None,
            alu,
            a,
            b,
        };
        let route = Action {
            name: "route".into(),
            params: Vec::new(),
            ops: vec![
                op(0, AluOp::Sub, Operand::Field(0), Operand::Const(1)),
                op(1, AluOp::Set, Operand::Param(0), Operand::Const(0)),
                op(2, AluOp::Set, Operand::Param(1), Operand::Const(0)),
            ],
            externs: Vec::new(),
        };
        // The TTL set from action data, then from another field: the last write wins.
        let overwrite = Action {
            name: "overwrite".into(),
            params: Vec::new(),
            ops: vec![
                op(0, AluOp::Set, Operand::Param(0), Operand::Const(0)),
                op(0, AluOp::Sub, Operand::Field(3), Operand::Const(1)),
            ],
            externs: Vec::new(),
        };
        let args = [0x1_23, 0xaabb_ccdd_eeff];
        for (action, writes) in [(route, 3), (overwrite, 0)] {
            let plan = ActionPlan::new(&action, &layout);
            assert_eq!(plan.sets.0.len(), writes, "{}", action.name);
            let ops = plan.ops.as_deref().expect("no hazards");
            let mut fast = Phv::new(4);
            fast.set(&layout.fields[0], 64);
            fast.set(&layout.fields[3], 9);
            let mut general = fast.clone();
            run_micro_ops(ops, &action, &args, &layout, &mut fast);
            plan.sets.decode(&args).apply(&mut fast);
            let results: Vec<_> = action
                .ops
                .iter()
                .map(|op| op_result(op, &args, &layout, &general))
                .collect();
            for (op, (v, m)) in action.ops.iter().zip(results) {
                write_result(op.dst, v, m, &layout, &mut general);
            }
            assert_eq!(fast.containers(), general.containers(), "{}", action.name);
        }
    }
}
