//! Published queue depths (the ghost thread): what an ingress program reads through
//! `ExternCall::QueueDepth` is the TM's snapshot of every depth at each
//! `k · depth_export_period_ps`, in force at every ingress pipe from `depth_export_delay_ps`
//! later, kept in a [`DepthExport`].
//!
//! Apart from the life of a packet because it is a view of the TM, not a step of it: the
//! chip hands ingress a [`PublishedDepths`] and lets the export capture the TM just before
//! each enqueue and dequeue. The rules are in the parent module's comment.

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
            d.before_change(&self.tm, now.ps());
        }
    }
}
