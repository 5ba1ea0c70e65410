//! The parent: runs a kind's inputs `0 .. execs` through worker processes, and records what
//! went wrong.
//!
//! A worker runs the inputs from `next` on and reports each ([`crate::worker`]). A panic it
//! reports is a finding, and it goes on. When it dies (a signal: a stack overflow or an abort,
//! the heap cap's among them) or reports nothing for the hang timeout (it is killed), the
//! input in progress is the finding, and a new worker starts after it. The first input of each
//! distinct failure (a panic's location; the kind of death) is minimized by running candidates
//! one per process and written under the findings directory with what it printed; later ones
//! are only counted.

use crate::mutate::generate;
use crate::worker::unescape;
use crate::Kind;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How to run a campaign.
#[derive(Clone, Debug)]
pub struct Options {
    /// The `asic-fuzz` binary the workers run.
    pub exe: PathBuf,
    /// Seed of the inputs.
    pub seed: u64,
    /// The first input's index: a long campaign may be split into ranges, run apart.
    pub from: u64,
    /// Inputs to run: `from .. from + execs`.
    pub execs: u64,
    /// A worker silent this long is hung.
    pub hang: Duration,
    /// The workers' heap cap (bytes).
    pub cap_bytes: usize,
    /// Where findings are written (`DIR/KIND/...`); none: nowhere.
    pub findings: Option<PathBuf>,
    /// Minimize the first input of each distinct failure.
    pub minimize: bool,
    /// Print a progress line on standard error every this often.
    pub progress: Option<Duration>,
}

/// How an input failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Failure {
    /// A panic, caught in the worker.
    Panic,
    /// The worker died from a signal (a stack overflow, an abort) or exited on its own.
    Signal,
    /// The worker reported nothing for the hang timeout.
    Hang,
    /// The worker's heap would have passed the cap.
    Memory,
}

impl Failure {
    /// Every failure, in report order.
    pub const ALL: [Failure; 4] = [
        Failure::Panic,
        Failure::Signal,
        Failure::Hang,
        Failure::Memory,
    ];

    /// The name in reports and findings' file names.
    pub fn name(self) -> &'static str {
        match self {
            Failure::Panic => "panic",
            Failure::Signal => "signal",
            Failure::Hang => "hang",
            Failure::Memory => "memory",
        }
    }
}

/// A distinct failure: its first input, and how many more failed alike.
#[derive(Clone, Debug)]
pub struct Finding {
    /// The first failing input's index.
    pub index: u64,
    /// How it failed.
    pub failure: Failure,
    /// What makes failures alike: a panic's location, the kind of death.
    pub signature: String,
    /// The panic's message, or the end of what the worker printed.
    pub message: String,
    /// Other inputs that failed alike.
    pub repeats: u64,
    /// The file the input was written to, if findings are written.
    pub file: Option<PathBuf>,
}

/// What a campaign saw.
#[derive(Clone, Debug)]
pub struct Summary {
    /// The kind fuzzed.
    pub kind: Kind,
    /// Inputs run.
    pub execs: u64,
    /// Inputs run to their end.
    pub accepted: u64,
    /// Inputs refused with an error.
    pub rejected: u64,
    /// Inputs over the fuzzer's bounds, not run.
    pub skipped: u64,
    /// Failing inputs per failure.
    pub failures: BTreeMap<Failure, u64>,
    /// Distinct failures.
    pub findings: Vec<Finding>,
    /// The most live heap any input used (bytes).
    pub peak_heap: usize,
    /// Worker processes started (1 + one per death or hang).
    pub workers: u64,
    /// Wall time.
    pub wall: Duration,
}

impl Summary {
    /// Failing inputs of `f`.
    pub fn count(&self, f: Failure) -> u64 {
        self.failures.get(&f).copied().unwrap_or(0)
    }
}

/// A report from a worker.
enum Report {
    Done {
        index: u64,
        outcome: String,
        peak: usize,
    },
    Panic {
        index: u64,
        peak: usize,
        location: String,
        message: String,
    },
}

impl Report {
    fn parse(line: &str) -> Option<Report> {
        let mut it = line.strip_prefix("@ ")?.splitn(4, ' ');
        let index = it.next()?.parse().ok()?;
        let outcome = it.next()?;
        let peak = it.next()?.parse().ok()?;
        if outcome == "panic" {
            let (location, message) = it.next()?.split_once('\t')?;
            return Some(Report::Panic {
                index,
                peak,
                location: location.to_string(),
                message: unescape(message),
            });
        }
        Some(Report::Done {
            index,
            outcome: outcome.to_string(),
            peak,
        })
    }
}

/// How a worker ended.
enum End {
    /// It ran all its inputs.
    Finished,
    /// It died or hung, during the input after its last report.
    Failed {
        failure: Failure,
        signature: String,
        message: String,
    },
}

/// A running worker process.
struct Worker {
    child: Child,
    reports: Receiver<String>,
    stderr: Option<JoinHandle<String>>,
    /// What it printed on standard error, once it has ended.
    printed: String,
}

/// What a worker printed on standard error is kept up to this size (its end).
const STDERR_KEPT: usize = 16 * 1024;

impl Worker {
    fn spawn(exe: &Path, args: &[String]) -> Result<Worker, String> {
        let mut child = Command::new(exe)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", exe.display()))?;
        let stdout = child.stdout.take().expect("piped");
        let mut stderr = child.stderr.take().expect("piped");
        let (tx, reports) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stderr = std::thread::spawn(move || {
            let mut kept = Vec::new();
            let mut buf = [0u8; 4096];
            while let Ok(n @ 1..) = stderr.read(&mut buf) {
                kept.extend_from_slice(&buf[..n]);
                if kept.len() > 2 * STDERR_KEPT {
                    kept.drain(..kept.len() - STDERR_KEPT);
                }
            }
            let start = kept.len().saturating_sub(STDERR_KEPT);
            String::from_utf8_lossy(&kept[start..]).into_owned()
        });
        Ok(Worker {
            child,
            reports,
            stderr: Some(stderr),
            printed: String::new(),
        })
    }

    /// The next report, or how the worker ended.
    fn next(&mut self, hang: Duration) -> Result<Result<Report, End>, String> {
        loop {
            match self.reports.recv_timeout(hang) {
                Ok(line) => {
                    if let Some(r) = Report::parse(&line) {
                        return Ok(Ok(r));
                    }
                }
                Err(RecvTimeoutError::Timeout) => {
                    // Killing a process that has just exited is harmless: it is not reaped yet.
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    let printed = self.printed();
                    return Ok(Err(End::Failed {
                        failure: Failure::Hang,
                        signature: "hang".into(),
                        message: format!("no report for {hang:?}\n{printed}"),
                    }));
                }
                Err(RecvTimeoutError::Disconnected) => return self.ended().map(Err),
            }
        }
    }

    /// What it printed on standard error (once it has ended: the reader ends with it).
    fn printed(&mut self) -> String {
        if let Some(h) = self.stderr.take() {
            self.printed = h.join().unwrap_or_default();
        }
        self.printed.clone()
    }

    /// Its standard output closed: it exited; how.
    fn ended(&mut self) -> Result<End, String> {
        let status = self
            .child
            .wait()
            .map_err(|e| format!("cannot wait for a worker: {e}"))?;
        let printed = self.printed();
        if status.success() {
            return Ok(End::Finished);
        }
        if status.code() == Some(crate::FATAL_EXIT) {
            // The worker's own failure (it could not set up), not an input's.
            return Err(format!("a worker failed: {}", printed.trim_end()));
        }
        let (failure, signature) = if printed.contains("memory allocation of") {
            (Failure::Memory, "heap cap".to_string())
        } else if printed.contains("has overflowed its stack") {
            (Failure::Signal, "stack overflow".to_string())
        } else {
            let how = status.signal().map_or_else(
                || format!("exit code {}", status.code().unwrap_or(-1)),
                |s| format!("signal {s}"),
            );
            (Failure::Signal, how)
        };
        Ok(End::Failed {
            failure,
            signature,
            message: printed.trim_end().to_string(),
        })
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        // A worker left behind by an error: do not leave it running.
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Fuzz `kind` as `opts` say.
pub fn campaign(kind: Kind, opts: &Options) -> Result<Summary, String> {
    let start = Instant::now();
    let mut s = Summary {
        kind,
        execs: 0,
        accepted: 0,
        rejected: 0,
        skipped: 0,
        failures: BTreeMap::new(),
        findings: Vec::new(),
        peak_heap: 0,
        workers: 0,
        wall: Duration::ZERO,
    };
    let mut last_progress = Instant::now();
    while s.execs < opts.execs {
        let args = [
            "worker".to_string(),
            kind.name().into(),
            "--seed".into(),
            opts.seed.to_string(),
            "--from".into(),
            (opts.from + s.execs).to_string(),
            "--count".into(),
            (opts.execs - s.execs).to_string(),
            "--mem-mib".into(),
            (opts.cap_bytes >> 20).to_string(),
        ];
        let mut w = Worker::spawn(&opts.exe, &args)?;
        s.workers += 1;
        loop {
            let index = opts.from + s.execs;
            match w.next(opts.hang)? {
                Ok(Report::Done {
                    index: i,
                    outcome,
                    peak,
                }) => {
                    expect_index(i, index)?;
                    match outcome.as_str() {
                        "ok" => s.accepted += 1,
                        "skip" => s.skipped += 1,
                        _ => s.rejected += 1,
                    }
                    s.peak_heap = s.peak_heap.max(peak);
                }
                Ok(Report::Panic {
                    index: i,
                    peak,
                    location,
                    message,
                }) => {
                    expect_index(i, index)?;
                    s.peak_heap = s.peak_heap.max(peak);
                    record(&mut s, opts, index, Failure::Panic, location, message)?;
                }
                Err(End::Finished) if s.execs == opts.execs => break,
                Err(End::Finished) => {
                    return Err(format!(
                        "a worker ended at input {index}, before {}",
                        opts.from + opts.execs
                    ))
                }
                Err(End::Failed {
                    failure,
                    signature,
                    message,
                }) => {
                    record(&mut s, opts, index, failure, signature, message)?;
                    s.execs += 1;
                    break;
                }
            }
            s.execs += 1;
            if opts.progress.is_some_and(|e| last_progress.elapsed() >= e) {
                last_progress = Instant::now();
                let secs = start.elapsed().as_secs_f64();
                let failed: u64 = s.failures.values().sum();
                eprintln!(
                    "{kind}: {} of {} inputs, {:.0}/s, {failed} failed ({} distinct)",
                    s.execs,
                    opts.execs,
                    s.execs as f64 / secs,
                    s.findings.len()
                );
            }
        }
    }
    s.wall = start.elapsed();
    Ok(s)
}

fn expect_index(got: u64, want: u64) -> Result<(), String> {
    if got == want {
        Ok(())
    } else {
        Err(format!(
            "a worker reported input {got} where {want} was due"
        ))
    }
}

/// Count a failure; the first of its signature becomes a finding, minimized and written.
fn record(
    s: &mut Summary,
    opts: &Options,
    index: u64,
    failure: Failure,
    signature: String,
    message: String,
) -> Result<(), String> {
    *s.failures.entry(failure).or_default() += 1;
    if let Some(f) = s
        .findings
        .iter_mut()
        .find(|f| f.failure == failure && f.signature == signature)
    {
        f.repeats += 1;
        return Ok(());
    }
    let mut finding = Finding {
        index,
        failure,
        signature,
        message,
        repeats: 0,
        file: None,
    };
    if let Some(dir) = &opts.findings {
        finding.file = Some(write_finding(s.kind, opts, dir, &finding)?);
    }
    s.findings.push(finding);
    Ok(())
}

/// Write a finding: the input as generated, the minimized input, and a note saying what
/// happened and how to reproduce it. Returns the minimized input's path.
fn write_finding(kind: Kind, opts: &Options, dir: &Path, f: &Finding) -> Result<PathBuf, String> {
    let dir = dir.join(kind.name());
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let stem = format!("{}-seed{}-{}", f.failure.name(), opts.seed, f.index);
    let ext = kind.extension();
    let write = |name: String, bytes: &[u8]| -> Result<PathBuf, String> {
        let p = dir.join(name);
        std::fs::write(&p, bytes).map_err(|e| format!("{}: {e}", p.display()))?;
        Ok(p)
    };
    let input = generate(kind, opts.seed, f.index);
    write(format!("{stem}.{ext}"), &input)?;
    let (minimal, tries) = if opts.minimize && f.failure != Failure::Hang {
        minimize(kind, opts, &input, f)?
    } else {
        (input.clone(), 0)
    };
    let min_path = write(format!("{stem}.min.{ext}"), &minimal)?;
    let printed = reproduce(kind, opts, &min_path, true)?.1;
    let mut note = String::new();
    let _ = writeln!(
        note,
        "kind: {kind}\nseed: {}\nindex: {}",
        opts.seed, f.index
    );
    let _ = writeln!(note, "failure: {} ({})", f.failure.name(), f.signature);
    let _ = writeln!(note, "message: {}", f.message);
    let _ = writeln!(
        note,
        "input: {stem}.{ext} ({} bytes), minimized to {stem}.min.{ext} ({} bytes, {tries} tries)",
        input.len(),
        minimal.len()
    );
    let _ = writeln!(
        note,
        "regenerate: cargo run --profile fuzz -p asic-fuzz -- show {kind} --seed {} --index {}",
        opts.seed, f.index
    );
    let _ = writeln!(
        note,
        "reproduce: cargo run --profile fuzz -p asic-fuzz -- exec {kind} fuzz/findings/{kind}/{stem}.min.{ext}"
    );
    let _ = writeln!(note, "\nwhat the minimized input printed:\n{printed}");
    write(format!("{stem}.txt"), note.as_bytes())?;
    Ok(min_path)
}

/// Run one input file in a worker: its failure signature (none if it did not fail) and what
/// it printed (with a panic's backtrace when `backtrace`).
fn reproduce(
    kind: Kind,
    opts: &Options,
    file: &Path,
    backtrace: bool,
) -> Result<(Option<(Failure, String)>, String), String> {
    let mut args = vec![
        "exec".to_string(),
        kind.name().into(),
        file.display().to_string(),
        "--mem-mib".into(),
        (opts.cap_bytes >> 20).to_string(),
    ];
    if backtrace {
        args.push("--backtrace".into());
    }
    let mut w = Worker::spawn(&opts.exe, &args)?;
    let failed = match w.next(opts.hang)? {
        Ok(Report::Panic { location, .. }) => Some((Failure::Panic, location)),
        Ok(Report::Done { .. }) | Err(End::Finished) => None,
        Err(End::Failed {
            failure,
            signature,
            message,
        }) => return Ok((Some((failure, signature)), message)),
    };
    let _ = w.next(opts.hang)?;
    Ok((failed, w.printed()))
}

/// The most candidates a minimization runs (each is a worker process).
const MINIMIZE_TRIES: usize = 400;
/// The longest a minimization runs: a candidate may be slow (an input that overflows the
/// stack can, cut down, be one that parses for seconds).
const MINIMIZE_TIME: Duration = Duration::from_secs(120);

/// The input cut down while it still fails alike: chunks of lines removed, halving the
/// chunk, then chunks of bytes; at most [`MINIMIZE_TRIES`] candidates and [`MINIMIZE_TIME`].
fn minimize(
    kind: Kind,
    opts: &Options,
    input: &[u8],
    f: &Finding,
) -> Result<(Vec<u8>, usize), String> {
    let scratch = tempfile::tempdir().map_err(|e| format!("temporary directory: {e}"))?;
    let path = scratch
        .path()
        .join(format!("candidate.{}", kind.extension()));
    let mut tries = 0;
    let start = Instant::now();
    let fails = |candidate: &[u8]| -> Result<bool, String> {
        std::fs::write(&path, candidate).map_err(|e| format!("{}: {e}", path.display()))?;
        let (got, _) = reproduce(kind, opts, &path, false)?;
        Ok(got.is_some_and(|(failure, sig)| failure == f.failure && sig == f.signature))
    };
    let mut cur = input.to_vec();
    for by_lines in [true, false] {
        let units = |data: &[u8]| -> Vec<usize> {
            // Unit boundaries: after each newline, or every byte.
            let mut b: Vec<usize> = if by_lines {
                (0..data.len())
                    .filter(|&i| data[i] == b'\n')
                    .map(|i| i + 1)
                    .collect()
            } else {
                (1..=data.len()).collect()
            };
            b.insert(0, 0);
            if b.last() != Some(&data.len()) {
                b.push(data.len());
            }
            b
        };
        let mut chunk = units(&cur).len() / 2;
        while chunk >= 1 {
            let mut i = 0;
            loop {
                let b = units(&cur);
                if i + 1 >= b.len() {
                    break;
                }
                let end = (i + chunk).min(b.len() - 1);
                let candidate = [&cur[..b[i]], &cur[b[end]..]].concat();
                if tries >= MINIMIZE_TRIES || start.elapsed() >= MINIMIZE_TIME {
                    return Ok((cur, tries));
                }
                tries += 1;
                if fails(&candidate)? {
                    cur = candidate;
                } else {
                    i += chunk;
                }
            }
            chunk /= 2;
        }
    }
    Ok((cur, tries))
}

/// The campaigns' table: per kind, inputs and outcomes, failures per kind of failure, the
/// heaviest input's heap, wall time and rate; then each distinct failure.
pub fn render(summaries: &[Summary]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<9} {:>9} {:>9} {:>9} {:>7} {:>6} {:>7} {:>5} {:>6} {:>9} {:>9} {:>8}",
        "kind",
        "execs",
        "accepted",
        "rejected",
        "skipped",
        "panics",
        "signals",
        "hangs",
        "memory",
        "peak heap",
        "wall",
        "execs/s"
    );
    for s in summaries {
        let secs = s.wall.as_secs_f64();
        let _ = writeln!(
            out,
            "{:<9} {:>9} {:>9} {:>9} {:>7} {:>6} {:>7} {:>5} {:>6} {:>6} MiB {:>8.1}s {:>8.1}",
            s.kind.name(),
            s.execs,
            s.accepted,
            s.rejected,
            s.skipped,
            s.count(Failure::Panic),
            s.count(Failure::Signal),
            s.count(Failure::Hang),
            s.count(Failure::Memory),
            s.peak_heap >> 20,
            secs,
            s.execs as f64 / secs.max(1e-9)
        );
    }
    for s in summaries {
        for f in &s.findings {
            let _ = writeln!(
                out,
                "\n{} input {} ({} more alike): {} at {}\n  {}",
                s.kind,
                f.index,
                f.repeats,
                f.failure.name(),
                f.signature,
                f.message.lines().take(6).collect::<Vec<_>>().join("\n  ")
            );
            if let Some(file) = &f.file {
                let _ = writeln!(out, "  minimized: {}", file.display());
            }
        }
    }
    out
}
