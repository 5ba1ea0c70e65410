//! No mechanism: a chip that runs the program, entries and configuration its scenario
//! settings give, and nothing generated (a hand-written program under test, a testbed whose
//! routes are written out).

use crate::{ChipContext, ChipDeployment, Deployment, Embedded};
use asic_model::chip::ChipConfig;
use asic_model::profile::ChipProfile;

/// `deploy: Manual`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Manual;

impl Deployment for Manual {
    fn program(&self) -> Option<Embedded> {
        None
    }

    fn check(&self, _profile: &ChipProfile) -> Result<(), String> {
        Ok(())
    }

    fn routing(&self) -> Option<crate::routers::Routing> {
        None
    }

    fn deploy(&self, _chip: &ChipContext, config: ChipConfig) -> Result<ChipDeployment, String> {
        Ok(ChipDeployment {
            entries: Vec::new(),
            control: Vec::new(),
            config,
            agents: Vec::new(),
        })
    }
}
