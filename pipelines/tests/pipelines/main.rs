//! The integration tests of `pipelines`, one module per subject, in one test binary: linking a
//! binary per file cost more CI time than running them all.

mod common;
mod fast_paths;
mod parser_fuzz;
mod primitives;
mod split;
mod timing;
mod verify_externs;
