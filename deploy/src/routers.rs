//! The stock routers: LPM routing to one next hop (`programs/l3router`) or to ECMP groups
//! whose member the program picks by a CRC16 hash of the 5-tuple (`programs/ecmp_router`),
//! with routes generated from the topology. BFC's program routes the same way and takes its
//! routes from here.
//!
//! ## Routes
//! For each chip and each host, the next hops are the chip's ports on a shortest path (fewest
//! links; paths never go through hosts). `Static` picks one of them by the destination: the
//! chip's tier's digit of the host index in base `n` choices (a ToR: index mod n, so
//! destinations spread over spines; an aggregation switch the next digit). `Ecmp` installs
//! a group of all of them in `ecmp_select`, buckets keyed by bits of the program's 16-bit hash
//! from bit `4·tier` up (a ToR bits 4 up; [`ecmp_shift`]): if every tier read the same bits, a
//! flow's choice at one tier would fix its choice at the next, and in a three-tier fat tree
//! each aggregation switch would use one core of its k/2. A group whose size divides 16 has
//! 16 buckets (4 bits), any other 256 (8 bits; [`ecmp_buckets`]), so that members share the
//! hash evenly: three spines on 16 buckets would get 6:5:5 (37.5 % on one), on 256 86:85:85
//! (33.6 %). A real Tofino picks a selector group's member by the hash among its members;
//! the bucket entries are this model's way of writing that as a table. Routes are
//! aggregated: one `ipv4_lpm` entry for a /16 or a /24 whose hosts all share the same next
//! hop(s), else one /32 per host. An entry sets the egress port, the next hop's MAC (the
//! peer's: host `02:00:<ip>`, chip port `02:fe:<chip hi, lo>:<port hi, lo>`) and the source
//! MAC (the chip port's).

use crate::{ChipContext, ChipDeployment, Deployment, Embedded};
use asic_model::chip::ChipConfig;
use asic_model::profile::ChipProfile;
use asic_net::packet::ip_string;
use asic_net::topology::{chip_mac, End, Topology};
use pipelines::entries::{EntrySpec, KeySpec, Value};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How generated routes choose among equal-cost next hops.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Routing {
    /// One next hop per destination (`programs/l3router`).
    #[default]
    Static,
    /// ECMP groups, member chosen by the program's hash (`programs/ecmp_router`).
    Ecmp,
}

/// `programs/l3router`.
pub const L3ROUTER: Embedded = Embedded {
    file: "programs/l3router/l3router.p4",
    source: include_str!("../../programs/l3router/l3router.p4"),
};

/// `programs/ecmp_router`.
pub const ECMP_ROUTER: Embedded = Embedded {
    file: "programs/ecmp_router/ecmp_router.p4",
    source: include_str!("../../programs/ecmp_router/ecmp_router.p4"),
};

/// Buckets of an ECMP group of `members` next hops in `ecmp_select`: 16 (4 bits of the hash)
/// when they split them evenly, else 256 (8 bits), where no member gets more than
/// 1/members + 1/256 of the flows.
pub fn ecmp_buckets(members: usize) -> u16 {
    if 16 % members == 0 {
        16
    } else {
        256
    }
}

impl Deployment for Routing {
    fn program(&self) -> Option<Embedded> {
        Some(match self {
            Routing::Static => L3ROUTER,
            Routing::Ecmp => ECMP_ROUTER,
        })
    }

    fn check(&self, _profile: &ChipProfile) -> Result<(), String> {
        Ok(())
    }

    fn routing(&self) -> Option<Routing> {
        Some(*self)
    }

    fn deploy(&self, chip: &ChipContext, config: ChipConfig) -> Result<ChipDeployment, String> {
        Ok(ChipDeployment {
            entries: routes(chip.topology, chip.chip, *self),
            control: Vec::new(),
            config,
            agents: Vec::new(),
        })
    }
}

fn mac_string(m: [u8; 6]) -> String {
    m.iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// Which of `n` equal next hops a chip of `tier` takes towards host `h` with static routing:
/// the tier's digit of `h` in base `n` (the ToRs' is `h mod n`).
fn static_choice(h: usize, n: usize, tier: u32) -> usize {
    n.checked_pow(tier - 1).map_or(0, |d| h / d) % n
}

/// Where in the program's 16-bit hash a chip of `tier` reads the `bits` of its ECMP bucket:
/// from bit `4·tier` (ToRs from bit 4, aggregation switches from 8), so each tier's choice of
/// a power-of-two group's member is its own function of the 5-tuple; an 8-bit bucket that
/// would run past bit 15 starts at bit 8. Not the low four bits: over the 5-tuples between two
/// /24s with one protocol and destination port, the low four bits of CRC-16/ARC take only two
/// values (every other nibble takes all sixteen evenly), so a ToR reading them would use two
/// of its uplinks for all the traffic to one rack.
fn ecmp_shift(tier: u32, bits: u32) -> u32 {
    (4 * (tier % 4)).min(16 - bits)
}

/// What chip `c`'s generated routes do with a packet to each host: one next hop, or an ECMP
/// group whose member a bucket of the flow hash picks (the same choice the entries encode,
/// so [`ChipRoutes::port`] is what the program will do; `crate::paths` chains it over
/// the network).
#[derive(Clone, Debug)]
pub struct ChipRoutes {
    /// The chip's tier (1 for a ToR): which bits of the hash its buckets read.
    tier: u32,
    /// Per host: none (unreachable, or the chip has no route), one port, or a group.
    acts: Vec<Option<Act>>,
}

/// A route's action, as a sortable key (routes aggregate hosts with equal ones).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Act {
    Hop(u16),
    Group(Vec<u16>),
}

impl ChipRoutes {
    /// Chip `c`'s routes in `topo` under `routing`.
    pub fn new(topo: &Topology, c: usize, routing: Routing) -> ChipRoutes {
        // Per host: chip c's distance to it and its next hops there.
        let towards: Vec<(u32, Vec<u16>)> = (0..topo.spec.hosts.len())
            .map(|h| {
                let dist = topo.chip_distances(h);
                (dist[c], topo.next_hops(c, h, &dist))
            })
            .collect();
        // The chip's tier (1 for a ToR) picks what its choice among equal next hops looks
        // at, so the tiers of a Clos do not all make the same choice (ECMP polarization,
        // where every aggregation switch would send to one core in k/2).
        let tier = towards.iter().map(|t| t.0).min().unwrap_or(1).max(1);
        let acts = towards
            .into_iter()
            .enumerate()
            .map(|(h, (_, hops))| {
                if let Some(&p) = topo.pinned.get(&(c, h)) {
                    return Some(Act::Hop(p));
                }
                match (hops.len(), routing) {
                    (0, _) => None,
                    (1, _) => Some(Act::Hop(hops[0])),
                    (n, Routing::Static) => Some(Act::Hop(hops[static_choice(h, n, tier)])),
                    (_, Routing::Ecmp) => Some(Act::Group(hops)),
                }
            })
            .collect();
        ChipRoutes { tier, acts }
    }

    /// The port a packet to host `h` whose 5-tuple hashes to `hash` (CRC-16/ARC, as the
    /// program's `Hash<bit<16>>(CRC16)`) leaves by; `None` if the chip has no route to `h`.
    pub fn port(&self, h: usize, hash: u16) -> Option<u16> {
        match self.acts.get(h)?.as_ref()? {
            Act::Hop(p) => Some(*p),
            Act::Group(ports) => {
                let (buckets, shift) = group_buckets(self.tier, ports.len());
                let b = (hash >> shift) & (buckets - 1);
                Some(ports[b as usize % ports.len()])
            }
        }
    }

    /// Every choice the chip makes for a packet to host `h`: (hash value, hash mask, port),
    /// a packet whose hash ANDed with the mask equals the value leaving by the port (one
    /// choice with mask 0 for a single next hop; one per bucket for an ECMP group, as
    /// `ecmp_select`'s entries); empty if there is no route.
    pub fn choices(&self, h: usize) -> Vec<(u16, u16, u16)> {
        match self.acts.get(h).and_then(Option::as_ref) {
            None => Vec::new(),
            Some(Act::Hop(p)) => vec![(0, 0, *p)],
            Some(Act::Group(ports)) => group_choices(self.tier, ports),
        }
    }

    /// The ports a packet to host `h` may leave by (several for an ECMP group).
    pub fn ports(&self, h: usize) -> &[u16] {
        match self.acts.get(h).and_then(Option::as_ref) {
            None => &[],
            Some(Act::Hop(p)) => std::slice::from_ref(p),
            Some(Act::Group(ports)) => ports,
        }
    }
}

/// How a chip of `tier` reads an ECMP group of `members`: [`ecmp_buckets`] buckets, read
/// from bit [`ecmp_shift`] of the flow hash.
fn group_buckets(tier: u32, members: usize) -> (u16, u32) {
    let buckets = ecmp_buckets(members);
    (buckets, ecmp_shift(tier, buckets.trailing_zeros()))
}

/// The buckets of an ECMP group of `ports` on a chip of `tier`: (hash value, hash mask,
/// member), the members dealt round-robin over the buckets ([`group_buckets`]).
fn group_choices(tier: u32, ports: &[u16]) -> Vec<(u16, u16, u16)> {
    let (buckets, shift) = group_buckets(tier, ports.len());
    (0..buckets)
        .map(|b| {
            (
                b << shift,
                (buckets - 1) << shift,
                ports[b as usize % ports.len()],
            )
        })
        .collect()
}

/// The route entries of chip `c` (see the module documentation).
pub fn routes(topo: &Topology, c: usize, routing: Routing) -> Vec<EntrySpec> {
    route_entries(topo, c, &ChipRoutes::new(topo, c, routing))
}

/// [`routes`] from chip `c`'s routes as worked out already (a path oracle's).
pub fn route_entries(topo: &Topology, c: usize, routes: &ChipRoutes) -> Vec<EntrySpec> {
    let ChipRoutes { tier, acts } = routes;
    let tier = *tier;
    // Aggregated by /16, then /24, else /32 ([`by_prefix`]).
    let mut entries = Vec::new();
    let mut groups: BTreeMap<Vec<u16>, u16> = BTreeMap::new();
    let mut emit = |prefix: u32, len: u16, a: &Act, entries: &mut Vec<EntrySpec>| {
        let hop = |p: u16| {
            let l = topo.chip_ports[c][&p];
            vec![
                Value::Int(p as u64),
                Value::Text(mac_string(topo.mac(topo.peer(l, End::Chip(c, p))))),
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
                    for (value, mask, p) in group_choices(tier, ports) {
                        entries.push(EntrySpec {
                            table: "ecmp_select".into(),
                            key: vec![
                                KeySpec::Exact(Value::Int(g as u64)),
                                KeySpec::Ternary(Value::Int(value as u64), Value::Int(mask as u64)),
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
    let per_host: Vec<(u32, &Option<Act>)> = topo.host_ips.iter().copied().zip(acts).collect();
    for (prefix, len, act) in by_prefix(&per_host) {
        if let Some(a) = act {
            emit(prefix, len, a, &mut entries);
        }
    }
    entries
}

/// Destinations aggregated by address prefix, as routes are written: `items` (an address
/// and what it needs) as (prefix, length, what): a /16 whose items all need the same as one
/// prefix, else each of its /24s likewise, else each address alone; /16s and /24s in
/// address order, addresses in the order given.
pub fn by_prefix<T: PartialEq>(items: &[(u32, T)]) -> Vec<(u32, u16, &T)> {
    let mut out = Vec::new();
    let mut by16: BTreeMap<u32, Vec<&(u32, T)>> = BTreeMap::new();
    for item in items {
        by16.entry(item.0 & 0xffff_0000).or_default().push(item);
    }
    let uniform = |group: &[&(u32, T)]| group.iter().all(|i| i.1 == group[0].1);
    for (p16, group) in by16 {
        if uniform(&group) {
            out.push((p16, 16, &group[0].1));
            continue;
        }
        let mut by24: BTreeMap<u32, Vec<&(u32, T)>> = BTreeMap::new();
        for item in group {
            by24.entry(item.0 & 0xffff_ff00).or_default().push(item);
        }
        for (p24, group) in by24 {
            if uniform(&group) {
                out.push((p24, 24, &group[0].1));
            } else {
                out.extend(group.iter().map(|i| (i.0, 32, &i.1)));
            }
        }
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use asic_net::shapes::{generate, Generate, Shape};

    /// A generated leaf-spine of 64-port 100G chips, one link from each leaf to each
    /// spine (the deployments' tests build their networks with it).
    pub(crate) fn leaf_spine(leaves: u16, spines: u16, hosts: u16) -> Topology {
        let shape = Shape::LeafSpine {
            leaves,
            spines,
            hosts_per_leaf: hosts,
            uplinks_per_spine: 1,
        };
        let g = Generate::new(shape, "x");
        Topology::resolve(generate(&g, &g.uniform_ports(64, 100)).unwrap()).unwrap()
    }

    #[test]
    fn static_routes_aggregate_by_prefix() {
        let t = leaf_spine(4, 2, 8);
        // Leaf 0's hosts share 10.0.0.0/24 but differ in port: a /32 each; remote leaves'
        // hosts alternate spines: /32 each as well.
        assert_eq!(routes(&t, 0, Routing::Static).len(), 32);
        // A spine reaches each leaf through one port: one /16 per leaf.
        let r = routes(&t, 4, Routing::Static);
        assert_eq!(r.len(), 4);
        assert!(r.iter().all(|e| matches!(e.key[0], KeySpec::Lpm(_, 16))));
    }

    #[test]
    fn ecmp_routes_use_groups_with_buckets() {
        let t = leaf_spine(2, 2, 2);
        let r = routes(&t, 0, Routing::Ecmp);
        // 2 local /32 + one /16 for leaf 1 to group 1 + 16 bucket entries.
        assert_eq!(r.len(), 2 + 1 + 16);
        assert_eq!(r.iter().filter(|e| e.action == "set_ecmp").count(), 1);
    }

    /// Three spines on 16 buckets would be split 6:5:5; a group of three gets 256 buckets
    /// on 8 bits of the hash (a ToR's bits 4-11), 86:85:85.
    #[test]
    fn a_group_of_three_shares_the_hash_evenly() {
        let t = leaf_spine(2, 3, 2);
        let mut per_port: BTreeMap<String, u32> = BTreeMap::new();
        for e in routes(&t, 0, Routing::Ecmp) {
            if e.table == "ecmp_select" {
                assert!(
                    matches!(e.key[1], KeySpec::Ternary(_, Value::Int(0xff0))),
                    "{:?}",
                    e.key
                );
                *per_port.entry(format!("{:?}", e.args[0])).or_default() += 1;
            }
        }
        let mut counts: Vec<u32> = per_port.into_values().collect();
        counts.sort();
        assert_eq!(counts, [85, 85, 86]);
    }
}
