//! The chip's plumbing: the paths by which a packet is looped back, redirected or copied
//! inside the chip. The packet's path (`ingress.rs`, `queueing.rs`, `egress.rs`) calls into
//! them; [`Plumbing`] holds their configuration, checked against the chip and indexed by id.
//!
//! - **Port ids.** Front-panel ports are `0..F`; recirculation ports follow, pipe `p`'s
//!   `r`-th is `F + p·R + r` (`R = profile.recirculation.ports_per_pipe`,
//!   [`Chip::recirc_port`]); then one packet-generator port per pipe, `F + pipes·R + p`
//!   ([`Chip::pktgen_port`]), a source of ingress packets only (sending to it is
//!   `InvalidEgressPort`). Every port except the generator's has TM queues; the TM is built
//!   with all of them. [`Chip::port_count`] is `F`; only front-panel ports receive frames.
//! - **Recirculation.** A recirculation port is served by the TM and paced like a MAC at the
//!   profile's recirculation speed, with the same Ethernet framing overhead (preamble,
//!   64-byte minimum, inter-frame gap: the real port is a MAC in loopback; an assumption for
//!   an internal port). What it "transmits" does not go to the [`super::Wire`]: the frame's
//!   first bit is back at the same pipe's ingress `recirculation.latency_cycles` after it
//!   started, it arrives whole one frame time later and takes an ingress issue slot like any
//!   arrival, with `ingress_port` = the recirculation port. `ig_tm_md.recirculate` sends the
//!   packet to its ingress pipe's first recirculation port (overriding the unicast port).
//! - **Deflect-on-drop.** When the TM refuses a packet whose program set `deflect_on_drop`
//!   and [`super::ChipConfig::dod`] is set, the whole packet is offered to the DoD port
//!   (default: the first recirculation port of its ingress pipe) and queue; admission applies
//!   again and a second refusal is [`super::DropReason::DeflectRefused`]. Egress sees
//!   `deflection_flag` = 1. Without `dod` the packet is dropped with the TM's reason.
//! - **Mirror-on-drop (what-if).** When the TM's admission refuses a packet and
//!   [`super::ChipConfig::mirror_on_drop`] is set, the packet is dropped with the TM's reason
//!   and a copy of its first `truncate_bytes` bytes is offered to the configured port
//!   (default: as for deflect-on-drop) and queue, a packet of its own; a refusal there is
//!   [`super::DropReason::MirrorOnDropRefused`]. The copy carries its mark
//!   (`mirror_on_drop_flag` in ingress) for its whole life and is never copied again.
//!   Everything it takes (egress pipe, recirculation, ingress) is the path's own timing.
//! - **Mirroring.** After the ingress deparser (and after the egress deparser), a non-zero
//!   `mirror_session` copies the deparser's mirror header (`Mirror.emit`) followed by the
//!   deparsed packet, truncated (header included) to the session's `truncate_bytes` and to
//!   `mtu_trunc_len` if non-zero (the smaller), and enqueues the copy to the session's port
//!   and queue as a packet of its own (own cells, own bandwidth, through that port's egress
//!   pipe like any packet), and, if the session names a multicast group, one more copy to
//!   each of its members (queue the session's, `egress_rid` the member's). An unknown
//!   session makes no copy
//!   ([`PlumbingCounters::mirror_unknown_session`]). Session ids are
//!   `1..plumbing.mirror_sessions`.
//! - **Multicast.** A non-zero `mcast_grp_a` replicates the packet to every member of the
//!   group (besides the unicast port, if set): one TM enqueue per copy, each charged its own
//!   cells (the real chip stores a multicast packet once; this model charges per copy), with
//!   the member's replication id as `egress_rid`. An unknown group drops the packet
//!   ([`super::DropReason::UnknownMcastGroup`]).
//! - **Conservation.** Front-panel packets in + [`PlumbingCounters::created`] (generated,
//!   mirror and multicast copies) = front-panel packets out + drops + the copies the program
//!   ended by design ([`Chip::consumed`]) + the packets still inside ([`Chip::packets_inside`],
//!   0 once the chip has drained).

use super::port::{Port, PortKind};
use super::{
    Chip, ChipConfig, ChipError, ChipEvent, DodConfig, DropReason, MirrorOnDropConfig,
    MirrorSession,
};
use crate::kernel::Schedule;
use crate::profile::ChipProfile;
use crate::trace::Origin;
use pipelines::pipe::TmRequests;
use pipelines::program::Gress;
use pipelines::time::{Clock, Time};
use std::collections::HashMap;

/// Counters of the chip's plumbing. Conservation: front-panel packets in + `created()` =
/// front-panel packets out + drops + consumed + still inside (see the module comment).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PlumbingCounters {
    /// Packets sent out of a recirculation port back into ingress.
    pub recirculated: u64,
    /// Packets the TM refused and the chip deflected to the deflect-on-drop port (and the
    /// TM accepted there).
    pub deflected: u64,
    /// Mirror copies made (ingress and egress).
    pub mirror_copies: u64,
    /// What-if mirror-on-drop copies made (of packets the TM refused).
    pub mirror_on_drop_copies: u64,
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
        self.mirror_copies + self.mirror_on_drop_copies + self.mcast_copies + self.generated
    }
}

/// The chip's plumbing: its latencies, destinations and tables, checked against the chip.
pub(super) struct Plumbing {
    /// From a recirculation port's frame start to its first bit back at ingress.
    pub(super) recirc_latency: Time,
    /// From a gress's exit to its advanced-flow-control request reaching the TM.
    pub(super) afc_latency: Time,
    /// Where refused packets asking for deflection go.
    pub(super) dod: Option<DodConfig>,
    /// What-if: where truncated copies of refused packets go.
    pub(super) mirror_on_drop: Option<MirrorOnDropConfig>,
    /// Mirror sessions by id.
    mirror: Vec<Option<MirrorSession>>,
    /// Multicast groups by id: (port, replication id) per member.
    pub(super) mcast: HashMap<u16, Vec<(u16, u16)>>,
    /// Destinations of the packet being enqueued (port, queue, rid), reused.
    pub(super) dests: Vec<(u16, u16, u16)>,
    pub(super) counters: PlumbingCounters,
}

impl Plumbing {
    /// Check the plumbing configuration against the chip (`ports`: every port it has) and
    /// index sessions and groups by id.
    pub(super) fn new(
        profile: &ChipProfile,
        config: &ChipConfig,
        clock: Clock,
        ports: &[Port],
    ) -> Result<Plumbing, ChipError> {
        let bad = |s: String| Err(ChipError::Config(s));
        let is_dest = |p: u16| {
            ports
                .get(p as usize)
                .is_some_and(|p| p.kind != PortKind::PktGen)
        };
        let qpp = profile.tm.queues_per_port;
        let max = profile.plumbing.mirror_sessions;
        let mut mirror = vec![None; max as usize];
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
            if let Some(g) = s.mcast_group {
                if !config.mcast_groups.iter().any(|m| m.id == g && g != 0) {
                    return bad(format!(
                        "mirror session {}: no multicast group {g} to copy to",
                        s.id
                    ));
                }
            }
        }
        let mut mcast = HashMap::new();
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
                        "deflect-on-drop: no port given and the chip has no recirculation port"
                            .into(),
                    )
                }
                _ => {}
            }
            if d.queue >= qpp {
                return bad(format!("deflect-on-drop: no queue {}", d.queue));
            }
        }
        if let Some(m) = &config.mirror_on_drop {
            // `mirror_on_drop.<field>` names the field, which `asic run` places in the
            // scenario.
            let bad_field =
                |field: &str, why: String| bad(format!("`mirror_on_drop{field}`: {why}"));
            match m.port {
                Some(p) if !is_dest(p) => return bad_field(".port", format!("no port {p}")),
                None if profile.recirculation.ports_per_pipe == 0 => {
                    return bad_field(
                        ".port",
                        "no port given and the chip has no recirculation port".into(),
                    )
                }
                _ => {}
            }
            if m.queue >= qpp {
                return bad_field(
                    ".queue",
                    format!("no queue {}: ports have {qpp} queues", m.queue),
                );
            }
            if m.truncate_bytes == 0 {
                return bad_field(".truncate_bytes", "a copy keeps at least 1 byte".into());
            }
            if config.dod.is_some() {
                return bad_field(
                    "",
                    "deflect-on-drop (`dod`) acts on the same refusals; configure one of them"
                        .into(),
                );
            }
            if config.tm.trim.is_some() {
                return bad_field(
                    "",
                    "what-if trimming (`tm.trim`) acts on the same refusals; configure one of \
                     them"
                        .into(),
                );
            }
        }
        // A duration of `n` cycles.
        let cycles = |n: u32| clock.time_of(n as u64);
        Ok(Plumbing {
            recirc_latency: cycles(profile.recirculation.latency_cycles),
            afc_latency: cycles(profile.plumbing.afc_latency_cycles),
            dod: config.dod,
            mirror_on_drop: config.mirror_on_drop,
            mirror,
            mcast,
            dests: Vec::new(),
            counters: PlumbingCounters::default(),
        })
    }
}

impl Chip {
    /// The id of recirculation port `r` of `pipe` ([`ChipProfile::recirc_port`]).
    pub fn recirc_port(&self, pipe: u16, r: u16) -> Option<u16> {
        self.profile.recirc_port(pipe, r)
    }

    /// Counters of recirculation, deflection, mirroring, multicast, the packet generator
    /// and advanced flow control.
    pub fn plumbing_counters(&self) -> &PlumbingCounters {
        &self.plumbing.counters
    }

    /// A copy of `prefix` followed by packet `src`'s current bytes (at most `max_len` in
    /// all), with its ingress port, arrival time and tag.
    pub(super) fn copy_packet(&mut self, src: u32, prefix: &[u8], max_len: usize) -> u32 {
        let c = self.packets.alloc();
        let data = std::mem::take(&mut self.packets.slots[src as usize].data);
        let s = &self.packets.slots[src as usize];
        let (ingress_port, rx_start, made_here, tag) =
            (s.ingress_port, s.rx_start, s.made_here, s.tag);
        let copy = &mut self.packets.slots[c as usize];
        let prefix = &prefix[..prefix.len().min(max_len)];
        copy.data.extend_from_slice(prefix);
        copy.data
            .extend_from_slice(&data[..data.len().min(max_len - prefix.len())]);
        copy.ingress_port = ingress_port;
        copy.rx_start = rx_start;
        copy.made_here = made_here;
        copy.tag = tag;
        self.packets.slots[src as usize].data = data;
        c
    }

    /// Where deflect-on-drop or mirror-on-drop sends a packet that came in on `ingress_port`:
    /// `port`, or the first recirculation port of its pipe (the configuration check refused
    /// `None` on a chip without one).
    pub(super) fn on_drop_port(&self, port: Option<u16>, ingress_port: u16) -> Option<u16> {
        let pipe = self.ports[ingress_port as usize].pipe;
        port.or_else(|| self.profile.recirc_port(pipe, 0))
    }

    /// What-if mirror-on-drop of packet `h`, which the TM refused: its first bytes, marked,
    /// offered to the mirror-on-drop port and queue as a packet of its own. The caller drops
    /// `h`.
    pub(super) fn mirror_on_drop(
        &mut self,
        now: Time,
        h: u32,
        m: MirrorOnDropConfig,
        q: &mut impl Schedule<ChipEvent>,
    ) {
        let from = self.packets.slots[h as usize].ingress_port;
        let Some(port) = self.on_drop_port(m.port, from) else {
            return;
        };
        let c = self.copy_packet(h, &[], m.truncate_bytes as usize);
        let carries = self.packets.slots[h as usize].carries;
        let copy = &mut self.packets.slots[c as usize];
        copy.made_here = true;
        copy.mirror_on_drop = true;
        copy.carries = carries;
        self.plumbing.counters.mirror_on_drop_copies += 1;
        if self.trace.is_some() {
            let origin = Origin::MirrorOnDrop {
                port,
                queue: m.queue,
            };
            self.trace_made(c, Some(h), origin, now);
        }
        if self.offer(now, c, port, m.queue, 0, false).is_err() {
            return self.drop_packet(c, now, DropReason::MirrorOnDropRefused);
        }
        self.admitted(now, c, port, 0, q);
    }

    /// Mirror packet `h` (as it is now, at the exit of `gress`) to `session`: the program's
    /// mirror header, then the packet, truncated, enqueued to the session's port and queue as
    /// a packet of its own; if `h` is `dropped` as it is mirrored, the copy stands for it
    /// ([`Chip::held_tags`]).
    pub(super) fn mirror(
        &mut self,
        now: Time,
        h: u32,
        gress: Gress,
        r: &TmRequests,
        dropped: bool,
        q: &mut impl Schedule<ChipEvent>,
    ) {
        let (session, trunc) = (r.mirror_session, r.mirror_truncate_bytes);
        let Some(s) = self
            .plumbing
            .mirror
            .get(session as usize)
            .copied()
            .flatten()
        else {
            self.plumbing.counters.mirror_unknown_session += 1;
            return;
        };
        let mut max = s.truncate_bytes.map_or(usize::MAX, |b| b as usize);
        if trunc != 0 {
            max = max.min(trunc as usize);
        }
        let members = s
            .mcast_group
            .and_then(|g| self.plumbing.mcast.get(&g))
            .map_or(0, Vec::len);
        // The session's port first, then the group's members (read by index: enqueueing
        // needs the chip mutably); only the first copy stands for a packet dropped as it is
        // mirrored.
        for i in 0..=members {
            let (port, rid) = match (i, s.mcast_group) {
                (1.., Some(g)) => self.plumbing.mcast[&g][i - 1],
                _ => (s.port, 0),
            };
            let c = self.copy_packet(h, r.mirror_header.as_bytes(), max);
            let carries = dropped && i == 0 && self.packets.slots[h as usize].carries;
            let copy = &mut self.packets.slots[c as usize];
            copy.made_here = true;
            copy.carries = carries;
            self.plumbing.counters.mirror_copies += 1;
            if self.trace.is_some() {
                self.trace_made(c, Some(h), Origin::Mirror { session, gress }, now);
            }
            self.enqueue_to(now, c, port, s.queue, rid, 0, false, q);
        }
    }
}
