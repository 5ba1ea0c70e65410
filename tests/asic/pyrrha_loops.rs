//! Pyrrha's deadlock analysis (§VII) on the modelled chips: the loops of Figs. 12 and 13
//! (`programs/pyrrha/loop-one-flow.ron`, `loop-three-flows.ron`: three chips in a ring,
//! routes set by hand) under Pyrrha, PFC and BFC. A deadlock is a cyclic buffer
//! dependency that outlives the traffic: long after the senders stop (the runs go on to 1
//! ms), data packets are still in the chips and every ring port is still paused.

use crate::pyrrha::PFC;
use asic_deploy::{run as net, scenario::NetScenario};
use asic_report::metrics::{conservation, pause_stats};
use std::path::Path;

/// How a run ends.
struct Ending {
    /// Data packets sent, received, dropped, and still in the network.
    sent: u64,
    received: u64,
    dropped: u64,
    in_flight: u64,
    /// The ring ports (`A:1`, `B:1`, `C:1`) paused at the end.
    paused: Vec<String>,
    /// The longest pause of any queue of the chips (µs).
    longest_us: f64,
    /// The queues (`chip:port:queue`) paused at some time.
    ever_paused: Vec<String>,
    /// What the HOL check saw: flows in paused queues, and of them those with no congested
    /// port on their way (a looping flow's way is its loop; in a deadlock no queue drains,
    /// so every waiting flow waits for nothing).
    hol_seen: u64,
    hol_blocked: u64,
}

/// PFC as the testbed's comparison has it (`crate::pyrrha::PFC`): XOFF at Pyrrha's K_pause.
fn pfc() -> String {
    format!("deploy: Routers(Ecmp), chips: {PFC},")
}

/// A run of `file` with its `deploy` line replaced by `deploy`.
fn run(file: &str, deploy: &str) -> Ending {
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
    let chips: Vec<_> = pause_stats(&r.record.pauses, r.record.duration_ps)
        .into_iter()
        .filter(|p| ["A", "B", "C"].contains(&p.node.as_str()))
        .collect();
    let e = Ending {
        sent: c.sent,
        received: c.received,
        dropped: c.dropped,
        in_flight: u64::try_from(c.in_flight).expect("the conservation line holds"),
        paused: chips
            .iter()
            .filter(|p| p.paused_at_end)
            .map(|p| format!("{}:{}", p.node, p.port))
            .collect(),
        longest_us: chips.iter().map(|p| p.longest_pause_ps).max().unwrap_or(0) as f64 / 1e6,
        ever_paused: chips
            .iter()
            .map(|p| format!("{}:{}:{}", p.node, p.port, p.class))
            .collect(),
        hol_seen: hol.flows_checked,
        hol_blocked: hol.violations.len() as u64,
    };
    println!(
        "{file} under {deploy}: {c:?}, paused {:?}, at the end {:?}, longest {} us, HOL {} of {}",
        e.ever_paused, e.paused, e.longest_us, e.hol_blocked, e.hol_seen
    );
    e
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
    let e = run(file, "deploy: Pyrrha(()),");
    assert!(e.sent > 2000);
    assert_eq!((e.received, e.dropped, e.in_flight), (e.sent, 0, 0));
    assert!(e.paused.is_empty(), "{:?}", e.paused);
    assert!(e.hol_seen > 0 && e.hol_blocked == 0);
    for deploy in [pfc().as_str(), "deploy: Bfc((assignment: Single)),"] {
        let e = run(file, deploy);
        assert!(e.in_flight > 0 && e.received < e.sent, "{deploy}");
        assert_eq!(e.paused, RING, "{deploy}");
        assert!(e.hol_blocked > e.hol_seen / 2, "{deploy}");
    }
    let e = run(file, "deploy: Bfc(()),");
    assert_eq!((e.received, e.in_flight), (e.sent, 0));
}

/// B.5 item 9 in a network, Fig. 12: one flow whose routes loop round the ring for ever.
/// Under Pyrrha the PAUSE relayed round the ring comes back to the root's own chip, which
/// ignores it (the self-ID guard): no cyclic dependency forms, the ring ports are resumed
/// (no pause lasts 20 µs), A pauses nothing, and every packet ends dropped where its TTL
/// runs out (the paper's loss at A1). With the guard's entries deleted A gives its own
/// port's root an IQ towards the ring and pauses it, a cyclic dependency (A:1's IQ waits
/// on A:1's OQ's root); it does not last, as the frame also names a new root downstream of
/// A:1, so A:1's OQ resigns and MERGE resumes the IQs upstream. Under PFC and BFC (a queue
/// per flow) each ring port pauses the one before it and the looping packets stay in the
/// ring.
#[test]
fn the_single_flow_loop_forms_no_cycle_under_pyrrha_and_deadlocks_under_pfc_and_bfc() {
    let file = "loop-one-flow.ron";
    let e = run(file, "deploy: Pyrrha(()),");
    assert!(e.sent > 100);
    assert_eq!((e.received, e.dropped, e.in_flight), (0, e.sent, 0));
    assert!(
        e.paused.is_empty() && e.longest_us < 20.0,
        "{:?} {}",
        e.paused,
        e.longest_us
    );
    assert!(e.hol_seen > 0 && e.hol_blocked == 0);
    assert!(e.ever_paused.iter().all(|q| !q.starts_with("A:")));
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
    let e = run(
        file,
        &format!("deploy: Pyrrha(()), chips: [{}],", unguarded.join(", ")),
    );
    assert_eq!((e.dropped, e.in_flight), (e.sent, 0));
    assert!(e.ever_paused.iter().any(|q| q.starts_with("A:1:")));
    assert!(e.paused.is_empty() && e.longest_us < 20.0);
    for deploy in [pfc().as_str(), "deploy: Bfc(()),"] {
        let e = run(file, deploy);
        assert!(e.in_flight > 0, "{deploy}");
        assert_eq!(e.paused, RING, "{deploy}");
    }
}
