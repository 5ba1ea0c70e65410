//! What the control plane reads back from a loaded gress: register elements, counters,
//! meters' configurations and bucket levels, and table entries with their hit counts.
//!
//! Why one set of types for both uses: a scheduled read (`ReadRegister`, `DumpTable`, ...,
//! [`crate::control::ReadTarget`]) and the state a run reports at its end show the same
//! objects, so a person reads them the same way in `state.txt` and a script the same way in
//! `summary.json`. A read of one element shows it whatever its value; a read of a whole
//! array, like the end-of-run state, shows what is not at rest: register elements not at
//! the array's initial value, non-zero counters, configured meters, and every table entry.
//!
//! State is per pipe (each pipe's stages hold their own registers, counters, meters and
//! tables). [`Pipes`] groups the pipes whose state is the same, so a chip whose traffic
//! went through one pipe shows that pipe and, once, the others. The readable form is in
//! [`text`].

pub mod text;

use crate::control::{ControlError, ReadTarget};
use crate::counter::Counts;
use crate::meter::MeterConfig;
use crate::pipe::LoadedGress;
use crate::program::{CountKind, CounterId, KeyMatch, MeterId, RegisterId, TableId};
use crate::time::Time;
use serde::{Deserialize, Serialize};

/// A register array's elements.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RegisterState {
    /// Name as the program declares it (`Ingress.flow_count`).
    pub name: String,
    /// Element width in bits.
    pub width: u8,
    /// Number of elements.
    pub size: u32,
    /// Every element's initial value.
    pub init: u64,
    /// The elements read: the one asked for, or every element not at `init`, by index.
    pub elements: Vec<Element>,
}

/// One register element.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Element {
    /// Index in the array.
    pub index: u32,
    /// Value.
    pub value: u64,
}

/// An indexed counter array's counts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CounterState {
    /// Name as the program declares it.
    pub name: String,
    /// What it counts (the other count stays 0).
    pub kind: CountKind,
    /// Number of counters.
    pub size: u32,
    /// The counters read: the one asked for, or every non-zero one, by index.
    pub counters: Vec<IndexedCounts>,
}

/// One counter of an array.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexedCounts {
    /// Index in the array.
    pub index: u32,
    /// Packets.
    pub packets: u64,
    /// Bytes.
    pub bytes: u64,
}

/// A meter array's meters.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MeterState {
    /// Name as the program declares it.
    pub name: String,
    /// What its rates and bursts count: bytes or packets.
    pub unit: CountKind,
    /// Number of meters.
    pub size: u32,
    /// Bytes added to each packet's length before a byte meter of the array colours it.
    /// (Absent from readings made before it was kept: 0.)
    #[serde(default)]
    pub byte_count_adjust: i32,
    /// The meters read: the one asked for, or every configured one, by index.
    pub meters: Vec<MeterLevel>,
}

/// One meter's configuration and buckets at the time of the reading.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MeterLevel {
    /// Index in the array.
    pub index: u32,
    /// Rates (per second) and bursts, if configured (an unconfigured meter is green).
    pub config: Option<MeterConfig>,
    /// Tokens in the committed bucket (whole bytes or packets, rounded down).
    pub committed: u64,
    /// Tokens in the peak bucket.
    pub peak: u64,
}

/// A table's entries and statistics.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableDump {
    /// Name as the program declares it.
    pub name: String,
    /// Capacity.
    pub size: u32,
    /// The key fields (names as the program writes them) and their widths.
    pub keys: Vec<KeyField>,
    /// The action a miss runs.
    pub default_action: String,
    /// Installed entries, by handle.
    pub entries: Vec<EntryDump>,
    /// Packets that hit no entry.
    pub misses: u64,
    /// What the table's direct counter counts, if it has one.
    pub direct_counter: Option<CountKind>,
    /// The direct counter of misses, if the table has one.
    pub direct_misses: Option<Counts>,
}

/// A key field of a table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeyField {
    /// As the program writes it (`hdr.ipv4.dst_addr`).
    pub name: String,
    /// Width in bits.
    pub width: u16,
}

/// One installed entry.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EntryDump {
    /// The slot it occupies, its handle while installed.
    pub handle: u32,
    /// One match per key field.
    pub key: Vec<KeyMatch>,
    /// Priority (ternary and range tables; 0 otherwise).
    pub priority: u32,
    /// Its action.
    pub action: String,
    /// The action data, by parameter.
    pub args: Vec<ActionArg>,
    /// Packets that hit it since it was installed.
    pub hits: u64,
    /// Its direct counter, if the table has one.
    pub direct: Option<Counts>,
}

/// One parameter of an entry's action data.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActionArg {
    /// Parameter name.
    pub name: String,
    /// Value.
    pub value: u128,
}

/// A table's direct counter for one entry or for its misses.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DirectCount {
    /// Table name.
    pub table: String,
    /// What it counts.
    pub kind: CountKind,
    /// The entry's key; none: the misses.
    pub key: Option<Vec<KeyMatch>>,
    /// The entry's priority (ternary and range tables).
    pub priority: u32,
    /// The count.
    pub counts: Counts,
}

/// What one read returned from one pipe.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Reading {
    /// `ReadRegister`.
    Register(RegisterState),
    /// `ReadCounter`.
    Counter(CounterState),
    /// `ReadDirectCounter`.
    DirectCounter(DirectCount),
    /// `ReadMeter`.
    Meter(MeterState),
    /// `DumpTable`.
    Table(TableDump),
}

/// Everything of one gress that a run leaves behind, object by object in program order.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GressState {
    /// Register arrays.
    pub registers: Vec<RegisterState>,
    /// Indexed counter arrays.
    pub counters: Vec<CounterState>,
    /// Meter arrays.
    pub meters: Vec<MeterState>,
    /// Tables.
    pub tables: Vec<TableDump>,
}

impl GressState {
    /// Whether the gress has no register, counter, meter or table.
    pub fn is_empty(&self) -> bool {
        self.registers.is_empty()
            && self.counters.is_empty()
            && self.meters.is_empty()
            && self.tables.is_empty()
    }
}

/// One pipe's state.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PipeState {
    /// Its ingress gress.
    pub ingress: GressState,
    /// Its egress gress.
    pub egress: GressState,
}

/// A value shared by some pipes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pipes<T> {
    /// The pipes, in order.
    pub pipes: Vec<u16>,
    /// What each of them holds.
    pub state: T,
}

/// One value per pipe (in pipe order) grouped: pipes holding the same value share a group,
/// groups in the order of their first pipe.
pub fn group_pipes<T: PartialEq>(per_pipe: Vec<T>) -> Vec<Pipes<T>> {
    let mut groups: Vec<Pipes<T>> = Vec::new();
    for (pipe, state) in per_pipe.into_iter().enumerate() {
        match groups.iter_mut().find(|g| g.state == state) {
            Some(g) => g.pipes.push(pipe as u16),
            None => groups.push(Pipes {
                pipes: vec![pipe as u16],
                state,
            }),
        }
    }
    groups
}

/// A chip's state at a time: every pipe's, pipes with the same state grouped.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChipState {
    /// When (ps).
    pub at_ps: u64,
    /// The pipe-clock cycle at or after that time: the state holds every packet that
    /// reached each object's stage before this cycle.
    pub cycle: u64,
    /// The pipes' state.
    pub pipes: Vec<Pipes<PipeState>>,
}

/// A read the control plane made at a scheduled time, and what every pipe returned.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ControlRead {
    /// The time asked for (ps).
    pub at_ps: u64,
    /// The pipe-clock cycle at or after it: the read saw every packet that reached the
    /// stage of what it reads before this cycle, and none after.
    pub cycle: u64,
    /// What the pipes returned, pipes that returned the same grouped.
    pub pipes: Vec<Pipes<Reading>>,
}

impl LoadedGress {
    /// Read `target` (resolved against this gress's program) as at time `now`, which only
    /// meters' buckets depend on. Single elements come through the same range-checked calls
    /// as every other control-plane read ([`LoadedGress::register_read`] and its siblings).
    pub fn read(&self, target: &ReadTarget, now: Time) -> Result<Reading, ControlError> {
        Ok(match *target {
            ReadTarget::Register { register, index } => {
                Reading::Register(self.register_state(register, index)?)
            }
            ReadTarget::Counter { counter, index } => {
                Reading::Counter(self.counter_state(counter, index)?)
            }
            ReadTarget::DirectCounter { table, ref entry } => {
                let counts = match entry {
                    Some((key, priority)) => self.direct_counter_read(table, key, *priority)?,
                    None => self.direct_miss_counter_read(table)?,
                };
                // The table exists and has a direct counter: the read above says so.
                let t = self.table_program(table)?;
                Reading::DirectCounter(DirectCount {
                    table: t.name.clone(),
                    kind: t.direct_counter.unwrap_or(CountKind::PacketsAndBytes),
                    key: entry.as_ref().map(|(k, _)| k.clone()),
                    priority: entry.as_ref().map_or(0, |e| e.1),
                    counts,
                })
            }
            ReadTarget::Meter { meter, index } => {
                Reading::Meter(self.meter_state(meter, index, now)?)
            }
            ReadTarget::Table(table) => Reading::Table(self.table_dump(table)?),
        })
    }

    /// Every register array, counter array, meter array and table of the gress as at `now`.
    pub fn state(&self, now: Time) -> GressState {
        let c = &self.program().control;
        let all = |n: usize| 0..n as u16;
        // Every index is the program's own, so none of these reads can fail.
        let ok = "an index of the program's own arrays";
        GressState {
            registers: all(c.registers.len())
                .map(|r| self.register_state(r, None).expect(ok))
                .collect(),
            counters: all(c.counters.len())
                .map(|k| self.counter_state(k, None).expect(ok))
                .collect(),
            meters: all(c.meters.len())
                .map(|m| self.meter_state(m, None, now).expect(ok))
                .collect(),
            tables: all(c.tables.len())
                .map(|t| self.table_dump(t).expect(ok))
                .collect(),
        }
    }

    fn table_program(&self, t: TableId) -> Result<&crate::program::Table, ControlError> {
        self.program()
            .control
            .tables
            .get(t as usize)
            .ok_or(ControlError::NoSuch {
                what: "table",
                id: t,
            })
    }

    fn register_state(
        &self,
        r: RegisterId,
        index: Option<u32>,
    ) -> Result<RegisterState, ControlError> {
        let bank = self.register(r)?;
        let a = &self.program().control.registers[r as usize];
        let init = (a.init & crate::phv::mask(a.width as u32)) as u64;
        let elements = match index {
            Some(i) => vec![Element {
                index: i,
                value: self.register_read(r, i)?,
            }],
            None => (0..bank.len())
                .map(|i| Element {
                    index: i as u32,
                    value: bank.read(i),
                })
                .filter(|e| e.value != init)
                .collect(),
        };
        Ok(RegisterState {
            name: a.name.clone(),
            width: a.width,
            size: a.size,
            init,
            elements,
        })
    }

    fn counter_state(
        &self,
        k: CounterId,
        index: Option<u32>,
    ) -> Result<CounterState, ControlError> {
        let indexed = |i: u32, c: Counts| IndexedCounts {
            index: i,
            packets: c.packets,
            bytes: c.bytes,
        };
        let counters = match index {
            Some(i) => vec![indexed(i, self.counter_read(k, i)?)],
            None => {
                let bank = self
                    .externs()
                    .counters
                    .get(k as usize)
                    .ok_or(ControlError::NoSuch {
                        what: "counter array",
                        id: k,
                    })?;
                bank.all()
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| **c != Counts::default())
                    .map(|(i, &c)| indexed(i as u32, c))
                    .collect()
            }
        };
        let a = &self.program().control.counters[k as usize];
        Ok(CounterState {
            name: a.name.clone(),
            kind: a.kind,
            size: a.size,
            counters,
        })
    }

    fn meter_state(
        &self,
        m: MeterId,
        index: Option<u32>,
        now: Time,
    ) -> Result<MeterState, ControlError> {
        let level = |i: u32| {
            self.meter_read_at(m, i, now).map(|r| MeterLevel {
                index: i,
                config: r.config,
                committed: r.tc,
                peak: r.tp,
            })
        };
        let a = self
            .program()
            .control
            .meters
            .get(m as usize)
            .ok_or(ControlError::NoSuch {
                what: "meter array",
                id: m,
            })?;
        let meters = match index {
            Some(i) => vec![level(i)?],
            None => (0..a.size)
                .map(level)
                .filter(|l| !matches!(l, Ok(MeterLevel { config: None, .. })))
                .collect::<Result<_, _>>()?,
        };
        Ok(MeterState {
            name: a.name.clone(),
            unit: a.unit,
            size: a.size,
            byte_count_adjust: self.externs().meters[m as usize].byte_count_adjust(),
            meters,
        })
    }

    fn table_dump(&self, t: TableId) -> Result<TableDump, ControlError> {
        let prog = self.table_program(t)?;
        let table = &self.tables()[t as usize];
        let action_name = |a: u16| {
            self.program()
                .control
                .actions
                .get(a as usize)
                .map_or_else(|| format!("#{a}"), |x| x.name.clone())
        };
        let entries = table
            .entries()
            .into_iter()
            .map(|e| EntryDump {
                handle: e.slot,
                key: e.key,
                priority: e.priority,
                action: action_name(e.call.action),
                args: table
                    .action_shape(e.call.action)
                    .map(|s| s.params.as_slice())
                    .unwrap_or_default()
                    .iter()
                    .zip(&e.call.args)
                    .map(|(p, &value)| ActionArg {
                        name: p.name.clone(),
                        value,
                    })
                    .collect(),
                hits: e.hits,
                direct: e.direct,
            })
            .collect();
        Ok(TableDump {
            name: prog.name.clone(),
            size: prog.size,
            keys: table
                .key_fields()
                .map(|(name, width)| KeyField {
                    name: name.to_string(),
                    width,
                })
                .collect(),
            default_action: action_name(table.default_entry().0.action),
            entries,
            misses: table.misses(),
            direct_counter: prog.direct_counter,
            direct_misses: table.direct_miss_count(),
        })
    }
}
