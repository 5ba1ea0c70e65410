//! Partition-aggregate queries (`Queries` traffic, the Flexible Buffer paper's workload): a
//! query's parts leave its responders together, it completes when the last arrives, and it
//! is counted as dropped when any data packet of a part was.

use asic_deploy::{run as net, scenario::NetScenario};
use asic_report::metrics::{summarize, MetricsConfig};
use std::path::Path;

fn run(text: &str) -> asic_net::NetRun {
    let s: NetScenario = ron::from_str(text).unwrap_or_else(|e| panic!("{e}"));
    net::run_detailed(s, Path::new(""), None).unwrap()
}

/// Four hosts on one `teaching` switch (64 cells of 80 bytes): h0 and h1 each query three
/// hosts of the four, never themselves, for `size` bytes at 2,000 queries a second each for
/// 5 ms, over NewReno.
fn queries(size: u64) -> asic_net::NetRun {
    run(&format!(
        r#"(
            topology: Generate((shape: SingleSwitch(hosts: 4), chip: "teaching", delay_ns: 1000)),
            transport: NewReno((min_rto_us: 200.0, initial_rto_us: 200.0)),
            traffic: [Queries((requesters: Some(["h0", "h1"]), responders: 3, size: {size},
                               per_second: 2000.0, stop_ns: 5000000))],
            stop: (at_ns: Some(200000000)),
        )"#
    ))
}

/// Each query's three parts go from three different hosts, none its requester, to the
/// requester, start together and add up to its size; the query ends with its last part and
/// carries its parts' drops and retransmissions; every query completes.
#[test]
fn a_query_is_its_parts() {
    let r = queries(20_002);
    let rec = &r.record;
    assert!(rec.queries.len() >= 5, "{} queries", rec.queries.len());
    for q in &rec.queries {
        let parts: Vec<_> = rec
            .flows
            .iter()
            .filter(|f| f.dst == q.requester && f.start_ps == q.start_ps)
            .collect();
        assert_eq!(parts.len(), 3, "query {}", q.id);
        assert_eq!(q.responders, 3);
        let mut from: Vec<u32> = parts.iter().map(|f| f.src).collect();
        from.sort();
        from.dedup();
        assert_eq!(from.len(), 3);
        assert!(!from.contains(&q.requester));
        let mut sizes: Vec<u64> = parts.iter().map(|f| f.size_bytes).collect();
        sizes.sort();
        assert_eq!(sizes, [6_667, 6_667, 6_668]);
        assert_eq!(q.size_bytes, 20_002);
        assert_eq!(q.end_ps, parts.iter().map(|f| f.end_ps).max().flatten());
        assert!(q.end_ps.is_some());
        assert_eq!(
            q.packets_dropped,
            parts.iter().map(|f| f.packets_dropped).sum::<u64>()
        );
        assert_eq!(
            q.retransmissions,
            parts.iter().map(|f| f.retransmissions).sum::<u64>()
        );
    }
}

/// Small answers fit the buffer and no query loses a packet; answers of 3 × 20 kB into a
/// 5 kB buffer lose packets in most queries. The summary counts them.
#[test]
fn bigger_answers_lose_packets_and_the_summary_counts_the_queries_without_a_drop() {
    let small = summarize(&queries(1_200).record, &MetricsConfig::default());
    let q = small.queries.expect("queries");
    assert_eq!((q.without_drop, q.completed), (q.queries, q.queries));
    let big = queries(60_000);
    let s = summarize(&big.record, &MetricsConfig::default());
    let q = s.queries.clone().expect("queries");
    assert_eq!(q.completed, q.queries);
    println!("{q:?}");
    assert!(q.without_drop < q.queries / 2, "{q:?}");
    let dropped: u64 = big.record.queries.iter().map(|q| q.packets_dropped).sum();
    assert_eq!(
        dropped, big.chip_drops,
        "only the answers' data packets are dropped"
    );
    let text = asic_report::tables::render_summary(&s);
    assert!(
        text.contains(&format!(
            "queries: {} ({} completed), {} without a drop",
            q.queries, q.completed, q.without_drop
        )),
        "{text}"
    );
}

/// With persistent connections a responder's second answer to the same requester starts
/// with the window its first ended with, so it leaves faster than a fresh one, which slow
/// starts again; the first answers are the same either way.
#[test]
fn persistent_connections_carry_the_window_to_the_next_answer() {
    let fcts = |connections: &str| -> Vec<u64> {
        let r = run(&format!(
            r#"(
                topology: Generate((shape: SingleSwitch(hosts: 2), chip: "tofino1-like", delay_ns: 10000)),
                transport: NewReno(()),
                traffic: [Queries((requesters: Some(["h0"]), responders_from: Some(["h1"]),
                                   responders: 1, size: 2000000, per_second: 100.0,
                                   stop_ns: 1000000000, max_queries: Some(2),
                                   connections: {connections}))],
                stop: (at_ns: Some(2000000000)),
            )"#
        ));
        r.record.flows.iter().map(|f| f.fct_ps().unwrap()).collect()
    };
    let (fresh, kept) = (fcts("Fresh"), fcts("Persistent"));
    println!("answer FCTs (ps): fresh {fresh:?}, persistent {kept:?}");
    assert_eq!(fresh[0], kept[0]);
    // Fresh answers alike, but for where each lands on the chip's clock (under 1 µs).
    assert!(fresh[0].abs_diff(fresh[1]) < 1_000_000, "{fresh:?}");
    assert!(kept[1] < fresh[1], "{kept:?} against {fresh:?}");
}
