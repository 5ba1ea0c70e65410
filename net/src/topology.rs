//! Topologies: chips, hosts and the links between them, as structure only (what runs on a
//! chip is a deployment's business, not the topology's). Written out in RON, or generated
//! for the common shapes by [`crate::shapes`].
//!
//! ## Explicit topology (RON)
//! ```ron
//! (
//!     chips: [
//!         (name: "sw0", profile: "teaching", role: Some(Tor)),
//!     ],
//!     hosts: [
//!         (name: "h0", ip: "10.0.0.1"),
//!         (name: "h1", ip: "10.0.0.2"),
//!     ],
//!     links: [
//!         // A link joins two ends: a host name, or `chip:port`. `gbps` is the speed both
//!         // ends run at (the chip port is brought up at it; the host NIC's rate);
//!         // `delay_ns` is propagation delay.
//!         (a: "h0", b: "sw0:0", gbps: 10, delay_ns: 1000),
//!         (a: "h1", b: "sw0:1", gbps: 10, delay_ns: 1000),
//!     ],
//! )
//! ```
//! `profile` is a built-in chip profile or a profile file (relative to the scenario);
//! `role` (optional) is what per-role settings select.
//!
//! Addresses: a host's MAC is `02:00:<ip>`, chip `c`'s port `p` is
//! `02:fe:<c hi, lo>:<p hi, lo>` ([`host_mac`], [`chip_mac`]). Paths are shortest paths in
//! links that never cross a host ([`Topology::next_hops`], [`Topology::path`]); `routes`
//! set a chip's port to a host by hand over them (the generated routes follow them; a
//! flow's ideal path, for its slowdown, stays the shortest).

use pipelines::time::Time;
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
    /// Routes set by hand over the generated ones (a misconfigured table, a rerouted flow:
    /// the routing loops of Pyrrha's §VII). Generated shapes have none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub routes: Vec<RouteSpec>,
}

/// A route set by hand: chip `chip` sends packets to host `dst` out of `port`, whatever
/// the shortest paths say.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RouteSpec {
    /// The chip's name.
    pub chip: String,
    /// The destination host's name.
    pub dst: String,
    /// The chip's port (one with a link).
    pub port: u16,
}

/// One switch chip.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChipSpec {
    /// Node name (unique among chips and hosts).
    pub name: String,
    /// Built-in profile name or profile file.
    pub profile: String,
    /// Where the chip stands in the network (generated shapes set it).
    #[serde(default)]
    pub role: Option<Role>,
}

/// Where a chip stands in a Clos-like network: what per-role settings select.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Role {
    /// A top-of-rack switch: the hosts' first hop (a leaf, an edge switch, the switches of
    /// the single-switch and dumbbell shapes).
    #[serde(alias = "Leaf", alias = "Edge")]
    Tor,
    /// A spine of a leaf-spine or two-tier fat tree.
    Spine,
    /// An aggregation switch of a three-tier fat tree.
    Agg,
    /// A core switch of a three-tier fat tree.
    Core,
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
    /// The routes set by hand: (chip, host) → port.
    pub pinned: BTreeMap<(usize, usize), u16>,
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
            let delay = Time::from_input_ns(l.delay_ns, &format!("{place}: delay_ns"))?;
            links.push(Link {
                a,
                b,
                gbps: l.gbps,
                delay_ps: delay.ps(),
            });
        }
        if let Some(h) = host_link.iter().position(|&l| l == usize::MAX) {
            return Err(format!("host `{}` has no link", spec.hosts[h].name));
        }
        let mut pinned = BTreeMap::new();
        for (i, r) in spec.routes.iter().enumerate() {
            let place = format!("routes[{i}] ({} to {})", r.chip, r.dst);
            let Some(&End::Chip(c, _)) = names.get(r.chip.as_str()) else {
                return Err(format!("{place}: chip: no chip named `{}`", r.chip));
            };
            let Some(&End::Host(h)) = names.get(r.dst.as_str()) else {
                return Err(format!("{place}: dst: no host named `{}`", r.dst));
            };
            if !chip_ports[c].contains_key(&r.port) {
                return Err(format!(
                    "{place}: port: `{}` has no link on port {}",
                    r.chip, r.port
                ));
            }
            if pinned.insert((c, h), r.port).is_some() {
                return Err(format!(
                    "{place}: a second route of `{}` to `{}`",
                    r.chip, r.dst
                ));
            }
        }
        Ok(Topology {
            spec,
            host_ips,
            links,
            chip_ports,
            host_link,
            pinned,
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
