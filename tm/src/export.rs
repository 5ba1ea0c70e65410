//! The periodic copy of all queue depths that ingress programs read (Tofino2's "ghost thread";
//! on Tofino-1 the FB paper builds the same with pktgen SYNC packets).
//!
//! The chip owns a [`DepthExport`]: it takes a snapshot of the TM at every multiple of the
//! profile's `depth_export_period_ps` and makes it visible `depth_export_delay_ps` later. An
//! ingress program reading a depth at time `t` sees the newest snapshot published at or before
//! `t`. Buffers are recycled: no allocation after the first few periods.

use crate::spec::TmSpec;
use crate::TrafficManager;
use std::collections::VecDeque;

/// Periodic, delayed copy of every queue depth (cells), indexed `port * queues_per_port + queue`.
#[derive(Clone, Debug)]
pub struct DepthExport {
    period_ps: u64,
    delay_ps: u64,
    next_snapshot_ps: u64,
    in_flight: VecDeque<(u64, Vec<u32>)>,
    visible: Vec<u32>,
    visible_since_ps: Option<u64>,
    spare: Vec<Vec<u32>>,
    qpp: usize,
}

impl DepthExport {
    /// An export with the spec's period and delay for `ports` ports; nothing visible yet
    /// (reads return 0).
    pub fn new(spec: &TmSpec, ports: usize) -> DepthExport {
        DepthExport {
            period_ps: spec.depth_export_period_ps.max(1),
            delay_ps: spec.depth_export_delay_ps,
            next_snapshot_ps: 0,
            in_flight: VecDeque::new(),
            visible: vec![0; ports * spec.queues_per_port as usize],
            visible_since_ps: None,
            spare: Vec::new(),
            qpp: spec.queues_per_port as usize,
        }
    }

    /// When the chip must next call [`DepthExport::advance`]: the next snapshot or publication.
    pub fn next_event_ps(&self) -> u64 {
        match self.in_flight.front() {
            Some(&(t, _)) => t.min(self.next_snapshot_ps),
            None => self.next_snapshot_ps,
        }
    }

    /// Bring the export up to `now`: take the snapshot due at or before `now` (from the TM as
    /// it is now: call this before changing the TM at `now`), publish those whose delay has
    /// passed.
    pub fn advance(&mut self, tm: &TrafficManager, now_ps: u64) {
        while self.next_snapshot_ps <= now_ps {
            let mut buf = self.spare.pop().unwrap_or_default();
            tm.snapshot_into(&mut buf);
            self.in_flight
                .push_back((self.next_snapshot_ps + self.delay_ps, buf));
            // A chip that slept through several periods gets one snapshot (the TM has not
            // changed in between, or it would have called us).
            let periods = (now_ps - self.next_snapshot_ps) / self.period_ps + 1;
            self.next_snapshot_ps += periods * self.period_ps;
        }
        while let Some(&(t, _)) = self.in_flight.front() {
            if t > now_ps {
                break;
            }
            let (t, buf) = self.in_flight.pop_front().expect("front exists");
            let old = std::mem::replace(&mut self.visible, buf);
            self.spare.push(old);
            self.visible_since_ps = Some(t);
        }
    }

    /// The depth of `queue` on `port` that ingress sees, cells.
    pub fn read(&self, port: u16, queue: u16) -> u32 {
        self.visible
            .get(port as usize * self.qpp + queue as usize)
            .copied()
            .unwrap_or(0)
    }

    /// All visible depths.
    pub fn visible(&self) -> &[u32] {
        &self.visible
    }

    /// When the visible copy was published (`None`: nothing yet).
    pub fn visible_since_ps(&self) -> Option<u64> {
        self.visible_since_ps
    }
}
