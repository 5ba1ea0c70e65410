//! The dequeue pacer: when the TM serves a port. The TM does not wait for the MAC to ask; it
//! serves each port just early enough that the packet, after the egress pipe's fixed latency,
//! reaches the MAC as the previous frame and its inter-frame gap end (a packet that bypasses
//! egress gets there sooner and waits for the wire). It predicts when the
//! wire will be free from the lengths of the packets it has already served
//! ([`crate::mac::slot_time`] at the port's rate), so a backlogged port sends back to back at
//! exactly line rate, and a packet that comes to an idle port is served at once.
//!
//! The prediction counts each served frame's stored length, but the egress program may
//! change it (strip bridged metadata, add or remove headers) or drop the packet: when a
//! frame leaves the egress pipe with another slot than predicted, the prediction is made
//! again from when the MAC's wire is free and the frames still in the egress pipe, and the
//! pending service moves with it, so the port paces on the bytes it sends.
//!
//! Each port has at most one service pending (a [`ChipEvent::Dequeue`] with a sequence
//! number): a new one supersedes it, and an event whose number is not the port's is stale.
//! Pauses (PFC, advanced flow control) and the egress FIFO bound hold services back; their
//! modules call [`Chip::kick_dequeue`] or [`Chip::serve_paced`] when the port may go again.

use super::{Chip, ChipEvent};
use crate::kernel::Schedule;
use pipelines::time::Time;
use std::collections::VecDeque;

/// A port's pacing state.
#[derive(Clone, Debug, Default)]
pub(super) struct DequeuePacer {
    /// When the wire will be free after the packets the TM has already served (and the PFC
    /// frames sent ahead of them), as predicted from their stored lengths.
    pub(super) wire_free_at: Time,
    /// The served frames still in the egress pipe, in service order (the egress pipe keeps
    /// it): when each may start (its exit) and the slot predicted for it. It grows to the
    /// most frames a port has in its egress pipe at once, then is reused.
    in_flight: VecDeque<(Time, Time)>,
    /// When the TM may next serve the port (line rate).
    pub(super) next_at: Time,
    /// A `Dequeue` is pending.
    pending: bool,
    /// When the pending `Dequeue` runs.
    pending_at: Time,
    /// The pending `Dequeue`'s sequence number.
    seq: u32,
}

impl DequeuePacer {
    /// Whether a `Dequeue` numbered `seq` is the pending one (not superseded, not run).
    #[inline]
    pub(super) fn is_pending(&self, seq: u32) -> bool {
        self.pending && self.seq == seq
    }

    /// Whether a service is pending at or before `at`.
    #[inline]
    fn due_by(&self, at: Time) -> bool {
        self.pending && self.pending_at <= at
    }

    /// The pending service runs now.
    #[inline]
    pub(super) fn run(&mut self) {
        self.pending = false;
    }

    /// A served frame whose predicted slot is `slot` goes on the wire after the ones already
    /// predicted, not before `not_before` (its egress exit); returns when the wire will be
    /// free after it.
    #[inline]
    pub(super) fn add_frame(&mut self, not_before: Time, slot: Time) -> Time {
        self.in_flight.push_back((not_before, slot));
        self.add_control_frame(not_before, slot)
    }

    /// A frame the MAC sends ahead of the served ones (a PFC frame) takes `slot` of the wire:
    /// the served frames go after it.
    #[inline]
    pub(super) fn add_control_frame(&mut self, not_before: Time, slot: Time) -> Time {
        self.wire_free_at = self.wire_free_at.max(not_before) + slot;
        self.wire_free_at
    }

    /// When the last frame served and not yet out of the egress pipe leaves it, if any.
    #[inline]
    pub(super) fn last_exit(&self) -> Option<Time> {
        self.in_flight.back().map(|&(exit, _)| exit)
    }

    /// The oldest served frame left the egress pipe, taking `sent` of the wire (`None`: the
    /// egress dropped it); `mac_free` is when the MAC's wire is free now. Returns whether
    /// the prediction changed.
    #[inline]
    fn left_egress(&mut self, sent: Option<Time>, mac_free: Time) -> bool {
        let Some((_, predicted)) = self.in_flight.pop_front() else {
            return false;
        };
        if sent == Some(predicted) {
            return false;
        }
        self.wire_free_at = self
            .in_flight
            .iter()
            .fold(mac_free, |free, &(not_before, slot)| {
                free.max(not_before) + slot
            });
        true
    }
}

impl Chip {
    /// Serve `port` at `at` (superseding a pending service).
    #[inline]
    pub(super) fn schedule_dequeue(
        &mut self,
        port: u16,
        at: Time,
        q: &mut impl Schedule<ChipEvent>,
    ) {
        let p = &mut self.ports[port as usize].pacer;
        p.pending = true;
        p.pending_at = at;
        p.seq = p.seq.wrapping_add(1);
        // A service due now may run right after the event that asked for it, without the
        // queue, where the queue would run it (`Schedule::at_or_hold`).
        q.at_or_hold(at, ChipEvent::Dequeue { port, seq: p.seq });
    }

    /// Serve `port` when pacing allows, not before `earliest`, unless a service is due by
    /// then (one due later waits for a pause to end, and the packets that made this call may
    /// not be paused).
    #[inline]
    pub(super) fn serve_paced(
        &mut self,
        port: u16,
        earliest: Time,
        q: &mut impl Schedule<ChipEvent>,
    ) {
        let p = &self.ports[port as usize].pacer;
        let at = earliest.max(p.next_at);
        if !p.due_by(at) {
            self.schedule_dequeue(port, at, q);
        }
    }

    /// After a pause changed: serve `port` as soon as a packet may go and pacing allows,
    /// unless a service is already due by then.
    pub(super) fn kick_dequeue(&mut self, now: Time, port: u16, q: &mut impl Schedule<ChipEvent>) {
        let Some(t) = self.tm.next_eligible_time(port, now.ps()) else {
            return;
        };
        self.serve_paced(port, Time(t).max(now), q);
    }

    /// A frame of `port` left the egress pipe taking `sent` of the wire (`None`: dropped in
    /// egress). If that is not the slot predicted at its service, predict again and move the
    /// port's pending paced service to match.
    #[inline]
    pub(super) fn left_egress_pacing(
        &mut self,
        now: Time,
        port: u16,
        sent: Option<Time>,
        q: &mut impl Schedule<ChipEvent>,
    ) {
        let p = &mut self.ports[port as usize];
        if !p.pacer.left_egress(sent, p.mac.tx_free_at) {
            return;
        }
        let wire_free = p.pacer.wire_free_at;
        let next = self.paced_service(wire_free, now);
        let p = &mut self.ports[port as usize].pacer;
        let paced = p.pending && p.pending_at == p.next_at;
        p.next_at = next;
        // A service waiting for a pause to end stays where it is.
        if paced && p.pending_at != next {
            self.schedule_dequeue(port, next, q);
        }
    }

    /// When the TM should next serve a port whose wire will be free at `wire_free`: so that
    /// the packet leaves the egress pipe at the last cycle edge before then.
    #[inline]
    pub(super) fn paced_service(&self, wire_free: Time, now: Time) -> Time {
        let target_exit = self.clock.cycle_at_or_before(wire_free);
        self.clock
            .time_of(target_exit.saturating_sub(self.egress_latency))
            .max(now)
    }
}
