//! Metadata bridged from ingress to egress costs what it costs on the chip: PHV in both
//! gresses, and bytes in front of the packet through the buffer, which the egress deparser
//! strips.

use crate::common::*;
use asic_bench::bench::Bench;
use asic_io::load::compile_file;
use pipelines::time::Time;

#[test]
fn bridged_bytes_occupy_the_buffer_and_leave_before_the_wire() {
    let profile = chip("teaching");
    let prog = compile_file(&repo("tests/programs/bridged_router.p4"), &profile, true).unwrap();
    let entries = load_entries(&repo("programs/l3router/entries.ron"), &prog.program).unwrap();

    // The bridge header is in the PHV of both gresses.
    let has = |g: &pipelines::program::GressProgram| {
        g.phv
            .fields
            .iter()
            .any(|f| f.name == "hdr.bridge.ingress_port")
    };
    assert!(has(&prog.program.ingress) && has(&prog.program.egress));

    // 159 bytes on the wire: 2 cells of 80 B; with the 2 bridged bytes, 161 B: 3 cells.
    let frame = udp_frame([10, 0, 1, 7], 64, 159);
    let mut bench = Bench::new(profile.clone(), &prog.program, &entries).unwrap();
    bench.keep_departures();
    bench
        .add_frames(2, vec![(Time::ZERO, frame.clone())])
        .unwrap();
    let report = bench.run().unwrap();
    assert_eq!(
        report.peak_buffer_cells,
        profile.tm.cells_for(frame.len() + 2)
    );
    assert_eq!(report.peak_buffer_cells, 3);

    // What leaves has no bridge header; the egress read the bridged port.
    let out = &bench.departures()[0];
    assert_eq!(out.data.len(), frame.len());
    let p = etherparse::SlicedPacket::from_ethernet(&out.data).unwrap();
    let Some(etherparse::NetSlice::Ipv4(ip)) = p.net else {
        panic!("IPv4 expected")
    };
    let h = ip.header().to_header();
    assert_eq!(h.identification, 2, "the ingress port, bridged");
    assert_eq!(h.header_checksum, h.calc_header_checksum());
}

/// A backlogged port paces on the bytes egress emits, not on the stored ones: with two
/// bridged bytes stripped in egress, frames still leave back to back at line rate (issue
/// #20: the pacer used the stored length, and every frame left 2 bytes' time late).
#[test]
fn a_backlogged_port_sends_back_to_back_despite_the_stripped_bridge() {
    let profile = chip("teaching");
    let prog = compile_file(&repo("tests/programs/bridged_router.p4"), &profile, true).unwrap();
    let entries = load_entries(&repo("programs/l3router/entries.ron"), &prog.program).unwrap();
    let frame = udp_frame([10, 0, 1, 7], 64, 300);
    let mut bench = Bench::new(profile, &prog.program, &entries).unwrap();
    bench.keep_departures();
    // Two ports at line rate into one: its queue never empties while they send.
    let slot = asic_model::mac::slot_time(frame.len(), 10);
    for port in [0, 2] {
        let frames = (0..12)
            .map(|i| (Time(slot.ps() * i), frame.clone()))
            .collect();
        bench.add_frames(port, frames).unwrap();
    }
    bench.run().unwrap();
    let starts: Vec<Time> = bench
        .departures()
        .iter()
        .filter(|d| d.port == 1)
        .map(|d| d.start)
        .collect();
    assert!(starts.len() >= 12, "{} departures", starts.len());
    assert!(bench
        .departures()
        .iter()
        .all(|d| d.data.len() == frame.len()));
    for w in starts.windows(2) {
        assert_eq!(w[1] - w[0], slot, "departures {starts:?}");
    }
}
