//! What one pipe of a chip offers a program: stage count, per-stage resources, PHV
//! containers and latencies.
//!
//! The chip profile (in `asic-model`) embeds a [`PipeSpec`]; the compiler (`dsl`) allocates
//! against it and the pipe executes with its latencies. It lives here, beside the program
//! format, because the program format is defined in terms of it (container ids index the
//! PHV described here) and because `dsl` may depend on `pipelines` but not on `asic-model`.

use serde::{Deserialize, Serialize};

/// Resources and timing of one match-action pipe (all pipes of a chip are alike).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PipeSpec {
    /// Physical MAU stages in the pipe.
    pub stages: u16,
    /// Resources of each stage (all stages are alike).
    pub stage: StageResources,
    /// PHV containers by width.
    pub phv: PhvSpec,
    /// Latencies in clock cycles.
    pub latency: LatencySpec,
    /// Parser limits.
    pub parser: ParserSpec,
    /// What one stateful ALU can do for one packet.
    pub salu: SaluSpec,
    /// What a meter ALU's configuration can hold.
    pub meter: MeterSpec,
}

/// The meter ALU's configuration registers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MeterSpec {
    /// Width of the signed byte-count adjustment a meter table adds to each packet's length
    /// (two's complement): the adjustments it can hold are `−2^(bits−1) ..= 2^(bits−1) − 1`.
    pub byte_count_adjust_bits: u8,
}

impl MeterSpec {
    /// The byte-count adjustments a meter table can hold.
    pub fn byte_count_adjust_range(&self) -> std::ops::RangeInclusive<i32> {
        // The profile's check keeps the width within 1 to 32 bits.
        let half = 1i64 << (self.byte_count_adjust_bits.clamp(1, 32) - 1);
        (-half) as i32..=(half - 1) as i32
    }
}

/// Limits of the programmable parser.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ParserSpec {
    /// Distinct states a program's parser may have (entries of the parser's match table).
    pub max_states: u16,
    /// States one packet may visit; a longer walk is a parser error.
    pub max_depth: u16,
}

/// Limits of one stateful ALU (the read-modify-write unit beside a register array).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SaluSpec {
    /// Comparisons it can evaluate per packet (the conditions its predicates are built from).
    pub conditions: u8,
    /// Update expressions (predicated ALU operations that may write the register).
    pub updates: u8,
    /// Output expressions (predicated values it can return to the PHV).
    pub outputs: u8,
    /// Widest register element in bits.
    pub max_width_bits: u8,
    /// Whether it has the min/max unit ([`crate::program::MinMax`], JBay's `min8`/`max8`/
    /// `min16`/`max16`); absent means no.
    #[serde(default)]
    pub minmax: bool,
}

/// Per-stage resources that table placement must respect.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StageResources {
    /// Number of SRAM blocks.
    pub sram_blocks: u16,
    /// Words per SRAM block.
    pub sram_depth: u32,
    /// Bits per SRAM word.
    pub sram_width_bits: u16,
    /// Number of TCAM blocks.
    pub tcam_blocks: u16,
    /// Entries per TCAM block.
    pub tcam_depth: u32,
    /// Bits per TCAM entry.
    pub tcam_width_bits: u16,
    /// Logical tables (table ids) per stage.
    pub logical_tables: u16,
    /// Stateful (register) ALUs per stage.
    pub stateful_alus: u16,
    /// Meter ALUs per stage.
    pub meter_alus: u16,
    /// Statistics (counter) ALUs per stage.
    pub stats_alus: u16,
    /// Hash-output bits per stage (feeding exact-match and hash units).
    pub hash_bits: u16,
    /// Gateway (if-condition) units per stage.
    pub gateways: u16,
    /// VLIW action slots per stage: at most one operation per slot.
    pub vliw_slots: u16,
}

/// PHV containers: the registers a packet's fields travel in through the pipe.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PhvSpec {
    /// 8-bit containers.
    pub b8: u16,
    /// 16-bit containers.
    pub b16: u16,
    /// 32-bit containers.
    pub b32: u16,
}

impl PhvSpec {
    /// Total number of containers.
    pub fn total(&self) -> usize {
        self.b8 as usize + self.b16 as usize + self.b32 as usize
    }

    /// Width in bits of container `id`, or `None` if the PHV has no such container.
    /// Containers are numbered 8-bit first, then 16-bit, then 32-bit.
    pub fn width(&self, id: u16) -> Option<u8> {
        let id = id as usize;
        let (b8, b16) = (self.b8 as usize, self.b16 as usize);
        if id < b8 {
            Some(8)
        } else if id < b8 + b16 {
            Some(16)
        } else if id < self.total() {
            Some(32)
        } else {
            None
        }
    }

    /// Total PHV bits.
    pub fn bits(&self) -> u32 {
        8 * self.b8 as u32 + 16 * self.b16 as u32 + 32 * self.b32 as u32
    }
}

/// Latencies, in cycles of the chip clock.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LatencySpec {
    /// From the packet's issue into the pipe until its PHV reaches stage 0.
    pub parser_cycles: u32,
    /// From the last stage until the packet leaves the deparser.
    pub deparser_cycles: u32,
    /// Every stage the packet crosses costs at least this.
    pub stage_base_cycles: u32,
    /// Added to a stage that holds a TCAM (ternary, LPM or range) table.
    pub tcam_extra_cycles: u32,
    /// Added to a stage that uses a stateful ALU.
    pub stateful_extra_cycles: u32,
    /// Added to a stage that uses a meter ALU.
    pub meter_extra_cycles: u32,
}

/// What a stage's contents add to its latency (the features that cost extra cycles).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StageFeatures {
    /// A TCAM table is placed in the stage.
    pub tcam: bool,
    /// A stateful ALU is used in the stage.
    pub stateful: bool,
    /// A meter ALU is used in the stage.
    pub meter: bool,
}

impl LatencySpec {
    /// Latency of one stage with the given features.
    pub fn stage_cycles(&self, f: StageFeatures) -> u32 {
        self.stage_base_cycles
            + if f.tcam { self.tcam_extra_cycles } else { 0 }
            + if f.stateful {
                self.stateful_extra_cycles
            } else {
                0
            }
            + if f.meter { self.meter_extra_cycles } else { 0 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn container_widths_are_numbered_by_class() {
        let p = PhvSpec {
            b8: 2,
            b16: 3,
            b32: 1,
        };
        assert_eq!(p.width(0), Some(8));
        assert_eq!(p.width(1), Some(8));
        assert_eq!(p.width(2), Some(16));
        assert_eq!(p.width(4), Some(16));
        assert_eq!(p.width(5), Some(32));
        assert_eq!(p.width(6), None);
        assert_eq!(p.bits(), 2 * 8 + 3 * 16 + 32);
    }

    #[test]
    fn stage_latency_adds_feature_extras() {
        let l = LatencySpec {
            parser_cycles: 10,
            deparser_cycles: 10,
            stage_base_cycles: 20,
            tcam_extra_cycles: 2,
            stateful_extra_cycles: 4,
            meter_extra_cycles: 4,
        };
        assert_eq!(l.stage_cycles(StageFeatures::default()), 20);
        let all = StageFeatures {
            tcam: true,
            stateful: true,
            meter: true,
        };
        assert_eq!(l.stage_cycles(all), 30);
    }
}
