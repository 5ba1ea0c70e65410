//! `RegisterAction` bodies to stateful-ALU programs ([`pipelines::program::StatefulAlu`]).
//!
//! A body is a tree of `if`/`else` over comparisons, with assignments to the register element
//! (`value`) and to the output parameter (`rv`). The hardware evaluates every comparison at
//! once, then picks at most one update and one output by predicates over the comparison
//! outcomes. So the body is compiled by running it once per outcome vector `k` (condition `i`
//! true sets bit `i` of `k`): each run yields the update and the output that path takes, and
//! each distinct update (output) gets the truth table of the `k`s that take it. Comparisons
//! are normalised to `==`, `<` and `>` (`!=`, `>=` and `<=` are their negations), so `a < b`
//! and `a >= b` cost one condition.
//!
//! Limits come from the chip profile (`salu`): conditions, updates and outputs. A body that
//! updates `value` twice on one path, or compares `value` after updating it, needs more than
//! one pass through the ALU and is rejected.

use pipelines::program::{
    AluOp, CmpOp, MinMax, Predicate, SaluCond, SaluOperand, SaluOutput, SaluUpdate, SaluValue,
};
use pipelines::spec::SaluSpec;

use crate::ast::{BinOp, Block, Expr, ExprKind, Span, Stmt, UnOp};
use crate::check::{FieldRef, Scope, Value};
use crate::error::{err, ErrorKind, Result};

/// The three lists of a compiled body.
pub struct SaluProgram {
    /// Comparisons.
    pub conditions: Vec<SaluCond>,
    /// Predicated updates.
    pub updates: Vec<SaluUpdate>,
    /// Predicated outputs.
    pub outputs: Vec<SaluOutput>,
}

/// What the compiler needs to know about one `RegisterAction`.
pub struct SaluContext<'s, 'e, 'a> {
    /// Names visible in the body.
    pub scope: &'s Scope<'e, 'a>,
    /// The `RegisterAction`'s name (for messages).
    pub name: &'s str,
    /// The `inout` parameter standing for the register element.
    pub value: &'s str,
    /// The `out` parameter, if declared.
    pub out: Option<&'s str>,
    /// Register element width.
    pub width: u16,
    /// Output width.
    pub out_width: u16,
    /// The chip's limits.
    pub spec: &'s SaluSpec,
}

/// A boolean formula over condition indices.
enum B {
    Const(bool),
    Atom(usize),
    Not(Box<B>),
    And(Box<B>, Box<B>),
    Or(Box<B>, Box<B>),
}

impl B {
    fn eval(&self, k: usize) -> bool {
        match self {
            B::Const(b) => *b,
            B::Atom(i) => k >> i & 1 == 1,
            B::Not(x) => !x.eval(k),
            B::And(x, y) => x.eval(k) && y.eval(k),
            B::Or(x, y) => x.eval(k) || y.eval(k),
        }
    }
}

/// A body statement, checked.
enum S {
    Update {
        alu: AluOp,
        a: SaluOperand,
        b: SaluOperand,
        span: Span,
    },
    /// `rv = value` (`None`) or `rv = operand`.
    Output(Option<SaluOperand>),
    If {
        cond: B,
        /// Whether the condition compares the register (invalid after an update).
        reads_value: bool,
        then: Vec<S>,
        els: Vec<S>,
        span: Span,
    },
}

/// Compile one `apply` body, interning fields with `field_id`.
pub fn compile(
    cx: &SaluContext,
    body: &Block,
    field_id: &mut dyn FnMut(&FieldRef) -> u16,
) -> Result<SaluProgram> {
    let mut conditions: Vec<SaluCond> = Vec::new();
    let stmts = {
        let mut b = Builder {
            cx,
            conditions: &mut conditions,
            field_id,
        };
        b.stmts(&body.stmts)?
    };
    let n = conditions.len();
    let hw_max = (cx.spec.conditions as usize).min(4);
    if n > hw_max {
        return Err(err(
            ErrorKind::Resource,
            body.span,
            format!(
                "RegisterAction `{}` needs {n} conditions; a stateful ALU of this chip evaluates {}",
                cx.name, hw_max
            ),
        ));
    }
    let vectors = 1usize << n;
    let mut updates: Vec<((AluOp, SaluOperand, SaluOperand), u16)> = Vec::new();
    let mut paths = Vec::with_capacity(vectors);
    for k in 0..vectors {
        let mut path = Path::default();
        run(cx, &stmts, k, &mut path)?;
        if let Some(u) = path.update {
            match updates.iter_mut().find(|x| x.0 == u) {
                Some(x) => x.1 |= 1 << k,
                None => updates.push((u, 1 << k)),
            }
        }
        paths.push(path);
    }
    // On a path that does not update the register, the value as read and as written are the
    // same: return whichever other paths return, so they share one output.
    let any_new = paths
        .iter()
        .any(|p| p.update.is_some() && p.output == Some(SaluValue::New));
    let mut outputs: Vec<(SaluValue, u16)> = Vec::new();
    for (k, p) in paths.iter().enumerate() {
        let Some(mut o) = p.output else { continue };
        if p.update.is_none() && matches!(o, SaluValue::Old | SaluValue::New) {
            o = if any_new {
                SaluValue::New
            } else {
                SaluValue::Old
            };
        }
        match outputs.iter_mut().find(|x| x.0 == o) {
            Some(x) => x.1 |= 1 << k,
            None => outputs.push((o, 1 << k)),
        }
    }
    let all: u16 = if vectors >= 16 {
        u16::MAX
    } else {
        (1u16 << vectors) - 1
    };
    let pred = |mask: u16| {
        if mask == all {
            Predicate::ALWAYS
        } else {
            Predicate(mask)
        }
    };
    if updates.len() > cx.spec.updates as usize {
        return Err(err(
            ErrorKind::Resource,
            body.span,
            format!(
                "RegisterAction `{}` needs {} different updates of the register; a stateful ALU \
                 of this chip has {}",
                cx.name,
                updates.len(),
                cx.spec.updates
            ),
        ));
    }
    if outputs.len() > cx.spec.outputs as usize {
        return Err(err(
            ErrorKind::Resource,
            body.span,
            format!(
                "RegisterAction `{}` needs {} different output values; a stateful ALU of this \
                 chip has {}",
                cx.name,
                outputs.len(),
                cx.spec.outputs
            ),
        ));
    }
    Ok(SaluProgram {
        conditions,
        updates: updates
            .into_iter()
            .map(|((alu, a, b), m)| SaluUpdate {
                when: pred(m),
                alu,
                a,
                b,
            })
            .collect(),
        outputs: outputs
            .into_iter()
            .map(|(value, m)| SaluOutput {
                when: pred(m),
                value,
            })
            .collect(),
    })
}

#[derive(Default)]
struct Path {
    update: Option<(AluOp, SaluOperand, SaluOperand)>,
    output: Option<SaluValue>,
}

fn run(cx: &SaluContext, stmts: &[S], k: usize, path: &mut Path) -> Result<()> {
    for s in stmts {
        match s {
            S::Update { alu, a, b, span } => {
                if path.update.is_some() {
                    return Err(err(
                        ErrorKind::TooComplex,
                        *span,
                        format!(
                            "RegisterAction `{}` updates `{}` twice on one path; a stateful ALU \
                             writes the register once per packet",
                            cx.name, cx.value
                        ),
                    ));
                }
                path.update = Some((*alu, *a, *b));
            }
            S::Output(src) => {
                path.output = Some(match src {
                    Some(o) => SaluValue::Operand(*o),
                    None if path.update.is_some() => SaluValue::New,
                    None => SaluValue::Old,
                });
            }
            S::If {
                cond,
                reads_value,
                then,
                els,
                span,
            } => {
                if *reads_value && path.update.is_some() {
                    return Err(err(
                        ErrorKind::TooComplex,
                        *span,
                        format!(
                            "RegisterAction `{}` compares `{}` after updating it; a stateful ALU \
                             compares the value as read",
                            cx.name, cx.value
                        ),
                    ));
                }
                run(cx, if cond.eval(k) { then } else { els }, k, path)?;
            }
        }
    }
    Ok(())
}

struct Builder<'b, 's, 'e, 'a> {
    cx: &'b SaluContext<'s, 'e, 'a>,
    conditions: &'b mut Vec<SaluCond>,
    field_id: &'b mut dyn FnMut(&FieldRef) -> u16,
}

impl Builder<'_, '_, '_, '_> {
    fn stmts(&mut self, stmts: &[Stmt]) -> Result<Vec<S>> {
        let mut out = Vec::new();
        for s in stmts {
            match s {
                Stmt::Block(b) => out.extend(self.stmts(&b.stmts)?),
                Stmt::Assign { lhs, rhs, span } => out.push(self.assign(lhs, rhs, *span)?),
                Stmt::If {
                    cond,
                    then,
                    els,
                    span,
                } => {
                    let mut reads_value = false;
                    let c = self.cond(cond, &mut reads_value)?;
                    let then = self.stmts(&then.stmts)?;
                    let els = match els {
                        Some(b) => self.stmts(&b.stmts)?,
                        None => Vec::new(),
                    };
                    out.push(S::If {
                        cond: c,
                        reads_value,
                        then,
                        els,
                        span: *span,
                    });
                }
                Stmt::Call(e) => {
                    return Err(err(
                        ErrorKind::Unsupported,
                        e.span,
                        format!(
                            "`{}` is not supported in a RegisterAction",
                            self.cx.scope.env().text(e.span)
                        ),
                    ))
                }
                Stmt::VarDecl(v) => {
                    return Err(err(
                        ErrorKind::Unsupported,
                        v.span,
                        "local variables are not supported in a RegisterAction",
                    ))
                }
                Stmt::Switch { span, .. } => {
                    return Err(err(
                        ErrorKind::Unsupported,
                        *span,
                        "`switch` is not supported in a RegisterAction",
                    ))
                }
            }
        }
        Ok(out)
    }

    fn is_value(&self, e: &Expr) -> bool {
        matches!(&e.kind, ExprKind::Name(n) if n.name == self.cx.value)
    }

    fn is_out(&self, e: &Expr) -> bool {
        matches!(&e.kind, ExprKind::Name(n) if Some(n.name.as_str()) == self.cx.out)
    }

    /// A stateful-ALU operand of the register's width: `value`, a whole field or a constant.
    fn operand(&mut self, e: &Expr, width: u16) -> Result<SaluOperand> {
        if self.is_value(e) {
            return Ok(SaluOperand::Register);
        }
        if self.is_out(e) {
            return Err(err(
                ErrorKind::Unsupported,
                e.span,
                "the output parameter cannot be read in a RegisterAction",
            ));
        }
        let env = self.cx.scope.env();
        match self.cx.scope.value_of_width(e, width)? {
            Value::Const(c) => Ok(SaluOperand::Const(c)),
            Value::Field(f) => Ok(SaluOperand::Field((self.field_id)(&f))),
            Value::Slice(..) => Err(err(
                ErrorKind::Unsupported,
                e.span,
                format!(
                    "`{}`: a stateful ALU reads whole fields (copy the slice into a field of \
                     its own first)",
                    env.text(e.span)
                ),
            )),
            Value::Param(_) => Err(err(
                ErrorKind::Unsupported,
                e.span,
                "action parameters cannot be used in a RegisterAction",
            )),
        }
    }

    fn assign(&mut self, lhs: &Expr, rhs: &Expr, span: Span) -> Result<S> {
        let w = self.cx.width;
        if self.is_value(lhs) {
            let (alu, a, b) = match &rhs.kind {
                ExprKind::Binary(op, l, r) => {
                    let alu = match op {
                        BinOp::Add => AluOp::Add,
                        BinOp::Sub => AluOp::Sub,
                        BinOp::AddSat => AluOp::AddSat,
                        BinOp::SubSat => AluOp::SubSat,
                        BinOp::BitAnd => AluOp::And,
                        BinOp::BitOr => AluOp::Or,
                        BinOp::BitXor => AluOp::Xor,
                        _ => {
                            return Err(err(
                                ErrorKind::Unsupported,
                                rhs.span,
                                format!(
                                    "`{}`: a stateful ALU update is +, -, |+|, |-|, &, |, ^, ~, \
                                     min, max or a copy of one operand",
                                    self.cx.scope.env().text(rhs.span)
                                ),
                            ))
                        }
                    };
                    (alu, self.operand(l, w)?, self.operand(r, w)?)
                }
                ExprKind::Unary(UnOp::BitNot, x) => {
                    (AluOp::Not, self.operand(x, w)?, SaluOperand::Const(0))
                }
                ExprKind::Call(callee, args) if matches!(&callee.kind, ExprKind::Name(n) if n.name == "min" || n.name == "max") =>
                {
                    let is_min = matches!(&callee.kind, ExprKind::Name(n) if n.name == "min");
                    let [l, r] = args.as_slice() else {
                        return Err(err(ErrorKind::Type, rhs.span, "min/max take two arguments"));
                    };
                    let alu = if is_min { AluOp::Min } else { AluOp::Max };
                    (alu, self.operand(l, w)?, self.operand(r, w)?)
                }
                _ => (AluOp::Set, self.operand(rhs, w)?, SaluOperand::Const(0)),
            };
            return Ok(S::Update { alu, a, b, span });
        }
        if self.is_out(lhs) {
            if self.is_value(rhs) {
                if self.cx.out_width != w {
                    return Err(err(
                        ErrorKind::Type,
                        rhs.span,
                        format!(
                            "`{}` is bit<{w}> but the output is bit<{}>",
                            self.cx.value, self.cx.out_width
                        ),
                    ));
                }
                return Ok(S::Output(None));
            }
            let o = self.operand(rhs, self.cx.out_width).map_err(|e| {
                if e.kind == ErrorKind::TooComplex {
                    err(
                        ErrorKind::TooComplex,
                        rhs.span,
                        "a stateful ALU output is the register (as read or as written), a field \
                         or a constant",
                    )
                } else {
                    e
                }
            })?;
            return Ok(S::Output(Some(o)));
        }
        Err(err(
            ErrorKind::Unsupported,
            lhs.span,
            format!(
                "a RegisterAction can only assign `{}`{}",
                self.cx.value,
                self.cx.out.map_or(String::new(), |o| format!(" and `{o}`"))
            ),
        ))
    }

    /// A condition as a formula over (deduplicated, normalised) comparisons.
    fn cond(&mut self, e: &Expr, reads_value: &mut bool) -> Result<B> {
        Ok(match &e.kind {
            ExprKind::Bool(b) => B::Const(*b),
            ExprKind::Unary(UnOp::Not, x) => B::Not(Box::new(self.cond(x, reads_value)?)),
            ExprKind::Binary(BinOp::And, x, y) => B::And(
                Box::new(self.cond(x, reads_value)?),
                Box::new(self.cond(y, reads_value)?),
            ),
            ExprKind::Binary(BinOp::Or, x, y) => B::Or(
                Box::new(self.cond(x, reads_value)?),
                Box::new(self.cond(y, reads_value)?),
            ),
            ExprKind::Binary(
                op @ (BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge),
                l,
                r,
            ) => {
                let w = self.cx.width;
                let a = self.operand(l, w)?;
                let b = self.operand(r, w)?;
                *reads_value |= a == SaluOperand::Register || b == SaluOperand::Register;
                let (cmp, negate) = match op {
                    BinOp::Eq => (CmpOp::Eq, false),
                    BinOp::Ne => (CmpOp::Eq, true),
                    BinOp::Lt => (CmpOp::Lt, false),
                    BinOp::Ge => (CmpOp::Lt, true),
                    BinOp::Gt => (CmpOp::Gt, false),
                    _ => (CmpOp::Gt, true),
                };
                let c = SaluCond { a, op: cmp, b };
                let i = match self.conditions.iter().position(|x| *x == c) {
                    Some(i) => i,
                    None => {
                        self.conditions.push(c);
                        self.conditions.len() - 1
                    }
                };
                if negate {
                    B::Not(Box::new(B::Atom(i)))
                } else {
                    B::Atom(i)
                }
            }
            _ => {
                return Err(err(
                    ErrorKind::Unsupported,
                    e.span,
                    format!(
                        "`{}` is not a condition a stateful ALU evaluates (compare `{}`, fields \
                         and constants with ==, !=, <, <=, >, >=)",
                        self.cx.scope.env().text(e.span),
                        self.cx.value
                    ),
                ))
            }
        })
    }
}

/// What the compiler needs to know about one `MinMaxAction`.
pub struct MinMaxContext<'s, 'e, 'a> {
    /// Names visible in the body, and the register and output as for a `RegisterAction`
    /// (`width` is the lane width, `out_width` the width of both outputs).
    pub salu: SaluContext<'s, 'e, 'a>,
    /// The second `out` parameter (the selected lane), if declared.
    pub lane: Option<&'s str>,
}

/// A compiled `MinMaxAction` body.
pub struct MinMaxProgram {
    /// The unit's settings.
    pub minmax: MinMax,
    /// Whether `rv` receives the selected lane's value.
    pub value_out: bool,
    /// Whether the lane parameter receives the selected lane's number.
    pub lane_out: bool,
}

/// Compile a `MinMaxAction` body: one call of the unit,
/// `[rv =] this.min8(value, mask[, lane[, postmod]]);` (or `max8`, `min16`, `max16`), where
/// `lane` names the second `out` parameter and `postmod` (a field or a constant, negative to
/// subtract) is added to the selected lane.
pub fn compile_minmax(
    cx: &MinMaxContext,
    body: &Block,
    field_id: &mut dyn FnMut(&FieldRef) -> u16,
) -> Result<MinMaxProgram> {
    let s = &cx.salu;
    let env = s.scope.env();
    let shape = || {
        format!(
            "a MinMaxAction body is one call: `[rv =] this.min8({}, mask[, lane[, postmod]]);` \
             (or max8, min16, max16)",
            s.value
        )
    };
    let (call, value_out) = match body.stmts.as_slice() {
        [Stmt::Call(e)] => (e, false),
        [Stmt::Assign { lhs, rhs, .. }] if matches!(&lhs.kind, ExprKind::Name(n) if Some(n.name.as_str()) == s.out) => {
            (rhs, true)
        }
        _ => return Err(err(ErrorKind::Unsupported, body.span, shape())),
    };
    let Some((target, method, args)) = call.method_call() else {
        return Err(err(ErrorKind::Unsupported, call.span, shape()));
    };
    if !matches!(&target.kind, ExprKind::Name(n) if n.name == "this") {
        return Err(err(ErrorKind::Unsupported, call.span, shape()));
    }
    let (max, lane_bits) = match method.name.as_str() {
        "min8" => (false, 8),
        "max8" => (true, 8),
        "min16" => (false, 16),
        "max16" => (true, 16),
        other => {
            return Err(err(
                ErrorKind::Unsupported,
                method.span,
                format!("`this.{other}`: the min/max unit does min8, max8, min16 or max16"),
            ))
        }
    };
    if lane_bits != s.width {
        return Err(err(
            ErrorKind::Type,
            method.span,
            format!(
                "`{}` works on {lane_bits}-bit lanes but the register's elements are bit<{}>",
                method.name, s.width
            ),
        ));
    }
    if !s.spec.minmax {
        return Err(err(
            ErrorKind::Resource,
            method.span,
            "this chip's stateful ALU has no min/max unit (profile `salu.minmax`)",
        ));
    }
    let lanes = MinMax::WORD_BITS / lane_bits;
    let (v, mask, lane, postmod) = match args {
        [v, m] => (v, m, None, None),
        [v, m, l] => (v, m, Some(l), None),
        [v, m, l, p] => (v, m, Some(l), Some(p)),
        _ => return Err(err(ErrorKind::Type, call.span, shape())),
    };
    if !matches!(&v.kind, ExprKind::Name(n) if n.name == s.value) {
        return Err(err(
            ErrorKind::Type,
            v.span,
            format!("the unit searches the word read: pass `{}`", s.value),
        ));
    }
    let mut operand = |e: &Expr, width: u16, what: &str| -> Result<SaluOperand> {
        match s.scope.value_of_width(e, width)? {
            Value::Const(c) => Ok(SaluOperand::Const(c)),
            Value::Field(f) => Ok(SaluOperand::Field(field_id(&f))),
            _ => Err(err(
                ErrorKind::Unsupported,
                e.span,
                format!(
                    "`{}`: the {what} is a whole field or a constant",
                    env.text(e.span)
                ),
            )),
        }
    };
    let mask = operand(mask, lanes, "mask")?;
    let lane_out = match lane {
        None => false,
        Some(l) if matches!(&l.kind, ExprKind::Name(n) if Some(n.name.as_str()) == cx.lane) => true,
        Some(l) => {
            return Err(err(
                ErrorKind::Type,
                l.span,
                format!(
                    "the lane goes to the second `out` parameter of `apply`{}",
                    cx.lane.map_or(String::new(), |n| format!(" (`{n}`)"))
                ),
            ))
        }
    };
    let postmod = match postmod {
        None => SaluOperand::Const(0),
        Some(p) => match &p.kind {
            // `-k`: two's complement at the lane width.
            ExprKind::Unary(UnOp::Neg, x) => match operand(x, lane_bits, "postmod")? {
                SaluOperand::Const(k) if k > 0 && k <= 1 << (lane_bits - 1) => {
                    SaluOperand::Const((1u128 << lane_bits) - k)
                }
                _ => {
                    return Err(err(
                        ErrorKind::Type,
                        p.span,
                        format!(
                            "a negative postmod is a constant from -1 to -{}",
                            1u32 << (lane_bits - 1)
                        ),
                    ))
                }
            },
            _ => operand(p, lane_bits, "postmod")?,
        },
    };
    Ok(MinMaxProgram {
        minmax: MinMax { max, mask, postmod },
        value_out,
        lane_out,
    })
}
