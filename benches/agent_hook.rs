//! `git-swarm-agent-hook claude-code <event>` (what the installed hooks
//! run), whole process, on typical Claude Code payloads, beside `git
//! rev-parse HEAD` on the same repository (100 directives, 2,000 events):
//! each event of a subagent's life in the order a session sends them, one
//! subagent per round. Beside it, `git-swarm hook agent claude-code
//! <event>`, the same hook in the whole binary (what older installs run):
//! the separate binary is there for the difference.
//!
//! Then the same for Codex, Gemini CLI and opencode, on the payloads each
//! harness sent in the real-harness suite (tests/fixtures/agents/captured/),
//! a subagent's life per round: issue 36 asks for at most 2× `git rev-parse
//! HEAD` for every event of every harness.
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

/// How a hook is run: `git-swarm-agent-hook HARNESS EVENT`, or the whole
/// binary's `git-swarm hook agent HARNESS EVENT`.
#[derive(Clone, Copy)]
struct Hook<'a> {
    bin: &'a Path,
    /// What comes before HARNESS EVENT.
    args: &'a [&'a str],
}

fn time_hook(hook: Hook, repo: &Path, event: &str, input: &str) -> Duration {
    time_harness_hook(hook, repo, "claude-code", event, input).0
}

/// Whole-process time of `hook` for HARNESS EVENT fed `input`, and its
/// answer; it must succeed, and not as a hook that did nothing (whose
/// warnings start `warning: git-swarm's`).
fn time_harness_hook(
    hook: Hook,
    repo: &Path,
    harness: &str,
    event: &str,
    input: &str,
) -> (Duration, String) {
    let args: Vec<&str> = hook.args.iter().copied().chain([harness, event]).collect();
    let mut cmd = common::command(hook.bin, repo, &args);
    cmd.stdout(Stdio::piped());
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
        out.status.success()
            && !String::from_utf8_lossy(&out.stderr).contains("warning: git-swarm's"),
        "hook agent {harness} {event}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (elapsed, String::from_utf8_lossy(&out.stdout).into_owned())
}

const CAPTURED: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/agents/captured"
);

/// One hook of a harness's captured sequence: what the figure is called,
/// git-swarm's event, and the captured payload's file.
struct Step {
    name: &'static str,
    event: &'static str,
    file: &'static str,
}

const fn step(name: &'static str, event: &'static str, file: &'static str) -> Step {
    Step { name, event, file }
}

/// A harness's subagent life as its payloads were captured: the folder,
/// the steps in the order the harness sends them, and the captured ids
/// made new each round (a subagent's, a spawn's) or made the main
/// session's (payloads captured in another run of the same harness).
struct Captured {
    harness: &'static str,
    dir: &'static str,
    steps: Vec<Step>,
    per_round: Vec<&'static str>,
    session: &'static str,
    other_sessions: Vec<&'static str>,
}

fn captured_harnesses() -> Vec<Captured> {
    vec![
        Captured {
            harness: "codex",
            dir: "codex-0.171.0",
            steps: vec![
                step("session-start", "session-start", "session-start"),
                step(
                    "pre-tool-use (spawn_agent)",
                    "pre-tool-use",
                    "pre-tool-use-spawn-agent",
                ),
                step(
                    "post-tool-use (spawn_agent)",
                    "post-tool-use",
                    "post-tool-use-spawn-agent",
                ),
                step("subagent-start", "subagent-start", "subagent-start"),
                step(
                    "pre-tool-use (apply_patch)",
                    "pre-tool-use",
                    "subagent-pre-tool-use-edit",
                ),
                step(
                    "post-tool-use (failing)",
                    "post-tool-use",
                    "subagent-post-tool-use-failing",
                ),
                step("subagent-stop", "subagent-stop", "subagent-stop"),
                // The stop above asks for the missing acks; Codex sends the
                // subagent's next stop with `stop_hook_active`.
                step(
                    "subagent-stop (asked)",
                    "subagent-stop",
                    "subagent-stop-active",
                ),
            ],
            per_round: vec![
                "01a2259e-4042-7901-b69e-fd9cbbc1353d",
                "01a227b6-514a-7c41-a65b-b4c97c37dabf",
                "call_spawn",
            ],
            session: "01a2259e-3e4d-7140-abe9-cf743c8f26c9",
            other_sessions: vec!["01a227b6-4ee2-7262-ace1-0ed9bb38f684"],
        },
        Captured {
            harness: "gemini",
            dir: "gemini-0.61.0",
            steps: vec![
                step("session-start", "session-start", "session-start"),
                step(
                    "BeforeTool (invoke_agent)",
                    "subagent-start",
                    "pre-tool-use-invoke-agent",
                ),
                step("BeforeTool (shell)", "pre-tool-use", "before-tool-shell"),
                step(
                    "AfterTool (failing)",
                    "post-tool-use",
                    "post-tool-use-failing",
                ),
                step(
                    "AfterTool (invoke_agent)",
                    "post-tool-use",
                    "post-tool-use-invoke-agent",
                ),
            ],
            per_round: vec!["gs36-sub-task"],
            session: "a13cc240-fbb6-4c1b-b5cf-8c9579d15d1e",
            other_sessions: vec!["f3973891-cf50-4053-8721-19c518331e67"],
        },
        Captured {
            harness: "opencode",
            dir: "opencode-1.18.33",
            steps: vec![
                step("session-start", "session-start", "session-start"),
                step("subagent-start (task)", "subagent-start", "subagent-start"),
                step("pre-tool-use (bash)", "pre-tool-use", "tool-before-shell"),
                step(
                    "post-tool-use (failing)",
                    "post-tool-use",
                    "post-tool-use-bash-exit-3",
                ),
                step("subagent-stop (task)", "subagent-stop", "subagent-stop"),
            ],
            per_round: vec!["ses_dda6c7929ffeDYQXi52wWUbexa", "call_a"],
            session: "ses_dda6c8460ffeBLXuGx3F0AqHXv",
            other_sessions: vec!["ses_dd8550b4afferhdH65hVGgn7g5"],
        },
    ]
}

/// The payload of `step` for round `round`: the captured one with its
/// `cwd` made `repo`, its per-round ids made this round's, and for
/// opencode what its plugin would send (the plugin's `pre-tool-use` from
/// the `tool.execute.before` captured beside it; a task's stop with the
/// prompt its start's answer made).
fn captured_payload(h: &Captured, s: &Step, repo: &Path, round: usize, prepend: &str) -> String {
    let path = format!("{CAPTURED}/{}/{}.json", h.dir, s.file);
    let mut text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    for id in &h.per_round {
        text = text.replace(id, &format!("{id}-{round}"));
    }
    for other in &h.other_sessions {
        text = text.replace(other, h.session);
    }
    let mut v: serde_json::Value = serde_json::from_str(&text).expect("captured JSON");
    if h.harness == "opencode" {
        if s.file.starts_with("tool-before-") {
            v = json!({
                "tool": v["input"]["tool"],
                "sessionID": format!("{}-{round}", h.per_round[0]),
                "callID": v["input"]["callID"],
                "args": v["output"]["args"],
            });
        } else if s.event == "subagent-stop" {
            let prompt = v["args"]["prompt"].as_str().unwrap_or_default();
            let task = prompt.rsplit("\n\n").next().unwrap_or(prompt).to_owned();
            v["args"]["prompt"] = json!(format!("{prepend}\n\n{task}"));
        }
    } else {
        v["cwd"] = json!(repo);
    }
    v.to_string()
}

/// Each harness's captured sequence, `runs` rounds, beside `git rev-parse HEAD`.
fn bench_captured(hook: Hook, repo: &Path, runs: usize) {
    let git_bin = Path::new("git");
    for h in captured_harnesses() {
        println!("  {} (payloads captured from {}):", h.harness, h.dir);
        let mut times: Vec<Vec<Duration>> = vec![Vec::new(); h.steps.len()];
        let mut rev_parse = Vec::new();
        // Round 0 warms the page cache and the index.
        for round in 0..=runs {
            let mut prepend = String::new();
            for (i, s) in h.steps.iter().enumerate() {
                let input = captured_payload(&h, s, repo, round, &prepend);
                let (t, answer) = time_harness_hook(hook, repo, h.harness, s.event, &input);
                // A subagent's start is timed giving its block, not a cheaper path.
                assert!(
                    s.event != "subagent-start" || answer.contains("delegate_knowledge_directives"),
                    "{} {}: no block in {answer}",
                    h.harness,
                    s.name
                );
                if h.harness == "opencode" && s.event == "subagent-start" {
                    let v: serde_json::Value =
                        serde_json::from_str(&answer).expect("opencode's subagent-start answers");
                    prepend = v["prepend"]
                        .as_str()
                        .expect("a block to prepend")
                        .to_owned();
                }
                if round > 0 {
                    times[i].push(t);
                }
            }
            if round > 0 {
                rev_parse.push(common::time(git_bin, repo, &["rev-parse", "HEAD"], &[0]));
            }
        }
        let rev_parse = common::median_of(rev_parse);
        println!(
            "    git rev-parse HEAD          median {:>8}",
            ms(rev_parse)
        );
        for (s, t) in h.steps.iter().zip(times) {
            let t = common::median_of(t);
            println!(
                "    {:<28}median {:>8}   ratio {:.2}x   (target: ratio ≤ 2x, issue 36)",
                s.name,
                ms(t),
                t.as_secs_f64() / rev_parse.as_secs_f64()
            );
        }
    }
}

fn main() {
    let runs = env_num("SWARM_BENCH_RUNS", 41);
    let tmp = tempfile::Builder::new()
        .prefix("git-swarm-agent-hook-bench-")
        .tempdir()
        .expect("temp dir");
    let bin = common::installed_binary(tmp.path());
    let hook = Hook {
        bin: &common::installed_hook_binary(tmp.path()),
        args: &[],
    };
    let whole = Hook {
        bin: &bin,
        args: &["hook", "agent"],
    };
    let repo = tmp.path().join("repo");
    common::generate_store(&repo, 100, 2_000);
    common::let_settle();
    // SWARM_BENCH_KEEP=DIR keeps a copy of the store, to profile a hook on it.
    common::keep(&repo, "");
    let git_bin = Path::new("git");
    println!(
        "git-swarm-agent-hook benchmark: claude-code payloads, 100 directives, 2,000 events (beside it: `git-swarm hook agent`, the same hook in the whole binary)"
    );
    // Warm the page cache and the index.
    for event in EVENTS {
        time_hook(hook, &repo, event, &payload(event, &repo, 0));
        time_hook(whole, &repo, event, &payload(event, &repo, 0));
    }
    let mut times: Vec<Vec<Duration>> = vec![Vec::new(); EVENTS.len()];
    let mut whole_times: Vec<Vec<Duration>> = vec![Vec::new(); EVENTS.len()];
    let mut rev_parse = Vec::new();
    // The process that reads its arguments, finds no such event, warns and
    // exits: what every hook pays before it does anything.
    let (mut alone, mut whole_alone) = (Vec::new(), Vec::new());
    let nothing = ["claude-code", "no-such-event"];
    // Interleaved, so that a burst of load on the machine hits them all;
    // each round is a new subagent, the two binaries' rounds apart.
    for round in 1..=runs {
        for (i, event) in EVENTS.iter().enumerate() {
            times[i].push(time_hook(
                hook,
                &repo,
                event,
                &payload(event, &repo, 2 * round),
            ));
        }
        for (i, event) in EVENTS.iter().enumerate() {
            whole_times[i].push(time_hook(
                whole,
                &repo,
                event,
                &payload(event, &repo, 2 * round + 1),
            ));
        }
        rev_parse.push(common::time(git_bin, &repo, &["rev-parse", "HEAD"], &[0]));
        alone.push(common::time(hook.bin, &repo, &nothing, &[0]));
        let whole_nothing: Vec<&str> = whole.args.iter().chain(&nothing).copied().collect();
        whole_alone.push(common::time(whole.bin, &repo, &whole_nothing, &[0]));
    }
    let rev_parse = common::median_of(rev_parse);
    println!("  git rev-parse HEAD    median {:>8}", ms(rev_parse));
    let row = |name: &str, t: Vec<Duration>, w: Vec<Duration>, note: &str| {
        let (t, w) = (common::median_of(t), common::median_of(w));
        println!(
            "  {name:<20}  median {:>8}   ratio {:.2}x   (hook agent: {:>8}, {:.2}x; {:+.0} %)   {note}",
            ms(t),
            t.as_secs_f64() / rev_parse.as_secs_f64(),
            ms(w),
            w.as_secs_f64() / rev_parse.as_secs_f64(),
            (t.as_secs_f64() / w.as_secs_f64() - 1.0) * 100.0,
        );
    };
    row(
        "the process alone",
        alone,
        whole_alone,
        "(`claude-code no-such-event`: of the 2x, what doing nothing costs)",
    );
    for ((event, t), w) in EVENTS.iter().zip(times).zip(whole_times) {
        row(event, t, w, "(target: ratio ≤ 2x, issue 36)");
    }
    println!("git swarm hook agent benchmark: each harness's captured payloads, same store");
    bench_captured(hook, &repo, runs);
}
