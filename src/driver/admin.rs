//! Setting up the database a run uses, and the rules that keep a run away from data it
//! was not given: a database that holds documents is only used with `--reuse`, only
//! deleted with `--recreate`, and `--cleanup` only deletes what the run created.

use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;

use super::auth::Mode;
use super::connection::{Call, Client, Endpoint, Exchange};
use super::environment::answers::{
    WELCOME, answers_like_database, kept, read_layout, read_welcome,
};
use super::http1::Method;
use crate::results::environment::ServerNode;
use crate::target::{Credentials, Shards, Target};

/// Administrative requests are few; a generous limit still ends a hung server quickly.
const ADMIN_TIMEOUT: Duration = Duration::from_secs(10);

/// What to do with a database that already holds documents.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExistingDatabase {
    /// Stop before sending anything (the default).
    Refuse,
    /// Add to it (`--reuse`).
    Reuse,
    /// Delete it and create it empty (`--recreate`).
    Recreate,
}

/// Why setting up failed; `bad_input` when the user must change the command line.
#[derive(Debug)]
pub struct SetupError {
    pub message: String,
    pub bad_input: bool,
}

impl SetupError {
    fn server(message: String) -> SetupError {
        SetupError {
            message,
            bad_input: false,
        }
    }
}

/// The database as the run found and left it before the first operation.
#[derive(Debug, Clone, Copy)]
pub struct PreparedDatabase {
    /// True when this run created it (or recreated it), so `--cleanup` may delete it.
    pub created: bool,
    /// Documents it held when the run started using it.
    pub documents_before: u64,
}

/// `GET /{db}` as far as setting up reads it; its shape is [`read_layout`]'s.
#[derive(Deserialize)]
struct DatabaseInfo {
    doc_count: u64,
}

/// One administrative client per target, talking to its first node.
pub struct Admin {
    client: Client,
    database_path: String,
    target_text: String,
    shards: Shards,
    partitioned: bool,
}

impl Admin {
    pub fn new(target: &Target, endpoint: Arc<Endpoint>) -> Admin {
        Admin::with_timeout(target, endpoint, ADMIN_TIMEOUT)
    }

    /// An administrative client whose requests may take up to `timeout` (an index
    /// build's wait takes longer than a plain request).
    pub fn with_timeout(target: &Target, endpoint: Arc<Endpoint>, timeout: Duration) -> Admin {
        Admin {
            client: Client::new(endpoint, Some(timeout)),
            database_path: target.database_path(),
            target_text: format!("database {:?}", target.database),
            shards: target.shards,
            partitioned: target.partitioned,
        }
    }

    async fn call(&mut self, method: Method, path: &str) -> Result<Exchange, SetupError> {
        self.send(method, path, None).await
    }

    /// Sends `method path` with a JSON `body`, after checking the credentials were taken;
    /// `what` names the request in a message.
    pub async fn send_json(
        &mut self,
        method: Method,
        path: &str,
        body: Option<&[u8]>,
        what: &str,
    ) -> Result<Exchange, SetupError> {
        let answer = self.send(method, path, body).await?;
        self.credentials_problem(answer.status, what)?;
        Ok(answer)
    }

    /// `GET path`, whatever its status (the caller reads it): for what a run only looks
    /// at, which a 401 or 404 leaves unknown rather than failing the run.
    pub async fn look(&mut self, path: &str) -> Result<Exchange, SetupError> {
        self.call(Method::Get, path).await
    }

    /// The path of the database below the node's base path, e.g. `/mydb`.
    pub fn database_path(&self) -> &str {
        &self.database_path
    }

    async fn send(
        &mut self,
        method: Method,
        path: &str,
        body: Option<&[u8]>,
    ) -> Result<Exchange, SetupError> {
        let node = self.client.endpoint().node.to_string();
        let call = Call { method, path, body };
        self.client.send(&call).await.map_err(|e| {
            if e.error.is_tls_problem() {
                SetupError::server(format!("{node}: {e}"))
            } else if e.is_unreachable() {
                SetupError::server(format!(
                    "cannot reach {node} ({e}); check that the server is running and that --database_address is right (with several nodes, --failover lets a run start without one)"
                ))
            } else {
                let anonymous = self.client.endpoint().credential.mode() == Mode::None;
                SetupError::server(stopped_answering(&node, method, path, anonymous, &e))
            }
        })
    }

    /// Checks that the node answers like a CouchDB server, and returns it as it answered
    /// `GET /`. A welcome will do; a node whose `GET /` gives none (an error, garbage, no
    /// welcome's keys) is taken if its database answers like CouchDB's, and is returned
    /// with what `GET /` gave instead (see [`ServerNode::answered`]).
    pub async fn check_server(&mut self) -> Result<ServerNode, SetupError> {
        let node = self.client.endpoint().node.to_string();
        let answer = self.call(Method::Get, "/").await?;
        self.credentials_problem(answer.status, "GET /")?;
        let secrets = &self.client.endpoint().credential;
        let mut answered = read_welcome(answer.status, &answer.body, secrets);
        answered.address = kept(&node, secrets);
        if answered.answered == WELCOME || self.database_answers_like_couchdb().await? {
            Ok(answered)
        } else {
            Err(SetupError::server(format!(
                "{node} does not answer like a CouchDB server (GET / gave status {} without a CouchDB welcome); check --database_address",
                answer.status
            )))
        }
    }

    /// Whether `GET /{db}` answers like CouchDB, whether the database exists or not.
    async fn database_answers_like_couchdb(&mut self) -> Result<bool, SetupError> {
        let path = self.database_path.clone();
        let answer = self.call(Method::Get, &path).await?;
        self.credentials_problem(answer.status, "GET on the database")?;
        Ok(answers_like_database(answer.status, &answer.body))
    }

    /// The database's document count, or `None` when it does not exist.
    pub async fn document_count(&mut self) -> Result<Option<u64>, SetupError> {
        let path = self.database_path.clone();
        let answer = self.call(Method::Get, &path).await?;
        self.credentials_problem(answer.status, "GET on the database")?;
        match answer.status {
            200 => serde_json::from_slice::<DatabaseInfo>(&answer.body)
                .map(|info| Some(info.doc_count))
                .map_err(|_| {
                    SetupError::server(format!(
                        "the answer about {} has no doc_count; is this a CouchDB server?",
                        self.target_text
                    ))
                }),
            404 => Ok(None),
            status => Err(SetupError::server(format!(
                "the server answered status {status} when asked about {}",
                self.target_text
            ))),
        }
    }

    pub async fn create(&mut self) -> Result<(), SetupError> {
        if self.try_create().await? {
            Ok(())
        } else {
            Err(SetupError::server(format!(
                "the server refused to create {} (status 412: it exists already)",
                self.target_text
            )))
        }
    }

    /// Creates the database; `false` when it exists already (412), as when several
    /// nodes of one run start together and another node created it first.
    async fn try_create(&mut self) -> Result<bool, SetupError> {
        let query = self.shards.creating_query(self.partitioned);
        let path = format!("{}{query}", self.database_path);
        let answer = self.call(Method::Put, &path).await?;
        self.credentials_problem(answer.status, "creating the database")?;
        match answer.status {
            201 | 202 => Ok(true),
            412 => Ok(false),
            status => Err(SetupError::server(format!(
                "the server refused to create {} (status {status}: {})",
                self.target_text,
                self.quote(&answer.body)
            ))),
        }
    }

    pub async fn delete(&mut self) -> Result<(), SetupError> {
        let path = self.database_path.clone();
        let answer = self.call(Method::Delete, &path).await?;
        self.credentials_problem(answer.status, "deleting the database")?;
        match answer.status {
            200 | 202 | 404 => Ok(()),
            status => Err(SetupError::server(format!(
                "the server refused to delete {} (status {status})",
                self.target_text
            ))),
        }
    }

    /// Makes the database ready for a run, following the user's rule for existing data.
    pub async fn prepare(
        &mut self,
        existing: ExistingDatabase,
    ) -> Result<PreparedDatabase, SetupError> {
        let prepared = self.prepare_database(existing).await?;
        let created = prepared.created;
        let checked = match self.check_shards(created).await {
            Ok(()) => self.check_partitioned(created).await,
            refused => refused,
        };
        if let Err(mut problem) = checked {
            // A database made with other shards than asked is of no use to the run.
            if created {
                self.delete().await?;
                problem.message.push_str(&format!(
                    "; the run deleted {}, which it had made",
                    self.target_text
                ));
            }
            return Err(problem);
        }
        Ok(prepared)
    }

    /// With `--db-q`/`--db-n`: the database has the shards and copies asked for, as its
    /// `cluster` says; a server without one (PouchDB Server) has no shards to ask for.
    async fn check_shards(&mut self, created: bool) -> Result<(), SetupError> {
        if !self.shards.is_given() {
            return Ok(());
        }
        let path = self.database_path.clone();
        let answer = self.call(Method::Get, &path).await?;
        let Some((q, n)) = read_layout(&answer.body).and_then(|l| l.shards) else {
            return Err(SetupError {
                message: format!(
                    "the server does not shard databases (GET on {} has no \"cluster\"), so --db-q and --db-n cannot be honoured: they need Apache CouchDB 2 or later (PouchDB Server has neither); leave them out",
                    self.target_text
                ),
                bad_input: true,
            });
        };
        let wanted = |asked: Option<u32>, has: u64| asked.is_none_or(|a| u64::from(a) == has);
        if wanted(self.shards.q, q) && wanted(self.shards.n, n) {
            return Ok(());
        }
        let (target, asked) = (&self.target_text, self.shards.describe());
        let message = if created {
            let why = if wanted(self.shards.n, n) {
                "the server chose otherwise; leave --db-q out, or set it as the server allows"
            } else {
                "a server keeps at most one copy of a shard per node (a single node keeps n=1, whatever is asked); give --db-n no larger than the cluster's number of nodes, or leave it out"
            };
            format!(
                "the run made {target} asking for {asked}, and the server gave it q={q}, n={n}: {why}"
            )
        } else {
            format!(
                "{target} exists with q={q}, n={n}, not the {asked} asked for: an existing database keeps the shards it was made with (add --recreate to make it anew), and a server keeps at most one copy of a shard per node"
            )
        };
        Err(SetupError {
            message,
            bad_input: true,
        })
    }

    /// With `--db-partitioned`: the database says it is partitioned (its `props`); a
    /// server without partitions (PouchDB Server, CouchDB before 3) ignores the asking.
    async fn check_partitioned(&mut self, created: bool) -> Result<(), SetupError> {
        if !self.partitioned {
            return Ok(());
        }
        let path = self.database_path.clone();
        let answer = self.call(Method::Get, &path).await?;
        let layout = read_layout(&answer.body).unwrap_or_default();
        let partitioned = layout.partitioned == Some(true);
        let has_cluster = layout.shards.is_some();
        if partitioned {
            return Ok(());
        }
        let message = if has_cluster && created {
            format!(
                "the run made {} asking for a partitioned database, and the server did not make it partitioned (GET on it has no \"props\": {{\"partitioned\": true}}): partitions need CouchDB 3 or later with them enabled; leave --db-partitioned out",
                self.target_text
            )
        } else if has_cluster {
            format!(
                "{} is not partitioned (GET on it has no \"props\": {{\"partitioned\": true}}), so --db-partitioned cannot be honoured: an existing database keeps how it was made (add --recreate to make it anew, partitioned)",
                self.target_text
            )
        } else {
            format!(
                "the server does not partition databases (GET on {} has no \"props\": {{\"partitioned\": true}}), so --db-partitioned cannot be honoured: it needs Apache CouchDB 3 or later (PouchDB Server has no partitions); leave it out",
                self.target_text
            )
        };
        Err(SetupError {
            message,
            bad_input: true,
        })
    }

    async fn prepare_database(
        &mut self,
        existing: ExistingDatabase,
    ) -> Result<PreparedDatabase, SetupError> {
        self.check_server().await?;
        match (self.document_count().await?, existing) {
            (None, _) => {
                if self.try_create().await? {
                    return Ok(PreparedDatabase {
                        created: true,
                        documents_before: 0,
                    });
                }
                // Created by someone else in the meantime (another node of the run):
                // treated as an existing database, which this run did not create.
                match self.document_count().await? {
                    Some(count) if count > 0 && existing == ExistingDatabase::Refuse => {
                        Err(self.holds_documents(count))
                    }
                    count => Ok(PreparedDatabase {
                        created: false,
                        documents_before: count.unwrap_or(0),
                    }),
                }
            }
            (Some(_), ExistingDatabase::Recreate) => {
                self.delete().await?;
                self.create().await?;
                Ok(PreparedDatabase {
                    created: true,
                    documents_before: 0,
                })
            }
            (Some(0), _) | (Some(_), ExistingDatabase::Reuse) => {
                let count = self.document_count().await?.unwrap_or(0);
                Ok(PreparedDatabase {
                    created: false,
                    documents_before: count,
                })
            }
            (Some(count), ExistingDatabase::Refuse) => Err(self.holds_documents(count)),
        }
    }

    /// The start of an answer, for a message: at most 300 characters, no password.
    pub fn quote(&self, body: &[u8]) -> crate::text::Quoted {
        crate::text::Quoted::new(body, &self.client.endpoint().credential, 300)
    }

    fn holds_documents(&self, count: u64) -> SetupError {
        SetupError {
            message: format!(
                "{} already holds {count} documents; sofabench does not touch existing data unless told: add --reuse to add to it, or --recreate to delete and recreate it",
                self.target_text
            ),
            bad_input: true,
        }
    }
}

/// The users a run makes for its devices (`--device-users`), and the `_security` that
/// names them. A user's password goes out in its creating request alone: no answer to it
/// is quoted, since a server may echo the request.
impl Admin {
    /// The `_users` document's path of `user`.
    fn user_path(user: &str) -> String {
        format!(
            "/_users/{}",
            crate::target::encode_path_segment(&format!("org.couchdb.user:{user}"))
        )
    }

    /// The revision of `user`'s document in `_users`, or `None` when there is none.
    pub async fn user_revision(&mut self, user: &str) -> Result<Option<String>, SetupError> {
        let answer = self
            .send_json(Method::Get, &Self::user_path(user), None, "reading a user")
            .await?;
        match answer.status {
            200 => revision_of(&answer.body).map(Some).ok_or_else(|| {
                SetupError::server(format!(
                    "the server's answer about user {user:?} has no _rev; is this a CouchDB server?"
                ))
            }),
            404 => Ok(None),
            status => Err(SetupError::server(format!(
                "the server answered status {status} when asked about user {user:?} in _users"
            ))),
        }
    }

    /// Creates `credentials`' user with no roles; `false` when it exists already (409).
    pub async fn create_user(&mut self, credentials: &Credentials) -> Result<bool, SetupError> {
        let user = &credentials.user;
        let body = serde_json::json!({
            "_id": format!("org.couchdb.user:{user}"),
            "name": user,
            "type": "user",
            "roles": [],
            "password": credentials.password,
        });
        let body = serde_json::to_vec(&body).unwrap_or_default();
        let path = Self::user_path(user);
        let answer = self
            .send_json(Method::Put, &path, Some(&body), "creating a user")
            .await?;
        match answer.status {
            201 | 202 => Ok(true),
            409 => Ok(false),
            status => Err(SetupError::server(format!(
                "the server refused to create user {user:?} in _users (status {status})"
            ))),
        }
    }

    /// Deletes `user`'s document at `revision`.
    pub async fn delete_user(&mut self, user: &str, revision: &str) -> Result<(), SetupError> {
        let path = format!(
            "{}?rev={}",
            Self::user_path(user),
            crate::target::encode_path_segment(revision)
        );
        let answer = self
            .send_json(Method::Delete, &path, None, "deleting a user")
            .await?;
        match answer.status {
            200 | 202 | 404 => Ok(()),
            status => Err(SetupError::server(format!(
                "the server refused to delete user {user:?} from _users (status {status})"
            ))),
        }
    }

    /// Names `user` a member of the database in its `_security`, keeping every other
    /// name and role there; `false` when it was one already.
    pub async fn add_member(&mut self, user: &str) -> Result<bool, SetupError> {
        let path = format!("{}/_security", self.database_path);
        let answer = self
            .send_json(Method::Get, &path, None, "reading _security")
            .await?;
        let mut security = match (answer.status, serde_json::from_slice(&answer.body)) {
            (200, Ok(serde_json::Value::Object(security))) => security,
            (status, _) => {
                return Err(SetupError::server(format!(
                    "the server's _security of {} is not a JSON object (status {status}); is this a CouchDB server?",
                    self.target_text
                )));
            }
        };
        let members = security
            .entry("members")
            .or_insert_with(|| serde_json::json!({}));
        let Some(members) = members.as_object_mut() else {
            return Err(self.odd_security("members is not an object"));
        };
        let names = members
            .entry("names")
            .or_insert_with(|| serde_json::json!([]));
        let Some(names) = names.as_array_mut() else {
            return Err(self.odd_security("members.names is not a list"));
        };
        if names.iter().any(|n| n.as_str() == Some(user)) {
            return Ok(false);
        }
        names.push(serde_json::Value::String(user.to_string()));
        let body = serde_json::to_vec(&security).unwrap_or_default();
        let answer = self
            .send_json(Method::Put, &path, Some(&body), "writing _security")
            .await?;
        match answer.status {
            200..=202 => Ok(true),
            status => Err(SetupError::server(format!(
                "the server refused the _security of {} (status {status}: {})",
                self.target_text,
                self.quote(&answer.body)
            ))),
        }
    }

    fn odd_security(&self, what: &str) -> SetupError {
        SetupError::server(format!(
            "the _security of {} has {what}; fix it, or run on another database",
            self.target_text
        ))
    }
}

/// A document's `_rev`, if its JSON has one.
fn revision_of(body: &[u8]) -> Option<String> {
    #[derive(Deserialize)]
    struct Revised {
        #[serde(rename = "_rev")]
        rev: String,
    }
    serde_json::from_slice::<Revised>(body).ok().map(|r| r.rev)
}

impl Admin {
    fn credentials_problem(&self, status: u16, what: &str) -> Result<(), SetupError> {
        credentials_problem(self.client.endpoint().credential.mode(), status, what)
    }
}

fn credentials_problem(mode: Mode, status: u16, what: &str) -> Result<(), SetupError> {
    match status {
        401 => Err(SetupError {
            message: format!(
                "the server refused the credentials ({what} gave 401 Unauthorized with --auth {mode}); {}",
                mode.refused_hint()
            ),
            bad_input: true,
        }),
        403 => Err(SetupError {
            message: format!(
                "the user is not allowed to do this ({what} gave 403 Forbidden); use a server admin's credentials or a database the user may write"
            ),
            bad_input: true,
        }),
        _ => Ok(()),
    }
}

/// What is known when `node` took `method path` and ended without an answer: it stopped
/// answering. An anonymous `PUT` of a database ends PouchDB Server's process when it has
/// an admin (a bug in express-pouchdb), so that request says so.
fn stopped_answering(
    node: &str,
    method: Method,
    path: &str,
    anonymous: bool,
    error: &impl std::fmt::Display,
) -> String {
    let known = format!("{node} stopped answering at {method} {path} ({error})");
    if anonymous && method == Method::Put {
        format!(
            "{known}; it may no longer be running: on PouchDB Server with an admin, an anonymous PUT of a database ends the server's process. Check that it still runs (restart it if not), and give the admin's credentials (user:password@ in --database_address, or --user and --password)"
        )
    } else {
        format!(
            "{known}; check that it still runs, that it is a CouchDB server and that it is healthy"
        )
    }
}
