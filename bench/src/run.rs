//! `asic run`: load a scenario's chip, program, entries and inputs, run it, write results:
//! a pcap per egress port, `summary.txt` and `summary.json` (the [`RunReport`], with the
//! control-plane reads and the state at the end), and `state.txt` (those as people read
//! them).

use crate::bench::{Bench, RunError, RunReport};
use crate::scenario::{ScenarioFile, Source};
use asic_io::load::describe;
use asic_io::pcap::read_pcap;
use asic_io::trace::{TraceOptions, TraceWriter};
use pipelines::control::resolve_op;
use pipelines::time::Time;
use std::path::{Path, PathBuf};

/// Run a scenario. Results go to `out` if given, else to the scenario's output directory.
/// Returns the report and the directory written.
/// With `lockstep`, the chip visits every cycle (same results, and the report says what the
/// visits saw).
pub fn run_scenario(
    sf: &ScenarioFile,
    out: Option<&Path>,
    lockstep: bool,
) -> Result<(RunReport, PathBuf), String> {
    run_traced(sf, out, lockstep, None)
}

/// [`run_scenario`], with the per-packet trace of `trace` written into the output directory
/// (`trace.txt`, or the text to standard output, and `trace.jsonl`). A filter that keeps no
/// packet is an error saying what the run had, once the other results are written.
pub fn run_traced(
    sf: &ScenarioFile,
    out: Option<&Path>,
    lockstep: bool,
    trace: Option<&TraceOptions>,
) -> Result<(RunReport, PathBuf), String> {
    let s = &sf.scenario;
    let base = sf.base();
    let chip = base
        .profile(&s.chip)
        .map_err(|e| sf.error_at(&s.chip, e).to_string())?;
    let program_path = sf.resolve(&s.program);
    if !program_path.is_file() {
        let msg = format!("program file `{}` not found", program_path.display());
        return Err(sf.error_at(&s.program, msg).to_string());
    }
    let compiled = base.compile(&s.program, &chip)?;
    let mut bench =
        Bench::with_config(chip, &compiled.program, s.config.clone(), &[]).map_err(|e| {
            match config_field(&e) {
                Some(path) => sf.config_error_at(&path, e.clone()).to_string(),
                None => format!("{}: {e}", sf.path.display()),
            }
        })?;
    if let Some(file) = &s.entries {
        // Entries the chip refuses (a key or argument that does not fit, a full table) are
        // the entries file's errors.
        for placed in base.control(file, &compiled.program)? {
            bench
                .chip_mut()
                .apply(&placed.op)
                .map_err(|e| format!("{}: {e}", placed.place))?;
        }
    }
    bench.set_lockstep(lockstep);
    if let Some(t) = trace {
        bench.set_packet_trace(t.filter.clone())?;
    }
    match s.stop_ns {
        Some(ns) => {
            let at = Time::from_input_ns(ns, "stop_ns")
                .map_err(|e| sf.error_at("stop_ns", e).to_string())?;
            bench.set_stop(at);
        }
        None => {
            if let Some(i) = s
                .config
                .pktgen
                .iter()
                .position(|a| a.period_ns.is_some() && a.count.is_none())
            {
                let e = format!(
                    "config.pktgen[{i}]: a periodic application without a `count` makes packets \
                     for ever; give it a count or give the scenario a `stop_ns`"
                );
                return Err(sf.error_at("pktgen", e).to_string());
            }
        }
    }
    // `control 2 (table `t`)`: what errors call s.control[1].
    let control_name = |i: usize| describe(i, &s.control[i].op).replacen("entry", "control", 1);
    for (i, c) in s.control.iter().enumerate() {
        // Placed at the name the operation gives (a table, register, counter or meter), and
        // a time at the number written.
        let op = resolve_op(&compiled.program, &c.op)
            .map_err(|e| sf.locate(&format!("{}: {e}", control_name(i))).to_string())?;
        let at = Time::from_input_ns(c.at_ns, &format!("control[{i}]: at_ns"))
            .map_err(|e| sf.error_at(&c.at_ns.to_string(), e).to_string())?;
        bench.schedule_control(at, op);
    }

    // Pcap inputs keep their relative timing: all are shifted by the earliest first frame.
    let mut pcaps = Vec::new();
    for (i, input) in s.inputs.iter().enumerate() {
        if let Source::Pcap(p) = &input.source {
            pcaps.push((i, read_pcap(&sf.resolve(p))?));
        }
    }
    let t0 = pcaps
        .iter()
        .filter_map(|(_, f)| f.first().map(|f| f.ts_ns))
        .min()
        .unwrap_or(0);
    let mut pcaps = pcaps.into_iter();
    for (i, input) in s.inputs.iter().enumerate() {
        let place = |e: String| {
            format!(
                "{}: inputs[{i}] (port {}): {e}",
                sf.path.display(),
                input.port
            )
        };
        match &input.source {
            Source::Pcap(_) => {
                let (_, frames) = pcaps.next().expect("read above, in input order");
                // In time order, each file's first frame is its earliest, so none is before t0.
                let mut previous = t0;
                let frames = frames
                    .into_iter()
                    .enumerate()
                    .map(|(n, f)| {
                        let field = format!("pcap record #{}: timestamp", n + 1);
                        if f.ts_ns < previous {
                            return Err(format!(
                                "{field} {} ns is earlier than the record before it ({previous} \
                                 ns): a pcap's frames must be in time order",
                                f.ts_ns
                            ));
                        }
                        previous = f.ts_ns;
                        let ns = u64::try_from(f.ts_ns - t0).unwrap_or(u64::MAX);
                        Ok((Time::from_input_ns(ns, &field)?, f.data))
                    })
                    .collect::<Result<_, String>>()
                    .map_err(place)?;
                bench.add_frames(input.port, frames).map_err(place)?;
            }
            Source::Generator(g) => bench.add_generator(input.port, g).map_err(place)?,
        }
    }
    let dir = out.map_or_else(|| PathBuf::from(&s.output), Path::to_path_buf);
    bench.capture_pcaps(&dir)?;
    // The inputs and the operations were added in the scenario's order: the run's errors
    // about them are the scenario's.
    let report = bench.run().map_err(|e| match e {
        RunError::Control(f) => {
            format!("{}: {}", sf.path.display(), f.refusal(&control_name(f.op)))
        }
        RunError::InputsOverlap { .. } | RunError::ReadNotTaken(_) => {
            format!("{}: {e}", sf.path.display())
        }
        RunError::Other(e) => e,
    })?;
    let write = |name: &str, text: String| {
        let p = dir.join(name);
        std::fs::write(&p, text).map_err(|e| format!("{}: cannot write: {e}", p.display()))
    };
    write("summary.txt", report.render_text())?;
    write("state.txt", report.render_state())?;
    write(
        "summary.json",
        serde_json::to_string_pretty(&report).expect("report serializes"),
    )?;
    if let Some(t) = trace {
        write_trace(&bench, t, &dir)?;
    }
    Ok((report, dir))
}

/// The bench's traced packets into the trace files in `dir`.
fn write_trace(bench: &Bench, t: &TraceOptions, dir: &Path) -> Result<(), String> {
    let chip = bench.chip();
    if let (Some(seen), Some(filter)) = (chip.trace_seen(), chip.trace_filter()) {
        if seen.matched == 0 {
            return Err(format!("trace: {}", filter.nothing_matched(seen)));
        }
    }
    let mut w = TraceWriter::create(dir, t.text_to_stdout)?;
    for p in bench.packet_traces() {
        w.write(p, None)?;
    }
    w.finish().map(|_| ())
}

/// The field a refused configuration names, as a path under `config`: a TM field
/// (`invalid TM configuration `trim.queue`: ...`, `tm::config::ConfigError`) under `tm`
/// (`["tm", "trim", "queue"]`), a chip field (`chip configuration: `mirror_on_drop.queue`:
/// ...`) as it is (`["mirror_on_drop", "queue"]`); indices dropped.
fn config_field(message: &str) -> Option<Vec<&str>> {
    let (under, rest) = match message.strip_prefix("invalid TM configuration `") {
        Some(rest) => (Some("tm"), rest),
        None => (None, message.strip_prefix("chip configuration: `")?),
    };
    let field = rest.split('`').next()?;
    let names = field.split('.').map(|n| n.split('[').next().unwrap_or(n));
    Some(under.into_iter().chain(names).collect())
}
