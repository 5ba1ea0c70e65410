//! What a network run records: the data every metric, table, plot and waveform is made from.
//!
//! The network runtime fills a [`RunRecord`]; the report code only reads it. Times are
//! simulated picoseconds.

use pipelines::readout::{ChipState, ControlRead};
use serde::{Deserialize, Serialize};

/// One flow, from its first byte offered to its last byte delivered.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlowRecord {
    /// Flow id (unique in the run).
    pub id: u64,
    /// Sending host: its index in [`RunRecord::hosts`] (a record of millions of flows holds
    /// no name per flow; [`RunRecord::host_name`] gives it).
    pub src: u32,
    /// Receiving host, as `src`.
    pub dst: u32,
    /// Bytes of application data.
    pub size_bytes: u64,
    /// When the application offered the flow (ps).
    pub start_ps: u64,
    /// When the receiver had every byte (ps); `None` if the run ended first.
    pub end_ps: Option<u64>,
    /// The flow's completion time on an empty network: first-byte latency along its path plus
    /// its size at the bottleneck rate (ps).
    pub ideal_fct_ps: u64,
    /// Data packets the sender put on the wire (retransmissions included).
    pub packets_sent: u64,
    /// Retransmitted packets.
    pub retransmissions: u64,
    /// Its data packets the chips dropped, by the flow id the packets carried (a packet a
    /// program rewrote past the network's own format is not counted).
    pub packets_dropped: u64,
}

impl FlowRecord {
    /// Flow completion time (ps), if it completed.
    pub fn fct_ps(&self) -> Option<u64> {
        self.end_ps.map(|e| e - self.start_ps)
    }

    /// FCT divided by the ideal FCT (≥ 1 up to rounding), if it completed.
    pub fn slowdown(&self) -> Option<f64> {
        self.fct_ps()
            .map(|f| f as f64 / self.ideal_fct_ps.max(1) as f64)
    }
}

/// One query of a `Queries` traffic source: its parts are flows from its responders to its
/// requester, all started at once; it completes when the last part has arrived.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueryRecord {
    /// Query id (numbered over the run's sources in the order they were made).
    pub id: u32,
    /// The requester: its index in [`RunRecord::hosts`].
    pub requester: u32,
    /// When it was issued (ps).
    pub start_ps: u64,
    /// Bytes of the whole answer.
    pub size_bytes: u64,
    /// Responders (its flows).
    pub responders: u32,
    /// When the last part had arrived (ps); `None` if any part had not when the run ended.
    pub end_ps: Option<u64>,
    /// Data packets of its parts the chips dropped.
    pub packets_dropped: u64,
    /// Retransmitted packets of its parts.
    pub retransmissions: u64,
}

impl QueryRecord {
    /// Query completion time (ps), if it completed.
    pub fn qct_ps(&self) -> Option<u64> {
        self.end_ps.map(|e| e - self.start_ps)
    }

    /// The queries of `flows` (those with a query), by id; `query[i]` is flow `i`'s.
    pub fn of_flows(flows: &[FlowRecord], query: &[Option<u32>]) -> Vec<QueryRecord> {
        let mut by_id: std::collections::BTreeMap<u32, QueryRecord> = Default::default();
        for (f, q) in flows.iter().zip(query) {
            let Some(q) = *q else { continue };
            let r = by_id.entry(q).or_insert(QueryRecord {
                id: q,
                requester: f.dst,
                start_ps: f.start_ps,
                size_bytes: 0,
                responders: 0,
                end_ps: Some(f.start_ps),
                packets_dropped: 0,
                retransmissions: 0,
            });
            r.size_bytes += f.size_bytes;
            r.responders += 1;
            r.end_ps = r.end_ps.zip(f.end_ps).map(|(a, b)| a.max(b));
            r.packets_dropped += f.packets_dropped;
            r.retransmissions += f.retransmissions;
        }
        by_id.into_values().collect()
    }
}

/// A sampled quantity over time, e.g. one queue's depth in cells.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Series {
    /// What it is, e.g. `leaf0.port3.q0.depth_cells`.
    pub name: String,
    /// Unit, e.g. `cells`, `bytes`, `Gb/s`.
    pub unit: String,
    /// (time ps, value), in time order; a value holds until the next point.
    pub points: Vec<(u64, f64)>,
}

impl Series {
    /// The value at `t` ps: the last point at or before it (0 before the first).
    pub fn value_at(&self, t: u64) -> f64 {
        let i = self.points.partition_point(|p| p.0 <= t);
        i.checked_sub(1).map_or(0.0, |i| self.points[i].1)
    }

    /// The series cut to `[t0, t1]`: its value at `t0`, then its points after `t0` up to
    /// `t1` (for statistics over a window, e.g. `time_weighted_mean(&s.window(t0, t1), t1)`).
    pub fn window(&self, t0: u64, t1: u64) -> Series {
        let mut points = vec![(t0, self.value_at(t0))];
        points.extend(self.points.iter().filter(|p| p.0 > t0 && p.0 <= t1));
        Series {
            name: self.name.clone(),
            unit: self.unit.clone(),
            points,
        }
    }
}

/// A pause state change on a link (PFC class or a per-queue pause).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PauseEvent {
    /// When (ps).
    pub at_ps: u64,
    /// The node whose transmit side is paused or resumed.
    pub node: String,
    /// Its port.
    pub port: u16,
    /// `pfc` (with the priority), `queue` (with the queue id: a host NIC queue paused by
    /// BFC frames, or a chip queue paused by its program's advanced flow control) or `group`
    /// (with the group: a host's flows of a flow group, paused by flow-group frames).
    pub kind: String,
    /// Priority, queue id or group.
    pub class: u16,
    /// Paused (true) or resumed (false).
    pub paused: bool,
}

/// Packets that left the network without being delivered, by node and reason.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DropCount {
    /// Node name.
    pub node: String,
    /// Reason (the chip's drop reason names, or a host's).
    pub reason: String,
    /// Packets.
    pub packets: u64,
}

/// Per-host traffic totals (for the conservation check: sent = received + dropped + in
/// flight, summed over the hosts).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostTotals {
    /// Host name.
    pub host: String,
    /// Data packets it put on the wire.
    pub packets_sent: u64,
    /// Data packets addressed to it that arrived.
    pub packets_received: u64,
    /// Of the data packets it sent, those dropped on the way: by a chip, out of a chip port
    /// with no link, or refused by the host they reached (not those still inside a chip or
    /// on a link when the run stopped). (Absent from records written before it was kept:
    /// read as 0.)
    #[serde(default)]
    pub packets_dropped: u64,
}

/// A flow as a HOL-blocking check tells it apart: its source and destination hosts (indexes
/// of [`RunRecord::hosts`]) and its flow id (the data's; an ACK of it is the same id from
/// the destination back to the source).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct FlowKey {
    /// Host that sent the packet.
    pub src: u32,
    /// Host it is addressed to.
    pub dst: u32,
    /// Flow id.
    pub flow_id: u64,
}

/// A chip queue that was paused and held packets at a sampled instant, with the flows of
/// the hosts' packets in it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PausedQueue {
    /// When (ps).
    pub time_ps: u64,
    /// Chip index in the topology.
    pub chip: u32,
    /// Port.
    pub port: u16,
    /// Queue.
    pub queue: u16,
    /// The flows it held, each once, in order.
    pub flows: Vec<FlowKey>,
}

/// A chip port with an unpaused queue at least [`QueueSnapshots::congested_cells`] deep at a
/// sampled instant: a port congested by its own line rate, not by a downstream pause.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct CongestedPort {
    /// When (ps).
    pub time_ps: u64,
    /// Chip index in the topology.
    pub chip: u32,
    /// Port.
    pub port: u16,
}

/// What a run's `hol_check` saw at each sampled instant: the paused queues and whose packets
/// they held, and the congested ports. A HOL-blocking check (asic-deploy's `hol`) reads
/// them with each flow's path.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueueSnapshots {
    /// The depth at which an unpaused queue makes its port congested (cells).
    pub congested_cells: u32,
    /// How long a port counts as congested after a sample found it so (ps).
    #[serde(default)]
    pub grace_ps: u64,
    /// Sampled instants.
    pub samples: u64,
    /// Paused queues holding packets, by time, chip, port and queue.
    pub paused: Vec<PausedQueue>,
    /// Congested ports, by time, chip and port.
    pub congested: Vec<CongestedPort>,
}

/// A flow in a paused queue whose path crosses no congested port after that queue's hop: a
/// flow paused on behalf of ports it does not traverse (Pyrrha's HOL blocking).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HolViolation {
    /// When (ps).
    pub time_ps: u64,
    /// The chip of the paused queue.
    pub chip: u32,
    /// Its port.
    pub port: u16,
    /// The queue.
    pub queue: u16,
    /// The flow.
    pub flow: FlowKey,
}

/// The HOL-blocking check of a run: at every sampled instant, every flow in a paused queue
/// must cross a congested port downstream of it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HolReport {
    /// Sampled instants.
    pub samples: u64,
    /// (instant, paused queue) pairs that held packets.
    pub paused_queues: u64,
    /// (instant, paused queue, flow) triples looked at.
    pub flows_checked: u64,
    /// Of those, flows whose path does not pass the paused queue's port (routed otherwise
    /// than the generated routes say): not judged.
    pub off_path: u64,
    /// The triples that fail: HOL blocking.
    pub violations: Vec<HolViolation>,
}

/// Everything a network run recorded.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// Scenario name.
    pub name: String,
    /// Simulated time covered (ps).
    pub duration_ps: u64,
    /// Every flow.
    pub flows: Vec<FlowRecord>,
    /// Every query of the `Queries` sources, by id. (Absent from older records: empty.)
    #[serde(default)]
    pub queries: Vec<QueryRecord>,
    /// Sampled series (queue depths, buffer occupancy, throughput per port/flow).
    pub series: Vec<Series>,
    /// The series' sampling period (ps; samples at its multiples from 0), 0 when not
    /// sampled. (Absent from older records: 0.)
    #[serde(default)]
    pub sample_period_ps: u64,
    /// Pause state changes.
    pub pauses: Vec<PauseEvent>,
    /// Drops and trims by node and reason.
    pub drops: Vec<DropCount>,
    /// Per chip that has any: packets it made (mirror copies, generated packets) that its
    /// program ended by design, apart from drops. (Absent from older records: empty.)
    #[serde(default)]
    pub consumed: Vec<NodeCount>,
    /// Per-host totals.
    pub hosts: Vec<HostTotals>,
    /// Per chip, in topology order: its control-plane reads and its state at the end.
    /// (Absent from older records: empty.)
    #[serde(default)]
    pub chips: Vec<ChipRecord>,
    /// With `hol_check`: the paused and congested queues at each sampled instant.
    #[serde(default)]
    pub queue_snapshots: Option<QueueSnapshots>,
    /// With `hol_check`: the HOL-blocking check of them (asic-deploy fills it in, with the
    /// flows' paths).
    #[serde(default)]
    pub hol: Option<HolReport>,
}

impl RunRecord {
    /// The name of host `i` (an index of [`FlowRecord::src`] or `dst`); `?` if the record has
    /// no such host.
    pub fn host_name(&self, i: u32) -> &str {
        self.hosts.get(i as usize).map_or("?", |h| h.host.as_str())
    }
}

/// What the control plane read of one chip: the scheduled reads' results, and every pipe's
/// registers, counters, meters and tables at the end of the run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChipRecord {
    /// Node name.
    pub node: String,
    /// Its chip profile.
    pub profile: String,
    /// The reads of its `control` operations, in time order.
    pub reads: Vec<ControlRead>,
    /// Its state at the end of the run.
    pub state: ChipState,
}

/// A count of packets at one node.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeCount {
    /// Node name.
    pub node: String,
    /// Packets.
    pub packets: u64,
}

#[cfg(test)]
mod tests {
    use super::Series;

    #[test]
    fn a_window_starts_at_the_value_in_force() {
        let s = Series {
            name: "q".into(),
            unit: "cells".into(),
            points: vec![(10, 4.0), (20, 8.0), (40, 0.0)],
        };
        assert_eq!(s.value_at(5), 0.0);
        assert_eq!(s.value_at(10), 4.0);
        assert_eq!(s.value_at(39), 8.0);
        assert_eq!(s.window(15, 30).points, vec![(15, 4.0), (20, 8.0)]);
    }
}
