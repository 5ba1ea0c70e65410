//! The match-action stages: walk the control flow through gateways and tables, running the
//! actions that match.
//!
//! Nodes are visited in stage order (the verifier guarantees that every path goes forward
//! in stages), so walking the graph gives the same result as the stages running one after
//! another, each seeing the PHV the previous stage produced. An action's operations read
//! the PHV as it was before any of them writes: one VLIW instruction, executed by the
//! per-container ALUs in parallel.
//!
//! The externs an action drives (stateful ALUs, meters, counters, hash units, the random
//! number generator) read the PHV as it was before the action too, and their outputs are
//! written together with the operations' results. Their state lives in [`ExternState`];
//! what they need to know about the packet (its length, and when it is in each stage, for
//! meters and queue-depth reads) comes in a [`PacketCtx`], with the chip's read-only
//! [`DepthView`] of the queue depths the TM publishes to ingress.
//!
//! Three parts, as on the chip: what the externs keep (`externs`), instruction decode when
//! the gress loads (`decode`), and execution per packet (`execute`).
//!
//! Actions are decoded when the gress loads ([`ControlPlan`]). The fast path runs a
//! decoded action operation by operation, each writing at once, with its `Set`s of action
//! data and constants written from the table entry afterwards; the reference is the
//! general path ([`run_action`]), which computes every result before writing any. They
//! agree (a property test compares them on random actions and layouts) because:
//! - an action runs as micro-ops only if it drives no extern and none of its operations
//!   reads a container an earlier one writes, by [`crate::dataflow`]'s reads and writes: each
//!   then reads what it would have read before the action;
//! - the entry's `Set`s go last only if no other operation writes their bits (or the last
//!   write of a bit could change), and they read nothing;
//! - a field's slices hold distinct container bits (the verifier refuses others), so a
//!   wide `Set` split slice by slice writes what [`crate::phv::Phv::set`] writes.

mod decode;
mod execute;
mod externs;
#[cfg(test)]
mod tests;

pub use decode::{ActionPlan, ControlPlan};
pub use execute::{run_action, run_control, ControlStats};
pub use externs::{DepthView, ExternState, NoDepths, PacketCtx};
