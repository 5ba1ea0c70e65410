//! The operator's configuration of the TM: admission policy, α per class, queue mapping,
//! private minimums, pools, schedulers, PFC and ECN, and the what-if payload trimming.
//!
//! This is data (serde, RON-friendly, every field has a default). The chip's fixed dimensions
//! are in [`crate::spec::TmSpec`]; [`TmConfig::validate`] checks a configuration against them
//! and names the offending field on error.
//!
//! A RON example (every field may be left out):
//! ```ron
//! (
//!     admission: FlexibleBuffer,
//!     classes: [(alpha: 1.0, priority: 0), (alpha: 2.0, priority: 1)],
//!     queues: [(class: 1), (class: 0)],
//!     scheduler: Drr(quanta: []),
//!     pfc: (quanta: 65535, groups: [(ports: [], priority: 3, xoff_cells: 400, hysteresis_cells: 64, headroom_cells: 200)]),
//!     seed: Some(7),
//! )
//! ```

pub use crate::admission::AdmissionPolicy;
use crate::admission::Alpha;
use crate::spec::TmSpec;
use serde::{Deserialize, Serialize};
use std::fmt;

/// DRR quantum given to a queue without one, in bytes.
///
/// assumption: one 9216-byte jumbo frame, so every backlogged queue sends at least one frame
/// per round. Tofino's default DWRR weight (1023, bf-drivers `tm_tofino_default.c`) is in
/// unpublished units; only the ratio of quanta matters for the shares.
pub const DEFAULT_DRR_QUANTUM_BYTES: u32 = 9216;

/// Default α of a class: 4, our reading of Tofino's default queue BAF of 80 %
/// (bf-drivers `tm_tofino_default.c`: `q_dynamic_baf = BF_TM_Q_BAF_80_PERCENT`).
///
/// The BAF settings 1.5, 3, 6, 11, 20, 33, 50, 66 and 80 % are exactly α/(1+α) for
/// α = 2^-6 … 2^2: the share of the pool one saturated queue settles at under DT. We read the
/// percentage as that share, so 80 % is α = 4. (The driver comment `D(t) = (Size − U(t)) × BAF`
/// read literally would make it α = 0.8; set `alpha: 0.8` for that reading.)
pub const DEFAULT_ALPHA: f64 = 4.0;

/// A traffic class: its α and its buffer priority (FB's `p`; 0 = low, higher = more important).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ClassConfig {
    /// The DT/FB α of the class (quantised to 1/65536; must be in (0, 65535]).
    pub alpha: f64,
    /// Buffer priority for FB's N_p (not a scheduling priority).
    pub priority: u8,
}

impl Default for ClassConfig {
    fn default() -> Self {
        ClassConfig {
            alpha: DEFAULT_ALPHA,
            priority: 0,
        }
    }
}

/// ECN marking of a queue, decided on enqueue from the queue depth before the packet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub enum EcnConfig {
    /// No marking.
    #[default]
    Off,
    /// Mark when the depth exceeds `k_cells` (DCTCP: "greater than K upon arrival").
    Threshold {
        /// K in cells.
        k_cells: u32,
    },
    /// RED-style marking on the instantaneous depth q: none while q ≤ Kmin,
    /// probability `pmax · (q − Kmin)/(Kmax − Kmin)` while Kmin < q ≤ Kmax, always above Kmax
    /// (as in the HPCC ns-3 `ShouldSendCN`).
    Red {
        /// Kmin in cells.
        kmin_cells: u32,
        /// Kmax in cells.
        kmax_cells: u32,
        /// Marking probability at Kmax, in [0, 1].
        pmax: f64,
    },
}

/// Configuration of one queue index (the same on every port).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct QueueConfig {
    /// Index into [`TmConfig::classes`].
    pub class: u8,
    /// Index of the shared pool the queue's cells above its private minimum come from.
    pub pool: u8,
    /// Private minimum (gmin): cells reserved for this queue on every port, outside the pools.
    pub gmin_cells: u32,
    /// Cap on the queue's shared cells under [`AdmissionPolicy::Static`]; `None` = only the pool.
    pub static_limit_cells: Option<u32>,
    /// The PFC priority whose received pause frames stop this queue; `None` = queue index
    /// modulo the chip's PFC levels.
    pub pfc_priority: Option<u8>,
    /// ECN marking.
    pub ecn: EcnConfig,
}

impl Default for QueueConfig {
    fn default() -> Self {
        QueueConfig {
            class: 0,
            pool: 0,
            gmin_cells: 0,
            static_limit_cells: None,
            pfc_priority: None,
            ecn: EcnConfig::Off,
        }
    }
}

/// The scheduler of a port.
///
/// Strict-priority levels are numbered as on Tofino (`BF_TM_SCH_PRIO_0` lowest …
/// `BF_TM_SCH_PRIO_7` highest): a higher level is always served first.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum SchedulerConfig {
    /// Queue `i` at level `i`: the highest-numbered non-empty, unpaused queue goes first.
    /// Needs `queues_per_port ≤ sched_priorities`.
    StrictPriority,
    /// Deficit round robin over all queues; quantum per queue in bytes (missing entries:
    /// [`DEFAULT_DRR_QUANTUM_BYTES`]).
    Drr {
        /// Quantum per queue, bytes.
        quanta: Vec<u32>,
    },
    /// Weighted round robin over all queues; weight per queue in packets per round
    /// (missing entries: 1).
    Wrr {
        /// Weight per queue, packets.
        weights: Vec<u32>,
    },
    /// Strict priority over DRR groups: queue `i` is at level `levels[i]` (missing: 0); queues at
    /// the same level share it by DRR with `quanta` (bytes; missing: the default quantum).
    SpOverDrr {
        /// Level per queue (higher is served first), each below `sched_priorities`.
        levels: Vec<u8>,
        /// Quantum per queue, bytes.
        quanta: Vec<u32>,
    },
}

impl Default for SchedulerConfig {
    /// Tofino's default: every queue at priority 0 with the same DWRR weight
    /// (`sch_q_priority = BF_TM_SCH_PRIO_0`, `sch_q_dwrr_weight = 1023`).
    fn default() -> Self {
        SchedulerConfig::Drr { quanta: Vec::new() }
    }
}

/// A scheduler for one port, overriding [`TmConfig::scheduler`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PortScheduler {
    /// The port.
    pub port: u16,
    /// Its scheduler.
    pub scheduler: SchedulerConfig,
}

/// PFC on one priority of some ingress ports (a lossless priority group).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PfcGroup {
    /// Ingress ports; empty = every port.
    pub ports: Vec<u16>,
    /// The priority (ingress CoS), below the chip's `pfc_levels`.
    pub priority: u8,
    /// XOFF: a pause is asserted when the cells of this (port, priority) exceed this.
    pub xoff_cells: u32,
    /// XON = XOFF − hysteresis: the pause is released when the cells fall below XON. A multiple
    /// of the chip's `hysteresis_unit_cells`, below `xoff_cells`.
    pub hysteresis_cells: u32,
    /// Headroom reserved for each such (port, priority): where packets that arrive after XOFF
    /// (or that find the pool full) are stored. Exhausted headroom drops.
    pub headroom_cells: u32,
}

/// PFC configuration.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PfcConfig {
    /// Pause time the chip puts in the PFC frames it sends, in quanta of 512 bit times.
    pub quanta: u16,
    /// Lossless (port, priority) groups.
    pub groups: Vec<PfcGroup>,
}

impl Default for PfcConfig {
    /// No lossless priority; frames would carry the maximum quanta (0xFFFF) and be refreshed.
    fn default() -> Self {
        PfcConfig {
            quanta: u16::MAX,
            groups: Vec::new(),
        }
    }
}

/// **What-if (no public TM does this):** payload trimming at admission, the idealised
/// output-queued switch of NDP (Handley et al., SIGCOMM 2017) and of the trimming paper's
/// reference (Popa et al., arXiv 2207.04967, §2: "cut the packet down to its header instead
/// of dropping it", enqueued on a higher-priority header queue of the same port). Tofino 1
/// and 2 cannot: their TM only drops or deflects whole packets (deflect-on-drop).
///
/// When admission refuses a packet for a queue other than `queue` (buffer, pool, static,
/// DT, FB or headroom limit; not a missing port, queue or class), the TM offers its first
/// `bytes` bytes (the whole packet if shorter) to `queue` on the same port instead; if that
/// queue admits it, the packet is trimmed: the chip cuts the rest and sets `mark`. If the
/// header queue refuses it too, it is returned to its sender when `return_to_sender` says so
/// (NDP's fallback, §3.4 item 2 of the trimming digest: queued in the header queue of the
/// port it came in on, its addresses swapped by the chip), else, or if that queue refuses
/// it as well, dropped for the last queue's reason. The header queue's
/// priority is the scheduler's: give it a higher strict-priority level (or a large DRR
/// quantum) than the data queues.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrimConfig {
    /// Bytes kept from the packet's start (stored length, no FCS): its headers. At least 1.
    pub bytes: u32,
    /// The queue (on the same port) trimmed packets go to.
    pub queue: u16,
    /// A flag set in the kept bytes so that the receiver sees the cut (`None`: none; a
    /// receiver may still tell from lengths that disagree).
    #[serde(default)]
    pub mark: Option<TrimMark>,
    /// Return a header the header queue refuses to its sender (`None`: drop it).
    #[serde(default)]
    pub return_to_sender: Option<ReturnToSender>,
}

/// **What-if:** NDP's return-to-sender (Handley et al., SIGCOMM 2017, §3.2) for a trimmed
/// header its header queue refuses: the TM queues it in the header queue of the port the
/// packet came in on, and the chip swaps its Ethernet addresses and, for IPv4, its IPv4
/// addresses (the IPv4 and UDP checksums do not change: a ones' complement sum does not
/// depend on the order of its words), so it goes back to where it came from with the
/// sender as its destination. The MAC addresses are the two the frame carried when it was
/// refused (the chip does not keep the previous hop's).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReturnToSender {
    /// Where the Ethernet header starts in the stored packet (0 unless the program bridges
    /// metadata in front of it). The kept bytes must reach the IPv4 addresses (34 bytes on).
    #[serde(default)]
    pub ethernet_offset: u32,
}

impl TrimConfig {
    /// Checks the trimming configuration against a chip with `qpp` queues per port.
    fn check(&self, qpp: usize) -> Result<(), ConfigError> {
        if self.bytes == 0 {
            return err("trim.bytes", "a trimmed packet keeps at least 1 byte");
        }
        if self.queue as usize >= qpp {
            return err(
                "trim.queue",
                format!("no queue {}: ports have {qpp} queues", self.queue),
            );
        }
        match self.mark {
            Some(m) if m.offset >= self.bytes => err(
                "trim.mark.offset",
                format!(
                    "byte {} is not among the {} bytes a trimmed packet keeps",
                    m.offset, self.bytes
                ),
            ),
            Some(m) if m.mask == 0 => err("trim.mark.mask", "a mask of 0 sets nothing"),
            _ => match self.return_to_sender {
                Some(r) if r.ethernet_offset.saturating_add(34) > self.bytes => err(
                    "trim.return_to_sender.ethernet_offset",
                    format!(
                        "the IPv4 addresses end at byte {}, beyond the {} bytes a trimmed packet keeps",
                        r.ethernet_offset.saturating_add(34),
                        self.bytes
                    ),
                ),
                _ => Ok(()),
            },
        }
    }
}

/// A flag the chip sets in a trimmed packet: byte `offset` (from the frame's start) ORed
/// with `mask`. NDP-style host frames (`asic-net`'s `packet.rs`) carry their `TRIMMED` flag
/// (0x10) in byte 42.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrimMark {
    /// Byte offset in the frame, below [`TrimConfig::bytes`].
    pub offset: u32,
    /// Bits to set (not 0).
    pub mask: u8,
}

/// The operator's TM configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TmConfig {
    /// Admission algorithm.
    pub admission: AdmissionPolicy,
    /// Traffic classes (α and buffer priority). At least one.
    pub classes: Vec<ClassConfig>,
    /// Per queue index; indexes past the end use `default_queue`.
    pub queues: Vec<QueueConfig>,
    /// Configuration of queue indexes not listed in `queues`.
    pub default_queue: QueueConfig,
    /// Shared pool sizes in cells. Empty: one pool holding every cell not reserved as private
    /// minimums or PFC headroom.
    pub pool_cells: Vec<u32>,
    /// Scheduler of every port without an override.
    pub scheduler: SchedulerConfig,
    /// Per-port scheduler overrides.
    pub port_schedulers: Vec<PortScheduler>,
    /// PFC.
    pub pfc: PfcConfig,
    /// Seed of the RED marking generator (ChaCha8). `None`: 0 for a TM on its own; a chip
    /// gives its TM the chip's seed (`config.seed`) unless this is set.
    pub seed: Option<u64>,
    /// Start with the event trace on.
    pub trace: bool,
    /// What-if payload trimming instead of admission drops ([`TrimConfig`]); `None`: off.
    pub trim: Option<TrimConfig>,
    /// What the packet's colour (TNA's `packet_color`) changes at admission.
    pub color: ColorConfig,
}

/// A packet's colour, as TNA's `ig_tm_md.packet_color` carries it (and a meter returns it):
/// green 0, yellow 1, red 3. The model reads 2, which no meter returns, as red.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Color {
    /// 0.
    Green,
    /// 1.
    Yellow,
    /// 3 (or 2).
    Red,
}

impl Color {
    /// The colour of a `packet_color` value (its two low bits).
    pub fn of(value: u8) -> Color {
        match value & 3 {
            0 => Color::Green,
            1 => Color::Yellow,
            _ => Color::Red,
        }
    }
}

/// What a packet's colour changes at admission.
///
/// - **Colour drop limits** (Tofino's TM: a queue's yellow and red limits are a fraction of
///   its green one, in eighths from 12.5 % to 100 %, 100 % by default; `bf_tm_q_color_limit_set`
///   in the open SDE): a yellow or red packet is admitted against that fraction of the queue's
///   threshold, α·(B − Q) under Dynamic Threshold, its static limit under Static.
/// - **What-if, single-queue Flexible Buffer** (no Tofino TM runs FB): the class, and so the
///   α and buffer priority, a green, yellow and red packet is admitted under, whatever its
///   queue's; this is how a program tells one queue's packets apart (the FB paper's
///   per-packet class).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ColorConfig {
    /// Eighths of the queue's threshold a yellow packet may fill (1–8; 8: as green).
    pub yellow_eighths: u8,
    /// Eighths of the queue's threshold a red packet may fill (1–8; 8: as green).
    pub red_eighths: u8,
    /// Single-queue FB only: the class (index into [`TmConfig::classes`]) of a green, a
    /// yellow and a red packet. Empty: every packet takes its queue's class.
    pub classes: Vec<u8>,
}

impl Default for ColorConfig {
    fn default() -> Self {
        ColorConfig {
            yellow_eighths: 8,
            red_eighths: 8,
            classes: Vec::new(),
        }
    }
}

impl ColorConfig {
    /// Checks it against the policy and the classes, naming the field.
    fn check(&self, admission: AdmissionPolicy, classes: usize) -> Result<(), ConfigError> {
        for (name, e) in [
            ("color.yellow_eighths", self.yellow_eighths),
            ("color.red_eighths", self.red_eighths),
        ] {
            if !(1..=8).contains(&e) {
                return err(
                    name,
                    format!("{e} is not in 1..=8 (eighths of the threshold)"),
                );
            }
            let limits = matches!(
                admission,
                AdmissionPolicy::DynamicThreshold | AdmissionPolicy::Static
            );
            if e != 8 && !limits {
                return err(
                    name,
                    "colour drop limits apply under DynamicThreshold and Static; Flexible \
                     Buffer takes a class per colour (color.classes)",
                );
            }
        }
        if self.classes.is_empty() {
            return Ok(());
        }
        if admission != AdmissionPolicy::FlexibleBufferSingleQueue {
            return err(
                "color.classes",
                "a class per colour applies under FlexibleBufferSingleQueue only",
            );
        }
        if self.classes.len() != 3 {
            return err(
                "color.classes",
                format!(
                    "{} entries; give three: the class of green, yellow and red",
                    self.classes.len()
                ),
            );
        }
        for (i, &c) in self.classes.iter().enumerate() {
            if c as usize >= classes {
                return err(
                    format!("color.classes[{i}]"),
                    format!("there are {classes} classes"),
                );
            }
        }
        Ok(())
    }
}

impl Default for TmConfig {
    fn default() -> Self {
        TmConfig {
            admission: AdmissionPolicy::default(),
            classes: vec![ClassConfig::default()],
            queues: Vec::new(),
            default_queue: QueueConfig::default(),
            pool_cells: Vec::new(),
            scheduler: SchedulerConfig::default(),
            port_schedulers: Vec::new(),
            pfc: PfcConfig::default(),
            seed: None,
            trace: false,
            trim: None,
            color: ColorConfig::default(),
        }
    }
}

/// A configuration refused, naming the field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    /// The field, e.g. `classes[1].alpha` or `spec.queues_per_port`.
    pub field: String,
    /// Why.
    pub reason: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid TM configuration `{}`: {}",
            self.field, self.reason
        )
    }
}

impl std::error::Error for ConfigError {}

fn err<T>(field: impl Into<String>, reason: impl Into<String>) -> Result<T, ConfigError> {
    Err(ConfigError {
        field: field.into(),
        reason: reason.into(),
    })
}

/// One queue index, resolved.
#[derive(Clone, Copy, Debug)]
pub(crate) struct QueueParams {
    pub class: u8,
    /// α of `class` (looked up once here, not per packet).
    pub class_alpha: Alpha,
    /// The buffer priority of `class`.
    pub class_priority: u8,
    pub pool: u8,
    pub gmin: u32,
    pub static_limit: Option<u32>,
    pub pfc_priority: u8,
    pub ecn: EcnConfig,
}

/// One class, resolved.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ClassParams {
    pub alpha: Alpha,
    pub priority: u8,
}

/// A port's scheduler, resolved to levels and quanta.
#[derive(Clone, Debug)]
pub(crate) struct SchedParams {
    /// Level per queue (higher first).
    pub levels: Vec<u8>,
    /// Quantum per queue (bytes or packets).
    pub quanta: Vec<u32>,
    /// Whether quanta count packets (WRR) rather than bytes (DRR).
    pub packets: bool,
}

/// PFC settings of one (ingress port, priority).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct PgParams {
    pub enabled: bool,
    pub xoff: u32,
    pub xon: u32,
    pub headroom: u32,
}

/// A configuration checked against a spec and a port count.
#[derive(Clone, Debug)]
pub(crate) struct Resolved {
    pub queues: Vec<QueueParams>,
    pub classes: Vec<ClassParams>,
    pub pools: Vec<u32>,
    pub scheds: Vec<SchedParams>,
    pub pgs: Vec<PgParams>,
}

impl TmConfig {
    /// The configuration of queue index `q`.
    pub fn queue(&self, q: usize) -> &QueueConfig {
        self.queues.get(q).unwrap_or(&self.default_queue)
    }

    /// Checks the configuration against `spec` and `ports`, naming the first bad field.
    pub fn validate(&self, spec: &TmSpec, ports: usize) -> Result<(), ConfigError> {
        self.resolve(spec, ports).map(|_| ())
    }

    /// The shared pools' sizes in cells, as the TM on `spec` with `ports` ports makes them:
    /// `pool_cells` as given, or the buffer less the private minimums and PFC headroom.
    pub fn pool_sizes(&self, spec: &TmSpec, ports: usize) -> Result<Vec<u32>, ConfigError> {
        self.resolve(spec, ports).map(|r| r.pools)
    }

    pub(crate) fn resolve(&self, spec: &TmSpec, ports: usize) -> Result<Resolved, ConfigError> {
        if let Err(e) = spec.validate() {
            return err(format!("spec.{}", e.field), e.reason);
        }
        if ports == 0 || ports > u16::MAX as usize {
            return err("ports", "must be between 1 and 65535");
        }
        let qpp = spec.queues_per_port as usize;
        let levels = spec.pfc_levels as usize;

        if self.classes.is_empty() {
            return err("classes", "at least one class is needed");
        }
        let mut classes = Vec::new();
        for (i, c) in self.classes.iter().enumerate() {
            let alpha = Alpha::from_f64(c.alpha).ok_or_else(|| ConfigError {
                field: format!("classes[{i}].alpha"),
                reason: format!("{} is not in (0, 65535]", c.alpha),
            })?;
            classes.push(ClassParams {
                alpha,
                priority: c.priority,
            });
        }
        self.color.check(self.admission, classes.len())?;
        if self.queues.len() > qpp {
            return err(
                "queues",
                format!("{} entries for {qpp} queues per port", self.queues.len()),
            );
        }

        // Pools: the private minimums and PFC headroom are reserved first.
        let mut reserved: u64 = 0;
        let mut queues = Vec::with_capacity(qpp);
        for q in 0..qpp {
            let c = self.queue(q);
            let field = |f: &str| {
                if q < self.queues.len() {
                    format!("queues[{q}].{f}")
                } else {
                    format!("default_queue.{f}")
                }
            };
            if c.class as usize >= classes.len() {
                return err(
                    field("class"),
                    format!("there are {} classes", classes.len()),
                );
            }
            if c.pool >= spec.app_pools {
                return err(
                    field("pool"),
                    format!("the chip has {} pools", spec.app_pools),
                );
            }
            let pfc_priority = c.pfc_priority.unwrap_or((q % levels) as u8);
            if pfc_priority as usize >= levels {
                return err(
                    field("pfc_priority"),
                    format!("the chip has {levels} PFC levels"),
                );
            }
            match c.ecn {
                EcnConfig::Off | EcnConfig::Threshold { .. } => {}
                EcnConfig::Red {
                    kmin_cells,
                    kmax_cells,
                    pmax,
                } => {
                    if kmin_cells > kmax_cells {
                        return err(field("ecn"), "Kmin must not exceed Kmax");
                    }
                    if !(0.0..=1.0).contains(&pmax) {
                        return err(field("ecn"), "pmax must be in [0, 1]");
                    }
                }
            }
            reserved += c.gmin_cells as u64 * ports as u64;
            let class = classes[c.class as usize];
            queues.push(QueueParams {
                class: c.class,
                class_alpha: class.alpha,
                class_priority: class.priority,
                pool: c.pool,
                gmin: c.gmin_cells,
                static_limit: c.static_limit_cells,
                pfc_priority,
                ecn: c.ecn,
            });
        }

        if !self.pfc.groups.is_empty() && self.pfc.quanta == 0 {
            return err(
                "pfc.quanta",
                "0 would make every pause frame a resume; lossless groups need a pause time",
            );
        }
        let mut pgs = vec![PgParams::default(); ports * levels];
        for (i, g) in self.pfc.groups.iter().enumerate() {
            let f = |x: &str| format!("pfc.groups[{i}].{x}");
            if g.priority as usize >= levels {
                return err(f("priority"), format!("the chip has {levels} PFC levels"));
            }
            if g.xoff_cells == 0 {
                return err(f("xoff_cells"), "must be greater than 0");
            }
            if g.hysteresis_cells >= g.xoff_cells {
                return err(f("hysteresis_cells"), "must be below xoff_cells");
            }
            if g.hysteresis_cells % spec.hysteresis_unit_cells != 0 {
                return err(
                    f("hysteresis_cells"),
                    format!(
                        "must be a multiple of the chip's hysteresis unit ({} cells)",
                        spec.hysteresis_unit_cells
                    ),
                );
            }
            let params = PgParams {
                enabled: true,
                xoff: g.xoff_cells,
                xon: g.xoff_cells - g.hysteresis_cells,
                headroom: g.headroom_cells,
            };
            let all: Vec<u16>;
            let ports_sel: &[u16] = if g.ports.is_empty() {
                all = (0..ports as u16).collect();
                &all
            } else {
                &g.ports
            };
            for (j, &p) in ports_sel.iter().enumerate() {
                if p as usize >= ports {
                    return err(
                        format!("pfc.groups[{i}].ports[{j}]"),
                        format!("the TM has {ports} ports"),
                    );
                }
                let slot = &mut pgs[p as usize * levels + g.priority as usize];
                if slot.enabled {
                    return err(
                        format!("pfc.groups[{i}].ports[{j}]"),
                        format!("port {p} priority {} is in two groups", g.priority),
                    );
                }
                *slot = params;
                reserved += g.headroom_cells as u64;
            }
        }

        if reserved > spec.cells as u64 {
            return err(
                "queues",
                format!(
                    "private minimums and PFC headroom reserve {reserved} cells; the buffer has {}",
                    spec.cells
                ),
            );
        }
        let pools = if self.pool_cells.is_empty() {
            vec![spec.cells - reserved as u32]
        } else {
            if self.pool_cells.len() > spec.app_pools as usize {
                return err(
                    "pool_cells",
                    format!("the chip has {} pools", spec.app_pools),
                );
            }
            let total: u64 = self.pool_cells.iter().map(|&c| c as u64).sum::<u64>() + reserved;
            if total > spec.cells as u64 {
                return err(
                    "pool_cells",
                    format!(
                        "pools ({} cells) and reservations ({reserved}) exceed the buffer ({})",
                        total - reserved,
                        spec.cells
                    ),
                );
            }
            self.pool_cells.clone()
        };
        for (q, p) in queues.iter().enumerate() {
            if p.pool as usize >= pools.len() {
                return err(
                    if q < self.queues.len() {
                        format!("queues[{q}].pool")
                    } else {
                        "default_queue.pool".to_string()
                    },
                    format!("only {} pool(s) are configured", pools.len()),
                );
            }
        }

        let default_sched = resolve_sched(&self.scheduler, spec, "scheduler")?;
        let mut scheds = vec![default_sched; ports];
        for (i, ps) in self.port_schedulers.iter().enumerate() {
            if ps.port as usize >= ports {
                return err(
                    format!("port_schedulers[{i}].port"),
                    format!("the TM has {ports} ports"),
                );
            }
            scheds[ps.port as usize] = resolve_sched(
                &ps.scheduler,
                spec,
                &format!("port_schedulers[{i}].scheduler"),
            )?;
        }
        if let Some(t) = &self.trim {
            t.check(qpp)?;
        }

        Ok(Resolved {
            queues,
            classes,
            pools,
            scheds,
            pgs,
        })
    }
}

fn resolve_sched(
    s: &SchedulerConfig,
    spec: &TmSpec,
    field: &str,
) -> Result<SchedParams, ConfigError> {
    let qpp = spec.queues_per_port as usize;
    let too_long = |name: &str, n: usize| -> Result<(), ConfigError> {
        if n > qpp {
            err(
                format!("{field}.{name}"),
                format!("{n} entries for {qpp} queues per port"),
            )
        } else {
            Ok(())
        }
    };
    let fill = |v: &[u32], default: u32, name: &str| -> Result<Vec<u32>, ConfigError> {
        too_long(name, v.len())?;
        if let Some(i) = v.iter().position(|&x| x == 0) {
            return err(format!("{field}.{name}[{i}]"), "must be greater than 0");
        }
        Ok((0..qpp)
            .map(|q| v.get(q).copied().unwrap_or(default))
            .collect())
    };
    Ok(match s {
        SchedulerConfig::StrictPriority => {
            if qpp > spec.sched_priorities as usize {
                return err(
                    field,
                    format!(
                        "strict priority per queue needs {qpp} levels; the chip has {} (use SpOverDrr)",
                        spec.sched_priorities
                    ),
                );
            }
            SchedParams {
                levels: (0..qpp as u8).collect(),
                quanta: vec![DEFAULT_DRR_QUANTUM_BYTES; qpp],
                packets: false,
            }
        }
        SchedulerConfig::Drr { quanta } => SchedParams {
            levels: vec![0; qpp],
            quanta: fill(quanta, DEFAULT_DRR_QUANTUM_BYTES, "quanta")?,
            packets: false,
        },
        SchedulerConfig::Wrr { weights } => SchedParams {
            levels: vec![0; qpp],
            quanta: fill(weights, 1, "weights")?,
            packets: true,
        },
        SchedulerConfig::SpOverDrr { levels, quanta } => {
            too_long("levels", levels.len())?;
            if let Some(i) = levels.iter().position(|&l| l >= spec.sched_priorities) {
                return err(
                    format!("{field}.levels[{i}]"),
                    format!("the chip has {} priority levels", spec.sched_priorities),
                );
            }
            SchedParams {
                levels: (0..qpp)
                    .map(|q| levels.get(q).copied().unwrap_or(0))
                    .collect(),
                quanta: fill(quanta, DEFAULT_DRR_QUANTUM_BYTES, "quanta")?,
                packets: false,
            }
        }
    })
}
