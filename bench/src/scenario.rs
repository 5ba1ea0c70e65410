//! Scenarios: a RON file naming the chip, the program, its table entries, what enters each
//! port and where results go. Relative paths are relative to the scenario file.
//!
//! ```ron
//! (
//!     chip: "teaching",
//!     program: "l3router.p4",
//!     entries: Some("entries.ron"),
//!     inputs: [
//!         (port: 0, source: Pcap("in0.pcap")),
//!         (port: 1, source: Generator((count: 100, size: 64, packet: Udp((dst_ip: "10.0.2.1"))))),
//!     ],
//!     output: "out/l3router",
//!     // Optional: the operator's chip configuration and scheduled control-plane operations.
//!     config: (seed: 7, tm: (admission: DynamicThreshold),
//!              mirror_sessions: [(id: 1, port: 3, queue: 0, truncate_bytes: Some(64))]),
//!     control: [
//!         (at_ns: 5000, op: WriteRegister((register: "counts", index: 0, value: 0))),
//!         (at_ns: 9000, op: ReadRegister((register: "counts", index: Some(0)))),
//!         (at_ns: 9000, op: DumpTable((table: "ipv4_lpm"))),
//!     ],
//! )
//! ```
//!
//! `control` operations change the chip (`AddEntry`, `ModifyEntry`, `DeleteEntry`,
//! `WriteRegister`, `ConfigureMeter`) or read it (`ReadRegister((register, index))`,
//! `ReadCounter((counter, index))`, `ReadMeter((meter, index))`, each `index: Some(i)` for one
//! element or absent for every element not at rest; `ReadDirectCounter((table, key))`, `key:
//! Some([...])` for an entry or absent for the misses; `DumpTable((table))`). Each takes
//! effect at the stage of what it names exactly as a packet reaching that stage at `at_ns`
//! would see it, so a read sees every packet that reached the stage before `at_ns`. Names,
//! element indices and times are checked before the run, errors placed in the file.
//!
//! `asic run` writes into `output`: `port<N>.pcap` per egress port, `summary.txt`,
//! `summary.json` (the [`crate::bench::RunReport`]: ports, drops, the reads with their
//! time and cycle, every pipe's state at the end) and `state.txt` (the reads and the state
//! as people read them; [`pipelines::readout::text`]).

use asic_io::load::Base;
use asic_model::chip::ChipConfig;
use asic_model::control_plane::ScheduledOp;
use located::{parse_ron, read_text, Located};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// A scenario as written.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// A built-in chip profile name or a profile file.
    pub chip: String,
    /// The program source (`.p4`).
    pub program: String,
    /// Table entries (RON), if any.
    #[serde(default)]
    pub entries: Option<String>,
    /// What enters each port.
    pub inputs: Vec<Input>,
    /// Output directory (relative to the current directory).
    #[serde(default = "default_output")]
    pub output: String,
    /// The operator's configuration of the chip: `seed`, `tm` (admission, α per class,
    /// schedulers, PFC, ECN), `dod`, `mirror_sessions`, `mcast_groups`, `pktgen`; defaults
    /// for anything absent, e.g. `config: (seed: 7, tm: (admission: FlexibleBuffer),
    /// mirror_sessions: [(id: 1, port: 3, queue: 0, truncate_bytes: Some(64))])`.
    #[serde(default)]
    pub config: ChipConfig,
    /// Control-plane operations and reads at scheduled times (see the module comment).
    #[serde(default)]
    pub control: Vec<ScheduledOp>,
    /// Stop at this time (ns); else when nothing is left to happen, or 1 s of simulated time
    /// after the last input for a run that would never end (a packet recirculating on every
    /// pass). A packet generator without a `count` needs it.
    #[serde(default)]
    pub stop_ns: Option<u64>,
}

fn default_output() -> String {
    "out".into()
}

/// Traffic entering one port.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// The ingress port.
    pub port: u16,
    /// Where the frames come from.
    pub source: Source,
}

/// A source of frames.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Source {
    /// Frames from a pcap file, at their recorded times (relative to the earliest first
    /// frame of all input pcaps), but never faster than the port's line rate.
    Pcap(String),
    /// Frames made by a simple generator.
    Generator(Generator),
}

/// A constant-rate generator of identical frames (but for a sequence number).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Generator {
    /// Frames to send.
    pub count: u64,
    /// Frame size in bytes, without FCS.
    pub size: usize,
    /// When the first frame starts (ns).
    #[serde(default)]
    pub start_ns: u64,
    /// Sending rate in Gb/s counting preamble and gap; the port's line rate if absent.
    #[serde(default)]
    pub rate_gbps: Option<u32>,
    /// What each frame holds.
    pub packet: Template,
}

/// Frame templates.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Template {
    /// Ethernet + IPv4 + UDP; the payload starts with a 32-bit sequence number.
    Udp(UdpTemplate),
}

/// Header fields of a UDP template. Addresses are text (`"10.0.0.1"`, `"02:00:00:00:00:01"`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct UdpTemplate {
    /// Source MAC.
    pub src_mac: String,
    /// Destination MAC.
    pub dst_mac: String,
    /// Source IPv4.
    pub src_ip: String,
    /// Destination IPv4.
    pub dst_ip: String,
    /// UDP source port.
    pub src_port: u16,
    /// UDP destination port.
    pub dst_port: u16,
    /// IPv4 time to live.
    pub ttl: u8,
}

impl Default for UdpTemplate {
    fn default() -> Self {
        UdpTemplate {
            src_mac: "02:00:00:00:00:01".into(),
            dst_mac: "02:00:00:00:00:fe".into(),
            src_ip: "10.0.0.1".into(),
            dst_ip: "10.0.1.1".into(),
            src_port: 1234,
            dst_port: 5678,
            ttl: 64,
        }
    }
}

/// A scenario file read and its location, for resolving relative paths and errors.
pub struct ScenarioFile {
    /// The scenario.
    pub scenario: Scenario,
    /// Its text (to locate values in error messages).
    pub text: String,
    /// Its path as given.
    pub path: PathBuf,
}

impl ScenarioFile {
    /// Read and parse a scenario file.
    pub fn load(path: &Path) -> Result<ScenarioFile, Located> {
        let text = read_text(path, "scenario")?;
        Self::parse(text, path)
    }

    /// Parse scenario text that came from `path`.
    pub fn parse(text: String, path: &Path) -> Result<ScenarioFile, Located> {
        let scenario: Scenario = parse_ron(&text, &path.display().to_string())?;
        Ok(ScenarioFile {
            scenario,
            text,
            path: path.to_path_buf(),
        })
    }

    /// The scenario's directory, which the names it holds are relative to.
    pub fn base(&self) -> Base<'_> {
        Base(self.path.parent().unwrap_or(Path::new("")))
    }

    /// A path named in the scenario, relative to its directory.
    pub fn resolve(&self, p: &str) -> PathBuf {
        self.base().path(p)
    }

    /// An error located at the first place `value` is written in the scenario.
    pub fn error_at(&self, value: &str, message: impl Into<String>) -> Located {
        Located::at_value(&self.path.display().to_string(), &self.text, value, message)
    }

    /// An error in the chip's configuration (`config: (...)`), located where the scenario
    /// writes the field at `path` (relative to `config`).
    pub fn config_error_at(&self, path: &[&str], message: impl Into<String>) -> Located {
        let full: Vec<&str> = std::iter::once("config")
            .chain(path.iter().copied())
            .collect();
        let (line, col) = located::position_of_field(&self.text, &full);
        Located {
            file: self.path.display().to_string(),
            line,
            col,
            message: message.into(),
        }
    }

    /// An error found after parsing, located at the first name its message quotes that the
    /// scenario writes ([`located::locate`]).
    pub fn locate(&self, message: &str) -> Located {
        located::locate(&self.path.display().to_string(), &self.text, message)
    }
}
