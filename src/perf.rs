//! `asic bench`: how fast the model runs, on the workloads of docs/PERFORMANCE.md.
//!
//! Each workload runs once and prints:
//! - **work per second**: for the whole-chip and network workloads, *switch-hops* per wall
//!   second (a hop is one packet through one chip's ingress pipe, TM and egress pipe: the
//!   chips' transmitted data frames); for the pipe workload, packets through the parser and
//!   the 12-stage ingress; for the TM workload, enqueue + dequeue pairs;
//! - **simulated time per wall second** (`sim/wall`; 1.0 is real time): the simulated
//!   span of the work (for the pipe, one issue cycle per packet; for the TM, the line-rate
//!   arrival times it was driven with);
//! - **peak memory**: the process's peak resident set (`VmHWM` in `/proc/self/status`,
//!   Linux), reset before each workload by writing `5` to `/proc/self/clear_refs`; where
//!   either is unavailable the figure is omitted rather than guessed;
//! - **heap allocations per unit of work** while the workload ran, when the program counts
//!   them ([`CountingAlloc`], installed by the `asic` binary);
//! - for the incast, the **model state per buffered packet** beyond its bytes (`B/queued`).
//!
//! The workloads (sizes in [`Sizes`]): `pipe12` (one 64-byte packet at a time through the
//! parser and the 12-stage ingress of `benches/l3_12stage.p4`), `tm-dt` (the TM alone,
//! 64 ports under Dynamic Threshold), `hop-64B` (a `tofino1-like` chip running the stock
//! router, 2 ports at line rate), `idle-64B` (the same packets at a tenth of line rate:
//! ten times the simulated time for the same work), `chip-64x100G` (all 64 ports at line
//! rate with 1500-byte packets), `leafspine` (4 × 4 leaf-spine, 32 hosts, 60 % load, the
//! router), `ns3-twin` (the leaf-spine UDP workload of `tools/ns3/leafspine_udp.cc`, run
//! beside ns-3 by `tools/ns3/side-by-side.sh`), `incast-64B` (8:1 into one port until Dynamic
//! Threshold refuses).
//!
//! The wall clock is read here, around a run, and never inside the model.

use asic_bench::generator::GeneratorFeed;
use asic_bench::scenario::{Generator, Template, UdpTemplate};
use asic_bench::Bench;
use asic_deploy::routers::L3ROUTER;
use asic_model::profile::{self, ChipProfile};
use asic_net::Net;
use pipelines::entries::{resolve, EntrySpec, KeySpec, ResolvedEntry, Value};
use pipelines::pipe::{GressInputs, LoadedGress};
use pipelines::program::{Gress, Program};
use pipelines::time::{Clock, Time};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;
use tm::config::TmConfig;
use tm::{EnqueueRequest, TrafficManager};

/// The twelve-stage L3 router of the pipe workload (`benches/l3_12stage.p4`).
pub const L3_12STAGE: &str = include_str!("../benches/l3_12stage.p4");

/// The global allocator of the `asic` binary and the allocation tests: the system
/// allocator, counting allocations (not frees) so a run can say how many it made, and the
/// heap bytes in use and their peak, so a run can say how much state it kept.
pub struct CountingAlloc;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);
static LIVE_BYTES: AtomicU64 = AtomicU64::new(0);
static PEAK_BYTES: AtomicU64 = AtomicU64::new(0);
static COUNTING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

fn grew(bytes: usize) {
    let live = LIVE_BYTES.fetch_add(bytes as u64, Ordering::Relaxed) + bytes as u64;
    PEAK_BYTES.fetch_max(live, Ordering::Relaxed);
}

fn shrank(bytes: usize) {
    LIVE_BYTES.fetch_sub(bytes as u64, Ordering::Relaxed);
}

// SAFETY: every call is forwarded unchanged to the system allocator; the counters are
// relaxed atomics that never affect what is allocated.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        grew(layout.size());
        // SAFETY: the caller's contract is passed through.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        shrank(layout.size());
        // SAFETY: the caller's contract is passed through.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        grew(layout.size());
        // SAFETY: the caller's contract is passed through.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        grew(new_size);
        shrank(layout.size());
        // SAFETY: the caller's contract is passed through.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// Heap bytes in use now and the most in use since the last [`reset_peak_heap`], if the
/// program counts them.
pub fn heap_bytes() -> Option<(u64, u64)> {
    COUNTING.load(Ordering::Relaxed).then(|| {
        (
            LIVE_BYTES.load(Ordering::Relaxed),
            PEAK_BYTES.load(Ordering::Relaxed),
        )
    })
}

/// Start a new peak of heap bytes from the bytes in use now.
pub fn reset_peak_heap() {
    PEAK_BYTES.store(LIVE_BYTES.load(Ordering::Relaxed), Ordering::Relaxed);
}

impl CountingAlloc {
    /// Declare that this program's global allocator is [`CountingAlloc`] (call once, from
    /// `main`); until then [`allocations`] is `None`.
    pub fn installed() {
        COUNTING.store(true, Ordering::Relaxed);
    }
}

/// Allocations (and reallocations) so far, if the program counts them.
pub fn allocations() -> Option<u64> {
    COUNTING
        .load(Ordering::Relaxed)
        .then(|| ALLOCATIONS.load(Ordering::Relaxed))
}

/// Peak resident memory of this process since the last [`reset_peak_memory`], in KiB
/// (`VmHWM`); `None` where `/proc/self/status` does not say.
pub fn peak_memory_kib() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Reset the peak resident set to the current one (Linux: `5` into `/proc/self/clear_refs`).
/// Returns whether it could.
pub fn reset_peak_memory() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// How much work each workload does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sizes {
    /// Packets through the 12-stage ingress.
    pub pipe_packets: u64,
    /// Enqueue + dequeue pairs.
    pub tm_packets: u64,
    /// 64-byte packets through a 2-port chip running the router.
    pub hop_packets: u64,
    /// 1500-byte packets through the 64 × 100G chip.
    pub chip_packets: u64,
    /// Simulated time of the leaf-spine (ns).
    pub leafspine_ns: u64,
    /// How long the ns-3 twin's hosts send (ns); the run lasts until all is delivered.
    pub twin_ns: u64,
    /// 64-byte packets each of the eight incast senders sends.
    pub incast_packets: u64,
}

impl Sizes {
    /// The figures of docs/PERFORMANCE.md (tens of seconds in all on a release build).
    pub const FULL: Sizes = Sizes {
        pipe_packets: 2_000_000,
        tm_packets: 5_000_000,
        hop_packets: 2_000_000,
        chip_packets: 2_000_000,
        leafspine_ns: 2_000_000,
        twin_ns: 1_000_000,
        incast_packets: 100_000,
    };
    /// A smoke run (CI): every workload, a fraction of a second in all.
    pub const QUICK: Sizes = Sizes {
        pipe_packets: 2_000,
        tm_packets: 5_000,
        hop_packets: 2_000,
        chip_packets: 2_000,
        leafspine_ns: 200_000,
        twin_ns: 20_000,
        incast_packets: 2_000,
    };

    /// Every size times `k` (for the linearity check).
    pub fn times(self, k: u64) -> Sizes {
        Sizes {
            pipe_packets: self.pipe_packets * k,
            tm_packets: self.tm_packets * k,
            hop_packets: self.hop_packets * k,
            chip_packets: self.chip_packets * k,
            leafspine_ns: self.leafspine_ns * k,
            twin_ns: self.twin_ns * k,
            incast_packets: self.incast_packets * k,
        }
    }
}

/// The figures of one workload.
#[derive(Clone, Debug, PartialEq)]
pub struct Figures {
    /// Workload name.
    pub name: &'static str,
    /// What one unit of work is.
    pub unit: &'static str,
    /// Units of work done.
    pub work: u64,
    /// Wall seconds.
    pub wall_s: f64,
    /// Simulated picoseconds the work spans.
    pub sim_ps: u64,
    /// Peak resident memory during the workload (KiB).
    pub peak_kib: Option<u64>,
    /// Heap allocations during the workload.
    pub allocations: Option<u64>,
    /// Model state per buffered packet beyond its bytes (the incast workload).
    pub state_per_packet: Option<f64>,
    /// Events the event kernel handled, for the workloads that run one.
    pub events: Option<u64>,
    /// A network run's events over those on its critical path (in each lookahead window,
    /// the busiest partition's): the speedup its split over threads allows before
    /// synchronisation costs (1 on one thread).
    pub parallelism: Option<f64>,
}

/// What one run of a workload did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ran {
    /// Units of work done.
    pub work: u64,
    /// Simulated picoseconds the work spans.
    pub sim_ps: u64,
    /// Events the event kernel handled, if the workload runs one.
    pub events: Option<u64>,
    /// [`Figures::parallelism`].
    pub parallelism: Option<f64>,
}

impl Ran {
    /// A network run's figures: its switch-hops over `sim_ps`, its events and their split.
    fn of_net(r: &asic_net::NetRun, sim_ps: u64) -> Ran {
        Ran {
            events: Some(r.events),
            parallelism: Some(r.events as f64 / r.windows.critical_events.max(1) as f64),
            ..Ran::new(r.switch_hops, sim_ps)
        }
    }

    /// `work` units over `sim_ps`, no events counted.
    pub fn new(work: u64, sim_ps: u64) -> Ran {
        Ran {
            work,
            sim_ps,
            events: None,
            parallelism: None,
        }
    }
}

impl Figures {
    /// Work per wall second.
    pub fn rate(&self) -> f64 {
        self.work as f64 / self.wall_s.max(1e-9)
    }

    /// Simulated seconds per wall second.
    pub fn sim_per_wall(&self) -> f64 {
        self.sim_ps as f64 * 1e-12 / self.wall_s.max(1e-9)
    }
}

/// The workloads, by name, in the order `asic bench` runs them.
pub const WORKLOADS: [&str; 8] = [
    "pipe12",
    "tm-dt",
    "hop-64B",
    "idle-64B",
    "chip-64x100G",
    "leafspine",
    "ns3-twin",
    "incast-64B",
];

/// Run the workloads named in `only` (all if empty) at `sizes`, with every chip visiting
/// every cycle when `lockstep`.
/// The network workloads (`leafspine`, `ns3-twin`) run on `threads` threads.
pub fn run(
    sizes: Sizes,
    only: &[String],
    lockstep: bool,
    threads: usize,
) -> Result<Vec<Figures>, String> {
    if let Some(bad) = only.iter().find(|n| !WORKLOADS.contains(&n.as_str())) {
        return Err(format!(
            "no workload `{bad}` (known: {})",
            WORKLOADS.join(", ")
        ));
    }
    let mut out = Vec::new();
    for name in WORKLOADS {
        if !only.is_empty() && !only.iter().any(|n| n == name) {
            continue;
        }
        out.push(match name {
            "pipe12" => pipe12(sizes.pipe_packets)?,
            "tm-dt" => tm_dt(sizes.tm_packets)?,
            "hop-64B" => chip_run(name, 2, 64, sizes.hop_packets, None, lockstep)?,
            // The same packets at a tenth of line rate: ten times the simulated time.
            "idle-64B" => chip_run(name, 2, 64, sizes.hop_packets, Some(10), lockstep)?,
            "chip-64x100G" => chip_run(name, 64, 1500, sizes.chip_packets, None, lockstep)?,
            "leafspine" => leafspine(sizes.leafspine_ns, lockstep, threads)?,
            "ns3-twin" => ns3_twin(sizes.twin_ns, lockstep, threads)?,
            _ => incast(sizes.incast_packets, lockstep)?,
        });
    }
    Ok(out)
}

/// The figures as a table.
pub fn render(figs: &[Figures]) -> String {
    let mut s = format!(
        "{:<13} {:>10} {:>14} {:>9} {:>15} {:>11} {:>9} {:>9} {:>9} {:>9} {:>5}  {}\n",
        "workload",
        "work",
        "per wall s",
        "wall s",
        "simulated",
        "sim/wall",
        "peak MiB",
        "allocs/u",
        "B/queued",
        "events/u",
        "par",
        "unit"
    );
    for f in figs {
        let peak = f
            .peak_kib
            .map_or("-".to_string(), |k| format!("{:.1}", k as f64 / 1024.0));
        let allocs = f.allocations.map_or("-".to_string(), |a| {
            format!("{:.4}", a as f64 / f.work.max(1) as f64)
        });
        let state = f
            .state_per_packet
            .map_or("-".to_string(), |b| format!("{b:.0}"));
        let events = f.events.map_or("-".to_string(), |e| {
            format!("{:.3}", e as f64 / f.work.max(1) as f64)
        });
        let par = f.parallelism.map_or("-".to_string(), |p| format!("{p:.2}"));
        s += &format!(
            "{:<13} {:>10} {:>14.0} {:>9.3} {:>15} {:>11.5} {:>9} {:>9} {:>9} {:>9} {:>5}  {}\n",
            f.name,
            f.work,
            f.rate(),
            f.wall_s,
            Time(f.sim_ps).to_string(),
            f.sim_per_wall(),
            peak,
            allocs,
            state,
            events,
            par,
            f.unit
        );
    }
    s
}

/// Time `body`, with peak memory and allocations around it.
fn measure(
    name: &'static str,
    unit: &'static str,
    body: impl FnOnce() -> Result<Ran, String>,
) -> Result<Figures, String> {
    let reset = reset_peak_memory();
    let a0 = allocations();
    let t0 = Instant::now();
    let Ran {
        work,
        sim_ps,
        events,
        parallelism,
    } = body()?;
    let wall_s = t0.elapsed().as_secs_f64();
    let allocations = a0.zip(allocations()).map(|(a, b)| b - a);
    Ok(Figures {
        name,
        unit,
        work,
        wall_s,
        sim_ps,
        peak_kib: peak_memory_kib().filter(|_| reset),
        allocations,
        state_per_packet: None,
        events,
        parallelism,
    })
}

fn tofino1() -> Result<ChipProfile, String> {
    profile::load("tofino1-like").map_err(|e| e.to_string())
}

fn text(s: String) -> Value {
    Value::Text(s)
}

fn entry(table: &str, key: Vec<KeySpec>, action: &str, args: Vec<Value>) -> EntrySpec {
    EntrySpec {
        table: table.into(),
        key,
        action: action.into(),
        args,
        priority: 0,
    }
}

fn resolve_all(p: &Program, specs: &[EntrySpec]) -> Result<Vec<ResolvedEntry>, String> {
    specs.iter().map(|e| resolve(p, e)).collect()
}

/// The address of port `k`'s side (`10.0.k.0/24` is routed out of port `k`; `k < 256`).
fn dst_ip(k: u16) -> String {
    format!("10.0.{k}.1")
}

/// Entries of `benches/l3_12stage.p4` routing `10.0.k.0/24` out of port `k`, every table
/// hit on the way.
pub fn l3_12stage_entries(p: &Program, ports: u16) -> Result<Vec<ResolvedEntry>, String> {
    let ex = |v: u64| KeySpec::Exact(Value::Int(v));
    let int = Value::Int;
    let mut e = Vec::new();
    for k in 0..ports as u64 {
        e.push(entry("port_vrf", vec![ex(k)], "set_vrf", vec![int(1)]));
        e.push(entry(
            "ipv4_lpm",
            vec![ex(1), KeySpec::Lpm(text(format!("10.0.{k}.0")), 24)],
            "set_nexthop",
            vec![int(k + 1)],
        ));
        e.push(entry(
            "ecmp_member",
            vec![ex(k + 1)],
            "set_member",
            vec![int(k + 100)],
        ));
        e.push(entry(
            "member_bd",
            vec![ex(k + 100)],
            "set_bd",
            vec![int(k + 10)],
        ));
        e.push(entry(
            "bd_rif",
            vec![ex(k + 10)],
            "set_rif",
            vec![int(k + 20)],
        ));
        e.push(entry(
            "rif_nexthop",
            vec![ex(k + 20)],
            "set_dmac_idx",
            vec![int(k + 30)],
        ));
        e.push(entry(
            "dmac_rewrite",
            vec![ex(k + 30)],
            "set_dmac",
            vec![text(format!("02:00:00:00:{k:02x}:01")), int(k)],
        ));
        e.push(entry(
            "smac_rewrite",
            vec![ex(k)],
            "set_smac",
            vec![text(format!("02:00:00:00:00:{k:02x}")), int(k)],
        ));
        e.push(entry(
            "egress_port",
            vec![ex(k)],
            "set_port",
            vec![int(k), int(0)],
        ));
    }
    e.push(entry("tc_queue", vec![ex(0)], "set_qid", vec![int(0)]));
    e.push(EntrySpec {
        priority: 1,
        ..entry(
            "acl_classify",
            vec![ex(0), KeySpec::Ternary(int(17), int(0xff))],
            "set_acl_class",
            vec![int(1)],
        )
    });
    e.push(entry("acl_action", vec![ex(1)], "NoAction", vec![]));
    resolve_all(p, &e)
}

/// Entries of the stock `l3router` routing `10.0.k.0/24` out of port `k`.
pub fn l3router_entries(p: &Program, ports: u16) -> Result<Vec<ResolvedEntry>, String> {
    let e: Vec<EntrySpec> = (0..ports)
        .map(|k| {
            entry(
                "ipv4_lpm",
                vec![KeySpec::Lpm(text(format!("10.0.{k}.0")), 24)],
                "set_nexthop",
                vec![
                    Value::Int(k as u64),
                    text(format!("02:00:00:00:{k:02x}:01")),
                    text(format!("02:00:00:00:00:{k:02x}")),
                ],
            )
        })
        .collect();
    resolve_all(p, &e)
}

fn compile(src: &str, file: &str, prof: &ChipProfile) -> Result<Program, String> {
    dsl::compile(src, file, &prof.pipe)
        .map(|c| c.program)
        .map_err(|e| e.to_string())
}

fn udp(src: u16, dst: u16, size: usize, count: u64) -> Generator {
    Generator {
        count,
        size,
        start_ns: 0,
        rate_gbps: None,
        packet: Template::Udp(UdpTemplate {
            src_ip: dst_ip(src),
            dst_ip: dst_ip(dst),
            ..UdpTemplate::default()
        }),
    }
}

/// The pipe workload: one 64-byte packet at a time through the parser, the twelve stages
/// and the deparser of `benches/l3_12stage.p4`'s ingress on a `tofino1-like` pipe.
pub struct Pipe12 {
    gress: LoadedGress,
    feed: GeneratorFeed,
    data: Vec<u8>,
    /// Packets processed (each issued one cycle after the previous).
    pub packets: u64,
    clock: Clock,
}

impl Pipe12 {
    /// Compile, load and fill the tables.
    pub fn new() -> Result<Pipe12, String> {
        let prof = tofino1()?;
        let prog = compile(L3_12STAGE, "l3_12stage.p4", &prof)?;
        let entries = l3_12stage_entries(&prog, 4)?;
        let clock = Clock::new(prof.clock_hz);
        let mut gress =
            LoadedGress::load(Gress::Ingress, prog.ingress.clone(), &prof.pipe, clock, 1)
                .map_err(|e| e.to_string())?;
        for e in entries.iter().filter(|e| e.gress == Gress::Ingress) {
            gress.tables_mut()[e.table as usize]
                .insert(e.entry.clone())
                .map_err(|e| e.to_string())?;
        }
        Ok(Pipe12 {
            gress,
            feed: GeneratorFeed::new(&udp(0, 1, 64, u64::MAX), 100)?,
            data: Vec::with_capacity(256),
            packets: 0,
            clock,
        })
    }

    /// The next packet through the ingress; it must come out routed to port 1.
    pub fn step(&mut self) -> Result<(), String> {
        self.data.clear();
        self.data.extend_from_slice(self.feed.take());
        let inputs = GressInputs {
            issue_cycle: self.packets,
            ingress_port: 0,
            ..GressInputs::default()
        };
        let out = self
            .gress
            .process(&mut self.data, &inputs)
            .map_err(|e| e.to_string())?;
        if out.ucast_egress_port != Some(1) {
            return Err(format!(
                "pipe12: packet {} was not routed to port 1",
                self.packets
            ));
        }
        self.packets += 1;
        Ok(())
    }

    /// Simulated time of the packets so far: one issue cycle each.
    pub fn sim_ps(&self) -> u64 {
        self.clock.time_of(self.packets).ps()
    }
}

fn pipe12(packets: u64) -> Result<Figures, String> {
    let mut w = Pipe12::new()?;
    measure("pipe12", "packets through parser + 12 stages", || {
        for _ in 0..packets {
            w.step()?;
        }
        Ok(Ran::new(w.packets, w.sim_ps()))
    })
}

/// The TM workload: 64-byte packets for 64 ports, enqueued at the 64 ports' aggregate line
/// rate under Dynamic Threshold admission; each port's queue is kept 32 packets deep (one
/// dequeue per enqueue once it is).
pub struct TmDt {
    tm: TrafficManager,
    step: u64,
    /// Enqueue + dequeue pairs done.
    pub pairs: u64,
}

/// Ports of the TM workload.
const TM_PORTS: u64 = 64;
/// 64 bytes take 84 bytes of wire time at 100G: 6.72 ns per port, 105 ps for 64 ports.
const TM_GAP_PS: u64 = 6_720 / TM_PORTS;
/// Packets kept queued.
const TM_DEPTH: u64 = 32 * TM_PORTS;

impl TmDt {
    /// A `tofino1-like` TM with the default configuration (Dynamic Threshold).
    pub fn new() -> Result<TmDt, String> {
        let prof = tofino1()?;
        let tm = TrafficManager::new(prof.tm.clone(), TmConfig::default(), TM_PORTS as usize)
            .map_err(|e| e.to_string())?;
        Ok(TmDt {
            tm,
            step: 0,
            pairs: 0,
        })
    }

    /// One enqueue, and one dequeue once the queues are deep enough.
    pub fn step(&mut self) -> Result<(), String> {
        let i = self.step;
        let now_ps = i * TM_GAP_PS;
        let req = EnqueueRequest {
            port: (i % TM_PORTS) as u16,
            queue: 0,
            ingress_port: ((i + 1) % TM_PORTS) as u16,
            priority: 0,
            color: 0,
            bytes: 64,
            handle: (i % (1 << 20)) as u32,
            now_ps,
        };
        self.tm
            .enqueue(req)
            .map_err(|r| format!("tm-dt: packet {i} refused: {}", r.name()))?;
        if i >= TM_DEPTH {
            let port = ((i - TM_DEPTH) % TM_PORTS) as u16;
            self.tm
                .dequeue(port, now_ps)
                .ok_or_else(|| format!("tm-dt: port {port} empty at step {i}"))?;
            self.pairs += 1;
        }
        self.step += 1;
        Ok(())
    }

    /// Simulated time so far.
    pub fn sim_ps(&self) -> u64 {
        self.step * TM_GAP_PS
    }
}

fn tm_dt(pairs: u64) -> Result<Figures, String> {
    let mut w = TmDt::new()?;
    // Fill the queues first: the pairs are measured in steady state.
    while w.step < TM_DEPTH {
        w.step()?;
    }
    let t0 = w.sim_ps();
    measure("tm-dt", "enqueue + dequeue pairs", || {
        for _ in 0..pairs {
            w.step()?;
        }
        Ok(Ran::new(w.pairs, w.sim_ps() - t0))
    })
}

/// A `tofino1-like` chip on the bench running the stock router, `ports` ports (each paired
/// with its neighbour, `2k ↔ 2k + 1`) at line rate with `packets` `size`-byte UDP frames in
/// all, ready to run.
pub fn chip_bench(ports: u16, size: usize, packets: u64, lockstep: bool) -> Result<Bench, String> {
    chip_bench_at(ports, size, packets, None, lockstep)
}

/// [`chip_bench`] with every port sending at `rate_gbps` (`None`: line rate).
fn chip_bench_at(
    ports: u16,
    size: usize,
    packets: u64,
    rate_gbps: Option<u32>,
    lockstep: bool,
) -> Result<Bench, String> {
    let prof = tofino1()?;
    let prog = compile(L3ROUTER.source, L3ROUTER.file, &prof)?;
    let entries = l3router_entries(&prog, ports)?;
    let mut bench = Bench::new(prof, &prog, &entries)?;
    bench.set_lockstep(lockstep);
    let per_port = packets / ports as u64;
    for p in 0..ports {
        let g = Generator {
            rate_gbps,
            ..udp(p, p ^ 1, size, per_port)
        };
        bench.add_generator(p, &g)?;
    }
    Ok(bench)
}

/// Run a bench from [`chip_bench`]: (switch-hops, simulated ps). Every packet must leave.
pub fn run_chip(bench: &mut Bench) -> Result<Ran, String> {
    let r = bench.run()?;
    if r.packets_dropped() > 0 {
        return Err(format!("{} packets dropped", r.packets_dropped()));
    }
    Ok(Ran {
        events: Some(r.events),
        ..Ran::new(r.packets_out(), r.end_ps)
    })
}

fn chip_run(
    name: &'static str,
    ports: u16,
    size: usize,
    packets: u64,
    rate_gbps: Option<u32>,
    lockstep: bool,
) -> Result<Figures, String> {
    let mut bench = chip_bench_at(ports, size, packets, rate_gbps, lockstep)?;
    measure(name, "switch-hops", || run_chip(&mut bench))
}

/// The network workload, ready to run: 4 leaves × 4 spines of `tofino1-like` chips running
/// the stock router, 8 hosts per leaf (32), web-search flows at 60 % load without
/// congestion control, stopped at `stop_ns`.
pub fn leafspine_net(stop_ns: u64, lockstep: bool) -> Result<Net<'static>, String> {
    let text = format!(
        r#"(
            name: "bench-leafspine",
            seed: 1,
            topology: Generate((
                shape: LeafSpine(leaves: 4, spines: 4, hosts_per_leaf: 8),
                chip: "tofino1-like", delay_ns: 1000)),
            deploy: Routers(Static),
            transport: Raw(()),
            traffic: [Flows((size: Cdf("websearch"), load: 0.6, stop_ns: {stop_ns}))],
            stop: (at_ns: Some({stop_ns}), when_flows_complete: false),
        )"#
    );
    net_of(&text, "leafspine scenario", lockstep)
}

fn leafspine(stop_ns: u64, lockstep: bool, threads: usize) -> Result<Figures, String> {
    let mut n = leafspine_net(stop_ns, lockstep)?;
    n.set_threads(threads);
    measure("leafspine", "switch-hops", || {
        let r = n.run()?;
        Ok(Ran::of_net(&r, stop_ns * 1000))
    })
}

/// The workload of the ns-3 program `tools/ns3/leafspine_udp.cc`, ready to run: 4 leaves ×
/// 4 spines × 8 hosts, 100 Gb/s links of 1 µs, `tofino1-like` chips running the stock ECMP
/// router; host i sends constant-rate UDP to host (i + 8) mod 32 for `traffic_ns`, 1,000-byte
/// payloads (IP MTU 1,028 bytes) at 42.64 Gb/s on the wire, ns-3's 40 Gb/s of payload at its
/// load 0.4; the run lasts until every packet is delivered or dropped. (ns-3 sprays each
/// packet over the spines at random; the router hashes each flow's 5-tuple.)
pub fn ns3_twin_net(traffic_ns: u64, lockstep: bool) -> Result<Net<'static>, String> {
    let flows: Vec<String> = (0..32)
        .map(|i| {
            let d = (i + 8) % 32;
            format!(
                r#"ConstantRate((src: "h{}_{}", dst: "h{}_{}", rate_gbps: 42.64, start_ns: 0, stop_ns: {traffic_ns}))"#,
                i / 8,
                i % 8,
                d / 8,
                d % 8
            )
        })
        .collect();
    let text = format!(
        r#"(
            name: "leafspine-udp-ns3-twin",
            seed: 1,
            mtu: 1028,
            topology: Generate((shape: LeafSpine(leaves: 4, spines: 4, hosts_per_leaf: 8),
                chip: "tofino1-like", delay_ns: 1000)),
            deploy: Routers(Ecmp),
            transport: Raw(()),
            traffic: [{}],
        )"#,
        flows.join(", ")
    );
    net_of(&text, "ns-3 twin scenario", lockstep)
}

/// The network of scenario `text` (named `what` in its errors), built and ready to run.
fn net_of(text: &str, what: &str, lockstep: bool) -> Result<Net<'static>, String> {
    let s = located::parse_ron(text, what)?;
    let network = asic_deploy::build::build(s, std::path::Path::new(""))?;
    let mut n = Net::build(network, Box::new(()))?;
    n.set_lockstep(lockstep);
    Ok(n)
}

fn ns3_twin(traffic_ns: u64, lockstep: bool, threads: usize) -> Result<Figures, String> {
    let mut n = ns3_twin_net(traffic_ns, lockstep)?;
    n.set_threads(threads);
    measure("ns3-twin", "switch-hops", || {
        let r = n.run()?;
        Ok(Ran::of_net(&r, r.record.duration_ps))
    })
}

/// The buffer workload: eight ports of one pipe send 64-byte packets at line rate to a
/// ninth (8:1 incast), so the TM buffers packets until Dynamic Threshold refuses more.
/// Besides the usual figures it measures the model's state per buffered packet beyond the
/// packet's bytes, from the heap bytes the program holds ([`CountingAlloc`]): (peak heap
/// bytes during the run − heap bytes before it − 64 × the most packets buffered at once) /
/// that many packets. 64-byte packets take one cell each, so the most packets buffered is
/// the TM's peak cells. (The resident set is no measure here: memory freed by an earlier
/// workload stays resident and is reused without raising the peak.)
fn incast(per_sender: u64, lockstep: bool) -> Result<Figures, String> {
    let prof = tofino1()?;
    let prog = compile(L3ROUTER.source, L3ROUTER.file, &prof)?;
    let entries = l3router_entries(&prog, 9)?;
    let mut bench = Bench::new(prof, &prog, &entries)?;
    bench.set_lockstep(lockstep);
    for p in 0..8 {
        bench.add_generator(p, &udp(p, 8, 64, per_sender))?;
    }
    reset_peak_heap();
    let before = heap_bytes();
    let mut peak_packets = 0;
    let mut f = measure("incast-64B", "switch-hops", || {
        let r = bench.run()?;
        peak_packets = r.peak_buffer_cells as u64;
        Ok(Ran {
            events: Some(r.events),
            ..Ran::new(r.packets_out(), r.end_ps)
        })
    })?;
    f.state_per_packet =
        before
            .zip(heap_bytes())
            .filter(|_| peak_packets > 0)
            .map(|((live, _), (_, peak))| {
                let grown = peak.saturating_sub(live) as f64;
                (grown - (peak_packets * 64) as f64) / peak_packets as f64
            });
    Ok(f)
}
