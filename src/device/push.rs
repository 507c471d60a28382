//! A push: the device's unpushed edits, a batch at a time, offered with `_revs_diff`, the
//! ones the server lacks written with `_bulk_docs` and `new_edits: false` (each with a
//! `_revisions` history reaching back to the revision the server has, so no spurious
//! branch, however long the chain), and the logs written as the profile says.

use serde_json::{Map, Value, json};

use super::Device;
use super::cycle::Cycle;
use super::error::{Step, SyncError};
use super::fetch::rev_text;
use super::http::{self, DeviceHttp};
use super::replica::Leaf;
use super::seq::Seq;
use crate::driver::Method;
use crate::workload::Rev;

/// One unpushed chain's tip and its history down to its base.
struct Offer {
    id: Box<str>,
    tip: Leaf,
    history: Vec<Rev>,
}

impl Device {
    /// The batches of one push (see [`Device::push`]); the caller has checked there is
    /// something to push.
    pub(super) async fn push_batches(
        &mut self,
        http: &mut impl DeviceHttp,
        cycle: &mut Cycle,
    ) -> Result<(), SyncError> {
        let db = self.spec.scope.path().to_string();
        self.pushing
            .session(http, cycle, &db, &self.spec.name)
            .await?;
        let batch_size = self.spec.profile.batch_size.max(1) as usize;
        // A cursor over the unpushed documents, so that one refused stays for the next
        // push without being offered again in this one.
        let mut after = 0u64;
        loop {
            let batch = self.replica.unpushed_since(after, batch_size);
            let Some(&(last, _)) = batch.last() else {
                break;
            };
            after = last;
            cycle.changes_read = cycle.changes_read.saturating_add(batch.len() as u64);
            let offers: Vec<Offer> = batch
                .iter()
                .flat_map(|(_, id)| {
                    self.replica
                        .unpushed_of(id)
                        .into_iter()
                        .map(|(tip, history)| Offer {
                            id: id.clone(),
                            tip,
                            history,
                        })
                })
                .collect();
            self.push_batch(http, cycle, &db, offers).await?;
            if let Some(session) = self.pushing.session_mut() {
                let further = session.position.number().unwrap_or(0).max(last);
                session.advance(Seq::of_number(further));
            }
            if self.pushing.checkpoint_due(self.spec.profile.checkpoint) {
                self.pushing.checkpoint(http, cycle, &db).await?;
            }
        }
        Ok(())
    }

    async fn push_batch(
        &mut self,
        http: &mut impl DeviceHttp,
        cycle: &mut Cycle,
        db: &str,
        offers: Vec<Offer>,
    ) -> Result<(), SyncError> {
        let lacking = revs_diff(http, cycle, db, &offers).await?;
        let (missing, held): (Vec<Offer>, Vec<Offer>) = offers.into_iter().partition(|offer| {
            lacking
                .iter()
                .any(|(id, rev)| **id == *offer.id && *rev == offer.tip.rev)
        });
        cycle.missing = cycle.missing.saturating_add(missing.len() as u64);
        // The server has these already (a push whose answer was lost).
        for offer in &held {
            self.replica.pushed(&offer.id, &offer.tip.rev);
        }
        if missing.is_empty() {
            return Ok(());
        }
        let (refused, said) = self.bulk_docs(http, cycle, db, &missing).await?;
        if cycle.refused_said.is_none() {
            cycle.refused_said = said;
        }
        for offer in missing {
            if refused.iter().any(|id| **id == *offer.id) {
                continue;
            }
            self.replica.pushed(&offer.id, &offer.tip.rev);
            cycle.written = cycle.written.saturating_add(1);
            cycle.landed.push((offer.id, offer.tip.rev));
        }
        cycle.failures = cycle.failures.saturating_add(refused.len() as u64);
        Ok(())
    }

    /// `_bulk_docs` with `new_edits: false`; the ids the server refused, and its first
    /// error row, quoted. Such a write answers only its errors (`[]` when all is well;
    /// PouchDB Server and CouchDB alike, e.g. `{"id":…,"error":"forbidden","reason":…}`
    /// for a `validate_doc_update` that throws): an error row names the id.
    async fn bulk_docs(
        &self,
        http: &mut impl DeviceHttp,
        cycle: &mut Cycle,
        db: &str,
        offers: &[Offer],
    ) -> Result<(Vec<String>, Option<String>), SyncError> {
        let docs: Vec<Value> = offers.iter().map(|offer| self.body(offer)).collect();
        let body = json!({"docs": docs, "new_edits": false}).to_string();
        let path = format!("{db}/_bulk_docs");
        let answer = http::exchange(
            http,
            cycle,
            Step::BulkDocs,
            (Method::Post, &path),
            Some(body.as_bytes()),
        )
        .await?;
        if !matches!(answer.status, 200..=202) {
            return Err(http::status_error(http, Step::BulkDocs, &answer));
        }
        let rows: Value = serde_json::from_slice(&answer.body)
            .map_err(|_| SyncError::bad(Step::BulkDocs, "not JSON"))?;
        let rows = rows
            .as_array()
            .ok_or_else(|| SyncError::bad(Step::BulkDocs, "not a list"))?;
        let errors = || {
            rows.iter()
                .take(offers.len())
                .filter(|row| row.get("error").is_some())
        };
        let said = errors()
            .next()
            .map(|row| http.quote(row.to_string().as_bytes()));
        let mut refused: Vec<String> = errors()
            .filter_map(|row| row.get("id")?.as_str())
            .filter(|id| offers.iter().any(|offer| &*offer.id == *id))
            .map(str::to_string)
            .collect();
        refused.sort_unstable();
        refused.dedup();
        Ok((refused, said))
    }

    /// The document written for an offer: its revision and history, and a body made from
    /// its id and revision, padded to the spec's `doc_bytes` (a deletion carries none).
    fn body(&self, offer: &Offer) -> Value {
        let mut doc = Map::new();
        doc.insert("_id".into(), json!(&*offer.id));
        let rev = rev_text(&offer.tip.rev);
        let ids: Vec<String> = offer
            .history
            .iter()
            .map(|rev| {
                let text = rev_text(rev);
                text.split_once('-')
                    .map_or(text.clone(), |(_, hash)| hash.to_string())
            })
            .collect();
        doc.insert(
            "_revisions".into(),
            json!({"start": offer.tip.rev.generation(), "ids": ids}),
        );
        if offer.tip.deleted {
            doc.insert("_rev".into(), json!(rev));
            doc.insert("_deleted".into(), json!(true));
            return Value::Object(doc);
        }
        doc.insert("device".into(), json!(self.spec.name));
        let so_far = Value::Object(doc.clone()).to_string().len() + rev.len() + 24;
        let pad_len = (self.spec.doc_bytes as usize).saturating_sub(so_far);
        let hash = rev.split_once('-').map_or("0", |(_, hash)| hash);
        let pad: String = hash.chars().cycle().take(pad_len).collect();
        doc.insert("pad".into(), json!(pad));
        doc.insert("_rev".into(), json!(rev));
        Value::Object(doc)
    }
}

/// `_revs_diff` of the offers' tips: those the server lacks.
async fn revs_diff(
    http: &mut impl DeviceHttp,
    cycle: &mut Cycle,
    db: &str,
    offers: &[Offer],
) -> Result<Vec<(Box<str>, Rev)>, SyncError> {
    let mut asked = Map::new();
    for offer in offers {
        let revs = asked
            .entry(offer.id.to_string())
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(revs) = revs {
            revs.push(json!(rev_text(&offer.tip.rev)));
        }
    }
    let body = Value::Object(asked).to_string();
    let path = format!("{db}/_revs_diff");
    let answer = http::exchange(
        http,
        cycle,
        Step::RevsDiff,
        (Method::Post, &path),
        Some(body.as_bytes()),
    )
    .await?;
    if answer.status != 200 {
        return Err(http::status_error(http, Step::RevsDiff, &answer));
    }
    let diff: Value = serde_json::from_slice(&answer.body)
        .map_err(|_| SyncError::bad(Step::RevsDiff, "not JSON"))?;
    let diff = diff
        .as_object()
        .ok_or_else(|| SyncError::bad(Step::RevsDiff, "not an object"))?;
    // Only what was offered counts as missing; anything else the server names is not read.
    Ok(offers
        .iter()
        .filter(|offer| {
            diff.get(&*offer.id)
                .and_then(|entry| entry.get("missing"))
                .and_then(Value::as_array)
                .is_some_and(|missing| {
                    let tip = rev_text(&offer.tip.rev);
                    missing.iter().any(|rev| rev.as_str() == Some(tip.as_str()))
                })
        })
        .map(|offer| (offer.id.clone(), offer.tip.rev.clone()))
        .collect())
}
