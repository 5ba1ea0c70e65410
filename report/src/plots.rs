//! Plots of a run, as SVG or PNG (chosen by the file's extension), drawn with `plotters`.
//!
//! Why `plotters`: pure Rust, one drawing API for both SVG and bitmap output, no system
//! libraries. It is built without its default `ttf` feature (which looks fonts up through
//! fontconfig and the system's font files, missing on a bare CI machine) and with
//! `ab_glyph` instead, which draws text from font bytes the program registers. The font is
//! DejaVu Sans, embedded from the `dejavu` crate and registered under the `sans-serif` family
//! on first use ([`ensure_fonts`]), so text renders the same on every machine, offline.
//!
//! Charts:
//! - [`plot_slowdown_by_size`]: p50, mean and p99 FCT slowdown per flow size bucket (log y),
//!   as labelled dots per bucket (buckets are categories), all flows' numbers in a note.
//! - [`plot_cdf`]: empirical CDFs of one or more sets of values (e.g. slowdown, flow size),
//!   optionally on a log x axis.
//!
//! A log axis is labelled at decades, 1-2-5 steps or round numbers, whichever gives at least
//! three labels over its range (see `log_ticks`).
//! - [`plot_series`]: series over time as step lines (a value holds until the next point),
//!   x in microseconds of simulated time: at most [`MAX_SERIES_PER_PLOT`], the most active
//!   by [`most_active`]'s rule, with a note under the title saying how many were left out.
//!
//! Legends stand in a column right of the plot area, where they hide no data.
//!
//! [`write_run_plots`] draws the standard set for a run.

use crate::metrics::{time_weighted_mean, BucketStats, Summary};
use asic_net::records::{RunRecord, Series};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::{Path, PathBuf};
use std::sync::Once;

/// Default picture size in pixels (SVG user units).
pub const SIZE: (u32, u32) = (900, 560);

static FONTS: Once = Once::new();

/// Register the embedded DejaVu Sans regular and bold as `sans-serif` (once per process;
/// other styles fall back to regular, and only these two fonts are linked into the binary).
pub fn ensure_fonts() {
    FONTS.call_once(|| {
        use plotters::style::{register_font, FontStyle};
        // The bytes are valid TrueType fonts shipped by the `dejavu` crate.
        let _ = register_font("sans-serif", FontStyle::Normal, dejavu::sans::regular());
        let _ = register_font("sans-serif", FontStyle::Bold, dejavu::sans::bold());
    });
}

/// A curve of [`Chart::Lines`]: its legend and its points in x order.
pub type Curve = (String, Vec<(f64, f64)>);

/// One chart to draw.
#[derive(Clone, Debug)]
pub enum Chart<'a> {
    /// Slowdown statistics per size bucket.
    SlowdownBySize {
        /// Buckets in order.
        buckets: &'a [BucketStats],
        /// All flows together, noted under the title.
        all: Option<&'a BucketStats>,
    },
    /// Empirical CDFs.
    Cdf {
        /// Title.
        title: &'a str,
        /// X axis description, with unit.
        x_desc: &'a str,
        /// What each value is one of ("flows", "headers"): the y axis is the fraction of them.
        of: &'a str,
        /// (legend, values) per curve.
        curves: &'a [(String, Vec<f64>)],
        /// Log-scaled x axis (values must be > 0; others are left out).
        log_x: bool,
    },
    /// Curves through measured points, each point marked (a figure of a parameter sweep:
    /// one curve per combination of the other parameters).
    Lines {
        /// Title.
        title: &'a str,
        /// X axis description, with unit.
        x_desc: &'a str,
        /// Y axis description, with unit.
        y_desc: &'a str,
        /// The curves.
        curves: &'a [Curve],
    },
    /// Series over time.
    Series {
        /// Title.
        title: &'a str,
        /// Y axis description, with unit.
        y_desc: &'a str,
        /// The series.
        series: &'a [&'a Series],
        /// End of the run (ps): the last value holds until here.
        end_ps: u64,
    },
}

fn err<E: std::fmt::Debug>(e: E) -> String {
    format!("cannot draw: {e:?}")
}

/// Draw `chart` into `path`: SVG if it ends in `.svg`, PNG if `.png`.
pub fn write_chart(path: &Path, chart: &Chart) -> Result<(), String> {
    ensure_fonts();
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let r = match ext.as_deref() {
        Some("svg") => draw(
            SVGBackend::new(path, SIZE).into_drawing_area(),
            chart,
            Stroke::Polyline,
        ),
        Some("png") => draw(
            BitMapBackend::new(path, SIZE).into_drawing_area(),
            chart,
            Stroke::Segments,
        ),
        _ => return Err(format!("{}: plots are .svg or .png", path.display())),
    };
    r.map_err(|e| format!("{}: {e}", path.display()))
}

/// How a curve reaches the backend.
///
/// `plotters`' bitmap backend fills a thick polyline as one polygon whose corners it computes
/// itself, and where the line nearly reverses (a step up and back down one pixel to the
/// right, everywhere in a dense queue or rate series) the inner corner lands hundreds of
/// pixels away: the spikes through the tick labels and the stray dots of issue #20. A PNG's
/// curves are therefore drawn one segment at a time, each its own short rectangle, which no
/// corner can throw out of the plot area. An SVG keeps one polyline per curve: the viewer
/// joins its segments within its miter limit, and one element per segment would make the file
/// several times larger.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stroke {
    Polyline,
    Segments,
}

/// Draw `pts` as one curve of `chart` in `style`, the way `stroke` says.
fn draw_curve<DB, X, Y>(
    chart: &mut ChartContext<DB, Cartesian2d<X, Y>>,
    pts: Vec<(X::ValueType, Y::ValueType)>,
    style: ShapeStyle,
    stroke: Stroke,
) -> Result<(), String>
where
    DB: DrawingBackend,
    DB::ErrorType: 'static,
    X: Ranged,
    Y: Ranged,
    X::ValueType: Clone + 'static,
    Y::ValueType: Clone + 'static,
{
    match stroke {
        Stroke::Polyline => chart.draw_series(LineSeries::new(pts, style)).map(drop),
        Stroke::Segments => chart
            .draw_series(
                pts.windows(2)
                    .map(|w| PathElement::new(vec![w[0].clone(), w[1].clone()], style)),
            )
            .map(drop),
    }
    .map_err(err)
}

fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    chart: &Chart,
    stroke: Stroke,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(err)?;
    match chart {
        Chart::SlowdownBySize { buckets, all } => draw_slowdown(&root, buckets, *all)?,
        Chart::Cdf {
            title,
            x_desc,
            of,
            curves,
            log_x,
        } => draw_cdf(&root, title, x_desc, of, curves, *log_x, stroke)?,
        Chart::Lines {
            title,
            x_desc,
            y_desc,
            curves,
        } => draw_lines(&root, title, x_desc, y_desc, curves, stroke)?,
        Chart::Series {
            title,
            y_desc,
            series,
            end_ps,
        } => draw_series(&root, title, y_desc, series, *end_ps, stroke)?,
    }
    root.present().map_err(err)
}

fn no_data<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, title: &str) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    root.titled(title, ("sans-serif", 22)).map_err(err)?;
    root.draw(&Text::new(
        "no data",
        (SIZE.0 as i32 / 2 - 30, SIZE.1 as i32 / 2),
        ("sans-serif", 18),
    ))
    .map_err(err)?;
    Ok(())
}

/// A statistic drawn per bucket: legend name, offset from the bucket's centre in hundredths
/// of a bucket, and where the value is.
type BucketStat = (&'static str, i32, fn(&BucketStats) -> Option<f64>);

/// The statistics drawn per bucket.
const BUCKET_STATS: [BucketStat; 3] = [
    ("p50", -22, |b| b.slowdown.p50),
    ("mean", 0, |b| b.slowdown.mean),
    ("p99", 22, |b| b.slowdown.p99),
];

/// A slowdown that a log axis can show.
fn positive(v: Option<f64>) -> Option<f64> {
    v.filter(|v| v.is_finite() && *v > 0.0)
}

/// Size buckets are categories: each gets its p50, mean and p99 as labelled dots side by
/// side, with no line from one bucket to the next (a line would suggest values between
/// buckets). `all` is not a bucket: its numbers are the note under the title.
fn draw_slowdown<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    buckets: &[BucketStats],
    all: Option<&BucketStats>,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let title = "FCT slowdown by flow size";
    let values: Vec<f64> = buckets
        .iter()
        .flat_map(|b| BUCKET_STATS.iter().filter_map(|s| positive(s.2(b))))
        .collect();
    if values.is_empty() {
        return no_data(root, title);
    }
    let note = all.map_or(String::new(), |a| {
        let num = |v: Option<f64>| v.map_or("-".to_string(), short_num);
        format!(
            "all {} completed flows: p50 {}, mean {}, p99 {}",
            a.completed,
            num(a.slowdown.p50),
            num(a.slowdown.mean),
            num(a.slowdown.p99)
        )
    });
    let area = frame(root, title, &note)?;
    let names = BUCKET_STATS.map(|s| s.0);
    let (plot, legend) = with_legend_column(&area, &names)?;
    // 1 (the ideal FCT) always in range; room above the highest dot for its label.
    let lo = values.iter().cloned().fold(1.0f64, f64::min) * 0.9;
    let hi = values.iter().cloned().fold(1.0f64, f64::max) * 1.5;
    let labels: Vec<String> = buckets
        .iter()
        .map(|b| format!("{} ({})", b.label, b.completed))
        .collect();
    // x in hundredths of a bucket, bucket i centred on 100 i: an integer axis, which takes
    // chosen tick positions and a label formatter (plotters' f64 axis does not take both).
    let n = buckets.len() as i32;
    let (labelled, grid) = log_ticks(lo, hi);
    let y = (lo..hi)
        .log_scale()
        .with_key_points(labelled)
        .with_light_points(grid);
    let x = (-50..100 * n - 50).with_key_points((0..n).map(|i| 100 * i).collect());
    let mut chart = ChartBuilder::on(&plot)
        .margin(12)
        .x_label_area_size(50)
        .y_label_area_size(70)
        .build_cartesian_2d(x, y)
        .map_err(err)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_desc("flow size bucket (completed flows)")
        .y_desc("FCT slowdown (FCT / ideal FCT)")
        .x_label_formatter(&|v| {
            let i = usize::try_from(v / 100).unwrap_or(usize::MAX);
            labels.get(i).cloned().unwrap_or_default()
        })
        .y_label_formatter(&|v| short_num(*v))
        .draw()
        .map_err(err)?;
    let separator = RGBColor(200, 200, 200);
    chart
        .draw_series((1..n).map(|i| {
            let x = 100 * i - 50;
            PathElement::new(vec![(x, lo), (x, hi)], separator)
        }))
        .map_err(err)?;
    let label_style = TextStyle::from(("sans-serif", 12)).pos(Pos::new(HPos::Center, VPos::Bottom));
    for (k, (_, offset, stat)) in BUCKET_STATS.iter().enumerate() {
        let c = color(k);
        let dots = buckets.iter().enumerate().filter_map(|(i, b)| {
            positive(stat(b)).map(|v| {
                EmptyElement::at((100 * i as i32 + offset, v))
                    + Circle::new((0, 0), 5, c.filled())
                    + Text::new(short_num(v), (0, -8), label_style.clone())
            })
        });
        chart.draw_series(dots).map_err(err)?;
    }
    draw_legend(&legend, &names, Swatch::Dot)
}

fn draw_cdf<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    x_desc: &str,
    of: &str,
    curves: &[(String, Vec<f64>)],
    log_x: bool,
    stroke: Stroke,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let prepared: Vec<(&str, Vec<f64>)> = curves
        .iter()
        .map(|(n, vs)| {
            let mut v: Vec<f64> = vs
                .iter()
                .cloned()
                .filter(|v| v.is_finite() && (!log_x || *v > 0.0))
                .collect();
            v.sort_by(f64::total_cmp);
            (n.as_str(), v)
        })
        .filter(|(_, v)| !v.is_empty())
        .collect();
    if prepared.is_empty() {
        return no_data(root, title);
    }
    let lo = prepared
        .iter()
        .map(|c| c.1[0])
        .fold(f64::INFINITY, f64::min);
    let hi = prepared
        .iter()
        .map(|c| c.1[c.1.len() - 1])
        .fold(f64::NEG_INFINITY, f64::max);
    let area = frame(root, title, "")?;
    let names: Vec<&str> = prepared.iter().map(|c| c.0).collect();
    let (plot, legend) = with_legend_column(&area, &names)?;
    let builder = |x_label: u32| {
        let mut b = ChartBuilder::on(&plot);
        b.margin(12)
            .x_label_area_size(x_label)
            .y_label_area_size(60);
        b
    };
    // The same drawing on a linear or a logarithmic x axis (different coordinate types).
    macro_rules! body {
        ($chart:expr, $desc:expr) => {{
            let mut chart = $chart;
            chart
                .configure_mesh()
                .x_desc($desc)
                .y_desc(format!("fraction of {of} (CDF)"))
                .x_label_formatter(&|v| short_num(*v))
                .y_label_formatter(&|v| format!("{v:.1}"))
                .draw()
                .map_err(err)?;
            for (i, (_, v)) in prepared.iter().enumerate() {
                let n = v.len() as f64;
                let mut pts = Vec::with_capacity(2 * v.len());
                for (k, &x) in v.iter().enumerate() {
                    pts.push((x, k as f64 / n));
                    pts.push((x, (k + 1) as f64 / n));
                }
                draw_curve(&mut chart, decimate(pts), color(i).stroke_width(2), stroke)?;
            }
        }};
    }
    if log_x {
        let (lo, hi) = if hi / lo < 1.5 {
            (lo / 1.25, hi * 1.25)
        } else {
            (lo / 1.05, hi * 1.05)
        };
        let (labelled, grid) = log_ticks(lo, hi);
        let x = (lo..hi)
            .log_scale()
            .with_key_points(labelled)
            .with_light_points(grid);
        body!(
            builder(50)
                .build_cartesian_2d(x, 0f64..1.02f64)
                .map_err(err)?,
            format!("{x_desc} (log scale)")
        );
    } else {
        let (lo, hi) = padded(lo, hi, 0.03);
        body!(
            builder(50)
                .build_cartesian_2d(lo..hi, 0f64..1.02f64)
                .map_err(err)?,
            x_desc.to_string()
        );
    }
    draw_legend(&legend, &names, Swatch::Line)
}

/// A linear axis' range around `lo..hi`: `fraction` of the span beyond each end, or half a
/// unit each way when the values are all one.
fn padded(lo: f64, hi: f64, fraction: f64) -> (f64, f64) {
    if hi - lo < 1e-9 {
        (lo - 0.5, hi + 0.5)
    } else {
        let pad = (hi - lo) * fraction;
        (lo - pad, hi + pad)
    }
}

/// Linear axes around every point (the y axis from 0 when no value is negative, as a
/// paper's figure of percentages or rates has it), a line through each curve's points and a
/// dot on each.
fn draw_lines<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    x_desc: &str,
    y_desc: &str,
    curves: &[Curve],
    stroke: Stroke,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let finite = |p: &&(f64, f64)| p.0.is_finite() && p.1.is_finite();
    let all: Vec<(f64, f64)> = curves
        .iter()
        .flat_map(|c| c.1.iter().filter(finite))
        .copied()
        .collect();
    if all.is_empty() {
        return no_data(root, title);
    }
    let (x_lo, x_hi) = padded(
        all.iter().map(|p| p.0).fold(f64::INFINITY, f64::min),
        all.iter().map(|p| p.0).fold(f64::NEG_INFINITY, f64::max),
        0.05,
    );
    let y_min = all.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
    let y_max = all.iter().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max);
    let (y_lo, y_hi) = padded(y_min.min(0.0), y_max, 0.05);
    let y_lo = if y_min >= 0.0 { 0.0 } else { y_lo };
    let area = frame(root, title, "")?;
    let names: Vec<&str> = curves.iter().map(|c| c.0.as_str()).collect();
    let (plot, legend) = with_legend_column(&area, &names)?;
    let mut chart = ChartBuilder::on(&plot)
        .margin(12)
        .x_label_area_size(50)
        .y_label_area_size(70)
        .build_cartesian_2d(x_lo..x_hi, y_lo..y_hi)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .x_label_formatter(&|v| short_num(*v))
        .y_label_formatter(&|v| short_num(*v))
        .draw()
        .map_err(err)?;
    for (i, (_, pts)) in curves.iter().enumerate() {
        let pts: Vec<(f64, f64)> = pts.iter().filter(finite).copied().collect();
        draw_curve(&mut chart, pts.clone(), color(i).stroke_width(2), stroke)?;
        chart
            .draw_series(pts.iter().map(|&p| Circle::new(p, 4, color(i).filled())))
            .map_err(err)?;
    }
    draw_legend(&legend, &names, Swatch::Line)
}

/// Points kept per curve at most: a picture is ~900 pixels wide, so more only make files
/// big. Longer curves are reduced by [`decimate`].
pub const MAX_POINTS: usize = 4000;

/// Reduce a curve, in x order, to about `MAX_POINTS` points keeping its envelope: the x range
/// is cut into `MAX_POINTS / 4` bins and each bin keeps its first, lowest, highest and last
/// point, in their order. Spikes survive; nothing visible at the picture's resolution is lost.
pub fn decimate(pts: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    if pts.len() <= MAX_POINTS {
        return pts;
    }
    let bins = MAX_POINTS / 4;
    let (x0, x1) = (pts[0].0, pts[pts.len() - 1].0);
    let width = (x1 - x0).max(f64::MIN_POSITIVE);
    let bin_of = |x: f64| (((x - x0) / width * bins as f64) as usize).min(bins - 1);
    let mut out = Vec::with_capacity(MAX_POINTS + 4);
    let mut i = 0;
    while i < pts.len() {
        let b = bin_of(pts[i].0);
        let mut j = i;
        let (mut lo, mut hi) = (i, i);
        while j < pts.len() && bin_of(pts[j].0) == b {
            if pts[j].1 < pts[lo].1 {
                lo = j;
            }
            if pts[j].1 > pts[hi].1 {
                hi = j;
            }
            j += 1;
        }
        let mut keep = [i, lo, hi, j - 1];
        keep.sort_unstable();
        let mut last = usize::MAX;
        for k in keep {
            if k != last {
                out.push(pts[k]);
                last = k;
            }
        }
        i = j;
    }
    out
}

/// A number for an axis label: no more digits than it needs (no trailing zeros).
fn short_num(x: f64) -> String {
    let a = x.abs();
    let s = if a == 0.0 {
        return "0".to_string();
    } else if !(1e-3..1e6).contains(&a) {
        format!("{x:.1e}")
    } else if a >= 100.0 {
        format!("{x:.0}")
    } else if a >= 1.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.3}")
    };
    let (mantissa, exp) = s.split_at(s.find('e').unwrap_or(s.len()));
    let mantissa = if mantissa.contains('.') {
        mantissa.trim_end_matches('0').trim_end_matches('.')
    } else {
        mantissa
    };
    format!("{mantissa}{exp}")
}

/// Labelled ticks wanted on a log axis at least; fewer cannot show the scale.
const MIN_LOG_TICKS: usize = 3;

/// `m` × 10^`k`, as the nearest double to the decimal (3 / 10, not 3 × 0.1).
fn decimal(m: f64, k: i32) -> f64 {
    if k >= 0 {
        m * 10f64.powi(k)
    } else {
        m / 10f64.powi(-k)
    }
}

/// Ticks of a log axis over `[lo, hi]` (`0 < lo < hi`): (labelled, grid lines only).
///
/// `plotters` labels only the decades of a log axis, so a range within one decade (one
/// BFC run's slowdowns, 2.3 to 2.4) had no label at all. Labelled here: the decades in the
/// range if there are [`MIN_LOG_TICKS`]; else the 1-2-5 steps of each decade; else 1 to 9 of
/// each; else (a range within one such step) round numbers evenly spaced, as on a linear
/// axis. Grid lines also at the 1 to 9 of each decade that have no label, to show the scale.
fn log_ticks(lo: f64, hi: f64) -> (Vec<f64>, Vec<f64>) {
    let (k0, k1) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    let multiples = |ms: &[f64]| -> Vec<f64> {
        (k0..=k1)
            .flat_map(|k| ms.iter().map(move |&m| decimal(m, k)))
            .filter(|v| (lo..=hi).contains(v))
            .collect()
    };
    let ones_to_nines = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0];
    for ms in [&[1.0][..], &[1.0, 2.0, 5.0], &ones_to_nines] {
        let labelled = multiples(ms);
        if labelled.len() >= MIN_LOG_TICKS {
            let mut grid = multiples(&ones_to_nines);
            grid.retain(|v| !labelled.contains(v));
            return (labelled, grid);
        }
    }
    // The smallest 1-2-5 step that puts at most 6 ticks in the range.
    let span = hi - lo;
    let e = (span / 6.0).log10().floor() as i32;
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|&m| decimal(m, e))
        .find(|&st| span / st <= 6.0)
        .unwrap_or(decimal(1.0, e + 1));
    let first = (lo / step).ceil() as i64;
    let last = (hi / step).floor() as i64;
    (
        (first..=last).map(|i| i as f64 * step).collect(),
        Vec::new(),
    )
}

/// Colours of curves in order: the Tableau 10 palette without its yellow-green and cyan,
/// which are hard to see on white.
const COLORS: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
];

fn color(i: usize) -> RGBColor {
    COLORS[i % COLORS.len()]
}

/// The title at the top of `root` and, if `note` is not empty, the note under it in smaller
/// grey type; returns the area left for the chart.
fn frame<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    note: &str,
) -> Result<DrawingArea<DB, Shift>, String>
where
    DB::ErrorType: 'static,
{
    let area = root.titled(title, ("sans-serif", 22)).map_err(err)?;
    if note.is_empty() {
        return Ok(area);
    }
    let style = ("sans-serif", 14).into_font().color(&RGBColor(80, 80, 80));
    area.titled(note, style).map_err(err)
}

const LEGEND_FONT: (&str, u32) = ("sans-serif", 13);

/// A part of the picture, in pixels from its own top left corner.
type Area<DB> = DrawingArea<DB, Shift>;

/// Split `area` into the chart's part on the left and a legend column on the right, as wide
/// as the longest of `names` needs (at most a third of the picture): a legend inside the
/// plot area hides the data under it.
fn with_legend_column<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    names: &[&str],
) -> Result<(Area<DB>, Area<DB>), String>
where
    DB::ErrorType: 'static,
{
    let mut widest = 0;
    for n in names {
        widest = widest.max(
            area.estimate_text_size(n, &LEGEND_FONT.into())
                .map_err(err)?
                .0,
        );
    }
    let width = (widest + 44).min(SIZE.0 / 3);
    Ok(area.split_horizontally(area.dim_in_pixel().0 - width))
}

/// How a legend entry shows what it names.
#[derive(Clone, Copy)]
enum Swatch {
    Line,
    Dot,
}

/// The legend: one row per curve or kind of dot, top down, the `i`-th in [`color`]`(i)`, in
/// the column made by [`with_legend_column`].
fn draw_legend<DB: DrawingBackend>(
    column: &DrawingArea<DB, Shift>,
    names: &[&str],
    swatch: Swatch,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    for (i, name) in names.iter().enumerate() {
        let c = color(i);
        let y = 24 + 20 * i as i32;
        match swatch {
            Swatch::Line => {
                column.draw(&PathElement::new(vec![(4, y), (24, y)], c.stroke_width(3)))
            }
            Swatch::Dot => column.draw(&Circle::new((14, y), 5, c.filled())),
        }
        .map_err(err)?;
        let style = TextStyle::from(LEGEND_FONT).pos(Pos::new(HPos::Left, VPos::Center));
        column
            .draw(&Text::new(name.to_string(), (32, y), style))
            .map_err(err)?;
    }
    Ok(())
}

/// How busy a series was: its time-weighted mean over the whole run, `[0, end_ps)`, counting
/// 0 before its first point (a queue's series starts when the queue first holds cells), then
/// its peak. Non-finite values count as 0.
fn activity(s: &Series, end_ps: u64) -> (f64, f64) {
    let first = s.points.first().map_or(end_ps, |p| p.0);
    let covered = end_ps.saturating_sub(first) as f64;
    let run_mean = time_weighted_mean(s, end_ps).unwrap_or(0.0) * covered / end_ps.max(1) as f64;
    let peak = s.points.iter().map(|p| p.1).fold(0f64, f64::max);
    let finite = |v: f64| if v.is_finite() { v } else { 0.0 };
    (finite(run_mean), finite(peak))
}

/// The series a time plot draws, the most active first: the [`MAX_SERIES_PER_PLOT`] with the
/// largest time-weighted mean over the run (`[0, end_ps)`, 0 before a series' first point),
/// ties to the larger peak, then to the name. Returns them and how many were left out.
///
/// Why the mean over the run: it is what the series contributed (the area under its
/// curve), so a queue that was full for a while beats one that blipped once; the peak only
/// breaks ties, e.g. between series that are 0 throughout but for one instant.
pub fn most_active<'a>(series: &[&'a Series], end_ps: u64) -> (Vec<&'a Series>, usize) {
    let mut ranked: Vec<(&Series, (f64, f64))> =
        series.iter().map(|&s| (s, activity(s, end_ps))).collect();
    ranked.sort_by(|(a, ka), (b, kb)| {
        kb.0.total_cmp(&ka.0)
            .then(kb.1.total_cmp(&ka.1))
            .then_with(|| a.name.cmp(&b.name))
    });
    let left_out = ranked.len().saturating_sub(MAX_SERIES_PER_PLOT);
    ranked.truncate(MAX_SERIES_PER_PLOT);
    (ranked.into_iter().map(|(s, _)| s).collect(), left_out)
}

fn draw_series<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    y_desc: &str,
    series: &[&Series],
    end_ps: u64,
    stroke: Stroke,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let finite = |s: &&Series| s.points.iter().any(|p| p.1.is_finite());
    let series: Vec<&Series> = series.iter().copied().filter(finite).collect();
    if series.is_empty() {
        return no_data(root, title);
    }
    let end_ps = series
        .iter()
        .filter_map(|s| s.points.last().map(|p| p.0))
        .max()
        .unwrap_or(0)
        .max(end_ps);
    let end_us = end_ps as f64 / 1e6;
    let (series, left_out) = most_active(&series, end_ps);
    let note = if left_out == 0 {
        String::new()
    } else {
        format!(
            "{} of {} series: the largest time-weighted means over the run (the CSV files have all)",
            series.len(),
            series.len() + left_out
        )
    };
    let area = frame(root, title, &note)?;
    let names: Vec<&str> = series.iter().map(|s| s.name.as_str()).collect();
    let (plot, legend) = with_legend_column(&area, &names)?;
    let ymax = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .filter(|v| v.is_finite())
        .fold(0f64, f64::max);
    let ymin = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .filter(|v| v.is_finite())
        .fold(0f64, f64::min);
    let ytop = if ymax > ymin { ymax * 1.08 } else { ymin + 1.0 };
    let mut chart = ChartBuilder::on(&plot)
        .margin(12)
        .x_label_area_size(50)
        .y_label_area_size(70)
        .build_cartesian_2d(0f64..end_us.max(1e-6), ymin..ytop)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("simulated time (us)")
        .y_desc(y_desc)
        .x_label_formatter(&|v| short_num(*v))
        .y_label_formatter(&|v| short_num(*v))
        .draw()
        .map_err(err)?;
    // The least active first, so the most active is drawn on top.
    for (i, s) in series.iter().enumerate().rev() {
        let mut pts: Vec<(f64, f64)> = Vec::with_capacity(2 * s.points.len() + 1);
        let mut prev: Option<f64> = None;
        for &(t, v) in s.points.iter().filter(|p| p.1.is_finite()) {
            let x = t as f64 / 1e6;
            if let Some(p) = prev {
                pts.push((x, p));
            }
            pts.push((x, v));
            prev = Some(v);
        }
        if let Some(p) = prev {
            pts.push((end_us, p));
        }
        draw_curve(&mut chart, decimate(pts), color(i).stroke_width(2), stroke)?;
    }
    draw_legend(&legend, &names, Swatch::Line)
}

/// Slowdown by size bucket into `path` (.svg or .png), with `all` flows' numbers noted.
pub fn plot_slowdown_by_size(
    buckets: &[BucketStats],
    all: Option<&BucketStats>,
    path: &Path,
) -> Result<(), String> {
    write_chart(path, &Chart::SlowdownBySize { buckets, all })
}

/// Empirical CDFs into `path` (.svg or .png); each value is one of `of` ("flows").
pub fn plot_cdf(
    path: &Path,
    title: &str,
    x_desc: &str,
    of: &str,
    curves: &[(String, Vec<f64>)],
    log_x: bool,
) -> Result<(), String> {
    write_chart(
        path,
        &Chart::Cdf {
            title,
            x_desc,
            of,
            curves,
            log_x,
        },
    )
}

/// Series over time into `path` (.svg or .png).
pub fn plot_series(
    path: &Path,
    title: &str,
    y_desc: &str,
    series: &[&Series],
    end_ps: u64,
) -> Result<(), String> {
    write_chart(
        path,
        &Chart::Series {
            title,
            y_desc,
            series,
            end_ps,
        },
    )
}

/// Which picture formats [`write_run_plots`] writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlotFormats {
    /// Write `.svg` files.
    pub svg: bool,
    /// Write `.png` files.
    pub png: bool,
}

impl Default for PlotFormats {
    fn default() -> Self {
        PlotFormats {
            svg: true,
            png: true,
        }
    }
}

/// At most this many series are drawn in one time plot, chosen by [`most_active`]; more make
/// an unreadable picture (the CSV files have them all).
pub const MAX_SERIES_PER_PLOT: usize = 8;

/// Draw the standard plots of a run into `dir`: `slowdown_by_size`, `slowdown_cdf`,
/// `flow_size_cdf`, and, when the record has such series, `queue_depth` (names containing
/// `depth`), `buffer_occupancy` (containing `buffer`) and `throughput` (the recorded series in
/// `Gb/s`, then the rates derived from byte counters such as the runtime's `<node>.port<P>.tx_bytes`,
/// counters, given). Returns the files written.
pub fn write_run_plots(
    record: &RunRecord,
    summary: &Summary,
    throughput: &[Series],
    dir: &Path,
    formats: PlotFormats,
) -> Result<Vec<PathBuf>, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: cannot create: {e}", dir.display()))?;
    let mut exts = Vec::new();
    if formats.svg {
        exts.push("svg");
    }
    if formats.png {
        exts.push("png");
    }
    let mut out = Vec::new();
    let mut each = |stem: &str, chart: &Chart| -> Result<(), String> {
        for ext in &exts {
            let p = dir.join(format!("{stem}.{ext}"));
            write_chart(&p, chart)?;
            out.push(p);
        }
        Ok(())
    };

    each(
        "slowdown_by_size",
        &Chart::SlowdownBySize {
            buckets: &summary.fct_by_size,
            all: Some(&summary.flows.all),
        },
    )?;

    let mut flows: Vec<_> = record.flows.iter().collect();
    flows.sort_by_key(|f| f.id);
    let slow = vec![(
        "all flows".to_string(),
        flows
            .iter()
            .filter_map(|f| f.slowdown())
            .collect::<Vec<f64>>(),
    )];
    each(
        "slowdown_cdf",
        &Chart::Cdf {
            title: "CDF of FCT slowdown",
            x_desc: "FCT slowdown (FCT / ideal FCT)",
            of: "flows",
            curves: &slow,
            log_x: true,
        },
    )?;
    let sizes = vec![(
        "all flows".to_string(),
        flows
            .iter()
            .map(|f| f.size_bytes as f64)
            .collect::<Vec<f64>>(),
    )];
    each(
        "flow_size_cdf",
        &Chart::Cdf {
            title: "CDF of flow size",
            x_desc: "flow size (bytes)",
            of: "flows",
            curves: &sizes,
            log_x: true,
        },
    )?;

    for (stem, key, title) in [
        ("queue_depth", "depth", "Queue depth over time"),
        ("buffer_occupancy", "buffer", "Buffer occupancy over time"),
    ] {
        let sel: Vec<&Series> = record
            .series
            .iter()
            .filter(|s| s.name.contains(key))
            .collect();
        if let Some(first) = sel.first() {
            let y_desc = format!("{key} ({})", first.unit);
            each(
                stem,
                &Chart::Series {
                    title,
                    y_desc: &y_desc,
                    series: &sel,
                    end_ps: record.duration_ps,
                },
            )?;
        }
    }
    let tp: Vec<&Series> = record
        .series
        .iter()
        .filter(|s| s.unit == "Gb/s")
        .chain(throughput)
        .collect();
    if !tp.is_empty() {
        each(
            "throughput",
            &Chart::Series {
                title: "Throughput over time",
                y_desc: "throughput (Gb/s)",
                series: &tp,
                end_ps: record.duration_ps,
            },
        )?;
    }
    Ok(out)
}
