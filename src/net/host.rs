//! The host model: an application offering flows, transports, and a NIC.
//!
//! **The NIC models:** one port at the link's rate with the chip's Ethernet framing
//! (`asic_model::mac`: 8 bytes of preamble and SFD, 4 bytes of FCS, padding to 64 bytes, a
//! 12-byte inter-frame gap), so host frames occupy the wire exactly as a chip's do; transmit
//! queues: for each of the 8 priority classes a FIFO of control packets (ACK, NACK, PULL) and
//! `nic_queues / 8` data queues (queue `q` belongs to class `q mod 8`); each data queue holds
//! the flows that have a packet ready. When the wire is free the NIC serves the highest class
//! that is not paused: its control FIFO first, then its data queues round-robin (skipping
//! queues paused by a per-queue pause frame), and within a queue the flows round-robin, one
//! packet per turn; the packet is made at that instant (the transport decides what it is
//! then). Received 802.1Qbb PFC frames pause a class for `quanta × 512` bit times at the link
//! rate (0 resumes) after the frame being sent; per-queue pause frames ([`super::ctrl`])
//! pause or resume one data queue until told otherwise. Receiving takes the whole frame (the
//! host acts on a frame when its last bit has arrived). A flow's data queue is chosen by
//! [`nic_queue_for`] (the hook for BFC's upstream-queue assignment).
//!
//! **The NIC omits:** host processing and PCIe/DMA delays (the NIC acts at once), interrupt
//! moderation, segmentation offload, any limit on the number of flows or on buffer memory,
//! receive-side queues and drops (a host accepts everything), and generating pause frames
//! (hosts never send PFC or per-queue pauses).
//!
//! **The application** offers flows at their start times ([`super::traffic`]) and counts a
//! flow complete when the receiver holds every byte; it does no request/response pairing.

/// The NIC data queue a flow uses: by default the queue of its class (`class`, which belongs
/// to class `class mod 8`). This is the hook where a BFC-style host would write the
/// upstream queue the switch assigned; it must return a queue of the same class.
pub fn nic_queue_for(_flow_id: u64, class: u8, _nic_queues: u16) -> u16 {
    class as u16
}
