//! The clocked chip: chip profiles, the event kernel, MACs, and the pipes and traffic
//! manager wired together.
//!
//! Crates used, and why: `serde` + `ron` (chip profiles are data files with comments that
//! cite each number's source); `thiserror` (profile errors that name the file, line and
//! field).

pub mod chip;
pub mod control_plane;
pub mod kernel;
pub mod mac;
pub mod pfc_frame;
pub mod profile;
