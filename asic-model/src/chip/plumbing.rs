//! The chip's plumbing: recirculation ports, deflect-on-drop, mirror sessions and multicast
//! groups (their configuration checked and indexed by id), mirror and multicast copies, and
//! [`PlumbingCounters`].
//!
//! Apart from the life of a packet because these are the paths by which a packet is copied,
//! looped back or redirected inside the chip; the packet path itself calls into them. The
//! rules (port ids, conservation) are in the parent module's comment.

use super::{Chip, ChipConfig, ChipError, ChipEvent, MirrorSession, Port, PortKind};
use crate::kernel::Schedule;
use crate::profile::ChipProfile;
use pipelines::pipe::TmRequests;
use pipelines::time::Time;

/// Counters of the chip's plumbing. Conservation: front-panel packets in + `created()` =
/// front-panel packets out + drops.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PlumbingCounters {
    /// Packets sent out of a recirculation port back into ingress.
    pub recirculated: u64,
    /// Packets the TM refused and the chip deflected to the deflect-on-drop port (and the
    /// TM accepted there).
    pub deflected: u64,
    /// Mirror copies made (ingress and egress).
    pub mirror_copies: u64,
    /// Mirror requests naming a session the configuration does not have (no copy).
    pub mirror_unknown_session: u64,
    /// Multicast copies made beyond the original (a group of `n` members adds `n − 1`).
    pub mcast_copies: u64,
    /// Packets made by the packet generator.
    pub generated: u64,
    /// Advanced-flow-control requests accepted (each reaches the TM after the latency).
    pub afc_requests: u64,
    /// Advanced-flow-control requests ignored: `qfc` bit clear, or no such port or queue.
    pub afc_invalid: u64,
}

impl PlumbingCounters {
    /// Packets that came into being inside the chip.
    pub fn created(&self) -> u64 {
        self.mirror_copies + self.mcast_copies + self.generated
    }
}

pub(super) type MirrorTable = Vec<Option<MirrorSession>>;

pub(super) type McastTable = std::collections::HashMap<u16, Vec<(u16, u16)>>;

/// Check the plumbing configuration against the chip; index sessions and groups by id.
pub(super) fn check_plumbing(
    profile: &ChipProfile,
    config: &ChipConfig,
    front: u16,
    ports: &[Port],
) -> Result<(MirrorTable, McastTable), ChipError> {
    let bad = |s: String| Err(ChipError::Config(s));
    let is_dest = |p: u16| {
        ports
            .get(p as usize)
            .is_some_and(|p| p.kind != PortKind::PktGen)
    };
    let qpp = profile.tm.queues_per_port;
    let max = profile.plumbing.mirror_sessions;
    let mut mirror: MirrorTable = vec![None; max as usize];
    for s in &config.mirror_sessions {
        if s.id == 0 || s.id >= max {
            return bad(format!(
                "mirror session {}: ids are 1 to {} on this chip",
                s.id,
                max.saturating_sub(1)
            ));
        }
        if !is_dest(s.port) || s.queue >= qpp {
            return bad(format!(
                "mirror session {}: no port {} queue {} to send copies to",
                s.id, s.port, s.queue
            ));
        }
        if mirror[s.id as usize].replace(*s).is_some() {
            return bad(format!("mirror session {} is configured twice", s.id));
        }
    }
    let mut mcast = McastTable::new();
    for g in &config.mcast_groups {
        if g.id == 0 {
            return bad("multicast group 0 means \"no group\"".into());
        }
        if g.members.is_empty() {
            return bad(format!("multicast group {} has no members", g.id));
        }
        if let Some(&(p, _)) = g.members.iter().find(|(p, _)| !is_dest(*p)) {
            return bad(format!("multicast group {}: no port {p}", g.id));
        }
        if mcast.insert(g.id, g.members.clone()).is_some() {
            return bad(format!("multicast group {} is configured twice", g.id));
        }
    }
    if let Some(d) = &config.dod {
        match d.port {
            Some(p) if !is_dest(p) => return bad(format!("deflect-on-drop: no port {p}")),
            None if profile.recirculation.ports_per_pipe == 0 => {
                return bad(
                    "deflect-on-drop: no port given and the chip has no recirculation port".into(),
                )
            }
            _ => {}
        }
        if d.queue >= qpp {
            return bad(format!("deflect-on-drop: no queue {}", d.queue));
        }
    }
    if config.pktgen.len() > profile.plumbing.pktgen_apps as usize {
        return bad(format!(
            "{} packet-generator applications; the chip has {}",
            config.pktgen.len(),
            profile.plumbing.pktgen_apps
        ));
    }
    for (i, a) in config.pktgen.iter().enumerate() {
        if a.pipe >= profile.pipes {
            return bad(format!("packet generator {i}: no pipe {}", a.pipe));
        }
        if a.period_ns == Some(0) {
            return bad(format!(
                "packet generator {i}: the period must be greater than 0"
            ));
        }
        if a.template.is_empty() {
            return bad(format!("packet generator {i}: empty template"));
        }
    }
    if !config.pktgen.is_empty() && ports.len() > crate::profile::MAX_PORTS as usize {
        return bad(format!(
            "the packet-generator ports would need ids up to {}; port ids are 9 bits",
            ports.len() - 1
        ));
    }
    let _ = front;
    Ok((mirror, mcast))
}

impl Chip {
    /// The id of recirculation port `r` of `pipe` ([`ChipProfile::recirc_port`]).
    pub fn recirc_port(&self, pipe: u16, r: u16) -> Option<u16> {
        self.profile.recirc_port(pipe, r)
    }

    /// Counters of recirculation, deflection, mirroring, multicast, the packet generator
    /// and advanced flow control.
    pub fn plumbing_counters(&self) -> &PlumbingCounters {
        &self.plumbing
    }

    /// A copy of `prefix` followed by packet `src`'s current bytes (at most `max_len` in
    /// all), with its ingress port and arrival time.
    pub(super) fn copy_packet(&mut self, src: u32, prefix: &[u8], max_len: usize) -> u32 {
        let c = self.packets.alloc();
        let data = std::mem::take(&mut self.packets.slots[src as usize].data);
        let s = &self.packets.slots[src as usize];
        let (ingress_port, rx_start) = (s.ingress_port, s.rx_start);
        let copy = &mut self.packets.slots[c as usize];
        let prefix = &prefix[..prefix.len().min(max_len)];
        copy.data.extend_from_slice(prefix);
        copy.data
            .extend_from_slice(&data[..data.len().min(max_len - prefix.len())]);
        copy.ingress_port = ingress_port;
        copy.rx_start = rx_start;
        self.packets.slots[src as usize].data = data;
        c
    }

    /// Mirror packet `h` (as it is now) to `session`: the program's mirror header, then
    /// the packet, truncated, enqueued to the session's port and queue as a packet of its
    /// own.
    pub(super) fn mirror(
        &mut self,
        now: Time,
        h: u32,
        r: &TmRequests,
        q: &mut impl Schedule<ChipEvent>,
    ) {
        let (session, trunc) = (r.mirror_session, r.mirror_truncate_bytes);
        let Some(s) = self.mirror.get(session as usize).copied().flatten() else {
            self.plumbing.mirror_unknown_session += 1;
            return;
        };
        let mut max = s.truncate_bytes.map_or(usize::MAX, |b| b as usize);
        if trunc != 0 {
            max = max.min(trunc as usize);
        }
        let c = self.copy_packet(h, r.mirror_header.as_bytes(), max);
        self.plumbing.mirror_copies += 1;
        self.enqueue_to(now, c, s.port, s.queue, 0, 0, false, q);
    }
}
