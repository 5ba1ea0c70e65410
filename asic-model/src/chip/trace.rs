//! Recording the per-packet trace ([`crate::trace`]): the chip numbers every packet as it
//! comes into being and, for the packets the filter may keep, records each step of its life
//! at the time and cycle it happens, naming everything from the program.
//!
//! Nothing is recorded, and nothing costs, unless [`Chip::set_trace`] was called: the chip
//! keeps the recorder in an `Option` tested once where a packet comes into being, at each
//! gress exit, TM decision and at its end; a traced gress runs through
//! `LoadedGress::process_traced`, the same walk instantiated with a recording tracer
//! (`pipelines::trace`), so an untraced packet runs today's code. A packet's records are
//! kept while it is inside the chip and handed out when its life ends (departure, drop, or
//! [`Chip::end_trace`]) if the filter keeps it: the port filter needs every port it went
//! through.

use super::packet::Packet;
use super::{Chip, DropReason};
use crate::trace::{
    ContainerChange, Extracted, HitEntry, Named, Origin, PacketTrace, TraceEvent, TraceFilter,
    TraceRecord, TraceSeen,
};
use pipelines::mau::{DepthView, NoDepths};
use pipelines::parser::ParseError;
use pipelines::phv::mask;
use pipelines::pipe::{GressInputs, GressOutputs, LoadedGress};
use pipelines::program::{Cond, Gress, GressProgram, Next, Operand, PhvLayout};
use pipelines::spec::PhvSpec;
use pipelines::time::{Clock, Time};
use pipelines::trace::{GressLog, MauEvent, PhvChange};
use tm::{Admitted, EnqueueRequest, Refusal};

/// A packet being recorded.
struct Live {
    id: u64,
    records: Vec<TraceRecord>,
    /// Every port it came in on, was queued for or left by.
    ports: Vec<u16>,
    /// Its pass through the pipes (recirculation starts another).
    pass: u32,
}

/// The chip's recorder.
pub(super) struct ChipTrace {
    filter: TraceFilter,
    clock: Clock,
    /// The next packet's number.
    next: u64,
    /// The packets being recorded, by handle.
    live: Vec<Option<Live>>,
    /// Packets whose life ended and which the filter keeps, not yet handed out.
    done: Vec<PacketTrace>,
    /// The gress being recorded (reused).
    log: GressLog,
    /// Per gress: each container's name and the fields with bits in it.
    containers: [Vec<(String, Vec<String>)>; 2],
    seen: TraceSeen,
}

/// A gress a packet is issued into.
#[derive(Clone, Copy)]
struct Issue {
    gress: Gress,
    pipe: u16,
    port: u16,
    cycle: u64,
}

impl ChipTrace {
    /// Whether packet `h` is being recorded.
    #[inline]
    pub(super) fn records(&self, h: u32) -> bool {
        self.live.get(h as usize).is_some_and(Option::is_some)
    }

    fn live(&mut self, h: u32) -> Option<&mut Live> {
        self.live.get_mut(h as usize).and_then(Option::as_mut)
    }

    /// Number the packet that just came into being in slot `h`; record it if the filter
    /// may keep it.
    fn number(&mut self, h: u32) -> u64 {
        let id = self.next;
        self.next += 1;
        self.seen.packets += 1;
        if self.live.len() <= h as usize {
            self.live.resize_with(h as usize + 1, || None);
        }
        self.live[h as usize] = self.filter.wants_packet(id).then(|| Live {
            id,
            records: Vec::new(),
            ports: Vec::new(),
            pass: 1,
        });
        id
    }

    fn push(&mut self, h: u32, time: Time, cycle: Option<u64>, event: TraceEvent) {
        let Some(l) = self.live.get_mut(h as usize).and_then(Option::as_mut) else {
            return;
        };
        l.records.push(TraceRecord { time, cycle, event });
        let s = &mut self.seen;
        s.first = Some(s.first.map_or(time, |f| f.min(time)));
        s.last = Some(s.last.map_or(time, |l| l.max(time)));
    }

    /// A record at cycle `cycle`.
    fn at_cycle(&mut self, h: u32, cycle: u64, event: TraceEvent) {
        let t = self.clock.time_of(cycle);
        self.push(h, t, Some(cycle), event);
    }

    /// A record at `now`, with its cycle if `now` is a cycle edge (a gress exit and what
    /// happens there: the TM's admission, copies, drops).
    fn at_time(&mut self, h: u32, now: Time, event: TraceEvent) {
        let c = self.clock.cycle_at_or_after(now);
        let cycle = (self.clock.time_of(c) == now).then_some(c);
        self.push(h, now, cycle, event);
    }

    fn went_through(&mut self, h: u32, port: u16) {
        if let Some(l) = self.live(h) {
            if !l.ports.contains(&port) {
                l.ports.push(port);
            }
            self.seen.ports.insert(port);
        }
    }

    /// The end of packet `h`'s life: kept if the filter keeps it.
    fn end(&mut self, h: u32) {
        let Some(mut l) = self.live.get_mut(h as usize).and_then(Option::take) else {
            return;
        };
        if !self.filter.wants_ports(&l.ports) {
            return;
        }
        let f = &self.filter;
        l.records.retain(|r| f.wants_time(r.time));
        if !l.records.is_empty() {
            self.seen.matched += 1;
            self.done.push(PacketTrace {
                packet: l.id,
                records: l.records,
            });
        }
    }

    /// Packet `h` takes an issue slot.
    fn issue(&mut self, h: u32, at: Issue, latency_cycles: u64, runs: bool) {
        self.went_through(h, at.port);
        let pass = self.live(h).map_or(1, |l| l.pass);
        let event = TraceEvent::Issue {
            gress: at.gress,
            pipe: at.pipe,
            port: at.port,
            pass,
            latency_cycles,
            runs,
        };
        self.at_cycle(h, at.cycle, event);
    }

    /// Packet `pkt` (`h`) leaves the ingress gress of `pipe`, which runs on it; recorded
    /// (its issue and the gress, [`ChipTrace::record_gress`]) if the filter may keep it.
    /// `latency`: the gress's cycles.
    #[cold]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn ingress(
        &mut self,
        h: u32,
        pipe: u16,
        latency: u64,
        gress: &mut LoadedGress,
        pkt: &mut Packet,
        inputs: &GressInputs,
        depths: &dyn DepthView,
    ) -> Result<GressOutputs, ParseError> {
        if !self.records(h) {
            return gress.process_with_depths(&mut pkt.data, inputs, depths);
        }
        let at = Issue {
            gress: Gress::Ingress,
            pipe,
            port: pkt.ingress_port,
            cycle: pkt.issue,
        };
        self.issue(h, at, latency, true);
        self.run(h, gress, &mut pkt.data, inputs, depths)
    }

    /// Packet `h` leaves the egress gress, which runs on it; recorded as
    /// [`ChipTrace::ingress`] (its issue was recorded when the TM served it).
    #[cold]
    pub(super) fn egress(
        &mut self,
        h: u32,
        gress: &mut LoadedGress,
        data: &mut Vec<u8>,
        inputs: &GressInputs,
    ) -> Result<GressOutputs, ParseError> {
        if !self.records(h) {
            return gress.process(data, inputs);
        }
        self.run(h, gress, data, inputs, &NoDepths)
    }

    /// Run `gress` on packet `h` through the recording walk, and record what it did: each
    /// parser state, each stage at its entry cycle with its lookups, externs and PHV
    /// changes, the deparser and what the program asked of the chip.
    fn run(
        &mut self,
        h: u32,
        gress: &mut LoadedGress,
        data: &mut Vec<u8>,
        inputs: &GressInputs,
        depths: &dyn DepthView,
    ) -> Result<GressOutputs, ParseError> {
        let bytes_in = data.len() as u32;
        let mut log = std::mem::take(&mut self.log);
        let res = gress.process_traced(data, inputs, depths, &mut log);
        self.record_gress(
            h,
            gress,
            &log,
            &res,
            inputs.issue_cycle,
            bytes_in,
            data.len(),
        );
        self.log = log;
        res
    }

    #[allow(clippy::too_many_arguments)]
    fn record_gress(
        &mut self,
        h: u32,
        gress: &LoadedGress,
        log: &GressLog,
        res: &Result<GressOutputs, ParseError>,
        issue: u64,
        bytes_in: u32,
        bytes_out: usize,
    ) {
        let g = gress.gress();
        let prog = gress.program();
        let layout = &prog.phv;
        let timing = gress.timing();
        for v in &log.parser {
            let state = &prog.parser.states[v.state as usize];
            let extracted = v
                .extracted
                .iter()
                .map(|&(hd, bit)| Extracted {
                    header: layout.headers[hd as usize].name.clone(),
                    byte: bit / 8,
                })
                .collect();
            let select = v
                .next
                .filter(|_| {
                    matches!(
                        state.transition,
                        pipelines::program::Transition::Select { .. }
                    )
                })
                .map(|(k, _)| k);
            let next = v.next.map(|(_, n)| match n {
                Next::Accept => "accept".to_string(),
                Next::Reject => "reject".to_string(),
                Next::State(s) => prog.parser.states[s as usize].name.clone(),
            });
            let event = TraceEvent::ParserState {
                gress: g,
                state: state.name.clone(),
                extracted,
                select,
                next,
            };
            self.at_cycle(h, issue, event);
        }
        let parser_error = match res {
            Err(e) => Some((e.to_string(), false)),
            Ok(o) if o.parser_error != 0 => Some((parser_error_name(o.parser_error), true)),
            Ok(_) => None,
        };
        if let Some((error, continued)) = parser_error {
            let event = TraceEvent::ParserError {
                gress: g,
                error,
                continued,
            };
            self.at_cycle(h, issue, event);
        }
        self.phv(h, g, None, issue, &log.parser_changes);
        let Ok(out) = res else {
            return;
        };
        for s in 0..timing.stages.len() {
            let stage = s as u16;
            let cycle = issue + timing.stage_entry(s) as u64;
            let ran = log.stages.iter().find(|l| l.stage == stage);
            let event = TraceEvent::Stage {
                gress: g,
                stage,
                cycles: timing.stages[s],
                applied: ran.is_some(),
            };
            self.at_cycle(h, cycle, event);
            if let Some(l) = ran {
                for e in &l.events {
                    let event = mau_event(prog, g, stage, e);
                    self.at_cycle(h, cycle, event);
                }
                self.phv(h, g, Some(stage), cycle, &l.changes);
            }
        }
        let deparser = issue + (timing.total() - timing.deparser) as u64;
        let phv = gress.phv();
        let headers = prog
            .deparser
            .emit
            .iter()
            .map(|&hd| &layout.headers[hd as usize])
            .filter(|hd| phv.get(&layout.fields[hd.valid as usize]) != 0)
            .map(|hd| hd.name.clone())
            .collect();
        let event = TraceEvent::Deparser {
            gress: g,
            headers,
            bytes_in,
            bytes_out: bytes_out as u32,
        };
        self.at_cycle(h, deparser, event);
        let event = TraceEvent::Exit {
            gress: g,
            outputs: outputs(out),
        };
        self.at_cycle(h, issue + timing.total() as u64, event);
    }

    /// The PHV changes of a part of gress `g` (none: the parser), named.
    fn phv(&mut self, h: u32, g: Gress, stage: Option<u16>, cycle: u64, changes: &[PhvChange]) {
        if changes.is_empty() {
            return;
        }
        let names = &self.containers[g as usize];
        let changes = changes
            .iter()
            .map(|c| {
                let (name, fields) = names
                    .get(c.container as usize)
                    .cloned()
                    .unwrap_or_else(|| (format!("#{}", c.container), Vec::new()));
                ContainerChange {
                    container: name,
                    number: c.container,
                    fields,
                    old: c.old as u128,
                    new: c.new as u128,
                }
            })
            .collect();
        let event = TraceEvent::Phv {
            gress: g,
            stage,
            changes,
        };
        self.at_cycle(h, cycle, event);
    }
}

/// A parser error code as TNA names it.
fn parser_error_name(code: u16) -> String {
    use pipelines::parser::{
        PARSER_ERROR_NO_MATCH, PARSER_ERROR_PARTIAL_HDR, PARSER_ERROR_TIMEOUT_HW,
    };
    let name = match code {
        PARSER_ERROR_NO_MATCH => "PARSER_ERROR_NO_MATCH: no state matched (reject)",
        PARSER_ERROR_PARTIAL_HDR => "PARSER_ERROR_PARTIAL_HDR: the packet ended inside a header",
        PARSER_ERROR_TIMEOUT_HW => "PARSER_ERROR_TIMEOUT_HW: too many states",
        _ => "unknown",
    };
    format!("code {code:#x} ({name})")
}

/// What a gress asked of the chip: the outputs that are set.
fn outputs(o: &GressOutputs) -> Vec<(&'static str, u64)> {
    let r = &o.requests;
    let mut v = Vec::new();
    if let Some(p) = o.ucast_egress_port {
        v.push(("ucast_egress_port", p as u64));
        v.push(("qid", o.queue as u64));
    }
    for (name, value) in [
        ("drop_ctl", o.drop_ctl as u64),
        ("ingress_cos", r.ingress_cos as u64),
        ("mcast_grp_a", r.mcast_group as u64),
        ("deflect_on_drop", r.deflect_on_drop as u64),
        ("bypass_egress", r.bypass_egress as u64),
        ("mirror_session", r.mirror_session as u64),
        ("mtu_trunc_len", r.mirror_truncate_bytes as u64),
        ("recirculate", r.recirculate as u64),
        ("adv_flow_ctl", r.adv_flow_ctl as u64),
        ("packet_color", r.packet_color as u64),
    ] {
        if value != 0 {
            v.push((name, value));
        }
    }
    v
}

/// A stage's event, named from the program.
fn mau_event(prog: &GressProgram, gress: Gress, stage: u16, e: &MauEvent) -> TraceEvent {
    let c = &prog.control;
    let layout = &prog.phv;
    let field = |f: u16| layout.fields[f as usize].name.clone();
    match e {
        MauEvent::Gateway { id, holds } => TraceEvent::Gateway {
            gress,
            stage,
            gateway: *id,
            condition: condition(&c.gateways[*id as usize].cond, layout),
            holds: *holds,
        },
        MauEvent::Table {
            id,
            key,
            hit,
            action,
            args,
        } => {
            let t = &c.tables[*id as usize];
            let a = &c.actions[*action as usize];
            TraceEvent::Table {
                gress,
                stage,
                table: t.name.clone(),
                key: t
                    .keys
                    .iter()
                    .zip(key)
                    .map(|(k, &value)| Named {
                        name: k.name.clone(),
                        value,
                    })
                    .collect(),
                hit: hit.as_ref().map(|h| HitEntry {
                    key: h.key.iter().map(ToString::to_string).collect(),
                    priority: h.priority,
                    slot: h.slot,
                }),
                action: a.name.clone(),
                args: a
                    .params
                    .iter()
                    .zip(args)
                    .map(|(p, &value)| Named {
                        name: p.name.clone(),
                        value,
                    })
                    .collect(),
            }
        }
        MauEvent::Register {
            salu,
            index,
            old,
            new,
            output,
        } => {
            let s = &c.salus[*salu as usize];
            TraceEvent::Register {
                gress,
                stage,
                register: c.registers[s.register as usize].name.clone(),
                program: s.name.clone(),
                index: *index,
                old: *old as u128,
                new: *new as u128,
                output: *output,
            }
        }
        MauEvent::Meter {
            meter,
            index,
            colour,
        } => TraceEvent::Meter {
            gress,
            stage,
            meter: c.meters[*meter as usize].name.clone(),
            index: *index,
            colour: match colour {
                0 => "green",
                1 => "yellow",
                _ => "red",
            },
        },
        MauEvent::Counter { counter, index } => TraceEvent::Counter {
            gress,
            stage,
            counter: c.counters[*counter as usize].name.clone(),
            index: *index,
        },
        MauEvent::Hash { hash, value } => TraceEvent::Hash {
            gress,
            stage,
            hash: c.hashes[*hash as usize].name.clone(),
            value: *value,
        },
        // The generator's draw, as the field holds it.
        MauEvent::Random { field: f, value } => TraceEvent::Random {
            gress,
            stage,
            field: field(*f),
            value: value & mask(layout.fields[*f as usize].width as u32),
        },
        MauEvent::QueueDepth { port, queue, value } => TraceEvent::QueueDepth {
            gress,
            stage,
            port: *port,
            queue: *queue,
            value: *value,
        },
    }
}

/// A gateway's condition as P4 would write it, with field names.
fn condition(c: &Cond, layout: &PhvLayout) -> String {
    let operand = |o: &Operand| match *o {
        Operand::Field(f) => layout.fields[f as usize].name.clone(),
        Operand::Const(v) if v < 10 => v.to_string(),
        Operand::Const(v) => format!("{v:#x}"),
        Operand::Param(i) => format!("param {i}"),
        Operand::Slice { field, hi, lo } => {
            format!("{}[{hi}:{lo}]", layout.fields[field as usize].name)
        }
    };
    match c {
        Cond::True => "true".into(),
        Cond::Cmp { a, op, b } => {
            format!("{} {} {}", operand(a), op.symbol(), operand(b))
        }
        Cond::And(x, y) => format!("({} && {})", condition(x, layout), condition(y, layout)),
        Cond::Or(x, y) => format!("({} || {})", condition(x, layout), condition(y, layout)),
        Cond::Not(x) => format!("!({})", condition(x, layout)),
    }
}

/// Each container's name (`B`, `H`, `W` and its number in its class, as P4 Insight names
/// them) and the fields with bits in it (`name[hi:lo]` for part of a field), for the PHV of
/// `layout` on a pipe of `spec`.
fn container_names(layout: &PhvLayout, spec: &PhvSpec) -> Vec<(String, Vec<String>)> {
    let mut names: Vec<(String, Vec<String>)> = (0..layout.containers() as u16)
        .map(|c| {
            let (b8, b16) = (spec.b8, spec.b16);
            let name = match spec.width(c) {
                Some(8) => format!("B{c}"),
                Some(16) => format!("H{}", c - b8),
                _ => format!("W{}", c - b8 - b16),
            };
            (name, Vec::new())
        })
        .collect();
    for f in &layout.fields {
        // Slices are most significant first.
        let mut hi = f.width;
        for s in &f.slices {
            let lo = hi - s.width as u16;
            let label = if s.width as u16 == f.width {
                f.name.clone()
            } else {
                format!("{}[{}:{lo}]", f.name, hi - 1)
            };
            if let Some((_, fields)) = names.get_mut(s.container as usize) {
                fields.push(label);
            }
            hi = lo;
        }
    }
    names
}

impl Chip {
    /// Record a per-packet trace of the packets `filter` keeps ([`crate::trace`]), from now
    /// on. A filter naming a port the chip does not have is refused, naming it.
    pub fn set_trace(&mut self, filter: TraceFilter) -> Result<(), String> {
        let ids = self.ports.len() as u16;
        if let Some(&p) = filter.ports.iter().find(|&&p| p >= ids) {
            return Err(format!(
                "--trace-port {p}: the chip has no port {p} ({})",
                self.port_ranges()
            ));
        }
        if let (Some(a), Some(b)) = (filter.from, filter.to) {
            if a > b {
                return Err(format!(
                    "--trace-from-ns {} is after --trace-to-ns {}: the window is empty",
                    a.ns(),
                    b.ns()
                ));
            }
        }
        let spec = &self.profile.pipe.phv;
        let names = |g: Gress| {
            let p = &self.pipes[0];
            let gress = match g {
                Gress::Ingress => &p.ingress,
                Gress::Egress => &p.egress,
            };
            container_names(&gress.program().phv, spec)
        };
        self.trace = Some(Box::new(ChipTrace {
            filter,
            clock: self.clock,
            next: 0,
            live: Vec::new(),
            done: Vec::new(),
            log: GressLog::default(),
            containers: [names(Gress::Ingress), names(Gress::Egress)],
            seen: TraceSeen::default(),
        }));
        Ok(())
    }

    /// The chip's port ids as a person reads them: `ports 0-3 front panel, 4-7
    /// recirculation, 8-9 packet generator`.
    fn port_ranges(&self) -> String {
        let front = self.front;
        let recirc = self.profile.pipes * self.profile.recirculation.ports_per_pipe;
        let all = self.ports.len() as u16;
        let mut parts = Vec::new();
        for (what, from, to) in [
            ("front panel", 0, front),
            ("recirculation", front, front + recirc),
            ("packet generator", front + recirc, all),
        ] {
            match to.saturating_sub(from) {
                0 => {}
                1 => parts.push(format!("{from} {what}")),
                _ => parts.push(format!("{from}-{} {what}", to - 1)),
            }
        }
        format!("ports {}", parts.join(", "))
    }

    /// The traced packets whose life has ended since the last call, each with its records
    /// (nothing when the chip is not traced).
    pub fn drain_trace(&mut self) -> impl Iterator<Item = PacketTrace> + '_ {
        self.trace.iter_mut().flat_map(|t| t.done.drain(..))
    }

    /// The run ends at `now`: every packet still inside the chip is recorded as such and
    /// handed out with the others ([`Chip::drain_trace`]), in packet order.
    pub fn end_trace(&mut self, now: Time) {
        let Some(t) = self.trace.as_deref_mut() else {
            return;
        };
        let mut inside: Vec<(u64, u32)> = t
            .live
            .iter()
            .enumerate()
            .filter_map(|(h, l)| l.as_ref().map(|l| (l.id, h as u32)))
            .collect();
        inside.sort_unstable();
        for (_, h) in inside {
            t.push(h, now, None, TraceEvent::InChip);
            t.end(h);
        }
    }

    /// What the traced run had, whatever the filter kept (none when not traced).
    pub fn trace_seen(&self) -> Option<&TraceSeen> {
        self.trace.as_ref().map(|t| &t.seen)
    }

    /// The trace's filter (none when not traced).
    pub fn trace_filter(&self) -> Option<&TraceFilter> {
        self.trace.as_ref().map(|t| &t.filter)
    }

    /// Packet `h` is a frame whose first bit has just reached its port (the port and the
    /// time are in the packet).
    #[cold]
    pub(super) fn trace_arrival(&mut self, h: u32) {
        let pkt = &self.packets.slots[h as usize];
        let (port, start, bytes) = (pkt.ingress_port, pkt.rx_start, pkt.data.len() as u32);
        let last = start + crate::mac::frame_time(bytes as usize, self.ports[port as usize].gbps);
        let Some(t) = self.trace.as_deref_mut() else {
            return;
        };
        t.number(h);
        t.went_through(h, port);
        let event = TraceEvent::Arrival {
            port,
            bytes,
            last_bit_ps: last,
        };
        t.push(h, start, None, event);
    }

    /// Packet `h` was made at `now` (from packet `from`, for a copy).
    #[cold]
    pub(super) fn trace_made(&mut self, h: u32, from: Option<u32>, origin: Origin, now: Time) {
        let bytes = self.packets.slots[h as usize].data.len() as u32;
        let Some(t) = self.trace.as_deref_mut() else {
            return;
        };
        let id = t.number(h);
        let parent = from.and_then(|f| t.live(f).map(|l| (f, l.id)));
        if let Some((f, _)) = parent {
            t.at_time(f, now, TraceEvent::Copied { copy: id, origin });
        }
        let event = TraceEvent::Made {
            from: parent.map(|p| p.1),
            origin,
            bytes,
        };
        t.at_time(h, now, event);
    }

    /// The TM's verdict on packet `h` offered to it by `req`; `deflected`: this is the
    /// second offer, to the deflect-on-drop port.
    #[cold]
    pub(super) fn trace_enqueue(
        &mut self,
        now: Time,
        req: &EnqueueRequest,
        verdict: &Result<Admitted, Refusal>,
        deflected: bool,
    ) {
        let (h, port, queue) = (req.handle, req.port, req.queue);
        let event = match verdict {
            Ok(a) => TraceEvent::Enqueue {
                port,
                queue: a.trimmed.map_or(queue, |t| t.queue),
                cells: a.cells,
                depth_before: a.enq_depth_cells,
                depth_after: a.enq_depth_cells + a.cells,
                ecn_mark: a.ecn_mark,
                headroom: a.headroom,
                deflected,
                trimmed_to: a.trimmed.map(|t| t.bytes),
            },
            Err(r) => TraceEvent::Refused {
                port,
                queue,
                reason: DropReason::Tm(*r).name(),
                detail: self.tm.refusal_detail(req, *r),
            },
        };
        let Some(t) = self.trace.as_deref_mut() else {
            return;
        };
        t.went_through(h, port);
        t.at_time(h, now, event);
    }

    /// Packet `h`'s frame starts leaving `port` at `start` (a recirculation port: it comes
    /// back into ingress at `back`).
    #[cold]
    pub(super) fn trace_departure(&mut self, h: u32, port: u16, start: Time, back: Option<Time>) {
        let bytes = self.packets.slots[h as usize].data.len() as u32;
        let gbps = self.ports[port as usize].gbps;
        let Some(t) = self.trace.as_deref_mut().filter(|t| t.records(h)) else {
            return;
        };
        t.went_through(h, port);
        match back {
            None => {
                let last_bit_ps = start + crate::mac::frame_time(bytes as usize, gbps);
                let event = TraceEvent::Departure {
                    port,
                    bytes,
                    last_bit_ps,
                };
                t.push(h, start, None, event);
                t.end(h);
            }
            Some(back_ps) => {
                let pass = t.live(h).map_or(1, |l| {
                    l.pass += 1;
                    l.pass
                });
                let event = TraceEvent::Recirculation {
                    port,
                    back_ps,
                    pass,
                };
                t.push(h, start, None, event);
            }
        }
    }

    /// The TM has just served packet `h` to its egress gress (what the TM said, when, and
    /// the issue cycle are in the packet); an egress that is not run (the identity) is traced
    /// here to its exit.
    #[cold]
    pub(super) fn trace_dequeue(&mut self, h: u32) {
        let pkt = &self.packets.slots[h as usize];
        let (now, issue) = (pkt.deq_time, pkt.issue);
        let Some(d) = pkt.deq else {
            return;
        };
        let pipe = self.ports[d.port as usize].pipe;
        let latency = self.egress_latency;
        let runs = !self.pipes[pipe as usize].egress.is_identity();
        let Some(t) = self.trace.as_deref_mut().filter(|t| t.records(h)) else {
            return;
        };
        let event = TraceEvent::Dequeue {
            port: d.port,
            queue: d.queue,
            waited_ps: now - Time(d.enq_time_ps),
            depth_after: d.deq_depth_cells,
        };
        t.push(h, now, None, event);
        let at = Issue {
            gress: Gress::Egress,
            pipe,
            port: d.port,
            cycle: issue,
        };
        t.issue(h, at, latency, runs);
        if !runs {
            let event = TraceEvent::Exit {
                gress: Gress::Egress,
                outputs: Vec::new(),
            };
            t.at_cycle(h, issue + latency, event);
        }
    }

    /// The end of packet `h` at `now`, dropped for `reason` or (`consumed`) ended by its
    /// program as designed.
    #[cold]
    pub(super) fn trace_drop(&mut self, h: u32, now: Time, reason: DropReason, consumed: bool) {
        let Some(t) = self.trace.as_deref_mut() else {
            return;
        };
        let event = if consumed {
            TraceEvent::Consumed
        } else {
            TraceEvent::Drop {
                reason: reason.name(),
            }
        };
        t.at_time(h, now, event);
        t.end(h);
    }
}
