//! The embedded default: the L3 router scenario of `programs/l3router/`, built into the
//! binary so that `asic` with no arguments runs something real on a fresh machine.

use std::path::Path;

/// Files of the demo: name and contents.
pub const FILES: &[(&str, &[u8])] = &[
    (
        "scenario.ron",
        include_bytes!("../programs/l3router/scenario.ron"),
    ),
    (
        "l3router.p4",
        include_bytes!("../programs/l3router/l3router.p4"),
    ),
    (
        "entries.ron",
        include_bytes!("../programs/l3router/entries.ron"),
    ),
    ("in1.pcap", include_bytes!("../programs/l3router/in1.pcap")),
];

/// Write the demo's files into `dir` so the user can read and change them.
pub fn extract(dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir)
        .map_err(|e| format!("{}: cannot create directory: {e}", dir.display()))?;
    for (name, bytes) in FILES {
        let p = dir.join(name);
        std::fs::write(&p, bytes).map_err(|e| format!("{}: cannot write: {e}", p.display()))?;
    }
    Ok(())
}
