//! Network scenarios that cannot run are refused before anything runs, with the field named:
//! times beyond what the model represents, traffic that would make flows without bound, a
//! sampling period of 0 (issue #20: these wrapped, aborted out of memory or spun forever).

use asic_deploy::{run as net, scenario::NetScenario};

/// The error of a single-switch scenario with `traffic` and the `extra` fields.
fn refusal(traffic: &str, extra: &str) -> String {
    let text = format!(
        r#"(
        topology: Generate((shape: SingleSwitch(hosts: 3), chip: "teaching", delay_ns: 100)),
        traffic: [{traffic}],
        {extra}
    )"#
    );
    let s: NetScenario = ron::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
    net::run(s).expect_err("refused")
}

const FLOW: &str = r#"Flow((src: "h0", dst: "h1", size: 1000))"#;

#[test]
fn times_beyond_the_model_are_refused_with_the_field_named() {
    let cases = [
        (
            r#"Flow((src: "h0", dst: "h1", size: 1000, start_ns: 18446744073709551615))"#,
            "",
            "traffic[0]: start_ns: 18446744073709551615 ns is beyond",
        ),
        (
            FLOW,
            "stop: (at_ns: Some(18446744073709551615))",
            "stop.at_ns: 18446744073709551615 ns is beyond",
        ),
        (
            r#"Incast((senders: ["h1"], receiver: "h0", size: 1000, period_ns: Some(1000000000000000), repeats: 3))"#,
            "",
            "traffic[0]: start_ns + (repeats - 1) * period_ns: 2000000000000000 ns is beyond",
        ),
        (
            r#"OnOff((src: "h0", dst: "h1", rate_gbps: 1.0, on_ns: 1000, off_ns: 18446744073709551615, stop_ns: 10000))"#,
            "",
            "traffic[0]: off_ns: 18446744073709551615 ns is beyond",
        ),
    ];
    for (traffic, extra, want) in cases {
        let e = refusal(traffic, extra);
        assert!(e.starts_with(want), "{e}");
    }
}

#[test]
fn a_link_delay_beyond_the_model_is_refused() {
    let s: NetScenario = ron::from_str(
        r#"(
        topology: Generate((shape: SingleSwitch(hosts: 2), chip: "teaching",
                            delay_ns: 18446744073709551615)),
    )"#,
    )
    .unwrap();
    let e = net::run(s).unwrap_err();
    assert!(
        e.starts_with(
            "topology: links[0] (h0 - sw0:0): delay_ns: 18446744073709551615 ns is beyond"
        ),
        "{e}"
    );
}

#[test]
fn traffic_that_makes_flows_without_bound_is_refused() {
    let cases = [
        (
            r#"Flows((size: Fixed(1000), load: 1e9, stop_ns: 1000))"#,
            "traffic[0]: load 1000000000 must be above 0 and at most 1",
        ),
        (
            r#"Flows((size: Fixed(0), load: 0.5, stop_ns: 1000))"#,
            "traffic[0]: size must be at least 1 byte",
        ),
        (
            r#"Flows((size: Fixed(1000), load: 0.5, load_of: Aggregate(9.2e18), stop_ns: 1000))"#,
            "traffic[0]: load_of: Aggregate(9200000000000000000) must be above 0",
        ),
        (
            r#"Flows((size: Fixed(1000), arrivals: LogNormal(sigma: 2147483648), load: 0.4, stop_ns: 3000000))"#,
            "traffic[0]: arrivals: LogNormal(sigma: 2147483648) must be above 0 and at most 4",
        ),
        (
            r#"Flows((size: Fixed(1000), arrivals: LogNormal(sigma: NaN), load: 0.4, stop_ns: 1000))"#,
            "traffic[0]: arrivals: LogNormal(sigma: NaN) must be above 0",
        ),
        (
            r#"Flows((size: Fixed(64), load: 1.0, stop_ns: 1000000000000000))"#,
            "traffic[0]: the traffic makes more than 10000000 flows",
        ),
        (
            r#"Incast((senders: ["h1", "h2"], receiver: "h0", size: 1000, period_ns: Some(1), repeats: 4294967295))"#,
            "traffic[0]: the traffic makes more than 10000000 flows",
        ),
    ];
    for (traffic, want) in cases {
        let e = refusal(traffic, "");
        assert!(e.starts_with(want), "{e}");
    }
}

/// Each flow's receiver has a bit per packet from the start: a flow of 4 TB asked for 95 MB
/// per flow (and, above 2³² packets, its count wrapped), so sizes and packets are bounded.
#[test]
fn flows_too_large_to_track_are_refused() {
    let cases = [
        (
            r#"Incast((senders: ["h1", "h2"], receiver: "h0", size: 4073709551615))"#,
            "",
            "traffic[0]: size 4073709551615 bytes; a flow may carry at most 100000000000",
        ),
        (
            r#"Flow((src: "h0", dst: "h1", size: 5000000000))"#,
            "mtu: 61,",
            "traffic[0]: a flow of 5000000000 bytes is 5000000000 packets at this MSS (1 bytes)",
        ),
        (
            r#"Incast((senders: ["h1", "h2"], receiver: "h0", size: 100000000000, period_ns: Some(1000), repeats: 80))"#,
            "",
            "traffic[0]: the flows up to this one make 10000000080 packets at this MSS (1440 \
             bytes); a run may have at most 10000000000",
        ),
    ];
    for (traffic, extra, want) in cases {
        let e = refusal(traffic, extra);
        assert!(e.starts_with(want), "{e}");
    }
}

#[test]
fn a_sampling_period_of_zero_is_refused() {
    assert_eq!(
        refusal(FLOW, "sample_period_ns: Some(0),"),
        "sample_period_ns: must be greater than 0"
    );
}

/// The scenario `text` written to a scratch file (named by `tag`) and run as `asic net` runs
/// it: the file, and the error it must give.
fn run_file(tag: &str, text: &str) -> (std::path::PathBuf, String) {
    let dir = std::env::temp_dir().join(format!("asic-net-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("s.ron");
    std::fs::write(&path, text).unwrap();
    let e = net::run_file(&path, net::RunOptions::default(), &mut ())
        .err()
        .expect("the run fails");
    (path, e)
}

/// An error found after the scenario was parsed names the file and the place it is about
/// (issue #20: "topology: hosts[1] (b): nic_queues …" named no file or line).
#[test]
fn errors_after_parsing_are_placed_in_the_file() {
    let (path, e) = run_file(
        "placed",
        r#"(
    topology: Explicit((
        chips: [(name: "sw", profile: "teaching")],
        hosts: [(name: "a", ip: "10.0.0.1"), (name: "b", ip: "10.0.0.2", nic_queues: 7)],
        links: [(a: "a", b: "sw:0", gbps: 10, delay_ns: 10), (a: "b", b: "sw:1", gbps: 10, delay_ns: 10)],
    )),
)"#,
    );
    let want = format!(
        "{}:4:53: topology: hosts[1] (b): nic_queues: 7",
        path.display()
    );
    assert!(e.starts_with(&want), "{e}");
}

/// A scheduled operation a chip of a network refuses when it runs (deleting a route that is
/// not there) stops the run, as on the bench, naming the chip, the operation and its time,
/// placed in the file where the operation names its table.
#[test]
fn a_refused_control_operation_stops_a_network_run() {
    let (path, e) = run_file(
        "refused",
        r#"(
    topology: Generate((shape: SingleSwitch(hosts: 2), chip: "teaching", delay_ns: 100)),
    chips: [(select: All, control: [
        (at_ns: 1000, op: DeleteEntry((table: "ipv4_lpm", key: [Lpm("10.9.9.0", 24)]))),
    ])],
    traffic: [Flow((src: "h0", dst: "h1", size: 100000))],
)"#,
    );
    assert_eq!(
        e,
        format!(
            "{}:4:47: chip `sw0`: control 1 (table `ipv4_lpm`), at 1000.000 ns, was refused: \
             table Ingress.ipv4_lpm has no entry with this key",
            path.display()
        )
    );
}

/// A host name the topology does not have is refused at its traffic entry, and the error
/// names the topology's first and last hosts, so a wrong guess at a shape's naming shows the
/// right one.
#[test]
fn an_unknown_host_is_refused_with_the_hosts_named() {
    let e = refusal(r#"Flow((src: "h0", dst: "h0_1", size: 1000))"#, "");
    assert_eq!(
        e,
        "traffic[0]: no host named `h0_1` (the 3 hosts are `h0` to `h2`)"
    );
}

/// A chip that wakes itself without end (BFC's periodic packet generator, FBA's control
/// agent) needs an end time: without one the run would never run out of events (it spun
/// forever before), whatever its flows do.
#[test]
fn endless_chip_events_need_an_end_time() {
    for (chip, deploy, says) in [
        (
            "tofino2-like",
            "Bfc(())",
            "stop.at_ns: chip `sw0` has packet-generator application 0 with a period and no count",
        ),
        (
            "../fb/fb-48x10g.ron",
            "Fb((buffer: Fba(period_ns: 1000)))",
            "stop.at_ns: chip `sw0` has 1 control agent(s)",
        ),
    ] {
        for stop in [
            "(when_flows_complete: false)",
            "(when_flows_complete: true)",
        ] {
            let text = format!(
                r#"(
                topology: Generate((shape: SingleSwitch(hosts: 2), chip: "{chip}")),
                deploy: {deploy},
                traffic: [{FLOW}],
                stop: {stop},
            )"#
            );
            let s: NetScenario = ron::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
            let err = asic_deploy::run::run_detailed(s, std::path::Path::new("programs/net"), None)
                .err()
                .expect("refused");
            assert!(err.contains(says), "{deploy} {stop}: {err}");
        }
    }
}

/// A route set by hand that names no chip, no host, a port without a link, or a second
/// route of a chip to a host is refused, placed where the route says it.
#[test]
fn bad_routes_set_by_hand_are_placed_in_the_file() {
    let cases = [
        (
            r#"(chip: "sx", dst: "b", port: 1)"#,
            "routes[1] (sx to b): chip: no chip named `sx`",
        ),
        (
            r#"(chip: "sw", dst: "c", port: 1)"#,
            "routes[1] (sw to c): dst: no host named `c`",
        ),
        (
            r#"(chip: "sw", dst: "b", port: 7)"#,
            "routes[1] (sw to b): port: `sw` has no link on port 7",
        ),
        (
            r#"(chip: "sw", dst: "a", port: 1)"#,
            "routes[1] (sw to a): a second route of `sw` to `a`",
        ),
    ];
    for (i, (route, want)) in cases.into_iter().enumerate() {
        let (path, e) = run_file(
            &format!("routes{i}"),
            &format!(
                r#"(
    topology: Explicit((
        chips: [(name: "sw", profile: "teaching")],
        hosts: [(name: "a", ip: "10.0.0.1"), (name: "b", ip: "10.0.0.2")],
        links: [(a: "a", b: "sw:0", gbps: 10, delay_ns: 10), (a: "b", b: "sw:1", gbps: 10, delay_ns: 10)],
        routes: [(chip: "sw", dst: "a", port: 1),
                 {route}],
    )),
)"#
            ),
        );
        let line = format!("{}:7:", path.display());
        assert!(e.starts_with(&line) && e.contains(want), "{e}");
    }
}
