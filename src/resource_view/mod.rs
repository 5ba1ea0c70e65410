//! The visual resource view (`asic compile … --html FILE`): one self-contained HTML page of
//! what a compiled program uses of the chip, in the spirit of bf-p4c's P4 Insight. Its
//! style, script and drawings are inline (no network, no fonts fetched), and it is a
//! function of the compiled program and the profile alone, byte for byte.
//!
//! Everything on it comes from the compiler's own allocation: the report
//! ([`dsl::report::ResourceReport`]: stages, usages, parts, latency, the dependency graph
//! stage allocation obeyed) and the compiled program (keys, actions, the PHV layout). One
//! module per part of the page: [`summary`] (chip, program, latency), [`grid`] (stage ×
//! resource), [`graph`] (the dependency graph), [`tables`] (placement, keys, actions),
//! [`phv`] (the container map); [`markup`] holds what they write alike. The script
//! (`page.js`) shows the hover text, highlights a box's edges, filters edges by kind, and
//! checks the drawing it was given: that no two boxes overlap and every label fits its box
//! (the result is written under each graph, and the headless-browser test reads it).

pub mod graph;
pub mod grid;
pub mod markup;
pub mod phv;
pub mod summary;
pub mod tables;

use asic_model::profile::ChipProfile;
use dsl::report::GressReport;
use dsl::tna::gress_name;
use dsl::Compiled;
use pipelines::program::{Gress, GressProgram};

use markup::{esc, scale_legend};

/// The page's style sheet and script, written into it.
const CSS: &str = include_str!("page.css");
const JS: &str = include_str!("page.js");

fn program_of(compiled: &Compiled, g: Gress) -> &GressProgram {
    match g {
        Gress::Ingress => &compiled.program.ingress,
        Gress::Egress => &compiled.program.egress,
    }
}

/// A section of the page with one block per gress.
fn section(
    id: &str,
    title: &str,
    intro: &str,
    gresses: &[GressReport],
    part: impl Fn(&GressReport) -> String,
) -> String {
    let mut s = format!("<section id=\"{id}\"><h2>{title}</h2><p class=\"intro\">{intro}</p>");
    for g in gresses {
        s.push_str(&format!("<h3>{}</h3>{}", gress_name(g.gress), part(g)));
    }
    s.push_str("</section>");
    s
}

/// The page for `compiled`, compiled for `profile`.
pub fn render(compiled: &Compiled, profile: &ChipProfile) -> String {
    let report = &compiled.report;
    let spec = &profile.pipe;
    let title = format!("{} on {}: resources", report.program, profile.name);
    let mut s = String::new();
    s.push_str(&format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{}</title><style>{CSS}</style></head><body>",
        esc(&title)
    ));
    s.push_str(&format!(
        "<header><h1>{}</h1><nav><a href=\"#summary\">summary</a><a href=\"#resources\">\
         resources per stage</a><a href=\"#graph\">dependency graph</a><a href=\"#tables\">\
         tables</a><a href=\"#phv\">PHV</a></nav></header><main>",
        esc(&title)
    ));
    s.push_str(&summary::summary(report, profile));
    s.push_str(&section(
        "resources",
        "Resources per stage",
        &format!(
            "Each cell is one resource of one MAU stage: the number used, coloured by the share \
             of the stage's capacity (the profile's, given beside each resource). Point at a \
             cell for who uses it. Each gress is placed on the pipe's stages on its own.{}",
            scale_legend()
        ),
        &report.gresses,
        |g| grid::grid(g, &spec.stage, report.pipe_stages),
    ));
    s.push_str(&section(
        "graph",
        "Table dependency graph",
        "The dependencies stage allocation obeyed, a column per stage: a <b>match</b> \
         dependency (the later node's key, condition or extern input reads a field the earlier \
         one may write) and an <b>action</b> dependency (its actions read or write such a \
         field) put the later node at least one stage after the earlier one's last; a \
         <b>control</b> dependency (it follows in the control flow: next, hit, miss, an action, \
         true, false) keeps it from an earlier stage. Tables are square boxes, gateways \
         (<code>if</code>s) rounded ones; a table split across stages spans its parts' stages.",
        &report.gresses,
        |g| graph::graph(g, &program_of(compiled, g.gress).control),
    ));
    s.push_str(&section(
        "tables",
        "Tables",
        "Every table in stage order: its stages (a table too large for one stage is split into \
         parts, each a logical table of its own stage), entries, memories, key and actions; \
         then the gateways and the extern arrays with their stages.",
        &report.gresses,
        |g| tables::tables(g, &program_of(compiled, g.gress).control),
    ));
    s.push_str(&section(
        "phv",
        "PHV containers",
        "Every container of each width (B: 8-bit, H: 16-bit, W: 32-bit), its bits from the \
         most significant on the left, those holding a field filled; point at one for the \
         field slices it holds. Each gress has its own PHV here.",
        &report.gresses,
        |g| phv::phv(g, &program_of(compiled, g.gress).phv, spec),
    ));
    s.push_str(&format!(
        "</main><footer>Written by <code>asic compile --html</code> from the compiler's \
         allocation of {} for {}.</footer><div id=\"tip\" hidden></div><script>{JS}</script>\
         </body></html>\n",
        esc(&report.program),
        esc(&profile.name)
    ));
    s
}
