//! Action data decoded when an entry is installed.
//!
//! Most of what an action does is `Set`s of PHV bits from its action data or from
//! constants (a next hop's port and MACs, a VRF, a class). On the chip the action data is
//! read with the entry and driven straight into the containers. Here the same: when an
//! entry is installed (and once for a table's default action), each such `Set` of its
//! action is evaluated with the entry's arguments into the bits it leaves in its container,
//! merged per container ([`ContainerWrites`]); a packet that hits the entry writes each
//! container once, with one mask and one OR, instead of decoding every `Set` and cutting
//! its bits out of a 128-bit argument.
//!
//! [`DataSets`] is an action's template, made by [`crate::mau::ActionPlan`], which runs the
//! action's other operations first and these writes last; it takes out of its operations
//! only `Set`s whose bits no other operation writes, so the order does not matter.

use crate::phv::Phv;

/// Where one `Set` from action data or a constant writes: the bits `mask << lsb` of a
/// container.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DataSet {
    /// The container.
    pub container: u16,
    /// The lowest bit written.
    pub lsb: u8,
    /// The written bits, in low bits.
    pub mask: u32,
    /// What is written.
    pub src: DataSrc,
}

/// The value of a [`DataSet`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DataSrc {
    /// Bits `shift ..` of argument `index` of the entry's action data.
    Param {
        /// The argument.
        index: u8,
        /// Its lowest bit written.
        shift: u8,
    },
    /// A constant.
    Imm(u32),
}

/// An action's `Set`s from action data and constants, in the action's order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DataSets(pub Vec<DataSet>);

impl DataSets {
    /// The container writes of these `Set`s with action data `args`. (An argument the call
    /// lacks reads 0: the verifier and [`crate::table::TableState`] check the counts.)
    pub fn decode(&self, args: &[u128]) -> ContainerWrites {
        let mut writes: Vec<ContainerWrite> = Vec::new();
        for s in &self.0 {
            let v = match s.src {
                DataSrc::Param { index, shift } => {
                    args.get(index as usize).map_or(0, |a| (a >> shift) as u32)
                }
                DataSrc::Imm(v) => v,
            };
            let (clear, bits) = (s.mask << s.lsb, (v & s.mask) << s.lsb);
            // A later `Set` of the same bits wins, as it would run later.
            match writes.iter_mut().find(|w| w.container == s.container) {
                Some(w) => {
                    w.clear |= clear;
                    w.bits = w.bits & !clear | bits;
                }
                None => writes.push(ContainerWrite {
                    container: s.container,
                    clear,
                    bits,
                }),
            }
        }
        ContainerWrites(writes.into_boxed_slice())
    }
}

/// What installing an entry needs to know of an action: the arguments it takes, and its
/// [`DataSets`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ActionShape {
    /// Its name and parameters (names and widths), to check an entry's arguments against.
    pub name: String,
    /// Its parameters.
    pub params: Vec<crate::program::ActionParam>,
    /// Its `Set`s from action data and constants.
    pub sets: DataSets,
}

/// One container's share of an entry's action data: the bits to clear and what to set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct ContainerWrite {
    container: u16,
    clear: u32,
    bits: u32,
}

/// An entry's action data as the container writes its action's [`DataSets`] make.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ContainerWrites(Box<[ContainerWrite]>);

impl ContainerWrites {
    /// Write them into `phv`.
    #[inline]
    pub fn apply(&self, phv: &mut Phv) {
        for w in self.0.iter() {
            phv.write_bits(w.container, w.clear, w.bits);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes decoded from action data are the `Set`s one after another, the later winning
    /// where two write the same bits.
    #[test]
    fn writes_are_the_sets_in_order() {
        let set = |container, lsb, mask, src| DataSet {
            container,
            lsb,
            mask,
            src,
        };
        let sets = DataSets(vec![
            set(
                0,
                0,
                0xffff_ffff,
                DataSrc::Param {
                    index: 1,
                    shift: 16,
                },
            ),
            set(1, 4, 0xffff, DataSrc::Param { index: 1, shift: 0 }),
            set(1, 0, 0x1, DataSrc::Imm(1)),
            set(2, 3, 0x1ff, DataSrc::Param { index: 0, shift: 0 }),
            set(2, 5, 0x3, DataSrc::Imm(0)),
        ]);
        let args = [0x3ff, 0xaabb_ccdd_eeff_0011];
        let mut decoded = Phv::new(3);
        let mut one_by_one = Phv::new(3);
        for c in 0..3 {
            decoded.deposit(c, 0, 32, 0x5a5a_5a5a);
            one_by_one.deposit(c, 0, 32, 0x5a5a_5a5a);
        }
        sets.decode(&args).apply(&mut decoded);
        for s in &sets.0 {
            let v = match s.src {
                DataSrc::Param { index, shift } => (args[index as usize] >> shift) as u32,
                DataSrc::Imm(v) => v,
            };
            one_by_one.deposit_masked(s.container, s.lsb, s.mask, v);
        }
        assert_eq!(decoded.containers(), one_by_one.containers());
        assert_eq!(sets.decode(&args).0.len(), 3);
    }
}
