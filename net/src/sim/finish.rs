//! The end of a run: the [`RunRecord`], each host's packet balance, and the chips as the run
//! left them.

use super::part::Part;
use super::{Rest, SrcCount, Windows};
use crate::records::{
    ChipRecord, DropCount, FlowRecord, HostTotals, NodeCount, QueryRecord, QueueSnapshots,
    RunRecord,
};
use asic_model::chip::{Chip, DropReason};
use asic_model::kernel::Lockstep;
use pipelines::time::Time;
use std::collections::{BTreeMap, HashMap};

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
    /// Events the partitions' queues handled. An event run with the event that asked for
    /// it ([`crate::Net::set_hold`]) is not one, and whether it can be depends on
    /// what else its partition holds, so this count (unlike the record) may differ slightly
    /// with the thread count.
    pub events: u64,
    /// How the run's lookahead windows went on its threads: `events / critical_events` is
    /// the speedup its split over threads allows before synchronisation costs. (The only
    /// figures that depend on the thread count; no output shows them.)
    pub windows: Windows,
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

/// The record of a run that ended at `end`, from its partitions (what each holds of the
/// chips, hosts and flows it ran, its counters summed, its pauses merged by time and node).
pub(super) fn finish(mut parts: Vec<Part>, rest: Rest, windows: Windows, end: Time) -> NetRun {
    let sh = std::sync::Arc::clone(&parts[0].sh);
    let topo = &sh.topo;
    // Every partition sampled the same instants, each its own chips.
    let queue_snapshots = rest.hol_check.map(|h| {
        let mut all = QueueSnapshots {
            congested_cells: h.congested_cells,
            grace_ps: h.grace_ns.saturating_mul(1000),
            ..QueueSnapshots::default()
        };
        for part in &mut parts {
            all.samples = all.samples.max(part.snapshots.samples);
            all.paused.append(&mut part.snapshots.paused);
            all.congested.append(&mut part.snapshots.congested);
        }
        all.paused
            .sort_by_key(|p| (p.time_ps, p.chip, p.port, p.queue));
        all.congested.sort_unstable();
        all
    });
    let mut flow_drops: HashMap<u64, u64> = HashMap::new();
    for part in parts.iter() {
        for (&flow, &n) in &part.flow_drops {
            *flow_drops.entry(flow).or_default() += n;
        }
    }
    // Each flow's record, and the query it answers part of.
    let (flows, query): (Vec<FlowRecord>, Vec<Option<u32>>) = (0..sh.flow_homes.len())
        .map(|i| {
            let src = sh.flow_homes.src[i] as usize;
            let sender = &parts[sh.host_part[src]].flows[i];
            let receiver = &parts[sh.host_part[sender.spec.dst]].flows[i];
            let record = FlowRecord {
                id: i as u64,
                src: sender.spec.src as u32,
                dst: sender.spec.dst as u32,
                size_bytes: sender.spec.size,
                start_ps: sender.spec.start.ps(),
                end_ps: receiver.end.map(Time::ps),
                ideal_fct_ps: sender.ideal_ps,
                packets_sent: sender.packets_sent,
                retransmissions: sender.retx,
                packets_dropped: flow_drops.get(&(i as u64)).copied().unwrap_or(0),
            };
            (record, sender.spec.query)
        })
        .unzip();
    let queries = QueryRecord::of_flows(&flows, &query);
    let chips: Vec<Chip> = (0..sh.chip_part.len())
        .map(|c| {
            parts[sh.chip_part[c]].chips[c]
                .take()
                .expect("a chip is in its partition")
        })
        .collect();
    let mut series = Vec::new();
    let mut queue_series = Vec::new();
    for c in 0..sh.chip_part.len() {
        let part = &mut parts[sh.chip_part[c]];
        series.extend(
            std::mem::take(&mut part.samples[c])
                .into_iter()
                .map(|s| s.series),
        );
        queue_series.extend(
            std::mem::take(&mut part.queue_samples[c])
                .into_iter()
                .flatten()
                .map(|s| s.series),
        );
    }
    series.append(&mut queue_series);
    let hosts: Vec<_> = (0..sh.host_part.len())
        .map(|h| &parts[sh.host_part[h]].hosts[h])
        .collect();
    let mut src = vec![SrcCount::default(); hosts.len()];
    let mut host_drops: BTreeMap<(usize, &str), u64> = BTreeMap::new();
    let mut unconnected = vec![0u64; sh.chip_part.len()];
    let mut pauses = Vec::new();
    for part in &parts {
        for (total, s) in src.iter_mut().zip(&part.src) {
            total.chip_in += s.chip_in;
            total.chip_out += s.chip_out;
            total.delivered += s.delivered;
            total.unconnected += s.unconnected;
            total.refused += s.refused;
        }
        for (k, n) in &part.host_drops {
            *host_drops.entry(*k).or_default() += n;
        }
        for (total, n) in unconnected.iter_mut().zip(&part.unconnected) {
            *total += n;
        }
        pauses.extend(part.pauses.iter().cloned());
    }
    // Stable: a node's pauses are in one partition, in the order it logged them.
    pauses.sort_by_key(|(node, p)| (p.at_ps, *node));
    let pauses = pauses.into_iter().map(|(_, p)| p).collect();
    let lockstep_cycles = parts
        .iter()
        .filter_map(|p| p.lockstep.as_ref())
        .map(Lockstep::visited)
        .sum();
    let frames_on_links = parts.iter().map(|p| p.pool.live()).sum();
    let frame_buffers = parts.iter().map(|p| p.pool.allocated()).sum();
    let events = parts.iter().map(|p| p.events).sum();
    let consumed = chips
        .iter()
        .enumerate()
        .filter(|(_, chip)| chip.consumed() > 0)
        .map(|(c, chip)| NodeCount {
            node: topo.spec.chips[c].name.clone(),
            packets: chip.consumed(),
        })
        .collect();
    let mut drops = Vec::new();
    let mut chip_drops = 0;
    for (c, chip) in chips.iter().enumerate() {
        for r in DropReason::ALL {
            let n = chip.drops(r);
            chip_drops += n;
            if n > 0 {
                drops.push(DropCount {
                    node: topo.spec.chips[c].name.clone(),
                    reason: r.name().into(),
                    packets: n,
                });
            }
        }
        if unconnected[c] > 0 {
            drops.push(DropCount {
                node: topo.spec.chips[c].name.clone(),
                reason: "unconnected_port".into(),
                packets: unconnected[c],
            });
        }
    }
    for ((h, r), n) in &host_drops {
        drops.push(DropCount {
            node: hosts[*h].name.clone(),
            reason: r.to_string(),
            packets: *n,
        });
    }
    // The hosts' data packets still inside a chip, by source (the tag `ChipRx` gave them).
    let mut held = vec![0u64; hosts.len()];
    for chip in &chips {
        for tag in chip.held_tags() {
            held[tag as usize - 1] += 1;
        }
    }
    let balance: Vec<HostBalance> = hosts
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let s = src[i];
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
    let hosts = hosts
        .iter()
        .zip(&balance)
        .map(|(h, b)| HostTotals {
            host: h.name.clone(),
            packets_sent: h.packets_sent,
            packets_received: h.packets_received,
            packets_dropped: b.dropped_in_chips + b.dropped_unconnected + b.refused_by_hosts,
        })
        .collect();
    let chip_records = chips
        .iter()
        .enumerate()
        .map(|(c, chip)| ChipRecord {
            node: topo.spec.chips[c].name.clone(),
            profile: chip.profile().name.clone(),
            reads: chip.control_reads().to_vec(),
            state: chip.state(end),
        })
        .collect();
    let peak_buffer_cells = chips
        .iter()
        .enumerate()
        .map(|(c, chip)| (topo.spec.chips[c].name.clone(), chip.tm().peak_cells()))
        .collect();
    NetRun {
        record: RunRecord {
            name: rest.name,
            duration_ps: end.ps(),
            flows,
            queries,
            series,
            sample_period_ps: rest.sample_period.map_or(0, Time::ps),
            pauses,
            drops,
            consumed,
            hosts,
            chips: chip_records,
            queue_snapshots,
            hol: None,
        },
        balance,
        events,
        windows,
        switch_hops: chips
            .iter()
            .flat_map(|c| (0..c.port_count()).map(|p| c.port_counters(p).tx_packets))
            .sum(),
        lockstep_cycles,
        lockstep_violations: (
            chips.iter().map(|c| c.lockstep_counters().violations).sum(),
            chips.iter().enumerate().find_map(|(c, chip)| {
                let v = chip.lockstep_violation()?;
                Some(format!("chip `{}`: {v}", topo.spec.chips[c].name))
            }),
        ),
        chip_drops,
        peak_buffer_cells,
        frames_on_links,
        frame_buffers,
        chips,
    }
}
