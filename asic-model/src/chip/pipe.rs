//! The pipes: each runs the program's ingress and egress gresses, and issues one packet per
//! cycle into each. A gress is fully pipelined with a fixed latency (its parser, the cycles of
//! each stage it occupies, its deparser: `pipelines::pipe::GressTiming`), so a packet issued
//! at cycle `i` leaves at `i + latency`, and exits come in issue order. That is why the chip
//! runs a gress's whole program at the exit cycle, in one go (see `pipelines::pipe`).

use super::packet::InPipe;
use super::{Chip, ChipEvent};
use crate::kernel::Schedule;
use pipelines::pipe::{GressOutputs, LoadedGress};
use pipelines::program::Gress;
use pipelines::time::{Clock, Time};

/// `drop_ctl` bit 0: drop the packet (TNA: "disable unicast, multicast and resubmit").
const DROP_CTL_DROP: u8 = 1;
/// `drop_ctl` bit 2: make no mirror copy (TNA: "disable mirroring").
const DROP_CTL_NO_MIRROR: u8 = 4;

/// One pipe: its two gresses and their issue slots and occupancy.
pub(super) struct Pipe {
    pub(super) ingress: LoadedGress,
    pub(super) egress: LoadedGress,
    /// The first cycle the ingress gress can issue the next packet.
    ingress_next_issue: u64,
    /// The same for the egress gress.
    pub(super) egress_next_issue: u64,
    /// Packets issued into the ingress pipe (front-panel, recirculated, generated).
    ingress_issued: u64,
    /// Packets in the ingress pipe now (issued, not yet out of the deparser).
    pub(super) in_ingress: u32,
    /// Packets in the egress pipe now.
    pub(super) in_egress: u32,
}

impl Pipe {
    /// A pipe running `ingress` and `egress`, empty.
    pub(super) fn new(ingress: LoadedGress, egress: LoadedGress) -> Pipe {
        Pipe {
            ingress,
            egress,
            ingress_next_issue: 0,
            egress_next_issue: 0,
            ingress_issued: 0,
            in_ingress: 0,
            in_egress: 0,
        }
    }
}

/// A gress issues one packet per cycle: the first cycle edge at or after `now` that is not
/// before `next` (the cycle after the previous issue); `next` moves past it.
#[inline]
pub(super) fn take_issue_slot(clock: Clock, now: Time, next: &mut u64) -> u64 {
    let issue = clock.cycle_at_or_after(now).max(*next);
    *next = issue + 1;
    issue
}

impl Chip {
    /// The packet takes its pipe's next ingress issue slot (it arrived whole, was generated,
    /// or came back from a recirculation port).
    pub(super) fn issue_ingress(&mut self, now: Time, pkt: u32, q: &mut impl Schedule<ChipEvent>) {
        let port = self.packets.slots[pkt as usize].ingress_port;
        let pipe_id = self.ports[port as usize].pipe as usize;
        let pipe = &mut self.pipes[pipe_id];
        let issue = take_issue_slot(self.clock, now, &mut pipe.ingress_next_issue);
        pipe.ingress_issued += 1;
        pipe.in_ingress += 1;
        let done = self.clock.time_of(issue + self.ingress_latency);
        let slot = &mut self.packets.slots[pkt as usize];
        slot.issue = issue;
        slot.in_pipe = InPipe::Ingress(pipe_id as u16);
        // Issue slots only move forward and the latency is fixed: exits come in time order.
        q.at_in_lane(2 * pipe_id, done, ChipEvent::IngressDone { pkt });
    }

    /// What a gress's exit does with its outputs `out` for packet `h` besides the packet's
    /// path: count a parse failure the program went on with, send its advanced-flow-control
    /// request, and mirror the packet unless `drop_ctl` disables mirroring. Returns whether
    /// the program dropped the packet (the caller drops it with its gress's reason).
    #[inline]
    pub(super) fn gress_exit(
        &mut self,
        now: Time,
        h: u32,
        gress: Gress,
        out: &GressOutputs,
        q: &mut impl Schedule<ChipEvent>,
    ) -> bool {
        self.parser_errors_continued[gress as usize] += (out.parser_error != 0) as u64;
        let r = &out.requests;
        if r.adv_flow_ctl != 0 {
            self.afc_request(now, r.adv_flow_ctl, q);
        }
        // TNA's drop_ctl: bit 0 drops the packet (its unicast and multicast copies), bit 1
        // only a copy to the CPU (none is modelled), bit 2 the mirror copy. So "mirror and
        // drop" (a truncated copy of a packet that is then dropped) makes the copy.
        let drop = out.drop_ctl & DROP_CTL_DROP != 0;
        if r.mirror_session != 0 && out.drop_ctl & DROP_CTL_NO_MIRROR == 0 {
            self.mirror(now, h, gress, r, drop, q);
        }
        drop
    }

    /// Packets in `pipe`'s ingress and egress pipes now (issued, not yet out of the deparser).
    pub fn pipe_occupancy(&self, pipe: u16) -> (u32, u32) {
        self.pipes
            .get(pipe as usize)
            .map_or((0, 0), |p| (p.in_ingress, p.in_egress))
    }

    /// Packets issued into `pipe`'s ingress pipe so far (each took one issue slot).
    pub fn ingress_issued(&self, pipe: u16) -> u64 {
        self.pipes
            .get(pipe as usize)
            .map_or(0, |p| p.ingress_issued)
    }

    /// Cycles a packet spends in the ingress pipe.
    pub fn ingress_latency_cycles(&self) -> u64 {
        self.ingress_latency
    }

    /// Cycles a packet spends in the egress pipe.
    pub fn egress_latency_cycles(&self) -> u64 {
        self.egress_latency
    }

    /// Every pipe's loaded gress (for the control plane, which writes all pipes alike).
    pub(crate) fn gresses_mut(&mut self, gress: Gress) -> impl Iterator<Item = &mut LoadedGress> {
        self.pipes.iter_mut().map(move |p| match gress {
            Gress::Ingress => &mut p.ingress,
            Gress::Egress => &mut p.egress,
        })
    }

    /// One pipe's loaded gress (for reading state, which differs per pipe).
    pub fn gress(&self, pipe: u16, gress: Gress) -> Option<&LoadedGress> {
        self.pipes.get(pipe as usize).map(|p| match gress {
            Gress::Ingress => &p.ingress,
            Gress::Egress => &p.egress,
        })
    }
}
