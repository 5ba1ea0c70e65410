//! Snapshot tests of the resource report: every program under `programs/`, compiled for the
//! `tofino2-like` and `teaching` chips, against the text stored in `tests/snapshots/`.
//! A program that does not fit a chip stores its error instead. Run with `ASIC_BLESS=1` to
//! rewrite the snapshots after an intended change (and review the diff).

use crate::common::{all_programs, profile};

const CHIPS: [&str; 2] = ["tofino2-like", "teaching"];

fn snapshot_dir() -> std::path::PathBuf {
    std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/snapshots"))
}

#[test]
fn resource_reports_match_the_snapshots() {
    let bless = std::env::var_os("ASIC_BLESS").is_some();
    let programs = all_programs();
    assert!(programs.len() >= 4, "expected the router and the examples");
    let mut mismatches = Vec::new();
    for chip in CHIPS {
        let spec = profile(chip);
        for (rel, src) in &programs {
            let file = rel.rsplit('/').next().unwrap_or(rel);
            let text = match dsl::compile(src, file, &spec) {
                Ok(c) => c.report.render_text(),
                Err(e) => format!("error: {e}\n"),
            };
            let stem = file.trim_end_matches(".p4");
            let path = snapshot_dir().join(format!("{stem}.{chip}.txt"));
            if bless {
                std::fs::write(&path, &text).expect("write snapshot");
                continue;
            }
            let want = std::fs::read_to_string(&path).unwrap_or_default();
            if want != text {
                mismatches.push(format!(
                    "{} differs (run with ASIC_BLESS=1 to accept):\n--- stored\n{want}\n--- now\n{text}",
                    path.display()
                ));
            }
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}
