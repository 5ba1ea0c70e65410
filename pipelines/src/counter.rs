//! Counters: packet and byte counts in indexed arrays and direct (per-entry) counters.
//!
//! Why both: an indexed counter is an extern an action drives with an index (like
//! `Counter.count(i)`); a direct counter belongs to a table and counts, for each entry, the
//! packets that hit it (plus one count for misses), as a stats ALU beside the match RAM
//! does. Both keep packets and bytes; the array's kind says which the program asked for,
//! and the other count stays zero. Bytes are the packet length as stored (no FCS).

use crate::program::CountKind;
use serde::{Deserialize, Serialize};

/// One counter's values.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    /// Packets counted.
    pub packets: u64,
    /// Bytes counted.
    pub bytes: u64,
}

/// An array of counters.
#[derive(Clone, Debug)]
pub struct CounterBank {
    kind: CountKind,
    counts: Vec<Counts>,
}

impl CounterBank {
    /// `size` zeroed counters of `kind`.
    pub fn new(size: usize, kind: CountKind) -> CounterBank {
        CounterBank {
            kind,
            counts: vec![Counts::default(); size],
        }
    }

    /// Number of counters.
    pub fn len(&self) -> usize {
        self.counts.len()
    }

    /// Whether the array is empty.
    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }

    /// Count a packet of `bytes` bytes in counter `i` (in range: the caller checks).
    #[inline]
    pub fn count(&mut self, i: usize, bytes: u32) {
        let c = &mut self.counts[i];
        if self.kind != CountKind::Bytes {
            c.packets += 1;
        }
        if self.kind != CountKind::Packets {
            c.bytes += bytes as u64;
        }
    }

    /// Counter `i`.
    pub fn read(&self, i: usize) -> Counts {
        self.counts[i]
    }

    /// Set counter `i` (the control plane clears counters this way).
    pub fn write(&mut self, i: usize, c: Counts) {
        self.counts[i] = c;
    }

    /// All counters.
    pub fn all(&self) -> &[Counts] {
        &self.counts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_what_the_kind_says() {
        let mut b = CounterBank::new(2, CountKind::PacketsAndBytes);
        b.count(1, 64);
        b.count(1, 100);
        assert_eq!(
            b.read(1),
            Counts {
                packets: 2,
                bytes: 164
            }
        );
        assert_eq!(b.read(0), Counts::default());
        let mut p = CounterBank::new(1, CountKind::Packets);
        p.count(0, 64);
        assert_eq!(
            p.read(0),
            Counts {
                packets: 1,
                bytes: 0
            }
        );
        let mut y = CounterBank::new(1, CountKind::Bytes);
        y.count(0, 64);
        assert_eq!(
            y.read(0),
            Counts {
                packets: 0,
                bytes: 64
            }
        );
        y.write(0, Counts::default());
        assert_eq!(y.read(0), Counts::default());
    }
}
