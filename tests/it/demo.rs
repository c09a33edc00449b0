//! `git swarm demo` (issue 41): the loop played in a new repository with
//! the real commands and hooks. Its transcript is a snapshot (with
//! `--fixed`, the same every run); the repository it leaves passes
//! `validate`, and its log folds to the states the demo printed.

use std::process::Command;

use crate::common::{self, TestEnv};

/// Runs `git swarm demo --fixed --dir DIR` as a user would (through git),
/// returning exit code and what it printed, with DIR as `[DIR]`.
fn demo(env: &TestEnv, dir: &std::path::Path) -> (i32, String) {
    demo_with(dir, env.command("git", &env.root))
}

/// The same, through `git` as given (another PATH).
fn demo_with(dir: &std::path::Path, mut git: Command) -> (i32, String) {
    let out = git
        .args(["swarm", "demo", "--fixed", "--dir"])
        .arg(dir)
        .output()
        .expect("run the demo");
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    (
        out.status.code().unwrap_or(-1),
        text.replace(&*dir.to_string_lossy(), "[DIR]"),
    )
}

/// A command run in the demo's repository, as the demo ran its own: the
/// user's settings left out.
fn in_demo(dir: &std::path::Path, args: &[&str]) -> common::Run {
    let out = Command::new(common::bin())
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("run git-swarm");
    common::Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

#[test]
fn the_demo_plays_the_loop_and_leaves_a_valid_repository() {
    let env = TestEnv::new();
    let dir = env.tmp.path().join("demo-a");
    let (code, text) = demo(&env, &dir);
    assert_eq!(code, 0, "{text}");
    insta::assert_snapshot!("demo_transcript", text);

    // Two runs print the same: fixed clock, fixed ids, fixed commit dates,
    // even from a binary installed somewhere else (as CI's checkout is).
    let elsewhere = env.tmp.path().join("elsewhere/bin");
    std::fs::create_dir_all(&elsewhere).expect("a folder for a copy");
    std::fs::copy(common::bin(), elsewhere.join("git-swarm")).expect("copy the binary");
    let mut git = env.command("git", &env.root);
    git.env(
        "PATH",
        format!(
            "{}:{}",
            elsewhere.display(),
            std::env::var("PATH").unwrap_or_default()
        ),
    );
    let again = env.tmp.path().join("demo-b");
    assert_eq!(
        demo_with(&again, git),
        (0, text.clone()),
        "the demo is deterministic"
    );

    // The repository it leaves is sound, and its log says what it printed.
    let run = in_demo(&dir, &["validate"]);
    assert_eq!(run.code, 0, "{}", run.snapshot());
    let explain = in_demo(&dir, &["explain", "no-dbg-macro"]);
    assert!(
        explain.stdout.contains("critical/enforce in force"),
        "{}",
        explain.snapshot()
    );
    let stats = in_demo(&dir, &["stats", "--format", "json"]);
    let stats: serde_json::Value = serde_json::from_str(&stats.stdout).expect("stats JSON");
    let of = |id: &str| {
        (stats["directives"].as_array().into_iter().flatten())
            .find(|d| d["id"] == id)
            .cloned()
            .unwrap_or_else(|| panic!("{id} in {stats:#}"))
    };
    assert_eq!(of("no-force-push-default-branch")["prevented"], 1);
    assert_eq!(of("no-private-keys")["violations"], 1);
    assert_eq!(of("no-dbg-macro")["escalated"], true);
    assert_eq!(stats["by_kind"]["reflected"], 1);
    assert_eq!(stats["roles"][0]["applied"], 3, "{stats:#}");
    // Nothing left waiting: the demo committed its events.
    let status = in_demo(&dir, &["status"]);
    assert!(
        status.stdout.contains("Events not yet committed: 0\n"),
        "{}",
        status.snapshot()
    );
    let log = Command::new("git")
        .args(["log", "--format=%s"])
        .current_dir(&dir)
        .output()
        .expect("git log");
    let subjects = String::from_utf8_lossy(&log.stdout).into_owned();
    assert!(
        !subjects.contains("Add the deploy key") && !subjects.contains("Add b\n"),
        "blocked commits are not in history: {subjects}"
    );
}

#[test]
fn the_demo_refuses_a_folder_that_is_not_empty() {
    let env = TestEnv::new();
    let dir = env.tmp.path().join("busy");
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(dir.join("notes.txt"), "mine\n").expect("write");
    let (code, text) = demo(&env, &dir);
    assert_eq!(code, 2, "{text}");
    assert!(text.contains("[DIR] is not an empty folder"), "{text}");
    assert_eq!(
        std::fs::read_to_string(dir.join("notes.txt")).expect("kept"),
        "mine\n"
    );
    assert!(!dir.join(".git").exists(), "nothing was made there");
    let file = dir.join("notes.txt");
    let (code, text) = demo(&env, &file);
    assert_eq!(code, 2, "{text}");
    assert!(text.contains("[DIR] is not an empty folder"), "{text}");
}
