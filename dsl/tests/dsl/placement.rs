//! Table placement across stages: a table larger than what one stage has is split into parts
//! in consecutive stages (exact over SRAM, ternary over TCAM, a direct counter with it),
//! what depends on it goes after its last part, the report shows each part, and a table the
//! pipe cannot hold, or one whose extern array forbids the split, is refused saying why.

use crate::common::{profile, program, spec, table, STATES};
use dsl::{compile, Compiled, ErrorKind};
use pipelines::program::TablePart;

fn ok(src: &str, chip: &str) -> Compiled {
    compile(src, "t.p4", &profile(chip)).unwrap_or_else(|e| panic!("{e}\n{}", e.render()))
}

/// A control whose table `big` of `size` entries matches the IPv4 destination `kind`-wise
/// and writes meta.a, with `more` declarations and `apply` as its apply block.
fn big(kind: &str, size: u32, more: &str, apply: &str) -> String {
    let control = format!(
        r#"
        action set(bit<8> v) {{ meta.a = v; }}
        table big {{
            key = {{ hdr.ipv4.dst_addr : {kind}; }}
            actions = {{ set; }}
            size = {size};
        }}
        {more}
        apply {{ {apply} }}
    "#
    );
    program(STATES, &control, "")
}

fn parts(c: &Compiled, name: &str) -> Vec<TablePart> {
    table(&c.program.ingress, name).parts.clone()
}

#[test]
fn a_200000_entry_exact_table_spans_five_stages_of_tofino2() {
    let c = ok(&big("exact", 200_000, "", "big.apply();"), "tofino2-like");
    // 41 ways of 1024 entries per stage: 410 of the stage's 416 hash bits (10 per way).
    let want: Vec<TablePart> = [41984, 41984, 41984, 41984, 32064]
        .iter()
        .enumerate()
        .map(|(s, &entries)| TablePart {
            stage: s as u16,
            entries,
        })
        .collect();
    assert_eq!(parts(&c, "Ing.big"), want);
    assert_eq!(table(&c.program.ingress, "Ing.big").stage, 0);
    let g = &c.report.gresses[0];
    assert_eq!(g.stages.len(), 5);
    let report = &g.table_parts.iter().find(|t| t.name == "Ing.big").unwrap();
    let blocks: Vec<(u16, u32, u32)> = report
        .parts
        .iter()
        .map(|p| (p.stage, p.entries, p.sram_blocks))
        .collect();
    assert_eq!(
        blocks,
        [
            (0, 41984, 41),
            (1, 41984, 41),
            (2, 41984, 41),
            (3, 41984, 41),
            (4, 32064, 32)
        ]
    );
    // Each part is a logical table of its stage.
    for st in &g.stages {
        assert_eq!(st.logical_tables.used, 1, "stage {}", st.stage);
        assert_eq!(st.tables[0].name, "Ing.big");
    }
    // The latency counts the five stages.
    let lat = &profile("tofino2-like").latency;
    assert_eq!(
        g.latency_cycles,
        lat.parser_cycles + 5 * lat.stage_base_cycles + lat.deparser_cycles
    );
    let text = c.report.render_text();
    assert!(
        text.contains(
            "  table Ing.big -> stages 0..4, split in 5 parts:\n    stage 0: 41984 entries, 41 \
             SRAM blocks, 0 TCAM blocks, 410 hash bits\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("    stage 4: 32064 entries, 32 SRAM blocks, 0 TCAM blocks, 320 hash bits\n")
    );
    let json = serde_json::to_value(&c.report).unwrap();
    let t = &json["resources"]["mau"]["tables"][0];
    assert_eq!(t["name"], "Ing.big");
    assert_eq!(t["parts"][4]["entries"], 32064);
    assert_eq!(
        json["resources"]["mau"]["mau_stages"][2]["logical_tables"]["ids"][0]["entries"],
        41984
    );
}

#[test]
fn what_depends_on_a_split_table_goes_after_its_last_part() {
    let more = r#"
        action port(bit<9> p) { ig_tm_md.ucast_egress_port = p; }
        action mark() { hdr.ipv4.ttl = 1; }
        table reader { key = { meta.a : exact; } actions = { port; } }
        table other { key = { hdr.ipv4.src_addr : exact; } actions = { mark; } }
    "#;
    let c = ok(
        &big(
            "exact",
            100_000,
            more,
            "big.apply(); other.apply(); reader.apply();",
        ),
        "tofino2-like",
    );
    let p = parts(&c, "Ing.big");
    assert_eq!(p.iter().map(|p| p.stage).collect::<Vec<_>>(), [0, 1, 2]);
    // `other` only follows `big`: in the stage of its last part at the earliest. `reader`
    // matches on what `big` writes: one stage after the last part.
    assert_eq!(table(&c.program.ingress, "Ing.reader").stage, 3);
    assert_eq!(table(&c.program.ingress, "Ing.other").stage, 2);
}

#[test]
fn a_ternary_table_splits_over_tcam_and_each_stage_costs_the_tcam_extra() {
    // 24 blocks of 512 entries per stage for a 32-bit key.
    let c = ok(&big("ternary", 30_000, "", "big.apply();"), "tofino2-like");
    let p = parts(&c, "Ing.big");
    let got: Vec<(u16, u32)> = p.iter().map(|p| (p.stage, p.entries)).collect();
    assert_eq!(got, [(0, 12288), (1, 12288), (2, 5424)]);
    let g = &c.report.gresses[0];
    let tcam: Vec<u32> = g.stages.iter().map(|s| s.tcam_blocks.used).collect();
    assert_eq!(tcam, [24, 24, 11]);
    let lat = &profile("tofino2-like").latency;
    for st in &g.stages {
        assert_eq!(st.cycles, lat.stage_base_cycles + lat.tcam_extra_cycles);
    }
}

#[test]
fn a_direct_counter_is_split_with_its_table() {
    let control = r#"
        action set(bit<8> v) { meta.a = v; }
        DirectCounter<bit<64>>(CounterType_t.PACKETS) dc;
        table big {
            key = { hdr.ipv4.dst_addr : exact; }
            actions = { set; }
            size = 60000;
            counters = dc;
        }
        apply { big.apply(); }
    "#;
    let c = ok(&program(STATES, control, ""), "tofino2-like");
    let g = &c.report.gresses[0];
    let stats: Vec<(u32, u32)> = g
        .stages
        .iter()
        .map(|st| {
            let ram = st
                .items
                .iter()
                .filter(|i| i.used_for == "statistics_ram")
                .map(|i| i.amount)
                .sum();
            (st.stats_alus.used, ram)
        })
        .collect();
    // Each part counts its own entries (64-bit counts, two per 128-bit word): 41 ways hold
    // 41984 entries (21 blocks of counts); the last part's 18016 entries and the count of
    // misses need 9 blocks.
    assert_eq!(stats, [(1, 21), (1, 9)]);
    let p = parts(&c, "Ing.big");
    assert_eq!(p.iter().map(|p| p.entries).sum::<u32>(), 60000);
}

#[test]
fn a_table_that_fits_a_stage_goes_there_whole() {
    let c = ok(&big("exact", 40_000, "", "big.apply();"), "tofino2-like");
    assert!(parts(&c, "Ing.big").is_empty());
    assert!(!c.report.render_text().contains("split"));
}

#[test]
fn a_table_driving_a_register_is_not_split() {
    let control = r#"
        Register<bit<32>, bit<16>>(1024) seen;
        RegisterAction<bit<32>, bit<16>, bit<32>>(seen) bump = {
            void apply(inout bit<32> value) { value = value + 1; }
        };
        action count() { bump.execute(meta.wide); }
        table big { key = { hdr.ipv4.dst_addr : exact; } actions = { count; } size = 100000; }
        apply { big.apply(); }
    "#;
    let e = compile(&program(STATES, control, ""), "t.p4", &spec()).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Resource);
    assert_eq!(
        e.message,
        "table Ing.big needs 99 SRAM blocks; a stage has 80 (short by 19), and it cannot be \
         split across stages: its action Ing.count drives register Ing.seen, which lives in one \
         stage, and a split table's action runs in every part's stage (make the table fit one \
         stage, or drive the extern from a table of its own)"
    );
    // Nor do stage pragmas split it.
    let src = program(STATES, control, "").replace(
        "table big {",
        "@stage(1, 1024) @stage(2)\n        table big {",
    );
    let e = compile(&src, "t.p4", &spec()).unwrap_err();
    assert_eq!(
        e.message,
        "`@stage(2)`: table Ing.big cannot be split across stages: its action Ing.count drives \
         register Ing.seen, which lives in one stage, and a split table's action runs in every \
         part's stage"
    );
}

/// Line:col of the first occurrence of `needle` in `src`.
fn pos(src: &str, needle: &str) -> (usize, usize) {
    let at = src.find(needle).expect("needle");
    let line = src[..at].matches('\n').count() + 1;
    (line, at - src[..at].rfind('\n').map_or(0, |i| i + 1) + 1)
}

/// `writer` writes meta.a, `reader` matches on it; `pins` go before `reader`.
fn chain(pins: &str) -> String {
    let control = format!(
        r#"
        action set(bit<8> v) {{ meta.a = v; }}
        action port(bit<9> p) {{ ig_tm_md.ucast_egress_port = p; }}
        table writer {{ key = {{ hdr.ipv4.dst_addr : exact; }} actions = {{ set; }} }}
        {pins}
        table reader {{ key = {{ meta.a : exact; }} actions = {{ port; }} }}
        apply {{ writer.apply(); reader.apply(); }}
    "#
    );
    program(STATES, &control, "")
}

#[test]
fn a_stage_pragma_pins_a_table_in_either_spelling() {
    for pin in ["@stage(5)", "@pragma stage 5"] {
        let c = ok(&chain(pin), "tofino2-like");
        assert_eq!(table(&c.program.ingress, "Ing.reader").stage, 5, "{pin}");
        assert_eq!(table(&c.program.ingress, "Ing.writer").stage, 0);
        assert_eq!(c.program.ingress.control.stages, 6);
    }
}

#[test]
fn stage_pragmas_with_entries_place_the_parts() {
    let more = "";
    let src = big("exact", 10_000, more, "big.apply();").replace(
        "table big {",
        "@stage(2, 1024) @pragma stage 4 2048\n        @stage(7)\n        table big {",
    );
    let c = ok(&src, "tofino2-like");
    let got: Vec<(u16, u32)> = parts(&c, "Ing.big")
        .iter()
        .map(|p| (p.stage, p.entries))
        .collect();
    assert_eq!(got, [(2, 1024), (4, 2048), (7, 10_000 - 3072)]);
    // Entries no pragma places go into the stages after the last one named.
    let src = big("exact", 10_000, "", "big.apply();")
        .replace("table big {", "@stage(1, 1024)\n        table big {");
    let c = ok(&src, "tofino2-like");
    let got: Vec<(u16, u32)> = parts(&c, "Ing.big")
        .iter()
        .map(|p| (p.stage, p.entries))
        .collect();
    assert_eq!(got, [(1, 1024), (2, 8976)]);
    // One pragma without entries pins where the table starts.
    let src = big("exact", 100_000, "", "big.apply();")
        .replace("table big {", "@stage(3)\n        table big {");
    let c = ok(&src, "tofino2-like");
    let stages: Vec<u16> = parts(&c, "Ing.big").iter().map(|p| p.stage).collect();
    assert_eq!(stages, [3, 4, 5]);
}

#[test]
fn a_stage_pragma_the_chip_or_the_dependencies_forbid_is_an_error_at_the_pragma() {
    let src = chain("@stage(25)");
    let e = compile(&src, "t.p4", &profile("tofino2-like")).unwrap_err();
    assert_eq!(
        format!("{}:{}: {}", e.line, e.col, e.message),
        format!(
            "{}:{}: `@stage(25)`: the chip has 20 stages (0..19)",
            pos(&src, "@stage").0,
            pos(&src, "@stage").1
        )
    );
    let src = chain("@pragma stage 0");
    let e = compile(&src, "t.p4", &profile("tofino2-like")).unwrap_err();
    assert_eq!((e.line, e.col), pos(&src, "@pragma"));
    assert_eq!(
        e.message,
        "`@pragma stage 0`: table Ing.reader cannot go in stage 0: it depends on table \
         Ing.writer in stage 0, so stage 1 is its earliest"
    );
    // A part pinned where it does not fit.
    let src = big("exact", 100_000, "", "big.apply();")
        .replace("table big {", "@stage(3, 90000) table big {");
    let e = compile(&src, "t.p4", &profile("tofino2-like")).unwrap_err();
    assert_eq!(
        e.message,
        "`@stage(3, 90000)`: table Ing.big does not fit in stage 3 with 90000 entries: it needs \
         88 SRAM blocks and the stage has 80 free (short by 8)"
    );
    // Two pragmas without entries.
    let src = chain("@stage(2) @stage(3)");
    let e = compile(&src, "t.p4", &profile("tofino2-like")).unwrap_err();
    assert!(
        e.message.starts_with("`@stage(3)`: only one stage pragma"),
        "{e}"
    );
}

#[test]
fn a_name_annotation_gives_the_control_plane_name() {
    let control = r#"
        @name("set_a") action set(bit<8> v) { meta.a = v; }
        @name("ipv4_host") table t { key = { hdr.ipv4.dst_addr : exact; } actions = { set; } }
        @name(".global_acl") table u { key = { meta.a : exact; } actions = { set; } }
        apply { t.apply(); u.apply(); }
    "#;
    let c = ok(&program(STATES, control, ""), "tofino2-like");
    let ig = &c.program.ingress;
    assert_eq!(table(ig, "Ing.ipv4_host").size, 512);
    assert_eq!(table(ig, "global_acl").keys[0].name, "meta.a");
    assert!(ig.control.actions.iter().any(|a| a.name == "Ing.set_a"));
    // Entries name the table and the action by those names.
    let spec = pipelines::entries::EntrySpec {
        table: "ipv4_host".into(),
        key: vec![pipelines::entries::KeySpec::Exact(
            pipelines::entries::Value::Text("10.0.0.1".into()),
        )],
        action: "set_a".into(),
        args: vec![pipelines::entries::Value::Int(7)],
        priority: 0,
    };
    assert!(pipelines::entries::resolve(&c.program, &spec).is_ok());
    assert!(c
        .report
        .render_text()
        .contains("table Ing.ipv4_host -> stage 0"));
}

#[test]
fn annotations_the_compiler_does_not_read_are_refused_by_name() {
    let with = |ann: &str| chain(ann);
    let e = compile(&with("@ways(4)"), "t.p4", &spec()).unwrap_err();
    assert_eq!(
        (e.kind, e.message.as_str()),
        (
            ErrorKind::Unsupported,
            "annotation `@ways` is not supported"
        )
    );
    let e = compile(&with("@pragma ways 4"), "t.p4", &spec()).unwrap_err();
    assert_eq!(e.message, "pragma `@pragma ways` is not supported");
    let e = compile(&with("@name(ipv4_host)"), "t.p4", &spec()).unwrap_err();
    assert!(
        e.message
            .starts_with("`@name(ipv4_host)`: the name is one string"),
        "{e}"
    );
    // Before something that is not a table or an action.
    let control = r#"
        @stage(1) Counter<bit<32>, bit<8>>(4, CounterType_t.PACKETS) c;
        apply { }
    "#;
    let e = compile(&program(STATES, control, ""), "t.p4", &spec()).unwrap_err();
    assert_eq!(
        e.message,
        "annotation `@stage` is not supported here: it goes before a table"
    );
    let control = r#"
        action a() { meta.a = 1; }
        @stage(1) action b() { meta.a = 2; }
        apply { a(); }
    "#;
    let e = compile(&program(STATES, control, ""), "t.p4", &spec()).unwrap_err();
    assert_eq!(e.message, "`@stage(1)`: a stage pragma goes before a table");
}
