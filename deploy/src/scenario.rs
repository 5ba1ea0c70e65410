//! Network scenarios: a RON file naming the topology, the mechanism deployed on its chips,
//! per-chip and per-role settings, the transports, the traffic, when to stop and what to
//! record. Relative paths are relative to the scenario file.
//!
//! ```ron
//! (
//!     name: "incast-8",
//!     seed: 1,
//!     topology: Generate((shape: SingleSwitch(hosts: 9), chip: "rmt2013", delay_ns: 1000)),
//!     deploy: Routers(Static),
//!     chips: [
//!         (select: All, config: Some((tm: (admission: DynamicThreshold)))),
//!         (select: Name("sw0"), config: Some((mirror_sessions: [(id: 1, port: 8, queue: 0)]))),
//!     ],
//!     transport: NewReno((min_rto_us: 200.0)),
//!     traffic: [
//!         Incast((senders: ["h1", "h2", "h3", "h4", "h5", "h6", "h7", "h8"], receiver: "h0",
//!                 size: 64000, period_ns: Some(1000000), repeats: 5)),
//!     ],
//!     stop: (at_ns: Some(10000000), when_flows_complete: true),
//!     sample_period_ns: Some(1000),
//!     pcaps: [(node: "sw0", port: 0)],
//! )
//! ```
//! `topology` is `Generate((...))` ([`asic_net::shapes::Generate`]), `Explicit((chips, hosts,
//! links))` ([`asic_net::topology::TopologySpec`]) or `File("topo.ron")` holding the explicit
//! form. `deploy` names the mechanism every chip runs ([`crate::Mechanism`]; default
//! `Routers(Static)`). `mtu` (default 1500) is the IP MTU of data packets.
//!
//! `chips` holds settings ([`ChipSettings`]) for the chips each `select` matches: `All`,
//! `Role(Tor | Spine | Agg | Core)` (`Leaf` and `Edge` name `Tor`) or `Name("sw0")`. They
//! apply in order: for `deploy`, `program`, `entries` and `config`, the last setting that
//! matches a chip and gives the field wins; `control` operations of every match add up.
//! Everything a one-chip scenario configures, a network chip can: the program, entries,
//! the operator's chip configuration (`tm`, `dod`, `mirror_sessions`, `mcast_groups`,
//! `pktgen`) and control operations at given times. A deployment adds its own entries
//! and configuration to the operator's (see its module). A chip's `seed` is always derived
//! from the scenario's seed and the chip's name, so chips differ and runs repeat.
//!
//! `control` operations include reads (`ReadRegister`, `ReadCounter`, `ReadDirectCounter`,
//! `ReadMeter`, `DumpTable`, as in a one-chip scenario): their results, and every chip's
//! state at the end, go into the `RunRecord` (`chips`), which `asic net` writes to
//! `summary.json` and `state.txt`. A run that stops when its flows complete goes on until
//! its last read is taken; one that stops at `stop.at_ns` before a read is taken is an
//! error naming it.

use crate::Mechanism;
use asic_model::chip::ChipConfig;
use asic_model::control_plane::ScheduledOp;
use asic_net::shapes::Generate;
use asic_net::topology::{Role, TopologySpec};
use asic_net::traffic::Source;
use asic_net::transport::TransportSpec;
use asic_net::{Capture, HolCheck, Stop};
use pipelines::entries::EntrySpec;
use serde::{Deserialize, Serialize};

/// A network scenario.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NetScenario {
    /// Name (for the record).
    #[serde(default)]
    pub name: String,
    /// Seed of every random stream.
    #[serde(default = "one")]
    pub seed: u64,
    /// The network.
    pub topology: TopologySource,
    /// The mechanism every chip runs, unless its settings say otherwise.
    #[serde(default)]
    pub deploy: Mechanism,
    /// Settings of chips by name or role.
    #[serde(default)]
    pub chips: Vec<ChipSettings>,
    /// Default transport of flows.
    #[serde(default)]
    pub transport: TransportSpec,
    /// IP MTU of data packets (bytes).
    #[serde(default = "mtu")]
    pub mtu: usize,
    /// Traffic sources.
    #[serde(default)]
    pub traffic: Vec<Source>,
    /// When to stop.
    #[serde(default)]
    pub stop: Stop,
    /// Sampling period of queue depths and port rates (ns); none: no series.
    #[serde(default)]
    pub sample_period_ns: Option<u64>,
    /// Ports to capture into `<node>-port<N>.pcap` (what the port transmits).
    #[serde(default)]
    pub pcaps: Vec<Capture>,
    /// Check for HOL blocking at each sample (`hol_check: Some((congested_cells: N))`,
    /// with `sample_period_ns`): every flow in a paused chip queue must cross a port
    /// congested by its own line rate (an unpaused queue of at least N cells) downstream
    /// of it, on the path the generated routes give it (`crate::hol`).
    #[serde(default)]
    pub hol_check: Option<HolCheck>,
}

fn one() -> u64 {
    1
}

fn mtu() -> usize {
    1500
}

/// Where the topology comes from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum TopologySource {
    /// A common shape.
    Generate(Box<Generate>),
    /// Written out.
    Explicit(Box<TopologySpec>),
    /// A RON file holding a [`TopologySpec`].
    File(String),
}

/// Which chips a setting applies to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Select {
    /// Every chip.
    All,
    /// The chips of a role.
    Role(Role),
    /// One chip.
    Name(String),
}

/// The operator's settings of the chips a `select` matches.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChipSettings {
    /// Which chips.
    pub select: Select,
    /// The mechanism they run (else the scenario's `deploy`).
    #[serde(default)]
    pub deploy: Option<Mechanism>,
    /// Their program (`.p4`, relative to the scenario), instead of the mechanism's own.
    #[serde(default)]
    pub program: Option<String>,
    /// The operator's table entries, installed before the mechanism's.
    #[serde(default)]
    pub entries: Option<Entries>,
    /// The operator's chip configuration (the chip's defaults if absent).
    #[serde(default)]
    pub config: Option<ChipConfig>,
    /// Control-plane operations at given times.
    #[serde(default)]
    pub control: Vec<ScheduledOp>,
}

/// Table entries a scenario gives a chip.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Entries {
    /// A RON entries file (relative to the scenario).
    File(String),
    /// Entries written inline (the entries format of `pipelines::entries`).
    Inline(Vec<EntrySpec>),
}
