//! Programs the compiler must reject, each with the right kind, message and position.

use crate::common::{apply, program, spec, STATES};
use dsl::{compile, CompileError, ErrorKind};

fn fails(src: &str) -> CompileError {
    match compile(src, "t.p4", &spec()) {
        Ok(_) => panic!("compiled but should not have:\n{src}"),
        Err(e) => e,
    }
}

fn fails_with(src: &str, kind: ErrorKind, text: &str) -> CompileError {
    let e = fails(src);
    assert_eq!(e.kind, kind, "{e}");
    assert!(
        e.message.contains(text),
        "message `{}` lacks `{text}`",
        e.message
    );
    e
}

/// Line:col of the first occurrence of `needle` in `src`.
fn pos(src: &str, needle: &str) -> (usize, usize) {
    let at = src.find(needle).expect("needle");
    let line = src[..at].matches('\n').count() + 1;
    let col = at - src[..at].rfind('\n').map_or(0, |i| i + 1) + 1;
    (line, col)
}

#[test]
fn undeclared_name() {
    let src = program(STATES, &apply("meta.a = meta.nothing;"), "");
    let e = fails_with(&src, ErrorKind::Undeclared, "has no field `nothing`");
    assert_eq!((e.line, e.col), pos(&src, "nothing;"));
    let src = program(STATES, &apply("nope.apply();"), "");
    fails_with(&src, ErrorKind::Undeclared, "undeclared table `nope`");
}

#[test]
fn width_mismatch_in_assignment() {
    let src = program(STATES, &apply("meta.a = hdr.ethernet.ether_type;"), "");
    let e = fails_with(&src, ErrorKind::Type, "is bit<16> but bit<8> is expected");
    assert_eq!((e.line, e.col), pos(&src, "hdr.ethernet.ether_type;"));
    // With a cast it is fine.
    let ok = program(
        STATES,
        &apply("meta.a = (bit<8>) hdr.ethernet.ether_type;"),
        "",
    );
    compile(&ok, "t.p4", &spec()).expect("cast compiles");
    // A constant that does not fit.
    let src = program(STATES, &apply("meta.a = 300;"), "");
    fails_with(&src, ErrorKind::Type, "300 does not fit in bit<8>");
}

#[test]
fn write_to_read_only_metadata() {
    let src = program(STATES, &apply("ig_intr_md.ingress_port = 1;"), "");
    let e = fails_with(
        &src,
        ErrorKind::ReadOnly,
        "ig_intr_md.ingress_port is read-only metadata",
    );
    assert!(e.to_string().starts_with(&format!(
        "t.p4:{}:",
        pos(&src, "ig_intr_md.ingress_port =").0
    )));
    // The excerpt under the message: the line, numbered, and carets under the span, without
    // the message again.
    let (line, col) = pos(&src, "ig_intr_md.ingress_port =");
    let text = src.lines().nth(line - 1).unwrap();
    let gutter = " ".repeat(line.to_string().len());
    assert_eq!(
        e.render(),
        format!(
            "{gutter} |\n{line} | {text}\n{gutter} | {}{}",
            " ".repeat(col - 1),
            "^".repeat("ig_intr_md.ingress_port".len())
        )
    );
}

#[test]
fn the_excerpt_keeps_tabs_so_the_carets_line_up() {
    let src = program(STATES, &apply("\tmeta.a =\tmeta.nothing;"), "");
    let e = fails(&src);
    let rendered = e.render();
    let caret_line = rendered.lines().last().unwrap();
    let text = src.lines().nth(e.line - 1).unwrap();
    // Under the text before `nothing`: blanks, its tabs kept.
    let under = text[..text.find("nothing").unwrap()].replace(|c: char| c != '\t', " ");
    assert!(
        caret_line.ends_with(&format!(" | {under}^^^^^^^")),
        "{rendered}"
    );
}

#[test]
fn table_applied_twice() {
    let control = r#"
        action a() { meta.a = 1; }
        table t { key = { meta.b : exact; } actions = { a; } }
        apply { t.apply(); if (meta.c == 1) { t.apply(); } }
    "#;
    let src = program(STATES, control, "");
    fails_with(&src, ErrorKind::Semantic, "table `t` is applied twice");
}

#[test]
fn unreachable_parser_state() {
    let states = format!("{STATES} state orphan {{ transition accept; }}");
    let src = program(&states, &apply(""), "");
    let e = fails_with(
        &src,
        ErrorKind::Semantic,
        "parser state `orphan` is unreachable",
    );
    assert_eq!((e.line, e.col), pos(&src, "orphan"));
}

#[test]
fn unsupported_constructs_are_named() {
    let src = format!("#define X 1\n{}", program(STATES, &apply(""), ""));
    let e = fails_with(&src, ErrorKind::Unsupported, "`#define`");
    assert_eq!((e.line, e.col), (1, 1));
    let src = program(
        STATES,
        &format!("DirectMeter(MeterType_t.BYTES) m; {}", apply("")),
        "",
    );
    fails_with(&src, ErrorKind::Unsupported, "extern `DirectMeter`");
    let src = program(STATES, &apply("switch (meta.a) { default: {} }"), "");
    fails_with(&src, ErrorKind::Unsupported, "`switch (meta.a)`");
    let src = program(STATES, &apply("meta.a = meta.b * meta.c;"), "");
    fails_with(&src, ErrorKind::Unsupported, "operator `*`");
    let src = format!("enum E {{ A, B }}\n{}", program(STATES, &apply(""), ""));
    fails_with(
        &src,
        ErrorKind::Unsupported,
        "enum `E` without explicit values is not supported",
    );
}

#[test]
fn expression_needing_two_alu_operations() {
    let src = program(STATES, &apply("meta.a = meta.a + meta.b + meta.c;"), "");
    fails_with(
        &src,
        ErrorKind::TooComplex,
        "`meta.a + meta.b + meta.c` needs 2 ALU operations",
    );
}

#[test]
fn extracting_intrinsic_metadata() {
    let states = "state start { pkt.extract(ig_intr_md); transition accept; }";
    let src = program(states, &apply(""), "");
    fails_with(
        &src,
        ErrorKind::Unsupported,
        "fills in intrinsic metadata itself",
    );
}

#[test]
fn header_not_whole_bytes() {
    let src = program(STATES, &apply(""), "").replace("bit<4> ihl;", "bit<3> ihl;");
    fails_with(&src, ErrorKind::Type, "header `ipv4_h` is 159 bits");
}

#[test]
fn syntax_errors_have_positions() {
    let src = program(STATES, &apply("meta.a = ;"), "");
    let e = fails(&src);
    assert_eq!(e.kind, ErrorKind::Syntax);
    assert_eq!(e.line, pos(&src, "meta.a = ;").0);
}

#[test]
fn reading_a_field_written_earlier_in_the_same_action() {
    let control = r#"
        action a() { meta.a = 1; meta.b = meta.a; }
        table t { actions = { a; } default_action = a(); }
        apply { t.apply(); }
    "#;
    fails_with(
        &program(STATES, control, ""),
        ErrorKind::Semantic,
        "reads meta.a after this action wrote it",
    );
}

#[test]
fn a_table_too_big_for_the_pipe_says_how_many_entries_fit() {
    let control = r#"
        action a(bit<32> x) { hdr.ipv4.src_addr = x; }
        table big { key = { hdr.ipv4.dst_addr : exact; } actions = { a; } size = 1000000; }
        apply { big.apply(); }
    "#;
    // Split across all 12 stages, 41 ways of 1024 entries each (410 of 416 hash bits).
    fails_with(
        &program(STATES, control, ""),
        ErrorKind::Resource,
        "table Ing.big has 1000000 entries, but split across stages 0..11 it fits at most \
         503808 of them (short by 496192): a part of 1024 more needs 10 hash bits and stage 0, \
         the closest, has 6 free (short by 4)",
    );
}

#[test]
fn dependency_chain_longer_than_the_pipe() {
    let mut control = String::new();
    let mut body = String::new();
    // 13 tables, each keyed on what the previous one wrote.
    for i in 0..13 {
        control += &format!(
            "action a{i}() {{ meta.a = meta.a + 1; }} table t{i} {{ key = {{ meta.a : exact; }} actions = {{ a{i}; }} }}\n"
        );
        body += &format!("t{i}.apply(); ");
    }
    control += &apply(&body);
    fails_with(
        &program(STATES, &control, ""),
        ErrorKind::Resource,
        "the pipe has 12 stages",
    );
}

#[test]
fn never_panics_on_truncated_input() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../programs/l3router/l3router.p4"
    );
    let src = std::fs::read_to_string(path).expect("router");
    for (i, _) in src.char_indices().step_by(7) {
        let _ = compile(&src[..i], "t.p4", &spec()).map_err(|e| e.render());
    }
}
