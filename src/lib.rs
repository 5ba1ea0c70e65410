//! The `asic` tool's library: the lab bench around the modelled chip.
//!
//! [`scenario`] reads what to run, [`bench`] runs a chip with frames from [`generator`] and
//! [`pcap_io`], [`run`] ties them into `asic run`. The chip itself is `asic-model`; the
//! compiler is `dsl`; the pipe is `pipelines`; the traffic manager is `tm`.
//!
//! Crates used, and why: `clap` (the command line), `pcap-file` (pure-Rust pcap read and
//! write, nanosecond timestamps, no libpcap), `etherparse` (a maintained packet builder and
//! parser for generated frames and test oracles), `serde`/`ron`/`serde_json` (scenarios in
//! RON, summaries in JSON); as a dev-dependency, `criterion` (the statistics-driven
//! benchmark harness of `benches/speed.rs`, default features off: no plotting, no thread
//! pool). [`perf`] is `asic bench`.

pub mod bench;
pub mod demo;
pub mod errors;
pub mod generator;
pub mod net;
pub mod pcap_io;
pub mod perf;
pub mod report;
pub mod run;
pub mod scenario;
pub mod stf;
pub mod sweep_run;
pub mod tm_experiment;
