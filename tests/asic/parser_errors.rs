//! A parser error is counted whichever way the program handles it: dropped (a drop reason)
//! or continued because the program reads `parser_err` (a counter of its own).

use crate::common::*;
use asic_bench::bench::Bench;
use asic_io::load::compile_file;
use pipelines::time::Time;

fn hex(s: &str) -> Vec<u8> {
    let s: String = s.split_whitespace().collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn continued_parser_errors_are_counted() {
    let profile = chip("teaching");
    let prog = compile_file(&repo("tests/stf/parser_continue.p4"), &profile, true).unwrap();
    let mut bench = Bench::new(profile, &prog.program, &[]).unwrap();
    let good = hex("02000000000202000000000188b5 00000005000000060000000000000000 000000000000000000000000000000000000000000000000000000000000");
    let rejected = hex("0200000000020200000000019999 00000005000000060000000000000000000000000000000000000000000000000000000000000000000000000000");
    let truncated = hex("02000000000202000000000188b5 00000005000000060000");
    bench
        .add_frames(
            0,
            vec![
                (Time::ZERO, good),
                (Time::from_ns(1000), rejected),
                (Time::from_ns(2000), truncated),
            ],
        )
        .unwrap();
    let report = bench.run().unwrap();
    assert_eq!(report.packets_out(), 3);
    assert_eq!(report.parser_errors_continued, [2, 0]);
    assert!(report
        .render_text()
        .contains("parser errors continued by the program: ingress 2, egress 0"));
}
