//! Advanced flow control (Tofino2's AFC): a program pauses or resumes one queue of the TM.
//!
//! A gress's non-zero `adv_flow_ctl` is qfc(1) | pipe(2) | mac(4) | pad(3) | qid(7) |
//! credit(15), most significant bit first; with `qfc` set, queue `qid` of port
//! `pipe · ports_per_pipe + mac` is paused (credit 0) or resumed (credit ≠ 0) in the TM
//! `plumbing.afc_latency_cycles` after the gress's exit ([`ChipEvent::AfcApply`]). Packets the
//! TM served before that still leave. A request without `qfc`, or naming a port or queue the
//! chip lacks, is counted ([`super::PlumbingCounters::afc_invalid`]) and ignored. Changes are
//! in the pause log as [`PauseDirection::Afc`].

use super::{Chip, ChipEvent, PauseDirection};
use crate::kernel::Schedule;
use pipelines::time::Time;

impl Chip {
    /// A gress asked for advanced flow control with `adv_flow_ctl` = `v` (the layout is in
    /// the module comment): the TM sees it after the profile's latency, or it is counted
    /// invalid.
    pub(super) fn afc_request(&mut self, now: Time, v: u32, q: &mut impl Schedule<ChipEvent>) {
        let qfc = v >> 31;
        let pipe = (v >> 29) & 0x3;
        let mac = (v >> 25) & 0xf;
        let queue = ((v >> 15) & 0x7f) as u16;
        let credit = v & 0x7fff;
        let per_pipe = self.profile.ports_per_pipe_count();
        let port = pipe * per_pipe + mac;
        if qfc == 0
            || pipe >= self.profile.pipes as u32
            || mac >= per_pipe
            || queue >= self.tm.spec().queues_per_port
        {
            self.plumbing.counters.afc_invalid += 1;
            return;
        }
        self.plumbing.counters.afc_requests += 1;
        q.at(
            now + self.plumbing.afc_latency,
            ChipEvent::AfcApply {
                port: port as u16,
                queue,
                paused: credit == 0,
            },
        );
    }

    /// An advanced-flow-control request reaches the TM: pause or resume the queue (logged
    /// when its state changes); a resumed queue's port is served again.
    pub(super) fn afc_apply(
        &mut self,
        now: Time,
        port: u16,
        queue: u16,
        paused: bool,
        q: &mut impl Schedule<ChipEvent>,
    ) {
        if self.tm.is_queue_paused(port, queue) != paused {
            self.log_pause(now, port, queue as u8, paused, PauseDirection::Afc);
        }
        self.tm.set_queue_paused(port, queue, paused, now.ps());
        if !paused {
            self.kick_dequeue(now, port, q);
        }
    }
}
