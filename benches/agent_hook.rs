//! `git-swarm hook agent claude-code <event>`, whole process, on typical
//! Claude Code payloads, beside `git rev-parse HEAD` on the same repository
//! (100 directives, 2,000 events): each event of a subagent's life in the
//! order a session sends them, one subagent per round.
//!
//! `cargo bench --bench agent_hook`; `SWARM_BENCH_RUNS` changes the number
//! of rounds each median is taken over.

use std::io::Write;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

#[path = "common/mod.rs"]
mod common;
use common::{env_num, ms};
use serde_json::json;

const EVENTS: [&str; 5] = [
    "session-start",
    "pre-tool-use",
    "subagent-start",
    "post-tool-use",
    "subagent-stop",
];

/// The payload Claude Code sends for `event`, for subagent `agent`.
fn payload(event: &str, repo: &Path, agent: usize) -> String {
    let agent_id = format!("agent-{agent:05}");
    let mut p = json!({
        "session_id": "bench-session",
        "transcript_path": "/home/u/.claude/projects/p/bench.jsonl",
        "cwd": repo,
        "permission_mode": "default",
    });
    let fields = match event {
        "session-start" => json!({"hook_event_name": "SessionStart", "source": "startup"}),
        "pre-tool-use" => json!({
            "hook_event_name": "PreToolUse", "tool_name": "Agent", "tool_use_id": "toolu_spawn",
            "tool_input": {"description": "Fix the parser", "subagent_type": "coder",
                           "prompt": "Fix the flaky parser test in src/parse.rs and add a regression test"},
        }),
        "subagent-start" => {
            json!({"hook_event_name": "SubagentStart", "agent_id": agent_id, "agent_type": "coder"})
        }
        "post-tool-use" => json!({
            "hook_event_name": "PostToolUse", "agent_id": agent_id, "agent_type": "coder",
            "tool_name": "Bash", "tool_use_id": "toolu_bash",
            "tool_input": {"command": "cargo test", "description": "Run the tests"},
            "tool_response": {"stdout": "test result: ok. 280 passed; 0 failed", "stderr": "", "interrupted": false},
        }),
        _ => json!({
            "hook_event_name": "SubagentStop", "agent_id": agent_id, "agent_type": "coder",
            "stop_hook_active": true, "background_tasks": [], "session_crons": [],
            "last_assistant_message": "Fixed the parser; the regression test passes.",
        }),
    };
    for (k, v) in fields.as_object().expect("object") {
        p[k] = v.clone();
    }
    p.to_string()
}

fn time_hook(bin: &Path, repo: &Path, event: &str, input: &str) -> Duration {
    let mut cmd = common::command(bin, repo, &["hook", "agent", "claude-code", event]);
    cmd.stdin(Stdio::piped());
    let start = Instant::now();
    let mut child = cmd.spawn().expect("spawn");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes())
        .expect("write payload");
    let out = child.wait_with_output().expect("wait");
    let elapsed = start.elapsed();
    assert!(
        out.status.success() && !out.stderr.starts_with(b"warning: git-swarm's"),
        "hook agent {event}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    elapsed
}

fn main() {
    let runs = env_num("SWARM_BENCH_RUNS", 41);
    let tmp = tempfile::Builder::new()
        .prefix("git-swarm-agent-hook-bench-")
        .tempdir()
        .expect("temp dir");
    let bin = common::installed_binary(tmp.path());
    let repo = tmp.path().join("repo");
    common::generate_store(&repo, 100, 2_000);
    common::let_settle();
    // SWARM_BENCH_KEEP=DIR keeps a copy of the store, to profile a hook on it.
    common::keep(&repo, "");
    let git_bin = Path::new("git");
    println!("git swarm hook agent benchmark: claude-code payloads, 100 directives, 2,000 events");
    // Warm the page cache and the index.
    for event in EVENTS {
        time_hook(&bin, &repo, event, &payload(event, &repo, 0));
    }
    let mut times: Vec<Vec<Duration>> = vec![Vec::new(); EVENTS.len()];
    let mut rev_parse = Vec::new();
    // Interleaved, so that a burst of load on the machine hits them all.
    for round in 1..=runs {
        for (i, event) in EVENTS.iter().enumerate() {
            times[i].push(time_hook(&bin, &repo, event, &payload(event, &repo, round)));
        }
        rev_parse.push(common::time(git_bin, &repo, &["rev-parse", "HEAD"], &[0]));
    }
    let rev_parse = common::median_of(rev_parse);
    println!("  git rev-parse HEAD    median {:>8}", ms(rev_parse));
    for (event, t) in EVENTS.iter().zip(times) {
        let t = common::median_of(t);
        println!(
            "  {event:<20}  median {:>8}   ratio {:.2}x   (target: ratio ≤ 2x, issue 36)",
            ms(t),
            t.as_secs_f64() / rev_parse.as_secs_f64()
        );
    }
}
