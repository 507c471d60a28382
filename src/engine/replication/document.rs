//! The `_replicator` documents that start and stop a phase's continuous replications.
//! A document carries the credentials of both ends in the form the server takes (see
//! `actions::Side`); they stay on the server, never in a message: every answer quoted is
//! scrubbed of them.

use serde_json::{Value, json};

use crate::driver::{Client, Method};
use crate::engine::actions::{Form, Side, request};
use crate::target::encode_path_segment;

/// The replicator database, as CouchDB and PouchDB Server name it by default.
const REPLICATOR: &str = "/_replicator";

/// Times a removal is tried again when the document changed under it (PouchDB Server's
/// replicator writes the job's state into it).
const REMOVE_TRIES: usize = 5;

/// The body of a replication from `from` to `to`: continuous, except for PouchDB Server
/// (see `one_shots`).
pub fn body(from: &Side, to: &Side, form: Form) -> Value {
    json!({
        "source": from.json(form),
        "target": to.json(form),
        "continuous": form == Form::Object,
    })
}

fn path(id: &str) -> String {
    format!("{REPLICATOR}/{}", encode_path_segment(id))
}

/// Stores document `id`; creates the replicator database first where the server has none
/// yet (a CouchDB set up without its system databases).
pub async fn put(client: &mut Client, id: &str, body: &Value) -> Result<(), String> {
    let path = path(id);
    let mut answer = request(client, Method::Put, &path, Some(body)).await?;
    if answer.status == 404 {
        let made = request(client, Method::Put, REPLICATOR, None).await?;
        if !matches!(made.status, 201 | 202 | 412) {
            return Err(format!(
                "the server has no {REPLICATOR} database and creating it was answered {}: {}",
                made.status,
                made.reason()
            ));
        }
        answer = request(client, Method::Put, &path, Some(body)).await?;
    }
    match answer.status {
        201 | 202 => Ok(()),
        status => Err(format!(
            "PUT {path} was answered {status}: {}; the run's user must be allowed to write to {REPLICATOR} (an admin is)",
            answer.reason()
        )),
    }
}

/// Deletes document `id` at its current revision, which ends its job. `Ok` when it is
/// gone, whoever removed it.
pub async fn remove(client: &mut Client, id: &str) -> Result<(), String> {
    let path = path(id);
    let mut last = String::new();
    for _ in 0..REMOVE_TRIES {
        let current = request(client, Method::Get, &path, None).await?;
        let rev = match (current.status, current.json["_rev"].as_str()) {
            (404, _) => return Ok(()),
            (200, Some(rev)) => rev.to_string(),
            (status, _) => {
                return Err(format!(
                    "GET {path} was answered {status}: {}",
                    current.reason()
                ));
            }
        };
        match delete_at(client, &path, &rev).await? {
            Deleted::Gone => return Ok(()),
            Deleted::Changed(reason) => last = reason,
        }
    }
    Err(format!(
        "DELETE {path} met a newer revision {REMOVE_TRIES} times ({last})"
    ))
}

/// What came of deleting a one-shot job's document.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Removal {
    Gone,
    /// The document names a job that runs again (PouchDB Server's replicator can restart
    /// a completed job and rewrite its document): it is not deleted now.
    Running,
}

/// Deletes document `id` if its job has ended (`completed` or `error`) and nothing
/// changed it since it was read. PouchDB Server 4.2 ends its process when a running job's
/// document is deleted, so a document that is not ended, or changes under the deletion
/// (a 409), is left for the caller to wait on again.
pub async fn remove_ended(client: &mut Client, id: &str) -> Result<Removal, String> {
    let path = path(id);
    let current = request(client, Method::Get, &path, None).await?;
    let (status, json) = (current.status, &current.json);
    if status == 404 {
        return Ok(Removal::Gone);
    }
    let ended = matches!(
        json["_replication_state"].as_str(),
        Some("completed" | "error")
    );
    let rev = match (status, json["_rev"].as_str()) {
        (200, Some(rev)) if ended => rev,
        (200, _) => return Ok(Removal::Running),
        _ => {
            return Err(format!(
                "GET {path} was answered {status}: {}",
                current.reason()
            ));
        }
    };
    match delete_at(client, &path, rev).await? {
        Deleted::Gone => Ok(Removal::Gone),
        Deleted::Changed(_) => Ok(Removal::Running),
    }
}

/// How a `DELETE` at a revision ended, short of failing.
enum Deleted {
    Gone,
    /// A newer revision was there (409), with the server's reason.
    Changed(String),
}

/// `DELETE path?rev=rev`: gone (whoever removed it), or changed under it.
async fn delete_at(client: &mut Client, path: &str, rev: &str) -> Result<Deleted, String> {
    let rev: String = url::form_urlencoded::byte_serialize(rev.as_bytes()).collect();
    let gone = request(client, Method::Delete, &format!("{path}?rev={rev}"), None).await?;
    match gone.status {
        200 | 202 | 404 => Ok(Deleted::Gone),
        409 => Ok(Deleted::Changed(gone.reason())),
        status => Err(format!(
            "DELETE {path} was answered {status}: {}",
            gone.reason()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_is_continuous_with_both_ends() {
        let side = |url: &str| Side {
            url: url.to_string(),
            auth: None,
        };
        assert_eq!(
            body(&side("http://h/a"), &side("http://h/b"), Form::Object),
            json!({"source": "http://h/a", "target": "http://h/b", "continuous": true})
        );
        assert_eq!(
            body(&side("http://h/a"), &side("http://h/b"), Form::Userinfo)["continuous"],
            false
        );
        assert_eq!(path("sofabench-1/x"), "/_replicator/sofabench-1%2Fx");
    }
}
