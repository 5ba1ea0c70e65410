//! Schedulers, ECN, depth export, configuration and profiles.

use super::req;
use tm::config::{
    AdmissionPolicy, ConfigError, EcnConfig, PfcConfig, PfcGroup, PortScheduler, QueueConfig,
    ReturnToSender, SchedulerConfig, TmConfig, TrimConfig, TrimMark,
};
use tm::export::DepthExport;
use tm::spec::TmSpec;
use tm::stats::TraceEvent;
use tm::{EnqueueRequest, Refusal, TrafficManager};

fn tm_with(sched: SchedulerConfig, queues: u16) -> TrafficManager {
    let cfg = TmConfig {
        admission: AdmissionPolicy::Static,
        scheduler: sched,
        ..TmConfig::default()
    };
    TrafficManager::new(TmSpec::small(100_000, 80, queues), cfg, 1).unwrap()
}

/// Backlogs every queue with `n` packets of `bytes[q]` and returns the queue order of `take`
/// dequeues.
fn serve(tm: &mut TrafficManager, bytes: &[u32], n: u32, take: usize) -> Vec<u16> {
    let mut h = 0;
    for _ in 0..n {
        for (q, &b) in bytes.iter().enumerate() {
            tm.enqueue(req(0, q as u16, b, h)).unwrap();
            h += 1;
        }
    }
    (0..take).map(|_| tm.dequeue(0, 0).unwrap().queue).collect()
}

#[test]
fn strict_priority_serves_the_highest_backlogged_queue() {
    let mut tm = tm_with(SchedulerConfig::StrictPriority, 4);
    let order = serve(&mut tm, &[100, 100, 100, 100], 2, 8);
    assert_eq!(order, vec![3, 3, 2, 2, 1, 1, 0, 0]);
}

#[test]
fn strict_priority_needs_enough_levels() {
    let cfg = TmConfig {
        scheduler: SchedulerConfig::StrictPriority,
        ..TmConfig::default()
    };
    let e = TrafficManager::new(TmSpec::small(100, 80, 32), cfg, 1).unwrap_err();
    assert_eq!(e.field, "scheduler");
}

#[test]
fn drr_shares_bytes_in_proportion_to_quanta() {
    let mut tm = tm_with(
        SchedulerConfig::Drr {
            quanta: vec![1000, 3000],
        },
        2,
    );
    // Queue 0 sends 500-byte packets, queue 1 1500-byte ones: bytes served follow 1:3.
    let order = serve(&mut tm, &[500, 1500], 400, 400);
    let b0 = order.iter().filter(|&&q| q == 0).count() * 500;
    let b1 = order.iter().filter(|&&q| q == 1).count() * 1500;
    let ratio = b1 as f64 / b0 as f64;
    assert!((ratio - 3.0).abs() < 0.05, "ratio {ratio}");
}

#[test]
fn wrr_shares_packets_by_weight() {
    let mut tm = tm_with(
        SchedulerConfig::Wrr {
            weights: vec![1, 2, 5],
        },
        3,
    );
    let order = serve(&mut tm, &[64, 1500, 300], 100, 80);
    let counts: Vec<usize> = (0..3)
        .map(|q| order.iter().filter(|&&x| x == q).count())
        .collect();
    assert_eq!(counts, vec![10, 20, 50]);
    // One round: 1, 2, 5 packets in a row.
    assert_eq!(&order[..8], &[0, 1, 1, 2, 2, 2, 2, 2]);
}

#[test]
fn sp_over_drr_groups() {
    let mut tm = tm_with(
        SchedulerConfig::SpOverDrr {
            levels: vec![0, 0, 1, 1],
            quanta: vec![100, 100, 100, 100],
        },
        4,
    );
    let order = serve(&mut tm, &[100, 100, 100, 100], 3, 12);
    // The high group (2, 3) alternates until empty, then the low group (0, 1).
    assert_eq!(order, vec![2, 3, 2, 3, 2, 3, 0, 1, 0, 1, 0, 1]);
}

#[test]
fn paused_queue_is_skipped_and_others_keep_their_share() {
    let mut tm = tm_with(SchedulerConfig::Drr { quanta: vec![] }, 3);
    for h in 0..6 {
        tm.enqueue(req(0, (h % 3) as u16, 100, h)).unwrap();
    }
    tm.set_queue_paused(0, 1, true, 0);
    let order: Vec<u16> = std::iter::from_fn(|| tm.dequeue(0, 0).map(|d| d.queue)).collect();
    assert_eq!(order, vec![0, 0, 2, 2]);
    assert!(tm.has_packets(0));
}

#[test]
fn per_port_scheduler_override() {
    let cfg = TmConfig {
        scheduler: SchedulerConfig::Drr { quanta: vec![] },
        port_schedulers: vec![PortScheduler {
            port: 1,
            scheduler: SchedulerConfig::StrictPriority,
        }],
        ..TmConfig::default()
    };
    let mut tm = TrafficManager::new(TmSpec::small(1000, 80, 2), cfg, 2).unwrap();
    for h in 0..2 {
        tm.enqueue(req(1, 0, 100, h)).unwrap();
        tm.enqueue(req(1, 1, 100, 10 + h)).unwrap();
    }
    let order: Vec<u16> = std::iter::from_fn(|| tm.dequeue(1, 0).map(|d| d.queue)).collect();
    assert_eq!(order, vec![1, 1, 0, 0]);
}

#[test]
fn ecn_threshold_marks_above_k() {
    let cfg = TmConfig {
        default_queue: QueueConfig {
            ecn: EcnConfig::Threshold { k_cells: 3 },
            ..QueueConfig::default()
        },
        ..TmConfig::default()
    };
    let mut tm = TrafficManager::new(TmSpec::small(1000, 80, 1), cfg, 1).unwrap();
    let marks: Vec<bool> = (0..6)
        .map(|h| tm.enqueue(req(0, 0, 80, h)).unwrap().ecn_mark)
        .collect();
    // Depth before each packet: 0..5; marked when > 3.
    assert_eq!(marks, vec![false, false, false, false, true, true]);
    let d: Vec<bool> = std::iter::from_fn(|| tm.dequeue(0, 0).map(|d| d.ecn_mark)).collect();
    assert_eq!(d, marks);
    assert_eq!(tm.queue_counters(0, 0).ecn_marks, 2);
}

#[test]
fn ecn_red_probability_and_seed() {
    let run = |seed: u64| {
        let cfg = TmConfig {
            default_queue: QueueConfig {
                ecn: EcnConfig::Red {
                    kmin_cells: 10,
                    kmax_cells: 30,
                    pmax: 0.4,
                },
                ..QueueConfig::default()
            },
            seed: Some(seed),
            ..TmConfig::default()
        };
        let mut tm = TrafficManager::new(TmSpec::small(1000, 80, 1), cfg, 1).unwrap();
        // Hold the depth at 20 cells: p = 0.4 · (20 − 10)/(30 − 10) = 0.2.
        for h in 0..20 {
            tm.enqueue(req(0, 0, 80, h)).unwrap();
        }
        let mut marks = Vec::new();
        for h in 20..20_020 {
            marks.push(tm.enqueue(req(0, 0, 80, h)).unwrap().ecn_mark);
            tm.dequeue(0, 0);
        }
        marks
    };
    let a = run(1);
    assert_eq!(a, run(1));
    assert_ne!(a, run(2));
    let frac = a.iter().filter(|&&m| m).count() as f64 / a.len() as f64;
    assert!((frac - 0.2).abs() < 0.02, "{frac}");
}

#[test]
fn depths_in_cells_and_packets_reach_egress_metadata() {
    let mut tm = TrafficManager::new(TmSpec::small(1000, 80, 1), TmConfig::default(), 1).unwrap();
    let a = tm
        .enqueue(EnqueueRequest {
            now_ps: 10,
            ..req(0, 0, 161, 1)
        })
        .unwrap();
    assert_eq!((a.cells, a.enq_depth_cells, a.enq_depth_pkts), (3, 0, 0));
    let b = tm
        .enqueue(EnqueueRequest {
            now_ps: 20,
            ..req(0, 0, 80, 2)
        })
        .unwrap();
    assert_eq!((b.cells, b.enq_depth_cells, b.enq_depth_pkts), (1, 3, 1));
    assert_eq!(tm.depth(0, 0), (4, 2));
    let d = tm.dequeue(0, 500).unwrap();
    assert_eq!(
        (d.handle, d.enq_time_ps, d.deq_depth_cells, d.deq_depth_pkts),
        (1, 10, 1, 1)
    );
    let d = tm.dequeue(0, 600).unwrap();
    assert_eq!(
        (d.enq_depth_cells, d.enq_depth_pkts, d.deq_depth_cells),
        (3, 1, 0)
    );
    assert_eq!(600 - d.enq_time_ps, 580); // queue delay
}

/// A TM of `ports` ports with `spec`'s queues, its depths exported every 1,000 ps with
/// `delay_ps` for reads up to `window_ps` in the past.
fn exported(
    mut spec: TmSpec,
    ports: usize,
    delay_ps: u64,
    window_ps: u64,
) -> (TrafficManager, DepthExport) {
    spec.depth_export_period_ps = 1_000;
    spec.depth_export_delay_ps = delay_ps;
    let mut tm = TrafficManager::new(spec.clone(), TmConfig::default(), ports).unwrap();
    let ex = DepthExport::new(&spec, window_ps);
    ex.attach(&mut tm);
    (tm, ex)
}

/// The reference for [`DepthExport::empty_queues`]: bit q for each of the first `queues`
/// queues of `port` that a read at `at` sees empty.
fn empty_by_reads(ex: &DepthExport, tm: &TrafficManager, port: u16, queues: u16, at: u64) -> u128 {
    (0..queues)
        .filter(|&q| ex.read(tm, port, q, at) == 0)
        .fold(0u128, |m, q| m | 1 << q)
}

#[test]
fn depth_export_is_periodic_and_delayed() {
    let (mut tm, mut ex) = exported(TmSpec::small(1000, 80, 2), 2, 300, 500);
    assert_eq!(ex.read(&tm, 1, 1, 5_000), 0); // nothing ever changed: an empty TM
    ex.before_change(&mut tm, 0);
    tm.enqueue(req(1, 1, 800, 1)).unwrap(); // 10 cells at t = 0
    assert_eq!(ex.read(&tm, 1, 1, 299), 0); // no snapshot visible yet
    assert_eq!(ex.read(&tm, 1, 1, 300), 0); // snapshot 0: before the change at 0
    assert_eq!(ex.read(&tm, 1, 1, 1_299), 0);
    assert_eq!(ex.read(&tm, 1, 1, 1_300), 10); // snapshot 1 (1000 ps), visible at 1300
    assert_eq!(ex.read(&tm, 1, 0, 1_300), 0);
    assert_eq!(ex.read(&tm, 5, 0, 1_300), 0); // no such port
    assert_eq!(ex.read(&tm, 1, 7, 1_300), 0); // no such queue
    assert_eq!(ex.captures(), 0); // nothing copied: the TM itself answers
                                  // A dequeue at 2500: the state since 0 was seen by snapshots 1 and 2, so it is copied
                                  // once; reads of the recent past still see it.
    ex.before_change(&mut tm, 2_500);
    tm.dequeue(1, 2_500).unwrap();
    assert_eq!(ex.captures(), 1);
    assert_eq!(ex.read(&tm, 1, 1, 2_700), 10); // snapshot 2 (2000 ps)
    assert_eq!(ex.read(&tm, 1, 1, 3_299), 10);
    assert_eq!(ex.read(&tm, 1, 1, 3_300), 0); // snapshot 3: after the dequeue
                                              // Changes inside one period that no snapshot saw are never copied.
    for h in 0..5u32 {
        ex.before_change(&mut tm, 3_100 + 100 * h as u64);
        tm.enqueue(req(0, 0, 80, 10 + h)).unwrap();
    }
    assert_eq!(ex.captures(), 2); // the empty state since 2500, seen by snapshot 3
    assert_eq!(ex.read(&tm, 0, 0, 4_299), 0);
    assert_eq!(ex.read(&tm, 0, 0, 4_300), 5);
    let mut buf = Vec::new();
    tm.snapshot_into(&mut buf);
    assert_eq!(buf, vec![5, 0, 0, 0]);
}

#[test]
fn depth_export_keeps_a_bounded_history_and_reads_the_past_exactly() {
    let window = 4_000;
    let (mut tm, mut ex) = exported(TmSpec::small(100_000, 80, 1), 1, 2_500, window);
    // The true depth after every change: (time, depth).
    let mut history: Vec<(u64, u32)> = vec![(0, 0)];
    let mut h = 0;
    for step in 0..2_000u64 {
        // Changes every 370 ps: some periods see none, some several.
        let now = 370 * step;
        ex.before_change(&mut tm, now);
        if step % 3 == 2 {
            tm.dequeue(0, now);
        } else {
            h += 1;
            tm.enqueue(req(0, 0, 80, h)).unwrap();
        }
        history.push((now, tm.depth(0, 0).0));
        assert!(ex.kept() <= ((window + 2_500) / 1_000 + 2) as usize);
        // Every read the window allows: the depth after the last change strictly before
        // the snapshot instant.
        for back in (0..=window).step_by(97) {
            let at = now.saturating_sub(back);
            // A port's empty queues at once, as the reads say one by one (queue 1 and up:
            // past the TM's one queue per port, read as 0).
            let by_reads = empty_by_reads(&ex, &tm, 0, 3, at);
            assert_eq!(ex.empty_queues(&tm, 0, 3, at), by_reads, "at {at}");
            assert_eq!(ex.empty_queues(&tm, 7, 128, at), u128::MAX, "no such port");
            assert_eq!(ex.empty_queues(&tm, 0, 0, at), 0, "no queues asked");
            let want = match at.checked_sub(2_500) {
                None => 0,
                Some(t) => {
                    let s = t / 1_000 * 1_000;
                    history.iter().rev().find(|e| e.0 < s).map_or(0, |e| e.1)
                }
            };
            assert_eq!(
                ex.read(&tm, 0, 0, at),
                want,
                "read at {at} after the change at {now}"
            );
        }
    }
    // Reads whose snapshot came after the last change see the TM as it is.
    let last = 370 * 1_999;
    for at in (last..last + 10_000).step_by(331) {
        let by_reads = empty_by_reads(&ex, &tm, 0, 3, at);
        assert_eq!(ex.empty_queues(&tm, 0, 3, at), by_reads, "at {at}");
    }
    assert_ne!(tm.depth(0, 0).0, 0, "the live reads see a non-empty queue");
}

/// Many queues changing at random: every read, and every port's empty queues, equal what a
/// full copy of the TM at each snapshot instant says (the export copies only the queues that
/// changed).
#[test]
fn depth_export_of_changed_queues_reads_as_full_copies() {
    let window = 3_000;
    let ports = 3u16;
    let (mut tm, mut ex) = exported(TmSpec::small(100_000, 80, 4), ports as usize, 1_500, window);
    // Full copies after every change: (time, every queue's depth).
    let mut full: Vec<(u64, Vec<u32>)> = vec![(0, vec![0; 12])];
    let mut x = 12345u64;
    let mut next = |n: u64| {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (x >> 33) % n
    };
    let mut now = 0;
    for h in 0..3_000u32 {
        now += next(700);
        ex.before_change(&mut tm, now);
        let (port, queue) = (next(ports as u64) as u16, next(4) as u16);
        if next(3) == 0 {
            tm.dequeue(port, now);
        } else {
            tm.enqueue(req(port, queue, 80 * (1 + next(3) as u32), h))
                .unwrap();
        }
        let mut buf = Vec::new();
        tm.snapshot_into(&mut buf);
        full.push((now, buf));
        for back in (0..=window).step_by(113) {
            let at = now.saturating_sub(back);
            let want = |p: u16, q: u16| match at.checked_sub(1_500) {
                None => 0,
                Some(t) => {
                    let s = t / 1_000 * 1_000;
                    full.iter()
                        .rev()
                        .find(|e| e.0 < s)
                        .map_or(0, |e| e.1[(p * 4 + q) as usize])
                }
            };
            for p in 0..ports {
                let mut empty = 0u128;
                for q in 0..4 {
                    assert_eq!(ex.read(&tm, p, q, at), want(p, q), "({p}, {q}) at {at}");
                    empty |= ((want(p, q) == 0) as u128) << q;
                }
                assert_eq!(ex.empty_queues(&tm, p, 4, at), empty, "port {p} at {at}");
            }
        }
    }
    assert!(ex.kept() <= ((window + 1_500) / 1_000 + 2) as usize);
}

#[test]
fn drops_are_counted_by_reason_and_traced() {
    let mut tm = TrafficManager::new(TmSpec::small(10, 80, 1), TmConfig::default(), 1).unwrap();
    tm.set_trace(true);
    assert_eq!(tm.enqueue(req(5, 0, 80, 1)), Err(Refusal::NoSuchPort));
    assert_eq!(tm.enqueue(req(0, 3, 80, 1)), Err(Refusal::NoSuchQueue));
    let mut h = 10;
    while tm.enqueue(req(0, 0, 80, h)).is_ok() {
        h += 1;
    }
    assert_eq!(tm.drops(Refusal::NoSuchPort), 1);
    assert_eq!(tm.drops(Refusal::NoSuchQueue), 1);
    assert!(tm.queue_counters(0, 0).drops[Refusal::DynamicThreshold as usize] >= 1);
    tm.dequeue(0, 5);
    let trace: Vec<TraceEvent> = tm.drain_trace().collect();
    assert!(matches!(
        trace[0],
        TraceEvent::Drop {
            reason: Refusal::NoSuchPort,
            ..
        }
    ));
    assert!(trace
        .iter()
        .any(|e| matches!(e, TraceEvent::Enqueue { .. })));
    assert!(matches!(
        trace.last(),
        Some(TraceEvent::Dequeue { t: 5, .. })
    ));
    tm.set_trace(false);
    tm.dequeue(0, 6);
    assert_eq!(tm.drain_trace().count(), 0);
    for r in Refusal::ALL {
        assert!(r.name().starts_with("tm_"));
    }
}

#[test]
fn config_errors_name_the_field() {
    let spec = TmSpec::small(100, 80, 4);
    let cases: Vec<(TmConfig, &str)> = vec![
        (
            TmConfig {
                classes: vec![],
                ..TmConfig::default()
            },
            "classes",
        ),
        (
            TmConfig {
                classes: vec![tm::config::ClassConfig {
                    alpha: -1.0,
                    priority: 0,
                }],
                ..TmConfig::default()
            },
            "classes[0].alpha",
        ),
        (
            TmConfig {
                queues: vec![
                    QueueConfig::default(),
                    QueueConfig {
                        class: 3,
                        ..QueueConfig::default()
                    },
                ],
                ..TmConfig::default()
            },
            "queues[1].class",
        ),
        (
            TmConfig {
                default_queue: QueueConfig {
                    pool: 1,
                    ..QueueConfig::default()
                },
                ..TmConfig::default()
            },
            "default_queue.pool",
        ),
        (
            TmConfig {
                pool_cells: vec![60, 60],
                ..TmConfig::default()
            },
            "pool_cells",
        ),
        (
            TmConfig {
                pfc: PfcConfig {
                    quanta: 1,
                    groups: vec![PfcGroup {
                        ports: vec![],
                        priority: 2,
                        xoff_cells: 20,
                        hysteresis_cells: 5,
                        headroom_cells: 1,
                    }],
                },
                ..TmConfig::default()
            },
            "pfc.groups[0].hysteresis_cells",
        ),
        (
            TmConfig {
                pfc: PfcConfig {
                    quanta: 0,
                    groups: vec![PfcGroup {
                        ports: vec![],
                        priority: 2,
                        xoff_cells: 20,
                        hysteresis_cells: 4,
                        headroom_cells: 1,
                    }],
                },
                ..TmConfig::default()
            },
            "pfc.quanta",
        ),
        (
            TmConfig {
                scheduler: SchedulerConfig::Drr { quanta: vec![1, 0] },
                ..TmConfig::default()
            },
            "scheduler.quanta[1]",
        ),
        (
            TmConfig {
                default_queue: QueueConfig {
                    gmin_cells: 30,
                    ..QueueConfig::default()
                },
                ..TmConfig::default()
            },
            "queues",
        ),
    ];
    for (cfg, field) in cases {
        let e: ConfigError = TrafficManager::new(spec.clone(), cfg, 2).unwrap_err();
        assert_eq!(e.field, field, "{e}");
    }
    let mut bad = spec.clone();
    bad.queues_per_port = 129;
    assert_eq!(
        TrafficManager::new(bad, TmConfig::default(), 1)
            .unwrap_err()
            .field,
        "spec.queues_per_port"
    );
}

#[test]
fn config_reads_from_ron() {
    let text = r#"(
        admission: FlexibleBuffer,
        classes: [(alpha: 1.0, priority: 0), (alpha: 2.0, priority: 1)],
        queues: [(class: 1), (class: 0, gmin_cells: 2, ecn: Red(kmin_cells: 5, kmax_cells: 50, pmax: 0.1))],
        scheduler: SpOverDrr(levels: [1, 0], quanta: []),
        pfc: (quanta: 65535, groups: [(ports: [], priority: 3, xoff_cells: 400, hysteresis_cells: 64, headroom_cells: 200)]),
        seed: Some(7),
    )"#;
    let cfg: TmConfig = ron::from_str(text).unwrap();
    assert_eq!(cfg.admission, AdmissionPolicy::FlexibleBuffer);
    assert_eq!(cfg.queues[1].gmin_cells, 2);
    cfg.validate(&TmSpec::small(100_000, 80, 8), 4).unwrap();
    // Round trip.
    let back: TmConfig = ron::from_str(&ron::to_string(&cfg).unwrap()).unwrap();
    assert_eq!(back, cfg);
    // An empty config is the default.
    let empty: TmConfig = ron::from_str("()").unwrap();
    assert_eq!(empty, TmConfig::default());
}

/// The `tm: ( ... )` block of every built-in profile parses as a valid [`TmSpec`] and every
/// line of it carries a comment (its source or `assumption:`).
#[test]
fn profile_tm_blocks_parse_and_are_sourced() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../asic-model/profiles");
    let mut seen = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "ron") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let start = text.find("\n    tm: (").expect("a tm block") + "\n    tm: ".len();
        let mut depth = 0;
        let mut end = start;
        for (i, c) in text[start..].char_indices() {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        end = start + i + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        let block = &text[start..end];
        let spec: TmSpec =
            ron::from_str(block).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        spec.validate().unwrap();
        for line in block.lines().filter(|l| l.contains(':')) {
            assert!(
                line.contains("//"),
                "{}: no source for `{line}`",
                path.display()
            );
        }
        // The default configuration fits every chip.
        TrafficManager::new(spec, TmConfig::default(), 4).unwrap();
        seen += 1;
    }
    assert_eq!(seen, 4);
}

/// A TM with static limits of `limit` shared cells per queue (80-byte cells, 2 queues,
/// strict priority: queue 1 first) and what-if trimming to `bytes` into queue 1.
fn trimming_tm(limit: u32, bytes: u32) -> TrafficManager {
    let cfg = TmConfig {
        admission: AdmissionPolicy::Static,
        default_queue: QueueConfig {
            static_limit_cells: Some(limit),
            ..QueueConfig::default()
        },
        scheduler: SchedulerConfig::StrictPriority,
        trim: Some(TrimConfig {
            bytes,
            queue: 1,
            mark: None,
            return_to_sender: None,
        }),
        ..TmConfig::default()
    };
    TrafficManager::new(TmSpec::small(100_000, 80, 2), cfg, 1).unwrap()
}

/// The ideal trimming switch (Popa et al., §2; the digest's test 3.4.1 and 3.4.3): with the
/// data queue at its limit, a 1500-byte packet becomes an 80-byte header in the header queue
/// (nothing dropped, the data queue unchanged), counted on the data queue as trimmed with the
/// 1420 bytes it lost; the header leaves before the data queued earlier. When the header
/// queue is at its limit too, the packet is dropped for the header queue's reason, counted
/// there.
#[test]
fn trimming_cuts_a_refused_packet_into_the_header_queue() {
    // 1500 bytes = 19 cells: the data queue holds 10 packets (190 cells), not 11.
    let mut tm = trimming_tm(190, 80);
    for h in 0..10 {
        let a = tm.enqueue(req(0, 0, 1500, h)).unwrap();
        assert_eq!(a.trimmed, None);
    }
    let depth = tm.depth(0, 0);
    let a = tm.enqueue(req(0, 0, 1500, 10)).unwrap();
    let t = a.trimmed.expect("trimmed");
    assert_eq!((t.queue, t.bytes, a.cells), (1, 80, 1));
    assert_eq!(tm.depth(0, 0), depth, "the data queue is unchanged");
    let (data, header) = (tm.queue_counters(0, 0), tm.queue_counters(0, 1));
    assert_eq!((data.trimmed_pkts, data.trimmed_bytes), (1, 1420));
    assert_eq!((header.enq_pkts, header.enq_bytes), (1, 80));
    assert_eq!(data.drops.iter().sum::<u64>(), 0, "not a drop");
    assert_eq!(tm.counters().trimmed_pkts, 1);
    assert_eq!(tm.trims().collect::<Vec<_>>(), vec![(0, 0, 1, 1420)]);
    // The header overtakes the ten data packets.
    let d = tm.dequeue(0, 0).unwrap();
    assert_eq!((d.handle, d.queue, d.bytes), (10, 1, 80));
    // Fill the header queue to its limit (190 cells of 80-byte headers), then one more.
    for h in 11..11 + 190 {
        assert!(tm.enqueue(req(0, 0, 1500, h)).unwrap().trimmed.is_some());
    }
    assert_eq!(
        tm.enqueue(req(0, 0, 1500, 500)).unwrap_err(),
        Refusal::QueueLimit
    );
    assert_eq!(
        tm.queue_counters(0, 1).drops[Refusal::QueueLimit as usize],
        1
    );
    assert_eq!(tm.queue_counters(0, 0).trimmed_pkts, 191);
    // A packet asking for the header queue itself is refused as it is, not trimmed again.
    assert_eq!(
        tm.enqueue(req(0, 1, 1500, 501)).unwrap_err(),
        Refusal::QueueLimit
    );
    tm.check_invariants().unwrap();
}

/// The digest's test 3.4.2, NDP's return-to-sender: a header its header queue refuses goes
/// to the header queue of the port the packet came in on, counted as returned on the data
/// queue that refused the packet; if that header queue is full too, it is dropped for that
/// queue's reason, counted there.
#[test]
fn a_header_the_header_queue_refuses_returns_to_its_sender() {
    let mut tm = trimming_tm(190, 80);
    let mut cfg = tm.config().clone();
    cfg.trim.as_mut().unwrap().return_to_sender = Some(ReturnToSender { ethernet_offset: 0 });
    tm = TrafficManager::new(TmSpec::small(100_000, 80, 2), cfg, 2).unwrap();
    // From port 1 to port 0: ten data packets fill the data queue, 190 headers the header
    // queue.
    let from_1 = |h| EnqueueRequest {
        ingress_port: 1,
        ..req(0, 0, 1500, h)
    };
    for h in 0..10 + 190 {
        let a = tm.enqueue(from_1(h)).unwrap();
        assert_eq!(a.trimmed.and_then(|t| t.returned_to), None);
    }
    let a = tm.enqueue(from_1(200)).unwrap();
    let t = a.trimmed.expect("trimmed");
    assert_eq!(
        (t.queue, t.bytes, t.returned_to.map(|r| r.0)),
        (1, 80, Some(1))
    );
    assert_eq!(tm.depth(1, 1), (1, 1), "queued for the port it came in on");
    let data = tm.queue_counters(0, 0);
    assert_eq!((data.trimmed_pkts, data.returned_pkts), (191, 1));
    assert_eq!(tm.counters().returned_pkts, 1);
    assert_eq!(tm.queue_counters(0, 1).drops.iter().sum::<u64>(), 0);
    // Port 1's header queue full as well: the header is dropped there.
    for h in 201..201 + 189 {
        assert!(tm.enqueue(from_1(h)).unwrap().trimmed.is_some());
    }
    assert_eq!(tm.depth(1, 1), (190, 190));
    assert_eq!(tm.enqueue(from_1(500)).unwrap_err(), Refusal::QueueLimit);
    assert_eq!(
        tm.queue_counters(1, 1).drops[Refusal::QueueLimit as usize],
        1
    );
    tm.check_invariants().unwrap();
}

#[test]
fn trimming_is_off_by_default_and_its_configuration_is_checked() {
    let mut tm = tm_with(SchedulerConfig::StrictPriority, 2);
    assert_eq!(tm.config().trim, None);
    let mut h = 0;
    while tm.enqueue(req(0, 0, 1500, h)).is_ok() {
        h += 1;
    }
    assert_eq!(tm.counters().trimmed_pkts, 0);
    let bad = |trim: TrimConfig| {
        let cfg = TmConfig {
            trim: Some(trim),
            ..TmConfig::default()
        };
        TrafficManager::new(TmSpec::small(1000, 80, 2), cfg, 1)
            .unwrap_err()
            .field
    };
    let ok = TrimConfig {
        bytes: 80,
        queue: 1,
        mark: Some(TrimMark {
            offset: 42,
            mask: 0x10,
        }),
        return_to_sender: None,
    };
    let cfg = TmConfig {
        trim: Some(ok),
        ..TmConfig::default()
    };
    TrafficManager::new(TmSpec::small(1000, 80, 2), cfg, 1).unwrap();
    assert_eq!(bad(TrimConfig { bytes: 0, ..ok }), "trim.bytes");
    assert_eq!(bad(TrimConfig { queue: 2, ..ok }), "trim.queue");
    let mark = |offset, mask| Some(TrimMark { offset, mask });
    assert_eq!(
        bad(TrimConfig {
            mark: mark(80, 1),
            ..ok
        }),
        "trim.mark.offset"
    );
    assert_eq!(
        bad(TrimConfig {
            mark: mark(42, 0),
            ..ok
        }),
        "trim.mark.mask"
    );
    assert_eq!(
        bad(TrimConfig {
            return_to_sender: Some(ReturnToSender {
                ethernet_offset: 50
            }),
            ..ok
        }),
        "trim.return_to_sender.ethernet_offset"
    );
}
