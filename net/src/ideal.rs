//! The ideal flow completion time: what a flow would take alone in the network.
//!
//! A flow of `N` packets (frames of `ℓ` bytes, the last of `ℓ_N ≤ ℓ`) crosses links
//! `0..k` (rates `r_j`, propagation delays `d_j`, each leading to a chip of pipe latency
//! `c_j` = ingress + egress pipe cycles at its clock, or to the receiving host, `c = 0`).
//! The source sends back to back; each link carries the packets in order, a packet starting
//! on link `j` once it has wholly arrived over link `j − 1` (store-and-forward) and the
//! previous packet's slot on link `j` has ended. With `F_j = frame_time(ℓ, r_j)`,
//! `S_j = slot_time(ℓ, r_j)` (the frame and the 12-byte gap) and `L_j = frame_time(ℓ_N,
//! r_j)` (`asic_model::mac`: preamble, frame, FCS, padding to 64 bytes), the last bit of the
//! last packet reaches the receiver at the longest of the ways a packet can hold up the
//! next (max-plus algebra over the packets × links grid: a step to the next link costs the
//! packet's frame time, a step to the next packet on a link costs the slot):
//!
//! ```text
//! ideal = Σ_j d_j + Σ_j c_j + Σ_j L_j                                       (N = 1)
//! ideal = Σ_j d_j + Σ_j c_j
//!       + max over j of [ Σ_{m<j} F_m + S_j + (N − 2)·max_{m≤j} S_m + Σ_{m≥j} L_m ]  (N ≥ 2)
//! ```
//! The full packets queue behind the slowest link up to `j`; the last one waits on link `j`
//! behind its predecessor and runs alone after it. With one rate everywhere this is
//! `Σ d + Σ c + (k − 1)·F + (N − 1)·S + L`. On a path that speeds up and slows down again
//! (100G hosts under 400G uplinks) the maximum is at the last slow link: the last packet,
//! however short, waits there for its full-size predecessor.
//!
//! This is exactly the time from the flow's start to the last bit of its last packet
//! reaching the receiver when nothing else is in the network, except that each chip may
//! add up to one pipe clock cycle to align arrivals to its clock edges. The path is a
//! shortest path in the topology; the program's routing may choose another (equally long in
//! the generated shapes).

use crate::packet;
use crate::transport::Shape;
use asic_model::mac::{frame_time, slot_time};

/// One link of a path: (propagation delay ps, rate Gb/s, pipe latency ps of the chip the
/// link leads to, 0 for the receiving host).
pub type Hop = (u64, u32, u64);

/// The ideal FCT of a flow of `shape` along `hops`, per the module documentation.
pub fn ideal_fct(hops: &[Hop], shape: Shape) -> u64 {
    let fixed: u64 = hops.iter().map(|h| h.0 + h.2).sum();
    let last = packet::data_frame_len(shape.len_of(shape.packets - 1) as usize);
    let last_times: Vec<u64> = hops.iter().map(|h| frame_time(last, h.1).ps()).collect();
    if shape.packets == 1 {
        return fixed + last_times.iter().sum::<u64>();
    }
    let full = packet::data_frame_len(shape.len_of(0) as usize);
    let queued = shape.packets as u64 - 2;
    let mut before = 0; // Σ_{m<j} F_m
    let mut slowest = 0; // max_{m≤j} S_m
    let mut after: u64 = last_times.iter().sum(); // Σ_{m≥j} L_m
    let mut longest = 0;
    for (j, h) in hops.iter().enumerate() {
        let slot = slot_time(full, h.1).ps();
        slowest = slowest.max(slot);
        longest = longest.max(before + slot + queued * slowest + after);
        before += frame_time(full, h.1).ps();
        after -= last_times[j];
    }
    fixed + longest
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The packets × links recurrence the formula solves: a packet starts on a link when it
    /// has arrived over the previous one and the previous packet's slot there has ended.
    fn by_recurrence(hops: &[Hop], shape: Shape) -> u64 {
        let mut end_prev_link: Vec<u64> = vec![0; shape.packets as usize];
        for (j, h) in hops.iter().enumerate() {
            let mut free = 0;
            for (i, end) in end_prev_link.iter_mut().enumerate() {
                let len = packet::data_frame_len(shape.len_of(i as u32) as usize);
                let arrive = if j == 0 { 0 } else { *end };
                let start = arrive.max(free);
                *end = start + frame_time(len, h.1).ps() + h.0 + h.2;
                free = start + slot_time(len, h.1).ps();
            }
        }
        end_prev_link[shape.packets as usize - 1]
    }

    #[test]
    fn the_formula_is_the_recurrence_on_mixed_speed_paths() {
        let paths: [&[Hop]; 5] = [
            &[(1000, 10, 50), (1000, 10, 0)],
            &[
                (500, 100, 20),
                (500, 400, 20),
                (500, 400, 20),
                (500, 100, 0),
            ],
            &[(500, 400, 20), (500, 100, 20), (500, 400, 0)],
            &[(100, 25, 7), (300, 100, 9), (200, 10, 11), (100, 40, 0)],
            &[(0, 100, 0)],
        ];
        for hops in paths {
            for size in [1, 64, 1440, 1441, 3000, 100_000] {
                let shape = Shape::new(size, 1440);
                assert_eq!(
                    ideal_fct(hops, shape),
                    by_recurrence(hops, shape),
                    "{size} B over {hops:?}"
                );
            }
        }
    }
}
