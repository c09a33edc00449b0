//! What the benchmarks share: a controlled environment for the commands
//! they time, medians, and the formatting of figures.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

pub fn env_num(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

pub fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

pub fn median(n: usize, mut f: impl FnMut() -> Duration) -> Duration {
    median_of((0..n).map(|_| f()).collect())
}

pub fn median_of(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// `program ARGS` in `repo`, with no user or system git config, a fixed
/// identity, the real clock, and its output discarded.
pub fn command(program: &Path, repo: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(program);
    cmd.args(args)
        .current_dir(repo)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "bench")
        .env("GIT_AUTHOR_EMAIL", "bench@example.com")
        .env("GIT_COMMITTER_NAME", "bench")
        .env("GIT_COMMITTER_EMAIL", "bench@example.com")
        .env_remove("GIT_SWARM_NOW")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    cmd
}

/// Runs a command that must exit with one of `accept`.
pub fn run(program: &Path, repo: &Path, args: &[&str], accept: &[i32]) {
    let out = command(program, repo, args).output().expect("run");
    assert!(
        out.status.code().is_some_and(|c| accept.contains(&c)),
        "{} {args:?} failed: {}",
        program.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Whole-process time of a command that must exit with one of `accept`.
pub fn time(program: &Path, repo: &Path, args: &[&str], accept: &[i32]) -> Duration {
    let start = Instant::now();
    run(program, repo, args, accept);
    start.elapsed()
}

/// Runs git and returns its stdout; panics if it fails.
pub fn git(repo: &Path, args: &[&str]) -> String {
    let out = command(Path::new("git"), repo, args)
        .stdout(Stdio::piped())
        .output()
        .expect("git");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}
