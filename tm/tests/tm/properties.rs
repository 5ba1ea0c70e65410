//! Property tests: conservation of cells and no push-out, over random traffic and
//! configurations.

use proptest::prelude::*;
use std::collections::VecDeque;
use tm::config::{
    AdmissionPolicy, ClassConfig, ColorConfig, EcnConfig, PfcConfig, PfcGroup, QueueConfig,
    SchedulerConfig, TmConfig,
};
use tm::spec::TmSpec;
use tm::{EnqueueRequest, TrafficManager};

#[derive(Clone, Debug)]
enum Op {
    Enq {
        port: u16,
        queue: u16,
        ingress: u16,
        prio: u8,
        color: u8,
        bytes: u32,
    },
    Deq {
        port: u16,
    },
    Pause {
        port: u16,
        prio: u8,
        for_ps: u64,
    },
    QueuePause {
        port: u16,
        queue: u16,
        paused: bool,
    },
    Tick(u64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0u16..3, 0u16..4, 0u16..3, 0u8..8, 0u8..4, 1u32..1600).prop_map(
            |(port, queue, ingress, prio, color, bytes)| Op::Enq { port, queue, ingress, prio, color, bytes }
        ),
        4 => (0u16..3).prop_map(|port| Op::Deq { port }),
        1 => (0u16..3, 0u8..8, 0u64..5_000).prop_map(|(port, prio, for_ps)| Op::Pause { port, prio, for_ps }),
        1 => (0u16..3, 0u16..4, any::<bool>()).prop_map(|(port, queue, paused)| Op::QueuePause { port, queue, paused }),
        1 => (1u64..3_000).prop_map(Op::Tick),
    ]
}

fn config() -> impl Strategy<Value = TmConfig> {
    (
        prop_oneof![
            Just(AdmissionPolicy::Static),
            Just(AdmissionPolicy::DynamicThreshold),
            Just(AdmissionPolicy::FlexibleBuffer),
            Just(AdmissionPolicy::FlexibleBufferSingleQueue),
        ],
        proptest::collection::vec((1u32..=64, 0u8..2), 1..=3),
        proptest::collection::vec((0u32..6, 0u8..2, proptest::option::of(0u32..40), 0u8..3), 4),
        any::<bool>(),
        0u8..4,
        any::<u64>(),
    )
        .prop_map(|(admission, classes, queues, pfc_on, sched, seed)| {
            let n_classes = classes.len() as u8;
            TmConfig {
                admission,
                classes: classes
                    .into_iter()
                    .map(|(a, p)| ClassConfig {
                        alpha: a as f64 / 8.0,
                        priority: p,
                    })
                    .collect(),
                queues: queues
                    .into_iter()
                    .map(|(gmin, pool, limit, ecn)| QueueConfig {
                        class: (ecn + pool) % n_classes,
                        pool,
                        gmin_cells: gmin,
                        static_limit_cells: limit,
                        pfc_priority: None,
                        ecn: match ecn {
                            0 => EcnConfig::Off,
                            1 => EcnConfig::Threshold { k_cells: 20 },
                            _ => EcnConfig::Red {
                                kmin_cells: 5,
                                kmax_cells: 60,
                                pmax: 0.5,
                            },
                        },
                    })
                    .collect(),
                pool_cells: vec![150, 100],
                scheduler: match sched {
                    0 => SchedulerConfig::StrictPriority,
                    1 => SchedulerConfig::Drr {
                        quanta: vec![1500, 3000, 300, 9000],
                    },
                    2 => SchedulerConfig::Wrr {
                        weights: vec![1, 2, 3, 4],
                    },
                    _ => SchedulerConfig::SpOverDrr {
                        levels: vec![1, 0, 0, 1],
                        quanta: vec![2000, 1000, 500, 1500],
                    },
                },
                pfc: if pfc_on {
                    PfcConfig {
                        quanta: 100,
                        groups: vec![
                            PfcGroup {
                                ports: vec![0, 2],
                                priority: 3,
                                xoff_cells: 24,
                                hysteresis_cells: 8,
                                headroom_cells: 30,
                            },
                            PfcGroup {
                                ports: vec![],
                                priority: 5,
                                xoff_cells: 40,
                                hysteresis_cells: 16,
                                headroom_cells: 10,
                            },
                        ],
                    }
                } else {
                    PfcConfig::default()
                },
                seed: Some(seed),
                color: match admission {
                    AdmissionPolicy::FlexibleBufferSingleQueue => ColorConfig {
                        classes: vec![0, 1 % n_classes, n_classes - 1],
                        ..ColorConfig::default()
                    },
                    AdmissionPolicy::DynamicThreshold | AdmissionPolicy::Static => ColorConfig {
                        yellow_eighths: 1 + (seed % 8) as u8,
                        red_eighths: 1 + (seed / 8 % 8) as u8,
                        classes: Vec::new(),
                    },
                    _ => ColorConfig::default(),
                },
                ..TmConfig::default()
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Every cell allocated is freed exactly once; the running counters always equal the
    /// recomputation from the descriptors; a queued packet leaves only by dequeue, in FIFO order
    /// per queue (no push-out, whatever thresholds do).
    #[test]
    fn conservation_and_no_push_out(cfg in config(), ops in proptest::collection::vec(op(), 1..400)) {
        let spec = TmSpec::small(400, 80, 4);
        let mut tm = TrafficManager::new(spec, cfg, 3).unwrap();
        // Shadow: what each queue must hold.
        let mut shadow: Vec<VecDeque<u32>> = vec![VecDeque::new(); 12];
        let mut now = 0u64;
        let mut handle = 0u32;
        let mut admitted_cells = 0u64;
        let mut freed_cells = 0u64;
        for o in ops {
            match o {
                Op::Enq { port, queue, ingress, prio, color, bytes } => {
                    handle += 1;
                    let r = tm.enqueue(EnqueueRequest {
                        port, queue, ingress_port: ingress, priority: prio,
                        color: color % 4,
                        bytes, handle, now_ps: now,
                    });
                    if let Ok(a) = r {
                        prop_assert_eq!(a.cells, bytes.div_ceil(80));
                        admitted_cells += a.cells as u64;
                        shadow[port as usize * 4 + queue as usize].push_back(handle);
                    }
                }
                Op::Deq { port } => {
                    if let Some(d) = tm.dequeue(port, now) {
                        let s = &mut shadow[port as usize * 4 + d.queue as usize];
                        prop_assert_eq!(s.pop_front(), Some(d.handle));
                        prop_assert!(!tm.is_paused(port, d.queue, now));
                        freed_cells += d.cells as u64;
                        prop_assert!(d.enq_time_ps <= now);
                    } else {
                        // Nothing eligible: every non-empty queue is paused.
                        for q in 0..4u16 {
                            if !shadow[port as usize * 4 + q as usize].is_empty() {
                                prop_assert!(tm.is_paused(port, q, now));
                            }
                        }
                    }
                }
                Op::Pause { port, prio, for_ps } => tm.pause(port, prio, now + for_ps, now),
                Op::QueuePause { port, queue, paused } => tm.set_queue_paused(port, queue, paused, now),
                Op::Tick(dt) => now += dt,
            }
            prop_assert_eq!(tm.check_invariants(), Ok(()));
            for p in 0..3u16 {
                for q in 0..4u16 {
                    let held: Vec<u32> = tm.queue_handles(p, q).collect();
                    let want: Vec<u32> = shadow[p as usize * 4 + q as usize].iter().copied().collect();
                    prop_assert_eq!(held, want);
                }
            }
        }
        // Release every pause and drain: everything comes back.
        for p in 0..3u16 {
            for prio in 0..8 { tm.resume(p, prio, now); }
            for q in 0..4 { tm.set_queue_paused(p, q, false, now); }
            while let Some(d) = tm.dequeue(p, now) {
                freed_cells += d.cells as u64;
                prop_assert_eq!(shadow[p as usize * 4 + d.queue as usize].pop_front(), Some(d.handle));
            }
        }
        prop_assert!(shadow.iter().all(|s| s.is_empty()));
        prop_assert_eq!(tm.used_cells(), 0);
        prop_assert_eq!(admitted_cells, freed_cells);
        prop_assert_eq!(tm.counters().cells_allocated, admitted_cells);
        prop_assert_eq!(tm.counters().cells_freed, freed_cells);
        prop_assert_eq!(tm.pool(0).1 + tm.pool(1).1 + tm.private_used() + tm.headroom_used_total(), 0);
        for port in 0..3u16 {
            for prio in 0..8 {
                prop_assert_eq!(tm.pg_cells(port, prio), (0, 0));
                prop_assert!(!tm.is_xoff(port, prio));
            }
        }
    }

    /// Same inputs, same outputs (RED draws included).
    #[test]
    fn deterministic(cfg in config(), ops in proptest::collection::vec(op(), 1..200)) {
        let run = |cfg: TmConfig| {
            let mut tm = TrafficManager::new(TmSpec::small(400, 80, 4), cfg, 3).unwrap();
            let mut log = Vec::new();
            let mut now = 0;
            for (h, o) in ops.iter().enumerate() {
                match *o {
                    Op::Enq { port, queue, ingress, prio, bytes, .. } => {
                        log.push(format!("{:?}", tm.enqueue(EnqueueRequest {
                            port, queue, ingress_port: ingress, priority: prio, color: 0,
                            bytes, handle: h as u32, now_ps: now })));
                    }
                    Op::Deq { port } => log.push(format!("{:?}", tm.dequeue(port, now))),
                    Op::Pause { port, prio, for_ps } => tm.pause(port, prio, now + for_ps, now),
                    Op::QueuePause { port, queue, paused } => tm.set_queue_paused(port, queue, paused, now),
                    Op::Tick(dt) => now += dt,
                }
                log.extend(tm.drain_pfc_events().map(|e| format!("{e:?}")));
            }
            log
        };
        prop_assert_eq!(run(cfg.clone()), run(cfg));
    }
}
