//! Networks of modelled chips and hosts: topologies, hosts with NICs and transports, traffic,
//! and one discrete-event kernel that runs them all, producing a [`records::RunRecord`].
//!
//! - [`run`] / [`run_file`]: run a [`scenario::NetScenario`] (RON) and return its record;
//!   [`run_detailed`] also returns the per-host packet balance.
//! - [`topology`]: the RON schema, generated shapes (single switch, dumbbell, leaf-spine,
//!   fat tree) and route generation for the stock routers (`programs/l3router`,
//!   `programs/ecmp_router`).
//! - [`host`]: what the host and its NIC model and omit; [`transport`]: raw, go-back-N,
//!   NewReno, DCTCP, NDP-like; [`traffic`]: sources and load; [`cdf`]: flow-size CDFs
//!   (`data/cdf`).
//! - [`packet`]: the host frame format; [`ctrl`]: PFC and the per-queue pause frame.
//! - [`sim`]: the runtime, and the ideal-FCT formula.
//! - [`bfc`]: the entries and chip configuration of `stock:bfc` (programs/bfc).
//!
//! Determinism: every random choice comes from a seeded ChaCha stream per traffic source
//! ([`rng`]); simulation order never depends on hash-map iteration; simultaneous events run
//! in scheduling order. Same scenario, same seed: same record, byte for byte.
//!
//! Crates used, and why: `rand_chacha` + `rand_core` (a portable, seedable stream whose
//! output is fixed across platforms and versions, so records are reproducible).

pub mod bfc;
pub mod cdf;
pub mod ctrl;
pub mod host;
pub mod packet;
pub mod records;
pub mod rng;
pub mod scenario;
pub mod sim;
pub mod topology;
pub mod traffic;
pub mod transport;

use records::RunRecord;
use scenario::NetScenario;
use sim::{Net, NetRun};
use std::path::Path;

/// Run a scenario whose relative paths are relative to the current directory; no pcaps are
/// written.
pub fn run(scenario: NetScenario) -> Result<RunRecord, String> {
    run_detailed(scenario, Path::new(""), None).map(|r| r.record)
}

/// Run a scenario: relative paths resolve against `base`; pcaps go to `out` if given.
pub fn run_detailed(
    scenario: NetScenario,
    base: &Path,
    out: Option<&Path>,
) -> Result<NetRun, String> {
    let p = sim::prepare(scenario, base)?;
    Net::build(p, out)?.run()
}

/// Parse a scenario file.
pub fn load(path: &Path) -> Result<NetScenario, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("{}: cannot read scenario: {e}", path.display()))?;
    ron::from_str(&text).map_err(|e| {
        format!(
            "{}:{}:{}: {}",
            path.display(),
            e.span.start.line,
            e.span.start.col,
            e.code
        )
    })
}

/// Run a scenario file, writing its pcaps into `out_dir` (what `asic net SCENARIO` runs);
/// with `lockstep`, every chip visits every cycle (same record).
pub fn run_file(path: &Path, out_dir: &Path, lockstep: bool) -> Result<NetRun, String> {
    let s = load(path)?;
    let base = path.parent().unwrap_or(Path::new(""));
    let mut net = Net::build(sim::prepare(s, base)?, Some(out_dir))?;
    net.set_lockstep(lockstep);
    net.run()
}
