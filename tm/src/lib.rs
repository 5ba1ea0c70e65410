//! The traffic manager: the shared packet buffer, counted in cells, and the egress queues.
//!
//! Packets are not copied into the TM: the chip keeps their bytes and the TM holds a
//! descriptor ([`QueuedPacket`]) per buffered packet with the cells it occupies. Every cell
//! taken at enqueue is given back exactly once, at dequeue; admission refuses a packet whose
//! cells do not fit, and says why.
//!
//! Crates used, and why: `serde` (the TM dimensions are part of the RON chip profile).

pub mod spec;

use spec::TmSpec;
use std::collections::VecDeque;

/// A buffered packet as the TM sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueuedPacket {
    /// The chip's handle for the packet's bytes.
    pub handle: u32,
    /// Bytes stored.
    pub bytes: u32,
    /// Cells occupied: `ceil(bytes / cell_bytes)`.
    pub cells: u32,
    /// Enqueue time in picoseconds.
    pub enq_time_ps: u64,
    /// Depth of its queue in cells just before it was enqueued.
    pub enq_depth_cells: u32,
}

/// A packet leaving the TM.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dequeued {
    /// The packet.
    pub pkt: QueuedPacket,
    /// The queue it left.
    pub queue: u16,
    /// Depth of its queue in cells just after it left.
    pub deq_depth_cells: u32,
}

/// Why the TM refused a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Refusal {
    /// The shared buffer has fewer free cells than the packet needs.
    BufferFull,
    /// The requested queue does not exist on the port.
    NoSuchQueue,
}

/// One egress queue: a FIFO of packet descriptors and its depth.
#[derive(Debug, Default)]
struct Queue {
    fifo: VecDeque<QueuedPacket>,
    cells: u32,
}

/// The traffic manager of one chip.
///
/// This is the first cut of the TM: one FIFO per port (queue 0) in a shared buffer with no
/// per-queue limits. Per-queue thresholds, pools, schedulers and PFC build on the same
/// accounting.
#[derive(Debug)]
pub struct TrafficManager {
    spec: TmSpec,
    ports: Vec<Queue>,
    used_cells: u32,
    peak_cells: u32,
}

impl TrafficManager {
    /// A TM with `ports` egress ports, all queues empty.
    pub fn new(spec: TmSpec, ports: usize) -> TrafficManager {
        TrafficManager {
            spec,
            ports: (0..ports).map(|_| Queue::default()).collect(),
            used_cells: 0,
            peak_cells: 0,
        }
    }

    /// The dimensions.
    pub fn spec(&self) -> &TmSpec {
        &self.spec
    }

    /// Admit a packet of `bytes` into `queue` of `port`, or say why not.
    pub fn enqueue(
        &mut self,
        port: u16,
        queue: u16,
        handle: u32,
        bytes: u32,
        now_ps: u64,
    ) -> Result<QueuedPacket, Refusal> {
        if queue != 0 {
            return Err(Refusal::NoSuchQueue);
        }
        let cells = self.spec.cells_for(bytes as usize);
        if self.used_cells + cells > self.spec.cells {
            return Err(Refusal::BufferFull);
        }
        let q = &mut self.ports[port as usize];
        let pkt = QueuedPacket {
            handle,
            bytes,
            cells,
            enq_time_ps: now_ps,
            enq_depth_cells: q.cells,
        };
        q.fifo.push_back(pkt);
        q.cells += cells;
        self.used_cells += cells;
        self.peak_cells = self.peak_cells.max(self.used_cells);
        Ok(pkt)
    }

    /// Take the next packet for `port`, freeing its cells.
    pub fn dequeue(&mut self, port: u16) -> Option<Dequeued> {
        let q = &mut self.ports[port as usize];
        let pkt = q.fifo.pop_front()?;
        q.cells -= pkt.cells;
        self.used_cells -= pkt.cells;
        Some(Dequeued {
            pkt,
            queue: 0,
            deq_depth_cells: q.cells,
        })
    }

    /// Whether `port` has packets waiting.
    pub fn has_packets(&self, port: u16) -> bool {
        !self.ports[port as usize].fifo.is_empty()
    }

    /// Cells queued for `port`.
    pub fn port_depth_cells(&self, port: u16) -> u32 {
        self.ports[port as usize].cells
    }

    /// Packets queued for `port`.
    pub fn port_depth_packets(&self, port: u16) -> usize {
        self.ports[port as usize].fifo.len()
    }

    /// Cells in use in the whole buffer.
    pub fn used_cells(&self) -> u32 {
        self.used_cells
    }

    /// The most cells ever in use at once.
    pub fn peak_cells(&self) -> u32 {
        self.peak_cells
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tm(cells: u32) -> TrafficManager {
        TrafficManager::new(
            TmSpec {
                cells,
                cell_bytes: 80,
                queues_per_port: 1,
            },
            2,
        )
    }

    #[test]
    fn packets_occupy_whole_cells() {
        let mut t = tm(10);
        let p = t.enqueue(0, 0, 1, 81, 0).unwrap();
        assert_eq!(p.cells, 2);
        assert_eq!(t.enqueue(1, 0, 2, 80, 0).unwrap().cells, 1);
        assert_eq!(t.used_cells(), 3);
        assert_eq!(t.port_depth_cells(0), 2);
    }

    #[test]
    fn a_full_buffer_refuses_and_dequeue_frees_cells() {
        let mut t = tm(3);
        t.enqueue(0, 0, 1, 160, 0).unwrap();
        assert_eq!(t.enqueue(0, 0, 2, 160, 0), Err(Refusal::BufferFull));
        let d = t.dequeue(0).unwrap();
        assert_eq!((d.pkt.handle, d.deq_depth_cells), (1, 0));
        assert_eq!(t.used_cells(), 0);
        assert_eq!(t.peak_cells(), 2);
        assert!(t.enqueue(0, 0, 3, 240, 0).is_ok());
    }
}
