//! The chip's control plane: table entries, registers, counters and meters, on every pipe.
//!
//! Why here and this way: a program is loaded on every pipe, and the control plane's
//! default ("symmetric") mode writes all pipes alike, so writes go to every pipe; state the
//! pipes accumulate separately (register values, counts, meter buckets, hit counts) is read
//! per pipe, and a read returns every pipe's, as BF Runtime does for a symmetric table.
//! Operations come resolved ([`ResolvedControlOp`], from `pipelines::control::resolve_op`,
//! so a Rust caller, an entries file and a scheduled scenario event all take the same
//! path), or as direct calls by index, or for reads by name. Errors name the object.

use crate::chip::{Chip, ChipError};
use pipelines::control::ResolvedRead;
use pipelines::control::{ControlError, ControlOp, ResolvedControlOp};
use pipelines::counter::Counts;
use pipelines::entries::find_by_name;
use pipelines::entries::ResolvedEntry;
use pipelines::meter::{MeterConfig, MeterReading};
use pipelines::pipe::LoadedGress;
use pipelines::program::{CounterId, Gress, KeyMatch, MeterId, RegisterId, TableId};
use pipelines::readout::{group_pipes, ChipState, PipeState, Pipes, Reading};
use pipelines::time::Time;

/// A control-plane operation at a time, as scenarios write it (one-chip and network alike).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScheduledOp {
    /// When (ns since the start of the run).
    pub at_ns: u64,
    /// What, by name: `AddEntry((table: ..., key: [...], action: ..., args: [...]))`,
    /// `ModifyEntry(...)`, `DeleteEntry((table: ..., key: [...]))`,
    /// `WriteRegister((register: ..., index: 0, value: 5))`,
    /// `ConfigureMeter((meter: ..., index: 0, cir: ..., pir: ..., cbs: ..., pbs: ...))`;
    /// reads, whose results are recorded with their time and cycle:
    /// `ReadRegister((register: ..., index: Some(0)))` (no `index`: every element not at
    /// its initial value), `ReadCounter((counter: ..., index: Some(0)))`,
    /// `ReadDirectCounter((table: ..., key: Some([...])))` (no `key`: the misses),
    /// `ReadMeter((meter: ..., index: Some(0)))`, `DumpTable((table: ...))`.
    pub op: ControlOp,
}

/// Which kind of extern array a name refers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Table,
    Register,
    Counter,
}

impl Chip {
    fn pipe_gress(&self, pipe: u16, gress: Gress) -> Result<&LoadedGress, ChipError> {
        self.gress(pipe, gress)
            .ok_or(ChipError::Control(ControlError::NoSuch {
                what: "pipe",
                id: pipe,
            }))
    }

    /// Apply a resolved operation to every pipe. Pipes run the same program, so an
    /// operation refused by one is refused by the first, before any pipe changes.
    pub fn apply(&mut self, op: &ResolvedControlOp) -> Result<(), ChipError> {
        self.apply_to_pipes(op).map_err(ChipError::Control)
    }

    /// [`Chip::apply`], with the pipe's own error.
    fn apply_to_pipes(&mut self, op: &ResolvedControlOp) -> Result<(), ControlError> {
        for g in self.gresses_mut(op.gress()) {
            g.apply(op)?;
        }
        Ok(())
    }

    /// Install a table entry in every pipe (the control plane's symmetric mode).
    pub fn add_entry(&mut self, e: &ResolvedEntry) -> Result<(), ChipError> {
        self.install(e).map_err(ChipError::Control)
    }

    /// [`Chip::add_entry`], with the pipe's own error.
    pub(crate) fn install(&mut self, e: &ResolvedEntry) -> Result<(), ControlError> {
        self.apply_to_pipes(&ResolvedControlOp::AddEntry(e.clone()))
    }

    /// The name of `gress`'s table `table`, or `#table` if the program has none such.
    pub(crate) fn table_name(&self, gress: Gress, table: TableId) -> String {
        self.gress(0, gress)
            .and_then(|g| g.program().control.tables.get(table as usize))
            .map_or_else(|| format!("#{table}"), |t| t.name.clone())
    }

    /// Write one register element in every pipe.
    pub fn register_write(
        &mut self,
        gress: Gress,
        register: RegisterId,
        index: u32,
        value: u128,
    ) -> Result<(), ChipError> {
        for g in self.gresses_mut(gress) {
            g.register_write(register, index, value)
                .map_err(ChipError::Control)?;
        }
        Ok(())
    }

    /// Read one register element of one pipe.
    pub fn register_read(
        &self,
        pipe: u16,
        gress: Gress,
        register: RegisterId,
        index: u32,
    ) -> Result<u64, ChipError> {
        self.pipe_gress(pipe, gress)?
            .register_read(register, index)
            .map_err(ChipError::Control)
    }

    /// Read one indexed counter of one pipe.
    pub fn counter_read(
        &self,
        pipe: u16,
        gress: Gress,
        counter: CounterId,
        index: u32,
    ) -> Result<Counts, ChipError> {
        self.pipe_gress(pipe, gress)?
            .counter_read(counter, index)
            .map_err(ChipError::Control)
    }

    /// Read the direct counter of a table entry in one pipe.
    pub fn direct_counter_read(
        &self,
        pipe: u16,
        gress: Gress,
        table: TableId,
        key: &[KeyMatch],
        priority: u32,
    ) -> Result<Counts, ChipError> {
        self.pipe_gress(pipe, gress)?
            .direct_counter_read(table, key, priority)
            .map_err(ChipError::Control)
    }

    /// Read the direct counter of a table's misses in one pipe.
    pub fn direct_miss_counter_read(
        &self,
        pipe: u16,
        gress: Gress,
        table: TableId,
    ) -> Result<Counts, ChipError> {
        self.pipe_gress(pipe, gress)?
            .direct_miss_counter_read(table)
            .map_err(ChipError::Control)
    }

    /// Configure one meter in every pipe (its buckets start full).
    pub fn meter_configure(
        &mut self,
        gress: Gress,
        meter: MeterId,
        index: u32,
        config: MeterConfig,
    ) -> Result<(), ChipError> {
        for g in self.gresses_mut(gress) {
            g.meter_configure(meter, index, config)
                .map_err(ChipError::Control)?;
        }
        Ok(())
    }

    /// Read one meter's configuration and buckets in one pipe.
    pub fn meter_read(
        &self,
        pipe: u16,
        gress: Gress,
        meter: MeterId,
        index: u32,
    ) -> Result<MeterReading, ChipError> {
        self.pipe_gress(pipe, gress)?
            .meter_read(meter, index)
            .map_err(ChipError::Control)
    }

    /// Read on every pipe as at `now` (only meters' buckets depend on it): what each pipe
    /// returned, pipes that returned the same grouped.
    pub fn read(&self, r: &ResolvedRead, now: Time) -> Result<Vec<Pipes<Reading>>, ChipError> {
        let per_pipe = (0..self.profile().pipes)
            .map(|pipe| {
                self.pipe_gress(pipe, r.gress)?
                    .read(&r.target, now)
                    .map_err(ChipError::Control)
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(group_pipes(per_pipe))
    }

    /// Every pipe's registers, counters, meters and tables as at `now`, pipes whose state is
    /// the same grouped.
    pub fn state(&self, now: Time) -> ChipState {
        let per_pipe = (0..self.profile().pipes)
            .filter_map(|pipe| {
                Some(PipeState {
                    ingress: self.gress(pipe, Gress::Ingress)?.state(now),
                    egress: self.gress(pipe, Gress::Egress)?.state(now),
                })
            })
            .collect();
        ChipState {
            at_ps: now.ps(),
            cycle: self.clock().cycle_at_or_after(now),
            pipes: group_pipes(per_pipe),
        }
    }

    /// Find a table, register or counter array by name (in full or by a unique last
    /// component) in the loaded program.
    fn find(&self, kind: Kind, name: &str) -> Result<(Gress, u16), ChipError> {
        let not_found = |reason: String| {
            ChipError::Control(ControlError::BadValue {
                object: name.to_string(),
                reason,
            })
        };
        let mut items: Vec<((Gress, u16), &str)> = Vec::new();
        for gress in [Gress::Ingress, Gress::Egress] {
            let Some(g) = self.gress(0, gress) else {
                continue;
            };
            let c = &g.program().control;
            let names: Vec<&str> = match kind {
                Kind::Table => c.tables.iter().map(|t| t.name.as_str()).collect(),
                Kind::Register => c.registers.iter().map(|r| r.name.as_str()).collect(),
                Kind::Counter => c.counters.iter().map(|r| r.name.as_str()).collect(),
            };
            items.extend(
                names
                    .into_iter()
                    .enumerate()
                    .map(|(i, n)| ((gress, i as u16), n)),
            );
        }
        let what = match kind {
            Kind::Table => "table",
            Kind::Register => "register array",
            Kind::Counter => "counter array",
        };
        find_by_name(items.into_iter(), name, what).map_err(not_found)
    }

    /// Read one register element of one pipe, by the register array's name.
    pub fn register_read_by_name(
        &self,
        pipe: u16,
        name: &str,
        index: u32,
    ) -> Result<u64, ChipError> {
        let (gress, r) = self.find(Kind::Register, name)?;
        self.register_read(pipe, gress, r, index)
    }

    /// Read one indexed counter of one pipe, by the counter array's name.
    pub fn counter_read_by_name(
        &self,
        pipe: u16,
        name: &str,
        index: u32,
    ) -> Result<Counts, ChipError> {
        let (gress, c) = self.find(Kind::Counter, name)?;
        self.counter_read(pipe, gress, c, index)
    }

    /// Read a table's direct counter for an entry (or, with `key` `None`, for misses) in
    /// one pipe, by the table's name.
    pub fn direct_counter_read_by_name(
        &self,
        pipe: u16,
        table: &str,
        key: Option<(&[KeyMatch], u32)>,
    ) -> Result<Counts, ChipError> {
        let (gress, t) = self.find(Kind::Table, table)?;
        match key {
            Some((k, priority)) => self.direct_counter_read(pipe, gress, t, k, priority),
            None => self.direct_miss_counter_read(pipe, gress, t),
        }
    }
}
