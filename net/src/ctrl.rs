//! Link-level control frames a host NIC obeys: 802.1Qbb PFC, the model's per-queue
//! pause/resume frame for BFC-style control, and its flow-group pause frame for control by
//! congestion root (Pyrrha).
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
//!
//! ## Flow-group pause frame (model-specific)
//! For flow control by congestion root (Pyrrha: Zhang et al., "Analysis of Pyrrha", ToN 2025)
//! a switch pauses the flows that cross one port of the network, wherever they queue: switches
//! between themselves, and, if the hosts react, a switch to its hosts. A host pauses every
//! flow of the group the frame names; each flow's groups come from the mechanism's deployment
//! (`Network::flow_groups`: for Pyrrha, the root ids of the ports on its path). Format:
//!
//! | bytes | field |
//! |---|---|
//! | 0..6 | destination MAC: 01:80:C2:00:00:01 |
//! | 6..12 | source MAC: the sender's port |
//! | 12..14 | EtherType [`GROUP_PAUSE_ETHERTYPE`] = 0x88B6 (IEEE 802 local experimental 2) |
//! | 14 | opcode: 1 pause, 2 resume, 3 merge |
//! | 15 | hops from the receiver to the group's port (for switches; a host ignores it) |
//! | 16..18 | group (u16): the group paused or resumed; of a merge, the new group |
//! | 18..20 | of a merge, the old group: its pause ends (the new group's is its own frame's) |
//! | 20 | of a merge, the old group's hops |
//! | 21 | reserved, 0 |
//!
//! A host counts each group's pauses not yet resumed (a switch may pause one group from
//! several of its queues) and sends a flow while none of its groups is paused.

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
/// The flow-group pause frame's EtherType.
pub const GROUP_PAUSE_ETHERTYPE: u16 = 0x88B6;
/// Flow-group opcodes: pause, resume, merge.
pub const OP_GROUP_PAUSE: u8 = 1;
/// See [`OP_GROUP_PAUSE`].
pub const OP_GROUP_RESUME: u8 = 2;
/// See [`OP_GROUP_PAUSE`].
pub const OP_GROUP_MERGE: u8 = 3;

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
    /// Pause the flows of a group.
    PauseGroup(u16),
    /// End one pause of a group.
    ResumeGroup(u16),
    /// The old group's pause ends, replaced by the new group (whose flows a pause of its own
    /// stops).
    MergeGroup {
        /// The group whose pause ends.
        old: u16,
        /// The group that replaces it.
        new: u16,
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
        GROUP_PAUSE_ETHERTYPE => {
            let f = f.get(..22)?;
            let (group, old) = (
                u16::from_be_bytes([f[16], f[17]]),
                u16::from_be_bytes([f[18], f[19]]),
            );
            match f[14] {
                OP_GROUP_PAUSE => Some(Ctrl::PauseGroup(group)),
                OP_GROUP_RESUME => Some(Ctrl::ResumeGroup(group)),
                OP_GROUP_MERGE => Some(Ctrl::MergeGroup { old, new: group }),
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
        et == MAC_CONTROL_ETHERTYPE || et == QUEUE_PAUSE_ETHERTYPE || et == GROUP_PAUSE_ETHERTYPE
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

/// Build a flow-group frame: `op` ([`OP_GROUP_PAUSE`], [`OP_GROUP_RESUME`],
/// [`OP_GROUP_MERGE`]) on `group` `hop` hops away; a merge's old group and its hops.
pub fn build_group(
    src: [u8; 6],
    op: u8,
    (group, hop): (u16, u8),
    (old, old_hop): (u16, u8),
) -> Vec<u8> {
    let mut v = Vec::with_capacity(60);
    v.extend_from_slice(&PFC_DST);
    v.extend_from_slice(&src);
    v.extend_from_slice(&GROUP_PAUSE_ETHERTYPE.to_be_bytes());
    v.extend_from_slice(&[op, hop]);
    v.extend_from_slice(&group.to_be_bytes());
    v.extend_from_slice(&old.to_be_bytes());
    v.extend_from_slice(&[old_hop, 0]);
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

    /// A flow-group MERGE, byte by byte: new group 0x0102 two hops away, old group 0x0304
    /// one hop away; and what each opcode parses to.
    #[test]
    fn a_flow_group_frame_is_laid_out_as_documented() {
        let src = [2, 0xfe, 0, 1, 0, 2];
        let f = build_group(src, OP_GROUP_MERGE, (0x0102, 2), (0x0304, 1));
        assert_eq!(
            f[..22],
            [
                0x01, 0x80, 0xc2, 0, 0, 1, 2, 0xfe, 0, 1, 0, 2, 0x88, 0xb6, 3, 2, 0x01, 0x02, 0x03,
                0x04, 1, 0
            ]
        );
        assert_eq!(f.len(), 60);
        assert!(is_ctrl(&f));
        assert_eq!(
            parse(&f),
            Some(Ctrl::MergeGroup {
                old: 0x0304,
                new: 0x0102
            })
        );
        let pause = build_group(src, OP_GROUP_PAUSE, (7, 1), (0, 0));
        assert_eq!(parse(&pause), Some(Ctrl::PauseGroup(7)));
        let resume = build_group(src, OP_GROUP_RESUME, (7, 1), (0, 0));
        assert_eq!(parse(&resume), Some(Ctrl::ResumeGroup(7)));
        assert_eq!(parse(&build_group(src, 9, (7, 1), (0, 0))), None);
        assert_eq!(parse(&pause[..21]), None, "too short");
    }
}
