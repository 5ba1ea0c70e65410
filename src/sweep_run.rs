//! `asic sweep`: one deterministic network simulation per grid point, in parallel, merged
//! into one table.
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
use asic_net::records::RunRecord;
use asic_report::metrics::Summary;
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

/// The headline numbers of one run, as a table row.
fn row_of(record: &RunRecord, s: &Summary) -> Row {
    let f = |x: Option<f64>| x.map_or("-".into(), |v| format!("{v:.3}"));
    let drops: u64 = record.drops.iter().map(|d| d.packets).sum();
    vec![
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
    ]
}

/// Run every point of the sweep at `spec_path`; each point's outputs (as `asic net` writes
/// them) go under `out/<point>/`.
pub fn run(spec_path: &Path, out: &Path) -> Result<SweepTable, String> {
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
    let progress = SweepProgress::new(points.len());
    let run_point = |p: &Point| -> Result<Row, String> {
        let text = substitute(&base, p, &base_name)?;
        let scenario = located::parse_ron(&text, &base_name)
            .map_err(|e| format!("{e} (at sweep point {})", p.label()))?;
        let dir = out.join(p.dir_name());
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let label = format!("point {}/{} {}", p.index + 1, points.len(), p.label());
        let opts = RunOptions {
            pcap_dir: Some(&dir),
            ..RunOptions::default()
        };
        let run = run_observed(scenario, &base_dir, opts, &mut progress.point(&label))?;
        let report = write_run(&run.record, &dir, &ReportOptions::default())?;
        Ok(row_of(&run.record, &report.summary))
    };
    let results = run_sweep(&points, default_threads(), |p| {
        let row = run_point(p);
        progress.point_done();
        row
    });
    progress.finish();
    Ok(merge(&points, &results))
}
