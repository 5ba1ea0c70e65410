//! What-if mirror-on-drop (`config.mirror_on_drop`, `asic_model::chip::MirrorOnDropConfig`),
//! the trimming paper's MoD baseline, on `tests/programs/mirror_on_drop.p4` and a `teaching`
//! chip (1 GHz, 10 Gb/s ports, 80-byte cells): a refused 1500-byte packet leaves one 64-byte
//! copy through the recirculation port, whose ingress sees `mirror_on_drop_flag`; the copy's
//! delay is the recirculation path's, from the profile; counts and conservation; refused
//! configurations named and placed.

use crate::common::plumbing::{compile, conserved};
use crate::common::*;
use asic_bench::bench::{Bench, Departure};
use asic_model::chip::{ChipConfig, DodConfig, DropReason, MirrorOnDropConfig};
use asic_model::mac::frame_time;
use asic_model::profile::ChipProfile;
use asic_model::trace::{Origin, PacketTrace, TraceEvent, TraceFilter};
use pipelines::time::Time;
use tm::config::{AdmissionPolicy, QueueConfig, SchedulerConfig, TmConfig, TrimConfig};
use tm::Refusal;

/// The copies' length.
const N: u16 = 64;

/// A `len`-byte frame for port 1, queue 0 (mirror_on_drop.p4's control header, the rest
/// 0xa5).
fn frame(len: usize) -> Vec<u8> {
    let mut f = vec![0, 1, 0, 0];
    f.resize(len, 0xa5);
    f
}

/// Static admission with room for one 1500-byte packet (19 cells) per queue, strict priority
/// (queue 1, the header queue, first), and mirror-on-drop to `m`.
fn config(m: MirrorOnDropConfig) -> ChipConfig {
    ChipConfig {
        tm: TmConfig {
            admission: AdmissionPolicy::Static,
            default_queue: QueueConfig {
                static_limit_cells: Some(19),
                ..QueueConfig::default()
            },
            scheduler: SchedulerConfig::StrictPriority,
            ..TmConfig::default()
        },
        mirror_on_drop: Some(m),
        ..ChipConfig::default()
    }
}

/// To the pipe's recirculation port, queue 0, cut to `N` bytes.
fn to_recirculation() -> MirrorOnDropConfig {
    MirrorOnDropConfig {
        port: None,
        queue: 0,
        truncate_bytes: N,
    }
}

/// Three 1500-byte packets for port 1 queue 0, at once on ports 0, 2 and 3: the first is
/// served at once, the second waits in the queue (19 of its 19 cells), the third is refused.
fn three_into_one(profile: &ChipProfile, config: ChipConfig) -> Bench {
    let program = compile("tests/programs/mirror_on_drop.p4", profile);
    let mut b = Bench::with_config(profile.clone(), &program, config, &[]).unwrap();
    b.keep_departures();
    b.set_packet_trace(TraceFilter::default()).unwrap();
    for port in [0, 2, 3] {
        b.add_frames(port, vec![(Time(0), frame(1500))]).unwrap();
    }
    b
}

/// The time (and cycle) of the first record of `p` that `pick` selects.
fn at(p: &PacketTrace, pick: impl Fn(&TraceEvent) -> bool) -> (Time, Option<u64>) {
    let r = p.records.iter().find(|r| pick(&r.event)).expect("a record");
    (r.time, r.cycle)
}

#[test]
fn a_refused_packet_leaves_one_truncated_copy_that_ingress_sees_flagged() {
    let profile = chip("teaching");
    let mut b = three_into_one(&profile, config(to_recirculation()));
    let r = b.run().unwrap();
    conserved(&r);
    // The original is dropped for the TM's reason; the copy is made in the chip.
    assert_eq!(r.drops, vec![("tm_queue_static_limit".to_string(), 1)]);
    assert_eq!((r.created, r.mirror_on_drop_copies), (1, 1));
    assert_eq!(r.packets_out(), 3);
    let chip = b.chip();
    assert_eq!(chip.drops(DropReason::Tm(Refusal::QueueLimit)), 1);
    assert_eq!(chip.plumbing_counters().mirror_on_drop_copies, 1);
    // One N-byte copy through the recirculation port and back.
    let rp = chip.recirc_port(0, 0).unwrap();
    let c = chip.port_counters(rp);
    assert_eq!((c.tx_packets, c.tx_bytes), (1, N as u64));
    assert_eq!((c.rx_packets, c.rx_bytes), (1, N as u64));
    // Port 1 sends the two data packets unmarked and the copy as a marked header, which the
    // program queued on the header queue: it overtakes the data packet queued before it.
    let out: Vec<&Departure> = b.departures().iter().filter(|d| d.port == 1).collect();
    let lens: Vec<usize> = out.iter().map(|d| d.data.len()).collect();
    assert_eq!(lens, vec![1500, N as usize, 1500]);
    let marks: Vec<u8> = out.iter().map(|d| d.data[3]).collect();
    assert_eq!(marks, vec![0, 1, 0], "only the copy's ingress saw the flag");
    assert_eq!(
        out[1].data[..3],
        frame(1500)[..3],
        "the packet's first bytes"
    );
    assert!(r
        .render_text()
        .contains("mirror-on-drop (what-if, config.mirror_on_drop): 1 truncated copies"));
}

#[test]
fn the_copy_takes_exactly_the_recirculation_path() {
    let profile = chip("teaching");
    let mut b = three_into_one(&profile, config(to_recirculation()));
    let r = b.run().unwrap();
    let traces = b.packet_traces();
    let refused = traces
        .iter()
        .find(|p| {
            p.records
                .iter()
                .any(|r| matches!(r.event, TraceEvent::Refused { .. }))
        })
        .expect("the refused packet");
    let copy = traces
        .iter()
        .find(|p| {
            p.records.iter().any(|r| {
                matches!(
                    r.event,
                    TraceEvent::Made {
                        origin: Origin::MirrorOnDrop { port: 4, queue: 0 },
                        bytes: 64,
                        ..
                    }
                )
            })
        })
        .expect("the copy");
    let (refused_at, _) = at(refused, |e| matches!(e, TraceEvent::Refused { .. }));
    let (made_at, _) = at(copy, |e| matches!(e, TraceEvent::Made { .. }));
    assert_eq!(made_at, refused_at, "copied at the refusal");
    // Expected from the profile: the copy enters the idle egress pipe at the refusal's
    // cycle, leaves it L_e cycles later onto the recirculation port, is back at ingress
    // after the loopback latency plus its frame time at the recirculation speed, and is
    // queued as a header L_i cycles after its issue.
    let clock = b.chip().clock();
    let (l_i, l_e) = (r.ingress_latency_cycles, r.egress_latency_cycles);
    let rc = &profile.recirculation;
    let rp = b.chip().recirc_port(0, 0).unwrap();
    let start = clock.time_of(clock.cycle_at_or_after(refused_at) + l_e);
    assert_eq!(b.chip().port_counters(rp).first_tx, Some(start));
    let back =
        start + clock.time_of(rc.latency_cycles as u64) + frame_time(N as usize, rc.speed_gbps);
    let issue = clock.cycle_at_or_after(back);
    let (_, issued) = at(
        copy,
        |e| matches!(e, TraceEvent::Issue { gress: pipelines::program::Gress::Ingress, port, .. } if *port == rp),
    );
    assert_eq!(issued, Some(issue));
    let (queued, _) = at(copy, |e| {
        matches!(
            e,
            TraceEvent::Enqueue {
                port: 1,
                queue: 1,
                ..
            }
        )
    });
    assert_eq!(queued, clock.time_of(issue + l_i));
    // The header's delay over a trim at the refusal (what `tm.trim` would do): on teaching,
    // L_e + 10 cycles + 60.8 ns + L_i, rounded up to the cycle.
    let delay = queued - refused_at;
    assert_eq!(
        delay.ps(),
        (l_e + l_i + rc.latency_cycles as u64) * 1000 + 61_000,
        "{delay}"
    );
}

#[test]
fn a_copy_the_mirror_on_drop_queue_refuses_is_counted() {
    let profile = chip("teaching");
    // The copies go to the full data queue itself.
    let m = MirrorOnDropConfig {
        port: Some(1),
        ..to_recirculation()
    };
    let mut b = three_into_one(&profile, config(m));
    let r = b.run().unwrap();
    conserved(&r);
    assert_eq!(r.created, 1);
    assert_eq!(r.drops_for(DropReason::Tm(Refusal::QueueLimit)), 1);
    assert_eq!(r.drops_for(DropReason::MirrorOnDropRefused), 1);
    assert_eq!(r.packets_out(), 2);
}

#[test]
fn bad_mirror_on_drop_configurations_are_refused_by_field() {
    let profile = chip("teaching");
    let program = compile("tests/programs/mirror_on_drop.p4", &profile);
    let refused = |c: ChipConfig| {
        Bench::with_config(profile.clone(), &program, c, &[])
            .err()
            .expect("refused")
    };
    let m = to_recirculation();
    let with = |m: MirrorOnDropConfig| ChipConfig {
        mirror_on_drop: Some(m),
        ..ChipConfig::default()
    };
    assert_eq!(
        refused(with(MirrorOnDropConfig { queue: 9, ..m })),
        "chip configuration: `mirror_on_drop.queue`: no queue 9: ports have 4 queues"
    );
    assert_eq!(
        refused(with(MirrorOnDropConfig {
            port: Some(99),
            ..m
        })),
        "chip configuration: `mirror_on_drop.port`: no port 99"
    );
    assert_eq!(
        refused(with(MirrorOnDropConfig {
            truncate_bytes: 0,
            ..m
        })),
        "chip configuration: `mirror_on_drop.truncate_bytes`: a copy keeps at least 1 byte"
    );
    let mut no_recirc = profile.clone();
    no_recirc.recirculation.ports_per_pipe = 0;
    let e = Bench::with_config(no_recirc, &program, with(m), &[])
        .err()
        .expect("refused");
    assert_eq!(
        e,
        "chip configuration: `mirror_on_drop.port`: no port given and the chip has no \
         recirculation port"
    );
    let dod = ChipConfig {
        dod: Some(DodConfig::default()),
        ..with(m)
    };
    assert_eq!(
        refused(dod),
        "chip configuration: `mirror_on_drop`: deflect-on-drop (`dod`) acts on the same \
         refusals; configure one of them"
    );
    let mut trim = with(m);
    trim.tm.trim = Some(TrimConfig {
        bytes: 64,
        queue: 1,
        mark: None,
        return_to_sender: None,
    });
    assert_eq!(
        refused(trim),
        "chip configuration: `mirror_on_drop`: what-if trimming (`tm.trim`) acts on the same \
         refusals; configure one of them"
    );
}

#[test]
fn a_bad_mirror_on_drop_queue_is_placed_in_the_scenario() {
    let e = scenario_error(
        "tests/programs/mirror_on_drop.p4",
        "        mirror_on_drop: Some((truncate_bytes: 64,\n            queue: 7)),\n",
    );
    assert!(
        e.ends_with(
            "s.ron:6:13: chip configuration: `mirror_on_drop.queue`: no queue 7: ports have 4 \
             queues"
        ),
        "{e}"
    );
}
