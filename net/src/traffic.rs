//! Traffic: what the applications on the hosts offer, as a list of flows.
//!
//! Every source expands to flows before the run starts (sorted by start time; flow ids in that
//! order), each random choice coming from the source's own seeded stream
//! (`traffic[i]`), so a run is reproducible and adding a source does not perturb the others.
//!
//! Sources ([`Source`], RON):
//! - `Flow((src: "h0", dst: "h1", size: 100000, start_ns: 0))`: one flow.
//! - `ConstantRate((src, dst, rate_gbps: 5.0, start_ns, stop_ns))`: a paced raw stream of
//!   `rate × (stop − start)` bytes, the rate counting each frame's preamble, FCS and gap.
//! - `OnOff((src, dst, rate_gbps, on_ns, off_ns, start_ns, stop_ns, exponential: false))`:
//!   bursts at `rate_gbps` for `on_ns`, silent for `off_ns` (each period's duration drawn
//!   from an exponential distribution with that mean if `exponential`); each burst is one
//!   flow.
//! - `Flows((hosts: None, size: Cdf("websearch"), arrivals: Poisson, load: 0.5, load_of:
//!   HostNic, start_ns, stop_ns, max_flows: None))`: every host of `hosts` (default all)
//!   starts flows to a destination drawn uniformly from the others, sizes from the CDF,
//!   inter-arrival times exponential (`Poisson`) or `LogNormal(sigma: 2.0)` with the mean
//!   that gives the load. **Load:** with `load_of: HostNic`, each host offers on average
//!   `load × its NIC rate` of application bytes (headers and framing come on top, as in
//!   HPCC's `traffic_gen.py`): mean inter-arrival = `8 · mean_size / (load · rate)`. With
//!   `load_of: Aggregate(gbps)` the hosts together offer `load × gbps` (give a bisection's
//!   capacity here to load the bisection), split evenly.
//! - `Incast((senders: ["h1", "h2"], receiver: "h0", size: 64000, start_ns, period_ns: None,
//!   repeats: 1, jitter_ns: 0))`: every sender starts a flow of `size` bytes to the receiver
//!   at the same instant (plus a uniform random jitter up to `jitter_ns`), `repeats` times
//!   every `period_ns`.
//! - `Permutation((size, start_ns, hosts: None))`: each host sends one flow to another, the
//!   destinations a random permutation without fixed points.
//! - `AllToAll((size, start_ns, hosts: None))`: one flow for every ordered pair.
//! - `Queries((requesters: None, responders_from: None, responders: 8, size: 1000000,
//!   per_second: 1.0, start_ns, stop_ns))`: partition-aggregate queries (the Flexible Buffer
//!   paper's §6 workload): every host of `requesters` (default all) issues queries as a
//!   Poisson process of `per_second` queries a second; each asks `responders` hosts drawn
//!   without replacement from `responders_from` (default all; never the requester) for an
//!   equal part of a file of `size` bytes (the first `size mod responders` parts a byte
//!   longer), and each part is a flow from its responder to the requester, all starting at
//!   the query's instant; `max_queries` (`None`) keeps the earliest so many. The run's record
//!   keeps every query ([`crate::records::QueryRecord`]):
//!   it completes when its last part has arrived.
//!
//! Every source also takes `class` (priority 0..7, default 0) and `transport` (default: the
//! scenario's).

use crate::cdf::Cdf;
use crate::rng::Stream;
use crate::transport::raw::RawSpec;
use crate::transport::TransportSpec;
use pipelines::time::Time;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// One flow.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OneFlow {
    /// Sender.
    pub src: String,
    /// Receiver.
    pub dst: String,
    /// Bytes.
    pub size: u64,
    /// Start (ns).
    #[serde(default)]
    pub start_ns: u64,
    /// Class.
    #[serde(default)]
    pub class: u8,
    /// Transport.
    #[serde(default)]
    pub transport: Option<TransportSpec>,
}

/// A constant-rate stream.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConstantRate {
    /// Sender.
    pub src: String,
    /// Receiver.
    pub dst: String,
    /// Rate (Gb/s on the wire).
    pub rate_gbps: f64,
    /// Start (ns).
    #[serde(default)]
    pub start_ns: u64,
    /// Stop (ns).
    pub stop_ns: u64,
    /// Class.
    #[serde(default)]
    pub class: u8,
}

/// Bursts and silences.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OnOff {
    /// Sender.
    pub src: String,
    /// Receiver.
    pub dst: String,
    /// Rate while on (Gb/s on the wire).
    pub rate_gbps: f64,
    /// On period (ns, or its mean).
    pub on_ns: u64,
    /// Off period (ns, or its mean).
    pub off_ns: u64,
    /// Start (ns).
    #[serde(default)]
    pub start_ns: u64,
    /// Stop (ns).
    pub stop_ns: u64,
    /// Exponentially distributed periods.
    #[serde(default)]
    pub exponential: bool,
    /// Class.
    #[serde(default)]
    pub class: u8,
}

/// Flow sizes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Size {
    /// Every flow this size (bytes).
    Fixed(u64),
    /// From a CDF (built-in name or file).
    Cdf(String),
}

/// Inter-arrival distribution.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Arrivals {
    /// Exponential (a Poisson process).
    Poisson,
    /// Log-normal with shape σ.
    LogNormal {
        /// σ of the underlying normal.
        sigma: f64,
    },
}

/// What `load` is a fraction of.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum LoadOf {
    /// Each host's NIC rate.
    HostNic,
    /// An aggregate rate (Gb/s) shared by all the hosts.
    Aggregate(f64),
}

/// Flows from a size distribution at a target load.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Flows {
    /// Hosts that send and receive (default all).
    #[serde(default)]
    pub hosts: Option<Vec<String>>,
    /// Sizes.
    pub size: Size,
    /// Inter-arrivals.
    #[serde(default = "poisson")]
    pub arrivals: Arrivals,
    /// Load (0..1].
    pub load: f64,
    /// What the load is relative to.
    #[serde(default = "host_nic")]
    pub load_of: LoadOf,
    /// First arrival no earlier than this (ns).
    #[serde(default)]
    pub start_ns: u64,
    /// No arrivals after this (ns).
    pub stop_ns: u64,
    /// At most this many flows.
    #[serde(default)]
    pub max_flows: Option<u64>,
    /// Class.
    #[serde(default)]
    pub class: u8,
    /// Each flow's class drawn uniformly from these instead of `class` (the FB paper's hosts
    /// tag each web-search flow with one of four low tags at random).
    #[serde(default)]
    pub classes: Option<Vec<u8>>,
    /// Transport.
    #[serde(default)]
    pub transport: Option<TransportSpec>,
}

fn poisson() -> Arrivals {
    Arrivals::Poisson
}

fn host_nic() -> LoadOf {
    LoadOf::HostNic
}

/// N-to-1 incast.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Incast {
    /// Senders.
    pub senders: Vec<String>,
    /// Receiver.
    pub receiver: String,
    /// Bytes per sender per round.
    pub size: u64,
    /// First round (ns).
    #[serde(default)]
    pub start_ns: u64,
    /// Time between rounds (ns).
    #[serde(default)]
    pub period_ns: Option<u64>,
    /// Rounds.
    #[serde(default = "one")]
    pub repeats: u32,
    /// Uniform random delay of each sender's start, up to this (ns).
    #[serde(default)]
    pub jitter_ns: u64,
    /// Class.
    #[serde(default)]
    pub class: u8,
    /// Transport.
    #[serde(default)]
    pub transport: Option<TransportSpec>,
}

fn one() -> u32 {
    1
}

/// Permutation or all-to-all.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pattern {
    /// Bytes per flow.
    pub size: u64,
    /// Start (ns).
    #[serde(default)]
    pub start_ns: u64,
    /// Hosts (default all).
    #[serde(default)]
    pub hosts: Option<Vec<String>>,
    /// Class.
    #[serde(default)]
    pub class: u8,
    /// Transport.
    #[serde(default)]
    pub transport: Option<TransportSpec>,
}

/// A traffic source.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Source {
    /// One flow.
    Flow(OneFlow),
    /// Constant rate.
    ConstantRate(ConstantRate),
    /// On-off.
    OnOff(OnOff),
    /// Flows from a distribution.
    Flows(Flows),
    /// Incast.
    Incast(Incast),
    /// Permutation.
    Permutation(Pattern),
    /// All-to-all.
    AllToAll(Pattern),
    /// Partition-aggregate queries.
    Queries(Queries),
}

/// How a `Queries` source's answers use their transport.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Connections {
    /// Every answer is a transfer of its own, from the transport's initial state.
    #[default]
    Fresh,
    /// A responder answers a requester on one connection that persists: an answer starts
    /// with the congestion state (window, slow-start threshold, RTT estimate, DCTCP's α) the
    /// connection's latest answer completed before it left (its last packet acknowledged);
    /// the connection's first answer, or one whose predecessors are all still running,
    /// starts afresh. No window is reset after idle.
    Persistent,
}

/// Partition-aggregate queries (see the module's documentation).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Queries {
    /// Hosts that issue queries (default all).
    #[serde(default)]
    pub requesters: Option<Vec<String>>,
    /// Hosts a query's responders are drawn from (default all; never its requester).
    #[serde(default)]
    pub responders_from: Option<Vec<String>>,
    /// Responders per query (N).
    pub responders: u32,
    /// Bytes of the whole answer, split evenly over the responders.
    pub size: u64,
    /// Mean queries a second each requester issues (a Poisson process).
    pub per_second: f64,
    /// First query no earlier than this (ns).
    #[serde(default)]
    pub start_ns: u64,
    /// No query after this (ns).
    pub stop_ns: u64,
    /// At most this many queries (the earliest).
    #[serde(default)]
    pub max_queries: Option<u64>,
    /// Whether a responder answers each requester on a connection of its own that persists
    /// from one answer to the next ([`Connections`]).
    #[serde(default)]
    pub connections: Connections,
    /// Class of the answers' packets.
    #[serde(default)]
    pub class: u8,
    /// Transport of the answers.
    #[serde(default)]
    pub transport: Option<TransportSpec>,
    /// The answers' initial congestion window (packets) instead of their transport's: the
    /// window an answer finds on a persistent connection that earlier answers opened (a
    /// window-based transport only: NewReno or DCTCP).
    #[serde(default)]
    pub answer_window: Option<u32>,
}

/// A flow to run.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowSpec {
    /// Sending host index.
    pub src: usize,
    /// Receiving host index.
    pub dst: usize,
    /// Bytes.
    pub size: u64,
    /// When offered.
    pub start: Time,
    /// Class.
    pub class: u8,
    /// Transport (one per traffic source, shared by its flows: a run of millions of flows
    /// holds a handful).
    pub transport: Arc<TransportSpec>,
    /// Which source made it.
    pub source: usize,
    /// The query it answers part of (numbered over the run's sources, in the order they
    /// were made), if a [`Source::Queries`] made it.
    pub query: Option<u32>,
    /// The persistent connection it is sent on ([`Connections::Persistent`]), numbered over
    /// the run's sources.
    pub connection: Option<u32>,
}

/// What the expansion needs to know about hosts.
pub struct HostInfo<'a> {
    /// Names, by index.
    pub names: &'a [String],
    /// NIC rates (Gb/s), by index.
    pub gbps: &'a [u32],
}

impl HostInfo<'_> {
    fn index(&self, name: &str, what: &str) -> Result<usize, String> {
        self.names.iter().position(|n| n == name).ok_or_else(|| {
            // Name the topology's hosts, so a guess at a generated shape's naming
            // (`h0_0` for a fat tree's `h0_0_0`) shows the right one.
            let hosts = match self.names {
                [] => "the topology has no hosts".to_string(),
                [only] => format!("the one host is `{only}`"),
                [first, .., last] => {
                    format!("the {} hosts are `{first}` to `{last}`", self.names.len())
                }
            };
            format!("{what}: no host named `{name}` ({hosts})")
        })
    }

    fn set(&self, hosts: &Option<Vec<String>>, what: &str) -> Result<Vec<usize>, String> {
        match hosts {
            None => Ok((0..self.names.len()).collect()),
            Some(v) => v.iter().map(|n| self.index(n, what)).collect(),
        }
    }
}

/// The most flows the traffic of one run may make (they are all made before it starts).
pub const MAX_FLOWS: usize = 10_000_000;

/// The most bytes one flow may carry: 100 GB, 8 s of a 100G link. A flow's receiver keeps a
/// bit per packet from the start (12.5 MB at this size and a 1 KB MSS); the network builder
/// bounds the packets, which depend on the MTU, too.
pub const MAX_FLOW_BYTES: u64 = 100_000_000_000;

/// The largest σ of log-normal inter-arrivals. The gaps' variance is mean² · (e^σ² − 1): at
/// σ = 4 a run's thousands of gaps already average far from the mean the load sets, and past
/// it most gaps round to 0 ns (σ = 2³¹ made every flow start at once, up to [`MAX_FLOWS`]).
/// The papers use 2.
const MAX_LOGNORMAL_SIGMA: f64 = 4.0;

/// The largest aggregate a `load_of: Aggregate(gbps)` may name: 1 Pb/s, far above any
/// network the model runs.
const MAX_AGGREGATE_GBPS: f64 = 1e6;

/// Expand the sources into flows, sorted by start time (ties: source order, then creation).
pub fn expand(
    sources: &[Source],
    hosts: &HostInfo,
    default_transport: &TransportSpec,
    seed: u64,
) -> Result<Vec<FlowSpec>, String> {
    let mut flows = Vec::new();
    let mut queries = 0u32;
    let mut connections: std::collections::HashMap<(usize, usize, usize), u32> = Default::default();
    for (i, s) in sources.iter().enumerate() {
        let place = format!("traffic[{i}]");
        let mut rng = Stream::new(seed, &place);
        let tr = |t: &Option<TransportSpec>| -> Result<TransportSpec, String> {
            let t = t.clone().unwrap_or_else(|| default_transport.clone());
            t.validate()
                .map_err(|e| format!("{place}: transport: {e}"))?;
            Ok(t)
        };
        let class_ok = |c: u8| {
            if c > 7 {
                Err(format!("{place}: class {c} must be 0..7"))
            } else {
                Ok(())
            }
        };
        // Every flow is made before the run: a bound keeps a mistaken load or period a clear
        // error rather than the machine's memory running out.
        let mut push_part = |src: usize,
                             dst: usize,
                             size: u64,
                             start: Time,
                             class: u8,
                             t: &Arc<TransportSpec>,
                             query: Option<u32>,
                             connection: Option<u32>|
         -> Result<(), String> {
            if flows.len() >= MAX_FLOWS {
                return Err(format!(
                    "{place}: the traffic makes more than {MAX_FLOWS} flows; lower its load, \
                     rate or duration, or set max_flows"
                ));
            }
            if size > MAX_FLOW_BYTES {
                return Err(format!(
                    "{place}: a flow of {size} bytes (from its size distribution); a flow may \
                     carry at most {MAX_FLOW_BYTES}"
                ));
            }

            flows.push(FlowSpec {
                src,
                dst,
                size,
                start,
                class,
                transport: Arc::clone(t),
                source: i,
                query,
                connection,
            });
            Ok(())
        };
        let mut push = |src, dst, size, start, class, t: &Arc<TransportSpec>| {
            push_part(src, dst, size, start, class, t, None, None)
        };
        let time = |ns: u64, field: &str| Time::from_input_ns(ns, &format!("{place}: {field}"));
        let sized = |size: u64| {
            if size == 0 {
                Err(format!("{place}: size must be at least 1 byte"))
            } else if size > MAX_FLOW_BYTES {
                Err(format!(
                    "{place}: size {size} bytes; a flow may carry at most {MAX_FLOW_BYTES}"
                ))
            } else {
                Ok(size)
            }
        };
        let pair = |a: &str, b: &str| -> Result<(usize, usize), String> {
            let (s, d) = (hosts.index(a, &place)?, hosts.index(b, &place)?);
            if s == d {
                return Err(format!("{place}: `{a}` cannot send to itself"));
            }
            Ok((s, d))
        };
        match s {
            Source::Flow(f) => {
                class_ok(f.class)?;
                let (a, b) = pair(&f.src, &f.dst)?;
                let start = time(f.start_ns, "start_ns")?;
                push(
                    a,
                    b,
                    sized(f.size)?,
                    start,
                    f.class,
                    &Arc::new(tr(&f.transport)?),
                )?;
            }
            Source::ConstantRate(c) => {
                class_ok(c.class)?;
                let (a, b) = pair(&c.src, &c.dst)?;
                let t = Arc::new(paced(c.rate_gbps, hosts.gbps[a], &place)?);
                let start = time(c.start_ns, "start_ns")?;
                time(c.stop_ns, "stop_ns")?;
                let bytes = bytes_at(c.rate_gbps, c.stop_ns.saturating_sub(c.start_ns));
                if bytes > 0 {
                    push(a, b, bytes, start, c.class, &t)?;
                }
            }
            Source::OnOff(o) => {
                class_ok(o.class)?;
                let (a, b) = pair(&o.src, &o.dst)?;
                let t = Arc::new(paced(o.rate_gbps, hosts.gbps[a], &place)?);
                if o.on_ns == 0 {
                    return Err(format!("{place}: on_ns must be greater than 0"));
                }
                for (ns, field) in [
                    (o.start_ns, "start_ns"),
                    (o.stop_ns, "stop_ns"),
                    (o.on_ns, "on_ns"),
                    (o.off_ns, "off_ns"),
                ] {
                    time(ns, field)?;
                }
                let bursts = o.stop_ns.saturating_sub(o.start_ns) / (o.on_ns + o.off_ns);
                if bursts > MAX_FLOWS as u64 {
                    return Err(format!(
                        "{place}: the traffic makes more than {MAX_FLOWS} flows (about {bursts} \
                         bursts); lower its duration or lengthen on_ns or off_ns"
                    ));
                }
                let mut at = o.start_ns as f64;
                while at < o.stop_ns as f64 {
                    let draw = |m: u64, r: &mut Stream| {
                        if o.exponential {
                            r.exponential(m as f64)
                        } else {
                            m as f64
                        }
                    };
                    let on = draw(o.on_ns, &mut rng).min(o.stop_ns as f64 - at);
                    let bytes = bytes_at(o.rate_gbps, on as u64);
                    if bytes > 0 {
                        push(a, b, bytes, Time((at * 1000.0) as u64), o.class, &t)?;
                    }
                    at += on + draw(o.off_ns, &mut rng);
                }
            }
            Source::Flows(f) => {
                class_ok(f.class)?;
                if let Some(cs) = &f.classes {
                    if cs.is_empty() {
                        return Err(format!("{place}: classes: give at least one, or None"));
                    }
                    cs.iter().try_for_each(|&c| class_ok(c))?;
                }
                let t = Arc::new(tr(&f.transport)?);
                let set = hosts.set(&f.hosts, &place)?;
                if set.len() < 2 {
                    return Err(format!("{place}: needs at least two hosts"));
                }
                if !(f.load > 0.0 && f.load <= 1.0) {
                    return Err(format!(
                        "{place}: load {} must be above 0 and at most 1",
                        f.load
                    ));
                }
                if let Arrivals::LogNormal { sigma } = f.arrivals {
                    if !(sigma > 0.0 && sigma <= MAX_LOGNORMAL_SIGMA) {
                        return Err(format!(
                            "{place}: arrivals: LogNormal(sigma: {sigma}) must be above 0 and \
                             at most {MAX_LOGNORMAL_SIGMA}"
                        ));
                    }
                }
                if let LoadOf::Aggregate(g) = f.load_of {
                    if !(g > 0.0 && g <= MAX_AGGREGATE_GBPS) {
                        return Err(format!(
                            "{place}: load_of: Aggregate({g}) must be above 0 and at most {MAX_AGGREGATE_GBPS} Gb/s"
                        ));
                    }
                }
                time(f.start_ns, "start_ns")?;
                time(f.stop_ns, "stop_ns")?;
                let dist = match &f.size {
                    Size::Fixed(b) => Cdf {
                        name: "fixed".into(),
                        points: vec![(sized(*b)? as f64, 100.0)],
                    },
                    Size::Cdf(n) => Cdf::load(n).map_err(|e| format!("{place}: {e}"))?,
                };
                let mean = dist.mean();
                let mut n = 0u64;
                let mut per_host = Vec::new();
                for &h in &set {
                    let gbps = match f.load_of {
                        LoadOf::HostNic => hosts.gbps[h] as f64 * f.load,
                        LoadOf::Aggregate(g) => g * f.load / set.len() as f64,
                    };
                    // Mean inter-arrival in ns: bytes · 8 / (Gb/s).
                    per_host.push((h, 8.0 * mean / gbps, f.start_ns as f64));
                }
                // Interleave hosts in time order so `max_flows` keeps the earliest.
                let gaps = |m: f64, r: &mut Stream| match f.arrivals {
                    Arrivals::Poisson => r.exponential(m),
                    Arrivals::LogNormal { sigma } => r.lognormal(m, sigma),
                };
                // The flows this source will make, on average: refused at once if too many,
                // before any is made.
                let span = f.stop_ns.saturating_sub(f.start_ns) as f64;
                let expected = per_host.iter().map(|ph| span / ph.1).sum::<f64>();
                let expected = f.max_flows.map_or(expected, |m| expected.min(m as f64));
                if expected > MAX_FLOWS as f64 {
                    return Err(format!(
                        "{place}: the traffic makes more than {MAX_FLOWS} flows (about {expected:.0}); \
                         lower its load or duration, or set max_flows"
                    ));
                }
                for ph in per_host.iter_mut() {
                    ph.2 += gaps(ph.1, &mut rng);
                }
                while let Some(k) =
                    earliest_before(per_host.iter().map(|ph| ph.2), f.stop_ns as f64)
                {
                    if f.max_flows.is_some_and(|m| n >= m) {
                        break;
                    }
                    let (h, m, at) = per_host[k];
                    let mut d = set[rng.below(set.len() as u64 - 1) as usize];
                    if d == h {
                        d = set[set.len() - 1];
                    }
                    let size = dist.sample(&mut rng);
                    let class = match &f.classes {
                        Some(cs) => cs[rng.below(cs.len() as u64) as usize],
                        None => f.class,
                    };
                    push(h, d, size, Time((at * 1000.0) as u64), class, &t)?;
                    n += 1;
                    per_host[k].2 = at + gaps(m, &mut rng);
                }
            }
            Source::Incast(c) => {
                class_ok(c.class)?;
                let t = Arc::new(tr(&c.transport)?);
                let r = hosts.index(&c.receiver, &place)?;
                let senders: Vec<usize> = c
                    .senders
                    .iter()
                    .map(|n| pair(n, &c.receiver).map(|p| p.0))
                    .collect::<Result<_, _>>()?;
                if c.repeats > 1 && c.period_ns.is_none() {
                    return Err(format!("{place}: repeats > 1 needs period_ns"));
                }
                sized(c.size)?;
                time(c.start_ns, "start_ns")?;
                time(c.jitter_ns, "jitter_ns")?;
                let period = c.period_ns.unwrap_or(0);
                // The last repeat must start within the times a scenario may name too.
                let last = period
                    .checked_mul(c.repeats.saturating_sub(1) as u64)
                    .and_then(|d| d.checked_add(c.start_ns))
                    .unwrap_or(u64::MAX);
                time(last, "start_ns + (repeats - 1) * period_ns")?;
                let count = c.repeats as u64 * senders.len() as u64;
                if count > MAX_FLOWS as u64 {
                    return Err(format!(
                        "{place}: the traffic makes more than {MAX_FLOWS} flows ({count}); \
                         lower repeats"
                    ));
                }
                for k in 0..c.repeats {
                    let base = c.start_ns + k as u64 * period;
                    for &s in &senders {
                        let j = if c.jitter_ns > 0 {
                            rng.below(c.jitter_ns + 1)
                        } else {
                            0
                        };
                        push(s, r, c.size, Time::from_ns(base + j), c.class, &t)?;
                    }
                }
            }
            Source::Permutation(p) => {
                class_ok(p.class)?;
                let t = Arc::new(tr(&p.transport)?);
                let set = hosts.set(&p.hosts, &place)?;
                if set.len() < 2 {
                    return Err(format!("{place}: needs at least two hosts"));
                }
                // A random derangement: shuffle until no host maps to itself (expected ~e tries).
                let perm = loop {
                    let q = rng.permutation(set.len());
                    if q.iter().enumerate().all(|(i, &j)| i != j) {
                        break q;
                    }
                };
                let start = time(p.start_ns, "start_ns")?;
                for (i, &j) in perm.iter().enumerate() {
                    push(set[i], set[j], sized(p.size)?, start, p.class, &t)?;
                }
            }
            Source::AllToAll(p) => {
                class_ok(p.class)?;
                let t = Arc::new(tr(&p.transport)?);
                let set = hosts.set(&p.hosts, &place)?;
                let start = time(p.start_ns, "start_ns")?;
                let count = set.len() as u64 * set.len().saturating_sub(1) as u64;
                if count > MAX_FLOWS as u64 {
                    return Err(format!(
                        "{place}: the traffic makes more than {MAX_FLOWS} flows ({count})"
                    ));
                }
                for &a in &set {
                    for &b in &set {
                        if a != b {
                            push(a, b, sized(p.size)?, start, p.class, &t)?;
                        }
                    }
                }
            }
            Source::Queries(q) => {
                class_ok(q.class)?;
                let mut t = tr(&q.transport)?;
                if let Some(w) = q.answer_window {
                    t = t
                        .with_initial_window(w)
                        .map_err(|e| format!("{place}: answer_window: {e}"))?;
                }
                let t = Arc::new(t);
                let requesters = hosts.set(&q.requesters, &place)?;
                let pool = hosts.set(&q.responders_from, &place)?;
                let n = q.responders as usize;
                if n == 0 {
                    return Err(format!("{place}: responders must be at least 1"));
                }
                sized(q.size)?;
                if (q.size as usize) < n {
                    return Err(format!(
                        "{place}: size {} bytes cannot be split over {n} responders",
                        q.size
                    ));
                }
                if let Some(&r) = requesters
                    .iter()
                    .find(|&&r| pool.iter().filter(|&&h| h != r).count() < n)
                {
                    return Err(format!(
                        "{place}: requester `{}` has fewer than {n} responders to draw from \
                         (responders_from, without itself)",
                        hosts.names[r]
                    ));
                }
                if !(q.per_second > 0.0 && q.per_second.is_finite()) {
                    return Err(format!(
                        "{place}: per_second {} must be above 0",
                        q.per_second
                    ));
                }
                time(q.start_ns, "start_ns")?;
                time(q.stop_ns, "stop_ns")?;
                let mean_gap_ns = 1e9 / q.per_second;
                let span = q.stop_ns.saturating_sub(q.start_ns) as f64;
                let count = requesters.len() as f64 * span / mean_gap_ns;
                let count = q.max_queries.map_or(count, |m| count.min(m as f64));
                let expected = count * n as f64;
                if expected > MAX_FLOWS as f64 {
                    return Err(format!(
                        "{place}: the traffic makes more than {MAX_FLOWS} flows (about \
                         {expected:.0}); lower per_second, responders or the duration"
                    ));
                }
                // Each requester's next query, merged in time order (ties: requester order).
                let mut next: Vec<f64> = requesters
                    .iter()
                    .map(|_| q.start_ns as f64 + rng.exponential(mean_gap_ns))
                    .collect();
                let mut made = 0u64;
                while let Some(k) = earliest_before(next.iter().copied(), q.stop_ns as f64) {
                    if q.max_queries.is_some_and(|m| made >= m) {
                        break;
                    }
                    made += 1;
                    let r = requesters[k];
                    let at = Time((next[k] * 1000.0) as u64);
                    let mut from: Vec<usize> = pool.iter().copied().filter(|&h| h != r).collect();
                    let id = queries;
                    queries = queries
                        .checked_add(1)
                        .ok_or_else(|| format!("{place}: more than {} queries", u32::MAX))?;
                    for part in 0..n {
                        // Draw without replacement: a random one of those left.
                        let j = rng.below(from.len() as u64) as usize;
                        let responder = from.swap_remove(j);
                        let bytes = q.size / n as u64 + ((part as u64) < q.size % n as u64) as u64;
                        let new_id = connections.len() as u32;
                        let connection = (q.connections == Connections::Persistent)
                            .then(|| *connections.entry((i, responder, r)).or_insert(new_id));
                        push_part(responder, r, bytes, at, q.class, &t, Some(id), connection)?;
                    }
                    next[k] += rng.exponential(mean_gap_ns);
                }
            }
        }
    }
    // Stable: equal start times keep source and creation order.
    flows.sort_by_key(|f| f.start);
    Ok(flows)
}

/// Of per-host next arrival times (ns), the index of the earliest before `stop`, the first
/// of equals: how the per-host Poisson streams of `Flows` and `Queries` merge in time order.
fn earliest_before(times: impl Iterator<Item = f64>, stop: f64) -> Option<usize> {
    times
        .enumerate()
        .filter(|&(_, t)| t < stop)
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(k, _)| k)
}

fn paced(rate: f64, line: u32, place: &str) -> Result<TransportSpec, String> {
    if !(rate > 0.0 && rate <= line as f64) {
        return Err(format!(
            "{place}: rate_gbps {rate} must be positive and at most the NIC's {line} Gb/s"
        ));
    }
    Ok(TransportSpec::Raw(RawSpec {
        max_inflight_bytes: None,
        rate_gbps: Some(rate),
    }))
}

/// Application bytes a paced stream sends in `ns` (the rate counts wire bytes; the small
/// framing overhead is ignored here: the stream stops when these bytes are sent).
fn bytes_at(rate_gbps: f64, ns: u64) -> u64 {
    (rate_gbps * ns as f64 / 8.0) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info() -> (Vec<String>, Vec<u32>) {
        ((0..8).map(|i| format!("h{i}")).collect(), vec![10; 8])
    }

    #[test]
    fn poisson_flows_offer_the_target_load() {
        let (names, gbps) = info();
        let h = HostInfo {
            names: &names,
            gbps: &gbps,
        };
        let src = vec![Source::Flows(Flows {
            hosts: None,
            size: Size::Fixed(10_000),
            arrivals: Arrivals::Poisson,
            load: 0.5,
            load_of: LoadOf::HostNic,
            start_ns: 0,
            stop_ns: 10_000_000,
            max_flows: None,
            class: 0,
            classes: None,
            transport: None,
        })];
        let f = expand(&src, &h, &TransportSpec::default(), 1).unwrap();
        // 8 hosts × 5 Gb/s × 10 ms = 50 MB = 5000 flows of 10 kB.
        let bytes: u64 = f.iter().map(|f| f.size).sum();
        assert!((bytes as f64 / 50e6 - 1.0).abs() < 0.05, "{bytes}");
        assert!(f.windows(2).all(|w| w[0].start <= w[1].start));
        assert!(f.iter().all(|f| f.src != f.dst));
        // Same seed, same flows.
        assert_eq!(f, expand(&src, &h, &TransportSpec::default(), 1).unwrap());
        // Classes drawn from four: each about a quarter of the flows.
        let Source::Flows(mut tagged) = src[0].clone() else {
            unreachable!()
        };
        tagged.classes = Some(vec![2, 3, 4, 5]);
        let g = expand(
            &[Source::Flows(tagged.clone())],
            &h,
            &TransportSpec::default(),
            1,
        )
        .unwrap();
        for c in 2..=5u8 {
            let n = g.iter().filter(|f| f.class == c).count() as f64;
            assert!((n / g.len() as f64 - 0.25).abs() < 0.03, "class {c}: {n}");
        }
        assert!(g.iter().all(|f| (2..=5).contains(&f.class)));
        tagged.classes = Some(vec![]);
        let e = expand(
            &[Source::Flows(tagged.clone())],
            &h,
            &TransportSpec::default(),
            1,
        );
        assert!(e.unwrap_err().contains("classes: give at least one"));
        tagged.classes = Some(vec![8]);
        let e = expand(&[Source::Flows(tagged)], &h, &TransportSpec::default(), 1);
        assert!(e.unwrap_err().contains("class 8 must be 0..7"));
    }

    #[test]
    fn incast_permutation_and_all_to_all_shapes() {
        let (names, gbps) = info();
        let h = HostInfo {
            names: &names,
            gbps: &gbps,
        };
        let src = vec![
            Source::Incast(Incast {
                senders: vec!["h1".into(), "h2".into(), "h3".into()],
                receiver: "h0".into(),
                size: 1000,
                start_ns: 10,
                period_ns: Some(100),
                repeats: 2,
                jitter_ns: 0,
                class: 0,
                transport: None,
            }),
            Source::Permutation(Pattern {
                size: 5,
                start_ns: 0,
                hosts: None,
                class: 0,
                transport: None,
            }),
            Source::AllToAll(Pattern {
                size: 7,
                start_ns: 0,
                hosts: None,
                class: 0,
                transport: None,
            }),
        ];
        let f = expand(&src, &h, &TransportSpec::default(), 1).unwrap();
        assert_eq!(f.iter().filter(|f| f.source == 0).count(), 6);
        let perm: Vec<_> = f.iter().filter(|f| f.source == 1).collect();
        assert_eq!(perm.len(), 8);
        let mut dsts: Vec<usize> = perm.iter().map(|f| f.dst).collect();
        dsts.sort();
        assert_eq!(dsts, (0..8).collect::<Vec<_>>());
        assert_eq!(f.iter().filter(|f| f.source == 2).count(), 56);
    }

    fn queries(responders: u32, per_second: f64, from: Option<Vec<String>>) -> Source {
        Source::Queries(Queries {
            requesters: Some(vec!["h0".into(), "h1".into()]),
            responders_from: from,
            responders,
            size: 100_001,
            per_second,
            start_ns: 0,
            stop_ns: 1_000_000_000,
            max_queries: None,
            connections: Connections::Fresh,
            class: 2,
            transport: None,
            answer_window: None,
        })
    }

    /// Two requesters at 100 queries a second for 1 s: about 200 queries (a Poisson count),
    /// each of 4 parts from distinct hosts other than its requester, numbered in time order,
    /// the same for the same seed.
    #[test]
    fn queries_make_their_parts() {
        let (names, gbps) = info();
        let h = HostInfo {
            names: &names,
            gbps: &gbps,
        };
        let src = vec![queries(4, 100.0, None)];
        let f = expand(&src, &h, &TransportSpec::default(), 3).unwrap();
        let n = f.iter().filter_map(|f| f.query).max().unwrap() as usize + 1;
        assert!((160..=240).contains(&n), "{n} queries");
        assert_eq!(f.len(), 4 * n);
        for q in 0..n as u32 {
            let parts: Vec<&FlowSpec> = f.iter().filter(|f| f.query == Some(q)).collect();
            assert_eq!(parts.len(), 4);
            let r = parts[0].dst;
            assert!(
                r < 2
                    && parts
                        .iter()
                        .all(|p| p.dst == r && p.start == parts[0].start)
            );
            let mut from: Vec<usize> = parts.iter().map(|p| p.src).collect();
            from.sort();
            from.dedup();
            assert_eq!(from.len(), 4);
            assert!(!from.contains(&r));
            assert_eq!(parts.iter().map(|p| p.size).sum::<u64>(), 100_001);
            assert!(parts.iter().all(|p| p.class == 2));
        }
        assert_eq!(f, expand(&src, &h, &TransportSpec::default(), 3).unwrap());
    }

    /// `answer_window` opens the answers' window, over the source's transport or the
    /// default one; a transport without a window refuses it.
    #[test]
    fn answer_window_sets_the_answers_initial_window() {
        let (names, gbps) = info();
        let h = HostInfo {
            names: &names,
            gbps: &gbps,
        };
        let mut q = queries(4, 10.0, None);
        let Source::Queries(qs) = &mut q else {
            unreachable!()
        };
        qs.answer_window = Some(400);
        let dctcp = TransportSpec::Dctcp(crate::transport::dctcp::DctcpSpec::default());
        let f = expand(std::slice::from_ref(&q), &h, &dctcp, 1).unwrap();
        let TransportSpec::Dctcp(d) = &*f[0].transport else {
            panic!("{:?}", f[0].transport)
        };
        assert_eq!(d.reno.init_cwnd, 400);
        let Source::Queries(qs) = &mut q else {
            unreachable!()
        };
        qs.transport = Some(TransportSpec::Raw(Default::default()));
        let e = expand(&[q], &h, &dctcp, 1).unwrap_err();
        assert!(
            e.contains("answer_window: needs a window-based transport"),
            "{e}"
        );
    }

    /// Queries that cannot be made are refused with the source's place.
    #[test]
    fn impossible_queries_are_refused() {
        let (names, gbps) = info();
        let h = HostInfo {
            names: &names,
            gbps: &gbps,
        };
        let err = |s: Source| expand(&[s], &h, &TransportSpec::default(), 1).unwrap_err();
        assert!(err(queries(0, 1.0, None)).contains("traffic[0]: responders must be at least 1"));
        assert!(err(queries(1, 0.0, None)).contains("per_second 0 must be above 0"));
        let few = Some(vec!["h0".into(), "h2".into()]);
        assert!(err(queries(2, 1.0, few)).contains("requester `h0` has fewer than 2 responders"));
    }

    #[test]
    fn on_off_makes_one_paced_flow_per_burst() {
        let (names, gbps) = info();
        let h = HostInfo {
            names: &names,
            gbps: &gbps,
        };
        let src = vec![Source::OnOff(OnOff {
            src: "h0".into(),
            dst: "h1".into(),
            rate_gbps: 8.0,
            on_ns: 1000,
            off_ns: 1000,
            start_ns: 0,
            stop_ns: 4000,
            exponential: false,
            class: 0,
        })];
        let f = expand(&src, &h, &TransportSpec::default(), 1).unwrap();
        assert_eq!(f.len(), 2);
        assert_eq!((f[0].size, f[1].start), (1000, Time::from_ns(2000)));
        assert!(matches!(
            *f[0].transport,
            TransportSpec::Raw(RawSpec {
                rate_gbps: Some(_),
                ..
            })
        ));
    }
}
