//! The runner: commands in file order, packets and expectations accumulated and compared
//! when they run.
//!
//! `packet` and `expect` lines accumulate; they are run (the bench drains the chip) and
//! compared when a `run` line, a control-plane line, a state check or the end of the file
//! comes. Control-plane lines apply to every pipe of the drained chip, so they take effect
//! for the packets after them.
//!
//! Two kinds of failure. An expectation that does not hold (a packet that differs, is
//! missing or extra, leaves at another cycle; a register, counter or drop count) is recorded
//! and the file goes on: the chip is as the program left it, so the later checks still mean
//! something, and one run shows every wrong expectation. A line that cannot be run (a syntax
//! error, an unknown name, a program that does not compile, an entry a table refuses) ends
//! the file there: what follows would run on a chip set up other than the file says.

use super::diff::field_diff;
use super::parse::{
    drop_reason, hex, number, number_u16, number_u32, number_u64, opt_pipe, opt_u64, options,
    strip_comment, Pattern,
};
use super::StfReport;
use crate::bench::{Bench, Departure};
use asic_io::load::{compile_file, Base};
use asic_model::profile::ChipProfile;
use pipelines::control::{
    resolve_op, ControlOp, EntryKey, MeterSetting, RegisterWrite, ResolvedControlOp,
};
use pipelines::entries::{resolve_key, EntrySpec, KeySpec, Value};
use pipelines::program::Program;
use pipelines::time::Time;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A line that cannot be run: a message, and the line it belongs to when that is not the
/// line being run (a packet sent earlier).
struct Failure {
    line: Option<usize>,
    msg: String,
}

impl From<String> for Failure {
    fn from(msg: String) -> Failure {
        Failure { line: None, msg }
    }
}

impl From<&str> for Failure {
    fn from(msg: &str) -> Failure {
        Failure {
            line: None,
            msg: msg.to_string(),
        }
    }
}

type R<T> = Result<T, Failure>;

fn fail<T>(msg: String) -> R<T> {
    Err(msg.into())
}

/// An expected packet.
struct Expect {
    line: usize,
    port: u16,
    pattern: Pattern,
    at_cycle: Option<u64>,
    at_ps: Option<u64>,
}

struct Runner {
    dir: PathBuf,
    chip: Option<ChipProfile>,
    program: Option<Program>,
    requires_externs: bool,
    bench: Option<Bench>,
    packets: Vec<(usize, u16, Time, Vec<u8>)>,
    expects: Vec<Expect>,
    seen: usize,
    phase_start: Time,
    last_at: Time,
    report: StfReport,
    /// The line being run (at the end of the file, its last line).
    line: usize,
    /// Expectations that did not hold: (line, what).
    failures: Vec<(usize, String)>,
}

/// The most unexpected packets described per port and run; the rest are counted.
const MAX_EXTRA: usize = 3;

/// Run STF text as if read from `path` (relative paths in it resolve beside `path`).
pub(super) fn run_text(text: &str, path: &Path) -> Result<StfReport, String> {
    let mut r = Runner {
        dir: path.parent().unwrap_or(Path::new(".")).to_path_buf(),
        chip: None,
        program: None,
        requires_externs: false,
        bench: None,
        packets: Vec::new(),
        expects: Vec::new(),
        seen: 0,
        phase_start: Time::ZERO,
        last_at: Time::ZERO,
        report: StfReport::default(),
        line: 1,
        failures: Vec::new(),
    };
    let outcome = r.lines(text);
    if let Err(f) = outcome {
        r.failures.push((f.line.unwrap_or(r.line), f.msg));
    } else if r.failures.is_empty() {
        return Ok(r.report);
    }
    // In line order; failures of one line in the order they were found.
    r.failures.sort_by_key(|(line, _)| *line);
    let text: Vec<String> = r
        .failures
        .iter()
        .map(|(line, what)| format!("{}:{line}: {what}", path.display()))
        .collect();
    Err(text.join("\n"))
}

impl Runner {
    /// Run every line, then what is pending at the end of the file.
    fn lines(&mut self, text: &str) -> R<()> {
        for (i, raw) in text.lines().enumerate() {
            self.line = i + 1;
            let content = strip_comment(raw).trim();
            if content.is_empty() {
                continue;
            }
            let (cmd, rest) = content
                .split_once(char::is_whitespace)
                .map_or((content, ""), |(c, r)| (c, r.trim()));
            if !self.command(self.line, cmd, rest)? {
                return Ok(());
            }
        }
        if self.chip.is_none() || self.program.is_none() {
            return Err("the file has no `chip` and `program` lines: nothing to run".into());
        }
        self.settle()
    }

    /// Record an expectation that did not hold.
    fn failed(&mut self, line: usize, what: String) {
        self.failures.push((line, what));
    }

    fn program(&self) -> R<&Program> {
        self.program
            .as_ref()
            .ok_or_else(|| "no `program` line before this one".into())
    }

    /// The bench, built on first use (after the `chip` and `program` lines).
    fn bench(&mut self) -> R<&mut Bench> {
        if self.bench.is_none() {
            let chip = self.chip.clone().ok_or("no `chip` line before this one")?;
            let program = self.program()?.clone();
            let mut b = Bench::new(chip, &program, &[])?;
            b.keep_departures();
            self.bench = Some(b);
        }
        Ok(self.bench.as_mut().expect("built above"))
    }

    /// Returns `Ok(false)` when the file is to be skipped.
    fn command(&mut self, line: usize, cmd: &str, rest: &str) -> R<bool> {
        let tokens: Vec<&str> = rest.split_whitespace().collect();
        match cmd {
            "chip" => {
                if self.bench.is_some() {
                    return Err("`chip` must come before packets and control-plane lines".into());
                }
                if self.chip.is_some() {
                    return Err("a second `chip` line: a file runs one chip".into());
                }
                self.chip = Some(Base(&self.dir).profile(rest)?);
            }
            "requires" => match rest {
                "externs" => self.requires_externs = true,
                other => return fail(format!("unknown requirement `{other}` (known: externs)")),
            },
            "program" => {
                if self.bench.is_some() {
                    return Err("`program` must come before packets and control-plane lines".into());
                }
                let chip = self
                    .chip
                    .as_ref()
                    .ok_or("`chip` must come before `program`")?;
                match compile_file(&self.dir.join(rest), chip, false) {
                    Ok(c) => self.program = Some(c.program),
                    Err(e) if self.requires_externs => {
                        self.report.skipped = Some(format!("needs dsl extern lowering: {e}"));
                        return Ok(false);
                    }
                    Err(e) => return Err(e.into()),
                }
            }
            "add" | "modify" => {
                let e: EntrySpec = ron::from_str(rest).map_err(|e| format!("entry: {}", e.code))?;
                let op = if cmd == "add" {
                    ControlOp::AddEntry(e)
                } else {
                    ControlOp::ModifyEntry(e)
                };
                self.control(&op)?;
            }
            "delete" => {
                let k: EntryKey =
                    ron::from_str(rest).map_err(|e| format!("entry key: {}", e.code))?;
                self.control(&ControlOp::DeleteEntry(k))?;
            }
            "control" => {
                let op: ControlOp =
                    ron::from_str(rest).map_err(|e| format!("operation: {}", e.code))?;
                self.control(&op)?;
            }
            "register_write" => {
                let [name, index, value] = tokens[..] else {
                    return Err("usage: register_write <register> <index> <value>".into());
                };
                let op = ControlOp::WriteRegister(RegisterWrite {
                    register: name.into(),
                    index: number_u32(index, "index")?,
                    value: Value::Text(value.into()),
                });
                self.control(&op)?;
            }
            "meter_config" => {
                let (name, index, opts) = match tokens[..] {
                    [name, index, ref opts @ ..] => (name, index, opts),
                    _ => {
                        return Err(
                            "usage: meter_config <meter> <index> cir=.. pir=.. cbs=.. pbs=.."
                                .into(),
                        )
                    }
                };
                let opts = options(opts, &["cir", "pir", "cbs", "pbs"])?;
                let get = |k: &str| {
                    opts.iter()
                        .find(|(o, _)| *o == k)
                        .map(|(_, v)| Value::Text(v.to_string()))
                        .ok_or_else(|| format!("meter_config needs {k}=<value>"))
                };
                let op = ControlOp::ConfigureMeter(MeterSetting {
                    meter: name.into(),
                    index: number_u32(index, "index")?,
                    cir: get("cir")?,
                    pir: get("pir")?,
                    cbs: get("cbs")?,
                    pbs: get("pbs")?,
                });
                self.control(&op)?;
            }
            "packet" => {
                let (body, at) = match tokens.iter().position(|t| *t == "at") {
                    Some(i) => {
                        let ns = tokens.get(i + 1).ok_or("`at` needs a time in ns")?;
                        if tokens.len() > i + 2 {
                            return fail(format!("unexpected `{}` after the time", tokens[i + 2]));
                        }
                        (
                            &tokens[..i],
                            Some(Time::from_input_ns(number_u64(ns, "time")?, "time")?),
                        )
                    }
                    None => (&tokens[..], None),
                };
                let [port, ref bytes @ ..] = body[..] else {
                    return Err("usage: packet <port> <hex bytes> [at <ns>]".into());
                };
                let port = number_u16(port, "port")?;
                let data = Pattern::bytes(bytes)?;
                let t = at.unwrap_or(self.last_at.max(self.phase_start));
                if t < self.phase_start {
                    return fail(format!(
                        "packet at {t} is before the end of the previous run ({})",
                        self.phase_start
                    ));
                }
                self.last_at = t;
                self.bench()?;
                self.packets.push((line, port, t, data));
            }
            "expect" => {
                let mut body = Vec::new();
                let (mut at_cycle, mut at_ps) = (None, None);
                let mut it = tokens.iter();
                while let Some(&t) = it.next() {
                    match t {
                        "at-cycle" | "at-ns" | "at-ps" => {
                            let v = it.next().ok_or(format!("`{t}` needs a number"))?;
                            let v = number_u64(v, t)?;
                            match t {
                                "at-cycle" => at_cycle = Some(v),
                                "at-ns" => {
                                    at_ps = Some(v.checked_mul(1000).ok_or_else(|| {
                                        format!("at-ns {v}: beyond the longest time")
                                    })?)
                                }
                                _ => at_ps = Some(v),
                            }
                        }
                        t => body.push(t),
                    }
                }
                let [port, ref bytes @ ..] = body[..] else {
                    return Err("usage: expect <port> <hex bytes, * for any nibble> [at-cycle <n>] [at-ns <n>]".into());
                };
                self.bench()?;
                self.expects.push(Expect {
                    line,
                    port: number_u16(port, "port")?,
                    pattern: Pattern::parse(bytes, true)?,
                    at_cycle,
                    at_ps,
                });
            }
            "run" => {
                self.bench()?;
                self.flush()?;
            }
            "expect_register" => {
                let (name, index, value, opts) = match tokens[..] {
                    [n, i, v, ref o @ ..] => (n, i, v, o),
                    _ => {
                        return Err(
                            "usage: expect_register <register> <index> <value> [pipe=<p>]".into(),
                        )
                    }
                };
                let pipe = pipe_option(opts)?;
                self.settle()?;
                let chip = self.bench()?.chip();
                let got = chip
                    .register_read_by_name(pipe, name, number_u32(index, "index")?)
                    .map_err(|e| e.to_string())?;
                let want = number(value, "value")?;
                if u128::from(got) == want {
                    self.report.state_checks += 1;
                } else {
                    self.failed(
                        line,
                        format!("register {name}[{index}]: expected {want}, got {got}"),
                    );
                }
            }
            "expect_counter" => {
                let (name, index, opts) = match tokens[..] {
                    [n, i, ref o @ ..] => (n, i, o),
                    _ => return Err("usage: expect_counter <counter> <index> [packets=<n>] [bytes=<n>] [pipe=<p>]".into()),
                };
                self.settle()?;
                let opts = options(opts, &["packets", "bytes", "pipe"])?;
                let pipe = opt_pipe(&opts)?;
                let got = self
                    .bench()?
                    .chip()
                    .counter_read_by_name(pipe, name, number_u32(index, "index")?)
                    .map_err(|e| e.to_string())?;
                self.check_counts(line, &format!("counter {name}[{index}]"), got, &opts)?;
            }
            "expect_direct_counter" => {
                // expect_direct_counter <table> miss|[<RON key>] [priority=<n>] [packets=..] ...
                let (table, rest) = rest.split_once(char::is_whitespace).ok_or(
                    "usage: expect_direct_counter <table> miss|[key] [packets=<n>] [bytes=<n>]",
                )?;
                let rest = rest.trim();
                let (key, of, opts_text) = if let Some(r) = rest.strip_prefix("miss") {
                    (None, "misses", r)
                } else if rest.starts_with('[') {
                    let end = rest.rfind(']').ok_or("the key list has no closing `]`")?;
                    let key: Vec<KeySpec> =
                        ron::from_str(&rest[..=end]).map_err(|e| format!("key: {}", e.code))?;
                    (Some(resolve_key(&key)?), &rest[..=end], &rest[end + 1..])
                } else {
                    return Err("expected `miss` or a key list like [Exact(5)]".into());
                };
                let toks: Vec<&str> = opts_text.split_whitespace().collect();
                let opts = options(&toks, &["packets", "bytes", "pipe", "priority"])?;
                let pipe = opt_pipe(&opts)?;
                let priority = opts
                    .iter()
                    .find(|(o, _)| *o == "priority")
                    .map_or(Ok(0), |(_, v)| number_u32(v, "priority"))?;
                self.settle()?;
                let got = self
                    .bench()?
                    .chip()
                    .direct_counter_read_by_name(pipe, table, key.as_deref().map(|k| (k, priority)))
                    .map_err(|e| e.to_string())?;
                self.check_counts(
                    line,
                    &format!("direct counter of {table} for {of}"),
                    got,
                    &opts,
                )?;
            }
            "expect_drops" => {
                let [reason, n] = tokens[..] else {
                    return Err("usage: expect_drops <reason> <count>".into());
                };
                let reason = drop_reason(reason)?;
                self.settle()?;
                let got = self.bench()?.chip().drops(reason);
                let want = number_u64(n, "count")?;
                if got == want {
                    self.report.state_checks += 1;
                } else {
                    self.failed(
                        line,
                        format!("{} drops: expected {want}, got {got}", reason.name()),
                    );
                }
            }
            other => {
                return Err(Failure::from(format!(
                    "unknown command `{other}` (see docs/STF.md: chip, program, requires, add, \
                     modify, delete, control, register_write, meter_config, packet, expect, run, \
                     expect_register, expect_counter, expect_direct_counter, expect_drops)"
                )))
            }
        }
        Ok(true)
    }

    /// Compare a counter with the `packets=` and `bytes=` the line gives.
    fn check_counts(
        &mut self,
        line: usize,
        what: &str,
        got: pipelines::counter::Counts,
        opts: &[(&str, &str)],
    ) -> R<()> {
        let mut held = true;
        for (unit, got) in [("packets", got.packets), ("bytes", got.bytes)] {
            if let Some(want) = opt_u64(opts, unit)? {
                if got != want {
                    held = false;
                    self.failed(line, format!("{what}: expected {want} {unit}, got {got}"));
                }
            }
        }
        if held {
            self.report.state_checks += 1;
        }
        Ok(())
    }

    /// Run pending packets before a state check or a control-plane change.
    fn settle(&mut self) -> R<()> {
        self.bench()?;
        self.flush()
    }

    fn control(&mut self, op: &ControlOp) -> R<()> {
        let resolved: ResolvedControlOp = resolve_op(self.program()?, op)?;
        self.settle()?;
        self.bench()?
            .chip_mut()
            .apply(&resolved)
            .map_err(|e| e.to_string().into())
    }

    /// Send the pending packets, run the chip dry and compare what left with the pending
    /// expectations: per port, in order. A mismatch is recorded at the `expect` line; a
    /// packet nobody expected at the line that ran them.
    fn flush(&mut self) -> R<()> {
        if self.packets.is_empty() && self.expects.is_empty() {
            return Ok(());
        }
        let bench = self.bench.as_mut().expect("built before packets");
        let mut ports: Vec<u16> = self.packets.iter().map(|p| p.1).collect();
        ports.sort_unstable();
        ports.dedup();
        for port in ports {
            let frames: Vec<(Time, Vec<u8>)> = self
                .packets
                .iter()
                .filter(|p| p.1 == port)
                .map(|p| (p.2, p.3.clone()))
                .collect();
            let first = self.packets.iter().find(|p| p.1 == port).map(|p| p.0);
            bench.add_frames(port, frames).map_err(|e| Failure {
                line: first,
                msg: e,
            })?;
        }
        self.report.packets_sent += self.packets.len();
        self.packets.clear();
        let report = bench.run().map_err(String::from)?;
        let clock = bench.chip().clock();
        let out: Vec<Departure> = bench.departures()[self.seen..].to_vec();
        self.seen = bench.departures().len();
        self.phase_start = Time(report.end_ps.div_ceil(1000) * 1000);
        self.last_at = self.phase_start;
        // What left each port in this run, in order, and how many of them were expected.
        let mut left: BTreeMap<u16, Vec<&Departure>> = BTreeMap::new();
        for d in &out {
            left.entry(d.port).or_default().push(d);
        }
        let mut expected: BTreeMap<u16, usize> = BTreeMap::new();
        for e in std::mem::take(&mut self.expects) {
            let k = expected.entry(e.port).or_default();
            *k += 1;
            let n = *k;
            let port_left = left.get(&e.port).map_or(&[][..], Vec::as_slice);
            let Some(d) = port_left.get(n - 1) else {
                self.failed(
                    e.line,
                    format!(
                        "expected packet #{n} on port {} did not leave: {} left port {} in this run",
                        e.port,
                        packets(port_left.len()),
                        e.port
                    ),
                );
                continue;
            };
            let mut held = true;
            if !e.pattern.matches(&d.data) {
                held = false;
                let fields: String = field_diff(&e.pattern, &d.data)
                    .iter()
                    .map(|l| format!("\n  {l}"))
                    .collect();
                self.failed(
                    e.line,
                    format!(
                        "packet #{n} on port {} differs:{fields}\n  expected {}\n  got      {}",
                        e.port,
                        e.pattern,
                        hex(&d.data)
                    ),
                );
            }
            let cycle = clock.cycle_at_or_after(d.start);
            if let Some(c) = e.at_cycle.filter(|&c| c != cycle) {
                held = false;
                self.failed(
                    e.line,
                    format!(
                        "packet #{n} on port {} left at the wrong cycle: expected {c}, got {cycle} ({})",
                        e.port, d.start
                    ),
                );
            }
            if let Some(ps) = e.at_ps.filter(|&ps| ps != d.start.ps()) {
                held = false;
                self.failed(
                    e.line,
                    format!(
                        "packet #{n} on port {} left at the wrong time: expected {}, got {}",
                        e.port,
                        Time(ps),
                        d.start
                    ),
                );
            }
            if held {
                self.report.packets_matched += 1;
            }
        }
        for (port, port_left) in &left {
            let n = expected.get(port).copied().unwrap_or(0);
            let extra = &port_left[n.min(port_left.len())..];
            for (i, d) in extra.iter().enumerate().take(MAX_EXTRA) {
                self.failed(
                    self.line,
                    format!(
                        "unexpected packet #{} on port {port} ({} expected there in this run), left at {}\n  got      {}",
                        n + i + 1,
                        packets(n),
                        d.start,
                        hex(&d.data)
                    ),
                );
            }
            if extra.len() > MAX_EXTRA {
                let more = extra.len() - MAX_EXTRA;
                self.failed(
                    self.line,
                    format!(
                        "... and {more} more unexpected packet{} on port {port}",
                        if more == 1 { "" } else { "s" }
                    ),
                );
            }
        }
        Ok(())
    }
}

/// `1 packet`, `3 packets`.
fn packets(n: usize) -> String {
    format!("{n} packet{}", if n == 1 { "" } else { "s" })
}

fn pipe_option(opts: &[&str]) -> Result<u16, String> {
    opt_pipe(&options(opts, &["pipe"])?)
}
