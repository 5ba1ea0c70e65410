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
