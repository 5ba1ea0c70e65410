//! Hash units: bit-exact CRCs (and the identity function) over PHV fields.
//!
//! Why bit-exact: programs use hashes to pick register cells, ECMP members and sketch rows,
//! and a teacher or a test must be able to predict the index on paper or with any standard
//! CRC tool. So a hash unit computes a catalogue CRC in Williams' parameter model (width,
//! poly, init, refin, refout, xorout), through the `crc` crate, and is tested against the
//! published check values (the CRC of the ASCII bytes `123456789`).
//!
//! The input is the unit's fields concatenated most significant first, each at its declared
//! width, and zero-padded at the end to a whole number of bytes; the CRC runs over those
//! bytes. The output is the low `width` bits of the CRC. [`HashAlgorithm::Identity`] returns
//! the low `width` bits of the concatenation itself (before padding).
//!
//! `crc::Crc` wants a `&'static Algorithm`; parameter sets come from programs at load time,
//! so each distinct set is interned once per process (a bounded, deliberate leak: a program
//! has a handful of hash units and a process loads few distinct ones).

use crate::phv::{mask, Phv};
use crate::program::{FieldId, HashAlgorithm, HashUnit, PhvLayout};
use crc::{Algorithm, Crc};
use smallvec::SmallVec;
use std::sync::Mutex;

/// CRC-16/ARC (the compiler's `CRC16`): poly 0x8005, reflected, init 0. Check 0xBB3D.
pub const CRC16: HashAlgorithm = HashAlgorithm::Crc {
    width: 16,
    poly: 0x8005,
    init: 0,
    refin: true,
    refout: true,
    xorout: 0,
};

/// CRC-32/ISO-HDLC (the compiler's `CRC32`, Ethernet's FCS): check 0xCBF43926.
pub const CRC32: HashAlgorithm = HashAlgorithm::Crc {
    width: 32,
    poly: 0x04c1_1db7,
    init: 0xffff_ffff,
    refin: true,
    refout: true,
    xorout: 0xffff_ffff,
};

/// CRC-32C (Castagnoli, iSCSI): check 0xE3069283.
pub const CRC32C: HashAlgorithm = HashAlgorithm::Crc {
    width: 32,
    poly: 0x1edc_6f41,
    init: 0xffff_ffff,
    refin: true,
    refout: true,
    xorout: 0xffff_ffff,
};

/// CRC-16/IBM-3740, also called CRC-16/CCITT-FALSE: check 0x29B1.
pub const CRC16_CCITT_FALSE: HashAlgorithm = HashAlgorithm::Crc {
    width: 16,
    poly: 0x1021,
    init: 0xffff,
    refin: false,
    refout: false,
    xorout: 0,
};

/// CRC-8/SMBUS: check 0xF4.
pub const CRC8_SMBUS: HashAlgorithm = HashAlgorithm::Crc {
    width: 8,
    poly: 0x07,
    init: 0,
    refin: false,
    refout: false,
    xorout: 0,
};

type Params = (u8, u64, u64, bool, bool, u64);

static INTERNED: Mutex<Vec<(Params, &'static Algorithm<u64>)>> = Mutex::new(Vec::new());

fn interned(p: Params) -> &'static Algorithm<u64> {
    let mut list = INTERNED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(&(_, a)) = list.iter().find(|(q, _)| *q == p) {
        return a;
    }
    let (width, poly, init, refin, refout, xorout) = p;
    // `check` and `residue` are catalogue metadata the crate does not use to compute.
    let a: &'static Algorithm<u64> = Box::leak(Box::new(Algorithm {
        width,
        poly,
        init,
        refin,
        refout,
        xorout,
        check: 0,
        residue: 0,
    }));
    list.push((p, a));
    a
}

/// A hash function ready to run (CRC tables built once, at load).
pub enum HashEngine {
    /// The input bits themselves.
    Identity,
    /// A CRC of up to 64 bits.
    Crc(Box<Crc<u64>>),
}

impl HashEngine {
    /// Build the engine for an algorithm. `None` if its parameters are out of range (the
    /// verifier refuses such programs).
    pub fn new(a: &HashAlgorithm) -> Option<HashEngine> {
        match *a {
            HashAlgorithm::Identity => Some(HashEngine::Identity),
            HashAlgorithm::Crc {
                width,
                poly,
                init,
                refin,
                refout,
                xorout,
            } => {
                if !(1..=64).contains(&width) {
                    return None;
                }
                let m = mask(width as u32) as u64;
                if poly & !m != 0 || init & !m != 0 || xorout & !m != 0 {
                    return None;
                }
                let alg = interned((width, poly, init, refin, refout, xorout));
                Some(HashEngine::Crc(Box::new(Crc::<u64>::new(alg))))
            }
        }
    }

    /// The function of a byte string (for CRCs; the identity returns the bytes as a
    /// big-endian number, low 128 bits).
    pub fn of_bytes(&self, bytes: &[u8]) -> u128 {
        match self {
            HashEngine::Identity => bytes.iter().fold(0u128, |a, &b| (a << 8) | b as u128),
            HashEngine::Crc(c) => c.checksum(bytes) as u128,
        }
    }

    /// The unit's output for the PHV: the function of its fields, low `width` bits.
    pub fn compute(&self, unit: &HashUnit, layout: &PhvLayout, phv: &Phv) -> u128 {
        let v = match self {
            HashEngine::Identity => {
                let mut acc: u128 = 0;
                for &f in &unit.fields {
                    let field = &layout.fields[f as usize];
                    let w = field.width as u32;
                    acc = if w >= 128 { 0 } else { acc << w } | phv.get(field);
                }
                acc
            }
            HashEngine::Crc(c) => {
                let mut bytes = [0u8; MAX_INPUT_BYTES];
                let len = pack_fields(&unit.fields, layout, phv, &mut bytes);
                c.checksum(&bytes[..len]) as u128
            }
        };
        v & mask(unit.width as u32)
    }
}

/// The most input a hash unit takes, in bytes (the verifier refuses more).
pub const MAX_INPUT_BYTES: usize = (crate::program::MAX_HASH_INPUT_BITS / 8) as usize;

/// [`field_bytes`] written into `out`, a whole byte at a time: a field of whole bytes that
/// starts on a byte is copied as it is; any other goes into a 64-bit accumulator in chunks
/// of at most 56 bits (fewer than 8 bits wait between chunks), and every full byte leaves
/// it. Returns the bytes written. The fields' widths add up to at
/// most 512 bits (the verifier's limit for a hash unit; more would index past `out`).
/// `field_bytes` is the reference, compared by a property test.
pub fn pack_fields(
    fields: &[FieldId],
    layout: &PhvLayout,
    phv: &Phv,
    out: &mut [u8; MAX_INPUT_BYTES],
) -> usize {
    let mut acc = 0u64; // pending bits, right-aligned
    let mut pending = 0u32; // how many (< 8 between chunks)
    let mut len = 0;
    for &f in fields {
        let field = &layout.fields[f as usize];
        let value = phv.get(field);
        let mut left = field.width as u32;
        // Whole bytes on a byte boundary (addresses, ports, protocols): copied at once.
        if pending == 0 && left % 8 == 0 {
            let n = (left / 8) as usize;
            out[len..len + n].copy_from_slice(&value.to_be_bytes()[16 - n..]);
            len += n;
            continue;
        }
        while left > 0 {
            let take = left.min(56);
            left -= take;
            acc = (acc << take) | ((value >> left) as u64 & ((1u64 << take) - 1));
            pending += take;
            while pending >= 8 {
                pending -= 8;
                out[len] = (acc >> pending) as u8;
                len += 1;
            }
            acc &= (1u64 << pending) - 1;
        }
    }
    if pending > 0 {
        out[len] = (acc << (8 - pending)) as u8;
        len += 1;
    }
    len
}

/// The fields' bits concatenated most significant first, zero-padded at the end to whole
/// bytes, a bit run at a time: the reference for [`pack_fields`].
pub fn field_bytes(fields: &[FieldId], layout: &PhvLayout, phv: &Phv) -> SmallVec<[u8; 64]> {
    let mut out: SmallVec<[u8; 64]> = SmallVec::new();
    let mut used = 0u32; // bits used in the last byte
    for &f in fields {
        let field = &layout.fields[f as usize];
        let value = phv.get(field);
        let mut left = field.width as u32;
        while left > 0 {
            if used == 0 {
                out.push(0);
            }
            let room = 8 - used;
            let take = room.min(left);
            let bits = ((value >> (left - take)) as u32 & ((1u32 << take) - 1)) as u8;
            *out.last_mut().expect("pushed above") |= bits << (room - take);
            used = (used + take) % 8;
            left -= take;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::{Field, PhvSlice};

    const CHECK: &[u8] = b"123456789";

    fn check(a: HashAlgorithm) -> u128 {
        HashEngine::new(&a).unwrap().of_bytes(CHECK)
    }

    #[test]
    fn crcs_match_the_published_check_values() {
        // Check values from the CRC catalogue (reveng), for the bytes "123456789".
        assert_eq!(check(CRC16), 0xbb3d); // CRC-16/ARC
        assert_eq!(check(CRC32), 0xcbf4_3926); // CRC-32/ISO-HDLC
        assert_eq!(check(CRC32C), 0xe306_9283); // CRC-32/ISCSI
        assert_eq!(check(CRC16_CCITT_FALSE), 0x29b1); // CRC-16/IBM-3740
        assert_eq!(check(CRC8_SMBUS), 0xf4); // CRC-8/SMBUS
        let crc16_xmodem = HashAlgorithm::Crc {
            width: 16,
            poly: 0x1021,
            init: 0,
            refin: false,
            refout: false,
            xorout: 0,
        };
        assert_eq!(check(crc16_xmodem), 0x31c3);
        let crc32_bzip2 = HashAlgorithm::Crc {
            width: 32,
            poly: 0x04c1_1db7,
            init: 0xffff_ffff,
            refin: false,
            refout: false,
            xorout: 0xffff_ffff,
        };
        assert_eq!(check(crc32_bzip2), 0xfc89_1918);
        let crc64_xz = HashAlgorithm::Crc {
            width: 64,
            poly: 0x42f0_e1eb_a9ea_3693,
            init: u64::MAX,
            refin: true,
            refout: true,
            xorout: u64::MAX,
        };
        assert_eq!(check(crc64_xz), 0x995d_c9bb_df19_39fa);
    }

    #[test]
    fn our_parameters_agree_with_the_crc_catalogue() {
        let pairs: [(HashAlgorithm, &Algorithm<u32>); 2] =
            [(CRC32, &crc::CRC_32_ISO_HDLC), (CRC32C, &crc::CRC_32_ISCSI)];
        for (ours, cat) in pairs {
            let want = Crc::<u32>::new(cat).checksum(b"switch") as u128;
            assert_eq!(HashEngine::new(&ours).unwrap().of_bytes(b"switch"), want);
        }
        let want = Crc::<u16>::new(&crc::CRC_16_ARC).checksum(b"switch") as u128;
        assert_eq!(HashEngine::new(&CRC16).unwrap().of_bytes(b"switch"), want);
    }

    #[test]
    fn out_of_range_parameters_are_refused() {
        let bad = HashAlgorithm::Crc {
            width: 8,
            poly: 0x107,
            init: 0,
            refin: false,
            refout: false,
            xorout: 0,
        };
        assert!(HashEngine::new(&bad).is_none());
    }

    fn field(name: &str, width: u16, container: u16) -> Field {
        Field {
            name: name.into(),
            width,
            slices: vec![PhvSlice {
                container,
                lsb: 0,
                width: width as u8,
            }],
        }
    }

    proptest::proptest! {
        /// The byte-at-a-time packing equals the bit-run reference for any widths (1 to 128
        /// bits, up to 512 in all; whole bytes half the time, for the copied path) and values.
        #[test]
        fn packing_fields_a_byte_at_a_time_matches_the_bit_runs(
            spec in proptest::collection::vec(
                (
                    proptest::prop_oneof![1u16..=128, proptest::strategy::Strategy::prop_map(1u16..=16, |b| 8 * b)],
                    proptest::num::u128::ANY,
                ),
                1..8,
            )
        ) {
            let mut total = 0;
            let spec: Vec<_> = spec
                .into_iter()
                .take_while(|(w, _)| { total += *w as u32; total <= 512 })
                .collect();
            let fields: Vec<Field> = spec
                .iter()
                .enumerate()
                .map(|(i, &(w, _))| wide_field(&format!("f{i}"), w, 4 * i as u16))
                .collect();
            let layout = PhvLayout { fields, ..PhvLayout::default() };
            let mut phv = Phv::new(4 * spec.len());
            for (f, &(_, v)) in layout.fields.iter().zip(&spec) {
                phv.set(f, v);
            }
            let ids: Vec<FieldId> = (0..spec.len() as FieldId).collect();
            let mut out = [0u8; MAX_INPUT_BYTES];
            let len = pack_fields(&ids, &layout, &phv, &mut out);
            let reference = field_bytes(&ids, &layout, &phv);
            proptest::prop_assert_eq!(&out[..len], reference.as_slice());
        }
    }

    /// A field of `width` bits in four 32-bit containers from `first`, low bits first.
    fn wide_field(name: &str, width: u16, first: u16) -> Field {
        Field {
            name: name.into(),
            width,
            slices: (0..width.div_ceil(32))
                .map(|k| PhvSlice {
                    container: first + k,
                    lsb: 0,
                    width: (width - 32 * k).min(32) as u8,
                })
                .collect(),
        }
    }

    #[test]
    fn fields_are_concatenated_msb_first_and_padded_to_bytes() {
        // A 4-bit field 0x3 then a 16-bit field 0x1234: bits 0011 0001 0010 0011 0100,
        // padded with four zero bits: 0x31 0x23 0x40.
        let layout = PhvLayout {
            fields: vec![field("a", 4, 0), field("b", 16, 1)],
            ..PhvLayout::default()
        };
        let mut phv = Phv::new(2);
        phv.set(&layout.fields[0], 0x3);
        phv.set(&layout.fields[1], 0x1234);
        assert_eq!(
            field_bytes(&[0, 1], &layout, &phv).as_slice(),
            &[0x31, 0x23, 0x40]
        );
        let unit = |algorithm, width| HashUnit {
            name: "h".into(),
            stage: 0,
            algorithm,
            fields: vec![0, 1],
            width,
        };
        let id = HashEngine::new(&HashAlgorithm::Identity).unwrap();
        assert_eq!(
            id.compute(&unit(HashAlgorithm::Identity, 12), &layout, &phv),
            0x234
        );
        let crc = HashEngine::new(&CRC16).unwrap();
        let full = crc.of_bytes(&[0x31, 0x23, 0x40]);
        assert_eq!(crc.compute(&unit(CRC16, 16), &layout, &phv), full);
        assert_eq!(crc.compute(&unit(CRC16, 10), &layout, &phv), full & 0x3ff);
    }
}
