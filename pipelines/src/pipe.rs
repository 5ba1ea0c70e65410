//! A loaded gress: a verified program, its tables' entries, and its timing.
//!
//! The pipe is fully pipelined: it accepts one packet per cycle and every packet spends the
//! same number of cycles in it (the latency depends on what the stages hold, not on which
//! tables a packet hits). Because packets cross every stage in issue order, running a
//! packet's whole gress at once, in issue order, gives exactly the results the stages would
//! compute one cycle at a time; the event kernel does that at the cycle the packet leaves
//! (see docs/ARCHITECTURE.md), and [`GressTiming`] says where it was at every cycle.

use crate::deparser::deparse;
use crate::mau::{run_control, ControlStats};
use crate::parser::{parse, ParseError};
use crate::phv::Phv;
use crate::program::{ControlProgram, Gress, GressProgram, Intrinsic};
use crate::spec::{LatencySpec, PipeSpec, StageFeatures};
use crate::table::{TableError, TableState};
use crate::verify::{verify_gress, VerifyError};
use std::fmt;

/// What a stage of the control holds that costs extra cycles.
pub fn stage_features(control: &ControlProgram, stage: u16) -> StageFeatures {
    StageFeatures {
        tcam: control
            .tables
            .iter()
            .any(|t| t.stage == stage && t.uses_tcam()),
        stateful: false,
        meter: false,
    }
}

/// Cycle offsets of a gress: when, after its issue cycle, a packet reaches each part.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GressTiming {
    /// Cycles in the parser.
    pub parser: u32,
    /// Cycles in each stage the program occupies.
    pub stages: Vec<u32>,
    /// Cycles in the deparser.
    pub deparser: u32,
}

impl GressTiming {
    /// Timing of `control` under the chip's latencies.
    pub fn of(control: &ControlProgram, lat: &LatencySpec) -> GressTiming {
        GressTiming {
            parser: lat.parser_cycles,
            stages: (0..control.stages)
                .map(|s| lat.stage_cycles(stage_features(control, s)))
                .collect(),
            deparser: lat.deparser_cycles,
        }
    }

    /// Cycles from issue until the packet leaves the deparser.
    pub fn total(&self) -> u32 {
        self.parser + self.stages.iter().sum::<u32>() + self.deparser
    }

    /// Cycles from issue until the packet enters stage `s`.
    pub fn stage_entry(&self, s: usize) -> u32 {
        self.parser + self.stages[..s].iter().sum::<u32>()
    }
}

/// Why a program could not be loaded.
#[derive(Debug)]
pub enum LoadError {
    /// The program does not fit the chip or is malformed.
    Verify(VerifyError),
    /// A const entry does not fit its table.
    Table(TableError),
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::Verify(e) => e.fmt(f),
            LoadError::Table(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for LoadError {}

/// Metadata the chip hands the gress (fields the program does not use are ignored).
#[derive(Clone, Copy, Debug, Default)]
pub struct GressInputs {
    /// Ingress port.
    pub ingress_port: u16,
    /// When the first bit reached the ingress MAC (ns).
    pub ingress_mac_ns: u64,
    /// When the packet entered this gress's parser (ns).
    pub global_ns: u64,
    /// Egress port (egress only).
    pub egress_port: u16,
    /// Egress queue (egress only).
    pub egress_queue: u16,
    /// Queue depth at enqueue, in cells (egress only).
    pub enq_depth_cells: u32,
    /// Queue depth at dequeue, in cells (egress only).
    pub deq_depth_cells: u32,
    /// Time spent queued (ns; egress only).
    pub queue_delay_ns: u64,
}

/// What the gress asks of the chip.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GressOutputs {
    /// Unicast egress port, if the program set one.
    pub ucast_egress_port: Option<u16>,
    /// Queue within the egress port.
    pub queue: u16,
    /// Non-zero: drop the packet.
    pub drop_ctl: u8,
    /// Tables applied and hits.
    pub stats: ControlStats,
}

/// Intrinsic field bindings resolved once at load, so the per-packet path does not search.
#[derive(Clone, Copy, Debug, Default)]
struct Bindings {
    ingress_port: Option<u16>,
    ingress_mac_ts: Option<u16>,
    global_ts: Option<u16>,
    pkt_length: Option<u16>,
    egress_port: Option<u16>,
    egress_queue: Option<u16>,
    enq_depth: Option<u16>,
    deq_depth: Option<u16>,
    queue_delay: Option<u16>,
    ucast_port: Option<u16>,
    ucast_valid: Option<u16>,
    qid: Option<u16>,
    drop_ctl: Option<u16>,
}

/// A gress loaded on a pipe.
pub struct LoadedGress {
    gress: Gress,
    prog: GressProgram,
    tables: Vec<TableState>,
    timing: GressTiming,
    phv: Phv,
    bind: Bindings,
    scratch: Vec<u8>,
}

impl LoadedGress {
    /// Verify `prog` against the chip and load it with its const entries.
    pub fn load(
        gress: Gress,
        prog: GressProgram,
        spec: &PipeSpec,
    ) -> Result<LoadedGress, LoadError> {
        let name = match gress {
            Gress::Ingress => "ingress",
            Gress::Egress => "egress",
        };
        verify_gress(name, &prog, spec).map_err(LoadError::Verify)?;
        let param_counts: Vec<usize> = prog
            .control
            .actions
            .iter()
            .map(|a| a.params.len())
            .collect();
        let tables = prog
            .control
            .tables
            .iter()
            .map(|t| {
                let widths: Vec<u16> = t
                    .keys
                    .iter()
                    .map(|k| prog.phv.fields[k.field as usize].width)
                    .collect();
                TableState::new(t, &widths, &param_counts)
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(LoadError::Table)?;
        let b = |i| prog.phv.intrinsic(i);
        let bind = Bindings {
            ingress_port: b(Intrinsic::IngressPort),
            ingress_mac_ts: b(Intrinsic::IngressMacTimestamp),
            global_ts: b(Intrinsic::GlobalTimestamp),
            pkt_length: b(Intrinsic::PacketLength),
            egress_port: b(Intrinsic::EgressPort),
            egress_queue: b(Intrinsic::EgressQueue),
            enq_depth: b(Intrinsic::EnqQueueDepthCells),
            deq_depth: b(Intrinsic::DeqQueueDepthCells),
            queue_delay: b(Intrinsic::QueueDelay),
            ucast_port: b(Intrinsic::UcastEgressPort),
            ucast_valid: b(Intrinsic::UcastEgressPortValid),
            qid: b(Intrinsic::QueueId),
            drop_ctl: b(Intrinsic::DropCtl),
        };
        Ok(LoadedGress {
            gress,
            timing: GressTiming::of(&prog.control, &spec.latency),
            phv: Phv::new(spec.phv.total()),
            tables,
            prog,
            bind,
            scratch: Vec::new(),
        })
    }

    /// Ingress or egress.
    pub fn gress(&self) -> Gress {
        self.gress
    }

    /// The program.
    pub fn program(&self) -> &GressProgram {
        &self.prog
    }

    /// Where a packet is at each cycle after issue.
    pub fn timing(&self) -> &GressTiming {
        &self.timing
    }

    /// Tables by index (for the control plane).
    pub fn tables_mut(&mut self) -> &mut [TableState] {
        &mut self.tables
    }

    /// Run the packet in `data` through parser, stages and deparser; `data` is replaced by
    /// the deparsed packet.
    pub fn process(
        &mut self,
        data: &mut Vec<u8>,
        inp: &GressInputs,
    ) -> Result<GressOutputs, ParseError> {
        let layout = &self.prog.phv;
        let phv = &mut self.phv;
        phv.clear();
        let put = |phv: &mut Phv, f: Option<u16>, v: u128| {
            if let Some(f) = f {
                phv.set(&layout.fields[f as usize], v);
            }
        };
        let b = self.bind;
        put(phv, b.ingress_port, inp.ingress_port as u128);
        put(phv, b.ingress_mac_ts, inp.ingress_mac_ns as u128);
        put(phv, b.global_ts, inp.global_ns as u128);
        put(phv, b.pkt_length, data.len() as u128);
        put(phv, b.egress_port, inp.egress_port as u128);
        put(phv, b.egress_queue, inp.egress_queue as u128);
        put(phv, b.enq_depth, inp.enq_depth_cells as u128);
        put(phv, b.deq_depth, inp.deq_depth_cells as u128);
        put(phv, b.queue_delay, inp.queue_delay_ns as u128);

        // A walk longer than states x (bytes + 1) must revisit a (state, cursor) pair: the
        // parser would loop forever. Until the profile gives a parse-depth limit, this
        // bound is the only one, and it rejects exactly the looping walks.
        let max_states = self.prog.parser.states.len() * (data.len() + 1);
        let payload = parse(&self.prog.parser, layout, data, phv, max_states)?;
        let stats = run_control(&self.prog.control, layout, &self.tables, phv);
        deparse(
            &self.prog.deparser,
            layout,
            phv,
            &data[payload..],
            &mut self.scratch,
        );
        std::mem::swap(data, &mut self.scratch);

        let get = |f: Option<u16>| f.map_or(0, |f| phv.get(&layout.fields[f as usize]));
        let valid = get(b.ucast_valid) != 0;
        Ok(GressOutputs {
            ucast_egress_port: valid.then(|| get(b.ucast_port) as u16),
            queue: get(b.qid) as u16,
            drop_ctl: get(b.drop_ctl) as u8,
            stats,
        })
    }
}
