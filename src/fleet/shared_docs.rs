//! The documents every device shares, put on the server before the devices start:
//! each at a revision made from its id alone, written with `new_edits: false`, so that
//! every client machine writes the same revision and writing it twice changes nothing.

use std::sync::Arc;
use std::time::Duration;

use sha2::{Digest, Sha256};

use crate::driver::{Call, Client, Endpoint, Method};
use crate::workload::rev::Rev;

/// Documents per `_bulk_docs`.
const BATCH: usize = 500;

/// The largest answer read: `new_edits: false` answers errors only.
const ANSWER_BYTES: u64 = 4 * 1024 * 1024;

/// The revision a shared document starts at: generation 1, its digest the first 16
/// bytes of the id's SHA-256 (not PouchDB's MD5: any 32 hex digits are a revision).
pub fn first_rev(id: &str) -> Rev {
    let digest = Sha256::digest(id.as_bytes());
    let mut first = [0u8; 16];
    first.copy_from_slice(&digest[..16]);
    Rev::Hex {
        generation: 1,
        digest: first,
    }
}

fn body(ids: &[String]) -> Vec<u8> {
    let docs: Vec<serde_json::Value> = ids
        .iter()
        .map(|id| {
            let rev = super::converge::rev_text(&first_rev(id));
            let digest = rev.split_once('-').map_or("", |(_, d)| d).to_string();
            serde_json::json!({
                "_id": id,
                "_rev": rev,
                "_revisions": { "start": 1, "ids": [digest] },
                "shared": true,
            })
        })
        .collect();
    serde_json::to_vec(&serde_json::json!({ "docs": docs, "new_edits": false })).unwrap_or_default()
}

/// Writes the shared documents `ids` into `database_path`, unless already there.
pub async fn seed(
    endpoint: &Arc<Endpoint>,
    database_path: &str,
    ids: &[String],
    timeout: Duration,
) -> Result<(), String> {
    let mut client = Client::new(endpoint.limited_to(ANSWER_BYTES), Some(timeout));
    let path = format!("{database_path}/_bulk_docs");
    for batch in ids.chunks(BATCH) {
        let body = body(batch);
        let call = Call {
            method: Method::Post,
            path: &path,
            body: Some(&body),
        };
        let answer = client.send(&call).await.map_err(|e| {
            format!(
                "writing the fleet's shared documents to {database_path}: {}",
                e.error
            )
        })?;
        if answer.status != 201 && answer.status != 200 {
            return Err(format!(
                "{path} answered {} to the fleet's shared documents: {}",
                answer.status,
                crate::text::Quoted::new(&answer.body, &client.endpoint().credential, 200)
            ));
        }
        // `new_edits: false` answers only the documents it refused.
        let refused: Vec<serde_json::Value> =
            serde_json::from_slice(&answer.body).unwrap_or_default();
        if let Some(first) = refused.first() {
            return Err(format!(
                "{path} refused {} of the fleet's shared documents, the first: {}",
                refused.len(),
                crate::text::Quoted::of_text(
                    &first.to_string(),
                    &client.endpoint().credential,
                    200
                )
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_revision_comes_from_the_id_alone() {
        assert_eq!(first_rev("a"), first_rev("a"));
        assert_ne!(first_rev("a"), first_rev("b"));
        assert_eq!(first_rev("a").generation(), 1);
        let text = super::super::converge::rev_text(&first_rev("a"));
        assert_eq!(text.len(), 34, "{text}");
    }

    #[test]
    fn the_body_writes_the_revision_with_its_history() {
        let body: serde_json::Value = serde_json::from_slice(&body(&["s-0".into()])).unwrap();
        assert_eq!(body["new_edits"], false);
        let doc = &body["docs"][0];
        let rev = doc["_rev"].as_str().unwrap();
        assert_eq!(
            format!("1-{}", doc["_revisions"]["ids"][0].as_str().unwrap()),
            rev
        );
    }
}
