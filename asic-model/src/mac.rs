//! Ethernet framing on the wire: what a frame costs in time beyond its bytes.
//!
//! Modelled overhead (IEEE 802.3, clause 3 and 4): every frame is preceded by a 7-byte
//! preamble and a 1-byte start-of-frame delimiter, carries a 4-byte FCS after its bytes,
//! is padded so that bytes plus FCS are at least 64, and is followed by a 12-byte
//! inter-frame gap. Frames in pcaps and in the model's buffers have no FCS; the MAC adds it
//! on the wire (its time is counted, its bytes are not stored).

use pipelines::time::Time;

/// Preamble (7) and start-of-frame delimiter (1).
pub const PREAMBLE_SFD_BYTES: u64 = 8;
/// Frame check sequence.
pub const FCS_BYTES: u64 = 4;
/// Minimum frame including FCS.
pub const MIN_FRAME_BYTES: u64 = 64;
/// Minimum inter-frame gap.
pub const IFG_BYTES: u64 = 12;

/// Bytes a frame of `len` stored bytes occupies on the wire, from the first preamble byte
/// to the last FCS byte (no inter-frame gap).
#[inline]
pub fn wire_bytes(len: usize) -> u64 {
    PREAMBLE_SFD_BYTES + (len as u64 + FCS_BYTES).max(MIN_FRAME_BYTES)
}

/// Time from the first preamble bit to the last FCS bit.
#[inline]
pub fn frame_time(len: usize, gbps: u32) -> Time {
    Time::serialization(wire_bytes(len), gbps)
}

/// Time the port is busy with the frame: the frame plus the inter-frame gap.
#[inline]
pub fn slot_time(len: usize, gbps: u32) -> Time {
    Time::serialization(wire_bytes(len) + IFG_BYTES, gbps)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minimum_frames_take_84_byte_times() {
        // 60 stored bytes + FCS = 64; + 8 preamble + 12 IFG = 84 bytes = 6.72 ns at 100G.
        assert_eq!(slot_time(60, 100), Time(6720));
        assert_eq!(slot_time(14, 100), Time(6720));
        assert_eq!(frame_time(60, 100), Time(5760));
        // 1500 stored bytes: 1504 + 8 + 12 = 1524 bytes.
        assert_eq!(slot_time(1500, 10), Time(1524 * 800));
    }
}
