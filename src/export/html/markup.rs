//! The page's building blocks: escaped text, the data blob, and a chart's box.

use std::fmt::Write as _;

use serde::Serialize;

/// The JSON for a `<script>` element: `<` is written as `\u003c`, so no `</script>` (nor
/// `<!--`) inside a string can end the element early.
pub fn script_json(value: &impl Serialize) -> String {
    serde_json::to_string(value)
        .expect("chart data serializes")
        .replace('<', "\\u003c")
}

/// Text for HTML content and attribute values. Control characters and those that hide
/// or reorder text (bidirectional overrides, zero-width ones) are shown as escapes, as
/// on a terminal: a page is read by people, and a host name or a server's words from a
/// result file must not make it say something else.
pub fn escape(text: &str) -> String {
    let shown = crate::text::printable(text);
    let mut out = String::with_capacity(shown.len());
    for c in shown.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Which data a chart's box draws: the page's script looks it up by these attributes.
pub enum ChartOf {
    /// The whole run on one time axis.
    Run,
    /// The sweep at this index of the page's sweeps.
    Sweep(usize),
    /// The phase at this index of the result's phases.
    Phase(usize),
}

/// A chart's box: its caption (what is drawn), a note (what is particular to this chart;
/// how to read charts in general is the page's one note), and the element the page's
/// script draws `kind` into. `caption` and `note` are markup.
pub fn chart(out: &mut String, of: ChartOf, kind: &str, caption: &str, note: &str) {
    chart_on(out, of, kind, caption, note, false);
}

/// The same, with the y axis on a log scale when `log` (the script reads `data-log`).
pub fn chart_on(out: &mut String, of: ChartOf, kind: &str, caption: &str, note: &str, log: bool) {
    let place = match of {
        ChartOf::Run => "data-run=\"\"".to_string(),
        ChartOf::Sweep(index) => format!("data-sweep=\"{index}\""),
        ChartOf::Phase(index) => format!("data-phase=\"{index}\""),
    };
    let scale = if log { " data-log=\"\"" } else { "" };
    let note = if note.is_empty() {
        String::new()
    } else {
        format!("<div class=\"note\">{note}</div>")
    };
    let _ = writeln!(
        out,
        "<figure class=\"chart-box\"><figcaption>{caption}</figcaption>{note}<div class=\"chart\" {place} data-chart=\"{kind}\"{scale}></div></figure>"
    );
}

/// Seconds with microsecond digits, as Iron Cushion's fields have them.
pub fn seconds(value: f64) -> String {
    format!("{value:.6} s")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_text_can_reorder_or_hide_what_the_page_says() {
        assert_eq!(
            escape("host\u{202e}gnp.exe\u{1b}[2J\u{200b}"),
            "host\\u{202e}gnp.exe\\x1b[2J\\u{200b}"
        );
    }

    #[test]
    fn no_text_can_end_an_element_or_open_a_tag() {
        assert_eq!(
            escape("<a href='x'>&\"</a>"),
            "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&lt;/a&gt;"
        );
        let json = script_json(&"</script><!--");
        assert!(!json.contains('<'), "{json}");
        assert_eq!(
            serde_json::from_str::<String>(&json).unwrap(),
            "</script><!--"
        );
    }
}
