//! Chip plumbing: recirculation ports, deflect-on-drop, mirroring with truncation,
//! multicast, the packet generator and advanced flow control, on `tests/programs/plumbing.p4`
//! (a control header at the front of each packet says what to ask of the chip).
//! Expectations are computed from the profile.

use crate::common::plumbing::{self, afc, compile, conserved, feed_line_rate, Ctl};
use crate::common::*;
use asic_bench::bench::{Bench, Departure};
use asic_model::chip::{ChipConfig, DodConfig, DropReason, McastGroup, MirrorSession, PktGenApp};
use asic_model::mac::slot_time;
use asic_model::profile::ChipProfile;
use pipelines::time::Time;

fn rid(d: &Departure) -> u16 {
    u16::from_be_bytes([d.data[17], d.data[18]])
}
fn deflected(d: &Departure) -> u8 {
    d.data[19]
}

/// The lengths of the frames that left port `port`, in order.
fn lengths_out_of(b: &Bench, port: u16) -> Vec<usize> {
    b.departures()
        .iter()
        .filter(|d| d.port == port)
        .map(|d| d.data.len())
        .collect()
}

/// A bench running plumbing.p4.
fn bench(profile: &ChipProfile, config: ChipConfig) -> Bench {
    plumbing::bench(
        profile,
        &compile("tests/programs/plumbing.p4", profile),
        config,
    )
}

fn big_teaching() -> ChipProfile {
    let mut p = chip("teaching");
    p.tm.cells = 20_000;
    p
}

#[test]
fn recirculation_is_capped_at_its_bandwidth_and_takes_issue_slots() {
    let profile = big_teaching();
    let mut b = bench(&profile, ChipConfig::default());
    let (n, len) = (40u64, 200usize);
    let gbps = profile.ports_per_pipe[0].speed_gbps;
    // Two ports at line rate, each packet recirculated once: the recirculation port is
    // offered twice its bandwidth.
    feed_line_rate(
        &mut b,
        &[0, 2],
        n,
        len,
        gbps,
        Ctl {
            loops: 1,
            port: 1,
            ..Ctl::default()
        },
    );
    let r = b.run().unwrap();
    conserved(&r);
    let chip = b.chip();
    let rp = chip.recirc_port(0, 0).unwrap();
    assert_eq!(rp, chip.port_count());
    let c = chip.port_counters(rp);
    assert_eq!(c.tx_packets, 2 * n);
    assert_eq!(c.rx_packets, 2 * n);
    assert_eq!(chip.plumbing_counters().recirculated, 2 * n);
    // Backlogged from the second packet on: back to back at the recirculation port's speed.
    let recirc_slot = slot_time(len, profile.recirculation.speed_gbps);
    let span = c.last_tx.unwrap() - c.first_tx.unwrap();
    assert_eq!(span, Time((2 * n - 1) * recirc_slot.ps()));
    // Every pass through ingress took an issue slot: 2n from the MACs, 2n recirculated.
    assert_eq!(chip.ingress_issued(0), 4 * n);
    assert_eq!(
        r.ports.iter().find(|p| p.port == 1).unwrap().tx_packets,
        2 * n
    );
}

#[test]
fn deflected_packets_reach_the_recirculation_port_whole() {
    let profile = chip("teaching"); // 64 cells of 80 bytes
    let config = ChipConfig {
        dod: Some(DodConfig {
            port: None,
            queue: 0,
        }),
        ..ChipConfig::default()
    };
    let mut b = bench(&profile, config);
    let len = 200;
    feed_line_rate(
        &mut b,
        &[0, 2, 3],
        20,
        len,
        10,
        Ctl {
            port: 1,
            dod: 1,
            ..Ctl::default()
        },
    );
    let r = b.run().unwrap();
    conserved(&r);
    let chip = b.chip();
    let deflected_n = chip.plumbing_counters().deflected;
    assert!(deflected_n > 0, "the buffer overflowed");
    let rp = chip.recirc_port(0, 0).unwrap();
    let c = chip.port_counters(rp);
    assert_eq!(c.tx_packets, deflected_n);
    assert_eq!(c.tx_bytes, deflected_n * len as u64, "whole packets");
    let out = b.departures();
    assert!(out.iter().all(|d| d.data.len() == len));
    assert!(
        out.iter().any(|d| deflected(d) == 1),
        "egress saw deflection_flag"
    );
    assert_eq!(chip.drops(DropReason::Tm(tm::Refusal::BufferFull)), 0);
}

/// The trimming paper's UPDATE (Popa et al. §4, Fig. 4): egress mirrors a deflected packet,
/// truncated, to its pipe's recirculation port and drops it: exactly one copy per deflected
/// packet, of the truncation length, and no deflected packet leaves whole.
#[test]
fn a_deflected_packet_mirrored_and_dropped_in_egress_makes_exactly_one_copy() {
    let profile = big_teaching();
    let probe = bench(&profile, ChipConfig::default());
    let rp = probe.chip().recirc_port(0, 0).unwrap();
    drop(probe);
    // Queue 0 holds ten 200-byte packets (3 cells each); deflections and copies use queue 1
    // of the recirculation port, limited by the buffer only.
    let tm: tm::config::TmConfig = ron::from_str(
        "(admission: Static, queues: [(static_limit_cells: Some(30)), (static_limit_cells: None)])",
    )
    .unwrap();
    let config = ChipConfig {
        tm,
        dod: Some(DodConfig {
            port: None,
            queue: 1,
        }),
        mirror_sessions: vec![MirrorSession {
            id: 2,
            port: rp,
            queue: 1,
            truncate_bytes: Some(40),
            mcast_group: None,
        }],
        ..ChipConfig::default()
    };
    let mut b = bench(&profile, config);
    let ctl = Ctl {
        port: 1,
        dod: 1,
        emirror: 2,
        ..Ctl::default()
    };
    feed_line_rate(&mut b, &[0, 2, 3], 20, 200, 10, ctl);
    let r = b.run().unwrap();
    conserved(&r);
    let chip = b.chip();
    let deflected_n = chip.plumbing_counters().deflected;
    assert!(deflected_n > 0, "the buffer overflowed");
    assert_eq!(chip.drops(DropReason::DeflectRefused), 0);
    assert_eq!(chip.plumbing_counters().mirror_copies, deflected_n);
    assert_eq!(chip.drops(DropReason::EgressProgramDrop), deflected_n);
    // Only the copies left through the recirculation port, each 40 bytes.
    let c = chip.port_counters(rp);
    assert_eq!((c.tx_packets, c.tx_bytes), (deflected_n, 40 * deflected_n));
    // Back in ingress, each copy went to port 1 (or was refused there: no second
    // deflection); no deflected packet left whole.
    let out = b.departures();
    let copies_out = out.iter().filter(|d| d.data.len() == 40).count() as u64;
    let tm_drops: u64 = tm::Refusal::ALL
        .iter()
        .map(|&r| chip.drops(DropReason::Tm(r)))
        .sum();
    assert_eq!(copies_out + tm_drops, deflected_n);
    assert!(out.iter().all(|d| d.data.len() == 40 || deflected(d) == 0));
    assert!(out
        .iter()
        .filter(|d| d.data.len() == 40)
        .all(|d| deflected(d) == 1));
}

#[test]
fn mirror_copies_have_exactly_the_truncation_length() {
    let profile = big_teaching();
    let config = ChipConfig {
        mirror_sessions: vec![
            MirrorSession {
                id: 5,
                port: 2,
                queue: 0,
                truncate_bytes: Some(40),
                mcast_group: None,
            },
            MirrorSession {
                id: 6,
                port: 3,
                queue: 0,
                truncate_bytes: None,
                mcast_group: None,
            },
        ],
        ..ChipConfig::default()
    };
    let mut b = bench(&profile, config);
    let len = 300;
    let frames = vec![
        (
            Time(0),
            Ctl {
                port: 1,
                mirror: 5,
                ..Ctl::default()
            }
            .frame(len),
        ),
        (
            Time(1_000_000),
            Ctl {
                port: 1,
                mirror: 5,
                trunc: 30,
                ..Ctl::default()
            }
            .frame(len),
        ),
        (
            Time(2_000_000),
            Ctl {
                port: 1,
                emirror: 6,
                ..Ctl::default()
            }
            .frame(len),
        ),
        (
            Time(3_000_000),
            Ctl {
                port: 1,
                mirror: 9,
                ..Ctl::default()
            }
            .frame(len),
        ),
    ];
    b.add_frames(0, frames).unwrap();
    let r = b.run().unwrap();
    conserved(&r);
    let on = |p: u16| lengths_out_of(&b, p);
    assert_eq!(on(1), vec![len; 4]);
    assert_eq!(on(2), vec![40, 30]);
    assert_eq!(on(3), vec![len]);
    let pc = b.chip().plumbing_counters();
    assert_eq!((pc.mirror_copies, pc.mirror_unknown_session), (3, 1));
}

/// A mirror session naming a multicast group copies to its port and to every member of the
/// group, each copy truncated as the session says; a session naming a group the chip does
/// not have is refused with its id.
#[test]
fn a_mirror_session_with_a_group_copies_to_its_port_and_every_member() {
    let profile = big_teaching();
    let session = MirrorSession {
        id: 5,
        port: 2,
        queue: 0,
        truncate_bytes: Some(40),
        mcast_group: Some(7),
    };
    let config = ChipConfig {
        mirror_sessions: vec![session],
        mcast_groups: vec![McastGroup {
            id: 7,
            members: vec![(3, 30), (0, 40)],
        }],
        ..ChipConfig::default()
    };
    let mut b = bench(&profile, config.clone());
    let frame = Ctl {
        port: 1,
        mirror: 5,
        ..Ctl::default()
    }
    .frame(300);
    b.add_frames(0, vec![(Time(0), frame)]).unwrap();
    let r = b.run().unwrap();
    conserved(&r);
    let on = |p: u16| lengths_out_of(&b, p);
    assert_eq!(
        [on(0), on(1), on(2), on(3)],
        [vec![40], vec![300], vec![40], vec![40]]
    );
    assert_eq!(b.chip().plumbing_counters().mirror_copies, 3);

    let mut wrong = config;
    wrong.mcast_groups.clear();
    let program = compile("tests/programs/plumbing.p4", &profile);
    let err = asic_model::chip::Chip::with_config(profile.clone(), &program, wrong)
        .err()
        .expect("a session naming no group is refused")
        .to_string();
    assert!(
        err.contains("mirror session 5: no multicast group 7"),
        "{err}"
    );
}

#[test]
fn multicast_to_every_pipes_recirculation_port_makes_one_copy_per_pipe() {
    let profile = chip("tofino2-like");
    let probe = bench(&profile, ChipConfig::default());
    let members: Vec<(u16, u16)> = (0..profile.pipes)
        .map(|p| (probe.chip().recirc_port(p, 0).unwrap(), 100 + p))
        .collect();
    drop(probe);
    let config = ChipConfig {
        mcast_groups: vec![McastGroup {
            id: 7,
            members: members.clone(),
        }],
        ..ChipConfig::default()
    };
    let mut b = bench(&profile, config);
    b.add_frames(
        0,
        vec![(
            Time(0),
            Ctl {
                port: 1,
                mcast: 7,
                ..Ctl::default()
            }
            .frame(100),
        )],
    )
    .unwrap();
    b.add_frames(
        2,
        vec![(
            Time(0),
            Ctl {
                port: 1,
                mcast: 8,
                ..Ctl::default()
            }
            .frame(100),
        )],
    )
    .unwrap();
    let r = b.run().unwrap();
    conserved(&r);
    let chip = b.chip();
    for (p, &(rp, _)) in members.iter().enumerate() {
        assert_eq!(chip.port_counters(rp).tx_packets, 1, "pipe {p}");
        assert_eq!(
            chip.ingress_issued(p as u16),
            1 + (p == 0) as u64 + (p == 0) as u64
        );
    }
    let mut rids: Vec<u16> = b
        .departures()
        .iter()
        .filter(|d| d.port == 1)
        .map(rid)
        .collect();
    rids.sort();
    assert_eq!(rids, vec![100, 101, 102, 103]);
    assert_eq!(chip.plumbing_counters().mcast_copies, 3);
    assert_eq!(chip.drops(DropReason::UnknownMcastGroup), 1);
}

#[test]
fn generated_packets_appear_at_exactly_the_period() {
    let profile = chip("teaching");
    let (start_ns, period_ns, count) = (500u64, 1_000u64, 5u64);
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
            at_ns: vec![7_250],
        }],
        ..ChipConfig::default()
    };
    let mut b = bench(&profile, config);
    let r = b.run().unwrap();
    conserved(&r);
    let chip = b.chip();
    let clock = chip.clock();
    let lat = chip.ingress_latency_cycles() + chip.egress_latency_cycles();
    let expect: Vec<Time> = (0..count)
        .map(|k| start_ns + k * period_ns)
        .chain([7_250])
        .map(|ns| clock.time_of(clock.cycle_at_or_after(Time::from_ns(ns)) + lat))
        .collect();
    let got: Vec<Time> = b.departures().iter().map(|d| d.start).collect();
    assert_eq!(got, expect);
    assert_eq!(chip.plumbing_counters().generated, count + 1);
    assert_eq!(
        chip.port_counters(chip.pktgen_port(0).unwrap()).rx_packets,
        count + 1
    );
}

#[test]
fn afc_pause_lets_exactly_the_packets_already_served_leave() {
    let profile = big_teaching();
    let mut b = bench(&profile, ChipConfig::default());
    let len = 500;
    let slot = slot_time(len, 10);
    // A backlog for port 1 from two ports at line rate.
    feed_line_rate(
        &mut b,
        &[2, 3],
        30,
        len,
        10,
        Ctl {
            port: 1,
            ..Ctl::default()
        },
    );
    // Port 0: a pause request for port 1 queue 0 at 10 us, a resume at 40 us (the request
    // packets themselves go back out of port 0).
    let (pause_at, resume_at) = (Time::from_ns(10_000), Time::from_ns(40_000));
    let small = 64;
    b.add_frames(
        0,
        vec![
            (
                pause_at,
                Ctl {
                    port: 0,
                    afc: afc(1, 0, 0),
                    ..Ctl::default()
                }
                .frame(small),
            ),
            (
                resume_at,
                Ctl {
                    port: 0,
                    afc: afc(1, 0, 1),
                    ..Ctl::default()
                }
                .frame(small),
            ),
        ],
    )
    .unwrap();
    let r = b.run().unwrap();
    conserved(&r);
    let chip = b.chip();
    let clock = chip.clock();
    let (li, le) = (chip.ingress_latency_cycles(), chip.egress_latency_cycles());
    let afc_lat = clock.time_of(profile.plumbing.afc_latency_cycles as u64);
    // The request leaves ingress at T(c(t1) + L_i) and reaches the TM afc_lat later.
    let reach = |t0: Time| {
        let t1 = t0 + asic_model::mac::frame_time(small, 10);
        clock.time_of(clock.cycle_at_or_after(t1) + li) + afc_lat
    };
    let (paused, resumed) = (reach(pause_at), reach(resume_at));
    // A backlogged port's packet that starts at `s` was served by the TM at the last cycle
    // edge before the wire was free, minus L_e.
    let served = |s: Time| clock.time_of(clock.cycle_at_or_before(s) - le);
    let out: Vec<Time> = b
        .departures()
        .iter()
        .filter(|d| d.port == 1)
        .map(|d| d.start)
        .collect();
    assert_eq!(out.len(), 60);
    let before: Vec<&Time> = out.iter().filter(|&&s| s < resumed).collect();
    let last = **before.last().unwrap();
    // Every packet that left before the resume was served before the pause reached the TM,
    // and the next one would have been served after it.
    assert!(before.iter().all(|&&s| served(s) < paused));
    assert!(served(last + slot) >= paused);
    // After the resume: the first packet is served as soon as the TM sees it.
    let first_after = *out.iter().find(|&&s| s >= resumed).unwrap();
    assert_eq!(
        first_after,
        clock.time_of(clock.cycle_at_or_after(resumed) + le)
    );
    assert!(first_after > last + slot, "the queue was paused in between");
    assert_eq!(chip.plumbing_counters().afc_requests, 2);
}
