//! The frames hosts send and receive: Ethernet / IPv4 / UDP with a small transport header in
//! the UDP payload.
//!
//! Layout (byte offsets in the frame; the frame is stored without FCS, as everywhere in the
//! model; multi-byte fields are big-endian):
//!
//! | bytes | field |
//! |---|---|
//! | 0..6 | destination MAC: the next hop's (the switch port's) MAC |
//! | 6..12 | source MAC: the host's |
//! | 12..14 | EtherType 0x0800 |
//! | 14..34 | IPv4, no options: version 4, IHL 5; TOS = DSCP (`class << 3`) and ECN (00 not ECT, 10 ECT(0), 11 CE); total length; identification = low 16 bits of `seq`; DF; TTL 64; protocol 17; header checksum (valid); source and destination addresses |
//! | 34..42 | UDP: source port `49152 + (flow_id + entropy) mod 16384` (so ECMP hashes spread flows; `entropy` is 0 unless the sender sprays its packets over paths, then [`spray_entropy`] of the flow and the packet's index), destination port [`UDP_PORT`] (4791), length, checksum 0 (none, as IPv4 allows) |
//! | 42 | transport flags: [`DATA`] 0x01, [`ACK`] 0x02, [`NACK`] 0x04, [`PULL`] 0x08, [`TRIMMED`] 0x10, [`ECE`] 0x20 (ECN echo), [`LAST`] 0x40 (last packet of the flow) |
//! | 43 | priority class 0..7 (also in the DSCP) |
//! | 44..46 | `queue`: the sender's NIC queue / the upstream-queue hint for BFC-style control |
//! | 46..50 | `seq`: DATA: packet index in the flow (0-based); ACK: cumulative ACK (next packet index expected); NACK: the index lost (trimmed); PULL: the receiver's pull counter |
//! | 50..54 | `echo`: ACK/NACK: the index of the packet that caused it |
//! | 54..62 | `flow_id` |
//! | 62..70 | `ts_ps`: DATA: when the sender sent it; ACK/NACK: echoed from the packet acknowledged |
//! | 70..74 | `len`: DATA: application bytes carried (also when trimmed: what it had carried) |
//! | 74.. | application payload (zeros) |
//!
//! The transport header is [`TRANSPORT_HEADER_BYTES`] = 32 bytes, so a 1500-byte IP MTU
//! carries 1500 − 20 (IPv4) − 8 (UDP) − 32 = [`mss`] (1440) application bytes and an ACK is
//! a 74-byte frame. A DATA frame shorter than `74 + len` bytes is a trimmed header (NDP)
//! whether or not the switch set [`TRIMMED`].
//!
//! The transport fields' byte ranges are the constants of [`field`], which [`build`] and
//! [`parse`] use. `tools/wireshark/asic.lua` decodes these frames in Wireshark from a copy
//! of this layout, which `tests/asic/wireshark.rs` compares with [`field`].

use std::ops::Range;

/// UDP destination port of model traffic (the RoCEv2 port, for familiarity).
pub const UDP_PORT: u16 = 4791;
/// EtherType IPv4.
pub const ETHERTYPE_IPV4: u16 = 0x0800;
/// Bytes of Ethernet + IPv4 + UDP headers.
pub const L2_L4_BYTES: usize = 14 + 20 + 8;
/// Bytes of the transport header.
pub const TRANSPORT_HEADER_BYTES: usize = 32;
/// Bytes of all headers of a model frame.
pub const HEADER_BYTES: usize = L2_L4_BYTES + TRANSPORT_HEADER_BYTES;
/// Offset of the transport header.
pub const TRANSPORT_OFFSET: usize = L2_L4_BYTES;

/// The transport header's fields: their byte ranges from [`TRANSPORT_OFFSET`], named as the
/// [`Header`] fields they carry (all big-endian).
pub mod field {
    use super::Range;
    /// Transport flags ([`super::DATA`], [`super::ACK`], ...).
    pub const FLAGS: Range<usize> = 0..1;
    /// Priority class.
    pub const CLASS: Range<usize> = 1..2;
    /// NIC queue / upstreamQ.
    pub const QUEUE: Range<usize> = 2..4;
    /// Sequence / ACK / NACK / pull number.
    pub const SEQ: Range<usize> = 4..8;
    /// Echoed index.
    pub const ECHO: Range<usize> = 8..12;
    /// Flow id.
    pub const FLOW_ID: Range<usize> = 12..20;
    /// Timestamp (ps).
    pub const TS_PS: Range<usize> = 20..28;
    /// Application bytes.
    pub const LEN: Range<usize> = 28..32;
}

/// DATA flag.
pub const DATA: u8 = 0x01;
/// ACK flag.
pub const ACK: u8 = 0x02;
/// NACK flag.
pub const NACK: u8 = 0x04;
/// PULL flag.
pub const PULL: u8 = 0x08;
/// The payload was trimmed off by a switch.
pub const TRIMMED: u8 = 0x10;
/// ECN echo: the acknowledged packet carried CE.
pub const ECE: u8 = 0x20;
/// Last packet of its flow.
pub const LAST: u8 = 0x40;

/// IPv4 ECN codepoints (low two bits of the TOS byte).
pub const ECN_NOT_ECT: u8 = 0b00;
/// ECT(0).
pub const ECN_ECT0: u8 = 0b10;
/// Congestion experienced.
pub const ECN_CE: u8 = 0b11;

/// Application bytes a data packet carries at IP MTU `mtu`.
pub fn mss(mtu: usize) -> usize {
    mtu - 20 - 8 - TRANSPORT_HEADER_BYTES
}

/// The [`Header::entropy`] of packet `seq` of a spraying flow: a SplitMix64 mix of the flow
/// and the index, so that each packet's path is a fresh draw, independent of other flows'.
/// (The index alone would not do: CRC is linear, so two flows' hashes of the same port
/// differ by a constant, and flows at the same index would pick correlated paths; in the
/// trimming testbed three such flows got 20.3 Gb/s against 22.0 with random choices.)
pub fn spray_entropy(flow_id: u64, seq: u32) -> u16 {
    let mut x = flow_id.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ seq as u64;
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    ((x ^ (x >> 31)) % 16384) as u16
}

/// Frame length (no FCS) of a data packet carrying `payload` bytes.
pub fn data_frame_len(payload: usize) -> usize {
    HEADER_BYTES + payload
}

/// The fields of a model frame's headers that hosts use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Header {
    /// Destination MAC.
    pub dst_mac: [u8; 6],
    /// Source MAC.
    pub src_mac: [u8; 6],
    /// Source IPv4.
    pub src_ip: u32,
    /// Destination IPv4.
    pub dst_ip: u32,
    /// IPv4 ECN bits.
    pub ecn: u8,
    /// Transport flags.
    pub flags: u8,
    /// Priority class.
    pub class: u8,
    /// NIC / upstream queue.
    pub queue: u16,
    /// Sequence / ACK / pull number.
    pub seq: u32,
    /// Echoed index.
    pub echo: u32,
    /// Flow id.
    pub flow_id: u64,
    /// Timestamp (ps).
    pub ts_ps: u64,
    /// Application bytes.
    pub len: u32,
    /// Added to the UDP source port (mod 16384): 0 for one path per flow; a spraying sender
    /// (EQDS, NDP) varies it per packet so that the switches' ECMP hash varies.
    pub entropy: u16,
}

impl Header {
    /// Whether this is a data packet.
    pub fn is_data(&self) -> bool {
        self.flags & DATA != 0
    }
}

/// Write a model frame with `h`'s fields and `payload` zero bytes into `buf` (cleared
/// first; its capacity is reused, so no allocation once it is large enough).
pub fn build(buf: &mut Vec<u8>, h: &Header, payload: usize) {
    buf.clear();
    buf.resize(HEADER_BYTES + payload, 0);
    let b = &mut buf[..];
    b[0..6].copy_from_slice(&h.dst_mac);
    b[6..12].copy_from_slice(&h.src_mac);
    b[12..14].copy_from_slice(&ETHERTYPE_IPV4.to_be_bytes());
    let ip_len = (20 + 8 + TRANSPORT_HEADER_BYTES + payload) as u16;
    b[14] = 0x45;
    b[15] = (h.class << 5) | (h.ecn & 0b11);
    b[16..18].copy_from_slice(&ip_len.to_be_bytes());
    b[18..20].copy_from_slice(&(h.seq as u16).to_be_bytes());
    b[20..22].copy_from_slice(&0x4000u16.to_be_bytes());
    b[22] = 64;
    b[23] = 17;
    b[24..26].copy_from_slice(&[0, 0]);
    b[26..30].copy_from_slice(&h.src_ip.to_be_bytes());
    b[30..34].copy_from_slice(&h.dst_ip.to_be_bytes());
    let ck = ipv4_checksum(&b[14..34]);
    b[24..26].copy_from_slice(&ck.to_be_bytes());
    let sport = source_port(h.flow_id, h.entropy);
    b[34..36].copy_from_slice(&sport.to_be_bytes());
    b[36..38].copy_from_slice(&UDP_PORT.to_be_bytes());
    b[38..40].copy_from_slice(&(ip_len - 20).to_be_bytes());
    let t = &mut b[TRANSPORT_OFFSET..];
    t[field::FLAGS].copy_from_slice(&[h.flags]);
    t[field::CLASS].copy_from_slice(&[h.class]);
    t[field::QUEUE].copy_from_slice(&h.queue.to_be_bytes());
    t[field::SEQ].copy_from_slice(&h.seq.to_be_bytes());
    t[field::ECHO].copy_from_slice(&h.echo.to_be_bytes());
    t[field::FLOW_ID].copy_from_slice(&h.flow_id.to_be_bytes());
    t[field::TS_PS].copy_from_slice(&h.ts_ps.to_be_bytes());
    t[field::LEN].copy_from_slice(&h.len.to_be_bytes());
}

/// The IPv4 header checksum of `hdr` (with its checksum field zero).
pub fn ipv4_checksum(hdr: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    for c in hdr.chunks(2) {
        sum += u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]) as u32;
    }
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// The UDP source port of flow `flow_id`'s packets (`entropy` 0 unless the sender sprays
/// them over paths): `49152 + (flow_id + entropy) mod 16384`, the part of the 5-tuple that
/// tells a host's flows apart for ECMP hashes (the path oracle, asic-deploy's `paths`,
/// hashes it as the chips do).
pub fn source_port(flow_id: u64, entropy: u16) -> u16 {
    49152 + ((flow_id + entropy as u64) % 16384) as u16
}

/// Parse a model frame; `None` if it is not one (wrong EtherType, protocol or port, or too
/// short for the headers).
pub fn parse(f: &[u8]) -> Option<Header> {
    if f.len() < HEADER_BYTES
        || f[12..14] != ETHERTYPE_IPV4.to_be_bytes()
        || f[14] != 0x45
        || f[23] != 17
        || f[36..38] != UDP_PORT.to_be_bytes()
    {
        return None;
    }
    let u32_at = |o: usize| u32::from_be_bytes(f[o..o + 4].try_into().expect("4 bytes"));
    let t = &f[TRANSPORT_OFFSET..HEADER_BYTES];
    let u32_in = |r: Range<usize>| u32::from_be_bytes(t[r].try_into().expect("4 bytes"));
    let u64_in = |r: Range<usize>| u64::from_be_bytes(t[r].try_into().expect("8 bytes"));
    let mut h = Header {
        dst_mac: f[0..6].try_into().expect("6 bytes"),
        src_mac: f[6..12].try_into().expect("6 bytes"),
        src_ip: u32_at(26),
        dst_ip: u32_at(30),
        ecn: f[15] & 0b11,
        flags: t[field::FLAGS.start],
        class: t[field::CLASS.start],
        queue: u16::from_be_bytes(t[field::QUEUE].try_into().expect("2 bytes")),
        seq: u32_in(field::SEQ),
        echo: u32_in(field::ECHO),
        flow_id: u64_in(field::FLOW_ID),
        ts_ps: u64_in(field::TS_PS),
        len: u32_in(field::LEN),
        entropy: 0,
    };
    // 49152 is a multiple of 16384: the port less the flow id, mod 16384.
    let sport = u16::from_be_bytes([f[34], f[35]]) as u64;
    h.entropy = ((sport % 16384 + 16384 - h.flow_id % 16384) % 16384) as u16;
    if h.is_data() && f.len() < HEADER_BYTES + h.len as usize {
        h.flags |= TRIMMED;
    }
    Some(h)
}

/// Bytes a bridged header may take in front of a frame inside a chip.
const BRIDGED_MAX: usize = 64;

/// The model frame in the bytes of a packet inside a chip: at the start, or after a header
/// the ingress program bridged in front of it (the first offset, up to 64 bytes, at which
/// a frame parses); `None` if there is none (a program's own record, a control frame).
pub fn frame_in(bytes: &[u8]) -> Option<Header> {
    (0..=BRIDGED_MAX.min(bytes.len())).find_map(|o| parse(&bytes[o..]))
}

/// Source IPv4 of an IPv4 frame, if it is one (for per-source accounting).
pub fn ipv4_src(f: &[u8]) -> Option<u32> {
    (f.len() >= 34 && f[12..14] == ETHERTYPE_IPV4.to_be_bytes())
        .then(|| u32::from_be_bytes(f[26..30].try_into().expect("4 bytes")))
}

/// The flow id of a model DATA frame; `None` if `f` is not one.
pub fn data_flow_id(f: &[u8]) -> Option<u64> {
    let at = TRANSPORT_OFFSET + field::FLOW_ID.start;
    is_data_frame(f).then(|| u64::from_be_bytes(f[at..at + 8].try_into().expect("8 bytes")))
}

/// Whether a frame is a model DATA frame.
pub fn is_data_frame(f: &[u8]) -> bool {
    f.len() >= HEADER_BYTES
        && f[12..14] == ETHERTYPE_IPV4.to_be_bytes()
        && f[23] == 17
        && f[36..38] == UDP_PORT.to_be_bytes()
        && f[TRANSPORT_OFFSET + field::FLAGS.start] & DATA != 0
}

/// Format an IPv4 address.
pub fn ip_string(ip: u32) -> String {
    std::net::Ipv4Addr::from(ip).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A frame behind a 16-byte bridged header (BFC's record layout, starting 0xBF) is
    /// found at offset 16; a record with no frame in it is none.
    #[test]
    fn a_frame_is_found_behind_a_bridged_header() {
        let h = Header {
            src_ip: 0x0a00_0001,
            dst_ip: 0x0a01_0002,
            flags: DATA,
            flow_id: 77,
            ..Header::default()
        };
        let mut f = Vec::new();
        build(&mut f, &h, 10);
        let mut bridged = vec![0xbf, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        bridged.extend_from_slice(&f);
        assert_eq!(frame_in(&f).map(|h| h.flow_id), Some(77));
        assert_eq!(frame_in(&bridged).map(|h| h.flow_id), Some(77));
        assert_eq!(frame_in(&bridged[..16]), None);
    }

    #[test]
    fn frames_round_trip_and_parse_with_etherparse() {
        let h = Header {
            dst_mac: [2, 0, 0, 0, 0, 1],
            src_mac: [2, 0, 0, 0, 0, 2],
            src_ip: 0x0a00_0001,
            dst_ip: 0x0a01_0002,
            ecn: ECN_ECT0,
            flags: DATA | LAST,
            class: 3,
            queue: 3,
            seq: 7,
            echo: 0,
            flow_id: 42,
            ts_ps: 123_456,
            len: 1000,
            entropy: 16_380,
        };
        let mut buf = Vec::new();
        build(&mut buf, &h, 1000);
        assert_eq!(buf.len(), 1074);
        assert_eq!(parse(&buf), Some(h));
        let p = etherparse::SlicedPacket::from_ethernet(&buf).unwrap();
        let Some(etherparse::NetSlice::Ipv4(ip)) = p.net else {
            panic!()
        };
        assert_eq!(ip.header().to_header().ecn.value(), ECN_ECT0);
        assert_eq!(ip.header().to_header().dscp.value(), 3 << 3);
        assert_eq!(
            ip.header().to_header().calc_header_checksum(),
            ip.header().header_checksum()
        );
        // The source port: 49152 + (42 + 16380) mod 16384.
        let Some(etherparse::TransportSlice::Udp(udp)) = p.transport else {
            panic!()
        };
        assert_eq!(udp.source_port(), 49152 + 38);
        // A trimmed copy (only the headers left) is recognised as trimmed.
        let t = parse(&buf[..HEADER_BYTES]).unwrap();
        assert!(t.flags & TRIMMED != 0);
        assert_eq!(mss(1500), 1440);
    }
}
