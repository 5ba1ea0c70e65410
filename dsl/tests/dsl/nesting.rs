//! Nesting limits: each form of nesting compiles at the limit and is refused one level past it,
//! at the first construct past it; far deeper (the depths that overflowed the stack and
//! aborted) it is refused too. Every compile runs in a thread with a 2 MiB stack, the least a
//! caller's thread is given.

use crate::common::{apply, program, spec, STATES};
use dsl::parse::{MAX_BRACKETS, MAX_DEPTH};
use dsl::CompileError;

/// Compile `src` in a thread with a 2 MiB stack (set here, not left to `RUST_MIN_STACK`).
fn compile_small_stack(src: String) -> Result<(), CompileError> {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || dsl::compile(&src, "t.p4", &spec()).map(|_| ()))
        .expect("spawn")
        .join()
        .expect("no panic")
}

/// A form of nesting: its name, an apply block's body nested `n` levels deep, and the text
/// that opens each level.
struct Form {
    name: &'static str,
    body: fn(usize) -> String,
    level: &'static str,
}

/// `n` levels of statements: the one past the limit is refused at its `if` or `{`.
const STATEMENT_FORMS: &[Form] = &[
    Form {
        name: "if blocks",
        body: |n| {
            format!(
                "{}meta.a = 1;{}",
                "if (meta.flag) { ".repeat(n),
                "}".repeat(n)
            )
        },
        level: "if (",
    },
    Form {
        name: "if without braces",
        body: |n| format!("{}meta.a = 1;", "if (meta.flag) ".repeat(n)),
        level: "if (",
    },
    Form {
        name: "else-if chain",
        body: |n| {
            let rest = " else if (meta.flag) { meta.a = 1; }".repeat(n - 1);
            format!("if (meta.flag) {{ meta.a = 1; }}{rest}")
        },
        level: "if (",
    },
    Form {
        name: "blocks",
        body: |n| format!("{}meta.a = 1;{}", "{ ".repeat(n), "}".repeat(n)),
        level: "{ ",
    },
];

/// An expression of `n` levels (its innermost operand is one): the level past the limit is
/// refused at its operator, or for brackets at the expression inside them.
const EXPRESSION_FORMS: &[Form] = &[
    Form {
        name: "parentheses",
        body: |n| format!("meta.a = {}1{};", "(".repeat(n - 1), ")".repeat(n - 1)),
        level: "(",
    },
    Form {
        name: "casts",
        body: |n| format!("meta.a = {}1;", "(bit<8>) ".repeat(n - 1)),
        level: "(bit<8>)",
    },
    Form {
        name: "negations",
        body: |n| format!("meta.flag = {}true;", "!".repeat(n - 1)),
        level: "!",
    },
    Form {
        name: "a chain of additions",
        body: |n| format!("meta.a = 1{};", " + 1".repeat(n - 1)),
        level: "+",
    },
];

/// Byte offset of the `k`-th (from 1) occurrence of `needle` in `src` at or after `from`.
fn nth(src: &str, from: usize, needle: &str, k: usize) -> usize {
    from + src[from..]
        .match_indices(needle)
        .nth(k - 1)
        .unwrap_or_else(|| panic!("fewer than {k} `{needle}`"))
        .0
}

/// Each form compiles at the limit (or fails for a reason other than nesting) and is refused
/// past it with `message` at `past_at(form, source, start of the apply block's body)`.
fn at_and_past_the_limit(forms: &[Form], message: &str, past_at: fn(&Form, &str, usize) -> usize) {
    for form in forms {
        let at_limit = program(STATES, &apply(&(form.body)(MAX_DEPTH)), "");
        if let Err(e) = compile_small_stack(at_limit) {
            assert!(
                !e.message.contains("nested"),
                "{} at the limit: {e}",
                form.name
            );
        }
        let past = program(STATES, &apply(&(form.body)(MAX_DEPTH + 1)), "");
        let body = nth(&past, 0, "apply {", 1) + "apply {".len();
        let e = compile_small_stack(past.clone()).expect_err(form.name);
        assert!(e.message.starts_with(message), "{}: {e}", form.name);
        assert_eq!(
            e.span.start,
            past_at(form, &past, body),
            "{}: {e}",
            form.name
        );
    }
}

#[test]
fn statements_nest_to_the_limit_and_no_further() {
    at_and_past_the_limit(
        STATEMENT_FORMS,
        "statements are nested more than 256 levels deep",
        |form, src, body| nth(src, body, form.level, MAX_DEPTH + 1),
    );
}

#[test]
fn expressions_nest_to_the_limit_and_no_further() {
    // Level 1 is the expression itself, so the operator past the limit is its
    // `MAX_DEPTH`-th; an expression in brackets starts after its bracket.
    at_and_past_the_limit(
        EXPRESSION_FORMS,
        "the expression is nested more than 256 levels deep",
        |form, src, body| {
            let op = nth(src, body, form.level, MAX_DEPTH);
            op + usize::from(form.level == "(")
        },
    );
}

#[test]
fn statements_and_an_expression_both_at_the_limit_compile_on_a_small_stack() {
    // Every stage recurses through both: the deepest program the limits let through.
    let expr = format!("meta.a = {}meta.a;", "(bit<8>) ".repeat(MAX_DEPTH - 2));
    for wrap in [
        |n: usize, inner: &str| {
            format!("{}{inner}{}", "if (meta.flag) { ".repeat(n), "}".repeat(n))
        },
        |n: usize, inner: &str| format!("{}{inner}{}", "{ ".repeat(n), "}".repeat(n)),
    ] {
        let src = program(STATES, &apply(&wrap(MAX_DEPTH, &expr)), "");
        if let Err(e) = compile_small_stack(src) {
            assert!(!e.message.contains("nested"), "{e}");
        }
    }
}

#[test]
fn the_depths_that_aborted_are_refused() {
    // Sizes from issue #20: each overflowed the stack of the main thread.
    let cases = [
        format!("meta.a = {}1{};", "(".repeat(25_000), ")".repeat(25_000)),
        format!("meta.a = {}1{};", "(".repeat(9_000), ")".repeat(9_000)),
        format!("meta.a = {}1;", "(bit<8>) ".repeat(6_000)),
        format!("meta.flag = {}true;", "!".repeat(11_000)),
        format!("meta.a = 1{};", " + 1".repeat(131_000)),
        format!(
            "{}meta.a = 1;{}",
            "if (meta.flag) { ".repeat(6_000),
            "}".repeat(6_000)
        ),
        format!("{}meta.a = 1;", "if (meta.flag) ".repeat(25_000)),
    ];
    for body in cases {
        let e = compile_small_stack(program(STATES, &apply(&body), "")).expect_err("refused");
        assert!(
            e.message.contains(&format!("{MAX_DEPTH} levels"))
                || e.message.contains(&format!("{MAX_BRACKETS} deep")),
            "{e}"
        );
    }
}

#[test]
fn brackets_nest_to_their_limit_outside_comments() {
    let e = compile_small_stack("(".repeat(MAX_BRACKETS + 1)).expect_err("refused");
    assert_eq!(
        (e.span.start, e.message.as_str()),
        (
            MAX_BRACKETS,
            "brackets are nested more than 1024 deep (the compiler's limit)"
        )
    );
    // Brackets in comments are not nesting.
    let deep_comment = format!(
        "// {}\n/* {} */\n",
        "(".repeat(MAX_BRACKETS + 1),
        "{".repeat(MAX_BRACKETS + 1)
    );
    let src = deep_comment + &program(STATES, &apply("meta.a = 1;"), "");
    compile_small_stack(src).expect("compiles");
}
