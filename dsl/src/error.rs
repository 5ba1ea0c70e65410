//! Compile errors: one error, one span, one line of text.
//!
//! Passes create errors with [`CompileError::new`] knowing only the span (in the program's
//! text, its `#include`s expanded); [`crate::compile`] then resolves the span to a file, line
//! and column once ([`crate::include::Source::locate`]), so every pass stays free of file
//! bookkeeping and `Display` can still print `file:line:col: message`.

use crate::ast::Span;

/// What went wrong, for callers (and tests) that want to branch on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The text does not parse.
    Syntax,
    /// Valid P4 the compiler does not support.
    Unsupported,
    /// A name that is not declared.
    Undeclared,
    /// A name declared twice.
    Duplicate,
    /// Mismatched widths or types.
    Type,
    /// A write to metadata the chip provides.
    ReadOnly,
    /// A rule of the language or the architecture is broken (table applied twice,
    /// unreachable parser state, ...).
    Semantic,
    /// An expression needs more ALU operations than an action has.
    TooComplex,
    /// The program does not fit the chip.
    Resource,
}

/// A compile error of `kind` at `span`: what every pass writes for [`CompileError::new`].
pub(crate) fn err(kind: ErrorKind, span: Span, msg: impl Into<String>) -> CompileError {
    CompileError::new(kind, span, msg)
}

/// A compile error with its position.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}:{col}: {message}")]
pub struct CompileError {
    /// Category.
    pub kind: ErrorKind,
    /// One-line description.
    pub message: String,
    /// Byte range in `file` (in the text with includes expanded until the error is located).
    pub span: Span,
    /// Source file name (an included file's when the error is in it).
    pub file: String,
    /// 1-based line of `span.start`.
    pub line: usize,
    /// 1-based column (in characters) of `span.start`.
    pub col: usize,
    /// What [`CompileError::render`] returns, made when the error is located.
    excerpt: String,
}

impl CompileError {
    /// An error at `span`, not yet located in a file (see [`crate::include::Source::locate`]).
    pub fn new(kind: ErrorKind, span: Span, message: impl Into<String>) -> Self {
        CompileError {
            kind,
            message: message.into(),
            span,
            file: String::new(),
            line: 0,
            col: 0,
            excerpt: String::new(),
        }
    }

    /// The error at `span` of `source`, the text of the file named `file`.
    pub(crate) fn located(mut self, file: &str, source: &str, span: Span) -> Self {
        (self.line, self.col) = line_col(source, span.start);
        self.file = file.to_string();
        self.span = span;
        let start = floor_char_boundary(source, span.start);
        let line_start = source[..start].rfind('\n').map_or(0, |i| i + 1);
        let text = source[line_start..].lines().next().unwrap_or("");
        let from = (start - line_start).min(text.len());
        let to = (floor_char_boundary(source, span.end) - line_start).clamp(from, text.len());
        // Blanks under the text before the span, tabs kept, so that the carets line up however
        // wide a terminal shows a tab.
        let pad: String = text[..from]
            .chars()
            .map(|c| if c == '\t' { '\t' } else { ' ' })
            .collect();
        let carets = "^".repeat(text[from..to].chars().count().max(1));
        let number = self.line.to_string();
        let gutter = " ".repeat(number.len());
        self.excerpt = format!("{gutter} |\n{number} | {text}\n{gutter} | {pad}{carets}");
        self
    }

    /// The caret excerpt that goes under the error's line (`{error}\n{excerpt}`, as `asic
    /// compile` prints it): the source line where the span starts, numbered, with carets under
    /// the span (up to the end of that line). It does not repeat the message.
    pub fn render(&self) -> String {
        self.excerpt.clone()
    }
}

/// The 1-based line and column (in characters) of byte `offset` of `source`.
fn line_col(source: &str, offset: usize) -> (usize, usize) {
    let before = &source[..floor_char_boundary(source, offset)];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (
        before.matches('\n').count() + 1,
        before[line_start..].chars().count() + 1,
    )
}

/// The largest char boundary of `s` not after `i` (spans from pest are always on boundaries,
/// but a caller-provided source could differ from the compiled one).
fn floor_char_boundary(s: &str, i: usize) -> usize {
    let mut i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Shorthand for results of the compiler passes.
pub type Result<T> = std::result::Result<T, CompileError>;
