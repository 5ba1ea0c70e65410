//! The PHV at run time: one integer per container.
//!
//! Every container is held in a `u32` whatever its width (8, 16 or 32 bits); a field is read
//! and written through its slices, which never cross a container's width (the verifier checks
//! that), so narrower containers never hold stray high bits.

use crate::program::Field;

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
        let mut v: u128 = 0;
        for s in &f.slices {
            let w = self.words[s.container as usize] >> s.lsb;
            v = (v << s.width) | (w as u128 & mask(s.width as u32));
        }
        v
    }

    /// Write a field (the value is truncated to the field's width).
    #[inline]
    pub fn set(&mut self, f: &Field, mut v: u128) {
        for s in f.slices.iter().rev() {
            let m = mask(s.width as u32) as u32;
            let word = &mut self.words[s.container as usize];
            *word = (*word & !(m << s.lsb)) | (((v as u32) & m) << s.lsb);
            v >>= s.width;
        }
    }

    /// Raw container values (for traces and tests).
    pub fn containers(&self) -> &[u32] {
        &self.words
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::PhvSlice;

    fn field(width: u16, slices: &[(u16, u8, u8)]) -> Field {
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
