//! The bounded run CI makes: a few hundred to ten thousand inputs of each kind, seed 1,
//! each kind its own test (so the two cores share them). A failure fails the test unless it is
//! a known one: a finding recorded under `fuzz/findings/KIND/` (its note's `failure:` line)
//! that awaits a fix in the model. Fixing one means deleting its files; the test then keeps
//! it fixed.
//!
//! Counts are chosen for about 10 s of one core per kind in the test profile; the long
//! command (fuzz/README.md) runs 10⁶ of each.

use asic_fuzz::campaign::{campaign, render, Options};
use asic_fuzz::Kind;
use std::path::Path;
use std::time::Duration;

/// The `(failure, signature)` of each recorded finding of `kind`.
fn known(kind: Kind) -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("findings")
        .join(kind.name());
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    entries
        .filter_map(|e| std::fs::read_to_string(e.ok()?.path()).ok())
        .filter_map(|note| {
            note.lines()
                .find_map(|l| l.strip_prefix("failure: ").map(str::to_string))
        })
        .collect()
}

fn options(from: u64, execs: u64) -> Options {
    Options {
        exe: env!("CARGO_BIN_EXE_asic-fuzz").into(),
        seed: 1,
        from,
        execs,
        // Generous: the test profile is slower than release, and CI's cores are shared.
        hang: Duration::from_secs(60),
        cap_bytes: 2 << 30,
        findings: None,
        minimize: false,
        progress: None,
    }
}

fn bounded(kind: Kind, execs: u64) {
    let s = campaign(kind, &options(0, execs)).unwrap_or_else(|e| panic!("{kind}: {e}"));
    let known = known(kind);
    let new: Vec<String> = s
        .findings
        .iter()
        .map(|f| format!("{} ({})", f.failure.name(), f.signature))
        .filter(|f| !known.contains(f))
        .collect();
    eprintln!("{}", render(std::slice::from_ref(&s)));
    assert!(
        new.is_empty(),
        "{kind}: new failures {new:?}; reproduce with `cargo run --profile fuzz -p asic-fuzz -- {kind} \
         --execs {execs}` (writes them under fuzz/findings/{kind}/)"
    );
    assert_eq!(s.execs, execs);
}

#[test]
fn p4() {
    bounded(Kind::P4, 300);
}

#[test]
fn profile() {
    bounded(Kind::Profile, 10000);
}

#[test]
fn scenario() {
    bounded(Kind::Scenario, 10000);
}

#[test]
fn net() {
    bounded(Kind::Net, 200);
}

#[test]
fn entries() {
    bounded(Kind::Entries, 7500);
}

#[test]
fn pcap() {
    bounded(Kind::Pcap, 5000);
}

#[test]
fn stf() {
    bounded(Kind::Stf, 5000);
}

/// A campaign split into two ranges sees what it sees whole: a long run may be spread over
/// machines or days.
#[test]
fn ranges_add_up() {
    let whole = campaign(Kind::Profile, &options(0, 300)).unwrap();
    let a = campaign(Kind::Profile, &options(0, 170)).unwrap();
    let b = campaign(Kind::Profile, &options(170, 130)).unwrap();
    assert_eq!(a.execs + b.execs, whole.execs);
    assert_eq!(a.accepted + b.accepted, whole.accepted);
    assert_eq!(a.rejected + b.rejected, whole.rejected);
    assert!(whole.accepted > 0 && whole.rejected > 0);
}
