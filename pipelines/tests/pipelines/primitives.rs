//! One test (at least) per primitive of the pipe, on hand-built programs run through
//! `LoadedGress::process`: parser, gateways, match kinds, action data and VLIW semantics,
//! next-table, stateful ALU, meters, counters, hash units, random, deparser and checksum,
//! and the control plane.

use crate::common::*;
use pipelines::control::{resolve_op, ControlError, ControlOp, RegisterWrite, ResolvedControlOp};
use pipelines::counter::Counts;
use pipelines::entries::{EntrySpec, KeySpec, Value};
use pipelines::hash::{CRC16, CRC32};
use pipelines::meter::{MeterConfig, GREEN, RED, YELLOW};
use pipelines::parser::{ParseError, PARSER_ERROR_PARTIAL_HDR, PARSER_ERROR_TIMEOUT_HW};
use pipelines::pipe::LoadedGress;
use pipelines::program::*;
use pipelines::readout::{ChipState, PipeState, Pipes};
use pipelines::table::TableError;
use pipelines::time::Time;

// ---------------------------------------------------------------------------------------
// Parser

#[test]
fn parser_extracts_selects_and_deparses_unchanged() {
    let (b, h) = Builder::router(1);
    let mut g = b.load();
    let frame = ipv4_frame([10, 0, 1, 2], 64);
    let mut data = frame.clone();
    let out = g.process(&mut data, &at(0, 3)).unwrap();
    assert_eq!(out.parser_error, 0);
    assert_eq!(get(&g, h.ip_dst), 0x0a00_0102);
    assert_eq!(get(&g, h.ttl), 64);
    assert_eq!(get(&g, h.ingress_port), 3);
    assert_eq!(get(&g, h.pkt_len), frame.len() as u128);
    assert_eq!(
        data, frame,
        "headers re-emitted, payload kept, checksum unchanged"
    );
    // Not IPv4: only Ethernet is valid; the rest is payload.
    let mut arp = frame.clone();
    arp[12..14].copy_from_slice(&[0x08, 0x06]);
    let mut data = arp.clone();
    g.process(&mut data, &at(1, 0)).unwrap();
    let valid = |g: &pipelines::pipe::LoadedGress, hd: HeaderId| {
        get(g, g.program().phv.headers[hd as usize].valid)
    };
    assert_eq!((valid(&g, h.eth), valid(&g, h.ipv4)), (1, 0));
    assert_eq!(data, arp);
}

#[test]
fn headers_moved_or_removed_are_emitted_not_left_in_place() {
    // The deparser leaves headers where the parser found them only while the valid headers
    // are the extracted ones, in emit order; otherwise it emits them.
    let frame = ipv4_frame([10, 0, 1, 2], 64);
    // The action invalidates IPv4: Ethernet, then what followed IPv4.
    let (mut b, h) = Builder::router(1);
    let valid = b.g.phv.headers[h.ipv4 as usize].valid;
    let strip = b.action("strip", &[], vec![set(valid, Operand::Const(0))]);
    let t = b.table("t", 0, &[], &[strip], strip, vec![], 1);
    b.chain(&[Node::Table(t)]);
    let mut data = frame.clone();
    b.load().process(&mut data, &at(0, 0)).unwrap();
    assert_eq!(data, [&frame[..14], &frame[34..]].concat());
    // IPv4 emitted before Ethernet, the TTL decremented.
    let (mut b, h) = Builder::router(1);
    b.g.deparser.emit.reverse();
    let age = b.action(
        "age",
        &[],
        vec![op(
            h.ttl,
            AluOp::Sub,
            Operand::Field(h.ttl),
            Operand::Const(1),
        )],
    );
    let t = b.table("t", 0, &[], &[age], age, vec![], 1);
    b.chain(&[Node::Table(t)]);
    let mut data = frame.clone();
    b.load().process(&mut data, &at(0, 0)).unwrap();
    let mut ip = frame[14..34].to_vec();
    ip[8] = 63;
    let sum = ipv4_checksum(&ip);
    ip[10..12].copy_from_slice(&sum.to_be_bytes());
    assert_eq!(data, [&ip[..], &frame[..14], &frame[34..]].concat());
    // Bytes the parser skips are dropped: Ethernet, then the 20 bytes after the skip as
    // IPv4 (its checksum recomputed), then the rest.
    let (mut b, _) = Builder::router(1);
    b.g.parser.states[1].ops.insert(0, ParserOp::Advance(16));
    let mut data = frame.clone();
    b.load().process(&mut data, &at(0, 0)).unwrap();
    let mut ip = frame[16..36].to_vec();
    let sum = ipv4_checksum(&ip);
    ip[10..12].copy_from_slice(&sum.to_be_bytes());
    assert_eq!(data, [&frame[..14], &ip[..], &frame[36..]].concat());
}

#[test]
fn parser_errors_take_the_error_path() {
    let (mut b, _h) = Builder::router(1);
    // EtherType 0x86dd rejects; 0x9999 loops on itself, one byte at a time.
    if let Transition::Select { cases, .. } = &mut b.g.parser.states[0].transition {
        cases.push(SelectCase {
            pattern: CasePattern::Masked {
                value: 0x86dd,
                mask: 0xffff,
            },
            next: Next::Reject,
        });
        cases.push(SelectCase {
            pattern: CasePattern::Masked {
                value: 0x9999,
                mask: 0xffff,
            },
            next: Next::State(2),
        });
    }
    b.g.parser.states.push(ParserState {
        name: "spin".into(),
        ops: vec![ParserOp::Advance(8)],
        transition: Transition::Direct(Next::State(2)),
    });
    let mut g = b.load();
    let frame = ipv4_frame([10, 0, 1, 2], 64);
    let mut v6 = frame.clone();
    v6[12..14].copy_from_slice(&[0x86, 0xdd]);
    let err = g.process(&mut v6.clone(), &at(0, 0)).unwrap_err();
    assert!(matches!(err, ParseError::Reject { .. }), "{err}");
    assert_eq!(err.code(), 1);
    let mut short = frame.clone();
    short.truncate(24);
    let err = g.process(&mut short, &at(1, 0)).unwrap_err();
    assert_eq!(
        err,
        ParseError::Truncated {
            state: "parse_ipv4".into(),
            needed: 34,
            have: 24
        }
    );
    assert_eq!(err.code(), PARSER_ERROR_PARTIAL_HDR);
    let mut spin = frame.clone();
    spin[12..14].copy_from_slice(&[0x99, 0x99]);
    let err = g.process(&mut spin, &at(2, 0)).unwrap_err();
    // The profile's parse depth (8 states) stops the loop.
    assert_eq!(err, ParseError::TooDeep { limit: 8 });
    assert_eq!(err.code(), PARSER_ERROR_TIMEOUT_HW);
    // Empty and one-byte packets: errors, never a panic.
    for n in 0..14 {
        assert!(g.process(&mut frame[..n].to_vec(), &at(3, 0)).is_err());
    }
}

#[test]
fn parser_error_continue_keeps_what_was_extracted() {
    let (mut b, h) = Builder::router(1);
    b.g.parser.on_error = ParserErrorPolicy::Continue;
    let mut g = b.load();
    let mut short = ipv4_frame([10, 0, 1, 2], 64);
    short.truncate(24);
    let mut data = short.clone();
    let out = g.process(&mut data, &at(0, 0)).unwrap();
    assert_eq!(out.parser_error, PARSER_ERROR_PARTIAL_HDR);
    assert_eq!(get(&g, h.parser_error), PARSER_ERROR_PARTIAL_HDR as u128);
    assert_eq!(get(&g, h.eth_type), 0x0800);
    // Ethernet re-emitted, the 10 unparsed bytes follow as payload.
    assert_eq!(data, short);
}

// ---------------------------------------------------------------------------------------
// Gateways, tables, actions

#[test]
fn gateway_predicates_the_tables_behind_it() {
    let (mut b, h) = Builder::router(2);
    let drop = b.action("drop", &[], vec![set(h.drop, Operand::Const(1))]);
    let fwd = b.action(
        "fwd",
        &[],
        vec![
            set(h.port, Operand::Const(2)),
            set(h.port_valid, Operand::Const(1)),
        ],
    );
    let t_drop = b.table("t_drop", 1, &[], &[drop], drop, vec![], 1);
    let t_fwd = b.table("t_fwd", 1, &[], &[fwd], fwd, vec![], 1);
    b.g.control.gateways.push(Gateway {
        stage: 0,
        cond: Cond::And(
            Box::new(Cond::Cmp {
                a: Operand::Field(h.ttl),
                op: CmpOp::Le,
                b: Operand::Const(1),
            }),
            Box::new(Cond::Not(Box::new(Cond::Cmp {
                a: Operand::Field(h.eth_type),
                op: CmpOp::Ne,
                b: Operand::Const(0x0800),
            }))),
        ),
        on_true: Some(Node::Table(t_drop)),
        on_false: Some(Node::Table(t_fwd)),
    });
    b.g.control.entry = Some(Node::Gateway(0));
    let mut g = b.load();
    let out = g
        .process(&mut ipv4_frame([1, 2, 3, 4], 1), &at(0, 0))
        .unwrap();
    assert_eq!((out.drop_ctl, out.ucast_egress_port), (1, None));
    let out = g
        .process(&mut ipv4_frame([1, 2, 3, 4], 2), &at(1, 0))
        .unwrap();
    assert_eq!((out.drop_ctl, out.ucast_egress_port), (0, Some(2)));
    assert_eq!(out.stats.tables_applied, 1);
}

/// One routing table of each match kind, keyed on the IPv4 destination.
fn route_table(kind: MatchKind) -> (Builder, Hdr, TableId, ActionId) {
    let (mut b, h) = Builder::router(1);
    let route = b.action(
        "route",
        &[("port", 9)],
        vec![
            set(h.port, Operand::Param(0)),
            set(h.port_valid, Operand::Const(1)),
        ],
    );
    let miss = b.action("miss", &[], vec![set(h.drop, Operand::Const(1))]);
    let t = b.table(
        "route",
        0,
        &[(h.ip_dst, kind)],
        &[route, miss],
        miss,
        vec![],
        8,
    );
    b.chain(&[Node::Table(t)]);
    (b, h, t, route)
}

fn port_for(g: &mut pipelines::pipe::LoadedGress, dst: [u8; 4]) -> Option<u16> {
    g.process(&mut ipv4_frame(dst, 64), &at(0, 0))
        .unwrap()
        .ucast_egress_port
}

#[test]
fn exact_match_runs_the_entry_action_with_its_data() {
    let (b, _h, t, route) = route_table(MatchKind::Exact);
    let mut g = b.load();
    g.tables_mut()[t as usize]
        .insert(entry(vec![KeyMatch::Exact(0x0a00_0001)], route, &[5], 0))
        .unwrap();
    assert_eq!(port_for(&mut g, [10, 0, 0, 1]), Some(5));
    assert_eq!(port_for(&mut g, [10, 0, 0, 2]), None);
}

#[test]
fn lpm_takes_the_longest_prefix() {
    let (b, _h, t, route) = route_table(MatchKind::Lpm);
    let mut g = b.load();
    let lpm = |v: u32, l| KeyMatch::Lpm {
        value: v as u128,
        prefix_len: l,
    };
    let tb = &mut g.tables_mut()[t as usize];
    tb.insert(entry(vec![lpm(0x0a00_0000, 8)], route, &[1], 0))
        .unwrap();
    tb.insert(entry(vec![lpm(0x0a01_0000, 16)], route, &[2], 0))
        .unwrap();
    tb.insert(entry(vec![lpm(0x0a01_0200, 24)], route, &[3], 0))
        .unwrap();
    assert_eq!(port_for(&mut g, [10, 1, 2, 9]), Some(3));
    assert_eq!(port_for(&mut g, [10, 1, 3, 9]), Some(2));
    assert_eq!(port_for(&mut g, [10, 9, 3, 9]), Some(1));
    assert_eq!(port_for(&mut g, [11, 0, 0, 0]), None);
}

#[test]
fn ternary_takes_the_highest_priority_match() {
    let (b, _h, t, route) = route_table(MatchKind::Ternary);
    let mut g = b.load();
    let tern = |v: u32, m: u32| KeyMatch::Ternary {
        value: v as u128,
        mask: m as u128,
    };
    let tb = &mut g.tables_mut()[t as usize];
    tb.insert(entry(vec![tern(0, 0)], route, &[1], 1)).unwrap();
    tb.insert(entry(vec![tern(0x0000_0001, 0x0000_0001)], route, &[2], 10))
        .unwrap();
    tb.insert(entry(vec![tern(0x0a00_0000, 0xff00_0000)], route, &[3], 5))
        .unwrap();
    assert_eq!(port_for(&mut g, [10, 0, 0, 1]), Some(2)); // odd: priority 10 wins
    assert_eq!(port_for(&mut g, [10, 0, 0, 2]), Some(3));
    assert_eq!(port_for(&mut g, [11, 0, 0, 2]), Some(1));
}

#[test]
fn range_matches_inclusive_bounds_by_priority() {
    let (b, _h, t, route) = route_table(MatchKind::Range);
    let mut g = b.load();
    let r = |lo: u32, hi: u32| KeyMatch::Range {
        lo: lo as u128,
        hi: hi as u128,
    };
    let tb = &mut g.tables_mut()[t as usize];
    tb.insert(entry(vec![r(0x0a00_0000, 0x0a00_00ff)], route, &[1], 1))
        .unwrap();
    tb.insert(entry(vec![r(0x0a00_0010, 0x0a00_0010)], route, &[2], 2))
        .unwrap();
    assert_eq!(port_for(&mut g, [10, 0, 0, 0]), Some(1));
    assert_eq!(port_for(&mut g, [10, 0, 0, 255]), Some(1));
    assert_eq!(port_for(&mut g, [10, 0, 0, 16]), Some(2));
    assert_eq!(port_for(&mut g, [10, 0, 1, 0]), None);
}

#[test]
fn a_key_slice_matches_only_its_bits() {
    let (mut b, _h, t, route) = route_table(MatchKind::Exact);
    b.g.control.tables[t as usize].keys[0].slice = Some((31, 24));
    let mut g = b.load();
    g.tables_mut()[t as usize]
        .insert(entry(vec![KeyMatch::Exact(10)], route, &[4], 0))
        .unwrap();
    assert_eq!(port_for(&mut g, [10, 200, 0, 1]), Some(4));
    assert_eq!(port_for(&mut g, [11, 0, 0, 1]), None);
    // The key is 8 bits wide now: a 9-bit value does not fit.
    let err = g.tables_mut()[t as usize]
        .insert(entry(vec![KeyMatch::Exact(256)], route, &[4], 0))
        .unwrap_err();
    assert!(matches!(err, TableError::Invalid { .. }));
}

#[test]
fn vliw_operations_read_the_phv_before_the_action() {
    let (mut b, h) = Builder::router(1);
    // Swap the MACs and decrement the TTL in one instruction; a deposit into the low
    // nibble of version_ihl leaves the version alone.
    let swap = b.action(
        "swap",
        &[],
        vec![
            set(h.eth_dst, Operand::Field(h.eth_src)),
            set(h.eth_src, Operand::Field(h.eth_dst)),
            op(h.ttl, AluOp::Sub, Operand::Field(h.ttl), Operand::Const(1)),
            Op {
                dst: h.ver_ihl,
                dst_slice: Some((3, 0)),
                alu: AluOp::Set,
                a: Operand::Const(7),
                b: Operand::Const(0),
            },
        ],
    );
    let t = b.table("t", 0, &[], &[swap], swap, vec![], 1);
    b.chain(&[Node::Table(t)]);
    let mut g = b.load();
    let frame = ipv4_frame([1, 1, 1, 1], 64);
    let mut data = frame.clone();
    g.process(&mut data, &at(0, 0)).unwrap();
    assert_eq!(&data[0..6], &frame[6..12]);
    assert_eq!(&data[6..12], &frame[0..6]);
    assert_eq!(data[14], 0x47);
    assert_eq!(data[22], 63);
    // The deparser recomputed the checksum over the new header.
    let sum = ipv4_checksum(&data[14..34]);
    assert_eq!(u16::from_be_bytes([data[24], data[25]]), sum);
    assert_ne!(&data[24..26], &frame[24..26]);
}

#[test]
fn disjoint_slices_of_one_field_are_written_together() {
    // `ttl = 4w0xa ++ ttl[3:0]`-like: two deposits into one field, read before either.
    let (mut b, h) = Builder::router(1);
    let a = b.action(
        "halves",
        &[],
        vec![
            Op {
                dst: h.ttl,
                dst_slice: Some((7, 4)),
                alu: AluOp::Set,
                a: Operand::Const(0xa),
                b: Operand::Const(0),
            },
            Op {
                dst: h.ttl,
                dst_slice: Some((3, 0)),
                alu: AluOp::Add,
                a: Operand::Slice {
                    field: h.ttl,
                    hi: 7,
                    lo: 4,
                },
                b: Operand::Const(1),
            },
        ],
    );
    let t = b.table("t", 0, &[], &[a], a, vec![], 1);
    b.chain(&[Node::Table(t)]);
    let mut g = b.load();
    g.process(&mut ipv4_frame([1, 1, 1, 1], 0x47), &at(0, 0))
        .unwrap();
    // High nibble 0xa; low nibble = old high nibble (4) + 1.
    assert_eq!(get(&g, h.ttl), 0xa5);
}

#[test]
fn next_table_follows_hit_miss_and_action_run() {
    let (mut b, h) = Builder::router(3);
    let a_hit = b.action("a_hit", &[], vec![]);
    let a_other = b.action("a_other", &[], vec![]);
    let nop = b.action("nop", &[], vec![]);
    let to = |b: &mut Builder, name: &str, port: u128| {
        let a = b.action(
            name,
            &[],
            vec![
                set(h.port, Operand::Const(port)),
                set(h.port_valid, Operand::Const(1)),
            ],
        );
        b.table(name, 2, &[], &[a], a, vec![], 1)
    };
    let t_hit = to(&mut b, "on_hit", 1);
    let t_miss = to(&mut b, "on_miss", 2);
    let t_other = to(&mut b, "on_other", 3);
    let first = b.table(
        "first",
        0,
        &[(h.ttl, MatchKind::Exact)],
        &[a_hit, a_other],
        nop,
        vec![],
        4,
    );
    let second = b.table(
        "second",
        1,
        &[(h.ttl, MatchKind::Exact)],
        &[a_hit, a_other],
        nop,
        vec![],
        4,
    );
    b.g.control.tables[first as usize].next = TableNext::HitMiss {
        hit: Some(Node::Table(second)),
        miss: Some(Node::Table(t_miss)),
    };
    b.g.control.tables[second as usize].next = TableNext::ByAction {
        cases: vec![(a_hit, Some(Node::Table(t_hit)))],
        default: Some(Node::Table(t_other)),
    };
    b.g.control.entry = Some(Node::Table(first));
    let mut g = b.load();
    for (ttl, a) in [(10, a_hit), (20, a_other)] {
        for t in [first, second] {
            g.tables_mut()[t as usize]
                .insert(entry(vec![KeyMatch::Exact(ttl)], a, &[], 0))
                .unwrap();
        }
    }
    let port = |g: &mut pipelines::pipe::LoadedGress, ttl| {
        g.process(&mut ipv4_frame([1, 1, 1, 1], ttl), &at(0, 0))
            .unwrap()
            .ucast_egress_port
    };
    assert_eq!(port(&mut g, 10), Some(1));
    assert_eq!(port(&mut g, 20), Some(3));
    assert_eq!(port(&mut g, 30), Some(2));
}

// ---------------------------------------------------------------------------------------
// Externs

/// Predicate "condition 0 holds".
const C0: Predicate = Predicate(0xaaaa);

/// A program counting packets per ingress port in a register, with the old count
/// returned to `meta.count` when it is below a threshold from the packet's TTL.
fn register_program() -> (Builder, Hdr, FieldId) {
    let (mut b, h) = Builder::router(2);
    let out = b.field("meta.count", 32);
    b.g.control.registers.push(RegisterArray {
        name: "Ingress.per_port".into(),
        stage: 1,
        width: 32,
        size: 4,
        init: 0,
    });
    b.g.control.salus.push(StatefulAlu {
        name: "Ingress.count_below_ttl".into(),
        register: 0,
        conditions: vec![SaluCond {
            a: SaluOperand::Register,
            op: CmpOp::Lt,
            b: SaluOperand::Field(h.ttl),
        }],
        updates: vec![SaluUpdate {
            when: C0,
            alu: AluOp::Add,
            a: SaluOperand::Register,
            b: SaluOperand::Const(1),
        }],
        outputs: vec![SaluOutput {
            when: Predicate::ALWAYS,
            value: SaluValue::New,
        }],
        minmax: None,
    });
    let a = b.action_x(
        "count",
        &[],
        vec![],
        vec![ExternCall::Stateful {
            salu: 0,
            index: ExternIndex::Operand(Operand::Field(h.ingress_port)),
            dst: Some(out),
            lane_dst: None,
        }],
    );
    let t = b.table("count", 1, &[], &[a], a, vec![], 1);
    b.chain(&[Node::Table(t)]);
    (b, h, out)
}

#[test]
fn stateful_alu_read_modify_writes_one_element_per_packet() {
    let (b, _h, out) = register_program();
    let mut g = b.load();
    for (i, (port, ttl, want)) in [(1, 64, 1), (1, 64, 2), (2, 64, 1), (1, 2, 2), (5, 64, 3)]
        .into_iter()
        .enumerate()
    {
        // Port 5 wraps to element 1 (index modulo the array size).
        g.process(&mut ipv4_frame([1, 1, 1, 1], ttl), &at(i as u64, port))
            .unwrap();
        assert_eq!(get(&g, out), want, "packet {i}");
    }
    assert_eq!(g.register_read(0, 1).unwrap(), 3);
    assert_eq!(g.register_read(0, 2).unwrap(), 1);
    g.register_write(0, 2, 0).unwrap();
    assert_eq!(g.register(0).unwrap().values(), &[0, 3, 0, 0]);
    let err = g.register_read(0, 4).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Ingress.per_port: index 4 is out of range (the array has 4 elements, 0 to 3)"
    );
    assert!(matches!(
        g.register_write(0, 0, 1 << 32),
        Err(ControlError::BadValue { .. })
    ));
}

#[test]
fn meters_colour_by_rfc2698_in_simulated_time() {
    let (mut b, _h) = Builder::router(4);
    let colour = b.field("meta.colour", 8);
    b.g.control.meters.push(MeterArray {
        name: "Ingress.m".into(),
        stage: 3,
        size: 2,
        unit: CountKind::Bytes,
        byte_count_adjust: 0,
    });
    let a = b.action_x(
        "meter",
        &[],
        vec![],
        vec![ExternCall::Meter {
            meter: 0,
            index: ExternIndex::Operand(Operand::Const(1)),
            dst: colour,
        }],
    );
    let t = b.table("m", 3, &[], &[a], a, vec![], 1);
    b.chain(&[Node::Table(t)]);
    let mut g = b.load();
    // Frames are 42 bytes. CIR = 42 B/us, PIR = 84 B/us, CBS = 63 B, PBS = 126 B.
    g.meter_configure(
        0,
        1,
        MeterConfig {
            cir: 42_000_000,
            pir: 84_000_000,
            cbs: 63,
            pbs: 126,
        },
    )
    .unwrap();
    // The clock is 1 GHz, so a packet issued at cycle c is in stage 3 at
    // (c + 4 + 2 + 2 + 2) ns; the differences between packets are the issue differences.
    // c=100: Tp=126, Tc=63: green; Tp=84, Tc=21.
    // c=101 (+1 ns adds 0.084 / 0.042): Tp=84.084 >= 42, Tc=21.042 < 42: yellow; Tp=42.084.
    // c=102: Tp=42.168 >= 42, Tc=21.084 < 42: yellow; Tp=0.168.
    // c=103: Tp=0.252 < 42: red.
    // c=1103 (+1000 ns adds 84 / 42): Tp=84.252, Tc=min(63, 63.126)=63: green.
    let mut seq = vec![];
    for c in [100, 101, 102, 103, 1103] {
        let mut f = ipv4_frame([1, 1, 1, 1], 64);
        assert_eq!(f.len(), 42);
        g.process(&mut f, &at(c, 0)).unwrap();
        seq.push(get(&g, colour) as u8);
    }
    assert_eq!(seq, vec![GREEN, YELLOW, YELLOW, RED, GREEN]);
    let r = g.meter_read(0, 1).unwrap();
    // Tp = 84.252 - 42 = 42.252 B; Tc = 63 - 42 = 21 B.
    assert_eq!(
        (r.tp_exact, r.tc_exact),
        (42_252_000_000_000, 21_000_000_000_000)
    );
    // Meter 0 is not configured: always green.
    assert!(g.meter_read(0, 0).unwrap().config.is_none());
    assert!(g.meter_read(0, 2).is_err());
}

/// A byte meter whose array the control plane gave +20 bytes (the wire's preamble, SFD and
/// gap) counts each 42-byte frame as 62 bytes: at 62 B/us with 62-byte bursts, frames 1000 ns
/// apart stay green and one 999 ns after is red, where unadjusted 42-byte frames would pass.
/// The adjustment shows in the readout and in `state.txt`'s text; one outside the profile's
/// bits is refused naming the array.
#[test]
fn a_meters_byte_count_adjustment_counts_the_wire_overhead() {
    let (mut b, _h) = Builder::router(4);
    let colour = b.field("meta.colour", 8);
    b.g.control.meters.push(MeterArray {
        name: "Ingress.m".into(),
        stage: 3,
        size: 1,
        unit: CountKind::Bytes,
        byte_count_adjust: 0,
    });
    let a = b.action_x(
        "meter",
        &[],
        vec![],
        vec![ExternCall::Meter {
            meter: 0,
            index: ExternIndex::Operand(Operand::Const(0)),
            dst: colour,
        }],
    );
    let t = b.table("m", 3, &[], &[a], a, vec![], 1);
    b.chain(&[Node::Table(t)]);
    let mut g = b.load();
    let config = MeterConfig {
        cir: 62_000_000,
        pir: 62_000_000,
        cbs: 62,
        pbs: 62,
    };
    let colours = |g: &mut LoadedGress, cycles: &[u64]| {
        g.meter_configure(0, 0, config).unwrap();
        let mut seq = vec![];
        for &c in cycles {
            let mut f = ipv4_frame([1, 1, 1, 1], 64);
            assert_eq!(f.len(), 42);
            g.process(&mut f, &at(c, 0)).unwrap();
            seq.push(get(g, colour) as u8);
        }
        seq
    };
    assert_eq!(colours(&mut g, &[100, 1100, 2099]), [GREEN, GREEN, GREEN]);
    g.apply(&ResolvedControlOp::SetMeterByteCountAdjust {
        gress: Gress::Ingress,
        meter: 0,
        bytes: 20,
    })
    .unwrap();
    assert_eq!(
        colours(&mut g, &[3000, 4000, 5000, 5999]),
        [GREEN, GREEN, GREEN, RED]
    );
    let state = g.state(Time(6_000_000));
    assert_eq!(state.meters[0].byte_count_adjust, 20);
    let text = pipelines::readout::text::state(&ChipState {
        at_ps: 6_000_000,
        cycle: 6000,
        pipes: vec![Pipes {
            pipes: vec![0],
            state: PipeState {
                ingress: state,
                egress: Default::default(),
            },
        }],
    });
    assert!(
        text.contains("Ingress.m: meter of bytes, 1 meter; 1 configured; each packet's length adjusted by +20 bytes"),
        "{text}"
    );
    // The profile's 14 bits hold -8192 to 8191.
    let e = g
        .meter_set_byte_count_adjust(0, 8192)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("Ingress.m") && e.contains("-8192 to 8191"),
        "{e}"
    );
    g.meter_set_byte_count_adjust(0, -8192).unwrap();
    assert_eq!(g.state(Time(0)).meters[0].byte_count_adjust, -8192);
}

#[test]
fn counters_count_packets_and_bytes_indexed_and_direct() {
    let (mut b, h) = Builder::router(1);
    b.g.control.counters.push(CounterArray {
        name: "Ingress.per_port".into(),
        stage: 0,
        size: 4,
        kind: CountKind::PacketsAndBytes,
    });
    let a = b.action_x(
        "hit",
        &[],
        vec![],
        vec![ExternCall::Count {
            counter: 0,
            index: ExternIndex::Operand(Operand::Field(h.ingress_port)),
        }],
    );
    let t = b.table(
        "by_ttl",
        0,
        &[(h.ttl, MatchKind::Exact)],
        &[a],
        a,
        vec![],
        4,
    );
    b.g.control.tables[t as usize].direct_counter = Some(CountKind::PacketsAndBytes);
    b.chain(&[Node::Table(t)]);
    let mut g = b.load();
    g.tables_mut()[t as usize]
        .insert(entry(vec![KeyMatch::Exact(64)], a, &[], 0))
        .unwrap();
    for (port, ttl) in [(1, 64), (1, 64), (2, 9)] {
        g.process(&mut ipv4_frame([1, 1, 1, 1], ttl), &at(0, port))
            .unwrap();
    }
    assert_eq!(
        g.counter_read(0, 1).unwrap(),
        Counts {
            packets: 2,
            bytes: 84
        }
    );
    assert_eq!(
        g.counter_read(0, 2).unwrap(),
        Counts {
            packets: 1,
            bytes: 42
        }
    );
    assert_eq!(g.counter_read(0, 0).unwrap(), Counts::default());
    assert_eq!(
        g.direct_counter_read(t, &[KeyMatch::Exact(64)], 0).unwrap(),
        Counts {
            packets: 2,
            bytes: 84
        }
    );
    assert_eq!(
        g.direct_miss_counter_read(t).unwrap(),
        Counts {
            packets: 1,
            bytes: 42
        }
    );
    // Deleting and re-adding an entry starts its count afresh.
    let tb = &mut g.tables_mut()[t as usize];
    tb.delete(&[KeyMatch::Exact(64)], 0).unwrap();
    tb.insert(entry(vec![KeyMatch::Exact(64)], a, &[], 0))
        .unwrap();
    assert_eq!(
        g.direct_counter_read(t, &[KeyMatch::Exact(64)], 0).unwrap(),
        Counts::default()
    );
}

#[test]
fn hash_units_compute_bit_exact_crcs_of_fields() {
    let (mut b, h) = Builder::router(1);
    let h16 = b.field("meta.h16", 16);
    let h32 = b.field("meta.h32", 32);
    let idx = b.field("meta.idx", 8);
    for (name, alg, width) in [("crc16", CRC16, 16), ("crc32", CRC32, 32)] {
        b.g.control.hashes.push(HashUnit {
            name: name.into(),
            stage: 0,
            algorithm: alg,
            fields: vec![h.ip_src, h.ip_dst, h.proto],
            width,
        });
    }
    b.g.control.hashes[1].width = 16; // the two units share 32 bits of hash output
    b.g.control.hashes[0].width = 16;
    b.g.control.counters.push(CounterArray {
        name: "buckets".into(),
        stage: 0,
        size: 16,
        kind: CountKind::Packets,
    });
    let a = b.action_x(
        "hash",
        &[],
        vec![set(idx, Operand::Const(1))],
        vec![
            ExternCall::Hash { hash: 0, dst: h16 },
            ExternCall::Hash { hash: 1, dst: h32 },
            ExternCall::Count {
                counter: 0,
                index: ExternIndex::Hash(0),
            },
        ],
    );
    let t = b.table("hash", 0, &[], &[a], a, vec![], 1);
    b.chain(&[Node::Table(t)]);
    let mut g = b.load();
    g.process(&mut ipv4_frame([192, 168, 1, 7], 64), &at(0, 0))
        .unwrap();
    // Input bytes: src 10.0.0.1, dst 192.168.1.7, protocol 17.
    let input = [10u8, 0, 0, 1, 192, 168, 1, 7, 17];
    let want16 = crc::Crc::<u16>::new(&crc::CRC_16_ARC).checksum(&input) as u128;
    let want32 = crc::Crc::<u32>::new(&crc::CRC_32_ISO_HDLC).checksum(&input) as u128;
    assert_eq!(get(&g, h16), want16);
    assert_eq!(get(&g, h32), want32 & 0xffff);
    let bucket = (want16 % 16) as u32;
    assert_eq!(g.counter_read(0, bucket).unwrap().packets, 1);
}

#[test]
fn random_numbers_are_seeded_and_repeatable() {
    let (mut b, _h) = Builder::router(1);
    let r = b.field("meta.rnd", 12);
    let a = b.action_x("rnd", &[], vec![], vec![ExternCall::Random { dst: r }]);
    let t = b.table("rnd", 0, &[], &[a], a, vec![], 1);
    b.chain(&[Node::Table(t)]);
    let run = |seed: u64| {
        let mut g =
            pipelines::pipe::LoadedGress::load(Gress::Ingress, b.g.clone(), &spec(), clock(), seed)
                .unwrap();
        (0..32)
            .map(|i| {
                g.process(&mut ipv4_frame([1, 1, 1, 1], 64), &at(i, 0))
                    .unwrap();
                get(&g, r)
            })
            .collect::<Vec<_>>()
    };
    let a1 = run(1);
    assert_eq!(a1, run(1), "same seed, same numbers");
    assert_ne!(a1, run(2), "another seed, other numbers");
    assert!(a1.iter().all(|&v| v < 4096), "numbers fit the 12-bit field");
    assert!(a1.iter().any(|&v| v >= 2048), "and use its top bit");
}

/// Answers every read with `value` and records what it was asked.
struct Depths {
    value: u32,
    asked: std::cell::RefCell<Vec<(u16, u16, Time)>>,
}

impl pipelines::mau::DepthView for Depths {
    fn depth_cells(&self, port: u16, queue: u16, at: Time) -> u32 {
        self.asked.borrow_mut().push((port, queue, at));
        self.value
    }
}

#[test]
fn queue_depth_reads_ask_at_the_stage_time_and_saturate() {
    let (mut b, h) = Builder::router(3);
    let d = b.field("meta.depth", 12);
    let big = b.field("meta.big", 8);
    let a = b.action_x(
        "rd",
        &[],
        vec![],
        vec![
            ExternCall::QueueDepth {
                port: Operand::Field(h.ttl),
                queue: Operand::Const(3),
                dst: d,
            },
            // A port beyond the 16-bit ids reads 0 without asking.
            ExternCall::QueueDepth {
                port: Operand::Const(1 << 16),
                queue: Operand::Const(0),
                dst: big,
            },
        ],
    );
    let t = b.table("rd", 2, &[], &[a], a, vec![], 1);
    b.chain(&[Node::Table(t)]);
    let mut g = b.load();
    let view = Depths {
        value: 5_000, // more than 12 bits hold
        asked: Default::default(),
    };
    g.process_with_depths(&mut ipv4_frame([1, 1, 1, 1], 9), &at(100, 0), &view)
        .unwrap();
    let entry = g.timing().stage_entry(2) as u64;
    assert!(entry > g.timing().stage_entry(0) as u64);
    assert_eq!(
        *view.asked.borrow(),
        vec![(9, 3, clock().time_of(100 + entry))]
    );
    assert_eq!(get(&g, d), 4095, "saturated at the field's width");
    assert_eq!(get(&g, big), 0);
    // Without a view (`process`), every read is 0.
    g.process(&mut ipv4_frame([1, 1, 1, 1], 9), &at(101, 0))
        .unwrap();
    assert_eq!(get(&g, d), 0);
}

// ---------------------------------------------------------------------------------------
// Control plane

#[test]
fn control_plane_ops_resolve_by_name_and_a_full_table_refuses() {
    let (b, _h, t, _route) = route_table(MatchKind::Exact);
    let (rb, _rh, _out) = register_program();
    let program = Program {
        name: "p".into(),
        ingress: b.g.clone(),
        egress: rb.g.clone(),
    };
    let mut g = b.load();
    let add = |port: u64, dst: &str| {
        ControlOp::AddEntry(EntrySpec {
            table: "route".into(),
            key: vec![KeySpec::Exact(Value::Text(dst.into()))],
            action: "route".into(),
            args: vec![Value::Int(port)],
            priority: 0,
        })
    };
    for i in 0..8 {
        let op = resolve_op(&program, &add(i, &format!("10.0.0.{i}"))).unwrap();
        g.apply(&op).unwrap();
    }
    let op = resolve_op(&program, &add(9, "10.0.0.9")).unwrap();
    assert_eq!(
        g.apply(&op).unwrap_err().to_string(),
        "table route is full (8 entries)"
    );
    assert_eq!(g.tables()[t as usize].len(), 8);
    assert_eq!(port_for(&mut g, [10, 0, 0, 3]), Some(3));
    // A register write resolves into the egress gress (by suffix) and is refused here.
    let w = resolve_op(
        &program,
        &ControlOp::WriteRegister(RegisterWrite {
            register: "per_port".into(),
            index: 1,
            value: Value::Int(5),
        }),
    )
    .unwrap();
    assert_eq!(w.gress(), Gress::Egress);
    assert!(g.apply(&w).is_err());
    let mut eg =
        pipelines::pipe::LoadedGress::load(Gress::Egress, rb.g.clone(), &spec(), clock(), 0)
            .unwrap();
    eg.apply(&w).unwrap();
    assert_eq!(eg.register_read(0, 1).unwrap(), 5);
    let missing = ControlOp::WriteRegister(RegisterWrite {
        register: "nope".into(),
        index: 0,
        value: Value::Int(0),
    });
    assert_eq!(
        resolve_op(&program, &missing).unwrap_err(),
        "no register array named `nope` (the program has: Ingress.per_port)"
    );
}
