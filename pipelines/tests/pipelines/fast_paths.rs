//! Each fast path of the pipe against its reference path, on random programs and layouts:
//! the in-place deparser against emitting the headers, the MAU's micro-op actions against
//! the general VLIW path, the parser's aligned extract against the slice-by-slice one, and
//! the tables' hashed stores (exact, LPM alone or beside exact keys) against a linear search.
//!
//! The programs are random in what matters to the fast paths: fields of any width split
//! into slices anywhere in a few containers (some sharing bits with other fields, as
//! overlays do), headers of bit fields or byte fields, and every kind of writer (parser
//! constants, actions' operations and externs, checksums, intrinsics) aimed at any field,
//! header fields and validity bits included. Each case is drawn from one seed, which a
//! failure reports.

use pipelines::deparser::{emit, update_checksums, InPlace};
use pipelines::mau::{run_action, run_control, ControlPlan, ExternState, NoDepths, PacketCtx};
use pipelines::parser::{extract_bits, parse, read_bits};
use pipelines::phv::{Phv, WireLayout};
use pipelines::program::*;
use pipelines::table::TableState;
use pipelines::time::Clock;
use pipelines::trace::NoTrace;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use std::cell::Cell;

/// A small deterministic generator (SplitMix64): a case is a function of its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (0 when `n` is 0).
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    /// True `percent` times in a hundred.
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    /// A value of `width` bits (1..=128).
    fn bits(&mut self, width: u16) -> u128 {
        let v = (self.next() as u128) << 64 | self.next() as u128;
        v & mask(width)
    }

    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize]
    }
}

fn mask(width: u16) -> u128 {
    u128::MAX >> (128 - width.clamp(1, 128))
}

/// Fields placed in `free.len()` 32-bit containers: each slice in bits no field has yet
/// where it can find some, else (or now and then on purpose) over another field's bits,
/// as an overlay. Never over bits of its own field or of another field of its header: the
/// verifier refuses those, and the fast paths rely on it.
struct Placer {
    free: Vec<u32>,
    /// The bits of the header being placed (of the field, for a field of no header).
    group: Vec<u32>,
    layout: PhvLayout,
}

impl Placer {
    fn new(containers: usize) -> Placer {
        Placer {
            free: vec![u32::MAX; containers],
            group: vec![0; containers],
            layout: PhvLayout::default(),
        }
    }

    /// A field of no header.
    fn field(&mut self, g: &mut Rng, name: String, width: u16) -> FieldId {
        self.group.fill(0);
        self.place(g, name, width)
    }

    fn place(&mut self, g: &mut Rng, name: String, width: u16) -> FieldId {
        let mut slices = Vec::new();
        let mut left = width;
        while left > 0 {
            let w = (1 + g.below(left.min(32) as u64)) as u8;
            let m = |lsb: u8| (((1u64 << w) - 1) as u32) << lsb;
            let overlay = g.chance(5);
            let mut at = None;
            for _ in 0..64 {
                let c = g.below(self.free.len() as u64) as usize;
                let lsb = g.below(33 - w as u64) as u8;
                let own = self.group[c] & m(lsb) != 0;
                let taken = self.free[c] & m(lsb) != m(lsb);
                if !own && (overlay || !taken) {
                    at = Some((c, lsb));
                    break;
                }
            }
            // No room: a container of its own.
            let (c, lsb) = at.unwrap_or_else(|| {
                self.free.push(u32::MAX);
                self.group.push(0);
                (self.free.len() - 1, 0)
            });
            self.free[c] &= !m(lsb);
            self.group[c] |= m(lsb);
            slices.push(PhvSlice {
                container: c as u16,
                lsb,
                width: w,
            });
            left -= w as u16;
        }
        self.layout.fields.push(Field {
            name,
            width,
            slices,
        });
        (self.layout.fields.len() - 1) as FieldId
    }

    /// A header: bit fields (1 to 40 bits, the last padded to a byte) or byte fields (1 to
    /// 4 bytes, so 16-bit fields on even bytes, where a checksum can go, are common).
    fn header(&mut self, g: &mut Rng, h: usize) -> HeaderId {
        let bytes = g.chance(50);
        let mut widths: Vec<u16> = (0..1 + g.below(5))
            .map(|_| {
                if bytes {
                    8 * (1 + g.below(4) as u16)
                } else {
                    1 + g.below(40) as u16
                }
            })
            .collect();
        let bits: u16 = widths.iter().sum();
        if bits % 8 != 0 {
            widths.push(8 - bits % 8);
        }
        self.group.fill(0);
        let fields = widths
            .iter()
            .enumerate()
            .map(|(i, &w)| self.place(g, format!("h{h}.f{i}"), w))
            .collect();
        let valid = self.field(g, format!("h{h}.valid"), 1);
        self.layout.headers.push(Header {
            name: format!("h{h}"),
            fields,
            valid,
        });
        (self.layout.headers.len() - 1) as HeaderId
    }
}

/// `n` containers for about `bits` bits of fields: room for most, not all.
fn containers_for(g: &mut Rng, bits: u64) -> usize {
    (bits / 32 + 1 + g.below(4)) as usize
}

/// A random operand over `fields` of `layout`, with `params` action parameters.
fn operand(g: &mut Rng, layout: &PhvLayout, params: u8) -> Operand {
    let f = g.below(layout.fields.len() as u64) as FieldId;
    let width = layout.fields[f as usize].width;
    match g.below(5) {
        0 | 1 => Operand::Field(f),
        2 => {
            let lo = g.below(width as u64) as u16;
            let hi = lo + g.below((width - lo) as u64) as u16;
            Operand::Slice { field: f, hi, lo }
        }
        3 if params > 0 => Operand::Param(g.below(params as u64) as u8),
        _ => {
            let w = 1 + g.below(64) as u16;
            Operand::Const(g.bits(w))
        }
    }
}

const ALUS: [AluOp; 13] = [
    AluOp::Set,
    AluOp::Add,
    AluOp::Sub,
    AluOp::AddSat,
    AluOp::SubSat,
    AluOp::And,
    AluOp::Or,
    AluOp::Xor,
    AluOp::Not,
    AluOp::Shl,
    AluOp::Shr,
    AluOp::Min,
    AluOp::Max,
];

/// A random operation writing one of `dsts` (or some bits of it).
fn op(g: &mut Rng, layout: &PhvLayout, dsts: &[FieldId], params: u8) -> Op {
    let dst = g.pick(dsts);
    let width = layout.fields[dst as usize].width;
    let dst_slice = g.chance(30).then(|| {
        let lo = g.below(width as u64) as u16;
        (lo + g.below((width - lo) as u64) as u16, lo)
    });
    // Half the operations set from action data or a constant, as most real ones do.
    let alu = if g.chance(50) {
        AluOp::Set
    } else {
        g.pick(&ALUS)
    };
    Op {
        dst,
        dst_slice,
        alu,
        a: operand(g, layout, params),
        b: operand(g, layout, params),
    }
}

fn params(g: &mut Rng) -> Vec<ActionParam> {
    (0..g.below(3))
        .map(|i| ActionParam {
            name: format!("p{i}"),
            width: 1 + g.below(64) as u16,
        })
        .collect()
}

fn args(g: &mut Rng, params: &[ActionParam]) -> Vec<u128> {
    params.iter().map(|p| g.bits(p.width)).collect()
}

fn packet_ctx(stage_entry: &[u32]) -> PacketCtx<'_> {
    PacketCtx {
        bytes: 100,
        issue_cycle: 0,
        clock: Clock::new(1_000_000_000),
        stage_entry,
        depths: &NoDepths,
    }
}

/// Run `case` on `cases` random seeds; a failure names its seed.
fn check(cases: u32, case: impl Fn(u64) -> Result<(), TestCaseError>) {
    TestRunner::new(Config::with_cases(cases))
        .run(&any::<u64>(), case)
        .unwrap();
}

/// A PHV of zeros for `layout`, as a packet's starts.
fn zero_phv(layout: &PhvLayout) -> Phv {
    Phv::new(layout.containers())
}

/// A PHV for `layout` with every field random: bits no field has stay 0, as nothing but a
/// field's slices writes a container (the aligned extract relies on it).
fn random_phv(g: &mut Rng, layout: &PhvLayout) -> Phv {
    let mut phv = zero_phv(layout);
    for f in &layout.fields {
        phv.set(f, g.bits(f.width));
    }
    phv
}

// ---------------------------------------------------------------------------------------------
// (a) The in-place deparser against emitting the headers

/// The externs an action may drive: a hash unit, a register array with a plain stateful
/// ALU and a min/max one (which writes a lane number too), a meter and a counter.
fn externs(g: &mut Rng, control: &mut ControlProgram, layout: &PhvLayout) {
    let nf = layout.fields.len() as u64;
    control.hashes.push(HashUnit {
        name: "hash".into(),
        stage: 0,
        algorithm: if g.chance(50) {
            HashAlgorithm::Identity
        } else {
            HashAlgorithm::Crc {
                width: 16,
                poly: 0x8005,
                init: g.below(0x1_0000),
                refin: true,
                refout: true,
                xorout: 0,
            }
        },
        fields: (0..1 + g.below(2))
            .map(|_| g.below(nf) as FieldId)
            .collect(),
        width: 1 + g.below(16) as u16,
    });
    control.registers.push(RegisterArray {
        name: "reg".into(),
        stage: 0,
        width: 8,
        size: 32,
        init: g.bits(8),
    });
    // A read-modify-write of random operands (the PHV's among them), returning the old or
    // the new value.
    let salu_operand = |g: &mut Rng| match g.below(3) {
        0 => SaluOperand::Register,
        1 => SaluOperand::Const(g.bits(8)),
        _ => SaluOperand::Field(g.below(nf) as FieldId),
    };
    let update = SaluUpdate {
        when: Predicate::ALWAYS,
        alu: g.pick(&ALUS),
        a: salu_operand(g),
        b: salu_operand(g),
    };
    let value = g.pick(&[SaluValue::Old, SaluValue::New]);
    control.salus.push(StatefulAlu {
        name: "update".into(),
        register: 0,
        conditions: Vec::new(),
        updates: vec![update],
        outputs: vec![SaluOutput {
            when: Predicate::ALWAYS,
            value,
        }],
        minmax: None,
    });
    control.salus.push(StatefulAlu {
        name: "least".into(),
        register: 0,
        conditions: Vec::new(),
        updates: Vec::new(),
        outputs: Vec::new(),
        minmax: Some(MinMax {
            max: g.chance(50),
            mask: SaluOperand::Const(g.bits(16)),
            postmod: SaluOperand::Const(1),
        }),
    });
    control.meters.push(MeterArray {
        name: "meter".into(),
        stage: 0,
        size: 4,
        unit: CountKind::Packets,
        byte_count_adjust: 0,
    });
    control.counters.push(CounterArray {
        name: "counter".into(),
        stage: 0,
        size: 4,
        kind: CountKind::Packets,
    });
}

/// A random extern call writing into `dsts`.
fn extern_call(g: &mut Rng, layout: &PhvLayout, dsts: &[FieldId], params: u8) -> ExternCall {
    let index = if g.chance(50) {
        ExternIndex::Hash(0)
    } else {
        ExternIndex::Operand(operand(g, layout, params))
    };
    let dst = g.pick(dsts);
    match g.below(7) {
        0 => ExternCall::Random { dst },
        1 => ExternCall::Hash { hash: 0, dst },
        2 => ExternCall::Meter {
            meter: 0,
            index,
            dst,
        },
        3 => ExternCall::Count { counter: 0, index },
        4 => ExternCall::QueueDepth {
            port: operand(g, layout, params),
            queue: operand(g, layout, params),
            dst,
        },
        5 => ExternCall::EmptyQueues {
            port: operand(g, layout, params),
            dst,
        },
        _ => {
            let minmax = g.chance(50);
            ExternCall::Stateful {
                salu: minmax as SaluId,
                index,
                dst: g.chance(80).then_some(dst),
                lane_dst: (minmax && g.chance(80)).then(|| g.pick(dsts)),
            }
        }
    }
}

/// A gress of random headers, a one-state parser extracting some of them (with parser
/// constants between), actions writing anywhere, checksums and intrinsic bindings.
fn deparse_program(g: &mut Rng) -> GressProgram {
    let headers = 1 + g.below(4) as usize;
    let metadata = g.below(4) as usize;
    let mut p = Placer::new(containers_for(
        g,
        60 * headers as u64 + 40 * metadata as u64,
    ));
    for h in 0..headers {
        p.header(g, h);
    }
    for m in 0..metadata {
        let w = 1 + g.below(64) as u16;
        p.field(g, format!("meta{m}"), w);
    }
    let mut layout = p.layout;
    let all: Vec<FieldId> = (0..layout.fields.len() as FieldId).collect();
    let valid: Vec<FieldId> = layout.headers.iter().map(|h| h.valid).collect();
    // Most writes go to fields other than validity bits: a header made valid or invalid
    // is emitted, never left in place, so those cases say less.
    let dsts: Vec<FieldId> = all
        .iter()
        .copied()
        .filter(|f| !valid.contains(f) || g.chance(10))
        .collect();
    let intrinsics = [
        Intrinsic::IngressPort,
        Intrinsic::PacketLength,
        Intrinsic::ParserError,
        Intrinsic::UcastEgressPort,
    ];
    for &i in &intrinsics[..g.below(3) as usize] {
        layout.intrinsics.push((i, g.pick(&dsts)));
    }

    let mut order: Vec<HeaderId> = (0..headers as HeaderId).collect();
    for i in (1..order.len()).rev() {
        order.swap(i, g.below(i as u64 + 1) as usize);
    }
    let extracted = &order[..1 + g.below(headers as u64) as usize];
    let mut ops = Vec::new();
    for &h in extracted {
        if g.chance(30) {
            let field = g.pick(&dsts);
            let value = g.bits(layout.fields[field as usize].width);
            ops.push(ParserOp::SetConst { field, value });
        }
        if g.chance(5) {
            ops.push(ParserOp::Advance(8 * (1 + g.below(2) as u32)));
        }
        ops.push(ParserOp::Extract(h));
    }
    if g.chance(30) {
        let field = g.pick(&dsts);
        let value = g.bits(layout.fields[field as usize].width);
        ops.push(ParserOp::SetConst { field, value });
    }
    let parser = ParserProgram {
        states: vec![ParserState {
            name: "start".into(),
            ops,
            transition: Transition::Direct(Next::Accept),
        }],
        start: 0,
        on_error: ParserErrorPolicy::Drop,
    };

    let mut control = ControlProgram {
        stages: 1,
        ..ControlProgram::default()
    };
    externs(g, &mut control, &layout);
    for a in 0..1 + g.below(3) {
        let params = params(g);
        let n = params.len() as u8;
        control.actions.push(Action {
            name: format!("a{a}"),
            ops: (0..g.below(4)).map(|_| op(g, &layout, &dsts, n)).collect(),
            externs: (0..g.below(3))
                .map(|_| extern_call(g, &layout, &dsts, n))
                .collect(),
            params,
        });
    }

    // Emit what was extracted, in order (the headers then stay in place), or all the
    // headers in any order.
    let emit = if g.chance(75) {
        extracted.to_vec()
    } else {
        order.clone()
    };
    let mut checksums = Vec::new();
    for _ in 0..g.below(3) {
        let h = g.pick(&order);
        let fields = &layout.headers[h as usize].fields;
        // A 16-bit field on an even byte, summing the rest of its header (IPv4's shape,
        // which the deparser sums from the packet), or anything.
        let mut offset = 0;
        let mut word = None;
        for &f in fields {
            let w = layout.fields[f as usize].width;
            if w == 16 && offset % 16 == 0 {
                word = Some(f);
            }
            offset += w;
        }
        let c = match word {
            Some(dst) if g.chance(70) => ChecksumUpdate {
                dst,
                sources: fields.iter().copied().filter(|&f| f != dst).collect(),
                when_valid: h,
            },
            _ => {
                let sixteen: Vec<FieldId> = all
                    .iter()
                    .copied()
                    .filter(|&f| layout.fields[f as usize].width == 16)
                    .collect();
                if sixteen.is_empty() {
                    continue;
                }
                ChecksumUpdate {
                    dst: g.pick(&sixteen),
                    sources: (0..1 + g.below(4)).map(|_| g.pick(&all)).collect(),
                    when_valid: h,
                }
            }
        };
        checksums.push(c);
    }
    GressProgram {
        phv: layout,
        parser,
        control,
        deparser: DeparserProgram {
            emit,
            mirror_emit: Vec::new(),
            checksums,
        },
    }
}

/// One packet through a random program up to the deparser, as the pipe runs it (the chip's
/// intrinsics, the parser, every action), then deparsed in place and by emitting: when the
/// in-place deparser takes the packet, the packets and PHVs are the same. Returns whether
/// it took it.
fn deparse_case(seed: u64) -> Result<bool, TestCaseError> {
    let mut g = Rng(seed);
    let prog = deparse_program(&mut g);
    let layout = &prog.phv;
    let wire = WireLayout::new(layout, &prog.parser, &prog.deparser);
    let in_place = InPlace::new(&prog, &wire);
    let header_bytes: usize = (0..layout.headers.len() as HeaderId)
        .map(|h| layout.header_bytes(h))
        .sum::<usize>()
        + 2;
    let len = header_bytes + g.below(24) as usize;
    let mut data: Vec<u8> = (0..len).map(|_| g.next() as u8).collect();
    let mut phv = zero_phv(layout);
    let mut extracted = Vec::new();
    let Ok(payload) = parse(
        &prog.parser,
        layout,
        &wire,
        &data,
        &mut phv,
        4,
        &mut extracted,
        &mut NoTrace,
    ) else {
        return Ok(false);
    };
    let stage_entry = [0];
    let pkt = packet_ctx(&stage_entry);
    let mut ext = ExternState::new(&prog.control, seed);
    for action in &prog.control.actions {
        let args = args(&mut g, &action.params);
        run_action(
            action,
            0,
            &args,
            &prog.control,
            layout,
            &mut phv,
            &mut ext,
            &pkt,
            &mut NoTrace,
        );
    }
    for &(_, f) in &layout.intrinsics {
        let field = &layout.fields[f as usize];
        phv.set(field, g.bits(field.width));
    }

    let mut reference = phv.clone();
    update_checksums(&prog.deparser, layout, &wire, &mut reference);
    let mut emitted = Vec::new();
    emit(&prog.deparser, &wire, &reference, &mut emitted);
    emitted.extend_from_slice(&data[payload..]);

    let taken = in_place.deparse(
        &prog.deparser,
        layout,
        &wire,
        &mut phv,
        &extracted,
        payload,
        &mut data,
    );
    prop_assert_eq!(
        phv.containers(),
        reference.containers(),
        "PHV after the checksums"
    );
    if taken {
        prop_assert_eq!(&data, &emitted, "{:#?}", prog);
    }
    Ok(taken)
}

/// The in-place deparser gives the packet emitting gives, whenever it takes the packet,
/// on random programs; and it takes a good share of them (else the test says little).
#[test]
fn the_in_place_deparser_writes_what_emitting_would() {
    let (cases, taken) = (Cell::new(0u32), Cell::new(0u32));
    check(2000, |seed| {
        let t = deparse_case(seed)?;
        cases.set(cases.get() + 1);
        taken.set(taken.get() + t as u32);
        Ok(())
    });
    assert!(
        taken.get() * 5 > cases.get(),
        "the in-place deparser took {} of {} packets",
        taken.get(),
        cases.get()
    );
}

// ---------------------------------------------------------------------------------------------
// (b) Micro-op actions against the general VLIW path

/// A keyless table runs one random action on a random PHV: through the control (the MAU
/// decodes a hazard-free action into micro-ops, with its sets of action data written from
/// the entry) and through the general path, which computes every result before writing.
fn micro_op_case(seed: u64) -> Result<(), TestCaseError> {
    let mut g = Rng(seed);
    let count = 1 + g.below(8);
    let widths: Vec<u16> = (0..count)
        .map(|_| {
            if g.chance(20) {
                33 + g.below(96) as u16
            } else {
                1 + g.below(32) as u16
            }
        })
        .collect();
    let mut p = Placer::new(containers_for(
        &mut g,
        widths.iter().map(|&w| w as u64).sum(),
    ));
    for (i, &w) in widths.iter().enumerate() {
        p.field(&mut g, format!("f{i}"), w);
    }
    let layout = p.layout;
    let all: Vec<FieldId> = (0..layout.fields.len() as FieldId).collect();
    let params = params(&mut g);
    let n = params.len() as u8;
    let args = args(&mut g, &params);
    // One write per destination bit, as the verifier requires.
    let mut ops: Vec<Op> = Vec::new();
    for _ in 0..1 + g.below(5) {
        let o = op(&mut g, &layout, &all, n);
        let bits = |o: &Op| match o.dst_slice {
            Some((hi, lo)) => (mask(hi - lo + 1) << lo, o.dst),
            None => (u128::MAX, o.dst),
        };
        let (m, f) = bits(&o);
        if ops.iter().all(|x| bits(x).1 != f || bits(x).0 & m == 0) {
            ops.push(o);
        }
    }
    let action = Action {
        name: "a".into(),
        ops,
        externs: Vec::new(),
        params,
    };
    let control = ControlProgram {
        stages: 1,
        tables: vec![Table {
            name: "t".into(),
            stage: 0,
            keys: Vec::new(),
            actions: vec![0],
            default_action: ActionCall {
                action: 0,
                args: args.clone(),
            },
            size: 1,
            const_entries: Vec::new(),
            next: TableNext::Always(None),
            direct_counter: None,
            parts: Vec::new(),
        }],
        actions: vec![action],
        entry: Some(Node::Table(0)),
        ..ControlProgram::default()
    };
    let plan = ControlPlan::new(&control, &layout);
    let mut tables =
        vec![TableState::new(&control.tables[0], &[], &plan.action_shapes(&control)).unwrap()];
    let stage_entry = [0];
    let pkt = packet_ctx(&stage_entry);
    let mut fast = random_phv(&mut g, &layout);
    let mut general = fast.clone();
    let mut ext = ExternState::new(&control, seed);
    run_control(
        &control,
        &plan,
        &layout,
        &mut tables,
        &mut fast,
        &mut ext,
        &pkt,
        NoTrace,
    );
    run_action(
        &control.actions[0],
        0,
        &args,
        &control,
        &layout,
        &mut general,
        &mut ext,
        &pkt,
        &mut NoTrace,
    );
    prop_assert_eq!(
        fast.containers(),
        general.containers(),
        "{:#?}\n{:#?}",
        &control.actions[0],
        &layout.fields
    );
    Ok(())
}

#[test]
fn micro_op_actions_compute_what_the_general_path_does() {
    check(3000, micro_op_case);
}

// ---------------------------------------------------------------------------------------------
// (c) The parser's aligned extract against the slice-by-slice extract

/// Random headers of random layouts, extracted from random bytes at a byte boundary: the
/// aligned extract (8-byte loads stored whole or merged, one check per header) stores what
/// reading each slice on its own stores, into a PHV whose other fields hold anything; and
/// with too few bytes for its loads it stores nothing.
fn extract_case(seed: u64) -> Result<(), TestCaseError> {
    let mut g = Rng(seed);
    let headers = 1 + g.below(3) as usize;
    let others = g.below(4) as usize;
    let mut p = Placer::new(containers_for(
        &mut g,
        80 * headers as u64 + 32 * others as u64,
    ));
    for h in 0..headers {
        p.header(&mut g, h);
    }
    for m in 0..others {
        let w = 1 + g.below(40) as u16;
        p.field(&mut g, format!("meta{m}"), w);
    }
    let layout = p.layout;
    let wire = WireLayout::new(
        &layout,
        &ParserProgram::default(),
        &DeparserProgram::default(),
    );
    for (h, header) in wire.headers.iter().enumerate() {
        let bytes = layout.header_bytes(h as HeaderId);
        let at = g.below(4) as usize;
        let len = at + bytes + g.below(12) as usize;
        let data: Vec<u8> = (0..len).map(|_| g.next() as u8).collect();
        let before = random_phv(&mut g, &layout);
        let mut aligned = before.clone();
        let mut reference = before.clone();
        extract_bits(header, &data, at * 8, &mut reference);
        if header.extract_aligned(&data[at..], &mut aligned) {
            prop_assert_eq!(aligned.containers(), reference.containers(), "header {}", h);
        } else {
            prop_assert!(len - at < header.load_end());
            prop_assert_eq!(aligned.containers(), before.containers());
        }
    }
    Ok(())
}

#[test]
fn the_aligned_extract_stores_what_the_slice_by_slice_one_does() {
    check(3000, extract_case);
}

// ---------------------------------------------------------------------------------------------
// (d) Table lookups against a linear search of the entries

/// The bits of a `w`-bit value below a prefix of `len` bits.
fn below_prefix(w: u16, len: u16) -> u128 {
    if len >= w {
        0
    } else {
        mask(w - len)
    }
}

/// The entries of a table of `kinds` in install order, and P4's rules for which one a key
/// finds.
struct Reference {
    kinds: Vec<MatchKind>,
    widths: Vec<u16>,
    entries: Vec<Entry>,
}

impl Reference {
    /// An exact or LPM table (no `ternary` or `range` key, at most one `lpm`): the key alone
    /// names an entry, and the longest matching prefix wins (an exact table has one match at
    /// most). Any other table: the key and the priority name an entry, and the highest
    /// priority wins, the first installed among equals.
    fn by_prefix(&self) -> bool {
        let lpm = self.kinds.iter().filter(|k| **k == MatchKind::Lpm).count();
        lpm <= 1
            && self
                .kinds
                .iter()
                .all(|k| matches!(k, MatchKind::Exact | MatchKind::Lpm))
    }

    /// What names an entry (LPM values are drawn masked to their prefix).
    fn identity(&self, e: &Entry) -> (Vec<KeyMatch>, u32) {
        (e.key.clone(), if self.by_prefix() { 0 } else { e.priority })
    }

    fn lookup(&self, key: &[u128]) -> Option<&Entry> {
        let hits = self.entries.iter().filter(|e| {
            e.key
                .iter()
                .zip(key)
                .zip(&self.widths)
                .all(|((k, &v), &w)| match *k {
                    KeyMatch::Exact(x) => v == x,
                    KeyMatch::Ternary { value, mask } => v & mask == value & mask,
                    KeyMatch::Lpm { value, prefix_len } => {
                        v & !below_prefix(w, prefix_len) == value
                    }
                    KeyMatch::Range { lo, hi } => lo <= v && v <= hi,
                })
        });
        if self.by_prefix() {
            let prefix = |e: &&Entry| {
                e.key
                    .iter()
                    .map(|k| match k {
                        KeyMatch::Lpm { prefix_len, .. } => *prefix_len,
                        _ => 0,
                    })
                    .sum::<u16>()
            };
            hits.max_by_key(prefix)
        } else {
            // `max_by_key` keeps the last of equals: the first installed, searched backwards.
            hits.rev().max_by_key(|e| e.priority)
        }
    }
}

/// A random entry key of a table of `kinds` and `widths` (LPM values masked to the prefix).
fn entry_key(g: &mut Rng, kinds: &[MatchKind], widths: &[u16]) -> Vec<KeyMatch> {
    kinds
        .iter()
        .zip(widths)
        .map(|(k, &w)| match k {
            MatchKind::Exact => KeyMatch::Exact(g.bits(w)),
            MatchKind::Lpm => {
                let prefix_len = g.below(w as u64 + 1) as u16;
                let value = g.bits(w) & !below_prefix(w, prefix_len);
                KeyMatch::Lpm { value, prefix_len }
            }
            MatchKind::Ternary => KeyMatch::Ternary {
                value: g.bits(w),
                mask: g.bits(w),
            },
            MatchKind::Range => {
                let (a, b) = (g.bits(w), g.bits(w));
                KeyMatch::Range {
                    lo: a.min(b),
                    hi: a.max(b),
                }
            }
        })
        .collect()
}

/// A lookup key: half the time one that `e` matches (so that lookups hit), else random.
fn lookup_key(g: &mut Rng, e: Option<&Entry>, widths: &[u16]) -> Vec<u128> {
    match e {
        Some(e) if g.chance(50) => e
            .key
            .iter()
            .zip(widths)
            .map(|(k, &w)| match *k {
                KeyMatch::Exact(v) => v,
                KeyMatch::Lpm { value, prefix_len } => {
                    value | g.bits(w) & below_prefix(w, prefix_len)
                }
                KeyMatch::Ternary { value, .. } => value,
                KeyMatch::Range { lo, .. } => lo,
            })
            .collect(),
        _ => widths.iter().map(|&w| g.bits(w)).collect(),
    }
}

/// Random keys (up to four, a few bits wide, so that entries overlap) and entries, installed
/// and then some deleted: every lookup finds the entry a linear search by P4's rules finds,
/// and an insert is refused as a duplicate exactly when an installed entry has its identity.
fn table_case(seed: u64) -> Result<(), TestCaseError> {
    let mut g = Rng(seed);
    let n = 1 + g.below(4) as usize;
    let shape = g.below(3);
    let lpm_at = g.below(n as u64) as usize;
    let any = [
        MatchKind::Exact,
        MatchKind::Ternary,
        MatchKind::Lpm,
        MatchKind::Range,
    ];
    let kinds: Vec<MatchKind> = (0..n)
        .map(|i| match shape {
            // Exact; an LPM table (one LPM key, the others exact); anything.
            0 => MatchKind::Exact,
            1 if i == lpm_at => MatchKind::Lpm,
            1 => MatchKind::Exact,
            _ => g.pick(&any),
        })
        .collect();
    let widths: Vec<u16> = kinds.iter().map(|_| 1 + g.below(6) as u16).collect();
    let table = Table {
        name: "t".into(),
        stage: 0,
        keys: kinds
            .iter()
            .map(|&kind| TableKey {
                field: 0,
                kind,
                name: "k".into(),
                slice: None,
            })
            .collect(),
        actions: vec![0],
        default_action: ActionCall {
            action: 0,
            args: vec![0],
        },
        size: 64,
        const_entries: Vec::new(),
        next: TableNext::Always(None),
        direct_counter: None,
        parts: Vec::new(),
    };
    let id = pipelines::action_data::ActionShape {
        params: vec![ActionParam {
            name: "id".into(),
            width: 32,
        }],
        ..Default::default()
    };
    let mut t = TableState::new(&table, &widths, &[id]).unwrap();
    let mut r = Reference {
        kinds: kinds.clone(),
        widths: widths.clone(),
        entries: Vec::new(),
    };
    for id in 0..g.below(40) {
        let e = Entry {
            key: entry_key(&mut g, &kinds, &widths),
            action: ActionCall {
                action: 0,
                args: vec![id as u128],
            },
            priority: g.below(3) as u32,
        };
        let dup = r.entries.iter().any(|x| r.identity(x) == r.identity(&e));
        prop_assert_eq!(
            t.insert(e.clone()).is_err(),
            dup,
            "{:?} into {:?}",
            e,
            r.entries
        );
        if !dup {
            r.entries.push(e);
        }
    }
    for round in 0..2 {
        for _ in 0..64 {
            let e = r.entries.get(g.below(r.entries.len() as u64) as usize);
            let key = lookup_key(&mut g, e, &widths);
            let want = r.lookup(&key).map(|e| &e.action);
            prop_assert_eq!(
                t.lookup(&key),
                want,
                "round {}: key {:?} of {:?}",
                round,
                key,
                kinds
            );
        }
        let mut i = 0;
        while i < r.entries.len() {
            if g.chance(40) {
                let e = r.entries.remove(i);
                prop_assert!(t.delete(&e.key, e.priority).is_ok());
            } else {
                i += 1;
            }
        }
    }
    Ok(())
}

#[test]
fn table_lookups_find_what_a_linear_search_finds() {
    check(3000, table_case);
}

proptest! {
    /// The slice-by-slice extract reads each slice with `read_bits`: one bit at a time,
    /// the bits are the same.
    #[test]
    fn read_bits_reads_the_bits_one_by_one(
        data in proptest::collection::vec(any::<u8>(), 1..40),
        offset in 0usize..320,
        width in 1usize..=128,
    ) {
        prop_assume!(offset + width <= data.len() * 8);
        let one_by_one = (offset..offset + width)
            .fold(0u128, |v, i| v << 1 | (data[i / 8] >> (7 - i % 8) & 1) as u128);
        prop_assert_eq!(read_bits(&data, offset, width), one_by_one);
    }
}

/// What the fast paths rely on of a layout, the verifier makes sure of: no two slices of a
/// field, nor of a header's fields, hold the same container bits.
#[test]
fn the_verifier_refuses_a_header_or_field_holding_bits_twice() {
    use crate::common::{spec, Builder};
    use pipelines::verify::verify_gress;
    let (b, h) = Builder::router(2);
    assert_eq!(verify_gress("ingress", &b.g, &spec()), Ok(()));
    let fields = &b.g.phv.fields;
    let (ttl, proto) = (h.ttl as usize, h.proto as usize);
    let mut twice = b.g.clone();
    twice.phv.fields[proto].slices = fields[ttl].slices.clone();
    let e = verify_gress("ingress", &twice, &spec()).unwrap_err();
    assert!(e.place.contains("phv.headers[1]"), "{e}");
    assert!(e.reason.contains("share container bits"), "{e}");
    let mut twice = b.g.clone();
    // The MAC's low 16 bits over its high 32.
    let dst = &mut twice.phv.fields[h.eth_dst as usize];
    dst.slices[1].container = dst.slices[0].container;
    dst.slices[1].lsb = dst.slices[0].lsb;
    let e = verify_gress("ingress", &twice, &spec()).unwrap_err();
    assert!(e.reason.contains("two of its slices share"), "{e}");
}
