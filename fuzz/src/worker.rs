//! The worker: runs inputs in order and reports each on standard output, one line per input,
//! so the parent knows which input was running when the worker died or stopped reporting.
//!
//! A report is `@ INDEX OUTCOME PEAK_BYTES`, with OUTCOME `ok`, `err` or `skip`, or
//! `@ INDEX panic PEAK_BYTES LOCATION<TAB>MESSAGE` (the message with `\` and newlines escaped).
//! Lines not starting with `@ ` are not reports (nothing in the model prints to standard output,
//! but the parent does not rely on that).

use crate::alloc;
use crate::mutate::generate;
use crate::targets::{Fixture, Outcome};
use crate::Kind;
use std::io::Write;
use std::panic::{catch_unwind, AssertUnwindSafe, PanicHookInfo};
use std::path::PathBuf;
use std::sync::Mutex;

/// The stack an input runs on: 8 MiB, a Linux main thread's default, as the `asic` command
/// has. Fixed here so a stack overflow does not depend on the shell's `ulimit -s`.
pub const STACK_BYTES: usize = 8 << 20;

/// Where a worker's inputs come from.
#[derive(Clone, Debug)]
pub enum Source {
    /// Inputs `from .. from + count` of the seed's sequence.
    Generated { seed: u64, from: u64, count: u64 },
    /// One input read from a file (a finding, or a candidate while minimizing one), index 0.
    File(PathBuf),
}

/// The last panic's location and message, set by the hook and taken by the worker loop.
static PANIC: Mutex<Option<(String, String)>> = Mutex::new(None);

fn hook(info: &PanicHookInfo, backtrace: bool) {
    let location = info
        .location()
        .map_or_else(|| "unknown".to_string(), |l| l.to_string());
    let payload = info.payload();
    let message = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(a panic without a message)".to_string());
    if backtrace {
        eprintln!(
            "panicked at {location}: {message}\n{}",
            std::backtrace::Backtrace::force_capture()
        );
    }
    *PANIC.lock().unwrap_or_else(|p| p.into_inner()) = Some((location, message));
}

/// Run `source`'s inputs of `kind` with the heap capped at `cap_bytes` (0: no cap). With
/// `backtrace`, a panic also prints its backtrace on standard error (slow: for one input).
pub fn work(kind: Kind, source: Source, cap_bytes: usize, backtrace: bool) -> Result<(), String> {
    alloc::set_cap(cap_bytes);
    std::panic::set_hook(Box::new(move |info| hook(info, backtrace)));
    std::thread::Builder::new()
        .name("fuzz".into())
        .stack_size(STACK_BYTES)
        .spawn(move || run(kind, source))
        .map_err(|e| format!("cannot start the worker thread: {e}"))?
        .join()
        .map_err(|_| "the worker loop panicked outside an input".to_string())?
}

fn run(kind: Kind, source: Source) -> Result<(), String> {
    let fixture = Fixture::new()?;
    let (seed, from, count, file) = match source {
        Source::Generated { seed, from, count } => (seed, from, count, None),
        Source::File(path) => {
            let bytes = std::fs::read(&path)
                .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
            (0, 0, 1, Some(bytes))
        }
    };
    let mut out = std::io::stdout().lock();
    for index in from..from.saturating_add(count) {
        let input = match &file {
            Some(bytes) => bytes.clone(),
            None => generate(kind, seed, index),
        };
        alloc::reset_peak();
        let result = catch_unwind(AssertUnwindSafe(|| fixture.run(kind, &input)));
        let peak = alloc::peak();
        let line = match result {
            Ok(Outcome::Accepted) => format!("@ {index} ok {peak}"),
            Ok(Outcome::Rejected) => format!("@ {index} err {peak}"),
            Ok(Outcome::Skipped) => format!("@ {index} skip {peak}"),
            Err(_) => {
                let (location, message) = PANIC
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .take()
                    .unwrap_or_else(|| ("unknown".into(), "(no panic recorded)".into()));
                format!("@ {index} panic {peak} {location}\t{}", escape(&message))
            }
        };
        writeln!(out, "{line}")
            .and_then(|()| out.flush())
            .map_err(|e| format!("cannot report to the parent: {e}"))?;
    }
    Ok(())
}

/// `\` and newlines escaped, so a message stays on its report line.
pub fn escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('\n', "\\n")
}

/// The inverse of [`escape`].
pub fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some(o) => out.push(o),
            None => out.push('\\'),
        }
    }
    out
}
