//! Queue depths the TM publishes to ingress (the ghost thread), on `tests/programs/ghost.p4`:
//! probes read the depth of a queue that two ports at line rate overload 2:1, and every read
//! must be the TM's true depth at the last snapshot instant at or before the probe's stage
//! time minus the profile's delay.
//!
//! The oracle: the test drives the chip's kernel itself and samples the TM's depth of the
//! watched queue after every event (depths change only inside events), so it knows the true
//! depth history `(time, depth after the events at that time)` independently of the export.
//! A snapshot at instant `s` sees the TM after every change strictly before `s`. The probe's
//! stage time is computed from the parser-entry cycle the program writes into the probe
//! (`global_tstamp`; the teaching clock is 1 GHz, so nanoseconds are cycles) plus the reading
//! table's stage entry from the loaded gress's timing.

use crate::common::*;
use asic_io::load::compile_file;
use asic_model::chip::{Chip, ChipConfig, ChipEvent, Wire};
use asic_model::kernel::EventQueue;
use asic_model::mac::slot_time;
use asic_model::profile::ChipProfile;
use pipelines::program::{ExternCall, Gress, Program};
use pipelines::time::Time;

/// Bytes of the probe header.
const HDR: usize = 16;
/// The overloaded queue.
const HOT_PORT: u16 = 2;
const HOT_QUEUE: u16 = 0;

fn frame(probe: bool, port: u16, qid: u8, len: usize) -> Vec<u8> {
    let mut v = Vec::with_capacity(len);
    v.push(probe as u8);
    v.extend_from_slice(&port.to_be_bytes()); // pad0(7) | port(9)
    v.push(qid); // pad1(1) | qid(7)
    v.extend_from_slice(&HOT_PORT.to_be_bytes()); // pad2(7) | read_port(9)
    v.push(HOT_QUEUE as u8); // pad3(1) | read_qid(7)
    v.extend_from_slice(&[0, 0, 0]); // pad4(5) | depth(19)
    v.extend_from_slice(&[0; 6]); // tstamp
    assert_eq!(v.len(), HDR);
    v.resize(len, 0xa5);
    v
}

fn depth_of(f: &[u8]) -> u32 {
    u32::from_be_bytes([0, f[7], f[8], f[9]]) & 0x7_ffff
}

fn tstamp_ns(f: &[u8]) -> u64 {
    f[10..HDR].iter().fold(0u64, |a, &b| a << 8 | b as u64)
}

#[derive(Default)]
struct Capture {
    frames: Vec<(u16, Time, Vec<u8>)>,
}

impl Wire for Capture {
    fn transmit(&mut self, port: u16, start: Time, frame: &[u8]) {
        self.frames.push((port, start, frame.to_vec()));
    }
}

fn program(profile: &ChipProfile) -> Program {
    compile_file(&repo("tests/programs/ghost.p4"), profile, true)
        .expect("ghost.p4 compiles")
        .program
}

/// The teaching chip with a large buffer and the given export period and delay.
fn profile(period_ps: u64, delay_ps: u64) -> ChipProfile {
    let mut p = chip("teaching");
    assert_eq!(
        p.clock_hz, 1_000_000_000,
        "the test reads cycles as nanoseconds"
    );
    p.tm.cells = 20_000;
    p.tm.depth_export_period_ps = period_ps;
    p.tm.depth_export_delay_ps = delay_ps;
    p
}

/// What a run gives: probes as (stage time of the read, depth read), the TM's depth
/// history of the hot queue, and the events handled by kind.
struct Run {
    probes: Vec<(u64, u32)>,
    history: Vec<(u64, u32)>,
    events: usize,
    /// Cycles from issue to the reading stage.
    stage_entry: u64,
    chip: Chip,
}

/// Feed `frames` (port, start, bytes) and run to the end, sampling the hot queue's depth
/// after every event.
fn run(profile: &ChipProfile, frames: &[(u16, Time, Vec<u8>)]) -> Run {
    let prog = program(profile);
    let mut chip = Chip::with_config(profile.clone(), &prog, ChipConfig::default()).unwrap();
    let mut q: EventQueue<ChipEvent> = EventQueue::new();
    for (port, start, f) in frames {
        chip.receive(*port, *start, f, 0, &mut q).unwrap();
    }
    let mut wire = Capture::default();
    let mut history = vec![(0u64, 0u32)];
    let mut events = 0;
    while let Some((now, ev)) = q.pop() {
        chip.handle(now, ev, &mut q, &mut wire);
        events += 1;
        let d = chip.tm().depth(HOT_PORT, HOT_QUEUE).0;
        if history.last().unwrap().1 != d {
            history.push((now.ps(), d));
        }
    }
    assert_eq!(chip.packets_inside(), 0);
    // The stage the reading table is in, and when a packet enters it after issue.
    let ingress = chip.gress(0, Gress::Ingress).unwrap();
    let c = &ingress.program().control;
    let reads = |a: u16| {
        c.actions[a as usize]
            .externs
            .iter()
            .any(|x| matches!(x, ExternCall::QueueDepth { .. }))
    };
    let stages: Vec<u16> = c
        .tables
        .iter()
        .filter(|t| {
            t.actions
                .iter()
                .chain([&t.default_action.action])
                .any(|&a| reads(a))
        })
        .map(|t| t.stage)
        .collect();
    assert_eq!(stages.len(), 1, "one table reads");
    let entry = ingress.timing().stage_entry(stages[0] as usize) as u64;
    assert!(
        entry > ingress.timing().parser as u64,
        "the read is past stage 0"
    );
    let clock = chip.clock();
    let probes = wire
        .frames
        .iter()
        .filter(|(_, _, f)| f[0] == 1)
        .map(|(_, _, f)| {
            let issue = tstamp_ns(f); // 1 GHz: one cycle per ns
            (clock.time_of(issue + entry).ps(), depth_of(f))
        })
        .collect();
    Run {
        probes,
        history,
        events,
        stage_entry: entry,
        chip,
    }
}

/// The TM's true depth in force at snapshot instant `s`: after every change before `s`.
fn depth_at(history: &[(u64, u32)], s: u64) -> u32 {
    history.iter().rev().find(|e| e.0 < s).map_or(0, |e| e.1)
}

/// What a probe at stage time `t` must read under export `period` and `delay`.
fn expected(history: &[(u64, u32)], t: u64, period: u64, delay: u64) -> u32 {
    match t.checked_sub(delay) {
        None => 0,
        Some(x) => depth_at(history, x / period * period),
    }
}

/// Ports 0 and 1 send `n` frames of `len` bytes each at line rate to the hot queue (2:1),
/// then stop; port 3 sends 64-byte probes at irregular spacing to port 3 throughout and
/// after.
fn incast_with_probes(profile: &ChipProfile, n: u64, len: usize) -> Vec<(u16, Time, Vec<u8>)> {
    let gbps = profile.ports_per_pipe[0].speed_gbps;
    let slot = slot_time(len, gbps).ps();
    let mut frames = Vec::new();
    for port in [0u16, 1] {
        for k in 0..n {
            frames.push((port, Time(k * slot), frame(false, HOT_PORT, 0, len)));
        }
    }
    let probe_slot = slot_time(64, gbps).ps();
    let end = 3 * n * slot; // well after the queue has drained
    let mut t = 0;
    let mut k = 0u64;
    while t < end {
        frames.push((3, Time(t), frame(true, 3, 0, 64)));
        // 1 to 60 ns beyond the frame's slot, in a pattern with no common period with
        // the export's.
        t += probe_slot + 1_000 * (1 + (k * 37 + k * k * 11) % 60) + 7 * (k % 13);
        k += 1;
    }
    frames
}

fn check_lag(period: u64, delay: u64) {
    let profile = profile(period, delay);
    // 100-byte frames: the queue changes every 33 ns or so, often enough for the probes to
    // tell a snapshot instant or a stage time off by a few nanoseconds.
    let r = run(&profile, &incast_with_probes(&profile, 300, 100));
    assert!(r.probes.len() > 300, "{} probes", r.probes.len());
    let peak = r.history.iter().map(|e| e.1).max().unwrap();
    assert!(peak > 200, "the queue builds: {peak} cells");
    let mut nonzero = 0;
    for &(t, got) in &r.probes {
        let want = expected(&r.history, t, period, delay);
        assert_eq!(
            got, want,
            "probe with stage time {t} ps read {got}, the TM had {want} cells at its snapshot \
             (period {period} ps, delay {delay} ps)"
        );
        nonzero += (got > 0) as usize;
    }
    assert!(nonzero > 100, "{nonzero} probes saw a queue");
    // The oracle tells delays apart: a delay one period off (or no delay, or no snapshot
    // grid) would have failed.
    let wrong = |p: u64, d: u64| {
        r.probes
            .iter()
            .filter(|&&(t, got)| got != expected(&r.history, t, p, d))
            .count()
    };
    assert!(wrong(period, delay + period) > 0);
    assert!(wrong(period, delay.saturating_sub(period)) > 0 || delay == 0);
    assert!(
        wrong(1, 0) > 0,
        "the live depth differs from the published one"
    );
    // Nor would reading at the gress's exit (or issue) instead of the stage have passed:
    // those are a few cycles later (earlier), the same as a delay shorter (longer).
    let cycle = r.chip.clock().time_of(1).ps();
    let to_exit = (r.chip.ingress_latency_cycles() - r.stage_entry) * cycle;
    assert!(wrong(period, delay.saturating_sub(to_exit)) > 0 || delay == 0);
    assert!(wrong(period, delay + r.stage_entry * cycle) > 0);
    // Captures are at most one per event (they are taken at TM changes), and the ring of
    // captures kept for reads of the recent past stays short.
    let ex = r.chip.depth_export().expect("the program reads depths");
    let latency = r
        .chip
        .clock()
        .time_of(r.chip.ingress_latency_cycles() + 1)
        .ps();
    assert!(ex.kept() as u64 <= (latency + delay) / period + 2);
    assert!(ex.captures() <= r.events as u64);
}

#[test]
fn ghost_depths_lag_the_tm_by_exactly_the_delay() {
    // Tofino2-like numbers (10 ns period, 20 ns delay), then a coarser grid with a delay
    // longer than the ingress pipe, then the teaching profile's own (1 us, no delay).
    check_lag(10_000, 20_000);
    check_lag(50_000, 120_000);
    check_lag(1_000_000, 0);
}

#[test]
fn an_idle_chip_reads_zero_and_takes_no_snapshot_events() {
    let profile = profile(10_000, 20_000);
    // Probes 5 us apart: the chip is empty between them, through hundreds of periods.
    let n = 20u64;
    let frames: Vec<_> = (0..n)
        .map(|k| (3u16, Time(k * 5_000_000), frame(true, 3, 0, 64)))
        .collect();
    let r = run(&profile, &frames);
    assert_eq!(r.probes.len() as u64, n);
    assert!(r.probes.iter().all(|&(_, d)| d == 0));
    // Only the probes' own events: arrive, ingress done, dequeue, egress done.
    assert_eq!(r.events as u64, 4 * n);
    let ex = r.chip.depth_export().unwrap();
    // Each probe's enqueue and dequeue is a change; no other copy is ever taken.
    assert!(ex.captures() <= 2 * n);
}

#[test]
fn a_program_without_reads_keeps_no_export() {
    let profile = chip("teaching");
    let (prog, _) = l3router(&profile);
    let chip = Chip::new(profile, &prog).unwrap();
    assert!(chip.depth_export().is_none());
}
