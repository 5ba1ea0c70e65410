//! IEEE 802.1Qbb priority-based flow control (PFC) frames: the one encoder and decoder of
//! the workspace (the chip's MACs and the network runtime's host NICs both use it).
//!
//! Layout (802.1Qbb clause 36.1.3, a MAC control frame of 802.3 Annex 31B), stored without
//! FCS and padded with zeros to the 60-byte minimum:
//!
//! | bytes | field |
//! |---|---|
//! | 0..6 | destination MAC [`PFC_DST`] = 01:80:C2:00:00:01 (link-local, never forwarded) |
//! | 6..12 | source MAC: the sending port (the chip's is [`port_mac`]) |
//! | 12..14 | EtherType [`MAC_CONTROL_ETHERTYPE`] = 0x8808 |
//! | 14..16 | opcode [`PFC_OPCODE`] = 0x0101 |
//! | 16..18 | class-enable vector: bit `c` set = the time for class `c` is valid |
//! | 18..34 | eight 16-bit pause times, class 0 first, in quanta of 512 bit times at the link's rate; 0 = resume now |
//!
//! All fields are big-endian. A receiver recognises MAC control frames by EtherType alone
//! (the destination address is not checked); other opcodes (802.3x PAUSE is 0x0001) are
//! reported by [`mac_control_opcode`] so the receiver can decide what to do with them.

/// PFC destination MAC (the MAC control multicast address).
pub const PFC_DST: [u8; 6] = [0x01, 0x80, 0xC2, 0x00, 0x00, 0x01];
/// MAC control EtherType.
pub const MAC_CONTROL_ETHERTYPE: u16 = 0x8808;
/// PFC opcode.
pub const PFC_OPCODE: u16 = 0x0101;
/// 802.3x PAUSE opcode (one time for the whole link).
pub const PAUSE_OPCODE: u16 = 0x0001;
/// Stored length of a PFC frame (the 64-byte minimum less the FCS).
pub const PFC_FRAME_LEN: usize = 60;
/// Bytes up to the last pause time: a shorter frame does not decode.
const PFC_BODY_LEN: usize = 34;

/// Per class, `Some(quanta)` if the class-enable bit is set.
pub type ClassTimes = [Option<u16>; 8];

/// Source MAC of the chip's PFC frames on `port`: `02:50:46:43:<port hi>:<port lo>`
/// (locally administered unicast; 0x50 0x46 0x43 is "PFC" in ASCII). The model's chips have
/// no identity of their own, so two chips use the same addresses on equal port numbers:
/// harmless, since MAC control frames never leave the link and receivers ignore the source.
pub fn port_mac(port: u16) -> [u8; 6] {
    let [hi, lo] = port.to_be_bytes();
    [0x02, 0x50, 0x46, 0x43, hi, lo]
}

/// Write a PFC frame from `src` with the per-class `times` into `buf` (cleared first; no
/// allocation once `buf` has held a frame).
pub fn encode(buf: &mut Vec<u8>, src: [u8; 6], times: &ClassTimes) {
    buf.clear();
    buf.extend_from_slice(&PFC_DST);
    buf.extend_from_slice(&src);
    buf.extend_from_slice(&MAC_CONTROL_ETHERTYPE.to_be_bytes());
    buf.extend_from_slice(&PFC_OPCODE.to_be_bytes());
    let cev: u16 = (0..8)
        .filter(|&c| times[c].is_some())
        .fold(0, |v, c| v | 1 << c);
    buf.extend_from_slice(&cev.to_be_bytes());
    for t in times {
        buf.extend_from_slice(&t.unwrap_or(0).to_be_bytes());
    }
    buf.resize(PFC_FRAME_LEN, 0);
}

/// A new PFC frame (see [`encode`]).
pub fn build(src: [u8; 6], times: &ClassTimes) -> Vec<u8> {
    let mut v = Vec::with_capacity(PFC_FRAME_LEN);
    encode(&mut v, src, times);
    v
}

/// The opcode of a MAC control frame (EtherType 0x8808); `None` for any other frame or one
/// too short to hold an opcode.
pub fn mac_control_opcode(f: &[u8]) -> Option<u16> {
    if f.len() < 16 || u16::from_be_bytes([f[12], f[13]]) != MAC_CONTROL_ETHERTYPE {
        return None;
    }
    Some(u16::from_be_bytes([f[14], f[15]]))
}

/// Decode a PFC frame; `None` if `f` is not one (another EtherType or opcode, or too short
/// for its eight pause times).
pub fn decode(f: &[u8]) -> Option<ClassTimes> {
    if f.len() < PFC_BODY_LEN || mac_control_opcode(f)? != PFC_OPCODE {
        return None;
    }
    let cev = u16::from_be_bytes([f[16], f[17]]);
    let mut t = [None; 8];
    for (c, slot) in t.iter_mut().enumerate() {
        if cev & (1 << c) != 0 {
            let o = 18 + 2 * c;
            *slot = Some(u16::from_be_bytes([f[o], f[o + 1]]));
        }
    }
    Some(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip_and_have_the_802_1qbb_layout() {
        let mut t = [None; 8];
        t[3] = Some(0xffff);
        t[5] = Some(0);
        let f = build(port_mac(0x0102), &t);
        assert_eq!(f.len(), 60);
        assert_eq!(f[..6], PFC_DST);
        assert_eq!(f[6..12], [0x02, 0x50, 0x46, 0x43, 0x01, 0x02]);
        assert_eq!(f[12..18], [0x88, 0x08, 0x01, 0x01, 0x00, 0b0010_1000]);
        assert_eq!(f[18 + 6..18 + 8], [0xff, 0xff]);
        assert!(f[34..].iter().all(|&b| b == 0));
        assert_eq!(decode(&f), Some(t));
        assert_eq!(mac_control_opcode(&f), Some(PFC_OPCODE));
        let mut pause = f.clone();
        pause[14..16].copy_from_slice(&PAUSE_OPCODE.to_be_bytes());
        assert_eq!(mac_control_opcode(&pause), Some(PAUSE_OPCODE));
        assert_eq!(decode(&pause), None);
        assert_eq!(decode(&f[..33]), None);
        let mut ip = f;
        ip[12..14].copy_from_slice(&[0x08, 0x00]);
        assert_eq!(mac_control_opcode(&ip), None);
    }
}
