//! The visual resource view (`asic compile --html`) and the dependency graph in Graphviz's
//! language (`--emit dot`). The page, on every program and two chips: every table with its
//! stages and parts, the grid's numbers equal to the report's, the graph's edges equal to
//! the allocator's, every PHV container with the fields it holds, and nothing fetched from
//! the network. In headless Chromium (bfc.p4 on the 20-stage chip, and the 200,000-entry
//! split table of host_routes.p4), the page's script runs and finds every box drawn, none
//! overlapping and every label inside its box. Graphviz reads `--emit dot` whole. Both
//! tools are needed: the tests fail, saying how to install them, when one is missing
//! (`.ci/run` installs them).

use crate::common::{chip, repo};
use asic::resource_view::render;
use asic_io::load::compile_file;
use dsl::depgraph::kind_name;
use dsl::report::{GressReport, StageReport, Use};
use dsl::tna::gress_name;
use dsl::Compiled;
use regex::Regex;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The page's text between the first `start` and the `end` after it.
fn between<'a>(page: &'a str, start: &str, end: &str) -> &'a str {
    let from = page
        .find(start)
        .unwrap_or_else(|| panic!("no `{start}` in the page"));
    let rest = &page[from..];
    &rest[..rest.find(end).unwrap_or(rest.len())]
}

/// Each regex match's groups.
fn groups(re: &str, text: &str) -> Vec<Vec<String>> {
    Regex::new(re)
        .unwrap()
        .captures_iter(text)
        .map(|c| {
            c.iter()
                .skip(1)
                .map(|m| m.map_or(String::new(), |m| m.as_str().to_string()))
                .collect()
        })
        .collect()
}

/// A stage's numbers as the grid names its rows.
fn stage_uses(st: &StageReport) -> [(&'static str, Use); 9] {
    [
        ("sram", st.sram_blocks),
        ("tcam", st.tcam_blocks),
        ("hash_bits", st.hash_bits),
        ("logical_tables", st.logical_tables),
        ("gateways", st.gateways),
        ("vliw", st.vliw_slots),
        ("stateful_alus", st.stateful_alus),
        ("meter_alus", st.meter_alus),
        ("stats_alus", st.stats_alus),
    ]
}

/// The grid of `g` on the page holds exactly the report's numbers (a gress that uses no stage
/// says so instead).
fn check_grid(page: &str, g: &GressReport, what: &str) {
    let gress = gress_name(g.gress);
    if g.stages.is_empty() {
        assert!(
            page.contains(&format!("{gress} uses none of the pipe's")),
            "{what}"
        );
        return;
    }
    let grid = between(
        page,
        &format!("<table class=\"grid\" data-gress=\"{gress}\">"),
        "</table>",
    );
    let cells = groups(
        r#"data-stage="(\d+)" data-resource="(\w+)" data-used="(\d+)"(?: data-available="(\d+)")?"#,
        grid,
    );
    let got: BTreeMap<(u16, String), (u32, String)> = cells
        .iter()
        .map(|c| {
            (
                (c[0].parse().unwrap(), c[1].clone()),
                (c[2].parse().unwrap(), c[3].clone()),
            )
        })
        .collect();
    assert_eq!(got.len(), cells.len(), "{what}: a cell given twice");
    let mut want = BTreeMap::new();
    for st in &g.stages {
        for (key, u) in stage_uses(st) {
            want.insert(
                (st.stage, key.to_string()),
                (u.used, u.available.to_string()),
            );
        }
        want.insert((st.stage, "cycles".to_string()), (st.cycles, String::new()));
    }
    assert_eq!(got, want, "{what}: the {gress} grid");
}

/// Every table of `g` on the page, with its stages and parts, in the tables section and as
/// a box of the graph; the graph's edges are the report's.
fn check_tables_and_graph(page: &str, g: &GressReport, what: &str) {
    let gress = gress_name(g.gress);
    let graph = &g.dependencies;
    if g.table_parts.is_empty() {
        assert!(page.contains(&format!("{gress} has no tables.")), "{what}");
        return;
    }
    let tables = between(
        page,
        &format!("<table class=\"tables\" data-gress=\"{gress}\">"),
        "</table>",
    );
    let rows = groups(
        r#"<tr class="table" data-name="([^"]+)" data-stages="([^"]+)" data-parts="(\d+)">"#,
        tables,
    );
    let parts = groups(
        r#"<tr class="part" data-name="([^"]+)" data-stage="(\d+)" data-entries="(\d+)">"#,
        tables,
    );
    let svg = between(page, &format!("id=\"graph-{gress}\""), "</svg>");
    let boxes = groups(
        r#"<g class="node (?:table|gateway)" data-node="\d+" data-name="([^"]+)" data-stages="([^"]+)""#,
        svg,
    );
    assert_eq!(
        rows.len(),
        g.table_parts.len(),
        "{what}: {gress} table rows"
    );
    for t in &g.table_parts {
        let (first, last) = (t.parts[0].stage, t.parts[t.parts.len() - 1].stage);
        let stages = dsl::depgraph::stages_text(first, last);
        let want = vec![t.name.clone(), stages.clone(), t.parts.len().to_string()];
        assert!(rows.contains(&want), "{what}: no row {want:?}");
        assert!(
            boxes.contains(&vec![t.name.clone(), stages]),
            "{what}: no box for {}",
            t.name
        );
        let shown: Vec<(u16, u32)> = parts
            .iter()
            .filter(|p| p[0] == t.name)
            .map(|p| (p[1].parse().unwrap(), p[2].parse().unwrap()))
            .collect();
        if t.parts.len() > 1 {
            let want: Vec<(u16, u32)> = t.parts.iter().map(|p| (p.stage, p.entries)).collect();
            assert_eq!(shown, want, "{what}: the parts of {}", t.name);
        } else {
            assert!(shown.is_empty(), "{what}: {} is not split", t.name);
        }
    }
    assert_eq!(boxes.len(), graph.nodes.len(), "{what}: {gress} boxes");
    let edges = groups(
        r#"<g class="edge [^"]*" data-from="([^"]+)" data-to="([^"]+)" data-kind="(\w+)" data-label="([^"]*)""#,
        svg,
    );
    let want: Vec<Vec<String>> = graph
        .edges
        .iter()
        .map(|e| {
            vec![
                graph.nodes[e.from].name.clone(),
                graph.nodes[e.to].name.clone(),
                kind_name(e.kind).to_string(),
                e.label.clone(),
            ]
        })
        .collect();
    assert_eq!(edges, want, "{what}: the {gress} graph's edges");
}

/// Every container of each width is on the map, the used ones holding the fields the
/// report places in them.
fn check_phv(page: &str, g: &GressReport, what: &str) {
    let gress = gress_name(g.gress);
    let start = format!("<div class=\"phvmap\" data-gress=\"{gress}\">");
    let map = between(between(page, &start, "</section>"), &start, "<h3>");
    for (width, count) in [(8, g.phv_b8), (16, g.phv_b16), (32, g.phv_b32)] {
        let group = between(map, &format!("data-width=\"{width}\">"), "<h4>");
        assert_eq!(
            group.matches("class=\"ctr ").count() as u32,
            count.available,
            "{what}: {gress} {width}-bit containers"
        );
        assert_eq!(
            group.matches("class=\"ctr used\"").count() as u32,
            count.used,
            "{what}: {gress} {width}-bit containers used"
        );
    }
    let tips: BTreeMap<String, String> =
        groups(r#"data-container="(\w+)" data-tip="([^"]*)""#, map)
            .into_iter()
            .map(|c| (c[0].clone(), c[1].clone()))
            .collect();
    for f in &g.phv_fields {
        for slice in &f.slices {
            let (container, bits) = slice.split_once('[').unwrap();
            let tip = tips
                .get(container)
                .unwrap_or_else(|| panic!("{what}: no container {container} ({} {slice})", f.name));
            assert!(
                tip.contains(&format!("&#10;[{bits} {}[", f.name)),
                "{what}: {container} does not list {} {slice}: {tip}",
                f.name
            );
        }
    }
}

/// Nothing on the page comes from elsewhere.
fn check_self_contained(page: &str, what: &str) {
    for bad in [
        "http://",
        "https://",
        "//cdn",
        "<link",
        " src=",
        "@import",
        "@font-face",
    ] {
        assert!(!page.contains(bad), "{what}: the page holds `{bad}`");
    }
    for (at, _) in page.match_indices("url(") {
        assert!(
            page[at..].starts_with("url(#"),
            "{what}: {}",
            &page[at..at + 40]
        );
    }
}

fn compiled(program: &str, chip_name: &str) -> Option<Compiled> {
    compile_file(&repo(program), &chip(chip_name), false).ok()
}

#[test]
fn the_page_shows_every_table_and_the_reports_numbers() {
    let mut programs = Vec::new();
    for dir in [
        "programs/examples",
        "programs/bfc",
        "programs/l3router",
        "programs/ecmp_router",
    ] {
        for e in std::fs::read_dir(repo(dir)).unwrap().flatten() {
            if e.path().extension().is_some_and(|x| x == "p4") {
                programs.push(format!("{dir}/{}", e.file_name().to_string_lossy()));
            }
        }
    }
    programs.sort();
    assert!(programs.len() >= 7, "{programs:?}");
    for chip_name in ["tofino2-like", "teaching"] {
        for program in &programs {
            let Some(c) = compiled(program, chip_name) else {
                continue; // too large for the chip: the compiler says so
            };
            let what = format!("{program} on {chip_name}");
            let page = render(&c, &chip(chip_name));
            assert!(page.starts_with("<!DOCTYPE html>"), "{what}");
            assert!(
                page.contains(&format!("<b>{chip_name}</b>"))
                    && page.contains(&format!("<th>program</th><td>{}</td>", c.report.program)),
                "{what}: the chip and program"
            );
            check_self_contained(&page, &what);
            for g in &c.report.gresses {
                let gress = gress_name(g.gress);
                let stages: u32 = g.stages.iter().map(|s| s.cycles).sum();
                assert!(
                    page.contains(&format!(
                        "<b>{} cycles</b>",
                        asic::resource_view::markup::int(g.latency_cycles as u64)
                    )) && page.contains(&format!(
                        "parser {} + {} stage(s) {stages} + deparser {}",
                        g.parser_cycles,
                        g.stages.len(),
                        g.deparser_cycles
                    )),
                    "{what}: {gress} latency"
                );
                check_grid(&page, g, &what);
                check_tables_and_graph(&page, g, &what);
                check_phv(&page, g, &what);
            }
            // Same inputs, same bytes.
            assert_eq!(page, render(&c, &chip(chip_name)), "{what}");
        }
    }
}

/// `program`, `args` and stdin through `tool`, killed (and the test failed) if it has not
/// finished in `limit`: (status, stdout, stderr). A tool that is not installed fails the
/// test saying how to install it.
fn run(tool: &str, args: &[&str], input: Option<&str>, limit: Duration) -> (bool, String, String) {
    let mut child = match Command::new(tool)
        .args(args)
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(c) => c,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => panic!(
            "{tool} is not installed, and this test needs it: install it (Debian/Ubuntu: \
             `apt-get install -y {}`; .ci/run does)",
            if tool == "dot" { "graphviz" } else { tool }
        ),
        Err(e) => panic!("{tool}: {e}"),
    };
    if let Some(text) = input {
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
    }
    // Read the pipes while waiting, so a full pipe cannot stall the tool.
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut s).map(|_| s)
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut stderr, &mut s).map(|_| s)
    });
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{tool} {args:?} did not finish in {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    (
        status.success(),
        out.join().unwrap().unwrap_or_default(),
        err.join().unwrap().unwrap_or_default(),
    )
}

/// The page of `program` on `chip_name`, opened by headless Chromium: the DOM after its
/// script ran.
fn chromium_dom(program: &str, chip_name: &str, dir: &Path) -> (Compiled, String) {
    let c = compiled(program, chip_name).expect("compiles");
    let file = dir.join("resources.html");
    std::fs::write(&file, render(&c, &chip(chip_name))).unwrap();
    let profile = dir.join("chromium-profile");
    let url = format!("file://{}", file.display());
    let profile_arg = format!("--user-data-dir={}", profile.display());
    let (ok, dom, err) = run(
        "chromium",
        &[
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--no-first-run",
            "--disable-sync",
            &profile_arg,
            "--dump-dom",
            &url,
        ],
        None,
        Duration::from_secs(180),
    );
    assert!(ok, "chromium failed: {err}");
    (c, dom)
}

#[test]
fn chromium_draws_every_table_apart_with_its_label_inside() {
    for program in ["programs/bfc/bfc.p4", "programs/examples/host_routes.p4"] {
        let dir = tempfile::tempdir().unwrap();
        let (c, dom) = chromium_dom(program, "tofino2-like", dir.path());
        for g in &c.report.gresses {
            let gress = gress_name(g.gress);
            let graph = &g.dependencies;
            if graph.nodes.is_empty() {
                continue;
            }
            // The script wrote what it measured into the check line under the graph.
            let check = between(&dom, &format!("id=\"check-{gress}\""), ">");
            let attr = |name: &str| {
                groups(&format!(r#"{name}="(\d+)""#), check)
                    .first()
                    .map(|g| g[0].clone())
                    .unwrap_or_else(|| {
                        panic!("{program}: the script did not write {name}: {check}")
                    })
            };
            assert_eq!(
                attr("data-drawn"),
                graph.nodes.len().to_string(),
                "{program}"
            );
            assert_eq!(
                attr("data-overlaps"),
                "0",
                "{program}: {gress} boxes overlap"
            );
            assert_eq!(
                attr("data-overflows"),
                "0",
                "{program}: {gress} labels overflow"
            );
            let svg = between(&dom, &format!("id=\"graph-{gress}\""), "</svg>");
            for t in &g.table_parts {
                assert!(
                    svg.contains(&format!("data-name=\"{}\"", t.name)),
                    "{program}: no box for {}",
                    t.name
                );
            }
        }
    }
}

#[test]
fn graphviz_reads_the_dependency_graph() {
    for (program, chip_name) in [
        ("programs/bfc/bfc.p4", "tofino2-like"),
        ("programs/examples/host_routes.p4", "tofino2-like"),
        ("programs/examples/flow_counter.p4", "teaching"),
    ] {
        let prog = repo(program);
        let (ok, text, err) = run(
            env!("CARGO_BIN_EXE_asic"),
            &[
                "compile",
                prog.to_str().unwrap(),
                "--chip",
                chip_name,
                "--emit",
                "dot",
            ],
            None,
            Duration::from_secs(60),
        );
        assert!(ok, "{err}");
        let (ok, svg, err) = run("dot", &["-Tsvg"], Some(&text), Duration::from_secs(120));
        assert!(ok && err.is_empty(), "{program}: dot says: {err}");
        let c = compiled(program, chip_name).unwrap();
        for g in &c.report.gresses {
            let gress = gress_name(g.gress);
            let graph = &g.dependencies;
            for n in &graph.nodes {
                assert!(
                    svg.contains(&format!("<title>{gress}:{}</title>", n.name)),
                    "{program}: dot drew no {}",
                    n.name
                );
            }
            for e in &graph.edges {
                let (a, b) = (&graph.nodes[e.from].name, &graph.nodes[e.to].name);
                assert!(
                    svg.contains(&format!("<title>{gress}:{a}&#45;&gt;{gress}:{b}</title>")),
                    "{program}: dot drew no edge {a} -> {b}"
                );
            }
        }
    }
}
