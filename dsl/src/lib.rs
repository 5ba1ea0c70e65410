//! The compiler: a P4_16 subset (TNA flavour) to the executable program format of
//! [`pipelines::program`], allocated against a chip's [`PipeSpec`].
//!
//! Passes, one module each:
//! 1. [`parse`]: text → syntax tree ([`ast`]) with the pest grammar in `grammar.pest`;
//! 2. [`check`]: declarations, types and the architecture's rules (the TNA built-ins live
//!    in [`tna`]);
//! 3. [`lower`]: each gress's parser, control and deparser → [`GressProgram`];
//! 4. [`phv`]: fields → PHV container slices;
//! 5. [`alloc`]: tables and gateways → MAU stages;
//! 6. [`report`]: what the program uses of the chip.
//!
//! Crates used, and why: `pest` (a readable PEG grammar with precise error positions),
//! `ariadne` (caret excerpts for errors), `thiserror` (the error type), `serde` (the report
//! is data, dumped as JSON by the CLI).

pub mod alloc;
pub mod ast;
pub mod check;
pub mod error;
pub mod lower;
pub mod parse;
pub mod phv;
pub mod report;
pub mod tna;

use pipelines::program::{GressProgram, Program};
use pipelines::spec::PipeSpec;

pub use error::{CompileError, ErrorKind};
pub use report::ResourceReport;

/// A compiled program and what it uses of the chip.
#[derive(Clone, Debug)]
pub struct Compiled {
    /// The executable program.
    pub program: Program,
    /// Resource use per gress and stage.
    pub report: ResourceReport,
}

/// Compile `source` (named `file_name`, whose stem names the program) for a pipe like `spec`.
pub fn compile(source: &str, file_name: &str, spec: &PipeSpec) -> Result<Compiled, CompileError> {
    compile_unlocated(source, file_name, spec).map_err(|e| e.locate(file_name, source))
}

fn compile_unlocated(source: &str, file_name: &str, spec: &PipeSpec) -> error::Result<Compiled> {
    let ast = parse::parse(source)?;
    let env = check::Env::build(&ast, source)?;
    let mut gresses: Vec<GressProgram> = Vec::with_capacity(2);
    let mut reports = Vec::with_capacity(2);
    for blocks in &env.gresses {
        let lowered = lower::lower_gress(&env, blocks)?;
        let mut program = lowered.program;
        let gress_name = tna::gress_name(blocks.gress);
        let phv = phv::allocate(
            &mut program.phv,
            &spec.phv,
            gress_name,
            lowered.control_span,
        )?;
        let placement = alloc::place(
            &mut program.control,
            &program.phv,
            spec,
            &lowered.table_spans,
            &lowered.gateway_spans,
        )?;
        reports.push(report::gress_report(
            blocks.gress,
            &program.control,
            &placement,
            phv,
            spec,
        ));
        gresses.push(program);
    }
    let name = std::path::Path::new(file_name).file_stem().map_or_else(
        || file_name.to_string(),
        |s| s.to_string_lossy().into_owned(),
    );
    let (Some(egress), Some(ingress)) = (gresses.pop(), gresses.pop()) else {
        return Err(CompileError::new(
            ErrorKind::Semantic,
            ast::Span::default(),
            "internal: missing gress",
        ));
    };
    Ok(Compiled {
        report: ResourceReport {
            program: name.clone(),
            gresses: reports,
        },
        program: Program {
            name,
            ingress,
            egress,
        },
    })
}
