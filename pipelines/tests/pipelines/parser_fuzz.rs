//! Truncated or malformed packets never panic the pipe: random bytes through a router-like
//! program, under both parser-error policies.

use crate::common::*;
use pipelines::program::*;
use proptest::prelude::*;

fn gress(policy: ParserErrorPolicy) -> pipelines::pipe::LoadedGress {
    let (mut b, h) = Builder::router(2);
    b.g.parser.on_error = policy;
    // A VLAN-like loop (0x8100 goes back to a state that reads the next tag by lookahead)
    // so long walks reach the depth limit too.
    b.g.parser.states.push(ParserState {
        name: "tags".into(),
        ops: vec![ParserOp::Advance(32)],
        transition: Transition::Select {
            keys: vec![SelectKey::Lookahead {
                offset_bits: 16,
                width: 16,
            }],
            cases: vec![SelectCase {
                pattern: CasePattern::Range {
                    lo: 0x8100,
                    hi: 0x8100,
                },
                next: Next::State(2),
            }],
            default: Next::Reject,
        },
    });
    if let Transition::Select { cases, .. } = &mut b.g.parser.states[0].transition {
        cases.push(SelectCase {
            pattern: CasePattern::Masked {
                value: 0x8100,
                mask: 0xffff,
            },
            next: Next::State(2),
        });
    }
    let route = b.action(
        "route",
        &[("port", 9)],
        vec![
            set(h.port, Operand::Param(0)),
            set(h.port_valid, Operand::Const(1)),
            op(
                h.ttl,
                AluOp::SubSat,
                Operand::Field(h.ttl),
                Operand::Const(1),
            ),
        ],
    );
    let t = b.table(
        "lpm",
        1,
        &[(h.ip_dst, MatchKind::Lpm)],
        &[route],
        route,
        vec![1],
        16,
    );
    b.chain(&[Node::Table(t)]);
    b.load()
}

proptest! {
    #[test]
    fn random_bytes_never_panic(
        bytes in proptest::collection::vec(any::<u8>(), 0..120),
        ethertype in prop_oneof![Just(0x0800u16), Just(0x8100), any::<u16>()],
        cut in 0usize..120,
    ) {
        for policy in [ParserErrorPolicy::Drop, ParserErrorPolicy::Continue] {
            let mut g = gress(policy);
            let mut data = bytes.clone();
            if data.len() >= 14 {
                data[12..14].copy_from_slice(&ethertype.to_be_bytes());
            }
            data.truncate(cut.max(1).min(data.len()));
            let len = data.len();
            match g.process(&mut data, &at(0, 0)) {
                Ok(out) => {
                    // Extracted headers are re-emitted and the payload follows; only the
                    // bytes `advance` skipped are gone (as in P4).
                    prop_assert!(data.len() <= len && data.len() + 4 * 8 >= len);
                    if policy == ParserErrorPolicy::Drop {
                        prop_assert_eq!(out.parser_error, 0);
                    }
                }
                Err(e) => {
                    prop_assert_eq!(policy, ParserErrorPolicy::Drop);
                    prop_assert!([1, 2, 0x10].contains(&e.code()));
                }
            }
        }
    }
}
