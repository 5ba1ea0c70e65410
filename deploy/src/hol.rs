//! The HOL-blocking check, on any run with `hol_check`: at every sampled instant, every flow
//! with packets in a paused chip queue must cross, after that queue's port, a port that is
//! congested by its own line rate (an unpaused queue at least `congested_cells` deep), at
//! that sample or one within `grace_ns` before it (a queue paused for a port that has just
//! drained waits for the resume on its way).
//!
//! This is Pyrrha's criterion (its §VI, Definition 7: no HOL blocking at a congested port p
//! iff every potentially paused flow traverses p) made something a run can show: a queue is
//! paused on behalf of the congestion downstream of it, so a flow in it that crosses no
//! congested port downstream waits for congestion it does not contribute to. Pyrrha's
//! isolation queues hold only flows through their root; PFC's paused classes and BFC's
//! shared or colliding queues hold others too. Paths come from the path oracle
//! ([`crate::paths`]); a flow whose path does not pass the queue's port (routed otherwise
//! than the generated routes say) is counted apart, not judged.

use crate::paths::{FiveTuple, Hop, PathOracle, Walk};
use asic_net::records::{FlowKey, HolReport, HolViolation, QueueSnapshots};
use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// The check of `snaps`, with each flow's path from `oracle` (for routes that loop, the
/// loop: a flow in it comes round to every port of it again); an error if a flow's path
/// cannot be followed (a chip with no route to its destination, or one whose routes the
/// oracle does not know).
pub fn check(oracle: &PathOracle, snaps: &QueueSnapshots) -> Result<HolReport, String> {
    let mut congested: BTreeMap<u64, BTreeSet<Hop>> = BTreeMap::new();
    for c in &snaps.congested {
        congested.entry(c.time_ps).or_default().insert(Hop {
            chip: c.chip as usize,
            port: c.port,
        });
    }
    let mut paths: HashMap<FlowKey, Walk> = HashMap::new();
    let mut report = HolReport {
        samples: snaps.samples,
        ..HolReport::default()
    };
    // Per sampled instant: the ports congested at it or within the grace before it.
    let mut recent: BTreeMap<u64, BTreeSet<Hop>> = BTreeMap::new();
    for q in &snaps.paused {
        report.paused_queues += 1;
        let roots = recent.entry(q.time_ps).or_insert_with(|| {
            let from = q.time_ps.saturating_sub(snaps.grace_ps);
            congested
                .range(from..=q.time_ps)
                .flat_map(|(_, ports)| ports.iter().copied())
                .collect()
        });
        let here = Hop {
            chip: q.chip as usize,
            port: q.port,
        };
        for &flow in &q.flows {
            report.flows_checked += 1;
            let path = match paths.entry(flow) {
                Entry::Occupied(p) => p.into_mut(),
                Entry::Vacant(v) => {
                    let (src, dst) = (flow.src as usize, flow.dst as usize);
                    let tuple = FiveTuple::of_flow(oracle.topology(), src, dst, flow.flow_id);
                    v.insert(oracle.walk(src, dst, &tuple)?)
                }
            };
            let Some(i) = path.hops.iter().position(|h| *h == here) else {
                report.off_path += 1;
                continue;
            };
            if !path.after(i).any(|h| roots.contains(h)) {
                report.violations.push(HolViolation {
                    time_ps: q.time_ps,
                    chip: q.chip,
                    port: q.port,
                    queue: q.queue,
                    flow,
                });
            }
        }
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::routers::tests::leaf_spine;
    use crate::routers::Routing;
    use asic_net::records::{CongestedPort, PausedQueue};

    /// Leaf 0's uplink queue is paused holding a flow to h2 and one to h3; h2's port on
    /// leaf 1 is congested. The flow to h2 waits for its own congestion; the one to h3 is
    /// HOL-blocked. A flow from h1 to h0 never leaves by the uplink: off its path.
    #[test]
    fn a_paused_flow_that_crosses_no_congested_port_is_a_violation() {
        // Two leaves, one spine, two hosts a leaf: h0 and h1 on leaf 0 (chip 0), h2 and h3 on
        // leaf 1 (chip 1), the spine chip 2.
        let topo = leaf_spine(2, 1, 2);
        let oracle = PathOracle::uniform(topo.clone(), Routing::Ecmp);
        let flow = |src, dst| FlowKey {
            src,
            dst,
            flow_id: 7,
        };
        let to_h2 = FiveTuple::of_flow(&topo, 0, 2, 7);
        let path = oracle.path(0, 2, &to_h2).unwrap();
        let (uplink, h2_port) = (path[0], path[2]);
        let snaps = QueueSnapshots {
            congested_cells: 10,
            grace_ps: 0,
            samples: 1,
            paused: vec![PausedQueue {
                time_ps: 5,
                chip: uplink.chip as u32,
                port: uplink.port,
                queue: 0,
                flows: vec![flow(0, 2), flow(0, 3), flow(1, 0)],
            }],
            congested: vec![CongestedPort {
                time_ps: 5,
                chip: h2_port.chip as u32,
                port: h2_port.port,
            }],
        };
        let r = check(&oracle, &snaps).unwrap();
        assert_eq!((r.paused_queues, r.flows_checked, r.off_path), (1, 3, 1));
        assert_eq!(r.violations.len(), 1);
        assert_eq!(r.violations[0].flow, flow(0, 3));
        // The same congestion at a later instant does not count; at an earlier one, within
        // the grace, it does.
        let mut other = snaps.clone();
        other.congested[0].time_ps = 6;
        assert_eq!(check(&oracle, &other).unwrap().violations.len(), 2);
        other.congested[0].time_ps = 3;
        assert_eq!(check(&oracle, &other).unwrap().violations.len(), 2);
        other.grace_ps = 2;
        assert_eq!(check(&oracle, &other).unwrap().violations.len(), 1);
    }
}
