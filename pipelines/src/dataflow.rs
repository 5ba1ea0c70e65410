//! What each part of a program reads and writes in the PHV: the one definition every
//! analysis asks.
//!
//! Three places depend on it and must agree, or the chip goes wrong silently:
//! - the compiler's stage allocation (`dsl`'s `alloc`): a node that reads or rewrites what an
//!   earlier node writes goes in a later stage, and an action may not read what it writes;
//! - the verifier ([`crate::verify`]): one action writes each bit once;
//! - the MAU's and the deparser's fast paths: an action runs as micro-ops only when no
//!   operation reads a container an earlier one wrote ([`crate::mau`]), and the in-place
//!   deparser writes back only the header bits something other than their extraction may
//!   have written ([`crate::deparser::InPlace`]). A writer missing there would leave the
//!   parsed bytes in the packet: stale headers, with no error.
//!
//! So every operation, extern call, parser operation, intrinsic binding and checksum is
//! matched here exhaustively: a new kind of writer does not compile until this module says
//! what it writes, and then every user sees it.
//!
//! Everything here runs when a program is compiled or loaded, never per packet. The
//! functions accept unverified programs (the verifier asks them too): what they cannot
//! resolve (a missing hash unit or stateful-ALU program, a missing header) reads or writes
//! nothing, and the verifier refuses the program for it.

use crate::program::{
    ActionId, AluOp, Cond, ControlProgram, ExternCall, ExternIndex, FieldId, GressProgram,
    HeaderId, Intrinsic, Op, Operand, ParserOp, PhvLayout, PhvSlice, SaluOperand, SaluValue, Table,
};

/// Bits of one field: all of it, or its bits `hi ..= lo`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FieldBits {
    /// The field.
    pub field: FieldId,
    /// `Some((hi, lo))`: only those bits; `None`: the whole field.
    pub range: Option<(u16, u16)>,
}

impl FieldBits {
    /// The whole of `field`.
    pub fn whole(field: FieldId) -> FieldBits {
        FieldBits { field, range: None }
    }

    /// Whether the two share a bit: the same field, and ranges that overlap (a whole field
    /// overlaps any range of it).
    pub fn overlaps(self, other: FieldBits) -> bool {
        self.field == other.field
            && match (self.range, other.range) {
                (Some((ah, al)), Some((bh, bl))) => al <= bh && bl <= ah,
                _ => true,
            }
    }
}

/// The field bits an operand reads, if it reads the PHV.
pub fn operand_reads(o: &Operand) -> Option<FieldBits> {
    match *o {
        Operand::Field(f) => Some(FieldBits::whole(f)),
        Operand::Slice { field, hi, lo } => Some(FieldBits {
            field,
            range: Some((hi, lo)),
        }),
        Operand::Const(_) | Operand::Param(_) => None,
    }
}

/// What a VLIW operation reads: its first operand, and its second unless the operation
/// ignores it (`Set` and `Not` take one operand), in that order.
pub fn op_reads(op: &Op) -> impl Iterator<Item = FieldBits> {
    let b = match op.alu {
        AluOp::Set | AluOp::Not => None,
        _ => operand_reads(&op.b),
    };
    operand_reads(&op.a).into_iter().chain(b)
}

/// What a VLIW operation writes: its destination, or the deposited bits of it.
pub fn op_writes(op: &Op) -> FieldBits {
    FieldBits {
        field: op.dst,
        range: op.dst_slice,
    }
}

/// The fields an extern call reads, in order: its index's, then the unit's inputs (a hash
/// unit's fields; a stateful-ALU program's PHV operands: conditions, updates, outputs, the
/// min/max mask and postmod; a queue-depth read's port and queue). They are all read at
/// the start of the stage, where they address memories or feed the units' input
/// crossbars.
pub fn extern_reads(control: &ControlProgram, call: &ExternCall) -> Vec<FieldId> {
    let hash_inputs = |h: u16| {
        control
            .hashes
            .get(h as usize)
            .map_or(&[][..], |h| &h.fields[..])
    };
    let operand = |o: &Operand| operand_reads(o).map(|b| b.field);
    let index_reads = |i: &ExternIndex| match i {
        ExternIndex::Operand(o) => operand(o).into_iter().collect(),
        ExternIndex::Hash(h) => hash_inputs(*h).to_vec(),
    };
    match call {
        ExternCall::Stateful { salu, index, .. } => {
            let mut r = index_reads(index);
            if let Some(s) = control.salus.get(*salu as usize) {
                let operands = s
                    .conditions
                    .iter()
                    .flat_map(|x| [&x.a, &x.b])
                    .chain(s.updates.iter().flat_map(|x| [&x.a, &x.b]))
                    .chain(s.outputs.iter().filter_map(|x| match &x.value {
                        SaluValue::Operand(o) => Some(o),
                        SaluValue::Old | SaluValue::New | SaluValue::Predicate => None,
                    }))
                    .chain(s.minmax.iter().flat_map(|m| [&m.mask, &m.postmod]));
                r.extend(operands.filter_map(|o| match *o {
                    SaluOperand::Field(f) => Some(f),
                    SaluOperand::Register | SaluOperand::Const(_) => None,
                }));
            }
            r
        }
        ExternCall::Meter { index, .. } | ExternCall::Count { index, .. } => index_reads(index),
        ExternCall::Hash { hash, .. } => hash_inputs(*hash).to_vec(),
        ExternCall::Random { .. } => Vec::new(),
        ExternCall::QueueDepth { port, queue, .. } => {
            operand(port).into_iter().chain(operand(queue)).collect()
        }
        ExternCall::EmptyQueues { port, .. } => operand(port).into_iter().collect(),
    }
}

/// The fields an extern call writes, whole: none, one, or a min/max program's output and
/// selected lane.
pub fn extern_writes(call: &ExternCall) -> impl Iterator<Item = FieldId> {
    let [a, b] = match *call {
        ExternCall::Stateful { dst, lane_dst, .. } => [dst, lane_dst],
        ExternCall::Count { .. } => [None, None],
        ExternCall::Meter { dst, .. }
        | ExternCall::Hash { dst, .. }
        | ExternCall::Random { dst }
        | ExternCall::QueueDepth { dst, .. }
        | ExternCall::EmptyQueues { dst, .. } => [Some(dst), None],
    };
    a.into_iter().chain(b)
}

/// What a table's match reads: its key fields, or the matched bits of them.
pub fn key_reads(t: &Table) -> impl Iterator<Item = FieldBits> + '_ {
    t.keys.iter().map(|k| FieldBits {
        field: k.field,
        range: k.slice,
    })
}

/// What a gateway condition reads, in the order it is written.
pub fn cond_reads(c: &Cond) -> Vec<FieldBits> {
    fn walk(c: &Cond, out: &mut Vec<FieldBits>) {
        match c {
            Cond::True => {}
            Cond::Cmp { a, b, .. } => {
                out.extend(operand_reads(a).into_iter().chain(operand_reads(b)))
            }
            Cond::And(x, y) | Cond::Or(x, y) => {
                walk(x, out);
                walk(y, out);
            }
            Cond::Not(x) => walk(x, out),
        }
    }
    let mut out = Vec::new();
    walk(c, &mut out);
    out
}

/// A part of a gress that writes the PHV.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Writer {
    /// The parser extracting a header: its fields and its validity bit.
    Extract(HeaderId),
    /// A parser state's constant (metadata initialisation).
    ParserConst,
    /// The chip, through an intrinsic's field: an input before the parser runs, the
    /// parser error code after it, an output's field is the chip's to read.
    Intrinsic(Intrinsic),
    /// An action: its VLIW operations and the results of the externs it drives.
    Action(ActionId),
    /// A deparser checksum, before the headers are emitted.
    Checksum,
}

/// Every writer of the gress's PHV and the fields it writes (whole or deposited bits), in
/// the order the packet meets them: intrinsic inputs, the parser, the actions, the
/// checksums.
pub fn writers(prog: &GressProgram) -> Vec<(Writer, FieldBits)> {
    let layout = &prog.phv;
    let mut out: Vec<(Writer, FieldBits)> = layout
        .intrinsics
        .iter()
        .map(|&(i, f)| (Writer::Intrinsic(i), FieldBits::whole(f)))
        .collect();
    for op in prog.parser.states.iter().flat_map(|s| &s.ops) {
        match *op {
            ParserOp::Extract(h) => {
                if let Some(header) = layout.headers.get(h as usize) {
                    let fields = header.fields.iter().chain([&header.valid]);
                    out.extend(fields.map(|&f| (Writer::Extract(h), FieldBits::whole(f))));
                }
            }
            ParserOp::Advance(_) => {}
            ParserOp::SetConst { field, .. } => {
                out.push((Writer::ParserConst, FieldBits::whole(field)));
            }
        }
    }
    for (a, action) in prog.control.actions.iter().enumerate() {
        let w = Writer::Action(a as ActionId);
        out.extend(action.ops.iter().map(|op| (w, op_writes(op))));
        out.extend(
            action
                .externs
                .iter()
                .flat_map(extern_writes)
                .map(|f| (w, FieldBits::whole(f))),
        );
    }
    out.extend(
        prog.deparser
            .checksums
            .iter()
            .map(|c| (Writer::Checksum, FieldBits::whole(c.dst))),
    );
    out
}

/// A slice's bits as (container, mask of its bits in the container).
pub fn slice_bits(s: &PhvSlice) -> (u16, u32) {
    (s.container, (((1u64 << s.width) - 1) as u32) << s.lsb)
}

/// The container bits a whole field occupies, slice by slice.
pub fn field_bits(layout: &PhvLayout, f: FieldId) -> impl Iterator<Item = (u16, u32)> + '_ {
    layout.fields[f as usize].slices.iter().map(slice_bits)
}
