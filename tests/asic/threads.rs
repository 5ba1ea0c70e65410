//! Acceptance: a network run's outputs are byte-identical for every thread count: every file
//! `asic net` writes (tables, series, waveform, plots, pcaps, the per-packet trace) and the
//! run's counts, on networks that exercise what partitions share (frames crossing them,
//! pauses, captures, traces, sampled series, flows that stop the run when they complete).

use crate::common::repo;
use asic_deploy::run::{load, run_observed, RunOptions};
use asic_io::trace::TraceOptions;
use asic_model::trace::TraceFilter;
use asic_report::{write_run, ReportOptions};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Every file under `dir`, by path relative to it.
fn files(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(dir).unwrap().to_path_buf();
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

/// Run `scenario` on `threads` threads with its pcaps and, if `trace`, every chip's trace:
/// what it wrote, and the counts a file does not show.
fn outputs(scenario: &str, threads: usize, trace: bool) -> (BTreeMap<PathBuf, Vec<u8>>, String) {
    let path = repo(scenario);
    let dir = std::env::temp_dir().join(format!(
        "asic-threads-{}-{threads}-{}",
        scenario.replace('/', "-"),
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    let t = TraceOptions {
        filter: TraceFilter::default(),
        ..TraceOptions::default()
    };
    let opts = RunOptions {
        pcap_dir: Some(&dir),
        trace: trace.then_some((&t, dir.as_path())),
        threads,
        ..RunOptions::default()
    };
    let run = run_observed(load(&path).unwrap(), path.parent().unwrap(), opts, &mut ()).unwrap();
    write_run(&run.record, &dir, &ReportOptions::default()).unwrap();
    // Not the events: a port's service run with the event that asked for it is not one
    // (`Net::set_hold`), and whether it can be depends on what else the partition holds.
    let counts = format!(
        "hops {} drops {} on links {} balance {:?}",
        run.switch_hops, run.chip_drops, run.frames_on_links, run.balance
    );
    let f = files(&dir);
    std::fs::remove_dir_all(&dir).ok();
    (f, counts)
}

/// `scenario`'s outputs on 2, 3 and 5 threads are those on one.
fn same_for_every_thread_count(scenario: &str, trace: bool) {
    let (one, counts) = outputs(scenario, 1, trace);
    assert!(one.len() > 5, "{scenario}: {} files", one.len());
    for threads in [2, 3, 5] {
        let (many, c) = outputs(scenario, threads, trace);
        assert_eq!(c, counts, "{scenario}: counts on {threads} threads");
        assert_eq!(
            many.keys().collect::<Vec<_>>(),
            one.keys().collect::<Vec<_>>(),
            "{scenario}: files on {threads} threads"
        );
        for (name, bytes) in &one {
            assert!(
                many[name] == *bytes,
                "{scenario}: {} differs on {threads} threads",
                name.display()
            );
        }
    }
}

#[test]
fn a_dumbbell_with_every_kind_of_traffic_and_two_pcaps_is_the_same_on_any_thread_count() {
    same_for_every_thread_count("programs/net/full.ron", false);
}

#[test]
fn bfc_with_its_pauses_and_packet_generators_is_the_same_on_any_thread_count() {
    same_for_every_thread_count("programs/bfc/two-flows.ron", false);
}

/// Pyrrha's testbed: its frames, records and recirculations, and the HOL check's snapshots,
/// which every partition takes of its own chips and the end merges.
#[test]
fn pyrrha_with_its_hol_check_is_the_same_on_any_thread_count() {
    same_for_every_thread_count("programs/pyrrha/testbed.ron", false);
}

#[test]
fn ndp_over_a_trimming_leaf_spine_is_the_same_on_any_thread_count() {
    same_for_every_thread_count("programs/trimming/leafspine.ron", false);
}

#[test]
fn three_chips_traced_packet_by_packet_are_the_same_on_any_thread_count() {
    same_for_every_thread_count("programs/tutorial/6-network.ron", true);
}

/// A control operation every chip refuses at the same instant stops the run with the same
/// error on any thread count: the first by time, then by chip.
#[test]
fn the_first_refusal_stops_the_run_whatever_the_thread_count() {
    let text = r#"(
        topology: Generate((shape: LeafSpine(leaves: 2, spines: 2, hosts_per_leaf: 2),
                            chip: "teaching", delay_ns: 500)),
        chips: [(select: All, control: [
            (at_ns: 1000, op: DeleteEntry((table: "ipv4_lpm", key: [Lpm("10.9.9.0", 24)]))),
        ])],
        traffic: [Flow((src: "h0_0", dst: "h1_1", size: 100000))],
    )"#;
    let errors: Vec<String> = [1, 2, 3]
        .into_iter()
        .map(|threads| {
            let s = located::parse_ron(text, "refused.ron").unwrap();
            let opts = RunOptions {
                threads,
                ..RunOptions::default()
            };
            run_observed(s, Path::new(""), opts, &mut ())
                .err()
                .expect("refused")
        })
        .collect();
    assert!(
        errors[0].starts_with("chip `leaf0`: control 1"),
        "{}",
        errors[0]
    );
    assert!(errors.iter().all(|e| *e == errors[0]), "{errors:?}");
}

/// A port's service due at once runs with the event that asked for it (the default) or
/// through the event queue (the reference): the same record, chips' state and balance, and
/// fewer events the first way.
#[test]
fn a_service_run_at_once_gives_what_the_queue_gives() {
    for scenario in [
        "programs/net/full.ron",
        "programs/bfc/two-flows.ron",
        "programs/trimming/leafspine.ron",
        "programs/tutorial/6-network.ron",
    ] {
        let path = repo(scenario);
        let run = |hold: bool| {
            let network =
                asic_deploy::build::build(load(&path).unwrap(), path.parent().unwrap()).unwrap();
            let mut net = asic_net::Net::build(network, Box::new(())).unwrap();
            net.set_hold(hold);
            net.set_threads(2);
            net.run().unwrap()
        };
        let (held, queued) = (run(true), run(false));
        assert!(held.record == queued.record, "{scenario}: records differ");
        assert_eq!(held.balance, queued.balance, "{scenario}");
        assert_eq!(held.switch_hops, queued.switch_hops, "{scenario}");
        assert!(
            held.events < queued.events,
            "{scenario}: {} events held, {} queued",
            held.events,
            queued.events
        );
    }
}
