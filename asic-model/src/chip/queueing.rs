//! The traffic manager's side of the life of a packet: a packet offered to the TM for a
//! (port, queue) is admitted or refused (a refused packet asking for deflection is offered to
//! the deflect-on-drop port), and the TM serves each port when the pacer says, handing the
//! packet to the egress pipe. The TM itself (`tm`) keeps descriptors only; the bytes stay in
//! the chip's packet store.
//!
//! **What-if trimming** (`config.tm.trim`, `tm::config::TrimConfig`; no Tofino does it): the
//! TM may admit a packet it would have refused as a header in the port's header queue; the
//! chip then cuts the packet's bytes to what the TM charged and, if bytes were cut, sets the
//! configured flag. The packet is the same packet (it is not a drop), so conservation holds;
//! the bytes it lost are counted in the TM's `trimmed_bytes`. A header the header queue
//! refuses may go back to its sender (`return_to_sender`): the TM queues it on the port it
//! came in on and the chip swaps its addresses. IPv4 and UDP lengths are left
//! as they were, as NDP's cut-payload switches leave them: a receiver sees the cut from the
//! flag or from a frame shorter than its headers say.
//!
//! **What-if mirror-on-drop** (`config.mirror_on_drop`, `plumbing.rs`; no Tofino does it): a
//! packet admission refuses is still dropped with the TM's reason, after a truncated copy of
//! it was offered to the mirror-on-drop port as a packet of its own.
//!
//! A packet whose ingress set TNA's `bypass_egress` does not enter the egress pipe. On Tofino
//! the egress parser buffer hands it straight to the egress buffer in front of the MAC (the
//! "warp" path: Intel's tofino-model sends it from the TM to the port without running the
//! egress pipe, and counts it in the egress buffer's `warp_rcv_pkt` and the parser buffer's
//! `egr_bypass_count` instead of the deparser's `dprsr_rcv_pkt`). So it takes no egress issue
//! slot and spends no egress latency (the parser, stages and deparser that `L_e` counts):
//! it reaches the MAC at the first cycle edge at or after its service. The public sources give
//! the warp path no latency of its own, and the model gives it none, as it gives none to the
//! buffers around the egress pipe. It reaches the MAC after the frames served before it
//! (the model keeps a port's frames in service order, which the pacer relies on).

use super::packet::InPipe;
use super::pipe::take_issue_slot;
use super::{Chip, ChipEvent, DropReason};
use crate::kernel::Schedule;
use crate::mac::slot_time;
use pipelines::time::Time;
use tm::{Admitted, EnqueueRequest, Refusal};

impl Chip {
    /// Offer packet `h` to the TM for (`port`, `queue`); a refusal deflects it to the
    /// deflect-on-drop port when `deflect` and the chip has one, or drops it (after the
    /// what-if mirror-on-drop copied it, if configured).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn enqueue_to(
        &mut self,
        now: Time,
        h: u32,
        port: u16,
        queue: u16,
        rid: u16,
        cos: u8,
        deflect: bool,
        q: &mut impl Schedule<ChipEvent>,
    ) {
        let mut port = port;
        match self.offer(now, h, port, queue, cos, false) {
            Ok(Admitted {
                trimmed: Some(t), ..
            }) => {
                if let Some((back, _)) = t.returned_to {
                    port = back;
                }
                self.packets.slots[h as usize].trim(t)
            }
            Ok(_) => {}
            Err(refusal) => {
                let from = self.packets.slots[h as usize].ingress_port;
                let dod = self.plumbing.dod.filter(|_| deflect);
                let to = dod.and_then(|d| Some((self.on_drop_port(d.port, from)?, d.queue)));
                let Some((to, to_queue)) = to else {
                    // A copy is never copied again: the configuration check keeps
                    // mirror-on-drop and deflect-on-drop apart.
                    let copy = self.plumbing.mirror_on_drop.filter(|_| {
                        refusal.is_admission() && !self.packets.slots[h as usize].mirror_on_drop
                    });
                    if let Some(m) = copy {
                        self.mirror_on_drop(now, h, m, q);
                    }
                    return self.drop_packet(h, now, DropReason::Tm(refusal));
                };
                port = to;
                if self.offer(now, h, port, to_queue, cos, true).is_err() {
                    return self.drop_packet(h, now, DropReason::DeflectRefused);
                }
                self.plumbing.counters.deflected += 1;
                self.packets.slots[h as usize].deflected = true;
            }
        }
        self.admitted(now, h, port, rid, q);
    }

    /// The TM's verdict on packet `h` for (`port`, `queue`) at `now`, traced; `deflected`:
    /// this is the second offer, to the deflect-on-drop port.
    pub(super) fn offer(
        &mut self,
        now: Time,
        h: u32,
        port: u16,
        queue: u16,
        cos: u8,
        deflected: bool,
    ) -> Result<Admitted, Refusal> {
        self.before_tm_change(now);
        let slot = &self.packets.slots[h as usize];
        let request = EnqueueRequest {
            port,
            queue,
            ingress_port: slot.ingress_port,
            priority: cos,
            color: slot.color,
            bytes: slot.data.len() as u32,
            handle: h,
            now_ps: now.ps(),
        };
        let verdict = self.tm.enqueue(request);
        if self.trace.is_some() {
            self.trace_enqueue(now, &request, &verdict, deflected);
        }
        verdict
    }

    /// Packet `h` is queued for `port` with replication id `rid`: the port is served when its
    /// pacer says.
    pub(super) fn admitted(
        &mut self,
        now: Time,
        h: u32,
        port: u16,
        rid: u16,
        q: &mut impl Schedule<ChipEvent>,
    ) {
        let slot = &mut self.packets.slots[h as usize];
        slot.egress_port = port;
        slot.rid = rid;
        self.serve_paced(port, now, q);
    }

    /// The TM serves `port` (a pending `Dequeue` ran): unless the egress FIFO is full, the
    /// next packet of the port's scheduler takes its pipe's next egress issue slot (or, if it
    /// bypasses egress, goes to the MAC), and the port's next service is paced after it.
    pub(super) fn dequeue(&mut self, now: Time, port: u16, q: &mut impl Schedule<ChipEvent>) {
        self.ports[port as usize].pacer.run();
        if self.egress_fifo_full(now, port, q) {
            return;
        }
        self.before_tm_change(now);
        let Some(d) = self.tm.dequeue(port, now.ps()) else {
            // Packets may wait in paused queues: come back when a pause expires. A resume
            // (by frame or request) serves the port itself.
            if let Some(t) = self.tm.next_eligible_time(port, now.ps()) {
                self.schedule_dequeue(port, Time(t).max(now), q);
            }
            return;
        };
        let p = &mut self.ports[port as usize];
        p.fifo.in_pipe += 1;
        let pipe_id = p.pipe as usize;
        let slot = &mut self.packets.slots[d.handle as usize];
        let done = if slot.bypass_egress {
            // The warp path (see the module comment).
            let edge = self.clock.time_of(self.clock.cycle_at_or_after(now));
            p.pacer.last_exit().map_or(edge, |t| t.max(edge))
        } else {
            let pipe = &mut self.pipes[pipe_id];
            let issue = take_issue_slot(self.clock, now, &mut pipe.egress_next_issue);
            pipe.in_egress += 1;
            slot.in_pipe = InPipe::Egress(pipe_id as u16);
            slot.issue = issue;
            self.clock.time_of(issue + self.egress_latency)
        };
        slot.deq = Some(d);
        slot.deq_time = now;
        q.at_in_lane(
            2 * pipe_id + 1,
            done,
            ChipEvent::EgressDone { pkt: d.handle },
        );
        // Pace the port: predict from the stored length when this frame and its gap will
        // have left the wire, and serve the port next so that the next packet leaves the
        // egress pipe at the last cycle edge before then; the MAC holds it until the wire is
        // free, so a backlogged port sends back to back at exactly line rate.
        let wire_free = p.pacer.add_frame(done, slot_time(d.bytes as usize, p.gbps));
        let next = self.paced_service(wire_free, now);
        self.ports[port as usize].pacer.next_at = next;
        if self.tm.has_packets(port) {
            self.schedule_dequeue(port, next, q);
        }
        if self.trace.is_some() {
            self.trace_dequeue(d.handle);
        }
    }
}
