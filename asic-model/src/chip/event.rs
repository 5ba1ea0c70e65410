//! The events of the life of a packet, and of the MAC, the control plane and the plumbing
//! around it: what the chip schedules on the event kernel and runs in [`super::Chip::handle`].
//!
//! An event names its packet or port by a small handle, never carries the packet: events are
//! moved on every sift of the event heap, so each fits in 8 bytes, and what one needs beyond
//! its kind and handle lives in the chip (a packet's issue cycle, an application's firings).

/// Events of one chip.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChipEvent {
    /// A frame has been received whole by its ingress MAC.
    Arrive {
        /// Packet handle.
        pkt: u32,
    },
    /// A packet leaves the ingress deparser (the cycle it was issued is in the packet).
    IngressDone {
        /// Packet handle.
        pkt: u32,
    },
    /// The TM scheduler serves an egress port.
    Dequeue {
        /// The port.
        port: u16,
        /// Which scheduling of the port this is (a later one supersedes it).
        seq: u32,
    },
    /// A MAC control frame has been received whole (its last bit is in).
    MacControl {
        /// The port.
        port: u16,
    },
    /// Re-send the PFC pause for (port, priority) if the TM still asserts XOFF.
    PfcRefresh {
        /// The port the pause frames go out of (the paused traffic's ingress port).
        port: u16,
        /// The priority.
        priority: u8,
        /// Which XOFF episode the timer belongs to (a stale timer does nothing).
        epoch: u32,
    },
    /// A pause received on a port may have run out (for the pause log).
    PauseEnd {
        /// The port.
        port: u16,
        /// The priority.
        priority: u8,
    },
    /// A scheduled control-plane operation takes effect (see [`super::Chip::schedule_control`]).
    Control {
        /// Index into the chip's scheduled operations.
        op: u32,
    },
    /// A packet leaves the egress deparser (the cycle it was issued is in the packet).
    EgressDone {
        /// Packet handle.
        pkt: u32,
    },
    /// An advanced-flow-control request reaches the TM: pause or resume a queue.
    AfcApply {
        /// The port.
        port: u16,
        /// The queue.
        queue: u16,
        /// Pause (true) or resume (false).
        paused: bool,
    },
    /// A packet-generator application's periodic timer fires (the how-manieth is counted
    /// by the chip).
    PktGenTick {
        /// Index into `ChipConfig::pktgen`.
        app: u16,
    },
    /// A control-plane agent runs (see [`super::Chip::add_agent`]).
    Agent {
        /// Index into the chip's agents.
        agent: u16,
    },
    /// A packet-generator application's one-shot trigger number `i` fires.
    PktGenShot {
        /// Index into `ChipConfig::pktgen`.
        app: u16,
        /// Index into the application's `at_ns`.
        i: u32,
    },
}

#[cfg(test)]
mod tests {
    use super::ChipEvent;

    /// The event heap moves events on every sift: what an event needs beyond its kind and
    /// handle lives in the chip (the packet's issue cycle, an application's firings).
    #[test]
    fn an_event_fits_in_8_bytes() {
        assert!(std::mem::size_of::<ChipEvent>() <= 8);
    }
}
