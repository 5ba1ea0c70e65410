//! The per-packet trace: what happened to each packet, at the time (and the pipe-clock cycle)
//! it happened, from its first bit at an ingress MAC to its departure, drop or the end of the
//! run. The chip records it when asked ([`crate::chip::Chip::set_trace`]); this module holds
//! what a trace is ([`PacketTrace`], [`TraceRecord`], [`TraceEvent`]), which packets a run
//! keeps ([`TraceFilter`]), and its two forms: readable text ([`render_text`]) and JSON lines
//! ([`render_json`]); docs/TRACE.md describes both.
//!
//! Packets are numbered per chip from 0 in the order they come into being (a frame received,
//! a generated packet, a mirror or multicast copy), whatever the filter, so a number means the
//! same packet in every trace of a run. A recirculated packet keeps its number (each pass
//! through the pipes is a new `pass`); a copy says which packet it was made from.
//!
//! Every record is named (tables, actions, fields, containers): a trace needs no program to
//! read, in a file or from the network runtime's observer.

use pipelines::program::Gress;
use pipelines::time::Time;
use serde::{Serialize, Serializer};
use std::fmt::Write;

/// One packet's trace: its records in the order they happened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PacketTrace {
    /// The packet's number on its chip.
    pub packet: u64,
    /// What happened to it.
    pub records: Vec<TraceRecord>,
}

/// One thing that happened to a packet.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TraceRecord {
    /// When (simulated time).
    #[serde(rename = "time_ps", serialize_with = "ps")]
    pub time: Time,
    /// The pipe-clock cycle it happened at, for what happens on a cycle edge (the pipes and
    /// the TM's admission); `None` for the MACs and the TM's paced service.
    pub cycle: Option<u64>,
    /// What.
    #[serde(flatten)]
    pub event: TraceEvent,
}

/// A value of bits a program reads, writes or matches, with its name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Named {
    /// A field, a key or an action parameter.
    pub name: String,
    /// Its value.
    #[serde(serialize_with = "hex")]
    pub value: u128,
}

/// A PHV container's value before and after a part of a gress.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ContainerChange {
    /// Its name: `B`, `H` or `W` (8, 16, 32 bits) and its number in that class.
    pub container: String,
    /// Its number among all the pipe's containers.
    pub number: u16,
    /// The fields with bits in it (`name[hi:lo]` for part of a field).
    pub fields: Vec<String>,
    /// Before.
    #[serde(serialize_with = "hex")]
    pub old: u128,
    /// After.
    #[serde(serialize_with = "hex")]
    pub new: u128,
}

/// A header the parser extracted.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Extracted {
    /// The header.
    pub header: String,
    /// Its first byte in the packet.
    pub byte: u32,
}

/// The entry a table lookup hit.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct HitEntry {
    /// Its key as installed, as P4 writes it (`0xa000100/24`, `5 &&& 0xff`), one per key
    /// field.
    pub key: Vec<String>,
    /// Its priority (ternary and range tables).
    pub priority: u32,
    /// The slot it occupies in the table.
    pub slot: u32,
}

/// How a packet came into being inside the chip.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "origin", rename_all = "snake_case")]
pub enum Origin {
    /// A mirror copy.
    Mirror {
        /// The session.
        session: u16,
        /// The gress whose exit made it.
        #[serde(serialize_with = "gress_name")]
        gress: Gress,
    },
    /// A multicast copy.
    Multicast {
        /// The group.
        group: u16,
        /// Its replication id.
        rid: u16,
    },
    /// Made by the packet generator.
    Generated {
        /// The application.
        app: u16,
    },
    /// What-if mirror-on-drop: the truncated copy of a packet the TM refused.
    MirrorOnDrop {
        /// The port it is sent to.
        port: u16,
        /// The queue.
        queue: u16,
    },
}

/// What happened.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", content = "fields", rename_all = "snake_case")]
pub enum TraceEvent {
    /// A frame's first bit reached a front-panel port (the record's time).
    Arrival {
        /// The port.
        port: u16,
        /// Its bytes (no FCS).
        bytes: u32,
        /// When its last bit was in: the MAC has it whole.
        #[serde(serialize_with = "ps")]
        last_bit_ps: Time,
    },
    /// The packet was made inside the chip.
    Made {
        /// The packet it was made from (none for a generated packet).
        from: Option<u64>,
        /// How.
        #[serde(flatten)]
        origin: Origin,
        /// Its bytes.
        bytes: u32,
    },
    /// The packet made a copy of itself.
    Copied {
        /// The copy's number.
        copy: u64,
        /// How.
        #[serde(flatten)]
        origin: Origin,
    },
    /// The packet took an issue slot of a gress.
    Issue {
        /// Which.
        #[serde(serialize_with = "gress_name")]
        gress: Gress,
        /// The pipe.
        pipe: u16,
        /// The port it came in on (ingress) or leaves by (egress).
        port: u16,
        /// Its pass through the pipes (1, then 2 after a recirculation, ...).
        pass: u32,
        /// Cycles from issue until it leaves the deparser.
        latency_cycles: u64,
        /// Whether the gress's program runs (an egress that does nothing is not run).
        runs: bool,
    },
    /// A parser state the packet visited (in the parser's cycles: the model gives the parser
    /// one latency, and states are listed in the order visited).
    ParserState {
        /// Which gress.
        #[serde(serialize_with = "gress_name")]
        gress: Gress,
        /// The state.
        state: String,
        /// Headers extracted, in order.
        extracted: Vec<Extracted>,
        /// The select key, for a state that selects.
        #[serde(serialize_with = "hex_opt")]
        select: Option<u128>,
        /// Where it went: a state, `accept` or `reject` (none: it stopped inside the state).
        next: Option<String>,
    },
    /// The parser failed.
    ParserError {
        /// Which gress.
        #[serde(serialize_with = "gress_name")]
        gress: Gress,
        /// Why.
        error: String,
        /// The program continues with what was extracted (else the packet is dropped).
        continued: bool,
    },
    /// The PHV containers a part of the gress changed (the parser, or a stage).
    Phv {
        /// Which gress.
        #[serde(serialize_with = "gress_name")]
        gress: Gress,
        /// The stage (none: the parser).
        stage: Option<u16>,
        /// The containers, old → new.
        changes: Vec<ContainerChange>,
    },
    /// The packet enters a stage.
    Stage {
        /// Which gress.
        #[serde(serialize_with = "gress_name")]
        gress: Gress,
        /// The stage.
        stage: u16,
        /// Its latency.
        cycles: u32,
        /// Whether the control ran a gateway or a table of this stage for the packet.
        applied: bool,
    },
    /// A gateway (an `if`) was evaluated.
    Gateway {
        /// Which gress.
        #[serde(serialize_with = "gress_name")]
        gress: Gress,
        /// Its stage.
        stage: u16,
        /// Its number in the program.
        gateway: u16,
        /// The condition, with field names.
        condition: String,
        /// Its result.
        holds: bool,
    },
    /// A table lookup and the action it ran.
    Table {
        /// Which gress.
        #[serde(serialize_with = "gress_name")]
        gress: Gress,
        /// Its stage.
        stage: u16,
        /// The table.
        table: String,
        /// The key, per key field.
        key: Vec<Named>,
        /// The entry it hit (none: a miss, the default action ran).
        hit: Option<HitEntry>,
        /// The action that ran.
        action: String,
        /// Its action data.
        args: Vec<Named>,
    },
    /// A stateful ALU read and wrote a register element.
    Register {
        /// Which gress.
        #[serde(serialize_with = "gress_name")]
        gress: Gress,
        /// Its stage.
        stage: u16,
        /// The register array.
        register: String,
        /// The stateful-ALU program (the `RegisterAction`).
        program: String,
        /// The element (a word of lanes, for a min/max program).
        index: u32,
        /// Before.
        #[serde(serialize_with = "hex")]
        old: u128,
        /// After.
        #[serde(serialize_with = "hex")]
        new: u128,
        /// What it returned to the PHV.
        #[serde(serialize_with = "hex")]
        output: u128,
    },
    /// A meter coloured the packet.
    Meter {
        /// Which gress.
        #[serde(serialize_with = "gress_name")]
        gress: Gress,
        /// Its stage.
        stage: u16,
        /// The meter array.
        meter: String,
        /// The meter.
        index: u32,
        /// `green`, `yellow` or `red`.
        colour: &'static str,
    },
    /// An indexed counter counted the packet.
    Counter {
        /// Which gress.
        #[serde(serialize_with = "gress_name")]
        gress: Gress,
        /// Its stage.
        stage: u16,
        /// The counter array.
        counter: String,
        /// The counter.
        index: u32,
    },
    /// A hash unit's output (to a field, or as an extern's index).
    Hash {
        /// Which gress.
        #[serde(serialize_with = "gress_name")]
        gress: Gress,
        /// Its stage.
        stage: u16,
        /// The unit.
        hash: String,
        /// Its output.
        #[serde(serialize_with = "hex")]
        value: u128,
    },
    /// A random number.
    Random {
        /// Which gress.
        #[serde(serialize_with = "gress_name")]
        gress: Gress,
        /// Its stage.
        stage: u16,
        /// The field it went to.
        field: String,
        /// The number.
        #[serde(serialize_with = "hex")]
        value: u128,
    },
    /// A read of the queue depths the TM publishes to ingress.
    QueueDepth {
        /// Which gress.
        #[serde(serialize_with = "gress_name")]
        gress: Gress,
        /// Its stage.
        stage: u16,
        /// The port.
        port: u16,
        /// The queue's depth in cells; none: the mask of the port's empty queues was read.
        queue: Option<u16>,
        /// Cells, or the mask.
        #[serde(serialize_with = "hex")]
        value: u128,
    },
    /// The deparser wrote the packet.
    Deparser {
        /// Which gress.
        #[serde(serialize_with = "gress_name")]
        gress: Gress,
        /// The valid headers it emitted, in order.
        headers: Vec<String>,
        /// Bytes before.
        bytes_in: u32,
        /// Bytes after.
        bytes_out: u32,
    },
    /// The gress is done: what its program asked of the chip (only what it set).
    Exit {
        /// Which gress.
        #[serde(serialize_with = "gress_name")]
        gress: Gress,
        /// The intrinsic outputs that are not 0 (egress port, queue, drop, mirror session,
        /// multicast group, ...), by their TNA names, in this order.
        #[serde(serialize_with = "as_map")]
        outputs: Vec<(&'static str, u64)>,
    },
    /// The TM admitted the packet to a queue.
    Enqueue {
        /// The port.
        port: u16,
        /// The queue.
        queue: u16,
        /// Cells it takes.
        cells: u32,
        /// The queue's depth before it, in cells.
        depth_before: u32,
        /// After.
        depth_after: u32,
        /// The queue's ECN configuration marks it.
        ecn_mark: bool,
        /// Stored in PFC headroom.
        headroom: bool,
        /// Admitted to the deflect-on-drop port after a refusal.
        deflected: bool,
        /// What-if trimming: refused by the queue it asked for, cut to this many bytes and
        /// admitted to the header queue (`queue`) instead.
        #[serde(skip_serializing_if = "Option::is_none")]
        trimmed_to: Option<u32>,
    },
    /// The TM refused the packet.
    Refused {
        /// The port.
        port: u16,
        /// The queue.
        queue: u16,
        /// Why (a drop reason's name).
        reason: &'static str,
        /// The figures behind it, when the TM can say (a threshold and what met it).
        detail: Option<String>,
    },
    /// The TM handed the packet to its port's egress pipe (the record's time).
    Dequeue {
        /// The port.
        port: u16,
        /// The queue.
        queue: u16,
        /// How long it was queued.
        #[serde(serialize_with = "ps")]
        waited_ps: Time,
        /// The queue's depth just after, in cells.
        depth_after: u32,
    },
    /// The frame's first bit left a port (the record's time).
    Departure {
        /// The port.
        port: u16,
        /// Its bytes (no FCS).
        bytes: u32,
        /// When its last bit left.
        #[serde(serialize_with = "ps")]
        last_bit_ps: Time,
    },
    /// The frame left a recirculation port (the record's time) and comes back into the
    /// pipe's ingress.
    Recirculation {
        /// The recirculation port.
        port: u16,
        /// When its first bit is back at ingress.
        #[serde(serialize_with = "ps")]
        back_ps: Time,
        /// The pass it starts.
        pass: u32,
    },
    /// The packet was dropped.
    Drop {
        /// Why (a drop reason's name).
        reason: &'static str,
    },
    /// A packet the chip made was ended by its program as designed (a record, not a drop).
    Consumed,
    /// The run ended with the packet inside the chip (the record's time: the end).
    InChip,
}

impl TraceEvent {
    /// Where it happened, as a block of the text form is headed.
    fn place(&self) -> String {
        let g = |g: &Gress| match g {
            Gress::Ingress => "ingress",
            Gress::Egress => "egress",
        };
        match self {
            TraceEvent::Arrival { port, .. } => format!("port {port} MAC, receive"),
            TraceEvent::Made { .. } => "made in the chip".into(),
            TraceEvent::Copied { origin, .. } => match origin {
                Origin::Mirror { gress, .. } => format!("{} exit", g(gress)),
                Origin::MirrorOnDrop { .. } => "TM, admission".into(),
                _ => "ingress exit".into(),
            },
            TraceEvent::Issue { gress, pipe, .. } => format!("{} issue, pipe {pipe}", g(gress)),
            TraceEvent::ParserState { gress, .. } | TraceEvent::ParserError { gress, .. } => {
                format!("{} parser", g(gress))
            }
            TraceEvent::Phv { gress, stage, .. } => match stage {
                None => format!("{} parser", g(gress)),
                Some(s) => format!("{} stage {s}", g(gress)),
            },
            TraceEvent::Stage { gress, stage, .. }
            | TraceEvent::Gateway { gress, stage, .. }
            | TraceEvent::Table { gress, stage, .. }
            | TraceEvent::Register { gress, stage, .. }
            | TraceEvent::Meter { gress, stage, .. }
            | TraceEvent::Counter { gress, stage, .. }
            | TraceEvent::Hash { gress, stage, .. }
            | TraceEvent::Random { gress, stage, .. }
            | TraceEvent::QueueDepth { gress, stage, .. } => format!("{} stage {stage}", g(gress)),
            TraceEvent::Deparser { gress, .. } => format!("{} deparser", g(gress)),
            TraceEvent::Exit { gress, .. } => format!("{} exit", g(gress)),
            TraceEvent::Enqueue { .. } | TraceEvent::Refused { .. } => "TM, admission".into(),
            TraceEvent::Dequeue { .. } => "TM, service".into(),
            TraceEvent::Departure { port, .. } => format!("port {port} MAC, transmit"),
            TraceEvent::Recirculation { port, .. } => format!("port {port}, recirculation"),
            TraceEvent::Drop { .. } | TraceEvent::Consumed | TraceEvent::InChip => "end".into(),
        }
    }

    /// The event's lines in the text form (without indentation).
    fn lines(&self, out: &mut Vec<String>) {
        let list = |v: &[Named]| {
            v.iter()
                .map(|n| format!("{} = {:#x}", n.name, n.value))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let line = match self {
            TraceEvent::Arrival {
                port,
                bytes,
                last_bit_ps,
            } => format!(
                "arrives on port {port}: {bytes} bytes; first bit now, last bit at {last_bit_ps}"
            ),
            TraceEvent::Made {
                from,
                origin,
                bytes,
            } => {
                let from = from.map_or(String::new(), |p| format!(" of packet {p}"));
                format!("{}{from}, {bytes} bytes", origin_text(origin))
            }
            TraceEvent::Copied { copy, origin } => {
                format!("makes packet {copy}: {}", origin_text(origin))
            }
            TraceEvent::Issue {
                gress,
                port,
                pass,
                latency_cycles,
                runs,
                ..
            } => {
                let (side, pass) = match gress {
                    Gress::Ingress => ("came in on", format!(", pass {pass}")),
                    Gress::Egress => ("leaves by", String::new()),
                };
                let runs = if *runs {
                    ""
                } else {
                    "; the egress program does nothing and is not run"
                };
                format!(
                    "issued ({side} port {port}{pass}); {latency_cycles} cycles to the end of \
                     the deparser{runs}"
                )
            }
            TraceEvent::ParserState {
                state,
                extracted,
                select,
                next,
                ..
            } => {
                let mut s = format!("state {state}:");
                for e in extracted {
                    let _ = write!(s, " extract {} at byte {};", e.header, e.byte);
                }
                if let Some(k) = select {
                    let _ = write!(s, " select {k:#x}");
                }
                match next {
                    Some(n) => {
                        let _ = write!(s, " → {n}");
                    }
                    None => s.push_str(" stopped here"),
                }
                s
            }
            TraceEvent::ParserError {
                error, continued, ..
            } => {
                let what = if *continued {
                    "the program continues with what was extracted"
                } else {
                    "the packet is dropped"
                };
                format!("parser error: {error}; {what}")
            }
            TraceEvent::Phv { changes, .. } => {
                for c in changes {
                    let fields = match c.fields.as_slice() {
                        [] => String::new(),
                        f => format!(" ({})", f.join(", ")),
                    };
                    out.push(format!(
                        "PHV {} (#{}){fields}: {:#x} → {:#x}",
                        c.container, c.number, c.old, c.new
                    ));
                }
                return;
            }
            TraceEvent::Stage {
                stage,
                cycles,
                applied,
                ..
            } => {
                let what = if *applied {
                    ""
                } else {
                    "; nothing in it applies to this packet"
                };
                format!("{cycles} cycles in stage {stage}{what}")
            }
            TraceEvent::Gateway {
                gateway,
                condition,
                holds,
                ..
            } => format!("gateway #{gateway} `{condition}`: {holds}"),
            TraceEvent::Table {
                table,
                key,
                hit,
                action,
                args,
                ..
            } => {
                let key = match key.as_slice() {
                    [] => "no key".to_string(),
                    k => format!("key {}", list(k)),
                };
                let hit = match hit {
                    Some(h) => {
                        let pri = if h.priority != 0 {
                            format!(" priority {}", h.priority)
                        } else {
                            String::new()
                        };
                        format!("hit [{}]{pri} (slot {})", h.key.join(", "), h.slot)
                    }
                    None => "miss, default action".to_string(),
                };
                format!("table {table}, {key}: {hit} → {action}({})", list(args))
            }
            TraceEvent::Register {
                register,
                program,
                index,
                old,
                new,
                output,
                ..
            } => format!(
                "register {register}[{index}] by {program}: {old:#x} → {new:#x}, returns {output:#x}"
            ),
            TraceEvent::Meter {
                meter,
                index,
                colour,
                ..
            } => format!("meter {meter}[{index}]: {colour}"),
            TraceEvent::Counter { counter, index, .. } => {
                format!("counter {counter}[{index}] counts the packet")
            }
            TraceEvent::Hash { hash, value, .. } => format!("hash {hash} = {value:#x}"),
            TraceEvent::Random { field, value, .. } => format!("random {field} = {value:#x}"),
            TraceEvent::QueueDepth {
                port, queue, value, ..
            } => match queue {
                Some(q) => format!("published depth of port {port} queue {q}: {value} cells"),
                None => format!("published empty queues of port {port}: {value:#x}"),
            },
            TraceEvent::Deparser {
                headers,
                bytes_in,
                bytes_out,
                ..
            } => {
                let h = match headers.as_slice() {
                    [] => "no header".to_string(),
                    h => h.join(", "),
                };
                format!("emits {h}; {bytes_in} bytes in, {bytes_out} out")
            }
            TraceEvent::Exit { outputs, .. } => match outputs.as_slice() {
                [] => "leaves the deparser, asking nothing of the chip".into(),
                o => {
                    let o: Vec<String> = o.iter().map(|(k, v)| format!("{k} = {v}")).collect();
                    format!("leaves the deparser: {}", o.join(", "))
                }
            },
            TraceEvent::Enqueue {
                port,
                queue,
                cells,
                depth_before,
                depth_after,
                ecn_mark,
                headroom,
                deflected,
                trimmed_to,
            } => {
                let mut s = format!(
                    "admitted to port {port} queue {queue}: {}, queue depth {depth_before} → \
                     {depth_after} cells",
                    cells_text(*cells)
                );
                for (on, what) in [
                    (*ecn_mark, "marked for ECN"),
                    (*headroom, "in PFC headroom"),
                    (*deflected, "deflected (deflect-on-drop)"),
                ] {
                    if on {
                        let _ = write!(s, "; {what}");
                    }
                }
                if let Some(b) = trimmed_to {
                    let _ = write!(s, "; trimmed to {b} bytes (what-if trimming)");
                }
                s
            }
            TraceEvent::Refused {
                port,
                queue,
                reason,
                detail,
            } => {
                let d = detail.as_ref().map_or(String::new(), |d| format!(" ({d})"));
                format!("refused by port {port} queue {queue}: {reason}{d}")
            }
            TraceEvent::Dequeue {
                port,
                queue,
                waited_ps,
                depth_after,
            } => format!(
                "served from port {port} queue {queue} after {waited_ps} queued; the queue \
                 holds {depth_after} cells now"
            ),
            TraceEvent::Departure {
                port,
                bytes,
                last_bit_ps,
            } => format!(
                "departs from port {port}: {bytes} bytes; first bit now, last bit at \
                 {last_bit_ps}"
            ),
            TraceEvent::Recirculation {
                port,
                back_ps,
                pass,
            } => format!(
                "recirculates through port {port}: first bit back at ingress at {back_ps}, \
                 pass {pass}"
            ),
            TraceEvent::Drop { reason } => format!("dropped: {reason}"),
            TraceEvent::Consumed => "ended by its program (a record the chip made)".into(),
            TraceEvent::InChip => "still inside the chip when the run ended".into(),
        };
        out.push(line);
    }
}

/// `1 cell`, `3 cells`.
fn cells_text(n: u32) -> String {
    format!("{n} cell{}", if n == 1 { "" } else { "s" })
}

fn origin_text(o: &Origin) -> String {
    match o {
        Origin::Mirror { session, gress } => {
            let g = match gress {
                Gress::Ingress => "ingress",
                Gress::Egress => "egress",
            };
            format!("mirror copy (session {session}, {g})")
        }
        Origin::Multicast { group, rid } => {
            format!("multicast copy (group {group}, replication id {rid})")
        }
        Origin::Generated { app } => format!("made by packet-generator application {app}"),
        Origin::MirrorOnDrop { port, queue } => {
            format!("mirror-on-drop copy (what-if), to port {port} queue {queue}")
        }
    }
}

/// The time and cycle heading a block: `1234.567 ns, cycle 1513`.
fn when(r: &TraceRecord) -> String {
    match r.cycle {
        Some(c) => format!("{}, cycle {c}", r.time),
        None => r.time.to_string(),
    }
}

/// Append `p`'s text form to `out`: a line naming the packet (and its chip, in a network),
/// then a block per place and time it was at, each line of the block indented.
pub fn render_text(p: &PacketTrace, chip: Option<&str>, out: &mut String) {
    let on = chip.map_or(String::new(), |c| format!(" on chip {c}"));
    let _ = writeln!(out, "packet {}{on}", p.packet);
    let mut head: Option<(String, String)> = None;
    let mut lines = Vec::new();
    for r in &p.records {
        let h = (when(r), r.event.place());
        if head.as_ref() != Some(&h) {
            let _ = writeln!(out, "  {}: {}", h.0, h.1);
            head = Some(h);
        }
        lines.clear();
        r.event.lines(&mut lines);
        for l in &lines {
            let _ = writeln!(out, "      {l}");
        }
    }
    out.push('\n');
}

/// Append `p`'s JSON lines to `out`: one object per record, `{"chip": ..., "packet": N,
/// "time_ps": T, "cycle": C, "kind": K, "fields": {...}}` (`chip` only in a network).
pub fn render_json(p: &PacketTrace, chip: Option<&str>, out: &mut String) {
    #[derive(Serialize)]
    struct Line<'a> {
        #[serde(skip_serializing_if = "Option::is_none")]
        chip: Option<&'a str>,
        packet: u64,
        #[serde(flatten)]
        record: &'a TraceRecord,
    }
    for record in &p.records {
        let line = Line {
            chip,
            packet: p.packet,
            record,
        };
        out.push_str(&serde_json::to_string(&line).expect("a trace record serializes"));
        out.push('\n');
    }
}

fn as_map<S: Serializer>(v: &[(&'static str, u64)], s: S) -> Result<S::Ok, S::Error> {
    s.collect_map(v.iter().copied())
}

fn ps<S: Serializer>(t: &Time, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(t.ps())
}

fn hex<S: Serializer>(v: &u128, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&format!("{v:#x}"))
}

fn hex_opt<S: Serializer>(v: &Option<u128>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(v) => hex(v, s),
        None => s.serialize_none(),
    }
}

fn gress_name<S: Serializer>(g: &Gress, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(match g {
        Gress::Ingress => "ingress",
        Gress::Egress => "egress",
    })
}

/// Which packets a run's trace keeps: those that match every filter given. A packet is kept
/// with its records in the time window.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TraceFilter {
    /// Only these packet numbers (empty: any).
    pub packets: Vec<u64>,
    /// Only packets that came in on, were queued for or left by one of these ports (empty:
    /// any).
    pub ports: Vec<u16>,
    /// Only records at or after this time.
    pub from: Option<Time>,
    /// Only records at or before this time.
    pub to: Option<Time>,
}

impl TraceFilter {
    /// Whether packet number `n` may be kept (the packet filter alone: it is known when the
    /// packet comes into being, so a packet it excludes is not recorded at all).
    pub fn wants_packet(&self, n: u64) -> bool {
        self.packets.is_empty() || self.packets.contains(&n)
    }

    /// Whether a packet that went through `ports` may be kept.
    pub fn wants_ports(&self, ports: &[u16]) -> bool {
        self.ports.is_empty() || ports.iter().any(|p| self.ports.contains(p))
    }

    /// Whether a record at `t` is in the window.
    pub fn wants_time(&self, t: Time) -> bool {
        self.from.is_none_or(|f| t >= f) && self.to.is_none_or(|to| t <= to)
    }

    /// The filter as the command line writes it: `--trace-packet 3 --trace-port 1`.
    pub fn flags(&self) -> String {
        let join = |v: Vec<String>| v.join(",");
        let mut f = Vec::new();
        if !self.packets.is_empty() {
            let p = join(self.packets.iter().map(u64::to_string).collect());
            f.push(format!("--trace-packet {p}"));
        }
        if !self.ports.is_empty() {
            let p = join(self.ports.iter().map(u16::to_string).collect());
            f.push(format!("--trace-port {p}"));
        }
        if let Some(t) = self.from {
            f.push(format!("--trace-from-ns {}", t.ns()));
        }
        if let Some(t) = self.to {
            f.push(format!("--trace-to-ns {}", t.ns()));
        }
        f.join(" ")
    }

    /// Why nothing matched, from what the run had (`seen`): what a user needs to fix the
    /// filter.
    pub fn nothing_matched(&self, seen: &TraceSeen) -> String {
        if seen.packets == 0 {
            return "no packet came into being during the run".into();
        }
        let mut facts = vec![format!(
            "the run had packets 0 to {}",
            seen.packets.saturating_sub(1)
        )];
        if !self.ports.is_empty() {
            let ports: Vec<String> = seen.ports.iter().map(u16::to_string).collect();
            facts.push(format!(
                "they went through {} {}",
                if ports.len() == 1 { "port" } else { "ports" },
                ports.join(", ")
            ));
        }
        if self.from.is_some() || self.to.is_some() {
            if let (Some(a), Some(b)) = (seen.first, seen.last) {
                facts.push(format!("what happened to them spans {a} to {b}"));
            }
        }
        format!("no packet matched {} ({})", self.flags(), facts.join("; "))
    }
}

/// What a traced run had, whatever the filter kept: for saying why a filter matched nothing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TraceSeen {
    /// Packets numbered.
    pub packets: u64,
    /// Packets kept.
    pub matched: u64,
    /// Every port a packet came in on, was queued for or left by.
    pub ports: std::collections::BTreeSet<u16>,
    /// The earliest record's time.
    pub first: Option<Time>,
    /// The latest.
    pub last: Option<Time>,
}
