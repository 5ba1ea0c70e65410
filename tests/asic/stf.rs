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
        err.contains("inline.stf:5: expected a packet on port 2"),
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
        err.contains("inline.stf:4: packet on port 1 differs"),
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
