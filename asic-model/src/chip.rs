//! The clocked chip: MACs, pipes and the traffic manager wired together on the event kernel.
//!
//! The life of a packet (times in simulated picoseconds, cycles of the pipe clock):
//! 1. `receive`: the frame's first bit reaches the ingress MAC at `start`; the MAC has it
//!    all when its last FCS bit is in, `start + frame_time`: event [`ChipEvent::Arrive`].
//! 2. `Arrive`: the packet takes the pipe's next free issue slot, at the first cycle edge at
//!    or after its arrival (one packet per cycle per pipe). It leaves the ingress deparser
//!    `latency` cycles later: event [`ChipEvent::IngressDone`].
//! 3. `IngressDone`: the ingress program runs (see `pipelines::pipe` for why that is exact),
//!    and the packet is enqueued in the TM or dropped with a reason.
//! 4. [`ChipEvent::Dequeue`]: the TM's scheduler for the egress port takes the next packet
//!    just early enough that, after the egress pipe's latency, it reaches the MAC as the
//!    previous frame (and its inter-frame gap) ends: it paces each port at line rate from the
//!    lengths it stores. The packet takes the egress pipe's next issue slot.
//! 5. [`ChipEvent::EgressDone`]: the egress program runs, then the MAC sends the frame as
//!    soon as the port is free; the frame is handed to the [`Wire`] with its start time.

use crate::kernel::Schedule;
use crate::mac::{frame_time, slot_time};
use crate::profile::ChipProfile;
use pipelines::control::{ControlError, ResolvedControlOp};
use pipelines::entries::ResolvedEntry;
use pipelines::pipe::{gress_seed, GressInputs, LoadError, LoadedGress};
use pipelines::program::{Gress, Program};
use pipelines::table::TableError;
use pipelines::time::{Clock, Time};
use std::fmt;
use tm::config::TmConfig;
use tm::{Dequeued, EnqueueRequest, Refusal, TrafficManager};

/// Events of one chip.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChipEvent {
    /// A frame has been received whole by its ingress MAC.
    Arrive {
        /// Packet handle.
        pkt: u32,
    },
    /// A packet leaves the ingress deparser.
    IngressDone {
        /// Packet handle.
        pkt: u32,
        /// The cycle it was issued into the ingress pipe.
        issue: u64,
    },
    /// The TM scheduler serves an egress port.
    Dequeue {
        /// The port.
        port: u16,
    },
    /// A scheduled control-plane operation takes effect (see [`Chip::schedule_control`]).
    Control {
        /// Index into the chip's scheduled operations.
        op: u32,
    },
    /// A packet leaves the egress deparser.
    EgressDone {
        /// Packet handle.
        pkt: u32,
        /// The cycle it was issued into the egress pipe.
        issue: u64,
    },
}

/// Why a packet was dropped. Every packet that enters the chip is either transmitted or
/// counted under one of these.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DropReason {
    /// The ingress parser rejected the packet or ran out of bytes.
    IngressParserError,
    /// The ingress program set `drop_ctl`.
    IngressProgramDrop,
    /// The ingress program set no egress port.
    NoEgressPort,
    /// The egress port the program chose does not exist on this chip.
    InvalidEgressPort,
    /// The traffic manager refused the packet (admission), for this reason.
    Tm(Refusal),
    /// The egress parser rejected the packet or ran out of bytes.
    EgressParserError,
    /// The egress program set `drop_ctl`.
    EgressProgramDrop,
}

/// Reasons that are the chip's own (not the TM's), in report order.
const CHIP_REASONS: [DropReason; 6] = [
    DropReason::IngressParserError,
    DropReason::IngressProgramDrop,
    DropReason::NoEgressPort,
    DropReason::InvalidEgressPort,
    DropReason::EgressParserError,
    DropReason::EgressProgramDrop,
];

/// Number of distinct reasons.
const REASONS: usize = CHIP_REASONS.len() + Refusal::ALL.len();

impl DropReason {
    /// Every reason, in report order: the chip's, then the TM's.
    pub const ALL: [DropReason; REASONS] = {
        let mut all = [DropReason::IngressParserError; REASONS];
        let mut i = 0;
        while i < CHIP_REASONS.len() {
            all[i] = CHIP_REASONS[i];
            i += 1;
        }
        let mut j = 0;
        while j < Refusal::ALL.len() {
            all[i + j] = DropReason::Tm(Refusal::ALL[j]);
            j += 1;
        }
        all
    };

    /// Dense index for counters.
    fn index(self) -> usize {
        match self {
            DropReason::Tm(r) => CHIP_REASONS.len() + r as usize,
            other => CHIP_REASONS
                .iter()
                .position(|c| *c == other)
                .expect("a chip reason"),
        }
    }

    /// A short name for reports.
    pub fn name(self) -> &'static str {
        match self {
            DropReason::IngressParserError => "ingress_parser_error",
            DropReason::IngressProgramDrop => "ingress_program_drop",
            DropReason::NoEgressPort => "no_egress_port",
            DropReason::InvalidEgressPort => "invalid_egress_port",
            DropReason::Tm(r) => r.name(),
            DropReason::EgressParserError => "egress_parser_error",
            DropReason::EgressProgramDrop => "egress_program_drop",
        }
    }
}

/// The operator's configuration of a chip (the profile holds what the silicon is).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ChipConfig {
    /// Traffic-manager configuration: admission, α per class, schedulers, PFC, ECN.
    pub tm: TmConfig,
    /// Seed of every random source on the chip (per-gress random externs, RED marking).
    pub seed: u64,
}

/// Where transmitted frames go.
pub trait Wire {
    /// `frame` (no FCS) starts leaving `port` at `start`.
    fn transmit(&mut self, port: u16, start: Time, frame: &[u8]);
}

/// Per-port traffic counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PortCounters {
    /// Frames received.
    pub rx_packets: u64,
    /// Bytes received (no FCS).
    pub rx_bytes: u64,
    /// Frames transmitted.
    pub tx_packets: u64,
    /// Bytes transmitted (no FCS).
    pub tx_bytes: u64,
    /// Drops of packets that arrived on this port.
    pub drops: u64,
    /// Start of the first frame transmitted.
    pub first_tx: Option<Time>,
    /// Start of the last frame transmitted.
    pub last_tx: Option<Time>,
}

/// A chip-level error: bad input to the chip, named.
#[derive(Debug)]
pub enum ChipError {
    /// The program does not load on this chip.
    Load(LoadError),
    /// A table entry was refused.
    Table(TableError),
    /// The TM configuration does not fit the chip (names the field).
    TmConfig(tm::config::ConfigError),
    /// A control-plane operation was refused (names the object).
    Control(ControlError),
    /// No such port.
    NoSuchPort {
        /// The port asked for.
        port: u16,
        /// Ports the chip has.
        ports: u16,
    },
    /// A frame would start before the previous one on the same port has finished.
    PortBusy {
        /// The port.
        port: u16,
        /// When the frame would start.
        start: Time,
        /// When the port is free.
        free_at: Time,
    },
}

impl fmt::Display for ChipError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ChipError::Load(e) => write!(f, "program does not load: {e}"),
            ChipError::Table(e) => e.fmt(f),
            ChipError::Control(e) => e.fmt(f),
            ChipError::TmConfig(e) => e.fmt(f),
            ChipError::NoSuchPort { port, ports } => {
                write!(f, "port {port} does not exist (the chip has ports 0 to {})", ports - 1)
            }
            ChipError::PortBusy { port, start, free_at } => write!(
                f,
                "a frame on port {port} would start at {start} but the previous one occupies the wire until {free_at}"
            ),
        }
    }
}

impl std::error::Error for ChipError {}

/// A packet inside the chip.
#[derive(Debug, Default)]
struct Packet {
    data: Vec<u8>,
    ingress_port: u16,
    rx_start: Time,
    egress_port: u16,
    /// What the TM said when the packet left it (queue, depths, enqueue time, ECN).
    deq: Option<Dequeued>,
    deq_time: Time,
}

/// Packet storage that reuses its buffers, so the steady state allocates nothing.
#[derive(Default)]
struct PacketStore {
    slots: Vec<Packet>,
    free: Vec<u32>,
}

impl PacketStore {
    fn alloc(&mut self) -> u32 {
        match self.free.pop() {
            Some(h) => h,
            None => {
                self.slots.push(Packet::default());
                (self.slots.len() - 1) as u32
            }
        }
    }

    fn release(&mut self, h: u32) {
        self.slots[h as usize].data.clear();
        self.free.push(h);
    }

    fn live(&self) -> usize {
        self.slots.len() - self.free.len()
    }
}

struct Port {
    gbps: u32,
    pipe: u16,
    rx_free_at: Time,
    tx_free_at: Time,
    /// When the wire will be free after the packets the TM has already served, as the TM
    /// predicts it from their stored lengths.
    paced_wire_free: Time,
    /// When the TM may next serve this port (pacing at line rate).
    next_dequeue_at: Time,
    dequeue_pending: bool,
    counters: PortCounters,
}

struct Pipe {
    ingress: LoadedGress,
    egress: LoadedGress,
    ingress_next_issue: u64,
    egress_next_issue: u64,
}

/// One modelled chip running one program.
pub struct Chip {
    profile: ChipProfile,
    clock: Clock,
    ports: Vec<Port>,
    pipes: Vec<Pipe>,
    tm: TrafficManager,
    packets: PacketStore,
    drops: [u64; REASONS],
    ingress_latency: u64,
    egress_latency: u64,
    /// Scheduled control-plane operations, taken when they run.
    scheduled: Vec<Option<ResolvedControlOp>>,
    /// Scheduled operations that were refused when they ran: (when, what).
    control_failures: Vec<(Time, String)>,
}

impl Chip {
    /// Load `program` on every pipe of a chip built to `profile`, with the default
    /// configuration.
    pub fn new(profile: ChipProfile, program: &Program) -> Result<Chip, ChipError> {
        Chip::with_config(profile, program, ChipConfig::default())
    }

    /// Load `program` on every pipe of a chip built to `profile`, configured by `config`.
    pub fn with_config(
        profile: ChipProfile,
        program: &Program,
        config: ChipConfig,
    ) -> Result<Chip, ChipError> {
        let spec = &profile.pipe;
        let mut pipes = Vec::new();
        let clock = Clock::new(profile.clock_hz);
        for pipe in 0..profile.pipes {
            let load = |g: Gress, p| {
                LoadedGress::load(g, p, spec, clock, gress_seed(config.seed, pipe, g))
            };
            pipes.push(Pipe {
                ingress: load(Gress::Ingress, program.ingress.clone()).map_err(ChipError::Load)?,
                egress: load(Gress::Egress, program.egress.clone()).map_err(ChipError::Load)?,
                ingress_next_issue: 0,
                egress_next_issue: 0,
            });
        }
        let ingress_latency = pipes[0].ingress.timing().total() as u64;
        let egress_latency = pipes[0].egress.timing().total() as u64;
        let mut ports = Vec::new();
        for pipe in 0..profile.pipes {
            for g in &profile.ports_per_pipe {
                for _ in 0..g.count {
                    ports.push(Port {
                        gbps: g.speed_gbps,
                        pipe,
                        rx_free_at: Time::ZERO,
                        tx_free_at: Time::ZERO,
                        paced_wire_free: Time::ZERO,
                        next_dequeue_at: Time::ZERO,
                        dequeue_pending: false,
                        counters: PortCounters::default(),
                    });
                }
            }
        }
        Ok(Chip {
            clock: Clock::new(profile.clock_hz),
            tm: TrafficManager::new(
                profile.tm.clone(),
                TmConfig {
                    seed: config.seed,
                    ..config.tm
                },
                ports.len(),
            )
            .map_err(ChipError::TmConfig)?,
            ports,
            pipes,
            packets: PacketStore::default(),
            drops: [0; REASONS],
            ingress_latency,
            egress_latency,
            scheduled: Vec::new(),
            control_failures: Vec::new(),
            profile,
        })
    }

    /// The profile the chip was built from.
    pub fn profile(&self) -> &ChipProfile {
        &self.profile
    }

    /// The pipe clock.
    pub fn clock(&self) -> Clock {
        self.clock
    }

    /// Number of front-panel ports.
    pub fn port_count(&self) -> u16 {
        self.ports.len() as u16
    }

    /// Line rate of a port in Gb/s.
    pub fn port_gbps(&self, port: u16) -> Option<u32> {
        self.ports.get(port as usize).map(|p| p.gbps)
    }

    /// Cycles a packet spends in the ingress pipe.
    pub fn ingress_latency_cycles(&self) -> u64 {
        self.ingress_latency
    }

    /// Cycles a packet spends in the egress pipe.
    pub fn egress_latency_cycles(&self) -> u64 {
        self.egress_latency
    }

    /// Every pipe's loaded gress (for the control plane, which writes all pipes alike).
    pub(crate) fn gresses_mut(&mut self, gress: Gress) -> impl Iterator<Item = &mut LoadedGress> {
        self.pipes.iter_mut().map(move |p| match gress {
            Gress::Ingress => &mut p.ingress,
            Gress::Egress => &mut p.egress,
        })
    }

    /// One pipe's loaded gress (for reading state, which differs per pipe).
    pub fn gress(&self, pipe: u16, gress: Gress) -> Option<&LoadedGress> {
        self.pipes.get(pipe as usize).map(|p| match gress {
            Gress::Ingress => &p.ingress,
            Gress::Egress => &p.egress,
        })
    }

    /// Install a table entry in every pipe (the control plane's symmetric mode).
    pub fn add_entry(&mut self, e: &ResolvedEntry) -> Result<(), ChipError> {
        for p in &mut self.pipes {
            let g = match e.gress {
                Gress::Ingress => &mut p.ingress,
                Gress::Egress => &mut p.egress,
            };
            g.tables_mut()[e.table as usize]
                .insert(e.entry.clone())
                .map_err(ChipError::Table)?;
        }
        Ok(())
    }

    /// Schedule a control-plane operation for time `at`. It affects exactly the packets that
    /// reach the stage holding its table, register or meter at or after `at`: because a
    /// gress runs when the packet leaves it, the operation is applied `latency − (cycles
    /// before that stage)` cycles after `at`, before the packets leaving then. Schedule
    /// operations before the traffic that should see them (same-time events run in
    /// scheduling order).
    pub fn schedule_control(
        &mut self,
        at: Time,
        op: ResolvedControlOp,
        q: &mut impl Schedule<ChipEvent>,
    ) {
        let gress = op.gress();
        let g = &self.pipes[0];
        let (prog, timing) = match gress {
            Gress::Ingress => (g.ingress.program(), g.ingress.timing()),
            Gress::Egress => (g.egress.program(), g.egress.timing()),
        };
        let before_stage = timing.stage_entry(op.stage(prog) as usize) as u64;
        let effective = self.clock.cycle_at_or_after(at) + timing.total() as u64 - before_stage;
        self.scheduled.push(Some(op));
        q.at(
            self.clock.time_of(effective),
            ChipEvent::Control {
                op: (self.scheduled.len() - 1) as u32,
            },
        );
    }

    /// Scheduled operations that were refused when they ran: (when, why).
    pub fn control_failures(&self) -> &[(Time, String)] {
        &self.control_failures
    }

    /// Counters of a port.
    pub fn port_counters(&self, port: u16) -> &PortCounters {
        &self.ports[port as usize].counters
    }

    /// Drops by reason.
    pub fn drops(&self, reason: DropReason) -> u64 {
        self.drops[reason.index()]
    }

    /// The traffic manager (for depth and occupancy readings).
    pub fn tm(&self) -> &TrafficManager {
        &self.tm
    }

    /// Packets inside the chip (in a pipe, queued, or waiting for the MAC).
    pub fn packets_inside(&self) -> usize {
        self.packets.live()
    }

    /// A frame starts arriving on `port` at `start`. The earliest a port can take the next
    /// frame is when this one and its inter-frame gap have passed; returns that time.
    pub fn receive(
        &mut self,
        port: u16,
        start: Time,
        frame: &[u8],
        q: &mut impl Schedule<ChipEvent>,
    ) -> Result<Time, ChipError> {
        let ports = self.port_count();
        let p = self
            .ports
            .get_mut(port as usize)
            .ok_or(ChipError::NoSuchPort { port, ports })?;
        if start < p.rx_free_at {
            return Err(ChipError::PortBusy {
                port,
                start,
                free_at: p.rx_free_at,
            });
        }
        p.rx_free_at = start + slot_time(frame.len(), p.gbps);
        p.counters.rx_packets += 1;
        p.counters.rx_bytes += frame.len() as u64;
        let arrive = start + frame_time(frame.len(), p.gbps);
        let free_at = p.rx_free_at;
        let h = self.packets.alloc();
        let pkt = &mut self.packets.slots[h as usize];
        pkt.data.extend_from_slice(frame);
        pkt.ingress_port = port;
        pkt.rx_start = start;
        q.at(arrive, ChipEvent::Arrive { pkt: h });
        Ok(free_at)
    }

    fn drop_packet(&mut self, h: u32, reason: DropReason) {
        self.drops[reason.index()] += 1;
        let port = self.packets.slots[h as usize].ingress_port;
        self.ports[port as usize].counters.drops += 1;
        self.packets.release(h);
    }

    /// Run one event.
    pub fn handle(
        &mut self,
        now: Time,
        ev: ChipEvent,
        q: &mut impl Schedule<ChipEvent>,
        wire: &mut impl Wire,
    ) {
        match ev {
            ChipEvent::Arrive { pkt } => {
                let port = self.packets.slots[pkt as usize].ingress_port;
                let pipe = &mut self.pipes[self.ports[port as usize].pipe as usize];
                let issue = self
                    .clock
                    .cycle_at_or_after(now)
                    .max(pipe.ingress_next_issue);
                pipe.ingress_next_issue = issue + 1;
                let done = self.clock.time_of(issue + self.ingress_latency);
                q.at(done, ChipEvent::IngressDone { pkt, issue });
            }
            ChipEvent::IngressDone { pkt, issue } => self.ingress_done(now, pkt, issue, q),
            ChipEvent::Dequeue { port } => self.dequeue(now, port, q),
            ChipEvent::Control { op } => {
                let op = self.scheduled[op as usize]
                    .take()
                    .expect("each operation runs once");
                if let Err(e) = self.apply(&op) {
                    self.control_failures.push((now, e.to_string()));
                }
            }
            ChipEvent::EgressDone { pkt, issue } => self.egress_done(now, pkt, issue, wire),
        }
    }

    fn ingress_done(&mut self, now: Time, h: u32, issue: u64, q: &mut impl Schedule<ChipEvent>) {
        let slot = &mut self.packets.slots[h as usize];
        let inputs = GressInputs {
            ingress_port: slot.ingress_port,
            ingress_mac_ns: slot.rx_start.ns(),
            issue_cycle: issue,
            ..GressInputs::default()
        };
        let pipe = self.ports[slot.ingress_port as usize].pipe as usize;
        let out = match self.pipes[pipe].ingress.process(&mut slot.data, &inputs) {
            Ok(o) => o,
            Err(_) => return self.drop_packet(h, DropReason::IngressParserError),
        };
        if out.drop_ctl != 0 {
            return self.drop_packet(h, DropReason::IngressProgramDrop);
        }
        let Some(port) = out.ucast_egress_port else {
            return self.drop_packet(h, DropReason::NoEgressPort);
        };
        if port as usize >= self.ports.len() {
            return self.drop_packet(h, DropReason::InvalidEgressPort);
        }
        let request = EnqueueRequest {
            port,
            queue: out.queue,
            ingress_port: slot.ingress_port,
            priority: out.requests.ingress_cos,
            class: None,
            bytes: slot.data.len() as u32,
            handle: h,
            now_ps: now.ps(),
        };
        match self.tm.enqueue(request) {
            Err(r) => self.drop_packet(h, DropReason::Tm(r)),
            Ok(_) => {
                slot.egress_port = port;
                let p = &mut self.ports[port as usize];
                if !p.dequeue_pending {
                    p.dequeue_pending = true;
                    q.at(now.max(p.next_dequeue_at), ChipEvent::Dequeue { port });
                }
            }
        }
    }

    fn dequeue(&mut self, now: Time, port: u16, q: &mut impl Schedule<ChipEvent>) {
        let p = &mut self.ports[port as usize];
        p.dequeue_pending = false;
        let Some(d) = self.tm.dequeue(port, now.ps()) else {
            // Packets may wait in paused queues: come back when a pause expires. A resume
            // (by frame or request) serves the port itself.
            if let Some(t) = self.tm.next_eligible_time(port, now.ps()) {
                p.dequeue_pending = true;
                q.at(Time(t).max(now), ChipEvent::Dequeue { port });
            }
            return;
        };
        let slot = &mut self.packets.slots[d.handle as usize];
        slot.deq = Some(d);
        slot.deq_time = now;
        let pipe = &mut self.pipes[p.pipe as usize];
        let issue = self
            .clock
            .cycle_at_or_after(now)
            .max(pipe.egress_next_issue);
        pipe.egress_next_issue = issue + 1;
        let done = self.clock.time_of(issue + self.egress_latency);
        q.at(
            done,
            ChipEvent::EgressDone {
                pkt: d.handle,
                issue,
            },
        );
        // Pace the port: predict from the stored length when this frame and its gap will
        // have left the wire, and serve the port next so that the next packet leaves the
        // egress pipe at the last cycle edge before then; the MAC holds it until the wire is
        // free, so a backlogged port sends back to back at exactly line rate.
        let start = done.max(p.paced_wire_free);
        p.paced_wire_free = start + slot_time(d.bytes as usize, p.gbps);
        let target_exit = self.clock.cycle_at_or_before(p.paced_wire_free);
        let next = self
            .clock
            .time_of(target_exit.saturating_sub(self.egress_latency))
            .max(now);
        p.next_dequeue_at = next;
        if self.tm.has_packets(port) {
            p.dequeue_pending = true;
            q.at(next, ChipEvent::Dequeue { port });
        }
    }

    fn egress_done(&mut self, now: Time, h: u32, issue: u64, wire: &mut impl Wire) {
        let slot = &mut self.packets.slots[h as usize];
        let port = slot.egress_port;
        let d = slot.deq.take().expect("a packet in egress has left the TM");
        let inputs = GressInputs {
            ingress_port: slot.ingress_port,
            ingress_mac_ns: slot.rx_start.ns(),
            issue_cycle: issue,
            egress_port: port,
            egress_queue: d.queue,
            enq_depth_cells: d.enq_depth_cells,
            deq_depth_cells: d.deq_depth_cells,
            enq_depth_pkts: d.enq_depth_pkts,
            deq_depth_pkts: d.deq_depth_pkts,
            enq_congest_stat: d.ecn_mark as u8,
            replication_id: 0,
            queue_delay_ns: (slot.deq_time - Time(d.enq_time_ps)).ns(),
        };
        let pipe = self.ports[port as usize].pipe as usize;
        let out = match self.pipes[pipe].egress.process(&mut slot.data, &inputs) {
            Ok(o) => o,
            Err(_) => return self.drop_packet(h, DropReason::EgressParserError),
        };
        if out.drop_ctl != 0 {
            return self.drop_packet(h, DropReason::EgressProgramDrop);
        }
        let p = &mut self.ports[port as usize];
        let start = now.max(p.tx_free_at);
        p.tx_free_at = start + slot_time(slot.data.len(), p.gbps);
        let c = &mut p.counters;
        c.tx_packets += 1;
        c.tx_bytes += slot.data.len() as u64;
        c.first_tx.get_or_insert(start);
        c.last_tx = Some(start);
        wire.transmit(port, start, &slot.data);
        self.packets.release(h);
    }
}
