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

/// DT's private part is 18.8 % of the buffer however many queues a port uses: the TM
/// reserves a queue's minimum on all 56 of its ports (the 48 front ports and the 4
/// recirculation and 4 packet-generator ports), so the deployment splits it over them and
/// the shared pool keeps the paper's 81.2 %.
#[test]
fn dt_reserves_the_papers_private_part() {
    for (queues, gmin) in [("Multi", 75), ("Single", 377)] {
        let s: NetScenario = ron::from_str(&format!(
            r#"(topology: Generate((shape: SingleSwitch(hosts: 2), chip: "fb-48x10g.ron")),
                deploy: Fb((buffer: Dt, queues: {queues})), stop: (at_ns: Some(1000)))"#
        ))
        .unwrap();
        let r = net::run_detailed(s, Path::new("programs/fb"), None).unwrap();
        let tm = r.chip("sw0").unwrap().tm();
        assert_eq!(tm.config().queues[0].gmin_cells, gmin, "{queues}");
        let (pool, _) = tm.pool(0);
        let reserved = 1.0 - pool as f64 / 112_500.0;
        assert!((0.186..=0.188).contains(&reserved), "{queues}: {reserved}");
    }
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
        (
            "(buffer: Pisa((sync_period_ns: 0)))",
            "fb.buffer: Pisa sync_period_ns 0 must be more than 0",
        ),
        (
            "(buffer: Pisa((sync_period_ns: 1000)), queues: Single)",
            "fb.buffer: Pisa needs queues: Multi",
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
    // PISA FB's copies live in one pipe: 13 hosts take port 12, the first of pipe 1.
    let s: NetScenario = ron::from_str(
        r#"(topology: Generate((shape: SingleSwitch(hosts: 13), chip: "fb-48x10g.ron")),
            deploy: Fb((buffer: Pisa((sync_period_ns: 1000)))), stop: (at_ns: Some(1000)))"#,
    )
    .unwrap();
    let Err(err) = net::run_detailed(s, Path::new("programs/fb"), None) else {
        panic!("PISA FB across two pipes was taken");
    };
    assert!(
        err.contains("port 0 is in pipe 0 and port 12 in pipe 1"),
        "{err}"
    );
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

/// The Fig. 7 and Fig. 8 sweeps' every point substitutes into the §6 leaf-spine and parses as
/// a scenario; the reduced grids have their 18, 12 and 12 points, the full grids their 480,
/// with two figures each.
#[test]
fn the_fig7_and_fig8_sweep_specs_make_their_points() {
    for (spec, n) in [
        ("programs/fb/sweep-burst.ron", 18),
        ("programs/fb/sweep-load.ron", 12),
        ("programs/fb/sweep-burst-single.ron", 12),
        ("programs/fb/sweep-burst-full.ron", 480),
        ("programs/fb/sweep-load-full.ron", 480),
    ] {
        let spec_path = Path::new(spec);
        let spec = asic_report::sweep::SweepSpec::load(spec_path).unwrap();
        let base_path = spec.base_path(spec_path);
        let base = std::fs::read_to_string(&base_path).unwrap();
        let points = spec.points();
        assert_eq!((points.len(), spec.plots.len()), (n, 2));
        for p in &points {
            let text = asic::sweep_run::substitute(&base, p, "leafspine.ron").unwrap();
            let s: Result<NetScenario, _> = ron::from_str(&text);
            assert!(s.is_ok(), "{}: {:?}", p.label(), s.err());
        }
    }
}

/// The paper's §7 proof of concept, scaled (programs/fb/testbed.ron): with seven UDP queues
/// flooding one slow port, DT leaves the TCP queue of another so little of the shared pool
/// that most of the 100 short flows lose a packet and wait out the 200 ms RTO; FB caps the
/// UDP queues and the flows pass, in the TM or as PISA FB in the pipeline (Tofino 1's egress
/// copies, or Tofino 2's published depths). The paper's criterion: FB cuts the short flows'
/// FCT by at least 50 ms.
#[test]
fn testbed_fb_cuts_the_short_flows_fct_by_50_ms() {
    let base = std::fs::read_to_string("programs/fb/testbed.ron").unwrap();
    let median_fct_ms = |buffer: &str| {
        let text = base
            .replace("$buffer", buffer)
            .replace("$chip", "\"tofino1-like\"");
        let s: NetScenario = ron::from_str(&text).unwrap();
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
    let dt = median_fct_ms("Dt");
    for buffer in [
        "Fb",
        "Pisa((sync_period_ns: 20000))",
        "Pisa((sync_period_ns: 20000, depths: Ingress))",
    ] {
        let fb = median_fct_ms(buffer);
        println!("median FCT of the 100 TCP flows: DT {dt:.3} ms, {buffer} {fb:.3} ms");
        assert!(dt - fb >= 50.0, "DT {dt} ms, {buffer} {fb} ms");
    }
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

/// The §7 testbed (programs/fb/testbed.ron) with `buffer`, stopped at `stop_us`.
fn testbed_run(buffer: &str, stop_us: u64) -> asic_net::NetRun {
    let base = std::fs::read_to_string("programs/fb/testbed.ron").unwrap();
    let text = base
        .replace("$buffer", buffer)
        .replace("$chip", "\"tofino1-like\"")
        .replace(
            "stop: (at_ns: Some(2000000000))",
            &format!("stop: (at_ns: Some({}))", stop_us * 1_000),
        );
    let s: NetScenario = ron::from_str(&text).unwrap();
    net::run_detailed(s, Path::new("programs/fb"), None).unwrap()
}

/// PISA FB (§5.1, programs/fb/fb_pisa.p4) in the testbed's flood (seven UDP queues on port 1
/// at 9.8 Gb/s into 1G), stopped mid-run, SYNC walks every 20 µs, with the egress copies
/// (Tofino 1) or the depths the TM publishes (Tofino 2):
/// - the registers agree with the copies exactly: `remaining` is B minus their sum, `n_port`
///   and `n_prio` count the non-empty ones;
/// - the copies are the TM's depths within what a queue moves between two of its departures
///   (Tofino 1) or one walk (Tofino 2);
/// - the threshold a low packet meets (`remaining >> n` from the `shift` entry) lies in
///   (½, 1] of TM-native FB's `α · γ / N_p · (B − Q)` on the TM's own state, up to that
///   staleness.
#[test]
fn pisa_fb_copies_and_thresholds_follow_the_tm() {
    for depths in ["Egress", "Ingress"] {
        let r = testbed_run(
            &format!("Pisa((sync_period_ns: 20000, depths: {depths}))"),
            50_000,
        );
        let chip = r.chip("tofino").unwrap();
        let tm = chip.tm();
        let reg = |name: &str, i: u32| chip.register_read_by_name(0, name, i).unwrap();
        let (pool, used) = tm.pool(0);
        assert_eq!(pool, 9000);
        // Ports 0..3 (ranks 0..3), eight queues each: index port × 8 + q.
        let mut copies = Vec::new();
        for port in 0..4u16 {
            for q in 0..8u16 {
                let copy = reg("qlen_in", port as u32 * 8 + q as u32) as u32;
                let depth = tm.depth(port, q).0;
                // Tofino 1's copy is the length the queue's last departure left: under round
                // robin among seven queues at 1G a queue departs every 85 µs, while 1.4 Gb/s
                // brings 186 cells of 80 bytes. A walk takes ~14 µs on top.
                assert!(
                    copy.abs_diff(depth) <= 200,
                    "{depths}: port {port} queue {q}: copy {copy}, TM {depth}"
                );
                copies.push((port, q, copy));
            }
        }
        let sum: u32 = copies.iter().map(|c| c.2).sum();
        let remaining = reg("remaining", 0) as u32;
        assert_eq!(remaining, 9000 - sum, "{depths}: remaining");
        for port in 0..4u16 {
            let n = copies.iter().filter(|c| c.0 == port && c.2 > 0).count() as u64;
            assert_eq!(reg("n_port", port as u32), n, "{depths}: n_port[{port}]");
        }
        let low = copies.iter().filter(|c| c.1 != 0 && c.2 > 0).count() as u64;
        let high = copies.iter().filter(|c| c.1 == 0 && c.2 > 0).count() as u64;
        assert_eq!(
            (reg("n_prio", 0), reg("n_prio", 1)),
            (low, high),
            "{depths}: n_prio"
        );
        // Port 1's seven UDP queues are all congested: the threshold their packets meet.
        let (n_port, n_prio) = (reg("n_port", 1) as u32, reg("n_prio", 0) as u32);
        assert_eq!((n_port, n_prio), (7, 7), "{depths}");
        let shift = asic_deploy::fb::shift_for(0.6, n_port, n_prio);
        let pisa = remaining as f64 / 2f64.powi(shift);
        let (num, den) = tm.service_share(1, 1).unwrap();
        let fb =
            0.6 * num as f64 / den as f64 / tm.congested_queues(0) as f64 * (pool - used) as f64;
        println!(
            "{depths}: remaining {remaining} (TM {}), n = {shift}: PISA {pisa:.1} cells, FB {fb:.1}",
            pool - used
        );
        assert!(
            pisa > 0.5 * fb * 0.95 && pisa <= fb * 1.05,
            "{depths}: PISA {pisa}, FB {fb}"
        );
        // The UDP queues sit at PISA's threshold: a packet or two above it at most where
        // the packets read their queue's depth in ingress, a round robin's arrivals above
        // it where they read the copy the last departure left.
        let over = if depths == "Ingress" { 40.0 } else { 200.0 };
        for q in 1..8u16 {
            let depth = tm.depth(1, q).0 as f64;
            assert!(
                depth <= pisa + over,
                "{depths}: queue {q} at {depth}, threshold {pisa}"
            );
        }
    }
}

/// PISA FB's SYNC walks in the testbed (32 queues: four ports × eight), one every 20 µs to
/// 50 ms: each pass crosses the recirculation port once (32 a walk with egress copies: the
/// generated packet goes out to read queue 0 first; 31 when ingress reads the depths), each
/// walk ends consumed, and the SYNC traffic is what the recirculation port carried. With a
/// walk every second (the first at 0, on an empty buffer) the copies stay empty through the
/// flood: PISA admits everything and the decisions are DT's underneath, as stale copies make
/// them; with a walk every millisecond PISA's drops start when the walk at 1 ms refreshes the
/// copies, not when the queues fill.
#[test]
fn pisa_fb_sync_walks_and_stale_copies() {
    use asic_model::chip::DropReason;
    use tm::Refusal;
    for (depths, passes) in [("Egress", 32u64), ("Ingress", 31)] {
        let r = testbed_run(
            &format!("Pisa((sync_period_ns: 20000, depths: {depths}))"),
            50_000,
        );
        let chip = r.chip("tofino").unwrap();
        let recirc = chip.port_counters(64);
        // Walks start at 0, 20 µs, ..., 50 ms: 2,501, the last ones still walking.
        let walks = 2_501u64;
        assert!(
            (walks - 1) * passes <= recirc.tx_packets && recirc.tx_packets <= walks * passes,
            "{depths}: {} passes",
            recirc.tx_packets
        );
        assert!(
            (walks - 2..=walks).contains(&chip.consumed()),
            "{depths}: {}",
            chip.consumed()
        );
        let mbps = recirc.tx_bytes as f64 * 8.0 / 0.05 / 1e6;
        println!(
            "{depths}: {} SYNC passes, {mbps:.0} Mb/s of 60-byte frames",
            recirc.tx_packets
        );
        assert_eq!(recirc.tx_bytes, recirc.tx_packets * 60);
    }
    let r = testbed_run("Pisa((sync_period_ns: 1000000000))", 50_000);
    let chip = r.chip("tofino").unwrap();
    assert_eq!(chip.drops(DropReason::IngressProgramDrop), 0);
    assert!(chip.drops(DropReason::Tm(Refusal::DynamicThreshold)) > 10_000);
    assert_eq!(chip.register_read_by_name(0, "remaining", 0).unwrap(), 9000);
    // A walk every millisecond: the one at 0 saw an empty buffer, so until the next one has
    // passed the UDP queues (at 1 ms and after, about 14 µs) the copies say so and PISA drops
    // nothing, while TM-native FB, which sees the queues, already refuses; once the walk has
    // refreshed them the program drops.
    let drops = |buffer: &str, stop_us| {
        let r = testbed_run(buffer, stop_us);
        let chip = r.chip("tofino").unwrap();
        (
            chip.drops(DropReason::IngressProgramDrop),
            chip.drops(DropReason::Tm(Refusal::FlexibleThreshold)),
        )
    };
    let pisa = "Pisa((sync_period_ns: 1000000))";
    let (before, after) = (drops(pisa, 999).0, drops(pisa, 1_100).0);
    let fb = drops("Fb", 999).1;
    println!("by 999 us: PISA FB {before} drops, TM-native FB {fb}; by 1,100 us: PISA {after}");
    assert_eq!(before, 0);
    assert!(
        fb > 100 && after > 0,
        "FB {fb}, PISA after the walk {after}"
    );
}

/// A reduced §6 grid, run as `asic sweep` runs it: the value of `column` at each point whose
/// parameters match every `key=value` of `at` (in point order); a value matches itself, or
/// an enum value of that name with parameters (`NewReno` matches `NewReno((...))`).
fn sweep_values(
    table: &asic_report::sweep::SweepTable,
    at: &[(&str, &str)],
    column: &str,
) -> Vec<f64> {
    let col = |c: &str| table.columns.iter().position(|x| x == c).unwrap();
    table
        .rows
        .iter()
        .filter(|r| {
            at.iter().all(|(k, v)| {
                let cell = &r[col(k)];
                cell == v || cell.starts_with(&format!("{v}("))
            })
        })
        .map(|r| r[col(column)].parse().unwrap())
        .collect()
}

/// The reduced Fig. 7a/7c grid (programs/fb/sweep-burst.ron, about 10 minutes on two
/// cores): with TCP, FB passes at least as many queries as DT at every size and more at 90 %
/// of B; DT's p99 occupancy stays above 65 % of the buffer at every size, FB's grows with the
/// size and stays below DT's.
#[test]
#[ignore = "a reduced §6 grid: about 10 minutes on two cores"]
fn reduced_fig7_grid_fb_absorbs_more_and_holds_less() {
    let out = tempfile::tempdir().unwrap();
    let table = asic::sweep_run::run(Path::new("programs/fb/sweep-burst.ron"), out.path())
        .unwrap()
        .table;
    assert_eq!(table.failures(), 0);
    let tcp = ("transport", "NewReno");
    let absorbed = |b| sweep_values(&table, &[("buffer", b), tcp], "queries_without_drop_pct");
    let occupancy = |b| sweep_values(&table, &[("buffer", b), tcp], "buffer_p99_pct");
    let (dt, fb) = (absorbed("Dt"), absorbed("Fb"));
    println!("queries without a drop (%): DT {dt:?}, FB {fb:?}");
    assert!(dt.iter().zip(&fb).all(|(d, f)| f >= d) && fb[2] > dt[2]);
    let (dt, fb) = (occupancy("Dt"), occupancy("Fb"));
    println!("p99 occupancy (%): DT {dt:?}, FB {fb:?}");
    assert!(dt.iter().all(|&d| d > 65.0));
    assert!(fb.windows(2).all(|w| w[1] > w[0]));
    assert!(dt.iter().zip(&fb).all(|(d, f)| f < d));
}

/// The reduced Fig. 8a/8c grid (programs/fb/sweep-load.ron, about 4 minutes on two cores):
/// FB + TCP's p95 FCT of flows of at most 100 KB is below DT + TCP's at every load, and the
/// switches carry within 15 % of DT's rate.
#[test]
#[ignore = "a reduced §6 grid: about 4 minutes on two cores"]
fn reduced_fig8_grid_fb_cuts_the_short_flows_tail() {
    let out = tempfile::tempdir().unwrap();
    let table = asic::sweep_run::run(Path::new("programs/fb/sweep-load.ron"), out.path())
        .unwrap()
        .table;
    assert_eq!(table.failures(), 0);
    let tcp = ("transport", "NewReno");
    let of = |b, c| sweep_values(&table, &[("buffer", b), tcp], c);
    let (dt, fb) = (
        of("Dt", "fct_p95_us_le_100KB"),
        of("Fb", "fct_p95_us_le_100KB"),
    );
    println!("p95 FCT of short flows (us): DT {dt:?}, FB {fb:?}");
    assert!(dt.iter().zip(&fb).all(|(d, f)| f < d));
    let (dt, fb) = (of("Dt", "chip_tx_gbps"), of("Fb", "chip_tx_gbps"));
    println!("switches' transmit rate (Gb/s): DT {dt:?}, FB {fb:?}");
    assert!(dt.iter().zip(&fb).all(|(d, f)| (f / d - 1.0).abs() < 0.15));
}
