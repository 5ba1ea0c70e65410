//! DCTCP (Alizadeh et al., "Data Center TCP", SIGCOMM 2010; RFC 8257): NewReno with an
//! ECN-proportional window reduction.
//!
//! **Models:** data packets carry ECT(0); switches mark CE (the TM's marking threshold `K`
//! is a switch concern); the receiver echoes each packet's CE in its ACK (ECE), one ACK per
//! packet, which is the paper's receiver state machine with no delayed ACKs; the sender
//! counts, per window of data (from the first ACK until everything sent when the window
//! began is acknowledged), the fraction `F` of ACKs with ECE, updates
//! `α ← (1 − g)·α + g·F` with `g` = 1/16 by default, and on an ECE cuts
//! `cwnd ← cwnd·(1 − α/2)` (and `ssthresh ← cwnd`) at most once per window. Loss recovery,
//! slow start and the timer are NewReno's ([`super::newreno`]); no ECN cut during fast
//! recovery.
//!
//! **Omits:** everything NewReno omits (SACK, delayed ACKs, byte sequence numbers); α is
//! computed over packets, not bytes (equal for full-size packets); no ECN nonce, no
//! accurate-ECN; the initial α is 1 (as Linux's `dctcp_alpha_on_init` default).

use super::newreno::{NewReno, RenoSpec};
use super::Shape;
use serde::{Deserialize, Serialize};

/// Parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DctcpSpec {
    /// NewReno's parameters.
    pub reno: RenoSpec,
    /// EWMA gain g.
    pub g: f64,
    /// α before the first window completes.
    pub initial_alpha: f64,
}

impl Default for DctcpSpec {
    fn default() -> Self {
        DctcpSpec {
            reno: RenoSpec::default(),
            g: 1.0 / 16.0,
            initial_alpha: 1.0,
        }
    }
}

/// DCTCP's per-flow estimator.
#[derive(Clone, Debug)]
pub struct DctcpState {
    /// The congestion estimate α.
    pub alpha: f64,
    g: f64,
    acks: u32,
    marked: u32,
    window_end: Option<u32>,
    reduce_end: Option<u32>,
}

impl DctcpState {
    /// A fresh estimator.
    pub fn new(g: f64, alpha: f64) -> DctcpState {
        DctcpState {
            alpha,
            g,
            acks: 0,
            marked: 0,
            window_end: None,
            reduce_end: None,
        }
    }

    /// Count one ACK.
    pub fn count(&mut self, ece: bool) {
        self.acks += 1;
        self.marked += ece as u32;
    }

    /// After an ACK moved the window to `una` with `nxt` sent: update α at the end of a
    /// window, and return the factor to multiply cwnd by if this ACK's ECE should cut it.
    pub fn on_ack(&mut self, una: u32, nxt: u32, ece: bool) -> Option<f64> {
        match self.window_end {
            None => self.window_end = Some(nxt),
            Some(end) if una >= end && self.acks > 0 => {
                let f = self.marked as f64 / self.acks as f64;
                self.alpha = (1.0 - self.g) * self.alpha + self.g * f;
                self.acks = 0;
                self.marked = 0;
                self.window_end = Some(nxt.max(una + 1));
            }
            _ => {}
        }
        if ece && self.reduce_end.is_none_or(|r| una >= r) {
            self.reduce_end = Some(nxt.max(una + 1));
            return Some(1.0 - self.alpha / 2.0);
        }
        None
    }
}

/// A DCTCP sender.
pub fn new(s: &DctcpSpec, shape: Shape) -> NewReno {
    NewReno::new(&s.reno, shape, Some(DctcpState::new(s.g, s.initial_alpha)))
}

#[cfg(test)]
mod tests {
    use super::super::test_util::*;
    use super::super::Sender;
    use super::*;
    use pipelines::time::Time;

    #[test]
    fn alpha_follows_the_marked_fraction_per_window() {
        let mut d = DctcpState::new(1.0 / 16.0, 0.0);
        // First ACK opens a window ending at 10.
        d.count(false);
        assert_eq!(d.on_ack(1, 10, false), None);
        for i in 2..=10 {
            d.count(i % 2 == 0);
            d.on_ack(i, 10, false);
        }
        // 10 ACKs, 5 marked: F = 0.5, α = 0.5 / 16.
        assert!((d.alpha - 0.5 / 16.0).abs() < 1e-12, "{}", d.alpha);
    }

    #[test]
    fn ce_marks_cut_the_window_by_alpha_over_two_once_per_window() {
        let spec = DctcpSpec {
            initial_alpha: 1.0,
            ..DctcpSpec::default()
        };
        let mut s = new(&spec, Shape::new(1_000_000, 1000));
        let t = Time::from_ns(1000);
        assert_eq!(drain(&mut s, Time::ZERO).len(), 10);
        s.on_feedback(t, &ack(1, 0, true));
        // α = 1: cwnd (10 + 1 from slow start) halves.
        assert_eq!(s.cwnd, 5.5);
        assert_eq!(s.ssthresh, 5.5);
        // A second mark in the same window does not cut again.
        s.on_feedback(t, &ack(2, 1, true));
        assert!(s.cwnd > 5.5);
        assert!(s.ecn_capable());
    }

    #[test]
    fn unmarked_windows_decay_alpha() {
        let mut d = DctcpState::new(1.0 / 16.0, 1.0);
        d.count(false);
        d.on_ack(1, 2, false);
        d.count(false);
        d.on_ack(2, 4, false);
        assert!((d.alpha - 15.0 / 16.0).abs() < 1e-12);
    }
}
