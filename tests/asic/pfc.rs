//! PFC (IEEE 802.1Qbb) in the chip's MACs: frames sent on XOFF/XON and refreshed, received
//! frames honoured, and two chips back to back through the network runtime.

use crate::common::*;
use asic_bench::bench::{Bench, Departure};
use asic_bench::scenario::{Generator, Template, UdpTemplate};
use asic_deploy::{run as net, scenario::NetScenario};
use asic_io::pcap::read_pcap;
use asic_model::chip::{ChipConfig, PauseDirection, PauseRecord};
use asic_model::mac::{frame_time, slot_time};
use asic_model::pfc_frame::{self, port_mac, ClassTimes, PAUSE_OPCODE};
use asic_model::profile::ChipProfile;
use pipelines::control::ResolvedControlOp;
use pipelines::time::Time;
use std::path::Path;
use tm::config::{PfcConfig, PfcGroup, TmConfig};
use tm::pfc::{quanta_ps, reaction_ps, refresh_interval_ps};

fn gen(count: u64, size: usize, dst: &str, rate_gbps: Option<u32>) -> Generator {
    Generator {
        count,
        size,
        start_ns: 0,
        rate_gbps,
        packet: Template::Udp(UdpTemplate {
            dst_ip: dst.into(),
            ..UdpTemplate::default()
        }),
    }
}

fn bench(profile: &ChipProfile, tm: TmConfig) -> Bench {
    let (program, entries) = l3router(profile);
    let ops: Vec<ResolvedControlOp> = entries
        .into_iter()
        .map(ResolvedControlOp::AddEntry)
        .collect();
    let mut b = Bench::with_config(
        profile.clone(),
        &program,
        ChipConfig {
            tm,
            seed: 1,
            ..ChipConfig::default()
        },
        &ops,
    )
    .unwrap();
    b.keep_departures();
    b
}

/// The class times of a departure if it is a PFC frame.
fn pfc(d: &Departure) -> Option<ClassTimes> {
    pfc_frame::decode(&d.data)
}

fn on_port(d: &[Departure], port: u16) -> Vec<&Departure> {
    d.iter().filter(|d| d.port == port).collect()
}

/// The teaching chip (1 GHz, 4 x 10G) with a buffer big enough for the experiment.
fn big_teaching() -> ChipProfile {
    let mut p = chip("teaching");
    p.tm.cells = 20_000;
    p
}

/// Ports 0 and 2 send 200-byte frames (3 cells) at line rate to port 1; port 3 sends
/// 1000-byte frames at 5 Gb/s to port 2, so port 2 carries data as well as PFC frames.
/// Ingress (port, priority 0) is lossless on ports 0, 2, 3: XOFF above 100 cells, XON below
/// 80, headroom 2000 cells. The feeds ignore pauses (the bench's generators do not obey
/// PFC), then stop, and the queue drains.
#[test]
fn crossing_xoff_sends_one_pause_refreshed_until_one_xon() {
    let profile = big_teaching();
    let gbps = 10;
    let (quanta, xoff, hyst, headroom) = (500u16, 100u32, 20u32, 2000u32);
    let tm = TmConfig {
        pfc: PfcConfig {
            quanta,
            groups: vec![PfcGroup {
                ports: vec![0, 2, 3],
                priority: 0,
                xoff_cells: xoff,
                hysteresis_cells: hyst,
                headroom_cells: headroom,
            }],
        },
        ..TmConfig::default()
    };
    let n = 200u64;
    let mut b = bench(&profile, tm);
    b.add_generator(0, &gen(n, 200, "10.0.1.1", None)).unwrap();
    b.add_generator(2, &gen(n, 200, "10.0.1.2", None)).unwrap();
    b.add_generator(3, &gen(50, 1000, "10.0.2.1", Some(5)))
        .unwrap();
    let report = b.run().unwrap();
    // Lossless: nothing dropped, every data frame delivered.
    assert_eq!(report.packets_dropped(), 0, "{}", report.render_text());
    assert_eq!(report.packets_out(), 2 * n + 50);
    let chip = b.chip();
    let ingress_done = chip.clock().time_of(chip.ingress_latency_cycles());
    let egress = chip.clock().time_of(chip.egress_latency_cycles());
    let every = Time(refresh_interval_ps(quanta as u32, gbps));
    assert_eq!(every, Time::from_ns(12_800)); // 500 x 512 bits at 10 Gb/s, halved
    let d = b.departures();
    assert!(on_port(d, 1).iter().all(|d| pfc(d).is_none()));

    for port in [0u16, 2] {
        let tmc = chip.tm().pg_counters(port, 0);
        assert_eq!(
            (tmc.xoff, tmc.xon),
            (1, 1),
            "port {port}: one crossing each way"
        );
        assert!(
            tmc.max_headroom_cells > 0 && tmc.max_headroom_cells <= headroom,
            "headroom used and sufficient: {}",
            tmc.max_headroom_cells
        );
        let frames: Vec<(&Departure, ClassTimes)> = on_port(d, port)
            .into_iter()
            .filter_map(|d| pfc(d).map(|t| (d, t)))
            .collect();
        let c = chip.port_counters(port);
        assert_eq!(c.pfc_xoff_tx[0], 1, "exactly one XOFF frame");
        assert_eq!(c.pfc_xon_tx[0], 1, "exactly one XON frame");
        assert_eq!(c.pfc_tx(), frames.len() as u64);
        assert_eq!(c.tx_packets + c.pfc_tx(), on_port(d, port).len() as u64);
        // Every frame: from the port's MAC, priority 0 only; quanta until the last.
        let (xon_frame, pauses) = frames.split_last().unwrap();
        for (f, t) in &frames {
            assert_eq!(f.data.len(), 60);
            assert_eq!(f.data[6..12], port_mac(port));
            assert!(t[1..].iter().all(Option::is_none));
        }
        assert!(pauses.iter().all(|(_, t)| t[0] == Some(quanta)));
        assert_eq!(xon_frame.1[0], Some(0));
        let t_xoff = pauses[0].0.start;
        let t_xon = xon_frame.0.start;
        // The XOFF frame leaves as the TM admits the port's packet that crossed: at the
        // moment one of port 0's/2's frames leaves the ingress pipe (the pipe issues one
        // packet per cycle, so give it a few cycles).
        let slot = slot_time(200, gbps);
        let arrived = (0..n).any(|k| {
            let done = Time(k * slot.ps()) + frame_time(200, gbps) + ingress_done;
            t_xoff >= done && t_xoff <= done + Time::from_ns(3)
        });
        assert!(
            arrived,
            "port {port}: XOFF at {t_xoff} is not at an ingress exit"
        );
        // Refreshed every interval from the XOFF while it holds (the XON is not a refresh;
        // on port 2 a refresh may wait for the data frame on the wire).
        let expect: Vec<Time> = (0..)
            .map(|k| t_xoff + Time(k * every.ps()))
            .take_while(|&t| t < t_xon)
            .collect();
        assert!(expect.len() >= 3, "the XOFF lasts several intervals");
        assert_eq!(pauses.len(), expect.len(), "port {port}");
        assert_eq!(c.pfc_refresh_tx[0], expect.len() as u64 - 1);
        let max_wait = slot_time(1000, gbps);
        for ((f, _), t) in pauses.iter().zip(&expect) {
            assert!(
                f.start >= *t && f.start - *t < max_wait,
                "{} vs {t}",
                f.start
            );
            if port == 0 {
                assert_eq!(f.start, *t, "an idle port sends at once");
            }
        }
        // The XON leaves at the dequeue that took the count below XON: that packet leaves
        // the egress pipe L_e (+ an issue cycle or two) later, and at that moment fewer than
        // XON cells of this port's packets remain (all are queued: the feeds have stopped).
        let dst = if port == 0 {
            [10, 0, 1, 1]
        } else {
            [10, 0, 1, 2]
        };
        let out1: Vec<&Departure> = on_port(d, 1)
            .into_iter()
            .filter(|d| d.data[30..34] == dst)
            .collect();
        let i = out1
            .iter()
            .position(|f| f.start >= t_xon + egress)
            .expect("the XON's packet");
        assert!(out1[i].start <= t_xon + egress + Time::from_ns(2));
        let after = (out1.len() - i - 1) as u32;
        assert!(3 * after < xoff - hyst && 3 * (after + 1) >= xoff - hyst);
        // The log has the two state changes, at the frames' starts.
        let log: Vec<PauseRecord> = chip
            .pause_log()
            .iter()
            .filter(|r| r.port == port)
            .copied()
            .collect();
        assert_eq!(log.len(), 2);
        assert_eq!((log[0].at, log[0].paused), (t_xoff, true));
        assert_eq!((log[1].at, log[1].paused), (t_xon, false));
        assert!(log.iter().all(|r| r.direction == PauseDirection::Sent));
        println!(
            "port {port}: XOFF at {t_xoff}, {} refreshes every {every}, XON at {t_xon}, headroom peak {} cells",
            pauses.len() - 1,
            tmc.max_headroom_cells
        );
    }
    // Port 2 carries data and PFC frames: no two overlap, and each starts either when it
    // was made or exactly when the previous one's slot ends (the MAC's frame goes first,
    // the data behind it waits).
    let p2 = on_port(d, 2);
    assert!(p2.iter().any(|d| pfc(d).is_none()) && p2.iter().any(|d| pfc(d).is_some()));
    for w in p2.windows(2) {
        let end = w[0].start + slot_time(w[0].data.len(), gbps);
        assert!(w[1].start >= end, "overlap at {}", w[1].start);
    }
    // Port 3's traffic is not congested: no pause.
    assert_eq!(chip.port_counters(3).pfc_tx(), 0);
}

/// Ports 0 and 2 queue 1000-byte frames for port 1 (no PFC configured: only the receive
/// side is exercised), and the link partner of port 1 sends control frames into it.
fn backlog(ctrl: Vec<(Time, Vec<u8>)>) -> Bench {
    let mut b = bench(&big_teaching(), TmConfig::default());
    b.add_generator(0, &gen(40, 1000, "10.0.1.1", None))
        .unwrap();
    b.add_generator(2, &gen(40, 1000, "10.0.1.2", None))
        .unwrap();
    if !ctrl.is_empty() {
        b.add_frames(1, ctrl).unwrap();
    }
    let r = b.run().unwrap();
    assert_eq!((r.packets_out(), r.packets_dropped()), (80, 0));
    b
}

fn pfc_frame_for(class: usize, quanta: u16) -> Vec<u8> {
    let mut t = [None; 8];
    t[class] = Some(quanta);
    pfc_frame::build([2, 0, 0, 0, 1, 1], &t)
}

fn data_starts(b: &Bench, port: u16) -> Vec<Time> {
    on_port(b.departures(), port)
        .into_iter()
        .filter(|d| pfc(d).is_none())
        .map(|d| d.start)
        .collect()
}

/// A PFC frame with quanta q for priority 0 reaches port 1 while its queue 0 (priority 0)
/// has a backlog: the pause holds from the frame's last bit, `rx_end`, to
/// `E = rx_end + q·512 bit times`. Frames the TM handed out before `rx_end` (at most one, in
/// the egress pipe) still leave; nothing else starts before E; the port's pending service
/// finds the queue paused, comes back at E, and the first frame starts exactly at
/// `T(c(E) + L_e)`; then back to back.
///
/// The frame is timed so that its last bit arrives 1 ns before a frame of the unpaused run
/// starts: that frame is then already in the egress pipe and still leaves.
#[test]
fn a_received_pause_stops_the_priority_until_the_quanta_expire() {
    let base = backlog(Vec::new());
    let gbps = 10;
    let next = *data_starts(&base, 1)
        .iter()
        .find(|&&s| s > Time::from_ns(36_000))
        .unwrap();
    let rx_end = next - Time::from_ns(1);
    let t = rx_end - frame_time(60, gbps);
    let quanta = 100u16;
    let b = backlog(vec![(t, pfc_frame_for(0, quanta))]);
    let chip = b.chip();
    let e = rx_end + Time(quanta_ps(quanta as u32, gbps));
    assert_eq!(e - rx_end, Time::from_ns(5_120));
    let clock = chip.clock();
    let le = chip.egress_latency_cycles();
    let starts = data_starts(&b, 1);
    let before = base
        .departures()
        .iter()
        .filter(|d| d.start < rx_end)
        .count();
    assert_eq!(
        starts[..before],
        data_starts(&base, 1)[..before],
        "nothing changes before the pause"
    );
    let during: Vec<Time> = starts
        .iter()
        .copied()
        .filter(|&s| s >= rx_end && s < e)
        .collect();
    assert_eq!(
        during,
        vec![next],
        "only the frame already in the egress pipe"
    );
    let reaction = Time(reaction_ps(&chip.profile().tm, gbps));
    let quiet = next + frame_time(1000, gbps) - t;
    assert!(quiet <= reaction);
    println!(
        "pause: the port is quiet {quiet} after the frame's first bit (bound {reaction}); egress pipe {le} cycles; resumes at E + {}",
        clock.time_of(clock.cycle_at_or_after(e) + le) - e
    );
    let first = *starts.iter().find(|&&s| s >= e).unwrap();
    assert_eq!(first, clock.time_of(clock.cycle_at_or_after(e) + le));
    let slot = slot_time(1000, gbps);
    let i = starts.iter().position(|&s| s == first).unwrap();
    assert!(starts[i..].windows(2).all(|w| w[1] - w[0] == slot));
    // Consumed by the MAC: not a packet, not a drop; logged.
    let c = chip.port_counters(1);
    assert_eq!((c.pfc_rx, c.rx_packets, c.drops), (1, 0, 0));
    assert_eq!(chip.packets_inside(), 0);
    let log = chip.pause_log();
    assert_eq!(log.len(), 2);
    assert_eq!(
        (log[0].at, log[0].port, log[0].priority, log[0].paused),
        (rx_end, 1, 0, true)
    );
    assert_eq!((log[1].at, log[1].paused), (e, false));
    assert!(log.iter().all(|r| r.direction == PauseDirection::Received));
}

/// A quanta-0 frame resumes at once: the port is served when it has been received whole.
#[test]
fn a_quanta_zero_frame_resumes_at_once() {
    let t = Time::from_ns(36_000);
    let t2 = t + Time::from_ns(2_000);
    let b = backlog(vec![
        (t, pfc_frame_for(0, u16::MAX)),
        (t2, pfc_frame_for(0, 0)),
    ]);
    let chip = b.chip();
    let rx_end = t + frame_time(60, 10);
    let rx_end2 = t2 + frame_time(60, 10);
    let clock = chip.clock();
    let starts = data_starts(&b, 1);
    assert!(starts
        .iter()
        .all(|&s| s < rx_end + Time::from_ns(1_000) || s >= rx_end2));
    let first = *starts.iter().find(|&&s| s >= rx_end2).unwrap();
    assert_eq!(
        first,
        clock.time_of(clock.cycle_at_or_after(rx_end2) + chip.egress_latency_cycles())
    );
    let log: Vec<(Time, bool)> = chip.pause_log().iter().map(|r| (r.at, r.paused)).collect();
    assert_eq!(log, vec![(rx_end, true), (rx_end2, false)]);
    assert_eq!(chip.port_counters(1).pfc_rx, 2);
}

/// A pause for another priority (1: queue 1 by default) leaves queue 0 alone; an 802.3x
/// PAUSE frame is consumed and counted, without effect (this MAC speaks PFC only).
#[test]
fn other_priorities_and_802_3x_pause_do_not_stop_the_queue() {
    let base = data_starts(&backlog(Vec::new()), 1);
    let t = Time::from_ns(36_000);
    let b = backlog(vec![(t, pfc_frame_for(1, u16::MAX))]);
    assert_eq!(data_starts(&b, 1), base);
    assert_eq!(b.chip().port_counters(1).pfc_rx, 1);

    let mut pause = pfc_frame_for(0, u16::MAX);
    pause[14..16].copy_from_slice(&PAUSE_OPCODE.to_be_bytes());
    let b = backlog(vec![(t, pause)]);
    assert_eq!(data_starts(&b, 1), base);
    let c = b.chip().port_counters(1);
    assert_eq!((c.pfc_rx, c.mac_control_other_rx, c.rx_packets), (0, 1, 0));
    assert!(b.chip().pause_log().is_empty());
}

/// Two chips back to back in the network runtime: host `a` behind `sw0`, host `b` and the
/// receiver `c` on `sw1`; `a` and `b` send to `c` at line rate, so `sw1`'s port to `c` is
/// oversubscribed 2:1. Priority 0 is lossless on `sw1`'s ingress ports (1 from `b`, 2 from
/// `sw0`) and on `sw0`'s port from `a`. `sw1` pauses `sw0`, which stops within the profile's
/// reaction time of the frame's arrival, backs up, pauses `a` in turn, and resumes on XON.
#[test]
fn back_to_back_chips_stop_within_the_reaction_time_and_resume_on_xon() {
    let delay_ns = 1000u64;
    let group = |ports: &str| {
        format!(
            "Some((tm: (pfc: (quanta: 65535, groups: [(ports: [{ports}], priority: 0, xoff_cells: 100, hysteresis_cells: 64, headroom_cells: 300)]))))"
        )
    };
    let text = format!(
        r#"(
        name: "pfc-b2b",
        topology: Explicit((
            chips: [
                (name: "sw0", profile: "rmt2013"),
                (name: "sw1", profile: "rmt2013"),
            ],
            hosts: [
                (name: "a", ip: "10.0.0.1"),
                (name: "b", ip: "10.1.0.2"),
                (name: "c", ip: "10.1.0.1"),
            ],
            links: [
                (a: "a", b: "sw0:0", gbps: 10, delay_ns: {delay_ns}),
                (a: "sw0:1", b: "sw1:2", gbps: 10, delay_ns: {delay_ns}),
                (a: "b", b: "sw1:1", gbps: 10, delay_ns: {delay_ns}),
                (a: "c", b: "sw1:0", gbps: 10, delay_ns: {delay_ns}),
            ],
        )),
        chips: [(select: Name("sw0"), config: {g0}), (select: Name("sw1"), config: {g1})],
        traffic: [Incast((senders: ["a", "b"], receiver: "c", size: 1440000))],
        pcaps: [(node: "sw0", port: 1), (node: "sw1", port: 2)],
    )"#,
        g0 = group("0"),
        g1 = group("1, 2"),
    );
    let s: NetScenario = ron::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
    let dir = tempfile::tempdir().unwrap();
    let run = net::run_detailed(s, Path::new(""), Some(dir.path())).unwrap();
    let r = &run.record;
    assert!(r.drops.is_empty(), "lossless: {:?}", r.drops);
    assert_eq!(run.chip_drops, 0);
    assert!(r.flows.iter().all(|f| f.end_ps.is_some()), "flows complete");

    let profile = chip("rmt2013");
    let gbps = 10;
    let reaction = reaction_ps(&profile.tm, gbps);
    let ctrl_time = frame_time(60, gbps).ps();
    // sw1 paused sw0: when sw0's port 1 had the frame whole (sw0's side of the log).
    let mut spans = Vec::new();
    let mut open: Option<u64> = None;
    for p in r.pauses.iter().filter(|p| p.node == "sw0" && p.port == 1) {
        assert_eq!((p.kind.as_str(), p.class), ("pfc", 0));
        match (p.paused, open) {
            (true, None) => open = Some(p.at_ps),
            (false, Some(s)) => {
                spans.push((s, p.at_ps));
                open = None;
            }
            other => panic!("pause log out of order: {other:?} at {}", p.at_ps),
        }
    }
    assert!(open.is_none());
    assert!(!spans.is_empty(), "sw1 paused sw0");
    // a was paused by sw0 too (hosts log their own pauses).
    assert!(r.pauses.iter().any(|p| p.node == "a" && p.paused));
    // The frames sw1 sent towards sw0: every pause and resume logged at sw0 is a frame's
    // last bit arriving there (start + link delay + frame time).
    let sent = read_pcap(&dir.path().join("sw1-port2.pcap")).unwrap();
    let pfc_sent: Vec<(u64, ClassTimes)> = sent
        .iter()
        .filter_map(|f| pfc_frame::decode(&f.data).map(|t| (f.ts_ns as u64, t)))
        .collect();
    let xoffs = pfc_sent.iter().filter(|f| f.1[0] != Some(0)).count();
    let xons = pfc_sent.iter().filter(|f| f.1[0] == Some(0)).count();
    assert_eq!(xons, spans.len(), "one XON per pause");
    assert!(xoffs >= spans.len());
    for &(on, off) in &spans {
        // Nanosecond pcap timestamps: the arrival is known to within a nanosecond.
        let near =
            |ns: u64, at_ps: u64| (ns * 1000 + delay_ns * 1000 + ctrl_time).abs_diff(at_ps) < 1000;
        assert!(pfc_sent.iter().any(|f| f.1[0] != Some(0) && near(f.0, on)));
        assert!(pfc_sent.iter().any(|f| f.1[0] == Some(0) && near(f.0, off)));
    }
    let data: Vec<(u64, usize)> = read_pcap(&dir.path().join("sw0-port1.pcap"))
        .unwrap()
        .iter()
        .filter(|f| pfc_frame::mac_control_opcode(&f.data).is_none())
        .map(|f| (f.ts_ns as u64 * 1000, f.data.len()))
        .collect();
    // When sw0's link goes quiet after each pause frame's first bit arrives: the end of
    // the last data frame that starts before the resume. It must be within the reaction
    // bound, and the first frame after the resume starts after it.
    let mut worst = 0;
    for &(on, off) in &spans {
        let arrival = on - ctrl_time;
        let quiet = data
            .iter()
            .filter(|d| d.0 < off)
            .map(|d| d.0 + frame_time(d.1, gbps).ps())
            .max()
            .unwrap();
        let stop = quiet.saturating_sub(arrival);
        worst = worst.max(stop);
        assert!(
            stop <= reaction + 1000,
            "sw0 stopped {stop} ps after the pause arrived (bound {reaction})"
        );
        if let Some(n) = data.iter().find(|d| d.0 >= off) {
            assert!(n.0 - off < 1_000_000, "resumed at {} after {off}", n.0);
        }
    }
    println!(
        "{} pauses of sw0 by sw1; {xoffs} pause frames incl. refreshes; sw0's link quiet at worst {worst} ps after a pause frame's arrival, bound {reaction} ps",
        spans.len()
    );
}
