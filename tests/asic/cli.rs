//! The `asic` command as a user runs it.

use crate::common::repo;
use std::process::Command;

/// Run the `asic` command: (success, standard output, standard error).
pub(crate) fn asic(args: &[&str]) -> (bool, String, String) {
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
    // Each point's directory holds that point's outputs, as `asic net` writes them.
    let mut dirs: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    assert_eq!(dirs.len(), 4, "{dirs:?}");
    for d in &dirs {
        for f in [
            "summary.json",
            "flows.csv",
            "series.csv",
            "waveform.vcd",
            "plots/throughput.png",
            "plots/slowdown_by_size.svg",
        ] {
            let len = std::fs::metadata(d.join(f)).map(|m| m.len()).unwrap_or(0);
            assert!(len > 0, "{} written and non-empty", d.join(f).display());
        }
    }
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

/// Output into a pipe that closes early (`asic … | head -1`) ends quietly with success; a
/// full device is an error that says so (issue #20: both panicked with exit 101).
#[test]
fn a_closed_pipe_ends_quietly_and_a_full_device_is_an_error() {
    use std::io::Read;
    // The IR of BFC's program is far larger than a pipe's buffer, so the writer meets the
    // closed end.
    let bfc = repo("programs/bfc/bfc.p4");
    let chip = repo("programs/bfc/tofino2-100g.ron");
    let mut child = Command::new(env!("CARGO_BIN_EXE_asic"))
        .args([
            "compile",
            bfc.to_str().unwrap(),
            "--chip",
            chip.to_str().unwrap(),
        ])
        .args(["--emit", "ir"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 1];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap();
    // The read end is dropped: the rest of the output meets a closed pipe.
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{:?}", out.status);
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    if std::path::Path::new("/dev/full").exists() {
        let out = Command::new(env!("CARGO_BIN_EXE_asic"))
            .args(["chips"])
            .stdout(std::fs::File::create("/dev/full").unwrap())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.starts_with("error: cannot write to standard output"),
            "{err}"
        );
    }
}

#[test]
fn chips_shows_a_small_buffer_in_kilobytes() {
    let (ok, out, _) = asic(&["chips"]);
    assert!(ok);
    let teaching = out.lines().find(|l| l.starts_with("teaching")).unwrap();
    assert!(teaching.contains("5.1 KB"), "{teaching}");
}

/// A sweep run as jobs on an existing engine: `--jobs` writes one command per point
/// (jobs.txt) and a Slurm array script; GNU parallel runs the commands, each point one
/// process writing its own directory; `--merge` makes the table, the same as a local sweep's.
/// (GNU parallel is installed by `.ci/run`.)
#[test]
fn a_sweep_run_as_jobs_by_gnu_parallel_merges_to_the_local_table() {
    let base = std::env::temp_dir().join(format!("asic-sweep-jobs-{}", std::process::id()));
    let (local, jobs) = (base.join("local"), base.join("jobs"));
    let spec = repo("programs/net/sweep-load.ron");
    let run = |args: &[&str]| {
        let (ok, text, err) = asic(args);
        assert!(ok, "{args:?}: {err}");
        text
    };
    let spec = spec.to_str().unwrap();
    run(&["sweep", spec, "--out", local.to_str().unwrap()]);
    run(&["sweep", spec, "--out", jobs.to_str().unwrap(), "--jobs"]);
    let list = std::fs::read_to_string(jobs.join("jobs.txt")).unwrap();
    assert_eq!(list.lines().count(), 4, "{list}");
    let slurm = std::fs::read_to_string(jobs.join("slurm.sh")).unwrap();
    assert!(slurm.contains("#SBATCH --array=0-3"), "{slurm}");
    assert!(
        slurm.contains("--point \"$SLURM_ARRAY_TASK_ID\""),
        "{slurm}"
    );
    // Not merged yet: every point says it was not run.
    let (ok, _, err) = asic(&["sweep", spec, "--out", jobs.to_str().unwrap(), "--merge"]);
    assert!(!ok && err.contains("4 of 4 points failed"), "{err}");
    let status = Command::new("parallel")
        .args(["--jobs", "2", "--halt", "now,fail=1", "-a"])
        .arg(jobs.join("jobs.txt"))
        .status()
        .expect("GNU parallel (`.ci/run` installs it)");
    assert!(status.success());
    run(&["sweep", spec, "--out", jobs.to_str().unwrap(), "--merge"]);
    let table = |d: &std::path::Path| std::fs::read_to_string(d.join("sweep.csv")).unwrap();
    assert_eq!(table(&jobs), table(&local));
    // Each point's outputs are the local run's, byte for byte.
    for f in ["summary.json", "flows.csv"] {
        let point = "0000_load-0.2_seed-1";
        let read = |d: &std::path::Path| std::fs::read(d.join(point).join(f)).ok();
        assert!(read(&local).is_some(), "{point}/{f}");
        assert_eq!(read(&jobs), read(&local), "{point}/{f}");
    }
    let (ok, _, err) = asic(&[
        "sweep",
        spec,
        "--out",
        jobs.to_str().unwrap(),
        "--point",
        "4",
    ]);
    assert!(
        !ok && err.contains("the sweep has 4 points (0 to 3)"),
        "{err}"
    );
    std::fs::remove_dir_all(&base).ok();
}

/// A sweep whose points fail exits with an error after writing its table (issue #20: it
/// exited 0 when every point failed).
#[test]
fn a_sweep_with_failed_points_fails() {
    let dir = std::env::temp_dir().join(format!("asic-sweep-fail-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("base.ron"),
        r#"(topology: Generate((shape: SingleSwitch(hosts: 2), chip: "teaching")),
            traffic: [Flow((src: "h0", dst: "h1", size: $size))])"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("sweep.ron"),
        r#"(base: "base.ron", grid: { "size": [0, 0] })"#,
    )
    .unwrap();
    let out = dir.join("out");
    let (ok, stdout, stderr) = asic(&[
        "sweep",
        dir.join("sweep.ron").to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(!ok, "{stdout}");
    assert!(stderr.contains("2 of 2 points failed"), "{stderr}");
    assert!(stdout.contains("size must be at least 1 byte"), "{stdout}");
    assert!(out.join("sweep.csv").exists());
}

/// What the command prints cites public sources, not notes outside the repository (issue
/// #20: profiles cited "anchors.md 4.2" and "reference digest 3.1.3").
#[test]
fn printed_sources_are_public() {
    let mut text = String::new();
    for name in ["tofino2-like", "tofino1-like", "rmt2013", "teaching"] {
        let (ok, out, _) = asic(&["chips", "show", name]);
        assert!(ok);
        text += &out;
    }
    // Every experiment the command knows.
    for name in tm::experiments::NAMES {
        text += &asic(&["tm-experiment", name]).1;
    }
    for private in ["anchors.md", "digest", "seeds/"] {
        assert!(!text.contains(private), "`{private}` is cited");
    }
}
