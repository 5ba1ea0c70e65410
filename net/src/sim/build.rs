//! Building a [`Net`] from a [`Network`]: the links checked against the chips' ports, the
//! hosts' NICs, every flow with its ideal FCT, captures and sampled series.

use super::{sample, Net, Pending};
use crate::host::{nic_queue_for, Flow, Host};
use crate::ideal::{ideal_fct, Hop};
use crate::network::{Network, Observer};
use crate::packet;
use crate::topology::End;
use crate::traffic::{self, HostInfo};
use crate::transport::{Shape, TransportSpec};

/// The most data packets all flows of a run may have: 10¹⁰, 10 TB at a 1 KB MSS, 100 s of a
/// 100-host network at 100G. A flow's receiver keeps a bit per packet once a packet arrives
/// out of order, so this bounds those bitmaps to 1.25 GB.
const MAX_TRAFFIC_PACKETS: u64 = 10_000_000_000;
use pipelines::time::Time;
use std::collections::{BTreeMap, VecDeque};

impl<'o> Net<'o> {
    /// Build the network run by `network`'s chips and hosts: hosts, flows with their ideal
    /// FCTs, captures and sampled series; `observer` sees its progress and captures.
    pub fn build(network: Network, observer: Box<dyn Observer + 'o>) -> Result<Net<'o>, String> {
        let Network {
            name,
            seed,
            topology: topo,
            mut chips,
            control,
            transport,
            mtu,
            traffic,
            stop,
            sample_period_ns,
            captures,
            hol_check,
            flow_groups,
        } = network;
        if chips.len() != topo.spec.chips.len() {
            return Err(format!(
                "{} chips built for a topology of {}",
                chips.len(),
                topo.spec.chips.len()
            ));
        }
        if !(20 + 8 + packet::TRANSPORT_HEADER_BYTES + 1..=9000).contains(&mtu) {
            return Err(format!("mtu: {mtu} must be between 61 and 9000"));
        }
        // Links: ports exist and rates match.
        for (i, l) in topo.links.iter().enumerate() {
            let ls = &topo.spec.links[i];
            for e in [l.a, l.b] {
                if let End::Chip(c, p) = e {
                    match chips[c].port_gbps(p) {
                        None => {
                            return Err(format!(
                                "link {} - {}: chip `{}` has no port {p} (ports 0 to {})",
                                ls.a,
                                ls.b,
                                topo.spec.chips[c].name,
                                chips[c].port_count() - 1
                            ))
                        }
                        Some(g) if g != l.gbps => {
                            return Err(format!(
                                "link {} - {}: {} Gb/s, but port {p} of `{}` runs at {g} Gb/s",
                                ls.a, ls.b, l.gbps, topo.spec.chips[c].name
                            ))
                        }
                        _ => {}
                    }
                }
            }
        }
        let nodes = topo.spec.chips.len() + topo.spec.hosts.len();
        if nodes >= super::part::MAX_NODES {
            return Err(format!(
                "the topology has {nodes} chips and hosts; a network may have at most {}",
                super::part::MAX_NODES - 1
            ));
        }
        // A zero period would sample forever at one instant.
        let sample_period = match sample_period_ns {
            Some(0) => return Err("sample_period_ns: must be greater than 0".into()),
            Some(ns) => Some(Time::from_input_ns(ns, "sample_period_ns")?),
            None => None,
        };
        if hol_check.is_some() && sample_period.is_none() {
            return Err(
                "hol_check: needs sample_period_ns, the instants at which it looks at the queues"
                    .into(),
            );
        }
        let stop_at = match stop.at_ns {
            Some(ns) => Some(Time::from_input_ns(ns, "stop.at_ns")?),
            None => None,
        };
        // A chip that wakes itself forever keeps the run from running out of events: it
        // needs an end time (whether the flows complete cannot be known before).
        if stop_at.is_none() {
            if let Some((c, what)) = chips
                .iter()
                .enumerate()
                .find_map(|(c, chip)| Some((c, chip.endless_events()?)))
            {
                return Err(format!(
                    "stop.at_ns: chip `{}` has {what}, so the run would never run out of \
                     events; give the run an end time",
                    topo.spec.chips[c].name
                ));
            }
        }
        let mss = packet::mss(mtu) as u32;
        let mut hosts = Vec::new();
        for (h, hs) in topo.spec.hosts.iter().enumerate() {
            let l = topo.host_link[h];
            let link = topo.links[l];
            let peer = topo.peer(l, End::Host(h));
            let nq = hs.nic_queues as usize;
            hosts.push(Host {
                name: hs.name.clone(),
                ip: topo.host_ips[h],
                mac: topo.mac(End::Host(h)),
                gbps: link.gbps,
                delay_ps: link.delay_ps,
                peer,
                peer_mac: topo.mac(peer),
                busy_until: Time::ZERO,
                tx_scheduled: false,
                class_paused_until: [Time::ZERO; 8],
                class_paused: [false; 8],
                queue_paused: vec![false; nq],
                group_paused: BTreeMap::new(),
                held: Vec::new(),
                ctrl: Default::default(),
                queues: (0..nq).map(|_| VecDeque::new()).collect(),
                rr: [0; 8],
                pulls: VecDeque::new(),
                pull_next_at: Time::ZERO,
                pull_scheduled: false,
                packets_sent: 0,
                packets_received: 0,
                capture: None,
            });
        }
        let names: Vec<String> = hosts.iter().map(|h| h.name.clone()).collect();
        let gbps: Vec<u32> = hosts.iter().map(|h| h.gbps).collect();
        let specs = traffic::expand(
            &traffic,
            &HostInfo {
                names: &names,
                gbps: &gbps,
            },
            &transport,
            seed,
        )?;
        let mut path_cache: BTreeMap<(usize, usize), Vec<Hop>> = BTreeMap::new();
        let mut flows = Vec::with_capacity(specs.len());
        let mut total_packets = 0u64;
        // The k-th flow a host sends goes to its class's data queue k mod (queues per class).
        let mut sent_by_host = vec![0u64; topo.spec.hosts.len()];
        for f in specs.into_iter() {
            let hops = match path_cache.get(&(f.src, f.dst)) {
                Some(h) => h.clone(),
                None => {
                    let path = topo.path(f.src, f.dst).ok_or_else(|| {
                        format!(
                            "traffic[{}]: no path from `{}` to `{}`",
                            f.source, names[f.src], names[f.dst]
                        )
                    })?;
                    // (delay, rate, latency of the chip at the link's far end).
                    let mut at = End::Host(f.src);
                    let hops: Vec<Hop> = path
                        .iter()
                        .map(|&l| {
                            let far = topo.peer(l, at);
                            at = far;
                            let lat = match far {
                                End::Chip(c, _) => {
                                    let ch = &chips[c];
                                    ch.clock()
                                        .time_of(
                                            ch.ingress_latency_cycles()
                                                + ch.egress_latency_cycles(),
                                        )
                                        .ps()
                                }
                                End::Host(_) => 0,
                            };
                            (topo.links[l].delay_ps, topo.links[l].gbps, lat)
                        })
                        .collect();
                    path_cache.insert((f.src, f.dst), hops.clone());
                    hops
                }
            };
            let packets = f.size.div_ceil(mss as u64);
            total_packets += packets;
            if packets > u32::MAX as u64 {
                return Err(format!(
                    "traffic[{}]: a flow of {} bytes is {packets} packets at this MSS ({mss} \
                     bytes); a flow may have at most {}",
                    f.source,
                    f.size,
                    u32::MAX
                ));
            }
            if total_packets > MAX_TRAFFIC_PACKETS {
                return Err(format!(
                    "traffic[{}]: the flows up to this one make {total_packets} packets at this \
                     MSS ({mss} bytes); a run may have at most {MAX_TRAFFIC_PACKETS}, as a \
                     flow's receiver may keep a bit per packet",
                    f.source
                ));
            }
            let shape = Shape::new(f.size, mss);
            let ideal = ideal_fct(&hops, shape);
            let nq = topo.spec.hosts[f.src].nic_queues;
            let queue = nic_queue_for(sent_by_host[f.src], f.class, nq);
            sent_by_host[f.src] += 1;
            let pull_gap = match &*f.transport {
                TransportSpec::Ndp(n) => n.pull_gap(
                    packet::data_frame_len(mss as usize),
                    packet::HEADER_BYTES,
                    hosts[f.dst].gbps,
                ),
                _ => Time::ZERO,
            };
            let mut flow = Flow::new(f, shape, queue, pull_gap, ideal);
            if let Some(groups) = &flow_groups {
                let s = &flow.spec;
                flow.groups = groups(s.src, s.dst, flows.len() as u64).into();
            }
            flows.push(flow);
        }
        // Captures.
        let mut chip_captures: Vec<BTreeMap<u16, usize>> = vec![BTreeMap::new(); chips.len()];
        for (i, pc) in captures.iter().enumerate() {
            if let Some(h) = names.iter().position(|n| *n == pc.node) {
                if pc.port != 0 {
                    return Err(format!("pcaps[{i}]: host `{}` has only port 0", pc.node));
                }
                hosts[h].capture = Some(i);
            } else if let Some(c) = topo.spec.chips.iter().position(|c| c.name == pc.node) {
                if pc.port >= chips[c].port_count() {
                    return Err(format!(
                        "pcaps[{i}]: chip `{}` has no port {}",
                        pc.node, pc.port
                    ));
                }
                chip_captures[c].insert(pc.port, i);
            } else {
                return Err(format!("pcaps[{i}]: no node named `{}`", pc.node));
            }
        }
        let samples = if sample_period_ns.is_some() {
            sample::chip_series(&topo, &chips)
        } else {
            Vec::new()
        };
        let ip_to_host = topo
            .host_ips
            .iter()
            .enumerate()
            .map(|(h, &ip)| (ip, h))
            .collect();
        let mut pending = Vec::new();
        let mut control_names = vec![Vec::new(); chips.len()];
        for c in control {
            if c.chip >= chips.len() {
                return Err(format!(
                    "control operation on chip {}, but the network has {}",
                    c.chip,
                    chips.len()
                ));
            }
            let mut q = Pending {
                v: &mut pending,
                chip: c.chip as u16,
            };
            chips[c.chip].schedule_control(c.at, c.op, &mut q);
            control_names[c.chip].push(c.name);
        }
        Ok(Net {
            name,
            topo,
            chips,
            hosts,
            flows,
            pending,
            chip_captures,
            observer,
            ip_to_host,
            samples,
            sample_period,
            hol_check,
            stop_at,
            stop_when_complete: stop.when_flows_complete,
            lockstep: false,
            threads: 1,
            hold: true,
            control_names,
        })
    }
}
