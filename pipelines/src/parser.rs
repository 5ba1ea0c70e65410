//! The parser engine: runs a [`ParserProgram`] over a packet's bytes, filling the PHV.
//!
//! It is a byte-level state machine: each state extracts headers at the cursor (copying
//! their bits into the fields' containers and setting the header's validity bit) and then
//! picks the next state from a select over extracted fields or lookahead bits. A packet too
//! short for what the program asks, or a walk longer than the chip's parse-depth limit, ends
//! in a [`ParseError`]: the packet takes the error path and is counted, never a panic.
//!
//! A byte-aligned header with room for its 8-byte loads is stored by
//! [`HeaderWire::extract_aligned`], the fast path; any other by [`extract_bits`], slice by
//! slice, the reference (a property test compares them on random layouts). The aligned
//! extract stores a slice that holds every bit any field has in its container as the
//! container's whole value, so it relies on the bits no field has being 0 (nothing writes a
//! container but through field slices, and a packet's PHV starts cleared), and, as it
//! stores fills before merges, on a header's slices holding distinct container bits (the
//! verifier refuses others).

use crate::phv::{mask, HeaderWire, Phv, SelectRead, WireLayout};
use crate::program::{
    CasePattern, HeaderId, Next, ParserOp, ParserProgram, PhvLayout, SelectKey, Transition,
};
use crate::trace::GressTracer;
use std::fmt;

impl std::error::Error for ParseError {}

/// Why parsing failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParseError {
    /// The program transitioned to `reject`.
    Reject {
        /// The state that rejected.
        state: String,
    },
    /// The packet ended before a header or lookahead the state needed.
    Truncated {
        /// The state that ran out of bytes.
        state: String,
        /// Bytes needed from the start of the packet.
        needed: usize,
        /// Bytes the packet has.
        have: usize,
    },
    /// More states were visited than the chip allows for one packet.
    TooDeep {
        /// The limit.
        limit: usize,
    },
}

/// TNA's `PARSER_ERROR_NO_MATCH` (Tofino-1 `tofino.p4`; `NO_TCAM` on Tofino-2): no parser
/// state matched, which is what a transition to `reject` is on the chip.
pub const PARSER_ERROR_NO_MATCH: u16 = 0x0001;
/// TNA's `PARSER_ERROR_PARTIAL_HDR`: the packet ended inside a header.
pub const PARSER_ERROR_PARTIAL_HDR: u16 = 0x0002;
/// TNA's `PARSER_ERROR_TIMEOUT_HW`: the parser hit the chip's limit (here the profile's
/// parse depth, `parser.max_depth`).
pub const PARSER_ERROR_TIMEOUT_HW: u16 = 0x0010;

impl ParseError {
    /// The code written to [`crate::program::Intrinsic::ParserError`] when the program
    /// continues after the error: TNA's `PARSER_ERROR_*` bit for the cause.
    pub fn code(&self) -> u16 {
        match self {
            ParseError::Reject { .. } => PARSER_ERROR_NO_MATCH,
            ParseError::Truncated { .. } => PARSER_ERROR_PARTIAL_HDR,
            ParseError::TooDeep { .. } => PARSER_ERROR_TIMEOUT_HW,
        }
    }
}

/// A failed parse: why, and where the cursor stood (the first byte not extracted, which
/// becomes payload if the program continues).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseFailure {
    /// Why.
    pub error: ParseError,
    /// Bytes consumed before the failure.
    pub payload: usize,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseError::Reject { state } => write!(f, "parser state `{state}` rejected the packet"),
            ParseError::Truncated {
                state,
                needed,
                have,
            } => write!(
                f,
                "parser state `{state}` needs {needed} bytes but the packet has {have}"
            ),
            ParseError::TooDeep { limit } => {
                write!(f, "parser visited more than {limit} states")
            }
        }
    }
}

/// Read `width` bits (1..=128) starting `bit_off` bits into `data`, big-endian.
/// The caller guarantees `bit_off + width <= data.len() * 8`.
pub fn read_bits(data: &[u8], bit_off: usize, width: usize) -> u128 {
    if (1..=56).contains(&width) {
        // The eight bytes from the first one hold all the bits (offset in byte + width
        // <= 63): one big-endian load, zero-padded past the end of the packet.
        let byte = bit_off / 8;
        let word = match data.get(byte..byte + 8) {
            Some(b) => u64::from_be_bytes(b.try_into().expect("eight bytes")),
            None => {
                let mut buf = [0u8; 8];
                let tail = &data[byte.min(data.len())..];
                buf[..tail.len()].copy_from_slice(tail);
                u64::from_be_bytes(buf)
            }
        };
        return ((word << (bit_off % 8)) >> (64 - width)) as u128;
    }
    let end = bit_off + width;
    let mut acc: u128 = 0;
    let mut pos = bit_off;
    while pos < end {
        let byte = data[pos / 8];
        let avail = 8 - pos % 8;
        let take = avail.min(end - pos);
        let bits = (byte as u32 >> (avail - take)) & ((1u32 << take) - 1);
        acc = (acc << take) | bits as u128;
        pos += take;
    }
    acc
}

/// Store `header`'s slices from the packet's bits at `at_bit` on: each slice read on its
/// own with [`read_bits`], wherever it starts. The reference extract: the parser takes it
/// for a header that is not byte-aligned or too near the packet's end for
/// [`HeaderWire::extract_aligned`], which must store what this stores (a property test
/// compares them). The caller guarantees the header's bits lie within `data`.
pub fn extract_bits(header: &HeaderWire, data: &[u8], at_bit: usize, phv: &mut Phv) {
    for s in &header.slices {
        let v = read_bits(data, at_bit + s.offset as usize, s.width as usize) as u32;
        s.put(phv, v);
    }
}

/// Run the parser over `data`, visiting at most `max_depth` states. On success returns the
/// byte offset where the payload starts (everything the parser did not extract or skip).
/// On failure the headers extracted so far stay valid in the PHV. `wire` is
/// [`WireLayout::new`] of `layout` and `prog`. `extracted` is set to every extraction,
/// in order, as (header, bit offset in the packet): what the deparser needs to know to leave
/// the headers where they are ([`crate::deparser::InPlace`]). `tracer` is told each state,
/// extraction and transition ([`crate::trace`]).
#[allow(clippy::too_many_arguments)]
pub fn parse(
    prog: &ParserProgram,
    layout: &PhvLayout,
    wire: &WireLayout,
    data: &[u8],
    phv: &mut Phv,
    max_depth: usize,
    extracted: &mut Vec<(HeaderId, u32)>,
    tracer: &mut impl GressTracer,
) -> Result<usize, ParseFailure> {
    extracted.clear();
    let mut cursor_bits = 0usize;
    let mut state_id = prog.start;
    for _ in 0..max_depth {
        tracer.parser_state(state_id);
        let state = &prog.states[state_id as usize];
        let truncated = |needed_bits: usize, at: usize| ParseFailure {
            error: ParseError::Truncated {
                state: state.name.clone(),
                needed: needed_bits.div_ceil(8),
                have: data.len(),
            },
            payload: at / 8,
        };
        for op in &state.ops {
            match *op {
                ParserOp::Extract(h) => {
                    // The header's container slices, each read straight from the bytes.
                    let header = &wire.headers[h as usize];
                    let bits = header.bits as usize;
                    if cursor_bits + bits > data.len() * 8 {
                        return Err(truncated(cursor_bits + bits, cursor_bits));
                    }
                    let start = cursor_bits / 8;
                    // Byte-aligned with room for every 8-byte load: a load per slice;
                    // otherwise bit by bit.
                    let aligned = cursor_bits % 8 == 0
                        && header.extract_aligned(data.get(start..).unwrap_or_default(), phv);
                    if !aligned {
                        extract_bits(header, data, cursor_bits, phv);
                    }
                    if let Some(s) = &header.valid {
                        s.put(phv, 1);
                    }
                    extracted.push((h, cursor_bits as u32));
                    tracer.parser_extract(h, cursor_bits as u32);
                    cursor_bits += bits;
                }
                ParserOp::Advance(bits) => {
                    let bits = bits as usize;
                    if cursor_bits + bits > data.len() * 8 {
                        return Err(truncated(cursor_bits + bits, cursor_bits));
                    }
                    cursor_bits += bits;
                }
                ParserOp::SetConst { field, value } => {
                    phv.set(&layout.fields[field as usize], value);
                }
            }
        }
        // The tracer is told in each arm: a (key, next) pair built for it costs the untraced
        // parser a few instructions per state.
        let next = match &state.transition {
            Transition::Direct(n) => {
                tracer.parser_next(0, *n);
                *n
            }
            Transition::Select { cases, default, .. } => {
                let mut key: u128 = 0;
                for k in &wire.selects[state_id as usize] {
                    let (v, w) = match *k {
                        SelectRead::Narrow { bits, width } => (bits.get(phv) as u128, width),
                        SelectRead::Key(SelectKey::Field { field, hi, lo }) => {
                            let w = (hi - lo + 1) as u32;
                            let v = phv.get(&layout.fields[field as usize]) >> lo;
                            (v & mask(w), w)
                        }
                        SelectRead::Key(SelectKey::Lookahead { offset_bits, width }) => {
                            let start = cursor_bits + offset_bits as usize;
                            if start + width as usize > data.len() * 8 {
                                return Err(truncated(start + width as usize, cursor_bits));
                            }
                            (read_bits(data, start, width as usize), width as u32)
                        }
                    };
                    key = if w >= 128 { v } else { (key << w) | v };
                }
                let next = cases
                    .iter()
                    .find(|c| match c.pattern {
                        CasePattern::Masked { value, mask } => key & mask == value & mask,
                        CasePattern::Range { lo, hi } => lo <= key && key <= hi,
                    })
                    .map_or(*default, |c| c.next);
                tracer.parser_next(key, next);
                next
            }
        };
        match next {
            Next::Accept => return Ok(cursor_bits / 8),
            Next::Reject => {
                return Err(ParseFailure {
                    error: ParseError::Reject {
                        state: state.name.clone(),
                    },
                    payload: cursor_bits / 8,
                })
            }
            Next::State(s) => state_id = s,
        }
    }
    Err(ParseFailure {
        error: ParseError::TooDeep { limit: max_depth },
        payload: cursor_bits / 8,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_bits_handles_unaligned_ranges() {
        let d = [0b1010_1100, 0b0101_0011, 0xff];
        assert_eq!(read_bits(&d, 0, 4), 0b1010);
        assert_eq!(read_bits(&d, 4, 4), 0b1100);
        assert_eq!(read_bits(&d, 6, 5), 0b00010);
        assert_eq!(read_bits(&d, 0, 24), 0xac53ff);
        let wide = [0xabu8; 17];
        // 128 bits starting at bit 4 of a run of 0xab bytes: 0xbababa...
        assert_eq!(read_bits(&wide, 4, 128), u128::from_be_bytes([0xba; 16]));
    }
}
