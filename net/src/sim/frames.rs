//! Frames in flight: recycled buffers, so a run allocates no buffer per packet once warm
//! (the pool grows to the most frames in flight at once, bounded by the network's capacity).

use asic_model::chip::Wire;
use pipelines::time::Time;
use std::ops::Range;

/// Recycled frame buffers.
#[derive(Default)]
pub(crate) struct Pool {
    pub(crate) bufs: Vec<Vec<u8>>,
    free: Vec<u32>,
}

impl Pool {
    pub(crate) fn alloc(&mut self) -> u32 {
        match self.free.pop() {
            Some(i) => i,
            None => {
                self.bufs.push(Vec::with_capacity(1600));
                (self.bufs.len() - 1) as u32
            }
        }
    }

    pub(crate) fn release(&mut self, i: u32) {
        self.bufs[i as usize].clear();
        self.free.push(i);
    }

    pub(crate) fn live(&self) -> usize {
        self.bufs.len() - self.free.len()
    }

    pub(crate) fn allocated(&self) -> usize {
        self.bufs.len()
    }
}

/// Frames a chip sent during one `handle`, delivered after it returns.
pub(crate) struct Outbox<'a> {
    pub(crate) pool: &'a mut Pool,
    pub(crate) out: &'a mut Vec<(u16, Time, u32)>,
}

impl Wire for Outbox<'_> {
    fn transmit(&mut self, port: u16, start: Time, frame: &[u8]) {
        let i = self.pool.alloc();
        self.pool.bufs[i as usize].extend_from_slice(frame);
        self.out.push((port, start, i));
    }

    /// The chip's buffer goes on the link; the pool's empty one takes its place.
    fn transmit_owned(&mut self, port: u16, start: Time, frame: &mut Vec<u8>) {
        let i = self.pool.alloc();
        std::mem::swap(&mut self.pool.bufs[i as usize], frame);
        self.out.push((port, start, i));
    }
}

/// Frames kept for later, each with what is said of it (`M`), their bytes in one buffer: a
/// partition's mail to another, the frames captured for the observer. The buffers keep their
/// capacity, so no allocation per frame once they have grown.
pub(crate) struct FrameLog<M> {
    entries: Vec<(M, Range<usize>)>,
    bytes: Vec<u8>,
}

impl<M> Default for FrameLog<M> {
    fn default() -> Self {
        FrameLog {
            entries: Vec::new(),
            bytes: Vec::new(),
        }
    }
}

impl<M> FrameLog<M> {
    /// Keep `frame` with `meta`.
    pub(crate) fn push(&mut self, meta: M, frame: &[u8]) {
        let at = self.bytes.len();
        self.bytes.extend_from_slice(frame);
        self.entries.push((meta, at..self.bytes.len()));
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The frames in the order kept, with what is said of each.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&M, &[u8])> {
        self.entries
            .iter()
            .map(|(m, r)| (m, &self.bytes[r.clone()]))
    }

    /// Forget every frame (the buffers keep their capacity).
    pub(crate) fn clear(&mut self) {
        self.entries.clear();
        self.bytes.clear();
    }
}
