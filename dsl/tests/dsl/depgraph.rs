//! The table dependency graph the report carries: on a program whose dependencies are known
//! by hand, exactly the match, action and control edges (and no write-after-read one, which
//! placement does not need); on every program, edges that the placement obeys; and the
//! Graphviz form naming every node and edge.

use crate::common::{all_programs, profile, program, STATES};
use dsl::alloc::DepKind;
use dsl::depgraph::{dot, kind_colour, DepGraph};
use dsl::{compile, Compiled};

fn ok(src: &str, chip: &str) -> Compiled {
    compile(src, "t.p4", &profile(chip)).unwrap_or_else(|e| panic!("{e}\n{}", e.render()))
}

/// The edges as (from, to, kind, label), sorted.
fn edges(g: &DepGraph) -> Vec<(String, String, DepKind, String)> {
    let mut v: Vec<_> = g
        .edges
        .iter()
        .map(|e| {
            (
                g.nodes[e.from].name.clone(),
                g.nodes[e.to].name.clone(),
                e.kind,
                e.label.clone(),
            )
        })
        .collect();
    v.sort();
    v
}

const CONTROL: &str = r#"
    action set_a(bit<8> v) { meta.a = v; }
    action set_b(bit<8> v) { meta.b = v; }
    action use_a() { meta.c = meta.a; }
    action again_a() { meta.a = 7; }
    action fwd(bit<9> p) { ig_tm_md.ucast_egress_port = p; }
    table first { key = { hdr.ipv4.dst_addr : exact; } actions = { set_a; set_b; } }
    table keyed { key = { meta.a : exact; } actions = { fwd; } }
    table copier { key = { hdr.ipv4.src_addr : exact; } actions = { use_a; } }
    table rewriter { key = { hdr.ipv4.ttl : exact; } actions = { again_a; } }
    apply {
        if (first.apply().hit) {
            keyed.apply();
        } else {
            copier.apply();
        }
        if (meta.b == 1) {
            rewriter.apply();
        }
    }
"#;

#[test]
fn the_graph_holds_the_dependencies_placement_found() {
    let c = ok(&program(STATES, CONTROL, ""), "tofino2-like");
    let g = &c.report.gresses[0].dependencies;
    let e = |from: &str, to: &str, kind, label: &str| {
        (from.to_string(), to.to_string(), kind, label.to_string())
    };
    let mut want = vec![
        // Control flow, with the branches that lead on.
        e("Ing.first", "Ing.keyed", DepKind::Control, "hit"),
        e("Ing.first", "Ing.copier", DepKind::Control, "miss"),
        e("Ing.keyed", "gateway 0", DepKind::Control, ""),
        e("Ing.copier", "gateway 0", DepKind::Control, ""),
        e("gateway 0", "Ing.rewriter", DepKind::Control, "true"),
        // `keyed` matches on what `first` writes; the gateway compares it.
        e("Ing.first", "Ing.keyed", DepKind::Match, "meta.a"),
        e("Ing.first", "gateway 0", DepKind::Match, "meta.b"),
        // `copier`'s action reads what `first` writes; `rewriter` writes it again.
        e("Ing.first", "Ing.copier", DepKind::Action, "meta.a"),
        e("Ing.first", "Ing.rewriter", DepKind::Action, "meta.a"),
        // `rewriter` writes what `copier` read before it: no edge (a write after a read
        // needs no later stage, the stage's actions reading the PHV as it came in).
    ];
    want.sort();
    assert_eq!(edges(g), want);
    // Nodes: the tables with their stages, the gateway with its condition.
    let stage = |name: &str| {
        let n = g.nodes.iter().find(|n| n.name == name).unwrap();
        (n.first_stage, n.last_stage, n.condition.clone())
    };
    assert_eq!(stage("Ing.first"), (0, 0, None));
    assert_eq!(stage("Ing.keyed"), (1, 1, None));
    assert_eq!(stage("Ing.copier"), (1, 1, None));
    assert_eq!(stage("gateway 0"), (1, 1, Some("meta.b == 1".into())));
    assert_eq!(stage("Ing.rewriter"), (1, 1, None));
}

#[test]
fn a_node_with_both_a_match_and_an_action_dependency_has_one_match_edge() {
    let control = r#"
        action set_a(bit<8> v) { meta.a = v; meta.b = v; }
        action copy() { meta.c = meta.b; }
        table first { key = { hdr.ipv4.dst_addr : exact; } actions = { set_a; } }
        table second { key = { meta.a : exact; } actions = { copy; } }
        apply { first.apply(); second.apply(); }
    "#;
    let c = ok(&program(STATES, control, ""), "tofino2-like");
    let g = &c.report.gresses[0].dependencies;
    let data: Vec<_> = edges(g)
        .into_iter()
        .filter(|e| e.2 != DepKind::Control)
        .collect();
    assert_eq!(
        data,
        [(
            "Ing.first".to_string(),
            "Ing.second".to_string(),
            DepKind::Match,
            "meta.a".to_string()
        )]
    );
}

#[test]
fn conditions_read_as_p4() {
    let control = r#"
        action set_a(bit<8> v) { meta.a = v; }
        table t { key = { hdr.ipv4.dst_addr : exact; } actions = { set_a; } }
        table u { key = { hdr.ipv4.src_addr : exact; } actions = { set_a; } }
        apply {
            if (hdr.ipv4.isValid() && (meta.a == 3 || meta.wide[15:8] != 0x12)) { t.apply(); }
            if (!hdr.ethernet.isValid()) { u.apply(); }
        }
    "#;
    let c = ok(&program(STATES, control, ""), "tofino2-like");
    let g = &c.report.gresses[0].dependencies;
    let conds: Vec<&str> = g
        .nodes
        .iter()
        .filter_map(|n| n.condition.as_deref())
        .collect();
    assert!(
        conds.contains(&"hdr.ipv4.isValid() && (meta.a == 3 || meta.wide[15:8] != 18)"),
        "{conds:?}"
    );
    assert!(conds.contains(&"!hdr.ethernet.isValid()"), "{conds:?}");
}

/// On every program and chip, the placement keeps every edge: a match or action edge's
/// target after its source's last stage, a control edge's target not before it; and the
/// graph has a node per table and gateway, at the program's stages.
#[test]
fn every_program_places_its_nodes_as_its_edges_demand() {
    for chip in ["tofino2-like", "teaching"] {
        for (rel, src) in all_programs() {
            let Ok(c) = compile(&src, &rel, &profile(chip)) else {
                continue; // a program too large for the chip (its snapshot holds the error)
            };
            let programs = [&c.program.ingress, &c.program.egress];
            for (g, p) in c.report.gresses.iter().zip(programs) {
                let graph = &g.dependencies;
                let control = &p.control;
                assert_eq!(
                    graph.nodes.len(),
                    control.tables.len() + control.gateways.len(),
                    "{rel} on {chip}"
                );
                for (t, n) in control.tables.iter().zip(&graph.nodes) {
                    assert_eq!(
                        (&t.name, t.stage, t.last_stage()),
                        (&n.name, n.first_stage, n.last_stage)
                    );
                }
                for e in &graph.edges {
                    let (a, b) = (&graph.nodes[e.from], &graph.nodes[e.to]);
                    let ok = match e.kind {
                        DepKind::Control => b.first_stage >= a.last_stage,
                        DepKind::Match | DepKind::Action => b.first_stage > a.last_stage,
                    };
                    assert!(ok, "{rel} on {chip}: {e:?} from {a:?} to {b:?}");
                    if e.kind != DepKind::Control {
                        assert!(!e.label.is_empty(), "{rel}: {e:?} names no field");
                    }
                }
            }
        }
    }
}

#[test]
fn the_dot_form_names_every_node_and_edge() {
    let c = ok(&program(STATES, CONTROL, ""), "tofino2-like");
    let text = dot(&c.report);
    assert!(text.contains("digraph \"t\" {"), "{text}");
    assert!(text.trim_end().ends_with('}'));
    let g = &c.report.gresses[0].dependencies;
    for n in &g.nodes {
        assert!(
            text.contains(&format!(
                "    \"ingress:{}\" [label=\"{}\\n",
                n.name, n.name
            )),
            "{text}"
        );
    }
    for e in &g.edges {
        let (a, b) = (&g.nodes[e.from].name, &g.nodes[e.to].name);
        let head = format!("  \"ingress:{a}\" -> \"ingress:{b}\" [label=\"");
        let colour = format!("color=\"{}\"", kind_colour(e.kind));
        assert!(
            text.lines()
                .any(|l| l.starts_with(&head) && l.contains(&colour)),
            "no {e:?} in\n{text}"
        );
    }
    assert_eq!(
        text.lines()
            .filter(|l| l.starts_with("  \"ingress:"))
            .count(),
        g.edges.len()
    );
    // Stages are ranks, in order.
    assert!(text.contains("{ rank=same; \"ingress:stage 1\"; \"ingress:Ing.keyed\"; "));
    assert!(text.contains("\"ingress:stage 0\" -> \"ingress:stage 1\" [style=invis];"));
    assert!(text.contains(
        "\"ingress:gateway 0\" [label=\"gateway 0\\nstage 1\\nmeta.b == 1\", style=rounded];"
    ));
}
