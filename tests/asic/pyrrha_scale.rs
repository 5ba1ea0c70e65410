//! Pyrrha on fat trees under the paper's IQ-usage stress (§V-A, Fig. 7; the digest's B.5
//! item 15): (m − 1)/m of the edge switches (ToRs) send to the other 1/m, each sending host
//! 40 one-BDP flows back to back. A run must end with every packet delivered and every IQ
//! given back; the IQs a port uses at once are counted from the run's records.

use crate::pyrrha::assert_every_iq_back;
use asic_deploy::{run as net, scenario::NetScenario};
use asic_net::records::RunRecord;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// One hop's BDP on the model's 100G links with 600 ns of delay (3.3 µs: twice the link and
/// `pipeline_ns`), in bytes: a flow's size.
const BDP_BYTES: u64 = 41_250;

/// A 3-tier fat tree of `k` whose first 1/`m` of edge switches (in pod order) receive and the
/// rest send: sending host `i` sends `flows` flows of one BDP to receiving host `i mod R`,
/// one every 3.3 µs (one BDP at line rate, so back to back), raw; the queues sampled every
/// µs.
fn pod_stress(k: u16, m: usize, flows: u32) -> NetScenario {
    let half = k / 2;
    let racks: Vec<Vec<String>> = (0..k)
        .flat_map(|p| (0..half).map(move |e| (p, e)))
        .map(|(p, e)| (0..half).map(|h| format!("h{p}_{e}_{h}")).collect())
        .collect();
    stress(
        &format!("FatTree(k: {k}, tiers: 3)"),
        PROFILE,
        &racks,
        m,
        flows,
    )
}

/// The same stress on a leaf-spine (`leaves` ToRs of `per_leaf` hosts, `spines` spines) of
/// chips `chip` (a profile file).
fn leaf_stress(
    chip: &str,
    (leaves, spines, per_leaf): (u16, u16, u16),
    m: usize,
    flows: u32,
) -> NetScenario {
    let racks: Vec<Vec<String>> = (0..leaves)
        .map(|l| (0..per_leaf).map(|h| format!("h{l}_{h}")).collect())
        .collect();
    let shape =
        format!("LeafSpine(leaves: {leaves}, spines: {spines}, hosts_per_leaf: {per_leaf})");
    stress(&shape, chip, &racks, m, flows)
}

/// The profile the stresses' chips are built to (in `programs/pyrrha`).
const PROFILE: &str = "tofino2-100g-128q.ron";

/// `shape` of `chip`s with the hosts of each ToR in `racks`: the first 1/`m` of the racks
/// receive, the rest send (the traffic of [`pod_stress`]).
fn stress(shape: &str, chip: &str, racks: &[Vec<String>], m: usize, flows: u32) -> NetScenario {
    let (receivers, senders) = racks.split_at(racks.len() / m);
    let (receivers, senders) = (receivers.concat(), senders.concat());
    let mut to: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (i, s) in senders.iter().enumerate() {
        to.entry(&receivers[i % receivers.len()])
            .or_default()
            .push(s);
    }
    let traffic: Vec<String> = to
        .iter()
        .map(|(r, ss)| {
            format!(
                "Incast((senders: {ss:?}, receiver: {r:?}, size: {BDP_BYTES}, repeats: {flows}, \
                 period_ns: Some(3300)))"
            )
        })
        .collect();
    ron::from_str(&format!(
        "(topology: Generate((shape: {shape}, chip: {chip:?}, \
         delay_ns: 600)), deploy: Pyrrha(()), transport: Raw(()), traffic: [{}], \
         sample_period_ns: Some(1000))",
        traffic.join(", ")
    ))
    .unwrap_or_else(|e| panic!("{e}"))
}

/// Run `s` (`what` names it in messages): more than `at_least` packets sent, every one
/// delivered, every flow complete, nothing dropped but the frames and records the program
/// ends, and every IQ back in every pipe of every chip.
fn delivered(s: NetScenario, what: &str, at_least: u64) -> asic_net::NetRun {
    let run = net::run_detailed(s, Path::new("programs/pyrrha"), None).unwrap();
    let r = &run.record;
    let c = asic_report::metrics::conservation(r);
    println!("{what}: {c:?}");
    assert!(c.sent > at_least, "{what}");
    assert_eq!(
        (c.received, c.dropped, c.in_flight),
        (c.sent, 0, 0),
        "{what}"
    );
    assert!(r.flows.iter().all(|f| f.end_ps.is_some()), "{what}");
    assert!(
        r.drops.iter().all(|d| d.reason == "ingress_program_drop"),
        "{what}"
    );
    assert_every_iq_back(&run);
    run
}

/// A change of a queue of a port: (time, queue, a depth (true) or a pause (false), on).
type Change = (u64, u16, bool, bool);

/// Per chip port: the most IQs (queues 1 to 126: not the OQ, not the frame queue) in use at
/// once, an IQ being in use while it holds cells or is paused (an IQ given out and empty
/// and resumed is released at once), at the sampled depths and the pause events.
fn peak_iqs(r: &RunRecord) -> BTreeMap<(String, u16), usize> {
    let mut changes: BTreeMap<(String, u16), Vec<Change>> = BTreeMap::new();
    for s in &r.series {
        let Some((port, q)) = s.name.strip_suffix(".depth_cells").and_then(|n| {
            let (head, q) = n.rsplit_once(".q")?;
            let (chip, port) = head.rsplit_once(".port")?;
            Some((
                (chip.to_string(), port.parse().ok()?),
                q.parse::<u16>().ok()?,
            ))
        }) else {
            continue;
        };
        if (1..127).contains(&q) {
            let v = changes.entry(port).or_default();
            v.extend(s.points.iter().map(|&(t, d)| (t, q, true, d > 0.0)));
        }
    }
    for p in r
        .pauses
        .iter()
        .filter(|p| p.kind == "queue" && (1..127).contains(&p.class))
    {
        let v = changes.entry((p.node.clone(), p.port)).or_default();
        v.push((p.at_ps, p.class, false, p.paused));
    }
    changes
        .into_iter()
        .map(|(port, mut v)| {
            v.sort();
            let (mut held, mut paused) = (BTreeMap::new(), BTreeMap::new());
            let mut peak = 0;
            for (i, &(t, q, depth, on)) in v.iter().enumerate() {
                if depth { &mut held } else { &mut paused }.insert(q, on);
                // Count once every change at this instant is in.
                if v.get(i + 1).is_none_or(|n| n.0 != t) {
                    let busy =
                        |q: &&u16| held.get(*q) == Some(&true) || paused.get(*q) == Some(&true);
                    let queues: BTreeSet<&u16> = held.keys().chain(paused.keys()).collect();
                    let n = queues.into_iter().filter(busy).count();
                    peak = peak.max(n);
                }
            }
            (port, peak)
        })
        .collect()
}

/// A pod-level incast on a k = 8 fat tree (3 and 4 ToRs in 4 sending to the rest, 40
/// flows a host) ends with every packet delivered and every IQ back: no IQ is left paused
/// by a frame that raced a release (a PAUSE finding the IQ of an assignment its release
/// has not cleared yet: the REDO pass) or an install (a RESUME arriving while its PAUSE's
/// IQ is being installed: tried once more). Before those, 2,593 (m = 3) and 22,310 (m = 4)
/// packets were left in paused queues.
#[test]
fn a_pod_level_incast_leaves_nothing_paused() {
    for m in [3, 4] {
        let run = delivered(pod_stress(8, m, 40), &format!("k = 8, m = {m}"), 100_000);
        let r = &run.record;
        // Ports used several IQs at once (roots at several ToRs behind them).
        let most = peak_iqs(r).into_values().max().unwrap_or(0);
        println!("k = 8, m = {m}: at most {most} IQs in use at a port");
        assert!(most > 1);
    }
}

/// The stress on ToRs whose ports span pipes (6 ToRs of 14 hosts and 4 uplinks: the hosts
/// and the first two uplinks in pipe 0, the other two in pipe 1; 4 spines), 4 of 6 ToRs
/// sending to the other 2 (m = 3) and 5 to 1 (m = 6), 40 flows a host: every packet
/// delivered and every IQ back in every pipe (the copies of the root tables and the IQs'
/// roots cleared wherever they are kept), and the IQs of uplinks in pipe 1 held the hosts'
/// packets that came in by pipe 0 (without the copies they hold none).
#[test]
fn a_clos_incast_on_tors_spanning_pipes_leaves_nothing_paused() {
    for m in [3, 6] {
        let s = leaf_stress(PROFILE, (6, 4, 14), m, 40);
        let run = delivered(s, &format!("Clos, m = {m}"), 45_000);
        let r = &run.record;
        // The IQs of the uplinks in pipe 1 (ports 16, 17) held cells: the hosts' packets, which
        // come in by pipe 0, found them in pipe 0's copy of the root tables.
        let held: f64 = r
            .series
            .iter()
            .filter(|s| {
                s.name.starts_with("leaf")
                    && (s.name.contains(".port16.q") || s.name.contains(".port17.q"))
                    && !s.name.contains(".q0.")
                    && s.name.ends_with(".depth_cells")
            })
            .flat_map(|s| s.points.iter().map(|p| p.1))
            .fold(0.0, f64::max);
        println!("Clos, m = {m}: IQs of uplinks in pipe 1 held up to {held} cells");
        assert!(held > 100.0);
    }
}

/// Frames and records are never refused, so their edge-triggered sending needs no refresh:
/// the same stress (m = 6) on chips with 30,000 cells of buffer (5.3 MB, not 69 MB), whose
/// senders, which do not react, overflow their ToRs' IQs: tens of thousands of data packets
/// are refused by the dynamic threshold, and nothing else. A frame or record goes into a
/// queue that holds few (its frame queue, the recirculation port's), which DT admits while
/// any cell is free. Nothing is left inside a chip and every IQ comes back.
#[test]
fn only_data_is_refused_when_the_buffer_overflows() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(Path::new("programs/pyrrha").join(PROFILE)).unwrap();
    let line = "        cells: 393_216,";
    assert!(text.contains(line));
    let small = dir.path().join("small.ron");
    std::fs::write(&small, text.replace(line, "        cells: 30_000,")).unwrap();
    let s = leaf_stress(small.to_str().unwrap(), (6, 4, 14), 6, 40);
    let run = net::run_detailed(s, Path::new("programs/pyrrha"), None).unwrap();
    let r = &run.record;
    let c = asic_report::metrics::conservation(r);
    println!("small buffer: {c:?}");
    assert!(c.dropped > 10_000);
    assert_eq!(c.in_flight, 0);
    let refused: u64 = r
        .drops
        .iter()
        .filter(|d| d.reason != "ingress_program_drop")
        .map(|d| {
            assert_eq!(d.reason, "tm_dt_threshold");
            d.packets
        })
        .sum();
    assert_eq!(refused, c.dropped, "only data packets were refused");
    assert_every_iq_back(&run);
}

/// Fig. 7 (ignored: about 100 s a run in release, four runs): a k = 12 fat tree, (m − 1)/m
/// of the ToRs sending 40 one-BDP flows a host to the other 1/m, for m = 2, 3, 4, 6. The
/// paper: 6 to 20 IQs used, roughly in proportion to k. Printed: per m, the flows and the
/// peak IQs in use per port, most and median over the ports that used any, by tier. Checked:
/// every packet arrives, and the most any port uses is moderate, between the paper's 6 and
/// a third of the cap of 100 (the model: 2, 11, 22 and 26 for m = 2, 3, 4, 6, the most at
/// a core port into a receiving pod, which sees a root at every receiving host's port).
/// Written: `out/pyrrha-fig7/iq-usage.csv` (each port's peak, per m) and the CDF of the
/// peaks over the ports that used an IQ, `iq-usage.png` and `.svg`.
///   cargo test --release --test asic iq_usage -- --ignored --nocapture
#[test]
#[ignore]
fn iq_usage_on_a_k12_fat_tree() {
    let mut most = 0;
    let (mut csv, mut curves) = (String::from("m,node,port,peak_iqs\n"), Vec::new());
    for m in [2, 3, 4, 6] {
        let run =
            net::run_detailed(pod_stress(12, m, 40), Path::new("programs/pyrrha"), None).unwrap();
        let r = &run.record;
        let c = asic_report::metrics::conservation(r);
        assert_eq!((c.received, c.in_flight), (c.sent, 0), "m = {m}");
        let peaks = peak_iqs(r);
        let tier = |t: char| {
            let mut v: Vec<usize> = peaks
                .iter()
                .filter(|((chip, _), _)| chip.starts_with(t))
                .map(|(_, &n)| n)
                .collect();
            v.sort();
            (
                v.len(),
                v.last().copied().unwrap_or(0),
                v.get(v.len() / 2).copied().unwrap_or(0),
            )
        };
        println!(
            "m = {m}: {} flows, {} packets; peak IQs in use per port (ports, most, median): \
             edge {:?}, aggregation {:?}, core {:?}",
            r.flows.len(),
            c.sent,
            tier('e'),
            tier('a'),
            tier('c')
        );
        most = most.max(peaks.values().copied().max().unwrap_or(0));
        for ((node, port), n) in &peaks {
            csv.push_str(&format!("{m},{node},{port},{n}\n"));
        }
        let used = peaks.values().filter(|&&n| n > 0).map(|&n| n as f64);
        curves.push((format!("m = {m}"), used.collect()));
    }
    let dir = Path::new("out/pyrrha-fig7");
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("iq-usage.csv"), csv).unwrap();
    for ext in ["png", "svg"] {
        asic_report::plots::plot_cdf(
            &dir.join(format!("iq-usage.{ext}")),
            "Fig. 7: IQs in use at once, per port (k = 12 fat tree, (m-1)/m of ToRs to 1/m)",
            "peak IQs in use at the port",
            "ports",
            &curves,
            false,
        )
        .unwrap();
    }
    assert!((6..=33).contains(&most), "{most}");
}
