//! The verifier refuses what the chip cannot do with externs, naming the place and the
//! limit: a register array touched twice in one pass, stateful-ALU programs beyond the
//! profile, externs driven from another stage, too many ALUs in a stage, bad indices.

use crate::common::*;
use pipelines::pipe::{LoadError, LoadedGress};
use pipelines::program::*;
use pipelines::verify::{verify_gress, VerifyError};

fn counter_program() -> (Builder, Hdr) {
    let (mut b, h) = Builder::router(3);
    b.g.control.registers.push(RegisterArray {
        name: "Ingress.r".into(),
        stage: 1,
        width: 32,
        size: 16,
        init: 0,
    });
    b.g.control.salus.push(StatefulAlu {
        name: "Ingress.inc".into(),
        register: 0,
        conditions: vec![],
        updates: vec![SaluUpdate {
            when: Predicate::ALWAYS,
            alu: AluOp::Add,
            a: SaluOperand::Register,
            b: SaluOperand::Const(1),
        }],
        outputs: vec![],
        minmax: None,
    });
    (b, h)
}

fn inc(index: u128) -> ExternCall {
    ExternCall::Stateful {
        salu: 0,
        index: ExternIndex::Operand(Operand::Const(index)),
        dst: None,
        lane_dst: None,
    }
}

fn err(b: &Builder) -> VerifyError {
    verify_gress("ingress", &b.g, &spec()).unwrap_err()
}

#[test]
fn a_register_touched_by_two_tables_is_refused() {
    let (mut b, h) = counter_program();
    let a1 = b.action_x("a1", &[], vec![], vec![inc(0)]);
    let a2 = b.action_x("a2", &[], vec![], vec![inc(1)]);
    let t1 = b.table(
        "Ingress.t1",
        1,
        &[(h.ttl, MatchKind::Exact)],
        &[a1],
        a1,
        vec![],
        4,
    );
    let t2 = b.table(
        "Ingress.t2",
        1,
        &[(h.proto, MatchKind::Exact)],
        &[a2],
        a2,
        vec![],
        4,
    );
    b.chain(&[Node::Table(t1), Node::Table(t2)]);
    let e = err(&b);
    assert_eq!(e.place, "ingress.control.tables[1] (Ingress.t2)");
    assert!(
        e.reason
            .contains("register array Ingress.r is also touched by table Ingress.t1"),
        "{e}"
    );
    // Through load, too.
    let r = LoadedGress::load(Gress::Ingress, b.g.clone(), &spec(), clock(), 0);
    assert!(matches!(r, Err(LoadError::Verify(_))));
}

#[test]
fn a_register_touched_twice_by_one_action_is_refused() {
    let (mut b, h) = counter_program();
    let a = b.action_x("twice", &[], vec![], vec![inc(0), inc(1)]);
    let t = b.table("t", 1, &[(h.ttl, MatchKind::Exact)], &[a], a, vec![], 4);
    b.chain(&[Node::Table(t)]);
    let e = err(&b);
    assert!(e.place.ends_with("(twice)"), "{e}");
    assert!(e.reason.contains("read-modified-written twice"), "{e}");
}

#[test]
fn stateful_alu_limits_are_named() {
    let cond = SaluCond {
        a: SaluOperand::Register,
        op: CmpOp::Eq,
        b: SaluOperand::Const(0),
    };
    let out = SaluOutput {
        when: Predicate::ALWAYS,
        value: SaluValue::Old,
    };
    type Grow = fn(&mut StatefulAlu, SaluCond, SaluOutput);
    let cases: [(&str, Grow); 3] = [
        (
            "has 3 conditions; the chip's stateful ALU allows 2 (salu.conditions)",
            |s, c, _| s.conditions = vec![c.clone(), c.clone(), c],
        ),
        (
            "has 3 update expressions; the chip's stateful ALU allows 2 (salu.updates)",
            |s, _, _| {
                let u = s.updates[0].clone();
                s.updates = vec![u.clone(), u.clone(), u];
            },
        ),
        (
            "has 2 outputs; the chip's stateful ALU allows 1 (salu.outputs)",
            |s, _, o| s.outputs = vec![o.clone(), o],
        ),
    ];
    for (want, f) in cases {
        let (mut b, _h) = counter_program();
        f(&mut b.g.control.salus[0], cond.clone(), out.clone());
        let e = err(&b);
        assert_eq!(e.place, "ingress.control.salus[0] (Ingress.inc)");
        assert_eq!(e.reason, want);
    }
    let (mut b, _h) = counter_program();
    b.g.control.registers[0].width = 64;
    let e = err(&b);
    assert!(e.reason.contains("(salu.max_width_bits)"), "{e}");
}

/// A change to the counter program, before verifying it.
type Edit = fn(&mut Builder);

#[test]
fn min_max_programs_are_checked_against_the_chip_and_the_register() {
    let unit = MinMax {
        max: false,
        mask: SaluOperand::Const(0xffff),
        postmod: SaluOperand::Const(1),
    };
    // The counter program's register is 32 bits wide and its ALU has an update.
    let cases: Vec<(&str, Edit)> = vec![
        (
            "searches register array Ingress.r of 32-bit elements; min/max lanes are 8 or 16 bits",
            |_| {},
        ),
        (
            "searches register array Ingress.r of 24 elements, not whole 128-bit words of 16 lanes",
            |b| {
                b.g.control.registers[0].width = 8;
                b.g.control.registers[0].size = 24;
            },
        ),
        (
            "uses the min/max unit together with compare or update ALUs; the unit takes all of them",
            |b| b.g.control.registers[0].width = 8,
        ),
        (
            "a min/max mask or postmod must be a field or constant",
            |b| {
                b.g.control.registers[0].width = 8;
                b.g.control.salus[0].updates.clear();
                b.g.control.salus[0].minmax.as_mut().unwrap().postmod = SaluOperand::Register;
            },
        ),
    ];
    for (want, f) in cases {
        let (mut b, _h) = counter_program();
        b.g.control.salus[0].minmax = Some(unit);
        f(&mut b);
        let e = err(&b);
        assert_eq!(e.place, "ingress.control.salus[0] (Ingress.inc)");
        assert_eq!(e.reason, want);
    }
    // A chip without the unit refuses even a well-formed program.
    let (mut b, _h) = counter_program();
    b.g.control.registers[0].width = 8;
    b.g.control.salus[0].updates.clear();
    b.g.control.salus[0].minmax = Some(unit);
    let mut no_unit = spec();
    no_unit.salu.minmax = false;
    let e = verify_gress("ingress", &b.g, &no_unit).unwrap_err();
    assert_eq!(
        e.reason,
        "uses the min/max unit; this chip's stateful ALU has none (salu.minmax)"
    );
    assert!(verify_gress("ingress", &b.g, &spec()).is_ok());
}

#[test]
fn externs_must_sit_in_the_stage_of_their_table() {
    let (mut b, h) = counter_program();
    let a = b.action_x("a", &[], vec![], vec![inc(0)]);
    let t = b.table(
        "Ingress.t",
        2,
        &[(h.ttl, MatchKind::Exact)],
        &[a],
        a,
        vec![],
        4,
    );
    b.chain(&[Node::Table(t)]);
    let e = err(&b);
    assert_eq!(
        e.to_string(),
        "ingress.control.tables[0] (Ingress.t): action a drives register array Ingress.r in \
         stage 1, but the table is in stage 2"
    );
}

#[test]
fn per_stage_alu_counts_are_checked() {
    let (mut b, _h) = counter_program();
    b.g.control.registers.push(RegisterArray {
        name: "Ingress.r2".into(),
        stage: 1,
        width: 8,
        size: 4,
        init: 0,
    });
    let e = err(&b);
    assert_eq!(e.place, "ingress.control.stage[1]");
    assert_eq!(
        e.reason,
        "2 register arrays; the stage has 1 stateful ALUs (stage.stateful_alus)"
    );
    let (mut b, _h) = counter_program();
    for i in 0..2 {
        b.g.control.meters.push(MeterArray {
            name: format!("m{i}"),
            stage: 0,
            size: 1,
            unit: CountKind::Bytes,
            byte_count_adjust: 0,
        });
    }
    assert!(err(&b).reason.contains("(stage.meter_alus)"));
}

/// A program's meter byte-count adjustment must fit the profile's meter ALU
/// (`meter.byte_count_adjust_bits`, 14 here) and be 0 for a packet meter.
#[test]
fn meter_byte_count_adjustments_are_checked_against_the_meter_alu() {
    for (unit, adjust, refusal) in [
        (CountKind::Bytes, 8191, None),
        (CountKind::Bytes, -8192, None),
        (
            CountKind::Bytes,
            8192,
            Some("byte-count adjustment 8192 is outside -8192 to 8191"),
        ),
        (
            CountKind::Packets,
            20,
            Some("counts packets; a byte-count adjustment (20)"),
        ),
    ] {
        let (mut b, _h) = counter_program();
        b.g.control.meters.push(MeterArray {
            name: "Ingress.m".into(),
            stage: 0,
            size: 1,
            unit,
            byte_count_adjust: adjust,
        });
        let got = verify_gress("ingress", &b.g, &spec()).err();
        match refusal {
            None => assert!(got.is_none(), "{got:?}"),
            Some(r) => {
                let e = got.unwrap();
                assert_eq!(e.place, "ingress.control.meters[0] (Ingress.m)");
                assert!(e.reason.contains(r), "{}", e.reason);
            }
        }
    }
}

#[test]
fn bad_extern_indices_and_parameters_are_refused() {
    let (mut b, h) = counter_program();
    let a = b.action_x(
        "bad",
        &[],
        vec![],
        vec![ExternCall::Meter {
            meter: 3,
            index: ExternIndex::Operand(Operand::Const(0)),
            dst: h.ttl,
        }],
    );
    let t = b.table("t", 1, &[], &[a], a, vec![], 1);
    b.chain(&[Node::Table(t)]);
    assert!(err(&b).reason.contains("bad extern call"));

    let (mut b, h) = counter_program();
    b.g.control.hashes.push(HashUnit {
        name: "h".into(),
        stage: 0,
        algorithm: HashAlgorithm::Crc {
            width: 16,
            poly: 0x1_8005,
            init: 0,
            refin: true,
            refout: true,
            xorout: 0,
        },
        fields: vec![h.ip_src],
        width: 16,
    });
    assert!(err(&b).reason.contains("CRC parameters"));

    // An extern output and an operation may not write the same field.
    let (mut b, h) = counter_program();
    let a = b.action_x(
        "clash",
        &[],
        vec![set(h.ttl, Operand::Const(1))],
        vec![ExternCall::Random { dst: h.ttl }],
    );
    let t = b.table("t", 0, &[], &[a], a, vec![], 1);
    b.chain(&[Node::Table(t)]);
    assert!(err(&b).reason.contains("written twice"), "{}", err(&b));

    // A key slice outside its field.
    let (mut b, h) = counter_program();
    let a = b.action("nop", &[], vec![]);
    let t = b.table("t", 0, &[(h.ttl, MatchKind::Exact)], &[a], a, vec![], 1);
    b.g.control.tables[t as usize].keys[0].slice = Some((8, 0));
    b.chain(&[Node::Table(t)]);
    assert!(
        err(&b).reason.contains("bits 8..0 of a 8-bit field"),
        "{}",
        err(&b)
    );
}

#[test]
fn parser_state_count_is_limited_by_the_profile() {
    let (mut b, _h) = counter_program();
    for i in 0..15 {
        b.g.parser.states.push(ParserState {
            name: format!("s{i}"),
            ops: vec![],
            transition: Transition::Direct(Next::Accept),
        });
    }
    let e = err(&b);
    assert_eq!(e.place, "ingress.parser");
    assert!(e.reason.contains("(parser.max_states)"));
}

#[test]
fn queue_depth_reads_are_ingress_only_with_operands_in_range() {
    let (mut b, h) = Builder::router(1);
    let d = b.field("meta.depth", 19);
    let read = |port| ExternCall::QueueDepth {
        port,
        queue: Operand::Const(0),
        dst: d,
    };
    let a = b.action_x("rd", &[], vec![], vec![read(Operand::Field(h.ttl))]);
    let t = b.table("rd", 0, &[], &[a], a, vec![], 1);
    b.chain(&[Node::Table(t)]);
    verify_gress("ingress", &b.g, &spec()).expect("ingress may read depths");
    let e = verify_gress("egress", &b.g, &spec()).unwrap_err();
    assert!(e.reason.contains("to ingress only"), "{e}");
    assert!(LoadedGress::load(Gress::Egress, b.g.clone(), &spec(), clock(), 0).is_err());
    b.g.control.actions[a as usize].externs = vec![read(Operand::Field(999))];
    assert!(err(&b).reason.contains("bad extern call"), "{}", err(&b));
    b.g.control.actions[a as usize].externs = vec![read(Operand::Param(0))];
    assert!(err(&b).reason.contains("bad extern call"), "{}", err(&b));
}
