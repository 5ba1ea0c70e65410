//! PISA FB (§5.1 of the FB paper): Flexible Buffer approximated by programs/fb/fb_pisa.p4 in
//! the match-action pipeline, over the TM's Dynamic Threshold. This module makes what the
//! program's control plane installs on one chip:
//!
//! - the tracked queues: every queue in use of every connected front port, numbered
//!   `port_index × queues + q` (`port_index` the port's rank among the chip's connected
//!   ports); `fb_queue` (ingress) and, when SYNCs read the egress copy, `eg_queue` (egress)
//!   map a packet's port and queue to that number;
//! - `sync_queue`: for each tracked queue, the elements a SYNC pass at it updates, the port
//!   and queue a Tofino 2 reads the depth of, the walk's next queue and the pipe's
//!   recirculation port; one walk covers every tracked queue, one pass per queue;
//! - `shift`: for each α class, N_Port, N_Priority and whether the packet's own queue is empty,
//!   the shift `n` with `2^-n` the largest power of two at most FB's `α · γ / N_p`,
//!   `γ = 1/N_Port` (round robin among the port's non-empty queues), clamped to
//!   [`SHIFT_MIN`, `SHIFT_MAX`] (the program's `shl5` .. `shr8`). Rounding down keeps the
//!   threshold within (½, 1] of FB's, so that on fresh copies the TM's DT underneath, with
//!   the class's own α (FB's threshold with γ = N_p = 1), never refuses first;
//! - `remaining` starts at B, the shared pool's cells;
//! - a packet-generator application on the ports' pipe that starts a walk every period.
//!
//! The copies live in one pipe's registers, so every connected port must be in one pipe (the
//! paper's testbed uses three ports of one Wedge 100BF-32X pipe).

use asic_model::chip::{ChipConfig, PktGenApp};
use asic_model::profile::ChipProfile;
use pipelines::control::ControlOp;
use pipelines::entries::{EntrySpec, KeySpec, RegisterWrite, Value};
use serde::{Deserialize, Serialize};

/// The SYNC frame's EtherType (the program's `ETHERTYPE_SYNC`).
const ETHERTYPE_SYNC: u16 = 0x88B6;
/// Bytes of a SYNC frame as generated (without FCS): Ethernet, the 8-byte `sync_h`, padded to
/// the 60-byte minimum.
const SYNC_BYTES: usize = 60;
/// The most right shift the program has (`shr8`: 1/256 of the remaining buffer).
pub const SHIFT_MAX: i32 = 8;
/// The most left shift the program has (`shl5`: 32 times the remaining buffer).
pub const SHIFT_MIN: i32 = -5;
/// Queues the program's registers and queue tables hold (`qlen_in`, `qlen_eg`: 1024).
const QUEUE_SLOTS: usize = 1024;
/// Ports `n_port` holds (64).
const PORT_SLOTS: usize = 64;
/// Entries the `shift` table holds (`size = 4096`).
const SHIFT_SIZE: usize = 4096;

/// Where a SYNC pass reads a queue's length.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Depths {
    /// Tofino 1: from the egress register every departing packet of the queue writes; the
    /// pass goes through the recirculation port's egress, then back to ingress.
    #[default]
    Egress,
    /// Tofino 2: from the depths the TM publishes to ingress (`QueueDepth`), which data
    /// packets read for their own queue too.
    Ingress,
}

/// PISA FB's parameters (RON: `buffer: Pisa((sync_period_ns: 20000, depths: Egress))`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pisa {
    /// A walk starts every `sync_period_ns` (the paper's "update interval").
    pub sync_period_ns: u64,
    /// Where a pass reads a queue's length.
    #[serde(default)]
    pub depths: Depths,
}

/// A tracked queue's class: its α (the `shift` key's α class is its index in the list the
/// deployment passes) and buffer priority.
pub struct QueueClass {
    pub alpha_class: u8,
    pub priority: u8,
}

/// The shift whose power of two `2^-n` is the largest at most `alpha / (n_port · n_prio)`,
/// clamped to what the program has. `n_port` and `n_prio` count at least 1 (FB counts the
/// queue a packet arrives at).
pub fn shift_for(alpha: f64, n_port: u32, n_prio: u32) -> i32 {
    let n = (n_port.max(1) as f64 * n_prio.max(1) as f64 / alpha).log2();
    // A ratio that is a power of two within rounding stays that power.
    ((n - 1e-9).ceil() as i32).clamp(SHIFT_MIN, SHIFT_MAX)
}

/// The name of the program's action for shift `n`.
fn shift_action(n: i32) -> String {
    if n >= 0 {
        format!("shr{n}")
    } else {
        format!("shl{}", -n)
    }
}

impl Pisa {
    /// The pipe the chip's connected front ports (`ports`, `queues` each) are in and its
    /// recirculation port, or why PISA FB cannot run there.
    fn placement(
        &self,
        prof: &ChipProfile,
        ports: &[u16],
        queues: usize,
    ) -> Result<(u16, u16), String> {
        let pipes: Vec<u16> = ports.iter().filter_map(|&p| prof.pipe_of_port(p)).collect();
        if let Some(i) = pipes.iter().position(|&p| p != pipes[0]) {
            return Err(format!(
                "fb.buffer: Pisa keeps its copies in one pipe's registers, but port {} is in \
                 pipe {} and port {} in pipe {}: connect the chip's ports within one pipe, or \
                 use buffer: Fb",
                ports[0], pipes[0], ports[i], pipes[i]
            ));
        }
        let pipe = pipes.first().copied().unwrap_or(0);
        let recirc = prof.recirc_port(pipe, 0).ok_or_else(|| {
            format!(
                "fb.buffer: Pisa recirculates its SYNC packets, and chip profile `{}` has no \
                 recirculation port",
                prof.name
            )
        })?;
        let tracked = ports.len() * queues;
        if tracked > QUEUE_SLOTS || ports.len() > PORT_SLOTS {
            return Err(format!(
                "fb.buffer: Pisa tracks {tracked} queues ({} ports x {queues}); the program's \
                 registers hold {QUEUE_SLOTS} queues of {PORT_SLOTS} ports",
                ports.len()
            ));
        }
        Ok((pipe, recirc))
    }

    /// Entries, control operations and the packet generator for a chip whose connected front
    /// ports are `ports`, with `classes[q]` the class of queue `q` and `alphas[c]` the α of
    /// class `c`; the shared pool has `pool_cells`. Refused where the ports span pipes, the
    /// chip has no recirculation port, or the program's registers are too small.
    pub fn deploy(
        &self,
        prof: &ChipProfile,
        ports: &[u16],
        classes: &[QueueClass],
        alphas: &[f64],
        pool_cells: u32,
        config: &mut ChipConfig,
    ) -> Result<(Vec<EntrySpec>, Vec<ControlOp>), String> {
        let nq = classes.len();
        let (pipe, recirc) = self.placement(prof, ports, nq)?;
        let ghost = (self.depths == Depths::Ingress) as u64;
        let int = |v: u64| Value::Int(v);
        let tracked = ports.len() * nq;
        let mut entries = Vec::new();
        for (pi, &port) in ports.iter().enumerate() {
            for (q, class) in classes.iter().enumerate() {
                let index = (pi * nq + q) as u64;
                let port_key = vec![
                    KeySpec::Exact(int(port as u64)),
                    KeySpec::Exact(int(q as u64)),
                ];
                entries.push(EntrySpec::new(
                    "fb_queue",
                    port_key.clone(),
                    "set_queue",
                    vec![
                        int(index),
                        int(pi as u64),
                        int(class.priority as u64),
                        int(class.alpha_class as u64),
                        int(ghost),
                    ],
                    0,
                ));
                if self.depths == Depths::Egress {
                    entries.push(EntrySpec::new(
                        "eg_queue",
                        port_key,
                        "set_eg_queue",
                        vec![int(index)],
                        0,
                    ));
                }
                let last = index as usize + 1 == tracked;
                entries.push(EntrySpec::new(
                    "sync_queue",
                    vec![KeySpec::Exact(int(index))],
                    "sync_at",
                    vec![
                        int(pi as u64),
                        int(class.priority as u64),
                        int(port as u64),
                        int(q as u64),
                        int(if last { 0 } else { index + 1 }),
                        int(last as u64),
                        int(recirc as u64),
                    ],
                    0,
                ));
            }
        }
        entries.extend(shift_entries(ports.len(), classes, alphas)?);
        let control = vec![ControlOp::WriteRegister(RegisterWrite {
            register: "remaining".into(),
            index: 0,
            value: int(pool_cells as u64),
        })];
        let mut template = vec![0u8; SYNC_BYTES];
        template[12..14].copy_from_slice(&ETHERTYPE_SYNC.to_be_bytes());
        template[14] = ghost as u8;
        config.pktgen.push(PktGenApp {
            pipe,
            template,
            period_ns: Some(self.sync_period_ns),
            start_ns: 0,
            count: None,
            at_ns: Vec::new(),
        });
        Ok((entries, control))
    }
}

/// The `shift` table: every (α class, N_Port, N_Priority, own queue empty) the copies can
/// show, N_Port up to the queues per port and N_Priority up to the tracked queues of the
/// priority.
fn shift_entries(
    ports: usize,
    classes: &[QueueClass],
    alphas: &[f64],
) -> Result<Vec<EntrySpec>, String> {
    let nq = classes.len() as u32;
    let mut entries = Vec::new();
    for (c, &alpha) in alphas.iter().enumerate() {
        let Some(priority) = classes
            .iter()
            .find(|q| q.alpha_class as usize == c)
            .map(|q| q.priority)
        else {
            continue;
        };
        let in_priority = classes.iter().filter(|q| q.priority == priority).count() * ports;
        for n_port in 0..=nq {
            for n_prio in 0..=in_priority as u32 {
                for empty in 0..2u32 {
                    let n = shift_for(alpha, n_port + empty, n_prio + empty);
                    entries.push(EntrySpec::new(
                        "shift",
                        [c as u64, n_port as u64, n_prio as u64, empty as u64]
                            .into_iter()
                            .map(|v| KeySpec::Exact(Value::Int(v)))
                            .collect(),
                        &shift_action(n),
                        Vec::new(),
                        0,
                    ));
                }
            }
        }
    }
    if entries.len() > SHIFT_SIZE {
        return Err(format!(
            "fb.buffer: Pisa's shift table needs {} entries for {ports} ports and {nq} queues \
             a port; the program's holds {SHIFT_SIZE}",
            entries.len()
        ));
    }
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shifts_are_the_nearest_power_of_two_in_log() {
        // α 0.5, one queue: 2^-1 exactly.
        assert_eq!(shift_for(0.5, 1, 1), 1);
        // α 20: 2^4 ≤ 20 < 2^5, a left shift.
        assert_eq!(shift_for(20.0, 1, 1), -4);
        // α 0.8: 2^-1.
        assert_eq!(shift_for(0.8, 1, 1), 1);
        // α 0.6, 3 queues on the port, 7 in the priority: 1/35 → 2^-6 (log2 35 = 5.13).
        assert_eq!(shift_for(0.6, 3, 7), 6);
        // Clamped at the program's shr8 and shl5.
        assert_eq!(shift_for(0.5, 8, 400), SHIFT_MAX);
        assert_eq!(shift_for(10_000.0, 1, 1), SHIFT_MIN);
        // A count of 0 reads as 1.
        assert_eq!(shift_for(1.0, 0, 0), 0);
    }

    #[test]
    fn within_half_of_fb_and_never_above() {
        for alpha in [0.5, 0.6, 0.8, 2.0, 20.0] {
            for n_port in 1..=8 {
                for n_prio in 1..=64 {
                    let n = shift_for(alpha, n_port, n_prio);
                    if n == SHIFT_MIN || n == SHIFT_MAX {
                        continue;
                    }
                    let exact = alpha / (n_port * n_prio) as f64;
                    let ratio = 2f64.powi(-n) / exact;
                    assert!(
                        ratio > 0.5 && ratio <= 1.0 + 1e-12,
                        "α {alpha}, {n_port}, {n_prio}: 2^-{n} is {ratio} of {exact}"
                    );
                }
            }
        }
    }
}
