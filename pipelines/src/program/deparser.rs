//! The deparser as a program: headers to emit and checksums to recompute.

use super::layout::{FieldId, HeaderId};
use serde::{Deserialize, Serialize};

/// The deparser: headers emitted in order (valid ones only), then the payload.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeparserProgram {
    /// Headers in emit order.
    pub emit: Vec<HeaderId>,
    /// Headers (when valid) that start each mirrored copy, before the deparsed packet:
    /// TNA's mirror header, how a program hands metadata to the copy's egress or to the
    /// ingress it is recirculated to. At most [`crate::deparser::MIRROR_HEADER_MAX_BYTES`].
    #[serde(default)]
    pub mirror_emit: Vec<HeaderId>,
    /// Checksums recomputed before emitting.
    pub checksums: Vec<ChecksumUpdate>,
}

/// An Internet (ones'-complement, RFC 1071) checksum written into a field from other fields.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChecksumUpdate {
    /// The 16-bit field that receives the checksum.
    pub dst: FieldId,
    /// Fields summed, in order, as one big-endian bit string (zero-padded to 16 bits).
    pub sources: Vec<FieldId>,
    /// Computed only when this header is valid.
    pub when_valid: HeaderId,
}
