//! Lockstep mode's per-cycle view of the chip.
//!
//! In lockstep the driver ([`crate::kernel::Lockstep`]) calls [`Chip::tick`] at every cycle
//! edge of the chip's clock, before the events of that instant, whether or not anything
//! happens. A tick only looks: it adds up how many packets each pipe holds at each edge
//! (the occupancy a teacher plots cycle by cycle), and changes nothing the events read, so
//! a lockstep run and an event-driven run give the same event trace and outputs.

use super::Chip;
use serde::Serialize;

/// What lockstep mode saw at the cycle edges it visited.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct LockstepCounters {
    /// Cycle edges visited.
    pub cycles: u64,
    /// The last cycle visited.
    pub last_cycle: u64,
    /// Packets in an ingress pipe (issued or waiting for the issue slot, not yet out of
    /// the deparser), summed over every pipe and every visited edge: packet-cycles.
    pub ingress_packet_cycles: u64,
    /// The same for egress pipes.
    pub egress_packet_cycles: u64,
    /// Most packets one pipe's ingress held at an edge.
    pub peak_ingress: u32,
    /// Most packets one pipe's egress held at an edge.
    pub peak_egress: u32,
}

impl Chip {
    /// Lockstep: cycle `cycle` of the pipe clock begins (see the module comment). Looks at
    /// the pipes and counts; changes nothing the events read.
    pub fn tick(&mut self, cycle: u64) {
        let l = &mut self.lockstep;
        l.cycles += 1;
        l.last_cycle = cycle;
        for p in &self.pipes {
            l.ingress_packet_cycles += p.in_ingress as u64;
            l.egress_packet_cycles += p.in_egress as u64;
            l.peak_ingress = l.peak_ingress.max(p.in_ingress);
            l.peak_egress = l.peak_egress.max(p.in_egress);
        }
    }

    /// What lockstep mode saw (all zero when the chip ran event-driven).
    pub fn lockstep_counters(&self) -> LockstepCounters {
        self.lockstep
    }
}
