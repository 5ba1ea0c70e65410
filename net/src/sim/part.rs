//! One partition of a run: its chips and their hosts, its own event queue, and the frames it
//! sends to other partitions ([`Mail`]). What every partition reads and none changes is in
//! [`Shared`].
//!
//! **Event order.** Every event is numbered by the node that scheduled it: `(node, that
//! node's count of events scheduled)` ([`next_key`]). Events at the same time run in that
//! order, in every partition, so the order in which a node sees its events does not depend
//! on which other nodes share its partition, and a run's outputs are the same for every
//! thread count (`mod.rs`). A node schedules only while one of its own events runs (or,
//! before the run, its start events), so its count depends on its own history alone.
//!
//! **Held events.** An event due at once (a chip's port service, [`ChipQ::at_or_hold`]; a
//! host's PULL or timer, [`NodeQueue::at_or_hold`]) takes its number but waits beside the
//! queue; once the event that scheduled it is done, it runs next
//! if its number precedes every pending event's (where the queue would have run it), else
//! it joins the queue. Whether it was held may depend on the partition's other nodes; the
//! order never does.

use super::flows::{FlowHomes, LocalFlows};
use super::frames::{FrameLog, Outbox, Pool};
use super::sample::SeriesState;
use super::{Ev, SrcCount};
use crate::host::Host;
use crate::network::HolCheck;
use crate::packet;
use crate::records::{PauseEvent, QueueSnapshots};
use crate::topology::{End, Topology};
use crate::transport::Carried;
use asic_model::chip::{Chip, ChipEvent, PauseDirection};
use asic_model::kernel::{EventQueue, Lockstep, Schedule};
use asic_model::mac::frame_time;
use pipelines::time::Time;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// Bits of an event number that count a node's events (2⁴⁰, a million million per node);
/// the node is above them.
const COUNT_BITS: u32 = 40;

/// Nodes (chips and hosts) a network may have: the node is the number's top 24 bits.
pub(crate) const MAX_NODES: usize = 1 << (64 - COUNT_BITS);

/// The next number of an event `node` schedules, its count `count` advanced.
#[inline]
pub(crate) fn next_key(node: u32, count: &mut u64) -> u64 {
    *count += 1;
    debug_assert!(
        *count < 1 << COUNT_BITS,
        "node {node} scheduled 2^40 events"
    );
    (node as u64) << COUNT_BITS | *count
}

/// What every partition reads during a run.
pub(crate) struct Shared {
    pub(crate) topo: Topology,
    pub(crate) ip_to_host: BTreeMap<u32, usize>,
    /// Per chip: captured port → index into the network's captures.
    pub(crate) chip_captures: Vec<BTreeMap<u16, usize>>,
    /// Per chip: the names of its scheduled control operations, in the order scheduled.
    pub(crate) control_names: Vec<Vec<String>>,
    /// Per chip, per host: the partition that runs it.
    pub(crate) chip_part: Vec<usize>,
    pub(crate) host_part: Vec<usize>,
    /// Per host: the flows it sends, in start order.
    pub(crate) host_flows: Vec<Vec<u32>>,
    /// Where each flow's sides are held.
    pub(crate) flow_homes: Arc<FlowHomes>,
    pub(crate) sample_period: Option<Time>,
    pub(crate) hol_check: Option<HolCheck>,
}

impl Shared {
    /// Host `h`'s node number (chips are `0..chips`).
    #[inline]
    pub(crate) fn host_node(&self, h: usize) -> u32 {
        (self.chip_part.len() + h) as u32
    }
}

/// A chip's view of its partition's queue: its events, numbered as its own.
pub(crate) struct ChipQ<'a> {
    pub(crate) q: &'a mut EventQueue<Ev>,
    pub(crate) chip: u16,
    pub(crate) count: &'a mut u64,
    /// The time of the event running.
    pub(crate) now: Time,
    /// An event due now that the chip would run at once ([`Schedule::at_or_hold`]), with
    /// its number; [`Part::handle`] runs it next if nothing pending precedes it.
    pub(crate) held: &'a mut Option<(u64, Ev)>,
    /// Whether to hold such events (else they are queued: the reference).
    pub(crate) hold: bool,
}

impl Schedule<ChipEvent> for ChipQ<'_> {
    #[inline]
    fn at(&mut self, at: Time, ev: ChipEvent) {
        let key = next_key(self.chip as u32, self.count);
        self.q.at_keyed(
            at,
            key,
            Ev::Chip {
                chip: self.chip,
                ev,
            },
        );
    }

    #[inline]
    fn at_or_hold(&mut self, at: Time, ev: ChipEvent) {
        if !self.hold || at != self.now || self.held.is_some() {
            return self.at(at, ev);
        }
        let chip = self.chip;
        *self.held = Some((next_key(chip as u32, self.count), Ev::Chip { chip, ev }));
    }
}

/// A partition's event queue, numbering each event as its node's.
pub(crate) struct NodeQueue {
    pub(crate) queue: EventQueue<Ev>,
    /// Per node (chips, then hosts): events it has scheduled.
    pub(crate) counts: Vec<u64>,
    /// The node whose event is running.
    pub(crate) node: u32,
    /// The time of the event running.
    pub(crate) now: Time,
    /// An event due now held to run right after the running one ([`ChipQ::held`],
    /// [`NodeQueue::at_or_hold`]).
    pub(crate) held: Option<(u64, Ev)>,
    /// Whether events may be held ([`crate::Net::set_hold`]).
    pub(crate) hold: bool,
}

impl NodeQueue {
    /// Schedule `ev` as the running node's event.
    #[inline]
    pub(crate) fn at(&mut self, at: Time, ev: Ev) {
        let key = self.next_key();
        self.queue.at_keyed(at, key, ev);
    }

    /// The running node's next event number.
    #[inline]
    fn next_key(&mut self) -> u64 {
        next_key(self.node, &mut self.counts[self.node as usize])
    }

    /// [`NodeQueue::at`] for an event the running node would as soon run at once (a
    /// host's PULL or timer due now): held like a chip's ([`ChipQ::at_or_hold`]).
    #[inline]
    pub(crate) fn at_or_hold(&mut self, at: Time, ev: Ev) {
        if !self.hold || at != self.now || self.held.is_some() {
            return self.at(at, ev);
        }
        self.held = Some((self.next_key(), ev));
    }

    /// Queue the held event, if any (where no driver runs it next).
    pub(crate) fn queue_held(&mut self) {
        if let Some((key, ev)) = self.held.take() {
            self.queue.at_keyed(self.now, key, ev);
        }
    }

    /// Chip `c`'s view.
    #[inline]
    pub(crate) fn chip(&mut self, c: usize) -> ChipQ<'_> {
        ChipQ {
            q: &mut self.queue,
            chip: c as u16,
            count: &mut self.counts[c],
            now: self.now,
            held: &mut self.held,
            hold: self.hold,
        }
    }
}

/// Frames one partition sent another during a window: each event with its time and number
/// ([`FrameLog`]; the receiver empties it, its capacity reused from window to window).
pub(crate) type Mail = FrameLog<(Time, u64, Ev)>;

/// Frames captured during a window, for the observer: each with its capture and start.
pub(crate) type Captured = FrameLog<(usize, Time)>;

/// Where a partition stands between windows: what deciding the next window needs.
#[derive(Clone, Debug, Default)]
pub(crate) struct Status {
    /// Its earliest pending event.
    pub(crate) next: Option<Time>,
    /// The time of the last event it ran.
    pub(crate) last_at: Time,
    pub(crate) events: u64,
    /// Flows its hosts started, and flows its hosts completed (as receivers).
    pub(crate) started: usize,
    pub(crate) completed: usize,
    /// A chip of it still has a scheduled read to take.
    pub(crate) reads_pending: bool,
    /// The error that stopped it: when, at which node, what.
    pub(crate) error: Option<(Time, u32, String)>,
    /// It holds captured frames or trace records for the observer.
    pub(crate) observations: bool,
}

/// One partition being run.
pub(crate) struct Part {
    pub(crate) sh: Arc<Shared>,
    pub(crate) index: usize,
    pub(crate) q: NodeQueue,
    /// Per chip: the chip, if this partition runs it.
    pub(crate) chips: Vec<Option<Chip>>,
    /// The chips it runs, in order (lockstep mode numbers them so).
    pub(crate) own_chips: Vec<usize>,
    /// Per host (only this partition's are used).
    pub(crate) hosts: Vec<Host>,
    /// The flows of its hosts: a flow's sending side is used where its source runs, its
    /// receiving side where its destination runs.
    pub(crate) flows: LocalFlows,
    /// Per host: how many of its flows have started.
    pub(crate) next_flow: Vec<usize>,
    pub(crate) started: usize,
    pub(crate) completed: usize,
    pub(crate) pool: Pool,
    pub(crate) outbox: Vec<(u16, Time, u32)>,
    /// Per destination partition: frames for it.
    pub(crate) mail: Vec<Mail>,
    /// Captured frames for the observer.
    pub(crate) captured: Captured,
    pub(crate) src: Vec<SrcCount>,
    pub(crate) host_drops: BTreeMap<(usize, &'static str), u64>,
    /// Per flow id: its data packets its chips dropped (summed over partitions at the end).
    pub(crate) flow_drops: HashMap<u64, u64>,
    /// Per persistent connection of its hosts: the flows sent on it so far, in start order
    /// (`traffic::Connections::Persistent`).
    pub(crate) connections: HashMap<u32, Vec<u32>>,
    /// Per chip: frames sent out of a port with no link.
    pub(crate) unconnected: Vec<u64>,
    /// Pauses, with the node that logged them.
    pub(crate) pauses: Vec<(u32, PauseEvent)>,
    /// Per chip: its sampled series (empty for another partition's chips, or when not
    /// sampling), in the order `sample.rs` fills them.
    pub(crate) samples: Vec<Vec<SeriesState>>,
    /// Per chip, indexed `port * queues_per_port + queue`: each queue's series once it has
    /// held cells (a dense table: every sample looks at every queue of the sampled ports).
    pub(crate) queue_samples: Vec<Vec<Option<Box<SeriesState>>>>,
    /// With `hol_check`: this partition's chips' paused and congested queues at each
    /// sample (merged in time order at the end).
    pub(crate) snapshots: QueueSnapshots,
    /// The next sample to take, and the one taken before it.
    pub(crate) next_sample: Time,
    pub(crate) last_sample: Time,
    pub(crate) events: u64,
    pub(crate) last_at: Time,
    pub(crate) error: Option<(Time, u32, String)>,
    pub(crate) scratch: Vec<u8>,
    /// Lockstep mode: every cycle of its chips visited between events.
    pub(crate) lockstep: Option<Lockstep>,
}

impl Part {
    /// The chip `c` (this partition's).
    #[inline]
    pub(crate) fn chip(&self, c: usize) -> &Chip {
        self.chips[c]
            .as_ref()
            .expect("a partition runs only its own chips' events")
    }

    /// Schedule `ev` (`ChipRx` or `HostRx` of `frame`) for node's partition `part`: here,
    /// or in the mail to it (the frame's bytes copied, its buffer freed here).
    fn deliver(&mut self, part: usize, at: Time, ev: Ev, frame: u32) {
        let key = self.q.next_key();
        if part == self.index {
            return self.q.queue.at_keyed(at, key, ev);
        }
        self.mail[part].push((at, key, ev), &self.pool.bufs[frame as usize]);
        self.pool.release(frame);
    }

    /// Take the frames other partitions sent: each into a buffer of this one's pool.
    pub(crate) fn receive(&mut self, m: &mut Mail) {
        for (&(at, key, mut ev), bytes) in m.iter() {
            let i = self.pool.alloc();
            self.pool.bufs[i as usize].extend_from_slice(bytes);
            match &mut ev {
                Ev::ChipRx { frame, .. } | Ev::HostRx { frame, .. } => *frame = i,
                _ => unreachable!("only frames cross partitions"),
            }
            self.q.queue.at_keyed(at, key, ev);
        }
        m.clear();
    }

    /// Swap its mail for partition `dst` into `into` (emptied there by the receiver).
    pub(crate) fn post(&mut self, dst: usize, into: &mut Mail) {
        debug_assert!(into.is_empty());
        std::mem::swap(&mut self.mail[dst], into);
    }

    /// Where it stands (for the decision on the next window).
    pub(crate) fn status(&self) -> Status {
        Status {
            next: self.q.queue.peek_time(),
            last_at: self.last_at,
            events: self.events,
            started: self.started,
            completed: self.completed,
            reads_pending: self.own_chips.iter().any(|&c| self.chip(c).reads_pending()),
            error: self.error.clone(),
            observations: !self.captured.is_empty()
                || self
                    .own_chips
                    .iter()
                    .any(|&c| self.chip(c).trace_filter().is_some()),
        }
    }

    /// Run its events before `until` (none after `stop_at`); an error stops it.
    pub(crate) fn run_window(&mut self, until: Time, stop_at: Option<Time>) {
        while let Some(t) = self.q.queue.peek_time() {
            if t >= until || stop_at.is_some_and(|s| t > s) {
                break;
            }
            self.sample_before(t);
            self.advance_lockstep(t);
            let (now, mut ev) = self.q.queue.pop().expect("peeked");
            self.q.now = now;
            self.last_at = now;
            self.events += 1;
            loop {
                if let Err(e) = self.handle(now, ev) {
                    self.error = Some((now, self.q.node, e));
                    return;
                }
                // A held event (due now) runs next if its number precedes every pending
                // event's: the queue would give it next, so running it at once changes nothing
                // but the queue's work. Otherwise it joins the queue.
                let Some((key, next)) = self.q.held.take() else {
                    break;
                };
                if !self.q.queue.precedes_all(now, key) {
                    self.q.queue.at_keyed(now, key, next);
                    break;
                }
                ev = next;
            }
        }
    }

    /// Lockstep mode: visit every cycle edge of its chips up to `t`.
    #[inline]
    pub(crate) fn advance_lockstep(&mut self, t: Time) {
        if let Some(l) = &mut self.lockstep {
            let (chips, own) = (&mut self.chips, &self.own_chips);
            l.advance_to(t, |i, cycle| {
                if let Some(c) = chips[own[i]].as_mut() {
                    c.tick(cycle)
                }
            });
        }
    }

    /// The node an event belongs to: the one whose count numbers what it schedules.
    #[inline]
    fn node_of(&self, ev: &Ev) -> u32 {
        match *ev {
            Ev::Chip { chip, .. } | Ev::ChipRx { chip, .. } => chip as u32,
            Ev::HostRx { host, .. }
            | Ev::HostTx { host }
            | Ev::FlowStart { host }
            | Ev::PullTick { host }
            | Ev::PauseEnd { host, .. } => self.sh.host_node(host as usize),
            Ev::FlowTimer { flow } | Ev::FlowWake { flow } => {
                self.sh.host_node(self.flows[flow as usize].spec.src)
            }
        }
    }

    fn handle(&mut self, now: Time, ev: Ev) -> Result<(), String> {
        self.q.node = self.node_of(&ev);
        match ev {
            Ev::Chip { chip, ev } => self.chip_event(now, chip as usize, ev)?,
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
                let mut q = self.q.chip(c);
                // The chip takes the frame's buffer; the pool gets the chip's, empty.
                let data = &mut self.pool.bufs[frame as usize];
                self.chips[c]
                    .as_mut()
                    .expect("a partition runs only its own chips' events")
                    .receive_owned(port, now, data, tag, &mut q)
                    .map_err(|e| format!("chip `{}`: {e}", self.sh.topo.spec.chips[c].name))?;
                self.pool.release(frame);
            }
            Ev::HostRx { host, frame } => {
                self.host_rx(now, host as usize, frame);
                self.pool.release(frame);
            }
            Ev::HostTx { host } => {
                self.hosts[host as usize].tx_scheduled = false;
                self.try_send(now, host as usize);
            }
            Ev::FlowStart { host } => {
                let h = host as usize;
                let sh = Arc::clone(&self.sh);
                let list = &sh.host_flows[h];
                while let Some(&f) = list.get(self.next_flow[h]) {
                    let fl = &mut self.flows[f as usize];
                    if fl.spec.start > now {
                        self.q.at(fl.spec.start, Ev::FlowStart { host });
                        break;
                    }
                    self.next_flow[h] += 1;
                    self.started += 1;
                    let carried = fl.spec.connection.and_then(|c| self.carried_on(c));
                    let fl = &mut self.flows[f as usize];
                    fl.sender = Some(fl.spec.transport.sender_carrying(
                        fl.shape,
                        now,
                        carried.as_ref(),
                    ));
                    if let Some(c) = fl.spec.connection {
                        self.connections.entry(c).or_default().push(f);
                    }
                    self.after_sender(now, f as usize);
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
                self.after_sender_from(now, f, true);
            }
            Ev::FlowWake { flow } => {
                let f = flow as usize;
                if self.flows[f].wake_at.is_some_and(|w| w <= now) {
                    self.flows[f].wake_at = None;
                }
                self.after_sender(now, f);
            }
            Ev::PullTick { host } => self.pull_tick(now, host as usize),
            Ev::PauseEnd { host, class } => {
                let h = &mut self.hosts[host as usize];
                let c = class as usize;
                if h.class_paused[c] && h.class_paused_until[c] <= now {
                    h.class_paused[c] = false;
                    let node = self.q.node;
                    let rec = super::nic::host_pause(now, node, &h.name, "pfc", c as u16, false);
                    self.pauses.push(rec);
                    self.kick(now, host as usize);
                }
            }
        }
        Ok(())
    }

    /// A chip's own event, then the pauses it logged and the frames it sent.
    fn chip_event(&mut self, now: Time, c: usize, ev: ChipEvent) -> Result<(), String> {
        let mut q = self.q.chip(c);
        let mut w = Outbox {
            pool: &mut self.pool,
            out: &mut self.outbox,
        };
        let chip = self.chips[c]
            .as_mut()
            .expect("a partition runs only its own chips' events");
        chip.handle(now, ev, &mut q, &mut w);
        let name = &self.sh.topo.spec.chips[c].name;
        // A refused control operation stops the run, as on the bench.
        if let (ChipEvent::Control { .. }, Some(f)) = (ev, chip.control_failures().first()) {
            return Err(format!(
                "chip `{name}`: {}",
                f.refusal(&self.sh.control_names[c][f.op])
            ));
        }
        // A control agent that failed stops the run, as a refused control operation does.
        if let (ChipEvent::Agent { .. }, Some(f)) = (ev, chip.agent_failures().first()) {
            return Err(format!("chip `{name}`: {f}"));
        }
        // The chip's transmit side paused or resumed by PFC frames it received.
        // And its queues paused or resumed by its program (AFC).
        for r in chip.drain_pause_log() {
            let kind = match r.direction {
                PauseDirection::Received => "pfc",
                PauseDirection::Afc => "queue",
                PauseDirection::Sent => continue,
            };
            let rec = PauseEvent {
                at_ps: r.at.ps(),
                node: name.clone(),
                port: r.port,
                kind: kind.into(),
                class: r.priority as u16,
                paused: r.paused,
            };
            self.pauses.push((c as u32, rec));
        }
        let drops = &mut self.flow_drops;
        chip.take_watched_drops(|flow| *drops.entry(flow).or_default() += 1);
        while let Some((port, start, frame)) = self.outbox.pop() {
            self.chip_tx(c, port, start, frame);
        }
        Ok(())
    }

    /// What persistent connection `c` carries to its next transfer: the state its latest
    /// completed transfer left, if any.
    fn carried_on(&self, c: u32) -> Option<Carried> {
        let sent = self.connections.get(&c)?;
        sent.iter().rev().find_map(|&g| {
            let s = self.flows[g as usize].sender.as_ref()?;
            if s.done() {
                s.carried()
            } else {
                None
            }
        })
    }

    /// The host that sent `frame`, if it is a host's data packet: its flow's source, by the
    /// flow id (a header a switch returned to its sender has its addresses swapped but the
    /// same flow), or by its IPv4 source if the id names no flow.
    fn data_source(&self, frame: &[u8]) -> Option<usize> {
        let flow = packet::data_flow_id(frame)?;
        match self.sh.flow_homes.src.get(flow as usize) {
            Some(&src) => Some(src as usize),
            None => packet::ipv4_src(frame).and_then(|ip| self.sh.ip_to_host.get(&ip).copied()),
        }
    }

    /// A chip's port sent `frame` starting at `start`.
    fn chip_tx(&mut self, c: usize, port: u16, start: Time, frame: u32) {
        let sh = &*self.sh;
        let data = &self.pool.bufs[frame as usize];
        if let Some(&i) = sh.chip_captures[c].get(&port) {
            self.captured.push((i, start), data);
        }
        let src = self.data_source(data);
        if let Some(h) = src {
            self.src[h].chip_out += 1;
        }
        let Some(&l) = sh.topo.chip_ports[c].get(&port) else {
            self.unconnected[c] += 1;
            if let Some(h) = src {
                self.src[h].unconnected += 1;
            }
            self.pool.release(frame);
            return;
        };
        let link = sh.topo.links[l];
        let (part, at, ev) = match sh.topo.peer(l, End::Chip(c, port)) {
            End::Chip(c2, p2) => {
                let ev = Ev::ChipRx {
                    chip: c2 as u16,
                    port: p2,
                    frame,
                };
                (sh.chip_part[c2], start + Time(link.delay_ps), ev)
            }
            End::Host(h) => {
                let at = start + Time(link.delay_ps) + frame_time(data.len(), link.gbps);
                let ev = Ev::HostRx {
                    host: h as u32,
                    frame,
                };
                (sh.host_part[h], at, ev)
            }
        };
        self.deliver(part, at, ev, frame)
    }

    /// The frame host `h` puts on its wire at `now` reaches its chip (the same partition).
    pub(crate) fn host_frame_to_chip(&mut self, h: usize, at: Time, frame: u32) {
        let End::Chip(c, p) = self.hosts[h].peer else {
            unreachable!("hosts connect to chips (checked when the topology is resolved)")
        };
        let ev = Ev::ChipRx {
            chip: c as u16,
            port: p,
            frame,
        };
        self.deliver(self.sh.chip_part[c], at, ev, frame);
    }
}
