//! Enqueue + dequeue throughput of the TM (no harness: `cargo bench -p tm`).
//! 64 ports x 32 queues (tofino1-like dimensions), FB admission, SP over DRR, RED on, PFC on
//! one priority; a steady state with about 20 packets per queue.

use std::time::Instant;
use tm::config::{
    AdmissionPolicy, ClassConfig, EcnConfig, PfcConfig, PfcGroup, QueueConfig, SchedulerConfig,
    TmConfig,
};
use tm::spec::TmSpec;
use tm::{EnqueueRequest, TrafficManager};

fn main() {
    let mut spec = TmSpec::small(286_720, 80, 32);
    spec.pause_reaction_quanta = 394;
    for policy in [
        AdmissionPolicy::DynamicThreshold,
        AdmissionPolicy::FlexibleBuffer,
    ] {
        let cfg = TmConfig {
            admission: policy,
            classes: vec![
                ClassConfig {
                    alpha: 4.0,
                    priority: 0,
                },
                ClassConfig {
                    alpha: 8.0,
                    priority: 1,
                },
            ],
            default_queue: QueueConfig {
                gmin_cells: 20,
                ecn: EcnConfig::Red {
                    kmin_cells: 50,
                    kmax_cells: 500,
                    pmax: 0.2,
                },
                ..QueueConfig::default()
            },
            queues: vec![QueueConfig {
                class: 1,
                gmin_cells: 20,
                ..QueueConfig::default()
            }],
            scheduler: SchedulerConfig::SpOverDrr {
                levels: (0..32).map(|q| (q % 4) as u8).collect(),
                quanta: vec![],
            },
            pfc: PfcConfig {
                quanta: 65535,
                groups: vec![PfcGroup {
                    ports: vec![],
                    priority: 3,
                    xoff_cells: 400,
                    hysteresis_cells: 64,
                    headroom_cells: 200,
                }],
            },
            ..TmConfig::default()
        };
        let mut tm = TrafficManager::new(spec.clone(), cfg, 64).unwrap();
        let mut x = 0x9e3779b97f4a7c15u64;
        let mut rnd = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let n = 20_000_000u64;
        // Warm up to ~20 packets per queue.
        for h in 0..64 * 32 * 20 {
            let r = rnd();
            let _ = tm.enqueue(EnqueueRequest {
                port: (r % 64) as u16,
                queue: ((r >> 8) % 32) as u16,
                ingress_port: ((r >> 16) % 64) as u16,
                priority: ((r >> 24) % 8) as u8,
                color: 0,
                bytes: 64 + ((r >> 32) % 1437) as u32,
                handle: h as u32,
                now_ps: 0,
            });
        }
        let t0 = Instant::now();
        let (mut ok, mut deq) = (0u64, 0u64);
        for i in 0..n {
            let r = rnd();
            let now = i * 1000;
            if tm
                .enqueue(EnqueueRequest {
                    port: (r % 64) as u16,
                    queue: ((r >> 8) % 32) as u16,
                    ingress_port: ((r >> 16) % 64) as u16,
                    priority: ((r >> 24) % 8) as u8,
                    color: 0,
                    bytes: 64 + ((r >> 32) % 1437) as u32,
                    handle: i as u32,
                    now_ps: now,
                })
                .is_ok()
            {
                ok += 1;
            }
            if tm.dequeue(((r >> 40) % 64) as u16, now).is_some() {
                deq += 1;
            }
            tm.drain_pfc_events().for_each(drop);
        }
        let s = t0.elapsed().as_secs_f64();
        println!(
            "{:?}: {:.1} M enqueue+dequeue pairs/s ({ok} admitted, {deq} dequeued, {} buffered)",
            policy,
            n as f64 / s / 1e6,
            tm.port_depth_packets(0)
        );
    }
}
