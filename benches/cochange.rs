//! `git swarm cochange --max-commits 5000 --dry-run` beside
//! `git log --name-only --no-merges -n 5000`, whole-process, on the same
//! repository: the commits read and diffed, renames paired, in both.
//!
//! `cargo bench --bench cochange`. The repository is `COCHANGE_BENCH_REPO`
//! when set (any clone; it is cloned again with `--shared --no-checkout`
//! into a temporary folder, so it is not written to), else one generated
//! with `git fast-import` and cached under `target/cochange-bench/`: 30,000
//! files, 5,500 commits of a few files each over a year, with renames and
//! bulk commits. `SWARM_BENCH_RUNS` sets the rounds (default 7); the two
//! commands are timed alternately and the medians compared.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

#[path = "common/mod.rs"]
mod common;
use common::{Rng, env_num, git, ms};

/// Files of the generated repository: `d{0..30}/s{0..40}/f{0..25}.txt`.
const DIRS: usize = 30;
const SUBDIRS: usize = 40;
const FILES: usize = 25;
const COMMITS: usize = 5_500;

fn path(d: usize, s: usize, f: usize) -> String {
    format!("d{d:02}/s{s:02}/f{f:02}.txt")
}

/// The fast-import stream of the generated history.
fn stream() -> Vec<u8> {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut out = Vec::new();
    let mut time = 1_700_000_000u64;
    // The current name of each file slot, as renames move them.
    let mut names: Vec<String> = (0..DIRS * SUBDIRS * FILES)
        .map(|i| path(i / (SUBDIRS * FILES), (i / FILES) % SUBDIRS, i % FILES))
        .collect();
    let content = |name: &str, version: usize| {
        let mut text = String::new();
        for line in 0..20 {
            text.push_str(&format!("{name} line {line} of a file that changes\n"));
        }
        text.push_str(&format!("version {version}\n"));
        text
    };
    let mut commit = |out: &mut Vec<u8>, n: usize, ops: &str| {
        let msg = format!("commit {n}\n");
        let _ = write!(
            out,
            "commit refs/heads/main\nmark :{}\ncommitter Bench <bench@example.com> {time} +0000\ndata {}\n{msg}",
            n + 1,
            msg.len()
        );
        if n > 0 {
            let _ = writeln!(out, "from :{n}");
        }
        out.extend_from_slice(ops.as_bytes());
        out.push(b'\n');
        time += 3_600 + (n as u64 % 7) * 600;
    };
    let modify = |ops: &mut String, name: &str, version: usize| {
        let data = content(name, version);
        ops.push_str(&format!(
            "M 100644 inline {name}\ndata {}\n{data}",
            data.len()
        ));
    };
    let mut ops = String::new();
    for name in &names {
        modify(&mut ops, name, 0);
    }
    commit(&mut out, 0, &ops);
    for n in 1..COMMITS {
        let mut ops = String::new();
        if n % 97 == 0 {
            // A rename, with a small edit, as most renames come.
            let slot = rng.below(names.len());
            let old = names[slot].clone();
            let new = old.replace(".txt", &format!("-r{n}.txt"));
            ops.push_str(&format!("D {old}\n"));
            modify(&mut ops, &new, n);
            names[slot] = new;
        } else if n % 251 == 0 {
            // A bulk commit: a folder reformatted.
            let d = rng.below(DIRS);
            for s in 0..3 {
                for f in 0..FILES {
                    let slot = d * SUBDIRS * FILES + s * FILES + f;
                    modify(&mut ops, &names[slot].clone(), n);
                }
            }
        } else {
            // One to five files, mostly of one folder, sometimes a planted pair.
            let d = rng.below(DIRS);
            let s = rng.below(SUBDIRS);
            let k = 1 + rng.below(5);
            for _ in 0..k {
                let (d, s) = if rng.below(4) == 0 {
                    (rng.below(DIRS), rng.below(SUBDIRS))
                } else {
                    (d, s)
                };
                let slot = d * SUBDIRS * FILES + s * FILES + rng.below(FILES);
                modify(&mut ops, &names[slot].clone(), n);
            }
            if rng.below(10) == 0 {
                let pair = rng.below(20);
                modify(&mut ops, &names[pair * 7].clone(), n);
                modify(&mut ops, &names[pair * 7 + 3000].clone(), n);
            }
        }
        commit(&mut out, n, &ops);
    }
    out
}

/// The generated repository, made once and kept under `target/`.
fn generated() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/cochange-bench");
    let repo = dir.join(format!("repo-{COMMITS}"));
    if repo.join(".done").exists() {
        return repo;
    }
    let _ = std::fs::remove_dir_all(&repo);
    std::fs::create_dir_all(&repo).expect("mkdir");
    println!("generating {} ({COMMITS} commits) …", repo.display());
    git(&repo, &["init", "-q", "--bare", "-b", "main"]);
    let mut child = common::command(Path::new("git"), &repo, &["fast-import", "--quiet"])
        .stdin(Stdio::piped())
        .spawn()
        .expect("git fast-import");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(&stream())
        .expect("write the stream");
    let out = child.wait_with_output().expect("fast-import");
    assert!(
        out.status.success(),
        "fast-import: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Packed as a clone would be: deltas between versions of trees and files.
    git(&repo, &["repack", "-adq", "--depth=50", "--window=10"]);
    std::fs::write(repo.join(".done"), "").expect("mark done");
    repo
}

fn main() {
    let runs = env_num("SWARM_BENCH_RUNS", 7);
    let source = match std::env::var_os("COCHANGE_BENCH_REPO") {
        Some(p) => PathBuf::from(p),
        None => generated(),
    };
    let tmp = tempfile::Builder::new()
        .prefix("git-swarm-cochange-bench-")
        .tempdir()
        .expect("temp dir");
    let bin = common::installed_binary(tmp.path());
    let repo = tmp.path().join("repo");
    let status = std::process::Command::new("git")
        .args(["clone", "-q", "--shared", "--no-checkout"])
        .arg(&source)
        .arg(&repo)
        .status()
        .expect("git clone");
    assert!(status.success(), "git clone {}", source.display());
    // A `.swarm/` for the command to open; the history is all it reads.
    std::fs::create_dir_all(repo.join(".swarm")).expect("mkdir .swarm");
    let count = git(&repo, &["rev-list", "--count", "--no-merges", "HEAD"]);
    let files = git(&repo, &["ls-tree", "-r", "--name-only", "HEAD"])
        .lines()
        .count();
    println!(
        "git swarm cochange benchmark: {} ({} non-merge commits, {files} files at HEAD), {runs} rounds",
        source.display(),
        count.trim()
    );
    let ours = ["cochange", "--max-commits", "5000", "--dry-run"];
    let theirs = ["log", "--name-only", "--no-merges", "-n", "5000"];
    // Warm the page cache.
    common::run(&bin, &repo, &ours, &[0]);
    common::run(Path::new("git"), &repo, &theirs, &[0]);
    let (mut a, mut b): (Vec<Duration>, Vec<Duration>) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        a.push(common::time(&bin, &repo, &ours, &[0]));
        b.push(common::time(Path::new("git"), &repo, &theirs, &[0]));
    }
    let (a, b) = (common::median_of(a), common::median_of(b));
    println!(
        "  cochange --max-commits 5000  median {:>10}   git log --name-only --no-merges -n 5000  median {:>10}   ratio {:.2}x   (target ≤ 1.5)",
        ms(a),
        ms(b),
        a.as_secs_f64() / b.as_secs_f64()
    );
}
