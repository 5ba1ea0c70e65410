//! The compiler: a P4_16 subset (TNA flavour) to the executable program format of
//! [`pipelines::program`], allocated against a chip's [`PipeSpec`].
//!
//! Passes, one module each:
//! 0. [`include`](mod@include): the program's files, `#include`s expanded into one text;
//! 1. [`parse`]: text → syntax tree ([`ast`]) with the pest grammar in `grammar.pest`;
//! 2. [`check`]: declarations, types and the architecture's rules (the TNA built-ins live
//!    in [`tna`]);
//! 3. [`lower`]: each gress's parser and deparser, and (module `control`) its match-action
//!    control with the externs its actions drive, into one layout of fields and headers
//!    (module `layout`); `RegisterAction` bodies go through [`salu`];
//! 4. [`phv`]: fields → PHV container slices;
//! 5. [`alloc`]: tables and gateways → MAU stages under the table dependency graph and every
//!    per-stage resource; extern arrays and hash units follow their table;
//! 6. [`report`]: what the program uses of the chip (text, and JSON shaped like p4c's
//!    `resources.json`), with the table dependency graph placement obeyed ([`depgraph`],
//!    also in Graphviz's language).
//!
//! # The language
//!
//! - Types: `bit<N>` (1..=128), `bool`, `header`, `struct`, `typedef`, `const`, serializable
//!   enums `enum bit<W> E { A = 1, ... }` (members need explicit values), header validity
//!   (`isValid`, `setValid`, `setInvalid`).
//! - Parser: states, `extract`, `advance`, constant metadata assignments, `transition select`
//!   on fields, field slices and `pkt.lookahead<bit<N>>()` with values, masks (`&&&`), ranges
//!   (`..`) and `default`/`_`; `accept`/`reject`. A gress whose program reads `parser_err`
//!   continues after a parser error with the code set; otherwise the packet is dropped and
//!   counted (bf-p4c's rule, [`pipelines::program::ParserErrorPolicy`]).
//! - Controls: actions with parameters; tables with `exact`/`ternary`/`lpm`/`range` keys (on
//!   fields or slices), actions, `default_action`, `size`, `const entries`, `counters`;
//!   apply blocks with `if`/`else`, `t.apply().hit`/`.miss`, `switch (t.apply().action_run)`,
//!   direct action calls, local variables (each a metadata field in the PHV) and
//!   assignments of `+ - |+| |-| & | ^ ~ << >>`, `min`/`max`, slices `[h:l]` on either side,
//!   concatenation `++` (one deposit operation per part) and casts. Every statement of an
//!   action is one VLIW operation reading the PHV as it was before the action.
//! - Externs: `Register<T, I>(size[, init])` with `RegisterAction<T, I, U>` (one
//!   read-modify-write of one register array per packet; conditions, updates and outputs
//!   limited by the profile's `salu`) and T2NA's `MinMaxAction<T, I, U>` (`[rv =]
//!   this.min8|max8|min16|max16(value, mask[, lane[, postmod]])` over one 128-bit word, on
//!   chips whose profile has `salu.minmax`), `Meter<I>(size, MeterType_t.BYTES|PACKETS)`,
//!   `Counter<W, I>(size, CounterType_t.X)`, `DirectCounter<W>(CounterType_t.X)` attached with
//!   `counters = dc;`, `Hash<W>(HashAlgorithm_t.IDENTITY|CRC8|CRC16|CRC32[, seed])` (the
//!   optional second argument is the CRC's initial value, a model extension: TNA has no seed
//!   argument; CRC16 is CRC-16/ARC and CRC32 is CRC-32/ISO-HDLC as in TNA, CRC8 is
//!   CRC-8/SMBUS), `Random<W>()`, `QueueDepth()` in ingress (a model extension standing for
//!   Tofino2's ghost thread: `depth = qd.read(port, qid)` with a bit<9> port and a bit<7> qid
//!   gives the bit<19> depth in cells the TM last published to ingress; TNA's
//!   `ghost_intrinsic_metadata_t` block is rejected), and `Checksum()` in deparsers.
//! - Intrinsic metadata: see [`tna::INTRINSIC_TYPES`] (TNA names, plus model-specific fields
//!   documented there).
//! - Files: `#include "file"` (beside the including file) and `#include <file>` (the system
//!   files shipped with the compiler: `core.p4`, `tna.p4`, `t2na.p4`, `common/headers.p4`),
//!   each file once ([`include`](mod@include)).
//! - Annotations on tables and actions: `@name("...")` (the control-plane name), and on
//!   tables `@stage(N[, entries])` or `@pragma stage N [entries]` (pinned stages, see
//!   [`alloc`]); a table too large for a stage is split across stages.
//! - Nesting: statements and expressions nest at most [`parse::MAX_DEPTH`] levels and
//!   brackets [`parse::MAX_BRACKETS`] deep, far beyond real programs, so that no stage of the
//!   compiler runs out of stack (the module `parse::limits` says how each level counts).
//!
//! Anything else is rejected with an error naming the construct and its position.
//!
//! Crates used, and why: `pest` (a readable PEG grammar with precise error positions),
//! `thiserror` (the error type), `serde` (the report is data, dumped as JSON by the CLI).

pub mod alloc;
pub mod ast;
pub mod check;
mod control;
pub mod depgraph;
pub mod error;
pub mod include;
mod layout;
pub mod lower;
pub mod parse;
pub mod phv;
pub mod report;
pub mod salu;
pub mod tna;

use pipelines::mau::ControlPlan;
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

/// Compile `source` (the file `file_name`, whose stem names the program and whose directory
/// its `#include "..."`s are relative to) for a pipe like `spec`.
pub fn compile(source: &str, file_name: &str, spec: &PipeSpec) -> Result<Compiled, CompileError> {
    let source = include::expand(source, file_name)?;
    compile_unlocated(&source, file_name, spec).map_err(|e| source.locate(e))
}

fn compile_unlocated(
    source: &include::Source,
    file_name: &str,
    spec: &PipeSpec,
) -> error::Result<Compiled> {
    let ast = parse::parse(&source.text)?;
    let env = check::Env::build(&ast, source)?;
    let mut gresses: Vec<GressProgram> = Vec::with_capacity(2);
    let mut reports = Vec::with_capacity(2);
    for blocks in &env.gresses {
        let lowered = lower::lower_gress(&env, blocks, spec)?;
        let mut program = lowered.program;
        let gress_name = tna::gress_name(blocks.gress);
        let states = program.parser.states.len();
        if states > spec.parser.max_states as usize {
            return Err(CompileError::new(
                ErrorKind::Resource,
                lowered.parser_span,
                format!(
                    "parser ({gress_name}) needs {states} states; the chip's parser has {} (short by {})",
                    spec.parser.max_states,
                    states - spec.parser.max_states as usize
                ),
            ));
        }
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
            &lowered.table_pins,
        )?;
        // The chip builds every table when it loads the program, by its own rules for what an
        // entry may hold and what names it: a const entry it would refuse (a key given twice, a
        // range running backwards) is refused here, at the entry; anything else at the table.
        let shapes =
            ControlPlan::new(&program.control, &program.phv).action_shapes(&program.control);
        if let Err((i, e)) = pipelines::pipe::load_tables(&program, &shapes) {
            let at_entry = e
                .const_entry()
                .and_then(|(entry, why)| Some((*lowered.const_entry_spans[i].get(entry)?, why)));
            let (span, message) = at_entry.unwrap_or_else(|| {
                (
                    lowered.table_spans[i],
                    format!("the chip would not load this table: {e}"),
                )
            });
            return Err(CompileError::new(ErrorKind::Semantic, span, message));
        }
        reports.push(report::gress_report(
            blocks.gress,
            &program,
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
            pipe_stages: spec.stages,
            gresses: reports,
        },
        program: Program {
            name,
            ingress,
            egress,
        },
    })
}
