//! Lockstep mode's per-cycle view of the chip.
//!
//! In lockstep the driver ([`crate::kernel::Lockstep`]) calls [`Chip::tick`] at every cycle
//! edge of the chip's clock, before the events of that instant, whether or not anything
//! happens. A tick adds up how many packets each pipe holds at each edge (the occupancy a
//! teacher plots cycle by cycle), and checks the event engine against a per-cycle reference
//! recomputed from the packets and the TM's descriptors:
//! - each pipe's packet counts, as the events keep them, equal the packets whose state says
//!   they are in that pipe;
//! - no packet is still in a gress after the cycle it leaves it (issue cycle + the gress's
//!   latency): the event engine delivered every exit on time;
//! - whenever the TM changed since the last edge, every count it keeps (per queue, port,
//!   priority group, pool, headroom) equals its recount from the queued descriptors.
//!
//! The packets and the TM change only in events, so the recount runs at the first edge after
//! an event ([`Chip::handle`] marks the chip touched); at the edges in between only the exit
//! check can change its verdict, and it is kept as the earliest exit cycle of the last
//! recount. The result is the same as recounting at every edge, at a cost per event instead
//! of per cycle.
//!
//! A disagreement is a [`LockstepCounters::violations`], the first described in
//! [`Chip::lockstep_violation`]. A tick changes nothing the events read, so a lockstep run
//! and an event-driven run give the same event trace and outputs.

use super::packet::InPipe;
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
    /// Cycle edges at which the event engine disagreed with the per-cycle reference (see
    /// the module comment): 0 in a correct model.
    pub violations: u64,
}

/// What lockstep mode keeps between edges besides its counters.
#[derive(Clone, Debug, Default)]
pub(super) struct LockstepCheck {
    /// An event ran since the last recount.
    pub(super) touched: bool,
    /// Per pipe: packets in ingress and in egress, recounted at the last recount.
    recount: Vec<(u32, u32)>,
    /// The earliest cycle a packet in a gress at the last recount leaves it (issue cycle +
    /// the gress's latency), and where; `None`: the pipes were empty.
    earliest_exit: Option<(u64, u16, &'static str, u64)>,
    /// The TM's activity (cells allocated and freed, refusals) at the last recount.
    tm_version: u64,
    /// The first disagreement.
    first: Option<String>,
}

impl Chip {
    /// Lockstep: cycle `cycle` of the pipe clock begins (see the module comment). Counts, and
    /// checks the event engine against the reference; changes nothing the events read.
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
        if let Err(e) = self.reference_check(cycle) {
            self.lockstep.violations += 1;
            self.lockstep_check.first.get_or_insert(e);
        }
    }

    /// The per-cycle reference: the pipes' counts and exits from the packets' state, the
    /// TM's counts from its descriptors.
    fn reference_check(&mut self, cycle: u64) -> Result<(), String> {
        if std::mem::take(&mut self.lockstep_check.touched) {
            self.recount_pipes(cycle)?;
        }
        if let Some((exit, pipe, gress, issue)) = self.lockstep_check.earliest_exit {
            if cycle > exit {
                return Err(format!(
                    "cycle {cycle}: a packet issued into pipe {pipe}'s {gress} at cycle {issue} \
                     is still there, {} cycles having passed",
                    exit - issue
                ));
            }
        }
        let c = self.tm.counters();
        let version = c.cells_allocated + c.cells_freed + c.drops.iter().sum::<u64>();
        let check = &mut self.lockstep_check;
        if version != check.tm_version {
            check.tm_version = version;
            self.tm
                .check_invariants()
                .map_err(|e| format!("cycle {cycle}: the TM's counts: {e}"))?;
        }
        Ok(())
    }

    /// The pipes' packet counts from the packets' state, against the events' counts; keeps
    /// the earliest exit of a packet in a gress for the edges until the next event.
    fn recount_pipes(&mut self, cycle: u64) -> Result<(), String> {
        let check = &mut self.lockstep_check;
        check.recount.clear();
        check.recount.resize(self.pipes.len(), (0, 0));
        check.earliest_exit = None;
        let (li, le) = (self.ingress_latency, self.egress_latency);
        for p in self.packets.live_packets() {
            let (pipe, latency, gress) = match p.in_pipe {
                InPipe::No => continue,
                InPipe::Ingress(pipe) => {
                    check.recount[pipe as usize].0 += 1;
                    (pipe, li, "ingress")
                }
                InPipe::Egress(pipe) => {
                    check.recount[pipe as usize].1 += 1;
                    (pipe, le, "egress")
                }
            };
            let exit = p.issue + latency;
            if check.earliest_exit.is_none_or(|(e, ..)| exit < e) {
                check.earliest_exit = Some((exit, pipe, gress, p.issue));
            }
        }
        for (pipe, (p, &(ig, eg))) in self.pipes.iter().zip(&check.recount).enumerate() {
            if (p.in_ingress, p.in_egress) != (ig, eg) {
                return Err(format!(
                    "cycle {cycle}: pipe {pipe} counts {} packets in ingress and {} in egress; \
                     its packets say {ig} and {eg}",
                    p.in_ingress, p.in_egress
                ));
            }
        }
        Ok(())
    }

    /// The first disagreement lockstep mode found between the event engine and its
    /// per-cycle reference, if any.
    pub fn lockstep_violation(&self) -> Option<&str> {
        self.lockstep_check.first.as_deref()
    }

    /// What lockstep mode saw (all zero when the chip ran event-driven).
    pub fn lockstep_counters(&self) -> LockstepCounters {
        self.lockstep
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chip::{ChipEvent, Wire};
    use crate::kernel::EventQueue;
    use pipelines::time::Time;

    /// Every packet to port 1, untouched.
    const TO_PORT_1: &str = r#"
struct headers_t {}
struct metadata_t {}
parser IngressParser(packet_in pkt, out headers_t hdr, out metadata_t meta,
                     out ingress_intrinsic_metadata_t ig_intr_md) {
    state start { transition accept; }
}
control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply { ig_tm_md.ucast_egress_port = 1; }
}
control IngressDeparser(packet_out pkt, inout headers_t hdr, in metadata_t meta,
                        in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply { }
}
parser EgressParser(packet_in pkt, out headers_t hdr, out metadata_t meta,
                    out egress_intrinsic_metadata_t eg_intr_md) {
    state start { transition accept; }
}
control Egress(inout headers_t hdr, inout metadata_t meta,
               in egress_intrinsic_metadata_t eg_intr_md,
               in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
               inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { }
}
control EgressDeparser(packet_out pkt, inout headers_t hdr, in metadata_t meta,
                       in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { }
}
Pipeline(IngressParser(), Ingress(), IngressDeparser(),
         EgressParser(), Egress(), EgressDeparser()) pipe;
Switch(pipe) main;
"#;

    struct Sink;
    impl Wire for Sink {
        fn transmit(&mut self, _: u16, _: Time, _: &[u8]) {}
    }

    /// A packet received on port 0, and the chip with its events.
    fn chip_with_a_packet() -> (Chip, EventQueue<ChipEvent>) {
        let profile = crate::profile::load("teaching").unwrap();
        let program = dsl::compile(TO_PORT_1, "to_port_1.p4", &profile.pipe)
            .unwrap()
            .program;
        let mut chip = Chip::new(profile, &program).unwrap();
        let mut q = EventQueue::new();
        chip.receive(0, Time::ZERO, &[0xa5; 64], 0, &mut q).unwrap();
        (chip, q)
    }

    /// [`chip_with_a_packet`] run until the packet is in pipe 0's ingress.
    fn chip_in_ingress() -> (Chip, EventQueue<ChipEvent>) {
        let (mut chip, mut q) = chip_with_a_packet();
        while chip.pipes[0].in_ingress == 0 {
            let (now, ev) = q.pop().unwrap();
            chip.handle(now, ev, &mut q, &mut Sink);
        }
        (chip, q)
    }

    /// Ticks every cycle up to `last`, running the events as the lockstep driver does.
    fn run_to(chip: &mut Chip, q: &mut EventQueue<ChipEvent>, last: u64) {
        for cycle in 0..=last {
            let t = chip.clock().time_of(cycle);
            chip.tick(cycle);
            while q.peek_time().is_some_and(|e| e <= t) {
                let (now, ev) = q.pop().unwrap();
                chip.handle(now, ev, q, &mut Sink);
            }
        }
    }

    #[test]
    fn a_correct_run_has_no_violation() {
        let (mut chip, mut q) = chip_with_a_packet();
        run_to(&mut chip, &mut q, 500);
        assert_eq!(
            chip.lockstep_counters().violations,
            0,
            "{:?}",
            chip.lockstep_violation()
        );
        assert!(chip.lockstep_counters().ingress_packet_cycles > 0);
    }

    /// The reference catches an engine that loses count of a pipe's packets, and one that
    /// delivers a pipe exit late.
    #[test]
    fn the_reference_catches_a_miscount_and_a_late_exit() {
        let (mut chip, _events) = chip_in_ingress();
        // Corrupt the pipe's count.
        chip.pipes[0].in_ingress += 1;
        chip.tick(0);
        let v = chip.lockstep_violation().unwrap();
        assert!(
            v.contains("pipe 0 counts 2 packets in ingress") && v.contains("say 1"),
            "{v}"
        );

        let (mut chip, _events) = chip_in_ingress();
        // The exit event is not run: the packet overstays its ingress.
        chip.tick(10_000);
        let v = chip.lockstep_violation().unwrap();
        assert!(v.contains("still there"), "{v}");
    }

    /// Between events the packets are not recounted, yet a packet overstaying its gress is
    /// caught at the first edge past its exit cycle, not before.
    #[test]
    fn a_late_exit_is_caught_at_its_cycle_without_an_event() {
        let (mut chip, _events) = chip_in_ingress();
        let exit = chip.packets.live_packets().next().unwrap().issue + chip.ingress_latency;
        chip.tick(exit - 1);
        chip.tick(exit);
        assert_eq!(
            chip.lockstep_counters().violations,
            0,
            "{:?}",
            chip.lockstep_violation()
        );
        chip.tick(exit + 1);
        let v = chip.lockstep_violation().unwrap();
        assert!(
            v.contains(&format!("cycle {}:", exit + 1)) && v.contains("still there"),
            "{v}"
        );
    }
}
