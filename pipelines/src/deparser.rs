//! The deparser: recompute checksums, emit valid headers in order, then the payload.

use crate::phv::Phv;
use crate::program::{DeparserProgram, FieldId, HeaderId, PhvLayout};

/// Appends big-endian bit strings to a byte buffer.
struct BitWriter<'a> {
    out: &'a mut Vec<u8>,
    /// Bits already used in the last byte (0 when byte-aligned).
    used: u32,
}

impl BitWriter<'_> {
    fn push(&mut self, value: u128, width: u32) {
        let mut left = width;
        while left > 0 {
            if self.used == 0 {
                self.out.push(0);
            }
            let room = 8 - self.used;
            let take = room.min(left);
            let bits = ((value >> (left - take)) as u32 & ((1u32 << take) - 1)) as u8;
            *self.out.last_mut().expect("a byte was pushed") |= bits << (room - take);
            self.used = (self.used + take) % 8;
            left -= take;
        }
    }
}

/// The Internet checksum (RFC 1071) of `fields` read as one big-endian bit string,
/// zero-padded to a multiple of 16 bits. Sums 16-bit words as the bits stream past, so it
/// needs no buffer.
pub fn internet_checksum(fields: &[FieldId], layout: &PhvLayout, phv: &Phv) -> u16 {
    let mut sum: u64 = 0;
    let (mut pending, mut npending) = (0u32, 0u32);
    for &f in fields {
        let field = &layout.fields[f as usize];
        let value = phv.get(field);
        let mut left = field.width as u32;
        while left > 0 {
            let take = (16 - npending).min(left);
            let bits = (value >> (left - take)) as u32 & ((1u32 << take) - 1);
            pending = (pending << take) | bits;
            npending += take;
            left -= take;
            if npending == 16 {
                sum += pending as u64;
                pending = 0;
                npending = 0;
            }
        }
    }
    if npending > 0 {
        sum += (pending << (16 - npending)) as u64;
    }
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// Deparse into `out` (cleared first): valid headers in emit order, then `payload`.
pub fn deparse(
    prog: &DeparserProgram,
    layout: &PhvLayout,
    phv: &mut Phv,
    payload: &[u8],
    out: &mut Vec<u8>,
) {
    for c in &prog.checksums {
        let header = &layout.headers[c.when_valid as usize];
        if phv.get(&layout.fields[header.valid as usize]) != 0 {
            let sum = internet_checksum(&c.sources, layout, phv);
            phv.set(&layout.fields[c.dst as usize], sum as u128);
        }
    }
    out.clear();
    emit_headers(&prog.emit, layout, phv, out);
    out.extend_from_slice(payload);
}

/// Append the valid ones of `headers`, in order, to `out`.
fn emit_headers(headers: &[HeaderId], layout: &PhvLayout, phv: &Phv, out: &mut Vec<u8>) {
    let mut w = BitWriter { out, used: 0 };
    for &h in headers {
        let header = &layout.headers[h as usize];
        if phv.get(&layout.fields[header.valid as usize]) == 0 {
            continue;
        }
        for &f in &header.fields {
            let field = &layout.fields[f as usize];
            w.push(phv.get(field), field.width as u32);
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
    layout: &PhvLayout,
    phv: &Phv,
    scratch: &mut Vec<u8>,
) -> MirrorHeader {
    scratch.clear();
    emit_headers(&prog.mirror_emit, layout, phv, scratch);
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
        let mut w = BitWriter {
            out: &mut out,
            used: 0,
        };
        w.push(4, 4);
        w.push(5, 4);
        w.push(0x1, 3);
        w.push(0x1abc, 13);
        assert_eq!(out, vec![0x45, 0x3a, 0xbc]);
    }
}
