//! Raw: packets sent with no congestion control.
//!
//! **Models:** a sender that puts its packets on the wire in order as fast as the NIC lets it
//! (line rate, shared with the host's other flows), or paced at `rate_gbps` counting
//! preamble, FCS, padding and the inter-frame gap (constant-rate and on-off sources); with
//! `max_inflight_bytes` it keeps at most that many application bytes unacknowledged (e.g. one
//! BDP), the receiver then ACKing every packet.
//!
//! **Omits:** any loss recovery (a lost packet is never resent, and with a cap its bytes stay
//! "in flight" for good, so a capped flow that loses more than its cap stalls); any reaction
//! to ECN or delay. The flow completes only if every packet arrives.

use super::{Ready, Seg, Sender, Shape};
use crate::packet::{data_frame_len, Header, ACK};
use asic_model::mac::{wire_bytes, IFG_BYTES};
use pipelines::time::Time;
use serde::{Deserialize, Serialize};

/// Parameters.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RawSpec {
    /// Most application bytes sent and not yet acknowledged; none: no limit, no ACKs.
    pub max_inflight_bytes: Option<u64>,
    /// Pace at this rate (Gb/s on the wire, framing included); none: as fast as the NIC.
    pub rate_gbps: Option<f64>,
}

impl RawSpec {
    /// Check parameters.
    pub fn validate(&self) -> Result<(), String> {
        if self.max_inflight_bytes == Some(0) {
            return Err("max_inflight_bytes: must be greater than 0".into());
        }
        if let Some(r) = self.rate_gbps {
            if !(r > 0.0 && r.is_finite()) {
                return Err(format!("rate_gbps: {r} must be positive"));
            }
        }
        Ok(())
    }
}

/// The raw sender.
pub struct Raw {
    shape: Shape,
    cap: Option<u64>,
    rate_gbps: Option<f64>,
    next_seq: u32,
    inflight: u64,
    /// Earliest start of the next packet (ps, fractional to avoid drift).
    next_at_ps: f64,
}

impl Raw {
    /// A sender for `shape`, starting at `now`.
    pub fn new(s: &RawSpec, shape: Shape, now: Time) -> Raw {
        Raw {
            shape,
            cap: s.max_inflight_bytes,
            rate_gbps: s.rate_gbps,
            next_seq: 0,
            inflight: 0,
            next_at_ps: now.ps() as f64,
        }
    }
}

impl Sender for Raw {
    fn poll(&mut self, now: Time) -> Ready {
        if self.next_seq >= self.shape.packets {
            return Ready::Blocked;
        }
        if let Some(cap) = self.cap {
            let len = self.shape.len_of(self.next_seq) as u64;
            // Always allow one packet so that a cap below one packet still makes progress.
            if self.inflight > 0 && self.inflight + len > cap {
                return Ready::Blocked;
            }
        }
        let at = Time(self.next_at_ps.ceil() as u64);
        if self.rate_gbps.is_some() && at > now {
            return Ready::At(at);
        }
        Ready::Now
    }

    fn next(&mut self, now: Time) -> Option<Seg> {
        if self.next_seq >= self.shape.packets {
            return None;
        }
        let seq = self.next_seq;
        let len = self.shape.len_of(seq);
        self.next_seq += 1;
        self.inflight += len as u64;
        if let Some(r) = self.rate_gbps {
            let bytes = wire_bytes(data_frame_len(len as usize)) + IFG_BYTES;
            self.next_at_ps = self.next_at_ps.max(now.ps() as f64) + bytes as f64 * 8000.0 / r;
        }
        Some(Seg {
            seq,
            len,
            retx: false,
        })
    }

    fn on_feedback(&mut self, _now: Time, h: &Header) {
        if h.flags & ACK != 0 && h.echo < self.shape.packets {
            self.inflight = self
                .inflight
                .saturating_sub(self.shape.len_of(h.echo) as u64);
        }
    }

    fn timer(&self) -> Option<Time> {
        None
    }

    fn on_timer(&mut self, _now: Time) {}

    fn done(&self) -> bool {
        self.next_seq >= self.shape.packets
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::*;
    use super::*;

    #[test]
    fn uncapped_sends_everything_at_once() {
        let mut r = Raw::new(&RawSpec::default(), Shape::new(5000, 1000), Time::ZERO);
        assert_eq!(seqs(&drain(&mut r, Time::ZERO)), vec![0, 1, 2, 3, 4]);
        assert!(r.done());
    }

    #[test]
    fn a_cap_holds_bytes_in_flight_until_acked() {
        let spec = RawSpec {
            max_inflight_bytes: Some(2000),
            rate_gbps: None,
        };
        let mut r = Raw::new(&spec, Shape::new(5000, 1000), Time::ZERO);
        assert_eq!(seqs(&drain(&mut r, Time::ZERO)), vec![0, 1]);
        assert_eq!(r.poll(Time::ZERO), Ready::Blocked);
        r.on_feedback(Time::ZERO, &ack(1, 0, false));
        assert_eq!(seqs(&drain(&mut r, Time::ZERO)), vec![2]);
    }

    #[test]
    fn pacing_spaces_packets_at_the_rate() {
        let spec = RawSpec {
            max_inflight_bytes: None,
            rate_gbps: Some(1.0),
        };
        let mut r = Raw::new(&spec, Shape::new(3000, 1000), Time::ZERO);
        assert_eq!(r.poll(Time::ZERO), Ready::Now);
        r.next(Time::ZERO);
        // 1074-byte frame + 4 FCS + 8 preamble + 12 gap = 1098 bytes at 1 Gb/s = 8784 ns.
        assert_eq!(r.poll(Time::ZERO), Ready::At(Time::from_ns(8784)));
    }
}
