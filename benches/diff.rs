//! `git swarm diff A..B` beside its baseline, `git diff --stat A B -- .swarm`,
//! on a store of 1,000 directives and 100,000 events (`SWARM_BENCH_DIRECTIVES`,
//! `SWARM_BENCH_EVENTS`) where B is 1,000 commits after A
//! (`SWARM_BENCH_COMMITS`): most commits change code, every tenth edits a
//! directive and appends 20 events, as a busy month of a team would.
//!
//! `git swarm diff` keeps each side's folded log in the git dir: "warm" is a
//! run after one that filled that cache (what a user sees when running it
//! again), "old side kept" a run where only A's log was kept (B is new: a
//! branch with new commits against a base seen before), "cold" a run with
//! the cache removed first. `SWARM_BENCH_RUNS`
//! sets the runs per figure; `SWARM_BENCH_KEEP=1` keeps the repository and
//! prints its path (to profile by hand).

mod common;

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;
use std::process::Stdio;

use common::{Rng, env_num, git, installed_binary, median, ms, time};

fn main() {
    let directives = env_num("SWARM_BENCH_DIRECTIVES", 1000);
    let events = env_num("SWARM_BENCH_EVENTS", 100_000);
    let commits = env_num("SWARM_BENCH_COMMITS", 1000);
    let runs = env_num("SWARM_BENCH_RUNS", 11);
    let tmp = tempfile::tempdir().expect("temp dir");
    let repo = tmp.path().join("repo");
    let cache = repo.join(".git/swarm/diff");
    std::fs::create_dir_all(&repo).expect("mkdir");
    common::generate_store(&repo, directives, events);
    let a = git(&repo, &["rev-parse", "HEAD"]).trim().to_owned();
    history(&repo, &a, directives, commits);
    let b = "refs/heads/bench";
    let bin = installed_binary(tmp.path());
    let range = format!("{a}..{b}");
    // Both read the objects once before timing: the page cache is warm for each.
    common::run(
        Path::new("git"),
        &repo,
        &["diff", "--stat", &a, b, "--", ".swarm"],
        &[0],
    );
    common::run(&bin, &repo, &["diff", &range], &[0]);
    let git_t = median(runs, || {
        time(
            Path::new("git"),
            &repo,
            &["diff", "--stat", &a, b, "--", ".swarm"],
            &[0],
        )
    });
    let warm = median(runs, || time(&bin, &repo, &["diff", &range], &[0]));
    let json = median(runs, || {
        time(&bin, &repo, &["diff", &range, "--format", "json"], &[0])
    });
    let old_kept = median(runs, || {
        let _ = std::fs::remove_dir_all(&cache);
        // A against itself keeps A's log alone.
        common::run(&bin, &repo, &["diff", &format!("{a}..{a}")], &[0]);
        time(&bin, &repo, &["diff", &range], &[0])
    });
    let cold = median(runs, || {
        let _ = std::fs::remove_dir_all(&cache);
        time(&bin, &repo, &["diff", &range], &[0])
    });
    println!(
        "git swarm diff, {directives} directives, {events} events, A and B {commits} commits apart (median of {runs})"
    );
    let ratio = |d: std::time::Duration| d.as_secs_f64() / git_t.as_secs_f64();
    println!("  git diff --stat A B -- .swarm            {}", ms(git_t));
    println!(
        "  git swarm diff A..B, warm               {}  ({:.2}x)",
        ms(warm),
        ratio(warm)
    );
    println!(
        "  git swarm diff A..B --format json, warm {}  ({:.2}x)",
        ms(json),
        ratio(json)
    );
    println!(
        "  git swarm diff A..B, old side kept      {}  ({:.2}x)",
        ms(old_kept),
        ratio(old_kept)
    );
    println!(
        "  git swarm diff A..B, cold (no cache)    {}  ({:.2}x)",
        ms(cold),
        ratio(cold)
    );
    if std::env::var_os("SWARM_BENCH_KEEP").is_some() {
        println!(
            "  kept: {} (range {range})",
            tmp.keep().join("repo").display()
        );
    }
}

/// `commits` commits on `refs/heads/bench` after `base`, written with
/// `git fast-import` (a thousand `git commit`s would take longer than the bench).
fn history(repo: &Path, base: &str, directives: usize, commits: usize) {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let mut stream = Vec::new();
    let mut log = String::new();
    let start_ms: u64 = 1_793_491_200_000; // 2026-11-01T00:00:00Z
    let mut n_event = 0u64;
    for c in 0..commits {
        let mut files: Vec<(String, String)> = vec![(
            format!("src/mod{}/file{}.rs", c % 97, c % 13),
            format!("// change {c}\npub fn f{c}() {{}}\n"),
        )];
        if c % 10 == 9 {
            let d = rng.below(directives.max(1));
            let id = format!("d-{d:05}");
            files.push((
                format!(".swarm/directives/{id}.toml"),
                format!(
                    "id = \"{id}\"\nlesson = \"Synthetic lesson number {d} revised in commit {c} about error handling\"\ncategory = \"testing\"\npriority = \"high\"\nenforcement = \"warn\"\napplies_to_agents = [\"coder\"]\nverify = [\"file_modified:src/mod{}/**\"]\ntags = [\"t{}\", \"revised\"]\n",
                    d % 97,
                    d % 13
                ),
            ));
            for _ in 0..20 {
                n_event += 1;
                let ts = start_ms + n_event * 60_000;
                let kind = ["shown", "ack", "check", "verdict"][rng.below(4)];
                let d = rng.below(directives.max(1));
                let ts_text = jiff::Timestamp::from_millisecond(ts as i64)
                    .expect("ts")
                    .strftime("%Y-%m-%dT%H:%M:%S.000Z")
                    .to_string();
                let _ = writeln!(
                    log,
                    "{{\"id\":\"{}\",\"ts\":\"{ts_text}\",\"kind\":\"{kind}\",\"directive\":\"d-{d:05}\",\"status\":\"applied\",\"verdict\":\"verified\",\"change\":\"c{n_event}\",\"phase\":\"p{}\"}}",
                    ulid(ts, n_event),
                    n_event % 7
                );
            }
            files.push((".swarm/events/2026-11.jsonl".into(), log.clone()));
        }
        let msg = format!("commit {c}\n");
        let _ = write!(
            stream,
            "commit refs/heads/bench\ncommitter bench <bench@example.com> {} +0000\ndata {}\n{msg}",
            1_793_491_200 + c as u64 * 60,
            msg.len()
        );
        if c == 0 {
            let _ = writeln!(stream, "from {base}");
        }
        for (path, content) in files {
            let _ = write!(
                stream,
                "M 100644 inline {path}\ndata {}\n{content}\n",
                content.len()
            );
        }
    }
    let mut child = common::command(Path::new("git"), repo, &["fast-import", "--quiet"])
        .stdin(Stdio::piped())
        .spawn()
        .expect("git fast-import");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(&stream)
        .expect("write the stream");
    let out = child.wait_with_output().expect("fast-import");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn ulid(ms: u64, n: u64) -> String {
    const CROCKFORD: &[u8] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
    let value: u128 = (u128::from(ms) << 80) | u128::from(n);
    (0..26)
        .rev()
        .map(|i| CROCKFORD[((value >> (i * 5)) & 31) as usize] as char)
        .collect()
}
