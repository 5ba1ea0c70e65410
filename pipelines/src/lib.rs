//! The executable match-action pipe.
//!
//! This crate defines what a pipe runs ([`program`]), what a chip's pipe offers
//! ([`spec`]), and executes it: the parser engine ([`parser`]), the PHV ([`phv`]), match
//! tables ([`table`], their entries' action data decoded when installed: [`action_data`]),
//! the match-action stages ([`mau`]), the deparser ([`deparser`]) and a loaded gress with
//! its timing ([`pipe`]); [`trace`] is what the parser and the stages tell a per-packet
//! trace (nothing, at no cost, when the packet is not traced). [`verify`] checks a program
//! against a chip before it is loaded, so a bad program is an error, never a panic at run
//! time. [`dataflow`] says
//! what every part of a program reads and writes, for the verifier, the fast paths' plans
//! and the compiler; [`alu`] is the arithmetic the MAU and the stateful ALUs share.
//!
//! The externs an action drives each have their own module, so each primitive can be
//! tested and stepped through on its own: [`salu`] (register arrays and the stateful ALU),
//! [`meter`] (RFC 2698 meters in simulated time), [`counter`] (indexed and direct
//! counters), [`hash`] (bit-exact CRCs). [`control`] and [`entries`] are the control plane:
//! operations by name, RON entry files, and their resolution against a program;
//! [`readout`] is what its reads return (and what a run leaves behind), as data and text.
//!
//! Crates used, and why: `serde` (the program format is data: dumped as RON, loaded back);
//! `ron` (entry and control files); `smallvec` (table keys of a few fields without heap
//! allocation per packet); `rustc-hash` (a fast, deterministic hash for exact-match tables;
//! lookups only, never iterated in simulation order); `crc` (catalogue CRC engines, so hash
//! units are bit-exact); `rand_chacha`/`rand_core` (a small, portable, seedable generator
//! for `Random`: the same seed gives the same numbers on every host). The PHV is plain
//! integer containers, not `bitvec`: it is on the hottest path.

pub mod action_data;
pub mod alu;
pub mod control;
pub mod counter;
pub mod dataflow;
pub mod deparser;
pub mod entries;
pub mod hash;
pub mod mau;
pub mod meter;
pub mod parser;
pub mod phv;
pub mod pipe;
pub mod program;
pub mod readout;
pub mod salu;
pub mod spec;
pub mod table;
pub mod time;
pub mod trace;
pub mod verify;
