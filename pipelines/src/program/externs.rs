//! The externs an action drives: register arrays and their stateful-ALU programs, meters,
//! counters, hash units, and the calls that drive them ([`ExternCall`]).

use super::layout::FieldId;
use super::operation::{AluOp, CmpOp, Operand};
use serde::{Deserialize, Serialize};

/// Index into [`crate::program::ControlProgram::registers`].
pub type RegisterId = u16;
/// Index into [`crate::program::ControlProgram::salus`].
pub type SaluId = u16;
/// Index into [`crate::program::ControlProgram::meters`].
pub type MeterId = u16;
/// Index into [`crate::program::ControlProgram::counters`].
pub type CounterId = u16;
/// Index into [`crate::program::ControlProgram::hashes`].
pub type HashId = u16;

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
    /// Bytes added to each packet's length before a byte meter of the array colours it (a
    /// length that would fall below 0 counts 0), so that it can count what the wire adds, as
    /// Tofino's per-meter-table `meter_bytecount_adjust` does. The program's value: TNA's
    /// `execute(index, adjust_byte_count)` subtracts its constant, so this is its negation;
    /// the control plane may change it (`SetMeterByteCountAdjust`, as the driver's
    /// `bf_meter_bytecount_adjust_set`). 0 for a packet meter. (Absent from programs
    /// compiled before it was kept: 0.)
    #[serde(default)]
    pub byte_count_adjust: i32,
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

/// The most input bits one hash unit takes: the model's hash unit concatenates its input fields
/// into a 64-byte buffer on the stack (`crate::hash::pack_fields`), more than a 5-tuple with
/// room to spare.
/// The compiler refuses a longer input where it is written; the verifier checks it again.
pub const MAX_HASH_INPUT_BITS: u32 = 512;

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
