//! Parameter sweeps: a grid of points, one deterministic simulation per point run in
//! parallel, and one merged table.
//!
//! A sweep spec is RON:
//!
//! ```ron
//! (
//!     base: "scenarios/incast.ron",
//!     grid: { "load": [0.3, 0.6], "seed": [1, 2] },
//! )
//! ```
//!
//! [`expand_grid`] turns the grid into the cartesian product of its values. Keys are taken
//! in lexicographic order (a RON map has no meaningful order) and the last key varies
//! fastest, so the example gives `load=0.3,seed=1`, `load=0.3,seed=2`, `load=0.6,seed=1`,
//! `load=0.6,seed=2`, numbered 0 to 3. Values are booleans, integers, floats or strings.
//!
//! [`run_sweep`] calls a closure once per point on `threads` worker threads
//! (`std::thread::scope`, no thread-pool crate needed: the work items are whole simulations,
//! so a shared atomic "next point" counter balances them well). Each simulation is
//! deterministic on its own; results are stored by point index, so the merged table is in
//! point order whatever the threads' timing. A closure that panics gives an error row
//! rather than taking the sweep down.
//!
//! [`merge`] makes one table: the point's index, its parameters (one column per grid key),
//! `status` (`ok` or the error), then the closure's columns in first-seen order over the
//! points in order.
//!
//! A spec may also name figures, drawn from the table once it is merged ([`write_plots`]):
//!
//! ```ron
//! plots: [(name: "drops", title: "Drops against load", x: "load", y: "drops")],
//! ```
//!
//! `y` (a column of the table) against `x` (a grid key with numbers), one curve per
//! combination of the values of the other grid keys that take more than one.

use crate::tables::TextTable;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// One parameter value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum ParamValue {
    /// `true` / `false`.
    Bool(bool),
    /// A whole number.
    Int(i64),
    /// A number with a fraction or exponent.
    Float(f64),
    /// A string.
    Str(String),
}

impl fmt::Display for ParamValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamValue::Bool(b) => write!(f, "{b}"),
            ParamValue::Int(i) => write!(f, "{i}"),
            ParamValue::Float(x) => write!(f, "{x}"),
            ParamValue::Str(s) => write!(f, "{s}"),
        }
    }
}

impl ParamValue {
    /// As a float (integers converted).
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            ParamValue::Int(i) => Some(*i as f64),
            ParamValue::Float(x) => Some(*x),
            _ => None,
        }
    }

    /// As an integer (only `Int`).
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            ParamValue::Int(i) => Some(*i),
            _ => None,
        }
    }

    /// As a string (only `Str`).
    pub fn as_str(&self) -> Option<&str> {
        match self {
            ParamValue::Str(s) => Some(s),
            _ => None,
        }
    }
}

/// One point of the grid.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Point {
    /// Position in the grid's order (0-based).
    pub index: usize,
    /// Parameter values by key.
    pub params: BTreeMap<String, ParamValue>,
}

impl Point {
    /// The value of `key`.
    pub fn get(&self, key: &str) -> Option<&ParamValue> {
        self.params.get(key)
    }

    /// `key=value` pairs joined by `,` (keys in order): `load=0.3,seed=1`.
    pub fn label(&self) -> String {
        self.params
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// A file-system-safe directory name for the point's outputs: `0003_load-0.3_seed-1`
    /// (the index first, so directories sort in point order).
    pub fn dir_name(&self) -> String {
        let mut s = format!("{:04}", self.index);
        for (k, v) in &self.params {
            s.push('_');
            s.push_str(&format!("{k}-{v}"));
        }
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || "._-+".contains(c) {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    }
}

/// The grid part of a sweep spec: key to the values it takes.
pub type Grid = BTreeMap<String, Vec<ParamValue>>;

/// A sweep spec: the base scenario or topology every point starts from, the grid, and the
/// figures to draw from the table.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepSpec {
    /// Path of the base file, as written (relative to the spec file's directory).
    pub base: String,
    /// The grid.
    pub grid: Grid,
    /// Figures of the merged table.
    pub plots: Vec<SweepPlot>,
}

/// A figure of a sweep: column `y` against grid key `x`, one curve per combination of the
/// other grid keys' values (those that take more than one), written as `plots/NAME.svg` and
/// `.png` under the sweep's output.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SweepPlot {
    /// File name (letters, digits, `-` and `_`).
    pub name: String,
    /// Title.
    pub title: String,
    /// The grid key on the x axis (its values numbers).
    pub x: String,
    /// The table's column on the y axis.
    pub y: String,
    /// The x axis' description (default: the key).
    #[serde(default)]
    pub x_desc: Option<String>,
    /// The y axis' description (default: the column).
    #[serde(default)]
    pub y_desc: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSpec {
    base: String,
    grid: BTreeMap<String, Vec<ron::Value>>,
    #[serde(default)]
    plots: Vec<SweepPlot>,
}

fn param_of(v: &ron::Value) -> Result<ParamValue, String> {
    use ron::{Number as N, Value as V};
    Ok(match v {
        V::Bool(b) => ParamValue::Bool(*b),
        V::String(s) => ParamValue::Str(s.clone()),
        V::Char(c) => ParamValue::Str(c.to_string()),
        V::Number(n) => {
            let big = || format!("integer {n:?} does not fit in 64 bits");
            match *n {
                N::F32(_) | N::F64(_) => ParamValue::Float(n.into_f64()),
                N::I8(x) => ParamValue::Int(x.into()),
                N::I16(x) => ParamValue::Int(x.into()),
                N::I32(x) => ParamValue::Int(x.into()),
                N::I64(x) => ParamValue::Int(x),
                N::U8(x) => ParamValue::Int(x.into()),
                N::U16(x) => ParamValue::Int(x.into()),
                N::U32(x) => ParamValue::Int(x.into()),
                N::U64(x) => ParamValue::Int(i64::try_from(x).map_err(|_| big())?),
                N::I128(x) => ParamValue::Int(i64::try_from(x).map_err(|_| big())?),
                N::U128(x) => ParamValue::Int(i64::try_from(x).map_err(|_| big())?),
                _ => return Err(format!("unsupported number {n:?}")),
            }
        }
        other => {
            return Err(format!(
                "grid values are booleans, numbers or strings, not {other:?}"
            ))
        }
    })
}

impl SweepSpec {
    /// Parse a spec from RON text; `file` names it in errors.
    pub fn parse(text: &str, file: &str) -> Result<SweepSpec, String> {
        let raw: RawSpec = located::parse_ron(text, file)?;
        let mut grid = Grid::new();
        for (k, vs) in raw.grid {
            if vs.is_empty() {
                return Err(format!("{file}: grid key \"{k}\" has no values"));
            }
            let vals = vs
                .iter()
                .map(param_of)
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| format!("{file}: grid key \"{k}\": {e}"))?;
            grid.insert(k, vals);
        }
        for (i, p) in raw.plots.iter().enumerate() {
            let at = format!("{file}: plots[{i}]");
            let name_ok = !p.name.is_empty()
                && p.name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
            if !name_ok {
                return Err(format!(
                    "{at}: name \"{}\" is a file name: letters, digits, `-` and `_`",
                    p.name
                ));
            }
            if raw.plots[..i].iter().any(|q| q.name == p.name) {
                return Err(format!("{at}: a second plot named \"{}\"", p.name));
            }
            match grid.get(&p.x) {
                None => {
                    return Err(format!(
                        "{at}: x \"{}\" is not a grid key (the grid's: {})",
                        p.x,
                        grid.keys().cloned().collect::<Vec<_>>().join(", ")
                    ))
                }
                Some(vs) if vs.iter().any(|v| v.as_f64().is_none()) => {
                    return Err(format!(
                        "{at}: x \"{}\" takes values that are not numbers",
                        p.x
                    ))
                }
                Some(_) => {}
            }
        }
        Ok(SweepSpec {
            base: raw.base,
            grid,
            plots: raw.plots,
        })
    }

    /// Read and parse a spec file.
    pub fn load(path: &Path) -> Result<SweepSpec, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
        SweepSpec::parse(&text, &path.display().to_string())
    }

    /// The base file's path, relative to the directory of the spec at `spec_path`.
    pub fn base_path(&self, spec_path: &Path) -> PathBuf {
        spec_path.parent().unwrap_or(Path::new("")).join(&self.base)
    }

    /// The grid's points (see [`expand_grid`]).
    pub fn points(&self) -> Vec<Point> {
        expand_grid(&self.grid)
    }
}

/// The cartesian product of the grid: keys in order, the last varying fastest; an empty grid
/// is one point without parameters.
pub fn expand_grid(grid: &Grid) -> Vec<Point> {
    let mut points = vec![BTreeMap::new()];
    for (k, vs) in grid {
        let mut next = Vec::with_capacity(points.len() * vs.len());
        for p in &points {
            for v in vs {
                let mut q = p.clone();
                q.insert(k.clone(), v.clone());
                next.push(q);
            }
        }
        points = next;
    }
    points
        .into_iter()
        .enumerate()
        .map(|(index, params)| Point { index, params })
        .collect()
}

/// A row of results: (column, cell) in the closure's column order.
pub type Row = Vec<(String, String)>;

/// Worker threads to use by default: the machine's available parallelism.
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Run `f` once per point on `threads` workers (at least 1, at most one per point); the
/// results are in point order. A panic in `f` becomes `Err("panicked: …")`.
pub fn run_sweep<F>(points: &[Point], threads: usize, f: F) -> Vec<Result<Row, String>>
where
    F: Fn(&Point) -> Result<Row, String> + Sync,
{
    let slots: Vec<Mutex<Option<Result<Row, String>>>> =
        points.iter().map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    let workers = threads.clamp(1, points.len().max(1));
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(p) = points.get(i) else { break };
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(p)))
                    .unwrap_or_else(|e| {
                        let msg = e
                            .downcast_ref::<&str>()
                            .map(|s| s.to_string())
                            .or_else(|| e.downcast_ref::<String>().cloned())
                            .unwrap_or_else(|| "unknown panic".to_string());
                        Err(format!("panicked: {msg}"))
                    });
                *slots[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
            });
        }
    });
    slots
        .into_iter()
        .map(|m| {
            m.into_inner()
                .unwrap_or_else(|e| e.into_inner())
                .unwrap_or_else(|| Err("not run".to_string()))
        })
        .collect()
}

/// The merged results of a sweep.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SweepTable {
    /// Column names: `point`, the grid keys, `status`, then result columns.
    pub columns: Vec<String>,
    /// One row per point, in point order, a cell per column (empty if a row lacks it).
    pub rows: Vec<Vec<String>>,
}

impl SweepTable {
    /// How many points failed (their `status` is not `ok`).
    pub fn failures(&self) -> usize {
        let Some(status) = self.columns.iter().position(|c| c == "status") else {
            return 0;
        };
        self.rows.iter().filter(|r| r[status] != "ok").count()
    }
}

/// Merge per-point results into one table (see the module docs). `results[i]` belongs to
/// `points[i]`.
pub fn merge(points: &[Point], results: &[Result<Row, String>]) -> SweepTable {
    let mut keys: Vec<String> = Vec::new();
    for p in points {
        for k in p.params.keys() {
            if !keys.contains(k) {
                keys.push(k.clone());
            }
        }
    }
    keys.sort();
    let mut result_cols: Vec<String> = Vec::new();
    for r in results.iter().flatten() {
        for (c, _) in r {
            if !result_cols.contains(c) {
                result_cols.push(c.clone());
            }
        }
    }
    let mut columns = vec!["point".to_string()];
    columns.extend(keys.iter().cloned());
    columns.push("status".to_string());
    columns.extend(result_cols.iter().cloned());
    let rows = points
        .iter()
        .zip(results)
        .map(|(p, r)| {
            let mut row = vec![p.index.to_string()];
            row.extend(
                keys.iter()
                    .map(|k| p.params.get(k).map_or(String::new(), |v| v.to_string())),
            );
            match r {
                Ok(cells) => {
                    row.push("ok".to_string());
                    row.extend(result_cols.iter().map(|c| {
                        cells
                            .iter()
                            .find(|(k, _)| k == c)
                            .map_or(String::new(), |(_, v)| v.clone())
                    }));
                }
                Err(e) => {
                    row.push(e.clone());
                    row.extend(result_cols.iter().map(|_| String::new()));
                }
            }
            row
        })
        .collect();
    SweepTable { columns, rows }
}

impl SweepTable {
    /// Write as CSV.
    pub fn write_csv<W: Write>(&self, w: W) -> Result<(), String> {
        let mut wtr = csv::Writer::from_writer(w);
        wtr.write_record(&self.columns)
            .map_err(|e| format!("cannot write CSV: {e}"))?;
        for r in &self.rows {
            wtr.write_record(r)
                .map_err(|e| format!("cannot write CSV: {e}"))?;
        }
        wtr.flush().map_err(|e| e.to_string())
    }

    /// Write as a CSV file.
    pub fn write_csv_file(&self, path: &Path) -> Result<(), String> {
        let f = std::fs::File::create(path)
            .map_err(|e| format!("{}: cannot create: {e}", path.display()))?;
        self.write_csv(std::io::BufWriter::new(f))
            .map_err(|e| format!("{}: {e}", path.display()))
    }

    /// The curves of `plot`: for each combination of the values of the grid keys `keys` other
    /// than `plot.x` that take more than one (the legend, `key=value` joined by `, `, a value
    /// cut before its first `(` when the cut values still tell the curves apart), the points
    /// `(x, y)` of its rows that ran and have a number in `y`, in x order.
    pub fn curves(
        &self,
        plot: &SweepPlot,
        keys: &[String],
    ) -> Result<Vec<crate::plots::Curve>, String> {
        let col = |name: &str| self.columns.iter().position(|c| c == name);
        let at = format!("plot \"{}\"", plot.name);
        let x = col(&plot.x).ok_or_else(|| format!("{at}: no column \"{}\"", plot.x))?;
        let y = col(&plot.y).ok_or_else(|| {
            format!(
                "{at}: y \"{}\" is not a column of the table (its columns: {})",
                plot.y,
                self.columns.join(", ")
            )
        })?;
        let status = col("status");
        let varying: Vec<usize> = keys
            .iter()
            .filter(|k| **k != plot.x)
            .filter_map(|k| col(k))
            .filter(|&c| {
                let first = self.rows.first().map(|r| &r[c]);
                self.rows.iter().any(|r| Some(&r[c]) != first)
            })
            .collect();
        // A value's name alone (`NewReno` of `NewReno((min_rto_us: 100000.0))`) where the
        // names tell the curves apart, so that the legend fits.
        let label_of = |r: &Vec<String>, short: bool| {
            let label = varying
                .iter()
                .map(|&c| {
                    let v = &r[c];
                    let v = if short {
                        v.split('(').next().unwrap_or(v)
                    } else {
                        v
                    };
                    format!("{}={v}", self.columns[c])
                })
                .collect::<Vec<_>>()
                .join(", ");
            if label.is_empty() {
                plot.y.clone()
            } else {
                label
            }
        };
        let distinct = |short: bool| {
            let mut labels: Vec<String> = self.rows.iter().map(|r| label_of(r, short)).collect();
            labels.sort();
            labels.dedup();
            labels.len()
        };
        let short = distinct(true) == distinct(false);
        let mut curves: Vec<crate::plots::Curve> = Vec::new();
        for r in &self.rows {
            if status.is_some_and(|s| r[s] != "ok") {
                continue;
            }
            let (Ok(xv), Ok(yv)) = (r[x].parse::<f64>(), r[y].parse::<f64>()) else {
                continue;
            };
            let label = label_of(r, short);
            match curves.iter_mut().find(|c| c.0 == label) {
                Some(c) => c.1.push((xv, yv)),
                None => curves.push((label, vec![(xv, yv)])),
            }
        }
        for c in &mut curves {
            c.1.sort_by(|a, b| a.0.total_cmp(&b.0));
        }
        Ok(curves)
    }

    /// As an aligned text table.
    pub fn to_text(&self) -> String {
        let header: Vec<&str> = self.columns.iter().map(String::as_str).collect();
        let mut t = TextTable::new(&header);
        for r in &self.rows {
            t.row(r.clone());
        }
        t.render()
    }
}

/// Draw `spec`'s plots of `table` under `out/plots/` (an SVG and a PNG each); the files
/// written.
pub fn write_plots(
    table: &SweepTable,
    spec: &SweepSpec,
    out: &Path,
) -> Result<Vec<PathBuf>, String> {
    if spec.plots.is_empty() {
        return Ok(Vec::new());
    }
    let dir = out.join("plots");
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let keys: Vec<String> = spec.grid.keys().cloned().collect();
    let mut files = Vec::new();
    for plot in &spec.plots {
        let curves = table.curves(plot, &keys)?;
        let chart = crate::plots::Chart::Lines {
            title: &plot.title,
            x_desc: plot.x_desc.as_deref().unwrap_or(&plot.x),
            y_desc: plot.y_desc.as_deref().unwrap_or(&plot.y),
            curves: &curves,
        };
        for ext in ["svg", "png"] {
            let path = dir.join(format!("{}.{ext}", plot.name));
            crate::plots::write_chart(&path, &chart)?;
            files.push(path);
        }
    }
    Ok(files)
}
