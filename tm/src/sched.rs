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

/// One scheduling position: the queue there and its DRR/WRR state. Kept together (and by
/// position, the order picks walk) so that serving a queue reads one record.
#[derive(Clone, Copy, Debug)]
struct Slot {
    /// The queue at this position.
    queue: u16,
    /// Its level index (0 = highest).
    level: u8,
    /// Its quantum (bytes or packets).
    quantum: u32,
    /// Its deficit (bytes or packets).
    deficit: u64,
}

/// One strict-priority level: its positions and its round.
#[derive(Clone, Copy, Debug)]
struct Level {
    /// Its positions.
    mask: u128,
    /// The position being served.
    current: Option<u8>,
    /// A single queue (no DRR bookkeeping).
    single: bool,
}

/// Scheduler state of one port.
#[derive(Clone, Debug)]
pub(crate) struct PortSched {
    /// Queue → position.
    pos: Vec<u8>,
    /// Position → its queue and state.
    slots: Vec<Slot>,
    /// Level index → its state.
    levels: Vec<Level>,
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
        let mut levels: Vec<Level> = distinct
            .iter()
            .map(|_| Level {
                mask: 0,
                current: None,
                single: false,
            })
            .collect();
        let mut slots = Vec::with_capacity(n);
        for (i, &q) in order.iter().enumerate() {
            pos[q as usize] = i as u8;
            let li = distinct
                .iter()
                .position(|&l| l == p.levels[q as usize])
                .expect("level listed");
            levels[li].mask |= 1u128 << i;
            slots.push(Slot {
                queue: q,
                level: li as u8,
                quantum: p.quanta[q as usize],
                deficit: 0,
            });
        }
        for l in &mut levels {
            l.single = l.mask.count_ones() == 1;
        }
        PortSched {
            pos,
            slots,
            levels,
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
    #[inline]
    pub fn on_nonempty(&mut self, q: u16) {
        self.nonempty |= 1u128 << self.pos[q as usize];
    }

    /// Queue `q` became empty: it leaves the round and loses its deficit (DRR).
    #[inline]
    pub fn on_empty(&mut self, q: u16) {
        let p = self.pos[q as usize];
        self.nonempty &= !(1u128 << p);
        self.slots[p as usize].deficit = 0;
    }

    /// γ of queue `q`: its quantum over the quanta of the backlogged queues of its level,
    /// counting `q` as backlogged. Summed when asked (only Flexible Buffer asks), so that a
    /// queue becoming empty or non-empty costs no bookkeeping.
    pub fn gamma(&self, q: u16) -> (u64, u64) {
        let p = self.pos[q as usize];
        let s = &self.slots[p as usize];
        let mut busy = (self.nonempty | 1u128 << p) & self.levels[s.level as usize].mask;
        let mut den = 0u64;
        while busy != 0 {
            den += self.slots[busy.trailing_zeros() as usize].quantum as u64;
            busy &= busy - 1;
        }
        (s.quantum as u64, den)
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
        let slot = &mut self.slots[first];
        let level = &mut self.levels[slot.level as usize];
        if level.single {
            return Some(slot.queue);
        }
        let lm = elig & level.mask;
        if lm & (lm - 1) == 0 {
            // One eligible queue in the level (a port with one busy queue, the usual case):
            // what the round below comes to without walking it. The queue keeps the turn if
            // it holds the turn and its deficit covers the packet; otherwise the turn comes
            // round to it, with one more quantum each time, until it does.
            let cost = if self.packets {
                1
            } else {
                head_bytes(slot.queue) as u64
            };
            let quantum = slot.quantum as u64;
            if level.current != Some(first as u8) || slot.deficit < cost {
                level.current = Some(first as u8);
                slot.deficit += quantum;
                while slot.deficit < cost {
                    slot.deficit += quantum;
                }
            }
            slot.deficit -= cost;
            return Some(slot.queue);
        }
        let li = slot.level as usize;
        loop {
            if let Some(p) = self.levels[li].current {
                if lm & (1u128 << p) != 0 {
                    let slot = &mut self.slots[p as usize];
                    let cost = if self.packets {
                        1
                    } else {
                        head_bytes(slot.queue) as u64
                    };
                    if slot.deficit >= cost {
                        slot.deficit -= cost;
                        return Some(slot.queue);
                    }
                }
            }
            // Next backlogged position of the level after the current one, cyclically; it
            // starts a new turn with one more quantum.
            let after = match self.levels[li].current {
                Some(p) if p < 127 => lm & (!0u128 << (p + 1)),
                _ => 0,
            };
            let next = if after != 0 { after } else { lm }.trailing_zeros() as u8;
            self.levels[li].current = Some(next);
            let slot = &mut self.slots[next as usize];
            slot.deficit += slot.quantum as u64;
        }
    }

    /// The deficit of queue `q` (for tests).
    #[cfg(test)]
    fn deficit(&self, q: u16) -> u64 {
        self.slots[self.pos[q as usize] as usize].deficit
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

    /// γ is a queue's quantum over the quanta of its level's busy queues, itself included.
    #[test]
    fn gamma_sums_the_busy_quanta_of_the_level() {
        let mut s = PortSched::new(&SchedParams {
            levels: vec![1, 0, 1, 0, 1],
            quanta: vec![100, 200, 300, 400, 500],
            packets: false,
        });
        assert_eq!(s.gamma(0), (100, 100));
        s.on_nonempty(2);
        s.on_nonempty(3);
        assert_eq!(s.gamma(0), (100, 400));
        assert_eq!(s.gamma(2), (300, 300));
        assert_eq!(s.gamma(1), (200, 600));
        s.on_nonempty(4);
        s.on_nonempty(0);
        assert_eq!(s.gamma(4), (500, 900));
        s.on_empty(2);
        assert_eq!(s.gamma(2), (300, 900));
        assert_eq!(s.gamma(3), (400, 400));
    }

    /// A lone backlogged queue is charged as the round would charge it: it keeps the turn
    /// while its deficit covers the head packet, and takes one quantum per turn otherwise.
    #[test]
    fn a_lone_queue_is_charged_as_the_round_would() {
        let mut s = drr(&[100, 100]);
        s.on_nonempty(0);
        // 0 + 100 + 100 + 100 − 250, then 50 + 100 + 100 − 250.
        assert_eq!(s.pick(|_| 250), Some(0));
        assert_eq!(s.deficit(0), 50);
        assert_eq!(s.pick(|_| 250), Some(0));
        assert_eq!(s.deficit(0), 0);
        let mut s = drr(&[1000, 1000]);
        s.on_nonempty(1);
        // The turn is kept without a new quantum while the deficit covers the packet.
        assert_eq!(s.pick(|_| 300), Some(1));
        assert_eq!(s.pick(|_| 300), Some(1));
        assert_eq!(s.deficit(1), 400);
        // With a second queue backlogged, the round moves on when the deficit runs short;
        // back to a lone queue 1 that no longer holds the turn: one more quantum.
        s.on_nonempty(0);
        assert_eq!(s.pick(|_| 300), Some(1));
        assert_eq!(s.deficit(1), 100);
        assert_eq!(s.pick(|_| 300), Some(0));
        assert_eq!(s.deficit(0), 700);
        s.on_empty(0);
        assert_eq!(s.pick(|_| 300), Some(1));
        assert_eq!(s.deficit(1), 800);
    }
}
