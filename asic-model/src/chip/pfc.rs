//! PFC (IEEE 802.1Qbb) in the chip's MACs: the TM's XOFF/XON events become PFC frames sent
//! ahead of queued data and refreshed while the priority stays in XOFF; received MAC control
//! frames pause and resume the port's queues; the pause log records every change. It is the
//! MACs' own traffic: frames the chip makes and consumes, never in a pipe.
//!
//! The TM counts every buffered packet against its (ingress port, priority) and raises
//! [`tm::pfc::PfcEvent`]s when a lossless one crosses XOFF or falls below XON (see
//! [`tm::pfc`]). The chip drains them after every event that may enqueue, dequeue or pause, and
//! turns each into a frame ([`crate::pfc_frame`], source MAC [`crate::pfc_frame::port_mac`]):
//! - **Send.** XOFF: a PFC frame for the priority with `TmConfig::pfc.quanta`, out of the
//!   ingress port (towards the upstream that sends the paused traffic). XON: one frame with
//!   quanta 0. A MAC control frame goes before queued data: it starts at `max(now, end of the
//!   frame the MAC already has on or for the wire)` (the MAC's `tx_free_at`), ahead of any
//!   packet still in the TM or the egress pipe; the pacer's prediction of when the wire is
//!   free moves by the frame's slot, so the packets behind it are served that much later. Sent frames go to the
//!   [`Wire`] like any frame and are counted in [`super::PortCounters::pfc_xoff_tx`] /
//!   `pfc_refresh_tx` / `pfc_xon_tx` (not in `tx_packets`).
//! - **Refresh.** While the TM keeps the (port, priority) in XOFF, the frame is sent again
//!   every [`tm::pfc::refresh_interval_ps`]`(quanta, port rate)` after the XOFF
//!   ([`ChipEvent::PfcRefresh`], always strictly later than now); XON stops it. A quanta of 0
//!   in the configuration sends the XOFF frame (which then means "resume") and never refreshes.
//! - **Receive.** A frame with EtherType 0x8808 is a MAC control frame: the MAC consumes it
//!   (it never enters a pipe, is never a drop, and is not in `rx_packets`). Opcode 0x0101
//!   (PFC) is counted in [`super::PortCounters::pfc_rx`] and acts when its last bit is in
//!   ([`ChipEvent::MacControl`] at `rx_end`): per enabled class `c` with time `q`, `q > 0`
//!   pauses the port's queues of priority `c` until `rx_end + quanta_ps(q, rate)` (a later
//!   frame restarts the timer), `q = 0` resumes them; the port's scheduler is then served
//!   again at the first time a packet is eligible. Packets the TM handed out before `rx_end`
//!   (in the egress pipe or held by the MAC) still leave: the stop takes at most the egress
//!   pipe latency plus one frame, within the profile's `pause_reaction_quanta`. Every other
//!   opcode, including 802.3x PAUSE (0x0001), is consumed and counted in
//!   [`super::PortCounters::mac_control_other_rx`] without effect: 802.1Qbb makes PFC and PAUSE
//!   mutually exclusive on a link, and this MAC speaks PFC only.
//! - **Log.** Pause state changes, sent and received (and the queues advanced flow control
//!   paused or resumed), are in [`Chip::pause_log`] / [`Chip::drain_pause_log`]
//!   ([`PauseRecord`]).
//!
//! Setting up a lossless class: the program puts the packet in a queue (`ig_tm_md.qid`) and
//! gives it a priority (`ig_tm_md.ingress_cos`, the TM's [`tm::EnqueueRequest::priority`]); the
//! TM configuration lists the class in `pfc.groups` as `(ports, priority, xoff_cells,
//! hysteresis_cells, headroom_cells)` and maps queues to the priority whose received pause
//! frames stop them with `queues[q].pfc_priority` (default: `q mod pfc_levels`). The
//! priority on the ingress side (what is counted and paused upstream) and the queue's
//! priority on the egress side (what a received frame stops) should agree end to end.

use super::{Chip, ChipEvent, Wire};
use crate::kernel::Schedule;
use crate::mac::slot_time;
use crate::pfc_frame::{self, ClassTimes};
use pipelines::time::Time;
use std::collections::VecDeque;
use tm::pfc::{quanta_ps, refresh_interval_ps, PfcEvent};

/// The chip's PFC state beyond its ports: what sending frames reuses, and the pause log.
#[derive(Debug, Default)]
pub(super) struct PfcState {
    /// PFC events taken from the TM (reused: sending allocates nothing).
    events: Vec<PfcEvent>,
    /// The MAC control frame being built (reused).
    frame: Vec<u8>,
    /// Pause state changes, sent and received, and AFC's.
    log: Vec<PauseRecord>,
}

impl PfcState {
    /// Nothing sent or logged yet; room for one frame.
    pub(super) fn new() -> PfcState {
        PfcState {
            frame: Vec::with_capacity(pfc_frame::PFC_FRAME_LEN),
            ..PfcState::default()
        }
    }
}

/// A port's PFC state, both directions.
#[derive(Clone, Debug, Default)]
pub(super) struct PortPfc {
    /// Per priority: the epoch of the XOFF being refreshed (`None`: not in XOFF).
    refresh: [Option<u32>; 8],
    /// Last XOFF epoch given out on this port.
    epoch: u32,
    /// Per priority: until when received pause frames stop our transmission (`None`: not
    /// paused), for the pause log.
    rx_paused_until: [Option<Time>; 8],
    /// Decoded PFC frames whose last bit has not arrived yet, in order.
    pub(super) ctrl_rx: VecDeque<ClassTimes>,
}

/// Which side of a link a [`PauseRecord`] is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PauseDirection {
    /// The chip sent a PFC frame out of the port: it asks its link partner to pause
    /// (XOFF) or resume (XON). Refreshes are not state changes and are not logged.
    Sent,
    /// The chip's own transmission of the priority on the port was paused (a frame with
    /// quanta > 0 while not paused) or resumed (quanta 0, or the pause ran out).
    Received,
    /// The chip's program paused or resumed one queue of the port's transmit side with
    /// advanced flow control (logged when the TM applies it, and only when the queue's state
    /// changes); `priority` then holds the queue id.
    Afc,
}

/// A pause state change of one (port, priority).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PauseRecord {
    /// Sent: when the frame's first bit leaves. Received: when the pause took effect (the
    /// frame's last bit in) or ended (quanta 0 received, or the time ran out).
    pub at: Time,
    /// The port.
    pub port: u16,
    /// The priority (for [`PauseDirection::Afc`], the queue).
    pub priority: u8,
    /// Paused (true) or resumed (false).
    pub paused: bool,
    /// Sent or received.
    pub direction: PauseDirection,
}

impl Chip {
    /// Pause state changes recorded since the last [`Self::drain_pause_log`], in the order
    /// they happened (see [`PauseRecord`] for the times).
    pub fn pause_log(&self) -> &[PauseRecord] {
        &self.pfc.log
    }

    /// Take the pause state changes recorded so far.
    pub fn drain_pause_log(&mut self) -> std::vec::Drain<'_, PauseRecord> {
        self.pfc.log.drain(..)
    }

    /// A PFC frame received whole on `port` at `now` takes effect.
    pub(super) fn mac_control(&mut self, now: Time, port: u16, q: &mut impl Schedule<ChipEvent>) {
        let p = &mut self.ports[port as usize];
        let times = p
            .pfc
            .ctrl_rx
            .pop_front()
            .expect("one decoded frame per event");
        let gbps = p.gbps;
        let levels = (self.tm.spec().pfc_levels as usize).min(8);
        for (prio, t) in times.iter().enumerate().take(levels) {
            let Some(quanta) = *t else { continue };
            let priority = prio as u8;
            let was = self.ports[port as usize].pfc.rx_paused_until[prio];
            if let Some(until) = was.filter(|&u| u <= now) {
                // Ran out before this frame (its PauseEnd has not run yet).
                self.ports[port as usize].pfc.rx_paused_until[prio] = None;
                self.log_pause(until, port, priority, false, PauseDirection::Received);
            }
            let p = &mut self.ports[port as usize];
            let paused = p.pfc.rx_paused_until[prio].is_some();
            if quanta > 0 {
                let until = now + Time(quanta_ps(quanta as u32, gbps));
                p.pfc.rx_paused_until[prio] = Some(until);
                self.tm.pause(port, priority, until.ps(), now.ps());
                q.at(until, ChipEvent::PauseEnd { port, priority });
            } else {
                p.pfc.rx_paused_until[prio] = None;
                self.tm.resume(port, priority, now.ps());
            }
            if paused != (quanta > 0) {
                self.log_pause(now, port, priority, quanta > 0, PauseDirection::Received);
            }
        }
        self.kick_dequeue(now, port, q);
    }

    /// A pause received on `port` for `priority` may have run out by `now`: log its end.
    pub(super) fn pause_end(&mut self, now: Time, port: u16, priority: u8) {
        let paused = &mut self.ports[port as usize].pfc.rx_paused_until[priority as usize];
        if let Some(until) = *paused {
            if until <= now {
                *paused = None;
                self.log_pause(until, port, priority, false, PauseDirection::Received);
            }
        }
    }

    /// Turn the TM's PFC events into frames. Called after every event that may raise some;
    /// inlined, so the usual case (none) costs one test.
    #[inline]
    pub(super) fn send_pfc_events(
        &mut self,
        now: Time,
        q: &mut impl Schedule<ChipEvent>,
        wire: &mut impl Wire,
    ) {
        if self.tm.has_pfc_events() {
            self.send_raised_pfc(now, q, wire);
        }
    }

    /// [`Chip::send_pfc_events`] when the TM raised some.
    fn send_raised_pfc(
        &mut self,
        now: Time,
        q: &mut impl Schedule<ChipEvent>,
        wire: &mut impl Wire,
    ) {
        let mut events = std::mem::take(&mut self.pfc.events);
        events.extend(self.tm.drain_pfc_events());
        for e in events.drain(..) {
            let (port, priority) = (e.ingress_port, e.priority);
            let prio = priority as usize;
            if e.xoff {
                let quanta = self.tm.config().pfc.quanta;
                let start = self.send_pfc(now, port, priority, quanta, wire);
                let p = &mut self.ports[port as usize];
                p.counters.pfc_xoff_tx[prio] += 1;
                if quanta > 0 {
                    p.pfc.epoch = p.pfc.epoch.wrapping_add(1);
                    p.pfc.refresh[prio] = Some(p.pfc.epoch);
                    let epoch = p.pfc.epoch;
                    self.schedule_pfc_refresh(now, port, priority, epoch, quanta, q);
                }
                self.log_pause(start, port, priority, true, PauseDirection::Sent);
            } else {
                let start = self.send_pfc(now, port, priority, 0, wire);
                let p = &mut self.ports[port as usize];
                p.counters.pfc_xon_tx[prio] += 1;
                p.pfc.refresh[prio] = None;
                self.log_pause(start, port, priority, false, PauseDirection::Sent);
            }
        }
        self.pfc.events = events;
    }

    /// Record a pause state change (see [`PauseRecord`] for what `at` means).
    pub(super) fn log_pause(
        &mut self,
        at: Time,
        port: u16,
        priority: u8,
        paused: bool,
        direction: PauseDirection,
    ) {
        self.pfc.log.push(PauseRecord {
            at,
            port,
            priority,
            paused,
            direction,
        });
    }

    pub(super) fn pfc_refresh(
        &mut self,
        now: Time,
        port: u16,
        priority: u8,
        epoch: u32,
        q: &mut impl Schedule<ChipEvent>,
        wire: &mut impl Wire,
    ) {
        let prio = priority as usize;
        if self.ports[port as usize].pfc.refresh[prio] != Some(epoch) {
            return; // XON came, or a later XOFF runs its own timer.
        }
        if !self.tm.is_xoff(port, priority) {
            self.ports[port as usize].pfc.refresh[prio] = None;
            return;
        }
        let quanta = self.tm.config().pfc.quanta;
        self.send_pfc(now, port, priority, quanta, wire);
        let p = &mut self.ports[port as usize];
        p.counters.pfc_refresh_tx[prio] += 1;
        self.schedule_pfc_refresh(now, port, priority, epoch, quanta, q);
    }

    /// The next refresh of an XOFF sent with `quanta`, before the link partner's pause runs
    /// out.
    fn schedule_pfc_refresh(
        &self,
        now: Time,
        port: u16,
        priority: u8,
        epoch: u32,
        quanta: u16,
        q: &mut impl Schedule<ChipEvent>,
    ) {
        let gbps = self.ports[port as usize].gbps;
        let every = refresh_interval_ps(quanta as u32, gbps).max(1);
        q.at(
            now + Time(every),
            ChipEvent::PfcRefresh {
                port,
                priority,
                epoch,
            },
        );
    }

    /// Send a PFC frame for one priority out of `port`, ahead of every packet the MAC does
    /// not have yet; returns its start.
    fn send_pfc(
        &mut self,
        now: Time,
        port: u16,
        priority: u8,
        quanta: u16,
        wire: &mut impl Wire,
    ) -> Time {
        let mut times = [None; 8];
        times[priority as usize] = Some(quanta);
        pfc_frame::encode(&mut self.pfc.frame, pfc_frame::port_mac(port), &times);
        let p = &mut self.ports[port as usize];
        let slot = slot_time(self.pfc.frame.len(), p.gbps);
        let start = p.mac.start_frame(now, slot);
        // The packets the TM has served but the MAC does not have yet go after the frame.
        let paced = p.pacer.add_control_frame(start, slot);
        let next = self.paced_service(paced, now);
        let p = &mut self.ports[port as usize].pacer;
        p.next_at = p.next_at.max(next);
        wire.transmit(port, start, &self.pfc.frame);
        start
    }
}
