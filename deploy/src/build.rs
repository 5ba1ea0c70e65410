//! A network scenario built into an `asic_net::Network`: the topology generated or read,
//! each chip's settings merged, its mechanism deployed, its program compiled (once per
//! profile and program), its entries resolved and the chip built; hosts checked against
//! what their switches' mechanisms require.

use crate::paths::PathOracle;
use crate::routers::Routing;
use crate::scenario::{ChipSettings, Entries, NetScenario, Select, TopologySource};
use crate::{ChipContext, Deployment, Embedded, Mechanism};
use asic_io::load::{describe, resolve_entries, Base};
use asic_model::chip::{Chip, ChipConfig, PortSpeed};
use asic_model::control_plane::ScheduledOp;
use asic_model::profile::ChipProfile;
use asic_net::cdf::BUILTIN as CDF_BUILTIN;
use asic_net::network::ChipControl;
use asic_net::rng::Stream;
use asic_net::shapes::{generate, RolePorts};
use asic_net::topology::{End, Topology, TopologySpec};
use asic_net::traffic::{Size, Source};
use asic_net::Network;
use located::{locate, parse_ron, read_text};
use pipelines::control::resolve_op;
use pipelines::program::Program;
use pipelines::time::Time;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

/// One chip's settings after merging every `chips` entry that selects it.
#[derive(Default)]
struct Merged<'a> {
    deploy: Option<&'a Mechanism>,
    program: Option<&'a str>,
    entries: Option<&'a Entries>,
    config: Option<&'a ChipConfig>,
    control: Vec<&'a ScheduledOp>,
}

/// Build the network a scenario describes; relative paths resolve against `base` (the
/// scenario's directory).
pub fn build(s: NetScenario, base: &Path) -> Result<Network, String> {
    build_routed(s, base).map(|(n, _)| n)
}

/// [`build`], and the path oracle over the generated routes each chip forwards by
/// ([`Deployment::routing`]), which the chips' deployments used.
pub fn build_routed(s: NetScenario, base: &Path) -> Result<(Network, Arc<PathOracle>), String> {
    let base = Base(base);
    let topo = topology(&s.topology, base)?;
    let merged = merge(&s.chips, &topo)?;
    let mut loaded = Loaded::default();
    let mut chips = Vec::new();
    let mut control = Vec::new();
    let mechanisms: Vec<&Mechanism> = merged
        .iter()
        .map(|m| m.deploy.unwrap_or(&s.deploy))
        .collect();
    let routings: Vec<Option<Routing>> = mechanisms
        .iter()
        .map(|m| m.deployment().routing())
        .collect();
    // One oracle for every chip's deployment: each chip's routes worked out once, when a
    // deployment first follows a path through it.
    let paths = Arc::new(PathOracle::new(topo.clone(), &routings));
    for (c, m) in merged.iter().enumerate() {
        let place = |e: String| format!("chip `{}`: {e}", topo.spec.chips[c].name);
        let (chip, program) = chip(
            (&topo, &paths),
            c,
            m,
            mechanisms[c],
            (s.seed, s.mtu),
            base,
            &mut loaded,
        )
        .map_err(place)?;
        control.extend(chip_control(
            program,
            &m.control,
            c,
            &topo.spec.chips[c].name,
        )?);
        chips.push(chip);
    }
    check_hosts(&topo, &merged, &s.deploy)?;
    let mut traffic = s.traffic;
    // CDF files named relative to the scenario.
    for src in &mut traffic {
        if let Source::Flows(f) = src {
            if let Size::Cdf(n) = &mut f.size {
                if !CDF_BUILTIN.iter().any(|b| b.0 == n) {
                    *n = base.path(n).display().to_string();
                }
            }
        }
    }
    let network = Network {
        name: s.name,
        seed: s.seed,
        topology: topo,
        chips,
        control,
        transport: s.transport,
        mtu: s.mtu,
        traffic,
        stop: s.stop,
        sample_period_ns: s.sample_period_ns,
        captures: s.pcaps,
        hol_check: s.hol_check,
        flow_groups: s.deploy.deployment().flow_groups(&paths),
    };
    Ok((network, paths))
}

/// Profiles loaded by name, and programs compiled by (profile, program): each once per run.
#[derive(Default)]
struct Loaded {
    profiles: BTreeMap<String, ChipProfile>,
    programs: BTreeMap<(String, String), Program>,
}

/// Chip `c` as its settings and mechanism make it, and the program it runs.
fn chip<'l>(
    (topo, paths): (&Topology, &PathOracle),
    c: usize,
    m: &Merged,
    mechanism: &Mechanism,
    (seed, mtu): (u64, usize),
    base: Base,
    loaded: &'l mut Loaded,
) -> Result<(Chip, &'l Program), String> {
    let spec = &topo.spec.chips[c];
    if !loaded.profiles.contains_key(&spec.profile) {
        let prof = base.profile(&spec.profile)?;
        loaded.profiles.insert(spec.profile.clone(), prof);
    }
    let prof = &loaded.profiles[&spec.profile];
    let dep = mechanism.deployment();
    dep.check(prof)?;
    let program = program(
        m.program,
        dep,
        prof,
        base,
        &mut loaded.programs,
        &spec.profile,
    )?;
    // Each chip's random sources get their own seed, derived from the scenario's.
    let mut config = ChipConfig {
        seed: Stream::new(seed, &format!("chip:{}", spec.name)).next_u64(),
        ..m.config.cloned().unwrap_or_default()
    };
    bring_up_ports(topo, c, prof, &mut config)?;
    let ctx = ChipContext {
        topology: topo,
        paths,
        chip: c,
        profile: prof,
        seed,
        mtu,
    };
    let deployed = dep.deploy(&ctx, config)?;
    // An entries file's error is placed in that file; the scenario's inline entries and the
    // deployment's are named by their number among them.
    let mut entries = match m.entries {
        None => Vec::new(),
        Some(Entries::Inline(v)) => resolve_entries(v, program)?,
        Some(Entries::File(f)) => base.entries(f, program)?,
    };
    entries.extend(
        resolve_entries(&deployed.entries, program).map_err(|e| format!("the deployment's {e}"))?,
    );
    let mut chip = Chip::with_entries(prof.clone(), program, deployed.config, &entries)
        .map_err(|e| e.to_string())?;
    for (i, op) in deployed.control.iter().enumerate() {
        let what = describe(i, op).replacen("entry", "deployment operation", 1);
        let resolved = resolve_op(program, op).map_err(|e| format!("{what}: {e}"))?;
        chip.apply(&resolved).map_err(|e| format!("{what}: {e}"))?;
    }
    for agent in deployed.agents {
        chip.add_agent(agent)?;
    }
    Ok((chip, program))
}

/// Chip `c`'s (named `name`) control operations resolved against its program. An error
/// quotes the name the operation gives before the chip's, so that it is placed there in
/// the scenario (`run::place_in`).
fn chip_control(
    program: &Program,
    ops: &[&ScheduledOp],
    c: usize,
    name: &str,
) -> Result<Vec<ChipControl>, String> {
    ops.iter()
        .enumerate()
        .map(|(i, op)| {
            let what = describe(i, &op.op).replacen("entry", "control", 1);
            let resolved =
                resolve_op(program, &op.op).map_err(|e| format!("{what} of chip `{name}`: {e}"))?;
            let at = Time::from_input_ns(op.at_ns, &format!("control[{i}]: at_ns"))
                .map_err(|e| format!("chip `{name}`: {e}"))?;
            Ok(ChipControl {
                chip: c,
                at,
                op: resolved,
                name: what,
            })
        })
        .collect()
}

/// Bring chip `c`'s connected ports up at their links' speeds where those are below the
/// profile's (as an operator's `port_speeds`, unless the scenario set the port already); a
/// link faster than its port is refused, naming both.
fn bring_up_ports(
    topo: &Topology,
    c: usize,
    prof: &ChipProfile,
    config: &mut ChipConfig,
) -> Result<(), String> {
    for (&p, &l) in &topo.chip_ports[c] {
        // A port the chip lacks is the runtime's error, which names the ports it has.
        let Some(max) = prof.port_speed_gbps(p) else {
            continue;
        };
        let gbps = topo.links[l].gbps;
        let ls = &topo.spec.links[l];
        if gbps > max {
            return Err(format!(
                "link {} - {}: {gbps} Gb/s, but port {p} runs at most at {max} Gb/s",
                ls.a, ls.b
            ));
        }
        if gbps < max && !config.port_speeds.iter().any(|s| s.port == p) {
            config.port_speeds.push(PortSpeed { port: p, gbps });
        }
    }
    Ok(())
}

/// The topology a scenario names, resolved.
pub fn topology(source: &TopologySource, base: Base) -> Result<Topology, String> {
    let spec: TopologySpec = match source {
        TopologySource::Explicit(t) => (**t).clone(),
        TopologySource::File(f) => {
            // A topology file's errors are placed in it, not in the scenario.
            let path = base.path(f);
            let file = path.display().to_string();
            let text = read_text(&path, "topology")?;
            let spec = parse_ron(&text, &file)?;
            return Topology::resolve(spec).map_err(|e| locate(&file, &text, &e).to_string());
        }
        TopologySource::Generate(g) => {
            let mut ports = RolePorts::new();
            for &role in g.shape.roles() {
                let prof = base
                    .profile(g.profile_of(role))
                    .map_err(|e| format!("topology: {e}"))?;
                let speeds = (0..prof.ports_total() as u16)
                    .map(|p| prof.port_speed_gbps(p).expect("a front-panel port"))
                    .collect();
                ports.insert(role, speeds);
            }
            generate(g, &ports).map_err(|e| format!("topology: {e}"))?
        }
    };
    Topology::resolve(spec).map_err(|e| format!("topology: {e}"))
}

/// Every chip's settings, merged in order; a `select` that matches no chip is an error.
fn merge<'a>(settings: &'a [ChipSettings], topo: &Topology) -> Result<Vec<Merged<'a>>, String> {
    let mut merged: Vec<Merged> = topo.spec.chips.iter().map(|_| Merged::default()).collect();
    for (i, set) in settings.iter().enumerate() {
        let mut matched = false;
        for (c, chip) in topo.spec.chips.iter().enumerate() {
            let hit = match &set.select {
                Select::All => true,
                Select::Role(r) => chip.role == Some(*r),
                Select::Name(n) => chip.name == *n,
            };
            if !hit {
                continue;
            }
            matched = true;
            let m = &mut merged[c];
            m.deploy = set.deploy.as_ref().or(m.deploy);
            m.program = set.program.as_deref().or(m.program);
            m.entries = set.entries.as_ref().or(m.entries);
            m.config = set.config.as_ref().or(m.config);
            m.control.extend(&set.control);
        }
        if !matched {
            return Err(format!("chips[{i}]: {:?} selects no chip", set.select));
        }
    }
    Ok(merged)
}

/// Where a chip's program comes from.
#[derive(Clone, Copy)]
enum ProgramSource<'a> {
    /// A file named in the scenario.
    File(&'a str),
    /// The mechanism's own.
    Embedded(Embedded),
}

/// The program a chip runs: its settings' file, else the mechanism's own; compiled once per
/// (profile, program).
fn program<'p>(
    file: Option<&str>,
    dep: &dyn Deployment,
    prof: &ChipProfile,
    base: Base,
    cache: &'p mut BTreeMap<(String, String), Program>,
    profile_name: &str,
) -> Result<&'p Program, String> {
    let source = match (file, dep.program()) {
        (Some(f), _) => ProgramSource::File(f),
        (None, Some(e)) => ProgramSource::Embedded(e),
        (None, None) => {
            return Err("its mechanism has no program of its own: give `program`".into())
        }
    };
    let name = match source {
        ProgramSource::File(f) => base.path(f).display().to_string(),
        ProgramSource::Embedded(e) => e.file.to_string(),
    };
    let key = (profile_name.to_string(), name);
    if !cache.contains_key(&key) {
        let compiled = match source {
            ProgramSource::File(f) => base.compile(f, prof)?,
            ProgramSource::Embedded(e) => {
                dsl::compile(e.source, e.file, &prof.pipe).map_err(|e| e.to_string())?
            }
        };
        cache.insert(key.clone(), compiled.program);
    }
    Ok(&cache[&key])
}

/// Each host's NIC against the rules of its switch's mechanism.
fn check_hosts(topo: &Topology, merged: &[Merged], default: &Mechanism) -> Result<(), String> {
    for (h, hs) in topo.spec.hosts.iter().enumerate() {
        let End::Chip(c, _) = topo.peer(topo.host_link[h], End::Host(h)) else {
            continue;
        };
        let rules = merged[c]
            .deploy
            .unwrap_or(default)
            .deployment()
            .host_rules();
        if let Some((max, why)) = rules.max_nic_queues {
            if hs.nic_queues > max {
                return Err(format!(
                    "host `{}`: nic_queues: {}, but its switch `{}` allows at most {max}: {why}",
                    hs.name, hs.nic_queues, topo.spec.chips[c].name
                ));
            }
        }
    }
    Ok(())
}
