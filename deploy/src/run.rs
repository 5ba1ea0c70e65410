//! Running network scenarios: load a file, build its network, run it, with captured ports
//! written as pcaps (`<node>-port<N>.pcap`), the chips' per-packet traces, if asked for,
//! as `trace.txt` and `trace.jsonl`, and everything else the caller observes (a progress
//! bar, for one) passed on.

use crate::build::build_routed;
use crate::scenario::NetScenario;
use asic_io::pcap::PcapOut;
use asic_io::trace::{TraceOptions, TraceWriter};
use asic_model::chip::Chip;
use asic_model::trace::PacketTrace;
use asic_net::records::RunRecord;
use asic_net::{Capture, Net, NetRun, Observer};
use pipelines::time::Time;
use std::path::Path;

/// How to run.
#[derive(Clone, Copy, Debug, Default)]
pub struct RunOptions<'a> {
    /// Write the captured ports' pcaps into this directory (none: capture nothing).
    pub pcap_dir: Option<&'a Path>,
    /// Visit every cycle of every chip (same record).
    pub lockstep: bool,
    /// Trace these chips' packets into trace files in this directory.
    pub trace: Option<(&'a TraceOptions, &'a Path)>,
    /// Threads to run on (0 and 1: one); the record is the same for every count.
    pub threads: usize,
}

/// Read a scenario file.
pub fn load(path: &Path) -> Result<NetScenario, String> {
    load_with_text(path).map(|(s, _)| s)
}

/// Run a scenario: relative paths resolve against `base`; `observer` sees the progress.
pub fn run_observed(
    scenario: NetScenario,
    base: &Path,
    opts: RunOptions,
    observer: &mut dyn Observer,
) -> Result<NetRun, String> {
    let (mut network, paths) = build_routed(scenario, base)?;
    // The HOL check follows flows over the generated routes: every chip must have them.
    if network.hol_check.is_some() {
        if let Some(c) = paths.unknown_routes() {
            return Err(format!(
                "hol_check: chip `{}` forwards by routes of its own, which the path oracle \
                 cannot follow",
                network.topology.spec.chips[c].name
            ));
        }
    }
    let names: Vec<String> = network
        .topology
        .spec
        .chips
        .iter()
        .map(|c| c.name.clone())
        .collect();
    let traced = match opts.trace {
        Some((t, _)) => set_traces(&mut network.chips, &names, t)?,
        None => Vec::new(),
    };
    let writer = PcapWriter {
        captures: network.captures.clone(),
        dir: opts.pcap_dir,
        files: Vec::new(),
        trace: opts.trace.map(|(t, dir)| TraceOut {
            dir,
            stdout: t.text_to_stdout,
            names: names.clone(),
            writer: None,
        }),
        inner: observer,
    };
    let mut net = Net::build(network, Box::new(writer))?;
    net.set_lockstep(opts.lockstep);
    net.set_threads(opts.threads);
    let mut run = net.run()?;
    if let Some(snaps) = &run.record.queue_snapshots {
        run.record.hol =
            Some(crate::hol::check(&paths, snaps).map_err(|e| format!("hol_check: {e}"))?);
    }
    if !traced.is_empty()
        && traced
            .iter()
            .all(|&c| run.chips[c].trace_seen().is_some_and(|s| s.matched == 0))
    {
        let why: Vec<String> = traced
            .iter()
            .filter_map(|&c| {
                let chip = &run.chips[c];
                let (f, s) = (chip.trace_filter()?, chip.trace_seen()?);
                Some(format!("chip {}: {}", names[c], f.nothing_matched(s)))
            })
            .collect();
        return Err(format!("trace: {}", why.join("; ")));
    }
    Ok(run)
}

/// Turn the trace on for the chips `t` names (every chip if it names none); returns their
/// indices. A name the network lacks, or a filter a chip refuses, is an error naming it.
fn set_traces(
    chips: &mut [Chip],
    names: &[String],
    t: &TraceOptions,
) -> Result<Vec<usize>, String> {
    let mut traced = Vec::new();
    for name in &t.chips {
        match names.iter().position(|n| n == name) {
            Some(c) => traced.push(c),
            None => {
                return Err(format!(
                    "--trace-chip {name}: the network has no chip `{name}` (its chips: {})",
                    names.join(", ")
                ))
            }
        }
    }
    if traced.is_empty() {
        traced = (0..chips.len()).collect();
    }
    traced.sort_unstable();
    traced.dedup();
    for &c in &traced {
        chips[c]
            .set_trace(t.filter.clone())
            .map_err(|e| format!("chip `{}`: {e}", names[c]))?;
    }
    Ok(traced)
}

/// Run a scenario whose relative paths are relative to `base`; pcaps go to `out` if given.
pub fn run_detailed(
    scenario: NetScenario,
    base: &Path,
    out: Option<&Path>,
) -> Result<NetRun, String> {
    let opts = RunOptions {
        pcap_dir: out,
        ..RunOptions::default()
    };
    run_observed(scenario, base, opts, &mut ())
}

/// Run a scenario whose relative paths are relative to the current directory; no pcaps.
pub fn run(scenario: NetScenario) -> Result<RunRecord, String> {
    run_detailed(scenario, Path::new(""), None).map(|r| r.record)
}

/// Run a scenario file (relative paths against its directory). An error found after the
/// file was parsed is placed in it at the name it quotes ([`located::locate`]).
pub fn run_file(
    path: &Path,
    opts: RunOptions,
    observer: &mut dyn Observer,
) -> Result<NetRun, String> {
    let (s, text) = load_with_text(path)?;
    run_observed(s, path.parent().unwrap_or(Path::new("")), opts, observer)
        .map_err(|e| place_in(&path.display().to_string(), &text, e))
}

/// Read a scenario file, keeping its text to place later errors in it ([`place_in`]).
pub fn load_with_text(path: &Path) -> Result<(NetScenario, String), String> {
    let text = located::read_text(path, "scenario")?;
    let s = located::parse_ron(&text, &path.display().to_string())?;
    Ok((s, text))
}

/// `message` placed in the file it is about: as it is if it already names a place in a file
/// (an entries file, a profile, a topology file, a program), else in `file` at the name it
/// quotes.
pub fn place_in(file: &str, text: &str, message: String) -> String {
    let placed = [".ron:", ".p4:", ".pcap:"];
    if placed.iter().any(|p| message.contains(p)) {
        return message;
    }
    located::locate(file, text, &message).to_string()
}

/// Captured frames into one pcap per captured port (and on to the caller's observer),
/// traced packets into the trace files; the rest to the caller's observer.
struct PcapWriter<'a> {
    captures: Vec<Capture>,
    dir: Option<&'a Path>,
    files: Vec<PcapOut>,
    trace: Option<TraceOut<'a>>,
    inner: &'a mut dyn Observer,
}

/// Where the chips' traces go.
struct TraceOut<'a> {
    dir: &'a Path,
    stdout: bool,
    /// The chips' names, by index.
    names: Vec<String>,
    /// Open once the run starts.
    writer: Option<TraceWriter>,
}

impl Observer for PcapWriter<'_> {
    /// Create the pcaps (the runtime has checked the captured ports exist).
    fn start(&mut self) -> Result<(), String> {
        if let Some(dir) = self.dir.filter(|_| !self.captures.is_empty()) {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("{}: cannot create directory: {e}", dir.display()))?;
            for c in &self.captures {
                let file = dir.join(format!("{}-port{}.pcap", c.node, c.port));
                self.files.push(PcapOut::create(&file)?);
            }
        }
        if let Some(t) = &mut self.trace {
            std::fs::create_dir_all(t.dir)
                .map_err(|e| format!("{}: cannot create directory: {e}", t.dir.display()))?;
            t.writer = Some(TraceWriter::create(t.dir, t.stdout)?);
        }
        self.inner.start()
    }

    fn progress(&mut self, now: Time, total: Time) {
        self.inner.progress(now, total)
    }

    fn capture(&mut self, capture: usize, start: Time, frame: &[u8]) -> Result<(), String> {
        if let Some(f) = self.files.get_mut(capture) {
            f.write(start, frame)?;
        }
        self.inner.capture(capture, start, frame)
    }

    fn trace(&mut self, chip: usize, packet: &PacketTrace) -> Result<(), String> {
        match &mut self.trace {
            Some(TraceOut {
                names,
                writer: Some(w),
                ..
            }) => w.write(packet, Some(&names[chip])),
            _ => Ok(()),
        }
    }

    fn finish(&mut self, end: Time) {
        for f in std::mem::take(&mut self.files) {
            let _ = f.finish();
        }
        if let Some(w) = self.trace.as_mut().and_then(|t| t.writer.take()) {
            let _ = w.finish();
        }
        self.inner.finish(end)
    }
}
