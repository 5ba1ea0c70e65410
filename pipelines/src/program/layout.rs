//! Where fields live: fields and headers as container slices, and the intrinsic metadata
//! the chip binds to fields. Everything else in a program names fields by [`FieldId`].

use serde::{Deserialize, Serialize};

/// Index into [`PhvLayout::fields`].
pub type FieldId = u16;
/// Index into [`PhvLayout::headers`].
pub type HeaderId = u16;

/// A bit range inside one PHV container: bits `lsb .. lsb + width`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PhvSlice {
    /// Container index (8-bit containers first, then 16-bit, then 32-bit; see
    /// [`crate::spec::PhvSpec::width`]).
    pub container: u16,
    /// Lowest bit of the range within the container.
    pub lsb: u8,
    /// Number of bits.
    pub width: u8,
}

/// A named field of up to 128 bits, stored in one or more container slices.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Field {
    /// Qualified name, e.g. `hdr.ipv4.ttl` or `ig_tm_md.ucast_egress_port`.
    pub name: String,
    /// Width in bits (1..=128).
    pub width: u16,
    /// Where the bits live, most significant slice first; widths add up to `width`.
    pub slices: Vec<PhvSlice>,
}

/// A header: a sequence of fields extracted from and emitted to the wire, plus its validity
/// bit (which occupies PHV like any field, as the POV bits do on a real chip).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Header {
    /// Qualified name, e.g. `hdr.ipv4`.
    pub name: String,
    /// Fields in wire order; their widths add up to a whole number of bytes.
    pub fields: Vec<FieldId>,
    /// The 1-bit validity field.
    pub valid: FieldId,
}

/// Metadata the chip writes before the control runs or reads after it: the program's
/// interface to the MACs and the traffic manager. Each is bound to a PHV field.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Intrinsic {
    /// In (ingress): the port the packet arrived on.
    IngressPort,
    /// In (ingress): nanoseconds when the packet's first bit reached the ingress MAC.
    IngressMacTimestamp,
    /// In (both): nanoseconds when the packet entered the parser.
    GlobalTimestamp,
    /// In (both): packet length in bytes as stored in the buffer (no FCS).
    PacketLength,
    /// Out (ingress): the unicast egress port requested from the TM.
    UcastEgressPort,
    /// Out (ingress): set by the compiler whenever the program writes
    /// [`Intrinsic::UcastEgressPort`]; a packet without it has no destination and is dropped.
    UcastEgressPortValid,
    /// Out (ingress): the queue id within the egress port.
    QueueId,
    /// Out (both): non-zero drops the packet at the end of this gress.
    DropCtl,
    /// In (egress): the port the packet is leaving from.
    EgressPort,
    /// In (egress): the queue the packet left.
    EgressQueue,
    /// In (egress): queue depth in cells when this packet was enqueued.
    EnqQueueDepthCells,
    /// In (egress): queue depth in cells when this packet was dequeued.
    DeqQueueDepthCells,
    /// In (egress): nanoseconds the packet spent in the queue.
    QueueDelay,
    /// In (egress): queue depth in packets when this packet was enqueued.
    EnqQueueDepthPackets,
    /// In (egress): queue depth in packets when this packet was dequeued.
    DeqQueueDepthPackets,
    /// In (both): non-zero when the parser failed and the program chose to continue
    /// ([`crate::program::ParserErrorPolicy::Continue`]); the value says why (see [`crate::parser::ParseError::code`]).
    ParserError,
    /// Out (ingress): multicast group (0: none).
    McastGroup,
    /// Out (ingress): deflect the packet if the TM refuses it, instead of dropping it.
    DeflectOnDrop,
    /// Out (ingress): the PFC class (ingress CoS) the TM accounts the packet under.
    IngressCos,
    /// Out (ingress): skip the egress pipe.
    BypassEgress,
    /// Out (both): mirror session (0: none).
    MirrorSession,
    /// Out (both): truncate the mirrored copy to this many bytes (0: whole packet).
    MirrorTruncateBytes,
    /// Out (ingress): recirculate the packet to this pipe's ingress after egress.
    Recirculate,
    /// Out (both): an advanced-flow-control request to the TM (Tofino2's `adv_flow_ctl`:
    /// qfc(1) | pipe(2) | mac(4) | pad(3) | qid(7) | credit(15)); 0: none.
    AdvFlowCtl,
    /// In (egress): the TM's congestion status of the queue at enqueue (TNA's
    /// `enq_congest_stat`): non-zero when the queue's ECN configuration marks this packet.
    /// The program sets CE, as on Tofino, where the TM flags and the egress pipe rewrites.
    EnqCongestStat,
    /// In (egress): the replication id of a multicast copy (0 for unicast).
    ReplicationId,
    /// In (egress): 1 when the TM deflected the packet (deflect-on-drop) to this port
    /// instead of dropping it (TNA's `eg_intr_md.deflection_flag`).
    Deflected,
    /// In (ingress): 1 when the packet is a mirror-on-drop copy: the truncated copy the
    /// what-if mirror-on-drop made of a packet the TM refused (no Tofino has it; the chip's
    /// `mirror_on_drop` configuration), back in ingress through the port it was sent to.
    MirrorOnDrop,
    /// Out (ingress): the packet's colour for the TM (TNA's `packet_color`: green 0, yellow
    /// 1, red 3, as a meter returns it): its colour drop limit, or under the what-if
    /// single-queue Flexible Buffer its class (`tm::config::ColorConfig`).
    PacketColor,
}

impl Intrinsic {
    /// Number of intrinsics (for tables indexed by `Intrinsic as usize`).
    pub const COUNT: usize = Intrinsic::PacketColor as usize + 1;
}

/// Fields, headers and intrinsic bindings of one gress.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PhvLayout {
    /// All fields, including header validity bits and metadata.
    pub fields: Vec<Field>,
    /// All headers.
    pub headers: Vec<Header>,
    /// Which field carries each intrinsic the program uses.
    pub intrinsics: Vec<(Intrinsic, FieldId)>,
}

impl PhvLayout {
    /// The field bound to an intrinsic, if the program uses it.
    pub fn intrinsic(&self, which: Intrinsic) -> Option<FieldId> {
        self.intrinsics
            .iter()
            .find(|(i, _)| *i == which)
            .map(|&(_, f)| f)
    }

    /// One past the highest container any field has a slice in: how many containers a
    /// PHV for this layout needs.
    pub fn containers(&self) -> usize {
        self.fields
            .iter()
            .flat_map(|f| &f.slices)
            .map(|s| s.container as usize + 1)
            .max()
            .unwrap_or(0)
    }

    /// Wire length in bytes of a header (its fields' widths, not its validity bit).
    pub fn header_bytes(&self, h: HeaderId) -> usize {
        let bits: usize = self.headers[h as usize]
            .fields
            .iter()
            .map(|&f| self.fields[f as usize].width as usize)
            .sum();
        bits / 8
    }
}
