//! `git swarm pattern inject` (reading, then recording its use with
//! `--run` as a pipeline does), `pattern feedback` and `pattern extract`
//! on a large store, against `git status --porcelain` on the same
//! repository.
//!
//! The store: 50,000 patterns of five roles and 500,000 pattern events
//! (observations in several runs and contexts, validations, ignores, aged
//! steps, injections) over the last 60 days. Then a 2,000-line
//! deliberation with its verdict for `pattern feedback`.
//!
//! `cargo bench --bench pattern`; `SWARM_BENCH_PATTERNS`, `SWARM_BENCH_EVENTS`
//! and `SWARM_BENCH_DIR` (keep the repository) change the set-up.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

#[path = "common/mod.rs"]
mod common;
use common::{env_num, git, median, ms};

const ROLES: [&str; 5] = ["auditor", "judge", "sentinel", "curator", "coder"];
const WORDS: [&str; 16] = [
    "cache",
    "tenant",
    "migration",
    "handler",
    "retry",
    "token",
    "schema",
    "parser",
    "index",
    "lock",
    "upload",
    "session",
    "query",
    "config",
    "queue",
    "timeout",
];
const NOW: &str = "2026-11-22T12:00:00Z";

fn text(i: usize) -> String {
    let w = |k: usize| WORDS[(i / k + k) % WORDS.len()];
    format!(
        "Finding {i}: the {} {} must check the {} before the {} is used",
        w(1),
        w(3),
        w(7),
        w(11)
    )
}

fn main() {
    let patterns = env_num("SWARM_BENCH_PATTERNS", 50_000);
    let events = env_num("SWARM_BENCH_EVENTS", 500_000);
    let tmp = tempfile::Builder::new()
        .prefix("git-swarm-pattern-bench-")
        .tempdir()
        .expect("temp dir");
    let base = match std::env::var_os("SWARM_BENCH_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => tmp.path().to_path_buf(),
    };
    let bin = common::installed_binary(tmp.path());
    let repo = base.join("patterns");
    let _ = std::fs::remove_dir_all(&repo);
    let t = Instant::now();
    generate(&repo, patterns, events);
    println!(
        "git swarm pattern benchmark: {patterns} patterns, {events} pattern events (generated in {:.1} s: {})",
        t.elapsed().as_secs_f64(),
        repo.display()
    );
    let env = [("GIT_SWARM_NOW", NOW)];
    let t = Instant::now();
    run(
        &bin,
        &repo,
        &["pattern", "list", "--role", "judge", "--state", "active"],
        &env,
    );
    println!(
        "  first run (index built from the log): {}",
        ms(t.elapsed())
    );

    let inject = [
        "pattern",
        "inject",
        "--role",
        "judge",
        "--labels",
        "l3,l5",
        "--files",
        "src/m7/a.rs",
    ];
    run(&bin, &repo, &inject, &env);
    let ours = median(15, || time(&bin, &repo, &inject, &env));
    let git_status = median(15, || {
        time(Path::new("git"), &repo, &["status", "--porcelain"], &[])
    });
    println!(
        "  pattern inject    median {:>8}   git status  median {:>8}   ratio {:.2}x   (target ≤ 15 ms)",
        ms(ours),
        ms(git_status),
        ours.as_secs_f64() / git_status.as_secs_f64()
    );

    // In a pipeline each call records the patterns it showed (`--run`), so
    // every call finds an event newer than the index.
    let mut inject_run = inject.to_vec();
    inject_run.extend(["--run", "bench-inject"]);
    run(&bin, &repo, &inject_run, &env);
    let ours = median(15, || time(&bin, &repo, &inject_run, &env));
    println!(
        "  pattern inject --run (records its use) median {:>8}   ratio to git status {:.2}x",
        ms(ours),
        ours.as_secs_f64() / git_status.as_secs_f64()
    );

    // A 2,000-line deliberation of the judge, and a verdict with false positives.
    let mut delib = String::from("# Review of the change\n\n");
    let mut line = 2;
    let mut i = 0;
    while line < 1990 {
        let _ = writeln!(delib, "- {}", text(i * 5 + 1));
        let _ = writeln!(
            delib,
            "  continued with detail about src/m{}/a.rs:{}",
            i % 97,
            i + 1
        );
        line += 2;
        if i % 10 == 0 {
            delib.push_str("\n## Section\n\n");
            line += 3;
        }
        i += 1;
    }
    delib.push_str("\n```sh\n$ cargo test\ntest result: ok. 10 passed; 0 failed\n```\n");
    std::fs::write(repo.join("delib.md"), &delib).expect("write deliberation");
    let fps: Vec<String> = (0..20)
        .map(|k| format!("\"{}\"", text(k * 50 + 1)))
        .collect();
    std::fs::write(
        repo.join("verdict.md"),
        format!(
            "Checked.\n<!-- jkz:verdict-json {{\"verdict\":\"PASS\",\"must_fix\":[],\"false_positives\":[{}]}} -->\n",
            fps.join(",")
        ),
    )
    .expect("write verdict");
    run(
        &bin,
        &repo,
        &[
            "pattern",
            "extract",
            "--role",
            "judge",
            "--run",
            "bench",
            "--files",
            "src/m1/a.rs",
            "delib.md",
        ],
        &env,
    );
    let feedback = [
        "pattern",
        "feedback",
        "--adversarial-role",
        "judge",
        "--validator-role",
        "inspector",
        "--run",
        "bench",
        "--deliberation",
        "delib.md",
        "--verdict",
        "verdict.md",
    ];
    run(&bin, &repo, &feedback, &env);
    let ours = median(15, || time(&bin, &repo, &feedback, &env));
    println!(
        "  pattern feedback  median {:>8}   git status  median {:>8}   ratio {:.2}x   (target ≤ 50 ms, {} deliberation lines)",
        ms(ours),
        ms(git_status),
        ours.as_secs_f64() / git_status.as_secs_f64(),
        delib.lines().count()
    );
    extract_each_run(&bin, &repo, &env, git_status);
}

/// `pattern extract` of a short deliberation, a new run each time: each
/// records its observations, which the next one finds newer than the index.
fn extract_each_run(
    bin: &Path,
    repo: &Path,
    env: &[(&str, &str)],
    git_status: std::time::Duration,
) {
    std::fs::write(
        repo.join("short.md"),
        "- The upload handler must retry with a backoff after a 503.\n- Never cache a token across tenants.\n",
    )
    .expect("write deliberation");
    let mut n = 0;
    let ours = median(15, || {
        n += 1;
        let run = format!("bench-extract-{n}");
        time(
            bin,
            repo,
            &[
                "pattern", "extract", "--role", "judge", "--run", &run, "short.md",
            ],
            env,
        )
    });
    println!(
        "  pattern extract (2 findings, a new run each) median {:>8}   ratio to git status {:.2}x",
        ms(ours),
        ours.as_secs_f64() / git_status.as_secs_f64()
    );
}

fn run(bin: &Path, repo: &Path, args: &[&str], env: &[(&str, &str)]) {
    let out = common::command(bin, repo, args)
        .envs(env.iter().copied())
        .output()
        .expect("run");
    assert!(
        out.status.success(),
        "{args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn time(bin: &Path, repo: &Path, args: &[&str], env: &[(&str, &str)]) -> std::time::Duration {
    let mut cmd = common::command(bin, repo, args);
    cmd.envs(env.iter().copied());
    let t = Instant::now();
    let out = cmd.output().expect("run");
    let d = t.elapsed();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    d
}

/// A repository whose log holds `events` pattern events about `patterns` patterns.
fn generate(repo: &Path, patterns: usize, events: usize) {
    std::fs::create_dir_all(repo.join(".swarm/events")).expect("mkdir");
    git(repo, &["init", "-q"]);
    std::fs::write(
        repo.join(".swarm/.gitattributes"),
        "events/*.jsonl merge=union\n",
    )
    .expect("write");
    let end: jiff::Timestamp = NOW.parse().expect("now");
    let span_ms: i64 = 60 * 86_400_000;
    let start = end.as_millisecond() - span_ms;
    let step = span_ms / events.max(1) as i64;
    let printer = jiff::fmt::temporal::DateTimePrinter::new().precision(Some(3));
    let mut files: std::collections::BTreeMap<String, String> = Default::default();
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    for n in 0..events {
        let ts_ms = start + n as i64 * step;
        let ts = jiff::Timestamp::from_millisecond(ts_ms).expect("ts");
        let ts_text = printer.timestamp_to_string(&ts);
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let id = ulid::Ulid::from_parts(ts_ms as u64, u128::from(rng)).to_string();
        // Each pattern's first event is its observation; then a mix.
        let (p, kind) = if n < patterns {
            (n, "pattern_observed")
        } else {
            let p = (rng >> 20) as usize % patterns;
            let kind = match rng % 10 {
                0..=3 => "pattern_observed",
                4 | 5 => "pattern_validated",
                6 => "pattern_ignored",
                7 => "pattern_aged",
                8 => "pattern_shown",
                _ => {
                    if rng % 100 == 9 {
                        "pattern_promoted"
                    } else {
                        "pattern_validated"
                    }
                }
            };
            (p, kind)
        };
        let role = ROLES[p % ROLES.len()];
        let pid = format!("p{:016x}", xxhash_rust::xxh3::xxh3_64(&p.to_le_bytes()));
        let run = format!("run-{}", n % 5000);
        let mut line = format!(
            "{{\"id\":\"{id}\",\"ts\":\"{ts_text}\",\"kind\":\"{kind}\",\"actor\":{{\"role\":\"{role}\"}}"
        );
        match kind {
            "pattern_observed" => {
                let _ = write!(
                    line,
                    ",\"pattern\":\"{pid}\",\"role\":\"{role}\",\"text\":\"{}\",\"category\":\"{}\",\"run\":\"{run}\",\"labels\":[\"l{}\"],\"files\":[\"src/m{}/a.rs\"]",
                    text(p),
                    ["rule", "causal", "observation"][p % 3],
                    n % 7,
                    p % 97
                );
            }
            "pattern_shown" => {
                let _ = write!(line, ",\"patterns\":[\"{pid}\"],\"run\":\"{run}\"");
            }
            "pattern_ignored" => {
                let _ = write!(
                    line,
                    ",\"pattern\":\"{pid}\",\"run\":\"{run}\",\"weight\":1.0,\"regression\":false"
                );
            }
            _ => {
                let _ = write!(line, ",\"pattern\":\"{pid}\",\"run\":\"{run}\"");
            }
        }
        line.push_str("}\n");
        let month = ts_text[..7].to_owned();
        files.entry(month).or_default().push_str(&line);
    }
    for (month, body) in files {
        std::fs::write(repo.join(format!(".swarm/events/{month}.jsonl")), body)
            .expect("write events");
    }
    git(repo, &["add", "-A"]);
    git(repo, &["commit", "-q", "-m", "synthetic pattern store"]);
}
