//! The packets inside the chip: their bytes and what the chip knows of them between events.
//! The TM holds only descriptors (a handle and a length); the bytes stay here, in buffers the
//! store recycles.

use pipelines::time::Time;
use tm::{Dequeued, Trimmed};

/// A packet inside the chip.
#[derive(Debug, Default)]
pub(super) struct Packet {
    /// The bytes, no FCS (what the gresses parse and deparse in place).
    pub(super) data: Vec<u8>,
    /// The port it came in on (a recirculation or generator port for those packets).
    pub(super) ingress_port: u16,
    /// When its first bit reached the ingress MAC (`ingress_mac_tstamp`).
    pub(super) rx_start: Time,
    /// The caller's tag of the frame it came in as ([`super::Chip::receive`]; 0: none), kept
    /// by every copy made of it: the chip never reads it, so whatever the program does to the
    /// bytes, the caller can still tell whose packet is inside ([`super::Chip::held_tags`]).
    pub(super) tag: u32,
    /// It stands for the tagged frame inside the chip: the packet that came in, a multicast
    /// copy of it for a front-panel port, or a mirror copy made as the packet itself was
    /// dropped (a trimmed header, a deflected packet's UPDATE); not a record copied beside a
    /// packet that goes on. What [`super::Chip::held_tags`] counts.
    pub(super) carries: bool,
    /// The port the TM queued it for.
    pub(super) egress_port: u16,
    /// What the TM said when the packet left it (queue, depths, enqueue time, ECN).
    pub(super) deq: Option<Dequeued>,
    /// When the TM handed it out.
    pub(super) deq_time: Time,
    /// The cycle it was issued into the pipe it is in (ingress, then egress): kept here
    /// rather than in its exit event, so that every [`super::ChipEvent`] fits in 8 bytes (events
    /// are moved on every sift of the event heap).
    pub(super) issue: u64,
    /// Replication id (multicast copies; 0 otherwise).
    pub(super) rid: u16,
    /// Deflected by deflect-on-drop.
    pub(super) deflected: bool,
    /// A what-if mirror-on-drop copy (`plumbing.rs`), for its whole life: ingress sees
    /// `mirror_on_drop_flag`, and a refusal does not copy it again.
    pub(super) mirror_on_drop: bool,
    /// Its ingress set TNA's `bypass_egress`: it skips the egress pipe (`queueing.rs`).
    pub(super) bypass_egress: bool,
    /// The colour its ingress gave it (TNA's `packet_color`), for the TM's admission.
    pub(super) color: u8,
    /// Made inside the chip (a mirror copy or a generated packet, or a multicast copy of
    /// one): its program may end it as the record it is ([`super::Chip::consumed`]).
    pub(super) made_here: bool,
    /// In use (not in the free list).
    live: bool,
    /// The pipe stage it is in, by the events' account: what lockstep mode checks cycle by
    /// cycle against the pipes' counts and latencies.
    pub(super) in_pipe: InPipe,
}

impl Packet {
    /// What-if trimming: keep the first `t.bytes` bytes and, if that cut any, set the flag;
    /// a header returned to its sender gets its addresses swapped.
    pub(super) fn trim(&mut self, t: Trimmed) {
        if self.data.len() > t.bytes as usize {
            self.data.truncate(t.bytes as usize);
            if let Some(m) = t.mark {
                // The configuration keeps the flag's byte among those kept.
                self.data[m.offset as usize] |= m.mask;
            }
        }
        if let Some((_, back)) = t.returned_to {
            swap_addresses(&mut self.data, back.ethernet_offset as usize);
        }
    }
}

/// What-if return-to-sender (`tm::config::ReturnToSender`): swap the Ethernet destination
/// and source of the frame at `eth` in `data` and, if it is IPv4, the IPv4 source and
/// destination (checksums unchanged: a ones' complement sum does not depend on word order).
/// Bytes the packet does not have are left alone.
fn swap_addresses(data: &mut [u8], eth: usize) {
    if data.len() >= eth + 12 {
        for i in 0..6 {
            data.swap(eth + i, eth + 6 + i);
        }
    }
    if data.len() >= eth + 34 && data[eth + 12..eth + 14] == [0x08, 0x00] {
        for i in 0..4 {
            data.swap(eth + 26 + i, eth + 30 + i);
        }
    }
}

/// Which gress a packet is in (issued, or waiting for its issue slot, and not yet out of
/// the deparser), if any.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) enum InPipe {
    /// In the TM, on the MAC, or outside the chip.
    #[default]
    No,
    /// In the ingress of pipe `.0`.
    Ingress(u16),
    /// In the egress of pipe `.0`.
    Egress(u16),
}

/// Packet storage that reuses its buffers, so the steady state allocates nothing.
#[derive(Default)]
pub(super) struct PacketStore {
    pub(super) slots: Vec<Packet>,
    free: Vec<u32>,
}

impl PacketStore {
    #[inline]
    pub(super) fn alloc(&mut self) -> u32 {
        match self.free.pop() {
            Some(h) => {
                let p = &mut self.slots[h as usize];
                p.deq = None;
                p.tag = 0;
                p.carries = false;
                p.rid = 0;
                p.deflected = false;
                p.mirror_on_drop = false;
                p.bypass_egress = false;
                p.color = 0;
                p.made_here = false;
                p.live = true;
                p.in_pipe = InPipe::No;
                h
            }
            None => {
                self.slots.push(Packet {
                    live: true,
                    ..Packet::default()
                });
                (self.slots.len() - 1) as u32
            }
        }
    }

    #[inline]
    pub(super) fn release(&mut self, h: u32) {
        let p = &mut self.slots[h as usize];
        p.data.clear();
        p.live = false;
        self.free.push(h);
    }

    /// Every packet in the store.
    pub(super) fn live_packets(&self) -> impl Iterator<Item = &Packet> {
        self.slots.iter().filter(|p| p.live)
    }

    pub(super) fn live(&self) -> usize {
        self.slots.len() - self.free.len()
    }
}
