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
//!
//! The runtime's total is the traffic's end (the stop time, or when the last flow starts),
//! and a run without a stop time goes on until its flows complete: past the total the bar
//! says it is draining and shows the simulated time, rather than sitting at 100 %.
//!
//! A sweep runs several simulations at once: [`SweepProgress`] draws a bar of points done
//! above a bar per running point, each named after its point, through indicatif's
//! `MultiProgress`, so parallel bars neither overwrite each other nor share one label.

use asic_net::Observer;
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use pipelines::time::Time;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
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
    draining: bool,
    /// The sweep this run is a point of: its bar goes under the sweep's.
    sweep: Option<SweepProgress>,
}

fn fmt_sim(ps: u64) -> String {
    if ps >= 1_000_000_000 {
        format!("{:.3} ms", ps as f64 / 1e9)
    } else {
        format!("{:.3} us", ps as f64 / 1e6)
    }
}

/// Thousandths of the total reached; past 1000 while draining.
fn permille(sim_ps: u64, total_ps: u64) -> u64 {
    if total_ps == 0 {
        1000
    } else {
        (sim_ps as u128 * 1000 / total_ps as u128).min(u64::MAX as u128) as u64
    }
}

fn sim_message(sim_ps: u64, total_ps: u64) -> String {
    if sim_ps > total_ps {
        format!(
            "draining: sim {}, the traffic ended at {}",
            fmt_sim(sim_ps),
            fmt_sim(total_ps)
        )
    } else {
        format!("{} of {}", fmt_sim(sim_ps), fmt_sim(total_ps))
    }
}

fn style(template: &str) -> ProgressStyle {
    ProgressStyle::with_template(template)
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ")
}

/// Until the traffic's end: how far, and when the run should reach it.
const RUNNING: &str = "{prefix} [{wide_bar}] {percent:>3}% sim {msg}, {elapsed} eta {eta}";
/// Past it: no percentage or ETA to give, only the simulated time.
const DRAINING: &str = "{prefix} {spinner} {msg}, {elapsed}";

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
            draining: false,
            sweep: None,
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
            bar.set_style(style(RUNNING));
            bar.set_prefix(self.label.clone());
            // Count elapsed time (and so the ETA) from the start of the run, not of the bar.
            bar.set_elapsed(self.started.elapsed());
            self.bar = Some(match &self.sweep {
                Some(sweep) => {
                    sweep.show();
                    sweep.multi.add(bar)
                }
                None => {
                    bar.set_draw_target(ProgressDrawTarget::stderr());
                    bar
                }
            });
        }
        let permille = permille(sim_ps, total_ps);
        if permille != self.last_permille {
            self.last_permille = permille;
            if let Some(bar) = &self.bar {
                if permille > 1000 && !self.draining {
                    self.draining = true;
                    bar.set_style(style(DRAINING));
                }
                bar.set_position(permille.min(1000));
                bar.set_message(sim_message(sim_ps, total_ps));
                bar.tick();
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

/// Progress of a sweep: a bar of points done, with the bars of the points running under it
/// (each a [`SimProgress`] from [`SweepProgress::point`]). Shown on the same terms as a run's
/// bar: on a terminal, once a point has run [`SHOW_AFTER`] or the sweep has when a point
/// ends. Clones share the bars, one per worker thread.
#[derive(Clone)]
pub struct SweepProgress {
    multi: MultiProgress,
    points_done: ProgressBar,
    shown: Arc<AtomicBool>,
    enabled: bool,
    started: Instant,
}

impl SweepProgress {
    /// Progress of a sweep of `points` points: drawn only if standard error is a terminal.
    pub fn new(points: usize) -> SweepProgress {
        SweepProgress::with_enabled(points, std::io::stderr().is_terminal())
    }

    /// Progress of a sweep that shows after [`SHOW_AFTER`] if `enabled`.
    pub fn with_enabled(points: usize, enabled: bool) -> SweepProgress {
        let target = if enabled {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        };
        let points_done =
            ProgressBar::with_draw_target(Some(points as u64), ProgressDrawTarget::hidden());
        points_done.set_style(style(
            "sweep [{wide_bar}] {pos}/{len} points done, {elapsed}",
        ));
        SweepProgress {
            multi: MultiProgress::with_draw_target(target),
            points_done,
            shown: Arc::new(AtomicBool::new(false)),
            enabled,
            started: Instant::now(),
        }
    }

    /// The bar of one point, labelled `label` (name the point: its bar stands among others).
    pub fn point(&self, label: &str) -> SimProgress {
        let mut p = SimProgress::with_enabled(label, self.enabled);
        p.sweep = Some(self.clone());
        p
    }

    /// Whether the bar of points done is being drawn.
    pub fn is_visible(&self) -> bool {
        self.shown.load(Ordering::Relaxed)
    }

    /// Draw the bar of points done, above the points' bars, if it is not yet.
    fn show(&self) {
        if !self.shown.swap(true, Ordering::Relaxed) {
            self.multi.insert(0, self.points_done.clone()).tick();
        }
    }

    /// A point ended (whatever its result).
    pub fn point_done(&self) {
        self.points_done.inc(1);
        if self.enabled && self.started.elapsed() >= SHOW_AFTER {
            self.show();
        }
    }

    /// The sweep ended: clear its bar.
    pub fn finish(&self) {
        self.points_done.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn past_the_traffic_end_the_message_says_draining() {
        assert_eq!(sim_message(500_000, 1_000_000), "0.500 us of 1.000 us");
        assert_eq!(
            sim_message(3_000_000_000, 1_000_000_000),
            "draining: sim 3.000 ms, the traffic ended at 1.000 ms"
        );
        assert_eq!(permille(3, 1), 3000, "not held at 1000");
    }

    #[test]
    fn a_sweep_shows_a_bar_per_point_named_after_it_and_one_of_points_done() {
        let sweep = SweepProgress::with_enabled(2, true);
        let mut a = sweep.point("point 1/2 load=0.2");
        let mut b = sweep.point("point 2/2 load=0.5");
        std::thread::sleep(SHOW_AFTER);
        for _ in 0..CHECK_EVERY {
            a.tick(500, 1000);
            b.tick(3000, 1000);
        }
        assert!(a.is_visible() && b.is_visible() && sweep.is_visible());
        let prefix = |p: &SimProgress| p.bar.as_ref().map(|b| b.prefix());
        assert_eq!(prefix(&a).as_deref(), Some("point 1/2 load=0.2"));
        assert_eq!(prefix(&b).as_deref(), Some("point 2/2 load=0.5"));
        assert!(!a.draining && b.draining);
        let message = b.bar.as_ref().map(|b| b.message()).unwrap_or_default();
        assert!(message.starts_with("draining: sim "), "{message}");
        sweep.point_done();
        assert_eq!(sweep.points_done.position(), 1);

        // Off a terminal nothing shows.
        let hidden = SweepProgress::with_enabled(1, false);
        let mut c = hidden.point("point 1/1");
        c.tick(1, 2);
        hidden.point_done();
        assert!(!c.is_visible() && !hidden.is_visible());
    }
}
