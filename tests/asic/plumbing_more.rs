//! More chip plumbing (issue #6's remaining acceptance points): the egress FIFO as the binding
//! limit of the AFC leak and of a port's rate, a saturated recirculation port, per-queue pause
//! frames obeyed by the receiving chip's program (`tests/programs/qpause.p4`), and the packet
//! generator sharing the ingress issue slot. Expectations are computed from the profile.
//! Programs: `tests/programs/plumbing.p4` (its control header, see `tests/asic/plumbing.rs`) and
//! `tests/programs/qpause.p4`.

use crate::common::plumbing::{afc, bench, compile, conserved, feed_line_rate, Ctl};
use crate::common::*;
use asic_bench::bench::{Bench, Departure};
use asic_model::chip::{Chip, ChipConfig, ChipEvent, DropReason, PktGenApp, Wire};
use asic_model::kernel::EventQueue;
use asic_model::mac::{frame_time, slot_time};
use asic_model::profile::ChipProfile;
use asic_net::ctrl;
use pipelines::time::Time;
use tm::config::{AdmissionPolicy, QueueConfig, TmConfig};
use tm::Refusal;

fn starts_on(b: &Bench, port: u16) -> Vec<Time> {
    b.departures()
        .iter()
        .filter(|d| d.port == port)
        .map(|d| d.start)
        .collect()
}

/// The teaching chip with a large buffer, an egress FIFO of `fifo` packets, and the
/// deparser stretched so that plumbing.p4's egress pipe takes exactly `egress_cycles`.
fn fifo_profile(fifo: u32, egress_cycles: u64) -> ChipProfile {
    let mut p = chip("teaching");
    p.tm.cells = 20_000;
    p.plumbing.egress_fifo_packets = fifo;
    let probe = Chip::new(p.clone(), &compile("tests/programs/plumbing.p4", &p)).unwrap();
    let base = probe.egress_latency_cycles() - p.pipe.latency.deparser_cycles as u64;
    assert!(egress_cycles > base);
    p.pipe.latency.deparser_cycles = (egress_cycles - base) as u32;
    p
}

/// 101-byte frames: 125 bytes on the wire with the gap, exactly 100 ns at 10 Gb/s.
const LEN: usize = 101;
/// Frames per feeding port.
const N: u64 = 40;

/// Ports 2 and 3 at line rate to port 1 queue 0 (twice what port 1 can send), plus the
/// frames `extra` on port 0.
fn backlog_run(profile: &ChipProfile, extra: Vec<(Time, Vec<u8>)>) -> Bench {
    let program = compile("tests/programs/plumbing.p4", profile);
    let mut b = bench(profile, &program, ChipConfig::default());
    feed_line_rate(
        &mut b,
        &[2, 3],
        N,
        LEN,
        10,
        Ctl {
            port: 1,
            ..Ctl::default()
        },
    );
    if !extra.is_empty() {
        b.add_frames(0, extra).unwrap();
    }
    let r = b.run().unwrap();
    conserved(&r);
    b
}

/// A backlogged port with an egress FIFO of `F` packets and an egress pipe of `L_e`: after
/// the TM serves a packet, the next one may be served only when fewer than `F` are served and
/// not started on the wire, i.e. when the `F`-th previous one starts. So start `k` is
/// `max(start[k−1] + slot, start[k−F] + L_e)`: `F` packets every `max(F·slot, L_e)`, line rate
/// exactly when `L_e ≤ F·slot`, else `F·slot / L_e` of it.
#[test]
fn a_small_egress_fifo_sets_the_rate_f_packets_per_max_of_f_slots_and_egress_latency() {
    let slot = slot_time(LEN, 10);
    assert_eq!(slot, Time::from_ns(100));
    let f = 3u64;
    for le in [300u64, 301, 450] {
        let profile = fifo_profile(f as u32, le);
        let b = backlog_run(&profile, Vec::new());
        let clock = b.chip().clock();
        assert_eq!(b.chip().egress_latency_cycles(), le);
        let le_t = clock.time_of(le);
        let s = starts_on(&b, 1);
        assert_eq!(s.len() as u64, 2 * N);
        let period = Time((f * slot.ps()).max(le_t.ps()));
        for k in f as usize..s.len() {
            assert_eq!(s[k] - s[k - f as usize], period, "L_e {le}: start {k}");
            assert!(s[k] - s[k - 1] >= slot);
        }
        let span = *s.last().unwrap() - s[0];
        println!(
            "FIFO {f}, slot {} ns, L_e {le} ns: {f} packets every {} ns measured (expected max({f}·slot, L_e) = {} ns): {}/1000 of line rate",
            slot.ns(),
            (s[s.len() - 1] - s[s.len() - 1 - f as usize]).ns(),
            period.ns(),
            f * slot.ps() * 1000 / period.ps()
        );
        if le <= f * 100 {
            assert_eq!(span, Time((s.len() as u64 - 1) * slot.ps()), "line rate");
        } else {
            assert!(span > Time((s.len() as u64 - 1) * slot.ps()));
        }
    }
}

/// AFC with the egress FIFO as the binding limit: the FIFO (3) is smaller than what the
/// egress pipe holds under just-in-time pacing (`⌈L_e / slot⌉` = 5), so when the pause
/// reaches the TM exactly `F` packets of the queue are served and not yet on the wire: those
/// `F` leave, and nothing more until the resume.
#[test]
fn afc_leak_is_exactly_the_egress_fifo_when_the_fifo_binds() {
    let (f, le) = (3u32, 450u64);
    let profile = fifo_profile(f, le);
    let slot = slot_time(LEN, 10);
    let clock = pipelines::time::Clock::new(profile.clock_hz);
    let le_t = clock.time_of(le);
    // Under pacing alone the pipe would hold ⌈L_e / slot⌉ packets: more than the FIFO.
    let paced_in_flight = le_t.ps().div_ceil(slot.ps());
    assert!(paced_in_flight > f as u64);
    // The request packets (to port 100: dropped after ingress, but the AFC request stands)
    // arrive in cycles where no data frame does (data arrive at k·100 + 90.4 ns).
    let small = 64;
    let (pause_at, resume_at) = (Time(2_989_200), Time(5_989_200));
    let req = |credit| {
        Ctl {
            port: 100,
            afc: afc(1, 0, credit),
            ..Ctl::default()
        }
        .frame(small)
    };
    let b = backlog_run(&profile, vec![(pause_at, req(0)), (resume_at, req(1))]);
    let chip = b.chip();
    assert_eq!(chip.plumbing_counters().afc_requests, 2);
    assert_eq!(chip.drops(DropReason::InvalidEgressPort), 2);
    let li = chip.ingress_latency_cycles();
    let afc_lat = clock.time_of(profile.plumbing.afc_latency_cycles as u64);
    let reach = |t0: Time| {
        let t1 = t0 + frame_time(small, 10);
        clock.time_of(clock.cycle_at_or_after(t1) + li) + afc_lat
    };
    let (paused, resumed) = (reach(pause_at), reach(resume_at));
    let s = starts_on(&b, 1);
    assert_eq!(s.len() as u64, 2 * N);
    assert!(
        !s.contains(&paused),
        "the pause does not coincide with a start"
    );
    let leaked: Vec<Time> = s
        .iter()
        .copied()
        .filter(|&t| t > paused && t < resumed)
        .collect();
    println!(
        "pause reaches the TM at {paused}, resume at {resumed}; leaked after the pause: {} (FIFO {f}; pacing alone would allow {paced_in_flight})",
        leaked.len()
    );
    assert_eq!(leaked.len() as u32, f, "exactly the FIFO's packets leave");
    // They were all served before the pause: each started within L_e of it.
    assert!(leaked.iter().all(|&t| t - paused < le_t));
    // Nothing else until the resume; then the first packet is served at once.
    let first_after = *s.iter().find(|&&t| t >= resumed).unwrap();
    assert_eq!(
        first_after,
        clock.time_of(clock.cycle_at_or_after(resumed) + le)
    );
    // With the profile's own FIFO (64) the pipe holds more: the FIFO was what bound it.
    let mut roomy = profile.clone();
    roomy.plumbing.egress_fifo_packets = 64;
    let b = backlog_run(&roomy, vec![(pause_at, req(0)), (resume_at, req(1))]);
    let s = starts_on(&b, 1);
    let leaked_roomy = s.iter().filter(|&&t| t > paused && t < resumed).count() as u64;
    // There the port ran at line rate, each packet served exactly L_e before its start: the
    // leak is the starts of the back-to-back train that fall in (pause, pause + L_e).
    let last_before = *s.iter().rfind(|&&t| t < paused).unwrap();
    let expect_roomy = (1..)
        .take_while(|m| last_before + Time(m * slot.ps()) < paused + le_t)
        .count() as u64;
    println!(
        "with a 64-packet FIFO: {leaked_roomy} leak (expected {expect_roomy}, at most ⌈L_e/slot⌉ = {paced_in_flight})"
    );
    assert_eq!(leaked_roomy, expect_roomy);
    assert!(leaked_roomy > f as u64 && leaked_roomy <= paced_in_flight);
}

/// Three front ports at line rate recirculate every packet once through pipe 0's
/// recirculation port (as fast as one of them): the port sends back to back at its own
/// speed, its queue grows to its static limit, and then the TM refuses with `QueueLimit`.
#[test]
fn saturated_recirculation_port_sends_at_its_bandwidth_builds_its_queue_then_refuses() {
    let mut profile = chip("teaching");
    profile.tm.cells = 1_000;
    let limit = 60u32; // cells: 20 packets of 200 bytes (3 cells of 80)
    let config = ChipConfig {
        tm: TmConfig {
            admission: AdmissionPolicy::Static,
            default_queue: QueueConfig {
                static_limit_cells: Some(limit),
                ..QueueConfig::default()
            },
            ..TmConfig::default()
        },
        ..ChipConfig::default()
    };
    let program = compile("tests/programs/plumbing.p4", &profile);
    let mut chip = Chip::with_config(profile.clone(), &program, config).unwrap();
    let rp = chip.recirc_port(0, 0).unwrap();
    let (n, len) = (60u64, 200usize);
    let cells = (len as u32).div_ceil(profile.tm.cell_bytes);
    let slot = slot_time(len, 10);
    let mut q: EventQueue<ChipEvent> = EventQueue::new();
    let inputs = [0u16, 2, 3];
    for k in 0..n {
        for &port in &inputs {
            // Back out of the port it came in on, after one pass through recirculation.
            let frame = Ctl {
                loops: 1,
                port,
                ..Ctl::default()
            }
            .frame(len);
            chip.receive(port, Time(k * slot.ps()), &frame, 0, &mut q)
                .unwrap();
        }
    }
    struct Sink(Vec<Departure>);
    impl Wire for Sink {
        fn transmit(&mut self, port: u16, start: Time, frame: &[u8]) {
            self.0.push(Departure {
                port,
                start,
                data: frame.to_vec(),
            });
        }
    }
    let mut wire = Sink(Vec::new());
    let refused = DropReason::Tm(Refusal::QueueLimit);
    let mut first_refusal: Option<(Time, u32)> = None;
    let mut peak_before_refusal = 0u32;
    while let Some((now, ev)) = q.pop() {
        let depth = chip.tm().depth(rp, 0).0;
        let drops = chip.drops(refused);
        chip.handle(now, ev, &mut q, &mut wire);
        if first_refusal.is_none() {
            if chip.drops(refused) > drops {
                first_refusal = Some((now, depth));
            } else {
                peak_before_refusal = peak_before_refusal.max(chip.tm().depth(rp, 0).0);
            }
        }
    }
    assert_eq!(chip.packets_inside(), 0);
    let (t_refusal, depth_at_refusal) = first_refusal.expect("the TM refused packets");
    // The queue grew to the limit before the first refusal, and that refusal was for lack of
    // room under the limit.
    assert!(depth_at_refusal + cells > limit);
    assert_eq!(
        depth_at_refusal, limit,
        "20 packets of 3 cells: exactly full"
    );
    assert_eq!(peak_before_refusal, depth_at_refusal);
    assert!(chip.tm().queue_counters(rp, 0).max_depth_cells <= limit);
    // Every refusal is the TM's, on the recirculation port's queue; no other drop.
    let dropped = chip.drops(refused);
    assert!(dropped > 0);
    assert_eq!(
        chip.tm().queue_counters(rp, 0).drops[Refusal::QueueLimit as usize],
        dropped
    );
    let all_drops: u64 = DropReason::ALL.iter().map(|&r| chip.drops(r)).sum();
    assert_eq!(all_drops, dropped);
    // The recirculation port: every admitted packet, back to back at its speed.
    let c = *chip.port_counters(rp);
    let offered = n * inputs.len() as u64;
    assert_eq!(c.tx_packets, offered - dropped);
    // Admitted: one per recirculation slot over the n slots of arrivals (the port drains as
    // fast as one input fills), plus the full queue left when the arrivals stop.
    assert_eq!(c.tx_packets, n + (limit / cells) as u64);
    assert_eq!(c.rx_packets, c.tx_packets);
    let recirc_slot = slot_time(len, profile.recirculation.speed_gbps);
    assert_eq!(
        c.last_tx.unwrap() - c.first_tx.unwrap(),
        Time((c.tx_packets - 1) * recirc_slot.ps())
    );
    // Conservation: front-panel in = front-panel out + dropped (nothing created).
    let front_in: u64 = (0..4).map(|p| chip.port_counters(p).rx_packets).sum();
    let front_out: u64 = (0..4).map(|p| chip.port_counters(p).tx_packets).sum();
    assert_eq!(front_in, offered);
    assert_eq!(front_in, front_out + dropped);
    assert_eq!(wire.0.len() as u64, front_out);
    println!(
        "offered {offered} at 3x the recirculation bandwidth; queue reached {depth_at_refusal} cells (limit {limit}) by {t_refusal}; refused {dropped} (QueueLimit); recirculated {} back to back every {} ps",
        c.tx_packets,
        recirc_slot.ps()
    );
}

/// qpause.p4's data frames: Ethernet (EtherType 0x88B6), port, queue, then a sequence number.
fn data_frame(port: u16, qid: u8, seq: u16, len: usize) -> Vec<u8> {
    let mut v = Vec::with_capacity(len);
    v.extend_from_slice(&[2, 0, 0, 0, 0, 1]);
    v.extend_from_slice(&[2, 0, 0, 0, 0, 2]);
    v.extend_from_slice(&0x88B6u16.to_be_bytes());
    v.extend_from_slice(&port.to_be_bytes());
    v.push(qid);
    v.extend_from_slice(&seq.to_be_bytes());
    v.resize(len, 0x5a);
    v
}

fn qid_of(d: &Departure) -> u8 {
    d.data[16]
}
fn seq_of(d: &Departure) -> u16 {
    u16::from_be_bytes([d.data[17], d.data[18]])
}

/// A per-queue pause frame (net/src/ctrl.rs, EtherType 0x88B5) received on port 1 is turned
/// by the chip's program into an AFC request for port 1's named queue: that queue stops at
/// `rx end → issue + L_i + afc_latency` (what the TM served before still leaves), the other
/// queue of the port keeps its exact timing, and after the resume frame the paused queue
/// sends again.
#[test]
fn per_queue_pause_frames_are_obeyed_by_the_receiving_chips_program() {
    let mut profile = chip("teaching");
    profile.tm.cells = 2_000;
    let program = compile("tests/programs/qpause.p4", &profile);
    let mut b = bench(&profile, &program, ChipConfig::default());
    let (li, le) = (
        b.chip().ingress_latency_cycles(),
        b.chip().egress_latency_cycles(),
    );
    let clock = b.chip().clock();
    let cyc = |n: u64| clock.time_of(n);
    let afc_lat = profile.plumbing.afc_latency_cycles as u64;
    // 476-byte frames: 500 bytes on the wire with the gap, 400 ns at 10 Gb/s. Port 2 sends to
    // port 1 queue 0 every 800 ns, port 3 to queue 1 in between: together exactly port 1's
    // line rate, so each packet is served as soon as ingress is done with it.
    let len = 476;
    let slot = slot_time(len, 10);
    assert_eq!(slot, Time::from_ns(400));
    let n = 50u64;
    let t0 = |k: u64, q: u64| Time::from_ns(800 * k + 400 * q);
    for q in 0..2u64 {
        let frames = (0..n)
            .map(|k| (t0(k, q), data_frame(1, q as u8, k as u16, len)))
            .collect();
        b.add_frames(2 + q as u16, frames).unwrap();
    }
    // Ingress issue cycle (no contention: the feeds and the control frames arrive in
    // different cycles) and TM service time of data frame k of queue q.
    let issue = |t: Time, l: usize| clock.cycle_at_or_after(t + frame_time(l, 10));
    let served = |k: u64, q: u64| cyc(issue(t0(k, q), len) + li);
    // The pause frame for queue 0 is issued 5 cycles before queue-0 frame 12: that frame
    // still reaches the TM before the request (afc latency 8 > 5) and leaks; frame 13 waits.
    let ctrl_len = 60;
    assert!(
        afc_lat > 5 && afc_lat - 5 < le,
        "frame 12 is served, and still in the egress pipe, when the pause applies"
    );
    let pause_issue = issue(t0(12, 0), len) - 5;
    let pause_at = cyc(pause_issue) - frame_time(ctrl_len, 10);
    // The resume frame reaches the TM between two queue-1 frames, with the port idle.
    let resume_at = Time::from_ns(30_024) + Time(400);
    let src = [2, 0, 0, 0, 0, 0x77];
    b.add_frames(
        1,
        vec![
            (pause_at, ctrl::build_queue(src, 0, true)),
            (resume_at, ctrl::build_queue(src, 0, false)),
        ],
    )
    .unwrap();
    let r = b.run().unwrap();
    conserved(&r);
    let chip = b.chip();
    assert_eq!(chip.plumbing_counters().afc_requests, 2);
    assert_eq!(
        chip.drops(DropReason::IngressProgramDrop),
        2,
        "control frames dropped"
    );
    assert_eq!(r.packets_out(), 2 * n, "no control frame leaves");
    let reach = |t: Time| cyc(issue(t, ctrl_len) + li + afc_lat);
    let (paused, resumed) = (reach(pause_at), reach(resume_at));
    assert_eq!(paused + cyc(5), served(12, 0) + cyc(afc_lat));
    let out: Vec<&Departure> = b.departures().iter().filter(|d| d.port == 1).collect();
    assert_eq!(out.len() as u64, 2 * n);
    let q0: Vec<&Departure> = out.iter().copied().filter(|d| qid_of(d) == 0).collect();
    let q1: Vec<&Departure> = out.iter().copied().filter(|d| qid_of(d) == 1).collect();
    // Queue 1 never notices: every frame leaves as a lone packet would.
    for d in &q1 {
        let k = seq_of(d) as u64;
        let expect = served(k, 1) + cyc(le);
        if d.start < resumed {
            assert_eq!(d.start, expect, "queue 1 frame {k}");
        }
    }
    assert!(
        q1.iter()
            .filter(|d| d.start > paused && d.start < resumed)
            .count()
            > 20
    );
    // Queue 0: frames served before the pause reached the TM leave as usual (frame 12, served
    // 3 cycles before, is in the egress pipe when the pause applies: the leak); the next one
    // waits until the resume.
    let before: Vec<u64> = q0
        .iter()
        .filter(|d| d.start < resumed)
        .map(|d| seq_of(d) as u64)
        .collect();
    assert_eq!(before, (0..=12).collect::<Vec<_>>());
    for d in q0.iter().filter(|d| d.start < resumed) {
        let k = seq_of(d) as u64;
        assert!(served(k, 0) < paused);
        assert_eq!(d.start, served(k, 0) + cyc(le));
    }
    assert!(served(13, 0) > paused);
    let last_before = q0[12].start;
    assert!(last_before > paused, "frame 12 leaked past the pause");
    // After the resume: the oldest waiting frame is served at once, then the rest in order.
    let after: Vec<&&Departure> = q0.iter().filter(|d| d.start >= resumed).collect();
    assert_eq!(seq_of(after[0]), 13);
    assert_eq!(after[0].start, cyc(clock.cycle_at_or_after(resumed) + le));
    assert_eq!(
        after.iter().map(|d| seq_of(d) as u64).collect::<Vec<_>>(),
        (13..n).collect::<Vec<_>>()
    );
    println!(
        "pause rx end {} -> TM {paused}; queue 0 last start {last_before} (frame 12, leaked), frame 13 waited from {} to {}; resume -> TM {resumed}",
        cyc(pause_issue),
        served(13, 0),
        after[0].start
    );
}

/// A periodic generator and a front-panel packet that reach pipe 0's ingress in the same
/// cycle share its one issue slot: one of them is issued a cycle later and leaves a cycle
/// later. The generator's tick for `start + k·period` was scheduled a whole period earlier
/// than the frame's arrival (scheduled when the frame began, 60.8 ns before), so it goes
/// first and the port's packet is the one that waits.
#[test]
fn generated_and_port_packets_share_the_ingress_issue_slot() {
    let profile = chip("teaching");
    let (start_ns, period_ns, count) = (1_000u64, 1_000u64, 4u64);
    let config = ChipConfig {
        pktgen: vec![PktGenApp {
            pipe: 0,
            template: Ctl {
                port: 1,
                ..Ctl::default()
            }
            .frame(64),
            period_ns: Some(period_ns),
            start_ns,
            count: Some(count),
            at_ns: vec![],
        }],
        ..ChipConfig::default()
    };
    let program = compile("tests/programs/plumbing.p4", &profile);
    let mut b = bench(&profile, &program, config);
    let len = 64;
    let ticks: Vec<Time> = (0..count)
        .map(|k| Time::from_ns(start_ns + k * period_ns))
        .collect();
    // Port 0's frames arrive whole exactly at the ticks (to port 2), plus one at 5.5 us that
    // meets no generated packet.
    let lone = Time::from_ns(5_500);
    let frames = ticks
        .iter()
        .chain([&lone])
        .map(|&t| {
            (
                t - frame_time(len, 10),
                Ctl {
                    port: 2,
                    ..Ctl::default()
                }
                .frame(len),
            )
        })
        .collect();
    b.add_frames(0, frames).unwrap();
    let r = b.run().unwrap();
    conserved(&r);
    let chip = b.chip();
    let clock = chip.clock();
    let lat = chip.ingress_latency_cycles() + chip.egress_latency_cycles();
    let at = |t: Time, late: u64| clock.time_of(clock.cycle_at_or_after(t) + late + lat);
    let generated: Vec<Time> = ticks.iter().map(|&t| at(t, 0)).collect();
    let from_port: Vec<Time> = ticks
        .iter()
        .map(|&t| at(t, 1))
        .chain([at(lone, 0)])
        .collect();
    assert_eq!(starts_on(&b, 1), generated);
    assert_eq!(starts_on(&b, 2), from_port);
    assert_eq!(chip.ingress_issued(0), 2 * count + 1);
    assert_eq!(chip.plumbing_counters().generated, count);
}
