//! The verifier: checks a program against the chip's pipe before it is loaded.
//!
//! The compiler should only produce valid programs, but the program format is also read
//! from files (`asic compile --emit ir` output may be edited), so the pipe never trusts it:
//! every index is in range, every field fits its containers, every control-flow path runs
//! forward through the stages the chip has, and per-stage counts stay within the profile.
//! After verification the executing code may index without checks.
//!
//! A table split across stages has its parts in increasing stages, their entries adding up
//! to its size; each part counts as a logical table of its stage, and control goes on from
//! the last part.
//!
//! Externs are checked against what the chip's stages can do: an extern array lives in one
//! stage, so every table whose action drives it must be in that stage (and a split table,
//! whose action runs in every part's stage, drives none); a register array can
//! be read-modified-written once per pass, so only one table may touch it (and an action
//! only once); a stateful-ALU program must fit the profile's stateful ALU (the error names
//! the limit: `salu.conditions`, `salu.updates`, `salu.outputs`, `salu.max_width_bits`), a
//! meter array's byte-count adjustment what the meter ALU holds (`meter.byte_count_adjust_bits`,
//! and 0 for a packet meter); and
//! each stage's stateful, meter and statistics ALUs and hash bits are counted. A queue-depth
//! read is refused outside ingress (the TM publishes depths to ingress only); its operands
//! are checked like an operation's, and it takes no stage unit.

use crate::dataflow::{self, FieldBits};
use crate::hash::HashEngine;
use crate::meter::check_byte_count_adjust;
use crate::program::{
    Cond, ControlProgram, CountKind, ExternCall, ExternIndex, FieldId, GressProgram, HashAlgorithm,
    Next, Node, Operand, ParserOp, PhvLayout, Program, SaluOperand, SaluValue, SelectKey, Table,
    TableNext, Transition, MAX_HASH_INPUT_BITS,
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
    if ns > spec.parser.max_states as usize {
        return cx.err(
            "parser",
            format!(
                "has {ns} states; the chip's parser allows {} (parser.max_states)",
                spec.parser.max_states
            ),
        );
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
    let mut mirror_bits = 0u32;
    for &h in &g.deparser.mirror_emit {
        let Some(header) = g.phv.headers.get(h as usize) else {
            return cx.err("deparser", format!("mirrors missing header #{h}"));
        };
        mirror_bits += header
            .fields
            .iter()
            .filter_map(|&f| g.phv.fields.get(f as usize))
            .map(|f| f.width as u32)
            .sum::<u32>();
    }
    let mirror_bytes = mirror_bits.div_ceil(8) as usize;
    if mirror_bytes > crate::deparser::MIRROR_HEADER_MAX_BYTES {
        return cx.err(
            "deparser",
            format!(
                "the mirror header is {mirror_bytes} bytes; at most {} fit",
                crate::deparser::MIRROR_HEADER_MAX_BYTES
            ),
        );
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
        if !disjoint(phv, &[i as FieldId]) {
            return cx.err(&place, "two of its slices share container bits");
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
        if !disjoint(phv, &h.fields) {
            return cx.err(&place, "two of its fields share container bits");
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
    verify_extern_arrays(cx, c, phv, spec)?;
    for (i, a) in c.actions.iter().enumerate() {
        let place = format!("control.actions[{i}] ({})", a.name);
        // (field, bits written): no bit may be written twice by one action.
        let mut dsts: Vec<FieldBits> = Vec::new();
        for op in &a.ops {
            let slice_ok = match op.dst_slice {
                None => true,
                Some((hi, lo)) => {
                    (op.dst as usize) < nf && lo <= hi && hi < phv.fields[op.dst as usize].width
                }
            };
            if op.dst as usize >= nf
                || !slice_ok
                || !operand_ok(op.a, a.params.len())
                || !operand_ok(op.b, a.params.len())
            {
                return cx.err(&place, format!("bad operation {op:?}"));
            }
            dsts.push(dataflow::op_writes(op));
        }
        let mut registers: Vec<u16> = Vec::new();
        for call in &a.externs {
            let index_ok = |i: ExternIndex| match i {
                ExternIndex::Operand(o) => operand_ok(o, a.params.len()),
                ExternIndex::Hash(h) => (h as usize) < c.hashes.len(),
            };
            let ok = match *call {
                ExternCall::Stateful {
                    salu,
                    index,
                    lane_dst,
                    ..
                } => {
                    if lane_dst.is_some()
                        && c.salus
                            .get(salu as usize)
                            .is_some_and(|s| s.minmax.is_none())
                    {
                        return cx.err(
                            &place,
                            "takes a lane number from a stateful ALU without the min/max unit",
                        );
                    }
                    let ok = (salu as usize) < c.salus.len() && index_ok(index);
                    if ok {
                        let r = c.salus[salu as usize].register;
                        if registers.contains(&r) {
                            return cx.err(
                                &place,
                                format!(
                                    "register array {} is read-modified-written twice in one \
                                     action; its stateful ALU can do it once per pass",
                                    c.registers[r as usize].name
                                ),
                            );
                        }
                        registers.push(r);
                    }
                    ok
                }
                ExternCall::Meter { meter, index, .. } => {
                    (meter as usize) < c.meters.len() && index_ok(index)
                }
                ExternCall::Count { counter, index } => {
                    (counter as usize) < c.counters.len() && index_ok(index)
                }
                ExternCall::Hash { hash, .. } => (hash as usize) < c.hashes.len(),
                ExternCall::Random { .. } => true,
                ExternCall::QueueDepth { port, queue, .. } => {
                    if cx.gress != "ingress" {
                        return cx.err(
                            &place,
                            "reads a queue depth; the TM publishes queue depths to ingress only",
                        );
                    }
                    operand_ok(port, a.params.len()) && operand_ok(queue, a.params.len())
                }
                ExternCall::EmptyQueues { port, .. } => {
                    if cx.gress != "ingress" {
                        return cx.err(
                            &place,
                            "reads the empty queues; the TM publishes queue depths to ingress only",
                        );
                    }
                    operand_ok(port, a.params.len())
                }
            };
            if !ok || dataflow::extern_writes(call).any(|d| d as usize >= nf) {
                return cx.err(&place, format!("bad extern call {call:?}"));
            }
            dsts.extend(dataflow::extern_writes(call).map(FieldBits::whole));
        }
        for (i, &w) in dsts.iter().enumerate() {
            if dsts[..i].iter().any(|&x| x.overlaps(w)) {
                return cx.err(
                    &place,
                    format!(
                        "bits of field {} are written twice (one operation per destination bit)",
                        phv.fields[w.field as usize].name
                    ),
                );
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
        verify_parts(cx, &place, t, c.stages)?;
        for p in t.stage_parts() {
            per_stage_tables[p.stage as usize] += 1;
        }
        if t.keys.iter().any(|k| k.field as usize >= nf) {
            return cx.err(&place, "a key names a missing field");
        }
        for k in &t.keys {
            if let Some((hi, lo)) = k.slice {
                if lo > hi || hi >= phv.fields[k.field as usize].width {
                    return cx.err(
                        &place,
                        format!(
                            "key {} takes bits {hi}..{lo} of a {}-bit field",
                            k.name, phv.fields[k.field as usize].width
                        ),
                    );
                }
            }
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
        // Control goes on from the last part (a split table's lookup ends there).
        let from = t.last_stage();
        match &t.next {
            TableNext::Always(n) => edge(&place, from, *n)?,
            TableNext::HitMiss { hit, miss } => {
                edge(&place, from, *hit)?;
                edge(&place, from, *miss)?;
            }
            TableNext::ByAction { cases, default } => {
                for (_, n) in cases {
                    edge(&place, from, *n)?;
                }
                edge(&place, from, *default)?;
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
    verify_extern_placement(cx, c, spec)?;
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

/// The extern arrays themselves: stages, sizes, widths, stateful-ALU programs, hash units.
fn verify_extern_arrays(
    cx: &Ctx,
    c: &ControlProgram,
    phv: &PhvLayout,
    spec: &PipeSpec,
) -> Result<(), VerifyError> {
    let nf = phv.fields.len();
    let stage_ok = |s: u16| s < c.stages;
    for (i, r) in c.registers.iter().enumerate() {
        let place = format!("control.registers[{i}] ({})", r.name);
        if !stage_ok(r.stage) {
            return cx.err(
                &place,
                format!("placed in stage {} of {}", r.stage, c.stages),
            );
        }
        if r.size == 0 {
            return cx.err(&place, "has no elements");
        }
        let max = spec.salu.max_width_bits.min(64);
        if r.width == 0 || r.width > max {
            return cx.err(
                &place,
                format!(
                    "{}-bit elements; the chip's stateful ALU handles 1 to {max} bits \
                     (salu.max_width_bits)",
                    r.width
                ),
            );
        }
    }
    for (i, s) in c.salus.iter().enumerate() {
        let place = format!("control.salus[{i}] ({})", s.name);
        if s.register as usize >= c.registers.len() {
            return cx.err(
                &place,
                format!("names missing register array #{}", s.register),
            );
        }
        if let Some(mm) = &s.minmax {
            if !spec.salu.minmax {
                return cx.err(
                    &place,
                    "uses the min/max unit; this chip's stateful ALU has none (salu.minmax)",
                );
            }
            let r = &c.registers[s.register as usize];
            let Some(lanes) = crate::salu::minmax_lanes(r.width) else {
                return cx.err(
                    &place,
                    format!(
                        "searches register array {} of {}-bit elements; min/max lanes are 8 or \
                         16 bits",
                        r.name, r.width
                    ),
                );
            };
            if r.size % lanes as u32 != 0 {
                return cx.err(
                    &place,
                    format!(
                        "searches register array {} of {} elements, not whole {}-bit words of \
                         {lanes} lanes",
                        r.name,
                        r.size,
                        crate::program::MinMax::WORD_BITS
                    ),
                );
            }
            if !s.conditions.is_empty() || !s.updates.is_empty() {
                return cx.err(
                    &place,
                    "uses the min/max unit together with compare or update ALUs; the unit takes \
                     all of them",
                );
            }
            if [mm.mask, mm.postmod]
                .iter()
                .any(|o| matches!(o, SaluOperand::Register))
            {
                return cx.err(
                    &place,
                    "a min/max mask or postmod must be a field or constant",
                );
            }
        }
        let limits = [
            (
                s.conditions.len(),
                spec.salu.conditions.min(4),
                "conditions",
                "salu.conditions",
            ),
            (
                s.updates.len(),
                spec.salu.updates,
                "update expressions",
                "salu.updates",
            ),
            (
                s.outputs.len(),
                spec.salu.outputs,
                "outputs",
                "salu.outputs",
            ),
        ];
        for (n, max, what, limit) in limits {
            if n > max as usize {
                return cx.err(
                    &place,
                    format!("has {n} {what}; the chip's stateful ALU allows {max} ({limit})"),
                );
            }
        }
        let operand_ok = |o: &SaluOperand| !matches!(*o, SaluOperand::Field(f) if f as usize >= nf);
        let ok = s
            .conditions
            .iter()
            .all(|k| operand_ok(&k.a) && operand_ok(&k.b))
            && s.updates
                .iter()
                .all(|u| operand_ok(&u.a) && operand_ok(&u.b))
            && s.outputs.iter().all(|o| match &o.value {
                SaluValue::Operand(x) => operand_ok(x),
                _ => true,
            })
            && s.minmax
                .iter()
                .all(|m| operand_ok(&m.mask) && operand_ok(&m.postmod));
        if !ok {
            return cx.err(&place, "reads a missing field");
        }
    }
    for (i, m) in c.meters.iter().enumerate() {
        let place = format!("control.meters[{i}] ({})", m.name);
        if !stage_ok(m.stage) {
            return cx.err(
                &place,
                format!("placed in stage {} of {}", m.stage, c.stages),
            );
        }
        if m.size == 0 {
            return cx.err(&place, "has no meters");
        }
        if m.unit == CountKind::PacketsAndBytes {
            return cx.err(&place, "a meter counts bytes or packets, not both");
        }
        let range = spec.meter.byte_count_adjust_range();
        if let Err(e) = check_byte_count_adjust(m.unit, m.byte_count_adjust, range) {
            return cx.err(&place, e);
        }
    }
    for (i, k) in c.counters.iter().enumerate() {
        let place = format!("control.counters[{i}] ({})", k.name);
        if !stage_ok(k.stage) {
            return cx.err(
                &place,
                format!("placed in stage {} of {}", k.stage, c.stages),
            );
        }
        if k.size == 0 {
            return cx.err(&place, "has no counters");
        }
    }
    for (i, h) in c.hashes.iter().enumerate() {
        let place = format!("control.hashes[{i}] ({})", h.name);
        if !stage_ok(h.stage) {
            return cx.err(
                &place,
                format!("placed in stage {} of {}", h.stage, c.stages),
            );
        }
        if h.fields.iter().any(|&f| f as usize >= nf) {
            return cx.err(&place, "an input names a missing field");
        }
        let in_bits: u32 = h
            .fields
            .iter()
            .map(|&f| phv.fields[f as usize].width as u32)
            .sum();
        if in_bits > MAX_HASH_INPUT_BITS {
            return cx.err(
                &place,
                format!("{in_bits} input bits (at most {MAX_HASH_INPUT_BITS})"),
            );
        }
        let max = match h.algorithm {
            HashAlgorithm::Identity => 128,
            HashAlgorithm::Crc { width, .. } => width as u16,
        };
        if h.width == 0 || h.width > max {
            return cx.err(
                &place,
                format!("{}-bit output from a {max}-bit function", h.width),
            );
        }
        if HashEngine::new(&h.algorithm).is_none() {
            return cx.err(
                &place,
                "CRC parameters out of range (width 1 to 64; poly, init and xorout within the width)",
            );
        }
    }
    Ok(())
}

/// A split table's parts: at least two, the first in the table's stage, in increasing
/// stages the control occupies, none empty, their entries adding up to the table's size.
fn verify_parts(cx: &Ctx, place: &str, t: &Table, stages: u16) -> Result<(), VerifyError> {
    if t.parts.is_empty() {
        return Ok(());
    }
    let bad = |why: String| cx.err(place, format!("parts: {why}"));
    if t.parts.len() < 2 {
        return bad("a split table has at least two parts".into());
    }
    if t.parts[0].stage != t.stage {
        return bad(format!(
            "the first part is in stage {}, the table in stage {}",
            t.parts[0].stage, t.stage
        ));
    }
    let mut total = 0u64;
    for (k, p) in t.parts.iter().enumerate() {
        if p.stage >= stages {
            return bad(format!("part {k} is in stage {} of {stages}", p.stage));
        }
        if k > 0 && p.stage <= t.parts[k - 1].stage {
            return bad(format!(
                "part {k} is in stage {}, not after part {} (stage {})",
                p.stage,
                k - 1,
                t.parts[k - 1].stage
            ));
        }
        if p.entries == 0 {
            return bad(format!("part {k} holds no entries"));
        }
        total += p.entries as u64;
    }
    if total != t.size as u64 {
        return bad(format!(
            "the parts hold {total} entries, the table's size is {}",
            t.size
        ));
    }
    Ok(())
}

/// Where externs are driven from: every extern an action drives must sit in the stage of
/// every table that may run the action, and a split table's actions drive none (each part's
/// stage runs them, and an extern array lives in one stage); a register array may be
/// touched by one table only; and per-stage ALU counts stay within the profile.
fn verify_extern_placement(
    cx: &Ctx,
    c: &ControlProgram,
    spec: &PipeSpec,
) -> Result<(), VerifyError> {
    // Which table first touched each register array.
    let mut register_owner: Vec<Option<usize>> = vec![None; c.registers.len()];
    for (ti, t) in c.tables.iter().enumerate() {
        let place = format!("control.tables[{ti}] ({})", t.name);
        let mut actions: Vec<u16> = t.actions.clone();
        actions.push(t.default_action.action);
        actions.sort_unstable();
        actions.dedup();
        for a in actions {
            let action = &c.actions[a as usize];
            for call in &action.externs {
                let (what, name, stage) = match *call {
                    ExternCall::Stateful { salu, .. } => {
                        let r = c.salus[salu as usize].register as usize;
                        match register_owner[r] {
                            Some(o) if o != ti => {
                                return cx.err(
                                    &place,
                                    format!(
                                        "register array {} is also touched by table {}: its \
                                         stateful ALU can do one read-modify-write per pass",
                                        c.registers[r].name, c.tables[o].name
                                    ),
                                )
                            }
                            _ => register_owner[r] = Some(ti),
                        }
                        let reg = &c.registers[r];
                        ("register array", &reg.name, reg.stage)
                    }
                    ExternCall::Meter { meter, .. } => {
                        let m = &c.meters[meter as usize];
                        ("meter array", &m.name, m.stage)
                    }
                    ExternCall::Count { counter, .. } => {
                        let k = &c.counters[counter as usize];
                        ("counter array", &k.name, k.stage)
                    }
                    ExternCall::Hash { hash, .. } => {
                        let h = &c.hashes[hash as usize];
                        ("hash unit", &h.name, h.stage)
                    }
                    // Not a stage unit: the published depths come on their own bus.
                    ExternCall::Random { .. }
                    | ExternCall::QueueDepth { .. }
                    | ExternCall::EmptyQueues { .. } => continue,
                };
                if !t.parts.is_empty() {
                    return cx.err(
                        &place,
                        format!(
                            "action {} drives {what} {name}, but the table is split across \
                             stages: its action runs in each part's stage, and {name} lives in \
                             one",
                            action.name
                        ),
                    );
                }
                if stage != t.stage {
                    return cx.err(
                        &place,
                        format!(
                            "action {} drives {what} {name} in stage {stage}, but the table \
                             is in stage {}",
                            action.name, t.stage
                        ),
                    );
                }
                let index = match *call {
                    ExternCall::Stateful { index, .. }
                    | ExternCall::Meter { index, .. }
                    | ExternCall::Count { index, .. } => Some(index),
                    _ => None,
                };
                if let Some(ExternIndex::Hash(h)) = index {
                    let h = &c.hashes[h as usize];
                    if h.stage != t.stage {
                        return cx.err(
                            &place,
                            format!(
                                "action {} indexes {name} with hash unit {} in stage {}, but \
                                 the table is in stage {}",
                                action.name, h.name, h.stage, t.stage
                            ),
                        );
                    }
                }
            }
        }
    }
    let n = c.stages as usize;
    let mut stateful = vec![0u32; n];
    let mut meters = vec![0u32; n];
    let mut stats = vec![0u32; n];
    let mut hash_bits = vec![0u32; n];
    for r in &c.registers {
        stateful[r.stage as usize] += 1;
    }
    for m in &c.meters {
        meters[m.stage as usize] += 1;
    }
    for k in &c.counters {
        stats[k.stage as usize] += 1;
    }
    // A direct counter is split with its table: a statistics ALU in each part's stage.
    for t in c.tables.iter().filter(|t| t.direct_counter.is_some()) {
        for p in t.stage_parts() {
            stats[p.stage as usize] += 1;
        }
    }
    for h in &c.hashes {
        hash_bits[h.stage as usize] += h.width as u32;
    }
    for s in 0..n {
        let checks = [
            (
                stateful[s],
                spec.stage.stateful_alus,
                "register arrays",
                "stateful ALUs",
                "stage.stateful_alus",
            ),
            (
                meters[s],
                spec.stage.meter_alus,
                "meter arrays",
                "meter ALUs",
                "stage.meter_alus",
            ),
            (
                stats[s],
                spec.stage.stats_alus,
                "counters",
                "statistics ALUs",
                "stage.stats_alus",
            ),
            (
                hash_bits[s],
                spec.stage.hash_bits,
                "hash output bits",
                "hash output bits",
                "stage.hash_bits",
            ),
        ];
        for (used, max, what, unit, limit) in checks {
            if used > max as u32 {
                return cx.err(
                    format!("control.stage[{s}]"),
                    format!("{used} {what}; the stage has {max} {unit} ({limit})"),
                );
            }
        }
    }
    Ok(())
}

/// Whether no two slices of `fields` share a container bit. The parser's aligned extract
/// and the deparser's write-back store a header's slices in an order of their own, and the
/// MAU sets a wide field slice by slice: the same bits held twice would take whichever
/// store came last. (Fields of different headers, or a header's and metadata, may share
/// bits: an overlay, which every path handles.)
fn disjoint(phv: &PhvLayout, fields: &[FieldId]) -> bool {
    let mut seen: Vec<(u16, u32)> = Vec::new();
    for s in fields.iter().flat_map(|&f| &phv.fields[f as usize].slices) {
        let (c, m) = dataflow::slice_bits(s);
        if seen.iter().any(|&(k, b)| k == c && b & m != 0) {
            return false;
        }
        seen.push((c, m));
    }
    true
}

fn cond_ok(c: &Cond, ok: &dyn Fn(Operand) -> bool) -> bool {
    match c {
        Cond::True => true,
        Cond::Cmp { a, b, .. } => ok(*a) && ok(*b),
        Cond::And(x, y) | Cond::Or(x, y) => cond_ok(x, ok) && cond_ok(y, ok),
        Cond::Not(x) => cond_ok(x, ok),
    }
}
