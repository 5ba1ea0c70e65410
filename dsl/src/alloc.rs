//! Stage allocation: place every table and gateway in an MAU stage, and every extern array
//! and hash unit in the stage of the table that drives it.
//!
//! Nodes are visited in topological order of the control-flow graph (the table dependency
//! graph's control edges) and each goes to the earliest stage that both its dependencies and
//! the stage's free resources allow:
//! - control (successor) dependency: not before any predecessor's (last) stage (the pipe
//!   walks nodes in order, so stages never decrease along a path); the same stage is allowed;
//! - match dependency: a node whose key, condition, extern index, hash input or
//!   stateful-ALU operand reads a field that an earlier node (an ancestor in the graph) may
//!   write goes at least one stage after that node's last stage (the value only exists after
//!   that stage);
//! - action dependency: likewise when its actions read a field an ancestor writes, or both
//!   write the same field (the later write must land after the earlier one).
//!
//! Those edges, with their kinds and the fields or branches behind them, are kept in
//! [`Placement::dependencies`]: the table dependency graph the report carries
//! ([`crate::depgraph`]).
//!
//! Splitting, as bf-p4c does: a table that no stage from its earliest has room for is split
//! into parts ([`TablePart`]), each a logical table holding a share of the entries: from its
//! earliest stage on, each stage takes the largest part its free resources allow (whole
//! ways of `sram_depth` entries for an exact table, rows of `tcam_depth` for a TCAM one),
//! until every entry is placed; a table the pipe cannot hold is refused naming how many of
//! its entries fit. Each part costs what a table of its entries costs (memories, hash bits,
//! a logical table, the VLIW slots of its actions, a direct counter's statistics ALU and
//! RAM for its entries, the count of misses in the last part). A table whose actions drive
//! an extern array or hash unit is not split: the array lives in one stage, and a split
//! table's action runs in the stage of whichever part hits.
//!
//! Stage pragmas ([`StagePin`]: `@stage(N[, entries])`, `@pragma stage N [entries]`) place
//! a table, or parts of it, in the stages they name; a pragma naming a stage the chip lacks,
//! one before what the table depends on, or one whose stage has no room, is an error at the
//! pragma.
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
//!   one for misses; a split table's parts each count their own entries);
//! - a hash unit: its output width in hash bits.

use std::collections::BTreeSet;

use pipelines::dataflow;
use pipelines::program::*;
use pipelines::spec::PipeSpec;
use serde::Serialize;

use crate::ast::Span;
use crate::error::{err, CompileError, ErrorKind, Result};

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
    /// Each table's parts, in table order (one for a table in one stage).
    pub tables: Vec<Vec<PartUse>>,
    /// The table dependency graph placement obeyed: the control-flow edges, then every
    /// match and action dependency of a node on an ancestor, node by node in placement
    /// order.
    pub dependencies: Vec<Dependency>,
}

/// What kind of dependency orders two nodes (bf-p4c's table dependency graph groups its
/// edge types into these three).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum DepKind {
    /// The later node's key, condition or extern input reads a field the earlier one may
    /// write (bf-p4c's `IXBAR_READ`): it goes at least one stage after the earlier one's last.
    Match,
    /// The later node's actions read a field the earlier one may write, or both write one
    /// (`ACTION_READ`, `OUTPUT`): also one stage after.
    Action,
    /// Control flow: the later node follows the earlier one (`CONTROL_*`): not in an
    /// earlier stage than its last.
    Control,
}

/// One edge of the table dependency graph, as placement found and used it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Dependency {
    /// The earlier node.
    pub from: Node,
    /// The node that depends on it.
    pub to: Node,
    /// Which kind of dependency (a match one when both a match and an action one hold).
    pub kind: DepKind,
    /// Match and action: the fields `from` may write that `to` reads (or writes).
    pub fields: Vec<FieldId>,
    /// Control: the branches of `from` that lead to `to`.
    pub branches: Vec<Branch>,
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

impl Access {
    /// How a node touching these fields depends on an ancestor touching `earlier`'s, and
    /// through which fields: match when a field the ancestor writes feeds this node's match
    /// (a pair with both kinds is a match edge, as bf-p4c ranks them), else action when
    /// this node's actions read or write one.
    fn depends_on(&self, earlier: &Access) -> Option<(DepKind, Vec<FieldId>)> {
        let w = &earlier.writes;
        let matched: Vec<FieldId> = w.intersection(&self.match_reads).copied().collect();
        if !matched.is_empty() {
            return Some((DepKind::Match, matched));
        }
        let acted: BTreeSet<FieldId> = w
            .intersection(&self.action_reads)
            .chain(w.intersection(&self.writes))
            .copied()
            .collect();
        (!acted.is_empty()).then(|| (DepKind::Action, acted.into_iter().collect()))
    }
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

/// What `entries` entries of table `t` need in one stage: the whole table (`entries` =
/// its size), or one part of it when it is split; `last` says whether the part is the last
/// (the one that holds the direct counter's count of misses).
fn table_need(
    t: &Table,
    entries: u32,
    last: bool,
    c: &ControlProgram,
    layout: &PhvLayout,
    spec: &PipeSpec,
) -> Need {
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
        let size = entries as u64;
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
        let sram = blocks(spec, entries as u64 + last as u64, counter_bits(kind));
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

/// Which way control leaves a node for a successor (bf-p4c's control dependency edges:
/// `CONTROL_DEFAULT_NEXT_TABLE`, `CONTROL_TABLE_HIT`/`MISS`, `CONTROL_ACTION`,
/// `CONTROL_COND_TRUE`/`FALSE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Branch {
    /// The table's one next node, whatever happened.
    Next,
    /// After a hit.
    Hit,
    /// After a miss.
    Miss,
    /// After this action ran (`switch (t.apply().action_run)`).
    Action(ActionId),
    /// After an action the `switch` does not list.
    Default,
    /// The gateway's condition held.
    True,
    /// It did not.
    False,
}

/// The nodes control may go to after `n`, each with the branch that leads there (a node
/// reached by several branches is listed once per branch).
fn successors(c: &ControlProgram, n: Node) -> Vec<(Node, Branch)> {
    let to = |x: &Option<Node>, b: Branch| x.map(|n| (n, b));
    match n {
        Node::Table(t) => match &c.tables[t as usize].next {
            TableNext::Always(x) => to(x, Branch::Next).into_iter().collect(),
            TableNext::HitMiss { hit, miss } => to(hit, Branch::Hit)
                .into_iter()
                .chain(to(miss, Branch::Miss))
                .collect(),
            TableNext::ByAction { cases, default } => cases
                .iter()
                .filter_map(|&(a, x)| to(&x, Branch::Action(a)))
                .chain(to(default, Branch::Default))
                .collect(),
        },
        Node::Gateway(g) => {
            let g = &c.gateways[g as usize];
            to(&g.on_true, Branch::True)
                .into_iter()
                .chain(to(&g.on_false, Branch::False))
                .collect()
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

/// The stages' resources as placement fills them.
#[derive(Clone)]
struct Stages<'s> {
    spec: &'s PipeSpec,
    usage: Vec<StageUsage>,
    /// The containers each stage's actions write (one VLIW slot each).
    containers: Vec<BTreeSet<u16>>,
}

impl<'s> Stages<'s> {
    fn new(spec: &'s PipeSpec) -> Self {
        let n = spec.stages as usize;
        Stages {
            spec,
            usage: vec![StageUsage::default(); n],
            containers: vec![BTreeSet::new(); n],
        }
    }

    fn count(&self) -> usize {
        self.usage.len()
    }

    /// VLIW slots `need` adds to stage `s` (containers its actions write that no action there
    /// writes yet).
    fn new_slots(&self, s: usize, need: &Need) -> u32 {
        need.containers
            .iter()
            .filter(|c| !self.containers[s].contains(c))
            .count() as u32
    }

    fn fits(&self, s: usize, need: &Need) -> bool {
        rows(&self.usage[s], need, self.new_slots(s, need), self.spec)
            .iter()
            .all(|&(_, used, n, have)| used + n <= have)
    }

    fn take(&mut self, s: usize, need: &Need, tcam: bool) {
        let slots = self.new_slots(s, need);
        let u = &mut self.usage[s];
        u.sram_blocks += need.sram;
        u.tcam_blocks += need.tcam;
        u.logical_tables += need.tables;
        u.gateways += need.gateways;
        u.hash_bits += need.hash;
        u.stateful_alus += need.salus;
        u.meter_alus += need.meters;
        u.stats_alus += need.stats;
        self.containers[s].extend(need.containers.iter().copied());
        u.vliw_slots += slots;
        u.items.extend(need.items.iter().cloned());
        u.tcam |= tcam;
    }

    /// The first stage from `earliest` that has room for `need`.
    fn first_fit(&self, earliest: usize, need: &Need) -> Option<usize> {
        (earliest..self.count()).find(|&s| self.fits(s, need))
    }

    /// The stage from `earliest` that comes closest to having room for `need` (the fewest
    /// short resources, then the smallest shortfall), and what it lacks: `N X and stage s, the
    /// closest, has M free (short by K)`.
    fn closest(&self, need: &Need, earliest: usize) -> String {
        let mut best: Option<(usize, u32, usize, &str, u32, u32)> = None;
        for (st, u) in self.usage.iter().enumerate().skip(earliest) {
            let short: Vec<(&str, u32, u32, u32)> =
                rows(u, need, self.new_slots(st, need), self.spec)
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
        let (st, gap, _, name, n, free) = best.unwrap_or((earliest, 0, 0, "resources", 0, 0));
        format!("{n} {name} and stage {st}, the closest, has {free} free (short by {gap})")
    }

    /// Why `need` fits no stage from `earliest` (of `what`, placed after `after` when a
    /// dependency sets `earliest`): the pipe is too short, or what the closest stage lacks.
    fn no_room(&self, need: &Need, earliest: usize, what: &str, after: Option<String>) -> String {
        let stages = self.count();
        let because = after.map_or(String::new(), |a| {
            format!(" (after {a}, which it depends on)")
        });
        if earliest >= stages {
            return format!(
                "{what} must go in stage {earliest} or later{because}, but the pipe has \
                 {stages} stages (short by {} stage(s))",
                earliest + 1 - stages
            );
        }
        let range = if earliest + 1 == stages {
            format!("stage {earliest}")
        } else {
            format!("stages {earliest}..{}", stages - 1)
        };
        format!(
            "{what} does not fit in {range}{because}: it needs {}",
            self.closest(need, earliest)
        )
    }

    /// What stage `s` lacks for `need`: the first short resource, as `N X and the stage has
    /// M free (short by K)`.
    fn shortfall(&self, s: usize, need: &Need) -> String {
        rows(&self.usage[s], need, self.new_slots(s, need), self.spec)
            .iter()
            .find(|&&(_, used, n, have)| used + n > have)
            .map_or(String::new(), |&(name, used, n, have)| {
                let free = have.saturating_sub(used);
                format!(
                    "{n} {name} and the stage has {free} free (short by {})",
                    n - free
                )
            })
    }
}

/// A stage pragma on a table: `@stage(N)`, `@stage(N, entries)` (p4c) or `@pragma stage N
/// [entries]`: the table (or `entries` of it) goes in stage `N`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StagePin {
    /// The stage asked for.
    pub stage: u128,
    /// The entries to place there; `None`: the whole table, or the rest of it when other
    /// pragmas place parts.
    pub entries: Option<u128>,
    /// The pragma as written, for messages.
    pub text: String,
    /// Where it is.
    pub span: Span,
}

/// Where one part of a table went and what it holds (a table in one stage is one part).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct PartUse {
    /// Its stage.
    pub stage: u16,
    /// Entries it holds.
    pub entries: u32,
    /// SRAM blocks (match, action data, direct counter).
    pub sram_blocks: u32,
    /// TCAM blocks.
    pub tcam_blocks: u32,
    /// Hash bits.
    pub hash_bits: u32,
}

/// One table being placed: what it is, what it must come after, and what errors say of it.
struct TableJob<'a> {
    t: &'a Table,
    c: &'a ControlProgram,
    layout: &'a PhvLayout,
    what: String,
    span: Span,
    earliest: usize,
    /// Why `earliest`: the table it depends on, or the node it follows in the control flow.
    because: Option<String>,
    /// The node it depends on, when that sets `earliest`.
    after: Option<String>,
}

impl TableJob<'_> {
    fn need(&self, entries: u32, last: bool, spec: &PipeSpec) -> Need {
        table_need(self.t, entries, last, self.c, self.layout, spec)
    }

    /// Entries one way (an SRAM block deep) or one TCAM row of blocks holds: a part of a split
    /// table holds a multiple of it.
    fn granule(&self, spec: &PipeSpec) -> u32 {
        if self.t.uses_tcam() {
            spec.stage.tcam_depth
        } else {
            spec.stage.sram_depth
        }
        .max(1)
    }

    /// The most of `remaining` entries a part in stage `s` can hold (0: none).
    fn most_in(&self, pipe: &Stages, s: usize, remaining: u32) -> u32 {
        let g = self.granule(pipe.spec);
        let part = |k: u32| (k.saturating_mul(g)).min(remaining);
        let fits = |k: u32| {
            let e = part(k);
            pipe.fits(s, &self.need(e, e == remaining, pipe.spec))
        };
        // The need grows with the entries: search the number of granules.
        let (mut lo, mut hi) = (0u32, remaining.div_ceil(g));
        while lo < hi {
            let mid = lo + (hi - lo).div_ceil(2);
            if fits(mid) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        part(lo)
    }

    /// Why the table cannot be split: the extern array or hash unit one of its actions drives
    /// (it lives in one stage, and a split table's action runs in every part's stage).
    fn unsplittable(&self) -> Option<String> {
        for a in table_actions(self.t) {
            let action = &self.c.actions[a as usize];
            for call in &action.externs {
                let (kind, name) = match *call {
                    ExternCall::Stateful { salu, .. } => {
                        let r = self.c.salus[salu as usize].register;
                        ("register", &self.c.registers[r as usize].name)
                    }
                    ExternCall::Meter { meter, .. } => {
                        ("meter", &self.c.meters[meter as usize].name)
                    }
                    ExternCall::Count { counter, .. } => {
                        ("counter", &self.c.counters[counter as usize].name)
                    }
                    ExternCall::Hash { hash, .. } => {
                        ("hash unit", &self.c.hashes[hash as usize].name)
                    }
                    ExternCall::Random { .. }
                    | ExternCall::QueueDepth { .. }
                    | ExternCall::EmptyQueues { .. } => continue,
                };
                return Some(format!(
                    "its action {} drives {kind} {name}, which lives in one stage, and a split \
                     table's action runs in every part's stage",
                    action.name
                ));
            }
        }
        None
    }

    /// `stages e..l` as far as the pipe goes, with why it starts at `e`.
    fn range(&self, pipe: &Stages) -> String {
        let last = pipe.count().saturating_sub(1);
        let range = if self.earliest >= last {
            format!("stage {last}")
        } else {
            format!("stages {}..{last}", self.earliest)
        };
        match &self.because {
            Some(b) => format!("{range} ({b})"),
            None => range,
        }
    }

    /// Greedy split from stage `from`: in each stage the largest part its free resources
    /// allow, until `remaining` entries are placed. Returns the parts and what is left.
    fn split(
        &self,
        pipe: &mut Stages,
        from: usize,
        mut remaining: u32,
    ) -> (Vec<(usize, u32)>, u32) {
        let mut parts = Vec::new();
        for s in from..pipe.count() {
            if remaining == 0 {
                break;
            }
            let e = self.most_in(pipe, s, remaining);
            if e > 0 {
                remaining -= e;
                pipe.take(
                    s,
                    &self.need(e, remaining == 0, pipe.spec),
                    self.t.uses_tcam(),
                );
                parts.push((s, e));
            }
        }
        (parts, remaining)
    }

    /// Place the table: whole in the first stage with room; else split across stages (bf-p4c's
    /// rule for a table larger than what a stage has left), unless an extern array it drives
    /// forbids it.
    fn place(&self, pipe: &mut Stages) -> Result<Vec<(usize, u32)>> {
        let spec = pipe.spec;
        let whole = self.need(self.t.size, true, spec);
        if let Some(s) = pipe.first_fit(self.earliest, &whole) {
            pipe.take(s, &whole, self.t.uses_tcam());
            return Ok(vec![(s, self.t.size)]);
        }
        let fits_empty = check_fits_a_stage(&whole, spec, &self.what, self.span);
        let can_split = !self.t.keys.is_empty() && self.unsplittable().is_none();
        // Worth splitting when a one-granule part fits a stage at all (else what is short
        // does not grow with the entries, and the whole-table message says what).
        let one = self.need(self.granule(spec).min(self.t.size), false, spec);
        if can_split && check_fits_a_stage(&one, spec, &self.what, self.span).is_ok() {
            let mut trial = pipe.clone();
            let (parts, left) = self.split(&mut trial, self.earliest, self.t.size);
            if left == 0 {
                *pipe = trial;
                return Ok(parts);
            }
            let placed = self.t.size - left;
            if placed == 0 {
                // Not even one way fits: say what the closest stage lacks for it.
                let msg = pipe.no_room(&one, self.earliest, &self.what, self.after.clone());
                return Err(err(ErrorKind::Resource, self.span, msg));
            }
            let more = self.need(self.granule(spec).min(left), true, spec);
            return Err(err(
                ErrorKind::Resource,
                self.span,
                format!(
                    "{} has {} entries, but split across {} it fits at most {placed} of them \
                     (short by {left}): a part of {} more needs {}",
                    self.what,
                    self.t.size,
                    self.range(pipe),
                    self.granule(spec).min(left),
                    trial.closest(&more, self.earliest)
                ),
            ));
        }
        if let Err(e) = fits_empty {
            return Err(match self.unsplittable() {
                Some(why) if !self.t.keys.is_empty() => err(
                    e.kind,
                    e.span,
                    format!(
                        "{}, and it cannot be split across stages: {why} (make the table fit one \
                         stage, or drive the extern from a table of its own)",
                        e.message
                    ),
                ),
                _ => e,
            });
        }
        let msg = pipe.no_room(&whole, self.earliest, &self.what, self.after.clone());
        Err(err(ErrorKind::Resource, self.span, msg))
    }

    /// Place the table as its stage pragmas say: each pinned part in its stage (the one
    /// without entries taking the rest), and entries no pragma places split after the last.
    fn place_pinned(&self, pipe: &mut Stages, pins: &[StagePin]) -> Result<Vec<(usize, u32)>> {
        let spec = pipe.spec;
        let stages = pipe.count();
        let mut pins: Vec<&StagePin> = pins.iter().collect();
        pins.sort_by_key(|p| p.stage);
        let pin_err = |p: &StagePin, why: String| {
            err(ErrorKind::Resource, p.span, format!("`{}`: {why}", p.text))
        };
        for (k, p) in pins.iter().enumerate() {
            if p.stage >= stages as u128 {
                return Err(pin_err(
                    p,
                    format!("the chip has {stages} stages (0..{})", stages - 1),
                ));
            }
            if k > 0 && pins[k - 1].stage == p.stage {
                return Err(pin_err(p, format!("stage {} is named twice", p.stage)));
            }
        }
        let first = pins[0];
        if (first.stage as usize) < self.earliest {
            return Err(pin_err(
                first,
                format!(
                    "{} cannot go in stage {}: {}, so stage {} is its earliest",
                    self.what,
                    first.stage,
                    self.because.as_deref().unwrap_or("what comes before it"),
                    self.earliest
                ),
            ));
        }
        if let Some(p) = pins.iter().filter(|p| p.entries.is_none()).nth(1) {
            return Err(pin_err(
                p,
                "only one stage pragma of a table may leave out its entries (that one takes \
                 the rest)"
                    .into(),
            ));
        }
        let given: u128 = pins.iter().filter_map(|p| p.entries).sum();
        if given > self.t.size as u128 {
            return Err(pin_err(
                pins[pins.len() - 1],
                format!(
                    "the stage pragmas of {} place {given} entries; its size is {}",
                    self.what, self.t.size
                ),
            ));
        }
        let rest = self.t.size - given as u32;
        // Entries no pragma places go into the stages after the last one named.
        let unpinned = pins.iter().all(|p| p.entries.is_some()) && rest > 0;
        if pins.len() > 1 || unpinned {
            if let Some(why) = self.unsplittable() {
                let p = pins[pins.len() - 1];
                return Err(pin_err(
                    p,
                    format!("{} cannot be split across stages: {why}", self.what),
                ));
            }
        }
        let mut parts = Vec::new();
        for (k, p) in pins.iter().enumerate() {
            let s = p.stage as usize;
            let entries = p.entries.map_or(rest, |e| e as u32);
            if entries == 0 {
                return Err(pin_err(
                    p,
                    "a part of a table holds at least one entry".into(),
                ));
            }
            let last = k + 1 == pins.len() && !unpinned;
            let need = self.need(entries, last, spec);
            if pipe.fits(s, &need) {
                pipe.take(s, &need, self.t.uses_tcam());
                parts.push((s, entries));
                continue;
            }
            // The one pragma without entries pins where the table starts: what its stage
            // cannot hold goes on into the stages after it.
            if pins.len() == 1 && p.entries.is_none() && self.unsplittable().is_none() {
                let (split, left) = self.split(pipe, s, entries);
                if left == 0 && split.first().is_some_and(|f| f.0 == s) {
                    return Ok(split);
                }
            }
            return Err(pin_err(
                p,
                format!(
                    "{} does not fit in stage {s} with {entries} entries: it needs {}",
                    self.what,
                    pipe.shortfall(s, &need)
                ),
            ));
        }
        if unpinned {
            let from = parts.last().map_or(self.earliest, |p| p.0 + 1);
            let (more, left) = self.split(pipe, from, rest);
            if left > 0 {
                return Err(pin_err(
                    pins[pins.len() - 1],
                    format!(
                        "the {rest} entries of {} that no stage pragma places do not fit after \
                         stage {} (short by {left})",
                        self.what,
                        from - 1
                    ),
                ));
            }
            parts.extend(more);
        }
        Ok(parts)
    }
}

/// Place the tables and gateways of `c`; sets their `stage` (and a split table's `parts`)
/// fields, the stages of the extern arrays and hash units, and `c.stages`.
/// `table_spans`/`gateway_spans` locate errors; `pins` are each table's stage pragmas.
pub fn place(
    c: &mut ControlProgram,
    layout: &PhvLayout,
    spec: &PipeSpec,
    table_spans: &[Span],
    gateway_spans: &[Span],
    pins: &[Vec<StagePin>],
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
            for (s, _) in successors(c, node_of(i)) {
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
    }
    for (g, gw) in c.gateways.iter().enumerate() {
        access[nt + g]
            .match_reads
            .extend(dataflow::cond_reads(&gw.cond).iter().map(|r| r.field));
    }

    let mut pipe = Stages::new(spec);
    // Each node's first and last stage (a split table's first and last part).
    let mut first = vec![0usize; n];
    let mut last = vec![0usize; n];
    let mut table_parts: Vec<Vec<(usize, u32)>> = vec![Vec::new(); nt];
    let mut ancestors: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); n];
    let mut dependencies = control_dependencies(c, order.iter().map(|&i| node_of(i)));
    for &i in &order {
        let mut anc = BTreeSet::new();
        for &p in &preds[i] {
            anc.insert(p);
            anc.extend(ancestors[p].iter().copied());
        }
        // Control order: not before the last stage of what comes before it.
        let mut earliest = 0;
        let mut before: Option<usize> = None;
        for &p in &preds[i] {
            if last[p] > earliest || before.is_none() {
                earliest = earliest.max(last[p]);
                before = Some(p);
            }
        }
        let mut after: Option<usize> = None;
        for &a in &anc {
            let Some((kind, fields)) = access[i].depends_on(&access[a]) else {
                continue;
            };
            if last[a] + 1 > earliest {
                earliest = last[a] + 1;
                after = Some(a);
            }
            dependencies.push(Dependency {
                from: node_of(a),
                to: node_of(i),
                kind,
                fields,
                branches: Vec::new(),
            });
        }
        ancestors[i] = anc;
        let (what, span) = describe(c, i, nt, table_spans, gateway_spans);
        let name = |j: usize| describe(c, j, nt, table_spans, gateway_spans).0;
        if i < nt {
            let because = match (after, before) {
                (Some(a), _) => Some(format!("it depends on {} in stage {}", name(a), last[a])),
                (None, Some(b)) if last[b] > 0 => {
                    Some(format!("it follows {} in stage {}", name(b), last[b]))
                }
                _ => None,
            };
            let job = TableJob {
                t: &c.tables[i],
                c,
                layout,
                what,
                span,
                earliest,
                because,
                after: after.map(name),
            };
            let parts = match pins.get(i).filter(|p| !p.is_empty()) {
                Some(p) => job.place_pinned(&mut pipe, p)?,
                None => job.place(&mut pipe)?,
            };
            first[i] = parts[0].0;
            last[i] = parts[parts.len() - 1].0;
            table_parts[i] = parts;
        } else {
            let need = Need {
                gateways: 1,
                ..Need::default()
            };
            check_fits_a_stage(&need, spec, &what, span)?;
            let Some(s) = pipe.first_fit(earliest, &need) else {
                let msg = pipe.no_room(&need, earliest, &what, after.map(name));
                return Err(err(ErrorKind::Resource, span, msg));
            };
            pipe.take(s, &need, false);
            first[i] = s;
            last[i] = s;
        }
    }
    let mut tables = Vec::with_capacity(nt);
    for (i, t) in c.tables.iter_mut().enumerate() {
        let parts = &table_parts[i];
        t.stage = first[i] as u16;
        if parts.len() > 1 {
            t.parts = parts
                .iter()
                .map(|&(stage, entries)| TablePart {
                    stage: stage as u16,
                    entries,
                })
                .collect();
        }
        tables.push(parts.clone());
    }
    for (g, gw) in c.gateways.iter_mut().enumerate() {
        gw.stage = first[nt + g] as u16;
    }
    // Externs live beside the table that drives them.
    for (i, &st) in first.iter().enumerate().take(nt) {
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
        last.iter().max().map_or(0, |m| m + 1)
    };
    c.stages = used as u16;
    let mut usage = pipe.usage;
    usage.truncate(used);
    let tables = tables
        .iter()
        .zip(&c.tables)
        .map(|(parts, t)| {
            parts
                .iter()
                .enumerate()
                .map(|(k, &(stage, entries))| {
                    let need = table_need(t, entries, k + 1 == parts.len(), c, layout, spec);
                    PartUse {
                        stage: stage as u16,
                        entries,
                        sram_blocks: need.sram,
                        tcam_blocks: need.tcam,
                        hash_bits: need.hash,
                    }
                })
                .collect()
        })
        .collect();
    Ok(Placement {
        stages: usage,
        tables,
        dependencies,
    })
}

/// The control-flow edges out of `nodes`, in their order: one per successor, with every
/// branch that leads to it.
fn control_dependencies(c: &ControlProgram, nodes: impl Iterator<Item = Node>) -> Vec<Dependency> {
    let mut out: Vec<Dependency> = Vec::new();
    for from in nodes {
        let first = out.len();
        for (to, branch) in successors(c, from) {
            match out[first..].iter_mut().find(|d| d.to == to) {
                Some(d) => d.branches.push(branch),
                None => out.push(Dependency {
                    from,
                    to,
                    kind: DepKind::Control,
                    fields: Vec::new(),
                    branches: vec![branch],
                }),
            }
        }
    }
    out
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
