//! The page's Environment section: what the run measured against and from, every fact
//! by the name `check --expect` and `compare` use, and why the server's unknown ones are.
//! A result written before the environment was kept says so instead.

use std::fmt::Write as _;

use super::markup::escape;
use crate::results::RunResult;
use crate::results::environment::{MOST_ITEMS, bounded, facts};
use crate::text::visible;

/// The section, before the configuration.
pub fn environment_section(out: &mut String, result: &RunResult) {
    out.push_str("<section id=\"environment\">\n<h2>Environment</h2>\n");
    let kept = result
        .nodes
        .iter()
        .any(|n| n.client.is_some() || n.server.is_some());
    if !kept {
        out.push_str("<p class=\"muted\">This result was written before sofabench recorded the server and the client machine: every fact is unknown.</p>\n</section>\n");
        return;
    }
    out.push_str("<table>\n<tr><th>fact</th><th>value</th></tr>\n");
    for fact in facts(result) {
        let _ = writeln!(
            out,
            "<tr><td><code>{}</code></td><td class=\"mono\">{}</td></tr>",
            fact.name,
            escape(&visible(&fact.value))
        );
    }
    out.push_str("</table>\n");
    let server = result.nodes.iter().find_map(|n| n.server.as_ref());
    let unknown = server.map_or(&[][..], |s| s.unknown_because.as_slice());
    if !unknown.is_empty() {
        out.push_str("<p class=\"muted\">Unknown because:</p>\n<ul>\n");
        // A result file's list may be any length, of any text.
        for why in unknown.iter().take(MOST_ITEMS) {
            let _ = writeln!(out, "<li>{}</li>", escape(&visible(&bounded(why))));
        }
        out.push_str("</ul>\n");
    }
    out.push_str("</section>\n");
}
