//! The ideal flow completion time: what a flow would take alone in the network.
//!
//! For a flow of `S` bytes in packets `1..N` (frame lengths `ℓ_i`; all `ℓ_max` but the last)
//! along the shortest path from its source to its destination (links `0..k` with rates `r_j`
//! and propagation delays `d_j`, chips with pipe latencies `c_m` = ingress + egress pipe
//! cycles at the chip clock), with `b` the first link of lowest rate:
//!
//! ```text
//! ideal = Σ_j d_j + Σ_m c_m
//!       + Σ_{j<b} frame_time(ℓ_1, r_j)                        (first packet, store-and-forward up to b)
//!       + Σ_{i<N} slot_time(ℓ_i, r_b) + frame_time(ℓ_N, r_b)  (the whole flow through the bottleneck)
//!       + Σ_{j>b} frame_time(ℓ'_j, r_j)                       (last packet, store-and-forward after b)
//! ```
//! with `ℓ'_j = ℓ_{N−1}` when `r_j = r_b` and `N ≥ 2` (on a link as slow as the bottleneck
//! the last packet waits for its predecessor's slot to end, so a short last packet does not
//! catch up), else `ℓ_N`; `frame_time(ℓ, r)` is preamble + frame + FCS (padded to 64) at
//! `r`, and `slot_time` adds the 12-byte gap (`asic_model::mac`). For the usual case of one
//! rate everywhere and `N ≥ 2` this is
//! `Σ d + Σ c + (links − 1)·frame_time(ℓ_max) + Σ_{i<N} slot_time(ℓ_i) + frame_time(ℓ_N)`.
//!
//! This is exactly the time from the flow's start
//! to the last bit of its last packet reaching the receiver when the source sends back to
//! back at line rate and nothing else is in the network, except that each chip may add up to
//! one pipe clock cycle to align arrivals to its clock edges. The path is a shortest path in
//! the topology; the program's routing may choose another (equally long in the generated
//! shapes).

use crate::packet;
use crate::transport::Shape;
use asic_model::mac::{frame_time, slot_time};

/// One link of a path: (propagation delay ps, rate Gb/s, pipe latency ps of the chip the
/// link leads to, 0 for the receiving host).
pub type Hop = (u64, u32, u64);

/// The ideal FCT of a flow of `shape` along `hops`, per the module documentation.
pub fn ideal_fct(hops: &[Hop], shape: Shape) -> u64 {
    let len = |seq: u32| packet::data_frame_len(shape.len_of(seq) as usize);
    let first = len(0);
    let last = len(shape.packets - 1);
    let b = (0..hops.len())
        .min_by_key(|&j| (hops[j].1, j))
        .expect("a path has at least one link");
    let rb = hops[b].1;
    let mut t: u64 = hops.iter().map(|h| h.0 + h.2).sum();
    for h in &hops[..b] {
        t += frame_time(first, h.1).ps();
    }
    let full = slot_time(len(0), rb).ps();
    t += full * (shape.packets as u64 - 1);
    t += frame_time(last, rb).ps();
    // After the bottleneck the packets are spaced by their slot times at r_b; on an equally
    // fast link the last packet waits for its predecessor's slot to end, so that link adds
    // the predecessor's frame time; on a faster link it goes at once.
    let before_last = if shape.packets >= 2 {
        len(shape.packets - 2)
    } else {
        last
    };
    for h in &hops[b + 1..] {
        let l = if h.1 == rb { before_last } else { last };
        t += frame_time(l, h.1).ps();
    }
    t
}
