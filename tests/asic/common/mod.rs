//! Helpers shared by the integration tests.
#![allow(dead_code)]

pub mod plumbing;

use asic_io::load::{compile_file, Base};
use asic_model::profile::{self, ChipProfile};
use pipelines::entries::ResolvedEntry;
use pipelines::program::Program;
use std::path::{Path, PathBuf};

/// A path inside the repository.
pub fn repo(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(p)
}

/// The l3router program compiled for `chip`, with its entries.
pub fn l3router(chip: &ChipProfile) -> (Program, Vec<ResolvedEntry>) {
    let c = compile_file(&repo("programs/l3router/l3router.p4"), chip, true)
        .expect("l3router compiles");
    let entries =
        load_entries(&repo("programs/l3router/entries.ron"), &c.program).expect("entries resolve");
    (c.program, entries)
}

/// An entries file (by absolute path) resolved against `program`.
pub fn load_entries(path: &Path, program: &Program) -> Result<Vec<ResolvedEntry>, String> {
    Base(Path::new("")).entries(&path.display().to_string(), program)
}

/// The error `asic run` gives for `s.ron`, a one-chip scenario of the `teaching` chip running
/// `program` (a path in the repository) with no inputs and `config` (the lines inside
/// `config: (...)`, from line 5 of the file).
pub fn scenario_error(program: &str, config: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let text = format!(
        "(\n    chip: \"teaching\",\n    program: \"{}\",\n    config: (\n{config}    ),\n    \
         inputs: [],\n)\n",
        repo(program).display()
    );
    let path = dir.path().join("s.ron");
    std::fs::write(&path, text).unwrap();
    let sf = asic_bench::scenario::ScenarioFile::load(&path).unwrap();
    asic_bench::run::run_scenario(&sf, Some(dir.path()), false).unwrap_err()
}

/// A built-in profile.
pub fn chip(name: &str) -> ChipProfile {
    profile::load(name).expect("built-in profile")
}

/// An Ethernet/IPv4/UDP frame of `size` bytes (no FCS).
pub fn udp_frame(dst_ip: [u8; 4], ttl: u8, size: usize) -> Vec<u8> {
    let b = etherparse::PacketBuilder::ethernet2([2, 0, 0, 0, 0, 9], [2, 0, 0, 0, 0, 0xfe])
        .ipv4([10, 0, 0, 9], dst_ip, ttl)
        .udp(1000, 2000);
    let payload = vec![0xa5; size - b.size(0)];
    let mut v = Vec::new();
    b.write(&mut v, &payload).unwrap();
    v
}

/// The pcap in the repository at `path` (relative to its root) holds exactly `frames`
/// (nanoseconds, bytes), as the model writes pcaps; with `ASIC_REGENERATE` set, it is
/// written anew first. For the pcaps the repository keeps, made by a builder in the tests.
pub fn assert_pcap_holds(path: &str, frames: Vec<(u64, Vec<u8>)>) {
    let tmp = tempfile::tempdir().unwrap();
    let made_path = tmp.path().join("made.pcap");
    let mut out = asic_io::pcap::PcapOut::create(&made_path).unwrap();
    for (ns, f) in frames {
        out.write(pipelines::time::Time::from_ns(ns), &f).unwrap();
    }
    out.finish().unwrap();
    let made = std::fs::read(&made_path).unwrap();
    if std::env::var_os("ASIC_REGENERATE").is_some() {
        std::fs::write(repo(path), &made).unwrap();
    }
    assert_eq!(std::fs::read(repo(path)).unwrap(), made, "{path} is stale");
}

/// The frames of programs/l3router/in1.pcap: (nanoseconds, bytes).
pub fn in1_frames() -> Vec<(u64, Vec<u8>)> {
    let routed_to_2 = udp_frame([10, 0, 2, 7], 64, 100);
    let ttl_expires = udp_frame([10, 0, 2, 7], 1, 100);
    let mut bridged = vec![0u8; 60];
    bridged[..6].copy_from_slice(&[2, 0, 0, 0, 0, 3]);
    bridged[6..12].copy_from_slice(&[2, 0, 0, 0, 0, 9]);
    bridged[12..14].copy_from_slice(&[0x08, 0x06]); // ARP
    let no_route = udp_frame([192, 168, 0, 1], 64, 80);
    let mut truncated = udp_frame([10, 0, 2, 7], 64, 100);
    truncated.truncate(14 + 10); // IPv4 EtherType, but only half an IPv4 header
    let routed_to_3 = udp_frame([10, 0, 3, 9], 64, 200);
    [
        routed_to_2,
        ttl_expires,
        bridged,
        no_route,
        truncated,
        routed_to_3,
    ]
    .into_iter()
    .enumerate()
    .map(|(i, f)| (1_000 * (i as u64 + 1), f))
    .collect()
}
