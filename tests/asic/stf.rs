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
            "10: nope: no counter array named `nope` (the program has none)",
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

/// `asic stf` as a user runs it: a directory with a file that passes, one whose expected TTL
/// is wrong, one whose register value is wrong, one with a wrong departure cycle and
/// counters, and one skipped; the lines that say so, and the exit status (1 if any failed,
/// 0 if all passed or were skipped, 2 for a bad path).
#[test]
fn the_command_runs_a_directory_and_says_what_failed_where() {
    let tmp = tempfile::tempdir().unwrap();
    let l3 = crate::common::repo("programs/l3router/l3router.p4");
    let register = dir().join("register.p4");
    let counter = dir().join("counter.p4");
    // The first file of docs/STF.md, the program named by absolute path.
    let routed = |ttl: &str| {
        format!(
            "chip teaching\n\
             program {}\n\
             add (table: \"ipv4_lpm\", key: [Lpm(\"10.0.2.0\", 24)], action: \"set_nexthop\", args: [2, \"02:00:00:00:02:01\", \"02:00:00:00:00:f2\"])\n\
             packet 0 0200000000090200000000fe0800 4500002e00004000401124b00a0000090a00020703e807d0001a0000 {PAYLOAD} at 0\n\
             expect 2 0200000002010200000000f20800 4500002e00004000{ttl}11****0a0000090a00020703e807d0001a0000 {PAYLOAD} at-cycle 77\n\
             expect_drops ingress_parser_error 0\n",
            l3.display()
        )
    };
    let files = [
        ("pass.stf", routed("3f")),
        // The TTL not decremented: line 5 expects 0x40.
        ("ttl.stf", routed("40")),
        (
            "register.stf",
            format!(
                "chip teaching\nprogram {}\n\
                 packet 0 02000000000202000000000188b5 00000003000000020000000000000000 {}\n\
                 expect 1 02000000000202000000000188b5 00000003000000020000000100000000 {}\n\
                 expect_register hits 3 2\n",
                register.display(),
                "00".repeat(30),
                "00".repeat(30)
            ),
        ),
        (
            "counter.stf",
            format!(
                "chip teaching\nprogram {}\n\
                 packet 0 02000000000202000000000188b5 00000008000000000000000000000000 {}\n\
                 expect 1 02000000000202000000000188b5 00000008000000000000000000000000 {} at-cycle 1\n\
                 expect_counter per_port 0 packets=2 bytes=60\n\
                 expect_direct_counter by_a miss packets=0\n",
                counter.display(),
                "00".repeat(30),
                "00".repeat(30)
            ),
        ),
        (
            "skip.stf",
            "requires externs\nchip teaching\nprogram bad.p4\n".to_string(),
        ),
        ("bad.p4", "not a program".to_string()),
    ];
    for (name, text) in &files {
        std::fs::write(tmp.path().join(name), text).unwrap();
    }
    let d = tmp.path().display().to_string();
    let (code, out, err) = asic_stf(&[&d]);
    assert_eq!(code, Some(1), "{out}{err}");
    let lines: Vec<&str> = out.lines().collect();
    // A departure cycle and counters checked through the command, each at its line.
    let want_first = [
        format!("FAIL {d}/counter.stf"),
        format!(
            "{d}/counter.stf:4: packet #1 on port 1 left at the wrong cycle: expected 1, got 78 (78.000 ns)"
        ),
        format!("{d}/counter.stf:5: counter per_port[0]: expected 2 packets, got 1"),
        format!("{d}/counter.stf:6: direct counter of by_a for misses: expected 0 packets, got 1"),
        format!("PASS {d}/pass.stf (1 packet, 1 matched, 1 state check)"),
        format!("FAIL {d}/register.stf"),
        format!("{d}/register.stf:5: register hits[3]: expected 2, got 1"),
    ];
    assert_eq!(lines[..7], want_first, "{out}");
    assert!(
        lines[7].starts_with(&format!("SKIP {d}/skip.stf: needs dsl extern lowering: ")),
        "{out}"
    );
    let ttl = 8;
    assert_eq!(
        lines[ttl..ttl + 3],
        [
            format!("FAIL {d}/ttl.stf"),
            format!("{d}/ttl.stf:5: packet #1 on port 2 differs:"),
            "  ipv4.ttl (byte 22): expected 0x40, got 0x3f".to_string(),
        ],
        "{out}"
    );
    assert!(
        lines[ttl + 3].starts_with("  expected 0200000002010200000000f20800"),
        "{out}"
    );
    assert!(
        lines[ttl + 4].starts_with("  got      0200000002010200000000f20800"),
        "{out}"
    );
    assert_eq!(
        lines.last().unwrap(),
        &"5 files: 1 passed, 3 failed, 1 skipped (1 packet, 1 matched, 1 state check in the files that passed)",
        "{out}"
    );
    // Skips are allowed: a passing file and a skipped one exit 0.
    let (code, out, _) = asic_stf(&[&format!("{d}/pass.stf"), &format!("{d}/skip.stf")]);
    assert_eq!(code, Some(0), "{out}");
    // A path that cannot be read and a directory without STF files are usage errors: 2,
    // before any file runs.
    let (code, out, err) = asic_stf(&[&format!("{d}/pass.stf"), &format!("{d}/nope.stf")]);
    assert_eq!((code, out.as_str()), (Some(2), ""), "{err}");
    assert!(
        err.starts_with(&format!("error: {d}/nope.stf: cannot read: ")),
        "{err}"
    );
    let empty = tempfile::tempdir().unwrap();
    let (code, _, err) = asic_stf(&[empty.path().to_str().unwrap()]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("no .stf file in this directory"), "{err}");
    let (code, _, _) = asic_stf(&[]);
    assert_eq!(code, Some(2));
}

/// Every file of tests/stf passes through the command, as through the tests above.
#[test]
fn the_command_passes_every_file_of_tests_stf() {
    let files = stf_files(&dir()).unwrap();
    let (code, out, err) = asic_stf(&[dir().to_str().unwrap()]);
    assert_eq!(code, Some(0), "{out}{err}");
    let passed = out.lines().filter(|l| l.starts_with("PASS ")).count();
    assert_eq!(passed, files.len(), "{out}");
    assert!(
        out.contains(&format!(
            "{n} files: {n} passed, 0 failed, 0 skipped",
            n = files.len()
        )),
        "{out}"
    );
}

/// 18 bytes of payload: the 60-byte frame of docs/STF.md's first file.
const PAYLOAD: &str = "a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5";

/// `asic stf ARGS`: the exit status, standard output and standard error.
fn asic_stf(args: &[&str]) -> (Option<i32>, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_asic"))
        .arg("stf")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}
