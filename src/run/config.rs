//! The run's settings as the result file records them (its `config` map): the keys and
//! values of the flags, never a password.

use std::collections::BTreeMap;

use serde::Serialize;

/// One field per key of the result's `config`; `None` is written as `null`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ConfigRecord {
    /// The target's nodes, separated by commas, without credentials.
    pub database_address: String,
    pub database_name: String,
    /// `--databases`: how many databases the documents spread over, named
    /// `<database_name>-<i>`; absent for a run over one database.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub databases: Option<u32>,
    pub user: Option<String>,
    /// `--auth`: none, basic, cookie, jwt, proxy or iam.
    pub auth: String,
    /// `--iam-token-url`, with `--auth iam`.
    pub iam_token_url: Option<String>,
    /// `--proxy-roles`, with `--auth proxy`.
    pub proxy_roles: Option<String>,
    pub num_connections: u64,
    pub template: String,
    pub seed: u64,
    pub num_documents_per_bulk_insert: u64,
    pub num_bulk_insert_operations: u64,
    pub num_crud_operations: Option<u64>,
    pub total_operations: Option<u64>,
    pub duration_seconds: Option<f64>,
    pub create_weight: u64,
    pub read_weight: u64,
    pub update_weight: u64,
    pub delete_weight: u64,
    /// `--attachment_write_weight` and `--attachment_read_weight`; absent when 0.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attachment_write_weight: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attachment_read_weight: Option<u64>,
    /// A number, or `{"from": …, "to": …}` for a ramp.
    pub rate: Option<crate::workload::Rate>,
    pub scenario: String,
    /// Each phase described, as the header prints it.
    pub phases: Vec<String>,
    pub timeout_seconds: Option<f64>,
    pub reconnect_for_seconds: f64,
    pub failover: bool,
    /// How https:// nodes were spoken to; absent when none is.
    pub tls: Option<TlsRecord>,
    /// False with --disable-keepalive: a connection per request.
    pub keep_alive: bool,
    /// `--busy-poll`: the client's threads polled for answers instead of sleeping.
    pub busy_poll: bool,
    /// Whether the servers' own statistics were asked for each interval (not with
    /// `--no-server-stats`); with several client machines, the first asks for all.
    pub server_stats: bool,
    pub id_prefix: String,
    pub reuse: bool,
    pub recreate: bool,
    pub node_index: u64,
    pub node_count: u64,
    pub replication_address: String,
    pub action_timeout_seconds: Option<f64>,
    /// The largest answer held (`--max-response-size`), bytes.
    pub max_response_size: u64,
    /// `--interval`: the live intervals' length, seconds.
    pub interval_seconds: f64,
    /// `--max-intervals`: the most intervals a phase keeps in the result; past it they
    /// are merged pairwise (each phase's `interval_width` says how far).
    pub max_intervals: u64,
    /// The most times an operation turned away with a 429 is sent again (`--retry-429`);
    /// `null` when a 429 is not retried.
    pub retry_429: Option<u32>,
    /// The runtime threads the client ran on (`--threads`, else one per core).
    pub threads: u64,
    /// `--db-q` and `--db-n`: the shards and copies asked for the database; `null` for
    /// the server's default.
    pub db_q: Option<u32>,
    pub db_n: Option<u32>,
    /// `--db-partitioned`: how ids spread over the partitions, e.g. "16 partitions,
    /// uniform"; absent for a database that is not partitioned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partitions: Option<String>,
    /// `--hot-docs`: how many documents the connections' updates shared; absent without.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hot_docs: Option<u64>,
    /// `--key-range` or `--key-sample` with `--existing-writes`, e.g. "range 0-100000
    /// (sequential), writes fetch"; absent without them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub existing: Option<String>,
    /// `--doc-size`, e.g. "4096 bytes"; absent without it (phases may set their own).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub doc_size: Option<String>,
    /// `--id-scheme`; absent without it (phases may set their own).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id_scheme: Option<String>,
    /// `--bulk-attachment-size`, e.g. "100,5000" (bytes); absent without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bulk_attachment_size: Option<String>,
    /// `--runs N`: how many repetitions the result holds (each in its `repetitions`);
    /// absent for a plain run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runs: Option<u64>,
    /// `--threshold`: the expressions given, so that `report` judges the result as the
    /// run did; absent when none was.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub thresholds: Vec<String>,
}

/// The TLS settings of a run, as its result records them.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TlsRecord {
    /// False with --insecure: any certificate was accepted.
    pub verified: bool,
    /// The --cacert file, when the system's trust store was not used.
    pub cacert: Option<String>,
    /// Whether a client certificate was offered (--cert).
    pub client_certificate: bool,
}

impl ConfigRecord {
    /// The record as the result's `config` map.
    pub fn to_map(&self) -> BTreeMap<String, serde_json::Value> {
        match serde_json::to_value(self) {
            Ok(serde_json::Value::Object(map)) => map.into_iter().collect(),
            // A struct of plain fields always serializes to an object.
            _ => BTreeMap::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absent_values_are_nulls_and_every_key_is_written() {
        let record = ConfigRecord {
            database_address: "http://127.0.0.1:5984/".to_string(),
            database_name: "db".to_string(),
            user: None,
            auth: "none".to_string(),
            iam_token_url: None,
            proxy_roles: None,
            num_connections: 10,
            template: "t".to_string(),
            seed: 1,
            num_documents_per_bulk_insert: 1000,
            num_bulk_insert_operations: 10,
            num_crud_operations: Some(1000),
            total_operations: None,
            duration_seconds: None,
            create_weight: 2,
            read_weight: 2,
            update_weight: 3,
            delete_weight: 3,
            attachment_write_weight: None,
            attachment_read_weight: None,
            rate: Some(crate::workload::Rate::constant(2.5)),
            scenario: "ironcushion".to_string(),
            phases: vec!["a".to_string()],
            timeout_seconds: Some(30.0),
            reconnect_for_seconds: 30.0,
            failover: false,
            tls: None,
            keep_alive: true,
            busy_poll: false,
            server_stats: false,
            id_prefix: "p".to_string(),
            reuse: false,
            recreate: false,
            node_index: 0,
            node_count: 1,
            replication_address: "r".to_string(),
            action_timeout_seconds: None,
            max_response_size: 64 << 20,
            interval_seconds: 1.0,
            max_intervals: 1_000,
            retry_429: None,
            threads: 2,
            db_q: None,
            db_n: None,
            partitions: None,
            hot_docs: None,
            databases: None,
            existing: None,
            doc_size: None,
            id_scheme: None,
            bulk_attachment_size: None,
            runs: None,
            thresholds: Vec::new(),
        };
        let mut map = record.to_map();
        assert_eq!(map.len(), 42, "runs is left out of a plain run's record");
        assert_eq!(map["retry_429"], serde_json::Value::Null);
        assert_eq!(map["user"], serde_json::Value::Null);
        assert_eq!(map["rate"], serde_json::json!(2.5));
        assert_eq!(map["num_crud_operations"], serde_json::json!(1000));
        assert_eq!(map["phases"], serde_json::json!(["a"]));
        map = ConfigRecord {
            runs: Some(3),
            ..record.clone()
        }
        .to_map();
        assert_eq!(map["runs"], serde_json::json!(3));
        map = ConfigRecord {
            thresholds: vec!["p99<5ms".to_string()],
            ..record
        }
        .to_map();
        assert_eq!(map["thresholds"], serde_json::json!(["p99<5ms"]));
    }
}
