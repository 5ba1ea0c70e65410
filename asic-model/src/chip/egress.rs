//! Egress: at the exit of the egress pipe the program runs on the packet (with the TM's
//! metadata: queue, depths, queueing delay, replication id), may drop or mirror it or ask for
//! advanced flow control, and the port's MAC starts the frame when the wire is free. A
//! recirculation port's frame does not go to the wire: it comes back into the same pipe's
//! ingress through the port, `recirculation.latency_cycles` after it started, and arrives
//! whole one frame time (at the recirculation speed) later.

use super::packet::InPipe;
use super::port::PortKind;
use super::{Chip, ChipEvent, DropReason, Wire};
use crate::kernel::Schedule;
use crate::mac::{frame_time, slot_time};
use pipelines::pipe::GressInputs;
use pipelines::program::Gress;
use pipelines::time::Time;

impl Chip {
    /// Packet `h` leaves the egress deparser (or the bypass path): the egress program runs
    /// (unless it is the identity or the packet bypassed egress), then the MAC sends the frame
    /// as soon as the port is free, to the [`Wire`], or back into the pipe's ingress from a
    /// recirculation port.
    pub(super) fn egress_done(
        &mut self,
        now: Time,
        h: u32,
        q: &mut impl Schedule<ChipEvent>,
        wire: &mut impl Wire,
    ) {
        let slot = &mut self.packets.slots[h as usize];
        let port = slot.egress_port;
        let d = slot.deq.take().expect("a packet in egress has left the TM");
        slot.in_pipe = InPipe::No;
        // A packet that bypassed egress was never in the pipe (`queueing.rs`).
        let bypass = slot.bypass_egress;
        let pipe = &mut self.pipes[self.ports[port as usize].pipe as usize];
        pipe.in_egress -= u32::from(!bypass);
        let egress = &mut pipe.egress;
        // A gress that leaves every packet as it is and asks for nothing (the stock routers'
        // egress) is not run: its outputs would be the defaults.
        if !bypass && !egress.is_identity() {
            let inputs = GressInputs {
                ingress_port: slot.ingress_port,
                ingress_mac_ns: slot.rx_start.ns(),
                issue_cycle: slot.issue,
                egress_port: port,
                egress_queue: d.queue,
                enq_depth_cells: d.enq_depth_cells,
                deq_depth_cells: d.deq_depth_cells,
                enq_depth_pkts: d.enq_depth_pkts,
                deq_depth_pkts: d.deq_depth_pkts,
                enq_congest_stat: d.ecn_mark as u8,
                replication_id: slot.rid,
                queue_delay_ns: (slot.deq_time - Time(d.enq_time_ps)).ns(),
                deflected: slot.deflected,
                mirror_on_drop: false,
            };
            // The outputs are read in place, as after ingress.
            let res = match self.trace.as_deref_mut() {
                None => egress.process(&mut slot.data, &inputs),
                Some(t) => t.egress(h, egress, &mut slot.data, &inputs),
            };
            let Ok(out) = &res else {
                self.left_egress_pipe(now, port, q);
                self.left_egress_pacing(now, port, None, q);
                return self.drop_packet(h, now, DropReason::EgressParserError);
            };
            if self.gress_exit(now, h, Gress::Egress, out, q) {
                self.left_egress_pipe(now, port, q);
                self.left_egress_pacing(now, port, None, q);
                return self.drop_packet(h, now, DropReason::EgressProgramDrop);
            }
        }
        let len = self.packets.slots[h as usize].data.len();
        let p = &mut self.ports[port as usize];
        let slot = slot_time(len, p.gbps);
        let start = p.mac.start_data_frame(now, slot, len as u32);
        p.fifo.wait_for_wire(start, now);
        let c = &mut p.counters;
        c.tx_packets += 1;
        c.tx_bytes += len as u64;
        c.first_tx.get_or_insert(start);
        c.last_tx = Some(start);
        let kind = p.kind;
        let gbps = p.gbps;
        self.left_egress_pipe(now, port, q);
        self.left_egress_pacing(now, port, Some(slot), q);
        if kind == PortKind::Recirc {
            // The loopback: the frame comes back into this pipe's ingress through the same
            // port, its first bit `latency` after it left, whole one frame time later.
            self.plumbing.counters.recirculated += 1;
            let back = start + self.plumbing.recirc_latency;
            if self.trace.is_some() {
                self.trace_departure(h, port, start, Some(back));
            }
            let slot = &mut self.packets.slots[h as usize];
            slot.ingress_port = port;
            slot.rx_start = back;
            slot.rid = 0;
            slot.deflected = false;
            q.at(
                slot.rx_start + frame_time(len, gbps),
                ChipEvent::Arrive { pkt: h },
            );
            return;
        }
        if self.trace.is_some() {
            self.trace_departure(h, port, start, None);
        }
        wire.transmit_owned(port, start, &mut self.packets.slots[h as usize].data);
        self.packets.release(h);
    }
}
