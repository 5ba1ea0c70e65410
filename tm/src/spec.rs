//! What a chip's traffic manager has: the fixed dimensions of the TM, from the chip profile.
//!
//! These are the chip's numbers (the `tm: ( ... )` block of a profile, each with its public
//! source there). The operator's choices (thresholds, α, schedulers, PFC) are in
//! [`crate::config::TmConfig`].

use serde::{Deserialize, Serialize};
use std::fmt;

/// Most queues a port may have: the scheduler keeps one bit per queue in a `u128`
/// (Tofino2 has 128 queues per port group, bf-drivers `tm_tof2.h`).
pub const MAX_QUEUES_PER_PORT: u16 = 128;

/// Most PFC priorities: a PFC frame carries 8 class-enable bits (IEEE 802.1Qbb).
pub const MAX_PFC_LEVELS: u8 = 8;

/// Traffic-manager dimensions from the chip profile.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TmSpec {
    /// Cells in the shared packet buffer.
    pub cells: u32,
    /// Bytes per cell; a packet of `n` bytes occupies `ceil(n / cell_bytes)` cells.
    pub cell_bytes: u32,
    /// Egress queues per port (at most [`MAX_QUEUES_PER_PORT`]).
    pub queues_per_port: u16,
    /// Shared application pools that queues can be mapped to (Tofino: 4 egress app pools).
    pub app_pools: u8,
    /// PFC priorities per port (802.1Qbb: 8), each with its own ingress accounting.
    pub pfc_levels: u8,
    /// Strict-priority levels of a port scheduler (Tofino: 8, `bf_tm_sched_prio_t`).
    pub sched_priorities: u8,
    /// Granularity of XOFF→XON hysteresis in cells (Tofino: programmed in units of 8 cells).
    pub hysteresis_unit_cells: u32,
    /// Period of the copy of all queue depths that ingress programs read, in picoseconds.
    pub depth_export_period_ps: u64,
    /// Delay from taking that copy to ingress seeing it, in picoseconds.
    pub depth_export_delay_ps: u64,
    /// Longest time a port may take to stop sending a priority after a PFC frame reached it,
    /// in pause quanta (512 bit times) at the port's rate.
    pub pause_reaction_quanta: u32,
}

/// A [`TmSpec`] field with an impossible value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecError {
    /// The field, as named in the profile's `tm` block.
    pub field: &'static str,
    /// Why it is refused.
    pub reason: String,
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid `tm.{}`: {}", self.field, self.reason)
    }
}

impl std::error::Error for SpecError {}

impl TmSpec {
    /// Cells a packet of `bytes` occupies.
    pub fn cells_for(&self, bytes: usize) -> u32 {
        (bytes as u64).div_ceil(self.cell_bytes as u64) as u32
    }

    /// Buffer size in bytes.
    pub fn buffer_bytes(&self) -> u64 {
        self.cells as u64 * self.cell_bytes as u64
    }

    /// Rejects impossible dimensions, naming the field.
    pub fn validate(&self) -> Result<(), SpecError> {
        let bad = |field, reason: &str| {
            Err(SpecError {
                field,
                reason: reason.to_string(),
            })
        };
        if self.cells == 0 {
            return bad("cells", "must be greater than 0");
        }
        if self.cell_bytes == 0 {
            return bad("cell_bytes", "must be greater than 0");
        }
        if self.queues_per_port == 0 || self.queues_per_port > MAX_QUEUES_PER_PORT {
            return bad("queues_per_port", "must be between 1 and 128");
        }
        if self.app_pools == 0 {
            return bad("app_pools", "must be greater than 0");
        }
        if self.pfc_levels == 0 || self.pfc_levels > MAX_PFC_LEVELS {
            return bad("pfc_levels", "must be between 1 and 8");
        }
        if self.sched_priorities == 0 {
            return bad("sched_priorities", "must be greater than 0");
        }
        if self.hysteresis_unit_cells == 0 {
            return bad("hysteresis_unit_cells", "must be greater than 0");
        }
        if self.depth_export_period_ps == 0 {
            return bad("depth_export_period_ps", "must be greater than 0");
        }
        Ok(())
    }

    /// A small spec for tests and experiments: `cells` cells of `cell_bytes`, `queues` queues
    /// per port, and the Tofino values for everything else (4 pools, 8 PFC levels, 8 priorities,
    /// 8-cell hysteresis unit), a 1 µs depth export with no delay and a 2-quanta pause reaction.
    pub fn small(cells: u32, cell_bytes: u32, queues: u16) -> TmSpec {
        TmSpec {
            cells,
            cell_bytes,
            queues_per_port: queues,
            app_pools: 4,
            pfc_levels: 8,
            sched_priorities: 8,
            hysteresis_unit_cells: 8,
            depth_export_period_ps: 1_000_000,
            depth_export_delay_ps: 0,
            pause_reaction_quanta: 2,
        }
    }
}
