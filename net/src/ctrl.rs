//! Link-level control frames a host NIC obeys: 802.1Qbb PFC and the model's per-queue
//! pause/resume frame for BFC-style control.
//!
//! ## PFC (IEEE 802.1Qbb)
//! Encoded and decoded by [`asic_model::pfc_frame`] (the layout is documented there; the
//! chips' MACs use the same code). A time is in quanta of 512 bit times at the link's rate;
//! 0 means resume now. A pause takes effect after the frame the NIC is sending (if any).
//!
//! ## Per-queue pause frame (model-specific)
//! For BFC-style upstream queue control (Goyal et al., "Backpressure Flow Control", NSDI
//! 2022) a switch tells its upstream neighbour to pause or resume one queue. Format:
//!
//! | bytes | field |
//! |---|---|
//! | 0..6 | destination MAC: 01:80:C2:00:00:01 (link-local, not forwarded) |
//! | 6..12 | source MAC: the sender's port |
//! | 12..14 | EtherType [`QUEUE_PAUSE_ETHERTYPE`] = 0x88B5 (IEEE 802 local experimental 1) |
//! | 14 | opcode: 1 pause, 2 resume, 3 bitmap refresh |
//! | 15 | reserved, 0 |
//! | 16..18 | queue id (u16): the NIC queue (opcodes 1, 2) or the first queue the bitmap covers (opcode 3) |
//! | 18..20 | bitmap length in bytes `n` (opcode 3; 0 otherwise) |
//! | 20..20+n | bitmap (opcode 3): bit `i` (byte `i/8`, LSB first) = queue `queue_id + i` is paused; queues the bitmap covers and does not set are resumed |
//!
//! The frame is padded to the 60-byte minimum. Nothing expires: a paused queue stays paused
//! until a resume or a refresh clears it (BFC refreshes periodically to recover from loss).

use asic_model::pfc_frame;
/// PFC destination MAC (also used by the per-queue frame), MAC control EtherType, PFC opcode.
pub use asic_model::pfc_frame::{MAC_CONTROL_ETHERTYPE, PFC_DST, PFC_OPCODE};
/// The per-queue pause frame's EtherType.
pub const QUEUE_PAUSE_ETHERTYPE: u16 = 0x88B5;
/// Opcode: pause a queue.
pub const OP_PAUSE: u8 = 1;
/// Opcode: resume a queue.
pub const OP_RESUME: u8 = 2;
/// Opcode: set the paused state of a range of queues from a bitmap.
pub const OP_BITMAP: u8 = 3;

/// A parsed control frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ctrl {
    /// PFC: per class, `Some(quanta)` if the class-enable bit is set.
    Pfc([Option<u16>; 8]),
    /// Pause one queue.
    PauseQueue(u16),
    /// Resume one queue.
    ResumeQueue(u16),
    /// Queues `first..first + 8 * bitmap.len()`: paused where the bit is set.
    Bitmap {
        /// First queue covered.
        first: u16,
        /// The bits.
        bitmap: Vec<u8>,
    },
}

/// Parse a control frame; `None` if the frame is not one.
pub fn parse(f: &[u8]) -> Option<Ctrl> {
    if f.len() < 14 {
        return None;
    }
    let et = u16::from_be_bytes([f[12], f[13]]);
    match et {
        MAC_CONTROL_ETHERTYPE => pfc_frame::decode(f).map(Ctrl::Pfc),
        QUEUE_PAUSE_ETHERTYPE => {
            if f.len() < 20 {
                return None;
            }
            let q = u16::from_be_bytes([f[16], f[17]]);
            match f[14] {
                OP_PAUSE => Some(Ctrl::PauseQueue(q)),
                OP_RESUME => Some(Ctrl::ResumeQueue(q)),
                OP_BITMAP => {
                    let n = u16::from_be_bytes([f[18], f[19]]) as usize;
                    let bitmap = f.get(20..20 + n)?.to_vec();
                    Some(Ctrl::Bitmap { first: q, bitmap })
                }
                _ => None,
            }
        }
        _ => None,
    }
}

/// Whether a frame is a control frame (by EtherType), so it is not counted as data.
pub fn is_ctrl(f: &[u8]) -> bool {
    f.len() >= 14 && {
        let et = u16::from_be_bytes([f[12], f[13]]);
        et == MAC_CONTROL_ETHERTYPE || et == QUEUE_PAUSE_ETHERTYPE
    }
}

fn padded(mut v: Vec<u8>) -> Vec<u8> {
    if v.len() < 60 {
        v.resize(60, 0);
    }
    v
}

/// Build a PFC frame from `src` with the given per-class times (`None`: class not enabled).
pub fn build_pfc(src: [u8; 6], times: [Option<u16>; 8]) -> Vec<u8> {
    pfc_frame::build(src, &times)
}

/// Build a per-queue pause (`pause`) or resume frame.
pub fn build_queue(src: [u8; 6], queue: u16, pause: bool) -> Vec<u8> {
    let mut v = Vec::with_capacity(60);
    v.extend_from_slice(&PFC_DST);
    v.extend_from_slice(&src);
    v.extend_from_slice(&QUEUE_PAUSE_ETHERTYPE.to_be_bytes());
    v.push(if pause { OP_PAUSE } else { OP_RESUME });
    v.push(0);
    v.extend_from_slice(&queue.to_be_bytes());
    v.extend_from_slice(&0u16.to_be_bytes());
    padded(v)
}

/// Build a bitmap refresh frame.
pub fn build_bitmap(src: [u8; 6], first: u16, bitmap: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(60);
    v.extend_from_slice(&PFC_DST);
    v.extend_from_slice(&src);
    v.extend_from_slice(&QUEUE_PAUSE_ETHERTYPE.to_be_bytes());
    v.push(OP_BITMAP);
    v.push(0);
    v.extend_from_slice(&first.to_be_bytes());
    v.extend_from_slice(&(bitmap.len() as u16).to_be_bytes());
    v.extend_from_slice(bitmap);
    padded(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_frames_round_trip() {
        let src = [2, 0, 0, 0, 0, 9];
        let mut t = [None; 8];
        t[3] = Some(0xffff);
        t[5] = Some(0);
        let f = build_pfc(src, t);
        assert_eq!(f.len(), 60);
        assert_eq!(parse(&f), Some(Ctrl::Pfc(t)));
        assert!(is_ctrl(&f));
        assert_eq!(
            parse(&build_queue(src, 17, true)),
            Some(Ctrl::PauseQueue(17))
        );
        assert_eq!(
            parse(&build_queue(src, 17, false)),
            Some(Ctrl::ResumeQueue(17))
        );
        assert_eq!(
            parse(&build_bitmap(src, 8, &[0b101])),
            Some(Ctrl::Bitmap {
                first: 8,
                bitmap: vec![0b101]
            })
        );
    }
}
