//! Port schedulers: strict priority across levels, DRR (bytes) or WRR (packets) within a level.
//!
//! Every configuration ([`crate::config::SchedulerConfig`]) is the same machine: each queue has
//! a level and a quantum. Strict priority is one queue per level; DRR/WRR is every queue at one
//! level; SP over DRR groups is anything in between.
//!
//! O(1) per decision: queues are laid out in "positions" sorted by (level high→low, queue
//! index), so one `u128` of eligible positions (non-empty and not paused) gives the highest
//! backlogged level with `trailing_zeros`, and the round-robin successor inside the level with
//! one mask and one more `trailing_zeros`. DRR's inner loop runs more than twice only when a
//! quantum is smaller than a packet.

use crate::config::SchedParams;

/// Scheduler state of one port.
#[derive(Clone, Debug)]
pub(crate) struct PortSched {
    /// Position → queue.
    order: Vec<u16>,
    /// Queue → position.
    pos: Vec<u8>,
    /// Position → level index (0 = highest).
    level_of: Vec<u8>,
    /// Positions of each level index.
    level_mask: Vec<u128>,
    /// Queue → quantum.
    quantum: Vec<u32>,
    /// Queue → deficit (bytes or packets).
    deficit: Vec<u64>,
    /// Level index → position being served.
    current: Vec<Option<u8>>,
    /// Level index → sum of quanta of its non-empty queues (for γ).
    active_quanta: Vec<u64>,
    /// Level index → whether it has a single queue (no DRR bookkeeping).
    single: Vec<bool>,
    /// Non-empty queues, by position.
    pub nonempty: u128,
    /// Paused queues (PFC or queue pause), by position.
    pub blocked: u128,
    /// WRR (count packets) rather than DRR (count bytes).
    packets: bool,
}

impl PortSched {
    pub fn new(p: &SchedParams) -> PortSched {
        let n = p.levels.len();
        let mut order: Vec<u16> = (0..n as u16).collect();
        order.sort_by_key(|&q| (std::cmp::Reverse(p.levels[q as usize]), q));
        let mut distinct: Vec<u8> = p.levels.clone();
        distinct.sort_unstable_by(|a, b| b.cmp(a));
        distinct.dedup();
        let mut pos = vec![0u8; n];
        let mut level_of = vec![0u8; n];
        let mut level_mask = vec![0u128; distinct.len()];
        for (i, &q) in order.iter().enumerate() {
            pos[q as usize] = i as u8;
            let li = distinct
                .iter()
                .position(|&l| l == p.levels[q as usize])
                .expect("level listed") as u8;
            level_of[i] = li;
            level_mask[li as usize] |= 1u128 << i;
        }
        let single = level_mask.iter().map(|m| m.count_ones() == 1).collect();
        PortSched {
            order,
            pos,
            level_of,
            current: vec![None; level_mask.len()],
            active_quanta: vec![0; level_mask.len()],
            single,
            level_mask,
            quantum: p.quanta.clone(),
            deficit: vec![0; n],
            nonempty: 0,
            blocked: 0,
            packets: p.packets,
        }
    }

    /// The position bit of queue `q`.
    pub fn bit(&self, q: u16) -> u128 {
        1u128 << self.pos[q as usize]
    }

    /// Queue `q` became non-empty.
    pub fn on_nonempty(&mut self, q: u16) {
        let p = self.pos[q as usize];
        self.nonempty |= 1u128 << p;
        self.active_quanta[self.level_of[p as usize] as usize] += self.quantum[q as usize] as u64;
    }

    /// Queue `q` became empty: it leaves the round and loses its deficit (DRR).
    pub fn on_empty(&mut self, q: u16) {
        let p = self.pos[q as usize];
        self.nonempty &= !(1u128 << p);
        self.active_quanta[self.level_of[p as usize] as usize] -= self.quantum[q as usize] as u64;
        self.deficit[q as usize] = 0;
    }

    /// γ of queue `q`: its quantum over the quanta of the backlogged queues of its level,
    /// counting `q` as backlogged.
    pub fn gamma(&self, q: u16) -> (u64, u64) {
        let p = self.pos[q as usize];
        let li = self.level_of[p as usize] as usize;
        let mine = self.quantum[q as usize] as u64;
        let mut den = self.active_quanta[li];
        if self.nonempty & (1u128 << p) == 0 {
            den += mine;
        }
        (mine, den)
    }

    /// The queue to serve next; `head_bytes(q)` is the size of `q`'s head packet. Charges the
    /// chosen queue's deficit for that packet.
    #[inline]
    pub fn pick(&mut self, head_bytes: impl Fn(u16) -> u32) -> Option<u16> {
        let elig = self.nonempty & !self.blocked;
        if elig == 0 {
            return None;
        }
        let first = elig.trailing_zeros() as usize;
        let li = self.level_of[first] as usize;
        if self.single[li] {
            return Some(self.order[first]);
        }
        let lm = elig & self.level_mask[li];
        if lm & (lm - 1) == 0 {
            // One eligible queue in the level (a port with one busy queue, the usual case):
            // what the round below comes to without walking it. The queue keeps the turn if
            // it holds the turn and its deficit covers the packet; otherwise the turn comes
            // round to it, with one more quantum each time, until it does.
            let p = first as u8;
            let q = self.order[first];
            let cost = if self.packets {
                1
            } else {
                head_bytes(q) as u64
            };
            let quantum = self.quantum[q as usize] as u64;
            let deficit = &mut self.deficit[q as usize];
            if self.current[li] != Some(p) || *deficit < cost {
                self.current[li] = Some(p);
                *deficit += quantum;
                while *deficit < cost {
                    *deficit += quantum;
                }
            }
            *deficit -= cost;
            return Some(q);
        }
        loop {
            if let Some(p) = self.current[li] {
                if lm & (1u128 << p) != 0 {
                    let q = self.order[p as usize];
                    let cost = if self.packets {
                        1
                    } else {
                        head_bytes(q) as u64
                    };
                    if self.deficit[q as usize] >= cost {
                        self.deficit[q as usize] -= cost;
                        return Some(q);
                    }
                }
            }
            // Next backlogged position of the level after the current one, cyclically; it
            // starts a new turn with one more quantum.
            let after = match self.current[li] {
                Some(p) if p < 127 => lm & (!0u128 << (p + 1)),
                _ => 0,
            };
            let next = if after != 0 { after } else { lm }.trailing_zeros() as u8;
            self.current[li] = Some(next);
            let q = self.order[next as usize] as usize;
            self.deficit[q] += self.quantum[q] as u64;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drr(quanta: &[u32]) -> PortSched {
        PortSched::new(&SchedParams {
            levels: vec![0; quanta.len()],
            quanta: quanta.to_vec(),
            packets: false,
        })
    }

    /// A lone backlogged queue is charged as the round would charge it: it keeps the turn
    /// while its deficit covers the head packet, and takes one quantum per turn otherwise.
    #[test]
    fn a_lone_queue_is_charged_as_the_round_would() {
        let mut s = drr(&[100, 100]);
        s.on_nonempty(0);
        // 0 + 100 + 100 + 100 − 250, then 50 + 100 + 100 − 250.
        assert_eq!(s.pick(|_| 250), Some(0));
        assert_eq!(s.deficit[0], 50);
        assert_eq!(s.pick(|_| 250), Some(0));
        assert_eq!(s.deficit[0], 0);
        let mut s = drr(&[1000, 1000]);
        s.on_nonempty(1);
        // The turn is kept without a new quantum while the deficit covers the packet.
        assert_eq!(s.pick(|_| 300), Some(1));
        assert_eq!(s.pick(|_| 300), Some(1));
        assert_eq!(s.deficit[1], 400);
        // With a second queue backlogged, the round moves on when the deficit runs short;
        // back to a lone queue 1 that no longer holds the turn: one more quantum.
        s.on_nonempty(0);
        assert_eq!(s.pick(|_| 300), Some(1));
        assert_eq!(s.deficit[1], 100);
        assert_eq!(s.pick(|_| 300), Some(0));
        assert_eq!(s.deficit[0], 700);
        s.on_empty(0);
        assert_eq!(s.pick(|_| 300), Some(1));
        assert_eq!(s.deficit[1], 800);
    }
}
