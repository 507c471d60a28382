//! A phase's continuous replications: before its operations, each replica is created
//! (when missing) and followed by a `_changes` consumer of its own, and a `_replicator`
//! document starts the replication to it (and one back when two-way); the phase's
//! writes are handed to each replica's table, so the lag is the time from a write's
//! answer on the source to its sighting on the replica. After the operations (and the
//! grace), the documents are deleted, which stops the jobs.

mod document;
mod jobs;
mod one_shots;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use tokio::task::JoinHandle;

use super::actions::{self, ActionSettings, Form, ReplicationAddress, Side};
use super::changes::{Table, Watch};
use crate::driver::auth::{Auth, ReplicationAuth};
use crate::driver::connection::DEFAULT_MAX_RESPONSE;
use crate::driver::{Client, Endpoint};
use crate::metrics::coarse::Series;
use crate::metrics::replication::{ReplicaReport, ReplicationReport};
use crate::target::{Target, encode_path_segment};
use crate::workload::changes::ChangesFeed;
use crate::workload::replication::{ContinuousReplication, remote};
use jobs::JobLog;
use one_shots::OneShots;

/// What the report says of PouchDB Server's replications (see `one_shots`).
const ONE_SHOTS_NOTE: &str = "PouchDB Server: one-shot _replicator jobs back to back, not a continuous one (deleting a running continuous job's document stops PouchDB Server 4.2); the lag includes the gaps between jobs";

/// How long one request about the replications may take.
const REQUEST_WAIT: Duration = Duration::from_secs(30);

/// Where a replica is: its database, the server that holds it, and how that server's
/// replicator is told to reach it.
struct ReplicaAt {
    database: String,
    /// The replica's URL without credentials when it is on another server.
    url: Option<String>,
    /// The server holding it: the run's own, or the one its URL names.
    endpoints: Vec<Arc<Endpoint>>,
    side: Side,
}

impl ReplicaAt {
    /// A database on the run's own server, or one at a URL (its credentials, if any,
    /// are for that server alone, and Basic).
    fn resolve(
        given: &str,
        endpoints: &[Arc<Endpoint>],
        target: &Target,
        address: &ReplicationAddress,
    ) -> Result<ReplicaAt, String> {
        let Some(remote) = remote(given) else {
            return Ok(ReplicaAt {
                database: given.to_string(),
                url: None,
                endpoints: endpoints.to_vec(),
                side: Side {
                    url: address.database_url(given),
                    auth: address.auth().cloned(),
                },
            });
        };
        let shown = crate::target::redact(given);
        let remote = remote.map_err(|e| format!("{shown:?} {e}"))?;
        let mut server = Target::parse(&remote.server, &remote.database)
            .map_err(|e| format!("{shown:?}: {e}"))?;
        if server.uses_tls() && target.tls.is_none() {
            return Err(format!(
                "{shown:?} is https, but the run has no TLS settings (its own address is http); give the replica an http:// address"
            ));
        }
        server.tls.clone_from(&target.tls);
        let auth = Auth::basic(server.credentials.clone());
        let url = format!(
            "{}/{}",
            server.nodes[0],
            encode_path_segment(&remote.database)
        );
        Ok(ReplicaAt {
            database: remote.database,
            endpoints: Endpoint::all(&server, &auth, DEFAULT_MAX_RESPONSE),
            side: Side {
                url: url.clone(),
                auth: server.credentials.clone().map(ReplicationAuth::Basic),
            },
            url: Some(url),
        })
    }
}

/// One replica while the phase runs.
struct Replica {
    database: String,
    url: Option<String>,
    created: bool,
    documents: Vec<String>,
    watch: Watch,
    /// PouchDB Server's jobs (see `one_shots`); none elsewhere.
    one_shots: Vec<OneShots>,
}

/// A phase's running replications.
pub struct Running {
    plan: ContinuousReplication,
    client: Client,
    /// How the server takes credentials, which also tells PouchDB Server apart.
    form: Form,
    replicas: Vec<Replica>,
    /// Every secret the `_replicator` documents carry, hidden from every message.
    sides: Vec<Side>,
    jobs: Arc<Mutex<JobLog>>,
    sampler: Option<JoinHandle<()>>,
}

/// The feed each replica is followed with: one continuous consumer.
fn replica_feed(plan: &ContinuousReplication) -> ChangesFeed {
    ChangesFeed {
        grace: plan.grace,
        ..ChangesFeed::with_consumers(1)
    }
}

/// A prefix no other run's `_replicator` documents share.
fn document_prefix() -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("sofabench-{nanos:x}")
}

impl Running {
    /// Creates the replicas, starts following them, and writes the `_replicator`
    /// documents. On a failure, what was started is removed again.
    pub async fn start(
        plan: &ContinuousReplication,
        endpoints: &[Arc<Endpoint>],
        target: &Target,
        settings: &ActionSettings,
    ) -> Result<Running, String> {
        let problems = plan.problems("replication.to", Some(&target.database));
        if !problems.is_empty() {
            return Err(problems.join("; "));
        }
        let mut client = Client::new(endpoints[0].clone(), Some(REQUEST_WAIT));
        let form = actions::form(&mut client).await;
        let address = &settings.replication;
        let source = Side {
            url: address.database_url(&target.database),
            auth: address.auth().cloned(),
        };
        let mut running = Running {
            plan: plan.clone(),
            client,
            form,
            replicas: Vec::new(),
            sides: vec![source.clone()],
            jobs: Arc::default(),
            sampler: None,
        };
        let prefix = document_prefix();
        for (i, given) in plan.replicas.iter().enumerate() {
            let id = format!("{prefix}-{i}");
            let started = match ReplicaAt::resolve(given, endpoints, target, address) {
                Ok(at) => {
                    running.sides.push(at.side.clone());
                    running.add(at, &source, (form, &id)).await
                }
                Err(e) => Err(e),
            };
            if let Err(e) = started {
                let shown = crate::target::redact(given);
                let e = running.quote(&format!("replication to {shown:?}: {e}"));
                running.abandon().await;
                return Err(e);
            }
        }
        Ok(running)
    }

    /// Creates and follows one replica (on the server that holds it), then starts
    /// replicating to it (and back).
    async fn add(
        &mut self,
        at: ReplicaAt,
        source: &Side,
        (form, id): (Form, &str),
    ) -> Result<(), String> {
        let mut holder = Client::new(at.endpoints[0].clone(), Some(REQUEST_WAIT));
        let created = actions::create(&mut holder, &at.database).await?;
        let path = format!("/{}", encode_path_segment(&at.database));
        let watch = Watch::start(&replica_feed(&self.plan), &at.endpoints, &[path]).await?;
        let replica = &at.side;
        self.replicas.push(Replica {
            database: at.database.clone(),
            url: at.url.clone(),
            created,
            documents: Vec::new(),
            watch,
            one_shots: Vec::new(),
        });
        let mut directions = vec![(format!("{id}-to"), source, replica)];
        if self.plan.two_way {
            directions.push((format!("{id}-back"), replica, source));
        }
        for (document, from, to) in directions {
            let body = document::body(from, to, form);
            let Some(last) = self.replicas.last_mut() else {
                continue;
            };
            if form == Form::Userinfo {
                let client = Client::new(self.client.endpoint_arc().clone(), Some(REQUEST_WAIT));
                let jobs = OneShots::start(client, document.clone(), body);
                last.one_shots.push(jobs);
            } else {
                document::put(&mut self.client, &document, &body).await?;
            }
            last.documents.push(document);
        }
        Ok(())
    }

    /// `message`, which quotes an answer, made safe to show: every secret of the run and
    /// of both ends hidden, control characters escaped.
    fn quote(&self, message: &str) -> String {
        let sides: Vec<&ReplicationAuth> =
            self.sides.iter().filter_map(|s| s.auth.as_ref()).collect();
        let secrets = (&self.client.endpoint().credential, sides.as_slice());
        crate::text::Quoted::message(message, &secrets)
    }

    /// Where the phase's writers tell of their writes: one table per replica.
    pub fn tables(&self) -> Vec<Arc<Table>> {
        self.replicas.iter().map(|r| r.watch.table()).collect()
    }

    /// Takes the replicas' figures and the jobs' state every `interval` from the phase's
    /// start.
    pub fn sample_from(&mut self, phase_start: Instant, interval: Duration, bound: usize) {
        for replica in &mut self.replicas {
            replica.watch.sample_from(phase_start, interval, bound);
        }
        self.jobs.lock().unwrap_or_else(|p| p.into_inner()).looks = Series::new(bound);
        let documents = self.documents();
        let client = Client::new(self.client.endpoint_arc().clone(), Some(REQUEST_WAIT));
        let task = jobs::sample(
            client,
            documents,
            (phase_start, interval),
            self.jobs.clone(),
        );
        self.sampler = Some(tokio::spawn(task));
    }

    fn documents(&self) -> Vec<String> {
        self.replicas
            .iter()
            .flat_map(|r| r.documents.iter().cloned())
            .collect()
    }

    /// Stops following the replicas and removes the documents written so far, after a
    /// failed start.
    async fn abandon(mut self) {
        let documents = self.documents();
        for replica in std::mem::take(&mut self.replicas) {
            replica.watch.finish(Duration::ZERO).await;
            for jobs in replica.one_shots {
                let _ = jobs.finish().await;
            }
        }
        if self.form == Form::Object {
            self.remove_documents(documents).await;
        }
    }

    /// Deletes the `_replicator` documents `ids`; what could not be deleted is said (its
    /// job goes on replicating after the run).
    async fn remove_documents(&mut self, ids: Vec<String>) -> Vec<String> {
        let mut notes = Vec::new();
        for id in ids {
            if let Err(e) = document::remove(&mut self.client, &id).await {
                notes.push(self.quote(&format!(
                    "the _replicator document {id:?} could not be removed, its replication goes on: {e}; delete it by hand"
                )));
            }
        }
        notes
    }

    /// Waits until every replica has shown every write, or `grace` has passed, then
    /// stops the replications and adds up what was measured.
    pub async fn finish(mut self, grace: Duration) -> ReplicationReport {
        let documents = self.documents();
        let waits: Vec<_> = std::mem::take(&mut self.replicas)
            .into_iter()
            .map(|replica| {
                let Replica {
                    database,
                    url,
                    created,
                    documents,
                    watch,
                    one_shots,
                } = replica;
                tokio::spawn(async move {
                    let lag = watch.finish(grace).await;
                    let mut problems = Vec::new();
                    for (jobs, id) in one_shots.into_iter().zip(&documents) {
                        if let Err(e) = jobs.finish().await {
                            problems.push(format!("the _replicator document {id:?}: {e}"));
                        }
                    }
                    let report = ReplicaReport {
                        database,
                        url,
                        documents,
                        created,
                        lag,
                    };
                    (report, problems)
                })
            })
            .collect();
        let mut replicas = Vec::with_capacity(waits.len());
        let mut problems = Vec::new();
        for wait in waits {
            // A panic would be a bug; the replica's figures would then be missing.
            if let Ok((report, trouble)) = wait.await {
                replicas.push(report);
                problems.extend(trouble);
            }
        }
        if let Some(sampler) = self.sampler.take() {
            sampler.abort();
        }
        let mut notes = self.jobs.lock().unwrap_or_else(|p| p.into_inner()).notes();
        notes.extend(problems.iter().map(|p| self.quote(p)));
        if self.form == Form::Object {
            notes.extend(self.remove_documents(documents).await);
        } else {
            notes.push(ONE_SHOTS_NOTE.to_string());
        }
        let looks = std::mem::take(&mut self.jobs.lock().unwrap_or_else(|p| p.into_inner()).looks);
        let jobs = looks.into_parts().0.into_iter().flat_map(|l| l.0).collect();
        ReplicationReport {
            two_way: self.plan.two_way,
            replicas,
            jobs,
            notes,
            // The engine knows; one machine unless it says otherwise.
            client_nodes: 1,
        }
    }
}
