//! The `asic` command: a thin layer over the workspace's crates.
//!
//! The command line (`main.rs`) parses arguments and calls: `asic-bench` (`asic run`, the
//! embedded [`demo`]), `asic-deploy` and `asic-report` (`asic net`, [`sweep_run`] for
//! `asic sweep`), `asic-io` and `dsl` (`asic compile`; its `--html` page is [`resource_view`]), `asic-model` (`asic chips`), `tm`
//! (`asic tm-experiment`, whose tables and CSV [`tm_experiment`] renders from the TM's data). [`perf`] is `asic bench`: the speed workloads, their figures,
//! and the counting allocator the binary installs. The criterion benches
//! (`benches/speed.rs`) run the same workloads.
//!
//! Crates used, and why: `clap` (the command line); as a dev-dependency, `criterion` (the
//! statistics-driven benchmark harness of `benches/speed.rs`, default features off: no
//! plotting, no thread pool).

pub mod demo;
pub mod perf;
pub mod resource_view;
pub mod sweep_run;
pub mod tm_experiment;
