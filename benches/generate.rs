//! Document generation speed on one core.
//!
//! `cargo bench --bench generate [-- DOCUMENTS [TEMPLATE.json|TEMPLATE.xml]]`
//! (default 5,000,000 documents per case, examples/ironcushion.json).
//! Writes documents into a reused buffer, a thousand at a time as a bulk
//! insert would, and prints documents/s.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Instant;

use sofabench::template::{DocumentWriter, Template};

fn main() {
    // `cargo bench` passes `--bench`; ignore flags.
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let documents: u64 = args
        .first()
        .and_then(|a| a.parse().ok())
        .unwrap_or(5_000_000);
    let path = match args.get(1) {
        Some(p) => PathBuf::from(p),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/ironcushion.json"),
    };
    let loaded = if path.extension().is_some_and(|e| e == "xml") {
        Template::load_xml(&path)
    } else {
        Template::load_json(&path)
    };
    let template = match loaded {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    let writer = DocumentWriter::new(template, 42);
    let id = "00000000000000000000000000000000";
    let rev = "1-00000000000000000000000000000000";
    let cases: [(&str, u32, Option<&str>, Option<&str>); 3] = [
        ("version 1", 1, None, None),
        ("version 1 with _id, _rev", 1, Some(id), Some(rev)),
        ("version 5 (4 updates)", 5, Some(id), Some(rev)),
    ];
    println!(
        "{}: {} documents per case, one thread",
        path.display(),
        documents
    );
    let mut out = Vec::with_capacity(1 << 20);
    for (name, version, id, rev) in cases {
        let mut bytes = 0u64;
        let started = Instant::now();
        for number in 0..documents {
            writer.write(&mut out, number, version, id, rev);
            if number % 1000 == 999 {
                bytes += out.len() as u64;
                black_box(&out);
                out.clear();
            }
        }
        bytes += out.len() as u64;
        black_box(&out);
        out.clear();
        let secs = started.elapsed().as_secs_f64();
        println!(
            "{name:>26}: {:>6.2} M docs/s, {:>5.0} MB/s, {:.0} bytes/doc",
            documents as f64 / secs / 1e6,
            bytes as f64 / secs / 1e6,
            bytes as f64 / documents as f64
        );
    }
}
