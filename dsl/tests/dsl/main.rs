//! The integration tests of `dsl`, one module per subject, in one test binary: linking a
//! binary per file cost more CI time than running them all.

mod common;
mod depgraph;
mod error_files;
mod errors;
mod externs;
mod features;
mod fuzz;
mod includes;
mod nesting;
mod placement;
mod router;
mod snapshots;
