//! Simulated time: an integer count of picoseconds, and clock domains on top of it.
//!
//! Time never comes from the host's clock and is never a float, so runs are exactly
//! repeatable. Picoseconds keep Ethernet serialization exact for every common line rate
//! (a byte takes 800 ps at 10G, 80 ps at 100G, 20 ps at 400G), and `u64` picoseconds reach
//! 213 days of simulated time. A clock whose period is not a whole number of picoseconds
//! (1.22 GHz is 819.67 ps) has its edges computed from the cycle number, never accumulated,
//! so no error builds up: cycle `n` starts at `ceil(n * 10^12 / hz)` ps.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// Picoseconds in one second.
pub const PS_PER_SEC: u64 = 1_000_000_000_000;

/// The longest time a scenario may name, in nanoseconds: 10^15 ns (11.6 days of simulated
/// time). `u64` picoseconds hold 18 times as much, so sums of a few such times (a start plus
/// a delay plus a period) cannot wrap.
pub const MAX_INPUT_NS: u64 = 1_000_000_000_000_000;

/// A point in simulated time (or a duration), in picoseconds.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct Time(pub u64);

impl Time {
    /// Time zero: the start of every run.
    pub const ZERO: Time = Time(0);

    /// From nanoseconds the model chose (a time from input goes through
    /// [`Time::from_input_ns`]).
    pub const fn from_ns(ns: u64) -> Time {
        Time(ns * 1000)
    }

    /// From nanoseconds read from input: at most [`MAX_INPUT_NS`], else an error naming
    /// `field`.
    pub fn from_input_ns(ns: u64, field: &str) -> Result<Time, String> {
        if ns > MAX_INPUT_NS {
            return Err(format!(
                "{field}: {ns} ns is beyond the longest time a scenario may name ({MAX_INPUT_NS} ns, 11.6 days)"
            ));
        }
        Ok(Time(ns * 1000))
    }

    /// Picoseconds.
    pub const fn ps(self) -> u64 {
        self.0
    }

    /// Whole nanoseconds (rounded down), as timestamps in metadata and pcaps carry them.
    pub const fn ns(self) -> u64 {
        self.0 / 1000
    }

    /// Duration to serialize `bytes` at `gbps` Gb/s, rounded up to a whole picosecond.
    pub fn serialization(bytes: u64, gbps: u32) -> Time {
        // bits * 1e12 / (gbps * 1e9) = bits * 1000 / gbps
        Time((bytes * 8 * 1000).div_ceil(gbps as u64))
    }
}

impl Add for Time {
    type Output = Time;
    fn add(self, o: Time) -> Time {
        Time(self.0 + o.0)
    }
}

impl AddAssign for Time {
    fn add_assign(&mut self, o: Time) {
        self.0 += o.0;
    }
}

impl Sub for Time {
    type Output = Time;
    fn sub(self, o: Time) -> Time {
        Time(self.0 - o.0)
    }
}

impl fmt::Display for Time {
    /// Nanoseconds with three decimals, e.g. `1234.567 ns`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{:03} ns", self.0 / 1000, self.0 % 1000)
    }
}

/// A clock domain: converts between cycle numbers and time without drift.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Clock {
    /// `PS_PER_SEC / hz` in lowest terms (`num / den`): the same quotients, in 64 bits
    /// while the products fit.
    num: u64,
    den: u64,
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

impl Clock {
    /// A clock of `hz` cycles per second (`hz > 0`; profiles are validated for this).
    pub fn new(hz: u64) -> Clock {
        assert!(hz > 0, "clock frequency must be positive");
        let g = gcd(PS_PER_SEC, hz);
        Clock {
            num: PS_PER_SEC / g,
            den: hz / g,
        }
    }

    /// The time at which cycle `n` begins: `ceil(n * 1e12 / hz)`.
    #[inline]
    pub fn time_of(self, n: u64) -> Time {
        match n.checked_mul(self.num) {
            Some(p) => Time(p.div_ceil(self.den)),
            None => Time((n as u128 * self.num as u128).div_ceil(self.den as u128) as u64),
        }
    }

    /// The first cycle that begins at or after `t`.
    #[inline]
    pub fn cycle_at_or_after(self, t: Time) -> u64 {
        // The smallest m with time_of(m) = ceil(m * 1e12 / hz) >= t, i.e. m * 1e12 / hz > t - 1.
        match t.0 {
            0 => 0,
            t => match (t - 1).checked_mul(self.den) {
                Some(p) => p / self.num + 1,
                None => ((t - 1) as u128 * self.den as u128 / self.num as u128) as u64 + 1,
            },
        }
    }

    /// The last cycle that begins at or before `t`.
    pub fn cycle_at_or_before(self, t: Time) -> u64 {
        self.cycle_at_or_after(t + Time(1)) - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialization_is_exact_for_common_rates() {
        assert_eq!(Time::serialization(1, 10), Time(800));
        assert_eq!(Time::serialization(1, 100), Time(80));
        assert_eq!(Time::serialization(1, 400), Time(20));
        assert_eq!(Time::serialization(84, 100), Time(6720));
    }

    #[test]
    fn clock_edges_do_not_drift() {
        let c = Clock::new(1_220_000_000);
        // 1.22e9 cycles is exactly one second.
        assert_eq!(c.time_of(1_220_000_000), Time(PS_PER_SEC));
        assert_eq!(c.time_of(1), Time(820)); // 819.67 rounded up
        assert_eq!(c.time_of(3), Time(2460)); // 2459.02 rounded up
        for n in [0u64, 1, 2, 7, 1000, 123_456_789] {
            assert_eq!(c.cycle_at_or_after(c.time_of(n)), n);
            assert_eq!(c.cycle_at_or_after(c.time_of(n) + Time(1)), n + 1);
            assert_eq!(c.cycle_at_or_before(c.time_of(n)), n);
            assert_eq!(c.cycle_at_or_before(c.time_of(n + 1) - Time(1)), n);
        }
    }

    #[test]
    fn clock_conversions_match_the_128_bit_formulas() {
        for hz in [
            1u64,
            7,
            1_000_000_000,
            1_220_000_000,
            1_250_000_000,
            999_999_937,
        ] {
            let c = Clock::new(hz);
            for n in [0u64, 1, 2, 3, 1_000_003, u64::MAX / 1_000_000, u64::MAX / 7] {
                let t = (n as u128 * PS_PER_SEC as u128).div_ceil(hz as u128);
                if t <= u64::MAX as u128 {
                    assert_eq!(c.time_of(n), Time(t as u64), "hz {hz} n {n}");
                }
                for t in [1u64, 2, 819, 820, 821, n, n.saturating_mul(3), u64::MAX / 3] {
                    let want = match t {
                        0 => 0,
                        t => ((t - 1) as u128 * hz as u128 / PS_PER_SEC as u128) as u64 + 1,
                    };
                    assert_eq!(c.cycle_at_or_after(Time(t)), want, "hz {hz} t {t}");
                }
            }
        }
    }

    #[test]
    fn display_shows_nanoseconds() {
        assert_eq!(Time(1_234_567).to_string(), "1234.567 ns");
    }
}
