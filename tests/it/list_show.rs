//! `git swarm list` and `git swarm show`: directives with their effective
//! state, filters, quarantined entries, event counts from the fold, JSON.

use crate::common;

use common::{TestEnv, directive_toml};
use serde_json::Value;

/// A store with four directives of known shape, one quarantined entry and
/// events recorded through the `record` plumbing. The template directives
/// are removed so the listings stay short.
fn store() -> TestEnv {
    let env = TestEnv::initialised();
    for f in common::template_directive_ids() {
        std::fs::remove_file(env.path(&format!(".swarm/directives/{f}.toml"))).expect("rm");
    }
    env.write(
        ".swarm/directives/coder-high.toml",
        r#"id = "coder-high"
lesson = "Never call unwrap() in library code"
rationale = "A panic in a hook aborts the user's commit."
category = "architecture"
priority = "high"
enforcement = "enforce"
applies_to_agents = ["coder"]
paths = ["src/**/*.rs"]
forbidden_actions = ["unwrap() on input"]
verify = ['grep:\.unwrap\(\):src/**/*.rs']
tags = ["errors"]
created_at = 2026-11-01T09:00:00Z
source = "PR #12"
"#,
    );
    env.write(
        ".swarm/directives/reviewer-cargo-low.toml",
        r#"id = "reviewer-cargo-low"
lesson = "Read every lockfile change before approving"
priority = "low"
applies_to_agents = ["reviewer"]
applies_to_tools = ["cargo"]
verification_checks = ["each changed crate is named in the PR"]
"#,
    );
    env.write(
        ".swarm/directives/retired-critical.toml",
        r#"id = "retired-critical"
lesson = "Run the old integration script before merging"
priority = "critical"
status = "retired"
applies_to_agents = ["coder", "reviewer"]
required_actions = ["./old-script.sh"]
"#,
    );
    env.write(
        ".swarm/directives/tool-only.toml",
        r#"id = "tool-only"
lesson = "Format with rustfmt before every commit"
applies_to_tools = ["rustfmt"]
verify = ["tool:cargo fmt --check"]
"#,
    );
    env.swarm(&[
        "add",
        "--id",
        "vague",
        "--lesson",
        "Be more careful with the build",
        "--agents",
        "coder",
    ])
    .code(1);
    let record = |args: &[&str]| {
        let mut all = vec!["record"];
        all.extend_from_slice(args);
        env.swarm(&all).success();
    };
    // One violation: two occasions would escalate it (see tests/it/directive_loop.rs).
    record(&["check", "--directive", "coder-high"]);
    record(&["shown", "--directive", "coder-high", "--role", "coder"]);
    record(&["shown", "--directive", "reviewer-cargo-low"]);
    // One event about two directives.
    record(&[
        "verdict",
        "--field",
        r#"directives=["coder-high","tool-only"]"#,
        "--field",
        "verdict=VERIFIED",
    ]);
    // An event about no directive at all.
    record(&["phase", "--field", "phase=build"]);
    env.swarm(&["validate"]).success();
    env
}

fn json(stdout: &str) -> Value {
    serde_json::from_str(stdout).unwrap_or_else(|e| panic!("not JSON ({e}):\n{stdout}"))
}

fn ids(rows: &Value) -> Vec<&str> {
    rows.as_array()
        .expect("an array")
        .iter()
        .map(|r| r["id"].as_str().expect("id"))
        .collect()
}

#[test]
fn list_shows_every_directive_with_its_event_count() {
    let env = store();
    let run = env.swarm(&["list"]);
    run.success();
    insta::assert_snapshot!(run.snapshot(), @r"
    [exit 0]
    --- stdout
    ID                  PRIORITY  ENFORCEMENT  STATUS   EVENTS  LESSON
    coder-high          high      enforce      active        3  Never call unwrap() in library code
    retired-critical    critical  warn         retired       0  Run the old integration script before merging
    reviewer-cargo-low  low       warn         active        1  Read every lockfile change before approving
    tool-only           medium    warn         active        1  Format with rustfmt before every commit
    ");

    // More events change the counts the next list shows.
    env.swarm(&["record", "ack", "--directive", "tool-only", "--count", "2"])
        .success();
    let run = env.swarm(&["list"]);
    let tool_only = run
        .stdout
        .lines()
        .find(|l| l.starts_with("tool-only "))
        .expect("tool-only listed");
    assert!(tool_only.contains("      3  Format"), "{}", run.snapshot());
}

#[test]
fn list_filters() {
    let env = store();
    let cases: &[(&[&str], &[&str])] = &[
        (&["--role", "coder"], &["coder-high", "retired-critical"]),
        (
            &["--role", "reviewer"],
            &["retired-critical", "reviewer-cargo-low"],
        ),
        (&["--tool", "cargo"], &["reviewer-cargo-low"]),
        (&["--tool", "rustfmt"], &["tool-only"]),
        (&["--status", "retired"], &["retired-critical"]),
        (
            &["--status", "active"],
            &["coder-high", "reviewer-cargo-low", "tool-only"],
        ),
        (&["--priority", "high"], &["coder-high"]),
        (&["--priority", "medium"], &["tool-only"]),
        (&["--role", "coder", "--status", "active"], &["coder-high"]),
        (
            &["--role", "reviewer", "--tool", "cargo"],
            &["reviewer-cargo-low"],
        ),
        (&["--role", "nobody"], &[]),
    ];
    for (filters, expected) in cases {
        let mut args = vec!["list", "--format", "json"];
        args.extend_from_slice(filters);
        let run = env.swarm(&args);
        run.success();
        assert_eq!(
            ids(&json(&run.stdout)),
            *expected,
            "list {filters:?}:\n{}",
            run.snapshot()
        );
        // The text form lists the same ids.
        let mut args = vec!["list"];
        args.extend_from_slice(filters);
        let text = env.swarm(&args);
        text.success();
        let listed: Vec<&str> = text
            .stdout
            .lines()
            .skip(1)
            .filter_map(|l| l.split_whitespace().next())
            .collect();
        if expected.is_empty() {
            assert_eq!(text.stdout, "No directives match.\n");
        } else {
            assert_eq!(listed, *expected, "list {filters:?}:\n{}", text.snapshot());
        }
    }

    // A role no directive is for: a warning with the likeliest role (exit
    // 0, a new role is legitimate); a known role is quiet.
    let run = env.swarm(&["list", "--role", "codr"]);
    run.success();
    assert!(
        run.stderr
            .contains("warning: no directive is for the role `codr`")
            && run.stderr.contains("hint: did you mean `coder`?"),
        "{}",
        run.snapshot()
    );
    assert_eq!(env.swarm(&["list", "--role", "reviewer"]).stderr, "");

    let run = env.swarm(&["list", "--priority", "urgent"]);
    run.code(2);
    assert!(
        run.stderr
            .contains("`urgent` is not one of low, medium, high, critical"),
        "{}",
        run.snapshot()
    );
    let run = env.swarm(&["list", "--status", "paused"]);
    run.code(2);
    assert!(
        run.stderr
            .contains("`paused` is not one of active, retired"),
        "{}",
        run.snapshot()
    );
}

#[test]
fn list_quarantined() {
    let env = store();
    let run = env.swarm(&["list", "--quarantined"]);
    run.success();
    insta::assert_snapshot!(run.snapshot(), @r"
    [exit 0]
    --- stdout
    ID     REASON                       LESSON
    vague  missing_predicate            Be more careful with the build
    ");
    let rows = json(
        &env.swarm(&["list", "--quarantined", "--format", "json"])
            .stdout,
    );
    assert_eq!(ids(&rows), ["vague"]);
    let row = &rows[0];
    assert_eq!(row["state"], "quarantined");
    assert_eq!(row["quarantine_reason"], "missing_predicate");
    assert_eq!(row["path"], ".swarm/quarantine/vague.toml");
    assert_eq!(row["events"], serde_json::json!({ "quarantined": 1 }));
    // Filters apply to quarantined entries too.
    let run = env.swarm(&["list", "--quarantined", "--role", "reviewer"]);
    run.success();
    assert_eq!(run.stdout, "No quarantined entries match.\n");
}

#[test]
fn list_format_json() {
    let env = store();
    let run = env.swarm(&["list", "--format", "json"]);
    run.success();
    assert_eq!(run.stderr, "");
    let rows = json(&run.stdout);
    assert_eq!(
        ids(&rows),
        [
            "coder-high",
            "retired-critical",
            "reviewer-cargo-low",
            "tool-only"
        ]
    );
    let coder = &rows[0];
    assert_eq!(coder["path"], ".swarm/directives/coder-high.toml");
    assert_eq!(coder["state"], "active");
    assert_eq!(
        coder["effective"],
        serde_json::json!({ "priority": "high", "enforcement": "enforce" })
    );
    assert_eq!(
        coder["events"],
        serde_json::json!({ "check": 1, "shown": 1, "verdict": 1 })
    );
    assert!(coder.get("quarantine_reason").is_none(), "{coder}");
    let d = &coder["directive"];
    assert_eq!(d["id"], "coder-high");
    assert_eq!(d["lesson"], "Never call unwrap() in library code");
    assert_eq!(d["category"], "architecture");
    assert_eq!(d["applies_to_agents"], serde_json::json!(["coder"]));
    assert_eq!(
        d["verify"],
        serde_json::json!([r"grep:\.unwrap\(\):src/**/*.rs"])
    );
    assert_eq!(d["created_at"], "2026-11-01T09:00:00Z");
    assert_eq!(d["confidence"], 0.5);

    let retired = &rows[1];
    assert_eq!(retired["state"], "retired");
    assert_eq!(retired["events"], serde_json::json!({}));
    assert_eq!(rows[3]["events"], serde_json::json!({ "verdict": 1 }));
}

#[test]
fn show_text() {
    let env = store();
    let run = env.swarm(&["show", "coder-high"]);
    run.success();
    insta::assert_snapshot!(run.snapshot(), @r"
    [exit 0]
    --- stdout
    id           coder-high
    file         .swarm/directives/coder-high.toml
    state        active
    lesson       Never call unwrap() in library code
    rationale    A panic in a hook aborts the user's commit.
    category     architecture
    priority     high
    enforcement  enforce
    confidence   0.5
    agents       coder
    paths        src/**/*.rs
    forbidden    unwrap() on input
    verify       grep:\.unwrap\(\):src/**/*.rs
    tags         errors
    created_at   2026-11-01T09:00:00Z
    source       PR #12
    events       check 1, shown 1, verdict 1 (total 3, last 2026-11-22T10:00:00.000Z)
    ");

    let run = env.swarm(&["show", "retired-critical"]);
    run.success();
    insta::assert_snapshot!(run.snapshot(), @r"
    [exit 0]
    --- stdout
    id           retired-critical
    file         .swarm/directives/retired-critical.toml
    state        retired
    lesson       Run the old integration script before merging
    category     other
    priority     critical
    enforcement  warn
    confidence   0.5
    agents:
      - coder
      - reviewer
    required     ./old-script.sh
    events       none
    ");
}

#[test]
fn show_format_json() {
    let env = store();
    let run = env.swarm(&["show", "coder-high", "--format", "json"]);
    run.success();
    let v = json(&run.stdout);
    assert_eq!(v["id"], "coder-high");
    assert_eq!(v["state"], "active");
    assert_eq!(v["path"], ".swarm/directives/coder-high.toml");
    assert_eq!(
        v["events"],
        serde_json::json!({ "check": 1, "shown": 1, "verdict": 1 })
    );
    assert_eq!(v["last_event"], "2026-11-22T10:00:00.000Z");
    assert_eq!(v["problems"], serde_json::json!([]));
    assert_eq!(v["quarantine_detail"], Value::Null);
    assert_eq!(v["directive"]["source"], "PR #12");
    assert_eq!(v["effective"]["enforcement"], "enforce");

    // `show` and `list` agree on a directive's row.
    let rows = json(&env.swarm(&["list", "--format", "json"]).stdout);
    for key in ["id", "path", "state", "effective", "events", "directive"] {
        assert_eq!(v[key], rows[0][key], "{key}");
    }

    let v = json(
        &env.swarm(&["show", "retired-critical", "--format", "json"])
            .stdout,
    );
    assert_eq!(v["events"], serde_json::json!({}));
    assert_eq!(v["last_event"], Value::Null);
}

#[test]
fn show_a_quarantined_entry() {
    let env = store();
    let run = env.swarm(&["show", "vague"]);
    run.success();
    insta::assert_snapshot!(run.snapshot(), @r"
    [exit 0]
    --- stdout
    id           vague
    file         .swarm/quarantine/vague.toml
    state        quarantined
    quarantined  missing_predicate
    detail       verify: nothing says what to check (add at least one of `forbidden_actions`, `required_actions`, `verification_checks` or `verify` (flags --forbid, --require, --verification-check, --verify))
    lesson       Be more careful with the build
    category     other
    priority     medium
    enforcement  warn
    confidence   0.5
    agents       coder
    created_at   2026-11-22T10:00:00Z
    events       quarantined 1 (total 1, last 2026-11-22T10:00:00.000Z)
    ");
    let v = json(&env.swarm(&["show", "vague", "--format", "json"]).stdout);
    assert_eq!(v["state"], "quarantined");
    assert_eq!(v["quarantine_reason"], "missing_predicate");
    assert!(
        v["quarantine_detail"]
            .as_str()
            .is_some_and(|d| d.starts_with("verify: nothing says what to check")),
        "{v}"
    );
}

#[test]
fn show_an_unknown_id_exits_2_with_a_hint() {
    let env = store();
    let run = env.swarm(&["show", "no-such-directive"]);
    run.code(2);
    insta::assert_snapshot!(run.snapshot(), @r"
    [exit 2]
    --- stderr
    error: no directive or quarantined entry with id `no-such-directive`
    hint: `git swarm list` shows the ids (add `--quarantined` for quarantined ones)
    ");
    let run = env.swarm(&["show", "no-such-directive", "--format", "json"]);
    run.code(2);
    assert_eq!(run.stdout, "");
    // An id that could name a path outside the store is just unknown.
    env.swarm(&["show", "../config"]).code(2);
}

#[test]
fn list_and_show_need_an_initialised_store() {
    let env = TestEnv::new();
    for args in [&["list"][..], &["show", "x"]] {
        let run = env.swarm(args);
        run.code(2);
        assert!(
            run.stderr
                .starts_with("error: no .swarm/ in $TMP/repo\nhint: run `git swarm init` first\n"),
            "{}",
            run.snapshot()
        );
    }
}

#[test]
fn every_id_list_prints_can_be_shown() {
    let env = store();
    // validate reports the mismatch; list and show must still agree on the id.
    env.write(
        ".swarm/directives/file-name.toml",
        directive_toml("id-inside", "An id that does not match its file name"),
    );
    env.swarm(&["validate"]).code(2);
    let rows = json(&env.swarm(&["list", "--format", "json"]).stdout);
    for id in ids(&rows) {
        let run = env.swarm(&["show", id]);
        assert_eq!(
            run.code,
            0,
            "list prints `{id}`, show refuses it:\n{}",
            run.snapshot()
        );
    }
}

#[test]
fn control_characters_from_files_never_reach_the_terminal() {
    let env = store();
    // A TOML escape puts a raw ESC into the lesson, as a pulled branch could.
    env.write(
        ".swarm/directives/escape.toml",
        "id = \"escape\"\nlesson = \"Looks harmless \\u001b]0;pwned\\u0007 until shown\"\napplies_to_agents = [\"coder\"]\nverify = [\"file_modified:src/**\"]\n",
    );
    env.write(".swarm/events/2026-11.jsonl", "{\"id\":\"e1\",\"ts\":\"2026-11-22T10:00:00Z\",\"kind\":\"note\",\"directive\":\"escape\",\"text\":\"\\u001b[2J\"}\n");
    for args in [&["list"][..], &["show", "escape"], &["log"]] {
        let run = env.swarm(args);
        run.success();
        assert!(
            !run.stdout.contains('\u{1b}') && !run.stderr.contains('\u{1b}'),
            "{args:?} sent a raw ESC:\n{}",
            run.snapshot()
        );
        assert!(
            run.stdout.contains("\\u{1b}"),
            "{args:?} should show the ESC escaped:\n{}",
            run.snapshot()
        );
    }
}
