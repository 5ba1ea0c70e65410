//! The network runtime: one discrete-event kernel for every chip, link and host.
//!
//! Chips run exactly as on the bench (`Chip::receive` when a frame's first bit reaches a
//! port, `Chip::handle` for their events, frames leaving through the `Wire`). A link carries
//! a frame's first bit to the far end after its propagation delay: a chip port receives it
//! then; a host acts on it when its last bit has arrived (`+ frame_time` at the link rate).
//! Frames in flight live in a recycled pool (no allocation per packet once warm).
//!
//! ## Ideal FCT
//! For a flow of `S` bytes in packets `1..N` (frame lengths `ℓ_i`; all `ℓ_max` but the last)
//! along the shortest path from its source to its destination (links `0..k` with rates `r_j`
//! and propagation delays `d_j`, chips with pipe latencies `c_m` = ingress + egress pipe
//! cycles at the chip clock), with `b` the first link of lowest rate:
//!
//! ```text
//! ideal = Σ_j d_j + Σ_m c_m
//!       + Σ_{j<b} frame_time(ℓ_1, r_j)                        (first packet, store-and-forward up to b)
//!       + Σ_{i<N} slot_time(ℓ_i, r_b) + frame_time(ℓ_N, r_b)  (the whole flow through the bottleneck)
//!       + Σ_{j>b} frame_time(ℓ'_j, r_j)                       (last packet, store-and-forward after b)
//! ```
//! with `ℓ'_j = ℓ_{N−1}` when `r_j = r_b` and `N ≥ 2` (on a link as slow as the bottleneck
//! the last packet waits for its predecessor's slot to end, so a short last packet does not
//! catch up), else `ℓ_N`; `frame_time(ℓ, r)` is preamble + frame + FCS (padded to 64) at
//! `r`, and `slot_time` adds the 12-byte gap (`asic_model::mac`). For the usual case of one
//! rate everywhere and `N ≥ 2` this is
//! `Σ d + Σ c + (links − 1)·frame_time(ℓ_max) + Σ_{i<N} slot_time(ℓ_i) + frame_time(ℓ_N)`.
//!
//! This is exactly the time from the flow's start
//! to the last bit of its last packet reaching the receiver when the source sends back to
//! back at line rate and nothing else is in the network, except that each chip may add up to
//! one pipe clock cycle to align arrivals to its clock edges. The path is a shortest path in
//! the topology; the program's routing may choose another (equally long in the generated
//! shapes).

use super::cdf::BUILTIN as CDF_BUILTIN;
use super::ctrl::{self, Ctrl};
use super::host::nic_queue_for;
use super::packet::{self, Header, ACK, DATA, ECN_ECT0, ECN_NOT_ECT, LAST, NACK, PULL};
use super::records::{DropCount, FlowRecord, HostTotals, PauseEvent, RunRecord, Series};
use super::scenario::{NetScenario, TopologySource};
use super::topology::{generate, ChipSpec, End, EntriesSpec, Topology, TopologySpec};
use super::traffic::{self, FlowSpec, HostInfo, Size, Source};
use super::transport::{Ready, Receiver, Sender, Shape};
use crate::pcap_io::PcapOut;
use crate::report::progress::SimProgress;
use asic_model::chip::{Chip, ChipConfig, ChipEvent, DropReason, PauseDirection, Wire};
use asic_model::kernel::{EventQueue, Lockstep, Schedule};
use asic_model::mac::{frame_time, slot_time};
use asic_model::profile::{self, ChipProfile};
use pipelines::entries::{resolve, ResolvedEntry};
use pipelines::program::Program;
use pipelines::time::Time;
use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};

/// The stock L3 router (one next hop per route).
pub const STOCK_L3ROUTER: &str = include_str!("../../programs/l3router/l3router.p4");
/// The stock ECMP router (hash-based member choice).
pub const STOCK_ECMP_ROUTER: &str = include_str!("../../programs/ecmp_router/ecmp_router.p4");
/// `stock:bfc`: Backpressure Flow Control with ECMP routing (programs/bfc/bfc.p4).
pub const STOCK_BFC: &str = include_str!("../../programs/bfc/bfc.p4");

/// Events of the network.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Ev {
    Chip {
        chip: u16,
        ev: ChipEvent,
    },
    /// A frame's first bit reaches a chip port.
    ChipRx {
        chip: u16,
        port: u16,
        frame: u32,
    },
    /// A frame's last bit reaches a host.
    HostRx {
        host: u32,
        frame: u32,
    },
    /// A host's wire is free.
    HostTx {
        host: u32,
    },
    /// The next flow of the list starts.
    FlowStart,
    /// A flow's transport timer.
    FlowTimer {
        flow: u32,
    },
    /// A paced flow may send again.
    FlowWake {
        flow: u32,
    },
    /// A host's pull pacer releases a PULL.
    PullTick {
        host: u32,
    },
    /// A PFC pause of a host class may have expired.
    PauseEnd {
        host: u32,
        class: u8,
    },
    /// Take samples.
    Sample,
}

struct ChipQ<'a> {
    q: &'a mut EventQueue<Ev>,
    chip: u16,
}

impl Schedule<ChipEvent> for ChipQ<'_> {
    fn at(&mut self, at: Time, ev: ChipEvent) {
        self.q.at(
            at,
            Ev::Chip {
                chip: self.chip,
                ev,
            },
        );
    }
}

/// Recycled frame buffers.
#[derive(Default)]
struct Pool {
    bufs: Vec<Vec<u8>>,
    free: Vec<u32>,
}

impl Pool {
    fn alloc(&mut self) -> u32 {
        match self.free.pop() {
            Some(i) => i,
            None => {
                self.bufs.push(Vec::with_capacity(1600));
                (self.bufs.len() - 1) as u32
            }
        }
    }

    fn release(&mut self, i: u32) {
        self.bufs[i as usize].clear();
        self.free.push(i);
    }

    fn live(&self) -> usize {
        self.bufs.len() - self.free.len()
    }

    fn allocated(&self) -> usize {
        self.bufs.len()
    }
}

/// Frames a chip sent during one `handle`, delivered after it returns.
struct Outbox<'a> {
    pool: &'a mut Pool,
    out: &'a mut Vec<(u16, Time, u32)>,
}

impl Wire for Outbox<'_> {
    fn transmit(&mut self, port: u16, start: Time, frame: &[u8]) {
        let i = self.pool.alloc();
        self.pool.bufs[i as usize].extend_from_slice(frame);
        self.out.push((port, start, i));
    }
}

/// A control packet waiting at a NIC.
#[derive(Clone, Copy, Debug)]
struct CtrlPkt {
    flow: u32,
    flags: u8,
    seq: u32,
    echo: u32,
    ts_ps: u64,
}

struct Host {
    name: String,
    ip: u32,
    mac: [u8; 6],
    gbps: u32,
    delay_ps: u64,
    peer: End,
    peer_mac: [u8; 6],
    busy_until: Time,
    tx_scheduled: bool,
    class_paused_until: [Time; 8],
    class_paused: [bool; 8],
    queue_paused: Vec<bool>,
    ctrl: [VecDeque<CtrlPkt>; 8],
    queues: Vec<VecDeque<u32>>,
    rr: [usize; 8],
    pulls: VecDeque<u32>,
    pull_next_at: Time,
    pull_scheduled: bool,
    pull_interval: Time,
    packets_sent: u64,
    packets_received: u64,
    pcap: Option<PcapOut>,
}

struct Flow {
    spec: FlowSpec,
    shape: Shape,
    sender: Option<Box<dyn Sender>>,
    receiver: Receiver,
    end: Option<Time>,
    packets_sent: u64,
    retx: u64,
    timer_at: Option<Time>,
    wake_at: Option<Time>,
    in_ring: bool,
    queue: u16,
    pulls_sent: u32,
    ideal_ps: u64,
}

/// Per-host packet balance at the end of a run: what it offered and where it went.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct HostBalance {
    /// Host name.
    pub host: String,
    /// Data packets it put on the wire.
    pub offered: u64,
    /// Of those, packets that reached their destination host.
    pub delivered: u64,
    /// Of those, packets that entered a chip and did not leave it: the chips' drops, and
    /// any still inside a chip when the run stopped (the balance cannot tell them apart).
    pub dropped_in_chips: u64,
    /// Of those, packets sent out of a chip port with no link.
    pub dropped_unconnected: u64,
    /// Of those, packets that reached a host that refused them (misdelivered, or for a flow
    /// the host does not know).
    pub refused_by_hosts: u64,
    /// Of those, packets on a link or in a host's receive path when the run stopped.
    pub in_flight: u64,
}

/// A run's record and the details that the record does not carry.
pub struct NetRun {
    /// The record (flows, series, pauses, drops, host totals).
    pub record: RunRecord,
    /// Per-host packet balance: `offered = delivered + dropped_in_chips +
    /// dropped_unconnected + refused_by_hosts + in_flight` for every host.
    pub balance: Vec<HostBalance>,
    /// Events processed.
    pub events: u64,
    /// Data frames the chips transmitted (front-panel ports): packets through one chip's
    /// ingress, TM and egress.
    pub switch_hops: u64,
    /// Lockstep mode: chip cycles visited, all chips together (0 when event-driven).
    pub lockstep_cycles: u64,
    /// Drops counted by the chips themselves (all reasons, all packets including control).
    pub chip_drops: u64,
    /// Per chip (name): the most buffer cells in use at once during the run.
    pub peak_buffer_cells: Vec<(String, u32)>,
    /// Frames on links when the run ended.
    pub frames_on_links: usize,
    /// Frame buffers the pool ever allocated (the most frames in flight at once): bounded by
    /// the network's capacity, not by the packets sent.
    pub frame_buffers: usize,
    /// The chips as the run left them (registers, counters, TM state), in topology order.
    pub chips: Vec<Chip>,
}

/// Per-source data-packet counters for the balance.
#[derive(Clone, Copy, Default)]
struct SrcCount {
    chip_in: u64,
    chip_out: u64,
    delivered: u64,
    unconnected: u64,
    /// Data frames that reached a host that refused them (not its address, no such flow).
    refused: u64,
}

struct SeriesState {
    series: Series,
    last: Option<f64>,
}

/// The network being run.
pub struct Net {
    name: String,
    queue: EventQueue<Ev>,
    topo: Topology,
    chips: Vec<Chip>,
    hosts: Vec<Host>,
    flows: Vec<Flow>,
    next_flow: usize,
    completed: usize,
    pool: Pool,
    outbox: Vec<(u16, Time, u32)>,
    chip_pcaps: Vec<BTreeMap<u16, PcapOut>>,
    ip_to_host: BTreeMap<u32, usize>,
    src: Vec<SrcCount>,
    host_drops: BTreeMap<(usize, &'static str), u64>,
    unconnected: Vec<u64>,
    pauses: Vec<PauseEvent>,
    samples: Vec<SeriesState>,
    /// Per-queue depth series `(chip, port, queue)`, created when a queue first holds cells
    /// (a port may have 128 queues; most stay empty).
    queue_samples: BTreeMap<(usize, u16, u16), SeriesState>,
    /// When the previous sample was taken (a new queue series starts at 0 from there).
    last_sample: Time,
    sample_period: Option<Time>,
    stop_at: Option<Time>,
    stop_when_complete: bool,
    events: u64,
    scratch: Vec<u8>,
    /// Lockstep mode: every cycle of every chip visited between events.
    lockstep: Option<Lockstep>,
}

/// The one place chips are built: a profile, a compiled program, the operator's
/// configuration (TM and seed) and the program's resolved entries.
pub fn build_chip(
    profile: ChipProfile,
    program: &Program,
    config: ChipConfig,
    entries: &[ResolvedEntry],
) -> Result<Chip, String> {
    let mut chip = Chip::with_config(profile, program, config).map_err(|e| e.to_string())?;
    for (i, e) in entries.iter().enumerate() {
        chip.add_entry(e)
            .map_err(|err| format!("entry {i}: {err}"))?;
    }
    Ok(chip)
}

fn load_profile(name: &str, base: &Path) -> Result<ChipProfile, String> {
    let n = if profile::builtin_source(name).is_some() || Path::new(name).is_absolute() {
        name.to_string()
    } else {
        base.join(name).display().to_string()
    };
    profile::load(&n).map_err(|e| e.to_string())
}

fn compile_program(name: &str, prof: &ChipProfile, base: &Path) -> Result<Program, String> {
    let (src, file) = match name {
        "stock:l3router" => (STOCK_L3ROUTER.to_string(), name.to_string()),
        "stock:ecmp_router" => (STOCK_ECMP_ROUTER.to_string(), name.to_string()),
        "stock:bfc" => (STOCK_BFC.to_string(), name.to_string()),
        p => {
            let path = base.join(p);
            let s = std::fs::read_to_string(&path)
                .map_err(|e| format!("{}: cannot read program file: {e}", path.display()))?;
            (s, path.display().to_string())
        }
    };
    dsl::compile(&src, &file, &prof.pipe)
        .map(|c| c.program)
        .map_err(|e| e.to_string())
}

/// Everything resolved before a run: the topology, and the scenario's files read.
pub struct Prepared {
    scenario: NetScenario,
    topo: Topology,
    base: PathBuf,
}

/// Resolve a scenario's topology and relative paths (`base`: the scenario's directory).
pub fn prepare(mut s: NetScenario, base: &Path) -> Result<Prepared, String> {
    let spec: TopologySpec = match &s.topology {
        TopologySource::Explicit(t) => (**t).clone(),
        TopologySource::File(f) => {
            let p = base.join(f);
            let text = std::fs::read_to_string(&p)
                .map_err(|e| format!("{}: cannot read topology: {e}", p.display()))?;
            ron::from_str(&text).map_err(|e| {
                format!(
                    "{}:{}:{}: {}",
                    p.display(),
                    e.span.start.line,
                    e.span.start.col,
                    e.code
                )
            })?
        }
        TopologySource::Generate(g) => {
            let prof = load_profile(&g.chip, base).map_err(|e| format!("topology: {e}"))?;
            let speeds: Vec<u32> = prof.ports_per_pipe.iter().map(|p| p.speed_gbps).collect();
            if speeds.windows(2).any(|w| w[0] != w[1]) {
                return Err(format!(
                    "topology: generated shapes need chips whose ports all have one speed; `{}` has {speeds:?} Gb/s",
                    g.chip
                ));
            }
            generate(g, prof.ports_total() as u16, speeds[0])
                .map_err(|e| format!("topology: {e}"))?
        }
    };
    let topo = Topology::resolve(spec).map_err(|e| format!("topology: {e}"))?;
    // CDF files named relative to the scenario.
    for src in &mut s.traffic {
        if let Source::Flows(f) = src {
            if let Size::Cdf(n) = &mut f.size {
                if !CDF_BUILTIN.iter().any(|b| b.0 == n) && Path::new(n).is_relative() {
                    *n = base.join(&*n).display().to_string();
                }
            }
        }
    }
    if s.mtu < 20 + 8 + packet::TRANSPORT_HEADER_BYTES + 1 || s.mtu > 9000 {
        return Err(format!("mtu: {} must be between 61 and 9000", s.mtu));
    }
    Ok(Prepared {
        scenario: s,
        topo,
        base: base.to_path_buf(),
    })
}

impl Prepared {
    /// The resolved topology.
    pub fn topology(&self) -> &Topology {
        &self.topo
    }
}

fn entries_for(
    c: usize,
    spec: &ChipSpec,
    topo: &Topology,
    program: &Program,
    base: &Path,
) -> Result<Vec<ResolvedEntry>, String> {
    let specs = match &spec.entries {
        EntriesSpec::None => Vec::new(),
        EntriesSpec::Inline(v) => v.clone(),
        EntriesSpec::Auto(r) => topo.routes(c, *r),
        EntriesSpec::File(f) => {
            let p = base.join(f);
            let text = std::fs::read_to_string(&p)
                .map_err(|e| format!("{}: cannot read entries: {e}", p.display()))?;
            pipelines::entries::parse_entries(&text, &p.display().to_string())?
        }
    };
    specs
        .iter()
        .enumerate()
        .map(|(i, e)| {
            resolve(program, e).map_err(|r| format!("entry {i} (table `{}`): {r}", e.table))
        })
        .collect()
}

impl Net {
    /// Build the network: chips (programs compiled once per profile and program), hosts,
    /// flows with their ideal FCTs, captures. `out` receives the pcaps.
    pub fn build(p: Prepared, out: Option<&Path>) -> Result<Net, String> {
        let Prepared {
            scenario: s,
            topo,
            base,
        } = p;
        let mut programs: BTreeMap<(String, String), (ChipProfile, Program)> = BTreeMap::new();
        let mut chips = Vec::new();
        for (c, spec) in topo.spec.chips.iter().enumerate() {
            let place = |e: String| format!("chip `{}`: {e}", spec.name);
            let key = (spec.profile.clone(), spec.program.clone());
            if !programs.contains_key(&key) {
                let prof = load_profile(&spec.profile, &base).map_err(place)?;
                let prog = compile_program(&spec.program, &prof, &base).map_err(place)?;
                programs.insert(key.clone(), (prof, prog));
            }
            let (prof, prog) = &programs[&key];
            let mut entries = entries_for(c, spec, &topo, prog, &base).map_err(place)?;
            // Each chip's random sources get their own seed, derived from the scenario's.
            let mut config = ChipConfig {
                tm: spec.tm.clone().unwrap_or_default(),
                seed: super::rng::Stream::new(s.seed, &format!("chip:{}", spec.name)).next_u64(),
                ..ChipConfig::default()
            };
            if let Some(b) = &spec.bfc {
                b.check(prof.tm.queues_per_port).map_err(place)?;
                config = b.chip_config(prof, c, &topo, config);
                for (i, e) in b.entries(prof, c, &topo, s.seed).iter().enumerate() {
                    entries.push(
                        resolve(prog, e).map_err(|r| {
                            place(format!("bfc entry {i} (table `{}`): {r}", e.table))
                        })?,
                    );
                }
            }
            chips.push(build_chip(prof.clone(), prog, config, &entries).map_err(place)?);
        }
        // Links: ports exist and rates match.
        for (i, l) in topo.links.iter().enumerate() {
            let ls = &topo.spec.links[i];
            for e in [l.a, l.b] {
                if let End::Chip(c, p) = e {
                    match chips[c].port_gbps(p) {
                        None => {
                            return Err(format!(
                                "link {} - {}: chip `{}` has no port {p} (ports 0 to {})",
                                ls.a,
                                ls.b,
                                topo.spec.chips[c].name,
                                chips[c].port_count() - 1
                            ))
                        }
                        Some(g) if g != l.gbps => {
                            return Err(format!(
                                "link {} - {}: {} Gb/s, but port {p} of `{}` runs at {g} Gb/s",
                                ls.a, ls.b, l.gbps, topo.spec.chips[c].name
                            ))
                        }
                        _ => {}
                    }
                }
            }
        }
        let mss = packet::mss(s.mtu) as u32;
        let mut hosts = Vec::new();
        for (h, hs) in topo.spec.hosts.iter().enumerate() {
            let l = topo.host_link[h];
            let link = topo.links[l];
            let peer = topo.peer(l, End::Host(h));
            let nq = hs.nic_queues as usize;
            if let End::Chip(c, _) = peer {
                if topo.spec.chips[c].bfc.is_some() && nq > super::bfc::MAX_UPSTREAM_QUEUES {
                    return Err(format!(
                        "host `{}`: nic_queues: {nq}, but its switch `{}` runs BFC, which tracks at most {} upstream queues per port (the NIC stamps its queue id as upstreamQ)",
                        hs.name,
                        topo.spec.chips[c].name,
                        super::bfc::MAX_UPSTREAM_QUEUES
                    ));
                }
            }
            hosts.push(Host {
                name: hs.name.clone(),
                ip: topo.host_ips[h],
                mac: topo.mac(End::Host(h)),
                gbps: link.gbps,
                delay_ps: link.delay_ps,
                peer,
                peer_mac: topo.mac(peer),
                busy_until: Time::ZERO,
                tx_scheduled: false,
                class_paused_until: [Time::ZERO; 8],
                class_paused: [false; 8],
                queue_paused: vec![false; nq],
                ctrl: Default::default(),
                queues: (0..nq).map(|_| VecDeque::new()).collect(),
                rr: [0; 8],
                pulls: VecDeque::new(),
                pull_next_at: Time::ZERO,
                pull_scheduled: false,
                pull_interval: slot_time(packet::data_frame_len(mss as usize), link.gbps),
                packets_sent: 0,
                packets_received: 0,
                pcap: None,
            });
        }
        let names: Vec<String> = hosts.iter().map(|h| h.name.clone()).collect();
        let gbps: Vec<u32> = hosts.iter().map(|h| h.gbps).collect();
        let specs = traffic::expand(
            &s.traffic,
            &HostInfo {
                names: &names,
                gbps: &gbps,
            },
            &s.transport,
            s.seed,
        )?;
        let mut path_cache: BTreeMap<(usize, usize), Vec<Hop>> = BTreeMap::new();
        let mut flows = Vec::with_capacity(specs.len());
        // The k-th flow a host sends goes to its class's data queue k mod (queues per class).
        let mut sent_by_host = vec![0u64; topo.spec.hosts.len()];
        for f in specs.into_iter() {
            let hops = match path_cache.get(&(f.src, f.dst)) {
                Some(h) => h.clone(),
                None => {
                    let path = topo.path(f.src, f.dst).ok_or_else(|| {
                        format!(
                            "traffic[{}]: no path from `{}` to `{}`",
                            f.source, names[f.src], names[f.dst]
                        )
                    })?;
                    // (delay, rate, latency of the chip at the link's far end).
                    let mut at = End::Host(f.src);
                    let hops: Vec<Hop> = path
                        .iter()
                        .map(|&l| {
                            let far = topo.peer(l, at);
                            at = far;
                            let lat = match far {
                                End::Chip(c, _) => {
                                    let ch = &chips[c];
                                    ch.clock()
                                        .time_of(
                                            ch.ingress_latency_cycles()
                                                + ch.egress_latency_cycles(),
                                        )
                                        .ps()
                                }
                                End::Host(_) => 0,
                            };
                            (topo.links[l].delay_ps, topo.links[l].gbps, lat)
                        })
                        .collect();
                    path_cache.insert((f.src, f.dst), hops.clone());
                    hops
                }
            };
            let shape = Shape::new(f.size, mss);
            let ideal = ideal_fct(&hops, shape);
            let nq = topo.spec.hosts[f.src].nic_queues;
            let queue = nic_queue_for(sent_by_host[f.src], f.class, nq);
            sent_by_host[f.src] += 1;
            flows.push(Flow {
                receiver: Receiver::new(f.transport.ack_mode(), shape.packets),
                spec: f,
                shape,
                sender: None,
                end: None,
                packets_sent: 0,
                retx: 0,
                timer_at: None,
                wake_at: None,
                in_ring: false,
                queue,
                pulls_sent: 0,
                ideal_ps: ideal,
            });
        }
        // Captures.
        let mut chip_pcaps: Vec<BTreeMap<u16, PcapOut>> =
            (0..chips.len()).map(|_| BTreeMap::new()).collect();
        if let Some(dir) = out {
            if !s.pcaps.is_empty() {
                std::fs::create_dir_all(dir)
                    .map_err(|e| format!("{}: cannot create directory: {e}", dir.display()))?;
            }
            for (i, pc) in s.pcaps.iter().enumerate() {
                let file = dir.join(format!("{}-port{}.pcap", pc.node, pc.port));
                if let Some(h) = names.iter().position(|n| *n == pc.node) {
                    if pc.port != 0 {
                        return Err(format!("pcaps[{i}]: host `{}` has only port 0", pc.node));
                    }
                    hosts[h].pcap = Some(PcapOut::create(&file)?);
                } else if let Some(c) = topo.spec.chips.iter().position(|c| c.name == pc.node) {
                    if pc.port >= chips[c].port_count() {
                        return Err(format!(
                            "pcaps[{i}]: chip `{}` has no port {}",
                            pc.node, pc.port
                        ));
                    }
                    chip_pcaps[c].insert(pc.port, PcapOut::create(&file)?);
                } else {
                    return Err(format!("pcaps[{i}]: no node named `{}`", pc.node));
                }
            }
        }
        // Sampled series: every connected chip port's depth and transmit rate, each chip's
        // buffer.
        let mut samples = Vec::new();
        if s.sample_period_ns.is_some() {
            for (c, ports) in topo.chip_ports.iter().enumerate() {
                let n = &topo.spec.chips[c].name;
                samples.push(SeriesState {
                    series: Series {
                        name: format!("{n}.buffer_cells"),
                        unit: "cells".into(),
                        points: Vec::new(),
                    },
                    last: None,
                });
                // Pipeline occupancy (packets between issue and deparser exit) per pipe and
                // gress, and the recirculation load (packets sent back into ingress so far).
                let mut counter = |name: String, unit: &str| {
                    samples.push(SeriesState {
                        series: Series {
                            name,
                            unit: unit.into(),
                            points: Vec::new(),
                        },
                        last: None,
                    })
                };
                for pipe in 0..chips[c].profile().pipes {
                    counter(format!("{n}.pipe{pipe}.ingress_occupancy"), "packets");
                    counter(format!("{n}.pipe{pipe}.egress_occupancy"), "packets");
                }
                counter(format!("{n}.recirculated"), "packets");
                for &p in ports.keys() {
                    samples.push(SeriesState {
                        series: Series {
                            name: format!("{n}.port{p}.depth_cells"),
                            unit: "cells".into(),
                            points: Vec::new(),
                        },
                        last: None,
                    });
                    samples.push(SeriesState {
                        series: Series {
                            name: format!("{n}.port{p}.tx_bytes"),
                            unit: "bytes".into(),
                            points: Vec::new(),
                        },
                        last: None,
                    });
                }
            }
        }
        let ip_to_host = topo
            .host_ips
            .iter()
            .enumerate()
            .map(|(h, &ip)| (ip, h))
            .collect();
        let nh = hosts.len();
        let nc = chips.len();
        Ok(Net {
            name: s.name.clone(),
            queue: EventQueue::new(),
            topo,
            chips,
            hosts,
            flows,
            next_flow: 0,
            completed: 0,
            pool: Pool::default(),
            outbox: Vec::new(),
            chip_pcaps,
            ip_to_host,
            src: vec![SrcCount::default(); nh],
            host_drops: BTreeMap::new(),
            unconnected: vec![0; nc],
            pauses: Vec::new(),
            samples,
            queue_samples: BTreeMap::new(),
            last_sample: Time::ZERO,
            sample_period: s.sample_period_ns.map(Time::from_ns),
            stop_at: s.stop.at_ns.map(Time::from_ns),
            stop_when_complete: s.stop.when_flows_complete,
            events: 0,
            scratch: Vec::with_capacity(1600),
            lockstep: None,
        })
    }

    /// The chips, in topology order.
    pub fn chips(&self) -> &[Chip] {
        &self.chips
    }

    /// The topology.
    pub fn topology(&self) -> &Topology {
        &self.topo
    }

    /// Visit every cycle of every chip between events (lockstep mode, see
    /// [`asic_model::kernel::Lockstep`]), or not: the record is the same either way.
    pub fn set_lockstep(&mut self, on: bool) {
        self.lockstep = on.then(|| Lockstep::new(self.chips.iter().map(Chip::clock).collect()));
    }

    /// Run to the end and collect the record.
    pub fn run(mut self) -> Result<NetRun, String> {
        if !self.flows.is_empty() {
            let t = self.flows[0].spec.start;
            self.queue.at(t, Ev::FlowStart);
        }
        if self.sample_period.is_some() {
            self.queue.at(Time::ZERO, Ev::Sample);
        }
        // The chips' packet generators (BFC's refresh, for one).
        for (c, chip) in self.chips.iter_mut().enumerate() {
            chip.start(&mut ChipQ {
                q: &mut self.queue,
                chip: c as u16,
            });
        }
        let mut end = Time::ZERO;
        // The bar's total: the stop time, else when the last flow starts (a lower bound).
        let total = self
            .stop_at
            .or_else(|| self.flows.last().map(|f| f.spec.start))
            .map_or(1, Time::ps);
        let mut bar = SimProgress::new(&self.name);
        while let Some(t) = self.queue.peek_time() {
            if self.stop_at.is_some_and(|s| t > s) {
                end = self.stop_at.expect("checked");
                break;
            }
            if let Some(l) = &mut self.lockstep {
                let chips = &mut self.chips;
                l.advance_to(t, |c, cycle| chips[c].tick(cycle));
            }
            let (now, ev) = self.queue.pop().expect("peeked");
            end = now;
            self.events += 1;
            if self.events % 4096 == 0 {
                bar.tick(now.ps(), total);
            }
            self.handle(now, ev)?;
            if self.stop_when_complete
                && self.next_flow == self.flows.len()
                && self.completed == self.flows.len()
                && !self.flows.is_empty()
            {
                break;
            }
        }
        bar.finish();
        if let Some(l) = &mut self.lockstep {
            let chips = &mut self.chips;
            l.advance_to(end, |c, cycle| chips[c].tick(cycle));
        }
        if self.sample_period.is_some() {
            self.sample(end);
        }
        Ok(self.finish(end))
    }

    fn handle(&mut self, now: Time, ev: Ev) -> Result<(), String> {
        match ev {
            Ev::Chip { chip, ev } => {
                let c = chip as usize;
                let mut q = ChipQ {
                    q: &mut self.queue,
                    chip,
                };
                let mut w = Outbox {
                    pool: &mut self.pool,
                    out: &mut self.outbox,
                };
                self.chips[c].handle(now, ev, &mut q, &mut w);
                // The chip's transmit side paused or resumed by PFC frames it received.
                // And its queues paused or resumed by its program (AFC).
                for r in self.chips[c].drain_pause_log() {
                    let kind = match r.direction {
                        PauseDirection::Received => "pfc",
                        PauseDirection::Afc => "queue",
                        PauseDirection::Sent => continue,
                    };
                    self.pauses.push(PauseEvent {
                        at_ps: r.at.ps(),
                        node: self.topo.spec.chips[c].name.clone(),
                        port: r.port,
                        kind: kind.into(),
                        class: r.priority as u16,
                        paused: r.paused,
                    });
                }
                while let Some((port, start, frame)) = self.outbox.pop() {
                    self.chip_tx(c, port, start, frame)?;
                }
            }
            Ev::ChipRx { chip, port, frame } => {
                let c = chip as usize;
                let data = &self.pool.bufs[frame as usize];
                if packet::is_data_frame(data) {
                    if let Some(h) = packet::ipv4_src(data).and_then(|ip| self.ip_to_host.get(&ip))
                    {
                        self.src[*h].chip_in += 1;
                    }
                }
                let mut q = ChipQ {
                    q: &mut self.queue,
                    chip,
                };
                self.chips[c]
                    .receive(port, now, data, &mut q)
                    .map_err(|e| format!("chip `{}`: {e}", self.topo.spec.chips[c].name))?;
                self.pool.release(frame);
            }
            Ev::HostRx { host, frame } => {
                self.host_rx(now, host as usize, frame);
                self.pool.release(frame);
            }
            Ev::HostTx { host } => {
                self.hosts[host as usize].tx_scheduled = false;
                self.try_send(now, host as usize)?;
            }
            Ev::FlowStart => {
                while self.next_flow < self.flows.len()
                    && self.flows[self.next_flow].spec.start <= now
                {
                    let f = self.next_flow;
                    self.next_flow += 1;
                    let fl = &mut self.flows[f];
                    fl.sender = Some(fl.spec.transport.sender(fl.shape, now));
                    self.after_sender(now, f)?;
                }
                if let Some(fl) = self.flows.get(self.next_flow) {
                    let t = fl.spec.start;
                    self.queue.at(t, Ev::FlowStart);
                }
            }
            Ev::FlowTimer { flow } => {
                let f = flow as usize;
                self.flows[f].timer_at = None;
                if let Some(s) = self.flows[f].sender.as_mut() {
                    if s.timer().is_some_and(|t| t <= now) {
                        s.on_timer(now);
                    }
                }
                self.after_sender_from(now, f, true)?;
            }
            Ev::FlowWake { flow } => {
                let f = flow as usize;
                if self.flows[f].wake_at.is_some_and(|w| w <= now) {
                    self.flows[f].wake_at = None;
                }
                self.after_sender(now, f)?;
            }
            Ev::PullTick { host } => self.pull_tick(now, host as usize)?,
            Ev::PauseEnd { host, class } => {
                let h = &mut self.hosts[host as usize];
                let c = class as usize;
                if h.class_paused[c] && h.class_paused_until[c] <= now {
                    h.class_paused[c] = false;
                    self.pauses.push(PauseEvent {
                        at_ps: now.ps(),
                        node: h.name.clone(),
                        port: 0,
                        kind: "pfc".into(),
                        class: class as u16,
                        paused: false,
                    });
                    self.kick(now, host as usize)?;
                }
            }
            Ev::Sample => {
                self.sample(now);
                if let Some(p) = self.sample_period {
                    if !self.queue.is_empty() {
                        self.queue.at(now + p, Ev::Sample);
                    }
                }
            }
        }
        Ok(())
    }

    fn sample(&mut self, now: Time) {
        if self.sample_period.is_none() {
            return;
        }
        let mut k = 0;
        for (c, ports) in self.topo.chip_ports.iter().enumerate() {
            let chip = &self.chips[c];
            let tm = chip.tm();
            let v = tm.used_cells() as f64;
            push_sample(&mut self.samples[k], now, v);
            k += 1;
            for pipe in 0..chip.profile().pipes {
                let (ig, eg) = chip.pipe_occupancy(pipe);
                push_sample(&mut self.samples[k], now, ig as f64);
                push_sample(&mut self.samples[k + 1], now, eg as f64);
                k += 2;
            }
            let recirculated = chip.plumbing_counters().recirculated as f64;
            push_sample(&mut self.samples[k], now, recirculated);
            k += 1;
            for &p in ports.keys() {
                let d = tm.port_depth_cells(p) as f64;
                push_sample(&mut self.samples[k], now, d);
                // Cumulative bytes (no preamble, FCS or gap) of the frames that have started:
                // the report derives rates over a window much longer than a frame time
                // (a per-sample rate would be quantised by whole frames).
                let tx = self.chips[c].port_counters(p).tx_bytes;
                push_sample(&mut self.samples[k + 1], now, tx as f64);
                k += 2;
                for q in 0..tm.spec().queues_per_port {
                    let cells = tm.depth(p, q).0 as f64;
                    let key = (c, p, q);
                    if cells == 0.0 && !self.queue_samples.contains_key(&key) {
                        continue;
                    }
                    let prev = self.last_sample;
                    let node = &self.topo.spec.chips[c].name;
                    let s = self
                        .queue_samples
                        .entry(key)
                        .or_insert_with(|| SeriesState {
                            series: Series {
                                name: format!("{node}.port{p}.q{q}.depth_cells"),
                                unit: "cells".into(),
                                points: vec![(prev.ps(), 0.0)],
                            },
                            last: Some(0.0),
                        });
                    push_sample(s, now, cells);
                }
            }
        }
        self.last_sample = now;
    }

    /// A chip's port sent `frame` starting at `start`.
    fn chip_tx(&mut self, c: usize, port: u16, start: Time, frame: u32) -> Result<(), String> {
        let data = &self.pool.bufs[frame as usize];
        if let Some(pc) = self.chip_pcaps[c].get_mut(&port) {
            pc.write(start, data)?;
        }
        let src = packet::is_data_frame(data)
            .then(|| packet::ipv4_src(data).and_then(|ip| self.ip_to_host.get(&ip).copied()))
            .flatten();
        if let Some(h) = src {
            self.src[h].chip_out += 1;
        }
        let Some(&l) = self.topo.chip_ports[c].get(&port) else {
            self.unconnected[c] += 1;
            if let Some(h) = src {
                self.src[h].unconnected += 1;
            }
            self.pool.release(frame);
            return Ok(());
        };
        let link = self.topo.links[l];
        match self.topo.peer(l, End::Chip(c, port)) {
            End::Chip(c2, p2) => self.queue.at(
                start + Time(link.delay_ps),
                Ev::ChipRx {
                    chip: c2 as u16,
                    port: p2,
                    frame,
                },
            ),
            End::Host(h) => {
                let len = self.pool.bufs[frame as usize].len();
                self.queue.at(
                    start + Time(link.delay_ps) + frame_time(len, link.gbps),
                    Ev::HostRx {
                        host: h as u32,
                        frame,
                    },
                )
            }
        }
        Ok(())
    }

    fn host_drop(&mut self, h: usize, reason: &'static str) {
        *self.host_drops.entry((h, reason)).or_default() += 1;
    }

    fn host_rx(&mut self, now: Time, h: usize, frame: u32) {
        let data = &self.pool.bufs[frame as usize];
        if ctrl::is_ctrl(data) {
            match ctrl::parse(data) {
                Some(c) => self.host_ctrl(now, h, c),
                None => self.host_drop(h, "bad_control_frame"),
            }
            return;
        }
        let Some(hd) = packet::parse(data) else {
            return self.host_drop(h, "unknown_frame");
        };
        let refusal = if hd.dst_ip != self.hosts[h].ip {
            Some("misdelivered")
        } else if hd.flow_id as usize >= self.flows.len()
            || self.flows[hd.flow_id as usize].sender.is_none()
        {
            Some("unknown_flow")
        } else {
            None
        };
        if let Some(reason) = refusal {
            if hd.flags & DATA != 0 {
                if let Some(s) = self.ip_to_host.get(&hd.src_ip) {
                    self.src[*s].refused += 1;
                }
            }
            return self.host_drop(h, reason);
        }
        let f = hd.flow_id as usize;
        if hd.flags & DATA != 0 {
            self.hosts[h].packets_received += 1;
            if let Some(s) = self.ip_to_host.get(&hd.src_ip) {
                self.src[*s].delivered += 1;
            }
            let fl = &mut self.flows[f];
            let out = fl.receiver.on_data(&hd);
            if out.completed {
                fl.end = Some(now);
                self.completed += 1;
            }
            if let Some(r) = out.reply {
                let class = fl.spec.class as usize;
                self.hosts[h].ctrl[class].push_back(CtrlPkt {
                    flow: f as u32,
                    flags: r.flags,
                    seq: r.seq,
                    echo: r.echo,
                    ts_ps: r.ts_ps,
                });
                let _ = self.kick(now, h);
            }
            if out.pull {
                let host = &mut self.hosts[h];
                host.pulls.push_back(f as u32);
                if !host.pull_scheduled {
                    host.pull_scheduled = true;
                    let t = now.max(host.pull_next_at);
                    self.queue.at(t, Ev::PullTick { host: h as u32 });
                }
            }
        } else if hd.flags & (ACK | NACK | PULL) != 0 {
            if let Some(s) = self.flows[f].sender.as_mut() {
                s.on_feedback(now, &hd);
            }
            let _ = self.after_sender(now, f);
        }
    }

    fn host_ctrl(&mut self, now: Time, h: usize, c: Ctrl) {
        let host = &mut self.hosts[h];
        let mut changed = false;
        let rec = |pauses: &mut Vec<PauseEvent>, kind: &str, class: u16, paused: bool| {
            pauses.push(PauseEvent {
                at_ps: now.ps(),
                node: host.name.clone(),
                port: 0,
                kind: kind.into(),
                class,
                paused,
            })
        };
        match c {
            Ctrl::Pfc(times) => {
                for (cl, t) in times.iter().enumerate() {
                    let Some(q) = *t else { continue };
                    if q == 0 {
                        host.class_paused_until[cl] = now;
                        if host.class_paused[cl] {
                            host.class_paused[cl] = false;
                            rec(&mut self.pauses, "pfc", cl as u16, false);
                            changed = true;
                        }
                    } else {
                        // One quantum: 512 bit times.
                        let until = now + Time::serialization(q as u64 * 64, host.gbps);
                        host.class_paused_until[cl] = until;
                        if !host.class_paused[cl] {
                            host.class_paused[cl] = true;
                            rec(&mut self.pauses, "pfc", cl as u16, true);
                        }
                        self.queue.at(
                            until,
                            Ev::PauseEnd {
                                host: h as u32,
                                class: cl as u8,
                            },
                        );
                    }
                }
            }
            Ctrl::PauseQueue(q) | Ctrl::ResumeQueue(q) => {
                let pause = matches!(c, Ctrl::PauseQueue(_));
                if let Some(s) = host.queue_paused.get_mut(q as usize) {
                    if *s != pause {
                        *s = pause;
                        rec(&mut self.pauses, "queue", q, pause);
                        changed |= !pause;
                    }
                }
            }
            Ctrl::Bitmap { first, bitmap } => {
                for i in 0..bitmap.len() * 8 {
                    let q = first as usize + i;
                    let pause = bitmap[i / 8] & (1 << (i % 8)) != 0;
                    if let Some(s) = host.queue_paused.get_mut(q) {
                        if *s != pause {
                            *s = pause;
                            rec(&mut self.pauses, "queue", q as u16, pause);
                            changed |= !pause;
                        }
                    }
                }
            }
        }
        if changed {
            let _ = self.kick(now, h);
        }
    }

    fn pull_tick(&mut self, now: Time, h: usize) -> Result<(), String> {
        let host = &mut self.hosts[h];
        host.pull_scheduled = false;
        while let Some(f) = host.pulls.pop_front() {
            let fl = &mut self.flows[f as usize];
            if fl.receiver.complete() {
                continue;
            }
            fl.pulls_sent += 1;
            host.ctrl[fl.spec.class as usize].push_back(CtrlPkt {
                flow: f,
                flags: PULL,
                seq: fl.pulls_sent,
                echo: 0,
                ts_ps: now.ps(),
            });
            host.pull_next_at = now + host.pull_interval;
            if !host.pulls.is_empty() {
                host.pull_scheduled = true;
                let t = host.pull_next_at;
                self.queue.at(t, Ev::PullTick { host: h as u32 });
            }
            return self.kick(now, h);
        }
        Ok(())
    }

    /// After anything touched flow `f`'s sender: arm its timer, wake it when paced, and put
    /// it in its NIC queue if it has a packet ready.
    fn after_sender(&mut self, now: Time, f: usize) -> Result<(), String> {
        self.after_sender_from(now, f, false)
    }

    fn after_sender_from(&mut self, now: Time, f: usize, from_timer: bool) -> Result<(), String> {
        let fl = &mut self.flows[f];
        let Some(s) = fl.sender.as_mut() else {
            return Ok(());
        };
        if let Some(t) = s.timer() {
            // A timer at or before now that the transport did not clear when it ran is not
            // re-armed (it would fire again at once, for ever).
            if fl.timer_at.is_none_or(|x| t < x) && (t > now || !from_timer) {
                fl.timer_at = Some(t);
                self.queue.at(t.max(now), Ev::FlowTimer { flow: f as u32 });
            }
        }
        if fl.in_ring {
            return Ok(());
        }
        match s.poll(now) {
            Ready::Now => {
                fl.in_ring = true;
                let h = fl.spec.src;
                self.hosts[h].queues[fl.queue as usize].push_back(f as u32);
                self.kick(now, h)?;
            }
            Ready::At(t) => {
                if fl.wake_at.is_none_or(|w| t < w) {
                    fl.wake_at = Some(t);
                    self.queue.at(t, Ev::FlowWake { flow: f as u32 });
                }
            }
            Ready::Blocked => {}
        }
        Ok(())
    }

    /// Let host `h`'s NIC send if its wire is free.
    fn kick(&mut self, now: Time, h: usize) -> Result<(), String> {
        let host = &mut self.hosts[h];
        if host.tx_scheduled {
            return Ok(());
        }
        if now >= host.busy_until {
            self.try_send(now, h)
        } else {
            host.tx_scheduled = true;
            let t = host.busy_until;
            self.queue.at(t, Ev::HostTx { host: h as u32 });
            Ok(())
        }
    }

    /// The NIC's scheduler: serve one packet if the wire is free.
    fn try_send(&mut self, now: Time, h: usize) -> Result<(), String> {
        if now < self.hosts[h].busy_until {
            return Ok(());
        }
        for class in (0..8).rev() {
            let host = &mut self.hosts[h];
            if host.class_paused_until[class] > now {
                continue;
            }
            if let Some(c) = host.ctrl[class].pop_front() {
                let fl = &self.flows[c.flow as usize];
                let hd = Header {
                    dst_mac: host.peer_mac,
                    src_mac: host.mac,
                    src_ip: host.ip,
                    dst_ip: self.topo.host_ips[fl.spec.src],
                    ecn: ECN_NOT_ECT,
                    flags: c.flags,
                    class: class as u8,
                    queue: fl.queue,
                    seq: c.seq,
                    echo: c.echo,
                    flow_id: c.flow as u64,
                    ts_ps: c.ts_ps,
                    len: 0,
                };
                packet::build(&mut self.scratch, &hd, 0);
                return self.host_transmit(now, h);
            }
            let per_class = host.queues.len() / 8;
            let rr0 = host.rr[class];
            for k in 0..per_class {
                let qi = (rr0 + k) % per_class;
                let q = class + 8 * qi;
                if self.hosts[h].queue_paused[q] {
                    continue;
                }
                while let Some(f) = self.hosts[h].queues[q].pop_front() {
                    let fu = f as usize;
                    let fl = &mut self.flows[fu];
                    fl.in_ring = false;
                    let Some(s) = fl.sender.as_mut() else {
                        continue;
                    };
                    let seg = match s.poll(now) {
                        Ready::Now => s.next(now),
                        _ => None,
                    };
                    let Some(seg) = seg else {
                        self.after_sender(now, fu)?;
                        continue;
                    };
                    let host = &mut self.hosts[h];
                    let hd = Header {
                        dst_mac: host.peer_mac,
                        src_mac: host.mac,
                        src_ip: host.ip,
                        dst_ip: self.topo.host_ips[fl.spec.dst],
                        ecn: if s.ecn_capable() {
                            ECN_ECT0
                        } else {
                            ECN_NOT_ECT
                        },
                        flags: DATA
                            | if seg.seq + 1 == fl.shape.packets {
                                LAST
                            } else {
                                0
                            },
                        class: class as u8,
                        queue: fl.queue,
                        seq: seg.seq,
                        echo: 0,
                        flow_id: f as u64,
                        ts_ps: now.ps(),
                        len: seg.len,
                    };
                    packet::build(&mut self.scratch, &hd, seg.len as usize);
                    fl.packets_sent += 1;
                    fl.retx += seg.retx as u64;
                    host.packets_sent += 1;
                    host.rr[class] = (qi + 1) % per_class;
                    self.host_transmit(now, h)?;
                    // Back in its queue if it has more to send.
                    self.after_sender(now, fu)?;
                    return Ok(());
                }
            }
        }
        Ok(())
    }

    /// Put the frame in `scratch` on host `h`'s wire now.
    fn host_transmit(&mut self, now: Time, h: usize) -> Result<(), String> {
        let host = &mut self.hosts[h];
        let len = self.scratch.len();
        host.busy_until = now + slot_time(len, host.gbps);
        if let Some(pc) = host.pcap.as_mut() {
            pc.write(now, &self.scratch)?;
        }
        let i = self.pool.alloc();
        self.pool.bufs[i as usize].extend_from_slice(&self.scratch);
        let End::Chip(c, p) = host.peer else {
            unreachable!("hosts connect to chips (checked when the topology is resolved)")
        };
        self.queue.at(
            now + Time(host.delay_ps),
            Ev::ChipRx {
                chip: c as u16,
                port: p,
                frame: i,
            },
        );
        // Serve the next packet when the wire is free.
        host.tx_scheduled = true;
        let t = host.busy_until;
        self.queue.at(t, Ev::HostTx { host: h as u32 });
        Ok(())
    }

    fn finish(mut self, end: Time) -> NetRun {
        for pcs in &mut self.chip_pcaps {
            for (_, p) in std::mem::take(pcs) {
                let _ = p.finish();
            }
        }
        for h in &mut self.hosts {
            if let Some(p) = h.pcap.take() {
                let _ = p.finish();
            }
        }
        let names: Vec<&str> = self.hosts.iter().map(|h| h.name.as_str()).collect();
        let flows = self
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| FlowRecord {
                id: i as u64,
                src: names[f.spec.src].to_string(),
                dst: names[f.spec.dst].to_string(),
                size_bytes: f.spec.size,
                start_ps: f.spec.start.ps(),
                end_ps: f.end.map(Time::ps),
                ideal_fct_ps: f.ideal_ps,
                packets_sent: f.packets_sent,
                retransmissions: f.retx,
            })
            .collect();
        let mut drops = Vec::new();
        let mut chip_drops = 0;
        for (c, chip) in self.chips.iter().enumerate() {
            for r in DropReason::ALL {
                let n = chip.drops(r);
                chip_drops += n;
                if n > 0 {
                    drops.push(DropCount {
                        node: self.topo.spec.chips[c].name.clone(),
                        reason: r.name().into(),
                        packets: n,
                    });
                }
            }
            if self.unconnected[c] > 0 {
                drops.push(DropCount {
                    node: self.topo.spec.chips[c].name.clone(),
                    reason: "unconnected_port".into(),
                    packets: self.unconnected[c],
                });
            }
        }
        for ((h, r), n) in &self.host_drops {
            drops.push(DropCount {
                node: names[*h].to_string(),
                reason: r.to_string(),
                packets: *n,
            });
        }
        let balance: Vec<HostBalance> = self
            .hosts
            .iter()
            .enumerate()
            .map(|(i, h)| {
                let s = self.src[i];
                // A chip that copies a host's data packet (multicast, mirroring to a front
                // port) sends out more of them than came in: those copies are not drops.
                let dropped = s.chip_in.saturating_sub(s.chip_out);
                let accounted = s.delivered + dropped + s.unconnected + s.refused;
                HostBalance {
                    host: h.name.clone(),
                    offered: h.packets_sent,
                    delivered: s.delivered,
                    dropped_in_chips: dropped,
                    dropped_unconnected: s.unconnected,
                    refused_by_hosts: s.refused,
                    in_flight: h.packets_sent.saturating_sub(accounted),
                }
            })
            .collect();
        let hosts = self
            .hosts
            .iter()
            .zip(&balance)
            .map(|(h, b)| HostTotals {
                host: h.name.clone(),
                packets_sent: h.packets_sent,
                packets_received: h.packets_received,
                packets_dropped: b.dropped_in_chips + b.dropped_unconnected + b.refused_by_hosts,
            })
            .collect();
        let series = self
            .samples
            .into_iter()
            .chain(self.queue_samples.into_values())
            .map(|s| s.series)
            .collect();
        let peak_buffer_cells = self
            .chips
            .iter()
            .enumerate()
            .map(|(c, chip)| (self.topo.spec.chips[c].name.clone(), chip.tm().peak_cells()))
            .collect();
        NetRun {
            record: RunRecord {
                name: self.name,
                duration_ps: end.ps(),
                flows,
                series,
                pauses: self.pauses,
                drops,
                hosts,
            },
            balance,
            events: self.events,
            switch_hops: self
                .chips
                .iter()
                .flat_map(|c| (0..c.port_count()).map(|p| c.port_counters(p).tx_packets))
                .sum(),
            lockstep_cycles: self.lockstep.as_ref().map_or(0, Lockstep::visited),
            chip_drops,
            peak_buffer_cells,
            frames_on_links: self.pool.live(),
            frame_buffers: self.pool.allocated(),
            chips: self.chips,
        }
    }
}

fn push_sample(s: &mut SeriesState, now: Time, v: f64) {
    if s.last != Some(v) {
        s.series.points.push((now.ps(), v));
        s.last = Some(v);
    }
}

/// One link of a path: (propagation delay ps, rate Gb/s, pipe latency ps of the chip the
/// link leads to, 0 for the receiving host).
pub type Hop = (u64, u32, u64);

/// The ideal FCT of a flow of `shape` along `hops`, per the module documentation.
pub fn ideal_fct(hops: &[Hop], shape: Shape) -> u64 {
    let len = |seq: u32| packet::data_frame_len(shape.len_of(seq) as usize);
    let first = len(0);
    let last = len(shape.packets - 1);
    let b = (0..hops.len())
        .min_by_key(|&j| (hops[j].1, j))
        .expect("a path has at least one link");
    let rb = hops[b].1;
    let mut t: u64 = hops.iter().map(|h| h.0 + h.2).sum();
    for h in &hops[..b] {
        t += frame_time(first, h.1).ps();
    }
    let full = slot_time(len(0), rb).ps();
    t += full * (shape.packets as u64 - 1);
    t += frame_time(last, rb).ps();
    // After the bottleneck the packets are spaced by their slot times at r_b; on an equally
    // fast link the last packet waits for its predecessor's slot to end, so that link adds
    // the predecessor's frame time; on a faster link it goes at once.
    let before_last = if shape.packets >= 2 {
        len(shape.packets - 2)
    } else {
        last
    };
    for h in &hops[b + 1..] {
        let l = if h.1 == rb { before_last } else { last };
        t += frame_time(l, h.1).ps();
    }
    t
}
