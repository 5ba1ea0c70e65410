//! Extern declarations: each instance a control declares (`Register`, `RegisterAction`,
//! `MinMaxAction`, `Meter`, `Counter`, `DirectCounter`, `Hash`, `Random`, `QueueDepth`)
//! checked and turned into the array or stateful-ALU program it stands for. The arrays are
//! placed with the table that drives them later, by the allocator.

use pipelines::program::*;

use super::{ControlLowering, Extern};
use crate::ast::{self, Expr, ExprKind};
use crate::check::{Env, FieldRef, Ty};
use crate::error::{err, ErrorKind, Result};
use crate::salu;
use crate::tna;

/// A width from a type argument (`bit<N>`, `bool` or a typedef of them).
fn type_width(env: &Env, t: &ast::TypeRef) -> Result<u16> {
    match env.resolve_type(t)? {
        Ty::Bits(w) => Ok(w),
        Ty::Bool => Ok(1),
        _ => Err(err(
            ErrorKind::Unsupported,
            t.span(),
            "extern type arguments must be bit<N> (register pairs and structs are not supported)",
        )),
    }
}

/// `Type_t.MEMBER` for one of TNA's built-in enums: the index of the member in `members`.
fn builtin_enum(e: &Expr, ty: &str, members: &[&str]) -> Result<usize> {
    if let ExprKind::Member(base, m) = &e.kind {
        if matches!(&base.kind, ExprKind::Name(n) if n.name == ty) {
            if let Some(i) = members.iter().position(|x| *x == m.name) {
                return Ok(i);
            }
        }
    }
    let list: Vec<String> = members.iter().map(|m| format!("`{ty}.{m}`")).collect();
    Err(err(
        ErrorKind::Type,
        e.span,
        format!("expected one of {}", list.join(", ")),
    ))
}

/// A catalogue CRC, as the `Hash` extern's algorithms name them.
fn crc(width: u8, poly: u64, init: u64, refin: bool, refout: bool, xorout: u64) -> HashAlgorithm {
    HashAlgorithm::Crc {
        width,
        poly,
        init,
        refin,
        refout,
        xorout,
    }
}

/// `CounterType_t.PACKETS|BYTES|PACKETS_AND_BYTES` as what a counter counts.
fn count_kind(e: &Expr) -> Result<CountKind> {
    Ok(
        match builtin_enum(
            e,
            "CounterType_t",
            &["PACKETS", "BYTES", "PACKETS_AND_BYTES"],
        )? {
            0 => CountKind::Packets,
            1 => CountKind::Bytes,
            _ => CountKind::PacketsAndBytes,
        },
    )
}

impl<'e, 'a, 'l> ControlLowering<'e, 'a, 'l> {
    /// Check one extern instantiation (its type, type arguments and constructor
    /// arguments) and create the array or program it stands for.
    pub(super) fn declare_extern(&mut self, i: &ast::Instantiation) -> Result<Extern> {
        let env = self.scope.env();
        let tname = i.type_name.name.as_str();
        let qualified = self.qualified(&i.name.name);
        let nargs = |n: std::ops::RangeInclusive<usize>, what: &str| -> Result<()> {
            if !n.contains(&i.args.len()) {
                return Err(err(
                    ErrorKind::Type,
                    i.span,
                    format!("`{tname}` takes {what}; {} given", i.args.len()),
                ));
            }
            Ok(())
        };
        let ntypes = |n: usize, what: &str| -> Result<()> {
            if i.type_args.len() != n {
                return Err(err(
                    ErrorKind::Type,
                    i.type_name.span,
                    format!("write `{tname}<{what}>`"),
                ));
            }
            Ok(())
        };
        if !i.functions.is_empty() && ![tna::REGISTER_ACTION, tna::MINMAX_ACTION].contains(&tname) {
            return Err(err(
                ErrorKind::Unsupported,
                i.span,
                format!("an initializer block on `{tname}` is not supported"),
            ));
        }
        let size = |e: &Expr| -> Result<u32> {
            u32::try_from(env.const_value(e, None)?)
                .ok()
                .filter(|s| *s > 0)
                .ok_or_else(|| err(ErrorKind::Type, e.span, "size must be 1..2^32"))
        };
        Ok(match tname {
            tna::REGISTER => {
                ntypes(2, "T, I")?;
                nargs(1..=2, "a size and an optional initial value")?;
                let width = type_width(env, &i.type_args[0])?;
                let index = type_width(env, &i.type_args[1])?;
                let max = self.spec.salu.max_width_bits as u16;
                if width > max {
                    return Err(err(
                        ErrorKind::Resource,
                        i.type_args[0].span(),
                        format!(
                            "register `{}` has bit<{width}> elements; a stateful ALU of this chip \
                             handles at most {max} bits",
                            i.name.name
                        ),
                    ));
                }
                let init = match i.args.get(1) {
                    Some(e) => env.const_value(e, Some(width))?,
                    None => 0,
                };
                let id = self.control.registers.len() as RegisterId;
                self.control.registers.push(RegisterArray {
                    name: qualified,
                    stage: 0,
                    width: width as u8,
                    size: size(&i.args[0])?,
                    init,
                });
                Extern::Register { id, width, index }
            }
            tna::REGISTER_ACTION => self.register_action(i, qualified, false)?,
            tna::MINMAX_ACTION => self.register_action(i, qualified, true)?,
            tna::METER => {
                ntypes(1, "I")?;
                nargs(
                    2..=2,
                    "a size and `MeterType_t.PACKETS` or `MeterType_t.BYTES`",
                )?;
                let index = type_width(env, &i.type_args[0])?;
                let unit = match builtin_enum(&i.args[1], "MeterType_t", &["PACKETS", "BYTES"])? {
                    0 => CountKind::Packets,
                    _ => CountKind::Bytes,
                };
                let id = self.control.meters.len() as MeterId;
                self.control.meters.push(MeterArray {
                    name: qualified,
                    stage: 0,
                    size: size(&i.args[0])?,
                    unit,
                    byte_count_adjust: 0,
                });
                Extern::Meter { id, index }
            }
            tna::COUNTER => {
                ntypes(2, "W, I")?;
                nargs(2..=2, "a size and a `CounterType_t`")?;
                let index = type_width(env, &i.type_args[1])?;
                let kind = count_kind(&i.args[1])?;
                let id = self.control.counters.len() as CounterId;
                self.control.counters.push(CounterArray {
                    name: qualified,
                    stage: 0,
                    size: size(&i.args[0])?,
                    kind,
                });
                Extern::Counter { id, index }
            }
            tna::DIRECT_COUNTER => {
                ntypes(1, "W")?;
                nargs(1..=1, "a `CounterType_t`")?;
                Extern::DirectCounter(count_kind(&i.args[0])?)
            }
            tna::HASH => {
                ntypes(1, "W")?;
                nargs(1..=2, "a `HashAlgorithm_t` and an optional seed")?;
                let width = type_width(env, &i.type_args[0])?;
                let alg = builtin_enum(
                    &i.args[0],
                    "HashAlgorithm_t",
                    &["IDENTITY", "CRC8", "CRC16", "CRC32"],
                )
                .map_err(|e| {
                    err(
                        ErrorKind::Unsupported,
                        e.span,
                        format!(
                            "{}: the supported hash algorithms are IDENTITY, CRC8, CRC16 and CRC32",
                            env.text(e.span)
                        ),
                    )
                })?;
                let mut algorithm = match alg {
                    0 => HashAlgorithm::Identity,
                    // CRC-8/SMBUS.
                    1 => crc(8, 0x07, 0, false, false, 0),
                    // CRC-16/ARC, TNA's CRC16.
                    2 => crc(16, 0x8005, 0, true, true, 0),
                    // CRC-32/ISO-HDLC, TNA's CRC32.
                    _ => crc(32, 0x04C1_1DB7, 0xFFFF_FFFF, true, true, 0xFFFF_FFFF),
                };
                if let Some(seed) = i.args.get(1) {
                    match &mut algorithm {
                        HashAlgorithm::Crc { width, init, .. } => {
                            *init = env.const_value(seed, None)? as u64;
                            if *width < 64 && *init >> *width != 0 {
                                return Err(err(
                                    ErrorKind::Type,
                                    seed.span,
                                    format!("the seed does not fit in {width} bits"),
                                ));
                            }
                        }
                        HashAlgorithm::Identity => {
                            return Err(err(ErrorKind::Type, seed.span, "IDENTITY takes no seed"))
                        }
                    }
                }
                Extern::Hash { algorithm, width }
            }
            tna::RANDOM => {
                ntypes(1, "W")?;
                nargs(0..=0, "no arguments")?;
                Extern::Random {
                    width: type_width(env, &i.type_args[0])?,
                }
            }
            tna::QUEUE_DEPTH => {
                if self.gress != Gress::Ingress {
                    return Err(err(
                        ErrorKind::Unsupported,
                        i.type_name.span,
                        format!(
                            "`{tname}` is only available in ingress: the TM publishes queue \
                             depths to the ingress pipes (egress has `eg_intr_md.enq_qdepth` \
                             and `deq_qdepth`)"
                        ),
                    ));
                }
                if !i.type_args.is_empty() {
                    return Err(err(
                        ErrorKind::Type,
                        i.type_name.span,
                        "write `QueueDepth()`: the depth is bit<19>, like `enq_qdepth`",
                    ));
                }
                nargs(0..=0, "no arguments")?;
                Extern::QueueDepth
            }
            "DirectMeter" => {
                return Err(err(
                    ErrorKind::Unsupported,
                    i.type_name.span,
                    "extern `DirectMeter` is not supported (the pipe has no direct meters); use a \
                     `Meter` indexed by a field",
                ))
            }
            tna::CHECKSUM => {
                return Err(err(
                    ErrorKind::Unsupported,
                    i.type_name.span,
                    "`Checksum` is only supported in a deparser",
                ))
            }
            other => {
                return Err(err(
                    ErrorKind::Unsupported,
                    i.type_name.span,
                    format!("extern `{other}` is not supported"),
                ))
            }
        })
    }

    /// `RegisterAction<T, I, U>(reg) name = { void apply(inout T value, out U rv) { ... } };`,
    /// or with `minmax`, `MinMaxAction<T, I, U>(reg) name = { void apply(inout bit<128> value,
    /// out U rv, out U lane) { rv = this.min8(value, mask, lane, postmod); } };` where `I`
    /// indexes 128-bit words of the register.
    fn register_action(
        &mut self,
        i: &ast::Instantiation,
        qualified: String,
        minmax: bool,
    ) -> Result<Extern> {
        let env = self.scope.env();
        let kind = if minmax {
            tna::MINMAX_ACTION
        } else {
            tna::REGISTER_ACTION
        };
        if !(2..=3).contains(&i.type_args.len()) {
            return Err(err(
                ErrorKind::Type,
                i.type_name.span,
                format!("write `{kind}<T, I, U>(register)`"),
            ));
        }
        let width = type_width(env, &i.type_args[0])?;
        let index = type_width(env, &i.type_args[1])?;
        let out = match i.type_args.get(2) {
            Some(t) => type_width(env, t)?,
            None => width,
        };
        let reg_name = match i.args.as_slice() {
            [Expr {
                kind: ExprKind::Name(n),
                ..
            }] => n,
            _ => {
                return Err(err(
                    ErrorKind::Type,
                    i.span,
                    format!("`{kind}` takes the register it updates"),
                ))
            }
        };
        let Some(Extern::Register {
            id: register,
            width: rw,
            index: ri,
        }) = self.externs.get(&reg_name.name).cloned()
        else {
            return Err(err(
                ErrorKind::Undeclared,
                reg_name.span,
                format!("undeclared register `{}`", reg_name.name),
            ));
        };
        // A min/max action indexes words, not elements: only the element type must agree.
        if rw != width || (!minmax && ri != index) {
            return Err(err(
                ErrorKind::Type,
                i.type_name.span,
                format!(
                    "`{}` is Register<bit<{rw}>, bit<{ri}>> but this {kind} is for \
                     <bit<{width}>, bit<{index}>>",
                    reg_name.name
                ),
            ));
        }
        let [f] = i.functions.as_slice() else {
            return Err(err(
                ErrorKind::Type,
                i.span,
                format!(
                    "a {kind} needs exactly one function: `void apply(inout T value[, out U \
                     rv]) {{ ... }}`"
                ),
            ));
        };
        if f.name.name != "apply" || f.ret.is_some() {
            return Err(err(
                ErrorKind::Unsupported,
                f.name.span,
                format!("only `void apply(...)` is supported in a {kind}"),
            ));
        }
        let max_params = if minmax { 3 } else { 2 };
        let Some((value, outs)) = f.params.split_first().filter(|(_, o)| o.len() < max_params)
        else {
            return Err(err(
                ErrorKind::Type,
                f.name.span,
                if minmax {
                    "`apply` takes `inout bit<128> value`, optionally `out U rv` and `out U lane`"
                } else {
                    "`apply` takes `inout T value` and optionally `out U rv`"
                },
            ));
        };
        let value_width = if minmax { MinMax::WORD_BITS } else { width };
        if value.dir != ast::Direction::InOut || type_width(env, &value.ty)? != value_width {
            return Err(err(
                ErrorKind::Type,
                value.name.span,
                format!(
                    "the first parameter must be `inout bit<{value_width}> {}`",
                    value.name.name
                ),
            ));
        }
        for r in outs {
            if r.dir != ast::Direction::Out || type_width(env, &r.ty)? != out {
                return Err(err(
                    ErrorKind::Type,
                    r.name.span,
                    format!(
                        "an output parameter must be `out bit<{out}> {}`",
                        r.name.name
                    ),
                ));
            }
        }
        let cx = salu::SaluContext {
            scope: &self.scope,
            name: &i.name.name,
            value: &value.name.name,
            out: outs.first().map(|r| r.name.name.as_str()),
            width,
            out_width: out,
            spec: &self.spec.salu,
        };
        let layout = &mut *self.layout;
        let mut field = |fr: &FieldRef| layout.field(env, fr);
        let (prog, unit, lane_out) = if minmax {
            let mcx = salu::MinMaxContext {
                salu: cx,
                lane: outs.get(1).map(|r| r.name.name.as_str()),
            };
            let m = salu::compile_minmax(&mcx, &f.body, &mut field)?;
            // The unit returns the selected lane's value as read.
            let outputs = if m.value_out {
                vec![SaluOutput {
                    when: Predicate::ALWAYS,
                    value: SaluValue::Old,
                }]
            } else {
                Vec::new()
            };
            let prog = salu::SaluProgram {
                conditions: Vec::new(),
                updates: Vec::new(),
                outputs,
            };
            (prog, Some(m.minmax), m.lane_out)
        } else {
            (salu::compile(&cx, &f.body, &mut field)?, None, false)
        };
        let id = self.control.salus.len() as SaluId;
        self.control.salus.push(StatefulAlu {
            name: qualified,
            register,
            conditions: prog.conditions,
            updates: prog.updates,
            outputs: prog.outputs,
            minmax: unit,
        });
        Ok(Extern::RegisterAction {
            salu: id,
            index,
            out,
            minmax,
            lane_out,
        })
    }
}
