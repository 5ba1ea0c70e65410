//! One program per kind of compile error, in `tests/errors/`. Each file starts with
//! `// error: LINE:COL: MESSAGE` (the exact position and message the compiler must give) and
//! optionally `// chip: NAME` (a profile in `asic-model/profiles/`; `tofino2-like` if absent).

use crate::common::profile;

#[test]
fn every_error_file_fails_with_its_message_and_position() {
    let dir = std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/errors"));
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/errors")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "p4"))
        .collect();
    files.sort();
    assert!(files.len() >= 12, "expected one file per error kind");
    let mut failures = Vec::new();
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let src = std::fs::read_to_string(path).expect("read");
        let header = |key: &str| {
            src.lines()
                .take_while(|l| l.starts_with("//"))
                .find_map(|l| l.strip_prefix(&format!("// {key}: ")))
                .map(str::to_string)
        };
        let want = header("error").unwrap_or_else(|| panic!("{name}: no `// error:` line"));
        let chip = header("chip").unwrap_or_else(|| "tofino2-like".into());
        match dsl::compile(&src, &name, &profile(&chip)) {
            Ok(_) => failures.push(format!("{name}: compiled, expected `{want}`")),
            Err(e) => {
                let got = format!("{}:{}: {}", e.line, e.col, e.message);
                if got != want {
                    failures.push(format!("{name}:\n  want {want}\n  got  {got}"));
                }
                // The excerpt under the message shows the error's line and a caret, not the
                // message again.
                let rendered = e.render(&src);
                let line = src.lines().nth(e.line - 1).unwrap_or("");
                if !rendered.contains(line)
                    || !rendered.contains('^')
                    || rendered.contains(&e.message)
                {
                    failures.push(format!(
                        "{name}: the excerpt is not the line and a caret:\n{rendered}"
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
