//! Shared test fixtures: a Tofino-like pipe spec and a small program template.

use pipelines::program::{FieldId, GressProgram, Table};
use pipelines::spec::*;

/// The pipe of a chip profile in `asic-model/profiles/` (read here because `dsl` may not
/// depend on `asic-model`; only the `pipe` part is used).
pub fn profile(name: &str) -> PipeSpec {
    #[derive(serde::Deserialize)]
    struct Profile {
        pipe: PipeSpec,
    }
    let path = format!(
        "{}/../asic-model/profiles/{name}.ron",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let p: Profile = ron::Options::default()
        .with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME)
        .from_str(&text)
        .unwrap_or_else(|e| panic!("{path}: {e}"));
    p.pipe
}

/// Every program under `programs/` (relative path, source), sorted.
pub fn all_programs() -> Vec<(String, String)> {
    fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "p4") {
                out.push(p);
            }
        }
    }
    let root = std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../programs"));
    let mut files = Vec::new();
    walk(&root, &mut files);
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let rel = p
                .strip_prefix(&root)
                .map_or_else(|_| p.display().to_string(), |r| r.display().to_string());
            let src = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{rel}: {e}"));
            (rel, src)
        })
        .collect()
}

/// A Tofino-like pipe: 12 stages of 80 SRAM (1024 x 128) and 24 TCAM (512 x 44) blocks.
pub fn spec() -> PipeSpec {
    PipeSpec {
        stages: 12,
        stage: StageResources {
            sram_blocks: 80,
            sram_depth: 1024,
            sram_width_bits: 128,
            tcam_blocks: 24,
            tcam_depth: 512,
            tcam_width_bits: 44,
            logical_tables: 16,
            stateful_alus: 4,
            meter_alus: 4,
            stats_alus: 4,
            hash_bits: 416,
            gateways: 16,
            vliw_slots: 224,
        },
        phv: PhvSpec {
            b8: 64,
            b16: 96,
            b32: 64,
        },
        latency: LatencySpec {
            parser_cycles: 28,
            deparser_cycles: 20,
            stage_base_cycles: 20,
            tcam_extra_cycles: 2,
            stateful_extra_cycles: 4,
            meter_extra_cycles: 4,
        },
        parser: ParserSpec {
            max_states: 256,
            max_depth: 32,
        },
        salu: SaluSpec {
            conditions: 4,
            updates: 2,
            outputs: 4,
            max_width_bits: 32,
            minmax: true,
        },
        meter: MeterSpec {
            byte_count_adjust_bits: 14,
        },
    }
}

/// A complete program whose ingress parser states, ingress control body (locals and apply)
/// and ingress deparser apply are given.
pub fn program(states: &str, control: &str, deparser: &str) -> String {
    format!(
        r#"
const bit<16> ETHERTYPE_IPV4 = 0x0800;
header ethernet_h {{ bit<48> dst_addr; bit<48> src_addr; bit<16> ether_type; }}
header ipv4_h {{
    bit<4> version; bit<4> ihl; bit<8> diffserv; bit<16> total_len; bit<16> identification;
    bit<3> flags; bit<13> frag_offset; bit<8> ttl; bit<8> protocol; bit<16> hdr_checksum;
    bit<32> src_addr; bit<32> dst_addr;
}}
struct headers_t {{ ethernet_h ethernet; ipv4_h ipv4; }}
struct metadata_t {{ bit<8> a; bit<8> b; bit<8> c; bit<16> wide; bool flag; }}
parser IP(packet_in pkt, out headers_t hdr, out metadata_t meta,
          out ingress_intrinsic_metadata_t ig_intr_md) {{
{states}
}}
control Ing(inout headers_t hdr, inout metadata_t meta,
            in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {{
{control}
}}
control ID(packet_out pkt, inout headers_t hdr, in metadata_t meta,
           in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {{
    apply {{ {deparser} }}
}}
parser EP(packet_in pkt, out headers_t hdr, out metadata_t meta,
          out egress_intrinsic_metadata_t eg_intr_md) {{
    state start {{ transition accept; }}
}}
control Eg(inout headers_t hdr, inout metadata_t meta, in egress_intrinsic_metadata_t eg_intr_md,
           in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
           inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {{
    apply {{ }}
}}
control ED(packet_out pkt, inout headers_t hdr, in metadata_t meta,
           in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {{
    apply {{ }}
}}
Pipeline(IP(), Ing(), ID(), EP(), Eg(), ED()) pipe;
Switch(pipe) main;
"#
    )
}

/// The usual parser: ethernet, then ipv4.
pub const STATES: &str = r#"
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) { ETHERTYPE_IPV4: parse_ipv4; default: accept; }
    }
    state parse_ipv4 { pkt.extract(hdr.ipv4); transition accept; }
"#;

/// A control with only an apply block.
pub fn apply(body: &str) -> String {
    format!("apply {{ {body} }}")
}

/// The field of a gress by name.
pub fn field(g: &GressProgram, name: &str) -> FieldId {
    g.phv
        .fields
        .iter()
        .position(|f| f.name == name)
        .unwrap_or_else(|| panic!("no field {name}")) as FieldId
}

/// The table of a gress by name.
pub fn table<'a>(g: &'a GressProgram, name: &str) -> &'a Table {
    g.control
        .tables
        .iter()
        .find(|t| t.name == name)
        .unwrap_or_else(|| panic!("no table {name}"))
}
