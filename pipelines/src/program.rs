//! The executable program format: what a compiled program tells the pipe to do.
//!
//! A [`Program`] holds one [`GressProgram`] for ingress and one for egress. Each is a parser
//! (a state machine that extracts headers into PHV fields), a control (tables and gateways
//! placed in MAU stages, linked by next-table pointers) and a deparser (headers to emit and
//! checksums to recompute). Fields live in PHV containers at positions the compiler chose;
//! everything the pipe executes refers to fields by [`FieldId`], and every field maps to
//! container slices, so PHV use is explicit and checkable.
//!
//! The format is plain data (serde), so `asic compile --emit ir` can dump it as RON and a
//! program can be checked against a chip with [`crate::verify`] before it runs.

use serde::{Deserialize, Serialize};

/// Index into [`PhvLayout::fields`].
pub type FieldId = u16;
/// Index into [`PhvLayout::headers`].
pub type HeaderId = u16;
/// Index into [`ParserProgram::states`].
pub type StateId = u16;
/// Index into [`ControlProgram::tables`].
pub type TableId = u16;
/// Index into [`ControlProgram::actions`].
pub type ActionId = u16;
/// Index into [`ControlProgram::gateways`].
pub type GatewayId = u16;
/// Index into [`ControlProgram::registers`].
pub type RegisterId = u16;
/// Index into [`ControlProgram::salus`].
pub type SaluId = u16;
/// Index into [`ControlProgram::meters`].
pub type MeterId = u16;
/// Index into [`ControlProgram::counters`].
pub type CounterId = u16;
/// Index into [`ControlProgram::hashes`].
pub type HashId = u16;

/// A compiled program: ingress and egress.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Program {
    /// Program name (from the source file).
    pub name: String,
    /// The ingress gress.
    pub ingress: GressProgram,
    /// The egress gress.
    pub egress: GressProgram,
}

/// Ingress or egress.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Gress {
    /// From the ingress MAC to the traffic manager.
    Ingress,
    /// From the traffic manager to the egress MAC.
    Egress,
}

/// One gress: parser, match-action control and deparser over one PHV layout.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GressProgram {
    /// Where every field lives in the PHV.
    pub phv: PhvLayout,
    /// The parser state machine.
    pub parser: ParserProgram,
    /// Tables, actions and gateways placed in stages.
    pub control: ControlProgram,
    /// Headers to emit and checksums to update.
    pub deparser: DeparserProgram,
}

// ---------------------------------------------------------------------------------------------
// PHV layout

/// A bit range inside one PHV container: bits `lsb .. lsb + width`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PhvSlice {
    /// Container index (8-bit containers first, then 16-bit, then 32-bit; see
    /// [`crate::spec::PhvSpec::width`]).
    pub container: u16,
    /// Lowest bit of the range within the container.
    pub lsb: u8,
    /// Number of bits.
    pub width: u8,
}

/// A named field of up to 128 bits, stored in one or more container slices.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Field {
    /// Qualified name, e.g. `hdr.ipv4.ttl` or `ig_tm_md.ucast_egress_port`.
    pub name: String,
    /// Width in bits (1..=128).
    pub width: u16,
    /// Where the bits live, most significant slice first; widths add up to `width`.
    pub slices: Vec<PhvSlice>,
}

/// A header: a sequence of fields extracted from and emitted to the wire, plus its validity
/// bit (which occupies PHV like any field, as the POV bits do on a real chip).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Header {
    /// Qualified name, e.g. `hdr.ipv4`.
    pub name: String,
    /// Fields in wire order; their widths add up to a whole number of bytes.
    pub fields: Vec<FieldId>,
    /// The 1-bit validity field.
    pub valid: FieldId,
}

/// Metadata the chip writes before the control runs or reads after it: the program's
/// interface to the MACs and the traffic manager. Each is bound to a PHV field.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Intrinsic {
    /// In (ingress): the port the packet arrived on.
    IngressPort,
    /// In (ingress): nanoseconds when the packet's first bit reached the ingress MAC.
    IngressMacTimestamp,
    /// In (both): nanoseconds when the packet entered the parser.
    GlobalTimestamp,
    /// In (both): packet length in bytes as stored in the buffer (no FCS).
    PacketLength,
    /// Out (ingress): the unicast egress port requested from the TM.
    UcastEgressPort,
    /// Out (ingress): set by the compiler whenever the program writes
    /// [`Intrinsic::UcastEgressPort`]; a packet without it has no destination and is dropped.
    UcastEgressPortValid,
    /// Out (ingress): the queue id within the egress port.
    QueueId,
    /// Out (both): non-zero drops the packet at the end of this gress.
    DropCtl,
    /// In (egress): the port the packet is leaving from.
    EgressPort,
    /// In (egress): the queue the packet left.
    EgressQueue,
    /// In (egress): queue depth in cells when this packet was enqueued.
    EnqQueueDepthCells,
    /// In (egress): queue depth in cells when this packet was dequeued.
    DeqQueueDepthCells,
    /// In (egress): nanoseconds the packet spent in the queue.
    QueueDelay,
    /// In (egress): queue depth in packets when this packet was enqueued.
    EnqQueueDepthPackets,
    /// In (egress): queue depth in packets when this packet was dequeued.
    DeqQueueDepthPackets,
    /// In (both): non-zero when the parser failed and the program chose to continue
    /// ([`ParserErrorPolicy::Continue`]); the value says why (see [`crate::parser::ParseError::code`]).
    ParserError,
    /// Out (ingress): multicast group (0: none).
    McastGroup,
    /// Out (ingress): deflect the packet if the TM refuses it, instead of dropping it.
    DeflectOnDrop,
    /// Out (ingress): the PFC class (ingress CoS) the TM accounts the packet under.
    IngressCos,
    /// Out (ingress): skip the egress pipe.
    BypassEgress,
    /// Out (both): mirror session (0: none).
    MirrorSession,
    /// Out (both): truncate the mirrored copy to this many bytes (0: whole packet).
    MirrorTruncateBytes,
    /// Out (ingress): recirculate the packet to this pipe's ingress after egress.
    Recirculate,
    /// Out (both): an advanced-flow-control request to the TM (Tofino2's `adv_flow_ctl`:
    /// qfc(1) | pipe(2) | mac(4) | pad(3) | qid(7) | credit(15)); 0: none.
    AdvFlowCtl,
    /// In (egress): the TM's congestion status of the queue at enqueue (TNA's
    /// `enq_congest_stat`): non-zero when the queue's ECN configuration marks this packet.
    /// The program sets CE, as on Tofino, where the TM flags and the egress pipe rewrites.
    EnqCongestStat,
    /// In (egress): the replication id of a multicast copy (0 for unicast).
    ReplicationId,
    /// In (egress): 1 when the TM deflected the packet (deflect-on-drop) to this port
    /// instead of dropping it (TNA's `eg_intr_md.deflection_flag`).
    Deflected,
}

impl Intrinsic {
    /// Number of intrinsics (for tables indexed by `Intrinsic as usize`).
    pub const COUNT: usize = Intrinsic::Deflected as usize + 1;
}

impl Intrinsic {
    /// Whether the chip writes this field before the control runs (as opposed to reading it
    /// afterwards). Programs may not assign chip-written fields.
    pub fn is_input(self) -> bool {
        !matches!(
            self,
            Intrinsic::UcastEgressPort
                | Intrinsic::UcastEgressPortValid
                | Intrinsic::QueueId
                | Intrinsic::DropCtl
        )
    }
}

/// Fields, headers and intrinsic bindings of one gress.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PhvLayout {
    /// All fields, including header validity bits and metadata.
    pub fields: Vec<Field>,
    /// All headers.
    pub headers: Vec<Header>,
    /// Which field carries each intrinsic the program uses.
    pub intrinsics: Vec<(Intrinsic, FieldId)>,
}

impl PhvLayout {
    /// The field bound to an intrinsic, if the program uses it.
    pub fn intrinsic(&self, which: Intrinsic) -> Option<FieldId> {
        self.intrinsics
            .iter()
            .find(|(i, _)| *i == which)
            .map(|&(_, f)| f)
    }

    /// Wire length in bytes of a header (its fields' widths, not its validity bit).
    pub fn header_bytes(&self, h: HeaderId) -> usize {
        let bits: usize = self.headers[h as usize]
            .fields
            .iter()
            .map(|&f| self.fields[f as usize].width as usize)
            .sum();
        bits / 8
    }
}

// ---------------------------------------------------------------------------------------------
// Parser

/// The parser: a state machine over the packet's bytes.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParserProgram {
    /// All states.
    pub states: Vec<ParserState>,
    /// The first state.
    pub start: StateId,
    /// What happens to a packet the parser fails on.
    #[serde(default)]
    pub on_error: ParserErrorPolicy,
}

/// What the chip does with a packet whose parse failed (rejected, truncated, too deep).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum ParserErrorPolicy {
    /// Drop it and count the error.
    #[default]
    Drop,
    /// Count the error, set [`Intrinsic::ParserError`] and run the control on what was
    /// extracted; the unparsed bytes stay payload.
    Continue,
}

/// One parser state: extract headers, then choose the next state.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParserState {
    /// Source name of the state.
    pub name: String,
    /// What the state does, in order.
    pub ops: Vec<ParserOp>,
    /// Where it goes next.
    pub transition: Transition,
}

/// A parser action.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ParserOp {
    /// Copy the header's bytes at the cursor into its fields, mark it valid and advance.
    Extract(HeaderId),
    /// Skip bits (a whole number of bytes) without extracting them.
    Advance(u32),
    /// Write a constant into a field (metadata initialisation).
    SetConst {
        /// Destination field.
        field: FieldId,
        /// Value (truncated to the field's width).
        value: u128,
    },
}

/// The end of a parser state.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Transition {
    /// Go to a fixed next step.
    Direct(Next),
    /// Match a key built from fields and lookahead bits against cases in order.
    Select {
        /// Key parts, concatenated most significant first.
        keys: Vec<SelectKey>,
        /// Cases tried in order; the first match wins.
        cases: Vec<SelectCase>,
        /// Taken when no case matches.
        default: Next,
    },
}

/// Where a parser state goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Next {
    /// Stop parsing; the rest of the packet is payload.
    Accept,
    /// Stop parsing and take the parser-error path.
    Reject,
    /// Continue in a state.
    State(StateId),
}

/// One part of a select key.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum SelectKey {
    /// Bits `lo ..= hi` of an already extracted field.
    Field {
        /// The field.
        field: FieldId,
        /// Highest bit (inclusive).
        hi: u16,
        /// Lowest bit.
        lo: u16,
    },
    /// Bits of the packet ahead of the cursor, not consumed.
    Lookahead {
        /// Offset from the cursor in bits.
        offset_bits: u32,
        /// Number of bits (1..=128).
        width: u16,
    },
}

/// A select case pattern over the concatenated key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum CasePattern {
    /// Matches when `key & mask == value & mask` (an exact value has an all-ones mask).
    Masked {
        /// Value to compare.
        value: u128,
        /// Bits that take part.
        mask: u128,
    },
    /// Matches when `lo <= key <= hi`.
    Range {
        /// Lowest matching key.
        lo: u128,
        /// Highest matching key.
        hi: u128,
    },
}

/// A case of a select transition.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SelectCase {
    /// What the key must match.
    pub pattern: CasePattern,
    /// Where to go on a match.
    pub next: Next,
}

// ---------------------------------------------------------------------------------------------
// Match-action control

/// Tables, gateways and actions of a gress, placed in stages.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ControlProgram {
    /// Number of MAU stages the control occupies; the packet crosses stages `0..stages`.
    pub stages: u16,
    /// All tables.
    pub tables: Vec<Table>,
    /// All actions.
    pub actions: Vec<Action>,
    /// All gateways (if-conditions).
    pub gateways: Vec<Gateway>,
    /// The first node of the control flow; `None` for an empty control.
    pub entry: Option<Node>,
    /// Register arrays.
    #[serde(default)]
    pub registers: Vec<RegisterArray>,
    /// Stateful-ALU programs (`RegisterAction`s), each bound to one register array.
    #[serde(default)]
    pub salus: Vec<StatefulAlu>,
    /// Meter arrays.
    #[serde(default)]
    pub meters: Vec<MeterArray>,
    /// Counter arrays (indexed, not direct).
    #[serde(default)]
    pub counters: Vec<CounterArray>,
    /// Hash units.
    #[serde(default)]
    pub hashes: Vec<HashUnit>,
}

impl ControlProgram {
    /// Whether any action reads the queue depths the TM publishes to ingress
    /// ([`ExternCall::QueueDepth`]): the chip keeps the published copies only then.
    pub fn reads_queue_depths(&self) -> bool {
        self.actions.iter().any(|a| {
            a.externs.iter().any(|x| {
                matches!(
                    x,
                    ExternCall::QueueDepth { .. } | ExternCall::EmptyQueues { .. }
                )
            })
        })
    }
}

/// A node of the control flow: a table or a gateway.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Node {
    /// Apply a table.
    Table(TableId),
    /// Evaluate a gateway.
    Gateway(GatewayId),
}

/// How a key field is matched.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum MatchKind {
    /// Equality, in SRAM (hash lookup).
    Exact,
    /// Value and mask with priority, in TCAM.
    Ternary,
    /// Longest prefix, in TCAM (priority by prefix length).
    Lpm,
    /// Inclusive range, in TCAM.
    Range,
}

impl MatchKind {
    /// Whether this kind of key needs TCAM.
    pub fn uses_tcam(self) -> bool {
        !matches!(self, MatchKind::Exact)
    }
}

/// One key field of a table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableKey {
    /// The field matched.
    pub field: FieldId,
    /// How it is matched.
    pub kind: MatchKind,
    /// Name shown to the control plane (the source expression).
    pub name: String,
    /// Only bits `hi ..= lo` of the field take part (`f[15:8] : exact`).
    #[serde(default)]
    pub slice: Option<(u16, u16)>,
}

/// An action with its parameter values.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActionCall {
    /// The action.
    pub action: ActionId,
    /// Action data, one value per parameter.
    pub args: Vec<u128>,
}

/// Where control goes after a table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum TableNext {
    /// The same next node whatever happened.
    Always(Option<Node>),
    /// Depends on whether an entry matched.
    HitMiss {
        /// After a hit.
        hit: Option<Node>,
        /// After a miss (the default action ran).
        miss: Option<Node>,
    },
    /// Depends on which action ran (`switch (t.apply().action_run)`).
    ByAction {
        /// Per action; actions not listed take `default`.
        cases: Vec<(ActionId, Option<Node>)>,
        /// Otherwise.
        default: Option<Node>,
    },
}

/// A match table placed in a stage.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Table {
    /// Qualified name, e.g. `Ingress.ipv4_lpm`.
    pub name: String,
    /// The MAU stage holding it.
    pub stage: u16,
    /// Key fields (empty for a keyless table that always runs its default action).
    pub keys: Vec<TableKey>,
    /// Actions an entry may name.
    pub actions: Vec<ActionId>,
    /// What runs on a miss.
    pub default_action: ActionCall,
    /// Maximum number of entries.
    pub size: u32,
    /// Entries fixed by the program.
    pub const_entries: Vec<Entry>,
    /// Control flow after the table.
    pub next: TableNext,
    /// A direct counter: one count per entry (and one for misses), of this kind.
    #[serde(default)]
    pub direct_counter: Option<CountKind>,
}

impl Table {
    /// Whether the table's keys need TCAM.
    pub fn uses_tcam(&self) -> bool {
        self.keys.iter().any(|k| k.kind.uses_tcam())
    }
}

/// A table entry as the pipe stores it (keys already resolved to numbers).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// One match value per key field.
    pub key: Vec<KeyMatch>,
    /// Action and its data.
    pub action: ActionCall,
    /// Priority among overlapping ternary/range entries: higher wins.
    pub priority: u32,
}

/// How one key field of an entry matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum KeyMatch {
    /// Equal to the value.
    Exact(u128),
    /// `field & mask == value & mask`.
    Ternary {
        /// Value.
        value: u128,
        /// Care bits.
        mask: u128,
    },
    /// The top `prefix_len` bits equal those of `value`.
    Lpm {
        /// Value.
        value: u128,
        /// Prefix length in bits.
        prefix_len: u16,
    },
    /// `lo <= field <= hi`.
    Range {
        /// Lowest.
        lo: u128,
        /// Highest.
        hi: u128,
    },
}

/// An action: VLIW operations applied together (all read the PHV as it was before any of
/// them writes, as the per-container ALUs of a stage do).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Action {
    /// Qualified name, e.g. `Ingress.set_nexthop`.
    pub name: String,
    /// Parameters (action data) with widths.
    pub params: Vec<ActionParam>,
    /// Operations, at most one per destination bit (a concatenation deposits into disjoint
    /// slices of one field).
    pub ops: Vec<Op>,
    /// Extern units the action drives (stateful ALUs, meters, counters, hashes, random).
    /// They read the PHV as it was before the action, like the operations.
    #[serde(default)]
    pub externs: Vec<ExternCall>,
}

/// An action parameter.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActionParam {
    /// Source name.
    pub name: String,
    /// Width in bits.
    pub width: u16,
}

/// A source operand of an ALU operation or a gateway comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Operand {
    /// A PHV field.
    Field(FieldId),
    /// A constant (from the instruction's immediate or action data RAM).
    Const(u128),
    /// An action parameter (action data), by index.
    Param(u8),
    /// Bits `hi ..= lo` of a field, as an unsigned value.
    Slice {
        /// The field.
        field: FieldId,
        /// Highest bit (inclusive).
        hi: u16,
        /// Lowest bit.
        lo: u16,
    },
}

/// The ALU operations of a VLIW slot (unsigned arithmetic modulo the destination width).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum AluOp {
    /// `dst = a`.
    Set,
    /// `dst = a + b`.
    Add,
    /// `dst = a - b`.
    Sub,
    /// `dst = a |+| b` (saturating at the destination's maximum).
    AddSat,
    /// `dst = a |-| b` (saturating at zero).
    SubSat,
    /// `dst = a & b`.
    And,
    /// `dst = a | b`.
    Or,
    /// `dst = a ^ b`.
    Xor,
    /// `dst = ~a`.
    Not,
    /// `dst = a << b`.
    Shl,
    /// `dst = a >> b`.
    Shr,
    /// `dst = min(a, b)`.
    Min,
    /// `dst = max(a, b)`.
    Max,
}

/// One VLIW operation writing one field.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Op {
    /// The field written.
    pub dst: FieldId,
    /// Only bits `hi ..= lo` of `dst` are written (the others keep their value): the
    /// deposit-field form of the instruction.
    #[serde(default)]
    pub dst_slice: Option<(u16, u16)>,
    /// The operation.
    pub alu: AluOp,
    /// First operand.
    pub a: Operand,
    /// Second operand (ignored by `Set` and `Not`).
    pub b: Operand,
}

/// Comparison operators of a gateway.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum CmpOp {
    /// `==`.
    Eq,
    /// `!=`.
    Ne,
    /// `<`.
    Lt,
    /// `<=`.
    Le,
    /// `>`.
    Gt,
    /// `>=`.
    Ge,
}

impl CmpOp {
    /// `a op b`, unsigned (gateways and stateful-ALU predicates compare alike).
    #[inline(always)]
    pub fn holds(self, a: u128, b: u128) -> bool {
        match self {
            CmpOp::Eq => a == b,
            CmpOp::Ne => a != b,
            CmpOp::Lt => a < b,
            CmpOp::Le => a <= b,
            CmpOp::Gt => a > b,
            CmpOp::Ge => a >= b,
        }
    }
}

/// A gateway condition: comparisons combined with and/or/not.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Cond {
    /// Always true.
    True,
    /// A comparison of two operands (unsigned).
    Cmp {
        /// Left operand.
        a: Operand,
        /// Operator.
        op: CmpOp,
        /// Right operand.
        b: Operand,
    },
    /// Both hold.
    And(Box<Cond>, Box<Cond>),
    /// Either holds.
    Or(Box<Cond>, Box<Cond>),
    /// Negation.
    Not(Box<Cond>),
}

/// A gateway: an if-condition placed in a stage.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Gateway {
    /// The MAU stage evaluating it.
    pub stage: u16,
    /// The condition.
    pub cond: Cond,
    /// Next node when true.
    pub on_true: Option<Node>,
    /// Next node when false.
    pub on_false: Option<Node>,
}

// ---------------------------------------------------------------------------------------------
// Deparser

/// The deparser: headers emitted in order (valid ones only), then the payload.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeparserProgram {
    /// Headers in emit order.
    pub emit: Vec<HeaderId>,
    /// Headers (when valid) that start each mirrored copy, before the deparsed packet:
    /// TNA's mirror header, how a program hands metadata to the copy's egress or to the
    /// ingress it is recirculated to. At most [`crate::deparser::MIRROR_HEADER_MAX_BYTES`].
    #[serde(default)]
    pub mirror_emit: Vec<HeaderId>,
    /// Checksums recomputed before emitting.
    pub checksums: Vec<ChecksumUpdate>,
}

/// An Internet (ones'-complement, RFC 1071) checksum written into a field from other fields.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChecksumUpdate {
    /// The 16-bit field that receives the checksum.
    pub dst: FieldId,
    /// Fields summed, in order, as one big-endian bit string (zero-padded to 16 bits).
    pub sources: Vec<FieldId>,
    /// Computed only when this header is valid.
    pub when_valid: HeaderId,
}

// ---------------------------------------------------------------------------------------------
// Externs: registers and stateful ALUs, meters, counters, hashes, random numbers

/// A register array in a stage's SRAM.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RegisterArray {
    /// Qualified name, e.g. `Ingress.flow_count`.
    pub name: String,
    /// The stage holding it (and its stateful ALU).
    pub stage: u16,
    /// Element width in bits.
    pub width: u8,
    /// Number of elements.
    pub size: u32,
    /// Initial value of every element.
    pub init: u128,
}

/// A truth table over a stateful ALU's conditions: bit `k` is set when the predicate holds
/// for condition outcome vector `k` (condition `i` true sets bit `i` of `k`). This is how
/// the hardware combines its comparisons, so any and/or/not of up to four conditions is one
/// 16-bit word.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Predicate(pub u16);

impl Predicate {
    /// Always true.
    pub const ALWAYS: Predicate = Predicate(0xffff);

    /// Whether the predicate holds for these condition outcomes.
    pub fn holds(self, outcomes: u8) -> bool {
        self.0 >> (outcomes & 0xf) & 1 == 1
    }
}

/// An operand of a stateful ALU.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum SaluOperand {
    /// The register element as read (before this packet's update).
    Register,
    /// A PHV field (from the stage's input crossbar).
    Field(FieldId),
    /// A constant.
    Const(u128),
}

/// A comparison a stateful ALU evaluates: `a op b`, unsigned.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SaluCond {
    /// Left.
    pub a: SaluOperand,
    /// Operator.
    pub op: CmpOp,
    /// Right.
    pub b: SaluOperand,
}

/// A predicated update: when `when` holds, the register becomes `a alu b`. The first update
/// whose predicate holds writes; if none does, the register keeps its value.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SaluUpdate {
    /// When it applies.
    pub when: Predicate,
    /// Operation.
    pub alu: AluOp,
    /// First operand.
    pub a: SaluOperand,
    /// Second operand.
    pub b: SaluOperand,
}

/// What a stateful ALU output returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum SaluValue {
    /// The register as read.
    Old,
    /// The register as written back (equal to `Old` if no update applied).
    New,
    /// An operand.
    Operand(SaluOperand),
    /// The condition outcome vector (bit `i` = condition `i`).
    Predicate,
}

/// A predicated output: the first output whose predicate holds is returned.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SaluOutput {
    /// When it applies.
    pub when: Predicate,
    /// The value.
    pub value: SaluValue,
}

/// A stateful-ALU program (a `RegisterAction`): one read-modify-write of one element, or,
/// with `minmax`, a search over the lanes of one SRAM word.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatefulAlu {
    /// Qualified name.
    pub name: String,
    /// The register array it updates.
    pub register: RegisterId,
    /// Comparisons, in order (at most the profile's `salu.conditions`).
    pub conditions: Vec<SaluCond>,
    /// Predicated updates (at most `salu.updates`).
    pub updates: Vec<SaluUpdate>,
    /// Predicated outputs (at most `salu.outputs`); none returned gives 0.
    pub outputs: Vec<SaluOutput>,
    /// The min/max unit instead of the compare and update ALUs (then `conditions` and
    /// `updates` are empty and the output is the selected lane's value).
    #[serde(default)]
    pub minmax: Option<MinMax>,
}

/// JBay's stateful min/max unit (T2NA `min8`/`max8`/`min16`/`max16`): the stateful ALU reads
/// a whole 128-bit SRAM word, that is 16 lanes of 8 bits or 8 lanes of 16 bits (the lane is
/// the register's element, so the extern's index selects a word: elements
/// `word·lanes .. word·lanes + lanes`), picks the smallest (largest) lane among those `mask`
/// enables, returns its value and lane number, and adds `postmod` to that lane as it writes
/// the word back. In one pass, so a search and a claim cannot interleave with another
/// packet's: what makes it the tool for "give me a free queue" at line rate.
///
/// Assumptions where no public source says: ties go to the lowest lane; `postmod` saturates
/// at 0 and at the lane's maximum; a mask enabling no lane returns the lane maximum (min) or
/// 0 (max) at lane 0 and writes nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MinMax {
    /// `true` selects the largest lane, `false` the smallest.
    pub max: bool,
    /// The lanes considered: bit `l` enables lane `l` (from the PHV or a constant).
    pub mask: SaluOperand,
    /// Added to the selected lane, two's complement at the lane width (from the PHV or a
    /// constant; `Const(0)` leaves the word as it was).
    pub postmod: SaluOperand,
}

impl MinMax {
    /// Bits of an SRAM word, the unit's input.
    pub const WORD_BITS: u16 = 128;
}

/// What a meter or counter counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum CountKind {
    /// Packets.
    Packets,
    /// Bytes (the packet length as stored, no FCS).
    Bytes,
    /// Both.
    PacketsAndBytes,
}

/// A meter array: two-rate three-colour meters (RFC 2698) configured by the control plane.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MeterArray {
    /// Qualified name.
    pub name: String,
    /// The stage holding it.
    pub stage: u16,
    /// Number of meters.
    pub size: u32,
    /// Bytes or packets (`PacketsAndBytes` is not a meter unit).
    pub unit: CountKind,
}

/// A counter array.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CounterArray {
    /// Qualified name.
    pub name: String,
    /// The stage holding it.
    pub stage: u16,
    /// Number of counters.
    pub size: u32,
    /// What is counted.
    pub kind: CountKind,
}

/// A hash function a hash unit computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum HashAlgorithm {
    /// The input bits themselves (truncated to the output width).
    Identity,
    /// A CRC given by its catalogue parameters (Williams' model, as the `crc` crate).
    Crc {
        /// Width in bits (8, 16, 32 or 64).
        width: u8,
        /// Polynomial (normal form).
        poly: u64,
        /// Initial register value: the seed.
        init: u64,
        /// Reflect input bytes.
        refin: bool,
        /// Reflect the output.
        refout: bool,
        /// XOR applied to the output.
        xorout: u64,
    },
}

/// A hash unit: a function of some fields, truncated to `width` bits.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HashUnit {
    /// Qualified name.
    pub name: String,
    /// The stage computing it.
    pub stage: u16,
    /// The function.
    pub algorithm: HashAlgorithm,
    /// Input fields, concatenated most significant first and zero-padded at the end to whole bytes.
    pub fields: Vec<FieldId>,
    /// Output bits (the low bits of the function's value).
    pub width: u16,
}

/// Where an extern's index comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ExternIndex {
    /// An operand (field, constant or action parameter), taken modulo the array size.
    Operand(Operand),
    /// A hash unit's output, taken modulo the array size.
    Hash(HashId),
}

/// An extern unit driven by an action.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ExternCall {
    /// Run a stateful-ALU program on one element; its output goes to `dst` if any.
    Stateful {
        /// The program.
        salu: SaluId,
        /// Which element (for a min/max program, which word).
        index: ExternIndex,
        /// Where the output goes.
        dst: Option<FieldId>,
        /// Where a min/max program's selected lane number goes.
        lane_dst: Option<FieldId>,
    },
    /// Colour the packet with a meter: 0 green, 1 yellow, 3 red (TNA's encoding).
    Meter {
        /// The meter array.
        meter: MeterId,
        /// Which meter.
        index: ExternIndex,
        /// Where the colour goes.
        dst: FieldId,
    },
    /// Count the packet.
    Count {
        /// The counter array.
        counter: CounterId,
        /// Which counter.
        index: ExternIndex,
    },
    /// Write a hash unit's output to a field.
    Hash {
        /// The unit.
        hash: HashId,
        /// Destination.
        dst: FieldId,
    },
    /// Write a pseudo-random number (from the pipe's seeded generator) to a field.
    Random {
        /// Destination (its width is the number's width).
        dst: FieldId,
    },
    /// Read the depth in cells of queue `queue` of egress port `port` as last published to
    /// this pipe's ingress by the TM's periodic depth export (Tofino2's ghost thread), at
    /// the time the packet is in the stage of the table whose action makes the call: the
    /// snapshot the TM took at the last multiple of the profile's `depth_export_period_ps`
    /// at or before `stage time − depth_export_delay_ps` (0 before the first one is
    /// visible). Ingress only (the verifier refuses it in egress).
    ///
    /// A port or queue the chip does not have reads 0 (they are runtime values, so the
    /// verifier cannot refuse them). A depth wider than `dst` saturates at its maximum.
    ///
    /// No stage resource is counted: the published depths arrive on a dedicated bus beside
    /// the PHV, not through a stage's ALUs or memories (an assumption: Tofino2 programs keep
    /// the ghost thread's copies in registers, which this model does not make them spend).
    QueueDepth {
        /// Egress port (an operand of the action's PHV or data).
        port: Operand,
        /// Queue within the port.
        queue: Operand,
        /// Destination.
        dst: FieldId,
    },
    /// The empty queues of egress port `port` in the same published snapshot as
    /// [`ExternCall::QueueDepth`]: bit `q` of `dst` is 1 when queue `q` reads 0 cells (so a
    /// queue or port the chip lacks reads empty). What BFC's empty-queue bitmap holds,
    /// refreshed from the same export. Ingress only; no stage resource is counted, as for
    /// `QueueDepth`.
    EmptyQueues {
        /// Egress port.
        port: Operand,
        /// Destination (up to 128 queues).
        dst: FieldId,
    },
}
