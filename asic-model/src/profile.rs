//! Chip profiles: every number that describes a modelled chip, loaded from RON.
//!
//! Built-in profiles are embedded from `asic-model/profiles/*.ron`; each number there carries
//! its public source in a comment. A user may load their own file with the same schema.
//!
//! - [`load`] takes a built-in name or a path to a RON file;
//! - [`parse`] reads RON text, reporting any error on one line as `origin:line:col: message`,
//!   and rejects fields the schema does not have as well as impossible values ([`ChipProfile::validate`]);
//! - [`builtin_source`] returns a built-in's text with its source comments (for `asic chips show`),
//!   [`ChipProfile::to_ron`] a comment-free rendering of any profile.
//!
//! Ports are numbered densely: pipe 0's front-panel ports first, each pipe's [`PortGroup`]s in order.

use std::fmt;
use std::path::Path;

use located::{parse_ron, Located};
use pipelines::spec::PipeSpec;
use serde::{Deserialize, Serialize};
use thiserror::Error;
use tm::spec::TmSpec;

/// Largest number of ports a chip may have: port ids are 9 bits wide (bf-p4c `device.h`, port width 9).
pub const MAX_PORTS: u32 = 512;

/// Built-in profiles: `(name, RON text)`, embedded at build time.
pub const BUILTIN: &[(&str, &str)] = &[
    ("tofino2-like", include_str!("../profiles/tofino2-like.ron")),
    ("tofino1-like", include_str!("../profiles/tofino1-like.ron")),
    ("rmt2013", include_str!("../profiles/rmt2013.ron")),
    ("teaching", include_str!("../profiles/teaching.ron")),
];

/// Names of the built-in profiles, in a fixed order (the first is the default chip).
pub fn builtin_names() -> impl Iterator<Item = &'static str> {
    BUILTIN.iter().map(|(name, _)| *name)
}

/// The embedded RON text of built-in `name`, with its source comments; `None` if there is no such built-in.
pub fn builtin_source(name: &str) -> Option<&'static str> {
    BUILTIN
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, text)| *text)
}

/// Loads a built-in profile by name, or else a RON file at the path `name_or_path`.
///
/// A string that is neither a built-in nor an existing file is an [`ProfileError::UnknownName`]
/// listing the built-ins.
pub fn load(name_or_path: &str) -> Result<ChipProfile, ProfileError> {
    if let Some(text) = builtin_source(name_or_path) {
        return parse(text, &format!("<builtin {name_or_path}>"));
    }
    let path = Path::new(name_or_path);
    if !path.exists() {
        return Err(ProfileError::UnknownName {
            name: name_or_path.to_string(),
            known: builtin_names().collect::<Vec<_>>().join(", "),
        });
    }
    let text = std::fs::read_to_string(path).map_err(|source| ProfileError::Io {
        path: name_or_path.to_string(),
        source,
    })?;
    parse(&text, name_or_path)
}

/// Parses RON `text` into a profile and validates it. `origin` (a file name, or `<builtin NAME>`)
/// starts every error message.
pub fn parse(text: &str, origin: &str) -> Result<ChipProfile, ProfileError> {
    let profile: ChipProfile = parse_ron(text, origin).map_err(ProfileError::Syntax)?;
    profile.validate().map_err(|e| match e {
        ProfileError::Invalid { field, reason, .. } => {
            let location = match locate(text, &field) {
                Some((line, col)) => format!("{origin}:{line}:{col}"),
                None => origin.to_string(),
            };
            ProfileError::Invalid {
                location,
                field,
                reason,
            }
        }
        other => other,
    })?;
    Ok(profile)
}

/// Why a profile could not be loaded. Every message is one line.
#[derive(Debug, Error)]
pub enum ProfileError {
    /// Neither a built-in profile nor an existing file.
    #[error("unknown chip profile `{name}`: no built-in of that name and no such file (built-ins: {known})")]
    UnknownName {
        /// What was asked for.
        name: String,
        /// The built-in names, comma-separated.
        known: String,
    },
    /// The file exists but could not be read.
    #[error("{path}: cannot read chip profile: {source}")]
    Io {
        /// The path given.
        path: String,
        /// The underlying error.
        source: std::io::Error,
    },
    /// RON syntax or type error, or a field the schema does not have (located in the file
    /// or `<builtin NAME>`).
    #[error("{0}")]
    Syntax(Located),
    /// Well-formed but impossible (e.g. zero stages).
    #[error("{location}: invalid `{field}`: {reason}")]
    Invalid {
        /// `origin:line:col` when parsed from text, else `chip profile `NAME``.
        location: String,
        /// Dotted path of the field, e.g. `pipe.stage.sram_depth` or `ports_per_pipe[1].speed_gbps`.
        field: String,
        /// Why the value is impossible.
        reason: String,
    },
}

/// A whole chip.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChipProfile {
    /// Short name, e.g. `tofino2-like`.
    pub name: String,
    /// One line on what the profile models.
    pub description: String,
    /// Pipe clock in Hz: each pipe accepts at most one packet per cycle.
    pub clock_hz: u64,
    /// Number of pipes; front-panel ports are divided evenly among them.
    pub pipes: u16,
    /// Front-panel ports of each pipe, as groups of equal speed.
    pub ports_per_pipe: Vec<PortGroup>,
    /// Resources and latencies of each pipe (all pipes alike).
    pub pipe: PipeSpec,
    /// Traffic manager.
    pub tm: TmSpec,
    /// Recirculation ports of each pipe.
    pub recirculation: RecirculationSpec,
    /// Mirror sessions, packet generator, advanced flow control and the egress FIFO.
    pub plumbing: PlumbingSpec,
}

/// Ports of one speed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PortGroup {
    /// How many ports.
    pub count: u16,
    /// Line rate in Gb/s: the fastest the group's ports run (an operator may bring one up
    /// slower, `ChipConfig::port_speeds`).
    pub speed_gbps: u32,
}

/// Recirculation capacity of each pipe.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecirculationSpec {
    /// Recirculation ports per pipe.
    pub ports_per_pipe: u16,
    /// Bandwidth of each recirculation port in Gb/s.
    pub speed_gbps: u32,
    /// Cycles from the end of a frame's serialization on a recirculation port until its
    /// first bit is back at the same pipe's ingress (the loopback; the pipes' own latency is
    /// modelled apart).
    pub latency_cycles: u32,
}

/// The chip's plumbing beyond ports and pipes (see `chip/plumbing.rs`, `chip/pktgen.rs`,
/// `chip/afc.rs` and `chip/egress_fifo.rs`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlumbingSpec {
    /// Mirror sessions: valid session ids are `1..mirror_sessions` (0 means "no mirror").
    pub mirror_sessions: u16,
    /// Packet-generator applications (timers and triggers) of the whole chip.
    pub pktgen_apps: u16,
    /// Cycles from a gress's advanced-flow-control request (`adv_flow_ctl`) until the TM's
    /// queue-pause state changes.
    pub afc_latency_cycles: u32,
    /// Per port: packets the TM has served that have not started on the wire (in the egress
    /// pipe or the MAC's FIFO). The TM does not serve a port whose FIFO is full.
    pub egress_fifo_packets: u32,
}

/// The most cycles any one latency of a profile may be: a thousand times a real stage's (10
/// to 20 cycles), and small enough that a gress of 65,535 stages with every extra still counts
/// its cycles in 32 bits (`pipelines::pipe::GressTiming`).
pub const MAX_LATENCY_CYCLES: u32 = 10_000;

impl ChipProfile {
    /// Front-panel ports of one pipe.
    pub fn ports_per_pipe_count(&self) -> u32 {
        self.ports_per_pipe.iter().map(|g| g.count as u32).sum()
    }

    /// Front-panel ports of the whole chip.
    pub fn ports_total(&self) -> u32 {
        self.pipes as u32 * self.ports_per_pipe_count()
    }

    /// Every port of the chip: the front panel's, then the recirculation ports, then one
    /// packet-generator port per pipe (the ports the chip builds and its TM serves).
    pub fn ports_all(&self) -> u32 {
        self.ports_total() + self.pipes as u32 * (self.recirculation.ports_per_pipe as u32 + 1)
    }

    /// Pipe that front-panel port `port` belongs to, or `None` if the chip has no such port.
    pub fn pipe_of_port(&self, port: u16) -> Option<u16> {
        let per_pipe = self.ports_per_pipe_count();
        if per_pipe == 0 || port as u32 >= self.ports_total() {
            return None;
        }
        Some((port as u32 / per_pipe) as u16)
    }

    /// The id of recirculation port `r` of `pipe`: the front-panel ports come first, then
    /// each pipe's recirculation ports, `ports_total() + pipe · R + r`.
    pub fn recirc_port(&self, pipe: u16, r: u16) -> Option<u16> {
        let per_pipe = self.recirculation.ports_per_pipe;
        (pipe < self.pipes && r < per_pipe).then(|| self.ports_total() as u16 + pipe * per_pipe + r)
    }

    /// The id of `pipe`'s packet-generator port (the ingress port of generated packets):
    /// after every recirculation port, `ports_total() + pipes · R + pipe`.
    pub fn pktgen_port(&self, pipe: u16) -> Option<u16> {
        (pipe < self.pipes).then(|| {
            self.ports_total() as u16 + self.pipes * self.recirculation.ports_per_pipe + pipe
        })
    }

    /// Profile line rate of front-panel port `port` in Gb/s (its group's: the fastest it runs;
    /// `Chip::port_gbps` is the speed it was brought up at), or `None` if the chip has no
    /// such port.
    pub fn port_speed_gbps(&self, port: u16) -> Option<u32> {
        self.pipe_of_port(port)?;
        let mut local = port as u32 % self.ports_per_pipe_count();
        for g in &self.ports_per_pipe {
            if local < g.count as u32 {
                return Some(g.speed_gbps);
            }
            local -= g.count as u32;
        }
        None
    }

    /// Aggregate front-panel bandwidth in Gb/s.
    pub fn total_bandwidth_gbps(&self) -> u64 {
        self.pipes as u64
            * self
                .ports_per_pipe
                .iter()
                .map(|g| g.count as u64 * g.speed_gbps as u64)
                .sum::<u64>()
    }

    /// Rejects impossible configurations, naming the offending field.
    pub fn validate(&self) -> Result<(), ProfileError> {
        let bad = |field: &str, reason: &str| ProfileError::Invalid {
            location: format!("chip profile `{}`", self.name),
            field: field.to_string(),
            reason: reason.to_string(),
        };
        let nonzero = |v: u64, field: &str| -> Result<(), ProfileError> {
            if v == 0 {
                Err(bad(field, "must be greater than 0"))
            } else {
                Ok(())
            }
        };
        if self.name.trim().is_empty() {
            return Err(bad("name", "must not be empty"));
        }
        nonzero(self.clock_hz, "clock_hz")?;
        nonzero(self.pipes as u64, "pipes")?;
        if self.ports_per_pipe.is_empty() {
            return Err(bad(
                "ports_per_pipe",
                "a pipe needs at least one port group",
            ));
        }
        for (i, g) in self.ports_per_pipe.iter().enumerate() {
            nonzero(g.count as u64, &format!("ports_per_pipe[{i}].count"))?;
            nonzero(
                g.speed_gbps as u64,
                &format!("ports_per_pipe[{i}].speed_gbps"),
            )?;
        }
        let front = self.pipes as u64 * self.ports_per_pipe_count() as u64;
        if front > MAX_PORTS as u64 {
            return Err(bad(
                "ports_per_pipe",
                &format!("{front} ports in total; port ids are 9 bits, so at most {MAX_PORTS}"),
            ));
        }
        let r = &self.recirculation;
        if r.ports_per_pipe > 0 {
            nonzero(r.speed_gbps as u64, "recirculation.speed_gbps")?;
        }
        nonzero(
            self.plumbing.egress_fifo_packets as u64,
            "plumbing.egress_fifo_packets",
        )?;
        let all = front + self.pipes as u64 * r.ports_per_pipe as u64;
        if all > MAX_PORTS as u64 {
            return Err(bad(
                "recirculation.ports_per_pipe",
                &format!(
                    "{all} ports with recirculation ports; port ids are 9 bits, so at most {MAX_PORTS}"
                ),
            ));
        }

        let p = &self.pipe;
        nonzero(p.stages as u64, "pipe.stages")?;
        let s = &p.stage;
        if s.sram_blocks > 0 {
            nonzero(s.sram_depth as u64, "pipe.stage.sram_depth")?;
            nonzero(s.sram_width_bits as u64, "pipe.stage.sram_width_bits")?;
        }
        if s.tcam_blocks > 0 {
            nonzero(s.tcam_depth as u64, "pipe.stage.tcam_depth")?;
            nonzero(s.tcam_width_bits as u64, "pipe.stage.tcam_width_bits")?;
        }
        if s.sram_blocks == 0 && s.tcam_blocks == 0 {
            return Err(bad(
                "pipe.stage.sram_blocks",
                "a stage needs SRAM or TCAM blocks to hold tables",
            ));
        }
        nonzero(s.logical_tables as u64, "pipe.stage.logical_tables")?;
        if !(1..=32).contains(&p.meter.byte_count_adjust_bits) {
            return Err(bad(
                "pipe.meter.byte_count_adjust_bits",
                "a signed adjustment needs 1 to 32 bits",
            ));
        }
        nonzero(s.vliw_slots as u64, "pipe.stage.vliw_slots")?;
        let phv = &p.phv;
        if phv.total() == 0 {
            return Err(bad("pipe.phv", "the PHV needs at least one container"));
        }
        if phv.total() > u16::MAX as usize + 1 {
            return Err(bad(
                "pipe.phv",
                "more containers than 16-bit container ids can name",
            ));
        }
        nonzero(
            p.latency.stage_base_cycles as u64,
            "pipe.latency.stage_base_cycles",
        )?;
        let l = &p.latency;
        for (v, field) in [
            (l.parser_cycles, "pipe.latency.parser_cycles"),
            (l.deparser_cycles, "pipe.latency.deparser_cycles"),
            (l.stage_base_cycles, "pipe.latency.stage_base_cycles"),
            (l.tcam_extra_cycles, "pipe.latency.tcam_extra_cycles"),
            (
                l.stateful_extra_cycles,
                "pipe.latency.stateful_extra_cycles",
            ),
            (l.meter_extra_cycles, "pipe.latency.meter_extra_cycles"),
        ] {
            if v > MAX_LATENCY_CYCLES {
                return Err(bad(
                    field,
                    &format!("{v} cycles; a latency may be at most {MAX_LATENCY_CYCLES}"),
                ));
            }
        }

        let t = &self.tm;
        nonzero(t.cells as u64, "tm.cells")?;
        nonzero(t.cell_bytes as u64, "tm.cell_bytes")?;
        nonzero(t.queues_per_port as u64, "tm.queues_per_port")?;
        Ok(())
    }

    /// The profile as pretty RON, without comments (for a built-in with its source comments see
    /// [`builtin_source`]). [`parse`] reads it back to an equal profile.
    pub fn to_ron(&self) -> String {
        let cfg = ron::ser::PrettyConfig::new()
            .indentor("    ")
            .struct_names(false);
        ron::ser::to_string_pretty(self, cfg).expect("a ChipProfile always serialises")
    }
}

impl fmt::Display for ChipProfile {
    /// One line: name, pipes, ports, stages, buffer.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} pipe(s), {} ports ({} Gb/s), {} stages, {:.2} GHz, buffer {} x {} B",
            self.name,
            self.pipes,
            self.ports_total(),
            self.total_bandwidth_gbps(),
            self.pipe.stages,
            self.clock_hz as f64 / 1e9,
            self.tm.cells,
            self.tm.cell_bytes
        )
    }
}

/// 1-based line and column of the field at dotted `path` (e.g. `ports_per_pipe[1].count`) in RON
/// `text`, found by a small scan that skips comments and strings. `None` if it is not there.
fn locate(text: &str, path: &str) -> Option<(usize, usize)> {
    // Normalise `a[1].b` to the key path `a.b` and the list index 1 (the schema nests one list).
    let mut want = String::new();
    let mut index = 0usize;
    let mut rest = path;
    while let Some(open) = rest.find('[') {
        want.push_str(&rest[..open]);
        let close = rest[open..].find(']')? + open;
        index = rest[open + 1..close].parse().ok()?;
        rest = &rest[close + 1..];
    }
    want.push_str(rest);

    let chars: Vec<char> = text.chars().collect();
    let (mut line, mut col) = (1usize, 1usize);
    // Key of each open bracket (the field whose value it is), and the last key seen at this depth.
    let mut stack: Vec<Option<String>> = Vec::new();
    let mut last_key: Option<String> = None;
    let mut seen = 0usize;
    let mut i = 0;
    let advance = |c: char, line: &mut usize, col: &mut usize| {
        if c == '\n' {
            *line += 1;
            *col = 1;
        } else {
            *col += 1;
        }
    };
    while i < chars.len() {
        let c = chars[i];
        if c == '/' && chars.get(i + 1) == Some(&'/') {
            while i < chars.len() && chars[i] != '\n' {
                advance(chars[i], &mut line, &mut col);
                i += 1;
            }
            continue;
        }
        if c == '/' && chars.get(i + 1) == Some(&'*') {
            while i < chars.len() && !(chars[i] == '*' && chars.get(i + 1) == Some(&'/')) {
                advance(chars[i], &mut line, &mut col);
                i += 1;
            }
            i = (i + 2).min(chars.len());
            col += 2;
            continue;
        }
        if c == '"' {
            advance(c, &mut line, &mut col);
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    advance(chars[i], &mut line, &mut col);
                    i += 1;
                }
                if i < chars.len() {
                    advance(chars[i], &mut line, &mut col);
                    i += 1;
                }
            }
            advance('"', &mut line, &mut col);
            i += 1;
            continue;
        }
        match c {
            '(' | '[' | '{' => stack.push(last_key.take()),
            ')' | ']' | '}' => {
                stack.pop();
                last_key = None;
            }
            _ if c.is_alphabetic() || c == '_' => {
                let (start_line, start_col) = (line, col);
                let mut ident = String::new();
                while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                    ident.push(chars[i]);
                    advance(chars[i], &mut line, &mut col);
                    i += 1;
                }
                let mut j = i;
                while j < chars.len() && chars[j].is_whitespace() {
                    j += 1;
                }
                if chars.get(j) == Some(&':') {
                    let mut full: Vec<&str> = stack.iter().flatten().map(|s| s.as_str()).collect();
                    full.push(&ident);
                    if full.join(".") == want {
                        if seen == index {
                            return Some((start_line, start_col));
                        }
                        seen += 1;
                    }
                    last_key = Some(ident);
                }
                continue;
            }
            _ => {}
        }
        advance(c, &mut line, &mut col);
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn builtin(name: &str) -> ChipProfile {
        load(name).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn every_builtin_parses_validates_and_round_trips() {
        assert_eq!(builtin_names().count(), 4);
        for name in builtin_names() {
            let p = builtin(name);
            assert_eq!(p.name, name, "the name field matches the built-in name");
            p.validate().unwrap();
            let again = parse(&p.to_ron(), "to_ron").unwrap();
            assert_eq!(again, p);
            assert!(
                builtin_source(name).unwrap().contains("//"),
                "{name} keeps its source comments"
            );
        }
        assert!(builtin_source("nope").is_none());
    }

    #[test]
    fn every_number_in_a_builtin_has_a_comment() {
        for (name, text) in BUILTIN {
            for (n, line) in text.lines().enumerate() {
                let code = line.split("//").next().unwrap();
                if code.chars().any(|c| c.is_ascii_digit())
                    && code.contains(':')
                    && !code.contains('"')
                {
                    assert!(
                        line.contains("//"),
                        "{name}:{}: a number without a source: {line}",
                        n + 1
                    );
                }
            }
        }
    }

    #[test]
    fn tofino1_derived_facts() {
        let p = builtin("tofino1-like");
        assert_eq!(p.ports_total(), 64);
        assert_eq!(p.total_bandwidth_gbps(), 6400);
        assert_eq!(p.port_speed_gbps(0), Some(100));
        assert_eq!(p.port_speed_gbps(63), Some(100));
        assert_eq!(p.port_speed_gbps(64), None);
        assert_eq!(p.pipe_of_port(15), Some(0));
        assert_eq!(p.pipe_of_port(16), Some(1));
        assert_eq!(p.pipe_of_port(63), Some(3));
        // "280K cells" is 280 x 1024 (bf-drivers tm_tofino.h BF_TM_TOFINO_BUFFER_CELLS (280 * 1024)).
        assert_eq!(p.tm.cells, 280 * 1024);
        assert_eq!(p.tm.buffer_bytes(), 22_937_600);
        assert_eq!(p.pipe.phv.total(), 224);
        assert_eq!(p.pipe.phv.bits(), 4096);
        assert_eq!(p.pipe.stage.vliw_slots as usize, p.pipe.phv.total());
        assert_eq!(
            p.pipe
                .latency
                .stage_cycles(pipelines::spec::StageFeatures::default()),
            20
        );
    }

    #[test]
    fn other_builtins_derived_facts() {
        let t2 = builtin("tofino2-like");
        assert_eq!(t2.ports_total(), 32);
        assert_eq!(t2.total_bandwidth_gbps(), 12_800);
        assert_eq!(t2.tm.buffer_bytes(), 384 * 1024 * 176);
        assert_eq!(t2.pipe.stages, 20);
        let rmt = builtin("rmt2013");
        assert_eq!(
            (rmt.pipes, rmt.ports_total(), rmt.total_bandwidth_gbps()),
            (1, 64, 640)
        );
        assert_eq!(rmt.pipe.stages, 32);
        assert_eq!(rmt.pipe.phv.bits(), 4096);
        let t = builtin("teaching");
        assert_eq!(
            (t.ports_total(), t.pipe.stages, t.tm.buffer_bytes()),
            (4, 4, 5120)
        );
        assert_eq!(t.pipe.phv.total(), 48);
        assert_eq!(t.tm.cells_for(1500), 19);
    }

    #[test]
    fn mixed_port_groups_are_numbered_densely() {
        let mut p = builtin("teaching");
        p.pipes = 2;
        p.ports_per_pipe = vec![
            PortGroup {
                count: 2,
                speed_gbps: 100,
            },
            PortGroup {
                count: 3,
                speed_gbps: 25,
            },
        ];
        p.validate().unwrap();
        assert_eq!(p.ports_per_pipe_count(), 5);
        assert_eq!(p.ports_total(), 10);
        let speeds: Vec<_> = (0..11).map(|i| p.port_speed_gbps(i)).collect();
        let pipes: Vec<_> = (0..11).map(|i| p.pipe_of_port(i)).collect();
        assert_eq!(
            speeds,
            [100, 100, 25, 25, 25, 100, 100, 25, 25, 25]
                .map(Some)
                .into_iter()
                .chain([None])
                .collect::<Vec<_>>()
        );
        assert_eq!(
            pipes,
            [0, 0, 0, 0, 0, 1, 1, 1, 1, 1]
                .map(Some)
                .into_iter()
                .chain([None])
                .collect::<Vec<_>>()
        );
    }

    #[test]
    fn syntax_error_reports_origin_line_col_on_one_line() {
        let text = builtin_source("teaching").unwrap();
        let target = "    pipes: 1,";
        let line_no = text.lines().position(|l| l.starts_with(target)).unwrap() + 1;
        let broken = text.replacen(target, "    pipes: 1 2,", 1);
        let e = parse(&broken, "my.ron").unwrap_err();
        let msg = e.to_string();
        assert!(
            matches!(e, ProfileError::Syntax(Located { line, .. }) if line == line_no),
            "{msg}"
        );
        assert!(msg.starts_with(&format!("my.ron:{line_no}:")), "{msg}");
        assert!(!msg.contains('\n'));
    }

    #[test]
    fn type_error_is_positioned() {
        let text = builtin_source("teaching")
            .unwrap()
            .replacen("cells: 64,", "cells: -64,", 1);
        let e = parse(&text, "t.ron").unwrap_err().to_string();
        let line_no = text.lines().position(|l| l.contains("cells: -64")).unwrap() + 1;
        assert!(e.starts_with(&format!("t.ron:{line_no}:")), "{e}");
    }

    #[test]
    fn unknown_fields_are_errors_at_any_depth() {
        let base = builtin_source("teaching").unwrap();
        // Top level: rejected by serde (deny_unknown_fields).
        let top = base.replacen("    pipes: 1,", "    pipes: 1,\n    pipez: 2,", 1);
        let e = parse(&top, "a.ron").unwrap_err().to_string();
        let line_no = top.lines().position(|l| l.contains("pipez")).unwrap() + 1;
        assert!(
            e.starts_with(&format!("a.ron:{line_no}:")) && e.contains("pipez"),
            "{e}"
        );
        // Nested in a spec from another crate: those deny unknown fields too.
        let nested = base.replacen("stages: 4,", "stages: 4,\n        stagse: 5,", 1);
        let e = parse(&nested, "b.ron").unwrap_err().to_string();
        let line_no = nested.lines().position(|l| l.contains("stagse")).unwrap() + 1;
        assert!(
            e.starts_with(&format!("b.ron:{line_no}:9: ")) && e.contains("`stagse`"),
            "{e}"
        );
        let deep = base.replacen("cell_bytes: 80,", "cell_bytes: 80, cell_byts: 1,", 1);
        let e = parse(&deep, "c.ron").unwrap_err().to_string();
        assert!(e.contains("`cell_byts`"), "{e}");
    }

    #[test]
    fn missing_field_is_an_error() {
        let text = builtin_source("teaching")
            .unwrap()
            .replacen("queues_per_port: 4,", "", 1);
        let e = parse(&text, "m.ron").unwrap_err().to_string();
        assert!(
            e.starts_with("m.ron:") && e.contains("queues_per_port"),
            "{e}"
        );
    }

    #[test]
    fn validate_names_the_field() {
        let ok = builtin("teaching");
        type Breaker = fn(&mut ChipProfile);
        let cases: Vec<(Breaker, &str)> = vec![
            (|p| p.clock_hz = 0, "clock_hz"),
            (|p| p.pipes = 0, "pipes"),
            (|p| p.ports_per_pipe.clear(), "ports_per_pipe"),
            (
                |p| p.ports_per_pipe[0].speed_gbps = 0,
                "ports_per_pipe[0].speed_gbps",
            ),
            (|p| p.ports_per_pipe[0].count = 0, "ports_per_pipe[0].count"),
            (|p| p.ports_per_pipe[0].count = 513, "ports_per_pipe"),
            (
                |p| {
                    p.pipes = 4;
                    p.ports_per_pipe[0].count = 128
                },
                "recirculation.ports_per_pipe",
            ),
            (|p| p.pipe.stages = 0, "pipe.stages"),
            (
                |p| p.pipe.latency.tcam_extra_cycles = u32::MAX,
                "pipe.latency.tcam_extra_cycles",
            ),
            (
                |p| p.pipe.latency.parser_cycles = 10_001,
                "pipe.latency.parser_cycles",
            ),
            (|p| p.pipe.stage.sram_depth = 0, "pipe.stage.sram_depth"),
            (
                |p| p.pipe.meter.byte_count_adjust_bits = 33,
                "pipe.meter.byte_count_adjust_bits",
            ),
            (
                |p| p.pipe.stage.logical_tables = 0,
                "pipe.stage.logical_tables",
            ),
            (
                |p| {
                    p.pipe.phv.b8 = 0;
                    p.pipe.phv.b16 = 0;
                    p.pipe.phv.b32 = 0
                },
                "pipe.phv",
            ),
            (|p| p.tm.cell_bytes = 0, "tm.cell_bytes"),
            (|p| p.tm.cells = 0, "tm.cells"),
            (|p| p.tm.queues_per_port = 0, "tm.queues_per_port"),
            (
                |p| p.recirculation.speed_gbps = 0,
                "recirculation.speed_gbps",
            ),
        ];
        for (break_it, field) in cases {
            let mut p = ok.clone();
            break_it(&mut p);
            match p.validate() {
                Err(ProfileError::Invalid { field: f, .. }) => assert_eq!(f, field),
                other => panic!("{field}: {other:?}"),
            }
        }
        // 4 pipes x 128 ports = 512 front-panel ports is allowed without recirculation ports.
        let mut p = ok.clone();
        p.pipes = 4;
        p.ports_per_pipe[0].count = 128;
        p.recirculation.ports_per_pipe = 0;
        p.validate().unwrap();
    }

    #[test]
    fn invalid_value_in_text_is_positioned() {
        let text =
            builtin_source("teaching")
                .unwrap()
                .replacen("cell_bytes: 80,", "cell_bytes: 0,", 1);
        let line_no = text
            .lines()
            .position(|l| l.contains("cell_bytes: 0"))
            .unwrap()
            + 1;
        let e = parse(&text, "v.ron").unwrap_err().to_string();
        assert_eq!(
            e,
            format!("v.ron:{line_no}:9: invalid `tm.cell_bytes`: must be greater than 0")
        );
        // A list element is found by its index.
        let two: String = builtin_source("teaching")
            .unwrap()
            .lines()
            .map(|l| {
                if l.contains("speed_gbps: 10, // chosen: 10 Gb/s") {
                    "            speed_gbps: 10,\n        ),\n        (\n            count: 1,\n            speed_gbps: 0,\n".to_string()
                } else {
                    format!("{l}\n")
                }
            })
            .collect();
        let line_no = two
            .lines()
            .position(|l| l.contains("speed_gbps: 0"))
            .unwrap()
            + 1;
        let e = parse(&two, "w.ron").unwrap_err().to_string();
        assert!(
            e.starts_with(&format!(
                "w.ron:{line_no}:13: invalid `ports_per_pipe[1].speed_gbps`"
            )),
            "{e}"
        );
    }

    #[test]
    fn unknown_name_lists_builtins() {
        let e = load("tofino9").unwrap_err();
        let msg = e.to_string();
        assert!(matches!(e, ProfileError::UnknownName { .. }));
        for name in builtin_names() {
            assert!(msg.contains(name), "{msg}");
        }
    }

    #[test]
    fn loads_a_file_by_path() {
        let dir = std::env::temp_dir().join(format!("asic-profile-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("mine.ron");
        let text =
            builtin_source("teaching")
                .unwrap()
                .replacen("name: \"teaching\"", "name: \"mine\"", 1);
        std::fs::write(&path, text).unwrap();
        let p = load(path.to_str().unwrap()).unwrap();
        assert_eq!(p.name, "mine");
        std::fs::write(&path, "(name: \"x\",").unwrap();
        let e = load(path.to_str().unwrap()).unwrap_err().to_string();
        assert!(e.starts_with(&format!("{}:1:", path.display())), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
