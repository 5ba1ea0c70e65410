//! The control plane's operations: what a controller (a Rust caller, an entries file, a
//! scenario at a scheduled time, an STF test) may do to a loaded program, by name or
//! resolved to indices.
//!
//! Why a data type: the same operation arrives from several places (the API, RON files,
//! scheduled scenario events), so it is one serializable [`ControlOp`] that names tables,
//! registers and meters as people write them, resolved once against the program into a
//! [`ResolvedControlOp`] (indices and numbers) that `LoadedGress::apply` (and the chip,
//! for every pipe) executes. Names resolve as in entry files: in full
//! (`Ingress.flow_count`) or by a unique last component (`flow_count`).
//!
//! Reads are operations too (`simple_switch_CLI`'s `register_read`, `counter_read`,
//! `meter_get_rates` and `table_dump`): at a scheduled time they take effect at the stage
//! of what they read exactly as writes do, so a read sees every packet that reached that
//! stage before its time. What they return is [`crate::readout`]'s.

use crate::entries::{
    find_by_name, parse_value, resolve, resolve_key, ControlFile, EntrySpec, KeySpec,
    ResolvedEntry, Value,
};
pub use crate::entries::{MeterAdjust, MeterSetting, RegisterWrite};
use crate::meter::{check_byte_count_adjust, MeterConfig};
use crate::program::{
    CounterId, Gress, GressProgram, KeyMatch, MeterId, Program, RegisterId, TableId,
};
use crate::table::TableError;
use serde::{Deserialize, Serialize};
use std::fmt;

/// The key of an entry to delete, as written in files.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EntryKey {
    /// Table name.
    pub table: String,
    /// One match per key field.
    pub key: Vec<KeySpec>,
    /// Priority (ternary and range tables).
    #[serde(default)]
    pub priority: u32,
}

/// A control-plane operation by name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ControlOp {
    /// Add a table entry (a full table refuses it).
    AddEntry(EntrySpec),
    /// Replace the action of the entry with the same key.
    ModifyEntry(EntrySpec),
    /// Delete the entry with this key.
    DeleteEntry(EntryKey),
    /// Write one register element.
    WriteRegister(RegisterWrite),
    /// Configure one meter (its buckets start full).
    ConfigureMeter(MeterSetting),
    /// Set a meter array's byte-count adjustment (its buckets stay as they are).
    SetMeterByteCountAdjust(MeterAdjust),
    /// Read a register element, or every element not at its initial value.
    ReadRegister(RegisterRead),
    /// Read an indexed counter, or every non-zero counter of the array.
    ReadCounter(CounterRead),
    /// Read a table's direct counter for one entry, or for its misses.
    ReadDirectCounter(DirectCounterRead),
    /// Read a meter's configuration and bucket levels, or every configured meter's.
    ReadMeter(MeterRead),
    /// Every entry of a table with its action, action data and hit count, and the misses.
    DumpTable(TableRead),
}

/// A register to read, as written in files: `(register: "flow_count", index: Some(7))`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegisterRead {
    /// Register array name.
    pub register: String,
    /// Element; none: every element not at the array's initial value.
    #[serde(default)]
    pub index: Option<u32>,
}

/// A counter to read, as written in files: `(counter: "color_stats", index: Some(3))`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CounterRead {
    /// Counter array name.
    pub counter: String,
    /// Counter; none: every non-zero counter of the array.
    #[serde(default)]
    pub index: Option<u32>,
}

/// A direct counter to read: `(table: "l2_fwd", key: Some([Exact("02:00:00:00:00:02")]))`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DirectCounterRead {
    /// Table name.
    pub table: String,
    /// The entry's key; none: the count of misses.
    #[serde(default)]
    pub key: Option<Vec<KeySpec>>,
    /// The entry's priority (ternary and range tables).
    #[serde(default)]
    pub priority: u32,
}

/// A meter to read: `(meter: "port_meter", index: Some(0))`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MeterRead {
    /// Meter array name.
    pub meter: String,
    /// Meter; none: every configured meter of the array.
    #[serde(default)]
    pub index: Option<u32>,
}

/// A table to dump: `(table: "ipv4_lpm")`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TableRead {
    /// Table name.
    pub table: String,
}

// Here rather than beside `ControlFile`: the entries module, which reads the file, knows
// nothing of operations (this module resolves them, through it).
impl ControlFile {
    /// The file's contents as operations, in order: entries, registers, meters, meter
    /// arrays' byte-count adjustments.
    pub fn ops(&self) -> Vec<ControlOp> {
        self.tables
            .iter()
            .cloned()
            .map(ControlOp::AddEntry)
            .chain(self.registers.iter().cloned().map(ControlOp::WriteRegister))
            .chain(self.meters.iter().cloned().map(ControlOp::ConfigureMeter))
            .chain(
                self.meter_adjusts
                    .iter()
                    .cloned()
                    .map(ControlOp::SetMeterByteCountAdjust),
            )
            .collect()
    }
}

/// A control-plane operation resolved against a program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ResolvedControlOp {
    /// Add a table entry.
    AddEntry(ResolvedEntry),
    /// Replace the action of the entry with the same key (and priority).
    ModifyEntry(ResolvedEntry),
    /// Delete an entry.
    DeleteEntry {
        /// Gress of the table.
        gress: Gress,
        /// Table index.
        table: TableId,
        /// The entry's key.
        key: Vec<KeyMatch>,
        /// The entry's priority.
        priority: u32,
    },
    /// Write a register element.
    WriteRegister {
        /// Gress of the register array.
        gress: Gress,
        /// Register array index.
        register: RegisterId,
        /// Element.
        index: u32,
        /// Value.
        value: u128,
    },
    /// Configure a meter.
    ConfigureMeter {
        /// Gress of the meter array.
        gress: Gress,
        /// Meter array index.
        meter: MeterId,
        /// Meter.
        index: u32,
        /// Rates and bursts.
        config: MeterConfig,
    },
    /// Set a meter array's byte-count adjustment.
    SetMeterByteCountAdjust {
        /// Gress of the meter array.
        gress: Gress,
        /// Meter array index.
        meter: MeterId,
        /// Bytes added to each packet's length.
        bytes: i32,
    },
    /// Read state (changing nothing).
    Read(ResolvedRead),
}

/// A read resolved against a program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResolvedRead {
    /// Gress of what is read.
    pub gress: Gress,
    /// What is read.
    pub target: ReadTarget,
}

/// What a read reads, by index (element indices checked against the array's size).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReadTarget {
    /// A register element, or (`None`) every element not at the initial value.
    Register {
        /// Register array index.
        register: RegisterId,
        /// Element.
        index: Option<u32>,
    },
    /// A counter, or (`None`) every non-zero counter.
    Counter {
        /// Counter array index.
        counter: CounterId,
        /// Counter.
        index: Option<u32>,
    },
    /// A table's direct counter for the entry with this key and priority, or (`None`) for
    /// misses.
    DirectCounter {
        /// Table index.
        table: TableId,
        /// The entry's key and priority.
        entry: Option<(Vec<KeyMatch>, u32)>,
    },
    /// A meter, or (`None`) every configured meter.
    Meter {
        /// Meter array index.
        meter: MeterId,
        /// Meter.
        index: Option<u32>,
    },
    /// Every entry of a table.
    Table(TableId),
}

impl ResolvedControlOp {
    /// The MAU stage holding what the operation changes (in the program of its gress); for a
    /// table split across stages, its first part's, where a packet's lookup starts (which
    /// part an entry goes into is known only when the operation runs).
    pub fn stage(&self, g: &GressProgram) -> u16 {
        match self {
            ResolvedControlOp::AddEntry(e) | ResolvedControlOp::ModifyEntry(e) => {
                g.control.tables[e.table as usize].stage
            }
            ResolvedControlOp::DeleteEntry { table, .. } => g.control.tables[*table as usize].stage,
            ResolvedControlOp::WriteRegister { register, .. } => {
                g.control.registers[*register as usize].stage
            }
            ResolvedControlOp::ConfigureMeter { meter, .. }
            | ResolvedControlOp::SetMeterByteCountAdjust { meter, .. } => {
                g.control.meters[*meter as usize].stage
            }
            ResolvedControlOp::Read(r) => match &r.target {
                ReadTarget::Register { register, .. } => {
                    g.control.registers[*register as usize].stage
                }
                ReadTarget::Counter { counter, .. } => g.control.counters[*counter as usize].stage,
                ReadTarget::Meter { meter, .. } => g.control.meters[*meter as usize].stage,
                ReadTarget::DirectCounter { table, .. } | ReadTarget::Table(table) => {
                    g.control.tables[*table as usize].stage
                }
            },
        }
    }

    /// The gress the operation applies to.
    pub fn gress(&self) -> Gress {
        match self {
            ResolvedControlOp::AddEntry(e) | ResolvedControlOp::ModifyEntry(e) => e.gress,
            ResolvedControlOp::DeleteEntry { gress, .. }
            | ResolvedControlOp::WriteRegister { gress, .. }
            | ResolvedControlOp::ConfigureMeter { gress, .. }
            | ResolvedControlOp::SetMeterByteCountAdjust { gress, .. } => *gress,
            ResolvedControlOp::Read(r) => r.gress,
        }
    }
}

/// Why a control-plane operation failed, naming the object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ControlError {
    /// A table refused the operation (full, duplicate, not found, invalid).
    Table(TableError),
    /// No object with this index in the program.
    NoSuch {
        /// `table`, `register array`, `meter array` or `counter array`.
        what: &'static str,
        /// The index asked for.
        id: u16,
    },
    /// An element index beyond the array.
    IndexOutOfRange {
        /// The array's name.
        object: String,
        /// The index asked for.
        index: u32,
        /// The array's size.
        size: usize,
    },
    /// A value the object cannot take.
    BadValue {
        /// The object's name.
        object: String,
        /// What is wrong.
        reason: String,
    },
    /// The object has no state of that kind (e.g. a table without a direct counter).
    Unsupported {
        /// The object's name.
        object: String,
        /// What is missing.
        reason: String,
    },
}

impl fmt::Display for ControlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ControlError::Table(e) => e.fmt(f),
            ControlError::NoSuch { what, id } => write!(f, "the program has no {what} #{id}"),
            ControlError::IndexOutOfRange {
                object,
                index,
                size,
            } => write!(
                f,
                "{object}: index {index} is out of range (the array has {size} elements, 0 to {})",
                size.saturating_sub(1)
            ),
            ControlError::BadValue { object, reason }
            | ControlError::Unsupported { object, reason } => {
                write!(f, "{object}: {reason}")
            }
        }
    }
}

impl std::error::Error for ControlError {}

impl From<TableError> for ControlError {
    fn from(e: TableError) -> ControlError {
        ControlError::Table(e)
    }
}

fn gresses(p: &Program) -> [(Gress, &GressProgram); 2] {
    [(Gress::Ingress, &p.ingress), (Gress::Egress, &p.egress)]
}

/// The gress and index of the table named `name`.
pub fn resolve_table(p: &Program, name: &str) -> Result<(Gress, TableId), String> {
    let items = gresses(p).into_iter().flat_map(|(g, gp)| {
        gp.control
            .tables
            .iter()
            .enumerate()
            .map(move |(i, t)| ((g, i as u16), t.name.as_str()))
    });
    find_by_name(items, name, "table")
}

/// The gress and index of the register array named `name`.
pub fn resolve_register(p: &Program, name: &str) -> Result<(Gress, RegisterId), String> {
    let items = gresses(p).into_iter().flat_map(|(g, gp)| {
        gp.control
            .registers
            .iter()
            .enumerate()
            .map(move |(i, r)| ((g, i as u16), r.name.as_str()))
    });
    find_by_name(items, name, "register array")
}

/// The gress and index of the meter array named `name`.
pub fn resolve_meter(p: &Program, name: &str) -> Result<(Gress, MeterId), String> {
    let items = gresses(p).into_iter().flat_map(|(g, gp)| {
        gp.control
            .meters
            .iter()
            .enumerate()
            .map(move |(i, m)| ((g, i as u16), m.name.as_str()))
    });
    find_by_name(items, name, "meter array")
}

/// The gress and index of the counter array named `name`.
pub fn resolve_counter(p: &Program, name: &str) -> Result<(Gress, CounterId), String> {
    let items = gresses(p).into_iter().flat_map(|(g, gp)| {
        gp.control
            .counters
            .iter()
            .enumerate()
            .map(move |(i, c)| ((g, i as u16), c.name.as_str()))
    });
    find_by_name(items, name, "counter array")
}

/// `index` checked against the `size` of array `name` (what the control plane's own range
/// check says, so a file's error reads like the chip's).
fn in_range(name: &str, index: u32, size: u32) -> Result<u32, String> {
    if index < size {
        Ok(index)
    } else {
        Err(ControlError::IndexOutOfRange {
            object: name.to_string(),
            index,
            size: size as usize,
        }
        .to_string())
    }
}

fn gress_of(p: &Program, g: Gress) -> &GressProgram {
    match g {
        Gress::Ingress => &p.ingress,
        Gress::Egress => &p.egress,
    }
}

/// `index`, if given, checked against the `size` of array `name`.
fn checked(name: &str, index: Option<u32>, size: u32) -> Result<Option<u32>, String> {
    index.map(|i| in_range(name, i, size)).transpose()
}

fn u64_of(v: &Value, what: &str) -> Result<u64, String> {
    let n = parse_value(v)?;
    u64::try_from(n).map_err(|_| format!("{what} {n} does not fit 64 bits"))
}

/// Resolve a meter setting into its array and configuration.
pub fn resolve_meter_setting(p: &Program, m: &MeterSetting) -> Result<ResolvedControlOp, String> {
    let (gress, meter) = resolve_meter(p, &m.meter)?;
    let a = &gress_of(p, gress).control.meters[meter as usize];
    in_range(&a.name, m.index, a.size)?;
    let config = MeterConfig {
        cir: u64_of(&m.cir, "CIR")?,
        pir: u64_of(&m.pir, "PIR")?,
        cbs: u64_of(&m.cbs, "CBS")?,
        pbs: u64_of(&m.pbs, "PBS")?,
    };
    config.check()?;
    Ok(ResolvedControlOp::ConfigureMeter {
        gress,
        meter,
        index: m.index,
        config,
    })
}

/// Resolve an operation against a program. Errors name what does not resolve and an
/// element index past its array (both known from the program, so found before anything
/// runs); a table's capacity and an entry's fit are checked when the operation is applied.
pub fn resolve_op(p: &Program, op: &ControlOp) -> Result<ResolvedControlOp, String> {
    let read = |gress, target| ResolvedControlOp::Read(ResolvedRead { gress, target });
    Ok(match op {
        ControlOp::AddEntry(e) => ResolvedControlOp::AddEntry(resolve(p, e)?),
        ControlOp::ModifyEntry(e) => ResolvedControlOp::ModifyEntry(resolve(p, e)?),
        ControlOp::DeleteEntry(k) => {
            let (gress, table) = resolve_table(p, &k.table)?;
            ResolvedControlOp::DeleteEntry {
                gress,
                table,
                key: resolve_key(&k.key)?,
                priority: k.priority,
            }
        }
        ControlOp::WriteRegister(w) => {
            let (gress, register) = resolve_register(p, &w.register)?;
            let a = &gress_of(p, gress).control.registers[register as usize];
            in_range(&a.name, w.index, a.size)?;
            ResolvedControlOp::WriteRegister {
                gress,
                register,
                index: w.index,
                value: parse_value(&w.value)?,
            }
        }
        ControlOp::ConfigureMeter(m) => resolve_meter_setting(p, m)?,
        ControlOp::SetMeterByteCountAdjust(a) => {
            let (gress, meter) = resolve_meter(p, &a.meter)?;
            // The unit is known now; the range, the chip's, when the operation is applied.
            let m = &gress_of(p, gress).control.meters[meter as usize];
            check_byte_count_adjust(m.unit, a.bytes, i32::MIN..=i32::MAX)
                .map_err(|e| format!("meter array {}: {e}", m.name))?;
            ResolvedControlOp::SetMeterByteCountAdjust {
                gress,
                meter,
                bytes: a.bytes,
            }
        }
        ControlOp::ReadRegister(r) => {
            let (gress, register) = resolve_register(p, &r.register)?;
            let a = &gress_of(p, gress).control.registers[register as usize];
            let index = checked(&a.name, r.index, a.size)?;
            read(gress, ReadTarget::Register { register, index })
        }
        ControlOp::ReadCounter(c) => {
            let (gress, counter) = resolve_counter(p, &c.counter)?;
            let a = &gress_of(p, gress).control.counters[counter as usize];
            let index = checked(&a.name, c.index, a.size)?;
            read(gress, ReadTarget::Counter { counter, index })
        }
        ControlOp::ReadDirectCounter(d) => {
            let (gress, table) = resolve_table(p, &d.table)?;
            let t = &gress_of(p, gress).control.tables[table as usize];
            if t.direct_counter.is_none() {
                return Err(format!("table {} has no direct counter", t.name));
            }
            let entry = match &d.key {
                Some(k) => Some((resolve_key(k)?, d.priority)),
                None => None,
            };
            read(gress, ReadTarget::DirectCounter { table, entry })
        }
        ControlOp::ReadMeter(m) => {
            let (gress, meter) = resolve_meter(p, &m.meter)?;
            let a = &gress_of(p, gress).control.meters[meter as usize];
            let index = checked(&a.name, m.index, a.size)?;
            read(gress, ReadTarget::Meter { meter, index })
        }
        ControlOp::DumpTable(t) => {
            let (gress, table) = resolve_table(p, &t.table)?;
            read(gress, ReadTarget::Table(table))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entries::parse_control_file;

    #[test]
    fn a_control_file_is_its_operations_in_order() {
        let full = r#"(
            tables: [ (table: "t", key: [Exact(1)], action: "a") ],
            registers: [ (register: "r", index: 3, value: "0x10") ],
            meters: [ (meter: "m", index: 0, cir: 1_000_000, pir: 2_000_000, cbs: 1500, pbs: 3000) ],
        )"#;
        let ops = parse_control_file(full, "e.ron").unwrap().ops();
        assert!(matches!(
            ops[..],
            [
                ControlOp::AddEntry(_),
                ControlOp::WriteRegister(_),
                ControlOp::ConfigureMeter(_)
            ]
        ));
    }
}
