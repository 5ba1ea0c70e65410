//! Acceptance tests of issue #5: expectations are computed from the papers' formulas.

use super::req;
use tm::config::{
    AdmissionPolicy, ClassConfig, ColorConfig, PfcConfig, PfcGroup, QueueConfig, TmConfig,
};
use tm::experiments::{self, fb_bounds, DtParams, FbParams, PfcParams};
use tm::spec::TmSpec;
use tm::{pfc, EnqueueRequest, Refusal, TrafficManager};

// ---------------------------------------------------------------- DT

#[test]
fn dt_one_saturated_queue_converges_to_alpha_b_over_one_plus_alpha_within_one_packet() {
    for cells in [60u32, 1200] {
        let r = experiments::dt_convergence(&DtParams {
            cells,
            alphas: vec![0.5, 1.0, 2.0, 8.0],
            queues: vec![1],
            pkt_cells: vec![1, 19],
        });
        for row in &r.rows {
            let expected = row.alpha * cells as f64 / (1.0 + row.alpha);
            assert_eq!(row.expected, expected);
            let pkt = row.pkt_cells as f64;
            assert!(
                (row.min as f64) > expected - pkt && (row.max as f64) < expected + pkt,
                "B={cells} {row:?}"
            );
            assert!(row.settled_slot.is_some(), "{row:?}");
        }
    }
}

#[test]
fn dt_n_equal_saturated_queues_each_converge_to_alpha_b_over_one_plus_n_alpha() {
    let cells = 1200u32;
    let r = experiments::dt_convergence(&DtParams {
        cells,
        alphas: vec![0.5, 1.0, 2.0, 8.0],
        queues: vec![2, 3, 4, 8],
        pkt_cells: vec![1, 19],
    });
    for row in &r.rows {
        let expected = row.alpha * cells as f64 / (1.0 + row.n as f64 * row.alpha);
        let pkt = row.pkt_cells as f64;
        assert!(
            (row.min as f64) > expected - pkt && (row.max as f64) < expected + pkt,
            "{row:?}"
        );
    }
}

#[test]
fn dt_single_queue_exact_stop_point() {
    // With 1-cell packets, a lone DT queue stops at the first depth q with q ≥ α(B − q).
    for (alpha, b) in [(0.5f64, 60u32), (1.0, 60), (2.0, 60), (8.0, 60), (1.0, 61)] {
        let cfg = TmConfig {
            classes: vec![ClassConfig { alpha, priority: 0 }],
            ..TmConfig::default()
        };
        let mut tm = TrafficManager::new(TmSpec::small(b, 80, 1), cfg, 1).unwrap();
        let mut n = 0;
        while tm.enqueue(req(0, 0, 80, n)).is_ok() {
            n += 1;
        }
        let q = tm.depth(0, 0).0 as f64;
        let fixed = alpha * b as f64 / (1.0 + alpha);
        assert_eq!(q, fixed.ceil(), "alpha {alpha} B {b}");
        assert_eq!(tm.drops(Refusal::DynamicThreshold), 1);
    }
}

#[test]
fn dt_mixed_queues_match_fig_4a() {
    // FB paper Fig. 4a: high (α 2) and three lows (α 1) on separate ports, B = 60:
    // free = B/(1+2+3) = 10, high 20, each low 10.
    let p = FbParams::default();
    let row = experiments::fb_run(&p, AdmissionPolicy::DynamicThreshold, 3);
    let free = 60.0 / (1.0 + 2.0 + 3.0 * 1.0);
    assert_eq!(row.free as f64, free);
    assert_eq!(row.high as f64, 2.0 * free);
    assert!(row.lows.iter().all(|&l| l as f64 == free));
}

// ---------------------------------------------------------------- FB

#[test]
fn fb_one_high_three_lows_settle_at_30_5_5_5_with_15_free() {
    let p = FbParams::default();
    let row = experiments::fb_run(&p, AdmissionPolicy::FlexibleBuffer, 3);
    let (ah, al, b) = (2.0, 1.0, 60.0);
    let free = b / (1.0 + ah + al); // Lemma 2 with Σω = αH + αL
    assert_eq!(free, 15.0);
    assert_eq!(row.free as f64, free);
    assert_eq!(row.high as f64, ah * free);
    for &l in &row.lows {
        assert_eq!(l as f64, al * free / 3.0);
    }
    let bound = b * (al + ah) / (1.0 + al + ah);
    assert!(row.max_total_settled as f64 <= bound, "{row:?}");
}

#[test]
fn fb_low_aggregate_stays_15_as_low_queues_grow() {
    let p = FbParams::default();
    let (ah, al, b) = (2.0f64, 1.0f64, 60.0f64);
    let free = b / (1.0 + ah + al);
    let bound = b * (al + ah) / (1.0 + al + ah);
    // Where 15/N is a whole number of cells the steady state is exact.
    for n in [1usize, 3, 5, 15] {
        let row = experiments::fb_run(&p, AdmissionPolicy::FlexibleBuffer, n);
        assert_eq!(row.lows.iter().sum::<u32>() as f64, al * free, "{row:?}");
        assert_eq!(row.high as f64, ah * free, "{row:?}");
        assert_eq!(row.free as f64, free, "{row:?}");
        assert!(row.max_total_settled as f64 <= bound, "{row:?}");
    }
    // Otherwise each low queue stops at the first whole cell at or above its share: within
    // one packet (one cell) per queue.
    for n in [2usize, 4, 6, 10, 20] {
        let row = experiments::fb_run(&p, AdmissionPolicy::FlexibleBuffer, n);
        let share = al * free / n as f64;
        for &l in &row.lows {
            assert!((l as f64 - share).abs() < 1.0, "n {n}: {row:?}");
        }
        let agg = row.lows.iter().sum::<u32>() as f64;
        assert!((agg - al * free).abs() < n as f64, "n {n}: {row:?}");
        assert!(
            row.max_total_settled as f64 <= bound + n as f64,
            "n {n}: {row:?}"
        );
    }
    // Under DT the lows' aggregate grows with N (Fig. 3): the contrast FB removes.
    let dt3 = experiments::fb_run(&p, AdmissionPolicy::DynamicThreshold, 3);
    let dt15 = experiments::fb_run(&p, AdmissionPolicy::DynamicThreshold, 15);
    assert!(dt15.lows.iter().sum::<u32>() > dt3.lows.iter().sum::<u32>());
}

#[test]
fn fb_total_occupancy_bound_holds_in_steady_state_for_random_mixes() {
    // Theorem 1: Q ≤ B(αL+αH)/(1+αL+αH) in steady state, for any numbers of congested queues.
    for (ah, al) in [(2.0, 1.0), (4.0, 0.5), (8.0, 2.0), (1.0, 1.0)] {
        for n in [1usize, 2, 3, 5] {
            let p = FbParams {
                cells: 600,
                alpha_high: ah,
                alpha_low: al,
                lows: vec![],
                slots: 4000,
            };
            let row = experiments::fb_run(&p, AdmissionPolicy::FlexibleBuffer, n);
            let bound = 600.0 * (al + ah) / (1.0 + al + ah);
            // One cell of discretisation per congested queue.
            assert!(
                row.max_total_settled as f64 <= bound + (n + 1) as f64,
                "aH {ah} aL {al} n {n}: {row:?}"
            );
        }
    }
}

#[test]
fn fb_gamma_five_queues_on_one_port_get_less_than_on_five_ports() {
    let p = FbParams::default();
    let (one, _) = experiments::fb_gamma_depths(&p, true);
    let (five, _) = experiments::fb_gamma_depths(&p, false);
    // Eq. 4: γ = 1/5 → Σω = 1/5, free = 60/1.2 = 50, each T = (1/5)(1/5)·50 = 2.
    let t_one = 1.0 * 0.2 / 5.0 * (60.0 / 1.2);
    // γ = 1 → Σω = 1, free = 30, each 6.
    let t_five = 1.0 / 5.0 * (60.0 / 2.0);
    for &d in &one {
        assert!((d as f64 - t_one).abs() <= 1.0, "{one:?}");
    }
    for &d in &five {
        assert_eq!(d as f64, t_five, "{five:?}");
    }
}

#[test]
fn fb_single_queue_variant_applies_per_class_thresholds_in_one_queue() {
    // One queue per port; green packets are of class α = 20, yellow and red of α = 0.5; the
    // queue is between their thresholds.
    let cfg = TmConfig {
        admission: AdmissionPolicy::FlexibleBufferSingleQueue,
        classes: vec![
            ClassConfig {
                alpha: 20.0,
                priority: 1,
            },
            ClassConfig {
                alpha: 0.5,
                priority: 0,
            },
        ],
        color: ColorConfig {
            classes: vec![0, 1, 1],
            ..ColorConfig::default()
        },
        ..TmConfig::default()
    };
    let mut tm = TrafficManager::new(TmSpec::small(100, 80, 1), cfg, 1).unwrap();
    // Fill with green packets to 40 cells: N = 1, B − Q = 60; T(0.5) = 30, T(20) = 1200.
    for h in 0..40 {
        tm.enqueue(req(0, 0, 80, h)).unwrap();
    }
    let green = req(0, 0, 80, 100);
    let mut yellow = req(0, 0, 80, 101);
    yellow.color = 1;
    let mut red = req(0, 0, 80, 102);
    red.color = 3;
    assert!(tm.enqueue(green).is_ok());
    assert_eq!(tm.enqueue(yellow), Err(Refusal::FlexibleThreshold));
    assert_eq!(tm.enqueue(red), Err(Refusal::FlexibleThreshold));
}

/// Tofino's colour drop limits under DT: a yellow packet is admitted against half the
/// threshold, a red one against a quarter, a green one against all of it.
#[test]
fn dt_colour_drop_limits_scale_the_threshold() {
    let cfg = TmConfig {
        classes: vec![ClassConfig {
            alpha: 1.0,
            priority: 0,
        }],
        color: ColorConfig {
            yellow_eighths: 4,
            red_eighths: 2,
            classes: Vec::new(),
        },
        ..TmConfig::default()
    };
    // α = 1, B = 100: after 20 cells, T = 80; yellow 40, red 20.
    let mut tm = TrafficManager::new(TmSpec::small(100, 80, 1), cfg, 1).unwrap();
    let mut h = 0;
    let mut offer = |tm: &mut TrafficManager, color: u8| {
        h += 1;
        let mut r = req(0, 0, 80, h);
        r.color = color;
        tm.enqueue(r)
    };
    for _ in 0..19 {
        offer(&mut tm, 0).unwrap();
    }
    // 19 queued: T = 81; red's 20.25 still above 19.
    assert!(offer(&mut tm, 3).is_ok());
    // 20 queued, B − Q = 80: red's limit is 20, reached.
    assert_eq!(offer(&mut tm, 3), Err(Refusal::DynamicThreshold));
    assert!(offer(&mut tm, 1).is_ok());
    assert!(offer(&mut tm, 2).is_err(), "2 reads as red");
    // Yellow fills to its limit: q < (B − q)/2 until q = 34.
    while offer(&mut tm, 1).is_ok() {}
    assert_eq!(tm.depth(0, 0).0, 34);
    assert!(offer(&mut tm, 0).is_ok(), "green still below alpha (B - Q)");
}

/// Under Static a red packet with a limit of half is refused at half the static limit.
#[test]
fn static_colour_drop_limit_halves_the_limit() {
    let cfg = TmConfig {
        admission: AdmissionPolicy::Static,
        default_queue: QueueConfig {
            static_limit_cells: Some(10),
            ..QueueConfig::default()
        },
        color: ColorConfig {
            red_eighths: 4,
            ..ColorConfig::default()
        },
        ..TmConfig::default()
    };
    let mut tm = TrafficManager::new(TmSpec::small(100, 80, 1), cfg, 1).unwrap();
    let offer = |tm: &mut TrafficManager, h: u32, color: u8| {
        let mut r = req(0, 0, 80, h);
        r.color = color;
        tm.enqueue(r)
    };
    for h in 0..5 {
        offer(&mut tm, h, 3).unwrap();
    }
    assert_eq!(offer(&mut tm, 5, 3), Err(Refusal::QueueLimit));
    for h in 6..11 {
        offer(&mut tm, h, 0).unwrap();
    }
    assert_eq!(offer(&mut tm, 11, 0), Err(Refusal::QueueLimit));
}

/// A queue's DT α set at run time changes that queue's threshold only; FB's γ and N_p are
/// read as the scheduler and the buffer give them; bad settings are refused by name.
#[test]
fn run_time_alpha_and_fb_state() {
    let cfg = TmConfig {
        classes: vec![ClassConfig {
            alpha: 1.0,
            priority: 0,
        }],
        scheduler: tm::config::SchedulerConfig::Drr { quanta: Vec::new() },
        ..TmConfig::default()
    };
    let mut tm = TrafficManager::new(TmSpec::small(100, 80, 2), cfg, 2).unwrap();
    assert_eq!(tm.alpha(0, 0), Some(1.0));
    tm.set_alpha(0, 0, 0.25).unwrap();
    assert_eq!((tm.alpha(0, 0), tm.alpha(1, 0)), (Some(0.25), Some(1.0)));
    // α = 0.25 of B − Q: port 0 queue 0 stops at 20 (20 < 0.25 · 80 fails); port 1 goes on.
    let mut h = 0;
    while tm.enqueue(req(0, 0, 80, h)).is_ok() {
        h += 1;
    }
    assert_eq!(tm.depth(0, 0).0, 20);
    assert!(tm.enqueue(req(1, 0, 80, 1000)).is_ok());
    // Two non-empty queues of priority 0; γ of port 0's queue 1, empty, counts itself: 1/2.
    assert_eq!(tm.congested_queues(0), 2);
    let share = |q| tm.service_share(0, q).map(|(n, d)| n as f64 / d as f64);
    assert_eq!((share(1), share(0)), (Some(0.5), Some(1.0)));
    assert_eq!(tm.service_share(2, 0), None);
    assert!(tm.set_alpha(0, 0, 0.0).unwrap_err().field.contains("alpha"));
    assert!(tm.set_alpha(5, 0, 1.0).is_err());
}

/// A colour configuration that would not be applied, or names a class that does not
/// exist, is refused with its field.
#[test]
fn colour_configuration_errors_name_the_field() {
    let bad = |color: ColorConfig, admission: AdmissionPolicy| {
        let cfg = TmConfig {
            admission,
            color,
            ..TmConfig::default()
        };
        cfg.validate(&TmSpec::small(100, 80, 1), 1)
            .unwrap_err()
            .field
    };
    let fb = AdmissionPolicy::FlexibleBuffer;
    let sq = AdmissionPolicy::FlexibleBufferSingleQueue;
    let dt = AdmissionPolicy::DynamicThreshold;
    let limit = |y| ColorConfig {
        yellow_eighths: y,
        ..ColorConfig::default()
    };
    let classes = |c: Vec<u8>| ColorConfig {
        classes: c,
        ..ColorConfig::default()
    };
    assert_eq!(bad(limit(0), dt), "color.yellow_eighths");
    assert_eq!(bad(limit(9), dt), "color.yellow_eighths");
    assert_eq!(bad(limit(4), fb), "color.yellow_eighths");
    assert_eq!(bad(classes(vec![0, 0, 0]), dt), "color.classes");
    assert_eq!(bad(classes(vec![0, 0]), sq), "color.classes");
    assert_eq!(bad(classes(vec![0, 0, 7]), sq), "color.classes[2]");
}

/// Theorem 3: the α_L it gives holds the low priority at its guaranteed share (within a
/// packet per low queue), for 1 and 4 low queues, at 20 % and 10 % of B.
#[test]
fn fb_theorem3_alpha_guarantees_the_low_share() {
    let rows = fb_bounds::low_guarantee();
    assert_eq!(rows.len(), 4);
    for r in rows {
        let guaranteed = r.bp * r.cells as f64;
        let low = r.low_cells as f64;
        assert!(
            low >= guaranteed - 1.0 && low <= guaranteed + r.n_low as f64,
            "B_p {} n_low {}: low {low} against {guaranteed}",
            r.bp,
            r.n_low
        );
    }
}

/// Eq. 8: the burst gets through up to the α_L of the formula with α_H's term (within 1/512)
/// and is refused just above it; the unbounded form, Eq. 8 itself, is 0.8 at the paper's
/// example, and the model reaches it as α_H grows.
#[test]
fn fb_eq8_burst_passes_below_the_bound_and_drops_above() {
    let rows = fb_bounds::burst_guarantee(&fb_bounds::BurstParams::default());
    assert_eq!(rows.len(), 2);
    for r in &rows {
        assert!((r.eq8 - 0.8).abs() < 1e-9);
        let m = r.measured.expect("a burst passes at some alpha_L");
        assert!(
            (m - r.eq8_finite).abs() <= 2.0 / 1024.0,
            "alpha_H {}: measured {m}, formula {}",
            r.alpha_high,
            r.eq8_finite
        );
        assert_eq!(r.at_measured.dropped, 0);
        assert!(r.above.dropped > 0);
        assert_eq!(r.at_measured.offered, r.above.offered);
    }
    assert!((rows[1].measured.unwrap() - 0.8).abs() < 2.0 / 1024.0);
    assert!(
        rows[0].measured.unwrap() < 0.75,
        "a finite alpha_H costs the burst room"
    );
}

/// Theorem 1: under FB at α_L = 0.5, α_H = 20 the settled buffer stays within 95.3 % of B
/// (plus a packet) for any number of low queues; DT with the same α does not.
#[test]
fn fb_theorem1_bound_holds_and_dt_exceeds_it() {
    let rows = fb_bounds::occupancy_bound_run();
    let within =
        |r: &fb_bounds::OccupancyRow| r.max_settled as f64 <= r.bound * r.cells as f64 + 1.0;
    assert!((rows[0].bound - 20.5 / 21.5).abs() < 1e-12);
    for r in rows.iter().filter(|r| r.policy == "fb") {
        assert!(within(r), "fb n_low {}: {}", r.n_low, r.max_settled);
    }
    let dt32 = rows
        .iter()
        .find(|r| r.policy == "dt" && r.n_low == 32)
        .unwrap();
    assert!(!within(dt32), "DT with 32 low queues: {}", dt32.max_settled);
}

#[test]
fn no_push_out_when_thresholds_fall() {
    // A DT queue fills alone to αB/(1+α); a second queue then lowers its threshold. Nothing
    // queued leaves except by dequeue: the first queue is over its threshold (transient).
    let mut tm = TrafficManager::new(
        TmSpec::small(60, 80, 1),
        TmConfig {
            classes: vec![ClassConfig {
                alpha: 1.0,
                priority: 0,
            }],
            ..TmConfig::default()
        },
        2,
    )
    .unwrap();
    let mut h = 0;
    while tm.enqueue(req(0, 0, 80, h)).is_ok() {
        h += 1;
    }
    let before: Vec<u32> = tm.queue_handles(0, 0).collect();
    assert_eq!(before.len(), 30);
    while tm.enqueue(req(1, 0, 80, h)).is_ok() {
        h += 1;
    }
    let after: Vec<u32> = tm.queue_handles(0, 0).collect();
    assert_eq!(before, after);
    // Q = 30 + q1 with q1 < 60 − 30 − q1: q1 = 15; queue 0 (30) is above T = 15.
    assert_eq!(tm.depth(1, 0).0, 15);
    assert!(tm.enqueue(req(0, 0, 80, 999)).is_err());
}

// ---------------------------------------------------------------- PFC

fn pfc_tm(xoff: u32, hyst: u32, headroom: u32) -> TrafficManager {
    let cfg = TmConfig {
        pfc: PfcConfig {
            quanta: 1000,
            groups: vec![PfcGroup {
                ports: vec![0],
                priority: 3,
                xoff_cells: xoff,
                hysteresis_cells: hyst,
                headroom_cells: headroom,
            }],
        },
        ..TmConfig::default()
    };
    TrafficManager::new(TmSpec::small(1000, 80, 8), cfg, 2).unwrap()
}

fn lossless(handle: u32, now: u64) -> EnqueueRequest {
    EnqueueRequest {
        port: 1,
        queue: 3,
        ingress_port: 0,
        priority: 3,
        color: 0,
        bytes: 80,
        handle,
        now_ps: now,
    }
}

#[test]
fn pfc_exactly_one_xoff_crossing_and_one_xon_below_xon() {
    let (xoff, hyst) = (40u32, 16u32);
    let xon = xoff - hyst;
    let mut tm = pfc_tm(xoff, hyst, 20);
    let mut events = Vec::new();
    // Fill to xoff: no event (XOFF needs the count to exceed xoff).
    for h in 0..xoff {
        tm.enqueue(lossless(h, h as u64)).unwrap();
        events.extend(tm.drain_pfc_events());
    }
    assert!(events.is_empty());
    // Crossing: one XOFF. More packets (into headroom): no more.
    for h in xoff..xoff + 10 {
        let a = tm.enqueue(lossless(h, h as u64)).unwrap();
        assert_eq!(a.headroom, h > xoff);
        events.extend(tm.drain_pfc_events());
    }
    assert_eq!(events.len(), 1);
    assert!(events[0].xoff && events[0].ingress_port == 0 && events[0].priority == 3);
    assert_eq!(events[0].time_ps, xoff as u64);
    assert!(tm.is_xoff(0, 3));
    assert_eq!(tm.pg_cells(0, 3), (xoff + 10, 9));
    events.clear();
    // Drain down to xon: still paused (XON needs the count below xon).
    let mut now = 1000;
    while tm.pg_cells(0, 3).0 > xon {
        tm.dequeue(1, now).unwrap();
        now += 1;
        events.extend(tm.drain_pfc_events());
    }
    assert!(events.is_empty());
    assert!(tm.is_xoff(0, 3));
    tm.dequeue(1, now).unwrap();
    events.extend(tm.drain_pfc_events());
    assert_eq!(events.len(), 1);
    assert!(!events[0].xoff);
    assert_eq!(tm.pg_cells(0, 3).0, xon - 1);
    // Draining further: no event; refilling to just xoff: none; crossing again: one XOFF.
    while tm.dequeue(1, now).is_some() {
        now += 1;
    }
    let mut h = 1000;
    while tm.pg_cells(0, 3).0 <= xoff {
        tm.enqueue(lossless(h, now)).unwrap();
        h += 1;
    }
    let again: Vec<_> = tm.drain_pfc_events().collect();
    assert_eq!(again.len(), 1);
    assert!(again[0].xoff);
    let c = tm.pg_counters(0, 3);
    assert_eq!((c.xoff, c.xon), (2, 1));
}

#[test]
fn pfc_headroom_is_reserved_and_exhaustion_drops() {
    let mut tm = pfc_tm(10, 8, 5);
    // Reserved: 5 cells of headroom out of the 1000; the pool has 995.
    assert_eq!(tm.pool(0), (995, 0));
    for h in 0..11 {
        tm.enqueue(lossless(h, 0)).unwrap();
    }
    for h in 11..16 {
        assert!(tm.enqueue(lossless(h, 0)).unwrap().headroom);
    }
    assert_eq!(tm.enqueue(lossless(99, 0)), Err(Refusal::HeadroomExhausted));
    assert_eq!(tm.pg_cells(0, 3), (16, 5));
    // Lossy traffic of another ingress port is unaffected.
    let mut r = lossless(100, 0);
    r.ingress_port = 1;
    assert!(tm.enqueue(r).is_ok());
    tm.check_invariants().unwrap();
}

#[test]
fn pfc_upstream_stops_within_reaction_time_and_resumes_after_xon() {
    let p = PfcParams::default();
    let out = experiments::pfc_hysteresis(&p);
    assert!(out.cycles.len() >= 2, "{out:?}");
    assert_eq!(out.drops, 0);
    assert!(out.max_headroom_cells <= out.headroom_cells);
    let reaction = pfc::reaction_ps(&p.spec, p.link_gbps);
    let to_upstream = experiments::wire_ps(64, p.link_gbps) + p.prop_ps;
    for (i, c) in out.cycles.iter().enumerate() {
        assert!(c.cells_at_xoff > out.xoff_cells);
        assert_eq!(c.pause_rx_at, c.xoff_at + to_upstream);
        // The last frame the upstream starts begins no later than the reaction time after the
        // frame reached it.
        assert!(
            c.last_tx_start <= c.pause_rx_at + reaction,
            "cycle {i}: {c:?}"
        );
        if let Some(xon) = c.xon_at {
            assert!(c.cells_at_xon < out.xon_cells);
            let resumed = c.resumed_at.expect("resumed after XON");
            // XON frame time + propagation, then the MAC is free.
            assert!(resumed >= xon + to_upstream, "{c:?}");
            assert!(
                resumed <= xon + to_upstream + experiments::wire_ps(p.frame_bytes, p.link_gbps)
            );
        }
    }
    // Exactly one XOFF per crossing and one XON per release.
    let xons = out.cycles.iter().filter(|c| c.xon_at.is_some()).count() as u64;
    assert_eq!(out.xoff_events, out.cycles.len() as u64);
    assert_eq!(out.xon_events, xons);
    assert!(out.xoff_events - out.xon_events <= 1);
}

#[test]
fn pfc_upstream_resumes_when_quanta_expire_without_refresh() {
    let p = PfcParams::quanta_expiry();
    let out = experiments::pfc_hysteresis(&p);
    let c = &out.cycles[0];
    let quanta = pfc::quanta_ps(p.quanta as u32, p.link_gbps);
    assert_eq!(quanta, 2000 * 512 * 10); // 512 bit times of 10 ps at 100G
    assert_eq!(c.resumed_at, Some(c.pause_rx_at + quanta));
    // Still XOFF downstream (no refresh): the headroom fills and overflows.
    assert!(c.xon_at.is_none());
    assert!(out.drops > 0);
}

#[test]
fn received_pause_stops_the_right_priority_until_it_expires() {
    let mut tm = TrafficManager::new(TmSpec::small(1000, 80, 8), TmConfig::default(), 1).unwrap();
    // Queue i is stopped by priority i (default mapping).
    tm.enqueue(req(0, 3, 100, 1)).unwrap();
    tm.enqueue(req(0, 5, 100, 2)).unwrap();
    tm.pause(0, 3, 5_000, 1_000);
    assert!(tm.is_paused(0, 3, 1_000));
    assert!(!tm.is_paused(0, 5, 1_000));
    assert_eq!(tm.dequeue(0, 1_000).unwrap().queue, 5);
    assert_eq!(tm.next_eligible_time(0, 1_000), Some(5_000));
    assert!(tm.dequeue(0, 4_999).is_none());
    assert_eq!(tm.dequeue(0, 5_000).unwrap().queue, 3);
    // Quanta 0 resumes at once.
    tm.enqueue(req(0, 3, 100, 3)).unwrap();
    tm.pause(0, 3, 1_000_000, 6_000);
    assert!(tm.dequeue(0, 6_000).is_none());
    tm.resume(0, 3, 7_000);
    assert_eq!(tm.next_eligible_time(0, 7_000), Some(7_000));
    assert!(tm.dequeue(0, 7_000).is_some());
    // Queue-level pause (AFC) has no end time.
    tm.enqueue(req(0, 1, 100, 4)).unwrap();
    tm.set_queue_paused(0, 1, true, 8_000);
    assert_eq!(tm.next_eligible_time(0, 8_000), None);
    tm.set_queue_paused(0, 1, false, 9_000);
    assert!(tm.dequeue(0, 9_000).is_some());
}

#[test]
fn pause_quanta_arithmetic() {
    // One quantum is 512 bit times: 5.12 ns at 100G, 51.2 ns at 10G, 1.28 ns at 400G.
    assert_eq!(pfc::quanta_ps(1, 100), 5_120);
    assert_eq!(pfc::quanta_ps(1, 10), 51_200);
    assert_eq!(pfc::quanta_ps(1, 400), 1_280);
    assert_eq!(pfc::quanta_ps(65_535, 100), 335_539_200);
    assert_eq!(pfc::refresh_interval_ps(65_535, 100), 167_769_600);
}

#[test]
fn experiments_run_by_name() {
    use experiments::ExperimentResult as R;
    for name in experiments::NAMES {
        let rows = match experiments::run(name).unwrap() {
            R::Dt(r) => r.rows.len(),
            R::FbIsolation(r) => r.rows.len(),
            R::FbGamma(r) => r.rows.len(),
            R::FbLowGuarantee(r) => r.len(),
            R::FbBurstGuarantee(r) => r.len(),
            R::FbOccupancyBound(r) => r.len(),
            R::Pfc(r) => r.cycles.len(),
        };
        assert!(rows > 0, "{name}");
    }
    assert!(experiments::run("nope").is_none());
}

#[test]
fn gmin_is_private_even_when_the_pool_is_taken() {
    let cfg = TmConfig {
        admission: AdmissionPolicy::Static,
        queues: vec![QueueConfig {
            gmin_cells: 4,
            ..QueueConfig::default()
        }],
        ..TmConfig::default()
    };
    // 2 ports x gmin 4 on queue 0 reserved: pool = 100 − 8.
    let mut tm = TrafficManager::new(TmSpec::small(100, 80, 2), cfg, 2).unwrap();
    assert_eq!(tm.pool(0).0, 92);
    let mut h = 0;
    let refusal = loop {
        match tm.enqueue(req(0, 1, 80, h)) {
            Ok(_) => h += 1,
            Err(r) => break r,
        }
    };
    assert_eq!(refusal, Refusal::PoolFull);
    assert_eq!(tm.depth(0, 1).0, 92);
    // Queue 0 of port 1 still gets its 4 private cells, and no more.
    for i in 0..4 {
        assert!(tm.enqueue(req(1, 0, 80, 1000 + i)).is_ok());
    }
    assert_eq!(tm.enqueue(req(1, 0, 80, 2000)), Err(Refusal::PoolFull));
    assert_eq!(tm.private_used(), 4);
    tm.check_invariants().unwrap();
}

#[test]
fn static_limit_caps_shared_cells() {
    let cfg = TmConfig {
        admission: AdmissionPolicy::Static,
        default_queue: QueueConfig {
            static_limit_cells: Some(10),
            gmin_cells: 2,
            ..QueueConfig::default()
        },
        ..TmConfig::default()
    };
    let mut tm = TrafficManager::new(TmSpec::small(100, 80, 1), cfg, 1).unwrap();
    let mut h = 0;
    while tm.enqueue(req(0, 0, 80, h)).is_ok() {
        h += 1;
    }
    assert_eq!(tm.depth(0, 0).0, 12);
    assert_eq!(tm.drops(Refusal::QueueLimit), 1);
}
