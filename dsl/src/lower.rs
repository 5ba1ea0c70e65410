//! Lowering: checked blocks of one gress to the executable format ([`GressProgram`]).
//!
//! Fields get ids in the order the program first touches them (a header's fields and
//! validity bit together, in wire order); slices and stages are filled in later by
//! [`crate::phv`] and [`crate::alloc`]. The apply block becomes a graph of tables and
//! gateways built back to front: each statement is lowered knowing the node that follows
//! it, so both branches of an `if` simply continue at the same node.

use std::collections::{HashMap, HashSet};

use pipelines::program::*;

use crate::ast::{self, Expr, ExprKind, Pattern, Span, Stmt, TransitionDecl};
use crate::check::{
    AluExpr, CondExpr, Env, FieldKey, FieldRef, GressBlocks, HeaderRef, Place, Scope, Value,
};
use crate::error::{CompileError, ErrorKind, Result};
use crate::tna;

fn err(kind: ErrorKind, span: Span, msg: impl Into<String>) -> CompileError {
    CompileError::new(kind, span, msg)
}

/// One gress lowered, plus the source positions later passes need for their errors.
pub struct LoweredGress {
    /// The program (PHV slices empty, all stages 0).
    pub program: GressProgram,
    /// Where each table is declared (or, for a synthesised one, the statement it runs).
    pub table_spans: Vec<Span>,
    /// Where each gateway's `if` is.
    pub gateway_spans: Vec<Span>,
    /// The gress's control declaration (for errors about the gress as a whole).
    pub control_span: Span,
}

/// Lower the three blocks of a gress.
pub fn lower_gress(env: &Env, blocks: &GressBlocks) -> Result<LoweredGress> {
    let mut layout = LayoutBuilder::default();
    let parser = {
        let scope = Scope::new(env, &blocks.parser.params, blocks.gress)?;
        lower_parser(&scope, blocks.parser, &mut layout)?
    };
    let mut cl = ControlLowering::new(env, blocks, &mut layout)?;
    let entry = cl.block(&blocks.control.apply.stmts, None)?;
    let (mut control, mut table_spans, mut gateway_spans) =
        (cl.control, cl.table_spans, cl.gateway_spans);
    control.entry = entry;
    renumber(&mut control, &mut table_spans, &mut gateway_spans);
    let deparser = {
        let scope = Scope::new(env, &blocks.deparser.params, blocks.gress)?;
        lower_deparser(&scope, blocks.deparser, &mut layout)?
    };
    Ok(LoweredGress {
        program: GressProgram {
            phv: layout.layout,
            parser,
            control,
            deparser,
        },
        table_spans,
        gateway_spans,
        control_span: blocks.control.name.span,
    })
}

// ---------------------------------------------------------------------------------------------
// PHV layout (which fields exist)

/// Interns fields and headers into a [`PhvLayout`] on first use.
#[derive(Default)]
struct LayoutBuilder {
    layout: PhvLayout,
    fields: HashMap<FieldKey, FieldId>,
    headers: HashMap<FieldKey, HeaderId>,
}

impl LayoutBuilder {
    fn new_field(&mut self, key: FieldKey, name: String, width: u16) -> FieldId {
        let id = self.layout.fields.len() as FieldId;
        self.layout.fields.push(Field {
            name,
            width,
            slices: Vec::new(),
        });
        self.fields.insert(key, id);
        id
    }

    /// A header and all its fields (a header is extracted and emitted whole).
    fn header(&mut self, env: &Env, h: &HeaderRef) -> HeaderId {
        if let Some(&id) = self.headers.get(&h.key) {
            return id;
        }
        let fields = env
            .header_fields(&h.ty)
            .iter()
            .map(|(n, w)| self.new_field(h.key.child(n), format!("{}.{n}", h.name), *w))
            .collect();
        let valid = self.new_field(h.valid_key(), format!("{}.$valid", h.name), 1);
        let id = self.layout.headers.len() as HeaderId;
        self.layout.headers.push(Header {
            name: h.name.clone(),
            fields,
            valid,
        });
        self.headers.insert(h.key.clone(), id);
        id
    }

    fn field(&mut self, env: &Env, f: &FieldRef) -> FieldId {
        if let Some(h) = &f.header {
            self.header(env, h);
        }
        if let Some(&id) = self.fields.get(&f.key) {
            return id;
        }
        let id = self.new_field(f.key.clone(), f.name.clone(), f.width);
        if let Some(i) = f.intrinsic {
            self.layout.intrinsics.push((i, id));
        }
        id
    }

    fn valid(&mut self, env: &Env, h: &HeaderRef) -> FieldId {
        let id = self.header(env, h);
        self.layout.headers[id as usize].valid
    }

    /// The field the compiler sets beside every write of `ucast_egress_port`, so the traffic
    /// manager knows the port was chosen.
    fn ucast_valid(&mut self, port: &FieldRef) -> FieldId {
        let key = port.key.child("$valid");
        if let Some(&id) = self.fields.get(&key) {
            return id;
        }
        let id = self.new_field(key, format!("{}_valid", port.name), 1);
        self.layout
            .intrinsics
            .push((Intrinsic::UcastEgressPortValid, id));
        id
    }

    fn operand(&mut self, env: &Env, v: &Value) -> Operand {
        match v {
            Value::Field(f) => Operand::Field(self.field(env, f)),
            Value::Const(c) => Operand::Const(*c),
            Value::Param(i) => Operand::Param(*i),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Parser

fn lower_parser(
    scope: &Scope,
    p: &ast::ParserDecl,
    layout: &mut LayoutBuilder,
) -> Result<ParserProgram> {
    let index: HashMap<&str, StateId> = p
        .states
        .iter()
        .enumerate()
        .map(|(i, s)| (s.name.name.as_str(), i as StateId))
        .collect();
    let next_of = |id: &ast::Ident| -> Next {
        match id.name.as_str() {
            "accept" => Next::Accept,
            "reject" => Next::Reject,
            n => index.get(n).map_or(Next::Reject, |&s| Next::State(s)),
        }
    };
    let mut states = Vec::new();
    for s in &p.states {
        let mut ops = Vec::new();
        for st in &s.stmts {
            ops.push(parser_op(scope, st, layout)?);
        }
        let transition = match &s.transition {
            Some(TransitionDecl::Select { keys, cases, span }) => {
                select(scope, keys, cases, *span, layout, &next_of)?
            }
            Some(TransitionDecl::Direct(n)) => Transition::Direct(next_of(n)),
            None => {
                return Err(err(
                    ErrorKind::Semantic,
                    s.span,
                    format!("state `{}` has no transition", s.name.name),
                ))
            }
        };
        states.push(ParserState {
            name: s.name.name.clone(),
            ops,
            transition,
        });
    }
    let start = index.get("start").copied().ok_or_else(|| {
        err(
            ErrorKind::Semantic,
            p.name.span,
            format!("parser `{}` has no `start` state", p.name.name),
        )
    })?;
    Ok(ParserProgram {
        states,
        start,
        on_error: ParserErrorPolicy::Drop,
    })
}

fn parser_op(scope: &Scope, st: &Stmt, layout: &mut LayoutBuilder) -> Result<ParserOp> {
    let env = scope.env();
    match st {
        Stmt::Call(call) => {
            let Some((target, method, args)) = call.method_call() else {
                return Err(err(
                    ErrorKind::Unsupported,
                    call.span,
                    format!("`{}` is not supported in a parser", env.text(call.span)),
                ));
            };
            if !scope.is_packet(target) {
                return Err(err(
                    ErrorKind::Unsupported,
                    call.span,
                    format!("`{}` is not supported in a parser", env.text(call.span)),
                ));
            }
            match (method.name.as_str(), args) {
                ("extract", [h]) => match scope.place(h)? {
                    Place::Header(h) => Ok(ParserOp::Extract(layout.header(env, &h))),
                    Place::Intrinsic(name) => Err(err(
                        ErrorKind::Unsupported,
                        h.span,
                        format!(
                            "do not extract `{name}`: this chip does not prepend metadata to \
                             the packet; it fills in intrinsic metadata itself"
                        ),
                    )),
                    _ => Err(err(
                        ErrorKind::Type,
                        h.span,
                        format!("`{}` is not a header", env.text(h.span)),
                    )),
                },
                ("advance", [bits]) => {
                    let n = env.const_value(bits, None)?;
                    match u32::try_from(n) {
                        Ok(n) if n % 8 == 0 => Ok(ParserOp::Advance(n)),
                        _ => Err(err(
                            ErrorKind::Semantic,
                            bits.span,
                            "advance must skip a whole number of bytes",
                        )),
                    }
                }
                _ => Err(err(
                    ErrorKind::Unsupported,
                    call.span,
                    format!(
                        "`{}.{}` is not supported in a parser",
                        env.text(target.span),
                        method.name
                    ),
                )),
            }
        }
        Stmt::Assign { lhs, rhs, span } => {
            let dst = scope.lvalue(lhs)?;
            let value = env.const_value(rhs, Some(dst.width)).map_err(|e| {
                if e.kind == ErrorKind::Type && e.message.ends_with("is not a constant") {
                    err(
                        ErrorKind::Unsupported,
                        *span,
                        "a parser can only assign constants to metadata",
                    )
                } else {
                    e
                }
            })?;
            Ok(ParserOp::SetConst {
                field: layout.field(env, &dst),
                value,
            })
        }
        Stmt::If { span, .. } => Err(err(ErrorKind::Unsupported, *span, "`if` in a parser state")),
        Stmt::Block(b) => Err(err(
            ErrorKind::Unsupported,
            b.span,
            "a nested block in a parser state",
        )),
    }
}

/// A `select`: the keys are concatenated most significant first, and each case's keyset is
/// folded into one value/mask (or range) over that concatenation.
fn select(
    scope: &Scope,
    keys: &[Expr],
    cases: &[ast::SelectCaseDecl],
    span: Span,
    layout: &mut LayoutBuilder,
    next_of: &dyn Fn(&ast::Ident) -> Next,
) -> Result<Transition> {
    let env = scope.env();
    let mut key_fields = Vec::new();
    for k in keys {
        key_fields.push(scope.field(k)?);
    }
    let total: u32 = key_fields.iter().map(|f| f.width as u32).sum();
    if total > 128 {
        return Err(err(
            ErrorKind::Unsupported,
            span,
            format!("select key is {total} bits; at most 128"),
        ));
    }
    let mut out_cases = Vec::new();
    let mut default = Next::Reject;
    for c in cases {
        let all_any = c.keyset.iter().all(|p| matches!(p, Pattern::Any(_)));
        if all_any {
            default = next_of(&c.next);
            break;
        }
        if c.keyset.len() != key_fields.len() {
            return Err(err(
                ErrorKind::Type,
                c.span,
                format!(
                    "case has {} values but the select has {} keys",
                    c.keyset.len(),
                    key_fields.len()
                ),
            ));
        }
        let pattern = if let [Pattern::Range(lo, hi)] = c.keyset.as_slice() {
            let w = key_fields[0].width;
            CasePattern::Range {
                lo: env.const_value(lo, Some(w))?,
                hi: env.const_value(hi, Some(w))?,
            }
        } else {
            let (mut value, mut mask) = (0u128, 0u128);
            let mut shift = total;
            for (p, f) in c.keyset.iter().zip(&key_fields) {
                shift -= f.width as u32;
                let (v, m) = masked(env, p, f.width)?;
                value |= v << shift;
                mask |= m << shift;
            }
            CasePattern::Masked {
                value: value & mask,
                mask,
            }
        };
        out_cases.push(SelectCase {
            pattern,
            next: next_of(&c.next),
        });
    }
    let keys = key_fields
        .iter()
        .map(|f| SelectKey::Field {
            field: layout.field(env, f),
            hi: f.width - 1,
            lo: 0,
        })
        .collect();
    Ok(Transition::Select {
        keys,
        cases: out_cases,
        default,
    })
}

fn ones(w: u16) -> u128 {
    if w >= 128 {
        u128::MAX
    } else {
        (1u128 << w) - 1
    }
}

/// A keyset element as value and mask over `w` bits.
fn masked(env: &Env, p: &Pattern, w: u16) -> Result<(u128, u128)> {
    Ok(match p {
        Pattern::Value(v) => (env.const_value(v, Some(w))?, ones(w)),
        Pattern::Mask(v, m) => (env.const_value(v, Some(w))?, env.const_value(m, Some(w))?),
        Pattern::Any(_) => (0, 0),
        Pattern::Range(..) => {
            return Err(err(
                ErrorKind::Unsupported,
                p.span(),
                "a range can only be used when it is the whole select key",
            ))
        }
    })
}

// ---------------------------------------------------------------------------------------------
// Deparser

fn lower_deparser(
    scope: &Scope,
    d: &ast::ControlDecl,
    layout: &mut LayoutBuilder,
) -> Result<DeparserProgram> {
    let env = scope.env();
    if let Some(t) = d.tables.first() {
        return Err(err(
            ErrorKind::Semantic,
            t.name.span,
            "a deparser cannot have tables",
        ));
    }
    if let Some(a) = d.actions.first() {
        return Err(err(
            ErrorKind::Semantic,
            a.name.span,
            "a deparser cannot have actions",
        ));
    }
    let mut checksums = HashSet::new();
    for i in &d.instances {
        if i.type_name.name != tna::CHECKSUM {
            return Err(err(
                ErrorKind::Unsupported,
                i.type_name.span,
                format!(
                    "extern `{}` is not supported in a deparser",
                    i.type_name.name
                ),
            ));
        }
        if i.generic || !i.args.is_empty() {
            return Err(err(
                ErrorKind::Unsupported,
                i.span,
                "write `Checksum() name;` (the chip's checksum is the 16-bit Internet checksum)",
            ));
        }
        checksums.insert(i.name.name.as_str());
    }
    let mut out = DeparserProgram::default();
    let mut stmts: Vec<&Stmt> = d.apply.stmts.iter().collect();
    while let Some(st) = stmts.first().copied() {
        stmts.remove(0);
        match st {
            Stmt::Block(b) => {
                for (i, s) in b.stmts.iter().enumerate() {
                    stmts.insert(i, s);
                }
            }
            Stmt::Call(call) => {
                let emit = call.method_call().filter(|(t, m, a)| scope.is_packet(t) && m.name == "emit" && a.len() == 1);
                let Some((_, _, [arg])) = emit else {
                    return Err(err(ErrorKind::Unsupported, call.span, format!("`{}` is not supported in a deparser", env.text(call.span))));
                };
                let headers = match scope.place(arg)? {
                    Place::Header(h) => vec![h],
                    Place::Struct { key, name, ty } => env.struct_headers(&key, &name, &ty),
                    _ => return Err(err(ErrorKind::Type, arg.span, format!("`{}` is not a header or struct of headers", env.text(arg.span)))),
                };
                for h in headers {
                    let id = layout.header(env, &h);
                    if out.emit.contains(&id) {
                        return Err(err(ErrorKind::Semantic, arg.span, format!("`{}` is emitted twice", h.name)));
                    }
                    out.emit.push(id);
                }
            }
            Stmt::Assign { lhs, rhs, span } => {
                let update = rhs.method_call().filter(|(t, m, a)| {
                    m.name == "update" && a.len() == 1 && matches!(&t.kind, ExprKind::Name(n) if checksums.contains(n.name.as_str()))
                });
                let Some((_, _, [list])) = update else {
                    return Err(err(ErrorKind::Unsupported, *span, "a deparser can only assign `field = checksum.update({...})`"));
                };
                let ExprKind::List(items) = &list.kind else {
                    return Err(err(ErrorKind::Type, list.span, "checksum.update takes a list `{a, b, ...}`"));
                };
                let dst = scope.lvalue(lhs)?;
                let Some(header) = dst.header.clone() else {
                    return Err(err(ErrorKind::Type, lhs.span, "a checksum must be written into a header field"));
                };
                if dst.width != 16 {
                    return Err(err(ErrorKind::Type, lhs.span, format!("{} is bit<{}>; a checksum is bit<16>", dst.name, dst.width)));
                }
                let mut sources = Vec::new();
                for it in items {
                    let f = scope.field(it)?;
                    sources.push(layout.field(env, &f));
                }
                let when_valid = layout.header(env, &header);
                out.checksums.push(ChecksumUpdate { dst: layout.field(env, &dst), sources, when_valid });
            }
            Stmt::If { span, .. } => {
                return Err(err(ErrorKind::Unsupported, *span, "`if` in a deparser (checksums are computed only when their header is valid anyway)"))
            }
        }
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// Match-action control

struct ControlLowering<'e, 'a, 'l> {
    scope: Scope<'e, 'a>,
    decl: &'a ast::ControlDecl,
    layout: &'l mut LayoutBuilder,
    control: ControlProgram,
    table_spans: Vec<Span>,
    gateway_spans: Vec<Span>,
    /// Declared actions by name, lowered up front.
    actions: HashMap<String, ActionId>,
    /// Tables already applied, with where.
    applied: HashMap<String, Span>,
    /// Names in use for actions and tables (synthesised ones get unique names).
    names: HashSet<String>,
}

impl<'e, 'a, 'l> ControlLowering<'e, 'a, 'l> {
    fn new(
        env: &'e Env<'a>,
        blocks: &GressBlocks<'a>,
        layout: &'l mut LayoutBuilder,
    ) -> Result<Self> {
        let decl = blocks.control;
        let scope = Scope::new(env, &decl.params, blocks.gress)?;
        if let Some(i) = decl.instances.first() {
            return Err(err(
                ErrorKind::Unsupported,
                i.type_name.span,
                format!("extern `{}` is not supported yet", i.type_name.name),
            ));
        }
        let mut cl = ControlLowering {
            scope,
            decl,
            layout,
            control: ControlProgram::default(),
            table_spans: Vec::new(),
            gateway_spans: Vec::new(),
            actions: HashMap::new(),
            applied: HashMap::new(),
            names: HashSet::new(),
        };
        for a in &decl.actions {
            if a.name.name == tna::NO_ACTION || cl.actions.contains_key(&a.name.name) {
                return Err(err(
                    ErrorKind::Duplicate,
                    a.name.span,
                    format!("action `{}` is declared twice", a.name.name),
                ));
            }
            let scope = cl.scope.with_action_params(&a.params)?;
            let ops = cl.action_body(&scope, &a.body.stmts)?;
            let params = scope
                .action_params()
                .iter()
                .map(|(n, w)| ActionParam {
                    name: n.clone(),
                    width: *w,
                })
                .collect();
            let id = cl.push_action(format!("{}.{}", decl.name.name, a.name.name), params, ops);
            cl.actions.insert(a.name.name.clone(), id);
        }
        for t in &decl.tables {
            if cl.actions.contains_key(&t.name.name)
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

    fn push_action(&mut self, name: String, params: Vec<ActionParam>, ops: Vec<Op>) -> ActionId {
        self.names.insert(name.clone());
        let id = self.control.actions.len() as ActionId;
        self.control.actions.push(Action {
            name,
            params,
            ops,
            externs: Vec::new(),
        });
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
            let id = self.push_action(tna::NO_ACTION.to_string(), Vec::new(), Vec::new());
            self.actions.insert(name.name.clone(), id);
            return Ok(id);
        }
        Err(err(
            ErrorKind::Undeclared,
            name.span,
            format!("undeclared action `{}`", name.name),
        ))
    }

    /// The VLIW operations of an action body. Every operation reads the PHV as it was before
    /// the action, so a statement may not read or rewrite a field an earlier one wrote.
    fn action_body(&mut self, scope: &Scope, stmts: &[Stmt]) -> Result<Vec<Op>> {
        let env = scope.env();
        let mut ops: Vec<Op> = Vec::new();
        let mut flat = Vec::new();
        flatten(stmts, &mut flat);
        for st in flat {
            let (new_ops, span) = self.action_stmt(scope, st)?;
            for op in new_ops {
                if ops.iter().any(|o| o.dst == op.dst) {
                    let name = &self.layout.layout.fields[op.dst as usize].name;
                    return Err(err(
                        ErrorKind::Semantic,
                        span,
                        format!("{name} is written twice in one action"),
                    ));
                }
                let reads_written = [op.a, op.b].iter().find_map(|x| match x {
                    Operand::Field(f) if op.alu != AluOp::Set || *x == op.a => {
                        ops.iter().find(|o| o.dst == *f)
                    }
                    _ => None,
                });
                if let Some(w) = reads_written {
                    let name = &self.layout.layout.fields[w.dst as usize].name;
                    return Err(err(
                        ErrorKind::Semantic,
                        span,
                        format!(
                            "`{}` reads {name} after this action wrote it; the operations of \
                             an action all read the packet as it was before the action",
                            env.text(span)
                        ),
                    ));
                }
                ops.push(op);
            }
        }
        Ok(ops)
    }

    /// The operations of one action statement (an assignment of `ucast_egress_port` also sets
    /// its valid bit).
    fn action_stmt(&mut self, scope: &Scope, st: &Stmt) -> Result<(Vec<Op>, Span)> {
        let env = scope.env();
        match st {
            Stmt::Assign { lhs, rhs, span } => {
                let dst = scope.lvalue(lhs)?;
                let AluExpr { alu, a, b } = scope.alu_expr(rhs, &dst)?;
                let op = Op {
                    dst_slice: None,
                    dst: self.layout.field(env, &dst),
                    alu,
                    a: self.layout.operand(env, &a),
                    b: self.layout.operand(env, &b),
                };
                let mut ops = vec![op];
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
                Ok((ops, *span))
            }
            Stmt::Call(call) => {
                if let Some((target, method, args)) = call.method_call() {
                    if args.is_empty() && (method.name == "setValid" || method.name == "setInvalid")
                    {
                        let h = scope.header(target)?;
                        let v = self.layout.valid(env, &h);
                        let bit = u128::from(method.name == "setValid");
                        return Ok((
                            vec![Op {
                                dst_slice: None,
                                dst: v,
                                alu: AluOp::Set,
                                a: Operand::Const(bit),
                                b: Operand::Const(0),
                            }],
                            call.span,
                        ));
                    }
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
            Stmt::Block(b) => Err(err(
                ErrorKind::Unsupported,
                b.span,
                "a nested block in an action",
            )),
        }
    }

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
            Stmt::Assign { .. } => true,
            Stmt::Call(c) => c.method_call().is_some_and(|(_, m, a)| {
                a.is_empty() && (m.name == "setValid" || m.name == "setInvalid")
            }),
            _ => false,
        }
    }

    /// Straight-line assignments in an apply block: as p4c does, each group becomes a keyless
    /// table running one anonymous action. A new group starts where a statement touches a
    /// field an earlier statement of the group wrote (an action reads the PHV once).
    fn assignments(&mut self, stmts: &[Stmt], next: Option<Node>) -> Result<Option<Node>> {
        let env = self.scope.env();
        let mut groups: Vec<(Vec<Op>, Span)> = Vec::new();
        let mut current: Vec<Op> = Vec::new();
        let mut current_span: Option<Span> = None;
        let scope = self.scope.with_action_params(&[])?;
        for st in stmts {
            let (ops, span) = self.action_stmt(&scope, st)?;
            let conflicts = ops.iter().any(|op| {
                current
                    .iter()
                    .any(|o| o.dst == op.dst || o.dst == field_of(op.a) || o.dst == field_of(op.b))
            });
            if conflicts {
                if let Some(s) = current_span.take() {
                    groups.push((std::mem::take(&mut current), s));
                }
            }
            current_span = Some(current_span.map_or(span, |s| s.to(span)));
            current.extend(ops);
        }
        if let Some(s) = current_span {
            groups.push((current, s));
        }
        let mut next = next;
        for (ops, span) in groups.into_iter().rev() {
            let line = env
                .source
                .get(..span.start)
                .map_or(0, |b| b.matches('\n').count() + 1);
            let name = self.fresh(self.qualified(&format!("assign_l{line}")));
            let action = self.push_action(name.clone(), Vec::new(), ops);
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
            Stmt::Assign { span, .. } => Err(err(
                ErrorKind::Semantic,
                *span,
                "internal: assignment outside a run",
            )),
        }
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
        Ok(Node::Table(id))
    }

    fn table(&mut self, t: &ast::TableDecl, next: TableNext) -> Result<Table> {
        let env = self.scope.env();
        let mut keys = Vec::new();
        let mut key_widths = Vec::new();
        for k in &t.keys {
            let f = self.scope.field(&k.expr)?;
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
            key_widths.push(f.width);
            keys.push(TableKey {
                field: self.layout.field(env, &f),
                kind,
                name: env.text(k.expr.span).to_string(),
                slice: None,
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
        Ok(Table {
            name: self.qualified(&t.name.name),
            stage: 0,
            keys,
            actions,
            default_action,
            size,
            const_entries,
            next,
            direct_counter: None,
        })
    }
}

fn field_of(o: Operand) -> FieldId {
    match o {
        Operand::Field(f) => f,
        _ => FieldId::MAX,
    }
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

/// Renumber tables and gateways in the order control flow first reaches them (depth first,
/// true/hit branch first), so ids, reports and dumps read in program order.
fn renumber(c: &mut ControlProgram, table_spans: &mut Vec<Span>, gateway_spans: &mut Vec<Span>) {
    let mut order: Vec<Node> = Vec::new();
    let mut stack: Vec<Node> = c.entry.into_iter().collect();
    while let Some(n) = stack.pop() {
        if order.contains(&n) {
            continue;
        }
        order.push(n);
        let succ: Vec<Option<Node>> = match n {
            Node::Table(t) => match &c.tables[t as usize].next {
                TableNext::Always(x) => vec![*x],
                TableNext::HitMiss { hit, miss } => vec![*hit, *miss],
                TableNext::ByAction { cases, default } => {
                    cases.iter().map(|c| c.1).chain([*default]).collect()
                }
            },
            Node::Gateway(g) => vec![
                c.gateways[g as usize].on_true,
                c.gateways[g as usize].on_false,
            ],
        };
        stack.extend(succ.into_iter().rev().flatten());
    }
    let mut tmap = vec![0 as TableId; c.tables.len()];
    let mut gmap = vec![0 as GatewayId; c.gateways.len()];
    let (mut nt, mut ng) = (0, 0);
    for n in &order {
        match *n {
            Node::Table(t) => {
                tmap[t as usize] = nt;
                nt += 1;
            }
            Node::Gateway(g) => {
                gmap[g as usize] = ng;
                ng += 1;
            }
        }
    }
    let map = |n: Option<Node>| {
        n.map(|n| match n {
            Node::Table(t) => Node::Table(tmap[t as usize]),
            Node::Gateway(g) => Node::Gateway(gmap[g as usize]),
        })
    };
    c.entry = map(c.entry);
    let mut tables: Vec<Option<(Table, Span)>> = vec![None; c.tables.len()];
    for (i, (mut t, s)) in c.tables.drain(..).zip(table_spans.drain(..)).enumerate() {
        t.next = match t.next {
            TableNext::Always(x) => TableNext::Always(map(x)),
            TableNext::HitMiss { hit, miss } => TableNext::HitMiss {
                hit: map(hit),
                miss: map(miss),
            },
            TableNext::ByAction { cases, default } => TableNext::ByAction {
                cases: cases.into_iter().map(|(a, n)| (a, map(n))).collect(),
                default: map(default),
            },
        };
        tables[tmap[i] as usize] = Some((t, s));
    }
    for (t, s) in tables.into_iter().flatten() {
        c.tables.push(t);
        table_spans.push(s);
    }
    let mut gateways: Vec<Option<(Gateway, Span)>> = vec![None; c.gateways.len()];
    for (i, (mut g, s)) in c
        .gateways
        .drain(..)
        .zip(gateway_spans.drain(..))
        .enumerate()
    {
        g.on_true = map(g.on_true);
        g.on_false = map(g.on_false);
        gateways[gmap[i] as usize] = Some((g, s));
    }
    for (g, s) in gateways.into_iter().flatten() {
        c.gateways.push(g);
        gateway_spans.push(s);
    }
}
