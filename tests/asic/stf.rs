//! Runs every STF file under tests/stf/ (see docs/STF.md): one test per file, and a check
//! that no file is left out. A file marked `requires externs` whose program does not
//! compile yet is skipped with a note.

use crate::stf_runner::{run_file, stf_files};
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
    let err = crate::stf_runner::run_text(text, &path).unwrap_err();
    assert!(
        err.contains("inline.stf:5: expected a packet on port 2"),
        "{err}"
    );
    let bad = "chip teaching\nprogram parser.p4\nfrobnicate 3\n";
    let err = crate::stf_runner::run_text(bad, &path).unwrap_err();
    assert!(
        err.contains("inline.stf:3: unknown command `frobnicate`"),
        "{err}"
    );
    let wrong = "chip teaching\nprogram parser.p4\npacket 0 0200000000020200000000010800 0000\nexpect 1 0200000000020200000000010800 0001\n";
    let err = crate::stf_runner::run_text(wrong, &path).unwrap_err();
    assert!(
        err.contains("inline.stf:4: packet on port 1 differs"),
        "{err}"
    );
}
