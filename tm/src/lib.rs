//! The traffic manager: a shared packet buffer counted in cells, admission (static, Dynamic
//! Threshold, Flexible Buffer, or a plug-in), egress queues with SP/DRR/WRR schedulers, PFC,
//! ECN, queue-depth export and counters.
//!
//! # Model
//!
//! Packets are not copied into the TM: the chip keeps their bytes and the TM holds a 32-byte
//! descriptor per buffered packet in its queue's ring buffer. A packet of `n` bytes occupies
//! `ceil(n / cell_bytes)` cells (at least 1).
//!
//! **Buffer carving** (the shape of Tofino's TM: QAC egress accounting with per-queue gmin and
//! dynamic shared limits in app pools; WAC ingress accounting per port and priority with PFC
//! and skid headroom). The `cells` of the buffer are split into
//! - a private minimum per queue (`gmin_cells`, on every port),
//! - PFC headroom per lossless (ingress port, priority),
//! - shared pools (`pool_cells`; by default one pool with the rest).
//!
//! A queue's cells are its private cells `min(q, gmin)` plus its shared cells `q − gmin` in its
//! pool, counting only packets not stored in headroom. A packet is admitted
//! 1. to **headroom** if its (ingress port, priority) is lossless and in XOFF, or if it is
//!    lossless and the pool cannot take it (which asserts XOFF); refused with
//!    `HeadroomExhausted` if the headroom is full;
//! 2. without asking anyone if its cells fit under the queue's private minimum;
//! 3. otherwise, for a lossy packet, if the admission policy accepts its shared cells
//!    ([`admission`]; lossless packets are governed by PFC only, as Tofino queues carrying
//!    lossless traffic run without tail drop), and then only if the pool has room (`PoolFull`).
//!
//! Every cell taken is given back exactly once, at dequeue: there is no push-out, and a queued
//! packet leaves only by [`TrafficManager::dequeue`] (thresholds that fall later never evict).
//!
//! **Readings of the papers** (see also [`admission`]):
//! - DT: `T = α·(B − Q(t))` with B the pool's size and Q(t) the pool's shared cells in use
//!   (private minimums and headroom excluded); admit while the queue's shared cells are below T
//!   before the packet.
//! - FB: `T = α_c · γ · (1/N_p) · (B − Q(t))`. N_p = non-empty queues (the paper's
//!   "congested (i.e., non-empty)") whose class has priority p, buffer-wide, counting the
//!   arriving queue. γ = the queue's quantum over the quanta of the non-empty queues of its
//!   scheduling level on its port (counting itself): 1 under strict priority (a queue alone at
//!   its level), `w_i/Σw` under DRR/WRR, the in-group share under SP over DRR. A strict-priority
//!   queue starved by a higher level keeps its in-level γ (the paper needs 0 < γ ≤ 1).
//! - FB single-queue variant: γ = 1, N = every non-empty queue, α of the packet's class (the
//!   class its colour maps to, [`config::ColorConfig`]).
//!
//! # Time
//!
//! The TM has no clock. Every call that depends on time takes `now` as **picoseconds in a
//! `u64`** (the chip passes `pipelines::time::Time::ps()`); the TM never reads the host clock and
//! uses no hash-order iteration. RED draws from a ChaCha8 generator seeded by
//! [`config::TmConfig::seed`]. Same calls, same results.
//!
//! # Using it from the chip
//!
//! - [`TrafficManager::new`]`(spec, config, ports)` once.
//! - At ingress exit: [`TrafficManager::enqueue`] with an [`EnqueueRequest`]; on `Err(reason)`
//!   count a drop under [`Refusal::name`]; on `Ok` schedule a dequeue for the port. The
//!   enqueue depths and the ECN decision come back with the packet in [`Dequeued`], for the
//!   egress metadata.
//! - After every enqueue, dequeue and pause: [`TrafficManager::drain_pfc_events`] and send a
//!   PFC frame out of `ingress_port` for each (see [`pfc`] for quanta and refresh).
//! - Serving a port: [`TrafficManager::dequeue`]`(port, now)`; when it returns `None` but
//!   [`TrafficManager::next_eligible_time`] is `Some(t)`, serve again at `t` (a pause expires).
//! - A PFC frame received on port `p`: [`TrafficManager::pause`] (quanta > 0) or
//!   [`TrafficManager::resume`] (quanta 0), then re-check `next_eligible_time`. A program's
//!   pause or resume of one queue (advanced flow control): [`TrafficManager::set_queue_paused`].
//! - Depth export to ingress: [`export::DepthExport::before_change`] just before every
//!   enqueue and dequeue; ingress reads with [`export::DepthExport::read`].
//!
//! Crates used, and why: `serde` (the TM's dimensions are part of the RON chip profile; its
//! configuration is RON too), `rand_chacha` (seeded, portable RED marking).

pub mod admission;
pub mod config;
mod ecn;
pub mod experiments;
pub mod export;
pub mod pfc;
mod sched;
pub mod spec;
pub mod stats;

use admission::{Admission, AdmissionContext, Alpha, Needs, Policy, Share};
use config::{ClassParams, ConfigError, PgParams, QueueParams, TmConfig, TrimMark};
use pfc::PfcEvent;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;
use sched::PortSched;
use serde::{Deserialize, Serialize};
use spec::TmSpec;
use stats::{PgCounters, QueueCounters, TmCounters, TraceEvent};
use std::collections::VecDeque;

/// A packet offered to the TM at ingress exit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EnqueueRequest {
    /// Egress port.
    pub port: u16,
    /// Queue on the egress port.
    pub queue: u16,
    /// Port the packet came in on (for PFC accounting; a port the TM does not have, e.g. a
    /// recirculation port, is not accounted).
    pub ingress_port: u16,
    /// Its priority (ingress CoS / PFC priority; ≥ the chip's PFC levels: not accounted).
    pub priority: u8,
    /// Its colour (TNA's `packet_color`: green 0, yellow 1, red 3; [`config::Color`]): what
    /// [`config::ColorConfig`] makes of it.
    pub color: u8,
    /// Bytes stored (no FCS).
    pub bytes: u32,
    /// The chip's handle for the packet's bytes.
    pub handle: u32,
    /// Now, picoseconds.
    pub now_ps: u64,
}

/// A packet admitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Admitted {
    /// Cells it occupies.
    pub cells: u32,
    /// Depth of its queue before it, cells.
    pub enq_depth_cells: u32,
    /// Depth of its queue before it, packets.
    pub enq_depth_pkts: u32,
    /// ECN: mark CE if the packet is ECN-capable.
    pub ecn_mark: bool,
    /// Stored in PFC headroom.
    pub headroom: bool,
    /// What-if trimming: refused as it was, the packet was trimmed and queued in the header
    /// queue instead ([`config::TrimConfig`]).
    pub trimmed: Option<Trimmed>,
}

/// How a packet admitted by what-if trimming was cut: the chip keeps `bytes` of it and sets
/// `mark`; the TM queued it on `queue` of the port it asked for, or of `returned_to`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Trimmed {
    /// The header queue it is in.
    pub queue: u16,
    /// Bytes kept (what the TM charged).
    pub bytes: u32,
    /// The flag to set.
    pub mark: Option<TrimMark>,
    /// Returned to its sender ([`config::ReturnToSender`]): queued on this port, the one it
    /// came in on; the chip swaps its addresses.
    pub returned_to: Option<(u16, config::ReturnToSender)>,
}

/// A packet leaving the TM.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dequeued {
    /// The chip's handle.
    pub handle: u32,
    /// Egress port.
    pub port: u16,
    /// The queue it left.
    pub queue: u16,
    /// Bytes.
    pub bytes: u32,
    /// Cells freed.
    pub cells: u32,
    /// Enqueue time, ps (queue delay = now − this).
    pub enq_time_ps: u64,
    /// Depth of its queue before it was enqueued, cells.
    pub enq_depth_cells: u32,
    /// Depth of its queue before it was enqueued, packets.
    pub enq_depth_pkts: u32,
    /// Depth of its queue just after it left, cells.
    pub deq_depth_cells: u32,
    /// Depth of its queue just after it left, packets.
    pub deq_depth_pkts: u32,
    /// Ingress port.
    pub ingress_port: u16,
    /// Priority it was enqueued with.
    pub priority: u8,
    /// The ECN decision made at enqueue.
    pub ecn_mark: bool,
}

/// Why the TM refused a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Refusal {
    /// The egress port does not exist.
    NoSuchPort,
    /// The requested queue does not exist on the port.
    NoSuchQueue,
    /// The packet's class does not exist.
    NoSuchClass,
    /// The physical buffer has fewer free cells than the packet needs.
    BufferFull,
    /// The queue's pool has fewer free cells than the packet's shared part.
    PoolFull,
    /// The queue is at its static limit.
    QueueLimit,
    /// The queue is at or above its Dynamic Threshold.
    DynamicThreshold,
    /// The queue is at or above its Flexible Buffer threshold.
    FlexibleThreshold,
    /// A lossless packet found its PFC headroom full.
    HeadroomExhausted,
}

impl Refusal {
    /// Every reason, in report order (index = `reason as usize`).
    pub const ALL: [Refusal; 9] = [
        Refusal::NoSuchPort,
        Refusal::NoSuchQueue,
        Refusal::NoSuchClass,
        Refusal::BufferFull,
        Refusal::PoolFull,
        Refusal::QueueLimit,
        Refusal::DynamicThreshold,
        Refusal::FlexibleThreshold,
        Refusal::HeadroomExhausted,
    ];

    /// Whether admission refused the packet (a limit), not its destination (no such port,
    /// queue or class).
    pub fn is_admission(self) -> bool {
        !matches!(
            self,
            Refusal::NoSuchPort | Refusal::NoSuchQueue | Refusal::NoSuchClass
        )
    }

    /// A short name for reports.
    pub fn name(self) -> &'static str {
        match self {
            Refusal::NoSuchPort => "tm_no_such_port",
            Refusal::NoSuchQueue => "tm_no_such_queue",
            Refusal::NoSuchClass => "tm_no_such_class",
            Refusal::BufferFull => "tm_buffer_full",
            Refusal::PoolFull => "tm_pool_full",
            Refusal::QueueLimit => "tm_queue_static_limit",
            Refusal::DynamicThreshold => "tm_dt_threshold",
            Refusal::FlexibleThreshold => "tm_fb_threshold",
            Refusal::HeadroomExhausted => "tm_pfc_headroom_exhausted",
        }
    }
}

const F_HEADROOM: u8 = 1;
const F_ECN: u8 = 2;

/// A buffered packet's descriptor (32 bytes).
#[derive(Clone, Copy, Debug)]
struct Desc {
    enq_time_ps: u64,
    handle: u32,
    bytes: u32,
    cells: u32,
    enq_depth_cells: u32,
    enq_depth_pkts: u32,
    ingress_port: u16,
    priority: u8,
    flags: u8,
}

#[derive(Debug, Default)]
struct Queue {
    /// Dynamic Threshold's α: its class's, unless the control plane set it
    /// ([`TrafficManager::set_alpha`]).
    alpha: Alpha,
    fifo: VecDeque<Desc>,
    /// All cells.
    cells: u32,
    /// Cells of packets not in headroom (private + shared).
    nh_cells: u32,
    counters: QueueCounters,
}

#[derive(Debug)]
struct Port {
    sched: PortSched,
    cells: u32,
    pkts: u32,
    pause_until: [u64; 8],
    /// Positions of the queues stopped by each PFC priority.
    prio_mask: [u128; 8],
    /// Positions of queues paused by queue-level flow control.
    queue_paused: u128,
    /// When the pause mask must next be recomputed.
    next_expiry: u64,
}

#[derive(Debug, Default, Clone, Copy)]
struct Pg {
    params: PgParams,
    cells: u32,
    headroom_used: u32,
    xoff: bool,
    counters: PgCounters,
}

#[derive(Debug, Clone, Copy)]
struct Pool {
    size: u32,
    used: u32,
}

/// The queues changed since the log was last taken, each once.
#[derive(Clone, Debug)]
struct ChangeLog {
    queues: Vec<u32>,
    marked: Vec<bool>,
}

impl ChangeLog {
    #[inline]
    fn mark(&mut self, qi: usize) {
        if !self.marked[qi] {
            self.marked[qi] = true;
            self.queues.push(qi as u32);
        }
    }
}

/// The traffic manager of one chip.
#[derive(Debug)]
pub struct TrafficManager {
    spec: TmSpec,
    config: TmConfig,
    nports: usize,
    qpp: usize,
    levels: usize,
    queues: Vec<Queue>,
    /// The queues whose depth changed since a depth export last took them (`None` unless
    /// one asked: [`TrafficManager::log_depth_changes`]).
    depth_changes: Option<ChangeLog>,
    qparams: Vec<QueueParams>,
    classes: Vec<ClassParams>,
    pools: Vec<Pool>,
    ports: Vec<Port>,
    pgs: Vec<Pg>,
    congested_by_prio: Vec<u32>,
    congested_total: u32,
    used_cells: u32,
    private_used: u32,
    headroom_used: u32,
    admission: Policy,
    /// Eighths of its queue's threshold a packet of each `packet_color` value may fill under
    /// DT and Static ([`config::ColorConfig`]; 8 for green), indexed by the value, each the
    /// limit of the value's [`config::Color`]: no match on the per-packet path.
    color_eighths: [u8; 4],
    rng: ChaCha8Rng,
    pfc_events: Vec<PfcEvent>,
    trace: Option<Vec<TraceEvent>>,
    counters: TmCounters,
}

impl TrafficManager {
    /// A TM with `ports` egress ports (and as many ingress ports), all queues empty.
    pub fn new(
        spec: TmSpec,
        config: TmConfig,
        ports: usize,
    ) -> Result<TrafficManager, ConfigError> {
        let r = config.resolve(&spec, ports)?;
        let qpp = spec.queues_per_port as usize;
        let levels = spec.pfc_levels as usize;
        let max_prio = r.classes.iter().map(|c| c.priority).max().unwrap_or(0) as usize;
        let ports_v = (0..ports)
            .map(|p| {
                let sched = PortSched::new(&r.scheds[p]);
                let mut prio_mask = [0u128; 8];
                for (q, qp) in r.queues.iter().enumerate() {
                    prio_mask[qp.pfc_priority as usize] |= sched.bit(q as u16);
                }
                Port {
                    sched,
                    cells: 0,
                    pkts: 0,
                    pause_until: [0; 8],
                    prio_mask,
                    queue_paused: 0,
                    next_expiry: u64::MAX,
                }
            })
            .collect();
        let pgs = r
            .pgs
            .iter()
            .map(|&params| Pg {
                params,
                ..Pg::default()
            })
            .collect();
        Ok(TrafficManager {
            nports: ports,
            qpp,
            levels,
            queues: (0..ports * qpp)
                .map(|i| Queue {
                    alpha: r.queues[i % qpp].class_alpha,
                    ..Queue::default()
                })
                .collect(),
            depth_changes: None,
            qparams: r.queues,
            classes: r.classes,
            pools: r.pools.iter().map(|&size| Pool { size, used: 0 }).collect(),
            ports: ports_v,
            pgs,
            congested_by_prio: vec![0; max_prio + 1],
            congested_total: 0,
            used_cells: 0,
            private_used: 0,
            headroom_used: 0,
            admission: Policy::builtin(config.admission),
            color_eighths: [0, 1, 2, 3].map(|v| match config::Color::of(v) {
                config::Color::Green => 8,
                config::Color::Yellow => config.color.yellow_eighths,
                config::Color::Red => config.color.red_eighths,
            }),
            rng: ChaCha8Rng::seed_from_u64(config.seed.unwrap_or(0)),
            pfc_events: Vec::new(),
            trace: if config.trace { Some(Vec::new()) } else { None },
            counters: TmCounters::default(),
            spec,
            config,
        })
    }

    /// The dimensions.
    pub fn spec(&self) -> &TmSpec {
        &self.spec
    }

    /// The configuration.
    pub fn config(&self) -> &TmConfig {
        &self.config
    }

    /// Number of ports.
    pub fn port_count(&self) -> usize {
        self.nports
    }

    /// Replace the admission policy (a plug-in such as ABM).
    pub fn set_admission(&mut self, policy: Box<dyn Admission>) {
        self.admission = Policy::asked(policy);
    }

    /// The admission policy's name.
    pub fn admission_name(&self) -> &'static str {
        self.admission.name()
    }

    #[cold]
    fn refuse(&mut self, req: &EnqueueRequest, reason: Refusal) -> Result<Admitted, Refusal> {
        self.counters.drops[reason as usize] += 1;
        if (req.port as usize) < self.nports && (req.queue as usize) < self.qpp {
            let i = req.port as usize * self.qpp + req.queue as usize;
            self.queues[i].counters.drops[reason as usize] += 1;
        }
        if let Some(t) = &mut self.trace {
            t.push(TraceEvent::Drop {
                t: req.now_ps,
                port: req.port,
                queue: req.queue,
                reason,
            });
        }
        Err(reason)
    }

    /// The figures behind refusing `req` for `reason`, as a person reads them: the limit and
    /// what met it. A refusal changes no cell count, so asked right after [`Self::enqueue`]
    /// refused `req`, the figures are those the decision saw. `None` where there is no figure
    /// (no such port, queue or class) and for Flexible Buffer and plug-in policies, whose
    /// thresholds are their own.
    pub fn refusal_detail(&self, req: &EnqueueRequest, reason: Refusal) -> Option<String> {
        if req.port as usize >= self.nports || req.queue as usize >= self.qpp {
            return None;
        }
        let qp = self.qparams[req.queue as usize];
        let q = &self.queues[req.port as usize * self.qpp + req.queue as usize];
        let cells = self.spec.cells_for(req.bytes as usize).max(1);
        let shared = q.nh_cells.saturating_sub(qp.gmin);
        let needed = (q.nh_cells + cells).saturating_sub(qp.gmin) - shared;
        let pool = self.pools[qp.pool as usize];
        let free = pool.size.saturating_sub(pool.used);
        Some(match reason {
            Refusal::BufferFull => format!(
                "the packet needs {cells} cells; {} of the buffer's {} are free",
                self.spec.cells - self.used_cells,
                self.spec.cells
            ),
            Refusal::PoolFull => format!(
                "the packet needs {needed} shared cells; pool {} has {free} of {} free",
                qp.pool, pool.size
            ),
            Refusal::QueueLimit => {
                let color = config::Color::of(req.color);
                let eighths = self.color_eighths[(req.color & 3) as usize];
                let limit = admission::color_limit(qp.static_limit.unwrap_or(0), eighths);
                let whose = if eighths == 8 {
                    String::from("its static limit")
                } else {
                    format!("the {color:?} packet's limit ({eighths}/8 of the static limit)")
                };
                format!(
                    "the queue holds {shared} shared cells; {needed} more would pass {whose} \
                     of {limit}"
                )
            }
            Refusal::DynamicThreshold => {
                let alpha = q.alpha.to_f64();
                let color = config::Color::of(req.color);
                let eighths = self.color_eighths[(req.color & 3) as usize];
                if eighths == 8 {
                    let threshold = alpha * free as f64;
                    format!(
                        "the queue holds {shared} shared cells, at or above its threshold \
                         α·(pool free) = {alpha} × {free} = {threshold} cells"
                    )
                } else {
                    let threshold = eighths as f64 / 8.0 * alpha * free as f64;
                    format!(
                        "the queue holds {shared} shared cells, at or above the {color:?} \
                         packet's limit {eighths}/8 × α·(pool free) = {eighths}/8 × {alpha} × \
                         {free} = {threshold} cells"
                    )
                }
            }
            Refusal::HeadroomExhausted => {
                let pg = &self.pgs[self.pg_index(req.ingress_port, req.priority)?];
                format!(
                    "the packet needs {cells} cells; the PFC headroom of port {} priority {} \
                     holds {} of {}",
                    req.ingress_port, req.priority, pg.headroom_used, pg.params.headroom
                )
            }
            Refusal::NoSuchPort | Refusal::NoSuchQueue | Refusal::NoSuchClass => return None,
            Refusal::FlexibleThreshold => return None,
        })
    }

    fn pg_index(&self, ingress_port: u16, priority: u8) -> Option<usize> {
        if (ingress_port as usize) < self.nports && (priority as usize) < self.levels {
            Some(ingress_port as usize * self.levels + priority as usize)
        } else {
            None
        }
    }

    /// (Ingress port, priority) `pgi` enters XOFF (`xoff`) or leaves it (its cells fell below
    /// XON): counted, and a PFC event for the chip to send (and the trace). Nothing if it is
    /// already in that state.
    #[cold]
    fn set_xoff(&mut self, pgi: usize, xoff: bool, now_ps: u64) {
        let pg = &mut self.pgs[pgi];
        if pg.xoff == xoff {
            return;
        }
        pg.xoff = xoff;
        if xoff {
            pg.counters.xoff += 1;
        } else {
            pg.counters.xon += 1;
        }
        let (port, priority) = ((pgi / self.levels) as u16, (pgi % self.levels) as u8);
        self.pfc_events.push(PfcEvent {
            time_ps: now_ps,
            ingress_port: port,
            priority,
            xoff,
        });
        if let Some(t) = &mut self.trace {
            t.push(TraceEvent::Pfc {
                t: now_ps,
                port,
                priority,
                xoff,
            });
        }
    }

    /// Asks a policy that is not built in (FB, a plug-in) whether a lossy packet of `cells`
    /// cells may take `shared_needed` shared cells from a queue holding `q_nh` cells outside
    /// headroom (`shared_before` of them shared) and `q_pkts` packets.
    #[inline(never)]
    fn ask_policy(
        &mut self,
        req: &EnqueueRequest,
        cells: u32,
        q_nh: u32,
        q_pkts: u32,
        shared_before: u32,
        shared_needed: u32,
    ) -> Result<(), Refusal> {
        let qp = self.qparams[req.queue as usize];
        let Policy::Asked { policy, needs } = &mut self.admission else {
            unreachable!("only a policy that is not built in is asked");
        };
        let class_id = match self.config.color.classes.as_slice() {
            [] => qp.class,
            classes => classes[config::Color::of(req.color) as usize],
        };
        let Some(&class) = self.classes.get(class_id as usize) else {
            return Err(Refusal::NoSuchClass);
        };
        let pool = self.pools[qp.pool as usize];
        let was_empty = q_pkts == 0;
        let gamma = if needs.gamma {
            let (num, den) = self.ports[req.port as usize].sched.gamma(req.queue);
            Share { num, den }
        } else {
            Share::ONE
        };
        let ctx = AdmissionContext {
            now_ps: req.now_ps,
            port: req.port,
            queue: req.queue,
            pkt_cells: cells,
            shared_cells_needed: shared_needed,
            queue_cells: q_nh,
            queue_shared_cells: shared_before,
            queue_pkts: q_pkts,
            pool_cells: pool.size,
            pool_used: pool.used,
            alpha: class.alpha,
            priority: class.priority,
            congested_in_priority: self
                .congested_by_prio
                .get(class.priority as usize)
                .copied()
                .unwrap_or(0)
                + (was_empty && qp.class_priority == class.priority) as u32,
            congested_total: self.congested_total + was_empty as u32,
            gamma,
            static_limit: qp.static_limit,
        };
        policy.admit(&ctx)
    }

    /// Offer a packet. On `Ok` it is queued (trimmed, if [`Admitted::trimmed`] says so); on
    /// `Err` it was not, and the reason is counted.
    pub fn enqueue(&mut self, req: EnqueueRequest) -> Result<Admitted, Refusal> {
        match self.admit(&req) {
            Ok(a) => Ok(a),
            Err(r) => self.trim_or_refuse(&req, r),
        }
    }

    /// What-if trimming ([`config::TrimConfig`]): `req`, refused for `reason`, cut to the configured
    /// bytes and offered to the header queue of its port, then (returning to the sender) to
    /// the header queue of the port it came in on; refused (and counted) as it was if
    /// trimming is off or does not apply, or for the last header queue's reason (counted
    /// there) if that refuses it too.
    #[cold]
    fn trim_or_refuse(
        &mut self,
        req: &EnqueueRequest,
        reason: Refusal,
    ) -> Result<Admitted, Refusal> {
        let trim = match self.config.trim {
            Some(t) if t.queue != req.queue && reason.is_admission() => t,
            _ => return self.refuse(req, reason),
        };
        let header = EnqueueRequest {
            queue: trim.queue,
            bytes: req.bytes.min(trim.bytes),
            ..*req
        };
        let (mut a, returned_to) = match (self.admit(&header), trim.return_to_sender) {
            (Ok(a), _) => (a, None),
            (Err(r), None) => return self.refuse(&header, r),
            (Err(_), Some(back)) => {
                let returned = EnqueueRequest {
                    port: req.ingress_port,
                    ..header
                };
                match self.admit(&returned) {
                    Ok(a) => (a, Some((req.ingress_port, back))),
                    Err(r) => return self.refuse(&returned, r),
                }
            }
        };
        let cut = (req.bytes - header.bytes) as u64;
        let c = &mut self.queues[req.port as usize * self.qpp + req.queue as usize].counters;
        c.trimmed_pkts += 1;
        c.trimmed_bytes += cut;
        c.returned_pkts += returned_to.is_some() as u64;
        self.counters.trimmed_pkts += 1;
        self.counters.trimmed_bytes += cut;
        self.counters.returned_pkts += returned_to.is_some() as u64;
        if let Some(t) = &mut self.trace {
            t.push(TraceEvent::Trim {
                t: req.now_ps,
                port: req.port,
                queue: req.queue,
                to_queue: trim.queue,
                bytes: header.bytes,
            });
        }
        a.trimmed = Some(Trimmed {
            queue: trim.queue,
            bytes: header.bytes,
            mark: trim.mark,
            returned_to,
        });
        Ok(a)
    }

    /// Admission of `req` and, if admitted, its enqueue; a refusal changes nothing (the
    /// caller counts it).
    fn admit(&mut self, req: &EnqueueRequest) -> Result<Admitted, Refusal> {
        let req = *req;
        if req.port as usize >= self.nports {
            return Err(Refusal::NoSuchPort);
        }
        if req.queue as usize >= self.qpp {
            return Err(Refusal::NoSuchQueue);
        }
        let qi = req.port as usize * self.qpp + req.queue as usize;
        let qp = self.qparams[req.queue as usize];
        let cells = self.spec.cells_for(req.bytes as usize).max(1);
        if self.used_cells as u64 + cells as u64 > self.spec.cells as u64 {
            return Err(Refusal::BufferFull);
        }
        let pgi = self.pg_index(req.ingress_port, req.priority);
        let (lossless, xoff) = pgi.map_or((false, false), |i| {
            let pg = &self.pgs[i];
            (pg.params.enabled, pg.xoff)
        });

        let q = &self.queues[qi];
        let (q_cells, q_nh, q_pkts) = (q.cells, q.nh_cells, q.fifo.len() as u32);
        let q_alpha = q.alpha;
        let shared_before = q_nh.saturating_sub(qp.gmin);
        let shared_after = (q_nh + cells).saturating_sub(qp.gmin);
        let shared_needed = shared_after - shared_before;
        let pool = self.pools[qp.pool as usize];

        let mut to_headroom = lossless && xoff;
        if !to_headroom && shared_needed > 0 {
            if !lossless {
                // The packet's colour drop limit (8 eighths for green, and by default).
                let eighths = self.color_eighths[(req.color & 3) as usize];
                let verdict = match self.admission {
                    Policy::DynamicThreshold => {
                        let admits = if eighths == 8 {
                            admission::dt_admits(shared_before, q_alpha, pool.size, pool.used)
                        } else {
                            admission::dt_admits_eighths(
                                shared_before,
                                q_alpha,
                                eighths,
                                pool.size,
                                pool.used,
                            )
                        };
                        admits.then_some(()).ok_or(Refusal::DynamicThreshold)
                    }
                    Policy::Static => admission::static_admits(
                        shared_before,
                        shared_needed,
                        qp.static_limit.map(|l| admission::color_limit(l, eighths)),
                    )
                    .then_some(())
                    .ok_or(Refusal::QueueLimit),
                    Policy::Asked { .. } => {
                        self.ask_policy(&req, cells, q_nh, q_pkts, shared_before, shared_needed)
                    }
                };
                verdict?;
            }
            if pool.used as u64 + shared_needed as u64 > pool.size as u64 {
                if lossless {
                    to_headroom = true;
                } else {
                    return Err(Refusal::PoolFull);
                }
            }
        }
        if to_headroom {
            let i = pgi.expect("lossless");
            let pg = &self.pgs[i];
            if pg.headroom_used as u64 + cells as u64 > pg.params.headroom as u64 {
                return Err(Refusal::HeadroomExhausted);
            }
            self.set_xoff(i, true, req.now_ps);
        }

        // Admitted: charge the cells.
        let ecn_mark = ecn::mark(&qp.ecn, q_cells, &mut self.rng);
        let desc = Desc {
            enq_time_ps: req.now_ps,
            handle: req.handle,
            bytes: req.bytes,
            cells,
            enq_depth_cells: q_cells,
            enq_depth_pkts: q_pkts,
            ingress_port: req.ingress_port,
            priority: req.priority,
            flags: if to_headroom { F_HEADROOM } else { 0 } | if ecn_mark { F_ECN } else { 0 },
        };
        let q = &mut self.queues[qi];
        q.fifo.push_back(desc);
        q.cells += cells;
        if let Some(log) = &mut self.depth_changes {
            log.mark(qi);
        }
        let c = &mut q.counters;
        c.enq_pkts += 1;
        c.enq_cells += cells as u64;
        c.enq_bytes += req.bytes as u64;
        c.ecn_marks += ecn_mark as u64;
        c.max_depth_cells = c.max_depth_cells.max(q.cells);
        let depth_after = q.cells;
        if to_headroom {
            c.headroom_pkts += 1;
            self.headroom_used += cells;
            let pg = &mut self.pgs[pgi.expect("lossless")];
            pg.headroom_used += cells;
            pg.counters.max_headroom_cells = pg.counters.max_headroom_cells.max(pg.headroom_used);
        } else {
            q.nh_cells += cells;
            self.pools[qp.pool as usize].used += shared_needed;
            self.private_used += cells - shared_needed;
        }
        let port = &mut self.ports[req.port as usize];
        if q_pkts == 0 {
            self.congested_total += 1;
            self.congested_by_prio[qp.class_priority as usize] += 1;
            port.sched.on_nonempty(req.queue);
        }
        port.cells += cells;
        port.pkts += 1;
        self.used_cells += cells;
        self.counters.cells_allocated += cells as u64;
        self.counters.peak_cells = self.counters.peak_cells.max(self.used_cells);
        if let Some(i) = pgi {
            let pg = &mut self.pgs[i];
            pg.cells += cells;
            pg.counters.max_cells = pg.counters.max_cells.max(pg.cells);
            if pg.params.enabled && !pg.xoff && pg.cells > pg.params.xoff {
                self.set_xoff(i, true, req.now_ps);
            }
        }
        if let Some(t) = &mut self.trace {
            t.push(TraceEvent::Enqueue {
                t: req.now_ps,
                port: req.port,
                queue: req.queue,
                depth_cells: depth_after,
                used_cells: self.used_cells,
            });
        }
        Ok(Admitted {
            cells,
            enq_depth_cells: q_cells,
            enq_depth_pkts: q_pkts,
            ecn_mark,
            headroom: to_headroom,
            trimmed: None,
        })
    }

    fn blocked_at(&self, port: usize, t: u64) -> u128 {
        let p = &self.ports[port];
        let mut b = p.queue_paused;
        for (prio, &until) in p.pause_until.iter().enumerate().take(self.levels) {
            if until > t {
                b |= p.prio_mask[prio];
            }
        }
        b
    }

    fn refresh_pause(&mut self, port: usize, now_ps: u64) {
        if now_ps < self.ports[port].next_expiry {
            return;
        }
        let blocked = self.blocked_at(port, now_ps);
        let p = &mut self.ports[port];
        p.sched.blocked = blocked;
        p.next_expiry = p
            .pause_until
            .iter()
            .copied()
            .filter(|&u| u > now_ps)
            .min()
            .unwrap_or(u64::MAX);
    }

    /// Serve `port` by its scheduler: the next packet of a non-empty queue that is not paused
    /// at `now_ps`, freeing its cells. `None` if there is none.
    pub fn dequeue(&mut self, port: u16, now_ps: u64) -> Option<Dequeued> {
        let pi = port as usize;
        if pi >= self.nports {
            return None;
        }
        self.refresh_pause(pi, now_ps);
        let base = pi * self.qpp;
        let queues = &mut self.queues[base..base + self.qpp];
        let queue = self.ports[pi]
            .sched
            .pick(|q| queues[q as usize].fifo.front().map_or(0, |d| d.bytes))?;
        let qp = &self.qparams[queue as usize];
        let q = &mut queues[queue as usize];
        let d = q
            .fifo
            .pop_front()
            .expect("scheduler picks non-empty queues");
        q.cells -= d.cells;
        if let Some(log) = &mut self.depth_changes {
            log.mark(base + queue as usize);
        }
        let c = &mut q.counters;
        c.deq_pkts += 1;
        c.deq_cells += d.cells as u64;
        c.deq_bytes += d.bytes as u64;
        let (deq_depth_cells, deq_depth_pkts) = (q.cells, q.fifo.len() as u32);
        if d.flags & F_HEADROOM != 0 {
            self.headroom_used -= d.cells;
            let pgi = self
                .pg_index(d.ingress_port, d.priority)
                .expect("headroom has a PG");
            self.pgs[pgi].headroom_used -= d.cells;
        } else {
            let shared_before = q.nh_cells.saturating_sub(qp.gmin);
            q.nh_cells -= d.cells;
            let freed_shared = shared_before - q.nh_cells.saturating_sub(qp.gmin);
            self.pools[qp.pool as usize].used -= freed_shared;
            self.private_used -= d.cells - freed_shared;
        }
        if deq_depth_pkts == 0 {
            self.congested_total -= 1;
            self.congested_by_prio[qp.class_priority as usize] -= 1;
            self.ports[pi].sched.on_empty(queue);
        }
        let p = &mut self.ports[pi];
        p.cells -= d.cells;
        p.pkts -= 1;
        self.used_cells -= d.cells;
        self.counters.cells_freed += d.cells as u64;
        if let Some(pgi) = self.pg_index(d.ingress_port, d.priority) {
            let pg = &mut self.pgs[pgi];
            pg.cells -= d.cells;
            if pg.xoff && pg.cells < pg.params.xon {
                self.set_xoff(pgi, false, now_ps);
            }
        }
        if let Policy::Asked {
            policy,
            needs: Needs { dequeues: true, .. },
        } = &mut self.admission
        {
            policy.on_dequeue(port, queue, d.cells, now_ps);
        }
        if let Some(t) = &mut self.trace {
            t.push(TraceEvent::Dequeue {
                t: now_ps,
                port,
                queue,
                depth_cells: deq_depth_cells,
                used_cells: self.used_cells,
            });
        }
        Some(Dequeued {
            handle: d.handle,
            port,
            queue,
            bytes: d.bytes,
            cells: d.cells,
            enq_time_ps: d.enq_time_ps,
            enq_depth_cells: d.enq_depth_cells,
            enq_depth_pkts: d.enq_depth_pkts,
            deq_depth_cells,
            deq_depth_pkts,
            ingress_port: d.ingress_port,
            priority: d.priority,
            ecn_mark: d.flags & F_ECN != 0,
        })
    }

    /// Whether PFC events are waiting to be drained (the chip asks after every event).
    #[inline]
    pub fn has_pfc_events(&self) -> bool {
        !self.pfc_events.is_empty()
    }

    /// PFC events raised since the last call, in order.
    pub fn drain_pfc_events(&mut self) -> std::vec::Drain<'_, PfcEvent> {
        self.pfc_events.drain(..)
    }

    /// Whether the TM asserts a pause towards `ingress_port` for `priority` (the chip
    /// refreshes the pause frame while this holds).
    pub fn is_xoff(&self, ingress_port: u16, priority: u8) -> bool {
        self.pg_index(ingress_port, priority)
            .is_some_and(|i| self.pgs[i].xoff)
    }

    /// A PFC frame received on `port` pauses `priority` until `until_ps` (replacing any earlier
    /// pause of that priority, as 802.1Qbb's timer restart); `until_ps ≤ now_ps` resumes.
    /// The queues mapped to the priority are not served meanwhile.
    pub fn pause(&mut self, port: u16, priority: u8, until_ps: u64, now_ps: u64) {
        let pi = port as usize;
        if pi >= self.nports || priority as usize >= self.levels {
            return;
        }
        self.counters.pause_rx += 1;
        self.ports[pi].pause_until[priority as usize] = until_ps;
        self.ports[pi].next_expiry = 0;
        self.refresh_pause(pi, now_ps);
        if let Some(t) = &mut self.trace {
            t.push(TraceEvent::PauseRx {
                t: now_ps,
                port,
                priority,
                until: until_ps,
            });
        }
    }

    /// A PFC frame with quanta 0: `priority` on `port` may send again.
    pub fn resume(&mut self, port: u16, priority: u8, now_ps: u64) {
        self.pause(port, priority, 0, now_ps);
    }

    /// Queue-level flow control (Tofino2 AFC): stop or restart serving one queue.
    pub fn set_queue_paused(&mut self, port: u16, queue: u16, paused: bool, now_ps: u64) {
        let pi = port as usize;
        if pi >= self.nports || queue as usize >= self.qpp {
            return;
        }
        let p = &mut self.ports[pi];
        let bit = p.sched.bit(queue);
        if paused {
            p.queue_paused |= bit;
        } else {
            p.queue_paused &= !bit;
        }
        p.next_expiry = 0;
        self.refresh_pause(pi, now_ps);
        if let Some(t) = &mut self.trace {
            t.push(TraceEvent::QueuePause {
                t: now_ps,
                port,
                queue,
                paused,
            });
        }
    }

    /// Whether `queue` of `port` is paused by queue-level flow control (AFC) alone.
    pub fn is_queue_paused(&self, port: u16, queue: u16) -> bool {
        let pi = port as usize;
        pi < self.nports
            && (queue as usize) < self.qpp
            && self.ports[pi].queue_paused & self.ports[pi].sched.bit(queue) != 0
    }

    /// Whether `queue` of `port` is paused (by PFC or queue pause) at `now_ps`.
    pub fn is_paused(&self, port: u16, queue: u16, now_ps: u64) -> bool {
        let pi = port as usize;
        if pi >= self.nports || queue as usize >= self.qpp {
            return false;
        }
        self.blocked_at(pi, now_ps) & self.ports[pi].sched.bit(queue) != 0
    }

    /// The earliest time at or after `now_ps` when `port` has a packet it may send: `now_ps` if
    /// one is eligible now, the end of a pause if only paused queues hold packets, `None` if
    /// the port is empty or its packets wait on a queue pause with no end.
    pub fn next_eligible_time(&self, port: u16, now_ps: u64) -> Option<u64> {
        let pi = port as usize;
        if pi >= self.nports {
            return None;
        }
        let p = &self.ports[pi];
        let nonempty = p.sched.nonempty;
        if nonempty == 0 {
            return None;
        }
        if nonempty & !self.blocked_at(pi, now_ps) != 0 {
            return Some(now_ps);
        }
        let mut ends: Vec<u64> = Vec::new();
        ends.extend(p.pause_until.iter().copied().filter(|&u| u > now_ps));
        ends.sort_unstable();
        ends.into_iter()
            .find(|&t| nonempty & !self.blocked_at(pi, t) != 0)
    }

    /// Whether `port` holds packets (paused or not).
    pub fn has_packets(&self, port: u16) -> bool {
        self.ports
            .get(port as usize)
            .is_some_and(|p| p.sched.nonempty != 0)
    }

    /// Dynamic Threshold's α of `queue` on `port`: its class's, unless set at run time;
    /// `None` for a queue the TM lacks.
    pub fn alpha(&self, port: u16, queue: u16) -> Option<f64> {
        let q = self.queues.get(self.queue_index(port, queue)?)?;
        Some(q.alpha.to_f64())
    }

    /// Sets Dynamic Threshold's α of one queue at run time (a control plane that rewrites a
    /// queue's α, as the FB paper's FBA does; a Tofino's is its queue's dynamic "burst
    /// absorption factor", `bf_tm_q_app_pool_usage_set`, one of nine settings, where the model
    /// takes any α in (0, 65535]). Packets already queued stay (no push-out).
    pub fn set_alpha(&mut self, port: u16, queue: u16, alpha: f64) -> Result<(), ConfigError> {
        let Some(i) = self.queue_index(port, queue) else {
            return Err(ConfigError {
                field: format!("port {port} queue {queue}"),
                reason: format!("the TM has {} ports of {} queues", self.nports, self.qpp),
            });
        };
        self.queues[i].alpha = Alpha::from_f64(alpha).ok_or_else(|| ConfigError {
            field: format!("port {port} queue {queue} alpha"),
            reason: format!("{alpha} is not in (0, 65535]"),
        })?;
        Ok(())
    }

    /// Flexible Buffer's γ of `queue` on `port` as the scheduler gives it: the queue's
    /// quantum over the quanta of the non-empty queues of its level on its port, counting
    /// itself, as (numerator, denominator); `None` for a queue the TM lacks.
    pub fn service_share(&self, port: u16, queue: u16) -> Option<(u64, u64)> {
        self.queue_index(port, queue)?;
        Some(self.ports[port as usize].sched.gamma(queue))
    }

    /// Non-empty queues whose class has buffer priority `priority`, buffer-wide (Flexible
    /// Buffer's N_p).
    pub fn congested_queues(&self, priority: u8) -> u32 {
        self.congested_by_prio
            .get(priority as usize)
            .copied()
            .unwrap_or(0)
    }

    fn queue_index(&self, port: u16, queue: u16) -> Option<usize> {
        ((port as usize) < self.nports && (queue as usize) < self.qpp)
            .then(|| port as usize * self.qpp + queue as usize)
    }

    /// Depth of `queue` on `port`: (cells, packets).
    pub fn depth(&self, port: u16, queue: u16) -> (u32, u32) {
        self.queue_index(port, queue).map_or((0, 0), |i| {
            let q = &self.queues[i];
            (q.cells, q.fifo.len() as u32)
        })
    }

    /// Depth of `port` over all its queues: (cells, packets).
    pub fn port_depth(&self, port: u16) -> (u32, u32) {
        self.ports
            .get(port as usize)
            .map_or((0, 0), |p| (p.cells, p.pkts))
    }

    /// Cells queued for `port`.
    pub fn port_depth_cells(&self, port: u16) -> u32 {
        self.port_depth(port).0
    }

    /// Packets queued for `port`.
    pub fn port_depth_packets(&self, port: u16) -> usize {
        self.port_depth(port).1 as usize
    }

    /// Every queue depth in cells, `port * queues_per_port + queue`, into `buf` (cleared first).
    pub fn snapshot_into(&self, buf: &mut Vec<u32>) {
        buf.clear();
        buf.extend(self.queues.iter().map(|q| q.cells));
    }

    /// From now on, log which queues' depths change, for a depth export to take
    /// ([`TrafficManager::take_depth_changes`]): a copy of the changed queues only.
    pub fn log_depth_changes(&mut self) {
        self.depth_changes = Some(ChangeLog {
            queues: Vec::new(),
            marked: vec![false; self.queues.len()],
        });
    }

    /// Each queue whose depth changed since the last call (`port * queues_per_port + queue`,
    /// once each, in the order they first changed) with its depth now (cells); the log is
    /// then empty. Nothing unless [`TrafficManager::log_depth_changes`] was called.
    pub fn take_depth_changes(&mut self, mut f: impl FnMut(usize, u32)) {
        if let Some(log) = &mut self.depth_changes {
            for &qi in &log.queues {
                f(qi as usize, self.queues[qi as usize].cells);
                log.marked[qi as usize] = false;
            }
            log.queues.clear();
        }
    }

    /// Cells in use in the whole buffer.
    pub fn used_cells(&self) -> u32 {
        self.used_cells
    }

    /// Free cells in the whole buffer.
    pub fn free_cells(&self) -> u32 {
        self.spec.cells - self.used_cells
    }

    /// The most cells ever in use at once.
    pub fn peak_cells(&self) -> u32 {
        self.counters.peak_cells
    }

    /// Cells in use under private minimums.
    pub fn private_used(&self) -> u32 {
        self.private_used
    }

    /// Cells in use in PFC headroom.
    pub fn headroom_used_total(&self) -> u32 {
        self.headroom_used
    }

    /// (size, shared cells in use) of `pool`.
    pub fn pool(&self, pool: usize) -> (u32, u32) {
        self.pools.get(pool).map_or((0, 0), |p| (p.size, p.used))
    }

    /// Cells counted against (ingress port, priority), and how many of them are in headroom.
    pub fn pg_cells(&self, ingress_port: u16, priority: u8) -> (u32, u32) {
        self.pg_index(ingress_port, priority)
            .map_or((0, 0), |i| (self.pgs[i].cells, self.pgs[i].headroom_used))
    }

    /// Non-empty queues in the buffer, and of buffer priority `p`.
    pub fn congested(&self, p: u8) -> (u32, u32) {
        (
            self.congested_total,
            self.congested_by_prio.get(p as usize).copied().unwrap_or(0),
        )
    }

    /// What-if trimming: every (port, queue) that trimmed packets, with its packets and
    /// the bytes they lost, in port and queue order.
    pub fn trims(&self) -> impl Iterator<Item = (u16, u16, u64, u64)> + '_ {
        self.queues.iter().enumerate().filter_map(|(i, q)| {
            let c = &q.counters;
            (c.trimmed_pkts > 0).then(|| {
                let (port, queue) = (i / self.qpp, i % self.qpp);
                (port as u16, queue as u16, c.trimmed_pkts, c.trimmed_bytes)
            })
        })
    }

    /// Counters of one queue.
    pub fn queue_counters(&self, port: u16, queue: u16) -> QueueCounters {
        self.queue_index(port, queue)
            .map_or_else(QueueCounters::default, |i| self.queues[i].counters)
    }

    /// Counters of all queues of a port, summed.
    pub fn port_counters(&self, port: u16) -> QueueCounters {
        let mut c = QueueCounters::default();
        for q in 0..self.qpp as u16 {
            c.add(&self.queue_counters(port, q));
        }
        c
    }

    /// PFC counters of (ingress port, priority).
    pub fn pg_counters(&self, ingress_port: u16, priority: u8) -> PgCounters {
        self.pg_index(ingress_port, priority)
            .map_or(PgCounters::default(), |i| self.pgs[i].counters)
    }

    /// Whole-TM counters.
    pub fn counters(&self) -> &TmCounters {
        &self.counters
    }

    /// Drops for `reason`.
    pub fn drops(&self, reason: Refusal) -> u64 {
        self.counters.drops[reason as usize]
    }

    /// Handles of the packets in a queue, head first (for tests, debugging and
    /// `Chip::queued_packets`).
    pub fn queue_handles(&self, port: u16, queue: u16) -> impl Iterator<Item = u32> + '_ {
        let i = port as usize * self.qpp + queue as usize;
        self.queues
            .get(i)
            .into_iter()
            .flat_map(|q| q.fifo.iter().map(|d| d.handle))
    }

    /// Turn the event trace on (keeping what is recorded) or off (dropping it).
    pub fn set_trace(&mut self, on: bool) {
        match (on, self.trace.is_some()) {
            (true, false) => self.trace = Some(Vec::new()),
            (false, true) => self.trace = None,
            _ => {}
        }
    }

    /// Trace events recorded since the last call (empty when the trace is off).
    pub fn drain_trace(&mut self) -> impl Iterator<Item = TraceEvent> + '_ {
        self.trace.iter_mut().flat_map(|t| t.drain(..))
    }

    /// Recomputes every counter from the descriptors and compares: the accounting invariants.
    /// `Err` describes the first mismatch. O(buffered packets): for tests.
    pub fn check_invariants(&self) -> Result<(), String> {
        let mut pool_used = vec![0u64; self.pools.len()];
        let mut private = 0u64;
        let mut headroom = 0u64;
        let mut pg_cells = vec![0u64; self.pgs.len()];
        let mut pg_hdrm = vec![0u64; self.pgs.len()];
        let mut used = 0u64;
        let mut congested_total = 0u32;
        let mut congested_by_prio = vec![0u32; self.congested_by_prio.len()];
        for (pi, port) in self.ports.iter().enumerate() {
            let (mut pc, mut pp) = (0u64, 0u64);
            let mut nonempty = 0u128;
            for q in 0..self.qpp {
                let qu = &self.queues[pi * self.qpp + q];
                let qp = &self.qparams[q];
                let cells: u64 = qu.fifo.iter().map(|d| d.cells as u64).sum();
                let nh: u64 = qu
                    .fifo
                    .iter()
                    .filter(|d| d.flags & F_HEADROOM == 0)
                    .map(|d| d.cells as u64)
                    .sum();
                if cells != qu.cells as u64 || nh != qu.nh_cells as u64 {
                    return Err(format!(
                        "queue {pi}/{q}: cells {} nh {} recomputed {cells} {nh}",
                        qu.cells, qu.nh_cells
                    ));
                }
                pool_used[qp.pool as usize] += nh.saturating_sub(qp.gmin as u64);
                private += nh.min(qp.gmin as u64);
                for d in &qu.fifo {
                    if let Some(i) = self.pg_index(d.ingress_port, d.priority) {
                        pg_cells[i] += d.cells as u64;
                        if d.flags & F_HEADROOM != 0 {
                            pg_hdrm[i] += d.cells as u64;
                        }
                    }
                    if d.flags & F_HEADROOM != 0 {
                        headroom += d.cells as u64;
                    }
                }
                if !qu.fifo.is_empty() {
                    nonempty |= port.sched.bit(q as u16);
                    congested_total += 1;
                    congested_by_prio[self.classes[qp.class as usize].priority as usize] += 1;
                }
                pc += cells;
                pp += qu.fifo.len() as u64;
            }
            if pc != port.cells as u64 || pp != port.pkts as u64 {
                return Err(format!(
                    "port {pi}: {} cells {} pkts, recomputed {pc} {pp}",
                    port.cells, port.pkts
                ));
            }
            if nonempty != port.sched.nonempty {
                return Err(format!("port {pi}: non-empty mask differs"));
            }
            used += pc;
        }
        if used != self.used_cells as u64 || used > self.spec.cells as u64 {
            return Err(format!("used {} recomputed {used}", self.used_cells));
        }
        if self.counters.cells_allocated - self.counters.cells_freed != used {
            return Err("allocated − freed ≠ used".into());
        }
        if private != self.private_used as u64 || headroom != self.headroom_used as u64 {
            return Err(format!(
                "private {} headroom {} recomputed {private} {headroom}",
                self.private_used, self.headroom_used
            ));
        }
        if private + headroom + pool_used.iter().sum::<u64>() != used {
            return Err("private + headroom + pools ≠ used".into());
        }
        for (i, p) in self.pools.iter().enumerate() {
            if pool_used[i] != p.used as u64 || p.used > p.size {
                return Err(format!(
                    "pool {i}: used {} recomputed {} size {}",
                    p.used, pool_used[i], p.size
                ));
            }
        }
        for (i, pg) in self.pgs.iter().enumerate() {
            if pg_cells[i] != pg.cells as u64 || pg_hdrm[i] != pg.headroom_used as u64 {
                return Err(format!(
                    "pg {i}: cells {} headroom {} recomputed {} {}",
                    pg.cells, pg.headroom_used, pg_cells[i], pg_hdrm[i]
                ));
            }
            if pg.headroom_used > pg.params.headroom {
                return Err(format!("pg {i}: headroom over its reservation"));
            }
        }
        if congested_total != self.congested_total || congested_by_prio != self.congested_by_prio {
            return Err("congested-queue counts differ".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptor_is_32_bytes() {
        // The model's state per buffered packet: one descriptor in its queue's ring buffer
        // (at most twice that with the ring's spare capacity).
        assert_eq!(std::mem::size_of::<Desc>(), 32);
    }

    /// The built-in Static and Dynamic Threshold decisions, made inline, refuse exactly the
    /// packets their trait implementations refuse when asked as plug-ins with a context.
    #[test]
    fn inline_policies_decide_as_their_trait_implementations() {
        use config::{AdmissionPolicy, ClassConfig, QueueConfig};
        for policy in [AdmissionPolicy::DynamicThreshold, AdmissionPolicy::Static] {
            let config = TmConfig {
                admission: policy,
                classes: vec![ClassConfig {
                    alpha: 0.75,
                    priority: 0,
                }],
                queues: vec![
                    QueueConfig {
                        gmin_cells: 3,
                        static_limit_cells: Some(40),
                        ..QueueConfig::default()
                    },
                    QueueConfig {
                        static_limit_cells: Some(25),
                        ..QueueConfig::default()
                    },
                ],
                ..TmConfig::default()
            };
            let spec = TmSpec::small(200, 80, 2);
            let mut inline = TrafficManager::new(spec.clone(), config.clone(), 3).unwrap();
            let mut asked = TrafficManager::new(spec, config, 3).unwrap();
            asked.set_admission(admission::builtin(policy));
            assert!(matches!(asked.admission, Policy::Asked { .. }));
            assert_eq!(inline.admission_name(), asked.admission_name());
            let mut refused = 0;
            for i in 0..3000u32 {
                let req = EnqueueRequest {
                    port: (i % 3) as u16,
                    queue: (i / 3 % 2) as u16,
                    bytes: 40 + i * 37 % 300,
                    handle: i,
                    now_ps: i as u64,
                    ..EnqueueRequest::default()
                };
                let a = inline.enqueue(req);
                assert_eq!(a, asked.enqueue(req), "packet {i}");
                refused += a.is_err() as u32;
                if i % 5 < 2 {
                    let port = (i * 7 % 3) as u16;
                    assert_eq!(
                        inline.dequeue(port, i as u64),
                        asked.dequeue(port, i as u64)
                    );
                }
            }
            assert!(refused > 100, "{policy:?}: only {refused} refusals");
            assert_eq!(inline.counters(), asked.counters());
        }
    }

    #[test]
    fn packets_occupy_whole_cells() {
        let mut t = TrafficManager::new(TmSpec::small(10, 80, 1), TmConfig::default(), 2).unwrap();
        let r = |port, bytes, handle| EnqueueRequest {
            port,
            bytes,
            handle,
            ..EnqueueRequest::default()
        };
        assert_eq!(t.enqueue(r(0, 81, 1)).unwrap().cells, 2);
        assert_eq!(t.enqueue(r(1, 80, 2)).unwrap().cells, 1);
        assert_eq!(t.enqueue(r(1, 0, 3)).unwrap().cells, 1);
        assert_eq!(t.used_cells(), 4);
        assert_eq!(t.port_depth_cells(0), 2);
    }
}
