//! The PHV container map of a gress: every container of each width, the field slices it
//! holds (which bits of which field, in which bits of the container), and the free ones.

use dsl::report::{container_name, GressReport, Use};
use dsl::tna::gress_name;
use pipelines::program::PhvLayout;
use pipelines::spec::PipeSpec;

use super::markup::{esc, tip};

/// A field slice in a container: the field, its bits `hi..=lo`, and the container bits it
/// occupies from `lsb`.
struct Held<'a> {
    field: &'a str,
    hi: u16,
    lo: u16,
    lsb: u8,
    width: u8,
}

/// What each container holds, by container index.
fn holdings(layout: &PhvLayout, containers: usize) -> Vec<Vec<Held<'_>>> {
    let mut held: Vec<Vec<Held>> = (0..containers).map(|_| Vec::new()).collect();
    for f in &layout.fields {
        // Slices are listed most significant first.
        let mut top = f.width;
        for s in &f.slices {
            let lo = top - s.width as u16;
            if let Some(h) = held.get_mut(s.container as usize) {
                h.push(Held {
                    field: &f.name,
                    hi: top - 1,
                    lo,
                    lsb: s.lsb,
                    width: s.width,
                });
            }
            top = lo;
        }
    }
    for h in &mut held {
        h.sort_by_key(|x| std::cmp::Reverse(x.lsb));
    }
    held
}

/// One container's cell: its name, a bar of its bits (most significant left) with the held
/// ones filled, and the fields on hover.
fn cell(name: &str, width: u8, held: &[Held]) -> String {
    if held.is_empty() {
        return format!(
            "<div class=\"ctr free\" data-container=\"{name}\"{}><span class=\"cname\">{name}</span>\
             <span class=\"bits\"><span class=\"gap\" style=\"flex-grow:{width}\"></span></span>\
             <span class=\"fname\">free</span></div>",
            tip(&format!("{name} ({width}-bit): free"))
        );
    }
    let used: u32 = held.iter().map(|h| h.width as u32).sum();
    let mut hover = format!("{name} ({width}-bit): {used} of {width} bits hold");
    let mut bar = String::new();
    let mut next = width; // the bit above the next one to draw
    for (k, h) in held.iter().enumerate() {
        let top = h.lsb + h.width;
        if top < next {
            bar.push_str(&format!(
                "<span class=\"gap\" style=\"flex-grow:{}\"></span>",
                next - top
            ));
        }
        bar.push_str(&format!(
            "<span class=\"f{}\" style=\"flex-grow:{}\"></span>",
            k % 3,
            h.width
        ));
        next = h.lsb;
        hover.push_str(&format!(
            "\n[{}:{}] {}[{}:{}]",
            top - 1,
            h.lsb,
            h.field,
            h.hi,
            h.lo
        ));
    }
    if next > 0 {
        bar.push_str(&format!(
            "<span class=\"gap\" style=\"flex-grow:{next}\"></span>"
        ));
    }
    // The field's last name, with its header's for a validity bit (`ipv4.$valid`).
    let field = held[0].field;
    let mut dots = field.rmatch_indices('.').map(|(i, _)| i);
    let first = match (dots.next(), dots.next()) {
        (Some(last), Some(before)) if field[last + 1..].starts_with('$') => &field[before + 1..],
        (Some(last), _) => &field[last + 1..],
        _ => field,
    };
    let more = if held.len() > 1 {
        format!(" +{}", held.len() - 1)
    } else {
        String::new()
    };
    format!(
        "<div class=\"ctr used\" data-container=\"{name}\"{}><span class=\"cname\">{name}</span>\
         <span class=\"bits\">{bar}</span><span class=\"fname\">{}{more}</span></div>",
        tip(&hover),
        esc(first)
    )
}

/// The map of one gress: the 8-, 16- and 32-bit containers, each group with its count.
pub fn phv(g: &GressReport, layout: &PhvLayout, spec: &PipeSpec) -> String {
    let gress = gress_name(g.gress);
    let (b8, b16, b32) = (spec.phv.b8, spec.phv.b16, spec.phv.b32);
    let held = holdings(layout, (b8 + b16 + b32) as usize);
    let groups: [(u8, std::ops::Range<u16>, Use); 3] = [
        (8, 0..b8, g.phv_b8),
        (16, b8..b8 + b16, g.phv_b16),
        (32, b8 + b16..b8 + b16 + b32, g.phv_b32),
    ];
    let mut s = format!("<div class=\"phvmap\" data-gress=\"{gress}\">");
    for (width, range, count) in groups {
        s.push_str(&format!(
            "<h4>{gress}: {width}-bit containers, {} of {} used</h4><div class=\"phv\" data-width=\"{width}\">",
            count.used, count.available
        ));
        for c in range {
            s.push_str(&cell(&container_name(spec, c), width, &held[c as usize]));
        }
        s.push_str("</div>");
    }
    s.push_str("</div>");
    s
}
