//! Fuzzing every input the model reads, on the stable toolchain (issue #20).
//!
//! One target per input kind ([`Kind`]): P4 source, chip profile, one-chip scenario, network
//! scenario, entries, pcap, STF. Each runs the real code path a user's file takes
//! ([`targets`]), bounded in simulated time so that a valid input ends.
//!
//! Why not cargo-fuzz/libFuzzer: they need a nightly compiler for the sanitizer coverage
//! instrumentation; this workspace builds on stable. What is kept of them:
//! - **Mutational inputs** ([`mutate`]): the repository's own files ([`corpus`]) as seeds,
//!   with byte-level mutations (flips, inserts, deletes, duplicated ranges, splices, truncation)
//!   and, for the text kinds, token-aware ones (numbers replaced by edge values, identifiers by
//!   others from the corpus, nesting deepened, lines repeated). Without coverage feedback the
//!   search is blind but cheap, and the token mutations keep many inputs past the parsers.
//! - **Determinism**: input `i` of a kind is a pure function of (kind, seed, `i`), so a finding
//!   is reproduced from its index alone (`asic-fuzz show`), and the same seed gives the same
//!   inputs and the same counts.
//! - **Isolation** ([`campaign`]): a parent supervises a worker process ([`worker`]) that runs
//!   the inputs in order and reports each on a pipe. A panic is caught in the worker; a signal
//!   (stack overflow, abort), a hang (no report for the hang timeout) or an allocation over the
//!   worker's heap cap ([`alloc`]: a counting allocator that refuses it) ends the worker, and
//!   the parent records the input in progress and restarts the worker after it. The first
//!   input of each distinct failure is minimized and written under `fuzz/findings/KIND/`.
//!
//! The STF target runs `asic_bench::stf`, the runner of `asic stf` and the STF tests.
//!
//! Crates used, and why: `rand_chacha`/`rand_core` (the seeded, portable stream behind every
//! mutation, as the model uses), `tempfile` (the fixture directory and candidate files).

pub mod alloc;
pub mod campaign;
pub mod corpus;
pub mod mutate;
pub mod targets;
pub mod worker;

use std::fmt;

/// The exit code of a worker that failed on its own account (it could not set up or report),
/// which the parent must not take for an input's failure.
pub const FATAL_EXIT: i32 = 3;

/// A kind of input, with its target.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// P4 source, compiled for two chips.
    P4,
    /// A chip profile, parsed and built into a chip.
    Profile,
    /// A one-chip scenario, run on the bench.
    Scenario,
    /// A network scenario, built and run.
    Net,
    /// A control file (entries, registers, meters), resolved and installed.
    Entries,
    /// A pcap, read and fed to a chip.
    Pcap,
    /// An STF file, run.
    Stf,
}

impl Kind {
    /// Every kind, in the order `all` runs them.
    pub const ALL: [Kind; 7] = [
        Kind::P4,
        Kind::Profile,
        Kind::Scenario,
        Kind::Net,
        Kind::Entries,
        Kind::Pcap,
        Kind::Stf,
    ];

    /// The name on the command line and in findings' paths.
    pub fn name(self) -> &'static str {
        match self {
            Kind::P4 => "p4",
            Kind::Profile => "profile",
            Kind::Scenario => "scenario",
            Kind::Net => "net",
            Kind::Entries => "entries",
            Kind::Pcap => "pcap",
            Kind::Stf => "stf",
        }
    }

    /// The kind named `name`.
    pub fn parse(name: &str) -> Result<Kind, String> {
        Kind::ALL
            .into_iter()
            .find(|k| k.name() == name)
            .ok_or_else(|| {
                let names: Vec<&str> = Kind::ALL.iter().map(|k| k.name()).collect();
                format!("no input kind `{name}` (kinds: {})", names.join(", "))
            })
    }

    /// The file extension of an input of this kind (for findings).
    pub fn extension(self) -> &'static str {
        match self {
            Kind::P4 => "p4",
            Kind::Pcap => "pcap",
            Kind::Stf => "stf",
            Kind::Profile | Kind::Scenario | Kind::Net | Kind::Entries => "ron",
        }
    }

    /// Whether inputs are text (the targets read them as UTF-8, as from a file).
    pub fn is_text(self) -> bool {
        self != Kind::Pcap
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.name())
    }
}
