//! The worker's heap cap: a counting allocator that refuses an allocation taking the live heap
//! over the cap.
//!
//! Why not an address-space limit (`prlimit --as`): virtual size counts thread stacks and
//! reservations that are never touched, so the cap would have to be loose and the failure
//! would depend on the machine. Counting live bytes gives the same verdict everywhere. A
//! refused allocation ends the worker through Rust's allocation-error handler (the message
//! `memory allocation of N bytes failed`, then an abort), which the parent reports as a
//! memory-limit hit. The peak is kept too, so a run can say how much any input used.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// The system allocator, counted and capped.
pub struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
/// No cap while 0 (the parent and the tests).
static CAP: AtomicUsize = AtomicUsize::new(0);

/// Refuse allocations that take the live heap over `bytes` (0: no cap).
pub fn set_cap(bytes: usize) {
    CAP.store(bytes, Relaxed);
}

/// Start a new peak at the heap live now.
pub fn reset_peak() {
    PEAK.store(LIVE.load(Relaxed), Relaxed);
}

/// The most live heap since [`reset_peak`] (0 where this allocator is not installed).
pub fn peak() -> usize {
    PEAK.load(Relaxed)
}

impl Counting {
    /// Count `size` more bytes, unless that passes the cap.
    fn take(size: usize) -> bool {
        let cap = CAP.load(Relaxed);
        let live = LIVE.fetch_add(size, Relaxed) + size;
        if cap != 0 && live > cap {
            LIVE.fetch_sub(size, Relaxed);
            return false;
        }
        PEAK.fetch_max(live, Relaxed);
        true
    }
}

// SAFETY: every method forwards to the system allocator with the caller's layout; the counts
// only decide whether to ask it at all.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if !Self::take(layout.size()) {
            return std::ptr::null_mut();
        }
        // SAFETY: the caller's contract for `alloc` is passed on unchanged.
        let p = unsafe { System.alloc(layout) };
        if p.is_null() {
            LIVE.fetch_sub(layout.size(), Relaxed);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if !Self::take(layout.size()) {
            return std::ptr::null_mut();
        }
        // SAFETY: as for `alloc`.
        let p = unsafe { System.alloc_zeroed(layout) };
        if p.is_null() {
            LIVE.fetch_sub(layout.size(), Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from this allocator, so from the system one, with `layout`.
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let grow = new_size.saturating_sub(layout.size());
        if !Self::take(grow) {
            return std::ptr::null_mut();
        }
        // SAFETY: as for `alloc`; `ptr` and `layout` are the caller's block.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if p.is_null() {
            LIVE.fetch_sub(grow, Relaxed);
        } else {
            LIVE.fetch_sub(layout.size().saturating_sub(new_size), Relaxed);
        }
        p
    }
}
