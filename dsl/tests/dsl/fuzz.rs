//! The compiler never panics: arbitrary text, token soup and random mutations of the valid
//! programs (and of the error files) all give `Ok` or `Err`, never a panic.

use crate::common::{all_programs, profile};
use proptest::prelude::*;
use proptest::test_runner::Config;

fn sources() -> Vec<String> {
    let mut v: Vec<String> = all_programs().into_iter().map(|(_, s)| s).collect();
    let dir = std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/errors"));
    let mut errs: Vec<_> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .collect();
    errs.sort();
    v.extend(errs.iter().filter_map(|p| std::fs::read_to_string(p).ok()));
    v
}

/// Words and symbols of the language, for token soup.
const VOCAB: &[&str] = &[
    "header",
    "struct",
    "parser",
    "control",
    "state",
    "transition",
    "select",
    "action",
    "table",
    "key",
    "actions",
    "size",
    "default_action",
    "const",
    "entries",
    "apply",
    "if",
    "else",
    "switch",
    "enum",
    "typedef",
    "bit<8>",
    "bit<16>",
    "bit<0>",
    "bit<129>",
    "bool",
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    "<",
    ">",
    ";",
    ":",
    ",",
    ".",
    "=",
    "==",
    "!=",
    "++",
    "|+|",
    "|-|",
    "&&&",
    "..",
    "&",
    "|",
    "^",
    "~",
    "<<",
    ">>",
    "+",
    "-",
    "!",
    "0",
    "1",
    "7",
    "8w255",
    "0xffff",
    "340282366920938463463374607431768211455",
    "hdr",
    "meta",
    "pkt",
    "extract",
    "lookahead",
    "Register",
    "RegisterAction",
    "Hash",
    "Meter",
    "Counter",
    "DirectCounter",
    "Random",
    "execute",
    "count",
    "get",
    "value",
    "rv",
    "void",
    "inout",
    "out",
    "in",
    "Pipeline",
    "Switch",
    "exact",
    "lpm",
    "ternary",
    "range",
    "isValid",
    "setValid",
    "accept",
    "reject",
    "default",
];

/// Apply one mutation chosen by `kind` at positions derived from `a` and `b`.
fn mutate(src: &str, kind: u8, a: usize, b: usize, n: u128) -> String {
    let lines: Vec<&str> = src.lines().collect();
    let chars: Vec<char> = src.chars().collect();
    if lines.is_empty() || chars.is_empty() {
        return src.to_string();
    }
    let (la, lb) = (a % lines.len(), b % lines.len());
    let (ca, cb) = (a % chars.len(), b % chars.len());
    match kind % 8 {
        // Delete a line.
        0 => {
            let mut l = lines.clone();
            l.remove(la);
            l.join("\n")
        }
        // Duplicate a line.
        1 => {
            let mut l = lines.clone();
            l.insert(lb, lines[la]);
            l.join("\n")
        }
        // Swap two lines.
        2 => {
            let mut l = lines.clone();
            l.swap(la, lb);
            l.join("\n")
        }
        // Delete a range of characters.
        3 => {
            let (lo, hi) = (ca.min(cb), ca.max(cb).min(ca.min(cb) + 40));
            chars[..lo].iter().chain(&chars[hi..]).collect()
        }
        // Replace the first number at or after a position.
        4 => {
            let start = chars[ca..]
                .iter()
                .position(|c| c.is_ascii_digit())
                .map(|p| p + ca);
            match start {
                Some(s) => {
                    let end = chars[s..]
                        .iter()
                        .position(|c| !c.is_ascii_alphanumeric())
                        .map_or(chars.len(), |p| p + s);
                    let mut out: String = chars[..s].iter().collect();
                    out.push_str(&n.to_string());
                    out.extend(&chars[end..]);
                    out
                }
                None => src.to_string(),
            }
        }
        // Insert a word of the language.
        5 => {
            let mut out: String = chars[..ca].iter().collect();
            out.push(' ');
            out.push_str(VOCAB[b % VOCAB.len()]);
            out.push(' ');
            out.extend(&chars[ca..]);
            out
        }
        // Swap two characters.
        6 => {
            let mut c = chars.clone();
            c.swap(ca, cb);
            c.into_iter().collect()
        }
        // Truncate.
        _ => chars[..ca].iter().collect(),
    }
}

/// Cases per property: modest by default so `cargo test` stays quick; set `FUZZ_CASES` for a
/// longer hunt.
fn cases(default: u32) -> u32 {
    std::env::var("FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn compiles_without_panic(src: &str) {
    for chip in ["tofino2-like", "teaching"] {
        let spec = profile(chip);
        if let Err(e) = dsl::compile(src, "fuzz.p4", &spec) {
            // Errors must locate and render without panicking too.
            let _ = e.render();
            let _ = e.to_string();
        }
    }
}

proptest! {
    #![proptest_config(Config { cases: cases(64), ..Config::default() })]

    #[test]
    fn arbitrary_text_never_panics(s in "\\PC{0,300}") {
        compiles_without_panic(&s);
    }

    #[test]
    fn token_soup_never_panics(words in proptest::collection::vec(0..VOCAB.len(), 0..80)) {
        let s: Vec<&str> = words.iter().map(|&i| VOCAB[i]).collect();
        compiles_without_panic(&s.join(" "));
    }
}

proptest! {
    #![proptest_config(Config { cases: cases(256), ..Config::default() })]

    #[test]
    fn mutated_programs_never_panic(
        which in any::<usize>(),
        steps in proptest::collection::vec((any::<u8>(), any::<usize>(), any::<usize>(), any::<u128>()), 1..4),
    ) {
        let all = sources();
        let mut src = all[which % all.len()].clone();
        for (kind, a, b, n) in steps {
            src = mutate(&src, kind, a, b, n % 1_000_000_000_000);
        }
        compiles_without_panic(&src);
    }
}
