//! Sampled series: every connected chip port's depth and transmit bytes, each chip's buffer,
//! its pipes' occupancy and recirculation load, and each queue's depth from the first time it
//! holds cells (a port may have 128 queues; most stay empty). A series records a point only
//! when its value changes.

use super::part::Part;
use crate::network::HolCheck;
use crate::packet;
use crate::records::{CongestedPort, FlowKey, PausedQueue, QueueSnapshots, Series};
use crate::topology::Topology;
use asic_model::chip::Chip;
use pipelines::time::Time;
use std::collections::BTreeMap;

/// A series being recorded and its last value.
pub(crate) struct SeriesState {
    pub(crate) series: Series,
    last: Option<f64>,
}

impl SeriesState {
    fn new(name: String, unit: &str) -> SeriesState {
        SeriesState {
            series: Series {
                name,
                unit: unit.into(),
                points: Vec::new(),
            },
            last: None,
        }
    }

    /// Record `v` at `now` if it differs from the last value.
    fn push(&mut self, now: Time, v: f64) {
        if self.last != Some(v) {
            self.series.points.push((now.ps(), v));
            self.last = Some(v);
        }
    }
}

/// The series of each chip, in the order [`Part::sample`] fills them.
pub(super) fn chip_series(topo: &Topology, chips: &[Chip]) -> Vec<Vec<SeriesState>> {
    let mut all = Vec::new();
    for (c, ports) in topo.chip_ports.iter().enumerate() {
        let mut samples = Vec::new();
        let n = &topo.spec.chips[c].name;
        samples.push(SeriesState::new(format!("{n}.buffer_cells"), "cells"));
        // Pipeline occupancy (packets between issue and deparser exit) per pipe and gress,
        // and the recirculation load (packets sent back into ingress so far).
        for pipe in 0..chips[c].profile().pipes {
            for gress in ["ingress", "egress"] {
                samples.push(SeriesState::new(
                    format!("{n}.pipe{pipe}.{gress}_occupancy"),
                    "packets",
                ));
            }
        }
        samples.push(SeriesState::new(format!("{n}.recirculated"), "packets"));
        for &p in ports.keys() {
            samples.push(SeriesState::new(
                format!("{n}.port{p}.depth_cells"),
                "cells",
            ));
            samples.push(SeriesState::new(format!("{n}.port{p}.tx_bytes"), "bytes"));
        }
        all.push(samples);
    }
    all
}

impl Part {
    /// Take every sample due at or before `t`: the state then is the state now, as every
    /// event before `t` has run and none at or after it (a sample at `t` sees the chips
    /// before the events at `t`).
    #[inline]
    pub(super) fn sample_before(&mut self, t: Time) {
        while self.next_sample <= t {
            let s = self.next_sample;
            self.sample(s);
            let period = self
                .sh
                .sample_period
                .expect("next_sample is set when sampling");
            self.next_sample = s + period;
        }
    }

    /// Sample this partition's chips at `now`.
    pub(super) fn sample(&mut self, now: Time) {
        let sh = &*self.sh;
        for &c in &self.own_chips {
            let chip = self.chips[c].as_ref().expect("own");
            let samples = &mut self.samples[c];
            let mut k = 0;
            let v = chip.tm().used_cells() as f64;
            samples[k].push(now, v);
            k += 1;
            for pipe in 0..chip.profile().pipes {
                let (ig, eg) = chip.pipe_occupancy(pipe);
                samples[k].push(now, ig as f64);
                samples[k + 1].push(now, eg as f64);
                k += 2;
            }
            let recirculated = chip.plumbing_counters().recirculated as f64;
            samples[k].push(now, recirculated);
            k += 1;
            let node = &sh.topo.spec.chips[c].name;
            let queues = &mut self.queue_samples[c];
            for &p in sh.topo.chip_ports[c].keys() {
                let d = chip.tm().port_depth_cells(p) as f64;
                samples[k].push(now, d);
                // Cumulative data bytes (no preamble, FCS or gap) on the wire by now, a frame's
                // spread over its slot: the report derives rates over a window much longer
                // than a frame time, and they never exceed the line rate.
                let tx = chip.tx_bytes_on_wire(p, now);
                samples[k + 1].push(now, tx as f64);
                k += 2;
                sample_queues(chip, node, queues, p, self.last_sample, now);
            }
            if let Some(h) = sh.hol_check {
                let ports = sh.topo.chip_ports[c].keys().copied();
                snapshot(
                    chip,
                    c as u32,
                    ports,
                    now,
                    h,
                    &sh.ip_to_host,
                    &mut self.snapshots,
                );
            }
            // The recirculation ports' queues too (a deflect-on-drop queue, recirculated
            // records): they have no link, so no port series of their own.
            let prof = chip.profile();
            for pipe in 0..prof.pipes {
                for r in 0..prof.recirculation.ports_per_pipe {
                    if let Some(p) = prof.recirc_port(pipe, r) {
                        sample_queues(chip, node, queues, p, self.last_sample, now);
                    }
                }
            }
        }
        self.snapshots.samples += 1;
        self.last_sample = now;
    }
}

/// `chip`'s (index `c`) queues at `now` on its connected `ports`, as `hol_check` records
/// them: each paused queue holding packets, with the flows of the hosts' packets in it (a
/// program's own records and control frames are not flows), and each port with an
/// unpaused queue at least `h.congested_cells` deep.
fn snapshot(
    chip: &Chip,
    c: u32,
    ports: impl Iterator<Item = u16>,
    now: Time,
    h: HolCheck,
    ip_to_host: &BTreeMap<u32, usize>,
    out: &mut QueueSnapshots,
) {
    let tm = chip.tm();
    for port in ports {
        let mut congested = false;
        for queue in 0..tm.spec().queues_per_port {
            let cells = tm.depth(port, queue).0;
            if cells == 0 {
                continue;
            }
            if !tm.is_paused(port, queue, now.ps()) {
                congested |= cells >= h.congested_cells;
                continue;
            }
            let mut flows: Vec<FlowKey> = chip
                .queued_packets(port, queue)
                .filter_map(|bytes| {
                    let f = packet::frame_in(bytes)?;
                    Some(FlowKey {
                        src: *ip_to_host.get(&f.src_ip)? as u32,
                        dst: *ip_to_host.get(&f.dst_ip)? as u32,
                        flow_id: f.flow_id,
                    })
                })
                .collect();
            flows.sort_unstable();
            flows.dedup();
            out.paused.push(PausedQueue {
                time_ps: now.ps(),
                chip: c,
                port,
                queue,
                flows,
            });
        }
        if congested {
            out.congested.push(CongestedPort {
                time_ps: now.ps(),
                chip: c,
                port,
            });
        }
    }
}

/// Each queue of `chip`'s port `p` (named `node`), from the first sample at which it holds
/// cells: its series starts at 0 at the sample before, `prev`. `queues` is the chip's table
/// of queue series.
fn sample_queues(
    chip: &Chip,
    node: &str,
    queues: &mut [Option<Box<SeriesState>>],
    p: u16,
    prev: Time,
    now: Time,
) {
    let tm = chip.tm();
    let qpp = tm.spec().queues_per_port;
    for q in 0..qpp {
        let cells = tm.depth(p, q).0 as f64;
        // A port the TM does not have holds nothing.
        let Some(slot) = queues.get_mut(p as usize * qpp as usize + q as usize) else {
            continue;
        };
        if cells == 0.0 && slot.is_none() {
            continue;
        }
        slot.get_or_insert_with(|| {
            let mut s = SeriesState::new(format!("{node}.port{p}.q{q}.depth_cells"), "cells");
            s.push(prev, 0.0);
            Box::new(s)
        })
        .push(now, cells);
    }
}
