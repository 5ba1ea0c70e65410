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
//! # Files
//!
//! This file holds the core: [`Chip`], [`ChipEvent`], [`ChipConfig`] and its configuration
//! structs, [`DropReason`], [`ChipError`], [`Wire`], [`PortCounters`], the packet store, the
//! constructor, event dispatch ([`Chip::handle`]) and the life of a packet above. The rest
//! is in child modules, by concept:
//! - `plumbing.rs`: recirculation ports, deflect-on-drop, mirror sessions, multicast groups,
//!   mirror and multicast copies, [`PlumbingCounters`];
//! - `pktgen.rs`: the packet generator;
//! - `afc.rs`: advanced flow control requests and the egress FIFO bound;
//! - `depth.rs`: the published queue depths (ghost thread) ingress reads;
//! - `pfc.rs`: PFC frames sent from TM events, refresh timers, received MAC control frames,
//!   the pause log ([`PauseRecord`]).
//!
//! # Plumbing: recirculation, deflect-on-drop, mirroring, multicast, packet generator, AFC
//!
//! Code: `plumbing.rs`, `pktgen.rs`, `afc.rs`, `depth.rs`.
//!
//! - **Port ids.** Front-panel ports are `0..F`; recirculation ports follow, pipe `p`'s
//!   `r`-th is `F + p·R + r` (`R = profile.recirculation.ports_per_pipe`,
//!   [`Chip::recirc_port`]); then one packet-generator port per pipe, `F + pipes·R + p`
//!   ([`Chip::pktgen_port`]), a source of ingress packets only (sending to it is
//!   `InvalidEgressPort`). Every port except the generator's has TM queues; the TM is built
//!   with all of them. [`Chip::port_count`] is `F`; only front-panel ports receive frames.
//! - **Recirculation.** A recirculation port is served by the TM and paced like a MAC at the
//!   profile's recirculation speed, with the same Ethernet framing overhead (preamble,
//!   64-byte minimum, inter-frame gap: the real port is a MAC in loopback; an assumption for
//!   an internal port). What it "transmits" does not go to the [`Wire`]: the frame's first
//!   bit is back at the same pipe's ingress `recirculation.latency_cycles` after it started,
//!   it arrives whole one frame time later and takes an ingress issue slot like any arrival,
//!   with `ingress_port` = the recirculation port. `ig_tm_md.recirculate` sends the packet
//!   to its ingress pipe's first recirculation port (overriding the unicast port).
//! - **Deflect-on-drop.** When the TM refuses a packet whose program set `deflect_on_drop`
//!   and [`ChipConfig::dod`] is set, the whole packet is offered to the DoD port (default:
//!   the first recirculation port of its ingress pipe) and queue; admission applies again and
//!   a second refusal is [`DropReason::DeflectRefused`]. Egress sees `deflection_flag` = 1.
//!   Without `dod` the packet is dropped with the TM's reason.
//! - **Mirroring.** After the ingress deparser (and after the egress deparser), a non-zero
//!   `mirror_session` copies the deparsed packet, truncated to the session's
//!   `truncate_bytes` and to `mtu_trunc_len` if non-zero (the smaller), and enqueues the copy
//!   to the session's port and queue as a packet of its own (own cells, own bandwidth,
//!   through that port's egress pipe like any packet). An unknown session makes no copy
//!   ([`PlumbingCounters::mirror_unknown_session`]). Session ids are `1..plumbing.mirror_sessions`.
//! - **Multicast.** A non-zero `mcast_grp_a` replicates the packet to every member of the
//!   group (besides the unicast port, if set): one TM enqueue per copy, each charged its own
//!   cells (the real chip stores a multicast packet once; this model charges per copy), with
//!   the member's replication id as `egress_rid`. An unknown group drops the packet
//!   ([`DropReason::UnknownMcastGroup`]).
//! - **Packet generator.** [`PktGenApp`]s fire at exactly `start + k·period` (and at each
//!   one-shot time); the template enters the pipe's ingress at once (no MAC serialization)
//!   through the pipe's generator port, taking an issue slot. [`Chip::start`] schedules them.
//! - **Advanced flow control.** A non-zero `adv_flow_ctl` from either gress is qfc(1) |
//!   pipe(2) | mac(4) | pad(3) | qid(7) | credit(15); with qfc set, port
//!   `pipe · ports_per_pipe + mac`, queue `qid` is paused (credit 0) or resumed (credit ≠ 0)
//!   in the TM `plumbing.afc_latency_cycles` after the gress's exit ([`ChipEvent::AfcApply`]).
//!   Packets the TM served before that still leave.
//! - **Egress FIFO.** Per port, packets the TM has served that have not started on the wire
//!   (in the egress pipe or waiting for the MAC) are at most `plumbing.egress_fifo_packets`;
//!   the TM does not serve a port whose FIFO is full (just-in-time pacing stays; this bounds it).
//! - **Conservation.** Front-panel packets in + [`PlumbingCounters::created`] (generated,
//!   mirror and multicast copies) = front-panel packets out + drops.
//!
//! - **Published queue depths (ghost thread).** When the ingress program reads queue depths
//!   (`ExternCall::QueueDepth`), the chip keeps a [`tm::export::DepthExport`]: the TM's
//!   snapshot of every depth at each `k · depth_export_period_ps`, in force at every ingress
//!   pipe from `depth_export_delay_ps` later. A read sees the snapshot in force when the
//!   packet is in the reading table's stage (the gress runs later, at its exit). Depths change
//!   only at TM enqueues and dequeues, so the chip captures the state just before each of
//!   them, when a snapshot instant has passed since the previous one: no periodic event, and
//!   an idle chip costs nothing (with no change since, a read is the TM as it is; with none
//!   ever, 0). Reads take no issue slot and no stage unit.
//!
//! Not yet here: the network runtime does not start packet generators.
//!
//! # PFC (IEEE 802.1Qbb) in the MACs
//!
//! Code: `pfc.rs`.
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

mod afc;
mod config;
mod depth;
mod drop;
mod egress_fifo;
mod error;
mod event;
mod lockstep;
mod mac;
mod pacer;
mod packet;
mod pfc;
mod pktgen;
mod plumbing;
mod port;

pub use config::{ChipConfig, DodConfig, McastGroup, MirrorSession, PktGenApp};
pub use drop::DropReason;
pub use error::ChipError;
pub use event::ChipEvent;
pub use lockstep::LockstepCounters;
pub use mac::Wire;
pub use pfc::{PauseDirection, PauseRecord};
pub use plumbing::PlumbingCounters;
pub use port::PortCounters;

use depth::PublishedDepths;
use drop::REASONS;
use packet::PacketStore;
use plumbing::{check_plumbing, McastTable, MirrorTable};
use port::{Port, PortKind};

use crate::kernel::Schedule;
use crate::mac::{frame_time, slot_time};
use crate::pfc_frame;
use crate::profile::ChipProfile;
use pipelines::control::ResolvedControlOp;
use pipelines::entries::ResolvedEntry;
use pipelines::pipe::{gress_seed, GressInputs, LoadedGress};
use pipelines::program::{Gress, Program};
use pipelines::time::{Clock, Time};
use tm::config::TmConfig;
use tm::export::DepthExport;
use tm::pfc::PfcEvent;
use tm::{EnqueueRequest, TrafficManager};

struct Pipe {
    ingress: LoadedGress,
    egress: LoadedGress,
    ingress_next_issue: u64,
    egress_next_issue: u64,
    /// Packets issued into the ingress pipe (front-panel, recirculated, generated).
    ingress_issued: u64,
    /// Packets in the ingress pipe now (issued, not yet out of the deparser).
    in_ingress: u32,
    /// Packets in the egress pipe now.
    in_egress: u32,
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
    /// Parse failures the program chose to continue with (ingress, egress).
    parser_errors_continued: [u64; 2],
    /// PFC events taken from the TM, reused.
    pfc_events: Vec<PfcEvent>,
    /// The MAC control frame being built, reused.
    ctrl_frame: Vec<u8>,
    /// Pause state changes.
    pause_log: Vec<PauseRecord>,
    /// Front-panel ports (ids `0..front`).
    front: u16,
    /// Recirculation loopback latency.
    recirc_latency: Time,
    /// Advanced-flow-control latency.
    afc_latency: Time,
    dod: Option<DodConfig>,
    /// Mirror sessions by id.
    mirror: MirrorTable,
    /// Multicast groups by id.
    mcast: McastTable,
    pktgen: Vec<PktGenApp>,
    /// Per packet-generator application: its periodic timer's firings so far (the next
    /// `PktGenTick` is due at `start + fired · period`).
    pktgen_fired: Vec<u64>,
    /// Destinations of the packet being enqueued (port, queue, rid), reused.
    dests: Vec<(u16, u16, u16)>,
    plumbing: PlumbingCounters,
    /// The queue depths published to ingress, when the ingress program reads them.
    depths: Option<DepthExport>,
    /// What lockstep mode saw.
    lockstep: LockstepCounters,
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
                ingress_issued: 0,
                in_ingress: 0,
                in_egress: 0,
            });
        }
        let ingress_latency = pipes[0].ingress.timing().total() as u64;
        let egress_latency = pipes[0].egress.timing().total() as u64;
        let mut ports = Vec::new();
        let fifo = profile.plumbing.egress_fifo_packets;
        let port = |kind, gbps, pipe| Port::new(kind, gbps, pipe, fifo);
        for pipe in 0..profile.pipes {
            for g in &profile.ports_per_pipe {
                for _ in 0..g.count {
                    ports.push(port(PortKind::Front, g.speed_gbps, pipe));
                }
            }
        }
        let front = ports.len() as u16;
        let rec = &profile.recirculation;
        for pipe in 0..profile.pipes {
            for _ in 0..rec.ports_per_pipe {
                ports.push(port(PortKind::Recirc, rec.speed_gbps, pipe));
            }
        }
        for pipe in 0..profile.pipes {
            // Generated packets never cross a MAC; the speed is not used.
            ports.push(port(PortKind::PktGen, 0, pipe));
        }
        let (mirror, mcast) = check_plumbing(&profile, &config, front, &ports)?;
        let clock_ = Clock::new(profile.clock_hz);
        // A duration of `n` cycles.
        let cycles = |n: u32| clock_.time_of(n as u64);
        let recirc_latency = cycles(profile.recirculation.latency_cycles);
        let afc_latency = cycles(profile.plumbing.afc_latency_cycles);
        // Reads are of the time a packet is in a stage, at most the ingress latency before
        // the gress runs (one cycle of margin for rounding).
        let depths = program.ingress.control.reads_queue_depths().then(|| {
            let window = clock_.time_of(ingress_latency + 1).ps();
            DepthExport::new(&profile.tm, window)
        });
        Ok(Chip {
            depths,
            lockstep: LockstepCounters::default(),
            front,
            recirc_latency,
            afc_latency,
            dod: config.dod,
            mirror,
            mcast,
            pktgen: config.pktgen.clone(),
            pktgen_fired: vec![0; config.pktgen.len()],
            dests: Vec::new(),
            plumbing: PlumbingCounters::default(),
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
            parser_errors_continued: [0; 2],
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

    /// Number of front-panel ports (ids `0..port_count()`; recirculation and
    /// packet-generator ports follow).
    pub fn port_count(&self) -> u16 {
        self.front
    }

    /// Line rate of a front-panel port in Gb/s.
    pub fn port_gbps(&self, port: u16) -> Option<u32> {
        (port < self.front).then(|| self.ports[port as usize].gbps)
    }

    /// The id of `pipe`'s packet-generator port ([`ChipProfile::pktgen_port`]).
    pub fn pktgen_port(&self, pipe: u16) -> Option<u16> {
        self.profile.pktgen_port(pipe)
    }

    /// Packets whose parse failed but which went on because the program reads `parser_err`
    /// (ingress, egress). Those whose parse failed under the drop policy are drops.
    pub fn parser_errors_continued(&self) -> [u64; 2] {
        self.parser_errors_continued
    }

    /// Packets in `pipe`'s ingress and egress pipes now (issued, not yet out of the deparser).
    pub fn pipe_occupancy(&self, pipe: u16) -> (u32, u32) {
        self.pipes
            .get(pipe as usize)
            .map_or((0, 0), |p| (p.in_ingress, p.in_egress))
    }

    /// Packets issued into `pipe`'s ingress pipe so far (each took one issue slot).
    pub fn ingress_issued(&self, pipe: u16) -> u64 {
        self.pipes
            .get(pipe as usize)
            .map_or(0, |p| p.ingress_issued)
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

    /// The traffic manager (for depth and occupancy readings).
    pub fn tm(&self) -> &TrafficManager {
        &self.tm
    }

    /// Packets inside the chip (in a pipe, queued, or waiting for the MAC).
    pub fn packets_inside(&self) -> usize {
        self.packets.live()
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
            ChipEvent::Arrive { pkt } => self.issue_ingress(now, pkt, q),
            ChipEvent::IngressDone { pkt } => {
                self.ingress_done(now, pkt, q);
                self.send_pfc_events(now, q, wire);
            }
            ChipEvent::Dequeue { port, seq } => {
                if self.ports[port as usize].pacer.is_pending(seq) {
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
            ChipEvent::PauseEnd { port, priority } => self.pause_end(now, port, priority),
            ChipEvent::Control { op } => {
                let op = self.scheduled[op as usize]
                    .take()
                    .expect("each operation runs once");
                if let Err(e) = self.apply(&op) {
                    self.control_failures.push((now, e.to_string()));
                }
            }
            ChipEvent::EgressDone { pkt } => {
                self.egress_done(now, pkt, q, wire);
                self.send_pfc_events(now, q, wire);
            }
            ChipEvent::AfcApply {
                port,
                queue,
                paused,
            } => self.afc_apply(now, port, queue, paused, q),
            ChipEvent::PktGenTick { app } => {
                let a = &self.pktgen[app as usize];
                let (start, period) = (a.start_ns, a.period_ns.expect("a periodic app"));
                // One tick of an application is pending at a time: this is firing `n`.
                let fired = &mut self.pktgen_fired[app as usize];
                let n = *fired;
                *fired += 1;
                if a.count.is_none_or(|c| n + 1 < c) {
                    let next = Time::from_ns(start + (n + 1) * period);
                    q.at(next, ChipEvent::PktGenTick { app });
                }
                self.generate(now, app, q);
            }
            ChipEvent::PktGenShot { app, .. } => self.generate(now, app, q),
        }
    }

    /// The packet takes its pipe's next ingress issue slot.
    fn issue_ingress(&mut self, now: Time, pkt: u32, q: &mut impl Schedule<ChipEvent>) {
        let port = self.packets.slots[pkt as usize].ingress_port;
        let pipe_id = self.ports[port as usize].pipe as usize;
        let pipe = &mut self.pipes[pipe_id];
        let issue = take_issue_slot(self.clock, now, &mut pipe.ingress_next_issue);
        pipe.ingress_issued += 1;
        pipe.in_ingress += 1;
        let done = self.clock.time_of(issue + self.ingress_latency);
        self.packets.slots[pkt as usize].issue = issue;
        // Issue slots only move forward and the latency is fixed: exits come in time order.
        q.at_in_lane(2 * pipe_id, done, ChipEvent::IngressDone { pkt });
    }

    fn ingress_done(&mut self, now: Time, h: u32, q: &mut impl Schedule<ChipEvent>) {
        let slot = &mut self.packets.slots[h as usize];
        let inputs = GressInputs {
            ingress_port: slot.ingress_port,
            ingress_mac_ns: slot.rx_start.ns(),
            issue_cycle: slot.issue,
            ..GressInputs::default()
        };
        let in_port = &mut self.ports[slot.ingress_port as usize];
        let pipe = in_port.pipe as usize;
        if in_port.kind == PortKind::Recirc {
            in_port.counters.rx_packets += 1;
            in_port.counters.rx_bytes += slot.data.len() as u64;
        }
        let depths = PublishedDepths {
            export: self.depths.as_ref(),
            tm: &self.tm,
        };
        // The packet has left the ingress pipe (its program runs at the exit).
        let p = &mut self.pipes[pipe];
        p.in_ingress -= 1;
        let ingress = &mut p.ingress;
        // The outputs are read where the gress returned them (moving them out copied the
        // whole record).
        let res = ingress.process_with_depths(&mut slot.data, &inputs, &depths);
        let Ok(out) = &res else {
            return self.drop_packet(h, DropReason::IngressParserError);
        };
        self.parser_errors_continued[0] += (out.parser_error != 0) as u64;
        let r = &out.requests;
        if r.adv_flow_ctl != 0 {
            self.afc_request(now, r.adv_flow_ctl, q);
        }
        if out.drop_ctl != 0 {
            return self.drop_packet(h, DropReason::IngressProgramDrop);
        }
        if r.mirror_session != 0 {
            self.mirror(now, h, r, q);
        }
        let unicast = |port: u16| match self.ports.get(port as usize) {
            Some(p) if p.kind != PortKind::PktGen => Ok(port),
            _ => Err(DropReason::InvalidEgressPort),
        };
        if !r.recirculate && r.mcast_group == 0 {
            // One unicast copy, the common case: no list of destinations.
            let port = out.ucast_egress_port.ok_or(DropReason::NoEgressPort);
            return match port.and_then(unicast) {
                Ok(port) => {
                    let (queue, cos, dod) = (out.queue, r.ingress_cos, r.deflect_on_drop);
                    self.enqueue_to(now, h, port, queue, 0, cos, dod, q)
                }
                Err(reason) => self.drop_packet(h, reason),
            };
        }
        // Destinations: the unicast port (or this pipe's first recirculation port), then
        // the multicast group's members.
        let mut dests = std::mem::take(&mut self.dests);
        dests.clear();
        let mut reason = None;
        let recirc = if r.recirculate {
            self.profile.recirc_port(pipe as u16, 0)
        } else {
            None
        };
        if let Some(rp) = recirc {
            dests.push((rp, out.queue, 0));
        } else if let Some(port) = out.ucast_egress_port {
            match unicast(port) {
                Ok(port) => dests.push((port, out.queue, 0)),
                Err(r) => reason = Some(r),
            }
        }
        if r.mcast_group != 0 && reason.is_none() {
            match self.mcast.get(&r.mcast_group) {
                Some(members) => dests.extend(members.iter().map(|&(p, rid)| (p, out.queue, rid))),
                None => reason = Some(DropReason::UnknownMcastGroup),
            }
        }
        if dests.is_empty() && reason.is_none() {
            reason = Some(DropReason::NoEgressPort);
        }
        if let Some(reason) = reason {
            self.dests = dests;
            return self.drop_packet(h, reason);
        }
        // Every copy but the last is a new packet; the last is the original.
        let n = dests.len();
        self.plumbing.mcast_copies += n as u64 - 1;
        for (i, &(port, queue, rid)) in dests.iter().enumerate() {
            let c = if i + 1 == n {
                h
            } else {
                self.copy_packet(h, &[], usize::MAX)
            };
            self.enqueue_to(
                now,
                c,
                port,
                queue,
                rid,
                r.ingress_cos,
                r.deflect_on_drop,
                q,
            );
        }
        self.dests = dests;
    }

    /// Offer packet `h` to the TM for (`port`, `queue`); a refusal deflects it to the
    /// deflect-on-drop port when `deflect` and the chip has one, or drops it.
    #[allow(clippy::too_many_arguments)]
    fn enqueue_to(
        &mut self,
        now: Time,
        h: u32,
        port: u16,
        queue: u16,
        rid: u16,
        cos: u8,
        deflect: bool,
        q: &mut impl Schedule<ChipEvent>,
    ) {
        self.before_tm_change(now);
        let slot = &mut self.packets.slots[h as usize];
        let mut request = EnqueueRequest {
            port,
            queue,
            ingress_port: slot.ingress_port,
            priority: cos,
            class: None,
            bytes: slot.data.len() as u32,
            handle: h,
            now_ps: now.ps(),
        };
        let mut port = port;
        if let Err(refusal) = self.tm.enqueue(request) {
            let dod = self.dod.filter(|_| deflect);
            let Some(d) = dod else {
                return self.drop_packet(h, DropReason::Tm(refusal));
            };
            let pipe = self.ports[slot.ingress_port as usize].pipe;
            // Without a port, the pipe's recirculation port (the configuration check
            // refused deflection to none on a chip without one).
            let Some(to) = d.port.or_else(|| self.profile.recirc_port(pipe, 0)) else {
                return self.drop_packet(h, DropReason::Tm(refusal));
            };
            port = to;
            request.port = port;
            request.queue = d.queue;
            if self.tm.enqueue(request).is_err() {
                return self.drop_packet(h, DropReason::DeflectRefused);
            }
            self.plumbing.deflected += 1;
            self.packets.slots[h as usize].deflected = true;
        }
        let slot = &mut self.packets.slots[h as usize];
        slot.egress_port = port;
        slot.rid = rid;
        self.serve_paced(port, now, q);
    }

    fn dequeue(&mut self, now: Time, port: u16, q: &mut impl Schedule<ChipEvent>) {
        self.ports[port as usize].pacer.run();
        if self.egress_fifo_full(now, port, q) {
            return;
        }
        self.before_tm_change(now);
        let Some(d) = self.tm.dequeue(port, now.ps()) else {
            // Packets may wait in paused queues: come back when a pause expires. A resume
            // (by frame or request) serves the port itself.
            if let Some(t) = self.tm.next_eligible_time(port, now.ps()) {
                self.schedule_dequeue(port, Time(t).max(now), q);
            }
            return;
        };
        let p = &mut self.ports[port as usize];
        p.fifo.in_pipe += 1;
        let pipe_id = p.pipe as usize;
        let pipe = &mut self.pipes[pipe_id];
        let issue = take_issue_slot(self.clock, now, &mut pipe.egress_next_issue);
        pipe.in_egress += 1;
        let done = self.clock.time_of(issue + self.egress_latency);
        let slot = &mut self.packets.slots[d.handle as usize];
        slot.deq = Some(d);
        slot.deq_time = now;
        slot.issue = issue;
        q.at_in_lane(
            2 * pipe_id + 1,
            done,
            ChipEvent::EgressDone { pkt: d.handle },
        );
        // Pace the port: predict from the stored length when this frame and its gap will
        // have left the wire, and serve the port next so that the next packet leaves the
        // egress pipe at the last cycle edge before then; the MAC holds it until the wire is
        // free, so a backlogged port sends back to back at exactly line rate.
        let wire_free = p.pacer.add_frame(done, slot_time(d.bytes as usize, p.gbps));
        let next = self.paced_service(wire_free, now);
        self.ports[port as usize].pacer.next_at = next;
        if self.tm.has_packets(port) {
            self.schedule_dequeue(port, next, q);
        }
    }

    fn egress_done(
        &mut self,
        now: Time,
        h: u32,
        q: &mut impl Schedule<ChipEvent>,
        wire: &mut impl Wire,
    ) {
        let slot = &mut self.packets.slots[h as usize];
        let port = slot.egress_port;
        let d = slot.deq.take().expect("a packet in egress has left the TM");
        let pipe = &mut self.pipes[self.ports[port as usize].pipe as usize];
        pipe.in_egress -= 1;
        let egress = &mut pipe.egress;
        // A gress that leaves every packet as it is and asks for nothing (the stock routers'
        // egress) is not run: its outputs would be the defaults.
        if !egress.is_identity() {
            let inputs = GressInputs {
                ingress_port: slot.ingress_port,
                ingress_mac_ns: slot.rx_start.ns(),
                issue_cycle: slot.issue,
                egress_port: port,
                egress_queue: d.queue,
                enq_depth_cells: d.enq_depth_cells,
                deq_depth_cells: d.deq_depth_cells,
                enq_depth_pkts: d.enq_depth_pkts,
                deq_depth_pkts: d.deq_depth_pkts,
                enq_congest_stat: d.ecn_mark as u8,
                replication_id: slot.rid,
                queue_delay_ns: (slot.deq_time - Time(d.enq_time_ps)).ns(),
                deflected: slot.deflected,
            };
            // The outputs are read in place, as after ingress.
            let res = egress.process(&mut slot.data, &inputs);
            let Ok(out) = &res else {
                self.left_egress_pipe(now, port, q);
                return self.drop_packet(h, DropReason::EgressParserError);
            };
            self.parser_errors_continued[1] += (out.parser_error != 0) as u64;
            let r = &out.requests;
            if r.adv_flow_ctl != 0 {
                self.afc_request(now, r.adv_flow_ctl, q);
            }
            if out.drop_ctl != 0 {
                self.left_egress_pipe(now, port, q);
                return self.drop_packet(h, DropReason::EgressProgramDrop);
            }
            if r.mirror_session != 0 {
                self.mirror(now, h, r, q);
            }
        }
        let len = self.packets.slots[h as usize].data.len();
        let p = &mut self.ports[port as usize];
        let start = p.mac.start_frame(now, slot_time(len, p.gbps));
        p.fifo.wait_for_wire(start, now);
        let c = &mut p.counters;
        c.tx_packets += 1;
        c.tx_bytes += len as u64;
        c.first_tx.get_or_insert(start);
        c.last_tx = Some(start);
        let kind = p.kind;
        let gbps = p.gbps;
        self.left_egress_pipe(now, port, q);
        if kind == PortKind::Recirc {
            // The loopback: the frame comes back into this pipe's ingress through the same
            // port, its first bit `latency` after it left, whole one frame time later.
            self.plumbing.recirculated += 1;
            let slot = &mut self.packets.slots[h as usize];
            slot.ingress_port = port;
            slot.rx_start = start + self.recirc_latency;
            slot.rid = 0;
            slot.deflected = false;
            q.at(
                slot.rx_start + frame_time(len, gbps),
                ChipEvent::Arrive { pkt: h },
            );
            return;
        }
        wire.transmit(port, start, &self.packets.slots[h as usize].data);
        self.packets.release(h);
    }
}

/// A gress issues one packet per cycle: the first cycle edge at or after `now` that is not
/// before `next` (the cycle after the previous issue); `next` moves past it.
#[inline]
fn take_issue_slot(clock: Clock, now: Time, next: &mut u64) -> u64 {
    let issue = clock.cycle_at_or_after(now).max(*next);
    *next = issue + 1;
    issue
}
