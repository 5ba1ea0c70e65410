//! ECN marking on enqueue.

use crate::config::EcnConfig;
use rand_chacha::rand_core::Rng;
use rand_chacha::ChaCha8Rng;

/// Whether a packet arriving to a queue of `depth_cells` (before it) is marked.
/// The generator is drawn from only for depths strictly between Kmin and Kmax, so runs are
/// reproducible from the seed and the arrival sequence.
pub(crate) fn mark(cfg: &EcnConfig, depth_cells: u32, rng: &mut ChaCha8Rng) -> bool {
    match *cfg {
        EcnConfig::Off => false,
        EcnConfig::Threshold { k_cells } => depth_cells > k_cells,
        EcnConfig::Red {
            kmin_cells,
            kmax_cells,
            pmax,
        } => {
            if depth_cells <= kmin_cells {
                false
            } else if depth_cells > kmax_cells {
                true
            } else {
                let p = pmax * (depth_cells - kmin_cells) as f64
                    / (kmax_cells - kmin_cells).max(1) as f64;
                // 53 random bits → a uniform float in [0, 1).
                let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
                u < p
            }
        }
    }
}
