//! The event kernel: a time-ordered queue of events with deterministic tie-breaking.
//!
//! The model jumps from one event to the next instead of ticking every cycle, so an idle
//! chip costs nothing. Events at the same time run in the order they were scheduled (a
//! sequence number breaks ties), which makes every run with the same inputs identical.
//!
//! [`Lockstep`] is the other way to advance: it visits every cycle edge of every chip's
//! clock, idle or not, in time order, between the events (`--lockstep` on `asic run`,
//! `asic net` and `asic bench`). It is for teaching (a per-cycle view of every chip) and for
//! checking the event engine: nothing a chip does may depend on which cycles were visited,
//! so both modes must give the same event trace and outputs (`tests/lockstep.rs`).

use pipelines::time::{Clock, Time};
use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

struct Entry<E> {
    at: Time,
    seq: u64,
    ev: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, o: &Self) -> bool {
        (self.at, self.seq) == (o.at, o.seq)
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<E> Ord for Entry<E> {
    fn cmp(&self, o: &Self) -> Ordering {
        (self.at, self.seq).cmp(&(o.at, o.seq))
    }
}

/// Something events can be scheduled on.
pub trait Schedule<E> {
    /// Run `ev` at time `at` (not before the current time).
    fn at(&mut self, at: Time, ev: E);
}

/// A queue of future events.
pub struct EventQueue<E> {
    heap: BinaryHeap<Reverse<Entry<E>>>,
    seq: u64,
    now: Time,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue {
            heap: BinaryHeap::new(),
            seq: 0,
            now: Time::ZERO,
        }
    }
}

impl<E> EventQueue<E> {
    /// An empty queue at time zero.
    pub fn new() -> Self {
        Self::default()
    }

    /// The time of the event last taken.
    pub fn now(&self) -> Time {
        self.now
    }

    /// Take the earliest event, advancing the current time to it.
    pub fn pop(&mut self) -> Option<(Time, E)> {
        let Reverse(e) = self.heap.pop()?;
        self.now = e.at;
        Some((e.at, e.ev))
    }

    /// The time of the earliest pending event.
    pub fn peek_time(&self) -> Option<Time> {
        self.heap.peek().map(|Reverse(e)| e.at)
    }

    /// Events pending.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// Whether no event is pending.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

/// A queue of `E` takes any event that converts into `E`, so a component's events can share
/// a kernel with others (a network's queue holds every chip's and host's events).
impl<E, F: Into<E>> Schedule<F> for EventQueue<E> {
    fn at(&mut self, at: Time, ev: F) {
        debug_assert!(
            at >= self.now,
            "event scheduled in the past: {at} < {}",
            self.now
        );
        self.seq += 1;
        self.heap.push(Reverse(Entry {
            at,
            seq: self.seq,
            ev: ev.into(),
        }));
    }
}

/// Every cycle edge of a set of clocks (one per chip), visited in time order.
#[derive(Clone, Debug)]
pub struct Lockstep {
    clocks: Vec<Clock>,
    /// Per clock: the next cycle to visit.
    next: Vec<u64>,
    visited: u64,
}

impl Lockstep {
    /// Start at cycle 0 of every clock.
    pub fn new(clocks: Vec<Clock>) -> Lockstep {
        Lockstep {
            next: vec![0; clocks.len()],
            clocks,
            visited: 0,
        }
    }

    /// Visit every edge at or before `t` not visited yet, in time order (simultaneous edges
    /// in clock order): `visit(clock index, cycle)`. The driver calls this before it runs
    /// an event at `t`, so a visit sees the chip as it is when its cycle begins.
    pub fn advance_to(&mut self, t: Time, mut visit: impl FnMut(usize, u64)) {
        loop {
            let mut best: Option<(Time, usize)> = None;
            for (i, (c, &n)) in self.clocks.iter().zip(&self.next).enumerate() {
                let at = c.time_of(n);
                if at <= t && best.is_none_or(|(b, _)| at < b) {
                    best = Some((at, i));
                }
            }
            let Some((_, i)) = best else { return };
            visit(i, self.next[i]);
            self.next[i] += 1;
            self.visited += 1;
        }
    }

    /// Cycle edges visited so far, all clocks together.
    pub fn visited(&self) -> u64 {
        self.visited
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_come_out_in_time_then_schedule_order() {
        let mut q = EventQueue::new();
        q.at(Time(20), 'c');
        q.at(Time(10), 'a');
        q.at(Time(20), 'd');
        q.at(Time(10), 'b');
        let order: Vec<char> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!['a', 'b', 'c', 'd']);
        assert_eq!(q.now(), Time(20));
    }

    #[test]
    fn lockstep_visits_every_edge_of_every_clock_in_time_order() {
        // 1 GHz (edges every 1000 ps) and 400 MHz (every 2500 ps).
        let mut l = Lockstep::new(vec![Clock::new(1_000_000_000), Clock::new(400_000_000)]);
        let mut seen = Vec::new();
        l.advance_to(Time(5000), |i, c| seen.push((i, c)));
        assert_eq!(
            seen,
            vec![
                (0, 0),
                (1, 0),
                (0, 1),
                (0, 2),
                (1, 1),
                (0, 3),
                (0, 4),
                (0, 5),
                (1, 2)
            ]
        );
        seen.clear();
        l.advance_to(Time(5999), |i, c| seen.push((i, c)));
        assert!(seen.is_empty(), "nothing new before 6000 ps: {seen:?}");
        l.advance_to(Time(6000), |i, c| seen.push((i, c)));
        assert_eq!(seen, vec![(0, 6)]);
        assert_eq!(l.visited(), 10);
    }
}
