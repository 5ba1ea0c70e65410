//! Which partition (thread) runs each chip and host, and the lookahead window.
//!
//! A host runs with the chip its link goes to, and chips joined by a link with no
//! propagation delay run together, so every link between two partitions has a delay of at
//! least the **window**: the smallest positive delay of any chip-to-chip link (1 µs when
//! there is none). A frame sent at `t` reaches another partition at `t + window` or later,
//! so partitions run the events of `[T, T + window)` independently, `T` being the earliest
//! pending event of all, and exchange frames between windows.
//!
//! The window does not depend on the partitioning (it is the same for one thread as for
//! many), so the windows, and with them every output, are the same for every thread count.
//! The partitioning only decides the load each thread carries: groups of chips are dealt,
//! heaviest first, to the partition with the least load, a chip weighing one plus its hosts.

use crate::topology::{End, Topology};
use pipelines::time::Time;

/// The window when no chip-to-chip link has a delay (one chip, or only zero-delay links).
const DEFAULT_WINDOW: Time = Time(1_000_000);

/// Where each node runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Plan {
    /// Per chip: its partition.
    pub(crate) chip_part: Vec<usize>,
    /// Per host: its partition (its chip's).
    pub(crate) host_part: Vec<usize>,
    /// How many partitions.
    pub(crate) parts: usize,
    /// The lookahead window.
    pub(crate) window: Time,
}

/// The window of `topo` (see the module documentation).
pub(crate) fn window(topo: &Topology) -> Time {
    topo.links
        .iter()
        .filter(|l| matches!((l.a, l.b), (End::Chip(..), End::Chip(..))) && l.delay_ps > 0)
        .map(|l| Time(l.delay_ps))
        .min()
        .unwrap_or(DEFAULT_WINDOW)
}

/// Split `topo` over at most `threads` partitions (at least one).
pub(crate) fn plan(topo: &Topology, threads: usize) -> Plan {
    let chips = topo.spec.chips.len();
    // Chips joined by zero-delay links form one group (union-find, smallest index as root).
    let mut root: Vec<usize> = (0..chips).collect();
    fn find(root: &mut [usize], mut c: usize) -> usize {
        while root[c] != c {
            root[c] = root[root[c]];
            c = root[c];
        }
        c
    }
    for l in &topo.links {
        if let (End::Chip(a, _), End::Chip(b, _)) = (l.a, l.b) {
            if l.delay_ps == 0 {
                let (ra, rb) = (find(&mut root, a), find(&mut root, b));
                root[ra.max(rb)] = ra.min(rb);
            }
        }
    }
    let mut weight = vec![0u64; chips];
    let host_chip: Vec<usize> = (0..topo.spec.hosts.len())
        .map(|h| match topo.peer(topo.host_link[h], End::Host(h)) {
            End::Chip(c, _) => c,
            End::Host(_) => unreachable!("hosts connect to chips (checked when resolved)"),
        })
        .collect();
    for c in 0..chips {
        let r = find(&mut root, c);
        weight[r] += 1;
    }
    for &c in &host_chip {
        let r = find(&mut root, c);
        weight[r] += 1;
    }
    let mut groups: Vec<usize> = (0..chips).filter(|&c| find(&mut root, c) == c).collect();
    let parts = threads.clamp(1, groups.len().max(1));
    // Heaviest first (ties: lowest chip), each to the least loaded partition (ties: lowest).
    groups.sort_by_key(|&g| (std::cmp::Reverse(weight[g]), g));
    let mut load = vec![0u64; parts];
    let mut group_part = vec![0usize; chips];
    for g in groups {
        let p = (0..parts).min_by_key(|&p| (load[p], p)).unwrap_or(0);
        load[p] += weight[g];
        group_part[g] = p;
    }
    let chip_part: Vec<usize> = (0..chips).map(|c| group_part[find(&mut root, c)]).collect();
    let host_part = host_chip.iter().map(|&c| chip_part[c]).collect();
    Plan {
        chip_part,
        host_part,
        parts,
        window: window(topo),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shapes::{generate, Generate, Shape};

    /// 4 leaves of 3 hosts, 2 spines, links of 500 ns.
    fn leafspine() -> Topology {
        leafspine_with_delay(500)
    }

    fn leafspine_with_delay(ns: u64) -> Topology {
        let mut g = Generate::new(
            Shape::LeafSpine {
                leaves: 4,
                spines: 2,
                hosts_per_leaf: 3,
                uplinks_per_spine: 1,
            },
            "x",
        );
        g.delay_ns = ns;
        Topology::resolve(generate(&g, &g.uniform_ports(16, 100)).unwrap()).unwrap()
    }

    #[test]
    fn hosts_run_with_their_chip_and_the_load_is_dealt_evenly() {
        let t = leafspine();
        let p = plan(&t, 2);
        assert_eq!(p.parts, 2);
        for (h, &part) in p.host_part.iter().enumerate() {
            let End::Chip(c, _) = t.peer(t.host_link[h], End::Host(h)) else {
                panic!("a host's peer is a chip")
            };
            assert_eq!(part, p.chip_part[c]);
        }
        let load = |q: usize| {
            (0..t.spec.chips.len())
                .filter(|&c| p.chip_part[c] == q)
                .count()
                + p.host_part.iter().filter(|&&x| x == q).count()
        };
        assert_eq!(load(0), load(1));
        assert_eq!(p.window, Time(500_000));
    }

    #[test]
    fn one_thread_is_one_partition_and_more_threads_than_chips_are_capped() {
        let t = leafspine();
        assert!(plan(&t, 1).chip_part.iter().all(|&p| p == 0));
        assert_eq!(plan(&t, 64).parts, t.spec.chips.len());
        assert_eq!(plan(&t, 1).window, plan(&t, 64).window);
    }

    #[test]
    fn chips_joined_without_delay_run_together_in_default_windows() {
        // Every link without delay: one group, one partition, the default window.
        let t = leafspine_with_delay(0);
        let p = plan(&t, 4);
        assert_eq!(p.parts, 1);
        assert!(p.chip_part.iter().all(|&x| x == 0));
        assert_eq!(p.window, DEFAULT_WINDOW);
    }
}
