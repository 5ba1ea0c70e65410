//! Each table of a gress: where it went and how big it is (every part of a table split
//! across stages: its stage, entries and memories), its keys with their match kinds and its
//! actions; then the gateways with their conditions and the extern arrays with their stages.

use dsl::depgraph::stages_text;
use dsl::report::GressReport;
use dsl::tna::gress_name;
use pipelines::program::{ControlProgram, Table};

use super::markup::{esc, int, match_kind, tip};

/// `hdr.ipv4.dst_addr: lpm`, one per key as the source writes it (`meta.x[15:8]: exact`).
fn keys(t: &Table) -> String {
    if t.keys.is_empty() {
        return "<i>keyless: always runs its default action</i>".into();
    }
    t.keys
        .iter()
        .map(|k| {
            format!(
                "<code>{}</code>: <span class=\"mk\">{}</span>",
                esc(&k.name),
                match_kind(k.kind)
            )
        })
        .collect::<Vec<_>>()
        .join("<br>")
}

/// The actions an entry may name, the default one marked.
fn actions(t: &Table, c: &ControlProgram) -> String {
    let name = |a: u16| esc(&c.actions[a as usize].name);
    let mut list: Vec<String> = t
        .actions
        .iter()
        .map(|&a| {
            if a == t.default_action.action {
                format!("<code>{}</code> <small>(default)</small>", name(a))
            } else {
                format!("<code>{}</code>", name(a))
            }
        })
        .collect();
    if !t.actions.contains(&t.default_action.action) {
        list.push(format!(
            "<code>{}</code> <small>(default only)</small>",
            name(t.default_action.action)
        ));
    }
    list.join("<br>")
}

/// A strip with a cell per stage of the gress, the stages holding a part filled.
fn strip(t: &Table, stages: usize, gress: &str) -> String {
    let parts = t.stage_parts();
    let mut s = String::from("<span class=\"strip\">");
    for k in 0..stages {
        match parts.iter().find(|p| p.stage as usize == k) {
            Some(p) => s.push_str(&format!(
                "<span class=\"on\"{}></span>",
                tip(&format!(
                    "{} in {gress} stage {k}: {} entries",
                    t.name,
                    int(p.entries as u64)
                ))
            )),
            None => s.push_str("<span></span>"),
        }
    }
    s.push_str("</span>");
    s
}

/// The tables of one gress in stage order, then its gateways in stage order and its extern
/// arrays.
pub fn tables(g: &GressReport, c: &ControlProgram) -> String {
    let gress = gress_name(g.gress);
    if c.tables.is_empty() {
        return format!("<p class=\"note\">{gress} has no tables.</p>");
    }
    let mut order: Vec<usize> = (0..c.tables.len()).collect();
    order.sort_by_key(|&i| (c.tables[i].stage, i));
    let mut s = format!(
        "<table class=\"tables\" data-gress=\"{gress}\"><thead><tr><th>table</th><th>stage</th>\
         <th>placement over stages 0..{}</th><th>entries</th><th>SRAM blocks</th><th>TCAM blocks</th>\
         <th>hash bits</th><th>key and match kind</th><th>actions</th></tr></thead><tbody>",
        g.stages.len().saturating_sub(1)
    );
    for i in order {
        let t = &c.tables[i];
        let Some(report) = g.table_parts.get(i) else {
            continue;
        };
        let parts = &report.parts;
        let total =
            |f: fn(&dsl::alloc::PartUse) -> u32| int(parts.iter().map(f).sum::<u32>() as u64);
        let first = parts.first().map_or(t.stage, |p| p.stage);
        let last = parts.last().map_or(t.stage, |p| p.stage);
        let split = if parts.len() > 1 {
            format!("<br><small>split in {} parts</small>", parts.len())
        } else {
            String::new()
        };
        let counter = if t.direct_counter.is_some() {
            "<br><small>direct counter</small>"
        } else {
            ""
        };
        let entries = if t.keys.is_empty() {
            "—".to_string()
        } else {
            int(t.size as u64)
        };
        s.push_str(&format!(
            "<tr class=\"table\" data-name=\"{}\" data-stages=\"{}\" data-parts=\"{}\">\
             <td><code>{}</code>{counter}</td><td>{}</td><td>{}</td><td class=\"num\">{entries}{split}</td>\
             <td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td><td>{}</td></tr>",
            esc(&t.name),
            stages_text(first, last),
            parts.len(),
            esc(&t.name),
            stages_text(first, last).trim_start_matches("stages ").trim_start_matches("stage "),
            strip(t, g.stages.len(), gress),
            total(|p| p.sram_blocks),
            total(|p| p.tcam_blocks),
            total(|p| p.hash_bits),
            keys(t),
            actions(t, c)
        ));
        if parts.len() > 1 {
            for (k, p) in parts.iter().enumerate() {
                s.push_str(&format!(
                    "<tr class=\"part\" data-name=\"{}\" data-stage=\"{}\" data-entries=\"{}\">\
                     <td>part {} of {}</td><td>{}</td><td></td><td class=\"num\">{}</td>\
                     <td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
                     <td></td><td></td></tr>",
                    esc(&t.name),
                    p.stage,
                    p.entries,
                    k + 1,
                    parts.len(),
                    p.stage,
                    int(p.entries as u64),
                    int(p.sram_blocks as u64),
                    int(p.tcam_blocks as u64),
                    int(p.hash_bits as u64)
                ));
            }
        }
    }
    s.push_str("</tbody></table>");
    let mut gateways: Vec<_> = g
        .dependencies
        .nodes
        .iter()
        .filter_map(|n| n.condition.as_ref().map(|c| (n, c)))
        .collect();
    gateways.sort_by_key(|(n, _)| n.first_stage);
    if !gateways.is_empty() {
        s.push_str(
            "<table class=\"small\"><thead><tr><th>gateway</th><th>stage</th><th>condition</th>\
             </tr></thead><tbody>",
        );
        for (n, cond) in gateways {
            s.push_str(&format!(
                "<tr><td>{}</td><td>{}</td><td><code>{}</code></td></tr>",
                esc(&n.name),
                n.first_stage,
                esc(cond)
            ));
        }
        s.push_str("</tbody></table>");
    }
    if !g.externs.is_empty() {
        s.push_str(
            "<table class=\"small\"><thead><tr><th>extern</th><th>name</th><th>stage</th></tr>\
             </thead><tbody>",
        );
        for x in &g.externs {
            s.push_str(&format!(
                "<tr><td>{}</td><td><code>{}</code></td><td>{}</td></tr>",
                x.kind,
                esc(&x.name),
                x.stage
            ));
        }
        s.push_str("</tbody></table>");
    }
    s
}
