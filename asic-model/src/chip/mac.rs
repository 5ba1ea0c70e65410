//! The ports' MACs: when a port's receive side can take the next frame and its transmit side
//! can start the next one, frames received ([`Chip::receive`], where the life of a packet
//! begins), and the [`Wire`] transmitted frames go to.
//!
//! A MAC serialises one frame at a time at the port's line rate, with the Ethernet overhead
//! of [`crate::mac`] (preamble, minimum frame, FCS, inter-frame gap): a frame's slot is
//! [`slot_time`], and a frame is whole at the receiver [`frame_time`] after its first bit.
//! The chip is store-and-forward: a packet enters the ingress pipe once its last bit is in.
//! MAC control frames (EtherType 0x8808) are the MAC's own: it consumes them on receipt (PFC
//! acts, see `pfc.rs`), and sends PFC frames ahead of queued data.

use super::{Chip, ChipError, ChipEvent};
use crate::kernel::Schedule;
use crate::mac::{frame_time, slot_time};
use crate::pfc_frame::{self, PFC_OPCODE};
use pipelines::time::Time;
use std::collections::VecDeque;

/// Where transmitted frames go.
pub trait Wire {
    /// `frame` (no FCS) starts leaving `port` at `start`.
    fn transmit(&mut self, port: u16, start: Time, frame: &[u8]);

    /// [`Wire::transmit`] of a frame whose buffer the chip is done with: a wire may take the
    /// buffer, leaving an empty one in its place, instead of copying the bytes.
    #[inline]
    fn transmit_owned(&mut self, port: u16, start: Time, frame: &mut Vec<u8>) {
        self.transmit(port, start, frame);
    }
}

/// A received frame: borrowed (the chip copies it) or in a buffer the caller gives up (the
/// chip takes the buffer and leaves its own, empty, in its place).
enum Incoming<'a> {
    Borrowed(&'a [u8]),
    Owned(&'a mut Vec<u8>),
}

impl Incoming<'_> {
    #[inline]
    fn bytes(&self) -> &[u8] {
        match self {
            Incoming::Borrowed(b) => b,
            Incoming::Owned(v) => v,
        }
    }

    /// Put the frame's bytes into `data` (empty).
    #[inline]
    fn store(self, data: &mut Vec<u8>) {
        match self {
            Incoming::Borrowed(b) => data.extend_from_slice(b),
            Incoming::Owned(v) => std::mem::swap(data, v),
        }
    }
}

/// A port's MAC, as time: when each direction is free for the next frame.
#[derive(Clone, Debug, Default)]
pub(super) struct Mac {
    /// When the receive side can take the next frame (the previous one and its gap are in).
    pub(super) rx_free_at: Time,
    /// When the transmit side can start the next frame (the last one it has and its gap
    /// are out).
    pub(super) tx_free_at: Time,
    /// The data frames whose slots had not ended when the latest one was handed to the MAC:
    /// (start, end of slot, bytes). A port's transmit counters count a frame when the MAC
    /// takes it, which may be before its slot (it waits for the wire): these say how much of
    /// what was counted is on the wire at a given time. At most the frames the MAC holds.
    sending: VecDeque<(Time, Time, u32)>,
}

impl Mac {
    /// The MAC starts a frame whose slot (frame and gap) is `slot` as soon as the wire is
    /// free, not before `now`; returns the start.
    #[inline]
    pub(super) fn start_frame(&mut self, now: Time, slot: Time) -> Time {
        let start = now.max(self.tx_free_at);
        self.tx_free_at = start + slot;
        start
    }

    /// [`Mac::start_frame`] for a data frame of `bytes` (counted in the port's `tx_bytes`).
    #[inline]
    pub(super) fn start_data_frame(&mut self, now: Time, slot: Time, bytes: u32) -> Time {
        let start = self.start_frame(now, slot);
        while self.sending.front().is_some_and(|f| f.1 <= now) {
            self.sending.pop_front();
        }
        self.sending.push_back((start, start + slot, bytes));
        start
    }

    /// Of the data bytes the MAC has taken, those not on the wire by `now`: a frame's bytes
    /// go out evenly over its slot (preamble, frame, FCS and gap), so bytes on the wire over
    /// any interval never exceed the line rate.
    pub(super) fn unsent_bytes(&self, now: Time) -> u64 {
        self.sending
            .iter()
            .filter(|f| f.1 > now)
            .map(|&(start, end, bytes)| {
                if now <= start {
                    bytes as u64
                } else {
                    (bytes as u128 * (end - now).ps() as u128 / (end - start).ps() as u128) as u64
                }
            })
            .sum()
    }
}

impl Chip {
    /// A frame starts arriving on `port` at `start`; `tag` is the caller's name for it (0:
    /// none), which the packet and its copies keep ([`Chip::held_tags`]). The earliest a port
    /// can take the next frame is when this one and its inter-frame gap have passed; returns
    /// that time.
    pub fn receive(
        &mut self,
        port: u16,
        start: Time,
        frame: &[u8],
        tag: u32,
        q: &mut impl Schedule<ChipEvent>,
    ) -> Result<Time, ChipError> {
        self.receive_frame(port, start, Incoming::Borrowed(frame), tag, q)
    }

    /// [`Chip::receive`] of a frame in a buffer the caller gives up: the chip keeps the
    /// buffer and leaves an empty one in `frame` (no copy).
    pub fn receive_owned(
        &mut self,
        port: u16,
        start: Time,
        frame: &mut Vec<u8>,
        tag: u32,
        q: &mut impl Schedule<ChipEvent>,
    ) -> Result<Time, ChipError> {
        self.receive_frame(port, start, Incoming::Owned(frame), tag, q)
    }

    fn receive_frame(
        &mut self,
        port: u16,
        start: Time,
        incoming: Incoming,
        tag: u32,
        q: &mut impl Schedule<ChipEvent>,
    ) -> Result<Time, ChipError> {
        let frame = incoming.bytes();
        let ports = self.port_count();
        if port >= ports {
            return Err(ChipError::NoSuchPort { port, ports });
        }
        let p = &mut self.ports[port as usize];
        if start < p.mac.rx_free_at {
            return Err(ChipError::PortBusy {
                port,
                start,
                free_at: p.mac.rx_free_at,
            });
        }
        p.mac.rx_free_at = start + slot_time(frame.len(), p.gbps);
        if let Some(op) = pfc_frame::mac_control_opcode(frame) {
            // The MAC's own: it never reaches a pipe.
            match (op == PFC_OPCODE)
                .then(|| pfc_frame::decode(frame))
                .flatten()
            {
                Some(times) => {
                    p.counters.pfc_rx += 1;
                    p.pfc.ctrl_rx.push_back(times);
                    q.at(
                        start + frame_time(frame.len(), p.gbps),
                        ChipEvent::MacControl { port },
                    );
                }
                None => p.counters.mac_control_other_rx += 1,
            }
            return Ok(p.mac.rx_free_at);
        }
        p.counters.rx_packets += 1;
        p.counters.rx_bytes += frame.len() as u64;
        let arrive = start + frame_time(frame.len(), p.gbps);
        let free_at = p.mac.rx_free_at;
        let h = self.packets.alloc();
        let pkt = &mut self.packets.slots[h as usize];
        incoming.store(&mut pkt.data);
        pkt.ingress_port = port;
        pkt.rx_start = start;
        pkt.tag = tag;
        pkt.carries = tag != 0;
        if self.trace.is_some() {
            self.trace_arrival(h);
        }
        q.at(arrive, ChipEvent::Arrive { pkt: h });
        Ok(free_at)
    }
}
