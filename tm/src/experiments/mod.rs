//! Reproducible TM experiments: each returns what the model measured next to what the papers'
//! formulas expect, as plain data (every field says its unit); turning results into tables is
//! the CLI's (`asic tm-experiment`), not the TM's.
//!
//! - [`dt_convergence`]: Dynamic Threshold, N saturated queues converge to `αB/(1+Nα)`.
//! - [`fb_isolation`]: Flexible Buffer on a 60-cell buffer: one high queue (α = 2) and N low
//!   queues (α = 1) on separate ports settle at high 30, lows 15 in aggregate, 15 free; DT
//!   alongside for contrast.
//! - [`fb_gamma`]: five low queues on one port (γ = 1/5) against five ports (γ = 1).
//! - [`fb_bounds`]: FB's closed forms (Theorems 1 and 3, Eq. 8) beside the TM running the
//!   cases they bound.
//! - [`pfc_hysteresis`]: an upstream port sending into a lossless priority of a slower
//!   downstream port: one XOFF per crossing, one XON per release, the upstream stops within
//!   the modelled reaction time and resumes after XON (or after the quanta expire).
//!
//! They drive the TM directly (no chip): ports are served one packet per slot (or at a line
//! rate in the PFC run), sources offer more than that, so queues are saturated. [`run`] runs
//! one by name with its default parameters (the CLI's `asic tm-experiment NAME`).

use crate::config::{
    AdmissionPolicy, ClassConfig, PfcGroup, QueueConfig, SchedulerConfig, TmConfig,
};
use crate::spec::TmSpec;
use crate::{pfc, EnqueueRequest, TrafficManager};
use serde::Serialize;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

pub mod fb_bounds;

/// Names accepted by [`run`].
pub const NAMES: &[&str] = &[
    "dt-convergence",
    "fb-isolation",
    "fb-gamma",
    "fb-low-guarantee",
    "fb-burst-guarantee",
    "fb-occupancy-bound",
    "pfc-hysteresis",
    "pfc-quanta-expiry",
];

/// What one experiment measured, by kind (see [`run`]).
#[derive(Clone, Debug, Serialize)]
pub enum ExperimentResult {
    /// `dt-convergence`.
    Dt(DtResult),
    /// `fb-isolation`.
    FbIsolation(FbResult),
    /// `fb-gamma`.
    FbGamma(FbGammaResult),
    /// `fb-low-guarantee`.
    FbLowGuarantee(Vec<fb_bounds::LowGuaranteeRow>),
    /// `fb-burst-guarantee`.
    FbBurstGuarantee(Vec<fb_bounds::BurstRow>),
    /// `fb-occupancy-bound`.
    FbOccupancyBound(Vec<fb_bounds::OccupancyRow>),
    /// `pfc-hysteresis` and `pfc-quanta-expiry` (the same link with other parameters).
    Pfc(PfcOutcome),
}

/// Runs experiment `name` with its default parameters; `None` for an unknown name.
pub fn run(name: &str) -> Option<ExperimentResult> {
    Some(match name {
        "dt-convergence" => ExperimentResult::Dt(dt_convergence(&DtParams::default())),
        "fb-isolation" => ExperimentResult::FbIsolation(fb_isolation(&FbParams::default())),
        "fb-gamma" => ExperimentResult::FbGamma(fb_gamma(&FbParams::default())),
        "fb-low-guarantee" => ExperimentResult::FbLowGuarantee(fb_bounds::low_guarantee()),
        "fb-burst-guarantee" => ExperimentResult::FbBurstGuarantee(fb_bounds::burst_guarantee(
            &fb_bounds::BurstParams::default(),
        )),
        "fb-occupancy-bound" => {
            ExperimentResult::FbOccupancyBound(fb_bounds::occupancy_bound_run())
        }
        "pfc-hysteresis" => ExperimentResult::Pfc(pfc_hysteresis(&PfcParams::default())),
        "pfc-quanta-expiry" => ExperimentResult::Pfc(pfc_hysteresis(&PfcParams::quanta_expiry())),
        _ => return None,
    })
}

/// The event list of the experiments that run in time: events by time (ps), those at one
/// time in the order they were scheduled.
struct Timeline<E> {
    heap: BinaryHeap<Reverse<(u64, u64, E)>>,
    seq: u64,
}

impl<E: Ord> Timeline<E> {
    fn new() -> Timeline<E> {
        Timeline {
            heap: BinaryHeap::new(),
            seq: 0,
        }
    }

    /// Schedule `e` at `t`.
    fn at(&mut self, t: u64, e: E) {
        self.seq += 1;
        self.heap.push(Reverse((t, self.seq, e)));
    }

    /// The next event and its time.
    fn pop(&mut self) -> Option<(u64, E)> {
        self.heap.pop().map(|Reverse((t, _, e))| (t, e))
    }
}

/// A saturating source: offers `per_slot` packets of `bytes` to (port, queue) every slot.
#[derive(Clone, Copy, Debug)]
struct Source {
    port: u16,
    queue: u16,
}

/// Runs `slots` slots. In each slot every port in turn serves one packet and its sources
/// then offer `per_slot` packets each (arrivals interleave with departures at packet
/// granularity, as on a chip). Calls `observe(slot, tm)` at the end of each slot and pushes
/// the largest buffer occupancy seen after any enqueue of the slot into `max_used`.
fn saturate(
    tm: &mut TrafficManager,
    sources: &[Source],
    bytes: u32,
    per_slot: u32,
    slots: u64,
    mut observe: impl FnMut(u64, &TrafficManager),
    max_used: &mut Vec<u32>,
) {
    let mut handle = 0u32;
    for slot in 0..slots {
        let now = slot * 1_000_000;
        let mut peak = 0;
        for p in 0..tm.port_count() as u16 {
            tm.dequeue(p, now);
            for _ in 0..per_slot {
                for s in sources.iter().filter(|s| s.port == p) {
                    handle = handle.wrapping_add(1);
                    let _ = tm.enqueue(EnqueueRequest {
                        port: s.port,
                        queue: s.queue,
                        ingress_port: 0,
                        priority: 0,
                        color: 0,
                        bytes,
                        handle,
                        now_ps: now,
                    });
                    peak = peak.max(tm.used_cells());
                }
            }
        }
        max_used.push(peak);
        observe(slot, tm);
    }
}

/// Parameters of [`dt_convergence`].
#[derive(Clone, Debug)]
pub struct DtParams {
    /// Buffer (= pool) cells.
    pub cells: u32,
    /// α values.
    pub alphas: Vec<f64>,
    /// Numbers of equal saturated queues (each on its own port).
    pub queues: Vec<usize>,
    /// Packet sizes in cells.
    pub pkt_cells: Vec<u32>,
}

impl Default for DtParams {
    fn default() -> Self {
        DtParams {
            cells: 1200,
            alphas: vec![0.5, 1.0, 2.0, 8.0],
            queues: vec![1, 2, 4, 8],
            pkt_cells: vec![1, 19],
        }
    }
}

/// One row of [`dt_convergence`].
#[derive(Clone, Debug, Serialize)]
pub struct DtRow {
    /// α.
    pub alpha: f64,
    /// Queues.
    pub n: usize,
    /// Packet size, cells.
    pub pkt_cells: u32,
    /// `αB/(1+Nα)`.
    pub expected: f64,
    /// Smallest and largest queue depth at the end (cells).
    pub min: u32,
    /// Largest.
    pub max: u32,
    /// Slot from which every queue stayed within one packet of the expectation.
    pub settled_slot: Option<u64>,
}

/// Result of [`dt_convergence`].
#[derive(Clone, Debug, Serialize)]
pub struct DtResult {
    /// Buffer cells.
    pub cells: u32,
    /// Rows.
    pub rows: Vec<DtRow>,
}

impl DtRow {
    /// Whether every queue ended within one packet of the expectation (strictly).
    pub fn within_one_packet(&self) -> bool {
        (self.min as f64) > self.expected - self.pkt_cells as f64
            && (self.max as f64) < self.expected + self.pkt_cells as f64
    }
}

/// DT convergence: for every α, N and packet size, N saturated queues on N ports.
pub fn dt_convergence(p: &DtParams) -> DtResult {
    let mut rows = Vec::new();
    for &pkt_cells in &p.pkt_cells {
        for &alpha in &p.alphas {
            for &n in &p.queues {
                let spec = TmSpec::small(p.cells, 80, 1);
                let cfg = TmConfig {
                    admission: AdmissionPolicy::DynamicThreshold,
                    classes: vec![ClassConfig { alpha, priority: 0 }],
                    ..TmConfig::default()
                };
                let mut tm = TrafficManager::new(spec, cfg, n).expect("valid DT setup");
                let sources: Vec<Source> = (0..n)
                    .map(|i| Source {
                        port: i as u16,
                        queue: 0,
                    })
                    .collect();
                let expected = alpha * p.cells as f64 / (1.0 + n as f64 * alpha);
                let mut settled: Option<u64> = None;
                let slots = 4 * p.cells as u64 / pkt_cells as u64 + 200;
                let mut last = (0, 0);
                saturate(
                    &mut tm,
                    &sources,
                    pkt_cells * 80,
                    2,
                    slots,
                    |slot, tm| {
                        let d: Vec<u32> = (0..n as u16).map(|q| tm.depth(q, 0).0).collect();
                        let (mn, mx) = (*d.iter().min().unwrap(), *d.iter().max().unwrap());
                        let ok = (mn as f64) > expected - pkt_cells as f64
                            && (mx as f64) < expected + pkt_cells as f64;
                        if ok {
                            settled.get_or_insert(slot);
                        } else {
                            settled = None;
                        }
                        last = (mn, mx);
                    },
                    &mut Vec::new(),
                );
                rows.push(DtRow {
                    alpha,
                    n,
                    pkt_cells,
                    expected,
                    min: last.0,
                    max: last.1,
                    settled_slot: settled,
                });
            }
        }
    }
    DtResult {
        cells: p.cells,
        rows,
    }
}

/// Parameters of [`fb_isolation`] and [`fb_gamma`].
#[derive(Clone, Debug)]
pub struct FbParams {
    /// Buffer cells (the FB paper's examples use 60).
    pub cells: u32,
    /// α of the high class.
    pub alpha_high: f64,
    /// α of the low classes.
    pub alpha_low: f64,
    /// Numbers of low queues to try.
    pub lows: Vec<usize>,
    /// Slots to run; the last half is "settled".
    pub slots: u64,
}

impl Default for FbParams {
    fn default() -> Self {
        FbParams {
            cells: 60,
            alpha_high: 2.0,
            alpha_low: 1.0,
            lows: vec![1, 2, 3, 4, 5, 6, 10, 15],
            slots: 2000,
        }
    }
}

/// One run of [`fb_isolation`].
#[derive(Clone, Debug, Serialize)]
pub struct FbRow {
    /// "fb" or "dt".
    pub policy: &'static str,
    /// Low queues.
    pub n_low: usize,
    /// High queue depth at the end.
    pub high: u32,
    /// Low depths at the end.
    pub lows: Vec<u32>,
    /// Free cells at the end.
    pub free: u32,
    /// Largest occupancy seen over the whole run (any instant).
    pub max_total_run: u32,
    /// Largest occupancy seen in the second half (settled).
    pub max_total_settled: u32,
    /// Expected high, low aggregate and free (formulas).
    pub expected_high: f64,
    /// Expected low aggregate.
    pub expected_low_total: f64,
    /// Expected free.
    pub expected_free: f64,
    /// FB's bound `B(αL+αH)/(1+αL+αH)` (for DT rows, DT's `B·Σα/(1+Σα)`).
    pub bound: f64,
}

/// Result of [`fb_isolation`].
#[derive(Clone, Debug, Serialize)]
pub struct FbResult {
    /// Buffer cells.
    pub cells: u32,
    /// α high, α low.
    pub alphas: (f64, f64),
    /// Rows: FB then DT for each N_L.
    pub rows: Vec<FbRow>,
}

fn two_class_config(policy: AdmissionPolicy, a_high: f64, a_low: f64) -> TmConfig {
    TmConfig {
        admission: policy,
        classes: vec![
            ClassConfig {
                alpha: a_high,
                priority: 1,
            },
            ClassConfig {
                alpha: a_low,
                priority: 0,
            },
        ],
        // Queue 0: the high class; every other queue index: the low class.
        queues: vec![QueueConfig::default()],
        default_queue: QueueConfig {
            class: 1,
            ..QueueConfig::default()
        },
        ..TmConfig::default()
    }
}

/// Runs one high queue and `n_low` low queues on separate ports under `policy`.
pub fn fb_run(p: &FbParams, policy: AdmissionPolicy, n_low: usize) -> FbRow {
    let spec = TmSpec::small(p.cells, 80, 2);
    let cfg = two_class_config(policy, p.alpha_high, p.alpha_low);
    let mut tm = TrafficManager::new(spec, cfg, 1 + n_low).expect("valid FB setup");
    let mut sources = vec![Source { port: 0, queue: 0 }];
    sources.extend((1..=n_low).map(|i| Source {
        port: i as u16,
        queue: 1,
    }));
    let mut max_used = Vec::new();
    saturate(&mut tm, &sources, 80, 2, p.slots, |_, _| {}, &mut max_used);
    let (ah, al, b) = (p.alpha_high, p.alpha_low, p.cells as f64);
    let (exp_free, exp_high, exp_low, bound) = match policy {
        AdmissionPolicy::DynamicThreshold => {
            let free = b / (1.0 + ah + n_low as f64 * al);
            let s = ah + n_low as f64 * al;
            (free, ah * free, n_low as f64 * al * free, b * s / (1.0 + s))
        }
        _ => {
            let free = b / (1.0 + ah + al);
            (free, ah * free, al * free, b * (al + ah) / (1.0 + al + ah))
        }
    };
    FbRow {
        policy: if policy == AdmissionPolicy::DynamicThreshold {
            "dt"
        } else {
            "fb"
        },
        n_low,
        high: tm.depth(0, 0).0,
        lows: (1..=n_low).map(|i| tm.depth(i as u16, 1).0).collect(),
        free: tm.free_cells(),
        max_total_run: max_used.iter().copied().max().unwrap_or(0),
        max_total_settled: max_used[max_used.len() / 2..]
            .iter()
            .copied()
            .max()
            .unwrap_or(0),
        expected_high: exp_high,
        expected_low_total: exp_low,
        expected_free: exp_free,
        bound,
    }
}

/// FB against DT with one high and `lows` low queues on separate ports.
pub fn fb_isolation(p: &FbParams) -> FbResult {
    let mut rows = Vec::new();
    for &n in &p.lows {
        rows.push(fb_run(p, AdmissionPolicy::FlexibleBuffer, n));
    }
    for &n in &p.lows {
        rows.push(fb_run(p, AdmissionPolicy::DynamicThreshold, n));
    }
    FbResult {
        cells: p.cells,
        alphas: (p.alpha_high, p.alpha_low),
        rows,
    }
}

/// Depths of five saturated low queues (α = `alpha_low`) placed on one port (DRR, equal
/// quanta: γ = 1/5 each) or on five ports (γ = 1), under FB.
pub fn fb_gamma_depths(p: &FbParams, one_port: bool) -> (Vec<u32>, u32) {
    let n = 5usize;
    let spec = TmSpec::small(p.cells, 80, n as u16);
    let cfg = TmConfig {
        admission: AdmissionPolicy::FlexibleBuffer,
        classes: vec![ClassConfig {
            alpha: p.alpha_low,
            priority: 0,
        }],
        scheduler: SchedulerConfig::Drr { quanta: Vec::new() },
        ..TmConfig::default()
    };
    let ports = if one_port { 1 } else { n };
    let mut tm = TrafficManager::new(spec, cfg, ports).expect("valid setup");
    let sources: Vec<Source> = (0..n)
        .map(|i| {
            if one_port {
                Source {
                    port: 0,
                    queue: i as u16,
                }
            } else {
                Source {
                    port: i as u16,
                    queue: 0,
                }
            }
        })
        .collect();
    // One port serves one packet per slot for all five queues; to compare like with like the
    // five-port case offers the same per-queue load.
    saturate(
        &mut tm,
        &sources,
        80,
        2,
        p.slots,
        |_, _| {},
        &mut Vec::new(),
    );
    let depths = sources
        .iter()
        .map(|s| tm.depth(s.port, s.queue).0)
        .collect();
    (depths, tm.free_cells())
}

/// One placement of [`fb_gamma`].
#[derive(Clone, Debug, Serialize)]
pub struct FbGammaRow {
    /// The five queues share one port (true) or have a port each.
    pub one_port: bool,
    /// γ of each queue: 1/5 on one port (DRR, equal quanta), 1 on five ports.
    pub gamma: f64,
    /// Depth of each queue at the end, cells.
    pub depths: Vec<u32>,
    /// Free cells at the end.
    pub free: u32,
    /// Expected threshold (depth) of each queue, cells: `α·γ/5 · B/(1 + α·γ)` (Eq. 4).
    pub expected_each: f64,
    /// Expected depth of the five together, cells.
    pub expected_total: f64,
}

/// Result of [`fb_gamma`].
#[derive(Clone, Debug, Serialize)]
pub struct FbGammaResult {
    /// Buffer cells.
    pub cells: u32,
    /// α of the queues' class.
    pub alpha: f64,
    /// One port, then five ports.
    pub rows: Vec<FbGammaRow>,
}

/// The γ effect: five low queues on one port against five ports.
pub fn fb_gamma(p: &FbParams) -> FbGammaResult {
    let rows = [true, false]
        .into_iter()
        .map(|one_port| {
            let gamma = if one_port { 0.2 } else { 1.0 };
            let sum = p.alpha_low * gamma;
            let free = p.cells as f64 / (1.0 + sum);
            let each = p.alpha_low * gamma / 5.0 * free;
            let (depths, free) = fb_gamma_depths(p, one_port);
            FbGammaRow {
                one_port,
                gamma,
                depths,
                free,
                expected_each: each,
                expected_total: each * 5.0,
            }
        })
        .collect();
    FbGammaResult {
        cells: p.cells,
        alpha: p.alpha_low,
        rows,
    }
}

/// Parameters of [`pfc_hysteresis`].
#[derive(Clone, Debug)]
pub struct PfcParams {
    /// Link rate upstream → downstream, Gb/s.
    pub link_gbps: u32,
    /// Downstream egress rate, Gb/s (slower, so the lossless queue builds).
    pub egress_gbps: u32,
    /// Frame size, bytes (no FCS).
    pub frame_bytes: u32,
    /// One-way propagation delay, ps.
    pub prop_ps: u64,
    /// The spec of both TMs (its `pause_reaction_quanta` is the upstream's reaction time).
    pub spec: TmSpec,
    /// XOFF, cells.
    pub xoff_cells: u32,
    /// Hysteresis, cells.
    pub hysteresis_cells: u32,
    /// Headroom, cells; `None`: computed from the worst case (see [`headroom_needed_cells`]).
    pub headroom_cells: Option<u32>,
    /// Pause quanta in the frames.
    pub quanta: u16,
    /// Re-send the pause while XOFF holds.
    pub refresh: bool,
    /// Run length, ps.
    pub duration_ps: u64,
    /// The lossless priority.
    pub priority: u8,
}

impl Default for PfcParams {
    fn default() -> Self {
        let mut spec = TmSpec::small(8192, 80, 8);
        // tofino1-like's reaction time at 100G (see the profile's `pause_reaction_quanta`).
        spec.pause_reaction_quanta = 394;
        PfcParams {
            link_gbps: 100,
            egress_gbps: 25,
            frame_bytes: 1000,
            prop_ps: 500_000,
            spec,
            xoff_cells: 256,
            hysteresis_cells: 128,
            headroom_cells: None,
            quanta: u16::MAX,
            refresh: true,
            duration_ps: 60_000_000,
            priority: 3,
        }
    }
}

impl PfcParams {
    /// The same link with short pauses (2000 quanta: 10.24 µs at 100G) and no refresh: the
    /// upstream resumes when the quanta run out although the downstream still asserts XOFF.
    pub fn quanta_expiry() -> PfcParams {
        PfcParams {
            quanta: 2000,
            refresh: false,
            duration_ps: 30_000_000,
            ..PfcParams::default()
        }
    }
}

/// Ethernet wire time of a frame of `bytes` (no FCS) including FCS, preamble and gap, ps.
pub fn wire_ps(bytes: u32, gbps: u32) -> u64 {
    (bytes.max(60) as u64 + 4 + 8 + 12) * 8 * 1000 / gbps as u64
}

/// Worst-case cells that reach the downstream after it raised XOFF: while the pause frame is
/// serialised (64 B) and propagates, while the upstream reacts, one frame the upstream had
/// started, and everything on the wire (one propagation delay), plus one frame of rounding.
pub fn headroom_needed_cells(p: &PfcParams) -> u32 {
    let window = wire_ps(64, p.link_gbps)
        + 2 * p.prop_ps
        + pfc::reaction_ps(&p.spec, p.link_gbps)
        + 2 * wire_ps(p.frame_bytes, p.link_gbps);
    let frames = window.div_ceil(wire_ps(p.frame_bytes, p.link_gbps)) + 1;
    frames as u32 * p.spec.cells_for(p.frame_bytes as usize)
}

/// One XOFF/XON cycle seen in [`pfc_hysteresis`].
#[derive(Clone, Debug, Default, Serialize)]
pub struct PfcCycle {
    /// XOFF raised by the downstream TM, ps.
    pub xoff_at: u64,
    /// PG cells just after XOFF.
    pub cells_at_xoff: u32,
    /// The pause frame reached the upstream, ps.
    pub pause_rx_at: u64,
    /// Start of the last frame the upstream sent before stopping, ps.
    pub last_tx_start: u64,
    /// XON raised, ps (None: not in the run).
    pub xon_at: Option<u64>,
    /// PG cells just after XON.
    pub cells_at_xon: u32,
    /// The upstream's first frame after the pause, ps.
    pub resumed_at: Option<u64>,
}

impl PfcCycle {
    /// How long after the pause frame reached it the upstream started its last frame, ps
    /// (`None`: no pause frame reached it in this cycle).
    pub fn stop_after_rx_ps(&self) -> Option<u64> {
        (self.pause_rx_at > 0).then(|| self.last_tx_start.saturating_sub(self.pause_rx_at))
    }
}

/// Result of [`pfc_hysteresis`].
#[derive(Clone, Debug, Serialize)]
pub struct PfcOutcome {
    /// Parameters echoed: XOFF, XON, headroom (cells).
    pub xoff_cells: u32,
    /// XON threshold.
    pub xon_cells: u32,
    /// Headroom.
    pub headroom_cells: u32,
    /// The upstream's reaction time, ps.
    pub reaction_ps: u64,
    /// Duration of the pause in a frame, ps.
    pub pause_ps: u64,
    /// Cycles.
    pub cycles: Vec<PfcCycle>,
    /// XOFF and XON events in total.
    pub xoff_events: u64,
    /// XON events.
    pub xon_events: u64,
    /// Pause frames sent (incl. refreshes and XON frames).
    pub frames_sent: u64,
    /// Largest PG occupancy and headroom use, cells.
    pub max_pg_cells: u32,
    /// Largest headroom use.
    pub max_headroom_cells: u32,
    /// Drops downstream.
    pub drops: u64,
    /// Frames delivered downstream.
    pub delivered: u64,
    /// Params echo: refresh on.
    pub refresh: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    /// The upstream MAC may start a frame (generation: stale ones are ignored).
    UpTx(u64),
    /// A frame arrives whole at the downstream ingress.
    DnArrive,
    /// The downstream egress may start a frame.
    DnTx,
    /// A PFC frame reaches the upstream (quanta).
    UpPauseRx(u16),
    /// The upstream honours a pause (until, number of the frame that asked).
    UpPauseApply(u64, u64),
    /// Re-send the pause if still XOFF.
    DnRefresh,
}

/// Two TMs joined by a link: the upstream has an endless backlog in the lossless priority's
/// queue and sends at `link_gbps`; the downstream forwards it out of a `egress_gbps` port. The
/// downstream's PFC events become frames (64 B, after the pause-frame serialisation and the
/// propagation delay); the upstream honours a pause after its reaction time, and resumes on
/// a quanta-0 frame or when the quanta run out.
pub fn pfc_hysteresis(p: &PfcParams) -> PfcOutcome {
    let headroom = p.headroom_cells.unwrap_or_else(|| headroom_needed_cells(p));
    let dn_cfg = TmConfig {
        pfc: crate::config::PfcConfig {
            quanta: p.quanta,
            groups: vec![PfcGroup {
                ports: vec![0],
                priority: p.priority,
                xoff_cells: p.xoff_cells,
                hysteresis_cells: p.hysteresis_cells,
                headroom_cells: headroom,
            }],
        },
        ..TmConfig::default()
    };
    let mut up = TrafficManager::new(p.spec.clone(), TmConfig::default(), 1).expect("upstream");
    let mut dn = TrafficManager::new(p.spec.clone(), dn_cfg, 2).expect("downstream");
    let q = p.priority as u16; // queue i is stopped by PFC priority i (default mapping)
    let up_slot = wire_ps(p.frame_bytes, p.link_gbps);
    let dn_slot = wire_ps(p.frame_bytes, p.egress_gbps);
    let pause_frame = wire_ps(64, p.link_gbps);
    let reaction = pfc::reaction_ps(&p.spec, p.link_gbps);
    let pause_ps = pfc::quanta_ps(p.quanta as u32, p.link_gbps);
    let refresh = pfc::refresh_interval_ps(p.quanta as u32, p.link_gbps);

    let mut timeline = Timeline::new();
    let mut handle = 0u32;
    let offer = |tm: &mut TrafficManager, handle: &mut u32, now: u64| {
        *handle += 1;
        tm.enqueue(EnqueueRequest {
            port: 0,
            queue: q,
            ingress_port: 0,
            priority: p.priority,
            color: 0,
            bytes: p.frame_bytes,
            handle: *handle,
            now_ps: now,
        })
        .expect("the upstream backlog fits");
    };
    // The upstream backlog: kept at 4 frames.
    for _ in 0..4 {
        offer(&mut up, &mut handle, 0);
    }
    let mut up_gen = 0u64;
    timeline.at(0, Ev::UpTx(up_gen));
    let mut up_busy_until = 0u64;
    let mut dn_tx_pending = false;
    let mut dn_busy_until = 0u64;
    let mut out = PfcOutcome {
        xoff_cells: p.xoff_cells,
        xon_cells: p.xoff_cells - p.hysteresis_cells,
        headroom_cells: headroom,
        reaction_ps: reaction,
        pause_ps,
        cycles: Vec::new(),
        xoff_events: 0,
        xon_events: 0,
        frames_sent: 0,
        max_pg_cells: 0,
        max_headroom_cells: 0,
        drops: 0,
        delivered: 0,
        refresh: p.refresh,
    };
    let mut last_tx = 0u64;
    let mut awaiting_resume = false;
    let mut frames_rx = 0u64;
    while let Some((now, ev)) = timeline.pop() {
        if now > p.duration_ps {
            break;
        }
        match ev {
            Ev::UpTx(g) if g != up_gen => {}
            Ev::UpTx(_) => {
                up_gen += 1;
                let t = now.max(up_busy_until);
                if let Some(d) = up.dequeue(0, t) {
                    offer(&mut up, &mut handle, t);
                    if awaiting_resume {
                        if let Some(c) = out.cycles.last_mut() {
                            c.resumed_at = Some(t);
                        }
                        awaiting_resume = false;
                    }
                    last_tx = t;
                    up_busy_until = t + up_slot;
                    let _ = d;
                    timeline.at(up_busy_until + p.prop_ps, Ev::DnArrive);
                    timeline.at(up_busy_until, Ev::UpTx(up_gen));
                } else if let Some(t2) = up.next_eligible_time(0, t) {
                    timeline.at(t2, Ev::UpTx(up_gen));
                }
            }
            Ev::DnArrive => {
                handle += 1;
                match dn.enqueue(EnqueueRequest {
                    port: 1,
                    queue: q,
                    ingress_port: 0,
                    priority: p.priority,
                    color: 0,
                    bytes: p.frame_bytes,
                    handle,
                    now_ps: now,
                }) {
                    Ok(_) => {
                        if !dn_tx_pending {
                            dn_tx_pending = true;
                            timeline.at(now.max(dn_busy_until), Ev::DnTx);
                        }
                    }
                    Err(_) => out.drops += 1,
                }
            }
            Ev::DnTx => {
                dn_tx_pending = false;
                if dn.dequeue(1, now).is_some() {
                    out.delivered += 1;
                    dn_busy_until = now + dn_slot;
                    if dn.has_packets(1) {
                        dn_tx_pending = true;
                        timeline.at(dn_busy_until, Ev::DnTx);
                    }
                }
            }
            Ev::UpPauseRx(quanta) => {
                frames_rx += 1;
                if quanta == 0 {
                    up.resume(0, p.priority, now);
                    up_gen += 1;
                    timeline.at(now.max(up_busy_until), Ev::UpTx(up_gen));
                } else {
                    if let Some(c) = out.cycles.last_mut() {
                        if c.pause_rx_at == 0 {
                            c.pause_rx_at = now;
                        }
                    }
                    // The timer runs from reception; the MAC honours it within the reaction time.
                    let until = now + pfc::quanta_ps(quanta as u32, p.link_gbps);
                    timeline.at(now + reaction, Ev::UpPauseApply(until, frames_rx));
                }
            }
            Ev::UpPauseApply(_, n) if n != frames_rx => {} // a later frame supersedes it
            Ev::UpPauseApply(until, _) => {
                up.pause(0, p.priority, until, now);
                if let Some(c) = out.cycles.last_mut() {
                    if c.xon_at.is_none() {
                        c.last_tx_start = last_tx;
                        awaiting_resume = true;
                    }
                }
                up_gen += 1;
                timeline.at(now.max(up_busy_until), Ev::UpTx(up_gen));
            }
            Ev::DnRefresh => {
                if p.refresh && dn.is_xoff(0, p.priority) {
                    out.frames_sent += 1;
                    timeline.at(now + pause_frame + p.prop_ps, Ev::UpPauseRx(p.quanta));
                    timeline.at(now + refresh, Ev::DnRefresh);
                }
            }
        }
        let (cells, hdrm) = dn.pg_cells(0, p.priority);
        out.max_pg_cells = out.max_pg_cells.max(cells);
        out.max_headroom_cells = out.max_headroom_cells.max(hdrm);
        let events: Vec<_> = dn.drain_pfc_events().collect();
        for e in events {
            out.frames_sent += 1;
            if e.xoff {
                out.xoff_events += 1;
                out.cycles.push(PfcCycle {
                    xoff_at: e.time_ps,
                    cells_at_xoff: cells,
                    ..PfcCycle::default()
                });
                timeline.at(now + pause_frame + p.prop_ps, Ev::UpPauseRx(p.quanta));
                if p.refresh {
                    timeline.at(now + refresh, Ev::DnRefresh);
                }
            } else {
                out.xon_events += 1;
                if let Some(c) = out.cycles.last_mut() {
                    c.xon_at = Some(e.time_ps);
                    c.cells_at_xon = cells;
                }
                timeline.at(now + pause_frame + p.prop_ps, Ev::UpPauseRx(0));
            }
        }
    }
    out
}
