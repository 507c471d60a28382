//! Existing data (`--key-range`, `--key-sample`): the documents reads, updates and
//! deletes target, known before the first phase. A sample is drawn from `_all_docs`,
//! read in pages so that no answer is large however many documents the database holds,
//! and kept by reservoir sampling so that every id has the same chance whatever its place.

use rand::RngExt;
use serde::Deserialize;

use crate::driver::Method;
use crate::driver::admin::Admin;
use crate::engine::kept::MostKept;
use crate::exit::Failed;
use crate::report::numbers::grouped;
use crate::seed::{self, Rng};
use crate::workload::{Existing, ExistingKeys, ExistingSource, ExistingWrites};

/// Ids asked for per `_all_docs` page.
const PAGE: usize = 10_000;

#[derive(Deserialize)]
struct Page {
    rows: Vec<Row>,
}

#[derive(Deserialize)]
struct Row {
    id: String,
}

/// The existing documents `source` names, sampled from the database when it asks for a
/// sample (the seed decides which ids, of those no longer than `most`).
pub async fn find(
    admin: &mut Admin,
    (source, writes): (ExistingSource, ExistingWrites),
    seed: u64,
    most: MostKept,
) -> Result<(Existing, Option<String>), Failed> {
    let (keys, note) = match source {
        ExistingSource::Range { low, high, scheme } => {
            (ExistingKeys::Range { low, high, scheme }, None)
        }
        ExistingSource::Sample(n) => {
            let mut rng = seed::rng(seed::derive(seed, seed::label::EXISTING));
            let sampler = sample(admin, Sampler::new(n, most), &mut rng).await?;
            let note = sampler.note()?;
            (ExistingKeys::Sample(sampler.kept), Some(note))
        }
    };
    Ok((Existing { keys, writes }, note))
}

/// The sampler, having drawn its ids evenly from all of `_all_docs` but design documents
/// and ids too long to keep.
async fn sample(admin: &mut Admin, mut sampler: Sampler, rng: &mut Rng) -> Result<Sampler, Failed> {
    let mut after: Option<String> = None;
    loop {
        let rows = page(admin, after.as_deref()).await?;
        match sampler.take(&rows, after.as_deref(), rng) {
            Ok(Some(next)) => after = Some(next),
            Ok(None) => return Ok(sampler),
            Err(problem) => return Err(Failed::run(format!("--key-sample: {problem}"))),
        }
    }
}

/// The most `_all_docs` pages read for a sample: a billion ids. A server that pages on
/// without end cannot keep the run from starting for ever.
const MOST_PAGES: u64 = 100_000;

/// A sample drawn page by page.
struct Sampler {
    n: u64,
    /// The longest id kept (`--max-kept-value`): longer ones are skipped, and counted.
    most: MostKept,
    kept: Vec<Box<str>>,
    seen: u64,
    too_long: u64,
    pages: u64,
}

impl Sampler {
    fn new(n: u64, most: MostKept) -> Sampler {
        Sampler {
            n,
            most,
            kept: Vec::new(),
            seen: 0,
            too_long: 0,
            pages: 0,
        }
    }

    /// The line that says what was sampled, or why nothing could be.
    fn note(&self) -> Result<String, Failed> {
        let skipped = format!(
            "{} ids longer than --max-kept-value ({} bytes) skipped",
            grouped(self.too_long),
            self.most.0
        );
        if self.kept.is_empty() && self.too_long > 0 {
            return Err(Failed::bad_input(format!(
                "--key-sample: no id to sample: {skipped}; raise --max-kept-value to sample them"
            )));
        }
        if self.kept.is_empty() {
            return Err(Failed::bad_input(
                "--key-sample: the database holds no document to sample (design documents aside); load it first, or drop --key-sample",
            ));
        }
        let mut note = format!(
            "existing data: {} ids sampled from {} documents in _all_docs",
            grouped(self.kept.len() as u64),
            grouped(self.seen)
        );
        if self.too_long > 0 {
            note.push_str(&format!("; {skipped}"));
        }
        Ok(note)
    }

    /// Takes one page, read after id `after`; returns the id to read the next page after,
    /// or `None` when this page was the last.
    fn take(
        &mut self,
        rows: &[Row],
        after: Option<&str>,
        rng: &mut Rng,
    ) -> Result<Option<String>, String> {
        self.pages += 1;
        for row in rows {
            if row.id.starts_with("_design/") {
                continue;
            }
            if !self.most.allows(row.id.len()) {
                self.too_long += 1;
                continue;
            }
            self.seen += 1;
            keep(&mut self.kept, self.n, self.seen, &row.id, rng);
        }
        let Some(last) = rows.last().filter(|_| rows.len() >= PAGE) else {
            return Ok(None);
        };
        if Some(last.id.as_str()) == after {
            return Err(format!(
                "_all_docs answered the page after {:?} with that id again: it does not page on",
                last.id
            ));
        }
        if self.pages >= MOST_PAGES {
            return Err(format!(
                "_all_docs went on past {MOST_PAGES} pages of {PAGE} ids; sample a database of fewer documents, or use --key-range"
            ));
        }
        Ok(Some(last.id.clone()))
    }
}

/// Reservoir sampling: the `seen`-th id replaces a kept one with chance `n / seen`.
fn keep(kept: &mut Vec<Box<str>>, n: u64, seen: u64, id: &str, rng: &mut Rng) {
    if (kept.len() as u64) < n {
        kept.push(id.into());
        return;
    }
    let slot = rng.random_range(0..seen);
    if slot < n {
        kept[slot as usize] = id.into();
    }
}

/// One page of `_all_docs`: the ids after `after` (from the first without one).
async fn page(admin: &mut Admin, after: Option<&str>) -> Result<Vec<Row>, Failed> {
    let mut path = format!("{}/_all_docs?limit={PAGE}", admin.database_path());
    if let Some(after) = after {
        // The key is JSON, then URL-encoded; `skip=1` leaves out the one already seen.
        let key = serde_json::to_string(after).unwrap_or_default();
        let encoded: String = url::form_urlencoded::byte_serialize(key.as_bytes()).collect();
        path.push_str("&skip=1&startkey=");
        path.push_str(&encoded);
    }
    let answer = admin
        .send_json(Method::Get, &path, None, "sampling ids for --key-sample")
        .await
        .map_err(super::runner::setup_failed)?;
    if answer.status != 200 {
        return Err(Failed::run(format!(
            "--key-sample: _all_docs answered status {}: {}",
            answer.status,
            admin.quote(&answer.body)
        )));
    }
    let page: Page = serde_json::from_slice(&answer.body).map_err(|e| {
        Failed::run(format!(
            "--key-sample: _all_docs answered something that is not a list of rows ({e}): {}",
            admin.quote(&answer.body)
        ))
    })?;
    if page.rows.len() > PAGE {
        return Err(Failed::run(format!(
            "--key-sample: _all_docs answered {} rows to a page of {PAGE}",
            page.rows.len()
        )));
    }
    Ok(page.rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(ids: impl Iterator<Item = String>) -> Vec<Row> {
        ids.map(|id| Row { id }).collect()
    }

    #[test]
    fn pages_go_on_until_a_short_one_and_never_round_in_a_circle() {
        let mut rng = seed::rng(1);
        let mut sampler = Sampler::new(5, MostKept::DEFAULT);
        let first = rows((0..PAGE).map(|k| format!("a{k:06}")));
        let next = sampler.take(&first, None, &mut rng).unwrap();
        assert_eq!(next.as_deref(), Some("a009999"));
        let design = rows(["_design/x".to_string(), "b".to_string()].into_iter());
        assert_eq!(sampler.take(&design, next.as_deref(), &mut rng), Ok(None));
        assert_eq!((sampler.seen, sampler.kept.len()), (PAGE as u64 + 1, 5));
        // A server that answers the same full page again does not keep the run waiting.
        let mut circling = Sampler::new(5, MostKept::DEFAULT);
        let after = circling.take(&first, None, &mut rng).unwrap();
        let problem = circling
            .take(&first, after.as_deref(), &mut rng)
            .unwrap_err();
        assert!(problem.contains("does not page on"), "{problem}");
        // Nor one that pages on without end.
        let mut endless = Sampler::new(1, MostKept::DEFAULT);
        endless.pages = MOST_PAGES - 1;
        let problem = endless.take(&first, Some("z"), &mut rng).unwrap_err();
        assert!(problem.contains("100000 pages"), "{problem}");
    }

    #[test]
    fn ids_too_long_to_keep_are_skipped_and_counted() {
        let mut rng = seed::rng(1);
        let mut sampler = Sampler::new(10, MostKept(8));
        let page = rows(["short".to_string(), "x".repeat(9), "ok".to_string()].into_iter());
        assert_eq!(sampler.take(&page, None, &mut rng), Ok(None));
        assert_eq!(
            (sampler.kept.len(), sampler.seen, sampler.too_long),
            (2, 2, 1)
        );
        let note = sampler.note().ok().unwrap();
        assert!(
            note.ends_with("; 1 ids longer than --max-kept-value (8 bytes) skipped"),
            "{note}"
        );
        let mut none = Sampler::new(10, MostKept(8));
        let page = rows(std::iter::once("x".repeat(9)));
        assert_eq!(none.take(&page, None, &mut rng), Ok(None));
        assert!(none.note().is_err());
    }

    #[test]
    fn every_id_has_the_same_chance_to_be_kept() {
        let mut rng = seed::rng(9);
        let mut times = [0u32; 10];
        for _ in 0..20_000 {
            let mut kept = Vec::new();
            for (i, id) in ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9"]
                .iter()
                .enumerate()
            {
                keep(&mut kept, 3, i as u64 + 1, id, &mut rng);
            }
            assert_eq!(kept.len(), 3);
            for id in kept {
                times[id.parse::<usize>().unwrap()] += 1;
            }
        }
        // Each of 10 ids is kept 3 times in 10: 6,000 of 20,000, give or take.
        for (id, n) in times.iter().enumerate() {
            assert!(
                (5_600..6_400).contains(n),
                "id {id} kept {n} times: {times:?}"
            );
        }
    }
}
