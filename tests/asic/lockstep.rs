//! Lockstep mode against the event-driven engine: on random small scenarios, a chip that
//! visits every cycle runs the same events in the same order and sends the same frames at
//! the same times as one that jumps from event to event; a network gives the same record.

use crate::common::*;
use asic_bench::bench::Bench;
use asic_bench::scenario::{Generator, Template, UdpTemplate};
use asic_deploy::{run as net, scenario::NetScenario};
use proptest::prelude::*;
use std::path::Path;

/// One input port's traffic: (port, packets, size, start ns, rate Gb/s, destination port).
type Input = (u16, u64, usize, u64, u32, u8);

fn bench(inputs: &[Input], frames: &[(u64, Vec<u8>)], lockstep: bool) -> Bench {
    let prof = chip("teaching");
    let (prog, entries) = l3router(&prof);
    let mut b = Bench::new(prof, &prog, &entries).unwrap();
    b.set_lockstep(lockstep);
    b.keep_departures();
    b.keep_trace();
    for &(port, count, size, start_ns, rate, dst) in inputs {
        b.add_generator(
            port,
            &Generator {
                count,
                size,
                start_ns,
                rate_gbps: Some(rate),
                packet: Template::Udp(UdpTemplate {
                    src_ip: format!("10.0.{port}.1"),
                    dst_ip: format!("10.0.{dst}.7"),
                    ..UdpTemplate::default()
                }),
            },
        )
        .unwrap();
    }
    // The pcap's odd frames (TTL 1, truncated, bridged, unrouted) on the one free port.
    let used: Vec<u16> = inputs.iter().map(|i| i.0).collect();
    if let Some(free) = (0..4).find(|p| !used.contains(p)) {
        let f = frames
            .iter()
            .map(|(ns, d)| (pipelines::time::Time::from_ns(*ns), d.clone()))
            .collect();
        b.add_frames(free, f).unwrap();
    }
    b
}

fn inputs() -> impl Strategy<Value = Vec<Input>> {
    let one = (0u64..40, 64usize..400, 0u64..3000, 1u32..=10, 0u8..4);
    prop::collection::vec(one, 1..4).prop_map(|v| {
        v.into_iter()
            .enumerate()
            .map(|(i, (n, size, start, rate, dst))| (i as u16, n, size, start, rate, dst))
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Random generators (ports, counts, sizes, start times, rates, destinations, so
    /// congestion and DT drops happen on the tiny `teaching` buffer) plus the pcap's odd
    /// frames: identical event trace, departures and report in both modes, and lockstep
    /// visited every cycle from 0 to the last event.
    #[test]
    fn lockstep_and_event_driven_agree(ins in inputs()) {
        let frames = in1_frames();
        let mut fast = bench(&ins, &frames, false);
        let mut slow = bench(&ins, &frames, true);
        let a = fast.run().unwrap();
        let mut b = slow.run().unwrap();
        prop_assert_eq!(fast.trace(), slow.trace());
        prop_assert_eq!(fast.departures(), slow.departures());
        let l = b.lockstep.take().expect("lockstep counters");
        prop_assert_eq!(&a, &b);
        prop_assert!(a.lockstep.is_none());
        let clock = fast.chip().clock();
        let last = clock.cycle_at_or_before(pipelines::time::Time(a.end_ps));
        prop_assert_eq!(l.cycles, last + 1);
        prop_assert_eq!(l.last_cycle, last);
        prop_assert_eq!(slow.chip().lockstep_counters(), l);
        // The per-cycle reference agreed with the event engine at every edge.
        prop_assert_eq!(l.violations, 0, "{:?}", slow.chip().lockstep_violation());
        if a.packets_out() > 0 {
            prop_assert!(l.ingress_packet_cycles > 0 && l.egress_packet_cycles > 0);
        }
    }
}

/// A small loaded leaf-spine: the same record (flows, series, drops) and event count in
/// both modes; lockstep visited every cycle of all four chips.
#[test]
fn a_network_in_lockstep_gives_the_same_record() {
    let text = r#"(
        seed: 5,
        topology: Generate((shape: LeafSpine(leaves: 2, spines: 2, hosts_per_leaf: 2),
                            chip: "teaching", delay_ns: 500)),
        deploy: Routers(Ecmp),
        transport: NewReno((min_rto_us: 50.0)),
        traffic: [Flows((size: Cdf("google_rpc"), load: 0.7, stop_ns: 20000))],
        sample_period_ns: Some(1000),
        stop: (at_ns: Some(40000), when_flows_complete: false),
    )"#;
    let run = |lockstep: bool, threads: usize| {
        let s: NetScenario = ron::from_str(text).unwrap();
        let opts = net::RunOptions {
            pcap_dir: None,
            lockstep,
            trace: None,
            threads,
        };
        net::run_observed(s, Path::new(""), opts, &mut ()).unwrap()
    };
    let (a, b) = (run(false, 1), run(true, 1));
    // Each thread visits its own chips' cycles: the same visits on three threads.
    let c = run(true, 3);
    assert_eq!(c.record, b.record);
    assert_eq!(
        (c.lockstep_cycles, c.lockstep_violations),
        (b.lockstep_cycles, (0, None))
    );
    assert_eq!(a.record, b.record);
    assert_eq!(a.events, b.events);
    assert_eq!(a.switch_hops, b.switch_hops);
    assert!(a.switch_hops > 100, "{} hops", a.switch_hops);
    assert_eq!(a.lockstep_cycles, 0);
    assert_eq!(b.lockstep_violations, (0, None));
    // Two leaves and two spines, 40 µs each at the teaching chip's clock, cycle 0 included.
    let hz = asic_model::profile::load("teaching").unwrap().clock_hz;
    let end = pipelines::time::Time::from_ns(40000);
    let per_chip = pipelines::time::Clock::new(hz).cycle_at_or_before(end) + 1;
    assert_eq!(b.lockstep_cycles, 4 * per_chip);
}
