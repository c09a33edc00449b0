//! `git swarm reflect micro`, whole process, on tool calls with 10 KB of
//! output, beside `git rev-parse HEAD` on the same repository: a failing
//! `cargo test` kept as a candidate (the store opened, one append) and a
//! passing one (read and classified only).
//!
//! `cargo bench --bench reflect`; `SWARM_BENCH_RUNS` changes the number of
//! runs each median is taken over.

use std::path::Path;
use std::time::Duration;

#[path = "common/mod.rs"]
mod common;
use common::{env_num, git, ms};

/// A Claude Code `PostToolUseFailure` payload of a `cargo test` whose
/// output is some 10 KB, or its `PostToolUse` when `passed`.
fn payload(passed: bool) -> String {
    let mut out = String::from("running 280 tests\n");
    for i in 0..280 {
        let result = if !passed && i == 117 { "FAILED" } else { "ok" };
        out.push_str(&format!("test cache::tests::case_{i:03} ... {result}\n"));
    }
    let (failed, status) = if passed { (0, "ok") } else { (1, "FAILED") };
    out.push_str(&format!(
        "\ntest result: {status}. {} passed; {failed} failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.42s\n",
        280 - failed
    ));
    let common = serde_json::json!({
        "session_id": "bench-session",
        "transcript_path": "/home/u/.claude/projects/p/bench.jsonl",
        "cwd": "/home/u/proj",
        "permission_mode": "default",
        "tool_name": "Bash",
        "tool_input": {"command": "cargo test", "description": "Run the tests"},
        "tool_use_id": "toolu_bench",
    });
    let mut p = common.as_object().expect("object").clone();
    if passed {
        p.insert("hook_event_name".into(), "PostToolUse".into());
        p.insert(
            "tool_response".into(),
            serde_json::json!({"stdout": out, "stderr": "", "interrupted": false, "isImage": false}),
        );
    } else {
        p.insert("hook_event_name".into(), "PostToolUseFailure".into());
        p.insert("error".into(), format!("Exit code 101\n{out}").into());
    }
    serde_json::Value::Object(p).to_string()
}

fn time_micro(bin: &Path, repo: &Path, input: &str) -> Duration {
    common::time_with_stdin(bin, repo, &["reflect", "micro"], input).0
}

fn main() {
    let runs = env_num("SWARM_BENCH_RUNS", 41);
    let tmp = tempfile::Builder::new()
        .prefix("git-swarm-reflect-bench-")
        .tempdir()
        .expect("temp dir");
    let bin = common::installed_binary(tmp.path());
    let repo = tmp.path().join("repo");
    std::fs::create_dir_all(&repo).expect("mkdir");
    git(&repo, &["init", "-q"]);
    common::run(&bin, &repo, &["init"], &[0]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "init"]);
    let git_bin = Path::new("git");
    let (failing, passing) = (payload(false), payload(true));
    println!(
        "git swarm reflect micro benchmark: payloads of {} and {} bytes",
        failing.len(),
        passing.len()
    );
    // Warm the page cache and the candidates file.
    time_micro(&bin, &repo, &failing);
    let (mut kept, mut read, mut rev_parse) = (Vec::new(), Vec::new(), Vec::new());
    // Interleaved, so that a burst of load on the machine hits all three.
    for _ in 0..runs {
        kept.push(time_micro(&bin, &repo, &failing));
        read.push(time_micro(&bin, &repo, &passing));
        rev_parse.push(common::time(git_bin, &repo, &["rev-parse", "HEAD"], &[0]));
    }
    let (kept, read, rev_parse) = (
        common::median_of(kept),
        common::median_of(read),
        common::median_of(rev_parse),
    );
    let ratio = |d: Duration| d.as_secs_f64() / rev_parse.as_secs_f64();
    println!(
        "  reflect micro, failure kept  median {:>8}   git rev-parse HEAD  median {:>8}   ratio {:.2}x   (target ≤ 5 ms)",
        ms(kept),
        ms(rev_parse),
        ratio(kept)
    );
    println!(
        "  reflect micro, success read  median {:>8}   ratio to git rev-parse {:.2}x",
        ms(read),
        ratio(read)
    );
}
