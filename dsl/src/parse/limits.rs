//! How deep a program may nest, checked before anything recurses over it.
//!
//! Every stage of the compiler recurses once per level of nesting: pest's parser, the syntax
//! tree builder, the checker, the lowering, even dropping the tree. A program nested some
//! thousands of levels deep overflowed the stack (8 MiB on the main thread, 2 MiB on other
//! threads) and aborted the process. Real programs nest a few levels: `if`s inside an apply
//! block rarely go beyond five, expressions beyond ten. The limits are far above that and well
//! within a small stack: 256 levels of `if` blocks around a 256-level expression, the deepest
//! program they let through, compile in under 1 MiB of stack in a debug build (the `nesting`
//! tests run it in a 2 MiB thread).
//!
//! Three checks, each before the stage it protects:
//! 1. [`brackets`], on the text before pest runs: brackets nest at most [`MAX_BRACKETS`]
//!    deep. pest recurses once per bracket; its own guard (2.) would stop it too, but at a
//!    depth that depends on the thread's stack, and deeper than this;
//! 2. pest's guard, which stops its recursion before the stack runs out, for what nests
//!    without brackets (`if (c) if (c) ...`); [`too_deep_to_parse`] says so in the
//!    language's terms;
//! 3. [`nesting`], on pest's parse tree before the syntax tree is built: statements and
//!    expressions nest at most [`MAX_DEPTH`] levels, which bounds every later stage.

use pest::iterators::{Pair, Pairs};

use super::{code_bytes, span_of, Rule};
use crate::ast::Span;
use crate::error::{err, CompileError, ErrorKind, Result};

/// How deep statements nest (each `if`, `else if`, `switch` and inner block is a level), and
/// how deep an expression nests (each operator and each bracketed expression is a level).
pub const MAX_DEPTH: usize = 256;

/// How deep brackets (`(`, `[`, `{`) nest in the text: four times [`MAX_DEPTH`], so that no
/// program within the other limits reaches it (256 `if` blocks around a 256-level expression
/// nest about 512 brackets deep), and low enough that pest never needs its guard for brackets
/// on a 2 MiB stack: the same program is refused the same way on any thread.
pub const MAX_BRACKETS: usize = 4 * MAX_DEPTH;

/// Refuse text whose brackets nest more than [`MAX_BRACKETS`] deep, at the first bracket past
/// the limit. Comments are skipped as the grammar skips them; any other bracket counts, even
/// in an annotation's or a directive's text where the grammar does not nest it (such text only
/// shifts where this check fires; pest's guard still stands behind it).
pub(super) fn brackets(source: &str) -> Result<()> {
    let mut depth = 0usize;
    for (i, b) in code_bytes(source) {
        match b {
            b'(' | b'[' | b'{' => {
                depth += 1;
                if depth > MAX_BRACKETS {
                    return Err(err(
                        ErrorKind::Unsupported,
                        Span {
                            start: i,
                            end: i + 1,
                        },
                        format!(
                            "brackets are nested more than {MAX_BRACKETS} deep (the compiler's limit)"
                        ),
                    ));
                }
            }
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

/// pest stopped recursing at `span` before its stack ran out: a program nested too deep
/// without brackets (`if (c) if (c) ...`), which [`brackets`] does not count.
pub(super) fn too_deep_to_parse(span: Span) -> CompileError {
    err(
        ErrorKind::Unsupported,
        span,
        format!(
            "the program is nested too deep to parse (statements and expressions nest at most \
             {MAX_DEPTH} levels)"
        ),
    )
}

/// An ancestor of the pair being visited: where it ends, what it is, and the statement and
/// expression levels down to it.
struct Open {
    end: usize,
    rule: Rule,
    stmts: usize,
    exprs: usize,
}

/// Refuse statements or expressions nested more than [`MAX_DEPTH`] levels, at the first one
/// past the limit. The walk is iterative (pest lists the pairs in order, each after its
/// parent), so it is safe on any tree pest returns.
pub(super) fn nesting(pairs: Pairs<Rule>) -> Result<()> {
    let mut open: Vec<Open> = Vec::new();
    for pair in pairs.flatten() {
        let (start, end) = (pair.as_span().start(), pair.as_span().end());
        // What ended before this pair starts is not its ancestor (a pair that is not empty never
        // starts where one of its ancestors ends).
        while open.last().is_some_and(|o| o.end <= start) {
            open.pop();
        }
        let parent = open.last();
        let (mut stmts, mut exprs) = parent.map_or((0, 0), |o| (o.stmts, o.exprs));
        match pair.as_rule() {
            Rule::if_stmt | Rule::switch_stmt => stmts += 1,
            // A block that is a statement of its own; the body of an `if`, action or apply
            // block is the level of what holds it.
            Rule::block
                if parent.is_some_and(|o| matches!(o.rule, Rule::block | Rule::parser_state)) =>
            {
                stmts += 1
            }
            Rule::expr => exprs = expr_levels(&pair, exprs)?,
            _ => {}
        }
        if stmts > MAX_DEPTH {
            return Err(past_the_limit(
                &pair,
                "statements are",
                "each `if`, `else if`, `switch` and inner block",
            ));
        }
        open.push(Open {
            end,
            rule: pair.as_rule(),
            stmts,
            exprs,
        });
    }
    Ok(())
}

/// The level an expression reaches from `above`: one for itself and one per operator in it, as
/// each operator nests its operands a level deeper in the syntax tree (a chain `x + 1 + 1 ...`
/// nests as deep as it is long). An expression inside it (in brackets, arguments, a slice)
/// starts from there.
fn expr_levels(expr: &Pair<Rule>, above: usize) -> Result<usize> {
    let operators = expr.clone().into_inner().filter(|p| {
        !matches!(
            p.as_rule(),
            Rule::paren | Rule::list_expr | Rule::bool_lit | Rule::int_lit | Rule::ident
        )
    });
    let mut level = above;
    for part in std::iter::once(expr.clone()).chain(operators) {
        level += 1;
        if level > MAX_DEPTH {
            return Err(past_the_limit(
                &part,
                "the expression is",
                "each operator and each bracketed expression",
            ));
        }
    }
    Ok(level)
}

/// The error for `what` (with its verb: `statements are`) nested past [`MAX_DEPTH`] at `pair`,
/// saying what makes a level.
fn past_the_limit(pair: &Pair<Rule>, what: &str, levels: &str) -> CompileError {
    err(
        ErrorKind::Unsupported,
        span_of(pair),
        format!(
            "{what} nested more than {MAX_DEPTH} levels deep (the compiler's limit; {levels} is \
             a level)"
        ),
    )
}
