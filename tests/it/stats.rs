//! `git swarm stats`: a scripted log counted by kind, directive, role,
//! pattern state, check outcome and handoff violation, in text and JSON
//! (snapshots), and in OpenMetrics text read back by the reference parser
//! (Python's `prometheus_client`), hostile label values included.

use crate::common;

use std::io::Write;
use std::process::Stdio;

use common::TestEnv;
use serde_json::{Value, json};

/// A month of the directive loop, written as the commands write it, with
/// hand-picked ids so the snapshots are stable. A directive id and a role
/// holding a quote, a backslash and a newline come from a hostile branch.
const LOG: &str = r#"{"id":"ev-00","ts":"2026-10-01T00:00:00.000Z","kind":"added","directive":"no-private-keys","path":".swarm/directives/no-private-keys.toml"}
{"id":"ev-01","ts":"2026-11-10T09:00:00.000Z","kind":"shown","actor":{"role":"coder"},"directives":["no-private-keys","run-tests-before-handoff"],"shown":[{"id":"no-private-keys","priority":"critical"},{"id":"run-tests-before-handoff","priority":"high"}],"tools":[]}
{"id":"ev-02","ts":"2026-11-10T09:05:00.000Z","kind":"ack","actor":{"role":"coder"},"directive":"no-private-keys","delegation":"ev-01","status":"applied"}
{"id":"ev-03","ts":"2026-11-11T09:00:00.000Z","kind":"shown","actor":{"role":"coder"},"directives":["no-private-keys"],"shown":[{"id":"no-private-keys","priority":"critical"}],"tools":[]}
{"id":"ev-04","ts":"2026-11-11T09:10:00.000Z","kind":"unacknowledged","actor":{"role":"coder"},"directive":"no-private-keys","delegation":"ev-03"}
{"id":"ev-05","ts":"2026-11-11T09:10:00.000Z","kind":"spoofed_ack","delegation":"ev-03","claimed":"lockfile-with-manifest","status":"applied"}
{"id":"ev-06","ts":"2026-11-12T10:00:00.000Z","kind":"check","directive":"run-tests-before-handoff","outcome":"fail","change":"c1","selection":"staged","enforcement":"warn","predicates":[]}
{"id":"ev-07","ts":"2026-11-14T10:00:00.000Z","kind":"check","directive":"run-tests-before-handoff","outcome":"fail","change":"c2","selection":"staged","enforcement":"warn","predicates":[]}
{"id":"ev-08","ts":"2026-11-14T10:00:01.000Z","kind":"escalation","directive":"run-tests-before-handoff","from":null,"to":{"priority":"critical","enforcement":"enforce"},"reason":"r","violations":["ev-06","ev-07"],"episode":"run-tests-before-handoff#1"}
{"id":"ev-09","ts":"2026-11-15T10:00:00.000Z","kind":"deescalation","directive":"run-tests-before-handoff","justification":"fixed the flaky suite","episode":"run-tests-before-handoff#1"}
{"id":"ev-10","ts":"2026-11-16T10:00:00.000Z","kind":"check_passed","directive":"run-tests-before-handoff","change":"c3","selection":"staged","branch":"refs/heads/main"}
{"id":"ev-11","ts":"2026-11-17T10:00:00.000Z","kind":"override","directive":"no-private-keys","phase":"p1","justification":"a test fixture key","blocked":"unacknowledged"}
{"id":"ev-12","ts":"2026-11-18T10:00:00.000Z","kind":"handoff_violation","task":"t1","violation":"scope_creep","path":"src/x.rs","change":"src/x.rs@abc"}
{"id":"ev-13","ts":"2026-11-19T10:00:00.000Z","kind":"shown","actor":{"role":"we\"ird\\role\nx"},"directives":["evil\"id\\x\ny"],"shown":[{"id":"evil\"id\\x\ny","priority":"low"}],"tools":[]}
{"id":"ev-14","ts":"2026-11-19T11:00:00.000Z","kind":"verdict","directive":"evil\"id\\x\ny","phase":"p2","verdict":"violated","reviewer":"violated","machine":"not run","disagreement":false}
{"id":"ev-15","ts":"2026-11-05T10:00:00.000Z","kind":"pattern_observed","pattern":"p-aaa","role":"auditor","text":"never trust a cached token","category":"rule","run":"r1","labels":[],"files":[]}
{"id":"ev-16","ts":"2026-11-20T10:00:00.000Z","kind":"custom_thing","note":"another tool's"}
"#;

fn store() -> TestEnv {
    let env = TestEnv::initialised();
    // Written out of order across two files, with a copy (as a union merge leaves it).
    let (october, november): (Vec<&str>, Vec<&str>) =
        LOG.lines().partition(|l| l.contains("\"2026-10-"));
    let mut nov: Vec<&str> = november.clone();
    nov.reverse();
    nov.push(november[2]);
    env.write(".swarm/events/2026-10.jsonl", october.join("\n") + "\n");
    env.write(".swarm/events/2026-11.jsonl", nov.join("\n") + "\n");
    env
}

#[test]
fn stats_text_and_json() {
    let env = store();
    let run = env.swarm(&["stats"]);
    run.success();
    insta::assert_snapshot!("stats_text", run.snapshot());
    let run = env.swarm(&["stats", "--format", "json", "--since", "2026-11-01"]);
    run.success();
    insta::assert_snapshot!("stats_json_since", run.snapshot());
    let v: Value = serde_json::from_str(&run.stdout).expect("JSON");
    assert_eq!(v["events"], 16, "the October event is outside the window");
    assert_eq!(v["by_kind"].get("added"), None);
    let schema_path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("schema/stats.schema.json");
    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string(schema_path).expect("schema")).expect("JSON");
    let validator = jsonschema::validator_for(&schema).expect("schema compiles");
    let errors: Vec<String> = validator.iter_errors(&v).map(|e| e.to_string()).collect();
    assert!(
        errors.is_empty(),
        "stats JSON against its schema: {errors:?}"
    );
}

/// What `prometheus_client`'s OpenMetrics parser made of the text: each
/// family's name, type and unit, and each sample's name, labels and value.
fn parse_openmetrics(text: &str) -> Option<Value> {
    const SCRIPT: &str = r#"
import json, sys
from prometheus_client.openmetrics.parser import text_string_to_metric_families
out = []
for f in text_string_to_metric_families(sys.stdin.read()):
    out.append({"name": f.name, "type": f.type, "unit": f.unit, "samples": [
        {"name": s.name, "labels": s.labels, "value": s.value} for s in f.samples]})
print(json.dumps(out))
"#;
    let probe = std::process::Command::new("python3")
        .args(["-c", "import prometheus_client.openmetrics.parser"])
        .output();
    if !probe.is_ok_and(|o| o.status.success()) {
        common::skipped(
            "prometheus_client",
            "python3 with prometheus_client is not installed (pip install prometheus_client): the OpenMetrics output was not checked by a parser",
        );
        return None;
    }
    let mut child = std::process::Command::new("python3")
        .args(["-c", SCRIPT])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn python3");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(text.as_bytes())
        .expect("write");
    let out = child.wait_with_output().expect("python3");
    assert!(
        out.status.success(),
        "the OpenMetrics parser refused the output: {}\n{text}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(serde_json::from_slice(&out.stdout).expect("parser output"))
}

/// The value of the sample `name` with exactly `labels`.
#[track_caller]
fn sample(families: &Value, name: &str, labels: Value) -> f64 {
    let found: Vec<f64> = families
        .as_array()
        .expect("families")
        .iter()
        .flat_map(|f| f["samples"].as_array().expect("samples"))
        .filter(|s| s["name"] == name && s["labels"] == labels)
        .map(|s| s["value"].as_f64().expect("a number"))
        .collect();
    assert_eq!(found.len(), 1, "{name} {labels}: {families}");
    found[0]
}

#[test]
fn openmetrics_output_parses_with_the_reference_parser() {
    let env = store();
    let run = env.swarm(&["stats", "--format", "openmetrics"]);
    run.success();
    assert!(run.stdout.ends_with("# EOF\n"), "{}", run.stdout);
    let Some(families) = parse_openmetrics(&run.stdout) else {
        return;
    };
    let family = |name: &str| {
        families
            .as_array()
            .expect("families")
            .iter()
            .find(|f| f["name"] == name)
            .unwrap_or_else(|| panic!("no family {name}"))
            .clone()
    };
    assert_eq!(family("git_swarm_events")["type"], "counter");
    assert_eq!(family("git_swarm_ack_compliance_ratio")["unit"], "ratio");
    assert_eq!(family("git_swarm_window_seconds")["unit"], "seconds");

    assert_eq!(
        sample(
            &families,
            "git_swarm_events_total",
            json!({"kind": "shown"})
        ),
        3.0
    );
    assert_eq!(
        sample(
            &families,
            "git_swarm_events_total",
            json!({"kind": "custom_thing"})
        ),
        1.0
    );
    assert_eq!(
        sample(&families, "git_swarm_events_total", json!({"kind": "ack"})),
        1.0,
        "the copy counts once"
    );
    let directive = |name: &str, id: &str| sample(&families, name, json!({ "directive": id }));
    assert_eq!(
        directive("git_swarm_directive_violations", "run-tests-before-handoff"),
        2.0
    );
    assert_eq!(
        directive(
            "git_swarm_directive_escalations",
            "run-tests-before-handoff"
        ),
        1.0
    );
    assert_eq!(
        directive(
            "git_swarm_directive_deescalations",
            "run-tests-before-handoff"
        ),
        1.0
    );
    assert_eq!(
        directive("git_swarm_directive_escalated", "run-tests-before-handoff"),
        0.0
    );
    assert_eq!(
        directive("git_swarm_directive_violations", "no-private-keys"),
        1.0
    );
    assert_eq!(
        directive("git_swarm_directive_remediations", "no-private-keys"),
        1.0
    );
    assert_eq!(
        directive("git_swarm_directive_overrides_total", "no-private-keys"),
        1.0
    );
    assert_eq!(
        directive("git_swarm_directive_violations", "lockfile-with-manifest"),
        0.0
    );
    // The hostile id has no file in the tree: no series of its own, counted.
    assert_eq!(
        sample(&families, "git_swarm_unknown_directives", json!({})),
        1.0
    );
    assert_eq!(family("git_swarm_directive_violations")["type"], "gauge");
    assert_eq!(family("git_swarm_acks")["type"], "gauge");

    let acks = |role: &str, outcome: &str| {
        sample(
            &families,
            "git_swarm_acks",
            json!({ "role": role, "outcome": outcome }),
        )
    };
    assert_eq!(acks("coder", "applied"), 1.0);
    assert_eq!(acks("coder", "unacknowledged"), 1.0);
    assert_eq!(acks("coder", "unanswered"), 1.0);
    assert_eq!(acks("we\"ird\\role\nx", "unanswered"), 1.0);
    assert_eq!(
        sample(
            &families,
            "git_swarm_delegations_total",
            json!({"role": "coder"})
        ),
        2.0
    );
    assert_eq!(
        sample(
            &families,
            "git_swarm_spoofed_acks_total",
            json!({"role": "coder"})
        ),
        1.0
    );
    let ratio = |role: &str, scope: &str| {
        sample(
            &families,
            "git_swarm_ack_compliance_ratio",
            json!({ "role": role, "scope": scope }),
        )
    };
    assert!((ratio("coder", "all") - 1.0 / 3.0).abs() < 1e-9);
    assert_eq!(ratio("coder", "critical"), 0.5);
    assert_eq!(ratio("we\"ird\\role\nx", "all"), 0.0);

    assert_eq!(
        sample(
            &families,
            "git_swarm_checks_total",
            json!({"outcome": "fail"})
        ),
        2.0
    );
    assert_eq!(
        sample(
            &families,
            "git_swarm_checks_total",
            json!({"outcome": "pass"})
        ),
        1.0
    );
    assert_eq!(
        sample(
            &families,
            "git_swarm_handoff_violations_total",
            json!({"violation": "scope_creep"})
        ),
        1.0
    );
    assert_eq!(
        sample(
            &families,
            "git_swarm_patterns",
            json!({"state": "observed"})
        ),
        1.0
    );
    assert_eq!(
        sample(&families, "git_swarm_patterns", json!({"state": "active"})),
        0.0
    );
    // Four violations over the 52.4 days from the first event to now.
    let days = sample(&families, "git_swarm_window_seconds", json!({})) / 86_400.0;
    assert!((days - (52.0 + 10.0 / 24.0)).abs() < 1e-9, "{days}");
    let per_day = sample(&families, "git_swarm_violations_per_day", json!({}));
    assert!((per_day - 4.0 / days).abs() < 1e-9, "{per_day}");
}

#[test]
fn since_limits_the_counts_to_the_window() {
    let env = store();
    // The counts, checked without any parser.
    let run = env.swarm(&["stats", "--format", "json", "--since", "2026-11-13"]);
    run.success();
    let v: Value = serde_json::from_str(&run.stdout).expect("JSON");
    let d = |id: &str| {
        v["directives"]
            .as_array()
            .expect("directives")
            .iter()
            .find(|d| d["id"] == id)
            .unwrap_or_else(|| panic!("no {id}: {v}"))
            .clone()
    };
    assert_eq!(d("run-tests-before-handoff")["violations"], 1);
    assert_eq!(d("run-tests-before-handoff")["escalations"], 1);
    assert_eq!(d("no-private-keys")["violations"], 0);
    assert_eq!(v["checks"]["failed"], 1);
    let roles: Vec<(&str, &Value)> = v["roles"]
        .as_array()
        .expect("roles")
        .iter()
        .map(|r| (r["role"].as_str().expect("role"), &r["delegations"]))
        .collect();
    assert_eq!(roles, [("we\"ird\\role\nx", &json!(1))]);

    let run = env.swarm(&["stats", "--format", "openmetrics", "--since", "2026-11-13"]);
    run.success();
    // A window's counts slide: every one is a gauge.
    assert!(!run.stdout.contains(" counter\n"), "{}", run.stdout);
    assert!(!run.stdout.contains("_total"), "{}", run.stdout);
    let Some(families) = parse_openmetrics(&run.stdout) else {
        return;
    };
    let directive = |name: &str, id: &str| sample(&families, name, json!({ "directive": id }));
    // Of the two check failures, one is in the window; the episode began in it.
    assert_eq!(
        directive("git_swarm_directive_violations", "run-tests-before-handoff"),
        1.0
    );
    assert_eq!(
        directive(
            "git_swarm_directive_escalations",
            "run-tests-before-handoff"
        ),
        1.0
    );
    assert_eq!(
        directive("git_swarm_directive_violations", "no-private-keys"),
        0.0
    );
    assert_eq!(
        sample(&families, "git_swarm_checks", json!({"outcome": "fail"})),
        1.0
    );
    // Only the hostile role delegated in the window.
    assert_eq!(
        sample(
            &families,
            "git_swarm_delegations",
            json!({"role": "we\"ird\\role\nx"})
        ),
        1.0
    );
    let coder = families
        .as_array()
        .expect("families")
        .iter()
        .flat_map(|f| f["samples"].as_array().expect("samples"))
        .any(|s| s["labels"]["role"] == "coder");
    assert!(!coder, "no delegation to coder in the window");
    let bad = env.swarm(&["stats", "--since", "last tuesday"]);
    bad.code(2);
    assert!(bad.stderr.contains("--since"), "{}", bad.snapshot());
}

/// A ULID is the same id in either case: the fold counts one event, and
/// so must `stats` (the same line, merged once with its id upper-cased).
#[test]
fn a_ulid_in_two_cases_counts_once_as_the_fold_counts_it() {
    let env = TestEnv::initialised();
    let line = |id: &str| {
        format!(
            r#"{{"id":"{id}","ts":"2026-11-12T10:00:00.000Z","kind":"check","directive":"run-tests-before-handoff","outcome":"fail","change":"c1","selection":"staged","enforcement":"warn","predicates":[]}}"#
        )
    };
    env.write(
        ".swarm/events/2026-11.jsonl",
        format!(
            "{}\n{}\n",
            line("01JD0000000000000000000000"),
            line("01jd0000000000000000000000")
        ),
    );
    let run = env.swarm(&["stats", "--format", "json"]);
    run.success();
    let v: Value = serde_json::from_str(&run.stdout).expect("JSON");
    assert_eq!(v["events"], 1, "{}", run.stdout);
    assert_eq!(v["checks"]["failed"], 1, "{}", run.stdout);
    let d = v["directives"]
        .as_array()
        .expect("directives")
        .iter()
        .find(|d| d["id"] == "run-tests-before-handoff")
        .expect("the directive");
    assert_eq!(d["violations"], 1, "{}", run.stdout);
}

/// One hostile line naming thousands of directives, and lines of many
/// unknown kinds, roles and violations, make a bounded number of series.
#[test]
fn hostile_label_values_make_a_bounded_number_of_series() {
    let env = TestEnv::initialised();
    let ids: Vec<String> = (0..5000).map(|i| format!("\"d{i}\"")).collect();
    let mut log = format!(
        r#"{{"id":"h-0","ts":"2026-11-01T00:00:00.000Z","kind":"check","directive":"x","directives":[{}],"outcome":"fail","change":"c","selection":"staged","enforcement":"warn","predicates":[]}}"#,
        ids.join(",")
    ) + "\n";
    for i in 0..200 {
        log += &format!(r#"{{"id":"k-{i}","ts":"2026-11-02T00:00:00.000Z","kind":"kind_{i}"}}"#);
        log += "\n";
        log += &format!(
            r#"{{"id":"s-{i}","ts":"2026-11-02T00:00:00.000Z","kind":"shown","actor":{{"role":"r{i}"}},"directives":[],"shown":[],"tools":[]}}"#
        );
        log += "\n";
        log += &format!(
            r#"{{"id":"v-{i}","ts":"2026-11-02T00:00:00.000Z","kind":"handoff_violation","task":"t","violation":"v{i}","path":"p","change":"c"}}"#
        );
        log += "\n";
    }
    env.write(".swarm/events/2026-11.jsonl", log);
    let run = env.swarm(&["stats", "--format", "openmetrics"]);
    run.success();
    let lines = run.stdout.lines().count();
    assert!(lines < 600, "{lines} lines:\n{}", run.stdout);
    assert!(
        !run.stdout.contains("directive=\"d4999\""),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("git_swarm_unknown_directives 5001\n"),
        "{}",
        run.stdout
    );
    // The rest of the unknown kinds, roles and violations, summed.
    assert!(
        run.stdout
            .contains("git_swarm_events_total{kind=\"_other\"} 180\n"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("git_swarm_delegations_total{role=\"_other\"} 180\n"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("git_swarm_handoff_violations_total{violation=\"_other\"} 180\n"),
        "{}",
        run.stdout
    );
    let _ = parse_openmetrics(&run.stdout);
}
