//! Control-plane operations scheduled in simulated time ([`Chip::schedule_control`]): when
//! each takes effect, what the reads among them returned, and the ones refused when they
//! ran ([`ControlFailure`]; the bench and the network runtime stop a run at the first).
//! (Operations applied at once are in `crate::control_plane`.)
//!
//! An operation affects exactly the packets that reach the stage holding its table, register
//! or meter at or after its time. A gress runs when the packet leaves it, so the operation is
//! applied `latency − (cycles before that stage)` cycles after its time, before the packets
//! leaving then ([`ChipEvent::Control`]). A read is taken the same way, so it sees exactly
//! the packets that reached the stage of what it reads before its time; it is recorded with
//! that time and its cycle ([`Chip::control_reads`]), a meter's buckets as at that time.

use super::{Chip, ChipEvent};
use crate::kernel::Schedule;
use pipelines::control::ResolvedControlOp;
use pipelines::program::Gress;
use pipelines::readout::ControlRead;
use pipelines::time::Time;

/// Scheduled operations, what the reads returned, and the operations refused.
#[derive(Default)]
pub(super) struct ScheduledControl {
    /// Scheduled operations, with the time each was scheduled for, by
    /// [`ChipEvent::Control`]'s index; taken when they run.
    ops: Vec<Option<(Time, ResolvedControlOp)>>,
    /// What the reads returned, in time order.
    reads: Vec<ControlRead>,
    /// Reads scheduled and not taken yet.
    reads_pending: usize,
    /// Operations that were refused when they ran.
    failures: Vec<ControlFailure>,
}

/// A scheduled operation the chip refused when it ran (a full table, a key that is not
/// there): the caller, who knows what it scheduled, names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ControlFailure {
    /// Which operation: its number among the chip's scheduled operations, from 0 in the order
    /// they were scheduled.
    pub op: usize,
    /// The time it was scheduled for.
    pub at: Time,
    /// Why the chip refused it (naming the table, register or meter).
    pub error: String,
}

impl ControlFailure {
    /// The refusal of the operation called `name`: `NAME, at TIME, was refused: WHY`.
    pub fn refusal(&self, name: &str) -> String {
        format!("{name}, at {}, was refused: {}", self.at, self.error)
    }
}

impl Chip {
    /// Schedule a control-plane operation for time `at` (see the module comment for when it
    /// takes effect). Schedule operations before the traffic that should see them
    /// (same-time events run in scheduling order).
    pub fn schedule_control(
        &mut self,
        at: Time,
        op: ResolvedControlOp,
        q: &mut impl Schedule<ChipEvent>,
    ) {
        let gress = op.gress();
        let g = &self.pipes[0];
        let (prog, timing) = match gress {
            Gress::Ingress => (g.ingress.program(), g.ingress.timing()),
            Gress::Egress => (g.egress.program(), g.egress.timing()),
        };
        let before_stage = timing.stage_entry(op.stage(prog) as usize) as u64;
        let effective = self.clock.cycle_at_or_after(at) + timing.total() as u64 - before_stage;
        if matches!(op, ResolvedControlOp::Read(_)) {
            self.control.reads_pending += 1;
        }
        let ops = &mut self.control.ops;
        ops.push(Some((at, op)));
        q.at(
            self.clock.time_of(effective),
            ChipEvent::Control {
                op: (ops.len() - 1) as u32,
            },
        );
    }

    /// Scheduled operation `op` takes effect, or a read is taken and recorded; a refusal is
    /// recorded.
    pub(super) fn run_control(&mut self, op: u32) {
        let (at, resolved) = self.control.ops[op as usize]
            .take()
            .expect("each operation runs once");
        let done = match &resolved {
            ResolvedControlOp::Read(r) => self.read(r, at).map(|pipes| {
                self.control.reads_pending -= 1;
                // Reads of later stages run sooner after their time: keep them in time order.
                let reads = &mut self.control.reads;
                let i = reads.partition_point(|x| x.at_ps <= at.ps());
                let cycle = self.clock.cycle_at_or_after(at);
                reads.insert(
                    i,
                    ControlRead {
                        at_ps: at.ps(),
                        cycle,
                        pipes,
                    },
                )
            }),
            _ => self.apply(&resolved),
        };
        if let Err(e) = done {
            self.control.failures.push(ControlFailure {
                op: op as usize,
                at,
                error: e.to_string(),
            });
        }
    }

    /// What the scheduled reads returned, in time order.
    pub fn control_reads(&self) -> &[ControlRead] {
        &self.control.reads
    }

    /// Scheduled operations that were refused when they ran, in the order they ran.
    pub fn control_failures(&self) -> &[ControlFailure] {
        &self.control.failures
    }

    /// Whether a scheduled read has not been taken yet (a run that ends before it would
    /// leave its result out: see [`Chip::check_reads_taken`]).
    pub fn reads_pending(&self) -> bool {
        self.control.reads_pending > 0
    }

    /// `Err` naming the first scheduled read not taken, for a run that stopped at `end`: a
    /// read is taken at the stage of what it reads, up to one pipe latency after its time,
    /// so a run stopped just after that time may end before it.
    pub fn check_reads_taken(&self, end: Time) -> Result<(), String> {
        let pending = self
            .control
            .ops
            .iter()
            .flatten()
            .find_map(|(at, op)| match op {
                ResolvedControlOp::Read(_) => Some(*at),
                _ => None,
            });
        match pending {
            None => Ok(()),
            Some(at) => Err(format!(
                "the run stopped at {end}, before the control-plane read at {at} was taken (a \
                 read is taken at the stage of what it reads, up to one pipe latency after its \
                 time): read earlier or stop later"
            )),
        }
    }
}
