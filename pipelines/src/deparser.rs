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
/// Sums 16-bit words as the bits stream past, so it needs no buffer.
pub fn internet_checksum(sources: &[WireSlice], phv: &Phv) -> u16 {
    let mut sum: u64 = 0;
    // Bits not summed yet, in the low `pending` bits (below 16 between slices; the bits
    // above them are stale, masked away when summed).
    let (mut acc, mut pending) = (0u64, 0u32);
    for s in sources {
        acc = (acc << s.width) | s.get(phv) as u64;
        pending += s.width as u32;
        while pending >= 16 {
            pending -= 16;
            sum += (acc >> pending) & 0xffff;
        }
    }
    if pending > 0 {
        sum += (acc << (16 - pending)) & 0xffff;
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
