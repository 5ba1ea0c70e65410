//! Deploying programs/trimming/trimming.p4 on a chip of a network: packet trimming as Popa et
//! al. built it on Tofino 1 ("Implementing packet trimming support in hardware", 2022): ingress
//! meters per (pipe, egress port) in three modes, deflect-on-drop to the pipe's recirculation
//! port as the backstop, and the UPDATE/NOTIFY loop that makes every pipe's ingress trim harder
//! for a port whose packets were deflected. programs/trimming/README.md explains each part
//! against the paper.
//!
//! What a chip gets, for every connected front port `p`:
//! - queues: [`DATA_Q`] (data, `data_queue_packets` full-size frames under static admission,
//!   deflect-on-drop), [`HDR_Q`] (trimmed headers and everything that is not data, strict
//!   priority 7 over the others, or byte-based WFQ against the data on front ports with
//!   [`HeaderQueue::Wfq`]), [`DOD_Q`] (the deflected packets, or with
//!   [`Trigger::MirrorOnDrop`] the mirror-on-drop copies, on the recirculation ports; the
//!   shared pool's size);
//! - mirror session `p + 1`: the port's header queue, truncated to the trimmed header;
//!   multicast group `p + 1`: every pipe's recirculation port (replication id 1, the NOTIFYs)
//!   and `p` (id 0, the header of a deflected packet);
//! - meters `m_opt`, `m_half`, `m_pess` at index `p` in every pipe, at the port's line rate, a
//!   half and a quarter of it (switch.p4's two trTCMs with [`Meters::TwoTrTcm`]), bursts of the
//!   data queue's bytes, and the meter arrays' byte-count adjustment of [`WIRE_OVERHEAD`];
//! - entries: `ingress_cfg` (spraying, what an UPDATE does, T0 and T1) for front and
//!   recirculation ports, `port_trim` (the port's session, group, trimmed lengths, depth
//!   threshold), `egress_cfg` (each recirculation port's UPDATE session) and `trim_decide`,
//!   the variant's rules from (mode, colours, depth above threshold) to trimming.
//!
//! Per pipe: mirror session `ports + 1 + pipe` to the pipe's recirculation port, truncated,
//! the UPDATEs. The routes are the stock routers' ([`crate::routers`]).

use crate::routers::{self, Routing};
use crate::{ChipContext, ChipDeployment, Deployment, Embedded};
use asic_model::chip::{ChipConfig, DodConfig, McastGroup, MirrorOnDropConfig, MirrorSession};
use asic_model::profile::ChipProfile;
use asic_net::packet::HEADER_BYTES;
use pipelines::control::ControlOp;
use pipelines::entries::{EntrySpec, KeySpec, MeterAdjust, MeterSetting, Value};
use serde::{Deserialize, Serialize};
use tm::config::{AdmissionPolicy, PortScheduler, SchedulerConfig, DEFAULT_DRR_QUANTUM_BYTES};

/// `programs/trimming`: packet trimming with ECMP routing.
pub const PROGRAM: Embedded = Embedded {
    file: "programs/trimming/trimming.p4",
    source: include_str!("../../programs/trimming/trimming.p4"),
};

/// The data queue of every port (the program's `DATA_Q`).
pub const DATA_Q: u16 = 0;
/// The header queue of every port (the program's `HDR_Q`): headers, control packets,
/// UPDATEs and NOTIFYs.
pub const HDR_Q: u16 = 1;
/// The deflect-on-drop (or mirror-on-drop) queue, on the recirculation ports.
pub const DOD_Q: u16 = 2;

/// Bytes a frame takes on the wire beyond what the chip stores: preamble and SFD (8), FCS (4)
/// and the inter-frame gap (12). The meters count them, as the paper's control plane sets a
/// byte meter to the port's line rate.
pub const WIRE_OVERHEAD: i32 = 24;

/// Bytes of the program's internal header (`ctl_h`) in front of every packet between the
/// gresses and of every UPDATE and NOTIFY.
const CTL_BYTES: u16 = 4;

/// Ethernet + IPv4 header bytes before the UDP header.
const ETH_IP_BYTES: u16 = 14 + 20;

/// Indexes of the program's per-port arrays are 7 bits (`eport[6:0]`).
const PORT_INDEXES: u32 = 128;

/// Port modes as the program numbers them (`M_OPT`, `M_HALF`, `M_PESS`).
const M_OPT: u64 = 0;
const M_HALF: u64 = 1;
const M_PESS: u64 = 2;

/// TNA meter colours.
const RED: u64 = 3;

/// `ingress_cfg.notify`: the program's `N_ALL`, `N_NONE`, `N_SELF`.
fn notify_code(f: Feedback) -> u64 {
    match f {
        Feedback::AllPipes => 0,
        Feedback::None => 1,
        Feedback::OriginPipe => 2,
    }
}

/// Which meters decide, per port mode.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Meters {
    /// ndp.p4: three single-rate meters (CIR = PIR) at 100, 50 and 25 % of the line rate; the
    /// mode's meter red trims.
    #[default]
    Three,
    /// switch.p4: `opti` (PIR = line rate, CIR = half) and `pesi` (PIR = CIR = a quarter), with
    /// its action table: pessimistic trims on `pesi` not green, half on `opti` not green,
    /// optimistic on `opti` red.
    TwoTrTcm,
}

/// Where the congestion signal of a deflected packet goes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Feedback {
    /// The paper's design: a NOTIFY to every pipe.
    #[default]
    AllPipes,
    /// Only the pipe the deflected packet came in on (the paper's "inform a single pipeline").
    OriginPipe,
    /// No feedback: meters and deflect-on-drop alone (the paper's "DoD" curve).
    None,
}

/// What a port does while a NOTIFY holds it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Response {
    /// Pessimistic (25 %) until T0, half (50 %) until T1: the paper's design.
    #[default]
    Graded,
    /// Pessimistic until T0, then optimistic (the paper's "25 % trimming" ablation).
    PessimisticOnly,
    /// Every data packet trimmed until T0, then optimistic (the "100 % trimming" ablation).
    TrimAll,
}

/// What triggers ingress trimming.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Trigger {
    /// The meters of the port's mode (Tofino 1).
    #[default]
    Meters,
    /// The Tofino 2 variant (§3.1.3): the data queue's depth as the TM publishes it to
    /// ingress, above this many cells, trims; the meters are not consulted.
    Depth {
        /// The threshold, cells.
        threshold_cells: u32,
    },
    /// The paper's MoD baseline (§3, §6.1), on the chip's what-if `mirror_on_drop`: nothing
    /// trims in ingress (no meters, no `trim_decide` rules) and nothing is deflected; the data
    /// queue's overflow is dropped and its first bytes mirrored to the pipe's recirculation
    /// port ([`DOD_Q`]), which the program sends on as a trimmed header. `meters`, `response`
    /// and `feedback` do not apply.
    MirrorOnDrop,
}

/// How a front port's scheduler shares the port between its header and data queues.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum HeaderQueue {
    /// The header queue at strict priority 7 over the data queue (the paper's Tofino design,
    /// NDP's "higher priority queue"): headers always go first, and a flood of them stops the
    /// data.
    #[default]
    StrictPriority,
    /// Byte-based weighted fair queueing, "ideally" NDP's (§2): deficit round robin with the
    /// header queue's quantum `header_weight` times the data queue's, so while both hold
    /// packets headers get `header_weight / (header_weight + 1)` of the port's bytes and data
    /// the rest (headers still overtake the data queued before them). Recirculation ports
    /// keep strict priority for their UPDATEs and NOTIFYs.
    Wfq {
        /// The header queue's share against the data queue's 1.
        header_weight: u32,
    },
}

/// Packet trimming's parameters for one chip.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TrimmingSpec {
    /// A NOTIFY makes the port pessimistic until this long after it (ns; the paper: 6 µs).
    pub t0_ns: u64,
    /// ... and half-pessimistic until this long after it (ns, at least `t0_ns`; the paper:
    /// 24 µs, so half mode lasts 18 µs).
    pub t1_ns: u64,
    /// The meters and their decision.
    pub meters: Meters,
    /// The response to a NOTIFY.
    pub response: Response,
    /// Where the congestion signal goes.
    pub feedback: Feedback,
    /// What triggers ingress trimming.
    pub trigger: Trigger,
    /// The data queue of a port, in full-size frames (the paper: 10-20; 12 in its ping test).
    pub data_queue_packets: u32,
    /// A trimmed header's length on the wire (bytes without FCS; at least the model's 74
    /// header bytes).
    pub trim_bytes: u16,
    /// ECMP member per packet at random (per-packet spraying) instead of by the flow hash.
    pub spray: bool,
    /// The meters' byte-count adjustment (bytes added to each packet's stored length;
    /// [`WIRE_OVERHEAD`]: they meter the wire).
    pub meter_adjust_bytes: i32,
    /// The meters' burst, in full-size frames (`None`: the data queue's, `data_queue_packets`;
    /// the paper does not give it). Each pipe's meter lets this many through at once.
    pub meter_burst_packets: Option<u32>,
    /// The routes installed with trimming's entries (`None`: the scenario's entries route).
    pub routes: Option<Routing>,
    /// The front ports' scheduling of headers against data.
    pub header_queue: HeaderQueue,
}

impl Default for TrimmingSpec {
    fn default() -> Self {
        TrimmingSpec {
            t0_ns: 6_000,
            t1_ns: 24_000,
            meters: Meters::Three,
            response: Response::Graded,
            feedback: Feedback::AllPipes,
            trigger: Trigger::Meters,
            data_queue_packets: 12,
            trim_bytes: 80,
            spray: false,
            meter_adjust_bytes: WIRE_OVERHEAD,
            meter_burst_packets: None,
            routes: Some(Routing::Ecmp),
            header_queue: HeaderQueue::StrictPriority,
        }
    }
}

fn n(v: u64) -> Value {
    Value::Int(v)
}

/// A ternary key matching `v` under `mask`.
fn tern(v: u64, mask: u64) -> KeySpec {
    KeySpec::Ternary(n(v), n(mask))
}

/// A ternary key matching anything.
fn any() -> KeySpec {
    tern(0, 0)
}

/// The mirror session of `pipe`'s UPDATEs (after the front ports' header sessions `p + 1`).
fn update_session(prof: &ChipProfile, pipe: u16) -> u16 {
    prof.ports_total() as u16 + 1 + pipe
}

/// The front ports of chip `c` that have a link, with their links' speeds.
fn connected(chip: &ChipContext) -> Vec<(u16, u32)> {
    let topo = chip.topology;
    topo.chip_ports[chip.chip]
        .iter()
        .map(|(&p, &l)| (p, topo.links[l].gbps))
        .collect()
}

/// One rule of `trim_decide`: in `mode`, these colour keys (`c_opt`, `c_half`, `c_pess`) trim.
fn rule(mode: u64, colours: [KeySpec; 3], prio: u32) -> EntrySpec {
    let [o, h, p] = colours;
    EntrySpec::new(
        "trim_decide",
        vec![tern(mode, 3), o, h, p, any()],
        "trim",
        Vec::new(),
        prio,
    )
}

impl TrimmingSpec {
    /// Cells of the data queue: `data_queue_packets` frames of the largest size (`mtu` IP
    /// bytes, Ethernet and the program's bridged header).
    pub fn data_queue_cells(&self, mtu: usize, cell_bytes: u32) -> u32 {
        let frame = (mtu + 14 + CTL_BYTES as usize) as u32;
        self.data_queue_packets * frame.div_ceil(cell_bytes)
    }

    /// The meters' burst: `meter_burst_packets` (by default the data queue's) full-size
    /// frames, counted as the meters count.
    pub fn burst_bytes(&self, mtu: usize) -> u64 {
        let frame = (mtu + 14) as i64 + self.meter_adjust_bytes as i64;
        let frames = self.meter_burst_packets.unwrap_or(self.data_queue_packets);
        frames as u64 * frame.max(1) as u64
    }

    /// `trim_decide`'s rules for the variant.
    fn decide_rules(&self) -> Vec<EntrySpec> {
        let red = || tern(RED, 3);
        let not_green = || tern(1, 1);
        match self.trigger {
            Trigger::Depth { .. } => {
                return vec![EntrySpec::new(
                    "trim_decide",
                    vec![any(), any(), any(), any(), tern(1, 1)],
                    "trim",
                    Vec::new(),
                    1,
                )]
            }
            Trigger::MirrorOnDrop => return Vec::new(),
            Trigger::Meters => {}
        }
        // Optimistic: the line-rate meter red (`m_opt` in both variants); a half mode the
        // response does not use decides the same.
        let opt = || [red(), any(), any()];
        let half = match (self.response, self.meters) {
            (Response::Graded, Meters::Three) => [any(), red(), any()],
            (Response::Graded, Meters::TwoTrTcm) => [not_green(), any(), any()],
            _ => opt(),
        };
        let pess = match (self.response, self.meters) {
            (Response::TrimAll, _) => [any(), any(), any()],
            (_, Meters::Three) => [any(), any(), red()],
            (_, Meters::TwoTrTcm) => [any(), any(), not_green()],
        };
        vec![
            rule(M_PESS, pess, 3),
            rule(M_HALF, half, 2),
            rule(M_OPT, opt(), 1),
        ]
    }

    /// The table entries of a chip (besides its routes).
    fn entries(&self, chip: &ChipContext) -> Vec<EntrySpec> {
        let prof = chip.profile;
        let mut v = Vec::new();
        let cfg = |p: u16| {
            EntrySpec::new(
                "ingress_cfg",
                vec![KeySpec::Exact(n(p as u64))],
                "set_cfg",
                vec![
                    n(self.spray as u64),
                    n(notify_code(self.feedback)),
                    n(self.t0_ns),
                    n(self.t1_ns),
                ],
                0,
            )
        };
        let ip_len = (self.trim_bytes - 14) as u64;
        let udp_len = (self.trim_bytes - ETH_IP_BYTES) as u64;
        let depth_thr = match self.trigger {
            Trigger::Depth { threshold_cells } => threshold_cells as u64,
            Trigger::Meters | Trigger::MirrorOnDrop => (1 << 19) - 1,
        };
        for (p, _) in connected(chip) {
            v.push(cfg(p));
            v.push(EntrySpec::new(
                "port_trim",
                vec![KeySpec::Exact(n(p as u64))],
                "set_port",
                vec![
                    n(p as u64 + 1),
                    n(p as u64 + 1),
                    n(ip_len),
                    n(udp_len),
                    n(depth_thr),
                ],
                0,
            ));
        }
        for pipe in 0..prof.pipes {
            if let Some(rp) = prof.recirc_port(pipe, 0) {
                v.push(cfg(rp));
                v.push(EntrySpec::new(
                    "egress_cfg",
                    vec![KeySpec::Exact(n(rp as u64))],
                    "set_update",
                    vec![n(update_session(prof, pipe) as u64)],
                    0,
                ));
            }
        }
        v.extend(self.decide_rules());
        v
    }

    /// The meters' configuration and byte-count adjustment (applied when the chip is built;
    /// none under mirror-on-drop, which meters nothing).
    fn meter_ops(&self, chip: &ChipContext) -> Vec<ControlOp> {
        if self.trigger == Trigger::MirrorOnDrop {
            return Vec::new();
        }
        let burst = self.burst_bytes(chip.mtu);
        let mut ops = Vec::new();
        let set = |meter: &str, p: u16, cir: u64, pir: u64| {
            ControlOp::ConfigureMeter(MeterSetting {
                meter: meter.into(),
                index: p as u32,
                cir: n(cir),
                pir: n(pir),
                cbs: n(burst),
                pbs: n(burst),
            })
        };
        let arrays: &[&str] = match self.meters {
            Meters::Three => &["m_opt", "m_half", "m_pess"],
            Meters::TwoTrTcm => &["m_opt", "m_pess"],
        };
        for meter in arrays {
            ops.push(ControlOp::SetMeterByteCountAdjust(MeterAdjust {
                meter: meter.to_string(),
                bytes: self.meter_adjust_bytes,
            }));
        }
        for (p, gbps) in connected(chip) {
            let line = gbps as u64 * 1_000_000_000 / 8;
            match self.meters {
                Meters::Three => {
                    ops.push(set("m_opt", p, line, line));
                    ops.push(set("m_half", p, line / 2, line / 2));
                    ops.push(set("m_pess", p, line / 4, line / 4));
                }
                Meters::TwoTrTcm => {
                    ops.push(set("m_opt", p, line / 2, line));
                    ops.push(set("m_pess", p, line / 4, line / 4));
                }
            }
        }
        ops
    }

    /// The chip configuration: queues, scheduler, deflect-on-drop (or mirror-on-drop),
    /// sessions and groups.
    fn chip_config(&self, chip: &ChipContext, mut base: ChipConfig) -> ChipConfig {
        let prof = chip.profile;
        let recirc: Vec<u16> = (0..prof.pipes)
            .filter_map(|pipe| prof.recirc_port(pipe, 0))
            .collect();
        let truncate = CTL_BYTES + self.trim_bytes;
        for (p, _) in connected(chip) {
            base.mirror_sessions.push(MirrorSession {
                id: p + 1,
                port: p,
                queue: HDR_Q,
                truncate_bytes: Some(truncate),
                mcast_group: None,
            });
            let mut members: Vec<(u16, u16)> = recirc.iter().map(|&r| (r, 1)).collect();
            members.push((p, 0));
            base.mcast_groups.push(McastGroup { id: p + 1, members });
        }
        for pipe in 0..prof.pipes {
            if let Some(rp) = prof.recirc_port(pipe, 0) {
                base.mirror_sessions.push(MirrorSession {
                    id: update_session(prof, pipe),
                    port: rp,
                    queue: HDR_Q,
                    truncate_bytes: Some(truncate),
                    mcast_group: None,
                });
            }
        }
        if self.trigger == Trigger::MirrorOnDrop {
            base.mirror_on_drop = Some(MirrorOnDropConfig {
                port: None,
                queue: DOD_Q,
                truncate_bytes: truncate,
            });
        } else {
            base.dod = Some(DodConfig {
                port: None,
                queue: DOD_Q,
            });
        }
        let tm = &mut base.tm;
        tm.admission = AdmissionPolicy::Static;
        let mut data = tm.default_queue;
        data.static_limit_cells = Some(self.data_queue_cells(chip.mtu, prof.tm.cell_bytes));
        tm.queues = vec![data, tm.default_queue, tm.default_queue];
        let priority = SchedulerConfig::SpOverDrr {
            levels: vec![0, 7, 0],
            quanta: Vec::new(),
        };
        match self.header_queue {
            HeaderQueue::StrictPriority => tm.scheduler = priority,
            HeaderQueue::Wfq { header_weight } => {
                let q = DEFAULT_DRR_QUANTUM_BYTES;
                tm.scheduler = SchedulerConfig::Drr {
                    quanta: vec![q, header_weight * q, q],
                };
                tm.port_schedulers
                    .extend(recirc.iter().map(|&port| PortScheduler {
                        port,
                        scheduler: priority.clone(),
                    }));
            }
        }
        base
    }

    /// Check the parameters (and the chip's profile).
    fn check_spec(&self, prof: &ChipProfile) -> Result<(), String> {
        if self.t1_ns < self.t0_ns {
            return Err(format!(
                "trimming.t1_ns: {} is before t0_ns ({}); both count from the NOTIFY",
                self.t1_ns, self.t0_ns
            ));
        }
        if self.t1_ns >= 1 << 31 {
            return Err(format!(
                "trimming.t1_ns: {} does not fit the program's 32-bit nanosecond timers (at most {})",
                self.t1_ns,
                (1u64 << 31) - 1
            ));
        }
        if self.data_queue_packets == 0 {
            return Err("trimming.data_queue_packets: must be at least 1".into());
        }
        if self.meter_burst_packets == Some(0) {
            return Err("trimming.meter_burst_packets: must be at least 1 (a meter lets a whole frame through)".into());
        }
        if let HeaderQueue::Wfq { header_weight } = self.header_queue {
            // The header queue's DRR quantum is header_weight full-size quanta, in 32 bits.
            if header_weight == 0 || header_weight > u32::MAX / DEFAULT_DRR_QUANTUM_BYTES {
                return Err(format!(
                    "trimming.header_queue: Wfq header_weight {header_weight} is not in 1..={}",
                    u32::MAX / DEFAULT_DRR_QUANTUM_BYTES
                ));
            }
        }
        if (self.trim_bytes as usize) < HEADER_BYTES {
            return Err(format!(
                "trimming.trim_bytes: {} is shorter than the hosts' {HEADER_BYTES} header bytes, which a trimmed header must keep",
                self.trim_bytes
            ));
        }
        if let Trigger::Depth { threshold_cells } = self.trigger {
            if threshold_cells >= (1 << 19) - 1 {
                return Err(format!(
                    "trimming.trigger: Depth threshold_cells {threshold_cells} does not fit the 19-bit depth the TM publishes"
                ));
            }
        }
        if prof.recirculation.ports_per_pipe == 0 {
            return Err(format!(
                "trimming needs a recirculation port per pipe (the DoD queue and the UPDATE/NOTIFY loop); `{}` has none",
                prof.name
            ));
        }
        let ports =
            prof.ports_total() + prof.pipes as u32 * prof.recirculation.ports_per_pipe as u32;
        if ports > PORT_INDEXES {
            return Err(format!(
                "trimming indexes its per-port meters and timers by 7 bits of the port ({PORT_INDEXES} ports); `{}` has {ports} front and recirculation ports",
                prof.name
            ));
        }
        if prof.tm.queues_per_port <= DOD_Q {
            return Err(format!(
                "trimming uses {} queues per port (data, headers, deflected); `{}` has {}",
                DOD_Q + 1,
                prof.name,
                prof.tm.queues_per_port
            ));
        }
        let sessions = prof.ports_total() + prof.pipes as u32 + 1;
        if sessions > prof.plumbing.mirror_sessions as u32 {
            return Err(format!(
                "trimming uses {sessions} mirror sessions (one per front port and per pipe); `{}` has {}",
                prof.name, prof.plumbing.mirror_sessions
            ));
        }
        Ok(())
    }
}

impl Deployment for TrimmingSpec {
    fn program(&self) -> Option<Embedded> {
        Some(PROGRAM)
    }

    fn check(&self, profile: &ChipProfile) -> Result<(), String> {
        self.check_spec(profile)
    }

    fn routing(&self) -> Option<Routing> {
        self.routes
    }

    fn deploy(&self, chip: &ChipContext, config: ChipConfig) -> Result<ChipDeployment, String> {
        if chip.mtu + 14 < self.trim_bytes as usize {
            return Err(format!(
                "trimming.trim_bytes: {} is longer than a full frame at the scenario's mtu {}",
                self.trim_bytes, chip.mtu
            ));
        }
        let mut entries = match self.routes {
            Some(r) => routers::routes(chip.topology, chip.chip, r),
            None => Vec::new(),
        };
        entries.extend(self.entries(chip));
        Ok(ChipDeployment {
            entries,
            control: self.meter_ops(chip),
            config: self.chip_config(chip, config),
            agents: Vec::new(),
        })
    }
}
