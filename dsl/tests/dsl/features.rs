//! Language features lowered to the right IR.

use crate::common::{apply, field, program, spec, table, STATES};
use dsl::{compile, Compiled};
use pipelines::program::*;

fn ok(src: &str) -> Compiled {
    let c = compile(src, "t.p4", &spec()).unwrap_or_else(|e| panic!("{e}\n{}", e.render()));
    pipelines::verify::verify(&c.program, &spec()).expect("verifies");
    c
}

#[test]
fn select_on_a_tuple_with_masks_ranges_and_defaults() {
    let states = r#"
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type, hdr.ethernet.dst_addr) {
            (0x0800, 48w0x010203040506): parse_ipv4;
            (16w0x86dd &&& 0xff00, _): accept;
            (_, default): reject;
        }
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition select(hdr.ipv4.protocol) { 6 .. 17: accept; 0b1: reject; }
    }
    "#;
    let c = ok(&program(states, &apply(""), ""));
    let p = &c.program.ingress.parser;
    let Transition::Select {
        keys,
        cases,
        default,
    } = &p.states[0].transition
    else {
        panic!()
    };
    assert_eq!(keys.len(), 2);
    assert_eq!(
        cases[0].pattern,
        CasePattern::Masked {
            value: (0x0800 << 48) | 0x010203040506,
            mask: (1u128 << 64) - 1
        }
    );
    assert_eq!(
        cases[1].pattern,
        CasePattern::Masked {
            value: 0x8600 << 48,
            mask: 0xff00 << 48
        }
    );
    assert_eq!(*default, Next::Reject);
    assert_eq!(cases.len(), 2);
    let Transition::Select { cases, default, .. } = &p.states[1].transition else {
        panic!()
    };
    assert_eq!(cases[0].pattern, CasePattern::Range { lo: 6, hi: 17 });
    assert_eq!(
        cases[1].pattern,
        CasePattern::Masked {
            value: 1,
            mask: 0xff
        }
    );
    // No default case: a parser that matches nothing rejects.
    assert_eq!(*default, Next::Reject);
}

#[test]
fn const_entries_resolve_to_key_matches() {
    let control = r#"
        action set(bit<8> v) { meta.a = v; }
        table lpm {
            key = { hdr.ipv4.dst_addr : lpm; }
            actions = { set; NoAction; }
            const entries = {
                0x0a000000 &&& 0xff000000 : set(1);
                0x0a0a0a0a : set(2);
                _ : NoAction();
            }
        }
        table tern {
            key = { meta.b : ternary; meta.c : exact; meta.wide : range; }
            actions = { set; }
            default_action = set(7);
            const entries = { (0x10 &&& 0xf0, 3, 1 .. 100) : set(3); }
        }
        apply { lpm.apply(); tern.apply(); }
    "#;
    let c = ok(&program(STATES, control, ""));
    let g = &c.program.ingress;
    let lpm = table(g, "Ing.lpm");
    let keys: Vec<KeyMatch> = lpm.const_entries.iter().map(|e| e.key[0]).collect();
    assert_eq!(
        keys,
        [
            KeyMatch::Lpm {
                value: 0x0a000000,
                prefix_len: 8
            },
            KeyMatch::Lpm {
                value: 0x0a0a0a0a,
                prefix_len: 32
            },
            KeyMatch::Lpm {
                value: 0,
                prefix_len: 0
            },
        ]
    );
    assert!(lpm.const_entries[0].priority > lpm.const_entries[1].priority);
    assert_eq!(lpm.const_entries[1].action.args, [2]);
    assert_eq!(
        g.control.actions[lpm.default_action.action as usize].name,
        "NoAction"
    );
    let tern = table(g, "Ing.tern");
    assert_eq!(
        tern.const_entries[0].key,
        [
            KeyMatch::Ternary {
                value: 0x10,
                mask: 0xf0
            },
            KeyMatch::Exact(3),
            KeyMatch::Range { lo: 1, hi: 100 }
        ]
    );
    assert_eq!(tern.default_action.args, [7]);
}

#[test]
fn hit_miss_and_apply_block_assignments() {
    let control = r#"
        action a(bit<8> v) { meta.a = v; }
        table t { key = { hdr.ethernet.ether_type : exact; } actions = { a; } size = 16; }
        apply {
            if (t.apply().hit) {
                meta.b = meta.a;
                hdr.ipv4.setInvalid();
                meta.c = meta.b;
            } else {
                ig_tm_md.ucast_egress_port = 9w5;
            }
        }
    "#;
    let c = ok(&program(STATES, control, "pkt.emit(hdr);"));
    let g = &c.program.ingress;
    let t = table(g, "Ing.t");
    let TableNext::HitMiss {
        hit: Some(Node::Table(h)),
        miss: Some(Node::Table(m)),
    } = t.next
    else {
        panic!("{:?}", t.next)
    };
    // The hit branch is split where `meta.c = meta.b` reads what the group wrote.
    let first = &g.control.tables[h as usize];
    assert!(first.keys.is_empty());
    let ops = &g.control.actions[first.default_action.action as usize].ops;
    assert_eq!(ops.len(), 2);
    assert_eq!(
        ops[1],
        Op {
            dst_slice: None,
            dst: g.phv.headers[1].valid,
            alu: AluOp::Set,
            a: Operand::Const(0),
            b: Operand::Const(0)
        }
    );
    let TableNext::Always(Some(Node::Table(second))) = first.next else {
        panic!()
    };
    let second = &g.control.tables[second as usize];
    assert!(
        second.stage > first.stage,
        "RAW across groups needs a later stage"
    );
    assert!(first.stage > t.stage, "reads meta.a written by t");
    // The miss branch writes the port, so the valid bit is bound and set.
    let miss = &g.control.tables[m as usize];
    let ops = &g.control.actions[miss.default_action.action as usize].ops;
    let valid = g
        .phv
        .intrinsic(Intrinsic::UcastEgressPortValid)
        .expect("bound");
    assert_eq!(ops[1].dst, valid);
    // emit(hdr) emits every header in declaration order.
    assert_eq!(g.deparser.emit, [0, 1]);
}

#[test]
fn gateway_conditions_and_match_dependencies() {
    let control = r#"
        action w() { meta.a = 3; }
        action r() { meta.c = 1; }
        table writer { actions = { w; } default_action = w(); }
        table reader { key = { meta.a : exact; } actions = { r; } }
        apply {
            writer.apply();
            if (!hdr.ipv4.isValid() || meta.flag && ig_intr_md.ingress_port != 0) {
                reader.apply();
            }
        }
    "#;
    let c = ok(&program(STATES, control, ""));
    let g = &c.program.ingress;
    assert_eq!(table(g, "Ing.writer").stage, 0);
    assert_eq!(table(g, "Ing.reader").stage, 1);
    assert!(g.phv.intrinsic(Intrinsic::IngressPort).is_some());
    let Cond::Or(a, b) = &g.control.gateways[0].cond else {
        panic!()
    };
    assert!(matches!(**a, Cond::Not(_)));
    let Cond::And(flag, port) = &**b else {
        panic!()
    };
    assert_eq!(
        **flag,
        Cond::Cmp {
            a: Operand::Field(field(g, "meta.flag")),
            op: CmpOp::Ne,
            b: Operand::Const(0)
        }
    );
    assert_eq!(
        **port,
        Cond::Cmp {
            a: Operand::Field(field(g, "ig_intr_md.ingress_port")),
            op: CmpOp::Ne,
            b: Operand::Const(0)
        }
    );
    assert_eq!(c.report.gresses[0].stages.len(), 2);
}

#[test]
fn alu_operations() {
    let control = r#"
        action ops(bit<8> p) {
            meta.a = meta.b |+| p;
            meta.b = ~meta.c;
            meta.c = hdr.ipv4.protocol << 2;
            meta.wide = max(meta.wide, 16w100);
            hdr.ipv4.ttl = hdr.ipv4.ttl |-| 8w1;
            hdr.ipv4.diffserv = min(p, hdr.ipv4.protocol);
        }
        table t { actions = { ops; } default_action = ops(1); }
        apply { t.apply(); }
    "#;
    let c = ok(&program(STATES, control, ""));
    let g = &c.program.ingress;
    let a = &g
        .control
        .actions
        .iter()
        .find(|a| a.name == "Ing.ops")
        .unwrap()
        .ops;
    let alus: Vec<AluOp> = a.iter().map(|o| o.alu).collect();
    assert_eq!(
        alus,
        [
            AluOp::AddSat,
            AluOp::Not,
            AluOp::Shl,
            AluOp::Max,
            AluOp::SubSat,
            AluOp::Min
        ]
    );
    assert_eq!(a[0].b, Operand::Param(0));
    assert_eq!(a[2].b, Operand::Const(2));
}

#[test]
fn else_if_chains_become_gateway_chains() {
    let control = r#"
        action set(bit<8> v) { meta.a = v; }
        apply {
            if (meta.b == 1) { set(1); }
            else if (meta.b == 2) { set(2); }
            else { set(3); }
        }
    "#;
    let c = ok(&program(STATES, control, ""));
    let g = &c.program.ingress;
    assert_eq!(g.control.gateways.len(), 2);
    assert_eq!(g.control.gateways[0].on_false, Some(Node::Gateway(1)));
    let names: Vec<&str> = g.control.tables.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["Ing.tbl_set", "Ing.tbl_set_1", "Ing.tbl_set_2"]);
    assert_eq!(g.control.tables[1].default_action.args, [2]);
}
