//! Counters and the optional event trace, for the run outputs.

use crate::Refusal;
use serde::Serialize;

/// Counters of one queue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct QueueCounters {
    /// Packets admitted.
    pub enq_pkts: u64,
    /// Cells admitted.
    pub enq_cells: u64,
    /// Bytes admitted.
    pub enq_bytes: u64,
    /// Packets dequeued.
    pub deq_pkts: u64,
    /// Cells freed by dequeue.
    pub deq_cells: u64,
    /// Bytes dequeued.
    pub deq_bytes: u64,
    /// Packets refused, by [`Refusal`] (index: `reason as usize`).
    pub drops: [u64; Refusal::ALL.len()],
    /// Packets admitted with an ECN mark decision.
    pub ecn_marks: u64,
    /// Packets admitted into PFC headroom.
    pub headroom_pkts: u64,
    /// Largest depth reached, cells.
    pub max_depth_cells: u32,
    /// What-if trimming ([`crate::config::TrimConfig`]): packets refused here and trimmed
    /// into the header queue instead (counted on the queue they were refused by; the header
    /// queue counts them in `enq_pkts`).
    pub trimmed_pkts: u64,
    /// Bytes those packets lost (their length minus what was kept).
    pub trimmed_bytes: u64,
    /// Of `trimmed_pkts`, headers their header queue refused that went back to their sender
    /// ([`crate::config::ReturnToSender`]).
    pub returned_pkts: u64,
}

impl QueueCounters {
    /// Adds `o` (for per-port sums); the maximum depth is the larger.
    pub fn add(&mut self, o: &QueueCounters) {
        self.enq_pkts += o.enq_pkts;
        self.enq_cells += o.enq_cells;
        self.enq_bytes += o.enq_bytes;
        self.deq_pkts += o.deq_pkts;
        self.deq_cells += o.deq_cells;
        self.deq_bytes += o.deq_bytes;
        for (a, b) in self.drops.iter_mut().zip(o.drops) {
            *a += b;
        }
        self.ecn_marks += o.ecn_marks;
        self.headroom_pkts += o.headroom_pkts;
        self.max_depth_cells = self.max_depth_cells.max(o.max_depth_cells);
        self.trimmed_pkts += o.trimmed_pkts;
        self.trimmed_bytes += o.trimmed_bytes;
        self.returned_pkts += o.returned_pkts;
    }
}

/// Counters of one (ingress port, priority).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PgCounters {
    /// XOFF assertions.
    pub xoff: u64,
    /// XON releases.
    pub xon: u64,
    /// Largest count reached, cells.
    pub max_cells: u32,
    /// Largest headroom use, cells.
    pub max_headroom_cells: u32,
}

/// Whole-TM counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TmCounters {
    /// Drops by reason (index: `reason as usize`).
    pub drops: [u64; Refusal::ALL.len()],
    /// Cells ever allocated.
    pub cells_allocated: u64,
    /// Cells ever freed.
    pub cells_freed: u64,
    /// Most cells in use at once.
    pub peak_cells: u32,
    /// PFC pause frames received (calls to `pause`, including quanta 0).
    pub pause_rx: u64,
    /// What-if trimming: packets trimmed instead of refused, and the bytes they lost.
    pub trimmed_pkts: u64,
    /// See `trimmed_pkts`.
    pub trimmed_bytes: u64,
    /// Of `trimmed_pkts`, headers returned to their sender.
    pub returned_pkts: u64,
}

/// What the trace records, when on ([`crate::TrafficManager::set_trace`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum TraceEvent {
    /// A packet entered a queue.
    Enqueue {
        /// Time, ps.
        t: u64,
        /// Egress port.
        port: u16,
        /// Queue.
        queue: u16,
        /// Queue depth after, cells.
        depth_cells: u32,
        /// Cells in use in the buffer after.
        used_cells: u32,
    },
    /// A packet left a queue.
    Dequeue {
        /// Time, ps.
        t: u64,
        /// Egress port.
        port: u16,
        /// Queue.
        queue: u16,
        /// Queue depth after, cells.
        depth_cells: u32,
        /// Cells in use in the buffer after.
        used_cells: u32,
    },
    /// What-if trimming: a packet refused by `queue` was trimmed to `bytes` and admitted
    /// into `to_queue` (recorded after that `Enqueue`).
    Trim {
        /// Time, ps.
        t: u64,
        /// Egress port.
        port: u16,
        /// The queue that refused it.
        queue: u16,
        /// The header queue.
        to_queue: u16,
        /// Bytes kept.
        bytes: u32,
    },
    /// A packet was refused.
    Drop {
        /// Time, ps.
        t: u64,
        /// Egress port.
        port: u16,
        /// Queue.
        queue: u16,
        /// Why.
        reason: Refusal,
    },
    /// The TM asserted (XOFF) or released (XON) a pause towards an ingress port.
    Pfc {
        /// Time, ps.
        t: u64,
        /// Ingress port.
        port: u16,
        /// Priority.
        priority: u8,
        /// XOFF (true) or XON.
        xoff: bool,
    },
    /// A pause frame was received on an egress port.
    PauseRx {
        /// Time, ps.
        t: u64,
        /// Port.
        port: u16,
        /// Priority.
        priority: u8,
        /// Paused until, ps (≤ t: resumed).
        until: u64,
    },
    /// A queue was paused or resumed by queue-level flow control.
    QueuePause {
        /// Time, ps.
        t: u64,
        /// Port.
        port: u16,
        /// Queue.
        queue: u16,
        /// Paused.
        paused: bool,
    },
}
