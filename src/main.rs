//! `asic`: compile P4-like programs, inspect chip profiles, and run scenarios and STF packet
//! tests on the cycle-accurate chip model. With no arguments it runs the embedded L3-router
//! demo.

use asic_bench::run::{run_scenario, run_traced};
use asic_bench::scenario::ScenarioFile;
use asic_bench::stf::{run_text, stf_files, StfReport};
use asic_deploy::run::{load_with_text, place_in, run_observed, RunOptions};
use asic_io::load::compile_file;
use asic_io::trace::TraceOptions;
use asic_model::profile;
use asic_model::trace::TraceFilter;
use asic_report::progress::SimProgress;
use clap::{Args, Parser, Subcommand, ValueEnum};
use pipelines::time::Time;

#[global_allocator]
static ALLOC: asic::perf::CountingAlloc = asic::perf::CountingAlloc;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Write to standard output. A closed pipe (`asic … | head`) ends the program quietly, as
/// command-line tools do; any other failure (a full disk) is an error.
fn emit(text: &str) -> Result<(), String> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(0),
        Err(e) => Err(format!("cannot write to standard output: {e}")),
    }
}

/// `print!` through [`emit`].
macro_rules! out {
    ($($arg:tt)*) => { emit(&format!($($arg)*)) };
}

/// `println!` through [`emit`].
macro_rules! outln {
    ($($arg:tt)*) => { emit(&format!("{}\n", format!($($arg)*))) };
}

/// A byte count as a person reads it: `5.1 KB`, `69.2 MB`.
fn bytes(b: u64) -> String {
    match b {
        0..1_000 => format!("{b} B"),
        1_000..1_000_000 => format!("{:.1} KB", b as f64 / 1e3),
        _ => format!("{:.1} MB", b as f64 / 1e6),
    }
}

#[derive(Parser)]
#[command(
    name = "asic",
    version,
    about = "A cycle-accurate model of a programmable switch ASIC"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Run a scenario (RON): chip, program, entries, inputs; writes pcaps and a summary.
    Run {
        /// The scenario file.
        scenario: PathBuf,
        /// Output directory (overrides the scenario's `output`).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Visit every cycle of the chip (slow; same results, plus what the visits saw).
        #[arg(long)]
        lockstep: bool,
        #[command(flatten)]
        trace: TraceArgs,
    },
    /// Run a network scenario (chips, hosts, links, traffic): pcaps, CSV/JSON tables,
    /// a VCD waveform and plots in the output directory.
    Net {
        /// The network scenario file.
        scenario: PathBuf,
        /// Output directory.
        #[arg(long, default_value = "out/net")]
        out: PathBuf,
        /// Visit every cycle of every chip (slow; same results).
        #[arg(long)]
        lockstep: bool,
        /// Threads to run on (default: every core); the outputs are the same for every
        /// count. More threads than cores run slower: the threads meet after every
        /// lookahead window.
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
        threads: Option<u16>,
        /// Trace the packets of this chip (by name; repeat or separate with commas; implies
        /// --trace). Without it, --trace traces every chip.
        #[arg(long, value_delimiter = ',', value_name = "NAME")]
        trace_chip: Vec<String>,
        #[command(flatten)]
        trace: TraceArgs,
    },
    /// Measure the model's speed: switch-hops per second, simulated time per wall second and
    /// peak memory on each workload of docs/PERFORMANCE.md.
    Bench {
        /// Workloads to run (all if none): pipe12, tm-dt, hop-64B, idle-64B, chip-64x100G,
        /// leafspine, ns3-twin, incast-64B.
        workloads: Vec<String>,
        /// Tiny sizes: a smoke run of every workload in well under a second.
        #[arg(long)]
        quick: bool,
        /// Multiply every workload's size by this (the linearity check runs 1 and 10).
        #[arg(long, default_value_t = 1)]
        scale: u64,
        /// Visit every cycle of every chip (lockstep mode).
        #[arg(long)]
        lockstep: bool,
        /// Threads for the network workloads (leafspine, ns3-twin); `par` is the speedup
        /// their split allows (events over those on the critical path).
        #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..))]
        threads: u16,
    },
    /// Run a parameter grid over a network scenario, one simulation per point in parallel,
    /// and merge the results into one table.
    Sweep {
        /// The sweep spec: `(base: "scenario.ron", grid: { "load": [0.3, 0.6] })`.
        spec: PathBuf,
        /// Output directory: sweep.csv, and a subdirectory per point holding what `asic net`
        /// writes for it (pcaps, CSV and JSON tables, waveform, plots) and its row (row.json).
        #[arg(long, default_value = "out/sweep")]
        out: PathBuf,
        /// Write the points as jobs instead of running them: jobs.txt (one command per point,
        /// for GNU parallel: `parallel < OUT/jobs.txt`) and slurm.sh (a Slurm array job);
        /// then `--merge`.
        #[arg(long, conflicts_with_all = ["point", "merge"])]
        jobs: bool,
        /// Run only point K (from 0), as a job does.
        #[arg(long, value_name = "K", conflicts_with = "merge")]
        point: Option<usize>,
        /// Merge the rows the points' jobs wrote under OUT into sweep.csv, the table a local
        /// sweep makes.
        #[arg(long)]
        merge: bool,
    },
    /// Reproduce a traffic-manager figure from its formulas (DT convergence, FB isolation,
    /// PFC hysteresis...); without a name, list them.
    TmExperiment {
        /// The experiment.
        name: Option<String>,
        /// Print CSV instead of a table.
        #[arg(long)]
        csv: bool,
    },
    /// List the built-in chip profiles, or show one.
    Chips {
        #[command(subcommand)]
        action: Option<ChipsAction>,
    },
    /// Run STF packet-test files (docs/STF.md): PASS, FAIL or SKIP per file.
    ///
    /// One line per file (PASS, FAIL followed by each failure as `file:line: what`, or SKIP),
    /// then the totals. Exit status 0 if every file passed or was skipped, 1 if one failed, 2
    /// if a path cannot be read or a directory holds no `.stf` file.
    Stf {
        /// STF files, and directories: every `*.stf` directly in one, in name order
        /// (subdirectories are not searched).
        #[arg(required = true)]
        paths: Vec<PathBuf>,
    },
    /// Compile a program for a chip and print where everything went.
    ///
    /// The report gives, per gress: each stage's resources and what uses them, each table's
    /// stage (for a table split across stages, each part's stage, entries, SRAM and TCAM
    /// blocks and hash bits), each gateway's and extern's stage, the PHV allocation and the
    /// latency. A table larger than what one stage has left is split across stages, as bf-p4c
    /// does; `@stage(N[, entries])` or `@pragma stage N [entries]` before a table pins it (or
    /// entries of it) to a stage, and `@name("...")` gives a table or action its
    /// control-plane name. `#include "file"` reads a file beside the program; `#include
    /// <tna.p4>` (also `<core.p4>`, `<t2na.p4>`, `<common/headers.p4>`) one shipped with the
    /// compiler. docs/COMPILING.md has the rules and an example.
    ///
    /// `--html FILE` writes the allocation as a page to look at (bf-p4c users know it from P4
    /// Insight): the stage × resource grid coloured by use, every table's placement, the
    /// table dependency graph by stage, the PHV container map. `--emit dot` prints the
    /// dependency graph for Graphviz.
    Compile {
        /// The program (`.p4`).
        program: PathBuf,
        /// Chip profile: a built-in name or a RON file.
        #[arg(long, default_value = "tofino2-like")]
        chip: String,
        /// Print this instead of the resource report.
        #[arg(long, value_enum)]
        emit: Option<Emit>,
        /// Also write the resource report as JSON to this file, shaped like p4c's
        /// resources.json (`resources.mau.tables` lists every table's parts).
        #[arg(long)]
        json: Option<PathBuf>,
        /// Also write the visual resource view to this file: one self-contained HTML page
        /// (no network needed) with the stage × resource grid, each table's placement, keys
        /// and actions, the table dependency graph by stage, the PHV container map and the
        /// latency per gress.
        #[arg(long)]
        html: Option<PathBuf>,
    },
}

/// The per-packet trace's flags (docs/TRACE.md). Any filter implies `--trace`.
#[derive(Args)]
struct TraceArgs {
    /// Write a per-packet trace: every parser state, stage lookup, PHV change, TM decision
    /// and departure, at its cycle (trace.txt and trace.jsonl in the output directory;
    /// `--trace -` writes the text to standard output; formats in docs/TRACE.md).
    #[arg(long, num_args = 0..=1, value_name = "-",
          value_parser = clap::builder::PossibleValuesParser::new(["-"]))]
    trace: Option<Option<String>>,
    /// Trace only these packets (numbered per chip from 0 as they come into being; repeat or
    /// separate with commas).
    #[arg(long, value_delimiter = ',', value_name = "N")]
    trace_packet: Vec<u64>,
    /// Trace only packets that came in on, were queued for or left by this port (repeat or
    /// separate with commas).
    #[arg(long, value_delimiter = ',', value_name = "PORT")]
    trace_port: Vec<u16>,
    /// Trace only what happens at or after this time (ns).
    #[arg(long, value_name = "NS")]
    trace_from_ns: Option<u64>,
    /// Trace only what happens at or before this time (ns).
    #[arg(long, value_name = "NS")]
    trace_to_ns: Option<u64>,
}

impl TraceArgs {
    /// What to trace (none: no trace flag was given); `chips`: `--trace-chip`'s names, which
    /// turn the trace on too.
    fn options(self, chips: Vec<String>) -> Result<Option<TraceOptions>, String> {
        let on = self.trace.is_some()
            || !chips.is_empty()
            || !self.trace_packet.is_empty()
            || !self.trace_port.is_empty()
            || self.trace_from_ns.is_some()
            || self.trace_to_ns.is_some();
        if !on {
            return Ok(None);
        }
        let time = |ns: Option<u64>, flag| ns.map(|n| Time::from_input_ns(n, flag)).transpose();
        Ok(Some(TraceOptions {
            filter: TraceFilter {
                packets: self.trace_packet,
                ports: self.trace_port,
                from: time(self.trace_from_ns, "--trace-from-ns")?,
                to: time(self.trace_to_ns, "--trace-to-ns")?,
            },
            chips,
            text_to_stdout: self.trace.flatten().is_some(),
        }))
    }
}

#[derive(Subcommand)]
enum ChipsAction {
    /// Print a profile (built-in ones with their source comments).
    Show {
        /// A built-in name or a RON file.
        name: String,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum Emit {
    /// The executable program format, as RON.
    Ir,
    /// The table dependency graph placement obeyed, in Graphviz's language (`dot -Tsvg`).
    Dot,
}

fn demo() -> Result<(), String> {
    let dir = Path::new("out/demo");
    asic::demo::extract(dir)?;
    let sf = ScenarioFile::load(&dir.join("scenario.ron")).map_err(|e| e.to_string())?;
    outln!(
        "asic: no command given, so running the embedded demo: the L3 router of programs/l3router/\n\
         on the `{}` chip (files extracted to {}; `asic --help` lists the commands).\n",
        sf.scenario.chip,
        dir.display()
    )?;
    let (report, out) = run_scenario(&sf, Some(&dir.join("results")), false)?;
    out!("{}", report.render_text())?;
    outln!(
        "\nwrote one pcap per egress port and summary.{{txt,json}} to {}",
        out.display()
    )?;
    Ok(())
}

fn chips(action: Option<ChipsAction>) -> Result<(), String> {
    match action {
        None => {
            outln!(
                "{:<14} {:>5} {:>7} {:>7} {:>10}  description",
                "name",
                "pipes",
                "ports",
                "stages",
                "buffer"
            )?;
            for name in profile::builtin_names() {
                let p = profile::load(name).map_err(|e| e.to_string())?;
                outln!(
                    "{:<14} {:>5} {:>7} {:>7} {:>10}  {}",
                    name,
                    p.pipes,
                    p.ports_total(),
                    p.pipe.stages,
                    bytes(p.tm.buffer_bytes()),
                    p.description
                )?;
            }
            Ok(())
        }
        Some(ChipsAction::Show { name }) => {
            match profile::builtin_source(&name) {
                Some(src) => out!("{src}")?,
                None => out!(
                    "{}",
                    profile::load(&name).map_err(|e| e.to_string())?.to_ron()
                )?,
            }
            Ok(())
        }
    }
}

fn compile(
    program: &Path,
    chip: &str,
    emit: Option<Emit>,
    json: Option<PathBuf>,
    html: Option<PathBuf>,
) -> Result<(), String> {
    let chip = profile::load(chip).map_err(|e| e.to_string())?;
    let compiled = compile_file(program, &chip, true)?;
    match emit {
        Some(Emit::Ir) => {
            let cfg = ron::ser::PrettyConfig::default();
            outln!(
                "{}",
                ron::ser::to_string_pretty(&compiled.program, cfg).map_err(|e| e.to_string())?
            )?;
        }
        Some(Emit::Dot) => out!("{}", dsl::depgraph::dot(&compiled.report))?,
        None => out!("{}", compiled.report.render_text())?,
    }
    if let Some(path) = json {
        let text = serde_json::to_string_pretty(&compiled.report).map_err(|e| e.to_string())?;
        std::fs::write(&path, text)
            .map_err(|e| format!("{}: cannot write: {e}", path.display()))?;
    }
    if let Some(path) = html {
        let page = asic::resource_view::render(&compiled, &chip);
        std::fs::write(&path, page)
            .map_err(|e| format!("{}: cannot write: {e}", path.display()))?;
    }
    Ok(())
}

/// `1 file`, `3 files`.
fn count(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

/// `asic stf`: `Ok(true)` if every file passed or was skipped, `Ok(false)` if one failed.
/// `Err` (exit status 2, as clap's usage errors) is a path that cannot be read, found before
/// any file runs: status 1 must mean a test failed, not that the command was mistyped.
fn stf(paths: &[PathBuf]) -> Result<bool, String> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            let found = stf_files(path)?;
            if found.is_empty() {
                return Err(format!(
                    "{}: no .stf file in this directory",
                    path.display()
                ));
            }
            files.extend(found);
        } else {
            files.push(path.clone());
        }
    }
    let texts = files
        .iter()
        .map(|f| {
            std::fs::read_to_string(f).map_err(|e| format!("{}: cannot read: {e}", f.display()))
        })
        .collect::<Result<Vec<String>, String>>()?;
    let (mut passed, mut failed, mut skipped) = (0, 0, 0);
    let mut total = StfReport::default();
    for (file, text) in files.iter().zip(&texts) {
        match run_text(text, file) {
            Ok(StfReport {
                skipped: Some(why), ..
            }) => {
                skipped += 1;
                outln!("SKIP {}: {why}", file.display())?;
            }
            Ok(r) => {
                passed += 1;
                outln!(
                    "PASS {} ({}, {} matched, {})",
                    file.display(),
                    count(r.packets_sent, "packet"),
                    r.packets_matched,
                    count(r.state_checks, "state check")
                )?;
                total.packets_sent += r.packets_sent;
                total.packets_matched += r.packets_matched;
                total.state_checks += r.state_checks;
            }
            Err(failures) => {
                failed += 1;
                outln!("FAIL {}\n{failures}", file.display())?;
            }
        }
    }
    outln!(
        "\n{}: {passed} passed, {failed} failed, {skipped} skipped \
         ({}, {} matched, {} in the files that passed)",
        count(files.len(), "file"),
        count(total.packets_sent, "packet"),
        total.packets_matched,
        count(total.state_checks, "state check")
    )?;
    Ok(failed == 0)
}

fn net(
    scenario: &Path,
    out: &Path,
    lockstep: bool,
    threads: usize,
    trace: Option<&TraceOptions>,
) -> Result<(), String> {
    std::fs::create_dir_all(out)
        .map_err(|e| format!("{}: cannot create directory: {e}", out.display()))?;
    let (s, text) = load_with_text(scenario)?;
    let mut progress = SimProgress::new(&s.name);
    let opts = RunOptions {
        pcap_dir: Some(out),
        lockstep,
        trace: trace.map(|t| (t, out)),
        threads,
    };
    let base = scenario.parent().unwrap_or(Path::new(""));
    let run = run_observed(s, base, opts, &mut progress)
        .map_err(|e| place_in(&scenario.display().to_string(), &text, e))?;
    let report = asic_report::write_run(&run.record, out, &asic_report::ReportOptions::default())?;
    out!("{}", report.text)?;
    if lockstep {
        outln!(
            "\nlockstep: {} chip cycles visited, all chips together; the per-cycle reference \
             disagreed with the event engine at {} of them{}",
            run.lockstep_cycles,
            run.lockstep_violations.0,
            run.lockstep_violations
                .1
                .as_ref()
                .map_or(String::new(), |v| format!(" (first: {v})"))
        )?;
    }
    // The trace's: trace.jsonl, and trace.txt unless its text went to standard output.
    let traces = trace.map_or(0, |t| if t.text_to_stdout { 1 } else { 2 });
    outln!(
        "\nwrote {} files to {}",
        report.files.len() + traces,
        out.display()
    )?;
    Ok(())
}

fn sweep(spec: &Path, out: &Path, merge: bool) -> Result<(), String> {
    let swept = if merge {
        asic::sweep_run::merge_dir(spec, out)?
    } else {
        asic::sweep_run::run(spec, out)?
    };
    let table = &swept.table;
    out!("{}", table.to_text())?;
    let csv = out.join("sweep.csv");
    table.write_csv_file(&csv)?;
    outln!("\nwrote {}", csv.display())?;
    for file in &swept.figures {
        outln!("wrote {}", file.display())?;
    }
    // A sweep some of whose points failed has not produced what was asked (the table says
    // which and why): say so in the exit status too.
    match table.failures() {
        0 => Ok(()),
        n => Err(format!("{n} of {} points failed", table.rows.len())),
    }
}

fn sweep_jobs(spec: &Path, out: &Path) -> Result<(), String> {
    let exe = std::env::current_exe().map_err(|e| format!("the asic binary's path: {e}"))?;
    let (jobs, slurm) = asic::sweep_run::write_jobs(spec, out, &exe)?;
    outln!(
        "wrote {} (GNU parallel: parallel < {}) and {} (Slurm: sbatch {}); then: asic sweep {} \
         --out {} --merge",
        jobs.display(),
        jobs.display(),
        slurm.display(),
        slurm.display(),
        spec.display(),
        out.display()
    )
}

fn tm_experiment(name: Option<&str>, csv: bool) -> Result<(), String> {
    let Some(name) = name else {
        outln!("experiments: {}", tm::experiments::NAMES.join(", "))?;
        return Ok(());
    };
    let result = tm::experiments::run(name).ok_or_else(|| {
        format!(
            "no experiment `{name}` (known: {})",
            tm::experiments::NAMES.join(", ")
        )
    })?;
    let table = asic::tm_experiment::table(name, &result);
    if csv {
        out!("{}", table.to_csv())?;
    } else {
        out!("{table}")?;
    }
    Ok(())
}

fn bench(
    workloads: &[String],
    quick: bool,
    scale: u64,
    lockstep: bool,
    threads: usize,
) -> Result<(), String> {
    let sizes = if quick {
        asic::perf::Sizes::QUICK
    } else {
        asic::perf::Sizes::FULL
    };
    let figs = asic::perf::run(sizes.times(scale.max(1)), workloads, lockstep, threads)?;
    out!("{}", asic::perf::render(&figs))?;
    Ok(())
}

/// The cores this process may use (1 if the system will not say).
fn every_core() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

fn main() -> ExitCode {
    asic::perf::CountingAlloc::installed();
    let cli = Cli::parse();
    let result = match cli.command {
        None => demo(),
        Some(Command::Run {
            scenario,
            out,
            lockstep,
            trace,
        }) => trace
            .options(Vec::new())
            .and_then(|trace| {
                let sf = ScenarioFile::load(&scenario).map_err(|e| e.to_string())?;
                run_traced(&sf, out.as_deref(), lockstep, trace.as_ref())
            })
            .and_then(|(report, dir)| {
                out!("{}", report.render_text())?;
                outln!("\nresults in {}", dir.display())
            }),
        Some(Command::Chips { action }) => chips(action),
        Some(Command::Net {
            scenario,
            out,
            lockstep,
            threads,
            trace_chip,
            trace,
        }) => {
            let threads = threads.map_or_else(every_core, usize::from);
            trace
                .options(trace_chip)
                .and_then(|trace| net(&scenario, &out, lockstep, threads, trace.as_ref()))
        }
        Some(Command::Bench {
            workloads,
            quick,
            scale,
            lockstep,
            threads,
        }) => bench(&workloads, quick, scale, lockstep, threads.into()),
        Some(Command::Sweep {
            spec,
            out,
            jobs,
            point,
            merge,
        }) => match (jobs, point) {
            (true, _) => sweep_jobs(&spec, &out),
            (false, Some(k)) => asic::sweep_run::run_one(&spec, &out, k),
            (false, None) => sweep(&spec, &out, merge),
        },
        Some(Command::TmExperiment { name, csv }) => tm_experiment(name.as_deref(), csv),
        Some(Command::Compile {
            program,
            chip,
            emit,
            json,
            html,
        }) => compile(&program, &chip, emit, json, html),
        Some(Command::Stf { paths }) => {
            return match stf(&paths) {
                Ok(true) => ExitCode::SUCCESS,
                Ok(false) => ExitCode::FAILURE,
                Err(e) => {
                    eprintln!("error: {e}");
                    ExitCode::from(2)
                }
            }
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
