//! Semantic checks: declarations, types, names and the architecture's rules.
//!
//! [`Env::build`] checks the declarations once (types, constants, the `Pipeline` package and
//! the shape of every parser) and [`Scope`] resolves the names inside one block. The lowering
//! asks a scope to type every expression before it emits IR for it, so each rule lives here
//! exactly once: widths must match, intrinsic inputs are read-only, an action statement is
//! one ALU operation, a gateway compares fields with constants.

use std::collections::{HashMap, HashSet, VecDeque};

use pipelines::phv::mask;
use pipelines::program::{AluOp, CmpOp, Gress, Intrinsic};

use crate::ast::*;
use crate::error::{CompileError, ErrorKind, Result};
use crate::tna::{self, IntrinsicType, Role};

fn err(kind: ErrorKind, span: Span, msg: impl Into<String>) -> CompileError {
    CompileError::new(kind, span, msg)
}

/// A resolved type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ty {
    /// `bit<N>`.
    Bits(u16),
    /// `bool` (one bit in the PHV).
    Bool,
    /// A header type, by name.
    Header(String),
    /// A user struct type, by name.
    Struct(String),
    /// A built-in intrinsic metadata struct.
    Intrinsic(&'static IntrinsicType),
    /// `packet_in` / `packet_out`.
    Packet,
}

impl Ty {
    /// Width in bits of a scalar type.
    fn scalar_width(&self) -> Option<u16> {
        match self {
            Ty::Bits(w) => Some(*w),
            Ty::Bool => Some(1),
            _ => None,
        }
    }
}

/// The blocks of one gress, as named by the `Pipeline` package.
#[derive(Clone, Copy, Debug)]
pub struct GressBlocks<'a> {
    /// Which gress.
    pub gress: Gress,
    /// Its parser.
    pub parser: &'a ParserDecl,
    /// Its match-action control.
    pub control: &'a ControlDecl,
    /// Its deparser.
    pub deparser: &'a ControlDecl,
}

/// Everything declared at top level, checked.
pub struct Env<'a> {
    /// The source text, for quoting expressions in messages.
    pub source: &'a str,
    consts: HashMap<String, (u128, Option<u16>)>,
    /// Header and struct type names (true for headers), known before their fields resolve.
    aggregate_kinds: HashMap<String, bool>,
    typedefs: HashMap<String, Ty>,
    headers: HashMap<String, Vec<(String, u16)>>,
    structs: HashMap<String, Vec<(String, Ty)>>,
    /// Serializable enums: name → member values (their width is in `typedefs`).
    enums: HashMap<String, HashMap<String, u128>>,
    /// Ingress then egress.
    pub gresses: [GressBlocks<'a>; 2],
}

impl<'a> Env<'a> {
    /// Check the top-level declarations and find the pipeline's blocks.
    pub fn build(program: &'a Program, source: &'a str) -> Result<Env<'a>> {
        let mut names: HashSet<&str> = HashSet::new();
        let mut declare = |id: &'a Ident| -> Result<()> {
            if !names.insert(&id.name) {
                return Err(err(
                    ErrorKind::Duplicate,
                    id.span,
                    format!("`{}` is declared twice", id.name),
                ));
            }
            Ok(())
        };
        for d in &program.decls {
            match d {
                Decl::Const(c) => declare(&c.name)?,
                Decl::Typedef(t) => declare(&t.name)?,
                Decl::Header(a) | Decl::Struct(a) => declare(&a.name)?,
                Decl::Parser(p) => declare(&p.name)?,
                Decl::Control(c) => declare(&c.name)?,
                Decl::Instance(i) => declare(&i.name)?,
                Decl::Enum(e) => declare(&e.name)?,
            }
        }
        let aggregates: HashMap<&str, (bool, &AggregateDecl)> = program
            .decls
            .iter()
            .filter_map(|d| match d {
                Decl::Header(a) => Some((a.name.name.as_str(), (true, a))),
                Decl::Struct(a) => Some((a.name.name.as_str(), (false, a))),
                _ => None,
            })
            .collect();
        let mut env = Env {
            source,
            consts: HashMap::new(),
            aggregate_kinds: aggregates
                .iter()
                .map(|(n, (h, _))| (n.to_string(), *h))
                .collect(),
            typedefs: HashMap::new(),
            headers: HashMap::new(),
            structs: HashMap::new(),
            enums: HashMap::new(),
            gresses: find_pipeline(program)?,
        };
        // Enums first: they are types and constants everything else may use.
        for d in &program.decls {
            if let Decl::Enum(e) = d {
                env.enum_decl(e)?;
            }
        }
        // Typedefs first (they may name each other only in declaration order, as in P4).
        for d in &program.decls {
            if let Decl::Typedef(t) = d {
                let ty = env.resolve_type(&t.ty)?;
                env.typedefs.insert(t.name.name.clone(), ty);
            }
        }
        for d in &program.decls {
            match d {
                Decl::Header(h) => {
                    let mut fields = Vec::new();
                    for f in &h.fields {
                        match env.resolve_type(&f.ty)? {
                            Ty::Bits(w) => fields.push((f.name.name.clone(), w)),
                            _ => {
                                return Err(err(
                                    ErrorKind::Type,
                                    f.ty.span(),
                                    format!("header field `{}` must be bit<N>", f.name.name),
                                ))
                            }
                        }
                    }
                    check_unique(h.fields.iter().map(|f| &f.name))?;
                    let bits: u32 = fields.iter().map(|f| f.1 as u32).sum();
                    if bits % 8 != 0 || bits == 0 {
                        return Err(err(
                            ErrorKind::Type,
                            h.name.span,
                            format!(
                                "header `{}` is {bits} bits; a header must be a whole, \
                                 non-zero number of bytes",
                                h.name.name
                            ),
                        ));
                    }
                    env.headers.insert(h.name.name.clone(), fields);
                }
                Decl::Struct(s) => {
                    let mut fields = Vec::new();
                    for f in &s.fields {
                        let ty = env.resolve_type(&f.ty)?;
                        if matches!(ty, Ty::Intrinsic(_) | Ty::Packet) {
                            return Err(err(
                                ErrorKind::Type,
                                f.ty.span(),
                                "built-in types cannot be struct fields",
                            ));
                        }
                        fields.push((f.name.name.clone(), ty));
                    }
                    check_unique(s.fields.iter().map(|f| &f.name))?;
                    env.structs.insert(s.name.name.clone(), fields);
                }
                Decl::Const(c) => {
                    let width = match env.resolve_type(&c.ty)? {
                        Ty::Bits(w) => w,
                        Ty::Bool => 1,
                        _ => {
                            return Err(err(
                                ErrorKind::Type,
                                c.ty.span(),
                                "constants must be bit<N> or bool",
                            ))
                        }
                    };
                    let value = env.const_value(&c.value, Some(width))?;
                    env.consts.insert(c.name.name.clone(), (value, Some(width)));
                }
                _ => {}
            }
        }
        env.check_struct_cycles(&aggregates)?;
        for g in &env.gresses {
            check_parser_graph(g.parser)?;
        }
        Ok(env)
    }

    /// `enum bit<W> E { A = 1, ... }`: a type (bit<W>) and constants `E.A`.
    fn enum_decl(&mut self, e: &EnumDecl) -> Result<()> {
        let Some(TypeRef::Bit(w, _)) = &e.ty else {
            return Err(err(
                ErrorKind::Unsupported,
                e.name.span,
                format!(
                    "enum `{}` without explicit values is not supported (write \
                     `enum bit<8> {} {{ A = 1, ... }}`)",
                    e.name.name, e.name.name
                ),
            ));
        };
        check_unique(e.members.iter().map(|m| &m.0))?;
        let mut values = HashMap::new();
        for (m, v) in &e.members {
            let Some(v) = v else {
                return Err(err(
                    ErrorKind::Unsupported,
                    m.span,
                    format!(
                        "enum member `{}.{}` without an explicit value is not supported",
                        e.name.name, m.name
                    ),
                ));
            };
            values.insert(m.name.clone(), self.const_value(v, Some(*w))?);
        }
        self.typedefs.insert(e.name.name.clone(), Ty::Bits(*w));
        self.enums.insert(e.name.name.clone(), values);
        Ok(())
    }

    /// Resolve a written type.
    pub fn resolve_type(&self, t: &TypeRef) -> Result<Ty> {
        if let TypeRef::Named(id) = t {
            if let Some((_, what)) = tna::NOT_YET.iter().find(|(n, _)| *n == id.name) {
                return Err(err(
                    ErrorKind::Unsupported,
                    id.span,
                    format!("`{}` ({what}) is not supported", id.name),
                ));
            }
        }
        Ok(match t {
            TypeRef::Bit(w, _) => Ty::Bits(*w),
            TypeRef::Bool(_) => Ty::Bool,
            TypeRef::Named(id) => {
                if let Some(ty) = self.typedefs.get(&id.name) {
                    ty.clone()
                } else if let Some(is_header) = self.aggregate_kinds.get(&id.name) {
                    if *is_header {
                        Ty::Header(id.name.clone())
                    } else {
                        Ty::Struct(id.name.clone())
                    }
                } else if let Some(it) = tna::intrinsic_type(&id.name) {
                    Ty::Intrinsic(it)
                } else if id.name == tna::PACKET_IN || id.name == tna::PACKET_OUT {
                    Ty::Packet
                } else {
                    return Err(err(
                        ErrorKind::Undeclared,
                        id.span,
                        format!("undeclared type `{}`", id.name),
                    ));
                }
            }
        })
    }

    /// Structs may nest but not recursively (the PHV layout would be infinite).
    fn check_struct_cycles(
        &self,
        aggregates: &HashMap<&str, (bool, &AggregateDecl)>,
    ) -> Result<()> {
        fn visit(env: &Env, name: &str, stack: &mut Vec<String>) -> bool {
            if stack.iter().any(|s| s == name) {
                return false;
            }
            stack.push(name.to_string());
            let ok = env.structs.get(name).is_none_or(|fs| {
                fs.iter().all(|(_, t)| match t {
                    Ty::Struct(s) => visit(env, s, stack),
                    _ => true,
                })
            });
            stack.pop();
            ok
        }
        for name in self.structs.keys() {
            if !visit(self, name, &mut Vec::new()) {
                let span = aggregates
                    .get(name.as_str())
                    .map_or(Span::default(), |a| a.1.name.span);
                return Err(err(
                    ErrorKind::Type,
                    span,
                    format!("struct `{name}` contains itself"),
                ));
            }
        }
        Ok(())
    }

    /// A keyset element (a value, `value &&& mask`, or `_`) as value and mask over `w` bits.
    /// A range is refused: it can only be a whole select key (or a table key), which its
    /// callers handle before asking.
    pub fn keyset(&self, p: &Pattern, w: u16) -> Result<(u128, u128)> {
        Ok(match p {
            Pattern::Value(v) => (self.const_value(v, Some(w))?, mask(w as u32)),
            Pattern::Mask(v, m) => (self.const_value(v, Some(w))?, self.const_value(m, Some(w))?),
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

    /// Evaluate a constant expression (a literal or a declared constant) that must fit in
    /// `width` bits if given.
    pub fn const_value(&self, e: &Expr, width: Option<u16>) -> Result<u128> {
        let (v, own) = self.const_eval(e)?.ok_or_else(|| {
            err(
                ErrorKind::Type,
                e.span,
                format!("`{}` is not a constant", self.text(e.span)),
            )
        })?;
        if let (Some(w), Some(o)) = (width, own) {
            if w != o {
                return Err(width_mismatch(e.span, self.text(e.span), o, w));
            }
        }
        if let Some(w) = width {
            check_fits(v, w, e.span)?;
        }
        Ok(v)
    }

    /// A literal or named constant's value and declared width, `None` if not constant.
    fn const_eval(&self, e: &Expr) -> Result<Option<(u128, Option<u16>)>> {
        Ok(match &e.kind {
            ExprKind::Int { value, width } => Some((*value, *width)),
            ExprKind::Bool(b) => Some((*b as u128, Some(1))),
            ExprKind::Name(id) => self.consts.get(&id.name).copied(),
            ExprKind::Cast(t, inner) => match (t, self.const_eval(inner)?) {
                (TypeRef::Bit(w, _), Some((v, _))) => Some((truncate(v, *w), Some(*w))),
                _ => None,
            },
            ExprKind::Member(base, m) => match &base.kind {
                ExprKind::Name(n) => match self.enums.get(&n.name) {
                    Some(members) => {
                        let w = match self.typedefs.get(&n.name) {
                            Some(Ty::Bits(w)) => Some(*w),
                            _ => None,
                        };
                        let v = members.get(&m.name).copied().ok_or_else(|| {
                            err(
                                ErrorKind::Undeclared,
                                m.span,
                                format!("enum `{}` has no member `{}`", n.name, m.name),
                            )
                        })?;
                        Some((v, w))
                    }
                    None => None,
                },
                _ => None,
            },
            ExprKind::Slice(inner, hi, lo) => match self.const_eval(inner)? {
                Some((v, w)) => {
                    let (hi, lo) = self.slice_bounds(hi, lo, w.unwrap_or(128), e.span)?;
                    Some((truncate(v >> lo, hi - lo + 1), Some(hi - lo + 1)))
                }
                None => None,
            },
            _ => None,
        })
    }

    /// The bounds of `[hi:lo]` over a value of `width` bits, checked.
    pub fn slice_bounds(&self, hi: &Expr, lo: &Expr, width: u16, span: Span) -> Result<(u16, u16)> {
        let h = self.const_value(hi, None)?;
        let l = self.const_value(lo, None)?;
        if l > h || h >= width as u128 {
            return Err(err(
                ErrorKind::Type,
                span,
                format!(
                    "slice [{h}:{l}] is outside bit<{width}> (bits {}..0)",
                    width - 1
                ),
            ));
        }
        Ok((h as u16, l as u16))
    }

    /// The source text of a span.
    pub fn text(&self, s: Span) -> &str {
        self.source.get(s.start..s.end).unwrap_or("")
    }

    /// Fields of a header type in wire order.
    pub fn header_fields(&self, ty: &str) -> &[(String, u16)] {
        self.headers.get(ty).map_or(&[], |v| v.as_slice())
    }

    /// The headers inside a struct value, in declaration order (nested structs flattened).
    pub fn struct_headers(&self, key: &FieldKey, name: &str, ty: &str) -> Vec<HeaderRef> {
        let mut out = Vec::new();
        for (fname, fty) in self.structs.get(ty).into_iter().flatten() {
            let k = key.child(fname);
            let n = format!("{name}.{fname}");
            match fty {
                Ty::Header(h) => out.push(HeaderRef {
                    key: k,
                    name: n,
                    ty: h.clone(),
                }),
                Ty::Struct(s) => out.extend(self.struct_headers(&k, &n, s)),
                _ => {}
            }
        }
        out
    }
}

fn check_unique<'x>(names: impl Iterator<Item = &'x Ident>) -> Result<()> {
    let mut seen = HashSet::new();
    for n in names {
        if !seen.insert(&n.name) {
            return Err(err(
                ErrorKind::Duplicate,
                n.span,
                format!("`{}` is declared twice", n.name),
            ));
        }
    }
    Ok(())
}

fn truncate(v: u128, w: u16) -> u128 {
    v & mask(w as u32)
}

fn check_fits(v: u128, w: u16, span: Span) -> Result<()> {
    if truncate(v, w) != v {
        return Err(err(
            ErrorKind::Type,
            span,
            format!("constant {v} does not fit in bit<{w}>"),
        ));
    }
    Ok(())
}

fn width_mismatch(span: Span, what: &str, have: u16, want: u16) -> CompileError {
    err(
        ErrorKind::Type,
        span,
        format!("`{what}` is bit<{have}> but bit<{want}> is expected (use a cast)"),
    )
}

/// Find `Switch(pipe) main;` and the `Pipeline` it names, and bind the six blocks by position.
fn find_pipeline(program: &Program) -> Result<[GressBlocks<'_>; 2]> {
    let instances: Vec<&Instantiation> = program
        .decls
        .iter()
        .filter_map(|d| match d {
            Decl::Instance(i) => Some(i),
            _ => None,
        })
        .collect();
    for i in &instances {
        if i.type_name.name != tna::PIPELINE && i.type_name.name != tna::SWITCH {
            return Err(err(
                ErrorKind::Unsupported,
                i.type_name.span,
                format!(
                    "top-level instance of `{}` is not supported",
                    i.type_name.name
                ),
            ));
        }
    }
    let switch = instances
        .iter()
        .find(|i| i.type_name.name == tna::SWITCH)
        .ok_or_else(|| {
            err(
                ErrorKind::Semantic,
                Span::default(),
                "no `Switch(pipe) main;` package",
            )
        })?;
    let pipe_name = match switch.args.as_slice() {
        [Expr {
            kind: ExprKind::Name(n),
            ..
        }] => n,
        _ => {
            return Err(err(
                ErrorKind::Unsupported,
                switch.span,
                "`Switch` takes exactly one pipeline (multi-pipe programs are not supported)",
            ))
        }
    };
    let pipe = instances
        .iter()
        .find(|i| i.type_name.name == tna::PIPELINE && i.name.name == pipe_name.name)
        .ok_or_else(|| {
            err(
                ErrorKind::Undeclared,
                pipe_name.span,
                format!("no `Pipeline(...) {};` declared", pipe_name.name),
            )
        })?;
    if pipe.args.len() != 6 {
        return Err(err(
            ErrorKind::Semantic,
            pipe.span,
            format!(
                "`Pipeline` takes 6 blocks (ingress parser, control, deparser, egress parser, \
                 control, deparser); {} given",
                pipe.args.len()
            ),
        ));
    }
    let mut parsers = Vec::new();
    let mut controls = Vec::new();
    for (arg, (gress, role)) in pipe.args.iter().zip(tna::PIPELINE_ROLES) {
        let name = match &arg.kind {
            ExprKind::Call(callee, a) if a.is_empty() => match &callee.kind {
                ExprKind::Name(n) => Some(n),
                _ => None,
            },
            _ => None,
        }
        .ok_or_else(|| {
            err(
                ErrorKind::Semantic,
                arg.span,
                "a `Pipeline` argument must be `BlockName()`",
            )
        })?;
        let what = format!(
            "the {} {}",
            tna::gress_name(gress),
            match role {
                Role::Parser => "parser",
                Role::Control => "control",
                Role::Deparser => "deparser",
            }
        );
        let found = program.decls.iter().find_map(|d| match d {
            Decl::Parser(p) if p.name.name == name.name => Some(Ok(p)),
            Decl::Control(c) if c.name.name == name.name => Some(Err(c)),
            _ => None,
        });
        match (role, found) {
            (Role::Parser, Some(Ok(p))) => parsers.push(p),
            (Role::Control | Role::Deparser, Some(Err(c))) => controls.push(c),
            (_, None) => {
                return Err(err(
                    ErrorKind::Undeclared,
                    name.span,
                    format!("undeclared block `{}`", name.name),
                ))
            }
            _ => {
                return Err(err(
                    ErrorKind::Semantic,
                    name.span,
                    format!("`{}` cannot be {what}", name.name),
                ))
            }
        }
    }
    let ([ip, ep], [ic, id, ec, ed]) = (
        <[&ParserDecl; 2]>::try_from(parsers).map_err(|_| bad_pipeline(pipe.span))?,
        <[&ControlDecl; 4]>::try_from(controls).map_err(|_| bad_pipeline(pipe.span))?,
    );
    Ok([
        GressBlocks {
            gress: Gress::Ingress,
            parser: ip,
            control: ic,
            deparser: id,
        },
        GressBlocks {
            gress: Gress::Egress,
            parser: ep,
            control: ec,
            deparser: ed,
        },
    ])
}

fn bad_pipeline(span: Span) -> CompileError {
    err(
        ErrorKind::Semantic,
        span,
        "`Pipeline` blocks are not parser, control, deparser twice",
    )
}

/// Every parser needs a `start` state, a transition out of each state to a declared state,
/// and every state reachable from `start`.
fn check_parser_graph(p: &ParserDecl) -> Result<()> {
    check_unique(p.states.iter().map(|s| &s.name))?;
    let index: HashMap<&str, usize> = p
        .states
        .iter()
        .enumerate()
        .map(|(i, s)| (s.name.name.as_str(), i))
        .collect();
    for s in &p.states {
        if s.name.name == "accept" || s.name.name == "reject" {
            return Err(err(
                ErrorKind::Semantic,
                s.name.span,
                format!(
                    "`{}` is a built-in state and cannot be declared",
                    s.name.name
                ),
            ));
        }
    }
    let start = *index.get("start").ok_or_else(|| {
        err(
            ErrorKind::Semantic,
            p.name.span,
            format!("parser `{}` has no `start` state", p.name.name),
        )
    })?;
    let mut seen = vec![false; p.states.len()];
    let mut queue = VecDeque::from([start]);
    seen[start] = true;
    while let Some(i) = queue.pop_front() {
        let s = &p.states[i];
        let targets: Vec<&Ident> = match &s.transition {
            None => {
                return Err(err(
                    ErrorKind::Semantic,
                    s.name.span,
                    format!("state `{}` has no transition", s.name.name),
                ))
            }
            Some(TransitionDecl::Direct(n)) => vec![n],
            Some(TransitionDecl::Select { cases, .. }) => cases.iter().map(|c| &c.next).collect(),
        };
        for t in targets {
            if t.name == "accept" || t.name == "reject" {
                continue;
            }
            let j = *index.get(t.name.as_str()).ok_or_else(|| {
                err(
                    ErrorKind::Undeclared,
                    t.span,
                    format!("undeclared parser state `{}`", t.name),
                )
            })?;
            if !seen[j] {
                seen[j] = true;
                queue.push_back(j);
            }
        }
    }
    if let Some(i) = seen.iter().position(|s| !s) {
        let n = &p.states[i].name;
        return Err(err(
            ErrorKind::Semantic,
            n.span,
            format!("parser state `{}` is unreachable from `start`", n.name),
        ));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Names inside a block

/// Identity of a PHV field or header within a gress: the type of the block parameter it hangs
/// off (not the parameter's name, which each block may choose freely) and the member path.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FieldKey {
    /// Root type name.
    pub root: String,
    /// Member path below the root.
    pub path: Vec<String>,
}

impl FieldKey {
    /// The key of a member below this one.
    pub fn child(&self, name: &str) -> FieldKey {
        let mut path = self.path.clone();
        path.push(name.to_string());
        FieldKey {
            root: self.root.clone(),
            path,
        }
    }
}

/// A header instance.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeaderRef {
    /// Identity.
    pub key: FieldKey,
    /// Display name (`hdr.ipv4`).
    pub name: String,
    /// Header type name.
    pub ty: String,
}

impl HeaderRef {
    /// The key of the header's validity bit.
    pub fn valid_key(&self) -> FieldKey {
        self.key.child("$valid")
    }
}

/// A scalar field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldRef {
    /// Identity.
    pub key: FieldKey,
    /// Display name (`hdr.ipv4.ttl`).
    pub name: String,
    /// Width in bits.
    pub width: u16,
    /// The chip signal, for intrinsic metadata.
    pub intrinsic: Option<Intrinsic>,
    /// The header holding the field, if any (the whole header is then allocated).
    pub header: Option<HeaderRef>,
}

/// What a dotted name denotes.
#[derive(Clone, Debug)]
pub enum Place {
    /// A scalar field.
    Field(FieldRef),
    /// A header instance.
    Header(HeaderRef),
    /// A user struct value.
    Struct {
        /// Identity.
        key: FieldKey,
        /// Display name.
        name: String,
        /// Struct type.
        ty: String,
    },
    /// A whole intrinsic metadata parameter.
    Intrinsic(String),
    /// A `packet_in`/`packet_out` parameter.
    Packet,
}

/// An operand: a field, a constant or an action parameter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    /// A PHV field.
    Field(Box<FieldRef>),
    /// A constant.
    Const(u128),
    /// Action parameter `index`.
    Param(u8),
    /// Bits `hi ..= lo` of a field.
    Slice(Box<FieldRef>, u16, u16),
}

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

/// A local variable: a metadata field of its own.
#[derive(Clone, Debug)]
struct Local {
    field: FieldRef,
    /// Where it is declared (uses before this are errors).
    declared_at: usize,
}

/// Names visible in one block: its parameters, local variables and, inside an action, the
/// action's parameters.
#[derive(Clone)]
pub struct Scope<'e, 'a> {
    env: &'e Env<'a>,
    params: HashMap<String, (Ty, Direction)>,
    action_params: Vec<(String, u16)>,
    locals: HashMap<String, Local>,
}

impl<'e, 'a> Scope<'e, 'a> {
    /// The scope of a parser or control with these parameters in `gress`.
    pub fn new(env: &'e Env<'a>, params: &[Param], gress: Gress) -> Result<Self> {
        let mut map = HashMap::new();
        check_unique(params.iter().map(|p| &p.name))?;
        for p in params {
            let ty = env.resolve_type(&p.ty)?;
            if let Ty::Intrinsic(it) = ty {
                if it.gress != gress {
                    return Err(err(
                        ErrorKind::Type,
                        p.ty.span(),
                        format!(
                            "`{}` belongs to {}, not to this {} block",
                            it.name,
                            tna::gress_name(it.gress),
                            tna::gress_name(gress)
                        ),
                    ));
                }
            }
            map.insert(p.name.name.clone(), (ty, p.dir));
        }
        Ok(Scope {
            env,
            params: map,
            action_params: Vec::new(),
            locals: HashMap::new(),
        })
    }

    /// Declare a local variable `bit<N> name` (or `bool`) owned by `owner` (the control or
    /// action, for its display name `owner.name`).
    pub fn declare_local(&mut self, owner: &str, v: &VarDecl) -> Result<FieldRef> {
        let width = match self.env.resolve_type(&v.ty)? {
            Ty::Bits(w) => w,
            Ty::Bool => 1,
            _ => {
                return Err(err(
                    ErrorKind::Unsupported,
                    v.ty.span(),
                    "local variables of header or struct type are not supported (only bit<N> \
                     and bool)",
                ))
            }
        };
        let n = &v.name.name;
        if self.params.contains_key(n)
            || self.locals.contains_key(n)
            || self.action_params.iter().any(|p| &p.0 == n)
        {
            return Err(err(
                ErrorKind::Duplicate,
                v.name.span,
                format!("`{n}` is declared twice"),
            ));
        }
        let field = FieldRef {
            key: FieldKey {
                root: "$local".into(),
                path: vec![owner.to_string(), n.clone()],
            },
            name: format!("{owner}.{n}"),
            width,
            intrinsic: None,
            header: None,
        };
        self.locals.insert(
            n.clone(),
            Local {
                field: field.clone(),
                declared_at: v.span.start,
            },
        );
        Ok(field)
    }

    /// Whether `name` is an extern instance or other non-field the caller resolves itself.
    pub fn is_name_declared(&self, name: &str) -> bool {
        self.params.contains_key(name)
            || self.locals.contains_key(name)
            || self.action_params.iter().any(|p| p.0 == name)
    }

    /// The scope inside an action: the block's names plus the action's parameters.
    pub fn with_action_params(&self, params: &[Param]) -> Result<Scope<'e, 'a>> {
        check_unique(params.iter().map(|p| &p.name))?;
        let mut action_params = Vec::new();
        for p in params {
            if p.dir != Direction::None {
                return Err(err(
                    ErrorKind::Unsupported,
                    p.name.span,
                    "directed action parameters are not supported (action data has no direction)",
                ));
            }
            let w = match self.env.resolve_type(&p.ty)? {
                Ty::Bits(w) => w,
                Ty::Bool => 1,
                _ => {
                    return Err(err(
                        ErrorKind::Type,
                        p.ty.span(),
                        "action parameters must be bit<N> or bool",
                    ))
                }
            };
            action_params.push((p.name.name.clone(), w));
        }
        Ok(Scope {
            env: self.env,
            params: self.params.clone(),
            action_params,
            locals: self.locals.clone(),
        })
    }

    /// The environment.
    pub fn env(&self) -> &'e Env<'a> {
        self.env
    }

    /// Parameter widths of the current action.
    pub fn action_params(&self) -> &[(String, u16)] {
        &self.action_params
    }

    /// Whether `name` is a block parameter of type `packet_in`/`packet_out`.
    pub fn is_packet(&self, e: &Expr) -> bool {
        matches!(&e.kind, ExprKind::Name(n) if matches!(self.params.get(&n.name), Some((Ty::Packet, _))))
    }

    /// Resolve a dotted name.
    pub fn place(&self, e: &Expr) -> Result<Place> {
        let path = e.path().ok_or_else(|| {
            err(
                ErrorKind::Type,
                e.span,
                format!("`{}` is not a name", self.env.text(e.span)),
            )
        })?;
        let root = path[0];
        if let Some(l) = self.locals.get(&root.name) {
            if root.span.start < l.declared_at {
                return Err(err(
                    ErrorKind::Undeclared,
                    root.span,
                    format!("`{}` is used before its declaration", root.name),
                ));
            }
            if let Some(m) = path.get(1) {
                return Err(err(
                    ErrorKind::Undeclared,
                    m.span,
                    format!(
                        "`{}` is bit<{}> and has no field `{}`",
                        root.name, l.field.width, m.name
                    ),
                ));
            }
            return Ok(Place::Field(l.field.clone()));
        }
        let (ty, _) = self.params.get(&root.name).ok_or_else(|| {
            err(
                ErrorKind::Undeclared,
                root.span,
                format!("undeclared name `{}`", root.name),
            )
        })?;
        let root_ty = match ty {
            Ty::Header(t) | Ty::Struct(t) => t.clone(),
            Ty::Intrinsic(it) => it.name.to_string(),
            _ => String::new(),
        };
        let mut key = FieldKey {
            root: root_ty,
            path: Vec::new(),
        };
        let mut name = root.name.clone();
        let mut ty = ty.clone();
        let mut header: Option<HeaderRef> = None;
        for m in &path[1..] {
            let next_ty = match &ty {
                Ty::Struct(s) => self
                    .env
                    .structs
                    .get(s)
                    .and_then(|fs| fs.iter().find(|f| f.0 == m.name))
                    .map(|f| f.1.clone()),
                Ty::Header(h) => self
                    .env
                    .header_fields(h)
                    .iter()
                    .find(|f| f.0 == m.name)
                    .map(|f| Ty::Bits(f.1)),
                Ty::Intrinsic(it) => it.field(&m.name).map(|(w, _)| Ty::Bits(w)),
                _ => None,
            };
            let Some(next_ty) = next_ty else {
                let owner = match &ty {
                    Ty::Struct(s) | Ty::Header(s) => format!("`{s}`"),
                    Ty::Intrinsic(it) => format!("`{}` (as supported by this chip)", it.name),
                    _ => format!("`{name}`"),
                };
                return Err(err(
                    ErrorKind::Undeclared,
                    m.span,
                    format!("{owner} has no field `{}`", m.name),
                ));
            };
            if let Ty::Header(h) = &ty {
                header = Some(HeaderRef {
                    key: key.clone(),
                    name: name.clone(),
                    ty: h.clone(),
                });
            }
            key = key.child(&m.name);
            name = format!("{name}.{}", m.name);
            ty = next_ty;
        }
        let intrinsic = match self.params.get(&root.name) {
            Some((Ty::Intrinsic(it), _)) if path.len() == 2 => it.field(&path[1].name).map(|f| f.1),
            _ => None,
        };
        Ok(match ty {
            Ty::Bits(_) | Ty::Bool => Place::Field(FieldRef {
                key,
                name,
                width: ty.scalar_width().unwrap_or(1),
                intrinsic,
                header,
            }),
            Ty::Header(h) => Place::Header(HeaderRef { key, name, ty: h }),
            Ty::Struct(s) => Place::Struct { key, name, ty: s },
            Ty::Intrinsic(_) => Place::Intrinsic(name),
            Ty::Packet => Place::Packet,
        })
    }

    /// Resolve a header expression (`hdr.ipv4`).
    pub fn header(&self, e: &Expr) -> Result<HeaderRef> {
        match self.place(e)? {
            Place::Header(h) => Ok(h),
            _ => Err(err(
                ErrorKind::Type,
                e.span,
                format!("`{}` is not a header", self.env.text(e.span)),
            )),
        }
    }

    /// Resolve a field that is read.
    pub fn field(&self, e: &Expr) -> Result<FieldRef> {
        match self.place(e)? {
            Place::Field(f) => Ok(f),
            _ => Err(err(
                ErrorKind::Type,
                e.span,
                format!("`{}` is not a field", self.env.text(e.span)),
            )),
        }
    }

    /// Resolve a field that is written: intrinsic inputs are read-only.
    pub fn lvalue(&self, e: &Expr) -> Result<FieldRef> {
        let f = self.field(e)?;
        if f.intrinsic.is_some_and(|i| !tna::is_writable(i)) {
            return Err(err(
                ErrorKind::ReadOnly,
                e.span,
                format!("{} is read-only metadata", f.name),
            ));
        }
        Ok(f)
    }

    /// Resolve a written field or field slice (`f[7:0] = ...`): the field and the slice.
    pub fn lvalue_slice(&self, e: &Expr) -> Result<(FieldRef, Option<(u16, u16)>)> {
        if let ExprKind::Slice(inner, hi, lo) = &e.kind {
            let (f, outer) = self.lvalue_slice(inner)?;
            let base = outer.map_or(0, |(_, l)| l);
            let w = outer.map_or(f.width, |(h, l)| h - l + 1);
            let (h, l) = self.env.slice_bounds(hi, lo, w, e.span)?;
            return Ok((f, Some((h + base, l + base))));
        }
        Ok((self.lvalue(e)?, None))
    }

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
        let zero = Value::Const(0);
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
            ExprKind::Unary(UnOp::BitNot, x) => {
                let a = self.operand(x)?;
                self.coerce(&a, w, x.span)?;
                (
                    AluOp::Not,
                    a,
                    Typed {
                        value: zero,
                        width: None,
                        narrowed: false,
                    },
                )
            }
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
            _ => {
                let a = self.operand(rhs)?;
                self.coerce(&a, w, rhs.span)?;
                (
                    AluOp::Set,
                    a,
                    Typed {
                        value: zero,
                        width: None,
                        narrowed: false,
                    },
                )
            }
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
