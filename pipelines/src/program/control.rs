//! The match-action control: tables, actions and gateways placed in stages, linked by
//! next-table pointers, with the extern arrays they drive.

use super::externs::{
    CountKind, CounterArray, ExternCall, HashUnit, MeterArray, RegisterArray, StatefulAlu,
};
use super::layout::FieldId;
use super::operation::{Cond, Op};
use serde::{Deserialize, Serialize};

/// Index into [`ControlProgram::tables`].
pub type TableId = u16;
/// Index into [`ControlProgram::actions`].
pub type ActionId = u16;
/// Index into [`ControlProgram::gateways`].
pub type GatewayId = u16;

/// Tables, gateways and actions of a gress, placed in stages.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ControlProgram {
    /// Number of MAU stages the control occupies; the packet crosses stages `0..stages`.
    pub stages: u16,
    /// All tables.
    pub tables: Vec<Table>,
    /// All actions.
    pub actions: Vec<Action>,
    /// All gateways (if-conditions).
    pub gateways: Vec<Gateway>,
    /// The first node of the control flow; `None` for an empty control.
    pub entry: Option<Node>,
    /// Register arrays.
    #[serde(default)]
    pub registers: Vec<RegisterArray>,
    /// Stateful-ALU programs (`RegisterAction`s), each bound to one register array.
    #[serde(default)]
    pub salus: Vec<StatefulAlu>,
    /// Meter arrays.
    #[serde(default)]
    pub meters: Vec<MeterArray>,
    /// Counter arrays (indexed, not direct).
    #[serde(default)]
    pub counters: Vec<CounterArray>,
    /// Hash units.
    #[serde(default)]
    pub hashes: Vec<HashUnit>,
}

impl ControlProgram {
    /// Whether any action reads the queue depths the TM publishes to ingress
    /// ([`ExternCall::QueueDepth`]): the chip keeps the published copies only then.
    pub fn reads_queue_depths(&self) -> bool {
        self.actions.iter().any(|a| {
            a.externs.iter().any(|x| {
                matches!(
                    x,
                    ExternCall::QueueDepth { .. } | ExternCall::EmptyQueues { .. }
                )
            })
        })
    }
}

/// A node of the control flow: a table or a gateway.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Node {
    /// Apply a table.
    Table(TableId),
    /// Evaluate a gateway.
    Gateway(GatewayId),
}

/// How a key field is matched.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum MatchKind {
    /// Equality, in SRAM (hash lookup).
    Exact,
    /// Value and mask with priority, in TCAM.
    Ternary,
    /// Longest prefix, in TCAM (priority by prefix length).
    Lpm,
    /// Inclusive range, in TCAM.
    Range,
}

impl MatchKind {
    /// Whether this kind of key needs TCAM.
    pub fn uses_tcam(self) -> bool {
        !matches!(self, MatchKind::Exact)
    }
}

/// One key field of a table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableKey {
    /// The field matched.
    pub field: FieldId,
    /// How it is matched.
    pub kind: MatchKind,
    /// Name shown to the control plane (the source expression).
    pub name: String,
    /// Only bits `hi ..= lo` of the field take part (`f[15:8] : exact`).
    #[serde(default)]
    pub slice: Option<(u16, u16)>,
}

/// An action with its parameter values.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActionCall {
    /// The action.
    pub action: ActionId,
    /// Action data, one value per parameter.
    pub args: Vec<u128>,
}

/// Where control goes after a table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum TableNext {
    /// The same next node whatever happened.
    Always(Option<Node>),
    /// Depends on whether an entry matched.
    HitMiss {
        /// After a hit.
        hit: Option<Node>,
        /// After a miss (the default action ran).
        miss: Option<Node>,
    },
    /// Depends on which action ran (`switch (t.apply().action_run)`).
    ByAction {
        /// Per action; actions not listed take `default`.
        cases: Vec<(ActionId, Option<Node>)>,
        /// Otherwise.
        default: Option<Node>,
    },
}

/// A match table placed in a stage, or split across stages in [`TablePart`]s.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Table {
    /// Qualified name, e.g. `Ingress.ipv4_lpm`.
    pub name: String,
    /// The MAU stage holding it; for a split table, its first part's (where a packet's lookup
    /// starts).
    pub stage: u16,
    /// Key fields (empty for a keyless table that always runs its default action).
    pub keys: Vec<TableKey>,
    /// Actions an entry may name.
    pub actions: Vec<ActionId>,
    /// What runs on a miss.
    pub default_action: ActionCall,
    /// Maximum number of entries.
    pub size: u32,
    /// Entries fixed by the program.
    pub const_entries: Vec<Entry>,
    /// Control flow after the table.
    pub next: TableNext,
    /// A direct counter: one count per entry (and one for misses), of this kind.
    #[serde(default)]
    pub direct_counter: Option<CountKind>,
    /// A table split across stages: its parts in stage order, the first in `stage`, their
    /// entries adding up to `size`. Empty for a table in one stage.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<TablePart>,
}

/// A share of a split table's entries in one stage (bf-p4c splits a table larger than a
/// stage's memories into logical tables in consecutive stages, each with its own part of the
/// entries). A packet's lookup runs part after part in stage order and stops at the first
/// hit, whose action runs in that part's stage; a packet that misses every part runs the
/// default action in the last part's stage. The control plane puts an entry into a part
/// with room (`crate::table` says which).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TablePart {
    /// The MAU stage holding the part.
    pub stage: u16,
    /// Entries the part holds.
    pub entries: u32,
}

impl Table {
    /// Whether the table's keys need TCAM.
    pub fn uses_tcam(&self) -> bool {
        self.keys.iter().any(|k| k.kind.uses_tcam())
    }

    /// Its parts in stage order: the [`TablePart`]s of a split table, or the whole table in
    /// `stage`.
    pub fn stage_parts(&self) -> Vec<TablePart> {
        if self.parts.is_empty() {
            vec![TablePart {
                stage: self.stage,
                entries: self.size,
            }]
        } else {
            self.parts.clone()
        }
    }

    /// The stage of its last part: where a miss runs the default action, and the earliest
    /// stage of anything after it in the control flow.
    pub fn last_stage(&self) -> u16 {
        self.parts.last().map_or(self.stage, |p| p.stage)
    }
}

/// A table entry as the pipe stores it (keys already resolved to numbers).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// One match value per key field.
    pub key: Vec<KeyMatch>,
    /// Action and its data.
    pub action: ActionCall,
    /// Priority among overlapping ternary/range entries: higher wins.
    pub priority: u32,
}

/// How one key field of an entry matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum KeyMatch {
    /// Equal to the value.
    Exact(u128),
    /// `field & mask == value & mask`.
    Ternary {
        /// Value.
        value: u128,
        /// Care bits.
        mask: u128,
    },
    /// The top `prefix_len` bits equal those of `value`.
    Lpm {
        /// Value.
        value: u128,
        /// Prefix length in bits.
        prefix_len: u16,
    },
    /// `lo <= field <= hi`.
    Range {
        /// Lowest.
        lo: u128,
        /// Highest.
        hi: u128,
    },
}

/// A value as a person reads it in a message: decimal when small, else hexadecimal.
pub fn value(v: u128) -> String {
    if v < 256 {
        v.to_string()
    } else {
        format!("{v:#x}")
    }
}

impl std::fmt::Display for KeyMatch {
    /// As P4 writes it: `5`, `0xa000000/8`, `0x12 &&& 0xff`, `10..20`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            KeyMatch::Exact(v) => write!(f, "{}", value(v)),
            KeyMatch::Ternary { value: v, mask } => write!(f, "{} &&& {}", value(v), value(mask)),
            KeyMatch::Lpm {
                value: v,
                prefix_len,
            } => write!(f, "{}/{prefix_len}", value(v)),
            KeyMatch::Range { lo, hi } => write!(f, "{}..{}", value(lo), value(hi)),
        }
    }
}

impl KeyMatch {
    /// The match kind this is written for.
    pub fn kind(&self) -> MatchKind {
        match self {
            KeyMatch::Exact(_) => MatchKind::Exact,
            KeyMatch::Ternary { .. } => MatchKind::Ternary,
            KeyMatch::Lpm { .. } => MatchKind::Lpm,
            KeyMatch::Range { .. } => MatchKind::Range,
        }
    }
}

/// An action: VLIW operations applied together (all read the PHV as it was before any of
/// them writes, as the per-container ALUs of a stage do).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Action {
    /// Qualified name, e.g. `Ingress.set_nexthop`.
    pub name: String,
    /// Parameters (action data) with widths.
    pub params: Vec<ActionParam>,
    /// Operations, at most one per destination bit (a concatenation deposits into disjoint
    /// slices of one field).
    pub ops: Vec<Op>,
    /// Extern units the action drives (stateful ALUs, meters, counters, hashes, random).
    /// They read the PHV as it was before the action, like the operations.
    #[serde(default)]
    pub externs: Vec<ExternCall>,
}

/// An action parameter.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActionParam {
    /// Source name.
    pub name: String,
    /// Width in bits.
    pub width: u16,
}

/// A gateway: an if-condition placed in a stage.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Gateway {
    /// The MAU stage evaluating it.
    pub stage: u16,
    /// The condition.
    pub cond: Cond,
    /// Next node when true.
    pub on_true: Option<Node>,
    /// Next node when false.
    pub on_false: Option<Node>,
}
