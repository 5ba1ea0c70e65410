//! Expressions, typed before lowering emits anything for them: each rule about operands,
//! widths and what one ALU operation can compute lives here once (an action statement is one
//! VLIW operation; a gateway compares fields with constants).

use pipelines::program::{AluOp, CmpOp};

use super::names::{HeaderRef, Value};
use super::rules::{check_fits, truncate, width_mismatch};
use super::scope::Scope;
use crate::ast::*;
use crate::error::{err, ErrorKind, Result};

/// One VLIW operation, typed and checked: `dst = alu(a, b)`.
#[derive(Clone, Debug)]
pub struct AluExpr {
    /// Operation.
    pub alu: AluOp,
    /// First operand.
    pub a: Value,
    /// Second operand (`Const(0)` when unused).
    pub b: Value,
}

/// A checked condition of an `if`.
#[derive(Clone, Debug)]
pub enum CondExpr {
    /// A constant truth value.
    Const(bool),
    /// Compare two operands.
    Cmp(Value, CmpOp, Value),
    /// `hdr.x.isValid()`.
    Valid(HeaderRef),
    /// Both.
    And(Box<CondExpr>, Box<CondExpr>),
    /// Either.
    Or(Box<CondExpr>, Box<CondExpr>),
    /// Negation.
    Not(Box<CondExpr>),
}

/// An operand with its type width (`None` for a bare integer literal, which adopts the width
/// of the other side).
struct Typed {
    value: Value,
    width: Option<u16>,
    /// A narrowing cast was applied: the operand is only correct for operations that commute
    /// with truncation.
    narrowed: bool,
}

impl<'e, 'a> Scope<'e, 'a> {
    /// Type an operand (no ALU operation): field, constant, literal, action parameter or cast.
    fn operand(&self, e: &Expr) -> Result<Typed> {
        if let ExprKind::Slice(inner, hi, lo) = &e.kind {
            if let Some((v, w)) = self.env.const_eval(e)? {
                return Ok(Typed {
                    value: Value::Const(v),
                    width: w,
                    narrowed: false,
                });
            }
            let x = self.operand(inner)?;
            let w = x.width.unwrap_or(128);
            let (h, l) = self.env.slice_bounds(hi, lo, w, e.span)?;
            let value = match x.value {
                Value::Field(f) => Value::Slice(f, h, l),
                Value::Slice(f, _, base) => Value::Slice(f, h + base, l + base),
                _ => {
                    return Err(err(
                        ErrorKind::Unsupported,
                        e.span,
                        "only fields can be sliced (action parameters cannot)",
                    ))
                }
            };
            return Ok(Typed {
                value,
                width: Some(h - l + 1),
                narrowed: false,
            });
        }
        if let ExprKind::Cast(t, inner) = &e.kind {
            let w = match t {
                TypeRef::Bit(w, _) => *w,
                _ => 1,
            };
            let x = self.operand(inner)?;
            if let Value::Const(v) = x.value {
                return Ok(Typed {
                    value: Value::Const(truncate(v, w)),
                    width: Some(w),
                    narrowed: false,
                });
            }
            let narrows = x.width.is_some_and(|xw| xw > w);
            // Narrowing a field is a slice of its low bits; widening is free (values are
            // unsigned and zero-extended).
            let (value, narrowed) = match x.value {
                Value::Field(f) if narrows => (Value::Slice(f, w - 1, 0), false),
                Value::Slice(f, _, lo) if narrows => (Value::Slice(f, lo + w - 1, lo), false),
                v => (v, x.narrowed || narrows),
            };
            return Ok(Typed {
                value,
                width: Some(w),
                narrowed,
            });
        }
        if let ExprKind::Name(n) = &e.kind {
            if let Some(i) = self.action_params.iter().position(|p| p.0 == n.name) {
                let width = self.action_params[i].1;
                return Ok(Typed {
                    value: Value::Param(i as u8),
                    width: Some(width),
                    narrowed: false,
                });
            }
            if !self.params.contains_key(&n.name) && !self.locals.contains_key(&n.name) {
                if let Some((v, w)) = self.env.const_eval(e)? {
                    return Ok(Typed {
                        value: Value::Const(v),
                        width: w,
                        narrowed: false,
                    });
                }
                return Err(err(
                    ErrorKind::Undeclared,
                    n.span,
                    format!("undeclared name `{}`", n.name),
                ));
            }
        }
        if let Some((v, w)) = self.env.const_eval(e)? {
            return Ok(Typed {
                value: Value::Const(v),
                width: w,
                narrowed: false,
            });
        }
        if e.path().is_some() {
            let f = self.field(e)?;
            let width = Some(f.width);
            return Ok(Typed {
                value: Value::Field(Box::new(f)),
                width,
                narrowed: false,
            });
        }
        Err(err(
            ErrorKind::TooComplex,
            e.span,
            format!(
                "`{}` is not a field, parameter or constant",
                self.env.text(e.span)
            ),
        ))
    }

    /// Type a field, slice, parameter or constant operand (no width imposed).
    pub fn value_of(&self, e: &Expr) -> Result<Value> {
        Ok(self.operand(e)?.value)
    }

    /// Type an operand that must be `w` bits wide (a literal adopts the width if it fits).
    pub fn value_of_width(&self, e: &Expr, w: u16) -> Result<Value> {
        let t = self.operand(e)?;
        self.coerce(&t, w, e.span)?;
        if t.narrowed {
            return Err(err(
                ErrorKind::TooComplex,
                e.span,
                format!(
                    "`{}` truncates an action parameter; that needs an ALU operation of its own",
                    self.env.text(e.span)
                ),
            ));
        }
        Ok(t.value)
    }

    /// Give `t` the width `want`, checking it (a literal adopts it if it fits).
    fn coerce(&self, t: &Typed, want: u16, span: Span) -> Result<()> {
        match t.width {
            Some(w) if w != want => Err(width_mismatch(span, self.env.text(span), w, want)),
            None => match &t.value {
                Value::Const(v) => check_fits(*v, want, span),
                _ => Ok(()),
            },
            _ => Ok(()),
        }
    }

    /// The parts of a concatenation `a ++ b ++ ...` written into `width` bits, most
    /// significant first, each an operand with its width; `None` if `rhs` is not one.
    pub fn concat_parts(&self, rhs: &Expr, width: u16) -> Result<Option<Vec<(Value, u16)>>> {
        fn collect<'x>(e: &'x Expr, out: &mut Vec<&'x Expr>) {
            match &e.kind {
                ExprKind::Binary(BinOp::Concat, a, b) => {
                    collect(a, out);
                    collect(b, out);
                }
                _ => out.push(e),
            }
        }
        if !matches!(&rhs.kind, ExprKind::Binary(BinOp::Concat, ..)) {
            return Ok(None);
        }
        let mut exprs = Vec::new();
        collect(rhs, &mut exprs);
        let mut parts = Vec::new();
        let mut total = 0u32;
        for x in exprs {
            let t = self.operand(x).map_err(|e| {
                if e.kind == ErrorKind::TooComplex {
                    err(
                        ErrorKind::TooComplex,
                        x.span,
                        format!(
                            "`{}`: each part of a concatenation must be a field, slice, \
                             parameter or constant",
                            self.env.text(x.span)
                        ),
                    )
                } else {
                    e
                }
            })?;
            let Some(w) = t.width else {
                return Err(err(
                    ErrorKind::Type,
                    x.span,
                    format!(
                        "`{}` has no width; write it as `8w5` in a concatenation",
                        self.env.text(x.span)
                    ),
                ));
            };
            if t.narrowed {
                return Err(err(
                    ErrorKind::TooComplex,
                    x.span,
                    "a concatenation cannot truncate an action parameter",
                ));
            }
            total += w as u32;
            parts.push((t.value, w));
        }
        if total != width as u32 {
            return Err(err(
                ErrorKind::Type,
                rhs.span,
                format!(
                    "`{}` is bit<{total}> but bit<{width}> is expected",
                    self.env.text(rhs.span)
                ),
            ));
        }
        Ok(Some(parts))
    }

    /// Type the right-hand side of `dst = rhs` (`dst` being `w` bits wide) as one VLIW
    /// operation.
    pub fn alu_expr(&self, rhs: &Expr, w: u16) -> Result<AluExpr> {
        let ops = alu_ops(rhs);
        if ops > 1 {
            return Err(err(
                ErrorKind::TooComplex,
                rhs.span,
                format!(
                    "`{}` needs {ops} ALU operations; an action gets one per field per stage",
                    self.env.text(rhs.span)
                ),
            ));
        }
        // An operation of one operand: the second reads nothing (a constant 0).
        let unary = |alu: AluOp, x: &Expr| -> Result<(AluOp, Typed, Typed)> {
            let a = self.operand(x)?;
            self.coerce(&a, w, x.span)?;
            let unused = Typed {
                value: Value::Const(0),
                width: None,
                narrowed: false,
            };
            Ok((alu, a, unused))
        };
        let (alu, a, b) = match &rhs.kind {
            ExprKind::Binary(op, l, r) => {
                let alu =
                    match op {
                        BinOp::Add => AluOp::Add,
                        BinOp::Sub => AluOp::Sub,
                        BinOp::AddSat => AluOp::AddSat,
                        BinOp::SubSat => AluOp::SubSat,
                        BinOp::BitAnd => AluOp::And,
                        BinOp::BitOr => AluOp::Or,
                        BinOp::BitXor => AluOp::Xor,
                        BinOp::Shl => AluOp::Shl,
                        BinOp::Shr => AluOp::Shr,
                        BinOp::Concat => return Err(err(
                            ErrorKind::TooComplex,
                            rhs.span,
                            "a concatenation must be the whole right-hand side of an assignment",
                        )),
                        BinOp::Unsupported(s) => {
                            return Err(err(
                                ErrorKind::Unsupported,
                                rhs.span,
                                format!("operator `{s}` is not supported by the ALUs"),
                            ))
                        }
                        _ => {
                            return Err(err(
                                ErrorKind::Type,
                                rhs.span,
                                format!(
                                    "`{}` is a condition, not a value; use it in an `if`",
                                    self.env.text(rhs.span)
                                ),
                            ))
                        }
                    };
                let a = self.operand(l)?;
                self.coerce(&a, w, l.span)?;
                let b = self.operand(r)?;
                if matches!(alu, AluOp::Shl | AluOp::Shr) {
                    if !matches!(b.value, Value::Const(_)) {
                        return Err(err(
                            ErrorKind::Unsupported,
                            r.span,
                            "shift amounts must be constants",
                        ));
                    }
                } else {
                    self.coerce(&b, w, r.span)?;
                }
                (alu, a, b)
            }
            ExprKind::Unary(UnOp::BitNot, x) => unary(AluOp::Not, x)?,
            ExprKind::Unary(op, _) => {
                return Err(err(
                    ErrorKind::Unsupported,
                    rhs.span,
                    format!(
                        "operator `{}` is not supported in assignments",
                        match op {
                            UnOp::Not => "!",
                            _ => "-",
                        }
                    ),
                ))
            }
            ExprKind::Call(callee, args) if matches!(&callee.kind, ExprKind::Name(n) if n.name == "min" || n.name == "max") =>
            {
                let is_min = matches!(&callee.kind, ExprKind::Name(n) if n.name == "min");
                let [l, r] = args.as_slice() else {
                    return Err(err(ErrorKind::Type, rhs.span, "min/max take two arguments"));
                };
                let a = self.operand(l)?;
                self.coerce(&a, w, l.span)?;
                let b = self.operand(r)?;
                self.coerce(&b, w, r.span)?;
                (if is_min { AluOp::Min } else { AluOp::Max }, a, b)
            }
            _ => unary(AluOp::Set, rhs)?,
        };
        let commutes = matches!(
            alu,
            AluOp::Set
                | AluOp::Add
                | AluOp::Sub
                | AluOp::And
                | AluOp::Or
                | AluOp::Xor
                | AluOp::Not
                | AluOp::Shl
        );
        if (a.narrowed || b.narrowed) && !commutes {
            return Err(err(
                ErrorKind::TooComplex,
                rhs.span,
                format!(
                    "`{}` narrows an operand before the operation; the truncation needs its \
                     own ALU operation",
                    self.env.text(rhs.span)
                ),
            ));
        }
        Ok(AluExpr {
            alu,
            a: a.value,
            b: b.value,
        })
    }

    /// Type an `if` condition (table hit/miss tests are handled by the caller).
    pub fn cond(&self, e: &Expr) -> Result<CondExpr> {
        Ok(match &e.kind {
            ExprKind::Binary(BinOp::And, a, b) => {
                CondExpr::And(Box::new(self.cond(a)?), Box::new(self.cond(b)?))
            }
            ExprKind::Binary(BinOp::Or, a, b) => {
                CondExpr::Or(Box::new(self.cond(a)?), Box::new(self.cond(b)?))
            }
            ExprKind::Unary(UnOp::Not, a) => CondExpr::Not(Box::new(self.cond(a)?)),
            ExprKind::Binary(
                op @ (BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge),
                l,
                r,
            ) => {
                let cmp = match op {
                    BinOp::Eq => CmpOp::Eq,
                    BinOp::Ne => CmpOp::Ne,
                    BinOp::Lt => CmpOp::Lt,
                    BinOp::Le => CmpOp::Le,
                    BinOp::Gt => CmpOp::Gt,
                    _ => CmpOp::Ge,
                };
                let gateway_operand = |x: &Expr| -> Result<Typed> {
                    let t = self.operand(x).map_err(|e| {
                        if e.kind == ErrorKind::TooComplex {
                            err(
                                ErrorKind::TooComplex,
                                x.span,
                                format!(
                                    "`{}`: a gateway compares fields and constants only; \
                                     compute it in an action first",
                                    self.env.text(x.span)
                                ),
                            )
                        } else {
                            e
                        }
                    })?;
                    if t.narrowed {
                        return Err(err(
                            ErrorKind::TooComplex,
                            x.span,
                            "a gateway cannot truncate a field; compute it in an action first",
                        ));
                    }
                    Ok(t)
                };
                let (a, b) = (gateway_operand(l)?, gateway_operand(r)?);
                match (a.width, b.width) {
                    (Some(wa), _) => self.coerce(&b, wa, r.span)?,
                    (None, Some(wb)) => self.coerce(&a, wb, l.span)?,
                    (None, None) => {}
                }
                CondExpr::Cmp(a.value, cmp, b.value)
            }
            ExprKind::Bool(b) => CondExpr::Const(*b),
            _ => {
                if let Some((target, method, args)) = e.method_call() {
                    if method.name == "isValid" && args.is_empty() {
                        return Ok(CondExpr::Valid(self.header(target)?));
                    }
                }
                if let Some((_, method, _)) = e.method_call() {
                    if method.name == "apply" {
                        return Err(err(
                            ErrorKind::Unsupported,
                            e.span,
                            "a table can only be applied as a statement or as the whole \
                             condition `t.apply().hit` / `.miss`",
                        ));
                    }
                }
                let t = self.operand(e)?;
                match (&t.value, t.width) {
                    (Value::Field(_), Some(1)) => {
                        CondExpr::Cmp(t.value, CmpOp::Ne, Value::Const(0))
                    }
                    _ => {
                        return Err(err(
                            ErrorKind::Type,
                            e.span,
                            format!("`{}` is not a condition", self.env.text(e.span)),
                        ))
                    }
                }
            }
        })
    }
}

/// Number of ALU operations an expression needs (casts are free: they select bits).
fn alu_ops(e: &Expr) -> usize {
    match &e.kind {
        ExprKind::Binary(_, a, b) => 1 + alu_ops(a) + alu_ops(b),
        ExprKind::Unary(_, a) | ExprKind::Cast(_, a) => {
            usize::from(!matches!(e.kind, ExprKind::Cast(..))) + alu_ops(a)
        }
        ExprKind::Call(callee, args) => {
            usize::from(
                matches!(&callee.kind, ExprKind::Name(n) if n.name == "min" || n.name == "max"),
            ) + args.iter().map(alu_ops).sum::<usize>()
        }
        _ => 0,
    }
}
