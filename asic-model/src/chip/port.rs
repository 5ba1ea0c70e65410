//! A port of the chip and what it is made of: its MAC's receive and transmit timing
//! ([`Mac`]), the TM's pacing of its dequeues ([`DequeuePacer`]), the egress FIFO between the
//! TM and the MAC ([`EgressFifo`]), its PFC state ([`PortPfc`]) and its counters.
//!
//! Every part is kept inline in the port (no box, no lookup): the life of a packet reads and
//! writes several of them per packet. Each part's rules are in its own module.

use super::egress_fifo::EgressFifo;
use super::mac::Mac;
use super::pacer::DequeuePacer;
use super::pfc::PortPfc;
use super::{Chip, ChipError, PortSpeed};
use crate::profile::ChipProfile;
use pipelines::time::Time;

/// What a port is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum PortKind {
    /// A front-panel port with a MAC on the wire.
    Front,
    /// A recirculation port: what it transmits comes back into its pipe's ingress.
    Recirc,
    /// A packet-generator port: a source of ingress packets only.
    PktGen,
}

/// One port: front-panel, recirculation or packet generator.
pub(super) struct Port {
    pub(super) kind: PortKind,
    /// Line rate, Gb/s, what its framing, pacing and PFC quanta and refresh are timed at: a
    /// front-panel port's is the speed it was brought up at
    /// ([`super::ChipConfig::port_speeds`]) or its port group's, a recirculation port's the
    /// profile's recirculation speed (a generator port has none: its packets never cross a
    /// MAC).
    pub(super) gbps: u32,
    /// The pipe the port belongs to.
    pub(super) pipe: u16,
    pub(super) mac: Mac,
    pub(super) pacer: DequeuePacer,
    pub(super) fifo: EgressFifo,
    pub(super) pfc: PortPfc,
    pub(super) counters: PortCounters,
}

impl Port {
    /// A port of `kind` in `pipe` at `gbps`, idle, whose egress FIFO holds `fifo_packets`.
    pub(super) fn new(kind: PortKind, gbps: u32, pipe: u16, fifo_packets: u32) -> Port {
        Port {
            kind,
            gbps,
            pipe,
            mac: Mac::default(),
            pacer: DequeuePacer::default(),
            fifo: EgressFifo::new(fifo_packets),
            pfc: PortPfc::default(),
            counters: PortCounters::default(),
        }
    }
}

/// Every port of a chip built to `profile`, in id order (front-panel, recirculation, packet
/// generator; see `plumbing.rs`), and how many are front-panel. A front-panel port runs at its
/// speed in `speeds` if it is there, else at its profile speed; anything in `speeds` that is
/// not a distinct front-panel port at 1 Gb/s up to its profile speed is refused, named.
pub(super) fn ports(
    profile: &ChipProfile,
    speeds: &[PortSpeed],
) -> Result<(Vec<Port>, u16), ChipError> {
    let fifo = profile.plumbing.egress_fifo_packets;
    let mut ports = Vec::new();
    for pipe in 0..profile.pipes {
        for g in &profile.ports_per_pipe {
            for _ in 0..g.count {
                ports.push(Port::new(PortKind::Front, g.speed_gbps, pipe, fifo));
            }
        }
    }
    let front = ports.len() as u16;
    let rec = &profile.recirculation;
    for pipe in 0..profile.pipes {
        for _ in 0..rec.ports_per_pipe {
            ports.push(Port::new(PortKind::Recirc, rec.speed_gbps, pipe, fifo));
        }
    }
    for pipe in 0..profile.pipes {
        // Generated packets never cross a MAC; the speed is not used.
        ports.push(Port::new(PortKind::PktGen, 0, pipe, fifo));
    }
    let bad = |s: String| Err(ChipError::Config(format!("port_speeds: {s}")));
    let fronts = || format!("front-panel ports are 0 to {}", front.saturating_sub(1));
    let mut set = vec![false; front as usize];
    for &PortSpeed { port, gbps } in speeds {
        let Some(p) = ports.get_mut(port as usize) else {
            return bad(format!("the chip has no port {port} ({})", fronts()));
        };
        let what = match p.kind {
            PortKind::Front => None,
            PortKind::Recirc => Some("a recirculation port"),
            PortKind::PktGen => Some("a packet-generator port"),
        };
        if let Some(what) = what {
            return bad(format!(
                "port {port} is {what}; only front-panel ports are brought up at a speed ({})",
                fronts()
            ));
        }
        if std::mem::replace(&mut set[port as usize], true) {
            return bad(format!("port {port} is brought up twice"));
        }
        let max = p.gbps;
        if gbps == 0 || gbps > max {
            return bad(format!(
                "port {port} at {gbps} Gb/s: it runs at 1 to {max} Gb/s (its profile speed)"
            ));
        }
        p.gbps = gbps;
    }
    Ok((ports, front))
}

impl Chip {
    /// Number of front-panel ports (ids `0..port_count()`; recirculation and
    /// packet-generator ports follow).
    pub fn port_count(&self) -> u16 {
        self.front
    }

    /// Line rate of a front-panel port in Gb/s: the speed it was brought up at
    /// ([`super::ChipConfig::port_speeds`]), else its profile speed.
    pub fn port_gbps(&self, port: u16) -> Option<u32> {
        (port < self.front).then(|| self.ports[port as usize].gbps)
    }

    /// Counters of a port.
    pub fn port_counters(&self, port: u16) -> &PortCounters {
        &self.ports[port as usize].counters
    }

    /// The data bytes `port` has put on the wire by `now`: its `tx_bytes`, less what of the
    /// frames its MAC holds has not gone out yet (a frame's bytes spread evenly over its
    /// slot). A rate measured from it over any window is at most the line rate.
    pub fn tx_bytes_on_wire(&self, port: u16, now: Time) -> u64 {
        let p = &self.ports[port as usize];
        p.counters.tx_bytes - p.mac.unsent_bytes(now)
    }
}

/// Per-port traffic counters. Packet and byte counts are of data frames (the ones that go
/// through the pipes); MAC control frames, which the MAC makes and consumes, are counted
/// apart.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PortCounters {
    /// Frames received.
    pub rx_packets: u64,
    /// Bytes received (no FCS).
    pub rx_bytes: u64,
    /// Frames transmitted.
    pub tx_packets: u64,
    /// Bytes transmitted (no FCS).
    pub tx_bytes: u64,
    /// PFC frames sent when the priority entered XOFF, per priority.
    pub pfc_xoff_tx: [u64; 8],
    /// PFC frames re-sent while the priority stayed in XOFF, per priority.
    pub pfc_refresh_tx: [u64; 8],
    /// PFC frames with quanta 0 sent when the priority fell below XON, per priority.
    pub pfc_xon_tx: [u64; 8],
    /// PFC frames received (consumed by the MAC).
    pub pfc_rx: u64,
    /// Other MAC control frames received (802.3x PAUSE, unknown opcodes, PFC frames too
    /// short to decode): consumed by the MAC without effect.
    pub mac_control_other_rx: u64,
    /// Drops of packets that arrived on this port.
    pub drops: u64,
    /// Start of the first frame transmitted.
    pub first_tx: Option<Time>,
    /// Start of the last frame transmitted.
    pub last_tx: Option<Time>,
}

impl PortCounters {
    /// PFC frames sent on the port (every priority, XOFF, refresh and XON).
    pub fn pfc_tx(&self) -> u64 {
        (0..8)
            .map(|p| self.pfc_xoff_tx[p] + self.pfc_refresh_tx[p] + self.pfc_xon_tx[p])
            .sum()
    }
}
