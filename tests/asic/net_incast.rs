//! Acceptance: an N-to-1 incast on one switch builds the queue the arithmetic predicts.

use asic_deploy::{run as net, scenario::NetScenario};
use std::path::Path;

fn run(text: &str) -> asic_net::NetRun {
    let s: NetScenario = ron::from_str(text).unwrap_or_else(|e| panic!("{e}"));
    net::run_detailed(s, Path::new(""), None).unwrap()
}

/// N senders each send P full-size packets back to back at line rate R into one port of
/// rate R, all starting together. Over the P slot times of the burst, N·P packets arrive and
/// the port sends P of them (one per slot, the first as soon as it arrived), so when the last
/// packets arrive the queue holds (N − 1)·P packets of `ceil(1514 / 80)` = 19 cells each (the
/// rmt2013 profile: 80-byte cells, 28 672 cells, so nothing is dropped), within a packet
/// either way for the one being sent.
#[test]
fn incast_builds_the_predicted_queue_in_a_large_buffer() {
    let (n, p) = (8u64, 100u64);
    let senders: Vec<String> = (1..=n).map(|i| format!("\"h{i}\"")).collect();
    let r = run(&format!(
        r#"(
            topology: Generate((shape: SingleSwitch(hosts: {}), chip: "rmt2013", delay_ns: 500)),
            traffic: [Incast((senders: [{}], receiver: "h0", size: {}))],
            sample_period_ns: Some(200),
        )"#,
        n + 1,
        senders.join(", "),
        p * 1440
    ));
    let cells_per_packet = 1514u64.div_ceil(80);
    let expect = (n - 1) * p * cells_per_packet;
    let peak = r.peak_buffer_cells[0].1 as u64;
    println!("incast {n}x{p}: peak {peak} cells, predicted {expect}");
    assert!(
        peak.abs_diff(expect) <= cells_per_packet,
        "peak {peak} vs {expect}"
    );
    // The sampled depth of the receiver's port reaches it too (within a sample period).
    let s = r
        .record
        .series
        .iter()
        .find(|s| s.name == "sw0.port0.depth_cells")
        .unwrap();
    let max = s.points.iter().map(|p| p.1).fold(0.0, f64::max) as u64;
    assert!(
        max.abs_diff(expect) <= 2 * cells_per_packet,
        "sampled {max} vs {expect}"
    );
    assert!(r.record.drops.is_empty(), "{:?}", r.record.drops);
    assert!(r.record.flows.iter().all(|f| f.end_ps.is_some()));
    // The last flow to finish ends when the port has sent all N·P packets.
    let last = r
        .record
        .flows
        .iter()
        .filter_map(|f| f.end_ps)
        .max()
        .unwrap();
    let slot = (8 + 1514 + 4 + 12) * 800;
    assert!(last >= n * p * slot, "{last}");
}

/// The tiny `teaching` buffer (64 cells of 80 B: 3 full-size packets) under a 3-to-1 incast:
/// the port delivers at line rate for the burst and the buffer holds three packets more;
/// everything else is dropped by the TM's admission.
#[test]
fn incast_into_a_tiny_buffer_drops_what_does_not_fit() {
    let p = 50u64;
    let r = run(&format!(
        r#"(
            topology: Generate((shape: SingleSwitch(hosts: 4), chip: "teaching", delay_ns: 500)),
            traffic: [Incast((senders: ["h1", "h2", "h3"], receiver: "h0", size: {}))],
        )"#,
        p * 1440
    ));
    let rx = r.record.hosts[0].packets_received;
    let dropped = r.chip_drops;
    println!(
        "3x{p} into 64 cells: delivered {rx}, dropped {dropped}: {:?}",
        r.record.drops
    );
    assert_eq!(rx + dropped, 3 * p);
    assert!(rx >= p && rx <= p + 4, "{rx}");
    assert!(r.peak_buffer_cells[0].1 <= 64);
}

/// Every reliable transport recovers from the drops of an incast into the tiny buffer: all
/// flows complete, with retransmissions; the flows' dropped packets add up to the chip's
/// drops.
#[test]
fn reliable_transports_complete_an_incast_through_a_tiny_buffer() {
    for t in [
        "Gbn((window_packets: 8, rto_us: 50.0))",
        "NewReno((min_rto_us: 200.0, initial_rto_us: 200.0))",
        "Dctcp((reno: (min_rto_us: 200.0, initial_rto_us: 200.0)))",
        "Ndp((init_window_packets: 8, rto_us: 100.0))",
    ] {
        let r = run(&format!(
            r#"(
                topology: Generate((shape: SingleSwitch(hosts: 4), chip: "teaching", delay_ns: 1000)),
                transport: {t},
                traffic: [Incast((senders: ["h1", "h2", "h3"], receiver: "h0", size: 60000))],
                stop: (at_ns: Some(100000000)),
            )"#
        ));
        let f = &r.record.flows;
        let retx: u64 = f.iter().map(|f| f.retransmissions).sum();
        let last = f.iter().filter_map(|f| f.end_ps).max().unwrap_or(0);
        println!(
            "{t}: {} of {} complete, {retx} retransmissions, last at {} ns, {} drops",
            f.iter().filter(|f| f.end_ps.is_some()).count(),
            f.len(),
            last / 1000,
            r.chip_drops
        );
        assert!(f.iter().all(|f| f.end_ps.is_some()), "{t}");
        assert!(retx > 0, "{t}");
        // Only data packets meet the full queue (the acknowledgements go the other way), and
        // each drop is counted against the flow whose id it carried.
        let dropped: u64 = f.iter().map(|f| f.packets_dropped).sum();
        assert_eq!(dropped, r.chip_drops, "{t}");
        assert!(dropped > 0, "{t}");
    }
}

/// No port's measured throughput exceeds its line rate (issue #20: bytes were counted when
/// the MAC took a frame, and `incast.ron`'s receiver port peaked at 10.9 Gb/s on 10G).
#[test]
fn throughput_never_exceeds_the_line_rate() {
    let s = asic_deploy::run::load(Path::new("programs/net/incast.ron")).unwrap();
    let r = net::run_detailed(s, Path::new("programs/net"), None).unwrap();
    let cfg = asic_report::metrics::MetricsConfig::default();
    let rates = asic_report::metrics::throughput_series(&r.record, &cfg);
    let port0 = rates
        .iter()
        .find(|s| s.name == "sw0.port0.tx_bytes.rate")
        .expect("the receiver port's rate");
    let peak = port0.points.iter().map(|p| p.1).fold(0.0, f64::max);
    assert!(peak > 9.0, "the incast loads the port: {peak} Gb/s");
    for s in &rates {
        for &(t, v) in &s.points {
            assert!(v <= 10.0, "{} at {t} ps: {v} Gb/s on a 10G port", s.name);
        }
    }
}
