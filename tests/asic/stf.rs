//! Runs every STF file under tests/stf/ (see docs/STF.md): one test per file, and a check
//! that no file is left out. A file marked `requires externs` whose program does not
//! compile yet is skipped with a note.

use asic_bench::stf::{run_file, run_text, stf_files};
use std::path::{Path, PathBuf};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/stf")
}

fn stf(name: &str) {
    let path = dir().join(format!("{name}.stf"));
    match run_file(&path) {
        Ok(r) => match &r.skipped {
            Some(why) => eprintln!("note: {name}.stf skipped: {why}"),
            None => assert!(
                r.packets_matched + r.state_checks > 0,
                "{name}.stf checks nothing"
            ),
        },
        Err(e) => panic!("{e}"),
    }
}

macro_rules! stf_tests {
    ($($name:ident),* $(,)?) => {
        $(#[test] fn $name() { stf(stringify!($name)); })*
        const LISTED: &[&str] = &[$(stringify!($name)),*];
    };
}

stf_tests!(
    acl,
    counter,
    hash,
    l3router,
    meter,
    parser,
    parser_continue,
    random,
    register,
);

#[test]
fn every_stf_file_is_listed() {
    for file in stf_files(&dir()).expect("tests/stf is readable") {
        let stem = file.file_stem().unwrap().to_string_lossy().to_string();
        assert!(
            LISTED.contains(&stem.as_str()),
            "{} is not listed in tests/asic/stf.rs",
            file.display()
        );
    }
}

#[test]
fn failures_name_the_file_and_line() {
    let path = dir().join("inline.stf");
    let text = "chip teaching\nprogram parser.p4\n\npacket 0 0200000000020200000000010800 00\nexpect 2 00\n";
    let err = run_text(text, &path).unwrap_err();
    assert!(
        err.contains("inline.stf:5: expected packet #1 on port 2 did not leave: 0 packets left port 2 in this run"),
        "{err}"
    );
    let bad = "chip teaching\nprogram parser.p4\nfrobnicate 3\n";
    let err = run_text(bad, &path).unwrap_err();
    assert!(
        err.contains("inline.stf:3: unknown command `frobnicate`"),
        "{err}"
    );
    let wrong = "chip teaching\nprogram parser.p4\npacket 0 0200000000020200000000010800 0000\nexpect 1 0200000000020200000000010800 0001\n";
    let err = run_text(wrong, &path).unwrap_err();
    assert!(
        err.contains("inline.stf:4: packet #1 on port 1 differs:\n  payload (byte 15): expected 01, got 00\n"),
        "{err}"
    );
}

/// A wrong expectation does not stop the file: every one is reported, at its line, with
/// what was expected and what came (missing, extra and differing packets, departure cycles,
/// counters, drops), and the lines after it still run.
#[test]
fn every_wrong_expectation_is_reported_at_its_line() {
    let path = dir().join("inline.stf");
    let probe = |a: &str| {
        format!(
            "02000000000202000000000188b5 000000{a}000000060000000000000000 {}",
            "00".repeat(30)
        )
    };
    let marked = |a: &str| {
        format!(
            "02000000000202000000000188b5 000000{a}00000006aaaaaaaa00000000 {}",
            "00".repeat(30)
        )
    };
    let text = [
        "chip teaching".to_string(),
        "program parser.p4".into(),
        format!("packet 0 {}", probe("05")),
        // Line 4: the right bytes at the wrong cycle.
        format!("expect 1 {} at-cycle 7", marked("05")),
        format!("packet 0 {}", probe("06")),
        // Line 6: a wrong byte in the probe header.
        format!("expect 1 {}", marked("07")),
        // Line 7: a packet that does not come.
        format!("expect 1 {}", marked("08")),
        // Line 8 runs them; no drop happened.
        "expect_drops ingress_parser_error 1".into(),
        // Line 9: a packet nobody expects, reported when line 10 runs it; line 10 names a
        // counter the program lacks, which stops the file: line 11 is not run.
        format!("packet 0 {}", probe("09")),
        "expect_counter nope 0".into(),
        "expect 1 00".into(),
    ]
    .join("\n");
    let err = run_text(&text, &path).unwrap_err();
    let prefix = format!("{}:", path.display());
    let lines: Vec<&str> = err
        .lines()
        .filter_map(|l| l.strip_prefix(prefix.as_str()))
        .collect();
    assert_eq!(
        lines,
        [
            "4: packet #1 on port 1 left at the wrong cycle: expected 7, got 76 (76.000 ns)",
            "6: packet #2 on port 1 differs:",
            "7: expected packet #3 on port 1 did not leave: 2 packets left port 1 in this run",
            "8: ingress_parser_error drops: expected 1, got 0",
            "10: unexpected packet #1 on port 1 (0 packets expected there in this run), left at 219.000 ns",
            "10: nope: no counter array named `nope`",
        ],
        "{err}"
    );
    assert!(
        err.contains("\n  payload (byte 17): expected 07, got 06\n"),
        "{err}"
    );
    assert_eq!(err.lines().count(), lines.len() + 4, "{err}");
}

/// A flood of unexpected packets is described three per port, the rest counted.
#[test]
fn unexpected_packets_are_counted_past_three_per_port() {
    let path = dir().join("inline.stf");
    let packet = format!(
        "packet 0 02000000000202000000000188b5 00000005000000060000000000000000 {}\n",
        "00".repeat(30)
    );
    let text = format!(
        "chip teaching\nprogram parser.p4\n{}run\n",
        packet.repeat(5)
    );
    let err = run_text(&text, &path).unwrap_err();
    let heads: Vec<&str> = err.lines().filter(|l| !l.starts_with("  ")).collect();
    assert_eq!(heads.len(), 4, "{err}");
    assert!(
        heads[2]
            .contains(":8: unexpected packet #3 on port 1 (0 packets expected there in this run)"),
        "{err}"
    );
    assert!(
        heads[3].ends_with(":8: ... and 2 more unexpected packets on port 1"),
        "{err}"
    );
}

/// Numbers an STF line cannot mean are refused, not cut to fit (issue #20: `packet 65536`
/// went into port 0 and the test passed; two `chip` lines were accepted).
#[test]
fn out_of_range_numbers_and_a_second_chip_are_refused() {
    let path = dir().join("inline.stf");
    let cases = [
        (
            "chip teaching\nprogram parser.p4\npacket 65536 0200000000020200000000010800 00\n",
            "inline.stf:3: port `65536` does not fit 16 bits",
        ),
        ("chip teaching\nchip teaching\n", "inline.stf:2: a second `chip` line"),
        (
            "chip teaching\nprogram parser.p4\nexpect 1 00 at-ns 18446744073709551615\n",
            "inline.stf:3: at-ns 18446744073709551615: beyond the longest time",
        ),
        (
            "chip teaching\nprogram register.p4\nexpect_register hits 4294967296 0\n",
            "inline.stf:3: index `4294967296` does not fit 32 bits",
        ),
        ("# nothing\n", "inline.stf:1: the file has no `chip` and `program` lines"),
        (
            "chip teaching\nprogram parser.p4\npacket 1 0200000000020200000000010800 00 at 92233720368547758\n",
            "inline.stf:3: time: 92233720368547758 ns is beyond the longest time",
        ),
        (
            "chip teaching\nprogram acl.p4\nadd (table: \"acl\", key: [Ternary(0, 0), Range(0, 1)], action: \"permit\", args: [513, 1], priority: 1)\n",
            "does not fit",
        ),
    ];
    for (text, want) in cases {
        let err = run_text(text, &path).unwrap_err();
        assert!(err.contains(want), "{err}");
    }
}
