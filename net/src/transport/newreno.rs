//! TCP NewReno (RFC 5681 congestion control, RFC 6582 fast recovery, RFC 6298 timer), in
//! packets. DCTCP ([`super::dctcp`]) is this sender with an ECN reaction added.
//!
//! **Models:** slow start from `init_cwnd` packets; congestion avoidance (+1 packet per
//! window); fast retransmit on the third duplicate ACK with `ssthresh = max(flight/2, 2)` and
//! `cwnd = ssthresh + 3`, window inflation per further duplicate, partial ACKs retransmitting
//! the next hole and deflating the window, a full ACK ending recovery with `cwnd = ssthresh`;
//! the retransmission timer from SRTT/RTTVAR (RTT sampled from the timestamp the receiver
//! echoes, so retransmissions give valid samples) with a configurable minimum (`min_rto_us`:
//! 200 µs–1 ms for datacenter incast studies, 200 ms for Linux defaults), exponential backoff,
//! and on expiry `cwnd = 1` and go-back to the oldest unacknowledged packet. The receiver
//! buffers out-of-order packets and sends a cumulative ACK for every packet.
//!
//! **Omits:** byte-granular sequence space (whole packets only), SACK, delayed ACKs, Nagle,
//! the receive window (receivers have infinite buffers), connection setup and teardown
//! (flows start with data, no SYN/FIN handshake), limited transmit, F-RTO, pacing, and the
//! RFC 6582 "bugfix" heuristics beyond the `recover` check.

use super::ecn_alpha::EcnAlpha;
use super::{check_count, check_us, Carried, Ready, Seg, Sender, Shape};
use crate::packet::{Header, ACK, ECE};
use pipelines::time::Time;
use serde::{Deserialize, Serialize};

/// Parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RenoSpec {
    /// Initial congestion window (packets).
    pub init_cwnd: u32,
    /// Minimum retransmission timeout (µs).
    pub min_rto_us: f64,
    /// Retransmission timeout before the first RTT sample (µs).
    pub initial_rto_us: f64,
    /// Largest retransmission timeout after backoff (µs).
    pub max_rto_us: f64,
}

impl Default for RenoSpec {
    fn default() -> Self {
        RenoSpec {
            init_cwnd: 10,
            min_rto_us: 1000.0,
            initial_rto_us: 1000.0,
            max_rto_us: 1_000_000.0,
        }
    }
}

impl RenoSpec {
    /// Check parameters.
    pub fn validate(&self) -> Result<(), String> {
        check_count("init_cwnd", self.init_cwnd)?;
        check_us("min_rto_us", self.min_rto_us)?;
        check_us("initial_rto_us", self.initial_rto_us)?;
        check_us("max_rto_us", self.max_rto_us)?;
        if self.max_rto_us < self.min_rto_us {
            return Err(format!(
                "max_rto_us: {} is below min_rto_us ({})",
                self.max_rto_us, self.min_rto_us
            ));
        }
        Ok(())
    }
}

fn us(v: f64) -> Time {
    Time((v * 1e6) as u64)
}

/// The NewReno sender (and DCTCP's, with `dctcp` set).
pub struct NewReno {
    shape: Shape,
    /// Congestion window (packets).
    pub cwnd: f64,
    /// Slow-start threshold (packets).
    pub ssthresh: f64,
    snd_una: u32,
    snd_nxt: u32,
    high: u32,
    dupacks: u32,
    in_recovery: bool,
    recover: Option<u32>,
    retx_pending: Option<u32>,
    srtt: Option<f64>,
    rttvar: f64,
    rto: Time,
    min_rto: Time,
    max_rto: Time,
    deadline: Option<Time>,
    /// Timeouts so far.
    pub timeouts: u32,
    /// Fast retransmits so far.
    pub fast_retransmits: u32,
    pub(super) dctcp: Option<EcnAlpha>,
}

impl NewReno {
    /// A sender for `shape`; `dctcp` adds DCTCP's ECN reaction.
    pub fn new(s: &RenoSpec, shape: Shape, dctcp: Option<EcnAlpha>) -> NewReno {
        NewReno {
            shape,
            cwnd: s.init_cwnd as f64,
            ssthresh: f64::MAX,
            snd_una: 0,
            snd_nxt: 0,
            high: 0,
            dupacks: 0,
            in_recovery: false,
            recover: None,
            retx_pending: None,
            srtt: None,
            rttvar: 0.0,
            rto: us(s.initial_rto_us.max(s.min_rto_us)),
            min_rto: us(s.min_rto_us),
            max_rto: us(s.max_rto_us),
            deadline: None,
            timeouts: 0,
            fast_retransmits: 0,
            dctcp,
        }
    }

    /// This sender with the congestion state a persistent connection carried (`cwnd`,
    /// `ssthresh`, the RTT estimate and RTO within this sender's bounds, DCTCP's α).
    pub fn resumed(mut self, c: &Carried) -> NewReno {
        self.cwnd = c.cwnd.max(1.0);
        self.ssthresh = c.ssthresh;
        self.srtt = c.srtt;
        self.rttvar = c.rttvar;
        self.rto = c.rto.max(self.min_rto).min(self.max_rto);
        if let (Some(d), Some(a)) = (self.dctcp.as_mut(), c.alpha) {
            d.alpha = a;
        }
        self
    }

    /// The current retransmission timeout.
    pub fn rto(&self) -> Time {
        self.rto
    }

    /// Oldest unacknowledged packet.
    pub fn snd_una(&self) -> u32 {
        self.snd_una
    }

    /// Whether fast recovery is in progress.
    pub fn in_recovery(&self) -> bool {
        self.in_recovery
    }

    fn flight(&self) -> u32 {
        self.snd_nxt - self.snd_una
    }

    fn rtt_sample(&mut self, r: f64) {
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = r / 2.0;
            }
            Some(s) => {
                self.rttvar = 0.75 * self.rttvar + 0.25 * (s - r).abs();
                self.srtt = Some(0.875 * s + 0.125 * r);
            }
        }
        let rto = Time((self.srtt.unwrap_or(r) + 4.0 * self.rttvar) as u64);
        self.rto = rto.max(self.min_rto).min(self.max_rto);
    }

    fn loss_threshold(&self) -> f64 {
        (self.flight() as f64 / 2.0).max(2.0)
    }
}

impl Sender for NewReno {
    fn carried(&self) -> Option<Carried> {
        Some(Carried {
            cwnd: self.cwnd,
            ssthresh: self.ssthresh,
            srtt: self.srtt,
            rttvar: self.rttvar,
            rto: self.rto,
            alpha: self.dctcp.as_ref().map(|d| d.alpha),
        })
    }

    fn poll(&mut self, _now: Time) -> Ready {
        if self.retx_pending.is_some_and(|s| s < self.snd_una) {
            self.retx_pending = None;
        }
        if self.retx_pending.is_some()
            || (self.snd_nxt < self.shape.packets && (self.flight() as f64) < self.cwnd.floor())
        {
            Ready::Now
        } else {
            Ready::Blocked
        }
    }

    fn next(&mut self, now: Time) -> Option<Seg> {
        // A pending retransmission that an ACK has since covered is dropped.
        let pending = self.retx_pending.take().filter(|&s| s >= self.snd_una);
        let seq = if let Some(s) = pending {
            s
        } else if self.snd_nxt < self.shape.packets && (self.flight() as f64) < self.cwnd.floor() {
            self.snd_nxt += 1;
            self.snd_nxt - 1
        } else {
            return None;
        };
        let retx = seq < self.high;
        self.high = self.high.max(seq + 1);
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
        if h.flags & ACK == 0 {
            return;
        }
        let a = h.seq.min(self.shape.packets);
        let ece = h.flags & ECE != 0;
        if let Some(d) = &mut self.dctcp {
            d.count(ece);
        }
        if a > self.snd_una {
            let acked = (a - self.snd_una) as f64;
            self.snd_una = a;
            self.snd_nxt = self.snd_nxt.max(a);
            if now.ps() >= h.ts_ps {
                self.rtt_sample((now.ps() - h.ts_ps) as f64);
            }
            if self.in_recovery {
                if self.recover.is_some_and(|r| a > r) {
                    // Full ACK: recovery is over.
                    self.cwnd = self.ssthresh.min(self.flight() as f64 + 1.0).max(1.0);
                    self.in_recovery = false;
                    self.dupacks = 0;
                } else {
                    // Partial ACK: the next hole is lost too.
                    self.retx_pending = Some(a);
                    self.cwnd = (self.cwnd - acked + 1.0).max(1.0);
                }
            } else {
                self.dupacks = 0;
                if self.cwnd < self.ssthresh {
                    self.cwnd += acked;
                } else {
                    self.cwnd += acked / self.cwnd;
                }
            }
            self.deadline = (self.snd_una < self.snd_nxt).then_some(now + self.rto);
        } else if a == self.snd_una && self.snd_nxt > self.snd_una {
            self.dupacks += 1;
            if self.in_recovery {
                self.cwnd += 1.0;
            } else if self.dupacks == 3 && self.recover.is_none_or(|r| self.snd_una > r) {
                self.ssthresh = self.loss_threshold();
                self.cwnd = self.ssthresh + 3.0;
                self.in_recovery = true;
                self.recover = Some(self.high - 1);
                self.retx_pending = Some(self.snd_una);
                self.fast_retransmits += 1;
            }
        }
        // DCTCP: the window ends when everything sent at its start is acknowledged.
        let (una, nxt, in_rec) = (self.snd_una, self.snd_nxt, self.in_recovery);
        if let Some(d) = &mut self.dctcp {
            if let Some(factor) = d.on_ack(una, nxt, ece && !in_rec) {
                self.cwnd = (self.cwnd * factor).max(1.0);
                self.ssthresh = self.cwnd;
            }
        }
    }

    fn timer(&self) -> Option<Time> {
        self.deadline
    }

    fn on_timer(&mut self, now: Time) {
        if self.done() {
            self.deadline = None;
            return;
        }
        if self.deadline.is_none_or(|d| d > now) {
            return;
        }
        self.timeouts += 1;
        self.ssthresh = self.loss_threshold();
        self.cwnd = 1.0;
        self.recover = Some(self.high.saturating_sub(1));
        self.in_recovery = false;
        self.dupacks = 0;
        self.retx_pending = None;
        self.snd_nxt = self.snd_una;
        self.rto = Time(self.rto.ps() * 2).min(self.max_rto);
        self.deadline = None;
    }

    fn done(&self) -> bool {
        self.snd_una >= self.shape.packets
    }

    fn ecn_capable(&self) -> bool {
        self.dctcp.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::*;
    use super::*;

    fn reno(cwnd: u32) -> NewReno {
        let spec = RenoSpec {
            init_cwnd: cwnd,
            min_rto_us: 200.0,
            initial_rto_us: 200.0,
            max_rto_us: 10_000.0,
        };
        NewReno::new(&spec, Shape::new(100 * 1000, 1000), None)
    }

    #[test]
    fn slow_start_then_congestion_avoidance() {
        let mut r = reno(2);
        let t = Time::from_ns(1000);
        assert_eq!(seqs(&drain(&mut r, Time::ZERO)), vec![0, 1]);
        r.on_feedback(t, &ack(1, 0, false));
        r.on_feedback(t, &ack(2, 1, false));
        assert_eq!(r.cwnd, 4.0);
        assert_eq!(seqs(&drain(&mut r, t)), vec![2, 3, 4, 5]);
        r.ssthresh = 4.0;
        r.on_feedback(t, &ack(3, 2, false));
        assert_eq!(r.cwnd, 4.25);
    }

    #[test]
    fn three_dup_acks_fast_retransmit_and_partial_acks_continue_recovery() {
        let mut r = reno(8);
        let t = Time::from_ns(1000);
        assert_eq!(drain(&mut r, Time::ZERO).len(), 8);
        // Packets 2 and 5 are lost: ACKs for 0, 1, then dups for 3, 4, 6, 7.
        r.on_feedback(t, &ack(1, 0, false));
        r.on_feedback(t, &ack(2, 1, false));
        for e in [3, 4] {
            r.on_feedback(t, &ack(2, e, false));
        }
        assert!(!r.in_recovery());
        // Slow start opened the window to 10 with 6 in flight: 8..=11 go out.
        assert_eq!(seqs(&drain(&mut r, t)), vec![8, 9, 10, 11]);
        r.on_feedback(t, &ack(2, 6, false));
        assert!(r.in_recovery());
        assert_eq!(r.fast_retransmits, 1);
        // flight was 12 - 2 = 10: ssthresh 5, cwnd 8; the retransmission goes first.
        assert_eq!(r.ssthresh, 5.0);
        assert_eq!(r.cwnd, 8.0);
        let s = drain(&mut r, t);
        assert_eq!(
            s[0],
            Seg {
                seq: 2,
                len: 1000,
                retx: true
            }
        );
        // A partial ACK (up to the next hole, 5) retransmits 5 at once.
        r.on_feedback(t, &ack(5, 2, false));
        assert!(r.in_recovery());
        let s = drain(&mut r, t);
        assert_eq!(s[0].seq, 5);
        assert!(s[0].retx);
        assert_eq!(r.cwnd, 6.0);
        // A full ACK past `recover` (11) ends recovery with cwnd = ssthresh at most.
        r.on_feedback(t, &ack(12, 5, false));
        assert!(!r.in_recovery());
        assert!(r.cwnd <= 5.0);
    }

    #[test]
    fn timeout_collapses_the_window_goes_back_and_backs_off() {
        let mut r = reno(4);
        assert_eq!(drain(&mut r, Time::ZERO).len(), 4);
        let d = r.timer().unwrap();
        assert_eq!(d, Time::from_ns(200_000));
        r.on_timer(d);
        assert_eq!(r.cwnd, 1.0);
        assert_eq!(r.ssthresh, 2.0);
        assert_eq!(r.timeouts, 1);
        assert_eq!(r.rto(), Time::from_ns(400_000));
        let s = drain(&mut r, d);
        assert_eq!(
            s,
            vec![Seg {
                seq: 0,
                len: 1000,
                retx: true
            }]
        );
        assert_eq!(r.timer(), Some(d + Time::from_ns(400_000)));
        // A cumulative ACK covering what the receiver buffered moves far ahead.
        r.on_feedback(d + Time::from_ns(10), &ack(4, 0, false));
        assert_eq!(r.snd_una(), 4);
        // Slow start (cwnd 1 < ssthresh 2) grows by the 4 packets acknowledged.
        assert_eq!(seqs(&drain(&mut r, d)), vec![4, 5, 6, 7, 8]);
    }

    #[test]
    fn a_stale_retransmission_is_not_sent_and_a_finished_flow_disarms_its_timer() {
        let spec = RenoSpec::default();
        let mut r = NewReno::new(&spec, Shape::new(4000, 1000), None);
        let t = Time::from_ns(1000);
        assert_eq!(drain(&mut r, Time::ZERO).len(), 4);
        r.on_feedback(t, &ack(1, 0, false));
        for e in [2, 3] {
            r.on_feedback(t, &ack(1, e, false));
        }
        r.on_feedback(t, &ack(1, 3, false));
        assert!(r.in_recovery());
        // Everything is acknowledged before the retransmission goes out.
        r.on_feedback(t, &ack(4, 1, false));
        assert!(r.done());
        assert!(drain(&mut r, t).is_empty());
        assert_eq!(r.timer(), None);
        r.on_timer(Time::from_ns(10_000_000));
        assert_eq!(r.timer(), None);
    }

    #[test]
    fn min_rto_bounds_the_timer() {
        let mut r = reno(1);
        drain(&mut r, Time::ZERO);
        // A 10 µs RTT sample: srtt + 4 rttvar = 30 µs < the 200 µs minimum.
        let mut a = ack(1, 0, false);
        a.ts_ps = 0;
        r.on_feedback(Time::from_ns(10_000), &a);
        assert_eq!(r.rto(), Time::from_ns(200_000));
    }
}
