//! The periodic copy of all queue depths that ingress programs read (Tofino2's "ghost thread";
//! on Tofino-1 the FB paper builds the same with pktgen SYNC packets).
//!
//! The TM takes a snapshot of every queue depth (cells) at each multiple `k·P` of the
//! profile's `depth_export_period_ps` `P`; it becomes visible to every ingress pipe
//! `depth_export_delay_ps` `D` later and stays in force until the next one does. A read "at
//! time `t`" therefore sees snapshot `k = ⌊(t − D) / P⌋`, or 0 everywhere when `t < D`. A
//! snapshot at `k·P` is the TM as it was just before any change at that instant (the state
//! after every change at earlier times).
//!
//! # Change-driven capture: no periodic event
//!
//! Queue depths change only when the chip enqueues or dequeues, so the chip calls
//! [`DepthExport::before_change`] just before each of those, and nothing else: between two
//! changes the TM is constant, so every snapshot instant in between sees the same state, and
//! it is captured (once, however many periods passed) at the next change, if a snapshot
//! instant separates the two. A capture copies only the queues that changed since the one
//! before (the TM logs them: [`TrafficManager::take_depth_changes`]), into each queue's own
//! history; a queue that did not change reads its last entry. A read whose snapshot instant
//! is after the last change reads the TM itself. An idle chip (or one whose program never
//! reads depths) costs nothing: no events, no copies; with nothing ever captured, every read
//! is 0, the depth of an empty TM.
//!
//! # Reading the recent past
//!
//! A gress runs at its exit cycle, later than the stage that reads ([`DepthExport::read`]
//! takes the stage's time), so the export keeps the entries that a read up to `window_ps`
//! in the past may still need: per queue at most `(window + D) / P + 2` of them (no
//! allocation once a queue's history has reached its size).

use crate::spec::TmSpec;
use crate::TrafficManager;
use std::collections::VecDeque;

/// Bits `0..n` set (`n` ≤ 128): every queue of `n` empty.
pub fn first_bits(n: usize) -> u128 {
    if n == 0 {
        0
    } else {
        u128::MAX >> (128 - n.min(128))
    }
}

/// Periodic, delayed copy of every queue depth (cells), indexed `port * queues_per_port + queue`.
#[derive(Clone, Debug)]
pub struct DepthExport {
    period_ps: u64,
    delay_ps: u64,
    window_ps: u64,
    /// The time of the last change to the TM's depths (its state since then is not captured).
    last_change_ps: Option<u64>,
    /// Per queue (`port * queues_per_port + queue`), its captures in snapshot order: `(k,
    /// cells)` holds for snapshots `k` up to the next entry's (exclusive); before the first,
    /// the queue was empty.
    history: Vec<VecDeque<(u64, u32)>>,
    /// Reads of snapshots older than this may have been pruned (a debug check).
    horizon_k: u64,
    captures: u64,
    qpp: usize,
}

impl DepthExport {
    /// An export with `spec`'s period and delay whose reads may be up to `window_ps` in the
    /// past (the chip passes its ingress pipe latency). Nothing is captured yet.
    pub fn new(spec: &TmSpec, window_ps: u64) -> DepthExport {
        DepthExport {
            period_ps: spec.depth_export_period_ps.max(1),
            delay_ps: spec.depth_export_delay_ps,
            window_ps,
            last_change_ps: None,
            history: Vec::new(),
            horizon_k: 0,
            captures: 0,
            qpp: spec.queues_per_port as usize,
        }
    }

    /// The snapshot in force at `t_ps`, if one is visible yet.
    pub fn snapshot_index(&self, t_ps: u64) -> Option<u64> {
        t_ps.checked_sub(self.delay_ps).map(|t| t / self.period_ps)
    }

    /// Start logging the TM's changes for this export (once, when the export is made).
    pub fn attach(&self, tm: &mut TrafficManager) {
        tm.log_depth_changes();
    }

    /// Call just before the TM's depths may change at `now_ps` (an enqueue or a dequeue):
    /// captures the queues that changed since the previous capture, if a snapshot instant
    /// saw the state since the previous change. `tm` logs its changes ([`DepthExport::attach`]).
    pub fn before_change(&mut self, tm: &mut TrafficManager, now_ps: u64) {
        if let Some(m) = self.last_change_ps {
            let k = m / self.period_ps + 1; // first snapshot after the change at m
            if k * self.period_ps <= now_ps {
                // Entries no read can reach any more go; the newest at or before the horizon
                // stays (it is in force there).
                let horizon =
                    now_ps.saturating_sub(self.window_ps + self.delay_ps) / self.period_ps;
                let history = &mut self.history;
                tm.take_depth_changes(|qi, cells| {
                    if qi >= history.len() {
                        history.resize_with(qi + 1, VecDeque::new);
                    }
                    let h = &mut history[qi];
                    while h.len() >= 2 && h[1].0 <= horizon {
                        h.pop_front();
                    }
                    h.push_back((k, cells));
                });
                self.captures += 1;
                self.horizon_k = self.horizon_k.max(horizon);
            }
        }
        self.last_change_ps = Some(now_ps);
    }

    /// Queue `qi`'s depth in snapshot `k` (not after the last change): its last entry at or
    /// before `k`, 0 before its first (and for an index past the TM's queues, which no
    /// change ever logs).
    fn captured(&self, qi: usize, k: u64) -> u32 {
        self.history
            .get(qi)
            .and_then(|h| h.iter().rev().find(|e| e.0 <= k))
            .map_or(0, |e| e.1)
    }

    /// The depth of `queue` on `port` (cells) that ingress sees at `at_ps`: snapshot
    /// `⌊(at − D) / P⌋`, or 0 before the first is visible and for a port or queue the TM
    /// does not have. `at_ps` may be up to `window_ps` before the latest change; `tm` is the
    /// TM as it is now.
    pub fn read(&self, tm: &TrafficManager, port: u16, queue: u16, at_ps: u64) -> u32 {
        let Some(k) = self.snapshot_index(at_ps) else {
            return 0;
        };
        if queue as usize >= self.qpp {
            return 0;
        }
        match self.last_change_ps {
            None => return 0,
            // Nothing has changed since before snapshot k: it is the TM as it is.
            Some(m) if k * self.period_ps > m => return tm.depth(port, queue).0,
            Some(_) => {}
        }
        debug_assert!(
            k >= self.horizon_k,
            "a depth read at {at_ps} ps is further in the past than the export keeps"
        );
        self.captured(port as usize * self.qpp + queue as usize, k)
    }

    /// Bit `q` set for each queue `q < queues.min(128)` of `port` that [`DepthExport::read`]
    /// reads as 0 at `at_ps`, with one snapshot lookup for the port instead of one per
    /// queue (a program that counts a port's empty queues reads all of them per packet).
    /// `read` is the reference, compared by a test.
    pub fn empty_queues(&self, tm: &TrafficManager, port: u16, queues: u16, at_ps: u64) -> u128 {
        let n = queues.min(128) as usize;
        let all = first_bits(n);
        let (Some(k), Some(m)) = (self.snapshot_index(at_ps), self.last_change_ps) else {
            return all;
        };
        // Queues past the TM's are read as 0.
        let mut empty = all & !first_bits(n.min(self.qpp));
        if k * self.period_ps > m {
            for q in 0..n.min(self.qpp) {
                empty |= ((tm.depth(port, q as u16).0 == 0) as u128) << q;
            }
            return empty;
        }
        debug_assert!(
            k >= self.horizon_k,
            "a depth read at {at_ps} ps is further in the past than the export keeps"
        );
        let base = port as usize * self.qpp;
        for q in 0..n.min(self.qpp) {
            empty |= ((self.captured(base + q, k) == 0) as u128) << q;
        }
        empty
    }

    /// Copies of the TM taken so far (each at a change that followed a snapshot instant).
    pub fn captures(&self) -> u64 {
        self.captures
    }

    /// The most entries one queue keeps for reads of the recent past.
    pub fn kept(&self) -> usize {
        self.history.iter().map(VecDeque::len).max().unwrap_or(0)
    }
}
