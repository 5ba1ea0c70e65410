//! Source text to [`crate::ast`]: runs the pest grammar (`grammar.pest`) and builds the syntax tree,
//! rejecting by name the constructs the grammar only recognises in order to refuse them.

use std::sync::LazyLock;

use pest::iterators::Pair;
use pest::pratt_parser::{Assoc, Op, PrattParser};
use pest::Parser;

use crate::ast::*;
use crate::error::{CompileError, ErrorKind, Result};

mod expected;
mod limits;
pub use limits::{MAX_BRACKETS, MAX_DEPTH};

#[derive(pest_derive::Parser)]
#[grammar = "grammar.pest"]
struct P4Parser;

/// Operator precedence, loosest first, as in p4c (bitwise operators bind tighter than
/// comparisons, unlike C).
static PRATT: LazyLock<PrattParser<Rule>> = LazyLock::new(|| {
    PrattParser::new()
        .op(Op::infix(Rule::lor, Assoc::Left))
        .op(Op::infix(Rule::land, Assoc::Left))
        .op(Op::infix(Rule::eq, Assoc::Left) | Op::infix(Rule::ne, Assoc::Left))
        .op(Op::infix(Rule::lt, Assoc::Left)
            | Op::infix(Rule::le, Assoc::Left)
            | Op::infix(Rule::gt, Assoc::Left)
            | Op::infix(Rule::ge, Assoc::Left))
        .op(Op::infix(Rule::bor, Assoc::Left))
        .op(Op::infix(Rule::bxor, Assoc::Left))
        .op(Op::infix(Rule::band, Assoc::Left))
        .op(Op::infix(Rule::shl, Assoc::Left) | Op::infix(Rule::shr, Assoc::Left))
        .op(Op::infix(Rule::add, Assoc::Left)
            | Op::infix(Rule::sub, Assoc::Left)
            | Op::infix(Rule::concat, Assoc::Left)
            | Op::infix(Rule::sat_add, Assoc::Left)
            | Op::infix(Rule::sat_sub, Assoc::Left))
        .op(Op::infix(Rule::mul, Assoc::Left)
            | Op::infix(Rule::div, Assoc::Left)
            | Op::infix(Rule::modulo, Assoc::Left))
        .op(Op::prefix(Rule::not_op)
            | Op::prefix(Rule::bnot_op)
            | Op::prefix(Rule::neg_op)
            | Op::prefix(Rule::cast_op))
        .op(Op::postfix(Rule::member)
            | Op::postfix(Rule::call)
            | Op::postfix(Rule::generic_call)
            | Op::postfix(Rule::slice))
});

/// Parse a whole source file.
pub fn parse(source: &str) -> Result<Program> {
    limits::brackets(source)?;
    expected::enable_detail();
    let mut pairs =
        P4Parser::parse(Rule::program, source).map_err(|e| expected::syntax_error(e, source))?;
    limits::nesting(pairs.clone())?;
    let program = pairs.next().map(|p| p.into_inner());
    let mut decls = Vec::new();
    for pair in program.into_iter().flatten() {
        if pair.as_rule() == Rule::EOI {
            break;
        }
        decls.push(decl(pair)?);
    }
    Ok(Program { decls })
}

/// The bytes of `source` outside comments, as the grammar's `COMMENT` skips them, with their
/// offsets: for the checks that read the text without pest (the depth of brackets, the end of
/// the token before a syntax error).
pub(crate) fn code_bytes(source: &str) -> impl Iterator<Item = (usize, u8)> + '_ {
    let bytes = source.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || loop {
        let rest = bytes.get(i..).filter(|r| !r.is_empty())?;
        if rest.starts_with(b"//") {
            i += rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
        } else if rest.starts_with(b"/*") {
            i += rest[2..]
                .windows(2)
                .position(|w| w == b"*/")
                .map_or(rest.len(), |j| j + 4);
        } else {
            i += 1;
            return Some((i - 1, rest[0]));
        }
    })
}

fn span_of(p: &Pair<Rule>) -> Span {
    let s = p.as_span();
    Span {
        start: s.start(),
        end: s.end(),
    }
}

fn ident(p: Pair<Rule>) -> Ident {
    Ident {
        name: p.as_str().to_string(),
        span: span_of(&p),
    }
}

fn unsupported(p: &Pair<Rule>, what: &str) -> CompileError {
    CompileError::new(
        ErrorKind::Unsupported,
        span_of(p),
        format!("{what} is not supported"),
    )
}

/// The error for a construct matched by a catch-all rule, named by its first word.
fn reject(p: Pair<Rule>) -> CompileError {
    let text = p.as_str();
    let word: String = text
        .chars()
        .take_while(|c| !c.is_whitespace() && *c != '(')
        .collect();
    match p.as_rule() {
        Rule::preproc => unsupported(&p, &format!("preprocessor directive `{word}`")),
        Rule::annotation => unsupported(&p, &format!("annotation `{word}`")),
        _ => unsupported(&p, &format!("`{word}`")),
    }
}

fn decl(p: Pair<Rule>) -> Result<Decl> {
    Ok(match p.as_rule() {
        Rule::const_decl => {
            let mut it = p.into_inner();
            let ty = type_ref(next(&mut it)?)?;
            let name = ident(next(&mut it)?);
            let value = expr(next(&mut it)?)?;
            Decl::Const(ConstDecl { ty, name, value })
        }
        Rule::typedef_decl => {
            let mut it = p.into_inner();
            let ty = type_ref(next(&mut it)?)?;
            Decl::Typedef(TypedefDecl {
                ty,
                name: ident(next(&mut it)?),
            })
        }
        Rule::header_decl => Decl::Header(aggregate(p)?),
        Rule::struct_decl => Decl::Struct(aggregate(p)?),
        Rule::parser_decl => Decl::Parser(parser_decl(p)?),
        Rule::control_decl => Decl::Control(control_decl(p)?),
        Rule::instantiation => Decl::Instance(instantiation(p)?),
        Rule::enum_decl => Decl::Enum(enum_decl(p)?),
        _ => return Err(reject(p)),
    })
}

/// The next child of a node the grammar guarantees; a missing one is reported rather than
/// trusted, so a grammar change can never make the compiler panic.
fn next<'a>(it: &mut impl Iterator<Item = Pair<'a, Rule>>) -> Result<Pair<'a, Rule>> {
    it.next().ok_or_else(|| {
        CompileError::new(
            ErrorKind::Syntax,
            Span::default(),
            "internal: malformed syntax tree",
        )
    })
}

fn bit_type(inner: Pair<Rule>) -> Result<TypeRef> {
    let span = span_of(&inner);
    let lit = next(&mut inner.into_inner())?;
    let (value, _) = int_lit(&lit)?;
    let width = u16::try_from(value)
        .ok()
        .filter(|w| (1..=128).contains(w))
        .ok_or_else(|| {
            CompileError::new(
                ErrorKind::Unsupported,
                span,
                format!("bit<{value}>: widths must be 1..=128"),
            )
        })?;
    Ok(TypeRef::Bit(width, span))
}

fn type_ref(p: Pair<Rule>) -> Result<TypeRef> {
    let inner = next(&mut p.into_inner())?;
    let span = span_of(&inner);
    Ok(match inner.as_rule() {
        Rule::bit_type => bit_type(inner)?,
        Rule::bool_type => TypeRef::Bool(span),
        _ => TypeRef::Named(ident(inner)),
    })
}

fn aggregate(p: Pair<Rule>) -> Result<AggregateDecl> {
    let mut it = p.into_inner();
    let name = ident(next(&mut it)?);
    let mut fields = Vec::new();
    for f in it {
        let mut fi = f.into_inner();
        let ty = type_ref(next(&mut fi)?)?;
        fields.push(FieldDecl {
            ty,
            name: ident(next(&mut fi)?),
        });
    }
    Ok(AggregateDecl { name, fields })
}

fn params(p: Pair<Rule>) -> Result<Vec<Param>> {
    p.into_inner()
        .map(|param| {
            let mut it = param.into_inner().peekable();
            let dir = match it.peek().map(|x| x.as_rule()) {
                Some(Rule::direction) => match next(&mut it)?.as_str() {
                    "in" => Direction::In,
                    "out" => Direction::Out,
                    _ => Direction::InOut,
                },
                _ => Direction::None,
            };
            let ty = type_ref(next(&mut it)?)?;
            Ok(Param {
                dir,
                ty,
                name: ident(next(&mut it)?),
            })
        })
        .collect()
}

fn enum_decl(p: Pair<Rule>) -> Result<EnumDecl> {
    let mut it = p.into_inner().peekable();
    let ty = match it.peek().map(|x| x.as_rule()) {
        Some(Rule::bit_type) => Some(bit_type(next(&mut it)?)?),
        _ => None,
    };
    let name = ident(next(&mut it)?);
    let mut members = Vec::new();
    for m in it {
        let mut mi = m.into_inner();
        let id = ident(next(&mut mi)?);
        members.push((id, mi.next().map(expr).transpose()?));
    }
    Ok(EnumDecl { ty, name, members })
}

fn instantiation(p: Pair<Rule>) -> Result<Instantiation> {
    let span = span_of(&p);
    let mut it = p.into_inner();
    let generic_ty = next(&mut it)?;
    let mut gi = generic_ty.into_inner();
    let type_name = ident(next(&mut gi)?);
    let type_args = gi.map(type_ref).collect::<Result<Vec<_>>>()?;
    let args = args(next(&mut it)?)?;
    let name = ident(next(&mut it)?);
    let mut functions = Vec::new();
    for f in it {
        let mut fi = f.into_inner();
        let ret = next(&mut fi)?;
        let ret = match ret.as_rule() {
            Rule::void_kw => None,
            _ => Some(type_ref(ret)?),
        };
        let fname = ident(next(&mut fi)?);
        let params = params(next(&mut fi)?)?;
        let body = block(next(&mut fi)?)?;
        functions.push(ExternFn {
            ret,
            name: fname,
            params,
            body,
        });
    }
    Ok(Instantiation {
        type_name,
        generic: !type_args.is_empty(),
        type_args,
        args,
        name,
        functions,
        span,
    })
}

fn args(p: Pair<Rule>) -> Result<Vec<Expr>> {
    p.into_inner().map(expr).collect()
}

fn parser_decl(p: Pair<Rule>) -> Result<ParserDecl> {
    let mut it = p.into_inner();
    let name = ident(next(&mut it)?);
    let params = params(next(&mut it)?)?;
    let mut states = Vec::new();
    for local in it {
        match local.as_rule() {
            Rule::parser_state => states.push(state(local)?),
            Rule::instantiation => {
                return Err(unsupported(&local, "an instance declaration in a parser"))
            }
            _ => return Err(reject(local)),
        }
    }
    Ok(ParserDecl {
        name,
        params,
        states,
    })
}

fn state(p: Pair<Rule>) -> Result<StateDecl> {
    let span = span_of(&p);
    let mut it = p.into_inner();
    let name = ident(next(&mut it)?);
    let mut stmts = Vec::new();
    let mut transition = None;
    for x in it {
        if x.as_rule() == Rule::transition {
            transition = Some(transition_decl(x)?);
        } else if let Some(s) = stmt(x)? {
            stmts.push(s);
        }
    }
    Ok(StateDecl {
        name,
        stmts,
        transition,
        span,
    })
}

fn transition_decl(p: Pair<Rule>) -> Result<TransitionDecl> {
    let inner = next(&mut p.into_inner())?;
    if inner.as_rule() != Rule::select_expr {
        return Ok(TransitionDecl::Direct(ident(inner)));
    }
    let span = span_of(&inner);
    let mut it = inner.into_inner();
    let keys = args(next(&mut it)?)?;
    let mut cases = Vec::new();
    for c in it {
        let cspan = span_of(&c);
        let mut ci = c.into_inner();
        let keyset = keyset(next(&mut ci)?)?;
        cases.push(SelectCaseDecl {
            keyset,
            next: ident(next(&mut ci)?),
            span: cspan,
        });
    }
    Ok(TransitionDecl::Select { keys, cases, span })
}

fn keyset(p: Pair<Rule>) -> Result<Vec<Pattern>> {
    let inner = next(&mut p.into_inner())?;
    match inner.as_rule() {
        Rule::tuple_keyset => inner.into_inner().map(keyset_elem).collect(),
        _ => Ok(vec![keyset_elem(inner)?]),
    }
}

fn keyset_elem(p: Pair<Rule>) -> Result<Pattern> {
    let inner = next(&mut p.into_inner())?;
    Ok(match inner.as_rule() {
        Rule::default_ks | Rule::dont_care => Pattern::Any(span_of(&inner)),
        Rule::mask_ks | Rule::range_ks => {
            let is_mask = inner.as_rule() == Rule::mask_ks;
            let mut it = inner.into_inner();
            let a = expr(next(&mut it)?)?;
            let b = expr(next(&mut it)?)?;
            if is_mask {
                Pattern::Mask(a, b)
            } else {
                Pattern::Range(a, b)
            }
        }
        _ => Pattern::Value(expr(inner)?),
    })
}

fn control_decl(p: Pair<Rule>) -> Result<ControlDecl> {
    let mut it = p.into_inner();
    let name = ident(next(&mut it)?);
    let params = params(next(&mut it)?)?;
    let (mut actions, mut tables, mut instances) = (Vec::new(), Vec::new(), Vec::new());
    let mut locals = Vec::new();
    let mut apply = None;
    // Annotations go with the table or action after them.
    let mut annotations = Vec::new();
    for local in it {
        if !annotations.is_empty()
            && !matches!(
                local.as_rule(),
                Rule::annotation | Rule::action_decl | Rule::table_decl
            )
        {
            return Err(misplaced(&annotations[0]));
        }
        match local.as_rule() {
            Rule::annotation => annotations.push(annotation(&local)),
            Rule::action_decl => {
                let mut a = action_decl(local)?;
                a.annotations = std::mem::take(&mut annotations);
                actions.push(a);
            }
            Rule::table_decl => {
                let mut t = table_decl(local)?;
                t.annotations = std::mem::take(&mut annotations);
                tables.push(t);
            }
            Rule::instantiation => instances.push(instantiation(local)?),
            Rule::var_decl => locals.push(var_decl(local)?),
            Rule::apply_block => apply = Some(block(next(&mut local.into_inner())?)?),
            _ => return Err(reject(local)),
        }
    }
    let apply = apply.ok_or_else(|| {
        CompileError::new(
            ErrorKind::Syntax,
            name.span,
            "a control needs an apply block",
        )
    })?;
    Ok(ControlDecl {
        name,
        params,
        actions,
        tables,
        instances,
        locals,
        apply,
    })
}

/// An annotation as written: `@name`, `@name(a, b)`, or `@pragma name a b` (to the end of
/// its line).
fn annotation(p: &Pair<Rule>) -> Annotation {
    let span = span_of(p);
    let text = p.as_str();
    let at = |offset: usize, len: usize| Span {
        start: span.start + offset,
        end: span.start + offset + len,
    };
    let word_len = |s: &str| {
        s.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(s.len())
    };
    let (pragma, name_at) = match text.strip_prefix("@pragma") {
        Some(rest) if !rest.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_') => {
            (true, text.len() - rest.trim_start().len())
        }
        _ => (false, 1),
    };
    let name_len = word_len(&text[name_at..]);
    let rest = &text[name_at + name_len..];
    let args: Vec<String> = if pragma {
        rest.split_whitespace().map(str::to_string).collect()
    } else {
        let inside = rest
            .trim_start()
            .strip_prefix('(')
            .and_then(|r| r.strip_suffix(')'));
        inside.map_or_else(Vec::new, |a| {
            a.split(',')
                .map(|x| x.trim().to_string())
                .filter(|x| !x.is_empty())
                .collect()
        })
    };
    Annotation {
        name: Ident {
            name: text[name_at..name_at + name_len].to_string(),
            span: at(name_at, name_len),
        },
        pragma,
        args,
        span,
    }
}

/// An annotation before something other than a table or an action.
fn misplaced(a: &Annotation) -> CompileError {
    let what = if a.pragma { "pragma" } else { "annotation" };
    let at = if a.pragma { "@pragma " } else { "@" };
    let on = match a.name.name.as_str() {
        "stage" => ": it goes before a table",
        "name" => ": it goes before a table or an action",
        _ => "",
    };
    CompileError::new(
        ErrorKind::Unsupported,
        a.span,
        format!("{what} `{at}{}` is not supported here{on}", a.name.name),
    )
}

/// A number as the language writes it (`12`, `0x1f`, `0b101`, `1_000`), or `None`.
pub(crate) fn number(text: &str) -> Option<u128> {
    let mut pairs = P4Parser::parse(Rule::int_lit, text).ok()?;
    let lit = pairs.next()?;
    (lit.as_str().len() == text.len())
        .then(|| int_lit(&lit).ok().map(|(v, _)| v))
        .flatten()
}

fn var_decl(p: Pair<Rule>) -> Result<VarDecl> {
    let span = span_of(&p);
    let mut it = p.into_inner();
    let ty = type_ref(next(&mut it)?)?;
    let name = ident(next(&mut it)?);
    let init = it.next().map(expr).transpose()?;
    Ok(VarDecl {
        ty,
        name,
        init,
        span,
    })
}

fn action_decl(p: Pair<Rule>) -> Result<ActionDecl> {
    let mut it = p.into_inner();
    let name = ident(next(&mut it)?);
    let params = params(next(&mut it)?)?;
    let body = block(next(&mut it)?)?;
    Ok(ActionDecl {
        annotations: Vec::new(),
        name,
        params,
        body,
    })
}

fn table_decl(p: Pair<Rule>) -> Result<TableDecl> {
    let mut it = p.into_inner();
    let name = ident(next(&mut it)?);
    let mut t = TableDecl {
        annotations: Vec::new(),
        name,
        keys: Vec::new(),
        actions: Vec::new(),
        default_action: None,
        size: None,
        entries: Vec::new(),
        counters: None,
    };
    for prop in it {
        match prop.as_rule() {
            Rule::key_prop => {
                for k in prop.into_inner() {
                    let mut ki = k.into_inner();
                    let e = expr(next(&mut ki)?)?;
                    t.keys.push(KeyElem {
                        expr: e,
                        kind: ident(next(&mut ki)?),
                    });
                }
            }
            Rule::actions_prop => {
                for a in prop.into_inner() {
                    let inner = next(&mut a.into_inner())?;
                    if inner.as_rule() == Rule::annotation {
                        return Err(reject(inner));
                    }
                    t.actions.push(ident(inner));
                }
            }
            Rule::default_prop => {
                let e = prop.into_inner().find(|x| x.as_rule() == Rule::expr);
                t.default_action = e.map(expr).transpose()?;
            }
            Rule::size_prop => t.size = Some(expr(next(&mut prop.into_inner())?)?),
            Rule::counters_prop => t.counters = Some(ident(next(&mut prop.into_inner())?)),
            Rule::entries_prop => {
                let mut it = prop.clone().into_inner().peekable();
                if it.peek().map(|x| x.as_rule()) != Some(Rule::const_kw) {
                    return Err(unsupported(
                        &prop,
                        "mutable `entries` (only `const entries`)",
                    ));
                }
                for e in it.filter(|x| x.as_rule() == Rule::entry) {
                    let span = span_of(&e);
                    let mut ei = e.into_inner();
                    let keyset = keyset(next(&mut ei)?)?;
                    t.entries.push(EntryDecl {
                        keyset,
                        action: expr(next(&mut ei)?)?,
                        span,
                    });
                }
            }
            _ => {
                let pname = prop
                    .clone()
                    .into_inner()
                    .find(|x| x.as_rule() == Rule::name)
                    .map_or_else(String::new, |n| n.as_str().to_string());
                return Err(unsupported(&prop, &format!("table property `{pname}`")));
            }
        }
    }
    Ok(t)
}

fn block(p: Pair<Rule>) -> Result<Block> {
    let span = span_of(&p);
    let mut stmts = Vec::new();
    for s in p.into_inner() {
        if let Some(s) = stmt(s)? {
            stmts.push(s);
        }
    }
    Ok(Block { stmts, span })
}

/// A statement, or `None` for an empty `;`.
fn stmt(p: Pair<Rule>) -> Result<Option<Stmt>> {
    let span = span_of(&p);
    Ok(Some(match p.as_rule() {
        Rule::block => Stmt::Block(block(p)?),
        Rule::if_stmt => {
            let mut it = p.into_inner();
            let cond = expr(next(&mut it)?)?;
            let then = as_block(next(&mut it)?)?;
            let els = it.next().map(as_block).transpose()?;
            Stmt::If {
                cond,
                then,
                els,
                span,
            }
        }
        Rule::assign_stmt => {
            let mut it = p.into_inner();
            let lhs = expr(next(&mut it)?)?;
            Stmt::Assign {
                lhs,
                rhs: expr(next(&mut it)?)?,
                span,
            }
        }
        Rule::call_stmt => Stmt::Call(expr(next(&mut p.into_inner())?)?),
        Rule::empty_stmt => return Ok(None),
        Rule::var_decl => Stmt::VarDecl(var_decl(p)?),
        Rule::switch_stmt => {
            let mut it = p.into_inner();
            let e = expr(next(&mut it)?)?;
            let mut cases = Vec::new();
            for c in it {
                let cspan = span_of(&c);
                let mut ci = c.into_inner();
                let l = next(&mut ci)?;
                let label = match l.as_rule() {
                    Rule::default_ks => None,
                    _ => Some(ident(l)),
                };
                let body = ci.next().map(block).transpose()?;
                cases.push(SwitchCase {
                    label,
                    body,
                    span: cspan,
                });
            }
            Stmt::Switch {
                expr: e,
                cases,
                span,
            }
        }
        _ => return Err(reject(p)),
    }))
}

/// An `if` branch as a block (a single statement becomes a one-statement block).
fn as_block(p: Pair<Rule>) -> Result<Block> {
    if p.as_rule() == Rule::block {
        return block(p);
    }
    let span = span_of(&p);
    Ok(Block {
        stmts: stmt(p)?.into_iter().collect(),
        span,
    })
}

fn int_lit(p: &Pair<Rule>) -> Result<(u128, Option<u16>)> {
    let span = span_of(p);
    let too_big = || CompileError::new(ErrorKind::Type, span, "number does not fit in 128 bits");
    let mut width = None;
    let mut value = 0;
    for part in p.clone().into_inner() {
        match part.as_rule() {
            Rule::width_prefix => {
                let digits = part.as_str().trim_end_matches('w');
                let w = digits
                    .parse::<u16>()
                    .ok()
                    .filter(|w| (1..=128).contains(w))
                    .ok_or_else(|| {
                        CompileError::new(
                            ErrorKind::Unsupported,
                            span,
                            format!("width {digits}: widths must be 1..=128"),
                        )
                    })?;
                width = Some(w);
            }
            _ => {
                let s = part.as_str().replace('_', "");
                let (digits, radix) = match s.get(..2) {
                    Some("0x" | "0X") => (&s[2..], 16),
                    Some("0b" | "0B") => (&s[2..], 2),
                    _ => (s.as_str(), 10),
                };
                value = u128::from_str_radix(digits, radix).map_err(|_| too_big())?;
            }
        }
    }
    if let Some(w) = width {
        if w < 128 && value >> w != 0 {
            return Err(CompileError::new(
                ErrorKind::Type,
                span,
                format!("{} does not fit in {w} bits", p.as_str()),
            ));
        }
    }
    Ok((value, width))
}

fn expr(p: Pair<Rule>) -> Result<Expr> {
    PRATT
        .map_primary(primary)
        .map_prefix(|op, rhs| {
            let rhs = rhs?;
            let span = span_of(&op).to(rhs.span);
            let kind = match op.as_rule() {
                Rule::not_op => ExprKind::Unary(UnOp::Not, Box::new(rhs)),
                Rule::bnot_op => ExprKind::Unary(UnOp::BitNot, Box::new(rhs)),
                Rule::neg_op => ExprKind::Unary(UnOp::Neg, Box::new(rhs)),
                _ => ExprKind::Cast(type_ref_of_cast(op)?, Box::new(rhs)),
            };
            Ok(Expr { kind, span })
        })
        .map_postfix(|lhs, op| {
            let lhs = lhs?;
            let span = lhs.span.to(span_of(&op));
            let kind = match op.as_rule() {
                Rule::member => ExprKind::Member(Box::new(lhs), ident(next(&mut op.into_inner())?)),
                Rule::call => ExprKind::Call(Box::new(lhs), args(next(&mut op.into_inner())?)?),
                Rule::generic_call => {
                    let mut types = Vec::new();
                    let mut call_args = Vec::new();
                    for x in op.into_inner() {
                        match x.as_rule() {
                            Rule::type_ref => types.push(type_ref(x)?),
                            _ => call_args = args(x)?,
                        }
                    }
                    ExprKind::GenericCall(Box::new(lhs), types, call_args)
                }
                _ => {
                    let mut it = op.into_inner();
                    let hi = expr(next(&mut it)?)?;
                    let lo = expr(next(&mut it)?)?;
                    ExprKind::Slice(Box::new(lhs), Box::new(hi), Box::new(lo))
                }
            };
            Ok(Expr { kind, span })
        })
        .map_infix(|lhs, op, rhs| {
            let (lhs, rhs) = (lhs?, rhs?);
            let span = lhs.span.to(rhs.span);
            let op = match op.as_rule() {
                Rule::lor => BinOp::Or,
                Rule::land => BinOp::And,
                Rule::eq => BinOp::Eq,
                Rule::ne => BinOp::Ne,
                Rule::lt => BinOp::Lt,
                Rule::le => BinOp::Le,
                Rule::gt => BinOp::Gt,
                Rule::ge => BinOp::Ge,
                Rule::bor => BinOp::BitOr,
                Rule::bxor => BinOp::BitXor,
                Rule::band => BinOp::BitAnd,
                Rule::shl => BinOp::Shl,
                Rule::shr => BinOp::Shr,
                Rule::add => BinOp::Add,
                Rule::sub => BinOp::Sub,
                Rule::sat_add => BinOp::AddSat,
                Rule::sat_sub => BinOp::SubSat,
                Rule::concat => BinOp::Concat,
                Rule::mul => BinOp::Unsupported("*"),
                Rule::div => BinOp::Unsupported("/"),
                _ => BinOp::Unsupported("%"),
            };
            Ok(Expr {
                kind: ExprKind::Binary(op, Box::new(lhs), Box::new(rhs)),
                span,
            })
        })
        .parse(p.into_inner())
}

fn type_ref_of_cast(op: Pair<Rule>) -> Result<TypeRef> {
    let inner = next(&mut op.into_inner())?;
    let span = span_of(&inner);
    match inner.as_rule() {
        Rule::bool_type => Ok(TypeRef::Bool(span)),
        _ => {
            let (w, _) = int_lit(&next(&mut inner.into_inner())?)?;
            let w = u16::try_from(w)
                .ok()
                .filter(|w| (1..=128).contains(w))
                .ok_or_else(|| {
                    CompileError::new(ErrorKind::Unsupported, span, "widths must be 1..=128")
                })?;
            Ok(TypeRef::Bit(w, span))
        }
    }
}

fn primary(p: Pair<Rule>) -> Result<Expr> {
    let span = span_of(&p);
    let kind = match p.as_rule() {
        Rule::paren => return expr(next(&mut p.into_inner())?),
        Rule::list_expr => ExprKind::List(p.into_inner().map(expr).collect::<Result<_>>()?),
        Rule::bool_lit => ExprKind::Bool(p.as_str() == "true"),
        Rule::int_lit => {
            let (value, width) = int_lit(&p)?;
            ExprKind::Int { value, width }
        }
        _ => ExprKind::Name(ident(p)),
    };
    Ok(Expr { kind, span })
}
