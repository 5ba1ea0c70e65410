//! PFC (IEEE 802.1Qbb) arithmetic and the events the TM raises towards the chip.
//!
//! Ingress accounting (in the TM): every buffered packet is counted against its
//! (ingress port, priority). On a lossless (port, priority) (a [`crate::config::PfcGroup`]):
//! - XOFF is asserted when the count **exceeds** `xoff_cells`: one [`PfcEvent`] with
//!   `xoff: true`, however long it stays above;
//! - while asserted, arriving packets of that (port, priority) are stored in its headroom;
//!   a packet that finds the shared pool full also goes to headroom and asserts XOFF;
//!   exhausted headroom drops ([`crate::Refusal::HeadroomExhausted`]);
//! - XON is raised when the count falls **below** `xoff_cells − hysteresis_cells`: one event
//!   with `xoff: false`.
//!
//! The chip turns events into frames: on XOFF, send a PFC frame for the priority with the
//! configured quanta and re-send it every [`refresh_interval_ps`] while
//! [`crate::TrafficManager::is_xoff`] holds; on XON, send quanta 0. A port receiving a frame
//! calls [`crate::TrafficManager::pause`] with `until = now + quanta_ps(quanta, gbps)` (0 quanta:
//! [`crate::TrafficManager::resume`]) when the frame's last bit is in; the packets already
//! past the TM still leave, and the port must go quiet within [`reaction_ps`] of the frame's
//! arrival (the profile's bound).

/// The TM asserted or released a pause for an ingress port and priority.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PfcEvent {
    /// When (the enqueue or dequeue that crossed the threshold), picoseconds.
    pub time_ps: u64,
    /// The ingress port to send the frame out of (to its link partner).
    pub ingress_port: u16,
    /// The priority.
    pub priority: u8,
    /// `true`: XOFF (pause); `false`: XON (resume).
    pub xoff: bool,
}

/// Bits in one pause quantum.
pub const BITS_PER_QUANTUM: u64 = 512;

/// Duration of `quanta` pause quanta at `gbps`, picoseconds (512 bit times each; one bit at
/// `g` Gb/s lasts `1000/g` ps), rounded down.
pub fn quanta_ps(quanta: u32, gbps: u32) -> u64 {
    quanta as u64 * BITS_PER_QUANTUM * 1000 / gbps.max(1) as u64
}

/// How often a pause for `quanta` should be re-sent while XOFF holds: half its duration, so
/// the partner never sees it expire even if one frame is lost or late (assumption: a common
/// choice in NICs and switches; 802.1Qbb leaves it to the implementation).
pub fn refresh_interval_ps(quanta: u32, gbps: u32) -> u64 {
    (quanta_ps(quanta, gbps) / 2).max(1)
}

/// Longest time a port takes to stop after a PFC frame reached it: the profile's
/// `pause_reaction_quanta` at the port's rate.
pub fn reaction_ps(spec: &crate::spec::TmSpec, gbps: u32) -> u64 {
    quanta_ps(spec.pause_reaction_quanta, gbps)
}
