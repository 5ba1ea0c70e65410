//! Control-plane agents: code the operator runs beside the chip, woken every period, that
//! reads the traffic manager's state and changes its run-time settings (the FB paper's FBA
//! rewrites every queue's Dynamic Threshold α from the queues it sees congested). An agent
//! is a deployment's ([`ControlAgent`]); the chip only wakes it, at `period`, `2·period`, …
//! ([`ChipEvent::Agent`]), between packets, as a control plane's writes land.

use super::{Chip, ChipEvent};
use crate::kernel::Schedule;
use pipelines::time::Time;
use tm::TrafficManager;

/// A control-plane agent on one chip.
pub trait ControlAgent: std::fmt::Debug + Send {
    /// How often it runs: first at this time, then every period (more than 0).
    fn period(&self) -> Time;

    /// One run at `now`: read the TM and set it. An error stops the run, naming the agent.
    fn run(&mut self, now: Time, tm: &mut TrafficManager) -> Result<(), String>;
}

impl Chip {
    /// Adds an agent; [`Chip::start`] schedules its first run. Refused (with the agent's
    /// number) if its period is 0 or the chip has 65,536 agents.
    pub fn add_agent(&mut self, agent: Box<dyn ControlAgent>) -> Result<(), String> {
        let i = self.agents.len();
        if agent.period() == Time::ZERO {
            return Err(format!("control agent {i}: its period must be more than 0"));
        }
        if i > u16::MAX as usize {
            return Err(format!("control agent {i}: a chip runs at most 65,536"));
        }
        self.agents.push(agent);
        Ok(())
    }

    /// Every agent's first run.
    pub(super) fn start_agents(&mut self, q: &mut impl Schedule<ChipEvent>) {
        for (i, a) in self.agents.iter().enumerate() {
            q.at(a.period(), ChipEvent::Agent { agent: i as u16 });
        }
    }

    /// Agent `agent`'s run at `now`, and its next.
    pub(super) fn run_agent(&mut self, now: Time, agent: u16, q: &mut impl Schedule<ChipEvent>) {
        let a = &mut self.agents[agent as usize];
        if let Err(e) = a.run(now, &mut self.tm) {
            self.agent_failures
                .push(format!("control agent {agent} at {now}: {e}"));
            return;
        }
        q.at(now + a.period(), ChipEvent::Agent { agent });
    }

    /// What stopped an agent, in order (an agent that fails is not run again).
    pub fn agent_failures(&self) -> &[String] {
        &self.agent_failures
    }
}
