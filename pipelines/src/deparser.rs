//! The deparser: recompute checksums, emit valid headers in order; the payload follows
//! them unchanged (the pipe leaves it in place).

use crate::phv::{HeaderWire, Phv, WireLayout, WireSlice};
use crate::program::{DeparserProgram, HeaderId, PhvLayout};

/// Appends big-endian bit strings to a byte buffer, 32 bits at a time; dropping it writes
/// what is left, the last byte zero-padded.
struct BitWriter<'a> {
    out: &'a mut Vec<u8>,
    /// Bits not written yet, in the low `pending` bits (the bits above them are stale:
    /// every read truncates them away).
    acc: u64,
    /// How many (below 32 between pushes).
    pending: u32,
}

impl<'a> BitWriter<'a> {
    fn new(out: &'a mut Vec<u8>) -> BitWriter<'a> {
        BitWriter {
            out,
            acc: 0,
            pending: 0,
        }
    }

    /// Append the low `width` bits of `value` (`width <= 32`, higher bits zero).
    #[inline]
    fn push(&mut self, value: u32, width: u32) {
        self.acc = (self.acc << width) | value as u64;
        self.pending += width;
        if self.pending >= 32 {
            self.pending -= 32;
            let word = (self.acc >> self.pending) as u32;
            self.out.extend_from_slice(&word.to_be_bytes());
        }
    }
}

impl Drop for BitWriter<'_> {
    fn drop(&mut self) {
        let word = ((self.acc << (32 - self.pending)) as u32).to_be_bytes();
        self.out
            .extend_from_slice(&word[..self.pending.div_ceil(8) as usize]);
    }
}

/// The Internet checksum (RFC 1071) of the bit string the slices `sources` hold (a
/// checksum's fields, [`WireLayout::checksums`]), zero-padded to a multiple of 16 bits.
///
/// Each slice's value is added shifted to where its last bit sits in its 16-bit word, not
/// split into words: as 2^16 = 1 modulo 0xffff, that sum is congruent to the sum of the
/// words, and it is zero only when every bit is; folding either gives the same checksum.
pub fn internet_checksum(sources: &[WireSlice], phv: &Phv) -> u16 {
    let mut sum: u64 = 0;
    for s in sources {
        let end = s.offset + s.width as u32;
        sum += (s.get(phv) as u64) << ((16 - end % 16) % 16);
    }
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// Deparse the headers into `out` (cleared first): checksums recomputed, valid headers in
/// emit order. The payload, which follows them, is the caller's.
/// `wire` is [`WireLayout::new`] of `layout` and `prog`.
pub fn deparse(
    prog: &DeparserProgram,
    layout: &PhvLayout,
    wire: &WireLayout,
    phv: &mut Phv,
    out: &mut Vec<u8>,
) {
    for (c, sources) in prog.checksums.iter().zip(&wire.checksums) {
        if wire.headers[c.when_valid as usize].is_valid(phv) {
            let sum = internet_checksum(sources, phv);
            phv.set(&layout.fields[c.dst as usize], sum as u128);
        }
    }
    out.clear();
    emit_headers(&prog.emit, &wire.headers, phv, out);
}

/// Append the valid ones of `headers`, in order, to `out`: their container slices in wire
/// order.
fn emit_headers(headers: &[HeaderId], wire: &[HeaderWire], phv: &Phv, out: &mut Vec<u8>) {
    let mut w = BitWriter::new(out);
    for &h in headers {
        let header = &wire[h as usize];
        if !header.is_valid(phv) {
            continue;
        }
        for s in &header.slices {
            w.push(s.get(phv), s.width as u32);
        }
    }
}

/// Most bytes a mirror header may have (the verifier refuses longer ones). An assumption
/// sized for bookkeeping headers: Tofino's mirror metadata is a few tens of bytes.
pub const MIRROR_HEADER_MAX_BYTES: usize = 32;

/// The bytes that start a mirrored copy: the valid headers of the deparser's `Mirror`
/// extern (TNA's mirror header), held inline so the per-packet path does not allocate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MirrorHeader {
    bytes: [u8; MIRROR_HEADER_MAX_BYTES],
    len: u8,
}

impl MirrorHeader {
    /// The header's bytes (empty when the program emits none).
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }
}

/// The mirror header of the packet in `phv`, built in `scratch` (reused between packets).
pub fn mirror_header(
    prog: &DeparserProgram,
    wire: &WireLayout,
    phv: &Phv,
    scratch: &mut Vec<u8>,
) -> MirrorHeader {
    scratch.clear();
    emit_headers(&prog.mirror_emit, &wire.headers, phv, scratch);
    let mut m = MirrorHeader::default();
    let n = scratch.len().min(MIRROR_HEADER_MAX_BYTES);
    m.bytes[..n].copy_from_slice(&scratch[..n]);
    m.len = n as u8;
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_checksum_is_that_of_the_16_bit_words() {
        let mut x: u64 = 99;
        let mut next = || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            x >> 33
        };
        for round in 0..300 {
            let mut phv = Phv::new(8);
            let mut slices = Vec::new();
            let mut offset = 0;
            for _ in 0..(1 + next() % 12) {
                let width = 1 + (next() % 32) as u8;
                let lsb = (next() % (33 - width as u64)) as u8;
                let container = (next() % 8) as u16;
                let s = WireSlice {
                    offset,
                    container,
                    lsb,
                    width,
                    mask: ((1u64 << width) - 1) as u32,
                };
                // Every other round all zero or all ones, for the folding's edge cases.
                let v = match round % 3 {
                    0 => 0,
                    1 => u32::MAX,
                    _ => next() as u32,
                };
                s.put(&mut phv, v & s.mask);
                slices.push(s);
                offset += width as u32;
            }
            // The bit string, zero-padded to 16 bits, summed word by word.
            let mut bits = Vec::new();
            for s in &slices {
                let v = s.get(&phv);
                bits.extend((0..s.width).rev().map(|i| (v >> i) & 1));
            }
            while bits.len() % 16 != 0 {
                bits.push(0);
            }
            let mut sum: u64 = bits
                .chunks(16)
                .map(|w| w.iter().fold(0u64, |a, &b| a << 1 | b as u64))
                .sum();
            while sum >> 16 != 0 {
                sum = (sum & 0xffff) + (sum >> 16);
            }
            assert_eq!(internet_checksum(&slices, &phv), !(sum as u16));
        }
    }

    #[test]
    fn bit_writer_packs_unaligned_fields() {
        let mut out = Vec::new();
        let mut w = BitWriter::new(&mut out);
        w.push(4, 4);
        w.push(5, 4);
        w.push(0x1, 3);
        w.push(0x1abc, 13);
        drop(w);
        assert_eq!(out, vec![0x45, 0x3a, 0xbc]);
        // Values cross the 32-bit flushes; a ragged end is zero-padded.
        let mut out = Vec::new();
        let mut w = BitWriter::new(&mut out);
        w.push(0x7, 3);
        w.push(0x0011, 16);
        w.push(0x2233_4455, 32);
        w.push(0x6677_8899, 32);
        w.push(0x1, 1);
        drop(w);
        let want = [
            0xe0, 0x02, 0x24, 0x46, 0x68, 0x8a, 0xac, 0xce, 0xf1, 0x13, 0x30,
        ];
        assert_eq!(out, want);
    }
}
