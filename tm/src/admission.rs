//! Admission of a packet's shared-pool cells: one trait, the built-in policies, and
//! [`AdmissionPolicy`], the operator's choice among them (`config` uses it and re-exports it;
//! this module uses nothing of `config`, so the two do not depend on each other).
//!
//! The TM decides everything that does not depend on the policy: a packet whose cells fit in
//! its queue's private minimum is admitted without asking; a lossless packet (PFC on its
//! ingress port and priority) is governed by PFC, not by the policy; the pool's size and the
//! physical buffer are hard limits checked after the policy. The policy sees an
//! [`AdmissionContext`] built from running counters (O(1)) and answers admit or refuse.
//!
//! Readings (see also `lib.rs`):
//! - `B` is the size of the queue's shared pool and `Q(t)` the pool's shared cells in use;
//!   private minimums and headroom are outside both (bf-drivers: `D(t) = (Size − U(t)) · BAF`,
//!   "U(t): cells used by all queues of the pool").
//! - "Admit while below": the queue's shared cells *before* the packet are compared with the
//!   threshold, `q < T`. So a saturated queue stops at the first depth `≥ T`, at most one
//!   packet above the fixed point (one saturated DT queue: `αB/(1+α)` within one packet).
//! - All thresholds are compared exactly in integers: α is fixed point (1/65536), γ and `1/N`
//!   stay fractions, products are `u128`.

use crate::Refusal;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Which admission algorithm decides a packet's shared-pool cells.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum AdmissionPolicy {
    /// A fixed cap per queue on its shared cells (the queue's `static_limit_cells`).
    Static,
    /// Dynamic Threshold (Choudhury–Hahne): admit while the queue's shared cells are below
    /// `α · (B − Q(t))` of its pool.
    #[default]
    DynamicThreshold,
    /// Flexible Buffer (Apostolaki et al. 2021, Eq. 4): `α_c · γ · (1/N_p) · (B − Q(t))`.
    FlexibleBuffer,
    /// Flexible Buffer for one queue per port: γ = 1, N = all congested queues, and α from the
    /// packet's class, the class of its colour ([`crate::EnqueueRequest::color`],
    /// [`crate::config::ColorConfig::classes`]), so packets of one queue face different
    /// thresholds.
    FlexibleBufferSingleQueue,
}

/// α in fixed point: `alpha = raw / 65536`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Alpha(pub u32);

impl Alpha {
    /// Fixed-point scale.
    pub const ONE: u32 = 1 << 16;

    /// α as a float.
    pub fn to_f64(self) -> f64 {
        self.0 as f64 / Self::ONE as f64
    }

    /// α from a float, rounded to 1/65536; `None` unless `0 < a ≤ 65535` (and not below 1/65536).
    pub fn from_f64(a: f64) -> Option<Alpha> {
        if !a.is_finite() || a <= 0.0 || a > 65535.0 {
            return None;
        }
        let raw = (a * Self::ONE as f64).round();
        if raw < 1.0 {
            return None;
        }
        Some(Alpha(raw as u32))
    }
}

/// A fraction `num/den` (FB's γ).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Share {
    /// Numerator.
    pub num: u64,
    /// Denominator (> 0).
    pub den: u64,
}

impl Share {
    /// 1.
    pub const ONE: Share = Share { num: 1, den: 1 };
}

/// What an admission policy sees of the TM when a packet needs shared cells.
#[derive(Clone, Copy, Debug)]
pub struct AdmissionContext {
    /// Now, picoseconds.
    pub now_ps: u64,
    /// Egress port and queue.
    pub port: u16,
    /// Queue index on the port.
    pub queue: u16,
    /// Cells of the packet.
    pub pkt_cells: u32,
    /// Cells that would come from the pool (the packet's cells above the private minimum).
    pub shared_cells_needed: u32,
    /// The queue's cells outside headroom, before the packet.
    pub queue_cells: u32,
    /// The queue's shared cells (above its private minimum) before the packet.
    pub queue_shared_cells: u32,
    /// Packets in the queue before the packet.
    pub queue_pkts: u32,
    /// B: the size of the queue's pool, cells.
    pub pool_cells: u32,
    /// Q(t): shared cells in use in that pool.
    pub pool_used: u32,
    /// α of the class in force (the queue's class; the packet's class for single-queue FB).
    pub alpha: Alpha,
    /// Buffer priority of that class.
    pub priority: u8,
    /// Congested (non-empty) queues of that priority in the buffer, counting this queue.
    pub congested_in_priority: u32,
    /// Congested queues in the buffer, counting this queue.
    pub congested_total: u32,
    /// The queue's share of its port's service (FB's γ), counting this queue as backlogged;
    /// [`Share::ONE`] for a policy that does not need it ([`Needs::gamma`]).
    pub gamma: Share,
    /// The queue's static cap on shared cells, if any.
    pub static_limit: Option<u32>,
}

impl AdmissionContext {
    /// `B − Q(t)`.
    pub fn remaining(&self) -> u64 {
        self.pool_cells.saturating_sub(self.pool_used) as u64
    }

    /// Whether `queue_shared_cells < α · (num/den) · (B − Q)`, exactly.
    pub fn below(&self, alpha: Alpha, num: u64, den: u64) -> bool {
        let lhs = self.queue_shared_cells as u128 * den as u128 * Alpha::ONE as u128;
        let rhs = alpha.0 as u128 * num as u128 * self.remaining() as u128;
        lhs < rhs
    }
}

/// The parts of the TM's state an [`Admission`] policy reads beyond the counters every
/// [`AdmissionContext`] carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Needs {
    /// [`AdmissionContext::gamma`] (otherwise [`Share::ONE`]).
    pub gamma: bool,
    /// [`Admission::on_dequeue`] calls (otherwise none are made).
    pub dequeues: bool,
}

impl Needs {
    /// Everything: γ and every dequeue.
    pub const ALL: Needs = Needs {
        gamma: true,
        dequeues: true,
    };
    /// Nothing beyond the context's counters.
    pub const NONE: Needs = Needs {
        gamma: false,
        dequeues: false,
    };
}

/// An admission algorithm. Implement it to add ABM, LQD-without-push-out, etc.
/// and install it with [`crate::TrafficManager::set_admission`].
pub trait Admission: fmt::Debug + Send {
    /// A short name for reports.
    fn name(&self) -> &'static str;
    /// Whether the packet may take `ctx.shared_cells_needed` cells of its pool. The TM checks
    /// the pool's size itself after an `Ok`.
    fn admit(&mut self, ctx: &AdmissionContext) -> Result<(), Refusal>;
    /// What the policy reads and wants told, asked once when it is installed: the TM skips
    /// the per-packet work behind whatever the policy leaves out (γ costs the scheduler a
    /// sum over the busy queues of the level per admission; `on_dequeue` a call per packet).
    /// The default, everything, is right for any policy.
    fn needs(&self) -> Needs {
        Needs::ALL
    }
    /// Called after cells left a queue (for policies with state of their own), if
    /// [`Needs::dequeues`].
    fn on_dequeue(&mut self, _port: u16, _queue: u16, _cells: u32, _now_ps: u64) {}
}

/// Static per-queue caps.
#[derive(Clone, Copy, Debug, Default)]
pub struct StaticLimit;

impl Admission for StaticLimit {
    fn name(&self) -> &'static str {
        "static"
    }
    fn needs(&self) -> Needs {
        Needs::NONE
    }
    /// Admit while the queue's shared cells after the packet stay within its cap.
    fn admit(&mut self, ctx: &AdmissionContext) -> Result<(), Refusal> {
        static_admits(
            ctx.queue_shared_cells,
            ctx.shared_cells_needed,
            ctx.static_limit,
        )
        .then_some(())
        .ok_or(Refusal::QueueLimit)
    }
}

/// Static's decision: whether `queue_shared_cells + shared_cells_needed` stay within the
/// queue's cap (no cap: always).
#[inline]
pub(crate) fn static_admits(
    queue_shared_cells: u32,
    shared_cells_needed: u32,
    limit: Option<u32>,
) -> bool {
    limit.is_none_or(|l| queue_shared_cells as u64 + shared_cells_needed as u64 <= l as u64)
}

/// Dynamic Threshold's decision: whether `queue_shared_cells < α · (B − Q)`, exactly.
///
/// [`AdmissionContext::below`]`(α, 1, 1)` in `u64`: the left side is below 2^48 (a `u32`
/// times 2^16) and the right side below 2^64 (α's raw value and `B − Q` are `u32`s), so
/// neither product can overflow.
#[inline]
pub(crate) fn dt_admits(
    queue_shared_cells: u32,
    alpha: Alpha,
    pool_cells: u32,
    pool_used: u32,
) -> bool {
    let lhs = queue_shared_cells as u64 * Alpha::ONE as u64;
    let rhs = alpha.0 as u64 * pool_cells.saturating_sub(pool_used) as u64;
    lhs < rhs
}

/// A static limit of `limit` cells for a packet allowed `eighths`/8 of it (a colour drop
/// limit), rounded down.
#[inline]
pub(crate) fn color_limit(limit: u32, eighths: u8) -> u32 {
    (limit as u64 * eighths as u64 / 8) as u32
}

/// [`dt_admits`] for a yellow or red packet under a colour drop limit of `eighths`/8 of
/// the threshold: whether `queue_shared_cells < (eighths/8) · α · (B − Q)`, exactly (the
/// right side is below 2^67, in `u128`).
#[inline]
pub(crate) fn dt_admits_eighths(
    queue_shared_cells: u32,
    alpha: Alpha,
    eighths: u8,
    pool_cells: u32,
    pool_used: u32,
) -> bool {
    let lhs = queue_shared_cells as u128 * Alpha::ONE as u128 * 8;
    let rhs = alpha.0 as u128 * eighths as u128 * pool_cells.saturating_sub(pool_used) as u128;
    lhs < rhs
}

/// Dynamic Threshold: `T = α · (B − Q(t))`.
#[derive(Clone, Copy, Debug, Default)]
pub struct DynamicThreshold;

impl Admission for DynamicThreshold {
    fn name(&self) -> &'static str {
        "dt"
    }
    fn needs(&self) -> Needs {
        Needs::NONE
    }
    fn admit(&mut self, ctx: &AdmissionContext) -> Result<(), Refusal> {
        dt_admits(
            ctx.queue_shared_cells,
            ctx.alpha,
            ctx.pool_cells,
            ctx.pool_used,
        )
        .then_some(())
        .ok_or(Refusal::DynamicThreshold)
    }
}

/// Flexible Buffer: `T = α_c · γ · (1/N_p) · (B − Q(t))` (multi-queue), or with `γ = 1` and
/// `N` = every congested queue (single-queue variant).
#[derive(Clone, Copy, Debug, Default)]
pub struct FlexibleBuffer {
    /// The single-queue-per-port variant.
    pub single_queue: bool,
}

impl Admission for FlexibleBuffer {
    fn name(&self) -> &'static str {
        if self.single_queue {
            "fb-single-queue"
        } else {
            "fb"
        }
    }
    /// The single-queue variant takes γ = 1.
    fn needs(&self) -> Needs {
        Needs {
            gamma: !self.single_queue,
            ..Needs::NONE
        }
    }
    fn admit(&mut self, ctx: &AdmissionContext) -> Result<(), Refusal> {
        let (gamma, n) = if self.single_queue {
            (Share::ONE, ctx.congested_total.max(1))
        } else {
            (ctx.gamma, ctx.congested_in_priority.max(1))
        };
        if ctx.below(ctx.alpha, gamma.num, gamma.den * n as u64) {
            Ok(())
        } else {
            Err(Refusal::FlexibleThreshold)
        }
    }
}

/// The policy a TM runs. The built-in Static and Dynamic Threshold decisions are made inline
/// from the TM's counters ([`static_admits`], [`dt_admits`]: the arithmetic their trait
/// implementations use), without building an [`AdmissionContext`] or calling through the
/// trait object per packet; any other policy (the Flexible Buffers, plug-ins) is asked.
#[derive(Debug)]
pub(crate) enum Policy {
    /// [`StaticLimit`], inline.
    Static,
    /// [`DynamicThreshold`], inline.
    DynamicThreshold,
    /// Asked with a context; `needs` is its answer to [`Admission::needs`], asked once.
    Asked {
        policy: Box<dyn Admission>,
        needs: Needs,
    },
}

impl Policy {
    /// The built-in policy for a configuration choice.
    pub fn builtin(p: AdmissionPolicy) -> Policy {
        use AdmissionPolicy as P;
        match p {
            P::Static => Policy::Static,
            P::DynamicThreshold => Policy::DynamicThreshold,
            P::FlexibleBuffer | P::FlexibleBufferSingleQueue => Policy::asked(builtin(p)),
        }
    }

    /// A policy asked through the trait (a plug-in).
    pub fn asked(policy: Box<dyn Admission>) -> Policy {
        let needs = policy.needs();
        Policy::Asked { policy, needs }
    }

    /// Its name for reports.
    pub fn name(&self) -> &'static str {
        match self {
            Policy::Static => StaticLimit.name(),
            Policy::DynamicThreshold => DynamicThreshold.name(),
            Policy::Asked { policy, .. } => policy.name(),
        }
    }
}

/// The built-in policy for a configuration choice.
pub fn builtin(p: AdmissionPolicy) -> Box<dyn Admission> {
    use AdmissionPolicy as P;
    match p {
        P::Static => Box::new(StaticLimit),
        P::DynamicThreshold => Box::new(DynamicThreshold),
        P::FlexibleBuffer => Box::new(FlexibleBuffer {
            single_queue: false,
        }),
        P::FlexibleBufferSingleQueue => Box::new(FlexibleBuffer { single_queue: true }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `dt_admits` in `u64` agrees with the `u128` comparison at the extremes of its inputs.
    #[test]
    fn dt_in_u64_is_exact() {
        let edges = [0, 1, 2, 65_535, 65_536, 1 << 31, u32::MAX - 1, u32::MAX];
        for &shared in &edges {
            for &alpha in &[1, 65_536, 3 << 15, u32::MAX] {
                for &size in &edges {
                    for &used in &edges {
                        let ctx = AdmissionContext {
                            now_ps: 0,
                            port: 0,
                            queue: 0,
                            pkt_cells: 1,
                            shared_cells_needed: 1,
                            queue_cells: shared,
                            queue_shared_cells: shared,
                            queue_pkts: 1,
                            pool_cells: size,
                            pool_used: used,
                            alpha: Alpha(alpha),
                            priority: 0,
                            congested_in_priority: 1,
                            congested_total: 1,
                            gamma: Share::ONE,
                            static_limit: None,
                        };
                        assert_eq!(
                            dt_admits(shared, Alpha(alpha), size, used),
                            ctx.below(Alpha(alpha), 1, 1),
                            "{shared} {alpha} {size} {used}"
                        );
                    }
                }
            }
        }
    }
}
