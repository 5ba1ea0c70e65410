//! A progress bar of simulated time for long runs, over `indicatif` (the common Rust
//! progress bar: rate-limited redraws, ETA, and no output when its target is not a
//! terminal).
//!
//! The bar starts hidden and appears only if standard error is a terminal *and* the run has
//! taken more than [`SHOW_AFTER`] of wall-clock time, so short runs, tests, CI and redirected
//! output print nothing. This is the one place the bench reads the host's clock: it decides
//! whether to draw a bar and nothing else. The model never sees it, and results do not
//! depend on it (the "no wall clock" invariant of docs/ARCHITECTURE.md is about simulated
//! behaviour; a progress bar is UI).
//!
//! [`SimProgress::tick`] is cheap enough to call every few thousand events: when the bar is
//! disabled it is one branch; otherwise it reads the monotonic clock at most once per
//! [`CHECK_EVERY`] calls, and updates the bar (an atomic store; indicatif redraws at most
//! 20 times a second) only when the simulated time moved by 1/1000 of the total.

use asic_net::Observer;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use pipelines::time::Time;
use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// Wall-clock time after which the bar appears.
pub const SHOW_AFTER: Duration = Duration::from_secs(2);
/// Calls to `tick` between two looks at the clock while the bar is still hidden.
pub const CHECK_EVERY: u32 = 64;

/// Progress of one simulation run, in simulated time.
pub struct SimProgress {
    label: String,
    enabled: bool,
    started: Instant,
    bar: Option<ProgressBar>,
    calls: u32,
    last_permille: u64,
}

fn fmt_sim(ps: u64) -> String {
    if ps >= 1_000_000_000 {
        format!("{:.3} ms", ps as f64 / 1e9)
    } else {
        format!("{:.3} us", ps as f64 / 1e6)
    }
}

fn permille(sim_ps: u64, total_ps: u64) -> u64 {
    if total_ps == 0 {
        1000
    } else {
        ((sim_ps.min(total_ps) as u128 * 1000) / total_ps as u128) as u64
    }
}

fn sim_message(sim_ps: u64, total_ps: u64) -> String {
    format!("{} of {}", fmt_sim(sim_ps), fmt_sim(total_ps))
}

impl SimProgress {
    /// A bar for a run called `label`: enabled only if standard error is a terminal.
    pub fn new(label: &str) -> SimProgress {
        SimProgress::with_enabled(label, std::io::stderr().is_terminal())
    }

    /// A bar that never shows.
    pub fn hidden() -> SimProgress {
        SimProgress::with_enabled("", false)
    }

    /// A bar that shows after [`SHOW_AFTER`] if `enabled` (for callers that decide
    /// themselves, e.g. a `--progress` flag).
    pub fn with_enabled(label: &str, enabled: bool) -> SimProgress {
        SimProgress {
            label: label.to_string(),
            enabled,
            started: Instant::now(),
            bar: None,
            calls: 0,
            last_permille: u64::MAX,
        }
    }

    /// Whether the bar is being drawn now.
    pub fn is_visible(&self) -> bool {
        self.bar.is_some()
    }

    /// The simulation reached `sim_ps` of `total_ps`.
    #[inline]
    pub fn tick(&mut self, sim_ps: u64, total_ps: u64) {
        if !self.enabled {
            return;
        }
        self.tick_slow(sim_ps, total_ps);
    }

    fn tick_slow(&mut self, sim_ps: u64, total_ps: u64) {
        if self.bar.is_none() {
            self.calls += 1;
            if self.calls < CHECK_EVERY {
                return;
            }
            self.calls = 0;
            if self.started.elapsed() < SHOW_AFTER {
                return;
            }
            // Configured while hidden, drawn from its first complete state on.
            let bar = ProgressBar::with_draw_target(Some(1000), ProgressDrawTarget::hidden());
            let style = ProgressStyle::with_template(
                "{prefix} [{wide_bar}] {percent:>3}% sim {msg}, {elapsed} eta {eta}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ");
            bar.set_style(style);
            bar.set_prefix(self.label.clone());
            // Count elapsed time (and so the ETA) from the start of the run, not of the bar.
            bar.set_elapsed(self.started.elapsed());
            bar.set_position(permille(sim_ps, total_ps));
            bar.set_message(sim_message(sim_ps, total_ps));
            bar.set_draw_target(ProgressDrawTarget::stderr());
            self.bar = Some(bar);
        }
        let permille = permille(sim_ps, total_ps);
        if permille != self.last_permille {
            self.last_permille = permille;
            if let Some(bar) = &self.bar {
                bar.set_position(permille);
                bar.set_message(sim_message(sim_ps, total_ps));
            }
        }
    }

    /// The run ended: clear the bar if one was drawn.
    pub fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

/// The runtime reports progress to the bar; the bar ends with the run.
impl Observer for SimProgress {
    fn progress(&mut self, now: Time, total: Time) {
        self.tick(now.ps(), total.ps());
    }

    fn finish(&mut self, _end: Time) {
        SimProgress::finish(self);
    }
}

impl Drop for SimProgress {
    fn drop(&mut self) {
        self.finish();
    }
}
