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

use super::ecn_alpha::EcnAlpha;
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

impl DctcpSpec {
    /// Check parameters: NewReno's, and the EWMA gain and initial α as fractions.
    pub fn validate(&self) -> Result<(), String> {
        self.reno.validate()?;
        if !(self.g > 0.0 && self.g <= 1.0) {
            return Err(format!("g: {} must be above 0 and at most 1", self.g));
        }
        if !(0.0..=1.0).contains(&self.initial_alpha) {
            return Err(format!(
                "initial_alpha: {} must be from 0 to 1",
                self.initial_alpha
            ));
        }
        Ok(())
    }
}

/// A DCTCP sender.
pub fn new(s: &DctcpSpec, shape: Shape) -> NewReno {
    NewReno::new(&s.reno, shape, Some(EcnAlpha::new(s.g, s.initial_alpha)))
}

#[cfg(test)]
mod tests {
    use super::super::test_util::*;
    use super::super::Sender;
    use super::*;
    use pipelines::time::Time;

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
        let mut d = EcnAlpha::new(1.0 / 16.0, 1.0);
        d.count(false);
        d.on_ack(1, 2, false);
        d.count(false);
        d.on_ack(2, 4, false);
        assert!((d.alpha - 15.0 / 16.0).abs() < 1e-12);
    }
}
