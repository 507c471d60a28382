//! The command line: what users type, turned into settings for the parts that do the work.
//!
//! Help shows every flag in kebab-case (`--num-connections 100`); each also takes its
//! snake_case spelling (`--num_connections=100`, Iron Cushion's; spelling.rs makes them). An
//! Iron Cushion command line with the program name replaced by `sofabench` runs as it is:
//! without a subcommand, `run` is meant. Help, man pages and completion scripts are all
//! made from the one clap `Command` the parser uses.

mod changes;
mod check;
mod choices;
mod compare;
mod completions;
mod config;
mod devices;
mod examples;
mod generate;
mod man;
mod merge;
mod progress;
mod report;
mod run;
mod setup;
mod spelling;
mod templates;
mod terminal;

use crate::time::duration;
use crate::workload::AttachmentSizes;

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{ArgMatches, Args, CommandFactory, FromArgMatches, Parser, Subcommand};

use crate::exit::Failed;
use crate::workload::{DocSize, IdScheme, KeyChoice};
use choices::{
    AUTH_MODES, COMPARE_TESTS, Choices, EXISTING_WRITES, FABRIC_SIZES, ID_SCHEMES,
    PARTITION_SPREADS,
};
use examples::after_long_help;

#[derive(Parser, Debug)]
#[command(
    name = "sofabench",
    args_override_self = true,
    version,
    about = "Benchmark and load-test databases that speak the CouchDB HTTP API",
    long_about = "Benchmark and load-test databases that speak the CouchDB HTTP API.\n\n\
        A run bulk inserts documents generated from a template, then creates, reads, updates \
        and deletes them in a random order, and reports Iron Cushion's figures with latency \
        percentiles. Iron Cushion's flags work as they are.",
    // Iron Cushion's flags alone run `run`: a command is not required, and bare
    // `sofabench` prints this help.
    subcommand_required = false,
    override_usage = "sofabench [COMMAND]\n       sofabench [RUN OPTIONS]",
    after_help = "Without a command, the flags of `run` run it, as Iron Cushion's command lines do.",
    after_long_help = after_long_help("sofabench"),
    mut_subcommands = spelling::snake_case_too
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
    #[command(
        after_help = "All options, values and examples: sofabench run --help. Flags take snake_case too: --num_connections",
        after_long_help = after_long_help("run")
    )]
    Run(RunArgs),
    /// Print documents generated from a template, one JSON document per line.
    #[command(after_long_help = after_long_help("generate"))]
    Generate(GenerateArgs),
    /// List the built-in scenarios, one line each.
    #[command(after_long_help = after_long_help("scenarios"))]
    Scenarios,
    /// Make any result format (HTML, CSV, HdrHistogram logs, text) from a result's JSON.
    #[command(after_long_help = after_long_help("report"))]
    Report(ReportArgs),
    /// Compare a baseline with one or more results: what differs, then the figures side by side.
    #[command(after_long_help = after_long_help("compare"))]
    Compare(CompareArgs),
    /// Merge the result files of several nodes into the result of the whole run.
    #[command(after_long_help = after_long_help("merge"))]
    Merge(MergeArgs),
    /// Check thresholds (e.g. 'read.p99 < 20ms') and the environment (--expect) of a saved result; exit 1 if one fails.
    #[command(after_long_help = after_long_help("check"))]
    Check(CheckArgs),
    /// Print the completion script for SHELL, e.g. `sofabench completions bash`.
    #[command(after_long_help = after_long_help("completions"))]
    Completions(CompletionsArgs),
    /// Print the man page (roff): the top page, or one subcommand's (`sofabench man run`).
    #[command(after_long_help = after_long_help("man"))]
    Man(ManArgs),
}

/// The headings `run`'s options are grouped under, in the order help shows them (each
/// heading's place is its first flag's).
const CONNECTION: &str = "Connection and TLS";
const LOGIN: &str = "Login";
const WORKLOAD: &str = "Workload";
const LOAD: &str = "Load model";
const SCENARIO: &str = "Scenario and phases";
const OUTPUT: &str = "Output and thresholds";
const DATABASE: &str = "CouchDB database settings";
const QUERIES: &str = "Queries and feeds";
const DEVICES: &str = "Devices";
const EXISTING: &str = "Existing data";

/// `--scenario`'s details for `--help`, naming every built-in scenario.
fn scenario_long_help() -> String {
    let names: Vec<&str> = crate::scenario::BUILTINS.iter().map(|b| b.name).collect();
    format!(
        "Run a scenario: a built-in one by name (`sofabench scenarios` describes them) or a \
         TOML file of phases. Default: ironcushion, the two steps these flags describe.\n\n\
         Built-in: {}.",
        names.join(", ")
    )
}

/// Flags of `sofabench run`, in the order of its help: groups under headings, the most used
/// groups and flags first. `-h` shows each group's most used flags (the others are
/// `hide_short_help`), `--help` all of them, each with its details. A doc comment's first
/// paragraph is the line `-h` shows; keep it short, the rest is for `--help`.
///
/// Defaults follow the example in Iron Cushion's README, scaled to a first run on a laptop.
#[derive(Args, Debug)]
pub struct RunArgs {
    // ---- Connection and TLS ----
    /// Address of the server
    ///
    /// http[s]://[USER:PASSWORD@]HOST:PORT; several nodes separated by commas share the
    /// connections.
    #[arg(long, value_name = "URL", default_value = "http://127.0.0.1:5984", help_heading = CONNECTION)]
    database_address: String,

    /// Time a request may take (0: forever)
    ///
    /// E.g. 2s: a request not answered in time counts as a timeout, its connection is
    /// reopened, and the run goes on. 0 waits forever.
    #[arg(long, value_name = "TIME", value_parser = duration::parse, default_value = "30s", help_heading = CONNECTION)]
    timeout: std::time::Duration,

    /// Trust the CAs in this PEM file (https://)
    ///
    /// For https:// nodes: the certificate authorities in this file instead of the
    /// system's (a private CA, a self-signed server).
    #[arg(long, value_name = "FILE", help_heading = CONNECTION)]
    cacert: Option<PathBuf>,

    /// Accept any certificate (https://)
    ///
    /// For https:// nodes: no check of who the server is. The report warns and the
    /// result file records it.
    #[arg(long, short = 'k', help_heading = CONNECTION)]
    insecure: bool,

    /// Client certificate chain for mutual TLS, PEM
    ///
    /// For https:// nodes that ask for one; with --key.
    #[arg(long, value_name = "FILE", requires = "key", help_heading = CONNECTION, hide_short_help = true)]
    cert: Option<PathBuf>,

    /// The private key of --cert, PEM
    #[arg(long, value_name = "FILE", requires = "cert", help_heading = CONNECTION, hide_short_help = true)]
    key: Option<PathBuf>,

    /// How long a lost connection tries to reconnect
    ///
    /// A connection that lost its server keeps trying (capped backoff with jitter) this
    /// long before it gives up its share of the phase; 0 gives up at once. Meanwhile its
    /// operations wait (closed model) or fail as `unreachable` (--rate).
    #[arg(long = "reconnect-for", value_name = "TIME", value_parser = duration::parse, default_value = "30s", help_heading = CONNECTION, hide_short_help = true)]
    reconnect_for: std::time::Duration,

    /// Move a connection to the next node that answers
    ///
    /// With several --database-address nodes: a connection that cannot reach its own
    /// moves on.
    #[arg(long, help_heading = CONNECTION, hide_short_help = true)]
    failover: bool,

    /// A new connection for every request
    ///
    /// And over TLS, a new handshake: to measure what setting up connections costs the
    /// server; `Connection: close` is sent.
    #[arg(long = "disable-keepalive", help_heading = CONNECTION, hide_short_help = true)]
    disable_keepalive: bool,

    /// The largest response body read
    ///
    /// E.g. 64MiB, 8MB, 1048576: a longer answer fails its operation as `too_large` and
    /// closes its connection, without being read. Also bounds setup and background
    /// actions' answers.
    #[arg(long = "max-response-size", value_name = "SIZE", value_parser = byte_size, default_value = "64MiB", help_heading = CONNECTION, hide_short_help = true)]
    max_response_size: u64,

    /// The longest value kept from an answer
    ///
    /// A revision, an id the server gave, an id --key-sample draws; e.g. 512, 4KiB: a
    /// longer one fails its operation as `value_too_long` and is not kept, so the server
    /// cannot grow the client's memory.
    #[arg(long = "max-kept-value", value_name = "SIZE", value_parser = byte_size, default_value = "512", help_heading = CONNECTION, hide_short_help = true)]
    max_kept_value: u64,

    // ---- Login ----
    /// User name, if the address has none
    #[arg(long, env = "SOFABENCH_USER", value_name = "NAME", help_heading = LOGIN)]
    user: Option<String>,

    /// Password, if the address has none
    ///
    /// Prefer the SOFABENCH_PASSWORD variable: it stays out of shell history and process
    /// lists.
    #[arg(
        long,
        env = "SOFABENCH_PASSWORD",
        hide_env_values = true,
        value_name = "PASSWORD",
        help_heading = LOGIN
    )]
    password: Option<String>,

    /// How to log in
    ///
    /// Default: basic with credentials, none without.
    #[arg(long, value_name = "MODE", value_parser = Choices::new(crate::driver::auth::Mode::parse, &AUTH_MODES), help_heading = LOGIN)]
    auth: Option<crate::driver::auth::Mode>,

    /// --auth iam: where the API key is exchanged
    ///
    /// The token endpoint [default: https://iam.cloud.ibm.com/identity/token].
    #[arg(long = "iam-token-url", value_name = "URL", help_heading = LOGIN, hide_short_help = true)]
    iam_token_url: Option<String>,

    /// --auth proxy: the roles claimed for --user
    ///
    /// Separated by commas (e.g. _admin).
    #[arg(long = "proxy-roles", value_name = "ROLE,ROLE", help_heading = LOGIN, hide_short_help = true)]
    proxy_roles: Option<String>,

    /// --auth proxy: a file holding the shared secret
    ///
    /// The secret shared with CouchDB ([chttpd_auth] secret) that X-Auth-CouchDB-Token is
    /// made from; or the SOFABENCH_PROXY_SECRET variable. The secret itself never goes on
    /// the command line.
    #[arg(long = "proxy-secret-file", value_name = "FILE", help_heading = LOGIN, hide_short_help = true)]
    proxy_secret_file: Option<PathBuf>,

    // ---- Workload ----
    /// A JSON document the generated ones look like
    ///
    /// A JSON file whose documents' shape the generated documents take.
    #[arg(
        long,
        value_name = "FILE",
        conflicts_with = "xml_document_schema_filename",
        help_heading = WORKLOAD
    )]
    json_document_schema_filename: Option<PathBuf>,

    /// An XML template of the generated documents
    ///
    /// <object>, <entry>, <array>, … as Iron Cushion's.
    #[arg(long, value_name = "FILE", help_heading = WORKLOAD, hide_short_help = true)]
    xml_document_schema_filename: Option<PathBuf>,

    /// Documents per bulk insert request
    #[arg(long, value_name = "N", default_value_t = 1000, help_heading = WORKLOAD)]
    num_documents_per_bulk_insert: u64,

    /// Bulk inserts per connection (0: none)
    ///
    /// Bulk insert requests per connection; 0 skips the bulk insert step.
    #[arg(long, value_name = "N", default_value_t = 10, help_heading = WORKLOAD)]
    num_bulk_insert_operations: u64,

    /// CRUD operations per connection (0: none)
    ///
    /// 0 skips the CRUD step. Default 1000, unless --duration or --total-operations bounds
    /// the step.
    #[arg(long, value_name = "N", help_heading = WORKLOAD)]
    num_crud_operations: Option<u64>,

    /// CRUD operations of all connections together
    ///
    /// Shared evenly (e.g. Aerospike's operations x iterations).
    #[arg(long = "total-operations", value_name = "N", help_heading = WORKLOAD, hide_short_help = true)]
    total_operations: Option<u64>,

    /// Weight of creates among the CRUD operations
    #[arg(long, value_name = "W", default_value_t = 2, help_heading = WORKLOAD, hide_short_help = true)]
    create_weight: u64,

    /// Weight of reads among the CRUD operations
    #[arg(long, value_name = "W", default_value_t = 2, help_heading = WORKLOAD, hide_short_help = true)]
    read_weight: u64,

    /// Weight of updates among the CRUD operations
    #[arg(long, value_name = "W", default_value_t = 3, help_heading = WORKLOAD, hide_short_help = true)]
    update_weight: u64,

    /// Weight of deletes among the CRUD operations
    #[arg(long, value_name = "W", default_value_t = 3, help_heading = WORKLOAD, hide_short_help = true)]
    delete_weight: u64,

    /// Weight of attachment writes among the CRUD operations
    ///
    /// Standalone attachment writes (`attachment_write`), sizes from --attachment-size.
    #[arg(long, value_name = "W", default_value_t = 0, help_heading = WORKLOAD, hide_short_help = true)]
    attachment_write_weight: u64,

    /// Weight of attachment reads among the CRUD operations
    ///
    /// Reads of the attachments written (`attachment_read`); needs
    /// --attachment-write-weight above 0.
    #[arg(long, value_name = "W", default_value_t = 0, help_heading = WORKLOAD, hide_short_help = true)]
    attachment_read_weight: u64,

    /// Size of the attachments attachment_write sends
    ///
    /// E.g. 64KiB, 1GiB, or several separated by commas, each equally likely
    /// (1KiB,64KiB,1MiB); 1 byte to 4 GiB less a byte each. Bodies are made as they are
    /// sent, never held in memory.
    #[arg(long = "attachment-size", value_name = "SIZE[,SIZE…]", value_parser = attachment_sizes, default_value = "64KiB", help_heading = WORKLOAD, hide_short_help = true)]
    attachment_size: AttachmentSizes,

    /// Give every bulk inserted document an attachment
    ///
    /// An inline attachment (`_attachments`, base64 in the request) of this size, or of
    /// one of several separated by commas, each equally likely; 1 byte to 4 GiB less a
    /// byte each, and a bulk request at most 256 MiB. Later `attachment_read`s may read
    /// them. Without it, bulk documents have none.
    #[arg(long = "bulk-attachment-size", value_name = "SIZE[,SIZE…]", value_parser = bulk_attachment_sizes, help_heading = WORKLOAD, hide_short_help = true)]
    bulk_attachment_size: Option<AttachmentSizes>,

    /// Pad each document to SIZE bytes, or LOW-HIGH
    ///
    /// Its JSON with its _id, without its _rev, padded with a member "sofabench_padding",
    /// in phases that do not say; a range LOW-HIGH gives each document its own size,
    /// drawn uniformly. E.g. 4KiB, 1KiB-64KiB.
    #[arg(long = "doc-size", value_name = "SIZE", value_parser = DocSize::parse, help_heading = WORKLOAD)]
    doc_size: Option<DocSize>,

    /// Prefix of the document ids
    ///
    /// Default: a random one per run, so runs never collide.
    #[arg(long = "id-prefix", value_name = "TEXT", help_heading = WORKLOAD, hide_short_help = true)]
    id_prefix: Option<String>,

    /// How the ids of new documents are made
    ///
    /// In phases that do not say.
    #[arg(long = "id-scheme", value_name = "SCHEME", value_parser = Choices::new(IdScheme::named, &ID_SCHEMES), help_heading = WORKLOAD, hide_short_help = true)]
    id_scheme: Option<IdScheme>,

    /// Updates go to N shared documents
    ///
    /// Hot documents, made before the first phase (ids PREFIX-hot-K), picked by the
    /// phase's keys; a 409 there fetches the current revision and sends the update again
    /// (at most 10 PUTs), and the 409s, fetches and attempts per update are reported.
    #[arg(long = "hot-docs", value_name = "N", value_parser = crate::workload::hot::parse_count, help_heading = WORKLOAD, hide_short_help = true)]
    hot_docs: Option<u64>,

    /// Seed: the same seed, the same documents and order
    ///
    /// Without it, a random seed is chosen and printed.
    #[arg(long, value_name = "N", help_heading = WORKLOAD)]
    seed: Option<u64>,

    // ---- Load model ----
    /// Concurrent connections to the database
    ///
    /// In the closed model (without --rate), each sends its next request when the last
    /// one is answered.
    #[arg(long, value_name = "N", default_value_t = 10, help_heading = LOAD)]
    num_connections: u64,

    /// Bound the CRUD step (with --scenario, every phase) by time: 30s, 30m, 30h
    ///
    /// With a count too, whichever comes first; it never lengthens a phase.
    #[arg(long, visible_alias = "time", value_name = "TIME", value_parser = duration::parse, help_heading = LOAD)]
    duration: Option<std::time::Duration>,

    /// Open model: operations per second, or FROM..TO
    ///
    /// This many CRUD operations per second in total, spread evenly over the connections
    /// on a fixed schedule; latency counts from each operation's scheduled start, so a
    /// stalled server shows in the percentiles. FROM..TO (e.g. 100..1000) ramps the rate
    /// linearly over the phase's --duration.
    #[arg(long, value_name = "OPS_PER_SEC|FROM..TO", value_parser = positive_rate, help_heading = LOAD)]
    rate: Option<crate::workload::Rate>,

    /// Find the highest rate that meets every --threshold
    ///
    /// The scenario's last phase runs again and again, each step for --step-duration at
    /// one rate, bisecting between LOW and HIGH operations per second (the phases before
    /// it run once, first). A step meets when it achieves its rate, nothing fails (unless
    /// a threshold on errors allows it) and every threshold holds.
    #[arg(
        long = "search-rate",
        value_name = "LOW..HIGH",
        value_parser = search_range,
        conflicts_with = "rate",
        help_heading = LOAD
    )]
    search_rate: Option<(f64, f64)>,

    /// --search-rate: how long each step runs
    #[arg(
        long = "step-duration",
        value_name = "TIME",
        value_parser = duration::parse,
        default_value = "10s",
        help_heading = LOAD,
        hide_short_help = true
    )]
    step_duration: std::time::Duration,

    /// --search-rate: the most steps, LOW and HIGH included (2 to 100)
    #[arg(long = "search-steps", value_name = "N", default_value_t = 12, help_heading = LOAD, hide_short_help = true)]
    search_steps: u32,

    /// --search-rate: when to stop bisecting
    ///
    /// Stop when the lowest rate that failed is within this much above the highest that
    /// met (0.1% to 50%).
    #[arg(
        long = "search-precision",
        value_name = "PERCENT",
        value_parser = precision,
        default_value = "5%",
        help_heading = LOAD,
        hide_short_help = true
    )]
    search_precision: f64,

    /// --rate: how late an operation may start
    ///
    /// An operation that starts later than scheduled by more than this is counted as
    /// late.
    #[arg(long = "late-threshold", value_name = "TIME", value_parser = duration::parse, default_value = "10ms", help_heading = LOAD, hide_short_help = true)]
    late_threshold: std::time::Duration,

    /// Send again what a 429 turned away, at most MAX times
    ///
    /// 10 times without a number; each after the Retry-After the server asked for (at most
    /// 60 s; without a usable one, a backoff with jitter). Retries and the time waited are
    /// reported, and under --rate the wait counts in the response time. Without it a 429
    /// Too Many Requests fails its operation as rate_limited.
    #[arg(
        long = "retry-429",
        value_name = "MAX",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = DEFAULT_RETRIES_429,
        value_parser = retries_429,
        help_heading = LOAD,
        hide_short_help = true
    )]
    retry_429: Option<u32>,

    /// Threads (cores) the client runs on
    ///
    /// Like the Aerospike benchmark's processes and titan's worker threads; the client's
    /// CPU share is then of these. Default: one per core of this machine.
    #[arg(long, value_name = "N", value_parser = threads, help_heading = LOAD, hide_short_help = true)]
    threads: Option<usize>,

    /// Poll for answers instead of sleeping
    ///
    /// While requests are in flight, so the server never pays for waking the client: its
    /// cores are fully busy for the whole run. For a client on a machine of its own, not
    /// one it shares with the database.
    #[arg(long = "busy-poll", help_heading = LOAD, hide_short_help = true)]
    busy_poll: bool,

    /// Machines running this workload together
    ///
    /// Node I of N runs the connections I*C .. I*C+C-1 of N*C (C = --num-connections).
    #[arg(
        long = "node-count",
        env = "SOFABENCH_NODE_COUNT",
        value_name = "N",
        default_value_t = 1,
        help_heading = LOAD,
        hide_short_help = true
    )]
    node_count: u64,

    /// This machine's index, 0 to N-1
    ///
    /// A Kubernetes Indexed Job sets JOB_COMPLETION_INDEX.
    #[arg(
        long = "node-index",
        env = "JOB_COMPLETION_INDEX",
        value_name = "I",
        default_value_t = 0,
        help_heading = LOAD,
        hide_short_help = true
    )]
    node_index: u64,

    // ---- Scenario and phases ----
    /// A built-in scenario (`sofabench scenarios`) or a TOML file
    #[arg(long, value_name = "NAME|FILE", long_help = scenario_long_help(), help_heading = SCENARIO)]
    scenario: Option<String>,

    /// Read flags from a TOML or JSON file
    ///
    /// Keys are flag names, in either spelling; flags given here win.
    #[arg(long, value_name = "FILE", help_heading = SCENARIO)]
    config: Option<PathBuf>,

    /// Repeat the whole run N times into one result
    ///
    /// Or the whole scenario; each repetition on a fresh database of its own
    /// (<database-name>-run1, -run2 …, created, and deleted with --cleanup) with ids of its
    /// own, from the same seed; the report shows each phase's spread over the repetitions,
    /// and `compare` tests changes against it. Not with --search-rate, whose steps each
    /// depend on the one before.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 1,
        value_parser = runs,
        conflicts_with = "search_rate",
        help_heading = SCENARIO,
        hide_short_help = true
    )]
    runs: u64,

    /// scaling: go on up to 1,000,000 operations
    #[arg(long, help_heading = SCENARIO, hide_short_help = true)]
    full: bool,

    /// scaling: one plain run of this many writes (then --reads reads)
    #[arg(long, value_name = "N", help_heading = SCENARIO, hide_short_help = true)]
    writes: Option<u64>,

    /// scaling: reads after --writes
    #[arg(long, value_name = "N", help_heading = SCENARIO, hide_short_help = true)]
    reads: Option<u64>,

    /// couchdb-report: the bulk sizes to compare
    #[arg(
        long = "batch-sizes",
        value_name = "N,N,…",
        value_delimiter = ',',
        default_value = "50,100,200",
        help_heading = SCENARIO,
        hide_short_help = true
    )]
    batch_sizes: Vec<u64>,

    /// fabric-bench: documents bulk inserted, then read at random as many times
    #[arg(long = "fabric-docs", value_name = "N", default_value_t = 100_000, help_heading = SCENARIO, hide_short_help = true)]
    fabric_docs: u64,

    /// fabric-bench: new documents written one at a time in its last step
    #[arg(long = "fabric-single-docs", value_name = "N", default_value_t = 1_000, help_heading = SCENARIO, hide_short_help = true)]
    fabric_single_docs: u64,

    /// fabric-bench: its document size
    #[arg(long = "fabric-doc-size", value_name = "SIZE", default_value = "medium", value_parser = Choices::new(crate::scenario::fabric::FabricSize::named, &FABRIC_SIZES), help_heading = SCENARIO, hide_short_help = true)]
    fabric_doc_size: crate::scenario::fabric::FabricSize,

    // ---- Output and thresholds ----
    /// Write every result file into this folder
    ///
    /// result.json, result.csv, result.html and result.<operation>.hlog per operation.
    #[arg(long, value_name = "DIR", help_heading = OUTPUT)]
    out: Option<PathBuf>,

    /// Write the result as JSON
    ///
    /// The versioned schema of docs/RESULTS.md.
    #[arg(long, value_name = "FILE", help_heading = OUTPUT)]
    json: Option<PathBuf>,

    /// Write the per-interval series as CSV
    ///
    /// One row per interval and operation.
    #[arg(long, value_name = "FILE", help_heading = OUTPUT, hide_short_help = true)]
    csv: Option<PathBuf>,

    /// Write a self-contained HTML page with the charts
    ///
    /// The tables and charts, in one file.
    #[arg(long, value_name = "FILE", help_heading = OUTPUT)]
    html: Option<PathBuf>,

    /// Replace result files that already exist
    #[arg(long, help_heading = OUTPUT, hide_short_help = true)]
    overwrite: bool,

    /// Fail (exit 1) unless this holds, e.g. 'read.p99 < 20ms'
    ///
    /// [PHASE:][OPERATION.]METRIC OP VALUE, e.g. 'read.p99 < 20ms', 'error_rate < 0.1%',
    /// 'bulk_insert.docs_per_sec > 1000'. Metrics: throughput, p50, p90, p99, p999, max,
    /// mean, errors, error_rate, and per document docs_per_sec, doc_errors, doc_error_rate.
    /// Repeatable; checked before anything is sent, evaluated after the run.
    #[arg(long = "threshold", value_name = "EXPR", action = clap::ArgAction::Append, help_heading = OUTPUT)]
    threshold: Vec<String>,

    /// No progress bar and no live lines
    #[arg(long, short, help_heading = OUTPUT)]
    quiet: bool,

    /// Say everything after each phase
    ///
    /// Per operation what it achieved and carried, the disk, the connections, the logins,
    /// the server's figures and its notes (each said once per run).
    #[arg(long, short, help_heading = OUTPUT)]
    verbose: bool,

    /// How often a live line is printed
    #[arg(long, value_name = "TIME", value_parser = duration::parse, default_value = "1s", help_heading = OUTPUT, hide_short_help = true)]
    interval: std::time::Duration,

    /// The most intervals a phase keeps in the result
    ///
    /// Past it, adjacent intervals are merged pairwise (counts and histograms exactly)
    /// into ones twice as long, so memory and the result stay the same size over any
    /// length of run.
    #[arg(
        long = "max-intervals",
        value_name = "N",
        value_parser = crate::metrics::coarse::parse_bound,
        default_value = "1000",
        help_heading = OUTPUT,
        hide_short_help = true
    )]
    max_intervals: usize,

    /// For tests: accept an --interval down to 1ms, so that thousands of intervals pass
    /// in seconds.
    #[arg(long = "short-intervals", hide = true)]
    short_intervals: bool,

    /// Do not ask the server for its own statistics
    ///
    /// Each interval, `_node/_local/_stats`, `_node/_local/_system` and `_active_tasks`
    /// are otherwise asked for and kept beside every interval row, each node's apart.
    #[arg(long = "no-server-stats", help_heading = OUTPUT, hide_short_help = true)]
    no_server_stats: bool,

    /// Serve the run's figures for Prometheus at ADDR
    ///
    /// And OpenMetrics, at http://ADDR/metrics while the run runs: a port alone (9464)
    /// listens on this machine only; an address (0.0.0.0:9464) on what it names, with a
    /// warning.
    #[arg(
        long = "metrics-listen",
        value_name = "ADDR",
        value_parser = crate::exposition::address::parse,
        help_heading = OUTPUT,
        hide_short_help = true
    )]
    metrics_listen: Option<std::net::SocketAddr>,

    /// Keep --metrics-listen up after the run, at most this long
    ///
    /// Until a scraper has read the final figures, at most this long (e.g. the scrape
    /// interval). 0 stops at once.
    #[arg(
        long = "metrics-linger",
        value_name = "TIME",
        value_parser = duration::parse,
        default_value = "0s",
        requires = "metrics_listen",
        help_heading = OUTPUT,
        hide_short_help = true
    )]
    metrics_linger: std::time::Duration,

    // ---- CouchDB database settings ----
    /// Name of the database
    #[arg(long, value_name = "NAME", default_value = "sofabench", help_heading = DATABASE)]
    database_name: String,

    /// Delete a database that holds documents, make it empty
    ///
    /// A database that already holds documents is deleted and created again.
    #[arg(long, help_heading = DATABASE)]
    recreate: bool,

    /// Delete the database after the run, if it made it
    ///
    /// Only a database this run created.
    #[arg(long, help_heading = DATABASE)]
    cleanup: bool,

    /// Spread the documents over N databases
    ///
    /// One database per user: NAME-0000 … NAME-(N-1) after --database-name (four digits;
    /// 1 keeps NAME itself), each created, kept and cleaned up as the run's database is;
    /// every connection writes to all of them, and _changes consumer i follows database
    /// i mod N.
    #[arg(
        long,
        value_name = "N",
        value_parser = crate::workload::databases::parse,
        default_value = "1",
        help_heading = DATABASE,
        hide_short_help = true
    )]
    databases: crate::workload::Databases,

    /// CouchDB's q: shards of a database the run creates
    ///
    /// 1 to 256. Apache CouchDB 2 and later; the run refuses a server that does not report
    /// shards, or a database with other ones.
    #[arg(long = "db-q", value_name = "Q", value_parser = clap::value_parser!(u32).range(1..=256), help_heading = DATABASE, hide_short_help = true)]
    db_q: Option<u32>,

    /// CouchDB's n: copies of each shard
    ///
    /// Of a database the run creates, 1 to 16; a server may cap it at its nodes, which
    /// the run then refuses.
    #[arg(long = "db-n", value_name = "N", value_parser = clap::value_parser!(u32).range(1..=16), help_heading = DATABASE, hide_short_help = true)]
    db_n: Option<u32>,

    /// Create the database partitioned
    ///
    /// Apache CouchDB 3 and later: every document gets an id `partition:docid` over
    /// --partitions partitions; the run refuses a server without partitions, or a
    /// database that is not partitioned.
    #[arg(long = "db-partitioned", help_heading = DATABASE, hide_short_help = true)]
    db_partitioned: bool,

    /// --db-partitioned: how many partitions (default 16)
    ///
    /// 1 to 1,000,000.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1_000_000), help_heading = DATABASE, hide_short_help = true)]
    partitions: Option<u64>,

    /// --db-partitioned: how documents spread over them
    ///
    /// Uniform by default.
    #[arg(long = "partition-keys", value_name = "SPREAD", value_parser = Choices::new(partition_keys, &PARTITION_SPREADS), help_heading = DATABASE, hide_short_help = true)]
    partition_keys: Option<KeyChoice>,

    // ---- Queries and feeds ----
    #[command(flatten, next_help_heading = QUERIES)]
    changes: changes::ChangesArgs,

    /// The field mango and views query
    ///
    /// For the mango and views scenarios: the top-level field of the template the queries
    /// draw their values from (Iron Cushion's integer1 by default).
    #[arg(long = "query-field", value_name = "NAME", default_value = "integer1", help_heading = QUERIES, hide_short_help = true)]
    query_field: String,

    /// Where the server reaches the database, to replicate
    ///
    /// The base address the server itself uses to reach the database's node (behind a
    /// proxy or in a cluster, the client's address is not the server's):
    /// http[s]://[user:password@]host:port[/path]. Default: the first --database-address
    /// node, with the run's credentials.
    #[arg(long = "replication-address", value_name = "URL", help_heading = QUERIES, hide_short_help = true)]
    replication_address: Option<String>,

    /// How long compaction or replication is waited for
    ///
    /// A background action, before the report says its end is unknown. 0 waits forever.
    #[arg(long = "action-timeout", value_name = "TIME", value_parser = duration::parse, default_value = "10m", help_heading = QUERIES, hide_short_help = true)]
    action_timeout: std::time::Duration,

    // ---- Devices ----
    #[command(flatten, next_help_heading = DEVICES)]
    devices: devices::DevicesArgs,

    // ---- Existing data ----
    /// Add to a database that already holds documents
    #[arg(long, conflicts_with = "recreate", help_heading = EXISTING)]
    reuse: bool,

    /// Use an earlier run's documents LOW to HIGH
    ///
    /// Reads, updates and deletes target documents LOW (included) to HIGH (excluded) of an
    /// earlier run with the same --id-prefix and --id-scheme, already in the database
    /// (needs --reuse); a missing one is a miss, not a failure.
    #[arg(
        long = "key-range",
        value_name = "LOW-HIGH",
        value_parser = crate::workload::existing::parse_range,
        requires_all = ["reuse", "id_prefix"],
        conflicts_with_all = ["key_sample", "hot_docs"],
        help_heading = EXISTING
    )]
    key_range: Option<(u64, u64)>,

    /// Use N ids sampled from the database
    ///
    /// Reads, updates and deletes target N ids sampled from the database's _all_docs
    /// before the first phase (needs --reuse); a missing one is a miss.
    #[arg(
        long = "key-sample",
        value_name = "N",
        value_parser = crate::workload::existing::parse_sample,
        requires = "reuse",
        conflicts_with = "hot_docs",
        help_heading = EXISTING,
        hide_short_help = true
    )]
    key_sample: Option<u64>,

    /// How writes to existing data learn the revision
    ///
    /// The revision updates and deletes write over.
    #[arg(
        long = "existing-writes",
        value_name = "HOW",
        value_parser = Choices::new(crate::workload::ExistingWrites::parse, &EXISTING_WRITES),
        default_value = "fetch",
        help_heading = EXISTING,
        hide_short_help = true
    )]
    existing_writes: crate::workload::ExistingWrites,
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

    /// Seed of the random numbers: the same seed, the same documents
    #[arg(long, value_name = "N", default_value_t = 0)]
    seed: u64,
}

/// Flags of `sofabench report`.
#[derive(Args, Debug)]
pub struct ReportArgs {
    /// A result written by `run --json` or `--out`.
    #[arg(value_name = "RESULT.json")]
    result: PathBuf,

    /// Write a self-contained HTML page with the charts
    ///
    /// The tables and charts, in one file.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,

    /// Write the per-interval series as CSV
    ///
    /// One row per interval and operation.
    #[arg(long, value_name = "FILE")]
    csv: Option<PathBuf>,

    /// Write HdrHistogram interval logs into this folder
    ///
    /// One file per operation: result.<operation>.hlog.
    #[arg(long = "hlog-dir", value_name = "DIR")]
    hlog_dir: Option<PathBuf>,

    /// Print the text report, as the run printed it after its live lines
    ///
    /// The default when no file is asked for.
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
    /// The baseline result, A (a file written by --json or --out).
    #[arg(value_name = "A.json")]
    baseline: PathBuf,

    /// The results compared with the baseline: B, C, … (up to 25)
    ///
    /// Each is shown beside the baseline with its change from it, as in
    /// `compare 3.3.json 3.4.json 3.5.json`.
    #[arg(value_name = "B.json", required = true, num_args = 1..=25)]
    contenders: Vec<PathBuf>,

    /// The test of each judged row over the repetitions
    ///
    /// Either way, Holm's correction is applied over the rows judged, and a change is
    /// marked better or worse where the adjusted p is at most 0.05, `~` otherwise.
    #[arg(long, value_name = "TEST", default_value = "u", value_parser = Choices::new(crate::analysis::compare::judge::Test::parse, &COMPARE_TESTS))]
    test: crate::analysis::compare::judge::Test,

    /// The rows to judge, as [PHASE.]OPERATION.METRIC (e.g. crud.read.p99, read.throughput)
    ///
    /// Comma-separated or repeated. METRIC is one of docs (a bulk insert's documents per
    /// second), throughput, p50, p90, p99, p99.9, max; without a PHASE, the operation's
    /// row in every phase. By default each operation's rate (docs for a bulk insert,
    /// throughput otherwise), p50 and p99 are judged. Fewer rows need fewer repetitions
    /// for a change to show under the correction.
    #[arg(long, value_name = "ROW", value_delimiter = ',', action = clap::ArgAction::Append)]
    judge: Vec<String>,
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

/// Flags of `sofabench check`: at least one --threshold or --expect.
#[derive(Args, Debug)]
#[command(group(
    clap::ArgGroup::new("conditions")
        .required(true)
        .multiple(true)
        .args(["threshold", "expect"])
))]
pub struct CheckArgs {
    /// The result to check (a file written by --json, --out or merge).
    #[arg(value_name = "RESULT")]
    result: PathBuf,

    /// A condition the result must meet, e.g. 'read.p99 < 20ms'
    ///
    /// Repeatable; written as run's --threshold (see `sofabench run --help`).
    #[arg(long = "threshold", value_name = "EXPR", action = clap::ArgAction::Append)]
    threshold: Vec<String>,

    /// What the result must have run against or from, e.g. server.version=3.5.0
    ///
    /// Repeatable. NAME is a fact of the result's environment: server.product,
    /// server.vendor, server.version, server.git_sha, server.features, server.nodes,
    /// server.cluster_nodes, server.javascript_engine, server.compactions_running,
    /// database.q, database.n, database.partitioned, client.sofabench, client.commit,
    /// client.profile, client.os, client.kernel, client.cpu, client.cores,
    /// client.threads, client.machines, client.load_average (`sofabench report -v` shows
    /// them). VALUE is compared as text, exactly: "unknown" matches a fact the result does
    /// not record, and a merged result's differing values ("2 | 8") are given whole. One
    /// not met fails the check (exit 1).
    #[arg(long = "expect", value_name = "NAME=VALUE", action = clap::ArgAction::Append)]
    expect: Vec<String>,

    /// Judge a result whose run was interrupted anyway
    ///
    /// A run stopped by Ctrl-C or killed (`interrupted: true`): without this, its result
    /// fails the check, since its last phase was cut short and later phases never ran.
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
    run_setup(args).map(|_| ())
}

/// The checked setup of a `run` command line, which `crate::run::runner::run` carries
/// out: for a program (or a test) that changes a phase before running it.
pub fn run_setup(args: Vec<OsString>) -> Result<crate::run::Setup, Failed> {
    let (cli, matches) = parse(args)?;
    let run_matches = matches.subcommand_matches("run").unwrap_or(&matches);
    match cli.command {
        Command::Run(args) => setup::build(&args, &setup::Given(run_matches)),
        _ => Err(Failed::bad_input("not a run command line".to_string())),
    }
}

/// Whether a command line parses as `main` would take it (a subcommand, or Iron Cushion's
/// flags alone), every value through its parser, without reading a file it names or
/// doing anything: the documentation's examples are checked with it
/// (`tests/docs_examples.rs`), including those that need a server or files of their own.
pub fn parses(args: Vec<OsString>) -> Result<(), Failed> {
    use clap::error::ErrorKind;
    match Cli::command().try_get_matches_from(with_default_subcommand(args)) {
        Ok(matches) => Cli::from_arg_matches(&matches)
            .map(|_| ())
            .map_err(Failed::from_clap),
        // `--help` and `--version` print and succeed.
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => Ok(()),
        Err(e) => Err(Failed::from_clap(e)),
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
        Command::Man(args) => man::man(args),
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
