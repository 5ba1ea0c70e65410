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
    /// Operations, at most one per destination field.
    pub ops: Vec<Op>,
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
