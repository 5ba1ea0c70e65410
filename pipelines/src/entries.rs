//! Table entries, register writes and meter settings as people write them: RON files that
//! name tables, actions, registers and meters and give values as numbers, hex, IPv4 or MAC
//! addresses. What they become as control-plane operations is [`crate::control`]'s, which
//! resolves them through this module (never the other way round).
//!
//! ```ron
//! [
//!     (table: "ipv4_lpm", key: [Lpm("10.0.1.0", 24)], action: "set_nexthop",
//!      args: ["1", "00:00:00:00:01:01", "02:00:00:00:00:01"]),
//!     (table: "l2_fwd", key: [Exact("00:00:00:00:00:02")], action: "l2_forward", args: [2]),
//! ]
//! ```
//!
//! A table or action may be named in full (`Ingress.ipv4_lpm`) or by its last component
//! when that is unambiguous. Resolution turns each [`EntrySpec`] into a [`ResolvedEntry`]
//! (indices and numbers) or an error naming the entry and what is wrong.

use crate::program::{ActionCall, Entry, Gress, KeyMatch, Program};
use located::{list_items, parse_ron};
use serde::{Deserialize, Serialize};
use std::fmt;

/// A value: a number, or text holding a decimal, `0x` hex, `0b` binary, dotted IPv4 or
/// colon-separated MAC address.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Value {
    /// A plain number.
    Int(u64),
    /// Text to parse.
    Text(String),
}

/// Read by hand rather than derived (an untagged enum's error would say only that no
/// variant matched): a negative or fractional number is refused saying why.
impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Value, D::Error> {
        struct Visit;
        impl serde::de::Visitor<'_> for Visit {
            type Value = Value;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a number from 0, or text such as \"0x1f\", \"10.0.0.1\" or \"02:00:00:00:00:01\"")
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Value, E> {
                Ok(Value::Int(v))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Value, E> {
                u64::try_from(v)
                    .map(Value::Int)
                    .map_err(|_| E::custom(format!("{v} is negative: table values are unsigned")))
            }
            fn visit_u128<E: serde::de::Error>(self, v: u128) -> Result<Value, E> {
                // Wider than 64 bits: kept as text, which parse_value reads as 128 bits.
                Ok(Value::Text(v.to_string()))
            }
            fn visit_i128<E: serde::de::Error>(self, v: i128) -> Result<Value, E> {
                u128::try_from(v)
                    .map(|v| Value::Text(v.to_string()))
                    .map_err(|_| E::custom(format!("{v} is negative: table values are unsigned")))
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Value, E> {
                Err(E::custom(format!("{v} is not a whole number")))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Value, E> {
                Ok(Value::Text(v.to_string()))
            }
        }
        d.deserialize_any(Visit)
    }
}

/// One key field's match, as written.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum KeySpec {
    /// Exact value.
    Exact(Value),
    /// Value and prefix length.
    Lpm(Value, u16),
    /// Value and mask.
    Ternary(Value, Value),
    /// Inclusive range.
    Range(Value, Value),
}

/// A register element to write, as written in files.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegisterWrite {
    /// Register array name.
    pub register: String,
    /// Element index.
    pub index: u32,
    /// Value.
    pub value: Value,
}

/// A meter's configuration, as written in files: rates per second and bursts in the
/// meter's unit (bytes or packets).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MeterSetting {
    /// Meter array name.
    pub meter: String,
    /// Meter index.
    pub index: u32,
    /// Committed information rate (units per second).
    pub cir: Value,
    /// Peak information rate (units per second, at least `cir`).
    pub pir: Value,
    /// Committed burst size (units).
    pub cbs: Value,
    /// Peak burst size (units).
    pub pbs: Value,
}

/// A meter array's byte-count adjustment, as written in files: bytes added to each packet's
/// length before the array's byte meters colour it (BF Runtime's `MeterByteCountAdjust`
/// table attribute, the driver's `bf_meter_bytecount_adjust_set`: one per meter array, not
/// per meter). Signed; `+24` counts preamble, FCS and inter-frame gap (line rate).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MeterAdjust {
    /// Meter array name.
    pub meter: String,
    /// Bytes added to each packet's length (negative: taken away; a length below 0 counts 0).
    pub bytes: i32,
}

/// One entry, as written.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EntrySpec {
    /// Table name.
    pub table: String,
    /// One match per key field.
    pub key: Vec<KeySpec>,
    /// Action name.
    pub action: String,
    /// Action data.
    #[serde(default)]
    pub args: Vec<Value>,
    /// Priority for ternary and range tables (higher wins).
    #[serde(default)]
    pub priority: u32,
}

impl EntrySpec {
    /// An entry as a deployment writes it (what a file's `(table: …, key: …, action: …,
    /// args: …, priority: …)` holds).
    pub fn new(
        table: &str,
        key: Vec<KeySpec>,
        action: &str,
        args: Vec<Value>,
        priority: u32,
    ) -> EntrySpec {
        EntrySpec {
            table: table.into(),
            key,
            action: action.into(),
            args,
            priority,
        }
    }
}

/// An entry resolved against a program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResolvedEntry {
    /// Which gress holds the table.
    pub gress: Gress,
    /// Table index in that gress.
    pub table: u16,
    /// The entry.
    pub entry: Entry,
}

/// An entry that does not fit the program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntryError {
    /// Which entry (0-based) in its list.
    pub index: usize,
    /// What is wrong.
    pub reason: String,
}

impl fmt::Display for EntryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "entry {}: {}", self.index, self.reason)
    }
}

impl std::error::Error for EntryError {}

/// Parse a value's text.
pub fn parse_value(v: &Value) -> Result<u128, String> {
    let s = match v {
        Value::Int(n) => return Ok(*n as u128),
        Value::Text(s) => s.trim(),
    };
    let bad = || format!("cannot read `{s}` as a number, IPv4 or MAC address");
    if let Some(h) = s.strip_prefix("0x") {
        return u128::from_str_radix(&h.replace('_', ""), 16).map_err(|_| bad());
    }
    if let Some(b) = s.strip_prefix("0b") {
        return u128::from_str_radix(&b.replace('_', ""), 2).map_err(|_| bad());
    }
    if s.contains('.') {
        let addr: std::net::Ipv4Addr = s.parse().map_err(|_| bad())?;
        return Ok(u32::from(addr) as u128);
    }
    if s.contains(':') {
        let parts: Vec<&str> = s.split(':').collect();
        if parts.len() != 6 {
            return Err(bad());
        }
        let mut v = 0u128;
        for p in parts {
            v = (v << 8) | u8::from_str_radix(p, 16).map_err(|_| bad())? as u128;
        }
        return Ok(v);
    }
    s.replace('_', "").parse::<u128>().map_err(|_| bad())
}

/// Find a unique name: a full match, else a unique `.suffix` match. When none matches, the
/// error lists the names there are, so the writer sees what to write.
pub fn find_by_name<'a, T>(
    items: impl Iterator<Item = (T, &'a str)> + Clone,
    name: &str,
    what: &str,
) -> Result<T, String> {
    if let Some((t, _)) = items.clone().find(|(_, n)| *n == name) {
        return Ok(t);
    }
    let suffix = format!(".{name}");
    let mut hits = items.clone().filter(|(_, n)| n.ends_with(&suffix));
    match (hits.next(), hits.next()) {
        (Some((t, _)), None) => Ok(t),
        (Some((_, a)), Some((_, b))) => {
            Err(format!("{what} `{name}` is ambiguous ({a}, {b}, ...)"))
        }
        _ => {
            let names: Vec<&str> = items.map(|(_, n)| n).collect();
            let has = if names.is_empty() {
                " none".to_string()
            } else {
                format!(": {}", names.join(", "))
            };
            Err(format!("no {what} named `{name}` (the program has{has})"))
        }
    }
}

/// Resolve one entry against the program.
pub fn resolve(p: &Program, e: &EntrySpec) -> Result<ResolvedEntry, String> {
    let tables = [(Gress::Ingress, &p.ingress), (Gress::Egress, &p.egress)]
        .into_iter()
        .flat_map(|(g, gp)| {
            gp.control
                .tables
                .iter()
                .enumerate()
                .map(move |(i, t)| ((g, i), t.name.as_str()))
        });
    let (gress, ti) = find_by_name(tables, &e.table, "table")?;
    let gp = match gress {
        Gress::Ingress => &p.ingress,
        Gress::Egress => &p.egress,
    };
    let table = &gp.control.tables[ti];
    let actions = table
        .actions
        .iter()
        .map(|&a| (a, gp.control.actions[a as usize].name.as_str()));
    let action = find_by_name(
        actions,
        &e.action,
        &format!("action of table {}", table.name),
    )?;
    let args = e
        .args
        .iter()
        .map(parse_value)
        .collect::<Result<Vec<_>, _>>()?;
    Ok(ResolvedEntry {
        gress,
        table: ti as u16,
        entry: Entry {
            key: resolve_key(&e.key)?,
            action: ActionCall { action, args },
            priority: e.priority,
        },
    })
}

/// Resolve a written key into match values.
pub fn resolve_key(key: &[KeySpec]) -> Result<Vec<KeyMatch>, String> {
    key.iter()
        .map(|k| {
            Ok(match k {
                KeySpec::Exact(v) => KeyMatch::Exact(parse_value(v)?),
                KeySpec::Lpm(v, len) => KeyMatch::Lpm {
                    value: parse_value(v)?,
                    prefix_len: *len,
                },
                KeySpec::Ternary(v, m) => KeyMatch::Ternary {
                    value: parse_value(v)?,
                    mask: parse_value(m)?,
                },
                KeySpec::Range(lo, hi) => KeyMatch::Range {
                    lo: parse_value(lo)?,
                    hi: parse_value(hi)?,
                },
            })
        })
        .collect::<Result<Vec<_>, String>>()
}

/// Everything an entries file can set: table entries, register elements, meter
/// configurations and meter arrays' byte-count adjustments. A file is either a plain list of
/// table entries (the original form) or this structure:
///
/// ```ron
/// (
///     tables: [ (table: "l2_fwd", key: [Exact("02:00:00:00:00:03")], action: "l2_forward", args: [3]) ],
///     registers: [ (register: "flow_count", index: 3, value: 0) ],
///     meters: [ (meter: "port_meter", index: 0, cir: 1_000_000, pir: 2_000_000, cbs: 1500, pbs: 3000) ],
///     meter_adjusts: [ (meter: "port_meter", bytes: 24) ],
/// )
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ControlFile {
    /// Table entries.
    #[serde(default)]
    pub tables: Vec<EntrySpec>,
    /// Register elements to set.
    #[serde(default)]
    pub registers: Vec<RegisterWrite>,
    /// Meters to configure.
    #[serde(default)]
    pub meters: Vec<MeterSetting>,
    /// Meter arrays' byte-count adjustments.
    #[serde(default)]
    pub meter_adjusts: Vec<MeterAdjust>,
}

/// The first significant character of a RON text (skipping whitespace and comments).
fn first_significant(text: &str) -> Option<char> {
    let mut rest = text;
    loop {
        rest = rest.trim_start();
        if let Some(r) = rest.strip_prefix("//") {
            rest = r.split_once('\n').map_or("", |x| x.1);
        } else if let Some(r) = rest.strip_prefix("/*") {
            rest = r.split_once("*/").map_or("", |x| x.1);
        } else {
            return rest.chars().next();
        }
    }
}

/// Parse an entries file in either form (a list of entries, or a [`ControlFile`]).
/// Syntax errors carry `origin:line:col`.
pub fn parse_control_file(text: &str, origin: &str) -> Result<ControlFile, String> {
    if first_significant(text) == Some('[') {
        let tables = parse_ron(text, origin)?;
        Ok(ControlFile {
            tables,
            ..ControlFile::default()
        })
    } else {
        Ok(parse_ron(text, origin)?)
    }
}

/// 1-based line and column of each operation of a control file, in [`ControlFile::ops`]
/// order (entries, registers, meters), so that an error about the `i`-th operation is
/// placed where the file writes it; empty if the text does not parse as one of the forms.
pub fn control_file_places(text: &str) -> Vec<(usize, usize)> {
    if first_significant(text) == Some('[') {
        list_items(text, None)
    } else {
        ["tables", "registers", "meters"]
            .into_iter()
            .flat_map(|field| list_items(text, Some(field)))
            .collect()
    }
}

/// Parse an entries file's table entries (either form). A file that also sets registers
/// or meters is refused here: read it with [`parse_control_file`] so nothing is ignored.
pub fn parse_entries(text: &str, origin: &str) -> Result<Vec<EntrySpec>, String> {
    let f = parse_control_file(text, origin)?;
    if !f.registers.is_empty() || !f.meters.is_empty() || !f.meter_adjusts.is_empty() {
        return Err(format!(
            "{origin}: the file sets registers or meters; load it as a control file"
        ));
    }
    Ok(f.tables)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_in_every_notation() {
        let t = |s: &str| parse_value(&Value::Text(s.into()));
        assert_eq!(t("10.0.1.2"), Ok(0x0a00_0102));
        assert_eq!(t("00:11:22:33:44:55"), Ok(0x0011_2233_4455));
        assert_eq!(t("0x0800"), Ok(0x800));
        assert_eq!(t("0b101"), Ok(5));
        assert_eq!(t("1_000"), Ok(1000));
        assert_eq!(parse_value(&Value::Int(7)), Ok(7));
        assert!(t("10.0.1").is_err());
        assert!(t("zz").unwrap_err().contains("`zz`"));
    }

    #[test]
    fn entry_files_parse_and_report_positions() {
        let ok = r#"[ (table: "t", key: [Lpm("10.0.0.0", 8), Exact(3)], action: "a", args: ["0x1", 2]) ]"#;
        let v = parse_entries(ok, "e.ron").unwrap();
        assert_eq!(v[0].key[0], KeySpec::Lpm(Value::Text("10.0.0.0".into()), 8));
        assert_eq!(v[0].args[1], Value::Int(2));
        let bad = "[\n (table: \"t\", key: [Bogus(1)], action: \"a\") ]";
        let err = parse_entries(bad, "e.ron").unwrap_err();
        assert!(err.starts_with("e.ron:2:"), "{err}");
    }

    #[test]
    fn control_files_accept_both_forms() {
        let list = "// routes\n[ (table: \"t\", key: [Exact(1)], action: \"a\") ]";
        let f = parse_control_file(list, "e.ron").unwrap();
        assert_eq!(f.tables.len(), 1);
        let full = r#"/* all */ (
            tables: [ (table: "t", key: [Exact(1)], action: "a") ],
            registers: [ (register: "r", index: 3, value: "0x10") ],
            meters: [ (meter: "m", index: 0, cir: 1_000_000, pir: 2_000_000, cbs: 1500, pbs: 3000) ],
            meter_adjusts: [ (meter: "m", bytes: -4) ],
        )"#;
        let f = parse_control_file(full, "e.ron").unwrap();
        assert_eq!(
            (f.tables.len(), f.registers.len(), f.meters.len()),
            (1, 1, 1)
        );
        assert_eq!(f.meter_adjusts[0].bytes, -4);
        assert!(parse_entries(full, "e.ron")
            .unwrap_err()
            .contains("control file"));
        let bad = "(\n tables: [],\n registres: [] )";
        let err = parse_control_file(bad, "e.ron").unwrap_err();
        assert!(err.starts_with("e.ron:3:"), "{err}");
    }
}
