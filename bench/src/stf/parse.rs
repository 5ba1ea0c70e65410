//! The pieces of an STF line: comments, numbers, hex byte patterns, `name=value` options and
//! drop-reason names. Each returns a message without a place; the runner adds `file:line`.

use asic_model::chip::DropReason;
use pipelines::entries::{parse_value, Value};
use std::fmt;

/// `#` starts a comment, except inside a double-quoted string (RON entries).
pub(crate) fn strip_comment(s: &str) -> &str {
    let mut quoted = false;
    for (i, c) in s.char_indices() {
        match c {
            '"' => quoted = !quoted,
            '#' if !quoted => return &s[..i],
            _ => {}
        }
    }
    s
}

/// A number as entry values are written: decimal, `0x`, `0b`, `_` allowed.
pub(crate) fn number(s: &str, what: &str) -> Result<u128, String> {
    parse_value(&Value::Text(s.to_string())).map_err(|e| format!("{what}: {e}"))
}

pub(crate) fn number_u64(s: &str, what: &str) -> Result<u64, String> {
    u64::try_from(number(s, what)?).map_err(|_| format!("{what} `{s}` does not fit 64 bits"))
}

pub(crate) fn number_u32(s: &str, what: &str) -> Result<u32, String> {
    u32::try_from(number(s, what)?).map_err(|_| format!("{what} `{s}` does not fit 32 bits"))
}

/// A port or pipe number: 16 bits (a chip then refuses one it lacks, by name).
pub(crate) fn number_u16(s: &str, what: &str) -> Result<u16, String> {
    u16::try_from(number(s, what)?).map_err(|_| format!("{what} `{s}` does not fit 16 bits"))
}

/// An expected frame: one entry per nibble, `None` where the file wrote `*` (any value).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Pattern(pub(crate) Vec<Option<u8>>);

impl Pattern {
    /// Hex digits split over `tokens` (whitespace between them allowed), and `*` where
    /// `wild`: a whole number of bytes, at least one.
    pub(crate) fn parse(tokens: &[&str], wild: bool) -> Result<Pattern, String> {
        let mut v = Vec::new();
        for t in tokens {
            for c in t.chars() {
                match c {
                    '*' if wild => v.push(None),
                    c => v.push(Some(c.to_digit(16).ok_or_else(|| {
                        format!(
                            "`{c}` is not a hex digit{}",
                            if wild { " or `*`" } else { "" }
                        )
                    })? as u8)),
                }
            }
        }
        if v.len() % 2 != 0 {
            return Err(format!(
                "{} hex digits: not a whole number of bytes",
                v.len()
            ));
        }
        if v.is_empty() {
            return Err("no bytes given".into());
        }
        Ok(Pattern(v))
    }

    /// Hex bytes (no wildcards allowed).
    pub(crate) fn bytes(tokens: &[&str]) -> Result<Vec<u8>, String> {
        let p = Pattern::parse(tokens, false)?;
        Ok(p.0
            .chunks(2)
            .map(|c| (c[0].unwrap_or(0) << 4) | c[1].unwrap_or(0))
            .collect())
    }

    /// Its length in bytes.
    pub(crate) fn len(&self) -> usize {
        self.0.len() / 2
    }

    /// Whether `data` has the same length and every written nibble.
    pub(crate) fn matches(&self, data: &[u8]) -> bool {
        self.len() == data.len()
            && self
                .0
                .iter()
                .enumerate()
                .all(|(i, n)| n.is_none_or(|x| x == nibble(data, i)))
    }
}

/// Nibble `i` of `data` (high nibble of byte 0 first).
pub(crate) fn nibble(data: &[u8], i: usize) -> u8 {
    let b = data[i / 2];
    if i % 2 == 0 {
        b >> 4
    } else {
        b & 0xf
    }
}

impl fmt::Display for Pattern {
    /// As written, lower-case hex with `*`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for n in &self.0 {
            let c = n.map_or('*', |d| char::from_digit(u32::from(d), 16).unwrap_or('?'));
            write!(f, "{c}")?;
        }
        Ok(())
    }
}

/// Lower-case hex, no separators.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `key=value` options after the positional arguments.
pub(crate) fn options<'a>(
    tokens: &[&'a str],
    allowed: &[&str],
) -> Result<Vec<(&'a str, &'a str)>, String> {
    tokens
        .iter()
        .map(|t| {
            let (k, v) = t
                .split_once('=')
                .ok_or_else(|| format!("expected `name=value`, found `{t}`"))?;
            if !allowed.contains(&k) {
                return Err(format!(
                    "unknown option `{k}` (expected one of {})",
                    allowed.join(", ")
                ));
            }
            Ok((k, v))
        })
        .collect()
}

/// The `pipe=` option (pipe 0 if absent).
pub(crate) fn opt_pipe(opts: &[(&str, &str)]) -> Result<u16, String> {
    opts.iter()
        .find(|(o, _)| *o == "pipe")
        .map_or(Ok(0), |(_, v)| number_u16(v, "pipe"))
}

/// A numeric option, if given.
pub(crate) fn opt_u64(opts: &[(&str, &str)], k: &str) -> Result<Option<u64>, String> {
    opts.iter()
        .find(|(o, _)| *o == k)
        .map(|(_, v)| number_u64(v, k))
        .transpose()
}

/// A drop reason by the name the chip's counters use.
pub(crate) fn drop_reason(name: &str) -> Result<DropReason, String> {
    DropReason::ALL
        .iter()
        .copied()
        .find(|r| r.name() == name)
        .ok_or_else(|| {
            let all: Vec<&str> = DropReason::ALL.iter().map(|r| r.name()).collect();
            format!("no drop reason `{name}` (reasons: {})", all.join(", "))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_nibbles_and_wildcards() {
        let p = Pattern::parse(&["0a*b", "**"], true).unwrap();
        assert!(p.matches(&[0x0a, 0x1b, 0xff]));
        assert!(!p.matches(&[0x0b, 0x1b, 0xff]));
        assert!(!p.matches(&[0x0a, 0x1b]));
        assert!(Pattern::parse(&["abc"], false).is_err());
        assert!(Pattern::parse(&["a*"], false).is_err());
        assert_eq!(p.to_string(), "0a*b**");
        assert_eq!(Pattern::bytes(&["0a1B", "ff"]).unwrap(), [0x0a, 0x1b, 0xff]);
    }

    #[test]
    fn comments_stop_outside_strings() {
        assert_eq!(strip_comment("add (a: \"#x\") # note"), "add (a: \"#x\") ");
        assert_eq!(strip_comment("# all"), "");
    }

    #[test]
    fn indexes_wider_than_32_bits_are_refused() {
        assert_eq!(number_u32("7", "index"), Ok(7));
        assert!(number_u32("4294967296", "index")
            .unwrap_err()
            .contains("does not fit 32 bits"));
    }
}
