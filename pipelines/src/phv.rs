//! The PHV at run time: one integer per container.
//!
//! Every container is held in a `u32` whatever its width (8, 16 or 32 bits); a field is read
//! and written through its slices, which never cross a container's width (the verifier checks
//! that), so narrower containers never hold stray high bits.

use crate::program::{
    DeparserProgram, Field, FieldId, ParserProgram, PhvLayout, SelectKey, Transition,
};

/// The packet header vector of one packet in one gress.
#[derive(Clone, Debug)]
pub struct Phv {
    words: Vec<u32>,
}

/// All-ones mask of `width` bits (`width <= 128`).
pub fn mask(width: u32) -> u128 {
    if width >= 128 {
        u128::MAX
    } else {
        (1u128 << width) - 1
    }
}

/// All-ones mask of a slice's `width` bits (`width <= 32`, as slices are).
#[inline]
fn low_mask(width: u8) -> u32 {
    ((1u64 << width) - 1) as u32
}

impl Phv {
    /// A PHV of `containers` containers, all zero.
    pub fn new(containers: usize) -> Phv {
        Phv {
            words: vec![0; containers],
        }
    }

    /// Zero every container (a new packet starts with an empty PHV).
    pub fn clear(&mut self) {
        self.words.fill(0);
    }

    /// The value of a field.
    #[inline]
    pub fn get(&self, f: &Field) -> u128 {
        // Most fields sit in one container: one load, no 128-bit arithmetic.
        if let [s] = f.slices.as_slice() {
            return ((self.words[s.container as usize] >> s.lsb) & low_mask(s.width)) as u128;
        }
        let mut v: u128 = 0;
        for s in &f.slices {
            let w = (self.words[s.container as usize] >> s.lsb) & low_mask(s.width);
            v = (v << s.width) | w as u128;
        }
        v
    }

    /// Write a field (the value is truncated to the field's width).
    #[inline]
    pub fn set(&mut self, f: &Field, mut v: u128) {
        for s in f.slices.iter().rev() {
            let m = low_mask(s.width);
            let word = &mut self.words[s.container as usize];
            *word = (*word & !(m << s.lsb)) | (((v as u32) & m) << s.lsb);
            v >>= s.width;
        }
    }

    /// Write `v` (truncated to `width` bits) into bits `lsb .. lsb + width` of container `c`.
    #[inline]
    pub fn deposit(&mut self, c: u16, lsb: u8, width: u8, v: u32) {
        let m = low_mask(width);
        let word = &mut self.words[c as usize];
        *word = (*word & !(m << lsb)) | ((v & m) << lsb);
    }

    /// Bits `lsb ..` of container `c` under `mask` (`mask` = the width's low bits).
    #[inline(always)]
    pub fn slice_masked(&self, c: u16, lsb: u8, mask: u32) -> u32 {
        (self.words[c as usize] >> lsb) & mask
    }

    /// Write `v` (truncated to `mask`) into bits `lsb ..` of container `c`.
    #[inline(always)]
    pub fn deposit_masked(&mut self, c: u16, lsb: u8, mask: u32, v: u32) {
        self.write_bits(c, mask << lsb, (v & mask) << lsb);
    }

    /// Clear the bits `clear` of container `c` and set `bits` (within `clear`).
    #[inline(always)]
    pub fn write_bits(&mut self, c: u16, clear: u32, bits: u32) {
        let word = &mut self.words[c as usize];
        *word = *word & !clear | bits;
    }

    /// Raw container values (for traces and tests).
    pub fn containers(&self) -> &[u32] {
        &self.words
    }
}

/// A field resolved for the per-packet path: absent, in one container (read and written
/// with one mask), or spread over several (through its [`Field`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldRef {
    /// No field: reads 0, writes nothing.
    Absent,
    /// In one container.
    Narrow(Bits),
    /// Several containers.
    Wide(FieldId),
}

impl FieldRef {
    /// Resolve `field` of `layout`.
    pub fn new(layout: &PhvLayout, field: Option<FieldId>) -> FieldRef {
        let Some(f) = field else {
            return FieldRef::Absent;
        };
        match layout.fields[f as usize].slices.as_slice() {
            [s] => FieldRef::Narrow(Bits {
                container: s.container,
                lsb: s.lsb,
                mask: low_mask(s.width),
            }),
            _ => FieldRef::Wide(f),
        }
    }

    /// The field's value (0 when absent).
    #[inline(always)]
    pub fn get(self, layout: &PhvLayout, phv: &Phv) -> u128 {
        match self {
            FieldRef::Absent => 0,
            FieldRef::Narrow(bits) => bits.get(phv) as u128,
            FieldRef::Wide(f) => phv.get(&layout.fields[f as usize]),
        }
    }

    /// Write the field (truncated to its width; nothing when absent).
    #[inline(always)]
    pub fn set(self, layout: &PhvLayout, phv: &mut Phv, v: u128) {
        match self {
            FieldRef::Absent => {}
            FieldRef::Narrow(b) => b.set(phv, v as u32),
            FieldRef::Wide(f) => phv.set(&layout.fields[f as usize], v),
        }
    }
}

/// One container slice of a header's field, where the wire has it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WireSlice {
    /// Bits from the start of the header to the slice's first (most significant) bit.
    pub offset: u32,
    /// The container.
    pub container: u16,
    /// The slice's lowest bit in the container.
    pub lsb: u8,
    /// Its width (at most 32).
    pub width: u8,
    /// `width` low bits set (precomputed).
    pub mask: u32,
}

impl WireSlice {
    /// The slice's bits in `phv`.
    #[inline(always)]
    pub fn get(&self, phv: &Phv) -> u32 {
        (phv.words[self.container as usize] >> self.lsb) & self.mask
    }

    /// Write `v` (at most `width` bits) into the slice.
    #[inline(always)]
    pub fn put(&self, phv: &mut Phv, v: u32) {
        let word = &mut phv.words[self.container as usize];
        *word = (*word & !(self.mask << self.lsb)) | (v << self.lsb);
    }
}

/// How the parser stores one slice of a header whose first bit is byte-aligned: the
/// big-endian 8-byte word at `byte` (from the header's first byte), rotated right by
/// `rotate`, holds the slice's bits where the container has them, under `placed` (the
/// slice's mask shifted to its lowest bit). One rotate and one mask, instead of a shift
/// down, a mask and a shift up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlacedLoad {
    /// The first byte of the load, from the header's first byte.
    pub byte: u16,
    /// Right rotation of the loaded word: the load's shift less the slice's lowest bit,
    /// modulo 64 (the slice's bits do not wrap, as its shift plus its width is at most 64).
    pub rotate: u8,
    /// The container.
    pub container: u16,
    /// The slice's bits in the container.
    pub placed: u32,
}

impl PlacedLoad {
    fn new(l: &SliceLoad) -> PlacedLoad {
        let s = &l.slice;
        PlacedLoad {
            byte: l.byte,
            rotate: (l.shift as i32 - s.lsb as i32).rem_euclid(64) as u8,
            container: s.container,
            placed: s.mask << s.lsb,
        }
    }

    /// The slice's bits in `word` (the 8 bytes at `byte`), in place in the container.
    #[inline(always)]
    pub fn bits(&self, word: u64) -> u32 {
        word.rotate_right(self.rotate as u32) as u32 & self.placed
    }

    /// Store the slice from `word` into `c` (its container's value), and 0 in the rest
    /// of the container: for a slice that holds every bit any field has there.
    #[inline(always)]
    pub fn fill(&self, c: &mut u32, word: u64) {
        *c = self.bits(word);
    }

    /// Store the slice from `word` into `c` (its container's value), keeping the rest of
    /// the container.
    #[inline(always)]
    pub fn merge(&self, c: &mut u32, word: u64) {
        *c = *c & !self.placed | self.bits(word);
    }
}

/// How the parser reads one slice of a header whose first bit is byte-aligned: one
/// big-endian 8-byte load at `byte` (from the header's first byte), shifted right by
/// `shift`, masked by `mask`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SliceLoad {
    /// The first byte of the load, from the header's first byte.
    pub byte: u16,
    /// Right shift of the loaded big-endian word.
    pub shift: u8,
    /// The slice.
    pub slice: WireSlice,
}

/// A header as the wire has it: every field's container slices in wire order with their bit
/// offsets, and the validity bit. Resolved once when a gress loads, so the parser and the
/// deparser walk one flat list per header instead of fields, then slices.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeaderWire {
    /// Bits on the wire.
    pub bits: u32,
    /// Slices in wire order.
    pub slices: Vec<WireSlice>,
    /// The validity bit's slice (none only if its field has no slice: never valid). A
    /// one-bit field has one slice: one test and one store per header, no loop.
    pub valid: Option<WireSlice>,
    /// `slices` as 8-byte loads, for a header starting on a byte boundary.
    pub loads: Vec<SliceLoad>,
    /// The parser's split of `loads`: those whose slice holds every bit any field has in
    /// its container, so the slice's value shifted into place is the container's whole
    /// value (every other bit is always 0: nothing writes a container but through field
    /// slices); the parser stores it without reading the container.
    fills: Vec<PlacedLoad>,
    /// The others, each merged into its container.
    merges: Vec<PlacedLoad>,
    /// Bytes from the header's first byte to the end of its last load: a header starting
    /// on a byte boundary with this many bytes left in the packet is read with `loads`.
    /// (Private with `fills` and `merges`: [`HeaderWire::extract_aligned`] relies on it
    /// covering their loads, which [`WireLayout::new`], the only place a header is built,
    /// makes sure of.)
    load_end: usize,
    /// One past the largest container of `fills` and `merges`: a PHV with this many
    /// containers holds every one they store into. (Private for the same reason as
    /// `load_end`.)
    containers_end: usize,
}

impl HeaderWire {
    /// Bytes from the header's first byte to the end of its last 8-byte load.
    pub fn load_end(&self) -> usize {
        self.load_end
    }

    /// Store the header's slices from `bytes`, which start at its first byte (on a byte
    /// boundary), and return true; or store nothing and return false if `bytes` is too
    /// short for its 8-byte loads (fewer than [`HeaderWire::load_end`]) or `phv` has too
    /// few containers for its slices (which a PHV made for the header's layout never has).
    #[inline(always)]
    pub fn extract_aligned(&self, bytes: &[u8], phv: &mut Phv) -> bool {
        if bytes.len() < self.load_end || phv.words.len() < self.containers_end {
            return false;
        }
        let load = |l: &PlacedLoad| {
            let b = l.byte as usize;
            // SAFETY: `b + 8 <= self.load_end <= bytes.len()`: `load_end` is the largest
            // end of the header's loads (`WireLayout::new` builds both; the fields are
            // private to this module). One length check per header instead of one per
            // slice.
            let word = unsafe { bytes.get_unchecked(b..b + 8) };
            u64::from_be_bytes(word.try_into().expect("eight bytes"))
        };
        // SAFETY (of each `get_unchecked_mut` below): `l.container < self.containers_end
        // <= words.len()`: `containers_end` is one past the largest container of `fills`
        // and `merges` (`WireLayout::new` builds them together; the fields are private to
        // this module). One check per header instead of one per slice.
        let words = phv.words.as_mut_slice();
        for l in &self.fills {
            // SAFETY: see above.
            l.fill(
                unsafe { words.get_unchecked_mut(l.container as usize) },
                load(l),
            );
        }
        for l in &self.merges {
            // SAFETY: see above.
            l.merge(
                unsafe { words.get_unchecked_mut(l.container as usize) },
                load(l),
            );
        }
        true
    }

    /// Whether the header is valid in `phv`.
    #[inline]
    pub fn is_valid(&self, phv: &Phv) -> bool {
        self.valid.is_some_and(|s| s.get(phv) != 0)
    }
}

/// The container slices of `fields` as one bit string (wire order), and its length.
pub fn field_slices(layout: &PhvLayout, fields: &[FieldId]) -> (Vec<WireSlice>, u32) {
    let mut out: Vec<WireSlice> = Vec::new();
    let mut offset = 0u32;
    for &f in fields {
        for s in &layout.fields[f as usize].slices {
            // Bits that follow the previous slice in the same container, just below it,
            // extend it: one read or write instead of two.
            if let Some(p) = out.last_mut() {
                let w = p.width as u32 + s.width as u32;
                if p.container == s.container
                    && s.lsb as u32 + s.width as u32 == p.lsb as u32
                    && w <= 32
                {
                    p.lsb = s.lsb;
                    p.width = w as u8;
                    p.mask = low_mask(w as u8);
                    offset += s.width as u32;
                    continue;
                }
            }
            out.push(WireSlice {
                offset,
                container: s.container,
                lsb: s.lsb,
                width: s.width,
                mask: low_mask(s.width),
            });
            offset += s.width as u32;
        }
    }
    (out, offset)
}

/// One slice of a checksum's sources, with the left shift that puts its last bit where it
/// sits in its 16-bit word of the sources' bit string (see
/// [`crate::deparser::internet_checksum`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChecksumTerm {
    /// The slice.
    pub slice: WireSlice,
    /// `(16 - end % 16) % 16`, `end` the bit after the slice's last.
    pub shift: u8,
}

/// The terms of `slices`, one bit string from bit 0.
pub fn checksum_terms(slices: &[WireSlice]) -> Vec<ChecksumTerm> {
    slices
        .iter()
        .map(|&slice| ChecksumTerm {
            slice,
            shift: ((16 - (slice.offset + slice.width as u32) % 16) % 16) as u8,
        })
        .collect()
}

/// A deparser checksum, resolved: its sources as [`ChecksumTerm`]s and its destination.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChecksumWire {
    /// The sources.
    pub terms: Vec<ChecksumTerm>,
    /// The field that receives the checksum.
    pub dst: FieldRef,
}

/// Bits `lsb .. lsb + width` of one container (`mask` has the `width` low bits set): how the
/// decoded parser selects, table keys, gateways and actions read (and actions write) a
/// field, or bits of one, that lies in one container: one shift and one mask, instead of
/// reading the whole field through its [`Field`] and then cutting the bits out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bits {
    /// The container.
    pub container: u16,
    /// The lowest bit.
    pub lsb: u8,
    /// The bits, in low bits.
    pub mask: u32,
}

impl Bits {
    /// Bits `lo .. lo + width` of `field`, if the field lies in one container and `lo` is
    /// below its width: those of them within the field (bits above it read as 0, as the
    /// field's value has none there), and whether that is all of them.
    pub fn of_field(
        layout: &PhvLayout,
        field: FieldId,
        lo: u16,
        width: u16,
    ) -> Option<(Bits, bool)> {
        let [s] = layout.fields[field as usize].slices.as_slice() else {
            return None;
        };
        let room = (s.width as u16).checked_sub(lo).filter(|&r| r > 0)?;
        let kept = room.min(width);
        let bits = Bits {
            container: s.container,
            lsb: s.lsb + lo as u8,
            mask: low_mask(kept as u8),
        };
        Some((bits, kept == width))
    }

    /// Their value in `phv`.
    #[inline(always)]
    pub fn get(self, phv: &Phv) -> u32 {
        phv.slice_masked(self.container, self.lsb, self.mask)
    }

    /// Write `v` (truncated to them) into them in `phv`.
    #[inline(always)]
    pub fn set(self, phv: &mut Phv, v: u32) {
        phv.deposit_masked(self.container, self.lsb, self.mask, v);
    }
}

/// A parser select key resolved at load: bits of one container, or the key as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SelectRead {
    /// `width` bits of the key read as [`Bits`] (the field's bits `lo ..= hi` when the
    /// field lies in one container; any above the field read as 0).
    Narrow {
        /// The key's bits that lie in the field.
        bits: Bits,
        /// The key's width, `hi − lo + 1`.
        width: u32,
    },
    /// A lookahead, or a field in several containers: read as the program says.
    Key(SelectKey),
}

impl SelectRead {
    /// Resolve `key` of `layout`.
    pub fn new(layout: &PhvLayout, key: &SelectKey) -> SelectRead {
        if let SelectKey::Field { field, hi, lo } = *key {
            if lo <= hi {
                let width = hi - lo + 1;
                if let Some((bits, _)) = Bits::of_field(layout, field, lo, width) {
                    return SelectRead::Narrow {
                        bits,
                        width: width as u32,
                    };
                }
            }
        }
        SelectRead::Key(key.clone())
    }
}

/// What the parser and deparser of a gress walk, resolved once when it loads: every
/// header's slices ([`HeaderWire`], indexed like [`PhvLayout::headers`]), every parser
/// state's select keys and every deparser checksum ([`ChecksumWire`], indexed like
/// [`DeparserProgram::checksums`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WireLayout {
    /// Per header.
    pub headers: Vec<HeaderWire>,
    /// Per parser state, its select's keys (none for a direct transition).
    pub selects: Vec<Vec<SelectRead>>,
    /// Per checksum.
    pub checksums: Vec<ChecksumWire>,
}

impl WireLayout {
    /// Resolve `layout`'s headers, `parser`'s select keys and `deparser`'s checksums.
    pub fn new(
        layout: &PhvLayout,
        parser: &ParserProgram,
        deparser: &DeparserProgram,
    ) -> WireLayout {
        // Per container, the bits some field has in it.
        let mut claimed: Vec<u32> = Vec::new();
        for s in layout.fields.iter().flat_map(|f| &f.slices) {
            let c = s.container as usize;
            if claimed.len() <= c {
                claimed.resize(c + 1, 0);
            }
            claimed[c] |= low_mask(s.width) << s.lsb;
        }
        WireLayout {
            selects: parser
                .states
                .iter()
                .map(|st| match &st.transition {
                    Transition::Direct(_) => Vec::new(),
                    Transition::Select { keys, .. } => {
                        keys.iter().map(|k| SelectRead::new(layout, k)).collect()
                    }
                })
                .collect(),
            headers: layout
                .headers
                .iter()
                .map(|h| {
                    let (slices, bits) = field_slices(layout, &h.fields);
                    // A slice is at most 32 bits, so with its offset in the first byte
                    // it fits one 8-byte load.
                    let loads: Vec<SliceLoad> = slices
                        .iter()
                        .map(|&s| SliceLoad {
                            byte: (s.offset / 8) as u16,
                            shift: (64 - s.offset % 8 - s.width as u32) as u8,
                            slice: s,
                        })
                        .collect();
                    let load_end = loads.iter().map(|l| l.byte as usize + 8).max().unwrap_or(0);
                    let (fills, merges): (Vec<PlacedLoad>, Vec<PlacedLoad>) = loads
                        .iter()
                        .map(PlacedLoad::new)
                        .partition(|l| claimed[l.container as usize] & !l.placed == 0);
                    let containers_end = loads
                        .iter()
                        .map(|l| l.slice.container as usize + 1)
                        .max()
                        .unwrap_or(0);
                    HeaderWire {
                        bits,
                        slices,
                        valid: match field_slices(layout, &[h.valid]).0[..] {
                            [s] => Some(s),
                            _ => None,
                        },
                        loads,
                        fills,
                        merges,
                        load_end,
                        containers_end,
                    }
                })
                .collect(),
            checksums: deparser
                .checksums
                .iter()
                .map(|c| ChecksumWire {
                    terms: checksum_terms(&field_slices(layout, &c.sources).0),
                    dst: FieldRef::new(layout, Some(c.dst)),
                })
                .collect(),
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::program::PhvSlice;

    /// A field of `width` bits in `slices` (container, lsb, width), for tests.
    pub(crate) fn field(width: u16, slices: &[(u16, u8, u8)]) -> Field {
        Field {
            name: "f".into(),
            width,
            slices: slices
                .iter()
                .map(|&(container, lsb, width)| PhvSlice {
                    container,
                    lsb,
                    width,
                })
                .collect(),
        }
    }

    /// The wire layout of `fields` with one header of `header` (field numbers), whose
    /// validity bit is field `valid`.
    fn one_header(fields: Vec<Field>, header: Vec<FieldId>, valid: FieldId) -> WireLayout {
        let layout = PhvLayout {
            fields,
            headers: vec![crate::program::Header {
                name: "h".into(),
                fields: header,
                valid,
            }],
            intrinsics: Vec::new(),
        };
        WireLayout::new(
            &layout,
            &ParserProgram::default(),
            &DeparserProgram::default(),
        )
    }

    /// A select key resolved to one container reads what the field's bits `lo ..= hi` are,
    /// also for a key reaching above the field; a field in two containers is not resolved.
    #[test]
    fn a_narrow_select_key_reads_the_fields_bits() {
        let layout = PhvLayout {
            fields: vec![
                field(12, &[(0, 3, 12)]),
                field(48, &[(2, 0, 32), (1, 0, 16)]),
                // The bits around field 0 in its container, set so a wrong mask shows.
                field(3, &[(0, 0, 3)]),
                field(17, &[(0, 15, 17)]),
            ],
            headers: Vec::new(),
            intrinsics: Vec::new(),
        };
        let mut phv = Phv::new(3);
        phv.set(&layout.fields[0], 0xabc);
        phv.set(&layout.fields[2], 0x7);
        phv.set(&layout.fields[3], 0x1ffff);
        for (hi, lo) in [(11, 0), (7, 4), (11, 8), (15, 8), (3, 3), (40, 2)] {
            let key = SelectKey::Field { field: 0, hi, lo };
            let SelectRead::Narrow { bits, width } = SelectRead::new(&layout, &key) else {
                panic!("one container");
            };
            let w = (hi - lo + 1) as u32;
            assert_eq!(width, w);
            assert_eq!(
                bits.get(&phv) as u128,
                (phv.get(&layout.fields[0]) >> lo) & mask(w),
                "bits {lo}..={hi}"
            );
        }
        let wide = SelectKey::Field {
            field: 1,
            hi: 15,
            lo: 0,
        };
        assert_eq!(SelectRead::new(&layout, &wide), SelectRead::Key(wide));
    }

    /// A slice holding every bit fields have in its container is filled (stored whole);
    /// slices sharing a container with other fields' bits are merged; filling a container
    /// whose other bits are 0 is putting.
    #[test]
    fn the_parser_fills_containers_no_other_field_shares() {
        let wire = one_header(
            vec![
                // Container 0 to itself (bits 0..16; the rest unclaimed).
                field(16, &[(0, 0, 16)]),
                // Container 1 shared with the validity bit.
                field(8, &[(1, 8, 8)]),
                field(1, &[(1, 0, 1)]),
                // Container 2 filled by a field's bits 4..12 of its 8-bit container.
                field(8, &[(2, 4, 8)]),
            ],
            vec![0, 1, 3],
            2,
        );
        let h = &wire.headers[0];
        let containers = |ls: &[PlacedLoad]| ls.iter().map(|l| l.container).collect::<Vec<_>>();
        assert_eq!(containers(&h.fills), vec![0, 2]);
        assert_eq!(containers(&h.merges), vec![1]);
        assert_eq!(h.loads.len(), 3);
        // A slice stored from its load's word is the slice's value put in its container:
        // into a clear PHV for a fill, and keeping the other bits for a merge.
        for word in [0xa5c3_0f96_5a3c_f069u64, u64::MAX, 1 << 63] {
            for l in &h.loads {
                let placed = PlacedLoad::new(l);
                let v = (word >> l.shift) as u32 & l.slice.mask;
                let (mut put, mut filled) = (Phv::new(3), Phv::new(3));
                l.slice.put(&mut put, v);
                placed.fill(&mut filled.words[placed.container as usize], word);
                assert_eq!(put.containers(), filled.containers());
                let (mut put, mut merged) = (Phv::new(3), Phv::new(3));
                for c in 0..3 {
                    put.words[c] = 0x5a5a_5a5a;
                    merged.words[c] = 0x5a5a_5a5a;
                }
                l.slice.put(&mut put, v);
                placed.merge(&mut merged.words[placed.container as usize], word);
                assert_eq!(put.containers(), merged.containers());
            }
        }
    }

    /// The aligned extract stores nothing and says so into a PHV without every container
    /// the header's slices store into (its unchecked stores rely on that check), and
    /// stores every slice into one that has them.
    #[test]
    fn the_aligned_extract_checks_the_phv_holds_its_containers() {
        let wire = one_header(
            vec![
                field(16, &[(0, 0, 16)]),
                field(8, &[(3, 0, 8)]),
                field(1, &[(1, 0, 1)]),
            ],
            vec![0, 1],
            2,
        );
        let h = &wire.headers[0];
        let bytes = [0xab, 0xcd, 0xef, 0, 0, 0, 0, 0, 0, 0];
        let mut short = Phv::new(3);
        assert!(!h.extract_aligned(&bytes, &mut short));
        assert_eq!(short.containers(), [0, 0, 0]);
        let mut phv = Phv::new(4);
        assert!(h.extract_aligned(&bytes, &mut phv));
        assert_eq!(phv.containers(), [0xabcd, 0, 0, 0xef]);
    }

    #[test]
    fn a_48_bit_field_spans_two_containers() {
        let mut phv = Phv::new(4);
        let mac = field(48, &[(3, 0, 32), (1, 0, 16)]);
        phv.set(&mac, 0x0011_2233_4455);
        assert_eq!(phv.containers()[3], 0x0011_2233);
        assert_eq!(phv.containers()[1], 0x4455);
        assert_eq!(phv.get(&mac), 0x0011_2233_4455);
    }

    #[test]
    fn fields_sharing_a_container_do_not_disturb_each_other() {
        let mut phv = Phv::new(1);
        let version = field(4, &[(0, 4, 4)]);
        let ihl = field(4, &[(0, 0, 4)]);
        phv.set(&version, 4);
        phv.set(&ihl, 5);
        phv.set(&version, 0x1f); // truncated to 4 bits
        assert_eq!(phv.get(&version), 0xf);
        assert_eq!(phv.get(&ihl), 5);
        assert_eq!(phv.containers()[0], 0xf5);
    }
}
