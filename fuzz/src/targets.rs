//! What each kind's input runs: the code path a user's file of that kind takes, in-process.
//!
//! An error the model returns is a good outcome (the input was refused); only a panic, a
//! signal, a hang or the heap cap is a finding. Every run is bounded in simulated time so a
//! valid input ends:
//! - `scenario`: the scenario's `stop_ns` is lowered to [`STOP_NS`] (set if absent);
//! - `net`: `stop.at_ns` lowered to [`NET_STOP_NS`] (and so the `Flows` sources' `stop_ns`),
//!   and a topology of more than [`MAX_CHIPS`] chips or
//!   [`MAX_HOSTS`] hosts is not run (counted as skipped): a large network is slow, not wrong;
//! - `profile`, `entries`, `pcap`: the bench stops at [`STOP_NS`];
//! - `stf`: as the STF runner runs (its bench drains, 1 s of simulated time at most after the
//!   last packet).

use crate::corpus::{file, FILES};
use crate::Kind;
use asic_bench::run::run_scenario;
use asic_bench::scenario::ScenarioFile;
use asic_bench::Bench;
use asic_deploy::build::topology;
use asic_deploy::run::run_detailed;
use asic_deploy::scenario::NetScenario;
use asic_io::load::Base;
use asic_io::pcap::read_pcap;
use asic_model::chip::{Chip, ChipConfig};
use asic_model::profile::{self, ChipProfile};
use asic_net::traffic::Source;
use pipelines::program::Program;
use pipelines::time::Time;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use tempfile::TempDir;

/// The latest simulated time a fuzzed run reaches (ns): 200 µs, thousands of packets at line
/// rate, so queues fill and drain, while an execution stays in milliseconds.
pub const STOP_NS: u64 = 200_000;
/// The latest simulated time a fuzzed network reaches (ns): 20 µs, ten of the BFC scenarios'
/// HRTTs, so queues build and pauses come and go; a reduced Clos at 60 % load takes about a
/// second of wall time for 200 µs, and a 10⁶-input campaign cannot afford that.
pub const NET_STOP_NS: u64 = 20_000;
/// The most chips a fuzzed network may have to be run.
pub const MAX_CHIPS: usize = 8;
/// The most hosts a fuzzed network may have to be run.
pub const MAX_HOSTS: usize = 64;

/// What an input did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Read and run to its end.
    Accepted,
    /// Refused with an error (a good outcome for a bad input).
    Rejected,
    /// Not run: over a bound the fuzzer sets (see the module doc).
    Skipped,
}

impl Outcome {
    fn of<T, E>(r: Result<T, E>) -> Outcome {
        match r {
            Ok(_) => Outcome::Accepted,
            Err(_) => Outcome::Rejected,
        }
    }
}

/// The repository's inputs written into a temporary directory (so the names scenarios and STF
/// files give resolve), the chips and programs targets share, and where each kind's input is
/// written: beside the seed files it names things relative to.
pub struct Fixture {
    dir: TempDir,
    tofino2: ChipProfile,
    teaching: ChipProfile,
    /// (profile, program) pairs entries are resolved against: the L3 router on `teaching`,
    /// BFC on the testbed's `tofino2-100g`.
    entry_programs: OnceLock<Vec<(ChipProfile, Program)>>,
    /// `in1.pcap`'s frames, 1 µs apart: the traffic of the runs that do not give their own.
    frames: OnceLock<Vec<(Time, Vec<u8>)>>,
}

/// The one-chip scenario the `pcap` kind's input is replayed by (`fuzz.pcap` beside it).
const PCAP_SCENARIO: &str = r#"(chip: "teaching", program: "l3router.p4", entries: Some("entries.ron"),
    inputs: [(port: 1, source: Pcap("fuzz.pcap"))], stop_ns: Some(200000))"#;

impl Fixture {
    /// Write the embedded files into a new temporary directory.
    pub fn new() -> Result<Fixture, String> {
        let dir = tempfile::tempdir().map_err(|e| format!("temporary directory: {e}"))?;
        for (path, bytes) in FILES {
            let p = dir.path().join(path);
            std::fs::create_dir_all(p.parent().expect("a file in a folder"))
                .and_then(|()| std::fs::write(&p, bytes))
                .map_err(|e| format!("{}: {e}", p.display()))?;
        }
        let builtin = |name| profile::load(name).map_err(|e| e.to_string());
        Ok(Fixture {
            dir,
            tofino2: builtin("tofino2-like")?,
            teaching: builtin("teaching")?,
            entry_programs: OnceLock::new(),
            frames: OnceLock::new(),
        })
    }

    fn path(&self, repository_path: &str) -> PathBuf {
        self.dir.path().join(repository_path)
    }

    /// Run one input of `kind`.
    pub fn run(&self, kind: Kind, input: &[u8]) -> Outcome {
        let text = || String::from_utf8_lossy(input).into_owned();
        match kind {
            Kind::P4 => self.p4(&text()),
            Kind::Profile => self.profile(&text()),
            Kind::Scenario => {
                let path = self.path("programs/l3router/fuzz.ron");
                self.scenario(text(), &path)
            }
            Kind::Net => self.net(&text()),
            Kind::Entries => self.entries(input),
            Kind::Pcap => {
                let pcap = self.path("programs/l3router/fuzz.pcap");
                if std::fs::write(&pcap, input).is_err() {
                    return Outcome::Skipped;
                }
                let path = self.path("programs/l3router/fuzz.ron");
                self.scenario(PCAP_SCENARIO.to_string(), &path)
            }
            Kind::Stf => {
                let path = self.path("tests/stf/fuzz.stf");
                Outcome::of(asic_bench::stf::run_text(&text(), &path))
            }
        }
    }

    /// Compiled for a large and a small chip; a program the compiler accepts must load on the
    /// chip it was compiled for (the chip verifies it), or the compiler emitted what the chip
    /// refuses: that is reported as a panic.
    fn p4(&self, source: &str) -> Outcome {
        let mut outcome = Outcome::Rejected;
        for chip in [&self.tofino2, &self.teaching] {
            if let Ok(c) = dsl::compile(source, "fuzz.p4", &chip.pipe) {
                if let Err(e) = Chip::new(chip.clone(), &c.program) {
                    panic!(
                        "the chip refuses what the compiler emitted for {}: {e}",
                        chip.name
                    );
                }
                outcome = Outcome::Accepted;
            }
        }
        outcome
    }

    /// Parsed; a profile that parses is built into a chip running the L3 router, and
    /// `in1.pcap`'s frames are sent through it.
    fn profile(&self, text: &str) -> Outcome {
        let Ok(chip) = profile::parse(text, "fuzz.ron") else {
            return Outcome::Rejected;
        };
        let source = String::from_utf8_lossy(file("programs/l3router/l3router.p4"));
        let Ok(c) = dsl::compile(&source, "l3router.p4", &chip.pipe) else {
            return Outcome::Rejected;
        };
        Outcome::of(Bench::new(chip, &c.program, &[]).and_then(|b| self.feed(b)))
    }

    /// Frames of `in1.pcap` into port 0 of `bench`, run to [`STOP_NS`].
    fn feed(&self, mut bench: Bench) -> Result<(), String> {
        let frames = self.frames.get_or_init(|| {
            let frames =
                read_pcap(&self.path("programs/l3router/in1.pcap")).expect("in1.pcap reads");
            (0..)
                .map(|i| Time::from_ns(i * 1000))
                .zip(frames.into_iter().map(|f| f.data))
                .collect()
        });
        bench.add_frames(0, frames.clone())?;
        bench.set_stop(Time::from_ns(STOP_NS));
        bench.run().map(drop).map_err(String::from)
    }

    /// Parsed at `path` (names in it resolve beside it), its stop lowered, run with its output
    /// in the fixture.
    fn scenario(&self, text: String, path: &Path) -> Outcome {
        let Ok(mut sf) = ScenarioFile::parse(text, path) else {
            return Outcome::Rejected;
        };
        sf.scenario.stop_ns = Some(sf.scenario.stop_ns.map_or(STOP_NS, |s| s.min(STOP_NS)));
        Outcome::of(run_scenario(&sf, Some(&self.path("out")), false))
    }

    /// Parsed as from `programs/pyrrha/` if it names Pyrrha's profile, else from
    /// `programs/bfc/` (where the BFC scenarios' profile, topology and entries files are;
    /// the others name built-in chips), its stop lowered, run if small enough.
    fn net(&self, text: &str) -> Outcome {
        let Ok(mut s) = located::parse_ron::<NetScenario>(text, "fuzz.ron") else {
            return Outcome::Rejected;
        };
        s.stop.at_ns = Some(s.stop.at_ns.map_or(NET_STOP_NS, |t| t.min(NET_STOP_NS)));
        // Flows drawn from a distribution stop being drawn at the run's stop: those after it
        // would never start, and drawing them (165,000 for the Clos's 3 ms) was nine tenths
        // of this kind's time. Their bound on the flow count is tested in
        // tests/asic/net_bad_input.rs.
        for source in &mut s.traffic {
            if let Source::Flows(f) = source {
                f.stop_ns = f.stop_ns.min(NET_STOP_NS);
            }
        }
        let folder = if text.contains("tofino2-100g-128q.ron") {
            "programs/pyrrha"
        } else {
            "programs/bfc"
        };
        let base = self.path(folder);
        let Ok(topo) = topology(&s.topology, Base(&base)) else {
            return Outcome::Rejected;
        };
        if topo.spec.chips.len() > MAX_CHIPS || topo.spec.hosts.len() > MAX_HOSTS {
            return Outcome::Skipped;
        }
        Outcome::of(run_detailed(s, &base, None))
    }

    /// Read as a control file, resolved against the L3 router and BFC, installed on a chip
    /// running each, with `in1.pcap`'s frames sent through.
    fn entries(&self, input: &[u8]) -> Outcome {
        let dir = self.path("programs/l3router");
        if std::fs::write(dir.join("fuzz-entries.ron"), input).is_err() {
            return Outcome::Skipped;
        }
        let pairs = self.entry_programs.get_or_init(|| {
            let base = Base(self.dir.path());
            let tofino2_100g = base
                .profile("programs/bfc/tofino2-100g.ron")
                .expect("profile");
            [
                (self.teaching.clone(), "programs/l3router/l3router.p4"),
                (tofino2_100g, "programs/bfc/bfc.p4"),
            ]
            .into_iter()
            .map(|(chip, p4)| {
                let program = base.compile(p4, &chip).expect("compiles").program;
                (chip, program)
            })
            .collect()
        });
        let mut outcome = Outcome::Rejected;
        for (chip, program) in pairs {
            let installed = Base(&dir)
                .control("fuzz-entries.ron", program)
                .and_then(|placed| {
                    let ops: Vec<_> = placed.into_iter().map(|p| p.op).collect();
                    Bench::with_config(chip.clone(), program, ChipConfig::default(), &ops)
                });
            if installed.and_then(|b| self.feed(b)).is_ok() {
                outcome = Outcome::Accepted;
            }
        }
        outcome
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every seed file is a valid input: each target accepts it, so the mutations start from
    /// inputs that reach the end of the path (the `dsl/tests/errors` programs excepted: they
    /// are refused by design).
    #[test]
    fn seeds_are_accepted() {
        let f = Fixture::new().unwrap();
        for kind in Kind::ALL {
            for seed in &crate::mutate::Corpus::of(kind).seeds {
                let outcome = f.run(kind, seed);
                let text = String::from_utf8_lossy(seed);
                let refused_by_design = text.starts_with("// error:");
                assert!(
                    outcome == Outcome::Accepted || refused_by_design,
                    "{kind}: {outcome:?} for a seed starting {:?}",
                    &text[..text.len().min(120)]
                );
            }
        }
    }

    #[test]
    fn every_repository_input_is_embedded() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let dirs = [
            ("programs", "p4"),
            ("programs", "ron"),
            ("programs", "pcap"),
            ("tests/programs", "p4"),
            ("tests/stf", "p4"),
            ("tests/stf", "stf"),
            ("dsl/tests/errors", "p4"),
            ("asic-model/profiles", "ron"),
            ("benches", "p4"),
        ];
        for (dir, ext) in dirs {
            for path in walk(&root.join(dir)) {
                if path.extension().is_some_and(|e| e == ext) {
                    let rel = path
                        .strip_prefix(&root)
                        .unwrap()
                        .to_string_lossy()
                        .replace('\\', "/");
                    assert!(
                        FILES.iter().any(|(p, _)| *p == rel),
                        "{rel} is not in fuzz/src/corpus.rs"
                    );
                }
            }
        }
    }

    fn walk(dir: &Path) -> Vec<PathBuf> {
        std::fs::read_dir(dir)
            .unwrap()
            .flat_map(|e| {
                let p = e.unwrap().path();
                if p.is_dir() {
                    walk(&p)
                } else {
                    vec![p]
                }
            })
            .collect()
    }
}
