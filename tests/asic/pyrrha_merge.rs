//! Pyrrha's MERGE and soft-merging (§IV-A, §IV-C, Fig. 6; the digest's B.5 item 6) on
//! `programs/pyrrha/merge.ron`: three chips in a line, A - B - C. B's port to C (root id
//! 4) claims to be the root first; C's port to c0 (root id 6) turns out to be the real root
//! of a0's flow. Root ids: A's ports 0-2 are 0-2, B's 3-5, C's 6-9.

use crate::pyrrha::assert_every_iq_back;
use asic_bench::bench::Bench;
use asic_deploy::{build::build, run as net};
use asic_net::ctrl::{build_group, GROUP_PAUSE_ETHERTYPE};
use asic_net::packet::{build as frame_of, parse, Header, DATA};
use pipelines::time::Time;
use std::collections::BTreeMap;
use std::path::Path;

const FILE: &str = "programs/pyrrha/merge.ron";
/// B's port to C, the false-positive root; C's port to c0, the real one.
const U: u16 = 4;
const P: u16 = 6;

/// (opcode, hop, root, old root, old hop) of a Pyrrha frame.
type Fields = (u8, u8, u16, u16, u8);

/// The [`Fields`] of frame `f`.
fn fields(f: &[u8]) -> Fields {
    let be = |i: usize| u16::from_be_bytes([f[i], f[i + 1]]);
    (f[14], f[15], be(16), be(18), f[20])
}

/// Packets of each flow (by source address) that arrived before one sent earlier.
fn overtaking(packets: &[Vec<u8>]) -> (usize, usize) {
    let mut last: BTreeMap<u32, u32> = BTreeMap::new();
    let (mut n, mut late) = (0, 0);
    for p in packets {
        let Some(h) = parse(p) else { continue };
        if h.flags != DATA {
            continue;
        }
        n += 1;
        if last.get(&h.src_ip).is_some_and(|&s| h.seq <= s) {
            late += 1;
        }
        last.insert(h.src_ip, h.seq);
    }
    (n, late)
}

/// `merge.ron`'s ports: A's to B, B's from A, C's to c1; how soon after the MERGE leaves
/// B A has moved its IQs (µs).
struct Ports {
    a_to_b: u16,
    b_from_a: u16,
    c_to_c1: u16,
    merge_us: u64,
}

/// The file's ports, all in pipe 0 of each chip.
const ONE_PIPE: Ports = Ports {
    a_to_b: 2,
    b_from_a: 2,
    c_to_c1: 1,
    merge_us: 2,
};

/// The same line on ports of every pipe (A: a0 0, a1 17, to B 33; B: b0 0, to C 17, from A
/// 34; C: c0 0, c1 17, c2 33, from B 50): each chip's ports span pipes, and in the same
/// order, so the root ids stay. The MERGE takes one recirculated pass more at A (to every
/// pipe first): 1 µs.
const SPREAD: Ports = Ports {
    a_to_b: 33,
    b_from_a: 34,
    c_to_c1: 17,
    merge_us: 3,
};
const RENUMBERED: [(&str, &str); 9] = [
    ("\"A:1\"", "\"A:17\""),
    ("\"A:2\"", "\"A:33\""),
    ("\"B:2\"", "\"B:34\""),
    ("\"B:1\"", "\"B:17\""),
    ("\"C:3\"", "\"C:50\""),
    ("\"C:1\"", "\"C:17\""),
    ("\"C:2\"", "\"C:33\""),
    ("(node: \"B\", port: 2)", "(node: \"B\", port: 34)"),
    ("(node: \"C\", port: 1)", "(node: \"C\", port: 17)"),
];

/// B.5 item 6 in a network. B's port to C claims the root (PAUSE(4, hop 1) to A), then C
/// pauses B for its port to c0: B's port resigns and A gets MERGE(new 6 at hop 2, old 4 at
/// hop 1), and no RESUME(4) for the PAUSE it had sent (the root is gone, not resumed). A
/// resumes its IQ for 4 at once (soft-merging) and pauses a second IQ, the new root's,
/// which waits behind the soft-merging one. No flow's packets arrive out of order at c0 or
/// c1, nothing is lost, no flow waits in a queue paused for a port it does not cross, and
/// at the end every IQ is back on its stack with no state left (the `iq_next` links too).
#[test]
fn a_false_root_merges_into_the_real_one_without_reordering() {
    merges_without_reordering(&ONE_PIPE);
}

/// The same on chips whose ports span pipes: every pipe keeps its copy of the root tables
/// and its own ports' upstream maps, so a0's and a1's packets (pipes 0 and 1) find the IQs
/// A's port to B (pipe 2) was given, the MERGE reaches every pipe of A, and B's OQ resigns
/// in the pipe of its port from A (1) when C's PAUSE came in on its port to C (pipe 1 too
/// here, but the INSTALL goes to all). Without the copies a0's and a1's packets would stay
/// in the OQ of A's port to B and no IQ would be paused.
#[test]
fn a_false_root_merges_without_reordering_on_chips_whose_ports_span_pipes() {
    merges_without_reordering(&SPREAD);
}

fn merges_without_reordering(ports: &Ports) {
    let dir = tempfile::tempdir().unwrap();
    let mut text = std::fs::read_to_string(FILE).unwrap();
    if ports.a_to_b != ONE_PIPE.a_to_b {
        for (from, to) in RENUMBERED {
            assert!(text.contains(from), "{from}");
            text = text.replace(from, to);
        }
    }
    let s = ron::from_str(&text).unwrap();
    let run = net::run_detailed(s, Path::new("programs/pyrrha"), Some(dir.path())).unwrap();
    let r = &run.record;
    let pcap = |name: &str| -> Vec<(u64, Vec<u8>)> {
        asic_io::pcap::read_pcap(&dir.path().join(name))
            .unwrap()
            .into_iter()
            .map(|f| (f.ts_ns as u64 * 1000, f.data))
            .collect()
    };
    let frames: Vec<(u64, Fields)> = pcap(&format!("B-port{}.pcap", ports.b_from_a))
        .into_iter()
        .filter(|(_, d)| d.len() >= 22 && d[12..14] == GROUP_PAUSE_ETHERTYPE.to_be_bytes())
        .map(|(t, d)| (t, fields(&d)))
        .collect();
    println!("frames B -> A: {frames:?}");
    let merge = frames
        .iter()
        .position(|(_, f)| f.0 == 3)
        .expect("B sent a MERGE");
    assert_eq!(frames[merge].1, (3, 2, P, U, 1));
    assert_eq!(frames[0].1, (1, 1, U, 0, 0), "B:1 first claimed the root");
    assert!(frames[..merge].iter().all(|(_, f)| f.2 == U));
    // No RESUME of the resigned root before B claims it again.
    let after = frames[merge + 1..].iter().find(|(_, f)| f.2 == U).unwrap();
    assert_eq!(after.1 .0, 1, "{after:?}");
    // A: the IQ for 4 (100) resumed, the one for 6 (99) paused, soon after the MERGE.
    let (at, within) = (frames[merge].0, ports.merge_us * 1_000_000);
    let soon = |q: u16, paused: bool| {
        r.pauses.iter().any(|p| {
            p.node == "A"
                && (p.port, p.class, p.paused) == (ports.a_to_b, q, paused)
                && (at..at + within).contains(&p.at_ps)
        })
    };
    assert!(soon(100, false) && soon(99, true));
    // In order at both receivers.
    for port in [
        "C-port0.pcap".to_string(),
        format!("C-port{}.pcap", ports.c_to_c1),
    ] {
        let packets: Vec<Vec<u8>> = pcap(&port).into_iter().map(|(_, d)| d).collect();
        let (n, late) = overtaking(&packets);
        println!("{port}: {n} data packets, {late} out of order");
        assert!(n > 700);
        assert_eq!(late, 0, "{port}");
    }
    let c = asic_report::metrics::conservation(r);
    assert_eq!((c.received, c.dropped, c.in_flight), (c.sent, 0, 0));
    let hol = r.hol.as_ref().unwrap();
    assert!(hol.flows_checked > 100);
    assert_eq!(hol.violations.len(), 0, "{:?}", hol.violations);
    assert_every_iq_back(&run);
}

/// A of `merge.ron` on the bench, with what B would send it on port 2 and packets from a0
/// (port 0, to c0) and a1 (port 1, to c1), 10 of each from 1 µs and 10 more from 8 µs
/// (`frames_from_b` at their times in ns). Returns the bench after the run.
fn a_on_the_bench(frames_from_b: Vec<(u64, Vec<u8>)>) -> Bench {
    let s = net::load(Path::new(FILE)).unwrap();
    let net = build(s, Path::new("programs/pyrrha")).unwrap();
    // Hosts in the file's order: a0, a1, b0, c0, c1, c2.
    let ip = &net.topology.host_ips;
    let (a0, a1, c0, c1) = (ip[0], ip[1], ip[3], ip[4]);
    let mut bench = Bench::on_chip(net.chips.into_iter().next().unwrap(), "pyrrha".into());
    bench.keep_departures();
    let data = |src, dst, flow_id, first: u32, at_ns: u64| -> Vec<(Time, Vec<u8>)> {
        (0..10)
            .map(|i| {
                let h = Header {
                    src_ip: src,
                    dst_ip: dst,
                    flags: DATA,
                    flow_id,
                    seq: first + i,
                    ..Header::default()
                };
                let mut f = Vec::new();
                frame_of(&mut f, &h, 1000);
                (Time((at_ns + 200 * i as u64) * 1000), f)
            })
            .collect()
    };
    let mut from_a0 = data(a0, c0, 1, 0, 1_000);
    from_a0.extend(data(a0, c0, 1, 10, 8_000));
    let mut from_a1 = data(a1, c1, 2, 0, 1_100);
    from_a1.extend(data(a1, c1, 2, 10, 8_100));
    bench.add_frames(0, from_a0).unwrap();
    bench.add_frames(1, from_a1).unwrap();
    let timed = frames_from_b
        .into_iter()
        .map(|(ns, f)| (Time(ns * 1000), f))
        .collect();
    bench.add_frames(2, timed).unwrap();
    bench.run().unwrap();
    bench
}

/// A Pyrrha frame from B's port 2 (`asic_net::ctrl`'s flow-group frame): `opcode` (1 PAUSE,
/// 2 RESUME, 3 MERGE), the root and its hop, the old root and its hop.
fn frame(opcode: u8, hop: u8, root: u16, old: u16, old_hop: u8) -> Vec<u8> {
    build_group(
        [0x02, 0xfe, 0, 1, 0, 2],
        opcode,
        (root, hop),
        (old, old_hop),
    )
}

/// On A's port 2 to B: root 4's entry, root 6's entry, the IQ waiting behind IQ 100, the
/// PAUSEs counted on IQs 100 and 99, the free IQs.
fn merge_state(bench: &Bench) -> (u64, u64, u64, [u64; 2], u64) {
    let c = bench.chip();
    let reg = |name: &str, i: u32| c.register_read_by_name(0, name, i).unwrap();
    (
        reg("assign1", 2 << 12 | U as u32),
        reg("assign2", 2 << 12 | P as u32),
        reg("iq_next", 2 << 7 | 100),
        [
            reg("iq_paused", 2 << 7 | 100),
            reg("iq_paused", 2 << 7 | 99),
        ],
        reg("top", 2),
    )
}

/// A after its frames and packets: nothing left on port 2 (no assignment, link, count or
/// IQ given out, IQ 100 running) and both flows' 20 packets each sent on in order.
fn assert_drained_in_order(bench: &Bench) {
    assert_eq!(merge_state(bench), (0, 0, 0, [0, 0], 100));
    assert!(!bench.chip().tm().is_queue_paused(2, 100));
    let out: Vec<Vec<u8>> = bench
        .departures()
        .iter()
        .filter(|d| d.port == 2)
        .map(|d| d.data.clone())
        .collect();
    assert_eq!(overtaking(&out), (40, 0));
}

/// B.5 item 6 on A alone. Root 4 (B:1) is paused twice (two PAUSEs outstanding, so that
/// IQ 100 stays paused through the MERGE and what it did can be read), and A's IQ 100 holds
/// the first 10 packets of a0 and of a1. MERGE(new 6 at hop 2, old 4) at 5 µs takes one
/// PAUSE off IQ 100, marks root 4's entry soft-merging (bit 7: 0x80 | 100) and gives root 6
/// IQ 99, counted once as waiting behind IQ 100 (`iq_next`). The next 10 of a0's packets,
/// which cross 6, go to IQ 99; a1's, which do not, still to IQ 100 behind its earlier ones.
/// Then RESUME(4) at 12 µs: IQ 100 drains and is released, which lifts IQ 99; that drains
/// and is released too. Each flow leaves A in order, a0's earlier packets (from IQ 100)
/// before its later ones (from IQ 99).
#[test]
fn a_merge_makes_the_old_iq_soft_merging_and_the_new_one_wait_behind_it() {
    let pause = frame(1, 1, U, 0, 0);
    let merge = frame(3, 2, P, U, 1);
    let held = a_on_the_bench(vec![
        (0, pause.clone()),
        (300, pause.clone()),
        (5_000, merge.clone()),
    ]);
    let c = held.chip();
    let depth = |q: u16| c.tm().depth(2, q).0;
    assert_eq!(merge_state(&held), (0x80 | 100, 99, 99, [1, 1], 98));
    assert!(c.tm().is_queue_paused(2, 100) && c.tm().is_queue_paused(2, 99));
    // 30 packets wait in IQ 100, a0's last 10 in IQ 99.
    assert!(depth(99) > 0);
    assert_eq!(depth(100), 3 * depth(99));
    assert_eq!(held.departures().iter().filter(|d| d.port == 2).count(), 0);

    let resume = frame(2, 1, U, 0, 0);
    let done = a_on_the_bench(vec![
        (0, pause.clone()),
        (300, pause),
        (5_000, merge),
        (12_000, resume),
    ]);
    assert_drained_in_order(&done);
}

/// A root that claims again after its MERGE and resigns a second time: on A alone, root 4
/// paused twice, MERGE(6 <- 4) (IQ 100 soft-merging with packets, IQ 99 waiting behind it),
/// PAUSE(4) again (B:1's OQ a root once more), then MERGE(7 <- 4), C's port to c1 this time.
/// The second MERGE takes its PAUSE off IQ 100 too (found soft-merging already; no second
/// IQ, as IQ 99 holds the place), so one RESUME(4) lets everything drain and be released.
/// (Ignoring a MERGE for an IQ already soft-merging left that PAUSE counted for ever: a
/// paused IQ no frame would resume.)
#[test]
fn a_second_merge_of_a_soft_merging_iq_takes_its_pause_off_too() {
    let pause = frame(1, 1, U, 0, 0);
    let done = a_on_the_bench(vec![
        (0, pause.clone()),
        (300, pause.clone()),
        (5_000, frame(3, 2, P, U, 1)),
        (6_000, pause),
        (7_000, frame(3, 2, P + 1, U, 1)),
        (12_000, frame(2, 1, U, 0, 0)),
    ]);
    assert_drained_in_order(&done);
}

/// Frames that arrive while the IQ their root's PAUSE popped is still being installed (the
/// install is a second, recirculated pass): on A alone, PAUSE(4) and, 100 ns behind it,
/// RESUME(4) or MERGE(6 <- 4). Each finds root 4 unknown and is tried once more as a record,
/// behind the install: the IQ is resumed, and as it is empty released. (Dropped, they left
/// IQ 100 paused for good, counting a PAUSE no frame would take off.)
#[test]
fn a_resume_or_merge_racing_its_pauses_install_still_resumes() {
    for second in [frame(2, 1, U, 0, 0), frame(3, 2, P, U, 1)] {
        let op = second[14];
        let bench = a_on_the_bench(vec![(0, frame(1, 1, U, 0, 0)), (100, second)]);
        assert_eq!(merge_state(&bench), (0, 0, 0, [0, 0], 100), "opcode {op}");
        assert!(!bench.chip().tm().is_queue_paused(2, 100), "opcode {op}");
    }
}
