//! `https://` nodes: a full run through a TLS front (Node's TLS, in front of PouchDB
//! Server on disk with an admin), certificate checks and what a user is told when they
//! fail, mutual TLS, mixed schemes, and a connection per request.

mod common;

use std::path::Path;

use common::tls::{Pki, ServerCert, TlsFront};
use common::*;
use serde_json::Value;

const TEMPLATE: &str = "--json_document_schema_filename=examples/ironcushion.json";

/// A small run against `address` writing its result to `dir/result.json`.
fn run_against(dir: &Path, address: &str, db: &str, extra: &[&str]) -> (Run, Value) {
    let result = dir.join("result.json");
    let (address, db, json) = (
        format!("--database_address={address}"),
        format!("--database_name={db}"),
        format!("--json={}", result.display()),
    );
    // Verbose: the connections' handshakes are part of the detail.
    let mut args = vec![
        "run",
        "--verbose",
        address.as_str(),
        db.as_str(),
        json.as_str(),
        TEMPLATE,
        "--num_connections=3",
        "--num_documents_per_bulk_insert=20",
        "--num_bulk_insert_operations=2",
        "--num_crud_operations=40",
        "--seed=5",
    ];
    args.extend_from_slice(extra);
    let run = sofabench(&args);
    let written = std::fs::read_to_string(&result).unwrap_or_default();
    (run, serde_json::from_str(&written).unwrap_or(Value::Null))
}

fn secured_address(port: u16, host: &str) -> String {
    let (user, password) = ADMIN;
    format!("https://{user}:{password}@{host}:{port}")
}

fn phase<'a>(result: &'a Value, name: &str) -> &'a Value {
    result["phases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("no phase {name} in {result}"))
}

#[test]
fn a_run_over_https_counts_what_the_database_holds_and_times_the_handshakes() {
    let dir = scratch("tls", "full");
    let pki = Pki::make(&dir);
    let server = PouchServer::secured(Storage::Disk);
    let front = TlsFront::start(&pki, ServerCert::Good, server.port, false);
    let cacert = format!("--cacert={}", pki.ca());
    let address = secured_address(front.port, "localhost");
    let (run, result) = run_against(&dir, &address, "over-tls", &[&cacert]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);

    let (bulk, create, delete) = (
        run.count("bulk_insert"),
        run.count("create"),
        run.count("delete"),
    );
    assert_eq!(bulk, 6);
    assert_eq!(
        doc_count(&server.admin_db("over-tls")),
        120 + create - delete
    );
    assert!(run.stdout.contains("TLS handshake: mean"), "{}", run.stdout);
    assert_eq!(result["config"]["tls"]["verified"], true);

    // Every connection was opened, and shook hands, once: TLS 1.3 session tickets that
    // wait in an idle socket must not pass for a close.
    let bulk = phase(&result, "bulk_insert");
    let setup = &bulk["connection_setup"];
    assert_eq!(setup["opened"], 3, "{setup}");
    assert_eq!(setup["handshake"]["count"], 3, "{setup}");
    let crud = phase(&result, "crud");
    assert!(
        crud.get("connection_setup").is_none(),
        "the connections of the first phase were kept: {}",
        crud["connection_setup"]
    );
}

#[test]
fn certificate_problems_are_explained_and_insecure_is_recorded() {
    let dir = scratch("tls", "problems");
    let pki = Pki::make(&dir);
    let server = PouchServer::secured(Storage::Memory);
    let cacert = format!("--cacert={}", pki.ca());
    let cases: [(ServerCert, &[&str], &str); 3] = [
        (ServerCert::Good, &[], "not trusted; give --cacert"),
        (ServerCert::WrongName, &[&cacert], "not for this host name"),
        (ServerCert::Expired, &[&cacert], "has expired"),
    ];
    for (cert, flags, says) in cases {
        let front = TlsFront::start(&pki, cert, server.port, false);
        let address = secured_address(front.port, "localhost");
        let (run, _) = run_against(&dir, &address, "refused", flags);
        assert_ne!(run.code, 0, "{}", run.stdout);
        assert!(run.stderr.contains(says), "{says}: {}", run.stderr);
        assert!(!run.stderr.contains(ADMIN.1), "{}", run.stderr);
    }

    let front = TlsFront::start(&pki, ServerCert::WrongName, server.port, false);
    let address = secured_address(front.port, "127.0.0.1");
    let (run, result) = run_against(&dir, &address, "insecure", &["--insecure"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("WARNING: --insecure"), "{}", run.stdout);
    assert_eq!(result["config"]["tls"]["verified"], false);
    let report = sofabench(&["report", &dir.join("result.json").display().to_string()]);
    assert!(
        report.stdout.starts_with("WARNING: --insecure"),
        "{}",
        report.stdout
    );
}

#[test]
fn mutual_tls_needs_the_client_certificate() {
    let dir = scratch("tls", "mutual");
    let pki = Pki::make(&dir);
    let server = PouchServer::secured(Storage::Memory);
    let front = TlsFront::start(&pki, ServerCert::Good, server.port, true);
    let address = secured_address(front.port, "localhost");
    let cacert = format!("--cacert={}", pki.ca());

    let (run, _) = run_against(&dir, &address, "mutual", &[&cacert]);
    assert_ne!(run.code, 0, "{}", run.stdout);
    assert!(run.stderr.contains("--cert and --key"), "{}", run.stderr);

    let (cert, key) = pki.client();
    let (cert, key) = (format!("--cert={cert}"), format!("--key={key}"));
    let (run, result) = run_against(&dir, &address, "mutual", &[&cacert, &cert, &key]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(result["config"]["tls"]["client_certificate"], true);

    let (run, _) = run_against(
        &dir,
        &address,
        "mutual",
        &[
            &cacert,
            &cert,
            &format!("--key={}", pki.path("server-key.pem")),
        ],
    );
    assert_eq!(
        run.code, 2,
        "a key that is not the certificate's: {}",
        run.stderr
    );
    assert!(run.stderr.contains("--key"), "{}", run.stderr);
}

#[test]
fn http_and_https_nodes_share_one_run() {
    let dir = scratch("tls", "mixed");
    let pki = Pki::make(&dir);
    let server = PouchServer::secured(Storage::Memory);
    let front = TlsFront::start(&pki, ServerCert::Good, server.port, false);
    let (user, password) = ADMIN;
    let address = format!(
        "http://{user}:{password}@127.0.0.1:{},{}",
        server.port,
        secured_address(front.port, "localhost")
    );
    let cacert = format!("--cacert={}", pki.ca());
    let (run, result) = run_against(&dir, &address, "mixed", &[&cacert]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let nodes = phase(&result, "crud")["target_nodes"]
        .as_array()
        .unwrap()
        .clone();
    let answered: Vec<(String, u64)> = nodes
        .iter()
        .map(|n| {
            (
                n["address"].as_str().unwrap().to_string(),
                n["answered"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(answered.len(), 2, "{answered:?}");
    assert!(answered[0].0.starts_with("http://") && answered[1].0.starts_with("https://"));
    assert!(answered.iter().all(|(_, n)| *n > 0), "{answered:?}");
}

#[test]
fn without_keepalive_every_request_opens_and_shakes_hands() {
    let dir = scratch("tls", "no-keepalive");
    let pki = Pki::make(&dir);
    let server = PouchServer::secured(Storage::Memory);
    let front = TlsFront::start(&pki, ServerCert::Good, server.port, false);
    let address = secured_address(front.port, "localhost");
    let cacert = format!("--cacert={}", pki.ca());
    let (run, result) = run_against(
        &dir,
        &address,
        "per-request",
        &[&cacert, "--disable-keepalive"],
    );
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(result["config"]["keep_alive"], false);
    let crud = phase(&result, "crud");
    let requests: u64 = crud["operations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["succeeded"].as_u64().unwrap() + o["failed"].as_u64().unwrap())
        .sum();
    assert_eq!(requests, 120);
    let setup = &crud["connection_setup"];
    assert_eq!(setup["opened"], requests, "{setup}");
    assert_eq!(setup["reconnects"], requests, "{setup}");
    assert_eq!(setup["handshake"]["count"], requests, "{setup}");
}

#[test]
fn a_server_that_never_shakes_hands_or_speaks_plain_http_is_explained_in_time() {
    let dir = scratch("tls", "adversaries");
    // Accepts connections and never says a word.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let silent_port = silent.local_addr().unwrap().port();
    let held = std::thread::spawn(move || {
        let mut open = Vec::new();
        for stream in silent.incoming().take(4) {
            open.push(stream);
        }
        std::thread::sleep(std::time::Duration::from_secs(30));
    });
    let (run, _) = run_against(
        &dir,
        &format!("https://localhost:{silent_port}"),
        "silent",
        &["--timeout=0"],
    );
    assert_ne!(run.code, 0, "{}", run.stdout);
    assert!(
        run.stderr.contains("no handshake within 5 s"),
        "{}",
        run.stderr
    );
    assert!(run.took.as_secs() < 20, "took {:?}", run.took);
    drop(held);

    let server = PouchServer::start();
    let (run, _) = run_against(
        &dir,
        &format!("https://127.0.0.1:{}", server.port),
        "plain",
        &[],
    );
    assert_ne!(run.code, 0, "{}", run.stdout);
    assert!(
        run.stderr.contains("is an https:// server"),
        "{}",
        run.stderr
    );
}

const PINNED: &str = "presented a certificate given in --cacert";

#[test]
fn a_certificate_given_in_cacert_is_trusted_when_the_server_presents_it_as_it_is() {
    let dir = scratch("tls", "pinned");
    let pki = Pki::make(&dir);
    let server = PouchServer::secured(Storage::Memory);
    let given = |cert| format!("--cacert={}", pki.cert(cert));

    // Self-signed authorities without subjectAltName, as openssl's defaults and CouchDB's
    // documentation make them: trusted as given, by name or by address.
    for (cert, host) in [
        (ServerCert::OpensslDefault, "localhost"),
        (ServerCert::CouchDbDocs, "127.0.0.1"),
    ] {
        let front = TlsFront::start(&pki, cert, server.port, false);
        let address = secured_address(front.port, host);
        let flags = [given(cert), "--overwrite".to_string()];
        let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
        let db = format!("pinned-{}", cert as u8);
        let (run, result) = run_against(&dir, &address, &db, &flags);
        assert_eq!(run.code, 0, "{host}: {}\n{}", run.stdout, run.stderr);
        assert!(
            run.stdout.contains(&format!("TLS: {host} {PINNED}")),
            "{}",
            run.stdout
        );
        assert_eq!(result["config"]["tls"]["verified"], true);
    }

    // Only that very certificate: another self-signed one, or the given one expired, is not.
    let refused: [(ServerCert, ServerCert, &str); 2] = [
        (
            ServerCert::OtherSelfSigned,
            ServerCert::OpensslDefault,
            "not trusted",
        ),
        (
            ServerCert::ExpiredSelfSigned,
            ServerCert::ExpiredSelfSigned,
            "has expired",
        ),
    ];
    for (served, cacert, says) in refused {
        let front = TlsFront::start(&pki, served, server.port, false);
        let address = secured_address(front.port, "localhost");
        let flags = [given(cacert), "--overwrite".to_string()];
        let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
        let (run, _) = run_against(&dir, &address, "not-pinned", &flags);
        assert_eq!(run.code, 1, "{says}: {}", run.stdout);
        assert!(run.stderr.contains(says), "{says}: {}", run.stderr);
    }

    // An authority and its leaf: checked in full, nothing pinned.
    let front = TlsFront::start(&pki, ServerCert::Good, server.port, false);
    let address = secured_address(front.port, "localhost");
    let cacert = format!("--cacert={}", pki.ca());
    let (run, _) = run_against(&dir, &address, "by-authority", &[&cacert, "--overwrite"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(!run.stdout.contains(PINNED), "{}", run.stdout);
}

#[test]
fn a_leaf_without_subject_alt_name_is_refused_with_why_and_what_to_do() {
    let dir = scratch("tls", "no-san");
    let pki = Pki::make(&dir);
    let server = PouchServer::secured(Storage::Memory);
    let front = TlsFront::start(&pki, ServerCert::NoSubjectAltName, server.port, false);
    let address = secured_address(front.port, "localhost");
    let cacert = format!("--cacert={}", pki.ca());
    let (run, _) = run_against(&dir, &address, "no-san", &[&cacert]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    for says in [
        "names no host in subjectAltName",
        "checked there only",
        "-addext subjectAltName=DNS:",
        "pin it",
    ] {
        assert!(run.stderr.contains(says), "{says}: {}", run.stderr);
    }
    assert!(!run.stderr.contains(ADMIN.1), "{}", run.stderr);

    // The leaf itself given: pinned.
    let leaf = format!("--cacert={}", pki.cert(ServerCert::NoSubjectAltName));
    let (run, _) = run_against(&dir, &address, "no-san", &[&leaf, "--overwrite"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stdout.contains(PINNED), "{}", run.stdout);
}

/// The certificates the openssl command line makes, when it is on this machine (the
/// test above makes their like with rcgen): openssl's defaults and CouchDB's documentation.
#[test]
fn certificates_made_by_the_openssl_command_line_are_trusted_as_given() {
    if std::process::Command::new("openssl")
        .arg("version")
        .output()
        .is_err()
    {
        eprintln!("skipped: no openssl command on this machine");
        return;
    }
    let dir = scratch("tls", "openssl");
    let openssl = |args: &[&str]| {
        let made = std::process::Command::new("openssl")
            .args(args)
            .current_dir(&dir)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        assert!(made.status.success(), "openssl {args:?}: {made:?}");
    };
    openssl(&[
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "default-key.pem",
        "-out",
        "default.pem",
        "-subj",
        "/CN=localhost",
    ]);
    // CouchDB's documentation; the subject its prompts ask for given on the command line.
    openssl(&["genrsa", "-out", "privkey.pem", "2048"]);
    openssl(&[
        "req",
        "-new",
        "-x509",
        "-key",
        "privkey.pem",
        "-out",
        "couchdb.pem",
        "-days",
        "1095",
        "-subj",
        "/C=AU/ST=Some-State/O=Internet Widgits Pty Ltd",
    ]);
    let server = PouchServer::secured(Storage::Memory);
    let path = |name: &str| dir.join(name).display().to_string();
    for (cert, key, host) in [
        ("default.pem", "default-key.pem", "localhost"),
        ("couchdb.pem", "privkey.pem", "127.0.0.1"),
    ] {
        let front = TlsFront::serving(&path(cert), &path(key), server.port, None);
        let address = secured_address(front.port, host);
        let cacert = format!("--cacert={}", path(cert));
        let db = format!("openssl-{}", &cert[..4]);
        let (run, _) = run_against(&dir, &address, &db, &[&cacert, "--overwrite"]);
        assert_eq!(run.code, 0, "{cert}: {}\n{}", run.stdout, run.stderr);
        assert!(run.stdout.contains(PINNED), "{}", run.stdout);
    }
}
