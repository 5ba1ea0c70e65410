//! Pyrrha (deploy/src/pyrrha.rs, programs/pyrrha) on its testbed (§V-B): 3 ToRs, 2 cores, 2
//! hosts a rack, 100G; S1 and S2 send to R1 through different cores, and VS's flow to VR
//! crosses S2's core and its port to R1's ToR.

use crate::hol::testbed_roles;
use asic_deploy::{run as net, scenario::NetScenario};
use asic_net::records::RunRecord;
use std::path::Path;

const TOPOLOGY: &str = "Generate((shape: LeafSpine(leaves: 3, spines: 2, hosts_per_leaf: 2), \
                        chip: \"tofino2-100g-128q.ron\", delay_ns: 600))";

/// The testbed under `deploy` with `chips` (the chips' settings): S1 and S2 at 100 Gb/s to
/// R1 from 0 and 20 µs, VS at 100 Gb/s to VR from 40 µs, all until 200 µs; the queues
/// sampled every µs and checked for HOL blocking. Also the roles (host indexes).
fn testbed(deploy: &str, chips: &str) -> (RunRecord, [usize; 5]) {
    let roles = testbed_roles(TOPOLOGY, Path::new("programs/pyrrha"));
    let [s1, s2, vs, r1, vr] = roles.map(|h| format!("h{}_{}", h / 2, h % 2));
    let s: NetScenario = ron::from_str(&format!(
        r#"(
            topology: {TOPOLOGY},
            deploy: {deploy},
            chips: {chips},
            traffic: [
                ConstantRate((src: "{s1}", dst: "{r1}", rate_gbps: 100.0, stop_ns: 200000)),
                ConstantRate((src: "{s2}", dst: "{r1}", rate_gbps: 100.0, start_ns: 20000, stop_ns: 200000)),
                ConstantRate((src: "{vs}", dst: "{vr}", rate_gbps: 100.0, start_ns: 40000, stop_ns: 200000)),
            ],
            stop: (at_ns: Some(300000)),
            sample_period_ns: Some(1000),
            hol_check: Some((congested_cells: 1)),
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

/// PFC on priority 0 of every chip: XOFF at 2 one-hop BDPs of ingress (171 cells of 176 B,
/// Pyrrha's K_pause), headroom for a hop's round trip and two frames.
const PFC: &str = "[(select: All, config: Some((tm: (pfc: (groups: [(priority: 0, \
                   xoff_cells: 171, hysteresis_cells: 88, headroom_cells: 120)])))))]";

/// The testbed under Pyrrha: R1's ToR port is the root, both cores give it an IQ and pause
/// it, and the senders' ToRs get the relayed root; the incast keeps R1's link near line
/// rate and VS's flow goes on; no output queue is ever paused. Under PFC (printed beside
/// it) VS's flow is no worse off here, as the link it shares with S2 is full either way
/// (programs/pyrrha/README.md).
#[test]
fn the_testbed_isolates_the_incast() {
    let (r, roles) = testbed("Pyrrha(())", "[]");
    let (r1, vr) = ((roles[3] % 2) as u16, (roles[4] % 2) as u16);
    let hol = r.hol.as_ref().unwrap();
    let (to_r1, to_vr) = (rate(&r, r1, 60, 200), rate(&r, vr, 60, 200));
    println!(
        "Pyrrha: to R1 {to_r1:.1} Gb/s, to VR {to_vr:.1} Gb/s; HOL {} of {}",
        hol.violations.len(),
        hol.flows_checked
    );
    assert!(to_r1 > 95.0 && to_vr > 40.0);
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
    let (p, _) = testbed("Routers(Ecmp)", PFC);
    let hol = p.hol.as_ref().unwrap();
    println!(
        "PFC: to R1 {:.1} Gb/s, to VR {:.1} Gb/s; HOL {} of {}",
        rate(&p, r1, 60, 200),
        rate(&p, vr, 60, 200),
        hol.violations.len(),
        hol.flows_checked
    );
}
