//! What a chip's traffic manager has: the shared buffer in cells and the queues per port.

use serde::{Deserialize, Serialize};

/// Traffic-manager dimensions from the chip profile.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TmSpec {
    /// Cells in the shared packet buffer.
    pub cells: u32,
    /// Bytes per cell; a packet of `n` bytes occupies `ceil(n / cell_bytes)` cells.
    pub cell_bytes: u32,
    /// Egress queues per port.
    pub queues_per_port: u16,
}

impl TmSpec {
    /// Cells a packet of `bytes` occupies.
    pub fn cells_for(&self, bytes: usize) -> u32 {
        (bytes as u64).div_ceil(self.cell_bytes as u64) as u32
    }

    /// Buffer size in bytes.
    pub fn buffer_bytes(&self) -> u64 {
        self.cells as u64 * self.cell_bytes as u64
    }
}
