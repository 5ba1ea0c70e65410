//! Seeded random streams: every random choice of a network run comes from one of these.
//!
//! Each generator of traffic and each host gets its own ChaCha8 stream, derived from the
//! scenario seed and a stream label, so adding a generator does not change the draws of the
//! others and two runs with the same seed are identical. Distributions are computed here
//! from uniform draws (exponential by inversion, normal by Box–Muller) so that the numbers do
//! not depend on a distribution crate's version.

use rand_chacha::ChaCha8Rng;
use rand_core::{Rng as _, SeedableRng};

/// A deterministic random stream.
pub struct Stream {
    rng: ChaCha8Rng,
}

impl Stream {
    /// The stream `label` of a run seeded with `seed`.
    pub fn new(seed: u64, label: &str) -> Stream {
        // FNV-1a of the label, mixed with the seed (splitmix64 finaliser).
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in label.bytes() {
            h ^= b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        let mut z = seed ^ h.rotate_left(17);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        Stream {
            rng: ChaCha8Rng::seed_from_u64(z),
        }
    }

    /// A raw 64-bit draw.
    pub fn next_u64(&mut self) -> u64 {
        self.rng.next_u64()
    }

    /// Uniform in [0, 1).
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in (0, 1]: safe to take the logarithm of.
    pub fn uniform_open0(&mut self) -> f64 {
        1.0 - self.uniform()
    }

    /// Uniform integer in `0..n` (`n > 0`), without modulo bias worth noting (n ≪ 2^64).
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// Exponential with the given mean.
    pub fn exponential(&mut self, mean: f64) -> f64 {
        -mean * self.uniform_open0().ln()
    }

    /// Standard normal (Box–Muller; one of the pair is discarded, for simplicity).
    pub fn normal(&mut self) -> f64 {
        let u1 = self.uniform_open0();
        let u2 = self.uniform();
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }

    /// Log-normal with the given mean and shape σ (the standard deviation of the underlying
    /// normal): μ = ln(mean) − σ²/2, so that the mean is as asked.
    pub fn lognormal(&mut self, mean: f64, sigma: f64) -> f64 {
        let mu = mean.ln() - sigma * sigma / 2.0;
        (mu + sigma * self.normal()).exp()
    }

    /// A random permutation of `0..n` (Fisher–Yates).
    pub fn permutation(&mut self, n: usize) -> Vec<usize> {
        let mut v: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            let j = self.below(i as u64 + 1) as usize;
            v.swap(i, j);
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_repeatable_and_distinct() {
        let a: Vec<u64> = (0..4)
            .map(|_| 0)
            .scan(Stream::new(7, "h0"), |s, _| Some(s.next_u64()))
            .collect();
        let b: Vec<u64> = (0..4)
            .map(|_| 0)
            .scan(Stream::new(7, "h0"), |s, _| Some(s.next_u64()))
            .collect();
        let c: Vec<u64> = (0..4)
            .map(|_| 0)
            .scan(Stream::new(7, "h1"), |s, _| Some(s.next_u64()))
            .collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn distribution_means_are_right() {
        let mut s = Stream::new(1, "t");
        let n = 200_000;
        let e: f64 = (0..n).map(|_| s.exponential(3.0)).sum::<f64>() / n as f64;
        assert!((e - 3.0).abs() < 0.05, "{e}");
        let l: f64 = (0..n).map(|_| s.lognormal(3.0, 1.0)).sum::<f64>() / n as f64;
        assert!((l - 3.0).abs() < 0.1, "{l}");
        let p = s.permutation(10);
        let mut q = p.clone();
        q.sort();
        assert_eq!(q, (0..10).collect::<Vec<_>>());
    }
}
