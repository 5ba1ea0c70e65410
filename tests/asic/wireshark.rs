//! The Wireshark dissector `tools/wireshark/asic.lua`: its copy of the frame layouts matches
//! the Rust and P4 sources, and tshark, with it, reads a BFC run's and a Pyrrha run's pcaps
//! as the model's own parsers do.
//!
//! The dissector keeps its own table of offsets (Lua cannot read Rust), so without the first
//! test a change to `net/src/packet.rs`, `net/src/ctrl.rs`, `programs/bfc/bfc.p4` or
//! `programs/pyrrha/pyrrha.p4` would leave Wireshark decoding the old layout without anyone
//! noticing. The others need `tshark` and fail, saying how to install it, when it is
//! missing: a skipped test would pass on a machine that never checks the dissector.

use crate::common::repo;
use asic_deploy::{run as net, scenario::NetScenario};
use asic_net::ctrl::{self, Ctrl};
use asic_net::packet::{self, field, Header};
use pcap_file::pcap::PcapReader;
use regex::Regex;
use std::collections::BTreeMap;
use std::ops::Range;
use std::path::Path;
use std::process::Command;

const LUA: &str = "tools/wireshark/asic.lua";

/// The body of the Lua file's `local NAME = {` table, up to its closing `}` at the start of
/// a line.
fn lua_table<'a>(lua: &'a str, name: &str) -> &'a str {
    let open = format!("\nlocal {name} = {{\n");
    let start = lua
        .find(&open)
        .unwrap_or_else(|| panic!("{LUA}: no `local {name} = {{` table"))
        + open.len();
    let len = lua[start..]
        .find("\n}")
        .unwrap_or_else(|| panic!("{LUA}: table {name} not closed"));
    &lua[start..start + len]
}

/// A number written in decimal or `0x` hexadecimal.
fn number(s: &str) -> u64 {
    match s.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).unwrap(),
        None => s.parse().unwrap(),
    }
}

/// Every `name = { offset, length },` line of a table, in file order, as byte ranges.
fn lua_ranges(body: &str) -> Vec<(String, Range<usize>)> {
    let re = Regex::new(r"(?m)^\s*(\w+) = \{ (\d+), (\d+) \},$").unwrap();
    let v: Vec<_> = re
        .captures_iter(body)
        .map(|c| {
            let (off, len) = (number(&c[2]) as usize, number(&c[3]) as usize);
            (c[1].to_string(), off..off + len)
        })
        .collect();
    assert_eq!(
        v.len(),
        body.lines().count(),
        "{LUA}: a line not `name = {{ offset, length }},`: {body}"
    );
    v
}

/// Every `name = number,` line of a table.
fn lua_numbers(body: &str) -> BTreeMap<String, u64> {
    let re = Regex::new(r"(?m)^\s*(\w+) = (0x[0-9A-Fa-f]+|\d+),$").unwrap();
    let m: BTreeMap<_, _> = re
        .captures_iter(body)
        .map(|c| (c[1].to_string(), number(&c[2])))
        .collect();
    assert_eq!(
        m.len(),
        body.lines().count(),
        "{LUA}: a line not `name = number,`: {body}"
    );
    m
}

/// A P4 header's fields as byte ranges from its start (all the program's headers used here
/// are whole bytes).
fn p4_header(p4: &str, name: &str) -> Vec<(String, Range<usize>)> {
    let re = Regex::new(&format!(r"(?s)\nheader {name} \{{(.*?)\n\}}")).unwrap();
    let body = &re
        .captures(p4)
        .unwrap_or_else(|| panic!("bfc.p4: no header {name}"))[1];
    let field = Regex::new(r"bit<(\d+)>\s+(\w+);").unwrap();
    let mut off = 0;
    field
        .captures_iter(body)
        .map(|c| {
            let bits: usize = c[1].parse().unwrap();
            assert_eq!(bits % 8, 0, "bfc.p4: {name}.{} is not whole bytes", &c[2]);
            off += bits / 8;
            (c[2].to_string(), off - bits / 8..off)
        })
        .collect()
}

/// A `const bit<N> NAME = value;` of the P4 program.
fn p4_const(p4: &str, name: &str) -> u64 {
    let re = Regex::new(&format!(
        r"const bit<\d+>\s+{name}\s*=\s*(0x[0-9A-Fa-f]+|\d+);"
    ))
    .unwrap();
    number(
        &re.captures(p4)
            .unwrap_or_else(|| panic!("bfc.p4: no const {name}"))[1],
    )
}

#[test]
fn dissector_layout_matches_the_rust_and_p4_sources() {
    let lua = std::fs::read_to_string(repo(LUA)).unwrap();
    let p4 = std::fs::read_to_string(repo("programs/bfc/bfc.p4")).unwrap();

    let consts = lua_numbers(lua_table(&lua, "CONST"));
    let want: BTreeMap<String, u64> = [
        ("udp_port", packet::UDP_PORT as u64),
        (
            "transport_header_bytes",
            packet::TRANSPORT_HEADER_BYTES as u64,
        ),
        ("ethertype_qpause", ctrl::QUEUE_PAUSE_ETHERTYPE as u64),
        ("ethertype_group", ctrl::GROUP_PAUSE_ETHERTYPE as u64),
    ]
    .map(|(n, v)| (n.to_string(), v))
    .into();
    assert_eq!(consts, want, "CONST in {LUA} against packet.rs and ctrl.rs");
    assert_eq!(p4_const(&p4, "MODEL_UDP_PORT"), packet::UDP_PORT as u64);
    assert_eq!(
        p4_const(&p4, "ETHERTYPE_QPAUSE"),
        ctrl::QUEUE_PAUSE_ETHERTYPE as u64
    );

    // The transport header: every field of packet.rs, at its range, and nothing else.
    let transport = lua_ranges(lua_table(&lua, "TRANSPORT"));
    let want = [
        ("flags", field::FLAGS),
        ("class", field::CLASS),
        ("queue", field::QUEUE),
        ("seq", field::SEQ),
        ("echo", field::ECHO),
        ("flow_id", field::FLOW_ID),
        ("ts_ps", field::TS_PS),
        ("len", field::LEN),
    ]
    .map(|(n, r)| (n.to_string(), r));
    assert_eq!(transport, want, "TRANSPORT in {LUA} against packet::field");
    // The fields tile the header, so a field packet.rs adds cannot be missing from both.
    let mut end = 0;
    for (name, r) in &transport {
        assert_eq!(r.start, end, "{name} follows the previous field");
        end = r.end;
    }
    assert_eq!(end, packet::TRANSPORT_HEADER_BYTES);
    // And `build` puts each Header field where the table says (distinct bytes everywhere).
    let h = Header {
        flags: 0x5a,
        class: 0x06,
        queue: 0x0102,
        seq: 0x0304_0506,
        echo: 0x0708_090a,
        flow_id: 0x0b0c_0d0e_0f10_1112,
        ts_ps: 0x1314_1516_1718_191a,
        len: 0x1b1c_1d1e,
        ..Header::default()
    };
    let mut frame = Vec::new();
    packet::build(&mut frame, &h, 0);
    let at = |name: &str| {
        let r = &transport.iter().find(|(n, _)| n == name).unwrap().1;
        let bytes = &frame[packet::TRANSPORT_OFFSET + r.start..packet::TRANSPORT_OFFSET + r.end];
        bytes.iter().fold(0u64, |v, b| v << 8 | *b as u64)
    };
    assert_eq!(
        [at("flags"), at("class"), at("queue"), at("seq")],
        [h.flags as u64, h.class as u64, h.queue as u64, h.seq as u64]
    );
    assert_eq!(
        [at("echo"), at("flow_id"), at("ts_ps"), at("len")],
        [h.echo as u64, h.flow_id, h.ts_ps, h.len as u64]
    );
    // bfc.p4 reads and stamps the first bytes of the same header.
    let tp = p4_header(&p4, "transport_h");
    assert_eq!(tp, transport[..tp.len()].to_vec(), "bfc.p4's transport_h");

    // The flags, bit by bit.
    let re = Regex::new(r#"(?m)^\s*\{ "(\w+)", (0x[0-9A-Fa-f]+), "#).unwrap();
    let flags: Vec<(String, u64)> = re
        .captures_iter(lua_table(&lua, "FLAGS"))
        .map(|c| (c[1].to_string(), number(&c[2])))
        .collect();
    let want = [
        ("DATA", packet::DATA),
        ("ACK", packet::ACK),
        ("NACK", packet::NACK),
        ("PULL", packet::PULL),
        ("TRIMMED", packet::TRIMMED),
        ("ECE", packet::ECE),
        ("LAST", packet::LAST),
    ]
    .map(|(n, b)| (n.to_string(), b as u64));
    assert_eq!(flags, want, "FLAGS in {LUA} against packet.rs");

    // The per-queue pause frame: bfc.p4's qpause_h, then the bitmap.
    let qpause = lua_ranges(lua_table(&lua, "QPAUSE"));
    let mut want = p4_header(&p4, "qpause_h");
    let fixed = want.last().unwrap().1.end;
    want.push(("bitmap".to_string(), fixed..fixed));
    assert_eq!(qpause, want, "QPAUSE against bfc.p4's qpause_h");
    // ... and what ctrl.rs writes: frames it builds, read at the table's offsets (after the
    // 14-byte Ethernet header).
    let q = |f: &[u8], name: &str| {
        let r = &qpause.iter().find(|(n, _)| n == name).unwrap().1;
        f[14 + r.start..14 + r.end]
            .iter()
            .fold(0u64, |v, b| v << 8 | *b as u64)
    };
    let src = [2, 0, 0, 0, 0, 9];
    let pause = ctrl::build_queue(src, 0x0102, true);
    assert_eq!(
        [
            q(&pause, "opcode"),
            q(&pause, "reserved"),
            q(&pause, "queue_id"),
            q(&pause, "bitmap_len")
        ],
        [ctrl::OP_PAUSE as u64, 0, 0x0102, 0]
    );
    assert_eq!(
        q(&ctrl::build_queue(src, 7, false), "opcode"),
        ctrl::OP_RESUME as u64
    );
    let bitmap = ctrl::build_bitmap(src, 0x0304, &[0xa5, 0x5a]);
    assert_eq!(
        [
            q(&bitmap, "opcode"),
            q(&bitmap, "queue_id"),
            q(&bitmap, "bitmap_len")
        ],
        [ctrl::OP_BITMAP as u64, 0x0304, 2]
    );
    assert_eq!(bitmap[14 + fixed..14 + fixed + 2], [0xa5, 0x5a]);
    // bfc.p4's bitmap_h follows qpause_h, whole bytes of queues.
    assert!(p4_header(&p4, "bitmap_h").iter().all(|(_, r)| r.len() == 1));

    // The opcodes.
    let re = Regex::new(r#"(?m)^\s*\[(\d+)\] = "(\w+)",$"#).unwrap();
    let opcodes: Vec<(u64, String)> = re
        .captures_iter(lua_table(&lua, "OPCODES"))
        .map(|c| (number(&c[1]), c[2].to_string()))
        .collect();
    let want = [
        (ctrl::OP_PAUSE, "pause", "OP_PAUSE"),
        (ctrl::OP_RESUME, "resume", "OP_RESUME"),
        (ctrl::OP_BITMAP, "bitmap", "OP_BITMAP"),
    ];
    for (op, _, p4_name) in want {
        assert_eq!(p4_const(&p4, p4_name), op as u64, "bfc.p4's {p4_name}");
    }
    assert_eq!(
        opcodes,
        want.map(|(op, n, _)| (op as u64, n.to_string())),
        "OPCODES in {LUA} against ctrl.rs"
    );

    // The flow-group frame: pyrrha.p4's pyrrha_h (its root is the group), and what ctrl.rs
    // writes at the table's offsets.
    let pyrrha = std::fs::read_to_string(repo("programs/pyrrha/pyrrha.p4")).unwrap();
    assert_eq!(
        p4_const(&pyrrha, "ETHERTYPE_PYRRHA"),
        ctrl::GROUP_PAUSE_ETHERTYPE as u64
    );
    let group = lua_ranges(lua_table(&lua, "GROUP"));
    let ranges = |v: &[(String, Range<usize>)]| v.iter().map(|f| f.1.clone()).collect::<Vec<_>>();
    let p4_group = p4_header(&pyrrha, "pyrrha_h");
    assert_eq!(
        ranges(&group),
        ranges(&p4_group),
        "GROUP against pyrrha.p4's pyrrha_h"
    );
    let merge = ctrl::build_group(src, ctrl::OP_GROUP_MERGE, (0x0102, 3), (0x0304, 2));
    let g = |name: &str| {
        let r = &group.iter().find(|(n, _)| n == name).unwrap().1;
        merge[14 + r.start..14 + r.end]
            .iter()
            .fold(0u64, |v, b| v << 8 | *b as u64)
    };
    assert_eq!(
        ["opcode", "hop", "group", "old_group", "old_hop", "reserved"].map(g),
        [ctrl::OP_GROUP_MERGE as u64, 3, 0x0102, 0x0304, 2, 0]
    );
    let opcodes: Vec<(u64, String)> = re
        .captures_iter(lua_table(&lua, "GROUP_OPCODES"))
        .map(|c| (number(&c[1]), c[2].to_string()))
        .collect();
    let want = [
        (ctrl::OP_GROUP_PAUSE, "pause", "OP_PAUSE"),
        (ctrl::OP_GROUP_RESUME, "resume", "OP_RESUME"),
        (ctrl::OP_GROUP_MERGE, "merge", "OP_MERGE"),
    ];
    for (op, _, p4_name) in want {
        assert_eq!(
            p4_const(&pyrrha, p4_name),
            op as u64,
            "pyrrha.p4's {p4_name}"
        );
    }
    assert_eq!(
        opcodes,
        want.map(|(op, n, _)| (op as u64, n.to_string())),
        "GROUP_OPCODES in {LUA} against ctrl.rs"
    );
}

/// Pyrrha's false root and its MERGE (`programs/pyrrha/merge.ron`): the frames B sends A,
/// as tshark reads them with the dissector and as `ctrl::parse` does.
#[test]
fn tshark_reads_a_pyrrha_run() {
    let path = repo("programs/pyrrha/merge.ron");
    let dir = tempfile::tempdir().unwrap();
    net::run_detailed(
        net::load(&path).unwrap(),
        &repo("programs/pyrrha"),
        Some(dir.path()),
    )
    .unwrap();
    let p = dir.path().join("B-port2.pcap");
    let rows = tshark(
        &p,
        "asic_group",
        &[
            "asic_group.opcode",
            "asic_group.group",
            "asic_group.old_group",
        ],
    );
    let ctrls: Vec<Ctrl> = frames(&p)
        .iter()
        .filter(|f| f[12..14] == ctrl::GROUP_PAUSE_ETHERTYPE.to_be_bytes())
        .map(|f| ctrl::parse(f).expect("a valid flow-group frame"))
        .collect();
    assert_eq!(rows.len(), ctrls.len());
    let mut seen = [0; 3];
    for (r, c) in rows.iter().zip(&ctrls) {
        let want = match *c {
            Ctrl::PauseGroup(g) => [ctrl::OP_GROUP_PAUSE as u16, g, 0],
            Ctrl::ResumeGroup(g) => [ctrl::OP_GROUP_RESUME as u16, g, 0],
            Ctrl::MergeGroup { old, new } => [ctrl::OP_GROUP_MERGE as u16, new, old],
            _ => unreachable!("other frames have other EtherTypes"),
        };
        assert_eq!(*r, want.map(|v| v.to_string()));
        seen[want[0] as usize - 1] += 1;
    }
    assert!(
        seen.iter().all(|&n| n > 0),
        "pause, resume, merge: {seen:?}"
    );
}

/// A pcap's frames.
fn frames(path: &Path) -> Vec<Vec<u8>> {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut r = PcapReader::new(file).unwrap();
    let mut v = Vec::new();
    while let Some(p) = r.next_packet() {
        v.push(p.unwrap().data.into_owned());
    }
    v
}

/// tshark with the dissector on `pcap`: one row per frame that matches `filter`, the
/// `fields` tab-separated (tshark writes a repeated field's values comma-separated).
fn tshark(pcap: &Path, filter: &str, fields: &[&str]) -> Vec<Vec<String>> {
    let mut cmd = Command::new("tshark");
    cmd.arg("-r")
        .arg(pcap)
        .arg("-X")
        .arg(format!("lua_script:{}", repo(LUA).display()))
        .args(["-Y", filter, "-T", "fields", "-E", "separator=/t"]);
    for f in fields {
        cmd.args(["-e", f]);
    }
    let out = match cmd.output() {
        Ok(out) => out,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => panic!(
            "tshark is not installed, and this test checks the Wireshark dissector with it: \
             install it (Debian/Ubuntu: `apt-get install -y tshark`; .ci/run does)"
        ),
        Err(e) => panic!("tshark: {e}"),
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "tshark failed: {stderr}");
    // An error loading the Lua file does not fail tshark: it says so on stderr and decodes
    // without the dissector.
    assert!(
        !stderr.contains("Lua"),
        "tshark reported a Lua error: {stderr}"
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l.split('\t').map(str::to_string).collect())
        .collect()
}

/// BFC on a dumbbell (as `programs/bfc/two-flows.ron`, shorter): l0's flow through sw0 and
/// r1's flow meet at sw1's port 0 to r0; sw1 pauses sw0 (its port 2) and r1's NIC (port 1).
#[test]
fn tshark_reads_a_bfc_run() {
    let scenario = r#"(
            topology: Generate((
                shape: Dumbbell(left: 1, right: 2),
                chip: "programs/bfc/tofino2-100g.ron",
                delay_ns: 500,
                nic_queues: 32,
            )),
            deploy: Bfc((queues: 16, hrtt_ns: 2000, assignment: Dynamic, refresh_ns: 5000)),
            transport: Raw(()),
            traffic: [
                Flow((src: "l0", dst: "r0", size: 300000)),
                Flow((src: "r1", dst: "r0", size: 300000)),
            ],
            pcaps: [(node: "l0"), (node: "sw1", port: 0), (node: "sw1", port: 2)],
            stop: (at_ns: Some(120000), when_flows_complete: false),
        )"#;
    let s: NetScenario = ron::from_str(scenario).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let run = net::run_detailed(s, &repo(""), Some(dir.path())).unwrap();
    let flow0 = &run.record.flows[0];
    assert!(run.record.flows.iter().all(|f| f.end_ps.is_some()));

    // l0's NIC sends flow 0's packets in order: seq 0, 1, 2, ..., the last one LAST, their
    // application bytes the flow's size.
    let l0 = dir.path().join("l0-port0.pcap");
    let rows = tshark(
        &l0,
        "asic",
        &[
            "asic.flow_id",
            "asic.seq",
            "asic.flags.data",
            "asic.flags.last",
            "asic.len",
        ],
    );
    assert_eq!(rows.len() as u64, flow0.packets_sent);
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(r[0], flow0.id.to_string(), "row {i}: {r:?}");
        assert_eq!(r[1], i.to_string(), "row {i}: {r:?}");
        assert_eq!(r[2], "1", "row {i}: {r:?}");
        assert_eq!(
            r[3],
            if i + 1 == rows.len() { "1" } else { "0" },
            "row {i}: {r:?}"
        );
    }
    let bytes: u64 = rows.iter().map(|r| r[4].parse::<u64>().unwrap()).sum();
    assert_eq!(bytes, flow0.size_bytes);

    // sw1's port to r0 carries both flows, upstreamQ stamped by BFC: every field tshark
    // reads equals what packet::parse reads from the same frame.
    let p0 = dir.path().join("sw1-port0.pcap");
    let fields = [
        "asic.flags",
        "asic.class",
        "asic.queue",
        "asic.seq",
        "asic.echo",
        "asic.flow_id",
        "asic.ts_ps",
        "asic.len",
    ];
    let rows = tshark(&p0, "asic", &fields);
    let parsed: Vec<Header> = frames(&p0)
        .iter()
        .filter_map(|f| packet::parse(f))
        .collect();
    assert_eq!(rows.len(), parsed.len());
    assert!(parsed.len() as u64 >= run.record.flows.iter().map(|f| f.packets_sent).sum::<u64>());
    for (r, h) in rows.iter().zip(&parsed) {
        let want = [
            format!("0x{:02x}", h.flags),
            h.class.to_string(),
            h.queue.to_string(),
            h.seq.to_string(),
            h.echo.to_string(),
            h.flow_id.to_string(),
            h.ts_ps.to_string(),
            h.len.to_string(),
        ];
        assert_eq!(r[..], want[..], "{fields:?}");
    }
    let flows: std::collections::BTreeSet<_> = parsed.iter().map(|h| h.flow_id).collect();
    assert_eq!(flows.len(), 2);

    // sw1's port to sw0: BFC's pause, resume and bitmap frames, decoded as ctrl::parse does.
    let p2 = dir.path().join("sw1-port2.pcap");
    let rows = tshark(
        &p2,
        "asic_qpause",
        &[
            "asic_qpause.opcode",
            "asic_qpause.queue_id",
            "asic_qpause.bitmap_len",
            "asic_qpause.paused",
        ],
    );
    let ctrls: Vec<Ctrl> = frames(&p2)
        .iter()
        .filter(|f| f[12..14] == ctrl::QUEUE_PAUSE_ETHERTYPE.to_be_bytes())
        .map(|f| ctrl::parse(f).expect("a valid per-queue pause frame"))
        .collect();
    assert_eq!(rows.len(), ctrls.len());
    let mut seen = [0; 3];
    for (r, c) in rows.iter().zip(&ctrls) {
        let want = match c {
            Ctrl::PauseQueue(q) => [
                ctrl::OP_PAUSE.to_string(),
                q.to_string(),
                "0".into(),
                String::new(),
            ],
            Ctrl::ResumeQueue(q) => [
                ctrl::OP_RESUME.to_string(),
                q.to_string(),
                "0".into(),
                String::new(),
            ],
            Ctrl::Bitmap { first, bitmap } => {
                let paused: Vec<String> = (0..8 * bitmap.len())
                    .filter(|i| bitmap[i / 8] >> (i % 8) & 1 == 1)
                    .map(|i| (*first as usize + i).to_string())
                    .collect();
                [
                    ctrl::OP_BITMAP.to_string(),
                    first.to_string(),
                    bitmap.len().to_string(),
                    paused.join(","),
                ]
            }
            Ctrl::Pfc(_) => unreachable!("PFC has its own EtherType"),
            Ctrl::PauseGroup(_) | Ctrl::ResumeGroup(_) | Ctrl::MergeGroup { .. } => {
                unreachable!("flow-group frames have their own EtherType")
            }
        };
        assert_eq!(r[..], want[..]);
        seen[r[0].parse::<usize>().unwrap() - 1] += 1;
    }
    // The run paused and resumed sw0's queue and refreshed it, and some bitmap named a
    // paused queue.
    assert!(
        seen.iter().all(|&n| n > 0),
        "pause, resume, bitmap frames: {seen:?}"
    );
    assert!(
        rows.iter().any(|r| r[0] == "3" && !r[3].is_empty()),
        "{rows:?}"
    );
}
