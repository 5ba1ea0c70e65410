//! The operator's configuration of a chip, [`ChipConfig`], and its parts: what a scenario's
//! `config: ( ... )` sets, as opposed to the profile, which holds what the silicon is. Every
//! part has serde defaults and refuses unknown fields, so a typo in a scenario is an error
//! naming the field. The chip checks the configuration against the profile when it is built
//! (`Chip::with_config`), and refuses what does not fit with an error naming the place.

use serde::{Deserialize, Serialize};
use tm::config::TmConfig;

/// The operator's configuration of a chip (the profile holds what the silicon is).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ChipConfig {
    /// Traffic-manager configuration: admission, α per class, schedulers, PFC, ECN.
    pub tm: TmConfig,
    /// Seed of every random source on the chip (per-gress random externs, RED marking).
    pub seed: u64,
    /// Where a packet the TM refuses goes when the program asked for deflection
    /// (`deflect_on_drop`); `None`: such packets are dropped like any other.
    pub dod: Option<DodConfig>,
    /// **What-if** mirror-on-drop ([`MirrorOnDropConfig`]): a truncated copy of every
    /// packet the TM's admission refuses; `None`: off.
    pub mirror_on_drop: Option<MirrorOnDropConfig>,
    /// Mirror sessions.
    pub mirror_sessions: Vec<MirrorSession>,
    /// Multicast groups of the packet replication engine.
    pub mcast_groups: Vec<McastGroup>,
    /// Packet-generator applications.
    pub pktgen: Vec<PktGenApp>,
    /// Front-panel ports brought up at a speed of the operator's choice; every other port
    /// runs at its profile speed.
    pub port_speeds: Vec<PortSpeed>,
}

/// A front-panel port brought up at a speed (the driver's `bf_pal_port_add`). The speed is
/// above 0 and at most the port's profile speed (its port group's `speed_gbps`): a port's
/// serdes lanes can run slower, not faster. The port's MAC timing, pacing and PFC quanta and
/// refresh all run at it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PortSpeed {
    /// The front-panel port.
    pub port: u16,
    /// Its line rate, Gb/s.
    pub gbps: u32,
}

/// The deflect-on-drop destination, the same for every pipe.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DodConfig {
    /// The port (`None`: the first recirculation port of the packet's ingress pipe).
    pub port: Option<u16>,
    /// The queue on that port.
    pub queue: u16,
}

/// **What-if (no Tofino has it):** mirror-on-drop, the trimming paper's MoD baseline (Popa et
/// al. 2022, §3 and §6.1: "a generic Mirror-on-Drop switch with a 100Gbps mirror-on-drop port
/// per pipeline", as Trident 4 and Spectrum 2 trim). When the TM's admission refuses a packet
/// (a buffer, pool, static, DT, FB or headroom limit; not a missing port, queue or class), the
/// chip drops it with the TM's reason and sends a copy of its first `truncate_bytes` bytes
/// to `port` and `queue`. The copy is a packet of its own (counted as made in the chip), goes
/// through that port's egress pipe and, from a recirculation port, back into ingress, whose
/// `ig_intr_md.mirror_on_drop_flag` is 1 for it: the program forwards it as a trimmed header.
/// Its delay is the path's: egress, the recirculation port's serialization and loopback,
/// ingress; no constant is added. A copy the TM refuses at `port` is dropped as
/// `mirror_on_drop_refused`; a copy refused later (its header queue full) is dropped for
/// the TM's reason and not copied again.
///
/// What Tofino has instead (TNA/T2NA, `tofino1_base.p4`/`tofino2_base.p4`): deflect-on-drop
/// of the whole packet (`ig_tm_md.deflect_on_drop`, egress `deflection_flag`; here `dod`),
/// truncated mirroring from a deparser (`mirror_type`, the session's maximum length), and on
/// Tofino 2 a deparser's `mirror_deflect_on_drop`, which lets a mirror *copy* be deflected
/// when the TM refuses it. None copies a refused packet, and no ingress field marks such a
/// copy: both are this model's.
///
/// It acts on the refusals `dod` and `tm.trim` would act on, so a configuration with either
/// is refused.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MirrorOnDropConfig {
    /// The port copies go to (`None`: the first recirculation port of the refused packet's
    /// ingress pipe).
    pub port: Option<u16>,
    /// The queue on that port.
    pub queue: u16,
    /// Bytes kept from the refused packet's start (stored length, no FCS; the whole packet if
    /// shorter). At least 1.
    pub truncate_bytes: u16,
}

/// A mirror session: where copies go and how long they may be.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MirrorSession {
    /// Session id, `1..profile.plumbing.mirror_sessions`.
    pub id: u16,
    /// Destination port (front-panel or recirculation).
    pub port: u16,
    /// Destination queue.
    pub queue: u16,
    /// Truncate copies to this many bytes (`None`: whole packet).
    pub truncate_bytes: Option<u16>,
    /// A multicast group whose every member gets a copy too, with its replication id (the
    /// real session's `mcast_grp_a`: Tofino's mirror sessions replicate through the PRE), so
    /// that one mirror reaches, say, every pipe's recirculation port.
    pub mcast_group: Option<u16>,
}

/// A multicast group: one copy per member.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct McastGroup {
    /// Group id (non-zero).
    pub id: u16,
    /// Members: (port, replication id seen at egress as `egress_rid`).
    pub members: Vec<(u16, u16)>,
}

/// A packet-generator application: a template sent into a pipe's ingress periodically
/// and/or at given times.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PktGenApp {
    /// The pipe whose ingress the packets enter (through its packet-generator port).
    pub pipe: u16,
    /// The packet (no FCS).
    pub template: Vec<u8>,
    /// Periodic: one packet every `period_ns`, from `start_ns`.
    pub period_ns: Option<u64>,
    /// When the periodic timer starts (ns).
    pub start_ns: u64,
    /// How many periodic packets (`None`: without end; a bench run then never drains).
    pub count: Option<u64>,
    /// One-shot triggers (ns).
    pub at_ns: Vec<u64>,
}
