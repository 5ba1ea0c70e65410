//! The resource report: what the compiled program uses of the chip, per gress and stage,
//! where each table, extern and field went, and how long a packet takes through each gress.
//!
//! [`ResourceReport::render_text`] prints it for people; serialised (serde, e.g. JSON) it takes
//! the shape of p4c's `resources.json` for Tofino (`{"resources": {"mau": {"nStages",
//! "mau_stages": [{"stage_number", "logical_tables", "rams", "tcams", ...}]}, "phv": ...,
//! "parser": ...}}`), with counts in place of the physical row/column positions this model
//! does not assign, and a `gress` on each stage because each gress is allocated on its own
//! pipe here.

use std::fmt::Write;

use pipelines::pipe::GressTiming;
use pipelines::program::{ControlProgram, Gress, ParserErrorPolicy, PhvLayout};
use pipelines::spec::PipeSpec;
use serde::Serialize;

use crate::alloc::{Item, Kind, PartUse, Placement};
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
    /// Statistics ALUs.
    pub stats_alus: Use,
    /// Cycles a packet spends in the stage.
    pub cycles: u32,
    /// Tables placed in the stage (a split table's part among them).
    pub tables: Vec<StageTable>,
    /// Who uses the stage's memories, ALUs and hash bits.
    pub items: Vec<Item>,
}

/// A logical table of a stage: a table, or a part of one split across stages.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StageTable {
    /// The table's name.
    pub name: String,
    /// The entries it holds in this stage (the table's size unless it is split).
    pub entries: u32,
}

/// A table and its parts (one for a table in one stage).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TableReport {
    /// The table's name.
    pub name: String,
    /// Its parts in stage order.
    pub parts: Vec<PartUse>,
}

/// Where a field lives in the PHV.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FieldPlacement {
    /// Field name.
    pub name: String,
    /// Width in bits.
    pub width: u16,
    /// Container slices, most significant first, as `H3[8:0]` (B = 8-bit, H = 16-bit,
    /// W = 32-bit containers, numbered within their class).
    pub slices: Vec<String>,
}

/// An extern array or hash unit and its stage.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ExternPlacement {
    /// `register`, `meter`, `counter` or `hash`.
    pub kind: &'static str,
    /// Qualified name.
    pub name: String,
    /// Its stage.
    pub stage: u16,
    /// A meter array's byte-count adjustment: bytes added to each packet's length (0 for
    /// anything else).
    pub byte_count_adjust: i32,
}

/// One gress.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct GressReport {
    /// Which gress.
    pub gress: Gress,
    /// Stages `0..stages` of the control.
    pub stages: Vec<StageReport>,
    /// Table name → stage (a split table's first part's), in table order.
    pub tables: Vec<(String, u16)>,
    /// Every table's parts, in table order.
    pub table_parts: Vec<TableReport>,
    /// Number of gateways per stage is in `stages`; this lists each gateway's stage.
    pub gateways: Vec<u16>,
    /// Extern arrays and hash units → stage.
    pub externs: Vec<ExternPlacement>,
    /// 8-bit PHV containers.
    pub phv_b8: Use,
    /// 16-bit PHV containers.
    pub phv_b16: Use,
    /// 32-bit PHV containers.
    pub phv_b32: Use,
    /// Every field's containers.
    pub phv_fields: Vec<FieldPlacement>,
    /// Parser states used and available.
    pub parser_states: Use,
    /// What the parser does with a packet it fails on.
    pub parser_on_error: &'static str,
    /// parser + Σ stage cycles + deparser.
    pub latency_cycles: u32,
    /// Parser cycles (part of the latency).
    pub parser_cycles: u32,
    /// Deparser cycles (part of the latency).
    pub deparser_cycles: u32,
}

/// The whole report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourceReport {
    /// Program name.
    pub program: String,
    /// Stages of the pipe.
    pub pipe_stages: u16,
    /// Ingress then egress.
    pub gresses: Vec<GressReport>,
}

/// A container's name: B (8-bit), H (16-bit) or W (32-bit) and its number within the class.
pub fn container_name(spec: &PipeSpec, c: u16) -> String {
    let (b8, b16) = (spec.phv.b8, spec.phv.b16);
    if c < b8 {
        format!("B{c}")
    } else if c < b8 + b16 {
        format!("H{}", c - b8)
    } else {
        format!("W{}", c - b8 - b16)
    }
}

/// Build a gress's report.
pub fn gress_report(
    gress: Gress,
    program: &pipelines::program::GressProgram,
    placement: &Placement,
    phv: PhvUsage,
    spec: &PipeSpec,
) -> GressReport {
    let control: &ControlProgram = &program.control;
    let layout: &PhvLayout = &program.phv;
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
            stats_alus: Use::new(u.stats_alus, r.stats_alus.into()),
            cycles: timing.stages.get(i).copied().unwrap_or(0),
            tables: control
                .tables
                .iter()
                .zip(&placement.tables)
                .flat_map(|(t, parts)| {
                    parts
                        .iter()
                        .filter(|p| p.stage as usize == i)
                        .map(|p| StageTable {
                            name: t.name.clone(),
                            entries: p.entries,
                        })
                })
                .collect(),
            items: u.items.clone(),
        })
        .collect();
    let mut externs = Vec::new();
    for x in &control.registers {
        externs.push(ExternPlacement {
            kind: "register",
            name: x.name.clone(),
            stage: x.stage,
            byte_count_adjust: 0,
        });
    }
    for x in &control.meters {
        externs.push(ExternPlacement {
            kind: "meter",
            name: x.name.clone(),
            stage: x.stage,
            byte_count_adjust: x.byte_count_adjust,
        });
    }
    for x in &control.counters {
        externs.push(ExternPlacement {
            kind: "counter",
            name: x.name.clone(),
            stage: x.stage,
            byte_count_adjust: 0,
        });
    }
    for x in &control.hashes {
        externs.push(ExternPlacement {
            kind: "hash",
            name: x.name.clone(),
            stage: x.stage,
            byte_count_adjust: 0,
        });
    }
    let phv_fields = layout
        .fields
        .iter()
        .map(|f| FieldPlacement {
            name: f.name.clone(),
            width: f.width,
            slices: f
                .slices
                .iter()
                .map(|s| {
                    format!(
                        "{}[{}:{}]",
                        container_name(spec, s.container),
                        s.lsb as u16 + s.width as u16 - 1,
                        s.lsb
                    )
                })
                .collect(),
        })
        .collect();
    GressReport {
        gress,
        tables: control
            .tables
            .iter()
            .map(|t| (t.name.clone(), t.stage))
            .collect(),
        table_parts: control
            .tables
            .iter()
            .zip(&placement.tables)
            .map(|(t, parts)| TableReport {
                name: t.name.clone(),
                parts: parts.clone(),
            })
            .collect(),
        gateways: control.gateways.iter().map(|g| g.stage).collect(),
        externs,
        stages,
        phv_b8: Use::new(phv.b8.into(), spec.phv.b8.into()),
        phv_b16: Use::new(phv.b16.into(), spec.phv.b16.into()),
        phv_b32: Use::new(phv.b32.into(), spec.phv.b32.into()),
        phv_fields,
        parser_states: Use::new(
            program.parser.states.len() as u32,
            spec.parser.max_states.into(),
        ),
        parser_on_error: match program.parser.on_error {
            ParserErrorPolicy::Drop => "drop",
            ParserErrorPolicy::Continue => "continue",
        },
        latency_cycles: timing.total(),
        parser_cycles: timing.parser,
        deparser_cycles: timing.deparser,
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

fn kind_unit(k: Kind) -> &'static str {
    match k {
        Kind::Sram => "SRAM blocks",
        Kind::Tcam => "TCAM blocks",
        Kind::HashBits => "hash bits",
        Kind::StatefulAlu => "stateful ALU",
        Kind::MeterAlu => "meter ALU",
        Kind::StatsAlu => "statistics ALU",
    }
}

impl ResourceReport {
    /// A readable per-stage table, what each stage holds, the table→stage map, the PHV
    /// allocation and the latency.
    pub fn render_text(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "program {}", self.program);
        for g in &self.gresses {
            let _ = writeln!(
                s,
                "\n{}: {} of {} stage(s), latency {} cycles (parser {} + stages {} + deparser {})",
                tna::gress_name(g.gress),
                g.stages.len(),
                self.pipe_stages,
                g.latency_cycles,
                g.parser_cycles,
                g.stages.iter().map(|st| st.cycles).sum::<u32>(),
                g.deparser_cycles
            );
            let _ = writeln!(
                s,
                "  parser: {} states, on error: {}",
                pct(g.parser_states),
                g.parser_on_error
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
                    "  {:<5} {:<14} {:<14} {:<13} {:<13} {:<15} {:<15} {:<11} {:<11} {:<11} {:>6}",
                    "stage",
                    "sram",
                    "tcam",
                    "tables",
                    "gateways",
                    "vliw",
                    "hash bits",
                    "salu",
                    "meter",
                    "stats",
                    "cycles"
                );
            }
            for st in &g.stages {
                let _ = writeln!(
                    s,
                    "  {:<5} {:<14} {:<14} {:<13} {:<13} {:<15} {:<15} {:<11} {:<11} {:<11} {:>6}",
                    st.stage,
                    pct(st.sram_blocks),
                    pct(st.tcam_blocks),
                    pct(st.logical_tables),
                    pct(st.gateways),
                    pct(st.vliw_slots),
                    pct(st.hash_bits),
                    pct(st.stateful_alus),
                    pct(st.meter_alus),
                    pct(st.stats_alus),
                    st.cycles
                );
            }
            for st in &g.stages {
                let _ = writeln!(s, "  stage {}:", st.stage);
                let gws = g.gateways.iter().filter(|&&x| x == st.stage).count();
                if !st.tables.is_empty() {
                    let names: Vec<&str> = st.tables.iter().map(|t| t.name.as_str()).collect();
                    let _ = writeln!(s, "    tables: {}", names.join(", "));
                }
                if gws > 0 {
                    let _ = writeln!(s, "    gateways: {gws}");
                }
                for it in &st.items {
                    let _ = writeln!(
                        s,
                        "    {} {} for {} ({})",
                        it.amount,
                        kind_unit(it.kind),
                        it.used_by,
                        it.used_for
                    );
                }
            }
            for t in &g.table_parts {
                let [first, .., last] = t.parts.as_slice() else {
                    let stage = t.parts.first().map_or(0, |p| p.stage);
                    let _ = writeln!(s, "  table {} -> stage {stage}", t.name);
                    continue;
                };
                let _ = writeln!(
                    s,
                    "  table {} -> stages {}..{}, split in {} parts:",
                    t.name,
                    first.stage,
                    last.stage,
                    t.parts.len()
                );
                for p in &t.parts {
                    let _ = writeln!(
                        s,
                        "    stage {}: {} entries, {} SRAM blocks, {} TCAM blocks, {} hash bits",
                        p.stage, p.entries, p.sram_blocks, p.tcam_blocks, p.hash_bits
                    );
                }
            }
            for (i, stage) in g.gateways.iter().enumerate() {
                let _ = writeln!(s, "  gateway {i} -> stage {stage}");
            }
            for x in &g.externs {
                let adjust = match x.byte_count_adjust {
                    0 => String::new(),
                    b => format!(", byte-count adjustment {b:+}"),
                };
                let _ = writeln!(s, "  {} {} -> stage {}{adjust}", x.kind, x.name, x.stage);
            }
            let _ = writeln!(s, "  PHV allocation:");
            for f in &g.phv_fields {
                let _ = writeln!(
                    s,
                    "    {:<44} bit<{}> {}",
                    f.name,
                    f.width,
                    f.slices.join(" ")
                );
            }
        }
        s
    }

    /// The report in the shape of p4c's `resources.json` (what the `Serialize` impl writes).
    pub fn resources_json(&self) -> ResourcesJson {
        let mut mau_stages = Vec::new();
        for g in &self.gresses {
            for st in &g.stages {
                let items = |k: Kind| -> Vec<UsageJson> {
                    st.items
                        .iter()
                        .filter(|i| i.kind == k)
                        .map(|i| UsageJson {
                            used_by: i.used_by.clone(),
                            used_for: i.used_for,
                            amount: i.amount,
                        })
                        .collect()
                };
                mau_stages.push(StageJson {
                    gress: tna::gress_name(g.gress),
                    stage_number: st.stage,
                    cycles: st.cycles,
                    logical_tables: LogicalTablesJson {
                        size: st.logical_tables.available,
                        ids: st
                            .tables
                            .iter()
                            .enumerate()
                            .map(|(id, t)| LogicalTableJson {
                                id,
                                table_name: t.name.clone(),
                                entries: t.entries,
                            })
                            .collect(),
                    },
                    rams: PoolJson::new(st.sram_blocks, items(Kind::Sram)),
                    tcams: PoolJson::new(st.tcam_blocks, items(Kind::Tcam)),
                    hash_bits: PoolJson::new(st.hash_bits, items(Kind::HashBits)),
                    stateful_alus: PoolJson::new(st.stateful_alus, items(Kind::StatefulAlu)),
                    meter_alus: PoolJson::new(st.meter_alus, items(Kind::MeterAlu)),
                    statistic_alus: PoolJson::new(st.stats_alus, items(Kind::StatsAlu)),
                    gateways: st.gateways,
                    vliw: st.vliw_slots,
                });
            }
        }
        ResourcesJson {
            program_name: self.program.clone(),
            schema_version: "asic-model-1",
            resources: ResourcesBody {
                mau: MauJson {
                    n_stages: self.pipe_stages,
                    mau_stages,
                    tables: self
                        .gresses
                        .iter()
                        .flat_map(|g| {
                            g.table_parts.iter().map(|t| TableJson {
                                gress: tna::gress_name(g.gress),
                                name: t.name.clone(),
                                parts: t.parts.clone(),
                            })
                        })
                        .collect(),
                },
                phv: self
                    .gresses
                    .iter()
                    .map(|g| PhvJson {
                        gress: tna::gress_name(g.gress),
                        containers: vec![
                            ContainersJson::new(8, g.phv_b8),
                            ContainersJson::new(16, g.phv_b16),
                            ContainersJson::new(32, g.phv_b32),
                        ],
                        fields: g.phv_fields.clone(),
                    })
                    .collect(),
                parser: self
                    .gresses
                    .iter()
                    .map(|g| ParserJson {
                        gress: tna::gress_name(g.gress),
                        states: g.parser_states,
                        on_error: g.parser_on_error,
                    })
                    .collect(),
                latency: self
                    .gresses
                    .iter()
                    .map(|g| LatencyJson {
                        gress: tna::gress_name(g.gress),
                        cycles: g.latency_cycles,
                        parser: g.parser_cycles,
                        stages: g.stages.iter().map(|s| s.cycles).collect(),
                        deparser: g.deparser_cycles,
                    })
                    .collect(),
            },
        }
    }
}

impl Serialize for ResourceReport {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.resources_json().serialize(s)
    }
}

/// Top level of the JSON report (p4c: `resources.json`).
#[derive(Clone, Debug, Serialize)]
pub struct ResourcesJson {
    /// Program name.
    pub program_name: String,
    /// This model's schema (not p4c's).
    pub schema_version: &'static str,
    /// MAU, PHV, parser, latency.
    pub resources: ResourcesBody,
}

/// `resources`.
#[derive(Clone, Debug, Serialize)]
pub struct ResourcesBody {
    /// Match-action units.
    pub mau: MauJson,
    /// PHV use per gress.
    pub phv: Vec<PhvJson>,
    /// Parser use per gress.
    pub parser: Vec<ParserJson>,
    /// Latency per gress (not in p4c's file; its `metrics.json` has it).
    pub latency: Vec<LatencyJson>,
}

/// `resources.mau`.
#[derive(Clone, Debug, Serialize)]
pub struct MauJson {
    /// Stages of the pipe.
    #[serde(rename = "nStages")]
    pub n_stages: u16,
    /// Stages used, ingress then egress.
    pub mau_stages: Vec<StageJson>,
    /// Every table and its parts, ingress then egress (not in p4c's file, whose
    /// `context.json` lists a split table's stage tables).
    pub tables: Vec<TableJson>,
}

/// One table of `resources.mau.tables`.
#[derive(Clone, Debug, Serialize)]
pub struct TableJson {
    /// Which gress.
    pub gress: &'static str,
    /// Its name.
    pub name: String,
    /// Its parts in stage order: stage, entries, SRAM and TCAM blocks, hash bits (one part
    /// for a table in one stage).
    pub parts: Vec<PartUse>,
}

/// One entry of `mau_stages`.
#[derive(Clone, Debug, Serialize)]
pub struct StageJson {
    /// Which gress (each gress has the pipe's stages to itself in this model).
    pub gress: &'static str,
    /// Stage number.
    pub stage_number: u16,
    /// Cycles a packet spends in it.
    pub cycles: u32,
    /// Logical tables.
    pub logical_tables: LogicalTablesJson,
    /// SRAM blocks.
    pub rams: PoolJson,
    /// TCAM blocks.
    pub tcams: PoolJson,
    /// Hash bits.
    pub hash_bits: PoolJson,
    /// Stateful ALUs.
    pub stateful_alus: PoolJson,
    /// Meter ALUs.
    pub meter_alus: PoolJson,
    /// Statistics ALUs.
    pub statistic_alus: PoolJson,
    /// Gateways.
    pub gateways: Use,
    /// VLIW slots.
    pub vliw: Use,
}

/// `logical_tables`.
#[derive(Clone, Debug, Serialize)]
pub struct LogicalTablesJson {
    /// Logical tables per stage.
    pub size: u32,
    /// Tables with their logical id.
    pub ids: Vec<LogicalTableJson>,
}

/// One logical table.
#[derive(Clone, Debug, Serialize)]
pub struct LogicalTableJson {
    /// Logical id within the stage.
    pub id: usize,
    /// Table name.
    pub table_name: String,
    /// The entries it holds in this stage (a split table's part holds a share).
    pub entries: u32,
}

/// A pool of one resource with its users.
#[derive(Clone, Debug, Serialize)]
pub struct PoolJson {
    /// Available in the stage.
    pub size: u32,
    /// Used.
    pub used: u32,
    /// Who uses it.
    pub usages: Vec<UsageJson>,
}

impl PoolJson {
    fn new(u: Use, usages: Vec<UsageJson>) -> Self {
        PoolJson {
            size: u.available,
            used: u.used,
            usages,
        }
    }
}

/// One user of a pool.
#[derive(Clone, Debug, Serialize)]
pub struct UsageJson {
    /// Table, extern or hash unit.
    pub used_by: String,
    /// What for (p4c's names).
    pub used_for: &'static str,
    /// How much.
    pub amount: u32,
}

/// PHV of one gress.
#[derive(Clone, Debug, Serialize)]
pub struct PhvJson {
    /// Which gress.
    pub gress: &'static str,
    /// Containers by width.
    pub containers: Vec<ContainersJson>,
    /// Field allocation.
    pub fields: Vec<FieldPlacement>,
}

/// Containers of one width.
#[derive(Clone, Debug, Serialize)]
pub struct ContainersJson {
    /// Bits.
    pub width: u8,
    /// How many the chip has.
    pub units: u32,
    /// How many are used.
    pub used: u32,
}

impl ContainersJson {
    fn new(width: u8, u: Use) -> Self {
        ContainersJson {
            width,
            units: u.available,
            used: u.used,
        }
    }
}

/// Parser of one gress.
#[derive(Clone, Debug, Serialize)]
pub struct ParserJson {
    /// Which gress.
    pub gress: &'static str,
    /// States used and available.
    pub states: Use,
    /// `drop` or `continue`.
    pub on_error: &'static str,
}

/// Latency of one gress.
#[derive(Clone, Debug, Serialize)]
pub struct LatencyJson {
    /// Which gress.
    pub gress: &'static str,
    /// Total cycles.
    pub cycles: u32,
    /// Parser cycles.
    pub parser: u32,
    /// Cycles per stage.
    pub stages: Vec<u32>,
    /// Deparser cycles.
    pub deparser: u32,
}
