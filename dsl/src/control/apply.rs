//! The apply block as a graph of tables and gateways, built back to front: each statement
//! is lowered knowing the node that follows it, so both branches of an `if` (and every
//! case of a `switch`) continue at the same node. Straight-line assignments become keyless
//! tables, as p4c makes them.

use pipelines::program::*;

use super::{ControlLowering, Part};
use crate::ast::{self, Expr, ExprKind, Span, Stmt};
use crate::check::CondExpr;
use crate::error::{err, ErrorKind, Result};

/// `t.apply().hit`, `t.apply().miss` or their negation: the table and whether "true" is a hit.
fn hit_test(cond: &Expr) -> Option<(&Expr, bool)> {
    match &cond.kind {
        ExprKind::Unary(ast::UnOp::Not, inner) => hit_test(inner).map(|(t, h)| (t, !h)),
        ExprKind::Member(call, m) if m.name == "hit" || m.name == "miss" => {
            let (target, method, args) = call.method_call()?;
            (method.name == "apply" && args.is_empty()).then_some((target, m.name == "hit"))
        }
        _ => None,
    }
}

impl<'e, 'a, 'l> ControlLowering<'e, 'a, 'l> {
    /// Lower statements that continue at `next`; returns the first node.
    pub(super) fn block(&mut self, stmts: &[Stmt], next: Option<Node>) -> Result<Option<Node>> {
        let mut next = next;
        let mut i = stmts.len();
        while i > 0 {
            // A maximal run of assignments becomes synthesised action tables.
            let mut j = i;
            while j > 0 && self.is_action_stmt(&stmts[j - 1]) {
                j -= 1;
            }
            if j < i {
                next = self.assignments(&stmts[j..i], next)?;
                i = j;
                continue;
            }
            i -= 1;
            next = self.stmt(&stmts[i], next)?;
        }
        Ok(next)
    }

    /// Whether a statement of the apply block is one an action could hold (an assignment,
    /// a local, `setValid`/`setInvalid`, an extern call): such runs become keyless tables.
    fn is_action_stmt(&self, st: &Stmt) -> bool {
        match st {
            Stmt::Assign { .. } | Stmt::VarDecl(_) => true,
            Stmt::Call(c) => {
                c.method_call().is_some_and(|(_, m, a)| {
                    a.is_empty() && (m.name == "setValid" || m.name == "setInvalid")
                }) || self.extern_method(c).is_some()
            }
            _ => false,
        }
    }

    /// Straight-line statements in an apply block: as p4c does, each group becomes a keyless
    /// table running one anonymous action. A new group starts where a statement touches a
    /// field an earlier statement of the group wrote (an action reads the PHV once).
    fn assignments(&mut self, stmts: &[Stmt], next: Option<Node>) -> Result<Option<Node>> {
        let env = self.scope.env();
        let mut groups: Vec<(Part, Span)> = Vec::new();
        let mut current = Part::default();
        let mut current_span: Option<Span> = None;
        let scope = self.scope.with_action_params(&[])?;
        for st in stmts {
            let (part, span) = self.action_stmt(&scope, st)?;
            if part.ops.is_empty() && part.externs.is_empty() {
                continue;
            }
            let mut trial = Part {
                ops: current.ops.clone(),
                externs: current.externs.clone(),
            };
            let part_copy = Part {
                ops: part.ops.clone(),
                externs: part.externs.clone(),
            };
            if self.merge(&mut trial, part_copy, span).is_ok() {
                current = trial;
                current_span = Some(current_span.map_or(span, |s| s.to(span)));
            } else {
                if let Some(s) = current_span.take() {
                    groups.push((std::mem::take(&mut current), s));
                }
                // A statement that conflicts with itself reports its own error here.
                self.merge(&mut current, part, span)?;
                current_span = Some(span);
            }
        }
        if let Some(s) = current_span {
            groups.push((current, s));
        }
        let mut next = next;
        for (part, span) in groups.into_iter().rev() {
            let line = env.source.line_of(span.start);
            let name = self.fresh(self.qualified(&format!("assign_l{line}")));
            let action = self.push_action(name.clone(), Vec::new(), part);
            let call = ActionCall {
                action,
                args: Vec::new(),
            };
            next = Some(self.keyless_table(name, call, span, next));
        }
        Ok(next)
    }

    /// A table with no key that always runs `call`, continuing at `next`: how a statement
    /// outside any table runs on the chip.
    fn keyless_table(
        &mut self,
        name: String,
        call: ActionCall,
        span: Span,
        next: Option<Node>,
    ) -> Node {
        self.names.insert(name.clone());
        let id = self.control.tables.len() as TableId;
        self.control.tables.push(Table {
            name,
            stage: 0,
            keys: Vec::new(),
            actions: vec![call.action],
            default_action: call,
            size: 1,
            const_entries: Vec::new(),
            next: TableNext::Always(next),
            direct_counter: None,
            parts: Vec::new(),
        });
        self.table_spans.push(span);
        self.table_pins.push(Vec::new());
        self.const_entry_spans.push(Vec::new());
        self.apply_spans.push(span);
        Node::Table(id)
    }

    /// One statement of the apply block (not an action statement) continuing at `next`:
    /// a table apply, an `if` (a gateway, or a hit/miss test), a `switch`, a block.
    fn stmt(&mut self, st: &Stmt, next: Option<Node>) -> Result<Option<Node>> {
        let env = self.scope.env();
        match st {
            Stmt::Block(b) => self.block(&b.stmts, next),
            Stmt::Call(call) => {
                if let Some((target, method, args)) = call.method_call() {
                    if method.name == "apply" && args.is_empty() {
                        return Ok(Some(self.apply_table(target, TableNext::Always(next))?));
                    }
                }
                if let ExprKind::Call(callee, args) = &call.kind {
                    if let ExprKind::Name(n) = &callee.kind {
                        // A direct action call: a keyless table running it (as p4c does).
                        let action = self.action_id(n)?;
                        let args = self.action_args(action, args, call.span)?;
                        let name = self.fresh(self.qualified(&format!("tbl_{}", n.name)));
                        return Ok(Some(self.keyless_table(
                            name,
                            ActionCall { action, args },
                            call.span,
                            next,
                        )));
                    }
                }
                Err(err(
                    ErrorKind::Unsupported,
                    call.span,
                    format!(
                        "`{}` is not supported in an apply block",
                        env.text(call.span)
                    ),
                ))
            }
            Stmt::If {
                cond,
                then,
                els,
                span,
            } => {
                let then_node = self.block(&then.stmts, next)?;
                let else_node = match els {
                    Some(b) => self.block(&b.stmts, next)?,
                    None => next,
                };
                if let Some((table, hit)) = hit_test(cond) {
                    let (on_hit, on_miss) = if hit {
                        (then_node, else_node)
                    } else {
                        (else_node, then_node)
                    };
                    return Ok(Some(self.apply_table(
                        table,
                        TableNext::HitMiss {
                            hit: on_hit,
                            miss: on_miss,
                        },
                    )?));
                }
                let c = self.scope.cond(cond)?;
                let cond = self.cond(&c);
                let id = self.control.gateways.len() as GatewayId;
                self.control.gateways.push(Gateway {
                    stage: 0,
                    cond,
                    on_true: then_node,
                    on_false: else_node,
                });
                self.gateway_spans.push(*span);
                Ok(Some(Node::Gateway(id)))
            }
            Stmt::Switch { expr, cases, span } => self.switch(expr, cases, *span, next),
            Stmt::Assign { span, .. } => Err(err(
                ErrorKind::Semantic,
                *span,
                "internal: assignment outside a run",
            )),
            Stmt::VarDecl(v) => Err(err(
                ErrorKind::Semantic,
                v.span,
                "internal: declaration outside a run",
            )),
        }
    }

    /// `switch (t.apply().action_run) { a: {...} b: c: {...} default: {...} }`.
    fn switch(
        &mut self,
        expr: &Expr,
        cases: &[ast::SwitchCase],
        span: Span,
        next: Option<Node>,
    ) -> Result<Option<Node>> {
        let env = self.scope.env();
        let target = match &expr.kind {
            ExprKind::Member(call, m) if m.name == "action_run" => call
                .method_call()
                .filter(|(_, mm, a)| mm.name == "apply" && a.is_empty())
                .map(|(t, _, _)| t),
            _ => None,
        };
        let Some(target) = target else {
            return Err(err(
                ErrorKind::Unsupported,
                expr.span,
                format!(
                    "`switch ({})` is not supported (only `switch (t.apply().action_run)`)",
                    env.text(expr.span)
                ),
            ));
        };
        let decl = self.decl;
        let tdecl = match &target.kind {
            ExprKind::Name(n) => decl.tables.iter().find(|t| t.name.name == n.name),
            _ => None,
        };
        let mut by_action: Vec<(ActionId, Option<Node>)> = Vec::new();
        let mut default = next;
        let mut has_default = false;
        let mut pending: Vec<&ast::SwitchCase> = Vec::new();
        for c in cases {
            pending.push(c);
            let Some(body) = &c.body else { continue };
            let node = self.block(&body.stmts, next)?;
            for l in pending.drain(..) {
                match &l.label {
                    None => {
                        if has_default {
                            return Err(err(
                                ErrorKind::Duplicate,
                                l.span,
                                "`default` appears twice",
                            ));
                        }
                        has_default = true;
                        default = node;
                    }
                    Some(id) => {
                        let listed =
                            tdecl.is_none_or(|t| t.actions.iter().any(|a| a.name == id.name));
                        if !listed {
                            return Err(err(
                                ErrorKind::Semantic,
                                id.span,
                                format!(
                                    "`{}` is not an action of table `{}`",
                                    id.name,
                                    env.text(target.span)
                                ),
                            ));
                        }
                        let a = self.action_id(id)?;
                        if by_action.iter().any(|x| x.0 == a) {
                            return Err(err(
                                ErrorKind::Duplicate,
                                id.span,
                                format!("case `{}` appears twice", id.name),
                            ));
                        }
                        by_action.push((a, node));
                    }
                }
            }
        }
        if let Some(l) = pending.first() {
            return Err(err(
                ErrorKind::Syntax,
                l.span,
                "the last case of a `switch` needs a block",
            ));
        }
        let _ = span;
        Ok(Some(self.apply_table(
            target,
            TableNext::ByAction {
                cases: by_action,
                default,
            },
        )?))
    }

    /// A checked condition as a gateway's: a validity test reads the header's validity
    /// bit, and a constant becomes `True` or its negation.
    fn cond(&mut self, c: &CondExpr) -> Cond {
        let env = self.scope.env();
        match c {
            CondExpr::Const(true) => Cond::True,
            CondExpr::Const(false) => Cond::Not(Box::new(Cond::True)),
            CondExpr::Cmp(a, op, b) => Cond::Cmp {
                a: self.layout.operand(env, a),
                op: *op,
                b: self.layout.operand(env, b),
            },
            CondExpr::Valid(h) => Cond::Cmp {
                a: Operand::Field(self.layout.valid(env, h)),
                op: CmpOp::Eq,
                b: Operand::Const(1),
            },
            CondExpr::And(a, b) => Cond::And(Box::new(self.cond(a)), Box::new(self.cond(b))),
            CondExpr::Or(a, b) => Cond::Or(Box::new(self.cond(a)), Box::new(self.cond(b))),
            CondExpr::Not(a) => Cond::Not(Box::new(self.cond(a))),
        }
    }
}
