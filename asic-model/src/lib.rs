//! The clocked chip: chip profiles, the event kernel, MACs, and the pipes and traffic
//! manager wired together.
//!
//! Crates used, and why: `serde` + `ron` (chip profiles are data files with comments that
//! cite each number's source; a chip's configuration is RON in scenarios); `thiserror`
//! (profile errors that name the file, line and field); `serde_json` (the per-packet trace's
//! JSON lines, [`trace`]); as a dev-dependency, `dsl` (the chip's tests compile the program
//! they run).

pub mod chip;
pub mod control_plane;
pub mod kernel;
pub mod mac;
pub mod pfc_frame;
pub mod profile;
pub mod trace;
