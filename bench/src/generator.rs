//! The simple packet generator of scenarios: identical UDP frames at a constant rate.
//!
//! Frames are built with `etherparse` (a maintained packet builder, so lengths and the IPv4
//! checksum are right without hand-written header code).

use crate::scenario::{Generator, Template};
use asic_model::mac::slot_time;
use pipelines::entries::{parse_value, Value};
use pipelines::time::Time;

/// The largest frame a UDP template makes: IPv4's total length is 16 bits.
const MAX_FRAME_BYTES: usize = 14 + 65_535;

/// A generator that is producing frames.
pub struct GeneratorFeed {
    frame: Vec<u8>,
    seq_offset: usize,
    sent: u64,
    count: u64,
    next_start: Time,
    interval: Time,
}

fn mac(s: &str, what: &str) -> Result<[u8; 6], String> {
    let v = parse_value(&Value::Text(s.into())).map_err(|e| format!("{what}: {e}"))?;
    if v >> 48 != 0 {
        return Err(format!("{what}: `{s}` is not a MAC address"));
    }
    Ok((v as u64).to_be_bytes()[2..].try_into().expect("6 bytes"))
}

fn ipv4(s: &str, what: &str) -> Result<[u8; 4], String> {
    s.parse::<std::net::Ipv4Addr>()
        .map(|a| a.octets())
        .map_err(|_| format!("{what}: `{s}` is not an IPv4 address"))
}

/// A UDP checksum after 16-bit words `old` of the data became `new`, updated in place
/// (RFC 1624, eqn. 3: HC' = ~(~HC + ~m + m') in ones' complement) rather than summed again
/// over the whole frame. A result of 0 is sent as 0xFFFF: 0 means "no checksum" in UDP
/// (RFC 768).
fn udp_checksum_update(sum: u16, old: &[u16], new: &[u16]) -> u16 {
    let mut acc = u32::from(!sum);
    for (&m, &m2) in old.iter().zip(new) {
        acc += u32::from(!m) + u32::from(m2);
    }
    while acc > 0xffff {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    match !(acc as u16) {
        0 => 0xffff,
        s => s,
    }
}

impl GeneratorFeed {
    /// Build the template frame; `line_gbps` is the port's line rate.
    pub fn new(g: &Generator, line_gbps: u32) -> Result<GeneratorFeed, String> {
        let Template::Udp(t) = &g.packet;
        let builder = etherparse::PacketBuilder::ethernet2(
            mac(&t.src_mac, "src_mac")?,
            mac(&t.dst_mac, "dst_mac")?,
        )
        .ipv4(
            ipv4(&t.src_ip, "src_ip")?,
            ipv4(&t.dst_ip, "dst_ip")?,
            t.ttl,
        )
        .udp(t.src_port, t.dst_port);
        let headers = builder.size(0);
        if g.size > MAX_FRAME_BYTES {
            return Err(format!(
                "size: {} bytes is more than a UDP frame can hold ({MAX_FRAME_BYTES}: the \
                 largest IPv4 packet, 65 535 bytes, and a 14-byte Ethernet header)",
                g.size
            ));
        }
        if g.size < headers + 4 {
            return Err(format!("size: {} bytes cannot hold Ethernet, IPv4, UDP and a 4-byte sequence number ({} bytes)", g.size, headers + 4));
        }
        let payload = vec![0u8; g.size - headers];
        let mut frame = Vec::with_capacity(g.size);
        builder
            .write(&mut frame, &payload)
            .map_err(|e| format!("cannot build the frame: {e}"))?;
        let rate = g.rate_gbps.unwrap_or(line_gbps);
        if rate == 0 || rate > line_gbps {
            return Err(format!(
                "rate_gbps: {rate} must be between 1 and the port's line rate ({line_gbps})"
            ));
        }
        Ok(GeneratorFeed {
            frame,
            seq_offset: headers,
            sent: 0,
            count: g.count,
            next_start: Time::from_input_ns(g.start_ns, "start_ns")?,
            interval: slot_time(g.size, rate),
        })
    }

    /// When the last frame should start, or `None` if there is none.
    pub fn last_time(&self) -> Option<Time> {
        let later = self.count.checked_sub(self.sent + 1)?;
        Some(Time(
            later
                .saturating_mul(self.interval.ps())
                .saturating_add(self.next_start.ps()),
        ))
    }

    /// When the next frame should start, or `None` when all are sent.
    pub fn next_time(&self) -> Option<Time> {
        (self.sent < self.count).then_some(self.next_start)
    }

    /// The next frame (call only when [`Self::next_time`] is `Some`). Its payload starts
    /// with its sequence number, and its UDP checksum covers it.
    pub fn take(&mut self) -> &[u8] {
        let at = self.seq_offset;
        let old = [
            u16::from_be_bytes([self.frame[at], self.frame[at + 1]]),
            u16::from_be_bytes([self.frame[at + 2], self.frame[at + 3]]),
        ];
        let seq = (self.sent as u32).to_be_bytes();
        self.frame[at..at + 4].copy_from_slice(&seq);
        // The checksum field is 2 bytes into the UDP header's last 4 (length, checksum).
        let sum_at = at - 2;
        let sum = u16::from_be_bytes([self.frame[sum_at], self.frame[sum_at + 1]]);
        let new = [
            u16::from_be_bytes([seq[0], seq[1]]),
            u16::from_be_bytes([seq[2], seq[3]]),
        ];
        let sum = udp_checksum_update(sum, &old, &new);
        self.frame[sum_at..sum_at + 2].copy_from_slice(&sum.to_be_bytes());
        self.sent += 1;
        self.next_start += self.interval;
        &self.frame
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::UdpTemplate;

    #[test]
    fn frames_have_the_size_sequence_and_spacing_asked_for() {
        let g = Generator {
            count: 3,
            size: 100,
            start_ns: 5,
            rate_gbps: Some(5),
            packet: Template::Udp(UdpTemplate::default()),
        };
        let mut f = GeneratorFeed::new(&g, 10).unwrap();
        let t0 = f.next_time().unwrap();
        let a = f.take().to_vec();
        assert_eq!((t0, a.len()), (Time::from_ns(5), 100));
        let parsed = etherparse::SlicedPacket::from_ethernet(&a).unwrap();
        assert!(parsed.net.is_some());
        let t1 = f.next_time().unwrap();
        let b = f.take();
        assert_eq!(&b[42..46], &[0, 0, 0, 1]);
        // 100 + 4 FCS + 8 preamble + 12 gap = 124 bytes at 5 Gb/s = 198.4 ns.
        assert_eq!(t1 - t0, Time(198_400));
        assert!(f.next_time().is_some());
        f.take();
        assert!(f.next_time().is_none());
    }

    /// Every frame's UDP checksum is right for its sequence number (issue #20: it was the
    /// first frame's, so all but the frames whose number summed to it failed).
    #[test]
    fn every_frame_has_a_valid_udp_checksum() {
        let g = Generator {
            count: 70_000,
            size: 64,
            start_ns: 0,
            rate_gbps: None,
            packet: Template::Udp(UdpTemplate::default()),
        };
        let mut f = GeneratorFeed::new(&g, 10).unwrap();
        for n in 0..g.count {
            let frame = f.take().to_vec();
            let p = etherparse::SlicedPacket::from_ethernet(&frame).unwrap();
            let (Some(etherparse::NetSlice::Ipv4(ip)), Some(etherparse::TransportSlice::Udp(udp))) =
                (p.net, p.transport)
            else {
                panic!("frame {n}: Ethernet, IPv4, UDP expected")
            };
            let want = udp
                .to_header()
                .calc_checksum_ipv4(&ip.header().to_header(), udp.payload())
                .unwrap();
            assert_eq!(udp.checksum(), want, "frame {n}");
        }
    }

    #[test]
    fn impossible_generators_are_refused_with_the_field_named() {
        let mut g = Generator {
            count: 1,
            size: 20,
            start_ns: 0,
            rate_gbps: None,
            packet: Template::Udp(UdpTemplate::default()),
        };
        assert!(GeneratorFeed::new(&g, 10)
            .err()
            .unwrap()
            .starts_with("size:"));
        g.size = usize::MAX;
        assert!(GeneratorFeed::new(&g, 10)
            .err()
            .unwrap()
            .starts_with("size: 18446744073709551615 bytes is more than"));
        g.size = 64;
        g.rate_gbps = Some(40);
        assert!(GeneratorFeed::new(&g, 10)
            .err()
            .unwrap()
            .starts_with("rate_gbps:"));
    }
}
