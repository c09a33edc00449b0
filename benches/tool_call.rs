//! `git-swarm-agent-hook claude-code pre-tool-use` on ordinary tool calls
//! (issue 40: lessons at the moment of action), whole process, beside
//! `git rev-parse HEAD` on the same repository, at 10 and at 1,000
//! directives (2,000 events). A tenth of the directives are scoped to a
//! tool (`bash`, `git`, `cargo`, `edit`…), a tenth to paths alone, one in
//! fifty has a `command:` predicate: each call is measured as the agent
//! makes it again and again (its lessons already shown, a guard refusing
//! every time).
//!
//! `cargo bench --bench tool_call`; `SWARM_BENCH_RUNS` changes the number
//! of rounds each median is taken over.

use std::path::Path;
use std::time::Duration;

#[path = "common/mod.rs"]
mod common;
use common::{env_num, ms};
use serde_json::json;

const TOOLS: [&str; 10] = [
    "bash", "git", "cargo", "npm", "make", "python3", "edit", "write", "read", "grep",
];

/// The calls measured: a name, the tool, its input.
fn calls() -> Vec<(&'static str, &'static str, serde_json::Value)> {
    vec![
        (
            "bash git status",
            "Bash",
            json!({"command": "git status --short"}),
        ),
        (
            "bash cargo test",
            "Bash",
            json!({"command": "cargo test --quiet"}),
        ),
        (
            "guarded push",
            "Bash",
            json!({"command": "git push --force origin main"}),
        ),
        (
            "edit (paths)",
            "Edit",
            json!({"file_path": "src/mod5/lib.rs", "old_string": "a", "new_string": "b"}),
        ),
        ("read README", "Read", json!({"file_path": "README.md"})),
    ]
}

/// Rewrites every tenth directive of the synthetic store to be scoped to a
/// tool, every tenth (offset by five) to paths alone, and every fiftieth
/// to carry a `command:` predicate (an `enforce` guard on a forced push of
/// its own branch, and on `main` for the first).
fn add_tool_call_directives(repo: &Path, n: usize) {
    for i in 0..n {
        let id = format!("d-{i:05}");
        let path = repo.join(format!(".swarm/directives/{id}.toml"));
        let mut text = format!(
            "id = \"{id}\"\nlesson = \"Synthetic lesson number {i} about module {} and its error handling\"\ncategory = \"testing\"\npriority = \"{}\"\n",
            i % 97,
            ["low", "medium", "high", "critical"][i % 4],
        );
        if i % 50 == 0 {
            let branch = if i == 0 {
                "main".to_owned()
            } else {
                format!("b{i}")
            };
            text.push_str(&format!(
                "enforcement = \"enforce\"\napplies_to_tools = [\"git\"]\nverify = ['command:\\bgit\\s+push\\b.*--force\\b.*\\b{branch}\\b']\n"
            ));
        } else if i % 10 == 0 {
            text.push_str(&format!(
                "enforcement = \"warn\"\napplies_to_tools = [\"{}\"]\nrequired_actions = [\"read the module's README first\"]\n",
                TOOLS[(i / 10) % TOOLS.len()]
            ));
        } else if i % 10 == 5 {
            text.push_str(&format!(
                "enforcement = \"warn\"\napplies_to_agents = [\"coordinator\", \"coder\"]\npaths = [\"src/mod{}/**\"]\nrequired_actions = [\"run the module's tests\"]\n",
                i % 97
            ));
        } else {
            text.push_str(&format!(
                "enforcement = \"warn\"\napplies_to_agents = [\"coder\"]\nverify = [\"file_modified:src/mod{}/**\"]\n",
                i % 97
            ));
        }
        std::fs::write(&path, text).expect("write directive");
    }
    common::git(repo, &["add", "-A"]);
    common::git(repo, &["commit", "-q", "-m", "tool-call directives"]);
}

/// `git-swarm-agent-hook claude-code pre-tool-use` (what the installed
/// hooks run) fed `input`.
fn time_hook(hook: &Path, repo: &Path, input: &str) -> (Duration, String) {
    let args = ["claude-code", "pre-tool-use"];
    common::time_with_stdin(hook, repo, &args, input)
}

fn main() {
    let runs = env_num("SWARM_BENCH_RUNS", 41);
    let tmp = tempfile::Builder::new()
        .prefix("git-swarm-tool-call-bench-")
        .tempdir()
        .expect("temp dir");
    let hook = common::installed_hook_binary(tmp.path());
    println!(
        "git-swarm-agent-hook claude-code pre-tool-use benchmark: ordinary tool calls, 2,000 events"
    );
    for n in [10, 1_000] {
        let repo = tmp.path().join(format!("repo-{n}"));
        common::generate_store(&repo, n, 2_000);
        add_tool_call_directives(&repo, n);
        // A store in use is older than the index's racy window.
        common::let_settle();
        // SWARM_BENCH_KEEP=DIR keeps a copy of each store (DIR-10,
        // DIR-1000), to profile a hook on it.
        common::keep(&repo, &format!("-{n}"));
        // The directives are committed on the default branch: reviewed.
        let calls: Vec<(&str, String)> = calls()
            .into_iter()
            .map(|(name, tool, mut input)| {
                if let Some(p) = input.get("file_path").and_then(|p| p.as_str()) {
                    input["file_path"] = json!(repo.join(p));
                }
                let payload = json!({
                    "session_id": "bench-session",
                    "transcript_path": "/home/u/.claude/projects/p/bench.jsonl",
                    "cwd": repo,
                    "permission_mode": "default",
                    "hook_event_name": "PreToolUse",
                    "tool_name": tool,
                    "tool_input": input,
                    "tool_use_id": "toolu_bench",
                });
                (name, payload.to_string())
            })
            .collect();
        // Warm the page cache and the index; the lessons are shown once.
        let mut answers = Vec::new();
        for (_, input) in &calls {
            answers.push(time_hook(&hook, &repo, input).1);
        }
        let mut times: Vec<Vec<Duration>> = vec![Vec::new(); calls.len()];
        let mut rev_parse = Vec::new();
        for _ in 0..runs {
            for (i, (_, input)) in calls.iter().enumerate() {
                times[i].push(time_hook(&hook, &repo, input).0);
            }
            rev_parse.push(common::time(
                Path::new("git"),
                &repo,
                &["rev-parse", "HEAD"],
                &[0],
            ));
        }
        let rev_parse = common::median_of(rev_parse);
        println!("  {n} directives:");
        println!("    git rev-parse HEAD      median {:>8}", ms(rev_parse));
        for (((name, _), t), first) in calls.iter().zip(times).zip(&answers) {
            let t = common::median_of(t);
            let what = if first.contains("\"deny\"") {
                "refused"
            } else if first.contains("additionalContext") {
                "lessons (first time)"
            } else {
                "nothing"
            };
            println!(
                "    {name:<22}  median {:>8}   ratio {:.2}x   [{what}]   (target: ratio ≤ 2x, issue 40)",
                ms(t),
                t.as_secs_f64() / rev_parse.as_secs_f64()
            );
        }
    }
}
