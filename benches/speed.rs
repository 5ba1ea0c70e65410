//! Criterion benchmarks of the model's speed (docs/PERFORMANCE.md): one packet through the
//! parser and a 12-stage L3 ingress; one TM enqueue + dequeue under Dynamic Threshold; a
//! whole `tofino1-like` chip (64 × 100G, 1500-byte packets at line rate, the stock router);
//! a 4 × 4 leaf-spine with 32 hosts at 60 % load running the router.
//!
//! `cargo bench --bench speed` measures; `cargo bench --bench speed -- --test` runs each
//! once (the CI smoke check). Throughput is in elements: packets, pairs or switch-hops.
//! The workloads are the ones `asic bench` runs (`asic::perf`), so both report on the
//! same code.

use asic::perf::{chip_bench, leafspine_net, run_chip, Pipe12, TmDt};
use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use std::time::Duration;

fn pipe(c: &mut Criterion) {
    let mut g = c.benchmark_group("pipe");
    g.throughput(Throughput::Elements(1));
    let mut w = Pipe12::new().expect("pipe12 workload");
    g.bench_function("parser+12-stage ingress, 64 B", |b| {
        b.iter(|| w.step().expect("routed"))
    });
    g.finish();
}

fn tm(c: &mut Criterion) {
    let mut g = c.benchmark_group("tm");
    g.throughput(Throughput::Elements(1));
    let mut w = TmDt::new().expect("tm workload");
    // Reach steady state (queues 32 deep) before measuring.
    while w.pairs == 0 {
        w.step().expect("admitted");
    }
    g.bench_function("DT enqueue+dequeue, 64 ports", |b| {
        b.iter(|| w.step().expect("admitted"))
    });
    g.finish();
}

fn chip(c: &mut Criterion) {
    let mut g = c.benchmark_group("chip");
    let packets = 64 * 200;
    g.throughput(Throughput::Elements(packets));
    g.sample_size(10).measurement_time(Duration::from_secs(10));
    g.bench_function("64x100G line rate, 1500 B, l3router", |b| {
        b.iter_batched(
            || chip_bench(64, 1500, packets, false).expect("chip workload"),
            |mut bench| run_chip(&mut bench).expect("every packet leaves"),
            BatchSize::PerIteration,
        )
    });
    g.finish();
}

fn leafspine(c: &mut Criterion) {
    let mut g = c.benchmark_group("net");
    g.sample_size(10).measurement_time(Duration::from_secs(10));
    // Hops of one run, for the throughput figure (the run is deterministic).
    let stop_ns = 100_000;
    let hops = leafspine_net(stop_ns, false)
        .and_then(|n| n.run())
        .expect("leaf-spine workload")
        .switch_hops;
    g.throughput(Throughput::Elements(hops));
    g.bench_function("leaf-spine 4x4, 32 hosts, 60% load, 100 us", |b| {
        b.iter_batched(
            || leafspine_net(stop_ns, false).expect("leaf-spine workload"),
            |n| n.run().expect("runs").switch_hops,
            BatchSize::PerIteration,
        )
    });
    g.finish();
}

criterion_group!(benches, pipe, tm, chip, leafspine);
criterion_main!(benches);
