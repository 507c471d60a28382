//! Authentication modes against servers that check them: session cookies against PouchDB
//! Server on disk with an admin, renewed when the server ends the session, and replicated
//! with; against a test-only server, a thousand connections meeting a 401 together and
//! sessions renewed ahead of expiry; JWT and proxy authentication headers and IAM tokens
//! (from a local token endpoint) against a test-only server that checks them as CouchDB 3
//! does. No secret may show in the output or the result file.

mod common;

use std::path::Path;
use std::time::Duration;

use common::auth_server::{AuthServer, Check, Sessions, TokenAnswer, TokenEndpoint, jwt, unix_now};
use common::tls::{Pki, ServerCert, TlsFront};
use common::*;
use serde_json::{Value, json};

/// Runs sofabench with `env` added to its environment.
fn run_with(args: &[String], env: &[(&str, &str)]) -> Run {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    finish(spawn_sofabench_with_env(&args, env))
}

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|a| a.to_string()).collect()
}

fn read_result(path: &Path) -> (Value, String) {
    let text = std::fs::read_to_string(path).unwrap();
    (serde_json::from_str(&text).unwrap(), text)
}

/// The phases' logins, added up.
fn logins(result: &Value) -> u64 {
    result["phases"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["logins"]["count"].as_u64())
        .sum()
}

/// An operation's field in a phase, e.g. `("crud", "create", "succeeded")`.
fn field(result: &Value, phase: &str, operation: &str, name: &str) -> u64 {
    let phases = result["phases"].as_array().unwrap();
    let phase = phases.iter().find(|p| p["name"] == phase).unwrap();
    let ops = phase["operations"].as_array().unwrap();
    ops.iter()
        .find(|o| o["operation"] == operation)
        .map_or(0, |o| o[name].as_u64().unwrap())
}

/// Every operation's `resends` and `failed`, added up over the phases.
fn resends_and_failures(result: &Value) -> (u64, u64) {
    let ops = result["phases"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p["operations"].as_array().unwrap().clone());
    ops.fold((0, 0), |(r, f), o| {
        (
            r + o["resends"].as_u64().unwrap(),
            f + o["failed"].as_u64().unwrap(),
        )
    })
}

fn assert_hidden(secrets: &[&str], run: &Run, result_text: &str) {
    for secret in secrets {
        for (name, shown) in [
            ("stdout", &run.stdout),
            ("stderr", &run.stderr),
            ("result", &result_text.to_string()),
        ] {
            assert!(!shown.contains(secret), "{secret} in {name}:\n{shown}");
        }
    }
}

/// A phase of creates and reads: 10 s at most, bounded by `total` operations.
fn crud_args(
    address: &str,
    database: &str,
    json: &Path,
    total: u64,
    connections: u64,
) -> Vec<String> {
    args(&[
        "run",
        &format!("--database_address={address}"),
        &format!("--database_name={database}"),
        &format!("--num_connections={connections}"),
        "--num_bulk_insert_operations=0",
        &format!("--total-operations={total}"),
        "--create_weight=1",
        "--read_weight=1",
        "--update_weight=0",
        "--delete_weight=0",
        "--seed=5",
        "--quiet",
        "--json",
        json.to_str().unwrap(),
    ])
}

#[test]
fn session_cookies_against_pouchdb_server_on_disk_with_an_admin() {
    let server = PouchServer::secured(Storage::Disk);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("result.json");
    let run = run_with(
        &args(&[
            "run",
            &format!("--database_address={}", server.admin_url),
            "--database_name=cookies",
            "--verbose",
            "--auth",
            "cookie",
            "--num_connections=4",
            "--num_documents_per_bulk_insert=20",
            "--num_bulk_insert_operations=2",
            "--num_crud_operations=40",
            "--seed=3",
            "--quiet",
            "--json",
            json.to_str().unwrap(),
        ]),
        &[],
    );
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("  auth: cookie ("), "{}", run.stdout);
    assert!(
        run.stdout.contains("  logins: 1, none failed; each: mean"),
        "{}",
        run.stdout
    );
    let (result, text) = read_result(&json);
    assert_eq!(result["config"]["auth"], "cookie");
    assert_eq!(result["config"]["user"], "admin");
    // One login for the node, made before the first phase and counted with it.
    assert_eq!(result["phases"][0]["logins"]["count"], 1);
    assert_eq!(result["phases"][0]["logins"]["failed"], 0);
    assert!(result["phases"][1].get("logins").is_none(), "{text}");
    assert_eq!(resends_and_failures(&result), (0, 0));
    let stored = field(&result, "bulk_insert", "bulk_insert", "documents")
        + field(&result, "crud", "create", "succeeded")
        - field(&result, "crud", "delete", "succeeded");
    assert_eq!(doc_count(&server.admin_db("cookies")), stored);
    assert_hidden(&[ADMIN.1], &run, &text);
}

#[test]
fn a_session_the_server_ended_is_renewed_once_and_the_operations_sent_again() {
    // Sessions end after 1 to 2 s (PouchDB Server counts whole seconds) and the cookie
    // says nothing of it: every end is met as a 401 by the connections in flight.
    let server = PouchServer::secured_with(Storage::Disk, r#""couch_httpd_auth":{"timeout":2}"#);
    let db = server.admin_db("ended");
    assert_eq!(request("PUT", &db, None).0, 201);
    let members =
        json!({"admins": {"names": [], "roles": []}, "members": {"names": ["admin"], "roles": []}});
    assert_eq!(
        request("PUT", &format!("{db}/_security"), Some(&members)).0,
        200
    );
    // Without a valid session the server answers 401, as CouchDB does for this database.
    assert_eq!(get(&server.db("ended")).0, 401);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("result.json");
    let mut run_args = crud_args(&server.admin_url, "ended", &json, 100_000, 4);
    run_args.extend(args(&["--auth", "cookie", "--reuse", "--duration", "5s"]));
    let run = run_with(&run_args, &[]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let (result, text) = read_result(&json);
    let (resends, failures) = resends_and_failures(&result);
    assert_eq!(failures, 0, "{text}");
    // At least two sessions ended in 5 s; each was met by the connections in flight,
    // whose requests went again after one login for them all (without that, four each).
    let logins = logins(&result);
    assert!(
        (3..=7).contains(&logins),
        "{logins} logins:\n{}",
        run.stdout
    );
    assert!(resends >= logins - 1, "{resends} resends, {logins} logins");
    let statuses = &result["phases"][0]["operations"][0]["statuses"];
    assert!(statuses.get("401").is_none(), "{statuses}");
    let created = field(&result, "crud", "create", "succeeded");
    assert_eq!(doc_count(&db), created);
    assert_hidden(&[ADMIN.1], &run, &text);
}

#[test]
fn a_changes_feed_that_meets_an_ended_session_logs_in_again() {
    let server = AuthServer::start(Check::Cookie(Sessions {
        user: "bench".to_string(),
        password: "pw-of-bench".to_string(),
        lifetime: Duration::from_secs(3_600),
        max_age: true,
        login_delay: Duration::ZERO,
    }));
    // Two `normal` feeds ask about 40 times a second; one create and one look at the
    // database's sizes a second. The sessions end after about a second, most likely met
    // first by a feed.
    server.end_sessions_at(50);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("result.json");
    let address = server.url.replace("http://", "http://bench:pw-of-bench@");
    let mut run_args = crud_args(&address, "feeds", &json, 100_000, 1);
    run_args.extend(args(&[
        "--auth",
        "cookie",
        "--read_weight=0",
        "--duration=3s",
        "--rate=1",
        "--no-server-stats",
        "--changes-consumers=2",
        "--changes-feed=normal",
        "--changes-grace=1s",
    ]));
    let run = run_with(&run_args, &[]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let (result, text) = read_result(&json);
    // The feed that met the 401 logged in, the other found the new session: one 401
    // each at most. Without a login of their own, the feeds would meet 401s (pausing
    // 50 ms, 100 ms, … between them) until a create happened to log in.
    assert_eq!(
        server.logins(),
        2,
        "the first login and one renewal: {text}"
    );
    let troubles = &result["phases"][0]["changes"]["troubles"];
    assert!(
        troubles["error_statuses"].as_u64().unwrap() <= 2,
        "{troubles}"
    );
    assert!(server.refused() <= 3, "{troubles}");
    // The create (one a second) may meet the ended session before a feed does: it then
    // logs in and sends itself once more, counted as a resend. Nothing fails either way.
    let (resends, failures) = resends_and_failures(&result);
    assert!(
        resends <= 1 && failures == 0,
        "{resends} {failures}: {text}"
    );
}

#[test]
fn a_thousand_connections_meeting_a_401_together_log_in_once() {
    let server = AuthServer::start(Check::Cookie(Sessions {
        user: "bench".to_string(),
        password: "pw-of-bench".to_string(),
        lifetime: Duration::from_secs(3_600),
        max_age: true,
        // Slow, so that every connection meets the 401 while the login is on its way.
        login_delay: Duration::from_millis(300),
    }));
    // The sessions end in the middle of the creates, with every connection busy: each
    // has done about 3 of its 10.
    server.end_sessions_at(3_000);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("result.json");
    let address = server.url.replace("http://", "http://bench:pw-of-bench@");
    let mut run_args = crud_args(&address, "crowd", &json, 10_000, 1_000);
    run_args.extend(args(&["--auth", "cookie", "--read_weight=0"]));
    let run = run_with(&run_args, &[]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(server.logins(), 2, "the first login and one renewal");
    let (result, text) = read_result(&json);
    assert_eq!(logins(&result), 2, "{text}");
    let (resends, failures) = resends_and_failures(&result);
    assert_eq!(failures, 0);
    // Every operation refused was sent once more, and counted so. A crowd met the 401
    // while the one login was on its way (all 1,000 connections on an idle machine,
    // some hundreds beside busy loops). The run's looks at the database's sizes, one an
    // interval, meet it too when one falls in that while (more likely on a busy machine,
    // where the run lasts longer); they are sent again too, but are no operations.
    let refused = server.refused_documents();
    assert!(refused >= 100, "only {refused} operations met the 401");
    assert_eq!(
        resends,
        refused,
        "resends, and operations refused ({} requests refused in all)",
        server.refused()
    );
    assert_eq!(server.documents("crowd"), 10_000);
    assert_hidden(&["pw-of-bench"], &run, &text);
}

#[test]
fn sessions_are_renewed_ahead_of_the_expiry_their_cookie_announces() {
    let server = AuthServer::start(Check::Cookie(Sessions {
        user: "bench".to_string(),
        password: "pw-of-bench".to_string(),
        lifetime: Duration::from_secs(3),
        max_age: true,
        login_delay: Duration::ZERO,
    }));
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("result.json");
    let address = server.url.replace("http://", "http://bench:pw-of-bench@");
    let mut run_args = crud_args(&address, "fresh", &json, 1_000_000, 2);
    run_args.extend(args(&["--auth", "cookie", "--duration", "6s"]));
    let run = run_with(&run_args, &[]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    // Renewed at 1.4 s of each 3 s session: never a request with an expired cookie.
    assert_eq!(server.refused(), 0);
    assert!(server.logins() >= 4, "{} logins", server.logins());
    let (result, _) = read_result(&json);
    // A renewal may fall between the phase's end and the process's.
    assert!(server.logins() - logins(&result) <= 1);
    assert_eq!(resends_and_failures(&result), (0, 0));
}

/// A phase of 20 creates replicated to `copy` once they are done (its moment is later
/// than they last).
fn replicating(dir: &Path) -> String {
    let file = dir.join("replicate.toml");
    std::fs::write(
        &file,
        "[[phase]]\nname = \"copy\"\nmix = { create = 1 }\ntotal = 20\nconnections = 2\nreplicate_at = \"60s\"\nreplicate_to = \"copy\"\n",
    )
    .unwrap();
    file.to_str().unwrap().to_string()
}

/// A run of the replicating phase into `database` of `server` with `auth` and its
/// environment.
fn replicating_run(
    server: &AuthServer,
    (dir, database): (&Path, &str),
    auth: &[&str],
    env: &[(&str, &str)],
) -> (Run, Value, String) {
    let json = dir.join("result.json");
    let mut run_args = args(&[
        "run",
        &format!("--database_address={}", server.url),
        &format!("--database_name={database}"),
        "--quiet",
        "--scenario",
        &replicating(dir),
        "--json",
        json.to_str().unwrap(),
    ]);
    run_args.extend(args(auth));
    let run = run_with(&run_args, env);
    let (result, text) = if json.exists() {
        read_result(&json)
    } else {
        (Value::Null, String::new())
    };
    (run, result, text)
}

#[test]
fn a_jwt_goes_as_a_bearer_token_and_to_the_replicator_as_a_header() {
    let key = b"the key CouchDB has in [jwt_keys]";
    let server = AuthServer::start(Check::Jwt { key: key.to_vec() });
    let token = jwt(
        key,
        &json!({"sub": "bench", "exp": unix_now() + 3_600, "_couchdb.roles": ["_admin"]}),
    );
    let dir = tempfile::tempdir().unwrap();
    let (run, result, text) = replicating_run(
        &server,
        (dir.path(), "checked"),
        &["--auth", "jwt"],
        &[("SOFABENCH_TOKEN", &token)],
    );
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert_eq!((server.refused(), server.documents("checked")), (0, 20));
    assert_eq!(result["config"]["auth"], "jwt");
    let replication = &server.replications()[0];
    let expected = json!({"url": format!("{}/checked", server.url), "headers": {"Authorization": format!("Bearer {token}")}});
    assert_eq!(replication["source"], expected);
    assert_hidden(&[&token], &run, &text);
    assert!(
        run.stdout.contains("expires at") && run.stdout.contains("not renewable"),
        "{}",
        run.stdout
    );

    // A token that has expired is refused before a request is sent, naming the claim.
    let expired = jwt(key, &json!({"sub": "bench", "exp": unix_now() - 60}));
    let served = (server.served(), server.refused());
    let (run, _, _) = replicating_run(
        &server,
        (tempfile::tempdir().unwrap().path(), "expired"),
        &["--auth", "jwt"],
        &[("SOFABENCH_TOKEN", &expired)],
    );
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("SOFABENCH_TOKEN expired at"),
        "{}",
        run.stderr
    );
    assert_eq!((server.served(), server.refused()), served);

    // A token signed with another key is refused before the run starts, saying what to check.
    let forged = jwt(b"another key", &json!({"sub": "bench"}));
    let dir = tempfile::tempdir().unwrap();
    let (run, _, _) = replicating_run(
        &server,
        (dir.path(), "forged"),
        &["--auth", "jwt"],
        &[("SOFABENCH_TOKEN", &forged)],
    );
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("401") && run.stderr.contains("SOFABENCH_TOKEN"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains(&forged), "{}", run.stderr);
    // Without the variable, the message names it.
    let (run, _, _) = replicating_run(
        &server,
        (tempfile::tempdir().unwrap().path(), "unset"),
        &["--auth", "jwt"],
        &[],
    );
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("SOFABENCH_TOKEN"), "{}", run.stderr);
}

#[test]
fn proxy_authentication_sends_the_user_roles_and_hmac_token_couchdb_checks() {
    let secret = "the [chttpd_auth] secret";
    let server = AuthServer::start(Check::Proxy {
        secret: secret.to_string(),
    });
    let dir = tempfile::tempdir().unwrap();
    let proxy = [
        "--auth",
        "proxy",
        "--user",
        "bench",
        "--proxy-roles",
        "_admin, writers",
    ];
    let (run, result, text) = replicating_run(
        &server,
        (dir.path(), "checked"),
        &proxy,
        &[("SOFABENCH_PROXY_SECRET", secret)],
    );
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert_eq!((server.refused(), server.documents("checked")), (0, 20));
    assert_eq!(server.roles().as_deref(), Some("_admin,writers"));
    assert_eq!(result["config"]["proxy_roles"], "_admin,writers");
    let headers = &server.replications()[0]["source"]["headers"];
    assert_eq!(headers["X-Auth-CouchDB-UserName"], "bench");
    assert_eq!(headers["X-Auth-CouchDB-Roles"], "_admin,writers");
    let token = headers["X-Auth-CouchDB-Token"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(token.len(), 64, "hex of HMAC-SHA256");
    assert_hidden(&[secret, &token], &run, &text);

    // The secret from a file (a line with its newline) works the same; a wrong one is refused.
    let file = dir.path().join("secret");
    std::fs::write(&file, format!("{secret}\n")).unwrap();
    let from_file = [&proxy[..], &["--proxy-secret-file", file.to_str().unwrap()]].concat();
    let dir2 = tempfile::tempdir().unwrap();
    let (run, _, _) = replicating_run(&server, (dir2.path(), "from_file"), &from_file, &[]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let (run, _, _) = replicating_run(
        &server,
        (tempfile::tempdir().unwrap().path(), "wrong"),
        &proxy,
        &[("SOFABENCH_PROXY_SECRET", "wrong")],
    );
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("proxy_authentication_handler"),
        "{}",
        run.stderr
    );
}

#[test]
fn iam_tokens_come_from_the_token_endpoint_and_are_renewed_ahead_of_expiry() {
    let endpoint = TokenEndpoint::start(
        "an-ibm-cloud-api-key",
        TokenAnswer::Token(Duration::from_secs(3)),
    );
    let server = AuthServer::start(Check::Iam(endpoint.tokens.clone()));
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("result.json");
    let mut run_args = crud_args(&server.url, "cloudant", &json, 1_000_000, 2);
    run_args.extend(args(&[
        "--auth",
        "iam",
        "--iam-token-url",
        &endpoint.url,
        "--duration",
        "6s",
    ]));
    let key = [("SOFABENCH_IAM_API_KEY", "an-ibm-cloud-api-key")];
    let run = run_with(&run_args, &key);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    // Tokens of 3 s, fetched again at 1.4 s: no request ever carried an expired one.
    assert_eq!(server.refused(), 0);
    assert!(
        endpoint.requests() >= 4,
        "{} token requests",
        endpoint.requests()
    );
    let (result, text) = read_result(&json);
    assert_eq!(result["config"]["auth"], "iam");
    assert_eq!(result["config"]["iam_token_url"], endpoint.url);
    assert!(endpoint.requests() - logins(&result) <= 1);
    assert_eq!(resends_and_failures(&result), (0, 0));
    assert_hidden(&["an-ibm-cloud-api-key", "iam-token-"], &run, &text);

    // The replicator is handed the API key where Cloudant takes it.
    let dir = tempfile::tempdir().unwrap();
    let iam = ["--auth", "iam", "--iam-token-url", &endpoint.url];
    let (run, _, text) = replicating_run(&server, (dir.path(), "checked"), &iam, &key);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let source = &server.replications()[0]["source"];
    assert_eq!(
        source["auth"],
        json!({"iam": {"api_key": "an-ibm-cloud-api-key"}})
    );
    assert_hidden(&["an-ibm-cloud-api-key"], &run, &text);
}

#[test]
fn a_token_endpoint_that_refuses_or_answers_nonsense_gets_one_clear_message() {
    let server = AuthServer::start(Check::Iam(Default::default()));
    let attempt = |answer: TokenAnswer, key: &str| {
        let endpoint = TokenEndpoint::start("right-key", answer);
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("result.json");
        let mut run_args = crud_args(&server.url, "never", &json, 10, 1);
        run_args.extend(args(&["--auth", "iam", "--iam-token-url", &endpoint.url]));
        (
            run_with(&run_args, &[("SOFABENCH_IAM_API_KEY", key)]),
            endpoint.url,
        )
    };
    let (refused, _) = attempt(TokenAnswer::Token(Duration::from_secs(60)), "wrong-key");
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    assert!(
        refused.stderr.contains("refused the API key")
            && refused
                .stderr
                .contains("Provided API key could not be found"),
        "{}",
        refused.stderr
    );
    assert!(!refused.stderr.contains("wrong-key"));
    let (not_json, url) = attempt(TokenAnswer::NotJson, "right-key");
    assert_eq!(not_json.code, 1, "{}", not_json.stderr);
    assert!(
        not_json.stderr.contains(&url) && not_json.stderr.contains("not JSON"),
        "{}",
        not_json.stderr
    );
    assert_eq!(not_json.stderr.lines().count(), 1, "{}", not_json.stderr);
    let (huge, _) = attempt(TokenAnswer::Huge(4 << 20), "right-key");
    assert_eq!(huge.code, 1, "{}", huge.stderr);
    assert!(huge.stderr.contains("too large"), "{}", huge.stderr);
    let nobody = format!("http://127.0.0.1:{}/identity/token", free_port());
    let dir = tempfile::tempdir().unwrap();
    let mut run_args = crud_args(&server.url, "never", &dir.path().join("r.json"), 10, 1);
    run_args.extend(args(&["--auth", "iam", "--iam-token-url", &nobody]));
    let unreachable = run_with(&run_args, &[("SOFABENCH_IAM_API_KEY", "right-key")]);
    assert_eq!(unreachable.code, 1, "{}", unreachable.stderr);
    assert!(
        unreachable.stderr.contains("cannot get an IAM token"),
        "{}",
        unreachable.stderr
    );
    assert_eq!(server.served(), 0, "nothing was sent without a token");
}

#[test]
fn replication_in_cookie_mode_against_pouchdb_server_with_an_admin() {
    let server = PouchServer::secured(Storage::Disk);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("result.json");
    let run = run_with(
        &args(&[
            "run",
            &format!("--database_address={}", server.admin_url),
            "--database_name=source",
            "--auth",
            "cookie",
            "--quiet",
            "--scenario",
            &replicating(dir.path()),
            "--json",
            json.to_str().unwrap(),
        ]),
        &[],
    );
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let (result, text) = read_result(&json);
    assert!(result["phases"][0]["action"]["error"].is_null(), "{text}");
    assert_eq!(
        doc_count(&server.admin_db("copy")),
        doc_count(&server.admin_db("source"))
    );
    assert_eq!(doc_count(&server.admin_db("source")), 20);
    assert_hidden(&[ADMIN.1], &run, &text);
}

#[test]
fn flags_a_mode_does_not_use_are_warned_of_and_a_missing_secret_named() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let mut cookie_without_password = crud_args("http://127.0.0.1:1", "db", &json, 10, 1);
    cookie_without_password.extend(args(&["--auth", "cookie"]));
    let run = run_with(&cookie_without_password, &[]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr
            .contains("--auth cookie needs a user name and password"),
        "{}",
        run.stderr
    );
    let mut unknown = crud_args("http://127.0.0.1:1", "db", &json, 10, 1);
    unknown.extend(args(&["--auth", "kerberos"]));
    let run = run_with(&unknown, &[]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("basic, cookie, jwt, proxy, iam"),
        "{}",
        run.stderr
    );
    let mut iam_without_key = crud_args("http://127.0.0.1:1", "db", &json, 10, 1);
    iam_without_key.extend(args(&["--auth", "iam"]));
    let run = run_with(&iam_without_key, &[]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("SOFABENCH_IAM_API_KEY"),
        "{}",
        run.stderr
    );
}

#[test]
fn logins_go_over_tls_as_the_requests_do() {
    let dir = scratch("auth", "tls");
    let pki = Pki::make(&dir);
    let cacert = format!("--cacert={}", pki.ca());
    // A session cookie from a PouchDB Server behind TLS.
    let server = PouchServer::secured(Storage::Disk);
    let front = TlsFront::start(&pki, ServerCert::Good, server.port, false);
    let (user, password) = ADMIN;
    let address = format!("https://{user}:{password}@localhost:{}", front.port);
    let json = dir.join("cookie.json");
    let mut run_args = crud_args(&address, "secured", &json, 200, 2);
    run_args.extend(args(&["--auth", "cookie", &cacert]));
    let run = run_with(&run_args, &[]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let (result, _) = read_result(&json);
    assert_eq!(logins(&result), 1);
    let created = field(&result, "crud", "create", "succeeded");
    assert_eq!(doc_count(&server.admin_db("secured")), created);

    // IAM tokens from an https:// endpoint for a plain http:// node: the endpoint alone
    // makes the run speak TLS.
    let endpoint = TokenEndpoint::start("k3y", TokenAnswer::Token(Duration::from_secs(600)));
    let token_front = TlsFront::start(&pki, ServerCert::Good, endpoint.port, false);
    let couch = AuthServer::start(Check::Iam(endpoint.tokens.clone()));
    let token_url = format!("https://localhost:{}/identity/token", token_front.port);
    let json = dir.join("iam.json");
    let mut run_args = crud_args(&couch.url, "cloudant", &json, 200, 2);
    run_args.extend(args(&[
        "--auth",
        "iam",
        "--iam-token-url",
        &token_url,
        &cacert,
    ]));
    let run = run_with(&run_args, &[("SOFABENCH_IAM_API_KEY", "k3y")]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert_eq!((endpoint.requests(), couch.refused()), (1, 0));
    assert_eq!(
        couch.documents("cloudant") as u64,
        field(&read_result(&json).0, "crud", "create", "succeeded")
    );
    // Without the private CA, the endpoint's certificate is not trusted: one message.
    let mut untrusted = crud_args(&couch.url, "cloudant2", &dir.join("no.json"), 10, 1);
    untrusted.extend(args(&["--auth", "iam", "--iam-token-url", &token_url]));
    let run = run_with(&untrusted, &[("SOFABENCH_IAM_API_KEY", "k3y")]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("cannot get an IAM token") && run.stderr.contains("certificate"),
        "{}",
        run.stderr
    );
}

#[test]
fn an_anonymous_run_that_ends_pouchdb_server_says_it_stopped_answering_and_why_it_may_have() {
    // With an admin, an anonymous PUT of a database ends PouchDB Server's process.
    let server = PouchServer::secured(Storage::Memory);
    let run = run_with(
        &args(&[
            "run",
            &format!("--database_address={}", server.url),
            "--database_name=anonymous",
            "--num_connections=1",
            "--num_crud_operations=10",
            "--quiet",
        ]),
        &[],
    );
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    for says in [
        "stopped answering at PUT /anonymous",
        "an anonymous PUT of a database ends the server's process",
        "give the admin's credentials",
    ] {
        assert!(run.stderr.contains(says), "{says}: {}", run.stderr);
    }
    assert!(
        !run.stderr.contains("closes the connection"),
        "{}",
        run.stderr
    );
}
