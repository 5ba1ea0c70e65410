//! The HOL-blocking check (`hol_check`, deploy/src/hol.rs) on Pyrrha's testbed (§V-B): 3
//! ToRs, 2 cores, 2 hosts a rack; S1 and S2 send to R1 at line rate through different
//! cores, and VS's flow to VR crosses S2's core and its port to R1's ToR. Under PFC R1's
//! ToR pauses that core port for R1's incast and VS's flow waits in the paused queue
//! without crossing R1's congested port: the check reports it, and only it. Without PFC
//! nothing is paused and there is nothing to report.

use asic_deploy::paths::{FiveTuple, PathOracle};
use asic_deploy::routers::Routing;
use asic_deploy::scenario::{NetScenario, TopologySource};
use asic_deploy::{build, run as net};
use asic_net::records::HolReport;
use std::path::Path;

const TOPOLOGY: &str = "Generate((shape: LeafSpine(leaves: 3, spines: 2, hosts_per_leaf: 2), \
                        chip: \"rmt2013\", delay_ns: 1000))";

/// The testbed's roles among the hosts of `topology` (3 leaves, 2 spines, `per_leaf` hosts a
/// leaf: leaf 0 = rack A, 1 = B, 2 = C; the roles from the first two of each rack): (S1,
/// S2, VS, R1, VR) as host indexes, chosen so that,
/// with the flow ids 0, 1, 2 the runtime gives the three sources in order, S1 and S2 reach
/// R1 through different cores and VS's flow crosses S2's core. VS is S1's rack neighbour:
/// the only port its flow shares with the incast is S2's core port to R1's ToR (§V-B).
/// Profiles named in `topology` are relative to `base`.
pub(crate) fn testbed_roles(topology: &str, base: &Path, per_leaf: usize) -> [usize; 5] {
    let source: TopologySource = ron::from_str(topology).unwrap();
    let topo = build::topology(&source, asic_io::load::Base(base)).unwrap();
    let oracle = PathOracle::uniform(topo.clone(), Routing::Ecmp);
    let core = |src: usize, dst: usize, flow: u64| {
        let p = oracle
            .path(src, dst, &FiveTuple::of_flow(&topo, src, dst, flow))
            .unwrap();
        p[1]
    };
    let (b, c) = (per_leaf, 2 * per_leaf);
    for (s1, vs) in [(0, 1), (1, 0)] {
        for s2 in [b, b + 1] {
            for (r1, vr) in [(c, c + 1), (c + 1, c)] {
                let (c1, c2, cv) = (core(s1, r1, 0), core(s2, r1, 1), core(vs, vr, 2));
                if c1.chip != c2.chip && c2 == cv {
                    return [s1, s2, vs, r1, vr];
                }
            }
        }
    }
    panic!("no assignment of the testbed's roles fits the hash")
}

/// The testbed with 10G links under `chips` (the chips' settings): S1 and S2 at line rate
/// to R1, VS at 2 Gb/s to VR from 50 µs; the queues looked at every 10 µs.
fn testbed(chips: &str) -> (asic_net::NetRun, HolReport, [usize; 5]) {
    let roles = testbed_roles(TOPOLOGY, Path::new("."), 2);
    let [s1, s2, vs, r1, vr] = roles.map(|h| format!("h{}_{}", h / 2, h % 2));
    let s: NetScenario = ron::from_str(&format!(
        r#"(
            topology: {TOPOLOGY},
            deploy: Routers(Ecmp),
            chips: {chips},
            traffic: [
                ConstantRate((src: "{s1}", dst: "{r1}", rate_gbps: 10.0, stop_ns: 300000)),
                ConstantRate((src: "{s2}", dst: "{r1}", rate_gbps: 10.0, stop_ns: 300000)),
                ConstantRate((src: "{vs}", dst: "{vr}", rate_gbps: 2.0, start_ns: 50000, stop_ns: 300000)),
            ],
            stop: (at_ns: Some(400000)),
            sample_period_ns: Some(10000),
            hol_check: Some((congested_cells: 40)),
        )"#
    ))
    .unwrap_or_else(|e| panic!("{e}"));
    let r = net::run_detailed(s, Path::new("."), None).unwrap();
    let hol = r.record.hol.clone().expect("hol_check ran");
    (r, hol, roles)
}

#[test]
fn pfc_pauses_the_vulnerable_flow_and_the_check_says_so() {
    let pfc = "[(select: All, config: Some((tm: (pfc: (groups: [(priority: 0, \
               xoff_cells: 100, hysteresis_cells: 16, headroom_cells: 200)])))))]";
    let (_, hol, [_, _, vs, _, vr]) = testbed(pfc);
    println!("{hol:?}");
    assert!(hol.samples >= 40);
    assert!(hol.paused_queues > 0, "PFC paused some queue with packets");
    assert!(!hol.violations.is_empty());
    // Every violation is VS's flow: the incast's flows cross R1's congested port.
    assert!(
        hol.violations
            .iter()
            .all(|v| (v.flow.src, v.flow.dst) == (vs as u32, vr as u32)),
        "{:?}",
        hol.violations
    );
    assert_eq!(hol.off_path, 0);
}

#[test]
fn without_pause_there_is_nothing_to_report() {
    let (_, hol, _) = testbed("[]");
    assert_eq!((hol.paused_queues, hol.violations.len()), (0, 0));
}

/// The check looks at sampled instants: without a sampling period it has none.
#[test]
fn hol_check_needs_a_sampling_period() {
    let s: NetScenario = ron::from_str(
        r#"(topology: Generate((shape: SingleSwitch(hosts: 2), chip: "rmt2013")),
            hol_check: Some((congested_cells: 10)))"#,
    )
    .unwrap();
    let err = net::run_detailed(s, Path::new("."), None).err().unwrap();
    assert!(err.contains("hol_check: needs sample_period_ns"), "{err}");
}
