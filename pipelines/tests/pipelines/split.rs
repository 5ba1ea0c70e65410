//! Tables split across stages: a hit runs its action in the stage of the part holding the
//! entry (seen through the time a queue-depth read asks for), a miss in the last part's
//! stage; the driver's choice of part (exact: the first parts fill first; TCAM: priority
//! order); what the verifier refuses of a split table.

use crate::common::*;
use pipelines::mau::DepthView;
use pipelines::pipe::{stage_features, LoadedGress};
use pipelines::program::*;
use pipelines::time::Time;
use std::cell::RefCell;

/// Records the time of every queue-depth read.
#[derive(Default)]
struct Asked(RefCell<Vec<Time>>);

impl DepthView for Asked {
    fn depth_cells(&self, _port: u16, _queue: u16, at: Time) -> u32 {
        self.0.borrow_mut().push(at);
        0
    }
}

/// A table on the IPv4 destination, split into `parts`, whose actions (`hit(port)` and the
/// default `miss`) each read a queue depth, so the time they ask for says their stage.
fn split_program(kind: MatchKind, parts: &[(u16, u32)]) -> (Builder, Hdr, TableId, ActionId) {
    split_program_keys(&[kind], parts)
}

/// [`split_program`] keyed on the IPv4 destination (`kinds[0]`), then the source (`kinds[1]`,
/// if given).
fn split_program_keys(
    kinds: &[MatchKind],
    parts: &[(u16, u32)],
) -> (Builder, Hdr, TableId, ActionId) {
    let last = parts.last().expect("parts").0;
    let (mut b, h) = Builder::router(last + 1);
    let depth = b.field("meta.depth", 19);
    let read = ExternCall::QueueDepth {
        port: Operand::Const(1),
        queue: Operand::Const(0),
        dst: depth,
    };
    let hit = b.action_x(
        "hit",
        &[("port", 9)],
        vec![set(h.port, Operand::Param(0))],
        vec![read.clone()],
    );
    let miss = b.action_x("miss", &[], vec![], vec![read]);
    let size = parts.iter().map(|p| p.1).sum();
    let t = b.table(
        "big",
        parts[0].0,
        &[h.ip_dst, h.ip_src]
            .into_iter()
            .zip(kinds.iter().copied())
            .collect::<Vec<_>>(),
        &[hit, miss],
        miss,
        vec![],
        size,
    );
    b.g.control.tables[t as usize].parts = parts
        .iter()
        .map(|&(stage, entries)| TablePart { stage, entries })
        .collect();
    b.chain(&[Node::Table(t)]);
    (b, h, t, hit)
}

/// The stage a packet to `dst` issued at cycle 100 ran its action in, and the port it got.
fn stage_of(g: &mut LoadedGress, h: &Hdr, dst: [u8; 4]) -> (u16, u128) {
    let asked = Asked::default();
    g.process_with_depths(&mut ipv4_frame(dst, 64), &at(100, 0), &asked)
        .unwrap();
    let t = asked.0.borrow()[0];
    let stage = (0..g.timing().stages.len())
        .find(|&s| clock().time_of(100 + g.timing().stage_entry(s) as u64) == t)
        .expect("a stage's entry time");
    (stage as u16, get(g, h.port))
}

fn ip(i: u32) -> u128 {
    0x0a00_0000 + i as u128
}

fn add(g: &mut LoadedGress, t: TableId, k: KeyMatch, hit: ActionId, port: u128, priority: u32) {
    g.tables_mut()[t as usize]
        .insert(entry(vec![k], hit, &[port], priority))
        .unwrap();
}

#[test]
fn an_exact_hit_runs_in_its_parts_stage_and_a_miss_in_the_last() {
    let (b, h, t, hit) = split_program(MatchKind::Exact, &[(1, 2), (2, 2), (4, 2)]);
    let mut g = b.load();
    // The first parts fill first: entries 0, 1 in stage 1, 2, 3 in stage 2, 4, 5 in stage 4.
    for i in 0..6 {
        add(&mut g, t, KeyMatch::Exact(ip(i)), hit, i as u128 + 10, 0);
    }
    let want = [1, 1, 2, 2, 4, 4];
    for i in 0..6u8 {
        assert_eq!(
            stage_of(&mut g, &h, [10, 0, 0, i]),
            (want[i as usize], i as u128 + 10),
            "entry {i}"
        );
    }
    assert_eq!(
        stage_of(&mut g, &h, [10, 0, 0, 99]).0,
        4,
        "a miss runs last"
    );
    // A freed place is taken again: a new entry goes into the part that has room.
    let table = &mut g.tables_mut()[t as usize];
    table.delete(&[KeyMatch::Exact(ip(2))], 0).unwrap();
    assert!(table
        .insert(entry(vec![KeyMatch::Exact(ip(7))], hit, &[1], 0))
        .is_ok());
    assert_eq!(stage_of(&mut g, &h, [10, 0, 0, 7]).0, 2);
    let full = g.tables_mut()[t as usize].insert(entry(vec![KeyMatch::Exact(ip(8))], hit, &[1], 0));
    assert_eq!(
        full.unwrap_err().to_string(),
        "table big is full (6 entries)"
    );
}

#[test]
fn tcam_parts_hold_the_entries_in_priority_order() {
    let (b, h, t, hit) = split_program(MatchKind::Ternary, &[(0, 2), (3, 2)]);
    let mut g = b.load();
    let exact = |i| KeyMatch::Ternary {
        value: ip(i),
        mask: 0xffff_ffff,
    };
    // Installed lowest priority first: the driver keeps the two highest in the first part.
    for (i, prio) in [(1, 10), (2, 20), (3, 30), (4, 40)] {
        add(&mut g, t, exact(i), hit, i as u128, prio);
    }
    assert_eq!(stage_of(&mut g, &h, [10, 0, 0, 4]).0, 0);
    assert_eq!(stage_of(&mut g, &h, [10, 0, 0, 3]).0, 0);
    assert_eq!(stage_of(&mut g, &h, [10, 0, 0, 2]).0, 3);
    assert_eq!(stage_of(&mut g, &h, [10, 0, 0, 1]).0, 3);
    // Deleting a first-part entry moves the next one up.
    g.tables_mut()[t as usize].delete(&[exact(4)], 40).unwrap();
    assert_eq!(stage_of(&mut g, &h, [10, 0, 0, 2]).0, 0);
    // Stage 3 holds a TCAM part: it costs the TCAM extra; stage 1 does not.
    assert!(stage_features(&g.program().control, 3).tcam);
    assert!(!stage_features(&g.program().control, 1).tcam);
}

#[test]
fn lpm_parts_hold_longer_prefixes_first() {
    let (b, h, t, hit) = split_program(MatchKind::Lpm, &[(1, 2), (2, 3)]);
    let mut g = b.load();
    let lpm = |v: u128, len| KeyMatch::Lpm {
        value: v,
        prefix_len: len,
    };
    // Ranks: the /32 first, then the /24s in slot (installation) order, then the /8.
    add(&mut g, t, lpm(0x0a00_0000, 8), hit, 1, 0);
    add(&mut g, t, lpm(0x0a01_0000, 24), hit, 2, 0);
    add(&mut g, t, lpm(0x0a02_0000, 24), hit, 3, 0);
    add(&mut g, t, lpm(0x0a03_0005, 32), hit, 4, 0);
    assert_eq!(stage_of(&mut g, &h, [10, 3, 0, 5]), (1, 4));
    assert_eq!(stage_of(&mut g, &h, [10, 1, 0, 9]), (1, 2));
    assert_eq!(stage_of(&mut g, &h, [10, 2, 0, 9]), (2, 3));
    assert_eq!(stage_of(&mut g, &h, [10, 9, 9, 9]), (2, 1));
}

/// The verifier's message for `b`'s program.
fn refused(b: &Builder) -> String {
    match LoadedGress::load(Gress::Ingress, b.g.clone(), &spec(), clock(), 1) {
        Ok(_) => panic!("loaded"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn the_verifier_refuses_malformed_parts() {
    let parts = |b: &mut Builder, t: TableId, p: &[(u16, u32)]| {
        b.g.control.tables[t as usize].parts = p
            .iter()
            .map(|&(stage, entries)| TablePart { stage, entries })
            .collect();
    };
    let (mut b, _, t, _) = split_program(MatchKind::Exact, &[(1, 2), (2, 2)]);
    parts(&mut b, t, &[(1, 2), (1, 2)]);
    assert!(refused(&b).contains("part 1 is in stage 1, not after part 0 (stage 1)"));
    parts(&mut b, t, &[(1, 2), (2, 1)]);
    assert!(refused(&b).contains("the parts hold 3 entries, the table's size is 4"));
    parts(&mut b, t, &[(0, 2), (2, 2)]);
    assert!(refused(&b).contains("the first part is in stage 0, the table in stage 1"));
    parts(&mut b, t, &[(1, 4)]);
    assert!(refused(&b).contains("a split table has at least two parts"));
    parts(&mut b, t, &[(1, 2), (2, 2)]);
    // Control goes on from the last part: a successor before it goes back.
    let nop = b.action("nop", &[], vec![]);
    let after = b.table("after", 1, &[], &[nop], nop, vec![], 1);
    b.chain(&[Node::Table(t), Node::Table(after)]);
    assert!(refused(&b).contains("goes back from stage 2 to stage 1"));
}

#[test]
fn a_split_table_drives_no_extern_array() {
    let (mut b, h, t, _) = split_program(MatchKind::Exact, &[(1, 2), (2, 2)]);
    b.g.control.counters.push(CounterArray {
        name: "hits".into(),
        stage: 1,
        size: 4,
        kind: CountKind::Packets,
    });
    let count = b.action_x(
        "count",
        &[],
        vec![set(h.port, Operand::Const(1))],
        vec![ExternCall::Count {
            counter: 0,
            index: ExternIndex::Operand(Operand::Const(0)),
        }],
    );
    b.g.control.tables[t as usize].actions.push(count);
    let e = refused(&b);
    assert!(
        e.contains("action count drives counter array hits, but the table is split across stages"),
        "{e}"
    );
}

#[test]
fn a_direct_counter_counts_in_every_part() {
    let (mut b, _h, t, hit) = split_program(MatchKind::Exact, &[(1, 1), (2, 1)]);
    b.g.control.tables[t as usize].direct_counter = Some(CountKind::Packets);
    let mut g = b.load();
    add(&mut g, t, KeyMatch::Exact(ip(0)), hit, 1, 0);
    add(&mut g, t, KeyMatch::Exact(ip(1)), hit, 2, 0);
    for dst in [[10, 0, 0, 1], [10, 0, 0, 1], [10, 0, 0, 0], [10, 0, 0, 9]] {
        g.process(&mut ipv4_frame(dst, 64), &at(1, 0)).unwrap();
    }
    let read = |k| {
        g.direct_counter_read(t, &[KeyMatch::Exact(ip(k))], 0)
            .unwrap()
            .packets
    };
    assert_eq!((read(0), read(1)), (1, 2));
    assert_eq!(g.direct_miss_counter_read(t).unwrap().packets, 1);
}

#[test]
fn lpm_parts_beside_an_exact_key_hold_longer_prefixes_first() {
    let (b, h, t, hit) = split_program_keys(&[MatchKind::Lpm, MatchKind::Exact], &[(1, 2), (2, 3)]);
    let mut g = b.load();
    // Every frame comes from 10.0.0.1 (`ipv4_frame`).
    let add = |g: &mut LoadedGress, dst: u128, len, port| {
        let key = vec![
            KeyMatch::Lpm {
                value: dst,
                prefix_len: len,
            },
            KeyMatch::Exact(0x0a00_0001),
        ];
        g.tables_mut()[t as usize]
            .insert(entry(key, hit, &[port], 0))
            .unwrap();
    };
    // Ranks as in an LPM table alone: the /32, the /24s in slot order, then the /8.
    add(&mut g, 0x0a00_0000, 8, 1);
    add(&mut g, 0x0a01_0000, 24, 2);
    add(&mut g, 0x0a02_0000, 24, 3);
    add(&mut g, 0x0a03_0005, 32, 4);
    assert_eq!(stage_of(&mut g, &h, [10, 3, 0, 5]), (1, 4));
    assert_eq!(stage_of(&mut g, &h, [10, 1, 0, 9]), (1, 2));
    assert_eq!(stage_of(&mut g, &h, [10, 2, 0, 9]), (2, 3));
    assert_eq!(stage_of(&mut g, &h, [10, 9, 9, 9]), (2, 1));
}
