//! The Mango indexes and design documents the declared queries need: each is created,
//! and its build timed from its creation until a query that waits for it answers.

use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;

use super::builds::IndexUnit;
use super::{Query, QueryKind, field};
use crate::driver::Method;
use crate::driver::admin::{Admin, SetupError};
use crate::results::{BuiltWhen, IndexBuildResult};
use crate::template::DocumentWriter;

/// Checks before anything is sent that partition queries go to a partitioned database.
pub fn check_partitions(partitioned: bool, queries: &[Arc<Query>]) -> Result<(), String> {
    match queries.iter().find(|q| q.partition) {
        Some(query) if !partitioned => Err(format!(
            "query {:?}: partition = true needs a partitioned database; add --db-partitioned \
             (Apache CouchDB 3 or later), or leave partition out",
            query.name
        )),
        _ => Ok(()),
    }
}

/// Checks before anything is sent that every query's field is a top-level value of the
/// template's documents, and that a range's field is a number or a string.
pub fn check_fields(writer: &DocumentWriter, queries: &[Arc<Query>]) -> Result<(), String> {
    let mut document = Vec::new();
    writer.write(&mut document, 0, 1, None, None);
    for query in queries {
        let draw = match &query.kind {
            QueryKind::Find(find) => &find.draw,
            QueryKind::View(view) => &view.draw,
            QueryKind::AllDocs(_) | QueryKind::ChangesRead(_) => continue,
        };
        let value = field::top_level_value(&document, draw.quoted_field.as_bytes())
            .ok_or_else(|| {
                format!(
                    "query {:?}: field {} is not a top-level field of the template's documents ({}); name one of them (the built-in mango and views scenarios take it from --query-field)",
                    query.name,
                    draw.quoted_field,
                    top_level_fields(&document)
                )
            })?;
        let ranged = matches!(value.first(), Some(b'"' | b'-' | b'0'..=b'9'));
        if draw.range.is_some() && !ranged {
            return Err(format!(
                "query {:?}: range needs a number or string field, and {} holds {}; leave range out to match the value itself",
                query.name,
                draw.quoted_field,
                String::from_utf8_lossy(&value[..value.len().min(40)])
            ));
        }
    }
    Ok(())
}

/// The top-level fields of a generated document, for a message.
fn top_level_fields(document: &[u8]) -> String {
    let parsed: Option<serde_json::Map<String, serde_json::Value>> =
        serde_json::from_slice(document).ok();
    let names: Vec<String> = parsed
        .into_iter()
        .flat_map(|map| map.into_iter().map(|(name, _)| name))
        .collect();
    if names.is_empty() {
        "it has none".to_string()
    } else {
        format!("they are {}", names.join(", "))
    }
}

/// Where the queries that wait for an index go: the database, or each of its
/// `partitions` (`p0`, `p1`, …). A partitioned database's indexes are partitioned, answer
/// only queries of one partition, and are built shard by shard, so a build is over when
/// a query of every partition has its answer.
fn waiting_scopes(database: &str, partitions: Option<u64>) -> Vec<String> {
    match partitions {
        None => vec![database.to_string()],
        Some(count) => (0..count)
            .map(|k| format!("{database}/_partition/p{k}"))
            .collect(),
    }
}

/// Creates one unit (a design document or a Mango index) and waits for it to be built;
/// `partitions`: the number of partitions of a partitioned database.
pub async fn build(
    admin: &mut Admin,
    unit: &IndexUnit,
    partitions: Option<u64>,
) -> Result<IndexBuildResult, SetupError> {
    let scopes = waiting_scopes(admin.database_path(), partitions);
    let started = Instant::now();
    let (index, queries) = match unit {
        IndexUnit::Design { name, views } => {
            create_design(admin, name, views).await?;
            let first = views.keys().next().cloned().unwrap_or_default();
            for scope in &scopes {
                let path = format!(
                    "{scope}/_design/{name}/_view/{first}?limit=1&reduce=false&update=true"
                );
                wait_for(admin, Method::Get, &path, None).await?;
            }
            (format!("_design/{name}"), views.keys().cloned().collect())
        }
        IndexUnit::Mango { query, index } => {
            let (id, name) = create_mango_index(admin, index).await?;
            let body = waiting_find(index, &id);
            for scope in &scopes {
                let path = format!("{scope}/_find");
                wait_for(admin, Method::Post, &path, Some(&body)).await?;
            }
            (format!("_index {name}"), vec![query.clone()])
        }
    };
    Ok(IndexBuildResult {
        index,
        queries,
        seconds: started.elapsed().as_secs_f64(),
        when: BuiltWhen::BeforePhase,
    })
}

fn refused(admin: &Admin, what: &str, status: u16, body: &[u8]) -> SetupError {
    SetupError {
        message: format!(
            "the server refused {what} (status {status}): {}; check the query declarations of the scenario",
            admin.quote(body)
        ),
        bad_input: (400..500).contains(&status),
    }
}

/// `PUT /db/_design/NAME`. One that exists already is fine when it holds the same views
/// (another node of the run made it); otherwise the user decides.
async fn create_design(
    admin: &mut Admin,
    design: &str,
    views: &serde_json::Map<String, serde_json::Value>,
) -> Result<(), SetupError> {
    let path = format!("{}/_design/{design}", admin.database_path());
    let body = serde_json::to_vec(&serde_json::json!({ "views": views })).unwrap_or_default();
    let what = format!("creating _design/{design}");
    let answer = admin
        .send_json(Method::Put, &path, Some(&body), &what)
        .await?;
    match answer.status {
        200..=202 => Ok(()),
        409 => {
            let existing = admin.send_json(Method::Get, &path, None, &what).await?;
            let held: Option<serde_json::Value> = serde_json::from_slice(&existing.body).ok();
            let same = held.is_some_and(|d| d.get("views") == Some(&serde_json::json!(views)));
            if same {
                Ok(())
            } else {
                Err(SetupError {
                    message: format!(
                        "the database already has _design/{design} with other views; add --recreate to start from an empty database, or give the queries another design = \"NAME\""
                    ),
                    bad_input: true,
                })
            }
        }
        status => Err(refused(admin, &what, status, &answer.body)),
    }
}

/// `POST /db/_index`: the design document's id and the index's name.
async fn create_mango_index(
    admin: &mut Admin,
    index: &serde_json::Value,
) -> Result<(String, String), SetupError> {
    #[derive(serde::Deserialize)]
    struct Created {
        id: String,
        name: String,
    }
    #[derive(Serialize)]
    struct Request<'a> {
        index: &'a serde_json::Value,
        r#type: &'a str,
    }
    let path = format!("{}/_index", admin.database_path());
    let body = serde_json::to_vec(&Request {
        index,
        r#type: "json",
    })
    .unwrap_or_default();
    let what = format!("creating the Mango index {index}");
    let answer = admin
        .send_json(Method::Post, &path, Some(&body), &what)
        .await?;
    if answer.status != 200 && answer.status != 201 {
        return Err(refused(admin, &what, answer.status, &answer.body));
    }
    let created: Created = serde_json::from_slice(&answer.body).map_err(|_| SetupError {
        message: format!(
            "{what}: the answer has no id and name: {}",
            admin.quote(&answer.body)
        ),
        bad_input: false,
    })?;
    Ok((created.id, created.name))
}

/// A `_find` that uses the index, so its answer waits for the index to be up to date:
/// every indexed field exists.
fn waiting_find(index: &serde_json::Value, id: &str) -> Vec<u8> {
    let mut selector = serde_json::Map::new();
    for field in index["fields"].as_array().into_iter().flatten() {
        let name = match field {
            serde_json::Value::String(name) => Some(name.clone()),
            serde_json::Value::Object(sorted) => sorted.keys().next().cloned(),
            _ => None,
        };
        if let Some(name) = name {
            selector.insert(name, serde_json::json!({ "$exists": true }));
        }
    }
    let design = id.strip_prefix("_design/").unwrap_or(id);
    serde_json::to_vec(&serde_json::json!({
        "selector": selector,
        "limit": 1,
        "use_index": design,
    }))
    .unwrap_or_default()
}

async fn wait_for(
    admin: &mut Admin,
    method: Method,
    path: &str,
    body: Option<&[u8]>,
) -> Result<(), SetupError> {
    let what = format!("a query waiting for an index build ({method} {path})");
    let answer = admin.send_json(method, path, body, &what).await?;
    if answer.status == 200 {
        Ok(())
    } else {
        Err(refused(admin, &what, answer.status, &answer.body))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_partitioned_database_is_waited_for_partition_by_partition() {
        assert_eq!(waiting_scopes("/db", None), ["/db"]);
        assert_eq!(
            waiting_scopes("/db", Some(3)),
            [
                "/db/_partition/p0",
                "/db/_partition/p1",
                "/db/_partition/p2"
            ]
        );
    }

    #[test]
    fn a_waiting_find_asks_for_every_indexed_field() {
        let index = serde_json::json!({"fields": ["Age", {"Name": "desc"}]});
        let body: serde_json::Value =
            serde_json::from_slice(&waiting_find(&index, "_design/abc")).unwrap();
        assert_eq!(
            body,
            serde_json::json!({"selector": {"Age": {"$exists": true}, "Name": {"$exists": true}},
                "limit": 1, "use_index": "abc"})
        );
    }
}
