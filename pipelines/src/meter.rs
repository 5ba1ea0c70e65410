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
//! The size B is 1 for a packet meter. For a byte meter it is the packet's length in bytes
//! as stored (without FCS) plus the array's byte-count adjustment, or 0 if that sum is
//! negative: Tofino's meter ALU adds its table's signed `meter_bytecount_adjust` to the
//! length and counts 0 on underflow (tofino-model, `src/shared/mau-meter-alu.cpp`). With +24
//! (preamble and SFD 8, FCS 4, inter-frame gap 12) a byte meter counts what a frame takes of
//! the wire, so a rate of line rate is line rate. (Tofino's metered length includes the
//! 4-byte FCS, so there the same correction is +20; this model stores frames without it.)
//! Rates are per second and bursts in the same unit. An unconfigured meter colours every
//! packet green. Colours use TNA's encoding.

use crate::program::CountKind;
use crate::time::Time;
use serde::{Deserialize, Serialize};
use std::ops::RangeInclusive;

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

/// Whether a meter array counting `unit` may add `bytes` to each packet's length, the meter
/// ALU holding the adjustments in `range` (the profile's `meter.byte_count_adjust_bits`). A
/// packet meter counts packets whatever their length: it takes no adjustment but 0.
pub fn check_byte_count_adjust(
    unit: CountKind,
    bytes: i32,
    range: RangeInclusive<i32>,
) -> Result<(), String> {
    if unit == CountKind::Packets && bytes != 0 {
        return Err(format!(
            "counts packets; a byte-count adjustment ({bytes}) applies to byte meters only"
        ));
    }
    if !range.contains(&bytes) {
        return Err(format!(
            "byte-count adjustment {bytes} is outside {} to {}, what the meter ALU holds \
             (meter.byte_count_adjust_bits)",
            range.start(),
            range.end()
        ));
    }
    Ok(())
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
    /// Bytes added to a packet's length before a byte meter colours it (the array's, as a
    /// Tofino meter table has one).
    byte_count_adjust: i32,
    meters: Vec<Meter>,
}

impl MeterBank {
    /// `size` unconfigured meters counting `unit`, adding `byte_count_adjust` to each
    /// packet's length if they count bytes.
    pub fn new(size: u32, unit: CountKind, byte_count_adjust: i32) -> MeterBank {
        MeterBank {
            unit,
            byte_count_adjust,
            meters: vec![Meter::default(); size as usize],
        }
    }

    /// The byte-count adjustment of the array.
    pub fn byte_count_adjust(&self) -> i32 {
        self.byte_count_adjust
    }

    /// Set the byte-count adjustment of the array (the buckets stay as they are), checked
    /// by the caller ([`check_byte_count_adjust`]).
    pub fn set_byte_count_adjust(&mut self, bytes: i32) {
        self.byte_count_adjust = bytes;
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
        let (unit, adjust) = (self.unit, self.byte_count_adjust as i64);
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
            _ => (bytes as i64 + adjust).max(0) as u128,
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
        let mut m = MeterBank::new(1, CountKind::Bytes, 0);
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
        let mut m = MeterBank::new(2, CountKind::Packets, 0);
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

    /// A byte meter at R = 1 byte per ns with both bursts one adjusted packet deep: with +20,
    /// 1000-byte packets pass every 1020 ns and the one 1019 ns after is red (1019 tokens for
    /// 1020 bytes); without the adjustment 1000 ns is enough. A negative adjustment below
    /// the length counts 0 bytes.
    #[test]
    fn byte_count_adjustment_adds_to_each_packets_length() {
        let c = MeterConfig {
            cir: 1_000_000_000,
            pir: 1_000_000_000,
            cbs: 1020,
            pbs: 1020,
        };
        let ns = |n: u64| Time(n * 1000);
        let colours = |adjust: i32, gaps: &[u64]| {
            let mut m = MeterBank::new(1, CountKind::Bytes, adjust);
            m.configure(0, c).unwrap();
            let mut t = 0;
            let mut seq = vec![m.color(0, ns(0), 1000)];
            for g in gaps {
                t += g;
                seq.push(m.color(0, ns(t), 1000));
            }
            seq
        };
        assert_eq!(colours(20, &[1020, 1020, 1020]), [GREEN; 4]);
        assert_eq!(colours(20, &[1020, 1019]), [GREEN, GREEN, RED]);
        assert_eq!(colours(20, &[1019]), [GREEN, RED]);
        assert_eq!(colours(0, &[1000, 1000]), [GREEN; 3]);
        assert_eq!(colours(19, &[1019]), [GREEN, GREEN]);
        // Counting 0 bytes: every packet green, however close.
        assert_eq!(colours(-1500, &[0, 0, 1]), [GREEN; 4]);
        // A packet meter ignores lengths; the check refuses an adjustment for it.
        let range = -8192..=8191;
        assert!(check_byte_count_adjust(CountKind::Packets, 20, range.clone()).is_err());
        assert!(check_byte_count_adjust(CountKind::Bytes, 8191, range.clone()).is_ok());
        assert!(check_byte_count_adjust(CountKind::Bytes, -8193, range).is_err());
    }

    #[test]
    fn configurations_follow_rfc2698_constraints() {
        let mut m = MeterBank::new(1, CountKind::Bytes, 0);
        let bad = MeterConfig {
            cir: 10,
            pir: 5,
            cbs: 1,
            pbs: 1,
        };
        assert!(m.configure(0, bad).unwrap_err().contains("PIR"));
    }
}
