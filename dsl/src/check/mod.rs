//! Semantic checks: declarations, types, names and the architecture's rules.
//!
//! [`Env::build`] checks the declarations once (types, constants, the `Pipeline` package and
//! the shape of every parser) and [`Scope`] resolves the names inside one block. The lowering
//! asks a scope to type every expression before it emits IR for it, so each rule lives here
//! exactly once: widths must match, intrinsic inputs are read-only, an action statement is
//! one ALU operation, a gateway compares fields with constants.
//!
//! One module per concern: `rules` (types, widths that must fit, names declared once),
//! `pipeline` (the package binding the gresses' blocks, parser graphs), `env` (the
//! declarations), `names` (what a name denotes), `scope` (the names of one block) and
//! `expr` (typing expressions into VLIW operations and gateway conditions).

mod env;
mod expr;
mod names;
mod pipeline;
mod rules;
mod scope;

pub use env::Env;
pub use expr::{AluExpr, CondExpr};
pub use names::{FieldKey, FieldRef, HeaderRef, Place, Value};
pub use pipeline::GressBlocks;
pub use rules::Ty;
pub use scope::Scope;
