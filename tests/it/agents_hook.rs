//! `git-swarm-agent-hook <harness> <event>` (and `git-swarm hook agent`,
//! the same hook in the whole binary): the real binary played by a fake
//! harness against a temporary repository. Payloads come from
//! `tests/fixtures/agents/` (see its README for their sources).

use crate::common;

use std::path::Path;
use std::process::Stdio;

use common::{Run, TestEnv, directive, of_kind, repo_without_directives, tick};
use serde_json::{Value, json};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/agents");

/// A repository with one critical directive for the `coder` role and one
/// for the coordinator (what a session's briefing shows).
fn repo() -> TestEnv {
    let env = repo_without_directives();
    directive(
        &env,
        "run-tests-first",
        "lesson = \"Run the whole test suite before declaring a change done\"\npriority = \"critical\"\napplies_to_agents = [\"coder\"]\nrequired_actions = [\"run the test suite and quote its summary line\"]",
    );
    directive(
        &env,
        "delegate-small-tasks",
        "lesson = \"Give each delegate one small task with the files it owns named\"\npriority = \"high\"\napplies_to_agents = [\"coordinator\"]\nrequired_actions = [\"name the files a delegate owns in its task\"]",
    );
    env.git(&["add", "-A"]);
    env.git(&["commit", "-q", "-m", "directives"]);
    env
}

/// Runs the hook in `dir` with `payload` on stdin, at the next tick.
pub(crate) fn hook_in(env: &TestEnv, dir: &Path, harness: &str, event: &str, payload: &str) -> Run {
    hook_env(env, dir, harness, event, payload, &[])
}

fn hook_env(
    env: &TestEnv,
    dir: &Path,
    harness: &str,
    event: &str,
    payload: &str,
    vars: &[(&str, &str)],
) -> Run {
    use std::io::Write;
    // What `agents install` registers; `hook agent` is the same code, run
    // by the tests of other files and by `the_two_entry_points_answer_alike`.
    let mut cmd = env.command(common::hook_bin(), dir);
    cmd.args([harness, event])
        .env("GIT_SWARM_NOW", tick())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in vars {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("spawn git-swarm");
    let _ = child
        .stdin
        .take()
        .expect("stdin")
        .write_all(payload.as_bytes());
    let out = child.wait_with_output().expect("wait git-swarm");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: env.normalise(&String::from_utf8_lossy(&out.stdout)),
        stderr: env.normalise(&String::from_utf8_lossy(&out.stderr)),
    }
}

fn hook(env: &TestEnv, harness: &str, event: &str, payload: &Value) -> Run {
    hook_in(env, &env.root, harness, event, &payload.to_string())
}

/// The payload `harness` sends for `event`, made to point at `dir`: the
/// one captured from the real harness (tests/fixtures/agents/captured/)
/// where the suite has one, else the one written from the harness's
/// documents (Cursor, which has no command line to run), with `$CWD` made
/// `dir`.
pub(crate) fn fixture(harness: &str, event: &str, dir: &Path) -> String {
    let captured = match (harness, event) {
        ("claude-code", "session-start") => Some("claude-code-2.1.332/session-start.json"),
        ("claude-code", "pre-tool-use") => Some("claude-code-2.1.332/pre-tool-use-agent.json"),
        ("claude-code", "subagent-start") => Some("claude-code-2.1.332/subagent-start.json"),
        ("claude-code", "subagent-stop") => Some("claude-code-2.1.332/subagent-stop.json"),
        ("claude-code", "post-tool-use") => {
            Some("claude-code-2.1.332/post-tool-use-failure-bash.json")
        }
        ("gemini", "session-start") => Some("gemini-0.61.0/session-start.json"),
        ("gemini", "post-tool-use") => Some("gemini-0.61.0/post-tool-use-failing.json"),
        ("opencode", "session-start") => Some("opencode-1.18.33/session-start.json"),
        ("opencode", "subagent-start") => Some("opencode-1.18.33/subagent-start.json"),
        ("opencode", "subagent-stop") => Some("opencode-1.18.33/subagent-stop.json"),
        ("opencode", "post-tool-use") => Some("opencode-1.18.33/post-tool-use-bash-exit-3.json"),
        _ => None,
    };
    if let Some(name) = captured {
        let mut v = captured_payload(name, dir);
        if harness == "opencode" {
            v.as_object_mut().expect("object").remove("cwd");
        }
        return v.to_string();
    }
    let text = std::fs::read_to_string(format!("{FIXTURES}/{harness}/{event}.json"))
        .unwrap_or_else(|e| panic!("fixture {harness}/{event}: {e}"));
    text.replace("$CWD", &dir.to_string_lossy())
}

/// The answer on stdout as JSON (the run succeeded and said nothing on stderr).
#[track_caller]
fn answer(run: &Run) -> Value {
    run.success();
    assert_eq!(run.stderr, "", "{}", run.snapshot());
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}:\n{}", run.snapshot()))
}

/// Nothing on stdout or stderr, exit 0.
#[track_caller]
fn silent(run: &Run) {
    run.success();
    assert_eq!(
        (run.stdout.as_str(), run.stderr.as_str()),
        ("", ""),
        "{}",
        run.snapshot()
    );
}

fn claude(event: &str, fields: Value) -> Value {
    let mut p = json!({
        "session_id": "sess-1",
        "transcript_path": "/home/u/.claude/projects/p/sess-1.jsonl",
        "hook_event_name": event,
    });
    for (k, v) in fields.as_object().expect("object") {
        p[k] = v.clone();
    }
    p
}

/// A spawn of the `Agent` tool, each with a call id of its own.
fn spawn(cwd: &Path, session: &str, task: &str, kind: &str) -> Value {
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    spawn_call(cwd, session, task, kind, &format!("toolu_{n}"))
}

fn spawn_call(cwd: &Path, session: &str, task: &str, kind: &str, id: &str) -> Value {
    claude(
        "PreToolUse",
        json!({"session_id": session, "cwd": cwd, "tool_name": "Agent", "tool_use_id": id,
               "tool_input": {"description": "work", "prompt": task, "subagent_type": kind,
                              "message": task, "agent_type": kind}}),
    )
}

fn start(cwd: &Path, session: &str, agent: &str, kind: &str) -> Value {
    claude(
        "SubagentStart",
        json!({"session_id": session, "cwd": cwd, "agent_id": agent, "agent_type": kind}),
    )
}

fn stop(cwd: &Path, session: &str, agent: &str, message: &str, active: bool) -> Value {
    claude(
        "SubagentStop",
        json!({"session_id": session, "cwd": cwd, "agent_id": agent, "agent_type": "coder",
               "stop_hook_active": active, "last_assistant_message": message,
               "background_tasks": [], "session_crons": []}),
    )
}

fn context_of(v: &Value) -> &str {
    v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or_else(|| panic!("no additionalContext in {v}"))
}

/// A hook whose answer cannot be written (its stdout a full device) says
/// so in one warning and exits 0 all the same: it fails open whatever goes
/// wrong (it exited 3).
#[cfg(target_os = "linux")]
#[test]
fn an_answer_that_cannot_be_written_still_exits_0() {
    use std::io::Write;
    let env = repo();
    let payload = fixture("claude-code", "session-start", &env.root);
    // It has an answer to give.
    answer(&hook_in(
        &env,
        &env.root,
        "claude-code",
        "session-start",
        &payload,
    ));
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("open /dev/full");
    let mut child = env
        .command(common::hook_bin(), &env.root)
        .args(["claude-code", "session-start"])
        .stdin(Stdio::piped())
        .stdout(full)
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn git-swarm-agent-hook");
    let _ = child
        .stdin
        .take()
        .expect("stdin")
        .write_all(payload.as_bytes());
    let out = child.wait_with_output().expect("wait");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with(
            "warning: git-swarm's claude-code session-start hook could not write its answer:"
        ),
        "{stderr}"
    );
}

/// Every fixture through the binary, in a session's order; the answers
/// are snapshotted whole.
#[test]
fn each_harness_is_answered_in_its_own_format() {
    for (harness, events) in [
        (
            "claude-code",
            &[
                "session-start",
                "pre-tool-use",
                "subagent-start",
                "subagent-stop",
                "post-tool-use",
            ][..],
        ),
        (
            "codex",
            &[
                "session-start",
                "pre-tool-use",
                "subagent-start",
                "subagent-stop",
                "post-tool-use",
            ][..],
        ),
        ("gemini", &["session-start", "post-tool-use"][..]),
        ("cursor", &["session-start", "post-tool-use"][..]),
        (
            "opencode",
            &[
                "session-start",
                "subagent-start",
                "subagent-stop",
                "post-tool-use",
            ][..],
        ),
    ] {
        let env = repo();
        let mut transcript = String::new();
        for event in events {
            let run = hook_in(
                &env,
                &env.root,
                harness,
                event,
                &fixture(harness, event, &env.root),
            );
            transcript.push_str(&format!("== {event}\n{}", run.snapshot()));
        }
        // Every non-success became an insight candidate.
        let candidates = std::fs::read_to_string(env.path(".git/swarm/local/candidates.jsonl"))
            .unwrap_or_default();
        assert_eq!(candidates.lines().count(), 1, "{harness}: {candidates}");
        insta::assert_snapshot!(format!("agents_hook_{harness}"), transcript);
    }
}

/// What older installs run, `git-swarm hook agent`, answers exactly as
/// `git-swarm-agent-hook` does, event after event of one harness's session.
#[test]
fn the_two_entry_points_answer_alike() {
    let (a, b) = (repo(), repo());
    for harness in ["claude-code", "codex", "opencode"] {
        for event in [
            "session-start",
            "pre-tool-use",
            "subagent-start",
            "post-tool-use",
            "subagent-stop",
        ] {
            if harness == "opencode" && event == "pre-tool-use" {
                continue;
            }
            let hook = hook_in(
                &a,
                &a.root,
                harness,
                event,
                &fixture(harness, event, &a.root),
            );
            let payload = fixture(harness, event, &b.root);
            let whole = b.swarm_with(
                &["hook", "agent", harness, event],
                &[("GIT_SWARM_NOW", &tick())],
                Some(payload.as_bytes()),
            );
            hook.success();
            whole.success();
            let same = |r: &Run| r.stdout.replace(&b.root.display().to_string(), "$ROOT");
            assert_eq!(
                hook.stdout.replace(&a.root.display().to_string(), "$ROOT"),
                same(&whole),
                "{harness} {event}"
            );
            assert_eq!(hook.stderr, whole.stderr, "{harness} {event}");
        }
    }
    // Both logs hold the same kinds of events, in the same order.
    let kinds = |env: &TestEnv| -> Vec<String> {
        let out = env.swarm(&["log", "--format", "json"]);
        out.success();
        let all: Vec<Value> = serde_json::from_str(&out.stdout).expect("log JSON");
        all.iter().map(|e| e["kind"].to_string()).collect()
    };
    let kinds_a = kinds(&a);
    assert!(kinds_a.iter().any(|k| k == "\"shown\""), "{kinds_a:?}");
    assert_eq!(kinds_a, kinds(&b));
}

/// Run by hand, the hook binary explains itself; without its arguments (a
/// harness that drops them) it warns once and exits 0 with no answer.
#[test]
fn the_hook_binary_explains_itself_and_fails_open_without_arguments() {
    let env = repo();
    let run = |args: &[&str]| {
        let out = env
            .command(common::hook_bin(), &env.root)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("run git-swarm-agent-hook");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, out, err) = run(&["--help"]);
    assert_eq!(code, Some(0));
    assert!(
        out.starts_with("git-swarm's hook for coding agent harnesses"),
        "{out}"
    );
    assert!(
        out.contains("Usage: git-swarm-agent-hook HARNESS EVENT"),
        "{out}"
    );
    assert_eq!(err, "");
    let (code, out, _) = run(&["--version"]);
    assert_eq!(code, Some(0));
    assert_eq!(
        out,
        format!("git-swarm-agent-hook {}\n", env!("CARGO_PKG_VERSION"))
    );
    for args in [
        &[][..],
        &["claude-code"][..],
        &["nobody", "session-start"][..],
    ] {
        let (code, out, err) = run(args);
        assert_eq!(code, Some(0), "{args:?}");
        assert_eq!(out, "", "{args:?}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("warning: git-swarm"), "{args:?}: {err}");
    }
    // Nothing was recorded.
    assert!(of_kind(&env, "shown").is_empty());
}

/// Codex refuses a whole answer for one field it does not define: each
/// answer has exactly the fields of its event.
#[test]
fn codex_answers_carry_only_the_fields_codex_defines() {
    let env = repo();
    let run = |event| {
        hook_in(
            &env,
            &env.root,
            "codex",
            event,
            &fixture("codex", event, &env.root),
        )
    };
    let keys =
        |v: &Value| -> Vec<String> { v.as_object().expect("object").keys().cloned().collect() };
    let v = answer(&run("session-start"));
    assert_eq!(keys(&v), ["hookSpecificOutput"]);
    assert_eq!(
        keys(&v["hookSpecificOutput"]),
        ["additionalContext", "hookEventName"]
    );
    assert_eq!(v["hookSpecificOutput"]["hookEventName"], "SessionStart");
    silent(&run("pre-tool-use"));
    let v = answer(&run("subagent-start"));
    assert_eq!(keys(&v), ["hookSpecificOutput"]);
    assert_eq!(
        keys(&v["hookSpecificOutput"]),
        ["additionalContext", "hookEventName"]
    );
    assert_eq!(v["hookSpecificOutput"]["hookEventName"], "SubagentStart");
    let v = answer(&run("subagent-stop"));
    assert_eq!(keys(&v), ["decision", "reason"]);
    assert_eq!(v["decision"], "block");
    silent(&run("post-tool-use"));
}

/// A hook never stands in the agent's way: whatever is wrong with its
/// input is one warning line, nothing on stdout, exit 0.
#[test]
fn bad_payloads_are_one_warning_and_exit_0() {
    let env = repo();
    for harness in ["claude-code", "codex", "gemini", "cursor", "opencode"] {
        for event in [
            "session-start",
            "pre-tool-use",
            "subagent-start",
            "subagent-stop",
            "post-tool-use",
        ] {
            for payload in ["", "{", "[1, 2]", "\"text\"", "{\"no\": \"session\"}"] {
                let run = hook_in(&env, &env.root, harness, event, payload);
                common::assert_no_panic(&run);
                run.success();
                assert_eq!(run.stdout, "", "{harness} {event} {payload:?}");
                // pre-tool-use of an opencode payload has nothing to read.
                assert_eq!(
                    run.stderr.lines().count(),
                    1,
                    "{harness} {event} {payload:?}:\n{}",
                    run.snapshot()
                );
                assert!(run.stderr.starts_with("warning: "), "{}", run.snapshot());
            }
        }
    }
    let run = hook_in(&env, &env.root, "nonesuch", "session-start", "{}");
    insta::assert_snapshot!(run.snapshot(), @r"
    [exit 0]
    --- stderr
    warning: git-swarm has no agent hook for the harness `nonesuch` (claude-code, codex, gemini, cursor or opencode); nothing to do
    ");
    let run = hook_in(&env, &env.root, "claude-code", "stop", "{}");
    insta::assert_snapshot!(run.snapshot(), @r"
    [exit 0]
    --- stderr
    warning: git-swarm's agent hook has no event `stop` (session-start, pre-tool-use, subagent-start, subagent-stop or post-tool-use); nothing to do
    ");
    assert!(env.event_lines().iter().all(|l| !l.contains("\"shown\"")));
}

/// No `.swarm/` (or no repository): not git-swarm's business, so silent.
/// GIT_SWARM_SKIP=1 skips as it does the git hooks.
#[test]
fn an_uninitialised_repository_and_skip_are_silent() {
    let env = TestEnv::new();
    for event in [
        "session-start",
        "subagent-start",
        "subagent-stop",
        "pre-tool-use",
    ] {
        silent(&hook_in(
            &env,
            &env.root,
            "claude-code",
            event,
            &fixture("claude-code", event, &env.root),
        ));
    }
    let outside = env.tmp.path().join("elsewhere");
    std::fs::create_dir_all(&outside).expect("mkdir");
    silent(&hook_in(
        &env,
        &outside,
        "claude-code",
        "session-start",
        &fixture("claude-code", "session-start", &outside),
    ));
    let env = repo();
    let run = hook_env(
        &env,
        &env.root,
        "claude-code",
        "subagent-start",
        "not even JSON",
        &[("GIT_SWARM_SKIP", "1")],
    );
    silent(&run);
}

/// A Claude Code session from start to stop, twice: the loop's events
/// land as `inject`, `ack` and `reflect micro` would write them.
#[test]
fn a_claude_code_session_runs_the_loop() {
    let env = repo();
    let root = env.root.clone();
    // Session start: the coordinator's briefing, nothing recorded.
    let v = answer(&hook(
        &env,
        "claude-code",
        "session-start",
        &claude("SessionStart", json!({"cwd": root, "source": "startup"})),
    ));
    let briefing = context_of(&v);
    assert!(
        briefing.contains("- id: delegate-small-tasks"),
        "{briefing}"
    );
    assert!(!briefing.contains("ACK CONTRACT"), "{briefing}");
    assert!(of_kind(&env, "shown").is_empty());
    // After compaction it fires again, with the same briefing.
    let again = answer(&hook(
        &env,
        "claude-code",
        "session-start",
        &claude("SessionStart", json!({"cwd": root, "source": "compact"})),
    ));
    assert_eq!(context_of(&again), briefing);

    // The coordinator spawns a coder: the block goes into the coder's task
    // (PreToolUse `updatedInput`, the whole input given back), so it is
    // paired with its spawn by construction; no permission decision.
    let v = answer(&hook(
        &env,
        "claude-code",
        "pre-tool-use",
        &spawn(&root, "sess-1", "Fix the flaky parser test", "coder"),
    ));
    let out = &v["hookSpecificOutput"];
    assert_eq!(out["hookEventName"], "PreToolUse");
    assert!(out.get("permissionDecision").is_none(), "{v}");
    assert_eq!(out["updatedInput"]["subagent_type"], "coder");
    assert_eq!(out["updatedInput"]["description"], "work");
    let task = out["updatedInput"]["prompt"].as_str().expect("prompt");
    assert!(task.ends_with("\n\nFix the flaky parser test"), "{task}");
    let block = task
        .trim_end_matches("Fix the flaky parser test")
        .to_owned();
    assert!(
        block.contains("- id: run-tests-first\n  priority: critical"),
        "{block}"
    );
    assert!(block.contains("ACK CONTRACT"), "{block}");
    let shown = of_kind(&env, "shown");
    assert_eq!(shown.len(), 1);
    assert_eq!(shown[0]["actor"]["role"], "coder");
    let delegation = shown[0]["id"].as_str().expect("id").to_owned();
    assert!(block.contains("delegation=\"[ULID]\""), "{block}");
    // The coder starts: its task has the block, the start adds nothing;
    // again on a resume, and nothing new is recorded.
    for _ in 0..2 {
        silent(&hook(
            &env,
            "claude-code",
            "subagent-start",
            &start(&root, "sess-1", "agent-1", "coder"),
        ));
    }
    assert_eq!(of_kind(&env, "shown").len(), 1);

    // Three tool calls, one failing: one insight candidate, for the coder.
    let tool = |event: &str, name: &str, extra: Value| {
        let mut p = claude(
            event,
            json!({"cwd": root, "agent_id": "agent-1", "agent_type": "coder",
                                          "tool_name": name, "tool_use_id": "toolu_x"}),
        );
        for (k, v) in extra.as_object().expect("object") {
            p[k] = v.clone();
        }
        silent(&hook(&env, "claude-code", "post-tool-use", &p));
    };
    tool(
        "PostToolUse",
        "Bash",
        json!({"tool_input": {"command": "cargo build"}, "tool_response": {"stdout": "Finished", "stderr": "", "interrupted": false}}),
    );
    tool(
        "PostToolUse",
        "Write",
        json!({"tool_input": {"file_path": "/x/src/parse.rs", "content": "x"}, "tool_response": {"filePath": "/x/src/parse.rs", "success": true}}),
    );
    tool(
        "PostToolUseFailure",
        "Bash",
        json!({"tool_input": {"command": "cargo test"}, "error": "Exit code 101\ntest parse::flaky ... FAILED\ntest result: FAILED. 1 passed; 1 failed", "is_interrupt": false}),
    );
    let candidates = env.read(".git/swarm/local/candidates.jsonl");
    let lines: Vec<Value> = candidates
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    assert_eq!(lines.len(), 1, "{candidates}");
    assert_eq!(lines[0]["class"], "failure");
    assert_eq!(lines[0]["role"], "coder");
    assert_eq!(lines[0]["task"], "agent-1");

    // The coder stops without the ack: asked once, with the exact line.
    let v = answer(&hook(
        &env,
        "claude-code",
        "subagent-stop",
        &stop(&root, "sess-1", "agent-1", "Fixed it.", false),
    ));
    assert_eq!(v["decision"], "block");
    let reason = v["reason"].as_str().expect("reason");
    assert!(
        reason
            .lines()
            .any(|l| l == "KNOWLEDGE_APPLIED:run-tests-first"),
        "{reason}"
    );
    assert!(
        of_kind(&env, "unacknowledged").is_empty(),
        "not yet: it was asked"
    );
    // It stops again, still without: no second ask, and now a violation.
    silent(&hook(
        &env,
        "claude-code",
        "subagent-stop",
        &stop(&root, "sess-1", "agent-1", "Fixed it, really.", true),
    ));
    let unack = of_kind(&env, "unacknowledged");
    assert_eq!(unack.len(), 1);
    assert_eq!(unack[0]["directive"], "run-tests-first");
    assert_eq!(unack[0]["delegation"], delegation.as_str());
    assert!(
        env.read(".git/swarm/local/unacknowledged-criticals.jsonl")
            .contains("run-tests-first")
    );
    // Asked once means once, even from a harness that says nothing of it.
    silent(&hook(
        &env,
        "claude-code",
        "subagent-stop",
        &stop(&root, "sess-1", "agent-1", "Done.", false),
    ));
    assert_eq!(of_kind(&env, "unacknowledged").len(), 1);
    let status = env.swarm(&["status"]);
    assert!(
        status.stdout.contains("run-tests-first  1 time(s)"),
        "{}",
        status.snapshot()
    );

    // A second coder acknowledges: recorded, never asked.
    let v = answer(&hook(
        &env,
        "claude-code",
        "pre-tool-use",
        &spawn(&root, "sess-1", "Add a regression test", "coder"),
    ));
    silent(&hook(
        &env,
        "claude-code",
        "subagent-start",
        &start(&root, "sess-1", "agent-2", "coder"),
    ));
    let second = of_kind(&env, "shown")[1]["id"]
        .as_str()
        .expect("id")
        .to_owned();
    assert!(
        v["hookSpecificOutput"]["updatedInput"]["prompt"]
            .as_str()
            .is_some_and(|p| p.contains("- id: run-tests-first"))
    );
    silent(&hook(
        &env,
        "claude-code",
        "subagent-stop",
        &stop(
            &root,
            "sess-1",
            "agent-2",
            "Added the test.\nKNOWLEDGE_APPLIED: run-tests-first",
            false,
        ),
    ));
    let acks = of_kind(&env, "ack");
    assert_eq!(acks.len(), 1);
    assert_eq!(acks[0]["directive"], "run-tests-first");
    assert_eq!(acks[0]["status"], "applied");
    assert_eq!(acks[0]["delegation"], second.as_str());
    assert_eq!(of_kind(&env, "unacknowledged").len(), 1);
    // The session's briefing now says what needs attention.
    let v = answer(&hook(
        &env,
        "claude-code",
        "session-start",
        &claude("SessionStart", json!({"cwd": root, "source": "resume"})),
    ));
    assert!(
        context_of(&v).contains("critical left unacknowledged: run-tests-first (1 time(s))"),
        "{v}"
    );
}

/// The task a spawn carries ranks its subagent's directives: with room for
/// one, a task about the parser shows the parser's directive.
fn ranking_repo() -> TestEnv {
    let env = repo_without_directives();
    let config = env.read(".swarm/config.toml").replace(
        "delegate_max_inject_count = 8",
        "delegate_max_inject_count = 1",
    );
    env.write(".swarm/config.toml", config);
    directive(
        &env,
        "fuzz-the-parser",
        "lesson = \"Fuzz the parser after changing its grammar\"\napplies_to_agents = [\"tester\"]\ntriggers = [\"parser grammar fuzzing\"]\nrequired_actions = [\"run the parser fuzzer for a minute\"]",
    );
    directive(
        &env,
        "back-up-before-migrating",
        "lesson = \"Take a database backup before running a migration\"\napplies_to_agents = [\"tester\"]\ntriggers = [\"database migration backup\"]\nrequired_actions = [\"take a backup before migrating\"]",
    );
    // What a tester is shown when no task says otherwise.
    directive(
        &env,
        "keep-tests-hermetic",
        "lesson = \"Keep each test hermetic: no network, no shared state\"\npriority = \"high\"\napplies_to_agents = [\"tester\"]\nrequired_actions = [\"stub the network in tests\"]",
    );
    env.git(&["add", "-A"]);
    env.git(&["commit", "-q", "-m", "directives"]);
    env
}

fn shown_ids(v: &Value) -> Vec<String> {
    context_of(v)
        .lines()
        .filter_map(|l| l.strip_prefix("- id: "))
        .map(str::to_owned)
        .collect()
}

#[test]
fn parallel_spawns_of_one_type_never_get_each_others_task() {
    let env = ranking_repo();
    let root = env.root.clone();
    let parser = "change the parser grammar and run parser grammar fuzzing";
    let migration = "write the database migration, database migration backup first";
    // One at a time, each start gets its own spawn's task.
    silent(&hook(
        &env,
        "codex",
        "pre-tool-use",
        &spawn(&root, "s", parser, "tester"),
    ));
    let a = answer(&hook(
        &env,
        "codex",
        "subagent-start",
        &start(&root, "s", "a", "tester"),
    ));
    silent(&hook(
        &env,
        "codex",
        "pre-tool-use",
        &spawn(&root, "s", migration, "tester"),
    ));
    let b = answer(&hook(
        &env,
        "codex",
        "subagent-start",
        &start(&root, "s", "b", "tester"),
    ));
    assert_eq!(shown_ids(&a), ["fuzz-the-parser"]);
    assert_eq!(shown_ids(&b), ["back-up-before-migrating"]);
    // The other order of tasks, so that neither answer is the no-task default.
    silent(&hook(
        &env,
        "codex",
        "pre-tool-use",
        &spawn(&root, "s", migration, "tester"),
    ));
    let c = answer(&hook(
        &env,
        "codex",
        "subagent-start",
        &start(&root, "s", "c", "tester"),
    ));
    assert_eq!(shown_ids(&c), ["back-up-before-migrating"]);

    // Two spawns before either starts, and no word of which subagent is
    // whose (a harness that does not link them): both are ranked by role
    // alone, as a start with no spawn is, never with each other's task.
    let none = answer(&hook(
        &env,
        "codex",
        "subagent-start",
        &start(&root, "other", "z", "tester"),
    ));
    assert_eq!(shown_ids(&none), ["keep-tests-hermetic"]);
    for (id, task) in [("t1", parser), ("t2", migration)] {
        silent(&hook(
            &env,
            "codex",
            "pre-tool-use",
            &spawn_call(&root, "s", task, "tester", id),
        ));
    }
    let started = std::time::Instant::now();
    let d = answer(&hook(
        &env,
        "codex",
        "subagent-start",
        &start(&root, "s", "d", "tester"),
    ));
    assert_eq!(shown_ids(&d), ["keep-tests-hermetic"]);
    assert!(
        started.elapsed() < std::time::Duration::from_secs(8),
        "an ambiguous start waits for its link a bounded time, well within the hook's 10 s"
    );
    // Their calls end (foreground subagents): the next spawn pairs again.
    for id in ["t1", "t2"] {
        silent(&hook(
            &env,
            "codex",
            "post-tool-use",
            &ended(&root, "s", id),
        ));
    }
    silent(&hook(
        &env,
        "codex",
        "pre-tool-use",
        &spawn(&root, "s", parser, "tester"),
    ));
    let f = answer(&hook(
        &env,
        "codex",
        "subagent-start",
        &start(&root, "s", "f", "tester"),
    ));
    assert_eq!(shown_ids(&f), ["fuzz-the-parser"]);
}

/// The PostToolUse of Claude Code 2.1.332's `Agent` call for a subagent it
/// runs in the background: `async_launched`, naming the subagent, sent at
/// the same time as that subagent's SubagentStart.
fn launched(cwd: &Path, session: &str, id: &str, task: &str, agent: &str) -> Value {
    claude(
        "PostToolUse",
        json!({"session_id": session, "cwd": cwd, "tool_name": "Agent", "tool_use_id": id,
               "tool_input": {"description": "work", "prompt": task, "subagent_type": "tester",
                              "message": task, "agent_type": "tester"},
               "tool_response": {"isAsync": true, "status": "async_launched", "agentId": agent,
                                 "description": "work", "prompt": task}}),
    )
}

/// The PostToolUse of a spawn whose call ended without naming a subagent.
fn ended(cwd: &Path, session: &str, id: &str) -> Value {
    claude(
        "PostToolUse",
        json!({"session_id": session, "cwd": cwd, "tool_name": "Agent", "tool_use_id": id,
               "tool_input": {"prompt": "x", "subagent_type": "tester"},
               "tool_response": "denied"}),
    )
}

/// Background subagents (Claude Code 2.1.332's default): two spawns in one
/// turn, each launch naming its subagent while the starts run. Every
/// interleaving gives each subagent its own task; a launch is not a
/// finished call, so it never drops the waiting task.
#[test]
fn background_subagents_get_their_own_spawns_task_whatever_the_order() {
    let env = ranking_repo();
    let root = env.root.clone();
    let parser = "change the parser grammar and run parser grammar fuzzing";
    let migration = "write the database migration, database migration backup first";
    for round in 0..4 {
        let session = format!("bg-{round}");
        let (ta, tb) = (format!("ta{round}"), format!("tb{round}"));
        let (a, b) = (format!("agent-a{round}"), format!("agent-b{round}"));
        for (id, task) in [(&ta, parser), (&tb, migration)] {
            silent(&hook(
                &env,
                "codex",
                "pre-tool-use",
                &spawn_call(&root, &session, task, "tester", id),
            ));
        }
        // Starts and launches all at once, in an order that varies by round.
        let mut starts = vec![
            start(&root, &session, &a, "tester"),
            start(&root, &session, &b, "tester"),
        ];
        let mut launches = vec![
            launched(&root, &session, &ta, parser, &a),
            launched(&root, &session, &tb, migration, &b),
        ];
        if round % 2 == 1 {
            starts.reverse();
        }
        if round >= 2 {
            launches.reverse();
        }
        let (tx, rx) = std::sync::mpsc::channel();
        let env_ref = &env;
        std::thread::scope(|scope| {
            scope.spawn(move || {
                tx.send(hooks_at_once(env_ref, "codex", "subagent-start", &starts))
                    .expect("send");
            });
            scope.spawn(move || {
                for r in hooks_at_once(env_ref, "codex", "post-tool-use", &launches) {
                    silent(&r);
                }
            });
        });
        let answers = rx.recv().expect("the starts' answers");
        let mut shown: Vec<Vec<String>> = answers.iter().map(|r| shown_ids(&answer(r))).collect();
        if round % 2 == 1 {
            shown.reverse();
        }
        assert_eq!(
            shown,
            [["fuzz-the-parser"], ["back-up-before-migrating"]],
            "round {round}: each subagent is shown its own task's directive"
        );
    }
}

/// A subagent working in a linked worktree stops there: the state in the
/// common git dir leads to the delegation in the clone's log.
#[test]
fn a_subagent_stopping_in_a_linked_worktree_finds_its_delegation() {
    let env = repo();
    let root = env.root.clone();
    let wt = env.tmp.path().join("wt");
    env.git(&[
        "worktree",
        "add",
        "-q",
        "-b",
        "side",
        wt.to_str().expect("utf-8"),
    ]);
    silent(&hook(
        &env,
        "codex",
        "pre-tool-use",
        &spawn(&root, "s", "Fix the parser", "coder"),
    ));
    let v = answer(&hook(
        &env,
        "codex",
        "subagent-start",
        &start(&root, "s", "w1", "coder"),
    ));
    assert!(context_of(&v).contains("run-tests-first"));
    let run = hook_in(
        &env,
        &wt,
        "codex",
        "subagent-stop",
        &stop(&wt, "s", "w1", "Done.", false).to_string(),
    );
    let v = answer(&run);
    assert!(
        v["reason"]
            .as_str()
            .expect("reason")
            .contains("KNOWLEDGE_APPLIED:run-tests-first")
    );
    let run = hook_in(
        &env,
        &wt,
        "codex",
        "subagent-stop",
        &stop(
            &wt,
            "s",
            "w1",
            "Done. KNOWLEDGE_APPLIED:run-tests-first",
            true,
        )
        .to_string(),
    );
    silent(&run);
    // Recorded beside the `shown` event, in the pending log of the common
    // git dir: nothing in the worktree's `.swarm/events/`.
    let acks = of_kind(&env, "ack");
    assert_eq!(acks.len(), 1, "{:?}", env.event_lines());
    assert_eq!(acks[0]["directive"], "run-tests-first");
    let wt_log = std::fs::read_dir(wt.join(".swarm/events"))
        .map(|d| d.count())
        .unwrap_or(0);
    let wt_events: String = std::fs::read_dir(wt.join(".swarm/events"))
        .into_iter()
        .flatten()
        .filter_map(|e| std::fs::read_to_string(e.ok()?.path()).ok())
        .collect();
    assert!(
        !wt_events.contains("\"ack\""),
        "{wt_log} files: {wt_events}"
    );
}

/// opencode's plugin cannot hold a subagent at its end: the acks are
/// recorded at once, a missing critical as `unacknowledged`.
#[test]
fn opencode_records_acks_without_asking() {
    let env = repo();
    let run = |event| {
        hook_in(
            &env,
            &env.root,
            "opencode",
            event,
            &fixture("opencode", event, &env.root),
        )
    };
    let v = answer(&run("session-start"));
    assert!(
        v["context"]
            .as_str()
            .expect("context")
            .contains("delegate-small-tasks")
    );
    let v = answer(&run("subagent-start"));
    let prepend = v["prepend"].as_str().expect("prepend");
    assert!(prepend.contains("run-tests-first"));
    assert_eq!(of_kind(&env, "shown").len(), 1);
    silent(&run("subagent-stop"));
    let unack = of_kind(&env, "unacknowledged");
    assert_eq!(unack.len(), 1);
    assert_eq!(unack[0]["directive"], "run-tests-first");
}

/// However many directives the coordinator has, the briefing stays within
/// 4 KB: what needs attention is kept, the directive list is cut between
/// entries and its block closed, and a pointer says where the rest is.
#[test]
fn the_briefing_is_bounded() {
    let env = repo();
    let config = env.read(".swarm/config.toml").replace(
        "delegate_max_inject_count = 8",
        "delegate_max_inject_count = 100",
    );
    env.write(".swarm/config.toml", config);
    for i in 0..60 {
        directive(
            &env,
            &format!("coordinate-{i:02}"),
            &format!(
                "lesson = \"Coordinate rule number {i} for delegating work across many agents at once\"\npriority = \"high\"\napplies_to_agents = [\"coordinator\"]\nrequired_actions = [\"follow coordination rule {i} whenever a delegate is given files to change\"]"
            ),
        );
    }
    env.git(&["add", "-A"]);
    env.git(&["commit", "-q", "-m", "directives"]);
    // Something that needs attention: a coder that never acked its critical.
    let root = env.root.clone();
    answer(&hook(
        &env,
        "claude-code",
        "subagent-start",
        &start(&root, "s", "a1", "coder"),
    ));
    silent(&hook(
        &env,
        "claude-code",
        "subagent-stop",
        &stop(&root, "s", "a1", "Done.", true),
    ));
    let v = answer(&hook(
        &env,
        "claude-code",
        "session-start",
        &claude("SessionStart", json!({"cwd": root, "source": "startup"})),
    ));
    let text = context_of(&v);
    assert!(text.len() <= 4096, "{} bytes", text.len());
    assert!(text.contains("- id: coordinate-00"), "{text}");
    assert!(
        text.contains("- critical left unacknowledged: run-tests-first (1 time(s))\n"),
        "{text}"
    );
    // Cut after a whole entry, and closed.
    let (list, after) = text
        .split_once("</delegate_knowledge_directives>\n")
        .unwrap_or_else(|| panic!("no closing tag:\n{text}"));
    assert!(
        list.lines()
            .last()
            .is_some_and(|l| l.starts_with("  required: follow coordination rule")),
        "{text}"
    );
    assert!(!list.contains("coordinate-59"), "{text}");
    assert!(after.contains("Needs attention"), "{text}");
    assert!(
        text.ends_with("… (cut to 4 KB: `git swarm status` and `git swarm list` show the rest)\n"),
        "{text}"
    );
}

/// Runs the hook once per payload, all at once: every process is started
/// and waits on its stdin before any is given its payload.
fn hooks_at_once(env: &TestEnv, harness: &str, event: &str, payloads: &[Value]) -> Vec<Run> {
    use std::io::Write;
    let mut children: Vec<_> = payloads
        .iter()
        .map(|_| {
            env.command(common::bin(), &env.root)
                .args(["hook", "agent", harness, event])
                .env("GIT_SWARM_NOW", tick())
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("spawn git-swarm")
        })
        .collect();
    for (child, payload) in children.iter_mut().zip(payloads) {
        let mut stdin = child.stdin.take().expect("stdin");
        let _ = stdin.write_all(payload.to_string().as_bytes());
    }
    children
        .into_iter()
        .map(|child| {
            let out = child.wait_with_output().expect("wait git-swarm");
            Run {
                code: out.status.code().unwrap_or(-1),
                stdout: env.normalise(&String::from_utf8_lossy(&out.stdout)),
                stderr: env.normalise(&String::from_utf8_lossy(&out.stderr)),
            }
        })
        .collect()
}

/// A session's state: the last line of its file (each update appends the
/// whole state as one line).
fn last_state(file: &Path) -> Value {
    let text = std::fs::read_to_string(file).expect("state");
    let line = text
        .lines()
        .rev()
        .find(|l| !l.is_empty())
        .expect("a state line");
    serde_json::from_str(line).expect("state JSON")
}

/// The session state files in the repository's common git dir.
fn state_files(env: &TestEnv) -> Vec<std::path::PathBuf> {
    let dir = env.root.join(".git/swarm/agents");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .filter_map(|e| Some(e.ok()?.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files
}

/// Every event of the clone's log: the tracked files of the main work tree,
/// then the pending ones its worktrees share.
fn events(env: &TestEnv) -> Vec<Value> {
    env.event_lines()
        .iter()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .collect()
}

/// The event files in `dir`'s `.swarm/events/` (the tracked log, which
/// only `git swarm commit` writes).
fn tracked_files_in(dir: &Path) -> usize {
    std::fs::read_dir(dir.join(".swarm/events"))
        .into_iter()
        .flatten()
        .filter(|e| {
            e.as_ref()
                .is_ok_and(|e| e.path().extension().is_some_and(|x| x == "jsonl"))
        })
        .count()
}

/// A repository where each of `n` roles (`worker_0`…) is shown, with room
/// for one directive, `fuzz-<i>` for a task about parser grammar fuzzing
/// and `plain-<i>` otherwise.
fn roles_repo(n: usize) -> TestEnv {
    let env = repo_without_directives();
    let config = env.read(".swarm/config.toml").replace(
        "delegate_max_inject_count = 8",
        "delegate_max_inject_count = 1",
    );
    env.write(".swarm/config.toml", config);
    for i in 0..n {
        directive(
            &env,
            &format!("fuzz-{i}"),
            &format!(
                "lesson = \"Fuzz the parser after changing its grammar, worker {i}\"\napplies_to_agents = [\"worker_{i}\"]\ntriggers = [\"parser grammar fuzzing\"]\nrequired_actions = [\"run the parser fuzzer for a minute\"]"
            ),
        );
        directive(
            &env,
            &format!("plain-{i}"),
            &format!(
                "lesson = \"Keep each test hermetic, worker {i}: no network\"\npriority = \"high\"\napplies_to_agents = [\"worker_{i}\"]\nrequired_actions = [\"stub the network in tests\"]"
            ),
        );
    }
    env.git(&["add", "-A"]);
    env.git(&["commit", "-q", "-m", "directives"]);
    env
}

const FUZZ_TASK: &str = "change the parser grammar and run parser grammar fuzzing";

/// Hook processes of one session run at once: every spawn is kept and
/// every start finds its own, none lost to another's write.
#[test]
fn hooks_running_at_once_lose_nothing() {
    const N: usize = 6;
    let env = roles_repo(N);
    let root = env.root.clone();
    let pres: Vec<Value> = (0..N)
        .map(|i| spawn(&root, "s", FUZZ_TASK, &format!("worker_{i}")))
        .collect();
    for run in hooks_at_once(&env, "codex", "pre-tool-use", &pres) {
        silent(&run);
    }
    let starts: Vec<Value> = (0..N)
        .map(|i| start(&root, "s", &format!("agent-{i}"), &format!("worker_{i}")))
        .collect();
    let runs = hooks_at_once(&env, "codex", "subagent-start", &starts);
    for (i, run) in runs.iter().enumerate() {
        assert_eq!(shown_ids(&answer(run)), [format!("fuzz-{i}")]);
    }
    assert_eq!(of_kind(&env, "shown").len(), N);
    let state = last_state(&state_files(&env)[0]);
    assert_eq!(state["agents"].as_object().expect("agents").len(), N);
    assert_eq!(state["pending"], json!([]));
}

/// Two stops of one subagent at once: exactly one asks, and an ack is
/// recorded once however many stops carry it.
#[test]
fn simultaneous_stops_ask_once_and_record_once() {
    let env = repo();
    let root = env.root.clone();
    for (agent, message) in [
        ("a1", "Done."),
        ("a2", "Done.\nKNOWLEDGE_APPLIED: run-tests-first"),
    ] {
        silent(&hook(
            &env,
            "codex",
            "pre-tool-use",
            &spawn(&root, "s", "Fix the parser", "coder"),
        ));
        answer(&hook(
            &env,
            "codex",
            "subagent-start",
            &start(&root, "s", agent, "coder"),
        ));
        let stops = vec![stop(&root, "s", agent, message, false); 6];
        let runs = hooks_at_once(&env, "codex", "subagent-stop", &stops);
        let asked = runs.iter().filter(|r| !r.stdout.is_empty()).count();
        for run in &runs {
            run.success();
            assert_eq!(run.stderr, "", "{}", run.snapshot());
        }
        if agent == "a1" {
            assert_eq!(asked, 1, "one stop asks");
        } else {
            assert_eq!(asked, 0);
            assert_eq!(of_kind(&env, "ack").len(), 1, "{:?}", of_kind(&env, "ack"));
        }
    }
    // The one asked was asked once: its other stops recorded it unacknowledged, once.
    assert_eq!(of_kind(&env, "unacknowledged").len(), 1);
}

/// A spawn that never starts (the user denied it) is dropped by its own
/// post-tool event, or after two minutes, and then neither makes the
/// next spawn of its type ambiguous nor hands its task to another start.
#[test]
fn an_orphaned_spawn_is_dropped() {
    let env = ranking_repo();
    let root = env.root.clone();
    let parser = "change the parser grammar and run parser grammar fuzzing";
    let migration = "write the database migration, database migration backup first";
    let at = |t: &str, event: &str, payload: Value| {
        hook_env(
            &env,
            &root,
            "codex",
            event,
            &payload.to_string(),
            &[("GIT_SWARM_NOW", t)],
        )
    };
    // Denied: its PostToolUseFailure drops it at once.
    silent(&at(
        "2026-11-24T10:00:00Z",
        "pre-tool-use",
        spawn_call(&root, "s", parser, "tester", "toolu_denied"),
    ));
    silent(&at(
        "2026-11-24T10:00:05Z",
        "post-tool-use",
        claude(
            "PostToolUseFailure",
            json!({"session_id": "s", "cwd": root, "tool_name": "Agent", "tool_use_id": "toolu_denied",
                   "tool_input": {"prompt": parser, "subagent_type": "tester"},
                   "error": "The user doesn't want to proceed with this tool use.", "is_interrupt": false}),
        ),
    ));
    silent(&at(
        "2026-11-24T10:00:10Z",
        "pre-tool-use",
        spawn_call(&root, "s", migration, "tester", "toolu_2"),
    ));
    let v = answer(&at(
        "2026-11-24T10:00:11Z",
        "subagent-start",
        start(&root, "s", "a", "tester"),
    ));
    assert_eq!(shown_ids(&v), ["back-up-before-migrating"]);

    // Never heard of again: gone after two minutes.
    silent(&at(
        "2026-11-24T11:00:00Z",
        "pre-tool-use",
        spawn_call(&root, "s", parser, "tester", "toolu_lost"),
    ));
    // A start with no spawn of its own is not handed the orphan's task…
    let v = answer(&at(
        "2026-11-24T11:03:00Z",
        "subagent-start",
        start(&root, "s", "b", "tester"),
    ));
    assert_eq!(shown_ids(&v), ["keep-tests-hermetic"]);
    // …and the orphan does not make the next spawn of its type ambiguous.
    silent(&at(
        "2026-11-24T12:00:00Z",
        "pre-tool-use",
        spawn_call(&root, "s", parser, "tester", "toolu_lost2"),
    ));
    silent(&at(
        "2026-11-24T12:03:00Z",
        "pre-tool-use",
        spawn_call(&root, "s", migration, "tester", "toolu_3"),
    ));
    let v = answer(&at(
        "2026-11-24T12:03:01Z",
        "subagent-start",
        start(&root, "s", "c", "tester"),
    ));
    assert_eq!(shown_ids(&v), ["back-up-before-migrating"]);
}

/// A repository where a Codex session `s` spawned a coder, and that
/// session's state file.
fn spawned_in_codex() -> (TestEnv, std::path::PathBuf) {
    let env = repo();
    silent(&hook(
        &env,
        "codex",
        "pre-tool-use",
        &spawn(&env.root, "s", "Fix the parser", "coder"),
    ));
    let file = state_files(&env).pop().expect("a state file");
    (env, file)
}

/// A session's state file that is a link or a FIFO is neither followed nor
/// read: the hook warns once, goes on, and writes a regular file in its
/// place; what the link pointed to is untouched.
#[test]
#[cfg(unix)]
fn a_state_file_that_is_a_link_or_a_fifo_is_not_followed() {
    let (env, file) = spawned_in_codex();
    let root = env.root.clone();
    let outside = env.tmp.path().join("outside.json");
    std::fs::write(&outside, "{\"pending\":[]}\n").expect("outside");
    for (i, kind) in ["link", "fifo"].into_iter().enumerate() {
        std::fs::remove_file(&file).expect("remove state");
        if kind == "link" {
            std::os::unix::fs::symlink(&outside, &file).expect("symlink");
        } else {
            let made = std::process::Command::new("mkfifo").arg(&file).status();
            assert!(made.is_ok_and(|s| s.success()), "mkfifo");
        }
        let run = hook(
            &env,
            "codex",
            "pre-tool-use",
            &spawn_call(&root, "s", "Fix the lexer", "coder", &format!("toolu_{i}")),
        );
        run.success();
        assert_eq!(run.stdout, "", "{kind}: {}", run.snapshot());
        assert_eq!(run.stderr.lines().count(), 1, "{kind}: {}", run.snapshot());
        assert!(
            run.stderr.contains("not a regular file") && run.stderr.contains("started over"),
            "{kind}: {}",
            run.snapshot()
        );
        let meta = std::fs::symlink_metadata(&file).expect("state");
        assert!(meta.is_file(), "{kind}: {meta:?}");
        assert_eq!(last_state(&file)["pending"][0]["task"], "Fix the lexer");
        assert_eq!(
            std::fs::read_to_string(&outside).expect("outside"),
            "{\"pending\":[]}\n"
        );
    }
}

/// A state file grown past 1 MiB (by an older version, or by hand) is
/// started over with one warning, not an error on every later hook; and
/// what is written stays well under the limit, the oldest subagents going
/// first.
#[test]
fn the_state_is_bounded_and_an_oversized_one_is_started_over() {
    let (env, file) = spawned_in_codex();
    let root = env.root.clone();
    let mut big = b"{\"pending\":[]}".to_vec();
    big.resize(1024 * 1024 + 10, b' ');
    std::fs::write(&file, &big).expect("write");
    let run = hook(
        &env,
        "codex",
        "subagent-start",
        &start(&root, "s", "a1", "coder"),
    );
    run.success();
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.snapshot());
    assert!(
        run.stderr.starts_with("warning: the agent hook's state ")
            && run.stderr.contains("started over"),
        "{}",
        run.snapshot()
    );
    let v: Value = serde_json::from_str(&run.stdout).expect("an answer");
    assert!(context_of(&v).contains("run-tests-first"));
    // Its stop finds the delegation in the state started over.
    let v = answer(&hook(
        &env,
        "codex",
        "subagent-stop",
        &stop(&root, "s", "a1", "Done.", false),
    ));
    assert_eq!(v["decision"], "block");

    // A readable file near the limit: 200 subagents of 4 KB each.
    let mut state = last_state(&file);
    let base = state["agents"]["a1"]["at"].as_i64().expect("at");
    for i in 0..200 {
        state["agents"][format!("old-{i:03}")] = json!({
            "delegation": null, "root": root, "block": "x".repeat(4096), "asked": false,
            "at": base - 1000 + i,
        });
    }
    // Written as one state without a newline, as versions before the
    // appended states wrote it: the next update writes the file anew.
    std::fs::write(&file, state.to_string()).expect("write");
    answer(&hook(
        &env,
        "codex",
        "subagent-start",
        &start(&root, "s", "a2", "coder"),
    ));
    let written = std::fs::read_to_string(&file).expect("state");
    assert!(written.len() <= 512 * 1024, "{} bytes", written.len());
    assert_eq!(written.lines().count(), 1);
    let state: Value = serde_json::from_str(&written).expect("json");
    let agents = state["agents"].as_object().expect("agents");
    assert!(agents.contains_key("a1") && agents.contains_key("a2"));
    assert!(agents.contains_key("old-199") && !agents.contains_key("old-000"));
}

/// A subagent's stop (one that asks for a missing ack too) drops its block
/// from the session's state, keeping the ids it showed, so a long session's
/// state holds the blocks of its running subagents only; a start of the
/// same subagent after its stop (a resume: its context has the block)
/// answers nothing and records nothing.
#[test]
fn a_stopped_subagents_block_leaves_the_state() {
    let (env, file) = spawned_in_codex();
    let root = env.root.clone();
    let v = answer(&hook(
        &env,
        "codex",
        "subagent-start",
        &start(&root, "s", "a1", "coder"),
    ));
    assert_eq!(shown_ids(&v), ["run-tests-first"]);
    assert!(
        (last_state(&file)["agents"]["a1"]["block"].as_str())
            .is_some_and(|b| b.contains("run-tests-first"))
    );
    // Its stop is asked for the missing ack: the block goes, the ids it
    // showed stay (its later tool calls are not told them again).
    let asked = answer(&hook(
        &env,
        "codex",
        "subagent-stop",
        &stop(&root, "s", "a1", "Done.", false),
    ));
    assert_eq!(asked["decision"], "block");
    let state = last_state(&file);
    assert_eq!(state["agents"]["a1"]["block"], "", "{state}");
    assert_eq!(state["agents"]["a1"]["showed"], json!(["run-tests-first"]));
    let stopped = hook(
        &env,
        "codex",
        "subagent-stop",
        &stop(
            &root,
            "s",
            "a1",
            "Done; the whole suite passes.\nKNOWLEDGE_APPLIED:run-tests-first",
            true,
        ),
    );
    stopped.success();
    let state = last_state(&file);
    assert_eq!(state["agents"]["a1"]["block"], "", "{state}");
    assert_eq!(state["agents"]["a1"]["showed"], json!(["run-tests-first"]));
    assert!(state["agents"]["a1"]["delegation"].is_string(), "{state}");
    assert_eq!(of_kind(&env, "ack").len(), 1);
    silent(&hook(
        &env,
        "codex",
        "subagent-start",
        &start(&root, "s", "a1", "coder"),
    ));
    assert_eq!(of_kind(&env, "shown").len(), 1);
}

/// No `.swarm/`: a spawn leaves no state behind. Session files untouched
/// for a week are swept at a session's start; a live one is kept.
#[test]
fn state_is_only_kept_where_git_swarm_is_and_old_sessions_are_swept() {
    let env = TestEnv::new();
    silent(&hook_in(
        &env,
        &env.root,
        "codex",
        "pre-tool-use",
        &fixture("codex", "pre-tool-use", &env.root),
    ));
    assert!(!env.root.join(".git/swarm").exists());

    let env = repo();
    let root = env.root.clone();
    silent(&hook(
        &env,
        "codex",
        "pre-tool-use",
        &spawn(&root, "live", "Fix the parser", "coder"),
    ));
    let dir = root.join(".git/swarm/agents");
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(8 * 24 * 3600);
    for name in [
        "00000000000000aa.json",
        "00000000000000aa.lock",
        "00000000000000bb.lock",
    ] {
        let f = std::fs::File::create(dir.join(name)).expect("create");
        f.set_modified(old).expect("mtime");
    }
    answer(&hook(
        &env,
        "codex",
        "session-start",
        &claude("SessionStart", json!({"cwd": root, "source": "startup"})),
    ));
    let mut left: Vec<String> = std::fs::read_dir(&dir)
        .expect("dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left.len(), 2, "{left:?}");
    assert!(
        left.iter().all(|n| !n.starts_with("00000000000000")),
        "{left:?}"
    );
}

/// A subagent that starts in a linked worktree is recorded in the pending
/// log the clone's worktrees share (not in either work tree); its stop
/// from the main work tree acks it. Once that worktree is
/// removed, a stop says so in one line and exits 0.
#[test]
fn a_subagent_started_in_a_linked_worktree_and_one_whose_worktree_is_gone() {
    let env = repo();
    let root = env.root.clone();
    let wt = env.tmp.path().join("wt");
    let wt_str = wt.to_str().expect("utf-8").to_owned();
    env.git(&["worktree", "add", "-q", "-b", "side", &wt_str]);
    for agent in ["w1", "w2"] {
        silent(&hook_in(
            &env,
            &wt,
            "codex",
            "pre-tool-use",
            &spawn(&wt, "s", "Fix the parser", "coder").to_string(),
        ));
        let v = answer(&hook_in(
            &env,
            &wt,
            "codex",
            "subagent-start",
            &start(&wt, "s", agent, "coder").to_string(),
        ));
        assert!(context_of(&v).contains("run-tests-first"));
    }
    let shown: Vec<Value> = events(&env)
        .into_iter()
        .filter(|e| e["kind"] == "shown")
        .collect();
    assert_eq!(shown.len(), 2);
    assert_eq!(tracked_files_in(&wt), 0, "nothing written in the worktree");
    assert_eq!(tracked_files_in(&root), 0, "nor in the main work tree");
    silent(&hook(
        &env,
        "codex",
        "subagent-stop",
        &stop(
            &root,
            "s",
            "w1",
            "Done. KNOWLEDGE_APPLIED:run-tests-first",
            false,
        ),
    ));
    let acks: Vec<Value> = events(&env)
        .into_iter()
        .filter(|e| e["kind"] == "ack")
        .collect();
    assert_eq!(acks.len(), 1);
    assert_eq!(acks[0]["delegation"], shown[0]["id"]);

    env.git(&["worktree", "remove", "--force", &wt_str]);
    let run = hook(
        &env,
        "codex",
        "subagent-stop",
        &stop(&root, "s", "w2", "Done.", false),
    );
    run.success();
    assert_eq!(run.stdout, "");
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.snapshot());
    assert!(
        run.stderr
            .contains("the work tree $TMP/wt where subagent `w2` was shown delegation")
            && run.stderr.contains("is gone"),
        "{}",
        run.snapshot()
    );
    // Said once: the entry went with its work tree.
    silent(&hook(
        &env,
        "codex",
        "subagent-stop",
        &stop(&root, "s", "w2", "Done.", false),
    ));
}

/// A subagent whose state entry cannot be written is not recorded as a
/// delegation either: nothing could ever ack it.
#[test]
fn no_delegation_without_its_state_entry() {
    let env = repo();
    std::fs::create_dir_all(env.root.join(".git/swarm")).expect("mkdir");
    std::fs::write(env.root.join(".git/swarm/agents"), "not a folder").expect("write");
    let run = hook_in(
        &env,
        &env.root,
        "opencode",
        "subagent-start",
        &fixture("opencode", "subagent-start", &env.root),
    );
    run.success();
    assert_eq!(run.stdout, "", "{}", run.snapshot());
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.snapshot());
    assert!(run.stderr.starts_with("warning: "), "{}", run.snapshot());
    assert!(of_kind(&env, "shown").is_empty());
}

/// Cursor: a failed tool call (postToolUseFailure, its `error_message`)
/// becomes an insight candidate in the workspace the payload names,
/// wherever the hook runs; its subagent events are not taken.
#[test]
fn cursor_failures_are_reflected_and_its_subagent_events_left_alone() {
    let env = repo();
    let elsewhere = env.tmp.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).expect("mkdir");
    silent(&hook_in(
        &env,
        &elsewhere,
        "cursor",
        "post-tool-use",
        &fixture("cursor", "post-tool-use-failure", &env.root),
    ));
    let candidates = env.read(".git/swarm/local/candidates.jsonl");
    assert_eq!(candidates.lines().count(), 1, "{candidates}");
    assert!(candidates.contains("Cannot find module"), "{candidates}");
    // Cursor's `session_id` beside `conversation_id`, and a `cwd` that is
    // no string, do not lose the workspace.
    let mut p: Value =
        serde_json::from_str(&fixture("cursor", "post-tool-use-failure", &env.root)).expect("json");
    p["session_id"] = p["conversation_id"].clone();
    p["cwd"] = json!(7);
    p["tool_input"] = json!({"command": "cargo build"});
    p["error_message"] = json!("error[E0425]: cannot find value `x` in this scope");
    silent(&hook_in(
        &env,
        &elsewhere,
        "cursor",
        "post-tool-use",
        &p.to_string(),
    ));
    let candidates = env.read(".git/swarm/local/candidates.jsonl");
    assert_eq!(candidates.lines().count(), 2, "{candidates}");
    for event in ["pre-tool-use", "subagent-start", "subagent-stop"] {
        let run = hook_in(
            &env,
            &env.root,
            "cursor",
            event,
            &json!({"conversation_id": "c", "workspace_roots": [env.root], "tool_name": "Task",
                    "tool_input": {"prompt": "x", "subagent_type": "coder"}, "subagent_id": "s1",
                    "subagent_type": "coder"})
            .to_string(),
        );
        run.success();
        assert_eq!(run.stdout, "", "{event}: {}", run.snapshot());
        assert!(state_files(&env).is_empty(), "{event}");
    }
    assert!(of_kind(&env, "shown").is_empty());
}

#[test]
fn a_post_tool_use_run_twice_for_one_call_keeps_one_candidate() {
    let env = TestEnv::initialised();
    let root = env.root.clone();
    let failed = |id: &str| {
        claude(
            "PostToolUseFailure",
            json!({"cwd": root, "tool_name": "Bash", "tool_use_id": id,
                   "tool_input": {"command": "cargo test"},
                   "error": "Exit code 101\ntest parse::flaky ... FAILED"}),
        )
    };
    // Cursor runs Claude Code's hooks beside its own: the same call twice.
    silent(&hook(
        &env,
        "claude-code",
        "post-tool-use",
        &failed("toolu_a"),
    ));
    silent(&hook(
        &env,
        "claude-code",
        "post-tool-use",
        &failed("toolu_a"),
    ));
    let opencode = json!({"tool": "bash", "sessionID": "ses_1", "callID": "call_1",
        "args": {"command": "make"},
        "output": {"title": "make", "output": "make: *** [all] Error 2\n", "metadata": {"exit": 2}}});
    silent(&hook(&env, "opencode", "post-tool-use", &opencode));
    silent(&hook(&env, "opencode", "post-tool-use", &opencode));
    silent(&hook(
        &env,
        "claude-code",
        "post-tool-use",
        &failed("toolu_b"),
    ));
    let ids: Vec<Value> = env
        .read(".git/swarm/local/candidates.jsonl")
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("json")["call_id"].clone())
        .collect();
    assert_eq!(ids, [json!("toolu_a"), json!("call_1"), json!("toolu_b")]);
}

/// Out of the box (`git swarm init`, nothing else), the subagent types the
/// harnesses spawn by default get the template's coder directives; a
/// repository's `[agent_types]` maps a type elsewhere; a type that maps to
/// a role without directives is warned about once a session; and `agents
/// status` lists the types seen.
#[test]
fn the_harnesses_default_subagents_get_the_template_s_directives() {
    let env = TestEnv::initialised();
    let root = env.root.clone();
    for (harness, kind) in [
        ("claude-code", "general-purpose"),
        ("codex", "default"),
        ("codex", "worker"),
    ] {
        let run = hook(
            &env,
            harness,
            "subagent-start",
            &json!({"session_id": format!("s-{kind}"), "cwd": root, "agent_id": format!("a-{kind}"),
                    "agent_type": kind, "hook_event_name": "SubagentStart"}),
        );
        let ids = shown_ids(&answer(&run));
        assert!(
            ids.contains(&"no-private-keys".to_owned()),
            "{harness} {kind}: {ids:?}"
        );
    }
    // opencode's task tool with no subagent_type runs `general`.
    let run = hook(
        &env,
        "opencode",
        "subagent-start",
        &json!({"tool": "task", "sessionID": "o1", "callID": "c1",
                "args": {"description": "d", "prompt": "write the parser"}}),
    );
    let v = answer(&run);
    assert!(
        v["prepend"]
            .as_str()
            .expect("prepend")
            .contains("- id: no-private-keys"),
        "{v}"
    );

    // Explore maps to `explorer`, which no template directive is scoped to:
    // one warning in the session, not one per subagent.
    let explore = |agent: &str| {
        hook(
            &env,
            "claude-code",
            "subagent-start",
            &json!({"session_id": "s-explore", "cwd": root, "agent_id": agent, "agent_type": "Explore"}),
        )
    };
    let first = explore("e1");
    first.success();
    assert_eq!(first.stdout, "");
    assert!(
        first.stderr.contains("subagent type `Explore` maps to role `explorer`, and no directive is scoped to `explorer`"),
        "{}",
        first.snapshot()
    );
    silent(&explore("e2"));

    // The repository maps Explore to coder: the same type now gets lessons.
    let config = env.read(".swarm/config.toml");
    env.write(
        ".swarm/config.toml",
        format!("{config}\"Explore\" = \"coder\"\n"),
    );
    let ids = shown_ids(&answer(&explore("e3")));
    assert!(ids.contains(&"no-private-keys".to_owned()), "{ids:?}");

    // A failing tool call of a general-purpose subagent is kept with the
    // role its directives come from.
    silent(&hook(
        &env,
        "claude-code",
        "post-tool-use",
        &claude(
            "PostToolUseFailure",
            json!({"cwd": root, "agent_id": "a-general-purpose", "agent_type": "general-purpose",
                   "tool_name": "Bash", "tool_use_id": "toolu_fail",
                   "tool_input": {"command": "cargo test"},
                   "error": "Exit code 101\nerror: test failed"}),
        ),
    ));
    let candidate: Value = serde_json::from_str(
        env.read(".git/swarm/local/candidates.jsonl")
            .lines()
            .last()
            .expect("a candidate"),
    )
    .expect("json");
    assert_eq!(candidate["role"], "coder", "{candidate}");

    let status = env.swarm(&["agents", "status", "--format", "json"]);
    let v: Value = serde_json::from_str(&status.stdout).expect("json");
    let seen: Vec<(String, String, String)> = v["agent_types"]
        .as_array()
        .expect("agent_types")
        .iter()
        .map(|t| {
            (
                t["agent_type"].as_str().unwrap_or_default().to_owned(),
                t["role"].as_str().unwrap_or_default().to_owned(),
                t["mapped_by"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    for want in [
        ("Explore", "coder", "config"),
        ("general-purpose", "coder", "built-in"),
        ("default", "coder", "built-in"),
        ("general", "coder", "built-in"),
    ] {
        assert!(
            seen.contains(&(want.0.into(), want.1.into(), want.2.into())),
            "{want:?} in {seen:?}"
        );
    }
}

/// `--agents` takes a harness's spelling and says the role it maps to; a
/// file that names one is quarantined with the role to write instead.
#[test]
fn add_takes_a_harness_s_agent_type_and_says_its_role() {
    let env = TestEnv::initialised();
    let run = env.swarm(&[
        "add",
        "--lesson",
        "Never push straight to the main branch of this repository",
        "--agents",
        "general-purpose,Explore,reviewer",
        "--forbid",
        "git push origin main",
    ]);
    run.success();
    assert!(
        run.stderr.contains("`general-purpose` is an agent type (Claude Code) that git-swarm maps to the role `coder`"),
        "{}",
        run.snapshot()
    );
    let added = std::fs::read_dir(env.root.join(".swarm/directives"))
        .expect("directives")
        .flatten()
        .map(|e| e.path())
        .find(|p| p.to_string_lossy().contains("never-push"))
        .expect("the new directive");
    let text = std::fs::read_to_string(added).expect("read it");
    assert!(
        text.contains("applies_to_agents = [\"coder\", \"explorer\", \"reviewer\"]"),
        "{text}"
    );
    env.write(
        "lesson.toml",
        "lesson = \"Keep every migration reversible with a down step\"\napplies_to_agents = [\"general-purpose\"]\nrequired_actions = [\"write the down migration\"]\n",
    );
    let run = env.swarm(&["add", "--from", "lesson.toml"]);
    run.code(1);
    assert!(
        run.stderr.contains("`general-purpose` is an agent type (Claude Code) that git-swarm maps to the role `coder`: write `coder`"),
        "{}",
        run.snapshot()
    );
}

const CAPTURED: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/agents/captured"
);

/// A payload a real harness sent (tests/fixtures/agents/captured/), made
/// to point at `dir`: its `cwd` replaced.
fn captured_payload(name: &str, dir: &Path) -> Value {
    let text = std::fs::read_to_string(format!("{CAPTURED}/{name}"))
        .unwrap_or_else(|e| panic!("captured payload {name}: {e}"));
    let mut v: Value = serde_json::from_str(&text).expect("captured JSON");
    v["cwd"] = json!(dir);
    v
}

/// Gemini CLI 0.61.0's subagents run as the `invoke_agent` tool: its
/// BeforeTool gives the subagent its block (the whole input handed back,
/// the block before the task), its AfterTool records the subagent's acks.
#[test]
fn a_gemini_subagent_gets_its_block_through_invoke_agent_and_acks_it() {
    let env = TestEnv::initialised();
    let before = captured_payload("gemini-0.61.0/pre-tool-use-invoke-agent.json", &env.root);
    let v = answer(&hook(&env, "gemini", "subagent-start", &before));
    let input = &v["hookSpecificOutput"]["tool_input"];
    assert_eq!(v["hookSpecificOutput"]["hookEventName"], "BeforeTool");
    assert_eq!(input["agent_name"], "generalist", "{v}");
    let prompt = input["prompt"].as_str().expect("prompt");
    assert!(
        prompt.starts_with("<delegate_knowledge_directives")
            && prompt.contains("- id: no-private-keys")
            && prompt.ends_with("\n\ngs36-sub-task: run the checks and report"),
        "{prompt}"
    );
    let after = captured_payload("gemini-0.61.0/post-tool-use-invoke-agent.json", &env.root);
    silent(&hook(&env, "gemini", "post-tool-use", &after));
    let events = events(&env);
    let shown = (events.iter())
        .find(|e| e["kind"] == "shown")
        .expect("shown");
    let acks: Vec<&Value> = events.iter().filter(|e| e["kind"] == "ack").collect();
    assert_eq!(acks.len(), 1, "{events:#?}");
    assert_eq!(acks[0]["delegation"], shown["id"]);
    assert_eq!(acks[0]["directive"], "no-private-keys");
    assert_eq!(acks[0]["status"], "applied");
    // The tool's own return is no failure to reflect on.
    assert!(!env.root.join(".git/swarm/local/candidates.jsonl").exists());
}

/// Claude Code: two foreground spawns of one type in one turn start
/// together and name no spawn, and their launches come only after they
/// stopped. Each task carries its own block (PreToolUse), the starts add
/// nothing, and each stop finds its delegation in its own transcript.
#[test]
fn claude_code_foreground_subagents_ack_the_delegation_their_task_carried() {
    let env = ranking_repo();
    let root = env.root.clone();
    let parser = "change the parser grammar and run parser grammar fuzzing";
    let migration = "write the database migration, database migration backup first";
    let mut tasks = Vec::new();
    for (id, task) in [("t1", parser), ("t2", migration)] {
        let mut cmd = env.command(common::bin(), &root);
        cmd.args(["hook", "agent", "claude-code", "pre-tool-use"])
            .env("GIT_SWARM_NOW", tick())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped());
        let mut child = cmd.spawn().expect("spawn");
        use std::io::Write;
        let payload = spawn_call(&root, "fg", task, "tester", id).to_string();
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(payload.as_bytes())
            .expect("write");
        let out = child.wait_with_output().expect("wait");
        let v: Value = serde_json::from_slice(&out.stdout).expect("an answer");
        tasks.push(
            v["hookSpecificOutput"]["updatedInput"]["prompt"]
                .as_str()
                .expect("prompt")
                .to_owned(),
        );
    }
    assert!(tasks[0].contains("- id: fuzz-the-parser"), "{}", tasks[0]);
    assert!(
        tasks[1].contains("- id: back-up-before-migrating"),
        "{}",
        tasks[1]
    );
    for r in hooks_at_once(
        &env,
        "claude-code",
        "subagent-start",
        &[
            start(&root, "fg", "b", "tester"),
            start(&root, "fg", "a", "tester"),
        ],
    ) {
        silent(&r);
    }
    // Each subagent's transcript opens with its task, as Claude Code writes it.
    let shown = of_kind(&env, "shown");
    let delegation_of = |task: &str| -> String {
        let at = task.find("delegation=\"").expect("delegation") + "delegation=\"".len();
        task[at..at + 26].to_owned()
    };
    for (agent, task, ack) in [
        ("a", &tasks[0], "fuzz-the-parser"),
        ("b", &tasks[1], "back-up-before-migrating"),
    ] {
        let transcript = env.tmp.path().join(format!("agent-{agent}.jsonl"));
        let line = json!({"type": "user", "message": {"role": "user", "content": task}});
        std::fs::write(&transcript, format!("{line}\n")).expect("transcript");
        let mut p = stop(
            &root,
            "fg",
            agent,
            &format!("Done.\nKNOWLEDGE_APPLIED:{ack}"),
            false,
        );
        p["agent_transcript_path"] = json!(transcript);
        silent(&hook(&env, "claude-code", "subagent-stop", &p));
        let acks = of_kind(&env, "ack");
        let mine = (acks.iter())
            .find(|a| a["directive"] == ack)
            .unwrap_or_else(|| panic!("{agent}'s ack: {acks:#?}"));
        assert_eq!(
            mine["delegation"].as_str(),
            Some(delegation_of(task).as_str())
        );
        assert!(
            shown.iter().any(|s| s["id"] == mine["delegation"]),
            "{mine} pairs with a shown event"
        );
    }
}

/// Review findings, each reproduced: the main agent of `claude --agent X`
/// names X on every payload, and the block of the subagent it spawns is
/// still the subagent's; a spawn whose input is no object neither panics
/// nor loses its block; a second `invoke_agent` with the same task is a new
/// Gemini subagent with a delegation of its own.
#[test]
fn spawns_are_read_for_the_subagent_whatever_the_payload() {
    let env = TestEnv::initialised();
    let root = env.root.clone();
    // The caller is a `Plan` agent; the spawn names no type (general-purpose).
    let mut p = spawn_call(&root, "as-plan", "fix the parser", "general-purpose", "t1");
    p["agent_type"] = json!("Plan");
    p["tool_input"]
        .as_object_mut()
        .expect("input")
        .remove("subagent_type");
    let v = answer(&hook(&env, "claude-code", "pre-tool-use", &p));
    let task = v["hookSpecificOutput"]["updatedInput"]["prompt"]
        .as_str()
        .expect("prompt");
    assert!(task.contains("for the coder role"), "{task}");
    assert!(task.contains("- id: no-private-keys"), "{task}");

    for odd in [json!("a string"), json!([1, 2]), json!(5)] {
        let mut p = spawn_call(&root, "odd", "x", "general-purpose", "t-odd");
        p["tool_input"] = odd.clone();
        let run = hook(&env, "claude-code", "pre-tool-use", &p);
        run.success();
        assert_eq!(run.stdout, "", "{odd}: {}", run.snapshot());
        let mut g = captured_payload("gemini-0.61.0/pre-tool-use-invoke-agent.json", &root);
        g["tool_input"] = odd.clone();
        let run = hook(&env, "gemini", "subagent-start", &g);
        run.success();
        assert_eq!(run.stdout, "", "{odd}: {}", run.snapshot());
    }

    let before = captured_payload("gemini-0.61.0/pre-tool-use-invoke-agent.json", &root);
    let after = captured_payload("gemini-0.61.0/post-tool-use-invoke-agent.json", &root);
    let mut delegations = Vec::new();
    for _ in 0..2 {
        answer(&hook(&env, "gemini", "subagent-start", &before));
        silent(&hook(&env, "gemini", "post-tool-use", &after));
        let shown = of_kind(&env, "shown");
        delegations.push(shown.last().expect("shown")["id"].clone());
    }
    assert_ne!(delegations[0], delegations[1], "a new delegation each call");
    let acks = of_kind(&env, "ack");
    assert_eq!(acks.len(), 2, "{acks:#?}");
    assert_eq!(acks[1]["delegation"], delegations[1]);
}

/// A hook that cannot finish in time (here the log's lock is held by
/// another process, and its lock wait is longer than the hook's deadline)
/// gives up before the harness would kill it: nothing on stdout, one
/// warning, exit 0 (issue 37).
#[test]
fn a_hook_that_cannot_finish_in_time_fails_open_before_the_harness_limit() {
    let env = repo();
    let held = common::hold_the_logs_lock(&env);
    let before = env.event_lines().len();
    let started = std::time::Instant::now();
    let run = hook_env(
        &env,
        &env.root,
        "claude-code",
        "pre-tool-use",
        &fixture("claude-code", "pre-tool-use", &env.root),
        &[("GIT_SWARM_HOOK_DEADLINE_MS", "300")],
    );
    let took = started.elapsed();
    drop(held);
    run.success();
    assert_eq!(run.stdout, "", "{}", run.snapshot());
    assert!(
        run.stderr.contains(
            "warning: git-swarm's claude-code pre-tool-use hook gave up after 300 ms and answered nothing; the session goes on without it"
        ),
        "{}",
        run.snapshot()
    );
    assert!(
        took < std::time::Duration::from_secs(5),
        "gave up at its deadline, not the lock's 10 s: {took:?}"
    );
    assert_eq!(env.event_lines().len(), before, "nothing was recorded");
}

/// A subagent whose stop never comes (it died, was killed, or the harness
/// skipped its stop) does not leave its delegation open: the next session
/// start ends it once it is [`DELEGATION_TTL`] old, and at once when its own
/// session is resumed by a new process; its criticals are recorded
/// `unacknowledged` once, whatever comes after (issue 38).
#[test]
fn a_delegation_whose_stop_never_comes_is_ended_once() {
    let env = repo();
    let root = env.root.clone();
    let at = |t: &str, event: &str, payload: Value| {
        hook_env(
            &env,
            &root,
            "claude-code",
            event,
            &payload.to_string(),
            &[("GIT_SWARM_NOW", t)],
        )
    };
    let session_start = |session: &str, source: &str| {
        claude(
            "SessionStart",
            json!({"session_id": session, "cwd": root, "source": source}),
        )
    };
    let unacknowledged = |env: &TestEnv| -> Vec<Value> { common::of_kind(env, "unacknowledged") };
    // A coder is shown the critical `run-tests-first`, and never stops.
    at(
        "2026-11-24T10:00:00Z",
        "pre-tool-use",
        spawn_call(&root, "lost", "fix the flaky test", "coder", "toolu_lost"),
    )
    .success();
    silent(&at(
        "2026-11-24T10:00:01Z",
        "subagent-start",
        start(&root, "lost", "agent-lost", "coder"),
    ));
    let delegation = common::of_kind(&env, "shown")[0]["id"].clone();
    // Another session an hour later: the subagent may still be at work.
    at(
        "2026-11-24T11:00:00Z",
        "session-start",
        session_start("next", "startup"),
    )
    .success();
    assert_eq!(unacknowledged(&env), Vec::<Value>::new());
    // Past the time bound: ended, its critical recorded unacknowledged.
    let run = at(
        "2026-11-24T14:30:00Z",
        "session-start",
        session_start("later", "startup"),
    );
    run.success();
    let ended = unacknowledged(&env);
    assert_eq!(ended.len(), 1, "{ended:#?}\n{}", run.snapshot());
    assert_eq!(
        (&ended[0]["directive"], &ended[0]["delegation"]),
        (&json!("run-tests-first"), &delegation)
    );
    // Never twice: not by the next start, nor by a stop that comes late.
    at(
        "2026-11-24T15:00:00Z",
        "session-start",
        session_start("again", "startup"),
    )
    .success();
    silent(&at(
        "2026-11-24T15:00:05Z",
        "subagent-stop",
        stop(&root, "lost", "agent-lost", "Done.", true),
    ));
    assert_eq!(unacknowledged(&env).len(), 1, "{:#?}", unacknowledged(&env));
    let status = env.swarm(&["status"]);
    assert!(
        status.stdout.contains("run-tests-first"),
        "status names the unacknowledged critical:\n{}",
        status.stdout
    );

    // A session resumed by a new process: its subagents are gone, at once.
    at(
        "2026-11-24T16:00:00Z",
        "pre-tool-use",
        spawn_call(&root, "resumed", "add the loader", "coder", "toolu_resumed"),
    )
    .success();
    silent(&at(
        "2026-11-24T16:00:01Z",
        "subagent-start",
        start(&root, "resumed", "agent-resumed", "coder"),
    ));
    at(
        "2026-11-24T16:05:00Z",
        "session-start",
        session_start("resumed", "compact"),
    )
    .success();
    assert_eq!(unacknowledged(&env).len(), 1, "a compaction keeps it open");
    at(
        "2026-11-24T16:10:00Z",
        "session-start",
        session_start("resumed", "resume"),
    )
    .success();
    assert_eq!(unacknowledged(&env).len(), 2, "{:#?}", unacknowledged(&env));
}

/// Codex with its multi-agent v2 feature (0.171.0, captured): the spawning
/// tool is `collaborationspawn_agent`, and its PostToolUse names no agent id
/// (`{"task_name": "/root/loader"}`) and may come before the child's start.
/// The spawn waits for that start, which gets its task's directive
/// (issue 38).
#[test]
fn a_codex_multi_agent_v2_spawn_keeps_its_task_for_its_start() {
    let env = repo_without_directives();
    let config = env.read(".swarm/config.toml").replace(
        "delegate_max_inject_count = 8",
        "delegate_max_inject_count = 1",
    );
    env.write(".swarm/config.toml", config);
    directive(
        &env,
        "tokenizer-without-allocation",
        "lesson = \"Keep the parser's tokenizer free of allocation in its inner loop\"\napplies_to_agents = [\"coder\"]\ntriggers = [\"flaky parser tokenizer\"]\nrequired_actions = [\"run the tokenizer benchmark\"]",
    );
    directive(
        &env,
        "small-commits",
        "lesson = \"Keep commits small, each one building and passing the tests\"\npriority = \"high\"\napplies_to_agents = [\"coder\"]\nrequired_actions = [\"commit each step on its own\"]",
    );
    env.git(&["add", "-A"]);
    env.git(&["commit", "-q", "-m", "directives"]);
    let captured =
        |name: &str| captured_payload(&format!("codex-0.171.0/{name}.json"), &env.root).to_string();
    let pre = captured("pre-tool-use-collaboration-spawn-agent");
    assert!(
        pre.contains("\"tool_name\":\"collaborationspawn_agent\""),
        "{pre}"
    );
    silent(&hook_in(&env, &env.root, "codex", "pre-tool-use", &pre));
    silent(&hook_in(
        &env,
        &env.root,
        "codex",
        "post-tool-use",
        &captured("post-tool-use-collaboration-spawn-agent"),
    ));
    // The child's start, captured in another run: made this session's.
    let mut start: Value = serde_json::from_str(&captured("subagent-start")).expect("json");
    let spawn: Value = serde_json::from_str(&pre).expect("json");
    start["session_id"] = spawn["session_id"].clone();
    let start = answer(&hook_in(
        &env,
        &env.root,
        "codex",
        "subagent-start",
        &start.to_string(),
    ));
    assert_eq!(
        shown_ids(&start),
        ["tokenizer-without-allocation"],
        "{start:#}"
    );
}

/// Codex leaves `agent_type` out of a start unless the user defines roles:
/// the start is of its default type, as its spawn would be (issue 39).
#[test]
fn a_codex_start_without_a_type_is_of_the_default_type() {
    let env = repo();
    let mut payload = start(&env.root, "s", "agent-1", "coder");
    payload
        .as_object_mut()
        .expect("object")
        .remove("agent_type");
    let run = hook(&env, "codex", "subagent-start", &payload);
    assert!(!run.stderr.contains("maps to no role"), "{}", run.stderr);
    assert_eq!(shown_ids(&answer(&run)), ["run-tests-first"]);
}
