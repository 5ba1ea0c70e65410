//! Ingress: at the exit of the ingress pipe the program runs on the packet, and its outputs
//! decide where the packet goes: one unicast port (the common case), its pipe's first
//! recirculation port (`recirculate`), the members of a multicast group (one TM enqueue per
//! copy, each with its replication id), a mirror copy, an advanced-flow-control request, or a
//! drop with its reason. Every destination is offered to the TM (`queueing.rs`), with the
//! request to bypass egress (`bypass_egress`) if the program made it.

use super::depth::PublishedDepths;
use super::packet::InPipe;
use super::port::PortKind;
use super::{Chip, ChipEvent, DropReason};
use crate::kernel::Schedule;
use crate::trace::Origin;
use pipelines::pipe::GressInputs;
use pipelines::program::Gress;
use pipelines::time::Time;

impl Chip {
    /// Packet `h` leaves the ingress deparser: the ingress program runs, then the packet goes
    /// to its destinations (its unicast port, or its pipe's recirculation port, and the
    /// members of its multicast group), is mirrored, or is dropped with a reason.
    pub(super) fn ingress_done(&mut self, now: Time, h: u32, q: &mut impl Schedule<ChipEvent>) {
        let slot = &mut self.packets.slots[h as usize];
        let inputs = GressInputs {
            ingress_port: slot.ingress_port,
            ingress_mac_ns: slot.rx_start.ns(),
            issue_cycle: slot.issue,
            mirror_on_drop: slot.mirror_on_drop,
            ..GressInputs::default()
        };
        let in_port = &mut self.ports[slot.ingress_port as usize];
        let pipe = in_port.pipe as usize;
        if in_port.kind == PortKind::Recirc {
            in_port.counters.rx_packets += 1;
            in_port.counters.rx_bytes += slot.data.len() as u64;
        }
        let depths = PublishedDepths {
            export: self.depths.as_ref(),
            tm: &self.tm,
        };
        // The packet has left the ingress pipe (its program runs at the exit).
        let p = &mut self.pipes[pipe];
        p.in_ingress -= 1;
        slot.in_pipe = InPipe::No;
        let ingress = &mut p.ingress;
        // The outputs are read where the gress returned them (moving them out copied the
        // whole record).
        let res = match self.trace.as_deref_mut() {
            None => ingress.process_with_depths(&mut slot.data, &inputs, &depths),
            Some(t) => {
                let (pipe, latency) = (pipe as u16, self.ingress_latency);
                t.ingress(h, pipe, latency, ingress, slot, &inputs, &depths)
            }
        };
        let Ok(out) = &res else {
            return self.drop_packet(h, now, DropReason::IngressParserError);
        };
        if self.gress_exit(now, h, Gress::Ingress, out, q) {
            return self.drop_packet(h, now, DropReason::IngressProgramDrop);
        }
        let r = &out.requests;
        let slot = &mut self.packets.slots[h as usize];
        slot.bypass_egress = r.bypass_egress;
        slot.color = r.packet_color;
        let unicast = |port: u16| match self.ports.get(port as usize) {
            Some(p) if p.kind != PortKind::PktGen => Ok(port),
            _ => Err(DropReason::InvalidEgressPort),
        };
        if !r.recirculate && r.mcast_group == 0 {
            // One unicast copy, the common case: no list of destinations.
            let port = out.ucast_egress_port.ok_or(DropReason::NoEgressPort);
            return match port.and_then(unicast) {
                Ok(port) => {
                    let (queue, cos, dod) = (out.queue, r.ingress_cos, r.deflect_on_drop);
                    self.enqueue_to(now, h, port, queue, 0, cos, dod, q)
                }
                Err(reason) => self.drop_packet(h, now, reason),
            };
        }
        // Destinations: the unicast port (or this pipe's first recirculation port), then
        // the multicast group's members.
        let mut dests = std::mem::take(&mut self.plumbing.dests);
        dests.clear();
        let mut reason = None;
        let recirc = if r.recirculate {
            self.profile.recirc_port(pipe as u16, 0)
        } else {
            None
        };
        if let Some(rp) = recirc {
            dests.push((rp, out.queue, 0));
        } else if let Some(port) = out.ucast_egress_port {
            match unicast(port) {
                Ok(port) => dests.push((port, out.queue, 0)),
                Err(r) => reason = Some(r),
            }
        }
        if r.mcast_group != 0 && reason.is_none() {
            match self.plumbing.mcast.get(&r.mcast_group) {
                Some(members) => dests.extend(members.iter().map(|&(p, rid)| (p, out.queue, rid))),
                None => reason = Some(DropReason::UnknownMcastGroup),
            }
        }
        if dests.is_empty() && reason.is_none() {
            reason = Some(DropReason::NoEgressPort);
        }
        if let Some(reason) = reason {
            self.plumbing.dests = dests;
            return self.drop_packet(h, now, reason);
        }
        // Every copy but the last is a new packet; the last is the original.
        let n = dests.len();
        self.plumbing.counters.mcast_copies += n as u64 - 1;
        for (i, &(port, queue, rid)) in dests.iter().enumerate() {
            let c = if i + 1 == n {
                h
            } else {
                let c = self.copy_packet(h, &[], usize::MAX);
                let front = port < self.profile.ports_total() as u16;
                let carries = front && self.packets.slots[h as usize].carries;
                let copy = &mut self.packets.slots[c as usize];
                // Copies carry the TM's metadata, the request to bypass egress included.
                copy.bypass_egress = r.bypass_egress;
                copy.color = r.packet_color;
                copy.carries = carries;
                if self.trace.is_some() {
                    let group = r.mcast_group;
                    self.trace_made(c, Some(h), Origin::Multicast { group, rid }, now);
                }
                c
            };
            self.enqueue_to(
                now,
                c,
                port,
                queue,
                rid,
                r.ingress_cos,
                r.deflect_on_drop,
                q,
            );
        }
        self.plumbing.dests = dests;
    }
}
