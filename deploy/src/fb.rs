//! Deploying programs/fb/fb.p4: Flexible Buffer as the FB paper evaluates it (Apostolaki et
//! al., "FB: A Flexible Buffer Management Scheme for Data Center Switches", 2021, §6), the
//! TM's buffer management chosen per run: Dynamic Threshold with the paper's static private
//! part, or the what-if TM-native Flexible Buffer. programs/fb/README.md sets the paper and
//! the model side by side.
//!
//! What a chip gets:
//! - routes: the stock ECMP router's ([`crate::routers`]);
//! - `classify` entries from the host's tag (the IPv4 DSCP, `class << 3`) to the packet's
//!   queue and colour, for all eight tags: with [`Queues::Multi`] the query tag
//!   (`high_class`) to queue [`HIGH_Q`], the `low_classes` to queues 1, 2, …, one each, any
//!   other tag to queue 1; with [`Queues::Single`] every tag to queue 0, green for the query
//!   tag and yellow for any other;
//! - the TM: class 0 the high priority (`alpha_high`, buffer priority 1), class 1 the low
//!   (`alpha_low`, priority 0); every queue in use on every port served round robin (DRR,
//!   a quantum of one full-size frame), the paper's "5 queues, RR scheduling". Under
//!   [`Buffer::Dt`] each queue in use gets an equal share of `dt_private` of the buffer as its
//!   private minimum (the paper's "static private part of 18.8 %"), shared over every port the
//!   TM serves, since it reserves the minimum on its recirculation and packet-generator ports
//!   too ([`ChipProfile::ports_all`]); single-queue DT has one class, `alpha_low`
//!   (the paper's "DT, single-queue: α = 0.5"). Under [`Buffer::Fb`] the TM runs FB
//!   (multi-queue) or single-queue FB with a class per colour, and keeps no private part.
//! - with `ecn_threshold_packets`, ECN marking of every queue in use above that many
//!   full-size packets (the paper's DCTCP: RED with Kmin = Kmax = 65 packets);
//! - under [`Buffer::Fba`], DT as under [`Buffer::Dt`] and the FBA agent ([`Fba`]): every
//!   `period_ns` it sets each queue's DT α to `α_c · γ / N_p` from what the TM shows (§5.2);
//! - under [`Buffer::Pisa`], DT as under [`Buffer::Dt`] and programs/fb/fb_pisa.p4, which
//!   drops in ingress what FB would refuse, from register copies its SYNC packets refresh
//!   (§5.1; [`pisa`]).

mod pisa;
pub use pisa::{shift_for, Depths, Pisa};

use crate::routers::{self, Routing};
use crate::{ChipContext, ChipDeployment, Deployment, Embedded};
use asic_model::chip::{ChipConfig, ControlAgent};
use asic_model::profile::ChipProfile;
use pipelines::entries::{EntrySpec, KeySpec, Value};
use pipelines::time::Time;
use pisa::QueueClass;
use serde::{Deserialize, Serialize};
use tm::admission::Alpha;
use tm::config::{
    AdmissionPolicy, ClassConfig, ColorConfig, EcnConfig, QueueConfig, SchedulerConfig,
};

/// `programs/fb`: the ECMP router with the buffer-class classifier.
pub const PROGRAM: Embedded = Embedded {
    file: "programs/fb/fb.p4",
    source: include_str!("../../programs/fb/fb.p4"),
};

/// `programs/fb` with PISA FB (§5.1): the same router and classifier, and FB's admission
/// approximated in the pipeline.
pub const PISA_PROGRAM: Embedded = Embedded {
    file: "programs/fb/fb_pisa.p4",
    source: include_str!("../../programs/fb/fb_pisa.p4"),
};

/// The high-priority (query) queue of every port.
pub const HIGH_Q: u16 = 0;

/// The TM classes the deployment defines.
const HIGH_CLASS: u8 = 0;
const LOW_CLASS: u8 = 1;

/// TNA colours.
const GREEN: u64 = 0;
const YELLOW: u64 = 1;

/// The buffer management the chips' TMs run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Buffer {
    /// Dynamic Threshold with the static private part (`dt_private`).
    #[default]
    Dt,
    /// What-if: Flexible Buffer in the TM (single-queue FB with [`Queues::Single`]).
    Fb,
    /// FBA: DT whose per-queue α a control-plane agent rewrites every `period_ns` (the
    /// paper's 1 s) to FB's adaptive α. Multi-queue only (with one queue per port FBA is DT,
    /// §5.2).
    Fba {
        /// The agent's period, ns.
        period_ns: u64,
    },
    /// PISA FB: DT in the TM, and FB approximated in the pipeline, which drops in ingress
    /// what FB would refuse (programs/fb/fb_pisa.p4). Multi-queue only.
    Pisa(Pisa),
}

/// The FBA agent (§5.2) of one chip: each run sets every queue in use on every port to
/// DT's `α = α_c · γ / N_p`, `γ` the queue's share of its port's round robin among the
/// non-empty queues (counting itself), `N_p` the non-empty queues of its priority in the
/// buffer (counting itself when empty, as FB counts the queue a packet arrives at), both as
/// the TM shows them when it runs.
#[derive(Debug)]
pub struct Fba {
    period: Time,
    /// Per queue index in use: its class's α and buffer priority.
    queues: Vec<(f64, u8)>,
}

impl ControlAgent for Fba {
    fn period(&self) -> Time {
        self.period
    }

    fn run(&mut self, _now: Time, tm: &mut tm::TrafficManager) -> Result<(), String> {
        for port in 0..tm.port_count() as u16 {
            for (q, &(alpha, priority)) in self.queues.iter().enumerate() {
                let q = q as u16;
                let (num, den) = tm.service_share(port, q).ok_or("no such queue")?;
                let empty = tm.depth(port, q).1 == 0;
                let n = tm.congested_queues(priority) + empty as u32;
                let omega = alpha * num as f64 / den as f64 / n.max(1) as f64;
                tm.set_alpha(port, q, omega.max(1.0 / Alpha::ONE as f64))
                    .map_err(|e| e.to_string())?;
            }
        }
        Ok(())
    }
}

/// Queues per port.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Queues {
    /// A high queue and one queue per low class (the paper's multi-queue deployment).
    #[default]
    Multi,
    /// One queue per port; the class rides in the packet's colour (the paper's single-queue
    /// deployment, with the flow classifier every scheme is given).
    Single,
}

/// The FB deployment's parameters (RON: `deploy: Fb((buffer: Fb, queues: Single))`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FbSpec {
    /// Buffer management.
    pub buffer: Buffer,
    /// Queues per port.
    pub queues: Queues,
    /// α of the high priority (the query traffic).
    pub alpha_high: f64,
    /// α of the low priority (the web-search traffic).
    pub alpha_low: f64,
    /// The host tag (traffic class) of the query traffic.
    pub high_class: u8,
    /// The host tags of the low classes, one queue each with [`Queues::Multi`].
    pub low_classes: Vec<u8>,
    /// DT's static private part, a fraction of the buffer split equally over every queue in
    /// use on every front port.
    pub dt_private: f64,
    /// ECN marking above this many full-size packets in a queue (DCTCP); `None`: none.
    pub ecn_threshold_packets: Option<u32>,
}

impl Default for FbSpec {
    /// The paper's §6 configuration: α_l = 0.5, α_h = 20, four low tags, 18.8 % private.
    fn default() -> Self {
        FbSpec {
            buffer: Buffer::Dt,
            queues: Queues::Multi,
            alpha_high: 20.0,
            alpha_low: 0.5,
            high_class: 1,
            low_classes: vec![2, 3, 4, 5],
            dt_private: 0.188,
            ecn_threshold_packets: None,
        }
    }
}

impl FbSpec {
    /// Queues in use on every port.
    fn queues_in_use(&self) -> u16 {
        match self.queues {
            Queues::Multi => 1 + self.low_classes.len() as u16,
            Queues::Single => 1,
        }
    }

    /// The queue and colour of host tag `class`.
    fn class_of(&self, class: u8) -> (u64, u64) {
        let high = class == self.high_class;
        match self.queues {
            Queues::Single => (0, if high { GREEN } else { YELLOW }),
            Queues::Multi if high => (HIGH_Q as u64, GREEN),
            Queues::Multi => {
                let i = self.low_classes.iter().position(|&c| c == class);
                (1 + i.unwrap_or(0) as u64, YELLOW)
            }
        }
    }

    /// `classify` entries for the eight tags.
    fn classify(&self) -> Vec<EntrySpec> {
        (0..8u8)
            .map(|class| {
                let (queue, colour) = self.class_of(class);
                EntrySpec::new(
                    "classify",
                    vec![KeySpec::Exact(Value::Int((class as u64) << 3))],
                    "set_class",
                    vec![Value::Int(queue), Value::Int(colour)],
                    0,
                )
            })
            .collect()
    }

    /// The TM configuration on `prof` for frames of `mtu` bytes of IP, over `base`.
    fn tm(&self, prof: &ChipProfile, mtu: usize, base: &mut tm::config::TmConfig) {
        let single = self.queues == Queues::Single;
        let class = |alpha, priority| ClassConfig { alpha, priority };
        // The low class's index: single-queue DT has the low class only.
        let (classes, low_class) = match (self.buffer, single) {
            (Buffer::Dt, true) => (vec![class(self.alpha_low, 0)], 0),
            _ => (
                vec![class(self.alpha_high, 1), class(self.alpha_low, 0)],
                LOW_CLASS,
            ),
        };
        base.classes = classes;
        base.admission = match (self.buffer, single) {
            (Buffer::Dt | Buffer::Fba { .. } | Buffer::Pisa(_), _) => {
                AdmissionPolicy::DynamicThreshold
            }
            (Buffer::Fb, false) => AdmissionPolicy::FlexibleBuffer,
            (Buffer::Fb, true) => AdmissionPolicy::FlexibleBufferSingleQueue,
        };
        if self.buffer == Buffer::Fb && single {
            base.color = ColorConfig {
                classes: vec![HIGH_CLASS, LOW_CLASS, LOW_CLASS],
                ..ColorConfig::default()
            };
        }
        let in_use = self.queues_in_use() as u32;
        let gmin = match self.buffer {
            Buffer::Dt | Buffer::Fba { .. } | Buffer::Pisa(_) => {
                let share = self.dt_private * prof.tm.cells as f64;
                (share / (prof.ports_all() * in_use) as f64).floor() as u32
            }
            Buffer::Fb => 0,
        };
        let ecn = match self.ecn_threshold_packets {
            Some(k) => EcnConfig::Threshold {
                k_cells: k * prof.tm.cells_for(mtu + 14),
            },
            None => EcnConfig::Off,
        };
        base.queues = (0..in_use)
            .map(|q| QueueConfig {
                class: if q == HIGH_Q as u32 && !single {
                    HIGH_CLASS
                } else {
                    low_class
                },
                gmin_cells: gmin,
                ecn,
                ..QueueConfig::default()
            })
            .collect();
        base.default_queue = QueueConfig {
            class: low_class,
            ..QueueConfig::default()
        };
        // Round robin: a quantum of one full-size frame, so a backlogged queue sends one
        // packet a turn (a larger quantum sends a run of them and leaves the queue unserved
        // for the others' runs, which PISA FB's egress copies, refreshed by departures,
        // would not see).
        base.scheduler = SchedulerConfig::Drr {
            quanta: vec![(mtu + 14) as u32; in_use as usize],
        };
        base.port_schedulers.clear();
    }
}

impl Deployment for FbSpec {
    fn program(&self) -> Option<Embedded> {
        Some(match self.buffer {
            Buffer::Pisa(_) => PISA_PROGRAM,
            _ => PROGRAM,
        })
    }

    fn routing(&self) -> Option<Routing> {
        Some(Routing::Ecmp)
    }

    fn check(&self, profile: &ChipProfile) -> Result<(), String> {
        for (field, a) in [
            ("alpha_high", self.alpha_high),
            ("alpha_low", self.alpha_low),
        ] {
            if Alpha::from_f64(a).is_none() {
                return Err(format!("fb.{field}: {a} is not in (0, 65535]"));
            }
        }
        if self.high_class > 7 {
            return Err(format!(
                "fb.high_class: {} is not a class (0..7)",
                self.high_class
            ));
        }
        if self.queues == Queues::Multi && self.low_classes.is_empty() {
            return Err("fb.low_classes: the multi-queue deployment needs a low class".into());
        }
        for (i, &c) in self.low_classes.iter().enumerate() {
            if c > 7 || c == self.high_class || self.low_classes[..i].contains(&c) {
                return Err(format!(
                    "fb.low_classes[{i}]: {c} is not a class (0..7) of its own, apart from \
                     high_class {}",
                    self.high_class
                ));
            }
        }
        if self.queues_in_use() > profile.tm.queues_per_port {
            return Err(format!(
                "fb.low_classes: {} queues per port, but chip profile `{}` has {}",
                self.queues_in_use(),
                profile.name,
                profile.tm.queues_per_port
            ));
        }
        if !(0.0..1.0).contains(&self.dt_private) {
            return Err(format!(
                "fb.dt_private: {} is not a fraction of the buffer in [0, 1)",
                self.dt_private
            ));
        }
        if let Buffer::Fba { period_ns } = self.buffer {
            if self.queues == Queues::Single {
                return Err(
                    "fb.buffer: Fba sets each queue's α, so it needs queues: Multi (with \
                            one queue per port FBA is DT, the paper's §5.2)"
                        .into(),
                );
            }
            if period_ns == 0 || Time::from_input_ns(period_ns, "").is_err() {
                return Err(format!(
                    "fb.buffer: Fba period_ns {period_ns} must be more than 0 and a time a \
                     scenario may name"
                ));
            }
        }
        if let Buffer::Pisa(p) = self.buffer {
            if self.queues == Queues::Single {
                return Err(
                    "fb.buffer: Pisa needs queues: Multi (PISA FB compares a queue's \
                            length with one threshold; one queue a port needs one per packet)"
                        .into(),
                );
            }
            if p.sync_period_ns == 0 || Time::from_input_ns(p.sync_period_ns, "").is_err() {
                return Err(format!(
                    "fb.buffer: Pisa sync_period_ns {} must be more than 0 and a time a \
                     scenario may name",
                    p.sync_period_ns
                ));
            }
        }
        if self.ecn_threshold_packets == Some(0) {
            return Err("fb.ecn_threshold_packets: must be at least 1 (or None)".into());
        }
        Ok(())
    }

    fn deploy(&self, chip: &ChipContext, mut config: ChipConfig) -> Result<ChipDeployment, String> {
        let mut entries = routers::routes(chip.topology, chip.chip, Routing::Ecmp);
        entries.extend(self.classify());
        self.tm(chip.profile, chip.mtu, &mut config.tm);
        let mut agents: Vec<Box<dyn ControlAgent>> = Vec::new();
        if let Buffer::Fba { period_ns } = self.buffer {
            let classes = &config.tm.classes;
            agents.push(Box::new(Fba {
                period: Time::from_ns(period_ns),
                queues: config.tm.queues[..self.queues_in_use() as usize]
                    .iter()
                    .map(|q| {
                        let c = &classes[q.class as usize];
                        (c.alpha, c.priority)
                    })
                    .collect(),
            }));
        }
        let mut control = Vec::new();
        if let Buffer::Pisa(pisa) = self.buffer {
            let ports: Vec<u16> = chip.topology.chip_ports[chip.chip]
                .keys()
                .copied()
                .collect();
            let nq = self.queues_in_use();
            let classes: Vec<QueueClass> = config.tm.queues[..nq as usize]
                .iter()
                .map(|q| QueueClass {
                    alpha_class: q.class,
                    priority: config.tm.classes[q.class as usize].priority,
                })
                .collect();
            let alphas: Vec<f64> = config.tm.classes.iter().map(|c| c.alpha).collect();
            // B: the shared pool as the TM will make it.
            let pool = config
                .tm
                .pool_sizes(&chip.profile.tm, chip.profile.ports_all() as usize)
                .map_err(|e| e.to_string())?[0];
            let (more, ops) =
                pisa.deploy(chip.profile, &ports, &classes, &alphas, pool, &mut config)?;
            entries.extend(more);
            control = ops;
        }
        Ok(ChipDeployment {
            entries,
            control,
            config,
            agents,
        })
    }
}
