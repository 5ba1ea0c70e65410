//! The egress FIFO bound: per port, the packets the TM has served that have not started on
//! the wire (in the egress pipe, or out of it and waiting for the MAC) are at most the
//! profile's `plumbing.egress_fifo_packets`. The TM does not serve a port whose FIFO is full.
//!
//! The pacer serves a port just in time, so the FIFO stays short in steady state; the bound
//! matters when something lets served packets pile up before the MAC (PFC frames sent ahead of
//! data, an egress pipe longer than the frames, advanced flow control's leak), and it sets a
//! port's rate when the egress pipe holds more than the FIFO's worth of frames.

use super::{Chip, ChipEvent};
use crate::kernel::Schedule;
use pipelines::time::Time;
use std::collections::VecDeque;

/// One port's egress FIFO, as counts and times.
pub(super) struct EgressFifo {
    /// The bound, packets.
    bound: u32,
    /// Packets the TM has served that are in the egress pipe (or on the path that bypasses
    /// it).
    pub(super) in_pipe: u32,
    /// Start times of packets out of the egress pipe that may not have started on the wire
    /// (in order; entries at or before now are gone).
    starts: VecDeque<Time>,
    /// The TM skipped a service because the FIFO was full of packets still in the egress
    /// pipe: serve the port when one leaves it.
    blocked: bool,
}

impl EgressFifo {
    /// An empty FIFO of `bound` packets (its start times preallocated, up to 4096, so the
    /// steady state allocates nothing).
    pub(super) fn new(bound: u32) -> EgressFifo {
        EgressFifo {
            bound,
            in_pipe: 0,
            starts: VecDeque::with_capacity(bound.min(4096) as usize),
            blocked: false,
        }
    }

    /// A packet out of the egress pipe starts on the wire at `start`: if that is after `now`
    /// it waits in the FIFO until then.
    #[inline]
    pub(super) fn wait_for_wire(&mut self, start: Time, now: Time) {
        if start > now {
            self.starts.push_back(start);
        }
    }
}

impl Chip {
    /// The TM is about to serve `port` at `now`: whether its egress FIFO is full. If it is,
    /// the service is put off until the first waiting packet starts on the wire or, when
    /// every packet is still in the egress pipe, until one leaves it.
    #[inline]
    pub(super) fn egress_fifo_full(
        &mut self,
        now: Time,
        port: u16,
        q: &mut impl Schedule<ChipEvent>,
    ) -> bool {
        let f = &mut self.ports[port as usize].fifo;
        while f.starts.front().is_some_and(|&s| s <= now) {
            f.starts.pop_front();
        }
        if (f.in_pipe + f.starts.len() as u32) < f.bound {
            return false;
        }
        match f.starts.front() {
            Some(&s) => self.schedule_dequeue(port, s, q),
            None => f.blocked = true,
        }
        true
    }

    /// A packet served from the TM's `port` left the egress pipe, or was dropped there:
    /// the egress FIFO has room again if it was full of packets in the pipe.
    pub(super) fn left_egress_pipe(
        &mut self,
        now: Time,
        port: u16,
        q: &mut impl Schedule<ChipEvent>,
    ) {
        let f = &mut self.ports[port as usize].fifo;
        f.in_pipe -= 1;
        if f.blocked {
            f.blocked = false;
            if self.tm.has_packets(port) {
                self.serve_paced(port, now, q);
            }
        }
    }
}
