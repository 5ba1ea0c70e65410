//! The path oracle: the ports a flow's packets leave each chip by, from the topology, the
//! routes the deployments generate ([`crate::routers`]) and the flow hash every router
//! computes, without running anything; and the classes Pyrrha sorts flows into against a
//! set of congested ports (its §III: congested flows cross one; vulnerable flows share a
//! port with a congested flow and cross none; the rest are background).
//!
//! A switch that computes its packets' onward paths itself (Pyrrha's path calculation,
//! §IV-B) needs exactly this, as tables generated from it; tests/asic/paths.rs checks the
//! oracle against what the routers do to packets, at every tier.

use crate::routers::{ChipRoutes, Routing};
use asic_net::packet::{source_port, UDP_PORT};
use asic_net::topology::{End, Topology};
use pipelines::hash::{HashEngine, CRC16};
use std::collections::BTreeSet;
use std::sync::{Arc, OnceLock};

/// The fields the routers hash, as a packet carries them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FiveTuple {
    /// IPv4 source address.
    pub src: u32,
    /// IPv4 destination address.
    pub dst: u32,
    /// IP protocol.
    pub protocol: u8,
    /// UDP source port.
    pub src_port: u16,
    /// UDP destination port.
    pub dst_port: u16,
}

impl FiveTuple {
    /// The 5-tuple of the data packets of flow `flow_id` from host `src` to host `dst`
    /// (net/src/packet.rs: UDP to [`UDP_PORT`] from [`source_port`], no spraying).
    pub fn of_flow(topo: &Topology, src: usize, dst: usize, flow_id: u64) -> FiveTuple {
        FiveTuple {
            src: topo.host_ips[src],
            dst: topo.host_ips[dst],
            protocol: 17,
            src_port: source_port(flow_id, 0),
            dst_port: UDP_PORT,
        }
    }

    /// The routers' flow hash: CRC-16/ARC over source, destination, protocol, source port
    /// and destination port, big-endian and back to back, as `Hash<bit<16>>(CRC16)` packs
    /// `{src_addr, dst_addr, protocol, src_port, dst_port}` (programs/ecmp_router).
    pub fn hash(&self) -> u16 {
        let mut b = [0u8; 13];
        b[0..4].copy_from_slice(&self.src.to_be_bytes());
        b[4..8].copy_from_slice(&self.dst.to_be_bytes());
        b[8] = self.protocol;
        b[9..11].copy_from_slice(&self.src_port.to_be_bytes());
        b[11..13].copy_from_slice(&self.dst_port.to_be_bytes());
        let crc = HashEngine::new(&CRC16).expect("CRC-16/ARC is a CRC the engine has");
        crc.of_bytes(&b) as u16
    }
}

/// One hop of a path: the chip and the port the packet leaves it by (an output port, which
/// Pyrrha names a congestion root by: `<switch-id : port-id>`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Hop {
    /// Chip index in the topology.
    pub chip: usize,
    /// Its output port.
    pub port: u16,
}

/// Every chip's routes, to follow paths through. A chip's are worked out the first time a
/// path reaches it (a deployment asks for the few chips downstream of one; a network is
/// built with one oracle for all its chips, which its deployments, its hosts' flow groups
/// and its HOL check share).
pub struct PathOracle {
    topo: Arc<Topology>,
    /// Per chip: how it routes, `None` if by routes not generated here.
    routings: Vec<Option<Routing>>,
    /// Per chip: its routes, once asked for.
    routes: Vec<OnceLock<ChipRoutes>>,
}

impl PathOracle {
    /// The oracle of `topo` whose chips all route with `routing`.
    pub fn uniform(topo: impl Into<Arc<Topology>>, routing: Routing) -> PathOracle {
        let topo = topo.into();
        let routings = vec![Some(routing); topo.spec.chips.len()];
        PathOracle::new(topo, &routings)
    }

    /// The oracle of `topo` whose chip `c` routes with `routings[c]` (`None`: by routes the
    /// oracle does not know; a path through it is an error).
    pub fn new(topo: impl Into<Arc<Topology>>, routings: &[Option<Routing>]) -> PathOracle {
        PathOracle {
            topo: topo.into(),
            routings: routings.to_vec(),
            routes: routings.iter().map(|_| OnceLock::new()).collect(),
        }
    }

    /// The topology it follows.
    pub fn topology(&self) -> &Topology {
        &self.topo
    }

    /// Whether every chip's routes are generated ones, which the oracle can follow; if not,
    /// the first chip whose are not.
    pub fn unknown_routes(&self) -> Option<usize> {
        self.routings.iter().position(Option::is_none)
    }

    /// Chip `c`'s routes (`None`: not generated ones).
    pub fn routes(&self, c: usize) -> Option<&ChipRoutes> {
        let routing = (*self.routings.get(c)?)?;
        Some(self.routes[c].get_or_init(|| ChipRoutes::new(&self.topo, c, routing)))
    }

    /// The hops of a packet with `tuple` from host `src` to host `dst`, from the first chip
    /// to the one that delivers it; an error naming the chip where it would be dropped
    /// (no route) or loop.
    pub fn path(&self, src: usize, dst: usize, tuple: &FiveTuple) -> Result<Vec<Hop>, String> {
        let walk = self.walk(src, dst, tuple)?;
        match walk.cycle {
            None => Ok(walk.hops),
            Some(_) => {
                let last = walk.hops.last().expect("a cycle has hops");
                Err(format!(
                    "the path to {} loops (at {} port {})",
                    self.topo.spec.hosts[dst].name, self.topo.spec.chips[last.chip].name, last.port
                ))
            }
        }
    }

    /// [`PathOracle::path`], or, for routes that loop, the hops up to the first one the
    /// packet would take again, and where the cycle starts; an error if a chip has no route.
    pub fn walk(&self, src: usize, dst: usize, tuple: &FiveTuple) -> Result<Walk, String> {
        let hash = tuple.hash();
        let mut hops: Vec<Hop> = Vec::new();
        let mut at = self.topo.peer(self.topo.host_link[src], End::Host(src));
        while let End::Chip(c, _) = at {
            let name = &self.topo.spec.chips[c].name;
            let host = &self.topo.spec.hosts[dst].name;
            let routes = self.routes(c).ok_or_else(|| {
                format!("{name} forwards by routes the path oracle does not know")
            })?;
            let port = routes
                .port(dst, hash)
                .ok_or_else(|| format!("{name} has no route to {host}"))?;
            let hop = Hop { chip: c, port };
            if let Some(start) = hops.iter().position(|h| *h == hop) {
                return Ok(Walk {
                    hops,
                    cycle: Some(start),
                });
            }
            hops.push(hop);
            let link = self.topo.chip_ports[c][&port];
            at = self.topo.peer(link, End::Chip(c, port));
        }
        Ok(Walk { hops, cycle: None })
    }
}

/// Where a packet goes ([`PathOracle::walk`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Walk {
    /// The hops, each once.
    pub hops: Vec<Hop>,
    /// Routes that loop: the packet takes `hops[start..]` again and again (until its TTL
    /// runs out); `None` when the last hop delivers it.
    pub cycle: Option<usize>,
}

impl Walk {
    /// The hops the packet takes after hop `i`: the rest of the way, and for a hop in a
    /// cycle, the cycle round to it again.
    pub fn after(&self, i: usize) -> impl Iterator<Item = &Hop> {
        let again = match self.cycle {
            Some(start) if start <= i => &self.hops[start..i],
            _ => &[],
        };
        self.hops[i + 1..].iter().chain(again)
    }
}

/// A flow's class against a set of congested ports (Pyrrha §III).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FlowClass {
    /// Its path crosses a congested port.
    Congested,
    /// It crosses none but shares a port with a congested flow.
    Vulnerable,
    /// Neither.
    Background,
}

/// The class of each of `paths` against the `congested` ports.
pub fn classify(paths: &[Vec<Hop>], congested: &BTreeSet<Hop>) -> Vec<FlowClass> {
    let crosses = |p: &Vec<Hop>| p.iter().any(|h| congested.contains(h));
    let shared: BTreeSet<Hop> = paths
        .iter()
        .filter(|p| crosses(p))
        .flatten()
        .copied()
        .collect();
    paths
        .iter()
        .map(|p| {
            if crosses(p) {
                FlowClass::Congested
            } else if p.iter().any(|h| shared.contains(h)) {
                FlowClass::Vulnerable
            } else {
                FlowClass::Background
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::routers::tests::leaf_spine;

    /// CRC-16/ARC of the 13 bytes `0a000001 0a010002 11 c001 12b7` (computed apart, bit
    /// by bit with the reflected polynomial 0xA001 and init 0: 0x542A).
    #[test]
    fn the_hash_is_crc16_arc_of_the_packed_tuple() {
        let t = FiveTuple {
            src: 0x0a00_0001,
            dst: 0x0a01_0002,
            protocol: 17,
            src_port: 49153,
            dst_port: 4791,
        };
        assert_eq!(t.hash(), 0x542a);
    }

    /// In a leaf-spine a path between leaves is ToR up, spine down, ToR down, and the flow
    /// hash picks the spine; within a leaf it is the ToR alone.
    #[test]
    fn paths_go_up_and_down_through_the_hashed_spine() {
        let topo = leaf_spine(3, 2, 2);
        let oracle = PathOracle::uniform(topo.clone(), Routing::Ecmp);
        let mut spines = BTreeSet::new();
        for flow in 0..64 {
            let t = FiveTuple::of_flow(&topo, 0, 5, flow);
            let p = oracle.path(0, 5, &t).unwrap();
            assert_eq!(p.len(), 3);
            assert_eq!((p[0].chip, p[2].chip), (0, 2));
            spines.insert(p[1].chip);
            let up = oracle.routes(0).unwrap().port(5, t.hash()).unwrap();
            assert_eq!(p[0].port, up);
        }
        assert_eq!(spines.len(), 2, "both spines carry some of 64 flows");
        let t = FiveTuple::of_flow(&topo, 0, 1, 0);
        assert_eq!(oracle.path(0, 1, &t).unwrap().len(), 1);
    }

    /// Routes set by hand that send every packet to h1 round a ring of three chips (A:1 to
    /// B, B:1 to C, C:1 to A; one host each on port 0): from h0 the walk is A:1, B:1, C:1
    /// and then A:1 again; after C:1 comes A:1 and B:1 (the cycle), after A:1 the rest.
    /// `path` refuses it, naming where it loops.
    #[test]
    fn routes_that_loop_walk_round_their_cycle() {
        use asic_net::topology::{LinkSpec, RouteSpec, TopologySpec};
        let link = |a: &str, b: &str| LinkSpec {
            a: a.into(),
            b: b.into(),
            gbps: 100,
            delay_ns: 600,
        };
        let spec: TopologySpec = TopologySpec {
            chips: ["A", "B", "C"]
                .iter()
                .map(|n| asic_net::topology::ChipSpec {
                    name: n.to_string(),
                    profile: "x".into(),
                    role: None,
                })
                .collect(),
            hosts: (0..3)
                .map(|i| asic_net::topology::HostSpec {
                    name: format!("h{i}"),
                    ip: format!("10.{i}.0.1"),
                    nic_queues: 8,
                })
                .collect(),
            links: vec![
                link("h0", "A:0"),
                link("h1", "B:0"),
                link("h2", "C:0"),
                link("A:1", "B:2"),
                link("B:1", "C:2"),
                link("C:1", "A:2"),
            ],
            routes: ["A", "B", "C"]
                .iter()
                .map(|c| RouteSpec {
                    chip: c.to_string(),
                    dst: "h1".into(),
                    port: 1,
                })
                .collect(),
        };
        let topo = Topology::resolve(spec).unwrap();
        let oracle = PathOracle::uniform(topo.clone(), Routing::Ecmp);
        let t = FiveTuple::of_flow(&topo, 0, 1, 0);
        let w = oracle.walk(0, 1, &t).unwrap();
        let h = |chip, port| Hop { chip, port };
        assert_eq!(w.hops, [h(0, 1), h(1, 1), h(2, 1)]);
        assert_eq!(w.cycle, Some(0));
        assert_eq!(w.after(2).copied().collect::<Vec<_>>(), [h(0, 1), h(1, 1)]);
        assert_eq!(w.after(0).copied().collect::<Vec<_>>(), [h(1, 1), h(2, 1)]);
        assert_eq!(
            oracle.path(0, 1, &t).unwrap_err(),
            "the path to h1 loops (at C port 1)"
        );
        // To h2 the routes are the generated ones: A:2 to C, C:0.
        let w = oracle
            .walk(0, 2, &FiveTuple::of_flow(&topo, 0, 2, 0))
            .unwrap();
        assert_eq!((w.hops, w.cycle), (vec![h(0, 2), h(2, 0)], None));
    }

    /// Flows into a congested port are congested; one that shares a link with them but
    /// leaves by another port is vulnerable; one apart from both is background.
    #[test]
    fn flows_are_congested_vulnerable_or_background() {
        let h = |chip, port| Hop { chip, port };
        let paths = vec![
            vec![h(0, 2), h(3, 1), h(1, 0)],
            vec![h(0, 2), h(3, 1), h(1, 1)],
            vec![h(2, 0)],
        ];
        let congested: BTreeSet<Hop> = [h(1, 0)].into();
        assert_eq!(
            classify(&paths, &congested),
            [
                FlowClass::Congested,
                FlowClass::Vulnerable,
                FlowClass::Background
            ]
        );
    }
}
