//! Acceptance: output pcaps parse with the pcap crate and name the right ports.

use asic_deploy::run as net;
use pcap_file::pcap::PcapReader;
use std::fs::File;

#[test]
fn pcaps_parse_and_name_the_right_ports() {
    let dir = std::env::temp_dir().join(format!("asic-net-pcap-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let scen = dir.join("s.ron");
    std::fs::write(
        &scen,
        r#"(
            topology: Generate((shape: SingleSwitch(hosts: 3), chip: "teaching", delay_ns: 100)),
            transport: NewReno(()),
            traffic: [
                Flow((src: "h0", dst: "h1", size: 20000)),
                Flow((src: "h2", dst: "h1", size: 3000, start_ns: 100)),
            ],
            pcaps: [(node: "sw0", port: 1), (node: "sw0", port: 0), (node: "h0")],
        )"#,
    )
    .unwrap();
    let out = dir.join("out");
    let opts = net::RunOptions {
        pcap_dir: Some(&out),
        ..net::RunOptions::default()
    };
    let rec = net::run_file(&scen, opts, &mut ()).unwrap().record;
    assert!(rec.flows.iter().all(|f| f.end_ps.is_some()));
    let read = |name: &str| {
        let mut r = PcapReader::new(File::open(out.join(name)).unwrap()).unwrap();
        let mut v = Vec::new();
        let mut last = std::time::Duration::ZERO;
        while let Some(p) = r.next_packet() {
            let p = p.unwrap();
            assert!(p.timestamp >= last, "{name}: timestamps in order");
            last = p.timestamp;
            v.push(p.data.into_owned());
        }
        v
    };
    // Port 1 faces h1 (10.0.0.2): it carries both flows' data, rewritten for h1.
    let p1 = read("sw0-port1.pcap");
    let data: Vec<_> = p1
        .iter()
        .filter_map(|f| asic_net::packet::parse(f))
        .filter(|h| h.is_data())
        .collect();
    assert_eq!(
        data.len() as u64,
        rec.flows.iter().map(|f| f.packets_sent).sum::<u64>()
    );
    assert!(data.iter().all(|h| h.dst_ip == 0x0a00_0002));
    assert!(p1
        .iter()
        .all(|f| f[6..12] == asic_net::topology::chip_mac(0, 1)));
    assert!(p1
        .iter()
        .all(|f| f[0..6] == asic_net::topology::host_mac(0x0a00_0002)));
    // Port 0 faces h0: only h1's ACKs for flow 0.
    let p0 = read("sw0-port0.pcap");
    assert!(!p0.is_empty());
    assert!(p0
        .iter()
        .map(|f| asic_net::packet::parse(f).unwrap())
        .all(|h| h.flags & asic_net::packet::ACK != 0 && h.flow_id == 0));
    // h0's NIC: its data packets, addressed to the switch port's MAC.
    let h0 = read("h0-port0.pcap");
    assert_eq!(h0.len() as u64, rec.flows[0].packets_sent);
    assert!(h0
        .iter()
        .all(|f| f[0..6] == asic_net::topology::chip_mac(0, 0)));
    std::fs::remove_dir_all(&dir).unwrap();
}
