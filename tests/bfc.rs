//! BFC (programs/bfc) on a small network: pauses, resumes, queue assignment and drained
//! state, checked against the paper's rules (Goyal et al., NSDI 2022, §3.3).

use asic::net::{self, scenario::NetScenario, sim::NetRun};
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
                nic_queues: 64,
                bfc: Some((queues: 16, hrtt_ns: 2000, assignment: {assignment})),
            )),
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
    // Nothing but the program's own records was dropped.
    for d in &r.record.drops {
        assert_eq!(d.reason, "ingress_program_drop", "{:?}", r.record.drops);
    }
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
        }
    }
}
