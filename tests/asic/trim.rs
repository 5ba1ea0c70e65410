//! What-if payload trimming in the TM (`config.tm.trim`, `tm::config::TrimConfig`): NDP-style
//! host frames (`asic_net::packet`) through the L3 router on a `teaching` chip whose data
//! queue is at its limit leave as headers that the hosts' parser sees as trimmed, overtake
//! the data queued before them, and are counted; a bad trimming configuration is an error
//! placed in the scenario.

use crate::common::*;
use asic_bench::bench::{Bench, RunReport};
use asic_model::chip::ChipConfig;
use asic_model::mac::slot_time;
use asic_model::profile::ChipProfile;
use asic_net::packet::{self, Header, DATA, HEADER_BYTES, TRIMMED};
use pipelines::control::ResolvedControlOp;
use pipelines::time::Time;
use tm::config::{
    AdmissionPolicy, QueueConfig, ReturnToSender, SchedulerConfig, TmConfig, TrimConfig, TrimMark,
};

/// An NDP DATA frame of flow `flow`, packet `seq`, to 10.0.1.2 (l3router: port 1), 1500 bytes.
fn data_frame(flow: u64, seq: u32) -> Vec<u8> {
    let h = Header {
        dst_mac: [2, 0, 0, 0, 0, 0xf1],
        src_mac: [2, 0, 0, 0, 0, flow as u8],
        src_ip: u32::from_be_bytes([10, 0, 0, flow as u8]),
        dst_ip: u32::from_be_bytes([10, 0, 1, 2]),
        flags: DATA,
        seq,
        flow_id: flow,
        len: (1500 - HEADER_BYTES) as u32,
        ..Header::default()
    };
    let mut f = Vec::new();
    packet::build(&mut f, &h, 1500 - HEADER_BYTES);
    f
}

/// The host frames' trim: 80 bytes into queue 1, marked with their `TRIMMED` flag.
fn host_frame_trim(return_to_sender: Option<ReturnToSender>) -> Option<TrimConfig> {
    Some(TrimConfig {
        bytes: 80,
        queue: 1,
        mark: Some(TrimMark {
            offset: 42,
            mask: TRIMMED,
        }),
        return_to_sender,
    })
}

/// The L3 router on `profile` with `tm`, each of `senders` (port, flow) sending `n` DATA
/// frames to port 1 at 10G line rate from t = 0; run to the end with departures kept. Every
/// packet is accounted for and none dropped.
fn run_to_port_1(
    profile: ChipProfile,
    tm: TmConfig,
    senders: &[(u16, u64)],
    n: u64,
) -> (Bench, RunReport) {
    let (program, entries) = l3router(&profile);
    let ops: Vec<_> = entries
        .into_iter()
        .map(ResolvedControlOp::AddEntry)
        .collect();
    let config = ChipConfig {
        tm,
        ..ChipConfig::default()
    };
    let mut b = Bench::with_config(profile, &program, config, &ops).unwrap();
    b.keep_departures();
    let slot = slot_time(1500, 10);
    for &(port, flow) in senders {
        let frames = (0..n)
            .map(|k| (Time(k * slot.ps()), data_frame(flow, k as u32)))
            .collect();
        b.add_frames(port, frames).unwrap();
    }
    let r = b.run().unwrap();
    crate::common::plumbing::conserved(&r);
    assert_eq!(r.packets_dropped(), 0, "nothing dropped: {:?}", r.drops);
    (b, r)
}

#[test]
fn refused_packets_leave_as_marked_headers_ahead_of_the_data() {
    let mut profile = chip("teaching");
    profile.tm.cells = 2000;
    let tm = TmConfig {
        admission: AdmissionPolicy::Static,
        // Ten 1500-byte packets (19 cells each) per queue.
        default_queue: QueueConfig {
            static_limit_cells: Some(190),
            ..QueueConfig::default()
        },
        scheduler: SchedulerConfig::StrictPriority,
        trim: host_frame_trim(None),
        ..TmConfig::default()
    };
    // Two senders at line rate into port 1: 2:1.
    let n = 40;
    let (b, r) = run_to_port_1(profile, tm, &[(0, 1), (2, 2)], n);
    let out: Vec<_> = b.departures().iter().filter(|d| d.port == 1).collect();
    assert_eq!(out.len() as u64, 2 * n);
    let headers: Vec<_> = out.iter().filter(|d| d.data.len() < 1500).collect();
    assert!(!headers.is_empty());
    for d in &headers {
        assert_eq!(d.data.len(), 80);
        assert_eq!(d.data[42] & TRIMMED, TRIMMED, "the mark");
        let h = packet::parse(&d.data).expect("a host frame");
        assert!(h.is_data() && h.flags & TRIMMED != 0);
        assert_eq!(h.len as usize, 1500 - HEADER_BYTES, "what it had carried");
    }
    assert!(out
        .iter()
        .filter(|d| d.data.len() == 1500)
        .all(|d| d.data[42] & TRIMMED == 0));
    // Counted on the data queue that refused them, with the bytes they lost.
    let trims = &r.trims;
    assert_eq!(trims.len(), 1);
    let t = &trims[0];
    assert_eq!((t.port, t.queue), (1, 0));
    assert_eq!(t.packets, headers.len() as u64);
    assert_eq!(t.bytes_cut, t.packets * (1500 - 80));
    assert!(r.render_text().contains(&format!(
        "  port 1 queue 0: {} packets, {} bytes cut",
        t.packets, t.bytes_cut
    )));
    // A header overtakes data of its own flow sent before it.
    let seq = |d: &asic_bench::bench::Departure| packet::parse(&d.data).unwrap();
    let first = out.iter().position(|d| d.data.len() == 80).unwrap();
    let h = seq(out[first]);
    assert!(out[first + 1..]
        .iter()
        .any(|d| d.data.len() == 1500 && seq(d).flow_id == h.flow_id && seq(d).seq < h.seq));
}

#[test]
fn a_bad_trimming_configuration_is_placed_in_the_scenario() {
    let e = scenario_error(
        "programs/l3router/l3router.p4",
        "        tm: (\n            trim: Some((bytes: 80,\n                queue: 9)),\n        ),\n",
    );
    assert!(
        e.ends_with(
            "s.ron:7:17: invalid TM configuration `trim.queue`: no queue 9: ports have 4 queues"
        ),
        "{e}"
    );
}

/// The digest's test 3.4.2 on the chip: with return-to-sender on, a header its header queue
/// refuses leaves by the port its packet came in on, its Ethernet and IPv4 addresses
/// swapped (the IPv4 checksum still valid), and is counted as returned. Three senders at
/// line rate into port 1, whose data queue holds one packet and header queue one header.
#[test]
fn a_header_the_header_queue_refuses_goes_back_to_its_sender_swapped() {
    let limit = |cells| QueueConfig {
        static_limit_cells: Some(cells),
        ..QueueConfig::default()
    };
    let tm = TmConfig {
        admission: AdmissionPolicy::Static,
        queues: vec![limit(19), limit(1)],
        scheduler: SchedulerConfig::StrictPriority,
        trim: host_frame_trim(Some(ReturnToSender { ethernet_offset: 0 })),
        ..TmConfig::default()
    };
    let senders = [(0u16, 1u64), (2, 2), (3, 3)];
    let (b, r) = run_to_port_1(chip("teaching"), tm, &senders, 20);
    let returned: Vec<_> = b.departures().iter().filter(|d| d.port != 1).collect();
    assert!(!returned.is_empty(), "some headers went back");
    for d in &returned {
        let (port, flow) = *senders.iter().find(|s| s.0 == d.port).unwrap();
        assert_eq!(d.data.len(), 80, "a header, on port {port}");
        let h = packet::parse(&d.data).expect("a host frame");
        assert_eq!(h.flow_id, flow, "back on the port its flow came in on");
        assert_eq!(
            (h.src_ip, h.dst_ip),
            (
                u32::from_be_bytes([10, 0, 1, 2]),
                u32::from_be_bytes([10, 0, 0, flow as u8])
            ),
            "addresses swapped"
        );
        assert!(h.is_data() && h.flags & TRIMMED != 0);
        // Over a header with a valid checksum in it, the checksum comes to 0.
        assert_eq!(
            packet::ipv4_checksum(&d.data[14..34]),
            0,
            "checksum still valid"
        );
    }
    let t = &r.trims[0];
    assert_eq!(t.returned, returned.len() as u64);
    assert!(r
        .render_text()
        .contains(&format!("{} headers returned to their sender", t.returned)));
}
