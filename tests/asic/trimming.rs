//! Packet trimming (programs/trimming) on one `tofino1-trim` chip: the unit behaviours of Popa
//! et al., "Implementing packet trimming support in hardware" (2022), as listed in
//! shared/reference/capfc-fb-trimming.md §3.4, measured on the model and checked with the
//! tolerances stated beside each. Hosts `hI` sit on port `I` (pipe `I / 16`); raw senders at a
//! constant rate; the receiver's port is captured and each frame classified as whole data, an
//! ingress-trimmed header or a header trimmed after deflection (flag 0x80, `F_DOD_TRIMMED`).

use asic_deploy::run::{run_observed, RunOptions};
use asic_deploy::scenario::NetScenario;
use asic_deploy::Mechanism;
use asic_net::network::{Observer, Stop};
use asic_net::packet::{parse, HEADER_BYTES, TRIMMED};
use asic_net::transport::TransportSpec;
use asic_net::NetRun;
use pipelines::time::Time;
use std::path::Path;

/// The program's flag on a header trimmed after deflect-on-drop (`F_DOD_TRIMMED`).
const DOD_TRIMMED: u8 = 0x80;

/// A frame the receiver's port sent: when its first bit left, what it was, and when its
/// sender sent it.
#[derive(Clone, Copy, Debug)]
struct Seen {
    at_ps: u64,
    kind: Kind,
    sent_ps: u64,
    /// The sending host's index (from its address, 10.0.0.(i + 1)).
    src: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Data,
    IngressHeader,
    DodHeader,
}

#[derive(Default)]
struct Frames(Vec<Seen>);

impl Observer for Frames {
    fn capture(&mut self, _capture: usize, start: Time, frame: &[u8]) -> Result<(), String> {
        if let Some(h) = parse(frame).filter(|h| h.is_data()) {
            let header_only = frame.len() < HEADER_BYTES + h.len as usize;
            let kind = match (
                h.flags & TRIMMED != 0 || header_only,
                h.flags & DOD_TRIMMED != 0,
            ) {
                (false, _) => Kind::Data,
                (true, false) => Kind::IngressHeader,
                (true, true) => Kind::DodHeader,
            };
            self.0.push(Seen {
                at_ps: start.0,
                kind,
                sent_ps: h.ts_ps,
                src: (h.src_ip & 0xff) - 1,
            });
        }
        Ok(())
    }
}

/// Run `traffic` on one tofino1-trim chip with 64 hosts, `deploy` the trimming parameters,
/// `control` the chip's control operations; h0's port (0) captured, queues sampled every µs.
/// (A constant-rate source sends `rate × duration` of application bytes, paced on the wire,
/// so it goes on about 7 % past its `stop_ns`: runs stop well after it.)
fn run(deploy: &str, traffic: &str, control: &str, stop_ns: u64) -> (NetRun, Vec<Seen>) {
    run_on("tofino1-trim.ron", deploy, traffic, control, stop_ns)
}

/// [`run`] on the chip profile `chip` (a file in programs/trimming or a built-in name).
fn run_on(
    chip: &str,
    deploy: &str,
    traffic: &str,
    control: &str,
    stop_ns: u64,
) -> (NetRun, Vec<Seen>) {
    let setup =
        format!("deploy: Trimming(({deploy})), chips: [(select: All, control: [{control}])],");
    run_captured(chip, &setup, traffic, &[0], stop_ns)
}

/// `traffic` on one chip `chip` with 64 hosts, `setup` its deployment and chip settings, the
/// ports `ports` captured (in one list of frames), queues sampled every µs.
fn run_captured(
    chip: &str,
    setup: &str,
    traffic: &str,
    ports: &[u16],
    stop_ns: u64,
) -> (NetRun, Vec<Seen>) {
    let pcaps: String = ports
        .iter()
        .map(|p| format!(r#"(node: "sw0", port: {p}),"#))
        .collect();
    let text = format!(
        r#"(
            topology: Generate((shape: SingleSwitch(hosts: 64), chip: "{chip}", delay_ns: 500)),
            {setup}
            transport: Raw(()),
            traffic: [{traffic}],
            pcaps: [{pcaps}],
            sample_period_ns: Some(1000),
            stop: (at_ns: Some({stop_ns}), when_flows_complete: false),
        )"#
    );
    let s: NetScenario = ron::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("programs/trimming");
    let mut frames = Frames::default();
    let r = run_observed(s, &dir, RunOptions::default(), &mut frames).unwrap();
    (r, frames.0)
}

/// `src` sends to h0 at `gbps` from `start_ns` to `stop_ns`.
fn rate(src: u16, gbps: f64, start_ns: u64, stop_ns: u64) -> String {
    rate_to(src, 0, gbps, start_ns, stop_ns)
}

/// `src` sends to `dst` at `gbps` from `start_ns` to `stop_ns`.
fn rate_to(src: u16, dst: u16, gbps: f64, start_ns: u64, stop_ns: u64) -> String {
    format!(
        r#"ConstantRate((src: "h{src}", dst: "h{dst}", rate_gbps: {gbps}, start_ns: {start_ns}, stop_ns: {stop_ns})),"#
    )
}

/// A counter of the ingress program, summed over its index `port`, in `pipe`.
fn counter(r: &NetRun, pipe: u16, name: &str, port: u32) -> u64 {
    r.chips[0]
        .counter_read_by_name(pipe, name, port)
        .unwrap_or_else(|e| panic!("{name}: {e}"))
        .packets
}

/// Packets host `h` sent.
fn sent(r: &NetRun, h: usize) -> u64 {
    r.record.hosts[h].packets_sent
}

/// The port's mode forced for the whole run by writing its timers (as a NOTIFY would, with
/// expiries far beyond the run): `t0` pessimistic, `t1` half.
fn force(t0_ns: u64, t1_ns: u64) -> String {
    format!(
        r#"(at_ns: 0, op: WriteRegister((register: "t0_reg", index: 0, value: {t0_ns}))),
           (at_ns: 0, op: WriteRegister((register: "t1_reg", index: 0, value: {t1_ns}))),"#
    )
}

/// §3.4 item 5: one pipe offers 150 Gb/s to a 100G port (h1 and h2 at 75 Gb/s each, pipe 0).
/// The port's meters trim 1/3 of it in optimistic mode, 2/3 in half mode and 5/6 in
/// pessimistic mode (what is left is 100, 50 and 25 Gb/s on the wire, the meters counting
/// the wire's 24 bytes per frame).
#[test]
fn meter_modes_trim_a_third_two_thirds_and_five_sixths_of_150_gbps() {
    let traffic = [rate(1, 75.0, 0, 150_000), rate(2, 75.0, 0, 150_000)].concat();
    for (mode, control, want) in [
        ("optimistic", String::new(), 1.0 / 3.0),
        ("half", force(0, 1 << 30), 2.0 / 3.0),
        ("pessimistic", force(1 << 30, 1 << 30), 5.0 / 6.0),
    ] {
        let (r, seen) = run("feedback: None", &traffic, &control, 200_000);
        let offered = sent(&r, 1) + sent(&r, 2);
        let trims = counter(&r, 0, "trims_ingress", 0);
        let got = trims as f64 / offered as f64;
        let headers = seen
            .iter()
            .filter(|s| s.kind == Kind::IngressHeader)
            .count() as u64;
        println!("{mode}: {trims} of {offered} trimmed in ingress ({got:.4}; the paper {want:.4}), {headers} headers at h0, {} deflected", r.chips[0].plumbing_counters().deflected);
        assert_share(got, want, offered, mode);
        // Every trim reached the receiver as a header.
        assert_eq!(
            headers,
            trims,
            "{mode}: drops {:?}, {:?}",
            r.record.drops,
            r.chips[0].plumbing_counters()
        );
    }
}

/// A share of trimmed packets against the paper's: a meter starts with a full bucket (12
/// frames, the data queue) that passes untrimmed, so the share may be that many packets of
/// `offered` lower; and 0.5 % either side for the rest (rounding of rates to whole bytes,
/// the last packets of a run).
fn assert_share(got: f64, want: f64, offered: u64, what: &str) {
    let burst = 13.0 / offered as f64;
    assert!(
        got <= want + 0.005 && got >= want - burst - 0.005,
        "{what}: trimmed {got:.4}, want {want:.4} (down to {:.4})",
        want - burst - 0.005
    );
}

/// The value of register `name`, element 0 (port 0), in `pipe` as the `i`-th scheduled read
/// of the run returned it.
fn read_at(r: &NetRun, i: usize, pipe: u16) -> u64 {
    let read = &r.record.chips[0].reads[i];
    let group = read
        .pipes
        .iter()
        .find(|g| g.pipes.contains(&pipe))
        .expect("every pipe read");
    match &group.state {
        pipelines::readout::Reading::Register(reg) => {
            reg.elements.first().map_or(reg.init, |e| e.value)
        }
        other => panic!("not a register: {other:?}"),
    }
}

/// The share of the packets h1 and h2 (pipe 0) sent that were trimmed in ingress, among those
/// that reached the chip's ingress between `from_ns` and `to_ns` (sent time + 0.7 µs: the
/// 500 ns link, one frame's serialization and the parser).
fn trimmed_share(seen: &[Seen], from_ns: u64, to_ns: u64) -> (f64, usize) {
    let mine: Vec<&Seen> = seen
        .iter()
        .filter(|s| s.src == 1 || s.src == 2)
        .filter(|s| {
            let at = (s.sent_ps + 700_000) / 1000;
            at >= from_ns && at < to_ns
        })
        .collect();
    let trimmed = mine
        .iter()
        .filter(|s| s.kind == Kind::IngressHeader)
        .count();
    (trimmed as f64 / mine.len().max(1) as f64, mine.len())
}

/// The port's modes after NOTIFYs, as the pipe-0 trims of a steady 150 Gb/s show them. Two
/// bursts overflow port 0: h16 (pipe 1) at 40-43 µs, while the port is optimistic, and h16
/// and h32 (pipes 1, 2) at 60-66 µs, while it is half-pessimistic. The last NOTIFY of each
/// (A1, A2) is read back from `t1_reg` (= NOTIFY + T1) at 47 and 70 µs. Returns the trimmed
/// share in: (A1, A1+T0), (A1+T0, the second burst's first NOTIFY), (A2, A2+T0),
/// (A2+T0, A2+T1), 15 µs after A2+T1; each window 1 µs inside its ends.
fn mode_windows(deploy: &str, t0_ns: u64, t1_ns: u64) -> [(f64, usize); 5] {
    let traffic = [
        rate(1, 75.0, 0, 140_000),
        rate(2, 75.0, 0, 140_000),
        rate(16, 100.0, 40_000, 43_000),
        rate(16, 100.0, 60_000, 66_000),
        rate(32, 100.0, 60_000, 66_000),
    ]
    .concat();
    let control = r#"(at_ns: 47000, op: ReadRegister((register: "t1_reg", index: Some(0)))),
                     (at_ns: 70000, op: ReadRegister((register: "t1_reg", index: Some(0)))),"#;
    let (r, seen) = run(deploy, &traffic, control, 150_000);
    let a1 = read_at(&r, 0, 0) - t1_ns;
    let a2 = read_at(&r, 1, 0) - t1_ns;
    // The second burst's first NOTIFY comes after its first header trimmed on the DoD path
    // left the port (the NOTIFY takes one more recirculation).
    let f2 = seen
        .iter()
        .find(|s| s.kind == Kind::DodHeader && s.at_ps > 50_000_000)
        .map(|s| s.at_ps / 1000)
        .expect("the second burst was deflected");
    println!("{deploy}: last NOTIFY of the first burst at {a1} ns; the second burst's first DoD header left at {f2} ns, its last NOTIFY at {a2} ns");
    assert!((41_000..47_000).contains(&a1), "A1 = {a1}");
    assert!(
        (61_000..70_000).contains(&a2) && f2 < a2,
        "F2 = {f2}, A2 = {a2}"
    );
    let w = |from: u64, to: u64| trimmed_share(&seen, from + 1000, to - 1000);
    // Optimistic for 15 µs after the response: the header queue's share of the port (1/3 of
    // 150 Gb/s trimmed is 3.4 Gb/s of headers) fills the data queue, deflects and re-arms
    // the port about 40 µs later.
    let out = [
        w(a1, a1 + t0_ns),
        w(a1 + t0_ns, f2 + 500),
        w(a2, a2 + t0_ns),
        w(a2 + t0_ns, a2 + t1_ns),
        w(a2 + t1_ns, a2 + t1_ns + 15_000),
    ];
    println!("  trimmed share (packets) by window: {out:?}");
    out
}

/// Tolerance on a window's trimmed share: one packet in 12 (a 4 µs window holds about 49 of
/// h1 and h2's packets) and the meters' bursts at a mode change.
const SHARE_TOL: f64 = 0.08;

fn assert_shares(got: &[(f64, usize); 5], want: [f64; 5], what: &str) {
    for (i, ((g, n), w)) in got.iter().zip(want).enumerate() {
        assert!(*n >= 20, "{what}: window {i} holds only {n} packets");
        assert!(
            (g - w).abs() < SHARE_TOL,
            "{what}: window {i}: {g:.3}, want {w:.3} ({got:?})"
        );
    }
}

/// §3.4 item 6: a NOTIFY makes the port pessimistic (5/6 of 150 Gb/s trimmed) until 6 µs after
/// it, half-pessimistic (2/3) until 24 µs, then optimistic (1/3); a NOTIFY while half returns
/// the port to pessimistic for 6 µs (re-arming), on every pipe.
#[test]
fn a_notify_makes_the_port_pessimistic_for_6_us_then_half_until_24_us_and_rearms() {
    let got = mode_windows("", 6_000, 24_000);
    assert_shares(
        &got,
        [5.0 / 6.0, 2.0 / 3.0, 5.0 / 6.0, 2.0 / 3.0, 1.0 / 3.0],
        "graded",
    );
}

/// The response duration is a parameter: T0 = 3 µs, T1 = 12 µs shift every mode change.
#[test]
fn the_response_duration_is_a_parameter() {
    let got = mode_windows("t0_ns: 3000, t1_ns: 12000", 3_000, 12_000);
    // The pessimistic windows are 1 µs long (12 packets): each holds at most 2 untrimmed.
    for i in [0, 2] {
        assert!(got[i].1 >= 10 && got[i].0 >= 0.8, "window {i}: {got:?}");
    }
    // (A1 + T0, F2) spans the half mode (to A1 + 12 µs) and optimistic after it: the share
    // lies between theirs.
    assert!(
        got[1].0 > 1.0 / 3.0 + 0.05 && got[1].0 < 2.0 / 3.0 - 0.05,
        "{got:?}"
    );
    for (i, want) in [(3, 2.0 / 3.0), (4, 1.0 / 3.0)] {
        assert!((got[i].0 - want).abs() < SHARE_TOL, "window {i}: {got:?}");
    }
}

/// The paper's "25 % trimming" ablation: pessimistic until T0, then optimistic at once.
#[test]
fn pessimistic_only_goes_back_to_optimistic_after_t0() {
    let got = mode_windows("response: PessimisticOnly", 6_000, 24_000);
    assert_shares(
        &got,
        [5.0 / 6.0, 1.0 / 3.0, 5.0 / 6.0, 1.0 / 3.0, 1.0 / 3.0],
        "pessimistic only",
    );
}

/// The "100 % trimming" ablation: every data packet trimmed until T0, then optimistic.
#[test]
fn trim_all_trims_every_packet_until_t0() {
    let got = mode_windows("response: TrimAll", 6_000, 24_000);
    assert_shares(
        &got,
        [1.0, 1.0 / 3.0, 1.0, 1.0 / 3.0, 1.0 / 3.0],
        "trim all",
    );
}

/// §3.4 item 7, switch.p4's two trTCMs (`opti`: PIR line rate, CIR half; `pesi`: a quarter):
/// 75 Gb/s is yellow for `opti`, which forwards in optimistic mode and trims in half mode
/// (to 50 Gb/s: 1/3 trimmed); pessimistic trims to 25 Gb/s (2/3). The half meter is unused.
#[test]
fn switch_p4_meters_forward_yellow_when_optimistic_and_trim_it_when_half() {
    let traffic = rate(1, 75.0, 0, 150_000);
    for (mode, control, want) in [
        ("optimistic", String::new(), 0.0),
        ("half", force(0, 1 << 30), 1.0 / 3.0),
        ("pessimistic", force(1 << 30, 1 << 30), 2.0 / 3.0),
    ] {
        let (r, _) = run(
            "meters: TwoTrTcm, feedback: None",
            &traffic,
            &control,
            200_000,
        );
        let got = counter(&r, 0, "trims_ingress", 0) as f64 / sent(&r, 1) as f64;
        println!("switch.p4 {mode}: {got:.4} trimmed (want {want:.4})");
        assert_share(got, want, sent(&r, 1), mode);
        let state = &r.record.chips[0].state.pipes[0].state.ingress;
        let meters = |name: &str| {
            let m = state
                .meters
                .iter()
                .find(|m| m.name.ends_with(name))
                .unwrap();
            (m.meters.len(), m.byte_count_adjust)
        };
        assert_eq!(meters("m_half"), (0, 0), "m_half unused");
        assert_eq!(
            meters("m_opt"),
            (64, 24),
            "m_opt on every port, the wire's 24 bytes counted"
        );
    }
}

/// §3.4 item 8 and the DoD-only variant: one 100G sender in each pipe towards port 0. Each
/// pipe's meter sees only 100 Gb/s, so without feedback nothing is trimmed in ingress and
/// 300 of the 400 Gb/s is deflected (less the share of the port its headers take; within
/// 2 %), every packet still arriving whole or as a header; with the NOTIFYs (the paper's design) the pipes trim in ingress and far
/// fewer packets take the DoD path.
#[test]
fn four_pipes_at_line_rate_are_invisible_to_the_meters_and_feedback_moves_trims_to_ingress() {
    let senders = [1u16, 17, 33, 49];
    let traffic: String = senders
        .iter()
        .map(|&h| rate(h, 100.0, 0, 100_000))
        .collect();
    let mut deflected_share = Vec::new();
    for deploy in ["feedback: None", ""] {
        let (r, seen) = run(deploy, &traffic, "", 200_000);
        let offered: u64 = senders.iter().map(|&h| sent(&r, h as usize)).sum();
        let ingress: u64 = (0..4).map(|p| counter(&r, p, "trims_ingress", 0)).sum();
        let dod: u64 = (0..4).map(|p| counter(&r, p, "trims_dod", 0)).sum();
        let deflected = r.chips[0].plumbing_counters().deflected;
        let max_dod = (0..4u16)
            .map(|p| r.chips[0].tm().queue_counters(64 + p, 2).max_depth_cells)
            .max()
            .unwrap();
        let whole = seen.iter().filter(|s| s.kind == Kind::Data).count() as u64;
        let headers = seen.len() as u64 - whole;
        println!(
            "{deploy:?}: {offered} offered, {ingress} ingress trims, {dod} DoD trims, {deflected} deflected ({:.3}), DoD queue at most {max_dod} cells; at h0 {whole} whole + {headers} headers",
            deflected as f64 / offered as f64
        );
        assert_eq!(
            whole + headers,
            offered,
            "{deploy}: every packet arrives whole or as a header"
        );
        assert_eq!(dod, deflected, "{deploy}: every deflected packet trimmed");
        deflected_share.push(deflected as f64 / offered as f64);
        if deploy.is_empty() {
            assert!(ingress > offered / 2, "{deploy}: {ingress} ingress trims");
        } else {
            assert_eq!(ingress, 0, "no ingress trims without feedback");
            // The port sends a share x of the packets whole and the rest as 80-byte headers
            // (104 bytes of wire time each, from the header queue): 4 frames offered per
            // frame slot, x·1538 + (1 − x)·104 = 1538 / 4, so x = 0.196 and 80.4 % is
            // deflected: the paper's 300 of 400 Gb/s, less the headers' share of the port.
            let (slot, hdr) = (1538.0, 104.0);
            let x = (slot / 4.0 - hdr) / (slot - hdr);
            assert!(
                (deflected_share[0] - (1.0 - x)).abs() < 0.02,
                "{deflected_share:?}, want {}",
                1.0 - x
            );
        }
    }
    assert!(
        deflected_share[1] < deflected_share[0] / 5.0,
        "{deflected_share:?}"
    );
}

/// Where the signal goes: h16 and h32 (pipes 1, 2) overflow port 0. With NOTIFYs to every
/// pipe, pipe 3 (which sends nothing) arms port 0 too; with the originating pipe only it does
/// not, and pipes 1 and 2 arm from their own UPDATEs; without feedback no pipe arms.
#[test]
fn notifies_reach_every_pipe_the_originating_pipe_or_none() {
    let traffic = [rate(16, 100.0, 0, 20_000), rate(32, 100.0, 0, 20_000)].concat();
    for (deploy, want) in [
        ("", [true, true, true, true]),
        ("feedback: OriginPipe", [false, true, true, false]),
        ("feedback: None", [false, false, false, false]),
    ] {
        let (r, _) = run(deploy, &traffic, "", 40_000);
        let armed: Vec<bool> = (0..4).map(|p| counter(&r, p, "notifies", 0) > 0).collect();
        println!(
            "{deploy:?}: NOTIFYs per pipe {:?}",
            (0..4)
                .map(|p| counter(&r, p, "notifies", 0))
                .collect::<Vec<_>>()
        );
        assert_eq!(armed, want, "{deploy}");
        assert!(r.chips[0].plumbing_counters().deflected > 0, "{deploy}");
    }
}

/// §3.4 item 3: a header trimmed in ingress goes to the port's header queue, served first,
/// so it overtakes the data queued before it: with 150 Gb/s from pipe 0 (the data queue
/// full), the slowest header is faster than the median data packet.
#[test]
fn a_trimmed_header_overtakes_the_data_queued_before_it() {
    let traffic = [rate(1, 75.0, 0, 100_000), rate(2, 75.0, 0, 100_000)].concat();
    let (_, seen) = run("feedback: None", &traffic, "", 110_000);
    let latency = |k: Kind| {
        let mut v: Vec<u64> = seen
            .iter()
            .filter(|s| s.kind == k && s.sent_ps > 10_000_000)
            .map(|s| s.at_ps - s.sent_ps)
            .collect();
        v.sort_unstable();
        v
    };
    let (headers, data) = (latency(Kind::IngressHeader), latency(Kind::Data));
    let (h_max, d_med) = (headers[headers.len() - 1], data[data.len() / 2]);
    println!(
        "header latency max {h_max} ps (median {} ps); data median {d_med} ps",
        headers[headers.len() / 2]
    );
    assert!(
        h_max < d_med,
        "header max {h_max} ps, data median {d_med} ps"
    );
    // Headers and data of one sender leave out of order: some header left before a data
    // packet sent before it.
    let overtakes = seen.windows(2).filter(|w| {
        w[0].kind == Kind::IngressHeader && w[1].kind == Kind::Data && w[1].sent_ps < w[0].sent_ps
    });
    assert!(overtakes.count() > 100);
}

/// NDP's ideal (§2): byte-based WFQ between the header and data queues keeps data moving
/// while a flood of headers is queued, where strict priority stops it. A 63:1 incast at line
/// rate for 30 µs from every pipe: from 3 to 28 µs both queues of h0's port hold packets.
/// Strict priority sends headers only. WFQ with a header weight of 4 is DRR with quanta of
/// 4 × 9,216 and 9,216 stored bytes: per round 438 headers (84 stored bytes, 104 on the wire)
/// and 6 data frames (1,518 stored, 1,538 on the wire), 54.8 kB of wire time, 4.38 µs at
/// 100 Gb/s: 1.37 data frames per µs, 34 in the 25 µs. Every packet still arrives, whole or
/// as a header.
#[test]
fn wfq_keeps_data_moving_under_a_flood_of_headers() {
    let traffic: String = (1..64u16)
        .map(|s| rate_to(s, 0, 100.0, 0, 30_000))
        .collect();
    let in_window = |s: &&Seen| (3_000_000..28_000_000).contains(&s.at_ps);
    let mut data = Vec::new();
    for deploy in ["", "header_queue: Wfq(header_weight: 4)"] {
        let (r, seen) = run(deploy, &traffic, "", 1_000_000);
        let c = asic_report::metrics::conservation(&r.record);
        assert_eq!((c.received, c.dropped), (c.sent, 0), "{deploy}: {c:?}");
        let headers = seen
            .iter()
            .filter(in_window)
            .filter(|s| s.kind != Kind::Data);
        assert!(
            headers.count() > 1_000,
            "{deploy}: the headers flood the port"
        );
        data.push(
            seen.iter()
                .filter(in_window)
                .filter(|s| s.kind == Kind::Data)
                .count(),
        );
    }
    println!(
        "data frames at h0 from 3 to 28 µs: strict priority {}, WFQ 4:1 {}",
        data[0], data[1]
    );
    assert_eq!(data[0], 0, "strict priority sends no data during the flood");
    assert!(
        (28..=40).contains(&data[1]),
        "WFQ 4:1: {} data frames, 34 expected",
        data[1]
    );
}

/// §3.4 item 2 in a network: the ideal switch's header queue holds 20 headers, and a 63:1
/// incast of NDP flows (200 packets each, all in the first window) overflows it. Without
/// return-to-sender the refused headers are dropped (counted) and their packets wait for the
/// senders' 1 ms timeout; with it (`return_to_sender`) nothing is dropped, the headers go back
/// to their senders, which resend at once, and the incast ends within 20 % of the time the
/// receiver's port needs for it (1,550 µs).
#[test]
fn returned_headers_are_resent_at_once_instead_of_timing_out() {
    let traffic: String = (1..64u16)
        .map(|s| format!(r#"Flow((src: "h{s}", dst: "h0", size: 288000)),"#))
        .collect();
    let run = |back: &str| {
        let text = format!(
            r#"(
            topology: Generate((shape: SingleSwitch(hosts: 64), chip: "tofino1-trim.ron", delay_ns: 500)),
            deploy: Routers(Ecmp),
            chips: [(select: All, config: Some((tm: (admission: Static,
                queues: [(static_limit_cells: Some(228)), (static_limit_cells: Some(20))],
                scheduler: SpOverDrr(levels: [0, 7], quanta: []),
                trim: Some((bytes: 80, queue: 1, mark: Some((offset: 42, mask: 16)){back}))))))],
            transport: Ndp((init_window_packets: 1000, rto_us: 1000.0)),
            traffic: [{traffic}],
            stop: (at_ns: Some(20000000), when_flows_complete: true),
        )"#
        );
        let s: NetScenario = ron::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("programs/trimming");
        let r = run_observed(s, &dir, RunOptions::default(), &mut ()).unwrap();
        let c = asic_report::metrics::conservation(&r.record);
        assert_eq!(
            c.received + c.dropped,
            c.sent,
            "{back}: {c:?} {:?}",
            r.record.drops
        );
        let last = r
            .record
            .flows
            .iter()
            .map(|f| f.fct_ps().expect("completes"))
            .max();
        (
            c.dropped,
            r.chips[0].tm().counters().returned_pkts,
            last.unwrap(),
        )
    };
    let (dropped, returned, last) = run("");
    let (dropped_back, returned_back, last_back) =
        run(", return_to_sender: Some((ethernet_offset: 0))");
    println!(
        "without return-to-sender: {dropped} headers dropped, last flow {} µs; with: {returned_back} returned, {dropped_back} dropped, last flow {} µs",
        last / 1_000_000,
        last_back / 1_000_000
    );
    // The receiver's port takes 63 × 200 frames of 1,538 wire bytes: 1,550 µs at 100 Gb/s.
    let drain = 63 * 200 * 1538 * 8 * 10; // ps
    assert!(dropped > 0 && returned == 0, "the header queue overflows");
    assert!(
        last > drain + 1_000_000_000,
        "a dropped header's packet waits for the 1 ms timeout"
    );
    assert_eq!(dropped_back, 0, "every refused header went back");
    assert!(returned_back > 0);
    assert!(
        last_back < drain * 12 / 10,
        "resent at once: the incast ends within 20 % of the port's drain time"
    );
}

/// §3.4 item 11, the hardware test: 4 + 4 flows at 100 Gb/s into two ports, from all four
/// pipes. No packet is lost: every one arrives whole or as its header, and the chip drops
/// nothing but the originals of trimmed packets and the consumed signals.
#[test]
fn four_plus_four_flows_lose_nothing() {
    let traffic: String = [
        (2u16, 0u16),
        (17, 0),
        (33, 0),
        (49, 0),
        (3, 1),
        (18, 1),
        (34, 1),
        (50, 1),
    ]
    .iter()
    .map(|&(s, d)| rate_to(s, d, 100.0, 0, 100_000))
    .collect();
    let (r, seen) = run("", &traffic, "", 200_000);
    let to_h0: u64 = [2, 17, 33, 49].iter().map(|&h| sent(&r, h)).sum();
    let whole = seen.iter().filter(|s| s.kind == Kind::Data).count();
    let ingress = seen
        .iter()
        .filter(|s| s.kind == Kind::IngressHeader)
        .count();
    let dod = seen.iter().filter(|s| s.kind == Kind::DodHeader).count();
    println!(
        "h0: {to_h0} sent, {whole} whole, {ingress} ingress-trimmed, {dod} DoD-trimmed headers"
    );
    assert_eq!((whole + ingress + dod) as u64, to_h0);
    assert!(dod > 0 && ingress > dod);
    let c = asic_report::metrics::conservation(&r.record);
    assert_eq!(
        (c.received, c.dropped, c.in_flight),
        (c.sent, 0, 0),
        "{c:?}"
    );
    for d in &r.record.drops {
        assert!(
            d.reason == "ingress_program_drop" || d.reason == "egress_program_drop",
            "{:?}",
            r.record.drops
        );
    }
}

/// Stopped while the data queue is full and the recirculation loop busy: every packet still
/// inside the chip is counted there, not as lost, although the program has put its bridged
/// header in front of its bytes (the chip keeps the host's tag on the packet and its copies).
#[test]
fn packets_inside_the_chip_at_the_stop_are_in_flight_not_lost() {
    let traffic: String = [2u16, 17, 33, 49]
        .iter()
        .map(|&s| rate_to(s, 0, 100.0, 0, 100_000))
        .collect();
    let (r, _) = run("", &traffic, "", 5_300);
    let senders: Vec<_> = r.balance.iter().filter(|b| b.offered > 0).collect();
    let inside: u64 = senders.iter().map(|b| b.in_chips).sum();
    let lost: u64 = senders.iter().map(|b| b.dropped_in_chips).sum();
    // 12 frames in the data queue at least, and what the DoD loop holds.
    assert!(inside >= 12, "{senders:?}");
    assert_eq!(lost, 0, "{senders:?}");
    let c = asic_report::metrics::conservation(&r.record);
    assert_eq!(c.dropped, 0, "{c:?}");
}

/// §3.4 item 12, the Tofino 2 variant on `tofino2-100g` (4 pipes × 16 × 100G): the data
/// queue's depth, as the TM publishes it to ingress, trims above a threshold (10 frames).
/// Packets already past the stage that read the depth when it crossed are admitted
/// untrimmed: at most, per sender, the packets that reach ingress within the export's period
/// and delay plus the ingress pipe's latency, plus the one in flight. The queue's peak above
/// the threshold bounds them.
#[test]
fn depth_trimming_admits_a_bounded_number_of_packets_after_the_crossing() {
    let frame_cells = 19; // 1518 bytes stored (with the bridged header) in 80-byte cells
    let thr = 10 * frame_cells;
    let senders = [1u16, 17, 33, 49];
    let traffic: String = senders.iter().map(|&h| rate(h, 100.0, 0, 50_000)).collect();
    let deploy = format!("trigger: Depth(threshold_cells: {thr}), data_queue_packets: 40");
    let (r, seen) = run_on("../bfc/tofino2-100g.ron", &deploy, &traffic, "", 80_000);
    let chip = &r.chips[0];
    let prof = chip.profile();
    let lat = &prof.pipe.latency;
    let per_stage = lat.stage_base_cycles
        + lat.tcam_extra_cycles
        + lat.stateful_extra_cycles
        + lat.meter_extra_cycles;
    let ingress_cycles =
        lat.parser_cycles + prof.pipe.stages as u32 * per_stage + lat.deparser_cycles;
    let lag_ps = prof.tm.depth_export_period_ps
        + prof.tm.depth_export_delay_ps
        + ingress_cycles as u64 * 1_000_000_000_000 / prof.clock_hz;
    let slot_ps = asic_model::mac::slot_time(1514, 100).0;
    let bound = senders.len() as u64 * (lag_ps.div_ceil(slot_ps) + 1);
    let peak = chip.tm().queue_counters(0, 0).max_depth_cells as u64;
    let over = peak.saturating_sub(thr).div_ceil(frame_cells);
    let trims: u64 = (0..4).map(|p| counter(&r, p, "trims_ingress", 0)).sum();
    println!(
        "lag {lag_ps} ps = {:.2} frame slots; bound {bound} packets; peak {peak} cells, {over} frames above the threshold; {trims} ingress trims, {} deflected, {} headers at h0",
        lag_ps as f64 / slot_ps as f64,
        chip.plumbing_counters().deflected,
        seen.iter().filter(|s| s.kind != Kind::Data).count()
    );
    assert!(trims > 0);
    assert!(
        over <= bound,
        "{over} frames above the threshold, bound {bound}"
    );
    assert_eq!(chip.plumbing_counters().deflected, 0);
}

/// The largest DoD queue (cells, recirculation ports' queue 2): the TM's own maximum, and the
/// largest sample of the series `asic net` records for it.
fn max_dod_queue(r: &NetRun) -> (u32, f64) {
    let chip = &r.chips[0];
    let prof = chip.profile();
    let tm_max = (0..prof.pipes)
        .filter_map(|p| prof.recirc_port(p, 0))
        .map(|rp| chip.tm().queue_counters(rp, 2).max_depth_cells)
        .max()
        .unwrap();
    let sampled = r
        .record
        .series
        .iter()
        .filter(|s| s.name.ends_with(".q2.depth_cells"))
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .fold(0.0, f64::max);
    (tm_max, sampled)
}

/// Two 4:1 incasts across the pipes (each pipe sends 100 Gb/s to h0 and to h3): no meter sees
/// more than line rate, so each pipe deflects 150 Gb/s into its 100G recirculation port.
/// Without feedback the DoD queues grow for the whole incast (the paper's unstable "DoD"
/// curve); with the NOTIFYs they stay a few packets. The queues' series are in the record.
#[test]
fn feedback_keeps_the_dod_queues_small_where_deflect_on_drop_alone_overflows() {
    let traffic: String = (0..4u16)
        .flat_map(|p| {
            [
                rate_to(16 * p + 1, 0, 100.0, 0, 20_000),
                rate_to(16 * p + 2, 3, 100.0, 0, 20_000),
            ]
        })
        .collect();
    let mut max = Vec::new();
    for deploy in ["feedback: None", ""] {
        let (r, _) = run(deploy, &traffic, "", 80_000);
        let (tm_max, sampled) = max_dod_queue(&r);
        let c = asic_report::metrics::conservation(&r.record);
        println!(
            "{deploy:?}: DoD queue at most {tm_max} cells ({:.1} frames), sampled {sampled}; {c:?}",
            tm_max as f64 / 19.0
        );
        assert!(
            sampled > 0.0 && sampled <= tm_max as f64,
            "{deploy}: {sampled} of {tm_max}"
        );
        assert_eq!((c.received, c.dropped), (c.sent, 0), "{deploy}: {c:?}");
        max.push(tm_max);
    }
    // 50 Gb/s of excess per recirculation port for 21 µs is about 85 frames, more as the
    // headers take their share of the ports (measured: 116); the loop holds it to a quarter of
    // that (measured: 20 frames; the paper's bound over its sweep is 250 packets): the first
    // NOTIFY comes only after a deflected packet has crossed the DoD queue and two loops.
    assert!(
        max[0] > 1_600 && max[1] * 4 < max[0] && max[1] <= 250 * 19,
        "{max:?}"
    );
}

/// One NDP run of the sweeps on the `tofino1-trim` chip with 64 hosts: sender `s` sends one
/// flow of 2,000 packets with a 1,000-packet first window to host `dst`, for each `(s, dst)`
/// of `pairs`; `setup` is the scenario's deployment and chip settings (`deploy: ...`).
struct NdpRun {
    /// The flows' mean and lowest throughput (size over FCT), Gb/s.
    mean: f64,
    lowest: f64,
    /// The program's counters summed over pipes and ports (zero without the program).
    ingress: u64,
    dod: u64,
    notifies: u64,
    /// `trims_dod` per pipe (the pipe the deflected packet came in on).
    dod_by_pipe: Vec<u64>,
    /// Per pipe, the share of (read, receiver port) samples in pessimistic, half and
    /// optimistic mode, from the setup's scheduled reads of `t0_reg` and `t1_reg` (pairs at
    /// one time, every element), if it schedules any: over all reads, and over the reads from
    /// 150 µs on (after the first windows' blast at 125 µs, as the paper counts it).
    modes: Vec<[f64; 3]>,
    modes_late: Vec<[f64; 3]>,
    /// Trims in the TM (what-if ideal trimming), all ports.
    ideal: u64,
    /// The largest DoD queue (frames of 19 cells) and when the sampled series peaked (µs).
    dod_frames: f64,
    dod_peak_us: f64,
    /// Data packets lost in the network (neither delivered whole nor as a header).
    lost: u64,
    secs: f64,
}

impl NdpRun {
    /// Every trim, wherever it happened.
    fn trims(&self) -> u64 {
        self.ingress + self.dod + self.ideal
    }
}

fn ndp_run(pairs: &[(u16, u16)], setup: &str) -> NdpRun {
    ndp_run_from(pairs, |_| 0, setup, SWEEP_NDP)
}

/// The NDP hosts of the sweeps: the paper's 1,000-packet first window, htsim's pull pacing.
const SWEEP_NDP: &str = "init_window_packets: 1000, rto_us: 1000.0";

/// [`ndp_run`] with sender `s` starting at `start_ns(s)` and the hosts' `Ndp((...))`
/// parameters `ndp`.
fn ndp_run_from(
    pairs: &[(u16, u16)],
    start_ns: impl Fn(u16) -> u64,
    setup: &str,
    ndp: &str,
) -> NdpRun {
    let traffic: String = pairs
        .iter()
        .map(|&(s, d)| {
            format!(
                r#"Flow((src: "h{s}", dst: "h{d}", size: 2880000, start_ns: {})),"#,
                start_ns(s)
            )
        })
        .collect();
    let text = format!(
        r#"(
            topology: Generate((shape: SingleSwitch(hosts: 64), chip: "tofino1-trim.ron", delay_ns: 500)),
            {setup}
            transport: Ndp(({ndp})),
            traffic: [{traffic}],
            sample_period_ns: Some(1000),
            stop: (at_ns: Some(5000000), when_flows_complete: true),
        )"#
    );
    let s: NetScenario = ron::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("programs/trimming");
    let wall = std::time::Instant::now();
    let r = run_observed(s, &dir, RunOptions::default(), &mut ()).unwrap();
    let secs = wall.elapsed().as_secs_f64();
    let rates: Vec<f64> = r
        .record
        .flows
        .iter()
        .map(|f| {
            f.size_bytes as f64 * 8.0 / (f.fct_ps().expect("every flow completes") as f64 / 1000.0)
        })
        .collect();
    let c = asic_report::metrics::conservation(&r.record);
    assert_eq!(c.received + c.dropped, c.sent, "{setup}: {c:?}");
    let chip = &r.chips[0];
    let in_pipe = |name: &str, p: u16| -> u64 {
        (0..64)
            .map(|port| {
                chip.counter_read_by_name(p, name, port)
                    .map_or(0, |c| c.packets)
            })
            .sum()
    };
    let sum = |name: &str| -> u64 { (0..4).map(|p| in_pipe(name, p)).sum() };
    let ideal = chip.tm().trims().map(|t| t.2).sum();
    let (tm_max, _) = max_dod_queue(&r);
    let receivers: Vec<u16> = pairs.iter().map(|p| p.1).collect();
    let dod_peak_us = r
        .record
        .series
        .iter()
        .filter(|s| s.name.ends_with(".q2.depth_cells"))
        .flat_map(|s| s.points.iter())
        .fold((0u64, 0.0), |m, p| if p.1 > m.1 { (p.0, p.1) } else { m })
        .0 as f64
        / 1e6;
    NdpRun {
        mean: rates.iter().sum::<f64>() / rates.len() as f64,
        lowest: rates.iter().cloned().fold(f64::INFINITY, f64::min),
        ingress: sum("trims_ingress"),
        dod: sum("trims_dod"),
        notifies: sum("notifies"),
        dod_by_pipe: (0..4).map(|p| in_pipe("trims_dod", p)).collect(),
        modes: mode_shares(&r, &receivers, 0),
        modes_late: mode_shares(&r, &receivers, 150_000),
        ideal,
        dod_frames: tm_max as f64 / 19.0,
        dod_peak_us,
        lost: c.dropped,
        secs,
    }
}

/// Run `jobs` on two threads (the machine's cores), results in the jobs' order.
fn on_two_threads<J: Sync, R: Send>(jobs: &[J], f: impl Fn(&J) -> R + Sync) -> Vec<R> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let out = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|sc| {
        for _ in 0..2 {
            sc.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(j) = jobs.get(i) else { break };
                let r = f(j);
                out.lock().unwrap().push((i, r));
            });
        }
    });
    let mut v = out.into_inner().unwrap();
    v.sort_by_key(|p| p.0);
    v.into_iter().map(|p| p.1).collect()
}

/// Per pipe, the shares of pessimistic, half and optimistic mode over the run's reads of
/// `t0_reg` and `t1_reg` (scheduled in that order at each time, whole registers) from
/// `from_ns` on, for the ports `receivers`: the mode at a read is pessimistic if its time
/// (ns) is at most the port's t0, half if at most its t1.
fn mode_shares(r: &NetRun, receivers: &[u16], from_ns: u64) -> Vec<[f64; 3]> {
    let reads = &r.record.chips[0].reads;
    let value = |read: &pipelines::readout::ControlRead, pipe: u16, port: u16| {
        let group = read.pipes.iter().find(|g| g.pipes.contains(&pipe));
        match group.map(|g| &g.state) {
            Some(pipelines::readout::Reading::Register(reg)) => reg
                .elements
                .iter()
                .find(|e| e.index == port as u32)
                .map_or(reg.init, |e| e.value),
            other => panic!("not a register: {other:?}"),
        }
    };
    (0..4)
        .map(|pipe| {
            let mut n = [0u64; 3];
            for pair in reads.chunks_exact(2) {
                let now = pair[0].at_ps / 1000;
                if now < from_ns {
                    continue;
                }
                for &port in receivers {
                    let (t0, t1) = (value(&pair[0], pipe, port), value(&pair[1], pipe, port));
                    n[if now <= t0 {
                        0
                    } else if now <= t1 {
                        1
                    } else {
                        2
                    }] += 1;
                }
            }
            let all = n.iter().sum::<u64>().max(1) as f64;
            n.map(|k| k as f64 / all)
        })
        .collect()
}

/// The ideal output-queued switch of the paper (§2): the stock ECMP router on the same chip,
/// the same 12-frame data queue, and the TM itself trims what the data queue refuses to an
/// 80-byte header (flag TRIMMED) in a strict-priority header queue (`config.tm.trim`).
const IDEAL: &str = r#"deploy: Routers(Ecmp),
    chips: [(select: All, config: Some((tm: (admission: Static,
        queues: [(static_limit_cells: Some(228))],
        scheduler: SpOverDrr(levels: [0, 7], quanta: []),
        trim: Some((bytes: 80, queue: 1, mark: Some((offset: 42, mask: 16)))))))) ],"#;

/// Where sender `s` of `n` sends in the two readings of "sender i to a receiver on port
/// i % 16": `Shared`, the receivers are the first 16 hosts, which also send, so a port's
/// egress carries its host's control packets beside the data to it; `Dedicated`, receivers on
/// hosts of their own (h48-h63, pipe 3) that send nothing but control, possible up to 48
/// senders.
#[derive(Clone, Copy, Debug)]
enum Receivers {
    Shared,
    Dedicated,
}

fn pairs(n: u16, rx: Receivers) -> Vec<(u16, u16)> {
    (0..n)
        .map(|s| match rx {
            Receivers::Shared => (s, (s + 1) % 16),
            Receivers::Dedicated => (s, 48 + s % 16),
        })
        .collect()
}

/// Experiment 2 (§6.2, Fig. 6-7): N senders, sender `s` (host `hs`, port `s`) one NDP flow of
/// 2,000 packets with a 1,000-packet first window, in both readings of [`Receivers`] (the
/// dedicated one up to 48 senders), and the ideal switch for the trims' baseline. Prints per
/// N: the flows' mean and lowest throughput (size / FCT) against the fair share, ingress and
/// DoD trims, NOTIFYs, the largest DoD queue (frames), the ideal switch's trims and each
/// run's wall time (two runs at a time).
/// `cargo test --test asic trimming_sender_sweep -- --ignored --nocapture`;
/// `programs/trimming/senders-18.ron` is the N = 18 run for `asic net`.
#[test]
#[ignore = "experiment 2: a sweep of 35 runs (about a minute in the test profile)"]
fn trimming_sender_sweep() {
    let ns = [1u16, 8, 16, 17, 18, 24, 32, 48, 64];
    let mut jobs = Vec::new();
    for &n in &ns {
        for rx in [Receivers::Shared, Receivers::Dedicated] {
            if matches!(rx, Receivers::Dedicated) && n > 48 {
                continue;
            }
            jobs.push((n, rx, "deploy: Trimming(()),"));
            jobs.push((n, rx, IDEAL));
        }
    }
    let runs = on_two_threads(&jobs, |&(n, rx, setup)| ndp_run(&pairs(n, rx), setup));
    println!("| receivers | senders | mean Gb/s | lowest Gb/s | fair share Gb/s | ingress trims | DoD trims | NOTIFYs | max DoD queue (frames) | ideal: trims | ideal: mean Gb/s | trims over ideal | wall s |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (k, pair) in runs.chunks(2).enumerate() {
        let ((n, rx, _), (t, i)) = (jobs[2 * k], (&pair[0], &pair[1]));
        let per_port = (n as f64 / 16.0).ceil().max(1.0);
        let fair = 100.0 * (1440.0 / 1538.0) / per_port;
        let over = if i.trims() > 0 {
            format!(
                "{:+.0} %",
                100.0 * (t.trims() as f64 / i.trims() as f64 - 1.0)
            )
        } else {
            "-".into()
        };
        assert_eq!((t.lost, i.lost), (0, 0), "{rx:?} {n}");
        println!(
            "| {rx:?} | {n} | {:.1} | {:.1} | {fair:.1} | {} | {} | {} | {:.0} | {} | {:.1} | {over} | {:.1} |",
            t.mean, t.lowest, t.ingress, t.dod, t.notifies, t.dod_frames, i.ideal, i.mean, t.secs
        );
    }
}

/// Experiment 2's dedicated reading at 32 senders, explained by runs: each receiver gets one
/// flow from pipe 0 (sender s) and one from pipe 1 (s + 16), both at exactly line rate from
/// t = 0, and its port drains one frame per slot, so the data queue's free place goes to
/// whichever arrives first in each slot and the other pipe's frame is deflected, slot after
/// slot (same-cycle arrivals are offered in the order their events were made, the lower
/// port's first). Starting one pipe's senders 60 ns
/// late moves the deflections to that pipe. Then the same with the NOTIFY to the origin
/// pipe only, with meters that leave the headers room (95 % of the line rate: each frame
/// counted 104 bytes longer), and the shared reading beside it, also with meter bursts of
/// 3 frames (a quarter of the data queue); then both readings with a first window of 500
/// packets; last, the shared reading with PULLs paced at 90 % and 80 % of htsim's rate. Under NDP's rule a sender may send its first window plus one packet per PULL, and
/// its receiver pulls at the line rate shared by two flows, so a 1,000-packet window keeps
/// the senders at line rate for about 250 µs, a 500-packet one for the paper's 125 µs.
/// Prints DoD trims per pipe, the largest DoD queue, the flows' throughput and the
/// receivers' modes in pipes 0 and 1 (sampled every µs for 300 µs), and pipe 0's from 150 µs.
#[test]
#[ignore = "experiment 2, the dedicated reading at 32 senders: 12 runs (about 7 s)"]
fn trimming_dedicated_32_senders_by_phase() {
    // The modes sampled every µs over the first 300 µs.
    let reads: String = (1..=300)
        .map(|us| {
            format!(
                r#"(at_ns: {0}, op: ReadRegister((register: "t0_reg"))),
                   (at_ns: {0}, op: ReadRegister((register: "t1_reg"))),"#,
                us * 1000
            )
        })
        .collect();
    let with = |params: &str| {
        format!("deploy: Trimming(({params})), chips: [(select: All, control: [{reads}])],")
    };
    let (full, origin, room, burst) = (
        with(""),
        with("feedback: OriginPipe"),
        with("meter_adjust_bytes: 104"),
        with("meter_burst_packets: Some(3)"),
    );
    let (dedicated, shared) = (Receivers::Dedicated, Receivers::Shared);
    // (row, the pipe whose senders start 60 ns late, setup, receivers, NDP parameters)
    let jobs = [
        ("none", None, full.as_str(), dedicated, SWEEP_NDP),
        (
            "pipe 1's senders",
            Some(1),
            full.as_str(),
            dedicated,
            SWEEP_NDP,
        ),
        (
            "pipe 0's senders",
            Some(0),
            full.as_str(),
            dedicated,
            SWEEP_NDP,
        ),
        (
            "none, notify origin only",
            None,
            origin.as_str(),
            dedicated,
            SWEEP_NDP,
        ),
        (
            "none, meters at 95 % of the line rate",
            None,
            room.as_str(),
            dedicated,
            SWEEP_NDP,
        ),
        (
            "none, shared receivers",
            None,
            full.as_str(),
            shared,
            SWEEP_NDP,
        ),
        (
            "none, shared receivers, meters at 95 %",
            None,
            room.as_str(),
            shared,
            SWEEP_NDP,
        ),
        (
            "none, shared receivers, meter bursts of 3 frames",
            None,
            burst.as_str(),
            shared,
            SWEEP_NDP,
        ),
        (
            "none, first window 500",
            None,
            full.as_str(),
            dedicated,
            "init_window_packets: 500, rto_us: 1000.0",
        ),
        (
            "none, shared receivers, first window 500",
            None,
            full.as_str(),
            shared,
            "init_window_packets: 500, rto_us: 1000.0",
        ),
        (
            "none, shared receivers, pulls at 90 %",
            None,
            full.as_str(),
            shared,
            "init_window_packets: 1000, rto_us: 1000.0, pull_rate: 0.9",
        ),
        (
            "none, shared receivers, pulls at 80 %",
            None,
            full.as_str(),
            shared,
            "init_window_packets: 1000, rto_us: 1000.0, pull_rate: 0.8",
        ),
    ];
    let runs = on_two_threads(&jobs, |&(_, late, setup, rx, ndp)| {
        ndp_run_from(
            &pairs(32, rx),
            |s| if Some(s / 16) == late { 60 } else { 0 },
            setup,
            ndp,
        )
    });
    println!("| 60 ns late | DoD trims pipe 0 | pipe 1 | max DoD queue (frames) | mean Gb/s | lowest Gb/s | pipe 0 pessimistic / half / optimistic | pipe 1 | pipe 0 from 150 µs | wall s |");
    println!("|---|---:|---:|---:|---:|---:|---|---|---|---:|");
    let pct = |m: [f64; 3]| {
        format!(
            "{:.0} / {:.0} / {:.0} %",
            100.0 * m[0],
            100.0 * m[1],
            100.0 * m[2]
        )
    };
    for ((late, ..), r) in jobs.iter().zip(&runs) {
        println!(
            "| {late} | {} | {} | {:.0} | {:.1} | {:.1} | {} | {} | {} | {:.1} |",
            r.dod_by_pipe[0],
            r.dod_by_pipe[1],
            r.dod_frames,
            r.mean,
            r.lowest,
            pct(r.modes[0]),
            pct(r.modes[1]),
            pct(r.modes_late[0]),
            r.secs
        );
    }
    // With the 1,000-packet windows the shared receivers' ports are re-armed past 150 µs (the
    // senders still blast); with 500 they are mostly optimistic by then.
    assert!(runs[5].modes_late[0][2] < 0.1, "{:?}", runs[5].modes_late);
    assert!(runs[9].modes_late[0][2] > 0.5, "{:?}", runs[9].modes_late);
    // Pulling further below the line rate does not stop the re-arming while they blast.
    assert!(runs[11].modes[0][0] > 0.25, "{:?}", runs[11].modes);
    // The later pipe takes most of the deflections.
    assert!(runs[0].dod_by_pipe[1] > 4 * runs[0].dod_by_pipe[0]);
    assert!(runs[1].dod_by_pipe[1] > 4 * runs[1].dod_by_pipe[0]);
    assert!(runs[2].dod_by_pipe[0] > 4 * runs[2].dod_by_pipe[1]);
}

/// Experiment 2's DoD queue at 64 senders, by runs: the full design beside variants that each
/// remove one suspected cause (the headers' share of the port: shortest and longer headers;
/// the four NOTIFYs per deflected packet on every recirculation port: the origin pipe's
/// NOTIFY only; pessimistic mode passing a full line rate of data: trim everything while
/// pessimistic; a larger data queue; a longer response; WFQ instead of strict priority
/// between the header and data queues). Prints the largest DoD queue and
/// when it peaked, trims and throughput.
#[test]
#[ignore = "experiment 2, the DoD queue at 64 senders: 11 runs (about 15 s)"]
fn trimming_dod_queue_at_64_senders() {
    // (the program's parameters, the hosts' NDP parameters)
    let jobs = [
        ("", SWEEP_NDP),
        ("trim_bytes: 74", SWEEP_NDP),
        ("trim_bytes: 400", SWEEP_NDP),
        ("feedback: OriginPipe", SWEEP_NDP),
        ("response: TrimAll", SWEEP_NDP),
        ("data_queue_packets: 24", SWEEP_NDP),
        ("t0_ns: 12000, t1_ns: 48000", SWEEP_NDP),
        ("feedback: None", SWEEP_NDP),
        ("header_queue: Wfq(header_weight: 4)", SWEEP_NDP),
        ("", "init_window_packets: 500, rto_us: 1000.0"),
        ("", "init_window_packets: 250, rto_us: 1000.0"),
    ];
    let runs = on_two_threads(&jobs, |(d, ndp)| {
        ndp_run_from(
            &pairs(64, Receivers::Shared),
            |_| 0,
            &format!("deploy: Trimming(({d})),"),
            ndp,
        )
    });
    println!("| variant | hosts | max DoD queue (frames) | at µs | ingress trims | DoD trims | NOTIFYs | mean Gb/s | lost | wall s |");
    println!("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for ((d, ndp), r) in jobs.iter().zip(&runs) {
        println!(
            "| `{d}` | `{ndp}` | {:.0} | {:.0} | {} | {} | {} | {:.1} | {} | {:.1} |",
            r.dod_frames, r.dod_peak_us, r.ingress, r.dod, r.notifies, r.mean, r.lost, r.secs
        );
    }
}

/// Experiment 3 (§6.3, Fig. 8-9): the response duration T0 from 0 (no response) to 30 µs,
/// T1 = 4 T0 (the paper's 6 and 24 µs), at 32 and 64 senders (shared receivers), for the full
/// design and the three ablations; trims against the ideal switch's in the same traffic.
#[test]
#[ignore = "experiment 3: 74 runs (several minutes in the test profile)"]
fn trimming_response_duration_sweep() {
    let variants = [
        ("full design", ""),
        ("pessimistic only", "response: PessimisticOnly, "),
        ("trim everything", "response: TrimAll, "),
        ("notify origin only", "feedback: OriginPipe, "),
    ];
    let t0s = [
        0u64, 1_500, 3_000, 6_000, 9_000, 12_000, 15_000, 20_000, 30_000,
    ];
    let mut jobs = vec![(32u16, IDEAL.to_string()), (64, IDEAL.to_string())];
    for n in [32u16, 64] {
        for (_, v) in variants {
            for t0 in t0s {
                jobs.push((
                    n,
                    format!("deploy: Trimming(({v}t0_ns: {t0}, t1_ns: {})),", 4 * t0),
                ));
            }
        }
    }
    let runs = on_two_threads(&jobs, |(n, setup)| {
        ndp_run(&pairs(*n, Receivers::Shared), setup)
    });
    println!("| senders | variant | T0 µs | mean Gb/s | lowest Gb/s | trims | over ideal | DoD trims | max DoD queue (frames) | lost | wall s |");
    println!("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (i, n) in [32u16, 64].iter().enumerate() {
        let r = &runs[i];
        println!(
            "| {n} | ideal | - | {:.1} | {:.1} | {} | - | - | - | {} | {:.1} |",
            r.mean,
            r.lowest,
            r.trims(),
            r.lost,
            r.secs
        );
    }
    let mut k = 2;
    for n in [32u16, 64] {
        let ideal = runs[if n == 32 { 0 } else { 1 }].trims() as f64;
        for (name, _) in variants {
            for t0 in t0s {
                let r = &runs[k];
                k += 1;
                println!(
                    "| {n} | {name} | {:.1} | {:.1} | {:.1} | {} | {:+.0} % | {} | {:.0} | {} | {:.1} |",
                    t0 as f64 / 1000.0,
                    r.mean,
                    r.lowest,
                    r.trims(),
                    100.0 * (r.trims() as f64 / ideal - 1.0),
                    r.dod,
                    r.dod_frames,
                    r.lost,
                    r.secs
                );
            }
        }
    }
}

/// Experiment 5 (§6.4, Fig. 12 and the trace table): four 100 Gb/s flows to h0 and four to
/// h1, starting 20 µs apart (flow k at 20 k µs), in two readings of the generator's ports:
/// one flow per pipe to each receiver, or all of a receiver's flows from one pipe. The trace
/// is the first 20,000 frames h0's port sends; the timeline is from the second flow's start
/// (t = 0 of Fig. 12): first DoD-trimmed and first ingress-trimmed header at h0, and the
/// first flow's data latency per µs (the queue building, then drained).
#[test]
#[ignore = "experiment 5: 2 runs of 700 µs (about 30 s)"]
fn trimming_hardware_trace() {
    let readings: [(&str, [u16; 4], [u16; 4]); 2] = [
        ("one flow per pipe", [2, 17, 33, 49], [3, 18, 34, 50]),
        ("all from pipe 0", [2, 3, 4, 5], [6, 7, 8, 9]),
    ];
    for (name, to0, to1) in readings {
        let traffic: String = (0..4)
            .flat_map(|k| {
                let start = 20_000 * k as u64;
                [
                    rate_to(to0[k], 0, 100.0, start, 700_000),
                    rate_to(to1[k], 1, 100.0, start, 700_000),
                ]
            })
            .collect();
        let wall = std::time::Instant::now();
        let (r, seen) = run("", &traffic, "", 760_000);
        let secs = wall.elapsed().as_secs_f64();
        let trace = &seen[..20_000.min(seen.len())];
        let count = |k: Kind| trace.iter().filter(|s| s.kind == k).count();
        let t0 = 20_000_000u64;
        let first = |k: Kind| {
            seen.iter()
                .find(|s| s.kind == k && s.at_ps >= t0)
                .map_or(f64::NAN, |s| (s.at_ps - t0) as f64 / 1e6)
        };
        // The first flow's data latency (departure - send) by µs of departure after t0.
        let lat: Vec<String> = (0..14u64)
            .map(|us| {
                let v: Vec<u64> = seen
                    .iter()
                    .filter(|s| {
                        s.kind == Kind::Data
                            && s.src == to0[0] as u32
                            && (t0 + us * 1_000_000..t0 + (us + 1) * 1_000_000).contains(&s.at_ps)
                    })
                    .map(|s| s.at_ps - s.sent_ps)
                    .collect();
                v.iter()
                    .max()
                    .map_or("-".into(), |m| format!("{:.2}", *m as f64 / 1e6))
            })
            .collect();
        let c = asic_report::metrics::conservation(&r.record);
        println!(
            "{name}: trace of {} frames: {} whole, {} ingress-trimmed, {} DoD-trimmed; \
             from the second flow's start: first DoD header {:.2} µs, first ingress header {:.2} µs; \
             first flow's largest data latency per µs (µs): [{}]; conservation {c:?}; wall {secs:.1} s",
            trace.len(),
            count(Kind::Data),
            count(Kind::IngressHeader),
            count(Kind::DodHeader),
            first(Kind::DodHeader),
            first(Kind::IngressHeader),
            lat.join(", ")
        );
        assert_eq!((c.received, c.dropped), (c.sent, 0), "{name}: {c:?}");
    }
}

/// MoD (`trigger: MirrorOnDrop`): nothing trims in ingress, the data queue's overflow comes
/// back as headers through the recirculation port, so every header is marked as trimmed at the
/// refusal and arrives at least the 1 µs loop of tofino1-trim later than the ideal switch's
/// first; nothing is lost.
#[test]
fn mirror_on_drop_recirculates_every_trimmed_header() {
    let traffic: String = [1, 17, 33, 49]
        .iter()
        .map(|&s| rate_to(s, 0, 100.0, 0, 1_476))
        .collect();
    let first_header = |setup: &str| {
        let (r, seen) = run_captured("tofino1-trim.ron", setup, &traffic, &[0], 100_000);
        let c = asic_report::metrics::conservation(&r.record);
        assert_eq!((c.received, c.dropped), (c.sent, 0), "{setup}: {c:?}");
        let headers: Vec<Kind> = seen
            .iter()
            .map(|s| s.kind)
            .filter(|&k| k != Kind::Data)
            .collect();
        assert!(!headers.is_empty(), "{setup}: no headers");
        let first = seen
            .iter()
            .filter(|s| s.kind != Kind::Data)
            .map(|s| s.at_ps)
            .min();
        (first.unwrap(), headers)
    };
    let (ideal, _) = first_header(IDEAL);
    let (mod_first, headers) = first_header("deploy: Trimming((trigger: MirrorOnDrop)),");
    assert!(
        headers.iter().all(|&k| k == Kind::DodHeader),
        "every MoD header is trimmed at the refusal"
    );
    assert!(
        mod_first >= ideal + 1_000_000,
        "MoD's first header at {mod_first} ps, the ideal switch's at {ideal} ps"
    );
}

/// Experiment 4 (§6.1, Fig. 5): incasts from t = 0, every sender about 13 full frames at
/// line rate (100 Gb/s for 1.476 µs: a first window the size of the data queue), then again
/// with about 100 (11.354 µs, a window long enough for the NOTIFYs to act), the CDF of
/// the headers' arrival at the receivers for the ideal switch, the full design, DoD only and MoD:
/// 63:1 (h1-h63 to h0), 16:1 × 4 (host s to h((s + 1) mod 4): 4 senders per pipe per
/// receiver) and 4:1 × 16 (host s to h((s + 1) mod 16): one sender per pipe per receiver, the
/// worst case of §3). Writes out/trimming-fig5/<pattern>.png and <pattern>-100.png and prints
/// the quantiles.
#[test]
#[ignore = "experiment 4: 24 runs and 6 plots (about 1 min)"]
fn trimming_incast_header_cdfs() {
    // (name, a sender's receiver, the receivers)
    type Pattern = (&'static str, fn(u16) -> u16, &'static [u16]);
    let patterns: [Pattern; 3] = [
        ("63to1", |_| 0, &[0]),
        ("16to1x4", |s| (s + 1) % 4, &[0, 1, 2, 3]),
        (
            "4to1x16",
            |s| (s + 1) % 16,
            &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
        ),
    ];
    let schemes = [
        ("Ideal", IDEAL.to_string()),
        ("Tofino", "deploy: Trimming(()),".to_string()),
        ("DoD", "deploy: Trimming((feedback: None)),".to_string()),
        (
            "MoD",
            "deploy: Trimming((trigger: MirrorOnDrop)),".to_string(),
        ),
    ];
    let out = Path::new(env!("CARGO_MANIFEST_DIR")).join("out/trimming-fig5");
    std::fs::create_dir_all(&out).unwrap();
    println!("| incast | scheme | headers | 10 % µs | 50 % µs | 90 % µs | 99 % µs | last µs | data whole | wall s |");
    println!("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    // (frames per sender, the window in ns at 100 Gb/s, the runs' stop in ns, the plots' suffix)
    let windows = [(13, 1_476, 400_000, ""), (100, 11_354, 2_000_000, "-100")];
    for ((name, dst, ports), (frames, window_ns, stop_ns, suffix)) in windows
        .iter()
        .flat_map(|w| patterns.iter().map(move |p| (*p, *w)))
    {
        let traffic: String = (0..64u16)
            .filter(|&s| dst(s) != s)
            .map(|s| rate_to(s, dst(s), 100.0, 0, window_ns))
            .collect();
        let name = format!("{name}{suffix}");
        let mut curves = Vec::new();
        for (scheme, setup) in &schemes {
            let wall = std::time::Instant::now();
            let (r, seen) = run_captured("tofino1-trim.ron", setup, &traffic, ports, stop_ns);
            let secs = wall.elapsed().as_secs_f64();
            let c = asic_report::metrics::conservation(&r.record);
            assert_eq!(
                (c.received, c.dropped),
                (c.sent, 0),
                "{name} {scheme}: {c:?}"
            );
            let mut t: Vec<f64> = seen
                .iter()
                .filter(|s| s.kind != Kind::Data)
                .map(|s| s.at_ps as f64 / 1e6)
                .collect();
            t.sort_by(f64::total_cmp);
            let q = |f: f64| t[((t.len() as f64 * f) as usize).min(t.len() - 1)];
            println!(
                "| {name} | {scheme} | {} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {} | {secs:.1} |",
                t.len(),
                q(0.1),
                q(0.5),
                q(0.9),
                q(0.99),
                t[t.len() - 1],
                seen.len() - t.len()
            );
            curves.push((scheme.to_string(), t));
        }
        asic_report::plots::plot_cdf(
            &out.join(format!("{name}.png")),
            &format!("trimming, {name} incast ({frames} frames per sender): header arrival at the receivers"),
            "header receive time (us)",
            "headers",
            &curves,
            false,
        )
        .unwrap();
    }
}

/// Parameters the program cannot honour are refused before anything runs, naming the field.
#[test]
fn bad_trimming_parameters_are_refused_by_name() {
    for (deploy, want) in [
        (
            "t0_ns: 6000, t1_ns: 5000",
            "trimming.t1_ns: 5000 is before t0_ns (6000)",
        ),
        (
            "t1_ns: 3000000000",
            "does not fit the program's 32-bit nanosecond timers",
        ),
        (
            "trim_bytes: 60",
            "trimming.trim_bytes: 60 is shorter than the hosts' 74 header bytes",
        ),
        (
            "data_queue_packets: 0",
            "trimming.data_queue_packets: must be at least 1",
        ),
        (
            "meter_burst_packets: Some(0)",
            "trimming.meter_burst_packets: must be at least 1",
        ),
        (
            "trigger: Depth(threshold_cells: 600000)",
            "does not fit the 19-bit depth",
        ),
        (
            "header_queue: Wfq(header_weight: 0)",
            "trimming.header_queue: Wfq header_weight 0 is not in 1..=466033",
        ),
    ] {
        let text = format!(
            r#"(
                topology: Generate((shape: SingleSwitch(hosts: 2), chip: "tofino1-trim.ron")),
                deploy: Trimming(({deploy})),
            )"#
        );
        let s: NetScenario = ron::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("programs/trimming");
        let err = run_observed(s, &dir, RunOptions::default(), &mut ())
            .err()
            .expect(deploy);
        assert!(
            err.contains("chip `sw0`") && err.contains(want),
            "{deploy}: {err}"
        );
    }
}

/// Experiment 6's testbed (§6.5), as `programs/trimming/testbed-ping{,-taildrop}.ron` give it:
/// 4 ToRs × 3 spines of `tofino1-trim`, 8 hosts per ToR, every link 25 Gb/s, 9,000-byte IP
/// MTU. `Taildrop`: the stock ECMP router with a 200-frame tail-drop queue on every port and
/// TCP NewReno hosts (Linux's 200 ms minimum RTO is the model's 1 ms, so a run of 50 ms sees
/// recovery); `Trimming`: the trimming program with its 12-frame data queue and NDP hosts,
/// with a first window of `window` frames (the file's 8: about one RTT of an idle path at
/// 25 Gb/s), spraying as `spray` says, pulling as `pulls` says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Testbed {
    Taildrop,
    Trimming {
        spray: Spray,
        window: u32,
        pulls: Pulls,
    },
}

/// How fast the NDP receivers pull.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pulls {
    /// htsim's pacer (the default `pull_rate: 1.0`): a data frame and a control frame per
    /// PULL, 1 % under the data frames' rate at 9,000 bytes.
    Htsim,
    /// One PULL per data frame's time on the wire: `pull_rate` = (9,038 + 98) / 9,038, the
    /// wire bytes of a 9,014-byte data frame and a 74-byte control frame.
    DataRate,
}

/// Who sprays a flow's packets over the spines, if anyone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Spray {
    /// Nobody: ECMP by the flow's hash.
    No,
    /// The switches: the ECMP member at random per packet (`Trimming((spray: true))`).
    Switch,
    /// The hosts: each packet's UDP source port varies, so the ECMP hash does (EQDS's way,
    /// `Ndp((spray: true))`).
    Hosts,
}

/// Run `traffic` on the testbed until `stop_ns` (or until every flow completes); the run and
/// its wall time (s).
fn testbed_run(bed: Testbed, traffic: &str, stop_ns: u64) -> (NetRun, f64) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("programs/trimming");
    let file = match bed {
        Testbed::Taildrop => "testbed-ping-taildrop.ron",
        Testbed::Trimming { .. } => "testbed-ping.ron",
    };
    let mut s = asic_deploy::run::load(&dir.join(file)).unwrap();
    match (bed, &mut s.deploy, &mut s.transport) {
        (Testbed::Taildrop, Mechanism::Routers(_), TransportSpec::NewReno(_)) => {}
        (
            Testbed::Trimming {
                spray,
                window,
                pulls,
            },
            Mechanism::Trimming(t),
            TransportSpec::Ndp(n),
        ) => {
            t.spray = spray == Spray::Switch;
            n.spray = spray == Spray::Hosts;
            n.init_window_packets = window;
            if pulls == Pulls::DataRate {
                n.pull_rate = (9_038.0 + 98.0) / 9_038.0;
            }
        }
        _ => panic!("{file} is not the testbed {bed:?} reads"),
    }
    s.traffic = ron::from_str(&format!("[{traffic}]")).unwrap_or_else(|e| panic!("{e}"));
    s.stop = Stop {
        at_ns: Some(stop_ns),
        when_flows_complete: true,
    };
    s.sample_period_ns = None;
    let wall = std::time::Instant::now();
    let r = run_observed(s, &dir, RunOptions::default(), &mut ()).unwrap();
    (r, wall.elapsed().as_secs_f64())
}

/// The pings of [`trimming_testbed`]: h0_7 sends a 56-byte raw packet to h1_0 every 100 µs
/// from 10 ms to 50 ms (400), while `busy` nine long flows from three hosts in each other
/// rack send to h1_0. Returns the pings' one-way latencies (µs, sorted), the pings lost and
/// the wall time.
fn pings(bed: Testbed, busy: bool) -> (Vec<f64>, usize, f64) {
    let mut traffic = String::new();
    if busy {
        for rack in [0, 2, 3] {
            for h in 1..4 {
                traffic +=
                    &format!(r#"Flow((src: "h{rack}_{h}", dst: "h1_0", size: 1000000000)),"#);
            }
        }
    }
    traffic += r#"Incast((senders: ["h0_7"], receiver: "h1_0", size: 56, start_ns: 10000000,
        period_ns: Some(100000), repeats: 400, transport: Some(Raw(())))),"#;
    let (r, secs) = testbed_run(bed, &traffic, 50_000_000);
    let ping: Vec<_> = r
        .record
        .flows
        .iter()
        .filter(|f| f.size_bytes == 56)
        .collect();
    let mut us: Vec<f64> = ping
        .iter()
        .filter_map(|f| f.fct_ps())
        .map(|p| p as f64 / 1e6)
        .collect();
    us.sort_by(f64::total_cmp);
    assert_eq!(ping.len(), 400);
    (us.clone(), ping.len() - us.len(), secs)
}

/// The `q`-quantile of sorted `v`.
fn quantile(v: &[f64], q: f64) -> f64 {
    v[((v.len() as f64 * q).ceil() as usize).clamp(1, v.len()) - 1]
}

/// Three flows of 20 MB from three hosts of rack 0 to three of rack 1, trial `t`'s drawn at
/// random (a seeded draw, so every trial hashes differently: hosts in arithmetic
/// progression would give correlated CRCs). Returns each flow's rate
/// (size over FCT, Gb/s), the most flows' worth of bytes one uplink of leaf0 carried (1.0:
/// no two flows shared a spine), the trims (ingress and DoD, every chip) and the wall time.
fn three_flows(bed: Testbed, t: u32) -> (Vec<f64>, f64, u64, f64) {
    let (src, dst) = (three_of_eight(2 * t + 1), three_of_eight(2 * t + 2));
    let traffic: String = (0..3)
        .map(|i| {
            format!(
                r#"Flow((src: "h0_{}", dst: "h1_{}", size: 20000000)),"#,
                src[i], dst[i]
            )
        })
        .collect();
    let (r, secs) = testbed_run(bed, &traffic, 200_000_000);
    let rates = r
        .record
        .flows
        .iter()
        .map(|f| f.size_bytes as f64 * 8.0 / (f.fct_ps().expect("completes") as f64 / 1000.0))
        .collect();
    let leaf0 = r.chip("leaf0").unwrap();
    let busiest = (8..11)
        .map(|p| leaf0.port_counters(p).tx_bytes)
        .max()
        .unwrap();
    let trims = r
        .chips
        .iter()
        .flat_map(|c| (0..4).flat_map(move |pipe| (0..64).map(move |port| (c, pipe, port))))
        .flat_map(|(c, pipe, port)| {
            ["trims_ingress", "trims_dod"].map(|n| c.counter_read_by_name(pipe, n, port))
        })
        .map(|read| read.map_or(0, |c| c.packets))
        .sum();
    (rates, busiest as f64 / 20e6, trims, secs)
}

/// Three distinct numbers below 8, drawn by a SplitMix64 stream seeded with `seed`.
fn three_of_eight(seed: u32) -> [u32; 3] {
    let mut z = seed as u64;
    let mut next = || {
        z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut x = z;
        x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((x ^ (x >> 31)) % 8) as u32
    };
    let mut v = Vec::new();
    while v.len() < 3 {
        let k = next();
        if !v.contains(&k) {
            v.push(k);
        }
    }
    [v[0], v[1], v[2]]
}

/// Host choices of the three cross-rack flows in [`trimming_testbed`].
const TRIALS: u32 = 20;

/// Experiment 6 (§6.5, Fig. 13 and the spraying test) on the model of the testbed: pings to a
/// host receiving nine connections, tail-drop with 200 frames against trimming with 12; and
/// three cross-rack flows under ECMP and sprayed by the switches or the hosts (NDP's first
/// window 8 frames, and 16 with the switches'),
/// over [`TRIALS`] host choices. Prints both tables.
/// `cargo test --release --test asic trimming_testbed -- --ignored --nocapture`.
#[test]
#[ignore = "experiment 6: 6 ping runs of 50 ms and 100 runs of three 20 MB flows (about 30 s)"]
fn trimming_testbed() {
    let beds = [
        Testbed::Taildrop,
        Testbed::Trimming {
            spray: Spray::Switch,
            window: 8,
            pulls: Pulls::Htsim,
        },
        Testbed::Trimming {
            spray: Spray::Switch,
            window: 8,
            pulls: Pulls::DataRate,
        },
    ];
    let jobs: Vec<(Testbed, bool)> = beds.iter().flat_map(|&b| [(b, false), (b, true)]).collect();
    let runs = on_two_threads(&jobs, |&(b, busy)| pings(b, busy));
    println!("| switches | traffic | pings lost | 50 % µs | mean µs | 99 % µs | max µs | gain at 50 % µs | gain in mean µs | wall s |");
    println!("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (k, ((b, busy), (us, lost, secs))) in jobs.iter().zip(&runs).enumerate() {
        let idle = &runs[k & !1].0;
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        println!(
            "| {b:?} | {} | {lost} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {secs:.1} |",
            if *busy { "9 flows" } else { "idle" },
            quantile(us, 0.5),
            mean(us),
            quantile(us, 0.99),
            us[us.len() - 1],
            quantile(us, 0.5) - quantile(idle, 0.5),
            mean(us) - mean(idle),
        );
    }
    let (taildrop, trimming) = (&runs[1].0, &runs[3].0);
    // The paper: +570 µs (200 frames of 9,000 bytes at 25 Gb/s are 576 µs) against +36 µs
    // (12 frames: 35 µs).
    assert!(quantile(taildrop, 0.5) - quantile(&runs[0].0, 0.5) > 400.0);
    assert!(quantile(trimming, 0.99) < 60.0);
    assert_eq!(runs[3].1, 0, "no ping lost with trimming");
    // Receivers pulling at the data frames' full rate leave no room on their port for the
    // trimmed headers, so the data queue stands fuller than with htsim's pacing.
    assert!(quantile(&runs[5].0, 0.99) < 60.0);
    assert_eq!(runs[5].1, 0, "no ping lost with trimming");
    assert!(quantile(&runs[5].0, 0.5) > quantile(trimming, 0.5));

    // The hosts' spraying beside the switches'; the last, a first window of 16 frames, for
    // what spraying costs one of 8 (a sprayed packet can wait behind another flow's at an
    // uplink, so 8 frames are under one RTT).
    let beds = [
        Testbed::Taildrop,
        Testbed::Trimming {
            spray: Spray::No,
            window: 8,
            pulls: Pulls::Htsim,
        },
        Testbed::Trimming {
            spray: Spray::Switch,
            window: 8,
            pulls: Pulls::Htsim,
        },
        Testbed::Trimming {
            spray: Spray::Hosts,
            window: 8,
            pulls: Pulls::Htsim,
        },
        Testbed::Trimming {
            spray: Spray::Switch,
            window: 16,
            pulls: Pulls::Htsim,
        },
    ];
    let jobs: Vec<(Testbed, u32)> = beds
        .iter()
        .flat_map(|&b| (0..TRIALS).map(move |t| (b, t)))
        .collect();
    let runs = on_two_threads(&jobs, |&(b, t)| three_flows(b, t));
    println!("| switches | trials | trials where two flows shared a spine | trials with a flow below 20 Gb/s | mean Gb/s | lowest Gb/s | mean Gb/s, trials without a shared spine | trims per trial | wall s (all trials) |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (b, chunk) in beds.iter().zip(runs.chunks(TRIALS as usize)) {
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
        let all: Vec<f64> = chunk.iter().flat_map(|r| r.0.iter().copied()).collect();
        let apart: Vec<f64> = chunk
            .iter()
            .filter(|r| r.1 < 1.5)
            .flat_map(|r| r.0.iter().copied())
            .collect();
        let shared = chunk.iter().filter(|r| r.1 >= 1.5).count();
        let slow = chunk
            .iter()
            .filter(|r| r.0.iter().any(|&g| g < 20.0))
            .count();
        let lowest = all.iter().copied().fold(f64::INFINITY, f64::min);
        println!(
            "| {b:?} | {TRIALS} | {shared} | {slow} | {:.1} | {lowest:.1} | {} | {:.0} | {:.1} |",
            mean(&all),
            if apart.is_empty() {
                "-".into()
            } else {
                format!("{:.1}", mean(&apart))
            },
            chunk.iter().map(|r| r.2).sum::<u64>() as f64 / TRIALS as f64,
            chunk.iter().map(|r| r.3).sum::<f64>()
        );
        if matches!(b, Testbed::Trimming { spray, .. } if *spray != Spray::No) {
            assert_eq!(slow, 0, "spraying: every flow near 25 Gb/s: {all:?}");
        }
    }
}
