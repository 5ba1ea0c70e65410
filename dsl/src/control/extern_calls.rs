//! Extern calls in actions: `x.execute(i)`, `x.count(i)`, `h.get({...})`, `qd.read(p, q)`
//! and their kin, each checked against its instance's type and lowered to one
//! [`ExternCall`], with the hash unit a `get` needs.

use pipelines::program::*;

use super::{ControlLowering, Extern, Part};
use crate::ast::{self, Expr, ExprKind, Span};
use crate::check::Scope;
use crate::error::{err, CompileError, ErrorKind, Result};
use pipelines::meter::check_byte_count_adjust;

/// Whether a meter's argument is a colour (`MeterColor_t.GREEN`: colour-aware metering).
fn is_meter_colour(e: &Expr) -> bool {
    matches!(&e.kind, ExprKind::Member(base, _)
        if matches!(&base.kind, ExprKind::Name(t) if t.name == "MeterColor_t"))
}

impl<'e, 'a, 'l> ControlLowering<'e, 'a, 'l> {
    /// `target.method(args)` where `target` names an extern instance.
    pub(super) fn extern_method<'x>(
        &self,
        e: &'x Expr,
    ) -> Option<(&'x ast::Ident, Extern, &'x ast::Ident, &'x [Expr])> {
        let (target, method, args) = e.method_call()?;
        let ExprKind::Name(n) = &target.kind else {
            return None;
        };
        let x = self.externs.get(&n.name)?.clone();
        Some((n, x, method, args))
    }

    /// The error for a method an extern does not have (or not in that form), with how the
    /// extern is used instead.
    fn bad_method(name: &ast::Ident, x: &Extern, method: &ast::Ident, how: &str) -> CompileError {
        err(
            ErrorKind::Type,
            method.span,
            format!(
                "`{}.{}`: a `{}` is used as {how}",
                name.name,
                method.name,
                x.type_name()
            ),
        )
    }

    /// The index of an extern access: an operand of `width` bits or a hash unit's output.
    fn extern_index(
        &mut self,
        scope: &Scope,
        e: &Expr,
        width: u16,
        what: &str,
    ) -> Result<ExternIndex> {
        if let Some((
            n,
            Extern::Hash {
                algorithm,
                width: hw,
            },
            m,
            args,
        )) = self.extern_method(e)
        {
            if m.name != "get" {
                return Err(Self::bad_method(
                    n,
                    &Extern::Hash {
                        algorithm,
                        width: hw,
                    },
                    m,
                    "`h.get({...})`",
                ));
            }
            if hw != width {
                return Err(err(
                    ErrorKind::Type,
                    e.span,
                    format!(
                        "`{}` gives bit<{hw}> but {what} is indexed by bit<{width}>",
                        n.name
                    ),
                ));
            }
            let id = self.hash_unit(scope, n, algorithm, hw, args, e.span)?;
            return Ok(ExternIndex::Hash(id));
        }
        let v = scope.value_of_width(e, width)?;
        Ok(ExternIndex::Operand(self.layout.operand(scope.env(), &v)))
    }

    /// A hash unit computing `name.get(args)`.
    fn hash_unit(
        &mut self,
        scope: &Scope,
        name: &ast::Ident,
        algorithm: HashAlgorithm,
        width: u16,
        args: &[Expr],
        span: Span,
    ) -> Result<HashId> {
        let env = scope.env();
        let [arg] = args else {
            return Err(err(
                ErrorKind::Type,
                span,
                "`get` takes one list of fields: `h.get({a, b})`",
            ));
        };
        let items: Vec<&Expr> = match &arg.kind {
            ExprKind::List(items) => items.iter().collect(),
            _ => vec![arg],
        };
        if items.is_empty() {
            return Err(err(
                ErrorKind::Type,
                arg.span,
                "a hash needs at least one field",
            ));
        }
        let mut fields = Vec::new();
        let mut in_bits = 0u32;
        for it in items {
            let f =
                match scope.place(it) {
                    Ok(crate::check::Place::Field(f)) => f,
                    Ok(_) | Err(_) if matches!(it.kind, ExprKind::Slice(..)) => return Err(err(
                        ErrorKind::Unsupported,
                        it.span,
                        "hash inputs must be whole fields (copy the slice into a field of its own)",
                    )),
                    Ok(_) => {
                        return Err(err(
                            ErrorKind::Type,
                            it.span,
                            format!("`{}` is not a field", env.text(it.span)),
                        ))
                    }
                    Err(e) => return Err(e),
                };
            fields.push(self.layout.field(env, &f));
            in_bits += u32::from(f.width);
        }
        if in_bits > MAX_HASH_INPUT_BITS {
            return Err(err(
                ErrorKind::Resource,
                arg.span,
                format!(
                    "`{}` hashes {in_bits} bits of fields; a hash unit takes at most \
                     {MAX_HASH_INPUT_BITS}",
                    name.name
                ),
            ));
        }
        let base = self.qualified(&name.name);
        let hname = if self.control.hashes.iter().any(|h| h.name == base) {
            (1..)
                .map(|i| format!("{base}_{i}"))
                .find(|n| !self.control.hashes.iter().any(|h| &h.name == n))
                .unwrap_or(base)
        } else {
            base
        };
        let id = self.control.hashes.len() as HashId;
        self.control.hashes.push(HashUnit {
            name: hname,
            stage: 0,
            algorithm,
            fields,
            width,
        });
        Ok(id)
    }

    /// `dst = extern.method(...)`, if `rhs` is an extern call.
    pub(super) fn extern_assign(
        &mut self,
        scope: &Scope,
        lhs: &Expr,
        rhs: &Expr,
        span: Span,
    ) -> Result<Option<Part>> {
        let env = scope.env();
        let Some((n, x, m, args)) = self.extern_method(rhs) else {
            return Ok(None);
        };
        let dst = scope.lvalue(lhs).map_err(|e| {
            if matches!(lhs.kind, ExprKind::Slice(..)) {
                err(
                    ErrorKind::Unsupported,
                    lhs.span,
                    "an extern's result must go to a whole field",
                )
            } else {
                e
            }
        })?;
        let want = |w: u16| -> Result<()> {
            if dst.width != w {
                return Err(err(
                    ErrorKind::Type,
                    rhs.span,
                    format!(
                        "`{}` is bit<{w}> but {} is bit<{}>",
                        env.text(rhs.span),
                        dst.name,
                        dst.width
                    ),
                ));
            }
            Ok(())
        };
        let call = match (&x, m.name.as_str(), args) {
            (
                Extern::RegisterAction {
                    salu,
                    index,
                    out,
                    lane_out,
                    ..
                },
                "execute",
                [idx, lane @ ..],
            ) if lane.len() <= *lane_out as usize => {
                want(*out)?;
                let d = self.layout.field(env, &dst);
                self.stateful_call(scope, (*salu, *index, *out), n, idx, lane, Some(d))?
            }
            (Extern::Meter { id, index }, "execute", [idx, adjust @ ..])
                if adjust.len() <= 1 && !adjust.iter().any(is_meter_colour) =>
            {
                self.meter_adjust(env, *id, n, adjust.first())?;
                if dst.width < 2 {
                    return Err(err(
                        ErrorKind::Type,
                        lhs.span,
                        format!(
                            "{} is bit<{}>; a colour needs at least 2 bits",
                            dst.name, dst.width
                        ),
                    ));
                }
                let what = format!("`{}`", n.name);
                let index = self.extern_index(scope, idx, *index, &what)?;
                ExternCall::Meter {
                    meter: *id,
                    index,
                    dst: self.layout.field(env, &dst),
                }
            }
            (Extern::Meter { .. }, "execute", [_, c, ..]) if is_meter_colour(c) => {
                return Err(err(
                    ErrorKind::Unsupported,
                    c.span,
                    "colour-aware metering (a `MeterColor_t` argument) is not supported",
                ))
            }
            (Extern::Hash { algorithm, width }, "get", _) => {
                want(*width)?;
                let hash = self.hash_unit(scope, n, *algorithm, *width, args, rhs.span)?;
                ExternCall::Hash {
                    hash,
                    dst: self.layout.field(env, &dst),
                }
            }
            (Extern::Random { width }, "get", []) => {
                want(*width)?;
                ExternCall::Random {
                    dst: self.layout.field(env, &dst),
                }
            }
            (Extern::QueueDepth, "empty", [port]) => {
                if dst.width > 128 {
                    return Err(err(
                        ErrorKind::Type,
                        rhs.span,
                        "the empty-queue bitmap is at most bit<128> (one bit per queue)",
                    ));
                }
                let port = scope.value_of_width(port, 9)?;
                ExternCall::EmptyQueues {
                    port: self.layout.operand(env, &port),
                    dst: self.layout.field(env, &dst),
                }
            }
            (Extern::QueueDepth, "read", [port, qid]) => {
                want(19)?;
                let port = scope.value_of_width(port, 9)?;
                let qid = scope.value_of_width(qid, 7)?;
                ExternCall::QueueDepth {
                    port: self.layout.operand(env, &port),
                    queue: self.layout.operand(env, &qid),
                    dst: self.layout.field(env, &dst),
                }
            }
            _ => {
                return Err(Self::bad_method(
                    n,
                    &x,
                    m,
                    match &x {
                        Extern::RegisterAction { minmax: true, .. } => {
                            "`dst = mm.execute(word[, lane])`"
                        }
                        Extern::RegisterAction { .. } => "`dst = ra.execute(index)`",
                        Extern::Meter { .. } => "`colour = m.execute(index[, adjust])`",
                        Extern::Hash { .. } => "`dst = h.get({fields})`",
                        Extern::Random { .. } => "`dst = r.get()`",
                        Extern::QueueDepth => {
                            "`depth = qd.read(port, qid)` or `empty = qd.empty(port)`"
                        }
                        Extern::Counter { .. } => "`c.count(index);`",
                        Extern::DirectCounter(_) => "the table property `counters = dc;`",
                        Extern::Register { .. } => "the target of a RegisterAction",
                    },
                ))
            }
        };
        Ok(Some(Part {
            ops: Vec::new(),
            externs: vec![(call, span)],
        }))
    }

    /// The constant of `m.execute(index, adjust_byte_count)` (or its absence) on meter array
    /// `meter`, named `n`. TNA subtracts it from each packet's length, so the array's
    /// byte-count adjustment is its negation (as bf-p4c's `AdjustByteCountSetup` makes it);
    /// it must be a constant (`-24` adds 24 bytes), fit the meter ALU, and be the same in
    /// every call: a meter table has one adjustment. A byte meter only.
    fn meter_adjust(
        &mut self,
        env: &crate::check::Env,
        meter: MeterId,
        n: &ast::Ident,
        arg: Option<&Expr>,
    ) -> Result<()> {
        let value = match arg {
            None => None,
            Some(e) => {
                let (inner, sign) = match &e.kind {
                    ExprKind::Unary(ast::UnOp::Neg, inner) => (&**inner, -1),
                    _ => (e, 1),
                };
                let v = env.const_value(inner, None).map_err(|_| {
                    err(
                        ErrorKind::Unsupported,
                        e.span,
                        format!(
                            "`{}`'s adjust_byte_count must be a constant: a meter array has one \
                             byte-count adjustment, set when the program is loaded",
                            n.name
                        ),
                    )
                })?;
                let v = i64::try_from(v).map(|v| v * sign);
                let adjust = v.ok().and_then(|v| i32::try_from(-v).ok());
                let m = &self.control.meters[meter as usize];
                let range = self.spec.meter.byte_count_adjust_range();
                let checked = match adjust {
                    Some(a) => check_byte_count_adjust(m.unit, a, range).map(|_| a),
                    None => Err(format!(
                        "`{}` does not fit a byte-count adjustment",
                        env.text(e.span)
                    )),
                };
                let adjust = checked.map_err(|reason| {
                    err(
                        ErrorKind::Resource,
                        e.span,
                        format!(
                            "adjust_byte_count `{}` of `{}` (TNA subtracts it from the length): \
                             meter array {reason}",
                            env.text(e.span),
                            n.name
                        ),
                    )
                })?;
                self.control.meters[meter as usize].byte_count_adjust = adjust;
                Some(-(adjust as i64))
            }
        };
        match self.meter_adjust_args.get(&meter) {
            Some(first) if *first != value => {
                let say = |v: &Option<i64>| v.map_or("none".to_string(), |v| v.to_string());
                let at = arg.map_or(n.span, |e| e.span);
                Err(err(
                    ErrorKind::Semantic,
                    at,
                    format!(
                        "`{}` is executed with adjust_byte_count {} here and {} before: a meter \
                         array has one byte-count adjustment, so every call gives the same",
                        n.name,
                        say(&value),
                        say(first)
                    ),
                ))
            }
            _ => {
                self.meter_adjust_args.insert(meter, value);
                Ok(())
            }
        }
    }

    /// `ra.execute(index)` or `mm.execute(word[, lane])` on the action extern `n` (its
    /// program, index width and output width), its output to `dst`.
    fn stateful_call(
        &mut self,
        scope: &Scope,
        (salu, index, out): (SaluId, u16, u16),
        n: &ast::Ident,
        idx: &Expr,
        lane: &[Expr],
        dst: Option<FieldId>,
    ) -> Result<ExternCall> {
        let env = scope.env();
        let index = self.extern_index(scope, idx, index, &format!("`{}`", n.name))?;
        let lane_dst = match lane {
            [l] => {
                let f = scope.lvalue(l)?;
                if f.width != out {
                    return Err(err(
                        ErrorKind::Type,
                        l.span,
                        format!(
                            "the lane is bit<{out}> (the action's output type) but {} is bit<{}>",
                            f.name, f.width
                        ),
                    ));
                }
                Some(self.layout.field(env, &f))
            }
            _ => None,
        };
        Ok(ExternCall::Stateful {
            salu,
            index,
            dst,
            lane_dst,
        })
    }

    /// `extern.method(...);` as a statement, if it is one.
    pub(super) fn extern_stmt(&mut self, scope: &Scope, call: &Expr) -> Result<Option<Part>> {
        let Some((n, x, m, args)) = self.extern_method(call) else {
            return Ok(None);
        };
        let what = format!("`{}`", n.name);
        let c = match (&x, m.name.as_str(), args) {
            (
                Extern::RegisterAction {
                    salu,
                    index,
                    out,
                    lane_out,
                    ..
                },
                "execute",
                [idx, lane @ ..],
            ) if lane.len() <= *lane_out as usize => {
                self.stateful_call(scope, (*salu, *index, *out), n, idx, lane, None)?
            }
            (Extern::Counter { id, index }, "count", [idx]) => {
                let index = self.extern_index(scope, idx, *index, &what)?;
                ExternCall::Count {
                    counter: *id,
                    index,
                }
            }
            // A direct counter counts every packet its table sees (`counters = dc;`).
            (Extern::DirectCounter(_), "count", []) => return Ok(Some(Part::default())),
            _ => {
                return Err(Self::bad_method(
                    n,
                    &x,
                    m,
                    match &x {
                        Extern::RegisterAction { minmax: true, .. } => {
                            "`mm.execute(word[, lane]);`"
                        }
                        Extern::RegisterAction { .. } => "`ra.execute(index);`",
                        Extern::Counter { .. } => "`c.count(index);`",
                        Extern::DirectCounter(_) => "`dc.count();`",
                        Extern::Meter { .. } => "`colour = m.execute(index)` (assign the colour)",
                        Extern::Hash { .. } => "`dst = h.get({fields})` (assign the hash)",
                        Extern::Random { .. } => "`dst = r.get()` (assign the number)",
                        Extern::QueueDepth => "`depth = qd.read(port, qid)` (assign the depth)",
                        Extern::Register { .. } => "the target of a RegisterAction",
                    },
                ))
            }
        };
        Ok(Some(Part {
            ops: Vec::new(),
            externs: vec![(c, call.span)],
        }))
    }
}
