//! A table split across stages on the chip: programs/examples/host_routes.p4's 200,000 host
//! routes on `tofino2-like` (five parts), every installed entry found whichever part holds
//! it, the gress as long as the stages the parts occupy, the action of a hit timed in the
//! stage of its part, and the example's scenario.

use crate::common::*;
use asic_bench::bench::Bench;
use asic_bench::run::run_scenario;
use asic_bench::scenario::ScenarioFile;
use asic_io::load::compile_file;
use asic_model::chip::DropReason;
use asic_model::mac::frame_time;
use pipelines::entries::ResolvedEntry;
use pipelines::mau::DepthView;
use pipelines::pipe::LoadedGress;
use pipelines::program::{ActionCall, Entry, Gress, GressProgram, KeyMatch, Program};
use pipelines::time::{Clock, Time};
use std::cell::RefCell;

const HOSTS: u32 = 200_000;

/// The table and action called `table`, `action` in `g` (indices).
fn ids(g: &GressProgram, table: &str, action: &str) -> (u16, u16) {
    let t = g.control.tables.iter().position(|t| t.name == table);
    let a = g.control.actions.iter().position(|a| a.name == action);
    (t.unwrap() as u16, a.unwrap() as u16)
}

fn entry(table: u16, key: u128, action: u16, args: Vec<u128>) -> ResolvedEntry {
    ResolvedEntry {
        gress: Gress::Ingress,
        table,
        entry: Entry {
            key: vec![KeyMatch::Exact(key)],
            action: ActionCall { action, args },
            priority: 0,
        },
    }
}

/// Host route `i`: 10.0.0.0 + i, to next hop `i % 4096`.
fn host(i: u32) -> [u8; 4] {
    (0x0a00_0000 + i).to_be_bytes()
}

/// Every host route, and next hop `n` to port `n % 8` and MAC 02:00:00:00:nn:nn.
fn entries(p: &Program) -> Vec<ResolvedEntry> {
    let (host_t, set) = ids(&p.ingress, "Ingress.ipv4_host", "Ingress.set_nexthop");
    let (nh_t, fwd) = ids(&p.ingress, "Ingress.nexthop", "Ingress.forward");
    let hosts = (0..HOSTS).map(|i| {
        let dst = u32::from_be_bytes(host(i)) as u128;
        entry(host_t, dst, set, vec![(i % 4096) as u128])
    });
    let nexthops = (0..4096u128).map(|n| entry(nh_t, n, fwd, vec![n % 8, 0x0200_0000_0000 + n]));
    hosts.chain(nexthops).collect()
}

#[test]
fn two_hundred_thousand_host_routes_are_found_in_every_part() {
    let profile = chip("tofino2-like");
    let c = compile_file(&repo("programs/examples/host_routes.p4"), &profile, true).unwrap();
    let (host_t, _) = ids(
        &c.program.ingress,
        "Ingress.ipv4_host",
        "Ingress.set_nexthop",
    );
    let parts = c.program.ingress.control.tables[host_t as usize]
        .parts
        .clone();
    let stages: Vec<u16> = parts.iter().map(|p| p.stage).collect();
    assert_eq!(stages, [0, 1, 2, 3, 4]);
    assert!(
        parts[0].entries < HOSTS / 2,
        "more entries than one part holds"
    );

    let mut bench = Bench::new(profile.clone(), &c.program, &entries(&c.program)).unwrap();
    bench.keep_departures();
    // One host in each part (the driver fills the parts in stage order), the last route, and
    // an address with no route (the prefix table's default drops it).
    let mut firsts = vec![0];
    firsts.extend(parts.iter().scan(0, |end, p| {
        *end += p.entries;
        Some(*end)
    }));
    let mut hits: Vec<u32> = firsts[..parts.len()].iter().map(|&f| f + 17).collect();
    hits.push(HOSTS - 1);
    let gap = Time(1_000_000);
    let mut frames: Vec<(Time, Vec<u8>)> = hits
        .iter()
        .enumerate()
        .map(|(k, &i)| (Time(k as u64 * gap.0), udp_frame(host(i), 64, 100)))
        .collect();
    frames.push((
        Time(hits.len() as u64 * gap.0),
        udp_frame([192, 0, 2, 1], 64, 100),
    ));
    bench.add_frames(0, frames).unwrap();
    let report = bench.run().unwrap();
    let d = bench.departures();
    assert_eq!(
        d.len(),
        hits.len(),
        "every host route found; the unrouted packet dropped"
    );
    for (dep, &i) in d.iter().zip(&hits) {
        let n = (i % 4096) as u16;
        assert_eq!(dep.port, n % 8, "host {i}");
        assert_eq!(
            dep.data[..6],
            [2, 0, 0, 0, (n >> 8) as u8, n as u8],
            "host {i}"
        );
    }
    assert_eq!(report.packets_dropped(), 1);

    // The gress crosses the five parts' stages, the prefix table's (TCAM) and the next hop's:
    // the first packet leaves exactly that long after it arrived.
    let lat = &profile.pipe.latency;
    let stages = 7 * lat.stage_base_cycles + lat.tcam_extra_cycles;
    let ingress = (lat.parser_cycles + stages + lat.deparser_cycles) as u64;
    assert_eq!(report.ingress_latency_cycles, ingress);
    let clock = Clock::new(profile.clock_hz);
    let arrived = clock.cycle_at_or_after(frame_time(100, profile.ports_per_pipe[0].speed_gbps));
    assert_eq!(
        d[0].start,
        clock.time_of(arrived + ingress + report.egress_latency_cycles)
    );
}

/// The example's scenario (a few routes): by host route, by prefix, or dropped.
#[test]
fn the_host_routes_scenario_routes_by_host_and_by_prefix() {
    let sf = ScenarioFile::load(&repo("programs/examples/host_routes.scenario.ron")).unwrap();
    let out = std::env::temp_dir().join(format!("asic-host-routes-{}", std::process::id()));
    let (report, _) = run_scenario(&sf, Some(&out), false).unwrap();
    std::fs::remove_dir_all(&out).ok();
    let tx: Vec<(u16, u64)> = report
        .ports
        .iter()
        .map(|p| (p.port, p.tx_packets))
        .collect();
    assert!(tx.contains(&(1, 10)) && tx.contains(&(2, 10)), "{tx:?}");
    assert_eq!(report.drops_for(DropReason::IngressProgramDrop), 10);
    assert_eq!(report.ingress_latency_cycles, 227);
}

/// Records the time of every queue-depth read.
#[derive(Default)]
struct Asked(RefCell<Vec<Time>>);

impl DepthView for Asked {
    fn depth_cells(&self, _port: u16, _queue: u16, at: Time) -> u32 {
        self.0.borrow_mut().push(at);
        0
    }
}

/// A 50,000-entry exact table whose actions read a published queue depth: its hits in the
/// second part read it when the packet is in the second part's stage.
#[test]
fn a_split_tables_action_runs_in_the_stage_of_the_part_that_hit() {
    let profile = chip("tofino2-like");
    let control = r#"
        QueueDepth() qd;
        action probe(bit<9> port) {
            meta.depth = qd.read(port, 0);
        }
        table big {
            key = { hdr.ipv4.dst_addr : exact; }
            actions = { probe; }
            default_action = probe(0);
            size = 50000;
        }
        apply { big.apply(); }
    "#;
    let src = std::fs::read_to_string(repo("programs/examples/host_routes.p4")).unwrap();
    let start = src.find("control Ingress(").unwrap();
    let end = src.find("// The TTL changed").unwrap();
    let head = &src[start..src[start..].find('{').unwrap() + start + 1];
    let src = format!("{}{head}{control}}}\n{}", &src[..start], &src[end..])
        .replace("bit<16> nexthop;", "bit<16> nexthop; bit<19> depth;");
    let c = dsl::compile(&src, "probe.p4", &profile.pipe).unwrap_or_else(|e| panic!("{e}"));
    let (t, probe) = ids(&c.program.ingress, "Ingress.big", "Ingress.probe");
    let parts = c.program.ingress.control.tables[t as usize].parts.clone();
    assert_eq!(
        parts
            .iter()
            .map(|p| (p.stage, p.entries))
            .collect::<Vec<_>>(),
        [(0, 41984), (1, 8016)]
    );
    let clock = Clock::new(profile.clock_hz);
    let mut g = LoadedGress::load(
        Gress::Ingress,
        c.program.ingress.clone(),
        &profile.pipe,
        clock,
        1,
    )
    .unwrap();
    for i in 0..50_000 {
        let dst = u32::from_be_bytes(host(i)) as u128;
        let e = entry(t, dst, probe, vec![1]).entry;
        g.tables_mut()[t as usize].insert(e).unwrap();
    }
    let entry_cycles: Vec<u64> = (0..2).map(|s| g.timing().stage_entry(s) as u64).collect();
    let at_stage = |s: usize| clock.time_of(1000 + entry_cycles[s]);
    let mut when = |dst: [u8; 4]| {
        let asked = Asked::default();
        let mut frame = udp_frame(dst, 64, 100);
        let inputs = pipelines::pipe::GressInputs {
            issue_cycle: 1000,
            ..Default::default()
        };
        g.process_with_depths(&mut frame, &inputs, &asked).unwrap();
        let t = asked.0.borrow()[0];
        t
    };
    assert_eq!(when(host(5)), at_stage(0), "a hit in the first part");
    assert_eq!(when(host(45_000)), at_stage(1), "a hit in the second part");
    assert_eq!(
        when([192, 0, 2, 1]),
        at_stage(1),
        "a miss, in the last part's stage"
    );
}
