//! `git swarm check` beside `git diff`, whole-process, in one run.
//!
//! Run: `cargo bench --bench check`. It generates a repository of
//! `SWARM_BENCH_FILES` tracked files (default 100,000) with fast-import,
//! writes `SWARM_BENCH_DIRECTIVES` active directives (default 1,000: a mix
//! of grep, file_modified, file_not_modified and grep_tree limited to a
//! small glob), stages 20 modified files, and prints medians of 101 runs of
//! each command, taken alternately, and the ratio:
//!
//! - `git swarm check --staged` beside `git diff --cached -U0`;
//! - `git swarm check --range A..B` beside `git diff -U0 A B`;
//!
//! with the peak memory of each (from `/usr/bin/time` when present), then
//! the same at ten times the directives to show how the cost grows.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

#[path = "common/mod.rs"]
mod common;
use common::{command, env_num, git, ms};

fn main() {
    let files = env_num("SWARM_BENCH_FILES", 100_000);
    let directives = env_num("SWARM_BENCH_DIRECTIVES", 1_000);
    let tmp = tempfile::Builder::new()
        .prefix("git-swarm-check-bench-")
        .tempdir()
        .expect("temp dir");
    let repo = match std::env::var_os("SWARM_BENCH_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => tmp.path().join("repo"),
    };
    let bin = common::installed_binary(tmp.path());
    println!("git swarm check benchmark: {files} tracked files, 20 staged modified files");
    for n in [directives, directives * 10] {
        let repo = repo.join(format!("d{n}"));
        let t = Instant::now();
        generate(&repo, files, n);
        println!();
        println!(
            "{n} active directives (repository generated in {:.1} s: {})",
            t.elapsed().as_secs_f64(),
            repo.display()
        );
        // The generated repository written back to disk now, not while
        // the commands are timed (best effort: without `sync`, the kernel
        // does it in its own time).
        let _ = std::process::Command::new("sync").status();
        // Warm the index of .swarm/ (and the page cache) before measuring.
        common::run(&bin, &repo, &["check", "--staged"], &[0, 1]);
        std::thread::sleep(Duration::from_millis(2100));
        common::run(&bin, &repo, &["check", "--staged"], &[0, 1]);
        compare(
            &bin,
            &repo,
            &["check", "--staged"],
            &["diff", "--cached", "-U0"],
            "--staged",
            "git diff --cached -U0",
        );
        compare(
            &bin,
            &repo,
            &["check", "--range", "base..changed"],
            &["diff", "-U0", "base", "changed"],
            "--range",
            "git diff -U0 A B",
        );
    }
}

/// Runs of each command (alternating) whose medians are compared. With
/// 41, the `--range` ratio moved by ±0.04 from one run of the benchmark to
/// the next on this shared machine; a run of `--range` takes a few ms.
const RUNS: usize = 101;
const WARM_UP: usize = 5;

fn compare(bin: &Path, repo: &Path, ours: &[&str], git: &[&str], label: &str, git_label: &str) {
    // Interleaved, so that a change in the machine's speed during the run
    // (this is a shared machine) weighs on both sides alike.
    let (mut ours_v, mut git_v) = (Vec::new(), Vec::new());
    // Unmeasured first runs: they fill the caches (a range's grep_tree
    // results, the page cache) that every later run finds.
    for _ in 0..WARM_UP {
        common::time(bin, repo, ours, &[0, 1]);
        common::time(Path::new("git"), repo, git, &[0]);
    }
    for _ in 0..RUNS {
        ours_v.push(common::time(bin, repo, ours, &[0, 1]));
        git_v.push(common::time(Path::new("git"), repo, git, &[0]));
    }
    let ours_t = common::median_of(ours_v);
    let git_t = common::median_of(git_v);
    let ours_mem = peak_kb(bin, repo, ours);
    let git_mem = peak_kb(Path::new("git"), repo, git);
    println!(
        "  git swarm check {label:<8} median {:>8}  peak {:>7}   {git_label:<22} median {:>8}  peak {:>7}   ratio {:.2}x (target ≤ 1.2x, peak ≤ 64 MB)",
        ms(ours_t),
        mem(ours_mem),
        ms(git_t),
        mem(git_mem),
        ours_t.as_secs_f64() / git_t.as_secs_f64()
    );
}

fn mem(kb: Option<u64>) -> String {
    kb.map_or("n/a".into(), |k| format!("{:.1} MB", k as f64 / 1024.0))
}

/// Peak resident memory in KiB, measured by `/usr/bin/time -f %M`.
fn peak_kb(program: &Path, repo: &Path, args: &[&str]) -> Option<u64> {
    let time_bin = Path::new("/usr/bin/time");
    if !time_bin.exists() {
        return None;
    }
    let mut all = vec!["-f", "%M", program.to_str()?];
    all.extend_from_slice(args);
    let out = command(time_bin, repo, &all).output().ok()?;
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .last()?
        .trim()
        .parse()
        .ok()
}

/// `files` files in two levels of folders plus `directives` directive files,
/// committed with fast-import (tag `base`); the index read from that tree;
/// 20 files modified and committed (tag `changed`), then the commit undone
/// with the 20 files left staged. The working tree holds only `.swarm/` and
/// the 20 files: check --staged and git diff --cached read the index and the
/// object database.
fn generate(repo: &Path, files: usize, directives: usize) {
    let _ = std::fs::remove_dir_all(repo);
    std::fs::create_dir_all(repo).expect("mkdir");
    git(repo, &["init", "-q", "-b", "main"]);
    let mut fi = command(Path::new("git"), repo, &["fast-import", "--quiet"])
        .stdin(Stdio::piped())
        .spawn()
        .expect("fast-import");
    {
        let stdin = fi.stdin.as_mut().expect("stdin");
        let mut buf = Vec::with_capacity(files * 120);
        buf.extend_from_slice(b"commit refs/heads/main\ncommitter bench <bench@example.com> 1763800000 +0000\ndata 4\nbase\n");
        let mut add = |path: &str, body: &str| {
            buf.extend_from_slice(
                format!("M 100644 inline {path}\ndata {}\n{body}\n", body.len()).as_bytes(),
            )
        };
        for i in 0..files {
            add(
                &path_of(i),
                &format!("// file {i}\nfn f{i}() -> u32 {{ {i} }}\n"),
            );
        }
        for (name, text) in directive_files(directives) {
            add(&format!(".swarm/directives/{name}"), &text);
        }
        add(".swarm/.gitattributes", "events/*.jsonl merge=union\n");
        stdin.write_all(&buf).expect("write fast-import");
    }
    assert!(fi.wait().expect("fast-import").success());
    git(repo, &["tag", "base"]);
    git(repo, &["read-tree", "HEAD"]);
    std::fs::create_dir_all(repo.join(".swarm/directives")).expect("mkdir");
    std::fs::create_dir_all(repo.join(".swarm/events")).expect("mkdir");
    std::fs::write(
        repo.join(".swarm/.gitattributes"),
        "events/*.jsonl merge=union\n",
    )
    .expect("write");
    for (name, text) in directive_files(directives) {
        std::fs::write(repo.join(".swarm/directives").join(name), text).expect("write directive");
    }
    let mut staged = Vec::new();
    for k in 0..20 {
        let i = k * (files / 20).max(1);
        let path = path_of(i);
        let full = repo.join(&path);
        std::fs::create_dir_all(full.parent().expect("parent")).expect("mkdir");
        std::fs::write(&full, format!("// file {i}\nfn f{i}() -> u32 {{ {i} }}\n// changed: TODO remove\nlet x = y.unwrap();\n")).expect("write");
        staged.push(path);
    }
    let mut args = vec!["add", "--"];
    args.extend(staged.iter().map(String::as_str));
    git(repo, &args);
    git(repo, &["commit", "-q", "-m", "change"]);
    git(repo, &["tag", "changed"]);
    git(repo, &["reset", "-q", "--soft", "HEAD~1"]);
}

fn path_of(i: usize) -> String {
    format!("src/m{:03}/d{:02}/f{i}.rs", i % 250, (i / 250) % 40)
}

fn directive_files(n: usize) -> Vec<(String, String)> {
    (0..n)
        .map(|i| {
            let verify = match i % 4 {
                0 => format!("grep:unwrap\\(\\)|TODO {i}:src/m{:03}/**", i % 250),
                1 => format!("file_modified:src/m{:03}/**", i % 250),
                2 => format!("file_not_modified:docs/{i}/**"),
                _ => format!("grep_tree:forbidden_{i}:src/m{:03}/d00/*.rs", i % 250),
            };
            let text = format!(
                "id = \"d-{i:05}\"\nlesson = \"Synthetic directive number {i} for the check benchmark\"\nenforcement = \"warn\"\napplies_to_agents = [\"coder\"]\nverify = ['{verify}']\n"
            );
            (format!("d-{i:05}.toml"), text)
        })
        .collect()
}
