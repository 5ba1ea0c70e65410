//! The network runtime: one discrete-event kernel per partition of the chips, links and
//! hosts.
//!
//! Chips run exactly as on the bench (`Chip::receive` when a frame's first bit reaches a
//! port, `Chip::handle` for their events, frames leaving through the `Wire`). A link carries
//! a frame's first bit to the far end after its propagation delay: a chip port receives it
//! then; a host acts on it when its last bit has arrived (`+ frame_time` at the link rate).
//! Frames in flight live in a recycled pool ([`frames`]; no allocation per packet once warm).
//!
//! **Threads.** A run is split into partitions ([`partition`]: each host with its chip),
//! each with its own event queue, run by its own thread ([`Net::set_threads`]). They advance
//! in lookahead windows ([`windows`]): every partition runs its events before `T + window`,
//! `T` the earliest pending event anywhere and `window` the least delay of a chip-to-chip
//! link, then they exchange the frames sent across and decide the next window. Events are
//! numbered by the node that scheduled them ([`part`]), so each node sees its events in the
//! same order whichever partition runs it, and one thread runs the same windows as many:
//! **the outputs are byte-identical for every thread count**. What partitions share is
//! merged in an order that does not depend on them either: counters are summed, pauses
//! sorted by (time, node), captured frames and traces handed to the observer between
//! windows, by capture and by chip.
//!
//! Modules: [`build`] (a [`crate::Network`] into a runnable [`Net`]), [`partition`],
//! [`part`] (a partition and its events), [`flows`] (a partition's flows), [`windows`] (the
//! threads and the windows), the hosts' NICs in [`nic`] (their state in [`crate::host`]),
//! [`sample`] (sampled series), [`finish`] (the [`NetRun`]: record, packet balance, chips).

mod build;
mod finish;
mod flows;
mod frames;
mod nic;
mod part;
mod partition;
mod sample;
mod windows;

use crate::host::{Flow, Host};
use crate::network::{HolCheck, Observer};
use crate::records::QueueSnapshots;
use crate::topology::Topology;
use asic_model::chip::{Chip, ChipEvent};
use asic_model::kernel::{Lockstep, Schedule};
pub use finish::{HostBalance, NetRun};
use part::{Part, Shared};
use pipelines::time::Time;
use sample::SeriesState;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
pub use windows::Windows;

/// Events of the network.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Ev {
    Chip {
        chip: u16,
        ev: ChipEvent,
    },
    /// A frame's first bit reaches a chip port.
    ChipRx {
        chip: u16,
        port: u16,
        frame: u32,
    },
    /// A frame's last bit reaches a host.
    HostRx {
        host: u32,
        frame: u32,
    },
    /// A host's wire is free.
    HostTx {
        host: u32,
    },
    /// A host's next flows start.
    FlowStart {
        host: u32,
    },
    /// A flow's transport timer.
    FlowTimer {
        flow: u32,
    },
    /// A paced flow may send again.
    FlowWake {
        flow: u32,
    },
    /// A host's pull pacer releases a PULL.
    PullTick {
        host: u32,
    },
    /// A PFC pause of a host class may have expired.
    PauseEnd {
        host: u32,
        class: u8,
    },
}

/// Per-source data-packet counters for the balance.
#[derive(Clone, Copy, Default)]
pub(crate) struct SrcCount {
    pub(crate) chip_in: u64,
    pub(crate) chip_out: u64,
    pub(crate) delivered: u64,
    pub(crate) unconnected: u64,
    /// Data frames that reached a host that refused them (not its address, no such flow).
    pub(crate) refused: u64,
}

/// Chip events scheduled while the network is built (control operations), in order: each
/// goes to its chip's partition when the run starts.
struct Pending<'a> {
    v: &'a mut Vec<(u16, Time, ChipEvent)>,
    chip: u16,
}

impl Schedule<ChipEvent> for Pending<'_> {
    fn at(&mut self, at: Time, ev: ChipEvent) {
        self.v.push((self.chip, at, ev));
    }
}

/// A network built to run.
pub struct Net<'o> {
    pub(crate) name: String,
    pub(crate) topo: Topology,
    pub(crate) chips: Vec<Chip>,
    pub(crate) hosts: Vec<Host>,
    pub(crate) flows: Vec<Flow>,
    /// Chip events scheduled before the run.
    pub(crate) pending: Vec<(u16, Time, ChipEvent)>,
    /// Per chip: captured port → index into the network's captures.
    pub(crate) chip_captures: Vec<BTreeMap<u16, usize>>,
    /// Progress and captured frames go here.
    pub(crate) observer: Box<dyn Observer + 'o>,
    pub(crate) ip_to_host: BTreeMap<u32, usize>,
    /// Per chip: its sampled series, when sampling.
    pub(crate) samples: Vec<Vec<SeriesState>>,
    pub(crate) sample_period: Option<Time>,
    /// Record queue snapshots for a HOL-blocking check at each sample.
    pub(crate) hol_check: Option<HolCheck>,
    pub(crate) stop_at: Option<Time>,
    pub(crate) stop_when_complete: bool,
    /// Lockstep mode: every cycle of every chip visited between events.
    pub(crate) lockstep: bool,
    /// Threads to run on (partitions: at most one per group of chips).
    pub(crate) threads: usize,
    /// Whether an event due at once runs with the event that asked for it.
    pub(crate) hold: bool,
    /// Per chip: the names of its scheduled control operations, in the order they were
    /// scheduled (as the chip numbers them in its failures).
    pub(crate) control_names: Vec<Vec<String>>,
}

/// What the end of a run needs besides its partitions.
pub(crate) struct Rest<'o> {
    pub(crate) name: String,
    pub(crate) observer: Box<dyn Observer + 'o>,
    pub(crate) sample_period: Option<Time>,
    pub(crate) hol_check: Option<HolCheck>,
}

impl<'o> Net<'o> {
    /// Visit every cycle of every chip between events (lockstep mode, see
    /// [`asic_model::kernel::Lockstep`]), or not: the record is the same either way.
    pub fn set_lockstep(&mut self, on: bool) {
        self.lockstep = on;
    }

    /// Run on `threads` threads (at least 1; at most one per chip, or per group of chips
    /// joined by links without delay): the record is the same for every count.
    pub fn set_threads(&mut self, threads: usize) {
        self.threads = threads.max(1);
    }

    /// Run an event due at once (a port's service when a packet is enqueued at an idle
    /// port, a host's PULL or transport timer due now) right after the event that asked for
    /// it when nothing pending precedes it, without the queue (`on`, the default), or
    /// through the queue (the reference): the record is the same either way, and the first
    /// handles fewer events.
    pub fn set_hold(&mut self, on: bool) {
        self.hold = on;
    }

    /// Run to the end and collect the record.
    pub fn run(mut self) -> Result<NetRun, String> {
        self.observer.start()?;
        let plan = partition::plan(&self.topo, self.threads);
        // The expected end: the stop time, else when the last flow starts (a lower bound).
        let total = self
            .stop_at
            .or_else(|| self.flows.last().map(|f| f.spec.start))
            .unwrap_or(Time(1));
        let rules = windows::Rules {
            window: plan.window,
            stop_at: self.stop_at,
            stop_when_complete: self.stop_when_complete,
            flows: self.flows.len(),
        };
        let (parts, mut rest) = self.split(plan);
        let (mut parts, windows, end) = windows::drive(parts, &rules, &mut *rest.observer, total);
        let end = end?;
        for part in &mut parts {
            part.advance_lockstep(end);
        }
        // A read the run stopped before is the scenario's error, as on the bench: its result
        // would be missing. (A refused operation stopped the run when it ran.) The first
        // chip's, in the topology's order.
        let sh = Arc::clone(&parts[0].sh);
        for (c, spec) in sh.topo.spec.chips.iter().enumerate() {
            parts[sh.chip_part[c]]
                .chip(c)
                .check_reads_taken(end)
                .map_err(|e| format!("chip `{}`: {e}", spec.name))?;
        }
        for part in &mut parts {
            if rest.sample_period.is_some() {
                part.sample_before(end);
                part.sample(end);
            }
            for c in part.chips.iter_mut().flatten() {
                c.end_trace(end);
            }
        }
        windows::hand_out(
            &mut parts.iter_mut().collect::<Vec<_>>(),
            &mut *rest.observer,
        )?;
        rest.observer.finish(end);
        Ok(finish::finish(parts, rest, windows, end))
    }

    /// The partitions of `plan`, each with its chips, a copy of the hosts, its hosts' flows
    /// and its start events scheduled.
    fn split(self, plan: partition::Plan) -> (Vec<Part>, Rest<'o>) {
        let nodes = self.chips.len() + self.hosts.len();
        let mut host_flows = vec![Vec::new(); self.hosts.len()];
        for (f, fl) in self.flows.iter().enumerate() {
            host_flows[fl.spec.src].push(f as u32);
        }
        let (flow_homes, mut local_flows) = flows::deal(self.flows, &plan.host_part, plan.parts);
        let sh = Arc::new(Shared {
            topo: self.topo,
            ip_to_host: self.ip_to_host,
            chip_captures: self.chip_captures,
            control_names: self.control_names,
            chip_part: plan.chip_part,
            host_part: plan.host_part,
            host_flows,
            flow_homes: Arc::clone(&flow_homes),
            sample_period: self.sample_period,
            hol_check: self.hol_check,
        });
        let nc = self.chips.len();
        let nh = self.hosts.len();
        let mut samples: Vec<Option<Vec<SeriesState>>> =
            self.samples.into_iter().map(Some).collect();
        let mut chips: Vec<Option<Chip>> = self.chips.into_iter().map(Some).collect();
        let mut parts: Vec<Part> = (0..plan.parts)
            .map(|p| {
                let own: Vec<usize> = (0..nc).filter(|&c| sh.chip_part[c] == p).collect();
                let mut mine: Vec<Option<Chip>> = (0..nc).map(|_| None).collect();
                let mut part_samples: Vec<Vec<SeriesState>> = (0..nc).map(|_| Vec::new()).collect();
                let mut queue_samples: Vec<Vec<_>> = (0..nc).map(|_| Vec::new()).collect();
                for &c in &own {
                    let mut chip = chips[c].take().expect("each chip in one partition");
                    // Each data packet a chip drops is counted against its flow.
                    chip.watch_drops(crate::packet::data_flow_id);
                    if self.sample_period.is_some() {
                        let n = chip.tm().port_count() * chip.tm().spec().queues_per_port as usize;
                        queue_samples[c] = (0..n).map(|_| None).collect();
                        part_samples[c] = samples[c].take().unwrap_or_default();
                    }
                    mine[c] = Some(chip);
                }
                let lockstep = self.lockstep.then(|| {
                    Lockstep::new(
                        own.iter()
                            .map(|&c| mine[c].as_ref().expect("own").clock())
                            .collect(),
                    )
                });
                Part {
                    sh: Arc::clone(&sh),
                    index: p,
                    q: part::NodeQueue {
                        queue: Default::default(),
                        counts: vec![0; nodes],
                        node: 0,
                        now: Time::ZERO,
                        held: None,
                        hold: self.hold,
                    },
                    chips: mine,
                    own_chips: own,
                    hosts: self.hosts.clone(),
                    flows: flows::LocalFlows::new(
                        p,
                        Arc::clone(&flow_homes),
                        std::mem::take(&mut local_flows[p]),
                    ),
                    next_flow: vec![0; nh],
                    started: 0,
                    completed: 0,
                    pool: Default::default(),
                    outbox: Vec::new(),
                    mail: (0..plan.parts).map(|_| Default::default()).collect(),
                    captured: Default::default(),
                    src: vec![SrcCount::default(); nh],
                    host_drops: BTreeMap::new(),
                    flow_drops: HashMap::new(),
                    connections: HashMap::new(),
                    unconnected: vec![0; nc],
                    pauses: Vec::new(),
                    samples: part_samples,
                    queue_samples,
                    snapshots: QueueSnapshots::default(),
                    next_sample: if self.sample_period.is_some() {
                        Time::ZERO
                    } else {
                        Time(u64::MAX)
                    },
                    last_sample: Time::ZERO,
                    events: 0,
                    last_at: Time::ZERO,
                    error: None,
                    scratch: Vec::with_capacity(1600),
                    lockstep,
                }
            })
            .collect();
        // Start events, numbered as their nodes' first: the chips' control operations and
        // packet generators (BFC's refresh, for one), the hosts' first flows.
        for (c, t, ev) in self.pending {
            parts[sh.chip_part[c as usize]].q.chip(c as usize).at(t, ev);
        }
        for part in &mut parts {
            for i in 0..part.own_chips.len() {
                let c = part.own_chips[i];
                part.chips[c]
                    .as_mut()
                    .expect("own")
                    .start(&mut part.q.chip(c));
                part.q.queue_held();
            }
        }
        for h in 0..nh {
            if let Some(&f) = sh.host_flows[h].first() {
                let part = &mut parts[sh.host_part[h]];
                part.q.node = sh.host_node(h);
                let t = part.flows[f as usize].spec.start;
                part.q.at(t, Ev::FlowStart { host: h as u32 });
            }
        }
        let rest = Rest {
            name: self.name,
            observer: self.observer,
            sample_period: self.sample_period,
            hol_check: self.hol_check,
        };
        (parts, rest)
    }
}
