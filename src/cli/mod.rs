//! The command line: what users type, turned into settings for the parts that do the work.
//!
//! Iron Cushion's flags keep their names (`--num_connections=100`); each also has a
//! kebab-case spelling (`--num-connections 100`). An Iron Cushion command line with the
//! program name replaced by `sofabench` runs as it is: without a subcommand, `run` is meant.

mod changes;
mod check;
mod compare;
mod completions;
mod config;
mod generate;
mod merge;
mod progress;
mod report;
mod run;
mod setup;
mod templates;
mod terminal;

use crate::time::duration;
use crate::workload::AttachmentSizes;

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{ArgMatches, Args, CommandFactory, FromArgMatches, Parser, Subcommand};

use crate::exit::Failed;
use crate::workload::{DocSize, IdScheme, KeyChoice};

#[derive(Parser, Debug)]
#[command(
    name = "sofabench",
    args_override_self = true,
    version,
    about = "Benchmark and load-test databases that speak the CouchDB HTTP API",
    long_about = "Benchmark and load-test databases that speak the CouchDB HTTP API.\n\n\
        A run bulk inserts documents generated from a template, then creates, reads, updates \
        and deletes them in a random order, and reports Iron Cushion's figures with latency \
        percentiles. Iron Cushion's flags work as they are."
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

// Parsed once per process: the size of the run's flags does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand, Debug)]
enum Command {
    /// Run the benchmark: bulk insert, then create/read/update/delete in random order.
    Run(RunArgs),
    /// Print documents generated from a template, one JSON document per line.
    Generate(GenerateArgs),
    /// List the built-in scenarios, one line each.
    Scenarios,
    /// Make any result format (HTML, CSV, HdrHistogram logs, text) from a result's JSON.
    Report(ReportArgs),
    /// Compare two result files: throughput and latency percentiles side by side.
    Compare(CompareArgs),
    /// Merge the result files of several nodes into the result of the whole run.
    Merge(MergeArgs),
    /// Check thresholds (e.g. 'read.p99 < 20ms') on a saved result; exit 1 if one fails.
    Check(CheckArgs),
    /// Print the completion script for SHELL, e.g. `sofabench completions bash`.
    Completions(CompletionsArgs),
    /// Print the man page (roff): the top page, or one subcommand's (`sofabench man run`).
    Man(ManArgs),
}

/// Flags of `sofabench run`. Defaults follow the example in Iron Cushion's README, scaled
/// to a first run on a laptop.
#[derive(Args, Debug)]
pub struct RunArgs {
    /// Address of the database server, http://[user:password@]host:port; several nodes
    /// separated by commas share the connections.
    #[arg(
        long = "database_address",
        visible_alias = "database-address",
        value_name = "URL",
        default_value = "http://127.0.0.1:5984"
    )]
    database_address: String,

    /// Name of the database.
    #[arg(
        long = "database_name",
        visible_alias = "database-name",
        value_name = "NAME",
        default_value = "sofabench"
    )]
    database_name: String,

    /// Number of concurrent connections to the database.
    #[arg(
        long = "num_connections",
        visible_alias = "num-connections",
        value_name = "N",
        default_value_t = 10
    )]
    num_connections: u64,

    /// JSON file whose documents' shape the generated documents take.
    #[arg(
        long = "json_document_schema_filename",
        visible_alias = "json-document-schema-filename",
        value_name = "FILE",
        conflicts_with = "xml_document_schema_filename"
    )]
    json_document_schema_filename: Option<PathBuf>,

    /// XML file describing the generated documents (<object>, <entry>, <array>, …).
    #[arg(
        long = "xml_document_schema_filename",
        visible_alias = "xml-document-schema-filename",
        value_name = "FILE"
    )]
    xml_document_schema_filename: Option<PathBuf>,

    /// Seed of the random numbers: the same seed gives the same documents and operation
    /// order. Without it, a random seed is chosen and printed.
    #[arg(long, value_name = "N")]
    seed: Option<u64>,

    /// Documents in each bulk insert request.
    #[arg(
        long = "num_documents_per_bulk_insert",
        visible_alias = "num-documents-per-bulk-insert",
        value_name = "N",
        default_value_t = 1000
    )]
    num_documents_per_bulk_insert: u64,

    /// Bulk insert requests per connection (0 skips the bulk insert step).
    #[arg(
        long = "num_bulk_insert_operations",
        visible_alias = "num-bulk-insert-operations",
        value_name = "N",
        default_value_t = 10
    )]
    num_bulk_insert_operations: u64,

    /// CRUD operations per connection (0 skips the CRUD step). Default 1000, unless
    /// --duration or --total-operations bounds the step.
    #[arg(
        long = "num_crud_operations",
        visible_alias = "num-crud-operations",
        value_name = "N"
    )]
    num_crud_operations: Option<u64>,

    /// CRUD operations of all connections together, shared evenly (e.g. Aerospike's
    /// operations x iterations).
    #[arg(
        long = "total-operations",
        visible_alias = "total_operations",
        value_name = "N"
    )]
    total_operations: Option<u64>,

    /// Bound the CRUD step by time: 30s, 30m, 30h. With a count too, whichever comes first.
    #[arg(long, visible_alias = "time", value_name = "TIME", value_parser = duration::parse)]
    duration: Option<std::time::Duration>,

    /// Open load model: this many CRUD operations per second in total, spread evenly over
    /// the connections on a fixed schedule; latency counts from each operation's scheduled
    /// start, so a stalled server shows in the percentiles. FROM..TO (e.g. 100..1000)
    /// ramps the rate linearly over the phase's --duration.
    #[arg(long, value_name = "OPS_PER_SEC|FROM..TO", value_parser = positive_rate)]
    rate: Option<crate::workload::Rate>,

    /// Search for the highest rate the database sustains within the --threshold
    /// conditions: the scenario's last phase runs again and again, each step for
    /// --step-duration at one rate, bisecting between LOW and HIGH operations per second
    /// (the phases before it run once, first). A step meets when it achieves its rate,
    /// nothing fails (unless a threshold on errors allows it) and every threshold holds.
    #[arg(
        long = "search-rate",
        visible_alias = "search_rate",
        value_name = "LOW..HIGH",
        value_parser = search_range,
        conflicts_with = "rate"
    )]
    search_rate: Option<(f64, f64)>,

    /// --search-rate: how long each step runs.
    #[arg(
        long = "step-duration",
        visible_alias = "step_duration",
        value_name = "TIME",
        value_parser = duration::parse,
        default_value = "10s"
    )]
    step_duration: std::time::Duration,

    /// --search-rate: the most steps, LOW and HIGH included (2 to 100).
    #[arg(
        long = "search-steps",
        visible_alias = "search_steps",
        value_name = "N",
        default_value_t = 12
    )]
    search_steps: u32,

    /// --search-rate: stop when the lowest rate that failed is within this much above
    /// the highest that met (0.1% to 50%).
    #[arg(
        long = "search-precision",
        visible_alias = "search_precision",
        value_name = "PERCENT",
        value_parser = precision,
        default_value = "5%"
    )]
    search_precision: f64,

    /// Under --rate, an operation that starts later than scheduled by more than this is
    /// counted as late.
    #[arg(long = "late-threshold", value_name = "TIME", value_parser = duration::parse, default_value = "10ms")]
    late_threshold: std::time::Duration,

    /// Per-request timeout (e.g. 2s): a request not answered in time counts as a timeout,
    /// its connection is reopened, and the run goes on. 0 waits forever.
    #[arg(long, value_name = "TIME", value_parser = duration::parse, default_value = "30s")]
    timeout: std::time::Duration,

    /// The largest response body read (e.g. 64MiB, 8MB, 1048576): a longer answer fails
    /// its operation as `too_large` and closes its connection, without being read. Also
    /// bounds setup and background actions' answers.
    #[arg(long = "max-response-size", value_name = "SIZE", value_parser = byte_size, default_value = "64MiB")]
    max_response_size: u64,

    /// The longest value kept from an answer for a document (a revision, an id the server
    /// gave, an id --key-sample draws), e.g. 512, 4KiB: a longer one fails its operation as
    /// `value_too_long` and is not kept, so the server cannot grow the client's memory.
    #[arg(long = "max-kept-value", value_name = "SIZE", value_parser = byte_size, default_value = "512")]
    max_kept_value: u64,

    /// How long a connection that lost its server keeps trying to reconnect (capped
    /// backoff with jitter) before it gives up its share of the phase; 0 gives up at once.
    /// Meanwhile its operations wait (closed model) or fail as `unreachable` (--rate).
    #[arg(long = "reconnect-for", value_name = "TIME", value_parser = duration::parse, default_value = "30s")]
    reconnect_for: std::time::Duration,

    /// With several --database_address nodes: a connection that cannot reach its node
    /// moves on to the next one that answers.
    #[arg(long)]
    failover: bool,

    /// For https:// nodes: trust the certificate authorities in this PEM file instead of
    /// the system's (a private CA, a self-signed server).
    #[arg(long, value_name = "FILE")]
    cacert: Option<PathBuf>,

    /// For https:// nodes: accept any certificate, without checking who the server is.
    /// The report warns and the result file records it.
    #[arg(long, short = 'k')]
    insecure: bool,

    /// For https:// nodes that ask for one (mutual TLS): the client certificate chain, PEM;
    /// with --key.
    #[arg(long, value_name = "FILE", requires = "key")]
    cert: Option<PathBuf>,

    /// The private key of --cert, PEM.
    #[arg(long, value_name = "FILE", requires = "cert")]
    key: Option<PathBuf>,

    /// Opens a new connection (and over TLS, a new handshake) for every request, to
    /// measure what setting up connections costs the server; `Connection: close` is sent.
    #[arg(long = "disable-keepalive")]
    disable_keepalive: bool,

    /// Keep the client's threads polling for answers instead of sleeping while requests
    /// are in flight, so the server never pays for waking the client: its cores are fully
    /// busy for the whole run. For a client on a machine of its own, not one it shares
    /// with the database.
    #[arg(long = "busy-poll")]
    busy_poll: bool,

    /// The size of the attachments a mix's `attachment_write` sends (e.g. 64KiB, 1GiB),
    /// or several separated by commas, each equally likely (1KiB,64KiB,1MiB); 1 byte to
    /// 4 GiB less a byte each. Bodies are made as they are sent, never held in memory.
    #[arg(long = "attachment-size", value_name = "SIZE[,SIZE…]", value_parser = attachment_sizes, default_value = "64KiB")]
    attachment_size: AttachmentSizes,

    /// Give every document a bulk insert stores an inline attachment (`_attachments`,
    /// base64 in the request) of this size, or of one of several separated by commas,
    /// each equally likely; 1 byte to 4 GiB less a byte each, and a bulk request at most 256 MiB.
    /// Later `attachment_read`s may read them. Without it, bulk documents have none.
    #[arg(long = "bulk-attachment-size", value_name = "SIZE[,SIZE…]", value_parser = bulk_attachment_sizes)]
    bulk_attachment_size: Option<AttachmentSizes>,

    /// Do not ask the server for its own statistics each interval (`_node/_local/_stats`,
    /// `_node/_local/_system`, `_active_tasks`), which are otherwise kept beside every
    /// interval row, each node's apart.
    #[arg(long = "no-server-stats")]
    no_server_stats: bool,

    /// How many threads (and so cores) the client runs its connections on, like the
    /// Aerospike benchmark's processes and titan's worker threads; the client's CPU share
    /// is then of these. Default: one per core of this machine.
    #[arg(long, value_name = "N", value_parser = threads)]
    threads: Option<usize>,

    /// CouchDB's q for a database the run creates: how many shards it is split into
    /// (1 to 256). Apache CouchDB 2 and later; the run refuses a server that does not
    /// report shards, or a database with other ones.
    #[arg(long = "db-q", value_name = "Q", value_parser = clap::value_parser!(u32).range(1..=256))]
    db_q: Option<u32>,

    /// CouchDB's n for a database the run creates: how many copies of each shard (1 to
    /// 16; a server may cap it at its nodes, which the run then refuses).
    #[arg(long = "db-n", value_name = "N", value_parser = clap::value_parser!(u32).range(1..=16))]
    db_n: Option<u32>,

    /// Create the database partitioned (Apache CouchDB 3 and later), and give every
    /// document an id `partition:docid` over --partitions partitions; the run refuses a
    /// server without partitions, or a database that is not partitioned.
    #[arg(long = "db-partitioned")]
    db_partitioned: bool,

    /// With --db-partitioned: how many partitions the documents spread over (default 16).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    partitions: Option<u64>,

    /// With --db-partitioned: how documents spread over the partitions: uniform (the
    /// default), or zipfian (partition k holds a share ∝ 1/(k+1)^0.99), or zipfian:C.
    #[arg(long = "partition-keys", value_name = "SPREAD", value_parser = partition_keys)]
    partition_keys: Option<KeyChoice>,

    /// Send an operation the server turned away with 429 Too Many Requests again, at most
    /// MAX times (10 without a number), after the Retry-After it asked for (at most 60 s;
    /// without a usable one, a backoff with jitter). Retries and the time waited are
    /// reported, and under --rate the wait counts in the response time. Without it a 429
    /// fails its operation as rate_limited.
    #[arg(
        long = "retry-429",
        visible_alias = "retry_429",
        value_name = "MAX",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = DEFAULT_RETRIES_429,
        value_parser = retries_429
    )]
    retry_429: Option<u32>,

    /// Existing data: reads, updates and deletes target documents LOW (included) to HIGH
    /// (excluded) of an earlier run with the same --id-prefix and --id-scheme, already in
    /// the database (needs --reuse); a missing one is a miss, not a failure.
    #[arg(
        long = "key-range",
        visible_alias = "key_range",
        value_name = "LOW-HIGH",
        value_parser = crate::workload::existing::parse_range,
        requires_all = ["reuse", "id_prefix"],
        conflicts_with_all = ["key_sample", "hot_docs"]
    )]
    key_range: Option<(u64, u64)>,

    /// Existing data: reads, updates and deletes target N ids sampled from the database's
    /// _all_docs before the first phase (needs --reuse); a missing one is a miss.
    #[arg(
        long = "key-sample",
        visible_alias = "key_sample",
        value_name = "N",
        value_parser = crate::workload::existing::parse_sample,
        requires = "reuse",
        conflicts_with = "hot_docs"
    )]
    key_sample: Option<u64>,

    /// How updates and deletes of existing data learn the revision they write over:
    /// fetch (GET it first) or blind (send none; a 409 is counted as a conflict).
    #[arg(
        long = "existing-writes",
        visible_alias = "existing_writes",
        value_name = "HOW",
        value_parser = crate::workload::ExistingWrites::parse,
        default_value = "fetch"
    )]
    existing_writes: crate::workload::ExistingWrites,

    /// Hot documents: every connection's updates go to N shared documents (made before
    /// the first phase, ids PREFIX-hot-K), picked by the phase's keys; a 409 there fetches
    /// the current revision and sends the update again (at most 10 PUTs), and the 409s,
    /// fetches and attempts per update are reported.
    #[arg(long = "hot-docs", value_name = "N", value_parser = crate::workload::hot::parse_count)]
    hot_docs: Option<u64>,

    /// One database per user: spread the documents over N databases, NAME-0000 …
    /// NAME-(N-1) after --database_name (four digits; 1 keeps NAME itself), each created,
    /// kept and cleaned up as the run's database is; every connection writes to all of
    /// them, and _changes consumer i follows database i mod N.
    #[arg(
        long,
        value_name = "N",
        value_parser = crate::workload::databases::parse,
        default_value = "1"
    )]
    databases: crate::workload::Databases,

    /// How often a live line is printed.
    #[arg(long, value_name = "TIME", value_parser = duration::parse, default_value = "1s")]
    interval: std::time::Duration,

    /// The most intervals a phase keeps in the result: past it, adjacent intervals are
    /// merged pairwise (counts and histograms exactly) into ones twice as long, so memory
    /// and the result stay the same size over any length of run.
    #[arg(
        long = "max-intervals",
        value_name = "N",
        value_parser = crate::metrics::coarse::parse_bound,
        default_value = "1000"
    )]
    max_intervals: usize,

    /// For tests: accept an --interval down to 1ms, so that thousands of intervals pass
    /// in seconds.
    #[arg(long = "short-intervals", hide = true)]
    short_intervals: bool,

    /// Weight of creates among the CRUD operations.
    #[arg(
        long = "create_weight",
        visible_alias = "create-weight",
        value_name = "W",
        default_value_t = 2
    )]
    create_weight: u64,

    /// Weight of reads among the CRUD operations.
    #[arg(
        long = "read_weight",
        visible_alias = "read-weight",
        value_name = "W",
        default_value_t = 2
    )]
    read_weight: u64,

    /// Weight of updates among the CRUD operations.
    #[arg(
        long = "update_weight",
        visible_alias = "update-weight",
        value_name = "W",
        default_value_t = 3
    )]
    update_weight: u64,

    /// Weight of deletes among the CRUD operations.
    #[arg(
        long = "delete_weight",
        visible_alias = "delete-weight",
        value_name = "W",
        default_value_t = 3
    )]
    delete_weight: u64,

    /// Weight of standalone attachment writes (`attachment_write`, sizes from
    /// --attachment-size) among the CRUD operations.
    #[arg(
        long = "attachment_write_weight",
        visible_alias = "attachment-write-weight",
        value_name = "W",
        default_value_t = 0
    )]
    attachment_write_weight: u64,

    /// Weight of reads of the attachments written (`attachment_read`) among the CRUD
    /// operations; needs --attachment_write_weight above 0.
    #[arg(
        long = "attachment_read_weight",
        visible_alias = "attachment-read-weight",
        value_name = "W",
        default_value_t = 0
    )]
    attachment_read_weight: u64,

    /// Add to a database that already holds documents.
    #[arg(long, conflicts_with = "recreate")]
    reuse: bool,

    /// Delete a database that already holds documents and create it empty.
    #[arg(long)]
    recreate: bool,

    /// Delete the database after the run, if this run created it.
    #[arg(long)]
    cleanup: bool,

    /// Repeat the whole run (or scenario) N times into one result, each repetition on a
    /// fresh database of its own (<database_name>-run1, -run2 …, created, and deleted with
    /// --cleanup) with ids of its own, from the same seed; the report shows each phase's
    /// spread over the repetitions, and `compare` tests changes against it. Not with
    /// --search-rate, whose steps each depend on the one before.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 1,
        value_parser = runs,
        conflicts_with = "search_rate"
    )]
    runs: u64,

    /// The base address the server itself uses to reach the database's node, for
    /// replication (behind a proxy or in a cluster, the client's address is not the
    /// server's): http[s]://[user:password@]host:port[/path]. Default: the first
    /// --database_address node, with the run's credentials.
    #[arg(
        long = "replication-address",
        visible_alias = "replication_address",
        value_name = "URL"
    )]
    replication_address: Option<String>,

    /// How long a background action (compaction, replication) is waited for before the
    /// report says its end is unknown. 0 waits forever.
    #[arg(long = "action-timeout", value_name = "TIME", value_parser = duration::parse, default_value = "10m")]
    action_timeout: std::time::Duration,

    #[command(flatten)]
    changes: changes::ChangesArgs,

    /// Prefix of the document ids (default: a random one per run, so runs never collide).
    #[arg(long = "id-prefix", value_name = "TEXT")]
    id_prefix: Option<String>,

    /// How the ids of new documents are made, in phases that do not say: sequential
    /// (`<prefix>-<number>`, the default) or uuid (32 hex digits that look random,
    /// reproducible from the prefix).
    #[arg(long = "id-scheme", value_name = "SCHEME", value_parser = IdScheme::named)]
    id_scheme: Option<IdScheme>,

    /// Pad every document written to SIZE bytes (its JSON with its _id, without its
    /// _rev) with a member "sofabench_padding", in phases that do not say; a range
    /// LOW-HIGH gives each document its own size, drawn uniformly. E.g. 4KiB, 1KiB-64KiB.
    #[arg(long = "doc-size", value_name = "SIZE", value_parser = DocSize::parse)]
    doc_size: Option<DocSize>,

    /// No progress bar and no live lines.
    #[arg(long, short)]
    quiet: bool,

    /// Say everything after each phase: per operation what it achieved and carried, the
    /// disk, the connections, the logins, the server's figures and its notes.
    #[arg(long, short)]
    verbose: bool,

    /// Serve the run's figures for Prometheus (and OpenMetrics) at http://ADDR/metrics
    /// while it runs: a port alone (9464) listens on this machine only; an address
    /// (0.0.0.0:9464) on what it names, with a warning.
    #[arg(
        long = "metrics-listen",
        visible_alias = "metrics_listen",
        value_name = "ADDR",
        value_parser = crate::exposition::address::parse
    )]
    metrics_listen: Option<std::net::SocketAddr>,

    /// After the run, keep --metrics-listen's endpoint up until a scraper has read the
    /// final figures, at most this long (e.g. the scrape interval). 0 stops at once.
    #[arg(
        long = "metrics-linger",
        visible_alias = "metrics_linger",
        value_name = "TIME",
        value_parser = duration::parse,
        default_value = "0s",
        requires = "metrics_listen"
    )]
    metrics_linger: std::time::Duration,

    /// Run a scenario: a built-in one by name (`sofabench scenarios` lists them) or a TOML
    /// file of phases. Default: ironcushion, the two steps these flags describe.
    #[arg(long, value_name = "NAME|FILE")]
    scenario: Option<String>,

    /// scaling: go on up to 1,000,000 operations.
    #[arg(long)]
    full: bool,

    /// scaling: one plain run of this many writes (then --reads reads).
    #[arg(long, value_name = "N")]
    writes: Option<u64>,

    /// scaling: reads after --writes.
    #[arg(long, value_name = "N")]
    reads: Option<u64>,

    /// couchdb-report: the bulk sizes to compare.
    #[arg(
        long = "batch-sizes",
        value_name = "N,N,…",
        value_delimiter = ',',
        default_value = "50,100,200"
    )]
    batch_sizes: Vec<u64>,

    /// mango and views: the top-level field of the template the queries draw their
    /// values from (Iron Cushion's integer1 by default).
    #[arg(long = "query-field", value_name = "NAME", default_value = "integer1")]
    query_field: String,

    /// Write every result file into this folder: result.json, result.csv, result.html
    /// and result.<operation>.hlog per operation.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,

    /// Write the result as JSON (the versioned schema of docs/RESULTS.md).
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,

    /// Write the per-interval series as CSV, one row per interval and operation.
    #[arg(long, value_name = "FILE")]
    csv: Option<PathBuf>,

    /// Write a self-contained HTML page with the tables and charts.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,

    /// Replace result files that already exist.
    #[arg(long)]
    overwrite: bool,

    /// Fail the run (exit 1) unless this holds: [PHASE:][OPERATION.]METRIC OP VALUE, e.g.
    /// 'read.p99 < 20ms', 'error_rate < 0.1%', 'bulk_insert.docs_per_sec > 1000'. Metrics:
    /// throughput, p50, p90, p99, p999, max, mean, errors, error_rate, and per document
    /// docs_per_sec, doc_errors, doc_error_rate. Repeatable; checked before anything is
    /// sent, evaluated after the run.
    #[arg(long = "threshold", value_name = "EXPR", action = clap::ArgAction::Append)]
    threshold: Vec<String>,

    /// Number of nodes (machines) running this workload together; node I of N runs the
    /// connections I*C .. I*C+C-1 of N*C (C = --num_connections).
    #[arg(
        long = "node-count",
        visible_alias = "node_count",
        env = "SOFABENCH_NODE_COUNT",
        value_name = "N",
        default_value_t = 1
    )]
    node_count: u64,

    /// This node's index, 0 to N-1 (a Kubernetes Indexed Job sets JOB_COMPLETION_INDEX).
    #[arg(
        long = "node-index",
        visible_alias = "node_index",
        env = "JOB_COMPLETION_INDEX",
        value_name = "I",
        default_value_t = 0
    )]
    node_index: u64,

    /// Read flags from a TOML or JSON file (keys are flag names); flags given here win.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,

    /// User name, when the address carries none.
    #[arg(long, env = "SOFABENCH_USER", value_name = "NAME")]
    user: Option<String>,

    /// Password, when the address carries none. Prefer the SOFABENCH_PASSWORD variable:
    /// it stays out of shell history and process lists.
    #[arg(
        long,
        env = "SOFABENCH_PASSWORD",
        hide_env_values = true,
        value_name = "PASSWORD"
    )]
    password: Option<String>,

    /// How requests authenticate: basic (the user and password on every request), cookie
    /// (one POST /_session login per node, its session cookie renewed), jwt (a token from
    /// SOFABENCH_TOKEN), proxy (CouchDB's X-Auth-CouchDB-* headers for --user), iam (an
    /// IBM Cloud API key from SOFABENCH_IAM_API_KEY, for Cloudant), none. Default: basic
    /// with credentials, none without.
    #[arg(long, value_name = "MODE", value_parser = crate::driver::auth::Mode::parse)]
    auth: Option<crate::driver::auth::Mode>,

    /// --auth iam: the token endpoint the API key is exchanged at [default:
    /// https://iam.cloud.ibm.com/identity/token].
    #[arg(
        long = "iam-token-url",
        visible_alias = "iam_token_url",
        value_name = "URL"
    )]
    iam_token_url: Option<String>,

    /// --auth proxy: the roles claimed for --user, separated by commas (e.g. _admin).
    #[arg(
        long = "proxy-roles",
        visible_alias = "proxy_roles",
        value_name = "ROLE,ROLE"
    )]
    proxy_roles: Option<String>,

    /// --auth proxy: a file holding the secret shared with CouchDB ([chttpd_auth] secret)
    /// that X-Auth-CouchDB-Token is made from; or the SOFABENCH_PROXY_SECRET variable.
    /// The secret itself never goes on the command line.
    #[arg(
        long = "proxy-secret-file",
        visible_alias = "proxy_secret_file",
        value_name = "FILE"
    )]
    proxy_secret_file: Option<PathBuf>,
}

/// `--retry-429` without a number: [`Retry429::DEFAULT_MOST`](crate::engine::Retry429).
const DEFAULT_RETRIES_429: &str = "10";

/// The most retries of one operation after 429s.
fn retries_429(text: &str) -> Result<u32, String> {
    let limit = crate::engine::Retry429::LIMIT;
    match text.parse::<u32>() {
        Ok(n) if (1..=limit).contains(&n) => Ok(n),
        _ => Err(format!(
            "{text:?} is not a number of retries from 1 to {limit}; give e.g. --retry-429=5, or --retry-429 alone for {DEFAULT_RETRIES_429}"
        )),
    }
}

/// The most runtime threads `--threads` gives a run.
const MOST_THREADS: usize = 1024;

/// A number of threads, 1 to [`MOST_THREADS`].
fn threads(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(n) if (1..=MOST_THREADS).contains(&n) => Ok(n),
        _ => Err(format!(
            "{text:?} is not a number of threads from 1 to {MOST_THREADS}; give e.g. --threads 4 (the default is one per core)"
        )),
    }
}

/// A number of repetitions, 1 to [`MOST_RUNS`](crate::run::repeat::MOST_RUNS).
fn runs(text: &str) -> Result<u64, String> {
    let most = crate::run::repeat::MOST_RUNS;
    match text.parse::<u64>() {
        Ok(n) if (1..=most).contains(&n) => Ok(n),
        _ => Err(format!(
            "{text:?} is not a number of repetitions from 1 to {most}; give e.g. --runs 5 (1, the default, is one plain run)"
        )),
    }
}

/// A rate above 0, or a ramp FROM..TO.
fn positive_rate(text: &str) -> Result<crate::workload::Rate, String> {
    let rate = crate::workload::Rate::parse(text).map_err(|_| {
        format!(
            "{text:?} is not a rate; give operations per second above 0, e.g. --rate 500, or a ramp over the duration, e.g. --rate 100..1000"
        )
    })?;
    crate::workload::limits::rate_of("--rate", rate).map(|()| rate)
}

/// `LOW..HIGH`: two rates, the first below the second.
fn search_range(text: &str) -> Result<(f64, f64), String> {
    let wrong = || {
        format!(
            "{text:?} is not a range of rates; give LOW..HIGH in operations per second, e.g. --search-rate 100..5000"
        )
    };
    let (low, high) = text.split_once("..").ok_or_else(wrong)?;
    let low: f64 = low.trim().parse().map_err(|_| wrong())?;
    let high: f64 = high.trim().parse().map_err(|_| wrong())?;
    crate::workload::limits::rate("--search-rate's LOW", low)?;
    crate::workload::limits::rate("--search-rate's HIGH", high)?;
    if low >= high {
        return Err(format!(
            "{text:?}: LOW must be below HIGH, e.g. --search-rate 100..5000"
        ));
    }
    Ok((low, high))
}

/// A share: `5%`, or a fraction, `0.05`; from 0.1% to 50%.
fn precision(text: &str) -> Result<f64, String> {
    let (number, scale) = match text.trim().strip_suffix('%') {
        Some(percent) => (percent, 100.0),
        None => (text.trim(), 1.0),
    };
    match number.trim().parse::<f64>() {
        Ok(value) if (0.001..=0.5).contains(&(value / scale)) => Ok(value / scale),
        _ => Err(format!(
            "{text:?} is not a precision from 0.1% to 50%; give e.g. --search-precision 5%"
        )),
    }
}

/// `uniform`, `zipfian` or `zipfian:C`, for `--partition-keys`.
fn partition_keys(text: &str) -> Result<KeyChoice, String> {
    let fail = || {
        format!(
            "{text:?} is not a spread; give uniform, zipfian, or zipfian:C with C between 0 and 1 (e.g. zipfian:0.8)"
        )
    };
    match text.split_once(':') {
        None if text == "uniform" => Ok(KeyChoice::Uniform),
        None if text == "zipfian" => Ok(KeyChoice::Zipfian(0.99)),
        Some(("zipfian", c)) => {
            let c: f64 = c.parse().map_err(|_| fail())?;
            crate::workload::limits::zipfian(c).map_err(|_| fail())?;
            Ok(KeyChoice::Zipfian(c))
        }
        _ => Err(fail()),
    }
}

/// `--attachment-size`: sizes separated by commas.
fn attachment_sizes(text: &str) -> Result<AttachmentSizes, String> {
    let sizes = text
        .split(',')
        .map(|size| byte_size(size.trim()))
        .collect::<Result<Vec<u64>, String>>()?;
    AttachmentSizes::new(sizes)
}

/// `--bulk-attachment-size`: sizes separated by commas, as `--attachment-size`.
fn bulk_attachment_sizes(text: &str) -> Result<AttachmentSizes, String> {
    attachment_sizes(text).map_err(|e| e.replace("--attachment-size", "--bulk-attachment-size"))
}

/// A number of bytes: digits, with an optional unit (B, KB, MB, GB, KiB, MiB, GiB).
fn byte_size(text: &str) -> Result<u64, String> {
    let digits = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(digits);
    let scale: u64 = match unit.trim() {
        "" | "B" => 1,
        "KB" | "kB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        _ => 0,
    };
    match number
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(scale))
    {
        Some(bytes) if bytes > 0 => Ok(bytes),
        _ => Err(format!(
            "{text:?} is not a size; give bytes above 0, e.g. 1048576, 8MB or 64MiB"
        )),
    }
}

/// Flags of `sofabench generate`.
#[derive(Args, Debug)]
pub struct GenerateArgs {
    /// Template file: JSON, or XML when the name ends in .xml.
    #[arg(long, value_name = "FILE")]
    schema: PathBuf,

    /// Number of documents to print.
    #[arg(short = 'n', long = "count", value_name = "N", default_value_t = 1)]
    count: u64,

    /// Seed of the random numbers (default 0, so the output is the same every time).
    #[arg(long, value_name = "N", default_value_t = 0)]
    seed: u64,
}

/// Flags of `sofabench report`.
#[derive(Args, Debug)]
pub struct ReportArgs {
    /// A result written by `run --json` or `--out`.
    #[arg(value_name = "RESULT.json")]
    result: PathBuf,

    /// Write a self-contained HTML page with the tables and charts.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,

    /// Write the per-interval series as CSV.
    #[arg(long, value_name = "FILE")]
    csv: Option<PathBuf>,

    /// Write result.<operation>.hlog (HdrHistogram interval logs) into this folder.
    #[arg(long = "hlog-dir", value_name = "DIR")]
    hlog_dir: Option<PathBuf>,

    /// Print the text report, as the run printed it after its live lines (the default
    /// when no file is asked for).
    #[arg(long)]
    text: bool,

    /// The text report as `run -v` printed it: everything after each phase.
    #[arg(long, short)]
    verbose: bool,

    /// Replace files that already exist.
    #[arg(long)]
    overwrite: bool,
}

/// Flags of `sofabench compare`.
#[derive(Args, Debug)]
pub struct CompareArgs {
    /// The baseline result (a file written by --json or --out).
    #[arg(value_name = "A.json")]
    a: PathBuf,

    /// The result compared with the baseline.
    #[arg(value_name = "B.json")]
    b: PathBuf,
}

/// Flags of `sofabench merge`.
#[derive(Args, Debug)]
pub struct MergeArgs {
    /// The result files of the nodes, one per node.
    #[arg(value_name = "RESULT", required = true, num_args = 1..)]
    results: Vec<PathBuf>,

    /// Write the merged result here (the schema of --json of `run`).
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,

    /// Replace the output file if it exists.
    #[arg(long)]
    overwrite: bool,
}

/// Flags of `sofabench check`.
#[derive(Args, Debug)]
pub struct CheckArgs {
    /// The result to check (a file written by --json, --out or merge).
    #[arg(value_name = "RESULT")]
    result: PathBuf,

    /// A condition the result must meet, e.g. 'read.p99 < 20ms' (repeatable; see
    /// `sofabench run --help`).
    #[arg(long = "threshold", value_name = "EXPR", required = true, action = clap::ArgAction::Append)]
    threshold: Vec<String>,

    /// Judge a result whose run was interrupted (Ctrl-C, or killed: `interrupted: true`)
    /// anyway; without it such a result fails the check, since its last phase was cut
    /// short and later phases never ran.
    #[arg(long)]
    allow_interrupted: bool,
}

/// Flags of `sofabench completions`.
#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell the script is for.
    #[arg(value_name = "SHELL")]
    shell: clap_complete::Shell,
}

/// Flags of `sofabench man`.
#[derive(Args, Debug)]
pub struct ManArgs {
    /// The subcommand whose page to print (e.g. run); without it, the top page.
    #[arg(value_name = "SUBCOMMAND")]
    subcommand: Option<String>,
}

/// Iron Cushion had no subcommands: a command line that starts with a flag other than
/// help or version means `run`.
fn with_default_subcommand(mut args: Vec<OsString>) -> Vec<OsString> {
    let first = args.get(1).and_then(|a| a.to_str()).unwrap_or("");
    let is_meta = matches!(first, "-h" | "--help" | "-V" | "--version");
    if first.starts_with('-') && !is_meta {
        args.insert(1, OsString::from("run"));
    }
    args
}

/// The command line with its files (`--config`, a scenario's settings) read in, parsed.
/// The matches are kept beside the typed flags: they tell a flag the user gave from one
/// left at its default.
fn parse(args: Vec<OsString>) -> Result<(Cli, ArgMatches), Failed> {
    let args = config::expand(config::expand_scenario(with_default_subcommand(args))?)?;
    let matches = Cli::command()
        .try_get_matches_from(args)
        .map_err(Failed::from_clap)?;
    let cli = Cli::from_arg_matches(&matches).map_err(Failed::from_clap)?;
    Ok((cli, matches))
}

/// Everything `run` checks and plans before it sends anything, for a `run` command line:
/// its flags, `--config` file, scenario and template. Sends nothing and writes nothing;
/// the fuzz tests feed it mutated config files.
pub fn check_run(args: Vec<OsString>) -> Result<(), Failed> {
    let (cli, matches) = parse(args)?;
    let run_matches = matches.subcommand_matches("run").unwrap_or(&matches);
    match cli.command {
        Command::Run(args) => setup::build(&args, &setup::Given(run_matches)).map(|_| ()),
        _ => Err(Failed::bad_input("not a run command line".to_string())),
    }
}

/// Parses the command line and does what it says.
pub fn main(args: Vec<OsString>) -> Result<(), Failed> {
    let (cli, matches) = parse(args)?;
    match cli.command {
        Command::Run(args) => {
            let run_matches = matches.subcommand_matches("run").unwrap_or(&matches);
            run::execute(args, run_matches)
        }
        Command::Generate(args) => generate::execute(args),
        Command::Scenarios => {
            let list: String = crate::scenario::BUILTINS
                .iter()
                .map(|builtin| format!("{:<18} {}\n", builtin.name, builtin.description))
                .collect();
            crate::text::sink::out(&list).map_err(crate::exit::Failed::output)
        }
        Command::Report(args) => report::execute(args),
        Command::Compare(args) => compare::execute(args),
        Command::Merge(args) => merge::execute(args),
        Command::Check(args) => check::execute(args),
        Command::Completions(args) => completions::completions(args),
        Command::Man(args) => completions::man(args),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &str) -> Result<Cli, clap::Error> {
        let args: Vec<OsString> = line.split_whitespace().map(OsString::from).collect();
        Cli::try_parse_from(with_default_subcommand(args))
    }

    #[test]
    fn response_sizes_take_units_and_default_to_64_mib() {
        let Command::Run(run) = parse("sofabench run").unwrap().command else {
            panic!("run expected")
        };
        assert_eq!(run.max_response_size, 64 << 20);
        for (text, bytes) in [("1048576", 1 << 20), ("8MB", 8_000_000), ("2KiB", 2048)] {
            assert_eq!(byte_size(text), Ok(bytes), "{text}");
        }
        for text in ["0", "", "MiB", "12 parsecs", "-1", "99999999999GiB"] {
            assert!(byte_size(text).is_err(), "{text}");
        }
    }

    #[test]
    fn retry_429_is_off_alone_or_with_a_number() {
        let retries = |line: &str| match parse(line).map(|cli| cli.command) {
            Ok(Command::Run(run)) => Ok(run.retry_429),
            Ok(_) => panic!("run expected"),
            Err(e) => Err(e.to_string()),
        };
        assert_eq!(retries("sofabench run"), Ok(None));
        let default = crate::engine::Retry429::DEFAULT_MOST;
        assert_eq!(retries("sofabench run --retry-429"), Ok(Some(default)));
        assert_eq!(retries("sofabench run --retry-429=3"), Ok(Some(3)));
        assert_eq!(retries("sofabench run --retry_429=1000"), Ok(Some(1000)));
        for wrong in ["0", "1001", "-1", "lots", ""] {
            let err = retries(&format!("sofabench run --retry-429={wrong}")).unwrap_err();
            assert!(err.contains("from 1 to 1000"), "{wrong}: {err}");
        }
        // A number after a space is not the flag's: it is a stray argument.
        assert!(retries("sofabench run --retry-429 3").is_err());
    }

    #[test]
    fn runs_are_one_by_default_and_at_most_a_hundred() {
        let runs = |line: &str| match parse(line).map(|cli| cli.command) {
            Ok(Command::Run(run)) => Ok(run.runs),
            Ok(_) => panic!("run expected"),
            Err(e) => Err(e.to_string()),
        };
        assert_eq!(runs("sofabench run"), Ok(1));
        assert_eq!(runs("sofabench run --runs 5"), Ok(5));
        assert_eq!(runs("sofabench run --runs=100"), Ok(100));
        for wrong in ["0", "101", "-1", "three"] {
            let err = runs(&format!("sofabench run --runs={wrong}")).unwrap_err();
            assert!(err.contains("from 1 to 100"), "{wrong}: {err}");
        }
    }

    #[test]
    fn rates_ramp_and_searches_take_ranges() {
        let run = |line: &str| match parse(line).map(|cli| cli.command) {
            Ok(Command::Run(run)) => Ok(run),
            Ok(_) => panic!("run expected"),
            Err(e) => Err(e.to_string()),
        };
        let ramp = run("sofabench run --rate 10..200").unwrap();
        assert_eq!(ramp.rate, Some(crate::workload::Rate::ramp(10.0, 200.0)));
        let search = run("sofabench run --search-rate 50..800 --search-precision 2%").unwrap();
        assert_eq!(search.search_rate, Some((50.0, 800.0)));
        assert_eq!(search.search_precision, 0.02);
        assert_eq!(
            (search.search_steps, search.step_duration.as_secs()),
            (12, 10)
        );
        assert_eq!(precision("0.1"), Ok(0.1));
        for (line, says) in [
            ("--rate 0..0", "from 0.001"),
            ("--rate 5..x", "or a ramp over the duration"),
            ("--search-rate 800..50", "LOW must be below HIGH"),
            ("--search-rate 100", "not a range of rates"),
            ("--search-rate 0..100", "--search-rate's LOW 0.0"),
            ("--search-rate 1..1e9", "--search-rate's HIGH"),
            ("--search-rate 1..9 --rate 5", "cannot be used with"),
            (
                "--search-rate 1..9 --search-precision 0%",
                "from 0.1% to 50%",
            ),
            (
                "--search-rate 1..9 --search-precision 60%",
                "from 0.1% to 50%",
            ),
        ] {
            let err = run(&format!("sofabench run {line}")).unwrap_err();
            assert!(err.contains(says), "{line}: {err}");
        }
    }

    #[test]
    fn iron_cushion_lines_parse_in_both_forms() {
        let cli = parse(
            "sofabench --num_connections=100 --num_documents_per_bulk_insert 1000 \
             --num-bulk-insert-operations=20 --create_weight=2 --delete-weight 3",
        )
        .unwrap();
        let Command::Run(run) = cli.command else {
            panic!("run expected")
        };
        assert_eq!(run.num_connections, 100);
        assert_eq!(run.num_documents_per_bulk_insert, 1000);
        assert_eq!(run.num_bulk_insert_operations, 20);
        assert_eq!((run.create_weight, run.delete_weight), (2, 3));
    }

    #[test]
    fn conflicting_flags_are_refused() {
        assert!(parse("sofabench run --reuse --recreate").is_err());
        assert!(
            parse(
                "sofabench run --json_document_schema_filename=a --xml_document_schema_filename=b"
            )
            .is_err()
        );
        assert!(parse("sofabench run --num_connections=-1").is_err());
    }

    #[test]
    fn report_takes_a_result_and_formats() {
        let cli = parse("sofabench report r.json --html r.html --hlog-dir logs --text").unwrap();
        let Command::Report(report) = cli.command else {
            panic!("report expected")
        };
        assert_eq!(report.result, PathBuf::from("r.json"));
        assert_eq!(report.html, Some(PathBuf::from("r.html")));
        assert_eq!(report.hlog_dir, Some(PathBuf::from("logs")));
        assert!(report.text && report.csv.is_none() && !report.overwrite);
        assert!(parse("sofabench report").is_err());
    }
}
