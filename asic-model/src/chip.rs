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
//!
//! # PFC (IEEE 802.1Qbb) in the MACs
//!
//! The TM counts every buffered packet against its (ingress port, priority) and raises
//! [`tm::pfc::PfcEvent`]s when a lossless one crosses XOFF or falls below XON (see
//! [`tm::pfc`]). The chip drains them after every TM enqueue, dequeue and received pause, and
//! turns each into a frame ([`crate::pfc_frame`], source MAC [`crate::pfc_frame::port_mac`]):
//! - **Send.** XOFF: a PFC frame for the priority with `TmConfig::pfc.quanta`, out of the
//!   ingress port (towards the upstream that sends the paused traffic). XON: one frame with
//!   quanta 0. A MAC control frame goes before queued data: it starts at `max(now, end of the
//!   frame the MAC already has on or for the wire)` (`tx_free_at`), ahead of any packet still
//!   in the TM or the egress pipe; the TM's pacing prediction (`paced_wire_free`) moves by the
//!   frame's slot so the packets behind it are served that much later. Sent frames go to the
//!   [`Wire`] like any frame and are counted in [`PortCounters::pfc_xoff_tx`] /
//!   `pfc_refresh_tx` / `pfc_xon_tx` (not in `tx_packets`).
//! - **Refresh.** While the TM keeps the (port, priority) in XOFF, the frame is sent again
//!   every [`tm::pfc::refresh_interval_ps`]`(quanta, port rate)` after the XOFF
//!   ([`ChipEvent::PfcRefresh`], always strictly later than now); XON stops it. A quanta of 0
//!   in the configuration sends the XOFF frame (which then means "resume") and never refreshes.
//! - **Receive.** A frame with EtherType 0x8808 is a MAC control frame: the MAC consumes it
//!   (it never enters a pipe, is never a drop, and is not in `rx_packets`). Opcode 0x0101
//!   (PFC) is counted in [`PortCounters::pfc_rx`] and acts when its last bit is in
//!   ([`ChipEvent::MacControl`] at `rx_end`): per enabled class `c` with time `q`, `q > 0`
//!   pauses the port's queues of priority `c` until `rx_end + quanta_ps(q, rate)` (a later
//!   frame restarts the timer), `q = 0` resumes them; the port's scheduler is then served
//!   again at the first time a packet is eligible. Packets the TM handed out before `rx_end`
//!   (in the egress pipe or held by the MAC) still leave: the stop takes at most the egress
//!   pipe latency plus one frame, within the profile's `pause_reaction_quanta`. Every other
//!   opcode, including 802.3x PAUSE (0x0001), is consumed and counted in
//!   [`PortCounters::mac_control_other_rx`] without effect: 802.1Qbb makes PFC and PAUSE
//!   mutually exclusive on a link, and this MAC speaks PFC only.
//! - **Log.** Pause state changes, sent and received, are in [`Chip::pause_log`] /
//!   [`Chip::drain_pause_log`] ([`PauseRecord`]).
//!
//! Setting up a lossless class: the program puts the packet in a queue (`ig_tm_md.qid`) and
//! gives it a priority (`ig_tm_md.ingress_cos`, the TM's [`EnqueueRequest::priority`]); the
//! TM configuration lists the class in `pfc.groups` as `(ports, priority, xoff_cells,
//! hysteresis_cells, headroom_cells)` and maps queues to the priority whose received pause
//! frames stop them with `queues[q].pfc_priority` (default: `q mod pfc_levels`). The
//! priority on the ingress side (what is counted and paused upstream) and the queue's
//! priority on the egress side (what a received frame stops) should agree end to end.

use crate::kernel::Schedule;
use crate::mac::{frame_time, slot_time};
use crate::pfc_frame::{self, ClassTimes, PFC_OPCODE};
use crate::profile::ChipProfile;
use pipelines::control::{ControlError, ResolvedControlOp};
use pipelines::entries::ResolvedEntry;
use pipelines::pipe::{gress_seed, GressInputs, LoadError, LoadedGress};
use pipelines::program::{Gress, Program};
use pipelines::table::TableError;
use pipelines::time::{Clock, Time};
use std::collections::VecDeque;
use std::fmt;
use tm::config::TmConfig;
use tm::pfc::{quanta_ps, refresh_interval_ps, PfcEvent};
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
        /// Which scheduling of the port this is (a later one supersedes it).
        seq: u32,
    },
    /// A MAC control frame has been received whole (its last bit is in).
    MacControl {
        /// The port.
        port: u16,
    },
    /// Re-send the PFC pause for (port, priority) if the TM still asserts XOFF.
    PfcRefresh {
        /// The port the pause frames go out of (the paused traffic's ingress port).
        port: u16,
        /// The priority.
        priority: u8,
        /// Which XOFF episode the timer belongs to (a stale timer does nothing).
        epoch: u32,
    },
    /// A pause received on a port may have run out (for the pause log).
    PauseEnd {
        /// The port.
        port: u16,
        /// The priority.
        priority: u8,
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

/// Per-port traffic counters. Packet and byte counts are of data frames (the ones that go
/// through the pipes); MAC control frames, which the MAC makes and consumes, are counted
/// apart.
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
    /// PFC frames sent when the priority entered XOFF, per priority.
    pub pfc_xoff_tx: [u64; 8],
    /// PFC frames re-sent while the priority stayed in XOFF, per priority.
    pub pfc_refresh_tx: [u64; 8],
    /// PFC frames with quanta 0 sent when the priority fell below XON, per priority.
    pub pfc_xon_tx: [u64; 8],
    /// PFC frames received (consumed by the MAC).
    pub pfc_rx: u64,
    /// Other MAC control frames received (802.3x PAUSE, unknown opcodes, PFC frames too
    /// short to decode): consumed by the MAC without effect.
    pub mac_control_other_rx: u64,
    /// Drops of packets that arrived on this port.
    pub drops: u64,
    /// Start of the first frame transmitted.
    pub first_tx: Option<Time>,
    /// Start of the last frame transmitted.
    pub last_tx: Option<Time>,
}

impl PortCounters {
    /// PFC frames sent on the port (every priority, XOFF, refresh and XON).
    pub fn pfc_tx(&self) -> u64 {
        (0..8)
            .map(|p| self.pfc_xoff_tx[p] + self.pfc_refresh_tx[p] + self.pfc_xon_tx[p])
            .sum()
    }
}

/// Which side of a link a [`PauseRecord`] is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PauseDirection {
    /// The chip sent a PFC frame out of the port: it asks its link partner to pause
    /// (XOFF) or resume (XON). Refreshes are not state changes and are not logged.
    Sent,
    /// The chip's own transmission of the priority on the port was paused (a frame with
    /// quanta > 0 while not paused) or resumed (quanta 0, or the pause ran out).
    Received,
}

/// A pause state change of one (port, priority).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PauseRecord {
    /// Sent: when the frame's first bit leaves. Received: when the pause took effect (the
    /// frame's last bit in) or ended (quanta 0 received, or the time ran out).
    pub at: Time,
    /// The port.
    pub port: u16,
    /// The priority.
    pub priority: u8,
    /// Paused (true) or resumed (false).
    pub paused: bool,
    /// Sent or received.
    pub direction: PauseDirection,
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
    /// When the pending `Dequeue` runs.
    dequeue_at: Time,
    /// The pending `Dequeue`'s sequence number; events with another are stale.
    dequeue_seq: u32,
    /// Per priority: the epoch of the XOFF being refreshed (`None`: not in XOFF).
    pfc_refresh: [Option<u32>; 8],
    /// Last XOFF epoch given out on this port.
    pfc_epoch: u32,
    /// Per priority: until when received pause frames stop our transmission (`None`: not
    /// paused), for the pause log.
    rx_paused_until: [Option<Time>; 8],
    /// Decoded PFC frames whose last bit has not arrived yet, in order.
    ctrl_rx: VecDeque<ClassTimes>,
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
    /// PFC events taken from the TM, reused.
    pfc_events: Vec<PfcEvent>,
    /// The MAC control frame being built, reused.
    ctrl_frame: Vec<u8>,
    /// Pause state changes.
    pause_log: Vec<PauseRecord>,
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
                        dequeue_at: Time::ZERO,
                        dequeue_seq: 0,
                        pfc_refresh: [None; 8],
                        pfc_epoch: 0,
                        rx_paused_until: [None; 8],
                        ctrl_rx: VecDeque::new(),
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
            pfc_events: Vec::new(),
            ctrl_frame: Vec::with_capacity(pfc_frame::PFC_FRAME_LEN),
            pause_log: Vec::new(),
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

    /// Pause state changes recorded since the last [`Self::drain_pause_log`], in the order
    /// they happened (see [`PauseRecord`] for the times).
    pub fn pause_log(&self) -> &[PauseRecord] {
        &self.pause_log
    }

    /// Take the pause state changes recorded so far.
    pub fn drain_pause_log(&mut self) -> std::vec::Drain<'_, PauseRecord> {
        self.pause_log.drain(..)
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
        if let Some(op) = pfc_frame::mac_control_opcode(frame) {
            // The MAC's own: it never reaches a pipe.
            match (op == PFC_OPCODE)
                .then(|| pfc_frame::decode(frame))
                .flatten()
            {
                Some(times) => {
                    p.counters.pfc_rx += 1;
                    p.ctrl_rx.push_back(times);
                    q.at(
                        start + frame_time(frame.len(), p.gbps),
                        ChipEvent::MacControl { port },
                    );
                }
                None => p.counters.mac_control_other_rx += 1,
            }
            return Ok(p.rx_free_at);
        }
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
            ChipEvent::IngressDone { pkt, issue } => {
                self.ingress_done(now, pkt, issue, q);
                self.send_pfc_events(now, q, wire);
            }
            ChipEvent::Dequeue { port, seq } => {
                let p = &self.ports[port as usize];
                if p.dequeue_pending && p.dequeue_seq == seq {
                    self.dequeue(now, port, q);
                    self.send_pfc_events(now, q, wire);
                }
            }
            ChipEvent::MacControl { port } => {
                self.mac_control(now, port, q);
                self.send_pfc_events(now, q, wire);
            }
            ChipEvent::PfcRefresh {
                port,
                priority,
                epoch,
            } => self.pfc_refresh(now, port, priority, epoch, q, wire),
            ChipEvent::PauseEnd { port, priority } => {
                let p = &mut self.ports[port as usize];
                if let Some(until) = p.rx_paused_until[priority as usize] {
                    if until <= now {
                        p.rx_paused_until[priority as usize] = None;
                        self.pause_log.push(PauseRecord {
                            at: until,
                            port,
                            priority,
                            paused: false,
                            direction: PauseDirection::Received,
                        });
                    }
                }
            }
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
                // Serve the port when pacing allows, unless a service is due by then (one
                // due later waits for a pause to end, and this packet may not be paused).
                let p = &self.ports[port as usize];
                let at = now.max(p.next_dequeue_at);
                if !(p.dequeue_pending && p.dequeue_at <= at) {
                    self.schedule_dequeue(port, at, q);
                }
            }
        }
    }

    /// Serve `port` at `at` (superseding a pending service).
    fn schedule_dequeue(&mut self, port: u16, at: Time, q: &mut impl Schedule<ChipEvent>) {
        let p = &mut self.ports[port as usize];
        p.dequeue_pending = true;
        p.dequeue_at = at;
        p.dequeue_seq = p.dequeue_seq.wrapping_add(1);
        q.at(
            at,
            ChipEvent::Dequeue {
                port,
                seq: p.dequeue_seq,
            },
        );
    }

    /// After a pause changed: serve `port` as soon as a packet may go and pacing allows,
    /// unless a service is already due by then.
    fn kick_dequeue(&mut self, now: Time, port: u16, q: &mut impl Schedule<ChipEvent>) {
        let Some(t) = self.tm.next_eligible_time(port, now.ps()) else {
            return;
        };
        let p = &self.ports[port as usize];
        let at = Time(t).max(p.next_dequeue_at).max(now);
        if !(p.dequeue_pending && p.dequeue_at <= at) {
            self.schedule_dequeue(port, at, q);
        }
    }

    /// When the TM should next serve a port whose wire will be free at `wire_free`: so that
    /// the packet leaves the egress pipe at the last cycle edge before then.
    fn paced_service(&self, wire_free: Time, now: Time) -> Time {
        let target_exit = self.clock.cycle_at_or_before(wire_free);
        self.clock
            .time_of(target_exit.saturating_sub(self.egress_latency))
            .max(now)
    }

    /// A PFC frame received whole on `port` at `now` takes effect.
    fn mac_control(&mut self, now: Time, port: u16, q: &mut impl Schedule<ChipEvent>) {
        let p = &mut self.ports[port as usize];
        let times = p.ctrl_rx.pop_front().expect("one decoded frame per event");
        let gbps = p.gbps;
        let levels = (self.tm.spec().pfc_levels as usize).min(8);
        for (prio, t) in times.iter().enumerate().take(levels) {
            let Some(quanta) = *t else { continue };
            let priority = prio as u8;
            let p = &mut self.ports[port as usize];
            let was = p.rx_paused_until[prio];
            if let Some(until) = was.filter(|&u| u <= now) {
                // Ran out before this frame (its PauseEnd has not run yet).
                p.rx_paused_until[prio] = None;
                self.pause_log.push(PauseRecord {
                    at: until,
                    port,
                    priority,
                    paused: false,
                    direction: PauseDirection::Received,
                });
            }
            let paused = p.rx_paused_until[prio].is_some();
            if quanta > 0 {
                let until = now + Time(quanta_ps(quanta as u32, gbps));
                p.rx_paused_until[prio] = Some(until);
                self.tm.pause(port, priority, until.ps(), now.ps());
                q.at(until, ChipEvent::PauseEnd { port, priority });
            } else {
                p.rx_paused_until[prio] = None;
                self.tm.resume(port, priority, now.ps());
            }
            if paused != (quanta > 0) {
                self.pause_log.push(PauseRecord {
                    at: now,
                    port,
                    priority,
                    paused: quanta > 0,
                    direction: PauseDirection::Received,
                });
            }
        }
        self.kick_dequeue(now, port, q);
    }

    /// Turn the TM's PFC events into frames.
    fn send_pfc_events(
        &mut self,
        now: Time,
        q: &mut impl Schedule<ChipEvent>,
        wire: &mut impl Wire,
    ) {
        let mut events = std::mem::take(&mut self.pfc_events);
        events.extend(self.tm.drain_pfc_events());
        for e in events.drain(..) {
            let (port, priority) = (e.ingress_port, e.priority);
            let prio = priority as usize;
            if e.xoff {
                let quanta = self.tm.config().pfc.quanta;
                let start = self.send_pfc(now, port, priority, quanta, wire);
                let p = &mut self.ports[port as usize];
                p.counters.pfc_xoff_tx[prio] += 1;
                if quanta > 0 {
                    p.pfc_epoch = p.pfc_epoch.wrapping_add(1);
                    p.pfc_refresh[prio] = Some(p.pfc_epoch);
                    let every = refresh_interval_ps(quanta as u32, p.gbps).max(1);
                    q.at(
                        now + Time(every),
                        ChipEvent::PfcRefresh {
                            port,
                            priority,
                            epoch: p.pfc_epoch,
                        },
                    );
                }
                self.log_sent(start, port, priority, true);
            } else {
                let start = self.send_pfc(now, port, priority, 0, wire);
                let p = &mut self.ports[port as usize];
                p.counters.pfc_xon_tx[prio] += 1;
                p.pfc_refresh[prio] = None;
                self.log_sent(start, port, priority, false);
            }
        }
        self.pfc_events = events;
    }

    fn log_sent(&mut self, at: Time, port: u16, priority: u8, paused: bool) {
        self.pause_log.push(PauseRecord {
            at,
            port,
            priority,
            paused,
            direction: PauseDirection::Sent,
        });
    }

    fn pfc_refresh(
        &mut self,
        now: Time,
        port: u16,
        priority: u8,
        epoch: u32,
        q: &mut impl Schedule<ChipEvent>,
        wire: &mut impl Wire,
    ) {
        let prio = priority as usize;
        if self.ports[port as usize].pfc_refresh[prio] != Some(epoch) {
            return; // XON came, or a later XOFF runs its own timer.
        }
        if !self.tm.is_xoff(port, priority) {
            self.ports[port as usize].pfc_refresh[prio] = None;
            return;
        }
        let quanta = self.tm.config().pfc.quanta;
        self.send_pfc(now, port, priority, quanta, wire);
        let p = &mut self.ports[port as usize];
        p.counters.pfc_refresh_tx[prio] += 1;
        let every = refresh_interval_ps(quanta as u32, p.gbps).max(1);
        q.at(
            now + Time(every),
            ChipEvent::PfcRefresh {
                port,
                priority,
                epoch,
            },
        );
    }

    /// Send a PFC frame for one priority out of `port`, ahead of every packet the MAC does
    /// not have yet; returns its start.
    fn send_pfc(
        &mut self,
        now: Time,
        port: u16,
        priority: u8,
        quanta: u16,
        wire: &mut impl Wire,
    ) -> Time {
        let mut times = [None; 8];
        times[priority as usize] = Some(quanta);
        pfc_frame::encode(&mut self.ctrl_frame, pfc_frame::port_mac(port), &times);
        let p = &self.ports[port as usize];
        let slot = slot_time(self.ctrl_frame.len(), p.gbps);
        let start = now.max(p.tx_free_at);
        // The packets the TM has served but the MAC does not have yet go after the frame.
        let paced = p.paced_wire_free.max(start) + slot;
        let next = self.paced_service(paced, now);
        let p = &mut self.ports[port as usize];
        p.tx_free_at = start + slot;
        p.paced_wire_free = paced;
        p.next_dequeue_at = p.next_dequeue_at.max(next);
        wire.transmit(port, start, &self.ctrl_frame);
        start
    }

    fn dequeue(&mut self, now: Time, port: u16, q: &mut impl Schedule<ChipEvent>) {
        self.ports[port as usize].dequeue_pending = false;
        let Some(d) = self.tm.dequeue(port, now.ps()) else {
            // Packets may wait in paused queues: come back when a pause expires. A resume
            // (by frame or request) serves the port itself.
            if let Some(t) = self.tm.next_eligible_time(port, now.ps()) {
                self.schedule_dequeue(port, Time(t).max(now), q);
            }
            return;
        };
        let p = &mut self.ports[port as usize];
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
        let next = self.paced_service(self.ports[port as usize].paced_wire_free, now);
        self.ports[port as usize].next_dequeue_at = next;
        if self.tm.has_packets(port) {
            self.schedule_dequeue(port, next, q);
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
