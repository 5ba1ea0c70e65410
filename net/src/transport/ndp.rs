//! NDP-like receiver-driven transport (after Handley et al., "Re-architecting datacenter
//! networks and stacks for low latency and high performance", SIGCOMM 2017).
//!
//! **Models:** the sender blasts its first window (`init_window_packets`, about one BDP) at
//! line rate; after that it sends one packet per PULL. The receiver answers every data
//! packet with an ACK and every trimmed header (a DATA packet whose payload a switch cut off:
//! the [`crate::packet::TRIMMED`] flag, or a frame shorter than its header says) with a
//! NACK, and for each of either it queues one PULL in its host's pull pacer, which releases
//! PULLs (all flows of the host, first come first served) no faster than one per full-size
//! data frame *and one control frame* at `pull_rate` × the host's link rate (htsim's NDP
//! pacer: `(data_packet_size + ACKSIZE) / linkspeed / pull_rate_modifier`), so the senders'
//! aggregate is paced just under the receiver's link and leaves room on it for the control
//! packets of a host that also sends. A PULL carries a per-flow counter, so a lost PULL is made up by the next.
//! A NACKed packet is queued for retransmission and is the next packet the sender sends (ahead
//! of new data). A sender that hears nothing for `rto_us` resends its unacknowledged packets
//! (timer-driven recovery for lost headers or control packets). Control packets (ACK, NACK,
//! PULL) go first at the sending NIC. A header a switch returned to the sender (NDP's
//! return-to-sender when the header queue is full) is a NACK that also gives back the credit
//! of the PULL the receiver will never send for it: the packet is resent at once. With
//! `spray`, each data packet's UDP source port varies per packet
//! ([`crate::packet::spray_entropy`]), so the switches' ECMP hash sprays the flow over the
//! equal-cost paths (EQDS's way); without it the flow keeps one path, unless the switch
//! program sprays.
//!
//! **Omits:** the switch side (payload trimming, the header/control priority queue and the
//! 8-packet data queues are switch-program and TM concerns, not the host's); per-sender fair
//! queueing of PULLs (FIFO here) and pull priorities; the first-RTT "don't blast the whole
//! window into an incast" refinements; connection setup.

use super::{check_count, check_us, Ready, Seg, Sender, Shape};
use crate::packet::{Header, ACK, NACK, PULL};
use asic_model::mac::slot_time;
use pipelines::time::Time;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// Parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NdpSpec {
    /// Packets sent before the first PULL (about one BDP).
    pub init_window_packets: u32,
    /// Resend unacknowledged packets after this long without feedback (µs).
    pub rto_us: f64,
    /// PULLs leave at most at this fraction of the link rate, counted as one full-size data
    /// frame plus one control frame per PULL (htsim's pacer). 1 by default: the trimming
    /// paper's 95.7 Gb/s for one flow into a 100G port is htsim's 1,500 / (1,500 + 64) at 1
    /// (its `main_ndp` pulls at 0.99, which would cap that flow at 94.9). In (0, 2]: above 1
    /// the receiver pulls faster than its link can deliver (htsim allows it too).
    pub pull_rate: f64,
    /// Spray the data packets over the equal-cost paths by their UDP source port (EQDS's
    /// way, Olteanu et al., NSDI 2022): a per-packet value is added to it
    /// ([`crate::packet::spray_entropy`]), so the switches' ECMP hash picks a path per packet.
    pub spray: bool,
}

impl Default for NdpSpec {
    fn default() -> Self {
        NdpSpec {
            init_window_packets: 16,
            rto_us: 1000.0,
            pull_rate: 1.0,
            spray: false,
        }
    }
}

impl NdpSpec {
    /// Check parameters.
    pub fn validate(&self) -> Result<(), String> {
        check_count("init_window_packets", self.init_window_packets)?;
        check_us("rto_us", self.rto_us)?;
        if !(self.pull_rate > 0.0 && self.pull_rate <= 2.0) {
            return Err(format!(
                "pull_rate: {} is not in (0, 2] (a fraction of the receiver's link rate)",
                self.pull_rate
            ));
        }
        Ok(())
    }

    /// The least time between two PULLs of a receiver on a `gbps` link whose data frames
    /// are `data_frame` bytes long: one data slot and one control slot at `pull_rate`.
    pub fn pull_gap(&self, data_frame: usize, control_frame: usize, gbps: u32) -> Time {
        let slots = slot_time(data_frame, gbps).ps() + slot_time(control_frame, gbps).ps();
        Time((slots as f64 / self.pull_rate).round() as u64)
    }
}

/// The NDP sender.
pub struct Ndp {
    shape: Shape,
    acked: Vec<u64>,
    acked_count: u32,
    next_new: u32,
    retx: VecDeque<u32>,
    credit: u32,
    last_pull: u32,
    init_window: u32,
    rto: Time,
    deadline: Option<Time>,
    /// NACKs received.
    pub nacks: u32,
    /// [`NdpSpec::spray`].
    spray: bool,
}

impl Ndp {
    /// A sender for `shape`.
    pub fn new(s: &NdpSpec, shape: Shape) -> Ndp {
        Ndp {
            shape,
            acked: vec![0; (shape.packets as usize).div_ceil(64)],
            acked_count: 0,
            next_new: 0,
            retx: VecDeque::new(),
            credit: s.init_window_packets.min(shape.packets),
            last_pull: 0,
            init_window: s.init_window_packets,
            rto: Time((s.rto_us * 1e6) as u64),
            deadline: None,
            nacks: 0,
            spray: s.spray,
        }
    }

    fn is_acked(&self, s: u32) -> bool {
        self.acked[(s / 64) as usize] & (1 << (s % 64)) != 0
    }

    fn has_work(&mut self) -> bool {
        while let Some(&s) = self.retx.front() {
            if self.is_acked(s) {
                self.retx.pop_front();
            } else {
                return true;
            }
        }
        self.next_new < self.shape.packets
    }

    /// Packets the sender may send now.
    pub fn credit(&self) -> u32 {
        self.credit
    }
}

impl Sender for Ndp {
    fn poll(&mut self, _now: Time) -> Ready {
        if self.credit > 0 && self.has_work() {
            Ready::Now
        } else {
            Ready::Blocked
        }
    }

    fn next(&mut self, now: Time) -> Option<Seg> {
        if self.credit == 0 || !self.has_work() {
            return None;
        }
        self.credit -= 1;
        let (seq, retx) = match self.retx.pop_front() {
            Some(s) => (s, true),
            None => {
                self.next_new += 1;
                (self.next_new - 1, false)
            }
        };
        if self.deadline.is_none() {
            self.deadline = Some(now + self.rto);
        }
        Some(Seg {
            seq,
            len: self.shape.len_of(seq),
            retx,
        })
    }

    fn on_feedback(&mut self, now: Time, h: &Header) {
        if h.flags & ACK != 0 && h.echo < self.shape.packets && !self.is_acked(h.echo) {
            self.acked[(h.echo / 64) as usize] |= 1 << (h.echo % 64);
            self.acked_count += 1;
        }
        if h.flags & NACK != 0 && h.seq < self.shape.packets && !self.is_acked(h.seq) {
            self.nacks += 1;
            self.retx.push_back(h.seq);
        }
        if h.flags & PULL != 0 && h.seq > self.last_pull {
            let remaining = self.shape.packets - self.acked_count;
            self.credit = (self.credit + (h.seq - self.last_pull)).min(remaining);
            self.last_pull = h.seq;
        }
        self.deadline = (!self.done()).then_some(now + self.rto);
    }

    fn on_returned(&mut self, now: Time, seq: u32) {
        if seq < self.shape.packets && !self.is_acked(seq) {
            self.nacks += 1;
            self.retx.push_back(seq);
            self.credit = (self.credit + 1).min(self.shape.packets - self.acked_count);
        }
        self.deadline = (!self.done()).then_some(now + self.rto);
    }

    fn timer(&self) -> Option<Time> {
        self.deadline
    }

    fn sprays(&self) -> bool {
        self.spray
    }

    fn on_timer(&mut self, now: Time) {
        if self.done() {
            self.deadline = None;
            return;
        }
        if self.deadline.is_none_or(|d| d > now) {
            return;
        }
        self.retx.clear();
        for s in 0..self.next_new {
            if !self.is_acked(s) {
                self.retx.push_back(s);
            }
        }
        self.credit = self
            .credit
            .max((self.retx.len() as u32).min(self.init_window));
        self.deadline = Some(now + self.rto);
    }

    fn done(&self) -> bool {
        self.acked_count >= self.shape.packets
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::*;
    use super::*;

    fn ndp(iw: u32, packets: u32) -> Ndp {
        let s = NdpSpec {
            init_window_packets: iw,
            rto_us: 50.0,
            pull_rate: 1.0,
            spray: false,
        };
        Ndp::new(&s, Shape::new(packets as u64 * 1000, 1000))
    }

    #[test]
    fn first_window_then_one_packet_per_pull() {
        let mut n = ndp(3, 10);
        let t = Time::ZERO;
        assert_eq!(seqs(&drain(&mut n, t)), vec![0, 1, 2]);
        n.on_feedback(t, &pull(1));
        assert_eq!(seqs(&drain(&mut n, t)), vec![3]);
        // PULL 3 after a lost PULL 2 grants two packets.
        n.on_feedback(t, &pull(3));
        assert_eq!(seqs(&drain(&mut n, t)), vec![4, 5]);
        // An old PULL grants nothing.
        n.on_feedback(t, &pull(2));
        assert!(drain(&mut n, t).is_empty());
    }

    #[test]
    fn nacked_headers_are_retransmitted_first() {
        let mut n = ndp(3, 10);
        let t = Time::ZERO;
        drain(&mut n, t);
        n.on_feedback(t, &ack(0, 0, false));
        n.on_feedback(t, &nack(1));
        n.on_feedback(t, &pull(1));
        n.on_feedback(t, &pull(2));
        let s = drain(&mut n, t);
        assert_eq!(
            s[0],
            Seg {
                seq: 1,
                len: 1000,
                retx: true
            }
        );
        assert_eq!(s[1].seq, 3);
        assert_eq!(n.nacks, 1);
    }

    /// A returned header is resent at once, without a PULL: the receiver never saw it, so
    /// none will come for it.
    #[test]
    fn a_returned_header_is_resent_without_a_pull() {
        let mut n = ndp(3, 10);
        let t = Time::ZERO;
        drain(&mut n, t);
        assert_eq!(n.credit(), 0);
        n.on_returned(t, 2);
        let s = drain(&mut n, t);
        assert_eq!(
            s,
            [Seg {
                seq: 2,
                len: 1000,
                retx: true
            }]
        );
        assert_eq!(n.nacks, 1);
    }

    /// htsim's spacing: a 1,514-byte data frame (1,538 bytes on the wire) and a 74-byte
    /// control frame (98) at 100 Gb/s are 130.88 ns; at half the rate, twice that.
    #[test]
    fn the_pull_gap_is_one_data_and_one_control_slot_at_the_pull_rate() {
        let mut s = NdpSpec::default();
        assert_eq!(s.pull_gap(1514, 74, 100), Time(130_880));
        s.pull_rate = 0.5;
        assert_eq!(s.pull_gap(1514, 74, 100), Time(261_760));
    }

    #[test]
    fn a_pull_rate_outside_0_to_2_is_refused_by_name() {
        for bad in [0.0, -1.0, 2.5, f64::NAN, f64::INFINITY] {
            let s = NdpSpec {
                pull_rate: bad,
                ..NdpSpec::default()
            };
            assert!(
                s.validate().unwrap_err().starts_with("pull_rate: "),
                "{bad}"
            );
        }
    }

    #[test]
    fn silence_resends_unacked_packets() {
        let mut n = ndp(2, 2);
        drain(&mut n, Time::ZERO);
        n.on_feedback(Time::from_ns(1), &ack(0, 0, false));
        let d = n.timer().unwrap();
        n.on_timer(d);
        assert_eq!(
            drain(&mut n, d),
            vec![Seg {
                seq: 1,
                len: 1000,
                retx: true
            }]
        );
        n.on_feedback(d, &ack(0, 1, false));
        assert!(n.done());
        assert_eq!(n.timer(), None);
    }
}
