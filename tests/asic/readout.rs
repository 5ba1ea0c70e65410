//! State readout: what the control plane reads back after a run and at scheduled times
//! (registers, counters, meters, tables with their hit counts), checked against what the
//! inputs make them, in `summary.json` and `state.txt`; and the reads' bad input as located
//! errors.

use crate::common::*;
use asic_bench::bench::{Bench, RunReport};
use asic_bench::run::run_scenario;
use asic_bench::scenario::{ScenarioFile, Source};
use asic_io::load::compile_file;
use asic_model::mac::frame_time;
use pipelines::control::{resolve_op, ControlOp, RegisterRead};
use pipelines::entries::{parse_control_file, parse_value, EntrySpec, KeySpec, Value};
use pipelines::pipe::stage_features;
use pipelines::program::{KeyMatch, Program};
use pipelines::readout::{ChipState, ControlRead, CounterState, GressState, Pipes, Reading};
use pipelines::time::{Clock, Time};
use std::collections::BTreeMap;

/// Run `programs/examples/<name>.reads.ron` into a temporary directory.
fn run_example(name: &str) -> (ScenarioFile, RunReport, tempfile::TempDir) {
    let path = repo(&format!("programs/examples/{name}.reads.ron"));
    let sf = ScenarioFile::load(&path).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (report, _) = run_scenario(&sf, Some(dir.path()), false).unwrap();
    (sf, report, dir)
}

/// What `pipe` holds among groups of pipes.
fn on_pipe<T>(groups: &[Pipes<T>], pipe: u16) -> &T {
    &groups
        .iter()
        .find(|g| g.pipes.contains(&pipe))
        .expect("every pipe is in a group")
        .state
}

/// The ingress state of `pipe` at the end of a run.
fn ingress_of(state: &ChipState, pipe: u16) -> &GressState {
    &on_pipe(&state.pipes, pipe).ingress
}

/// A read's result on `pipe`.
fn reading_of(read: &ControlRead, pipe: u16) -> &Reading {
    on_pipe(&read.pipes, pipe)
}

/// `(index, value)` of a register's elements in a gress's state.
fn register(g: &GressState, name: &str) -> BTreeMap<u32, u64> {
    let r = g.registers.iter().find(|r| r.name.ends_with(name)).unwrap();
    r.elements.iter().map(|e| (e.index, e.value)).collect()
}

/// CRC-16/ARC (TNA's CRC16): reflected polynomial 0x8005, initial value 0.
fn crc16_arc(bytes: &[u8]) -> u16 {
    let mut crc = 0u16;
    for &b in bytes {
        crc ^= u16::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xa001
            } else {
                crc >> 1
            };
        }
    }
    crc
}

fn ip(s: &str) -> [u8; 4] {
    s.parse::<std::net::Ipv4Addr>().unwrap().octets()
}

/// The cycle a packet issued at `issue` reaches `stage` of `program`'s ingress on `chip`.
fn at_stage(chip_name: &str, program: &Program, issue: u64, stage: u16) -> u64 {
    let lat = &chip(chip_name).pipe.latency;
    let c = &program.ingress.control;
    let before: u32 = (0..stage)
        .map(|s| lat.stage_cycles(stage_features(c, s)))
        .sum();
    issue + u64::from(lat.parser_cycles + before)
}

#[test]
fn flow_counter_counts_each_flows_packets() {
    assert_eq!(
        crc16_arc(b"123456789"),
        0xbb3d,
        "the catalogue's check value"
    );
    let (sf, report, dir) = run_example("flow_counter");
    let profile = chip(&sf.scenario.chip);
    // What the inputs make: per pipe, each flow's packets at CRC16(5-tuple) mod 1024, and
    // each port's bytes at the port.
    let mut counts: BTreeMap<u16, BTreeMap<u32, u64>> = BTreeMap::new();
    let mut bytes: BTreeMap<u16, BTreeMap<u32, u64>> = BTreeMap::new();
    for input in &sf.scenario.inputs {
        let Source::Generator(g) = &input.source else {
            panic!("the example's inputs are generators")
        };
        let asic_bench::scenario::Template::Udp(u) = &g.packet;
        let mut tuple = Vec::new();
        tuple.extend(ip(&u.src_ip));
        tuple.extend(ip(&u.dst_ip));
        tuple.push(17);
        tuple.extend(u.src_port.to_be_bytes());
        tuple.extend(u.dst_port.to_be_bytes());
        let pipe = profile.pipe_of_port(input.port).unwrap();
        let index = u32::from(crc16_arc(&tuple)) % 1024;
        *counts.entry(pipe).or_default().entry(index).or_default() += g.count;
        *bytes
            .entry(pipe)
            .or_default()
            .entry(u32::from(input.port))
            .or_default() += g.count * g.size as u64;
    }
    assert_eq!(
        counts.values().map(BTreeMap::len).sum::<usize>(),
        4,
        "four flows"
    );
    for pipe in 0..profile.pipes {
        let g = ingress_of(&report.state, pipe);
        let none = BTreeMap::new();
        assert_eq!(
            register(g, "flow_count"),
            *counts.get(&pipe).unwrap_or(&none),
            "pipe {pipe}"
        );
        assert_eq!(
            register(g, "port_bytes"),
            *bytes.get(&pipe).unwrap_or(&none),
            "pipe {pipe}"
        );
    }
    // The same in summary.json, and readable in state.txt.
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("summary.json")).unwrap())
            .unwrap();
    let state: ChipState = serde_json::from_value(json["state"].clone()).unwrap();
    assert_eq!(state, report.state);
    let text = std::fs::read_to_string(dir.path().join("state.txt")).unwrap();
    assert!(
        text.contains(
            "Ingress.flow_count: register, 1024 x bit<32>, initial value 0; 3 elements not at it"
        ),
        "{text}"
    );
    for (index, n) in &counts[&0] {
        let row = format!("{index:>5}  {n:>5}\n");
        assert!(text.contains(&row), "{row:?} in\n{text}");
    }
}

/// RFC 2698 (colour-blind) for one meter, in exact integer arithmetic: buckets hold
/// tokens × 10^12, so `rate` tokens per second over `dt` ps add `rate × dt`.
struct Trtcm {
    cir: u128,
    pir: u128,
    cbs: u128,
    pbs: u128,
    tc: u128,
    tp: u128,
    last: Option<u64>,
}

const E12: u128 = 1_000_000_000_000;

impl Trtcm {
    fn new(cir: u128, pir: u128, cbs: u128, pbs: u128) -> Trtcm {
        Trtcm {
            cir,
            pir,
            cbs,
            pbs,
            tc: cbs * E12,
            tp: pbs * E12,
            last: None,
        }
    }

    /// Both buckets at `t` ps.
    fn at(&self, t: u64) -> (u128, u128) {
        let dt = self.last.map_or(0, |l| u128::from(t - l));
        (
            (self.tc + self.cir * dt).min(self.cbs * E12),
            (self.tp + self.pir * dt).min(self.pbs * E12),
        )
    }

    /// The colour of `b` bytes at `t` ps: 0 green, 1 yellow, 3 red (TNA's encoding).
    fn color(&mut self, t: u64, b: u128) -> usize {
        (self.tc, self.tp) = self.at(t);
        self.last = Some(t);
        let b = b * E12;
        if self.tp < b {
            3
        } else if self.tc < b {
            self.tp -= b;
            1
        } else {
            self.tp -= b;
            self.tc -= b;
            0
        }
    }
}

/// `(index, packets, bytes)` of a counter array's non-zero counters.
fn counts(c: &CounterState) -> Vec<(u32, u64, u64)> {
    c.counters
        .iter()
        .map(|k| (k.index, k.packets, k.bytes))
        .collect()
}

#[test]
fn policer_colours_match_an_rfc2698_calculation() {
    let (sf, report, _dir) = run_example("policer");
    let s = &sf.scenario;
    let profile = chip(&s.chip);
    let program = compile_file(&repo("programs/examples/policer.p4"), &profile, true)
        .unwrap()
        .program;
    let clock = Clock::new(profile.clock_hz);
    let meter_stage = program.ingress.control.meters[0].stage;
    let entries =
        std::fs::read_to_string(repo("programs/examples/policer.reads.entries.ron")).unwrap();
    let m = &parse_control_file(&entries, "policer.reads.entries.ron")
        .unwrap()
        .meters[0];
    let v = |x: &Value| parse_value(x).unwrap();
    let mut meter = Trtcm::new(v(&m.cir), v(&m.pir), v(&m.cbs), v(&m.pbs));

    // Every frame's arrival cycle (last bit in), per port, from the scenario's generators.
    let mut arrivals: Vec<(u64, u16, usize)> = Vec::new();
    for input in &s.inputs {
        let Source::Generator(g) = &input.source else {
            panic!("generators")
        };
        let line = profile.port_speed_gbps(input.port).unwrap();
        let rate = g.rate_gbps.unwrap_or(line);
        let interval = asic_model::mac::slot_time(g.size, rate);
        for k in 0..g.count {
            let t0 = Time::from_ns(g.start_ns) + Time(k * interval.ps());
            let cycle = clock.cycle_at_or_after(t0 + frame_time(g.size, line));
            arrivals.push((cycle, input.port, g.size));
        }
    }
    arrivals.sort();
    // One issue slot per cycle: no two frames arrive in the same cycle here, so each is
    // issued as it arrives.
    assert!(arrivals.windows(2).all(|w| w[0].0 < w[1].0));

    // Port 0's frames hit l2_fwd and are metered (the others miss and are dropped): colour
    // each at the time it is in the meter's stage.
    let read_at = Time(s.control[0].at_ns * 1000);
    let read_cycle = clock.cycle_at_or_after(read_at);
    let mut end = [(0u64, 0u64); 4];
    let mut by_read = [(0u64, 0u64); 4];
    let mut buckets_at_read = None;
    for &(issue, _, size) in arrivals.iter().filter(|a| a.1 == 0) {
        let cycle = at_stage(&s.chip, &program, issue, meter_stage);
        if cycle >= read_cycle && buckets_at_read.is_none() {
            buckets_at_read = Some(meter.at(read_at.ps()));
        }
        let color = meter.color(clock.time_of(cycle).ps(), size as u128);
        end[color].0 += 1;
        end[color].1 += size as u64;
        if cycle < read_cycle {
            by_read[color] = end[color];
        }
    }
    let nonzero = |c: &[(u64, u64); 4]| -> Vec<(u32, u64, u64)> {
        (0..4)
            .filter(|&i| c[i].0 > 0)
            .map(|i| (i as u32, c[i].0, c[i].1))
            .collect()
    };
    let expected = nonzero(&end);
    println!("green, yellow, red: {expected:?}");
    assert_eq!(expected.len(), 3, "all three colours occur: {expected:?}");
    let g = ingress_of(&report.state, 0);
    assert_eq!(counts(&g.counters[0]), expected);

    // The reads at 81 us: the counters of the frames metered before that cycle, and the
    // buckets at that time exactly.
    let Reading::Counter(c) = reading_of(&report.reads[0], 0) else {
        panic!("{:?}", report.reads[0])
    };
    assert_eq!(counts(c), nonzero(&by_read));
    assert!(!counts(c).is_empty() && counts(c) != expected);
    assert_eq!(report.reads[0].cycle, read_cycle);
    let Reading::Meter(mr) = reading_of(&report.reads[1], 0) else {
        panic!("{:?}", report.reads[1])
    };
    let (tc, tp) = buckets_at_read.unwrap();
    assert_eq!(
        (mr.meters[0].committed, mr.meters[0].peak),
        ((tc / E12) as u64, (tp / E12) as u64)
    );

    // l2_fwd's direct counter: port 0's frames hit its entry, port 2's miss.
    let sent = |port: u16| arrivals.iter().filter(|a| a.1 == port).count() as u64;
    for (read, want) in report.reads[2..].iter().zip([sent(0), sent(2)]) {
        let Reading::DirectCounter(d) = reading_of(read, 0) else {
            panic!("{read:?}")
        };
        assert_eq!(d.counts.packets, want, "{d:?}");
    }
    let l2 = g
        .tables
        .iter()
        .find(|t| t.name.ends_with("l2_fwd"))
        .unwrap();
    assert_eq!(
        (
            l2.entries[0].hits,
            l2.misses,
            l2.direct_misses.unwrap().packets
        ),
        (sent(0), sent(2), sent(2))
    );
}

/// flow_counter on the teaching chip, its port 0 patched to port 1.
fn flow_counter_bench() -> (Program, Bench) {
    let profile = chip("teaching");
    let program = compile_file(&repo("programs/examples/flow_counter.p4"), &profile, true)
        .unwrap()
        .program;
    let op = ControlOp::AddEntry(EntrySpec {
        table: "port_fwd".into(),
        key: vec![KeySpec::Exact(Value::Int(0))],
        action: "forward".into(),
        args: vec![Value::Int(1)],
        priority: 0,
    });
    let pipelines::control::ResolvedControlOp::AddEntry(e) = resolve_op(&program, &op).unwrap()
    else {
        unreachable!()
    };
    let bench = Bench::new(profile, &program, &[e]).unwrap();
    (program, bench)
}

#[test]
fn a_read_between_two_packets_sees_exactly_the_first() {
    let (program, mut bench) = flow_counter_bench();
    let clock = bench.chip().clock();
    let frame = udp_frame([10, 0, 2, 7], 64, 64);
    let starts = [Time::ZERO, Time::from_ns(100)];
    let stage = program.ingress.control.registers[0].stage;
    assert!(program.ingress.control.registers[0]
        .name
        .ends_with("flow_count"));
    // The cycle each packet is in flow_count's stage.
    let in_stage: Vec<u64> = starts
        .iter()
        .map(|&t| {
            let issue = clock.cycle_at_or_after(t + frame_time(frame.len(), 10));
            at_stage("teaching", &program, issue, stage)
        })
        .collect();
    // Whole-array reads (the flow's element, wherever its hash puts it) when each packet is
    // in the stage, and one picosecond later (the next cycle).
    let times: Vec<Time> = in_stage
        .iter()
        .flat_map(|&c| [clock.time_of(c), clock.time_of(c) + Time(1)])
        .collect();
    let read = ControlOp::ReadRegister(RegisterRead {
        register: "flow_count".into(),
        index: None,
    });
    for &t in &times {
        bench.schedule_control(t, resolve_op(&program, &read).unwrap());
    }
    bench
        .add_frames(0, starts.iter().map(|&t| (t, frame.clone())).collect())
        .unwrap();
    let report = bench.run().unwrap();
    let seen: Vec<(u64, u64, u64)> = report
        .reads
        .iter()
        .map(|r| {
            let Reading::Register(reg) = reading_of(r, 0) else {
                panic!("{r:?}")
            };
            let total = reg.elements.iter().map(|e| e.value).sum();
            (r.at_ps, r.cycle, total)
        })
        .collect();
    assert_eq!(
        seen,
        vec![
            (times[0].ps(), in_stage[0], 0),
            (times[1].ps(), in_stage[0] + 1, 1),
            (times[2].ps(), in_stage[1], 1),
            (times[3].ps(), in_stage[1] + 1, 2),
        ]
    );
}

#[test]
fn dump_table_shows_each_entrys_hits_and_the_misses() {
    let dir = tempfile::tempdir().unwrap();
    // Three frames to 10.0.2.x (10.0.2.0/24), two to 10.0.1.x (10.0.1.0/24), one to
    // 10.0.9.9 (only 10.0.0.0/16 matches), one to 192.168.0.1 (no route).
    let dests = [
        ("10.0.2.7", 3),
        ("10.0.1.5", 2),
        ("10.0.9.9", 1),
        ("192.168.0.1", 1),
    ];
    let inputs: Vec<String> = dests
        .iter()
        .enumerate()
        .map(|(port, (ip, n))| {
            format!(
                "(port: {port}, source: Generator((count: {n}, size: 100, rate_gbps: Some(1), \
                 packet: Udp((dst_ip: \"{ip}\")))))"
            )
        })
        .collect();
    let text = format!(
        r#"(
    chip: "teaching",
    program: "{}",
    entries: Some("{}"),
    inputs: [{}],
    control: [(at_ns: 100000, op: DumpTable((table: "ipv4_lpm")))],
)"#,
        repo("programs/l3router/l3router.p4").display(),
        repo("programs/l3router/entries.ron").display(),
        inputs.join(", ")
    );
    let path = dir.path().join("dump.ron");
    std::fs::write(&path, &text).unwrap();
    let sf = ScenarioFile::load(&path).unwrap();
    let (report, _) = run_scenario(&sf, Some(dir.path()), false).unwrap();
    let Reading::Table(t) = reading_of(&report.reads[0], 0) else {
        panic!("{:?}", report.reads[0])
    };
    // The entries file's routes in its order: 10.0.1.0/24, 10.0.2.0/24, 10.0.0.0/16.
    let hits: Vec<(KeyMatch, u64)> = t.entries.iter().map(|e| (e.key[0], e.hits)).collect();
    let lpm = |a: &str, l| KeyMatch::Lpm {
        value: u32::from_be_bytes(ip(a)) as u128,
        prefix_len: l,
    };
    assert_eq!(
        hits,
        vec![
            (lpm("10.0.1.0", 24), 2),
            (lpm("10.0.2.0", 24), 3),
            (lpm("10.0.0.0", 16), 1)
        ]
    );
    assert_eq!(t.misses, 1);
    assert_eq!(t.entries[1].action, "Ingress.set_nexthop");
    let args: Vec<(&str, u128)> = t.entries[1]
        .args
        .iter()
        .map(|a| (a.name.as_str(), a.value))
        .collect();
    assert_eq!(
        args,
        [
            ("port", 2),
            ("dmac", 0x0200_0000_0201),
            ("smac", 0x0200_0000_00f2)
        ]
    );
    let text = std::fs::read_to_string(dir.path().join("state.txt")).unwrap();
    assert!(
        text.contains("Ingress.ipv4_lpm: table, 3 of "),
        "the table in state.txt:\n{text}"
    );
    assert!(
        text.contains(
            "    1  0xa000200/24       Ingress.set_nexthop  port=2, dmac=0x20000000201, \
             smac=0x200000000f2     3\n"
        ),
        "an entry's row:\n{text}"
    );
}

/// `asic run` of a one-chip scenario holding `control`, written to a temporary directory
/// with flow_counter's program: the error and the scenario's text.
fn run_with_control(control: &str) -> (String, String) {
    let dir = tempfile::tempdir().unwrap();
    let text = format!(
        "(\n    chip: \"teaching\",\n    program: \"{}\",\n    inputs: [],\n    control: [\n        {control},\n    ],\n)",
        repo("programs/examples/flow_counter.p4").display()
    );
    let path = dir.path().join("s.ron");
    std::fs::write(&path, &text).unwrap();
    let sf = ScenarioFile::load(&path).unwrap();
    let err = run_scenario(&sf, Some(dir.path()), false).unwrap_err();
    (err.replace(&path.display().to_string(), "s.ron"), text)
}

/// `line:col` (1-based) of the first `needle` in `text`.
fn place(text: &str, needle: &str) -> String {
    let at = text.find(needle).unwrap();
    let line = text[..at].matches('\n').count() + 1;
    let col = at - text[..at].rfind('\n').map_or(0, |n| n + 1) + 1;
    format!("{line}:{col}")
}

#[test]
fn bad_reads_are_errors_placed_in_the_scenario() {
    // (the operation, what the error is placed at, the error after `file:line:col: `)
    let cases = [
        (
            r#"(at_ns: 10, op: DumpTable((table: "nope")))"#,
            "\"nope\"",
            "control 1 (table `nope`): no table named `nope` (the program has: \
             Ingress.tbl_drop, Ingress.port_fwd, Ingress.port_stats, Ingress.flow, \
             Ingress.heavy_hitter)",
        ),
        (
            r#"(at_ns: 10, op: ReadCounter((counter: "nope")))"#,
            "\"nope\"",
            "control 1 (counter `nope`): no counter array named `nope` (the program has none)",
        ),
        (
            r#"(at_ns: 10, op: ReadRegister((register: "flow_count", index: Some(1024))))"#,
            "\"flow_count\"",
            "control 1 (register `flow_count`): Ingress.flow_count: index 1024 is out of range \
             (the array has 1024 elements, 0 to 1023)",
        ),
        // A write past the end is refused as early, in the same words.
        (
            r#"(at_ns: 10, op: WriteRegister((register: "port_bytes", index: 512, value: 1)))"#,
            "\"port_bytes\"",
            "control 1 (register `port_bytes`): Ingress.port_bytes: index 512 is out of range \
             (the array has 512 elements, 0 to 511)",
        ),
        (
            r#"(at_ns: 2000000000000000, op: ReadRegister((register: "flow_count")))"#,
            "2000000000000000",
            "control[0]: at_ns: 2000000000000000 ns is beyond the longest time a scenario may \
             name (1000000000000000 ns, 11.6 days)",
        ),
        (
            r#"(at_ns: 10, op: ReadDirectCounter((table: "port_fwd")))"#,
            "\"port_fwd\"",
            "control 1 (table `port_fwd`): table Ingress.port_fwd has no direct counter",
        ),
    ];
    for (control, at, message) in cases {
        let (err, text) = run_with_control(control);
        assert_eq!(err, format!("s.ron:{}: {message}", place(&text, at)));
    }
}

/// A network of one switch, two hosts sending to a third without acknowledgements, and
/// `chips` settings.
fn net_text(chips: &str) -> String {
    format!(
        r#"(
    name: "reads",
    topology: Generate((shape: SingleSwitch(hosts: 3), chip: "teaching", delay_ns: 500)),
    chips: [{chips}],
    transport: Raw(()),
    traffic: [Flow((src: "h1", dst: "h0", size: 30000)), Flow((src: "h2", dst: "h0", size: 6000))],
)"#
    )
}

#[test]
fn a_network_runs_reads_appear_in_summary_json() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("net.ron");
    // A read long after the flows complete: the run goes on until it is taken.
    let text = net_text(
        r#"(select: All, control: [(at_ns: 500000, op: DumpTable((table: "ipv4_lpm")))])"#,
    );
    std::fs::write(&path, &text).unwrap();
    let run = asic_deploy::run::run_file(&path, Default::default(), &mut ()).unwrap();
    asic_report::write_run(
        &run.record,
        dir.path(),
        &asic_report::ReportOptions::default(),
    )
    .unwrap();
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("summary.json")).unwrap())
            .unwrap();
    let chip = &json["chips"][0];
    assert_eq!(chip["node"], "sw0");
    let read: ControlRead = serde_json::from_value(chip["reads"][0].clone()).unwrap();
    assert_eq!(read.at_ps, 500_000_000);
    let Reading::Table(t) = reading_of(&read, 0) else {
        panic!("{read:?}")
    };
    // Every data packet of both flows went to h0's route; nothing else crossed the chip.
    let sent: u64 = run.record.hosts.iter().map(|h| h.packets_sent).sum();
    let mut hits: Vec<u64> = t.entries.iter().map(|e| e.hits).collect();
    hits.sort_unstable();
    assert_eq!(hits, vec![0, 0, sent]);
    assert_eq!(t.misses, 0);
    let state = std::fs::read_to_string(dir.path().join("state.txt")).unwrap();
    assert!(state.starts_with("chip sw0 (teaching)\n"), "{state}");
    assert!(state.contains("at 500000.000 ns (cycle 500000)"), "{state}");

    // A read the scenario names wrongly is placed at the name.
    let bad = net_text(r#"(select: All, control: [(at_ns: 5, op: DumpTable((table: "nope")))])"#);
    std::fs::write(&path, &bad).unwrap();
    let err = asic_deploy::run::run_file(&path, Default::default(), &mut ())
        .err()
        .unwrap();
    assert!(
        err.starts_with(&format!("{}:{}: control 1 (table `nope`) of chip `sw0`: no table named `nope` (the program has: ", path.display(), place(&bad, "\"nope\""))),
        "{err}"
    );
}
