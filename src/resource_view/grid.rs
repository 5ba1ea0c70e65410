//! The stage × resource grid of a gress: a row per per-stage resource of the profile, a
//! column per stage of the pipe, each cell coloured by the share of the stage's capacity
//! used, with the number used in it and, on hover, who uses it (the report's usages).

use dsl::alloc::Kind;
use dsl::report::{GressReport, StageReport, Use};
use dsl::tna::gress_name;
use pipelines::spec::StageResources;

use super::markup::{int, percent, tip, use_class};

/// Who a row's hover lists.
#[derive(Clone, Copy)]
enum Users {
    /// The report's usages of this kind (table, purpose, amount).
    Items(Kind),
    /// The tables and parts of tables placed in the stage.
    Tables,
    /// The gateways and their conditions.
    Gateways,
    /// VLIW slots have no per-user count: say what they count.
    Vliw,
}

/// One row: its name, its key (`data-resource`), what its hover lists, and where its
/// numbers come from.
struct Row {
    name: &'static str,
    key: &'static str,
    users: Users,
    used: fn(&StageReport) -> Use,
    capacity: fn(&StageResources) -> u16,
}

/// The rows, memories first, then the match and action units, then the ALUs.
const ROWS: [Row; 9] = [
    Row {
        name: "SRAM blocks",
        key: "sram",
        users: Users::Items(Kind::Sram),
        used: |s| s.sram_blocks,
        capacity: |r| r.sram_blocks,
    },
    Row {
        name: "TCAM blocks",
        key: "tcam",
        users: Users::Items(Kind::Tcam),
        used: |s| s.tcam_blocks,
        capacity: |r| r.tcam_blocks,
    },
    Row {
        name: "hash bits",
        key: "hash_bits",
        users: Users::Items(Kind::HashBits),
        used: |s| s.hash_bits,
        capacity: |r| r.hash_bits,
    },
    Row {
        name: "logical tables",
        key: "logical_tables",
        users: Users::Tables,
        used: |s| s.logical_tables,
        capacity: |r| r.logical_tables,
    },
    Row {
        name: "gateways",
        key: "gateways",
        users: Users::Gateways,
        used: |s| s.gateways,
        capacity: |r| r.gateways,
    },
    Row {
        name: "VLIW slots",
        key: "vliw",
        users: Users::Vliw,
        used: |s| s.vliw_slots,
        capacity: |r| r.vliw_slots,
    },
    Row {
        name: "stateful ALUs",
        key: "stateful_alus",
        users: Users::Items(Kind::StatefulAlu),
        used: |s| s.stateful_alus,
        capacity: |r| r.stateful_alus,
    },
    Row {
        name: "meter ALUs",
        key: "meter_alus",
        users: Users::Items(Kind::MeterAlu),
        used: |s| s.meter_alus,
        capacity: |r| r.meter_alus,
    },
    Row {
        name: "statistics ALUs",
        key: "stats_alus",
        users: Users::Items(Kind::StatsAlu),
        used: |s| s.stats_alus,
        capacity: |r| r.stats_alus,
    },
];

/// The hover lines naming who uses `row`'s resource in stage `st`.
fn users(row: &Row, g: &GressReport, st: &StageReport) -> Vec<String> {
    match row.users {
        Users::Items(kind) => st
            .items
            .iter()
            .filter(|i| i.kind == kind)
            .map(|i| {
                format!(
                    "{:>6}  {} ({})",
                    int(i.amount as u64),
                    i.used_by,
                    i.used_for
                )
            })
            .collect(),
        Users::Tables => st
            .tables
            .iter()
            .map(|t| {
                let parts = g
                    .table_parts
                    .iter()
                    .find(|p| p.name == t.name)
                    .map_or(&[][..], |p| &p.parts[..]);
                let share = match parts.iter().position(|p| p.stage == st.stage) {
                    Some(k) if parts.len() > 1 => {
                        format!(", part {} of {}", k + 1, parts.len())
                    }
                    _ => String::new(),
                };
                format!("{} ({} entries{share})", t.name, int(t.entries as u64))
            })
            .collect(),
        Users::Gateways => g
            .dependencies
            .nodes
            .iter()
            .filter(|n| n.first_stage == st.stage)
            .filter_map(|n| {
                n.condition
                    .as_ref()
                    .map(|c| format!("{}: if ({c})", n.name))
            })
            .collect(),
        Users::Vliw => vec![
            "one slot per distinct PHV container that the actions".into(),
            "of the stage's tables write (one ALU per container)".into(),
        ],
    }
}

/// The grid of one gress over every stage of the pipe (a gress that uses none says so).
pub fn grid(g: &GressReport, capacity: &StageResources, pipe_stages: u16) -> String {
    let gress = gress_name(g.gress);
    if g.stages.is_empty() {
        return format!(
            "<p class=\"note\">{gress} uses none of the pipe's {pipe_stages} stages.</p>"
        );
    }
    let mut s = format!(
        "<table class=\"grid\" data-gress=\"{gress}\"><thead><tr><th class=\"rowname\">{gress}: \
         per stage</th>"
    );
    for k in 0..pipe_stages {
        s.push_str(&format!("<th>{k}</th>"));
    }
    s.push_str("</tr></thead><tbody>");
    for row in &ROWS {
        let cap = (row.capacity)(capacity);
        s.push_str(&format!(
            "<tr><th class=\"rowname\">{} <small>of {}</small></th>",
            row.name,
            int(cap as u64)
        ));
        for k in 0..pipe_stages {
            let Some(st) = g.stages.get(k as usize) else {
                s.push_str(&format!(
                    "<td class=\"cell unused\"{}></td>",
                    tip(&format!(
                        "{gress} stage {k}: not used ({} of {} free)",
                        cap, cap
                    ))
                ));
                continue;
            };
            let u = (row.used)(st);
            let mut hover = format!(
                "{gress} stage {k}: {}\n{} of {} used ({}%)",
                row.name,
                int(u.used as u64),
                int(u.available as u64),
                percent(u.used, u.available)
            );
            for line in users(row, g, st) {
                hover.push('\n');
                hover.push_str(&line);
            }
            let text = if u.used == 0 {
                String::new()
            } else {
                int(u.used as u64)
            };
            s.push_str(&format!(
                "<td class=\"cell {}\" data-stage=\"{k}\" data-resource=\"{}\" data-used=\"{}\" \
                 data-available=\"{}\"{}>{text}</td>",
                use_class(u.used, u.available),
                row.key,
                u.used,
                u.available,
                tip(&hover)
            ));
        }
        s.push_str("</tr>");
    }
    s.push_str(
        "<tr class=\"cycles\"><th class=\"rowname\">cycles <small>in the stage</small></th>",
    );
    for k in 0..pipe_stages {
        match g.stages.get(k as usize) {
            Some(st) => s.push_str(&format!(
                "<td data-stage=\"{k}\" data-resource=\"cycles\" data-used=\"{0}\"{1}>{0}</td>",
                st.cycles,
                tip(&format!(
                    "{gress} stage {k}: {} cycles (a TCAM table, stateful or meter ALU in the \
                     stage adds the profile's extra cycles)",
                    st.cycles
                ))
            )),
            None => s.push_str("<td class=\"unused\"></td>"),
        }
    }
    s.push_str("</tr></tbody></table>");
    s.push_str(&format!(
        "<p class=\"note\">{gress} uses {} of the pipe's {} stages.</p>",
        g.stages.len(),
        pipe_stages
    ));
    s
}
