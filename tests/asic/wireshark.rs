//! The Wireshark dissector `tools/wireshark/asic.lua`: its copy of the frame layouts matches
//! the Rust and P4 sources.
//!
//! The dissector keeps its own table of offsets (Lua cannot read Rust), so without this test
//! a change to `net/src/packet.rs`, `net/src/ctrl.rs` or `programs/bfc/bfc.p4` would leave
//! Wireshark decoding the old layout without anyone noticing.

use crate::common::repo;
use asic_net::ctrl;
use asic_net::packet::{self, field, Header};
use regex::Regex;
use std::collections::BTreeMap;
use std::ops::Range;

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
}
