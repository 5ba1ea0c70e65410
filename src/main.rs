//! `asic`: compile P4-like programs, inspect chip profiles, and run scenarios on the
//! cycle-accurate chip model. With no arguments it runs the embedded L3-router demo.

use asic::run::{compile_file, run_scenario};
use asic::scenario::ScenarioFile;
use asic_model::profile;
use clap::{Parser, Subcommand, ValueEnum};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

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
    },
    /// List the built-in chip profiles, or show one.
    Chips {
        #[command(subcommand)]
        action: Option<ChipsAction>,
    },
    /// Compile a program for a chip and print where everything went.
    Compile {
        /// The program (`.p4`).
        program: PathBuf,
        /// Chip profile: a built-in name or a RON file.
        #[arg(long, default_value = "tofino2-like")]
        chip: String,
        /// Print the compiled program instead of the resource report.
        #[arg(long, value_enum)]
        emit: Option<Emit>,
        /// Also write the resource report as JSON to this file.
        #[arg(long)]
        json: Option<PathBuf>,
    },
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
}

fn demo() -> Result<(), String> {
    let dir = Path::new("out/demo");
    asic::demo::extract(dir)?;
    let sf = ScenarioFile::load(&dir.join("scenario.ron")).map_err(|e| e.to_string())?;
    println!(
        "asic: no command given, so running the embedded demo: the L3 router of programs/l3router/\n\
         on the `{}` chip (files extracted to {}; `asic --help` lists the commands).\n",
        sf.scenario.chip,
        dir.display()
    );
    let (report, out) = run_scenario(&sf, Some(&dir.join("results")))?;
    print!("{}", report.render_text());
    println!(
        "\nwrote one pcap per egress port and summary.{{txt,json}} to {}",
        out.display()
    );
    Ok(())
}

fn chips(action: Option<ChipsAction>) -> Result<(), String> {
    match action {
        None => {
            println!(
                "{:<14} {:>5} {:>7} {:>7} {:>10}  description",
                "name", "pipes", "ports", "stages", "buffer"
            );
            for name in profile::builtin_names() {
                let p = profile::load(name).map_err(|e| e.to_string())?;
                println!(
                    "{:<14} {:>5} {:>7} {:>7} {:>8.1}MB  {}",
                    name,
                    p.pipes,
                    p.ports_total(),
                    p.pipe.stages,
                    p.tm.buffer_bytes() as f64 / 1e6,
                    p.description
                );
            }
            Ok(())
        }
        Some(ChipsAction::Show { name }) => {
            match profile::builtin_source(&name) {
                Some(src) => print!("{src}"),
                None => print!(
                    "{}",
                    profile::load(&name).map_err(|e| e.to_string())?.to_ron()
                ),
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
) -> Result<(), String> {
    let chip = profile::load(chip).map_err(|e| e.to_string())?;
    let compiled = compile_file(program, &chip, true)?;
    match emit {
        Some(Emit::Ir) => {
            let cfg = ron::ser::PrettyConfig::default();
            println!(
                "{}",
                ron::ser::to_string_pretty(&compiled.program, cfg).map_err(|e| e.to_string())?
            );
        }
        None => print!("{}", compiled.report.render_text()),
    }
    if let Some(path) = json {
        let text = serde_json::to_string_pretty(&compiled.report).map_err(|e| e.to_string())?;
        std::fs::write(&path, text)
            .map_err(|e| format!("{}: cannot write: {e}", path.display()))?;
    }
    Ok(())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        None => demo(),
        Some(Command::Run { scenario, out }) => ScenarioFile::load(&scenario)
            .map_err(|e| e.to_string())
            .and_then(|sf| run_scenario(&sf, out.as_deref()))
            .map(|(report, dir)| {
                print!("{}", report.render_text());
                println!("\nresults in {}", dir.display());
            }),
        Some(Command::Chips { action }) => chips(action),
        Some(Command::Compile {
            program,
            chip,
            emit,
            json,
        }) => compile(&program, &chip, emit, json),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
