//! BFC (programs/bfc) on a small network: pauses, resumes, queue assignment and drained
//! state, checked against the paper's rules (Goyal et al., NSDI 2022, §3.3).

use asic_deploy::{run as net, scenario::NetScenario};
use asic_model::mac::{slot_time, wire_bytes, IFG_BYTES};
use asic_net::packet::{data_frame_len, mss};
use asic_net::NetRun;
use std::path::Path;

fn run(text: &str) -> NetRun {
    let s: NetScenario = ron::from_str(text).unwrap_or_else(|e| panic!("{e}"));
    net::run_detailed(s, Path::new(env!("CARGO_MANIFEST_DIR")), None).unwrap()
}

/// One flow from the left host (through sw0) and one from a right host meet at sw1's port
/// to r0: sw1 pauses sw0's queue and the right host's NIC queue, then resumes them.
fn two_flows(assignment: &str, stop_ns: u64) -> NetRun {
    run(&format!(
        r#"(
            topology: Generate((
                shape: Dumbbell(left: 1, right: 2),
                chip: "programs/bfc/tofino2-100g.ron",
                delay_ns: 500,
                nic_queues: 32,
            )),
            deploy: Bfc((queues: 16, hrtt_ns: 2000, assignment: {assignment})),
            transport: Raw(()),
            traffic: [
                Flow((src: "l0", dst: "r0", size: 600000)),
                Flow((src: "r1", dst: "r0", size: 600000)),
            ],
            stop: (at_ns: Some({stop_ns}), when_flows_complete: false),
        )"#
    ))
}

#[test]
fn bfc_pauses_and_drains_to_zero() {
    let r = two_flows("Dynamic", 200_000);
    assert!(r.record.flows.iter().all(|f| f.end_ps.is_some()));
    // sw1's port to r0 is the bottleneck: it paused (and resumed) sw0's queue, which sw0's
    // program turned into advanced flow control, and the right host's NIC queue.
    let sw0 = r.chips[0].plumbing_counters();
    println!("sw0 {sw0:?}\nsw1 {:?}", r.chips[1].plumbing_counters());
    assert!(sw0.afc_requests >= 2, "{sw0:?}");
    assert_eq!(sw0.afc_requests % 2, 0, "every pause resumed: {sw0:?}");
    // Nothing but the program's own records was dropped, and the conservation line knows
    // them from data: every data packet sent was received, the records are other drops.
    for d in &r.record.drops {
        assert_eq!(d.reason, "ingress_program_drop", "{:?}", r.record.drops);
    }
    let records: u64 = r.record.drops.iter().map(|d| d.packets).sum();
    let c = asic_report::metrics::conservation(&r.record);
    assert!(records > 0);
    assert_eq!(
        (c.received, c.dropped, c.in_flight, c.other_drops),
        (c.sent, 0, 0, records),
        "{c:?}"
    );
    // Every flow-table entry is empty again once the dequeue records are back.
    for (c, chip) in r.chips.iter().enumerate() {
        for pipe in 0..chip.profile().pipes {
            for i in 0..65536 {
                let v = chip.register_read_by_name(pipe, "size", i).unwrap();
                assert_eq!(v, 0, "chip {c} pipe {pipe} size[{i}]");
            }
        }
    }
    for (c, chip) in r.chips.iter().enumerate() {
        for pipe in 0..chip.profile().pipes {
            for i in 0..4096 {
                let v = chip.register_read_by_name(pipe, "pause_ctr", i).unwrap();
                assert_eq!(v, 0, "chip {c} pipe {pipe} pause_ctr[{i}]");
            }
            // Every queue an entry took was given back when the entry went idle: credit 1
            // (idle, last held by an entry) or 2 (never taken), none 0 (active).
            for i in 0..2048 {
                let v = chip.register_read_by_name(pipe, "claims", i).unwrap();
                assert!(v == 1 || v == 2, "chip {c} pipe {pipe} claims[{i}] = {v}");
            }
        }
    }
}

/// The testbed of programs/bfc (one chip, looped-back ports as three switches) running
/// `traffic`, queue depths sampled every 10 ns.
fn testbed(traffic: &str, stop_ns: u64) -> NetRun {
    let text = format!(
        r#"(
            topology: File("testbed-topology.ron"),
            deploy: Bfc((queues: 16, hrtt_ns: 2000, assignment: Dynamic, routes: None)),
            chips: [(select: Name("tb"), entries: Some(File("testbed-entries.ron")))],
            transport: Raw(()),
            traffic: [{traffic}],
            sample_period_ns: Some(10),
            stop: (at_ns: Some({stop_ns}), when_flows_complete: true),
        )"#
    );
    let s: NetScenario = ron::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("programs/bfc");
    net::run_detailed(s, &dir, None).unwrap()
}

#[test]
fn a_queue_above_th_pauses_its_upstream_within_one_hrtt_plus_the_pipeline() {
    // A group-2 flow (through S1) and a group-3 flow (through S3) meet at S2's port 6.
    let r = testbed(
        r#"Flow((src: "g2", dst: "r2", size: 300000)), Flow((src: "g3", dst: "r2", size: 300000))"#,
        100_000,
    );
    let chip = &r.chips[0];
    let spec = asic_deploy::bfc::BfcSpec {
        queues: 16,
        ..Default::default()
    };
    // The lowest Th in force (both queues active): the earliest the program may pause.
    let th = spec.th_cells(100, 2, chip.profile().tm.cell_bytes) as f64;
    let crossed = r
        .record
        .series
        .iter()
        .filter(|s| s.name.starts_with("tb.port6.q") && !s.name.starts_with("tb.port6.q15."))
        .filter_map(|s| s.points.iter().find(|p| p.1 > th).map(|p| p.0))
        .min()
        .expect("a queue at port 6 exceeds Th");
    let paused = r
        .record
        .pauses
        .iter()
        .filter(|p| p.node == "tb" && (p.port == 2 || p.port == 8) && p.paused)
        .map(|p| p.at_ps)
        .min()
        .expect("S2 paused an upstream queue");
    // One HRTT: the pause frame's way back over the 100 ns cable and the data's way there,
    // one MTU on the wire ahead of each; plus the pipeline: the reading packet's ingress at
    // S2, its mirror copy's egress, the pause frame's ingress at S1 and AFC into the TM, and
    // the depth export's period and delay.
    let clock = chip.clock();
    let cyc = |n: u64| clock.time_of(n).ps();
    let mtu_ps = slot_time(data_frame_len(mss(1500)), 100).ps();
    let hrtt = 2 * (100_000 + mtu_ps);
    let pipeline = 2 * cyc(chip.ingress_latency_cycles())
        + cyc(chip.egress_latency_cycles())
        + cyc(chip.profile().plumbing.afc_latency_cycles as u64)
        + chip.profile().tm.depth_export_period_ps
        + chip.profile().tm.depth_export_delay_ps;
    let latency = paused as i64 - crossed as i64;
    println!(
        "crossed Th at {crossed} ps, paused at {paused} ps: {latency} ps (bound {} ps)",
        hrtt + pipeline
    );
    assert!(latency > 0, "the pause follows the crossing");
    assert!(
        latency as u64 <= hrtt + pipeline,
        "pause {latency} ps after Th was crossed; bound {} ps",
        hrtt + pipeline
    );
}

/// `n` flows through S1's port 2 (15 data queues): two group-1 flows (g1), the rest group 2
/// (g2), flow `i` starting at `i · gap_ns`, run until `stop_ns` (or all ended).
fn flows_at_s1(n: usize, gap_ns: u64, stop_ns: u64) -> NetRun {
    let flows: Vec<String> = (0..n)
        .map(|i| {
            let (src, dst) = if i < 2 { ("g1", "r1") } else { ("g2", "r2") };
            format!(
                r#"Flow((src: "{src}", dst: "{dst}", size: 300000, start_ns: {}))"#,
                gap_ns * i as u64
            )
        })
        .collect();
    testbed(&flows.join(", "), stop_ns)
}

/// The queues of the flow-table entries of egress port 2 that are active (packets queued,
/// `size > 0`) at the end of `r`, one per entry.
fn active_queues_at_port2(r: &NetRun) -> Vec<u64> {
    let chip = &r.chips[0];
    (2 << 10..3 << 10)
        .filter(|&i| chip.register_read_by_name(0, "size", i).unwrap() > 0)
        .map(|i| chip.register_read_by_name(0, "qassign", i).unwrap())
        .collect()
}

/// No two active entries share a queue at any of `instants` (ns), and at one of them at least
/// `at_once` are active (so the check is not vacuous: an entry is idle whenever its flow has
/// no packet queued at S1).
fn own_queues_throughout(n: usize, gap_ns: u64, instants: &[u64], at_once: usize) {
    let mut most = 0;
    for &t in instants {
        let mut qs = active_queues_at_port2(&flows_at_s1(n, gap_ns, t));
        let active = qs.len();
        qs.sort_unstable();
        qs.dedup();
        assert_eq!(
            qs.len(),
            active,
            "at {t} ns: {active} active entries in {qs:?}"
        );
        most = most.max(active);
    }
    assert!(
        most >= at_once,
        "{most} of {n} flows active at once, want {at_once}"
    );
    // And the flows all finish.
    let r = flows_at_s1(n, gap_ns, 4_000_000);
    assert!(r.record.flows.iter().all(|f| f.end_ps.is_some()));
}

#[test]
fn flows_get_queues_of_their_own_while_they_fit() {
    // Started 2 µs apart (more than a pipe traversal plus the depth export's delay, so each
    // new flow sees the queues taken before it published as busy).
    own_queues_throughout(6, 2000, &[3_000, 11_000, 15_000, 20_000, 40_000, 80_000], 6);
}

#[test]
fn flows_starting_together_still_get_queues_of_their_own() {
    // Fourteen flows for 15 data queues, 5 ns apart: every new flow after the first arrives
    // while the queues just given out still read empty in the published depths, and while
    // the first flows' entries go idle between their packets (the NIC interleaves twelve
    // flows). The claim (the min/max unit over the port's queue credits) keeps them apart,
    // and a queue stays held for its entry while the entry is idle, also past the sticky
    // time: checked until the flows end (about 340 µs).
    own_queues_throughout(
        14,
        5,
        &[
            1_000, 2_000, 3_000, 5_000, 10_000, 15_000, 20_000, 40_000, 80_000, 120_000, 160_000,
            200_000, 240_000, 280_000, 320_000,
        ],
        10,
    );
}

#[test]
fn bfc_hosts_must_stamp_queues_the_program_can_count() {
    let s: NetScenario = ron::from_str(
        r#"(
            topology: Generate((
                shape: Dumbbell(left: 1, right: 1),
                chip: "programs/bfc/tofino2-100g.ron",
                nic_queues: 64,
            )),
            deploy: Bfc((queues: 16)),
            traffic: [Flow((src: "l0", dst: "r0", size: 1000))],
        )"#,
    )
    .unwrap();
    let e = net::run_detailed(s, Path::new(env!("CARGO_MANIFEST_DIR")), None)
        .err()
        .expect("refused");
    assert!(
        e.contains("host `l0`: nic_queues: 64") && e.contains("at most 32"),
        "{e}"
    );
}

#[test]
fn an_upstream_queue_resumes_only_once_its_counted_packets_have_left() {
    // The group-2 flow starts first, so its queue at S2's port 6 is the first to fill.
    let r = testbed(
        r#"Flow((src: "g2", dst: "r2", size: 600000)),
           Flow((src: "g3", dst: "r2", size: 600000, start_ns: 3000))"#,
        200_000,
    );
    let chip = &r.chips[0];
    let spec = asic_deploy::bfc::BfcSpec {
        queues: 16,
        ..Default::default()
    };
    let cell = chip.profile().tm.cell_bytes;
    let g2_queue = r
        .record
        .series
        .iter()
        .filter(|s| s.name.starts_with("tb.port6.q") && !s.name.starts_with("tb.port6.q15."))
        .min_by_key(|s| {
            s.points
                .iter()
                .find(|p| p.1 > 0.0)
                .map_or(u64::MAX, |p| p.0)
        })
        .unwrap();
    // The resume comes from the dequeue record of the last packet counted against S1's
    // queue: every packet still queued behind it arrived while the queue was at most Th
    // (the highest Th, one active queue) as the stale depth showed it, give or take the
    // export's delay: two MTUs of cells.
    let mtu_wire = (wire_bytes(data_frame_len(mss(1500))) + IFG_BYTES) as u32;
    let bound = (spec.th_cells(100, 1, cell) + 2 * mtu_wire.div_ceil(cell)) as f64;
    let clock = chip.clock();
    // From the resume frame's departure at S2 to the AFC at S1: the cable, the frame, S1's
    // ingress and the AFC latency.
    let back = 100_000
        + 64 * 8 * 10
        + clock.time_of(chip.ingress_latency_cycles()).ps()
        + clock
            .time_of(chip.profile().plumbing.afc_latency_cycles as u64)
            .ps();
    let resumes: Vec<u64> = r
        .record
        .pauses
        .iter()
        .filter(|p| p.node == "tb" && p.port == 2 && !p.paused)
        .map(|p| p.at_ps)
        .collect();
    assert!(resumes.len() >= 3, "S1 paused and resumed: {resumes:?}");
    let mut peak: f64 = 0.0;
    for &t in &resumes {
        let d = g2_queue.value_at(t - back);
        peak = peak.max(d);
        assert!(
            d <= bound,
            "resumed at {t} ps with {d} cells queued at S2 (bound {bound})"
        );
    }
    println!(
        "{} resumes; deepest S2 queue at a resume {peak} cells, bound {bound}",
        resumes.len()
    );
}

/// BFC's dequeue records and refresh walk are packets the chip makes that its program ends:
/// consumed, not dropped (issue #20: 8 375 `ingress_program_drop` and "other drops: 8375").
#[test]
fn bfc_records_are_consumed_not_dropped() {
    let r = testbed(
        r#"Flow((src: "g2", dst: "r2", size: 300000)), Flow((src: "g3", dst: "r2", size: 300000))"#,
        100_000,
    );
    let c = asic_report::metrics::conservation(&r.record);
    // What the program still drops are the pause and resume frames S1 receives over the
    // loopback cable: frames from the wire, which the chip cannot tell from any other.
    assert!(
        c.consumed > 10 * c.other_drops,
        "{c:?} {:?}",
        r.record.drops
    );
    assert_eq!(r.record.consumed[0].packets, r.chips[0].consumed());
    assert_eq!(c.dropped, 0);
}
