//! The replication jobs' state once per interval, from `_scheduler/jobs` (CouchDB 2.1
//! and later). A server without it (PouchDB Server) is noted once and not asked again:
//! the lag and the documents replicated are measured on the replicas' feeds anyway.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::driver::{Client, Method};
use crate::engine::actions::request;
use crate::metrics::coarse::{Coarsen, Series};
use crate::metrics::replication::JobLook;
use crate::text::{Quoted, Redact};

const JOBS: &str = "/_scheduler/jobs";

/// One look: each job's state at an interval's end.
#[derive(Debug, Default)]
pub struct JobsAt(pub Vec<JobLook>);

impl Coarsen for JobsAt {
    /// A merged interval keeps the jobs' state at its end.
    fn absorb(&mut self, later: JobsAt) {
        *self = later;
    }
}

/// What the looks found, shared with the phase.
#[derive(Debug, Default)]
pub struct JobLog {
    /// At most `--max-intervals` looks, merged as they fill.
    pub looks: Series<JobsAt>,
    /// Why the server was not asked any more, once.
    pub missing: Option<String>,
    pub failures: u64,
    pub last_failure: Option<String>,
}

impl JobLog {
    /// What the report says of the looks that could not be made.
    pub fn notes(&self) -> Vec<String> {
        let mut notes: Vec<String> = self.missing.iter().cloned().collect();
        if let Some(last) = &self.last_failure {
            notes.push(format!(
                "{} looks at {JOBS} failed (the last: {last}); those intervals have no job state",
                self.failures
            ));
        }
        notes
    }
}

/// The longest name of a job's event kept (CouchDB's are words like `crashed`).
const EVENT: usize = 32;

/// The jobs of `documents` in one `_scheduler/jobs` answer, each as a look at `elapsed`,
/// with `secrets` hidden in what is kept of the server's words (a job's event may quote
/// the credentials it was given).
pub fn looks(
    answer: &Value,
    documents: &[String],
    elapsed: f64,
    secrets: &(impl Redact + ?Sized),
) -> Vec<JobLook> {
    let jobs = answer["jobs"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    documents
        .iter()
        .map(|document| {
            let job = jobs
                .iter()
                .find(|j| j["doc_id"].as_str() == Some(document.as_str()));
            let info = job.map(|j| &j["info"]);
            let count = |name: &str| info.and_then(|i| i[name].as_u64());
            JobLook {
                elapsed_seconds: elapsed,
                document: document.clone(),
                last_event: job
                    .and_then(|j| j["history"][0]["type"].as_str())
                    .map(|event| Quoted::of_text(event, secrets, EVENT).into_string()),
                docs_written: count("docs_written"),
                changes_pending: count("changes_pending"),
                doc_write_failures: count("doc_write_failures"),
            }
        })
        .collect()
}

/// One look; `false` when the server has no `_scheduler/jobs` and is not to be asked again.
async fn look(
    client: &mut Client,
    documents: &[String],
    started: Instant,
    log: &Mutex<JobLog>,
) -> bool {
    let answer = request(client, Method::Get, JOBS, None).await;
    let elapsed = started.elapsed().as_secs_f64();
    let mut log = log.lock().unwrap_or_else(|p| p.into_inner());
    match answer {
        Ok(answer) if answer.status == 200 => {
            let found = looks(
                &answer.json,
                documents,
                elapsed,
                &client.endpoint().credential,
            );
            log.looks.push(JobsAt(found));
        }
        Ok(answer) if matches!(answer.status, 400 | 404 | 405) => {
            log.missing = Some(format!(
                "the server has no {JOBS} (answered {}; PouchDB Server has none): the replication jobs' state per interval is not known, their lag and documents/s are measured on the replicas",
                answer.status
            ));
            return false;
        }
        Ok(answer) => {
            log.failures += 1;
            let said = format!("{}: {}", answer.status, answer.reason());
            let secrets = &client.endpoint().credential;
            log.last_failure = Some(Quoted::message(&said, secrets));
        }
        Err(e) => {
            log.failures += 1;
            log.last_failure = Some(e);
        }
    }
    true
}

/// Looks at the jobs of `documents` at every interval's end from `started`, until aborted.
pub async fn sample(
    mut client: Client,
    documents: Vec<String>,
    (started, interval): (Instant, Duration),
    log: Arc<Mutex<JobLog>>,
) {
    let interval = interval.max(Duration::from_millis(1));
    let mut ticks =
        tokio::time::interval_at(tokio::time::Instant::from_std(started) + interval, interval);
    loop {
        ticks.tick().await;
        if !look(&mut client, &documents, started, &log).await {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recorded_couchdb_answer_gives_each_document_s_job() {
        let answer: Value = serde_json::from_str(include_str!(
            "../../../tests/fixtures/couchdb/scheduler_jobs.json"
        ))
        .unwrap();
        let documents = ["rep1".to_string(), "gone".to_string()];
        let found = looks(&answer, &documents, 2.0, &());
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].last_event.as_deref(), Some("started"));
        assert_eq!(found[0].docs_written, Some(3427));
        assert_eq!(found[0].changes_pending, None, "CouchDB says null");
        assert_eq!(found[0].doc_write_failures, Some(0));
        assert_eq!(found[1].last_event, None);
        assert_eq!(found[1].docs_written, None);
    }

    /// A job's event is the server's word: kept with the run's secrets hidden and its
    /// control characters shown, however the server wrote them.
    #[test]
    fn a_job_event_that_quotes_the_password_keeps_it_hidden() {
        let secrets = crate::target::Credentials {
            user: "admin".to_string(),
            password: "Pa\"ss\\Zebra%42".to_string(),
        };
        let answer = serde_json::json!({"jobs": [{
            "doc_id": "rep1",
            "history": [{"type": "Pa\"ss\\Zebra%42\u{1b}]0;pwned\u{7}"}],
        }]});
        let found = looks(&answer, &["rep1".to_string()], 1.0, &secrets);
        assert_eq!(
            found[0].last_event.as_deref(),
            Some("***\\x1b]0;pwned\\x07")
        );
    }

    #[test]
    fn failures_and_a_missing_endpoint_are_noted() {
        let log = JobLog {
            missing: Some("no jobs".to_string()),
            failures: 2,
            last_failure: Some("500: x".to_string()),
            ..JobLog::default()
        };
        let notes = log.notes();
        assert_eq!(notes.len(), 2);
        assert!(notes[1].starts_with("2 looks"));
    }
}
