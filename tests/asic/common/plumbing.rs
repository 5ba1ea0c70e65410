//! Helpers of the plumbing tests: tests/programs/plumbing.p4's control header, AFC words,
//! a bench that keeps departures, and the conservation check.

use super::repo;
use asic_bench::bench::{Bench, RunReport};
use asic_io::load::compile_file;
use asic_model::chip::ChipConfig;
use asic_model::mac::slot_time;
use asic_model::profile::ChipProfile;
use pipelines::program::Program;
use pipelines::time::Time;

/// Bytes of plumbing.p4's control header.
pub const CTL: usize = 22;

/// plumbing.p4's control header: what each test packet asks of the chip.
#[derive(Clone, Copy, Default)]
pub struct Ctl {
    /// Times to recirculate.
    pub loops: u8,
    /// Unicast egress port.
    pub port: u16,
    /// Queue id.
    pub qid: u8,
    /// Multicast group (0: none).
    pub mcast: u16,
    /// Deflect on drop.
    pub dod: u8,
    /// Ingress mirror session (0: none).
    pub mirror: u16,
    /// Mirror truncation length.
    pub trunc: u16,
    /// `adv_flow_ctl` request (0: none).
    pub afc: u32,
    /// Egress mirror session (0: none).
    pub emirror: u16,
}

impl Ctl {
    /// A `len`-byte frame starting with this header (the rest 0xa5).
    pub fn frame(&self, len: usize) -> Vec<u8> {
        let mut v = Vec::with_capacity(len);
        v.push(self.loops);
        v.extend_from_slice(&self.port.to_be_bytes());
        v.push(self.qid);
        v.extend_from_slice(&self.mcast.to_be_bytes());
        v.push(self.dod);
        v.extend_from_slice(&self.mirror.to_be_bytes());
        v.extend_from_slice(&self.trunc.to_be_bytes());
        v.extend_from_slice(&self.afc.to_be_bytes());
        v.extend_from_slice(&self.emirror.to_be_bytes());
        v.extend_from_slice(&[0, 0, 0]); // rid, deflected: written by egress
        v.extend_from_slice(&[0, 0]); // egress port
        assert_eq!(v.len(), CTL);
        v.resize(len, 0xa5);
        v
    }
}

/// `adv_flow_ctl` for (pipe 0, mac, qid) with `credit` (0 pauses).
pub fn afc(mac: u32, qid: u32, credit: u32) -> u32 {
    1 << 31 | mac << 25 | qid << 15 | credit
}

/// A program under the repository, compiled for `profile`.
pub fn compile(path: &str, profile: &ChipProfile) -> Program {
    compile_file(&repo(path), profile, true)
        .unwrap_or_else(|e| panic!("{path} compiles: {e}"))
        .program
}

/// A bench keeping its departures.
pub fn bench(profile: &ChipProfile, program: &Program, config: ChipConfig) -> Bench {
    let mut b = Bench::with_config(profile.clone(), program, config, &[]).unwrap();
    b.keep_departures();
    b
}

/// In + made in the chip = out + dropped + consumed, and the chip is empty.
pub fn conserved(report: &RunReport) {
    assert_eq!(report.unaccounted(), 0, "conservation: {report:?}");
    assert_eq!(report.held, 0, "the chip drained: {report:?}");
}

/// `n` copies of `ctl`'s `len`-byte frame into each of `ports`, back to back at `gbps`.
pub fn feed_line_rate(b: &mut Bench, ports: &[u16], n: u64, len: usize, gbps: u32, ctl: Ctl) {
    let slot = slot_time(len, gbps);
    for &port in ports {
        let frames = (0..n)
            .map(|k| (Time(k * slot.ps()), ctl.frame(len)))
            .collect();
        b.add_frames(port, frames).unwrap();
    }
}
