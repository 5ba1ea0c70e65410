//! Annotations on tables and actions, as bf-p4c reads them:
//! - `@name("x")` gives a table or an action its control-plane name, the one entries files
//!   and reports use: `Control.x`, or `x` for `@name(".x")` (a leading dot makes the name
//!   global, as in p4c);
//! - `@stage(N)`, `@stage(N, entries)` and the P4_14-style `@pragma stage N [entries]` place
//!   a table, or that many of its entries, in stage `N` ([`StagePin`], which stage
//!   allocation honours); several may split one table.
//!
//! Any other annotation is refused by name.

use crate::alloc::StagePin;
use crate::ast::{Annotation, Ident};
use crate::error::{err, ErrorKind, Result};
use crate::parse::number;

use super::ControlLowering;

/// What a table's or an action's annotations say.
#[derive(Default)]
pub(super) struct Annotated {
    /// The control-plane name.
    pub name: String,
    /// Stage pragmas (tables only).
    pub pins: Vec<StagePin>,
}

impl ControlLowering<'_, '_, '_> {
    /// Read the annotations of the table (`table`) or action declared as `local`.
    pub(super) fn annotated(
        &self,
        local: &Ident,
        annotations: &[Annotation],
        table: bool,
    ) -> Result<Annotated> {
        let env = self.scope.env();
        let mut out = Annotated {
            name: self.qualified(&local.name),
            pins: Vec::new(),
        };
        let mut named = false;
        for a in annotations {
            let text = env.text(a.span).trim_end().to_string();
            let bad = |why: &str| err(ErrorKind::Semantic, a.span, format!("`{text}`: {why}"));
            match (a.name.name.as_str(), a.pragma) {
                ("name", false) => {
                    if named {
                        return Err(bad("a declaration has one `@name`"));
                    }
                    named = true;
                    out.name = self.given_name(&a.args).ok_or_else(|| {
                        bad(
                            "the name is one string of letters, digits, `_` and `.`, such as \
                             `@name(\"ipv4_route\")` (a leading dot: a global name)",
                        )
                    })?;
                }
                ("stage", _) if table => {
                    let Some(stage) = a.args.first() else {
                        return Err(bad("a stage pragma names a stage, such as `@stage(2)`"));
                    };
                    let num = |what: &str, s: &str| {
                        number(s).ok_or_else(|| bad(&format!("the {what} must be a number")))
                    };
                    if let Some(flag) = a.args.get(2) {
                        return Err(err(
                            ErrorKind::Unsupported,
                            a.span,
                            format!(
                                "`{text}`: the flag {flag} is not supported (the model does not \
                                 choose where action data is stored)"
                            ),
                        ));
                    }
                    out.pins.push(StagePin {
                        stage: num("stage", stage)?,
                        entries: a
                            .args
                            .get(1)
                            .map(|e| num("number of entries", e))
                            .transpose()?,
                        text,
                        span: a.span,
                    });
                }
                ("stage", _) => return Err(bad("a stage pragma goes before a table")),
                (other, pragma) => {
                    let what = if pragma {
                        "pragma `@pragma "
                    } else {
                        "annotation `@"
                    };
                    return Err(err(
                        ErrorKind::Unsupported,
                        a.span,
                        format!("{what}{other}` is not supported"),
                    ));
                }
            }
        }
        Ok(out)
    }

    /// The name `@name(...)`'s one argument gives: a string literal of name characters,
    /// qualified by the control unless it starts with a dot.
    fn given_name(&self, args: &[String]) -> Option<String> {
        let [arg] = args else { return None };
        let inner = arg.strip_prefix('"')?.strip_suffix('"')?;
        let (global, name) = match inner.strip_prefix('.') {
            Some(rest) => (true, rest),
            None => (false, inner),
        };
        let ok = !name.is_empty()
            && name.split('.').all(|part| {
                !part.is_empty() && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            });
        ok.then(|| {
            if global {
                name.to_string()
            } else {
                self.qualified(name)
            }
        })
    }
}
