//! The chip's integration tests, in one binary: `port_speeds` (ports brought up below their
//! profile speed) and `with_entries` (a chip built with its table entries). The program is a one-table forwarder compiled here (`dsl`), so these
//! tests need nothing of the root package.

mod port_speeds;
mod with_entries;

use asic_model::chip::{Chip, ChipEvent, Wire};
use asic_model::kernel::EventQueue;
use asic_model::profile::{self, ChipProfile};
use pipelines::entries::{parse_entries, resolve, ResolvedEntry};
use pipelines::program::Program;
use pipelines::time::Time;

/// Forwards by destination MAC (`fwd`, exact, 4 entries); a miss is dropped. Egress does
/// nothing.
const FORWARDER: &str = r#"
header ethernet_h {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}
struct headers_t { ethernet_h ethernet; }
struct metadata_t {}

parser IngressParser(packet_in pkt, out headers_t hdr, out metadata_t meta,
                     out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}
control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action drop() { ig_dprsr_md.drop_ctl = 1; }
    action send(bit<9> port) { ig_tm_md.ucast_egress_port = port; }
    table fwd {
        key = { hdr.ethernet.dst_addr : exact; }
        actions = { send; drop; }
        default_action = drop();
        size = 4;
    }
    apply { fwd.apply(); }
}
control IngressDeparser(packet_out pkt, inout headers_t hdr, in metadata_t meta,
                        in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply { pkt.emit(hdr.ethernet); }
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

/// The destination MAC the forwarder's entries match.
const DST: [u8; 6] = [2, 0, 0, 0, 0, 1];

/// A built-in profile.
fn chip_profile(name: &str) -> ChipProfile {
    profile::load(name).expect("built-in profile")
}

/// [`FORWARDER`] compiled for `profile`.
fn forwarder(profile: &ChipProfile) -> Program {
    dsl::compile(FORWARDER, "forwarder.p4", &profile.pipe)
        .unwrap_or_else(|e| panic!("{e}\n{}", e.render()))
        .program
}

/// The entries file `text` resolved against `program`.
fn entries(program: &Program, text: &str) -> Vec<ResolvedEntry> {
    parse_entries(text, "entries.ron")
        .unwrap()
        .iter()
        .map(|e| resolve(program, e).unwrap())
        .collect()
}

/// `fwd`: [`DST`] goes out of `port`.
fn forward_to(program: &Program, port: u16) -> Vec<ResolvedEntry> {
    entries(
        program,
        &format!(
            r#"[(table: "fwd", key: [Exact("02:00:00:00:00:01")], action: "send", args: [{port}])]"#
        ),
    )
}

/// A frame of `len` bytes (no FCS) to [`DST`].
fn frame(len: usize) -> Vec<u8> {
    let mut f = vec![0u8; len];
    f[..6].copy_from_slice(&DST);
    f[6..12].copy_from_slice(&[2, 0, 0, 0, 0, 9]);
    f[12..14].copy_from_slice(&[0x88, 0xb5]); // local experimental EtherType
    f
}

/// What the chip sent: (port, start, length).
#[derive(Default)]
struct Sent(Vec<(u16, Time, usize)>);

impl Wire for Sent {
    fn transmit(&mut self, port: u16, start: Time, frame: &[u8]) {
        self.0.push((port, start, frame.len()));
    }
}

/// Feed `frames` (port, start, bytes) to `chip` and run it until it is idle.
fn run(chip: &mut Chip, frames: &[(u16, Time, Vec<u8>)]) -> Sent {
    let mut q: EventQueue<ChipEvent> = EventQueue::new();
    for (port, start, f) in frames {
        chip.receive(*port, *start, f, 0, &mut q).unwrap();
    }
    let mut sent = Sent::default();
    while let Some((now, ev)) = q.pop() {
        chip.handle(now, ev, &mut q, &mut sent);
    }
    sent
}
