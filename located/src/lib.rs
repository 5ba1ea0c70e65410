//! Errors that name the place, and RON files read with them.
//!
//! Every input of the model (chip profiles, programs' entries, one-chip and network
//! scenarios, topologies, sweep specs) is a RON file, and every error about one must say
//! `file:line:col: what is wrong` on one line. This crate is the one place that turns a
//! `ron` error into that form ([`parse_ron`], [`read_ron`]) and locates a value written in a
//! file ([`position_of`]) for errors found after parsing.
//!
//! It sits below every other crate of the workspace so that the compiler's entries format,
//! the chip's profiles and the scenario formats share it.

use serde::de::DeserializeOwned;
use std::fmt;
use std::path::Path;

/// An error at a position in a file (line and column are 1-based; 0 when unknown).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Located {
    /// The file.
    pub file: String,
    /// Line.
    pub line: usize,
    /// Column.
    pub col: usize,
    /// What is wrong.
    pub message: String,
}

impl Located {
    /// An error about a whole file.
    pub fn file(path: &Path, message: impl Into<String>) -> Located {
        Located {
            file: path.display().to_string(),
            line: 0,
            col: 0,
            message: message.into(),
        }
    }

    /// An error at the first place `value` is written in `text` (see [`position_of`]).
    pub fn at_value(file: &str, text: &str, value: &str, message: impl Into<String>) -> Located {
        let (line, col) = position_of(text, value);
        Located {
            file: file.to_string(),
            line,
            col,
            message: message.into(),
        }
    }
}

impl fmt::Display for Located {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.file, self.message)
        } else {
            write!(
                f,
                "{}:{}:{}: {}",
                self.file, self.line, self.col, self.message
            )
        }
    }
}

impl std::error::Error for Located {}

impl From<Located> for String {
    fn from(e: Located) -> String {
        e.to_string()
    }
}

/// Parse RON `text` that came from `origin` (a file name, or a description such as
/// `<builtin teaching>`); a syntax or schema error is located where `ron` found it, its
/// message on one line.
pub fn parse_ron<T: DeserializeOwned>(text: &str, origin: &str) -> Result<T, Located> {
    ron::from_str(text).map_err(|e| Located {
        file: origin.to_string(),
        line: e.span.start.line,
        col: e.span.start.col,
        message: e
            .code
            .to_string()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" "),
    })
}

/// Read and parse a RON file; `what` says what the file should hold (for a read error:
/// "cannot read scenario: ...").
pub fn read_ron<T: DeserializeOwned>(path: &Path, what: &str) -> Result<T, Located> {
    let text = read_text(path, what)?;
    parse_ron(&text, &path.display().to_string())
}

/// Read a text file; the error names the file and `what` it should hold.
pub fn read_text(path: &Path, what: &str) -> Result<String, Located> {
    std::fs::read_to_string(path)
        .map_err(|e| Located::file(path, format!("cannot read {what}: {e}")))
}

/// An error found after `text` (from `file`) was parsed, placed where the file writes the
/// first name its message quotes (in backticks, or in parentheses after an index:
/// `hosts[1] (b)`) as a string, else where it writes the first of them as a field
/// (`k_pause:` for `` `k_pause` ``), or at the file alone when it writes none of them.
/// When the message starts from an item of a list (`routes[1]`) the file writes, the names
/// are looked for inside that item first, and the item itself is the place if it writes
/// none of them (a route names chips and hosts written earlier in the file too).
pub fn locate(file: &str, text: &str, message: &str) -> Located {
    let quoted: Vec<&str> = message
        .split('`')
        .skip(1)
        .step_by(2)
        .chain(
            message
                .split("] (")
                .skip(1)
                .filter_map(|r| r.split(')').next()),
        )
        .filter(|name| !name.is_empty())
        .collect();
    if let Some((start, end)) = first_index(message).and_then(|(list, i)| item_span(text, list, i))
    {
        let at = quoted
            .iter()
            .find_map(|name| text[start..end].find(&format!("\"{name}\"")))
            .map_or(start, |i| start + i);
        let (line, col) = line_col(text, at);
        return Located {
            file: file.to_string(),
            line,
            col,
            message: message.to_string(),
        };
    }
    for name in &quoted {
        if text.contains(&format!("\"{name}\"")) {
            return Located::at_value(file, text, name, message);
        }
    }
    for name in &quoted {
        let (line, col) = position_of_field(text, &[name]);
        if line != 0 {
            return Located {
                file: file.to_string(),
                line,
                col,
                message: message.to_string(),
            };
        }
    }
    Located {
        file: file.to_string(),
        line: 0,
        col: 0,
        message: message.to_string(),
    }
}

/// 1-based line and column where `text` writes the field at `path` (`["tm", "trim",
/// "queue"]`: each name written as a RON field, `name:`, after the one before it); the last
/// of them found if a later one is not written, (0, 0) if none is.
pub fn position_of_field(text: &str, path: &[&str]) -> (usize, usize) {
    let mut from = 0;
    let mut found = None;
    for name in path {
        let at = text[from..]
            .match_indices(name)
            .map(|(i, _)| from + i)
            .find(|&i| {
                let before = text[..i].chars().next_back();
                let after = text[i + name.len()..].trim_start();
                !before.is_some_and(|c| c.is_alphanumeric() || c == '_') && after.starts_with(':')
            });
        let Some(at) = at else { break };
        found = Some(at);
        from = at + name.len();
    }
    found.map_or((0, 0), |at| line_col(text, at))
}

/// 1-based line and column of byte `at` of `text`.
fn line_col(text: &str, at: usize) -> (usize, usize) {
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let col = at - before.rfind('\n').map_or(0, |n| n + 1) + 1;
    (line, col)
}

/// 1-based line and column of the first occurrence of `needle` written as a quoted string
/// (else anywhere) in `text`; (0, 0) if absent.
pub fn position_of(text: &str, needle: &str) -> (usize, usize) {
    let quoted = format!("\"{needle}\"");
    let Some(at) = text.find(&quoted).or_else(|| text.find(needle)) else {
        return (0, 0);
    };
    line_col(text, at)
}

/// The first list item a message names: `routes[1]` gives ("routes", 1).
fn first_index(message: &str) -> Option<(&str, usize)> {
    message.match_indices('[').find_map(|(open, _)| {
        let name_start = message[..open]
            .rfind(|c: char| !(c.is_alphanumeric() || c == '_'))
            .map_or(0, |i| i + 1);
        let close = open + message[open..].find(']')?;
        let i = message[open + 1..close].parse().ok()?;
        (name_start < open).then(|| (&message[name_start..open], i))
    })
}

/// Byte range of item `i` of the first list the file writes as field `list` (at any
/// depth): from its first character to the comma or bracket that ends it.
fn item_span(text: &str, list: &str, i: usize) -> Option<(usize, usize)> {
    let tokens = significant(text);
    let open = (2..tokens.len()).find(|&k| {
        tokens[k].ch == '[' && tokens[k - 1].ch == ':' && tokens[k - 2].word == Some(list)
    })?;
    let inner = tokens[open].depth + 1;
    let mut starts = Vec::new();
    let mut expect_item = true;
    for t in &tokens[open + 1..] {
        if t.depth < inner || (t.depth == inner && t.ch == ',') {
            if let Some(&(s, None)) = starts.last() {
                *starts.last_mut().unwrap() = (s, Some(t.at));
            }
            if t.depth < inner {
                break;
            }
            expect_item = true;
        } else if expect_item {
            starts.push((t.at, None));
            expect_item = false;
        }
    }
    let (s, e) = *starts.get(i)?;
    Some((s, e.unwrap_or(text.len())))
}

/// 1-based line and column of each item of a RON list: the file's top-level list
/// (`field` none), or the list a field of the file's top-level struct holds
/// (`(tables: [...])` with `field` `Some("tables")`); empty when there is no such list.
/// Errors found while resolving the `i`-th item (an entry, a host) are placed with it.
/// Strings and comments are skipped, so brackets and commas inside them do not count.
pub fn list_items(text: &str, field: Option<&str>) -> Vec<(usize, usize)> {
    let tokens = significant(text);
    // Where the list opens: the first token, or the `[` after `field :` inside the struct.
    let open = match field {
        None => tokens.first().filter(|t| t.ch == '[').map(|_| 0),
        Some(name) => tokens.iter().enumerate().position(|(i, t)| {
            t.depth == 1
                && t.ch == ':'
                && i > 0
                && tokens[i - 1].word == Some(name)
                && tokens.get(i + 1).is_some_and(|n| n.ch == '[')
        }),
    };
    let Some(open) = open else { return Vec::new() };
    let open = if field.is_some() { open + 1 } else { open };
    let inner = tokens[open].depth + 1;
    let mut items = Vec::new();
    let mut expect_item = true;
    for t in &tokens[open + 1..] {
        if t.depth < inner {
            break; // the list's `]`
        }
        if t.depth == inner && t.ch == ',' {
            expect_item = true;
        } else if expect_item {
            items.push((t.line, t.col));
            expect_item = false;
        }
    }
    items
}

/// A character of RON outside strings and comments (an identifier counts once, at its first
/// character), with the bracket depth it sits at (an opening bracket at the depth outside it).
struct Token<'a> {
    ch: char,
    word: Option<&'a str>,
    depth: usize,
    line: usize,
    col: usize,
    /// Byte offset in the text.
    at: usize,
}

fn significant(text: &str) -> Vec<Token<'_>> {
    let mut out = Vec::new();
    let mut chars = text.char_indices().peekable();
    let (mut line, mut col, mut depth) = (1, 0, 0usize);
    // Advance over one character, keeping the line and column.
    let step = |c: char, line: &mut usize, col: &mut usize| {
        if c == '\n' {
            *line += 1;
            *col = 0;
        } else {
            *col += 1;
        }
    };
    while let Some((at, c)) = chars.next() {
        step(c, &mut line, &mut col);
        let next = chars.peek().map(|&(_, n)| n);
        match c {
            '/' if next == Some('/') => {
                while let Some(&(_, n)) = chars.peek() {
                    if n == '\n' {
                        break;
                    }
                    chars.next();
                    col += 1;
                }
            }
            '/' if next == Some('*') => {
                let mut prev = ' ';
                for (_, n) in chars.by_ref() {
                    step(n, &mut line, &mut col);
                    if prev == '*' && n == '/' {
                        break;
                    }
                    prev = n;
                }
            }
            '"' | '\'' => {
                let token = Token {
                    ch: c,
                    word: None,
                    depth,
                    line,
                    col,
                    at,
                };
                let mut escaped = false;
                for (_, n) in chars.by_ref() {
                    step(n, &mut line, &mut col);
                    if escaped {
                        escaped = false;
                    } else if n == '\\' {
                        escaped = true;
                    } else if n == c {
                        break;
                    }
                }
                out.push(token);
            }
            c if c.is_whitespace() => {}
            c if c.is_alphanumeric() || c == '_' => {
                let (start_col, mut end) = (col, at + c.len_utf8());
                while let Some(&(i, n)) = chars.peek() {
                    if !(n.is_alphanumeric() || n == '_' || n == '.') {
                        break;
                    }
                    end = i + n.len_utf8();
                    chars.next();
                    col += 1;
                }
                let word = Some(&text[at..end]);
                out.push(Token {
                    ch: c,
                    word,
                    depth,
                    line,
                    col: start_col,
                    at,
                });
            }
            // A closing bracket sits at the depth outside it, as its opening one does.
            _ => {
                if matches!(c, ']' | ')' | '}') {
                    depth = depth.saturating_sub(1);
                }
                out.push(Token {
                    ch: c,
                    word: None,
                    depth,
                    line,
                    col,
                    at,
                });
                if matches!(c, '[' | '(' | '{') {
                    depth += 1;
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_items_are_placed_past_strings_and_comments() {
        let list = "// a comment, with [brackets]\n[\n  (a: \"x,]\"), /* (b) */ (a: \"y\"),\n  (a: [1, 2]),\n]";
        assert_eq!(list_items(list, None), vec![(3, 3), (3, 25), (4, 3)]);
        let fields = "(\n  tables: [ (t: 1),\n (t: 2) ],\n  meters: [\n    (m: 'c'),\n  ],\n)";
        assert_eq!(list_items(fields, Some("tables")), vec![(2, 13), (3, 2)]);
        assert_eq!(list_items(fields, Some("meters")), vec![(5, 5)]);
        assert_eq!(list_items(fields, Some("registers")), vec![]);
        assert_eq!(list_items(fields, None), vec![]);
        assert_eq!(list_items("[]", None), vec![]);
        assert_eq!(list_items("[1,2,]", None), vec![(1, 2), (1, 4)]);
    }

    #[test]
    fn positions_are_one_based() {
        let t = "(\n  chip: \"nope\",\n)";
        assert_eq!(position_of(t, "nope"), (2, 9));
        assert_eq!(position_of(t, "absent"), (0, 0));
    }

    #[test]
    fn errors_are_placed_at_the_name_they_quote() {
        let t = "(\n  hosts: [(name: \"a\"), (name: \"b\")],\n)";
        let e = locate(
            "s.ron",
            t,
            "hosts[1] (b): nic_queues: 7 must be a multiple of 8",
        );
        assert_eq!((e.line, e.col), (2, 31));
        let e = locate("s.ron", t, "no host named `b`");
        assert_eq!((e.line, e.col), (2, 31));
        let e = locate("s.ron", t, "nothing quoted");
        assert_eq!(e.to_string(), "s.ron: nothing quoted");
        // An item of a list: the names it quotes inside that item, else the item.
        let r = "(\n  chips: [(name: \"sw\")],\n  routes: [(chip: \"sw\", port: 1),\n    (chip: \"sw\", port: 7)],\n)";
        let e = locate(
            "s.ron",
            r,
            "routes[1] (sw to b): port: `sw` has no link on port 7",
        );
        assert_eq!((e.line, e.col), (4, 12));
        let e = locate("s.ron", r, "routes[1] (sw to b): a second route");
        assert_eq!((e.line, e.col), (4, 5));
        let e = locate("s.ron", r, "routes[2] (sw to b): no such item: `sw`");
        assert_eq!((e.line, e.col), (2, 18));
        // A name the file writes as a field, not as a string: placed at the field, after a
        // quoted name it does not write at all.
        let t = "(\n  deploy: Pyrrha((\n    k_pause: 1.0)),\n)";
        let e = locate(
            "s.ron",
            t,
            "chip `sw0`: pyrrha: `k_pause` 1 must be above 1",
        );
        assert_eq!((e.line, e.col), (3, 5));
    }

    #[derive(serde::Deserialize, Debug)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct S {
        a: u8,
    }

    #[test]
    fn ron_errors_name_file_line_and_column() {
        let e = parse_ron::<S>("(\n  a: 1,\n  b: 2,\n)", "x.ron").unwrap_err();
        assert_eq!((e.file.as_str(), e.line, e.col), ("x.ron", 3, 3));
        assert!(e.to_string().starts_with("x.ron:3:3: "), "{e}");
        assert!(e.message.contains("`b`"), "{e}");
    }

    #[test]
    fn a_missing_file_is_named() {
        let e = read_ron::<S>(Path::new("/nonexistent/s.ron"), "scenario").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("/nonexistent/s.ron: cannot read scenario: "),
            "{e}"
        );
    }
}
