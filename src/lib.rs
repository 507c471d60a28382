//! sofabench: a benchmark and load-testing tool for databases that speak the CouchDB HTTP API.
//!
//! The parts, each a folder: `template` (documents from a JSON or XML template),
//! `workload` (what a run does), `driver` (the CouchDB HTTP API), `engine` (connections
//! running the steps), `metrics` (what they measure), `report` (what users read) and
//! `cli` (the command line); `results` is the result file, `export` its other formats.
//! `results` (a run's result as data), `analysis` (comparing, checking and merging
//! results) and `cli` (the command line).

pub mod analysis;
pub mod cli;
pub mod cpu;
pub mod driver;
pub mod engine;
pub mod exit;
pub mod export;
pub mod metrics;
pub mod report;
pub mod results;
pub mod run;
pub mod scenario;
pub mod seed;
pub mod target;
pub mod template;
pub mod time;
pub mod workload;
