//! End-to-end: the L3 router compiles to the IR the pipe runs, and fails honestly on a chip
//! that is too small.

use crate::common::{field, spec, table};
use dsl::{compile, ErrorKind};
use pipelines::program::*;

fn router_source() -> String {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../programs/l3router/l3router.p4"
    );
    std::fs::read_to_string(path).expect("router program")
}

#[test]
fn router_compiles_to_the_expected_ir() {
    let c = match compile(&router_source(), "l3router.p4", &spec()) {
        Ok(c) => c,
        Err(e) => panic!("{e}\n{}", e.render()),
    };
    assert_eq!(c.program.name, "l3router");
    pipelines::verify::verify(&c.program, &spec()).expect("the pipe accepts the program");
    let ig = &c.program.ingress;

    // Headers in wire order, whole bytes.
    let names: Vec<&str> = ig.phv.headers.iter().map(|h| h.name.as_str()).collect();
    assert_eq!(names, ["hdr.ethernet", "hdr.ipv4"]);
    assert_eq!(ig.phv.header_bytes(0), 14);
    assert_eq!(ig.phv.header_bytes(1), 20);
    let ipv4_fields: Vec<&str> = ig.phv.headers[1]
        .fields
        .iter()
        .map(|&f| ig.phv.fields[f as usize].name.as_str())
        .collect();
    assert_eq!(ipv4_fields[0], "hdr.ipv4.version");
    assert_eq!(ipv4_fields[11], "hdr.ipv4.dst_addr");

    // Every field's slices add up to its width, within containers the chip has.
    for f in &ig.phv.fields {
        let bits: u16 = f.slices.iter().map(|s| s.width as u16).sum();
        assert_eq!(bits, f.width, "{}", f.name);
        for s in &f.slices {
            let cw = spec().phv.width(s.container).expect("container exists");
            assert!(s.lsb as u16 + s.width as u16 <= cw as u16, "{}", f.name);
        }
    }

    // Parser: ethernet, then ipv4 on 0x0800.
    let start = &ig.parser.states[ig.parser.start as usize];
    assert_eq!(start.ops, vec![ParserOp::Extract(0)]);
    let Transition::Select {
        keys,
        cases,
        default,
    } = &start.transition
    else {
        panic!("select")
    };
    assert_eq!(
        keys,
        &vec![SelectKey::Field {
            field: field(ig, "hdr.ethernet.ether_type"),
            hi: 15,
            lo: 0
        }]
    );
    assert_eq!(
        cases[0].pattern,
        CasePattern::Masked {
            value: 0x0800,
            mask: 0xffff
        }
    );
    assert_eq!(*default, Next::Accept);

    // Intrinsics: the port and its valid bit are bound because the program writes the port.
    let port = ig
        .phv
        .intrinsic(Intrinsic::UcastEgressPort)
        .expect("port bound");
    let port_valid = ig
        .phv
        .intrinsic(Intrinsic::UcastEgressPortValid)
        .expect("valid bound");
    assert!(ig.phv.intrinsic(Intrinsic::DropCtl).is_some());
    assert!(ig.phv.intrinsic(Intrinsic::IngressPort).is_none());

    // set_nexthop: port + valid + two MACs + ttl - 1.
    let nh = ig
        .control
        .actions
        .iter()
        .find(|a| a.name == "Ingress.set_nexthop")
        .expect("action");
    assert_eq!(
        nh.params.iter().map(|p| p.width).collect::<Vec<_>>(),
        [9, 48, 48]
    );
    assert!(nh.ops.contains(&Op {
        dst_slice: None,
        dst: port,
        alu: AluOp::Set,
        a: Operand::Param(0),
        b: Operand::Const(0)
    }));
    assert!(nh.ops.contains(&Op {
        dst_slice: None,
        dst: port_valid,
        alu: AluOp::Set,
        a: Operand::Const(1),
        b: Operand::Const(0)
    }));
    let ttl = field(ig, "hdr.ipv4.ttl");
    assert!(nh.ops.contains(&Op {
        dst_slice: None,
        dst: ttl,
        alu: AluOp::Sub,
        a: Operand::Field(ttl),
        b: Operand::Const(1)
    }));

    // Tables and stages: the ttl gateway and the TTL check's drop run before routing.
    let lpm = table(ig, "Ingress.ipv4_lpm");
    assert_eq!(lpm.keys[0].kind, MatchKind::Lpm);
    assert_eq!(lpm.size, 128);
    let l2 = table(ig, "Ingress.l2_fwd");
    assert_eq!(l2.keys[0].kind, MatchKind::Exact);
    let stages: Vec<(&str, u16)> = c.report.gresses[0]
        .tables
        .iter()
        .map(|(n, s)| (n.as_str(), *s))
        .collect();
    assert_eq!(
        stages,
        [
            ("Ingress.tbl_drop", 0),
            ("Ingress.ipv4_lpm", 0),
            ("Ingress.l2_fwd", 0)
        ]
    );
    // 128 routes of a 32-bit key: one 512 x 44-bit TCAM block.
    assert_eq!(
        c.report.gresses[0].stages[lpm.stage as usize]
            .tcam_blocks
            .used,
        1
    );
    assert_eq!(ig.control.stages, 1);
    assert_eq!(ig.control.entry, Some(Node::Gateway(0)));

    // Deparser: checksum over the 11 other ipv4 fields, when ipv4 is valid.
    assert_eq!(ig.deparser.emit, vec![0, 1]);
    let ck = &ig.deparser.checksums[0];
    assert_eq!(ck.dst, field(ig, "hdr.ipv4.hdr_checksum"));
    assert_eq!(ck.sources.len(), 11);
    assert_eq!(ck.when_valid, 1);

    // Latency: parser + one TCAM stage + deparser.
    assert_eq!(c.report.gresses[0].latency_cycles, 28 + 22 + 20);
    // Empty egress.
    assert_eq!(c.program.egress.control.stages, 0);
    assert_eq!(c.program.egress.control.entry, None);
    assert_eq!(c.report.gresses[1].latency_cycles, 48);
    let text = c.report.render_text();
    assert!(text.contains("table Ingress.ipv4_lpm -> stage 0"), "{text}");
    serde_json::to_string(&c.report).expect("report serialises");
}

#[test]
fn a_small_chip_names_the_missing_resource() {
    // One stage of one 64-entry TCAM block: half the routes fit.
    let mut small = spec();
    small.stages = 1;
    small.stage.sram_blocks = 2;
    small.stage.tcam_blocks = 1;
    small.stage.tcam_depth = 64;
    let e = compile(&router_source(), "l3router.p4", &small).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Resource);
    assert_eq!(
        e.message,
        "table Ingress.ipv4_lpm has 128 entries, but split across stage 0 it fits at most 64 \
         of them (short by 64): a part of 64 more needs 1 TCAM blocks and stage 0, the closest, \
         has 0 free (short by 1)"
    );
    assert!(e.render().contains("table ipv4_lpm {"));
    assert!(e.to_string().starts_with("l3router.p4:"), "{e}");
}
