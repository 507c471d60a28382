use super::steps::SHORT_INTERVAL_RULE;
use super::*;
use crate::results::{SweepPoint, SweptSetting};

/// The page's chart data, parsed back.
fn data_of(page: &str) -> serde_json::Value {
    let start = page.find("id=\"sofabench-data\">").unwrap() + 20;
    let end = start + page[start..].find("</script>").unwrap();
    serde_json::from_str(&page[start..end]).unwrap()
}

fn charts_of(page: &str, kind: &str) -> usize {
    page.matches(&format!("data-chart=\"{kind}\"")).count()
}

#[test]
fn page_is_self_contained_and_escaped() {
    let page = render(&super::super::sample::result());
    assert!(!page.contains("<script src") && !page.contains("<link"));
    assert!(!page.contains("src=\"http"));
    // The template name holds `</script>`: it must appear escaped only.
    assert!(page.contains("&lt;/script&gt;&lt;b&gt;x&lt;/b&gt;.json"));
    assert_eq!(
        page.matches("</script>").count(),
        3,
        "only the three elements end"
    );
    // The run: throughput, latency, failures, CPU; no rate, no bulk inserts.
    for kind in ["run-throughput", "run-latency", "run-failures", "run-cpu"] {
        assert_eq!(charts_of(&page, kind), 1, "{kind}");
    }
    assert_eq!(
        charts_of(&page, "run-late") + charts_of(&page, "run-documents"),
        0
    );
    // The phase: throughput, latency, failures, the disk's sizes, spectrum.
    assert_eq!(page.matches("data-phase=").count(), 5);
    assert_eq!(charts_of(&page, "disk"), 1);
    assert_eq!(charts_of(&page, "failures"), 1);
    assert!(
        !page.contains("id=\"sweep\""),
        "no sweep, no reference table"
    );
    // 429s are their own kind, with what was retried and what the server said.
    assert!(page.contains("rate_limited (429) ×1"), "{page}");
    assert!(page.contains("<h3>Rate limited (429 Too Many Requests)</h3>"));
    assert!(page.contains(
        "<tr><td>read</td><td class=\"num\">4</td><td class=\"num\">3</td><td class=\"num\">7.500000 s</td><td class=\"num\">1</td><td class=\"mono\">Retry-After: 5 · {&quot;error&quot;:&quot;too_many_requests&quot;}</td></tr>"
    ));
    assert!(page.contains("remoteReadProcessingRate"));
    // The table of phases links each to its section.
    assert!(page.contains("<a href=\"#phase-0\">crud</a>"));
    assert!(page.contains("<section id=\"phase-0\" class=\"phase\">\n<details open>"));
    let data = data_of(&page);
    assert_eq!(data["run"]["phases"][0]["name"], "crud");
    assert_eq!(data["phases"][0]["name"], "crud");
    assert_eq!(data["sweeps"].as_array().unwrap().len(), 0);
}

#[test]
fn captions_say_which_latency_and_the_rule_for_short_intervals() {
    let mut result = super::super::sample::result();
    let page = render(&result);
    assert!(page.contains("p99 (dashed) latency from sending to the answer"));
    assert!(!page.contains("p99 (dashed) response time"));
    let rule_shown = page.matches(SHORT_INTERVAL_RULE).count();
    // Every chart over time: the run's four, the phase's three and its disk sizes.
    assert_eq!(rule_shown, 8);
    result.phases[0].target_rate = Some(10.0);
    let page = render(&result);
    assert!(page.contains("p99 (dashed) response time (from each operation's scheduled start)"));
    assert_eq!(charts_of(&page, "run-late") + charts_of(&page, "late"), 2);
    assert!(page.contains("<th class=\"num\">target/s</th>"));
}

/// A sweep of `n` phases over connections, each phase the sample's, a second apart.
fn sweep_of(n: u64) -> RunResult {
    let mut result = super::super::sample::result();
    let template = result.phases.remove(0);
    for k in 0..n {
        let mut phase = template.clone();
        phase.name = format!("crud_{}", k + 1);
        phase.started_at_ms += 3_000 * k;
        phase.sweep = Some(SweepPoint {
            series: "crud".to_string(),
            setting: SweptSetting::Connections,
            value: k + 1,
        });
        result.phases.push(phase);
    }
    result
}

#[test]
fn fifty_phases_make_one_line_per_quantity_and_folded_sections() {
    let page = render(&sweep_of(50));
    let data = data_of(&page);
    // The run's charts hold their quantities, never a series per phase.
    let series = data["run"]["series"].as_object().unwrap();
    assert_eq!(series.len(), 12, "{:?}", series.keys());
    assert_eq!(data["run"]["phases"].as_array().unwrap().len(), 50);
    // One sweep chart pair, one line per series (there is one series).
    assert_eq!(charts_of(&page, "sweep-throughput"), 1);
    assert_eq!(charts_of(&page, "sweep-latency"), 1);
    let sweep = &data["sweeps"][0];
    assert_eq!(sweep["series"].as_array().unwrap().len(), 1);
    assert_eq!(sweep["x"].as_array().unwrap().len(), 50);
    assert_eq!(sweep["axis"], "connections");
    // Sections start folded; the table of phases has a row each.
    assert_eq!(page.matches("<details>").count(), 50);
    assert!(!page.contains("<details open>"));
    assert_eq!(page.matches("<a href=\"#phase-").count(), 50);
}

#[test]
fn a_builtin_sweep_shows_its_reference_table() {
    let mut result = sweep_of(3);
    result.config.insert(
        "scenario".to_string(),
        serde_json::json!("read-ratio-sweep"),
    );
    let page = render(&result);
    assert!(page.contains("<h3>titan-loadtest's result lines</h3>"));
    // The sample's phase: 3 creates (writes), 7 reads of which 6 found their document.
    assert!(
        page.contains("<tr><td>crud_2</td><td class=\"num\">2.000</td><td class=\"num\">3</td><td class=\"num\">2</td><td class=\"num\">7</td><td class=\"num\">4</td><td class=\"num\">6</td></tr>"),
        "{page}"
    );
    result
        .config
        .insert("scenario".to_string(), serde_json::json!("scaling"));
    let page = render(&result);
    assert!(page.contains("<h3>couchbase-tests' scaling table</h3>"));
    assert!(page.contains("Weighted"));
}

#[test]
fn the_disk_table_shows_what_the_server_said_and_unknown_for_the_rest() {
    let page = render(&super::super::sample::result());
    assert!(page.contains("<h3>Disk</h3>"), "{page}");
    // The sample's PouchDB-like looks: a file and documents, neither active nor external.
    assert!(page.contains(
        "<tr><td>after the phase</td><td class=\"num\">80,000</td><td class=\"num\">unknown</td><td class=\"num\">unknown</td><td class=\"num\">5</td></tr>"
    ));
    assert!(page.contains("<td class=\"num\">48,000 – 48,000</td>"));
    assert!(page.contains(
        "16,000.0 bytes per document (file / documents after the phase); the file grew 16,000.0 bytes per document written (3 written)"
    ));
    let mut old = super::super::sample::result();
    old.phases[0].disk = None;
    assert!(!render(&old).contains("<h3>Disk</h3>"));
}
