//! The clocked chip: MACs, pipes and the traffic manager wired together on the event kernel.
//!
//! The life of a packet (times in simulated picoseconds, cycles of the pipe clock), one
//! [`ChipEvent`] per step, each run by [`Chip::handle`]:
//! 1. [`Chip::receive`] (`mac.rs`): the frame's first bit reaches the ingress MAC at `start`;
//!    the MAC has it all when its last FCS bit is in, `start + frame_time`:
//!    [`ChipEvent::Arrive`].
//! 2. `Arrive` (`pipe.rs`): the packet takes its pipe's next free issue slot, at the first
//!    cycle edge at or after its arrival (one packet per cycle per pipe). It leaves the
//!    ingress deparser `latency` cycles later: [`ChipEvent::IngressDone`].
//! 3. `IngressDone` (`ingress.rs`): the ingress program runs, and the packet is offered to
//!    the TM for each of its destinations (`queueing.rs`) or dropped with a reason
//!    (`drop.rs`).
//! 4. [`ChipEvent::Dequeue`] (`queueing.rs`, paced by `pacer.rs`): the TM's scheduler for the
//!    egress port hands out the next packet just early enough that, after the egress pipe's
//!    latency, it reaches the MAC as the previous frame and its inter-frame gap end. The
//!    packet takes the egress pipe's next issue slot, unless its ingress asked to bypass
//!    egress: then it goes to the MAC at the next cycle edge (`queueing.rs`). A service due
//!    at once (an idle port) is scheduled with `Schedule::at_or_hold`: a driver may run it
//!    right after the event that asked for it, where its queue would have.
//! 5. [`ChipEvent::EgressDone`] (`egress.rs`): the egress program runs, then the MAC sends
//!    the frame as soon as the port is free; the frame is handed to the [`Wire`] with its
//!    start time.
//!
//! The cycle of each step as a formula, and why running a gress's program in one go at its
//! exit is exact, are in `docs/ARCHITECTURE.md` ("The life of a packet").
//!
//! # Modules
//!
//! One concept each; each module's comment holds its rules.
//! - What the chip is given and says: `config.rs` ([`ChipConfig`] and its parts),
//!   `event.rs` ([`ChipEvent`]), `error.rs` ([`ChipError`]), `drop.rs` ([`DropReason`], and
//!   the drop itself).
//! - The packet's path: `packet.rs` (the packet store), `mac.rs` (receive, when each
//!   direction of a port is free, [`Wire`]), `pipe.rs` (issue slots and occupancy),
//!   `ingress.rs`, `queueing.rs` (TM admission and service), `egress.rs`.
//! - A port and its parts: `port.rs` (the port, [`PortCounters`]), `pacer.rs` (when the TM
//!   serves a port), `egress_fifo.rs` (the bound on served packets not yet on the wire),
//!   `pfc.rs` (PFC frames sent and received, the pause log).
//! - Around the path: `plumbing.rs` (port ids, recirculation, deflect-on-drop, mirroring,
//!   multicast, [`PlumbingCounters`]), `pktgen.rs` (the packet generator), `afc.rs`
//!   (advanced flow control), `depth.rs` (queue depths published to ingress),
//!   `scheduled.rs` (control-plane operations in simulated time), `lockstep.rs` (what
//!   lockstep mode sees at each cycle edge), `trace.rs` (the per-packet trace, when asked
//!   for).

mod afc;
mod agent;
mod config;
mod depth;
mod drop;
mod egress;
mod egress_fifo;
mod error;
mod event;
mod ingress;
mod lockstep;
mod mac;
mod pacer;
mod packet;
mod pfc;
mod pipe;
mod pktgen;
mod plumbing;
mod port;
mod queueing;
mod scheduled;
mod trace;

pub use agent::ControlAgent;
pub use config::{
    ChipConfig, DodConfig, McastGroup, MirrorOnDropConfig, MirrorSession, PktGenApp, PortSpeed,
};
pub use drop::DropReason;
use drop::DropWatch;
pub use error::ChipError;
pub use event::ChipEvent;
pub use lockstep::LockstepCounters;
pub use mac::Wire;
pub use pfc::{PauseDirection, PauseRecord};
pub use plumbing::PlumbingCounters;
pub use port::PortCounters;
pub use scheduled::ControlFailure;

use crate::kernel::Schedule;
use crate::profile::ChipProfile;
use drop::REASONS;
use packet::PacketStore;
use pfc::PfcState;
use pipe::Pipe;
use pipelines::entries::ResolvedEntry;
use pipelines::pipe::{gress_seed, LoadedGress};
use pipelines::program::{Gress, Program};
use pipelines::time::{Clock, Time};
use pktgen::PacketGenerator;
use plumbing::Plumbing;
use port::Port;
use scheduled::ScheduledControl;
use tm::config::TmConfig;
use tm::export::DepthExport;
use tm::TrafficManager;

/// One modelled chip running one program.
pub struct Chip {
    profile: ChipProfile,
    clock: Clock,
    /// Every port: front-panel, then recirculation, then packet generator (see `plumbing.rs`
    /// for the ids).
    ports: Vec<Port>,
    /// Front-panel ports (ids `0..front`).
    front: u16,
    pipes: Vec<Pipe>,
    /// Cycles a packet spends in the ingress pipe (the same on every pipe).
    ingress_latency: u64,
    /// Cycles a packet spends in the egress pipe.
    egress_latency: u64,
    tm: TrafficManager,
    packets: PacketStore,
    /// Drops by reason (`DropReason::index`).
    drops: [u64; REASONS],
    /// Packets made here that the program ended ([`Chip::consumed`]).
    consumed: u64,
    /// Who a dropped packet belonged to, when asked ([`Chip::watch_drops`]).
    drop_watch: Option<DropWatch>,
    /// Control-plane agents ([`Chip::add_agent`]), and what stopped any of them.
    agents: Vec<Box<dyn ControlAgent>>,
    agent_failures: Vec<String>,
    /// Parse failures the program chose to continue with (ingress, egress).
    parser_errors_continued: [u64; 2],
    plumbing: Plumbing,
    pktgen: PacketGenerator,
    pfc: PfcState,
    control: ScheduledControl,
    /// The queue depths published to ingress, when the ingress program reads them.
    depths: Option<DepthExport>,
    /// What lockstep mode saw.
    lockstep: LockstepCounters,
    lockstep_check: lockstep::LockstepCheck,
    /// The per-packet trace's recorder, when asked for (`trace.rs`).
    trace: Option<Box<trace::ChipTrace>>,
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
        let clock = Clock::new(profile.clock_hz);
        let mut pipes = Vec::new();
        for pipe in 0..profile.pipes {
            let load = |g: Gress, p| {
                let seed = gress_seed(config.seed, pipe, g);
                LoadedGress::load(g, p, &profile.pipe, clock, seed).map_err(ChipError::Load)
            };
            pipes.push(Pipe::new(
                load(Gress::Ingress, program.ingress.clone())?,
                load(Gress::Egress, program.egress.clone())?,
            ));
        }
        let ingress_latency = pipes[0].ingress.timing().total() as u64;
        let egress_latency = pipes[0].egress.timing().total() as u64;
        let (ports, front) = port::ports(&profile, &config.port_speeds)?;
        let plumbing = Plumbing::new(&profile, &config, clock, &ports)?;
        let pktgen = PacketGenerator::new(&profile, &config.pktgen, ports.len())?;
        // Reads are of the time a packet is in a stage, at most the ingress latency before
        // the gress runs (one cycle of margin for rounding).
        let depths = program.ingress.control.reads_queue_depths().then(|| {
            let window = clock.time_of(ingress_latency + 1).ps();
            DepthExport::new(&profile.tm, window)
        });
        // The TM's own seed if the operator gave one, else the chip's.
        let tm_config = TmConfig {
            seed: config.tm.seed.or(Some(config.seed)),
            ..config.tm
        };
        let mut tm = TrafficManager::new(profile.tm.clone(), tm_config, ports.len())
            .map_err(ChipError::TmConfig)?;
        if let Some(d) = &depths {
            d.attach(&mut tm);
        }
        Ok(Chip {
            profile,
            clock,
            ports,
            front,
            pipes,
            ingress_latency,
            egress_latency,
            tm,
            packets: PacketStore::default(),
            drops: [0; REASONS],
            consumed: 0,
            drop_watch: None,
            agents: Vec::new(),
            agent_failures: Vec::new(),
            parser_errors_continued: [0; 2],
            plumbing,
            pktgen,
            pfc: PfcState::new(),
            control: ScheduledControl::default(),
            depths,
            lockstep: LockstepCounters::default(),
            lockstep_check: lockstep::LockstepCheck::default(),
            trace: None,
        })
    }

    /// [`Chip::with_config`], then `entries` installed in every pipe, in order: the chip a
    /// scenario describes. A refused entry is [`ChipError::Entry`], numbered from 1 and
    /// naming its table.
    pub fn with_entries(
        profile: ChipProfile,
        program: &Program,
        config: ChipConfig,
        entries: &[ResolvedEntry],
    ) -> Result<Chip, ChipError> {
        let mut chip = Chip::with_config(profile, program, config)?;
        for (i, e) in entries.iter().enumerate() {
            chip.install(e).map_err(|error| ChipError::Entry {
                number: i + 1,
                table: chip.table_name(e.gress, e.table),
                error,
            })?;
        }
        Ok(chip)
    }

    /// The profile the chip was built from.
    pub fn profile(&self) -> &ChipProfile {
        &self.profile
    }

    /// Schedule what the chip starts on its own: the packet generator's first packets and
    /// the control agents' first runs. Call once, before running the kernel.
    pub fn start(&mut self, q: &mut impl Schedule<ChipEvent>) {
        self.start_pktgen(q);
        self.start_agents(q);
    }

    /// What makes the chip schedule events without end, if anything: a control agent or a
    /// packet-generator application with a period and no count. A run of such a chip ends
    /// only at a time it is given.
    pub fn endless_events(&self) -> Option<String> {
        if !self.agents.is_empty() {
            return Some(format!(
                "{} control agent(s), each run every period",
                self.agents.len()
            ));
        }
        self.pktgen
            .endless_app()
            .map(|a| format!("packet-generator application {a} with a period and no count"))
    }

    /// The pipe clock.
    pub fn clock(&self) -> Clock {
        self.clock
    }

    /// Packets whose parse failed but which went on because the program reads `parser_err`
    /// (ingress, egress). Those whose parse failed under the drop policy are drops.
    pub fn parser_errors_continued(&self) -> [u64; 2] {
        self.parser_errors_continued
    }

    /// The traffic manager (for depth and occupancy readings).
    pub fn tm(&self) -> &TrafficManager {
        &self.tm
    }

    /// The bytes of the packets queued in `queue` of `port`, head first, as the TM holds
    /// them (with any bridged header the ingress program put in front): what a checker
    /// reads to tell whose packets a queue holds.
    pub fn queued_packets(&self, port: u16, queue: u16) -> impl Iterator<Item = &[u8]> + '_ {
        self.tm
            .queue_handles(port, queue)
            .map(|h| &self.packets.slots[h as usize].data[..])
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
        self.lockstep_check.touched = true;
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
            ChipEvent::Control { op } => self.run_control(op),
            ChipEvent::EgressDone { pkt } => {
                self.egress_done(now, pkt, q, wire);
                self.send_pfc_events(now, q, wire);
            }
            ChipEvent::AfcApply {
                port,
                queue,
                paused,
            } => self.afc_apply(now, port, queue, paused, q),
            ChipEvent::PktGenTick { app } => self.pktgen_tick(now, app, q),
            ChipEvent::Agent { agent } => self.run_agent(now, agent, q),
            ChipEvent::PktGenShot { app, .. } => self.generate(now, app, q),
        }
    }
}
