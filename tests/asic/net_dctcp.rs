//! ECN end to end: the TM flags packets above K, the stock ECMP router's egress sets CE, the
//! receiver echoes it and DCTCP holds the bottleneck queue near K, where NewReno fills the
//! buffer up to its dynamic threshold.

use asic_deploy::{run as net, scenario::NetScenario};
use std::path::Path;

/// Peak depth (cells) of the receiver's port and whether every flow completed.
fn peak_depth(transport: &str) -> (f64, bool) {
    // Two 4 MB flows into one 10G port of an rmt2013 switch (80-byte cells); ECN threshold
    // K = 65 full-size packets (the DCTCP paper's K for 10G) = 65 x 19 cells.
    let text = format!(
        r#"(
            topology: Generate((shape: SingleSwitch(hosts: 3), chip: "rmt2013", delay_ns: 1000)),
            deploy: Routers(Ecmp),
            chips: [(select: All,
                     config: Some((tm: (default_queue: (ecn: Threshold(k_cells: 1235))))))],
            transport: {transport},
            traffic: [Flow((src: "h1", dst: "h0", size: 4000000)), Flow((src: "h2", dst: "h0", size: 4000000))],
            sample_period_ns: Some(1000),
        )"#
    );
    let s: NetScenario = ron::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
    let r = net::run_detailed(s, Path::new(""), None).unwrap();
    let depth = r
        .record
        .series
        .iter()
        .find(|s| s.name == "sw0.port0.depth_cells")
        .unwrap();
    let peak = depth.points.iter().map(|p| p.1).fold(0.0, f64::max);
    (peak, r.record.flows.iter().all(|f| f.end_ps.is_some()))
}

#[test]
fn dctcp_holds_the_queue_near_k_where_newreno_fills_it() {
    let (dctcp, done_d) = peak_depth("Dctcp(())");
    let (reno, done_r) = peak_depth("NewReno(())");
    println!("peak queue: DCTCP {dctcp} cells, NewReno {reno} cells (K = 1235)");
    assert!(done_d && done_r);
    assert!(dctcp < 3.0 * 1235.0, "DCTCP peak {dctcp} cells");
    assert!(reno > 2.0 * dctcp, "NewReno {reno} vs DCTCP {dctcp}");
}
