//! Lowering of a match-action control: its actions, tables and apply block, and the externs
//! (registers and `RegisterAction`s, meters, counters, hashes, random numbers, published queue
//! depths) its actions drive.
//!
//! One [`ControlLowering`] holds what the control has so far (the program's control, the
//! names, the extern instances, the source positions errors point at); each part of the
//! language has a module of its own that adds to it:
//! - `externs`: the extern instances the control declares, and the arrays and
//!   stateful-ALU programs they become;
//! - `extern_calls`: calls of them in actions;
//! - `actions`: action bodies, under the VLIW rule;
//! - `apply`: the apply block as a graph of tables and gateways;
//! - `tables`: table declarations and their applies;
//! - `annotations`: a table's or an action's `@name`, a table's stage pragmas;
//! - `ownership`: one table per extern array, and arrays no table drives dropped.
//!
//! Externs follow the pipe's rules (see [`pipelines::program::ExternCall`]):
//! - an extern call is part of an action and, like the action's VLIW operations, reads the
//!   PHV as it was before the action;
//! - an extern array (register, meter, counter) and a hash unit live in the stage of the one
//!   table whose actions drive it, so each is driven by exactly one table; a register array in
//!   particular gets one read-modify-write per packet ("accessed twice in one pass" otherwise);
//! - arrays no table drives are dropped (they would never be touched).

use std::collections::{HashMap, HashSet};

use pipelines::program::*;
use pipelines::spec::PipeSpec;

use crate::alloc::StagePin;
use crate::ast::{self, Span, Stmt};
use crate::check::{Env, GressBlocks, Scope};
use crate::error::{err, ErrorKind, Result};
use crate::layout::LayoutBuilder;
use crate::tna;

mod actions;
mod annotations;
mod apply;
mod extern_calls;
mod externs;
mod ownership;
mod tables;

/// A lowered control, before renumbering.
pub(crate) struct LoweredControl {
    /// The control (all stages 0).
    pub control: ControlProgram,
    /// Where each table is declared (or the statement a synthesised one runs).
    pub table_spans: Vec<Span>,
    /// Each table's stage pragmas.
    pub table_pins: Vec<Vec<StagePin>>,
    /// Where each table's const entries are written, in order.
    pub const_entry_spans: Vec<Vec<Span>>,
    /// Where each gateway's `if` is.
    pub gateway_spans: Vec<Span>,
}

/// A declared extern instance: what its calls need to know of it (held here, beside the
/// instances by name, as declarations, calls and tables all read it).
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
    /// The TNA type the instance was declared with, for errors.
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

/// Operations and extern calls of one statement (or of a whole action).
#[derive(Default)]
struct Part {
    ops: Vec<Op>,
    externs: Vec<(ExternCall, Span)>,
}

/// One control being lowered: the scope its names resolve in, the layout it adds fields to,
/// and everything lowered so far.
pub(crate) struct ControlLowering<'e, 'a, 'l> {
    scope: Scope<'e, 'a>,
    gress: Gress,
    decl: &'a ast::ControlDecl,
    layout: &'l mut LayoutBuilder,
    spec: &'l PipeSpec,
    control: ControlProgram,
    table_spans: Vec<Span>,
    table_pins: Vec<Vec<StagePin>>,
    const_entry_spans: Vec<Vec<Span>>,
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
    /// The `adjust_byte_count` of each meter array's first `execute` (`None`: it gave none):
    /// every call must give the same, as a meter table has one adjustment.
    meter_adjust_args: HashMap<MeterId, Option<i64>>,
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

impl<'e, 'a, 'l> ControlLowering<'e, 'a, 'l> {
    /// Declare the control's locals, externs and actions (actions are lowered up front, as
    /// tables and applies name them) and reserve its table names.
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
            table_pins: Vec::new(),
            const_entry_spans: Vec::new(),
            apply_spans: Vec::new(),
            gateway_spans: Vec::new(),
            actions: HashMap::new(),
            extern_spans: Vec::new(),
            applied: HashMap::new(),
            names: HashSet::new(),
            externs: HashMap::new(),
            direct_owner: HashMap::new(),
            meter_adjust_args: HashMap::new(),
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
            let owner = cl.annotated(&a.name, &a.annotations, false)?.name;
            if cl.names.contains(&owner) {
                return Err(err(
                    ErrorKind::Duplicate,
                    a.name.span,
                    format!("the control-plane name {owner} is given twice"),
                ));
            }
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
        let mut tables = std::collections::HashSet::new();
        for t in &decl.tables {
            if cl.actions.contains_key(&t.name.name)
                || cl.externs.contains_key(&t.name.name)
                || !tables.insert(&t.name.name)
            {
                return Err(err(
                    ErrorKind::Duplicate,
                    t.name.span,
                    format!("`{}` is declared twice", t.name.name),
                ));
            }
            let name = cl.annotated(&t.name, &t.annotations, true)?.name;
            if !cl.names.insert(name.clone()) {
                return Err(err(
                    ErrorKind::Duplicate,
                    t.name.span,
                    format!("the control-plane name {name} is given twice"),
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
            table_pins: self.table_pins,
            const_entry_spans: self.const_entry_spans,
            gateway_spans: self.gateway_spans,
        })
    }
}
