//! A network scenario configures a chip as a one-chip scenario does: per role and per name,
//! the program, entries, the TM's seed, mirror sessions, deflect-on-drop, multicast groups,
//! packet-generator apps and control operations at given times (tests/programs/net_plumbing.p4
//! uses them all).

use asic_deploy::{run as net, scenario::NetScenario};
use asic_net::NetRun;
use std::path::Path;

/// An Ethernet + IPv4 header to 239.1.1.1 (TTL 64): the packet generator's template.
const TEMPLATE: &str = "[2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2, 8, 0, \
                        69, 0, 0, 20, 0, 0, 0, 0, 64, 17, 0, 0, 10, 9, 9, 9, 239, 1, 1, 1]";

fn run(leaf_settings: &str) -> NetRun {
    let text = format!(
        r#"(
        name: "net-config",
        topology: Generate((shape: LeafSpine(leaves: 2, spines: 1, hosts_per_leaf: 2),
                            chip: "teaching", delay_ns: 200)),
        deploy: Routers(Static),
        chips: [
            (select: All, program: Some("tests/programs/net_plumbing.p4")),
            {leaf_settings}
        ],
        transport: Raw(()),
        traffic: [Incast((senders: ["h0_0", "h0_1", "h1_1"], receiver: "h1_0", size: 100000))],
        stop: (at_ns: Some(400000), when_flows_complete: false),
    )"#
    );
    let s: NetScenario = ron::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
    net::run_detailed(s, Path::new(env!("CARGO_MANIFEST_DIR")), None).unwrap()
}

const LEAVES: &str = r#"(select: Role(Leaf),
     entries: Some(Inline([
         (table: "port_tap", key: [Exact(0)], action: "tap", args: [1]),
         (table: "ipv4_lpm", key: [Lpm("239.1.1.1", 32)], action: "set_mcast", args: [1]),
     ])),
     config: Some((
         tm: (seed: Some(5)),
         dod: Some((port: Some(3), queue: 0)),
         mirror_sessions: [(id: 1, port: 3, queue: 0, truncate_bytes: Some(64))],
         mcast_groups: [(id: 1, members: [(0, 1), (1, 2)])],
         pktgen: [(pipe: 0, template: TEMPLATE, period_ns: Some(1000), start_ns: 1000,
                   count: Some(4))],
     )),
     control: [(at_ns: 30000, op: DeleteEntry((table: "port_tap", key: [Exact(0)])))],
    ),"#;

#[test]
fn per_role_settings_reach_the_leaves_and_only_them() {
    let r = run(&LEAVES.replace("TEMPLATE", TEMPLATE));
    let names: Vec<&str> = r.record.hosts.iter().map(|h| h.host.as_str()).collect();
    assert_eq!(names, ["h0_0", "h0_1", "h1_0", "h1_1"]);
    let (leaf0, leaf1, spine) = (
        r.chips[0].plumbing_counters(),
        r.chips[1].plumbing_counters(),
        r.chips[2].plumbing_counters(),
    );
    for leaf in [leaf0, leaf1] {
        // Four generated packets to 239.1.1.1, each replicated to the group's two ports.
        assert_eq!(leaf.generated, 4);
        assert_eq!(leaf.mcast_copies, 4);
    }
    // h0_0 (leaf0 port 0) sends for 80 µs; its port is tapped until the control operation
    // deletes the entry at 30 µs.
    let h0 = r.record.hosts.iter().find(|h| h.host == "h0_0").unwrap();
    assert!(
        leaf0.mirror_copies > 10 && leaf0.mirror_copies < h0.packets_sent / 2,
        "{} copies of {} packets",
        leaf0.mirror_copies,
        h0.packets_sent
    );
    let dropped = |node: &str, reason: &str| {
        r.record
            .drops
            .iter()
            .find(|d| d.node == node && d.reason == reason)
            .map_or(0, |d| d.packets)
    };
    // Three senders into one 10G port through a 5 KB buffer: what the TM refuses is
    // deflected to port 3 (whose queue, in the same tiny buffer, refuses most of it again).
    for (name, leaf) in [("leaf0", leaf0), ("leaf1", leaf1)] {
        let deflections = leaf.deflected + dropped(name, "deflect_refused");
        assert!(deflections > 0, "{name}: {:?}", r.record.drops);
    }
    assert_eq!(*spine, Default::default(), "the spine runs the router only");
    // The leaves' TMs draw from their own seed; the spine's from the chip's, which comes
    // from the scenario's seed and the chip's name.
    let tm_seed = |c: usize| r.chips[c].tm().config().seed;
    assert_eq!((tm_seed(0), tm_seed(1)), (Some(5), Some(5)));
    assert!(tm_seed(2).is_some_and(|s| s != 5));
    assert_eq!(dropped("spine0", "deflect_refused"), 0);
    // The copies to the unconnected port 3 and the multicast copies the hosts refuse are
    // drops with their reasons.
    assert!(dropped("leaf0", "unconnected_port") >= leaf0.mirror_copies);
    assert!(dropped("h0_1", "unknown_frame") > 0);
}

#[test]
fn a_setting_that_selects_no_chip_is_refused() {
    let s: NetScenario = ron::from_str(
        r#"(
        topology: Generate((shape: SingleSwitch(hosts: 2), chip: "teaching")),
        chips: [(select: Role(Core), config: Some(()))],
    )"#,
    )
    .unwrap();
    let e = net::run(s).unwrap_err();
    assert_eq!(e, "chips[0]: Role(Core) selects no chip");
}

/// A leaf-spine of `tofino2-like` chips (every port 400G in the profile) with 100G host links
/// under 400G uplinks: the deployment brings the host ports up at 100G.
fn leaf_spine_100g_400g(extra: &str) -> Result<NetRun, String> {
    let text = format!(
        r#"(
        topology: Generate((shape: LeafSpine(leaves: 2, spines: 2, hosts_per_leaf: 4),
                            chip: "tofino2-like", delay_ns: 500, host_gbps: Some(100){extra})),
        transport: Raw(()),
        traffic: [Flow((src: "h0_0", dst: "h1_3", size: 300000, start_ns: 100))],
    )"#
    );
    let s: NetScenario = ron::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
    net::run_detailed(s, Path::new(""), None)
}

#[test]
fn a_leaf_spine_with_400g_uplinks_runs_at_its_link_speeds() {
    let r = leaf_spine_100g_400g("").unwrap();
    let leaf0 = &r.chips[0];
    // Hosts on ports 0..4 at 100G, one uplink to each spine at 400G.
    assert_eq!(
        (0..6)
            .map(|p| leaf0.port_gbps(p).unwrap())
            .collect::<Vec<_>>(),
        [100, 100, 100, 100, 400, 400]
    );
    assert_eq!(r.chips[2].port_gbps(0), Some(400));
    // A lone flow finishes at the ideal FCT of its path (100G, 400G, 400G, 100G), within a
    // clock cycle per chip of arrival alignment: the ports run at the speeds the links say.
    let f = &r.record.flows[0];
    let fct = f.fct_ps().expect("the flow completes");
    let cycle_ps = 1_000_000_000_000 / leaf0.profile().clock_hz;
    assert!(
        fct >= f.ideal_fct_ps && fct - f.ideal_fct_ps <= 3 * cycle_ps,
        "FCT {fct} ps, ideal {} ps",
        f.ideal_fct_ps
    );
    // The same flow on 400G host links would take under a third of the time.
    assert!(f.ideal_fct_ps > 300_000 * 8 * 10, "{}", f.ideal_fct_ps);
}

#[test]
fn a_link_faster_than_its_port_is_refused() {
    let e = leaf_spine_100g_400g(", fabric_gbps: Some(800)")
        .err()
        .unwrap();
    assert_eq!(
        e,
        "chip `leaf0`: link leaf0:4 - spine0:0: 800 Gb/s, but port 4 runs at most at 400 Gb/s"
    );
}
