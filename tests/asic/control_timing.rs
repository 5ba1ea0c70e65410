//! A scheduled control-plane operation takes effect at exactly the cycle it names, at the
//! stage it changes.

use crate::common::*;
use asic_bench::bench::Bench;
use asic_model::mac::frame_time;
use pipelines::control::{resolve_op, ControlOp};
use pipelines::entries::{EntrySpec, KeySpec, Value};
use pipelines::pipe::stage_features;
use pipelines::time::{Clock, Time};

/// Two packets to 10.1.9.1 (no route until the scheduled one); returns which ports they
/// left from (None: dropped) when the route is installed at `t_install`.
fn run(t_install: Time) -> Vec<u16> {
    let profile = chip("teaching");
    let (program, entries) = l3router(&profile);
    let mut bench = Bench::new(profile, &program, &entries).unwrap();
    bench.keep_departures();
    let op = ControlOp::AddEntry(EntrySpec {
        table: "ipv4_lpm".into(),
        key: vec![KeySpec::Lpm(Value::Text("10.1.9.0".into()), 24)],
        action: "set_nexthop".into(),
        args: vec![Value::Int(3), Value::Int(1), Value::Int(2)],
        priority: 0,
    });
    bench.schedule_control(t_install, resolve_op(&program, &op).unwrap());
    let f = udp_frame([10, 1, 9, 1], 64, 64);
    bench
        .add_frames(0, vec![(Time::ZERO, f.clone()), (Time::from_ns(100), f)])
        .unwrap();
    bench.run().unwrap();
    bench.departures().iter().map(|d| d.port).collect()
}

#[test]
fn a_route_added_at_t_is_seen_by_packets_reaching_its_stage_from_t_on() {
    let profile = chip("teaching");
    let (program, _) = l3router(&profile);
    let clock = Clock::new(profile.clock_hz);
    let gbps = profile.ports_per_pipe[0].speed_gbps;
    // The second packet's issue cycle, and the cycle it reaches ipv4_lpm's stage.
    let issue = clock.cycle_at_or_after(Time::from_ns(100) + frame_time(64, gbps));
    let c = &program.ingress.control;
    let stage = c
        .tables
        .iter()
        .find(|t| t.name.ends_with("ipv4_lpm"))
        .unwrap()
        .stage as u32;
    let lat = &profile.pipe.latency;
    let before: u32 = (0..stage as u16)
        .map(|s| lat.stage_cycles(stage_features(c, s)))
        .sum();
    let at_stage = issue + (lat.parser_cycles + before) as u64;

    // Installed exactly when the second packet is in the stage: it is routed, the first not.
    assert_eq!(run(clock.time_of(at_stage)), vec![3]);
    // One cycle later: both miss (the default action drops them).
    assert_eq!(run(clock.time_of(at_stage + 1)), Vec::<u16>::new());
    // Before the first packet reaches the stage: both are routed.
    assert_eq!(run(Time::ZERO), vec![3, 3]);
}
