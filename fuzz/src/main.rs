//! `asic-fuzz`: fuzz the model's inputs (see the crate doc and fuzz/README.md).
//!
//! ```text
//! asic-fuzz all|KIND [--execs N] [--from I] [--seed S] [--jobs J] [--hang-secs T]
//!                    [--mem-mib M] [--findings DIR] [--no-minimize]
//! asic-fuzz show KIND --index I [--seed S]          the input, regenerated, on standard output
//! asic-fuzz exec KIND FILE [--mem-mib M] [--backtrace]   run one input file
//! asic-fuzz worker KIND --from I --count N [--seed S] [--mem-mib M]   (the parent runs this)
//! ```

use asic_fuzz::alloc::Counting;
use asic_fuzz::campaign::{campaign, render, Failure, Options};
use asic_fuzz::mutate::generate;
use asic_fuzz::worker::{work, Source};
use asic_fuzz::{Kind, FATAL_EXIT};
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

#[global_allocator]
static ALLOC: Counting = Counting;

/// The command line after the command word: positional arguments and `--name value` flags
/// (`--name` alone for the switches).
struct Args {
    positional: Vec<String>,
    flags: Vec<(String, Option<String>)>,
}

const SWITCHES: &[&str] = &["--no-minimize", "--backtrace"];

impl Args {
    fn parse(args: impl Iterator<Item = String>) -> Result<Args, String> {
        let mut a = Args {
            positional: Vec::new(),
            flags: Vec::new(),
        };
        let mut it = args;
        while let Some(arg) = it.next() {
            if SWITCHES.contains(&arg.as_str()) {
                a.flags.push((arg, None));
            } else if arg.starts_with("--") {
                let v = it.next().ok_or_else(|| format!("{arg} needs a value"))?;
                a.flags.push((arg, Some(v)));
            } else {
                a.positional.push(arg);
            }
        }
        Ok(a)
    }

    fn has(&self, name: &str) -> bool {
        self.flags.iter().any(|(n, _)| n == name)
    }

    fn num(&self, name: &str, default: u64) -> Result<u64, String> {
        match self.flags.iter().find(|(n, _)| n == name) {
            Some((_, Some(v))) => v
                .replace('_', "")
                .parse()
                .map_err(|_| format!("{name}: `{v}` is not a whole number")),
            _ => Ok(default),
        }
    }

    fn text(&self, name: &str) -> Option<&str> {
        self.flags
            .iter()
            .find(|(n, _)| n == name)
            .and_then(|(_, v)| v.as_deref())
    }

    /// Refuse flags the command does not take.
    fn only(&self, allowed: &[&str]) -> Result<(), String> {
        match self
            .flags
            .iter()
            .find(|(n, _)| !allowed.contains(&n.as_str()))
        {
            Some((n, _)) => Err(format!(
                "unknown option {n} (this command takes {})",
                allowed.join(", ")
            )),
            None => Ok(()),
        }
    }
}

/// Default heap cap of a worker: far above any valid input's (the heaviest seen is a few tens
/// of MiB), far below the machine's memory with two workers running.
const DEFAULT_MEM_MIB: u64 = 2048;

fn main() {
    let mut args = std::env::args().skip(1);
    let command = args.next().unwrap_or_default();
    let result = Args::parse(args).and_then(|a| match command.as_str() {
        "worker" => {
            a.only(&["--seed", "--from", "--count", "--mem-mib"])?;
            let kind = kind(&a, 0)?;
            let source = Source::Generated {
                seed: a.num("--seed", 1)?,
                from: a.num("--from", 0)?,
                count: a.num("--count", 1)?,
            };
            worker(kind, source, &a, false)
        }
        "exec" => {
            a.only(&["--mem-mib", "--backtrace"])?;
            let kind = kind(&a, 0)?;
            let file = a.positional.get(1).ok_or("exec KIND FILE: which file?")?;
            worker(kind, Source::File(file.into()), &a, a.has("--backtrace"))
        }
        "show" => {
            a.only(&["--seed", "--index"])?;
            let input = generate(kind(&a, 0)?, a.num("--seed", 1)?, a.num("--index", 0)?);
            std::io::stdout()
                .write_all(&input)
                .map_err(|e| format!("standard output: {e}"))
        }
        "" | "help" | "--help" | "-h" => {
            println!(
                "{}",
                include_str!("main.rs")
                    .lines()
                    .skip(2)
                    .take(7)
                    .map(|l| l.trim_start_matches("//! "))
                    .collect::<Vec<_>>()
                    .join("\n")
            );
            Ok(())
        }
        what => fuzz(what, &a),
    });
    if let Err(e) = result {
        eprintln!("asic-fuzz: {e}");
        std::process::exit(FATAL_EXIT);
    }
}

fn kind(a: &Args, i: usize) -> Result<Kind, String> {
    Kind::parse(a.positional.get(i).ok_or("which input kind?")?)
}

fn worker(kind: Kind, source: Source, a: &Args, backtrace: bool) -> Result<(), String> {
    let cap = a.num("--mem-mib", DEFAULT_MEM_MIB)? << 20;
    work(kind, source, cap as usize, backtrace)
}

/// `all` or one kind: the campaigns, `--jobs` at a time, then their table. Fails (exit code
/// 1) if any input failed.
fn fuzz(what: &str, a: &Args) -> Result<(), String> {
    a.only(&[
        "--execs",
        "--from",
        "--seed",
        "--jobs",
        "--hang-secs",
        "--mem-mib",
        "--findings",
        "--no-minimize",
    ])?;
    let kinds: Vec<Kind> = match what {
        "all" => Kind::ALL.to_vec(),
        k => vec![Kind::parse(k)?],
    };
    let opts = Options {
        exe: std::env::current_exe().map_err(|e| format!("this program's path: {e}"))?,
        seed: a.num("--seed", 1)?,
        from: a.num("--from", 0)?,
        execs: a.num("--execs", 1000)?,
        hang: Duration::from_secs(a.num("--hang-secs", 10)?),
        cap_bytes: (a.num("--mem-mib", DEFAULT_MEM_MIB)? << 20) as usize,
        findings: Some(a.text("--findings").map_or_else(
            || PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/findings")),
            PathBuf::from,
        )),
        minimize: !a.has("--no-minimize"),
        progress: Some(Duration::from_secs(30)),
    };
    let jobs = a.num("--jobs", 1)?.max(1) as usize;
    let next = AtomicUsize::new(0);
    let done = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..jobs.min(kinds.len()) {
            scope.spawn(|| {
                while let Some(&k) = kinds.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let r = campaign(k, &opts);
                    if let Ok(s) = &r {
                        eprintln!("{k}: done: {} inputs in {:.0?}", s.execs, s.wall);
                    }
                    done.lock().expect("no panic holding it").push((k, r));
                }
            });
        }
    });
    let mut done = done.into_inner().expect("no panic holding it");
    done.sort_by_key(|(k, _)| Kind::ALL.iter().position(|x| x == k));
    let summaries = done
        .into_iter()
        .map(|(k, r)| r.map_err(|e| format!("{k}: {e}")))
        .collect::<Result<Vec<_>, _>>()?;
    print!("{}", render(&summaries));
    let failed: u64 = summaries
        .iter()
        .flat_map(|s| Failure::ALL.map(|f| s.count(f)))
        .sum();
    if failed > 0 {
        std::process::exit(1);
    }
    Ok(())
}
