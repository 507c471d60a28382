//! Existing data (`--key-range`, `--key-sample`): the documents reads, updates and
//! deletes target, known before the first phase. A sample is drawn from `_all_docs`,
//! read in pages so that no answer is large however many documents the database holds,
//! and kept by reservoir sampling so that every id has the same chance whatever its place.

use rand::RngExt;
use serde::Deserialize;

use crate::driver::Method;
use crate::driver::admin::Admin;
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
/// sample (the seed decides which ids).
pub async fn find(
    admin: &mut Admin,
    source: ExistingSource,
    writes: ExistingWrites,
    seed: u64,
) -> Result<(Existing, Option<String>), Failed> {
    let (keys, note) = match source {
        ExistingSource::Range { low, high, scheme } => {
            (ExistingKeys::Range { low, high, scheme }, None)
        }
        ExistingSource::Sample(n) => {
            let mut rng = seed::rng(seed::derive(seed, seed::label::EXISTING));
            let (ids, seen) = sample(admin, n, &mut rng).await?;
            if ids.is_empty() {
                return Err(Failed::bad_input(
                    "--key-sample: the database holds no document to sample (design documents aside); load it first, or drop --key-sample",
                ));
            }
            let note = format!(
                "existing data: {} ids sampled from {} documents in _all_docs",
                grouped(ids.len() as u64),
                grouped(seen)
            );
            (ExistingKeys::Sample(ids), Some(note))
        }
    };
    Ok((Existing { keys, writes }, note))
}

/// Up to `n` ids drawn evenly from all of `_all_docs` but design documents, and how many
/// ids were seen.
async fn sample(admin: &mut Admin, n: u64, rng: &mut Rng) -> Result<(Vec<Box<str>>, u64), Failed> {
    let mut kept: Vec<Box<str>> = Vec::new();
    let mut seen: u64 = 0;
    let mut after: Option<String> = None;
    loop {
        let rows = page(admin, after.as_deref()).await?;
        let full = rows.len() >= PAGE;
        for row in &rows {
            if row.id.starts_with("_design/") {
                continue;
            }
            seen += 1;
            keep(&mut kept, n, seen, &row.id, rng);
        }
        match rows.last() {
            Some(last) if full => after = Some(last.id.clone()),
            _ => return Ok((kept, seen)),
        }
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
