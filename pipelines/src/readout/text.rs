//! The readable form of readings and states (`state.txt`): one block per object, a line
//! saying what it is and how much of it is shown, then its rows in aligned columns
//! (numbers right-aligned). Keys and action data are written as P4 writes them (decimal
//! when small, else hexadecimal: `0xa010900/24`); counts in decimal.

use super::{
    ChipState, ControlRead, CounterState, DirectCount, GressState, MeterState, Pipes, Reading,
    RegisterState, TableDump,
};
use crate::counter::Counts;
use crate::program::{value, CountKind};
use crate::time::Time;
use std::fmt::Write as _;

/// A table of aligned columns.
struct Columns {
    header: Vec<String>,
    /// Whether each column is right-aligned (numbers).
    right: Vec<bool>,
    rows: Vec<Vec<String>>,
}

impl Columns {
    /// Columns named `header`; a name starting with `>` is a right-aligned column.
    fn new(header: &[&str]) -> Columns {
        Columns {
            right: header.iter().map(|h| h.starts_with('>')).collect(),
            header: header
                .iter()
                .map(|h| h.trim_start_matches('>').to_string())
                .collect(),
            rows: Vec::new(),
        }
    }

    fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    /// The header, a rule and the rows, each line indented by `indent` spaces, two spaces
    /// between columns.
    fn write(&self, out: &mut String, indent: usize) {
        let rule: Vec<String> = self.header.iter().map(|h| "-".repeat(h.len())).collect();
        let lines = [&self.header, &rule].into_iter().chain(&self.rows);
        let mut width = vec![0; self.header.len()];
        for line in lines.clone() {
            for (w, c) in width.iter_mut().zip(line) {
                *w = (*w).max(c.chars().count());
            }
        }
        for line in lines {
            let mut s = " ".repeat(indent);
            for (i, (c, &w)) in line.iter().zip(&width).enumerate() {
                if i > 0 {
                    s.push_str("  ");
                }
                let pad = " ".repeat(w - c.chars().count());
                if self.right[i] {
                    s.push_str(&pad);
                    s.push_str(c);
                } else {
                    s.push_str(c);
                    s.push_str(&pad);
                }
            }
            out.push_str(s.trim_end());
            out.push('\n');
        }
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `all 4 pipes`, `pipe 0`, `pipes 1, 2, 3`.
fn pipes_label<T>(group: &Pipes<T>, groups: &[Pipes<T>]) -> String {
    let total: usize = groups.iter().map(|g| g.pipes.len()).sum();
    match group.pipes.as_slice() {
        [p] if total == 1 => format!("pipe {p} (the only pipe)"),
        _ if groups.len() == 1 => format!("all {total} pipes (the same state)"),
        [p] => format!("pipe {p}"),
        ps => {
            let list: Vec<String> = ps.iter().map(u16::to_string).collect();
            format!("pipes {} (the same state)", list.join(", "))
        }
    }
}

fn kind_name(k: CountKind) -> &'static str {
    match k {
        CountKind::Packets => "packets",
        CountKind::Bytes => "bytes",
        CountKind::PacketsAndBytes => "packets and bytes",
    }
}

/// The counts a counter of `kind` keeps, by unit (`packets`, `bytes`).
fn kept(kind: CountKind, c: Counts) -> Vec<(&'static str, u64)> {
    let all = [("packets", c.packets), ("bytes", c.bytes)];
    all.into_iter()
        .filter(|(unit, _)| match kind {
            CountKind::Packets => *unit == "packets",
            CountKind::Bytes => *unit == "bytes",
            CountKind::PacketsAndBytes => true,
        })
        .collect()
}

/// The columns of a counter of `kind`, right-aligned, each named `prefix` and its unit.
fn count_header(kind: CountKind, prefix: &str) -> Vec<String> {
    kept(kind, Counts::default())
        .into_iter()
        .map(|(unit, _)| format!(">{prefix}{unit}"))
        .collect()
}

fn count_cells(kind: CountKind, c: Counts) -> Vec<String> {
    kept(kind, c)
        .into_iter()
        .map(|(_, v)| v.to_string())
        .collect()
}

/// `10 packets, 640 bytes`.
fn count_words(kind: CountKind, c: Counts) -> String {
    let words: Vec<String> = kept(kind, c)
        .into_iter()
        .map(|(unit, v)| plural(v as usize, unit.trim_end_matches('s'), unit))
        .collect();
    words.join(", ")
}

/// What an object's rows are: a read's (the element asked for, whatever its value, or the
/// array's elements not at rest), or the end-of-run state's (those not at rest, counted in
/// the object's line).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Rows {
    Read,
    State,
}

fn register(out: &mut String, r: &RegisterState, rows: Rows, indent: usize) {
    let pad = " ".repeat(indent);
    let shown = match rows {
        Rows::Read if r.elements.is_empty() => "; every element at it".into(),
        Rows::Read => String::new(),
        Rows::State => format!(
            "; {} not at it",
            plural(r.elements.len(), "element", "elements")
        ),
    };
    let _ = writeln!(
        out,
        "{pad}{}: register, {} x bit<{}>, initial value {}{shown}",
        r.name, r.size, r.width, r.init
    );
    if !r.elements.is_empty() {
        let mut t = Columns::new(&[">index", ">value"]);
        for e in &r.elements {
            t.row(vec![e.index.to_string(), e.value.to_string()]);
        }
        t.write(out, indent + 2);
    }
}

fn counter(out: &mut String, c: &CounterState, rows: Rows, indent: usize) {
    let pad = " ".repeat(indent);
    let shown = match rows {
        Rows::Read if c.counters.is_empty() => "; every one zero".into(),
        Rows::Read => String::new(),
        Rows::State => format!("; {} non-zero", c.counters.len()),
    };
    let _ = writeln!(
        out,
        "{pad}{}: counter of {}, {}{shown}",
        c.name,
        kind_name(c.kind),
        plural(c.size as usize, "counter", "counters")
    );
    if !c.counters.is_empty() {
        let mut header = vec![">index".to_string()];
        header.extend(count_header(c.kind, ""));
        let header: Vec<&str> = header.iter().map(String::as_str).collect();
        let mut t = Columns::new(&header);
        for k in &c.counters {
            let counts = Counts {
                packets: k.packets,
                bytes: k.bytes,
            };
            let mut row = vec![k.index.to_string()];
            row.extend(count_cells(c.kind, counts));
            t.row(row);
        }
        t.write(out, indent + 2);
    }
}

fn meter(out: &mut String, m: &MeterState, rows: Rows, at: Time, indent: usize) {
    let pad = " ".repeat(indent);
    let shown = match rows {
        Rows::Read if m.meters.is_empty() => "; none configured".into(),
        Rows::Read => String::new(),
        Rows::State => format!("; {} configured", m.meters.len()),
    };
    let unit = kind_name(m.unit);
    let adjust = match m.byte_count_adjust {
        0 => String::new(),
        b => format!("; each packet's length adjusted by {b:+} bytes"),
    };
    let _ = writeln!(
        out,
        "{pad}{}: meter of {unit}, {}{shown}{adjust}; buckets (in {unit}) at {at}",
        m.name,
        plural(m.size as usize, "meter", "meters")
    );
    if !m.meters.is_empty() {
        let rate = format!(">CIR ({unit}/s)");
        let peak = format!(">PIR ({unit}/s)");
        let mut t = Columns::new(&[
            ">index",
            &rate,
            &peak,
            ">CBS",
            ">PBS",
            ">committed bucket",
            ">peak bucket",
        ]);
        for l in &m.meters {
            let mut row = vec![l.index.to_string()];
            match l.config {
                Some(c) => row.extend([c.cir, c.pir, c.cbs, c.pbs].map(|v| v.to_string())),
                None => row.extend(
                    ["unconfigured (green)".to_string()]
                        .into_iter()
                        .chain(std::iter::repeat_n(String::new(), 3)),
                ),
            }
            row.extend([l.committed.to_string(), l.peak.to_string()]);
            t.row(row);
        }
        t.write(out, indent + 2);
    }
}

fn table(out: &mut String, d: &TableDump, indent: usize) {
    let pad = " ".repeat(indent);
    let direct = d.direct_misses.map_or(String::new(), |c| {
        let kind = d.direct_counter.unwrap_or(CountKind::PacketsAndBytes);
        format!("; direct counter of misses: {}", count_words(kind, c))
    });
    if d.keys.is_empty() {
        // No key, no entries: every packet that applies it runs its action.
        let _ = writeln!(
            out,
            "{pad}{}: keyless table running {}; applied to {}{direct}",
            d.name,
            d.default_action,
            plural(d.misses as usize, "packet", "packets")
        );
        return;
    }
    let _ = writeln!(
        out,
        "{pad}{}: table, {} of {} entries; {} (default action {}{direct})",
        d.name,
        d.entries.len(),
        d.size,
        plural(d.misses as usize, "miss", "misses"),
        d.default_action
    );
    if d.entries.is_empty() {
        return;
    }
    let ranked = d.entries.iter().any(|e| e.priority != 0);
    let mut header: Vec<String> = vec![">handle".into()];
    header.extend(d.keys.iter().map(|k| k.name.clone()));
    if ranked {
        header.push(">priority".into());
    }
    header.extend(["action".into(), "action data".into(), ">hits".into()]);
    if let Some(kind) = d.direct_counter {
        header.extend(count_header(kind, "direct "));
    }
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut t = Columns::new(&header);
    for e in &d.entries {
        let mut row = vec![e.handle.to_string()];
        row.extend(e.key.iter().map(ToString::to_string));
        if ranked {
            row.push(e.priority.to_string());
        }
        let args: Vec<String> = e
            .args
            .iter()
            .map(|a| format!("{}={}", a.name, value(a.value)))
            .collect();
        row.extend([e.action.clone(), args.join(", "), e.hits.to_string()]);
        if let (Some(kind), Some(c)) = (d.direct_counter, e.direct) {
            row.extend(count_cells(kind, c));
        }
        t.row(row);
    }
    t.write(out, indent + 2);
}

fn direct_count(out: &mut String, d: &DirectCount, indent: usize) {
    let pad = " ".repeat(indent);
    let of = match &d.key {
        None => "misses".to_string(),
        Some(key) => {
            let key: Vec<String> = key.iter().map(ToString::to_string).collect();
            let priority = match d.priority {
                0 => String::new(),
                p => format!(", priority {p}"),
            };
            format!("entry [{}]{priority}", key.join(", "))
        }
    };
    let _ = writeln!(
        out,
        "{pad}{}: direct counter of {of}: {}",
        d.table,
        count_words(d.kind, d.counts)
    );
}

fn reading(out: &mut String, r: &Reading, at: Time, indent: usize) {
    match r {
        Reading::Register(x) => register(out, x, Rows::Read, indent),
        Reading::Counter(x) => counter(out, x, Rows::Read, indent),
        Reading::Meter(x) => meter(out, x, Rows::Read, at, indent),
        Reading::DirectCounter(x) => direct_count(out, x, indent),
        Reading::Table(x) => table(out, x, indent),
    }
}

fn gress(out: &mut String, g: &GressState, at: Time, indent: usize) {
    for r in &g.registers {
        register(out, r, Rows::State, indent);
    }
    for c in &g.counters {
        counter(out, c, Rows::State, indent);
    }
    for m in &g.meters {
        meter(out, m, Rows::State, at, indent);
    }
    for t in &g.tables {
        table(out, t, indent);
    }
}

/// A chip's state: per group of pipes, its ingress objects then its egress objects.
pub fn state(s: &ChipState) -> String {
    let at = Time(s.at_ps);
    let mut out = format!(
        "state at {at} (cycle {}): registers not at their initial value, non-zero counters, \
         configured meters, every table entry with its hits\n",
        s.cycle
    );
    for g in &s.pipes {
        let _ = writeln!(out, "{}", pipes_label(g, &s.pipes));
        for gs in [&g.state.ingress, &g.state.egress] {
            gress(&mut out, gs, at, 2);
        }
        if g.state.ingress.is_empty() && g.state.egress.is_empty() {
            out.push_str("  no register, counter, meter or table\n");
        }
    }
    out
}

/// Reads made during a run, in time order, each with what every group of pipes returned.
pub fn reads(reads: &[ControlRead]) -> String {
    let mut out = String::new();
    for r in reads {
        let at = Time(r.at_ps);
        for g in &r.pipes {
            let _ = writeln!(
                out,
                "at {at} (cycle {}), {}:",
                r.cycle,
                pipes_label(g, &r.pipes)
            );
            reading(&mut out, &g.state, at, 2);
        }
    }
    out
}

/// `state.txt`'s part for one chip: `title`, the reads made during the run, then the state
/// at its end.
pub fn chip(title: &str, control_reads: &[ControlRead], end: &ChipState) -> String {
    let mut out = format!("{title}\n\n");
    if !control_reads.is_empty() {
        out.push_str(
            "control-plane reads (each saw every packet that reached the stage of what it \
             reads before its cycle)\n",
        );
        out.push_str(&reads(control_reads));
        out.push('\n');
    }
    out.push_str(&state(end));
    out
}
