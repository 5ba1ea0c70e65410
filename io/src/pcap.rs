//! Reading input pcaps and writing one output pcap per egress port.
//!
//! Output files are classic pcap with nanosecond timestamps (`pcap-file`, pure Rust, no
//! libpcap) holding simulated time since the start of the run: the instant the frame's
//! first preamble bit leaves the port, rounded down to the nanosecond. Input timestamps are
//! read the same way: the instant the frame's first bit reaches the ingress port.

use pcap_file::pcap::{PcapHeader, PcapPacket, PcapParser, PcapWriter};
use pcap_file::{DataLink, PcapError, TsResolution};
use pipelines::time::Time;
use std::fs::File;
use std::io::BufWriter;
use std::path::Path;

/// A frame read from a pcap: its capture timestamp and bytes.
pub struct PcapFrame {
    /// Timestamp in nanoseconds as recorded in the file.
    pub ts_ns: u128,
    /// Frame bytes (no FCS).
    pub data: Vec<u8>,
}

/// Read every frame of an Ethernet pcap. Errors name the file, the record and the byte
/// offset where reading stopped.
pub fn read_pcap(path: &Path) -> Result<Vec<PcapFrame>, String> {
    let name = path.display();
    let bytes = std::fs::read(path).map_err(|e| format!("{name}: cannot read: {e}"))?;
    // A pcapng file starts with a section header block (block type 0x0A0D0D0A).
    if bytes.starts_with(&[0x0a, 0x0d, 0x0d, 0x0a]) {
        return Err(format!(
            "{name}: a pcapng file; the model reads classic pcap (convert it with \
             `editcap -F pcap {name} out.pcap`)"
        ));
    }
    let (mut rest, parser) = PcapParser::new(&bytes)
        .map_err(|e| format!("{name}: not a pcap file (bad global header: {e})"))?;
    if parser.header().datalink != DataLink::ETHERNET {
        return Err(format!(
            "{name}: link type {:?} is not Ethernet",
            parser.header().datalink
        ));
    }
    let mut frames = Vec::new();
    while !rest.is_empty() {
        let offset = bytes.len() - rest.len();
        let (r, pkt) = parser.next_packet(rest).map_err(|e| match e {
            PcapError::IncompleteBuffer => format!(
                "{name}: truncated: packet record #{} at byte {offset} ends past the end of the file ({} bytes)",
                frames.len() + 1,
                bytes.len()
            ),
            e => format!("{name}: bad packet record #{} at byte {offset}: {e}", frames.len() + 1),
        })?;
        if (pkt.orig_len as usize) > pkt.data.len() {
            return Err(format!(
                "{name}: packet record #{} at byte {offset} was captured truncated ({} of {} bytes)",
                frames.len() + 1,
                pkt.data.len(),
                pkt.orig_len
            ));
        }
        frames.push(PcapFrame {
            ts_ns: pkt.timestamp.as_nanos(),
            data: pkt.data.into_owned(),
        });
        rest = r;
    }
    Ok(frames)
}

/// A pcap being written.
pub struct PcapOut {
    writer: PcapWriter<BufWriter<File>>,
}

impl PcapOut {
    /// Create (or truncate) a nanosecond Ethernet pcap.
    pub fn create(path: &Path) -> Result<PcapOut, String> {
        let file =
            File::create(path).map_err(|e| format!("{}: cannot create: {e}", path.display()))?;
        let header = PcapHeader {
            ts_resolution: TsResolution::NanoSecond,
            datalink: DataLink::ETHERNET,
            ..PcapHeader::default()
        };
        let writer = PcapWriter::with_header(BufWriter::new(file), header)
            .map_err(|e| format!("{}: cannot write: {e}", path.display()))?;
        Ok(PcapOut { writer })
    }

    /// Append a frame that started at `start`.
    pub fn write(&mut self, start: Time, frame: &[u8]) -> Result<(), String> {
        let ts = std::time::Duration::from_nanos(start.ns());
        self.writer
            .write_packet(&PcapPacket::new(ts, frame.len() as u32, frame))
            .map(|_| ())
            .map_err(|e| format!("cannot write pcap: {e}"))
    }

    /// Flush to disk.
    pub fn finish(self) -> Result<(), String> {
        use std::io::Write;
        self.writer
            .into_writer()
            .flush()
            .map_err(|e| format!("cannot write pcap: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pcapng_file_is_named_as_such() {
        let path = std::env::temp_dir().join(format!("asic-io-{}.pcapng", std::process::id()));
        // A pcapng section header block's first bytes.
        std::fs::write(
            &path,
            [
                0x0a, 0x0d, 0x0d, 0x0a, 0x1c, 0, 0, 0, 0x4d, 0x3c, 0x2b, 0x1a,
            ],
        )
        .unwrap();
        let e = read_pcap(&path).err().unwrap();
        assert!(
            e.contains("a pcapng file") && e.contains("editcap -F pcap"),
            "{e}"
        );
        std::fs::remove_file(&path).unwrap();
    }
}
