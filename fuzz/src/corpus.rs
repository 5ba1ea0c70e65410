//! The seed inputs: the repository's own programs, profiles, scenarios, entries, pcaps and STF
//! files, embedded at build time so a worker needs no checkout to run (and a finding's input
//! is a pure function of the binary, the seed and the index).
//!
//! Every file is kept under its repository path: the fixture writes them into a temporary
//! directory with the same layout, so the names a scenario or an STF file gives resolve as they
//! do in the repository.

/// Embeds each file under its repository path.
macro_rules! repository_files {
    ($($path:literal,)*) => {
        /// Every embedded file: `(repository path, bytes)`.
        pub const FILES: &[(&str, &[u8])] = &[
            $(($path, include_bytes!(concat!("../../", $path))),)*
        ];
    };
}

repository_files!(
    "asic-model/profiles/rmt2013.ron",
    "asic-model/profiles/teaching.ron",
    "asic-model/profiles/tofino1-like.ron",
    "asic-model/profiles/tofino2-like.ron",
    "benches/l3_12stage.p4",
    "dsl/tests/errors/action_reads_what_it_wrote.p4",
    "dsl/tests/errors/dependency_chain_too_long.p4",
    "dsl/tests/errors/does_not_fit.p4",
    "dsl/tests/errors/enum_without_values.p4",
    "dsl/tests/errors/ghost_thread_not_yet.p4",
    "dsl/tests/errors/hash_width_mismatch.p4",
    "dsl/tests/errors/parser_states_over_limit.p4",
    "dsl/tests/errors/phv_exhausted.p4",
    "dsl/tests/errors/queue_depth_in_egress.p4",
    "dsl/tests/errors/read_only_metadata.p4",
    "dsl/tests/errors/register_accessed_twice.p4",
    "dsl/tests/errors/salu_conditions_over_limit.p4",
    "dsl/tests/errors/salu_updates_twice.p4",
    "dsl/tests/errors/stage_resources_exhausted.p4",
    "dsl/tests/errors/switch_case_not_an_action.p4",
    "dsl/tests/errors/table_applied_twice.p4",
    "dsl/tests/errors/undeclared_name.p4",
    "dsl/tests/errors/unreachable_parser_state.p4",
    "dsl/tests/errors/unsupported_construct.p4",
    "dsl/tests/errors/width_mismatch.p4",
    "programs/bfc/bfc.p4",
    "programs/bfc/clos.ron",
    "programs/bfc/testbed-entries.ron",
    "programs/bfc/testbed-topology.ron",
    "programs/bfc/testbed-two-flows.ron",
    "programs/bfc/tofino2-100g.ron",
    "programs/bfc/two-flows.ron",
    "programs/ecmp_router/ecmp_router.p4",
    "programs/examples/dc_router.entries.ron",
    "programs/examples/dc_router.p4",
    "programs/examples/dc_router.scenario.ron",
    "programs/examples/flow_counter.entries.ron",
    "programs/examples/flow_counter.p4",
    "programs/examples/flow_counter.pcap",
    "programs/examples/flow_counter.reads.entries.ron",
    "programs/examples/flow_counter.reads.ron",
    "programs/examples/flow_counter.scenario.ron",
    "programs/examples/host_routes.entries.ron",
    "programs/examples/host_routes.p4",
    "programs/examples/host_routes.scenario.ron",
    "programs/examples/policer.entries.ron",
    "programs/examples/policer.p4",
    "programs/examples/policer.pcap",
    "programs/examples/policer.reads.entries.ron",
    "programs/examples/policer.reads.ron",
    "programs/examples/policer.scenario.ron",
    "programs/fb/fb-48x10g.ron",
    "programs/fb/fb.p4",
    "programs/fb/fb_pisa.p4",
    "programs/fb/leafspine.ron",
    "programs/fb/sweep-burst-full.ron",
    "programs/fb/sweep-burst-single.ron",
    "programs/fb/sweep-burst.ron",
    "programs/fb/sweep-load-full.ron",
    "programs/fb/sweep-load.ron",
    "programs/fb/sweep-testbed.ron",
    "programs/fb/testbed.ron",
    "programs/l3router/entries.ron",
    "programs/l3router/full.ron",
    "programs/l3router/in1.pcap",
    "programs/l3router/l3router.p4",
    "programs/l3router/minimal.ron",
    "programs/l3router/scenario.ron",
    "programs/net/clos160.ron",
    "programs/net/full.ron",
    "programs/net/incast.ron",
    "programs/net/leafspine.ron",
    "programs/net/minimal.ron",
    "programs/net/sweep-load.ron",
    "programs/pyrrha/fat-tree-incast.ron",
    "programs/pyrrha/loop-one-flow.ron",
    "programs/pyrrha/loop-three-flows.ron",
    "programs/pyrrha/merge.ron",
    "programs/pyrrha/pyrrha.p4",
    "programs/pyrrha/testbed.ron",
    "programs/pyrrha/tofino2-100g-128q.ron",
    "programs/trimming/incast.ron",
    "programs/trimming/leafspine.ron",
    "programs/trimming/senders-18.ron",
    "programs/trimming/testbed-ping-taildrop.ron",
    "programs/trimming/testbed-ping.ron",
    "programs/trimming/tofino1-trim.ron",
    "programs/trimming/trimming.p4",
    "programs/tutorial/1-entries.ron",
    "programs/tutorial/1-forward.p4",
    "programs/tutorial/1-forward.ron",
    "programs/tutorial/2-entries.ron",
    "programs/tutorial/2-router.p4",
    "programs/tutorial/2-router.ron",
    "programs/tutorial/3-count.p4",
    "programs/tutorial/3-count.ron",
    "programs/tutorial/4-entries.ron",
    "programs/tutorial/4-police.p4",
    "programs/tutorial/4-police.ron",
    "programs/tutorial/5-alpha.ron",
    "programs/tutorial/5-entries.ron",
    "programs/tutorial/5-priority.p4",
    "programs/tutorial/5-priority.ron",
    "programs/tutorial/5-queues.ron",
    "programs/tutorial/6-network.ron",
    "tests/programs/bridged_router.p4",
    "tests/programs/ghost.p4",
    "tests/programs/mirror_on_drop.p4",
    "tests/programs/net_plumbing.p4",
    "tests/programs/plumbing.p4",
    "tests/programs/qpause.p4",
    "tests/stf/acl.p4",
    "tests/stf/acl.stf",
    "tests/stf/counter.p4",
    "tests/stf/counter.stf",
    "tests/stf/hash.p4",
    "tests/stf/hash.stf",
    "tests/stf/l3router.stf",
    "tests/stf/meter.p4",
    "tests/stf/meter.stf",
    "tests/stf/parser.p4",
    "tests/stf/parser.stf",
    "tests/stf/parser_continue.p4",
    "tests/stf/parser_continue.stf",
    "tests/stf/random.p4",
    "tests/stf/random.stf",
    "tests/stf/register.p4",
    "tests/stf/register.stf",
);

/// The embedded file at `path`.
pub fn file(path: &str) -> &'static [u8] {
    FILES
        .iter()
        .find(|(p, _)| *p == path)
        .map(|(_, b)| *b)
        .unwrap_or_else(|| panic!("{path} is not embedded"))
}

/// The embedded files whose path starts with one of `dirs` and ends with `ext`.
pub fn matching(dirs: &[&str], ext: &str) -> Vec<(&'static str, &'static [u8])> {
    FILES
        .iter()
        .filter(|(p, _)| dirs.iter().any(|d| p.starts_with(d)) && p.ends_with(ext))
        .copied()
        .collect()
}
