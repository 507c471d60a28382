//! Iron Cushion's result blocks, with its field names and meanings.
//!
//! Times are per connection, spread as `{min, max, median, sd}` over connections, printed
//! in seconds with microsecond resolution. A rate divides the documents of the whole
//! phase by the *mean* per-connection time of the field, i.e. by the time the connections
//! spent in parallel; that is how Iron Cushion's own figures come out (its example:
//! 2,000,000 documents, remoteProcessing median 203.8 s, rate 10,003 docs/sec).

use std::fmt::Write as _;

use super::numbers::{grouped, grouped_decimal};
use crate::results::build::remote_field;
use crate::results::{PhaseResult, Spread};
use crate::workload::Operation;

fn write_spread(out: &mut String, name: &str, spread: &Spread) {
    let _ = writeln!(
        out,
        "  {name}={{min={:.6} secs, max={:.6} secs, median={:.6} secs, sd={:.6} secs}}",
        spread.min, spread.max, spread.median, spread.sd
    );
}

/// The block's title: Iron Cushion's for its two steps, the phase's name otherwise.
pub fn title(phase: &PhaseResult) -> String {
    match phase.name.as_str() {
        "bulk_insert" => "BULK INSERT BENCHMARK RESULTS:".to_string(),
        "crud" => "CRUD BENCHMARK RESULTS:".to_string(),
        name => format!("PHASE {name} RESULTS:"),
    }
}

/// Iron Cushion's fields of one phase, as it prints them under the title.
pub fn fields(phase: &PhaseResult) -> String {
    let f = &phase.iron_cushion;
    let mut out = String::new();
    let _ = writeln!(out, "  timeTaken={:.6} secs", f.time_taken);
    let _ = writeln!(
        out,
        "  totalJsonBytesSent={} bytes",
        grouped(f.total_json_bytes_sent)
    );
    let _ = writeln!(
        out,
        "  totalJsonBytesReceived={} bytes",
        grouped(f.total_json_bytes_received)
    );
    write_spread(&mut out, "localProcessing", &f.local_processing);
    write_spread(&mut out, "sendData", &f.send_data);
    let fields: Vec<&str> = Operation::ALL
        .into_iter()
        .map(remote_field)
        .filter(|name| f.remote_processing.contains_key(*name))
        .collect();
    for name in &fields {
        write_spread(&mut out, name, &f.remote_processing[*name]);
    }
    write_spread(&mut out, "receiveData", &f.receive_data);
    let mut rates: Vec<String> = fields.iter().map(|name| format!("{name}Rate")).collect();
    rates.insert(rates.len().min(1), "localInsertRate".to_string());
    for name in rates {
        if let Some(value) = f.rates.get(&name) {
            let _ = writeln!(out, "  {name}={} docs/sec", grouped_decimal(*value, 3));
        }
    }
    out
}
