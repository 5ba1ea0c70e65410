//! Pyrrha (`programs/pyrrha/pyrrha.p4`; Zhang et al., "Analysis of Pyrrha", IEEE/ACM ToN
//! 2025): congestion-root-based per-hop flow control with the stock ECMP routes. For each
//! chip it gives:
//! - entries: the routes ([`routers::routes`]); `ingress_cfg` per connected port (its PAUSE
//!   copies' mirror session, none towards a host unless `hosts_react`; its pipe's record
//!   sessions and multicast group, and the pipe; its bit among the chip's connected ports;
//!   the frame queue), and for each such pipe's recirculation and packet-generator ports;
//!   `egress_cfg` (the port's own root id, K_pause in cells, its pipe and the (pipe, MAC)
//!   advanced flow control names it by) and egress
//!   `port_resume` (K_resume); `member1` (for each egress port whose next chip hashes with
//!   one ECMP group, the port each bucket of it chooses) and `path1` to `path4` (for each
//!   egress port, destination, next chip's choice and bucket of the later chips' ECMP hash
//!   bits, the root id of the port the next, the second, third and fourth chip send the
//!   packet out of: the path oracle's choices, [`ChipRoutes::choices`]);
//!   `own_root` (this chip's root ids: frames naming one are ignored); `root_hash` (a
//!   root's low 8 bits onto the IQs, for when none is free); `lowest_port` (the RESUME
//!   walk's lowest set bit of an upstream-port mask);
//! - registers: every connected port's stack of free IQs (`top`, `stack`: 1 to `niq`);
//! - configuration: mirror session `p + 1` per port `p` frames go out of (to its frame queue,
//!   truncated to 64 bytes: the PAUSE copies), session `ports + 1 + pipe` to each pipe's
//!   recirculation port (records); on a chip whose ports span pipes, multicast group
//!   `1 + pipe` of the other pipes' recirculation ports and session `ports + 1 + pipes +
//!   pipe` to all of them (the state each pipe keeps: [`PipeSessions`]); strict priority for
//!   the frame queue (the last) over round robin among the OQ and the IQs, a quantum of one
//!   full-size frame each.
//!
//! With `hosts_react`, hosts obey the frames as flow-group pause frames (`asic_net::ctrl`):
//! each flow's groups are the root ids of the ports on its path ([`PathOracle::walk`]), so a
//! PAUSE naming a root stops the host's flows through it, the paper's per-flow reaction at
//! the end host (§IV-E).
//!
//! Root ids: every connected chip port of the network, in topology order (chip, then port),
//! numbered from 0 (`<switch-id:port-id>` as one dense number, 12 bits of which index the
//! program's arrays). K_pause and K_resume are in one-hop BDPs of the port: its link's rate
//! times the hop's round trip, twice the link's delay plus the chips' part of the loop
//! (`pipeline_ns`), rounded up to cells.

use crate::paths::{FiveTuple, PathOracle};
use crate::routers::{self, ChipRoutes, Routing};
use crate::{ChipContext, ChipDeployment, Deployment, Embedded};
use asic_model::chip::{ChipConfig, McastGroup, MirrorSession};
use asic_model::profile::ChipProfile;
use asic_net::network::FlowGroups;
use asic_net::topology::{End, Topology};
use pipelines::control::ControlOp;
use pipelines::entries::{EntrySpec, KeySpec, RegisterWrite, Value};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;
use tm::config::SchedulerConfig;

/// `programs/pyrrha`: Pyrrha with ECMP routing.
pub const PROGRAM: Embedded = Embedded {
    file: "programs/pyrrha/pyrrha.p4",
    source: include_str!("../../programs/pyrrha/pyrrha.p4"),
};

/// Bytes a PAUSE copy or a record is cut to.
const TRUNCATE: u16 = 64;

/// Root ids the program's arrays index (12 bits).
const MAX_ROOTS: usize = 4096;

/// Ports the program's arrays index (6 bits of the port number).
const MAX_PORT: u16 = 64;

/// Connected ports an `up_map` mask holds (32 bits: a bit per port of the chip, each pipe's
/// masks holding its own ports' bits).
const MAX_CHIP_PORTS: usize = 32;

/// Pyrrha's parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PyrrhaSpec {
    /// The queue length (one-hop BDPs of its port) above which a queue's upstream is paused
    /// (the paper's K_pause, 2).
    pub k_pause: f64,
    /// The length below which it is resumed (K_resume, 1).
    pub k_resume: f64,
    /// Isolation queues per port at most (the paper's 100); also bounded by the chip's
    /// queues per port less the OQ and the frame queue.
    pub max_iqs: u16,
    /// The chips' part of a one-hop round trip (ns), beside the link's two crossings: from
    /// a queue passing a threshold to the upstream's frame, its pause or resume, and the
    /// data it then sends or stops. The paper's per-hop RTT is "2 × 600 ns of propagation
    /// plus pipeline"; 2,100 is the model's own loop on 100G links (3.3 µs with 1.2 µs of
    /// links, measured by `tests/asic/pyrrha.rs`).
    pub pipeline_ns: u64,
    /// Whether hosts react per root: the switches send their frames to hosts too, and a
    /// host stops the flows that cross the root a PAUSE names (the paper's optional
    /// end-host reaction); otherwise hosts get no frames and send as they would.
    pub hosts_react: bool,
}

impl Default for PyrrhaSpec {
    fn default() -> Self {
        PyrrhaSpec {
            k_pause: 2.0,
            k_resume: 1.0,
            max_iqs: 100,
            pipeline_ns: 2100,
            hosts_react: false,
        }
    }
}

fn n(v: u64) -> Value {
    Value::Int(v)
}

/// The root id of every connected chip port, in topology order.
struct RootIds(Vec<std::collections::BTreeMap<u16, u16>>);

impl RootIds {
    fn new(topo: &Topology) -> Result<RootIds, String> {
        let mut next = 0usize;
        let ids: Vec<_> = topo
            .chip_ports
            .iter()
            .map(|ports| {
                ports
                    .keys()
                    .map(|&p| {
                        next += 1;
                        (p, (next - 1) as u16)
                    })
                    .collect()
            })
            .collect();
        if next > MAX_ROOTS {
            return Err(format!(
                "pyrrha: the network has {next} connected chip ports; the program's root \
                 arrays hold {MAX_ROOTS}"
            ));
        }
        Ok(RootIds(ids))
    }

    fn of(&self, chip: usize, port: u16) -> u16 {
        self.0[chip][&port]
    }
}

impl PyrrhaSpec {
    /// IQs per port on a chip with `queues_per_port` (queue 0 is the OQ, the last the
    /// frame queue).
    fn iqs(&self, queues_per_port: u16) -> u16 {
        self.max_iqs.min(queues_per_port.saturating_sub(2))
    }

    /// `k` one-hop BDPs of a port of `gbps` whose link has `delay_ns`, in cells: the
    /// link's rate times its two crossings and the chips' part of the loop.
    fn cells(&self, k: f64, gbps: u32, delay_ns: u64, cell_bytes: u32) -> u64 {
        let rtt_ns = 2 * delay_ns + self.pipeline_ns;
        let bdp = gbps as f64 * rtt_ns as f64 / 8.0;
        (k * bdp / cell_bytes as f64).ceil() as u64
    }

    /// The path tables of chip `c`: for each egress port `e` and destination, the root ids
    /// of the ports the next [`HOPS`] chips send the packet out of, by the port the next
    /// chip's ECMP group chooses (`member1`, when it has one group for the destinations `e`
    /// leads to) and the hash bits the chips after it read. Destinations are aggregated as
    /// the routes are ([`routers::by_prefix`]): one entry per choice for a /16 whose hosts
    /// routed through `e` all have the same choices, else per /24, else per host. Also
    /// `member1`'s entries: for each such `e`, the next chip's buckets.
    fn path_entries(
        &self,
        oracle: &PathOracle,
        roots: &RootIds,
        c: usize,
    ) -> Result<Vec<EntrySpec>, String> {
        let topo = oracle.topology();
        let own = routes_of(oracle, c)?;
        // Per egress port: the hosts routed through it.
        let mut via: BTreeMap<u16, Vec<usize>> = BTreeMap::new();
        for h in 0..topo.host_ips.len() {
            for &e in own.ports(h) {
                via.entry(e).or_default().push(h);
            }
        }
        let mut v = Vec::new();
        for (e, hosts) in via {
            let group = next_group(oracle, (c, e), &hosts)?;
            for &(value, mask, port) in group.iter().flat_map(|g| &g.buckets) {
                v.push(EntrySpec::new(
                    "member1",
                    vec![
                        KeySpec::Exact(n(e as u64)),
                        KeySpec::Ternary(n(value as u64), n(mask as u64)),
                    ],
                    "set_m1",
                    vec![n(port as u64)],
                    0,
                ));
            }
            let mut hosts_choices = Vec::new();
            for &h in &hosts {
                let choices =
                    path_choices(oracle, (c, e), h, group.as_ref().map(|g| &g.ports[..]))?;
                hosts_choices.push((topo.host_ips[h], choices));
            }
            let hosts = hosts_choices;
            // Each table aggregated on its own: the next chip's port is often the same for
            // destinations whose second port differs.
            for t in 1..=HOPS {
                let of_table: Vec<(u32, Vec<Choice>)> = hosts
                    .iter()
                    .map(|(ip, ch)| (*ip, one_root_one_row(ch.iter().filter(|c| c.table == t))))
                    .collect();
                v.extend(path_table(oracle, &of_table, roots, e, t)?);
            }
        }
        Ok(v)
    }
}

/// The entries of path table `t` (1 to [`HOPS`]) for egress port `e`, from each host's
/// choices of it. Tables 1 and 2 are keyed by the hash bits of chips past the next one too;
/// 3 and 4 are not (a row one TCAM block wide): an error names the chip whose hash a row
/// of theirs would need.
fn path_table(
    oracle: &PathOracle,
    hosts: &[(u32, Vec<Choice>)],
    roots: &RootIds,
    e: u16,
    t: u8,
) -> Result<Vec<EntrySpec>, String> {
    let mut v = Vec::new();
    for (prefix, len, choices) in routers::by_prefix(hosts) {
        let mask = u32::MAX << (32 - len);
        for &Choice {
            m1,
            value,
            mask: hmask,
            chip,
            port,
            ..
        } in choices
        {
            let root = roots.of(chip, port);
            let idx = ((e as u64 & 63) << 12) | (root as u64 & 0xfff);
            let mut key = vec![
                KeySpec::Exact(n(e as u64)),
                KeySpec::Ternary(n(prefix as u64), n(mask as u64)),
                match m1 {
                    Some(p) => KeySpec::Ternary(n(p as u64), n(0x3f)),
                    None => KeySpec::Ternary(n(0), n(0)),
                },
            ];
            if t <= 2 {
                key.push(KeySpec::Ternary(n(value as u64), n(hmask as u64)));
            } else if hmask != 0 {
                return Err(format!(
                    "pyrrha: `path{t}` is keyed by the destination and the next chip's choice \
                     alone, but packets to {}.{}.{}.{} out of port {e} take a path that \
                     depends on the hash of a chip further on, before `{}`",
                    prefix >> 24,
                    prefix >> 16 & 255,
                    prefix >> 8 & 255,
                    prefix & 255,
                    oracle.topology().spec.chips[chip].name
                ));
            }
            v.push(EntrySpec::new(
                &format!("path{t}"),
                key,
                &format!("hop{t}"),
                vec![n(root as u64), n(idx)],
                0,
            ));
        }
    }
    Ok(v)
}

/// One row of a path table for a destination: the table (1 to [`HOPS`]); the port the next
/// chip's group chooses (`member1`; `None`: any), the hash value and mask the chips after
/// it read; the root (chip, port) the packet will leave that hop's chip by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Choice {
    table: u8,
    m1: Option<u16>,
    value: u16,
    mask: u16,
    chip: usize,
    port: u16,
}

/// A table's rows for one destination, as one row matching any member and hash when every
/// choice on the way leads to the same port at this hop (the last hops of a fat tree's
/// paths, which the hashes before them do not change), else as they are, each once.
fn one_root_one_row<'a>(rows: impl Iterator<Item = &'a Choice>) -> Vec<Choice> {
    let rows: std::collections::BTreeSet<Choice> = rows.copied().collect();
    match rows.first() {
        Some(&first)
            if rows
                .iter()
                .all(|r| (r.chip, r.port) == (first.chip, first.port)) =>
        {
            vec![Choice {
                m1: None,
                value: 0,
                mask: 0,
                ..first
            }]
        }
        _ => rows.into_iter().collect(),
    }
}

/// Chip `c`'s routes, or an error: the path tables follow packets only through chips whose
/// routes are generated ones.
fn routes_of(oracle: &PathOracle, c: usize) -> Result<&ChipRoutes, String> {
    oracle.routes(c).ok_or_else(|| {
        format!(
            "pyrrha: the path tables follow packets through `{}`, whose routes are not \
             generated ones (its settings name another mechanism)",
            oracle.topology().spec.chips[c].name
        )
    })
}

/// Chips downstream the program's path tables follow (`path1` to `path4`): from the edge
/// of a 3-tier fat tree, to the host.
const HOPS: u8 = 4;

/// The ECMP group of the chip at the far end of an egress port: its ports, and (hash value,
/// mask, port) per bucket, as its routes give them.
struct NextGroup {
    ports: Vec<u16>,
    buckets: Vec<(u16, u16, u16)>,
}

/// The ECMP group of the chip at the far end of chip port `(c, e)` that every destination
/// of `hosts` the chip hashes for uses; `None` if it hashes for none of them or uses
/// several groups (then the path tables key its choices by the hash bits themselves). A
/// chip's groups are told apart by their ports: its buckets follow from them.
fn next_group(
    oracle: &PathOracle,
    (c, e): (usize, u16),
    hosts: &[usize],
) -> Result<Option<NextGroup>, String> {
    let topo = oracle.topology();
    let End::Chip(next, _) = topo.peer(topo.chip_ports[c][&e], End::Chip(c, e)) else {
        return Ok(None);
    };
    let routes = routes_of(oracle, next)?;
    // A destination the group is for.
    let mut of: Option<usize> = None;
    for &h in hosts {
        let ports = routes.ports(h);
        match of {
            _ if ports.len() < 2 => {}
            None => of = Some(h),
            Some(f) if routes.ports(f) == ports => {}
            Some(_) => return Ok(None),
        }
    }
    Ok(of.map(|h| NextGroup {
        ports: routes.ports(h).to_vec(),
        buckets: routes.choices(h),
    }))
}

/// The choices for packets to host `h` leaving chip port `(c, e)`: the next chip's port
/// per port of its group whose ports are `group` (`member1`; or per bucket of its ECMP bits
/// if it uses another) (table 1), the one after it per bucket of the bits that chip reads (table
/// 2; bits two chips read must agree), and so on to table [`HOPS`].
fn path_choices(
    oracle: &PathOracle,
    (c, e): (usize, u16),
    h: usize,
    group: Option<&[u16]>,
) -> Result<Vec<Choice>, String> {
    let topo = oracle.topology();
    let mut v = Vec::new();
    // (chip, port it leaves by, hop, member, hash value, hash mask) still to follow.
    let mut todo = vec![(c, e, 0u8, None, 0u16, 0u16)];
    while let Some((c, e, hop, m1, value, mask)) = todo.pop() {
        if hop == HOPS {
            continue;
        }
        let End::Chip(next, _) = topo.peer(topo.chip_ports[c][&e], End::Chip(c, e)) else {
            continue;
        };
        let routes = routes_of(oracle, next)?;
        // The next chip's choice by `member1`: its chosen port, not its bits.
        let by_member = hop == 0 && group == Some(routes.ports(h));
        for (v2, m2, p2) in routes.choices(h) {
            let (m1, value, mask) = if by_member {
                (Some(p2), 0, 0)
            } else if (value ^ v2) & mask & m2 != 0 {
                continue;
            } else {
                (m1, (value & mask) | (v2 & m2), mask | m2)
            };
            v.push(Choice {
                table: hop + 1,
                m1,
                value,
                mask,
                chip: next,
                port: p2,
            });
            todo.push((next, p2, hop + 1, m1, value, mask));
        }
    }
    Ok(v)
}

impl Deployment for PyrrhaSpec {
    fn program(&self) -> Option<Embedded> {
        Some(PROGRAM)
    }

    fn check(&self, profile: &ChipProfile) -> Result<(), String> {
        let ordered = self.k_pause.partial_cmp(&self.k_resume) == Some(std::cmp::Ordering::Greater);
        let positive = self.k_resume.partial_cmp(&0.0) == Some(std::cmp::Ordering::Greater);
        if !ordered || !positive || !self.k_pause.is_finite() {
            return Err(format!(
                "pyrrha: `k_pause` {} must be above `k_resume` {}, and both positive",
                self.k_pause, self.k_resume
            ));
        }
        if self.iqs(profile.tm.queues_per_port) == 0 {
            return Err(format!(
                "pyrrha: `max_iqs` {} leaves no isolation queue on {} ({} queues per port: \
                 the OQ, the IQs and the frame queue)",
                self.max_iqs, profile.name, profile.tm.queues_per_port
            ));
        }
        Ok(())
    }

    fn routing(&self) -> Option<Routing> {
        Some(Routing::Ecmp)
    }

    fn flow_groups(&self, paths: &Arc<PathOracle>) -> Option<FlowGroups> {
        if !self.hosts_react {
            return None;
        }
        // Too many ports for root ids: `deploy` refuses every chip first.
        let roots = RootIds::new(paths.topology()).ok()?;
        let paths = Arc::clone(paths);
        Some(Arc::new(move |src, dst, flow_id| {
            let tuple = FiveTuple::of_flow(paths.topology(), src, dst, flow_id);
            // A flow with no route to its destination is in no group (its packets are
            // dropped at the chip without one).
            paths.walk(src, dst, &tuple).map_or(Vec::new(), |w| {
                w.hops.iter().map(|h| roots.of(h.chip, h.port)).collect()
            })
        }))
    }

    fn deploy(&self, chip: &ChipContext, mut config: ChipConfig) -> Result<ChipDeployment, String> {
        let (prof, c, topo) = (chip.profile, chip.chip, chip.topology);
        let ports: Vec<u16> = topo.chip_ports[c].keys().copied().collect();
        let pipe_of = |p: u16| prof.pipe_of_port(p).unwrap_or(0);
        let pipes: std::collections::BTreeSet<u16> = ports.iter().map(|&p| pipe_of(p)).collect();
        if let Some(&p) = ports.iter().find(|&&p| p >= MAX_PORT) {
            return Err(format!(
                "pyrrha: port {p}: the program's arrays index ports below {MAX_PORT}"
            ));
        }
        if ports.len() > MAX_CHIP_PORTS {
            return Err(format!(
                "pyrrha: {} connected ports; an upstream-port mask holds {MAX_CHIP_PORTS}",
                ports.len()
            ));
        }
        let roots = RootIds::new(topo)?;
        let qpp = prof.tm.queues_per_port;
        let niq = self.iqs(qpp);
        let ctrl_q = qpp - 1;
        let cell = prof.tm.cell_bytes;
        let sessions = PipeSessions::new(prof, &pipes, &mut config)?;
        // Advanced flow control names a port by its pipe (2 bits) and its MAC in the pipe
        // (4 bits).
        let per_pipe = prof.ports_per_pipe_count() as u16;
        let afc_id = |p: u16| {
            let mac = p % per_pipe.max(1);
            if mac >= 16 || pipe_of(p) >= 4 {
                return Err(format!(
                    "pyrrha: port {p} (pipe {}, MAC {mac}): advanced flow control names 4 \
                     pipes of 16 MACs",
                    pipe_of(p)
                ));
            }
            Ok((pipe_of(p) as u64) << 4 | mac as u64)
        };

        let mut entries = routers::route_entries(topo, c, routes_of(chip.paths, c)?);
        let mut control = Vec::new();
        for (i, &p) in ports.iter().enumerate() {
            let link = &topo.links[topo.chip_ports[c][&p]];
            let faces_chip = matches!(
                topo.peer(topo.chip_ports[c][&p], End::Chip(c, p)),
                End::Chip(..)
            );
            let frames_out = faces_chip || self.hosts_react;
            let pause_sess = if frames_out { p as u64 + 1 } else { 0 };
            entries.push(sessions.ingress_cfg(p, pipe_of(p), pause_sess, 1 << i, ctrl_q));
            let delay = topo.spec.links[topo.chip_ports[c][&p]].delay_ns;
            let k_pause = self.cells(self.k_pause, link.gbps, delay, cell);
            let k_resume = self.cells(self.k_resume, link.gbps, delay, cell);
            entries.push(EntrySpec::new(
                "egress_cfg",
                vec![KeySpec::Exact(n(p as u64))],
                "set_egress",
                vec![
                    n(roots.of(c, p) as u64),
                    n(k_pause),
                    n(pipe_of(p) as u64),
                    n(afc_id(p)?),
                ],
                0,
            ));
            entries.push(EntrySpec::new(
                "port_resume",
                vec![KeySpec::Exact(n(p as u64))],
                "set_resume",
                vec![n(k_resume)],
                0,
            ));
            entries.push(EntrySpec::new(
                "own_root",
                vec![KeySpec::Exact(n(roots.of(c, p) as u64))],
                "mine",
                vec![],
                0,
            ));
            entries.push(EntrySpec::new(
                "lowest_port",
                vec![KeySpec::Ternary(n(1 << i), n((1u64 << (i + 1)) - 1))],
                "walk_to",
                vec![n(p as u64), n(!(1u64 << i) & 0xffff_ffff)],
                0,
            ));
            control.push(ControlOp::WriteRegister(RegisterWrite {
                register: "top".into(),
                index: p as u32,
                value: n(niq as u64),
            }));
            for k in 0..niq {
                control.push(ControlOp::WriteRegister(RegisterWrite {
                    register: "stack".into(),
                    index: ((p as u32) << 7) | k as u32,
                    value: n(k as u64 + 1),
                }));
            }
            if frames_out {
                config.mirror_sessions.push(MirrorSession {
                    id: p + 1,
                    port: p,
                    queue: ctrl_q,
                    truncate_bytes: Some(TRUNCATE),
                    mcast_group: None,
                });
            }
        }
        for &pipe in &pipes {
            for internal in [prof.recirc_port(pipe, 0), prof.pktgen_port(pipe)]
                .into_iter()
                .flatten()
            {
                entries.push(sessions.ingress_cfg(internal, pipe, 0, 0, ctrl_q));
            }
        }
        for r in 0..256u64 {
            entries.push(EntrySpec::new(
                "root_hash",
                vec![KeySpec::Exact(n(r))],
                "set_hash_q",
                vec![n(1 + r % niq as u64)],
                0,
            ));
        }
        entries.extend(self.path_entries(chip.paths, &roots, c)?);
        let mut levels = vec![0u8; qpp as usize];
        levels[ctrl_q as usize] = 7;
        let frame = (chip.mtu + 14) as u32;
        config.tm.scheduler = SchedulerConfig::SpOverDrr {
            levels,
            quanta: vec![frame; qpp as usize],
        };
        Ok(ChipDeployment {
            entries,
            control,
            config,
            agents: Vec::new(),
        })
    }
}

/// The mirror sessions and multicast groups by which records reach the pipes that keep the
/// state they change. Every pipe with a connected port keeps its copy of the root tables and
/// the IQs' roots, and its own ports' `up_map`: session `ports + 1 + pipe` sends a record
/// back to its pipe's recirculation port; on a chip whose ports span pipes, multicast group
/// `1 + pipe` holds the other pipes' recirculation ports (a record that changes the root
/// tables goes to all), and session `ports + 1 + pipes + pipe` sends a departure's record
/// to every pipe (the session's port and that group).
struct PipeSessions {
    /// Pipe: its record session, its departure records' session and its group (0: none).
    by_pipe: BTreeMap<u16, (u16, u16, u16)>,
}

impl PipeSessions {
    fn new(
        prof: &ChipProfile,
        pipes: &std::collections::BTreeSet<u16>,
        config: &mut ChipConfig,
    ) -> Result<PipeSessions, String> {
        let recirc = |pipe: u16| {
            prof.recirc_port(pipe, 0)
                .ok_or_else(|| format!("pyrrha: `{}` has no recirculation port", prof.name))
        };
        let spread = pipes.len() > 1;
        let mut by_pipe = BTreeMap::new();
        for &pipe in pipes {
            let rp = recirc(pipe)?;
            let rec_sess = prof.ports_total() as u16 + 1 + pipe;
            config.mirror_sessions.push(MirrorSession {
                id: rec_sess,
                port: rp,
                queue: 0,
                truncate_bytes: Some(TRUNCATE),
                mcast_group: None,
            });
            if !spread {
                by_pipe.insert(pipe, (rec_sess, rec_sess, 0));
                continue;
            }
            let fan = 1 + pipe;
            let members = pipes
                .iter()
                .filter(|&&o| o != pipe)
                .map(|&o| recirc(o).map(|p| (p, 0)))
                .collect::<Result<Vec<_>, _>>()?;
            config.mcast_groups.push(McastGroup { id: fan, members });
            let deq_sess = prof.ports_total() as u16 + 1 + prof.pipes + pipe;
            config.mirror_sessions.push(MirrorSession {
                id: deq_sess,
                port: rp,
                queue: 0,
                truncate_bytes: Some(TRUNCATE),
                mcast_group: Some(fan),
            });
            by_pipe.insert(pipe, (rec_sess, deq_sess, fan));
        }
        Ok(PipeSessions { by_pipe })
    }

    /// `ingress_cfg` of port `port` of pipe `pipe`.
    fn ingress_cfg(
        &self,
        port: u16,
        pipe: u16,
        pause_sess: u64,
        in_bit: u64,
        ctrl_q: u16,
    ) -> EntrySpec {
        let (rec_sess, deq_sess, fan) = self.by_pipe[&pipe];
        EntrySpec::new(
            "ingress_cfg",
            vec![KeySpec::Exact(n(port as u64))],
            "set_ingress",
            vec![
                n(pause_sess),
                n(rec_sess as u64),
                n(deq_sess as u64),
                n(in_bit),
                n(ctrl_q as u64),
                n(fan as u64),
                n(pipe as u64),
            ],
            0,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::routers::tests::leaf_spine;

    /// Entries of `path1` to `path4` on chip `c`.
    fn sizes(t: &Topology, c: usize) -> [usize; 4] {
        let oracle = PathOracle::uniform(t.clone(), Routing::Ecmp);
        let roots = RootIds::new(t).unwrap();
        let v = PyrrhaSpec::default()
            .path_entries(&oracle, &roots, c)
            .unwrap();
        [1, 2, 3, 4].map(|i| v.iter().filter(|e| e.table == format!("path{i}")).count())
    }

    /// Destinations aggregate by prefix: on the paper's §VIII Clos (10 ToRs of 16 hosts,
    /// 4 cores) a ToR's next hop (a core's port to the destination's ToR) takes one entry
    /// per (uplink, remote ToR): 4 × 9; the hop after it (the destination ToR's host port)
    /// one per (uplink, remote host): 4 × 144, within the tables' 1,024.
    #[test]
    fn path_tables_aggregate_destinations() {
        let clos = leaf_spine(10, 4, 16);
        assert_eq!(sizes(&clos, 0), [36, 576, 0, 0]);
    }

    /// An edge switch of a 3-tier fat tree follows paths to the host, four chips down, within
    /// the tables (512, 1,024, 512 and 3,072 rows). The aggregation switch's choice of core,
    /// which its hash makes, is keyed by the core it chose (`member1`), not by the hash's
    /// buckets (16 at k = 8, 256 at k = 12: 6 members do not split 16 evenly); the rows after
    /// it that the hash does not change are one each. k = 8 (4 uplinks, 8 pods of 16
    /// hosts): `path1` 4 uplinks × (7 remote pods × 4 cores + 3 local edge switches), `path2`
    /// 4 × (7 × 4 + 12 local hosts), `path3` one per uplink and remote edge switch (4 × 28),
    /// `path4` one per uplink and remote host (4 × 112). k = 12 (6 uplinks, 12 pods of 36):
    /// 6 × (11 × 6 + 5), 6 × (11 × 6 + 30), 6 × 66, 6 × 396. By buckets, `path1` at k = 12
    /// took 16,926 rows; without the single rows `path3` and `path4` at k = 8 1,792 and
    /// 7,168.
    #[test]
    fn a_fat_trees_edge_follows_four_hops_within_the_tables() {
        use asic_net::shapes::{generate, Generate, Shape};
        for (k, want) in [(8, [124, 160, 112, 448]), (12, [426, 576, 396, 2376])] {
            let shape = Shape::FatTree {
                k,
                tiers: 3,
                uplinks: None,
            };
            let g = Generate::new(shape, "x");
            let t = Topology::resolve(generate(&g, &g.uniform_ports(64, 100)).unwrap()).unwrap();
            assert_eq!(sizes(&t, 0), want, "k = {k}");
        }
    }
}
