//! Match tables at run time: the entries a table holds and how a key finds one.
//!
//! An all-exact table is a hash table (as exact match is hash-based in SRAM). An LPM table
//! (one LPM key, alone or beside exact keys, as P4 and bmv2 define it) keeps one hash table
//! per prefix length, searched longest first, which gives the same answer as a TCAM with
//! priority by prefix length: the longest matching prefix wins, and an entry's priority plays
//! no part (P4Runtime and bf-rt give LPM entries none). Any other table is searched in
//! priority order like a TCAM: the highest-priority matching entry wins, and among equal
//! priorities the one inserted first.
//!
//! Every entry occupies a slot (`0..size`) for as long as it is installed. Each slot keeps
//! the entry's hit count and the table its misses (what P4 Insight and BF Runtime show per
//! entry), and a table with a direct counter keeps one count per slot plus one for misses
//! (slot `size`): the lookup already gives the slot, so a hit is counted without searching,
//! and a deleted entry's counts go with it (a modified entry keeps them).
//!
//! A table split across stages ([`crate::program::TablePart`]) keeps its entries in one
//! store, which finds what the hardware's part-by-part lookup finds; what the parts change is
//! the stage whose part holds the hit, where its action runs ([`TableState::part_stage`]).
//! Which part holds an entry is the driver's choice, modelled as bf-drivers makes it:
//! - exact: the parts hold slots `0..e0`, `e0..e0+e1`, ... in stage order, and an entry goes
//!   into the slot freed last, else the first never used: into a part with room, the first
//!   parts filling first;
//! - TCAM (ternary, LPM, range): the first part to match wins on the chip, so the driver keeps
//!   the entries in priority order across the parts, moving them between parts as entries
//!   come and go: the part of an entry is its rank in that order (among equal priorities,
//!   insertion order; for an LPM key, slot order within a prefix length), the first part
//!   holding the highest-priority entries.

use crate::action_data::{ActionShape, ContainerWrites};
use crate::counter::{CounterBank, Counts};
use crate::phv::mask;
use crate::program::{ActionCall, Entry, KeyMatch, MatchKind, Table};
use rustc_hash::FxHashMap;
use smallvec::SmallVec;
use std::fmt;

/// Key values of one lookup, one per key field.
pub type KeyValues = SmallVec<[u128; 4]>;

/// Why a control-plane operation on a table failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TableError {
    /// The table already holds `size` entries.
    Full {
        /// Table name.
        table: String,
        /// Its capacity.
        size: u32,
    },
    /// An entry with the same key (and priority) exists.
    Duplicate {
        /// Table name.
        table: String,
        /// The slot of the entry that holds the key.
        slot: u32,
    },
    /// No entry with that key.
    NotFound {
        /// Table name.
        table: String,
    },
    /// The entry does not fit the table's key or actions.
    Invalid {
        /// Table name.
        table: String,
        /// What is wrong.
        reason: String,
    },
    /// The program's const entry `index` (from 0, in the program's order), refused when the
    /// table was built. Const entries go into the empty table first and in order, so const
    /// entry `k` holds slot `k`: a [`TableError::Duplicate`] inside names the earlier one.
    ConstEntry {
        /// Table name.
        table: String,
        /// Which const entry.
        index: usize,
        /// Why the table refused it.
        error: Box<TableError>,
    },
}

impl TableError {
    /// For a refused const entry, which one (from 0) and why, worded for the program's
    /// author (the compiler places it at the entry; the chip prefixes the table).
    pub fn const_entry(&self) -> Option<(usize, String)> {
        let TableError::ConstEntry { index, error, .. } = self else {
            return None;
        };
        let n = index + 1;
        Some((
            *index,
            match error.as_ref() {
                TableError::Duplicate { slot, .. } => format!(
                    "const entry {n} has the same key as const entry {}: a table holds one \
                     entry per key (entries of a ternary or range table also differ by their \
                     priority)",
                    slot + 1
                ),
                TableError::Invalid { reason, .. } => format!("const entry {n}: {reason}"),
                other => format!("const entry {n}: {other}"),
            },
        ))
    }
}

impl fmt::Display for TableError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TableError::Full { table, size } => {
                write!(f, "table {table} is full ({size} entries)")
            }
            TableError::Duplicate { table, .. } => {
                write!(f, "table {table} already has an entry with this key")
            }
            TableError::NotFound { table } => write!(f, "table {table} has no entry with this key"),
            TableError::Invalid { table, reason } => write!(f, "table {table}: {reason}"),
            TableError::ConstEntry { table, .. } => {
                let (_, why) = self.const_entry().unwrap_or_default();
                write!(f, "table {table}: {why}")
            }
        }
    }
}

impl std::error::Error for TableError {}

/// An installed entry: its action, its slot, and its action data decoded into the
/// container writes its action's `Set`s make ([`crate::action_data`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Installed {
    /// The action and its action data.
    pub call: ActionCall,
    /// The slot it occupies.
    pub slot: u32,
    /// `call`'s writes of action data and constants.
    pub writes: ContainerWrites,
}

/// Hash tables by prefix length, longest first: each level's prefix length, its mask (computed
/// once, not per lookup), and its entries by key with the LPM key's value masked.
type Levels<K> = Vec<(u16, u128, FxHashMap<K, Installed>)>;

/// An entry of a table searched in priority order.
struct Ranked {
    key: Vec<KeyMatch>,
    priority: u32,
    entry: Installed,
}

enum Store {
    Exact(FxHashMap<KeyValues, Installed>),
    /// One exact key: its value alone is the map's key (no key list to build, hash and
    /// compare per lookup).
    ExactOne(FxHashMap<u128, Installed>),
    /// One LPM key alone: the masked value is the map's key.
    Lpm(Levels<u128>),
    /// One LPM key (number `lpm`) beside exact keys: every key's value, the LPM one masked.
    LpmExact {
        lpm: usize,
        levels: Levels<KeyValues>,
    },
    /// Entries by descending priority, insertion order among equals (`list`), and each
    /// entry's slot by its key and priority (`slots`: a duplicate found without a search of
    /// the list, which made installing n entries take n² comparisons).
    Ordered {
        list: Vec<Ranked>,
        slots: FxHashMap<(Vec<KeyMatch>, u32), u32>,
    },
}

/// A table's entries.
pub struct TableState {
    name: String,
    widths: SmallVec<[u16; 4]>,
    kinds: SmallVec<[MatchKind; 4]>,
    /// The key fields' names (for errors).
    key_names: Vec<String>,
    /// The actions entries may call, with what installing one needs to know of them.
    actions: Vec<(u16, ActionShape)>,
    /// The default action (the program's: the control plane does not change it), and its
    /// writes of action data and constants.
    default: (ActionCall, ContainerWrites),
    size: u32,
    len: u32,
    store: Store,
    /// Slots freed by deletes, reused first.
    free_slots: Vec<u32>,
    /// Slots never used yet start here.
    next_slot: u32,
    /// Direct counter: one per slot, then one for misses.
    direct: Option<CounterBank>,
    /// Packets that hit each slot used so far (`next_slot` of them: a table sized for
    /// millions of entries that holds a few keeps a few counts).
    hits: Vec<u64>,
    /// Packets that hit no entry (the default action ran).
    misses: u64,
    /// The parts in stage order: (stage, the position one past its last entry), positions
    /// being slots for an exact table and ranks for a TCAM one (see the module comment).
    parts: SmallVec<[(u16, u32); 1]>,
}

/// An installed entry as the control plane reads it back ([`TableState::entries`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntryView<'a> {
    /// The slot it occupies (its handle while installed).
    pub slot: u32,
    /// One match per key field (an exact value in an LPM table reads as a full-length
    /// prefix, as it matches).
    pub key: Vec<KeyMatch>,
    /// Its priority (ternary and range tables; 0 otherwise).
    pub priority: u32,
    /// Its action and action data.
    pub call: &'a ActionCall,
    /// Packets that hit it since it was installed.
    pub hits: u64,
    /// Its direct counter, if the table has one.
    pub direct: Option<Counts>,
}

fn matches(k: &KeyMatch, v: u128, width: u16) -> bool {
    match *k {
        KeyMatch::Exact(x) => v == x,
        KeyMatch::Ternary { value, mask } => v & mask == value & mask,
        KeyMatch::Lpm { value, prefix_len } => {
            let m = prefix_mask(prefix_len, width);
            v & m == value & m
        }
        KeyMatch::Range { lo, hi } => lo <= v && v <= hi,
    }
}

/// Mask of the top `len` bits of a `width`-bit value: what an LPM entry's value is kept
/// under, and so what names it.
fn prefix_mask(len: u16, width: u16) -> u128 {
    mask(width as u32) & !mask((width - len.min(width)) as u32)
}

impl TableState {
    /// An empty table shaped like `t`, whose actions are `shapes[a]` (indexed like the
    /// program's actions). The program's const entries are inserted.
    pub fn new(
        t: &Table,
        widths: &[u16],
        shapes: &[ActionShape],
    ) -> Result<TableState, TableError> {
        let kinds: SmallVec<[MatchKind; 4]> = t.keys.iter().map(|k| k.kind).collect();
        let store = if kinds.as_slice() == [MatchKind::Exact] {
            Store::ExactOne(FxHashMap::default())
        } else if kinds.iter().all(|k| *k == MatchKind::Exact) {
            Store::Exact(FxHashMap::default())
        } else if kinds.as_slice() == [MatchKind::Lpm] {
            Store::Lpm(Vec::new())
        } else if let Some(lpm) = lpm_among_exact(&kinds) {
            Store::LpmExact {
                lpm,
                levels: Vec::new(),
            }
        } else {
            Store::Ordered {
                list: Vec::new(),
                slots: FxHashMap::default(),
            }
        };
        let mut s = TableState {
            name: t.name.clone(),
            widths: widths.into(),
            kinds,
            key_names: t.keys.iter().map(|k| k.name.clone()).collect(),
            actions: t
                .actions
                .iter()
                .map(|&a| (a, shapes[a as usize].clone()))
                .collect(),
            default: (
                t.default_action.clone(),
                shapes
                    .get(t.default_action.action as usize)
                    .map(|s| s.sets.decode(&t.default_action.args))
                    .unwrap_or_default(),
            ),
            size: t.size,
            len: 0,
            store,
            free_slots: Vec::new(),
            next_slot: 0,
            direct: t
                .direct_counter
                .map(|k| CounterBank::new(t.size as usize + 1, k)),
            hits: Vec::new(),
            misses: 0,
            parts: t
                .stage_parts()
                .iter()
                .scan(0u32, |end, p| {
                    *end = end.saturating_add(p.entries);
                    Some((p.stage, *end))
                })
                .collect(),
        };
        s.check_action(&t.default_action, true)?;
        for (index, e) in t.const_entries.iter().enumerate() {
            s.insert(e.clone())
                .map_err(|error| TableError::ConstEntry {
                    table: t.name.clone(),
                    index,
                    error: Box::new(error),
                })?;
        }
        Ok(s)
    }

    /// Table name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Entries held.
    pub fn len(&self) -> u32 {
        self.len
    }

    /// Whether the table holds no entries.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn invalid(&self, reason: String) -> TableError {
        TableError::Invalid {
            table: self.name.clone(),
            reason,
        }
    }

    fn check_action(&self, call: &ActionCall, default: bool) -> Result<(), TableError> {
        let listed = self.actions.iter().find(|(a, _)| *a == call.action);
        match listed {
            None if !default => {
                Err(self.invalid(format!("action #{} is not in its action list", call.action)))
            }
            Some((_, shape)) if shape.params.len() != call.args.len() => {
                Err(self.invalid(format!(
                    "action `{}` takes {} arguments, the entry gives {}",
                    shape.name,
                    shape.params.len(),
                    call.args.len()
                )))
            }
            Some((_, shape)) => {
                for (p, &v) in shape.params.iter().zip(&call.args) {
                    if v > mask(p.width as u32) {
                        return Err(self.invalid(format!(
                            "action `{}`: argument `{}` is bit<{}>, and {v} does not fit",
                            shape.name, p.name, p.width
                        )));
                    }
                }
                Ok(())
            }
            None => Ok(()),
        }
    }

    /// `call`'s action data decoded (`call` is checked: its action is listed).
    fn writes_of(&self, call: &ActionCall) -> ContainerWrites {
        self.actions
            .iter()
            .find(|(a, _)| *a == call.action)
            .map(|(_, shape)| shape.sets.decode(&call.args))
            .unwrap_or_default()
    }

    /// The action a miss runs, and its writes of action data and constants.
    #[inline]
    pub fn default_entry(&self) -> (&ActionCall, &ContainerWrites) {
        (&self.default.0, &self.default.1)
    }

    fn check_entry(&self, e: &Entry) -> Result<(), TableError> {
        if e.key.len() != self.kinds.len() {
            return Err(self.invalid(format!(
                "the key has {} fields, the entry gives {}",
                self.kinds.len(),
                e.key.len()
            )));
        }
        for ((k, (&kind, &w)), name) in e
            .key
            .iter()
            .zip(self.kinds.iter().zip(&self.widths))
            .zip(&self.key_names)
        {
            let bad =
                |why: String| self.invalid(format!("key `{name}` (bit<{w}>, {kind:?}): {why}"));
            if k.kind() != kind {
                return Err(bad(format!("the entry's match is {:?} ({k})", k.kind())));
            }
            let m = mask(w as u32);
            let too_wide = match *k {
                KeyMatch::Exact(v) => v > m,
                KeyMatch::Lpm { value, prefix_len } => {
                    if prefix_len > w {
                        return Err(bad(format!(
                            "prefix length {prefix_len} is longer than the key"
                        )));
                    }
                    value > m
                }
                KeyMatch::Ternary { value, mask } => value > m || mask > m,
                KeyMatch::Range { lo, hi } => {
                    if lo > hi {
                        return Err(bad(format!(
                            "the range {lo}..{hi} runs backwards: its low end is above its \
                             high end"
                        )));
                    }
                    hi > m
                }
            };
            if too_wide {
                return Err(bad(format!("{k} does not fit")));
            }
        }
        self.check_action(&e.action, false)
    }

    /// Maximum number of entries.
    pub fn size(&self) -> u32 {
        self.size
    }

    /// Add an entry; returns the slot it occupies. A full table refuses it.
    pub fn insert(&mut self, e: Entry) -> Result<u32, TableError> {
        self.check_entry(&e)?;
        if self.len >= self.size {
            return Err(TableError::Full {
                table: self.name.clone(),
                size: self.size,
            });
        }
        let dup = |slot: u32| TableError::Duplicate {
            table: self.name.clone(),
            slot,
        };
        let slot = self.free_slots.last().copied().unwrap_or(self.next_slot);
        let Entry {
            key,
            action,
            priority,
        } = e;
        let entry = Installed {
            writes: self.writes_of(&action),
            call: action,
            slot,
        };
        match &mut self.store {
            Store::Exact(map) => {
                let key: KeyValues = key.iter().map(exact_value).collect();
                if let Some(held) = map.get(&key) {
                    return Err(dup(held.slot));
                }
                map.insert(key, entry);
            }
            Store::ExactOne(map) => {
                let key = exact_value(&key[0]);
                if let Some(held) = map.get(&key) {
                    return Err(dup(held.slot));
                }
                map.insert(key, entry);
            }
            Store::Lpm(levels) => {
                let (value, len) = lpm_parts(&key[0], self.widths[0]);
                let mask = prefix_mask(len, self.widths[0]);
                let level = level_for(levels, len, mask);
                if let Some(held) = level.get(&(value & mask)) {
                    return Err(dup(held.slot));
                }
                level.insert(value & mask, entry);
            }
            Store::LpmExact { lpm, levels } => {
                let (len, k) = lpm_exact_key(&key, *lpm, &self.widths).expect("checked entry");
                let level = level_for(levels, len, prefix_mask(len, self.widths[*lpm]));
                if let Some(held) = level.get(&k) {
                    return Err(dup(held.slot));
                }
                level.insert(k, entry);
            }
            Store::Ordered { list, slots } => {
                match slots.entry((key.clone(), priority)) {
                    std::collections::hash_map::Entry::Occupied(held) => {
                        return Err(dup(*held.get()));
                    }
                    std::collections::hash_map::Entry::Vacant(v) => {
                        v.insert(slot);
                    }
                }
                // Descending priority: the first entry of a lower one, found by halving.
                let pos = list.partition_point(|x| x.priority >= priority);
                list.insert(
                    pos,
                    Ranked {
                        key,
                        priority,
                        entry,
                    },
                );
            }
        }
        if self.free_slots.pop().is_none() {
            self.next_slot += 1;
            self.hits.push(0);
        }
        self.hits[slot as usize] = 0;
        if let Some(d) = &mut self.direct {
            d.write(slot as usize, Counts::default());
        }
        self.len += 1;
        Ok(slot)
    }

    /// Replace the action of the entry with this key (and priority).
    pub fn modify(
        &mut self,
        key: &[KeyMatch],
        priority: u32,
        action: ActionCall,
    ) -> Result<(), TableError> {
        self.check_action(&action, false)?;
        let writes = self.writes_of(&action);
        let entry = self.find_mut(key, priority)?;
        entry.call = action;
        entry.writes = writes;
        Ok(())
    }

    /// The slot of the entry with this key (and priority).
    pub fn slot_of(&self, key: &[KeyMatch], priority: u32) -> Result<u32, TableError> {
        let missing = || TableError::NotFound {
            table: self.name.clone(),
        };
        let w0 = self.widths.first().copied().unwrap_or(0);
        let found = match &self.store {
            Store::Exact(map) => {
                let k: KeyValues = key.iter().map(exact_value).collect();
                map.get(&k).map(|e| e.slot)
            }
            Store::ExactOne(map) => match key {
                [k] => map.get(&exact_value(k)).map(|e| e.slot),
                _ => None,
            },
            Store::Lpm(levels) => {
                let Some(first) = key.first() else {
                    return Err(missing());
                };
                let (value, len) = lpm_parts(first, w0);
                let value = value & prefix_mask(len, w0);
                levels
                    .iter()
                    .find(|(l, _, _)| *l == len)
                    .and_then(|(_, _, m)| m.get(&value))
                    .map(|e| e.slot)
            }
            Store::LpmExact { lpm, levels } => {
                lpm_exact_key(key, *lpm, &self.widths).and_then(|(len, k)| {
                    let (_, _, m) = levels.iter().find(|(l, _, _)| *l == len)?;
                    m.get(&k).map(|e| e.slot)
                })
            }
            Store::Ordered { slots, .. } => slots.get(&(key.to_vec(), priority)).copied(),
        };
        found.ok_or_else(missing)
    }

    /// The direct counter of the entry with this key (and priority); `Ok(None)` if the
    /// table has no direct counter.
    pub fn direct_count(
        &self,
        key: &[KeyMatch],
        priority: u32,
    ) -> Result<Option<Counts>, TableError> {
        let slot = self.slot_of(key, priority)?;
        Ok(self.direct.as_ref().map(|d| d.read(slot as usize)))
    }

    /// The direct counter of misses, if the table has a direct counter.
    pub fn direct_miss_count(&self) -> Option<Counts> {
        self.direct.as_ref().map(|d| d.read(self.size as usize))
    }

    /// Count a packet of `bytes` bytes that hit `slot` (or missed: `None`) in the table's
    /// direct statistics: the entry's hit count (or the table's misses), and the direct
    /// counter if the table has one.
    #[inline]
    pub fn count_direct(&mut self, slot: Option<u32>, bytes: u32) {
        match slot {
            Some(s) => self.hits[s as usize] += 1,
            None => self.misses += 1,
        }
        if let Some(d) = &mut self.direct {
            d.count(slot.unwrap_or(self.size) as usize, bytes);
        }
    }

    /// Packets that hit no entry.
    pub fn misses(&self) -> u64 {
        self.misses
    }

    /// The key fields' names (as the program writes them) and widths.
    pub fn key_fields(&self) -> impl Iterator<Item = (&str, u16)> {
        self.key_names
            .iter()
            .map(String::as_str)
            .zip(self.widths.iter().copied())
    }

    /// The name and parameters of action `a` (one of the table's actions, or its default).
    pub fn action_shape(&self, a: u16) -> Option<&ActionShape> {
        self.actions
            .iter()
            .find(|(id, _)| *id == a)
            .map(|(_, shape)| shape)
    }

    fn view<'s>(&'s self, key: Vec<KeyMatch>, priority: u32, e: &'s Installed) -> EntryView<'s> {
        EntryView {
            slot: e.slot,
            key,
            priority,
            call: &e.call,
            hits: self.hits[e.slot as usize],
            direct: self.direct.as_ref().map(|d| d.read(e.slot as usize)),
        }
    }

    /// Every installed entry, by slot.
    pub fn entries(&self) -> Vec<EntryView<'_>> {
        let view = |key, priority, e| self.view(key, priority, e);
        let mut v: Vec<EntryView> = match &self.store {
            Store::Exact(map) => map
                .iter()
                .map(|(k, e)| view(k.iter().map(|&x| KeyMatch::Exact(x)).collect(), 0, e))
                .collect(),
            Store::ExactOne(map) => map
                .iter()
                .map(|(&k, e)| view(vec![KeyMatch::Exact(k)], 0, e))
                .collect(),
            Store::Lpm(levels) => levels
                .iter()
                .flat_map(|(len, _, m)| {
                    m.iter().map(move |(&value, e)| {
                        let key = KeyMatch::Lpm {
                            value,
                            prefix_len: *len,
                        };
                        view(vec![key], 0, e)
                    })
                })
                .collect(),
            Store::LpmExact { lpm, levels } => levels
                .iter()
                .flat_map(|(len, _, m)| {
                    m.iter().map(move |(k, e)| {
                        let key = k
                            .iter()
                            .enumerate()
                            .map(|(i, &value)| match i == *lpm {
                                true => KeyMatch::Lpm {
                                    value,
                                    prefix_len: *len,
                                },
                                false => KeyMatch::Exact(value),
                            })
                            .collect();
                        view(key, 0, e)
                    })
                })
                .collect(),
            Store::Ordered { list, .. } => list
                .iter()
                .map(|r| view(r.key.clone(), r.priority, &r.entry))
                .collect(),
        };
        v.sort_by_key(|e| e.slot);
        v
    }

    /// Remove the entry with this key (and priority).
    pub fn delete(&mut self, key: &[KeyMatch], priority: u32) -> Result<(), TableError> {
        let missing = TableError::NotFound {
            table: self.name.clone(),
        };
        let removed: Option<u32> = match &mut self.store {
            Store::Exact(map) => {
                let k: KeyValues = key.iter().map(exact_value).collect();
                map.remove(&k).map(|e| e.slot)
            }
            Store::ExactOne(map) => match key {
                [k] => map.remove(&exact_value(k)).map(|e| e.slot),
                _ => None,
            },
            Store::Lpm(levels) => {
                let Some(first) = key.first() else {
                    return Err(missing);
                };
                let (value, len) = lpm_parts(first, self.widths[0]);
                let value = value & prefix_mask(len, self.widths[0]);
                levels
                    .iter_mut()
                    .find(|(l, _, _)| *l == len)
                    .and_then(|(_, _, m)| m.remove(&value).map(|e| e.slot))
            }
            Store::LpmExact { lpm, levels } => {
                lpm_exact_key(key, *lpm, &self.widths).and_then(|(len, k)| {
                    let (_, _, m) = levels.iter_mut().find(|(l, _, _)| *l == len)?;
                    m.remove(&k).map(|e| e.slot)
                })
            }
            Store::Ordered { list, slots } => {
                slots.remove(&(key.to_vec(), priority)).inspect(|&slot| {
                    list.retain(|x| x.entry.slot != slot);
                })
            }
        };
        let Some(slot) = removed else {
            return Err(missing);
        };
        self.free_slots.push(slot);
        self.len -= 1;
        Ok(())
    }

    fn find_mut(&mut self, key: &[KeyMatch], priority: u32) -> Result<&mut Installed, TableError> {
        let missing = TableError::NotFound {
            table: self.name.clone(),
        };
        let w0 = self.widths.first().copied().unwrap_or(0);
        let found = match &mut self.store {
            Store::Exact(map) => {
                let k: KeyValues = key.iter().map(exact_value).collect();
                map.get_mut(&k)
            }
            Store::ExactOne(map) => match key {
                [k] => map.get_mut(&exact_value(k)),
                _ => None,
            },
            Store::Lpm(levels) => {
                let Some(first) = key.first() else {
                    return Err(missing);
                };
                let (value, len) = lpm_parts(first, w0);
                let value = value & prefix_mask(len, w0);
                levels
                    .iter_mut()
                    .find(|(l, _, _)| *l == len)
                    .and_then(|(_, _, m)| m.get_mut(&value))
            }
            Store::LpmExact { lpm, levels } => {
                lpm_exact_key(key, *lpm, &self.widths).and_then(|(len, k)| {
                    let (_, _, m) = levels.iter_mut().find(|(l, _, _)| *l == len)?;
                    m.get_mut(&k)
                })
            }
            Store::Ordered { list, .. } => list
                .iter_mut()
                .find(|x| x.key == key && x.priority == priority)
                .map(|x| &mut x.entry),
        };
        found.ok_or(missing)
    }

    /// The stage of the part holding `e`, the entry [`TableState::lookup_entry`] found for
    /// `key`: where its action runs. A table in one stage has one part.
    pub fn part_stage(&self, key: &[u128], e: &Installed) -> u16 {
        let [(stage, _)] = self.parts.as_slice() else {
            let position = match &self.store {
                Store::Exact(_) | Store::ExactOne(_) => e.slot,
                Store::Ordered { list, .. } => list
                    .iter()
                    .position(|x| std::ptr::eq(&x.entry, e))
                    .unwrap_or(0) as u32,
                Store::Lpm(levels) => self.lpm_rank(levels, |mask| key[0] & mask, e),
                Store::LpmExact { lpm, levels } => self.lpm_rank(
                    levels,
                    |mask| {
                        let mut k: KeyValues = key.into();
                        k[*lpm] &= mask;
                        k
                    },
                    e,
                ),
            };
            return self.stage_at(position);
        };
        *stage
    }

    /// The stage of the part holding position `p`.
    fn stage_at(&self, p: u32) -> u16 {
        let part = self.parts.iter().find(|&&(_, end)| p < end);
        part.or(self.parts.last()).map_or(0, |&(stage, _)| stage)
    }

    /// The rank of `e` in an LPM TCAM's priority order: every entry with a longer prefix,
    /// then the entries of its own length in slot order. `masked(mask)` is the looked-up key
    /// as a level with that prefix mask stores it.
    fn lpm_rank<K: std::hash::Hash + Eq>(
        &self,
        levels: &Levels<K>,
        masked: impl Fn(u128) -> K,
        e: &Installed,
    ) -> u32 {
        let mut before = 0u32;
        for (_, mask, m) in levels {
            let n = m.len() as u32;
            if m.get(&masked(*mask)).is_some_and(|x| std::ptr::eq(x, e)) {
                // Counting the level's earlier slots matters only if a part ends inside it.
                if self.stage_at(before) == self.stage_at(before + n - 1) {
                    return before;
                }
                return before + m.values().filter(|x| x.slot < e.slot).count() as u32;
            }
            before += n;
        }
        before
    }

    /// The action of the entry matching `key`, if any.
    #[inline]
    pub fn lookup(&self, key: &[u128]) -> Option<&ActionCall> {
        self.lookup_entry(key).map(|e| &e.call)
    }

    /// The entry matching `key`, if any. Inlined into each caller: the traced walk is a
    /// second one, which would otherwise keep it out of line in the untraced walk.
    #[inline(always)]
    pub fn lookup_entry(&self, key: &[u128]) -> Option<&Installed> {
        match &self.store {
            Store::Exact(map) => map.get(key),
            Store::ExactOne(map) => map.get(&key[0]),
            Store::Lpm(levels) => levels
                .iter()
                .find_map(|(_, mask, m)| m.get(&(key[0] & mask))),
            Store::LpmExact { lpm, levels } => {
                // The key as given, its LPM value masked to each level in turn (inline: a
                // table has few keys, so this allocates nothing).
                let mut k: KeyValues = key.into();
                levels.iter().find_map(|(_, mask, m)| {
                    k[*lpm] = key[*lpm] & mask;
                    m.get(&k)
                })
            }
            Store::Ordered { list, .. } => first_match(list, key, &self.widths).map(|e| &e.entry),
        }
    }

    /// The key and priority of the entry matching `key`, as it was installed (an exact
    /// entry's key is the looked-up value; an LPM entry's, its prefix): what a trace shows
    /// of the entry a packet hit. Not on the per-packet path.
    pub fn matched_key(&self, key: &[u128]) -> Option<(Vec<KeyMatch>, u32)> {
        let exact = || key.iter().map(|&v| KeyMatch::Exact(v)).collect();
        match &self.store {
            Store::Exact(map) => map.contains_key(key).then(|| (exact(), 0)),
            Store::ExactOne(map) => map.contains_key(&key[0]).then(|| (exact(), 0)),
            Store::Lpm(levels) => levels
                .iter()
                .find(|(_, mask, m)| m.contains_key(&(key[0] & mask)))
                .map(|&(prefix_len, mask, _)| {
                    let value = key[0] & mask;
                    (vec![KeyMatch::Lpm { value, prefix_len }], 0)
                }),
            Store::LpmExact { lpm, levels } => {
                levels.iter().find_map(|&(prefix_len, mask, ref m)| {
                    let mut k: KeyValues = key.into();
                    k[*lpm] = key[*lpm] & mask;
                    m.contains_key(&k).then(|| {
                        let key = k
                            .iter()
                            .enumerate()
                            .map(|(i, &value)| match i == *lpm {
                                true => KeyMatch::Lpm { value, prefix_len },
                                false => KeyMatch::Exact(value),
                            })
                            .collect();
                        (key, 0)
                    })
                })
            }
            Store::Ordered { list, .. } => {
                first_match(list, key, &self.widths).map(|e| (e.key.clone(), e.priority))
            }
        }
    }
}

/// The first entry of a list in priority order that matches `key` (keys of `widths` bits).
#[inline]
fn first_match<'a>(list: &'a [Ranked], key: &[u128], widths: &[u16]) -> Option<&'a Ranked> {
    list.iter().find(|e| {
        e.key
            .iter()
            .zip(key)
            .zip(widths)
            .all(|((k, &v), &w)| matches(k, v, w))
    })
}

fn exact_value(k: &KeyMatch) -> u128 {
    match *k {
        KeyMatch::Exact(v) => v,
        KeyMatch::Ternary { value, .. } => value,
        KeyMatch::Lpm { value, .. } => value,
        KeyMatch::Range { lo, .. } => lo,
    }
}

/// The position of the LPM key of a table whose other keys (at least one) are all exact: an
/// LPM table with exact keys beside.
fn lpm_among_exact(kinds: &[MatchKind]) -> Option<usize> {
    let lpm = kinds.iter().position(|k| *k == MatchKind::Lpm)?;
    let others_exact = kinds
        .iter()
        .enumerate()
        .all(|(i, k)| i == lpm || *k == MatchKind::Exact);
    (kinds.len() > 1 && others_exact).then_some(lpm)
}

/// An entry key of an [`Store::LpmExact`] table as its level stores it: the prefix length,
/// and every key's value with the LPM one masked to it. `None` for a key of another shape.
fn lpm_exact_key(key: &[KeyMatch], lpm: usize, widths: &[u16]) -> Option<(u16, KeyValues)> {
    if key.len() != widths.len() {
        return None;
    }
    let (value, len) = lpm_parts(key.get(lpm)?, widths[lpm]);
    let mut k: KeyValues = key.iter().map(exact_value).collect();
    k[lpm] = value & prefix_mask(len, widths[lpm]);
    Some((len, k))
}

/// The level of prefix length `len` (mask `mask`), made in its place (longest first) if the
/// table has none yet.
fn level_for<K>(levels: &mut Levels<K>, len: u16, mask: u128) -> &mut FxHashMap<K, Installed> {
    let p = levels
        .iter()
        .position(|(l, _, _)| *l <= len)
        .unwrap_or(levels.len());
    if levels.get(p).is_none_or(|(l, _, _)| *l != len) {
        levels.insert(p, (len, mask, FxHashMap::default()));
    }
    &mut levels[p].2
}

/// An LPM key's value and prefix length; an exact value is a full-length prefix.
fn lpm_parts(k: &KeyMatch, width: u16) -> (u128, u16) {
    match *k {
        KeyMatch::Lpm { value, prefix_len } => (value, prefix_len),
        other => (exact_value(&other), width),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::{TableKey, TableNext};

    fn table(kinds: &[MatchKind], size: u32) -> Table {
        Table {
            name: "t".into(),
            stage: 0,
            keys: kinds
                .iter()
                .map(|&kind| TableKey {
                    field: 0,
                    kind,
                    name: "k".into(),
                    slice: None,
                })
                .collect(),
            actions: vec![0, 1],
            default_action: ActionCall {
                action: 1,
                args: vec![],
            },
            size,
            const_entries: vec![],
            next: TableNext::Always(None),
            direct_counter: None,
            parts: Vec::new(),
        }
    }

    /// Actions taking these numbers of parameters, with no `Set`s of action data.
    fn shapes(params: &[usize]) -> Vec<ActionShape> {
        params
            .iter()
            .map(|&params| ActionShape {
                params: (0..params)
                    .map(|i| crate::program::ActionParam {
                        name: format!("p{i}"),
                        width: 32,
                    })
                    .collect(),
                ..ActionShape::default()
            })
            .collect()
    }

    fn call(a: u16, args: &[u128]) -> ActionCall {
        ActionCall {
            action: a,
            args: args.to_vec(),
        }
    }

    #[test]
    fn lpm_prefers_the_longest_prefix() {
        let mut t = TableState::new(&table(&[MatchKind::Lpm], 8), &[32], &shapes(&[1, 0])).unwrap();
        let lpm = |v: u32, l| Entry {
            key: vec![KeyMatch::Lpm {
                value: v as u128,
                prefix_len: l,
            }],
            action: call(0, &[l as u128]),
            priority: 0,
        };
        t.insert(lpm(0x0a00_0000, 8)).unwrap();
        t.insert(lpm(0x0a01_0000, 16)).unwrap();
        t.insert(lpm(0, 0)).unwrap();
        assert_eq!(t.lookup(&[0x0a01_0203]).unwrap().args, vec![16]);
        assert_eq!(t.lookup(&[0x0a02_0203]).unwrap().args, vec![8]);
        assert_eq!(t.lookup(&[0x0b00_0000]).unwrap().args, vec![0]);
        t.delete(
            &[KeyMatch::Lpm {
                value: 0,
                prefix_len: 0,
            }],
            0,
        )
        .unwrap();
        assert!(t.lookup(&[0x0b00_0000]).is_none());
    }

    /// An LPM table in P4's sense (one `lpm` key beside `exact` ones, as dc_router's
    /// `ipv4_lpm`) orders by prefix length, whatever the install order and priorities.
    #[test]
    fn lpm_beside_exact_keys_prefers_the_longest_prefix() {
        let kinds = [MatchKind::Exact, MatchKind::Lpm];
        let mut t = TableState::new(&table(&kinds, 8), &[8, 32], &shapes(&[1, 0])).unwrap();
        let entry = |vrf, v: u32, l| Entry {
            key: vec![
                KeyMatch::Exact(vrf),
                KeyMatch::Lpm {
                    value: v as u128,
                    prefix_len: l,
                },
            ],
            action: call(0, &[l as u128]),
            priority: 0,
        };
        t.insert(entry(1, 0x0a00_0000, 8)).unwrap();
        t.insert(entry(1, 0x0a01_0000, 16)).unwrap();
        t.insert(entry(2, 0x0a01_0200, 24)).unwrap();
        assert_eq!(t.lookup(&[1, 0x0a01_0203]).unwrap().args, vec![16]);
        assert_eq!(t.lookup(&[1, 0x0a02_0203]).unwrap().args, vec![8]);
        // The /24 is another VRF's.
        assert_eq!(t.lookup(&[2, 0x0a01_0203]).unwrap().args, vec![24]);
        assert!(t.lookup(&[2, 0x0a02_0203]).is_none());
        // Priority plays no part: the key alone names an entry.
        assert_eq!(
            t.insert(Entry {
                priority: 7,
                ..entry(1, 0x0a00_0000, 8)
            }),
            Err(TableError::Duplicate {
                table: "t".into(),
                slot: 0
            })
        );
        let key16 = entry(1, 0x0a01_0000, 16).key;
        t.modify(&key16, 3, call(0, &[99])).unwrap();
        assert_eq!(t.lookup(&[1, 0x0a01_0203]).unwrap().args, vec![99]);
        t.delete(&key16, 0).unwrap();
        assert_eq!(t.lookup(&[1, 0x0a01_0203]).unwrap().args, vec![8]);
        // A key of the wrong shape names no entry.
        assert!(t.delete(&[KeyMatch::Exact(1)], 0).is_err());
    }

    #[test]
    fn a_full_table_refuses_an_insert() {
        let mut t =
            TableState::new(&table(&[MatchKind::Exact], 2), &[16], &shapes(&[1, 0])).unwrap();
        for v in 0..2 {
            t.insert(Entry {
                key: vec![KeyMatch::Exact(v)],
                action: call(0, &[v]),
                priority: 0,
            })
            .unwrap();
        }
        let err = t
            .insert(Entry {
                key: vec![KeyMatch::Exact(9)],
                action: call(0, &[9]),
                priority: 0,
            })
            .unwrap_err();
        assert_eq!(
            err,
            TableError::Full {
                table: "t".into(),
                size: 2
            }
        );
        assert_eq!(err.to_string(), "table t is full (2 entries)");
    }

    #[test]
    fn entries_that_do_not_fit_are_refused() {
        let mut t =
            TableState::new(&table(&[MatchKind::Exact], 4), &[8], &shapes(&[1, 0])).unwrap();
        let too_wide = Entry {
            key: vec![KeyMatch::Exact(256)],
            action: call(0, &[1]),
            priority: 0,
        };
        assert!(matches!(
            t.insert(too_wide),
            Err(TableError::Invalid { .. })
        ));
        let bad_args = Entry {
            key: vec![KeyMatch::Exact(1)],
            action: call(0, &[]),
            priority: 0,
        };
        assert!(matches!(
            t.insert(bad_args),
            Err(TableError::Invalid { .. })
        ));
        let e = Entry {
            key: vec![KeyMatch::Exact(1)],
            action: call(0, &[5]),
            priority: 0,
        };
        t.insert(e.clone()).unwrap();
        assert_eq!(
            t.insert(e),
            Err(TableError::Duplicate {
                table: "t".into(),
                slot: 0
            })
        );
        t.modify(&[KeyMatch::Exact(1)], 0, call(0, &[6])).unwrap();
        assert_eq!(t.lookup(&[1]).unwrap().args, vec![6]);
    }

    /// A const entry the table refuses is named by its place in the program, and a repeated
    /// key by the earlier entry that holds it (const entry k is in slot k); an LPM entry is
    /// named by its value under its prefix.
    #[test]
    fn a_refused_const_entry_is_named_with_the_entry_it_collides_with() {
        let lpm = |v: u128, l| Entry {
            key: vec![KeyMatch::Lpm {
                value: v,
                prefix_len: l,
            }],
            action: call(1, &[]),
            priority: 0,
        };
        let mut t = table(&[MatchKind::Lpm], 8);
        t.const_entries = vec![
            lpm(0x0a00_0000, 8),
            lpm(0x0b00_0000, 8),
            lpm(0x0a01_0000, 8),
        ];
        let e = TableState::new(&t, &[32], &shapes(&[1, 0])).err().unwrap();
        assert_eq!(
            e.const_entry(),
            Some((
                2,
                "const entry 3 has the same key as const entry 1: a table holds one entry per \
                 key (entries of a ternary or range table also differ by their priority)"
                    .into()
            ))
        );
        assert!(e
            .to_string()
            .starts_with("table t: const entry 3 has the same key"));
        // Beside an exact key too: 10.1.0.0/8 is 10.0.0.0/8, /16 another entry, /0 and /32
        // at the edges.
        let lpm_exact = |v: u128, l, x| Entry {
            key: vec![
                KeyMatch::Lpm {
                    value: v,
                    prefix_len: l,
                },
                KeyMatch::Exact(x),
            ],
            ..lpm(0, 0)
        };
        let mut t = table(&[MatchKind::Lpm, MatchKind::Exact], 8);
        let build = |t: &Table| TableState::new(t, &[32, 8], &shapes(&[1, 0])).err();
        t.const_entries = vec![
            lpm_exact(0x0a00_0000, 8, 3),
            lpm_exact(0x0a01_0000, 16, 3),
            lpm_exact(0x0a01_0000, 8, 4),
            lpm_exact(0xffff_ffff, 0, 3),
            lpm_exact(0xffff_ffff, 32, 3),
        ];
        assert_eq!(build(&t), None);
        t.const_entries.push(lpm_exact(0x0a01_0000, 8, 3));
        assert_eq!(
            build(&t).and_then(|e| e.const_entry()).map(|c| c.0),
            Some(5)
        );
        t.const_entries[5] = lpm_exact(0, 0, 3);
        let e = build(&t).unwrap().const_entry().unwrap();
        assert!(
            e.1.starts_with("const entry 6 has the same key as const entry 4"),
            "{e:?}"
        );
        // A ternary table's entries differ by priority: the same key twice is two entries.
        let mut t = table(&[MatchKind::Range], 8);
        let range = |lo, hi, priority| Entry {
            key: vec![KeyMatch::Range { lo, hi }],
            action: call(1, &[]),
            priority,
        };
        t.const_entries = vec![range(1, 5, 2), range(1, 5, 1)];
        assert!(TableState::new(&t, &[8], &shapes(&[1, 0])).is_ok());
        t.const_entries = vec![range(1, 5, 2), range(9, 3, 1)];
        let e = TableState::new(&t, &[8], &shapes(&[1, 0])).err().unwrap();
        assert_eq!(
            e.const_entry(),
            Some((
                1,
                "const entry 2: key `k` (bit<8>, Range): the range 9..3 runs backwards: its low \
                 end is above its high end"
                    .into()
            ))
        );
    }

    #[test]
    fn hits_are_counted_per_entry_and_go_with_it() {
        let mut t =
            TableState::new(&table(&[MatchKind::Exact], 4), &[16], &shapes(&[1, 0])).unwrap();
        let entry = |v: u128| Entry {
            key: vec![KeyMatch::Exact(v)],
            action: call(0, &[v]),
            priority: 0,
        };
        let (a, b) = (t.insert(entry(1)).unwrap(), t.insert(entry(2)).unwrap());
        let hit = |t: &mut TableState, v: u128| {
            let slot = t.lookup_entry(&[v]).map(|e| e.slot);
            t.count_direct(slot, 64);
        };
        for v in [1, 1, 2, 7] {
            hit(&mut t, v);
        }
        let hits = |t: &TableState| -> Vec<(u32, u64)> {
            t.entries().iter().map(|e| (e.slot, e.hits)).collect()
        };
        assert_eq!(hits(&t), vec![(a, 2), (b, 1)]);
        assert_eq!(t.misses(), 1);
        // A modified entry keeps its count; a deleted one's goes with it, and the entry that
        // takes its slot starts from zero.
        t.modify(&[KeyMatch::Exact(1)], 0, call(0, &[9])).unwrap();
        t.delete(&[KeyMatch::Exact(2)], 0).unwrap();
        assert_eq!(t.insert(entry(3)).unwrap(), b);
        assert_eq!(hits(&t), vec![(a, 2), (b, 0)]);
        assert_eq!(t.entries()[0].key, vec![KeyMatch::Exact(1)]);
        assert_eq!(t.entries()[0].call.args, vec![9]);
    }

    #[test]
    fn entries_read_back_as_installed() {
        let mut t = TableState::new(&table(&[MatchKind::Lpm], 4), &[32], &shapes(&[1, 0])).unwrap();
        let lpm = |v: u128, l| KeyMatch::Lpm {
            value: v,
            prefix_len: l,
        };
        for (v, l) in [(0x0a00_0000, 8), (0x0a01_0000, 16)] {
            t.insert(Entry {
                key: vec![lpm(v, l)],
                action: call(0, &[l as u128]),
                priority: 0,
            })
            .unwrap();
        }
        let keys: Vec<Vec<KeyMatch>> = t.entries().into_iter().map(|e| e.key).collect();
        assert_eq!(
            keys,
            vec![vec![lpm(0x0a00_0000, 8)], vec![lpm(0x0a01_0000, 16)]]
        );
        let mut r =
            TableState::new(&table(&[MatchKind::Ternary], 4), &[8], &shapes(&[1, 0])).unwrap();
        let tern = KeyMatch::Ternary {
            value: 0x10,
            mask: 0xf0,
        };
        r.insert(Entry {
            key: vec![tern],
            action: call(0, &[1]),
            priority: 5,
        })
        .unwrap();
        let e = &r.entries()[0];
        assert_eq!((e.key.clone(), e.priority), (vec![tern], 5));
    }

    #[test]
    fn ternary_uses_priority() {
        let mut t =
            TableState::new(&table(&[MatchKind::Ternary], 4), &[8], &shapes(&[1, 0])).unwrap();
        let tern = |v, m, p| Entry {
            key: vec![KeyMatch::Ternary { value: v, mask: m }],
            action: call(0, &[p as u128]),
            priority: p,
        };
        t.insert(tern(0x00, 0x00, 1)).unwrap();
        t.insert(tern(0x10, 0xf0, 5)).unwrap();
        assert_eq!(t.lookup(&[0x13]).unwrap().args, vec![5]);
        assert_eq!(t.lookup(&[0x23]).unwrap().args, vec![1]);
    }

    /// A ternary table's entries by key and priority: the same key at another priority is
    /// another entry; at the same one a duplicate naming the slot it holds; deleted, the
    /// key can be installed again (in the freed slot) and is found; equal priorities match
    /// in the order they were installed.
    #[test]
    fn ternary_entries_are_known_by_key_and_priority() {
        let mut t =
            TableState::new(&table(&[MatchKind::Ternary], 4), &[8], &shapes(&[1, 0])).unwrap();
        let tern = |v, m, p, arg: u128| Entry {
            key: vec![KeyMatch::Ternary { value: v, mask: m }],
            action: call(0, &[arg]),
            priority: p,
        };
        assert_eq!(t.insert(tern(0x10, 0xf0, 1, 1)), Ok(0));
        assert_eq!(t.insert(tern(0x10, 0xf0, 2, 2)), Ok(1));
        assert!(matches!(
            t.insert(tern(0x10, 0xf0, 1, 3)),
            Err(TableError::Duplicate { slot: 0, .. })
        ));
        assert_eq!(t.insert(tern(0x00, 0x00, 2, 4)), Ok(2));
        // Priority 2 first, installed first among them: the /4 entry, then the catch-all.
        assert_eq!(t.lookup(&[0x13]).unwrap().args, vec![2]);
        assert_eq!(t.lookup(&[0x23]).unwrap().args, vec![4]);
        let key = [KeyMatch::Ternary {
            value: 0x10,
            mask: 0xf0,
        }];
        assert_eq!(t.slot_of(&key, 2), Ok(1));
        t.delete(&key, 2).unwrap();
        assert!(t.slot_of(&key, 2).is_err());
        assert_eq!(t.lookup(&[0x13]).unwrap().args, vec![4]);
        assert_eq!(t.insert(tern(0x10, 0xf0, 2, 5)), Ok(1));
        assert_eq!(t.slot_of(&key, 2), Ok(1));
        assert_eq!(t.lookup(&[0x23]).unwrap().args, vec![4]);
        assert_eq!(t.lookup(&[0x13]).unwrap().args, vec![4]);
    }
}
