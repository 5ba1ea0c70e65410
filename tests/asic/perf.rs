//! The speed workloads as a smoke check. Figures come from `asic bench` and criterion runs
//! (docs/PERFORMANCE.md), never from tests: these only check that every workload runs and
//! reports positive figures, and that the chip's hot path does not allocate per packet.

use asic::perf::{self, CountingAlloc, Sizes};
use std::process::Command;

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

/// `asic bench --quick` (the binary, as CI runs it): a row per workload with positive
/// work, rate and simulated time.
#[test]
fn asic_bench_quick_prints_every_workload() {
    let out = Command::new(env!("CARGO_BIN_EXE_asic"))
        .args(["bench", "--quick"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success(), "{text}");
    for name in perf::WORKLOADS {
        let row = text
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("no row for {name}:\n{text}"));
        let cols: Vec<&str> = row.split_whitespace().collect();
        let work: u64 = cols[1].parse().unwrap();
        let rate: f64 = cols[2].parse().unwrap();
        assert!(work > 0 && rate > 0.0, "{row}");
    }
    let bad = Command::new(env!("CARGO_BIN_EXE_asic"))
        .args(["bench", "--quick", "nosuch"])
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("no workload `nosuch`"));
}

/// The library entry at quick sizes, in lockstep too: every figure is there and positive.
#[test]
fn quick_figures_are_positive_in_both_modes() {
    CountingAlloc::installed();
    for lockstep in [false, true] {
        let only = if lockstep {
            vec!["hop-64B".to_string()]
        } else {
            Vec::new()
        };
        let figs = perf::run(Sizes::QUICK, &only, lockstep, 1).unwrap();
        assert_eq!(figs.len(), if lockstep { 1 } else { perf::WORKLOADS.len() });
        for f in &figs {
            assert!(f.work > 0 && f.wall_s > 0.0 && f.sim_ps > 0, "{f:?}");
            assert!(f.rate() > 0.0 && f.sim_per_wall() > 0.0, "{f:?}");
            assert!(f.allocations.is_some(), "{f:?}");
            if cfg!(target_os = "linux") {
                assert!(f.peak_kib.is_some_and(|k| k > 0), "{f:?}");
            }
        }
    }
}
