//! The time base: one packet per cycle per pipe, and idle time that costs nothing.

use crate::common::*;
use asic_bench::bench::Bench;
use asic_model::mac::frame_time;
use pipelines::time::{Clock, Time};

/// Two frames complete on two ports of one pipe in the same cycle: the second is issued
/// one cycle after the first, and so leaves exactly one cycle later.
#[test]
fn a_pipe_issues_one_packet_per_cycle() {
    let profile = chip("teaching");
    let (program, entries) = l3router(&profile);
    let mut bench = Bench::new(profile.clone(), &program, &entries).unwrap();
    bench.keep_departures();
    bench
        .add_frames(0, vec![(Time::ZERO, udp_frame([10, 0, 1, 1], 64, 64))])
        .unwrap();
    bench
        .add_frames(2, vec![(Time::ZERO, udp_frame([10, 0, 3, 1], 64, 64))])
        .unwrap();
    let report = bench.run().unwrap();
    let clock = Clock::new(profile.clock_hz);
    let lat = report.ingress_latency_cycles + report.egress_latency_cycles;
    let first = clock.cycle_at_or_after(frame_time(64, profile.ports_per_pipe[0].speed_gbps));
    let d = bench.departures();
    assert_eq!((d[0].port, d[0].start), (1, clock.time_of(first + lat)));
    assert_eq!((d[1].port, d[1].start), (3, clock.time_of(first + 1 + lat)));
}

/// The kernel jumps over idle time: a packet ten simulated seconds later costs the same
/// events and leaves exactly ten seconds later.
#[test]
fn idle_time_costs_no_events() {
    let profile = chip("tofino1-like");
    let (program, entries) = l3router(&profile);
    let run = |at: Time| {
        let mut bench = Bench::new(profile.clone(), &program, &entries).unwrap();
        bench.keep_departures();
        bench
            .add_frames(0, vec![(at, udp_frame([10, 0, 1, 1], 64, 1500))])
            .unwrap();
        let report = bench.run().unwrap();
        (report.events, bench.departures()[0].start)
    };
    let (events_now, t_now) = run(Time::ZERO);
    let ten_s = Time(10 * pipelines::time::PS_PER_SEC);
    let (events_later, t_later) = run(ten_s);
    assert_eq!(events_now, events_later);
    assert_eq!(t_later - t_now, ten_s);
}
