//! No heap allocation per packet on the chip's hot path: ten times the packets through a
//! chip cost no more allocations than a handful (buffers grow to the run's peak, then are
//! reused). One test in this binary, so nothing else allocates while it counts.

use asic::perf::{self, CountingAlloc};

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

#[test]
fn ten_times_the_packets_allocate_no_more() {
    CountingAlloc::installed();
    let count = |packets: u64| {
        let mut bench = perf::chip_bench(2, 64, packets, false).unwrap();
        let before = perf::allocations().unwrap();
        let hops = perf::run_chip(&mut bench).unwrap().work;
        assert_eq!(hops, packets);
        perf::allocations().unwrap() - before
    };
    let small = count(2_000);
    let large = count(20_000);
    println!("allocations: {small} for 2000 packets, {large} for 20000");
    assert!(
        large <= small + 8,
        "{small} allocations for 2000 packets but {large} for 20000: something allocates per packet"
    );
}
