//! `git swarm reflect micro` and `phase start`: tool calls read from the
//! payloads the harnesses document, classified, and kept as insight
//! candidates when they did not succeed.

use crate::common;

use common::TestEnv;
use serde_json::{Value, json};

/// The labelled corpus: one tool call a line, in the payload format of the
/// harness that made it, with the class and sub-kind it must get.
const CORPUS: &str = include_str!("../fixtures/reflect/calls.jsonl");

fn micro(env: &TestEnv, args: &[&str], env_vars: &[(&str, &str)], payload: &str) -> common::Run {
    let mut all = vec!["reflect", "micro"];
    all.extend_from_slice(args);
    env.swarm_with(&all, env_vars, Some(payload.as_bytes()))
}

fn candidates(env: &TestEnv) -> Vec<Value> {
    if !env.exists(".git/swarm/local/candidates.jsonl") {
        return Vec::new();
    }
    env.read(".git/swarm/local/candidates.jsonl")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a candidate is JSON"))
        .collect()
}

#[test]
fn the_labelled_corpus_is_classified_as_labelled() {
    let env = TestEnv::initialised();
    let (mut agree, mut total, mut misses) = (0, 0, Vec::new());
    let mut harnesses = std::collections::BTreeSet::new();
    for line in CORPUS.lines() {
        let case: Value = serde_json::from_str(line).expect("corpus line");
        let run = micro(
            &env,
            &["--format", "json"],
            &[],
            &case["payload"].to_string(),
        );
        run.success();
        assert_eq!(run.stderr, "", "{}", case["name"]);
        let out: Value = serde_json::from_str(&run.stdout).expect("json output");
        harnesses.insert(out["harness"].as_str().expect("harness").to_owned());
        total += 1;
        if (&out["class"], &out["sub"]) == (&case["class"], &case["sub"]) {
            agree += 1;
        } else {
            misses.push(format!(
                "{}: want {} {}, got {} {}",
                case["name"], case["class"], case["sub"], out["class"], out["sub"]
            ));
            // The existing tool's known false positives must all be right.
            assert_ne!(case["known_false_positive"], true, "{}", misses.join("\n"));
        }
    }
    assert!(total >= 60, "the corpus has {total} calls");
    assert!(
        agree * 100 >= total * 95,
        "{agree}/{total} agree:\n{}",
        misses.join("\n")
    );
    assert_eq!(
        harnesses.into_iter().collect::<Vec<_>>(),
        ["claude", "codex", "gemini", "generic", "opencode"]
    );
}

#[test]
fn a_failure_is_kept_with_its_context_and_a_success_is_not() {
    let env = TestEnv::initialised();
    let failing = json!({
        "session_id": "sess-1",
        "transcript_path": "/home/u/.claude/projects/p/sess-1.jsonl",
        "cwd": "/home/u/proj",
        "hook_event_name": "PostToolUseFailure",
        "tool_name": "Bash",
        "tool_input": {"command": "cargo test", "description": "Run tests"},
        "tool_use_id": "toolu_1",
        "error": "Exit code 101\ntest cache::tests::tenant_key ... FAILED\n\ntest result: FAILED. 9 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out",
        "agent_id": "agent-7",
        "agent_type": "coder",
    });
    let run = micro(&env, &["--phase", "build-1"], &[], &failing.to_string());
    run.success();
    assert_eq!(run.stdout, "failure test\n");
    assert_eq!(run.stderr, "");
    let kept = candidates(&env);
    assert_eq!(kept.len(), 1);
    let c = &kept[0];
    assert_eq!(c["class"], "failure");
    assert_eq!(c["sub"], "test");
    assert_eq!(c["harness"], "claude");
    assert_eq!(c["tool"], "Bash");
    assert_eq!(c["command"], "cargo test");
    assert_eq!(c["role"], "coder");
    // The subagent is the task, before the session.
    assert_eq!(c["task"], "agent-7");
    assert_eq!(c["phase"], "build-1");
    assert_eq!(c["ts"], "2026-11-22T10:00:00.000Z");
    assert_eq!(c["excerpt"], "test cache::tests::tenant_key ... FAILED");
    assert_eq!(
        c["signature"],
        "failure:test:cargo test:test cache::tests::tenant_key ... failed"
    );

    let passing = json!({"tool": "bash", "input": "cargo test", "exit_code": 0,
        "output": "test result: ok. 10 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out"});
    let run = micro(&env, &[], &[], &passing.to_string());
    run.success();
    assert_eq!(run.stdout, "success test\n");
    assert_eq!(candidates(&env).len(), 1, "a success is not kept");
    // Candidates are per clone: nothing of them is tracked.
    assert_eq!(env.git(&["status", "--porcelain"]), "");
}

#[test]
fn the_same_failure_in_two_tasks_has_one_signature() {
    let env = TestEnv::initialised();
    for (session, path) in [
        ("s1", "/home/a/proj/src/cache.rs"),
        ("s2", "/tmp/w2/src/cache.rs"),
    ] {
        let payload = json!({
            "tool": "bash", "input": "cargo build", "exit_code": 101, "session": session,
            "output": format!("error[E0425]: cannot find value `tenant` in this scope\n --> {path}:41:9\nerror: could not compile `app`"),
        });
        micro(&env, &[], &[], &payload.to_string()).success();
    }
    let kept = candidates(&env);
    assert_eq!(kept.len(), 2);
    assert_eq!(kept[0]["task"], "s1");
    assert_eq!(kept[1]["task"], "s2");
    assert_eq!(kept[0]["signature"], kept[1]["signature"]);
}

#[test]
fn the_phase_comes_from_the_flag_then_the_environment_then_phase_start() {
    let env = TestEnv::initialised();
    let failing = json!({"tool": "bash", "input": "make", "output": "make: *** [all] Error 2", "exit_code": 2});
    let payload = failing.to_string();
    micro(&env, &[], &[], &payload).success();
    let run = env.swarm(&["phase", "start", "design"]);
    run.success();
    assert_eq!(run.stdout, "phase design started\n");
    let started = common::of_kind(&env, "phase_started");
    assert_eq!(started.len(), 1);
    assert_eq!(started[0]["phase"], "design");
    micro(&env, &[], &[], &payload).success();
    micro(&env, &[], &[("GIT_SWARM_PHASE", "review")], &payload).success();
    micro(
        &env,
        &["--phase", "ship"],
        &[("GIT_SWARM_PHASE", "review")],
        &payload,
    )
    .success();
    let phases: Vec<Value> = candidates(&env)
        .iter()
        .map(|c| c["phase"].clone())
        .collect();
    assert_eq!(
        phases,
        [Value::Null, json!("design"), json!("review"), json!("ship")]
    );

    env.swarm(&["phase", "start", "not a phase"]).code(2);
}

#[test]
fn bad_input_warns_once_exits_0_and_records_nothing() {
    let env = TestEnv::initialised();
    for (args, payload) in [
        (&[][..], "not json"),
        (&[], "[1, 2]"),
        (&[], r#"{"hello": "world"}"#),
        (&[], r#"{"hook_event_name": "PostToolUse", "tool_name": 7}"#),
        (&["--payload", "opencode"], r#"{"tool_name": "Bash"}"#),
        (
            &["--phase", "no spaces"],
            r#"{"tool": "bash", "exit_code": 1}"#,
        ),
        (
            &["--role", "Not-A-Role"],
            r#"{"tool": "bash", "exit_code": 1}"#,
        ),
        (
            &["--payload", "cursor"],
            r#"{"tool": "bash", "exit_code": 1}"#,
        ),
    ] {
        let run = micro(&env, args, &[], payload);
        assert_eq!(run.code, 0, "{args:?} {payload}:\n{}", run.snapshot());
        assert_eq!(run.stdout, "", "{payload}");
        assert_eq!(
            run.stderr.lines().count(),
            1,
            "{args:?} {payload}:\n{}",
            run.stderr
        );
        assert!(
            run.stderr.starts_with("warning: reflect micro: "),
            "{}",
            run.stderr
        );
        assert!(
            run.stderr.ends_with("; nothing recorded\n"),
            "{}",
            run.stderr
        );
    }
    assert!(candidates(&env).is_empty());
}

#[test]
fn outside_a_repository_a_success_is_read_and_a_failure_is_only_warned_about() {
    let env = TestEnv::new();
    let outside = env.tmp.path().join("elsewhere");
    std::fs::create_dir_all(&outside).expect("mkdir");
    let run_in = |payload: &str| {
        let mut cmd = env.command(common::bin(), &outside);
        cmd.args(["reflect", "micro"])
            .stdin(std::process::Stdio::piped());
        let mut child = cmd
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("spawn");
        use std::io::Write;
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(payload.as_bytes())
            .expect("write");
        child.wait_with_output().expect("wait")
    };
    let ok = run_in(r#"{"tool": "bash", "input": "ls", "output": "a", "exit_code": 0}"#);
    assert_eq!(ok.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&ok.stdout), "success command\n");
    let failed = run_in(r#"{"tool": "bash", "input": "ls x", "output": "no", "exit_code": 2}"#);
    assert_eq!(failed.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&failed.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("not a git repository"), "{stderr}");
}

#[cfg(unix)]
#[test]
fn a_linked_candidates_file_is_not_written_through() {
    let env = TestEnv::initialised();
    let target = env.tmp.path().join("outside.txt");
    std::fs::write(&target, "").expect("write");
    std::fs::create_dir_all(env.path(".git/swarm/local")).expect("mkdir");
    std::os::unix::fs::symlink(&target, env.path(".git/swarm/local/candidates.jsonl"))
        .expect("link");
    let run = micro(
        &env,
        &[],
        &[],
        r#"{"tool": "bash", "input": "make", "exit_code": 2}"#,
    );
    run.success();
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    assert!(run.stderr.contains("not a regular file"), "{}", run.stderr);
    assert_eq!(std::fs::read_to_string(&target).expect("read"), "");
}

/// A Claude Code `PostToolUseFailure` of `command` in `session`, by `role`,
/// each a tool call of its own.
fn failure(session: &str, role: Option<&str>, command: &str, output: &str) -> String {
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut p = json!({
        "session_id": session,
        "transcript_path": format!("/home/u/.claude/projects/p/{session}.jsonl"),
        "cwd": "/home/u/proj",
        "hook_event_name": "PostToolUseFailure",
        "tool_name": "Bash",
        "tool_input": {"command": command, "description": "Run it"},
        "tool_use_id": format!("toolu_{session}_{n}"),
        "error": format!("Exit code 101\n{output}"),
    });
    if let Some(role) = role {
        p["agent_id"] = json!(format!("{session}-agent"));
        p["agent_type"] = json!(role);
    }
    p.to_string()
}

const TENANT_FAILS: &str = "test cache::tests::tenant_key ... FAILED\n\ntest result: FAILED. 9 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out";

fn meso(env: &TestEnv, phase: &str) -> Value {
    let run = env.swarm(&["reflect", "meso", "--phase", phase, "--format", "json"]);
    run.success();
    serde_json::from_str(&run.stdout).expect("meso json")
}

#[test]
fn two_tasks_failing_the_same_way_make_one_lesson() {
    let env = common::repo_without_directives();
    for session in ["s1", "s2", "s3"] {
        let p = failure(session, Some("coder"), "cargo test", TENANT_FAILS);
        micro(&env, &["--phase", "p1"], &[], &p).success();
    }
    // Another phase's candidate stays.
    micro(
        &env,
        &["--phase", "p2"],
        &[],
        &failure("s9", None, "cargo test", TENANT_FAILS),
    )
    .success();
    let report = meso(&env, "p1");
    let groups = report["groups"].as_array().expect("groups");
    assert_eq!(groups.len(), 1, "{report:#}");
    assert_eq!(groups[0]["outcome"], "added");
    assert_eq!(
        groups[0]["tasks"],
        json!(["s1-agent", "s2-agent", "s3-agent"])
    );
    let id = groups[0]["id"].as_str().expect("id");
    assert!(id.starts_with("reflect-test-"), "{id}");
    let file = env.read(&format!(".swarm/directives/{id}.toml"));
    let d: toml::Value = toml::from_str(&file).expect("toml");
    assert_eq!(
        d["applies_to_agents"],
        toml::Value::Array(vec!["coder".into()])
    );
    assert_eq!(
        d["applies_to_tools"],
        toml::Value::Array(vec!["bash".into()])
    );
    assert_eq!(
        d["verify"],
        toml::Value::Array(vec!["tool:cargo test".into()])
    );
    assert_eq!(d["category"].as_str(), Some("testing"));
    let lesson = d["lesson"].as_str().expect("lesson");
    assert!(
        lesson.starts_with(
            "Run `cargo test` before handing off: it failed the same way in 3 tasks of phase p1"
        ),
        "{lesson}"
    );
    env.swarm(&["validate"]).success();
    // Used candidates are gone; the other phase's is kept.
    let left = candidates(&env);
    assert_eq!(left.len(), 1);
    assert_eq!(left[0]["phase"], "p2");
    let reflected = common::of_kind(&env, "reflected");
    assert_eq!(reflected.len(), 1);
    assert_eq!(reflected[0]["directive"], id);
    assert_eq!(reflected[0]["outcome"], "added");
    assert_eq!(reflected[0]["candidates"].as_array().map(Vec::len), Some(3));
    assert_eq!(common::of_kind(&env, "added").len(), 1);
    // Nothing left to fold.
    let again = meso(&env, "p1");
    assert_eq!(again["groups"], json!([]));
}

#[test]
fn a_failure_of_one_task_waits_and_one_a_directive_covers_makes_none() {
    let env = common::repo_without_directives();
    common::directive(
        &env,
        "tests-pass",
        "lesson = \"Run the test suite before handing work off\"\napplies_to_agents = [\"coder\"]\nverify = [\"tool:cargo test\"]",
    );
    micro(
        &env,
        &["--phase", "p1"],
        &[],
        &failure("s1", Some("coder"), "cargo test", TENANT_FAILS),
    )
    .success();
    micro(
        &env,
        &["--phase", "p1"],
        &[],
        &failure("s2", Some("coder"), "cargo test", TENANT_FAILS),
    )
    .success();
    micro(
        &env,
        &["--phase", "p1"],
        &[],
        &failure("s1", Some("coder"), "make lint", "make: *** [lint] Error 1"),
    )
    .success();
    let report = meso(&env, "p1");
    let outcomes: Vec<(&str, &str)> = report["groups"]
        .as_array()
        .expect("groups")
        .iter()
        .map(|g| {
            (
                g["outcome"].as_str().unwrap_or(""),
                g["by"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        outcomes,
        [("waiting", ""), ("covered", "tests-pass")],
        "{report:#}"
    );
    assert!(!env.exists(".swarm/directives/reflect"), "no lesson file");
    let left = candidates(&env);
    assert_eq!(left.len(), 1, "the single task's candidate waits");
    assert_eq!(left[0]["command"], "make lint");
    let run = env.swarm(&["reflect", "meso", "--phase", "p1"]);
    run.success();
    assert_eq!(
        run.stdout,
        "waiting for a second task: failure:lint:make lint:make: *** [lint] error #, 1 candidate in 1 task\n"
    );
}

#[test]
fn an_unscopable_lesson_is_quarantined_with_its_reason() {
    let env = common::repo_without_directives();
    for session in ["s1", "s2"] {
        let payload = json!({"tool": "Deploy-Tool", "input": {"target": "prod"}, "session": session,
            "error": "deploy refused: the release is not signed"});
        micro(&env, &["--phase", "ship"], &[], &payload.to_string()).success();
    }
    let report = meso(&env, "ship");
    let g = &report["groups"][0];
    assert_eq!(g["outcome"], "quarantined", "{report:#}");
    assert_eq!(g["reason"], "missing_scope");
    let path = g["path"].as_str().expect("path");
    assert!(
        path.starts_with(".swarm/quarantine/reflect-call-"),
        "{path}"
    );
    assert!(
        env.read(path)
            .contains("quarantine_reason = \"missing_scope\"")
    );
    assert_eq!(common::of_kind(&env, "quarantined").len(), 1);
    assert!(
        candidates(&env).is_empty(),
        "consumed: the lesson is kept in quarantine"
    );
}

#[cfg(unix)]
#[test]
fn a_run_stopped_before_consuming_is_finished_by_the_next_without_a_duplicate() {
    let env = common::repo_without_directives();
    for session in ["s1", "s2"] {
        micro(
            &env,
            &["--phase", "p1"],
            &[],
            &failure(session, Some("coder"), "cargo test", TENANT_FAILS),
        )
        .success();
    }
    // The candidates' lock cannot be taken: the run writes its lesson and
    // records it, then stops before it consumes the candidates.
    std::fs::remove_file(env.path(".git/swarm/local/candidates.lock")).expect("rm lock");
    common::mkfifo(&env.path(".git/swarm/local/candidates.lock"));
    let run = env.swarm(&["reflect", "meso", "--phase", "p1"]);
    assert_ne!(run.code, 0, "{}", run.snapshot());
    assert!(run.stderr.contains("candidates.lock"), "{}", run.stderr);
    let written: Vec<_> = std::fs::read_dir(env.path(".swarm/directives"))
        .expect("directives")
        .collect();
    assert_eq!(written.len(), 1);
    assert_eq!(candidates(&env).len(), 2, "nothing lost");

    std::fs::remove_file(env.path(".git/swarm/local/candidates.lock")).expect("rm fifo");
    let report = meso(&env, "p1");
    assert_eq!(report["groups"][0]["outcome"], "existing", "{report:#}");
    let written: Vec<_> = std::fs::read_dir(env.path(".swarm/directives"))
        .expect("directives")
        .collect();
    assert_eq!(written.len(), 1, "no duplicate");
    assert!(candidates(&env).is_empty());
    assert_eq!(common::of_kind(&env, "added").len(), 1);
}

#[test]
fn a_malformed_candidate_line_is_reported_with_its_line_and_kept() {
    let env = common::repo_without_directives();
    for session in ["s1", "s2"] {
        micro(
            &env,
            &["--phase", "p1"],
            &[],
            &failure(session, Some("coder"), "cargo test", TENANT_FAILS),
        )
        .success();
    }
    let path = env.path(".git/swarm/local/candidates.jsonl");
    let mut text = std::fs::read_to_string(&path).expect("candidates");
    text.insert_str(0, "not a candidate\n");
    std::fs::write(&path, text).expect("write");
    let run = env.swarm(&["reflect", "meso", "--phase", "p1"]);
    run.success();
    assert!(
        run.stderr
            .starts_with(".git/swarm/local/candidates.jsonl:1: error: not a candidate"),
        "{}",
        run.stderr
    );
    assert!(
        run.stdout.starts_with("added reflect-test-"),
        "{}",
        run.stdout
    );
    // The two used candidates are consumed; the bad line stays for a person to see.
    assert_eq!(
        env.read(".git/swarm/local/candidates.jsonl"),
        "not a candidate\n"
    );
}

#[test]
fn candidates_older_than_thirty_days_are_dropped_and_said_to_be() {
    let env = common::repo_without_directives();
    // Of no phase, and of a single task: neither would ever be folded.
    let old = [("GIT_SWARM_NOW", "2026-10-01T10:00:00Z")];
    micro(
        &env,
        &[],
        &old,
        &failure("s1", None, "make lint", "make: *** [lint] Error 1"),
    )
    .success();
    micro(
        &env,
        &["--phase", "p1"],
        &old,
        &failure("s1", Some("coder"), "cargo test", TENANT_FAILS),
    )
    .success();
    let recent = [("GIT_SWARM_NOW", "2026-11-01T10:00:00Z")];
    micro(
        &env,
        &[],
        &recent,
        &failure("s2", None, "make lint", "make: *** [lint] Error 1"),
    )
    .success();
    assert_eq!(candidates(&env).len(), 3);
    let run = env.swarm(&["reflect", "meso", "--phase", "p1"]);
    run.success();
    assert_eq!(
        run.stdout,
        "no insight candidates in phase p1\ndropped 2 insight candidate(s) older than 30 days, of any phase, never folded\n"
    );
    let left = candidates(&env);
    assert_eq!(left.len(), 1, "{left:?}");
    assert_eq!(left[0]["ts"], "2026-11-01T10:00:00.000Z");
}

#[test]
fn a_tool_call_reported_twice_is_kept_once() {
    let env = TestEnv::initialised();
    let claude = json!({
        "session_id": "sess-1",
        "hook_event_name": "PostToolUseFailure",
        "tool_name": "Bash",
        "tool_input": {"command": "cargo test"},
        "tool_use_id": "toolu_1",
        "error": format!("Exit code 101\n{TENANT_FAILS}"),
    });
    let opencode = json!({"tool": "bash", "sessionID": "ses_1", "callID": "call_1",
        "args": {"command": "make"}, "output": {"title": "make", "output": "make: *** [all] Error 2\n",
        "metadata": {"exit": 2}}});
    // A harness may run the hook twice for one call (Cursor loading Claude
    // Code's hooks beside its own).
    for payload in [&claude, &claude, &opencode, &opencode] {
        micro(&env, &[], &[], &payload.to_string()).success();
    }
    let ids = |env: &TestEnv| -> Vec<Value> {
        candidates(env)
            .iter()
            .map(|c| c["call_id"].clone())
            .collect()
    };
    assert_eq!(ids(&env), [json!("toolu_1"), json!("call_1")]);
    // The duplicate is read and classified like any call, only not kept again.
    let run = micro(&env, &["--format", "json"], &[], &claude.to_string());
    let out: Value = serde_json::from_str(&run.stdout).expect("json");
    assert_eq!(
        (&out["class"], &out["recorded"]),
        (&json!("failure"), &Value::Null)
    );

    // Another call of the same command is another candidate.
    let mut other = claude.clone();
    other["tool_use_id"] = json!("toolu_2");
    micro(&env, &[], &[], &other.to_string()).success();
    assert_eq!(ids(&env).len(), 3);
    // Without a call id or a task there is nothing to tell a repeat by:
    // kept each time.
    let plain = json!({"tool": "bash", "input": "make", "exit_code": 2});
    micro(&env, &[], &[], &plain.to_string()).success();
    micro(&env, &[], &[], &plain.to_string()).success();
    assert_eq!(
        ids(&env),
        [
            json!("toolu_1"),
            json!("call_1"),
            json!("toolu_2"),
            Value::Null,
            Value::Null
        ]
    );
}

/// The same call id in two sessions is two calls: a provider may number
/// its calls afresh each session (issue 38).
#[test]
fn the_same_call_id_in_another_session_is_another_candidate() {
    let env = TestEnv::initialised();
    let call = |session: &str| {
        json!({"tool": "bash", "sessionID": session, "callID": "call_1",
            "args": {"command": "make"}, "output": {"title": "make",
            "output": "make: *** [all] Error 2\n", "metadata": {"exit": 2}}})
        .to_string()
    };
    for payload in [call("ses_1"), call("ses_2"), call("ses_2")] {
        micro(&env, &[], &[], &payload).success();
    }
    let kept: Vec<(Value, Value)> = candidates(&env)
        .iter()
        .map(|c| (c["session"].clone(), c["call_id"].clone()))
        .collect();
    assert_eq!(
        kept,
        [
            (json!("ses_1"), json!("call_1")),
            (json!("ses_2"), json!("call_1"))
        ]
    );
}

/// What a call's own words say when its exit code does not (issue 38): a
/// test run reporting failures failed whatever its exit code, a hook's
/// refusal of an edit is `blocked`, a run that skipped every test ran
/// nothing, and a subagent's report of its own task is a signal.
#[test]
fn failures_the_exit_code_hides_are_read_from_the_call() {
    let env = TestEnv::initialised();
    let cases = [
        (
            json!({"tool": "bash", "input": "cargo test 2>&1 | tail -3", "exit_code": 0,
                "output": "test parse::tests::tokens ... FAILED\ntest result: FAILED. 40 passed; 2 failed; 0 ignored"}),
            ("failure", "test", "test parse::tests::tokens ... FAILED"),
        ),
        (
            json!({"tool": "edit", "input": {"file_path": "src/a.rs"},
                "output": "Permission denied: the edit was blocked by a PreToolUse hook"}),
            (
                "blocked",
                "write",
                "Permission denied: the edit was blocked by a PreToolUse hook",
            ),
        ),
        (
            json!({"tool": "bash", "input": "pytest", "exit_code": 0,
                "output": "sss\n========== 3 skipped in 0.02s =========="}),
            (
                "skipped",
                "test",
                "========== 3 skipped in 0.02s ==========",
            ),
        ),
        (
            json!({"tool": "Agent", "input": "fix the parser",
                "output": "I reverted the change after it broke the build.\nThe parser is as it was."}),
            (
                "partial",
                "delegate",
                "I reverted the change after it broke the build.",
            ),
        ),
        (
            json!({"tool": "Agent", "input": "fix the parser",
                "output": "Ran out of context before finishing: the tokenizer is half done."}),
            (
                "failure",
                "delegate",
                "Ran out of context before finishing: the tokenizer is half done.",
            ),
        ),
    ];
    for (payload, (class, sub, evidence)) in &cases {
        let run = micro(&env, &["--format", "json"], &[], &payload.to_string());
        run.success();
        let out: Value = serde_json::from_str(&run.stdout).expect("json");
        assert_eq!(
            (&out["class"], &out["sub"], &out["evidence"]),
            (&json!(class), &json!(sub), &json!(evidence)),
            "{payload}"
        );
    }
    // A subagent that reports its work done is a success, and not kept.
    let done = json!({"tool": "Agent", "input": "fix the parser",
        "output": "Fixed the tokenizer; the regression test passes."});
    let run = micro(&env, &["--format", "json"], &[], &done.to_string());
    let out: Value = serde_json::from_str(&run.stdout).expect("json");
    assert_eq!(out["class"], "success");
    assert_eq!(candidates(&env).len(), cases.len());
}

/// Gemini CLI 0.61.0 writes a shell call killed by its time limit or by
/// the user in place of the output, with no exit code: it did not really
/// run (`skipped`), as docs/reflect.md says. The payload is the captured
/// failing call with the text Gemini writes for a cancelled one
/// (`packages/core/src/tools/shell.ts`).
#[test]
fn a_gemini_shell_call_cancelled_by_its_time_limit_is_skipped() {
    let env = TestEnv::initialised();
    let captured =
        include_str!("../fixtures/agents/captured/gemini-0.61.0/post-tool-use-failing.json");
    for said in [
        "Command was automatically cancelled because it exceeded the timeout of 5.0 minutes without output. There was no output before it was cancelled.",
        "Command was cancelled by user before it could complete. Below is the output before it was cancelled:\nrunning 3 tests",
    ] {
        let mut payload: Value = serde_json::from_str(captured).expect("captured payload");
        payload["tool_response"]["llmContent"] = json!(said);
        payload["tool_response"]["returnDisplay"] = json!(said);
        let run = micro(&env, &["--format", "json"], &[], &payload.to_string());
        let out: Value = serde_json::from_str(&run.stdout).expect("json");
        assert_eq!(
            (&out["class"], &out["evidence"]),
            (&json!("skipped"), &json!("interrupted")),
            "{said}"
        );
    }
}

/// Gemini CLI gives no call id: the same call failing the same way again in
/// one session is kept once (it taught what it had to the first time), a
/// different failure, or the same one in another session, again (issue 38).
#[test]
fn a_gemini_call_repeated_in_a_session_is_kept_once() {
    let env = TestEnv::initialised();
    let captured: Value = serde_json::from_str(include_str!(
        "../fixtures/agents/captured/gemini-0.61.0/post-tool-use-failing.json"
    ))
    .expect("captured payload");
    for _ in 0..21 {
        micro(&env, &[], &[], &captured.to_string()).success();
    }
    assert_eq!(candidates(&env).len(), 1, "{:#?}", candidates(&env));
    let mut other = captured.clone();
    other["tool_response"]["llmContent"] = json!(
        "<untrusted_context>\nOutput: error: gs38 link failed\nExit Code: 3\n</untrusted_context>"
    );
    micro(&env, &[], &[], &other.to_string()).success();
    let mut elsewhere = captured.clone();
    elsewhere["session_id"] = json!("another-session");
    micro(&env, &[], &[], &elsewhere.to_string()).success();
    assert_eq!(candidates(&env).len(), 3, "{:#?}", candidates(&env));
}

/// Gemini CLI 0.61.0 reports a command killed by a signal with a `Signal:
/// N` line and no exit code (as the real-harness suite saw for `sh -c 'kill
/// -9 $$'`): a failure, as exit 128 + N would be.
#[test]
fn a_gemini_shell_call_killed_by_a_signal_is_a_failure() {
    let env = TestEnv::initialised();
    let mut payload: Value = serde_json::from_str(include_str!(
        "../fixtures/agents/captured/gemini-0.61.0/post-tool-use-failing.json"
    ))
    .expect("captured payload");
    let said = "<untrusted_context>\nOutput: (empty)\nSignal: 9\nProcess Group PGID: 10902\n</untrusted_context>";
    payload["tool_input"]["command"] = json!("sh -c 'kill -9 $$'");
    payload["tool_response"]["llmContent"] = json!(said);
    let run = micro(&env, &["--format", "json"], &[], &payload.to_string());
    let out: Value = serde_json::from_str(&run.stdout).expect("json");
    assert_eq!(
        (&out["class"], &out["evidence"]),
        (&json!("failure"), &json!("Signal: 9"))
    );
}

/// Gemini CLI's AfterTool of a failing shell call (its `Exit Code:` line
/// read from the output): the line that failed is the evidence, even after
/// a blank line.
#[test]
fn a_gemini_failure_after_a_blank_line_keeps_the_failing_line() {
    let env = TestEnv::initialised();
    let payload = serde_json::json!({
        "session_id": "g1", "cwd": env.root, "hook_event_name": "AfterTool",
        "tool_name": "run_shell_command", "tool_input": {"command": "make"},
        "tool_response": {"llmContent": "Output: building\n\nerror: boom\nExit Code: 2\nProcess Group PGID: 7"},
    });
    let run = env.swarm_with(
        &["hook", "agent", "gemini", "post-tool-use"],
        &[],
        Some(payload.to_string().as_bytes()),
    );
    run.success();
    assert_eq!((run.stdout.as_str(), run.stderr.as_str()), ("", ""));
    let kept = candidates(&env);
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(kept[0]["class"], "failure");
    assert_eq!(kept[0]["excerpt"], "error: boom");
    assert_eq!(kept[0]["signature"], "failure:build:make:error: boom");
}
