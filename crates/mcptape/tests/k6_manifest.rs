//! deploy/k6-operator: the TestRun manifest checked field by field against the
//! k6-operator `k6.io/v1alpha1` schema (TestRunSpec, Pod, K6Script; kubectl is not
//! installed here, the YAML is read with PyYAML from the peers' venv), and its k6
//! arguments run by the real k6 as one runner pod would run them.

use crate::k6_support as k6s;

use std::process::Command;
use std::time::Duration;

use k6s::*;
use serde_json::Value;

/// The fields of k6-operator's `TestRunSpec` (api/v1alpha1/testrun_types.go).
const TESTRUN_SPEC_FIELDS: [&str; 15] = [
    "script",
    "parallelism",
    "separate",
    "arguments",
    "ports",
    "initializer",
    "starter",
    "runner",
    "quiet",
    "paused",
    "scuttle",
    "cleanup",
    "cloud",
    "testRunId",
    "token",
];
/// The fields of k6-operator's `Pod` (runner, starter, initializer).
const POD_FIELDS: [&str; 23] = [
    "disabled",
    "affinity",
    "automountServiceAccountToken",
    "env",
    "image",
    "imagePullSecrets",
    "imagePullPolicy",
    "metadata",
    "nodeSelector",
    "tolerations",
    "topologySpreadConstraints",
    "resources",
    "serviceAccountName",
    "securityContext",
    "containerSecurityContext",
    "envFrom",
    "readinessProbe",
    "livenessProbe",
    "initContainers",
    "volumes",
    "volumeMounts",
    "priorityClassName",
    "schedulerName",
];

/// Every YAML document of `deploy/k6-operator/NAME`, as JSON (PyYAML `safe_load_all`).
fn docs(name: &str) -> Vec<Value> {
    let p = peers();
    let path = repo_root().join("deploy/k6-operator").join(name);
    let (o, _) = run_bounded(
        Command::new(&p.python).args([
            "-c",
            "import json, sys, yaml; print(json.dumps(list(yaml.safe_load_all(open(sys.argv[1])))))",
        ]).arg(&path),
        Duration::from_secs(30),
    );
    assert!(
        o.status.success(),
        "PyYAML on {}: {} (run scripts/install-peers.sh)",
        path.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap()
}

fn keys(v: &Value) -> Vec<&str> {
    v.as_object().unwrap().keys().map(String::as_str).collect()
}

fn is_dns1123(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 63
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

struct Manifest {
    pvc: Value,
    testrun: Value,
}

fn manifest() -> Manifest {
    let d = docs("testrun.yaml");
    assert_eq!(d.len(), 2, "a PersistentVolumeClaim and a TestRun");
    let find = |kind: &str| d.iter().find(|x| x["kind"] == kind).cloned().unwrap();
    Manifest {
        pvc: find("PersistentVolumeClaim"),
        testrun: find("TestRun"),
    }
}

/// The `json=PATH` of `--out` in the TestRun's `arguments`.
fn json_out_path(args: &str) -> String {
    let tokens: Vec<&str> = args.split_whitespace().collect();
    let i = tokens
        .iter()
        .position(|t| *t == "--out")
        .expect("--out in arguments");
    tokens[i + 1]
        .strip_prefix("json=")
        .expect("--out json=PATH")
        .to_owned()
}

#[test]
fn testrun_fields_match_the_k6_operator_v1alpha1_schema() {
    let Manifest { pvc, testrun: t } = manifest();
    assert_eq!(t["apiVersion"], "k6.io/v1alpha1");
    assert!(is_dns1123(t["metadata"]["name"].as_str().unwrap()));
    let spec = &t["spec"];
    for k in keys(spec) {
        assert!(
            TESTRUN_SPEC_FIELDS.contains(&k),
            "unknown TestRunSpec field {k}"
        );
    }
    // Required: script and parallelism (an int32 >= 1).
    let n = spec["parallelism"]
        .as_i64()
        .expect("parallelism is an integer");
    assert!((1..=i64::from(i32::MAX)).contains(&n));
    // Exactly one script source; a ConfigMap takes a file name without a path.
    let script = &spec["script"];
    assert_eq!(keys(script), ["configMap"]);
    let cm = &script["configMap"];
    for k in keys(cm) {
        assert!(
            ["name", "file"].contains(&k),
            "unknown K6Configmap field {k}"
        );
    }
    assert!(is_dns1123(cm["name"].as_str().unwrap()));
    let file = cm["file"].as_str().unwrap();
    assert!(file.ends_with(".js") && !file.contains('/'), "{file}");

    let runner = &spec["runner"];
    for k in keys(runner) {
        assert!(POD_FIELDS.contains(&k), "unknown Pod field {k}");
    }
    let env = runner["env"].as_array().unwrap();
    let var = |name: &str| {
        env.iter()
            .find(|e| e["name"] == name)
            .unwrap_or_else(|| panic!("env {name}"))
    };
    assert!(
        var("MCP_URL")["value"]
            .as_str()
            .unwrap()
            .starts_with("http")
    );
    assert_eq!(
        var("POD_NAME")["valueFrom"]["fieldRef"]["fieldPath"],
        "metadata.name"
    );

    // One output per pod, on a mounted volume backed by the manifest's own claim.
    let args = spec["arguments"].as_str().unwrap();
    let out = json_out_path(args);
    assert!(
        out.contains("$(POD_NAME)"),
        "{out}: every pod would write the same file"
    );
    let mounts = runner["volumeMounts"].as_array().unwrap();
    let mount = mounts
        .iter()
        .find(|m| out.starts_with(&format!("{}/", m["mountPath"].as_str().unwrap())))
        .unwrap_or_else(|| panic!("{out} is on no volumeMount"));
    let vol = runner["volumes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == mount["name"])
        .expect("the mount's volume");
    assert_eq!(
        vol["persistentVolumeClaim"]["claimName"],
        pvc["metadata"]["name"]
    );
    assert!(
        pvc["spec"]["accessModes"]
            .as_array()
            .unwrap()
            .contains(&Value::from("ReadWriteMany")),
        "all pods write at once"
    );
    // The operator adds the execution segments; --vus/--iterations/--duration would
    // replace the script's open-model scenarios.
    for flag in [
        "--execution-segment",
        "--vus",
        "--iterations",
        "--duration",
        "-u",
        "-i",
        "-d",
    ] {
        assert!(
            !args.split_whitespace().any(|t| t == flag),
            "{flag} in arguments"
        );
    }

    // The collecting pod mounts the same claim.
    let c = docs("collect.yaml");
    assert_eq!(c.len(), 1);
    assert_eq!(
        c[0]["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"],
        pvc["metadata"]["name"]
    );
}

#[test]
fn testrun_arguments_run_in_real_k6_as_one_runner_pod_and_import() {
    let Manifest { testrun: t, .. } = manifest();
    let dir = tempfile::tempdir().unwrap();
    // As Kubernetes expands $(POD_NAME), with the volume mounted at the temp dir.
    let args = t["spec"]["arguments"]
        .as_str()
        .unwrap()
        .replace("$(POD_NAME)", "mcptape-reads-1-abcde")
        .replace("/results/", &format!("{}/", dir.path().display()));
    let (_serve, port) = serve_http("everything-http.jsonl", "fixed:1ms");
    let script = dir.path().join("script.js");
    export(
        "everything-http.jsonl",
        &script,
        &["--rate", "10/s", "--turn-rate", "2/s", "--duration", "2s"],
    );
    let mut all: Vec<&str> = args.split_whitespace().collect();
    // What k6-operator adds for runner 1 of parallelism 2.
    all.extend([
        "--execution-segment",
        "0:1/2",
        "--execution-segment-sequence",
        "0,1/2,1",
    ]);
    let o = run_k6(&mut k6_run(
        &script,
        &format!("http://127.0.0.1:{port}/mcp"),
        &all,
    ));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = dir.path().join("mcptape-reads-1-abcde.json.gz");
    let raw = std::fs::read(&out).unwrap();
    assert_eq!(&raw[..2], &[0x1f, 0x8b], "k6 wrote gzip for .json.gz");
    let r = import(&[out], &dir.path().join("report"));
    assert!(r["single"]["count"].as_u64().unwrap() > 0);
}
