//! The resource report: what the compiled program uses of the chip, per gress and stage,
//! and how long a packet takes through each gress.

use std::fmt::Write;

use pipelines::pipe::GressTiming;
use pipelines::program::{ControlProgram, Gress};
use pipelines::spec::PipeSpec;
use serde::Serialize;

use crate::alloc::Placement;
use crate::phv::PhvUsage;
use crate::tna;

/// Used and available amount of one resource.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Use {
    /// Used.
    pub used: u32,
    /// Available.
    pub available: u32,
}

impl Use {
    fn new(used: u32, available: u32) -> Self {
        Use { used, available }
    }
}

/// One stage's resources.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StageReport {
    /// Stage number.
    pub stage: u16,
    /// SRAM blocks.
    pub sram_blocks: Use,
    /// TCAM blocks.
    pub tcam_blocks: Use,
    /// Logical tables.
    pub logical_tables: Use,
    /// Gateways.
    pub gateways: Use,
    /// VLIW slots.
    pub vliw_slots: Use,
    /// Hash bits.
    pub hash_bits: Use,
    /// Stateful ALUs.
    pub stateful_alus: Use,
    /// Meter ALUs.
    pub meter_alus: Use,
    /// Cycles a packet spends in the stage.
    pub cycles: u32,
}

/// One gress.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct GressReport {
    /// Which gress.
    pub gress: Gress,
    /// Stages `0..stages` of the control.
    pub stages: Vec<StageReport>,
    /// Table name → stage, in table order.
    pub tables: Vec<(String, u16)>,
    /// Number of gateways per stage is in `stages`; this lists each gateway's stage.
    pub gateways: Vec<u16>,
    /// 8-bit PHV containers.
    pub phv_b8: Use,
    /// 16-bit PHV containers.
    pub phv_b16: Use,
    /// 32-bit PHV containers.
    pub phv_b32: Use,
    /// parser + Σ stage cycles + deparser.
    pub latency_cycles: u32,
}

/// The whole report.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ResourceReport {
    /// Program name.
    pub program: String,
    /// Ingress then egress.
    pub gresses: Vec<GressReport>,
}

/// Build a gress's report.
pub fn gress_report(
    gress: Gress,
    control: &ControlProgram,
    placement: &Placement,
    phv: PhvUsage,
    spec: &PipeSpec,
) -> GressReport {
    let r = &spec.stage;
    // The chip's own timing rule, so the report and the pipe can never disagree.
    let timing = GressTiming::of(control, &spec.latency);
    let stages: Vec<StageReport> = placement
        .stages
        .iter()
        .enumerate()
        .map(|(i, u)| StageReport {
            stage: i as u16,
            sram_blocks: Use::new(u.sram_blocks, r.sram_blocks.into()),
            tcam_blocks: Use::new(u.tcam_blocks, r.tcam_blocks.into()),
            logical_tables: Use::new(u.logical_tables, r.logical_tables.into()),
            gateways: Use::new(u.gateways, r.gateways.into()),
            vliw_slots: Use::new(u.vliw_slots, r.vliw_slots.into()),
            hash_bits: Use::new(u.hash_bits, r.hash_bits.into()),
            stateful_alus: Use::new(u.stateful_alus, r.stateful_alus.into()),
            meter_alus: Use::new(u.meter_alus, r.meter_alus.into()),
            cycles: timing.stages[i],
        })
        .collect();
    let latency_cycles = timing.total();
    GressReport {
        gress,
        tables: control
            .tables
            .iter()
            .map(|t| (t.name.clone(), t.stage))
            .collect(),
        gateways: control.gateways.iter().map(|g| g.stage).collect(),
        stages,
        phv_b8: Use::new(phv.b8.into(), spec.phv.b8.into()),
        phv_b16: Use::new(phv.b16.into(), spec.phv.b16.into()),
        phv_b32: Use::new(phv.b32.into(), spec.phv.b32.into()),
        latency_cycles,
    }
}

fn pct(u: Use) -> String {
    if u.available == 0 {
        format!("{}/0", u.used)
    } else {
        format!(
            "{}/{} ({}%)",
            u.used,
            u.available,
            u.used * 100 / u.available
        )
    }
}

impl ResourceReport {
    /// A readable per-stage table and the table→stage map.
    pub fn render_text(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "program {}", self.program);
        for g in &self.gresses {
            let _ = writeln!(
                s,
                "\n{}: {} stage(s), latency {} cycles",
                tna::gress_name(g.gress),
                g.stages.len(),
                g.latency_cycles
            );
            let _ = writeln!(
                s,
                "  PHV: 8-bit {}, 16-bit {}, 32-bit {}",
                pct(g.phv_b8),
                pct(g.phv_b16),
                pct(g.phv_b32)
            );
            if !g.stages.is_empty() {
                let _ = writeln!(
                    s,
                    "  {:<5} {:<16} {:<16} {:<14} {:<14} {:<16} {:<16} {:<10} {:<10} {:>6}",
                    "stage",
                    "sram",
                    "tcam",
                    "tables",
                    "gateways",
                    "vliw",
                    "hash bits",
                    "salu",
                    "meter",
                    "cycles"
                );
            }
            for st in &g.stages {
                let _ = writeln!(
                    s,
                    "  {:<5} {:<16} {:<16} {:<14} {:<14} {:<16} {:<16} {:<10} {:<10} {:>6}",
                    st.stage,
                    pct(st.sram_blocks),
                    pct(st.tcam_blocks),
                    pct(st.logical_tables),
                    pct(st.gateways),
                    pct(st.vliw_slots),
                    pct(st.hash_bits),
                    pct(st.stateful_alus),
                    pct(st.meter_alus),
                    st.cycles
                );
            }
            for (name, stage) in &g.tables {
                let _ = writeln!(s, "  table {name} -> stage {stage}");
            }
            for (i, stage) in g.gateways.iter().enumerate() {
                let _ = writeln!(s, "  gateway {i} -> stage {stage}");
            }
        }
        s
    }
}
