//! Topologies: chips, hosts and the links between them, written out in RON or generated for
//! the common shapes, and the routes the stock router programs need.
//!
//! ## Explicit topology (RON)
//! ```ron
//! (
//!     chips: [
//!         (name: "sw0", profile: "teaching", program: "stock:l3router", entries: Auto(Static)),
//!     ],
//!     hosts: [
//!         (name: "h0", ip: "10.0.0.1"),
//!         (name: "h1", ip: "10.0.0.2"),
//!     ],
//!     links: [
//!         // A link joins two ends: a host name, or `chip:port`. `gbps` must equal the chip
//!         // port's line rate (and is the host NIC's rate); `delay_ns` is propagation delay.
//!         (a: "h0", b: "sw0:0", gbps: 10, delay_ns: 1000),
//!         (a: "h1", b: "sw0:1", gbps: 10, delay_ns: 1000),
//!     ],
//! )
//! ```
//! `program` is a `.p4` path (relative to the scenario) or a stock program: `stock:l3router`
//! (LPM routing, one next hop per destination) or `stock:ecmp_router` (LPM routing to ECMP
//! groups, member chosen by a CRC16 hash of the 5-tuple in the program). `entries` is `None`,
//! `File("entries.ron")`, `Inline([...])` (the entries format of `pipelines::entries`) or
//! `Auto(Static | Ecmp)`: routes generated from the topology (below).
//!
//! ## Generated shapes ([`Shape`])
//! - `SingleSwitch(hosts: N)`: one chip `sw0`, hosts `h0..` on ports `0..N`, 10.0.0.(i+1).
//! - `Dumbbell(left: L, right: R)`: chips `sw0` (hosts `l0..` on ports 0..L, 10.0.0.(i+1)) and
//!   `sw1` (hosts `r0..`, 10.1.0.(i+1)) joined by one link from port L of `sw0` to port R of
//!   `sw1`: the bottleneck when hosts send across.
//! - `LeafSpine(leaves, spines, hosts_per_leaf, uplinks_per_spine)`: leaf `leafI` has its
//!   hosts `hI_J` on ports `0..hosts_per_leaf` (10.I.0.(J+1)) and `uplinks_per_spine` links to
//!   each spine on the following ports (spine-major); spine `spineS` has port `I·u + k` to
//!   leaf I's k-th link. Oversubscription = hosts_per_leaf / (spines × uplinks_per_spine)
//!   when all ports have one speed ([`Topology::oversubscription`]).
//! - `FatTree(k, tiers: 2)`: a two-tier folded Clos of k-port chips: k leaves (`leafI`) with
//!   k/2 hosts and one link to each of k/2 spines. `tiers: 3`: the k-ary fat tree of Al-Fares
//!   et al. (SIGCOMM 2008): k pods of k/2 edge (`eP_E`) and k/2 aggregation (`aP_A`) chips,
//!   (k/2)² cores (`cI`); host `hP_E_H` is 10.P.E.(H+2); edge port H < k/2 goes to host H,
//!   edge port k/2 + A to aggregation A; aggregation port E to edge E, port k/2 + j to core
//!   A·k/2 + j; core port P to pod P.
//!
//! Every generated link has the chip's port rate and the scenario's `delay_ns`.
//!
//! ## Routes (`Auto`)
//! For each chip and each host, the next hops are the chip's ports on a shortest path (fewest
//! links; paths never go through hosts). `Static` picks one of them by the destination
//! (host index modulo the number of choices, so destinations spread over spines);
//! `Ecmp` installs a group of all of them, the program choosing by hash. Routes are
//! aggregated: one entry for a /16 or a /24 whose hosts all share the same next hop(s), else
//! one /32 per host. Next-hop MACs are the peer's (host `02:00:<ip>`, chip port
//! `02:fe:<chip hi, lo>:<port hi, lo>`); the source MAC is the chip port's.

use super::packet::ip_string;
use pipelines::entries::{EntrySpec, KeySpec, Value};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, VecDeque};

/// An explicit topology.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TopologySpec {
    /// Switches.
    pub chips: Vec<ChipSpec>,
    /// Hosts.
    pub hosts: Vec<HostSpec>,
    /// Links.
    pub links: Vec<LinkSpec>,
}

/// One switch chip.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChipSpec {
    /// Node name (unique among chips and hosts).
    pub name: String,
    /// Built-in profile name or profile file.
    pub profile: String,
    /// Program: a `.p4` path or `stock:l3router` / `stock:ecmp_router`.
    pub program: String,
    /// Table entries.
    #[serde(default)]
    pub entries: EntriesSpec,
    /// The operator's TM configuration (admission, schedulers, PFC, ECN marking); the
    /// chip's default if absent.
    #[serde(default)]
    pub tm: Option<tm::config::TmConfig>,
    /// Run BFC (`program` should then be `stock:bfc`, the entries `Auto(Ecmp)`): the
    /// runtime adds BFC's entries and chip configuration ([`super::bfc`]).
    #[serde(default)]
    pub bfc: Option<super::bfc::BfcSpec>,
}

/// Where a chip's table entries come from.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub enum EntriesSpec {
    /// No entries.
    #[default]
    None,
    /// A RON entries file.
    File(String),
    /// Entries written inline.
    Inline(Vec<EntrySpec>),
    /// Routes generated from the topology for a stock router.
    Auto(Routing),
}

/// How generated routes choose among equal-cost next hops.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Routing {
    /// One next hop per destination (for `stock:l3router`).
    #[default]
    Static,
    /// ECMP groups, member chosen by the program's hash (for `stock:ecmp_router`).
    Ecmp,
}

/// One host.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostSpec {
    /// Node name.
    pub name: String,
    /// IPv4 address.
    pub ip: String,
    /// NIC queues: a multiple of 8; queue `q` belongs to priority class `q mod 8`.
    #[serde(default = "default_queues")]
    pub nic_queues: u16,
}

fn default_queues() -> u16 {
    8
}

/// One link.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    /// One end: a host name or `chip:port`.
    pub a: String,
    /// The other end.
    pub b: String,
    /// Line rate (Gb/s): both ends' port speed.
    pub gbps: u32,
    /// Propagation delay (ns).
    pub delay_ns: u64,
}

/// A common shape to generate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Shape {
    /// One switch with N hosts.
    SingleSwitch {
        /// Hosts.
        hosts: u16,
    },
    /// Two switches joined by one link.
    Dumbbell {
        /// Hosts on the left switch.
        left: u16,
        /// Hosts on the right switch.
        right: u16,
    },
    /// Leaves and spines.
    LeafSpine {
        /// Leaf switches.
        leaves: u16,
        /// Spine switches.
        spines: u16,
        /// Hosts per leaf.
        hosts_per_leaf: u16,
        /// Parallel links from each leaf to each spine.
        #[serde(default = "one")]
        uplinks_per_spine: u16,
    },
    /// A fat tree of k-port chips, 2 or 3 tiers.
    FatTree {
        /// Ports per chip (even).
        k: u16,
        /// 2 or 3.
        tiers: u8,
    },
}

fn one() -> u16 {
    1
}

/// A generated topology's parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Generate {
    /// The shape.
    pub shape: Shape,
    /// Chip profile of every switch.
    pub chip: String,
    /// Routing of the stock program: `Static` runs `stock:l3router`, `Ecmp` runs
    /// `stock:ecmp_router`.
    #[serde(default)]
    pub routing: Routing,
    /// Program override (else the stock router for `routing`).
    #[serde(default)]
    pub program: Option<String>,
    /// Propagation delay of every link (ns).
    #[serde(default = "default_delay")]
    pub delay_ns: u64,
    /// NIC queues per host.
    #[serde(default = "default_queues")]
    pub nic_queues: u16,
    /// TM configuration of every chip (default: the chip's).
    #[serde(default)]
    pub tm: Option<tm::config::TmConfig>,
    /// Run BFC on every chip (with `stock:bfc` unless `program` says otherwise).
    #[serde(default)]
    pub bfc: Option<super::bfc::BfcSpec>,
}

fn default_delay() -> u64 {
    1000
}

/// A link end, resolved.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum End {
    /// Host index.
    Host(usize),
    /// Chip index and port.
    Chip(usize, u16),
}

/// A resolved link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Link {
    /// One end.
    pub a: End,
    /// The other end.
    pub b: End,
    /// Gb/s.
    pub gbps: u32,
    /// Propagation delay (ps).
    pub delay_ps: u64,
}

/// A topology with names resolved to indices (port speeds are checked against the chips when
/// the network is built).
#[derive(Clone, Debug)]
pub struct Topology {
    /// The spec it came from.
    pub spec: TopologySpec,
    /// Host IPs.
    pub host_ips: Vec<u32>,
    /// Links.
    pub links: Vec<Link>,
    /// Per chip: port → (link index) for connected ports.
    pub chip_ports: Vec<BTreeMap<u16, usize>>,
    /// Per host: its link.
    pub host_link: Vec<usize>,
}

/// MAC of a host with address `ip`.
pub fn host_mac(ip: u32) -> [u8; 6] {
    let b = ip.to_be_bytes();
    [0x02, 0x00, b[0], b[1], b[2], b[3]]
}

/// MAC of chip `c`'s port `p`.
pub fn chip_mac(c: usize, p: u16) -> [u8; 6] {
    let c = (c as u16).to_be_bytes();
    let p = p.to_be_bytes();
    [0x02, 0xfe, c[0], c[1], p[0], p[1]]
}

fn mac_string(m: [u8; 6]) -> String {
    m.iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

fn parse_ip(s: &str, what: &str) -> Result<u32, String> {
    s.parse::<std::net::Ipv4Addr>()
        .map(u32::from)
        .map_err(|_| format!("{what}: `{s}` is not an IPv4 address"))
}

impl Topology {
    /// Resolve names and check the structure: unique names and addresses, link ends that
    /// exist, each host on exactly one link, each chip port on at most one. Port ranges and
    /// speeds are checked when chips are built.
    pub fn resolve(spec: TopologySpec) -> Result<Topology, String> {
        let mut names: BTreeMap<&str, End> = BTreeMap::new();
        for (i, c) in spec.chips.iter().enumerate() {
            if names.insert(&c.name, End::Chip(i, 0)).is_some() {
                return Err(format!("chips[{i}]: name `{}` is used twice", c.name));
            }
        }
        let mut host_ips = Vec::new();
        let mut ips = BTreeMap::new();
        for (i, h) in spec.hosts.iter().enumerate() {
            if names.insert(&h.name, End::Host(i)).is_some() {
                return Err(format!("hosts[{i}]: name `{}` is used twice", h.name));
            }
            let ip = parse_ip(&h.ip, &format!("hosts[{i}] ({}): ip", h.name))?;
            if let Some(o) = ips.insert(ip, i) {
                return Err(format!(
                    "hosts[{i}] ({}): address {} is also host `{}`'s",
                    h.name, h.ip, spec.hosts[o].name
                ));
            }
            if h.nic_queues == 0 || h.nic_queues % 8 != 0 {
                return Err(format!(
                    "hosts[{i}] ({}): nic_queues: {} must be a positive multiple of 8",
                    h.name, h.nic_queues
                ));
            }
            host_ips.push(ip);
        }
        let mut links = Vec::new();
        let mut chip_ports = vec![BTreeMap::new(); spec.chips.len()];
        let mut host_link = vec![usize::MAX; spec.hosts.len()];
        for (i, l) in spec.links.iter().enumerate() {
            let place = format!("links[{i}] ({} - {})", l.a, l.b);
            let end = |s: &str| -> Result<End, String> {
                match s.split_once(':') {
                    Some((c, p)) => match names.get(c) {
                        Some(End::Chip(ci, _)) => p
                            .parse::<u16>()
                            .map(|p| End::Chip(*ci, p))
                            .map_err(|_| format!("{place}: `{p}` is not a port number")),
                        _ => Err(format!("{place}: no chip named `{c}`")),
                    },
                    None => match names.get(s) {
                        Some(End::Host(h)) => Ok(End::Host(*h)),
                        Some(End::Chip(..)) => Err(format!(
                            "{place}: `{s}` is a chip; name its port as `{s}:PORT`"
                        )),
                        None => Err(format!("{place}: no host named `{s}`")),
                    },
                }
            };
            let (a, b) = (end(&l.a)?, end(&l.b)?);
            if l.gbps == 0 {
                return Err(format!("{place}: gbps must be greater than 0"));
            }
            for e in [a, b] {
                match e {
                    End::Host(h) => {
                        if host_link[h] != usize::MAX {
                            return Err(format!(
                                "{place}: host `{}` already has a link (a host has one NIC port)",
                                spec.hosts[h].name
                            ));
                        }
                        host_link[h] = i;
                    }
                    End::Chip(c, p) => {
                        if chip_ports[c].insert(p, i).is_some() {
                            return Err(format!(
                                "{place}: port {p} of `{}` already has a link",
                                spec.chips[c].name
                            ));
                        }
                    }
                }
            }
            if let (End::Host(_), End::Host(_)) = (a, b) {
                return Err(format!("{place}: hosts must connect to chips"));
            }
            links.push(Link {
                a,
                b,
                gbps: l.gbps,
                delay_ps: l.delay_ns * 1000,
            });
        }
        if let Some(h) = host_link.iter().position(|&l| l == usize::MAX) {
            return Err(format!("host `{}` has no link", spec.hosts[h].name));
        }
        Ok(Topology {
            spec,
            host_ips,
            links,
            chip_ports,
            host_link,
        })
    }

    /// The other end of link `l` from `e`.
    pub fn peer(&self, l: usize, e: End) -> End {
        let k = &self.links[l];
        if k.a == e {
            k.b
        } else {
            k.a
        }
    }

    /// Node name of an end.
    pub fn name(&self, e: End) -> &str {
        match e {
            End::Host(h) => &self.spec.hosts[h].name,
            End::Chip(c, _) => &self.spec.chips[c].name,
        }
    }

    /// MAC of an end.
    pub fn mac(&self, e: End) -> [u8; 6] {
        match e {
            End::Host(h) => host_mac(self.host_ips[h]),
            End::Chip(c, p) => chip_mac(c, p),
        }
    }

    /// Hops from each chip to host `h` (links, `u32::MAX` if unreachable); paths do not
    /// cross hosts.
    pub fn chip_distances(&self, h: usize) -> Vec<u32> {
        let mut d = vec![u32::MAX; self.spec.chips.len()];
        let mut q = VecDeque::new();
        if let End::Chip(c, _) = self.peer(self.host_link[h], End::Host(h)) {
            d[c] = 1;
            q.push_back(c);
        }
        while let Some(c) = q.pop_front() {
            for (&p, &l) in &self.chip_ports[c] {
                if let End::Chip(c2, _) = self.peer(l, End::Chip(c, p)) {
                    if d[c2] == u32::MAX {
                        d[c2] = d[c] + 1;
                        q.push_back(c2);
                    }
                }
            }
        }
        d
    }

    /// Each chip's tier: its hop distance to the nearest host (1 for a ToR; `u32::MAX` for
    /// a chip no host reaches).
    pub fn chip_tiers(&self) -> Vec<u32> {
        let mut t = vec![u32::MAX; self.spec.chips.len()];
        for h in 0..self.host_link.len() {
            for (c, d) in self.chip_distances(h).into_iter().enumerate() {
                t[c] = t[c].min(d);
            }
        }
        t
    }

    /// The ports of chip `c` on a shortest path to host `h`, given `chip_distances(h)`.
    pub fn next_hops(&self, c: usize, h: usize, dist: &[u32]) -> Vec<u16> {
        let mut v = Vec::new();
        if dist[c] == u32::MAX {
            return v;
        }
        for (&p, &l) in &self.chip_ports[c] {
            match self.peer(l, End::Chip(c, p)) {
                End::Host(h2) if h2 == h => v.push(p),
                End::Chip(c2, _) if dist[c2] != u32::MAX && dist[c2] + 1 == dist[c] => v.push(p),
                _ => {}
            }
        }
        v
    }

    /// A shortest path from host `s` to host `d`: the links in order (chips choose the
    /// lowest-numbered port among equal choices).
    pub fn path(&self, s: usize, d: usize) -> Option<Vec<usize>> {
        let dist = self.chip_distances(d);
        let mut links = vec![self.host_link[s]];
        let mut at = self.peer(self.host_link[s], End::Host(s));
        loop {
            match at {
                End::Host(h) => return (h == d).then_some(links),
                End::Chip(c, _) => {
                    let p = *self.next_hops(c, d, &dist).first()?;
                    let l = self.chip_ports[c][&p];
                    links.push(l);
                    at = self.peer(l, End::Chip(c, p));
                }
            }
            if links.len() > self.links.len() + 1 {
                return None;
            }
        }
    }

    /// Generated route entries for chip `c`.
    pub fn routes(&self, c: usize, routing: Routing) -> Vec<EntrySpec> {
        // Per host: the action (as a sortable key) and the entry pieces.
        #[derive(Clone, PartialEq, Eq, PartialOrd, Ord)]
        enum Act {
            Hop(u16),
            Group(Vec<u16>),
        }
        let mut acts: Vec<Option<Act>> = Vec::new();
        for h in 0..self.spec.hosts.len() {
            let dist = self.chip_distances(h);
            let hops = self.next_hops(c, h, &dist);
            acts.push(match (hops.len(), routing) {
                (0, _) => None,
                (1, _) => Some(Act::Hop(hops[0])),
                (n, Routing::Static) => Some(Act::Hop(hops[h % n])),
                (_, Routing::Ecmp) => Some(Act::Group(hops)),
            });
        }
        // Aggregate by /16, then /24, else /32.
        let mut entries = Vec::new();
        let mut groups: BTreeMap<Vec<u16>, u16> = BTreeMap::new();
        let mut emit = |prefix: u32, len: u16, a: &Act, entries: &mut Vec<EntrySpec>| {
            let hop = |p: u16| {
                let l = self.chip_ports[c][&p];
                vec![
                    Value::Int(p as u64),
                    Value::Text(mac_string(self.mac(self.peer(l, End::Chip(c, p))))),
                    Value::Text(mac_string(chip_mac(c, p))),
                ]
            };
            let key = vec![KeySpec::Lpm(Value::Text(ip_string(prefix)), len)];
            match a {
                Act::Hop(p) => entries.push(EntrySpec {
                    table: "ipv4_lpm".into(),
                    key,
                    action: "set_nexthop".into(),
                    args: hop(*p),
                    priority: 0,
                }),
                Act::Group(ports) => {
                    let next = groups.len() as u16 + 1;
                    let (g, new) = match groups.get(ports) {
                        Some(&g) => (g, false),
                        None => {
                            groups.insert(ports.clone(), next);
                            (next, true)
                        }
                    };
                    entries.push(EntrySpec {
                        table: "ipv4_lpm".into(),
                        key,
                        action: "set_ecmp".into(),
                        args: vec![Value::Int(g as u64)],
                        priority: 0,
                    });
                    if new {
                        for b in 0..ECMP_BUCKETS {
                            let p = ports[b as usize % ports.len()];
                            entries.push(EntrySpec {
                                table: "ecmp_select".into(),
                                key: vec![
                                    KeySpec::Exact(Value::Int(g as u64)),
                                    KeySpec::Ternary(
                                        Value::Int(b as u64),
                                        Value::Int(ECMP_BUCKETS as u64 - 1),
                                    ),
                                ],
                                action: "set_nexthop".into(),
                                args: hop(p),
                                priority: 0,
                            });
                        }
                    }
                }
            }
        };
        let mut by16: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
        for h in 0..self.host_ips.len() {
            by16.entry(self.host_ips[h] & 0xffff_0000)
                .or_default()
                .push(h);
        }
        for (p16, hs) in by16 {
            let uniform = |hs: &[usize]| hs.iter().all(|&h| acts[h] == acts[hs[0]]);
            if uniform(&hs) {
                if let Some(a) = &acts[hs[0]] {
                    emit(p16, 16, a, &mut entries);
                }
                continue;
            }
            let mut by24: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
            for &h in &hs {
                by24.entry(self.host_ips[h] & 0xffff_ff00)
                    .or_default()
                    .push(h);
            }
            for (p24, hs) in by24 {
                if uniform(&hs) {
                    if let Some(a) = &acts[hs[0]] {
                        emit(p24, 24, a, &mut entries);
                    }
                    continue;
                }
                for h in hs {
                    if let Some(a) = &acts[h] {
                        emit(self.host_ips[h], 32, a, &mut entries);
                    }
                }
            }
        }
        entries
    }

    /// Host-port oversubscription of the first leaf-like chip: host-facing capacity over
    /// chip-facing capacity, for chips that have both (`None` if no chip has both).
    pub fn oversubscription(&self) -> Option<f64> {
        for c in 0..self.spec.chips.len() {
            let (mut down, mut up) = (0u64, 0u64);
            for (&p, &l) in &self.chip_ports[c] {
                match self.peer(l, End::Chip(c, p)) {
                    End::Host(_) => down += self.links[l].gbps as u64,
                    End::Chip(..) => up += self.links[l].gbps as u64,
                }
            }
            if down > 0 && up > 0 {
                return Some(down as f64 / up as f64);
            }
        }
        None
    }
}

/// Buckets of an ECMP group in `stock:ecmp_router` (the low 4 bits of the hash).
pub const ECMP_BUCKETS: u16 = 16;

/// Generate the spec of a common shape. `port_gbps` is the chips' port speed (all ports
/// alike) and `ports` how many each chip has.
pub fn generate(g: &Generate, ports: u16, port_gbps: u32) -> Result<TopologySpec, String> {
    let program = g.program.clone().unwrap_or_else(|| {
        match (g.bfc.is_some(), g.routing) {
            (true, _) => "stock:bfc",
            (false, Routing::Static) => "stock:l3router",
            (false, Routing::Ecmp) => "stock:ecmp_router",
        }
        .to_string()
    });
    let routing = if g.bfc.is_some() {
        Routing::Ecmp
    } else {
        g.routing
    };
    let mut t = TopologySpec {
        chips: Vec::new(),
        hosts: Vec::new(),
        links: Vec::new(),
    };
    let chip = |t: &mut TopologySpec, name: String| {
        t.chips.push(ChipSpec {
            name,
            profile: g.chip.clone(),
            program: program.clone(),
            entries: EntriesSpec::Auto(routing),
            tm: g.tm.clone(),
            bfc: g.bfc.clone(),
        })
    };
    let host = |t: &mut TopologySpec, name: String, ip: [u8; 4]| {
        t.hosts.push(HostSpec {
            name,
            ip: std::net::Ipv4Addr::from(ip).to_string(),
            nic_queues: g.nic_queues,
        })
    };
    let link = |t: &mut TopologySpec, a: String, b: String| {
        t.links.push(LinkSpec {
            a,
            b,
            gbps: port_gbps,
            delay_ns: g.delay_ns,
        })
    };
    let need = |what: &str, n: u32| -> Result<(), String> {
        if n > ports as u32 {
            Err(format!(
                "{what} needs {n} ports per chip but chip profile `{}` has {ports}",
                g.chip
            ))
        } else {
            Ok(())
        }
    };
    match g.shape {
        Shape::SingleSwitch { hosts } => {
            need("SingleSwitch", hosts as u32)?;
            chip(&mut t, "sw0".into());
            for i in 0..hosts {
                host(
                    &mut t,
                    format!("h{i}"),
                    [10, 0, (i / 250) as u8, (i % 250 + 1) as u8],
                );
                link(&mut t, format!("h{i}"), format!("sw0:{i}"));
            }
        }
        Shape::Dumbbell { left, right } => {
            need("Dumbbell", left.max(right) as u32 + 1)?;
            chip(&mut t, "sw0".into());
            chip(&mut t, "sw1".into());
            for i in 0..left {
                host(&mut t, format!("l{i}"), [10, 0, 0, (i + 1) as u8]);
                link(&mut t, format!("l{i}"), format!("sw0:{i}"));
            }
            for i in 0..right {
                host(&mut t, format!("r{i}"), [10, 1, 0, (i + 1) as u8]);
                link(&mut t, format!("r{i}"), format!("sw1:{i}"));
            }
            link(&mut t, format!("sw0:{left}"), format!("sw1:{right}"));
        }
        Shape::LeafSpine {
            leaves,
            spines,
            hosts_per_leaf,
            uplinks_per_spine,
        } => {
            if leaves == 0 || spines == 0 || hosts_per_leaf == 0 || uplinks_per_spine == 0 {
                return Err("LeafSpine: every count must be at least 1".into());
            }
            let u = uplinks_per_spine;
            need(
                "LeafSpine (leaf)",
                hosts_per_leaf as u32 + spines as u32 * u as u32,
            )?;
            need("LeafSpine (spine)", leaves as u32 * u as u32)?;
            for l in 0..leaves {
                chip(&mut t, format!("leaf{l}"));
            }
            for s in 0..spines {
                chip(&mut t, format!("spine{s}"));
            }
            for l in 0..leaves {
                for j in 0..hosts_per_leaf {
                    let n = format!("h{l}_{j}");
                    host(
                        &mut t,
                        n.clone(),
                        [10, l as u8, (j / 250) as u8, (j % 250 + 1) as u8],
                    );
                    link(&mut t, n, format!("leaf{l}:{j}"));
                }
                for s in 0..spines {
                    for k in 0..u {
                        let lp = hosts_per_leaf + s * u + k;
                        link(
                            &mut t,
                            format!("leaf{l}:{lp}"),
                            format!("spine{s}:{}", l * u + k),
                        );
                    }
                }
            }
        }
        Shape::FatTree { k, tiers } => {
            if k < 2 || k % 2 != 0 {
                return Err(format!("FatTree: k = {k} must be even and at least 2"));
            }
            need("FatTree", k as u32)?;
            let h = k / 2;
            match tiers {
                2 => {
                    for l in 0..k {
                        chip(&mut t, format!("leaf{l}"));
                    }
                    for s in 0..h {
                        chip(&mut t, format!("spine{s}"));
                    }
                    for l in 0..k {
                        for j in 0..h {
                            let n = format!("h{l}_{j}");
                            host(&mut t, n.clone(), [10, l as u8, 0, (j + 1) as u8]);
                            link(&mut t, n, format!("leaf{l}:{j}"));
                        }
                        for s in 0..h {
                            link(
                                &mut t,
                                format!("leaf{l}:{}", h + s),
                                format!("spine{s}:{l}"),
                            );
                        }
                    }
                }
                3 => {
                    for p in 0..k {
                        for e in 0..h {
                            chip(&mut t, format!("e{p}_{e}"));
                        }
                        for a in 0..h {
                            chip(&mut t, format!("a{p}_{a}"));
                        }
                    }
                    for c in 0..h * h {
                        chip(&mut t, format!("c{c}"));
                    }
                    for p in 0..k {
                        for e in 0..h {
                            for j in 0..h {
                                let n = format!("h{p}_{e}_{j}");
                                host(&mut t, n.clone(), [10, p as u8, e as u8, (j + 2) as u8]);
                                link(&mut t, n, format!("e{p}_{e}:{j}"));
                            }
                            for a in 0..h {
                                link(
                                    &mut t,
                                    format!("e{p}_{e}:{}", h + a),
                                    format!("a{p}_{a}:{e}"),
                                );
                            }
                        }
                        for a in 0..h {
                            for j in 0..h {
                                link(
                                    &mut t,
                                    format!("a{p}_{a}:{}", h + j),
                                    format!("c{}:{p}", a * h + j),
                                );
                            }
                        }
                    }
                }
                n => return Err(format!("FatTree: tiers = {n} must be 2 or 3")),
            }
        }
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gen(shape: Shape, routing: Routing) -> Topology {
        let g = Generate {
            shape,
            chip: "x".into(),
            routing,
            program: None,
            delay_ns: 100,
            nic_queues: 8,
            tm: None,
            bfc: None,
        };
        Topology::resolve(generate(&g, 64, 10).unwrap()).unwrap()
    }

    #[test]
    fn leaf_spine_has_the_right_counts_paths_and_oversubscription() {
        let t = gen(
            Shape::LeafSpine {
                leaves: 4,
                spines: 2,
                hosts_per_leaf: 8,
                uplinks_per_spine: 1,
            },
            Routing::Static,
        );
        assert_eq!(
            (t.spec.chips.len(), t.spec.hosts.len(), t.links.len()),
            (6, 32, 40)
        );
        assert_eq!(t.oversubscription(), Some(4.0));
        // Same leaf: 2 links; across leaves: 4.
        assert_eq!(t.path(0, 1).unwrap().len(), 2);
        assert_eq!(t.path(0, 8).unwrap().len(), 4);
        assert_eq!(t.spec.hosts[9].ip, "10.1.0.2");
        // Leaf 0 routes: its 8 hosts as /32s? No: they share 10.0.0.0/24 but differ in port,
        // so /32 each; remote leaves' hosts alternate spines: /32 each as well.
        let r = t.routes(0, Routing::Static);
        assert_eq!(r.len(), 32);
        // A spine reaches each leaf through one port: one /16 per leaf.
        let r = t.routes(4, Routing::Static);
        assert_eq!(r.len(), 4);
        assert!(r.iter().all(|e| matches!(e.key[0], KeySpec::Lpm(_, 16))));
    }

    #[test]
    fn ecmp_routes_use_groups_with_buckets() {
        let t = gen(
            Shape::LeafSpine {
                leaves: 2,
                spines: 2,
                hosts_per_leaf: 2,
                uplinks_per_spine: 1,
            },
            Routing::Ecmp,
        );
        let r = t.routes(0, Routing::Ecmp);
        // 2 local /32 + one /16 for leaf 1 to group 1 + 16 bucket entries.
        assert_eq!(r.len(), 2 + 1 + ECMP_BUCKETS as usize);
        assert_eq!(r.iter().filter(|e| e.action == "set_ecmp").count(), 1);
    }

    #[test]
    fn fat_trees_have_the_classic_sizes() {
        let t = gen(Shape::FatTree { k: 4, tiers: 3 }, Routing::Ecmp);
        assert_eq!((t.spec.chips.len(), t.spec.hosts.len()), (20, 16));
        assert_eq!(t.path(0, 15).unwrap().len(), 6);
        let t = gen(Shape::FatTree { k: 4, tiers: 2 }, Routing::Ecmp);
        assert_eq!((t.spec.chips.len(), t.spec.hosts.len()), (6, 8));
        assert_eq!(t.path(0, 7).unwrap().len(), 4);
    }

    #[test]
    fn bad_topologies_are_named() {
        let mut s = generate(
            &Generate {
                shape: Shape::SingleSwitch { hosts: 2 },
                chip: "x".into(),
                routing: Routing::Static,
                program: None,
                delay_ns: 1,
                nic_queues: 8,
                tm: None,
                bfc: None,
            },
            4,
            10,
        )
        .unwrap();
        s.links[1].b = "sw0:0".into();
        assert!(Topology::resolve(s.clone())
            .unwrap_err()
            .contains("port 0 of `sw0` already"));
        s.links[1].b = "sw9:0".into();
        assert!(Topology::resolve(s)
            .unwrap_err()
            .contains("no chip named `sw9`"));
    }
}
