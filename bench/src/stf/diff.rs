//! What differs between an `expect` pattern and the frame that left, field by field.
//!
//! Why: two 120-digit hex strings that differ in one nibble say nothing a reader can act
//! on; `ipv4.ttl (byte 22): expected 0x3f, got 0x40` does. The headers are the ones the
//! model's programs and generators use: Ethernet II, IPv4 (options as one range) and UDP.
//! `etherparse` finds them (which headers there are, the IPv4 header's length, whether the
//! payload is a first fragment), as it does for the bench's generator and the tests' oracles;
//! the tables below only name the fields inside each header and say where their bits are.
//! Everything else (the payload, an unknown EtherType's bytes, bytes only one frame has) is
//! reported as runs of differing bytes, with their offsets.
//!
//! The layout is read from the expected frame (its `*` nibbles taken from the frame that
//! left, so a wildcard never changes it): the headers the test's author wrote are the ones
//! named. A `*` nibble is never reported; a field is reported only if a nibble the pattern
//! gives differs.

use super::parse::{hex, nibble, Pattern};
use etherparse::{EtherType, Ethernet2HeaderSlice, IpNumber, Ipv4HeaderSlice, UdpHeaderSlice};

/// How a field's value is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Show {
    Hex,
    /// `02:00:00:00:00:01`.
    Mac,
    /// `10.0.2.7` (hex when some nibble is `*`).
    Ipv4,
}

/// A header field: its name, and its first bit and width within its header.
type FieldSpec = (&'static str, usize, usize, Show);

const ETHERNET: &[FieldSpec] = &[
    ("ethernet.dst", 0, 48, Show::Mac),
    ("ethernet.src", 48, 48, Show::Mac),
    ("ethernet.type", 96, 16, Show::Hex),
];

/// RFC 791's header without options (the options follow as a byte range).
const IPV4: &[FieldSpec] = &[
    ("ipv4.version", 0, 4, Show::Hex),
    ("ipv4.ihl", 4, 4, Show::Hex),
    ("ipv4.dscp", 8, 6, Show::Hex),
    ("ipv4.ecn", 14, 2, Show::Hex),
    ("ipv4.total_len", 16, 16, Show::Hex),
    ("ipv4.id", 32, 16, Show::Hex),
    ("ipv4.flags", 48, 3, Show::Hex),
    ("ipv4.frag_offset", 51, 13, Show::Hex),
    ("ipv4.ttl", 64, 8, Show::Hex),
    ("ipv4.protocol", 72, 8, Show::Hex),
    ("ipv4.checksum", 80, 16, Show::Hex),
    ("ipv4.src", 96, 32, Show::Ipv4),
    ("ipv4.dst", 128, 32, Show::Ipv4),
];

const UDP: &[FieldSpec] = &[
    ("udp.src_port", 0, 16, Show::Hex),
    ("udp.dst_port", 16, 16, Show::Hex),
    ("udp.len", 32, 16, Show::Hex),
    ("udp.checksum", 48, 16, Show::Hex),
];

/// A field placed in a frame.
#[derive(Clone, Copy, Debug)]
struct Field {
    name: &'static str,
    /// First bit, from the frame's first.
    bit: usize,
    bits: usize,
    show: Show,
}

/// Where a frame's headers are: their fields, the IPv4 options' byte range, and the byte
/// where the recognised headers end (the payload starts).
#[derive(Debug, Default)]
struct Layout {
    fields: Vec<Field>,
    options: Option<(usize, usize)>,
    payload: usize,
}

impl Layout {
    /// The headers etherparse recognises at the start of `frame`.
    fn of(frame: &[u8]) -> Layout {
        let mut l = Layout::default();
        let Ok(eth) = Ethernet2HeaderSlice::from_slice(frame) else {
            return l;
        };
        l.place(ETHERNET, 0);
        l.payload = eth.slice().len();
        if eth.ether_type() != EtherType::IPV4 {
            return l;
        }
        let Ok(ip) = Ipv4HeaderSlice::from_slice(&frame[l.payload..]) else {
            return l;
        };
        let start = l.payload;
        l.place(IPV4, start);
        if !ip.options().is_empty() {
            l.options = Some((start + 20, start + ip.slice().len()));
        }
        l.payload = start + ip.slice().len();
        // Only a first fragment (or an unfragmented packet) carries the UDP header.
        if ip.protocol() != IpNumber::UDP || u16::from(ip.fragments_offset()) != 0 {
            return l;
        }
        if let Ok(udp) = UdpHeaderSlice::from_slice(&frame[l.payload..]) {
            let start = l.payload;
            l.place(UDP, start);
            l.payload = start + udp.slice().len();
        }
        l
    }

    fn place(&mut self, specs: &[FieldSpec], start_byte: usize) {
        self.fields
            .extend(specs.iter().map(|&(name, bit, bits, show)| Field {
                name,
                bit: start_byte * 8 + bit,
                bits,
                show,
            }));
    }

    /// What a byte outside the compared fields is called.
    fn label(&self, byte: usize) -> &'static str {
        if let Some(f) = self
            .fields
            .iter()
            .find(|f| f.bit / 8 <= byte && byte < (f.bit + f.bits).div_ceil(8))
        {
            return f.name;
        }
        match self.options {
            Some((a, b)) if (a..b).contains(&byte) => "ipv4.options",
            _ => "payload",
        }
    }
}

/// The most difference lines shown for one packet; the rest are counted.
const MAX_LINES: usize = 16;

/// One line per difference between `want` and `got`: the length, then each differing field
/// (`ipv4.ttl (byte 22): expected 0x3f, got 0x40`), then runs of differing bytes outside the
/// fields (`payload (bytes 42-43): expected a5a5, got a6a6`). Empty if `got` matches.
pub(crate) fn field_diff(want: &Pattern, got: &[u8]) -> Vec<String> {
    let mut lines = Vec::new();
    if want.len() != got.len() {
        lines.push(format!(
            "length: expected {} bytes, got {}",
            want.len(),
            got.len()
        ));
    }
    // The expected frame with its wildcards filled from `got` (0 past its end): the layout
    // then follows what the author wrote, and a `*` cannot change it.
    let filled: Vec<u8> = (0..want.len())
        .map(|b| {
            let n = |i: usize| {
                want.0[i].unwrap_or_else(|| if b < got.len() { nibble(got, i) } else { 0 })
            };
            (n(2 * b) << 4) | n(2 * b + 1)
        })
        .collect();
    let layout = Layout::of(&filled);
    let common = want.len().min(got.len());
    // Bytes whose every bit belongs to a field compared here.
    let mut covered = vec![false; want.len().max(got.len())];
    for f in &layout.fields {
        let end = (f.bit + f.bits).div_ceil(8);
        if end > common {
            continue;
        }
        for c in &mut covered[f.bit / 8..end] {
            *c = true;
        }
        let (value, care) = (bits(&filled, f.bit, f.bits), care(want, f.bit, f.bits));
        let got_value = bits(got, f.bit, f.bits);
        if (value ^ got_value) & care != 0 {
            lines.push(format!(
                "{} ({}): expected {}, got {}",
                f.name,
                span(f.bit / 8, end),
                show(*f, value, care),
                show(*f, got_value, u64::MAX),
            ));
        }
    }
    let differs = |b: usize| {
        !covered[b]
            && (b >= common
                || (2 * b..2 * b + 2).any(|i| want.0[i].is_some_and(|d| d != nibble(got, i))))
    };
    let mut b = 0;
    while b < covered.len() {
        if !differs(b) {
            b += 1;
            continue;
        }
        let label = layout.label(b);
        let start = b;
        // A run stops where the bytes agree, where one frame ends, or where its name changes.
        while b < covered.len()
            && differs(b)
            && (b < common) == (start < common)
            && layout.label(b) == label
        {
            b += 1;
        }
        // The run lies wholly inside or wholly past each frame's end.
        let expected = if start < want.len() {
            Pattern(want.0[2 * start..2 * b].to_vec()).to_string()
        } else {
            "no bytes".to_string()
        };
        let got_hex = if start < got.len() {
            hex(&got[start..b])
        } else {
            "no bytes".to_string()
        };
        lines.push(format!(
            "{label} ({}): expected {expected}, got {got_hex}",
            span(start, b)
        ));
    }
    if lines.len() > MAX_LINES {
        let more = lines.len() - MAX_LINES;
        lines.truncate(MAX_LINES);
        lines.push(format!("... and {more} more"));
    }
    lines
}

/// `byte 22` or `bytes 26-29` (inclusive) for the bytes `start..end`.
fn span(start: usize, end: usize) -> String {
    if end - start == 1 {
        format!("byte {start}")
    } else {
        format!("bytes {start}-{}", end - 1)
    }
}

/// `n` (at most 64) bits of `data` from bit `bit`, most significant first.
fn bits(data: &[u8], bit: usize, n: usize) -> u64 {
    (bit..bit + n).fold(0, |v, i| {
        (v << 1) | u64::from((data[i / 8] >> (7 - i % 8)) & 1)
    })
}

/// Which of those bits the pattern gives (a `*` nibble gives none of its four).
fn care(p: &Pattern, bit: usize, n: usize) -> u64 {
    (bit..bit + n).fold(0, |v, i| (v << 1) | u64::from(p.0[i / 4].is_some()))
}

/// A field's value as people read it; nibbles under `*` (zero in `care`) shown as `*`.
fn show(f: Field, value: u64, care: u64) -> String {
    let all = u64::MAX >> (64 - f.bits);
    let whole = (care & all) == all;
    if f.show == Show::Ipv4 && whole {
        let [_, _, _, _, a, b, c, d] = value.to_be_bytes();
        return format!("{a}.{b}.{c}.{d}");
    }
    let digits = f.bits.div_ceil(4);
    if f.bits % 4 != 0 {
        // Not whole nibbles (IPv4's dscp, ecn, flags, fragment offset): the value, and a
        // note when a `*` covers some of its bits.
        let note = if whole {
            ""
        } else {
            " (bits under `*` not compared)"
        };
        return format!("0x{:0digits$x}{note}", value & care);
    }
    let nibbles: Vec<char> = (0..digits)
        .rev()
        .map(|k| {
            if (care >> (4 * k)) & 0xf == 0 {
                '*'
            } else {
                char::from_digit(((value >> (4 * k)) & 0xf) as u32, 16).unwrap_or('?')
            }
        })
        .collect();
    match f.show {
        Show::Mac => nibbles
            .chunks(2)
            .map(|c| c.iter().collect::<String>())
            .collect::<Vec<_>>()
            .join(":"),
        Show::Hex | Show::Ipv4 => format!("0x{}", nibbles.iter().collect::<String>()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The L3 router's routed frame (docs/STF.md): Ethernet, IPv4 TTL 63, UDP, 18 bytes.
    const OUT: &str = "0200000002010200000000f20800\
                       4500002e000040003f1125b00a0000090a000207\
                       03e807d0001a0000\
                       a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5";

    fn bytes(hex: &str) -> Vec<u8> {
        Pattern::bytes(&[hex]).unwrap()
    }

    fn pattern(hex: &str) -> Pattern {
        Pattern::parse(&[hex], true).unwrap()
    }

    /// `hex` with the byte at `offset` replaced.
    fn with_byte(hex: &str, offset: usize, byte: &str) -> String {
        let mut s = hex.to_string();
        s.replace_range(2 * offset..2 * offset + 2, byte);
        s
    }

    #[test]
    fn a_match_has_no_lines() {
        assert!(field_diff(&pattern(OUT), &bytes(OUT)).is_empty());
    }

    #[test]
    fn a_wrong_ttl_names_the_field_and_its_byte() {
        let got = bytes(&with_byte(OUT, 22, "40"));
        assert_eq!(
            field_diff(&pattern(OUT), &got),
            ["ipv4.ttl (byte 22): expected 0x3f, got 0x40"]
        );
    }

    #[test]
    fn only_differing_fields_are_listed_and_wildcards_are_not_compared() {
        // TTL, checksum and the destination MAC's last byte differ; the checksum is `*`.
        let want = OUT.replacen("25b0", "****", 1);
        let got = with_byte(&with_byte(&with_byte(OUT, 22, "40"), 24, "99"), 5, "77");
        assert_eq!(
            field_diff(&pattern(&want), &bytes(&got)),
            [
                "ethernet.dst (bytes 0-5): expected 02:00:00:00:02:01, got 02:00:00:00:02:77",
                "ipv4.ttl (byte 22): expected 0x3f, got 0x40",
            ]
        );
        // Half a field under `*`: the other half still counts, and is shown with its `*`s.
        let want = OUT.replacen("25b0", "25**", 1);
        let got = with_byte(OUT, 24, "26");
        assert_eq!(
            field_diff(&pattern(&want), &bytes(&got)),
            ["ipv4.checksum (bytes 24-25): expected 0x25**, got 0x26b0"]
        );
    }

    #[test]
    fn addresses_ports_and_sub_byte_fields() {
        // Destination 10.0.2.7 → 10.0.3.7, UDP destination port 2000 → 2001, DSCP 0 → 46.
        let got = with_byte(&with_byte(&with_byte(OUT, 32, "03"), 37, "d1"), 15, "b8");
        assert_eq!(
            field_diff(&pattern(OUT), &bytes(&got)),
            [
                "ipv4.dscp (byte 15): expected 0x00, got 0x2e",
                "ipv4.dst (bytes 30-33): expected 10.0.2.7, got 10.0.3.7",
                "udp.dst_port (bytes 36-37): expected 0x07d0, got 0x07d1",
            ]
        );
    }

    #[test]
    fn the_payload_is_reported_as_runs_of_bytes() {
        let got = with_byte(&with_byte(&with_byte(OUT, 42, "00"), 43, "01"), 50, "ff");
        assert_eq!(
            field_diff(&pattern(OUT), &bytes(&got)),
            [
                "payload (bytes 42-43): expected a5a5, got 0001",
                "payload (byte 50): expected a5, got ff",
            ]
        );
    }

    #[test]
    fn lengths_that_differ_are_said_with_the_bytes_only_one_frame_has() {
        let longer = format!("{OUT}0000");
        assert_eq!(
            field_diff(&pattern(OUT), &bytes(&longer)),
            [
                "length: expected 60 bytes, got 62",
                "payload (bytes 60-61): expected no bytes, got 0000",
            ]
        );
        // A frame cut inside the UDP header: the fields it lacks are byte runs by name.
        let cut = &OUT[..2 * 38];
        assert_eq!(
            field_diff(&pattern(OUT), &bytes(cut))[..3],
            [
                "length: expected 60 bytes, got 38",
                "udp.len (bytes 38-39): expected 001a, got no bytes",
                "udp.checksum (bytes 40-41): expected 0000, got no bytes",
            ]
        );
    }

    #[test]
    fn a_frame_that_is_not_ipv4_is_compared_after_its_ethernet_header() {
        let arp = "0200000000030200000000090806 0001080006040001";
        let want = pattern(&arp.replace(' ', ""));
        let got = bytes(
            &arp.replace(' ', "")
                .replacen("0001080006040001", "0001080006040002", 1),
        );
        assert_eq!(
            field_diff(&want, &got),
            ["payload (byte 21): expected 01, got 02"]
        );
    }

    /// Every pair of prefixes of two frames (with and without wildcards) is described
    /// without a panic: the layout comes from one frame, the bytes from the other.
    #[test]
    fn frames_of_any_lengths_are_described() {
        let other = with_byte(&with_byte(OUT, 22, "40"), 14, "46");
        for want in [OUT.to_string(), OUT.replace('a', "*")] {
            for w in 0..=60 {
                for g in 0..=60 {
                    let p = Pattern(Pattern::parse(&[&want], true).unwrap().0[..2 * w].to_vec());
                    let lines = field_diff(&p, &bytes(&other)[..g]);
                    assert_eq!(lines.is_empty(), p.matches(&bytes(&other)[..g]), "{w} {g}");
                }
            }
        }
    }

    #[test]
    fn many_differences_are_cut_to_a_count() {
        let want = pattern(&"00".repeat(64));
        let got: Vec<u8> = (0..64).map(|i| if i % 2 == 0 { 1 } else { 0 }).collect();
        let lines = field_diff(&want, &got);
        assert_eq!(lines.len(), MAX_LINES + 1);
        // Three Ethernet fields and 25 single bytes of payload: 28 lines, 16 shown.
        assert_eq!(lines[MAX_LINES], "... and 12 more");
    }
}
