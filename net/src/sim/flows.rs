//! A partition's flows: those whose source or destination host it runs, and only those, so a
//! run of millions of flows holds each about once whatever the thread count (a flow between
//! two partitions twice: its sending side is used in its source's, its receiving side in its
//! destination's). They are found by the flow's number through [`FlowHomes`], which every
//! partition shares.

use crate::host::Flow;
use std::ops::{Index, IndexMut};
use std::sync::Arc;

/// Where each flow's sides live.
pub(crate) struct FlowHomes {
    /// Per flow: its source host (what a chip needs to know of any flow).
    pub(crate) src: Vec<u32>,
    /// Per flow: the partitions of its source and of its destination.
    part: Vec<[u32; 2]>,
    /// Per flow: its index among the flows of each of those partitions.
    slot: Vec<[u32; 2]>,
}

/// The flows one partition holds.
pub(crate) struct LocalFlows {
    part: usize,
    homes: Arc<FlowHomes>,
    v: Vec<Flow>,
}

/// Deal `flows` to `parts` partitions by their hosts' partitions `host_part`: the homes, and
/// each partition's flows (a flow is moved to its source's and, if that is another, copied
/// to its destination's).
pub(crate) fn deal(
    flows: Vec<Flow>,
    host_part: &[usize],
    parts: usize,
) -> (Arc<FlowHomes>, Vec<Vec<Flow>>) {
    let mut local: Vec<Vec<Flow>> = (0..parts).map(|_| Vec::new()).collect();
    let mut homes = FlowHomes {
        src: Vec::with_capacity(flows.len()),
        part: Vec::with_capacity(flows.len()),
        slot: Vec::with_capacity(flows.len()),
    };
    for fl in flows {
        let (ps, pd) = (host_part[fl.spec.src], host_part[fl.spec.dst]);
        homes.src.push(fl.spec.src as u32);
        homes.part.push([ps as u32, pd as u32]);
        let s = local[ps].len() as u32;
        let d = if pd == ps {
            s
        } else {
            // The receiving side's copy, made before the run: a flow as built.
            let copy = Flow::new(
                fl.spec.clone(),
                fl.shape,
                fl.queue,
                fl.pull_gap,
                fl.ideal_ps,
            );
            local[pd].push(copy);
            local[pd].len() as u32 - 1
        };
        homes.slot.push([s, d]);
        local[ps].push(fl);
    }
    (Arc::new(homes), local)
}

impl FlowHomes {
    /// Flows in the run.
    pub(crate) fn len(&self) -> usize {
        self.src.len()
    }
}

impl LocalFlows {
    pub(crate) fn new(part: usize, homes: Arc<FlowHomes>, v: Vec<Flow>) -> LocalFlows {
        LocalFlows { part, homes, v }
    }

    /// Flows in the run (all partitions).
    pub(crate) fn total(&self) -> usize {
        self.homes.len()
    }

    /// Where flow `f` is here, if this partition runs one of its hosts.
    #[inline]
    fn at(&self, f: usize) -> Option<usize> {
        let [ps, pd] = *self.homes.part.get(f)?;
        let [s, d] = self.homes.slot[f];
        if ps as usize == self.part {
            Some(s as usize)
        } else if pd as usize == self.part {
            Some(d as usize)
        } else {
            None
        }
    }

    /// Flow `f`, if this partition runs its source or its destination.
    #[inline]
    pub(crate) fn get(&self, f: usize) -> Option<&Flow> {
        self.at(f).map(|i| &self.v[i])
    }
}

/// Flow `f`, which this partition must hold (the runtime asks only for flows whose host
/// acts).
impl Index<usize> for LocalFlows {
    type Output = Flow;

    #[inline]
    fn index(&self, f: usize) -> &Flow {
        &self.v[self
            .at(f)
            .expect("a partition holds the flows of its hosts")]
    }
}

impl IndexMut<usize> for LocalFlows {
    #[inline]
    fn index_mut(&mut self, f: usize) -> &mut Flow {
        let i = self
            .at(f)
            .expect("a partition holds the flows of its hosts");
        &mut self.v[i]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::traffic::FlowSpec;
    use crate::transport::{Shape, TransportSpec};
    use pipelines::time::Time;

    fn flow(src: usize, dst: usize) -> Flow {
        let spec = FlowSpec {
            src,
            dst,
            size: 1000,
            start: Time::ZERO,
            class: 0,
            transport: Arc::new(TransportSpec::Raw(Default::default())),
            source: 0,
            query: None,
            connection: None,
        };
        Flow::new(spec, Shape::new(1000, 1000), 0, Time::ZERO, 0)
    }

    #[test]
    fn each_partition_holds_the_flows_of_its_hosts_and_no_other() {
        // Hosts 0, 1 in partition 0; 2 in 1; 3 in 2.
        let host_part = [0, 0, 1, 2];
        let flows = vec![flow(0, 1), flow(0, 2), flow(2, 3), flow(3, 0)];
        let (homes, local) = deal(flows, &host_part, 3);
        assert_eq!(local.iter().map(Vec::len).collect::<Vec<_>>(), [3, 2, 2]);
        let parts: Vec<LocalFlows> = local
            .into_iter()
            .enumerate()
            .map(|(p, v)| LocalFlows::new(p, Arc::clone(&homes), v))
            .collect();
        for (f, (src, dst)) in [(0, 1), (0, 2), (2, 3), (3, 0)].into_iter().enumerate() {
            for (p, here) in parts.iter().enumerate() {
                let held = host_part[src] == p || host_part[dst] == p;
                assert_eq!(here.get(f).is_some(), held, "flow {f} in partition {p}");
                if held {
                    assert_eq!((here[f].spec.src, here[f].spec.dst), (src, dst));
                }
            }
        }
        assert!(parts[0].get(4).is_none());
        assert_eq!(parts[1].total(), 4);
    }
}
