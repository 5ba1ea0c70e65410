//! Inputs: input `i` of a kind is a pure function of (kind, seed, `i`).
//!
//! A ChaCha8 stream seeded from the three picks a seed file of the kind's corpus and applies
//! 1 to 4 mutations (1 to 16 for one input in four). Byte-level mutations reach the parsers'
//! corners; the token-aware ones for text (a number replaced by an edge value, an identifier by
//! another of the corpus, nesting deepened, a line repeated) keep much of the input well
//! formed, so the checks and the runs behind the parsers see strange values too.

use crate::corpus::{file, matching};
use crate::Kind;
use rand_chacha::ChaCha8Rng;
use rand_core::{Rng, SeedableRng};
use std::sync::OnceLock;

/// Inputs are cut at this size, so no execution is slow because its input is large.
pub const MAX_INPUT: usize = 256 * 1024;

/// Numbers a text mutation writes: the edges of the integer types the model reads, values
/// just past them, and the floats that break arithmetic.
const NUMBERS: &[&str] = &[
    "0",
    "-1",
    "1",
    "255",
    "256",
    "65535",
    "65536",
    "2147483648",
    "4294967295",
    "4294967296",
    "9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
    "340282366920938463463374607431768211456",
    "-9223372036854775809",
    "0xffffffffffffffff",
    "1e9",
    "1e300",
    "NaN",
    "inf",
    "-inf",
    "0.5",
];

/// Little-endian 32-bit values a binary mutation writes (pcap lengths, times, magics).
const WORDS: &[u32] = &[
    0,
    1,
    13,
    14,
    60,
    64,
    1514,
    9000,
    65535,
    65536,
    262_144,
    0x7fff_ffff,
    0x8000_0000,
    0xffff_ffff,
    0xa1b2_c3d4,
    0xa1b2_3c4d,
    0x0a0d_0d0a,
];

/// What a kind's inputs are made from.
pub struct Corpus {
    /// Files an input starts from.
    pub seeds: Vec<Vec<u8>>,
    /// Files spliced into it (the seeds and their siblings of the same format).
    donors: Vec<Vec<u8>>,
    /// Identifiers of the donors, for replacing one by another.
    words: Vec<String>,
}

impl Corpus {
    fn new(kind: Kind) -> Corpus {
        let seeds: Vec<Vec<u8>> = match kind {
            Kind::P4 => texts(&matching(&[""], ".p4")),
            Kind::Profile => texts(
                &[
                    matching(&["asic-model/profiles/"], ".ron"),
                    matching(&["programs/bfc/tofino2-100g"], ".ron"),
                    matching(&["programs/trimming/tofino1-trim"], ".ron"),
                ]
                .concat(),
            ),
            Kind::Scenario => vec![file("programs/l3router/scenario.ron").to_vec()],
            // The sweep's base scenario has placeholders a sweep fills; they are filled here
            // as a sweep point would be, so the file parses.
            Kind::Net => [
                "programs/net/incast.ron",
                "programs/net/leafspine.ron",
                "programs/bfc/testbed-two-flows.ron",
                "programs/bfc/two-flows.ron",
                "programs/bfc/clos.ron",
                "programs/pyrrha/testbed.ron",
                "programs/pyrrha/merge.ron",
                "programs/pyrrha/loop-three-flows.ron",
            ]
            .iter()
            .map(|p| {
                String::from_utf8_lossy(file(p))
                    .replace("$seed", "1")
                    .replace("$load", "0.5")
                    .into_bytes()
            })
            .collect(),
            Kind::Entries => vec![
                file("programs/l3router/entries.ron").to_vec(),
                file("programs/bfc/testbed-entries.ron").to_vec(),
            ],
            Kind::Pcap => vec![file("programs/l3router/in1.pcap").to_vec()],
            Kind::Stf => texts(&matching(&["tests/stf/"], ".stf")),
        };
        let donors = match kind {
            Kind::P4 | Kind::Pcap => seeds.clone(),
            // An STF file names a program and holds RON entries: both are its vocabulary.
            Kind::Stf => [seeds.clone(), texts(&matching(&["tests/stf/"], ".p4"))].concat(),
            Kind::Profile | Kind::Scenario | Kind::Net | Kind::Entries => {
                [seeds.clone(), texts(&matching(&[""], ".ron"))].concat()
            }
        };
        let mut words: Vec<String> = donors
            .iter()
            .flat_map(|d| {
                identifiers(d).map(|(a, b)| String::from_utf8_lossy(&d[a..b]).into_owned())
            })
            .collect();
        words.sort();
        words.dedup();
        Corpus {
            seeds,
            donors,
            words,
        }
    }

    /// The corpus of `kind`, built once per process.
    pub fn of(kind: Kind) -> &'static Corpus {
        static CORPORA: [OnceLock<Corpus>; 7] = [const { OnceLock::new() }; 7];
        let i = Kind::ALL.iter().position(|&k| k == kind).expect("listed");
        CORPORA[i].get_or_init(|| Corpus::new(kind))
    }
}

fn texts(files: &[(&str, &[u8])]) -> Vec<Vec<u8>> {
    files.iter().map(|(_, b)| b.to_vec()).collect()
}

/// Input `index` of `kind` for `seed`.
pub fn generate(kind: Kind, seed: u64, index: u64) -> Vec<u8> {
    let corpus = Corpus::of(kind);
    let mut rng = ChaCha8Rng::seed_from_u64(mix(seed, kind, index));
    let mut data = corpus.seeds[below(&mut rng, corpus.seeds.len())].clone();
    let most = if below(&mut rng, 4) == 0 { 16 } else { 4 };
    for _ in 0..=below(&mut rng, most) {
        if kind.is_text() && below(&mut rng, 2) == 0 {
            text_mutation(&mut data, corpus, &mut rng);
        } else {
            byte_mutation(&mut data, corpus, &mut rng);
        }
        data.truncate(MAX_INPUT);
    }
    if kind.is_text() {
        // What a target reads: a file's text. Invalid UTF-8 would be refused before any
        // parser saw it, so it is replaced here and the parsers see the rest.
        String::from_utf8_lossy(&data).into_owned().into_bytes()
    } else {
        data
    }
}

/// One 64-bit seed from the three (SplitMix64's finalizer on each step): nearby indices and
/// seeds give unrelated streams.
fn mix(seed: u64, kind: Kind, index: u64) -> u64 {
    let kind = Kind::ALL.iter().position(|&k| k == kind).expect("listed") as u64;
    [kind, index].iter().fold(seed, |h, &v| {
        let mut z = (h ^ v).wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    })
}

/// Uniform in `0..n` (`n > 0`; the modulo bias is negligible for these sizes).
fn below(rng: &mut ChaCha8Rng, n: usize) -> usize {
    (rng.next_u64() % n as u64) as usize
}

/// A range of at most `most` bytes inside `len` bytes (empty if `len` is 0).
fn range(rng: &mut ChaCha8Rng, len: usize, most: usize) -> (usize, usize) {
    let start = below(rng, len + 1);
    let n = below(rng, (len - start).min(most) + 1);
    (start, start + n)
}

fn byte_mutation(data: &mut Vec<u8>, corpus: &Corpus, rng: &mut ChaCha8Rng) {
    let len = data.len();
    match below(rng, 8) {
        0 if len > 0 => {
            let i = below(rng, len);
            data[i] ^= 1 << below(rng, 8);
        }
        1 if len > 0 => {
            let i = below(rng, len);
            data[i] = rng.next_u32() as u8;
        }
        2 => {
            let (a, b) = range(rng, len, 64);
            data.drain(a..b);
        }
        3 => {
            let (a, b) = range(rng, len, 256);
            let copy = data[a..b].to_vec();
            let at = below(rng, len + 1);
            data.splice(at..at, copy);
        }
        4 => {
            let at = below(rng, len + 1);
            let bytes: Vec<u8> = (0..1 + below(rng, 16))
                .map(|_| rng.next_u32() as u8)
                .collect();
            data.splice(at..at, bytes);
        }
        5 => {
            let donor = &corpus.donors[below(rng, corpus.donors.len())];
            let (a, b) = range(rng, donor.len(), 1024);
            let (x, y) = range(rng, len, 1024);
            data.splice(x..y, donor[a..b].iter().copied());
        }
        6 if len >= 4 => {
            let i = below(rng, len - 3);
            let w = WORDS[below(rng, WORDS.len())];
            let w = if below(rng, 2) == 0 {
                w.to_le_bytes()
            } else {
                w.to_be_bytes()
            };
            data[i..i + 4].copy_from_slice(&w);
        }
        _ => data.truncate(below(rng, len + 1)),
    }
}

fn text_mutation(data: &mut Vec<u8>, corpus: &Corpus, rng: &mut ChaCha8Rng) {
    match below(rng, 5) {
        0 => {
            if let Some((a, b)) = pick(rng, numbers(data)) {
                let n = NUMBERS[below(rng, NUMBERS.len())];
                data.splice(a..b, n.bytes());
            }
        }
        1 => {
            if let Some((a, b)) = pick(rng, identifiers(data)) {
                let w = &corpus.words[below(rng, corpus.words.len())];
                data.splice(a..b, w.bytes());
            }
        }
        2 => deepen(data, rng),
        3 => {
            // A line repeated: more tables, states, entries, inputs or packets than the seed.
            let lines: Vec<(usize, usize)> = lines(data).collect();
            if let Some(&(a, b)) = lines.get(below(rng, lines.len().max(1))) {
                let line = data[a..b].to_vec();
                let times = [1, 2, 8, 64][below(rng, 4)];
                let copies: Vec<u8> = line
                    .iter()
                    .copied()
                    .cycle()
                    .take(line.len() * times)
                    .collect();
                data.splice(b..b, copies);
            }
        }
        _ => {
            let lines: Vec<(usize, usize)> = lines(data).collect();
            if let Some(&(a, b)) = lines.get(below(rng, lines.len().max(1))) {
                data.drain(a..b);
            }
        }
    }
}

/// Nesting deepened at a bracket: its pair wrapped in `k` more pairs (still balanced), or
/// `k` openers alone; `k` up to 10,000, past any nesting a person writes, to find recursion
/// without a depth limit.
fn deepen(data: &mut Vec<u8>, rng: &mut ChaCha8Rng) {
    let openers: Vec<usize> = (0..data.len())
        .filter(|&i| matches!(data[i], b'(' | b'{' | b'['))
        .collect();
    let Some(&at) = openers.get(below(rng, openers.len().max(1))) else {
        return;
    };
    let open = data[at];
    let close = match open {
        b'(' => b')',
        b'{' => b'}',
        _ => b']',
    };
    let k = [2, 16, 100, 1000, 10_000][below(rng, 5)];
    if below(rng, 2) == 0 {
        let mut depth = 0usize;
        let end = (at..data.len()).find(|&i| {
            if data[i] == open {
                depth += 1;
            } else if data[i] == close {
                depth -= 1;
            }
            depth == 0
        });
        if let Some(end) = end {
            data.splice(end + 1..end + 1, std::iter::repeat_n(close, k));
        }
    }
    data.splice(at..at, std::iter::repeat_n(open, k));
}

fn pick(
    rng: &mut ChaCha8Rng,
    tokens: impl Iterator<Item = (usize, usize)>,
) -> Option<(usize, usize)> {
    let all: Vec<(usize, usize)> = tokens.collect();
    (!all.is_empty()).then(|| all[below(rng, all.len())])
}

/// Byte ranges of each line, newline included.
fn lines(data: &[u8]) -> impl Iterator<Item = (usize, usize)> + '_ {
    let mut start = 0;
    std::iter::from_fn(move || {
        (start < data.len()).then(|| {
            let end = data[start..]
                .iter()
                .position(|&c| c == b'\n')
                .map_or(data.len(), |i| start + i + 1);
            let r = (start, end);
            start = end;
            r
        })
    })
}

/// Byte ranges of runs of `is` that start where `start` holds (and no run of `is` goes on
/// from before).
fn tokens<'a>(
    data: &'a [u8],
    start: impl Fn(u8) -> bool + 'a,
    is: impl Fn(u8) -> bool + Copy + 'a,
) -> impl Iterator<Item = (usize, usize)> + 'a {
    (0..data.len())
        .filter(move |&i| start(data[i]) && (i == 0 || !is(data[i - 1])))
        .map(move |i| {
            (
                i,
                data[i..]
                    .iter()
                    .position(|&c| !is(c))
                    .map_or(data.len(), |n| i + n),
            )
        })
}

/// Numbers: decimal, hex, with `_` separators and a fraction (`1_000`, `0x8808`, `200.0`).
fn numbers(data: &[u8]) -> impl Iterator<Item = (usize, usize)> + '_ {
    tokens(
        data,
        |c| c.is_ascii_digit(),
        |c| c.is_ascii_alphanumeric() || c == b'_' || c == b'.',
    )
}

/// Identifiers: a letter or `_`, then letters, digits and `_`.
fn identifiers(data: &[u8]) -> impl Iterator<Item = (usize, usize)> + '_ {
    tokens(
        data,
        |c| c.is_ascii_alphabetic() || c == b'_',
        |c| c.is_ascii_alphanumeric() || c == b'_',
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_are_a_function_of_kind_seed_and_index() {
        for kind in Kind::ALL {
            let a: Vec<Vec<u8>> = (0..20).map(|i| generate(kind, 7, i)).collect();
            let b: Vec<Vec<u8>> = (0..20).map(|i| generate(kind, 7, i)).collect();
            assert_eq!(a, b, "{kind}");
            assert_ne!(
                generate(kind, 7, 0),
                generate(kind, 8, 0),
                "{kind}: the seed matters"
            );
            let distinct: std::collections::BTreeSet<&Vec<u8>> = a.iter().collect();
            assert!(distinct.len() > 15, "{kind}: inputs differ");
        }
    }

    #[test]
    fn tokens_are_found_whole() {
        let text = b"x_1: 0x8808, y: 200.0, 12ab";
        let ids: Vec<&[u8]> = identifiers(text).map(|(a, b)| &text[a..b]).collect();
        assert_eq!(ids, [&b"x_1"[..], b"y"]);
        let nums: Vec<&[u8]> = numbers(text).map(|(a, b)| &text[a..b]).collect();
        assert_eq!(nums, [&b"0x8808"[..], b"200.0", b"12ab"]);
    }

    #[test]
    fn deepening_keeps_brackets_balanced_when_wrapping() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for _ in 0..50 {
            let mut data = b"a(b[c]{d})".to_vec();
            deepen(&mut data, &mut rng);
            let opens = data
                .iter()
                .filter(|&&c| c == b'(' || c == b'[' || c == b'{')
                .count();
            let closes = data
                .iter()
                .filter(|&&c| c == b')' || c == b']' || c == b'}')
                .count();
            assert!(opens >= closes && opens > 3);
        }
    }
}
