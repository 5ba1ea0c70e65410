//! Flexible Buffer's closed forms (the FB paper's Appendix A), each next to the TM running
//! the case it bounds:
//!
//! - [`low_guarantee`]: Theorem 3 (Eq. 6): the smallest α_L that guarantees the low priority
//!   `B_p` of the buffer, and the low queues' share the TM settles at with that α_L.
//! - [`burst_guarantee`]: Eq. 8: the largest α_L under which a high-priority burst of rate r
//!   and duration t, into a port of speed BW, sees no drop; the TM finds the largest α_L
//!   without a drop by bisection, for a finite α_H and a very large one.
//! - [`occupancy_bound`]: Theorem 1 (Eq. 5): total occupancy ≤ B(α_L + α_H)/(1 + α_L + α_H),
//!   95.3 % at α_L = 0.5, α_H = 20, whatever the number of congested queues (DT beside it).

use super::{fb_run, FbParams, FbRow, Timeline};
use crate::config::AdmissionPolicy;
use crate::spec::TmSpec;
use crate::{EnqueueRequest, TrafficManager};
use serde::Serialize;

/// Theorem 3: the α_L that guarantees the low priority a fraction `bp` of the buffer when the
/// high priority is saturated at `alpha_high`: `α_L ≥ B_p(1 + α_H)/(B − B_p)`.
pub fn alpha_low_min(bp: f64, alpha_high: f64) -> f64 {
    bp * (1.0 + alpha_high) / (1.0 - bp)
}

/// Eq. 8: the largest α_L under which a burst of `r_bps` for `t_s` seconds into a port of
/// `bw_bps` finds room in a buffer of `b_bytes`: `α_L ≤ B/((r − 2·BW)·t) − 1`. The free part
/// the low priority leaves, `B/(1 + α_L)`, must hold what the burst adds beyond what its port
/// and the draining low port remove. It takes α_H as unbounded.
pub fn alpha_low_max(b_bytes: f64, r_bps: f64, bw_bps: f64, t_s: f64) -> f64 {
    b_bytes / ((r_bps - 2.0 * bw_bps) / 8.0 * t_s) - 1.0
}

/// Eq. 8 with a finite α_H (this model's reading, not the paper's: its α_H bound is lost in
/// the text): the burst's queue, `(r − BW)·t` at the end, also needs `α_H` times the free
/// part to be above it, so `B/(1 + α_L) ≥ (r − 2·BW)·t + (r − BW)·t/α_H`.
pub fn alpha_low_max_finite(
    b_bytes: f64,
    r_bps: f64,
    bw_bps: f64,
    t_s: f64,
    alpha_high: f64,
) -> f64 {
    let grows = (r_bps - 2.0 * bw_bps) / 8.0 * t_s;
    let burst_queue = (r_bps - bw_bps) / 8.0 * t_s;
    b_bytes / (grows + burst_queue / alpha_high) - 1.0
}

/// Theorem 1: the most the buffer holds, as a fraction of B, with priorities of maximum α
/// `alphas`: `Σα/(1 + Σα)`.
pub fn occupancy_bound(alphas: &[f64]) -> f64 {
    let s: f64 = alphas.iter().sum();
    s / (1.0 + s)
}

/// Cells in the buffer of [`low_guarantee`] and [`occupancy_bound_run`] (one-cell packets).
const CELLS: u32 = 1000;

/// One high queue and `n_low` low queues, each on its own port and saturated, in a buffer of
/// [`CELLS`] one-cell packets after 20,000 slots.
fn settled(policy: AdmissionPolicy, alpha_high: f64, alpha_low: f64, n_low: usize) -> FbRow {
    let p = FbParams {
        cells: CELLS,
        alpha_high,
        alpha_low,
        lows: vec![n_low],
        slots: 20_000,
    };
    fb_run(&p, policy, n_low)
}

/// One row of [`low_guarantee`].
#[derive(Clone, Debug, Serialize)]
pub struct LowGuaranteeRow {
    /// Guaranteed fraction of B.
    pub bp: f64,
    /// α_H.
    pub alpha_high: f64,
    /// Theorem 3's α_L.
    pub alpha_low: f64,
    /// Saturated low queues (each on its own port), beside one saturated high queue.
    pub n_low: usize,
    /// Buffer, cells.
    pub cells: u32,
    /// The low queues' cells together, settled.
    pub low_cells: u32,
    /// The high queue's cells, settled.
    pub high_cells: u32,
}

/// Theorem 3 at B_p = 20 % and 10 % of B with α_H = 10 (the paper's example; it quotes 2.75
/// for 10 %, which the formula gives for 20 %), run with 1 and 4 low queues.
pub fn low_guarantee() -> Vec<LowGuaranteeRow> {
    let mut rows = Vec::new();
    for bp in [0.2, 0.1] {
        let alpha_high = 10.0;
        let alpha_low = alpha_low_min(bp, alpha_high);
        for n_low in [1, 4] {
            let r = settled(
                AdmissionPolicy::FlexibleBuffer,
                alpha_high,
                alpha_low,
                n_low,
            );
            rows.push(LowGuaranteeRow {
                bp,
                alpha_high,
                alpha_low,
                n_low,
                cells: CELLS,
                low_cells: r.lows.iter().sum(),
                high_cells: r.high,
            });
        }
    }
    rows
}

/// Parameters of [`burst_guarantee`]: the paper's example of Eq. 8.
#[derive(Clone, Debug)]
pub struct BurstParams {
    /// Buffer, bytes (a whole number of 80-byte cells).
    pub buffer_bytes: u32,
    /// Burst rate, Gb/s.
    pub r_gbps: u32,
    /// Port speed, Gb/s.
    pub bw_gbps: u32,
    /// Burst duration, ps.
    pub t_ps: u64,
    /// Packet size, bytes (a whole number of cells, so the buffer holds what the wire
    /// carried).
    pub packet_bytes: u32,
}

impl Default for BurstParams {
    fn default() -> Self {
        BurstParams {
            buffer_bytes: 9_000_000,
            r_gbps: 100,
            bw_gbps: 10,
            t_ps: 500_000_000,
            packet_bytes: 1520,
        }
    }
}

/// What one burst run saw.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct BurstRun {
    /// The low queue's cells when the burst started (settled).
    pub low_cells_at_start: u32,
    /// Free cells when the burst started.
    pub free_cells_at_start: u32,
    /// Burst packets offered.
    pub offered: u32,
    /// Burst packets refused.
    pub dropped: u32,
}

/// The low queue saturated alone on port 1 (offered at twice its port's speed) until it
/// settles, then a high-priority burst at `r` for `t` into port 0; both ports drain at BW.
/// Packets are serialised at their byte count (the TM's view: no preamble or gap).
pub fn burst_run(p: &BurstParams, alpha_low: f64, alpha_high: f64) -> BurstRun {
    const CELL: u32 = 80;
    let spec = TmSpec::small(p.buffer_bytes / CELL, CELL, 2);
    let cfg = super::two_class_config(AdmissionPolicy::FlexibleBuffer, alpha_high, alpha_low);
    let mut tm = TrafficManager::new(spec, cfg, 2).expect("valid FB setup");
    let ser = |gbps: u32| p.packet_bytes as u64 * 8 * 1000 / gbps as u64;
    let port_ps = ser(p.bw_gbps);
    let low_gap = ser(2 * p.bw_gbps);
    let burst_gap = ser(p.r_gbps);
    // Settled: long enough to fill B/(1 + 1/α_L) at BW, four times over.
    let fill_ps = (p.buffer_bytes as u64 * 8 * 1000 / p.bw_gbps as u64) * 4;
    let start = fill_ps;
    let end = start + p.t_ps;

    #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
    enum Ev {
        Serve(u16),
        Low,
        Burst,
    }
    let mut timeline = Timeline::new();
    timeline.at(0, Ev::Low);
    timeline.at(start, Ev::Burst);
    let mut busy = [false; 2];
    let mut handle = 0u32;
    let mut run = BurstRun {
        low_cells_at_start: 0,
        free_cells_at_start: 0,
        offered: 0,
        dropped: 0,
    };
    while let Some((now, ev)) = timeline.pop() {
        if now >= end {
            break;
        }
        let port = match ev {
            Ev::Serve(port) => {
                busy[port as usize] = tm.dequeue(port, now).is_some();
                if busy[port as usize] {
                    timeline.at(now + port_ps, Ev::Serve(port));
                }
                continue;
            }
            Ev::Low => {
                timeline.at(now + low_gap, Ev::Low);
                1
            }
            Ev::Burst => {
                if run.offered == 0 {
                    run.low_cells_at_start = tm.depth(1, 1).0;
                    run.free_cells_at_start = tm.free_cells();
                }
                timeline.at(now + burst_gap, Ev::Burst);
                run.offered += 1;
                0
            }
        };
        handle = handle.wrapping_add(1);
        let admitted = tm
            .enqueue(EnqueueRequest {
                port,
                queue: port,
                ingress_port: 0,
                priority: 0,
                color: 0,
                bytes: p.packet_bytes,
                handle,
                now_ps: now,
            })
            .is_ok();
        if port == 0 && !admitted {
            run.dropped += 1;
        }
        if admitted && !busy[port as usize] {
            busy[port as usize] = true;
            timeline.at(now, Ev::Serve(port));
        }
    }
    run
}

/// One α_H of [`burst_guarantee`].
#[derive(Clone, Debug, Serialize)]
pub struct BurstRow {
    /// α_H.
    pub alpha_high: f64,
    /// Eq. 8 (α_H unbounded).
    pub eq8: f64,
    /// Eq. 8 with this α_H ([`alpha_low_max_finite`]).
    pub eq8_finite: f64,
    /// The largest α_L (to 1/1024, up to 4) under which the model's burst saw no drop;
    /// `None` when it dropped even at 1/1024.
    pub measured: Option<f64>,
    /// The run at that α_L (at 1/1024 when `measured` is `None`).
    pub at_measured: BurstRun,
    /// The run at 1/1024 above it (the first with a drop; at 4 if none dropped).
    pub above: BurstRun,
}

/// Eq. 8 at the paper's example (B = 9 MB, r = 100G, BW = 10G, t = 500 µs) for α_H = 20
/// (the paper's evaluation) and α_H = 10,000 (nearly unbounded, as Eq. 8 takes it).
pub fn burst_guarantee(p: &BurstParams) -> Vec<BurstRow> {
    let (b, r, bw, t) = (
        p.buffer_bytes as f64,
        p.r_gbps as f64 * 1e9,
        p.bw_gbps as f64 * 1e9,
        p.t_ps as f64 * 1e-12,
    );
    [20.0, 10_000.0]
        .into_iter()
        .map(|alpha_high| {
            // Bisection on α_L in 1/1024 steps between 1/1024 and 4 (no drop at the first,
            // or no α_L lets the burst through: `measured` is `None`).
            let runs = |k: u32| burst_run(p, k as f64 / 1024.0, alpha_high);
            let (mut ok, mut bad) = (1u32, 4096u32);
            let first = runs(ok);
            let measured = (first.dropped == 0).then(|| {
                while bad - ok > 1 {
                    let mid = (ok + bad) / 2;
                    if runs(mid).dropped == 0 {
                        ok = mid;
                    } else {
                        bad = mid;
                    }
                }
                ok as f64 / 1024.0
            });
            BurstRow {
                alpha_high,
                eq8: alpha_low_max(b, r, bw, t),
                eq8_finite: alpha_low_max_finite(b, r, bw, t, alpha_high),
                measured,
                at_measured: if measured.is_some() { runs(ok) } else { first },
                above: runs(bad),
            }
        })
        .collect()
}

/// One mix of [`occupancy_bound_run`].
#[derive(Clone, Debug, Serialize)]
pub struct OccupancyRow {
    /// "fb" or "dt".
    pub policy: &'static str,
    /// Saturated low queues beside one saturated high queue (0: the high queue alone).
    pub n_low: usize,
    /// The most the buffer held once settled, cells.
    pub max_settled: u32,
    /// Buffer, cells.
    pub cells: u32,
    /// Theorem 1's bound for FB, fraction of B.
    pub bound: f64,
}

/// Theorem 1 at α_L = 0.5, α_H = 20: one high queue and 0–32 low queues, under FB and DT.
pub fn occupancy_bound_run() -> Vec<OccupancyRow> {
    let (alpha_high, alpha_low) = (20.0, 0.5);
    let mut rows = Vec::new();
    for policy in [
        AdmissionPolicy::FlexibleBuffer,
        AdmissionPolicy::DynamicThreshold,
    ] {
        for n_low in [0, 1, 4, 8, 32] {
            let r = settled(policy, alpha_high, alpha_low, n_low);
            rows.push(OccupancyRow {
                policy: r.policy,
                n_low,
                max_settled: r.max_total_settled,
                cells: CELLS,
                bound: occupancy_bound(&[alpha_low, alpha_high]),
            });
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The paper's worked numbers from the closed forms.
    #[test]
    fn the_closed_forms_give_the_papers_numbers() {
        assert!((alpha_low_min(0.2, 10.0) - 2.75).abs() < 1e-12);
        assert!((alpha_low_min(0.1, 10.0) - 11.0 / 9.0).abs() < 1e-12);
        assert!((alpha_low_max(9e6, 100e9, 10e9, 500e-6) - 0.8).abs() < 1e-12);
        assert!((occupancy_bound(&[0.5, 20.0]) - 20.5 / 21.5).abs() < 1e-12);
    }
}
