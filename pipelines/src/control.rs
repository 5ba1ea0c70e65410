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

use crate::entries::{
    find_by_name, parse_value, resolve, resolve_key, ControlFile, EntrySpec, KeySpec,
    ResolvedEntry, Value,
};
pub use crate::entries::{MeterSetting, RegisterWrite};
use crate::meter::MeterConfig;
use crate::program::{Gress, GressProgram, KeyMatch, MeterId, Program, RegisterId, TableId};
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
}

// Here rather than beside `ControlFile`: the entries module, which reads the file, knows
// nothing of operations (this module resolves them, through it).
impl ControlFile {
    /// The file's contents as operations, in order: entries, registers, meters.
    pub fn ops(&self) -> Vec<ControlOp> {
        self.tables
            .iter()
            .cloned()
            .map(ControlOp::AddEntry)
            .chain(self.registers.iter().cloned().map(ControlOp::WriteRegister))
            .chain(self.meters.iter().cloned().map(ControlOp::ConfigureMeter))
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
            ResolvedControlOp::ConfigureMeter { meter, .. } => {
                g.control.meters[*meter as usize].stage
            }
        }
    }

    /// The gress the operation applies to.
    pub fn gress(&self) -> Gress {
        match self {
            ResolvedControlOp::AddEntry(e) | ResolvedControlOp::ModifyEntry(e) => e.gress,
            ResolvedControlOp::DeleteEntry { gress, .. }
            | ResolvedControlOp::WriteRegister { gress, .. }
            | ResolvedControlOp::ConfigureMeter { gress, .. } => *gress,
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

fn u64_of(v: &Value, what: &str) -> Result<u64, String> {
    let n = parse_value(v)?;
    u64::try_from(n).map_err(|_| format!("{what} {n} does not fit 64 bits"))
}

/// Resolve a meter setting into its array and configuration.
pub fn resolve_meter_setting(p: &Program, m: &MeterSetting) -> Result<ResolvedControlOp, String> {
    let (gress, meter) = resolve_meter(p, &m.meter)?;
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

/// Resolve an operation against a program. Errors name what does not resolve; range and
/// capacity are checked when the operation is applied.
pub fn resolve_op(p: &Program, op: &ControlOp) -> Result<ResolvedControlOp, String> {
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
            ResolvedControlOp::WriteRegister {
                gress,
                register,
                index: w.index,
                value: parse_value(&w.value)?,
            }
        }
        ControlOp::ConfigureMeter(m) => resolve_meter_setting(p, m)?,
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
