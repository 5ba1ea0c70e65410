//! Stage allocation: place every table and gateway in an MAU stage.
//!
//! Nodes are visited in topological order of the control-flow graph and each goes to the
//! earliest stage that both its dependencies and the stage's free resources allow:
//! - control (successor) dependency: not before any predecessor's stage (the pipe walks
//!   nodes in order, so stages never decrease along a path);
//! - match dependency: a node whose key or condition reads a field that an earlier node
//!   (an ancestor in the graph) may write goes at least one stage later;
//! - action dependency: likewise when its actions read or write a field an ancestor writes.
//!
//! Resource costs (documented formulas, per table):
//! - logical tables: 1; gateways: 1 per `if`;
//! - VLIW slots: one per distinct PHV container written by the actions of the stage's tables
//!   (each container has one ALU per stage);
//! - exact tables: `ways = ceil(size / sram_depth)`, SRAM blocks =
//!   `ways * ceil((key_bits + data_bits + selector_bits + 4) / sram_width_bits)` where
//!   `data_bits` is the widest action's parameters, `selector_bits = ceil(log2(#actions))`
//!   and 4 bits of entry valid/version overhead; hash bits = `ways * log2(sram_depth)`
//!   (each way is addressed by its own slice of the hash);
//! - TCAM (ternary, lpm, range) tables: TCAM blocks =
//!   `ceil(size / tcam_depth) * ceil(key_bits / tcam_width_bits)`, plus SRAM for the action
//!   data and selector (`ceil(size / sram_depth) * ceil((data_bits + selector_bits) /
//!   sram_width_bits)`, none if that is 0 bits);
//! - keyless tables: only a logical table and VLIW slots (their action is in the instruction).

use std::collections::BTreeSet;

use pipelines::program::*;
use pipelines::spec::PipeSpec;
use serde::Serialize;

use crate::ast::Span;
use crate::error::{CompileError, ErrorKind, Result};

/// Resources used in one stage.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct StageUsage {
    /// SRAM blocks.
    pub sram_blocks: u32,
    /// TCAM blocks.
    pub tcam_blocks: u32,
    /// Logical tables.
    pub logical_tables: u32,
    /// Gateways.
    pub gateways: u32,
    /// VLIW slots (distinct containers written).
    pub vliw_slots: u32,
    /// Hash output bits.
    pub hash_bits: u32,
    /// Stateful ALUs (no externs use them yet).
    pub stateful_alus: u32,
    /// Meter ALUs (no externs use them yet).
    pub meter_alus: u32,
    /// Whether a TCAM table is in the stage (costs extra latency).
    pub tcam: bool,
}

/// The result of placing a control.
#[derive(Clone, Debug, Default)]
pub struct Placement {
    /// Usage of stages `0..control.stages`.
    pub stages: Vec<StageUsage>,
}

/// What one node needs from its stage.
#[derive(Clone, Debug, Default)]
struct Need {
    sram: u32,
    tcam: u32,
    tables: u32,
    gateways: u32,
    hash: u32,
    containers: BTreeSet<u16>,
}

/// Fields a node touches.
#[derive(Default)]
struct Access {
    match_reads: BTreeSet<FieldId>,
    action_reads: BTreeSet<FieldId>,
    writes: BTreeSet<FieldId>,
}

fn ceil_div(a: u64, b: u64) -> u32 {
    a.div_ceil(b.max(1)) as u32
}

fn bits_for(n: usize) -> u64 {
    if n <= 1 {
        0
    } else {
        (usize::BITS - (n - 1).leading_zeros()) as u64
    }
}

fn table_need(t: &Table, c: &ControlProgram, layout: &PhvLayout, spec: &PipeSpec) -> Need {
    let s = &spec.stage;
    let key_bits: u64 = t
        .keys
        .iter()
        .map(|k| layout.fields[k.field as usize].width as u64)
        .sum();
    let data_bits: u64 = t
        .actions
        .iter()
        .map(|&a| {
            c.actions[a as usize]
                .params
                .iter()
                .map(|p| p.width as u64)
                .sum::<u64>()
        })
        .max()
        .unwrap_or(0);
    let selector = bits_for(t.actions.len());
    let mut need = Need {
        tables: 1,
        ..Need::default()
    };
    for &a in t.actions.iter().chain([&t.default_action.action]) {
        for op in &c.actions[a as usize].ops {
            for sl in &layout.fields[op.dst as usize].slices {
                need.containers.insert(sl.container);
            }
        }
    }
    if t.keys.is_empty() {
        return need;
    }
    let size = t.size as u64;
    if t.uses_tcam() {
        need.tcam =
            ceil_div(size, s.tcam_depth as u64) * ceil_div(key_bits, s.tcam_width_bits as u64);
        let word = data_bits + selector;
        if word > 0 {
            need.sram =
                ceil_div(size, s.sram_depth as u64) * ceil_div(word, s.sram_width_bits as u64);
        }
    } else {
        let ways = ceil_div(size, s.sram_depth as u64);
        need.sram = ways
            * ceil_div(
                key_bits + data_bits + selector + 4,
                s.sram_width_bits as u64,
            );
        need.hash = ways * bits_for(s.sram_depth as usize) as u32;
    }
    need
}

fn fields_of(cond: &Cond, out: &mut BTreeSet<FieldId>) {
    match cond {
        Cond::True => {}
        Cond::Cmp { a, b, .. } => {
            for o in [a, b] {
                if let Operand::Field(f) = o {
                    out.insert(*f);
                }
            }
        }
        Cond::And(a, b) | Cond::Or(a, b) => {
            fields_of(a, out);
            fields_of(b, out);
        }
        Cond::Not(a) => fields_of(a, out),
    }
}

/// Node index: tables first, then gateways.
fn index(n: Node, tables: usize) -> usize {
    match n {
        Node::Table(t) => t as usize,
        Node::Gateway(g) => tables + g as usize,
    }
}

fn successors(c: &ControlProgram, n: Node) -> Vec<Node> {
    match n {
        Node::Table(t) => match &c.tables[t as usize].next {
            TableNext::Always(x) => x.iter().copied().collect(),
            TableNext::HitMiss { hit, miss } => hit.iter().chain(miss.iter()).copied().collect(),
            TableNext::ByAction { cases, default } => cases
                .iter()
                .filter_map(|c| c.1)
                .chain(default.iter().copied())
                .collect(),
        },
        Node::Gateway(g) => {
            let g = &c.gateways[g as usize];
            g.on_true.iter().chain(g.on_false.iter()).copied().collect()
        }
    }
}

/// Place the tables and gateways of `c`; sets their `stage` fields and `c.stages`.
/// `table_spans`/`gateway_spans` locate errors.
pub fn place(
    c: &mut ControlProgram,
    layout: &PhvLayout,
    spec: &PipeSpec,
    table_spans: &[Span],
    gateway_spans: &[Span],
) -> Result<Placement> {
    let nt = c.tables.len();
    let n = nt + c.gateways.len();
    let node_of = |i: usize| {
        if i < nt {
            Node::Table(i as TableId)
        } else {
            Node::Gateway((i - nt) as GatewayId)
        }
    };

    // Topological order (reverse DFS post-order from the entry) and predecessors.
    let mut order = Vec::new();
    let mut state = vec![0u8; n];
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
    if let Some(e) = c.entry {
        let mut stack = vec![(index(e, nt), false)];
        while let Some((i, done)) = stack.pop() {
            if done {
                state[i] = 2;
                order.push(i);
                continue;
            }
            if state[i] != 0 {
                continue;
            }
            state[i] = 1;
            stack.push((i, true));
            for s in successors(c, node_of(i)) {
                let j = index(s, nt);
                preds[j].push(i);
                if state[j] == 0 {
                    stack.push((j, false));
                }
            }
        }
    }
    order.reverse();

    let mut access: Vec<Access> = (0..n).map(|_| Access::default()).collect();
    let mut needs: Vec<Need> = Vec::with_capacity(n);
    for (i, t) in c.tables.iter().enumerate() {
        let a = &mut access[i];
        a.match_reads.extend(t.keys.iter().map(|k| k.field));
        for &act in t.actions.iter().chain([&t.default_action.action]) {
            for op in &c.actions[act as usize].ops {
                a.writes.insert(op.dst);
                for o in [op.a, op.b] {
                    if let Operand::Field(f) = o {
                        a.action_reads.insert(f);
                    }
                }
            }
        }
        needs.push(table_need(t, c, layout, spec));
    }
    for (g, gw) in c.gateways.iter().enumerate() {
        fields_of(&gw.cond, &mut access[nt + g].match_reads);
        needs.push(Need {
            gateways: 1,
            ..Need::default()
        });
    }

    let stages = spec.stages as usize;
    let mut usage: Vec<StageUsage> = vec![StageUsage::default(); stages];
    let mut containers: Vec<BTreeSet<u16>> = vec![BTreeSet::new(); stages];
    let mut stage_of = vec![0usize; n];
    let mut ancestors: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); n];
    for &i in &order {
        let mut anc = BTreeSet::new();
        for &p in &preds[i] {
            anc.insert(p);
            anc.extend(ancestors[p].iter().copied());
        }
        let mut earliest = preds[i].iter().map(|&p| stage_of[p]).max().unwrap_or(0);
        for &a in &anc {
            let w = &access[a].writes;
            let x = &access[i];
            let dep = !w.is_disjoint(&x.match_reads)
                || !w.is_disjoint(&x.action_reads)
                || !w.is_disjoint(&x.writes);
            if dep {
                earliest = earliest.max(stage_of[a] + 1);
            }
        }
        ancestors[i] = anc;
        let need = &needs[i];
        let (what, span) = if i < nt {
            (
                format!("table {}", c.tables[i].name),
                table_spans.get(i).copied().unwrap_or_default(),
            )
        } else {
            (
                "an `if` (gateway)".to_string(),
                gateway_spans.get(i - nt).copied().unwrap_or_default(),
            )
        };
        check_fits_a_stage(need, spec, &what, span)?;
        let fits = |s: usize| -> bool {
            let u = &usage[s];
            let r = &spec.stage;
            let new_slots = need
                .containers
                .iter()
                .filter(|c| !containers[s].contains(c))
                .count() as u32;
            u.sram_blocks + need.sram <= r.sram_blocks as u32
                && u.tcam_blocks + need.tcam <= r.tcam_blocks as u32
                && u.logical_tables + need.tables <= r.logical_tables as u32
                && u.gateways + need.gateways <= r.gateways as u32
                && u.hash_bits + need.hash <= r.hash_bits as u32
                && u.vliw_slots + new_slots <= r.vliw_slots as u32
        };
        let Some(s) = (earliest..stages).find(|&s| fits(s)) else {
            let msg = if earliest >= stages {
                format!(
                    "{what} must go in stage {earliest} or later (after the tables it depends on), \
                     but the pipe has {stages} stages"
                )
            } else {
                format!(
                    "{what} does not fit: stages {earliest}..{} (after the tables it depends on) \
                     are full; the pipe has {stages} stages",
                    stages - 1
                )
            };
            return Err(CompileError::new(ErrorKind::Resource, span, msg));
        };
        let u = &mut usage[s];
        u.sram_blocks += need.sram;
        u.tcam_blocks += need.tcam;
        u.logical_tables += need.tables;
        u.gateways += need.gateways;
        u.hash_bits += need.hash;
        containers[s].extend(need.containers.iter().copied());
        u.vliw_slots = containers[s].len() as u32;
        if i < nt && c.tables[i].uses_tcam() {
            u.tcam = true;
        }
        stage_of[i] = s;
    }
    for (i, t) in c.tables.iter_mut().enumerate() {
        t.stage = stage_of[i] as u16;
    }
    for (g, gw) in c.gateways.iter_mut().enumerate() {
        gw.stage = stage_of[nt + g] as u16;
    }
    let used = if n == 0 {
        0
    } else {
        stage_of.iter().max().map_or(0, |m| m + 1)
    };
    c.stages = used as u16;
    usage.truncate(used);
    Ok(Placement { stages: usage })
}

/// A node that would not fit even an empty stage: name the resource and the shortfall.
fn check_fits_a_stage(need: &Need, spec: &PipeSpec, what: &str, span: Span) -> Result<()> {
    let r = &spec.stage;
    let checks = [
        ("SRAM blocks", need.sram, r.sram_blocks as u32),
        ("TCAM blocks", need.tcam, r.tcam_blocks as u32),
        ("logical tables", need.tables, r.logical_tables as u32),
        ("gateways", need.gateways, r.gateways as u32),
        ("hash bits", need.hash, r.hash_bits as u32),
        (
            "VLIW slots",
            need.containers.len() as u32,
            r.vliw_slots as u32,
        ),
    ];
    for (name, n, have) in checks {
        if n > have {
            return Err(CompileError::new(
                ErrorKind::Resource,
                span,
                format!("{what} needs {n} {name}; a stage has {have}"),
            ));
        }
    }
    Ok(())
}
