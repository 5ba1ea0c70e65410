//! What the externs of a gress keep between packets ([`ExternState`]), and what they need
//! to know of the packet being processed ([`PacketCtx`], with the chip's read-only
//! [`DepthView`] of the queue depths the TM publishes to ingress).

use crate::counter::CounterBank;
use crate::hash::HashEngine;
use crate::meter::MeterBank;
use crate::program::ControlProgram;
use crate::salu::RegisterBank;
use crate::time::{Clock, Time};
use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;

/// The state of a gress's externs: register arrays, meters, counters, hash units and the
/// random number generator, indexed like the program's arrays.
pub struct ExternState {
    /// One per [`ControlProgram::registers`].
    pub registers: Vec<RegisterBank>,
    /// One per [`ControlProgram::meters`].
    pub meters: Vec<MeterBank>,
    /// One per [`ControlProgram::counters`].
    pub counters: Vec<CounterBank>,
    /// One per [`ControlProgram::hashes`].
    pub hashes: Vec<HashEngine>,
    /// The gress's generator for `Random` (ChaCha8, seeded at load).
    pub rng: ChaCha8Rng,
}

impl ExternState {
    /// Every extern of `control` in its initial state (registers at their `init`, meters
    /// unconfigured, counters at 0), and the generator seeded with `seed`. `control` is
    /// verified: its CRC parameters fit.
    pub fn new(c: &ControlProgram, seed: u64) -> ExternState {
        ExternState {
            registers: c
                .registers
                .iter()
                .map(|r| RegisterBank::new(r.size, r.width, r.init))
                .collect(),
            meters: c
                .meters
                .iter()
                .map(|m| MeterBank::new(m.size, m.unit, m.byte_count_adjust))
                .collect(),
            counters: c
                .counters
                .iter()
                .map(|k| CounterBank::new(k.size as usize, k.kind))
                .collect(),
            hashes: c
                .hashes
                .iter()
                .map(|h| HashEngine::new(&h.algorithm).expect("verified: CRC parameters fit"))
                .collect(),
            rng: ChaCha8Rng::seed_from_u64(seed),
        }
    }
}

/// The queue depths the traffic manager publishes to ingress (Tofino2's ghost thread), as
/// [`crate::program::ExternCall::QueueDepth`] reads them. The chip implements it; the gress only reads.
pub trait DepthView {
    /// Depth in cells of `queue` of egress port `port` in the copy in force at time `at`:
    /// the snapshot taken at the last multiple of the export period at or before
    /// `at − delay` (0 before the first one is visible, and for a port or queue the chip
    /// does not have). `at` may be in the recent past (a gress runs at its exit cycle).
    fn depth_cells(&self, port: u16, queue: u16, at: Time) -> u32;

    /// Bit `q` set for each queue `q < queues.min(128)` of `port` whose depth in the copy in
    /// force at `at` is 0 (as [`DepthView::depth_cells`] reads it).
    fn empty_queues(&self, port: u16, queues: u16, at: Time) -> u128 {
        (0..queues.min(128))
            .filter(|&q| self.depth_cells(port, q, at) == 0)
            .fold(0, |m, q| m | 1u128 << q)
    }
}

/// No published depths: every read is 0. For egress (which never reads them) and for a
/// gress run outside a chip.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoDepths;

impl DepthView for NoDepths {
    fn depth_cells(&self, _port: u16, _queue: u16, _at: Time) -> u32 {
        0
    }
}

/// What the externs need to know about the packet being processed.
#[derive(Clone, Copy)]
pub struct PacketCtx<'a> {
    /// Packet length in bytes as stored (no FCS): what byte counters and meters count.
    pub bytes: u32,
    /// The cycle the packet was issued into the gress.
    pub issue_cycle: u64,
    /// The pipe clock.
    pub clock: Clock,
    /// Cycles from issue to the entry of each stage.
    pub stage_entry: &'a [u32],
    /// The queue depths published to ingress.
    pub depths: &'a dyn DepthView,
}

impl std::fmt::Debug for PacketCtx<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PacketCtx")
            .field("bytes", &self.bytes)
            .field("issue_cycle", &self.issue_cycle)
            .field("clock", &self.clock)
            .field("stage_entry", &self.stage_entry)
            .finish_non_exhaustive()
    }
}

impl PacketCtx<'_> {
    /// When the packet enters stage `s`: the time a stage's meter (or queue-depth read)
    /// sees it.
    #[inline]
    pub fn stage_time(&self, s: u16) -> Time {
        let off = self.stage_entry.get(s as usize).copied().unwrap_or(0);
        self.clock.time_of(self.issue_cycle + off as u64)
    }
}
