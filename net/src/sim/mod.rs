//! The network runtime: one discrete-event kernel for every chip, link and host.
//!
//! Chips run exactly as on the bench (`Chip::receive` when a frame's first bit reaches a
//! port, `Chip::handle` for their events, frames leaving through the `Wire`). A link carries
//! a frame's first bit to the far end after its propagation delay: a chip port receives it
//! then; a host acts on it when its last bit has arrived (`+ frame_time` at the link rate).
//! Frames in flight live in a recycled pool ([`frames`]; no allocation per packet once warm).
//!
//! Modules: [`build`] (a [`Network`] into a runnable [`Net`]), the run loop and event
//! dispatch here, the hosts' NICs in [`nic`] (their state in [`crate::host`]), [`sample`] (sampled series),
//! [`finish`] (the [`NetRun`]: record, packet balance, chips).

mod build;
mod finish;
mod frames;
mod nic;
mod sample;

use crate::host::{Flow, Host};
use crate::network::Observer;
use crate::packet;
use crate::records::PauseEvent;
use crate::topology::{End, Topology};
use asic_model::chip::{Chip, ChipEvent, PauseDirection};
use asic_model::kernel::{EventQueue, Lockstep, Schedule};
use asic_model::mac::frame_time;
pub use finish::{HostBalance, NetRun};
use frames::{Outbox, Pool};
use pipelines::time::Time;
use sample::SeriesState;
use std::collections::BTreeMap;

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
    /// The next flow of the list starts.
    FlowStart,
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
    /// Take samples.
    Sample,
}

pub(crate) struct ChipQ<'a> {
    q: &'a mut EventQueue<Ev>,
    chip: u16,
}

impl Schedule<ChipEvent> for ChipQ<'_> {
    fn at(&mut self, at: Time, ev: ChipEvent) {
        self.q.at(
            at,
            Ev::Chip {
                chip: self.chip,
                ev,
            },
        );
    }
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

/// The network being run.
pub struct Net<'o> {
    pub(crate) name: String,
    pub(crate) queue: EventQueue<Ev>,
    pub(crate) topo: Topology,
    pub(crate) chips: Vec<Chip>,
    pub(crate) hosts: Vec<Host>,
    pub(crate) flows: Vec<Flow>,
    pub(crate) next_flow: usize,
    pub(crate) completed: usize,
    pub(crate) pool: Pool,
    pub(crate) outbox: Vec<(u16, Time, u32)>,
    /// Per chip: captured port → index into the network's captures.
    pub(crate) chip_captures: Vec<BTreeMap<u16, usize>>,
    /// Progress and captured frames go here.
    pub(crate) observer: Box<dyn Observer + 'o>,
    pub(crate) ip_to_host: BTreeMap<u32, usize>,
    pub(crate) src: Vec<SrcCount>,
    pub(crate) host_drops: BTreeMap<(usize, &'static str), u64>,
    pub(crate) unconnected: Vec<u64>,
    pub(crate) pauses: Vec<PauseEvent>,
    pub(crate) samples: Vec<SeriesState>,
    /// Per-queue depth series `(chip, port, queue)`, created when a queue first holds cells
    /// (a port may have 128 queues; most stay empty).
    /// Per chip, indexed `port * queues_per_port + queue` (a dense table: every sample looks
    /// at every queue of the sampled ports); empty when not sampling.
    pub(crate) queue_samples: Vec<Vec<Option<Box<SeriesState>>>>,
    /// When the previous sample was taken (a new queue series starts at 0 from there).
    pub(crate) last_sample: Time,
    pub(crate) sample_period: Option<Time>,
    pub(crate) stop_at: Option<Time>,
    pub(crate) stop_when_complete: bool,
    pub(crate) events: u64,
    pub(crate) scratch: Vec<u8>,
    /// Lockstep mode: every cycle of every chip visited between events.
    pub(crate) lockstep: Option<Lockstep>,
    /// Per chip: the names of its scheduled control operations, in the order they were
    /// scheduled (as the chip numbers them in its failures).
    pub(crate) control_names: Vec<Vec<String>>,
}

impl<'o> Net<'o> {
    /// Visit every cycle of every chip between events (lockstep mode, see
    /// [`asic_model::kernel::Lockstep`]), or not: the record is the same either way.
    pub fn set_lockstep(&mut self, on: bool) {
        self.lockstep = on.then(|| Lockstep::new(self.chips.iter().map(Chip::clock).collect()));
    }

    /// Run to the end and collect the record.
    pub fn run(mut self) -> Result<NetRun, String> {
        self.observer.start()?;
        if !self.flows.is_empty() {
            let t = self.flows[0].spec.start;
            self.queue.at(t, Ev::FlowStart);
        }
        if self.sample_period.is_some() {
            self.queue.at(Time::ZERO, Ev::Sample);
        }
        // The chips' packet generators (BFC's refresh, for one).
        for (c, chip) in self.chips.iter_mut().enumerate() {
            chip.start(&mut ChipQ {
                q: &mut self.queue,
                chip: c as u16,
            });
        }
        let mut end = Time::ZERO;
        // The expected end: the stop time, else when the last flow starts (a lower bound).
        let total = self
            .stop_at
            .or_else(|| self.flows.last().map(|f| f.spec.start))
            .unwrap_or(Time(1));
        while let Some(t) = self.queue.peek_time() {
            if self.stop_at.is_some_and(|s| t > s) {
                end = self.stop_at.expect("checked");
                break;
            }
            if let Some(l) = &mut self.lockstep {
                let chips = &mut self.chips;
                l.advance_to(t, |c, cycle| chips[c].tick(cycle));
            }
            let (now, ev) = self.queue.pop().expect("peeked");
            end = now;
            self.events += 1;
            if self.events % 4096 == 0 {
                self.observer.progress(now, total);
                self.hand_out_traces()?;
            }
            self.handle(now, ev)?;
            // Scheduled reads are taken even after the last flow completes: their results
            // are what the scenario asked for.
            if self.stop_when_complete
                && self.next_flow == self.flows.len()
                && self.completed == self.flows.len()
                && !self.flows.is_empty()
                && !self.chips.iter().any(Chip::reads_pending)
            {
                break;
            }
        }
        if let Some(l) = &mut self.lockstep {
            let chips = &mut self.chips;
            l.advance_to(end, |c, cycle| chips[c].tick(cycle));
        }
        // A read the run stopped before is the scenario's error, as on the bench: its result
        // would be missing. (A refused operation stopped the run when it ran.)
        for (c, chip) in self.chips.iter().enumerate() {
            let name = &self.topo.spec.chips[c].name;
            chip.check_reads_taken(end)
                .map_err(|e| format!("chip `{name}`: {e}"))?;
        }
        if self.sample_period.is_some() {
            self.sample(end);
        }
        for chip in &mut self.chips {
            chip.end_trace(end);
        }
        self.hand_out_traces()?;
        self.observer.finish(end);
        Ok(self.finish(end))
    }

    /// The traced packets whose life ended, chip by chip, to the observer.
    fn hand_out_traces(&mut self) -> Result<(), String> {
        for (c, chip) in self.chips.iter_mut().enumerate() {
            for p in chip.drain_trace() {
                self.observer.trace(c, &p)?;
            }
        }
        Ok(())
    }

    fn handle(&mut self, now: Time, ev: Ev) -> Result<(), String> {
        match ev {
            Ev::Chip { chip, ev } => {
                let c = chip as usize;
                let mut q = ChipQ {
                    q: &mut self.queue,
                    chip,
                };
                let mut w = Outbox {
                    pool: &mut self.pool,
                    out: &mut self.outbox,
                };
                self.chips[c].handle(now, ev, &mut q, &mut w);
                // A refused control operation stops the run, as on the bench.
                if let (ChipEvent::Control { .. }, Some(f)) =
                    (ev, self.chips[c].control_failures().first())
                {
                    return Err(format!(
                        "chip `{}`: {}",
                        self.topo.spec.chips[c].name,
                        f.refusal(&self.control_names[c][f.op])
                    ));
                }
                // The chip's transmit side paused or resumed by PFC frames it received.
                // And its queues paused or resumed by its program (AFC).
                for r in self.chips[c].drain_pause_log() {
                    let kind = match r.direction {
                        PauseDirection::Received => "pfc",
                        PauseDirection::Afc => "queue",
                        PauseDirection::Sent => continue,
                    };
                    self.pauses.push(PauseEvent {
                        at_ps: r.at.ps(),
                        node: self.topo.spec.chips[c].name.clone(),
                        port: r.port,
                        kind: kind.into(),
                        class: r.priority as u16,
                        paused: r.paused,
                    });
                }
                while let Some((port, start, frame)) = self.outbox.pop() {
                    self.chip_tx(c, port, start, frame)?;
                }
            }
            Ev::ChipRx { chip, port, frame } => {
                let c = chip as usize;
                let data = &self.pool.bufs[frame as usize];
                // A host's data packet is tagged with its sender (index + 1), which the chip
                // keeps whatever the program does to the bytes: `finish` counts by it what is
                // still inside at the end.
                let source = self.data_source(data);
                if let Some(h) = source {
                    self.src[h].chip_in += 1;
                }
                let tag = source.map_or(0, |h| h as u32 + 1);
                let mut q = ChipQ {
                    q: &mut self.queue,
                    chip,
                };
                self.chips[c]
                    .receive(port, now, data, tag, &mut q)
                    .map_err(|e| format!("chip `{}`: {e}", self.topo.spec.chips[c].name))?;
                self.pool.release(frame);
            }
            Ev::HostRx { host, frame } => {
                self.host_rx(now, host as usize, frame);
                self.pool.release(frame);
            }
            Ev::HostTx { host } => {
                self.hosts[host as usize].tx_scheduled = false;
                self.try_send(now, host as usize)?;
            }
            Ev::FlowStart => {
                while self.next_flow < self.flows.len()
                    && self.flows[self.next_flow].spec.start <= now
                {
                    let f = self.next_flow;
                    self.next_flow += 1;
                    let fl = &mut self.flows[f];
                    fl.sender = Some(fl.spec.transport.sender(fl.shape, now));
                    self.after_sender(now, f)?;
                }
                if let Some(fl) = self.flows.get(self.next_flow) {
                    let t = fl.spec.start;
                    self.queue.at(t, Ev::FlowStart);
                }
            }
            Ev::FlowTimer { flow } => {
                let f = flow as usize;
                self.flows[f].timer_at = None;
                if let Some(s) = self.flows[f].sender.as_mut() {
                    if s.timer().is_some_and(|t| t <= now) {
                        s.on_timer(now);
                    }
                }
                self.after_sender_from(now, f, true)?;
            }
            Ev::FlowWake { flow } => {
                let f = flow as usize;
                if self.flows[f].wake_at.is_some_and(|w| w <= now) {
                    self.flows[f].wake_at = None;
                }
                self.after_sender(now, f)?;
            }
            Ev::PullTick { host } => self.pull_tick(now, host as usize)?,
            Ev::PauseEnd { host, class } => {
                let h = &mut self.hosts[host as usize];
                let c = class as usize;
                if h.class_paused[c] && h.class_paused_until[c] <= now {
                    h.class_paused[c] = false;
                    self.pauses.push(PauseEvent {
                        at_ps: now.ps(),
                        node: h.name.clone(),
                        port: 0,
                        kind: "pfc".into(),
                        class: class as u16,
                        paused: false,
                    });
                    self.kick(now, host as usize)?;
                }
            }
            Ev::Sample => {
                self.sample(now);
                if let Some(p) = self.sample_period {
                    if !self.queue.is_empty() {
                        self.queue.at(now + p, Ev::Sample);
                    }
                }
            }
        }
        Ok(())
    }

    /// The host that sent `frame`, if it is a host's data packet: its flow's source, by the
    /// flow id (a header a switch returned to its sender has its addresses swapped but the
    /// same flow), or by its IPv4 source if the id names no flow.
    fn data_source(&self, frame: &[u8]) -> Option<usize> {
        let flow = packet::data_flow_id(frame)?;
        match self.flows.get(flow as usize) {
            Some(f) => Some(f.spec.src),
            None => packet::ipv4_src(frame).and_then(|ip| self.ip_to_host.get(&ip).copied()),
        }
    }

    /// A chip's port sent `frame` starting at `start`.
    fn chip_tx(&mut self, c: usize, port: u16, start: Time, frame: u32) -> Result<(), String> {
        let data = &self.pool.bufs[frame as usize];
        if let Some(&i) = self.chip_captures[c].get(&port) {
            self.observer.capture(i, start, data)?;
        }
        let src = self.data_source(data);
        if let Some(h) = src {
            self.src[h].chip_out += 1;
        }
        let Some(&l) = self.topo.chip_ports[c].get(&port) else {
            self.unconnected[c] += 1;
            if let Some(h) = src {
                self.src[h].unconnected += 1;
            }
            self.pool.release(frame);
            return Ok(());
        };
        let link = self.topo.links[l];
        match self.topo.peer(l, End::Chip(c, port)) {
            End::Chip(c2, p2) => self.queue.at(
                start + Time(link.delay_ps),
                Ev::ChipRx {
                    chip: c2 as u16,
                    port: p2,
                    frame,
                },
            ),
            End::Host(h) => {
                let len = self.pool.bufs[frame as usize].len();
                self.queue.at(
                    start + Time(link.delay_ps) + frame_time(len, link.gbps),
                    Ev::HostRx {
                        host: h as u32,
                        frame,
                    },
                )
            }
        }
        Ok(())
    }
}
