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
//! so both modes must give the same event trace and outputs (`tests/asic/lockstep.rs`).

use pipelines::time::{Clock, Time};

#[derive(Clone, Copy)]
struct Entry<E> {
    at: Time,
    seq: u64,
    ev: E,
}

impl<E> Entry<E> {
    #[inline]
    fn key(&self) -> u128 {
        key(self.at, self.seq)
    }
}

/// A binary min-heap of entries by [`key`] (unique: the sequence numbers are).
///
/// The standard library's `BinaryHeap` orders the same way and sifts the same way (a hole
/// moved down to the bottom, then up), but its `pop` is a call returning the entry wrapped
/// in `Option<Reverse<_>>`, and on the few events a chip's heap holds (the pipes' exits wait
/// in lanes) that costs more than the sift itself. This one is inlined into the kernel's
/// `pop` and `at`. Entries are `Copy`, so a hole is filled by a plain copy.
struct Heap<E> {
    v: Vec<Entry<E>>,
}

impl<E: Copy> Heap<E> {
    /// The least key (`u128::MAX` when empty).
    #[inline]
    fn first(&self) -> u128 {
        self.v.first().map_or(u128::MAX, Entry::key)
    }

    #[inline]
    fn push(&mut self, e: Entry<E>) {
        let i = self.v.len();
        self.v.push(e);
        self.sift_up(i, e);
    }

    /// Puts `e` in the hole at `i`, or above it: the hole goes up while its parent is
    /// greater.
    #[inline]
    fn sift_up(&mut self, mut i: usize, e: Entry<E>) {
        assert!(i < self.v.len());
        let v = self.v.as_mut_ptr();
        let k = e.key();
        while i > 0 {
            let parent = (i - 1) / 2;
            // SAFETY: parent < i < len (asserted above, and i only goes down to parents).
            // Unchecked: the checks cost a tenth of a sift (measured), and the standard
            // library's heap sifts the same way.
            unsafe {
                let p = *v.add(parent);
                if p.key() < k {
                    break;
                }
                *v.add(i) = p;
            }
            i = parent;
        }
        // SAFETY: i < len, as above.
        unsafe { *v.add(i) = e };
    }

    #[inline]
    fn pop(&mut self) -> Option<Entry<E>> {
        let last = self.v.pop()?;
        let n = self.v.len();
        if n == 0 {
            return Some(last);
        }
        let v = self.v.as_mut_ptr();
        // SAFETY: 0 < n = len.
        let top = unsafe { *v };
        // The hole at the root goes down to the bottom by the lesser child, then the last
        // entry (likely among the greatest) goes up from there: one comparison per level
        // down, few up (as the standard library does).
        let mut i = 0;
        let mut c = 1;
        while c + 1 < n {
            // SAFETY: i < c < c + 1 < n = len.
            unsafe {
                if (*v.add(c + 1)).key() < (*v.add(c)).key() {
                    c += 1;
                }
                *v.add(i) = *v.add(c);
            }
            i = c;
            c = 2 * i + 1;
        }
        if c + 1 == n {
            // SAFETY: i < c < n = len.
            unsafe { *v.add(i) = *v.add(c) };
            i = c;
        }
        self.sift_up(i, last);
        Some(top)
    }
}

/// A first-in first-out lane of events in time order ([`Schedule::at_in_lane`]).
///
/// A ring whose size is a power of two, so a position wraps with a mask, and whose growth
/// is out of line: the standard `VecDeque` wraps with a comparison and a subtraction and
/// inlines its growth check's call beside every push, which kept the lane's push from being
/// inlined where the chip schedules a pipe's exit.
struct Lane<E> {
    /// The ring; its length (a power of two, or 0) is the capacity.
    ring: Vec<Entry<E>>,
    /// Where the first event is.
    head: usize,
    /// Events in the lane.
    len: usize,
    /// The time of the last event pushed (events taken from a lane are not later than the
    /// current time, so an empty lane takes any event).
    back_at: Time,
}

impl<E: Copy> Lane<E> {
    fn new() -> Self {
        Lane {
            ring: Vec::new(),
            head: 0,
            len: 0,
            back_at: Time::ZERO,
        }
    }

    #[inline]
    fn front(&self) -> Option<&Entry<E>> {
        (self.len > 0).then(|| &self.ring[self.head])
    }

    #[inline]
    fn push_back(&mut self, e: Entry<E>) {
        if self.len == self.ring.len() {
            self.grow(e);
        }
        let i = (self.head + self.len) & (self.ring.len() - 1);
        self.ring[i] = e;
        self.len += 1;
        self.back_at = e.at;
    }

    /// Doubles the ring (at least 8), its events first in order; `filler` fills the rest.
    #[cold]
    fn grow(&mut self, filler: Entry<E>) {
        let size = (2 * self.ring.len()).max(8);
        let mask = self.ring.len().wrapping_sub(1);
        let mut ring = Vec::with_capacity(size);
        ring.extend((0..self.len).map(|i| self.ring[(self.head + i) & mask]));
        ring.resize(size, filler);
        self.ring = ring;
        self.head = 0;
    }

    #[inline]
    fn pop_front(&mut self) -> Option<Entry<E>> {
        let e = *self.front()?;
        self.head = (self.head + 1) & (self.ring.len() - 1);
        self.len -= 1;
        Some(e)
    }
}

/// Something events can be scheduled on.
pub trait Schedule<E> {
    /// Run `ev` at time `at` (not before the current time).
    fn at(&mut self, at: Time, ev: E);

    /// [`Schedule::at`], with a hint: the caller schedules the events it tags with `lane`
    /// in time order (a pipe's exits: one issue slot per cycle, a constant latency). The
    /// order events run in is the same either way; a queue may keep such events in a
    /// first-in first-out lane instead of its heap. Lanes are `0..`[`LANES`].
    #[inline]
    fn at_in_lane(&mut self, lane: usize, at: Time, ev: E) {
        let _ = lane;
        self.at(at, ev);
    }

    /// [`Schedule::at`] for an event due now that its caller would as soon run at once
    /// (a port's service when the port is idle): a scheduler may hold it instead and have
    /// its driver run it right after the current event if nothing pending comes before it
    /// in the queue's order, which is where the queue would have run it. The order of
    /// events is the same either way; the event does not go through the queue.
    #[inline]
    fn at_or_hold(&mut self, at: Time, ev: E) {
        self.at(at, ev);
    }
}

/// Lanes an [`EventQueue`] keeps ([`Schedule::at_in_lane`]); a higher lane is the heap.
pub const LANES: usize = 16;

/// A queue of future events.
///
/// Events are in a binary heap, or in one of a few first-in first-out lanes when the
/// scheduler says they come in time order ([`Schedule::at_in_lane`]): a pipe holds tens of
/// packets, each with its exit event, and keeping those out of the heap keeps the heap
/// small. An event goes to its lane only if it is not earlier than the lane's last one, so
/// each lane stays sorted by (time, sequence number) whatever the hint says, and taking the
/// least of the heap's top and the lanes' fronts gives exactly the heap's order.
pub struct EventQueue<E> {
    heap: Heap<E>,
    lanes: Vec<Lane<E>>,
    /// Per lane: the key ([`key`]) of its first event, `u128::MAX` when it is empty.
    fronts: Vec<u128>,
    /// The least of `fronts`, and its lane.
    first: (u128, usize),
    seq: u64,
    now: Time,
}

/// (time, sequence number) as one integer, in the same order.
#[inline]
fn key(at: Time, seq: u64) -> u128 {
    (at.ps() as u128) << 64 | seq as u128
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue {
            heap: Heap { v: Vec::new() },
            lanes: Vec::new(),
            fronts: Vec::new(),
            first: (u128::MAX, 0),
            seq: 0,
            now: Time::ZERO,
        }
    }
}

impl<E: Copy> EventQueue<E> {
    /// An empty queue at time zero.
    pub fn new() -> Self {
        Self::default()
    }

    /// The time of the event last taken.
    pub fn now(&self) -> Time {
        self.now
    }

    /// [`Schedule::at_in_lane`] for an event its lane cannot take as it is: the lane is new
    /// (it is added, then takes it), past [`LANES`], or its last event is later (the heap
    /// takes it). Out of line: the lanes' fast path stays small enough to inline.
    #[cold]
    fn outside_lanes(&mut self, lane: usize, at: Time, ev: E) {
        if (self.lanes.len()..LANES).contains(&lane) {
            self.lanes.resize_with(lane + 1, Lane::new);
            self.fronts.resize(lane + 1, u128::MAX);
            return self.at_in_lane(lane, at, ev);
        }
        self.at(at, ev);
    }

    /// Take the earliest event, advancing the current time to it.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, E)> {
        let e = if self.first.0 < self.heap.first() {
            let l = self.first.1;
            let lane = &mut self.lanes[l];
            let e = lane.pop_front().expect("a lane with a front holds events");
            self.fronts[l] = lane.front().map_or(u128::MAX, Entry::key);
            let mut first = (u128::MAX, 0);
            for (i, &f) in self.fronts.iter().enumerate() {
                if f < first.0 {
                    first = (f, i);
                }
            }
            self.first = first;
            e
        } else {
            self.heap.pop()?
        };
        self.now = e.at;
        Some((e.at, e.ev))
    }

    /// The time of the earliest pending event.
    #[inline]
    pub fn peek_time(&self) -> Option<Time> {
        let k = self.first.0.min(self.heap.first());
        (k != u128::MAX).then_some(Time((k >> 64) as u64))
    }

    /// Schedule `ev` at `at` with the caller's own tie-break number `seq` in place of the
    /// queue's: events at the same time run in increasing `seq`. For a driver that numbers
    /// events itself so the order does not depend on which queue holds them (the network
    /// runtime's partitions number each node's events, `asic_net`); `seq` must be unique
    /// among pending events, and a queue takes either its own numbers or the caller's.
    #[inline]
    pub fn at_keyed(&mut self, at: Time, seq: u64, ev: E) {
        debug_assert!(
            at >= self.now,
            "event scheduled in the past: {at} < {}",
            self.now
        );
        self.heap.push(Entry { at, seq, ev });
    }

    /// Whether an event at `at` numbered `seq` ([`EventQueue::at_keyed`]) would run before
    /// every pending one.
    #[inline]
    pub fn precedes_all(&self, at: Time, seq: u64) -> bool {
        key(at, seq) < self.first.0.min(self.heap.first())
    }

    /// Events pending.
    pub fn len(&self) -> usize {
        self.heap.v.len() + self.lanes.iter().map(|l| l.len).sum::<usize>()
    }

    /// Whether no event is pending.
    pub fn is_empty(&self) -> bool {
        self.heap.v.is_empty() && self.first.0 == u128::MAX
    }
}

/// A queue of `E` takes any event that converts into `E`, so a component's events can share
/// a kernel with others (a network's queue holds every chip's and host's events).
impl<E: Copy, F: Into<E>> Schedule<F> for EventQueue<E> {
    fn at(&mut self, at: Time, ev: F) {
        self.seq += 1;
        self.at_keyed(at, self.seq, ev.into());
    }

    #[inline]
    fn at_in_lane(&mut self, lane: usize, at: Time, ev: F) {
        let in_order = |l: &&mut Lane<E>| l.back_at <= at;
        let Some(l) = self.lanes.get_mut(lane).filter(in_order) else {
            return self.outside_lanes(lane, at, ev.into());
        };
        debug_assert!(
            at >= self.now,
            "event scheduled in the past: {at} < {}",
            self.now
        );
        self.seq += 1;
        if l.len == 0 {
            let k = key(at, self.seq);
            self.fronts[lane] = k;
            if k < self.first.0 {
                self.first = (k, lane);
            }
        }
        l.push_back(Entry {
            at,
            seq: self.seq,
            ev: ev.into(),
        });
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
    fn the_heap_takes_events_in_time_then_schedule_order() {
        // Against the standard library's heap on (time, sequence number), pops interleaved.
        let mut q: EventQueue<u32> = EventQueue::new();
        let mut reference = std::collections::BinaryHeap::new();
        let mut x: u64 = 11;
        let mut seq = 0u32;
        for _ in 0..5000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            if x % 5 < 3 {
                let at = Time(q.now().ps() + (x >> 40) % 40);
                seq += 1;
                q.at(at, seq);
                reference.push(std::cmp::Reverse((at, seq)));
            } else {
                let want = reference.pop().map(|std::cmp::Reverse(e)| e);
                assert_eq!(q.pop(), want);
            }
        }
        while let Some(std::cmp::Reverse(e)) = reference.pop() {
            assert_eq!(q.pop(), Some(e));
        }
        assert!(q.is_empty());
    }

    #[test]
    fn lanes_keep_the_heap_order() {
        // The same events through the heap alone and through lanes (some hints wrong).
        let mut plain: EventQueue<u32> = EventQueue::new();
        let mut laned: EventQueue<u32> = EventQueue::new();
        let mut x: u64 = 7;
        let mut out = (Vec::new(), Vec::new());
        for i in 0..2000u32 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let now = plain.now();
            let at = Time(now.ps() + (x >> 33) % 50);
            let lane = ((x >> 20) % 20) as usize;
            plain.at(at, i);
            laned.at_in_lane(lane, at, i);
            if x % 3 == 0 {
                out.0.push(plain.pop());
                out.1.push(laned.pop());
                assert_eq!(plain.peek_time(), laned.peek_time());
                assert_eq!(plain.len(), laned.len());
            }
        }
        while let Some(e) = plain.pop() {
            out.0.push(Some(e));
            out.1.push(laned.pop());
        }
        assert!(laned.is_empty());
        assert_eq!(out.0, out.1);
    }

    #[test]
    fn a_lane_keeps_its_order_as_its_ring_grows_and_wraps() {
        let mut lane = Lane::new();
        let (mut pushed, mut popped) = (0u64, 0u64);
        let mut take = |lane: &mut Lane<u64>| {
            let e = lane.pop_front()?;
            assert_eq!((e.seq, e.ev), (popped, popped));
            popped += 1;
            Some(())
        };
        for round in 0..60 {
            for _ in 0..round % 7 + 1 {
                lane.push_back(Entry {
                    at: Time(pushed),
                    seq: pushed,
                    ev: pushed,
                });
                pushed += 1;
            }
            for _ in 0..round % 5 {
                take(&mut lane);
            }
        }
        while take(&mut lane).is_some() {}
        assert_eq!(popped, pushed);
        assert!(lane.front().is_none());
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
