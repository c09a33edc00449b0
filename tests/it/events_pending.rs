//! Recorded events wait in the git dir until `git swarm commit`: clones
//! that record, commit, push and pull in turn never see git refuse, and
//! fold the same log (issue 39).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::common::{PENDING_NOV, TestEnv};

/// A bare remote holding `env`'s `main`, and `n` clones of it.
fn clones(env: &TestEnv, n: usize) -> Vec<PathBuf> {
    let remote = env.tmp.path().join("remote.git");
    env.git(&[
        "init",
        "-q",
        "--bare",
        "-b",
        "main",
        remote.to_str().expect("utf-8"),
    ]);
    env.git(&["remote", "add", "origin", remote.to_str().expect("utf-8")]);
    env.git(&["push", "-q", "origin", "main"]);
    (0..n)
        .map(|i| {
            let dir = env.tmp.path().join(format!("clone{i}"));
            env.git(&[
                "clone",
                "-q",
                remote.to_str().expect("utf-8"),
                dir.to_str().expect("utf-8"),
            ]);
            env.git_in(&dir, &["config", "swarm.injectUnreviewed", "allow"]);
            dir
        })
        .collect()
}

/// Records one `shown` event in `dir`, at `now`.
fn record(env: &TestEnv, dir: &Path, now: &str) {
    let out = env
        .command("git", dir)
        .args(["swarm", "inject", "--role", "coder"])
        .env("GIT_SWARM_NOW", now)
        .output()
        .expect("git swarm inject");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `git pull`, which must succeed; `rebase` alternates the two kinds.
#[track_caller]
fn pull(env: &TestEnv, dir: &Path, rebase: bool) {
    let how = if rebase { "--rebase" } else { "--no-rebase" };
    env.git_in(dir, &["pull", "-q", how, "origin", "main"]);
}

/// The ids `git swarm log` shows in `dir`.
fn ids(env: &TestEnv, dir: &Path) -> BTreeSet<String> {
    // Not through `swarm_in`, which writes every id as `[ULID]`.
    let out = env
        .command("git", dir)
        .args(["swarm", "log", "--format", "json"])
        .output()
        .expect("git swarm log");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let all: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).expect("log is JSON");
    all.iter()
        .map(|e| e["id"].as_str().expect("id").to_owned())
        .collect()
}

/// Event lines in the tracked files of `dir`.
fn tracked_lines(dir: &Path) -> Vec<String> {
    let mut lines = Vec::new();
    for f in std::fs::read_dir(dir.join(".swarm/events"))
        .expect("events")
        .flatten()
    {
        let text = std::fs::read_to_string(f.path()).expect("event file");
        lines.extend(text.lines().map(str::to_owned));
    }
    lines
}

#[test]
fn a_clone_with_pending_events_pulls_a_new_months_file() {
    let env = TestEnv::initialised();
    let dirs = clones(&env, 2);
    let (a, b) = (&dirs[0], &dirs[1]);
    // A records the month's first event, commits and pushes it: the month
    // file is new in the remote.
    record(&env, a, "2026-11-22T10:00:00Z");
    let done = env.swarm_in(a, &["commit"]);
    done.success();
    assert!(
        done.stdout
            .contains("committed 1 event in .swarm/events/2026-11.jsonl"),
        "{}",
        done.stdout
    );
    assert_eq!(
        env.git_in(a, &["status", "--porcelain"]),
        "",
        "A's tree is clean"
    );
    env.git_in(a, &["push", "-q", "origin", "main"]);
    // B recorded the same month meanwhile, and has not committed.
    record(&env, b, "2026-11-22T10:00:01Z");
    assert!(b.join(PENDING_NOV).is_file());
    assert_eq!(
        env.git_in(b, &["status", "--porcelain"]),
        "",
        "nothing waits in B's tree"
    );
    pull(&env, b, false);
    assert_eq!(
        ids(&env, a).len() + 1,
        ids(&env, b).len(),
        "B folds A's event and its own"
    );
    let status = env.swarm_in(b, &["status"]);
    assert!(
        status
            .stdout
            .contains("Events not yet committed: 1 (`git swarm commit`"),
        "{}",
        status.stdout
    );
    // B's own event then goes out in the same file; A pulls it with a
    // pending event of its own, by rebase.
    env.swarm_in(b, &["commit"]).success();
    env.git_in(b, &["push", "-q", "origin", "main"]);
    record(&env, a, "2026-11-22T10:00:02Z");
    pull(&env, a, true);
    env.swarm_in(a, &["commit"]).success();
    env.git_in(a, &["push", "-q", "origin", "main"]);
    pull(&env, b, false);
    assert_eq!(ids(&env, a), ids(&env, b));
    assert_eq!(ids(&env, a).len(), 3);
}

#[test]
fn two_then_ten_clones_record_commit_push_and_pull_in_turn_and_agree() {
    for n in [2, 10] {
        let env = TestEnv::initialised();
        let dirs = clones(&env, n);
        let mut recorded = 0;
        for round in 0..4 {
            // Half the rounds on each side of a month boundary.
            let now = if round < 2 {
                "2026-11-30T23:59:00Z"
            } else {
                "2026-12-01T00:01:00Z"
            };
            for (i, dir) in dirs.iter().enumerate() {
                record(&env, dir, now);
                recorded += 1;
                // Some commit what they recorded, some keep it pending
                // through the pull; pulls alternate merge and rebase.
                if (round + i) % 2 == 0 {
                    env.swarm_in(dir, &["commit"]).success();
                }
                pull(&env, dir, (round + i) % 3 == 0);
                record(&env, dir, now);
                recorded += 1;
                env.git_in(dir, &["push", "-q", "origin", "HEAD:main"]);
                // A checkout and a stash with events pending.
                env.git_in(dir, &["checkout", "-q", "-b", &format!("side{round}")]);
                env.git_in(dir, &["checkout", "-q", "main"]);
                env.git_in(dir, &["stash", "-q"]);
            }
        }
        // Each commits what is left, in turn, and then all pull.
        for dir in &dirs {
            pull(&env, dir, false);
            env.swarm_in(dir, &["commit"]).success();
            env.git_in(dir, &["push", "-q", "origin", "HEAD:main"]);
        }
        for dir in &dirs {
            pull(&env, dir, true);
        }
        let first = ids(&env, &dirs[0]);
        assert_eq!(first.len(), recorded, "{n} clones: every event once");
        for dir in &dirs {
            assert_eq!(
                ids(&env, dir),
                first,
                "{n} clones: {} folds the same log",
                dir.display()
            );
            // Nothing pending, and no line twice in the tracked files.
            assert!(!dir.join(PENDING_NOV).exists());
            let lines = tracked_lines(dir);
            let unique: BTreeSet<&String> = lines.iter().collect();
            assert_eq!(
                unique.len(),
                lines.len(),
                "{n} clones: a line committed twice"
            );
            assert_eq!(lines.len(), recorded);
        }
        assert!(dirs[0].join(".swarm/events/2026-12.jsonl").is_file());
    }
}

#[test]
fn commit_commits_the_event_files_alone_and_leaves_staged_work_staged() {
    let env = TestEnv::initialised();
    env.swarm(&["inject", "--role", "coder"]).success();
    env.write("notes.txt", "work in progress\n");
    env.git(&["add", "notes.txt"]);
    let done = env.swarm(&["commit", "-m", "chore: record what the agents learned"]);
    done.success();
    let show = env.git(&["show", "--stat", "--format=%s", "HEAD"]);
    assert!(
        show.starts_with("chore: record what the agents learned\n"),
        "{show}"
    );
    assert!(show.contains(".swarm/events/2026-11.jsonl"), "{show}");
    assert!(!show.contains("notes.txt"), "{show}");
    assert_eq!(env.git(&["status", "--porcelain"]), "A  notes.txt\n");
    assert!(!env.exists(PENDING_NOV), "nothing left pending");
    // Nothing to commit: said, exit 0.
    let again = env.swarm(&["commit"]);
    again.success();
    assert_eq!(again.stdout, "no events waiting to be committed\n");
}

#[test]
fn a_commit_git_refuses_moves_nothing() {
    let env = TestEnv::initialised();
    env.swarm(&["inject", "--role", "coder"]).success();
    let pending = env.read(PENDING_NOV);
    let tracked = env.exists(".swarm/events/2026-11.jsonl");
    let hooks = env.path(".git/hooks");
    std::fs::create_dir_all(&hooks).expect("hooks");
    let hook = hooks.join("pre-commit");
    std::fs::write(&hook, "#!/bin/sh\necho 'no commits today' >&2\nexit 1\n").expect("hook");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let refused = env.swarm(&["commit"]);
    refused.code(2);
    assert!(
        refused.stderr.contains("no commits today"),
        "{}",
        refused.stderr
    );
    assert!(
        refused.stderr.contains("nothing left the pending log"),
        "{}",
        refused.stderr
    );
    assert_eq!(
        env.read(PENDING_NOV),
        pending,
        "the pending log is as it was"
    );
    assert_eq!(
        env.exists(".swarm/events/2026-11.jsonl"),
        tracked,
        "the tracked file too"
    );
    assert_eq!(
        env.git(&["status", "--porcelain"]),
        "",
        "and its index entry"
    );
}

#[test]
fn commit_passes_git_swarms_own_pre_commit_hook() {
    let env = TestEnv::initialised();
    env.swarm(&["hooks", "install"]).success();
    env.swarm(&["inject", "--role", "coder"]).success();
    let before = env.event_lines().len();
    let done = env.swarm(&["commit"]);
    done.success();
    assert_eq!(
        env.git(&["show", "--name-only", "--format=", "HEAD"]),
        ".swarm/events/2026-11.jsonl\n"
    );
    // The hook's check of that commit recorded nothing new to commit.
    assert_eq!(env.event_lines().len(), before);
    assert_eq!(env.git(&["status", "--porcelain"]), "");
}
