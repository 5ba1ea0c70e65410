//! The Flexible Buffer deployment (`deploy: Fb(...)`, deploy/src/fb.rs, programs/fb): hosts'
//! tags reach their queues and colours, and a query burst meets a buffer that low-priority
//! traffic filled: DT drops it, FB absorbs it, with one queue per port or several.

use asic_deploy::{run as net, scenario::NetScenario};
use std::path::Path;

fn run(text: &str) -> asic_net::NetRun {
    let s: NetScenario = ron::from_str(text).unwrap_or_else(|e| panic!("{e}"));
    net::run_detailed(s, Path::new("programs/fb"), None).unwrap()
}

/// One `fb-48x10g` switch (48 × 10G, 9 MB) with 17 hosts: h9..h16 send unresponsive
/// low-priority streams at line rate into h5, two with each low tag (2 to 5), so h5's four
/// low queues (one with a single queue per port) fill to their thresholds and drain at one
/// port's rate; at 3 ms h0 asks h1..h4 for 6 MB (two thirds of the buffer, tag 1) over
/// NewReno with a window of a whole part (an open persistent connection), so the answer
/// arrives at 40 Gb/s. Queue depths sampled every 100 µs.
fn burst_run(deploy: &str) -> asic_net::NetRun {
    let mut traffic = Vec::new();
    for (i, s) in (9..17).enumerate() {
        traffic.push(format!(
            "ConstantRate((src: \"h{s}\", dst: \"h5\", rate_gbps: 10.0, stop_ns: 8000000, \
             class: {}))",
            2 + i / 2
        ));
    }
    traffic.push(
        "Queries((requesters: Some([\"h0\"]), responders_from: Some([\"h1\", \"h2\", \"h3\", \
         \"h4\"]), responders: 4, size: 6000000, per_second: 1000000.0, start_ns: 3000000, \
         stop_ns: 4000000, max_queries: Some(1), class: 1, transport: Some(NewReno((\
         init_cwnd: 1000, min_rto_us: 1000.0, initial_rto_us: 1000.0)))))"
            .into(),
    );
    run(&format!(
        r#"(
            seed: 3,
            topology: Generate((shape: SingleSwitch(hosts: 17), chip: "fb-48x10g.ron", delay_ns: 1000)),
            deploy: Fb({deploy}),
            traffic: [{}],
            stop: (at_ns: Some(20000000)),
            sample_period_ns: Some(100000),
        )"#,
        traffic.join(", ")
    ))
}

/// [`burst_run`]: the query's dropped packets and whether it completed.
fn burst(deploy: &str) -> (u64, bool) {
    let r = burst_run(deploy);
    assert_eq!(r.record.queries.len(), 1, "one query");
    let q = &r.record.queries[0];
    println!(
        "{deploy}: the query lost {} packets, completed in {:?} us",
        q.packets_dropped,
        q.qct_ps().map(|p| p / 1_000_000)
    );
    (q.packets_dropped, q.end_ps.is_some())
}

/// DT keeps the low queues at α_l·(B − Q) each and they drain at one port's rate, so the
/// burst outgrows the free part and loses packets; FB holds them to α_l·γ/N_L and the
/// burst fits, multi- and single-queue.
#[test]
fn fb_absorbs_the_burst_dt_drops() {
    for queues in ["Multi", "Single"] {
        let (dt, _) = burst(&format!("(buffer: Dt, queues: {queues})"));
        let (fb, done) = burst(&format!("(buffer: Fb, queues: {queues})"));
        assert!(dt > 0, "{queues}: DT drops part of the burst");
        assert_eq!(fb, 0, "{queues}: FB absorbs it");
        assert!(done);
    }
}

/// The classifier puts the query tag in queue 0 and each low tag in its own queue (1 to 4)
/// with several queues per port, everything in queue 0 with one; no other queue holds a
/// cell (a queue's depth series exists once it held one).
#[test]
fn tags_reach_their_queues() {
    let queues_used = |deploy: &str, port: u16| -> Vec<u16> {
        let r = burst_run(deploy);
        let prefix = format!("sw0.port{port}.q");
        let mut q: Vec<u16> = r
            .record
            .series
            .iter()
            .filter_map(|s| {
                s.name
                    .strip_prefix(&prefix)?
                    .strip_suffix(".depth_cells")?
                    .parse()
                    .ok()
            })
            .collect();
        q.sort();
        q
    };
    assert_eq!(queues_used("(buffer: Fb)", 0), [0]);
    assert_eq!(queues_used("(buffer: Fb)", 5), [1, 2, 3, 4]);
    assert_eq!(queues_used("(buffer: Fb, queues: Single)", 5), [0]);
}

/// A parameter the deployment cannot use is refused with its field.
#[test]
fn bad_parameters_are_named() {
    for (deploy, says) in [
        ("(alpha_low: 0.0)", "fb.alpha_low: 0 is not in (0, 65535]"),
        ("(low_classes: [1])", "fb.low_classes[0]: 1 is not a class"),
        (
            "(low_classes: [2, 2])",
            "fb.low_classes[1]: 2 is not a class",
        ),
        (
            "(low_classes: [0, 2, 3, 4, 5, 6, 7, 8])",
            "fb.low_classes[7]: 8 is not a class",
        ),
        ("(dt_private: 1.0)", "fb.dt_private: 1 is not a fraction"),
        (
            "(queues: Multi, low_classes: [])",
            "fb.low_classes: the multi-queue",
        ),
    ] {
        let s: NetScenario = ron::from_str(&format!(
            r#"(topology: Generate((shape: SingleSwitch(hosts: 2), chip: "fb-48x10g.ron")),
                deploy: Fb({deploy}))"#
        ))
        .unwrap();
        let Err(err) = net::run_detailed(s, Path::new("programs/fb"), None) else {
            panic!("{deploy} was taken");
        };
        assert!(err.contains(says), "{deploy}: {err}");
    }
}

/// FBA (§5.2): an agent that rewrites each queue's DT α to FB's adaptive α every 100 µs has
/// shrunk the low queues before the burst comes, and it passes; with the paper's 1 s period
/// the agent has not run by then, and the chip is DT, packet for packet.
#[test]
fn fba_absorbs_the_burst_once_its_agent_has_run() {
    let (fba, done) = burst("(buffer: Fba(period_ns: 100000))");
    assert_eq!(fba, 0);
    assert!(done);
    let (late, _) = burst("(buffer: Fba(period_ns: 1000000000))");
    let (dt, _) = burst("(buffer: Dt)");
    assert_eq!(late, dt);
    assert!(dt > 0);
}

/// The reduced Fig. 7 sweep's every point substitutes into the §6 leaf-spine and parses as a
/// scenario; the grid has its 9 points.
#[test]
fn the_burst_sweep_spec_makes_its_points() {
    let spec_path = Path::new("programs/fb/sweep-burst.ron");
    let spec = asic_report::sweep::SweepSpec::load(spec_path).unwrap();
    let base_path = spec.base_path(spec_path);
    let base = std::fs::read_to_string(&base_path).unwrap();
    let points = spec.points();
    assert_eq!(points.len(), 9);
    for p in &points {
        let text = asic::sweep_run::substitute(&base, p, "leafspine.ron").unwrap();
        let s: Result<NetScenario, _> = ron::from_str(&text);
        assert!(s.is_ok(), "{}: {:?}", p.label(), s.err());
    }
}

/// The paper's §7 proof of concept, scaled (programs/fb/testbed.ron): with seven UDP queues
/// flooding one slow port, DT leaves the TCP queue of another so little of the shared pool
/// that most of the 100 short flows lose a packet and wait out the 200 ms RTO; FB caps the
/// UDP queues and the flows pass. The paper's criterion: FB cuts the short flows' FCT by at
/// least 50 ms.
#[test]
fn testbed_fb_cuts_the_short_flows_fct_by_50_ms() {
    let base = std::fs::read_to_string("programs/fb/testbed.ron").unwrap();
    let median_fct_ms = |buffer: &str| {
        let s: NetScenario = ron::from_str(&base.replace("$buffer", buffer)).unwrap();
        let r = net::run_detailed(s, Path::new("programs/fb"), None).unwrap();
        let s2b = r.record.hosts.iter().position(|h| h.host == "s2b").unwrap() as u32;
        let mut fct: Vec<u64> = r
            .record
            .flows
            .iter()
            .filter(|f| f.src == s2b)
            .map(|f| f.fct_ps().expect("every TCP flow completes"))
            .collect();
        assert_eq!(fct.len(), 100);
        fct.sort();
        fct[50] as f64 / 1e9
    };
    let (dt, fb) = (median_fct_ms("Dt"), median_fct_ms("Fb"));
    println!("median FCT of the 100 TCP flows: DT {dt:.3} ms, FB {fb:.3} ms");
    assert!(dt - fb >= 50.0, "DT {dt} ms, FB {fb} ms");
}

/// DCTCP's marking (`ecn_threshold_packets`, the paper's Kmin = Kmax): two DCTCP flows into
/// one port keep the low queue near the threshold (20 full-size packets, 380 cells); without
/// marking they fill it to DT's threshold.
#[test]
fn the_ecn_threshold_holds_dctcp_queues_near_it() {
    let max_depth = |ecn: &str| {
        let r = run(&format!(
            r#"(
                topology: Generate((shape: SingleSwitch(hosts: 3), chip: "fb-48x10g.ron", delay_ns: 1000)),
                deploy: Fb((ecn_threshold_packets: {ecn})),
                transport: Dctcp(()),
                traffic: [Flow((src: "h1", dst: "h0", size: 20000000, class: 2)),
                          Flow((src: "h2", dst: "h0", size: 20000000, class: 2))],
                sample_period_ns: Some(10000),
                stop: (at_ns: Some(100000000)),
            )"#
        ));
        r.record
            .series
            .iter()
            .find(|s| s.name == "sw0.port0.q1.depth_cells")
            .map(|s| s.points.iter().map(|p| p.1).fold(0.0, f64::max))
            .unwrap()
    };
    let (marked, unmarked) = (max_depth("Some(20)"), max_depth("None"));
    println!("DCTCP queue: {marked} cells with marking at 20 packets, {unmarked} without");
    assert!(marked < 3.0 * 380.0, "{marked}");
    assert!(unmarked > 10.0 * 380.0, "{unmarked}");
}
