//! The report code on hand-built run records: statistics on known data, the time-weighted
//! percentile worked by hand, CSV columns, a VCD that the `vcd` crate parses back, plots that
//! are written and decode, and sweeps whose merged order does not depend on thread timing.

use asic_net::records::{DropCount, FlowRecord, HostTotals, PauseEvent, RunRecord, Series};
use asic_report::metrics::{self, MetricsConfig};
use asic_report::sweep::{self, ParamValue, SweepSpec};
use asic_report::{self as report, plots, progress, tables, vcd as rvcd, ReportOptions, SeriesExt};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

fn flow(id: u64, size: u64, start: u64, fct: Option<u64>, ideal: u64) -> FlowRecord {
    FlowRecord {
        id,
        // h1 to h9: the record's hosts 1 and 0.
        src: 1,
        dst: 0,
        size_bytes: size,
        start_ps: start,
        end_ps: fct.map(|f| start + f),
        ideal_fct_ps: ideal,
        packets_sent: size.div_ceil(1000),
        retransmissions: id % 2,
        packets_dropped: id % 3,
    }
}

fn series(name: &str, unit: &str, points: &[(u64, f64)]) -> Series {
    Series {
        name: name.to_string(),
        unit: unit.to_string(),
        points: points.to_vec(),
    }
}

fn pause(at: u64, node: &str, port: u16, class: u16, paused: bool) -> PauseEvent {
    PauseEvent {
        at_ps: at,
        node: node.to_string(),
        port,
        kind: "pfc".to_string(),
        class,
        paused,
    }
}

/// A small but complete run: flows in every bucket, queue depths, a byte counter, pauses,
/// drops and trims, hosts.
fn sample_record() -> RunRecord {
    let mut flows = Vec::new();
    let sizes = [1_000u64, 10_000, 50_000, 100_000, 500_000, 2_000_000];
    for (i, &s) in sizes.iter().enumerate() {
        for k in 0..5u64 {
            let id = (i as u64) * 10 + k;
            let ideal = 1_000_000 + s * 80; // 1 µs + size at 100 Gb/s
            flows.push(flow(id, s, k * 1_000_000, Some(ideal * (k + 1)), ideal));
        }
    }
    flows.push(flow(99, 3_000_000, 0, None, 241_000_000));
    RunRecord {
        name: "sample".to_string(),
        duration_ps: 100_000_000,
        flows,
        queries: Vec::new(),
        series: vec![
            series(
                "leaf0.port3.q0.depth_cells",
                "cells",
                &[
                    (0, 0.0),
                    (10_000_000, 40.0),
                    (20_000_000, 12.0),
                    (60_000_000, 0.0),
                ],
            ),
            series(
                "leaf0.buffer_cells",
                "cells",
                &[(0, 0.0), (10_000_000, 52.0), (70_000_000, 3.0)],
            ),
            series(
                "spine1.port0.q1.depth_cells",
                "cells",
                &[(5_000_000, 7.0), (5_000_000, 9.0), (30_000_000, 1.0)],
            ),
            series(
                "leaf0.pipe0.occupancy",
                "packets",
                &[(0, 0.0), (1_000, 3.0), (2_000, 1.0)],
            ),
            series(
                "h1.tx_bytes",
                "bytes",
                &[(0, 0.0), (5_000_000, 62_500.0), (15_000_000, 125_000.0)],
            ),
            series(
                "leaf0.port3.ecn_fraction",
                "fraction",
                &[(0, 0.0), (50_000_000, 0.25)],
            ),
        ],
        sample_period_ps: 0,
        pauses: vec![
            pause(30_000_000, "leaf0", 3, 3, true),
            pause(10_000_000, "leaf0", 3, 3, true),
            pause(20_000_000, "leaf0", 3, 3, false),
            pause(90_000_000, "spine1", 0, 3, true),
        ],
        drops: vec![
            DropCount {
                node: "leaf0".to_string(),
                reason: "buffer_full".to_string(),
                packets: 4,
            },
            DropCount {
                node: "leaf0".to_string(),
                reason: "trimmed".to_string(),
                packets: 2,
            },
            DropCount {
                node: "h3".to_string(),
                reason: "buffer_full".to_string(),
                packets: 1,
            },
        ],
        consumed: Vec::new(),
        hosts: vec![
            HostTotals {
                host: "h9".to_string(),
                packets_sent: 0,
                packets_received: 95,
                packets_dropped: 0,
            },
            HostTotals {
                host: "h1".to_string(),
                packets_sent: 100,
                packets_received: 0,
                packets_dropped: 4,
            },
        ],
        chips: vec![],
        queue_snapshots: None,
        hol: None,
    }
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * b.abs().max(1e-12)
}

#[test]
fn slowdown_stats_on_known_data() {
    // Slowdowns 1, 2, …, 100: ideal 1000 ps, FCT k · 1000 ps.
    let flows: Vec<FlowRecord> = (1..=100)
        .map(|k| flow(k, 5_000, 0, Some(k * 1000), 1000))
        .collect();
    let b = metrics::fct_by_size(&flows, &[10_000]);
    assert_eq!(b.len(), 2);
    assert_eq!(b[0].label, "<=10KB");
    assert_eq!(b[1].label, ">10KB");
    let s = &b[0].slowdown;
    assert_eq!(s.count, 100);
    assert_eq!(b[1].flows, 0);
    assert_eq!(b[1].slowdown.p50, None);
    // HdrHistogram with 4 significant digits: within 0.01 %.
    assert!(close(s.p50.unwrap(), 50.0, 1e-4), "p50 {:?}", s.p50);
    assert!(close(s.p95.unwrap(), 95.0, 1e-4), "p95 {:?}", s.p95);
    assert!(close(s.p99.unwrap(), 99.0, 1e-4), "p99 {:?}", s.p99);
    // Below 16.384 a slowdown comes back exact to 0.001.
    let small: Vec<f64> = (1..=1000).map(|k| k as f64 * 0.016).collect();
    let st = metrics::hdr_stats(&small, metrics::SLOWDOWN_SCALE);
    assert_eq!(st.p50, Some(8.0));
    assert_eq!(st.p99, Some(15.84));
    // Mean and max are exact.
    assert_eq!(s.mean, Some(50.5));
    assert_eq!(s.max, Some(100.0));
    // FCT in µs: 0.001 … 0.1.
    assert!(close(b[0].fct_us.p50.unwrap(), 0.05, 1e-3));
    assert_eq!(b[0].fct_us.max, Some(0.1));
}

#[test]
fn size_buckets_edges_are_inclusive_and_incomplete_flows_counted() {
    let rec = sample_record();
    let b = metrics::fct_by_size(&rec.flows, &MetricsConfig::default().size_edges);
    let labels: Vec<&str> = b.iter().map(|b| b.label.as_str()).collect();
    assert_eq!(labels, ["<=10KB", "10KB-100KB", "100KB-1MB", ">1MB"]);
    let flows: Vec<u64> = b.iter().map(|b| b.flows).collect();
    // 1 KB and 10 KB; 50 KB and 100 KB; 500 KB; 2 MB and the incomplete 3 MB.
    assert_eq!(flows, [10, 10, 5, 6]);
    assert_eq!(b[3].completed, 5);
    assert_eq!(b[3].incomplete, 1);
    // Slowdowns are 1..=5 in every bucket.
    for x in &b {
        assert_eq!(x.slowdown.mean, Some(3.0));
        assert_eq!(x.slowdown.max, Some(5.0));
    }
    let fs = metrics::flow_summary(&rec.flows, &MetricsConfig::default());
    assert_eq!(fs.flows, 31);
    assert_eq!(fs.incomplete, 1);
    assert!(close(fs.short_flows_p99_slowdown.unwrap(), 5.0, 1e-3));
    assert_eq!(fs.long_flows_mean_slowdown, Some(3.0));
}

#[test]
fn time_weighted_percentiles_by_hand() {
    // Value 0 for 10 ps, 10 for 10 ps, 5 for 80 ps (until the end at 100).
    let s = series("n.q", "cells", &[(0, 0.0), (10, 10.0), (20, 5.0)]);
    let q = metrics::time_weighted_quantiles(&s, 100, &[0.05, 0.1, 0.5, 0.9, 0.95, 1.0]);
    // Sorted by value: 0 (10 ps, cum 10), 5 (80 ps, cum 90), 10 (10 ps, cum 100).
    assert_eq!(
        q,
        [
            Some(0.0),
            Some(0.0),
            Some(5.0),
            Some(5.0),
            Some(10.0),
            Some(10.0)
        ]
    );
    assert_eq!(metrics::time_weighted_mean(&s, 100), Some(5.0));
    // Sample-weighted (each point once: 0, 5, 10) gives another p90: that is why the report
    // weights by time.
    assert_eq!(metrics::sample_quantile(&[0.0, 10.0, 5.0], 0.9), Some(10.0));

    // Time before the first point is not counted: 2 for 25 ps, 4 for 25 ps.
    let s = series("n.q", "cells", &[(50, 2.0), (75, 4.0)]);
    assert_eq!(
        metrics::time_weighted_quantiles(&s, 100, &[0.5, 0.51]),
        [Some(2.0), Some(4.0)]
    );
    assert_eq!(metrics::time_weighted_mean(&s, 100), Some(3.0));
    let st = metrics::series_stats(&s, 100);
    assert_eq!(
        (st.node.as_str(), st.max, st.last),
        ("n", Some(4.0), Some(4.0))
    );

    // Empty series.
    let e = series("n.q", "cells", &[]);
    assert_eq!(metrics::time_weighted_quantiles(&e, 100, &[0.5]), [None]);
    assert_eq!(metrics::time_weighted_mean(&e, 100), None);
}

#[test]
fn windowed_rate_of_a_byte_counter() {
    let c = series(
        "h1.tx_bytes",
        "bytes",
        &[(0, 0.0), (1000, 125.0), (3000, 375.0)],
    );
    assert!(c.is_byte_counter());
    let r = metrics::windowed_rate(&c, 2000, 5000);
    assert_eq!(r.name, "h1.tx_bytes.rate");
    assert_eq!(r.unit, "Gb/s");
    // 125 B in 2000 ps = 500 Gb/s; 250 B in 2000 ps = 1000 Gb/s; nothing in the last 1000 ps.
    assert_eq!(r.points, [(0, 500.0), (2000, 1000.0), (4000, 0.0)]);
    assert!(!series("leaf0.q.depth", "bytes", &[]).is_byte_counter());
}

/// A counter sampled every 1000 ps at a steady 125 B per 1000 ps (1000 Gb/s) reads 1000 Gb/s
/// in every window: a point on a window's end counts the bytes sent up to it, in that window.
/// The last window, 500 ps long, has no point after its start, so nothing is known to have
/// been sent in it; it must never read more than the counter's rate.
#[test]
fn windowed_rate_of_a_sampled_counter_closes_each_window_with_its_boundary_point() {
    let points: Vec<(u64, f64)> = (0..=4).map(|k| (k * 1000, k as f64 * 125.0)).collect();
    let c = series("sw.port0.tx_bytes", "bytes", &points);
    let r = metrics::windowed_rate(&c, 2000, 4500);
    assert_eq!(r.points, [(0, 1000.0), (2000, 1000.0), (4000, 0.0)]);
}

#[test]
fn pauses_counted_and_timed() {
    let rec = sample_record();
    let p = metrics::pause_stats(&rec.pauses, rec.duration_ps);
    assert_eq!(p.len(), 2);
    let a = &p[0];
    assert_eq!(
        (a.node.as_str(), a.port, a.kind.as_str(), a.class),
        ("leaf0", 3, "pfc", 3)
    );
    // Replayed in time order: pause at 10 µs, resume at 20 µs, pause at 30 µs to the end.
    assert_eq!(a.pauses, 2);
    assert_eq!(a.pause_frames, 2);
    assert_eq!(a.paused_ps, 10_000_000 + 70_000_000);
    assert_eq!(a.longest_pause_ps, 70_000_000);
    assert!(a.paused_at_end);
    assert_eq!(p[1].node, "spine1");
    assert_eq!(p[1].paused_ps, 10_000_000);

    // A refresh while paused is a frame, not a new pause.
    let evs = [
        pause(100, "n", 1, 0, true),
        pause(150, "n", 1, 0, true),
        pause(300, "n", 1, 0, false),
        pause(400, "n", 1, 0, false),
    ];
    let p = metrics::pause_stats(&evs, 1000);
    assert_eq!(
        (p[0].pauses, p[0].pause_frames, p[0].paused_ps),
        (1, 2, 200)
    );
    assert!(!p[0].paused_at_end);
}

#[test]
fn drops_by_reason_and_conservation() {
    let rec = sample_record();
    let by_node = metrics::drops_by_node(&rec);
    let keys: Vec<(&str, &str, u64, bool)> = by_node
        .iter()
        .map(|d| (d.node.as_str(), d.reason.as_str(), d.packets, d.trim))
        .collect();
    assert_eq!(
        keys,
        [
            ("h3", "buffer_full", 1, false),
            ("leaf0", "buffer_full", 4, false),
            ("leaf0", "trimmed", 2, true)
        ]
    );
    let by_reason = metrics::drops_by_reason(&rec);
    assert_eq!(by_reason[0].packets, 5);
    assert_eq!(by_reason[1].reason, "trimmed");
    // h1's 100 data packets: 95 received, 4 dropped, so 1 still on a link; of the five
    // listed drops (the trim is not one), the fifth was not a host's data packet.
    let c = metrics::conservation(&rec);
    assert_eq!(
        (c.sent, c.received, c.dropped, c.in_flight, c.other_drops),
        (100, 95, 4, 1, 1)
    );
}

fn csv_header(path: &Path) -> Vec<String> {
    let mut r = csv::Reader::from_path(path).unwrap();
    r.headers().unwrap().iter().map(str::to_string).collect()
}

fn csv_rows(path: &Path) -> Vec<Vec<String>> {
    let mut r = csv::Reader::from_path(path).unwrap();
    r.records()
        .map(|x| x.unwrap().iter().map(str::to_string).collect())
        .collect()
}

/// Default options, with plots in the formats given.
fn with_plots(svg: bool, png: bool) -> ReportOptions {
    ReportOptions {
        plots: plots::PlotFormats { svg, png },
        ..ReportOptions::default()
    }
}

#[test]
fn write_run_writes_every_table_with_its_columns() {
    let dir = tempfile::tempdir().unwrap();
    let rec = sample_record();
    let opts = with_plots(false, false);
    let rep = report::write_run(&rec, dir.path(), &opts).unwrap();
    let d = dir.path();
    assert_eq!(
        csv_header(&d.join("flows.csv")),
        [
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
            "packets_dropped"
        ]
    );
    let flows = csv_rows(&d.join("flows.csv"));
    assert_eq!(flows.len(), 31);
    assert_eq!(flows[0][0], "0");
    assert_eq!(flows[30][0], "99");
    assert_eq!(flows[30][5], "", "incomplete flow has no end");
    // The record holds host indices; the table names the hosts.
    assert_eq!((flows[0][1].as_str(), flows[0][2].as_str()), ("h1", "h9"));
    assert_eq!(
        csv_header(&d.join("fct_by_size.csv"))[..7],
        [
            "bucket",
            "min_exclusive_bytes",
            "max_inclusive_bytes",
            "flows",
            "completed",
            "incomplete",
            "slowdown_mean"
        ]
    );
    let fct = csv_rows(&d.join("fct_by_size.csv"));
    let buckets: Vec<&str> = fct.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(
        buckets,
        ["<=10KB", "10KB-100KB", "100KB-1MB", ">1MB", "all"]
    );
    assert_eq!(fct[0][6], "3.000");
    assert_eq!(
        csv_header(&d.join("series.csv")),
        ["series", "unit", "time_ps", "value"]
    );
    let ser = csv_rows(&d.join("series.csv"));
    assert_eq!(ser[0][0], "h1.tx_bytes", "series sorted by name");
    assert_eq!(ser.len(), 4 + 3 + 3 + 3 + 3 + 2);
    assert_eq!(
        csv_header(&d.join("series_stats.csv")),
        ["series", "node", "unit", "points", "mean", "p50", "p95", "p99", "max", "last"]
    );
    let tp = csv_rows(&d.join("throughput.csv"));
    assert_eq!(tp.len(), 10, "10 windows of 10 µs in 100 µs");
    // 62 500 B in the first 10 µs = 50 Gb/s.
    assert_eq!(
        (tp[0][0].as_str(), tp[0][3].as_str()),
        ("h1.tx_bytes.rate", "50")
    );
    assert_eq!(
        csv_header(&d.join("pauses.csv")),
        [
            "node",
            "port",
            "kind",
            "class",
            "pauses",
            "pause_frames",
            "paused_ps",
            "paused_fraction",
            "longest_pause_ps",
            "paused_at_end"
        ]
    );
    assert_eq!(csv_rows(&d.join("pauses.csv"))[0][7], "0.800000");
    let pe = csv_rows(&d.join("pause_events.csv"));
    let times: Vec<&str> = pe.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(times, ["10000000", "20000000", "30000000", "90000000"]);
    assert_eq!(
        csv_header(&d.join("drops.csv")),
        ["node", "reason", "packets", "trim"]
    );
    assert_eq!(csv_rows(&d.join("drops.csv")).len(), 5);
    assert_eq!(
        csv_header(&d.join("hosts.csv")),
        ["host", "packets_sent", "packets_received"]
    );

    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("summary.json")).unwrap()).unwrap();
    for k in [
        "name",
        "duration_ps",
        "config",
        "flows",
        "fct_by_size",
        "series",
        "throughput",
        "pauses",
        "drops",
        "drops_by_reason",
        "conservation",
    ] {
        assert!(json.get(k).is_some(), "summary.json lacks {k}");
    }
    assert_eq!(json["flows"]["long_flows_mean_slowdown"], 3.0);
    let back: metrics::Summary =
        serde_json::from_str(&std::fs::read_to_string(d.join("summary.json")).unwrap()).unwrap();
    assert_eq!(back, rep.summary);

    assert!(rep.text.contains("FCT slowdown by flow size"));
    assert!(rep.text.contains("10KB-100KB"));
    assert!(rep.text.contains("buffer_full"));
    assert!(d.join("waveform.vcd").exists());
}

#[test]
fn outputs_are_byte_identical_across_runs() {
    let rec = sample_record();
    let opts = with_plots(true, false);
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let ra = report::write_run(&rec, a.path(), &opts).unwrap();
    let rb = report::write_run(&rec, b.path(), &opts).unwrap();
    assert_eq!(ra.files.len(), rb.files.len());
    for (fa, fb) in ra.files.iter().zip(&rb.files) {
        assert_eq!(fa.strip_prefix(a.path()), fb.strip_prefix(b.path()));
        assert_eq!(
            std::fs::read(fa).unwrap(),
            std::fs::read(fb).unwrap(),
            "{}",
            fa.display()
        );
    }
}

/// Replay a parsed VCD: the value of every variable id after each timestamp.
fn replay(bytes: &[u8]) -> (vcd::Header, Vec<(u64, vcd::IdCode, String)>) {
    let mut p = vcd::Parser::new(bytes);
    let header = p.parse_header().expect("VCD header parses");
    let mut t = 0;
    let mut out = Vec::new();
    for cmd in p {
        match cmd.expect("VCD body parses") {
            vcd::Command::Timestamp(x) => t = x,
            vcd::Command::ChangeScalar(id, v) => out.push((t, id, v.to_string())),
            vcd::Command::ChangeVector(id, v) => {
                let s: String = v.iter().map(|b| b.to_string()).collect();
                let n = if s.contains('x') {
                    "x".to_string()
                } else {
                    u64::from_str_radix(&s, 2).unwrap().to_string()
                };
                out.push((t, id, n));
            }
            vcd::Command::ChangeReal(id, v) => out.push((t, id, format!("{v}"))),
            _ => {}
        }
    }
    (header, out)
}

#[test]
fn vcd_round_trips_through_the_vcd_crate() {
    let rec = sample_record();
    let mut bytes = Vec::new();
    let n = rvcd::write_vcd(&mut bytes, &rec, &rvcd::VcdSelect::default()).unwrap();
    // 6 series + 2 pause wires.
    assert_eq!(n, 8);
    let (h, changes) = replay(&bytes);
    assert_eq!(h.timescale, Some((1, vcd::TimescaleUnit::PS)));
    assert_eq!(h.date, None, "no date: output is deterministic");

    let depth = h
        .find_var(&["sample", "leaf0", "port3_q0_depth_cells"])
        .expect("queue depth variable in the node's scope");
    assert_eq!(depth.var_type, vcd::VarType::Integer);
    assert_eq!(depth.size, 32);
    let of = |id: vcd::IdCode| -> Vec<(u64, String)> {
        changes
            .iter()
            .filter(|c| c.1 == id)
            .map(|c| (c.0, c.2.clone()))
            .collect()
    };
    let s = |v: &[(u64, &str)]| -> Vec<(u64, String)> {
        v.iter().map(|&(t, x)| (t, x.to_string())).collect()
    };
    assert_eq!(
        of(depth.code),
        s(&[
            (0, "0"),
            (10_000_000, "40"),
            (20_000_000, "12"),
            (60_000_000, "0")
        ])
    );
    // Two points at one instant: the last wins; x before the first point.
    let sp = h
        .find_var(&["sample", "spine1", "port0_q1_depth_cells"])
        .unwrap();
    assert_eq!(
        of(sp.code),
        s(&[(0, "x"), (5_000_000, "9"), (30_000_000, "1")])
    );
    // A fractional series is a real.
    let ecn = h
        .find_var(&["sample", "leaf0", "port3_ecn_fraction"])
        .unwrap();
    assert_eq!(ecn.var_type, vcd::VarType::Real);
    assert_eq!(of(ecn.code), s(&[(0, "0"), (50_000_000, "0.25")]));
    // Pipeline occupancy as an integer.
    let occ = h.find_var(&["sample", "leaf0", "pipe0_occupancy"]).unwrap();
    assert_eq!(occ.var_type, vcd::VarType::Integer);
    assert_eq!(of(occ.code), s(&[(0, "0"), (1_000, "3"), (2_000, "1")]));
    // Pause state: a 1-bit wire.
    let p = h
        .find_var(&["sample", "leaf0", "port3_pfc3_paused"])
        .unwrap();
    assert_eq!((p.var_type, p.size), (vcd::VarType::Wire, 1));
    assert_eq!(
        of(p.code),
        s(&[
            (0, "0"),
            (10_000_000, "1"),
            (20_000_000, "0"),
            (30_000_000, "1")
        ])
    );
    // The file ends at the end of the run.
    let text = String::from_utf8(bytes.clone()).unwrap();
    assert!(
        text.trim_end().ends_with("#100000000"),
        "{}",
        &text[text.len() - 40..]
    );
    assert!(text.contains("$timescale 1 ps $end"));

    // Selection: only depth series, no pauses.
    let mut sel = Vec::new();
    let n = rvcd::write_vcd(
        &mut sel,
        &rec,
        &rvcd::VcdSelect {
            series_containing: vec!["depth".to_string()],
            no_pauses: true,
        },
    )
    .unwrap();
    assert_eq!(n, 2);
    replay(&sel);
}

fn assert_png(path: &Path) {
    let dec = png::Decoder::new(std::fs::File::open(path).unwrap());
    let mut reader = dec.read_info().expect("PNG header decodes");
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).expect("PNG frame decodes");
    assert_eq!((info.width, info.height), plots::SIZE);
    let px = &buf[..info.buffer_size()];
    let dark = px.chunks(3).filter(|p| p.iter().all(|&c| c < 100)).count();
    assert!(
        dark > 1000,
        "{}: the picture has almost nothing drawn ({dark} dark pixels)",
        path.display()
    );
}

#[test]
fn plots_are_written_and_decode() {
    let dir = tempfile::tempdir().unwrap();
    let rec = sample_record();
    let rep = report::write_run(&rec, dir.path(), &ReportOptions::default()).unwrap();
    // To look at the pictures: REPORT_TEST_OUT=/some/dir cargo test --test asic report::plots
    if let Some(keep) = std::env::var_os("REPORT_TEST_OUT") {
        report::write_run(&rec, Path::new(&keep), &ReportOptions::default()).unwrap();
    }
    let pd = dir.path().join("plots");
    for stem in [
        "slowdown_by_size",
        "slowdown_cdf",
        "flow_size_cdf",
        "queue_depth",
        "buffer_occupancy",
        "throughput",
    ] {
        let svg = pd.join(format!("{stem}.svg"));
        let text = std::fs::read_to_string(&svg).unwrap();
        assert!(text.contains("<svg"), "{stem}.svg");
        assert!(text.contains("<text"), "{stem}.svg has text");
        assert!(
            text.contains("<polyline") || text.contains("<path"),
            "{stem}.svg has lines"
        );
        let png = pd.join(format!("{stem}.png"));
        assert!(std::fs::metadata(&png).unwrap().len() > 1000);
        assert_png(&png);
        assert!(rep.files.contains(&png));
    }
    let svg = std::fs::read_to_string(pd.join("queue_depth.svg")).unwrap();
    assert!(svg.contains("simulated time (us)"));
    assert!(svg.contains("leaf0.port3.q0.depth_cells"));

    // Nothing to draw still gives a picture.
    let empty = RunRecord::default();
    let p = dir.path().join("empty.png");
    plots::plot_slowdown_by_size(&metrics::fct_by_size(&empty.flows, &[10_000]), None, &p).unwrap();
    assert!(std::fs::metadata(&p).unwrap().len() > 0);
    assert!(plots::plot_cdf(&dir.path().join("x.txt"), "t", "x", "flows", &[], false).is_err());
}

/// The PNG's pixels as RGB triples, row by row.
fn png_pixels(path: &Path) -> Vec<[u8; 3]> {
    let dec = png::Decoder::new(std::fs::File::open(path).unwrap());
    let mut reader = dec.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    buf[..info.buffer_size()]
        .chunks(3)
        .map(|p| [p[0], p[1], p[2]])
        .collect()
}

/// Pixels of a series' colour (text, axes and grid are grey) in the margins of a PNG
/// plot: under the x axis's tick labels, left of the y axis's, and above the plot area.
fn coloured_pixels_in_margins(path: &Path) -> usize {
    let (w, h) = (plots::SIZE.0 as usize, plots::SIZE.1 as usize);
    png_pixels(path)
        .iter()
        .enumerate()
        .filter(|(i, _)| {
            let (x, y) = (i % w, i / w);
            y < 30 || y >= h - 40 || x < 50
        })
        .filter(|(_, p)| p.iter().max().unwrap() - p.iter().min().unwrap() > 80)
        .count()
}

#[test]
fn png_curves_stay_inside_the_plot_area() {
    // A queue that fills and drains many times per pixel: the step line goes up and back
    // down a pixel to the right, everywhere (issue #20's BFC testbed queue).
    let points: Vec<(u64, f64)> = (0..200_000u64)
        .map(|i| (i * 500, if i % 3 == 0 { 0.0 } else { (i % 250) as f64 }))
        .collect();
    let s = series("tb.port2.q0.depth_cells", "cells", &points);
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("q.png");
    plots::plot_series(&p, "q", "depth (cells)", &[&s], 100_000_000).unwrap();
    assert_eq!(coloured_pixels_in_margins(&p), 0, "{}", p.display());
}

#[test]
fn time_plots_draw_the_most_active_series() {
    // Twenty queues whose depth grows with their name (alphabetical order would pick the
    // idlest), one that is idle but for a huge instant, and one that is deep for the last
    // tenth of the run only: deep-ish over the run, not deepest while it lasts.
    let end = 1_000_000u64;
    let mut all: Vec<Series> = (0..20)
        .map(|k| {
            series(
                &format!("n{k:02}.depth_cells"),
                "cells",
                &[(0, k as f64 + 1.0)],
            )
        })
        .collect();
    all.push(series(
        "blip.depth_cells",
        "cells",
        &[(0, 0.0), (500_000, 1000.0), (500_001, 0.0)],
    ));
    all.push(series("late.depth_cells", "cells", &[(900_000, 150.0)]));
    let refs: Vec<&Series> = all.iter().collect();
    let (chosen, left_out) = plots::most_active(&refs, end);
    let names: Vec<&str> = chosen.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "n19.depth_cells",
            "n18.depth_cells",
            "n17.depth_cells",
            "n16.depth_cells",
            "n15.depth_cells",
            // 150 for a tenth of the run: a mean of 15 as n14's, and the higher peak.
            "late.depth_cells",
            "n14.depth_cells",
            "n13.depth_cells",
        ]
    );
    assert_eq!(left_out, 22 - plots::MAX_SERIES_PER_PLOT);

    // The plot names them in its legend and says how many it left out and why.
    let rec = RunRecord {
        name: "busy".into(),
        duration_ps: end,
        series: all.clone(),
        ..RunRecord::default()
    };
    let dir = tempfile::tempdir().unwrap();
    let formats = plots::PlotFormats {
        svg: true,
        png: false,
    };
    let summary = metrics::summarize(&rec, &MetricsConfig::default());
    plots::write_run_plots(&rec, &summary, &[], dir.path(), formats).unwrap();
    let svg = std::fs::read_to_string(dir.path().join("queue_depth.svg")).unwrap();
    for n in &names {
        assert!(svg.contains(n), "{n} drawn");
    }
    for n in ["n00.depth_cells", "n12.depth_cells", "blip.depth_cells"] {
        assert!(!svg.contains(n), "{n} left out");
    }
    assert!(
        svg.contains("8 of 22 series: the largest time-weighted means over the run"),
        "the note says what was left out"
    );
}

/// The texts of an SVG's `<text>` elements.
fn svg_texts(svg: &str) -> Vec<&str> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| Some(t[t.find('>')? + 1..t.find("</text>")?].trim()))
        .collect()
}

#[test]
fn log_axes_label_their_ticks() {
    let dir = tempfile::tempdir().unwrap();
    let cdf = |name: &str, values: Vec<f64>| {
        let p = dir.path().join(name);
        plots::plot_cdf(&p, "t", "v", "flows", &[("c".to_string(), values)], true).unwrap();
        std::fs::read_to_string(p).unwrap()
    };
    // Within one decade and one 1-2-5 step: round numbers, evenly spaced.
    let narrow = cdf("narrow.svg", vec![120.0, 150.0, 180.0]);
    let texts = svg_texts(&narrow);
    for label in ["120", "140", "160", "180"] {
        assert!(texts.contains(&label), "{label} in {texts:?}");
    }
    // Over two decades: 1-2-5.
    let two = cdf("two.svg", vec![1.5, 30.0, 90.0]);
    let texts = svg_texts(&two);
    for label in ["2", "5", "10", "20", "50"] {
        assert!(texts.contains(&label), "{label} in {texts:?}");
    }
    // Over six: the decades.
    let wide = cdf("wide.svg", vec![1.0, 1e3, 1e6]);
    let texts = svg_texts(&wide);
    for label in ["1", "10", "100", "1000", "10000", "100000", "1e6"] {
        assert!(texts.contains(&label), "{label} in {texts:?}");
    }
    assert!(!texts.contains(&"20"), "not 1-2-5 when there are decades");
}

#[test]
fn slowdown_by_size_draws_buckets_as_categories_and_all_apart() {
    let dir = tempfile::tempdir().unwrap();
    let rec = sample_record();
    let opts = with_plots(true, false);
    report::write_run(&rec, dir.path(), &opts).unwrap();
    let svg = std::fs::read_to_string(dir.path().join("plots/slowdown_by_size.svg")).unwrap();
    // A dot per statistic (p50, mean, p99) per bucket, and one per legend entry.
    let buckets = MetricsConfig::default().size_edges.len() + 1;
    assert_eq!(svg.matches("<circle").count(), 3 * buckets + 3);
    // No line joins them: the only lines are black axes and grey grid and separators.
    for line in svg.split('<').filter(|e| e.starts_with("polyline")) {
        let stroke = &line[line.find("stroke=\"#").unwrap() + 9..][..6];
        let grey = stroke[0..2] == stroke[2..4] && stroke[2..4] == stroke[4..6];
        assert!(grey, "a coloured line: {line}");
    }
    // "all" is no bucket on the x axis, but its numbers are in the note.
    let texts = svg_texts(&svg);
    assert!(!texts.iter().any(|t| t.starts_with("all (")), "{texts:?}");
    assert!(
        texts
            .iter()
            .any(|t| t.starts_with("all 30 completed flows: p50 ")),
        "{texts:?}"
    );
}

#[test]
fn sweep_grid_from_ron_and_deterministic_merge() {
    let spec = SweepSpec::parse(
        r#"(base: "scenarios/incast.ron", grid: { "seed": [1, 2], "load": [0.3, 0.6], "cc": ["dcqcn"] })"#,
        "sweep.ron",
    )
    .unwrap();
    assert_eq!(spec.base, "scenarios/incast.ron");
    assert_eq!(
        spec.base_path(Path::new("exp/sweep.ron")),
        Path::new("exp/scenarios/incast.ron")
    );
    let pts = spec.points();
    let labels: Vec<String> = pts.iter().map(|p| p.label()).collect();
    assert_eq!(
        labels,
        [
            "cc=dcqcn,load=0.3,seed=1",
            "cc=dcqcn,load=0.3,seed=2",
            "cc=dcqcn,load=0.6,seed=1",
            "cc=dcqcn,load=0.6,seed=2"
        ]
    );
    assert_eq!(pts[3].get("seed"), Some(&ParamValue::Int(2)));
    assert_eq!(pts[2].get("load").and_then(ParamValue::as_f64), Some(0.6));
    assert_eq!(pts[1].dir_name(), "0001_cc-dcqcn_load-0.3_seed-2");

    // Points finish in reverse order; the table is still in point order. One point fails,
    // one panics, one reports an extra column.
    let run = |p: &sweep::Point| -> Result<sweep::Row, String> {
        std::thread::sleep(Duration::from_millis(10 * (4 - p.index as u64)));
        match p.index {
            1 => Err("no route".to_string()),
            2 => panic!("boom"),
            _ => {
                let load = p.get("load").and_then(ParamValue::as_f64).unwrap();
                let mut row = vec![("p99".to_string(), format!("{:.1}", load * 10.0))];
                if p.index == 3 {
                    row.push(("extra".to_string(), "x".to_string()));
                }
                Ok(row)
            }
        }
    };
    let results = sweep::run_sweep(&pts, 4, run);
    let table = sweep::merge(&pts, &results);
    assert_eq!(
        table.columns,
        ["point", "cc", "load", "seed", "status", "p99", "extra"]
    );
    assert_eq!(
        table.rows,
        [
            ["0", "dcqcn", "0.3", "1", "ok", "3.0", ""],
            ["1", "dcqcn", "0.3", "2", "no route", "", ""],
            ["2", "dcqcn", "0.6", "1", "panicked: boom", "", ""],
            ["3", "dcqcn", "0.6", "2", "ok", "6.0", "x"],
        ]
    );
    // Same table with one thread.
    assert_eq!(sweep::merge(&pts, &sweep::run_sweep(&pts, 1, run)), table);
    let mut csv_out = Vec::new();
    table.write_csv(&mut csv_out).unwrap();
    let csv_text = String::from_utf8(csv_out).unwrap();
    assert!(csv_text.starts_with("point,cc,load,seed,status,p99,extra\n0,dcqcn,0.3,1,ok,3.0,\n"));
    assert!(table.to_text().contains("panicked: boom"));

    // Bad specs name the problem.
    let e = SweepSpec::parse(r#"(base: "b", grid: { "x": [] })"#, "s.ron").unwrap_err();
    assert!(e.contains("\"x\" has no values"), "{e}");
    let e = SweepSpec::parse(r#"(base: "b", grid: { "x": [[1]] })"#, "s.ron").unwrap_err();
    assert!(e.starts_with("s.ron"), "{e}");
    let e = SweepSpec::parse("(base: 3)", "s.ron").unwrap_err();
    assert!(e.starts_with("s.ron:1:"), "{e}");
    // An empty grid is one point.
    let one = sweep::expand_grid(&BTreeMap::new());
    assert_eq!(one.len(), 1);
    assert_eq!(one[0].label(), "");
}

/// A sweep's figure: `y` against the numeric key `x`, a curve per combination of the other
/// keys that vary (a key with one value stays out of the legend; a value's name alone where
/// the names differ), failed points and cells without a number left out, points in x order
/// whatever the grid's; the files are drawn.
#[test]
fn sweep_plots_draw_a_curve_per_combination_of_the_other_keys() {
    let spec = SweepSpec::parse(
        r#"(base: "b.ron", grid: { "buffer": ["Dt(a: 1)", "Fb(a: 2)"], "burst": [9, 2, 5], "seed": [1] },
            plots: [(name: "fig7a", title: "Burst absorption", x: "burst", y: "pct",
                     y_desc: Some("queries without a drop (%)"))])"#,
        "s.ron",
    )
    .unwrap();
    let pts = spec.points();
    let results = sweep::run_sweep(&pts, 2, |p| {
        let burst = p.get("burst").and_then(ParamValue::as_f64).unwrap();
        let fb = p.get("buffer") == Some(&ParamValue::Str("Fb(a: 2)".into()));
        match (fb, burst as u32) {
            (false, 5) => Err("failed".into()),
            (true, 2) => Ok(vec![("pct".into(), "-".into())]),
            _ => Ok(vec![(
                "pct".into(),
                format!("{}", 100.0 - burst * if fb { 1.0 } else { 5.0 }),
            )]),
        }
    });
    let table = sweep::merge(&pts, &results);
    let keys: Vec<String> = spec.grid.keys().cloned().collect();
    let curves = table.curves(&spec.plots[0], &keys).unwrap();
    assert_eq!(
        curves,
        [
            ("buffer=Dt".to_string(), vec![(2.0, 90.0), (9.0, 55.0)]),
            ("buffer=Fb".to_string(), vec![(5.0, 95.0), (9.0, 91.0)]),
        ]
    );
    let dir = tempfile::tempdir().unwrap();
    let files = sweep::write_plots(&table, &spec, dir.path()).unwrap();
    assert_eq!(files.len(), 2);
    for f in &files {
        assert!(
            std::fs::metadata(f).unwrap().len() > 1000,
            "{}",
            f.display()
        );
    }
    let svg = std::fs::read_to_string(dir.path().join("plots/fig7a.svg")).unwrap();
    assert!(
        svg.contains("Burst absorption") && svg.contains("buffer=Fb"),
        "{svg}"
    );
    // Names that do not tell the curves apart are given whole.
    let twins = SweepSpec::parse(
        r#"(base: "b", grid: { "buffer": ["Fba(p: 1)", "Fba(p: 2)"], "burst": [1] },
            plots: [(name: "a", title: "t", x: "burst", y: "v")])"#,
        "s.ron",
    )
    .unwrap();
    let tp = twins.points();
    let rows = sweep::run_sweep(&tp, 1, |_| Ok(vec![("v".to_string(), "1".to_string())]));
    let labels: Vec<String> = sweep::merge(&tp, &rows)
        .curves(&twins.plots[0], &["buffer".into(), "burst".into()])
        .unwrap()
        .into_iter()
        .map(|c| c.0)
        .collect();
    assert_eq!(labels, ["buffer=Fba(p: 1)", "buffer=Fba(p: 2)"]);
    // A column the table lacks, and bad specs, are named.
    let mut bad = spec.plots[0].clone();
    bad.y = "pcts".into();
    let e = table.curves(&bad, &keys).unwrap_err();
    assert!(
        e.contains("y \"pcts\" is not a column of the table (its columns: point, buffer"),
        "{e}"
    );
    for (plots, says) in [
        (
            r#"[(name: "a b", title: "t", x: "burst", y: "p")]"#,
            "plots[0]: name \"a b\" is a file name",
        ),
        (
            r#"[(name: "a", title: "t", x: "load", y: "p")]"#,
            "plots[0]: x \"load\" is not a grid key (the grid's: buffer, burst)",
        ),
        (
            r#"[(name: "a", title: "t", x: "buffer", y: "p")]"#,
            "x \"buffer\" takes values that are not numbers",
        ),
        (
            r#"[(name: "a", title: "t", x: "burst", y: "p"), (name: "a", title: "u", x: "burst", y: "q")]"#,
            "plots[1]: a second plot named \"a\"",
        ),
        (
            r#"[(name: "a", title: "t", x: "burst", y: "p", z: 1)]"#,
            "z",
        ),
    ] {
        let e = SweepSpec::parse(
            &format!(r#"(base: "b", grid: {{ "buffer": ["Dt"], "burst": [1] }}, plots: {plots})"#),
            "s.ron",
        )
        .unwrap_err();
        assert!(e.starts_with("s.ron") && e.contains(says), "{plots}: {e}");
    }
}

#[test]
fn progress_stays_hidden_for_short_runs_and_off_terminal() {
    let mut p = progress::SimProgress::with_enabled("run", true);
    for i in 0..100_000u64 {
        p.tick(i, 100_000);
    }
    assert!(!p.is_visible(), "shown only after 2 s of wall time");
    p.finish();
    let mut h = progress::SimProgress::hidden();
    h.tick(1, 2);
    assert!(!h.is_visible());
    // Tests do not run on a terminal's stderr under CI; in any case new() is safe to tick.
    let mut n = progress::SimProgress::new("x");
    n.tick(0, 0);
}

#[test]
fn text_table_aligns_numbers_right() {
    let mut t = tables::TextTable::new(&["name", "value"]);
    t.row(vec!["a".to_string(), "1.5".to_string()]);
    t.row(vec!["long name".to_string(), "100.25".to_string()]);
    assert_eq!(
        t.render(),
        "name       value\n---------  ------\na             1.5\nlong name  100.25\n"
    );
}

#[test]
fn long_series_are_decimated_keeping_spikes() {
    let mut pts: Vec<(f64, f64)> = (0..200_000).map(|i| (i as f64, (i % 7) as f64)).collect();
    pts[123_457].1 = 1000.0;
    let d = plots::decimate(pts.clone());
    assert!(d.len() <= plots::MAX_POINTS + 4, "{}", d.len());
    assert!(d.windows(2).all(|w| w[0].0 <= w[1].0), "x order kept");
    assert!(d.contains(&(123_457.0, 1000.0)), "the spike survives");
    assert_eq!((d[0], d[d.len() - 1]), (pts[0], pts[pts.len() - 1]));
    let short = vec![(0.0, 1.0), (1.0, 2.0)];
    assert_eq!(plots::decimate(short.clone()), short);

    // A million-point queue gives a plot of bounded size.
    let s = series(
        "leaf0.q.depth_cells",
        "cells",
        &(0..1_000_000u64)
            .map(|i| (i * 1000, (i % 100) as f64))
            .collect::<Vec<_>>(),
    );
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("q.svg");
    plots::plot_series(&p, "q", "depth (cells)", &[&s], 1_000_000_000).unwrap();
    let len = std::fs::metadata(&p).unwrap().len();
    assert!(len < 400_000, "{len} bytes");
}
