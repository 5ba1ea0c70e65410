//! The deparser: recompute checksums, emit valid headers in order; the payload follows
//! them unchanged (the pipe leaves it in place).
//!
//! Most packets leave with the headers they came with, at the same offsets: then only the
//! bits something may have written since the parser read them need writing back, in place
//! ([`InPlace`]); the rest of the packet's bytes already are what emitting would produce.
//!
//! The in-place path must give the bytes and the PHV that [`update_checksums`] and [`emit`]
//! give (the reference the pipe falls back to; a property test compares the two on random
//! programs). It relies on:
//! - every writer of the PHV besides a header's own extraction being in
//!   [`crate::dataflow::writers`]: a slice no writer there touches is not written back, so a
//!   writer missing from it would leave the parsed bytes in the packet;
//! - the slices of one header holding distinct container bits (the verifier refuses others),
//!   so its stores may go in any order;
//! - a checksum summed from the packet's bytes (a `HeaderChecksum`) only for a header the
//!   deparser emits, as only those are written back; the checksum of a valid header it does
//!   not emit is still in the PHV for the mirror header and the outputs, as emitting leaves
//!   it.

use crate::dataflow::{self, slice_bits, Writer};
use crate::phv::{ChecksumTerm, FieldRef, HeaderWire, Phv, SliceLoad, WireLayout, WireSlice};
use crate::program::{ChecksumUpdate, DeparserProgram, GressProgram, HeaderId, PhvLayout};

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
/// A slice is written back if its bits are written by one of [`crate::dataflow::writers`]
/// other than the extractions (an action's operation or extern, a checksum, a parser
/// constant, an intrinsic), or are shared with another slice of any header (an overlay, or
/// a validity bit): then the PHV may no longer hold what the wire has there. Every other
/// bit of a header still holds what the parser read from the packet, so the packet's own
/// byte is the byte emitting would write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InPlace {
    /// Per header (indexed like [`PhvLayout::headers`]), what to write back.
    headers: Vec<WriteBack>,
    /// Every checksum of the program is a [`HeaderChecksum`]: [`update_checksums`] runs
    /// only for a packet whose headers are not left in place.
    sums_in_place: bool,
}

/// What the deparser writes back into one header it leaves in place.
#[derive(Clone, Debug, PartialEq, Eq)]
struct WriteBack {
    /// Its slices to write back, by how they are stored: a list per kind, so the loop
    /// over each has no dispatch. The slices of one header are disjoint bits of it and
    /// each store writes only its own bits, so the order they are written in does not
    /// matter.
    stores: Stores,
    /// Its checksums, summed from its bytes once its slices are written back, in the
    /// program's order; empty unless [`InPlace::sums_in_place`].
    sums: Vec<HeaderChecksum>,
}

/// A checksum of one header's bytes: its sources, one after another, are whole bytes of
/// the header; its destination is a 16-bit field of the header on a byte boundary, not
/// among the sources, whose bits no other field shares; it is computed when that header
/// is valid (IPv4's header checksum).
///
/// Once the header's slices are written back in place, its bytes hold exactly the bits the
/// sources hold in the PHV, so the checksum is summed from the packet, then written into
/// the PHV and the packet. Writing the destination changes no other field, so the checksums
/// of other headers, and the sources, are what [`update_checksums`] would see: the results
/// are its results, and computing them again (for a packet not left in place) gives the
/// same.
#[derive(Clone, Debug, PartialEq, Eq)]
struct HeaderChecksum {
    /// The sources' bytes.
    words: Words,
    /// The destination field.
    dst: FieldRef,
    /// The destination's first byte from the header's first byte.
    dst_byte: u16,
}

impl HeaderChecksum {
    /// `c` as a checksum of one header of `layout`, and that header, if it is one.
    fn new(layout: &PhvLayout, c: &ChecksumUpdate) -> Option<(HeaderId, HeaderChecksum)> {
        // Each header field's header and bit offset in it.
        let mut at: Vec<Option<(HeaderId, u32)>> = vec![None; layout.fields.len()];
        for (h, header) in layout.headers.iter().enumerate() {
            let mut offset = 0u32;
            for &f in &header.fields {
                at[f as usize] = Some((h as HeaderId, offset));
                offset += layout.fields[f as usize].width as u32;
            }
        }
        let header = c.when_valid;
        // The sources' bits as runs of the header's bits.
        let mut bits: Vec<(u32, u32)> = Vec::new();
        for &f in &c.sources {
            let (h, offset) = at[f as usize]?;
            if h != header || f == c.dst {
                return None;
            }
            let width = layout.fields[f as usize].width as u32;
            match bits.last_mut() {
                Some((start, len)) if *start + *len == offset => *len += width,
                _ => bits.push((offset, width)),
            }
        }
        let mut runs = Vec::with_capacity(bits.len());
        for (i, &(start, len)) in bits.iter().enumerate() {
            let whole_bytes = start % 8 == 0 && len % 8 == 0;
            if !whole_bytes || (i + 1 != bits.len() && len % 16 != 0) {
                return None;
            }
            runs.push((u16::try_from(start / 8).ok()?, u16::try_from(len / 8).ok()?));
        }
        let (dst_header, dst_offset) = at[c.dst as usize]?;
        let dst = &layout.fields[c.dst as usize];
        if runs.is_empty() || dst_header != header || dst.width != 16 || dst_offset % 8 != 0 {
            return None;
        }
        let shared = layout.fields.iter().enumerate().any(|(g, other)| {
            g != c.dst as usize
                && other.slices.iter().any(|o| {
                    dst.slices.iter().any(|s| {
                        let ((oc, om), (sc, sm)) = (slice_bits(o), slice_bits(s));
                        oc == sc && om & sm != 0
                    })
                })
        });
        if shared {
            return None;
        }
        Some((
            header,
            HeaderChecksum {
                words: Words::new(&runs),
                dst: FieldRef::new(layout, Some(c.dst)),
                dst_byte: u16::try_from(dst_offset / 8).ok()?,
            },
        ))
    }
}

/// A byte string made of runs of a header's bytes, as the words the checksum adds: 64-bit
/// words, then 32-bit and 16-bit ones, then a last odd byte, each by its first byte from
/// the header's first byte, every one starting on a 16-bit word of the string. As
/// 2^16 = 1 modulo 0xffff, a word is congruent to the sum of its 16-bit words, and the sum
/// is zero only when every bit is: folding it gives [`internet_checksum`]'s result.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Words {
    w64: Vec<u16>,
    w32: Vec<u16>,
    w16: Vec<u16>,
    /// A last byte, the high half of a 16-bit word whose low half is padding.
    odd: Option<u16>,
    /// One past the last byte.
    end: usize,
}

impl Words {
    /// `runs` as (first byte, length): every run but the last of an even length.
    fn new(runs: &[(u16, u16)]) -> Words {
        let mut w = Words {
            w64: Vec::new(),
            w32: Vec::new(),
            w16: Vec::new(),
            odd: None,
            end: 0,
        };
        for &(start, len) in runs {
            let (mut at, end) = (start, start + len);
            while end - at >= 8 {
                w.w64.push(at);
                at += 8;
            }
            for (size, list) in [(4, &mut w.w32), (2, &mut w.w16)] {
                if end - at >= size {
                    list.push(at);
                    at += size;
                }
            }
            if end > at {
                w.odd = Some(at);
            }
            w.end = w.end.max(end as usize);
        }
        w
    }

    /// The Internet checksum (RFC 1071) of the string in `header` (the header's bytes);
    /// `None` if it ends beyond them.
    #[inline(always)]
    fn checksum(&self, header: &[u8]) -> Option<u16> {
        let bytes = header.get(..self.end)?;
        let mut sum: u64 = 0;
        for &b in &self.w64 {
            let w = u64::from_be_bytes(*bytes.get(b as usize..)?.first_chunk()?);
            sum += (w >> 32) + (w & 0xffff_ffff);
        }
        for &b in &self.w32 {
            sum += u32::from_be_bytes(*bytes.get(b as usize..)?.first_chunk()?) as u64;
        }
        for &b in &self.w16 {
            sum += u16::from_be_bytes(*bytes.get(b as usize..)?.first_chunk()?) as u64;
        }
        if let Some(b) = self.odd {
            sum += (*bytes.get(b as usize)? as u64) << 8;
        }
        while sum >> 16 != 0 {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        Some(!(sum as u16))
    }
}

/// How the deparser writes a header's slices back into its bytes (each `byte` counts from
/// the header's first byte).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Stores {
    /// Slices of 8 bits on a byte boundary: one byte.
    b8: Vec<(u16, WireSlice)>,
    /// Slices of 16 bits on a byte boundary: two bytes, big-endian.
    b16: Vec<(u16, WireSlice)>,
    /// Slices of 32 bits on a byte boundary: four bytes, big-endian.
    b32: Vec<(u16, WireSlice)>,
    /// Any other slice: its bits in the 8-byte big-endian word the parser loads it from.
    bits: Vec<SliceLoad>,
}

impl Stores {
    /// Add `l`'s slice to the list of its kind.
    fn push(&mut self, l: SliceLoad) {
        let (byte, slice) = (l.byte, l.slice);
        match (slice.offset % 8, slice.width) {
            (0, 8) => self.b8.push((byte, slice)),
            (0, 16) => self.b16.push((byte, slice)),
            (0, 32) => self.b32.push((byte, slice)),
            _ => self.bits.push(l),
        }
    }

    /// Write the slices from `phv` into `bytes` (the header's bytes); false if one lies
    /// beyond them (none does when `bytes` reaches [`HeaderWire::load_end`]).
    #[inline(always)]
    fn write(&self, phv: &Phv, bytes: &mut [u8]) -> bool {
        for &(b, s) in &self.b8 {
            let Some(dst) = bytes.get_mut(b as usize) else {
                return false;
            };
            *dst = s.get(phv) as u8;
        }
        for &(b, s) in &self.b16 {
            let Some(dst) = window::<2>(bytes, b) else {
                return false;
            };
            *dst = (s.get(phv) as u16).to_be_bytes();
        }
        for &(b, s) in &self.b32 {
            let Some(dst) = window::<4>(bytes, b) else {
                return false;
            };
            *dst = s.get(phv).to_be_bytes();
        }
        for l in &self.bits {
            let Some(dst) = window::<8>(bytes, l.byte) else {
                return false;
            };
            let s = &l.slice;
            let m = (s.mask as u64) << l.shift;
            let word = u64::from_be_bytes(*dst) & !m | (s.get(phv) as u64) << l.shift;
            *dst = word.to_be_bytes();
        }
        true
    }
}

/// The `N` bytes of `bytes` from `at`, if it has them.
#[inline(always)]
fn window<const N: usize>(bytes: &mut [u8], at: u16) -> Option<&mut [u8; N]> {
    bytes.get_mut(at as usize..)?.first_chunk_mut()
}

impl InPlace {
    /// The slices of `prog`'s headers to write back; `wire` is [`WireLayout::new`] of it.
    pub fn new(prog: &GressProgram, wire: &WireLayout) -> InPlace {
        let layout = &prog.phv;
        let containers = layout.containers();
        // Per container, the bits written after parsing, and the bits two header slices
        // claim.
        let mut written_bits = vec![0u32; containers];
        let mut once = vec![0u32; containers];
        let mut twice = vec![0u32; containers];
        // Whole fields, even where an operation deposits only some bits: writing back bits
        // that still hold what the parser read is harmless.
        let written = dataflow::writers(prog)
            .into_iter()
            .filter(|(w, _)| !matches!(w, Writer::Extract(_)))
            .flat_map(|(_, f)| dataflow::field_bits(layout, f.field));
        for (k, m) in written {
            written_bits[k as usize] |= m;
        }
        let wire_bits = |s: &WireSlice| (s.container as usize, s.mask << s.lsb);
        for h in &wire.headers {
            for s in h.slices.iter().chain(&h.valid) {
                let (k, m) = wire_bits(s);
                twice[k] |= once[k] & m;
                once[k] |= m;
            }
        }
        let mut sums = vec![Vec::new(); wire.headers.len()];
        // A checksum is summed in place as its header is written back, so only for a
        // header the deparser emits: the PHV keeps the checksum of a valid header it does
        // not emit too (a mirror header may carry it), which only `update_checksums` sums.
        let sums_in_place = prog.deparser.checksums.iter().all(|c| {
            prog.deparser.emit.contains(&c.when_valid)
                && HeaderChecksum::new(layout, c).is_some_and(|(h, k)| {
                    sums[h as usize].push(k);
                    true
                })
        });
        if !sums_in_place {
            sums.iter_mut().for_each(Vec::clear);
        }
        let stores: Vec<Stores> = wire
            .headers
            .iter()
            .map(|h| {
                let mut stores = Stores::default();
                h.loads
                    .iter()
                    .filter(|l| {
                        let (k, m) = wire_bits(&l.slice);
                        (written_bits[k] | twice[k]) & m != 0
                    })
                    .for_each(|&l| stores.push(l));
                stores
            })
            .collect();
        InPlace {
            headers: stores
                .into_iter()
                .zip(sums)
                .map(|(stores, sums)| WriteBack { stores, sums })
                .collect(),
            sums_in_place,
        }
    }

    /// Recompute the checksums and deparse into the packet's own bytes, if its headers are
    /// where the parser found them (see `InPlace::write_back`); then this returns true.
    /// Otherwise it returns false, with the checksums in the PHV, having written at most
    /// some slices inside `data[..payload]`, which the caller then replaces with [`emit`]'s
    /// headers. Inlined into each caller: the traced gress (`crate::trace`) is a second
    /// caller, which would otherwise keep it out of line in the untraced one.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub fn deparse(
        &self,
        prog: &DeparserProgram,
        layout: &PhvLayout,
        wire: &WireLayout,
        phv: &mut Phv,
        extracted: &[(HeaderId, u32)],
        payload: usize,
        data: &mut [u8],
    ) -> bool {
        if !self.sums_in_place {
            update_checksums(prog, layout, wire, phv);
        }
        let in_place = self.write_back(prog, layout, wire, phv, extracted, payload, data);
        if !in_place && self.sums_in_place {
            update_checksums(prog, layout, wire, phv);
        }
        in_place
    }

    /// Write the headers back into the packet's own bytes, if they are where the parser
    /// found them: the valid headers, in emit order, are exactly the ones `extracted` (from
    /// [`crate::parser::parse`]) lists, in that order, one after another from the first
    /// byte to `payload`, each with room for its 8-byte stores. Then each header's slices
    /// to write back are written into `data`, its [`HeaderChecksum`]s into the PHV and
    /// `data`, the rest is left as it is, and this returns true. Otherwise it returns
    /// false, having written at most some of those slices and checksums, all inside
    /// `data[..payload]`.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn write_back(
        &self,
        prog: &DeparserProgram,
        layout: &PhvLayout,
        wire: &WireLayout,
        phv: &mut Phv,
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
            let Some(bytes) = data.get_mut(start..start + header.load_end()) else {
                return false;
            };
            let back = &self.headers[h as usize];
            if !back.stores.write(phv, bytes) {
                return false;
            }
            for k in &back.sums {
                let Some(sum) = k.words.checksum(bytes) else {
                    return false;
                };
                k.dst.set(layout, phv, sum as u128);
                let b = k.dst_byte as usize;
                let Some(dst) = bytes.get_mut(b..b + 2) else {
                    return false;
                };
                dst.copy_from_slice(&sum.to_be_bytes());
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
    use crate::phv::{checksum_terms, field_slices, WireSlice};
    use crate::program::{Field, Header, PhvSlice};

    /// A layout of one header of fields of `widths` (each slice in a container of its
    /// own, from container 1; the validity bit in container 0), its fields numbered from 0
    /// and the validity bit last.
    fn one_header(widths: &[u16]) -> PhvLayout {
        let mut container = 1u16;
        let mut fields: Vec<Field> = widths
            .iter()
            .map(|&w| {
                let mut slices = Vec::new();
                let mut left = w;
                while left > 0 {
                    let take = left.min(32);
                    slices.push(PhvSlice {
                        container,
                        lsb: 0,
                        width: take as u8,
                    });
                    container += 1;
                    left -= take;
                }
                Field {
                    name: "f".into(),
                    width: w,
                    slices,
                }
            })
            .collect();
        fields.push(Field {
            name: "valid".into(),
            width: 1,
            slices: vec![PhvSlice {
                container: 0,
                lsb: 0,
                width: 1,
            }],
        });
        PhvLayout {
            headers: vec![Header {
                name: "h".into(),
                fields: (0..widths.len() as u16).collect(),
                valid: widths.len() as u16,
            }],
            fields,
            intrinsics: Vec::new(),
        }
    }

    /// The checksum of `c` both ways over the header in `bytes`: from the packet's bytes
    /// (if it is bytes of the header) and from the PHV the parser fills from them.
    fn both_ways(layout: &PhvLayout, c: &ChecksumUpdate, bytes: &[u8]) -> (Option<u16>, u16) {
        let mut phv = Phv::new(layout.containers());
        let (slices, _) = field_slices(layout, &layout.headers[0].fields);
        for s in &slices {
            let v = crate::parser::read_bits(bytes, s.offset as usize, s.width as usize);
            s.put(&mut phv, v as u32);
        }
        let from_phv =
            internet_checksum(&checksum_terms(&field_slices(layout, &c.sources).0), &phv);
        let from_bytes = HeaderChecksum::new(layout, c).and_then(|(_, k)| k.words.checksum(bytes));
        (from_bytes, from_phv)
    }

    /// IPv4's header checksum is bytes 0..10 and 12..20 of the header, summed from the
    /// packet with the PHV's result, on literal headers and on random ones.
    #[test]
    fn the_ipv4_checksum_from_the_bytes_is_the_one_from_the_fields() {
        let layout = one_header(&[4, 4, 8, 16, 16, 3, 13, 8, 8, 16, 32, 32]);
        let c = ChecksumUpdate {
            dst: 9,
            sources: vec![0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 11],
            when_valid: 0,
        };
        let (h, k) = HeaderChecksum::new(&layout, &c).expect("bytes of the header");
        assert_eq!((h, k.dst_byte), (0, 10));
        assert_eq!((k.words.w64, k.words.w16), (vec![0, 12], vec![8]));
        // RFC 1071's example header (checksum 0xb861), then the edge cases of the fold.
        let mut header = [
            0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00, 0xc0, 0xa8,
            0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
        ];
        assert_eq!(both_ways(&layout, &c, &header), (Some(0xb861), 0xb861));
        assert_eq!(both_ways(&layout, &c, &[0; 20]), (Some(0xffff), 0xffff));
        assert_eq!(both_ways(&layout, &c, &[0xff; 20]), (Some(0), 0));
        let mut x: u64 = 7;
        for _ in 0..200 {
            for byte in header.iter_mut() {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                *byte = (x >> 56) as u8;
            }
            let (bytes, phv) = both_ways(&layout, &c, &header);
            assert_eq!(bytes, Some(phv));
        }
    }

    /// Sources that are not whole 16-bit words of one header's bytes, or that hold the
    /// destination, or a destination that is not 16 bits on a byte boundary, are summed
    /// over the PHV; those that are give its result, whatever their order and widths.
    #[test]
    fn only_whole_bytes_of_one_header_are_summed_from_the_packet() {
        let mut x: u64 = 11;
        let mut next = |n: u64| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) % n
        };
        let (mut summed, mut refused) = (0, 0);
        for _ in 0..1000 {
            // Fields of 1 to 40 bits, a 16-bit field somewhere, the whole a number of bytes.
            let mut widths: Vec<u16> = (0..1 + next(8)).map(|_| 1 + next(40) as u16).collect();
            let dst = next(widths.len() as u64 + 1) as usize;
            widths.insert(dst, 16);
            let bits: u16 = widths.iter().sum();
            if bits % 8 != 0 {
                widths.push(8 - bits % 8);
            }
            let layout = one_header(&widths);
            // Sources: a run of the fields, skipping the destination or not.
            let first = next(widths.len() as u64) as u16;
            let last = first + next(widths.len() as u64 - first as u64) as u16;
            let sources: Vec<u16> = (first..=last)
                .filter(|&f| f as usize != dst || next(4) == 0)
                .collect();
            if sources.is_empty() {
                continue;
            }
            let c = ChecksumUpdate {
                dst: dst as u16,
                sources,
                when_valid: 0,
            };
            let header: Vec<u8> = (0..widths.iter().sum::<u16>() / 8)
                .map(|_| next(256) as u8)
                .collect();
            match both_ways(&layout, &c, &header) {
                (Some(bytes), phv) => {
                    assert_eq!(bytes, phv, "{widths:?} {:?}", c.sources);
                    summed += 1;
                }
                (None, _) => refused += 1,
            }
        }
        assert!(summed > 20 && refused > 20, "{summed} {refused}");
        // Two headers, or a destination sharing its container: summed over the PHV.
        let mut layout = one_header(&[16, 16, 16]);
        let two = ChecksumUpdate {
            dst: 0,
            sources: vec![1, 2],
            when_valid: 0,
        };
        assert!(HeaderChecksum::new(&layout, &two).is_some());
        layout.headers.push(Header {
            name: "g".into(),
            fields: vec![2],
            valid: 3,
        });
        layout.headers[0].fields.pop();
        assert!(HeaderChecksum::new(&layout, &two).is_none());
        let mut layout = one_header(&[16, 16, 16]);
        layout.fields[1].slices[0].container = layout.fields[0].slices[0].container;
        layout.fields[1].slices[0].lsb = 8;
        layout.fields[1].slices[0].width = 8;
        assert!(HeaderChecksum::new(&layout, &two).is_none());
    }

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
