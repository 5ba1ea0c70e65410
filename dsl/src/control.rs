//! Lowering of a match-action control: its actions, tables and apply block, and the externs
//! (registers and `RegisterAction`s, meters, counters, hashes, random numbers, published queue
//! depths) its actions drive.
//!
//! The apply block becomes a graph of tables and gateways built back to front: each
//! statement is lowered knowing the node that follows it, so both branches of an `if` (and
//! every case of a `switch`) simply continue at the same node.
//!
//! Externs follow the pipe's rules (see [`pipelines::program::ExternCall`]):
//! - an extern call is part of an action and, like the action's VLIW operations, reads the
//!   PHV as it was before the action;
//! - an extern array (register, meter, counter) and a hash unit live in the stage of the one
//!   table whose actions drive it, so each is driven by exactly one table; a register array in
//!   particular gets one read-modify-write per packet ("accessed twice in one pass" otherwise);
//! - arrays no table drives are dropped (they would never be touched).

use std::collections::{HashMap, HashSet};

use pipelines::dataflow::{self, FieldBits};
use pipelines::program::*;
use pipelines::spec::PipeSpec;

use crate::ast::{self, Expr, ExprKind, Pattern, Span, Stmt};
use crate::check::{AluExpr, CondExpr, Env, FieldRef, GressBlocks, Scope, Ty, Value};
use crate::error::{CompileError, ErrorKind, Result};
use crate::lower::{masked, ones, LayoutBuilder};
use crate::salu;
use crate::tna;

fn err(kind: ErrorKind, span: Span, msg: impl Into<String>) -> CompileError {
    CompileError::new(kind, span, msg)
}

/// A lowered control, before renumbering.
pub(crate) struct LoweredControl {
    /// The control (all stages 0).
    pub control: ControlProgram,
    /// Where each table is declared (or the statement a synthesised one runs).
    pub table_spans: Vec<Span>,
    /// Where each gateway's `if` is.
    pub gateway_spans: Vec<Span>,
}

/// A declared extern instance.
#[derive(Clone, Debug)]
enum Extern {
    Register {
        id: RegisterId,
        width: u16,
        index: u16,
    },
    /// A `RegisterAction`, or a `MinMaxAction` (`minmax`; `lane_out`: it returns the lane).
    RegisterAction {
        salu: SaluId,
        index: u16,
        out: u16,
        minmax: bool,
        lane_out: bool,
    },
    Meter {
        id: MeterId,
        index: u16,
    },
    Counter {
        id: CounterId,
        index: u16,
    },
    DirectCounter(CountKind),
    Hash {
        algorithm: HashAlgorithm,
        width: u16,
    },
    Random {
        width: u16,
    },
    QueueDepth,
}

impl Extern {
    fn type_name(&self) -> &'static str {
        match self {
            Extern::Register { .. } => tna::REGISTER,
            Extern::RegisterAction { minmax: true, .. } => tna::MINMAX_ACTION,
            Extern::RegisterAction { .. } => tna::REGISTER_ACTION,
            Extern::Meter { .. } => tna::METER,
            Extern::Counter { .. } => tna::COUNTER,
            Extern::DirectCounter(_) => tna::DIRECT_COUNTER,
            Extern::Hash { .. } => tna::HASH,
            Extern::Random { .. } => tna::RANDOM,
            Extern::QueueDepth => tna::QUEUE_DEPTH,
        }
    }
}

/// An extern resource that must belong to one table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Res {
    Register(RegisterId),
    Meter(MeterId),
    Counter(CounterId),
    Hash(HashId),
}

/// Operations and extern calls of one statement (or of a whole action).
#[derive(Default)]
struct Part {
    ops: Vec<Op>,
    externs: Vec<(ExternCall, Span)>,
}

pub(crate) struct ControlLowering<'e, 'a, 'l> {
    scope: Scope<'e, 'a>,
    gress: Gress,
    decl: &'a ast::ControlDecl,
    layout: &'l mut LayoutBuilder,
    spec: &'l PipeSpec,
    control: ControlProgram,
    table_spans: Vec<Span>,
    /// Where each table is applied (ordering the "second use" of an extern).
    apply_spans: Vec<Span>,
    gateway_spans: Vec<Span>,
    /// Declared actions by name, lowered up front.
    actions: HashMap<String, ActionId>,
    /// Where each action's extern calls are, parallel to `Action::externs`.
    extern_spans: Vec<Vec<Span>>,
    /// Tables already applied, with where.
    applied: HashMap<String, Span>,
    /// Names in use for actions and tables (synthesised ones get unique names).
    names: HashSet<String>,
    /// Extern instances by name.
    externs: HashMap<String, Extern>,
    /// Direct counters already attached, with the table.
    direct_owner: HashMap<String, String>,
}

/// Local variable declarations anywhere in `stmts`, in source order.
fn collect_locals<'s>(stmts: &'s [Stmt], out: &mut Vec<&'s ast::VarDecl>) {
    for s in stmts {
        match s {
            Stmt::VarDecl(v) => out.push(v),
            Stmt::Block(b) => collect_locals(&b.stmts, out),
            Stmt::If { then, els, .. } => {
                collect_locals(&then.stmts, out);
                if let Some(e) = els {
                    collect_locals(&e.stmts, out);
                }
            }
            Stmt::Switch { cases, .. } => {
                for c in cases {
                    if let Some(b) = &c.body {
                        collect_locals(&b.stmts, out);
                    }
                }
            }
            Stmt::Assign { .. } | Stmt::Call(_) => {}
        }
    }
}

/// A width from a type argument (`bit<N>`, `bool` or a typedef of them).
fn type_width(env: &Env, t: &ast::TypeRef) -> Result<u16> {
    match env.resolve_type(t)? {
        Ty::Bits(w) => Ok(w),
        Ty::Bool => Ok(1),
        _ => Err(err(
            ErrorKind::Unsupported,
            t.span(),
            "extern type arguments must be bit<N> (register pairs and structs are not supported)",
        )),
    }
}

/// `Type_t.MEMBER` for one of TNA's built-in enums: the index of the member in `members`.
fn builtin_enum(e: &Expr, ty: &str, members: &[&str]) -> Result<usize> {
    if let ExprKind::Member(base, m) = &e.kind {
        if matches!(&base.kind, ExprKind::Name(n) if n.name == ty) {
            if let Some(i) = members.iter().position(|x| *x == m.name) {
                return Ok(i);
            }
        }
    }
    let list: Vec<String> = members.iter().map(|m| format!("`{ty}.{m}`")).collect();
    Err(err(
        ErrorKind::Type,
        e.span,
        format!("expected one of {}", list.join(", ")),
    ))
}

impl<'e, 'a, 'l> ControlLowering<'e, 'a, 'l> {
    pub(crate) fn new(
        env: &'e Env<'a>,
        blocks: &GressBlocks<'a>,
        layout: &'l mut LayoutBuilder,
        spec: &'l PipeSpec,
    ) -> Result<Self> {
        let decl = blocks.control;
        let mut scope = Scope::new(env, &decl.params, blocks.gress)?;
        for v in &decl.locals {
            if let Some(init) = &v.init {
                return Err(err(
                    ErrorKind::Unsupported,
                    init.span,
                    "an initializer on a control-level variable is not supported; assign it in \
                     the apply block",
                ));
            }
            scope.declare_local(&decl.name.name, v)?;
        }
        let mut apply_locals = Vec::new();
        collect_locals(&decl.apply.stmts, &mut apply_locals);
        for v in apply_locals {
            scope.declare_local(&decl.name.name, v)?;
        }
        let mut cl = ControlLowering {
            scope,
            gress: blocks.gress,
            decl,
            layout,
            spec,
            control: ControlProgram::default(),
            table_spans: Vec::new(),
            apply_spans: Vec::new(),
            gateway_spans: Vec::new(),
            actions: HashMap::new(),
            extern_spans: Vec::new(),
            applied: HashMap::new(),
            names: HashSet::new(),
            externs: HashMap::new(),
            direct_owner: HashMap::new(),
        };
        for i in &decl.instances {
            if cl.externs.contains_key(&i.name.name) || cl.scope.is_name_declared(&i.name.name) {
                return Err(err(
                    ErrorKind::Duplicate,
                    i.name.span,
                    format!("`{}` is declared twice", i.name.name),
                ));
            }
            let x = cl.declare_extern(i)?;
            cl.externs.insert(i.name.name.clone(), x);
        }
        for a in &decl.actions {
            if a.name.name == tna::NO_ACTION
                || cl.actions.contains_key(&a.name.name)
                || cl.externs.contains_key(&a.name.name)
            {
                return Err(err(
                    ErrorKind::Duplicate,
                    a.name.span,
                    format!("action `{}` is declared twice", a.name.name),
                ));
            }
            let mut scope = cl.scope.with_action_params(&a.params)?;
            let mut locals = Vec::new();
            collect_locals(&a.body.stmts, &mut locals);
            let owner = format!("{}.{}", decl.name.name, a.name.name);
            for v in locals {
                scope.declare_local(&owner, v)?;
            }
            let part = cl.action_body(&scope, &a.body.stmts)?;
            let params = scope
                .action_params()
                .iter()
                .map(|(n, w)| ActionParam {
                    name: n.clone(),
                    width: *w,
                })
                .collect();
            let id = cl.push_action(owner, params, part);
            cl.actions.insert(a.name.name.clone(), id);
        }
        for t in &decl.tables {
            if cl.actions.contains_key(&t.name.name)
                || cl.externs.contains_key(&t.name.name)
                || !cl
                    .names
                    .insert(format!("{}.{}", decl.name.name, t.name.name))
            {
                return Err(err(
                    ErrorKind::Duplicate,
                    t.name.span,
                    format!("`{}` is declared twice", t.name.name),
                ));
            }
        }
        Ok(cl)
    }

    /// Lower the apply block and finish: check extern ownership, drop undriven externs.
    pub(crate) fn lower(mut self) -> Result<LoweredControl> {
        let entry = self.block(&self.decl.apply.stmts, None)?;
        self.control.entry = entry;
        self.check_ownership()?;
        self.compact_externs();
        Ok(LoweredControl {
            control: self.control,
            table_spans: self.table_spans,
            gateway_spans: self.gateway_spans,
        })
    }

    // -----------------------------------------------------------------------------------------
    // Extern declarations

    fn declare_extern(&mut self, i: &ast::Instantiation) -> Result<Extern> {
        let env = self.scope.env();
        let tname = i.type_name.name.as_str();
        let qualified = self.qualified(&i.name.name);
        let nargs = |n: std::ops::RangeInclusive<usize>, what: &str| -> Result<()> {
            if !n.contains(&i.args.len()) {
                return Err(err(
                    ErrorKind::Type,
                    i.span,
                    format!("`{tname}` takes {what}; {} given", i.args.len()),
                ));
            }
            Ok(())
        };
        let ntypes = |n: usize, what: &str| -> Result<()> {
            if i.type_args.len() != n {
                return Err(err(
                    ErrorKind::Type,
                    i.type_name.span,
                    format!("write `{tname}<{what}>`"),
                ));
            }
            Ok(())
        };
        if !i.functions.is_empty() && ![tna::REGISTER_ACTION, tna::MINMAX_ACTION].contains(&tname) {
            return Err(err(
                ErrorKind::Unsupported,
                i.span,
                format!("an initializer block on `{tname}` is not supported"),
            ));
        }
        let size = |e: &Expr| -> Result<u32> {
            u32::try_from(env.const_value(e, None)?)
                .ok()
                .filter(|s| *s > 0)
                .ok_or_else(|| err(ErrorKind::Type, e.span, "size must be 1..2^32"))
        };
        Ok(match tname {
            tna::REGISTER => {
                ntypes(2, "T, I")?;
                nargs(1..=2, "a size and an optional initial value")?;
                let width = type_width(env, &i.type_args[0])?;
                let index = type_width(env, &i.type_args[1])?;
                let max = self.spec.salu.max_width_bits as u16;
                if width > max {
                    return Err(err(
                        ErrorKind::Resource,
                        i.type_args[0].span(),
                        format!(
                            "register `{}` has bit<{width}> elements; a stateful ALU of this chip \
                             handles at most {max} bits",
                            i.name.name
                        ),
                    ));
                }
                let init = match i.args.get(1) {
                    Some(e) => env.const_value(e, Some(width))?,
                    None => 0,
                };
                let id = self.control.registers.len() as RegisterId;
                self.control.registers.push(RegisterArray {
                    name: qualified,
                    stage: 0,
                    width: width as u8,
                    size: size(&i.args[0])?,
                    init,
                });
                Extern::Register { id, width, index }
            }
            tna::REGISTER_ACTION => self.register_action(i, qualified, false)?,
            tna::MINMAX_ACTION => self.register_action(i, qualified, true)?,
            tna::METER => {
                ntypes(1, "I")?;
                nargs(
                    2..=2,
                    "a size and `MeterType_t.PACKETS` or `MeterType_t.BYTES`",
                )?;
                let index = type_width(env, &i.type_args[0])?;
                let unit = match builtin_enum(&i.args[1], "MeterType_t", &["PACKETS", "BYTES"])? {
                    0 => CountKind::Packets,
                    _ => CountKind::Bytes,
                };
                let id = self.control.meters.len() as MeterId;
                self.control.meters.push(MeterArray {
                    name: qualified,
                    stage: 0,
                    size: size(&i.args[0])?,
                    unit,
                });
                Extern::Meter { id, index }
            }
            tna::COUNTER => {
                ntypes(2, "W, I")?;
                nargs(2..=2, "a size and a `CounterType_t`")?;
                let index = type_width(env, &i.type_args[1])?;
                let kind = count_kind(&i.args[1])?;
                let id = self.control.counters.len() as CounterId;
                self.control.counters.push(CounterArray {
                    name: qualified,
                    stage: 0,
                    size: size(&i.args[0])?,
                    kind,
                });
                Extern::Counter { id, index }
            }
            tna::DIRECT_COUNTER => {
                ntypes(1, "W")?;
                nargs(1..=1, "a `CounterType_t`")?;
                Extern::DirectCounter(count_kind(&i.args[0])?)
            }
            tna::HASH => {
                ntypes(1, "W")?;
                nargs(1..=2, "a `HashAlgorithm_t` and an optional seed")?;
                let width = type_width(env, &i.type_args[0])?;
                let alg = builtin_enum(
                    &i.args[0],
                    "HashAlgorithm_t",
                    &["IDENTITY", "CRC8", "CRC16", "CRC32"],
                )
                .map_err(|e| {
                    err(
                        ErrorKind::Unsupported,
                        e.span,
                        format!(
                            "{}: the supported hash algorithms are IDENTITY, CRC8, CRC16 and CRC32",
                            env.text(e.span)
                        ),
                    )
                })?;
                let mut algorithm = match alg {
                    0 => HashAlgorithm::Identity,
                    // CRC-8/SMBUS.
                    1 => crc(8, 0x07, 0, false, false, 0),
                    // CRC-16/ARC, TNA's CRC16.
                    2 => crc(16, 0x8005, 0, true, true, 0),
                    // CRC-32/ISO-HDLC, TNA's CRC32.
                    _ => crc(32, 0x04C1_1DB7, 0xFFFF_FFFF, true, true, 0xFFFF_FFFF),
                };
                if let Some(seed) = i.args.get(1) {
                    match &mut algorithm {
                        HashAlgorithm::Crc { width, init, .. } => {
                            *init = env.const_value(seed, None)? as u64;
                            if *width < 64 && *init >> *width != 0 {
                                return Err(err(
                                    ErrorKind::Type,
                                    seed.span,
                                    format!("the seed does not fit in {width} bits"),
                                ));
                            }
                        }
                        HashAlgorithm::Identity => {
                            return Err(err(ErrorKind::Type, seed.span, "IDENTITY takes no seed"))
                        }
                    }
                }
                Extern::Hash { algorithm, width }
            }
            tna::RANDOM => {
                ntypes(1, "W")?;
                nargs(0..=0, "no arguments")?;
                Extern::Random {
                    width: type_width(env, &i.type_args[0])?,
                }
            }
            tna::QUEUE_DEPTH => {
                if self.gress != Gress::Ingress {
                    return Err(err(
                        ErrorKind::Unsupported,
                        i.type_name.span,
                        format!(
                            "`{tname}` is only available in ingress: the TM publishes queue \
                             depths to the ingress pipes (egress has `eg_intr_md.enq_qdepth` \
                             and `deq_qdepth`)"
                        ),
                    ));
                }
                if !i.type_args.is_empty() {
                    return Err(err(
                        ErrorKind::Type,
                        i.type_name.span,
                        "write `QueueDepth()`: the depth is bit<19>, like `enq_qdepth`",
                    ));
                }
                nargs(0..=0, "no arguments")?;
                Extern::QueueDepth
            }
            "DirectMeter" => {
                return Err(err(
                    ErrorKind::Unsupported,
                    i.type_name.span,
                    "extern `DirectMeter` is not supported (the pipe has no direct meters); use a \
                     `Meter` indexed by a field",
                ))
            }
            tna::CHECKSUM => {
                return Err(err(
                    ErrorKind::Unsupported,
                    i.type_name.span,
                    "`Checksum` is only supported in a deparser",
                ))
            }
            other => {
                return Err(err(
                    ErrorKind::Unsupported,
                    i.type_name.span,
                    format!("extern `{other}` is not supported"),
                ))
            }
        })
    }

    /// `RegisterAction<T, I, U>(reg) name = { void apply(inout T value, out U rv) { ... } };`,
    /// or with `minmax`, `MinMaxAction<T, I, U>(reg) name = { void apply(inout bit<128> value,
    /// out U rv, out U lane) { rv = this.min8(value, mask, lane, postmod); } };` where `I`
    /// indexes 128-bit words of the register.
    fn register_action(
        &mut self,
        i: &ast::Instantiation,
        qualified: String,
        minmax: bool,
    ) -> Result<Extern> {
        let env = self.scope.env();
        let kind = if minmax {
            tna::MINMAX_ACTION
        } else {
            tna::REGISTER_ACTION
        };
        if !(2..=3).contains(&i.type_args.len()) {
            return Err(err(
                ErrorKind::Type,
                i.type_name.span,
                format!("write `{kind}<T, I, U>(register)`"),
            ));
        }
        let width = type_width(env, &i.type_args[0])?;
        let index = type_width(env, &i.type_args[1])?;
        let out = match i.type_args.get(2) {
            Some(t) => type_width(env, t)?,
            None => width,
        };
        let reg_name = match i.args.as_slice() {
            [Expr {
                kind: ExprKind::Name(n),
                ..
            }] => n,
            _ => {
                return Err(err(
                    ErrorKind::Type,
                    i.span,
                    format!("`{kind}` takes the register it updates"),
                ))
            }
        };
        let Some(Extern::Register {
            id: register,
            width: rw,
            index: ri,
        }) = self.externs.get(&reg_name.name).cloned()
        else {
            return Err(err(
                ErrorKind::Undeclared,
                reg_name.span,
                format!("undeclared register `{}`", reg_name.name),
            ));
        };
        // A min/max action indexes words, not elements: only the element type must agree.
        if rw != width || (!minmax && ri != index) {
            return Err(err(
                ErrorKind::Type,
                i.type_name.span,
                format!(
                    "`{}` is Register<bit<{rw}>, bit<{ri}>> but this {kind} is for \
                     <bit<{width}>, bit<{index}>>",
                    reg_name.name
                ),
            ));
        }
        let [f] = i.functions.as_slice() else {
            return Err(err(
                ErrorKind::Type,
                i.span,
                format!(
                    "a {kind} needs exactly one function: `void apply(inout T value[, out U \
                     rv]) {{ ... }}`"
                ),
            ));
        };
        if f.name.name != "apply" || f.ret.is_some() {
            return Err(err(
                ErrorKind::Unsupported,
                f.name.span,
                format!("only `void apply(...)` is supported in a {kind}"),
            ));
        }
        let max_params = if minmax { 3 } else { 2 };
        let Some((value, outs)) = f.params.split_first().filter(|(_, o)| o.len() < max_params)
        else {
            return Err(err(
                ErrorKind::Type,
                f.name.span,
                if minmax {
                    "`apply` takes `inout bit<128> value`, optionally `out U rv` and `out U lane`"
                } else {
                    "`apply` takes `inout T value` and optionally `out U rv`"
                },
            ));
        };
        let value_width = if minmax { MinMax::WORD_BITS } else { width };
        if value.dir != ast::Direction::InOut || type_width(env, &value.ty)? != value_width {
            return Err(err(
                ErrorKind::Type,
                value.name.span,
                format!(
                    "the first parameter must be `inout bit<{value_width}> {}`",
                    value.name.name
                ),
            ));
        }
        for r in outs {
            if r.dir != ast::Direction::Out || type_width(env, &r.ty)? != out {
                return Err(err(
                    ErrorKind::Type,
                    r.name.span,
                    format!(
                        "an output parameter must be `out bit<{out}> {}`",
                        r.name.name
                    ),
                ));
            }
        }
        let cx = salu::SaluContext {
            scope: &self.scope,
            name: &i.name.name,
            value: &value.name.name,
            out: outs.first().map(|r| r.name.name.as_str()),
            width,
            out_width: out,
            spec: &self.spec.salu,
        };
        let layout = &mut *self.layout;
        let mut field = |fr: &FieldRef| layout.field(env, fr);
        let (prog, unit, lane_out) = if minmax {
            let mcx = salu::MinMaxContext {
                salu: cx,
                lane: outs.get(1).map(|r| r.name.name.as_str()),
            };
            let m = salu::compile_minmax(&mcx, &f.body, &mut field)?;
            // The unit returns the selected lane's value as read.
            let outputs = if m.value_out {
                vec![SaluOutput {
                    when: Predicate::ALWAYS,
                    value: SaluValue::Old,
                }]
            } else {
                Vec::new()
            };
            let prog = salu::SaluProgram {
                conditions: Vec::new(),
                updates: Vec::new(),
                outputs,
            };
            (prog, Some(m.minmax), m.lane_out)
        } else {
            (salu::compile(&cx, &f.body, &mut field)?, None, false)
        };
        let id = self.control.salus.len() as SaluId;
        self.control.salus.push(StatefulAlu {
            name: qualified,
            register,
            conditions: prog.conditions,
            updates: prog.updates,
            outputs: prog.outputs,
            minmax: unit,
        });
        Ok(Extern::RegisterAction {
            salu: id,
            index,
            out,
            minmax,
            lane_out,
        })
    }

    // -----------------------------------------------------------------------------------------
    // Extern calls

    /// `target.method(args)` where `target` names an extern instance.
    fn extern_method<'x>(
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
    fn extern_assign(
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
            (Extern::Meter { id, index }, "execute", [idx]) => {
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
            (Extern::Meter { .. }, "execute", [_, c]) => {
                return Err(err(
                    ErrorKind::Unsupported,
                    c.span,
                    "colour-aware metering (a meter's second argument) is not supported",
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
                        Extern::Meter { .. } => "`colour = m.execute(index)`",
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
    fn extern_stmt(&mut self, scope: &Scope, call: &Expr) -> Result<Option<Part>> {
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

    /// The resource an extern call uses, if it must belong to one table.
    fn res_of(&self, c: &ExternCall) -> Option<Res> {
        match c {
            ExternCall::Stateful { salu, .. } => self
                .control
                .salus
                .get(*salu as usize)
                .map(|s| Res::Register(s.register)),
            ExternCall::Meter { meter, .. } => Some(Res::Meter(*meter)),
            ExternCall::Count { counter, .. } => Some(Res::Counter(*counter)),
            ExternCall::Hash { hash, .. } => Some(Res::Hash(*hash)),
            ExternCall::Random { .. }
            | ExternCall::QueueDepth { .. }
            | ExternCall::EmptyQueues { .. } => None,
        }
    }

    fn res_name(&self, r: Res) -> String {
        match r {
            Res::Register(i) => format!(
                "register array `{}`",
                self.control.registers[i as usize].name
            ),
            Res::Meter(i) => format!("meter `{}`", self.control.meters[i as usize].name),
            Res::Counter(i) => format!("counter `{}`", self.control.counters[i as usize].name),
            Res::Hash(i) => format!("hash `{}`", self.control.hashes[i as usize].name),
        }
    }

    fn twice_msg(&self, r: Res, first: &str) -> String {
        match r {
            Res::Register(_) => format!(
                "{} is accessed twice in one pass (already by {first}); its stateful ALU does one \
                 read-modify-write per packet",
                self.res_name(r)
            ),
            _ => format!(
                "{} is used twice (already by {first}); an extern lives in one stage and is driven \
                 by one table",
                self.res_name(r)
            ),
        }
    }

    /// Every extern resource is driven by one table: check in source order of the applies, so
    /// the error is at the second use.
    fn check_ownership(&self) -> Result<()> {
        let mut order: Vec<usize> = (0..self.control.tables.len()).collect();
        order.sort_by_key(|&t| self.apply_spans[t].start);
        let mut owner: HashMap<Res, usize> = HashMap::new();
        for t in order {
            let table = &self.control.tables[t];
            let mut acts: Vec<ActionId> = table.actions.clone();
            if !acts.contains(&table.default_action.action) {
                acts.push(table.default_action.action);
            }
            for &a in &acts {
                for (k, call) in self.control.actions[a as usize].externs.iter().enumerate() {
                    let Some(r) = self.res_of(call) else { continue };
                    match owner.get(&r) {
                        Some(&u) if u != t => {
                            let first = &self.control.tables[u];
                            let shared =
                                first.actions.contains(&a) || first.default_action.action == a;
                            let span = if shared {
                                self.apply_spans[t]
                            } else {
                                self.extern_spans[a as usize][k]
                            };
                            let first_name =
                                if first.keys.is_empty() && first.name.contains(".assign_l") {
                                    "an earlier statement".to_string()
                                } else {
                                    format!("table {}", first.name)
                                };
                            return Err(err(
                                ErrorKind::Semantic,
                                span,
                                self.twice_msg(r, &first_name),
                            ));
                        }
                        Some(_) => {}
                        None => {
                            owner.insert(r, t);
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// Drop extern arrays and hash units no table drives (and the extern calls of actions no
    /// table uses), renumbering the rest.
    fn compact_externs(&mut self) {
        let c = &mut self.control;
        let mut used_actions = vec![false; c.actions.len()];
        for t in &c.tables {
            for &a in t.actions.iter().chain([&t.default_action.action]) {
                used_actions[a as usize] = true;
            }
        }
        for (a, used) in c.actions.iter_mut().zip(&used_actions) {
            if !used {
                a.externs.clear();
            }
        }
        let (mut salus, mut meters, mut counters, mut hashes) = (
            vec![false; c.salus.len()],
            vec![false; c.meters.len()],
            vec![false; c.counters.len()],
            vec![false; c.hashes.len()],
        );
        let mark_index = |i: &ExternIndex, hashes: &mut Vec<bool>| {
            if let ExternIndex::Hash(h) = i {
                hashes[*h as usize] = true;
            }
        };
        for a in &c.actions {
            for x in &a.externs {
                match x {
                    ExternCall::Stateful { salu, index, .. } => {
                        salus[*salu as usize] = true;
                        mark_index(index, &mut hashes);
                    }
                    ExternCall::Meter { meter, index, .. } => {
                        meters[*meter as usize] = true;
                        mark_index(index, &mut hashes);
                    }
                    ExternCall::Count { counter, index } => {
                        counters[*counter as usize] = true;
                        mark_index(index, &mut hashes);
                    }
                    ExternCall::Hash { hash, .. } => hashes[*hash as usize] = true,
                    ExternCall::Random { .. }
                    | ExternCall::QueueDepth { .. }
                    | ExternCall::EmptyQueues { .. } => {}
                }
            }
        }
        let mut registers = vec![false; c.registers.len()];
        for (s, used) in c.salus.iter().zip(&salus) {
            if *used {
                registers[s.register as usize] = true;
            }
        }
        fn remap(used: &[bool]) -> Vec<u16> {
            let mut next = 0u16;
            used.iter()
                .map(|&u| {
                    let id = next;
                    if u {
                        next += 1;
                    }
                    id
                })
                .collect()
        }
        fn keep<T>(v: &mut Vec<T>, used: &[bool]) {
            let mut i = 0;
            v.retain(|_| {
                i += 1;
                used[i - 1]
            });
        }
        let (rm, sm, mm, cm, hm) = (
            remap(&registers),
            remap(&salus),
            remap(&meters),
            remap(&counters),
            remap(&hashes),
        );
        for s in &mut c.salus {
            s.register = rm[s.register as usize];
        }
        let map_index = |i: &mut ExternIndex| {
            if let ExternIndex::Hash(h) = i {
                *h = hm[*h as usize];
            }
        };
        for a in &mut c.actions {
            for x in &mut a.externs {
                match x {
                    ExternCall::Stateful { salu, index, .. } => {
                        *salu = sm[*salu as usize];
                        map_index(index);
                    }
                    ExternCall::Meter { meter, index, .. } => {
                        *meter = mm[*meter as usize];
                        map_index(index);
                    }
                    ExternCall::Count { counter, index } => {
                        *counter = cm[*counter as usize];
                        map_index(index);
                    }
                    ExternCall::Hash { hash, .. } => *hash = hm[*hash as usize],
                    ExternCall::Random { .. }
                    | ExternCall::QueueDepth { .. }
                    | ExternCall::EmptyQueues { .. } => {}
                }
            }
        }
        keep(&mut c.registers, &registers);
        keep(&mut c.salus, &salus);
        keep(&mut c.meters, &meters);
        keep(&mut c.counters, &counters);
        keep(&mut c.hashes, &hashes);
    }

    // -----------------------------------------------------------------------------------------
    // Actions

    fn push_action(&mut self, name: String, params: Vec<ActionParam>, part: Part) -> ActionId {
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
    fn fresh(&self, base: String) -> String {
        if !self.names.contains(&base) {
            return base;
        }
        (1..)
            .map(|i| format!("{base}_{i}"))
            .find(|n| !self.names.contains(n))
            .unwrap_or(base)
    }

    fn qualified(&self, name: &str) -> String {
        format!("{}.{name}", self.decl.name.name)
    }

    /// The action called `name` (`NoAction` is created on first use).
    fn action_id(&mut self, name: &ast::Ident) -> Result<ActionId> {
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
    fn merge(&self, into: &mut Part, part: Part, span: Span) -> Result<()> {
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
    fn action_body(&mut self, scope: &Scope, stmts: &[Stmt]) -> Result<Part> {
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
    fn action_stmt(&mut self, scope: &Scope, st: &Stmt) -> Result<(Part, Span)> {
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
                "`if` inside an action (use the apply block)",
            )),
            Stmt::Switch { span, .. } => Err(err(
                ErrorKind::Unsupported,
                *span,
                "`switch` inside an action (use the apply block)",
            )),
            Stmt::Block(b) => Err(err(
                ErrorKind::Unsupported,
                b.span,
                "a nested block in an action",
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

    // -----------------------------------------------------------------------------------------
    // The apply block

    /// Lower statements that continue at `next`; returns the first node.
    fn block(&mut self, stmts: &[Stmt], next: Option<Node>) -> Result<Option<Node>> {
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
            let line = env
                .source
                .get(..span.start)
                .map_or(0, |b| b.matches('\n').count() + 1);
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
        });
        self.table_spans.push(span);
        self.apply_spans.push(span);
        Node::Table(id)
    }

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

    /// Constant action data for a call, checked against the action's parameters.
    fn action_args(&self, action: ActionId, args: &[Expr], span: Span) -> Result<Vec<u128>> {
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

    fn apply_table(&mut self, target: &Expr, next: TableNext) -> Result<Node> {
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
        let table = self.table(t, next)?;
        let id = self.control.tables.len() as TableId;
        self.control.tables.push(table);
        self.table_spans.push(t.name.span);
        self.apply_spans.push(name.span);
        Ok(Node::Table(id))
    }

    fn table(&mut self, t: &ast::TableDecl, next: TableNext) -> Result<Table> {
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
        let name = self.qualified(&t.name.name);
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
        })
    }
}

fn crc(width: u8, poly: u64, init: u64, refin: bool, refout: bool, xorout: u64) -> HashAlgorithm {
    HashAlgorithm::Crc {
        width,
        poly,
        init,
        refin,
        refout,
        xorout,
    }
}

fn count_kind(e: &Expr) -> Result<CountKind> {
    Ok(
        match builtin_enum(
            e,
            "CounterType_t",
            &["PACKETS", "BYTES", "PACKETS_AND_BYTES"],
        )? {
            0 => CountKind::Packets,
            1 => CountKind::Bytes,
            _ => CountKind::PacketsAndBytes,
        },
    )
}

/// Statements of an action, nested blocks flattened.
fn flatten<'s>(stmts: &'s [Stmt], out: &mut Vec<&'s Stmt>) {
    for s in stmts {
        match s {
            Stmt::Block(b) => flatten(&b.stmts, out),
            _ => out.push(s),
        }
    }
}

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
            let (value, mask) = masked(env, p, w)?;
            match kind {
                MatchKind::Exact if mask == ones(w) => KeyMatch::Exact(value),
                MatchKind::Exact => return Err(unsupported("a mask")),
                MatchKind::Ternary => KeyMatch::Ternary {
                    value: value & mask,
                    mask,
                },
                _ => {
                    let len = mask.count_ones() as u16;
                    if mask != ones(w) & !(ones(w - len.min(w))) {
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
