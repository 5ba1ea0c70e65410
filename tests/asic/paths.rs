//! The path oracle (deploy/src/paths.rs) against the routers: every chip of a network, as
//! its deployment built it, is put on a bench alone and sent one packet of each flow the
//! oracle routes through it, at the port the oracle says it arrives by; each must leave by
//! the port the oracle names, so every ECMP choice of every tier is checked.

use asic_bench::bench::Bench;
use asic_deploy::paths::{FiveTuple, Hop, PathOracle};
use asic_deploy::routers::Routing;
use asic_deploy::{build, scenario::NetScenario};
use asic_net::packet::{build as frame, parse, Header};
use asic_net::topology::End;
use pipelines::time::Time;
use std::collections::BTreeMap;
use std::path::Path;

/// A packet a chip should see: the port it arrives by, its bytes, its flow and the port the
/// oracle says it leaves by.
struct Visit {
    in_port: u16,
    frame: Vec<u8>,
    /// Flow id, source and destination address.
    flow: (u64, u32, u32),
    out_port: u16,
}

/// Flows of `flows` random (source, destination, flow id) through `topology` under the
/// ECMP routers: each chip forwards each packet the oracle sends through it by the oracle's
/// port, and between them the flows use every member of every ECMP group they meet.
fn oracle_matches_the_routers(topology: &str, flows: usize) {
    let s: NetScenario = ron::from_str(&format!(
        "(topology: Generate({topology}), deploy: Routers(Ecmp))"
    ))
    .unwrap();
    let net = build::build(s, Path::new(".")).unwrap();
    let (topo, chips) = (&net.topology, net.chips);
    let oracle = PathOracle::uniform(topo.clone(), Routing::Ecmp);
    let hosts = topo.host_ips.len();
    // Per chip: (arrival port, frame, flow, expected port) of each packet it should see.
    let mut at_chip: BTreeMap<usize, Vec<Visit>> = BTreeMap::new();
    let mut seen: BTreeMap<(usize, Vec<u16>), std::collections::BTreeSet<u16>> = BTreeMap::new();
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for _ in 0..flows {
        let src = next() as usize % hosts;
        let dst = (src + 1 + next() as usize % (hosts - 1)) % hosts;
        let flow = next() % 100_000;
        let tuple = FiveTuple::of_flow(topo, src, dst, flow);
        let path = oracle.path(src, dst, &tuple).unwrap();
        let h = Header {
            src_ip: topo.host_ips[src],
            dst_ip: topo.host_ips[dst],
            flags: asic_net::packet::DATA,
            flow_id: flow,
            ..Header::default()
        };
        let mut f = Vec::new();
        frame(&mut f, &h, 100);
        let mut arrive = topo.peer(topo.host_link[src], End::Host(src));
        for Hop { chip, port } in path {
            let End::Chip(c, in_port) = arrive else {
                unreachable!("a hop is at a chip")
            };
            assert_eq!(c, chip);
            at_chip.entry(chip).or_default().push(Visit {
                in_port,
                frame: f.clone(),
                flow: (flow, h.src_ip, h.dst_ip),
                out_port: port,
            });
            let members = oracle.routes(chip).unwrap().ports(dst).to_vec();
            seen.entry((chip, members)).or_default().insert(port);
            arrive = topo.peer(topo.chip_ports[chip][&port], End::Chip(chip, port));
        }
        assert_eq!(arrive, End::Host(dst));
    }
    for (chip, c) in chips.into_iter().enumerate() {
        let Some(packets) = at_chip.get(&chip) else {
            continue;
        };
        let name = &topo.spec.chips[chip].name;
        let mut bench = Bench::on_chip(c, "ecmp_router".into());
        bench.keep_departures();
        let mut by_port: BTreeMap<u16, Vec<(Time, Vec<u8>)>> = BTreeMap::new();
        let mut want = BTreeMap::new();
        for (i, v) in packets.iter().enumerate() {
            // 1 µs apart: each alone in the chip.
            let t = Time(i as u64 * 1_000_000);
            by_port
                .entry(v.in_port)
                .or_default()
                .push((t, v.frame.clone()));
            want.insert(v.flow, v.out_port);
        }
        for (p, frames) in by_port {
            bench.add_frames(p, frames).unwrap();
        }
        let report = bench.run().unwrap();
        assert_eq!(
            report.packets_out(),
            packets.len() as u64,
            "{name}: {}",
            report.render_text()
        );
        for d in bench.departures() {
            let h = parse(&d.data).unwrap();
            let flow = (h.flow_id, h.src_ip, h.dst_ip);
            assert_eq!(d.port, want[&flow], "{name}: flow {flow:?}");
        }
    }
    for ((chip, members), used) in seen {
        if members.len() > 1 {
            assert_eq!(
                used.len(),
                members.len(),
                "{}: the flows used {used:?} of the group {members:?}",
                topo.spec.chips[chip].name
            );
        }
    }
}

#[test]
fn the_oracle_routes_as_a_leaf_spine_does() {
    oracle_matches_the_routers(
        "(shape: LeafSpine(leaves: 3, spines: 3, hosts_per_leaf: 4, uplinks_per_spine: 2), \
         chip: \"rmt2013\", delay_ns: 100)",
        300,
    );
}

#[test]
fn the_oracle_routes_as_a_three_tier_fat_tree_does() {
    oracle_matches_the_routers(
        "(shape: FatTree(k: 4, tiers: 3), chip: \"rmt2013\", delay_ns: 100)",
        300,
    );
}
