//! The reference pages show what the tools do. Every example program of
//! `docs/LANGUAGE.md` compiles, or fails with exactly the message the page shows after it;
//! and every `asic` command in a console block of the reference pages prints what the page
//! shows (`...` standing for any lines); a `$ cat FILE` line there shows a file an earlier
//! command wrote.
//!
//! How `LANGUAGE.md`'s examples are written (the page says it too): a ```` ```p4 program ````
//! block is a whole program, the first one the *skeleton*; a ```` ```p4 KIND ```` block is
//! the body of one block of the skeleton (`parser`, `ingress`, `deparser`, `egress_parser`,
//! `egress`, `egress_deparser`) or top-level declarations (`top`, all of which are added to
//! every example). A ```` ```text ```` block right after an example holds the `error:` it
//! must fail with, or lines its resource report must contain. Examples compile for
//! `teaching`, or the chip a `chip=NAME` word names.

use crate::common::repo;
use std::path::Path;
use std::process::Command;

/// The pages whose console blocks are run.
const PAGES: [&str; 4] = [
    "docs/TUTORIAL.md",
    "docs/LANGUAGE.md",
    "docs/SCENARIOS.md",
    "docs/OUTPUTS.md",
];

/// A fenced block: its info words, its text, and the line it starts on.
struct Block {
    info: Vec<String>,
    text: String,
    line: usize,
    /// The block right after it, with only blank lines between, if it is a `text` block.
    follows: Option<String>,
}

fn blocks(page: &str) -> Vec<Block> {
    let lines: Vec<&str> = page.lines().collect();
    let mut out: Vec<(Block, usize)> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some(info) = lines[i].strip_prefix("```") else {
            i += 1;
            continue;
        };
        let end = (i + 1..lines.len())
            .find(|&j| lines[j].starts_with("```"))
            .unwrap_or_else(|| panic!("line {}: the block is not closed", i + 1));
        out.push((
            Block {
                info: info.split_whitespace().map(str::to_string).collect(),
                text: lines[i + 1..end].join("\n"),
                line: i + 1,
                follows: None,
            },
            end,
        ));
        i = end + 1;
    }
    for k in 1..out.len() {
        let (prev_end, next_start) = (out[k - 1].1, out[k].0.line - 1);
        let adjacent = lines[prev_end + 1..next_start]
            .iter()
            .all(|l| l.trim().is_empty());
        if adjacent && out[k].0.info == ["text"] {
            out[k - 1].0.follows = Some(out[k].0.text.clone());
        }
    }
    out.into_iter().map(|(b, _)| b).collect()
}

/// `lines` (of an expected output, `...` standing for any number of lines) in `actual`, in
/// order; `Err` names the first line not found. Trailing blanks do not count.
fn contains_in_order(expected: &str, actual: &str) -> Result<(), String> {
    let actual: Vec<&str> = actual.lines().map(str::trim_end).collect();
    let mut at = 0;
    let mut skip = false;
    for want in expected.lines().map(str::trim_end) {
        if want == "..." {
            skip = true;
            continue;
        }
        let found = if skip {
            actual[at..].iter().position(|l| *l == want).map(|k| at + k)
        } else {
            (actual.get(at) == Some(&want)).then_some(at)
        };
        match found {
            Some(k) => at = k + 1,
            None => return Err(want.to_string()),
        }
        skip = false;
    }
    if !skip && at != actual.len() {
        return Err(format!("(end of output; more follows: `{}`)", actual[at]));
    }
    Ok(())
}

/// Where in the skeleton each kind of example goes: the body of the block declared so.
fn block_start(kind: &str) -> Option<&'static str> {
    Some(match kind {
        "parser" => "parser IngressParser(",
        "ingress" => "control Ingress(",
        "deparser" => "control IngressDeparser(",
        "egress_parser" => "parser EgressParser(",
        "egress" => "control Egress(",
        "egress_deparser" => "control EgressDeparser(",
        _ => return None,
    })
}

/// The index of the bracket closing the one at `open`.
fn closing(text: &str, open: usize) -> usize {
    let (o, c) = match text.as_bytes()[open] {
        b'(' => (b'(', b')'),
        _ => (b'{', b'}'),
    };
    let mut depth = 0;
    for (i, &b) in text.as_bytes().iter().enumerate().skip(open) {
        if b == o {
            depth += 1;
        } else if b == c {
            depth -= 1;
            if depth == 0 {
                return i;
            }
        }
    }
    panic!("unbalanced skeleton")
}

/// The skeleton with `tops` declared before its first parser and `body` as the body of the
/// block `kind` names.
fn splice(skeleton: &str, tops: &str, kind: &str, body: &str) -> String {
    let mut s = skeleton.to_string();
    if let Some(start) = block_start(kind) {
        let decl = s.find(start).expect("the skeleton has the block");
        let params = closing(&s, s[decl..].find('(').unwrap() + decl);
        let open = s[params..].find('{').unwrap() + params;
        let close = closing(&s, open);
        s.replace_range(open + 1..close, &format!("\n{body}\n"));
    }
    let at = s.find("parser IngressParser(").unwrap();
    s.insert_str(at, &format!("{tops}\n"));
    s
}

#[test]
fn every_language_example_compiles_or_fails_as_shown() {
    let page = std::fs::read_to_string(repo("docs/LANGUAGE.md")).unwrap();
    let all = blocks(&page);
    let examples: Vec<&Block> = all
        .iter()
        .filter(|b| b.info.first().is_some_and(|w| w == "p4"))
        .collect();
    let is_error = |b: &Block| {
        b.follows
            .as_deref()
            .is_some_and(|f| f.starts_with("error: "))
    };
    let skeleton = &examples
        .iter()
        .find(|b| b.info.get(1).is_some_and(|k| k == "program"))
        .expect("a skeleton")
        .text;
    let tops: Vec<&str> = examples
        .iter()
        .filter(|b| b.info.get(1).is_some_and(|k| k == "top") && !is_error(b))
        .map(|b| b.text.as_str())
        .collect();
    let mut failures = Vec::new();
    for b in &examples {
        let kind = b.info.get(1).map_or("", String::as_str);
        let chip = b
            .info
            .iter()
            .find_map(|w| w.strip_prefix("chip="))
            .unwrap_or("teaching");
        let source = match kind {
            "program" => b.text.clone(),
            "top" => {
                let others: Vec<&str> = tops.iter().copied().filter(|t| *t != b.text).collect();
                splice(
                    skeleton,
                    &format!("{}\n{}", others.join("\n"), b.text),
                    "top",
                    "",
                )
            }
            k if block_start(k).is_some() => splice(skeleton, &tops.join("\n"), k, &b.text),
            other => {
                failures.push(format!("line {}: unknown kind `{other}`", b.line));
                continue;
            }
        };
        let profile = asic_model::profile::load(chip).unwrap();
        let result = dsl::compile(&source, "example.p4", &profile.pipe);
        let fail = |what: String| format!("LANGUAGE.md:{}: {what}", b.line);
        match (result, b.follows.as_deref()) {
            (Err(e), Some(f)) if is_error(b) => {
                let want = f.lines().next().unwrap().trim_start_matches("error: ");
                if e.message != want {
                    failures.push(fail(format!("want `{want}`\n  got `{}`", e.message)));
                }
            }
            (Ok(_), Some(f)) if is_error(b) => {
                failures.push(fail(format!("compiled, but the page shows `{f}`")))
            }
            (Err(e), _) => failures.push(fail(format!("does not compile: {e}\n{source}"))),
            (Ok(c), Some(f)) => {
                if let Err(line) = contains_in_order(f, &c.report.render_text()) {
                    failures.push(fail(format!("the report lacks `{line}`")));
                }
            }
            (Ok(_), None) => {}
        }
    }
    assert!(examples.len() >= 30, "{} examples", examples.len());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A directory where commands run as from the repository's root (its entries linked in), so
/// that what they write stays out of the repository.
fn scratch_root() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = repo("");
    for e in std::fs::read_dir(&root).unwrap().flatten() {
        let name = e.file_name();
        if name == "target" || name == "out" {
            continue;
        }
        std::os::unix::fs::symlink(e.path(), dir.path().join(&name)).unwrap();
    }
    dir
}

fn run_command(dir: &Path, command: &str) -> String {
    let args: Vec<&str> = command.split_whitespace().collect();
    let out = Command::new(env!("CARGO_BIN_EXE_asic"))
        .args(&args)
        .current_dir(dir)
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap() + &String::from_utf8(out.stderr).unwrap()
}

#[test]
fn every_command_on_the_reference_pages_prints_what_they_show() {
    let dir = scratch_root();
    let mut failures = Vec::new();
    let mut commands = 0;
    for page in PAGES {
        let text = std::fs::read_to_string(repo(page)).unwrap();
        for b in blocks(&text).iter().filter(|b| b.info == ["console"]) {
            // `$ asic ARGS` and `$ cat FILE` lines, each followed by what it prints.
            let mut runs: Vec<(String, Vec<&str>)> = Vec::new();
            for line in b.text.lines() {
                match line.strip_prefix("$ ") {
                    Some(command) => runs.push((command.to_string(), Vec::new())),
                    None => match runs.last_mut() {
                        Some(r) => r.1.push(line),
                        None => failures.push(format!("{page}:{}: no command", b.line)),
                    },
                }
            }
            for (command, expected) in runs {
                commands += 1;
                let got = if let Some(args) = command.strip_prefix("asic ") {
                    run_command(dir.path(), args)
                } else if let Some(file) = command.strip_prefix("cat ") {
                    std::fs::read_to_string(dir.path().join(file))
                        .unwrap_or_else(|e| format!("(cannot read {file}: {e})"))
                } else {
                    failures.push(format!(
                        "{page}:{}: `$ {command}` is neither `asic` nor `cat`",
                        b.line
                    ));
                    continue;
                };
                if let Err(line) = contains_in_order(&expected.join("\n"), &got) {
                    failures.push(format!(
                        "{page}:{}: `{command}` did not print `{line}`; it printed:\n{got}",
                        b.line
                    ));
                }
            }
        }
    }
    assert!(commands >= 5, "{commands} commands");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// A ```` ```ron file=PATH ```` block shows the file at `PATH` as it is.
#[test]
fn every_file_shown_on_the_reference_pages_is_the_file() {
    let mut shown = 0;
    for page in PAGES {
        let text = std::fs::read_to_string(repo(page)).unwrap();
        for b in blocks(&text) {
            let Some(path) = b.info.iter().find_map(|w| w.strip_prefix("file=")) else {
                continue;
            };
            shown += 1;
            let file = std::fs::read_to_string(repo(path))
                .unwrap_or_else(|e| panic!("{page}:{}: {path}: {e}", b.line));
            assert_eq!(
                b.text.trim_end(),
                file.trim_end(),
                "{page}:{}: the block is not {path}",
                b.line
            );
        }
    }
    assert!(shown >= 4, "{shown} files shown");
}

/// The checker itself: elision, order, and the end of the output.
#[test]
fn expected_output_is_matched_line_by_line_with_elision() {
    let out = "a\nb\nc\nd";
    assert!(contains_in_order("a\n...\nc\nd", out).is_ok());
    assert!(contains_in_order("...\nd", out).is_ok());
    assert!(contains_in_order("a\n...", out).is_ok());
    assert_eq!(contains_in_order("a\nc\n...", out), Err("c".into()));
    assert_eq!(contains_in_order("...\nc\nb", out), Err("b".into()));
    assert!(
        contains_in_order("a\nb", out).is_err(),
        "the rest must be elided"
    );
}
