//! The decoded forms read what the program's forms read: gateways, keys, and actions whose
//! micro-ops and sets of action data give the general path's result.

use super::decode::{ActionPlan, Gate, KeyRead};
use super::execute::{eval, op_result, run_micro_ops, write_result};
use crate::phv::{FieldRef, Phv};
use crate::program::*;

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
