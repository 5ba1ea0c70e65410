//! PHV allocation: give every field of a gress container slices.
//!
//! The scheme is simple and honest rather than optimal:
//! - a field of 8, 16 or 32 bits gets a container of its own width; a wider field is cut
//!   into 32-bit pieces from its most significant end, and a remainder gets the smallest
//!   container that holds it (48 = 32 + 16; 9 bits use a 16-bit container);
//! - consecutive sub-byte fields of one header that together fill whole bytes share a
//!   container (`version`+`ihl` share an 8-bit container, `flags`+`frag_offset` a 16-bit one),
//!   laid out in wire order from the container's top;
//! - 1-bit fields that stand alone (validity bits, flags) are packed eight to an 8-bit
//!   container.
//!
//! If a width class runs out, a unit moves up to the next wider class; only when no wider
//! container is left does allocation fail, naming the class that overflowed.

use pipelines::program::{FieldId, PhvLayout, PhvSlice};
use pipelines::spec::PhvSpec;
use serde::Serialize;

use crate::ast::Span;
use crate::error::{CompileError, ErrorKind, Result};

/// Containers used, by width.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PhvUsage {
    /// 8-bit containers used.
    pub b8: u16,
    /// 16-bit containers used.
    pub b16: u16,
    /// 32-bit containers used.
    pub b32: u16,
}

/// Width classes in container-id order.
const CLASSES: [u8; 3] = [8, 16, 32];

/// A group of fields that lives in one container, in wire order (first = most significant).
struct Unit {
    fields: Vec<FieldId>,
    bits: u16,
}

/// Assign slices to every field of `layout`. `span` is where to report running out.
pub fn allocate(
    layout: &mut PhvLayout,
    spec: &PhvSpec,
    gress: &str,
    span: Span,
) -> Result<PhvUsage> {
    let units = units(layout);
    let avail = [spec.b8, spec.b16, spec.b32];
    let first_id = [0, spec.b8, spec.b8 + spec.b16];
    let mut used = [0u16; 3];
    let mut demand = [0u32; 3];
    let mut short = false;
    for u in units {
        let pieces = pieces(u.bits);
        // A unit that is one field wider than 32 bits is cut; a shared unit is at most 32.
        let mut remaining = u.bits;
        for piece in pieces {
            let want = CLASSES.iter().position(|&c| c as u16 >= piece).unwrap_or(2);
            demand[want] += 1;
            let Some(class) = (want..3).find(|&c| used[c] < avail[c]) else {
                short = true;
                continue;
            };
            let container = first_id[class] + used[class];
            used[class] += 1;
            // Fields of the unit that overlap this piece's bit range.
            let piece_hi = remaining; // exclusive, counted from the unit's lsb
            let piece_lo = remaining - piece;
            let mut top = u.bits;
            for &f in &u.fields {
                let w = layout.fields[f as usize].width;
                let (f_hi, f_lo) = (top, top - w);
                top -= w;
                let (hi, lo) = (f_hi.min(piece_hi), f_lo.max(piece_lo));
                if hi > lo {
                    layout.fields[f as usize].slices.push(PhvSlice {
                        container,
                        lsb: (lo - piece_lo) as u8,
                        width: (hi - lo) as u8,
                    });
                }
            }
            remaining -= piece;
        }
    }
    if short {
        let total = [avail[0] as u32, avail[1] as u32, avail[2] as u32];
        let c = (0..3).rev().find(|&c| demand[c] > total[c]).unwrap_or(2);
        return Err(CompileError::new(
            ErrorKind::Resource,
            span,
            format!(
                "PHV ({gress}): needs {} {}-bit containers, the chip has {} (and no wider \
                 container is free)",
                demand[c], CLASSES[c], total[c]
            ),
        ));
    }
    Ok(PhvUsage {
        b8: used[0],
        b16: used[1],
        b32: used[2],
    })
}

/// Piece widths of a unit, most significant first: 32-bit pieces, then the remainder.
fn pieces(bits: u16) -> Vec<u16> {
    let mut out = Vec::new();
    let mut rem = bits;
    while rem > 32 {
        out.push(32);
        rem -= 32;
    }
    out.push(rem);
    out
}

/// Group fields into allocation units.
fn units(layout: &PhvLayout) -> Vec<Unit> {
    let mut in_header = vec![false; layout.fields.len()];
    let mut out = Vec::new();
    let mut singles = Vec::new();
    for h in &layout.headers {
        let mut run: Vec<FieldId> = Vec::new();
        let mut run_bits = 0u16;
        for &f in &h.fields {
            in_header[f as usize] = true;
            let w = layout.fields[f as usize].width;
            if run.is_empty() && w % 8 == 0 {
                out.push(Unit {
                    fields: vec![f],
                    bits: w,
                });
                continue;
            }
            run.push(f);
            run_bits += w;
            if run_bits % 8 == 0 {
                if run_bits <= 32 {
                    out.push(Unit {
                        fields: std::mem::take(&mut run),
                        bits: run_bits,
                    });
                } else {
                    // Too wide to share one container: each field on its own.
                    for f in run.drain(..) {
                        let w = layout.fields[f as usize].width;
                        out.push(Unit {
                            fields: vec![f],
                            bits: w,
                        });
                    }
                }
                run_bits = 0;
            }
        }
        // Headers are whole bytes, so a run always closes; any leftover stands alone.
        for f in run {
            out.push(Unit {
                fields: vec![f],
                bits: layout.fields[f as usize].width,
            });
        }
    }
    for (i, f) in layout.fields.iter().enumerate() {
        if in_header[i] {
            continue;
        }
        if f.width == 1 {
            singles.push(i as FieldId);
        } else {
            out.push(Unit {
                fields: vec![i as FieldId],
                bits: f.width,
            });
        }
    }
    for chunk in singles.chunks(8) {
        out.push(Unit {
            fields: chunk.to_vec(),
            bits: chunk.len() as u16,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pipelines::program::{Field, Header};

    fn field(name: &str, width: u16) -> Field {
        Field {
            name: name.into(),
            width,
            slices: Vec::new(),
        }
    }

    #[test]
    fn packs_sub_byte_fields_and_splits_wide_ones() {
        let mut l = PhvLayout {
            fields: vec![
                field("v", 4),
                field("ihl", 4),
                field("mac", 48),
                field("valid", 1),
                field("port", 9),
            ],
            headers: vec![Header {
                name: "h".into(),
                fields: vec![0, 1, 2],
                valid: 3,
            }],
            intrinsics: Vec::new(),
        };
        let spec = PhvSpec {
            b8: 4,
            b16: 4,
            b32: 4,
        };
        let used = allocate(&mut l, &spec, "ingress", Span::default()).unwrap();
        assert_eq!(
            l.fields[0].slices,
            vec![PhvSlice {
                container: 0,
                lsb: 4,
                width: 4
            }]
        );
        assert_eq!(
            l.fields[1].slices,
            vec![PhvSlice {
                container: 0,
                lsb: 0,
                width: 4
            }]
        );
        assert_eq!(
            l.fields[2].slices,
            vec![
                PhvSlice {
                    container: 8,
                    lsb: 0,
                    width: 32
                },
                PhvSlice {
                    container: 4,
                    lsb: 0,
                    width: 16
                }
            ]
        );
        assert_eq!(
            l.fields[4].slices,
            vec![PhvSlice {
                container: 5,
                lsb: 0,
                width: 9
            }]
        );
        assert_eq!(
            l.fields[3].slices,
            vec![PhvSlice {
                container: 1,
                lsb: 0,
                width: 1
            }]
        );
        assert_eq!(
            used,
            PhvUsage {
                b8: 2,
                b16: 2,
                b32: 1
            }
        );
    }

    #[test]
    fn running_out_names_the_class() {
        let mut l = PhvLayout {
            fields: (0..5).map(|i| field(&format!("f{i}"), 32)).collect(),
            headers: Vec::new(),
            intrinsics: Vec::new(),
        };
        let spec = PhvSpec {
            b8: 1,
            b16: 1,
            b32: 3,
        };
        let e = allocate(&mut l, &spec, "ingress", Span::default()).unwrap_err();
        assert!(
            e.message
                .contains("needs 5 32-bit containers, the chip has 3"),
            "{}",
            e.message
        );
    }
}
