//! The `asic` workspace's integration tests, in one binary (link time dominates a build of
//! many): the chip on the bench, networks and their deployments, reports, the command line,
//! STF files. The allocation count (`tests/alloc.rs`) is its own binary: it installs the
//! counting allocator and must be the only test running while it counts.

mod bad_input;
mod bfc;
mod bfc_experiments;
mod bridged;
mod bypass;
mod cli;
mod common;
mod control_timing;
mod docs;
mod examples;
mod fb;
mod ghost;
mod hol;
mod l3router;
mod lockstep;
mod mirror_drop;
mod mirror_on_drop;
mod net_bad_input;
mod net_config;
mod net_dctcp;
mod net_ecmp;
mod net_fct;
mod net_incast;
mod net_leafspine;
mod net_pcap;
mod net_queries;
mod packet_color;
mod parser_errors;
mod paths;
mod perf;
mod pfc;
mod plumbing;
mod plumbing_more;
mod pyrrha;
mod pyrrha_loops;
mod pyrrha_merge;
mod pyrrha_scale;
mod readout;
mod report;
mod resource_view;
mod split;
mod stf;
mod threads;
mod timing;
mod tm_seed;
mod trace;
mod trim;
mod trimming;
mod wireshark;
