//! Why a packet was dropped: every packet that enters the chip is transmitted, or counted
//! under exactly one [`DropReason`] (the chip's own, or the TM's refusal) and against the port
//! it arrived on.

use super::Chip;
use pipelines::time::Time;
use tm::Refusal;

/// Why a packet was dropped. Every packet that enters the chip is either transmitted or
/// counted under one of these.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DropReason {
    /// The ingress parser rejected the packet or ran out of bytes.
    IngressParserError,
    /// The ingress program set `drop_ctl`.
    IngressProgramDrop,
    /// The ingress program set no egress port.
    NoEgressPort,
    /// The egress port the program chose does not exist on this chip.
    InvalidEgressPort,
    /// The traffic manager refused the packet (admission), for this reason.
    Tm(Refusal),
    /// The egress parser rejected the packet or ran out of bytes.
    EgressParserError,
    /// The egress program set `drop_ctl`.
    EgressProgramDrop,
    /// The ingress program asked for a multicast group the configuration does not have.
    UnknownMcastGroup,
    /// The TM refused the packet, the program asked for deflection, and the TM refused it
    /// at the deflect-on-drop port too.
    DeflectRefused,
    /// What-if mirror-on-drop: the TM refused the copy of a refused packet at the
    /// mirror-on-drop port.
    MirrorOnDropRefused,
}

/// Reasons that are the chip's own (not the TM's), in report order.
const CHIP_REASONS: [DropReason; 9] = [
    DropReason::IngressParserError,
    DropReason::IngressProgramDrop,
    DropReason::NoEgressPort,
    DropReason::InvalidEgressPort,
    DropReason::EgressParserError,
    DropReason::EgressProgramDrop,
    DropReason::UnknownMcastGroup,
    DropReason::DeflectRefused,
    DropReason::MirrorOnDropRefused,
];

/// Number of distinct reasons.
pub(super) const REASONS: usize = CHIP_REASONS.len() + Refusal::ALL.len();

impl DropReason {
    /// Every reason, in report order: the chip's, then the TM's.
    pub const ALL: [DropReason; REASONS] = {
        let mut all = [DropReason::IngressParserError; REASONS];
        let mut i = 0;
        while i < CHIP_REASONS.len() {
            all[i] = CHIP_REASONS[i];
            i += 1;
        }
        let mut j = 0;
        while j < Refusal::ALL.len() {
            all[i + j] = DropReason::Tm(Refusal::ALL[j]);
            j += 1;
        }
        all
    };

    /// Dense index for counters.
    pub(super) fn index(self) -> usize {
        match self {
            DropReason::Tm(r) => CHIP_REASONS.len() + r as usize,
            other => CHIP_REASONS
                .iter()
                .position(|c| *c == other)
                .expect("a chip reason"),
        }
    }

    /// A short name for reports.
    pub fn name(self) -> &'static str {
        match self {
            DropReason::IngressParserError => "ingress_parser_error",
            DropReason::IngressProgramDrop => "ingress_program_drop",
            DropReason::NoEgressPort => "no_egress_port",
            DropReason::InvalidEgressPort => "invalid_egress_port",
            DropReason::Tm(r) => r.name(),
            DropReason::EgressParserError => "egress_parser_error",
            DropReason::EgressProgramDrop => "egress_program_drop",
            DropReason::UnknownMcastGroup => "unknown_mcast_group",
            DropReason::DeflectRefused => "deflect_refused",
            DropReason::MirrorOnDropRefused => "mirror_on_drop_refused",
        }
    }
}

/// What [`Chip::watch_drops`] keeps: the owner of each dropped packet, by the caller's
/// reading of its bytes.
#[derive(Debug)]
pub(super) struct DropWatch {
    /// The owner of a packet from its bytes as they were when it was dropped (`None`: no
    /// owner the caller counts).
    owner: fn(&[u8]) -> Option<u64>,
    /// Owners of the packets dropped since the last [`Chip::take_watched_drops`], in drop
    /// order.
    owners: Vec<u64>,
}

impl Chip {
    /// Keep the owner of every packet dropped from now on, as `owner` reads it from the
    /// packet's bytes (a network asks for the flow of each data packet, to count a flow's
    /// losses). Packets the program consumes are not drops and are not kept.
    pub fn watch_drops(&mut self, owner: fn(&[u8]) -> Option<u64>) {
        self.drop_watch = Some(DropWatch {
            owner,
            owners: Vec::new(),
        });
    }

    /// Hands each owner [`Chip::watch_drops`] kept since the last call to `f`, in drop
    /// order, and forgets them.
    pub fn take_watched_drops(&mut self, mut f: impl FnMut(u64)) {
        if let Some(w) = &mut self.drop_watch {
            w.owners.drain(..).for_each(&mut f);
        }
    }

    /// The end of packet `h` at `now`: counted under `reason` and against its ingress port,
    /// its buffer back in the store. A packet the chip made that its program ends is consumed,
    /// not dropped: a program's own records (BFC's dequeue records, a refresh walk's last
    /// step) end this way by design.
    pub(super) fn drop_packet(&mut self, h: u32, now: Time, reason: DropReason) {
        let p = &self.packets.slots[h as usize];
        let by_program = matches!(
            reason,
            DropReason::IngressProgramDrop | DropReason::EgressProgramDrop
        );
        let consumed = p.made_here && by_program;
        if consumed {
            self.consumed += 1;
        } else {
            self.drops[reason.index()] += 1;
            self.ports[p.ingress_port as usize].counters.drops += 1;
            if let Some(w) = &mut self.drop_watch {
                w.owners.extend((w.owner)(&p.data));
            }
        }
        if self.trace.is_some() {
            self.trace_drop(h, now, reason, consumed);
        }
        self.packets.release(h);
    }

    /// Drops by reason.
    pub fn drops(&self, reason: DropReason) -> u64 {
        self.drops[reason.index()]
    }

    /// Packets the chip made (mirror copies, generated packets) that its program ended: the
    /// program's own records, consumed as designed rather than dropped.
    pub fn consumed(&self) -> u64 {
        self.consumed
    }

    /// The tags ([`Chip::receive`]) of the frames still inside the chip (queued in the TM, in
    /// a pipe, in the recirculation loop or waiting for its port's wire), whatever the
    /// program did to their bytes (a bridged header in front, say): one per packet that came
    /// in and is not yet sent or dropped, or a copy that stands for it (a multicast copy for a
    /// front-panel port; a mirror copy made as the packet was dropped, such as a trimmed
    /// header). Copies made beside a packet that goes on (records, a NOTIFY's copies for
    /// the recirculation ports) are left out. At the end of a run: what was neither sent
    /// nor dropped.
    pub fn held_tags(&self) -> impl Iterator<Item = u32> + '_ {
        self.packets
            .live_packets()
            .filter(|p| p.carries)
            .map(|p| p.tag)
    }
}
