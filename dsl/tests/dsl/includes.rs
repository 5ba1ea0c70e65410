//! `#include`: system files shipped with the compiler, files beside the program, each file
//! included once, errors located in the file they are in, lines counted per file.

use crate::common::{apply, program, spec, STATES};
use dsl::compile;

/// `common::program`'s text with its Ethernet and IPv4 declarations replaced by `includes`.
fn with_includes(includes: &str, control: &str) -> String {
    let src = program(STATES, control, "");
    let start = src.find("const bit<16> ETHERTYPE_IPV4").unwrap();
    let end = src.find("struct headers_t").unwrap();
    format!("{includes}\n{}{}", &src[..start], &src[end..])
}

#[test]
fn system_files_declare_what_programs_would_repeat() {
    let control = r#"
        action route(PortId_t port) { ig_tm_md.ucast_egress_port = port; }
        table t { key = { hdr.ipv4.dst_addr : lpm; } actions = { route; } }
        apply { if (hdr.ethernet.ether_type == ETHERTYPE_IPV4) { t.apply(); } }
    "#;
    let included = with_includes(
        "#include <core.p4>\n#include <t2na.p4>\n#include <common/headers.p4>",
        control,
    );
    let a = compile(&included, "t.p4", &spec()).unwrap_or_else(|e| panic!("{e}\n{}", e.render()));
    let written = program(STATES, &control.replace("PortId_t", "bit<9>"), "");
    let b = compile(&written, "t.p4", &spec()).unwrap();
    assert_eq!(a.program, b.program);
    assert_eq!(a.report.render_text(), b.report.render_text());
}

#[test]
fn a_file_beside_the_program_is_included_once() {
    let control = r#"
        action tag(bit<16> id) { hdr.tunnel.id = id; }
        table t { key = { hdr.ethernet.dst_addr : exact; } actions = { tag; } }
        apply { t.apply(); }
    "#;
    let src = program(STATES, control, "pkt.emit(hdr.tunnel);")
        .replace("struct headers_t {", "struct headers_t { tunnel_h tunnel;");
    let src = format!(
        "#include \"shared.p4\"\n#include <tna.p4>\n#include \"../include/shared.p4\"\n{src}"
    );
    // Named as a file of tests/include/ (cargo runs tests in the package's directory).
    let c = compile(&src, "tests/include/main.p4", &spec())
        .unwrap_or_else(|e| panic!("{e}\n{}", e.render()));
    assert!(c
        .program
        .ingress
        .phv
        .fields
        .iter()
        .any(|f| f.name == "hdr.tunnel.id"));
}

#[test]
fn an_error_in_an_included_file_names_that_file() {
    let src = format!(
        "#include \"bad_action.p4\"\n{}",
        program(STATES, &apply(""), "")
    );
    let e = compile(&src, "tests/include/main.p4", &spec()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "tests/include/bad_action.p4:5:20: `no_such_constant` is not a constant"
    );
    assert_eq!(
        e.render(),
        "  |\n5 | const bit<8> BAD = no_such_constant;\n  |                    ^^^^^^^^^^^^^^^^"
    );
    // An error after the include is in the program, at its own line.
    let src = format!(
        "#include <tna.p4>\n{}",
        program(STATES, &apply("meta.a = 300;"), "")
    );
    let e = compile(&src, "t.p4", &spec()).unwrap_err();
    let line = src.lines().position(|l| l.contains("300")).unwrap() + 1;
    assert_eq!((e.file.as_str(), e.line), ("t.p4", line));
}

#[test]
fn an_include_in_a_comment_is_not_one() {
    let src = format!(
        "// #include \"nothing.p4\"\n/*\n#include <nothing.p4>\n*/\n{}",
        program(STATES, &apply(""), "")
    );
    compile(&src, "t.p4", &spec()).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn lines_are_counted_in_each_file() {
    // A statement outside any table runs as a keyless table named after its line.
    let control = apply("meta.a = 1;");
    let plain = program(STATES, &control, "");
    let included = format!("#include <tna.p4>\n{}", plain.replacen('\n', " ", 1));
    let names = |src: &str| -> Vec<String> {
        let c = compile(src, "t.p4", &spec()).unwrap_or_else(|e| panic!("{e}"));
        c.program
            .ingress
            .control
            .tables
            .iter()
            .map(|t| t.name.clone())
            .collect()
    };
    assert_eq!(names(&plain), names(&included));
    assert!(names(&plain)[0].starts_with("Ing.assign_l"));
}
