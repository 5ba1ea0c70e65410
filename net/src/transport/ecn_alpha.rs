//! DCTCP's congestion estimate α: the fraction of ACKs echoing CE per window of data,
//! smoothed, and the window cut it asks for (at most once per window). NewReno carries one
//! when it runs as DCTCP ([`super::dctcp`]); kept apart so that the sender and the DCTCP
//! module both use it without importing each other.

/// DCTCP's per-flow estimator.
#[derive(Clone, Debug)]
pub struct EcnAlpha {
    /// The congestion estimate α.
    pub alpha: f64,
    g: f64,
    acks: u32,
    marked: u32,
    window_end: Option<u32>,
    reduce_end: Option<u32>,
}

impl EcnAlpha {
    /// A fresh estimator.
    pub fn new(g: f64, alpha: f64) -> EcnAlpha {
        EcnAlpha {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alpha_follows_the_marked_fraction_per_window() {
        let mut d = EcnAlpha::new(1.0 / 16.0, 0.0);
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
}
