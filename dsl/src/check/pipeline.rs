//! The architecture's shape: `Switch(pipe) main;` and the `Pipeline` it names bind the six
//! blocks of the two gresses by position, and every parser state is reachable, with a
//! transition out to a declared state.

use std::collections::{HashMap, VecDeque};

use pipelines::program::Gress;

use super::rules::check_unique;
use crate::ast::*;
use crate::error::{err, CompileError, ErrorKind, Result};
use crate::tna::{self, Role};

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

/// Find `Switch(pipe) main;` and the `Pipeline` it names, and bind the six blocks by position.
pub(super) fn find_pipeline(program: &Program) -> Result<[GressBlocks<'_>; 2]> {
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
            // At the pipeline the package would name, if there is one.
            let pipeline = instances.iter().find(|i| i.type_name.name == tna::PIPELINE);
            err(
                ErrorKind::Semantic,
                pipeline.map_or(Span::default(), |p| p.span),
                "the program has no `Switch(pipe) main;` package",
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
                format!(
                    "the program declares no `Pipeline(...) {};`",
                    pipe_name.name
                ),
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

/// The error for a `Pipeline` whose blocks are not in its order.
fn bad_pipeline(span: Span) -> CompileError {
    err(
        ErrorKind::Semantic,
        span,
        "`Pipeline` blocks are not parser, control, deparser twice",
    )
}

/// Every parser needs a `start` state, a transition out of each state to a declared state,
/// and every state reachable from `start`.
pub(super) fn check_parser_graph(p: &ParserDecl) -> Result<()> {
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
