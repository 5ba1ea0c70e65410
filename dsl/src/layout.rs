//! The PHV layout as lowering builds it: which fields and headers a gress has, each
//! interned on first use so every mention of a field is the same [`FieldId`].
//!
//! Its own module because the parser, control and deparser lowerings all add to the one
//! layout of their gress: field ids follow the order the program first touches them (a
//! header's fields and validity bit together, in wire order); their container slices are
//! [`crate::phv`]'s, later.

use std::collections::HashMap;

use pipelines::program::{Field, FieldId, Header, HeaderId, Intrinsic, Operand, PhvLayout};

use crate::check::{Env, FieldKey, FieldRef, HeaderRef, Value};

/// Interns fields and headers into a [`PhvLayout`] on first use.
#[derive(Default)]
pub(crate) struct LayoutBuilder {
    pub(crate) layout: PhvLayout,
    fields: HashMap<FieldKey, FieldId>,
    headers: HashMap<FieldKey, HeaderId>,
}

impl LayoutBuilder {
    /// A new field of no slices yet (the PHV allocator places it).
    fn new_field(&mut self, key: FieldKey, name: String, width: u16) -> FieldId {
        let id = self.layout.fields.len() as FieldId;
        self.layout.fields.push(Field {
            name,
            width,
            slices: Vec::new(),
        });
        self.fields.insert(key, id);
        id
    }

    /// A header and all its fields (a header is extracted and emitted whole).
    pub(crate) fn header(&mut self, env: &Env, h: &HeaderRef) -> HeaderId {
        if let Some(&id) = self.headers.get(&h.key) {
            return id;
        }
        let fields = env
            .header_fields(&h.ty)
            .iter()
            .map(|(n, w)| self.new_field(h.key.child(n), format!("{}.{n}", h.name), *w))
            .collect();
        let valid = self.new_field(h.valid_key(), format!("{}.$valid", h.name), 1);
        let id = self.layout.headers.len() as HeaderId;
        self.layout.headers.push(Header {
            name: h.name.clone(),
            fields,
            valid,
        });
        self.headers.insert(h.key.clone(), id);
        id
    }

    /// A field (its header too, if it is a header's, as a header is allocated whole),
    /// binding it to its intrinsic if it is one.
    pub(crate) fn field(&mut self, env: &Env, f: &FieldRef) -> FieldId {
        if let Some(h) = &f.header {
            self.header(env, h);
        }
        if let Some(&id) = self.fields.get(&f.key) {
            return id;
        }
        let id = self.new_field(f.key.clone(), f.name.clone(), f.width);
        if let Some(i) = f.intrinsic {
            self.layout.intrinsics.push((i, id));
        }
        id
    }

    /// A header's validity bit.
    pub(crate) fn valid(&mut self, env: &Env, h: &HeaderRef) -> FieldId {
        let id = self.header(env, h);
        self.layout.headers[id as usize].valid
    }

    /// The field the compiler sets beside every write of `ucast_egress_port`, so the traffic
    /// manager knows the port was chosen.
    pub(crate) fn ucast_valid(&mut self, port: &FieldRef) -> FieldId {
        let key = port.key.child("$valid");
        if let Some(&id) = self.fields.get(&key) {
            return id;
        }
        let id = self.new_field(key, format!("{}_valid", port.name), 1);
        self.layout
            .intrinsics
            .push((Intrinsic::UcastEgressPortValid, id));
        id
    }

    /// A checked value as an operand, its fields interned.
    pub(crate) fn operand(&mut self, env: &Env, v: &Value) -> Operand {
        match v {
            Value::Field(f) => Operand::Field(self.field(env, f)),
            Value::Const(c) => Operand::Const(*c),
            Value::Param(i) => Operand::Param(*i),
            Value::Slice(f, hi, lo) => Operand::Slice {
                field: self.field(env, f),
                hi: *hi,
                lo: *lo,
            },
        }
    }
}
