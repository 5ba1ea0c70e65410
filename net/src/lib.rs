//! The network runtime: networks of modelled chips and hosts on one discrete-event kernel,
//! producing a [`records::RunRecord`].
//!
//! **API boundary.** In: a [`Network`] — a resolved [`topology::Topology`], its chips already
//! built and configured (by a deployment, `asic-deploy`), traffic, transport, stop,
//! sampling and captures. Out: a [`NetRun`] whose [`records::RunRecord`] is what every
//! report is made from (`asic-report` reads nothing else). While it runs, progress and
//! captured frames go to an [`Observer`]. The runtime knows no program, table or
//! mechanism, draws nothing and writes no file.
//!
//! - [`topology`]: the RON schema, name resolution, paths and tiers; [`shapes`]: generated
//!   shapes (single switch, dumbbell, leaf-spine, fat tree) with roles and link speeds.
//! - [`host`]: the host and its NIC (what they model and omit); [`transport`]: raw,
//!   go-back-N, NewReno, DCTCP, NDP-like; [`traffic`]: sources and load; [`cdf`]: flow-size
//!   CDFs (`data/cdf`).
//! - [`packet`]: the host frame format; [`ctrl`]: PFC and the per-queue pause frame.
//! - [`sim`]: the kernel loop, event dispatch, sampling and the end of a run; [`ideal`]: the
//!   ideal FCT.
//!
//! Determinism: every random choice comes from a seeded ChaCha stream per traffic source
//! ([`rng`]); simulation order never depends on hash-map iteration; simultaneous events run
//! in scheduling order. Same network, same seed: same record, byte for byte.
//!
//! Crates used, and why: `rand_chacha` + `rand_core` (a portable, seedable stream whose
//! output is fixed across platforms and versions, so records are reproducible).

pub mod cdf;
pub mod ctrl;
pub mod host;
pub mod ideal;
pub mod network;
pub mod packet;
pub mod records;
pub mod rng;
pub mod shapes;
pub mod sim;
pub mod topology;
pub mod traffic;
pub mod transport;

pub use network::{Capture, HolCheck, Network, Observer, Stop};
pub use sim::{HostBalance, Net, NetRun, Windows};
