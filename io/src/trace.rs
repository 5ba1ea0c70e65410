//! The per-packet trace's files (`asic_model::trace`; formats in docs/TRACE.md): the text to
//! `trace.txt` or to standard output, and the JSON lines to `trace.jsonl`, in an output
//! directory, packet by packet as a run hands them out.

use asic_model::trace::{render_json, render_text, PacketTrace, TraceFilter};
use std::fs::File;
use std::io::{BufWriter, ErrorKind, Write};
use std::path::{Path, PathBuf};

/// What to trace and where its text goes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TraceOptions {
    /// Which packets.
    pub filter: TraceFilter,
    /// In a network: the chips traced, by name (empty: every chip).
    pub chips: Vec<String>,
    /// The text goes to standard output instead of `trace.txt`.
    pub text_to_stdout: bool,
}

/// Where the text goes.
enum Text {
    File(BufWriter<File>, PathBuf),
    /// Standard output; `closed` once a reader closed the pipe (`asic run … --trace - |
    /// head`): the rest of the text is not written, and the run goes on.
    Stdout {
        closed: bool,
    },
}

/// The open trace files of a run.
pub struct TraceWriter {
    text: Text,
    json: BufWriter<File>,
    json_path: PathBuf,
    buf: String,
}

impl TraceWriter {
    /// Create `trace.jsonl` and (unless the text goes to standard output) `trace.txt` in
    /// `dir`, which exists.
    pub fn create(dir: &Path, text_to_stdout: bool) -> Result<TraceWriter, String> {
        let open = |name: &str| {
            let p = dir.join(name);
            File::create(&p)
                .map(|f| (BufWriter::new(f), p.clone()))
                .map_err(|e| format!("{}: cannot create: {e}", p.display()))
        };
        let text = if text_to_stdout {
            Text::Stdout { closed: false }
        } else {
            let (f, p) = open("trace.txt")?;
            Text::File(f, p)
        };
        let (json, json_path) = open("trace.jsonl")?;
        Ok(TraceWriter {
            text,
            json,
            json_path,
            buf: String::new(),
        })
    }

    /// Write one packet's trace (`chip`: its chip's name, in a network).
    pub fn write(&mut self, p: &PacketTrace, chip: Option<&str>) -> Result<(), String> {
        self.buf.clear();
        render_text(p, chip, &mut self.buf);
        match &mut self.text {
            Text::File(f, path) => f
                .write_all(self.buf.as_bytes())
                .map_err(|e| format!("{}: cannot write: {e}", path.display()))?,
            Text::Stdout { closed: false } => {
                let mut out = std::io::stdout().lock();
                match out.write_all(self.buf.as_bytes()) {
                    Ok(()) => {}
                    Err(e) if e.kind() == ErrorKind::BrokenPipe => {
                        self.text = Text::Stdout { closed: true }
                    }
                    Err(e) => return Err(format!("cannot write to standard output: {e}")),
                }
            }
            Text::Stdout { closed: true } => {}
        }
        self.buf.clear();
        render_json(p, chip, &mut self.buf);
        self.json
            .write_all(self.buf.as_bytes())
            .map_err(|e| format!("{}: cannot write: {e}", self.json_path.display()))
    }

    /// Flush the files; returns the files written.
    pub fn finish(self) -> Result<Vec<PathBuf>, String> {
        let flush = |w: &mut dyn Write, p: &Path| {
            w.flush()
                .map_err(|e| format!("{}: cannot write: {e}", p.display()))
        };
        let mut files = Vec::new();
        if let Text::File(mut f, p) = self.text {
            flush(&mut f, &p)?;
            files.push(p);
        }
        let (mut json, p) = (self.json, self.json_path);
        flush(&mut json, &p)?;
        files.push(p);
        Ok(files)
    }
}
