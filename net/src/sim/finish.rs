//! The end of a run: the [`RunRecord`], each host's packet balance, and the chips as the run
//! left them.

use super::Net;
use crate::records::{ChipRecord, DropCount, FlowRecord, HostTotals, NodeCount, RunRecord};
use asic_model::chip::{Chip, DropReason};
use asic_model::kernel::Lockstep;
use pipelines::time::Time;

/// Per-host packet balance at the end of a run: what it offered and where it went.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct HostBalance {
    /// Host name.
    pub host: String,
    /// Data packets it put on the wire.
    pub offered: u64,
    /// Of those, packets that reached their destination host.
    pub delivered: u64,
    /// Of those, packets that entered a chip and did not leave it: the chips' drops.
    pub dropped_in_chips: u64,
    /// Of those, packets still inside a chip (queued, in a pipe) when the run stopped.
    pub in_chips: u64,
    /// Of those, packets sent out of a chip port with no link.
    pub dropped_unconnected: u64,
    /// Of those, packets that reached a host that refused them (misdelivered, or for a flow
    /// the host does not know).
    pub refused_by_hosts: u64,
    /// Of those, packets on a link or in a host's receive path when the run stopped.
    pub in_flight: u64,
}

impl HostBalance {
    /// `offered − delivered − dropped_in_chips − dropped_unconnected − refused_by_hosts −
    /// in_chips − in_flight`: 0 when every packet is accounted for.
    pub fn unaccounted(&self) -> i64 {
        self.offered as i64
            - (self.delivered
                + self.dropped_in_chips
                + self.dropped_unconnected
                + self.refused_by_hosts
                + self.in_chips
                + self.in_flight) as i64
    }
}

/// A run's record and the details that the record does not carry.
pub struct NetRun {
    /// The record (flows, series, pauses, drops, host totals).
    pub record: RunRecord,
    /// Per-host packet balance: `offered = delivered + dropped_in_chips +
    /// dropped_unconnected + refused_by_hosts + in_chips + in_flight` for every host.
    pub balance: Vec<HostBalance>,
    /// Events processed.
    pub events: u64,
    /// Data frames the chips transmitted (front-panel ports): packets through one chip's
    /// ingress, TM and egress.
    pub switch_hops: u64,
    /// Lockstep mode: chip cycles visited, all chips together (0 when event-driven).
    pub lockstep_cycles: u64,
    /// Lockstep mode: cycle edges at which a chip's event engine disagreed with the
    /// per-cycle reference, all chips together, and the first disagreement with its chip.
    pub lockstep_violations: (u64, Option<String>),
    /// Drops counted by the chips themselves (all reasons, all packets including control).
    pub chip_drops: u64,
    /// Per chip (name): the most buffer cells in use at once during the run.
    pub peak_buffer_cells: Vec<(String, u32)>,
    /// Frames on links when the run ended.
    pub frames_on_links: usize,
    /// Frame buffers the pool ever allocated (the most frames in flight at once): bounded by
    /// the network's capacity, not by the packets sent.
    pub frame_buffers: usize,
    /// The chips as the run left them (registers, counters, TM state), in topology order.
    pub chips: Vec<Chip>,
}

impl NetRun {
    /// The chip the topology names `node`, as the run left it.
    pub fn chip(&self, node: &str) -> Option<&Chip> {
        let i = self.record.chips.iter().position(|c| c.node == node)?;
        self.chips.get(i)
    }
}

impl Net<'_> {
    pub(super) fn finish(self, end: Time) -> NetRun {
        let flows = self
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| FlowRecord {
                id: i as u64,
                src: f.spec.src as u32,
                dst: f.spec.dst as u32,
                size_bytes: f.spec.size,
                start_ps: f.spec.start.ps(),
                end_ps: f.end.map(Time::ps),
                ideal_fct_ps: f.ideal_ps,
                packets_sent: f.packets_sent,
                retransmissions: f.retx,
            })
            .collect();
        let consumed = self
            .chips
            .iter()
            .enumerate()
            .filter(|(_, chip)| chip.consumed() > 0)
            .map(|(c, chip)| NodeCount {
                node: self.topo.spec.chips[c].name.clone(),
                packets: chip.consumed(),
            })
            .collect();
        let mut drops = Vec::new();
        let mut chip_drops = 0;
        for (c, chip) in self.chips.iter().enumerate() {
            for r in DropReason::ALL {
                let n = chip.drops(r);
                chip_drops += n;
                if n > 0 {
                    drops.push(DropCount {
                        node: self.topo.spec.chips[c].name.clone(),
                        reason: r.name().into(),
                        packets: n,
                    });
                }
            }
            if self.unconnected[c] > 0 {
                drops.push(DropCount {
                    node: self.topo.spec.chips[c].name.clone(),
                    reason: "unconnected_port".into(),
                    packets: self.unconnected[c],
                });
            }
        }
        for ((h, r), n) in &self.host_drops {
            drops.push(DropCount {
                node: self.hosts[*h].name.clone(),
                reason: r.to_string(),
                packets: *n,
            });
        }
        // The hosts' data packets still inside a chip, by source (the tag `ChipRx` gave them).
        let mut held = vec![0u64; self.hosts.len()];
        for chip in &self.chips {
            for tag in chip.held_tags() {
                held[tag as usize - 1] += 1;
            }
        }
        let balance: Vec<HostBalance> = self
            .hosts
            .iter()
            .enumerate()
            .map(|(i, h)| {
                let s = self.src[i];
                // A chip that copies a host's data packet (multicast, mirroring to a front
                // port) sends out more of them than came in: those copies are not drops.
                let dropped = s.chip_in.saturating_sub(s.chip_out + held[i]);
                let accounted = s.delivered + dropped + s.unconnected + s.refused + held[i];
                HostBalance {
                    host: h.name.clone(),
                    offered: h.packets_sent,
                    delivered: s.delivered,
                    dropped_in_chips: dropped,
                    in_chips: held[i],
                    dropped_unconnected: s.unconnected,
                    refused_by_hosts: s.refused,
                    in_flight: h.packets_sent.saturating_sub(accounted),
                }
            })
            .collect();
        let hosts = self
            .hosts
            .iter()
            .zip(&balance)
            .map(|(h, b)| HostTotals {
                host: h.name.clone(),
                packets_sent: h.packets_sent,
                packets_received: h.packets_received,
                packets_dropped: b.dropped_in_chips + b.dropped_unconnected + b.refused_by_hosts,
            })
            .collect();
        let series = self
            .samples
            .into_iter()
            .chain(
                self.queue_samples
                    .into_iter()
                    .flatten()
                    .flatten()
                    .map(|s| *s),
            )
            .map(|s| s.series)
            .collect();
        let chip_records = self
            .chips
            .iter()
            .enumerate()
            .map(|(c, chip)| ChipRecord {
                node: self.topo.spec.chips[c].name.clone(),
                profile: chip.profile().name.clone(),
                reads: chip.control_reads().to_vec(),
                state: chip.state(end),
            })
            .collect();
        let peak_buffer_cells = self
            .chips
            .iter()
            .enumerate()
            .map(|(c, chip)| (self.topo.spec.chips[c].name.clone(), chip.tm().peak_cells()))
            .collect();
        NetRun {
            record: RunRecord {
                name: self.name,
                duration_ps: end.ps(),
                flows,
                series,
                sample_period_ps: self.sample_period.map_or(0, Time::ps),
                pauses: self.pauses,
                drops,
                consumed,
                hosts,
                chips: chip_records,
            },
            balance,
            events: self.events,
            switch_hops: self
                .chips
                .iter()
                .flat_map(|c| (0..c.port_count()).map(|p| c.port_counters(p).tx_packets))
                .sum(),
            lockstep_cycles: self.lockstep.as_ref().map_or(0, Lockstep::visited),
            lockstep_violations: (
                self.chips
                    .iter()
                    .map(|c| c.lockstep_counters().violations)
                    .sum(),
                self.chips.iter().enumerate().find_map(|(c, chip)| {
                    let v = chip.lockstep_violation()?;
                    Some(format!("chip `{}`: {v}", self.topo.spec.chips[c].name))
                }),
            ),
            chip_drops,
            peak_buffer_cells,
            frames_on_links: self.pool.live(),
            frame_buffers: self.pool.allocated(),
            chips: self.chips,
        }
    }
}
