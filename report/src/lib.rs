//! Results people can look at: everything computed from a network run's
//! [`RunRecord`] (the runtime's API boundary; nothing else of the runtime is read), and the
//! generic pieces around runs (a progress bar observing a run, parameter sweeps).
//!
//! The network runtime fills a `RunRecord`; this module only reads it. One call,
//! [`write_run`], produces every output of a run:
//!
//! - [`metrics`]: FCT and slowdown by flow size (avg/p50/p95/p99/max via `hdrhistogram`),
//!   the short-flow p99 and long-flow mean slowdowns BFC and Pyrrha report, time-weighted
//!   percentiles of queue depth, buffer and pipeline occupancy and every other series,
//!   windowed throughput from byte counters, pause counts and paused time per
//!   (node, port, kind, class), drops and trims by reason, packet conservation.
//! - [`tables`]: the same as terminal text, CSV files (`csv`) and `summary.json`
//!   (`serde_json`).
//! - [`vcd`]: a VCD waveform (`vcd` crate) of the series and pause states, 1 ps timescale,
//!   one scope per node, for GTKWave.
//! - [`plots`]: SVG and PNG plots (`plotters`, text drawn with an embedded DejaVu font
//!   through `ab_glyph`, so no system font libraries are needed): slowdown by size, CDFs of
//!   slowdown and flow size, queue depth, buffer occupancy and throughput over time (the
//!   most active series of each).
//! - [`progress`]: a simulated-time progress bar (`indicatif`), an `asic_net::Observer` of
//!   the run, shown only on a terminal and only for runs that take more than two seconds;
//!   it says when the run is draining past the traffic's end. A sweep's bars: points done,
//!   and one per running point, named after it.
//! - [`sweep`]: expansion of a RON parameter grid, a parallel runner with deterministic
//!   result order, and the merged table.
//!
//! Determinism: every output is a function of the record alone. Lists are sorted by their
//! keys, no date or host information is written, and the same record gives byte-identical
//! CSV, JSON and VCD files (plots too, for a given `plotters` version).

pub mod metrics;
pub mod plots;
pub mod progress;
pub mod record_ext;
pub mod sweep;
pub mod tables;
pub mod vcd;

use asic_net::records::RunRecord;
pub use record_ext::{PauseEventExt, SeriesExt};
use std::path::{Path, PathBuf};

/// What [`write_run`] writes.
#[derive(Clone, Debug, PartialEq)]
pub struct ReportOptions {
    /// Bucket edges, short/long thresholds, throughput window.
    pub metrics: metrics::MetricsConfig,
    /// Plot formats; both off: no plots.
    pub plots: plots::PlotFormats,
    /// Write `waveform.vcd`.
    pub vcd: bool,
    /// Which series go into the waveform.
    pub vcd_select: vcd::VcdSelect,
}

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions {
            metrics: metrics::MetricsConfig::default(),
            plots: plots::PlotFormats::default(),
            vcd: true,
            vcd_select: vcd::VcdSelect::default(),
        }
    }
}

/// What [`write_run`] produced.
#[derive(Clone, Debug)]
pub struct RunReport {
    /// Every statistic (also in `summary.json`).
    pub summary: metrics::Summary,
    /// The summary as terminal text (print it if you like).
    pub text: String,
    /// Every file written, tables first, then the waveform, then plots.
    pub files: Vec<PathBuf>,
}

/// Compute every statistic of `record` and write all outputs into `dir` (created if
/// missing): the CSV and JSON tables of [`tables::write_run_tables`], `waveform.vcd`, and the
/// plots of [`plots::write_run_plots`] under `dir/plots/`.
pub fn write_run(
    record: &RunRecord,
    dir: &Path,
    opts: &ReportOptions,
) -> Result<RunReport, String> {
    let summary = metrics::summarize(record, &opts.metrics);
    let throughput = metrics::throughput_series(record, &opts.metrics);
    let mut files = tables::write_run_tables(record, &summary, &throughput, dir)?;
    if opts.vcd {
        let p = dir.join("waveform.vcd");
        vcd::write_vcd_file(&p, record, &opts.vcd_select)?;
        files.push(p);
    }
    if opts.plots.svg || opts.plots.png {
        files.extend(plots::write_run_plots(
            record,
            &summary,
            &throughput,
            &dir.join("plots"),
            opts.plots,
        )?);
    }
    let text = tables::render_summary(&summary);
    Ok(RunReport {
        summary,
        text,
        files,
    })
}
