//! One modelled chip on the lab bench.
//!
//! [`scenario`] reads what to run (chip, program, entries, what enters each port, the
//! operator's configuration and scheduled control operations); [`bench`] runs a chip with
//! frames from pcaps and [`generator`]s and captures what leaves; [`run`] ties them into
//! `asic run`; [`stf`] runs STF packet-test files on a bench (`asic stf`). The chip itself is
//! `asic-model`; files are read through `asic-io`.
//!
//! Crates used, and why: `etherparse` (a maintained packet builder and parser for
//! generated frames and test oracles), `serde`/`ron`/`serde_json` (scenarios in RON,
//! summaries in JSON; `ron` also reads the entries written on STF lines).

pub mod bench;
pub mod generator;
pub mod run;
pub mod scenario;
pub mod stf;

pub use bench::Bench;
