//! STF-like packet tests: a small line format that sends packets into a chip running a
//! compiled program and checks what comes out, and the registers, counters and drops
//! left behind. See docs/STF.md for the format.
//!
//! Why a text format: per-stage behaviour is easiest to state as "this packet in, that
//! packet out", and a teacher or an engineer can write one without Rust. It follows the
//! spirit of p4c's STF (packets and expectations per port, in order), runs the real path
//! (the `dsl` compiler, the chip with its MACs, pipes and TM, via [`Bench`]), and reports
//! failures as `file:line: what`.
//!
//! Execution: commands run in order. `packet` and `expect` lines accumulate; they are run
//! (the bench drains the chip) and compared when a `run` line, a control-plane line, a
//! state check or the end of the file comes. Control-plane lines apply to every pipe of the
//! drained chip, so they take effect for the packets after them.

use asic_bench::bench::{Bench, Departure};
use asic_io::load::{compile_file, Base};
use asic_model::chip::DropReason;
use asic_model::profile::ChipProfile;
use pipelines::control::{
    resolve_op, ControlOp, EntryKey, MeterSetting, RegisterWrite, ResolvedControlOp,
};
use pipelines::entries::{parse_value, resolve_key, EntrySpec, KeySpec, Value};
use pipelines::program::Program;
use pipelines::time::Time;
use std::path::{Path, PathBuf};

/// What running an STF file did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StfReport {
    /// Why the file was skipped (`requires externs` and the program does not compile yet).
    pub skipped: Option<String>,
    /// Packets sent.
    pub packets_sent: usize,
    /// Packets expected and matched.
    pub packets_matched: usize,
    /// Register, counter and drop checks passed.
    pub state_checks: usize,
}

/// A failure: a message, and the line it belongs to when that is not the line being run
/// (a packet expectation checked later).
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

fn at_line(line: usize, msg: String) -> Failure {
    Failure {
        line: Some(line),
        msg,
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
    /// Nibbles; `None` is a wildcard.
    pattern: Vec<Option<u8>>,
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
}

/// Run an STF file. `Ok` carries what was checked (or why the file was skipped); `Err` is
/// the first failure, as `file:line: message`.
pub fn run_file(path: &Path) -> Result<StfReport, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    run_text(&text, path)
}

/// Run STF text as if read from `path` (relative paths in it resolve beside `path`).
pub fn run_text(text: &str, path: &Path) -> Result<StfReport, String> {
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
    };
    let mut last_line = 0;
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        last_line = line;
        let content = strip_comment(raw).trim();
        if content.is_empty() {
            continue;
        }
        let (cmd, rest) = content
            .split_once(char::is_whitespace)
            .map_or((content, ""), |(c, r)| (c, r.trim()));
        let place =
            |f: Failure| format!("{}:{}: {}", path.display(), f.line.unwrap_or(line), f.msg);
        match r.command(line, cmd, rest) {
            Ok(true) => {}
            Ok(false) => return Ok(r.report),
            Err(f) => return Err(place(f)),
        }
    }
    let end = |f: Failure| {
        format!(
            "{}:{}: {}",
            path.display(),
            f.line.unwrap_or(last_line),
            f.msg
        )
    };
    r.bench().map_err(end)?;
    r.flush().map_err(end)?;
    Ok(r.report)
}

/// `#` starts a comment, except inside a double-quoted string (RON entries).
fn strip_comment(s: &str) -> &str {
    let mut quoted = false;
    for (i, c) in s.char_indices() {
        match c {
            '"' => quoted = !quoted,
            '#' if !quoted => return &s[..i],
            _ => {}
        }
    }
    s
}

fn number(s: &str, what: &str) -> Result<u128, String> {
    parse_value(&Value::Text(s.to_string())).map_err(|e| format!("{what}: {e}"))
}

fn number_u64(s: &str, what: &str) -> Result<u64, String> {
    u64::try_from(number(s, what)?).map_err(|_| format!("{what} `{s}` does not fit 64 bits"))
}

/// A port or pipe number: 16 bits (a chip then refuses one it lacks, by name).
fn number_u16(s: &str, what: &str) -> Result<u16, String> {
    u16::try_from(number(s, what)?).map_err(|_| format!("{what} `{s}` does not fit 16 bits"))
}

/// Hex digits (whitespace between them allowed), `*` for a wildcard nibble if `wild`.
fn nibbles(tokens: &[&str], wild: bool) -> Result<Vec<Option<u8>>, String> {
    let mut v = Vec::new();
    for t in tokens {
        for c in t.chars() {
            match c {
                '*' if wild => v.push(None),
                c => v.push(Some(c.to_digit(16).ok_or_else(|| {
                    format!(
                        "`{c}` is not a hex digit{}",
                        if wild { " or `*`" } else { "" }
                    )
                })? as u8)),
            }
        }
    }
    if v.len() % 2 != 0 {
        return Err(format!(
            "{} hex digits: not a whole number of bytes",
            v.len()
        ));
    }
    if v.is_empty() {
        return Err("no bytes given".into());
    }
    Ok(v)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn show_pattern(p: &[Option<u8>]) -> String {
    p.iter()
        .map(|n| n.map_or('*', |d| char::from_digit(d as u32, 16).unwrap_or('?')))
        .collect()
}

fn matches(p: &[Option<u8>], data: &[u8]) -> bool {
    p.len() == data.len() * 2
        && p.iter().enumerate().all(|(i, n)| {
            let b = data[i / 2];
            let d = if i % 2 == 0 { b >> 4 } else { b & 0xf };
            n.is_none_or(|x| x == d)
        })
}

/// `key=value` options after the positional arguments.
fn options<'a>(tokens: &[&'a str], allowed: &[&str]) -> Result<Vec<(&'a str, &'a str)>, String> {
    tokens
        .iter()
        .map(|t| {
            let (k, v) = t
                .split_once('=')
                .ok_or_else(|| format!("expected `name=value`, found `{t}`"))?;
            if !allowed.contains(&k) {
                return Err(format!(
                    "unknown option `{k}` (expected one of {})",
                    allowed.join(", ")
                ));
            }
            Ok((k, v))
        })
        .collect()
}

fn drop_reason(name: &str) -> Result<DropReason, String> {
    DropReason::ALL
        .iter()
        .copied()
        .find(|r| r.name() == name)
        .ok_or_else(|| {
            let all: Vec<&str> = DropReason::ALL.iter().map(|r| r.name()).collect();
            format!("no drop reason `{name}` (reasons: {})", all.join(", "))
        })
}

impl Runner {
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
                    index: number_u64(index, "index")? as u32,
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
                    index: number_u64(index, "index")? as u32,
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
                        (&tokens[..i], Some(Time::from_input_ns(number_u64(ns, "time")?, "time")?))
                    }
                    None => (&tokens[..], None),
                };
                let [port, ref bytes @ ..] = body[..] else {
                    return Err("usage: packet <port> <hex bytes> [at <ns>]".into());
                };
                let port = number_u16(port, "port")?;
                let data: Vec<u8> = nibbles(bytes, false)?
                    .chunks(2)
                    .map(|c| (c[0].unwrap_or(0) << 4) | c[1].unwrap_or(0))
                    .collect();
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
                                "at-ns" => at_ps = Some(v * 1000),
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
                    pattern: nibbles(bytes, true)?,
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
                    .register_read_by_name(pipe, name, number_u64(index, "index")? as u32)
                    .map_err(|e| e.to_string())?;
                let want = number(value, "value")?;
                if got as u128 != want {
                    return fail(format!(
                        "register {name}[{index}] is {got}, expected {want}"
                    ));
                }
                self.report.state_checks += 1;
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
                    .counter_read_by_name(pipe, name, number_u64(index, "index")? as u32)
                    .map_err(|e| e.to_string())?;
                self.check_counts(&format!("counter {name}[{index}]"), got, &opts)?;
            }
            "expect_direct_counter" => {
                // expect_direct_counter <table> miss|[<RON key>] [priority=<n>] [packets=..] ...
                let (table, rest) = rest.split_once(char::is_whitespace).ok_or(
                    "usage: expect_direct_counter <table> miss|[key] [packets=<n>] [bytes=<n>]",
                )?;
                let rest = rest.trim();
                let (key, opts_text) = if let Some(r) = rest.strip_prefix("miss") {
                    (None, r)
                } else if rest.starts_with('[') {
                    let end = rest.rfind(']').ok_or("the key list has no closing `]`")?;
                    let key: Vec<KeySpec> =
                        ron::from_str(&rest[..=end]).map_err(|e| format!("key: {}", e.code))?;
                    (Some(resolve_key(&key)?), &rest[end + 1..])
                } else {
                    return Err("expected `miss` or a key list like [Exact(5)]".into());
                };
                let toks: Vec<&str> = opts_text.split_whitespace().collect();
                let opts = options(&toks, &["packets", "bytes", "pipe", "priority"])?;
                let pipe = opt_pipe(&opts)?;
                let priority = opt_u64(&opts, "priority")?.unwrap_or(0) as u32;
                self.settle()?;
                let got = self
                    .bench()?
                    .chip()
                    .direct_counter_read_by_name(pipe, table, key.as_deref().map(|k| (k, priority)))
                    .map_err(|e| e.to_string())?;
                self.check_counts(&format!("direct counter of {table}"), got, &opts)?;
            }
            "expect_drops" => {
                let [reason, n] = tokens[..] else {
                    return Err("usage: expect_drops <reason> <count>".into());
                };
                let reason = drop_reason(reason)?;
                self.settle()?;
                let got = self.bench()?.chip().drops(reason);
                let want = number_u64(n, "count")?;
                if got != want {
                    return fail(format!("{} drops: {got}, expected {want}", reason.name()));
                }
                self.report.state_checks += 1;
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

    fn check_counts(
        &mut self,
        what: &str,
        got: pipelines::counter::Counts,
        opts: &[(&str, &str)],
    ) -> R<()> {
        if let Some(p) = opt_u64(opts, "packets")? {
            if got.packets != p {
                return fail(format!("{what}: {} packets, expected {p}", got.packets));
            }
        }
        if let Some(b) = opt_u64(opts, "bytes")? {
            if got.bytes != b {
                return fail(format!("{what}: {} bytes, expected {b}", got.bytes));
            }
        }
        self.report.state_checks += 1;
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
    /// expectations (a mismatch names the `expect` line).
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
        let report = bench.run()?;
        let clock = bench.chip().clock();
        let out: Vec<Departure> = bench.departures()[self.seen..].to_vec();
        self.seen = bench.departures().len();
        self.phase_start = Time(report.end_ps.div_ceil(1000) * 1000);
        self.last_at = self.phase_start;
        let mut used = vec![false; out.len()];
        for e in std::mem::take(&mut self.expects) {
            let Some(i) = (0..out.len()).find(|&i| !used[i] && out[i].port == e.port) else {
                return Err(at_line(
                    e.line,
                    format!("expected a packet on port {}, none left it", e.port),
                ));
            };
            used[i] = true;
            let d = &out[i];
            if !matches(&e.pattern, &d.data) {
                return Err(at_line(
                    e.line,
                    format!(
                        "packet on port {} differs\n  expected {}\n  got      {}",
                        e.port,
                        show_pattern(&e.pattern),
                        hex(&d.data)
                    ),
                ));
            }
            let cycle = clock.cycle_at_or_after(d.start);
            if let Some(c) = e.at_cycle {
                if cycle != c {
                    return Err(at_line(
                        e.line,
                        format!(
                            "packet on port {} left at cycle {cycle} ({}), expected cycle {c}",
                            e.port, d.start
                        ),
                    ));
                }
            }
            if let Some(ps) = e.at_ps {
                if d.start.ps() != ps {
                    return Err(at_line(
                        e.line,
                        format!(
                            "packet on port {} left at {}, expected {}",
                            e.port,
                            d.start,
                            Time(ps)
                        ),
                    ));
                }
            }
            self.report.packets_matched += 1;
        }
        if let Some(i) = used.iter().position(|u| !u) {
            return Err(Failure::from(format!(
                "unexpected packet on port {} at {}: {}",
                out[i].port,
                out[i].start,
                hex(&out[i].data)
            )));
        }
        Ok(())
    }
}

fn pipe_option(opts: &[&str]) -> Result<u16, String> {
    opt_pipe(&options(opts, &["pipe"])?)
}

/// The `pipe=` option (pipe 0 if absent).
fn opt_pipe(opts: &[(&str, &str)]) -> Result<u16, String> {
    opts.iter()
        .find(|(o, _)| *o == "pipe")
        .map_or(Ok(0), |(_, v)| number_u16(v, "pipe"))
}

fn opt_u64(opts: &[(&str, &str)], k: &str) -> Result<Option<u64>, String> {
    opts.iter()
        .find(|(o, _)| *o == k)
        .map(|(_, v)| number_u64(v, k))
        .transpose()
}

/// The `*.stf` files in `dir`, in name order.
pub fn stf_files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "stf"))
        .collect();
    files.sort();
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_nibbles_and_wildcards() {
        let p = nibbles(&["0a*b", "**"], true).unwrap();
        assert!(matches(&p, &[0x0a, 0x1b, 0xff]));
        assert!(!matches(&p, &[0x0b, 0x1b, 0xff]));
        assert!(!matches(&p, &[0x0a, 0x1b]));
        assert!(nibbles(&["abc"], false).is_err());
        assert!(nibbles(&["a*"], false).is_err());
        assert_eq!(show_pattern(&p), "0a*b**");
    }

    #[test]
    fn comments_stop_outside_strings() {
        assert_eq!(strip_comment("add (a: \"#x\") # note"), "add (a: \"#x\") ");
        assert_eq!(strip_comment("# all"), "");
    }
}
