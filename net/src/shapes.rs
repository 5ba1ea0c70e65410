//! Generated topologies: the common shapes of datacenter networks, with a role for each chip
//! and a speed for each link.
//!
//! - `SingleSwitch(hosts: N)`: one chip `sw0`, hosts `h0..` on ports `0..N`, host `i` at
//!   10.0.(i / 250).(i mod 250 + 1).
//! - `Dumbbell(left: L, right: R)`: chips `sw0` (hosts `l0..` on ports 0..L, 10.0.0.(i+1)) and
//!   `sw1` (hosts `r0..`, 10.1.0.(i+1)) joined by one link from port L of `sw0` to port R of
//!   `sw1`: the bottleneck when hosts send across. Both are ToRs.
//! - `LeafSpine(leaves, spines, hosts_per_leaf, uplinks_per_spine)`: leaf `leafI` (a ToR)
//!   has its hosts `hI_J` on ports `0..hosts_per_leaf` (10.I.0.(J+1)) and
//!   `uplinks_per_spine` links to each spine on the following ports (spine-major); spine
//!   `spineS` has port `I·u + k` to leaf I's k-th link. Oversubscription = host capacity /
//!   uplink capacity of a leaf ([`crate::topology::Topology::oversubscription`]).
//! - `FatTree(k, tiers: 2)`: a two-tier folded Clos of k-port chips: k leaves (`leafI`) with
//!   k/2 hosts and one link to each of k/2 spines. `tiers: 3`: the k-ary fat tree of Al-Fares
//!   et al. (SIGCOMM 2008): k pods of k/2 edge (`eP_E`, ToRs) and k/2 aggregation (`aP_A`)
//!   chips, (k/2)² cores (`cI`); host `hP_E_H` is 10.P.E.(H+2); edge port H < k/2 goes to
//!   host H, edge port k/2 + A to aggregation A; aggregation port E to edge E, port k/2 + j
//!   to core A·k/2 + j; core port P to pod P.
//!
//!   `uplinks: Some(u)` (1 ≤ u ≤ k/2) populates only u of each chip's k/2 uplink ports, for
//!   an oversubscribed tree of k/2 : u at each tier: leaf (or edge) `I` links to spine (or
//!   aggregation) `(I + j) mod k/2` for j < u, and aggregation `A` of pod `P` to core
//!   `A·k/2 + (P + j) mod k/2`, so every upper chip keeps an equal share of the links and the
//!   tree stays connected. Port numbers are those of the full tree; the others stay dark.
//!
//! Link speeds: a host link runs at `host_gbps`, a link between chips at `fabric_gbps`;
//! where absent, at the speed both ends' ports support (the lower of the two profile speeds;
//! a host takes its port's). So a profile with 100G and 400G port groups, or an explicit
//! `host_gbps: Some(100)` with `fabric_gbps: Some(400)`, gives 100G hosts under 400G
//! uplinks; ports run below their profile speed are brought up at the link's speed by the
//! deployment. Every link has the scenario's `delay_ns`.
//!
//! Profiles: `chip` for every switch, or `role_chips` per role (e.g. `{Core: "big.ron"}`).

use crate::topology::{ChipSpec, HostSpec, LinkSpec, Role, TopologySpec};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

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
        /// Uplinks populated per chip (all k/2 if absent).
        #[serde(default)]
        uplinks: Option<u16>,
    },
}

fn one() -> u16 {
    1
}

impl Shape {
    /// The roles of the chips this shape generates.
    pub fn roles(&self) -> &'static [Role] {
        match self {
            Shape::SingleSwitch { .. } | Shape::Dumbbell { .. } => &[Role::Tor],
            Shape::LeafSpine { .. } | Shape::FatTree { tiers: 2, .. } => &[Role::Tor, Role::Spine],
            Shape::FatTree { .. } => &[Role::Tor, Role::Agg, Role::Core],
        }
    }
}

/// A generated topology's parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Generate {
    /// The shape.
    pub shape: Shape,
    /// Chip profile of every switch (but those `role_chips` names).
    pub chip: String,
    /// Chip profile per role, where it differs from `chip`.
    #[serde(default)]
    pub role_chips: BTreeMap<Role, String>,
    /// Propagation delay of every link (ns).
    #[serde(default = "default_delay")]
    pub delay_ns: u64,
    /// NIC queues per host.
    #[serde(default = "default_queues")]
    pub nic_queues: u16,
    /// Speed of host links (Gb/s); the port's speed if absent.
    #[serde(default)]
    pub host_gbps: Option<u32>,
    /// Speed of links between chips (Gb/s); the slower port's speed if absent.
    #[serde(default)]
    pub fabric_gbps: Option<u32>,
}

fn default_delay() -> u64 {
    1000
}

fn default_queues() -> u16 {
    8
}

impl Generate {
    /// `shape` of `chip` switches, with the defaults a scenario gets (1 µs links, 8 NIC
    /// queues, links at the ports' speeds).
    pub fn new(shape: Shape, chip: &str) -> Generate {
        Generate {
            shape,
            chip: chip.to_string(),
            role_chips: BTreeMap::new(),
            delay_ns: default_delay(),
            nic_queues: default_queues(),
            host_gbps: None,
            fabric_gbps: None,
        }
    }

    /// Every role's chips with `ports` front-panel ports of `gbps` (for generating without
    /// loading profiles).
    pub fn uniform_ports(&self, ports: usize, gbps: u32) -> RolePorts {
        self.shape
            .roles()
            .iter()
            .map(|&r| (r, vec![gbps; ports]))
            .collect()
    }

    /// The profile the chips of `role` run.
    pub fn profile_of(&self, role: Role) -> &str {
        self.role_chips.get(&role).unwrap_or(&self.chip)
    }
}

/// The front-panel port speeds (Gb/s, by port number) of each role's profile.
pub type RolePorts = BTreeMap<Role, Vec<u32>>;

/// The spec being generated, and where to look up port speeds.
struct Builder<'a> {
    g: &'a Generate,
    ports: &'a RolePorts,
    spec: TopologySpec,
    roles: BTreeMap<String, Role>,
}

impl Builder<'_> {
    fn speeds(&self, role: Role) -> &[u32] {
        self.ports.get(&role).map_or(&[], Vec::as_slice)
    }

    /// Every chip of `role` needs `n` ports.
    fn need(&self, what: &str, role: Role, n: u32) -> Result<(), String> {
        let have = self.speeds(role).len() as u32;
        if n > have {
            return Err(format!(
                "{what} needs {n} ports per chip but chip profile `{}` has {have}",
                self.g.profile_of(role)
            ));
        }
        Ok(())
    }

    fn chip(&mut self, name: String, role: Role) {
        self.roles.insert(name.clone(), role);
        self.spec.chips.push(ChipSpec {
            name,
            profile: self.g.profile_of(role).to_string(),
            role: Some(role),
        });
    }

    fn host(&mut self, name: String, ip: [u8; 4]) {
        self.spec.hosts.push(HostSpec {
            name,
            ip: std::net::Ipv4Addr::from(ip).to_string(),
            nic_queues: self.g.nic_queues,
        });
    }

    /// The profile speed of `chip`'s port `port`.
    fn port_speed(&self, chip: &str, port: u16) -> u32 {
        self.speeds(self.roles[chip])[port as usize]
    }

    /// A link from host `host` to `chip:port`.
    fn host_link(&mut self, host: String, chip: &str, port: u16) {
        let gbps = self
            .g
            .host_gbps
            .unwrap_or_else(|| self.port_speed(chip, port));
        self.link(host, format!("{chip}:{port}"), gbps);
    }

    /// A link between two chip ports.
    fn fabric_link(&mut self, a: (&str, u16), b: (&str, u16)) {
        let gbps = self
            .g
            .fabric_gbps
            .unwrap_or_else(|| self.port_speed(a.0, a.1).min(self.port_speed(b.0, b.1)));
        self.link(format!("{}:{}", a.0, a.1), format!("{}:{}", b.0, b.1), gbps);
    }

    fn link(&mut self, a: String, b: String, gbps: u32) {
        self.spec.links.push(LinkSpec {
            a,
            b,
            gbps,
            delay_ns: self.g.delay_ns,
        });
    }
}

/// Generate the spec of a common shape; `ports` holds the port speeds of every role in
/// [`Shape::roles`].
pub fn generate(g: &Generate, ports: &RolePorts) -> Result<TopologySpec, String> {
    let mut b = Builder {
        g,
        ports,
        spec: TopologySpec {
            chips: Vec::new(),
            hosts: Vec::new(),
            links: Vec::new(),
            routes: Vec::new(),
        },
        roles: BTreeMap::new(),
    };
    match g.shape {
        Shape::SingleSwitch { hosts } => {
            b.need("SingleSwitch", Role::Tor, hosts as u32)?;
            b.chip("sw0".into(), Role::Tor);
            for i in 0..hosts {
                b.host(
                    format!("h{i}"),
                    [10, 0, (i / 250) as u8, (i % 250 + 1) as u8],
                );
                b.host_link(format!("h{i}"), "sw0", i);
            }
        }
        Shape::Dumbbell { left, right } => {
            b.need("Dumbbell", Role::Tor, left.max(right) as u32 + 1)?;
            b.chip("sw0".into(), Role::Tor);
            b.chip("sw1".into(), Role::Tor);
            for i in 0..left {
                b.host(format!("l{i}"), [10, 0, 0, (i + 1) as u8]);
                b.host_link(format!("l{i}"), "sw0", i);
            }
            for i in 0..right {
                b.host(format!("r{i}"), [10, 1, 0, (i + 1) as u8]);
                b.host_link(format!("r{i}"), "sw1", i);
            }
            b.fabric_link(("sw0", left), ("sw1", right));
        }
        Shape::LeafSpine {
            leaves,
            spines,
            hosts_per_leaf,
            uplinks_per_spine,
        } => leaf_spine(&mut b, leaves, spines, hosts_per_leaf, uplinks_per_spine)?,
        Shape::FatTree { k, tiers, uplinks } => {
            if k < 2 || k % 2 != 0 {
                return Err(format!("FatTree: k = {k} must be even and at least 2"));
            }
            let h = k / 2;
            let u = uplinks.unwrap_or(h);
            if u == 0 || u > h {
                return Err(format!(
                    "FatTree: uplinks = {u} must be from 1 to k/2 = {h}"
                ));
            }
            for &role in g.shape.roles() {
                b.need("FatTree", role, k as u32)?;
            }
            match tiers {
                2 => fat_tree_2(&mut b, k, u),
                3 => fat_tree_3(&mut b, k, u),
                n => return Err(format!("FatTree: tiers = {n} must be 2 or 3")),
            }
        }
    }
    Ok(b.spec)
}

fn leaf_spine(
    b: &mut Builder,
    leaves: u16,
    spines: u16,
    hosts_per_leaf: u16,
    u: u16,
) -> Result<(), String> {
    if leaves == 0 || spines == 0 || hosts_per_leaf == 0 || u == 0 {
        return Err("LeafSpine: every count must be at least 1".into());
    }
    b.need(
        "LeafSpine (leaf)",
        Role::Tor,
        hosts_per_leaf as u32 + spines as u32 * u as u32,
    )?;
    b.need("LeafSpine (spine)", Role::Spine, leaves as u32 * u as u32)?;
    two_tier(b, leaves, spines, hosts_per_leaf, u, |_| 0..spines);
    Ok(())
}

/// Leaves `leafL` with hosts `hL_J` on their first ports (10.L.J/250.(J%250 + 1)) and `u`
/// parallel links to each spine `spineS` that `spines_of(L)` names, on the following ports
/// (spine-major); spine port `L·u + k` takes leaf L's k-th link.
fn two_tier<I: Iterator<Item = u16>>(
    b: &mut Builder,
    leaves: u16,
    spines: u16,
    hosts_per_leaf: u16,
    u: u16,
    spines_of: impl Fn(u16) -> I,
) {
    for l in 0..leaves {
        b.chip(format!("leaf{l}"), Role::Tor);
    }
    for s in 0..spines {
        b.chip(format!("spine{s}"), Role::Spine);
    }
    for l in 0..leaves {
        let leaf = format!("leaf{l}");
        for j in 0..hosts_per_leaf {
            let n = format!("h{l}_{j}");
            b.host(
                n.clone(),
                [10, l as u8, (j / 250) as u8, (j % 250 + 1) as u8],
            );
            b.host_link(n, &leaf, j);
        }
        for s in spines_of(l) {
            for k in 0..u {
                let lp = hosts_per_leaf + s * u + k;
                b.fabric_link((&leaf, lp), (&format!("spine{s}"), l * u + k));
            }
        }
    }
}

/// The `u` of `h` uplinks chip number `i` populates: `(i + j) mod h` for `j < u`, in
/// ascending order (the full tree's order when `u = h`).
fn populated(i: u16, h: u16, u: u16) -> impl Iterator<Item = u16> {
    (0..h).filter(move |&x| (x + h - i % h) % h < u)
}

/// Two tiers: k leaves of k/2 hosts, k/2 spines; leaf `l` links to spines `(l + j) mod k/2`
/// for `j < u`.
fn fat_tree_2(b: &mut Builder, k: u16, u: u16) {
    let h = k / 2;
    two_tier(b, k, h, h, 1, |l| populated(l, h, u));
}

/// Three tiers (Al-Fares et al.): edge `e` of a pod links to aggregations `(e + j) mod k/2`,
/// aggregation `a` of pod `p` to cores `a·k/2 + (p + j) mod k/2`, for `j < u`.
fn fat_tree_3(b: &mut Builder, k: u16, u: u16) {
    let h = k / 2;
    for p in 0..k {
        for e in 0..h {
            b.chip(format!("e{p}_{e}"), Role::Tor);
        }
        for a in 0..h {
            b.chip(format!("a{p}_{a}"), Role::Agg);
        }
    }
    for c in 0..h * h {
        b.chip(format!("c{c}"), Role::Core);
    }
    for p in 0..k {
        for e in 0..h {
            let edge = format!("e{p}_{e}");
            for j in 0..h {
                let n = format!("h{p}_{e}_{j}");
                b.host(n.clone(), [10, p as u8, e as u8, (j + 2) as u8]);
                b.host_link(n, &edge, j);
            }
            for a in populated(e, h, u) {
                b.fabric_link((&edge, h + a), (&format!("a{p}_{a}"), e));
            }
        }
        for a in 0..h {
            for c in populated(p, h, u) {
                b.fabric_link(
                    (&format!("a{p}_{a}"), h + c),
                    (&format!("c{}", a * h + c), p),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::Topology;

    fn gen(shape: Shape) -> Topology {
        let g = Generate::new(shape, "x");
        Topology::resolve(generate(&g, &g.uniform_ports(64, 10)).unwrap()).unwrap()
    }

    #[test]
    fn leaf_spine_has_the_right_counts_paths_and_oversubscription() {
        let t = gen(Shape::LeafSpine {
            leaves: 4,
            spines: 2,
            hosts_per_leaf: 8,
            uplinks_per_spine: 1,
        });
        assert_eq!(
            (t.spec.chips.len(), t.spec.hosts.len(), t.links.len()),
            (6, 32, 40)
        );
        assert_eq!(t.oversubscription(), Some(4.0));
        // Same leaf: 2 links; across leaves: 4.
        assert_eq!(t.path(0, 1).unwrap().len(), 2);
        assert_eq!(t.path(0, 8).unwrap().len(), 4);
        assert_eq!(t.spec.hosts[9].ip, "10.1.0.2");
        assert_eq!(t.spec.chips[0].role, Some(Role::Tor));
        assert_eq!(t.spec.chips[5].role, Some(Role::Spine));
    }

    #[test]
    fn fat_trees_have_the_classic_sizes() {
        let t = gen(Shape::FatTree {
            k: 4,
            tiers: 3,
            uplinks: None,
        });
        assert_eq!((t.spec.chips.len(), t.spec.hosts.len()), (20, 16));
        assert_eq!(t.path(0, 15).unwrap().len(), 6);
        let t = gen(Shape::FatTree {
            k: 4,
            tiers: 2,
            uplinks: None,
        });
        assert_eq!((t.spec.chips.len(), t.spec.hosts.len()), (6, 8));
        assert_eq!(t.path(0, 7).unwrap().len(), 4);
    }

    /// Half the uplinks of a k = 8 three-tier tree (CaPFC's 128 servers and 80 switches):
    /// 2:1 at the edge and at aggregation, every core with 4 of its 8 ports, connected.
    #[test]
    fn a_fat_tree_with_half_its_uplinks_is_oversubscribed_evenly() {
        let t = gen(Shape::FatTree {
            k: 8,
            tiers: 3,
            uplinks: Some(2),
        });
        assert_eq!((t.spec.chips.len(), t.spec.hosts.len()), (80, 128));
        assert_eq!(t.oversubscription(), Some(2.0));
        let tiers = t.chip_tiers();
        for (c, chip) in t.spec.chips.iter().enumerate() {
            let links = t.chip_ports[c].len();
            let want = match chip.role.unwrap() {
                Role::Tor => 4 + 2,
                Role::Agg => 2 + 2,
                Role::Core => 4,
                Role::Spine => unreachable!(),
            };
            assert_eq!(links, want, "{}", chip.name);
            assert_ne!(tiers[c], u32::MAX, "{} unreachable", chip.name);
        }
        assert!(t.path(0, 127).is_some());
    }

    #[test]
    fn link_speeds_follow_the_ports_unless_set() {
        // Leaves with 4 x 100G then 2 x 400G ports, spines of 400G.
        let mut g = Generate::new(
            Shape::LeafSpine {
                leaves: 2,
                spines: 2,
                hosts_per_leaf: 4,
                uplinks_per_spine: 1,
            },
            "x",
        );
        let mut ports = RolePorts::new();
        ports.insert(Role::Tor, vec![100, 100, 100, 100, 400, 400]);
        ports.insert(Role::Spine, vec![400; 4]);
        let t = Topology::resolve(generate(&g, &ports).unwrap()).unwrap();
        let speeds = |t: &Topology| -> (Vec<u32>, Vec<u32>) {
            let (mut host, mut fabric) = (Vec::new(), Vec::new());
            for l in &t.links {
                match (l.a, l.b) {
                    (crate::topology::End::Host(_), _) | (_, crate::topology::End::Host(_)) => {
                        host.push(l.gbps)
                    }
                    _ => fabric.push(l.gbps),
                }
            }
            (host, fabric)
        };
        let (host, fabric) = speeds(&t);
        assert!(host.iter().all(|&g| g == 100) && host.len() == 8);
        assert!(fabric.iter().all(|&g| g == 400) && fabric.len() == 4);
        assert_eq!(t.oversubscription(), Some(0.5));
        g.host_gbps = Some(25);
        g.fabric_gbps = Some(100);
        let (host, fabric) = speeds(&Topology::resolve(generate(&g, &ports).unwrap()).unwrap());
        assert!(host.iter().all(|&g| g == 25));
        assert!(fabric.iter().all(|&g| g == 100));
    }

    #[test]
    fn bad_shapes_are_named() {
        let g = Generate::new(
            Shape::FatTree {
                k: 4,
                tiers: 3,
                uplinks: Some(3),
            },
            "x",
        );
        assert_eq!(
            generate(&g, &g.uniform_ports(4, 10)).unwrap_err(),
            "FatTree: uplinks = 3 must be from 1 to k/2 = 2"
        );
        let g = Generate::new(Shape::SingleSwitch { hosts: 5 }, "x");
        assert_eq!(
            generate(&g, &g.uniform_ports(4, 10)).unwrap_err(),
            "SingleSwitch needs 5 ports per chip but chip profile `x` has 4"
        );
    }

    #[test]
    fn bad_topologies_are_named() {
        let g = Generate::new(Shape::SingleSwitch { hosts: 2 }, "x");
        let mut s = generate(&g, &g.uniform_ports(4, 10)).unwrap();
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
