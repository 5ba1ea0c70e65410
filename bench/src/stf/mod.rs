//! STF-like packet tests: a small line format that sends packets into a chip running a
//! compiled program and checks what comes out, and the registers, counters and drops
//! left behind. See docs/STF.md for the format.
//!
//! Why a text format: per-stage behaviour is easiest to state as "this packet in, that
//! packet out", and a teacher or an engineer can write one without Rust. It follows the
//! spirit of p4c's STF (packets and expectations per port, in order), runs the real path
//! (the `dsl` compiler, the chip with its MACs, pipes and TM, via [`Bench`](crate::Bench)),
//! and reports failures as `file:line: what`.
//!
//! Why here, in the bench crate: `asic stf`, the workspace's tests and the fuzzer's `stf`
//! target all run files through this one runner, and it drives nothing but a
//! [`Bench`](crate::Bench).
//!
//! `parse` reads the pieces of a line, `run` runs the commands in order, `diff` says field
//! by field how a packet differs from its expectation.

mod diff;
mod parse;
mod run;

use std::path::{Path, PathBuf};

/// What running an STF file did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StfReport {
    /// Why the file was skipped (`requires externs` and the program does not compile yet).
    pub skipped: Option<String>,
    /// Packets sent.
    pub packets_sent: usize,
    /// Packets expected and matched.
    pub packets_matched: usize,
    /// Register, counter and drop checks passed.
    pub state_checks: usize,
}

/// Run an STF file. `Ok` carries what was checked (or why the file was skipped). `Err` holds
/// every expectation that did not hold and the line that stopped the file, if one did, in
/// line order: each starts a line with `file:line: `, and the lines that detail it (a
/// packet's differing fields) are indented by two spaces.
pub fn run_file(path: &Path) -> Result<StfReport, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    run_text(&text, path)
}

/// Run STF text as if read from `path` (relative paths in it resolve beside `path`).
pub fn run_text(text: &str, path: &Path) -> Result<StfReport, String> {
    run::run_text(text, path)
}

/// The `*.stf` files in `dir`, in name order (not in its subdirectories).
pub fn stf_files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "stf"))
        .collect();
    files.sort();
    Ok(files)
}
