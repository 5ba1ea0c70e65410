//! A loaded gress: a verified program, its tables' entries, its externs' state, and its
//! timing.
//!
//! The pipe is fully pipelined: it accepts one packet per cycle and every packet spends the
//! same number of cycles in it (the latency depends on what the stages hold, not on which
//! tables a packet hits). Because packets cross every stage in issue order, running a
//! packet's whole gress at once, in issue order, gives exactly the results the stages would
//! compute one cycle at a time; the event kernel does that at the cycle the packet leaves
//! (see docs/ARCHITECTURE.md), and [`GressTiming`] says where it was at every cycle
//! ([`GressTiming::position`]). A primitive whose result depends on time (a meter) is
//! given the time at which the packet was in its stage, computed from the issue cycle, so
//! running late changes nothing.
//!
//! The control-plane methods here act on one gress of one pipe; the chip applies writes
//! to every pipe (`asic-model`'s `control_plane.rs`).

use crate::action_data::ActionShape;
use crate::control::{ControlError, ResolvedControlOp};
use crate::counter::Counts;
use crate::deparser::{emit, mirror_header, InPlace, MirrorHeader};
use crate::mau::{
    run_control, ControlPlan, ControlStats, DepthView, ExternState, NoDepths, PacketCtx,
};
use crate::meter::{check_byte_count_adjust, MeterConfig, MeterReading};
use crate::parser::{parse, ParseError};
use crate::phv::{FieldRef, Phv, WireLayout};
use crate::program::{
    ControlProgram, CounterId, FieldId, Gress, GressProgram, HeaderId, Intrinsic, KeyMatch,
    MeterArray, MeterId, Next, ParserErrorPolicy, RegisterId, TableId, Transition,
};
use crate::salu::RegisterBank;
use crate::spec::{LatencySpec, PipeSpec, StageFeatures};
use crate::table::{TableError, TableState};
use crate::time::{Clock, Time};
use crate::trace::{GressLog, GressTracer, NoTrace};
use crate::verify::{verify_gress, VerifyError};
use std::fmt;
use std::ops::RangeInclusive;

/// What a stage of the control holds that costs extra cycles: a TCAM table (or a part of
/// one split across stages), a register array (with its stateful ALU), a meter array.
pub fn stage_features(control: &ControlProgram, stage: u16) -> StageFeatures {
    StageFeatures {
        tcam: control
            .tables
            .iter()
            .any(|t| t.uses_tcam() && t.stage_parts().iter().any(|p| p.stage == stage)),
        stateful: control.registers.iter().any(|r| r.stage == stage),
        meter: control.meters.iter().any(|m| m.stage == stage),
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

/// Where a packet is in a gress at some cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PipePosition {
    /// Not issued yet.
    Waiting,
    /// In the parser.
    Parser,
    /// In MAU stage `k`.
    Stage(u16),
    /// In the deparser.
    Deparser,
    /// Left the gress.
    Gone,
}

impl fmt::Display for PipePosition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PipePosition::Waiting => f.write_str("waiting"),
            PipePosition::Parser => f.write_str("parser"),
            PipePosition::Stage(k) => write!(f, "stage {k}"),
            PipePosition::Deparser => f.write_str("deparser"),
            PipePosition::Gone => f.write_str("gone"),
        }
    }
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

    /// Where a packet issued at cycle `issue` is during cycle `cycle`. A packet is in the
    /// parser for cycles `issue .. issue + parser`, then in each stage for its latency, then
    /// in the deparser, and gone from cycle `issue + total()`.
    pub fn position(&self, issue: u64, cycle: u64) -> PipePosition {
        if cycle < issue {
            return PipePosition::Waiting;
        }
        let mut t = cycle - issue;
        if t < self.parser as u64 {
            return PipePosition::Parser;
        }
        t -= self.parser as u64;
        for (k, &c) in self.stages.iter().enumerate() {
            if t < c as u64 {
                return PipePosition::Stage(k as u16);
            }
            t -= c as u64;
        }
        if t < self.deparser as u64 {
            PipePosition::Deparser
        } else {
            PipePosition::Gone
        }
    }

    /// The packet's path as `(first cycle, position)` pairs, from issue to departure.
    pub fn trace(&self, issue: u64) -> Vec<(u64, PipePosition)> {
        let mut v = vec![(issue, PipePosition::Parser)];
        let mut t = issue + self.parser as u64;
        for (k, &c) in self.stages.iter().enumerate() {
            v.push((t, PipePosition::Stage(k as u16)));
            t += c as u64;
        }
        v.push((t, PipePosition::Deparser));
        v.push((t + self.deparser as u64, PipePosition::Gone));
        v
    }
}

/// The seed of a gress's random number generator, derived from a run's seed, the pipe and
/// the gress (SplitMix64 finalizer: nearby inputs give unrelated seeds).
pub fn gress_seed(run_seed: u64, pipe: u16, gress: Gress) -> u64 {
    let g = match gress {
        Gress::Ingress => 0u64,
        Gress::Egress => 1,
    };
    let mut z = run_seed
        .wrapping_add((pipe as u64) << 1 | g)
        .wrapping_add(1)
        .wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
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
    /// The cycle the packet was issued into this gress (its parser). The global timestamp
    /// (ns) and the time the packet is in each stage derive from it.
    pub issue_cycle: u64,
    /// Ingress port.
    pub ingress_port: u16,
    /// When the first bit reached the ingress MAC (ns).
    pub ingress_mac_ns: u64,
    /// Egress port (egress only).
    pub egress_port: u16,
    /// Egress queue (egress only).
    pub egress_queue: u16,
    /// Queue depth at enqueue, in cells (egress only).
    pub enq_depth_cells: u32,
    /// Queue depth at dequeue, in cells (egress only).
    pub deq_depth_cells: u32,
    /// Queue depth at enqueue, in packets (egress only).
    pub enq_depth_pkts: u32,
    /// Queue depth at dequeue, in packets (egress only).
    pub deq_depth_pkts: u32,
    /// The TM's congestion status at enqueue (egress only): non-zero to mark ECN.
    pub enq_congest_stat: u8,
    /// Replication id of a multicast copy (egress only; 0 for unicast).
    pub replication_id: u16,
    /// Time spent queued (ns; egress only).
    pub queue_delay_ns: u64,
    /// The TM deflected the packet (deflect-on-drop; egress only).
    pub deflected: bool,
    /// The packet is a what-if mirror-on-drop copy (ingress only).
    pub mirror_on_drop: bool,
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
    /// Non-zero: the parser failed and the program continued
    /// ([`ParserErrorPolicy::Continue`]); the [`ParseError::code`] of the failure. The chip
    /// counts these.
    pub parser_error: u16,
    /// What the program asks of the TM and the chip beyond a unicast port.
    pub requests: TmRequests,
    /// Tables applied and hits.
    pub stats: ControlStats,
}

/// Requests a gress makes of the traffic manager and the chip's plumbing (all zero/false
/// when the program does not set them).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TmRequests {
    /// PFC class (ingress CoS) the TM accounts the packet under.
    pub ingress_cos: u8,
    /// Multicast group (0: none).
    pub mcast_group: u16,
    /// Deflect instead of dropping when the TM refuses the packet.
    pub deflect_on_drop: bool,
    /// Skip the egress pipe.
    pub bypass_egress: bool,
    /// Mirror session (0: none).
    pub mirror_session: u16,
    /// Truncate the mirrored copy to this many bytes (0: whole packet).
    pub mirror_truncate_bytes: u16,
    /// Recirculate after egress.
    pub recirculate: bool,
    /// Advanced flow control request (0: none).
    pub adv_flow_ctl: u32,
    /// The packet's colour (TNA's `packet_color`; 0: green).
    pub packet_color: u8,
    /// What starts the mirrored copy (empty unless the program mirrors and emits a
    /// mirror header).
    pub mirror_header: MirrorHeader,
}

/// The field bound to each intrinsic, indexed by `Intrinsic as usize`, resolved once at
/// load so the per-packet path does not search.
type Bindings = [Option<FieldId>; Intrinsic::COUNT];

/// A gress loaded on a pipe.
pub struct LoadedGress {
    gress: Gress,
    prog: GressProgram,
    tables: Vec<TableState>,
    timing: GressTiming,
    /// `timing.stage_entry(s)` for every stage, computed once.
    stage_entry: Vec<u32>,
    clock: Clock,
    max_depth: usize,
    /// The byte-count adjustments a meter array can hold (the profile's meter ALU).
    meter_adjust_range: RangeInclusive<i32>,
    ext: ExternState,
    phv: Phv,
    /// The field of [`Intrinsic::ParserError`].
    parser_error: FieldRef,
    /// The inputs the program reads, with their fields (of [`INPUTS`]).
    inputs: Vec<(Intrinsic, FieldRef)>,
    /// The outputs the program binds, each with its place in [`OUTPUTS`] and its field: the
    /// others read 0.
    outputs: Vec<(usize, FieldRef)>,
    /// Headers and checksums as container slices, for the parser and the deparser.
    wire: WireLayout,
    /// What the deparser writes back when the headers stay in place.
    in_place: InPlace,
    /// The last packet's extractions (header, bit offset), from the parser.
    extracted: Vec<(HeaderId, u32)>,
    /// The actions, decoded.
    plan: ControlPlan,
    /// The gress extracts nothing, applies nothing and binds no intrinsic: it leaves every
    /// packet as it is and asks for nothing (the stock routers' egress).
    identity: bool,
    scratch: Vec<u8>,
}

/// The intrinsics the chip reads after the gress ran, into [`GressOutputs`], in the order
/// [`LoadedGress::process_with_depths`] takes their values apart.
const OUTPUTS: [Intrinsic; 13] = [
    Intrinsic::UcastEgressPort,
    Intrinsic::UcastEgressPortValid,
    Intrinsic::QueueId,
    Intrinsic::DropCtl,
    Intrinsic::IngressCos,
    Intrinsic::McastGroup,
    Intrinsic::DeflectOnDrop,
    Intrinsic::BypassEgress,
    Intrinsic::MirrorSession,
    Intrinsic::MirrorTruncateBytes,
    Intrinsic::Recirculate,
    Intrinsic::AdvFlowCtl,
    Intrinsic::PacketColor,
];

/// The intrinsics the chip writes before the parser runs.
const INPUTS: [Intrinsic; 15] = [
    Intrinsic::IngressPort,
    Intrinsic::IngressMacTimestamp,
    Intrinsic::GlobalTimestamp,
    Intrinsic::PacketLength,
    Intrinsic::EgressPort,
    Intrinsic::EgressQueue,
    Intrinsic::EnqQueueDepthCells,
    Intrinsic::DeqQueueDepthCells,
    Intrinsic::EnqQueueDepthPackets,
    Intrinsic::DeqQueueDepthPackets,
    Intrinsic::QueueDelay,
    Intrinsic::EnqCongestStat,
    Intrinsic::ReplicationId,
    Intrinsic::Deflected,
    Intrinsic::MirrorOnDrop,
];

impl LoadedGress {
    /// Verify `prog` against the chip and load it with its const entries, on a pipe whose
    /// clock is `clock`. `seed` seeds the gress's random number generator (ChaCha8): the
    /// chip derives it from the scenario's seed, the pipe and the gress, so runs repeat.
    pub fn load(
        gress: Gress,
        prog: GressProgram,
        spec: &PipeSpec,
        clock: Clock,
        seed: u64,
    ) -> Result<LoadedGress, LoadError> {
        let name = match gress {
            Gress::Ingress => "ingress",
            Gress::Egress => "egress",
        };
        verify_gress(name, &prog, spec).map_err(LoadError::Verify)?;
        let plan = ControlPlan::new(&prog.control, &prog.phv);
        let shapes = plan.action_shapes(&prog.control);
        let tables = load_tables(&prog, &shapes).map_err(|(_, e)| LoadError::Table(e))?;
        let ext = ExternState::new(&prog.control, seed);
        let mut bind: Bindings = [None; Intrinsic::COUNT];
        for &(i, f) in &prog.phv.intrinsics {
            bind[i as usize] = Some(f);
        }
        // The intrinsics of `which` the program binds: each with its place in `which`.
        let bound = |which: &'static [Intrinsic]| {
            which.iter().enumerate().filter_map(|(k, &i)| {
                bind[i as usize].map(|f| (k, i, FieldRef::new(&prog.phv, Some(f))))
            })
        };
        let inputs = bound(&INPUTS).map(|(_, i, f)| (i, f)).collect();
        let outputs = bound(&OUTPUTS).map(|(k, _, f)| (k, f)).collect();
        let parser_error = FieldRef::new(&prog.phv, bind[Intrinsic::ParserError as usize]);
        let wire = WireLayout::new(&prog.phv, &prog.parser, &prog.deparser);
        let in_place = InPlace::new(&prog, &wire);
        let identity = {
            let start = &prog.parser.states[prog.parser.start as usize];
            spec.parser.max_depth >= 1
                && start.ops.is_empty()
                && start.transition == Transition::Direct(Next::Accept)
                && prog.control.entry.is_none()
                && prog.phv.intrinsics.is_empty()
        };
        let timing = GressTiming::of(&prog.control, &spec.latency);
        let stage_entry = (0..timing.stages.len())
            .map(|s| timing.stage_entry(s))
            .collect();
        Ok(LoadedGress {
            gress,
            stage_entry,
            timing,
            clock,
            max_depth: spec.parser.max_depth as usize,
            meter_adjust_range: spec.meter.byte_count_adjust_range(),
            ext,
            // Only the containers the program uses: each packet clears them all.
            phv: Phv::new(prog.phv.containers()),
            tables,
            prog,
            parser_error,
            inputs,
            outputs,
            wire,
            in_place,
            extracted: Vec::new(),
            plan,
            identity,
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

    /// Whether the gress extracts nothing, applies nothing and binds no intrinsic (the
    /// stock routers' egress): it leaves every packet as it is and its outputs are all
    /// defaults, so a caller may skip it.
    pub fn is_identity(&self) -> bool {
        self.identity
    }

    /// The PHV as the last packet left it (for traces and tests).
    pub fn phv(&self) -> &Phv {
        &self.phv
    }

    /// Run the packet in `data` through parser, stages and deparser; `data` is replaced by
    /// the deparsed packet. A parser failure is `Err` if the program drops such packets
    /// (the chip counts it); if the program continues, the control runs on what was
    /// extracted, the rest of the packet is payload, and `parser_error` says why.
    ///
    /// Queue-depth reads see nothing (0): use [`LoadedGress::process_with_depths`] to give
    /// the gress the chip's published depths.
    pub fn process(
        &mut self,
        data: &mut Vec<u8>,
        inp: &GressInputs,
    ) -> Result<GressOutputs, ParseError> {
        self.process_with_depths(data, inp, &NoDepths)
    }

    /// [`LoadedGress::process`], with `depths` answering the program's queue-depth reads
    /// ([`crate::program::ExternCall::QueueDepth`]) at the time the packet is in the
    /// reading table's stage.
    pub fn process_with_depths(
        &mut self,
        data: &mut Vec<u8>,
        inp: &GressInputs,
        depths: &dyn DepthView,
    ) -> Result<GressOutputs, ParseError> {
        self.run(data, inp, depths, NoTrace)
    }

    /// [`LoadedGress::process_with_depths`], recording into `log` what the parser and
    /// each stage did ([`crate::trace`]). The packet's outcome is the same as untraced.
    /// Out of line: the traced walk is not the untraced path's code.
    #[inline(never)]
    pub fn process_traced(
        &mut self,
        data: &mut Vec<u8>,
        inp: &GressInputs,
        depths: &dyn DepthView,
        log: &mut GressLog,
    ) -> Result<GressOutputs, ParseError> {
        self.run(data, inp, depths, log)
    }

    /// The gress on one packet, telling `tracer` what it does: inlined into each caller,
    /// so the untraced one is the untraced code.
    #[inline(always)]
    fn run<T: GressTracer>(
        &mut self,
        data: &mut Vec<u8>,
        inp: &GressInputs,
        depths: &dyn DepthView,
        mut tracer: T,
    ) -> Result<GressOutputs, ParseError> {
        if self.identity {
            // No header becomes valid, so the deparser emits nothing before the payload
            // (the whole packet), and every output reads its zeroed field.
            return Ok(GressOutputs::default());
        }
        let layout = &self.prog.phv;
        let phv = &mut self.phv;
        phv.clear();
        // Only the inputs the program reads (resolved at load).
        for &(which, f) in &self.inputs {
            let value = match which {
                Intrinsic::IngressPort => inp.ingress_port as u64,
                Intrinsic::IngressMacTimestamp => inp.ingress_mac_ns,
                Intrinsic::GlobalTimestamp => self.clock.time_of(inp.issue_cycle).ns(),
                Intrinsic::PacketLength => data.len() as u64,
                Intrinsic::EgressPort => inp.egress_port as u64,
                Intrinsic::EgressQueue => inp.egress_queue as u64,
                Intrinsic::EnqQueueDepthCells => inp.enq_depth_cells as u64,
                Intrinsic::DeqQueueDepthCells => inp.deq_depth_cells as u64,
                Intrinsic::EnqQueueDepthPackets => inp.enq_depth_pkts as u64,
                Intrinsic::DeqQueueDepthPackets => inp.deq_depth_pkts as u64,
                Intrinsic::QueueDelay => inp.queue_delay_ns,
                Intrinsic::EnqCongestStat => inp.enq_congest_stat as u64,
                Intrinsic::ReplicationId => inp.replication_id as u64,
                Intrinsic::Deflected => inp.deflected as u64,
                Intrinsic::MirrorOnDrop => inp.mirror_on_drop as u64,
                _ => unreachable!("INPUTS lists only these"),
            };
            f.set(layout, phv, value as u128);
        }

        tracer.begin(phv);
        // The tracer is told in each arm: the result matched as `parse` returns it (held in
        // a variable, it cost the untraced gress a few instructions per packet).
        let (payload, parser_error) = match parse(
            &self.prog.parser,
            layout,
            &self.wire,
            data,
            phv,
            self.max_depth,
            &mut self.extracted,
            &mut tracer,
        ) {
            Ok(p) => {
                tracer.parsed(phv);
                (p, 0)
            }
            Err(f) => match self.prog.parser.on_error {
                ParserErrorPolicy::Drop => {
                    tracer.parsed(phv);
                    return Err(f.error);
                }
                ParserErrorPolicy::Continue => {
                    let code = f.error.code();
                    self.parser_error.set(layout, phv, code as u128);
                    tracer.parsed(phv);
                    (f.payload, code)
                }
            },
        };
        let pkt = PacketCtx {
            bytes: data.len() as u32,
            issue_cycle: inp.issue_cycle,
            clock: self.clock,
            stage_entry: &self.stage_entry,
            depths,
        };
        let stats = run_control(
            &self.prog.control,
            &self.plan,
            layout,
            &mut self.tables,
            phv,
            &mut self.ext,
            &pkt,
            tracer,
        );
        let deparser = &self.prog.deparser;
        // Checksums, and headers where the parser found them written back in place;
        // otherwise the new headers replace the parsed ones. The payload stays where it is
        // (it moves only when the headers changed length).
        let wire = &self.wire;
        if !self
            .in_place
            .deparse(deparser, layout, wire, phv, &self.extracted, payload, data)
        {
            emit(deparser, wire, phv, &mut self.scratch);
            if self.scratch.len() == payload {
                data[..payload].copy_from_slice(&self.scratch);
            } else {
                data.splice(..payload, self.scratch.iter().copied());
            }
        }
        // Only the outputs the program binds (resolved at load), each into its place; the
        // others read 0.
        let mut v = [0u128; OUTPUTS.len()];
        for &(k, f) in &self.outputs {
            v[k] = f.get(layout, phv);
        }
        let [port, port_valid, queue, drop_ctl, cos, mcast, deflect, bypass, mirror, truncate, recirculate, afc, color] =
            v;
        let mut out = GressOutputs {
            ucast_egress_port: (port_valid != 0).then_some(port as u16),
            queue: queue as u16,
            drop_ctl: drop_ctl as u8,
            parser_error,
            requests: TmRequests {
                ingress_cos: cos as u8,
                mcast_group: mcast as u16,
                deflect_on_drop: deflect != 0,
                bypass_egress: bypass != 0,
                mirror_session: mirror as u16,
                mirror_truncate_bytes: truncate as u16,
                recirculate: recirculate != 0,
                adv_flow_ctl: afc as u32,
                packet_color: color as u8,
                mirror_header: MirrorHeader::default(),
            },
            stats,
        };
        if out.requests.mirror_session != 0 && !self.prog.deparser.mirror_emit.is_empty() {
            out.requests.mirror_header =
                mirror_header(&self.prog.deparser, &self.wire, phv, &mut self.scratch);
        }
        Ok(out)
    }

    // -----------------------------------------------------------------------------------
    // Control plane

    /// Tables by index (for the control plane).
    pub fn tables_mut(&mut self) -> &mut [TableState] {
        &mut self.tables
    }

    /// Tables by index.
    pub fn tables(&self) -> &[TableState] {
        &self.tables
    }

    fn table_mut(&mut self, t: TableId) -> Result<&mut TableState, ControlError> {
        self.tables.get_mut(t as usize).ok_or(ControlError::NoSuch {
            what: "table",
            id: t,
        })
    }

    fn table(&self, t: TableId) -> Result<&TableState, ControlError> {
        self.tables.get(t as usize).ok_or(ControlError::NoSuch {
            what: "table",
            id: t,
        })
    }

    fn range(object: &str, index: u32, size: usize) -> Result<usize, ControlError> {
        if (index as usize) < size {
            Ok(index as usize)
        } else {
            Err(ControlError::IndexOutOfRange {
                object: object.to_string(),
                index,
                size,
            })
        }
    }

    /// A register array's state.
    pub fn register(&self, r: RegisterId) -> Result<&RegisterBank, ControlError> {
        self.ext
            .registers
            .get(r as usize)
            .ok_or(ControlError::NoSuch {
                what: "register array",
                id: r,
            })
    }

    /// Read one register element.
    pub fn register_read(&self, r: RegisterId, index: u32) -> Result<u64, ControlError> {
        let bank = self.register(r)?;
        let name = &self.prog.control.registers[r as usize].name;
        let i = Self::range(name, index, bank.len())?;
        Ok(bank.read(i))
    }

    /// Write one register element (the value must fit the element width).
    pub fn register_write(
        &mut self,
        r: RegisterId,
        index: u32,
        value: u128,
    ) -> Result<(), ControlError> {
        let size = self.register(r)?.len();
        let name = &self.prog.control.registers[r as usize].name;
        let i = Self::range(name, index, size)?;
        self.ext.registers[r as usize]
            .write(i, value)
            .map_err(|reason| ControlError::BadValue {
                object: name.clone(),
                reason,
            })
    }

    /// Read one indexed counter.
    pub fn counter_read(&self, c: CounterId, index: u32) -> Result<Counts, ControlError> {
        let bank = self
            .ext
            .counters
            .get(c as usize)
            .ok_or(ControlError::NoSuch {
                what: "counter array",
                id: c,
            })?;
        let name = &self.prog.control.counters[c as usize].name;
        Ok(bank.read(Self::range(name, index, bank.len())?))
    }

    /// The direct counter of a table's entry.
    pub fn direct_counter_read(
        &self,
        t: TableId,
        key: &[KeyMatch],
        priority: u32,
    ) -> Result<Counts, ControlError> {
        let table = self.table(t)?;
        table
            .direct_count(key, priority)?
            .ok_or_else(|| ControlError::Unsupported {
                object: table.name().to_string(),
                reason: "the table has no direct counter".into(),
            })
    }

    /// The direct counter of a table's misses.
    pub fn direct_miss_counter_read(&self, t: TableId) -> Result<Counts, ControlError> {
        let table = self.table(t)?;
        table
            .direct_miss_count()
            .ok_or_else(|| ControlError::Unsupported {
                object: table.name().to_string(),
                reason: "the table has no direct counter".into(),
            })
    }

    /// Meter array `m` of the program, or the error naming it missing.
    pub(crate) fn meter_array(&self, m: MeterId) -> Result<&MeterArray, ControlError> {
        self.prog
            .control
            .meters
            .get(m as usize)
            .ok_or(ControlError::NoSuch {
                what: "meter array",
                id: m,
            })
    }

    fn meter_index(&self, m: MeterId, index: u32) -> Result<usize, ControlError> {
        let a = self.meter_array(m)?;
        Self::range(&a.name, index, self.ext.meters[m as usize].len())
    }

    /// Configure one meter; its buckets start full.
    pub fn meter_configure(
        &mut self,
        m: MeterId,
        index: u32,
        config: MeterConfig,
    ) -> Result<(), ControlError> {
        let i = self.meter_index(m, index)?;
        let name = &self.prog.control.meters[m as usize].name;
        self.ext.meters[m as usize]
            .configure(i, config)
            .map_err(|reason| ControlError::BadValue {
                object: name.clone(),
                reason,
            })
    }

    /// Set a meter array's byte-count adjustment: `bytes` added to each packet's length
    /// before its byte meters colour it (BF Runtime's `MeterByteCountAdjust`).
    pub fn meter_set_byte_count_adjust(
        &mut self,
        m: MeterId,
        bytes: i32,
    ) -> Result<(), ControlError> {
        let a = self.meter_array(m)?;
        check_byte_count_adjust(a.unit, bytes, self.meter_adjust_range.clone()).map_err(
            |reason| ControlError::BadValue {
                object: a.name.clone(),
                reason,
            },
        )?;
        self.ext.meters[m as usize].set_byte_count_adjust(bytes);
        Ok(())
    }

    /// One meter's configuration and buckets.
    pub fn meter_read(&self, m: MeterId, index: u32) -> Result<MeterReading, ControlError> {
        let i = self.meter_index(m, index)?;
        Ok(self.ext.meters[m as usize].read(i))
    }

    /// One meter's configuration and buckets at time `now` (refilled since its last packet).
    pub fn meter_read_at(
        &self,
        m: MeterId,
        index: u32,
        now: Time,
    ) -> Result<MeterReading, ControlError> {
        let i = self.meter_index(m, index)?;
        Ok(self.ext.meters[m as usize].read_at(i, now))
    }

    /// The externs' state (register arrays, counters, meters), for reading it back
    /// ([`crate::readout`]).
    pub fn externs(&self) -> &ExternState {
        &self.ext
    }

    /// Apply a resolved operation to this gress. An operation for the other gress is an
    /// error (the caller routes operations by [`ResolvedControlOp::gress`]).
    pub fn apply(&mut self, op: &ResolvedControlOp) -> Result<(), ControlError> {
        if op.gress() != self.gress {
            return Err(ControlError::Unsupported {
                object: format!("{:?}", self.gress),
                reason: format!("the operation is for {:?}", op.gress()),
            });
        }
        match op {
            ResolvedControlOp::AddEntry(e) => {
                self.table_mut(e.table)?.insert(e.entry.clone())?;
            }
            ResolvedControlOp::ModifyEntry(e) => {
                self.table_mut(e.table)?.modify(
                    &e.entry.key,
                    e.entry.priority,
                    e.entry.action.clone(),
                )?;
            }
            ResolvedControlOp::DeleteEntry {
                table,
                key,
                priority,
                ..
            } => self.table_mut(*table)?.delete(key, *priority)?,
            ResolvedControlOp::WriteRegister {
                register,
                index,
                value,
                ..
            } => self.register_write(*register, *index, *value)?,
            ResolvedControlOp::ConfigureMeter {
                meter,
                index,
                config,
                ..
            } => self.meter_configure(*meter, *index, *config)?,
            ResolvedControlOp::SetMeterByteCountAdjust { meter, bytes, .. } => {
                self.meter_set_byte_count_adjust(*meter, *bytes)?
            }
            ResolvedControlOp::Read(_) => {
                return Err(ControlError::Unsupported {
                    object: format!("{:?}", self.gress),
                    reason: "a read changes nothing: read it with `LoadedGress::read`".into(),
                })
            }
        }
        Ok(())
    }
}

/// Every table of `prog` as the chip builds it when the gress loads (its const entries
/// installed), with `shapes` the control's action shapes ([`ControlPlan::action_shapes`]); or
/// the first table it refuses, by index, and why. The compiler runs the same check, so what
/// it emits loads.
pub fn load_tables(
    prog: &GressProgram,
    shapes: &[ActionShape],
) -> Result<Vec<TableState>, (usize, TableError)> {
    prog.control
        .tables
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let widths: Vec<u16> = t
                .keys
                .iter()
                .map(|k| match k.slice {
                    Some((hi, lo)) => hi - lo + 1,
                    None => prog.phv.fields[k.field as usize].width,
                })
                .collect();
            TableState::new(t, &widths, shapes).map_err(|e| (i, e))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_follow_the_latencies() {
        let t = GressTiming {
            parser: 4,
            stages: vec![2, 3],
            deparser: 4,
        };
        assert_eq!(t.total(), 13);
        let at = |c| t.position(100, c);
        assert_eq!(at(99), PipePosition::Waiting);
        assert_eq!(at(100), PipePosition::Parser);
        assert_eq!(at(103), PipePosition::Parser);
        assert_eq!(at(104), PipePosition::Stage(0));
        assert_eq!(at(105), PipePosition::Stage(0));
        assert_eq!(at(106), PipePosition::Stage(1));
        assert_eq!(at(108), PipePosition::Stage(1));
        assert_eq!(at(109), PipePosition::Deparser);
        assert_eq!(at(112), PipePosition::Deparser);
        assert_eq!(at(113), PipePosition::Gone);
        assert_eq!(
            t.trace(100),
            vec![
                (100, PipePosition::Parser),
                (104, PipePosition::Stage(0)),
                (106, PipePosition::Stage(1)),
                (109, PipePosition::Deparser),
                (113, PipePosition::Gone),
            ]
        );
        for (c, p) in t.trace(100) {
            assert_eq!(t.position(100, c), p);
        }
    }
}
