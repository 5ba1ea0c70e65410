//! Pyrrha's deadlock analysis (§VII) on the modelled chips: the loops of Figs. 12 and 13
//! (`programs/pyrrha/loop-one-flow.ron`, `loop-three-flows.ron`: three chips in a ring,
//! routes set by hand) under Pyrrha, PFC and BFC. A deadlock is a cyclic buffer
//! dependency that outlives the traffic: long after the senders stop (the runs go on to 1
//! ms), data packets are still in the chips and every ring port is still paused.

use asic_deploy::{run as net, scenario::NetScenario};
use asic_report::metrics::{conservation, pause_stats};
use std::path::Path;

/// PFC on priority 0 of every chip, as in the testbed's comparison (`tests/asic/pyrrha.rs`):
/// XOFF at Pyrrha's K_pause (469 cells), XON 232 cells lower, headroom for a hop's loop.
const PFC: &str = "deploy: Routers(Ecmp), chips: [(select: All, config: Some((tm: (pfc: \
                   (groups: [(priority: 0, xoff_cells: 469, hysteresis_cells: 232, \
                   headroom_cells: 260)])))))],";

/// How a run of `file` under `deploy` (the scenario's `deploy` line replaced) ends: data
/// packets (sent, received, dropped, still in the network) and the ring ports (`A:1`, `B:1`,
/// `C:1`) paused at the end.
fn ends(file: &str, deploy: &str) -> ([u64; 4], Vec<String>) {
    let (counts, paused, ..) = run(file, deploy);
    (counts, paused)
}

/// `ends`, the longest pause of any queue of the chips (µs), and what the HOL check saw:
/// flows in paused queues, and of them those with no congested port on their way (a
/// looping flow's way is its loop; in a deadlock no queue drains, so every waiting flow
/// waits for nothing).
fn run(file: &str, deploy: &str) -> ([u64; 4], Vec<String>, f64, (u64, usize)) {
    let text = std::fs::read_to_string(Path::new("programs/pyrrha").join(file)).unwrap();
    assert!(text.contains("deploy: Pyrrha(()),"));
    let s: NetScenario = ron::from_str(&text.replace("deploy: Pyrrha(()),", deploy))
        .unwrap_or_else(|e| panic!("{e}"));
    let r = net::run_detailed(s, Path::new("programs/pyrrha"), None).unwrap();
    let c = conservation(&r.record);
    let hol = r
        .record
        .hol
        .as_ref()
        .expect("the files check for HOL blocking");
    let hol = (hol.flows_checked, hol.violations.len());
    let chips: Vec<_> = pause_stats(&r.record.pauses, r.record.duration_ps)
        .into_iter()
        .filter(|p| ["A", "B", "C"].contains(&p.node.as_str()))
        .collect();
    let paused = chips
        .iter()
        .filter(|p| p.paused_at_end)
        .map(|p| format!("{}:{}", p.node, p.port))
        .collect();
    let longest = chips.iter().map(|p| p.longest_pause_ps).max().unwrap_or(0) as f64 / 1e6;
    println!(
        "{file} under {deploy}: {c:?}, paused at the end {paused:?}, longest {longest} us, \
         HOL {hol:?}"
    );
    let in_flight = u64::try_from(c.in_flight).expect("the conservation line holds");
    (
        [c.sent, c.received, c.dropped, in_flight],
        paused,
        longest,
        hol,
    )
}

const RING: [&str; 3] = ["A:1", "B:1", "C:1"];

/// B.5 item 10 and Fig. 13: three flows, each two hops round the ring, each ring port
/// carrying two of them. Under Pyrrha each ring port's OQ is a root (it is never paused)
/// and the flow it pauses upstream waits in an IQ there, which depends on that OQ: every
/// packet arrives. Under PFC each ring port pauses the one before it (the CBD over C1, A1,
/// B1 of Fig. 13a) and the ring deadlocks; so does BFC when every flow shares one queue
/// (the worst-case collision of Fig. 13b), but not with a queue per flow.
#[test]
fn the_three_flow_loop_converges_under_pyrrha_and_deadlocks_under_pfc_and_colliding_bfc() {
    let file = "loop-three-flows.ron";
    let ([sent, received, dropped, in_flight], paused, _, (seen, blocked)) =
        run(file, "deploy: Pyrrha(()),");
    assert!(sent > 2000);
    assert_eq!((received, dropped, in_flight), (sent, 0, 0));
    assert!(paused.is_empty(), "{paused:?}");
    assert!(seen > 0 && blocked == 0, "{seen} {blocked}");
    for deploy in [PFC, "deploy: Bfc((assignment: Single)),"] {
        let ([sent, received, _, in_flight], paused, _, (seen, blocked)) = run(file, deploy);
        assert!(in_flight > 0 && received < sent, "{deploy}");
        assert_eq!(paused, RING, "{deploy}");
        assert!(blocked as u64 > seen / 2, "{deploy}: {blocked} of {seen}");
    }
    let ([sent, received, _, in_flight], _) = ends(file, "deploy: Bfc(()),");
    assert_eq!((received, in_flight), (sent, 0));
}

/// B.5 item 9 in a network, Fig. 12: one flow whose routes loop round the ring for ever.
/// Under Pyrrha the PAUSE relayed round the ring comes back to the root's own chip, which
/// ignores it (the self-ID guard): no cyclic dependency forms, the ring ports are resumed
/// (no pause lasts 20 µs), and every packet ends dropped where its TTL runs out (the
/// paper's loss at A1). With the guard's entries deleted the chip gives its own port's
/// root an IQ towards the ring and pauses it: that pause outlasts the traffic by hundreds
/// of µs (nothing deadlocks even then, as no OQ is ever paused). Under PFC and BFC (a
/// queue per flow) each ring port pauses the one before it and the looping packets stay in
/// the ring.
#[test]
fn the_single_flow_loop_forms_no_cycle_under_pyrrha_and_deadlocks_under_pfc_and_bfc() {
    let file = "loop-one-flow.ron";
    let ([sent, received, dropped, in_flight], paused, longest, (seen, blocked)) =
        run(file, "deploy: Pyrrha(()),");
    assert!(sent > 100);
    assert_eq!((received, dropped, in_flight), (0, sent, 0));
    assert!(paused.is_empty() && longest < 20.0, "{paused:?} {longest}");
    assert!(seen > 0 && blocked == 0, "{seen} {blocked}");
    // The guard's entries (`own_root`: root ids 0-2 are A's ports, 3-5 B's, 6-8 C's) gone.
    let unguarded: Vec<String> = [("A", 0), ("B", 3), ("C", 6)]
        .iter()
        .map(|(chip, first)| {
            let ops: Vec<String> = (*first..first + 3)
                .map(|r| {
                    format!("(at_ns: 0, op: DeleteEntry((table: \"own_root\", key: [Exact({r})])))")
                })
                .collect();
            format!("(select: Name(\"{chip}\"), control: [{}])", ops.join(", "))
        })
        .collect();
    let deploy = format!("deploy: Pyrrha(()), chips: [{}],", unguarded.join(", "));
    let ([sent, _, dropped, in_flight], _, longest, _) = run(file, &deploy);
    assert_eq!((dropped, in_flight), (sent, 0));
    assert!(longest > 200.0, "{longest}");
    for deploy in [PFC, "deploy: Bfc(()),"] {
        let ([_, _, _, in_flight], paused) = ends(file, deploy);
        assert!(in_flight > 0, "{deploy}");
        assert_eq!(paused, RING, "{deploy}");
    }
}
