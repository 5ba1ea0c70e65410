//! The lab bench around one chip: feeds frames into its ports, runs the event kernel until
//! the chip is empty, and captures what leaves.
//!
//! In lockstep mode ([`Bench::set_lockstep`]) the bench visits every cycle of the chip
//! between events ([`asic_model::kernel::Lockstep`], [`Chip::tick`]); the events, their
//! order and the outputs are the same as without it. [`Bench::keep_trace`] records every
//! event the kernel ran, for comparing the two.

use crate::generator::GeneratorFeed;
use crate::scenario::Generator;
use asic_io::pcap::PcapOut;
use asic_model::chip::{
    Chip, ChipConfig, ChipError, ChipEvent, ControlFailure, DropReason, LockstepCounters,
    PortCounters, Wire,
};
use asic_model::kernel::{EventQueue, Lockstep, Schedule};
use asic_model::profile::ChipProfile;
use asic_model::trace::{PacketTrace, TraceFilter};
use pipelines::control::ResolvedControlOp;
use pipelines::entries::ResolvedEntry;
use pipelines::program::Program;
use pipelines::readout::{text as readout_text, ChipState, ControlRead};
use pipelines::time::Time;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// A source of frames for one port.
enum Feed {
    /// Frames with their intended start times, in order.
    Frames {
        frames: Vec<(Time, Vec<u8>)>,
        next: usize,
    },
    /// A generator.
    Generator(GeneratorFeed),
}

impl Feed {
    fn next_time(&self) -> Option<Time> {
        match self {
            Feed::Frames { frames, next } => frames.get(*next).map(|f| f.0),
            Feed::Generator(g) => g.next_time(),
        }
    }

    fn take(&mut self) -> &[u8] {
        match self {
            Feed::Frames { frames, next } => {
                *next += 1;
                &frames[*next - 1].1
            }
            Feed::Generator(g) => g.take(),
        }
    }
}

/// Events of a one-chip bench.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ev {
    /// The chip's.
    Chip(ChipEvent),
    /// Feed number `n` (in the order feeds were added) starts its next frame. (A `u32`,
    /// so that an event is 8 bytes: events are moved on every sift of the event heap.)
    Feed(u32),
}

impl From<ChipEvent> for Ev {
    fn from(e: ChipEvent) -> Ev {
        Ev::Chip(e)
    }
}

/// A frame that left the chip.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Departure {
    /// Egress port.
    pub port: u16,
    /// When its first preamble bit left.
    pub start: Time,
    /// Its bytes (no FCS).
    pub data: Vec<u8>,
}

/// Captures departures: pcap files per port and, if asked, an in-memory log.
#[derive(Default)]
struct Capture {
    dir: Option<PathBuf>,
    pcaps: Vec<Option<PcapOut>>,
    log: Option<Vec<Departure>>,
    error: Option<String>,
}

impl Wire for Capture {
    /// Inlined where the chip transmits: a bench that keeps nothing (a benchmark's) returns
    /// at once.
    #[inline]
    fn transmit(&mut self, port: u16, start: Time, frame: &[u8]) {
        if self.log.is_some() || self.dir.is_some() {
            self.record(port, start, frame);
        }
    }
}

impl Capture {
    /// Keep a departure: in the log, and in its port's pcap.
    fn record(&mut self, port: u16, start: Time, frame: &[u8]) {
        if let Some(log) = &mut self.log {
            log.push(Departure {
                port,
                start,
                data: frame.to_vec(),
            });
        }
        let Some(dir) = &self.dir else { return };
        if self.error.is_some() {
            return;
        }
        if self.pcaps.len() <= port as usize {
            self.pcaps.resize_with(port as usize + 1, || None);
        }
        let slot = &mut self.pcaps[port as usize];
        if slot.is_none() {
            match PcapOut::create(&dir.join(format!("port{port}.pcap"))) {
                Ok(p) => *slot = Some(p),
                Err(e) => return self.error = Some(e),
            }
        }
        if let Err(e) = slot.as_mut().expect("created above").write(start, frame) {
            self.error = Some(e);
        }
    }
}

/// Why a run stopped with an error. Inputs are numbered from 0 in the order they were added,
/// and scheduled control operations in the order they were scheduled (as a one-chip
/// scenario's `inputs` and `control`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunError {
    /// A frame of input `input` was due on `port` at `start`, but the port was still receiving
    /// input `other`'s frame and its gap, until `free_at`: two inputs overlap on the wire.
    InputsOverlap {
        /// The input whose frame could not start.
        input: usize,
        /// The input whose frame the port was receiving.
        other: usize,
        /// The port.
        port: u16,
        /// When the frame was due.
        start: Time,
        /// When the port was free.
        free_at: Time,
    },
    /// The chip refused a scheduled control operation when it ran.
    Control(ControlFailure),
    /// The run stopped (its stop time) before a scheduled read was taken.
    ReadNotTaken(String),
    /// Anything else (the message says what and where): a frame the chip refused, a capture
    /// that could not be written.
    Other(String),
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::InputsOverlap {
                input,
                other,
                port,
                start,
                free_at,
            } => write!(
                f,
                "inputs[{input}] (port {port}) overlaps inputs[{other}] on port {port}: its \
                 frame is due at {start}, but the port receives inputs[{other}]'s frame and \
                 its gap until {free_at}"
            ),
            RunError::Control(c) => {
                let name = format!("scheduled control operation {}", c.op + 1);
                f.write_str(&c.refusal(&name))
            }
            RunError::ReadNotTaken(e) | RunError::Other(e) => f.write_str(e),
        }
    }
}

impl From<RunError> for String {
    fn from(e: RunError) -> String {
        e.to_string()
    }
}

/// What-if trimming on one (port, queue): packets its admission refused that the TM trimmed
/// into the header queue instead.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct TrimReport {
    /// The port (a front-panel or recirculation port).
    pub port: u16,
    /// The queue that refused them.
    pub queue: u16,
    /// Packets trimmed.
    pub packets: u64,
    /// Bytes they lost.
    pub bytes_cut: u64,
    /// Of `packets`, headers their header queue refused that went back to their sender.
    pub returned: u64,
}

/// Per-port results of a run.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct PortReport {
    /// Port number.
    pub port: u16,
    /// Line rate.
    pub gbps: u32,
    /// Frames received.
    pub rx_packets: u64,
    /// Bytes received.
    pub rx_bytes: u64,
    /// Frames sent.
    pub tx_packets: u64,
    /// Bytes sent.
    pub tx_bytes: u64,
    /// Drops of packets that arrived here.
    pub drops: u64,
    /// Input frames that had to wait for the port because their source was faster than
    /// line rate.
    pub delayed_to_line_rate: u64,
    /// Start of the first frame sent (ps).
    pub first_tx_ps: Option<u64>,
    /// Start of the last frame sent (ps).
    pub last_tx_ps: Option<u64>,
    /// PFC frames the port's MAC sent (XOFF, refreshes and XON; MAC control frames, not in
    /// `tx_packets`).
    pub pfc_tx: u64,
    /// PFC frames the port's MAC received and acted on.
    pub pfc_rx: u64,
}

/// The results of a run.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct RunReport {
    /// Chip profile.
    pub chip: String,
    /// Program.
    pub program: String,
    /// Ingress pipe latency in cycles.
    pub ingress_latency_cycles: u64,
    /// Egress pipe latency in cycles.
    pub egress_latency_cycles: u64,
    /// Ports with any traffic.
    pub ports: Vec<PortReport>,
    /// Drops by reason (only reasons that occurred).
    pub drops: Vec<(String, u64)>,
    /// What-if trimming (`config.tm.trim`): per (port, queue) that trimmed any packet.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub trims: Vec<TrimReport>,
    /// What-if mirror-on-drop (`config.mirror_on_drop`): copies made of refused packets
    /// (counted in `created`).
    #[serde(skip_serializing_if = "is_zero")]
    pub mirror_on_drop_copies: u64,
    /// Most buffer cells in use at once.
    pub peak_buffer_cells: u32,
    /// Time of the last event (ps).
    pub end_ps: u64,
    /// Events processed.
    pub events: u64,
    /// Packets whose parse failed but which the program continued with (ingress, egress).
    pub parser_errors_continued: [u64; 2],
    /// Packets the chip made: mirror and multicast copies, generated packets.
    pub created: u64,
    /// Packets the chip made that its program ended by design (`Chip::consumed`).
    pub consumed: u64,
    /// Packets still inside the chip when the run stopped, or when nothing was left to do
    /// but packets waited in queues paused for good (by PFC or advanced flow control).
    pub held: u64,
    /// When the run was stopped with events left (ps; `None`: it ran until nothing was left).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped_at_ps: Option<u64>,
    /// Lockstep mode: what the per-cycle visits saw (`None` when event-driven).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lockstep: Option<LockstepCounters>,
    /// Lockstep mode: the first disagreement between the event engine and the per-cycle
    /// reference.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lockstep_violation: Option<String>,
    /// What the scheduled control-plane reads returned, in time order.
    pub reads: Vec<ControlRead>,
    /// Registers, counters, meters and tables at the end of the run, per pipe.
    pub state: ChipState,
}

/// For `skip_serializing_if`: counters that appear in `summary.json` only when they counted.
fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl RunReport {
    /// Packets received on all ports.
    pub fn packets_in(&self) -> u64 {
        self.ports.iter().map(|p| p.rx_packets).sum()
    }

    /// Packets sent on all ports.
    pub fn packets_out(&self) -> u64 {
        self.ports.iter().map(|p| p.tx_packets).sum()
    }

    /// Packets dropped.
    pub fn packets_dropped(&self) -> u64 {
        self.drops.iter().map(|d| d.1).sum()
    }

    /// `in + created − out − dropped − consumed − held`: 0 when every packet is accounted
    /// for.
    pub fn unaccounted(&self) -> i64 {
        (self.packets_in() + self.created) as i64
            - (self.packets_out() + self.packets_dropped() + self.consumed + self.held) as i64
    }

    /// Drops for one reason.
    pub fn drops_for(&self, reason: DropReason) -> u64 {
        self.drops
            .iter()
            .find(|d| d.0 == reason.name())
            .map_or(0, |d| d.1)
    }

    /// A human-readable summary table.
    pub fn render_text(&self) -> String {
        let ns = |p: Option<u64>| p.map_or("-".to_string(), |p| Time(p).to_string());
        let mut s = format!(
            "chip {}, program {}: ingress pipe {} cycles, egress pipe {} cycles\n\n",
            self.chip, self.program, self.ingress_latency_cycles, self.egress_latency_cycles
        );
        s += &format!(
            "{:>4} {:>5} {:>10} {:>12} {:>10} {:>12} {:>8} {:>18} {:>18}\n",
            "port",
            "Gb/s",
            "rx pkts",
            "rx bytes",
            "tx pkts",
            "tx bytes",
            "drops",
            "first tx",
            "last tx"
        );
        for p in &self.ports {
            s += &format!(
                "{:>4} {:>5} {:>10} {:>12} {:>10} {:>12} {:>8} {:>18} {:>18}\n",
                p.port,
                p.gbps,
                p.rx_packets,
                p.rx_bytes,
                p.tx_packets,
                p.tx_bytes,
                p.drops,
                ns(p.first_tx_ps),
                ns(p.last_tx_ps)
            );
            if p.pfc_tx + p.pfc_rx > 0 {
                s += &format!(
                    "     (port {}: {} PFC frames sent, {} received)\n",
                    p.port, p.pfc_tx, p.pfc_rx
                );
            }
            if p.delayed_to_line_rate > 0 {
                s += &format!(
                    "     ({} input frames on port {} waited for line rate)\n",
                    p.delayed_to_line_rate, p.port
                );
            }
        }
        s += &format!(
            "\npackets in {} + made in the chip {} = out {} + dropped {} + consumed by the program \
             {} + still in the chip {}; peak buffer {} cells; last event at {}\n",
            self.packets_in(),
            self.created,
            self.packets_out(),
            self.packets_dropped(),
            self.consumed,
            self.held,
            self.peak_buffer_cells,
            Time(self.end_ps)
        );
        if self.drops.is_empty() {
            s += "drops by reason: none\n";
        } else {
            s += "drops by reason:\n";
            for (r, n) in &self.drops {
                s += &format!("  {r:<24} {n}\n");
            }
        }
        if !self.trims.is_empty() {
            s += "trimmed instead of dropped (what-if trimming, config.tm.trim):\n";
            for t in &self.trims {
                s += &format!(
                    "  port {} queue {}: {} packets, {} bytes cut",
                    t.port, t.queue, t.packets, t.bytes_cut
                );
                if t.returned > 0 {
                    s += &format!(", {} headers returned to their sender", t.returned);
                }
                s += "\n";
            }
        }
        if self.mirror_on_drop_copies > 0 {
            s += &format!(
                "mirror-on-drop (what-if, config.mirror_on_drop): {} truncated copies of refused \
                 packets made (in `made in the chip`; the packets are in `drops`)\n",
                self.mirror_on_drop_copies
            );
        }
        if let Some(t) = self.stopped_at_ps {
            s += &format!(
                "stopped at {} with events left (the scenario's stop_ns, or 1 s of simulated \
                 time after its last input, for a run that would not end)\n",
                Time(t)
            );
        }
        s += &format!(
            "registers, counters, meters and tables at the end{}: state.txt\n",
            match self.reads.len() {
                0 => String::new(),
                1 => ", and the control-plane read".to_string(),
                n => format!(", and the {n} control-plane reads"),
            }
        );
        let [ig, eg] = self.parser_errors_continued;
        if ig + eg > 0 {
            s += &format!("parser errors continued by the program: ingress {ig}, egress {eg}\n");
        }
        if let Some(l) = &self.lockstep {
            s += &format!(
                "lockstep: {} cycles visited (0 to {}); packets in the pipes per cycle, summed over \
                 pipes: ingress {:.3} on average, {} at most in one pipe; egress {:.3}, {} at most\n",
                l.cycles,
                l.last_cycle,
                l.ingress_packet_cycles as f64 / l.cycles.max(1) as f64,
                l.peak_ingress,
                l.egress_packet_cycles as f64 / l.cycles.max(1) as f64,
                l.peak_egress
            );
            s += &format!(
                "lockstep reference: the event engine disagreed with the per-cycle recount at {} \
                 cycles{}\n",
                l.violations,
                self.lockstep_violation
                    .as_ref()
                    .map_or(String::new(), |v| format!(" (first: {v})"))
            );
        }
        s
    }

    /// The reads and the state at the end as people read them (`state.txt`).
    pub fn render_state(&self) -> String {
        readout_text::chip(
            &format!("chip {}, program {}", self.chip, self.program),
            &self.reads,
            &self.state,
        )
    }
}

/// One chip on the bench, with its feeds and capture.
pub struct Bench {
    chip: Chip,
    program: String,
    queue: EventQueue<Ev>,
    feeds: Vec<(u16, Feed)>,
    delayed: Vec<u64>,
    /// Per port: the feed whose frame it received last (to name both of two feeds that
    /// overlap).
    last_feed: Vec<u32>,
    capture: Capture,
    events: u64,
    /// Whether the chip's packet generator has been started.
    started: bool,
    /// Lockstep mode: the cycles visited so far.
    lockstep: Option<Lockstep>,
    /// Every event run, when kept.
    trace: Option<Vec<(Time, Ev)>>,
    /// The per-packet trace's packets, handed out by the chip at the end of a run.
    packet_traces: Vec<PacketTrace>,
    /// No event after this runs, if set; else none after [`DRAIN_LIMIT`] past the last
    /// input (a packet recirculating on every pass would otherwise never end).
    stop_at: Option<Time>,
    /// When the last input frame or control operation is due.
    last_input: Time,
}

/// How long a bench told no stop runs on after its last input: 1 s of simulated time, far
/// longer than any chip takes to drain, so only a run that would never end reaches it.
pub const DRAIN_LIMIT: Time = Time(1_000_000_000_000);

impl Bench {
    /// A chip of `profile` running `program` with `entries` installed.
    pub fn new(
        profile: ChipProfile,
        program: &Program,
        entries: &[ResolvedEntry],
    ) -> Result<Bench, String> {
        let ops: Vec<ResolvedControlOp> = entries
            .iter()
            .cloned()
            .map(ResolvedControlOp::AddEntry)
            .collect();
        Bench::with_config(profile, program, ChipConfig::default(), &ops)
    }

    /// A chip of `profile` configured by `config`, running `program`, with the control-plane
    /// operations `ops` (entries, register values, meter settings) applied before any traffic.
    pub fn with_config(
        profile: ChipProfile,
        program: &Program,
        config: ChipConfig,
        ops: &[ResolvedControlOp],
    ) -> Result<Bench, String> {
        let mut chip = Chip::with_config(profile, program, config).map_err(|e| e.to_string())?;
        for (i, op) in ops.iter().enumerate() {
            chip.apply(op).map_err(|err| format!("entry {i}: {err}"))?;
        }
        Ok(Bench::on_chip(chip, program.name.clone()))
    }

    /// A bench around `chip`, built elsewhere and running the program named `program` (a
    /// network's chip, as a deployment configured it, to feed packets to alone).
    pub fn on_chip(chip: Chip, program: String) -> Bench {
        let ports = chip.port_count() as usize;
        Bench {
            chip,
            program,
            queue: EventQueue::new(),
            feeds: Vec::new(),
            delayed: vec![0; ports],
            last_feed: vec![0; ports],
            capture: Capture::default(),
            events: 0,
            started: false,
            lockstep: None,
            trace: None,
            packet_traces: Vec::new(),
            stop_at: None,
            last_input: Time::ZERO,
        }
    }

    /// The chip.
    pub fn chip(&self) -> &Chip {
        &self.chip
    }

    /// The chip, for the control plane (entries, registers, meters) between runs.
    pub fn chip_mut(&mut self) -> &mut Chip {
        &mut self.chip
    }

    fn check_port(&self, port: u16) -> Result<u32, String> {
        self.chip.port_gbps(port).ok_or_else(|| {
            format!(
                "port {port} does not exist (the chip has ports 0 to {})",
                self.chip.port_count() - 1
            )
        })
    }

    /// Run no event after `at` (instead of [`DRAIN_LIMIT`] after the last input).
    pub fn set_stop(&mut self, at: Time) {
        self.stop_at = Some(at);
    }

    /// Apply a control-plane operation at simulated time `at` (exactly: it affects the packets
    /// that reach its stage at or after `at`; see `Chip::schedule_control`).
    pub fn schedule_control(&mut self, at: Time, op: ResolvedControlOp) {
        self.last_input = self.last_input.max(at);
        self.chip.schedule_control(at, op, &mut self.queue);
    }

    /// Frames entering `port`, each at its intended start time (in order).
    pub fn add_frames(&mut self, port: u16, frames: Vec<(Time, Vec<u8>)>) -> Result<(), String> {
        self.check_port(port)?;
        if frames.windows(2).any(|w| w[1].0 < w[0].0) {
            return Err(format!("frames for port {port} are not in time order"));
        }
        if let Some(&(t, _)) = frames.last() {
            self.last_input = self.last_input.max(t);
        }
        self.feeds.push((port, Feed::Frames { frames, next: 0 }));
        Ok(())
    }

    /// A generator feeding `port`.
    pub fn add_generator(&mut self, port: u16, g: &Generator) -> Result<(), String> {
        let gbps = self.check_port(port)?;
        let feed = GeneratorFeed::new(g, gbps)?;
        if let Some(t) = feed.last_time() {
            self.last_input = self.last_input.max(t);
        }
        self.feeds.push((port, Feed::Generator(feed)));
        Ok(())
    }

    /// Write one pcap per egress port into `dir` (created if needed).
    pub fn capture_pcaps(&mut self, dir: &Path) -> Result<(), String> {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("{}: cannot create directory: {e}", dir.display()))?;
        self.capture.dir = Some(dir.to_path_buf());
        Ok(())
    }

    /// Keep every departure in memory (for tests and small runs).
    pub fn keep_departures(&mut self) {
        self.capture.log = Some(Vec::new());
    }

    /// Departures kept by [`Self::keep_departures`].
    pub fn departures(&self) -> &[Departure] {
        self.capture.log.as_deref().unwrap_or(&[])
    }

    /// Visit every cycle of the chip between events (lockstep mode), or not. Set before
    /// [`Self::run`].
    pub fn set_lockstep(&mut self, on: bool) {
        self.lockstep = on.then(|| Lockstep::new(vec![self.chip.clock()]));
    }

    /// Record every event the kernel runs, with its time.
    pub fn keep_trace(&mut self) {
        self.trace = Some(Vec::new());
    }

    /// The events run so far, when kept ([`Self::keep_trace`]).
    pub fn trace(&self) -> &[(Time, Ev)] {
        self.trace.as_deref().unwrap_or(&[])
    }

    /// Record the per-packet trace of the packets `filter` keeps (`asic_model::trace`); a
    /// filter naming a port the chip lacks is refused. Set before [`Self::run`].
    pub fn set_packet_trace(&mut self, filter: TraceFilter) -> Result<(), String> {
        self.chip.set_trace(filter)
    }

    /// The traced packets, in the order their lives ended (those still inside the chip when
    /// the run stopped last), once [`Self::run`] has run.
    pub fn packet_traces(&self) -> &[PacketTrace] {
        &self.packet_traces
    }

    /// Run until every frame has entered and the chip is empty. A scheduled control operation
    /// the chip refuses stops the run there.
    pub fn run(&mut self) -> Result<RunReport, RunError> {
        if !self.started {
            self.started = true;
            self.chip.start(&mut self.queue);
        }
        // Feeds number fewer than 2³² (each holds a port's frames or generator).
        for (i, (_, f)) in self.feeds.iter().enumerate() {
            if let Some(t) = f.next_time() {
                self.queue.at(t, Ev::Feed(i as u32));
            }
        }
        // One test per event for both (a flag in a register, not two fields in memory).
        let watched = self.lockstep.is_some() || self.trace.is_some();
        let stop_at = self
            .stop_at
            .unwrap_or(Time(self.last_input.ps().saturating_add(DRAIN_LIMIT.ps())));
        let mut stopped = None;
        while let Some(t) = self.queue.peek_time() {
            if t > stop_at {
                stopped = Some(stop_at);
                break;
            }
            let (now, ev) = self.queue.pop().expect("peeked");
            if watched {
                // The visits only read the chip, so taking the event first changes nothing.
                if let Some(l) = &mut self.lockstep {
                    let chip = &mut self.chip;
                    l.advance_to(now, |_, cycle| chip.tick(cycle));
                }
                if let Some(tr) = &mut self.trace {
                    tr.push((now, ev));
                }
            }
            self.events += 1;
            match ev {
                Ev::Chip(e) => {
                    self.chip.handle(now, e, &mut self.queue, &mut self.capture);
                    if let (ChipEvent::Control { .. }, Some(f)) =
                        (e, self.chip.control_failures().first())
                    {
                        return Err(RunError::Control(f.clone()));
                    }
                }
                Ev::Feed(i) => {
                    let (port, feed) = &mut self.feeds[i as usize];
                    let last = &mut self.last_feed[*port as usize];
                    let free_at =
                        match self
                            .chip
                            .receive(*port, now, feed.take(), 0, &mut self.queue)
                        {
                            Ok(t) => t,
                            Err(ChipError::PortBusy {
                                port,
                                start,
                                free_at,
                            }) => {
                                return Err(RunError::InputsOverlap {
                                    input: i as usize,
                                    other: *last as usize,
                                    port,
                                    start,
                                    free_at,
                                })
                            }
                            Err(e) => return Err(RunError::Other(e.to_string())),
                        };
                    *last = i;
                    if let Some(t) = feed.next_time() {
                        if t < free_at {
                            self.delayed[*port as usize] += 1;
                        }
                        self.queue.at(t.max(free_at), Ev::Feed(i));
                    }
                }
            }
        }
        // Packets still inside are traced as such, at the end of the run.
        self.chip.end_trace(stopped.unwrap_or(self.queue.now()));
        self.packet_traces.extend(self.chip.drain_trace());
        if let Some(e) = self.capture.error.take() {
            return Err(RunError::Other(e));
        }
        if let Some(end) = stopped {
            self.chip
                .check_reads_taken(end)
                .map_err(RunError::ReadNotTaken)?;
        }
        for p in self.capture.pcaps.drain(..).flatten() {
            p.finish().map_err(RunError::Other)?;
        }
        Ok(self.report(stopped))
    }

    fn report(&self, stopped: Option<Time>) -> RunReport {
        let ports = (0..self.chip.port_count())
            .filter_map(|port| {
                let c: &PortCounters = self.chip.port_counters(port);
                let delayed = self.delayed[port as usize];
                (c.rx_packets + c.tx_packets + c.pfc_tx() + c.pfc_rx > 0).then(|| PortReport {
                    port,
                    gbps: self.chip.port_gbps(port).unwrap_or(0),
                    rx_packets: c.rx_packets,
                    rx_bytes: c.rx_bytes,
                    tx_packets: c.tx_packets,
                    tx_bytes: c.tx_bytes,
                    drops: c.drops,
                    delayed_to_line_rate: delayed,
                    first_tx_ps: c.first_tx.map(Time::ps),
                    last_tx_ps: c.last_tx.map(Time::ps),
                    pfc_tx: c.pfc_tx(),
                    pfc_rx: c.pfc_rx,
                })
            })
            .collect();
        RunReport {
            chip: self.chip.profile().name.clone(),
            program: self.program.clone(),
            ingress_latency_cycles: self.chip.ingress_latency_cycles(),
            egress_latency_cycles: self.chip.egress_latency_cycles(),
            ports,
            drops: DropReason::ALL
                .iter()
                .filter(|&&r| self.chip.drops(r) > 0)
                .map(|&r| (r.name().to_string(), self.chip.drops(r)))
                .collect(),
            trims: self
                .chip
                .tm()
                .trims()
                .map(|(port, queue, packets, bytes_cut)| TrimReport {
                    port,
                    queue,
                    packets,
                    bytes_cut,
                    returned: self.chip.tm().queue_counters(port, queue).returned_pkts,
                })
                .collect(),
            mirror_on_drop_copies: self.chip.plumbing_counters().mirror_on_drop_copies,
            peak_buffer_cells: self.chip.tm().peak_cells(),
            end_ps: self.queue.now().ps(),
            events: self.events,
            parser_errors_continued: self.chip.parser_errors_continued(),
            created: self.chip.plumbing_counters().created(),
            consumed: self.chip.consumed(),
            held: self.chip.packets_inside() as u64,
            stopped_at_ps: stopped.map(Time::ps),
            lockstep: self
                .lockstep
                .as_ref()
                .map(|_| self.chip.lockstep_counters()),
            lockstep_violation: self.chip.lockstep_violation().map(str::to_string),
            reads: self.chip.control_reads().to_vec(),
            state: self.chip.state(self.queue.now()),
        }
    }
}
