//! The table dependency graph of a gress as SVG, laid out by stage: a column per stage, each
//! table and gateway a box in the columns of its stages (a split table's box spans its
//! parts' stages), the edges coloured by kind (match, action, control) and labelled with
//! their fields or branches when a box is pointed at.
//!
//! Layout: nodes are taken column by column, in dependency order within a column, and each
//! goes to the free row nearest the mean row of its predecessors already drawn, free in
//! every column it spans; so no two boxes overlap and chains run straight. Every box of a
//! column is as wide as the column's widest label (text is monospace, so its width is
//! known here). Edges between columns are curves from the right side of the earlier box
//! to the left side of the later; a control edge to the next row of the same column is a
//! short arrow down, one to another row of the same column an arc in the gap to the right.

use dsl::alloc::DepKind;
use dsl::depgraph::{kind_colour, kind_name, stages_text, DepGraph, DepNode};
use dsl::report::GressReport;
use dsl::tna::gress_name;
use pipelines::program::{ControlProgram, Table};

use super::markup::{esc, int, match_kind, tip};

/// Width of a character of the box's name (12 px monospace; DejaVu Sans Mono is 0.602 em).
const NAME_CHAR: f64 = 7.3;
/// Width of a character of the box's second line (10 px monospace).
const SUB_CHAR: f64 = 6.1;
/// Horizontal padding inside a box, each side.
const PAD: f64 = 8.0;
/// Box height.
const BOX_H: f64 = 34.0;
/// Distance between the rows of boxes.
const ROW_H: f64 = 46.0;
/// Space between columns, where edges run.
const GAP: f64 = 64.0;
/// The narrowest column.
const MIN_COL: f64 = 112.0;
/// Room above the first row for the stage numbers.
const TOP: f64 = 30.0;
/// Margin left of the first column.
const LEFT: f64 = 8.0;
/// The longest gateway condition written in its box (the rest is on hover).
const MAX_COND: usize = 24;
/// The longest label written beside a highlighted edge (the rest is on hover).
const MAX_LABEL: usize = 32;

/// `text` cut to `max` characters, `…` marking the cut.
fn cut(text: &str, max: usize) -> String {
    let mut s: String = text.chars().take(max).collect();
    if text.chars().count() > max {
        s.push('…');
    }
    s
}

/// A node as drawn: its two lines of text, hover text, and the columns it spans.
struct NodeBox {
    name: String,
    line: String,
    sub: String,
    tip: String,
    first: usize,
    last: usize,
    gateway: bool,
}

impl NodeBox {
    fn width(&self) -> f64 {
        (self.line.chars().count() as f64 * NAME_CHAR)
            .max(self.sub.chars().count() as f64 * SUB_CHAR)
            + 2.0 * PAD
    }
}

/// The part of table names every table of the gress starts with (`Ingress.`), left out of
/// the boxes (the hover gives the whole name).
fn common_prefix(nodes: &[DepNode]) -> String {
    let mut prefixes = nodes
        .iter()
        .filter(|n| n.condition.is_none())
        .map(|n| n.name.split_once('.').map(|(p, _)| p));
    match prefixes.next() {
        Some(Some(first)) if prefixes.all(|p| p == Some(first)) => format!("{first}."),
        _ => String::new(),
    }
}

/// The second line of a table's box: its match kinds and size, or `keyless`.
fn table_line(t: &Table) -> String {
    if t.keys.is_empty() {
        return "keyless".into();
    }
    let mut kinds: Vec<&str> = Vec::new();
    for k in &t.keys {
        let k = match_kind(k.kind);
        if !kinds.contains(&k) {
            kinds.push(k);
        }
    }
    let parts = t.stage_parts().len();
    if parts > 1 {
        format!(
            "{} · {} in {parts} parts",
            kinds.join("+"),
            int(t.size as u64)
        )
    } else {
        format!("{} · {}", kinds.join("+"), int(t.size as u64))
    }
}

/// A table's hover: stages, keys, size and parts, actions.
fn table_tip(n: &DepNode, t: &Table, c: &ControlProgram) -> String {
    let mut s = format!(
        "table {}\n{}",
        n.name,
        stages_text(n.first_stage, n.last_stage)
    );
    for k in &t.keys {
        s.push_str(&format!("\nkey {}: {}", k.name, match_kind(k.kind)));
    }
    if !t.keys.is_empty() {
        s.push_str(&format!("\n{} entries", int(t.size as u64)));
    }
    let parts = t.stage_parts();
    if parts.len() > 1 {
        for p in &parts {
            s.push_str(&format!(
                "\n  stage {}: {} entries",
                p.stage,
                int(p.entries as u64)
            ));
        }
    }
    for &a in &t.actions {
        s.push_str(&format!("\naction {}", c.actions[a as usize].name));
    }
    s.push_str(&format!(
        "\ndefault {}",
        c.actions[t.default_action.action as usize].name
    ));
    s
}

/// The boxes of the graph's nodes, in node order.
fn boxes(graph: &DepGraph, c: &ControlProgram) -> Vec<NodeBox> {
    let prefix = common_prefix(&graph.nodes);
    graph
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let (line, sub, hover, gateway) = match (&n.condition, c.tables.get(i)) {
                (Some(cond), _) => (
                    format!("if {}", cut(cond, MAX_COND)),
                    format!("{} · stage {}", n.name, n.first_stage),
                    format!("{}, stage {}\nif ({cond})", n.name, n.first_stage),
                    true,
                ),
                (None, Some(t)) => (
                    n.name.strip_prefix(&prefix).unwrap_or(&n.name).to_string(),
                    table_line(t),
                    table_tip(n, t, c),
                    false,
                ),
                (None, None) => (n.name.clone(), String::new(), n.name.clone(), false),
            };
            NodeBox {
                name: n.name.clone(),
                line,
                sub,
                tip: hover,
                first: n.first_stage as usize,
                last: n.last_stage as usize,
                gateway,
            }
        })
        .collect()
}

/// The nodes in dependency order: every edge's source before its target, ties by stage
/// and then node order.
fn dependency_order(graph: &DepGraph) -> Vec<usize> {
    let n = graph.nodes.len();
    let mut incoming = vec![0usize; n];
    for e in &graph.edges {
        incoming[e.to] += 1;
    }
    let key = |i: usize| (graph.nodes[i].first_stage, i);
    let mut ready: std::collections::BTreeSet<(u16, usize)> =
        (0..n).filter(|&i| incoming[i] == 0).map(key).collect();
    let mut order = Vec::with_capacity(n);
    while let Some(next) = ready.pop_first() {
        let i = next.1;
        order.push(i);
        for e in graph.edges.iter().filter(|e| e.from == i) {
            incoming[e.to] -= 1;
            if incoming[e.to] == 0 {
                ready.insert(key(e.to));
            }
        }
    }
    // The allocator's graph has no cycle; should one appear, its nodes still get drawn.
    for i in 0..n {
        if !order.contains(&i) {
            order.push(i);
        }
    }
    order
}

/// Each node's row: column by column, in dependency order, the free row (in every column
/// the node spans) nearest the mean row of its predecessors already placed.
fn rows(graph: &DepGraph, boxes: &[NodeBox], columns: usize) -> Vec<usize> {
    let mut by_column = dependency_order(graph);
    let mut taken: Vec<Vec<bool>> = vec![Vec::new(); columns];
    let mut row: Vec<Option<usize>> = vec![None; boxes.len()];
    by_column.sort_by_key(|&i| boxes[i].first); // stable: dependency order within a column
    for i in by_column {
        let b = &boxes[i];
        let preds: Vec<usize> = graph
            .edges
            .iter()
            .filter(|e| e.to == i)
            .filter_map(|e| row[e.from])
            .collect();
        let wanted = if preds.is_empty() {
            0.0
        } else {
            preds.iter().sum::<usize>() as f64 / preds.len() as f64
        };
        let free =
            |r: usize| (b.first..=b.last).all(|k| !taken[k].get(r).copied().unwrap_or(false));
        let height = (b.first..=b.last)
            .map(|k| taken[k].len())
            .max()
            .unwrap_or(0);
        let r = (0..=height.max(wanted.ceil() as usize))
            .filter(|&r| free(r))
            .min_by(|&x, &y| {
                let dx = (x as f64 - wanted).abs();
                let dy = (y as f64 - wanted).abs();
                dx.total_cmp(&dy).then(x.cmp(&y))
            })
            .unwrap_or(height);
        for col in taken.iter_mut().take(b.last + 1).skip(b.first) {
            if col.len() <= r {
                col.resize(r + 1, false);
            }
            col[r] = true;
        }
        row[i] = Some(r);
    }
    row.into_iter().map(|r| r.unwrap_or(0)).collect()
}

/// Column widths: each the widest box that lies in it alone, and the columns under a box
/// spanning several widened evenly when its text needs more.
fn column_widths(boxes: &[NodeBox], columns: usize) -> Vec<f64> {
    let mut w = vec![MIN_COL; columns];
    for b in boxes.iter().filter(|b| b.first == b.last) {
        w[b.first] = w[b.first].max(b.width());
    }
    for b in boxes.iter().filter(|b| b.first < b.last) {
        let span: f64 = w[b.first..=b.last].iter().sum::<f64>() + GAP * (b.last - b.first) as f64;
        if span < b.width() {
            let more = (b.width() - span) / (b.last - b.first + 1) as f64;
            for x in &mut w[b.first..=b.last] {
                *x += more;
            }
        }
    }
    w
}

/// Where an edge of each kind meets a box, above or below its middle, so that edges of
/// different kinds between the same two boxes stay apart.
fn offset(k: DepKind) -> f64 {
    match k {
        DepKind::Control => -8.0,
        DepKind::Match => 0.0,
        DepKind::Action => 8.0,
    }
}

/// Whether an edge holds its target where it is: a data dependency on the stage just
/// before, or control from the same stage.
fn binding(graph: &DepGraph, from: usize, to: usize, kind: DepKind) -> bool {
    let (a, b) = (&graph.nodes[from], &graph.nodes[to]);
    match kind {
        DepKind::Control => b.first_stage == a.last_stage,
        DepKind::Match | DepKind::Action => b.first_stage == a.last_stage + 1,
    }
}

/// The SVG of one gress's graph, with its controls (which kinds to show) and legend.
pub fn graph(g: &GressReport, c: &ControlProgram) -> String {
    let gress = gress_name(g.gress);
    let graph = &g.dependencies;
    if graph.nodes.is_empty() {
        return format!("<p class=\"note\">{gress} has no tables or gateways.</p>");
    }
    let columns = g.stages.len().max(1);
    let boxes = boxes(graph, c);
    let row = rows(graph, &boxes, columns);
    let widths = column_widths(&boxes, columns);
    let mut x = Vec::with_capacity(columns);
    let mut at = LEFT;
    for w in &widths {
        x.push(at);
        at += w + GAP;
    }
    let width = at - GAP + GAP * 0.6 + LEFT;
    let rows_used = row.iter().max().map_or(1, |r| r + 1);
    let height = TOP + rows_used as f64 * ROW_H + 4.0;
    let left = |b: &NodeBox| x[b.first];
    let right = |b: &NodeBox| x[b.last] + widths[b.last];
    let mid = |i: usize| TOP + row[i] as f64 * ROW_H + BOX_H / 2.0;

    let id = format!("graph-{gress}");
    let mut s = format!("<div class=\"graphctl\" data-for=\"{id}\">show:");
    for k in [DepKind::Match, DepKind::Action, DepKind::Control] {
        let count = graph.edges.iter().filter(|e| e.kind == k).count();
        s.push_str(&format!(
            "<label><input type=\"checkbox\" data-kind=\"{0}\" checked>\
             <svg width=\"26\" height=\"10\"><line x1=\"1\" y1=\"5\" x2=\"25\" y2=\"5\" stroke=\"{1}\" \
             stroke-width=\"2.5\"{2}/></svg> {0} ({count})</label>",
            kind_name(k),
            kind_colour(k),
            if k == DepKind::Control {
                " stroke-dasharray=\"4 3\""
            } else {
                ""
            }
        ));
    }
    s.push_str(
        "<label><input type=\"checkbox\" data-binding checked> only the edges that hold a box \
         in its stage</label><span class=\"hint\">point at a box to see its edges and their fields; \
         click to keep it</span></div>",
    );
    s.push_str(&format!(
        "<div class=\"graphwrap\"><svg class=\"depgraph binding-only\" id=\"{id}\" data-gress=\"{gress}\" \
         width=\"{width:.0}\" height=\"{height:.0}\" viewBox=\"0 0 {width:.0} {height:.0}\">"
    ));
    s.push_str("<defs>");
    for k in [DepKind::Match, DepKind::Action, DepKind::Control] {
        s.push_str(&format!(
            "<marker id=\"{gress}-arrow-{}\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" \
             markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\">\
             <path d=\"M0,0 L10,5 L0,10 z\" fill=\"{}\"/></marker>",
            kind_name(k),
            kind_colour(k)
        ));
    }
    s.push_str("</defs>");
    // Stage columns: a band and the stage's number.
    for (k, (&cx, &w)) in x.iter().zip(&widths).enumerate() {
        s.push_str(&format!(
            "<rect class=\"band{}\" x=\"{:.1}\" y=\"0\" width=\"{:.1}\" height=\"{height:.0}\"/>\
             <text class=\"stage\" x=\"{:.1}\" y=\"18\">stage {k}</text>",
            k % 2,
            cx - GAP / 2.0,
            w + GAP,
            cx + w / 2.0
        ));
    }
    s.push_str("<g class=\"edges\">");
    for e in &graph.edges {
        let (a, b) = (&boxes[e.from], &boxes[e.to]);
        let dy = offset(e.kind);
        let (ys, yt) = (mid(e.from) + dy, mid(e.to) + dy);
        let (path, lx, ly) = if b.first > a.last {
            let (xs, xt) = (right(a), left(b));
            let bend = ((xt - xs) / 2.0).max(24.0);
            (
                format!(
                    "M{xs:.1},{ys:.1} C{:.1},{ys:.1} {:.1},{yt:.1} {xt:.1},{yt:.1}",
                    xs + bend,
                    xt - bend
                ),
                (xs + xt) / 2.0,
                (ys + yt) / 2.0,
            )
        } else if row[e.to] == row[e.from] + 1 {
            // The next row of the same column: straight down.
            let cx = x[a.last] + widths[a.last] / 2.0 + dy;
            let (y0, y1) = (mid(e.from) + BOX_H / 2.0, mid(e.to) - BOX_H / 2.0);
            (
                format!("M{cx:.1},{y0:.1} L{cx:.1},{y1:.1}"),
                cx + 4.0,
                (y0 + y1) / 2.0,
            )
        } else {
            // Another row of the same column: an arc through the gap on its right.
            let xs = x[a.last] + widths[a.last];
            let out = xs + 22.0 + dy.abs();
            (
                format!("M{xs:.1},{ys:.1} C{out:.1},{ys:.1} {out:.1},{yt:.1} {xs:.1},{yt:.1}"),
                out,
                (ys + yt) / 2.0,
            )
        };
        let kind = kind_name(e.kind);
        let why = if e.label.is_empty() {
            String::new()
        } else if e.kind == DepKind::Control {
            format!("\nbranch: {}", e.label)
        } else {
            format!("\nfields: {}", e.label)
        };
        let hover = format!("{kind} dependency\n{} → {}{why}", a.name, b.name);
        let bind = if binding(graph, e.from, e.to, e.kind) {
            " binding"
        } else {
            ""
        };
        s.push_str(&format!(
            "<g class=\"edge {kind}{bind}\" data-from=\"{}\" data-to=\"{}\" data-kind=\"{kind}\" \
             data-label=\"{}\"{}><path class=\"hit\" d=\"{path}\"/><path class=\"line\" d=\"{path}\" \
             marker-end=\"url(#{gress}-arrow-{kind})\"/><text class=\"elabel\" x=\"{lx:.1}\" y=\"{:.1}\">{}</text></g>",
            esc(&a.name),
            esc(&b.name),
            esc(&e.label),
            tip(&hover),
            ly - 3.0,
            esc(&cut(if e.label.is_empty() { kind } else { &e.label }, MAX_LABEL))
        ));
    }
    s.push_str("</g><g class=\"nodes\">");
    for (i, b) in boxes.iter().enumerate() {
        let (x0, x1) = (left(b), right(b));
        let y0 = mid(i) - BOX_H / 2.0;
        let class = if b.gateway { "gateway" } else { "table" };
        s.push_str(&format!(
            "<g class=\"node {class}\" data-node=\"{i}\" data-name=\"{}\" data-stages=\"{}\"{}>\
             <rect x=\"{x0:.1}\" y=\"{y0:.1}\" width=\"{:.1}\" height=\"{BOX_H}\" rx=\"{}\"/>\
             <text class=\"name\" x=\"{:.1}\" y=\"{:.1}\">{}</text>\
             <text class=\"sub\" x=\"{:.1}\" y=\"{:.1}\">{}</text></g>",
            esc(&b.name),
            stages_text(b.first as u16, b.last as u16),
            tip(&b.tip),
            x1 - x0,
            if b.gateway { 12 } else { 3 },
            x0 + PAD,
            y0 + 15.0,
            esc(&b.line),
            x0 + PAD,
            y0 + 28.0,
            esc(&b.sub)
        ));
    }
    s.push_str("</g></svg></div>");
    let tables = boxes.iter().filter(|b| !b.gateway).count();
    let gateways = boxes.len() - tables;
    let edges = graph.edges.len();
    s.push_str(&format!(
        "<p class=\"check\" id=\"check-{gress}\" data-gress=\"{gress}\" data-tables=\"{tables}\" \
         data-gateways=\"{gateways}\" data-edges=\"{edges}\">Tables: {tables}, gateways: {gateways}, \
         edges: {edges}.</p>"
    ));
    s
}
