//! Deploying programs/bfc/bfc.p4 on a chip of a network: the table entries and the chip
//! configuration BFC needs, computed from the topology and a few parameters.
//!
//! The routes are the stock routers' ECMP routes ([`crate::routers`]) unless `routes: None`
//! (the scenario's entries then route, as in the one-chip testbed).
//!
//! What a chip gets (programs/bfc/README.md explains each against the paper):
//! - mirror session `p + 1` for every connected front port `p`: copies to its control queue,
//!   truncated to 64 bytes (the pause frames); session `ports + 1 + pipe` per pipe: copies to
//!   the pipe's recirculation port (the dequeue records and the refresh walk);
//! - per pipe with connected ports, a packet-generator application that starts the refresh
//!   walk every `refresh_ns`;
//! - the TM scheduler: the control queue at strict priority 7 over DRR among data queues;
//! - entries: `ingress_cfg` (sessions, sticky time, assignment mode) for front,
//!   recirculation and generator ports; `egress_cfg` (speed class, control queue, data-queue
//!   mask) per front port; `pause_th` for Th = HRTT · µ / N_active in cells; the popcount,
//!   queue-mask, lowest-bit, claim-lane and random-queue tables; the refresh `walk`; and
//!   `bp_elide` for (ingress, egress) pairs that both face a chip nearer the core (the
//!   paper's Clos rule for deadlock freedom, App. B).

use crate::routers::{self, Routing};
use crate::{ChipContext, ChipDeployment, Deployment, Embedded, HostRules};
use asic_model::chip::{ChipConfig, MirrorSession, PktGenApp};
use asic_model::profile::ChipProfile;
use asic_net::rng::Stream;
use asic_net::topology::{End, Topology};
use pipelines::entries::{EntrySpec, KeySpec, Value};
use pipelines::time::Time;
use serde::{Deserialize, Serialize};
use tm::config::SchedulerConfig;

/// `programs/bfc`: Backpressure Flow Control with ECMP routing.
pub const PROGRAM: Embedded = Embedded {
    file: "programs/bfc/bfc.p4",
    source: include_str!("../../programs/bfc/bfc.p4"),
};

/// How a BFC chip assigns flows to queues (the paper's three variants, Fig. 8).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Assignment {
    /// Dynamic queue assignment: a new flow gets the data queue with the most credit (free,
    /// then held for an idle entry, then active; taken in one min/max pass), or a random one
    /// when all are active; a returning flow takes its own queue again.
    #[default]
    Dynamic,
    /// BFC + stochastic: the flow hash picks a fixed queue.
    Stochastic,
    /// BFC + single: every flow in data queue 0 (PFC-like).
    Single,
}

/// BFC's parameters for one chip.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BfcSpec {
    /// Queues per port BFC uses (a power of two, 2..=32): the last is the control queue,
    /// the others are data queues.
    pub queues: u16,
    /// The one-hop RTT Th and the sticky time are based on (ns; the maximum over ingress
    /// ports, as the paper says).
    pub hrtt_ns: u64,
    /// Th in units of HRTT · µ / N_active (1.0 is the paper's setting; the testbed sweep
    /// varies it).
    pub th_scale: f64,
    /// Sticky reassignment after this many HRTTs idle (the paper: 2).
    pub sticky_hrtts: u64,
    /// Refresh period of the pause bitmap (ns).
    pub refresh_ns: u64,
    /// Queue assignment.
    pub assignment: Assignment,
    /// The routes installed with BFC's entries (`None`: the scenario's entries route).
    pub routes: Option<Routing>,
}

impl Default for BfcSpec {
    fn default() -> Self {
        BfcSpec {
            queues: 32,
            hrtt_ns: 2_000,
            th_scale: 1.0,
            sticky_hrtts: 2,
            refresh_ns: 50_000,
            assignment: Assignment::Dynamic,
            routes: Some(Routing::Ecmp),
        }
    }
}

/// Upstream queues per port the program tracks: the pause counter and pause bitmap take
/// upstreamQ's low 5 bits, so a NIC (or upstream chip) must use queue ids below this.
pub const MAX_UPSTREAM_QUEUES: usize = 32;

/// Bytes of the program's internal record header (`rec_h`).
const REC_BYTES: usize = 16;
/// Record kind: the refresh walk.
const K_TICK: u8 = 4;
/// Control copies and records are truncated to this many bytes.
const TRUNCATE: u16 = 64;

fn n(v: u64) -> Value {
    Value::Int(v)
}

/// The front ports of chip `c` that have a link, in order.
fn connected_ports(topo: &Topology, c: usize) -> Vec<u16> {
    topo.chip_ports[c].keys().copied().collect()
}

/// The mirror session of `pipe`'s dequeue records and refresh walk (after the front ports'
/// pause sessions `p + 1`).
fn deq_session(prof: &ChipProfile, pipe: u16) -> u16 {
    prof.ports_total() as u16 + 1 + pipe
}

impl BfcSpec {
    /// Check the parameters against a chip with `queues_per_port`.
    fn check_queues(&self, queues_per_port: u16) -> Result<(), String> {
        if !self.queues.is_power_of_two() || !(2..=32).contains(&self.queues) {
            return Err(format!(
                "bfc.queues: {} must be a power of two from 2 to 32",
                self.queues
            ));
        }
        if self.queues > queues_per_port {
            return Err(format!(
                "bfc.queues: {} but the chip has {queues_per_port} queues per port",
                self.queues
            ));
        }
        // NaN compares as neither: it is refused with the rest.
        let positive = self.th_scale.partial_cmp(&0.0) == Some(std::cmp::Ordering::Greater);
        if !positive || !self.th_scale.is_finite() || self.hrtt_ns == 0 || self.refresh_ns == 0 {
            return Err("bfc: th_scale, hrtt_ns and refresh_ns must be positive".into());
        }
        let sticky = self.sticky_hrtts.saturating_mul(self.hrtt_ns);
        for (ns, field) in [
            (self.hrtt_ns, "bfc.hrtt_ns"),
            (self.refresh_ns, "bfc.refresh_ns"),
            (sticky, "bfc.sticky_hrtts × hrtt_ns"),
        ] {
            Time::from_input_ns(ns, field)?;
        }
        Ok(())
    }

    /// The control queue.
    pub fn ctrl_queue(&self) -> u16 {
        self.queues - 1
    }

    /// Th in cells for a port of `gbps` with `active` active queues (at least 1).
    pub fn th_cells(&self, gbps: u32, active: u32, cell_bytes: u32) -> u32 {
        let bytes = self.th_scale * self.hrtt_ns as f64 * gbps as f64 / 8.0 / active.max(1) as f64;
        (bytes / cell_bytes as f64).ceil() as u32
    }

    /// The chip configuration for chip `c` (`base` carries the seed and TM settings).
    fn chip_config(
        &self,
        prof: &ChipProfile,
        c: usize,
        topo: &Topology,
        mut base: ChipConfig,
    ) -> ChipConfig {
        let ports = connected_ports(topo, c);
        for &p in &ports {
            base.mirror_sessions.push(MirrorSession {
                id: p + 1,
                port: p,
                queue: self.ctrl_queue(),
                truncate_bytes: Some(TRUNCATE),
                mcast_group: None,
            });
        }
        for pipe in 0..prof.pipes {
            let Some(rp) = prof.recirc_port(pipe, 0) else {
                continue;
            };
            base.mirror_sessions.push(MirrorSession {
                id: deq_session(prof, pipe),
                port: rp,
                queue: 0,
                truncate_bytes: Some(TRUNCATE),
                mcast_group: None,
            });
            if let Some(&first) = ports.iter().find(|&&p| prof.pipe_of_port(p) == Some(pipe)) {
                let mut template = vec![0u8; REC_BYTES];
                template[0] = 0xBF;
                template[1] = K_TICK;
                template[2..4].copy_from_slice(&first.to_be_bytes());
                base.pktgen.push(PktGenApp {
                    pipe,
                    template,
                    period_ns: Some(self.refresh_ns),
                    start_ns: self.refresh_ns,
                    count: None,
                    at_ns: Vec::new(),
                });
            }
        }
        let mut levels = vec![0u8; self.queues as usize];
        levels[self.ctrl_queue() as usize] = 7;
        base.tm.scheduler = SchedulerConfig::SpOverDrr {
            levels,
            quanta: Vec::new(),
        };
        base
    }

    /// The entries for chip `c` (besides its routes). `seed` (the scenario's, so every
    /// switch hashes alike, as in the paper's SFQ strawman) draws the stochastic variant's
    /// hash-to-queue table: runs with different seeds hash flows differently, as runs with
    /// other 5-tuples would.
    fn entries(&self, prof: &ChipProfile, c: usize, topo: &Topology, seed: u64) -> Vec<EntrySpec> {
        let ports = connected_ports(topo, c);
        let nq = self.queues as u32;
        let ctrl = self.ctrl_queue() as u32;
        let data_mask: u64 = ((1u64 << nq) - 1) & !(1u64 << ctrl);
        let mode = match self.assignment {
            Assignment::Dynamic => 0,
            Assignment::Stochastic => 1,
            Assignment::Single => 2,
        };
        let sticky = self.sticky_hrtts * self.hrtt_ns;
        let mut v = Vec::new();
        let ingress = |p: u16, pause: u64, pipe: u16| {
            EntrySpec::new(
                "ingress_cfg",
                vec![KeySpec::Exact(n(p as u64))],
                "set_ingress",
                vec![
                    n(pause),
                    n(deq_session(prof, pipe) as u64),
                    n(sticky),
                    n(mode),
                ],
                0,
            )
        };
        let mut speeds: Vec<u32> = Vec::new();
        for &p in &ports {
            let pipe = prof.pipe_of_port(p).unwrap_or(0);
            v.push(ingress(p, p as u64 + 1, pipe));
            // The port runs at its link's speed.
            let gbps = topo.links[topo.chip_ports[c][&p]].gbps;
            let class = match speeds.iter().position(|&s| s == gbps) {
                Some(i) => i,
                None => {
                    speeds.push(gbps);
                    speeds.len() - 1
                }
            };
            v.push(EntrySpec::new(
                "egress_cfg",
                vec![KeySpec::Exact(n(p as u64))],
                "set_egress",
                vec![n(class as u64), n(ctrl as u64), n(data_mask)],
                0,
            ));
        }
        for pipe in 0..prof.pipes {
            for internal in [prof.recirc_port(pipe, 0), prof.pktgen_port(pipe)]
                .into_iter()
                .flatten()
            {
                v.push(ingress(internal, 0, pipe));
            }
            // The refresh walks the pipe's connected ports in order.
            let mine: Vec<u16> = ports
                .iter()
                .copied()
                .filter(|&p| prof.pipe_of_port(p) == Some(pipe))
                .collect();
            for w in mine.windows(2) {
                v.push(EntrySpec::new(
                    "walk",
                    vec![KeySpec::Exact(n(w[0] as u64))],
                    "walk_to",
                    vec![n(w[1] as u64)],
                    0,
                ));
            }
        }
        for (class, &gbps) in speeds.iter().enumerate() {
            for active in 0..=nq {
                v.push(EntrySpec::new(
                    "pause_th",
                    vec![
                        KeySpec::Exact(n(class as u64)),
                        KeySpec::Exact(n(active as u64)),
                    ],
                    "set_th",
                    vec![n(self.th_cells(gbps, active, prof.tm.cell_bytes) as u64)],
                    0,
                ));
            }
        }
        // popcountK counts the data queues of byte K whose `idle` bit is 0.
        for (k, table) in ["popcount0", "popcount1", "popcount2", "popcount3"]
            .iter()
            .enumerate()
        {
            let action = format!("set_n{k}");
            for b in 0..256u64 {
                let data = (data_mask >> (8 * k)) & 0xff;
                let count = (data & !b).count_ones() as u64;
                v.push(EntrySpec::new(
                    table,
                    vec![KeySpec::Exact(n(b))],
                    &action,
                    vec![n(count)],
                    0,
                ));
            }
        }
        for q in 0..32u64 {
            let bit = 1u64 << q;
            v.push(EntrySpec::new(
                "queue_mask",
                vec![KeySpec::Exact(n(q))],
                "set_mask",
                vec![n(bit), n(!bit & 0xffff_ffff)],
                0,
            ));
            v.push(EntrySpec::new(
                "upstream_mask",
                vec![KeySpec::Exact(n(q))],
                "set_pm_mask",
                vec![n(bit), n(!bit & 0xffff_ffff)],
                0,
            ));
            let below = (bit << 1) - 1;
            for paused in [true, false] {
                v.push(EntrySpec::new(
                    "lowest_bit",
                    vec![
                        KeySpec::Ternary(n(bit), n(below)),
                        KeySpec::Ternary(n(if paused { bit } else { 0 }), n(bit)),
                    ],
                    "fix_queue",
                    vec![
                        n(q),
                        n(if paused { 1 } else { 2 }),
                        n(if paused { 0 } else { 1 }),
                    ],
                    32 - q as u32,
                ));
            }
        }
        // The claim word's lane for one queue: 16 lanes per 128-bit word, two words per port.
        for q in 0..32u64 {
            v.push(EntrySpec::new(
                "lane_mask",
                vec![KeySpec::Exact(n(q))],
                "set_lane",
                vec![n(1 << (q % 16)), n(q & 16), n(q / 16)],
                0,
            ));
        }
        // `rand_q` maps a byte to a data queue: for the dynamic variant's fallback the byte is
        // random and the map r mod (N - 1) (uniform within 1/256); for the stochastic variant
        // the byte is the flow hash's and the map a seeded random one (a hash per run).
        let data_queues = (nq - 1) as u64;
        let mut salt = Stream::new(seed, "bfc:stochastic");
        for r in 0..256u64 {
            let q = match self.assignment {
                Assignment::Single => 0,
                Assignment::Stochastic => salt.below(data_queues),
                Assignment::Dynamic => r % data_queues,
            };
            v.push(EntrySpec::new(
                "rand_q",
                vec![KeySpec::Exact(n(r))],
                "set_rq",
                vec![n(q)],
                0,
            ));
        }
        // Deadlock freedom in a Clos: no backpressure from an up-facing egress to an
        // up-facing ingress (a packet that came down and goes up again).
        let tier = topo.chip_tiers();
        let up: Vec<u16> = ports
            .iter()
            .copied()
            .filter(|&p| {
                let l = topo.chip_ports[c][&p];
                match topo.peer(l, End::Chip(c, p)) {
                    End::Chip(o, _) => tier[o] > tier[c],
                    End::Host(_) => false,
                }
            })
            .collect();
        for &i in &up {
            for &o in &up {
                v.push(EntrySpec::new(
                    "bp_elide",
                    vec![KeySpec::Exact(n(i as u64)), KeySpec::Exact(n(o as u64))],
                    "elide",
                    Vec::new(),
                    0,
                ));
            }
        }
        v
    }
}

impl Deployment for BfcSpec {
    fn program(&self) -> Option<Embedded> {
        Some(PROGRAM)
    }

    fn check(&self, profile: &ChipProfile) -> Result<(), String> {
        self.check_queues(profile.tm.queues_per_port)
    }

    fn routing(&self) -> Option<Routing> {
        self.routes
    }

    fn deploy(&self, chip: &ChipContext, config: ChipConfig) -> Result<ChipDeployment, String> {
        let (prof, c, topo) = (chip.profile, chip.chip, chip.topology);
        let mut entries = match self.routes {
            Some(r) => routers::routes(topo, c, r),
            None => Vec::new(),
        };
        entries.extend(self.entries(prof, c, topo, chip.seed));
        Ok(ChipDeployment {
            entries,
            control: Vec::new(),
            config: self.chip_config(prof, c, topo, config),
            agents: Vec::new(),
        })
    }

    fn host_rules(&self) -> HostRules {
        HostRules {
            max_nic_queues: Some((
                MAX_UPSTREAM_QUEUES as u16,
                "BFC tracks a port's upstream queues by the low 5 bits of the queue id the NIC stamps (upstreamQ)",
            )),
        }
    }
}
