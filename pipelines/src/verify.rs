//! The verifier: checks a program against the chip's pipe before it is loaded.
//!
//! The compiler should only produce valid programs, but the program format is also read
//! from files (`asic compile --emit ir` output may be edited), so the pipe never trusts it:
//! every index is in range, every field fits its containers, every control-flow path runs
//! forward through the stages the chip has, and per-stage counts stay within the profile.
//! After verification the executing code may index without checks.

use crate::program::{
    Cond, ControlProgram, GressProgram, Next, Node, Operand, ParserOp, PhvLayout, Program,
    SelectKey, TableNext, Transition,
};
use crate::spec::PipeSpec;
use std::fmt;

/// A program that does not fit or is malformed, with the place it went wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifyError {
    /// Where, e.g. `ingress.control.tables[2] (Ingress.ipv4_lpm)`.
    pub place: String,
    /// What is wrong.
    pub reason: String,
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.place, self.reason)
    }
}

impl std::error::Error for VerifyError {}

/// Verify both gresses of a program.
pub fn verify(p: &Program, spec: &PipeSpec) -> Result<(), VerifyError> {
    verify_gress("ingress", &p.ingress, spec)?;
    verify_gress("egress", &p.egress, spec)
}

struct Ctx<'a> {
    gress: &'a str,
}

impl Ctx<'_> {
    fn err<T>(
        &self,
        place: impl fmt::Display,
        reason: impl Into<String>,
    ) -> Result<T, VerifyError> {
        Err(VerifyError {
            place: format!("{}.{}", self.gress, place),
            reason: reason.into(),
        })
    }
}

/// Verify one gress.
pub fn verify_gress(gress: &str, g: &GressProgram, spec: &PipeSpec) -> Result<(), VerifyError> {
    let cx = Ctx { gress };
    verify_phv(&cx, &g.phv, spec)?;
    let nf = g.phv.fields.len();
    let field_ok = |f: u16| (f as usize) < nf;
    let nh = g.phv.headers.len();

    // Parser.
    let ns = g.parser.states.len();
    if ns == 0 || g.parser.start as usize >= ns {
        return cx.err("parser", "has no start state");
    }
    let next_ok = |n: &Next| !matches!(n, Next::State(s) if *s as usize >= ns);
    for (i, st) in g.parser.states.iter().enumerate() {
        let place = format!("parser.states[{i}] ({})", st.name);
        for op in &st.ops {
            let ok = match *op {
                ParserOp::Extract(h) => (h as usize) < nh,
                ParserOp::Advance(bits) => bits % 8 == 0,
                ParserOp::SetConst { field, .. } => field_ok(field),
            };
            if !ok {
                return cx.err(&place, format!("bad operation {op:?}"));
            }
        }
        match &st.transition {
            Transition::Direct(n) if !next_ok(n) => {
                return cx.err(&place, "transition to a missing state")
            }
            Transition::Direct(_) => {}
            Transition::Select {
                keys,
                cases,
                default,
            } => {
                let mut width = 0u32;
                for k in keys {
                    width += match *k {
                        SelectKey::Field { field, hi, lo } => {
                            if !field_ok(field)
                                || lo > hi
                                || hi >= g.phv.fields[field as usize].width
                            {
                                return cx.err(&place, format!("bad select key {k:?}"));
                            }
                            (hi - lo + 1) as u32
                        }
                        SelectKey::Lookahead { width, .. } => width as u32,
                    };
                }
                if width == 0 || width > 128 {
                    return cx.err(
                        &place,
                        format!("select key is {width} bits (1 to 128 allowed)"),
                    );
                }
                if !next_ok(default) || cases.iter().any(|c| !next_ok(&c.next)) {
                    return cx.err(&place, "select goes to a missing state");
                }
            }
        }
    }

    verify_control(&cx, &g.control, &g.phv, spec)?;

    // Deparser.
    for &h in &g.deparser.emit {
        if h as usize >= nh {
            return cx.err("deparser", format!("emits missing header #{h}"));
        }
    }
    for c in &g.deparser.checksums {
        if !field_ok(c.dst) || g.phv.fields[c.dst as usize].width != 16 {
            return cx.err("deparser", "a checksum must be written to a 16-bit field");
        }
        if c.sources.iter().any(|&f| !field_ok(f)) || c.when_valid as usize >= nh {
            return cx.err("deparser", "a checksum reads a missing field or header");
        }
    }
    Ok(())
}

fn verify_phv(cx: &Ctx, phv: &PhvLayout, spec: &PipeSpec) -> Result<(), VerifyError> {
    for (i, f) in phv.fields.iter().enumerate() {
        let place = format!("phv.fields[{i}] ({})", f.name);
        if f.width == 0 || f.width > 128 {
            return cx.err(&place, format!("width {} (1 to 128 allowed)", f.width));
        }
        let mut bits = 0u16;
        for s in &f.slices {
            let Some(cw) = spec.phv.width(s.container) else {
                return cx.err(
                    &place,
                    format!(
                        "container {} beyond the chip's {}",
                        s.container,
                        spec.phv.total()
                    ),
                );
            };
            if s.width == 0 || s.lsb as u16 + s.width as u16 > cw as u16 {
                return cx.err(
                    &place,
                    format!("slice {s:?} does not fit a {cw}-bit container"),
                );
            }
            bits += s.width as u16;
        }
        if bits != f.width {
            return cx.err(
                &place,
                format!("slices hold {bits} bits, the field has {}", f.width),
            );
        }
    }
    let nf = phv.fields.len();
    for (i, h) in phv.headers.iter().enumerate() {
        let place = format!("phv.headers[{i}] ({})", h.name);
        if h.fields.iter().chain([&h.valid]).any(|&f| f as usize >= nf) {
            return cx.err(&place, "names a missing field");
        }
        let bits: u32 = h
            .fields
            .iter()
            .map(|&f| phv.fields[f as usize].width as u32)
            .sum();
        if bits % 8 != 0 {
            return cx.err(
                &place,
                format!("{bits} bits is not a whole number of bytes"),
            );
        }
    }
    for (which, f) in &phv.intrinsics {
        if *f as usize >= nf {
            return cx.err(
                "phv.intrinsics",
                format!("{which:?} bound to a missing field"),
            );
        }
    }
    Ok(())
}

fn verify_control(
    cx: &Ctx,
    c: &ControlProgram,
    phv: &PhvLayout,
    spec: &PipeSpec,
) -> Result<(), VerifyError> {
    if c.stages > spec.stages {
        return cx.err(
            "control",
            format!("uses {} stages, the chip has {}", c.stages, spec.stages),
        );
    }
    let nf = phv.fields.len();
    let (nt, na, ng) = (c.tables.len(), c.actions.len(), c.gateways.len());
    let node_stage = |n: Node| -> Option<u16> {
        match n {
            Node::Table(t) => c.tables.get(t as usize).map(|t| t.stage),
            Node::Gateway(g) => c.gateways.get(g as usize).map(|g| g.stage),
        }
    };
    // Every edge must lead to an existing node in the same or a later stage.
    let edge = |place: &str, from: u16, to: Option<Node>| -> Result<(), VerifyError> {
        let Some(to) = to else { return Ok(()) };
        match node_stage(to) {
            None => cx.err(place, format!("next node {to:?} does not exist")),
            Some(s) if s < from => {
                cx.err(place, format!("goes back from stage {from} to stage {s}"))
            }
            Some(_) => Ok(()),
        }
    };
    edge("control.entry", 0, c.entry)?;
    let operand_ok = |o: Operand, params: usize| match o {
        Operand::Field(f) => (f as usize) < nf,
        Operand::Const(_) => true,
        Operand::Param(p) => (p as usize) < params,
        Operand::Slice { field, hi, lo } => {
            (field as usize) < nf && lo <= hi && hi < phv.fields[field as usize].width
        }
    };
    for (i, a) in c.actions.iter().enumerate() {
        let place = format!("control.actions[{i}] ({})", a.name);
        for op in &a.ops {
            if op.dst as usize >= nf
                || !operand_ok(op.a, a.params.len())
                || !operand_ok(op.b, a.params.len())
            {
                return cx.err(&place, format!("bad operation {op:?}"));
            }
        }
    }
    let mut per_stage_tables = vec![0u16; c.stages as usize];
    let mut per_stage_gateways = vec![0u16; c.stages as usize];
    for (i, t) in c.tables.iter().enumerate() {
        let place = format!("control.tables[{i}] ({})", t.name);
        if t.stage >= c.stages {
            return cx.err(
                &place,
                format!("placed in stage {} of {}", t.stage, c.stages),
            );
        }
        per_stage_tables[t.stage as usize] += 1;
        if t.keys.iter().any(|k| k.field as usize >= nf) {
            return cx.err(&place, "a key names a missing field");
        }
        if t.actions
            .iter()
            .chain([&t.default_action.action])
            .any(|&a| a as usize >= na)
        {
            return cx.err(&place, "names a missing action");
        }
        let d = &t.default_action;
        if d.args.len() != c.actions[d.action as usize].params.len() {
            return cx.err(&place, "default action has the wrong number of arguments");
        }
        match &t.next {
            TableNext::Always(n) => edge(&place, t.stage, *n)?,
            TableNext::HitMiss { hit, miss } => {
                edge(&place, t.stage, *hit)?;
                edge(&place, t.stage, *miss)?;
            }
            TableNext::ByAction { cases, default } => {
                for (_, n) in cases {
                    edge(&place, t.stage, *n)?;
                }
                edge(&place, t.stage, *default)?;
            }
        }
    }
    for (i, g) in c.gateways.iter().enumerate() {
        let place = format!("control.gateways[{i}]");
        if g.stage >= c.stages {
            return cx.err(
                &place,
                format!("placed in stage {} of {}", g.stage, c.stages),
            );
        }
        per_stage_gateways[g.stage as usize] += 1;
        if !cond_ok(&g.cond, &|o| operand_ok(o, 0)) {
            return cx.err(
                &place,
                "condition reads a missing field or an action parameter",
            );
        }
        edge(&place, g.stage, g.on_true)?;
        edge(&place, g.stage, g.on_false)?;
    }
    for (s, (&t, &g)) in per_stage_tables.iter().zip(&per_stage_gateways).enumerate() {
        if t > spec.stage.logical_tables {
            return cx.err(
                format!("control.stage[{s}]"),
                format!("{t} tables, the chip allows {}", spec.stage.logical_tables),
            );
        }
        if g > spec.stage.gateways {
            return cx.err(
                format!("control.stage[{s}]"),
                format!("{g} gateways, the chip allows {}", spec.stage.gateways),
            );
        }
    }
    // Same-stage edges could still form a cycle: check the graph is acyclic.
    let succ = |n: Node| -> Vec<Node> {
        let v: Vec<Option<Node>> = match n {
            Node::Gateway(g) => vec![
                c.gateways[g as usize].on_true,
                c.gateways[g as usize].on_false,
            ],
            Node::Table(t) => match &c.tables[t as usize].next {
                TableNext::Always(x) => vec![*x],
                TableNext::HitMiss { hit, miss } => vec![*hit, *miss],
                TableNext::ByAction { cases, default } => {
                    cases.iter().map(|(_, n)| *n).chain([*default]).collect()
                }
            },
        };
        v.into_iter().flatten().collect()
    };
    let index = |n: Node| match n {
        Node::Table(t) => t as usize,
        Node::Gateway(g) => nt + g as usize,
    };
    // 0 = unvisited, 1 = on the stack, 2 = done.
    let mut mark = vec![0u8; nt + ng];
    let mut stack: Vec<(Node, bool)> = c.entry.into_iter().map(|n| (n, false)).collect();
    while let Some((n, leaving)) = stack.pop() {
        let i = index(n);
        if leaving {
            mark[i] = 2;
            continue;
        }
        match mark[i] {
            1 => return cx.err("control", format!("the control flow loops through {n:?}")),
            2 => continue,
            _ => {}
        }
        mark[i] = 1;
        stack.push((n, true));
        for s in succ(n) {
            match mark[index(s)] {
                1 => return cx.err("control", format!("the control flow loops through {s:?}")),
                0 => stack.push((s, false)),
                _ => {}
            }
        }
    }
    Ok(())
}

fn cond_ok(c: &Cond, ok: &dyn Fn(Operand) -> bool) -> bool {
    match c {
        Cond::True => true,
        Cond::Cmp { a, b, .. } => ok(*a) && ok(*b),
        Cond::And(x, y) | Cond::Or(x, y) => cond_ok(x, ok) && cond_ok(y, ok),
        Cond::Not(x) => cond_ok(x, ok),
    }
}
