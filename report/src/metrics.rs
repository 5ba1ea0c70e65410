//! Numbers computed from a [`RunRecord`]: flow completion times and slowdowns by flow size,
//! time-weighted statistics of sampled series, windowed throughput, pause counts and paused
//! time, and drops by reason.
//!
//! # Flow completion time and slowdown
//!
//! A flow's FCT is `end - start`; its slowdown is FCT divided by the ideal FCT the runtime
//! recorded (first-byte latency along the path plus the size at the bottleneck rate, see
//! [`FlowRecord`]). Flows are put in size buckets by upper edges, each edge inclusive:
//! the default edges `10 KB, 100 KB, 1 MB` (decimal, as the papers write them) give the
//! buckets `<=10KB`, `10KB-100KB`, `100KB-1MB`, `>1MB`. Each bucket reports count, mean,
//! p50, p95, p99 and max of the slowdown and of the FCT. Two headline numbers follow BFC
//! and Pyrrha: the p99 slowdown of *short* flows (size <= [`MetricsConfig::short_flow_max_bytes`],
//! default 10 KB) and the mean slowdown of *long* flows (size > [`MetricsConfig::long_flow_min_bytes`],
//! default 1 MB). Flows that did not complete are counted (`incomplete`) but have no FCT, so
//! they are left out of the statistics: a run that ends too early shows it there.
//!
//! Percentiles come from an HdrHistogram (`hdrhistogram` crate): a fixed-relative-precision
//! histogram, the standard way latency tails are reported, with constant memory whatever
//! the number of flows. It stores integers, so a slowdown is recorded as
//! `round(slowdown * 1000)` ([`SLOWDOWN_SCALE`]): a resolution of 0.001 in slowdown. FCTs
//! are recorded in integer picoseconds as they are. The histograms keep 4 significant
//! digits ([`HDR_SIGFIG`]): every integer below 16 384 has a bucket of its own, so
//! slowdowns up to 16.384 (the range where most flows are) come back exact to the 0.001
//! resolution, and any larger value within 0.01 % of itself, far below the run-to-run
//! differences these experiments study. 3 digits would already be within 0.1 % but would
//! print an exact slowdown of 3 as 3.001; 5 digits would cost 8 times the memory (a
//! 4-digit histogram is at most a few hundred KB, and only one exists at a time) for
//! nothing visible. A percentile is HdrHistogram's value at that quantile (the highest
//! value equivalent to the one at rank `ceil(q * n)`), capped at the exact maximum; the
//! mean and the maximum are computed exactly from the values, not from the histogram.
//!
//! # Series: time-weighted, not sample-weighted
//!
//! A [`Series`] value holds until the next point (the last one until the end of the run).
//! Two kinds of percentile are possible: *sample-weighted* (every point counts once, see
//! [`sample_quantile`]) and *time-weighted* (every value counts for as long as it held, see
//! [`time_weighted_quantiles`]). A queue that is sampled on change has many points while it
//! moves and few while it sits still, so sample weighting over-represents busy moments and
//! depends on the sampling; the time-weighted percentile answers "for what fraction of the
//! time was the queue at most this deep" whatever the sampling. The report uses
//! time-weighted statistics. Time before a series' first point is not counted (the value
//! was unknown then). The time-weighted `q` percentile is the smallest value `v` such that
//! the series was at or below `v` for at least `q` of the counted time; exact (values are
//! sorted, no histogram).
//!
//! # Throughput
//!
//! A cumulative byte counter (see [`Series::is_byte_counter`]) becomes a rate series by
//! [`windowed_rate`]: per window from `k·w` to `(k+1)·w`, the counter's value at its end
//! minus its value at its start, times 8, over the window length, in Gb/s. The value at a
//! time is the last point at or before it: a sampled counter's point at `t` counts the bytes
//! sent up to `t`, so a point on a window's boundary closes that window. (Counting it in the
//! next one instead shifts every window by a sample period, and a last window shorter than
//! the others then divides a sample period more of bytes by its length: a 10G port read
//! 10.6 Gb/s.) The window `w` is the configured one (10 µs) or, for counters sampled less
//! often, the smallest multiple of their sampling period above it ([`throughput_window`]), so
//! every window ends on a sample.
//!
//! # Pauses and drops
//!
//! Pause events are grouped by (node, port, kind, class) and replayed in time order: a
//! *pause* is a change from running to paused; `pause_frames` counts every `paused = true`
//! event (PFC refreshes included); paused time runs from a pause to the next resume, or to
//! the end of the run. Drops are summed by (node, reason) and by reason; a reason containing
//! `trim` is a trim (the packet was cut to its header, not lost).
//!
//! Every list here is sorted by its key, so the same record gives byte-identical output.

use crate::record_ext::{PauseEventExt, SeriesExt};
use asic_net::records::{
    ChipRecord, FlowRecord, HolReport, PauseEvent, QueryRecord, RunRecord, Series,
};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Slowdowns are recorded in histograms as `round(slowdown * SLOWDOWN_SCALE)`.
pub const SLOWDOWN_SCALE: f64 = 1000.0;
/// Significant decimal digits kept by every histogram (relative error at most 0.01 %).
pub const HDR_SIGFIG: u8 = 4;

/// What to compute and how.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MetricsConfig {
    /// Upper edges of the flow size buckets in bytes, each inclusive, increasing; one more
    /// bucket holds the flows above the last edge.
    pub size_edges: Vec<u64>,
    /// Flows of at most this size are "short" (p99 slowdown reported).
    pub short_flow_max_bytes: u64,
    /// Flows above this size are "long" (mean slowdown reported).
    pub long_flow_min_bytes: u64,
    /// Window of the throughput computed from byte counters (ps).
    pub throughput_window_ps: u64,
}

impl Default for MetricsConfig {
    fn default() -> Self {
        MetricsConfig {
            size_edges: vec![10_000, 100_000, 1_000_000],
            short_flow_max_bytes: 10_000,
            long_flow_min_bytes: 1_000_000,
            throughput_window_ps: 10_000_000, // 10 µs
        }
    }
}

/// count, mean, p50, p95, p99, max of a set of values; `None`s when there are no values.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    /// Number of values.
    pub count: u64,
    /// Exact arithmetic mean.
    pub mean: Option<f64>,
    /// Median.
    pub p50: Option<f64>,
    /// 95th percentile.
    pub p95: Option<f64>,
    /// 99th percentile.
    pub p99: Option<f64>,
    /// Exact maximum.
    pub max: Option<f64>,
}

/// Statistics of `values` through an HdrHistogram: each value is recorded as
/// `round(v * scale)` (negative and non-finite values as 0); percentiles are divided back by
/// `scale`; mean and max are exact.
pub fn hdr_stats(values: &[f64], scale: f64) -> Stats {
    if values.is_empty() {
        return Stats::default();
    }
    let mut h = Histogram::<u64>::new(HDR_SIGFIG).expect("4 significant digits is valid");
    let mut sum = 0.0;
    let mut max = f64::NEG_INFINITY;
    for &v in values {
        let v = if v.is_finite() && v > 0.0 { v } else { 0.0 };
        sum += v;
        max = max.max(v);
        // Auto-resizing histogram: recording cannot fail for a u64 value.
        let _ = h.record((v * scale).round().min(4e18) as u64);
    }
    let q = |q: f64| Some((h.value_at_quantile(q) as f64 / scale).min(max));
    Stats {
        count: values.len() as u64,
        mean: Some(sum / values.len() as f64),
        p50: q(0.50),
        p95: q(0.95),
        p99: q(0.99),
        max: Some(max),
    }
}

/// Sample-weighted nearest-rank quantile: the value at rank `ceil(q * n)` of the sorted
/// values (every point counts once). Given for comparison; the report uses
/// [`time_weighted_quantiles`].
pub fn sample_quantile(values: &[f64], q: f64) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut v: Vec<f64> = values.to_vec();
    v.sort_by(f64::total_cmp);
    let rank = ((q.clamp(0.0, 1.0) * v.len() as f64).ceil() as usize).max(1);
    Some(v[rank - 1])
}

/// The pieces of a series as (value, how long it held in ps), up to `end_ps`.
fn held_segments(series: &Series, end_ps: u64) -> Vec<(f64, u64)> {
    let pts = &series.points;
    let mut out = Vec::with_capacity(pts.len());
    for (i, &(t, v)) in pts.iter().enumerate() {
        let next = pts.get(i + 1).map_or(end_ps, |&(tn, _)| tn).min(end_ps);
        out.push((v, next.saturating_sub(t)));
    }
    out
}

/// Time-weighted quantiles of a series over `[first point, end_ps)`: for each `q`, the
/// smallest value `v` the series was at or below for at least `q` of that time. If no time
/// is covered (one point at the end), the sample-weighted quantile is given instead.
pub fn time_weighted_quantiles(series: &Series, end_ps: u64, qs: &[f64]) -> Vec<Option<f64>> {
    let mut seg = held_segments(series, end_ps);
    let total: u128 = seg.iter().map(|&(_, d)| d as u128).sum();
    if total == 0 {
        let values: Vec<f64> = series.points.iter().map(|&(_, v)| v).collect();
        return qs.iter().map(|&q| sample_quantile(&values, q)).collect();
    }
    seg.retain(|&(_, d)| d > 0);
    seg.sort_by(|a, b| a.0.total_cmp(&b.0));
    qs.iter()
        .map(|&q| {
            let target = q.clamp(0.0, 1.0) * total as f64;
            let mut cum: u128 = 0;
            for &(v, d) in &seg {
                cum += d as u128;
                if cum as f64 >= target {
                    return Some(v);
                }
            }
            seg.last().map(|&(v, _)| v)
        })
        .collect()
}

/// Time-weighted mean of a series over `[first point, end_ps)`; the plain mean of the points
/// if no time is covered; `None` for an empty series.
pub fn time_weighted_mean(series: &Series, end_ps: u64) -> Option<f64> {
    if series.points.is_empty() {
        return None;
    }
    let seg = held_segments(series, end_ps);
    let total: f64 = seg.iter().map(|&(_, d)| d as f64).sum();
    if total == 0.0 {
        let n = series.points.len() as f64;
        return Some(series.points.iter().map(|&(_, v)| v).sum::<f64>() / n);
    }
    Some(seg.iter().map(|&(v, d)| v * d as f64).sum::<f64>() / total)
}

/// Time-weighted statistics of one series.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeriesStats {
    /// Series name.
    pub name: String,
    /// Its node (name up to the first `.`).
    pub node: String,
    /// Unit.
    pub unit: String,
    /// Number of points.
    pub points: usize,
    /// Time-weighted mean.
    pub mean: Option<f64>,
    /// Time-weighted median.
    pub p50: Option<f64>,
    /// Time-weighted 95th percentile.
    pub p95: Option<f64>,
    /// Time-weighted 99th percentile.
    pub p99: Option<f64>,
    /// Largest value.
    pub max: Option<f64>,
    /// Value at the end of the run.
    pub last: Option<f64>,
}

/// Time-weighted statistics of a series up to `end_ps` (see the module docs).
pub fn series_stats(series: &Series, end_ps: u64) -> SeriesStats {
    let q = time_weighted_quantiles(series, end_ps, &[0.5, 0.95, 0.99]);
    SeriesStats {
        name: series.name.clone(),
        node: series.node().to_string(),
        unit: series.unit.clone(),
        points: series.points.len(),
        mean: time_weighted_mean(series, end_ps),
        p50: q[0],
        p95: q[1],
        p99: q[2],
        max: series.points.iter().map(|&(_, v)| v).reduce(f64::max),
        last: series.points.last().map(|&(_, v)| v),
    }
}

/// The rate of a cumulative byte counter in Gb/s per window of `window_ps`, from 0 to
/// `end_ps`: a point at the start of each window, holding the counter's growth from the
/// window's start to its end (its last point at or before each) times 8 over the window's
/// length (the last window may be shorter). The counter is 0 before its first point. The
/// result is named `<name>.rate` with unit `Gb/s`.
pub fn windowed_rate(counter: &Series, window_ps: u64, end_ps: u64) -> Series {
    let w = window_ps.max(1);
    let mut points = Vec::new();
    let mut prev = 0.0; // counter value before the current window
    let mut i = 0;
    let mut start = 0u64;
    while start < end_ps {
        let stop = start.saturating_add(w).min(end_ps);
        let mut now = prev;
        while i < counter.points.len() && counter.points[i].0 <= stop {
            now = counter.points[i].1;
            i += 1;
        }
        // bytes · 8 bits / ps = 1e12 b/s = 1000 Gb/s per bit/ps.
        let gbps = (now - prev) * 8.0 * 1000.0 / (stop - start) as f64;
        points.push((start, gbps));
        prev = now;
        start = stop;
    }
    Series {
        name: format!("{}.rate", counter.name),
        unit: "Gb/s".to_string(),
        points,
    }
}

/// The throughput window of a record: the configured one, or, when the counters were sampled
/// less often, the smallest multiple of their sampling period above it. A window between two
/// samples would see no growth, and the one holding the next sample a whole period's bytes
/// (100 µs samples in 10 µs windows: 0, then ten times the line rate).
pub fn throughput_window(record: &RunRecord, cfg: &MetricsConfig) -> u64 {
    match record.sample_period_ps {
        0 => cfg.throughput_window_ps,
        p => cfg.throughput_window_ps.max(1).div_ceil(p) * p,
    }
}

/// FCT and slowdown statistics of the flows in one size bucket.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BucketStats {
    /// `<=10KB`, `10KB-100KB`, `>1MB`, or `all`.
    pub label: String,
    /// Sizes above this (bytes, exclusive).
    pub min_exclusive_bytes: u64,
    /// Sizes up to this (bytes, inclusive); `None` for the open last bucket.
    pub max_inclusive_bytes: Option<u64>,
    /// Flows in the bucket.
    pub flows: u64,
    /// Of which completed.
    pub completed: u64,
    /// Of which not completed when the run ended.
    pub incomplete: u64,
    /// Slowdown (FCT / ideal FCT).
    pub slowdown: Stats,
    /// FCT in microseconds.
    pub fct_us: Stats,
}

/// A size in bytes as the papers write it: decimal units, `10KB`, `1.5MB`.
pub fn human_bytes(b: u64) -> String {
    let units = [
        (1_000_000_000_000, "TB"),
        (1_000_000_000, "GB"),
        (1_000_000, "MB"),
        (1_000, "KB"),
    ];
    for (div, unit) in units {
        if b >= div {
            let v = b as f64 / div as f64;
            return if b % div == 0 {
                format!("{}{unit}", b / div)
            } else {
                format!("{}{unit}", (v * 100.0).round() / 100.0)
            };
        }
    }
    format!("{b}B")
}

fn bucket_stats(label: String, lo: u64, hi: Option<u64>, flows: &[&FlowRecord]) -> BucketStats {
    let mut slow = Vec::new();
    let mut fct = Vec::new();
    for f in flows {
        if let (Some(s), Some(t)) = (f.slowdown(), f.fct_ps()) {
            slow.push(s);
            fct.push(t as f64 / 1e6);
        }
    }
    // FCT in µs through the histogram at 1 ps resolution (scale 1e6 back to integer ps).
    BucketStats {
        label,
        min_exclusive_bytes: lo,
        max_inclusive_bytes: hi,
        flows: flows.len() as u64,
        completed: slow.len() as u64,
        incomplete: (flows.len() - slow.len()) as u64,
        slowdown: hdr_stats(&slow, SLOWDOWN_SCALE),
        fct_us: hdr_stats(&fct, 1e6),
    }
}

/// FCT and slowdown by size bucket (see the module docs), in bucket order.
pub fn fct_by_size(flows: &[FlowRecord], edges: &[u64]) -> Vec<BucketStats> {
    let mut edges: Vec<u64> = edges.to_vec();
    edges.sort_unstable();
    edges.dedup();
    let mut out = Vec::with_capacity(edges.len() + 1);
    let mut lo = 0u64;
    for (i, &hi) in edges.iter().enumerate() {
        let label = if i == 0 {
            format!("<={}", human_bytes(hi))
        } else {
            format!("{}-{}", human_bytes(lo), human_bytes(hi))
        };
        let sel: Vec<&FlowRecord> = flows
            .iter()
            .filter(|f| (i == 0 || f.size_bytes > lo) && f.size_bytes <= hi)
            .collect();
        out.push(bucket_stats(label, lo, Some(hi), &sel));
        lo = hi;
    }
    let label = if edges.is_empty() {
        "all".to_string()
    } else {
        format!(">{}", human_bytes(lo))
    };
    let sel: Vec<&FlowRecord> = flows
        .iter()
        .filter(|f| edges.is_empty() || f.size_bytes > lo)
        .collect();
    out.push(bucket_stats(label, lo, None, &sel));
    out
}

/// Flow counts and the headline slowdown numbers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FlowSummary {
    /// Flows in the run.
    pub flows: u64,
    /// Completed.
    pub completed: u64,
    /// Not completed when the run ended.
    pub incomplete: u64,
    /// Data packets sent by all flows (retransmissions included).
    pub packets_sent: u64,
    /// Retransmitted packets.
    pub retransmissions: u64,
    /// Every flow regardless of size.
    pub all: BucketStats,
    /// p99 slowdown of flows of at most `short_flow_max_bytes` (BFC/Pyrrha "short flows").
    pub short_flows_p99_slowdown: Option<f64>,
    /// Mean slowdown of flows above `long_flow_min_bytes` (BFC/Pyrrha "long flows").
    pub long_flows_mean_slowdown: Option<f64>,
}

/// Flow totals and headline numbers.
pub fn flow_summary(flows: &[FlowRecord], cfg: &MetricsConfig) -> FlowSummary {
    let all: Vec<&FlowRecord> = flows.iter().collect();
    let all = bucket_stats("all".to_string(), 0, None, &all);
    let short: Vec<f64> = flows
        .iter()
        .filter(|f| f.size_bytes <= cfg.short_flow_max_bytes)
        .filter_map(FlowRecord::slowdown)
        .collect();
    let long: Vec<f64> = flows
        .iter()
        .filter(|f| f.size_bytes > cfg.long_flow_min_bytes)
        .filter_map(FlowRecord::slowdown)
        .collect();
    FlowSummary {
        flows: all.flows,
        completed: all.completed,
        incomplete: all.incomplete,
        packets_sent: flows.iter().map(|f| f.packets_sent).sum(),
        retransmissions: flows.iter().map(|f| f.retransmissions).sum(),
        short_flows_p99_slowdown: hdr_stats(&short, SLOWDOWN_SCALE).p99,
        long_flows_mean_slowdown: hdr_stats(&long, SLOWDOWN_SCALE).mean,
        all,
    }
}

/// Pauses of one (node, port, kind, class).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PauseStats {
    /// Node whose transmit side is paused.
    pub node: String,
    /// Port.
    pub port: u16,
    /// `pfc` or `queue`.
    pub kind: String,
    /// Priority or queue id.
    pub class: u16,
    /// Changes from running to paused.
    pub pauses: u64,
    /// Every `paused = true` event (refreshes included).
    pub pause_frames: u64,
    /// Total time paused (ps), up to the end of the run.
    pub paused_ps: u64,
    /// Longest single pause (ps).
    pub longest_pause_ps: u64,
    /// Still paused at the end of the run.
    pub paused_at_end: bool,
}

/// Pause counts and paused time per (node, port, kind, class), sorted by that key. Events
/// are replayed in time order (stable: same-time events in record order); time is counted up
/// to `end_ps`.
pub fn pause_stats(events: &[PauseEvent], end_ps: u64) -> Vec<PauseStats> {
    let mut groups: BTreeMap<(String, u16, String, u16), Vec<&PauseEvent>> = BTreeMap::new();
    for e in events {
        groups.entry(e.key()).or_default().push(e);
    }
    groups
        .into_iter()
        .map(|((node, port, kind, class), mut evs)| {
            evs.sort_by_key(|e| e.at_ps);
            let mut s = PauseStats {
                node,
                port,
                kind,
                class,
                pauses: 0,
                pause_frames: 0,
                paused_ps: 0,
                longest_pause_ps: 0,
                paused_at_end: false,
            };
            let mut since: Option<u64> = None;
            for e in evs {
                if e.paused {
                    s.pause_frames += 1;
                    if since.is_none() {
                        s.pauses += 1;
                        since = Some(e.at_ps);
                    }
                } else if let Some(t0) = since.take() {
                    let d = e.at_ps.min(end_ps).saturating_sub(t0);
                    s.paused_ps += d;
                    s.longest_pause_ps = s.longest_pause_ps.max(d);
                }
            }
            if let Some(t0) = since {
                let d = end_ps.saturating_sub(t0);
                s.paused_ps += d;
                s.longest_pause_ps = s.longest_pause_ps.max(d);
                s.paused_at_end = true;
            }
            s
        })
        .collect()
}

/// Drops (or trims) of one node for one reason.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DropRow {
    /// Node (`*` in the per-reason totals).
    pub node: String,
    /// Reason.
    pub reason: String,
    /// Packets.
    pub packets: u64,
    /// The reason is a trim (contains `trim`): cut to its header, not lost.
    pub trim: bool,
}

/// Drops summed by (node, reason), sorted by node then reason.
pub fn drops_by_node(record: &RunRecord) -> Vec<DropRow> {
    let mut m: BTreeMap<(String, String), u64> = BTreeMap::new();
    for d in &record.drops {
        *m.entry((d.node.clone(), d.reason.clone())).or_default() += d.packets;
    }
    m.into_iter()
        .map(|((node, reason), packets)| DropRow {
            trim: reason.contains("trim"),
            node,
            reason,
            packets,
        })
        .collect()
}

/// Drops summed by reason over all nodes (node `*`), sorted by reason.
pub fn drops_by_reason(record: &RunRecord) -> Vec<DropRow> {
    let mut m: BTreeMap<String, u64> = BTreeMap::new();
    for d in &record.drops {
        *m.entry(d.reason.clone()).or_default() += d.packets;
    }
    m.into_iter()
        .map(|(reason, packets)| DropRow {
            node: "*".to_string(),
            trim: reason.contains("trim"),
            reason,
            packets,
        })
        .collect()
}

/// Where the hosts' data packets went (`sent = received + dropped + in_flight`), and the
/// drops of everything else.
///
/// The drop list counts every packet a node dropped, whoever made it: acknowledgements,
/// control frames and packets made inside a chip (a program's own records, mirror copies)
/// as well as data. The data packets' share comes from the hosts' totals, which follow
/// each data packet by its source address; the rest are `other_drops`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Conservation {
    /// Data packets all hosts put on the wire.
    pub sent: u64,
    /// Data packets that reached their host.
    pub received: u64,
    /// Of the data packets sent, those dropped: in a chip, out of a port with no link, or
    /// refused by the host they reached (those still inside a chip when the run stopped are
    /// in flight).
    pub dropped: u64,
    /// `sent - received - dropped`: data packets on a link or inside a chip when the run
    /// stopped (0 on a drained network).
    pub in_flight: i64,
    /// Drops (trims excluded: a trimmed packet is still delivered as a header) of packets
    /// that were not hosts' data packets: the drop list's total less `dropped`.
    pub other_drops: u64,
    /// Packets chips made that their programs ended by design (records, not drops).
    #[serde(default)]
    pub consumed: u64,
}

/// Host totals against drops.
pub fn conservation(record: &RunRecord) -> Conservation {
    let sent: u64 = record.hosts.iter().map(|h| h.packets_sent).sum();
    let received: u64 = record.hosts.iter().map(|h| h.packets_received).sum();
    let dropped: u64 = record.hosts.iter().map(|h| h.packets_dropped).sum();
    let all_drops: u64 = record
        .drops
        .iter()
        .filter(|d| !d.reason.contains("trim"))
        .map(|d| d.packets)
        .sum();
    Conservation {
        sent,
        received,
        dropped,
        in_flight: sent as i64 - received as i64 - dropped as i64,
        other_drops: all_drops.saturating_sub(dropped),
        consumed: record.consumed.iter().map(|c| c.packets).sum(),
    }
}

/// Everything computed from one run: what `summary.json` holds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Scenario name.
    pub name: String,
    /// Simulated time covered (ps).
    pub duration_ps: u64,
    /// The configuration the numbers were computed with (the throughput window the one
    /// used: [`throughput_window`]).
    pub config: MetricsConfig,
    /// Flow totals and headline slowdowns.
    pub flows: FlowSummary,
    /// The queries, if the traffic had any. (Absent from summaries without: `None`.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queries: Option<QuerySummary>,
    /// FCT and slowdown by size bucket, in bucket order.
    pub fct_by_size: Vec<BucketStats>,
    /// Time-weighted statistics of every recorded series, sorted by name.
    pub series: Vec<SeriesStats>,
    /// Time-weighted statistics of the throughput derived from byte counters, by name.
    pub throughput: Vec<SeriesStats>,
    /// Pauses per (node, port, kind, class).
    pub pauses: Vec<PauseStats>,
    /// Drops by (node, reason).
    pub drops: Vec<DropRow>,
    /// Drops by reason over all nodes.
    pub drops_by_reason: Vec<DropRow>,
    /// Host totals against drops.
    pub conservation: Conservation,
    /// Per chip: its control-plane reads and its registers, counters, meters and tables at
    /// the end (as recorded). (Absent from older summaries: empty.)
    #[serde(default)]
    pub chips: Vec<ChipRecord>,
    /// The HOL-blocking check, if the run had `hol_check`. (Absent otherwise.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hol: Option<HolSummary>,
}

/// The HOL-blocking check of a run in numbers (every violation is in `hol.csv`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HolSummary {
    /// Sampled instants.
    pub samples: u64,
    /// (instant, paused queue) pairs that held packets.
    pub paused_queues: u64,
    /// (instant, paused queue, flow) triples looked at.
    pub flows_checked: u64,
    /// Of them, flows off the path the routes give them (not judged).
    pub off_path: u64,
    /// Of them, flows that crossed no congested port downstream: HOL blocking.
    pub violations: u64,
    /// Distinct flows among the violations.
    pub blocked_flows: u64,
    /// The first violation's instant (ps).
    pub first_violation_ps: Option<u64>,
}

/// [`HolSummary`] of `r`.
pub fn hol_summary(r: &HolReport) -> HolSummary {
    let flows: std::collections::BTreeSet<_> = r.violations.iter().map(|v| v.flow).collect();
    HolSummary {
        samples: r.samples,
        paused_queues: r.paused_queues,
        flows_checked: r.flows_checked,
        off_path: r.off_path,
        violations: r.violations.len() as u64,
        blocked_flows: flows.len() as u64,
        first_violation_ps: r.violations.first().map(|v| v.time_ps),
    }
}

/// The queries of a run (`Queries` traffic) in numbers: how many completed, how many had no
/// packet dropped (the FB paper's burst absorption), and their completion times.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QuerySummary {
    /// Queries issued.
    pub queries: u64,
    /// Of them, completed.
    pub completed: u64,
    /// Of them, none of whose data packets a chip dropped.
    pub without_drop: u64,
    /// Query completion time of the completed, µs: median, 99th percentile (nearest rank).
    pub qct_us_p50: Option<f64>,
    /// See `qct_us_p50`.
    pub qct_us_p99: Option<f64>,
}

/// [`QuerySummary`] of `queries`; `None` when there are none.
pub fn query_summary(queries: &[QueryRecord]) -> Option<QuerySummary> {
    if queries.is_empty() {
        return None;
    }
    let qct: Vec<f64> = queries
        .iter()
        .filter_map(|q| q.qct_ps())
        .map(|p| p as f64 / 1e6)
        .collect();
    Some(QuerySummary {
        queries: queries.len() as u64,
        completed: qct.len() as u64,
        without_drop: queries.iter().filter(|q| q.packets_dropped == 0).count() as u64,
        qct_us_p50: sample_quantile(&qct, 0.5),
        qct_us_p99: sample_quantile(&qct, 0.99),
    })
}

/// The rate series of every byte counter in the record, sorted by name.
pub fn throughput_series(record: &RunRecord, cfg: &MetricsConfig) -> Vec<Series> {
    let window = throughput_window(record, cfg);
    let mut out: Vec<Series> = record
        .series
        .iter()
        .filter(|s| s.is_byte_counter())
        .map(|s| windowed_rate(s, window, record.duration_ps))
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// Compute every statistic of a run.
pub fn summarize(record: &RunRecord, cfg: &MetricsConfig) -> Summary {
    let end = record.duration_ps;
    let mut series: Vec<SeriesStats> = record.series.iter().map(|s| series_stats(s, end)).collect();
    series.sort_by(|a, b| a.name.cmp(&b.name));
    let throughput = throughput_series(record, cfg)
        .iter()
        .map(|s| series_stats(s, end))
        .collect();
    Summary {
        name: record.name.clone(),
        duration_ps: end,
        config: MetricsConfig {
            throughput_window_ps: throughput_window(record, cfg),
            ..cfg.clone()
        },
        flows: flow_summary(&record.flows, cfg),
        queries: query_summary(&record.queries),
        fct_by_size: fct_by_size(&record.flows, &cfg.size_edges),
        series,
        throughput,
        pauses: pause_stats(&record.pauses, end),
        drops: drops_by_node(record),
        drops_by_reason: drops_by_reason(record),
        conservation: conservation(record),
        chips: record.chips.clone(),
        hol: record.hol.as_ref().map(hol_summary),
    }
}

#[cfg(test)]
mod tests {
    use super::{throughput_series, time_weighted_mean, MetricsConfig};
    use asic_net::records::{RunRecord, Series};

    /// A port at 25 Gb/s whose counter is sampled every 100 µs reads 25 Gb/s in every window,
    /// not 0 in nine 10 µs windows and 250 Gb/s in the tenth.
    #[test]
    fn counters_sampled_less_often_than_the_window_read_their_rate() {
        let period = 100_000_000; // 100 µs
        let record = RunRecord {
            duration_ps: 10 * period,
            series: vec![Series {
                name: "leaf0.port8.tx_bytes".into(),
                unit: "bytes".into(),
                // 25 Gb/s: 312,500 bytes per 100 µs
                points: (0..=10)
                    .map(|k| (k * period, k as f64 * 312_500.0))
                    .collect(),
            }],
            sample_period_ps: period,
            ..RunRecord::default()
        };
        let rates = throughput_series(&record, &MetricsConfig::default());
        let points = &rates[0].points;
        assert_eq!(points.len(), 10);
        assert!(
            points.iter().all(|&(_, g)| (g - 25.0).abs() < 1e-9),
            "{points:?}"
        );
    }

    #[test]
    fn a_window_is_weighted_from_the_value_in_force() {
        let s = Series {
            name: "q".into(),
            unit: "cells".into(),
            points: vec![(10, 4.0), (20, 8.0), (40, 0.0)],
        };
        // 4 for 5 ps, then 8 for 10 ps.
        assert_eq!(
            time_weighted_mean(&s.window(15, 30), 30),
            Some((4.0 * 5.0 + 8.0 * 10.0) / 15.0)
        );
    }
}
