//! Compile errors: one error, one span, one line of text.
//!
//! Passes create errors with [`CompileError::new`] knowing only the span; [`crate::compile`]
//! then resolves the span to a file, line and column once, so every pass stays free of file
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
    /// Byte range in the source.
    pub span: Span,
    /// Source file name.
    pub file: String,
    /// 1-based line of `span.start`.
    pub line: usize,
    /// 1-based column (in characters) of `span.start`.
    pub col: usize,
}

impl CompileError {
    /// An error at `span`, not yet located in a file (see [`CompileError::locate`]).
    pub fn new(kind: ErrorKind, span: Span, message: impl Into<String>) -> Self {
        CompileError {
            kind,
            message: message.into(),
            span,
            file: String::new(),
            line: 0,
            col: 0,
        }
    }

    /// Resolve the span to a line and column of `source`, named `file`.
    pub fn locate(mut self, file: &str, source: &str) -> Self {
        (self.line, self.col) = line_col(source, self.span.start);
        self.file = file.to_string();
        self
    }

    /// The caret excerpt that goes under the error's line (`{error}\n{excerpt}`, as `asic
    /// compile` prints it): the source line where the span starts, numbered, with carets under
    /// the span (up to the end of that line). It does not repeat the message.
    pub fn render(&self, source: &str) -> String {
        let start = floor_char_boundary(source, self.span.start);
        let line_start = source[..start].rfind('\n').map_or(0, |i| i + 1);
        let text = source[line_start..].lines().next().unwrap_or("");
        let end = floor_char_boundary(source, self.span.end).clamp(start, line_start + text.len());
        // Blanks under the text before the span, tabs kept, so that the carets line up however
        // wide a terminal shows a tab.
        let pad: String = source[line_start..start]
            .chars()
            .map(|c| if c == '\t' { '\t' } else { ' ' })
            .collect();
        let carets = "^".repeat(source[start..end].chars().count().max(1));
        let number = line_col(source, start).0.to_string();
        let gutter = " ".repeat(number.len());
        format!("{gutter} |\n{number} | {text}\n{gutter} | {pad}{carets}")
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
