//! The partitions run in lookahead windows, one thread each (the calling thread runs the
//! first; with one partition no thread is started).
//!
//! Between two windows every partition takes the frames the others sent it, says where it
//! stands ([`Status`]), and every thread makes the same decision from the same statuses
//! ([`Rules::decide`]): stop, or run the events before `T + window`, `T` the earliest
//! pending event of all. The decision reads nothing that depends on the partitioning, so one
//! thread runs exactly the windows many do. In particular a run that stops when its flows
//! complete stops at the end of the window in which the last completes (and its scheduled
//! reads are taken), whatever the thread count.
//!
//! The observer is the calling thread's: between windows, while the other threads wait, it
//! is handed the captured frames (by capture, each capture's in the order its node sent
//! them) and the finished traces (chip by chip), and the progress.

use super::part::{Mail, Part, Status};
use crate::network::Observer;
use pipelines::time::Time;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};

/// What decides the windows and the end.
pub(crate) struct Rules {
    pub(crate) window: Time,
    pub(crate) stop_at: Option<Time>,
    pub(crate) stop_when_complete: bool,
    /// Flows in the run.
    pub(crate) flows: usize,
}

/// What to do after a window.
#[derive(Debug, PartialEq)]
pub(crate) enum Decision {
    /// Run the events before this time.
    Window(Time),
    /// The run ended at this time, or failed.
    Stop(Result<Time, String>),
}

impl Rules {
    /// The decision from every partition's status.
    pub(crate) fn decide(&self, st: &[Status]) -> Decision {
        let first_error = st
            .iter()
            .filter_map(|s| s.error.as_ref())
            .min_by_key(|(t, node, _)| (*t, *node));
        if let Some((_, _, e)) = first_error {
            return Decision::Stop(Err(e.clone()));
        }
        let last = st.iter().map(|s| s.last_at).max().unwrap_or(Time::ZERO);
        let Some(next) = st.iter().filter_map(|s| s.next).min() else {
            return Decision::Stop(Ok(last));
        };
        if let Some(s) = self.stop_at.filter(|&s| next > s) {
            return Decision::Stop(Ok(s));
        }
        let started: usize = st.iter().map(|s| s.started).sum();
        let completed: usize = st.iter().map(|s| s.completed).sum();
        // Scheduled reads are taken even after the last flow completes: their results are
        // what the scenario asked for.
        if self.stop_when_complete
            && self.flows > 0
            && started == self.flows
            && completed == self.flows
            && !st.iter().any(|s| s.reads_pending)
        {
            return Decision::Stop(Ok(last));
        }
        Decision::Window(next + self.window)
    }
}

/// A lock that a panicking thread did not leave unusable (the panic is the scope's to
/// report).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A barrier that spins before it sleeps: windows are short (a few hundred microseconds of
/// work), and a thread put to sleep on a condition variable takes tens of microseconds to
/// wake, which `std::sync::Barrier` costs at every window. A thread that has spun for a
/// while sleeps all the same, so threads beyond the cores do not starve the ones working.
struct SpinBarrier {
    threads: usize,
    /// Threads arrived in the current round.
    arrived: AtomicUsize,
    /// Rounds completed.
    round: AtomicUsize,
    /// Where a thread that stopped spinning sleeps until the round changes.
    sleep: Mutex<()>,
    wake: Condvar,
}

/// Spins before a waiting thread sleeps (about 10-20 µs).
const SPINS: u32 = 1 << 14;

impl SpinBarrier {
    fn new(threads: usize) -> SpinBarrier {
        SpinBarrier {
            threads,
            arrived: AtomicUsize::new(0),
            round: AtomicUsize::new(0),
            sleep: Mutex::new(()),
            wake: Condvar::new(),
        }
    }

    /// Wait until every thread has called `wait` in this round.
    fn wait(&self) {
        if self.threads == 1 {
            return;
        }
        let round = self.round.load(Ordering::Acquire);
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.threads {
            self.arrived.store(0, Ordering::Relaxed);
            // Under the lock, so a thread between its check and its sleep cannot miss it.
            let _g = lock(&self.sleep);
            self.round.store(round + 1, Ordering::Release);
            self.wake.notify_all();
            return;
        }
        for _ in 0..SPINS {
            if self.round.load(Ordering::Acquire) != round {
                return;
            }
            std::hint::spin_loop();
        }
        let mut g = lock(&self.sleep);
        while self.round.load(Ordering::Acquire) == round {
            g = self.wake.wait(g).unwrap_or_else(|e| e.into_inner());
        }
    }
}

/// The threads' meeting place.
struct Driver {
    barrier: SpinBarrier,
    parts: Vec<Mutex<Part>>,
    /// `mail[dst * n + src]`: frames from `src` for `dst`.
    mail: Vec<Mutex<Mail>>,
    status: Vec<Mutex<Status>>,
    /// The observer refused a frame or a trace (a file could not be written).
    failed: Mutex<Option<String>>,
    /// Kept by thread 0.
    windows: Mutex<Windows>,
}

/// How the windows went: what bounds the speedup of more threads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Windows {
    /// Windows run.
    pub windows: u64,
    /// The sum over windows of the events of the busiest partition in each: the events on
    /// the run's critical path (all of them on one thread).
    pub critical_events: u64,
}

/// Run `parts` to the end under `rules`; `total` is the expected end (for the progress).
/// Returns the partitions as the run left them, how the windows went, and its end time, or
/// its error.
pub(crate) fn drive(
    parts: Vec<Part>,
    rules: &Rules,
    observer: &mut dyn Observer,
    total: Time,
) -> (Vec<Part>, Windows, Result<Time, String>) {
    let n = parts.len();
    let d = Driver {
        barrier: SpinBarrier::new(n),
        parts: parts.into_iter().map(Mutex::new).collect(),
        mail: (0..n * n).map(|_| Mutex::default()).collect(),
        status: (0..n).map(|_| Mutex::default()).collect(),
        failed: Mutex::new(None),
        windows: Mutex::default(),
    };
    let end = std::thread::scope(|s| {
        for i in 1..n {
            let d = &d;
            s.spawn(move || d.work(i, rules, None, total));
        }
        d.work(0, rules, Some(observer), total)
    });
    let parts = d
        .parts
        .into_iter()
        .map(|m| m.into_inner().unwrap_or_else(|e| e.into_inner()))
        .collect();
    let windows = *lock(&d.windows);
    (parts, windows, end)
}

impl Driver {
    /// Thread `i`'s loop over the windows; thread 0 holds the observer.
    fn work(
        &self,
        i: usize,
        rules: &Rules,
        mut observer: Option<&mut dyn Observer>,
        total: Time,
    ) -> Result<Time, String> {
        let n = self.parts.len();
        let mut reported = 0;
        // Thread 0: each partition's events when the last window began.
        let mut before = vec![0u64; n];
        loop {
            {
                let mut part = lock(&self.parts[i]);
                for src in (0..n).filter(|&s| s != i) {
                    part.receive(&mut lock(&self.mail[i * n + src]));
                }
                *lock(&self.status[i]) = part.status();
            }
            self.barrier.wait();
            let st: Vec<Status> = self.status.iter().map(|s| lock(s).clone()).collect();
            let decision = rules.decide(&st);
            if i == 0 {
                let mut w = lock(&self.windows);
                let busiest = st.iter().zip(&before).map(|(s, b)| s.events - b).max();
                w.critical_events += busiest.unwrap_or(0);
                w.windows += u64::from(st.iter().zip(&before).any(|(s, b)| s.events > *b));
                for (b, s) in before.iter_mut().zip(&st) {
                    *b = s.events;
                }
            }
            if let Some(o) = observer.as_deref_mut() {
                // Every few thousand events, as a progress bar wants.
                let events: u64 = st.iter().map(|s| s.events).sum();
                if events >= reported + 4096 {
                    reported = events;
                    let now = st.iter().filter_map(|s| s.next).min().unwrap_or(total);
                    o.progress(now, total);
                }
            }
            let until = match decision {
                Decision::Stop(r) => return r,
                Decision::Window(until) => until,
            };
            if st.iter().any(|s| s.observations) {
                if let Some(o) = observer.as_deref_mut() {
                    let mut guards: Vec<MutexGuard<Part>> = self.parts.iter().map(lock).collect();
                    let mut parts: Vec<&mut Part> = guards.iter_mut().map(|g| &mut **g).collect();
                    if let Err(e) = hand_out(&mut parts, o) {
                        *lock(&self.failed) = Some(e);
                    }
                }
                self.barrier.wait();
                if let Some(e) = lock(&self.failed).clone() {
                    return Err(e);
                }
            }
            {
                let mut part = lock(&self.parts[i]);
                part.run_window(until, rules.stop_at);
                for dst in (0..n).filter(|&d| d != i) {
                    part.post(dst, &mut lock(&self.mail[dst * n + i]));
                }
            }
            self.barrier.wait();
        }
    }
}

/// Hand the frames the partitions captured (by capture, each in the order it was sent) and
/// the traces their chips finished (chip by chip) to `observer`.
pub(crate) fn hand_out(parts: &mut [&mut Part], observer: &mut dyn Observer) -> Result<(), String> {
    let mut frames: Vec<(usize, Time, &[u8])> = parts
        .iter()
        .flat_map(|part| part.captured.iter())
        .map(|(&(capture, start), bytes)| (capture, start, bytes))
        .collect();
    // Stable: a capture's frames all come from one node, so from one partition, in order.
    frames.sort_by_key(|&(capture, _, _)| capture);
    for (capture, start, bytes) in frames {
        observer.capture(capture, start, bytes)?;
    }
    for part in parts.iter_mut() {
        part.captured.clear();
    }
    let Some(first) = parts.first() else {
        return Ok(());
    };
    let sh = std::sync::Arc::clone(&first.sh);
    for c in 0..sh.chip_part.len() {
        let chip = parts[sh.chip_part[c]].chips[c]
            .as_mut()
            .expect("a chip is in its partition");
        for t in chip.drain_trace() {
            observer.trace(c, &t)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules() -> Rules {
        Rules {
            window: Time(1_000),
            stop_at: None,
            stop_when_complete: true,
            flows: 2,
        }
    }

    fn status(next: Option<u64>, last: u64, started: usize, completed: usize) -> Status {
        Status {
            next: next.map(Time),
            last_at: Time(last),
            started,
            completed,
            ..Status::default()
        }
    }

    #[test]
    fn the_next_window_starts_at_the_earliest_event_of_all() {
        let st = [status(Some(5_000), 10, 1, 0), status(Some(3_000), 20, 1, 0)];
        assert_eq!(rules().decide(&st), Decision::Window(Time(4_000)));
    }

    #[test]
    fn a_run_stops_when_all_flows_completed_at_its_last_event() {
        let st = [
            status(Some(5_000), 4_200, 1, 1),
            status(Some(4_500), 4_100, 1, 1),
        ];
        assert_eq!(rules().decide(&st), Decision::Stop(Ok(Time(4_200))));
        // Not while one has not started, nor while a read is pending.
        let st = [
            status(Some(5_000), 4_200, 1, 1),
            status(Some(4_500), 4_100, 0, 1),
        ];
        assert!(matches!(rules().decide(&st), Decision::Window(_)));
        let mut st = [status(Some(5_000), 4_200, 1, 1), status(None, 4_100, 1, 1)];
        st[1].reads_pending = true;
        assert!(matches!(rules().decide(&st), Decision::Window(_)));
    }

    #[test]
    fn the_earliest_error_wins_and_a_stop_time_ends_the_run() {
        let mut st = [status(Some(1), 0, 0, 0), status(Some(1), 0, 0, 0)];
        st[0].error = Some((Time(9), 3, "late".into()));
        st[1].error = Some((Time(7), 5, "early".into()));
        assert_eq!(rules().decide(&st), Decision::Stop(Err("early".into())));
        let r = Rules {
            stop_at: Some(Time(100)),
            ..rules()
        };
        let st = [status(Some(150), 90, 0, 0), status(None, 95, 0, 0)];
        assert_eq!(r.decide(&st), Decision::Stop(Ok(Time(100))));
        let st = [status(None, 90, 0, 0), status(None, 95, 0, 0)];
        assert_eq!(r.decide(&st), Decision::Stop(Ok(Time(95))));
    }
}
