//! Network scenarios: a RON file naming the topology, the transports, the traffic, when to
//! stop and what to record. Relative paths are relative to the scenario file.
//!
//! ```ron
//! (
//!     name: "incast-8",
//!     seed: 1,
//!     topology: Generate((shape: SingleSwitch(hosts: 9), chip: "rmt2013", delay_ns: 1000)),
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
//! `topology` is `Generate((...))` ([`super::topology::Generate`]), `Explicit((chips, hosts,
//! links))` ([`super::topology::TopologySpec`]) or `File("topo.ron")` holding the explicit
//! form. `mtu` (default 1500) is the IP MTU of data packets.

use super::topology::{Generate, TopologySpec};
use super::traffic::Source;
use super::transport::TransportSpec;
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
    /// Ports to capture (what the port transmits).
    #[serde(default)]
    pub pcaps: Vec<PcapSpec>,
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

/// When a run ends: at `at_ns` if set; when every flow has completed if
/// `when_flows_complete`; in any case when nothing is left to happen.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Stop {
    /// Stop at this time (ns).
    pub at_ns: Option<u64>,
    /// Stop when every flow has completed.
    pub when_flows_complete: bool,
}

impl Default for Stop {
    fn default() -> Self {
        Stop {
            at_ns: None,
            when_flows_complete: true,
        }
    }
}

/// A port to capture into `<node>-port<N>.pcap` (hosts: port 0).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PcapSpec {
    /// Node name.
    pub node: String,
    /// Port.
    #[serde(default)]
    pub port: u16,
}
