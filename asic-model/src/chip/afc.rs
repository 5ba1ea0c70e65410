//! Advanced flow control and the egress FIFO bound.
//!
//! - **Advanced flow control.** A gress's non-zero `adv_flow_ctl` names a (port, queue) the
//!   TM pauses or resumes `plumbing.afc_latency_cycles` after the gress's exit
//!   ([`ChipEvent::AfcApply`], applied in `Chip::handle`).
//! - **Egress FIFO.** Per port, packets the TM has served that have not started on the wire
//!   are at most `plumbing.egress_fifo_packets`; when a packet leaves the egress pipe (or is
//!   dropped there) a port blocked on a full FIFO is served again.
//!
//! Both are per-port controls on when the TM may serve a queue, apart from the packet's own
//! path; the rules are in the parent module's comment.

use super::{Chip, ChipEvent};
use crate::kernel::Schedule;
use pipelines::time::Time;

impl Chip {
    /// A gress asked for advanced flow control: `adv_flow_ctl` is qfc(1) | pipe(2) | mac(4)
    /// | pad(3) | qid(7) | credit(15), most significant bit first. The request is valid when
    /// `qfc` is set; (pipe, mac) is port `pipe · ports_per_pipe + mac`; credit 0 pauses the
    /// queue, any other credit resumes it. The TM sees it after the profile's latency.
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
            self.plumbing.afc_invalid += 1;
            return;
        }
        self.plumbing.afc_requests += 1;
        q.at(
            now + self.afc_latency,
            ChipEvent::AfcApply {
                port: port as u16,
                queue,
                paused: credit == 0,
            },
        );
    }

    /// A packet served from the TM's `port` left the egress pipe, or was dropped there:
    /// the egress FIFO has room again if it was full of packets in the pipe.
    pub(super) fn left_egress_pipe(
        &mut self,
        now: Time,
        port: u16,
        q: &mut impl Schedule<ChipEvent>,
    ) {
        let p = &mut self.ports[port as usize];
        p.in_pipe -= 1;
        if p.fifo_blocked {
            p.fifo_blocked = false;
            let at = now.max(p.next_dequeue_at);
            if self.tm.has_packets(port) && !(p.dequeue_pending && p.dequeue_at <= at) {
                self.schedule_dequeue(port, at, q);
            }
        }
    }
}
