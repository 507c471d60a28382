//! sofabench: a benchmark and load-testing tool for databases that speak the CouchDB HTTP API.
//!
//! The parts, each a folder: `cli` (the command line) makes one checked setup of a run
//! (`run`), whose runner drives the `engine` (connections running the phases of a
//! `scenario`, built from a `workload`, whose queries are declared in `query`, and whose `fleet` of `device`s replicates with the database) over the `driver` (the CouchDB HTTP API) with
//! documents from a `template`; `metrics` is what the connections measure, `results` a
//! run's result as data, `report` what users read, `export` the result's other formats,
//! `analysis` compares, checks and merges results, and `exposition` serves a run's figures
//! live to Prometheus (`--metrics-listen`). Below them all: `time`
//! (durations, timestamps), `text` (a server's or a file's words made safe to show: secrets hidden in any encoding, control characters escaped), `files` (reading and writing files within bounds), `cpu` (the client's CPU), `disk` (the database's sizes on the server), `host`, `seed`, `target`, `words` (numbers in sentences) and `exit`.

// Every text printed goes through `text::sink`, which escapes control characters: a path,
// a name or a server's words in a message cannot act on the terminal however the message
// was made.
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod analysis;
pub mod cli;
pub mod cpu;
pub mod device;
pub mod disk;
pub mod driver;
pub mod engine;
pub mod exit;
pub mod export;
pub mod exposition;
pub mod files;
pub mod fleet;
pub mod host;
pub mod metrics;
pub mod query;
pub mod report;
pub mod results;
pub mod run;
pub mod scenario;
pub mod seed;
pub mod server_stats;
pub mod target;
pub mod template;
pub mod text;
pub mod time;
pub mod words;
pub mod workload;
