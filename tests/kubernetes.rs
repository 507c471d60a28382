//! The Kubernetes manifest of deploy/kubernetes: an Indexed Job whose pods are the nodes
//! of one run. No cluster here: the test checks the manifest's structure.

mod common;

use serde::Deserialize;
use serde_json::Value;

fn documents() -> Vec<Value> {
    let path = common::repository().join("deploy/kubernetes/sofabench-job.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    serde_norway::Deserializer::from_str(&text)
        .map(|document| Value::deserialize(document).unwrap_or_else(|e| panic!("{e}")))
        .filter(|document| !document.is_null())
        .collect()
}

fn of_kind<'a>(documents: &'a [Value], kind: &str) -> Vec<&'a Value> {
    documents.iter().filter(|d| d["kind"] == kind).collect()
}

#[test]
fn the_job_runs_every_node_at_once_with_its_index() {
    let documents = documents();
    let jobs = of_kind(&documents, "Job");
    assert_eq!(jobs.len(), 1);
    let job = jobs[0];
    assert_eq!(job["apiVersion"], "batch/v1");
    let spec = &job["spec"];
    assert_eq!(spec["completionMode"], "Indexed");
    let completions = spec["completions"].as_u64().expect("completions");
    assert!(completions >= 2);
    assert_eq!(
        spec["parallelism"].as_u64(),
        Some(completions),
        "every node runs at the same time"
    );
    let pod = &spec["template"]["spec"];
    assert_eq!(pod["restartPolicy"], "Never");
    let containers = pod["containers"].as_array().unwrap();
    assert_eq!(containers.len(), 1);
    let container = &containers[0];
    let env = container["env"].as_array().unwrap();
    let variable = |name: &str| env.iter().find(|e| e["name"] == name);
    let node_count = variable("SOFABENCH_NODE_COUNT").map(|e| e["value"].clone());
    let command: Vec<&str> = container["command"]
        .as_array()
        .into_iter()
        .chain(container["args"].as_array())
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let command = command.join(" ");
    assert!(
        node_count == Some(Value::String(completions.to_string()))
            || command.contains(&format!("--node-count={completions}")),
        "the node count is the number of completions: {node_count:?} {command}"
    );
    assert!(
        variable("JOB_COMPLETION_INDEX").is_none(),
        "Kubernetes sets the index"
    );
    for (name, key) in [
        ("SOFABENCH_USER", "user"),
        ("SOFABENCH_PASSWORD", "password"),
    ] {
        let secret =
            &variable(name).unwrap_or_else(|| panic!("{name}"))["valueFrom"]["secretKeyRef"];
        assert_eq!(secret["name"], "sofabench-credentials");
        assert_eq!(secret["key"], key);
    }
    for flag in [
        "sofabench run",
        "--reuse",
        "--seed=",
        "--out=/results/node-$JOB_COMPLETION_INDEX",
    ] {
        assert!(command.contains(flag), "{flag} in {command}");
    }
    assert!(!command.contains("--cleanup") && !command.contains("--recreate"));
    // Prometheus finds each node's metrics endpoint by the pod's annotations.
    let annotations = &spec["template"]["metadata"]["annotations"];
    assert_eq!(annotations["prometheus.io/scrape"], "true");
    assert_eq!(annotations["prometheus.io/path"], "/metrics");
    let port = annotations["prometheus.io/port"].as_str().unwrap();
    assert!(
        command.contains(&format!("--metrics-listen=0.0.0.0:{port}")),
        "{command}"
    );
    assert_eq!(
        container["ports"][0]["containerPort"].as_u64(),
        port.parse().ok()
    );
    let mount = &container["volumeMounts"][0];
    assert_eq!(mount["mountPath"], "/results");
    let volume = &pod["volumes"][0];
    assert_eq!(volume["name"], mount["name"]);
    let claim = volume["persistentVolumeClaim"]["claimName"]
        .as_str()
        .unwrap();

    // The results volume, and a pod to copy the results from.
    let claims = of_kind(&documents, "PersistentVolumeClaim");
    assert!(claims.iter().any(|c| c["metadata"]["name"] == claim));
    let pods = of_kind(&documents, "Pod");
    assert!(pods.iter().any(|p| {
        p["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"] == claim
            && p["spec"]["containers"][0]["volumeMounts"][0]["mountPath"] == "/results"
    }));
}

#[test]
fn the_command_line_of_the_manifest_is_one_sofabench_accepts() {
    let documents = documents();
    let job = of_kind(&documents, "Job")[0];
    let script = job["spec"]["template"]["spec"]["containers"][0]["args"][0]
        .as_str()
        .unwrap();
    let words: Vec<&str> = script
        .split_whitespace()
        .skip_while(|w| *w != "sofabench")
        .skip(1)
        .collect();
    assert_eq!(words[0], "run");
    // As node 1 of 3, with the database somewhere nothing listens and the results in a
    // folder of ours: the flags parse (bad input would exit 2), and the run fails only
    // because no server answers (exit 1).
    let dir = tempfile::tempdir().unwrap();
    let out = format!("--out={}", dir.path().join("node-1").display());
    let address = format!(
        "--database_address=http://127.0.0.1:{}",
        common::free_port()
    );
    // The metrics endpoint on a free port of this machine's loopback, not 9464 on every
    // interface.
    let listen = format!("--metrics-listen=127.0.0.1:{}", common::free_port());
    let mut args: Vec<&str> = words
        .iter()
        .copied()
        .filter(|w| !w.starts_with("--out=") && !w.starts_with("--metrics-listen="))
        .collect();
    args.extend([address.as_str(), out.as_str(), listen.as_str()]);
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_sofabench"))
        .args(&args)
        .env("JOB_COMPLETION_INDEX", "1")
        .env("SOFABENCH_NODE_COUNT", "3")
        .env("SOFABENCH_USER", "admin")
        .env("SOFABENCH_PASSWORD", "secret")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{args:?}: {stderr}");
    assert!(stderr.contains("127.0.0.1"), "{stderr}");
    assert!(stderr.contains("metrics at http://127.0.0.1:"), "{stderr}");
}
