//! The seeds of a chip's random sources: `config.seed` seeds them all, the TM's RED marking
//! included, unless the TM's own `config.tm.seed` is given: then that seeds the TM, in a
//! one-chip scenario and on a chip of a network alike.

use crate::common::plumbing::*;
use crate::common::*;
use asic_model::chip::ChipConfig;

/// ECN marks of the TM's RED on a congested port of a `teaching` chip configured by
/// `config` (RON, with `QUEUE` standing for a RED queue configuration).
fn red_marks(config: &str) -> u64 {
    let profile = chip("teaching");
    let program = compile("tests/programs/plumbing.p4", &profile);
    let queue = "default_queue: (ecn: Red(kmin_cells: 0, kmax_cells: 60, pmax: 1.0))";
    let config: ChipConfig =
        ron::from_str(&config.replace("QUEUE", queue)).unwrap_or_else(|e| panic!("{e}"));
    let mut b = bench(&profile, &program, config);
    let to_port_1 = Ctl {
        port: 1,
        ..Ctl::default()
    };
    feed_line_rate(&mut b, &[0, 2], 300, 80, 10, to_port_1);
    conserved(&b.run().unwrap());
    b.chip().tm().port_counters(1).ecn_marks
}

#[test]
fn the_tms_own_seed_wins_over_the_chips() {
    let own = red_marks("(seed: 9, tm: (seed: Some(5), QUEUE))");
    assert!(own > 0);
    // The chip's seed does not change the TM's draws when the TM has its own...
    assert_eq!(red_marks("(seed: 1, tm: (seed: Some(5), QUEUE))"), own);
    // ... which is the one the chip's seed would give it.
    assert_eq!(red_marks("(seed: 5, tm: (QUEUE))"), own);
    // Without it, the chip's seed seeds the TM.
    assert_ne!(red_marks("(seed: 9, tm: (QUEUE))"), own);
}
