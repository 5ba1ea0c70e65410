//! The event kernel: a time-ordered queue of events with deterministic tie-breaking.
//!
//! The model jumps from one event to the next instead of ticking every cycle, so an idle
//! chip costs nothing. Events at the same time run in the order they were scheduled (a
//! sequence number breaks ties), which makes every run with the same inputs identical.

use pipelines::time::Time;
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
}
