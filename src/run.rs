//! `asic run`: load a scenario's chip, program, entries and inputs, run it, write results.

use crate::bench::{Bench, RunReport};
use crate::pcap_io::read_pcap;
use crate::scenario::{ScenarioFile, Source};
use asic_model::profile::{self, ChipProfile};
use pipelines::control::{resolve_op, ControlOp, ResolvedControlOp};
use pipelines::entries::{parse_control_file, parse_entries, resolve, ResolvedEntry};
use pipelines::program::Program;
use pipelines::time::Time;
use std::path::{Path, PathBuf};

/// Compile a program file for a chip; errors are one line naming `file:line:col`, followed
/// by a caret excerpt when `excerpt` is set.
pub fn compile_file(
    path: &Path,
    chip: &ChipProfile,
    excerpt: bool,
) -> Result<dsl::Compiled, String> {
    let source = std::fs::read_to_string(path)
        .map_err(|e| format!("{}: cannot read program file: {e}", path.display()))?;
    let name = path.display().to_string();
    dsl::compile(&source, &name, &chip.pipe).map_err(|e| {
        if excerpt {
            format!("{e}\n{}", e.render(&source))
        } else {
            e.to_string()
        }
    })
}

/// Read and resolve an entries file against a program.
pub fn load_entries(path: &Path, program: &Program) -> Result<Vec<ResolvedEntry>, String> {
    let origin = path.display().to_string();
    let text =
        std::fs::read_to_string(path).map_err(|e| format!("{origin}: cannot read entries: {e}"))?;
    parse_entries(&text, &origin)?
        .iter()
        .enumerate()
        .map(|(i, e)| {
            resolve(program, e)
                .map_err(|r| format!("{origin}: entry {i} (table `{}`): {r}", e.table))
        })
        .collect()
}

/// Read a control file (table entries, or `(tables: [...], registers: [...], meters: [...])`)
/// and resolve its operations against a program.
pub fn load_control(path: &Path, program: &Program) -> Result<Vec<ResolvedControlOp>, String> {
    let origin = path.display().to_string();
    let text =
        std::fs::read_to_string(path).map_err(|e| format!("{origin}: cannot read entries: {e}"))?;
    parse_control_file(&text, &origin)?
        .ops()
        .iter()
        .enumerate()
        .map(|(i, op)| {
            resolve_op(program, op).map_err(|r| format!("{origin}: {}: {r}", describe(i, op)))
        })
        .collect()
}

/// "entry 3 (table `x`)" and the like, for errors.
fn describe(i: usize, op: &ControlOp) -> String {
    match op {
        ControlOp::AddEntry(e) | ControlOp::ModifyEntry(e) => {
            format!("entry {i} (table `{}`)", e.table)
        }
        ControlOp::DeleteEntry(k) => format!("entry {i} (table `{}`)", k.table),
        ControlOp::WriteRegister(r) => format!("entry {i} (register `{}`)", r.register),
        ControlOp::ConfigureMeter(m) => format!("entry {i} (meter `{}`)", m.meter),
    }
}

/// Run a scenario. Results go to `out` if given, else to the scenario's output directory.
/// Returns the report and the directory written.
/// With `lockstep`, the chip visits every cycle (same results, and the report says what the
/// visits saw).
pub fn run_scenario(
    sf: &ScenarioFile,
    out: Option<&Path>,
    lockstep: bool,
) -> Result<(RunReport, PathBuf), String> {
    let s = &sf.scenario;
    let chip = profile::load(&sf_relative_chip(sf))
        .map_err(|e| sf.error_at(&s.chip, e.to_string()).to_string())?;
    let program_path = sf.resolve(&s.program);
    if !program_path.is_file() {
        let msg = format!("program file `{}` not found", program_path.display());
        return Err(sf.error_at(&s.program, msg).to_string());
    }
    let compiled = compile_file(&program_path, &chip, false)?;
    let ops = match &s.entries {
        Some(e) => load_control(&sf.resolve(e), &compiled.program)?,
        None => Vec::new(),
    };
    let mut bench = Bench::with_config(chip, &compiled.program, s.config.clone(), &ops)
        .map_err(|e| format!("{}: {e}", sf.path.display()))?;
    bench.set_lockstep(lockstep);
    for (i, c) in s.control.iter().enumerate() {
        let op = resolve_op(&compiled.program, &c.op).map_err(|e| {
            format!(
                "{}: {}: {e}",
                sf.path.display(),
                describe(i, &c.op).replacen("entry", "control", 1)
            )
        })?;
        bench.schedule_control(Time::from_ns(c.at_ns), op);
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
                let frames = frames
                    .into_iter()
                    .map(|f| (Time::from_ns((f.ts_ns - t0) as u64), f.data))
                    .collect();
                bench.add_frames(input.port, frames).map_err(place)?;
            }
            Source::Generator(g) => bench.add_generator(input.port, g).map_err(place)?,
        }
    }
    let dir = out.map_or_else(|| PathBuf::from(&s.output), Path::to_path_buf);
    bench.capture_pcaps(&dir)?;
    let report = bench.run()?;
    let write = |name: &str, text: String| {
        let p = dir.join(name);
        std::fs::write(&p, text).map_err(|e| format!("{}: cannot write: {e}", p.display()))
    };
    write("summary.txt", report.render_text())?;
    write(
        "summary.json",
        serde_json::to_string_pretty(&report).expect("report serializes"),
    )?;
    Ok((report, dir))
}

/// A chip named in a scenario: a built-in name, or a profile file relative to the scenario.
fn sf_relative_chip(sf: &ScenarioFile) -> String {
    let name = &sf.scenario.chip;
    if profile::builtin_source(name).is_some() {
        return name.clone();
    }
    sf.resolve(name).display().to_string()
}
