//! The cycle at which a packet leaves a gress is its issue cycle plus the parser, the sum
//! of the latencies of the stages it crosses, and the deparser; a stage costs the base
//! latency plus the TCAM, stateful and meter extras of what it holds. Checked over every
//! combination of features in three stages, under two sets of latencies.

use crate::common::*;
use pipelines::pipe::{stage_features, PipePosition};
use pipelines::program::*;
use pipelines::spec::{LatencySpec, StageFeatures};

/// A three-stage program whose stage `s` holds the features `f[s]` (a plain exact table
/// when it holds none).
fn program(f: [StageFeatures; 3]) -> Builder {
    let (mut b, h) = Builder::router(3);
    let nop = b.action("nop", &[], vec![]);
    let mut nodes = vec![];
    for (s, feat) in f.iter().enumerate() {
        let s = s as u16;
        let kind = if feat.tcam {
            MatchKind::Ternary
        } else {
            MatchKind::Exact
        };
        let mut externs = vec![];
        if feat.stateful {
            let r = b.g.control.registers.len() as u16;
            b.g.control.registers.push(RegisterArray {
                name: format!("reg{s}"),
                stage: s,
                width: 16,
                size: 8,
                init: 0,
            });
            b.g.control.salus.push(StatefulAlu {
                name: format!("salu{s}"),
                register: r,
                conditions: vec![],
                updates: vec![SaluUpdate {
                    when: Predicate::ALWAYS,
                    alu: AluOp::Add,
                    a: SaluOperand::Register,
                    b: SaluOperand::Const(1),
                }],
                outputs: vec![],
                minmax: None,
            });
            externs.push(ExternCall::Stateful {
                salu: r,
                index: ExternIndex::Operand(Operand::Const(0)),
                dst: None,
                lane_dst: None,
            });
        }
        if feat.meter {
            let m = b.g.control.meters.len() as u16;
            b.g.control.meters.push(MeterArray {
                name: format!("meter{s}"),
                stage: s,
                size: 1,
                unit: CountKind::Packets,
                byte_count_adjust: 0,
            });
            let dst = b.field(&format!("meta.colour{s}"), 8);
            externs.push(ExternCall::Meter {
                meter: m,
                index: ExternIndex::Operand(Operand::Const(0)),
                dst,
            });
        }
        let a = b.action_x(&format!("a{s}"), &[], vec![], externs);
        let t = b.table(
            &format!("t{s}"),
            s,
            &[(h.ttl, kind)],
            &[a, nop],
            a,
            vec![],
            4,
        );
        nodes.push(Node::Table(t));
    }
    b.chain(&nodes);
    b
}

fn all_features() -> Vec<StageFeatures> {
    (0..8)
        .map(|i| StageFeatures {
            tcam: i & 1 != 0,
            stateful: i & 2 != 0,
            meter: i & 4 != 0,
        })
        .collect()
}

#[test]
fn exit_cycle_is_the_sum_of_the_latencies_of_the_stages_crossed() {
    let teaching = spec();
    let mut tofino = spec();
    tofino.latency = LatencySpec {
        parser_cycles: 32,
        deparser_cycles: 32,
        stage_base_cycles: 20,
        tcam_extra_cycles: 2,
        stateful_extra_cycles: 4,
        meter_extra_cycles: 4,
    };
    let feats = all_features();
    let mut checked = 0;
    for sp in [&teaching, &tofino] {
        let l = &sp.latency;
        for &f0 in &feats {
            for &f1 in &feats {
                for &f2 in &feats {
                    let f = [f0, f1, f2];
                    let b = program(f);
                    let mut g = b.load_with(sp);
                    // What the stages hold is what the timing sees.
                    for (s, want) in f.iter().enumerate() {
                        assert_eq!(stage_features(&g.program().control, s as u16), *want);
                    }
                    // By hand: parser + each stage's base and extras + deparser.
                    let stage = |x: StageFeatures| {
                        l.stage_base_cycles
                            + if x.tcam { l.tcam_extra_cycles } else { 0 }
                            + if x.stateful {
                                l.stateful_extra_cycles
                            } else {
                                0
                            }
                            + if x.meter { l.meter_extra_cycles } else { 0 }
                    };
                    let want = l.parser_cycles
                        + f.iter().map(|&x| stage(x)).sum::<u32>()
                        + l.deparser_cycles;
                    let t = g.timing().clone();
                    assert_eq!(t.total(), want, "{f:?}");
                    let issue = 1000u64;
                    let exit = issue + want as u64;
                    assert_eq!(t.position(issue, exit - 1), PipePosition::Deparser);
                    assert_eq!(t.position(issue, exit), PipePosition::Gone);
                    // The packet enters stage s after the parser and the stages before.
                    let mut entry = issue + l.parser_cycles as u64;
                    for (s, &x) in f.iter().enumerate() {
                        assert_eq!(t.position(issue, entry), PipePosition::Stage(s as u16));
                        assert_eq!(issue + t.stage_entry(s) as u64, entry);
                        entry += stage(x) as u64;
                    }
                    // And the program runs (externs and all) on a packet.
                    g.process(&mut ipv4_frame([1, 2, 3, 4], 64), &at(issue, 0))
                        .unwrap();
                    checked += 1;
                }
            }
        }
    }
    assert_eq!(checked, 2 * 512);
}

#[test]
fn one_packet_per_cycle_each_at_its_own_place() {
    // Packets issued on consecutive cycles occupy consecutive positions: at any cycle, at
    // most one packet is at each cycle offset of the pipe.
    let b = program([
        StageFeatures {
            tcam: true,
            ..StageFeatures::default()
        },
        StageFeatures::default(),
        StageFeatures {
            stateful: true,
            meter: true,
            ..StageFeatures::default()
        },
    ]);
    let g = b.load();
    let t = g.timing();
    assert_eq!(t.total(), 4 + 3 + 2 + 4 + 4);
    let issues: Vec<u64> = (0..20).collect();
    for cycle in 0..40u64 {
        let in_stage2: Vec<u64> = issues
            .iter()
            .copied()
            .filter(|&i| t.position(i, cycle) == PipePosition::Stage(2))
            .collect();
        // Stage 2 takes 4 cycles: it holds up to 4 packets, one per cycle of its depth.
        assert!(in_stage2.len() <= 4);
        assert!(in_stage2.windows(2).all(|w| w[1] == w[0] + 1));
    }
}
