//! What the runtime runs, and what it tells the caller while it runs.
//!
//! A [`Network`] is fully resolved: a topology, every chip built and configured (program
//! loaded, entries installed; the deployment's job), the hosts' transport, the traffic, when
//! to stop, what to sample and which ports to capture. The runtime reads no file but the
//! flow-size CDFs its traffic names, and writes none: captured frames, per-packet traces and
//! progress go to an [`Observer`], so the caller decides what a terminal or a disk sees.

use crate::topology::Topology;
use crate::traffic::Source;
use crate::transport::TransportSpec;
use asic_model::chip::Chip;
use asic_model::trace::PacketTrace;
use pipelines::control::ResolvedControlOp;
use pipelines::time::Time;
use serde::{Deserialize, Serialize};

/// A network ready to run.
pub struct Network {
    /// Name (for the record).
    pub name: String,
    /// Seed of every random stream of the traffic.
    pub seed: u64,
    /// The topology.
    pub topology: Topology,
    /// The chips, built, in topology order.
    pub chips: Vec<Chip>,
    /// Control-plane operations on chips at given times.
    pub control: Vec<ChipControl>,
    /// Default transport of flows.
    pub transport: TransportSpec,
    /// IP MTU of data packets (bytes).
    pub mtu: usize,
    /// Traffic sources (CDF files named by resolved paths).
    pub traffic: Vec<Source>,
    /// When to stop.
    pub stop: Stop,
    /// Sampling period of queue depths and port rates (ns); none: no series.
    pub sample_period_ns: Option<u64>,
    /// Ports whose transmitted frames go to [`Observer::capture`].
    pub captures: Vec<Capture>,
    /// Record what a HOL-blocking check needs at each sampled instant
    /// ([`crate::records::QueueSnapshots`]); needs `sample_period_ns`.
    pub hol_check: Option<HolCheck>,
    /// The groups each flow belongs to, for hosts that obey flow-group pause frames
    /// ([`crate::ctrl`]); `None`: every flow in none, so those frames pause nothing.
    pub flow_groups: Option<FlowGroups>,
}

/// The groups of a flow from (source host, destination host, flow id): for Pyrrha, the
/// congestion-root ids of the ports on its path. Called once per flow as the network is
/// built.
pub type FlowGroups = std::sync::Arc<dyn Fn(usize, usize, u64) -> Vec<u16> + Send + Sync>;

/// What a run records for a HOL-blocking check: at each sampled instant, every chip queue
/// that is paused and holds packets, with the flows of the hosts' packets in it, and every
/// chip port with an unpaused queue at least `congested_cells` deep.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HolCheck {
    /// The depth (cells) at which an unpaused queue makes its port congested: a port
    /// congested by its own line rate, which a paused flow may wait on without HOL blocking.
    pub congested_cells: u32,
    /// How long a port counts as congested after its last sample that found it so (ns): a
    /// resume takes a round trip, so a queue paused for a port that has just drained is
    /// waiting for the resume on its way, not blocked. 0: only at that sample.
    #[serde(default)]
    pub grace_ns: u64,
}

/// A control-plane operation on one chip at a time (exact to the cycle at the stage it
/// changes, as on the bench).
#[derive(Clone, Debug)]
pub struct ChipControl {
    /// The chip's index in the topology.
    pub chip: usize,
    /// When.
    pub at: Time,
    /// What.
    pub op: ResolvedControlOp,
    /// What errors call it (the scenario's name for it: `control 2 (table `t`)`): a chip that
    /// refuses the operation when it runs stops the run with an error naming the chip and it.
    pub name: String,
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

/// A port whose transmitted frames are captured (hosts: port 0).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Capture {
    /// Node name.
    pub node: String,
    /// Port.
    #[serde(default)]
    pub port: u16,
}

/// What the caller sees of a run while it runs. Every method has a default that does
/// nothing, so `()` observes nothing.
pub trait Observer {
    /// The run starts: the network was built and its captures checked.
    fn start(&mut self) -> Result<(), String> {
        Ok(())
    }

    /// Simulated time reached `now` of an expected `total` (the stop time, else when the last
    /// flow starts); called between lookahead windows, every few thousand events.
    fn progress(&mut self, now: Time, total: Time) {
        let _ = (now, total);
    }

    /// Port `capture` (an index into [`Network::captures`]) started sending `frame` at
    /// `start`. Handed out between lookahead windows: by capture, each capture's frames in
    /// the order they were sent.
    fn capture(&mut self, capture: usize, start: Time, frame: &[u8]) -> Result<(), String> {
        let _ = (capture, start, frame);
        Ok(())
    }

    /// The per-packet trace of a packet of chip `chip` (an index into [`Network::chips`])
    /// whose life ended, or which was inside it when the run ended: handed out between
    /// lookahead windows and at the end, chip by chip (only chips given a trace with
    /// `Chip::set_trace` have any).
    fn trace(&mut self, chip: usize, packet: &PacketTrace) -> Result<(), String> {
        let _ = (chip, packet);
        Ok(())
    }

    /// The run ended (at simulated time `end`).
    fn finish(&mut self, end: Time) {
        let _ = end;
    }
}

impl Observer for () {}

impl<T: Observer + ?Sized> Observer for &mut T {
    fn start(&mut self) -> Result<(), String> {
        (**self).start()
    }

    fn progress(&mut self, now: Time, total: Time) {
        (**self).progress(now, total)
    }

    fn capture(&mut self, capture: usize, start: Time, frame: &[u8]) -> Result<(), String> {
        (**self).capture(capture, start, frame)
    }

    fn trace(&mut self, chip: usize, packet: &PacketTrace) -> Result<(), String> {
        (**self).trace(chip, packet)
    }

    fn finish(&mut self, end: Time) {
        (**self).finish(end)
    }
}
