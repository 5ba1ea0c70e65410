//! The files the model reads and writes around a chip.
//!
//! - [`load`]: one loader for what scenarios name by name or path: chip profiles (built-in
//!   names, or files relative to the scenario), programs (compiled against a profile),
//!   entries files and control files (resolved against a program). The one-chip bench, the
//!   network deployments and the command line all load through it, so a name means the
//!   same everywhere and errors read alike.
//! - [`pcap`]: pcap in (Ethernet, nanosecond or microsecond) and out (nanosecond
//!   timestamps in simulated time).
//! - [`trace`]: the per-packet trace's files (text and JSON lines), and what a run is asked
//!   to trace.
//!
//! Crates used, and why: `pcap-file` (pure-Rust pcap read and write, nanosecond timestamps,
//! no libpcap).

pub mod load;
pub mod pcap;
pub mod trace;
