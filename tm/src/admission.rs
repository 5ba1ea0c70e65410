//! Admission of a packet's shared-pool cells: one trait, and the built-in policies.
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
use std::fmt;

/// α in fixed point: `alpha = raw / 65536`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Alpha(pub u32);

impl Alpha {
    /// Fixed-point scale.
    pub const ONE: u32 = 1 << 16;

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

    /// The value as a float.
    pub fn to_f64(self) -> f64 {
        self.0 as f64 / Self::ONE as f64
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
    /// few lookups per admission; `on_dequeue` a call per packet). The default, everything,
    /// is right for any policy.
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
        match ctx.static_limit {
            Some(limit)
                if ctx.queue_shared_cells as u64 + ctx.shared_cells_needed as u64
                    > limit as u64 =>
            {
                Err(Refusal::QueueLimit)
            }
            _ => Ok(()),
        }
    }
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
        if ctx.below(ctx.alpha, 1, 1) {
            Ok(())
        } else {
            Err(Refusal::DynamicThreshold)
        }
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

/// The built-in policy for a configuration choice.
pub fn builtin(p: crate::config::AdmissionPolicy) -> Box<dyn Admission> {
    use crate::config::AdmissionPolicy as P;
    match p {
        P::Static => Box::new(StaticLimit),
        P::DynamicThreshold => Box::new(DynamicThreshold),
        P::FlexibleBuffer => Box::new(FlexibleBuffer {
            single_queue: false,
        }),
        P::FlexibleBufferSingleQueue => Box::new(FlexibleBuffer { single_queue: true }),
    }
}
