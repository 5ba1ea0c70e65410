//! The page's head: the chip, the program, and each gress's latency as a bar of its parser,
//! stages and deparser, drawn to one scale so the gresses compare.

use asic_model::profile::ChipProfile;
use dsl::report::{GressReport, ResourceReport};
use dsl::tna::gress_name;
use pipelines::time::Clock;

use super::markup::{esc, int, tip};

/// `1.5 GHz`, `1.22 GHz`, `800 MHz`.
fn frequency(hz: u64) -> String {
    if hz >= 1_000_000_000 {
        let centi = hz / 10_000_000;
        let text = format!("{}.{:02}", centi / 100, centi % 100);
        format!("{} GHz", text.trim_end_matches('0').trim_end_matches('.'))
    } else {
        format!("{} MHz", hz / 1_000_000)
    }
}

/// The facts at the top of the page and the latency bars.
pub fn summary(report: &ResourceReport, profile: &ChipProfile) -> String {
    let clock = Clock::new(profile.clock_hz);
    let mut s = String::from("<section id=\"summary\"><table class=\"facts\">");
    s.push_str(&format!(
        "<tr><th>program</th><td>{}</td></tr>",
        esc(&report.program)
    ));
    s.push_str(&format!(
        "<tr><th>chip</th><td><b>{}</b>: {}</td></tr>",
        esc(&profile.name),
        esc(&profile.description)
    ));
    s.push_str(&format!(
        "<tr><th>pipe</th><td>{} MAU stages per gress, {} PHV containers (8/16/32-bit: {}/{}/{}), \
         clock {} (a cycle is {})</td></tr>",
        report.pipe_stages,
        profile.pipe.phv.b8 + profile.pipe.phv.b16 + profile.pipe.phv.b32,
        profile.pipe.phv.b8,
        profile.pipe.phv.b16,
        profile.pipe.phv.b32,
        frequency(profile.clock_hz),
        clock.time_of(1)
    ));
    s.push_str("</table>");
    let longest = report
        .gresses
        .iter()
        .map(|g| g.latency_cycles)
        .max()
        .unwrap_or(1)
        .max(1);
    s.push_str("<h3>Latency per gress</h3><div class=\"latency\">");
    for g in &report.gresses {
        s.push_str(&latency_row(
            g,
            longest,
            clock,
            profile.pipe.latency.stage_base_cycles,
        ));
    }
    s.push_str(
        "<div class=\"legend\"><span class=\"swatch seg-parser\"></span><span>parser</span>\
         <span class=\"swatch seg-stage\"></span><span>stage at the base latency</span>\
         <span class=\"swatch seg-extra\"></span><span>stage with TCAM, stateful or meter \
         extra cycles</span><span class=\"swatch seg-deparser\"></span><span>deparser</span></div>",
    );
    s.push_str("</div></section>");
    s
}

/// One gress's bar: a segment per part, as wide as its cycles (a stage above the profile's
/// `base` cycles marked).
fn latency_row(g: &GressReport, longest: u32, clock: Clock, base: u32) -> String {
    let stages: u32 = g.stages.iter().map(|st| st.cycles).sum();
    let gress = gress_name(g.gress);
    let mut bar = String::new();
    let mut segment = |class: &str, cycles: u32, text: &str, hover: String| {
        bar.push_str(&format!(
            "<span class=\"seg {class}\" style=\"flex-grow:{cycles}\"{}>{}</span>",
            tip(&hover),
            esc(text)
        ));
    };
    segment(
        "seg-parser",
        g.parser_cycles,
        "P",
        format!("{gress} parser: {} cycles", g.parser_cycles),
    );
    for st in &g.stages {
        let class = if st.cycles > base {
            "seg-extra"
        } else {
            "seg-stage"
        };
        segment(
            class,
            st.cycles,
            &st.stage.to_string(),
            format!("{gress} stage {}: {} cycles", st.stage, st.cycles),
        );
    }
    segment(
        "seg-deparser",
        g.deparser_cycles,
        "D",
        format!("{gress} deparser: {} cycles", g.deparser_cycles),
    );
    let width = g.latency_cycles as f64 * 100.0 / longest as f64;
    format!(
        "<div class=\"latrow\"><span class=\"latname\">{gress}</span>\
         <div class=\"lattrack\"><div class=\"latbar\" style=\"width:{width:.2}%\">{bar}</div></div>\
         <span class=\"lattotal\"><b>{} cycles</b> ({}): parser {} + {} stage(s) {} + deparser {}</span></div>",
        int(g.latency_cycles as u64),
        clock.time_of(g.latency_cycles as u64),
        g.parser_cycles,
        g.stages.len(),
        stages,
        g.deparser_cycles
    )
}

#[cfg(test)]
mod tests {
    use super::frequency;

    #[test]
    fn frequencies_read_as_written_in_profiles() {
        assert_eq!(frequency(1_500_000_000), "1.5 GHz");
        assert_eq!(frequency(1_220_000_000), "1.22 GHz");
        assert_eq!(frequency(1_000_000_000), "1 GHz");
        assert_eq!(frequency(800_000_000), "800 MHz");
    }
}
