//! The names visible in one block (its parameters, local variables and, in an action, the
//! action's parameters), and what each dotted name resolves to.

use std::collections::HashMap;

use pipelines::program::Gress;

use super::env::Env;
use super::names::{FieldKey, FieldRef, HeaderRef, Place};
use super::rules::{check_unique, Ty};
use crate::ast::*;
use crate::error::{err, ErrorKind, Result};
use crate::tna::{self};

/// A local variable: a metadata field of its own.
#[derive(Clone, Debug)]
pub(super) struct Local {
    field: FieldRef,
    /// Where it is declared (uses before this are errors).
    declared_at: usize,
}

/// Names visible in one block: its parameters, local variables and, inside an action, the
/// action's parameters.
#[derive(Clone)]
pub struct Scope<'e, 'a> {
    pub(super) env: &'e Env<'a>,
    pub(super) params: HashMap<String, (Ty, Direction)>,
    pub(super) action_params: Vec<(String, u16)>,
    pub(super) locals: HashMap<String, Local>,
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
}
