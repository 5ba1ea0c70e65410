//! What every part of the page writes alike: escaped text, the use colour scale, numbers as
//! people read them, match kinds, and the hover text (`data-tip`) that the page's script
//! shows.

use pipelines::program::MatchKind;

/// `text` safe inside HTML text and attribute values; a newline becomes `&#10;`, so a
/// `data-tip` keeps its lines.
pub fn esc(text: &str) -> String {
    let mut s = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '&' => s.push_str("&amp;"),
            '<' => s.push_str("&lt;"),
            '>' => s.push_str("&gt;"),
            '"' => s.push_str("&quot;"),
            '\'' => s.push_str("&#39;"),
            '\n' => s.push_str("&#10;"),
            _ => s.push(ch),
        }
    }
    s
}

/// ` data-tip="..."`: the lines the page shows when the pointer rests on the element.
pub fn tip(lines: &str) -> String {
    format!(" data-tip=\"{}\"", esc(lines))
}

/// `41984` as `41,984`.
pub fn int(n: u64) -> String {
    let digits = n.to_string();
    let mut s = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            s.push(',');
        }
        s.push(ch);
    }
    s
}

/// A match kind as P4 writes it.
pub fn match_kind(k: MatchKind) -> &'static str {
    match k {
        MatchKind::Exact => "exact",
        MatchKind::Ternary => "ternary",
        MatchKind::Lpm => "lpm",
        MatchKind::Range => "range",
    }
}

/// Percent used, rounded down as the text report rounds it.
pub fn percent(used: u32, available: u32) -> u32 {
    if available == 0 {
        0
    } else {
        (used as u64 * 100 / available as u64) as u32
    }
}

/// The bins of the use colour scale: the CSS class (`u0` … `u5`, defined in `page.css`) and
/// what the legend says. Discrete bins read more surely than a continuous ramp, and the
/// top bin flags a resource about to run out.
pub const SCALE: [(&str, &str); 6] = [
    ("u0", "none"),
    ("u1", "1–24%"),
    ("u2", "25–49%"),
    ("u3", "50–74%"),
    ("u4", "75–89%"),
    ("u5", "90–100%"),
];

/// The scale's class for `used` of `available`.
pub fn use_class(used: u32, available: u32) -> &'static str {
    if used == 0 {
        return SCALE[0].0;
    }
    let p = percent(used, available);
    let bin = match p {
        0..25 => 1,
        25..50 => 2,
        50..75 => 3,
        75..90 => 4,
        _ => 5,
    };
    SCALE[bin].0
}

/// The legend of the use scale: a swatch per bin.
pub fn scale_legend() -> String {
    let mut s =
        String::from("<div class=\"legend\"><span>share of the stage's capacity used:</span>");
    for (class, what) in SCALE {
        s.push_str(&format!(
            "<span class=\"swatch {class}\"></span><span>{}</span>",
            esc(what)
        ));
    }
    s.push_str(
        "<span class=\"swatch unused\"></span><span>stage not used by the gress</span></div>",
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_numbers() {
        assert_eq!(esc("a<b & \"c\"\nd"), "a&lt;b &amp; &quot;c&quot;&#10;d");
        assert_eq!(int(0), "0");
        assert_eq!(int(999), "999");
        assert_eq!(int(41984), "41,984");
        assert_eq!(int(2_000_000), "2,000,000");
        assert_eq!(percent(33, 80), 41);
        assert_eq!(use_class(0, 80), "u0");
        assert_eq!(use_class(1, 80), "u1");
        assert_eq!(use_class(40, 80), "u3");
        assert_eq!(use_class(4, 4), "u5");
    }
}
