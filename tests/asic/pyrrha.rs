//! Pyrrha (deploy/src/pyrrha.rs, programs/pyrrha) on its testbed (§V-B): 3 ToRs, 2 cores, 2
//! hosts a rack, 100G; S1 and S2 send to R1 through different cores, and VS's flow to VR
//! crosses S2's core and its port to R1's ToR.

use crate::hol::testbed_roles;
use asic_bench::bench::Bench;
use asic_deploy::{run as net, scenario::NetScenario};
use asic_net::ctrl::{build_group, GROUP_PAUSE_ETHERTYPE};
use asic_net::records::RunRecord;
use pipelines::time::Time;
use std::path::Path;

/// The testbed's topology with `per_leaf` hosts a leaf (2: the paper's).
fn topology(per_leaf: usize) -> String {
    format!(
        "Generate((shape: LeafSpine(leaves: 3, spines: 2, hosts_per_leaf: {per_leaf}), \
         chip: \"tofino2-100g-128q.ron\", delay_ns: 600))"
    )
}

/// The testbed under `deploy` with `chips` (the chips' settings): S1 and S2 at 100 Gb/s to
/// R1 from 0 and 20 µs, VS at 100 Gb/s to VR from 40 µs, all until 200 µs; the queues
/// sampled every µs and checked for HOL blocking. Also the roles (host indexes).
fn testbed(deploy: &str, chips: &str) -> (RunRecord, [usize; 5]) {
    testbed_with(2, deploy, chips)
}

/// The same with `per_leaf` hosts a leaf (the roles among the first two of each).
fn testbed_with(per_leaf: usize, deploy: &str, chips: &str) -> (RunRecord, [usize; 5]) {
    let topology = topology(per_leaf);
    let roles = testbed_roles(&topology, Path::new("programs/pyrrha"), per_leaf);
    let [s1, s2, vs, r1, vr] = roles.map(|h| format!("h{}_{}", h / per_leaf, h % per_leaf));
    let s: NetScenario = ron::from_str(&format!(
        r#"(
            topology: {topology},
            deploy: {deploy},
            chips: {chips},
            traffic: [
                ConstantRate((src: "{s1}", dst: "{r1}", rate_gbps: 100.0, stop_ns: 200000)),
                ConstantRate((src: "{s2}", dst: "{r1}", rate_gbps: 100.0, start_ns: 20000, stop_ns: 200000)),
                ConstantRate((src: "{vs}", dst: "{vr}", rate_gbps: 100.0, start_ns: 40000, stop_ns: 200000)),
            ],
            stop: (at_ns: Some(300000)),
            sample_period_ns: Some(1000),
            hol_check: Some((congested_cells: 1, grace_ns: 3000)),
        )"#
    ))
    .unwrap_or_else(|e| panic!("{e}"));
    let r = net::run_detailed(s, Path::new("programs/pyrrha"), None).unwrap();
    (r.record, roles)
}

/// Gb/s that leaf 2's port `port` sent between `from_us` and `to_us`.
fn rate(r: &RunRecord, port: u16, from_us: u64, to_us: u64) -> f64 {
    let name = format!("leaf2.port{port}.tx_bytes");
    let s = r.series.iter().find(|s| s.name == name).unwrap();
    let at = |us: u64| {
        s.points
            .iter()
            .take_while(|(t, _)| *t <= us * 1_000_000)
            .last()
            .map_or(0.0, |p| p.1)
    };
    (at(to_us) - at(from_us)) * 8.0 / ((to_us - from_us) as f64 * 1000.0)
}

/// PFC on priority 0 of every chip: XOFF at 2 one-hop BDPs of ingress (469 cells of 176 B,
/// Pyrrha's K_pause), XON 232 cells lower (near K_resume, in the chip's 8-cell unit),
/// headroom for a hop's round trip (3.3 µs, 235 cells) and two frames.
pub(crate) const PFC: &str = "[(select: All, config: Some((tm: (pfc: (groups: [(priority: 0, \
                   xoff_cells: 469, hysteresis_cells: 232, headroom_cells: 260)])))))]";

/// B.5 item 14, the testbed: under Pyrrha R1's ToR port is the root, both cores give it an
/// IQ and pause it, and the senders' ToRs get the relayed root; the incast keeps R1's link
/// at line rate, no output queue is ever paused, and VS's flow takes two thirds of the core
/// port it shares with S2 (the paper's 66.7 Gb/s): the root's queue takes S1's core IQ at
/// up to a line rate and S2's at half of one (round robin with VS's OQ), so S2 has a third
/// of R1's link and VS the rest of the shared port. Under PFC the core port is paused
/// for R1's incast as a whole and VS's flow waits with S2's: VS has 19.4 Gb/s less (the
/// test asks for 15).
#[test]
fn the_testbed_isolates_the_incast() {
    // Gb/s into R1 and VR between 60 and 200 µs (leaf 2's ports to them).
    let to_r1_vr = |name: &str, r: &RunRecord, roles: [usize; 5]| {
        let (r1, vr) = ((roles[3] % 2) as u16, (roles[4] % 2) as u16);
        let (to_r1, to_vr) = (rate(r, r1, 60, 200), rate(r, vr, 60, 200));
        let hol = r.hol.as_ref().unwrap();
        println!(
            "{name}: to R1 {to_r1:.1} Gb/s, to VR {to_vr:.1} Gb/s; HOL {} of {}",
            hol.violations.len(),
            hol.flows_checked
        );
        (to_r1, to_vr)
    };
    let (r, roles) = testbed("Pyrrha(())", "[]");
    let (to_r1, to_vr) = to_r1_vr("Pyrrha", &r, roles);
    let line = 98.4; // 100G less preamble and gap, in IP bytes of full-size frames
    assert!(to_r1 > 0.99 * line, "{to_r1}");
    assert!((to_vr - line * 2.0 / 3.0).abs() < 0.05 * line, "{to_vr}");
    assert!(r.pauses.iter().all(|p| p.kind == "queue" && p.class != 0));
    let paused = |node: &str| r.pauses.iter().any(|p| p.node == node && p.paused);
    assert!(
        paused("spine0") && paused("spine1"),
        "both cores isolate R1's root"
    );
    assert!(
        paused("leaf0") && paused("leaf1"),
        "the senders' ToRs get it relayed"
    );
    assert!(!paused("leaf2"), "nothing downstream of the root pauses");
    let (p, roles) = testbed("Routers(Ecmp)", PFC);
    let (pfc_r1, pfc_vr) = to_r1_vr("PFC", &p, roles);
    assert!(pfc_r1 > 0.99 * line && pfc_vr < to_vr - 15.0, "{pfc_vr}");
}

/// Leaf `leaf`'s peak buffer (cells) over the run, from its sampled series.
fn peak_buffer(r: &RunRecord, leaf: usize) -> f64 {
    let name = format!("leaf{leaf}.buffer_cells");
    let s = r.series.iter().find(|s| s.name == name).unwrap();
    s.points.iter().map(|p| p.1).fold(0.0, f64::max)
}

/// Hosts that react per root (`hosts_react`, the paper's optional end-host reaction): the
/// senders' ToRs relay R1's root on to S1 and S2, which stop their flows through it (flow
/// group: the root's id) and send again on RESUME, so the incast's backlog waits at the
/// hosts: the senders' ToRs peak under 1,200 cells, where without the reaction they hold
/// the line-rate senders' excess (over 8,000 each). The rates stay the paper's (R1 at line
/// rate, VR two thirds of it); VS is paused only for the shared core port its own flow
/// crosses (its OQ there is a root: VS sends at line rate into two thirds of a port), never
/// for R1's root; no flow waits behind a port it does not cross.
#[test]
fn hosts_that_react_per_root_keep_the_incasts_backlog_at_home() {
    let (r, [s1, s2, ..]) = hosts_react(2);
    let (quiet, _) = testbed("Pyrrha(())", "[]");
    for leaf in [s1 / 2, s2 / 2] {
        let (reacting, not) = (peak_buffer(&r, leaf), peak_buffer(&quiet, leaf));
        println!("leaf{leaf} peak buffer: {reacting} cells with hosts reacting, {not} without");
        assert!(reacting < 1200.0 && not > 8000.0);
    }
}

/// The same on chips whose ports span pipes: 15 hosts a leaf, so a leaf's hosts and its
/// uplink to spine 0 (port 15) are in pipe 0 and its uplink to spine 1 (port 16) in pipe 1.
/// The sender whose flow to R1 crosses spine 1 has its packets steered, in pipe 0, into the
/// IQ its leaf's port 16 was given in pipe 1 (each pipe keeps a copy of the root tables), and
/// is paused from pipe 0 and resumed when that IQ drains (a departure's record reaches
/// every pipe); R1's leaf, whose uplinks are in both pipes, pauses and resumes both spines.
/// The figures are the one-pipe testbed's (`pyrrha_merge` checks that every pipe's state
/// comes back).
#[test]
fn hosts_that_react_on_chips_whose_ports_span_pipes() {
    let (r, _) = hosts_react(15);
    let iq = |node: &str, port: u16| {
        r.pauses
            .iter()
            .any(|p| p.node == node && p.port == port && p.class != 0 && p.paused)
    };
    assert!(
        iq("leaf0", 16) || iq("leaf1", 16),
        "an uplink in pipe 1 held an IQ"
    );
    assert!(
        iq("spine0", 2) && iq("spine1", 2),
        "R1's leaf paused both spines"
    );
}

/// The testbed with `per_leaf` hosts a leaf and hosts that react, checked as
/// `hosts_that_react_per_root_keep_the_incasts_backlog_at_home` says; the run and the roles.
fn hosts_react(per_leaf: usize) -> (RunRecord, [usize; 5]) {
    let (r, roles) = testbed_with(per_leaf, "Pyrrha((hosts_react: true))", "[]");
    let [s1, s2, vs, r1, vr] = roles;
    let line = 98.4;
    let port = |h: usize| (h % per_leaf) as u16;
    let (to_r1, to_vr) = (rate(&r, port(r1), 60, 200), rate(&r, port(vr), 60, 200));
    println!("hosts react: to R1 {to_r1:.1} Gb/s, to VR {to_vr:.1} Gb/s");
    assert!(to_r1 > 0.99 * line, "{to_r1}");
    assert!((to_vr - line * 2.0 / 3.0).abs() < 0.05 * line, "{to_vr}");
    let host = |h: usize| format!("h{}_{}", h / per_leaf, h % per_leaf);
    let groups = |h: usize| -> std::collections::BTreeSet<u16> {
        r.pauses
            .iter()
            .filter(|p| p.node == host(h) && p.paused)
            .map(|p| {
                assert_eq!(p.kind, "group");
                p.class
            })
            .collect()
    };
    println!(
        "groups paused: S1 {:?}, S2 {:?}, VS {:?}",
        groups(s1),
        groups(s2),
        groups(vs)
    );
    let root = groups(s1);
    assert_eq!(root.len(), 1, "S1 is paused for the incast's root alone");
    assert_eq!(groups(s2), root);
    assert!(!groups(vs).is_empty() && groups(vs).is_disjoint(&root));
    let hol = r.hol.as_ref().unwrap();
    println!("HOL {} of {}", hol.violations.len(), hol.flows_checked);
    assert!(hol.flows_checked > 0 && hol.violations.is_empty());
    assert!(r.drops.iter().all(|d| d.reason == "ingress_program_drop"));
    (r, roles)
}

/// B.5 item 5, the relay, four hops deep (`programs/pyrrha/fat-tree-incast.ron`: a 4:1
/// incast across the pods of a k = 8 fat tree, and a 50 Gb/s flow to the root's rack
/// neighbour). The root, h0_0_0's edge port, pauses the destination pod's aggregation
/// switches (hop 1); their IQs relay it to the cores (hop 2), theirs to the senders'
/// aggregation switches (hop 3) and on to the senders' edge switches (hop 4), each pausing
/// only an IQ on its uplink. The vulnerable flow, which shares the destination pod's
/// links with the incast, ends within 15 µs of its sender stopping (it kept its 50 Gb/s);
/// no flow waits behind a port it does not cross; everything arrives; every IQ comes back.
#[test]
fn the_root_is_relayed_four_hops_up_a_fat_tree() {
    let path = Path::new("programs/pyrrha/fat-tree-incast.ron");
    let run = net::run_detailed(net::load(path).unwrap(), path.parent().unwrap(), None).unwrap();
    let r = &run.record;
    let tier = |p: &asic_net::records::PauseEvent| p.node.chars().next().unwrap();
    let paused: std::collections::BTreeSet<(String, u16)> = r
        .pauses
        .iter()
        .filter(|p| p.paused)
        .map(|p| {
            assert!(p.kind == "queue" && p.class != 0, "{p:?}");
            (p.node.clone(), p.port)
        })
        .collect();
    println!("paused: {paused:?}");
    // Pod 0's aggregation switches (hop 1), cores (hop 2), other pods' aggregation (hop 3)
    // and edge switches (hop 4, on an uplink: ports 4 to 7); pod 0's edge switches never.
    let at = |prefix: &str| paused.iter().any(|(n, _)| n.starts_with(prefix));
    assert!(at("a0_") && at("c"));
    assert!(paused
        .iter()
        .any(|(n, _)| n.starts_with('a') && !n.starts_with("a0_")));
    let edges: Vec<_> = paused.iter().filter(|(n, _)| n.starts_with('e')).collect();
    assert!(!edges.is_empty());
    assert!(
        edges.iter().all(|(n, p)| !n.starts_with("e0_") && *p >= 4),
        "{edges:?}"
    );
    assert!(r.pauses.iter().all(|p| "eac".contains(tier(p))));
    // The file's fifth source: h5_0_0 to h0_0_1.
    let vul = &r.flows[4];
    assert_eq!(vul.size_bytes, 625_000);
    let end_us = vul.end_ps.unwrap() as f64 / 1e6;
    println!("h5_0_0 -> h0_0_1 ends at {end_us:.1} us");
    assert!(end_us < 115.0, "{end_us}");
    let c = asic_report::metrics::conservation(r);
    assert_eq!((c.received, c.dropped, c.in_flight), (c.sent, 0, 0));
    let hol = r.hol.as_ref().unwrap();
    println!("HOL {} of {}", hol.violations.len(), hol.flows_checked);
    assert!(hol.flows_checked > 1000 && hol.violations.is_empty());
    assert_every_iq_back(&run);
}

/// B.5 item 11, the HOL check on the testbed under three flow controls: Pyrrha's paused
/// queues hold only flows through the root they are paused for; BFC with every flow in one
/// queue (`assignment: Single`, hash collisions at their worst) and PFC pause VS's flow with
/// S2's, and the check reports it.
#[test]
fn the_hol_check_holds_for_pyrrha_and_not_for_bfc_with_collisions_or_pfc() {
    let violations = |deploy: &str, chips: &str| {
        let (r, roles) = testbed(deploy, chips);
        let hol = r.hol.unwrap();
        let vs = roles[2] as u32;
        println!(
            "{deploy}: {} of {} flows seen in paused queues, of them VS's {}",
            hol.violations.len(),
            hol.flows_checked,
            hol.violations.iter().filter(|v| v.flow.src == vs).count()
        );
        hol.violations.len()
    };
    assert_eq!(violations("Pyrrha(())", "[]"), 0);
    assert!(violations("Bfc((assignment: Single))", "[]") > 0);
    assert!(violations("Routers(Ecmp)", PFC) > 0);
}

/// Two chips in a line (`Dumbbell(left: 2, right: 2)`: l0, l1 on sw0's ports 0, 1; r0, r1
/// on sw1's; sw0 port 2 to sw1 port 2). l0 and r1 send to r0 at line rate until 50 µs, so
/// sw1's port 0 is the root; l1 sends `vulnerable` Gb/s (if any) to r1 across the same link
/// without crossing it. sw1's frames to sw0 are captured. Root ids: sw0's ports 0, 1, 2 are 0, 1,
/// 2; sw1's 3, 4, 5.
fn line(vulnerable: Option<f64>) -> (asic_net::NetRun, Vec<Vec<u8>>) {
    let l1 = vulnerable.map_or(String::new(), |g| {
        format!("ConstantRate((src: \"l1\", dst: \"r1\", rate_gbps: {g:?}, stop_ns: 50000)),")
    });
    let s: NetScenario = ron::from_str(&format!(
        r#"(
            topology: Generate((shape: Dumbbell(left: 2, right: 2),
                                chip: "tofino2-100g-128q.ron", delay_ns: 600)),
            deploy: Pyrrha(()),
            traffic: [
                ConstantRate((src: "l0", dst: "r0", rate_gbps: 100.0, stop_ns: 50000)),
                ConstantRate((src: "r1", dst: "r0", rate_gbps: 100.0, stop_ns: 50000)),
                {l1}
            ],
            stop: (at_ns: Some(200000)),
            sample_period_ns: Some(1000),
            hol_check: Some((congested_cells: 1, grace_ns: 3000)),
            pcaps: [(node: "sw1", port: 2)],
        )"#
    ))
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let r = net::run_detailed(s, Path::new("programs/pyrrha"), Some(dir.path())).unwrap();
    let frames = asic_io::pcap::read_pcap(&dir.path().join("sw1-port2.pcap"))
        .unwrap()
        .into_iter()
        .map(|f| f.data)
        .filter(|d| d.len() >= 18 && d[12..14] == GROUP_PAUSE_ETHERTYPE.to_be_bytes())
        .collect();
    (r, frames)
}

/// B.5 items 1, 2, 4 and 8. The root (sw1's port 0, id 3) sends PAUSE(3, hop 1) out of
/// the port the packets came in by, to sw0, once per crossing of K_pause: PAUSE and RESUME
/// alternate, starting with PAUSE and ending with RESUME, and nothing goes to the hosts.
/// sw0 gives the root an IQ on its port 2 and steers l0's packets into it; l1's flow to r1
/// crosses the same link but not the root, stays in the OQ and keeps its 30 Gb/s. When the
/// incast is over the IQ is resumed, empty and released: back on the stack, the root's
/// assignment cleared. No output queue is ever paused, no flow waits in a paused queue
/// without crossing a congested port (within 3 µs of a resume), and nothing is lost.
#[test]
fn the_root_pauses_its_upstream_and_releases_it() {
    let (run, frames) = line(Some(30.0));
    let r = &run.record;
    let ops: Vec<(u8, u8, u16)> = frames
        .iter()
        .map(|f| (f[14], f[15], u16::from_be_bytes([f[16], f[17]])))
        .collect();
    println!("frames sw1 -> sw0: {ops:?}");
    assert!(!ops.is_empty());
    assert!(ops.iter().all(|&(_, hop, root)| (hop, root) == (1, 3)));
    let opcodes: Vec<u8> = ops.iter().map(|o| o.0).collect();
    assert!(opcodes.chunks(2).all(|c| c == [1, 2]), "{opcodes:?}");
    // sw0 paused and resumed its IQ for the root (the last of the stack: IQ 100) in step.
    let sw0: Vec<bool> = r
        .pauses
        .iter()
        .filter(|p| p.node == "sw0")
        .map(|p| {
            assert_eq!((p.port, p.kind.as_str(), p.class), (2, "queue", 100));
            p.paused
        })
        .collect();
    assert_eq!(sw0.len(), opcodes.len());
    assert!(r.pauses.iter().all(|p| p.class != 0), "an OQ was paused");
    assert!(r.pauses.iter().all(|p| p.node == "sw0"));
    // The vulnerable flow keeps its rate: 30 Gb/s of data into r1 over the incast.
    let vul = r.flows.iter().find(|f| f.src == 1).unwrap();
    println!(
        "l1 -> r1: {} packets sent, {} dropped",
        vul.packets_sent, vul.packets_dropped
    );
    let hol = r.hol.as_ref().unwrap();
    assert_eq!(hol.violations.len(), 0, "{:?}", hol.violations);
    assert!(hol.paused_queues > 0);
    // Released: IQ 100 back on port 2's stack (100 free), the root's entry cleared.
    let sw0 = run.chip("sw0").unwrap();
    assert_eq!(sw0.register_read_by_name(0, "top", 2).unwrap(), 100);
    assert_eq!(
        sw0.register_read_by_name(0, "assign1", 2 << 12 | 3)
            .unwrap(),
        0
    );
    assert!(r.drops.is_empty() || r.drops.iter().all(|d| d.reason == "ingress_program_drop"));
}

/// B.5 item 13: with nothing queued upstream (l1 silent, so sw0's port to sw1 carries l0
/// alone at line rate), the root's queue peaks within the paper's bound, K_pause + m · BDP
/// (m = 2 senders). One hop's BDP is the link's rate times the hop's round trip, twice the
/// 600 ns link and the chips' part of the loop (`pipeline_ns`, 2,100 ns): 235 cells;
/// K_pause 469. Past K_pause the queue grows at one line rate (r1, a host on sw1, is never
/// paused) until the last of what sw0 sent before its IQ was paused arrives: one loop. So
/// the overshoot measures the loop, and it is one BDP within 20 % when `pipeline_ns` is
/// the model's own (the PAUSE leaves sw1 about 0.55 µs after the crossing, crosses the
/// link, sw0 pauses its IQ 0.8 µs later: the frame's pass, the recirculated install pass,
/// AFC; what it sent before reaches the root 1.3 µs after that).
#[test]
fn the_incast_stays_within_k_pause_and_the_loop_of_its_upstream() {
    let (run, _) = line(None);
    let sw1 = run.chip("sw1").unwrap();
    let peak = sw1.tm().queue_counters(0, 0).max_depth_cells as f64;
    let bdp = (100e9 * (2.0 * 600e-9 + 2100e-9) / 8.0 / 176.0_f64).ceil();
    let k_pause = (2.0 * 100e9 * (2.0 * 600e-9 + 2100e-9) / 8.0 / 176.0_f64).ceil();
    let loops = (peak - k_pause) / bdp;
    println!("sw1 port 0 OQ peak {peak} cells: K_pause {k_pause} + {loops:.2} BDP of {bdp}");
    assert!(peak <= k_pause + 2.0 * bdp, "{peak}");
    assert!((0.8..=1.2).contains(&loops), "{loops:.2} BDPs past K_pause");
}

/// A Pyrrha frame from sw1's port 2 (`asic_net::ctrl`'s flow-group frame): `opcode` (1
/// PAUSE, 2 RESUME), `hop`, `root`.
fn frame(opcode: u8, hop: u8, root: u16) -> Vec<u8> {
    build_group([0x02, 0xfe, 0, 1, 0, 2], opcode, (root, hop), (0, 0))
}

/// sw0 of `Dumbbell(left: left, right: 2)` (hosts on ports 0 to `left` - 1, its port to
/// sw1 `left`; `left` = 2: the line of `line`), as its deployment built it with Pyrrha's
/// parameters `spec`, on the bench after `frames` came in on its port to sw1, 5 µs apart;
/// and how many packets it sent out.
fn frames_into_sw0(left: u16, spec: &str, frames: Vec<Vec<u8>>) -> (Bench, u64) {
    let s: NetScenario = ron::from_str(&format!(
        r#"(topology: Generate((shape: Dumbbell(left: {left}, right: 2),
                                chip: "tofino2-100g-128q.ron", delay_ns: 600)),
            deploy: Pyrrha({spec}))"#
    ))
    .unwrap();
    let net = asic_deploy::build::build(s, Path::new("programs/pyrrha")).unwrap();
    let mut bench = Bench::on_chip(net.chips.into_iter().next().unwrap(), "pyrrha".into());
    let timed = frames
        .into_iter()
        .enumerate()
        .map(|(i, f)| (Time(i as u64 * 5_000_000), f))
        .collect();
    bench.add_frames(left, timed).unwrap();
    let report = bench.run().unwrap();
    (bench, report.packets_out())
}

/// B.5 item 9, the self-ID guard, on sw0 of the line alone: PAUSE naming one of sw0's own
/// ports (root 2, its port to sw1) changes nothing; PAUSE naming sw1's port 0 (root 3) gives
/// it an IQ (popped, installed in a second pass) and pauses it by advanced flow control;
/// RESUME resumes it and, as it is empty, releases it, once only. Frames come in on port 2,
/// 5 µs apart; what each case leaves: AFC requests, IQ 100 paused, free IQs on port 2, root
/// 3's IQ, packets out.
#[test]
fn a_pause_naming_the_chips_own_port_is_ignored() {
    let run = |frames: Vec<Vec<u8>>| {
        let (bench, packets_out) = frames_into_sw0(2, "()", frames);
        let c = bench.chip();
        (
            c.plumbing_counters().afc_requests,
            c.tm().is_queue_paused(2, 100),
            c.register_read_by_name(0, "top", 2).unwrap(),
            c.register_read_by_name(0, "assign1", 2 << 12 | 3).unwrap(),
            packets_out,
        )
    };
    assert_eq!(run(vec![frame(1, 1, 2)]), (0, false, 100, 0, 0));
    assert_eq!(run(vec![frame(1, 1, 3)]), (1, true, 99, 100, 0));
    assert_eq!(
        run(vec![frame(1, 1, 3), frame(2, 1, 3)]),
        (2, false, 100, 0, 0)
    );
    // A second "IQ 100 of port 2 left empty" record after the release (as one from a packet
    // the pipe had steered to the IQ before its assignment was cleared would be) finds the
    // IQ's record gone and gives nothing back: still 100 free, not 101.
    let mut deq = vec![0u8; 64];
    deq[..8].copy_from_slice(&[0xb7, 3, 0, 2, 100, 0, 0, 0]);
    deq[9] = 1;
    assert_eq!(
        run(vec![frame(1, 1, 3), frame(2, 1, 3), deq]),
        (2, false, 100, 0, 0)
    );
}

/// State kept per pipe, on a chip whose ports span pipes: sw0 of `Dumbbell(left: 16, right:
/// 2)` has its hosts on ports 0 to 15 (pipe 0) and its port to sw1 on 16 (pipe 1). PAUSE for
/// sw1's port to r0 (root 17) on port 16 pops IQ 100 from port 16's stack and pauses it in
/// pipe 1, which keeps the count; both pipes' root tables give root 17 IQ 100 (the INSTALL
/// went to both), so packets from the hosts, in pipe 0, find it. RESUME releases it: the
/// stack whole again, the tables of both pipes and their IQ records cleared.
#[test]
fn each_pipe_keeps_its_copy_of_the_root_tables() {
    let run = |frames: Vec<Vec<u8>>| {
        let (bench, _) = frames_into_sw0(16, "()", frames);
        let c = bench.chip();
        let reg = |pipe: u16, name: &str, i: u32| c.register_read_by_name(pipe, name, i).unwrap();
        let iq = 16 << 7 | 100;
        (
            c.tm().is_queue_paused(16, 100),
            [0, 1].map(|p| reg(p, "assign1", 16 << 12 | 17)),
            [0, 1].map(|p| reg(p, "iq_root", iq)),
            [0, 1].map(|p| reg(p, "iq_paused", iq)),
            [0, 1].map(|p| reg(p, "top", 16)),
        )
    };
    let hop1 = 1 << 12 | 17;
    assert_eq!(
        run(vec![frame(1, 1, 17)]),
        (true, [100, 100], [hop1, hop1], [0, 1], [100, 99])
    );
    assert_eq!(
        run(vec![frame(1, 1, 17), frame(2, 1, 17)]),
        (false, [0, 0], [0, 0], [0, 0], [100, 100])
    );
}

/// B.5 item 3, path fidelity: the edge switch of host 0 in a 3-tier fat tree (k = 4) alone
/// on the bench, 400 packets from host 0 to random hosts of the other pods with random flow
/// ids. At every lookup of `path1` to `path4` the root the program found is the one the
/// path oracle gives for the key it looked up (egress port, destination, flow hash): the port
/// the aggregation switch sends the packet out of (to a core its ECMP picks by the hash),
/// the port the core, the destination's aggregation switch and its edge switch send it out
/// of; between them the packets reach every core.
#[test]
fn the_programs_path_is_the_oracles() {
    use asic_deploy::paths::PathOracle;
    use asic_deploy::routers::Routing;
    use asic_model::trace::{TraceEvent, TraceFilter};
    use asic_net::packet::{build as frame_of, Header, DATA};
    use asic_net::topology::End;
    let s: NetScenario = ron::from_str(
        "(topology: Generate((shape: FatTree(k: 4, tiers: 3), \
         chip: \"tofino2-100g-128q.ron\", delay_ns: 600)), deploy: Pyrrha(()))",
    )
    .unwrap();
    let net = asic_deploy::build::build(s, Path::new("programs/pyrrha")).unwrap();
    let topo = net.topology.clone();
    let End::Chip(edge, in_port) = topo.peer(topo.host_link[0], End::Host(0)) else {
        panic!("host 0 hangs off a chip")
    };
    let pod = |h: usize| {
        let End::Chip(c, _) = topo.peer(topo.host_link[h], End::Host(h)) else {
            unreachable!()
        };
        // Host 0's edge switch is 1 chip away, the others of its pod 3, other pods' 5.
        topo.chip_distances(0)[c] <= 3
    };
    let far: Vec<usize> = (0..topo.host_ips.len()).filter(|&h| !pod(h)).collect();
    let oracle = PathOracle::uniform(topo.clone(), Routing::Ecmp);
    // Root ids: the connected chip ports in topology order.
    let mut root = std::collections::BTreeMap::new();
    for (c, ports) in topo.chip_ports.iter().enumerate() {
        for &p in ports.keys() {
            let id = root.len() as u128;
            root.insert((c, p), id);
        }
    }
    let chip = net.chips.into_iter().nth(edge).unwrap();
    let mut bench = Bench::on_chip(chip, "pyrrha".into());
    bench.set_packet_trace(TraceFilter::default()).unwrap();
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut frames = Vec::new();
    for i in 0..400u64 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let dst = far[(x % far.len() as u64) as usize];
        let h = Header {
            src_ip: topo.host_ips[0],
            dst_ip: topo.host_ips[dst],
            flags: DATA,
            flow_id: x >> 8,
            ..Header::default()
        };
        let mut f = Vec::new();
        frame_of(&mut f, &h, 100);
        frames.push((Time(i * 1_000_000), f));
    }
    bench.add_frames(in_port, frames).unwrap();
    bench.run().unwrap();
    let host_of = |ip: u128| topo.host_ips.iter().position(|&a| a as u128 == ip).unwrap();
    let (mut looked, mut cores) = (0, std::collections::BTreeSet::new());
    for t in bench.packet_traces() {
        let lookups: Vec<_> = t
            .records
            .iter()
            .filter_map(|rec| match &rec.event {
                TraceEvent::Table {
                    table, key, args, ..
                } => {
                    let hops = table.strip_prefix("Ingress.path")?.parse::<usize>().ok()?;
                    Some((table, hops, key, args))
                }
                _ => None,
            })
            .collect();
        // The flow hash, a key of `path1` and `path2` (`path3` and `path4` do without).
        let Some(hash) = lookups
            .iter()
            .find(|l| l.1 == 1)
            .map(|l| l.2[3].value as u16)
        else {
            continue;
        };
        for (table, hops, key, args) in lookups {
            let (e, dst) = (key[0].value as u16, host_of(key[1].value));
            // Follow the oracle from the edge switch's egress port `e`.
            let mut at = topo.peer(topo.chip_ports[edge][&e], End::Chip(edge, e));
            let mut want = None;
            for hop in 1..=hops {
                let End::Chip(c, _) = at else { break };
                let p = oracle.routes(c).unwrap().port(dst, hash).unwrap();
                want = Some(root[&(c, p)]);
                if hop == 2 {
                    cores.insert(c);
                }
                at = topo.peer(topo.chip_ports[c][&p], End::Chip(c, p));
            }
            let got = args.iter().find(|a| a.name == "root").map(|a| a.value);
            assert_eq!(
                got, want,
                "{table} for port {e}, host {dst}, hash {hash:#x}"
            );
            looked += 1;
        }
    }
    assert_eq!(looked, 1600, "four lookups a packet");
    assert_eq!(cores.len(), 4, "every core of k = 4");
}

/// Parameters the deployment cannot use, and a chip it cannot run on, are refused with
/// their field.
#[test]
fn bad_parameters_are_named() {
    for (deploy, shape, says) in [
        (
            "(k_pause: 1.0, k_resume: 1.0)",
            "Dumbbell(left: 1, right: 1)",
            "pyrrha: `k_pause` 1 must be above `k_resume` 1",
        ),
        (
            "(k_resume: 0.0)",
            "Dumbbell(left: 1, right: 1)",
            "and both positive",
        ),
        (
            "(max_iqs: 0)",
            "Dumbbell(left: 1, right: 1)",
            "pyrrha: `max_iqs` 0 leaves no isolation queue",
        ),
        // 33 hosts on one switch (ports 0 to 32, in three pipes): a bit each in the
        // upstream-port masks is one too many.
        (
            "()",
            "SingleSwitch(hosts: 33)",
            "pyrrha: 33 connected ports; an upstream-port mask holds 32",
        ),
    ] {
        let s: NetScenario = ron::from_str(&format!(
            r#"(topology: Generate((shape: {shape}, chip: "tofino2-100g-128q.ron")),
                deploy: Pyrrha({deploy}), stop: (at_ns: Some(1000)))"#
        ))
        .unwrap();
        let Err(err) = net::run_detailed(s, Path::new("programs/pyrrha"), None) else {
            panic!("{deploy} on {shape} was taken");
        };
        assert!(err.contains(says), "{deploy}: {err}");
    }
    // A chip downstream whose routes the path tables cannot follow: sw1 runs its own
    // program, so sw0's tables have nothing to follow through it.
    let s: NetScenario = ron::from_str(
        r#"(topology: Generate((shape: Dumbbell(left: 1, right: 1), chip: "tofino2-100g-128q.ron")),
            deploy: Pyrrha(()),
            chips: [(select: Name("sw1"), deploy: Some(Manual),
                     program: Some("../ecmp_router/ecmp_router.p4"))],
            stop: (at_ns: Some(1000)))"#,
    )
    .unwrap();
    let Err(err) = net::run_detailed(s, Path::new("programs/pyrrha"), None) else {
        panic!("a Manual chip downstream was taken");
    };
    assert!(
        err.contains("chip `sw0`: pyrrha: the path tables follow packets through `sw1`, whose routes are not generated ones"),
        "{err}"
    );
}

/// Once the testbed's traffic has drained (`programs/pyrrha/testbed.ron` runs until its flows
/// complete), every IQ any chip gave out is back: each connected port's stack holds all 100,
/// no root keeps an assignment and no IQ a record; nothing was lost.
#[test]
fn the_testbed_gives_every_iq_back() {
    let path = Path::new("programs/pyrrha/testbed.ron");
    let run = net::run_detailed(net::load(path).unwrap(), path.parent().unwrap(), None).unwrap();
    let r = &run.record;
    assert!(r.flows.iter().all(|f| f.end_ps.is_some()));
    assert!(r.pauses.iter().any(|p| p.paused), "IQs were given out");
    assert_every_iq_back(&run);
    assert!(r.drops.iter().all(|d| d.reason == "ingress_program_drop"));
}

/// Every chip of `run` at its end: each connected port's stack holds all 100 IQs, and no
/// root keeps an assignment, no IQ a record, a count of PAUSEs or an IQ waiting behind it.
pub(crate) fn assert_every_iq_back(run: &asic_net::NetRun) {
    let r = &run.record;
    for c in 0..run.chips.len() {
        let name = &r.chips[c].node;
        let registers = || {
            r.chips[c]
                .state
                .pipes
                .iter()
                .flat_map(|p| p.state.ingress.registers.iter())
        };
        // The registers not at their initial value: `top` holds 100 on each connected port.
        let top = registers().find(|g| g.name == "Ingress.top").unwrap();
        assert!(!top.elements.is_empty(), "{name}");
        for e in &top.elements {
            assert_eq!(e.value, 100, "{name} port {}: {} free", e.index, e.value);
        }
        let kept = [
            "assign1",
            "assign2",
            "assign3",
            "assign4",
            "iq_root",
            "iq_paused",
            "iq_next",
        ];
        let mut seen = 0;
        for reg in registers() {
            if kept.iter().any(|k| reg.name == format!("Ingress.{k}")) {
                seen += 1;
                assert!(
                    reg.elements.is_empty(),
                    "{name}: {} still holds {:?}",
                    reg.name,
                    reg.elements
                );
            }
        }
        // Each group of pipes holding the same state lists them all.
        assert_eq!(seen, kept.len() * r.chips[c].state.pipes.len(), "{name}");
    }
}

/// B.5 item 12, the IQ cap, on sw0 alone with two IQs a port: PAUSE for roots 3 and 4 (sw1's
/// ports) takes IQs 2 and 1 off port 2's stack; root 5 finds none free and is hashed onto
/// IQ 2 (1 + 5 mod 2), which counts two PAUSEs. RESUME of root 3 leaves IQ 2 paused (root
/// 5's PAUSE is outstanding: resuming it would let root 5's flows into a congested root);
/// RESUME of root 5 resumes and releases it, RESUME of root 4 IQ 1: the stack holds both IQs
/// again and no IQ is paused or counts a PAUSE. Root 5's assignment stays on IQ 2 (the
/// release clears the IQ's first root's): its next PAUSE pauses IQ 2 again, shared with
/// whichever root takes it next, and the counts keep the two apart.
#[test]
fn roots_past_the_cap_share_an_iq_and_it_stays_paused_until_both_resume() {
    let run = |frames: Vec<Vec<u8>>| {
        let (bench, _) = frames_into_sw0(2, "(max_iqs: 2)", frames);
        let c = bench.chip();
        let reg = |name: &str, i: u32| c.register_read_by_name(0, name, i).unwrap();
        (
            [c.tm().is_queue_paused(2, 1), c.tm().is_queue_paused(2, 2)],
            [reg("iq_paused", 2 << 7 | 1), reg("iq_paused", 2 << 7 | 2)],
            reg("top", 2),
            [3, 4, 5].map(|r| reg("assign1", 2 << 12 | r)),
        )
    };
    let pauses = vec![frame(1, 1, 3), frame(1, 1, 4), frame(1, 1, 5)];
    assert_eq!(run(pauses.clone()), ([true, true], [1, 2], 0, [2, 1, 2]));
    let resume = |roots: &[u16]| {
        let mut f = pauses.clone();
        f.extend(roots.iter().map(|&r| frame(2, 1, r)));
        run(f)
    };
    assert_eq!(resume(&[3]), ([true, true], [1, 1], 0, [2, 1, 2]));
    assert_eq!(resume(&[3, 5]), ([true, false], [1, 0], 1, [0, 1, 2]));
    assert_eq!(resume(&[3, 5, 4]), ([false, false], [0, 0], 2, [0, 0, 2]));
}
