//! Loading what scenarios name: chip profiles, programs, entries and control files.
//!
//! A scenario names its inputs relative to its own file; [`Base`] is that directory. A chip
//! is a built-in profile name (`tofino2-like`) or a profile file; everything else is a path.
//! Errors are one line naming the file (and `file:line:col` where the file's parser knows
//! the place); the compiler's caret excerpt is added only where a person reads it
//! ([`compile_file`] with `excerpt`, as `asic compile` does).

use asic_model::profile::{self, ChipProfile};
use located::read_text;
use pipelines::control::{resolve_op, ControlOp, ResolvedControlOp};
use pipelines::entries::{parse_control_file, parse_entries, resolve, EntrySpec, ResolvedEntry};
use pipelines::program::Program;
use std::path::{Path, PathBuf};

/// The directory names are relative to (a scenario's directory; empty: the current one).
#[derive(Clone, Copy, Debug)]
pub struct Base<'a>(pub &'a Path);

impl Base<'_> {
    /// `name` as a path: absolute as given, else relative to the base.
    pub fn path(&self, name: &str) -> PathBuf {
        let p = Path::new(name);
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.0.join(p)
        }
    }

    /// A chip profile: a built-in name, else a profile file relative to the base.
    pub fn profile(&self, name: &str) -> Result<ChipProfile, String> {
        let n = if profile::builtin_source(name).is_some() {
            name.to_string()
        } else {
            self.path(name).display().to_string()
        };
        profile::load(&n).map_err(|e| e.to_string())
    }

    /// Compile a program file for a chip; the error is one line naming `file:line:col`.
    pub fn compile(&self, program: &str, chip: &ChipProfile) -> Result<dsl::Compiled, String> {
        compile_file(&self.path(program), chip, false)
    }

    /// Read an entries file (a list of entries) as written, not yet resolved.
    pub fn entry_specs(&self, file: &str) -> Result<Vec<EntrySpec>, String> {
        let path = self.path(file);
        let origin = path.display().to_string();
        let text = read_text(&path, "entries")?;
        parse_entries(&text, &origin)
    }

    /// Read an entries file and resolve it against `program`.
    pub fn entries(&self, file: &str, program: &Program) -> Result<Vec<ResolvedEntry>, String> {
        let origin = self.path(file).display().to_string();
        resolve_entries(&self.entry_specs(file)?, program).map_err(|e| format!("{origin}: {e}"))
    }

    /// Read a control file (table entries, or `(tables: [...], registers: [...],
    /// meters: [...])`) and resolve its operations against `program`.
    pub fn control(&self, file: &str, program: &Program) -> Result<Vec<ResolvedControlOp>, String> {
        let path = self.path(file);
        let origin = path.display().to_string();
        let text = read_text(&path, "entries")?;
        parse_control_file(&text, &origin)?
            .ops()
            .iter()
            .enumerate()
            .map(|(i, op)| {
                resolve_op(program, op).map_err(|r| format!("{origin}: {}: {r}", describe(i, op)))
            })
            .collect()
    }
}

/// Compile a program file for a chip; errors are one line naming `file:line:col`, followed
/// by a caret excerpt when `excerpt` is set.
pub fn compile_file(
    path: &Path,
    chip: &ChipProfile,
    excerpt: bool,
) -> Result<dsl::Compiled, String> {
    let source = read_text(path, "program file")?;
    let name = path.display().to_string();
    dsl::compile(&source, &name, &chip.pipe).map_err(|e| {
        if excerpt {
            format!("{e}\n{}", e.render())
        } else {
            e.to_string()
        }
    })
}

/// Resolve entries against a program; the error names the entry (numbered from 1, as the
/// chip numbers the entries it installs) and its table.
pub fn resolve_entries(
    specs: &[EntrySpec],
    program: &Program,
) -> Result<Vec<ResolvedEntry>, String> {
    specs
        .iter()
        .enumerate()
        .map(|(i, e)| {
            resolve(program, e).map_err(|r| format!("entry {} (table `{}`): {r}", i + 1, e.table))
        })
        .collect()
}

/// "entry 3 (table `x`)" and the like, for errors about the `i`-th operation of a file
/// (counted from 0; named from 1).
pub fn describe(i: usize, op: &ControlOp) -> String {
    let (what, name) = match op {
        ControlOp::AddEntry(e) | ControlOp::ModifyEntry(e) => ("table", &e.table),
        ControlOp::DeleteEntry(k) => ("table", &k.table),
        ControlOp::WriteRegister(r) => ("register", &r.register),
        ControlOp::ConfigureMeter(m) => ("meter", &m.meter),
        ControlOp::SetMeterByteCountAdjust(a) => ("meter", &a.meter),
        ControlOp::ReadRegister(r) => ("register", &r.register),
        ControlOp::ReadCounter(c) => ("counter", &c.counter),
        ControlOp::ReadMeter(m) => ("meter", &m.meter),
        ControlOp::ReadDirectCounter(d) => ("table", &d.table),
        ControlOp::DumpTable(t) => ("table", &t.table),
    };
    format!("entry {} ({what} `{name}`)", i + 1)
}
