//! Flow-size distributions: empirical CDFs read from text files.
//!
//! Format (`data/cdf/*.txt`): `#` starts a comment (the header cites the source); every other
//! non-blank line is `SIZE_BYTES CUMULATIVE`, with sizes and cumulative values
//! non-decreasing. Cumulative values are percentages ending at exactly 100, or fractions
//! ending at exactly 1. A sample is
//! drawn by inverse transform: a uniform `u` in [0, 100) picks the segment whose cumulative
//! percentages bracket it, and the size is interpolated linearly between the segment's sizes
//! (rounded to the nearest byte, at least 1). If the first point's percentage is above 0,
//! draws below it return the first size. This is what the HPCC `traffic_gen.py` sampler does
//! with the same files, so load computations agree with theirs.
//!
//! Built-in names (`websearch`, `fb_hadoop`, `google_rpc`, `memcached`) refer to the files
//! shipped in `data/cdf/`, embedded into the binary.

use crate::rng::Stream;

/// Files shipped with the tool: `(name, text)`.
pub const BUILTIN: &[(&str, &str)] = &[
    ("websearch", include_str!("../../data/cdf/websearch.txt")),
    ("fb_hadoop", include_str!("../../data/cdf/fb_hadoop.txt")),
    ("google_rpc", include_str!("../../data/cdf/google_rpc.txt")),
    ("memcached", include_str!("../../data/cdf/memcached.txt")),
];

/// An empirical size distribution.
#[derive(Clone, Debug, PartialEq)]
pub struct Cdf {
    /// Where it came from (name or path).
    pub name: String,
    /// (size in bytes, cumulative percent), as in the file.
    pub points: Vec<(f64, f64)>,
}

impl Cdf {
    /// A built-in by name, or a file at `name_or_path`.
    pub fn load(name_or_path: &str) -> Result<Cdf, String> {
        if let Some((_, text)) = BUILTIN.iter().find(|(n, _)| *n == name_or_path) {
            return Cdf::parse(text, name_or_path);
        }
        let text = std::fs::read_to_string(name_or_path).map_err(|e| {
            let names: Vec<&str> = BUILTIN.iter().map(|b| b.0).collect();
            format!(
                "{name_or_path}: not a built-in size distribution ({}) and cannot read it as a file: {e}",
                names.join(", ")
            )
        })?;
        Cdf::parse(&text, name_or_path)
    }

    /// Parse the text format; errors name `origin:line`.
    pub fn parse(text: &str, origin: &str) -> Result<Cdf, String> {
        let mut points: Vec<(f64, f64)> = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let err = |m: &str| format!("{origin}:{}: {m}", i + 1);
            let mut it = line.split_whitespace();
            let (Some(a), Some(b), None) = (it.next(), it.next(), it.next()) else {
                return Err(err("expected `SIZE_BYTES CUMULATIVE_PERCENT`"));
            };
            let size: f64 = a.parse().map_err(|_| err("size is not a number"))?;
            let pct: f64 = b.parse().map_err(|_| err("percentage is not a number"))?;
            if !(0.0..=100.0).contains(&pct) || size < 0.0 || !size.is_finite() {
                return Err(err("size must be ≥ 0 and the percentage within 0..=100"));
            }
            if let Some(&(ps, pp)) = points.last() {
                if size < ps || pct < pp {
                    return Err(err("sizes and percentages must not decrease"));
                }
            }
            points.push((size, pct));
        }
        match points.last() {
            None => return Err(format!("{origin}: no points")),
            // Fractions: scale to percent.
            Some(&(_, 1.0)) => points.iter_mut().for_each(|p| p.1 *= 100.0),
            Some(&(_, p)) if p != 100.0 => {
                return Err(format!(
                    "{origin}: the last point must be at 100 (percent) or 1 (fraction), not {p}"
                ))
            }
            _ => {}
        }
        Ok(Cdf {
            name: origin.to_string(),
            points,
        })
    }

    /// Draw one size in bytes.
    pub fn sample(&self, s: &mut Stream) -> u64 {
        self.at(s.uniform() * 100.0)
    }

    /// The size at cumulative percentage `u` in [0, 100).
    pub fn at(&self, u: f64) -> u64 {
        let p = &self.points;
        let i = p.partition_point(|&(_, c)| c <= u);
        let v = if i == 0 {
            p[0].0
        } else if i >= p.len() {
            p[p.len() - 1].0
        } else {
            let (s0, c0) = p[i - 1];
            let (s1, c1) = p[i];
            if c1 > c0 {
                s0 + (s1 - s0) * (u - c0) / (c1 - c0)
            } else {
                s1
            }
        };
        (v.round() as u64).max(1)
    }

    /// Mean size in bytes of the interpolated distribution.
    pub fn mean(&self) -> f64 {
        let p = &self.points;
        let mut m = p[0].0 * p[0].1 / 100.0;
        for w in p.windows(2) {
            m += (w[0].0 + w[1].0) / 2.0 * (w[1].1 - w[0].1) / 100.0;
        }
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_parse_and_have_their_published_means() {
        for (name, _) in BUILTIN {
            let c = Cdf::load(name).unwrap();
            assert!(c.mean() > 1.0, "{name}");
        }
        // The DCTCP web-search workload: about 1.7 MB on average with these points.
        let w = Cdf::load("websearch").unwrap();
        assert!((w.mean() - 1.71e6).abs() < 0.01e6, "{}", w.mean());
    }

    #[test]
    fn sampling_follows_the_points() {
        let c = Cdf::parse("0 0\n100 50\n200 100\n", "t").unwrap();
        assert_eq!(c.at(25.0), 50);
        assert_eq!(c.at(75.0), 150);
        let mut s = Stream::new(3, "x");
        let n = 100_000;
        let m: f64 = (0..n).map(|_| c.sample(&mut s) as f64).sum::<f64>() / n as f64;
        assert!((m - c.mean()).abs() < 1.5, "{m} vs {}", c.mean());
    }

    #[test]
    fn bad_files_are_named() {
        assert!(Cdf::parse("10 5\n5 100\n", "f")
            .unwrap_err()
            .starts_with("f:2:"));
        assert!(Cdf::parse("10 5\n", "f")
            .unwrap_err()
            .contains("100 (percent)"));
    }
}
