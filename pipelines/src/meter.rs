//! Meters: two-rate three-colour markers (RFC 2698, colour-blind mode) in simulated time.
//!
//! Why this way: a meter's colour depends on when packets arrive, so it must use the
//! simulated time at which the packet is in the meter's stage (the pipe computes it from the
//! packet's issue cycle, see `pipe.rs`), and it must never drift: two runs give the same
//! colours, and a colour sequence can be checked by hand against RFC 2698. Token buckets are
//! therefore integers: a bucket holds `tokens × 10^12`, so refilling `rate` tokens per
//! second over `Δ` picoseconds adds exactly `rate × Δ` (no division, no rounding).
//!
//! RFC 2698 (colour-blind), with committed bucket `Tc` (size CBS, rate CIR) and peak bucket
//! `Tp` (size PBS, rate PIR), both full when the meter is configured: a packet of size B at
//! time t, after refilling both buckets to t (capped at their sizes), is
//! - red if `Tp < B`;
//! - else yellow if `Tc < B`, and `Tp -= B`;
//! - else green, and `Tp -= B`, `Tc -= B`.
//!
//! The size B is the packet's length in bytes (as stored, without FCS) for a byte meter,
//! and 1 for a packet meter; rates are per second and bursts in the same unit. An
//! unconfigured meter colours every packet green. Colours use TNA's encoding.

use crate::program::CountKind;
use crate::time::Time;
use serde::{Deserialize, Serialize};

/// Colour: green (TNA `MeterColor_t.GREEN`).
pub const GREEN: u8 = 0;
/// Colour: yellow.
pub const YELLOW: u8 = 1;
/// Colour: red.
pub const RED: u8 = 3;

/// The control plane's settings for one meter. Units: bytes (or packets, for a packet
/// meter) per second for rates, bytes (or packets) for bursts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MeterConfig {
    /// Committed information rate.
    pub cir: u64,
    /// Peak information rate (at least `cir`).
    pub pir: u64,
    /// Committed burst size (positive).
    pub cbs: u64,
    /// Peak burst size (positive).
    pub pbs: u64,
}

impl MeterConfig {
    /// RFC 2698's constraints: PIR ≥ CIR, and both burst sizes positive.
    pub fn check(&self) -> Result<(), String> {
        if self.pir < self.cir {
            return Err(format!(
                "PIR ({}) must be at least CIR ({}) (RFC 2698)",
                self.pir, self.cir
            ));
        }
        if self.cbs == 0 || self.pbs == 0 {
            return Err("CBS and PBS must be positive (RFC 2698)".into());
        }
        Ok(())
    }
}

const SCALE: u128 = crate::time::PS_PER_SEC as u128;

/// One meter's state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Meter {
    config: Option<MeterConfig>,
    /// Committed bucket, in tokens × 10^12.
    tc: u128,
    /// Peak bucket, in tokens × 10^12.
    tp: u128,
    /// When the buckets were last brought up to date (`None`: not since configuration).
    last: Option<Time>,
}

impl Meter {
    /// Both buckets (committed, peak) refilled from the last update to `now`, capped at
    /// their bursts (full if no packet has passed since configuration).
    #[inline]
    fn refilled(&self, c: &MeterConfig, now: Time) -> (u128, u128) {
        match self.last {
            Some(last) => {
                let dt = now.ps().saturating_sub(last.ps()) as u128;
                (
                    (self.tc + c.cir as u128 * dt).min(c.cbs as u128 * SCALE),
                    (self.tp + c.pir as u128 * dt).min(c.pbs as u128 * SCALE),
                )
            }
            None => (self.tc, self.tp),
        }
    }
}

fn reading(config: Option<MeterConfig>, tc: u128, tp: u128) -> MeterReading {
    MeterReading {
        config,
        tc: (tc / SCALE) as u64,
        tp: (tp / SCALE) as u64,
        tc_exact: tc,
        tp_exact: tp,
    }
}

/// The buckets of a meter, for the control plane and tests (in whole tokens, rounded
/// down, and exactly in 10^-12 tokens).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MeterReading {
    /// The configuration, if any.
    pub config: Option<MeterConfig>,
    /// Committed bucket, whole tokens.
    pub tc: u64,
    /// Peak bucket, whole tokens.
    pub tp: u64,
    /// Committed bucket in 10^-12 tokens.
    pub tc_exact: u128,
    /// Peak bucket in 10^-12 tokens.
    pub tp_exact: u128,
}

/// A meter array's state.
#[derive(Clone, Debug)]
pub struct MeterBank {
    unit: CountKind,
    meters: Vec<Meter>,
}

impl MeterBank {
    /// `size` unconfigured meters counting `unit`.
    pub fn new(size: u32, unit: CountKind) -> MeterBank {
        MeterBank {
            unit,
            meters: vec![Meter::default(); size as usize],
        }
    }

    /// Number of meters.
    pub fn len(&self) -> usize {
        self.meters.len()
    }

    /// Whether the array has no meters.
    pub fn is_empty(&self) -> bool {
        self.meters.is_empty()
    }

    /// Configure meter `i` (in range: the caller checks); its buckets start full.
    pub fn configure(&mut self, i: usize, c: MeterConfig) -> Result<(), String> {
        c.check()?;
        self.meters[i] = Meter {
            config: Some(c),
            tc: c.cbs as u128 * SCALE,
            tp: c.pbs as u128 * SCALE,
            last: None,
        };
        Ok(())
    }

    /// Meter `i`'s configuration and buckets (as last updated by a packet).
    pub fn read(&self, i: usize) -> MeterReading {
        let m = &self.meters[i];
        reading(m.config, m.tc, m.tp)
    }

    /// Meter `i`'s configuration and buckets at time `now` (refilled since the last packet,
    /// as the next packet would find them), changing nothing.
    pub fn read_at(&self, i: usize, now: Time) -> MeterReading {
        let m = &self.meters[i];
        let (tc, tp) = match m.config {
            Some(c) => m.refilled(&c, now),
            None => (m.tc, m.tp),
        };
        reading(m.config, tc, tp)
    }

    /// Colour a packet of `bytes` bytes passing meter `i` at time `now`.
    #[inline]
    pub fn color(&mut self, i: usize, now: Time, bytes: u32) -> u8 {
        let unit = self.unit;
        let m = &mut self.meters[i];
        let Some(c) = m.config else {
            return GREEN;
        };
        (m.tc, m.tp) = m.refilled(&c, now);
        if m.last.is_none_or(|l| now > l) {
            m.last = Some(now);
        }
        let b = match unit {
            CountKind::Packets => 1,
            _ => bytes as u128,
        } * SCALE;
        if m.tp < b {
            RED
        } else if m.tc < b {
            m.tp -= b;
            YELLOW
        } else {
            m.tp -= b;
            m.tc -= b;
            GREEN
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(n: u64) -> Time {
        Time(n * 1_000_000)
    }

    /// A worked example, computed by hand from RFC 2698 section 3:
    /// CIR = 1,000,000 B/s (1 byte per microsecond), PIR = 2,000,000 B/s (2 B/us),
    /// CBS = 1500 B, PBS = 3000 B; 1000-byte packets.
    #[test]
    #[allow(clippy::vec_init_then_push)] // one push per packet, each after its arithmetic
    fn rfc2698_byte_meter_worked_example() {
        let mut m = MeterBank::new(1, CountKind::Bytes);
        m.configure(
            0,
            MeterConfig {
                cir: 1_000_000,
                pir: 2_000_000,
                cbs: 1500,
                pbs: 3000,
            },
        )
        .unwrap();
        let mut seq = Vec::new();
        // t=0: Tp=3000, Tc=1500. 1000 <= both: green; Tp=2000, Tc=500.
        seq.push(m.color(0, us(0), 1000));
        // t=0: Tp=2000 >= 1000, Tc=500 < 1000: yellow; Tp=1000, Tc=500.
        seq.push(m.color(0, us(0), 1000));
        // t=0: Tp=1000 >= 1000, Tc=500 < 1000: yellow; Tp=0, Tc=500.
        seq.push(m.color(0, us(0), 1000));
        // t=0: Tp=0 < 1000: red; nothing changes.
        seq.push(m.color(0, us(0), 1000));
        // t=250us: Tp = min(3000, 0 + 2*250) = 500 < 1000: red. Tc = min(1500, 500+250) = 750.
        seq.push(m.color(0, us(250), 1000));
        // t=500us: Tp = 500 + 2*250 = 1000 >= 1000; Tc = 750 + 250 = 1000 >= 1000: green;
        // Tp = 0, Tc = 0.
        seq.push(m.color(0, us(500), 1000));
        // t=1500us: Tp = min(3000, 0 + 2000) = 2000; Tc = min(1500, 0 + 1000) = 1000: green;
        // Tp = 1000, Tc = 0.
        seq.push(m.color(0, us(1500), 1000));
        // t=1600us: Tp = 1000 + 200 = 1200 >= 1000; Tc = 100 < 1000: yellow; Tp = 200.
        seq.push(m.color(0, us(1600), 1000));
        assert_eq!(
            seq,
            vec![GREEN, YELLOW, YELLOW, RED, RED, GREEN, GREEN, YELLOW]
        );
        let r = m.read(0);
        assert_eq!((r.tp, r.tc), (200, 100));
        // Read 300 us later, changing nothing: Tp = min(3000, 200 + 600) = 800,
        // Tc = min(1500, 100 + 300) = 400.
        let later = m.read_at(0, us(1900));
        assert_eq!((later.tp, later.tc), (800, 400));
        assert_eq!(m.read(0), r);
        // Long after, both are full again.
        let full = m.read_at(0, us(1_000_000));
        assert_eq!((full.tp, full.tc), (3000, 1500));
    }

    /// Sub-token refills accumulate exactly: CIR = PIR = 3 packets/s, CBS = PBS = 1 packet.
    /// After one packet at t=0 the buckets are empty; a third of a second later each holds
    /// exactly 1 token (3 × (10^12 / 3) is not exact in whole ps, so probe around it).
    #[test]
    fn packet_meter_refills_without_drift() {
        let mut m = MeterBank::new(2, CountKind::Packets);
        let c = MeterConfig {
            cir: 3,
            pir: 3,
            cbs: 1,
            pbs: 1,
        };
        m.configure(1, c).unwrap();
        assert_eq!(m.color(1, Time(0), 1500), GREEN);
        // 333,333,333,333 ps adds 999,999,999,999 × 10^-12 tokens: just short of one.
        assert_eq!(m.color(1, Time(333_333_333_333), 64), RED);
        // One more picosecond adds 3 × 10^-12: 1.000000000002 tokens, capped at the
        // 1-packet burst: green, and the buckets are empty again.
        assert_eq!(m.color(1, Time(333_333_333_334), 64), GREEN);
        assert_eq!(m.read(1).tc_exact, 0);
        // An unconfigured meter is green whatever the load.
        for _ in 0..10 {
            assert_eq!(m.color(0, Time(5), 9000), GREEN);
        }
    }

    #[test]
    fn configurations_follow_rfc2698_constraints() {
        let mut m = MeterBank::new(1, CountKind::Bytes);
        let bad = MeterConfig {
            cir: 10,
            pir: 5,
            cbs: 1,
            pbs: 1,
        };
        assert!(m.configure(0, bad).unwrap_err().contains("PIR"));
    }
}
