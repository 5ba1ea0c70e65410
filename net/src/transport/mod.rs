//! Transports: the per-flow state machines of senders and receivers.
//!
//! The host calls a [`Sender`] through a small interface:
//! - [`Sender::poll`]: may it send a packet now, later (pacing), or not until feedback?
//! - [`Sender::next`]: take the next packet to send (the NIC calls it only when its wire is
//!   free and this flow's turn has come, so a transport never queues packets itself);
//! - [`Sender::on_feedback`]: an ACK, NACK or PULL arrived;
//! - [`Sender::timer`] / [`Sender::on_timer`]: the retransmission (or other) timer.
//!
//! The [`Receiver`] turns each data packet (or trimmed header) into the feedback to send back
//! and says when the flow is complete. Sequence numbers count packets, not bytes: packet `i`
//! of a flow carries bytes `i·mss .. min((i+1)·mss, size)`.
//!
//! Five transports ([`TransportSpec`]): [`raw`], [`gbn`] (go-back-N), [`newreno`],
//! [`dctcp`] and [`ndp`]; each module says what it models and what it leaves out.

pub mod dctcp;
pub mod ecn_alpha;
pub mod gbn;
pub mod ndp;
pub mod newreno;
pub mod raw;

use crate::packet::{Header, ACK, ECE, ECN_CE, NACK, TRIMMED};
use pipelines::time::{Time, MAX_INPUT_NS};
use serde::{Deserialize, Serialize};

/// A parameter check: a count must be greater than 0 (the error names the field).
pub(crate) fn check_count(name: &str, v: u32) -> Result<(), String> {
    if v == 0 {
        return Err(format!("{name}: must be greater than 0"));
    }
    Ok(())
}

/// A parameter check: a duration in µs must be positive and no longer than any time a
/// scenario may name (the error names the field).
pub(crate) fn check_us(name: &str, v: f64) -> Result<(), String> {
    let max = (MAX_INPUT_NS / 1000) as f64;
    if !(v > 0.0 && v <= max) {
        return Err(format!("{name}: {v} must be positive and at most {max} µs"));
    }
    Ok(())
}

/// A packet a sender wants to send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Seg {
    /// Packet index in the flow.
    pub seq: u32,
    /// Application bytes it carries.
    pub len: u32,
    /// Whether it was sent before (a retransmission).
    pub retx: bool,
}

/// Whether a sender can send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ready {
    /// A packet is ready now.
    Now,
    /// Nothing before this time (pacing); poll again then.
    At(Time),
    /// Nothing until feedback or a timer.
    Blocked,
}

/// The shape of a flow: its size cut into packets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    /// Application bytes.
    pub size: u64,
    /// Bytes per full packet.
    pub mss: u32,
    /// Packets (at least 1).
    pub packets: u32,
}

impl Shape {
    /// `size` bytes in packets of `mss`.
    pub fn new(size: u64, mss: u32) -> Shape {
        let packets = size.div_ceil(mss as u64).max(1) as u32;
        Shape { size, mss, packets }
    }

    /// Application bytes of packet `seq`.
    pub fn len_of(&self, seq: u32) -> u32 {
        if seq + 1 < self.packets {
            self.mss
        } else {
            (self.size - (self.packets as u64 - 1) * self.mss as u64) as u32
        }
    }
}

/// What a persistent connection keeps from one transfer to the next: its congestion state
/// when the last transfer's last packet was acknowledged.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Carried {
    /// Congestion window (packets).
    pub cwnd: f64,
    /// Slow-start threshold (packets).
    pub ssthresh: f64,
    /// Smoothed RTT and its variation (ps), if measured.
    pub srtt: Option<f64>,
    /// See `srtt`.
    pub rttvar: f64,
    /// Retransmission timeout.
    pub rto: Time,
    /// DCTCP's α, for DCTCP.
    pub alpha: Option<f64>,
}

/// A flow's sending side (`Send`: a run's partitions run on threads of their own).
pub trait Sender: Send {
    /// Whether a packet can be sent at `now`.
    fn poll(&mut self, now: Time) -> Ready;
    /// Take the next packet (call only after `poll` said [`Ready::Now`]).
    fn next(&mut self, now: Time) -> Option<Seg>;
    /// Feedback from the receiver (ACK, NACK or PULL).
    fn on_feedback(&mut self, now: Time, h: &Header);
    /// A switch returned the trimmed header of packet `seq` to this sender (what-if
    /// return-to-sender, `tm.trim.return_to_sender`): the receiver never saw it. Transports
    /// without trimming ignore it and recover as from a loss.
    fn on_returned(&mut self, _now: Time, _seq: u32) {}
    /// When [`Sender::on_timer`] should next run, if a timer is armed.
    fn timer(&self) -> Option<Time>;
    /// The timer fired (the host calls it at or after [`Sender::timer`]).
    fn on_timer(&mut self, now: Time);
    /// Whether the sender has nothing more to do.
    fn done(&self) -> bool;
    /// Whether data packets carry ECT.
    fn ecn_capable(&self) -> bool {
        false
    }
    /// Whether data packets vary their UDP source port per packet ([`Header::entropy`]), so
    /// that the switches' ECMP hash sprays them over the equal-cost paths.
    fn sprays(&self) -> bool {
        false
    }
    /// The state a persistent connection carries to its next transfer (`None`: transports
    /// whose every transfer starts afresh).
    fn carried(&self) -> Option<Carried> {
        None
    }
}

/// Feedback a receiver sends for one data packet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reply {
    /// Flags: [`ACK`] or [`NACK`], with [`ECE`].
    pub flags: u8,
    /// Cumulative ACK (next packet expected) or the index NACKed.
    pub seq: u32,
    /// The index of the packet that caused it.
    pub echo: u32,
    /// Echoed timestamp.
    pub ts_ps: u64,
}

/// What a receiver does with a data packet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RxOut {
    /// Feedback to send now.
    pub reply: Option<Reply>,
    /// Queue one PULL in the host's pull pacer (NDP).
    pub pull: bool,
    /// The flow just became complete (every byte received).
    pub completed: bool,
    /// The packet carried new (not duplicate) data.
    pub new_data: bool,
}

/// How a receiver acknowledges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AckMode {
    /// No feedback at all (raw without a cap).
    None,
    /// A cumulative ACK per packet, out-of-order packets buffered (TCP, DCTCP, raw with a
    /// cap).
    Cumulative,
    /// A cumulative ACK per packet, out-of-order packets discarded (go-back-N).
    InOrderOnly,
    /// ACK per packet naming it, NACK per trimmed header, and a PULL per arrival (NDP).
    Ndp,
}

/// The receiving side of a flow: which packets arrived. Packets below `next_expected` all
/// have; a bit per packet is kept only once one arrives out of order (most flows, and every
/// one-packet flow, never need it, so millions of flows cost no bitmap each).
#[derive(Clone, Debug)]
pub struct Receiver {
    mode: AckMode,
    packets: u32,
    /// Empty until a packet arrives out of order; then a bit per packet.
    got: Vec<u64>,
    received: u32,
    next_expected: u32,
    complete: bool,
}

impl Receiver {
    /// A receiver for `packets` packets.
    pub fn new(mode: AckMode, packets: u32) -> Receiver {
        Receiver {
            mode,
            packets,
            got: Vec::new(),
            received: 0,
            next_expected: 0,
            complete: false,
        }
    }

    /// Whether every packet has arrived.
    pub fn complete(&self) -> bool {
        self.complete
    }

    /// Distinct packets received.
    pub fn received(&self) -> u32 {
        self.received
    }

    fn has(&self, s: u32) -> bool {
        s < self.next_expected
            || self
                .got
                .get((s / 64) as usize)
                .is_some_and(|w| w & (1 << (s % 64)) != 0)
    }

    /// A data packet (or trimmed header) arrived.
    pub fn on_data(&mut self, h: &Header) -> RxOut {
        let mut out = RxOut::default();
        let s = h.seq;
        if s >= self.packets {
            return out;
        }
        let ece = if h.ecn == ECN_CE { ECE } else { 0 };
        let trimmed = h.flags & TRIMMED != 0;
        if trimmed {
            if self.mode == AckMode::Ndp && !self.complete {
                out.reply = Some(Reply {
                    flags: NACK | ece,
                    seq: s,
                    echo: s,
                    ts_ps: h.ts_ps,
                });
                out.pull = true;
            }
            return out;
        }
        let accept = match self.mode {
            AckMode::InOrderOnly => s == self.next_expected,
            _ => true,
        };
        if accept && !self.has(s) {
            // The next in order needs no bit: everything below `next_expected` has arrived.
            if s == self.next_expected {
                self.next_expected += 1;
            } else {
                if self.got.is_empty() {
                    self.got = vec![0; (self.packets as usize).div_ceil(64)];
                }
                self.got[(s / 64) as usize] |= 1 << (s % 64);
            }
            self.received += 1;
            out.new_data = true;
            while self.next_expected < self.packets && self.has(self.next_expected) {
                self.next_expected += 1;
            }
            if self.received == self.packets && !self.complete {
                self.complete = true;
                out.completed = true;
            }
        }
        out.reply = match self.mode {
            AckMode::None => None,
            AckMode::Cumulative | AckMode::InOrderOnly => Some(Reply {
                flags: ACK | ece,
                seq: self.next_expected,
                echo: s,
                ts_ps: h.ts_ps,
            }),
            AckMode::Ndp => {
                out.pull = !self.complete;
                Some(Reply {
                    flags: ACK | ece,
                    seq: self.next_expected,
                    echo: s,
                    ts_ps: h.ts_ps,
                })
            }
        };
        out
    }
}

/// A transport and its parameters, as written in a scenario.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum TransportSpec {
    /// No congestion control; optional cap on bytes in flight.
    Raw(raw::RawSpec),
    /// Go-back-N with a fixed window and a retransmission timer.
    Gbn(gbn::GbnSpec),
    /// TCP NewReno.
    NewReno(newreno::RenoSpec),
    /// DCTCP.
    Dctcp(dctcp::DctcpSpec),
    /// NDP-like receiver-driven transport.
    Ndp(ndp::NdpSpec),
}

impl Default for TransportSpec {
    fn default() -> Self {
        TransportSpec::Raw(raw::RawSpec::default())
    }
}

impl TransportSpec {
    /// Short name for reports.
    pub fn name(&self) -> &'static str {
        match self {
            TransportSpec::Raw(_) => "raw",
            TransportSpec::Gbn(_) => "gbn",
            TransportSpec::NewReno(_) => "newreno",
            TransportSpec::Dctcp(_) => "dctcp",
            TransportSpec::Ndp(_) => "ndp",
        }
    }

    /// How this transport's receiver acknowledges.
    pub fn ack_mode(&self) -> AckMode {
        match self {
            TransportSpec::Raw(r) if r.max_inflight_bytes.is_none() => AckMode::None,
            TransportSpec::Raw(_) => AckMode::Cumulative,
            TransportSpec::Gbn(_) => AckMode::InOrderOnly,
            TransportSpec::NewReno(_) | TransportSpec::Dctcp(_) => AckMode::Cumulative,
            TransportSpec::Ndp(_) => AckMode::Ndp,
        }
    }

    /// A sender for a flow of `shape` offered at `now`.
    pub fn sender(&self, shape: Shape, now: Time) -> Box<dyn Sender> {
        match self {
            TransportSpec::Raw(s) => Box::new(raw::Raw::new(s, shape, now)),
            TransportSpec::Gbn(s) => Box::new(gbn::Gbn::new(s, shape)),
            TransportSpec::NewReno(s) => Box::new(newreno::NewReno::new(s, shape, None)),
            TransportSpec::Dctcp(s) => Box::new(dctcp::new(s, shape)),
            TransportSpec::Ndp(s) => Box::new(ndp::Ndp::new(s, shape)),
        }
    }

    /// A sender for a flow of `shape` on a persistent connection whose last transfer left
    /// `carried` (NewReno and DCTCP resume from it; other transports, and a connection's first
    /// transfer, start afresh).
    pub fn sender_carrying(
        &self,
        shape: Shape,
        now: Time,
        carried: Option<&Carried>,
    ) -> Box<dyn Sender> {
        match (self, carried) {
            (TransportSpec::NewReno(s), Some(c)) => {
                Box::new(newreno::NewReno::new(s, shape, None).resumed(c))
            }
            (TransportSpec::Dctcp(s), Some(c)) => Box::new(dctcp::new(s, shape).resumed(c)),
            _ => self.sender(shape, now),
        }
    }

    /// The same transport with an initial congestion window of `packets` (NewReno and
    /// DCTCP, whose windows grow from one; the others have none to set).
    pub fn with_initial_window(&self, packets: u32) -> Result<TransportSpec, String> {
        let mut t = self.clone();
        match &mut t {
            TransportSpec::NewReno(s) => s.init_cwnd = packets,
            TransportSpec::Dctcp(s) => s.reno.init_cwnd = packets,
            _ => return Err("needs a window-based transport (NewReno or DCTCP)".into()),
        }
        t.validate()?;
        Ok(t)
    }

    /// Check parameters; the error names the field.
    pub fn validate(&self) -> Result<(), String> {
        match self {
            TransportSpec::Raw(s) => s.validate(),
            TransportSpec::Gbn(s) => s.validate(),
            TransportSpec::NewReno(s) => s.validate(),
            TransportSpec::Dctcp(s) => s.validate(),
            TransportSpec::Ndp(s) => s.validate(),
        }
    }
}

#[cfg(test)]
pub(crate) mod test_util {
    use super::*;
    use crate::packet::{DATA, PULL};

    pub fn ack(seq: u32, echo: u32, ece: bool) -> Header {
        Header {
            flags: ACK | if ece { ECE } else { 0 },
            seq,
            echo,
            ..Header::default()
        }
    }

    pub fn nack(seq: u32) -> Header {
        Header {
            flags: NACK,
            seq,
            echo: seq,
            ..Header::default()
        }
    }

    pub fn pull(n: u32) -> Header {
        Header {
            flags: PULL,
            seq: n,
            ..Header::default()
        }
    }

    pub fn data(seq: u32) -> Header {
        Header {
            flags: DATA,
            seq,
            len: 100,
            ..Header::default()
        }
    }

    /// Take every packet the sender is willing to send now.
    pub fn drain(s: &mut dyn Sender, now: Time) -> Vec<Seg> {
        let mut v = Vec::new();
        while s.poll(now) == Ready::Now {
            match s.next(now) {
                Some(p) => v.push(p),
                None => break,
            }
            assert!(v.len() < 100_000);
        }
        v
    }

    pub fn seqs(v: &[Seg]) -> Vec<u32> {
        v.iter().map(|s| s.seq).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::test_util::*;
    use super::*;

    #[test]
    fn shapes_cut_flows_into_packets() {
        let s = Shape::new(3000, 1440);
        assert_eq!((s.packets, s.len_of(0), s.len_of(2)), (3, 1440, 120));
        assert_eq!(Shape::new(1440, 1440).packets, 1);
        assert_eq!(Shape::new(1440, 1440).len_of(0), 1440);
    }

    /// In-order arrivals keep no bitmap; the first out-of-order one makes it, and duplicates
    /// below or above the in-order point are still recognised.
    #[test]
    fn a_receiver_keeps_a_bitmap_only_once_packets_come_out_of_order() {
        let mut r = Receiver::new(AckMode::Cumulative, 200);
        for s in 0..100 {
            assert!(r.on_data(&data(s)).new_data);
        }
        assert!(r.got.is_empty());
        assert!(!r.on_data(&data(50)).new_data, "a duplicate below");
        assert!(r.on_data(&data(150)).new_data);
        assert_eq!(r.got.len(), 4);
        assert!(!r.on_data(&data(150)).new_data, "a duplicate above");
        for s in (100..200).filter(|&s| s != 150) {
            assert!(r.on_data(&data(s)).new_data);
        }
        assert!(r.complete() && r.received() == 200);
        assert_eq!(r.on_data(&data(199)).reply.unwrap().seq, 200);
    }

    #[test]
    fn receivers_ack_cumulatively_buffer_or_discard_and_complete() {
        let mut r = Receiver::new(AckMode::Cumulative, 3);
        assert_eq!(r.on_data(&data(1)).reply.unwrap().seq, 0);
        assert_eq!(r.on_data(&data(0)).reply.unwrap().seq, 2);
        let o = r.on_data(&data(2));
        assert!(o.completed && o.reply.unwrap().seq == 3);
        assert!(!r.on_data(&data(2)).completed);

        let mut g = Receiver::new(AckMode::InOrderOnly, 3);
        assert_eq!(g.on_data(&data(1)).reply.unwrap().seq, 0);
        assert_eq!(g.on_data(&data(0)).reply.unwrap().seq, 1);
        assert_eq!(g.on_data(&data(1)).reply.unwrap().seq, 2);

        let mut n = Receiver::new(AckMode::Ndp, 2);
        let mut t = data(0);
        t.flags |= TRIMMED;
        t.ecn = ECN_CE;
        let o = n.on_data(&t);
        assert_eq!(o.reply.unwrap().flags, NACK | ECE);
        assert!(o.pull);
        let o = n.on_data(&data(1));
        assert!(o.pull && o.reply.unwrap().flags == ACK && o.reply.unwrap().echo == 1);
    }

    /// Parameters no transport can run with are refused, the field named (issue #20:
    /// DCTCP's g of NaN or 2.0 and a NewReno maximum RTO below its minimum were accepted).
    #[test]
    fn impossible_parameters_are_refused() {
        let spec = |text: &str| -> TransportSpec { ron::from_str(text).unwrap() };
        let cases = [
            ("Dctcp((g: NaN))", "g: NaN must be above 0 and at most 1"),
            ("Dctcp((g: 2.0))", "g: 2 must be above 0 and at most 1"),
            (
                "Dctcp((initial_alpha: -0.5))",
                "initial_alpha: -0.5 must be from 0 to 1",
            ),
            (
                "NewReno((min_rto_us: 500.0, max_rto_us: 100.0))",
                "max_rto_us: 100 is below min_rto_us (500)",
            ),
            (
                "NewReno((min_rto_us: inf))",
                "min_rto_us: inf must be positive",
            ),
        ];
        for (ron, want) in cases {
            let e = spec(ron).validate().unwrap_err();
            assert!(e.starts_with(want), "{ron}: {e}");
        }
        assert!(spec("Dctcp(())").validate().is_ok());
    }
}
