//! Go-back-N: a reliable fixed window with a retransmission timer.
//!
//! **Models:** a sender with a window of `window_packets` packets; the receiver accepts only
//! the next packet in order (others are discarded) and ACKs every arrival with the next index
//! it expects; a cumulative ACK slides the window and restarts the timer; when the timer
//! (`rto_us`, fixed) expires, the sender goes back to the oldest unacknowledged packet and
//! resends from there. This is the classic link-layer/RDMA-style (RoCE NIC "go-back-0/N")
//! recovery.
//!
//! **Omits:** congestion control (the window never changes), adaptive timers (no RTT
//! estimation, no backoff), NAK-triggered recovery (RoCE NICs send a NAK on a sequence gap;
//! here only the timer recovers), selective repeat.

use super::{check_count, check_us, Ready, Seg, Sender, Shape};
use crate::packet::{Header, ACK};
use pipelines::time::Time;
use serde::{Deserialize, Serialize};

/// Parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GbnSpec {
    /// Window in packets.
    pub window_packets: u32,
    /// Retransmission timeout (µs).
    pub rto_us: f64,
}

impl Default for GbnSpec {
    fn default() -> Self {
        GbnSpec {
            window_packets: 16,
            rto_us: 100.0,
        }
    }
}

impl GbnSpec {
    /// Check parameters.
    pub fn validate(&self) -> Result<(), String> {
        check_count("window_packets", self.window_packets)?;
        check_us("rto_us", self.rto_us)
    }
}

/// The go-back-N sender.
pub struct Gbn {
    shape: Shape,
    window: u32,
    rto: Time,
    base: u32,
    next: u32,
    high: u32,
    deadline: Option<Time>,
}

impl Gbn {
    /// A sender for `shape`.
    pub fn new(s: &GbnSpec, shape: Shape) -> Gbn {
        Gbn {
            shape,
            window: s.window_packets,
            rto: Time((s.rto_us * 1e6) as u64),
            base: 0,
            next: 0,
            high: 0,
            deadline: None,
        }
    }
}

impl Sender for Gbn {
    fn poll(&mut self, _now: Time) -> Ready {
        if self.next < self.shape.packets && self.next < self.base + self.window {
            Ready::Now
        } else {
            Ready::Blocked
        }
    }

    fn next(&mut self, now: Time) -> Option<Seg> {
        if self.next >= self.shape.packets || self.next >= self.base + self.window {
            return None;
        }
        let seq = self.next;
        self.next += 1;
        let retx = seq < self.high;
        self.high = self.high.max(self.next);
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
        if h.flags & ACK == 0 || h.seq <= self.base {
            return;
        }
        self.base = h.seq.min(self.shape.packets);
        self.next = self.next.max(self.base);
        self.deadline = (self.base < self.high).then_some(now + self.rto);
    }

    fn timer(&self) -> Option<Time> {
        self.deadline
    }

    fn on_timer(&mut self, now: Time) {
        if self.deadline.is_some_and(|d| d <= now) {
            self.next = self.base;
            self.deadline = None;
        }
    }

    fn done(&self) -> bool {
        self.base >= self.shape.packets
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::*;
    use super::*;

    #[test]
    fn window_slides_and_timeout_goes_back() {
        let spec = GbnSpec {
            window_packets: 3,
            rto_us: 10.0,
        };
        let mut g = Gbn::new(&spec, Shape::new(10_000, 1000));
        let t0 = Time::ZERO;
        assert_eq!(seqs(&drain(&mut g, t0)), vec![0, 1, 2]);
        assert_eq!(g.timer(), Some(Time::from_ns(10_000)));
        // Packet 0 arrives, 1 is lost, 2 is discarded by the receiver (ACK 1 again).
        let t1 = Time::from_ns(2_000);
        g.on_feedback(t1, &ack(1, 0, false));
        g.on_feedback(t1, &ack(1, 2, false));
        assert_eq!(seqs(&drain(&mut g, t1)), vec![3]);
        assert_eq!(g.timer(), Some(Time::from_ns(12_000)));
        g.on_timer(Time::from_ns(12_000));
        let again = drain(&mut g, Time::from_ns(12_000));
        assert_eq!(seqs(&again), vec![1, 2, 3]);
        assert!(again.iter().all(|s| s.retx));
        g.on_feedback(Time::from_ns(13_000), &ack(10, 3, false));
        assert!(g.done());
        assert_eq!(g.timer(), None);
    }
}
