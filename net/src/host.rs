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
//! rate (0 resumes) after the frame being sent; per-queue pause frames ([`crate::ctrl`])
//! pause or resume one data queue until told otherwise; flow-group pause frames stop the flows
//! of a group (a flow whose group is paused is set aside until every group it is in has
//! resumed). Receiving takes the whole frame (the
//! host acts on a frame when its last bit has arrived). A flow's data queue is chosen by
//! [`nic_queue_for`] (the hook for BFC's upstream-queue assignment).
//!
//! **The NIC omits:** host processing and PCIe/DMA delays (the NIC acts at once), interrupt
//! moderation, segmentation offload, any limit on the number of flows or on buffer memory,
//! receive-side queues and drops (a host accepts everything), and generating pause frames
//! (hosts never send PFC or per-queue pauses).
//!
//! This module holds the host's and the NIC's state; what they do on each event is in the
//! runtime's `sim/nic.rs`.
//!
//! **The application** offers flows at their start times ([`crate::traffic`]) and counts a
//! flow complete when the receiver holds every byte; it does no request/response pairing.

use crate::topology::End;
use crate::traffic::FlowSpec;
use crate::transport::{Receiver, Sender, Shape};
use pipelines::time::Time;
use std::collections::{BTreeMap, VecDeque};

/// The NIC data queue of the `k`-th flow a host sends: its class's queues (`q` with
/// `q mod 8 = class`) in turn, so while a host has at most `nic_queues / 8` flows of a class
/// they never share a queue. The queue is the upstreamQ the host stamps (BFC): a per-queue
/// pause from the first switch stops exactly the flows in that queue.
pub fn nic_queue_for(k: u64, class: u8, nic_queues: u16) -> u16 {
    let per_class = (nic_queues / 8).max(1) as u64;
    class as u16 + 8 * (k % per_class) as u16
}

/// A control packet waiting at a NIC.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CtrlPkt {
    pub(crate) flow: u32,
    pub(crate) flags: u8,
    pub(crate) seq: u32,
    pub(crate) echo: u32,
    pub(crate) ts_ps: u64,
}

#[derive(Clone)]
pub(crate) struct Host {
    pub(crate) name: String,
    pub(crate) ip: u32,
    pub(crate) mac: [u8; 6],
    pub(crate) gbps: u32,
    pub(crate) delay_ps: u64,
    pub(crate) peer: End,
    pub(crate) peer_mac: [u8; 6],
    pub(crate) busy_until: Time,
    pub(crate) tx_scheduled: bool,
    pub(crate) class_paused_until: [Time; 8],
    pub(crate) class_paused: [bool; 8],
    pub(crate) queue_paused: Vec<bool>,
    /// Per flow group: its pauses not yet resumed (flow-group pause frames); absent: 0.
    pub(crate) group_paused: BTreeMap<u16, u32>,
    /// Flows set aside while one of their groups is paused.
    pub(crate) held: Vec<u32>,
    pub(crate) ctrl: [VecDeque<CtrlPkt>; 8],
    pub(crate) queues: Vec<VecDeque<u32>>,
    pub(crate) rr: [usize; 8],
    pub(crate) pulls: VecDeque<u32>,
    pub(crate) pull_next_at: Time,
    pub(crate) pull_scheduled: bool,
    pub(crate) packets_sent: u64,
    pub(crate) packets_received: u64,
    /// Index of the capture of this host's port, if captured.
    pub(crate) capture: Option<usize>,
}

pub(crate) struct Flow {
    pub(crate) spec: FlowSpec,
    pub(crate) shape: Shape,
    pub(crate) sender: Option<Box<dyn Sender>>,
    pub(crate) receiver: Receiver,
    pub(crate) end: Option<Time>,
    pub(crate) packets_sent: u64,
    pub(crate) retx: u64,
    pub(crate) timer_at: Option<Time>,
    pub(crate) wake_at: Option<Time>,
    pub(crate) in_ring: bool,
    pub(crate) queue: u16,
    pub(crate) pulls_sent: u32,
    /// The least time from this flow's PULL to the next its receiver's pacer releases
    /// ([`crate::transport::ndp::NdpSpec::pull_gap`]; zero for transports that do not pull).
    pub(crate) pull_gap: Time,
    pub(crate) ideal_ps: u64,
    /// The groups flow-group pause frames name it by (none unless the network gives them).
    pub(crate) groups: Box<[u16]>,
    /// Set aside in its host's `held` while one of its groups is paused.
    pub(crate) held: bool,
}

impl Flow {
    /// A flow not started yet: `spec` cut into packets as `shape`, its NIC data queue, the
    /// gap between its receiver's PULLs and its ideal FCT.
    pub(crate) fn new(
        spec: FlowSpec,
        shape: Shape,
        queue: u16,
        pull_gap: Time,
        ideal_ps: u64,
    ) -> Flow {
        Flow {
            receiver: Receiver::new(spec.transport.ack_mode(), shape.packets),
            spec,
            shape,
            sender: None,
            end: None,
            packets_sent: 0,
            retx: 0,
            timer_at: None,
            wake_at: None,
            in_ring: false,
            queue,
            pulls_sent: 0,
            pull_gap,
            ideal_ps,
            groups: Box::default(),
            held: false,
        }
    }
}
