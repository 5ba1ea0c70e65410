//! Ports brought up below their profile speed (`ChipConfig::port_speeds`): a 400G port of
//! the tofino2-like chip at 100G receives and sends at 100G, to the picosecond the framing
//! arithmetic of `asic_model::mac` gives, and every configuration the chip cannot bring up is
//! refused with an error naming the port and the limit.

use super::{chip_profile, forward_to, forwarder, frame, run};
use asic_model::chip::{Chip, ChipConfig, ChipError, ChipEvent, PortSpeed};
use asic_model::kernel::EventQueue;
use asic_model::mac::{frame_time, slot_time};
use pipelines::program::Program;
use pipelines::time::Time;

/// The chip: 400G front-panel ports.
const PROFILE: &str = "tofino2-like";

/// Frame length (no FCS).
const LEN: usize = 1000;

/// The tofino2-like chip (32 front-panel 400G ports, then 4 recirculation ports, then 4
/// packet-generator ports) running `program`, its ports brought up at `speeds`.
fn with_speeds(program: &Program, speeds: &[(u16, u32)]) -> Result<Chip, ChipError> {
    Chip::with_config(chip_profile(PROFILE), program, config(speeds))
}

/// The default configuration with `speeds`.
fn config(speeds: &[(u16, u32)]) -> ChipConfig {
    ChipConfig {
        port_speeds: speeds
            .iter()
            .map(|&(port, gbps)| PortSpeed { port, gbps })
            .collect(),
        ..ChipConfig::default()
    }
}

/// [`with_speeds`] running the forwarder, forwarding to port 1.
fn chip(speeds: &[(u16, u32)]) -> Chip {
    let profile = chip_profile(PROFILE);
    let program = forwarder(&profile);
    let fwd = forward_to(&program, 1);
    Chip::with_entries(profile, &program, config(speeds), &fwd).unwrap()
}

/// When a lone frame of `LEN` bytes whose first bit reaches a port at `rx_gbps` at `t0`
/// starts leaving: whole at `t1 = t0 + frame_time`, issued at the first cycle edge at or
/// after `t1`, out of the egress deparser `L_i + L_e` cycles later.
fn lone_departure(chip: &Chip, t0: Time, rx_gbps: u32) -> Time {
    let clock = chip.clock();
    let t1 = t0 + frame_time(LEN, rx_gbps);
    let cycles = chip.ingress_latency_cycles() + chip.egress_latency_cycles();
    clock.time_of(clock.cycle_at_or_after(t1) + cycles)
}

#[test]
fn a_400g_port_brought_up_at_100g_receives_a_lone_frame_in_the_100g_frame_time() {
    let mut chip = chip(&[(0, 100)]);
    assert_eq!(chip.port_gbps(0), Some(100));
    assert_eq!(
        chip.port_gbps(1),
        Some(400),
        "ports not listed keep the profile speed"
    );
    let t0 = Time::from_ns(1000);
    let expected = lone_departure(&chip, t0, 100);
    assert_ne!(
        expected,
        lone_departure(&chip, t0, 400),
        "the speeds must tell apart"
    );
    let sent = run(&mut chip, &[(0, t0, frame(LEN))]);
    assert_eq!(sent.0, vec![(1, expected, LEN)]);
}

#[test]
fn a_100g_port_takes_its_next_frame_one_100g_slot_after_the_last() {
    let mut chip = with_speeds(&forwarder(&chip_profile(PROFILE)), &[(0, 100)]).unwrap();
    let mut q: EventQueue<ChipEvent> = EventQueue::new();
    let t0 = Time::from_ns(1000);
    let free = chip.receive(0, t0, &frame(LEN), 0, &mut q).unwrap();
    assert_eq!(free, t0 + slot_time(LEN, 100));
    let early = free - Time(1);
    assert!(matches!(
        chip.receive(0, early, &frame(LEN), 0, &mut q),
        Err(ChipError::PortBusy { port: 0, .. })
    ));
}

#[test]
fn back_to_back_packets_leave_a_100g_port_at_100g_slot_times() {
    let mut chip = chip(&[(1, 100)]);
    // Port 0 at 400G feeds port 1 at 100G four times faster than it can send.
    let n = 24;
    let slot_in = slot_time(LEN, 400);
    let t0 = Time::from_ns(1000);
    let frames: Vec<_> = (0..n)
        .map(|k| (0, t0 + Time(slot_in.ps() * k as u64), frame(LEN)))
        .collect();
    let sent = run(&mut chip, &frames);
    assert_eq!(sent.0.len(), n);
    let first = lone_departure(&chip, t0, 400);
    let slot = slot_time(LEN, 100);
    for (k, &(port, start, len)) in sent.0.iter().enumerate() {
        assert_eq!((port, len), (1, LEN));
        assert_eq!(start, first + Time(slot.ps() * k as u64), "packet {k}");
    }
}

/// The text of [`with_speeds`]'s refusal of `speeds`.
fn refusal(speeds: &[(u16, u32)]) -> String {
    match with_speeds(&forwarder(&chip_profile(PROFILE)), speeds) {
        Ok(_) => panic!("{speeds:?} was accepted"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn a_port_the_chip_lacks_is_refused() {
    assert_eq!(
        refusal(&[(600, 100)]),
        "chip configuration: port_speeds: the chip has no port 600 (front-panel ports are 0 to 31)"
    );
}

#[test]
fn a_recirculation_port_is_refused() {
    assert_eq!(
        refusal(&[(32, 100)]),
        "chip configuration: port_speeds: port 32 is a recirculation port; only front-panel ports are brought up at a speed (front-panel ports are 0 to 31)"
    );
}

#[test]
fn a_packet_generator_port_is_refused() {
    assert_eq!(
        refusal(&[(36, 100)]),
        "chip configuration: port_speeds: port 36 is a packet-generator port; only front-panel ports are brought up at a speed (front-panel ports are 0 to 31)"
    );
}

#[test]
fn zero_is_refused() {
    assert_eq!(
        refusal(&[(3, 0)]),
        "chip configuration: port_speeds: port 3 at 0 Gb/s: it runs at 1 to 400 Gb/s (its profile speed)"
    );
}

#[test]
fn above_the_profile_speed_is_refused_and_the_profile_speed_is_not() {
    assert_eq!(
        refusal(&[(3, 401)]),
        "chip configuration: port_speeds: port 3 at 401 Gb/s: it runs at 1 to 400 Gb/s (its profile speed)"
    );
    assert_eq!(chip(&[(3, 400)]).port_gbps(3), Some(400));
}

#[test]
fn the_same_port_twice_is_refused() {
    assert_eq!(
        refusal(&[(5, 100), (6, 50), (5, 100)]),
        "chip configuration: port_speeds: port 5 is brought up twice"
    );
}

#[test]
fn port_speeds_read_from_ron_and_refuse_unknown_fields() {
    let c: ChipConfig = ron::from_str("(port_speeds: [(port: 2, gbps: 25)])").unwrap();
    assert_eq!(c.port_speeds, vec![PortSpeed { port: 2, gbps: 25 }]);
    assert!(ron::from_str::<ChipConfig>("(port_speeds: [(port: 2, speed: 25)])").is_err());
}
