//! The program's declarations, checked once: types, typedefs, constants, enums, header and
//! struct types, and the `Pipeline` package ([`Env::build`]); constant expressions are
//! evaluated here.

use std::collections::{HashMap, HashSet};

use pipelines::phv::mask;

use super::names::{FieldKey, HeaderRef};
use super::pipeline::{check_parser_graph, find_pipeline, GressBlocks};
use super::rules::{check_fits, check_unique, truncate, width_mismatch, Ty};
use crate::ast::*;
use crate::error::{err, ErrorKind, Result};
use crate::include::Source;
use crate::tna::{self};

/// Everything declared at top level, checked.
pub struct Env<'a> {
    /// The program's text (its includes expanded), for quoting expressions in messages.
    pub source: &'a Source,
    consts: HashMap<String, (u128, Option<u16>)>,
    /// Header and struct type names (true for headers), known before their fields resolve.
    aggregate_kinds: HashMap<String, bool>,
    typedefs: HashMap<String, Ty>,
    headers: HashMap<String, Vec<(String, u16)>>,
    pub(super) structs: HashMap<String, Vec<(String, Ty)>>,
    /// Serializable enums: name → member values (their width is in `typedefs`).
    enums: HashMap<String, HashMap<String, u128>>,
    /// Ingress then egress.
    pub gresses: [GressBlocks<'a>; 2],
}

impl<'a> Env<'a> {
    /// Check the top-level declarations and find the pipeline's blocks.
    pub fn build(program: &'a Program, source: &'a Source) -> Result<Env<'a>> {
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
        // A declaration of an intrinsic type (tna.p4 has them) is checked, not declared: the
        // built-in stays the type.
        let intrinsic = |a: &AggregateDecl| tna::intrinsic_type(&a.name.name).is_some();
        let aggregates: HashMap<&str, (bool, &AggregateDecl)> = program
            .decls
            .iter()
            .filter_map(|d| match d {
                Decl::Header(a) if !intrinsic(a) => Some((a.name.name.as_str(), (true, a))),
                Decl::Struct(a) if !intrinsic(a) => Some((a.name.name.as_str(), (false, a))),
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
                Decl::Header(a) | Decl::Struct(a) if intrinsic(a) => env.check_intrinsic(a)?,
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

    /// A declaration of a built-in intrinsic type must list its fields, in order, with their
    /// widths, as the compiler has them ([`tna::INTRINSIC_TYPES`]).
    fn check_intrinsic(&self, a: &AggregateDecl) -> Result<()> {
        let Some(it) = tna::intrinsic_type(&a.name.name) else {
            return Ok(());
        };
        let builtin: Vec<String> = it
            .fields
            .iter()
            .map(|(n, w, _)| format!("bit<{w}> {n}"))
            .collect();
        let differs = |span, what: String| {
            err(
                ErrorKind::Type,
                span,
                format!(
                    "`{}` is built in, as {{ {} }}: {what}",
                    it.name,
                    builtin.join("; ")
                ),
            )
        };
        for (k, f) in a.fields.iter().enumerate() {
            let Some(&(name, width, _)) = it.fields.get(k) else {
                return Err(differs(
                    f.name.span,
                    format!("it has no field `{}`", f.name.name),
                ));
            };
            if f.name.name != name {
                return Err(differs(
                    f.name.span,
                    format!("field {} is `{name}`, not `{}`", k + 1, f.name.name),
                ));
            }
            if self.resolve_type(&f.ty)? != Ty::Bits(width) {
                return Err(differs(f.ty.span(), format!("`{name}` is bit<{width}>")));
            }
        }
        match it.fields.get(a.fields.len()) {
            Some((name, ..)) => Err(differs(a.name.span, format!("field `{name}` is missing"))),
            None => Ok(()),
        }
    }

    /// `enum bit<W> E { A = 1, ... }`: a type (`bit<W>`) and constants `E.A`.
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
    pub(super) fn const_eval(&self, e: &Expr) -> Result<Option<(u128, Option<u16>)>> {
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
        self.source.text.get(s.start..s.end).unwrap_or("")
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
