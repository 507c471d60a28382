//! `--hot-docs N`: the documents every connection's updates share, made before the first
//! phase with `_bulk_docs` (not timed: they are the stage, not the play). One that is
//! there already (another client machine of the run, or `--reuse`) is kept: its revision
//! is fetched by the first update that needs it.

use std::collections::HashMap;

use crate::driver::Method;
use crate::driver::admin::Admin;
use crate::driver::responses::{self, BulkItem};
use crate::engine::kept::MostKept;
use crate::exit::Failed;
use crate::template::DocumentWriter;
use crate::workload::{DocumentIds, HotDocuments};

/// Documents sent per `_bulk_docs` request while making them.
const BATCH: usize = 1000;

/// Makes `count` hot documents of the template's form and learns their revisions.
pub async fn make(
    admin: &mut Admin,
    writer: &DocumentWriter,
    ids: &DocumentIds,
    (count, most): (u64, MostKept),
) -> Result<HotDocuments, Failed> {
    let mut hot = HotDocuments::named(ids, count);
    let path = format!("{}/_bulk_docs", admin.database_path());
    for from in (0..hot.len()).step_by(BATCH) {
        let to = (from + BATCH).min(hot.len());
        let mut body = b"{\"docs\":[".to_vec();
        for k in from..to {
            if k > from {
                body.push(b',');
            }
            writer.write(&mut body, k as u64, 1, Some(&hot.ids[k]), None);
        }
        body.extend_from_slice(b"]}");
        let answer = admin
            .send_json(Method::Post, &path, Some(&body), "making the hot documents")
            .await
            .map_err(super::runner::setup_failed)?;
        if !(200..300).contains(&answer.status) {
            return Err(Failed::run(format!(
                "the server refused the hot documents (--hot-docs), status {}: {}",
                answer.status,
                admin.quote(&answer.body)
            )));
        }
        learn(&mut hot, from..to, &answer.body, most).map_err(|problem| {
            Failed::run(format!(
                "making the hot documents (--hot-docs): {problem}: {}",
                admin.quote(&answer.body)
            ))
        })?;
    }
    Ok(hot)
}

/// Takes the revisions of documents `range` from a `_bulk_docs` answer, matched by id;
/// a conflict leaves the document's revision unknown. A revision longer than `most` is
/// not kept.
fn learn(
    hot: &mut HotDocuments,
    range: std::ops::Range<usize>,
    body: &[u8],
    most: MostKept,
) -> Result<(), String> {
    let rows = responses::bulk_rows(body).ok_or("the answer is not a list of rows")?;
    let places: HashMap<&str, usize> = range.clone().map(|k| (hot.ids[k].as_str(), k)).collect();
    let mut revs = Vec::new();
    for row in rows {
        let k = row
            .id
            .as_deref()
            .and_then(|id| places.get(id).copied())
            .ok_or("a row names no document the request held")?;
        match row.item {
            BulkItem::Stored(rev) if !most.allows(rev.text_len()) => {
                return Err(format!(
                    "a revision of {} bytes, longer than --max-kept-value ({} bytes)",
                    rev.text_len(),
                    most.0
                ));
            }
            BulkItem::Stored(rev) => revs.push((k, Some(rev))),
            BulkItem::Failed(word) if word == "conflict" => revs.push((k, None)),
            BulkItem::Failed(word) => {
                return Err(format!("document {:?} was refused ({word})", hot.ids[k]));
            }
        }
    }
    if revs.len() != range.len() {
        return Err(format!("{} rows for {} documents", revs.len(), range.len()));
    }
    for (k, rev) in revs {
        hot.revs[k] = rev;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::Rev;

    const REV: &str = "1-0123456789abcdef0123456789abcdef";

    #[test]
    fn revisions_are_matched_by_id_and_a_conflict_leaves_one_unknown() {
        let mut hot = HotDocuments::named(&DocumentIds::new("h"), 3);
        let body = format!(
            r#"[{{"id":"h-hot-000002","rev":"{REV}"}},{{"id":"h-hot-000000","error":"conflict"}},{{"id":"h-hot-000001","rev":"{REV}"}}]"#
        );
        learn(&mut hot, 0..3, body.as_bytes(), MostKept::DEFAULT).unwrap();
        assert_eq!(hot.revs, vec![None, Rev::parse(REV), Rev::parse(REV)]);
    }

    #[test]
    fn refusals_strangers_and_missing_rows_are_problems() {
        let mut hot = HotDocuments::named(&DocumentIds::new("h"), 2);
        let refused = r#"[{"id":"h-hot-000000","error":"forbidden"},{"id":"h-hot-000001","error":"conflict"}]"#;
        assert!(
            learn(&mut hot, 0..2, refused.as_bytes(), MostKept::DEFAULT)
                .unwrap_err()
                .contains("forbidden")
        );
        let stranger = format!(r#"[{{"id":"x","rev":"{REV}"}}]"#);
        assert!(learn(&mut hot, 0..2, stranger.as_bytes(), MostKept::DEFAULT).is_err());
        let short = format!(r#"[{{"id":"h-hot-000000","rev":"{REV}"}}]"#);
        assert!(
            learn(&mut hot, 0..2, short.as_bytes(), MostKept::DEFAULT)
                .unwrap_err()
                .contains("1 rows")
        );
        assert!(learn(&mut hot, 0..2, b"{}", MostKept::DEFAULT).is_err());
        let long = format!(r#"[{{"id":"h-hot-000000","rev":"1-{}"}}]"#, "a".repeat(40));
        assert!(
            learn(&mut hot, 0..1, long.as_bytes(), MostKept(40))
                .unwrap_err()
                .contains("longer than --max-kept-value (40 bytes)")
        );
        assert_eq!(hot.revs, vec![None, None]);
    }
}
