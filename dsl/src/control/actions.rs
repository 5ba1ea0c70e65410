//! Action bodies: each statement one VLIW operation (a concatenation one per part) or one
//! extern call, merged under the VLIW rule that every operation reads the PHV as it was
//! before the action, so none reads or rewrites what an earlier one wrote
//! ([`pipelines::dataflow`] says what each reads and writes).

use pipelines::dataflow::{self, FieldBits};
use pipelines::program::*;

use super::{ControlLowering, Part};
use crate::ast::{self, Expr, ExprKind, Span, Stmt};
use crate::check::{AluExpr, Scope};
use crate::error::{err, ErrorKind, Result};
use crate::tna;

/// Statements of an action, nested blocks flattened.
fn flatten<'s>(stmts: &'s [Stmt], out: &mut Vec<&'s Stmt>) {
    for s in stmts {
        match s {
            Stmt::Block(b) => flatten(&b.stmts, out),
            _ => out.push(s),
        }
    }
}

impl<'e, 'a, 'l> ControlLowering<'e, 'a, 'l> {
    /// Add an action to the control under `name` (reserved, so synthesised actions and
    /// tables get other names), keeping where its extern calls are for later errors.
    pub(super) fn push_action(
        &mut self,
        name: String,
        params: Vec<ActionParam>,
        part: Part,
    ) -> ActionId {
        self.names.insert(name.clone());
        let id = self.control.actions.len() as ActionId;
        let (externs, spans): (Vec<ExternCall>, Vec<Span>) = part.externs.into_iter().unzip();
        self.control.actions.push(Action {
            name,
            params,
            ops: part.ops,
            externs,
        });
        self.extern_spans.push(spans);
        id
    }

    /// A name not used yet: `base`, else `base_1`, `base_2`, ...
    pub(super) fn fresh(&self, base: String) -> String {
        if !self.names.contains(&base) {
            return base;
        }
        (1..)
            .map(|i| format!("{base}_{i}"))
            .find(|n| !self.names.contains(n))
            .unwrap_or(base)
    }

    /// `Control.name`: how the program, the control plane and reports name a control's
    /// actions, tables and externs.
    pub(super) fn qualified(&self, name: &str) -> String {
        format!("{}.{name}", self.decl.name.name)
    }

    /// The action called `name` (`NoAction` is created on first use).
    pub(super) fn action_id(&mut self, name: &ast::Ident) -> Result<ActionId> {
        if let Some(&id) = self.actions.get(&name.name) {
            return Ok(id);
        }
        if name.name == tna::NO_ACTION {
            let id = self.push_action(tna::NO_ACTION.to_string(), Vec::new(), Part::default());
            self.actions.insert(name.name.clone(), id);
            return Ok(id);
        }
        Err(err(
            ErrorKind::Undeclared,
            name.span,
            format!("undeclared action `{}`", name.name),
        ))
    }

    /// Add one statement's part to an action's, checking the VLIW rule: every operation and
    /// extern call reads the PHV as it was before the action, so none may read or rewrite
    /// bits an earlier one wrote, and an extern array is accessed once.
    pub(super) fn merge(&self, into: &mut Part, part: Part, span: Span) -> Result<()> {
        let env = self.scope.env();
        let fname = |f: FieldId| self.layout.layout.fields[f as usize].name.clone();
        let mut writes: Vec<FieldBits> = into.ops.iter().map(dataflow::op_writes).collect();
        writes.extend(
            into.externs
                .iter()
                .flat_map(|(c, _)| dataflow::extern_writes(c))
                .map(FieldBits::whole),
        );
        let check_reads = |reads: &[FieldId], writes: &[FieldBits]| -> Result<()> {
            if let Some(&f) = reads.iter().find(|&&f| writes.iter().any(|w| w.field == f)) {
                return Err(err(
                    ErrorKind::Semantic,
                    span,
                    format!(
                        "`{}` reads {} after this action wrote it; the operations of an action \
                         all read the packet as it was before the action",
                        env.text(span),
                        fname(f)
                    ),
                ));
            }
            Ok(())
        };
        let check_write = |dst: FieldBits, writes: &[FieldBits]| -> Result<()> {
            if writes.iter().any(|w| w.overlaps(dst)) {
                return Err(err(
                    ErrorKind::Semantic,
                    span,
                    format!("{} is written twice in one action", fname(dst.field)),
                ));
            }
            Ok(())
        };
        let mut new_writes = Vec::new();
        for op in &part.ops {
            let reads: Vec<FieldId> = dataflow::op_reads(op).map(|r| r.field).collect();
            check_reads(&reads, &writes)?;
            check_write(dataflow::op_writes(op), &writes)?;
            new_writes.push(dataflow::op_writes(op));
        }
        for (c, cspan) in &part.externs {
            check_reads(&dataflow::extern_reads(&self.control, c), &writes)?;
            for d in dataflow::extern_writes(c).map(FieldBits::whole) {
                check_write(d, &writes)?;
                new_writes.push(d);
            }
            if let Some(r) = self.res_of(c) {
                if into.externs.iter().any(|(x, _)| self.res_of(x) == Some(r)) {
                    return Err(err(
                        ErrorKind::Semantic,
                        *cspan,
                        self.twice_msg(r, "this action"),
                    ));
                }
            }
        }
        // Writes within the statement itself must not overlap either (concatenations do not).
        for (i, w) in new_writes.iter().enumerate() {
            if new_writes[..i].iter().any(|x| x.overlaps(*w)) {
                return Err(err(
                    ErrorKind::Semantic,
                    span,
                    format!("{} is written twice in one action", fname(w.field)),
                ));
            }
        }
        into.ops.extend(part.ops);
        into.externs.extend(part.externs);
        Ok(())
    }

    /// The operations and extern calls of an action body.
    pub(super) fn action_body(&mut self, scope: &Scope, stmts: &[Stmt]) -> Result<Part> {
        let mut part = Part::default();
        let mut flat = Vec::new();
        flatten(stmts, &mut flat);
        for st in flat {
            let (p, span) = self.action_stmt(scope, st)?;
            self.merge(&mut part, p, span)?;
        }
        Ok(part)
    }

    /// The part of one action statement (an assignment of `ucast_egress_port` also sets its
    /// valid bit).
    pub(super) fn action_stmt(&mut self, scope: &Scope, st: &Stmt) -> Result<(Part, Span)> {
        let env = scope.env();
        match st {
            Stmt::Assign { lhs, rhs, span } => Ok((self.assign(scope, lhs, rhs, *span)?, *span)),
            Stmt::VarDecl(v) => match &v.init {
                Some(init) => {
                    let lhs = Expr {
                        kind: ExprKind::Name(v.name.clone()),
                        span: v.name.span,
                    };
                    Ok((self.assign(scope, &lhs, init, v.span)?, v.span))
                }
                None => Ok((Part::default(), v.span)),
            },
            Stmt::Call(call) => {
                if let Some((target, method, args)) = call.method_call() {
                    if args.is_empty() && (method.name == "setValid" || method.name == "setInvalid")
                    {
                        let h = scope.header(target)?;
                        let v = self.layout.valid(env, &h);
                        let bit = u128::from(method.name == "setValid");
                        return Ok((
                            Part {
                                ops: vec![Op {
                                    dst_slice: None,
                                    dst: v,
                                    alu: AluOp::Set,
                                    a: Operand::Const(bit),
                                    b: Operand::Const(0),
                                }],
                                externs: Vec::new(),
                            },
                            call.span,
                        ));
                    }
                }
                if let Some(p) = self.extern_stmt(scope, call)? {
                    return Ok((p, call.span));
                }
                Err(err(
                    ErrorKind::Unsupported,
                    call.span,
                    format!("`{}` is not supported in an action", env.text(call.span)),
                ))
            }
            Stmt::If { span, .. } => Err(err(
                ErrorKind::Unsupported,
                *span,
                "an action cannot contain `if`: put the condition in the control's apply block",
            )),
            Stmt::Switch { span, .. } => Err(err(
                ErrorKind::Unsupported,
                *span,
                "an action cannot contain `switch`: put it in the control's apply block",
            )),
            Stmt::Block(b) => Err(err(
                ErrorKind::Unsupported,
                b.span,
                "an action cannot contain a nested block here",
            )),
        }
    }

    /// `lhs = rhs` as VLIW operations (one, or one per part of a concatenation) or an extern
    /// call.
    fn assign(&mut self, scope: &Scope, lhs: &Expr, rhs: &Expr, span: Span) -> Result<Part> {
        let env = scope.env();
        if let Some(p) = self.extern_assign(scope, lhs, rhs, span)? {
            return Ok(p);
        }
        let (dst, slice) = scope.lvalue_slice(lhs)?;
        let slice = slice.filter(|&(h, l)| !(l == 0 && h + 1 == dst.width));
        let w = slice.map_or(dst.width, |(h, l)| h - l + 1);
        let dst_id = self.layout.field(env, &dst);
        let mut ops = Vec::new();
        if let Some(parts) = scope.concat_parts(rhs, w)? {
            let base = slice.map_or(0, |(_, l)| l);
            let mut top = w;
            for (v, pw) in parts {
                top -= pw;
                ops.push(Op {
                    dst: dst_id,
                    dst_slice: Some((base + top + pw - 1, base + top)),
                    alu: AluOp::Set,
                    a: self.layout.operand(env, &v),
                    b: Operand::Const(0),
                });
            }
        } else {
            let AluExpr { alu, a, b } = scope.alu_expr(rhs, w)?;
            ops.push(Op {
                dst_slice: slice,
                dst: dst_id,
                alu,
                a: self.layout.operand(env, &a),
                b: self.layout.operand(env, &b),
            });
        }
        if dst.intrinsic == Some(Intrinsic::UcastEgressPort) {
            let v = self.layout.ucast_valid(&dst);
            ops.push(Op {
                dst_slice: None,
                dst: v,
                alu: AluOp::Set,
                a: Operand::Const(1),
                b: Operand::Const(0),
            });
        }
        Ok(Part {
            ops,
            externs: Vec::new(),
        })
    }
}
