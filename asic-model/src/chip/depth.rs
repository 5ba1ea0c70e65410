//! Published queue depths (Tofino2's ghost thread): when the ingress program reads queue
//! depths (`ExternCall::QueueDepth`), the chip keeps a [`DepthExport`]: the TM's snapshot of
//! every depth at each `k · depth_export_period_ps`, in force at every ingress pipe from
//! `depth_export_delay_ps` later. A read sees the snapshot in force when the packet is in the
//! reading table's stage (the gress runs later, at its exit). Reads take no issue slot and no
//! stage unit.
//!
//! Depths change only at TM enqueues and dequeues, so the chip lets the export capture the
//! queues that changed just before each of them ([`Chip::before_tm_change`]), when a snapshot
//! instant has passed since the previous one: no periodic event, and an idle chip costs nothing (with no change
//! since, a read is the TM as it is; with none ever, 0). A chip whose program reads no depth
//! keeps no export. Apart from the life of a packet because it is a view of the TM, not a
//! step of it: ingress is handed a [`PublishedDepths`].

use super::Chip;
use pipelines::mau::DepthView;
use pipelines::time::Time;
use tm::export::DepthExport;
use tm::TrafficManager;

/// What an ingress pipe sees of the published queue depths.
pub(super) struct PublishedDepths<'a> {
    pub(super) export: Option<&'a DepthExport>,
    pub(super) tm: &'a TrafficManager,
}

impl DepthView for PublishedDepths<'_> {
    fn depth_cells(&self, port: u16, queue: u16, at: Time) -> u32 {
        self.export
            .map_or(0, |e| e.read(self.tm, port, queue, at.ps()))
    }

    fn empty_queues(&self, port: u16, queues: u16, at: Time) -> u128 {
        match self.export {
            Some(e) => e.empty_queues(self.tm, port, queues, at.ps()),
            None => tm::export::first_bits(queues as usize),
        }
    }
}

impl Chip {
    /// The queue depths published to ingress (`None`: the ingress program reads none).
    pub fn depth_export(&self) -> Option<&DepthExport> {
        self.depths.as_ref()
    }

    /// The TM's depths may change at `now`: let the depth export capture what snapshots
    /// saw of them before. Inlined: a chip without an export (its program reads no depth)
    /// pays one test per TM change.
    #[inline]
    pub(super) fn before_tm_change(&mut self, now: Time) {
        if let Some(d) = &mut self.depths {
            d.before_change(&mut self.tm, now.ps());
        }
    }
}
