//! The example programs of `programs/examples/` run as their scenarios say. Each scenario is
//! run as `asic run` runs it, and what leaves the chip is compared with what the program must
//! do to the scenario's inputs: a small model of each program, written here from its source
//! and reading the same entries file, predicts every output port's frames, the marks they
//! carry and the drops.
//!
//! The scenarios' pcaps are made by the frame builders below (regenerate them with
//! `ASIC_REGENERATE=1`, as `programs/l3router/in1.pcap`).

use crate::common::*;
use asic_bench::bench::RunReport;
use asic_bench::run::run_scenario;
use asic_bench::scenario::{Generator, Input, ScenarioFile, Source, Template};
use asic_io::pcap::read_pcap;
use pipelines::entries::{parse_control_file, parse_value, ControlFile, EntrySpec, KeySpec};
use std::collections::BTreeMap;
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};

// ---------------------------------------------------------------------------------------------
// Frames

/// Frames, each with a time (ns in the builders and pcaps, ps in [`Run::inputs`]).
type Timed = Vec<(u64, Vec<u8>)>;

const ETHERTYPE_IPV4: u16 = 0x0800;
const ETHERTYPE_ARP: u16 = 0x0806;
const TCP: u8 = 6;
const UDP: u8 = 17;

fn mac(last: u8) -> [u8; 6] {
    [2, 0, 0, 0, 0, last]
}

/// The 16-bit ones' complement sum of `bytes`, folded (RFC 1071).
fn ones_sum(bytes: &[u8]) -> u16 {
    let mut sum: u32 = bytes
        .chunks(2)
        .map(|c| u32::from(c[0]) << 8 | u32::from(*c.get(1).unwrap_or(&0)))
        .sum();
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    sum as u16
}

/// An IPv4 packet (its header checksummed), in an Ethernet frame.
struct Ip {
    dst_mac: [u8; 6],
    tos: u8,
    ttl: u8,
    proto: u8,
    src: [u8; 4],
    dst: [u8; 4],
    frag_offset: u16,
    options: Vec<u8>,
    payload: Vec<u8>,
}

impl Ip {
    fn new(proto: u8, src: [u8; 4], dst: [u8; 4], payload: Vec<u8>) -> Ip {
        Ip {
            dst_mac: mac(0xfe),
            tos: 0,
            ttl: 64,
            proto,
            src,
            dst,
            frag_offset: 0,
            options: Vec::new(),
            payload,
        }
    }

    fn frame(&self) -> Vec<u8> {
        let ihl = 5 + self.options.len() / 4;
        let total = 4 * ihl + self.payload.len();
        let mut h = vec![
            0x40 | ihl as u8,
            self.tos,
            (total >> 8) as u8,
            total as u8,
            0,
            1,
            (self.frag_offset >> 8) as u8,
            self.frag_offset as u8,
            self.ttl,
            self.proto,
            0,
            0,
        ];
        h.extend(self.src);
        h.extend(self.dst);
        h.extend(&self.options);
        let sum = !ones_sum(&h);
        h[10..12].copy_from_slice(&sum.to_be_bytes());
        let mut f = ethernet(self.dst_mac, ETHERTYPE_IPV4);
        f.extend(h);
        f.extend(&self.payload);
        f
    }
}

fn ethernet(dst: [u8; 6], ethertype: u16) -> Vec<u8> {
    let mut f = dst.to_vec();
    f.extend(mac(0x01));
    f.extend(ethertype.to_be_bytes());
    f
}

/// A TCP or UDP header's first four bytes (the ports), then padding to `len` bytes.
fn l4(sport: u16, dport: u16, len: usize) -> Vec<u8> {
    let mut v = sport.to_be_bytes().to_vec();
    v.extend(dport.to_be_bytes());
    v.resize(len, 0);
    v
}

/// `programs/examples/flow_counter.pcap`: two flows interleaved, and the frames the program
/// treats apart (see flow_counter.scenario.ron), one every microsecond.
fn flow_counter_frames() -> Timed {
    let (a, b) = ([10, 0, 2, 1], [10, 0, 3, 1]);
    let tcp = || Ip::new(TCP, a, b, l4(40000, 80, 60)).frame();
    let udp = || Ip::new(UDP, a, b, l4(5000, 6000, 40)).frame();
    let mut arp = ethernet([0xff; 6], ETHERTYPE_ARP);
    arp.resize(60, 0);
    let fragment = Ip {
        frag_offset: 185,
        ..Ip::new(UDP, a, b, vec![0; 40])
    }
    .frame();
    let with_options = Ip {
        options: vec![1, 1, 1, 0],
        ..Ip::new(UDP, a, b, l4(5000, 6000, 40))
    }
    .frame();
    let mut cut_short = udp();
    cut_short.truncate(14 + 12);
    let frames = [
        tcp(),
        udp(),
        tcp(),
        arp,
        tcp(),
        with_options,
        udp(),
        fragment,
        tcp(),
        cut_short,
        udp(),
        tcp(),
    ];
    frames
        .into_iter()
        .enumerate()
        .map(|(i, f)| (1_000 * i as u64, f))
        .collect()
}

/// `programs/examples/policer.pcap`: 20 frames to an unknown MAC from 0 ns, then 80
/// ECN-capable 1226-byte frames at 4 Gb/s (one every 2.5 us) from 200.6 us.
fn policer_frames() -> Timed {
    let mut v = Vec::new();
    for i in 0..20u64 {
        let f = Ip {
            dst_mac: mac(0x99),
            ..Ip::new(UDP, [10, 0, 0, 9], [10, 0, 8, 1], l4(7, 7, 30))
        };
        v.push((100 * i, f.frame()));
    }
    for i in 0..80u64 {
        let f = Ip {
            dst_mac: mac(0x08),
            tos: 0b10, // ECT(0)
            ttl: 100,
            ..Ip::new(UDP, [10, 0, 0, 1], [10, 0, 8, 1], l4(9, 9, 1226 - 34))
        };
        v.push((200_600 + 2_500 * i, f.frame()));
    }
    v
}

/// The example pcaps are what the builders above make (`ASIC_REGENERATE=1` rewrites them).
#[test]
fn example_pcaps_are_reproducible() {
    assert_pcap_holds("programs/examples/flow_counter.pcap", flow_counter_frames());
    assert_pcap_holds("programs/examples/policer.pcap", policer_frames());
}

// ---------------------------------------------------------------------------------------------
// Running a scenario and reading what it wrote

struct Run {
    scenario: ScenarioFile,
    entries: ControlFile,
    report: RunReport,
    out: tempfile::TempDir,
}

impl Run {
    /// `asic run programs/examples/<name>.scenario.ron`, into a temporary directory.
    fn of(name: &str) -> Run {
        let path = repo(&format!("programs/examples/{name}.scenario.ron"));
        let scenario = ScenarioFile::load(&path).unwrap();
        let entries_path = scenario.resolve(scenario.scenario.entries.as_deref().unwrap());
        let text = std::fs::read_to_string(&entries_path).unwrap();
        let entries = parse_control_file(&text, "entries").unwrap();
        let out = tempfile::tempdir().unwrap();
        let (report, _) = run_scenario(&scenario, Some(out.path()), false).unwrap();
        assert_eq!(report.unaccounted(), 0, "{}", report.render_text());
        Run {
            scenario,
            entries,
            report,
            out,
        }
    }

    /// The frames that left `port`, in order.
    fn sent(&self, port: u16) -> Vec<Vec<u8>> {
        let p = self.out.path().join(format!("port{port}.pcap"));
        if !p.exists() {
            return Vec::new();
        }
        read_pcap(&p).unwrap().into_iter().map(|f| f.data).collect()
    }

    /// Ports that sent frames, with how many.
    fn tx(&self) -> BTreeMap<u16, u64> {
        self.report
            .ports
            .iter()
            .filter(|p| p.tx_packets > 0)
            .map(|p| (p.port, p.tx_packets))
            .collect()
    }

    fn drops(&self, reason: &str) -> u64 {
        self.report
            .drops
            .iter()
            .find(|d| d.0 == reason)
            .map_or(0, |d| d.1)
    }

    /// Every input as (port, frames with their start times in ps): a generator's frames
    /// from its template, a pcap's as recorded (times shifted as the bench shifts them).
    fn inputs(&self) -> Vec<(u16, Timed)> {
        let s = &self.scenario.scenario;
        let pcaps: Vec<(usize, Timed)> = s
            .inputs
            .iter()
            .enumerate()
            .filter_map(|(i, input)| match &input.source {
                Source::Pcap(p) => Some((i, pcap_frames(&self.scenario.resolve(p)))),
                Source::Generator(_) => None,
            })
            .collect();
        let t0 = pcaps
            .iter()
            .filter_map(|(_, f)| f.first().map(|f| f.0))
            .min()
            .unwrap_or(0);
        s.inputs
            .iter()
            .enumerate()
            .map(|(i, input)| {
                let frames = match &input.source {
                    Source::Pcap(_) => {
                        let (_, f) = pcaps.iter().find(|p| p.0 == i).unwrap();
                        f.iter()
                            .map(|(t, d)| ((t - t0) * 1000, d.clone()))
                            .collect()
                    }
                    Source::Generator(g) => generated(input, g, &self.report),
                };
                (input.port, frames)
            })
            .collect()
    }
}

fn pcap_frames(path: &Path) -> Timed {
    read_pcap(path)
        .unwrap()
        .into_iter()
        .map(|f| (f.ts_ns as u64, f.data))
        .collect()
}

/// A generator's frames as the model needs them (headers from the template; the payload
/// does not matter to these programs), at `start + k * interval`, the interval being the
/// frame's slot on the wire at the generator's rate: preamble 8, FCS 4 and gap 12 bytes.
fn generated(input: &Input, g: &Generator, report: &RunReport) -> Timed {
    let Template::Udp(t) = &g.packet;
    let ip = |s: &str| s.parse::<Ipv4Addr>().unwrap().octets();
    let mac_of = |s: &str| -> [u8; 6] {
        let v = parse_value(&pipelines::entries::Value::Text(s.into())).unwrap() as u64;
        v.to_be_bytes()[2..].try_into().unwrap()
    };
    let frame = Ip {
        dst_mac: mac_of(&t.dst_mac),
        ttl: t.ttl,
        ..Ip::new(
            UDP,
            ip(&t.src_ip),
            ip(&t.dst_ip),
            l4(t.src_port, t.dst_port, g.size - 34),
        )
    }
    .frame();
    let line = report
        .ports
        .iter()
        .find(|p| p.port == input.port)
        .unwrap()
        .gbps;
    let gbps = g.rate_gbps.unwrap_or(line) as u64;
    let interval_ps = (g.size.max(60) as u64 + 24) * 8 * 1000 / gbps;
    (0..g.count)
        .map(|k| (g.start_ns * 1000 + k * interval_ps, frame.clone()))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Entries as the models read them

fn value(v: &pipelines::entries::Value) -> u128 {
    parse_value(v).unwrap()
}

fn table<'a>(c: &'a ControlFile, name: &'a str) -> impl Iterator<Item = &'a EntrySpec> + 'a {
    c.tables.iter().filter(move |e| e.table == name)
}

/// The entry of exact-match table `name` whose key is `key`.
fn exact<'a>(c: &'a ControlFile, name: &'a str, key: &[u128]) -> Option<&'a EntrySpec> {
    table(c, name).find(|e| {
        e.key.len() == key.len()
            && e.key
                .iter()
                .zip(key)
                .all(|(k, v)| matches!(k, KeySpec::Exact(x) if value(x) == *v))
    })
}

fn arg(e: &EntrySpec, i: usize) -> u128 {
    value(&e.args[i])
}

/// The parsed headers of a frame the models look at.
#[derive(Clone, Debug, PartialEq)]
struct Seen {
    dst_mac: [u8; 6],
    src_mac: [u8; 6],
    ethertype: u16,
    /// (first byte, tos, ttl, proto, src, dst, frag offset) of an IPv4 header, if whole.
    ip: Option<(u8, u8, u8, u8, u32, u32, u16)>,
    /// The L4 ports, if the frame holds them.
    ports: Option<(u16, u16)>,
}

impl std::fmt::Display for Seen {
    /// One line: the MACs, then the IPv4 fields the programs change and the flow.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let m = |m: [u8; 6]| m.map(|b| format!("{b:02x}")).join(":");
        write!(
            f,
            "{} > {} {:#06x}",
            m(self.src_mac),
            m(self.dst_mac),
            self.ethertype
        )?;
        if let Some((v, tos, ttl, proto, src, dst, frag)) = self.ip {
            let (src, dst) = (Ipv4Addr::from(src), Ipv4Addr::from(dst));
            write!(
                f,
                " ver/ihl {v:#x} tos {tos:#04x} ttl {ttl} proto {proto} {src} > {dst}"
            )?;
            write!(f, " frag {frag}")?;
        }
        if let Some((sp, dp)) = self.ports {
            write!(f, " ports {sp} > {dp}")?;
        }
        Ok(())
    }
}

/// Frames as lines (for comparisons that print readably when they fail).
fn lines<'a>(frames: impl IntoIterator<Item = &'a Seen>) -> Vec<String> {
    frames.into_iter().map(Seen::to_string).collect()
}

fn seen(f: &[u8]) -> Seen {
    let be16 = |i: usize| u16::from_be_bytes([f[i], f[i + 1]]);
    let be32 = |i: usize| u32::from_be_bytes(f[i..i + 4].try_into().unwrap());
    let ethertype = be16(12);
    let ip = (ethertype == ETHERTYPE_IPV4 && f.len() >= 34).then(|| {
        (
            f[14],
            f[15],
            f[22],
            f[23],
            be32(26),
            be32(30),
            be16(20) & 0x1fff,
        )
    });
    let ports = ip.and_then(|ip| {
        let l4 = 14 + 4 * (ip.0 as usize & 0xf);
        (f.len() >= l4 + 4).then(|| (be16(l4), be16(l4 + 2)))
    });
    Seen {
        dst_mac: f[..6].try_into().unwrap(),
        src_mac: f[6..12].try_into().unwrap(),
        ethertype,
        ip,
        ports,
    }
}

/// Whether the IPv4 header of `f` checksums to 0xffff (a correct checksum).
fn ipv4_checksum_ok(f: &[u8]) -> bool {
    let ihl = (f[14] & 0xf) as usize;
    ones_sum(&f[14..14 + 4 * ihl]) == 0xffff
}

// ---------------------------------------------------------------------------------------------
// dc_router

/// What dc_router.p4 does with a frame arriving on `port` (the model of its `apply` block).
#[derive(Debug, PartialEq)]
enum Route {
    Drop,
    Out {
        port: u16,
        /// Routed: the rewritten MACs and the DSCP, if the class maps to one.
        rewrite: Option<([u8; 6], [u8; 6], Option<u8>)>,
    },
}

fn mac_bytes(v: u128) -> [u8; 6] {
    (v as u64).to_be_bytes()[2..].try_into().unwrap()
}

fn mac_value(m: [u8; 6]) -> u128 {
    m.iter().fold(0, |v, &b| v << 8 | u128::from(b))
}

fn dc_router(c: &ControlFile, port: u16, s: &Seen) -> Route {
    let p = port as u128;
    let vrf = exact(c, "port_vrf", &[p]).map_or(0, |e| arg(e, 0));
    let tc = exact(c, "port_qos", &[p]).map_or(0, |e| arg(e, 0));
    let routed = exact(c, "my_mac", &[mac_value(s.dst_mac)]).is_some();
    let Some((_, _, _, proto, src, dst, _)) = s.ip.filter(|_| routed) else {
        return match exact(c, "l2_fwd", &[mac_value(s.dst_mac)]) {
            Some(e) => Route::Out {
                port: arg(e, 0) as u16,
                rewrite: None,
            },
            None => Route::Drop,
        };
    };
    let nexthop = exact(c, "ipv4_host", &[vrf, dst as u128])
        .map(|e| arg(e, 0))
        .or_else(|| {
            table(c, "ipv4_lpm")
                .filter_map(|e| match &e.key[..] {
                    [KeySpec::Exact(v), KeySpec::Lpm(a, len)]
                        if value(v) == vrf
                            && (*len == 0 || (dst as u128 ^ value(a)) >> (32 - len) == 0) =>
                    {
                        Some((*len, arg(e, 0)))
                    }
                    _ => None,
                })
                .max()
                .map(|(_, n)| n)
        });
    let denied = table(c, "acl")
        .filter(|e| {
            let fields = [src as u128, dst as u128, proto as u128];
            e.key.iter().zip(fields).all(|(k, f)| match k {
                KeySpec::Ternary(v, m) => f & value(m) == value(v) & value(m),
                _ => false,
            })
        })
        .max_by_key(|e| e.priority)
        .is_some_and(|e| e.action == "deny");
    let Some(nh) = exact(c, "nexthop", &[nexthop.unwrap_or(0)]).filter(|_| !denied) else {
        return Route::Drop;
    };
    let (out, idx) = (arg(nh, 0) as u16, arg(nh, 1));
    let dmac = exact(c, "dmac_rewrite", &[idx]).map_or(0, |e| arg(e, 0));
    let smac = exact(c, "smac_rewrite", &[out as u128]).map_or(0, |e| arg(e, 0));
    let dscp = exact(c, "dscp_map", &[tc]).map(|e| arg(e, 0) as u8);
    Route::Out {
        port: out,
        rewrite: Some((mac_bytes(dmac), mac_bytes(smac), dscp)),
    }
}

/// dc_router's scenario: every input frame leaves where the model of the program says,
/// rewritten as it says (MACs, TTL, DSCP, checksum), mirrored ports copied truncated to the
/// session's length, and the rest dropped by the program.
#[test]
fn dc_router_scenario_routes_bridges_mirrors_and_drops() {
    let run = Run::of("dc_router");
    let sessions = &run.scenario.scenario.config.mirror_sessions;
    let mut want_tx: BTreeMap<u16, u64> = BTreeMap::new();
    let mut want: BTreeMap<u16, Vec<Seen>> = BTreeMap::new();
    let mut dropped = 0;
    for (port, frames) in run.inputs() {
        for (_, f) in frames {
            let s = seen(&f);
            let mirror = exact(&run.entries, "port_mirror", &[port as u128]);
            match dc_router(&run.entries, port, &s) {
                Route::Drop => dropped += 1,
                Route::Out { port: out, rewrite } => {
                    let mut o = s.clone();
                    if let Some((dmac, smac, dscp)) = rewrite {
                        let ip = o.ip.as_mut().unwrap();
                        o.dst_mac = dmac;
                        o.src_mac = smac;
                        ip.2 -= 1;
                        if let Some(d) = dscp {
                            ip.1 = d << 2 | ip.1 & 3;
                        }
                    }
                    *want_tx.entry(out).or_default() += 1;
                    want.entry(out).or_default().push(o);
                }
            }
            if let Some(m) = mirror {
                let session = sessions.iter().find(|x| x.id == arg(m, 0) as u16).unwrap();
                *want_tx.entry(session.port).or_default() += 1;
            }
        }
    }
    assert_eq!(run.tx(), want_tx, "{}", run.report.render_text());
    assert_eq!(run.drops("ingress_program_drop"), dropped);
    assert_eq!(run.report.drops.len(), 1, "{:?}", run.report.drops);
    for (port, frames) in &want {
        let sent = run.sent(*port);
        // Inputs to one port interleave: compare the frames in any order.
        let mut got = lines(&sent.iter().map(|f| seen(f)).collect::<Vec<_>>());
        let mut frames = lines(frames);
        got.sort();
        frames.sort();
        assert_eq!(got, frames, "port {port}");
        assert!(sent.iter().all(|f| ipv4_checksum_ok(f)), "port {port}");
    }
    for s in sessions {
        let copies = run.sent(s.port);
        let limit = s.truncate_bytes.unwrap() as usize;
        assert!(copies.iter().all(|c| c.len() == limit), "port {}", s.port);
    }
}

// ---------------------------------------------------------------------------------------------
// flow_counter

/// CRC-16/ARC (poly 0x8005 reflected, init 0), bit by bit: TNA's CRC16.
fn crc16_arc(data: &[u8]) -> u16 {
    let mut crc = 0u16;
    for &b in data {
        crc ^= u16::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                crc >> 1 ^ 0xa001
            } else {
                crc >> 1
            };
        }
    }
    crc
}

/// A constant `const bit<32> NAME = VALUE;` of a program.
fn program_const(program: &str, name: &str) -> u128 {
    let text = std::fs::read_to_string(repo(program)).unwrap();
    let line = text
        .lines()
        .find(|l| l.starts_with(&format!("const bit<32> {name} = ")))
        .unwrap();
    let v = line.rsplit(' ').next().unwrap().trim_end_matches(';');
    v.parse().unwrap()
}

/// flow_counter's scenario: each port's frames leave through the patch panel in order; the
/// parser's failures are dropped by the program (which reads `parser_err`); and the packets
/// of each TCP or UDP flow are counted in the register cell their CRC16 picks, from the
/// entries' initial value, the ones whose count reaches FLOW_LIMIT marked DSCP 10.
#[test]
fn flow_counter_scenario_counts_flows_and_marks_the_heavy_one() {
    assert_eq!(crc16_arc(b"123456789"), 0xbb3d, "CRC-16/ARC check value");
    let run = Run::of("flow_counter");
    let limit = program_const("programs/examples/flow_counter.p4", "FLOW_LIMIT");
    let mut count: BTreeMap<u16, u128> = run
        .entries
        .registers
        .iter()
        .filter(|r| r.register == "flow_count")
        .map(|r| (r.index as u16, value(&r.value)))
        .collect();
    let mut want: BTreeMap<u16, Vec<(Seen, u8)>> = BTreeMap::new();
    let (mut parse_failures, mut cells) = (0, BTreeMap::new());
    for (port, frames) in run.inputs() {
        let out = arg(exact(&run.entries, "port_fwd", &[port as u128]).unwrap(), 0) as u16;
        for (_, f) in frames {
            let s = seen(&f);
            let mut dscp_mark = None;
            if s.ethertype == ETHERTYPE_IPV4 {
                let Some(ip) = s.ip.filter(|ip| ip.0 == 0x45) else {
                    // Rejected (options) or cut short: the program drops it.
                    parse_failures += 1;
                    continue;
                };
                if ip.6 == 0 && (ip.3 == TCP || ip.3 == UDP) {
                    let Some((sp, dp)) = s.ports else {
                        parse_failures += 1;
                        continue;
                    };
                    let mut key = ip.4.to_be_bytes().to_vec();
                    key.extend(ip.5.to_be_bytes());
                    key.push(ip.3);
                    key.extend(sp.to_be_bytes());
                    key.extend(dp.to_be_bytes());
                    let cell = crc16_arc(&key) % 1024;
                    cells.insert((ip.4, ip.5, ip.3, sp, dp), cell);
                    let c = count.entry(cell).or_default();
                    *c = (*c + 1).min(0xffff_ffff);
                    dscp_mark = (*c >= limit).then_some(10u8);
                }
            }
            let mut o = s.clone();
            if let (Some(d), Some(ip)) = (dscp_mark, o.ip.as_mut()) {
                ip.1 = d << 2 | ip.1 & 3;
            }
            want.entry(out)
                .or_default()
                .push((o, dscp_mark.unwrap_or(0)));
        }
    }
    // The model is exact only if no two flows share a cell (their packets' order across
    // ports would matter): the scenario's flows do not.
    let mut distinct: Vec<u16> = cells.values().copied().collect();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), cells.len(), "{cells:?}");

    let marked: usize = want.values().flatten().filter(|(_, d)| *d != 0).count();
    assert_eq!(
        marked, 21,
        "the scenario's comment says 21 packets are marked"
    );
    for (port, frames) in &want {
        let sent = run.sent(*port);
        let got = lines(&sent.iter().map(|f| seen(f)).collect::<Vec<_>>());
        assert_eq!(got, lines(frames.iter().map(|(s, _)| s)), "port {port}");
        assert!(
            sent.iter()
                .filter(|f| seen(f).ip.is_some())
                .all(|f| ipv4_checksum_ok(f)),
            "port {port}"
        );
    }
    let tx: BTreeMap<u16, u64> = want.iter().map(|(p, f)| (*p, f.len() as u64)).collect();
    assert_eq!(run.tx(), tx);
    assert_eq!(run.drops("ingress_program_drop"), parse_failures);
    assert_eq!(run.report.parser_errors_continued, [parse_failures, 0]);
}

// ---------------------------------------------------------------------------------------------
// policer

/// One RFC 2698 colour-blind two-rate three-colour meter on integer buckets of
/// tokens × 10^12, refilled by `rate × Δps` (no rounding).
struct Trtcm {
    rates: (u128, u128),
    sizes: (u128, u128),
    tc: u128,
    tp: u128,
    last: Option<u64>,
}

impl Trtcm {
    const SCALE: u128 = 1_000_000_000_000;

    fn new(cir: u128, pir: u128, cbs: u128, pbs: u128) -> Trtcm {
        Trtcm {
            rates: (cir, pir),
            sizes: (cbs * Self::SCALE, pbs * Self::SCALE),
            tc: cbs * Self::SCALE,
            tp: pbs * Self::SCALE,
            last: None,
        }
    }

    /// The colour of a packet of `bytes` at `ps`: 0 green, 1 yellow, 3 red.
    fn colour(&mut self, ps: u64, bytes: u128) -> u8 {
        if let Some(last) = self.last {
            let dt = u128::from(ps - last);
            self.tc = (self.tc + self.rates.0 * dt).min(self.sizes.0);
            self.tp = (self.tp + self.rates.1 * dt).min(self.sizes.1);
        }
        self.last = Some(ps);
        let b = bytes * Self::SCALE;
        if self.tp < b {
            3
        } else if self.tc < b {
            self.tp -= b;
            1
        } else {
            self.tp -= b;
            self.tc -= b;
            0
        }
    }
}

/// policer's scenario: frames to a known MAC are bridged, each ingress port's byte meter
/// colours them as RFC 2698 says for their arrival times (red ones dropped), the others are
/// dropped; and in port 8's deep queue egress marks ECN CE (with TTL 64) on ECN-capable
/// frames only, about one in four.
#[test]
fn policer_scenario_meters_per_port_and_marks_ecn_in_a_deep_queue() {
    let run = Run::of("policer");
    let mut meters: BTreeMap<u32, Trtcm> = run
        .entries
        .meters
        .iter()
        .map(|m| {
            let v = |x: &pipelines::entries::Value| value(x);
            (
                m.index,
                Trtcm::new(v(&m.cir), v(&m.pir), v(&m.cbs), v(&m.pbs)),
            )
        })
        .collect();
    let (mut red, mut missed) = (0, 0);
    // Frames expected on each egress port, by source address.
    let mut passed: BTreeMap<(u16, u32), u64> = BTreeMap::new();
    let mut colours = [0u64; 4];
    for (port, frames) in run.inputs() {
        for (ps, f) in frames {
            let s = seen(&f);
            let Some(e) = exact(&run.entries, "l2_fwd", &[mac_value(s.dst_mac)]) else {
                missed += 1;
                continue;
            };
            // The meter sees the packet a fixed time after its first bit arrives: only the
            // differences between a port's arrival times matter.
            let colour = meters
                .get_mut(&u32::from(port))
                .map_or(0, |m| m.colour(ps, f.len() as u128));
            colours[colour as usize] += 1;
            if colour == 3 {
                red += 1;
                continue;
            }
            *passed
                .entry((arg(e, 0) as u16, s.ip.unwrap().4))
                .or_default() += 1;
        }
    }
    assert!(
        colours[1] > 0 && red > 0,
        "the over-rate port sees yellow and red: {colours:?}"
    );
    assert_eq!(run.drops("ingress_program_drop"), red + missed);
    assert_eq!(run.report.drops.len(), 1, "{:?}", run.report.drops);

    let mut got: BTreeMap<(u16, u32), u64> = BTreeMap::new();
    let (mut ect, mut marked) = (0, 0);
    for (port, _) in run.tx() {
        for f in run.sent(port) {
            let s = seen(&f);
            let ip = s.ip.unwrap();
            *got.entry((port, ip.4)).or_default() += 1;
            assert!(ipv4_checksum_ok(&f));
            match (ip.1 & 3, ip.2) {
                (0, 64) => {}           // not ECN-capable: never marked
                (2, 100) => ect += 1,   // ECT(0), unmarked
                (3, 64) => marked += 1, // CE, TTL lowered to 64
                other => panic!("port {port}: ECN and TTL {other:?}"),
            }
        }
    }
    assert_eq!(got, passed);
    // Every ECN-capable frame leaves a queue deeper than 1000 cells (the scenario sends them
    // after the queue has built up): each is marked with probability 64/256. The seed fixes
    // the draw; the bounds hold for any seed with overwhelming probability (±4 standard
    // deviations of the binomial).
    let n = (ect + marked) as f64;
    let sd = (n * 0.25 * 0.75).sqrt();
    assert!(
        (marked as f64 - n / 4.0).abs() <= 4.0 * sd,
        "{marked} of {n} ECN-capable frames marked"
    );
}

/// The scenario files name existing entries and pcaps (a path in a comment can go stale).
#[test]
fn every_example_program_has_a_scenario_and_entries() {
    let dir: PathBuf = repo("programs/examples");
    for e in std::fs::read_dir(&dir).unwrap().flatten() {
        let p = e.path();
        if p.extension().is_some_and(|x| x == "p4") {
            let stem = p.file_stem().unwrap().to_string_lossy().into_owned();
            for ext in ["scenario.ron", "entries.ron"] {
                let f = dir.join(format!("{stem}.{ext}"));
                assert!(f.exists(), "{} has no {}", p.display(), f.display());
            }
        }
    }
}
