//! TNA's `drop_ctl` on the modelled chip: bit 0 drops the packet but not its mirror copy
//! ("mirror and drop", as trimming's truncating mirror needs); bit 2 drops the copy too.

use crate::common::*;
use asic_bench::bench::Bench;
use asic_io::load::compile_file;
use asic_model::chip::{ChipConfig, DropReason, MirrorSession};
use pipelines::control::{resolve_op, ControlOp};
use pipelines::entries::{EntrySpec, KeySpec, Value};
use pipelines::time::Time;

/// Frames of TTL `ttl` into tapped port 0 of a `teaching` chip running net_plumbing.p4,
/// whose mirror session 1 copies to port 3 truncated to 64 bytes: the departures, and the
/// program's drops.
fn tapped(ttl: u8, frames: u32) -> (Vec<asic_bench::bench::Departure>, u64, u64) {
    let profile = chip("teaching");
    let prog = compile_file(&repo("tests/programs/net_plumbing.p4"), &profile, true)
        .unwrap()
        .program;
    let tap = EntrySpec {
        table: "port_tap".into(),
        key: vec![KeySpec::Exact(Value::Int(0))],
        action: "tap".into(),
        args: vec![Value::Int(1)],
        priority: 0,
    };
    let ops = [resolve_op(&prog, &ControlOp::AddEntry(tap)).unwrap()];
    let config = ChipConfig {
        mirror_sessions: vec![MirrorSession {
            id: 1,
            port: 3,
            queue: 0,
            truncate_bytes: Some(64),
            mcast_group: None,
        }],
        ..ChipConfig::default()
    };
    let mut bench = Bench::with_config(profile, &prog, config, &ops).unwrap();
    bench.keep_departures();
    let frame = udp_frame([10, 0, 1, 7], ttl, 300);
    let gap = asic_model::mac::slot_time(frame.len(), 10);
    let input = (0..frames)
        .map(|i| (Time(gap.ps() * i as u64), frame.clone()))
        .collect();
    bench.add_frames(0, input).unwrap();
    let report = bench.run().unwrap();
    let copies = bench.chip().plumbing_counters().mirror_copies;
    (
        bench.departures().to_vec(),
        report.drops_for(DropReason::IngressProgramDrop),
        copies,
    )
}

#[test]
fn a_dropped_packet_is_still_mirrored() {
    let (out, dropped, copies) = tapped(1, 5);
    assert_eq!(dropped, 5, "every original is dropped");
    assert_eq!(copies, 5, "every original is mirrored");
    assert_eq!(out.len(), 5);
    assert!(
        out.iter().all(|d| d.port == 3 && d.data.len() == 64),
        "{out:?}"
    );
}

#[test]
fn drop_ctl_bit_2_drops_the_mirror_copy_too() {
    let (out, dropped, copies) = tapped(0, 5);
    assert_eq!((dropped, copies, out.len()), (5, 0, 0));
}
