//! A VCD waveform of a run: queue depths, buffer occupancy, pipeline occupancy and any other
//! selected series, plus one 1-bit wire per pause state, viewable in GTKWave.
//!
//! Written with the `vcd` crate (a small, maintained VCD reader and writer: the same crate
//! parses the file back in the tests). Standard VCD only: `$timescale 1 ps` (the model's
//! time unit, so timestamps are simulated picoseconds unchanged), one `$scope module` for
//! the run and one inside it per node, and variables of three kinds:
//!
//! - `integer` (32 bits, or 64 if a value needs it) for a series whose values are all
//!   non-negative whole numbers and whose unit is a count (no `/`, not a `fraction`): queue
//!   depth in cells, occupancy counts;
//! - `real` for any other series (rates such as `Gb/s`, fractions); non-finite points are
//!   skipped;
//! - `wire 1` named `port<P>_<kind><class>_paused` for each (node, port, kind, class) of the
//!   pause events: 1 while paused.
//!
//! A series' node is its name up to the first `.`; the variable is the rest, with every
//! character outside `[A-Za-z0-9_]` turned into `_` (GTKWave reads `.` as a hierarchy
//! separator). Integer series are `x` before their first point, pause wires start at 0.
//! When a signal changes several times at one instant the last value is written. The file
//! ends with a timestamp at the end of the run so viewers show the whole of it. Output is
//! deterministic: nodes, variables and same-time changes are in sorted order, and no date
//! is written.

use crate::record_ext::SeriesExt;
use asic_net::records::{RunRecord, Series};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use vcd::{IdCode, TimescaleUnit, Value, VarType};

/// Which series go into the waveform.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VcdSelect {
    /// A series is written if its name contains one of these; empty: every series.
    pub series_containing: Vec<String>,
    /// Leave out the pause wires.
    pub no_pauses: bool,
}

/// Identifier-safe form of a name: `[A-Za-z0-9_]`, never empty.
pub fn vcd_name(s: &str) -> String {
    let out: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if out.is_empty() {
        "_".to_string()
    } else {
        out
    }
}

#[derive(Clone, Copy)]
enum Kind {
    Int(u32),
    Real,
    Bit,
}

struct Signal {
    kind: Kind,
    id: IdCode,
}

#[derive(Clone, Copy)]
enum Change {
    Num(f64),
    Bit(bool),
}

/// A signal's changes: (time ps, value), in record order.
type Timeline = Vec<(u64, Change)>;

fn io(e: std::io::Error) -> String {
    format!("cannot write VCD: {e}")
}

fn write_change<W: Write>(w: &mut vcd::Writer<W>, s: &Signal, c: Change) -> std::io::Result<()> {
    match (s.kind, c) {
        (Kind::Bit, Change::Bit(b)) => w.change_scalar(s.id, b),
        (Kind::Int(_), Change::Num(v)) => {
            let v = v as u64;
            let bits = 64 - v.leading_zeros().min(63);
            w.change_vector(s.id, (0..bits).rev().map(|i| Value::from(v >> i & 1 == 1)))
        }
        (Kind::Real, Change::Num(v)) => w.change_real(s.id, v),
        _ => Ok(()),
    }
}

/// Write the waveform of `record` to `out`; returns the number of variables.
pub fn write_vcd<W: Write>(
    out: W,
    record: &RunRecord,
    select: &VcdSelect,
) -> Result<usize, String> {
    // Signals keyed by (node, var) so that scopes and variables come out sorted.
    let mut keyed: BTreeMap<(String, String), (Kind, Timeline)> = BTreeMap::new();
    let wanted = |s: &Series| {
        select.series_containing.is_empty()
            || select
                .series_containing
                .iter()
                .any(|k| s.name.contains(k.as_str()))
    };
    for s in record.series.iter().filter(|s| wanted(s)) {
        let (node, local) = match s.name.split_once('.') {
            Some((n, l)) => (vcd_name(n), vcd_name(l)),
            None => ("global".to_string(), vcd_name(&s.name)),
        };
        // A rate (unit with `/`) or a fraction is a real even when its values happen to be
        // whole, so that every port's series of one kind has the same type.
        let count_unit = !s.unit.contains('/') && !s.unit.contains("fraction");
        let kind = if count_unit && s.is_integral() {
            let big = s.points.iter().any(|&(_, v)| v >= u32::MAX as f64);
            Kind::Int(if big { 64 } else { 32 })
        } else {
            Kind::Real
        };
        let changes = s
            .points
            .iter()
            .filter(|(_, v)| v.is_finite())
            .map(|&(t, v)| (t, Change::Num(v)))
            .collect();
        let mut var = local;
        let mut n = 2;
        while keyed.contains_key(&(node.clone(), var.clone())) {
            var = format!("{}_{n}", vcd_name(s.local_name()));
            n += 1;
        }
        keyed.insert((node, var), (kind, changes));
    }
    if !select.no_pauses {
        let mut evs: Vec<_> = record.pauses.iter().collect();
        evs.sort_by_key(|e| e.at_ps);
        for e in evs {
            let var = vcd_name(&format!("port{}_{}{}_paused", e.port, e.kind, e.class));
            keyed
                .entry((vcd_name(&e.node), var))
                .or_insert_with(|| (Kind::Bit, vec![(0, Change::Bit(false))]))
                .1
                .push((e.at_ps, Change::Bit(e.paused)));
        }
    }

    let mut w = vcd::Writer::new(out);
    w.version("asic report").map_err(io)?;
    w.timescale(1, TimescaleUnit::PS).map_err(io)?;
    w.add_module(&vcd_name(if record.name.is_empty() {
        "run"
    } else {
        &record.name
    }))
    .map_err(io)?;
    let mut signals = Vec::with_capacity(keyed.len());
    let mut changes: Vec<(u64, usize, Change)> = Vec::new();
    let mut current_node: Option<String> = None;
    for ((node, var), (kind, ch)) in keyed {
        if current_node.as_deref() != Some(node.as_str()) {
            if current_node.is_some() {
                w.upscope().map_err(io)?;
            }
            w.add_module(&node).map_err(io)?;
            current_node = Some(node);
        }
        let (vt, width) = match kind {
            Kind::Int(b) => (VarType::Integer, b),
            Kind::Real => (VarType::Real, 64),
            Kind::Bit => (VarType::Wire, 1),
        };
        let id = w.add_var(vt, width, &var, None).map_err(io)?;
        let idx = signals.len();
        changes.extend(ch.into_iter().map(|(t, c)| (t, idx, c)));
        signals.push(Signal { kind, id });
    }
    if current_node.is_some() {
        w.upscope().map_err(io)?;
    }
    w.upscope().map_err(io)?;
    w.enddefinitions().map_err(io)?;

    // Stable sort: same (time, signal) keeps record order, so the last one wins below.
    changes.sort_by_key(|&(t, i, _)| (t, i));
    let mut initial: Vec<Option<Change>> = vec![None; signals.len()];
    let mut k = 0;
    while k < changes.len() && changes[k].0 == 0 {
        initial[changes[k].1] = Some(changes[k].2);
        k += 1;
    }
    w.timestamp(0).map_err(io)?;
    w.begin(vcd::SimulationCommand::Dumpvars).map_err(io)?;
    for (s, init) in signals.iter().zip(&initial) {
        match (init, s.kind) {
            (Some(c), _) => write_change(&mut w, s, *c).map_err(io)?,
            (None, Kind::Int(_)) => w.change_vector(s.id, [Value::X]).map_err(io)?,
            (None, Kind::Bit) => w.change_scalar(s.id, Value::X).map_err(io)?,
            // A real cannot be x: it stays undefined (GTKWave shows no value) until its
            // first point.
            (None, Kind::Real) => {}
        }
    }
    w.end().map_err(io)?;
    let mut last_t = 0;
    while k < changes.len() {
        let (t, i, c) = changes[k];
        k += 1;
        if k < changes.len() && changes[k].0 == t && changes[k].1 == i {
            continue; // a later change of this signal at the same instant wins
        }
        if t != last_t {
            w.timestamp(t).map_err(io)?;
            last_t = t;
        }
        write_change(&mut w, &signals[i], c).map_err(io)?;
    }
    if record.duration_ps > last_t {
        w.timestamp(record.duration_ps).map_err(io)?;
    }
    w.flush().map_err(io)?;
    Ok(signals.len())
}

/// Write the waveform to a file; returns the number of variables.
pub fn write_vcd_file(
    path: &Path,
    record: &RunRecord,
    select: &VcdSelect,
) -> Result<usize, String> {
    let f = std::fs::File::create(path)
        .map_err(|e| format!("{}: cannot create: {e}", path.display()))?;
    write_vcd(std::io::BufWriter::new(f), record, select)
        .map_err(|e| format!("{}: {e}", path.display()))
}
