//! Who drives each extern: an extern array or hash unit lives in the stage of the one table
//! whose actions drive it (a register array gets one read-modify-write per packet), so a
//! second driver is an error at its use; arrays no table drives are dropped.

use std::collections::HashMap;

use pipelines::program::*;

use super::ControlLowering;
use crate::error::{err, ErrorKind, Result};

/// An extern resource that must belong to one table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Res {
    Register(RegisterId),
    Meter(MeterId),
    Counter(CounterId),
    Hash(HashId),
}

impl<'e, 'a, 'l> ControlLowering<'e, 'a, 'l> {
    /// The resource an extern call uses, if it must belong to one table.
    pub(super) fn res_of(&self, c: &ExternCall) -> Option<Res> {
        match c {
            ExternCall::Stateful { salu, .. } => self
                .control
                .salus
                .get(*salu as usize)
                .map(|s| Res::Register(s.register)),
            ExternCall::Meter { meter, .. } => Some(Res::Meter(*meter)),
            ExternCall::Count { counter, .. } => Some(Res::Counter(*counter)),
            ExternCall::Hash { hash, .. } => Some(Res::Hash(*hash)),
            ExternCall::Random { .. }
            | ExternCall::QueueDepth { .. }
            | ExternCall::EmptyQueues { .. } => None,
        }
    }

    /// How an error names an extern resource.
    fn res_name(&self, r: Res) -> String {
        match r {
            Res::Register(i) => format!(
                "register array `{}`",
                self.control.registers[i as usize].name
            ),
            Res::Meter(i) => format!("meter `{}`", self.control.meters[i as usize].name),
            Res::Counter(i) => format!("counter `{}`", self.control.counters[i as usize].name),
            Res::Hash(i) => format!("hash `{}`", self.control.hashes[i as usize].name),
        }
    }

    /// The error for a second driver of `r`, saying which hardware limit it breaks.
    pub(super) fn twice_msg(&self, r: Res, first: &str) -> String {
        match r {
            Res::Register(_) => format!(
                "{} is accessed twice in one pass (already by {first}); its stateful ALU does one \
                 read-modify-write per packet",
                self.res_name(r)
            ),
            _ => format!(
                "{} is used twice (already by {first}); an extern lives in one stage and is driven \
                 by one table",
                self.res_name(r)
            ),
        }
    }

    /// Every extern resource is driven by one table: check in source order of the applies, so
    /// the error is at the second use.
    pub(super) fn check_ownership(&self) -> Result<()> {
        let mut order: Vec<usize> = (0..self.control.tables.len()).collect();
        order.sort_by_key(|&t| self.apply_spans[t].start);
        let mut owner: HashMap<Res, usize> = HashMap::new();
        for t in order {
            let table = &self.control.tables[t];
            let mut acts: Vec<ActionId> = table.actions.clone();
            if !acts.contains(&table.default_action.action) {
                acts.push(table.default_action.action);
            }
            for &a in &acts {
                for (k, call) in self.control.actions[a as usize].externs.iter().enumerate() {
                    let Some(r) = self.res_of(call) else { continue };
                    match owner.get(&r) {
                        Some(&u) if u != t => {
                            let first = &self.control.tables[u];
                            let shared =
                                first.actions.contains(&a) || first.default_action.action == a;
                            let span = if shared {
                                self.apply_spans[t]
                            } else {
                                self.extern_spans[a as usize][k]
                            };
                            let first_name =
                                if first.keys.is_empty() && first.name.contains(".assign_l") {
                                    "an earlier statement".to_string()
                                } else {
                                    format!("table {}", first.name)
                                };
                            return Err(err(
                                ErrorKind::Semantic,
                                span,
                                self.twice_msg(r, &first_name),
                            ));
                        }
                        Some(_) => {}
                        None => {
                            owner.insert(r, t);
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// Drop extern arrays and hash units no table drives (and the extern calls of actions no
    /// table uses), renumbering the rest.
    pub(super) fn compact_externs(&mut self) {
        let c = &mut self.control;
        let mut used_actions = vec![false; c.actions.len()];
        for t in &c.tables {
            for &a in t.actions.iter().chain([&t.default_action.action]) {
                used_actions[a as usize] = true;
            }
        }
        for (a, used) in c.actions.iter_mut().zip(&used_actions) {
            if !used {
                a.externs.clear();
            }
        }
        let (mut salus, mut meters, mut counters, mut hashes) = (
            vec![false; c.salus.len()],
            vec![false; c.meters.len()],
            vec![false; c.counters.len()],
            vec![false; c.hashes.len()],
        );
        let mark_index = |i: &ExternIndex, hashes: &mut Vec<bool>| {
            if let ExternIndex::Hash(h) = i {
                hashes[*h as usize] = true;
            }
        };
        for a in &c.actions {
            for x in &a.externs {
                match x {
                    ExternCall::Stateful { salu, index, .. } => {
                        salus[*salu as usize] = true;
                        mark_index(index, &mut hashes);
                    }
                    ExternCall::Meter { meter, index, .. } => {
                        meters[*meter as usize] = true;
                        mark_index(index, &mut hashes);
                    }
                    ExternCall::Count { counter, index } => {
                        counters[*counter as usize] = true;
                        mark_index(index, &mut hashes);
                    }
                    ExternCall::Hash { hash, .. } => hashes[*hash as usize] = true,
                    ExternCall::Random { .. }
                    | ExternCall::QueueDepth { .. }
                    | ExternCall::EmptyQueues { .. } => {}
                }
            }
        }
        let mut registers = vec![false; c.registers.len()];
        for (s, used) in c.salus.iter().zip(&salus) {
            if *used {
                registers[s.register as usize] = true;
            }
        }
        /// Per old id, its new id once the unused are dropped.
        fn remap(used: &[bool]) -> Vec<u16> {
            let mut next = 0u16;
            used.iter()
                .map(|&u| {
                    let id = next;
                    if u {
                        next += 1;
                    }
                    id
                })
                .collect()
        }
        /// Drop the elements not `used`.
        fn keep<T>(v: &mut Vec<T>, used: &[bool]) {
            let mut i = 0;
            v.retain(|_| {
                i += 1;
                used[i - 1]
            });
        }
        let (rm, sm, mm, cm, hm) = (
            remap(&registers),
            remap(&salus),
            remap(&meters),
            remap(&counters),
            remap(&hashes),
        );
        for s in &mut c.salus {
            s.register = rm[s.register as usize];
        }
        let map_index = |i: &mut ExternIndex| {
            if let ExternIndex::Hash(h) = i {
                *h = hm[*h as usize];
            }
        };
        for a in &mut c.actions {
            for x in &mut a.externs {
                match x {
                    ExternCall::Stateful { salu, index, .. } => {
                        *salu = sm[*salu as usize];
                        map_index(index);
                    }
                    ExternCall::Meter { meter, index, .. } => {
                        *meter = mm[*meter as usize];
                        map_index(index);
                    }
                    ExternCall::Count { counter, index } => {
                        *counter = cm[*counter as usize];
                        map_index(index);
                    }
                    ExternCall::Hash { hash, .. } => *hash = hm[*hash as usize],
                    ExternCall::Random { .. }
                    | ExternCall::QueueDepth { .. }
                    | ExternCall::EmptyQueues { .. } => {}
                }
            }
        }
        keep(&mut c.registers, &registers);
        keep(&mut c.salus, &salus);
        keep(&mut c.meters, &meters);
        keep(&mut c.counters, &counters);
        keep(&mut c.hashes, &hashes);
    }
}
