//! The per-packet trace of one gress: what the parser and the match-action stages did to one
//! packet, as the walk tells a [`GressTracer`].
//!
//! Why a trait and not a flag: tracing must cost nothing when it is off. The parser, the
//! control walk and the general action path are generic over the tracer; [`NoTrace`]'s
//! methods are empty and always inlined, it is passed by value (a zero-sized argument is
//! none), and its [`GressTracer::ON`] is `false`, so the work only a trace needs (the stage a
//! gateway sits in, the matched entry's key) is compiled out and the untraced instantiation
//! is the code of an untraced walk. [`GressLog`] records, by id, for the chip to name
//! (`asic_model::trace`); the walk is handed `&mut GressLog`.
//!
//! What is recorded, in order: each parser state visited with the headers it extracted and
//! its select; the PHV containers the parser changed; then, for each stage in which the walk
//! ran something, its gateways, table lookups and the externs their actions drove, and the
//! containers the stage changed (the PHV compared before the stage's first step and before
//! the next stage's, old → new). Stages are visited in order (the verifier keeps every path
//! going forward), so a stage's changes are exactly what its steps wrote.

use crate::phv::Phv;
use crate::program::{
    ActionCall, ActionId, CounterId, FieldId, GatewayId, HashId, HeaderId, KeyMatch, MeterId, Next,
    SaluId, StateId, TableId,
};
use crate::table::TableState;

/// What the per-packet walk reports. Every method is called on the packet's path at the
/// point it names; an implementation must not change what the walk computes (it sees the
/// PHV and the tables read-only).
pub trait GressTracer {
    /// Whether anything is recorded: `false` compiles out the work of building what the
    /// methods would be told.
    const ON: bool;
    /// The PHV once the chip's inputs are written, before the parser runs.
    fn begin(&mut self, phv: &Phv);
    /// The parser enters `state`.
    fn parser_state(&mut self, state: StateId);
    /// The current state extracted `header` at `bit_offset` bits into the packet.
    fn parser_extract(&mut self, header: HeaderId, bit_offset: u32);
    /// The current state's transition: its select key (0 for a direct transition) and where
    /// it goes.
    fn parser_next(&mut self, key: u128, next: Next);
    /// The parser is done (accepted, or failed and the program continues or drops).
    fn parsed(&mut self, phv: &Phv);
    /// The walk reaches its first step in `stage` (stages only increase).
    fn stage(&mut self, stage: u16, phv: &Phv);
    /// A gateway was evaluated.
    fn gateway(&mut self, id: GatewayId, holds: bool);
    /// Table `id` was looked up with `key`: the entry it hit (`hit`: its slot) or the
    /// default action, `call`, which runs next.
    fn table(
        &mut self,
        id: TableId,
        key: &[u128],
        state: &TableState,
        hit: Option<u32>,
        call: &ActionCall,
    );
    /// A stateful ALU ran on element (or word) `index` of its register array.
    fn register(&mut self, salu: SaluId, index: usize, old: u64, new: u64, output: u128);
    /// A meter coloured the packet (0 green, 1 yellow, 3 red).
    fn meter(&mut self, meter: MeterId, index: usize, colour: u8);
    /// An indexed counter counted the packet.
    fn counter(&mut self, counter: CounterId, index: usize);
    /// A hash unit computed `value` (an extern's output, or an index).
    fn hash(&mut self, hash: HashId, value: u128);
    /// The random number generator gave `value` for `field`.
    fn random(&mut self, field: FieldId, value: u128);
    /// A read of the queue depths the TM publishes: `cells` of `queue` of `port`, or (for
    /// `queue` = `None`) the mask of `port`'s empty queues.
    fn queue_depth(&mut self, port: u16, queue: Option<u16>, value: u128);
    /// The control is done.
    fn end(&mut self, phv: &Phv);
}

/// The tracer of an untraced packet: records nothing, costs nothing.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoTrace;

impl GressTracer for NoTrace {
    const ON: bool = false;
    #[inline(always)]
    fn begin(&mut self, _: &Phv) {}
    #[inline(always)]
    fn parser_state(&mut self, _: StateId) {}
    #[inline(always)]
    fn parser_extract(&mut self, _: HeaderId, _: u32) {}
    #[inline(always)]
    fn parser_next(&mut self, _: u128, _: Next) {}
    #[inline(always)]
    fn parsed(&mut self, _: &Phv) {}
    #[inline(always)]
    fn stage(&mut self, _: u16, _: &Phv) {}
    #[inline(always)]
    fn gateway(&mut self, _: GatewayId, _: bool) {}
    #[inline(always)]
    fn table(&mut self, _: TableId, _: &[u128], _: &TableState, _: Option<u32>, _: &ActionCall) {}
    #[inline(always)]
    fn register(&mut self, _: SaluId, _: usize, _: u64, _: u64, _: u128) {}
    #[inline(always)]
    fn meter(&mut self, _: MeterId, _: usize, _: u8) {}
    #[inline(always)]
    fn counter(&mut self, _: CounterId, _: usize) {}
    #[inline(always)]
    fn hash(&mut self, _: HashId, _: u128) {}
    #[inline(always)]
    fn random(&mut self, _: FieldId, _: u128) {}
    #[inline(always)]
    fn queue_depth(&mut self, _: u16, _: Option<u16>, _: u128) {}
    #[inline(always)]
    fn end(&mut self, _: &Phv) {}
}

/// One parser state a packet visited.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ParserVisit {
    /// The state.
    pub state: StateId,
    /// Headers extracted, with their offset in bits from the packet's start.
    pub extracted: Vec<(HeaderId, u32)>,
    /// The select key and where the state went (`None`: the packet ended or the walk
    /// stopped inside the state).
    pub next: Option<(u128, Next)>,
}

/// A PHV container's value before and after a part of the gress.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PhvChange {
    /// The container.
    pub container: u16,
    /// Before.
    pub old: u32,
    /// After.
    pub new: u32,
}

/// The entry a lookup hit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntryHit {
    /// The slot it occupies.
    pub slot: u32,
    /// Its key, as installed.
    pub key: Vec<KeyMatch>,
    /// Its priority (ternary and range tables; 0 otherwise).
    pub priority: u32,
}

/// What happened in a stage, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MauEvent {
    /// A gateway's condition.
    Gateway {
        /// The gateway.
        id: GatewayId,
        /// Its result.
        holds: bool,
    },
    /// A table lookup and the action it ran.
    Table {
        /// The table.
        id: TableId,
        /// The key, one value per key field.
        key: Vec<u128>,
        /// The entry hit; `None`: a miss, the default action ran.
        hit: Option<EntryHit>,
        /// The action run.
        action: ActionId,
        /// Its action data.
        args: Vec<u128>,
    },
    /// A stateful ALU's read-modify-write.
    Register {
        /// The stateful-ALU program (its register array is the program's).
        salu: SaluId,
        /// The element (a word, for a min/max program).
        index: u32,
        /// Before.
        old: u64,
        /// After.
        new: u64,
        /// Returned to the PHV.
        output: u128,
    },
    /// A meter's colour.
    Meter {
        /// The meter array.
        meter: MeterId,
        /// The meter.
        index: u32,
        /// 0 green, 1 yellow, 3 red.
        colour: u8,
    },
    /// An indexed counter counted the packet.
    Counter {
        /// The counter array.
        counter: CounterId,
        /// The counter.
        index: u32,
    },
    /// A hash unit's output.
    Hash {
        /// The unit.
        hash: HashId,
        /// Its value.
        value: u128,
    },
    /// A random number.
    Random {
        /// The field it went to.
        field: FieldId,
        /// Its value.
        value: u128,
    },
    /// A read of the published queue depths.
    QueueDepth {
        /// The port.
        port: u16,
        /// The queue (`None`: the port's empty-queue mask was read).
        queue: Option<u16>,
        /// Cells, or the mask.
        value: u128,
    },
}

/// What one stage did to the packet.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StageLog {
    /// The stage.
    pub stage: u16,
    /// Its steps and the externs they drove, in order.
    pub events: Vec<MauEvent>,
    /// The containers it changed.
    pub changes: Vec<PhvChange>,
}

/// A recording tracer: what the parser and each stage did to one packet.
#[derive(Clone, Debug, Default)]
pub struct GressLog {
    /// Parser states, in the order visited.
    pub parser: Vec<ParserVisit>,
    /// The containers the parser changed.
    pub parser_changes: Vec<PhvChange>,
    /// Stages in which the walk ran something, in order.
    pub stages: Vec<StageLog>,
    /// The PHV at the start of the part being recorded.
    snapshot: Vec<u32>,
}

impl GressLog {
    /// The containers that differ between the snapshot and `phv`, and `phv` as the new
    /// snapshot.
    fn changes_since(&mut self, phv: &Phv) -> Vec<PhvChange> {
        let now = phv.containers();
        let changes = self
            .snapshot
            .iter()
            .zip(now)
            .enumerate()
            .filter(|(_, (old, new))| old != new)
            .map(|(c, (&old, &new))| PhvChange {
                container: c as u16,
                old,
                new,
            })
            .collect();
        self.snapshot.clear();
        self.snapshot.extend_from_slice(now);
        changes
    }

    /// The stage being recorded. The walk calls [`GressTracer::stage`] before any event of
    /// a stage.
    fn current(&mut self) -> &mut Vec<MauEvent> {
        &mut self
            .stages
            .last_mut()
            .expect("the walk names a step's stage before its events")
            .events
    }

    /// Close the stage being recorded, if any, with what it changed.
    fn close_stage(&mut self, phv: &Phv) {
        let changes = self.changes_since(phv);
        if let Some(s) = self.stages.last_mut() {
            s.changes = changes;
        }
    }
}

/// By reference: the walk takes its tracer by value (so that [`NoTrace`] is no argument).
impl GressTracer for &mut GressLog {
    const ON: bool = true;

    fn begin(&mut self, phv: &Phv) {
        self.parser.clear();
        self.parser_changes.clear();
        self.stages.clear();
        self.snapshot.clear();
        self.snapshot.extend_from_slice(phv.containers());
    }

    fn parser_state(&mut self, state: StateId) {
        self.parser.push(ParserVisit {
            state,
            ..ParserVisit::default()
        });
    }

    fn parser_extract(&mut self, header: HeaderId, bit_offset: u32) {
        if let Some(v) = self.parser.last_mut() {
            v.extracted.push((header, bit_offset));
        }
    }

    fn parser_next(&mut self, key: u128, next: Next) {
        if let Some(v) = self.parser.last_mut() {
            v.next = Some((key, next));
        }
    }

    fn parsed(&mut self, phv: &Phv) {
        self.parser_changes = self.changes_since(phv);
    }

    fn stage(&mut self, stage: u16, phv: &Phv) {
        self.close_stage(phv);
        self.stages.push(StageLog {
            stage,
            ..StageLog::default()
        });
    }

    fn gateway(&mut self, id: GatewayId, holds: bool) {
        self.current().push(MauEvent::Gateway { id, holds });
    }

    fn table(
        &mut self,
        id: TableId,
        key: &[u128],
        state: &TableState,
        hit: Option<u32>,
        call: &ActionCall,
    ) {
        let hit = hit.map(|slot| {
            let (key, priority) = state
                .matched_key(key)
                .expect("the entry the lookup hit is installed");
            EntryHit {
                slot,
                key,
                priority,
            }
        });
        let event = MauEvent::Table {
            id,
            key: key.to_vec(),
            hit,
            action: call.action,
            args: call.args.clone(),
        };
        self.current().push(event);
    }

    fn register(&mut self, salu: SaluId, index: usize, old: u64, new: u64, output: u128) {
        let index = index as u32;
        self.current().push(MauEvent::Register {
            salu,
            index,
            old,
            new,
            output,
        });
    }

    fn meter(&mut self, meter: MeterId, index: usize, colour: u8) {
        let index = index as u32;
        self.current().push(MauEvent::Meter {
            meter,
            index,
            colour,
        });
    }

    fn counter(&mut self, counter: CounterId, index: usize) {
        let index = index as u32;
        self.current().push(MauEvent::Counter { counter, index });
    }

    fn hash(&mut self, hash: HashId, value: u128) {
        self.current().push(MauEvent::Hash { hash, value });
    }

    fn random(&mut self, field: FieldId, value: u128) {
        self.current().push(MauEvent::Random { field, value });
    }

    fn queue_depth(&mut self, port: u16, queue: Option<u16>, value: u128) {
        self.current()
            .push(MauEvent::QueueDepth { port, queue, value });
    }

    fn end(&mut self, phv: &Phv) {
        self.close_stage(phv);
    }
}
