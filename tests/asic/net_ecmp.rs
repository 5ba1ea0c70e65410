//! ECMP in a three-tier fat tree spreads flows over every core (issue #20: every tier chose
//! from the same bits of the same hash, so each aggregation switch used one core of its
//! k/2 and only 4 of 16 cores carried anything).

use asic_deploy::{run as net, scenario::NetScenario};

/// Packets each core of a k = 8 fat tree forwarded under uniform traffic, with `routing`.
fn core_packets(routing: &str) -> Vec<u64> {
    let text = format!(
        r#"(
        topology: Generate((shape: FatTree(k: 8, tiers: 3), chip: "rmt2013", delay_ns: 100)),
        deploy: Routers({routing}),
        transport: Raw(()),
        traffic: [Flows((size: Fixed(1000), load: 0.2, stop_ns: 300000))],
    )"#
    );
    let s: NetScenario = ron::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
    let r = net::run_detailed(s, std::path::Path::new(""), None).unwrap();
    let topo_cores = 64..80; // e0_0 .. a7_3 come first, then c0 .. c15.
    r.chips[topo_cores]
        .iter()
        .map(|c| (0..8).map(|p| c.port_counters(p).tx_packets).sum())
        .collect()
}

fn assert_balanced(routing: &str) {
    let load = core_packets(routing);
    let mean = load.iter().sum::<u64>() as f64 / load.len() as f64;
    assert!(mean > 200.0, "{routing}: {load:?}");
    for (c, &n) in load.iter().enumerate() {
        assert!(
            (n as f64 - mean).abs() <= 0.25 * mean,
            "{routing}: core {c} carried {n} packets, the mean is {mean:.0}: {load:?}"
        );
    }
}

#[test]
fn ecmp_loads_every_core_within_a_quarter_of_the_mean() {
    assert_balanced("Ecmp");
}

#[test]
fn static_routes_load_every_core_within_a_quarter_of_the_mean() {
    assert_balanced("Static");
}

/// Flows between two racks only spread over every spine: a ToR reads bits of the 5-tuple's
/// CRC-16 that vary with its hosts and ports. (The low four bits of CRC-16/ARC take two
/// values over every 5-tuple between two /24s with the same protocol and destination port:
/// a ToR that read them used 2 of its 4 spines.)
#[test]
fn ecmp_spreads_the_flows_between_two_racks_over_every_spine() {
    let traffic: String = (0..8)
        .flat_map(|a| (0..8).map(move |b| (a, b)))
        .flat_map(|(a, b)| {
            (0..4).map(move |_| format!(r#"Flow((src: "h0_{a}", dst: "h1_{b}", size: 1000)),"#))
        })
        .collect();
    let text = format!(
        r#"(
        topology: Generate((shape: LeafSpine(leaves: 2, spines: 4, hosts_per_leaf: 8, uplinks_per_spine: 1),
            chip: "rmt2013", delay_ns: 100)),
        deploy: Routers(Ecmp),
        transport: Raw(()),
        traffic: [{traffic}],
    )"#
    );
    let s: NetScenario = ron::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
    let r = net::run_detailed(s, std::path::Path::new(""), None).unwrap();
    let leaf0 = r.chip("leaf0").unwrap();
    let load: Vec<u64> = (8..12).map(|p| leaf0.port_counters(p).tx_packets).collect();
    let mean = load.iter().sum::<u64>() as f64 / load.len() as f64;
    assert_eq!(mean, 64.0, "{load:?}");
    for (s, &n) in load.iter().enumerate() {
        assert!(
            (n as f64 - mean).abs() <= 0.25 * mean,
            "spine {s} carried {n} packets, the mean is {mean:.0}: {load:?}"
        );
    }
}

/// A spraying NDP sender (`Ndp((spray: true))`, EQDS's way) varies each data packet's UDP
/// source port, so the ToR's ECMP hash spreads one flow over every spine; without it the
/// flow keeps one. One flow of 1,200 packets over 3 spines (256 buckets, 86:85:85): each
/// spine carries a third of it, within a tenth.
#[test]
fn a_spraying_host_spreads_one_flow_over_every_spine() {
    let uplinks = |spray: bool| -> Vec<u64> {
        let text = format!(
            r#"(
            topology: Generate((shape: LeafSpine(leaves: 2, spines: 3, hosts_per_leaf: 1, uplinks_per_spine: 1),
                chip: "rmt2013", delay_ns: 100)),
            deploy: Routers(Ecmp),
            transport: Ndp((spray: {spray})),
            traffic: [Flow((src: "h0_0", dst: "h1_0", size: 1728000))],
        )"#
        );
        let s: NetScenario = ron::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
        let r = net::run_detailed(s, std::path::Path::new(""), None).unwrap();
        let leaf0 = r.chip("leaf0").unwrap();
        (1..4).map(|p| leaf0.port_counters(p).tx_packets).collect()
    };
    let one_path = uplinks(false);
    assert_eq!(
        one_path.iter().filter(|&&n| n > 0).count(),
        1,
        "{one_path:?}"
    );
    let sprayed = uplinks(true);
    let total: u64 = sprayed.iter().sum();
    assert!(total >= 1200, "{sprayed:?}");
    for &n in &sprayed {
        let share = n as f64 / total as f64;
        assert!((share - 1.0 / 3.0).abs() < 0.1 / 3.0, "{sprayed:?}");
    }
}
