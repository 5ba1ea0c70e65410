//! A syntax error as the user reads it: what was expected, each thing once, at the end of the
//! token after which it is missing.
//!
//! pest's own message names the rules it tried at the furthest place one was tried. Punctuation
//! is not a rule, so a missing `;` was reported wherever some rule had last failed (a column
//! inside the line, or the declaration that swallowed the rest), and every operator that could
//! have continued an expression was listed once per rule that tried it. With pest's error
//! detail on (see [`enable_detail`]), the error holds every token tried at the furthest place
//! any was tried; this module turns that set into a short phrase.

use std::sync::Once;

use pest::error::{Error, ErrorVariant};
use pest::Parser;

use super::{code_bytes, limits, P4Parser, Rule};
use crate::ast::Span;
use crate::error::{err, CompileError, ErrorKind};

/// Have pest record the tokens it tries, which about doubles the time a parse takes (a few
/// milliseconds on the largest program, in a debug build). The switch is process-wide, and
/// `dsl` is the only user of pest in the workspace; it is set once, before any parse, so that
/// every parse gives the same error whatever ran before it.
pub(super) fn enable_detail() {
    static DETAIL: Once = Once::new();
    DETAIL.call_once(|| pest::set_error_detail(true));
}

/// Tokens tried only where a whole construct may start, and the construct's name: when one is
/// among the expected tokens, the message names the construct instead of every token that can
/// start it, and lists beside it only [`AFTER_CONSTRUCTS`]. The first found wins.
const CONSTRUCTS: &[(&str, &str)] = &[
    // Before `true`: a statement can start like an expression.
    ("switch", "a statement"),
    ("typedef", "a declaration"),
    // In a control.
    ("table", "a declaration"),
    ("state", "a state"),
    ("default_action", "a table property"),
    ("true", "an expression"),
];

/// What may come instead of a construct: the end of the block it would be in, or a control's
/// apply block after its declarations.
const AFTER_CONSTRUCTS: &[&str] = &["}", ")", "]", "apply"];

/// The compile error for pest's `e` on `source`.
pub(super) fn syntax_error(e: Error<Rule>, source: &str) -> CompileError {
    // The only error pest makes of its own is its stack guard's (no call limit is set).
    if let ErrorVariant::CustomError { .. } = e.variant {
        let at = match e.location {
            pest::error::InputLocation::Pos(p) => p,
            pest::error::InputLocation::Span((s, _)) => s,
        };
        return limits::too_deep_to_parse(Span { start: at, end: at });
    }
    // Always there with the detail on; without, nothing was expected and the message says what
    // was found at the start.
    let attempts = e.parse_attempts().unwrap_or_default();
    let at = attempts.max_position.min(source.len());
    let mut tokens: Vec<Token> = attempts
        .expected_tokens()
        .iter()
        .map(|t| Token::read(&t.to_string()))
        .filter(|t| !t.is_trivia())
        .collect();
    // `ident` refuses a keyword under `!`, so a name expected where a keyword stands is not
    // among the expected tokens; pest lists the keyword among the unexpected ones instead.
    let word = word_at(source, at);
    let refused = is_keyword(word)
        && attempts
            .unexpected_tokens()
            .iter()
            .any(|t| t.to_string() == word);
    let found = if refused {
        tokens.push(Token::Range('a', 'z'));
        format!(", found keyword `{word}`")
    } else {
        String::new()
    };
    let expected = describe(&tokens, word_before(source, at));
    let letter = tokens.iter().any(|t| matches!(t, Token::Range('a', _)));
    if let Some(e) = unsupported_type(source, at, refused, letter) {
        return e;
    }
    let (place, message) = match tokens.as_slice() {
        // Only the end of a block comment was expected: it runs to the end of the file.
        [Token::Text(t)] if t == "*/" => {
            let before = previous_token_end(source, at);
            let open = before + source[before..].find("/*").unwrap_or(0);
            (open, "the comment is not closed: expected `*/`".to_string())
        }
        _ if expected.is_empty() => {
            let what = source[at..]
                .chars()
                .next()
                .map_or_else(|| "end of file".to_string(), |c| format!("`{c}`"));
            (at, format!("unexpected {what}"))
        }
        _ => (
            previous_token_end(source, at),
            format!("expected {}{found}", one_of(&expected)),
        ),
    };
    err(
        ErrorKind::Syntax,
        Span {
            start: place,
            end: place,
        },
        message,
    )
}

/// A type P4 has and the compiler does not, where the parse stopped at it: a header stack
/// (`h_t[4] name`: a `[` where a `letter` could have come, as a declaration's name) or a
/// signed or variable-length type (the keyword `int` or `varbit`, `refused` where a name was
/// expected and followed by `<` or a name, as a type is). The error names the construct by
/// its text.
fn unsupported_type(source: &str, at: usize, refused: bool, letter: bool) -> Option<CompileError> {
    let rest = &source[at..];
    let word = word_at(source, at);
    let (start, what, message) = if rest.starts_with('[') && letter {
        // The type before the bracket.
        let end = previous_token_end(source, at);
        let start = end - word_before(source, end).len();
        let what = text_through(source, start, ']', "[");
        let message = format!(
            "header stacks (`{what}`) are not supported: declare one header field per element"
        );
        (start, what, message)
    } else if refused && matches!(word, "int" | "varbit") {
        let after = rest[word.len()..].trim_start();
        if !after.starts_with(|c: char| c == '<' || c == '_' || c.is_ascii_alphabetic()) {
            return None;
        }
        let what = if after.starts_with('<') {
            text_through(source, at, '>', word)
        } else {
            word
        };
        let message = if word == "int" {
            let width = Some(&what[3..]).filter(|w| !w.is_empty()).unwrap_or("<N>");
            format!("signed integers (`{what}`) are not supported: use `bit{width}`")
        } else {
            format!(
                "variable-length fields (`{what}`) are not supported: a header is a fixed number \
                 of `bit<N>` fields"
            )
        };
        (at, what, message)
    } else {
        return None;
    };
    Some(err(
        ErrorKind::Unsupported,
        Span {
            start,
            end: start + what.len(),
        },
        message,
    ))
}

/// The text of `source` from `start` to `close` on the same line, else `or`.
fn text_through<'s>(source: &'s str, start: usize, close: char, or: &'s str) -> &'s str {
    let line = source[start..].lines().next().unwrap_or("");
    line.find(close).map_or(or, |i| &line[..=i])
}

/// A token pest tried, read from how pest prints it (its type is not public): a text, or a
/// range of characters such as `a..z`.
enum Token {
    Text(String),
    Range(char, char),
}

impl Token {
    fn read(printed: &str) -> Token {
        match printed.chars().collect::<Vec<_>>().as_slice() {
            [start, '.', '.', end] => Token::Range(*start, *end),
            _ => Token::Text(printed.to_string()),
        }
    }

    /// Whitespace and comment openers, which pest tries between any two tokens, and any
    /// character (the catch-all rules' `ANY`, printed as `BUILTIN_RULE`): never what is missing.
    fn is_trivia(&self) -> bool {
        matches!(self, Token::Text(t) if matches!(t.as_str(), " " | "\t" | "\r" | "\n" | "//" | "/*" | "BUILTIN_RULE"))
    }

    /// A letter, digit or `_`, or a range of them.
    fn is_word_char(&self) -> bool {
        match self {
            Token::Text(t) => is_word_char(t),
            Token::Range(start, _) => is_word(*start),
        }
    }
}

/// The expected tokens as phrases, each once, in a stable order; `before` is the word that ends
/// where they were expected (empty if none does).
fn describe(tokens: &[Token], before: &str) -> Vec<String> {
    let texts: Vec<&str> = tokens
        .iter()
        .filter_map(|t| match t {
            Token::Text(t) => Some(t.as_str()),
            Token::Range(..) => None,
        })
        .collect();
    let quoted = |t: &&str| format!("`{t}`");
    if let Some((_, construct)) = CONSTRUCTS.iter().find(|(marker, _)| texts.contains(marker)) {
        let after = texts.iter().filter(|t| AFTER_CONSTRUCTS.contains(t));
        return std::iter::once(construct.to_string())
            .chain(after.map(quoted))
            .collect();
    }
    let range = |f: fn(char, char) -> bool| {
        tokens
            .iter()
            .any(|t| matches!(t, Token::Range(start, end) if f(*start, *end)))
    };
    let starts_with_digit = |t: &str| t.starts_with(|c: char| c.is_ascii_digit());
    // Right after a word, pest tried to make it longer: a number with its digits, a name with
    // letters, digits and `_`. That the word could have gone on is never what is missing...
    let longer =
        !before.is_empty() && (starts_with_digit(before) || range(|start, _| start == '0'));
    if longer && tokens.iter().all(Token::is_word_char) {
        // ... unless nothing else was expected: then a number's digits went wrong (`0x08G0`,
        // `0b102`), or a name stands where a name must be followed by another (`bi<16>`).
        return vec![if !starts_with_digit(before) {
            "a name"
        } else if range(|_, end| end.eq_ignore_ascii_case(&'f')) {
            "a hexadecimal digit"
        } else if range(|start, _| start == '0') {
            "a digit"
        } else {
            "a binary digit"
        }
        .to_string()];
    }
    // `0x` is tried only where a number may start; letters that do not make a word longer
    // start a name.
    let number = texts.contains(&"0x");
    let name = !longer && range(|start, _| start == 'a');
    // Operators and postfixes say the expression before could have gone on: they are what is
    // missing only when nothing else could be.
    let (continuations, ends): (Vec<&str>, Vec<&str>) = texts
        .iter()
        .filter(|t| !is_word_char(t) && !starts_with_digit(t))
        .partition(|t| continues_expression(t));
    let missing = if ends.is_empty() { continuations } else { ends };
    let mut out: Vec<String> = missing.iter().map(quoted).collect();
    out.extend(number.then(|| "a number".to_string()));
    out.extend(name.then(|| "a name".to_string()));
    out
}

/// One letter, digit or `_` (a keyword is a token of its own).
fn is_word_char(token: &str) -> bool {
    let mut chars = token.chars();
    matches!((chars.next(), chars.next()), (Some(c), None) if is_word(c))
}

/// An operator or a postfix's opening: after an expression that could go on, these are always
/// among the expected tokens, and they are never what is missing when anything else is.
fn continues_expression(token: &str) -> bool {
    token.chars().all(|c| ".([<>=!&|^+-*/%~".contains(c))
}

/// "`a`", "`a` or `b`", "`a`, `b` or `c`".
fn one_of(items: &[String]) -> String {
    match items.split_last() {
        Some((last, init)) if !init.is_empty() => format!("{} or {last}", init.join(", ")),
        _ => items.concat(),
    }
}

/// Whether `word` is one of the grammar's keywords.
fn is_keyword(word: &str) -> bool {
    !word.is_empty() && P4Parser::parse(Rule::keyword, word).is_ok_and(|p| p.as_str() == word)
}

/// A letter, digit or `_`: what names and numbers are made of.
fn is_word(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The word starting at `at`, possibly empty.
fn word_at(source: &str, at: usize) -> &str {
    let rest = &source[at..];
    &rest[..rest.find(|c| !is_word(c)).unwrap_or(rest.len())]
}

/// The word ending at `at`, possibly empty.
fn word_before(source: &str, at: usize) -> &str {
    let head = &source[..at];
    // Word characters are ASCII: as many bytes as characters.
    &head[at - head.chars().rev().take_while(|&c| is_word(c)).count()..]
}

/// Where the token before `at` ends, comments and whitespace skipped back over: where a token
/// missing before `at` belongs. The start of the file if nothing comes before.
fn previous_token_end(source: &str, at: usize) -> usize {
    code_bytes(source)
        .take_while(|&(i, _)| i < at)
        .filter(|&(_, b)| !matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
        .last()
        .map_or(0, |(i, _)| i + 1)
}
