//! Stage allocation: place every table and gateway in an MAU stage, and every extern array
//! and hash unit in the stage of the table that drives it.
//!
//! Nodes are visited in topological order of the control-flow graph (the table dependency
//! graph's control edges) and each goes to the earliest stage that both its dependencies and
//! the stage's free resources allow:
//! - control (successor) dependency: not before any predecessor's stage (the pipe walks
//!   nodes in order, so stages never decrease along a path); the same stage is allowed;
//! - match dependency: a node whose key, condition, extern index, hash input or
//!   stateful-ALU operand reads a field that an earlier node (an ancestor in the graph) may
//!   write goes at least one stage later (the value only exists after that stage);
//! - action dependency: likewise when its actions read a field an ancestor writes, or both
//!   write the same field (the later write must land after the earlier one).
//!
//! Resource costs (documented formulas, per table; "block" = `sram_depth` words of
//! `sram_width_bits`):
//! - logical tables: 1; gateways: 1 per `if`;
//! - VLIW slots: one per distinct PHV container written by the actions of the stage's tables,
//!   extern results included (each container has one ALU per stage);
//! - exact tables: `ways = ceil(size / sram_depth)`, SRAM blocks =
//!   `ways * ceil((key_bits + data_bits + selector_bits + 4) / sram_width_bits)` where
//!   `data_bits` is the widest action's parameters, `selector_bits = ceil(log2(#actions))`
//!   and 4 bits of entry valid/version overhead; hash bits = `ways * log2(sram_depth)`
//!   (each way is addressed by its own slice of the hash);
//! - TCAM (ternary, lpm, range) tables: TCAM blocks =
//!   `ceil(size / tcam_depth) * ceil(key_bits / tcam_width_bits)`, plus SRAM for the action
//!   data and selector (`ceil(size / sram_depth) * ceil((data_bits + selector_bits) /
//!   sram_width_bits)`, none if that is 0 bits);
//! - keyless tables: only a logical table and VLIW slots (their action is in the instruction);
//! - a register array: one stateful ALU and `ceil(size * width / block bits)` SRAM blocks;
//! - a meter array: one meter ALU and `ceil(size * 128 / block bits)` blocks (assumption: one
//!   128-bit word of bucket state per two-rate meter, as Tofino's meter RAM);
//! - a counter array: one statistics ALU and `ceil(size * bits / block bits)` blocks, with 64
//!   bits per counter of packets or of bytes and 128 for both (assumption: Tofino-like
//!   64-bit counters); a direct counter likewise with `size + 1` counters (one per entry and
//!   one for misses);
//! - a hash unit: its output width in hash bits.

use std::collections::BTreeSet;

use pipelines::dataflow;
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
    /// Stateful ALUs (one per register array).
    pub stateful_alus: u32,
    /// Meter ALUs (one per meter array).
    pub meter_alus: u32,
    /// Statistics ALUs (one per counter array or direct counter).
    pub stats_alus: u32,
    /// Whether a TCAM table is in the stage (costs extra latency).
    pub tcam: bool,
    /// What uses the memories, ALUs and hash bits, item by item.
    pub items: Vec<Item>,
}

/// A resource of a stage that [`Item`]s are counted in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Kind {
    /// SRAM blocks.
    Sram,
    /// TCAM blocks.
    Tcam,
    /// Hash output bits.
    HashBits,
    /// Stateful ALUs.
    StatefulAlu,
    /// Meter ALUs.
    MeterAlu,
    /// Statistics ALUs.
    StatsAlu,
}

/// One use of a stage resource: who uses how much of what, and for what (named as in
/// p4c's resources.json: `match_entry_ram`, `ternary_match`, `action_ram`, `stateful_ram`,
/// `meter_ram`, `statistics_ram`, `way_select`, `hash_dist`, `stateful`, `meter`,
/// `statistics`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Item {
    /// The table, extern array or hash unit.
    pub used_by: String,
    /// What for.
    pub used_for: &'static str,
    /// Which resource.
    pub kind: Kind,
    /// How much of it.
    pub amount: u32,
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
    salus: u32,
    meters: u32,
    stats: u32,
    containers: BTreeSet<u16>,
    items: Vec<Item>,
}

impl Need {
    fn add(&mut self, used_by: &str, used_for: &'static str, kind: Kind, amount: u32) {
        if amount == 0 {
            return;
        }
        match kind {
            Kind::Sram => self.sram += amount,
            Kind::Tcam => self.tcam += amount,
            Kind::HashBits => self.hash += amount,
            Kind::StatefulAlu => self.salus += amount,
            Kind::MeterAlu => self.meters += amount,
            Kind::StatsAlu => self.stats += amount,
        }
        self.items.push(Item {
            used_by: used_by.to_string(),
            used_for,
            kind,
            amount,
        });
    }
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

/// Bits of state per counter of a kind.
fn counter_bits(k: CountKind) -> u64 {
    match k {
        CountKind::Packets | CountKind::Bytes => 64,
        CountKind::PacketsAndBytes => 128,
    }
}

/// SRAM blocks holding `entries` words of `bits` bits each.
fn blocks(spec: &PipeSpec, entries: u64, bits: u64) -> u32 {
    let block = spec.stage.sram_depth as u64 * spec.stage.sram_width_bits as u64;
    ceil_div(entries * bits, block).max(1)
}

/// The actions a table may run (its list and its default).
fn table_actions(t: &Table) -> Vec<ActionId> {
    let mut v = t.actions.clone();
    if !v.contains(&t.default_action.action) {
        v.push(t.default_action.action);
    }
    v
}

/// The extern arrays and hash units a table's actions drive.
#[derive(Default)]
struct TableExterns {
    registers: BTreeSet<RegisterId>,
    meters: BTreeSet<MeterId>,
    counters: BTreeSet<CounterId>,
    hashes: BTreeSet<HashId>,
}

fn table_externs(t: &Table, c: &ControlProgram) -> TableExterns {
    let mut x = TableExterns::default();
    for a in table_actions(t) {
        for call in &c.actions[a as usize].externs {
            let index = match call {
                ExternCall::Stateful { salu, index, .. } => {
                    if let Some(s) = c.salus.get(*salu as usize) {
                        x.registers.insert(s.register);
                    }
                    Some(index)
                }
                ExternCall::Meter { meter, index, .. } => {
                    x.meters.insert(*meter);
                    Some(index)
                }
                ExternCall::Count { counter, index } => {
                    x.counters.insert(*counter);
                    Some(index)
                }
                ExternCall::Hash { hash, .. } => {
                    x.hashes.insert(*hash);
                    None
                }
                ExternCall::Random { .. }
                | ExternCall::QueueDepth { .. }
                | ExternCall::EmptyQueues { .. } => None,
            };
            if let Some(ExternIndex::Hash(h)) = index {
                x.hashes.insert(*h);
            }
        }
    }
    x
}

fn table_need(t: &Table, c: &ControlProgram, layout: &PhvLayout, spec: &PipeSpec) -> Need {
    let s = &spec.stage;
    let key_bits: u64 = t
        .keys
        .iter()
        .map(|k| match k.slice {
            Some((hi, lo)) => (hi - lo + 1) as u64,
            None => layout.fields[k.field as usize].width as u64,
        })
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
    for a in table_actions(t) {
        let action = &c.actions[a as usize];
        let dsts = action
            .ops
            .iter()
            .map(|o| dataflow::op_writes(o).field)
            .chain(action.externs.iter().flat_map(dataflow::extern_writes));
        for dst in dsts {
            need.containers
                .extend(dataflow::field_bits(layout, dst).map(|(k, _)| k));
        }
    }
    let name = t.name.as_str();
    if !t.keys.is_empty() {
        let size = t.size as u64;
        if t.uses_tcam() {
            let tcam =
                ceil_div(size, s.tcam_depth as u64) * ceil_div(key_bits, s.tcam_width_bits as u64);
            need.add(name, "ternary_match", Kind::Tcam, tcam);
            let word = data_bits + selector;
            if word > 0 {
                let sram =
                    ceil_div(size, s.sram_depth as u64) * ceil_div(word, s.sram_width_bits as u64);
                need.add(name, "action_ram", Kind::Sram, sram);
            }
        } else {
            let ways = ceil_div(size, s.sram_depth as u64);
            let sram = ways
                * ceil_div(
                    key_bits + data_bits + selector + 4,
                    s.sram_width_bits as u64,
                );
            need.add(name, "match_entry_ram", Kind::Sram, sram);
            let hash = ways * bits_for(s.sram_depth as usize) as u32;
            need.add(name, "way_select", Kind::HashBits, hash);
        }
    }
    let x = table_externs(t, c);
    for &r in &x.registers {
        let r = &c.registers[r as usize];
        need.add(&r.name, "stateful", Kind::StatefulAlu, 1);
        let sram = blocks(spec, r.size as u64, r.width as u64);
        need.add(&r.name, "stateful_ram", Kind::Sram, sram);
    }
    for &m in &x.meters {
        let m = &c.meters[m as usize];
        need.add(&m.name, "meter", Kind::MeterAlu, 1);
        need.add(
            &m.name,
            "meter_ram",
            Kind::Sram,
            blocks(spec, m.size as u64, 128),
        );
    }
    for &k in &x.counters {
        let k = &c.counters[k as usize];
        need.add(&k.name, "statistics", Kind::StatsAlu, 1);
        let sram = blocks(spec, k.size as u64, counter_bits(k.kind));
        need.add(&k.name, "statistics_ram", Kind::Sram, sram);
    }
    if let Some(kind) = t.direct_counter {
        let by = format!("{name}$counter");
        need.add(&by, "statistics", Kind::StatsAlu, 1);
        let sram = blocks(spec, t.size as u64 + 1, counter_bits(kind));
        need.add(&by, "statistics_ram", Kind::Sram, sram);
    }
    for &h in &x.hashes {
        let h = &c.hashes[h as usize];
        need.add(&h.name, "hash_dist", Kind::HashBits, h.width as u32);
    }
    need
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

/// The resources of a stage, as (name, used, needed, available) rows.
fn rows(
    u: &StageUsage,
    need: &Need,
    new_slots: u32,
    spec: &PipeSpec,
) -> [(&'static str, u32, u32, u32); 9] {
    let r = &spec.stage;
    [
        (
            "SRAM blocks",
            u.sram_blocks,
            need.sram,
            r.sram_blocks as u32,
        ),
        (
            "TCAM blocks",
            u.tcam_blocks,
            need.tcam,
            r.tcam_blocks as u32,
        ),
        (
            "logical tables",
            u.logical_tables,
            need.tables,
            r.logical_tables as u32,
        ),
        ("gateways", u.gateways, need.gateways, r.gateways as u32),
        ("hash bits", u.hash_bits, need.hash, r.hash_bits as u32),
        (
            "stateful ALUs",
            u.stateful_alus,
            need.salus,
            r.stateful_alus as u32,
        ),
        ("meter ALUs", u.meter_alus, need.meters, r.meter_alus as u32),
        (
            "statistics ALUs",
            u.stats_alus,
            need.stats,
            r.stats_alus as u32,
        ),
        ("VLIW slots", u.vliw_slots, new_slots, r.vliw_slots as u32),
    ]
}

/// Place the tables and gateways of `c`; sets their `stage` fields, the stages of the extern
/// arrays and hash units, and `c.stages`. `table_spans`/`gateway_spans` locate errors.
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
        a.match_reads
            .extend(dataflow::key_reads(t).map(|k| k.field));
        for act in table_actions(t) {
            let action = &c.actions[act as usize];
            for op in &action.ops {
                a.writes.insert(dataflow::op_writes(op).field);
                a.action_reads
                    .extend(dataflow::op_reads(op).map(|r| r.field));
            }
            for x in &action.externs {
                // Extern inputs address memories or feed the hash and stateful ALUs at the
                // start of the stage: they behave like match inputs.
                a.match_reads.extend(dataflow::extern_reads(c, x));
                a.writes.extend(dataflow::extern_writes(x));
            }
        }
        needs.push(table_need(t, c, layout, spec));
    }
    for (g, gw) in c.gateways.iter().enumerate() {
        access[nt + g]
            .match_reads
            .extend(dataflow::cond_reads(&gw.cond).iter().map(|r| r.field));
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
        let mut after: Option<usize> = None;
        for &a in &anc {
            let w = &access[a].writes;
            let x = &access[i];
            let dep = !w.is_disjoint(&x.match_reads)
                || !w.is_disjoint(&x.action_reads)
                || !w.is_disjoint(&x.writes);
            if dep && stage_of[a] + 1 > earliest {
                earliest = stage_of[a] + 1;
                after = Some(a);
            }
        }
        ancestors[i] = anc;
        let need = &needs[i];
        let (what, span) = describe(c, i, nt, table_spans, gateway_spans);
        check_fits_a_stage(need, spec, &what, span)?;
        let new_slots = |s: usize| {
            need.containers
                .iter()
                .filter(|c| !containers[s].contains(c))
                .count() as u32
        };
        let fits = |s: usize| -> bool {
            rows(&usage[s], need, new_slots(s), spec)
                .iter()
                .all(|&(_, used, n, have)| used + n <= have)
        };
        let Some(s) = (earliest..stages).find(|&s| fits(s)) else {
            let because = after.map_or(String::new(), |a| {
                format!(
                    " (after {}, which it depends on)",
                    describe(c, a, nt, table_spans, gateway_spans).0
                )
            });
            let msg = if earliest >= stages {
                format!(
                    "{what} must go in stage {earliest} or later{because}, but the pipe has \
                     {stages} stages (short by {} stage(s))",
                    earliest + 1 - stages
                )
            } else {
                // Name the stage that comes closest: the fewest short resources, then the
                // smallest shortfall.
                let mut best: Option<(usize, u32, usize, &str, u32, u32)> = None;
                for (st, u) in usage.iter().enumerate().skip(earliest) {
                    let short: Vec<(&str, u32, u32, u32)> = rows(u, need, new_slots(st), spec)
                        .iter()
                        .filter(|&&(_, used, n, have)| used + n > have)
                        .map(|&(name, used, n, have)| (name, n, have.saturating_sub(used), have))
                        .collect();
                    if let Some(&(name, n, free, _)) = short.first() {
                        let gap = n - free;
                        let key = (short.len(), gap);
                        if best.is_none_or(|b| (b.2, b.1) > key) {
                            best = Some((st, gap, short.len(), name, n, free));
                        }
                    }
                }
                let (st, gap, _, name, n, free) =
                    best.unwrap_or((earliest, 0, 0, "resources", 0, 0));
                let range = if earliest + 1 == stages {
                    format!("stage {earliest}")
                } else {
                    format!("stages {earliest}..{}", stages - 1)
                };
                format!(
                    "{what} does not fit in {range}{because}: it needs {n} {name} and stage \
                     {st}, the closest, has {free} free (short by {gap})"
                )
            };
            return Err(CompileError::new(ErrorKind::Resource, span, msg));
        };
        let slots = new_slots(s);
        let u = &mut usage[s];
        u.sram_blocks += need.sram;
        u.tcam_blocks += need.tcam;
        u.logical_tables += need.tables;
        u.gateways += need.gateways;
        u.hash_bits += need.hash;
        u.stateful_alus += need.salus;
        u.meter_alus += need.meters;
        u.stats_alus += need.stats;
        containers[s].extend(need.containers.iter().copied());
        u.vliw_slots += slots;
        u.items.extend(need.items.iter().cloned());
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
    // Externs live beside the table that drives them.
    for (i, &st) in stage_of.iter().enumerate().take(nt) {
        let x = table_externs(&c.tables[i], c);
        let s = st as u16;
        for r in x.registers {
            c.registers[r as usize].stage = s;
        }
        for m in x.meters {
            c.meters[m as usize].stage = s;
        }
        for k in x.counters {
            c.counters[k as usize].stage = s;
        }
        for h in x.hashes {
            c.hashes[h as usize].stage = s;
        }
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

/// A node's name for messages and where to point.
fn describe(
    c: &ControlProgram,
    i: usize,
    nt: usize,
    table_spans: &[Span],
    gateway_spans: &[Span],
) -> (String, Span) {
    if i < nt {
        (
            format!("table {}", c.tables[i].name),
            table_spans.get(i).copied().unwrap_or_default(),
        )
    } else {
        (
            "an `if` (gateway)".to_string(),
            gateway_spans.get(i - nt).copied().unwrap_or_default(),
        )
    }
}

/// A node that would not fit even an empty stage: name the resource and the shortfall.
fn check_fits_a_stage(need: &Need, spec: &PipeSpec, what: &str, span: Span) -> Result<()> {
    let empty = StageUsage::default();
    for (name, _, n, have) in rows(&empty, need, need.containers.len() as u32, spec) {
        if n > have {
            return Err(CompileError::new(
                ErrorKind::Resource,
                span,
                format!(
                    "{what} needs {n} {name}; a stage has {have} (short by {})",
                    n - have
                ),
            ));
        }
    }
    Ok(())
}
