//! The traffic manager's integration tests, in one binary (one link instead of three):
//! `acceptance` (the papers' figures and the PFC behaviour, expectations computed from their
//! formulas), `properties` (proptest: conservation of cells, no push-out, FIFO per queue,
//! determinism) and `units` (schedulers, ECN, depth export, configuration, the profiles' `tm`
//! blocks).

mod acceptance;
mod properties;
mod units;

use tm::EnqueueRequest;

/// A request for `bytes` to (`port`, `queue`), everything else default.
fn req(port: u16, queue: u16, bytes: u32, handle: u32) -> EnqueueRequest {
    EnqueueRequest {
        port,
        queue,
        bytes,
        handle,
        ..EnqueueRequest::default()
    }
}
