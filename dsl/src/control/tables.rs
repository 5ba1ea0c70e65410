//! Tables: keys, actions, default action, size, const entries and direct counters, and
//! where control goes after each `apply`.

use pipelines::program::*;

use super::{ControlLowering, Extern};
use crate::ast::{self, Expr, ExprKind, Pattern, Span};
use crate::check::{Env, Value};
use crate::error::{err, ErrorKind, Result};
use crate::tna;

/// All-ones over `w` bits.
fn ones(w: u16) -> u128 {
    pipelines::phv::mask(w as u32)
}

/// One key value of a const entry, for a key of `kind` and width `w`.
fn entry_key(env: &Env, p: &Pattern, kind: MatchKind, w: u16) -> Result<KeyMatch> {
    let span = p.span();
    let unsupported = |what: &str| {
        err(
            ErrorKind::Type,
            span,
            format!("{what} cannot match a {kind:?} key"),
        )
    };
    Ok(match (p, kind) {
        (Pattern::Range(lo, hi), MatchKind::Range) => KeyMatch::Range {
            lo: env.const_value(lo, Some(w))?,
            hi: env.const_value(hi, Some(w))?,
        },
        (Pattern::Range(..), _) => return Err(unsupported("a range")),
        (Pattern::Any(_), MatchKind::Exact) => return Err(unsupported("a don't-care")),
        (Pattern::Any(_), MatchKind::Range) => KeyMatch::Range { lo: 0, hi: ones(w) },
        (_, MatchKind::Range) => {
            let v = env.const_value(
                match p {
                    Pattern::Value(v) => v,
                    _ => return Err(unsupported("a mask")),
                },
                Some(w),
            )?;
            KeyMatch::Range { lo: v, hi: v }
        }
        (_, _) => {
            let (value, mask) = env.keyset(p, w)?;
            match kind {
                MatchKind::Exact if mask == ones(w) => KeyMatch::Exact(value),
                MatchKind::Exact => return Err(unsupported("a mask")),
                MatchKind::Ternary => KeyMatch::Ternary {
                    value: value & mask,
                    mask,
                },
                _ => {
                    let len = mask.count_ones() as u16;
                    if mask != ones(w) & !ones(w - len.min(w)) {
                        return Err(err(
                            ErrorKind::Type,
                            span,
                            "an lpm mask must be a prefix (ones, then zeros)",
                        ));
                    }
                    KeyMatch::Lpm {
                        value: value & mask,
                        prefix_len: len,
                    }
                }
            }
        }
    })
}

impl<'e, 'a, 'l> ControlLowering<'e, 'a, 'l> {
    /// Constant action data for a call, checked against the action's parameters.
    pub(super) fn action_args(
        &self,
        action: ActionId,
        args: &[Expr],
        span: Span,
    ) -> Result<Vec<u128>> {
        let a = &self.control.actions[action as usize];
        if a.params.len() != args.len() {
            return Err(err(
                ErrorKind::Type,
                span,
                format!(
                    "`{}` takes {} arguments, {} given",
                    a.name,
                    a.params.len(),
                    args.len()
                ),
            ));
        }
        a.params
            .iter()
            .zip(args)
            .map(|(p, e)| self.scope.env().const_value(e, Some(p.width)))
            .collect()
    }

    /// `name` or `name(args)` as an action call.
    fn action_call(&mut self, e: &Expr) -> Result<ActionCall> {
        let (name, args): (&ast::Ident, &[Expr]) = match &e.kind {
            ExprKind::Name(n) => (n, &[]),
            ExprKind::Call(callee, args) => match &callee.kind {
                ExprKind::Name(n) => (n, args),
                _ => return Err(err(ErrorKind::Type, e.span, "expected an action call")),
            },
            _ => return Err(err(ErrorKind::Type, e.span, "expected an action call")),
        };
        let action = self.action_id(name)?;
        let args = self.action_args(action, args, e.span)?;
        Ok(ActionCall { action, args })
    }

    /// `t.apply()`: the declared table, lowered where it is applied (a table is applied once,
    /// as its place in the graph is its stage order) and continuing as `next` says.
    pub(super) fn apply_table(&mut self, target: &Expr, next: TableNext) -> Result<Node> {
        let ExprKind::Name(name) = &target.kind else {
            return Err(err(
                ErrorKind::Type,
                target.span,
                format!("`{}` is not a table", self.scope.env().text(target.span)),
            ));
        };
        let decl = self.decl;
        let Some(t) = decl.tables.iter().find(|t| t.name.name == name.name) else {
            return Err(err(
                ErrorKind::Undeclared,
                name.span,
                format!("undeclared table `{}`", name.name),
            ));
        };
        if self.applied.insert(name.name.clone(), name.span).is_some() {
            return Err(err(
                ErrorKind::Semantic,
                name.span,
                format!(
                    "table `{}` is applied twice; a table has one place in the pipeline",
                    name.name
                ),
            ));
        }
        let annotated = self.annotated(&t.name, &t.annotations, true)?;
        let table = self.table(t, annotated.name, next)?;
        let id = self.control.tables.len() as TableId;
        self.control.tables.push(table);
        self.table_spans.push(t.name.span);
        self.table_pins.push(annotated.pins);
        self.const_entry_spans
            .push(t.entries.iter().map(|e| e.span).collect());
        self.apply_spans.push(name.span);
        Ok(Node::Table(id))
    }

    /// A table declaration as the program's table, under its control-plane `name`: keys
    /// (fields or slices), actions, default action, size, const entries and direct counter.
    fn table(&mut self, t: &ast::TableDecl, name: String, next: TableNext) -> Result<Table> {
        let env = self.scope.env();
        let mut keys = Vec::new();
        let mut key_widths = Vec::new();
        for k in &t.keys {
            let (f, slice) = match self.scope.value_of(&k.expr)? {
                Value::Field(f) => (*f, None),
                Value::Slice(f, h, l) => (*f, Some((h, l))),
                _ => {
                    return Err(err(
                        ErrorKind::Type,
                        k.expr.span,
                        format!("`{}` is not a field", env.text(k.expr.span)),
                    ))
                }
            };
            let kind = match k.kind.name.as_str() {
                "exact" => MatchKind::Exact,
                "ternary" => MatchKind::Ternary,
                "lpm" => MatchKind::Lpm,
                "range" => MatchKind::Range,
                other => {
                    return Err(err(
                        ErrorKind::Unsupported,
                        k.kind.span,
                        format!("match kind `{other}` is not supported"),
                    ))
                }
            };
            if kind == MatchKind::Lpm && keys.iter().any(|k: &TableKey| k.kind == MatchKind::Lpm) {
                return Err(err(
                    ErrorKind::Semantic,
                    k.kind.span,
                    "a table can have only one lpm key",
                ));
            }
            key_widths.push(slice.map_or(f.width, |(h, l)| h - l + 1));
            keys.push(TableKey {
                field: self.layout.field(env, &f),
                kind,
                name: env.text(k.expr.span).to_string(),
                slice,
            });
        }
        let mut actions = Vec::new();
        for a in &t.actions {
            let id = self.action_id(a)?;
            if actions.contains(&id) {
                return Err(err(
                    ErrorKind::Duplicate,
                    a.span,
                    format!("action `{}` is listed twice", a.name),
                ));
            }
            actions.push(id);
        }
        let default_action = match &t.default_action {
            Some(e) => {
                let call = self.action_call(e)?;
                if !actions.contains(&call.action) {
                    return Err(err(
                        ErrorKind::Semantic,
                        e.span,
                        "the default action must be one of the table's actions",
                    ));
                }
                call
            }
            None => {
                let id = self.action_id(&ast::Ident {
                    name: tna::NO_ACTION.into(),
                    span: t.name.span,
                })?;
                ActionCall {
                    action: id,
                    args: Vec::new(),
                }
            }
        };
        let size = match &t.size {
            Some(e) => u32::try_from(env.const_value(e, None)?)
                .ok()
                .filter(|s| *s > 0)
                .ok_or_else(|| err(ErrorKind::Type, e.span, "size must be 1..2^32"))?,
            None if keys.is_empty() => 1,
            // p4c's default table size.
            None => 512,
        };
        let mut const_entries = Vec::new();
        let n = t.entries.len() as u32;
        for (i, e) in t.entries.iter().enumerate() {
            if e.keyset.len() != keys.len() {
                return Err(err(
                    ErrorKind::Type,
                    e.span,
                    format!(
                        "entry has {} key values but the table has {} keys",
                        e.keyset.len(),
                        keys.len()
                    ),
                ));
            }
            let mut key = Vec::new();
            for ((p, k), w) in e.keyset.iter().zip(&keys).zip(&key_widths) {
                key.push(entry_key(env, p, k.kind, *w)?);
            }
            let action = self.action_call(&e.action)?;
            if !actions.contains(&action.action) {
                return Err(err(
                    ErrorKind::Semantic,
                    e.action.span,
                    "the entry's action is not one of the table's actions",
                ));
            }
            // Earlier entries win, as in P4.
            const_entries.push(Entry {
                key,
                action,
                priority: n - i as u32,
            });
        }
        if size < n {
            return Err(err(
                ErrorKind::Semantic,
                t.name.span,
                format!("table has {n} const entries but size {size}"),
            ));
        }
        let direct_counter = match &t.counters {
            None => None,
            Some(dc) => match self.externs.get(&dc.name) {
                Some(Extern::DirectCounter(kind)) => {
                    if let Some(first) = self.direct_owner.get(&dc.name) {
                        return Err(err(
                            ErrorKind::Semantic,
                            dc.span,
                            format!(
                                "direct counter `{}` is already attached to table {first}; a \
                                 direct counter belongs to one table",
                                dc.name
                            ),
                        ));
                    }
                    self.direct_owner.insert(dc.name.clone(), name.clone());
                    Some(*kind)
                }
                Some(x) => {
                    return Err(err(
                        ErrorKind::Type,
                        dc.span,
                        format!(
                            "`{}` is a `{}`, not a `DirectCounter`",
                            dc.name,
                            x.type_name()
                        ),
                    ))
                }
                None => {
                    return Err(err(
                        ErrorKind::Undeclared,
                        dc.span,
                        format!("undeclared direct counter `{}`", dc.name),
                    ))
                }
            },
        };
        Ok(Table {
            name,
            stage: 0,
            keys,
            actions,
            default_action,
            size,
            const_entries,
            next,
            direct_counter,
            parts: Vec::new(),
        })
    }
}
