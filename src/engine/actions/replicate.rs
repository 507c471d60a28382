//! `POST /_replicate`: one-shot replications from the run's database to a replica, and
//! back when two-way. CouchDB's replicator is a client of both URLs, so both carry
//! credentials in the run's auth mode, in the form the server understands:
//!
//! - CouchDB 3 (and Cloudant): the endpoint object `{"url": …, "auth": {"basic":
//!   {"username", "password"}}}` for basic and cookie (its replicator then keeps a
//!   session of its own), Cloudant's `"auth": {"iam": {"api_key"}}` for iam, and
//!   `"headers"` for a JWT or proxy authentication; any character in a password works;
//! - PouchDB Server (its welcome names `express-pouchdb`): the URL with percent-encoded
//!   userinfo, the only form its `_replicate` takes (an object gives a 500), and so only
//!   a user and password.

use std::time::Instant;

use serde_json::{Map, Value, json};

use super::address::{split_url, with_userinfo};
use super::{ActionReport, Client, Context, Method, request};
use crate::driver::auth::ReplicationAuth;
use crate::text::Quoted;

/// How the server wants credentials in a replication's source and target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Form {
    /// `{"url", "headers": {"Authorization"}}` (CouchDB).
    Object,
    /// `http://user:password@host/db` (PouchDB Server).
    Userinfo,
}

/// One side of a replication: a URL without credentials and the credentials it needs.
#[derive(Clone, Debug)]
pub(crate) struct Side {
    pub url: String,
    pub auth: Option<ReplicationAuth>,
}

impl Side {
    pub(crate) fn json(&self, form: Form) -> Value {
        let url = &self.url;
        match (&self.auth, form) {
            (None, _) => json!(url),
            (Some(ReplicationAuth::Basic(c)), Form::Userinfo) => json!(with_userinfo(url, c)),
            // PouchDB Server takes no other credentials than a URL's: it implements none
            // of the other modes either.
            (Some(_), Form::Userinfo) => json!(url),
            (Some(ReplicationAuth::Basic(c)), Form::Object) => json!({
                "url": url,
                "auth": {"basic": {"username": c.user, "password": c.password}},
            }),
            (Some(ReplicationAuth::Iam { api_key }), Form::Object) => json!({
                "url": url,
                "auth": {"iam": {"api_key": api_key}},
            }),
            (Some(ReplicationAuth::Headers(headers)), Form::Object) => {
                let headers: Map<String, Value> =
                    headers.iter().map(|(n, v)| (n.clone(), json!(v))).collect();
                json!({"url": url, "headers": headers})
            }
        }
    }
}

/// The replica: a database name is a database on the run's own server, which the run
/// creates (and `--cleanup` may delete); a URL is used as given.
fn replica(context: &Context, given: &str) -> Result<(Side, Option<String>), String> {
    let replication = &context.settings.replication;
    if !given.starts_with("http://") && !given.starts_with("https://") {
        let side = Side {
            url: replication.database_url(given),
            auth: replication.auth().cloned(),
        };
        return Ok((side, Some(given.to_string())));
    }
    let (url, credentials) = split_url(given)
        .map_err(|e| format!("replicate_to {:?}: {e}", crate::target::redact(given)))?;
    // The run's credentials only go to the run's own server.
    let auth = credentials.map(ReplicationAuth::Basic).or_else(|| {
        replication
            .same_server(&url)
            .then(|| replication.auth().cloned())
            .flatten()
    });
    Ok((Side { url, auth }, None))
}

/// The form the server behind `client` takes credentials in: PouchDB Server names
/// itself in its welcome.
pub(crate) async fn form(client: &mut Client) -> Form {
    match request(client, Method::Get, "/", None).await {
        Ok(answer) if answer.json.get("express-pouchdb").is_some() => Form::Userinfo,
        _ => Form::Object,
    }
}

/// Creates the replica by name: `true` when this run created it, `false` when it
/// existed. Going through the client's own address, not the replication address. The
/// error quotes the server's answer, whose secrets the caller hides.
pub(crate) async fn create(client: &mut Client, name: &str) -> Result<bool, String> {
    let path = format!("/{}", crate::target::encode_path_segment(name));
    let answer = request(client, Method::Put, &path, None).await?;
    match answer.status {
        201 | 202 => Ok(true),
        412 => Ok(false),
        status => Err(format!(
            "creating the replica {name:?} was answered {status}: {}",
            answer.reason()
        )),
    }
}

pub async fn run(context: &mut Context, given: &str, two_way: bool) -> ActionReport {
    let mut report = ActionReport {
        kind: super::replicate_kind(two_way).to_string(),
        ..ActionReport::default()
    };
    let (replica, name) = match replica(context, given) {
        Ok(found) => found,
        Err(e) => {
            report.error = Some(e);
            return report;
        }
    };
    let form = form(&mut context.client).await;
    if let Some(name) = &name {
        match create(&mut context.client, name).await {
            Ok(created) => report.created_database = created.then(|| name.clone()),
            Err(e) => {
                report.error = Some(context.quote(&e));
                return report;
            }
        }
    }
    let replication = &context.settings.replication;
    let source = Side {
        url: replication.database_url(&context.target.database),
        auth: replication.auth().cloned(),
    };
    let mut directions = vec![(source.clone(), replica.clone())];
    if two_way {
        directions.push((replica, source));
    }
    let started = Instant::now();
    report.started = Some(context.since(started));
    let mut errors = Vec::new();
    // One-shot replications, one after the other when two-way: `_replicate` answers when
    // a one-shot replication is done.
    for (from, to) in directions {
        let body = json!({
            "source": from.json(form),
            "target": to.json(form),
            "create_target": true,
        });
        let outcome = request(
            &mut context.client,
            Method::Post,
            "/_replicate",
            Some(&body),
        )
        .await;
        if let Some(problem) = problem(outcome) {
            let sides: Vec<&ReplicationAuth> = from.auth.iter().chain(&to.auth).collect();
            let said = format!("{} → {}: {problem}", from.url, to.url);
            errors.push(Quoted::message(&context.quote(&said), sides.as_slice()));
        }
    }
    report.finished = Some(context.since(Instant::now()));
    if !errors.is_empty() {
        report.error = Some(errors.join("; "));
    }
    report
}

/// What went wrong with one `_replicate`, if anything: a refusal, or documents it could
/// not write (top level on PouchDB Server, in the latest history entry on CouchDB).
fn problem(outcome: Result<super::Answer, String>) -> Option<String> {
    let answer = match outcome {
        Ok(answer) => answer,
        Err(e) => return Some(e),
    };
    if !(200..=202).contains(&answer.status) {
        return Some(format!(
            "_replicate answered {}: {}",
            answer.status,
            answer.reason()
        ));
    }
    if answer.json["ok"] != json!(true) {
        return Some(format!(
            "_replicate answered {} without \"ok\": {}",
            answer.status, answer.text
        ));
    }
    let failures = answer.json["doc_write_failures"]
        .as_u64()
        .or_else(|| answer.json["history"][0]["doc_write_failures"].as_u64())
        .unwrap_or(0);
    (failures > 0).then(|| format!("{failures} documents could not be written to the target"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::Credentials;

    fn side() -> Side {
        Side {
            url: "http://h:5984/db".to_string(),
            auth: Some(ReplicationAuth::Basic(Credentials {
                user: "admin".to_string(),
                password: "pw".to_string(),
            })),
        }
    }

    #[test]
    fn couchdb_gets_the_documented_object_in_every_mode() {
        assert_eq!(
            side().json(Form::Object),
            json!({"url": "http://h:5984/db", "auth": {"basic": {"username": "admin", "password": "pw"}}})
        );
        let iam = Side {
            auth: Some(ReplicationAuth::Iam {
                api_key: "k3y".to_string(),
            }),
            ..side()
        };
        assert_eq!(
            iam.json(Form::Object),
            json!({"url": "http://h:5984/db", "auth": {"iam": {"api_key": "k3y"}}})
        );
        let jwt = Side {
            auth: Some(ReplicationAuth::Headers(vec![(
                "Authorization".to_string(),
                "Bearer t".to_string(),
            )])),
            ..side()
        };
        assert_eq!(
            jwt.json(Form::Object),
            json!({"url": "http://h:5984/db", "headers": {"Authorization": "Bearer t"}})
        );
        assert_eq!(jwt.json(Form::Userinfo), json!("http://h:5984/db"));
    }

    #[test]
    fn pouchdb_server_gets_userinfo_and_no_credentials_give_the_plain_url() {
        assert_eq!(
            side().json(Form::Userinfo),
            json!("http://admin:pw@h:5984/db")
        );
        let plain = Side {
            auth: None,
            ..side()
        };
        assert_eq!(plain.json(Form::Object), json!("http://h:5984/db"));
    }

    fn answer(status: u16, json: Value) -> Result<super::super::Answer, String> {
        Ok(super::super::Answer {
            status,
            text: json.to_string(),
            json,
        })
    }

    #[test]
    fn refusals_and_unwritten_documents_are_problems() {
        assert_eq!(
            problem(answer(
                200,
                json!({"ok": true, "history": [{"doc_write_failures": 0}]})
            )),
            None
        );
        assert!(
            problem(answer(401, json!({"error": "unauthorized", "reason": "x"})))
                .unwrap()
                .contains("401")
        );
        assert!(
            problem(answer(200, json!({"ok": true, "doc_write_failures": 2})))
                .unwrap()
                .contains("2 documents")
        );
        assert!(
            problem(answer(
                200,
                json!({"ok": true, "history": [{"doc_write_failures": 1}]})
            ))
            .is_some()
        );
        assert!(problem(answer(200, json!({"error": "x"}))).is_some());
    }
}
