//! `git swarm handoff check` beside `git swarm check --range` on the same
//! change, whole-process, in one run.
//!
//! Run: `cargo bench --bench handoff`. It generates a repository of
//! `SWARM_BENCH_FILES` tracked files (default 100,000) with fast-import,
//! 100 active directives, `SWARM_BENCH_HANDOFFS` open handoffs (default
//! 100, each with its `handoff_created` event) and a 20-file change (tags
//! `base` and `changed`), then prints the medians of 41 alternating runs of
//! `handoff check t0000 --range base..changed` (a grep criterion, the 20
//! paths held against owns and readonly, every handoff's standing folded)
//! and `check --range base..changed`, and their ratio (target ≤ 1.5x).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Instant;

#[path = "common/mod.rs"]
mod common;
use common::{command, env_num, git, ms};

const RUNS: usize = 41;
const WARM_UP: usize = 3;

fn main() {
    let files = env_num("SWARM_BENCH_FILES", 100_000);
    let handoffs = env_num("SWARM_BENCH_HANDOFFS", 100);
    let tmp = tempfile::Builder::new()
        .prefix("git-swarm-handoff-bench-")
        .tempdir()
        .expect("temp dir");
    let repo = match std::env::var_os("SWARM_BENCH_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => tmp.path().join("repo"),
    };
    let bin = common::installed_binary(tmp.path());
    let t = Instant::now();
    generate(&repo, files, handoffs);
    println!(
        "git swarm handoff check benchmark: {files} tracked files, {handoffs} open handoffs, 20 changed files (generated in {:.1} s: {})",
        t.elapsed().as_secs_f64(),
        repo.display()
    );
    let _ = std::process::Command::new("sync").status();
    let ours: &[&str] = &["handoff", "check", "t0000", "--range", "base..changed"];
    let theirs: &[&str] = &["check", "--range", "base..changed"];
    // Both record on their first runs (a violation once per change): the
    // warm-up makes every timed run the steady state.
    let (mut ours_v, mut check_v) = (Vec::new(), Vec::new());
    for _ in 0..WARM_UP {
        common::time(&bin, &repo, ours, &[0, 1]);
        common::time(&bin, &repo, theirs, &[0, 1]);
    }
    for _ in 0..RUNS {
        ours_v.push(common::time(&bin, &repo, ours, &[0, 1]));
        check_v.push(common::time(&bin, &repo, theirs, &[0, 1]));
    }
    let (o, c) = (common::median_of(ours_v), common::median_of(check_v));
    println!(
        "  git swarm handoff check  median {:>8}   git swarm check --range  median {:>8}   ratio {:.2}x (target ≤ 1.5x)",
        ms(o),
        ms(c),
        o.as_secs_f64() / c.as_secs_f64()
    );
}

fn path_of(i: usize) -> String {
    format!("src/m{:03}/d{:02}/f{i}.rs", i % 250, (i / 250) % 40)
}

/// The files and directives committed with fast-import (tag `base`), the
/// handoffs and their events in the working tree, and 20 files
/// changed and committed (tag `changed`).
fn generate(repo: &Path, files: usize, handoffs: usize) {
    let _ = std::fs::remove_dir_all(repo);
    std::fs::create_dir_all(repo).expect("mkdir");
    git(repo, &["init", "-q", "-b", "main"]);
    let mut fi = command(Path::new("git"), repo, &["fast-import", "--quiet"])
        .stdin(Stdio::piped())
        .spawn()
        .expect("fast-import");
    let directives: Vec<(String, String)> = (0..100)
        .map(|i| {
            (
                format!(".swarm/directives/d-{i:05}.toml"),
                format!(
                    "id = \"d-{i:05}\"\nlesson = \"Synthetic directive number {i} for the handoff benchmark\"\nenforcement = \"warn\"\napplies_to_agents = [\"coder\"]\npaths = [\"src/m{:03}/**\"]\nverify = ['grep:unwrap\\(\\):src/m{:03}/**']\n",
                    i % 250,
                    i % 250
                ),
            )
        })
        .collect();
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
        for (path, text) in &directives {
            add(path, text);
        }
        add(".swarm/.gitattributes", "events/*.jsonl merge=union\n");
        stdin.write_all(&buf).expect("write fast-import");
    }
    assert!(fi.wait().expect("fast-import").success());
    git(repo, &["tag", "base"]);
    git(repo, &["reset", "-q", "--hard"]);
    let base = git(repo, &["rev-parse", "HEAD"]).trim().to_owned();
    std::fs::create_dir_all(repo.join(".swarm/handoffs")).expect("mkdir");
    std::fs::create_dir_all(repo.join(".swarm/events")).expect("mkdir");
    let mut events = String::new();
    for n in 0..handoffs {
        // t0000 owns the changed files (a clean check, the common case);
        // the others own folders of their own.
        let owns = if n == 0 {
            "src/**".to_owned()
        } else {
            format!("lib/t{n:04}/**")
        };
        std::fs::write(
            repo.join(format!(".swarm/handoffs/t{n:04}.toml")),
            format!(
                "task = \"t{n:04}\"\ncreated_at = 2026-11-20T10:00:00Z\n[contract]\nowns = [\"{owns}\"]\nreadonly = [\"docs/**\"]\ncriteria = [\"grep:dbg!:src/**/*.rs\", \"The code reads well\"]\nbase = \"{base}\"\n"
            ),
        )
        .expect("write handoff");
        events.push_str(&format!(
            "{{\"id\":\"01KAAAAAAAAAAAAAAAAAAA{n:04}\",\"ts\":\"2026-11-20T10:00:00.000Z\",\"kind\":\"handoff_created\",\"task\":\"t{n:04}\"}}\n"
        ));
    }
    std::fs::write(repo.join(".swarm/events/2026-11.jsonl"), events).expect("write events");
    let mut changed = Vec::new();
    for k in 0..20 {
        let i = k * (files / 20).max(1);
        let path = path_of(i);
        std::fs::write(
            repo.join(&path),
            format!("// file {i}\nfn f{i}() -> u32 {{ {i} }}\n// changed\n"),
        )
        .expect("write");
        changed.push(path);
    }
    let mut args = vec!["add", "--"];
    args.extend(changed.iter().map(String::as_str));
    git(repo, &args);
    git(repo, &["commit", "-q", "-m", "change"]);
    git(repo, &["tag", "changed"]);
}
