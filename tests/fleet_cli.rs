//! How users ask for devices, and what the server needs for them, against PouchDB Server
//! on disk with an admin: `--device-users` makes a user per own database, names it in
//! the database's `_security`, and `--cleanup` deletes the users it made and no other;
//! bad device flags and tables stop the run with one message each and exit 2; the
//! built-in fleet scenarios are listed.

mod common;

use base64::Engine as _;
use common::*;
use hmac::{Hmac, Mac};
use serde_json::{Value, json};

/// A small run of Iron Cushion's steps over `databases` own databases, one device each.
fn run_args<'a>(address: &'a str, database: &'a str, databases: &'a str) -> Vec<&'a str> {
    vec![
        "run",
        address,
        database,
        "--quiet",
        "--num_connections=1",
        "--num_bulk_insert_operations=1",
        "--num_documents_per_bulk_insert=10",
        "--num_crud_operations=10",
        "--seed=5",
        "--databases",
        databases,
        "--devices",
        databases,
        "--device-users",
    ]
}

/// The password the run derives for `user` from the admin's: what its devices log in
/// with (HMAC-SHA256, base64url; see `driver::auth::device`).
fn device_password(user: &str) -> String {
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(ADMIN.1.as_bytes()).unwrap();
    mac.update(b"sofabench device user\0");
    mac.update(user.as_bytes());
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes())
}

fn user_doc(server: &PouchServer, user: &str) -> (u16, Value) {
    get(&format!(
        "{}/_users/org.couchdb.user:{user}",
        server.admin_url
    ))
}

/// `GET /db` as `user` with `password`.
fn as_user(server: &PouchServer, user: &str, password: &str, database: &str) -> u16 {
    let url = format!(
        "http://{user}:{password}@127.0.0.1:{}/{database}",
        server.port
    );
    get(&url).0
}

#[test]
fn device_users_are_made_members_of_their_database_and_cleanup_deletes_only_its_own() {
    let server = PouchServer::secured(Storage::Disk);
    let address = format!("--database_address={}", server.admin_url);
    let run = sofabench(&run_args(&address, "--database_name=fleet", "2"));
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    for (database, other) in [("fleet-0000", "fleet-0001"), ("fleet-0001", "fleet-0000")] {
        let user = format!("{database}-device");
        let (status, doc) = user_doc(&server, &user);
        assert_eq!(status, 200, "{user}: {doc}");
        assert_eq!(
            (doc["name"].as_str(), &doc["roles"]),
            (Some(user.as_str()), &json!([]))
        );
        let (_, security) = get(&format!("{}/_security", server.admin_db(database)));
        assert_eq!(security["members"]["names"], json!([user]), "{security}");
        let password = device_password(&user);
        assert_eq!(as_user(&server, &user, &password, database), 200);
        let refused = [401, 403];
        assert!(
            refused.contains(&as_user(&server, &user, &password, other)),
            "not its database"
        );
        assert!(refused.contains(&as_user(&server, &user, "guess", database)));
        assert!(!run.stdout.contains(&password) && !run.stderr.contains(&password));
    }
    assert!(
        run.stdout.contains("device users (2, one per database"),
        "{}",
        run.stdout
    );

    // Run again on the same databases: the users are found (they take the password the
    // run derives), and --cleanup keeps them and the databases, which it did not make.
    let mut again = run_args(&address, "--database_name=fleet", "2");
    again.extend(["--reuse", "--cleanup"]);
    let run = sofabench(&again);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("0 created by this run, 2 found"),
        "{}",
        run.stdout
    );
    assert_eq!(user_doc(&server, "fleet-0000-device").0, 200);
    assert_eq!(get(&server.admin_db("fleet-0001")).0, 200);

    // A fresh run with --cleanup deletes the users and the databases it made.
    let mut fresh = run_args(&address, "--database_name=fresh", "3");
    fresh.push("--cleanup");
    let run = sofabench(&fresh);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("3 created by this run"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("deleted 3 device users (--cleanup)"),
        "{}",
        run.stdout
    );
    for n in 0..3 {
        let database = format!("fresh-000{n}");
        let (status, doc) = user_doc(&server, &format!("{database}-device"));
        assert_eq!(status, 404, "{database}'s user was kept: {doc}");
        assert_eq!(get(&server.admin_db(&database)).0, 404);
    }
}

#[test]
fn a_user_someone_else_made_is_refused_and_kept() {
    let server = PouchServer::secured(Storage::Disk);
    let address = format!("--database_address={}", server.admin_url);
    let theirs = json!({
        "_id": "org.couchdb.user:theirs-device", "name": "theirs-device",
        "type": "user", "roles": [], "password": "their own",
    });
    let url = format!("{}/_users/org.couchdb.user:theirs-device", server.admin_url);
    assert_eq!(request("PUT", &url, Some(&theirs)).0, 201);
    let mut args = run_args(&address, "--database_name=theirs", "1");
    args.push("--cleanup");
    let run = sofabench(&args);
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("user \"theirs-device\" already exists"),
        "{}",
        run.stderr
    );
    let (status, doc) = user_doc(&server, "theirs-device");
    assert_eq!(status, 200, "their user was deleted: {doc}");
    assert!(
        doc["_rev"].as_str().is_some_and(|r| r.starts_with("1-")),
        "changed: {doc}"
    );
}

#[test]
fn bad_device_flags_stop_the_run_with_one_message_each() {
    let cases: [(&[&str], &str); 9] = [
        (&["--devices", "0"], "--devices"),
        (&["--devices", "2", "--device-mix", "50,40"], "--device-mix"),
        (
            &["--devices", "2", "--device-mix", "50,40,20"],
            "sum to 110",
        ),
        (&["--devices", "2", "--device-sync", "5ms"], "--device-sync"),
        (
            &["--devices", "2", "--device-offline", "20%:1s"],
            "SHARE%:FROM:LASTING",
        ),
        (&["--devices", "2", "--device-cold", "3"], "--device-cold 3"),
        (
            &["--devices", "2", "--device-writes", "5000"],
            "--device-writes",
        ),
        (
            &[
                "--devices",
                "2",
                "--device-users",
                "--device-scope",
                "doc-ids",
            ],
            "--device-users with --device-scope doc-ids",
        ),
        (&["--device-users"], "give --devices N too"),
    ];
    for (flags, message) in cases {
        let mut args = vec!["run", "--database_address=http://127.0.0.1:1", "--quiet"];
        args.extend_from_slice(flags);
        let run = sofabench(&args);
        assert_eq!(run.code, 2, "{flags:?}: {}", run.stderr);
        assert!(run.stderr.contains(message), "{flags:?}: {}", run.stderr);
        assert_eq!(
            run.stderr.matches("error:").count(),
            1,
            "{flags:?}: {}",
            run.stderr
        );
        assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    }
}

#[test]
fn a_devices_table_lists_every_problem() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("fleet.toml");
    std::fs::write(
        &file,
        r#"
[[phase]]
name = "devices"
duration = "5s"
connections = 0
devices = { count = 2, scope = "all", sync = "sometimes", cold = 5, users = true }
"#,
    )
    .unwrap();
    let run = sofabench(&[
        "run",
        "--database_address=http://127.0.0.1:1",
        "--quiet",
        "--scenario",
        file.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    for problem in ["devices.scope", "devices.sync", "devices.cold 5"] {
        assert!(run.stderr.contains(problem), "{problem}: {}", run.stderr);
    }
}

#[test]
fn the_fleet_scenarios_are_listed() {
    let run = sofabench(&["scenarios"]);
    assert_eq!(run.code, 0);
    for name in [
        "steady-fleet",
        "morning-rush",
        "cold-start",
        "conflict-storm",
    ] {
        assert!(
            run.stdout.lines().any(|l| l.starts_with(name)),
            "{name}:\n{}",
            run.stdout
        );
    }
}

/// End to end: devices log in as their database's user. Each database takes writes from
/// its device user alone (a validate_doc_update made before the run), so every document
/// the devices wrote shows they came as that user.
#[test]
fn devices_write_as_their_databases_user() {
    let server = PouchServer::secured(Storage::Disk);
    let address = format!("--database_address={}", server.admin_url);
    for n in 0..2 {
        let database = format!("mine-000{n}");
        assert_eq!(request("PUT", &server.admin_db(&database), None).0, 201);
        let check = format!(
            "function (doc, old, user) {{ if (user.name !== '{database}-device') {{ throw({{forbidden: 'devices only'}}); }} }}"
        );
        let design = json!({ "validate_doc_update": check });
        let url = format!("{}/_design/only-devices", server.admin_db(&database));
        assert_eq!(request("PUT", &url, Some(&design)).0, 201);
    }
    let dir = tempfile::tempdir().unwrap();
    let (file, json) = (dir.path().join("mine.toml"), dir.path().join("r.json"));
    std::fs::write(
        &file,
        r#"
[[phase]]
name = "devices"
duration = "4s"
connections = 0
devices = { count = 2, writes = 2, users = true, grace = "60s" }
"#,
    )
    .unwrap();
    let run = sofabench(&[
        "run",
        &address,
        "--database_name=mine",
        "--databases=2",
        "--reuse",
        "--quiet",
        "--scenario",
        file.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    // PouchDB Server 4.2 with a validate_doc_update answers some edits pushed with
    // `new_edits: false` as taken without storing them (unexplained; see the issue's
    // closing note): the convergence check says so and fails the run. What this test
    // checks is who the devices write as; any other failure fails it.
    let only_unconverged = run.code == 1
        && run
            .stderr
            .lines()
            .all(|l| l.contains("did not converge with the server"));
    assert!(
        run.code == 0 || only_unconverged,
        "{}\n{}",
        run.stdout,
        run.stderr
    );
    let devices = &result_json(&json)["phases"][0]["devices"];
    // Every push was taken (the validation refuses anyone but the user), none failed.
    assert!(devices["counts"]["pushed"].as_u64() > Some(0), "{devices}");
    assert_eq!(devices["counts"]["failed_pushes"], 0, "{devices}");
    for n in 0..2 {
        let written = doc_count(&server.admin_db(&format!("mine-000{n}")));
        assert!(written > 1, "mine-000{n}: no device wrote ({written})");
    }
}
