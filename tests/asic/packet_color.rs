//! TNA's `packet_color` on the chip: the ingress program colours each packet and the TM's
//! admission reads it, through Tofino's colour drop limits under Dynamic Threshold and through
//! the what-if single-queue Flexible Buffer's class per colour (`tm::config::ColorConfig`).

use crate::common::*;
use asic_bench::bench::Bench;
use asic_model::chip::{ChipConfig, DropReason};
use asic_model::mac::slot_time;
use pipelines::time::Time;
use tm::config::{AdmissionPolicy, ClassConfig, ColorConfig, TmConfig};
use tm::Refusal;

/// Everything to port 1, queue 0, coloured by the two low bits of the source MAC.
const COLOUR_BY_SOURCE: &str = r#"
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
        ig_tm_md.packet_color = hdr.ethernet.src_addr[1:0];
    }
}
control IngressDeparser(packet_out pkt, inout headers_t hdr, in metadata_t meta,
                        in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply { pkt.emit(hdr); }
}
parser EgressParser(packet_in pkt, out headers_t hdr, out metadata_t meta,
                    out egress_intrinsic_metadata_t eg_intr_md) {
    state start { transition accept; }
}
control Egress(inout headers_t hdr, inout metadata_t meta,
               in egress_intrinsic_metadata_t eg_intr_md,
               in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
               inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { }
}
control EgressDeparser(packet_out pkt, inout headers_t hdr, in metadata_t meta,
                       in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { }
}
Pipeline(IngressParser(), Ingress(), IngressDeparser(),
         EgressParser(), Egress(), EgressDeparser()) pipe;
Switch(pipe) main;
"#;

/// An 80-byte frame (one `teaching` cell) of colour `colour`.
fn frame(colour: u8) -> Vec<u8> {
    let mut f = vec![0u8; 80];
    f[..6].copy_from_slice(&[2, 0, 0, 0, 0, 1]);
    f[6..12].copy_from_slice(&[2, 0, 0, 0, 0, colour]);
    f[12..14].copy_from_slice(&[0x88, 0xb5]);
    f
}

/// Ports 0 and 2 send 400 frames each, of colours `first` and `second`, at line rate into
/// port 1 of a `teaching` chip (64 cells) under `tm`: the frames of each colour that left,
/// and the TM's refusals for `reason`. Frames of the two ports arrive at the same instants
/// and port 0's are offered first, so with the colours alike port 0's take the room a
/// departure frees: a colour that wins from port 2 wins by its colour.
fn two_colours_into_one(
    tm: TmConfig,
    first: u8,
    second: u8,
    reason: Refusal,
) -> (usize, usize, u64) {
    let profile = chip("teaching");
    let program = dsl::compile(COLOUR_BY_SOURCE, "colour.p4", &profile.pipe)
        .unwrap()
        .program;
    let config = ChipConfig {
        tm,
        ..ChipConfig::default()
    };
    let mut bench = Bench::with_config(profile, &program, config, &[]).unwrap();
    bench.keep_departures();
    let slot = slot_time(80, 10);
    let line_rate = |colour| {
        (0..400u64)
            .map(|i| (Time(i * slot.ps()), frame(colour)))
            .collect()
    };
    bench.add_frames(0, line_rate(first)).unwrap();
    bench.add_frames(2, line_rate(second)).unwrap();
    let report = bench.run().unwrap();
    let out = bench.departures();
    let of = |c| out.iter().filter(|d| d.data[11] == c).count();
    let (a, b) = (of(first), of(second));
    assert_eq!(a + b, out.len());
    let refused = report.drops_for(DropReason::Tm(reason));
    assert_eq!(
        out.len() as u64 + refused,
        800,
        "every frame left or was refused"
    );
    (a, b, refused)
}

fn one_class(alpha: f64) -> Vec<ClassConfig> {
    vec![ClassConfig { alpha, priority: 0 }]
}

/// Under DT (α = 1) with a yellow (or red) limit of a quarter of the threshold, green frames
/// from port 2 get through where yellow (red) ones from port 0 are refused; with no limits
/// (8 eighths) port 0's frames win whatever their colour.
#[test]
fn colour_drop_limits_refuse_yellow_and_red_before_green() {
    let dt = |yellow_eighths, red_eighths| TmConfig {
        classes: one_class(1.0),
        color: ColorConfig {
            yellow_eighths,
            red_eighths,
            classes: Vec::new(),
        },
        ..TmConfig::default()
    };
    let r = Refusal::DynamicThreshold;
    let (y, g, refused) = two_colours_into_one(dt(2, 8), 1, 0, r);
    assert!(refused > 0);
    assert!(g > y + 100, "green {g}, yellow {y}");
    let (red, g, _) = two_colours_into_one(dt(8, 2), 3, 0, r);
    assert!(g > red + 100, "green {g}, red {red}");
    let (y, g, refused) = two_colours_into_one(dt(8, 8), 1, 0, r);
    assert!(refused > 0);
    assert!(
        y > g + 100,
        "no limits: port 0's yellow {y}, port 2's green {g}"
    );
}

/// Single-queue FB with green in the high class (α = 20) and yellow in the low one (α = 0.5):
/// one queue, two thresholds, and the yellow frames are the ones refused; without a class per
/// colour (every frame the queue's class) port 0's frames win whatever their colour.
#[test]
fn single_queue_fb_admits_each_colour_under_its_class() {
    let fb = |classes: Vec<u8>| TmConfig {
        admission: AdmissionPolicy::FlexibleBufferSingleQueue,
        classes: vec![
            ClassConfig {
                alpha: 20.0,
                priority: 1,
            },
            ClassConfig {
                alpha: 0.5,
                priority: 0,
            },
        ],
        color: ColorConfig {
            classes,
            ..ColorConfig::default()
        },
        ..TmConfig::default()
    };
    let r = Refusal::FlexibleThreshold;
    let (y, g, refused) = two_colours_into_one(fb(vec![0, 1, 1]), 1, 0, r);
    assert!(refused > 0);
    assert!(g > y + 100, "green {g}, yellow {y}");
    let (y, g, _) = two_colours_into_one(fb(Vec::new()), 1, 0, r);
    assert!(
        y > g + 100,
        "one class: port 0's yellow {y}, port 2's green {g}"
    );
}
