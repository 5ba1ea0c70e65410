//! `Chip::with_entries`: the chip a scenario describes, its entries installed in every pipe;
//! a refused entry is an error numbered from 1 that names the table, never a panic.

use super::{chip_profile, entries, forward_to, forwarder, frame, run};
use asic_model::chip::{Chip, ChipConfig, PortSpeed};
use pipelines::entries::ResolvedEntry;
use pipelines::program::Gress;
use pipelines::time::Time;

/// The chip: 4 pipes of 8 front-panel ports, so the pipes can be told apart.
const PROFILE: &str = "tofino2-like";

/// The text of `with_entries`'s refusal of `entries` (with the default configuration).
fn refusal(entries: &[ResolvedEntry]) -> String {
    let profile = chip_profile(PROFILE);
    let program = forwarder(&profile);
    match Chip::with_entries(profile, &program, ChipConfig::default(), entries) {
        Ok(_) => panic!("{entries:?} were accepted"),
        Err(e) => e.to_string(),
    }
}

/// `fwd` entries sending each MAC of `macs` (last byte) to port 1.
fn fwd_entries(macs: &[u8]) -> Vec<ResolvedEntry> {
    let program = forwarder(&chip_profile(PROFILE));
    let list: Vec<String> = macs
        .iter()
        .map(|m| {
            format!(r#"(table: "fwd", key: [Exact("02:00:00:00:00:{m:02x}")], action: "send", args: [1])"#)
        })
        .collect();
    entries(&program, &format!("[{}]", list.join(", ")))
}

#[test]
fn entries_are_installed_in_every_pipe() {
    let profile = chip_profile(PROFILE);
    let program = forwarder(&profile);
    let fwd = forward_to(&program, 1);
    let mut chip = Chip::with_entries(profile, &program, ChipConfig::default(), &fwd).unwrap();
    // Port 0 is in pipe 0, port 8 in pipe 1, port 31 in pipe 3.
    let t = Time::from_ns(1000);
    let sent = run(
        &mut chip,
        &[(0, t, frame(100)), (8, t, frame(100)), (31, t, frame(100))],
    );
    assert_eq!(sent.0.len(), 3);
    assert!(sent.0.iter().all(|&(port, _, _)| port == 1));
}

#[test]
fn a_refused_entry_is_numbered_from_one_and_names_its_table() {
    assert_eq!(
        refusal(&fwd_entries(&[1, 2, 1])),
        "entry 3 (table `Ingress.fwd`): table Ingress.fwd already has an entry with this key"
    );
    assert_eq!(
        refusal(&fwd_entries(&[1, 2, 3, 4, 5])),
        "entry 5 (table `Ingress.fwd`): table Ingress.fwd is full (4 entries)"
    );
}

#[test]
fn an_entry_for_a_table_the_program_lacks_is_refused_without_a_panic() {
    let mut e = fwd_entries(&[1]).remove(0);
    e.table = 7;
    assert_eq!(
        refusal(&[e.clone()]),
        "entry 1 (table `#7`): the program has no table #7"
    );
    e.gress = Gress::Egress;
    e.table = 0;
    assert_eq!(
        refusal(&[e]),
        "entry 1 (table `#0`): the program has no table #0"
    );
}

#[test]
fn a_configuration_the_chip_refuses_is_refused_before_any_entry() {
    let profile = chip_profile(PROFILE);
    let program = forwarder(&profile);
    let config = ChipConfig {
        port_speeds: vec![PortSpeed { port: 0, gbps: 0 }],
        ..ChipConfig::default()
    };
    let e = Chip::with_entries(profile, &program, config, &fwd_entries(&[1, 1]))
        .err()
        .unwrap();
    assert!(
        e.to_string()
            .starts_with("chip configuration: port_speeds: port 0"),
        "{e}"
    );
}
