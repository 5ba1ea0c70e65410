//! Bad input gets one line naming the file and the position, never a panic.

use crate::common::repo;
use asic_bench::run::run_scenario;
use asic_bench::scenario::ScenarioFile;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A scratch directory with the l3router files, and a scenario written into it.
fn scratch(tag: &str, scenario: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("asic-bad-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for f in ["l3router.p4", "entries.ron", "in1.pcap"] {
        std::fs::copy(repo("programs/l3router").join(f), dir.join(f)).unwrap();
    }
    std::fs::write(dir.join("scenario.ron"), scenario).unwrap();
    dir
}

fn run(dir: &Path) -> String {
    let sf = match ScenarioFile::load(&dir.join("scenario.ron")) {
        Ok(sf) => sf,
        Err(e) => return e.to_string(),
    };
    run_scenario(&sf, Some(&dir.join("out")), false).expect_err("the run must fail")
}

const GOOD: &str = r#"(
    chip: "teaching",
    program: "l3router.p4",
    entries: Some("entries.ron"),
    inputs: [ (port: 1, source: Pcap("in1.pcap")) ],
)"#;

#[test]
fn an_unknown_profile_name_is_located() {
    let dir = scratch("chip", &GOOD.replace("\"teaching\"", "\"tofino9\""));
    let err = run(&dir);
    assert!(err.contains("scenario.ron:2:11: "), "{err}");
    assert!(
        err.contains("tofino9") && err.contains("tofino2-like"),
        "lists the known names: {err}"
    );
    assert_eq!(err.lines().count(), 1);
}

#[test]
fn a_ron_syntax_error_is_located() {
    let dir = scratch(
        "syntax",
        &GOOD.replace("program: \"l3router.p4\",", "program \"l3router.p4\","),
    );
    let err = run(&dir);
    assert!(err.contains("scenario.ron:3:12: "), "{err}");
    assert_eq!(err.lines().count(), 1);
}

#[test]
fn a_missing_program_file_is_located() {
    let dir = scratch("prog", &GOOD.replace("l3router.p4", "nowhere.p4"));
    let err = run(&dir);
    assert!(err.contains("scenario.ron:3:14: program file"), "{err}");
    assert!(err.contains("nowhere.p4"), "{err}");
}

#[test]
fn a_truncated_pcap_is_located() {
    let dir = scratch("pcap", GOOD);
    let bytes = std::fs::read(dir.join("in1.pcap")).unwrap();
    std::fs::write(dir.join("in1.pcap"), &bytes[..bytes.len() - 7]).unwrap();
    let err = run(&dir);
    assert!(
        err.contains("in1.pcap: truncated: packet record #6 at byte"),
        "{err}"
    );
}

#[test]
fn a_pcap_going_back_in_time_is_refused() {
    let dir = scratch("pcap-order", GOOD);
    let mut bytes = std::fs::read(dir.join("in1.pcap")).unwrap();
    // in1.pcap is big-endian with nanoseconds: records #1 and #2 at 1,000 and 2,000 ns; the
    // second's nanoseconds (its header at byte 140) set to 500.
    assert_eq!(bytes[144..148], 2000u32.to_be_bytes());
    bytes[144..148].copy_from_slice(&500u32.to_be_bytes());
    std::fs::write(dir.join("in1.pcap"), &bytes).unwrap();
    let err = run(&dir);
    assert!(
        err.contains(
            "inputs[0] (port 1): pcap record #2: timestamp 500 ns is earlier than the record \
             before it (1000 ns)"
        ),
        "{err}"
    );
}

#[test]
fn a_bad_entry_names_the_entry() {
    let dir = scratch("entry", GOOD);
    std::fs::write(
        dir.join("entries.ron"),
        "[\n  // a good entry, then a bad one\n  (table: \"l2_fwd\", key: [Exact(3)], action: \"l2_forward\", args: [3]),\n    (table: \"ipv4_lpm\", key: [Lpm(\"10.0.1.0\", 24)], action: \"fly\", args: []),\n]",
    )
    .unwrap();
    let err = run(&dir);
    assert!(
        err.contains("entries.ron:4:5: entry 2 (table `ipv4_lpm`)") && err.contains("fly"),
        "{err}"
    );
}

#[test]
fn a_port_the_chip_lacks_is_refused() {
    let dir = scratch("port", &GOOD.replace("port: 1,", "port: 9,"));
    let err = run(&dir);
    assert!(
        err.contains("inputs[0] (port 9): port 9 does not exist"),
        "{err}"
    );
}

#[test]
fn the_cli_prints_one_line_and_fails() {
    let dir = scratch("cli", &GOOD.replace("\"teaching\"", "\"tofino9\""));
    let out = Command::new(env!("CARGO_BIN_EXE_asic"))
        .arg("run")
        .arg(dir.join("scenario.ron"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("error: ") && err.contains("scenario.ron:2:11"),
        "{err}"
    );
    let out = Command::new(env!("CARGO_BIN_EXE_asic"))
        .args(["chips", "show", "nope"])
        .output()
        .unwrap();
    assert!(!out.status.success());
}

#[test]
fn a_scenario_configures_the_chip_and_a_bad_config_is_located() {
    // The TM's static per-queue limit, from the scenario: drops carry that reason.
    let cfg = "    config: (seed: 3, tm: (admission: Static, default_queue: (static_limit_cells: Some(4)))),\n    inputs:";
    let dir = scratch(
        "cfg",
        &GOOD.replace("    inputs:", cfg).replace(
            "inputs: [ (port: 1, source: Pcap(\"in1.pcap\")) ]",
            "inputs: [ (port: 0, source: Generator((count: 100, size: 200, packet: Udp(())))),\
                   (port: 2, source: Generator((count: 100, size: 200, packet: Udp(())))) ]",
        ),
    );
    let sf = ScenarioFile::load(&dir.join("scenario.ron")).unwrap();
    let (report, _) = run_scenario(&sf, Some(&dir.join("out")), false).unwrap();
    assert!(
        report
            .drops
            .iter()
            .any(|(r, n)| r == "tm_queue_static_limit" && *n > 0),
        "{}",
        report.render_text()
    );
    assert!(
        report.peak_buffer_cells <= 4 + 3,
        "{}",
        report.peak_buffer_cells
    );

    // A misspelt field inside the chip configuration is named with its position.
    let dir = scratch(
        "cfgbad",
        &GOOD.replace(
            "    inputs:",
            "    config: (mirror_sesions: []),\n    inputs:",
        ),
    );
    let err = run(&dir);
    assert!(
        err.contains("scenario.ron:5:14: ") && err.contains("mirror_sesions"),
        "{err}"
    );
}

/// A packet generator without a count would make packets for ever: refused unless the
/// scenario stops, and with `stop_ns` the run stops there, saying so (issue #20: its pcap
/// grew to 2.4 GB in 10 s).
#[test]
fn an_endless_packet_generator_needs_a_stop() {
    let endless = GOOD.replace(
        "inputs: [ (port: 1, source: Pcap(\"in1.pcap\")) ],",
        "inputs: [],\n    config: (pktgen: [(pipe: 0, period_ns: Some(1000), \
         template: [2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2, 8, 0])]),",
    );
    let dir = scratch("endless", &endless);
    let err = run(&dir);
    assert!(
        err.contains("scenario.ron:") && err.contains("config.pktgen[0]: a periodic application"),
        "{err}"
    );
    let stopping = endless.replace("inputs: [],", "inputs: [],\n    stop_ns: Some(50000),");
    let dir = scratch("stopping", &stopping);
    let sf = ScenarioFile::load(&dir.join("scenario.ron")).unwrap();
    let (report, _) = run_scenario(&sf, Some(&dir.join("out")), false).unwrap();
    assert_eq!(report.stopped_at_ps, Some(50_000_000));
    assert_eq!(
        report.created, 51,
        "one packet per µs, from 0 to 50 µs (the stop included)"
    );
    assert_eq!(report.unaccounted(), 0, "{report:?}");
    assert!(report.render_text().contains("stopped at 50000.000 ns"));
}

#[test]
fn an_oversized_generator_frame_is_refused_before_it_is_made() {
    let dir = scratch(
        "huge",
        &GOOD.replace(
            "(port: 1, source: Pcap(\"in1.pcap\"))",
            "(port: 1, source: Generator((count: 1, size: 18446744073709551615, \
             packet: Udp(()))))",
        ),
    );
    let err = run(&dir);
    assert!(
        err.contains("inputs[0] (port 1): size: 18446744073709551615 bytes"),
        "{err}"
    );
}

/// What an entries file gets wrong is said in the entries file's terms: its place, the
/// key or argument by name, values as P4 writes them (issue #20: unknown fields were
/// ignored, widths and match kinds unchecked, errors named the scenario).
#[test]
fn entries_are_checked_against_the_program() {
    let cases = [
        (
            r#"[ (table: "l2_fwd", key: [Exact("02:00:00:00:00:03")], action: "l2_forward", args: [3], priorty: 5) ]"#,
            "entries.ron:1:89: Unexpected field named `priorty` in `EntrySpec`",
        ),
        (
            r#"[ (table: "l2_fwd", key: [Exact("02:00:00:00:00:03")], action: "l2_forward", args: [512]) ]"#,
            "entries.ron:1:3: entry 1: table Ingress.l2_fwd: action `Ingress.l2_forward`: argument `port` is bit<9>, and 512 does not fit",
        ),
        (
            r#"[ (table: "ipv4_lpm", key: [Exact("10.0.1.7")], action: "drop") ]"#,
            "entries.ron:1:3: entry 1: table Ingress.ipv4_lpm: key `hdr.ipv4.dst_addr` (bit<32>, Lpm): the entry's match is Exact (0xa000107)",
        ),
        (
            r#"[ (table: "ipv4_lpm", key: [Lpm("10.0.1.0", 40)], action: "drop") ]"#,
            "prefix length 40 is longer than the key",
        ),
        (
            r#"[ (table: "l2_fwd", key: [Exact(-1)], action: "l2_forward", args: [3]) ]"#,
            "entries.ron:1:34: -1 is negative: table values are unsigned",
        ),
    ];
    for (i, (entries, want)) in cases.into_iter().enumerate() {
        let dir = scratch(&format!("entries{i}"), GOOD);
        std::fs::write(dir.join("entries.ron"), entries).unwrap();
        let err = run(&dir);
        assert!(err.contains(want), "case {i}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}

/// A scheduled operation the chip refuses when it runs (deleting a route that is not there)
/// stops the run with an error naming the scenario, the operation and its time.
#[test]
fn a_refused_control_operation_stops_the_run_and_is_named() {
    let delete = GOOD.replace(
        "    inputs:",
        "    control: [\n        (at_ns: 1000, op: DeleteEntry((table: \"ipv4_lpm\", key: [Lpm(\"10.0.1.0\", 24)]))),\n        (at_ns: 2000, op: DeleteEntry((table: \"ipv4_lpm\", key: [Lpm(\"10.9.0.0\", 24)]))),\n    ],\n    inputs:",
    );
    let dir = scratch("control-refused", &delete);
    let err = run(&dir);
    assert_eq!(
        err,
        format!(
            "{}: control 2 (table `ipv4_lpm`), at 2000.000 ns, was refused: table \
             Ingress.ipv4_lpm has no entry with this key",
            dir.join("scenario.ron").display()
        )
    );
}

/// Two inputs whose frames overlap on one port: the error names the scenario and both.
#[test]
fn inputs_overlapping_on_a_port_are_both_named() {
    let two = GOOD.replace(
        "inputs: [ (port: 1, source: Pcap(\"in1.pcap\")) ]",
        "inputs: [ (port: 1, source: Pcap(\"in1.pcap\")),\
                   (port: 2, source: Pcap(\"in1.pcap\")),\
                   (port: 1, source: Generator((count: 5, size: 200, packet: Udp(())))) ]",
    );
    let dir = scratch("overlap", &two);
    let err = run(&dir);
    let want = format!(
        "{}: inputs[2] (port 1) overlaps inputs[0] on port 1: ",
        dir.join("scenario.ron").display()
    );
    assert!(err.starts_with(&want), "{err}");
    assert_eq!(err.lines().count(), 1);
}
