//! `asic tm-experiment`: the traffic manager's experiments ([`tm::experiments`]) as text tables
//! and CSV.
//!
//! The TM computes and returns plain data; the columns, the notes that state each setup and
//! formula, and the number formats are presentation, so they live here, beside the command.

use std::fmt;
use tm::experiments::fb_bounds::{BurstRow, LowGuaranteeRow, OccupancyRow};
use tm::experiments::{DtResult, ExperimentResult, FbGammaResult, FbResult, PfcOutcome};

/// A result table: named columns, one string per cell.
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    /// Experiment name.
    pub name: String,
    /// What it shows, and the setup.
    pub notes: Vec<String>,
    /// Column names.
    pub columns: Vec<String>,
    /// Rows, one string per column.
    pub rows: Vec<Vec<String>>,
}

impl Table {
    fn new(name: &str, columns: &[&str]) -> Table {
        Table {
            name: name.to_string(),
            notes: Vec::new(),
            columns: columns.iter().map(|c| c.to_string()).collect(),
            rows: Vec::new(),
        }
    }

    /// The table as CSV (header line, then rows).
    pub fn to_csv(&self) -> String {
        let mut s = self.columns.join(",");
        s.push('\n');
        for r in &self.rows {
            s.push_str(&r.join(","));
            s.push('\n');
        }
        s
    }
}

/// `# name`, a `# ` line per note, then the columns right-aligned, two spaces apart.
impl fmt::Display for Table {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "# {}", self.name)?;
        for n in &self.notes {
            writeln!(f, "# {n}")?;
        }
        let mut w: Vec<usize> = self.columns.iter().map(|c| c.len()).collect();
        for r in &self.rows {
            for (i, c) in r.iter().enumerate() {
                w[i] = w[i].max(c.len());
            }
        }
        let line = |cells: &[String]| {
            cells
                .iter()
                .enumerate()
                .map(|(i, c)| format!("{c:>width$}", width = w[i]))
                .collect::<Vec<_>>()
                .join("  ")
        };
        writeln!(f, "{}", line(&self.columns))?;
        for r in &self.rows {
            writeln!(f, "{}", line(r))?;
        }
        Ok(())
    }
}

/// The table of experiment `name`'s result.
pub fn table(name: &str, result: &ExperimentResult) -> Table {
    match result {
        ExperimentResult::Dt(r) => dt_table(name, r),
        ExperimentResult::FbIsolation(r) => fb_isolation_table(name, r),
        ExperimentResult::FbGamma(r) => fb_gamma_table(name, r),
        ExperimentResult::FbLowGuarantee(r) => low_guarantee_table(name, r),
        ExperimentResult::FbBurstGuarantee(r) => burst_guarantee_table(name, r),
        ExperimentResult::FbOccupancyBound(r) => occupancy_bound_table(name, r),
        ExperimentResult::Pfc(r) => pfc_table(name, r),
    }
}

fn f2(x: f64) -> String {
    format!("{x:.2}")
}

fn dt_table(name: &str, r: &DtResult) -> Table {
    let mut t = Table::new(
        name,
        &[
            "alpha",
            "queues",
            "pkt_cells",
            "expected_aB/(1+Na)",
            "measured_min",
            "measured_max",
            "within_one_pkt",
            "settled_slot",
        ],
    );
    t.notes.push(format!(
        "Dynamic Threshold, B = {} cells (one pool, no private minimum); N queues on N ports, each offered 2 packets per slot and served 1",
        r.cells
    ));
    t.notes.push("expected per queue: alpha*B/(1+N*alpha) (Choudhury-Hahne; FB paper Eq. 1-3); admission compares the queue before the packet with T".into());
    t.rows = r
        .rows
        .iter()
        .map(|row| {
            vec![
                row.alpha.to_string(),
                row.n.to_string(),
                row.pkt_cells.to_string(),
                f2(row.expected),
                row.min.to_string(),
                row.max.to_string(),
                row.within_one_packet().to_string(),
                row.settled_slot.map_or("-".into(), |s| s.to_string()),
            ]
        })
        .collect();
    t
}

fn fb_isolation_table(name: &str, r: &FbResult) -> Table {
    let mut t = Table::new(
        name,
        &[
            "policy",
            "n_low",
            "high",
            "exp_high",
            "low_each",
            "low_total",
            "exp_low_total",
            "free",
            "exp_free",
            "max_total_settled",
            "bound",
            "max_total_run",
        ],
    );
    t.notes.push(format!(
        "B = {} cells, one high queue (alpha {}) on port 0 and n_low low queues (alpha {}) on ports 1.., each offered 2 one-cell packets per slot and served 1",
        r.cells, r.alphas.0, r.alphas.1
    ));
    t.notes.push("FB expected (steady state, Lemma 2): free = B/(1+aH+aL), high = aH*free, lows aL*free in aggregate; bound = B(aL+aH)/(1+aL+aH)".into());
    t.notes.push("DT expected: free = B/(1+aH+N*aL), high = aH*free, each low aL*free; no push-out, so the bound holds once settled, not during the start-up transient (max_total_run)".into());
    t.rows = r
        .rows
        .iter()
        .map(|row| {
            let (mn, mx) = (
                row.lows.iter().min().copied().unwrap_or(0),
                row.lows.iter().max().copied().unwrap_or(0),
            );
            vec![
                row.policy.to_string(),
                row.n_low.to_string(),
                row.high.to_string(),
                f2(row.expected_high),
                if mn == mx {
                    mn.to_string()
                } else {
                    format!("{mn}..{mx}")
                },
                row.lows.iter().sum::<u32>().to_string(),
                f2(row.expected_low_total),
                row.free.to_string(),
                f2(row.expected_free),
                row.max_total_settled.to_string(),
                f2(row.bound),
                row.max_total_run.to_string(),
            ]
        })
        .collect();
    t
}

fn fb_gamma_table(name: &str, r: &FbGammaResult) -> Table {
    let mut t = Table::new(
        name,
        &[
            "placement",
            "gamma",
            "depths",
            "total",
            "free",
            "exp_threshold_each",
            "exp_total",
        ],
    );
    t.notes.push(format!(
        "FB, B = {} cells, five saturated queues of one class (alpha {}), DRR with equal quanta",
        r.cells, r.alpha
    ));
    t.notes.push("expected (Eq. 4 steady state): sum(omega) = 5 * alpha * gamma / 5; free = B/(1+sum); each = alpha*gamma/5*free".into());
    t.notes.push("the FB paper's Fig. 5b shows 6 per queue for the one-port case, which Eq. 4 gives only with gamma = 1 (the figure and the equation disagree); the model follows Eq. 4".into());
    t.rows = r
        .rows
        .iter()
        .map(|row| {
            vec![
                if row.one_port {
                    "one port"
                } else {
                    "five ports"
                }
                .to_string(),
                row.gamma.to_string(),
                format!("{:?}", row.depths).replace(", ", " "),
                row.depths.iter().sum::<u32>().to_string(),
                row.free.to_string(),
                f2(row.expected_each),
                f2(row.expected_total),
            ]
        })
        .collect();
    t
}

fn low_guarantee_table(name: &str, rows: &[LowGuaranteeRow]) -> Table {
    let mut t = Table::new(
        name,
        &[
            "B_p",
            "alpha_H",
            "alpha_L_min",
            "n_low",
            "low_cells",
            "low_share",
            "guaranteed_cells",
            "high_cells",
            "holds",
        ],
    );
    t.notes.push("Theorem 3 (Eq. 6): alpha_L >= B_p(1 + alpha_H)/(B - B_p) guarantees the low priority B_p of the buffer while the high priority is saturated".into());
    t.notes.push(format!(
        "FB, B = {} one-cell packets, one high queue and n_low low queues on their own ports, each offered 2 packets per slot and served 1; depths after 20,000 slots; holds: low_cells >= B_p*B - 1 packet",
        rows.first().map_or(0, |r| r.cells)
    ));
    t.notes.push("the paper quotes alpha_L = 2.75 for B_p = 10 %; the formula gives 2.75 for 20 % and 1.22 for 10 % (the text and the formula disagree; the model follows the formula)".into());
    t.rows = rows
        .iter()
        .map(|r| {
            let guaranteed = r.bp * r.cells as f64;
            vec![
                format!("{:.0}%", r.bp * 100.0),
                r.alpha_high.to_string(),
                format!("{:.4}", r.alpha_low),
                r.n_low.to_string(),
                r.low_cells.to_string(),
                format!("{:.1}%", 100.0 * r.low_cells as f64 / r.cells as f64),
                format!("{guaranteed:.0}"),
                r.high_cells.to_string(),
                (r.low_cells as f64 >= guaranteed - 1.0).to_string(),
            ]
        })
        .collect();
    t
}

fn burst_guarantee_table(name: &str, rows: &[BurstRow]) -> Table {
    let mut t = Table::new(
        name,
        &[
            "alpha_H",
            "eq8_alpha_L_max",
            "eq8_with_alpha_H",
            "measured_alpha_L_max",
            "low_cells_at_burst",
            "free_cells_at_burst",
            "burst_pkts",
            "drops_at_max",
            "drops_above",
        ],
    );
    t.notes.push("Eq. 8: alpha_L <= B/((r - 2 BW) t) - 1 lets a high-priority burst of rate r for t into a port of speed BW through without a drop; the paper's example B = 9 MB, r = 100G, BW = 10G, t = 500 us gives 0.8".into());
    t.notes.push("FB, 80-byte cells, 1520-byte packets: one low queue (port 1) offered at 2 BW until settled, then the burst into port 0 (alpha_H); both ports drain at BW; measured: the largest alpha_L (bisection, 1/1024 steps) under which no burst packet was refused".into());
    t.notes.push("eq8_with_alpha_H (the model's reading; the paper's alpha_H bound is lost in the text): the burst's own queue (r - BW) t must also stay below alpha_H times the free part, B/(1 + alpha_L) >= (r - 2 BW) t + (r - BW) t / alpha_H".into());
    t.rows = rows
        .iter()
        .map(|r| {
            vec![
                r.alpha_high.to_string(),
                format!("{:.4}", r.eq8),
                format!("{:.4}", r.eq8_finite),
                r.measured.map_or("none".into(), |m| format!("{m:.4}")),
                r.at_measured.low_cells_at_start.to_string(),
                r.at_measured.free_cells_at_start.to_string(),
                r.at_measured.offered.to_string(),
                r.at_measured.dropped.to_string(),
                r.above.dropped.to_string(),
            ]
        })
        .collect();
    t
}

fn occupancy_bound_table(name: &str, rows: &[OccupancyRow]) -> Table {
    let mut t = Table::new(
        name,
        &[
            "policy",
            "n_low",
            "max_settled",
            "max_settled_share",
            "fb_bound",
            "within_fb_bound",
        ],
    );
    t.notes.push("Theorem 1 (Eq. 5): under FB the buffer never holds more than B(alpha_L + alpha_H)/(1 + alpha_L + alpha_H) once settled: 95.3 % at alpha_L = 0.5, alpha_H = 20, whatever the number of congested queues".into());
    t.notes.push(format!(
        "B = {} one-cell packets, one high queue and n_low low queues on their own ports, each offered 2 packets per slot and served 1; max_settled: the most held after any enqueue in the second half of 20,000 slots; within: <= bound + 1 packet. DT (the same alphas) for contrast",
        rows.first().map_or(0, |r| r.cells)
    ));
    t.rows = rows
        .iter()
        .map(|r| {
            let bound = r.bound * r.cells as f64;
            vec![
                r.policy.to_string(),
                r.n_low.to_string(),
                r.max_settled.to_string(),
                format!("{:.1}%", 100.0 * r.max_settled as f64 / r.cells as f64),
                format!("{:.1}%", 100.0 * r.bound),
                (r.max_settled as f64 <= bound + 1.0).to_string(),
            ]
        })
        .collect();
    t
}

/// One row per XOFF/XON cycle.
fn pfc_table(name: &str, r: &PfcOutcome) -> Table {
    let mut t = Table::new(
        name,
        &[
            "cycle",
            "xoff_ns",
            "cells_at_xoff",
            "pause_rx_ns",
            "last_tx_ns",
            "stop_after_rx_ns",
            "reaction_ns",
            "xon_ns",
            "cells_at_xon",
            "resumed_ns",
        ],
    );
    t.notes.push(format!(
        "XOFF > {} cells, XON < {} cells, headroom {} cells; reaction {} ns; pause {} ns per frame; refresh {}",
        r.xoff_cells,
        r.xon_cells,
        r.headroom_cells,
        r.reaction_ps / 1000,
        r.pause_ps / 1000,
        if r.refresh { "on" } else { "off" }
    ));
    t.notes.push(format!(
        "XOFF events {}, XON events {}, frames sent {}, max PG {} cells, max headroom {} cells, drops {}, delivered {}",
        r.xoff_events,
        r.xon_events,
        r.frames_sent,
        r.max_pg_cells,
        r.max_headroom_cells,
        r.drops,
        r.delivered
    ));
    let ns = |x: u64| format!("{:.1}", x as f64 / 1000.0);
    t.rows = r
        .cycles
        .iter()
        .enumerate()
        .map(|(i, c)| {
            vec![
                i.to_string(),
                ns(c.xoff_at),
                c.cells_at_xoff.to_string(),
                ns(c.pause_rx_at),
                ns(c.last_tx_start),
                c.stop_after_rx_ps().map_or("-".into(), ns),
                ns(r.reaction_ps),
                c.xon_at.map_or("-".into(), ns),
                c.cells_at_xon.to_string(),
                c.resumed_at.map_or("-".into(), ns),
            ]
        })
        .collect();
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every experiment renders a titled table with rows, and its CSV has the same rows.
    #[test]
    fn every_experiment_renders() {
        for name in tm::experiments::NAMES {
            let t = table(name, &tm::experiments::run(name).unwrap());
            assert!(!t.rows.is_empty(), "{name}");
            assert!(t.to_string().starts_with(&format!("# {name}\n")), "{name}");
            assert_eq!(t.to_csv().lines().count(), t.rows.len() + 1, "{name}");
        }
    }
}
