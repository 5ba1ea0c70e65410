//! The deparser: recompute checksums, emit valid headers in order; the payload follows
//! them unchanged (the pipe leaves it in place).
//!
//! Most packets leave with the headers they came with, at the same offsets: then only the
//! bits something may have written since the parser read them need writing back, in place
//! ([`InPlace`]); the rest of the packet's bytes already are what emitting would produce.

use crate::phv::{ChecksumTerm, HeaderWire, Phv, SliceLoad, WireLayout, WireSlice};
use crate::program::{DeparserProgram, GressProgram, HeaderId, ParserOp, PhvLayout};

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

/// The Internet checksum (RFC 1071) of the bit string the slices of `sources` hold (a
/// checksum's fields, [`WireLayout::checksums`]), zero-padded to a multiple of 16 bits.
///
/// Each slice's value is added shifted to where its last bit sits in its 16-bit word
/// ([`ChecksumTerm::shift`]), not split into words: as 2^16 = 1 modulo 0xffff, that sum is
/// congruent to the sum of the words, and it is zero only when every bit is; folding either
/// gives the same checksum.
pub fn internet_checksum(sources: &[ChecksumTerm], phv: &Phv) -> u16 {
    let mut sum: u64 = 0;
    for t in sources {
        sum += (t.slice.get(phv) as u64) << t.shift;
    }
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// Recompute the checksums of the valid headers, writing them into their fields.
/// `wire` is [`WireLayout::new`] of `layout` and `prog`.
pub fn update_checksums(
    prog: &DeparserProgram,
    layout: &PhvLayout,
    wire: &WireLayout,
    phv: &mut Phv,
) {
    for (c, w) in prog.checksums.iter().zip(&wire.checksums) {
        if wire.headers[c.when_valid as usize].is_valid(phv) {
            let sum = internet_checksum(&w.terms, phv);
            w.dst.set(layout, phv, sum as u128);
        }
    }
}

/// Emit the valid headers, in emit order, into `out` (cleared first); the payload, which
/// follows them, is the caller's. Checksums are [`update_checksums`]'s.
pub fn emit(prog: &DeparserProgram, wire: &WireLayout, phv: &Phv, out: &mut Vec<u8>) {
    out.clear();
    emit_headers(&prog.emit, &wire.headers, phv, out);
}

/// Per header, the container slices something other than the header's own extraction may
/// write after the parser read them, found when a gress loads: what the deparser writes back
/// when it leaves the headers in place ([`InPlace::deparse`]).
///
/// A slice is written back if its bits are a destination of an action's operation or
/// extern, a checksum, a parser constant or an intrinsic, or are shared with another slice
/// of any header (an overlay, or a validity bit): then the PHV may no longer hold what the
/// wire has there. Every other bit of a header still holds what the parser read from the
/// packet, so the packet's own byte is the byte emitting would write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InPlace {
    /// Per header (indexed like [`PhvLayout::headers`]), its slices to write back.
    stores: Vec<Vec<Store>>,
}

/// How the deparser writes one slice back into a header's bytes (`byte` counts from the
/// header's first byte).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Store {
    /// A slice of 8 bits on a byte boundary: one byte.
    B8 { byte: u16, slice: WireSlice },
    /// A slice of 16 bits on a byte boundary: two bytes, big-endian.
    B16 { byte: u16, slice: WireSlice },
    /// A slice of 32 bits on a byte boundary: four bytes, big-endian.
    B32 { byte: u16, slice: WireSlice },
    /// Any other slice: its bits in the 8-byte big-endian word the parser loads it from.
    Bits(SliceLoad),
}

impl Store {
    fn new(l: SliceLoad) -> Store {
        let (byte, slice) = (l.byte, l.slice);
        match (slice.offset % 8, slice.width) {
            (0, 8) => Store::B8 { byte, slice },
            (0, 16) => Store::B16 { byte, slice },
            (0, 32) => Store::B32 { byte, slice },
            _ => Store::Bits(l),
        }
    }
}

impl InPlace {
    /// The slices of `prog`'s headers to write back; `wire` is [`WireLayout::new`] of it.
    pub fn new(prog: &GressProgram, wire: &WireLayout) -> InPlace {
        let layout = &prog.phv;
        let containers = layout
            .fields
            .iter()
            .flat_map(|f| &f.slices)
            .map(|s| s.container as usize + 1)
            .max()
            .unwrap_or(0);
        // Per container, the bits written after parsing, and the bits two header slices
        // claim.
        let mut written = vec![0u32; containers];
        let mut once = vec![0u32; containers];
        let mut twice = vec![0u32; containers];
        let bits = |container: u16, lsb: u8, width: u8| {
            (container as usize, (((1u64 << width) - 1) as u32) << lsb)
        };
        let c = &prog.control;
        let fields = c
            .actions
            .iter()
            .flat_map(|a| {
                a.ops
                    .iter()
                    .map(|o| Some(o.dst))
                    .chain(a.externs.iter().flat_map(|e| e.written()))
            })
            .chain(prog.deparser.checksums.iter().map(|k| Some(k.dst)))
            .chain(prog.parser.states.iter().flat_map(|s| {
                s.ops.iter().map(|o| match *o {
                    ParserOp::SetConst { field, .. } => Some(field),
                    ParserOp::Extract(_) | ParserOp::Advance(_) => None,
                })
            }))
            .chain(layout.intrinsics.iter().map(|&(_, f)| Some(f)))
            .flatten();
        for f in fields {
            for s in &layout.fields[f as usize].slices {
                let (k, m) = bits(s.container, s.lsb, s.width);
                written[k] |= m;
            }
        }
        for h in &wire.headers {
            for s in h.slices.iter().chain(&h.valid) {
                let (k, m) = bits(s.container, s.lsb, s.width);
                twice[k] |= once[k] & m;
                once[k] |= m;
            }
        }
        let stores = wire
            .headers
            .iter()
            .map(|h| {
                h.loads
                    .iter()
                    .filter(|l| {
                        let (k, m) = bits(l.slice.container, l.slice.lsb, l.slice.width);
                        (written[k] | twice[k]) & m != 0
                    })
                    .map(|&l| Store::new(l))
                    .collect()
            })
            .collect();
        InPlace { stores }
    }

    /// Deparse into the packet's own bytes, if its headers are where the parser found them:
    /// the valid headers, in emit order, are exactly the ones `extracted` (from
    /// [`crate::parser::parse`]) lists, in that order, one after another from the first
    /// byte to `payload`, each with room for its 8-byte stores. Then each header's slices
    /// to write back are written into `data` and the rest is left as it is, and this
    /// returns true. Otherwise it returns false, having written at most some of those
    /// slices, all inside `data[..payload]`, which the caller then replaces with
    /// [`emit`]'s headers. Checksums are [`update_checksums`]'s.
    pub fn deparse(
        &self,
        prog: &DeparserProgram,
        wire: &WireLayout,
        phv: &Phv,
        extracted: &[(HeaderId, u32)],
        payload: usize,
        data: &mut [u8],
    ) -> bool {
        let mut next = extracted.iter();
        let mut at = 0u32;
        for &h in &prog.emit {
            let header = &wire.headers[h as usize];
            if !header.is_valid(phv) {
                continue;
            }
            if next.next() != Some(&(h, at)) {
                return false;
            }
            // A header the parser extracted lies before `payload`: the stores stay there.
            let start = at as usize / 8;
            let Some(bytes) = data.get_mut(start..start + header.load_end) else {
                return false;
            };
            for st in &self.stores[h as usize] {
                match *st {
                    Store::B8 { byte, slice } => bytes[byte as usize] = slice.get(phv) as u8,
                    Store::B16 { byte, slice } => {
                        let b = byte as usize;
                        let v = slice.get(phv) as u16;
                        bytes[b..b + 2].copy_from_slice(&v.to_be_bytes());
                    }
                    Store::B32 { byte, slice } => {
                        let b = byte as usize;
                        bytes[b..b + 4].copy_from_slice(&slice.get(phv).to_be_bytes());
                    }
                    Store::Bits(l) => {
                        let b = l.byte as usize;
                        let window: &mut [u8; 8] =
                            (&mut bytes[b..b + 8]).try_into().expect("eight bytes");
                        let s = &l.slice;
                        let m = (s.mask as u64) << l.shift;
                        let word =
                            u64::from_be_bytes(*window) & !m | (s.get(phv) as u64) << l.shift;
                        *window = word.to_be_bytes();
                    }
                }
            }
            at += header.bits;
        }
        next.next().is_none() && at as usize == payload * 8
    }
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
    use crate::phv::{checksum_terms, WireSlice};

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
            assert_eq!(
                internet_checksum(&checksum_terms(&slices), &phv),
                !(sum as u16)
            );
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
