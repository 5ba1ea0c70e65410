//! TNA's `bypass_egress`: a packet whose ingress sets it skips the egress pipe (Tofino's
//! "warp" path from the egress parser buffer to the egress buffer): the egress program does
//! not see it, and it reaches the MAC without the egress pipe's latency.

use crate::common::*;
use asic_bench::bench::{Bench, Departure};
use asic_model::chip::DropReason;
use asic_model::mac::{frame_time, slot_time};
use pipelines::time::{Clock, Time};

/// Everything to port 1; IPv4 frames bypass egress. The egress program rewrites the source
/// MAC and drops every packet it sees.
const BYPASS_IPV4: &str = r#"
header ethernet_h { bit<48> dst_addr; bit<48> src_addr; bit<16> ether_type; }
struct headers_t { ethernet_h ethernet; }
struct metadata_t { }
parser IngressParser(packet_in pkt, out headers_t hdr, out metadata_t meta,
                     out ingress_intrinsic_metadata_t ig_intr_md) {
    state start { pkt.extract(hdr.ethernet); transition accept; }
}
control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply {
        ig_tm_md.ucast_egress_port = 1;
        if (hdr.ethernet.ether_type == 0x0800) {
            ig_tm_md.bypass_egress = 1;
        }
    }
}
control IngressDeparser(packet_out pkt, inout headers_t hdr, in metadata_t meta,
                        in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply { pkt.emit(hdr); }
}
parser EgressParser(packet_in pkt, out headers_t hdr, out metadata_t meta,
                    out egress_intrinsic_metadata_t eg_intr_md) {
    state start { pkt.extract(hdr.ethernet); transition accept; }
}
control Egress(inout headers_t hdr, inout metadata_t meta,
               in egress_intrinsic_metadata_t eg_intr_md,
               in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
               inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply {
        hdr.ethernet.src_addr = 0;
        eg_dprsr_md.drop_ctl = 1;
    }
}
control EgressDeparser(packet_out pkt, inout headers_t hdr, in metadata_t meta,
                       in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { pkt.emit(hdr); }
}
Pipeline(IngressParser(), Ingress(), IngressDeparser(),
         EgressParser(), Egress(), EgressDeparser()) pipe;
Switch(pipe) main;
"#;

/// Frames into one port: (start, bytes).
type Frames = Vec<(Time, Vec<u8>)>;

/// Frames (start, bytes) into ports of a `teaching` chip running [`BYPASS_IPV4`], in
/// lockstep or not: what left, the egress program's drops, and the clock and latencies
/// (ingress, egress) in cycles.
fn run(inputs: Vec<(u16, Frames)>, lockstep: bool) -> (Vec<Departure>, u64, Clock, u64, u64) {
    let profile = chip("teaching");
    let program = dsl::compile(BYPASS_IPV4, "bypass.p4", &profile.pipe)
        .unwrap()
        .program;
    let mut bench = Bench::new(profile.clone(), &program, &[]).unwrap();
    bench.keep_departures();
    bench.set_lockstep(lockstep);
    for (port, frames) in inputs {
        bench.add_frames(port, frames).unwrap();
    }
    let report = bench.run().unwrap();
    assert_eq!(report.lockstep_violation, None);
    (
        bench.departures().to_vec(),
        report.drops_for(DropReason::EgressProgramDrop),
        Clock::new(profile.clock_hz),
        report.ingress_latency_cycles,
        report.egress_latency_cycles,
    )
}

/// A lone IPv4 frame bypasses egress: it is neither rewritten nor dropped by the egress
/// program, and its first bit leaves as soon as it is out of the ingress pipe and the TM,
/// `T(c(t1) + L_i)`, without the egress pipe's `L_e`; a frame of another EtherType goes
/// through egress, which drops it.
#[test]
fn a_packet_that_bypasses_egress_leaves_unchanged_without_the_egress_latency() {
    let ipv4 = udp_frame([10, 0, 1, 1], 64, 128);
    let mut arp = ipv4.clone();
    arp[12..14].copy_from_slice(&[0x08, 0x06]);
    for lockstep in [false, true] {
        let (out, dropped, clock, li, le) =
            run(vec![(0, vec![(Time::ZERO, ipv4.clone())])], lockstep);
        assert!(le > 0, "the egress program takes a stage");
        let t1 = frame_time(ipv4.len(), 10);
        let departure = clock.time_of(clock.cycle_at_or_after(t1) + li);
        assert_eq!(dropped, 0);
        assert_eq!(out.len(), 1);
        assert_eq!((out[0].port, out[0].start), (1, departure));
        assert_eq!(out[0].data, ipv4);

        let (out, dropped, ..) = run(vec![(0, vec![(Time::ZERO, arp.clone())])], lockstep);
        assert_eq!((out.len(), dropped), (0, 1));
    }
}

/// Two ports send IPv4 frames at line rate to one: the queue grows, the TM serves the port
/// ahead of the wire as for packets that cross the egress pipe, and the bypassing frames
/// wait at the MAC, so they leave back to back at exactly line rate, each unchanged.
#[test]
fn bypassing_packets_leave_back_to_back_at_line_rate() {
    let ipv4 = udp_frame([10, 0, 1, 1], 64, 256);
    let slot = slot_time(ipv4.len(), 10);
    let line_rate = || {
        (0..5u64)
            .map(|i| (Time(i * slot.ps()), ipv4.clone()))
            .collect()
    };
    let (out, dropped, clock, li, _) = run(vec![(0, line_rate()), (2, line_rate())], false);
    assert_eq!((out.len(), dropped), (10, 0));
    let first = clock.time_of(clock.cycle_at_or_after(frame_time(ipv4.len(), 10)) + li);
    assert_eq!(out[0].start, first);
    for w in out.windows(2) {
        assert_eq!(w[1].start - w[0].start, slot, "{out:?}");
    }
    assert!(out.iter().all(|d| d.port == 1 && d.data == ipv4));
}
