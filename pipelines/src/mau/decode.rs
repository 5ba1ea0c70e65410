//! Instruction decode: a control's actions, gateways and table keys resolved against the PHV
//! layout once, when the gress loads ([`ControlPlan`]), so the per-packet walk reads one
//! step per node and runs a hazard-free action as micro-ops (see [`crate::mau`] for what
//! that relies on).

use crate::action_data::{ActionShape, DataSet, DataSets, DataSrc};
use crate::dataflow;
use crate::phv::{Bits, FieldRef};
use crate::program::{
    Action, ActionId, AluOp, CmpOp, Cond, ControlProgram, FieldId, GatewayId, Node, Op, Operand,
    PhvLayout, TableId, TableKey, TableNext,
};
use smallvec::SmallVec;

/// A pre-decoded operand of a narrow operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Src {
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
pub(super) enum MicroOp {
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
    pub(super) ops: Option<Vec<MicroOp>>,
    /// The `Set`s from action data and constants taken out of `ops`, which the entries
    /// hold decoded ([`crate::table::TableState`]): written after `ops`.
    pub(super) sets: DataSets,
}

/// A gateway operand, decoded: a field in one container, or anything else.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum GateOperand {
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
}

/// A gateway, decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Gate {
    /// Bits of one container against a constant (`hdr.ipv4.ttl <= 1`, a validity bit):
    /// one shift and mask, one comparison.
    BitsConst { a: Bits, op: CmpOp, b: u128 },
    /// Two operands.
    Cmp(GateOperand, CmpOp, GateOperand),
    /// Anything else: the gateway's [`Cond`].
    Cond,
}

impl Gate {
    pub(super) fn new(cond: &Cond, layout: &PhvLayout) -> Gate {
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
pub(super) enum KeyRead {
    /// The key's bits lie in one container: one shift and mask.
    Bits(Bits),
    /// A field in several containers, and the bits `hi ..= lo` of it matched, if a slice.
    Field(FieldRef, Option<(u16, u16)>),
}

impl KeyRead {
    pub(super) fn new(k: &TableKey, layout: &PhvLayout) -> KeyRead {
        match bits_of(layout, k.field, k.slice) {
            Some(b) => KeyRead::Bits(b),
            None => KeyRead::Field(FieldRef::new(layout, Some(k.field)), k.slice),
        }
    }
}

/// A table's keys, decoded.
pub(super) type KeyPlan = SmallVec<[KeyRead; 4]>;

/// A control-flow node decoded when the gress loads, with its successors as step numbers
/// ([`ControlPlan::steps`]; [`DONE`] ends the control): the walk reads one step, not the
/// program's node, its decoded form and its successors from three places.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Step {
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
        /// The MAU stage where a miss runs the default action (a split table's last part;
        /// a hit runs in its part's stage), for the externs of its actions.
        stage: u16,
        keys: KeyPlan,
        next: StepNext,
    },
}

/// Where the control goes after a table, as step numbers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum StepNext {
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
pub(super) const DONE: u32 = u32::MAX;

/// What a control runs, decoded when the gress loads: [`ActionPlan`]s indexed like
/// [`ControlProgram::actions`], and the control flow as `Step`s (the gateways' first,
/// then the tables', each indexed like theirs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ControlPlan {
    pub(super) actions: Vec<ActionPlan>,
    pub(super) steps: Vec<Step>,
    /// The first step ([`DONE`] for an empty control).
    pub(super) entry: u32,
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
                stage: t.last_stage(),
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
                name: a.name.clone(),
                params: a.params.clone(),
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
    pub(super) fn new(action: &Action, layout: &PhvLayout) -> ActionPlan {
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
