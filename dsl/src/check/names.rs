//! What a name inside a block denotes: a field or header of the gress (by the identity
//! every block shares, [`FieldKey`]), a struct, a whole intrinsic parameter, the packet, an
//! action parameter or a constant.

use pipelines::program::Intrinsic;

/// Identity of a PHV field or header within a gress: the type of the block parameter it hangs
/// off (not the parameter's name, which each block may choose freely) and the member path.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FieldKey {
    /// Root type name.
    pub root: String,
    /// Member path below the root.
    pub path: Vec<String>,
}

impl FieldKey {
    /// The key of a member below this one.
    pub fn child(&self, name: &str) -> FieldKey {
        let mut path = self.path.clone();
        path.push(name.to_string());
        FieldKey {
            root: self.root.clone(),
            path,
        }
    }
}

/// A header instance.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeaderRef {
    /// Identity.
    pub key: FieldKey,
    /// Display name (`hdr.ipv4`).
    pub name: String,
    /// Header type name.
    pub ty: String,
}

impl HeaderRef {
    /// The key of the header's validity bit.
    pub fn valid_key(&self) -> FieldKey {
        self.key.child("$valid")
    }
}

/// A scalar field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldRef {
    /// Identity.
    pub key: FieldKey,
    /// Display name (`hdr.ipv4.ttl`).
    pub name: String,
    /// Width in bits.
    pub width: u16,
    /// The chip signal, for intrinsic metadata.
    pub intrinsic: Option<Intrinsic>,
    /// The header holding the field, if any (the whole header is then allocated).
    pub header: Option<HeaderRef>,
}

/// What a dotted name denotes.
#[derive(Clone, Debug)]
pub enum Place {
    /// A scalar field.
    Field(FieldRef),
    /// A header instance.
    Header(HeaderRef),
    /// A user struct value.
    Struct {
        /// Identity.
        key: FieldKey,
        /// Display name.
        name: String,
        /// Struct type.
        ty: String,
    },
    /// A whole intrinsic metadata parameter.
    Intrinsic(String),
    /// A `packet_in`/`packet_out` parameter.
    Packet,
}

/// An operand: a field, a constant or an action parameter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    /// A PHV field.
    Field(Box<FieldRef>),
    /// A constant.
    Const(u128),
    /// Action parameter `index`.
    Param(u8),
    /// Bits `hi ..= lo` of a field.
    Slice(Box<FieldRef>, u16, u16),
}
