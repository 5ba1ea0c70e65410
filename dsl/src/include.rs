//! `#include`: a program's files expanded into one text, with the map back to each file that
//! locates errors ([`Source::locate`]).
//!
//! - `#include "file"` is looked up relative to the directory of the file that includes it,
//!   then among the system files; `#include <file>` among the system files only. The system
//!   files are embedded in the compiler (`dsl/include/`): `core.p4`, `tna.p4` (TNA's
//!   typedefs and intrinsic metadata), `t2na.p4`, and `common/headers.p4` (Ethernet, VLAN,
//!   IPv4, IPv6, TCP and UDP headers with their EtherType and protocol numbers).
//! - A file is expanded once: a second `#include` of it adds nothing, as if it had include
//!   guards (the other preprocessor directives, `#define` and `#ifdef` among them, are refused
//!   by the parser). Including a file that is being expanded (a cycle), or one that cannot be
//!   read, is an error at the `#include`.
//! - An `#include` line becomes blanks, so the offsets of the including file stay as they
//!   are, and the included text follows it: every byte of the text maps to one place of one
//!   file, and an error in an included file names that file and its line and column.

use std::path::{Path, PathBuf};

use crate::ast::Span;
use crate::error::{CompileError, ErrorKind, Result};
use crate::parse::code_bytes;

/// The system files, by the name `#include <...>` gives.
pub const SYSTEM: &[(&str, &str)] = &[
    ("core.p4", include_str!("../include/core.p4")),
    ("tna.p4", include_str!("../include/tna.p4")),
    ("t2na.p4", include_str!("../include/t2na.p4")),
    (
        "common/headers.p4",
        include_str!("../include/common/headers.p4"),
    ),
];

/// The largest file `#include` reads (a program is far smaller; this keeps a mistaken
/// include of a large file from filling memory).
const MAX_FILE_BYTES: u64 = 16 << 20;

/// One file of the program.
struct File {
    /// As messages name it: the path as given (the root) or as joined (an include), or
    /// `<name>` for a system file.
    name: String,
    text: String,
    /// The directory its `#include "..."`s are relative to, as named (`None`: a system file,
    /// which includes only system files).
    dir: Option<PathBuf>,
}

/// A run of the expanded text copied from one file.
struct Piece {
    /// Where it starts in the expanded text.
    at: usize,
    /// Which file.
    file: usize,
    /// Where it starts in that file.
    from: usize,
}

/// A program's text with its `#include`s expanded, and where each byte came from.
pub struct Source {
    /// The expanded text the compiler reads.
    pub text: String,
    files: Vec<File>,
    pieces: Vec<Piece>,
}

/// Which file a file is (to find cycles and repeats): its canonical path, or its system name.
#[derive(Clone, PartialEq, Eq)]
enum Origin {
    Disk(PathBuf),
    System(&'static str),
}

/// A path's identity: canonical if it exists (two spellings of a file are one file).
fn disk(path: &Path) -> Origin {
    Origin::Disk(path.canonicalize().unwrap_or_else(|_| path.to_path_buf()))
}

impl Source {
    /// The file holding byte `offset` of the text: its name, its text, and the offset in it.
    fn place(&self, offset: usize) -> (&File, usize) {
        let k = self.pieces.partition_point(|p| p.at <= offset).max(1) - 1;
        match self.pieces.get(k) {
            Some(p) => {
                let f = &self.files[p.file];
                (f, (p.from + offset.saturating_sub(p.at)).min(f.text.len()))
            }
            // An empty program: its one file.
            None => (&self.files[0], 0),
        }
    }

    /// `e` (its span in the expanded text) located in the file it is in.
    pub fn locate(&self, e: CompileError) -> CompileError {
        let (file, start) = self.place(e.span.start);
        // A span does not cross files; clipped to the start's file if it would.
        let end = start + e.span.end.saturating_sub(e.span.start);
        let end = end.min(file.text.len()).max(start);
        e.located(&file.name, &file.text, Span { start, end })
    }

    /// The line, in its own file, of byte `offset` of the text (1-based).
    pub fn line_of(&self, offset: usize) -> usize {
        let (file, at) = self.place(offset);
        file.text[..at].matches('\n').count() + 1
    }
}

/// Expand the `#include`s of `text`, the program's file named `name` (a path; includes are
/// relative to its directory).
pub fn expand(text: &str, name: &str) -> Result<Source> {
    let mut x = Expander {
        src: Source {
            text: String::with_capacity(text.len()),
            files: Vec::new(),
            pieces: Vec::new(),
        },
        origins: Vec::new(),
        open: Vec::new(),
    };
    let path = Path::new(name);
    x.file(
        File {
            name: name.to_string(),
            text: text.to_string(),
            dir: Some(path.parent().map(Path::to_path_buf).unwrap_or_default()),
        },
        disk(path),
    )?;
    Ok(x.src)
}

struct Expander {
    src: Source,
    /// Where each file of `src.files` came from.
    origins: Vec<Origin>,
    /// The files being expanded, outermost first.
    open: Vec<usize>,
}

/// An `#include` directive of a file: where it is (the line from `#`, without the newline),
/// and what it names.
struct Directive {
    span: Span,
    target: Result<(String, bool)>,
}

impl Expander {
    /// Append file `f` (from `origin`) to the text, its includes expanded.
    fn file(&mut self, f: File, origin: Origin) -> Result<()> {
        let id = self.src.files.len();
        let directives = directives(&f.text);
        self.src.files.push(f);
        self.origins.push(origin);
        self.open.push(id);
        let mut copied = 0;
        for d in directives {
            let (path, system) = d.target.map_err(|e| self.at(id, d.span, e.message))?;
            // The file up to the end of the directive's line, the directive blanked.
            let end = (d.span.end + 1).min(self.src.files[id].text.len());
            self.copy(id, copied, d.span.start);
            self.src.pieces.push(Piece {
                at: self.src.text.len(),
                file: id,
                from: d.span.start,
            });
            self.src
                .text
                .push_str(&" ".repeat(d.span.end - d.span.start));
            self.copy(id, d.span.end, end);
            copied = end;
            let (file, origin) = self.find(id, &path, system, d.span)?;
            if let Some(open) = self.open.iter().position(|&o| self.origins[o] == origin) {
                let chain: Vec<&str> = self.open[open..]
                    .iter()
                    .map(|&o| self.src.files[o].name.as_str())
                    .collect();
                return Err(self.at(
                    id,
                    d.span,
                    format!(
                        "include cycle: {} -> {} (a file cannot include one that includes it)",
                        chain.join(" -> "),
                        file.name
                    ),
                ));
            }
            if !self.origins.contains(&origin) {
                self.file(file, origin)?;
                if !self.src.text.ends_with('\n') {
                    self.src.text.push('\n');
                }
            }
        }
        self.copy(id, copied, self.src.files[id].text.len());
        self.open.pop();
        Ok(())
    }

    /// Append bytes `from..to` of file `id`.
    fn copy(&mut self, id: usize, from: usize, to: usize) {
        if from >= to {
            return;
        }
        self.src.pieces.push(Piece {
            at: self.src.text.len(),
            file: id,
            from,
        });
        let text = &self.src.files[id].text;
        self.src.text.push_str(&text[from..to]);
    }

    /// An error at `span` of file `id`, located.
    fn at(&self, id: usize, span: Span, message: String) -> CompileError {
        let f = &self.src.files[id];
        CompileError::new(ErrorKind::Syntax, span, message).located(&f.name, &f.text, span)
    }

    /// The file `path` names, included from file `id` (`system`: in angle brackets).
    fn find(&self, id: usize, path: &str, system: bool, span: Span) -> Result<(File, Origin)> {
        let embedded = || {
            SYSTEM.iter().find(|(n, _)| *n == path).map(|&(n, text)| {
                let file = File {
                    name: format!("<{n}>"),
                    text: text.to_string(),
                    dir: None,
                };
                (file, Origin::System(n))
            })
        };
        let dir = self.src.files[id].dir.as_ref();
        if system || dir.is_none() {
            return embedded().ok_or_else(|| {
                let names: Vec<&str> = SYSTEM.iter().map(|(n, _)| *n).collect();
                self.at(
                    id,
                    span,
                    format!(
                        "no system file `<{path}>`; the compiler has {}",
                        names.join(", ")
                    ),
                )
            });
        }
        let joined = dir.map_or_else(PathBuf::new, |d| d.join(path));
        match read(&joined) {
            Ok(text) => {
                let file = File {
                    name: joined.display().to_string(),
                    text,
                    dir: Some(joined.parent().map(Path::to_path_buf).unwrap_or_default()),
                };
                Ok((file, disk(&joined)))
            }
            Err(why) => embedded().ok_or_else(|| {
                self.at(
                    id,
                    span,
                    format!("cannot include `{}`: {why}", joined.display()),
                )
            }),
        }
    }
}

/// A file's text: a regular file of UTF-8 text, at most [`MAX_FILE_BYTES`].
fn read(path: &Path) -> std::result::Result<String, String> {
    let io = |e: std::io::Error| match e.kind() {
        std::io::ErrorKind::NotFound => "there is no such file".to_string(),
        _ => e.to_string(),
    };
    let meta = std::fs::metadata(path).map_err(io)?;
    if !meta.is_file() {
        return Err("not a file".into());
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(format!(
            "{} bytes, more than the {MAX_FILE_BYTES} a program file may have",
            meta.len()
        ));
    }
    let bytes = std::fs::read(path).map_err(io)?;
    String::from_utf8(bytes).map_err(|_| "not UTF-8 text".to_string())
}

/// The `#include` lines of `text`, in order: a `#include` first on its line, outside comments.
fn directives(text: &str) -> Vec<Directive> {
    code_bytes(text)
        .filter(|&(at, b)| {
            b == b'#'
                && text[..at]
                    .rsplit('\n')
                    .next()
                    .is_some_and(|before| before.trim().is_empty())
        })
        .filter_map(|(at, _)| {
            let line = &text[at..];
            let line = &line[..line.find('\n').unwrap_or(line.len())];
            let rest = line[1..].trim_start().strip_prefix("include")?;
            let span = Span {
                start: at,
                end: at + line.trim_end().len(),
            };
            Some(Directive {
                span,
                target: target(rest, span),
            })
        })
        .collect()
}

/// What `#include` names: `"path"` or `<path>` (then only blanks or a comment), and whether it
/// is a system file.
fn target(rest: &str, span: Span) -> Result<(String, bool)> {
    let rest = rest.trim_start();
    let (close, system) = match rest.chars().next() {
        Some('"') => ('"', false),
        Some('<') => ('>', true),
        _ => ('\0', false),
    };
    let named = (close != '\0')
        .then(|| rest[1..].split_once(close))
        .flatten()
        .filter(|(path, after)| {
            let after = after.trim();
            !path.is_empty() && (after.is_empty() || after.starts_with("//"))
        });
    match named {
        Some((path, _)) => Ok((path.to_string(), system)),
        None => Err(CompileError::new(
            ErrorKind::Syntax,
            span,
            "`#include` names one file, in quotes or angle brackets: `#include \"headers.p4\"` \
             (beside this file) or `#include <tna.p4>` (shipped with the compiler)",
        )),
    }
}
