//! Acceptance: one flow between two hosts through one switch finishes at the ideal FCT
//! within one packet time.

use asic_deploy::routers::L3ROUTER;
use asic_deploy::{run as net, scenario::NetScenario};
use asic_model::mac::slot_time;
use pipelines::time::Time;

fn scenario(text: &str) -> NetScenario {
    ron::from_str(text).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn one_flow_through_one_switch_finishes_at_the_ideal_fct() {
    for (size, transport) in [
        (100_000u64, "Raw(())"),
        (1u64, "Raw(())"),
        (1441, "Raw(())"),
        (100_000, "Gbn((window_packets: 64))"),
        (100_000, "Ndp((init_window_packets: 64))"),
    ] {
        let s = scenario(&format!(
            r#"(
                name: "one-flow",
                topology: Generate((shape: SingleSwitch(hosts: 2), chip: "teaching", delay_ns: 1000)),
                transport: {transport},
                traffic: [Flow((src: "h0", dst: "h1", size: {size}, start_ns: 500))],
            )"#
        ));
        let r = net::run(s).unwrap();
        let f = &r.flows[0];
        let fct = f.fct_ps().expect("the flow completes");
        let packet_time = slot_time(1514, 10).ps();
        let diff = fct.abs_diff(f.ideal_fct_ps);
        println!(
            "{transport} {size} B: FCT {} ideal {} (diff {} ps, one packet = {packet_time} ps)",
            Time(fct),
            Time(f.ideal_fct_ps),
            diff
        );
        assert!(
            fct >= f.ideal_fct_ps,
            "faster than ideal: {fct} < {}",
            f.ideal_fct_ps
        );
        assert!(
            diff <= packet_time,
            "{transport} {size}: {fct} vs ideal {}",
            f.ideal_fct_ps
        );
        // In fact within one cycle of the chip's 1 GHz clock (arrival alignment).
        assert!(diff < 1000, "{transport} {size}: {diff} ps off");
    }
}

#[test]
fn the_ideal_fct_is_the_documented_sum() {
    // 100 000 B = 69 packets of 1440 B + one of 640 B; frames of 1514 and 714 bytes. The
    // switch stores and forwards the first packet; the short last packet waits behind its
    // predecessor on the second link.
    // Two 10G links of 1 µs; the teaching chip's pipe latency (1 ns cycles) from the chip.
    let prof = asic_model::profile::load("teaching").unwrap();
    let prog = dsl::compile(L3ROUTER.source, L3ROUTER.file, &prof.pipe)
        .unwrap()
        .program;
    let chip = asic_model::chip::Chip::new(prof, &prog).unwrap();
    let pipe_ps = (chip.ingress_latency_cycles() + chip.egress_latency_cycles()) * 1000;
    let s = scenario(
        r#"(
            topology: Generate((shape: SingleSwitch(hosts: 2), chip: "teaching", delay_ns: 1000)),
            traffic: [Flow((src: "h0", dst: "h1", size: 100000))],
        )"#,
    );
    let r = net::run(s).unwrap();
    let ft = |len: u64| (8 + len + 4) * 800; // ps at 10 Gb/s
    let slot = |len: u64| (8 + len + 4 + 12) * 800;
    let expect = 2 * 1_000_000 + pipe_ps + 69 * slot(1514) + ft(714) + ft(1514);
    assert_eq!(r.flows[0].ideal_fct_ps, expect);
}

/// An NDP receiver releases one PULL per full-size data frame plus one control frame at
/// `pull_rate` × its link rate (htsim's pacer), so a long flow's goodput is 1,440 bytes per
/// (1,538 + 98) wire bytes at 10 Gb/s, times `pull_rate`: 8.80 Gb/s at 1, 4.40 at 0.5.
#[test]
fn an_ndp_receiver_pulls_one_data_and_one_control_frame_per_pull_at_its_rate() {
    for (pull_rate, want_gbps) in [(1.0, 8.80), (0.5, 4.40)] {
        let s = scenario(&format!(
            r#"(
                topology: Generate((shape: SingleSwitch(hosts: 2), chip: "teaching", delay_ns: 1000)),
                transport: Ndp((init_window_packets: 8, pull_rate: {pull_rate})),
                traffic: [Flow((src: "h0", dst: "h1", size: 2880000))],
            )"#
        ));
        let r = net::run(s).unwrap();
        let f = &r.flows[0];
        let gbps = f.size_bytes as f64 * 8.0 / (f.fct_ps().unwrap() as f64 / 1000.0);
        assert!(
            (gbps / want_gbps - 1.0).abs() < 0.01,
            "pull_rate {pull_rate}: {gbps:.3} Gb/s, want {want_gbps}"
        );
    }
}
