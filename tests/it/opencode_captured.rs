//! The payloads git-swarm's opencode plugin sent from real opencode 1.18.33
//! runs (`tests/fixtures/agents/captured/opencode-1.18.33/`, captured by the
//! real-harness suite), fed to the real binary: a task that failed, an MCP
//! tool's result and error, calls that threw, a compacted session.

use serde_json::Value;

use crate::common::{Run, TestEnv};

const CAPTURED: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/agents/captured/opencode-1.18.33"
);

fn captured(name: &str) -> String {
    std::fs::read_to_string(format!("{CAPTURED}/{name}.json"))
        .unwrap_or_else(|e| panic!("captured payload {name}: {e}"))
}

fn hook(env: &TestEnv, event: &str, payload: &str) -> Run {
    env.swarm_with(
        &["hook", "agent", "opencode", event],
        &[],
        Some(payload.as_bytes()),
    )
}

fn events_of(env: &TestEnv, kind: &str) -> Vec<Value> {
    let run = env.swarm(&["log", "--format", "json"]);
    run.success();
    let all: Vec<Value> = serde_json::from_str(&run.stdout).expect("the log is JSON");
    all.into_iter().filter(|e| e["kind"] == kind).collect()
}

/// `reflect micro --payload opencode --format json` on `payload`.
fn micro(env: &TestEnv, payload: &str) -> Value {
    let args = [
        "reflect",
        "micro",
        "--payload",
        "opencode",
        "--format",
        "json",
    ];
    let run = env.swarm_with(&args, &[], Some(payload.as_bytes()));
    run.success();
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}:\n{}", run.snapshot()))
}

/// A task whose subagent failed reaches git-swarm as a stop with `error`
/// and no final message: the critical it was shown is unacknowledged at
/// once, and a second report of the same end records nothing more.
#[test]
fn a_failed_task_ends_its_delegation_unacknowledged_once() {
    let env = TestEnv::initialised();
    let start = hook(
        &env,
        "subagent-start",
        &captured("subagent-start-failed-task"),
    );
    start.success();
    assert!(
        start.stdout.contains("no-private-keys"),
        "{}",
        start.snapshot()
    );
    let shown = events_of(&env, "shown");
    assert_eq!(shown.len(), 1);

    let stop = captured("subagent-stop-failed-task");
    for _ in 0..2 {
        let run = hook(&env, "subagent-stop", &stop);
        run.success();
        assert_eq!(run.stdout, "", "opencode cannot continue a subagent");
    }
    let unack = events_of(&env, "unacknowledged");
    assert_eq!(unack.len(), 1, "{unack:#?}");
    assert_eq!(unack[0]["directive"], "no-private-keys");
    assert_eq!(unack[0]["delegation"], shown[0]["id"]);
    let status = env.swarm(&["status"]);
    status.success();
    assert!(
        status
            .stdout
            .contains("Unacknowledged criticals:\n  no-private-keys  1 time(s)\n"),
        "{}",
        status.stdout
    );
}

/// What `reflect micro` makes of each tool call as opencode's plugin sent
/// it: an MCP result (`{content, structuredContent, isError: false}`) is a
/// success, an MCP error (opencode throws it: the plugin sends the tool
/// part's `error`) a failure kept as a candidate, a `read` of a missing
/// file that threw a failure, and one the permission system refused
/// `blocked`.
#[test]
fn opencode_tool_calls_classify_as_they_ended() {
    let env = TestEnv::initialised();
    for (name, class) in [
        ("post-tool-use-mcp-result", "success"),
        ("post-tool-use-mcp-error", "failure"),
        ("post-tool-use-read-missing", "failure"),
        ("post-tool-use-read-refused", "blocked"),
        ("post-tool-use-bash-exit-3", "failure"),
    ] {
        let out = micro(&env, &captured(name));
        assert_eq!(out["class"], class, "{name}: {out:#}");
    }
    let text = env.read(".git/swarm/local/candidates.jsonl");
    let tools: Vec<String> = (text.lines())
        .map(|l| serde_json::from_str::<Value>(l).expect("a candidate is JSON"))
        .map(|c| c["tool"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(tools, ["git-swarm_ack", "read", "read", "bash"]);
    // The MCP error's evidence is git-swarm's own message, not the wrapper.
    let candidate: Value =
        serde_json::from_str(text.lines().next().expect("a line")).expect("json");
    assert!(
        candidate["excerpt"]
            .as_str()
            .is_some_and(|e| e.contains("no delegation")),
        "{candidate:#}"
    );
}

/// An MCP tool's result with `isError: true` that reaches
/// `tool.execute.after` (opencode 1.18.33 throws it instead, but the MCP
/// result's shape allows it) is a failure whose error is its text.
#[test]
fn an_mcp_result_marked_as_error_is_a_failure() {
    let env = TestEnv::initialised();
    let mut v: Value =
        serde_json::from_str(&captured("post-tool-use-mcp-result")).expect("captured JSON");
    v["callID"] = "call_is_error".into();
    v["output"]["isError"] = true.into();
    v["output"]["content"] =
        serde_json::json!([{"type": "text", "text": "error: the index is locked"}]);
    let out = micro(&env, &v.to_string());
    assert_eq!(out["class"], "failure", "{out:#}");
}

/// After opencode compacts the main session, the plugin asks for its
/// briefing again (`session.compacted`, the main agent `build`): the
/// coordinator's.
#[test]
fn a_compacted_main_session_is_briefed_as_the_coordinator() {
    let env = TestEnv::initialised();
    let lesson = env.tmp.path().join("coordinator.toml");
    std::fs::write(
        &lesson,
        "id = \"coordinator-splits-work\"\nlesson = \"Split the work into tasks that each touch one module before delegating any of them\"\npriority = \"high\"\napplies_to_agents = [\"coordinator\"]\nrequired_actions = [\"name the module each delegated task touches\"]\n",
    )
    .expect("write directive");
    env.swarm(&["add", "--from", &lesson.to_string_lossy()])
        .success();
    env.git(&["add", "-A", ".swarm"]);
    env.git(&["commit", "-q", "-m", "a coordinator lesson"]);
    let run = hook(&env, "session-start", &captured("session-start-compacted"));
    run.success();
    let v: Value = serde_json::from_str(&run.stdout).expect("an answer");
    let context = v["context"].as_str().expect("context");
    assert!(context.contains("coordinator-splits-work"), "{context}");
    assert!(!context.contains("no-private-keys"), "{context}");
}
