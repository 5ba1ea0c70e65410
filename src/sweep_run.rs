//! `asic sweep`: one deterministic network simulation per grid point, in parallel, merged
//! into one table; or the points as jobs for an engine that runs commands (GNU parallel, a
//! Slurm array: [`write_jobs`], [`run_one`]), merged afterwards from the rows each point
//! wrote ([`merge_dir`]).
//!
//! A sweep spec names a base network scenario and a grid:
//! `(base: "incast.ron", grid: { "load": [0.3, 0.6], "seed": [1, 2] })`. The base file marks
//! what varies with placeholders (`load: $load`, `seed: $seed`); each point substitutes its
//! values as text and parses the result, so any field can vary (numbers, strings, enum
//! variants) and a key the base does not use is an error rather than a silent no-op.
//!
//! Each point's directory under the output holds what `asic net` writes for a run: its pcaps,
//! CSV and JSON tables, waveform and plots, so any point can be looked at on its own.

use asic_deploy::run::{run_observed, RunOptions};
use asic_report::metrics::{sample_quantile, Summary};
use asic_report::progress::SweepProgress;
use asic_report::sweep::{
    default_threads, merge, run_sweep, ParamValue, Point, Row, SweepSpec, SweepTable,
};
use asic_report::{write_run, ReportOptions};
use std::path::Path;

/// The base text with a point's placeholders replaced; errors name an unused key.
pub fn substitute(base: &str, point: &Point, base_name: &str) -> Result<String, String> {
    let mut text = base.to_string();
    // Longest keys first, so `$load` does not eat the start of `$load_max`.
    let mut keys: Vec<(&String, &ParamValue)> = point.params.iter().collect();
    keys.sort_by_key(|(k, _)| std::cmp::Reverse(k.len()));
    for (k, v) in keys {
        let placeholder = format!("${k}");
        if !text.contains(&placeholder) {
            return Err(format!(
                "{base_name}: grid key \"{k}\" has no placeholder `{placeholder}`"
            ));
        }
        let value = match v {
            ParamValue::Str(s)
                if !s.starts_with('"') && s.chars().next().is_some_and(char::is_uppercase) =>
            {
                s.clone()
            }
            ParamValue::Str(s) => format!("{s:?}"),
            ParamValue::Int(i) => i.to_string(),
            ParamValue::Float(f) => format!("{f:?}"),
            ParamValue::Bool(b) => b.to_string(),
        };
        text = text.replace(&placeholder, &value);
    }
    Ok(text)
}

/// Flows up to this size are short in the `fct_p95_us_le_100KB` column (the web search's
/// short flows, below the query answers of the FB paper's bursts).
const SHORT_FLOW_BYTES: u64 = 100_000;

/// The headline numbers of one run, as a table row: flows, slowdowns, drops; the p95 FCT of
/// the flows of at most 100 KB; the chips' mean transmit rate over all their ports; with
/// queries, theirs too (how many, how many and what share without a drop, their p99
/// completion time) and the largest p99 of a chip's buffer occupancy (sampled runs), in
/// cells and as a share of that chip's buffer.
fn row_of(run: &asic_net::NetRun, s: &Summary) -> Row {
    let record = &run.record;
    let f = |x: Option<f64>| x.map_or("-".into(), |v| format!("{v:.3}"));
    let drops: u64 = record.drops.iter().map(|d| d.packets).sum();
    let short_fct_us: Vec<f64> = record
        .flows
        .iter()
        .filter(|fl| fl.size_bytes <= SHORT_FLOW_BYTES)
        .filter_map(|fl| fl.fct_ps())
        .map(|ps| ps as f64 / 1e6)
        .collect();
    let short_p95 = sample_quantile(&short_fct_us, 0.95);
    let tx_gbps: f64 = s
        .throughput
        .iter()
        .filter(|x| x.name.contains(".port") && x.name.contains(".tx_bytes"))
        .filter_map(|x| x.mean)
        .sum();
    let mut row = vec![
        ("flows".into(), s.flows.flows.to_string()),
        ("completed".into(), s.flows.completed.to_string()),
        ("p99_slowdown".into(), f(s.flows.all.slowdown.p99)),
        (
            "short_p99_slowdown".into(),
            f(s.flows.short_flows_p99_slowdown),
        ),
        (
            "long_mean_slowdown".into(),
            f(s.flows.long_flows_mean_slowdown),
        ),
        ("drops".into(), drops.to_string()),
        (
            "retransmissions".into(),
            s.flows.retransmissions.to_string(),
        ),
        ("fct_p95_us_le_100KB".into(), f(short_p95)),
    ];
    if !s.throughput.is_empty() {
        row.push(("chip_tx_gbps".into(), f(Some(tx_gbps))));
    }
    if let Some(q) = &s.queries {
        row.push(("queries".into(), q.queries.to_string()));
        row.push(("queries_without_drop".into(), q.without_drop.to_string()));
        let pct = (q.queries > 0).then(|| 100.0 * q.without_drop as f64 / q.queries as f64);
        row.push(("queries_without_drop_pct".into(), f(pct)));
        row.push(("query_p99_us".into(), f(q.qct_us_p99)));
        // The fullest chip at its p99, in cells and in its buffer's share.
        let buffer_p99 = s
            .series
            .iter()
            .filter_map(|x| {
                let node = x.name.strip_suffix(".buffer_cells")?;
                let chip = run.chip(node)?;
                Some((x.p99?, chip.profile().tm.cells as f64))
            })
            .reduce(|a, b| if b.0 > a.0 { b } else { a });
        row.push(("buffer_p99_cells".into(), f(buffer_p99.map(|b| b.0))));
        row.push((
            "buffer_p99_pct".into(),
            f(buffer_p99.map(|(c, total)| 100.0 * c / total)),
        ));
    }
    row
}

/// A sweep's spec, its base scenario and its points, every substitution checked.
struct Sweep {
    spec: SweepSpec,
    base: String,
    base_name: String,
    base_dir: std::path::PathBuf,
    points: Vec<Point>,
}

impl Sweep {
    fn load(spec_path: &Path) -> Result<Sweep, String> {
        let spec = SweepSpec::load(spec_path)?;
        let base_path = spec.base_path(spec_path);
        let base = std::fs::read_to_string(&base_path)
            .map_err(|e| format!("{}: cannot read: {e}", base_path.display()))?;
        let base_name = base_path.display().to_string();
        let base_dir = base_path.parent().unwrap_or(Path::new("")).to_path_buf();
        let points = spec.points();
        // Check every point's substitution before spending time on any simulation.
        for p in &points {
            substitute(&base, p, &base_name)?;
        }
        Ok(Sweep {
            spec,
            base,
            base_name,
            base_dir,
            points,
        })
    }

    /// Run point `p`; its outputs (as `asic net` writes them) and its row (`row.json`: the
    /// row, or why it failed) go under `out/<point>/`.
    fn run_point(
        &self,
        p: &Point,
        out: &Path,
        observer: &mut dyn asic_net::network::Observer,
    ) -> Result<Row, String> {
        let dir = out.join(p.dir_name());
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let row = (|| {
            let text = substitute(&self.base, p, &self.base_name)?;
            let scenario = located::parse_ron(&text, &self.base_name)
                .map_err(|e| format!("{e} (at sweep point {})", p.label()))?;
            let opts = RunOptions {
                pcap_dir: Some(&dir),
                ..RunOptions::default()
            };
            let run = run_observed(scenario, &self.base_dir, opts, observer)?;
            let report = write_run(&run.record, &dir, &ReportOptions::default())?;
            Ok(row_of(&run, &report.summary))
        })();
        let file = dir.join(ROW_FILE);
        let json = serde_json::to_string_pretty(&row).map_err(|e| e.to_string())?;
        std::fs::write(&file, json).map_err(|e| format!("{}: {e}", file.display()))?;
        row
    }
}

/// Each point's row, written beside its outputs, for [`merge_dir`].
pub const ROW_FILE: &str = "row.json";

/// A sweep's table, and the figures its spec's `plots` drew from it (`out/plots/`).
pub struct Swept {
    /// One row per point.
    pub table: SweepTable,
    /// The figures' files, each plot's SVG then PNG.
    pub figures: Vec<std::path::PathBuf>,
}

impl Sweep {
    /// The table of `results` (one per point) and its figures, drawn under `out`.
    fn finish(&self, results: &[Result<Row, String>], out: &Path) -> Result<Swept, String> {
        let table = merge(&self.points, results);
        let figures = asic_report::sweep::write_plots(&table, &self.spec, out)?;
        Ok(Swept { table, figures })
    }
}

/// Run every point of the sweep at `spec_path` on this machine's cores; each point's
/// outputs (as `asic net` writes them) and its row go under `out/<point>/`, the figures
/// under `out/plots/`.
pub fn run(spec_path: &Path, out: &Path) -> Result<Swept, String> {
    let sweep = Sweep::load(spec_path)?;
    let n = sweep.points.len();
    let progress = SweepProgress::new(n);
    let results = run_sweep(&sweep.points, default_threads(), |p| {
        let label = format!("point {}/{n} {}", p.index + 1, p.label());
        let row = sweep.run_point(p, out, &mut progress.point(&label));
        progress.point_done();
        row
    });
    progress.finish();
    sweep.finish(&results, out)
}

/// Run point `index` (from 0) of the sweep alone, as a job of a job list does; its outputs
/// and row go under `out/<point>/`. A point that fails writes its error as its row and the
/// call fails too, so the engine sees the job fail.
pub fn run_one(spec_path: &Path, out: &Path, index: usize) -> Result<(), String> {
    let sweep = Sweep::load(spec_path)?;
    let n = sweep.points.len();
    let p = sweep.points.get(index).ok_or_else(|| {
        format!(
            "{}: --point {index}: the sweep has {n} points (0 to {})",
            spec_path.display(),
            n.saturating_sub(1)
        )
    })?;
    sweep.run_point(p, out, &mut ()).map(|_| ())
}

/// The table of a sweep whose points ran as separate jobs: each point's `row.json` under
/// `out`, merged as a local sweep merges them (a point without one is a failure that says
/// so), and its figures.
pub fn merge_dir(spec_path: &Path, out: &Path) -> Result<Swept, String> {
    let sweep = Sweep::load(spec_path)?;
    let results: Vec<Result<Row, String>> = sweep
        .points
        .iter()
        .map(|p| {
            let file = out.join(p.dir_name()).join(ROW_FILE);
            let text = std::fs::read_to_string(&file)
                .map_err(|_| format!("not run: {} is missing", file.display()))?;
            serde_json::from_str::<Result<Row, String>>(&text)
                .map_err(|e| format!("{}: {e}", file.display()))?
        })
        .collect();
    sweep.finish(&results, out)
}

/// The sweep's points as jobs for an engine that runs commands: `jobs.txt`, one `asic sweep
/// … --point K` command per line (GNU parallel: `parallel < jobs.txt`), and `slurm.sh`, a
/// Slurm array job with one task per point (`sbatch slurm.sh`); then `asic sweep … --merge`
/// makes the table. `exe` is the `asic` binary the jobs call. Returns the two files' paths.
pub fn write_jobs(
    spec_path: &Path,
    out: &Path,
    exe: &Path,
) -> Result<(std::path::PathBuf, std::path::PathBuf), String> {
    let sweep = Sweep::load(spec_path)?;
    let n = sweep.points.len();
    std::fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
    // Absolute paths: a cluster's job may start in another directory.
    let absolute = |p: &Path| {
        p.canonicalize()
            .map_err(|e| format!("{}: {e}", p.display()))
    };
    let (spec_path, out) = (absolute(spec_path)?, absolute(out)?);
    let (spec_path, out) = (spec_path.as_path(), out.as_path());
    let quote = |p: &Path| format!("'{}'", p.display().to_string().replace('\'', "'\\''"));
    let (exe, spec, dir) = (quote(exe), quote(spec_path), quote(out));
    let jobs: String = (0..n)
        .map(|k| format!("{exe} sweep {spec} --out {dir} --point {k}\n"))
        .collect();
    let slurm = format!(
        "#!/bin/sh\n\
         # One task per point of the sweep {spec}; then: {exe} sweep {spec} --out {dir} --merge\n\
         #SBATCH --job-name=asic-sweep\n\
         #SBATCH --array=0-{last}\n\
         #SBATCH --cpus-per-task=1\n\
         #SBATCH --output={out_log}/slurm-%A_%a.out\n\
         exec {exe} sweep {spec} --out {dir} --point \"$SLURM_ARRAY_TASK_ID\"\n",
        last = n.saturating_sub(1),
        out_log = out.display(),
    );
    let (jobs_file, slurm_file) = (out.join("jobs.txt"), out.join("slurm.sh"));
    std::fs::write(&jobs_file, jobs).map_err(|e| format!("{}: {e}", jobs_file.display()))?;
    std::fs::write(&slurm_file, slurm).map_err(|e| format!("{}: {e}", slurm_file.display()))?;
    Ok((jobs_file, slurm_file))
}
