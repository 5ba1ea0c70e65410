//! Programs the compiler must refuse, one file each: `tests/errors/` holds one per kind of
//! error (the resource errors among them), `tests/broken/` the mistakes users make (syntax,
//! types, names, nesting past the limits, includes). Each file starts with `// error:
//! LINE:COL: MESSAGE` (the exact position and message the compiler must give; `// error:
//! FILE:LINE:COL: MESSAGE` when it is in a file the program includes, FILE relative to the
//! folder) and optionally `// chip: NAME` (a profile in `asic-model/profiles/`; `tofino2-like`
//! if absent). A file added to a folder is checked with the others; the files programs include
//! live in its `include/` subfolder.

use crate::common::profile;

/// Compile every `.p4` file of `tests/{folder}` (at least `at_least` of them) in a thread with a
/// 2 MiB stack, the least a caller's thread has, and compare each error with its file's header.
fn every_file_fails_as_it_says(folder: &str, at_least: usize) {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join(folder);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "p4"))
        .collect();
    files.sort();
    assert!(files.len() >= at_least, "{folder}: {} files", files.len());
    let failures = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || {
            files
                .iter()
                .filter_map(|path| fails_as_it_says(path))
                .collect::<Vec<_>>()
        })
        .expect("spawn")
        .join()
        .expect("no panic");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// What is wrong with how the program at `path` fails, if anything.
fn fails_as_it_says(path: &std::path::Path) -> Option<String> {
    let name = path.file_name()?.to_string_lossy().into_owned();
    let src = std::fs::read_to_string(path).expect("read");
    let header = |key: &str| {
        src.lines()
            .take_while(|l| l.starts_with("//"))
            .find_map(|l| l.strip_prefix(&format!("// {key}: ")))
            .map(str::to_string)
    };
    let Some(want) = header("error") else {
        return Some(format!("{name}: no `// error:` line"));
    };
    let chip = header("chip").unwrap_or_else(|| "tofino2-like".into());
    // Named as from the package's directory (where cargo runs tests), so that messages
    // naming files read the same on every machine.
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let rel = path.strip_prefix(root).unwrap_or(path);
    let e = match dsl::compile(&src, &rel.display().to_string(), &profile(&chip)) {
        Ok(_) => return Some(format!("{name}: compiled, expected `{want}`")),
        Err(e) => e,
    };
    let file = std::path::Path::new(&e.file);
    let got = match file.strip_prefix(rel.parent()?) {
        Ok(inner) if file != rel => {
            format!("{}:{}:{}: {}", inner.display(), e.line, e.col, e.message)
        }
        _ => format!("{}:{}: {}", e.line, e.col, e.message),
    };
    if got != want {
        return Some(format!("{name}:\n  want {want}\n  got  {got}"));
    }
    // The excerpt under the message shows the error's line and a caret, not the message again.
    let rendered = e.render();
    let text = std::fs::read_to_string(file).unwrap_or_default();
    let line = text.lines().nth(e.line - 1).unwrap_or("");
    (!rendered.contains(line) || !rendered.contains('^') || rendered.contains(&e.message))
        .then(|| format!("{name}: the excerpt is not the line and a caret:\n{rendered}"))
}

#[test]
fn every_error_file_fails_with_its_message_and_position() {
    every_file_fails_as_it_says("errors", 12);
}

#[test]
fn every_broken_program_fails_with_its_message_and_position() {
    every_file_fails_as_it_says("broken", 30);
}
