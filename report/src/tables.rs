//! Tables of a run: text for the terminal, CSV (`csv` crate: correct quoting of names with
//! commas or quotes, one well-tested writer) and JSON (`serde_json`) files.
//!
//! Files written by [`write_run_tables`] into the run's output directory:
//!
//! | file | one row per | columns |
//! |---|---|---|
//! | `flows.csv` | flow, by id | id, src, dst, size_bytes, start_ps, end_ps, fct_ps, ideal_fct_ps, slowdown, packets_sent, retransmissions, packets_dropped |
//! | `queries.csv` | query, by id (written when the traffic has queries) | id, requester, start_ps, size_bytes, responders, end_ps, qct_ps, packets_dropped, retransmissions |
//! | `fct_by_size.csv` | size bucket, then `all` | bucket, min_exclusive_bytes, max_inclusive_bytes, flows, completed, incomplete, slowdown_{mean,p50,p95,p99,max}, fct_us_{mean,p50,p95,p99,max} |
//! | `series.csv` | point (long format), by series name | series, unit, time_ps, value |
//! | `series_stats.csv` | series, by name (throughput series after) | series, node, unit, points, mean, p50, p95, p99, max, last (time-weighted) |
//! | `throughput.csv` | window of a byte counter (long format) | series, unit, time_ps, value |
//! | `pauses.csv` | (node, port, kind, class) | node, port, kind, class, pauses, pause_frames, paused_ps, paused_fraction, longest_pause_ps, paused_at_end |
//! | `pause_events.csv` | pause event, by time | at_ps, node, port, kind, class, paused |
//! | `drops.csv` | (node, reason), then per-reason totals with node `*` | node, reason, packets, trim |
//! | `hosts.csv` | host, by name | host, packets_sent, packets_received |
//! | `summary.json` | — | the whole [`Summary`] (with every chip's control-plane reads and state at the end) |
//! | `state.txt` | chip | its control-plane reads and its registers, counters, meters and tables at the end, as people read them (`pipelines::readout::text`); written when the record has chips |
//!
//! Missing values (a bucket without completed flows, a flow that did not complete) are empty
//! cells in CSV and `null` in JSON. Statistics are printed with 3 decimals; raw series values
//! and times as they are (shortest exact form).

use crate::metrics::{BucketStats, DropRow, PauseStats, SeriesStats, Summary};
use crate::record_ext::PauseEventExt;
use asic_net::records::{
    ChipRecord, FlowRecord, HolReport, HostTotals, PauseEvent, RunRecord, Series,
};
use std::fmt::Write as _;
use std::io::Write;
use std::path::{Path, PathBuf};

fn opt(v: Option<f64>) -> String {
    v.map_or(String::new(), |v| format!("{v:.3}"))
}

fn csv_err(e: csv::Error) -> String {
    format!("cannot write CSV: {e}")
}

fn writer<W: Write>(w: W, header: &[&str]) -> Result<csv::Writer<W>, String> {
    let mut wtr = csv::Writer::from_writer(w);
    wtr.write_record(header).map_err(csv_err)?;
    Ok(wtr)
}

/// `flows.csv`: one row per flow of `record`, sorted by id.
pub fn write_flows_csv<W: Write>(w: W, record: &RunRecord) -> Result<(), String> {
    let flows = &record.flows;
    let mut wtr = writer(
        w,
        &[
            "id",
            "src",
            "dst",
            "size_bytes",
            "start_ps",
            "end_ps",
            "fct_ps",
            "ideal_fct_ps",
            "slowdown",
            "packets_sent",
            "retransmissions",
            "packets_dropped",
        ],
    )?;
    let mut sorted: Vec<&FlowRecord> = flows.iter().collect();
    sorted.sort_by_key(|f| f.id);
    for f in sorted {
        wtr.write_record([
            f.id.to_string(),
            record.host_name(f.src).to_string(),
            record.host_name(f.dst).to_string(),
            f.size_bytes.to_string(),
            f.start_ps.to_string(),
            f.end_ps.map_or(String::new(), |e| e.to_string()),
            f.fct_ps().map_or(String::new(), |e| e.to_string()),
            f.ideal_fct_ps.to_string(),
            f.slowdown().map_or(String::new(), |s| format!("{s:.6}")),
            f.packets_sent.to_string(),
            f.retransmissions.to_string(),
            f.packets_dropped.to_string(),
        ])
        .map_err(csv_err)?;
    }
    wtr.flush().map_err(|e| e.to_string())
}

/// `queries.csv`: one row per query of `record`, by id.
pub fn write_queries_csv<W: Write>(w: W, record: &RunRecord) -> Result<(), String> {
    let mut wtr = writer(
        w,
        &[
            "id",
            "requester",
            "start_ps",
            "size_bytes",
            "responders",
            "end_ps",
            "qct_ps",
            "packets_dropped",
            "retransmissions",
        ],
    )?;
    for q in &record.queries {
        wtr.write_record([
            q.id.to_string(),
            record.host_name(q.requester).to_string(),
            q.start_ps.to_string(),
            q.size_bytes.to_string(),
            q.responders.to_string(),
            q.end_ps.map_or(String::new(), |e| e.to_string()),
            q.qct_ps().map_or(String::new(), |e| e.to_string()),
            q.packets_dropped.to_string(),
            q.retransmissions.to_string(),
        ])
        .map_err(csv_err)?;
    }
    wtr.flush().map_err(|e| e.to_string())
}

/// `fct_by_size.csv`: one row per bucket, in the order given.
pub fn write_fct_by_size_csv<W: Write>(w: W, buckets: &[BucketStats]) -> Result<(), String> {
    let mut wtr = writer(
        w,
        &[
            "bucket",
            "min_exclusive_bytes",
            "max_inclusive_bytes",
            "flows",
            "completed",
            "incomplete",
            "slowdown_mean",
            "slowdown_p50",
            "slowdown_p95",
            "slowdown_p99",
            "slowdown_max",
            "fct_us_mean",
            "fct_us_p50",
            "fct_us_p95",
            "fct_us_p99",
            "fct_us_max",
        ],
    )?;
    for b in buckets {
        let s = &b.slowdown;
        let f = &b.fct_us;
        wtr.write_record([
            b.label.clone(),
            b.min_exclusive_bytes.to_string(),
            b.max_inclusive_bytes
                .map_or(String::new(), |v| v.to_string()),
            b.flows.to_string(),
            b.completed.to_string(),
            b.incomplete.to_string(),
            opt(s.mean),
            opt(s.p50),
            opt(s.p95),
            opt(s.p99),
            opt(s.max),
            opt(f.mean),
            opt(f.p50),
            opt(f.p95),
            opt(f.p99),
            opt(f.max),
        ])
        .map_err(csv_err)?;
    }
    wtr.flush().map_err(|e| e.to_string())
}

/// `series.csv` (and `throughput.csv`): long format, one row per point, series sorted by
/// name (stable), points in record order.
pub fn write_series_csv<W: Write>(w: W, series: &[Series]) -> Result<(), String> {
    let mut wtr = writer(w, &["series", "unit", "time_ps", "value"])?;
    let mut sorted: Vec<&Series> = series.iter().collect();
    sorted.sort_by(|a, b| a.name.cmp(&b.name));
    for s in sorted {
        for &(t, v) in &s.points {
            wtr.write_record([
                s.name.as_str(),
                s.unit.as_str(),
                &t.to_string(),
                &v.to_string(),
            ])
            .map_err(csv_err)?;
        }
    }
    wtr.flush().map_err(|e| e.to_string())
}

/// `series_stats.csv`: one row per series, in the order given.
pub fn write_series_stats_csv<W: Write>(w: W, stats: &[SeriesStats]) -> Result<(), String> {
    let mut wtr = writer(
        w,
        &[
            "series", "node", "unit", "points", "mean", "p50", "p95", "p99", "max", "last",
        ],
    )?;
    for s in stats {
        wtr.write_record([
            s.name.clone(),
            s.node.clone(),
            s.unit.clone(),
            s.points.to_string(),
            opt(s.mean),
            opt(s.p50),
            opt(s.p95),
            opt(s.p99),
            opt(s.max),
            opt(s.last),
        ])
        .map_err(csv_err)?;
    }
    wtr.flush().map_err(|e| e.to_string())
}

/// `pauses.csv`: one row per (node, port, kind, class); `paused_fraction` is paused time over
/// `duration_ps`.
pub fn write_pauses_csv<W: Write>(
    w: W,
    pauses: &[PauseStats],
    duration_ps: u64,
) -> Result<(), String> {
    let mut wtr = writer(
        w,
        &[
            "node",
            "port",
            "kind",
            "class",
            "pauses",
            "pause_frames",
            "paused_ps",
            "paused_fraction",
            "longest_pause_ps",
            "paused_at_end",
        ],
    )?;
    for p in pauses {
        let frac = p.paused_ps as f64 / duration_ps.max(1) as f64;
        wtr.write_record([
            p.node.clone(),
            p.port.to_string(),
            p.kind.clone(),
            p.class.to_string(),
            p.pauses.to_string(),
            p.pause_frames.to_string(),
            p.paused_ps.to_string(),
            format!("{frac:.6}"),
            p.longest_pause_ps.to_string(),
            p.paused_at_end.to_string(),
        ])
        .map_err(csv_err)?;
    }
    wtr.flush().map_err(|e| e.to_string())
}

/// `pause_events.csv`: the pause timeline, sorted by time then (node, port, kind, class),
/// same-key same-time events in record order.
pub fn write_pause_events_csv<W: Write>(w: W, events: &[PauseEvent]) -> Result<(), String> {
    let mut wtr = writer(w, &["at_ps", "node", "port", "kind", "class", "paused"])?;
    let mut sorted: Vec<&PauseEvent> = events.iter().collect();
    sorted.sort_by_key(|e| (e.at_ps, e.key()));
    for e in sorted {
        wtr.write_record([
            e.at_ps.to_string(),
            e.node.clone(),
            e.port.to_string(),
            e.kind.clone(),
            e.class.to_string(),
            e.paused.to_string(),
        ])
        .map_err(csv_err)?;
    }
    wtr.flush().map_err(|e| e.to_string())
}

/// `drops.csv`: the rows given (per node, then the per-reason totals).
pub fn write_drops_csv<W: Write>(w: W, rows: &[DropRow]) -> Result<(), String> {
    let mut wtr = writer(w, &["node", "reason", "packets", "trim"])?;
    for d in rows {
        wtr.write_record([
            d.node.clone(),
            d.reason.clone(),
            d.packets.to_string(),
            d.trim.to_string(),
        ])
        .map_err(csv_err)?;
    }
    wtr.flush().map_err(|e| e.to_string())
}

/// `hosts.csv`: one row per host, sorted by name.
pub fn write_hosts_csv<W: Write>(w: W, hosts: &[HostTotals]) -> Result<(), String> {
    let mut wtr = writer(w, &["host", "packets_sent", "packets_received"])?;
    let mut sorted: Vec<&HostTotals> = hosts.iter().collect();
    sorted.sort_by(|a, b| a.host.cmp(&b.host));
    for h in sorted {
        wtr.write_record([
            h.host.clone(),
            h.packets_sent.to_string(),
            h.packets_received.to_string(),
        ])
        .map_err(csv_err)?;
    }
    wtr.flush().map_err(|e| e.to_string())
}

/// `summary.json`: the whole summary, pretty-printed, fields in declaration order.
pub fn write_summary_json<W: Write>(mut w: W, summary: &Summary) -> Result<(), String> {
    serde_json::to_writer_pretty(&mut w, summary).map_err(|e| format!("cannot write JSON: {e}"))?;
    writeln!(w).map_err(|e| e.to_string())
}

fn create(dir: &Path, name: &str) -> Result<(PathBuf, std::io::BufWriter<std::fs::File>), String> {
    let path = dir.join(name);
    let f = std::fs::File::create(&path)
        .map_err(|e| format!("{}: cannot create: {e}", path.display()))?;
    Ok((path, std::io::BufWriter::new(f)))
}

/// Write every table of a run into `dir` (created if missing); returns the files written, in
/// the order of the module table.
pub fn write_run_tables(
    record: &RunRecord,
    summary: &Summary,
    throughput: &[Series],
    dir: &Path,
) -> Result<Vec<PathBuf>, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: cannot create: {e}", dir.display()))?;
    let mut out = Vec::new();
    let name_err = |p: &Path, e: String| format!("{}: {e}", p.display());

    let (p, w) = create(dir, "flows.csv")?;
    write_flows_csv(w, record).map_err(|e| name_err(&p, e))?;
    out.push(p);

    if !record.queries.is_empty() {
        let (p, w) = create(dir, "queries.csv")?;
        write_queries_csv(w, record).map_err(|e| name_err(&p, e))?;
        out.push(p);
    }

    let (p, w) = create(dir, "fct_by_size.csv")?;
    let mut buckets = summary.fct_by_size.clone();
    buckets.push(summary.flows.all.clone());
    write_fct_by_size_csv(w, &buckets).map_err(|e| name_err(&p, e))?;
    out.push(p);

    let (p, w) = create(dir, "series.csv")?;
    write_series_csv(w, &record.series).map_err(|e| name_err(&p, e))?;
    out.push(p);

    let (p, w) = create(dir, "series_stats.csv")?;
    let mut stats = summary.series.clone();
    stats.extend(summary.throughput.iter().cloned());
    write_series_stats_csv(w, &stats).map_err(|e| name_err(&p, e))?;
    out.push(p);

    let (p, w) = create(dir, "throughput.csv")?;
    write_series_csv(w, throughput).map_err(|e| name_err(&p, e))?;
    out.push(p);

    let (p, w) = create(dir, "pauses.csv")?;
    write_pauses_csv(w, &summary.pauses, summary.duration_ps).map_err(|e| name_err(&p, e))?;
    out.push(p);

    let (p, w) = create(dir, "pause_events.csv")?;
    write_pause_events_csv(w, &record.pauses).map_err(|e| name_err(&p, e))?;
    out.push(p);

    let (p, w) = create(dir, "drops.csv")?;
    let mut drops = summary.drops.clone();
    drops.extend(summary.drops_by_reason.iter().cloned());
    write_drops_csv(w, &drops).map_err(|e| name_err(&p, e))?;
    out.push(p);

    let (p, w) = create(dir, "hosts.csv")?;
    write_hosts_csv(w, &record.hosts).map_err(|e| name_err(&p, e))?;
    out.push(p);

    let (p, w) = create(dir, "summary.json")?;
    write_summary_json(w, summary).map_err(|e| name_err(&p, e))?;
    out.push(p);

    if let Some(hol) = &record.hol {
        let (p, w) = create(dir, "hol.csv")?;
        write_hol_csv(w, record, hol).map_err(|e| name_err(&p, e))?;
        out.push(p);
    }

    if !record.chips.is_empty() {
        let (p, w) = create(dir, "state.txt")?;
        write_state_text(w, &record.chips).map_err(|e| name_err(&p, e))?;
        out.push(p);
    }

    Ok(out)
}

/// `hol.csv`: every HOL-blocking violation (a flow in a paused queue that crossed no
/// congested port downstream), by time: the queue's chip, port and queue, and the flow.
pub fn write_hol_csv<W: Write>(w: W, record: &RunRecord, hol: &HolReport) -> Result<(), String> {
    let mut wtr = writer(
        w,
        &["time_ps", "chip", "port", "queue", "src", "dst", "flow_id"],
    )?;
    for v in &hol.violations {
        let chip = record
            .chips
            .get(v.chip as usize)
            .map_or("?", |c| c.node.as_str());
        wtr.write_record([
            v.time_ps.to_string(),
            chip.to_string(),
            v.port.to_string(),
            v.queue.to_string(),
            record.host_name(v.flow.src).to_string(),
            record.host_name(v.flow.dst).to_string(),
            v.flow.flow_id.to_string(),
        ])
        .map_err(|e| e.to_string())?;
    }
    wtr.flush().map_err(|e| e.to_string())
}

/// `state.txt`: per chip, its control-plane reads and its state at the end.
pub fn write_state_text<W: Write>(mut w: W, chips: &[ChipRecord]) -> Result<(), String> {
    let text: Vec<String> = chips
        .iter()
        .map(|c| {
            let title = format!("chip {} ({})", c.node, c.profile);
            pipelines::readout::text::chip(&title, &c.reads, &c.state)
        })
        .collect();
    w.write_all(text.join("\n").as_bytes())
        .and_then(|()| w.flush())
        .map_err(|e| format!("cannot write: {e}"))
}

/// A text table for the terminal: a header and rows of cells, columns padded to their widest
/// cell; cells that parse as numbers are right-aligned.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TextTable {
    /// Column names.
    pub header: Vec<String>,
    /// Rows (shorter rows are padded with empty cells).
    pub rows: Vec<Vec<String>>,
}

impl TextTable {
    /// A table with these column names and no rows.
    pub fn new(header: &[&str]) -> TextTable {
        TextTable {
            header: header.iter().map(|s| s.to_string()).collect(),
            rows: Vec::new(),
        }
    }

    /// Add a row.
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    /// The table as lines of text: header, a rule, rows; two spaces between columns.
    pub fn render(&self) -> String {
        let ncol = self
            .rows
            .iter()
            .map(Vec::len)
            .chain([self.header.len()])
            .max()
            .unwrap_or(0);
        let cell = |r: &Vec<String>, i: usize| r.get(i).cloned().unwrap_or_default();
        let mut width = vec![0usize; ncol];
        for r in std::iter::once(&self.header).chain(&self.rows) {
            for (i, w) in width.iter_mut().enumerate() {
                *w = (*w).max(cell(r, i).chars().count());
            }
        }
        let mut out = String::new();
        let line = |out: &mut String, r: &Vec<String>, numeric_right: bool| {
            let mut s = String::new();
            for (i, &w) in width.iter().enumerate() {
                let c = cell(r, i);
                let pad = w - c.chars().count();
                if i > 0 {
                    s.push_str("  ");
                }
                if numeric_right && !c.is_empty() && c.parse::<f64>().is_ok() {
                    s.push_str(&" ".repeat(pad));
                    s.push_str(&c);
                } else {
                    s.push_str(&c);
                    s.push_str(&" ".repeat(pad));
                }
            }
            out.push_str(s.trim_end());
            out.push('\n');
        };
        line(&mut out, &self.header, false);
        let rule: Vec<String> = width.iter().map(|&w| "-".repeat(w)).collect();
        line(&mut out, &rule, false);
        for r in &self.rows {
            line(&mut out, r, true);
        }
        out
    }
}

fn us(ps: u64) -> String {
    format!("{:.3}", ps as f64 / 1e6)
}

/// The summary as text for the terminal: headline numbers, FCT slowdown by size, the series
/// (time-weighted), pauses and drops. Sections with nothing to show are left out.
pub fn render_summary(s: &Summary) -> String {
    let mut out = String::new();
    let f = &s.flows;
    let _ = writeln!(
        out,
        "run{}: {} us simulated; {} flows ({} completed, {} incomplete), {} packets sent, {} retransmitted",
        if s.name.is_empty() {
            String::new()
        } else {
            format!(" {}", s.name)
        },
        us(s.duration_ps),
        f.flows,
        f.completed,
        f.incomplete,
        f.packets_sent,
        f.retransmissions
    );
    let _ = writeln!(
        out,
        "short flows (<= {} B) p99 slowdown: {}; long flows (> {} B) mean slowdown: {}",
        s.config.short_flow_max_bytes,
        opt_or_dash(f.short_flows_p99_slowdown),
        s.config.long_flow_min_bytes,
        opt_or_dash(f.long_flows_mean_slowdown)
    );
    if let Some(q) = &s.queries {
        let pct = |n: u64| 100.0 * n as f64 / q.queries.max(1) as f64;
        let _ = writeln!(
            out,
            "queries: {} ({} completed), {} without a drop ({:.1} %); completion time p50 {} us, p99 {} us",
            q.queries,
            q.completed,
            q.without_drop,
            pct(q.without_drop),
            opt_or_dash(q.qct_us_p50),
            opt_or_dash(q.qct_us_p99)
        );
    }
    let c = &s.conservation;
    let _ = writeln!(
        out,
        "data packets: {} sent = {} received + {} dropped + {} in flight (on links or in \
         chips); other drops: {} (acks, control frames, copies made in chips); consumed by \
         chip programs: {}",
        c.sent, c.received, c.dropped, c.in_flight, c.other_drops, c.consumed
    );
    if let Some(h) = &s.hol {
        let _ = writeln!(
            out,
            "HOL blocking: {} of {} flows seen in paused queues crossed no congested port \
             downstream ({} distinct flows{}); {} samples, {} paused queues with packets, {} \
             flows off their routed path (hol.csv)",
            h.violations,
            h.flows_checked,
            h.blocked_flows,
            h.first_violation_ps
                .map_or(String::new(), |t| format!(", the first at {} us", us(t))),
            h.samples,
            h.paused_queues,
            h.off_path
        );
    }

    if f.flows > 0 {
        let mut t = TextTable::new(&[
            "size",
            "flows",
            "done",
            "mean",
            "p50",
            "p95",
            "p99",
            "max",
            "FCT p50 us",
            "FCT p99 us",
        ]);
        for b in s.fct_by_size.iter().chain([&f.all]) {
            t.row(vec![
                b.label.clone(),
                b.flows.to_string(),
                b.completed.to_string(),
                opt(b.slowdown.mean),
                opt(b.slowdown.p50),
                opt(b.slowdown.p95),
                opt(b.slowdown.p99),
                opt(b.slowdown.max),
                opt(b.fct_us.p50),
                opt(b.fct_us.p99),
            ]);
        }
        let _ = writeln!(out, "\nFCT slowdown by flow size");
        out.push_str(&t.render());
    }

    if !s.series.is_empty() || !s.throughput.is_empty() {
        let mut t = TextTable::new(&["series", "unit", "mean", "p50", "p99", "max"]);
        for x in s.series.iter().chain(&s.throughput) {
            t.row(vec![
                x.name.clone(),
                x.unit.clone(),
                opt(x.mean),
                opt(x.p50),
                opt(x.p99),
                opt(x.max),
            ]);
        }
        let _ = writeln!(out, "\nSeries (time-weighted)");
        out.push_str(&t.render());
    }

    if !s.pauses.is_empty() {
        let mut t = TextTable::new(&[
            "node",
            "port",
            "kind",
            "class",
            "pauses",
            "paused us",
            "longest us",
        ]);
        for p in &s.pauses {
            t.row(vec![
                p.node.clone(),
                p.port.to_string(),
                p.kind.clone(),
                p.class.to_string(),
                p.pauses.to_string(),
                us(p.paused_ps),
                us(p.longest_pause_ps),
            ]);
        }
        let _ = writeln!(out, "\nPauses");
        out.push_str(&t.render());
    }

    if !s.drops.is_empty() {
        let mut t = TextTable::new(&["node", "reason", "packets"]);
        for d in s.drops.iter().chain(&s.drops_by_reason) {
            t.row(vec![
                d.node.clone(),
                d.reason.clone(),
                d.packets.to_string(),
            ]);
        }
        let _ = writeln!(out, "\nDrops and trims");
        out.push_str(&t.render());
    }
    let reads: usize = s.chips.iter().map(|c| c.reads.len()).sum();
    if reads > 0 {
        let _ = writeln!(
            out,
            "\n{reads} control-plane read{} made during the run: in state.txt, with every \
             chip's registers, counters, meters and tables at the end",
            if reads == 1 { " was" } else { "s were" }
        );
    }
    out
}

fn opt_or_dash(v: Option<f64>) -> String {
    v.map_or("-".to_string(), |v| format!("{v:.3}"))
}
