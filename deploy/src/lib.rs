//! Mechanisms as deployments, and network scenarios built into runnable networks.
//!
//! A mechanism (the stock routers, BFC, packet trimming, Flexible Buffer, Pyrrha; CaPFC
//! next) is a **program** in `programs/<name>/` and a **deployment**: a module here that,
//! given the topology and the mechanism's parameters, yields each chip's program, table
//! entries and chip configuration, and says what hosts must do. Nothing mechanism-specific
//! lives in the runtime (`asic-net`), the topology code or the chip.
//!
//! - [`Deployment`]: the one interface every mechanism implements; [`Mechanism`]: the
//!   registry, what a scenario's `deploy:` names.
//! - [`routers`]: the stock routers (`programs/l3router`, `programs/ecmp_router`) and the
//!   routes they need; [`bfc`]: Backpressure Flow Control (`programs/bfc`); [`trimming`]:
//!   packet trimming (`programs/trimming`); [`fb`]: Flexible Buffer's evaluation setting
//!   (`programs/fb`); [`pyrrha`]: Pyrrha (`programs/pyrrha`); [`manual`]: no mechanism, the
//!   scenario's own program and entries.
//! - [`paths`]: the path oracle (each flow's hops over the generated routes); [`hol`]: the
//!   HOL-blocking check of a run with `hol_check`.
//! - [`scenario`]: the network scenario file: topology, deployment, per-chip and per-role
//!   settings, traffic. [`build`]: a scenario into an `asic_net::Network` (profiles loaded,
//!   programs compiled once per profile and program, entries resolved, chips built).
//! - [`run`]: load, build and run a scenario file, captures written as pcaps.
//!
//! **Adding a mechanism**: its program folder with scenarios, one module here implementing
//! [`Deployment`], and its variant in [`Mechanism`] (the registry's two lines).

pub mod bfc;
pub mod build;
pub mod fb;
pub mod hol;
pub mod manual;
pub mod paths;
pub mod pyrrha;
pub mod routers;
pub mod run;
pub mod scenario;
pub mod trimming;

use asic_model::chip::{ChipConfig, ControlAgent};
use asic_model::profile::ChipProfile;
use asic_net::network::FlowGroups;
use asic_net::topology::Topology;
use paths::PathOracle;
use pipelines::control::ControlOp;
use pipelines::entries::EntrySpec;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// A program built into the binary: a mechanism's default program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Embedded {
    /// Where it lives in the repository (what errors name).
    pub file: &'static str,
    /// Its source.
    pub source: &'static str,
}

/// What a deployment knows of the chip it deploys on.
pub struct ChipContext<'a> {
    /// The network.
    pub topology: &'a Topology,
    /// Every chip's routes, to follow paths downstream (one oracle for the whole network).
    pub paths: &'a PathOracle,
    /// The chip's index in `topology`.
    pub chip: usize,
    /// The chip's profile.
    pub profile: &'a ChipProfile,
    /// The scenario's seed (each chip's own random sources get one derived from it).
    pub seed: u64,
    /// The scenario's IP MTU of data packets (bytes): what a full-size frame is.
    pub mtu: usize,
}

/// What a deployment gives one chip.
#[derive(Debug, Default)]
pub struct ChipDeployment {
    /// Table entries, installed after the operator's own.
    pub entries: Vec<EntrySpec>,
    /// Control-plane operations applied once the chip is built, after the entries (meters'
    /// rates, bursts and byte-count adjustments, register values).
    pub control: Vec<ControlOp>,
    /// The chip configuration: the operator's, with what the mechanism needs added.
    pub config: ChipConfig,
    /// Control-plane agents the chip wakes periodically (FBA's α rewriter).
    pub agents: Vec<Box<dyn ControlAgent>>,
}

/// What hosts attached to a chip running a mechanism must do.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HostRules {
    /// The most NIC queues a host may have, and why.
    pub max_nic_queues: Option<(u16, &'static str)>,
}

/// A mechanism deployed on a network's chips.
pub trait Deployment {
    /// The program its chips run unless a chip's settings name another (`None`: they must).
    fn program(&self) -> Option<Embedded>;

    /// Check the parameters against a chip's profile, before anything is built.
    fn check(&self, profile: &ChipProfile) -> Result<(), String>;

    /// The entries and configuration of one chip; `config` is the operator's.
    fn deploy(&self, chip: &ChipContext, config: ChipConfig) -> Result<ChipDeployment, String>;

    /// What hosts attached to its chips must do.
    fn host_rules(&self) -> HostRules {
        HostRules::default()
    }

    /// The generated routes its chips forward by ([`routers::routes`]), so that the path
    /// oracle ([`paths`]) can follow their packets; `None`: routes it does not generate.
    fn routing(&self) -> Option<routers::Routing>;

    /// The groups each flow belongs to, if its hosts are to obey flow-group pause frames
    /// (`asic_net::ctrl`), from the network's path oracle.
    fn flow_groups(&self, _paths: &Arc<PathOracle>) -> Option<FlowGroups> {
        None
    }
}

/// The registry: every mechanism a scenario can deploy, with its parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Mechanism {
    /// The stock routers: `Routers(Static)` runs `programs/l3router` with one next hop per
    /// destination, `Routers(Ecmp)` runs `programs/ecmp_router` with ECMP groups.
    Routers(routers::Routing),
    /// Backpressure Flow Control (`programs/bfc`).
    Bfc(bfc::BfcSpec),
    /// Packet trimming (`programs/trimming`).
    Trimming(trimming::TrimmingSpec),
    /// Flexible Buffer's evaluation setting (`programs/fb`).
    Fb(fb::FbSpec),
    /// Pyrrha (`programs/pyrrha`).
    Pyrrha(pyrrha::PyrrhaSpec),
    /// No mechanism: the chip's settings give its `program`, entries and configuration.
    Manual,
}

impl Default for Mechanism {
    fn default() -> Self {
        Mechanism::Routers(routers::Routing::Static)
    }
}

impl Mechanism {
    /// The deployment behind the name.
    pub fn deployment(&self) -> &dyn Deployment {
        match self {
            Mechanism::Routers(r) => r,
            Mechanism::Bfc(b) => b,
            Mechanism::Trimming(t) => t,
            Mechanism::Fb(f) => f,
            Mechanism::Pyrrha(p) => p,
            Mechanism::Manual => &manual::Manual,
        }
    }
}
