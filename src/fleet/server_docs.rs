//! The server's side of the convergence check: one database's live documents, each with
//! its winning revision and its conflicts, read in pages of `_all_docs` with
//! `include_docs=true&conflicts=true` (one request a page, each answer bounded).

use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;

use super::converge::{ServerDoc, ServerDocs, sorted};
use crate::driver::{Call, Client, Endpoint, Method};
use crate::workload::rev::Rev;

/// Rows per page.
const PAGE: usize = 500;

/// The largest page answer read: 500 of the fleet's documents with their conflicts'
/// revisions, with room.
const PAGE_BYTES: u64 = 32 * 1024 * 1024;

/// The most documents kept of one database: past it the check is refused, not guessed.
const MOST_DOCUMENTS: usize = 5_000_000;

/// The most conflicts kept of one document.
const MOST_CONFLICTS: usize = 1_000;

/// How long one page may take.
const PAGE_TIMEOUT: Duration = Duration::from_secs(120);

#[derive(Deserialize)]
struct Page {
    rows: Vec<Row>,
}

#[derive(Deserialize)]
struct Row {
    id: String,
    value: Value,
    #[serde(default)]
    doc: Option<Doc>,
}

#[derive(Deserialize)]
struct Value {
    rev: String,
}

#[derive(Deserialize)]
struct Doc {
    #[serde(default, rename = "_conflicts")]
    conflicts: Vec<String>,
}

/// Reads the live documents of `database_path` whose ids `keep` takes.
pub async fn read(
    endpoint: &Arc<Endpoint>,
    database_path: &str,
    keep: impl Fn(&str) -> bool,
) -> Result<ServerDocs, String> {
    let mut client = Client::new(endpoint.limited_to(PAGE_BYTES), Some(PAGE_TIMEOUT));
    let mut docs = ServerDocs::new();
    let mut after: Option<String> = None;
    let mut seen = 0usize;
    loop {
        let rows = page(&mut client, database_path, after.as_deref()).await?;
        let full = rows.len() >= PAGE;
        for row in &rows {
            seen += 1;
            if seen > MOST_DOCUMENTS {
                return Err(format!(
                    "{database_path} holds more than {MOST_DOCUMENTS} documents: too many to check the devices against"
                ));
            }
            if keep(&row.id) {
                docs.insert(row.id.as_str().into(), server_doc(row, database_path)?);
            }
        }
        let Some(last) = rows.last().filter(|_| full) else {
            return Ok(docs);
        };
        if after.as_deref() == Some(last.id.as_str()) {
            return Err(format!(
                "{database_path}/_all_docs answered the page after {:?} with that id again: it does not page on",
                crate::text::cut(&last.id, 80)
            ));
        }
        after = Some(last.id.clone());
    }
}

/// One row as the check keeps it.
fn server_doc(row: &Row, database_path: &str) -> Result<ServerDoc, String> {
    let bad = |what: &str| {
        format!(
            "{database_path}/_all_docs: {:?} has {what}",
            crate::text::cut(&row.id, 80)
        )
    };
    let winner =
        Rev::parse(&row.value.rev).ok_or_else(|| bad("a winning revision that is not one"))?;
    let listed = row.doc.as_ref().map_or(&[][..], |d| &d.conflicts[..]);
    if listed.len() > MOST_CONFLICTS {
        return Err(bad("more conflicts than the check keeps (1,000)"));
    }
    let conflicts = listed
        .iter()
        .map(|c| Rev::parse(c).ok_or_else(|| bad("a conflict that is not a revision")))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(ServerDoc {
        winner,
        conflicts: sorted(conflicts),
    })
}

/// One page: the rows after `after` (from the first without one).
async fn page(
    client: &mut Client,
    database_path: &str,
    after: Option<&str>,
) -> Result<Vec<Row>, String> {
    let mut path =
        format!("{database_path}/_all_docs?include_docs=true&conflicts=true&limit={PAGE}");
    if let Some(after) = after {
        // The key is JSON, then URL-encoded; `skip=1` leaves out the one already seen.
        let key = serde_json::to_string(after).unwrap_or_default();
        path.push_str("&skip=1&startkey=");
        path.extend(url::form_urlencoded::byte_serialize(key.as_bytes()));
    }
    let call = Call {
        method: Method::Get,
        path: &path,
        body: None,
    };
    let answer = client.send(&call).await.map_err(|e| {
        format!(
            "reading {database_path}/_all_docs for the convergence check: {}",
            e.error
        )
    })?;
    let said = || crate::text::Quoted::new(&answer.body, &client.endpoint().credential, 200);
    if answer.status != 200 {
        return Err(format!(
            "{database_path}/_all_docs answered {} to the convergence check: {}",
            answer.status,
            said()
        ));
    }
    let page: Page = serde_json::from_slice(&answer.body).map_err(|e| {
        format!(
            "{database_path}/_all_docs answered what is not a page of documents ({e}): {}",
            said()
        )
    })?;
    if page.rows.len() > PAGE {
        return Err(format!(
            "{database_path}/_all_docs answered {} rows to a page of {PAGE}",
            page.rows.len()
        ));
    }
    Ok(page.rows)
}
