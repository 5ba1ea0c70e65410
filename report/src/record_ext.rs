//! Helper methods on the record types of [`asic_net::records`], kept apart from the contract
//! itself: the records stay plain data written by the network runtime; what the report needs
//! to ask of them lives here, as extension traits (so a method the runtime later adds to the
//! records under the same name cannot clash: an inherent method simply takes precedence).

use asic_net::records::{PauseEvent, Series};

/// What the report asks of a [`Series`].
pub trait SeriesExt {
    /// The node a series belongs to: its name up to the first `.` (the whole name if it has
    /// none). `leaf0.port3.q0.depth_cells` belongs to `leaf0`.
    fn node(&self) -> &str;

    /// The name without its node prefix (`port3.q0.depth_cells`); empty if the name has no `.`.
    fn local_name(&self) -> &str;

    /// The value holding at `t_ps`: that of the last point at or before `t_ps`; `None` before
    /// the first point.
    fn value_at(&self, t_ps: u64) -> Option<f64>;

    /// Whether this series is a cumulative byte counter (bytes sent or received so far), the
    /// input of [`crate::metrics::windowed_rate`]: its unit is `bytes` and its name
    /// ends in `tx_bytes`, `rx_bytes` or `bytes_total`. Queue depths in bytes are not
    /// counters: they do not end that way.
    fn is_byte_counter(&self) -> bool;

    /// Whether every value is a non-negative whole number below 2^53 (cells, packets,
    /// occupancy counts): such a series is written to a waveform as an integer, others as reals.
    fn is_integral(&self) -> bool;
}

impl SeriesExt for Series {
    fn node(&self) -> &str {
        self.name.split('.').next().unwrap_or(&self.name)
    }

    fn local_name(&self) -> &str {
        self.name.split_once('.').map_or("", |(_, rest)| rest)
    }

    fn value_at(&self, t_ps: u64) -> Option<f64> {
        let n = self.points.partition_point(|&(t, _)| t <= t_ps);
        n.checked_sub(1).map(|i| self.points[i].1)
    }

    fn is_byte_counter(&self) -> bool {
        self.unit == "bytes"
            && ["tx_bytes", "rx_bytes", "bytes_total"]
                .iter()
                .any(|s| self.name.ends_with(s))
    }

    fn is_integral(&self) -> bool {
        self.points
            .iter()
            .all(|&(_, v)| v.is_finite() && v >= 0.0 && v.fract() == 0.0 && v < 9.007_199e15)
    }
}

/// What the report asks of a [`PauseEvent`].
pub trait PauseEventExt {
    /// The key a pause timeline is grouped by: (node, port, kind, class).
    fn key(&self) -> (String, u16, String, u16);
}

impl PauseEventExt for PauseEvent {
    fn key(&self) -> (String, u16, String, u16) {
        (self.node.clone(), self.port, self.kind.clone(), self.class)
    }
}
