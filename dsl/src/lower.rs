//! Lowering: checked blocks of one gress to the executable format ([`GressProgram`]).
//!
//! Fields get ids in the order the program first touches them (a header's fields and
//! validity bit together, in wire order); slices and stages are filled in later by
//! [`crate::phv`] and [`crate::alloc`]. The parser and deparser are lowered here, the
//! match-action control in the `control` module.
//!
//! The parser's error policy follows bf-p4c: a gress whose program reads
//! `parser_err` (from `ingress_intrinsic_metadata_from_parser_t` or its egress twin) handles
//! parser errors itself, so its packets continue with the error code set
//! ([`ParserErrorPolicy::Continue`]); otherwise a packet the parser fails on is dropped and
//! counted ([`ParserErrorPolicy::Drop`]).

use std::collections::{HashMap, HashSet};

use pipelines::program::*;
use pipelines::spec::PipeSpec;

use crate::alloc::StagePin;
use crate::ast::{self, Expr, ExprKind, Pattern, Span, Stmt, TransitionDecl};
use crate::check::{Env, GressBlocks, Place, Scope, Value};
use crate::control::ControlLowering;
use crate::error::{err, ErrorKind, Result};
use crate::layout::LayoutBuilder;
use crate::tna;

/// One gress lowered, plus the source positions later passes need for their errors.
pub struct LoweredGress {
    /// The program (PHV slices empty, all stages 0).
    pub program: GressProgram,
    /// Where each table is declared (or, for a synthesised one, the statement it runs).
    pub table_spans: Vec<Span>,
    /// Each table's stage pragmas.
    pub table_pins: Vec<Vec<StagePin>>,
    /// Where each table's const entries are written, in order.
    pub const_entry_spans: Vec<Vec<Span>>,
    /// Where each gateway's `if` is.
    pub gateway_spans: Vec<Span>,
    /// The gress's control declaration (for errors about the gress as a whole).
    pub control_span: Span,
    /// The gress's parser declaration.
    pub parser_span: Span,
}

/// Lower the three blocks of a gress.
pub fn lower_gress(env: &Env, blocks: &GressBlocks, spec: &PipeSpec) -> Result<LoweredGress> {
    let mut layout = LayoutBuilder::default();
    let mut parser = {
        let scope = Scope::new(env, &blocks.parser.params, blocks.gress)?;
        lower_parser(&scope, blocks.parser, &mut layout)?
    };
    let lowered = ControlLowering::new(env, blocks, &mut layout, spec)?.lower()?;
    let mut control = lowered.control;
    let mut tables: Vec<(Span, Vec<StagePin>, Vec<Span>)> = lowered
        .table_spans
        .into_iter()
        .zip(lowered.table_pins)
        .zip(lowered.const_entry_spans)
        .map(|((span, pins), entries)| (span, pins, entries))
        .collect();
    let mut gateway_spans = lowered.gateway_spans;
    renumber(&mut control, &mut tables, &mut gateway_spans);
    let ((table_spans, table_pins), const_entry_spans): ((Vec<_>, Vec<_>), Vec<_>) = tables
        .into_iter()
        .map(|(span, pins, entries)| ((span, pins), entries))
        .unzip();
    let deparser = {
        let scope = Scope::new(env, &blocks.deparser.params, blocks.gress)?;
        lower_deparser(&scope, blocks.deparser, &mut layout)?
    };
    if layout.layout.intrinsic(Intrinsic::ParserError).is_some() {
        parser.on_error = ParserErrorPolicy::Continue;
    }
    Ok(LoweredGress {
        program: GressProgram {
            phv: layout.layout,
            parser,
            control,
            deparser,
        },
        table_spans,
        table_pins,
        const_entry_spans,
        gateway_spans,
        control_span: blocks.control.name.span,
        parser_span: blocks.parser.name.span,
    })
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
        Stmt::If { span, .. } => Err(err(
            ErrorKind::Unsupported,
            *span,
            "a parser state cannot contain `if`: branch with `transition select`",
        )),
        Stmt::Switch { span, .. } => Err(err(
            ErrorKind::Unsupported,
            *span,
            "a parser state cannot contain `switch`: branch with `transition select`",
        )),
        Stmt::VarDecl(v) => Err(err(
            ErrorKind::Unsupported,
            v.span,
            "a parser state cannot declare a local variable: it can write a constant into a \
             metadata field",
        )),
        Stmt::Block(b) => Err(err(
            ErrorKind::Unsupported,
            b.span,
            "a parser state cannot contain a nested block",
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
    // Each key: its width and what the parser matches on.
    let mut key_parts: Vec<(u16, SelectKey)> = Vec::new();
    for k in keys {
        key_parts.push(select_key(scope, k, layout)?);
    }
    let key_fields: Vec<u16> = key_parts.iter().map(|k| k.0).collect();
    let total: u32 = key_fields.iter().map(|&w| w as u32).sum();
    if total > 128 {
        return Err(err(
            ErrorKind::Unsupported,
            span,
            format!("the select key is {total} bits; the parser matches on at most 128"),
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
            let w = key_fields[0];
            CasePattern::Range {
                lo: env.const_value(lo, Some(w))?,
                hi: env.const_value(hi, Some(w))?,
            }
        } else {
            let (mut value, mut mask) = (0u128, 0u128);
            let mut shift = total;
            for (p, &fw) in c.keyset.iter().zip(&key_fields) {
                shift -= fw as u32;
                let (v, m) = env.keyset(p, fw)?;
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
    let keys = key_parts.into_iter().map(|k| k.1).collect();
    Ok(Transition::Select {
        keys,
        cases: out_cases,
        default,
    })
}

/// One key of a `select`: a field, a slice of one, or `pkt.lookahead<bit<N>>()`.
fn select_key(scope: &Scope, k: &Expr, layout: &mut LayoutBuilder) -> Result<(u16, SelectKey)> {
    let env = scope.env();
    if let ExprKind::GenericCall(callee, types, args) = &k.kind {
        let is_lookahead = matches!(&callee.kind, ExprKind::Member(t, m)
            if m.name == "lookahead" && scope.is_packet(t));
        if !is_lookahead {
            return Err(err(
                ErrorKind::Unsupported,
                k.span,
                format!("`{}` is not supported as a select key", env.text(k.span)),
            ));
        }
        let w = match (types.as_slice(), args.is_empty()) {
            ([ast::TypeRef::Bit(w, _)], true) => *w,
            _ => {
                return Err(err(
                    ErrorKind::Unsupported,
                    k.span,
                    "write `pkt.lookahead<bit<N>>()` (other lookahead types are not supported)",
                ))
            }
        };
        return Ok((
            w,
            SelectKey::Lookahead {
                offset_bits: 0,
                width: w,
            },
        ));
    }
    match scope.value_of(k)? {
        Value::Field(f) => Ok((
            f.width,
            SelectKey::Field {
                field: layout.field(env, &f),
                hi: f.width - 1,
                lo: 0,
            },
        )),
        Value::Slice(f, hi, lo) => Ok((
            hi - lo + 1,
            SelectKey::Field {
                field: layout.field(env, &f),
                hi,
                lo,
            },
        )),
        _ => Err(err(
            ErrorKind::Type,
            k.span,
            format!("`{}` is not a field", env.text(k.span)),
        )),
    }
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
    let mut mirrors = HashSet::new();
    for i in &d.instances {
        // The deparser's externs take no type or constructor arguments.
        let (names, usage) = match i.type_name.name.as_str() {
            tna::CHECKSUM => (
                &mut checksums,
                "write `Checksum() name;` (the chip's checksum is the 16-bit Internet checksum)",
            ),
            tna::MIRROR => (
                &mut mirrors,
                "write `Mirror() name;` (the session is the `mirror_session` intrinsic)",
            ),
            other => {
                return Err(err(
                    ErrorKind::Unsupported,
                    i.type_name.span,
                    format!("extern `{other}` is not supported in a deparser"),
                ))
            }
        };
        if i.generic || !i.args.is_empty() {
            return Err(err(ErrorKind::Unsupported, i.span, usage));
        }
        names.insert(i.name.name.as_str());
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
                let emit = call.method_call().filter(|(t, m, a)| m.name == "emit" && a.len() == 1 && (scope.is_packet(t) || is_instance(t, &mirrors)));
                let Some((target, _, [arg])) = emit else {
                    return Err(err(ErrorKind::Unsupported, call.span, format!("`{}` is not supported in a deparser", env.text(call.span))));
                };
                let to_mirror = is_instance(target, &mirrors);
                let headers = match scope.place(arg)? {
                    Place::Header(h) => vec![h],
                    Place::Struct { key, name, ty } => env.struct_headers(&key, &name, &ty),
                    _ => return Err(err(ErrorKind::Type, arg.span, format!("`{}` is not a header or struct of headers", env.text(arg.span)))),
                };
                for h in headers {
                    let id = layout.header(env, &h);
                    let list = if to_mirror { &mut out.mirror_emit } else { &mut out.emit };
                    if list.contains(&id) {
                        return Err(err(ErrorKind::Semantic, arg.span, format!("`{}` is emitted twice", h.name)));
                    }
                    list.push(id);
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
                return Err(err(ErrorKind::Unsupported, *span, "a deparser cannot contain `if`: a checksum is computed only when its header is valid anyway"))
            }
            Stmt::Switch { span, .. } => return Err(err(ErrorKind::Unsupported, *span, "a deparser cannot contain `switch`")),
            Stmt::VarDecl(v) => return Err(err(ErrorKind::Unsupported, v.span, "a deparser cannot declare a local variable")),
        }
    }
    Ok(out)
}

/// Whether `e` names one of the deparser's extern instances in `names`.
fn is_instance(e: &Expr, names: &HashSet<&str>) -> bool {
    matches!(&e.kind, ExprKind::Name(n) if names.contains(n.name.as_str()))
}

/// Renumber tables and gateways in the order control flow first reaches them (depth first,
/// true/hit branch first), so ids, reports and dumps read in program order; `table_info`
/// (each table's span and stage pragmas) and `gateway_spans` follow.
fn renumber<T: Clone>(
    c: &mut ControlProgram,
    table_info: &mut Vec<T>,
    gateway_spans: &mut Vec<Span>,
) {
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
    let mut tables: Vec<Option<(Table, T)>> = vec![None; c.tables.len()];
    for (i, (mut t, s)) in c.tables.drain(..).zip(table_info.drain(..)).enumerate() {
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
        table_info.push(s);
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
