//! The per-packet trace (`asic run --trace`, docs/TRACE.md): its times against the profile's
//! latencies, the values it shows against what the programs do, its filters, its
//! determinism (lockstep, reruns) and its errors.

use crate::cli::asic;
use crate::common::*;
use asic_bench::bench::Bench;
use asic_bench::run::run_traced;
use asic_bench::scenario::ScenarioFile;
use asic_io::trace::TraceOptions;
use asic_model::mac::frame_time;
use asic_model::profile::ChipProfile;
use asic_model::trace::{PacketTrace, TraceEvent, TraceFilter, TraceRecord};
use pipelines::control::{resolve_op, ResolvedControlOp};
use pipelines::entries::parse_control_file;
use pipelines::pipe::stage_features;
use pipelines::program::{ControlProgram, Gress, Program};
use pipelines::time::{Clock, Time};
use std::path::PathBuf;

/// `program` (a path in the repository) compiled for `profile`, with the operations of a
/// control file's text.
fn compiled(
    profile: &ChipProfile,
    program: &str,
    control: &str,
) -> (Program, Vec<ResolvedControlOp>) {
    let c = asic_io::load::compile_file(&repo(program), profile, true).expect("compiles");
    let ops = parse_control_file(control, "test")
        .unwrap()
        .ops()
        .iter()
        .map(|op| resolve_op(&c.program, op).unwrap())
        .collect();
    (c.program, ops)
}

/// A traced bench of `program` on `profile` with `frames` into port 0; the traces.
fn traced(
    profile: &ChipProfile,
    program: &Program,
    ops: &[ResolvedControlOp],
    frames: Vec<(Time, Vec<u8>)>,
) -> (Bench, Vec<PacketTrace>) {
    let mut b = Bench::with_config(profile.clone(), program, Default::default(), ops).unwrap();
    b.keep_departures();
    b.set_packet_trace(TraceFilter::default()).unwrap();
    b.add_frames(0, frames).unwrap();
    b.run().unwrap();
    let traces = b.packet_traces().to_vec();
    (b, traces)
}

/// The records of `gress` (and the chip's, whatever `gress`) that `pick` selects, with
/// their cycles.
fn cycles_of(p: &PacketTrace, pick: impl Fn(&TraceEvent) -> bool) -> Vec<u64> {
    p.records
        .iter()
        .filter(|r| pick(&r.event))
        .map(|r| r.cycle.expect("a pipe record has a cycle"))
        .collect()
}

/// Cycles of `control`'s stages under the profile's latencies, and the gress's total.
fn stage_cycles(profile: &ChipProfile, control: &ControlProgram) -> (Vec<u64>, u64) {
    let lat = &profile.pipe.latency;
    let stages: Vec<u64> = (0..control.stages)
        .map(|s| lat.stage_cycles(stage_features(control, s)) as u64)
        .collect();
    let total = (lat.parser_cycles + lat.deparser_cycles) as u64 + stages.iter().sum::<u64>();
    (stages, total)
}

/// A lone packet's trace against the profile: the issue at the first edge after its last
/// bit, every stage at its entry cycle from the parser's and earlier stages' latencies, the
/// deparser, the TM at the ingress exit, egress at once, and the departure where the
/// latencies add up; each stage holding a table shows its lookup.
fn check_lone_packet(
    profile: &ChipProfile,
    program: &Program,
    ops: &[ResolvedControlOp],
    frame: Vec<u8>,
) -> PacketTrace {
    let start = Time(1_234_567);
    let (b, traces) = traced(profile, program, ops, vec![(start, frame.clone())]);
    assert_eq!(traces.len(), 1);
    let p = traces[0].clone();
    let clock = Clock::new(profile.clock_hz);
    let lat = &profile.pipe.latency;
    let arrive = start + frame_time(frame.len(), profile.ports_per_pipe[0].speed_gbps);
    let issue = clock.cycle_at_or_after(arrive);
    let (ig_stages, ig_total) = stage_cycles(profile, &program.ingress.control);
    let (eg_stages, eg_total) = stage_cycles(profile, &program.egress.control);

    let TraceRecord {
        time,
        event: TraceEvent::Arrival { last_bit_ps, .. },
        ..
    } = &p.records[0]
    else {
        panic!("the trace starts with the arrival: {:?}", p.records[0])
    };
    assert_eq!((*time, *last_bit_ps), (start, arrive));

    let is = |g: Gress| move |e: &TraceEvent| matches!(e, TraceEvent::Issue { gress, .. } if *gress == g);
    assert_eq!(cycles_of(&p, is(Gress::Ingress)), [issue]);
    let parser = lat.parser_cycles as u64;
    let entries = |first: u64, stages: &[u64]| -> Vec<u64> {
        stages
            .iter()
            .scan(first + parser, |at, c| {
                let entry = *at;
                *at += c;
                Some(entry)
            })
            .collect()
    };
    let stage_of = |g: Gress| move |e: &TraceEvent| matches!(e, TraceEvent::Stage { gress, .. } if *gress == g);
    assert_eq!(
        cycles_of(&p, stage_of(Gress::Ingress)),
        entries(issue, &ig_stages)
    );
    // Every record of a stage is at the stage's entry cycle; every table placed in a stage
    // the packet's path reaches shows its lookup there.
    for r in &p.records {
        if let TraceEvent::Table {
            gress: Gress::Ingress,
            stage,
            ..
        }
        | TraceEvent::Gateway {
            gress: Gress::Ingress,
            stage,
            ..
        }
        | TraceEvent::Phv {
            gress: Gress::Ingress,
            stage: Some(stage),
            ..
        } = &r.event
        {
            assert_eq!(
                r.cycle,
                Some(entries(issue, &ig_stages)[*stage as usize]),
                "{r:?}"
            );
        }
    }
    let deparser = issue + ig_total - lat.deparser_cycles as u64;
    assert_eq!(
        cycles_of(&p, |e| matches!(
            e,
            TraceEvent::Deparser {
                gress: Gress::Ingress,
                ..
            }
        )),
        [deparser]
    );
    let exit = issue + ig_total;
    assert_eq!(
        cycles_of(&p, |e| matches!(
            e,
            TraceEvent::Exit {
                gress: Gress::Ingress,
                ..
            }
        )),
        [exit]
    );
    assert_eq!(
        cycles_of(&p, |e| matches!(e, TraceEvent::Enqueue { .. })),
        [exit]
    );
    // An idle port: served at once, issued into egress at the same edge.
    let served: Vec<Time> = p
        .records
        .iter()
        .filter(|r| matches!(r.event, TraceEvent::Dequeue { .. }))
        .map(|r| r.time)
        .collect();
    assert_eq!(served, [clock.time_of(exit)]);
    assert_eq!(cycles_of(&p, is(Gress::Egress)), [exit]);
    assert_eq!(
        cycles_of(&p, stage_of(Gress::Egress)),
        entries(exit, &eg_stages)
    );
    assert_eq!(
        cycles_of(&p, |e| matches!(
            e,
            TraceEvent::Exit {
                gress: Gress::Egress,
                ..
            }
        )),
        [exit + eg_total]
    );
    let last = p.records.last().unwrap();
    let TraceEvent::Departure { port, .. } = last.event else {
        panic!("the trace ends with the departure: {last:?}")
    };
    let departure = clock.time_of(issue + ig_total + eg_total);
    assert_eq!(last.time, departure);
    let d = &b.departures()[0];
    assert_eq!((d.port, d.start), (port, departure));
    p
}

/// The done-when of issue #21: the L3 router's trace of one packet shows its lookup and
/// PHV change in each stage, at cycles that add up to its departure.
#[test]
fn a_lone_packets_trace_adds_up_to_its_departure() {
    let profile = chip("teaching");
    let (program, entries) = l3router(&profile);
    let ops: Vec<ResolvedControlOp> = entries
        .into_iter()
        .map(ResolvedControlOp::AddEntry)
        .collect();
    let p = check_lone_packet(&profile, &program, &ops, udp_frame([10, 0, 1, 5], 64, 100));
    let table = p.records.iter().find_map(|r| match &r.event {
        TraceEvent::Table {
            table,
            hit: Some(h),
            action,
            ..
        } => Some((table.as_str(), h.key.clone(), action.as_str())),
        _ => None,
    });
    assert_eq!(
        table,
        Some((
            "Ingress.ipv4_lpm",
            vec!["0xa000100/24".to_string()],
            "Ingress.set_nexthop"
        ))
    );
    let ttl = p.records.iter().find_map(|r| match &r.event {
        TraceEvent::Phv {
            stage: Some(0),
            changes,
            ..
        } => changes
            .iter()
            .find(|c| c.fields == ["hdr.ipv4.ttl"])
            .map(|c| (c.old, c.new)),
        _ => None,
    });
    assert_eq!(ttl, Some((64, 63)), "the TTL decrement in stage 0");
}

/// The same on a deeper program: dc_router's dependent chain of tables over several stages
/// of a Tofino-like pipe, TCAM stages (LPM, the ACL) costing their extra cycles.
#[test]
fn a_trace_through_many_stages_adds_up_to_its_departure() {
    let profile = chip("tofino1-like");
    let control = r#"(tables: [
        (table: "my_mac", key: [Exact("02:00:00:00:00:fe")], action: "set_routed"),
        (table: "ipv4_lpm", key: [Exact(0), Lpm("10.0.0.0", 8)], action: "set_nexthop", args: [5]),
        (table: "nexthop", key: [Exact(5)], action: "set_port", args: [3, 7]),
        (table: "dmac_rewrite", key: [Exact(7)], action: "set_dmac", args: ["02:00:00:00:07:07"]),
        (table: "smac_rewrite", key: [Exact(3)], action: "set_smac", args: ["02:00:00:00:00:03"]),
    ])"#;
    let (program, ops) = compiled(&profile, "programs/examples/dc_router.p4", control);
    assert!(
        program.ingress.control.stages >= 5,
        "the chain takes five stages or more"
    );
    let p = check_lone_packet(&profile, &program, &ops, udp_frame([10, 9, 9, 9], 64, 128));
    let lookups: Vec<(String, bool)> = p
        .records
        .iter()
        .filter_map(|r| match &r.event {
            TraceEvent::Table { table, hit, .. } => Some((table.clone(), hit.is_some())),
            _ => None,
        })
        .collect();
    for (t, hit) in [
        ("Ingress.my_mac", true),
        ("Ingress.ipv4_host", false),
        ("Ingress.ipv4_lpm", true),
        ("Ingress.nexthop", true),
        ("Ingress.dmac_rewrite", true),
        ("Ingress.acl", false),
    ] {
        assert!(
            lookups.contains(&(t.to_string(), hit)),
            "{t} {hit} in {lookups:?}"
        );
    }
}

/// The externs' trace against what the programs do: a register's old and new values, a
/// keyless table's default action, a gateway's result, a ternary/range table's hit with its
/// entry, priority and action data and a miss, and a meter's colours.
#[test]
fn a_trace_shows_registers_tables_gateways_and_meters_with_their_values() {
    let profile = chip("teaching");
    // register.p4: `hits[a[7:0]]` counts up to `b` and returns the count.
    let (program, ops) = compiled(
        &profile,
        "tests/stf/register.p4",
        "(registers: [(register: \"hits\", index: 5, value: 7)])",
    );
    let probe = |a: u32, b: u32| {
        let mut f = hex("02000000000202000000000188b5");
        f.extend(a.to_be_bytes());
        f.extend(b.to_be_bytes());
        f.resize(60, 0);
        f
    };
    let frames = vec![
        (Time(0), probe(5, 9)),
        (Time(1_000_000), probe(5, 8)),
        (Time(2_000_000), probe(5, 8)),
    ];
    let (_, traces) = traced(&profile, &program, &ops, frames);
    let registers: Vec<(String, u32, u128, u128, u128)> = traces
        .iter()
        .flat_map(|p| &p.records)
        .filter_map(|r| match &r.event {
            TraceEvent::Register {
                register,
                index,
                old,
                new,
                output,
                ..
            } => Some((register.clone(), *index, *old, *new, *output)),
            _ => None,
        })
        .collect();
    let hits = "Ingress.hits".to_string();
    // 7 < 9: 8; 8 < 8 fails: stays 8 (twice); the output is the value written.
    assert_eq!(
        registers,
        [
            (hits.clone(), 5, 7, 8, 8),
            (hits.clone(), 5, 8, 8, 8),
            (hits, 5, 8, 8, 8)
        ]
    );
    let first = &traces[0].records;
    assert!(first.iter().any(|r| matches!(&r.event,
        TraceEvent::Gateway { condition, holds: true, .. } if condition == "hdr.probe.$valid == 1")), "{first:#?}");
    assert!(first.iter().any(|r| matches!(&r.event,
        TraceEvent::Table { table, hit: None, action, args, .. }
            if table == "Ingress.forward" && action == "Ingress.send" && args[0].value == 1)));

    // acl.p4: ternary and range keys with priorities; no match drops.
    let control = r#"(tables: [
        (table: "acl", key: [Ternary("0x0a000000", "0xff000000"), Range(0, 1000)], action: "permit", args: [2, 1], priority: 10),
    ])"#;
    let (program, ops) = compiled(&profile, "tests/stf/acl.p4", control);
    let (_, traces) = traced(
        &profile,
        &program,
        &ops,
        vec![
            (Time(0), probe(0x0a00_0001, 100)),
            (Time(1_000_000), probe(0x0b00_0001, 100)),
        ],
    );
    let acl: Vec<&TraceEvent> = traces
        .iter()
        .flat_map(|p| &p.records)
        .map(|r| &r.event)
        .filter(|e| matches!(e, TraceEvent::Table { table, .. } if table == "Ingress.acl"))
        .collect();
    let [TraceEvent::Table {
        key,
        hit: Some(h),
        action,
        args,
        ..
    }, TraceEvent::Table {
        hit: None,
        action: missed,
        ..
    }] = acl.as_slice()
    else {
        panic!("one hit then one miss: {acl:#?}")
    };
    assert_eq!((key[0].value, key[1].value), (0x0a00_0001, 100));
    assert_eq!(h.key, ["0xa000000 &&& 0xff000000", "0..0x3e8"]);
    assert_eq!(h.priority, 10);
    assert_eq!(action, "Ingress.permit");
    assert_eq!(
        args.iter()
            .map(|a| (a.name.as_str(), a.value))
            .collect::<Vec<_>>(),
        [("port", 2), ("tag", 1)]
    );
    assert_eq!(missed, "Ingress.drop");

    // meter.p4: meter 1 at CIR 1000/s, PIR 2000/s, CBS 1, PBS 2 packets: three packets back to
    // back are green, yellow, red (tests/stf/meter.stf works the buckets out).
    let control = "(meters: [(meter: \"m\", index: 1, cir: 1000, pir: 2000, cbs: 1, pbs: 2)])";
    let (program, ops) = compiled(&profile, "tests/stf/meter.p4", control);
    let slot = asic_model::mac::slot_time(60, 10);
    let frames = (0..3).map(|i| (Time(i * slot.ps()), probe(1, 0))).collect();
    let (_, traces) = traced(&profile, &program, &ops, frames);
    let colours: Vec<(u32, &str)> = traces
        .iter()
        .flat_map(|p| &p.records)
        .filter_map(|r| match &r.event {
            TraceEvent::Meter {
                meter,
                index,
                colour,
                ..
            } if meter == "Ingress.m" => Some((*index, *colour)),
            _ => None,
        })
        .collect();
    assert_eq!(colours, [(1, "green"), (1, "yellow"), (1, "red")]);
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// A temporary output directory.
fn out_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("asic-trace-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// The l3router scenario traced with `filter` (the lockstep engine if `lockstep`): its
/// packets, and the text and JSON lines written.
fn scenario_trace(
    filter: TraceFilter,
    lockstep: bool,
    name: &str,
) -> (Vec<PacketTrace>, String, String) {
    let sf = ScenarioFile::load(&repo("programs/l3router/scenario.ron")).unwrap();
    let dir = out_dir(name);
    let opts = TraceOptions {
        filter,
        ..TraceOptions::default()
    };
    run_traced(&sf, Some(&dir), lockstep, Some(&opts)).unwrap();
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap();
    let (text, json) = (read("trace.txt"), read("trace.jsonl"));
    std::fs::remove_dir_all(&dir).ok();
    (packets_of_json(&json), text, json)
}

/// The packets of a trace's JSON lines, by number, with their records' kinds, times and
/// ports (enough to compare traces).
fn packets_of_json(json: &str) -> Vec<PacketTrace> {
    let mut out: Vec<PacketTrace> = Vec::new();
    for line in json.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let n = v["packet"].as_u64().unwrap();
        let record = TraceRecord {
            time: Time(v["time_ps"].as_u64().unwrap()),
            cycle: v["cycle"].as_u64(),
            event: TraceEvent::Drop { reason: "" },
        };
        match out.last_mut() {
            Some(p) if p.packet == n => p.records.push(record),
            _ => out.push(PacketTrace {
                packet: n,
                records: vec![record],
            }),
        }
    }
    out
}

/// The ports each packet went through, by the JSON lines' `port` fields.
fn ports_by_packet(json: &str) -> std::collections::BTreeMap<u64, std::collections::BTreeSet<u64>> {
    let mut m = std::collections::BTreeMap::<u64, std::collections::BTreeSet<u64>>::new();
    for line in json.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let e = m.entry(v["packet"].as_u64().unwrap()).or_default();
        let kind = v["kind"].as_str().unwrap();
        if let ("arrival" | "enqueue" | "departure" | "issue", Some(p)) =
            (kind, v["fields"]["port"].as_u64())
        {
            e.insert(p);
        }
    }
    m
}

/// The filters keep what they say: the packets named, the packets through a port (every
/// one of them), the records in a window; numbers do not depend on the filter.
#[test]
fn the_filters_select_what_they_say() {
    let (all, _, all_json) = scenario_trace(TraceFilter::default(), false, "all");
    assert_eq!(all.len(), 406, "every packet of the scenario");
    let by_number = |n: u64| all.iter().find(|p| p.packet == n).unwrap();
    let mut numbers: Vec<u64> = all.iter().map(|p| p.packet).collect();
    numbers.sort_unstable();
    assert_eq!(numbers, (0..406).collect::<Vec<_>>());

    let (some, _, _) = scenario_trace(
        TraceFilter {
            packets: vec![3, 7],
            ..TraceFilter::default()
        },
        false,
        "packets",
    );
    assert_eq!(some.iter().map(|p| p.packet).collect::<Vec<_>>(), [3, 7]);
    for p in &some {
        assert_eq!(p, by_number(p.packet), "the whole of packet {}", p.packet);
    }

    let all_ports = ports_by_packet(&all_json);
    let (through, _, json) = scenario_trace(
        TraceFilter {
            ports: vec![3],
            ..TraceFilter::default()
        },
        false,
        "port",
    );
    let want: Vec<u64> = all_ports
        .iter()
        .filter(|(_, ports)| ports.contains(&3))
        .map(|(n, _)| *n)
        .collect();
    let mut got: Vec<u64> = through.iter().map(|p| p.packet).collect();
    got.sort_unstable();
    assert!(!want.is_empty() && want.len() < all.len());
    assert_eq!(got, want);
    assert!(ports_by_packet(&json).values().all(|p| p.contains(&3)));

    let (from, to) = (Time::from_ns(2_000), Time::from_ns(3_000));
    let window = TraceFilter {
        from: Some(from),
        to: Some(to),
        ..TraceFilter::default()
    };
    let (inside, _, _) = scenario_trace(window, false, "window");
    let want: Vec<PacketTrace> = all
        .iter()
        .map(|p| PacketTrace {
            packet: p.packet,
            records: p
                .records
                .iter()
                .filter(|r| r.time >= from && r.time <= to)
                .cloned()
                .collect(),
        })
        .filter(|p| !p.records.is_empty())
        .collect();
    assert!(!want.is_empty() && want.len() < all.len());
    assert_eq!(inside, want);
}

/// The trace is the same, byte for byte, when every cycle is visited and when the run is
/// repeated.
#[test]
fn the_trace_is_the_same_with_lockstep_and_on_a_rerun() {
    let (_, text, json) = scenario_trace(TraceFilter::default(), false, "events");
    let (_, text_again, json_again) = scenario_trace(TraceFilter::default(), false, "again");
    let (_, text_lockstep, json_lockstep) =
        scenario_trace(TraceFilter::default(), true, "lockstep");
    assert!(text == text_again && json == json_again, "a rerun differs");
    assert!(text == text_lockstep, "lockstep changes the text");
    assert!(json == json_lockstep, "lockstep changes the JSON lines");
}

/// A filter that matches nothing says what the run had; one naming a port the chip lacks is
/// refused before the run; `--trace -` writes the text to standard output.
#[test]
fn trace_flags_read_and_fail_as_a_user_expects() {
    let scenario = repo("programs/l3router/scenario.ron");
    let scenario = scenario.to_str().unwrap();
    let dir = out_dir("cli");
    let out = dir.to_str().unwrap();
    let (ok, _, err) = asic(&["run", scenario, "--out", out, "--trace-port", "4"]);
    assert!(!ok);
    assert!(
        err.contains("trace: no packet matched --trace-port 4 (the run had packets 0 to 405; they went through ports 0, 1, 2, 3)"),
        "{err}"
    );
    let (ok, _, err) = asic(&["run", scenario, "--out", out, "--trace-port", "99"]);
    assert!(!ok);
    assert!(
        err.contains("--trace-port 99: the chip has no port 99 (ports 0-3 front panel"),
        "{err}"
    );
    let (ok, _, err) = asic(&[
        "run",
        scenario,
        "--out",
        out,
        "--trace-from-ns",
        "900",
        "--trace-to-ns",
        "800",
    ]);
    assert!(
        !ok && err.contains("--trace-from-ns 900 is after --trace-to-ns 800"),
        "{err}"
    );
    let (ok, _, err) = asic(&["run", scenario, "--out", out, "--trace-packet", "406"]);
    assert!(
        !ok && err.contains("no packet matched --trace-packet 406 (the run had packets 0 to 405)"),
        "{err}"
    );

    let (ok, text, err) = asic(&[
        "run",
        scenario,
        "--out",
        out,
        "--trace",
        "-",
        "--trace-packet",
        "0",
    ]);
    assert!(ok, "{err}");
    assert!(
        text.starts_with("packet 0\n  0.000 ns: port 0 MAC, receive\n"),
        "{text}"
    );
    assert!(
        text.contains(
            "table Ingress.ipv4_lpm, key hdr.ipv4.dst_addr = 0xa000101: hit [0xa000100/24]"
        ),
        "{text}"
    );
    assert!(!dir.join("trace.txt").exists() && dir.join("trace.jsonl").exists());
    std::fs::remove_dir_all(&dir).ok();
}

/// On a network: `--trace-chip` traces the chip named (its records name it), and a name the
/// network lacks is refused, naming the chips it has.
#[test]
fn a_network_traces_the_chips_it_is_asked_to() {
    let scenario = repo("programs/bfc/two-flows.ron");
    let scenario = scenario.to_str().unwrap();
    let dir = out_dir("net");
    let out = dir.to_str().unwrap();
    let (ok, _, err) = asic(&["net", scenario, "--out", out, "--trace-chip", "nosuch"]);
    assert!(!ok);
    assert!(
        err.contains("--trace-chip nosuch: the network has no chip `nosuch` (its chips: "),
        "{err}"
    );
    let (ok, _, err) = asic(&[
        "net",
        scenario,
        "--out",
        out,
        "--trace-chip",
        "sw1",
        "--trace-packet",
        "0,1",
    ]);
    assert!(ok, "{err}");
    let json = std::fs::read_to_string(dir.join("trace.jsonl")).unwrap();
    let text = std::fs::read_to_string(dir.join("trace.txt")).unwrap();
    assert!(text.starts_with("packet 0 on chip sw1\n"), "{text}");
    let chips: std::collections::BTreeSet<String> = json
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["chip"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(chips.into_iter().collect::<Vec<_>>(), ["sw1"]);
    std::fs::remove_dir_all(&dir).ok();
}
