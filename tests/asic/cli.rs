//! The `asic` command as a user runs it.

use crate::common::repo;
use std::process::Command;

fn asic(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_asic"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn chips_lists_and_shows_profiles_with_sources() {
    let (ok, out, _) = asic(&["chips"]);
    assert!(ok);
    for name in ["tofino2-like", "tofino1-like", "rmt2013", "teaching"] {
        assert!(out.contains(name), "{out}");
    }
    let (ok, out, _) = asic(&["chips", "show", "tofino1-like"]);
    assert!(
        ok && out.contains("clock_hz") && out.contains("//"),
        "{out}"
    );
}

#[test]
fn a_user_profile_file_loads() {
    let (_, text, _) = asic(&["chips", "show", "teaching"]);
    let path = std::env::temp_dir().join(format!("asic-mychip-{}.ron", std::process::id()));
    std::fs::write(
        &path,
        text.replace("name: \"teaching\"", "name: \"mychip\"")
            .replace("stages: 4,", "stages: 6,"),
    )
    .unwrap();
    let (ok, out, err) = asic(&["chips", "show", path.to_str().unwrap()]);
    assert!(ok, "{err}");
    assert!(out.contains("mychip") && out.contains("stages: 6"), "{out}");
    let prog = repo("programs/l3router/l3router.p4");
    let (ok, out, err) = asic(&[
        "compile",
        prog.to_str().unwrap(),
        "--chip",
        path.to_str().unwrap(),
    ]);
    assert!(ok, "{err}");
    assert!(out.contains("table Ingress.ipv4_lpm -> stage 0"), "{out}");
}

#[test]
fn compile_reports_stages_and_emits_ir() {
    let prog = repo("programs/l3router/l3router.p4");
    let prog = prog.to_str().unwrap();
    let (ok, out, err) = asic(&["compile", prog, "--chip", "teaching"]);
    assert!(ok, "{err}");
    assert!(
        out.contains(
            "ingress: 1 of 4 stage(s), latency 11 cycles (parser 4 + stages 3 + deparser 4)"
        ),
        "{out}"
    );
    let (ok, ir, _) = asic(&["compile", prog, "--emit", "ir"]);
    assert!(ok);
    let back: pipelines::program::Program = ron::from_str(&ir).expect("the IR reads back");
    assert_eq!(back.name, "l3router");
}

#[test]
fn a_compile_error_shows_the_place_and_a_caret() {
    let path = std::env::temp_dir().join(format!("asic-bad-{}.p4", std::process::id()));
    let src = std::fs::read_to_string(repo("programs/l3router/l3router.p4")).unwrap();
    let bad = src.replacen(
        "hdr.ipv4.ttl = hdr.ipv4.ttl - 1;",
        "hdr.ipv4.tll = hdr.ipv4.ttl - 1;",
        1,
    );
    let line = bad.lines().position(|l| l.contains(".tll")).unwrap() + 1;
    std::fs::write(&path, bad).unwrap();
    let (ok, _, err) = asic(&["compile", path.to_str().unwrap()]);
    assert!(!ok);
    let first = err.lines().next().unwrap();
    assert!(
        first.starts_with("error: ") && first.contains(&format!(".p4:{line}:")),
        "{err}"
    );
    assert!(first.contains("tll"), "{err}");
    assert!(err.contains('^'), "a caret excerpt: {err}");
    // The excerpt under the line does not repeat the message.
    let (_, col_message) = first.split_once(&format!(".p4:{line}:")).unwrap();
    let message = col_message.split_once(": ").unwrap().1;
    assert_eq!(err.matches(message).count(), 1, "{err}");
}

#[test]
fn net_writes_tables_waveform_and_plots() {
    let out = std::env::temp_dir().join(format!("asic-net-{}", std::process::id()));
    let scenario = repo("programs/net/incast.ron");
    let (ok, text, err) = asic(&[
        "net",
        scenario.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(ok, "{err}");
    assert!(text.contains("sw0.port0.depth_cells"), "{text}");
    // Per-queue depth, for the queue that held packets only.
    assert!(text.contains("sw0.port0.q0.depth_cells"), "{text}");
    assert!(!text.contains("sw0.port0.q1.depth_cells"), "{text}");
    // Pipeline occupancy and recirculation load are recorded (and so reach the waveform).
    let vcd = std::fs::read_to_string(out.join("waveform.vcd")).unwrap();
    assert!(
        vcd.contains("pipe0_ingress_occupancy") && vcd.contains("recirculated"),
        "VCD signals"
    );
    for f in [
        "flows.csv",
        "summary.json",
        "waveform.vcd",
        "plots/queue_depth.svg",
        "plots/queue_depth.png",
        "sw0-port0.pcap",
    ] {
        let len = std::fs::metadata(out.join(f)).map(|m| m.len()).unwrap_or(0);
        assert!(len > 0, "{f} written and non-empty");
    }
    std::fs::remove_dir_all(&out).ok();
}

#[test]
fn sweep_merges_every_point_into_one_table() {
    let out = std::env::temp_dir().join(format!("asic-sweep-{}", std::process::id()));
    let spec = repo("programs/net/sweep-load.ron");
    let (ok, text, err) = asic(&[
        "sweep",
        spec.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(ok, "{err}");
    let csv = std::fs::read_to_string(out.join("sweep.csv")).unwrap();
    assert_eq!(csv.lines().count(), 5, "header and four points: {csv}");
    assert!(text.contains("0.5") && text.contains("ok"), "{text}");
    std::fs::remove_dir_all(&out).ok();
}

#[test]
fn tm_experiments_run_from_the_cli() {
    let (ok, list, _) = asic(&["tm-experiment"]);
    assert!(
        ok && list.contains("dt-convergence") && list.contains("fb-isolation"),
        "{list}"
    );
    let (ok, table, err) = asic(&["tm-experiment", "dt-convergence", "--csv"]);
    assert!(ok, "{err}");
    assert!(table.lines().count() > 3, "{table}");
    let (ok, _, err) = asic(&["tm-experiment", "nope"]);
    assert!(!ok && err.contains("known: dt-convergence"), "{err}");
}
