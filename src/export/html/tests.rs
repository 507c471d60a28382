use super::steps::SHORT_INTERVAL_RULE;
use super::*;
use crate::results::{PhaseResult, SweepPoint, SweptSetting};

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
    assert!(page.contains("successful operations only: the latency from sending to the answer"));
    assert!(!page.contains("response time (from each operation's scheduled start)"));
    result.phases[0].target_rate = Some(10.0);
    let page = render(&result);
    assert!(page.contains(
        "successful operations only: the response time (from each operation's scheduled start)"
    ));
    assert_eq!(charts_of(&page, "run-late") + charts_of(&page, "late"), 2);
    assert!(page.contains("<th class=\"num\">target/s</th>"));
}

/// Where `needle` first appears in the page.
fn at(page: &str, needle: &str) -> usize {
    page.find(needle)
        .unwrap_or_else(|| panic!("{needle} is not on the page"))
}

#[test]
fn the_verdict_and_the_phases_come_before_one_note_and_the_charts() {
    let page = render(&super::super::sample::result());
    // The sample's create and read that failed (404s) fail the run, as its verdict says.
    let verdict = at(
        &page,
        "<p class=\"verdict failed\">verdict: <strong>FAILED</strong>: 2 operations failed</p>",
    );
    let phases = at(&page, "<table class=\"phases\">");
    let note = at(&page, "<section id=\"reading\"");
    let first_chart = at(&page, "class=\"chart-box\"");
    assert!(verdict < phases && phases < note && note < first_chart);
    // What every chart over time shares is said once for the page, not once a chart.
    assert_eq!(page.matches(SHORT_INTERVAL_RULE).count(), 1);
    assert_eq!(
        page.matches("Too Many Requests, every other failure")
            .count(),
        1
    );
    assert_eq!(page.matches("one more nine").count(), 1);
    assert_eq!(page.matches("class=\"legend-note\"").count(), 1);
    // The note explains only what the page draws: the disk, not replication.
    assert!(page.contains("<em>The database on disk</em>"));
    assert!(!page.contains("<em>Continuous replication</em>"));
}

/// Every interval operation of `phase` timed anew: each value recorded mapped by `time`.
fn retimed(phase: &mut PhaseResult, time: impl Fn(u64) -> u64) {
    use crate::results::histogram::{decode, encode};
    for op in phase.intervals.iter_mut().flat_map(|i| &mut i.operations) {
        let old = decode(&op.histogram).unwrap();
        let mut new = crate::metrics::recorder::new_histogram();
        for v in old.iter_recorded() {
            new.record_n(time(v.value_iterated_to()), v.count_at_value())
                .unwrap();
        }
        op.p50_ms = new.value_at_quantile(0.5) as f64 / 1_000.0;
        op.p99_ms = new.value_at_quantile(0.99) as f64 / 1_000.0;
        op.histogram = encode(&new);
    }
}

/// The box of chart `kind` (the first), as the page writes it.
fn chart_tag<'a>(page: &'a str, kind: &str) -> &'a str {
    let at = at(page, &format!("data-chart=\"{kind}\""));
    let start = page[..at].rfind("<figure").unwrap();
    &page[start..at + page[at..].find('>').unwrap()]
}

#[test]
fn latency_charts_go_logarithmic_past_a_tenfold_spread() {
    let mut result = super::super::sample::result();
    let mut bulk = result.phases[0].clone();
    bulk.name = "slow".to_string();
    bulk.started_at_ms += 5_000;
    result.phases.push(bulk);
    // Every operation 2 ms, then 1.5 ms: a linear scale.
    retimed(&mut result.phases[0], |_| 2_000);
    retimed(&mut result.phases[1], |_| 1_500);
    let page = render(&result);
    let run = chart_tag(&page, "run-latency");
    assert!(!run.contains("data-log"), "{run}");
    assert!(run.contains("from 1.50 to 2.00 ms, linear scale"), "{run}");
    // The second phase 500 ms: it would flatten the first into the axis.
    retimed(&mut result.phases[1], |_| 500_000);
    let page = render(&result);
    let run = chart_tag(&page, "run-latency");
    assert!(run.contains("data-log=\"\""), "{run}");
    assert!(run.contains("from 2.00 to 500 ms, log scale"), "{run}");
    // Each phase's own chart over time judges its own spread.
    let phase = chart_tag(&page, "latency");
    assert!(!phase.contains("data-log"), "{phase}");
}

#[test]
fn the_percentile_caption_is_computed_from_the_phase() {
    let mut result = super::super::sample::result();
    let mut more = result.phases[0].clone();
    more.name = "more".to_string();
    more.started_at_ms += 5_000;
    let mut h = crate::metrics::recorder::new_histogram();
    for v in 1..=1_000u64 {
        h.record(v * 10).unwrap();
    }
    more.operations[1].latency = crate::results::build::latency(&h);
    result.phases.push(more);
    let page = render(&result);
    let captions: Vec<&str> = page
        .match_indices("data-chart=\"spectrum\"")
        .map(|(at, _)| &page[page[..at].rfind("<figure").unwrap()..at])
        .collect();
    assert_eq!(captions.len(), 2);
    // 3 creates and 6 reads; then 1,000 reads.
    assert!(
        captions[0].contains("Latency by percentile, to 83.3 %"),
        "{}",
        captions[0]
    );
    assert!(captions[0].contains("create 3 operations, 66.7 %; read 6 operations, 83.3 %"));
    assert!(
        captions[1].contains("Latency by percentile, to 99.9 %"),
        "{}",
        captions[1]
    );
    assert!(captions[1].contains("read 1,000 operations, 99.9 %"));
    assert!(!page.contains("(8 operations: 87.5 %)"), "no fixed example");
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

#[test]
fn the_environment_is_a_table_of_facts_escaped_like_all_page_text() {
    use crate::results::environment::{ClientEnvironment, ServerEnvironment};
    let mut result = super::super::sample::result();
    let old = render(&result);
    assert!(old.contains(
        "<h2>Environment</h2>\n<p class=\"muted\">This result was written before sofabench recorded"
    ));
    result.nodes[0].client = Some(ClientEnvironment {
        sofabench: "0.1.0".to_string(),
        cpu: Some("<script>alert(1)</script>".to_string()),
        cores: Some(2),
        ..ClientEnvironment::default()
    });
    result.nodes[0].server = Some(ServerEnvironment {
        product: Some("PouchDB Server".to_string()),
        unknown_because: vec!["_membership: <b>401</b>".to_string()],
        ..ServerEnvironment::default()
    });
    let page = render(&result);
    let row = |name: &str, value: &str| {
        format!("<tr><td><code>{name}</code></td><td class=\"mono\">{value}</td></tr>")
    };
    assert!(
        page.contains(&row("client.cpu", "&lt;script&gt;alert(1)&lt;/script&gt;")),
        "{page}"
    );
    assert!(!page.contains("<script>alert"));
    assert!(page.contains(&row("client.cores", "2")));
    assert!(page.contains(&row("server.product", "PouchDB Server")));
    assert!(page.contains(&row("server.version", "unknown")));
    assert!(page.contains("<li>_membership: &lt;b&gt;401&lt;/b&gt;</li>"));
    assert!(at(&page, "<section id=\"environment\"") < at(&page, "<section id=\"configuration\""));
}

#[test]
fn a_result_of_many_machines_with_long_names_gets_a_bounded_first_line() {
    let mut result = super::super::sample::result();
    let machine = result.nodes[0].clone();
    result.nodes = (0..10_000)
        .map(|i| {
            let mut node = machine.clone();
            node.host = format!("{i}-{}\u{202e}", "h".repeat(5_000));
            node
        })
        .collect();
    let page = render(&result);
    let first = page.lines().find(|l| l.contains("client ")).unwrap();
    assert!(first.len() < 4 * 1024, "{} bytes", first.len());
    assert!(first.contains("and 9992 more"), "{first}");
    assert!(!page.contains('\u{202e}'));
}
