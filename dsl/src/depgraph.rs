//! The table dependency graph of a gress, as the report carries it: its tables and gateways
//! with their stages, and the edges stage allocation obeyed ([`crate::alloc::Dependency`]: match,
//! action and control dependencies, the three groups bf-p4c's table dependency graph sorts
//! its edge types into), named for people. [`dot`] prints it in Graphviz's language, as
//! bf-p4c's `table_dependency_graph` dump does: one rank per stage, the edges coloured by kind
//! (match gold, action blue, control green) and labelled with the fields or branches behind
//! them.

use std::fmt::Write;

use pipelines::program::{value, CmpOp, Cond, ControlProgram, Operand, PhvLayout};
use serde::Serialize;

use crate::alloc::{Branch, DepKind, Dependency};
use crate::report::ResourceReport;
use crate::tna;

/// A node of the graph: a table or a gateway.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DepNode {
    /// The table's name, or `gateway N` (gateways numbered in the order control reaches
    /// them, as the report numbers them).
    pub name: String,
    /// A gateway's condition, as it compares the PHV; `None` for a table.
    pub condition: Option<String>,
    /// Its stage (a split table's first part's).
    pub first_stage: u16,
    /// Its last stage: a split table's last part's, else its stage.
    pub last_stage: u16,
}

/// An edge: `to` depends on `from`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DepEdge {
    /// Index of the earlier node in [`DepGraph::nodes`].
    pub from: usize,
    /// Index of the node that depends on it.
    pub to: usize,
    /// Match, action or control.
    pub kind: DepKind,
    /// Why: the fields behind a match or action dependency (`meta.nexthop, hdr.ipv4.ttl`),
    /// the branches behind a control one (`hit`, `miss`, `true`, `false`, an action's name,
    /// `default`; empty for a table's one next node).
    pub label: String,
}

/// The table dependency graph of one gress.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct DepGraph {
    /// The tables in table order, then the gateways in gateway order (the indices the
    /// program's control uses, gateways after the tables).
    pub nodes: Vec<DepNode>,
    /// The allocator's dependencies, in its order.
    pub edges: Vec<DepEdge>,
}

/// The graph of a placed control: its nodes, and `dependencies` (the allocator's) named.
pub fn graph(c: &ControlProgram, layout: &PhvLayout, dependencies: &[Dependency]) -> DepGraph {
    let tables = c.tables.iter().map(|t| DepNode {
        name: t.name.clone(),
        condition: None,
        first_stage: t.stage,
        last_stage: t.last_stage(),
    });
    let gateways = c.gateways.iter().enumerate().map(|(i, g)| DepNode {
        name: format!("gateway {i}"),
        condition: Some(condition(&g.cond, layout)),
        first_stage: g.stage,
        last_stage: g.stage,
    });
    let index = |n: pipelines::program::Node| match n {
        pipelines::program::Node::Table(t) => t as usize,
        pipelines::program::Node::Gateway(g) => c.tables.len() + g as usize,
    };
    let field = |f: &u16| layout.fields[*f as usize].name.clone();
    let branch = |b: &Branch| match *b {
        Branch::Next => String::new(),
        Branch::Hit => "hit".into(),
        Branch::Miss => "miss".into(),
        Branch::Action(a) => c.actions[a as usize].name.clone(),
        Branch::Default => "default".into(),
        Branch::True => "true".into(),
        Branch::False => "false".into(),
    };
    let edges = dependencies
        .iter()
        .map(|d| {
            let words: Vec<String> = match d.kind {
                DepKind::Control => d.branches.iter().map(branch).collect(),
                DepKind::Match | DepKind::Action => d.fields.iter().map(field).collect(),
            };
            DepEdge {
                from: index(d.from),
                to: index(d.to),
                kind: d.kind,
                label: words.join(", "),
            }
        })
        .collect();
    DepGraph {
        nodes: tables.chain(gateways).collect(),
        edges,
    }
}

/// A gateway's condition as P4 would write it: `hdr.ipv4.isValid() && meta.ttl != 0`.
pub fn condition(c: &Cond, layout: &PhvLayout) -> String {
    let field = |f: u16| layout.fields[f as usize].name.as_str();
    let operand = |o: &Operand| match *o {
        Operand::Field(f) => field(f).to_string(),
        Operand::Const(v) => value(v),
        Operand::Param(p) => format!("param{p}"),
        Operand::Slice { field: f, hi, lo } => format!("{}[{hi}:{lo}]", field(f)),
    };
    // Operands of `&&` and `||` are bracketed when they are the other operator.
    let inner = |c: &Cond, outer: &str| {
        let s = condition(c, layout);
        match (c, outer) {
            (Cond::Or(..), "&&") | (Cond::And(..), "||") => format!("({s})"),
            _ => s,
        }
    };
    match c {
        Cond::True => "true".into(),
        Cond::Cmp { a, op, b } => {
            // A header's validity bit compared with a constant reads as `isValid()`.
            if let (Operand::Field(f), Operand::Const(v)) = (a, b) {
                if let Some(header) = field(*f).strip_suffix(".$valid") {
                    match (op, v) {
                        (CmpOp::Eq, 1) | (CmpOp::Ne, 0) => return format!("{header}.isValid()"),
                        (CmpOp::Eq, 0) | (CmpOp::Ne, 1) => return format!("!{header}.isValid()"),
                        _ => {}
                    }
                }
            }
            format!("{} {} {}", operand(a), op.symbol(), operand(b))
        }
        Cond::And(x, y) => format!("{} && {}", inner(x, "&&"), inner(y, "&&")),
        Cond::Or(x, y) => format!("{} || {}", inner(x, "||"), inner(y, "||")),
        Cond::Not(x) => {
            // An atom (`true`, `h.isValid()`) takes the `!` as it is, anything else brackets.
            let inner = condition(x, layout);
            if inner.contains(' ') {
                format!("!({inner})")
            } else {
                format!("!{inner}")
            }
        }
    }
}

/// The colour of an edge of each kind, as bf-p4c's dump draws them (gold, blue, green), in
/// shades that stay apart for colour-blind readers (Okabe and Ito's palette). The HTML
/// resource view uses the same.
pub fn kind_colour(k: DepKind) -> &'static str {
    match k {
        DepKind::Match => "#E69F00",
        DepKind::Action => "#0072B2",
        DepKind::Control => "#009E73",
    }
}

/// The kind's name in labels and legends.
pub fn kind_name(k: DepKind) -> &'static str {
    match k {
        DepKind::Match => "match",
        DepKind::Action => "action",
        DepKind::Control => "control",
    }
}

/// `text` as the inside of a quoted Graphviz string.
fn quoted(text: &str) -> String {
    let mut s = String::with_capacity(text.len() + 2);
    s.push('"');
    for ch in text.chars() {
        match ch {
            '"' | '\\' => {
                s.push('\\');
                s.push(ch);
            }
            '\n' => s.push_str("\\n"),
            _ => s.push(ch),
        }
    }
    s.push('"');
    s
}

/// `stage 3`, or `stages 0..4` for a node over several.
pub fn stages_text(first: u16, last: u16) -> String {
    if first == last {
        format!("stage {first}")
    } else {
        format!("stages {first}..{last}")
    }
}

/// Both gresses' dependency graphs in Graphviz's language: one cluster per gress, a column
/// (rank) per stage headed by the stage's number, tables as boxes and gateways as rounded
/// boxes with their condition, edges coloured and labelled by kind (`match: meta.x`,
/// `action: ...`, `control: hit`); control edges dashed.
pub fn dot(report: &ResourceReport) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "// {}: the table dependency graph stage allocation obeyed (`asic compile --emit dot`).\n\
         // Columns are stages; edges: match (gold), action (blue), control (green, dashed).",
        report.program
    );
    let _ = writeln!(s, "digraph {} {{", quoted(&report.program));
    let _ = writeln!(s, "  rankdir=LR;\n  newrank=true;\n  ranksep=0.6;");
    let _ = writeln!(
        s,
        "  node [shape=box, fontname=\"monospace\", fontsize=10];"
    );
    let _ = writeln!(s, "  edge [fontname=\"monospace\", fontsize=9];");
    for g in &report.gresses {
        let gress = tna::gress_name(g.gress);
        let graph = &g.dependencies;
        if graph.nodes.is_empty() {
            let _ = writeln!(s, "  // {gress}: no tables or gateways");
            continue;
        }
        let id = |i: usize| quoted(&format!("{gress}:{}", graph.nodes[i].name));
        let stage_id = |k: usize| quoted(&format!("{gress}:stage {k}"));
        let _ = writeln!(s, "  subgraph {} {{", quoted(&format!("cluster_{gress}")));
        let _ = writeln!(s, "    label={};", quoted(gress));
        for k in 0..g.stages.len() {
            let _ = writeln!(
                s,
                "    {} [label={}, shape=plaintext];",
                stage_id(k),
                quoted(&format!("stage {k}"))
            );
        }
        for (i, n) in graph.nodes.iter().enumerate() {
            let mut label = format!("{}\n{}", n.name, stages_text(n.first_stage, n.last_stage));
            let style = match &n.condition {
                Some(c) => {
                    label.push('\n');
                    label.push_str(c);
                    ", style=rounded"
                }
                None => "",
            };
            let _ = writeln!(s, "    {} [label={}{style}];", id(i), quoted(&label));
        }
        for k in 0..g.stages.len() {
            let mut members = vec![stage_id(k)];
            members.extend(
                (0..graph.nodes.len())
                    .filter(|&i| graph.nodes[i].first_stage as usize == k)
                    .map(id),
            );
            let _ = writeln!(s, "    {{ rank=same; {}; }}", members.join("; "));
        }
        if g.stages.len() > 1 {
            let chain: Vec<String> = (0..g.stages.len()).map(stage_id).collect();
            let _ = writeln!(s, "    {} [style=invis];", chain.join(" -> "));
        }
        let _ = writeln!(s, "  }}");
        for e in &graph.edges {
            let label = match e.label.as_str() {
                "" => kind_name(e.kind).to_string(),
                l => format!("{}: {l}", kind_name(e.kind)),
            };
            let dashed = if e.kind == DepKind::Control {
                ", style=dashed"
            } else {
                ""
            };
            let _ = writeln!(
                s,
                "  {} -> {} [label={}, color={}, fontcolor={}{dashed}];",
                id(e.from),
                id(e.to),
                quoted(&label),
                quoted(kind_colour(e.kind)),
                quoted(kind_colour(e.kind)),
            );
        }
    }
    let _ = writeln!(s, "}}");
    s
}
