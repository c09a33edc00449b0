//! Merges with no setup: two branches that each add directives and append
//! events to the same month file merge in either order, and rebase, with no
//! conflict — using only the committed `.swarm/.gitattributes`
//! (`events/*.jsonl merge=union`; the harness points `GIT_CONFIG_GLOBAL` at
//! /dev/null, so no merge driver is configured anywhere) — and all three
//! fold to the same state. A cherry-pick that repeats event lines changes
//! nothing but the duplicate count.

use crate::common;

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use common::TestEnv;
use serde_json::Value;

const MONTH_FILE: &str = ".swarm/events/2026-11.jsonl";
/// A directive of the template, present on every branch.
const SHARED: &str = "no-private-keys";

/// Runs `git-swarm ARGS` at a fixed time on the checked-out branch of the main repository.
#[track_caller]
fn swarm_at(env: &TestEnv, now: &str, args: &[&str]) {
    env.swarm_with(args, &[("GIT_SWARM_NOW", now)], None)
        .success();
}

#[track_caller]
fn add_directive(env: &TestEnv, now: &str, id: &str) {
    swarm_at(
        env,
        now,
        &[
            "add",
            "--id",
            id,
            "--lesson",
            &format!("Keep the lesson learned on branch {id} in mind"),
            "--agents",
            "coder",
            "--forbid",
            "forgetting it",
        ],
    );
}

#[track_caller]
fn record(env: &TestEnv, now: &str, kind: &str, directive: &str, count: u32) {
    swarm_at(
        env,
        now,
        &[
            "record",
            kind,
            "--directive",
            directive,
            "--count",
            &count.to_string(),
        ],
    );
}

/// Commits what changed in `.swarm/` (directives) with git, then the events
/// recorded since with `git swarm commit`, as a user does.
#[track_caller]
fn commit(env: &TestEnv, message: &str) {
    if !env.git(&["status", "--porcelain", ".swarm"]).is_empty() {
        env.git(&["add", "-A", ".swarm"]);
        env.git(&["commit", "-q", "-m", message]);
    }
    swarm_at(env, "2026-11-22T10:00:00Z", &["commit", "-m", message]);
    assert!(
        !env.exists(common::PENDING_NOV),
        "{message}: every event committed"
    );
}

/// main: events in the month file. a and b: a directive each and events in
/// that same file, at times that interleave.
fn two_branches() -> TestEnv {
    let env = TestEnv::initialised();
    assert_eq!(
        env.git(&["check-attr", "merge", "--", MONTH_FILE]),
        format!("{MONTH_FILE}: merge: union\n"),
        "the committed .gitattributes does not mark event files merge=union"
    );
    record(&env, "2026-11-22T10:00:00Z", "shown", SHARED, 3);
    commit(&env, "common events");

    env.git(&["checkout", "-q", "-b", "a"]);
    add_directive(&env, "2026-11-23T09:00:00Z", "from-a");
    record(&env, "2026-11-23T09:00:00Z", "check", "from-a", 2);
    commit(&env, "a: add from-a");
    record(&env, "2026-11-25T08:00:00Z", "outcome", SHARED, 2);
    commit(&env, "a: outcomes");

    env.git(&["checkout", "-q", "-b", "b", "main"]);
    add_directive(&env, "2026-11-24T12:00:00Z", "from-b");
    record(&env, "2026-11-24T12:00:00Z", "check", "from-b", 2);
    record(&env, "2026-11-24T12:00:00Z", "check", SHARED, 2);
    commit(&env, "b: add from-b");
    // Earlier than everything on a: the fold orders by time, not by file position.
    record(&env, "2026-11-22T11:00:00Z", "ack", SHARED, 2);
    commit(&env, "b: acks");
    env.git(&["checkout", "-q", "main"]);
    env
}

/// A fresh clone of the main repository, on a new branch `result` at `start`.
fn clone(env: &TestEnv, name: &str, start: &str) -> PathBuf {
    env.git_in(env.tmp.path(), &["clone", "-q", "repo", name]);
    let dir = env.tmp.path().join(name);
    env.git_in(&dir, &["checkout", "-q", "-b", "result", start]);
    dir
}

/// Runs the binary in `dir`, raw (ids not normalised); asserts success.
#[track_caller]
fn raw(env: &TestEnv, dir: &Path, args: &[&str]) -> String {
    let out = env
        .command(common::bin(), dir)
        .args(args)
        .output()
        .expect("run git-swarm");
    assert!(
        out.status.success(),
        "git-swarm {args:?} in {} failed:\n{}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}):\n{text}"))
}

/// What a checkout folds to: `log --format json` and `list --format json`.
#[derive(Debug, PartialEq)]
struct Folded {
    log: String,
    list: String,
}

/// Checks the checkout is clean and valid, and returns its fold.
#[track_caller]
fn folded(env: &TestEnv, dir: &Path) -> Folded {
    assert_eq!(
        env.git_in(dir, &["status", "--porcelain"]),
        "",
        "{} is not clean",
        dir.display()
    );
    let validate = env.swarm_in(dir, &["validate"]);
    validate.success();
    assert!(
        !validate.stdout.contains("warning"),
        "{}",
        validate.snapshot()
    );
    Folded {
        log: raw(env, dir, &["log", "--format", "json"]),
        list: raw(env, dir, &["list", "--format", "json"]),
    }
}

/// The ids in the month file at `rev` of the main repository.
fn ids_at(env: &TestEnv, rev: &str) -> Vec<String> {
    env.git(&["show", &format!("{rev}:{MONTH_FILE}")])
        .lines()
        .map(|l| json(l)["id"].as_str().expect("id").to_owned())
        .collect()
}

fn file_ids(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join(MONTH_FILE))
        .expect("read month file")
        .lines()
        .map(|l| json(l)["id"].as_str().expect("id").to_owned())
        .collect()
}

#[test]
fn merges_in_both_orders_and_a_rebase_fold_the_same() {
    let env = two_branches();

    let b_into_a = clone(&env, "b-into-a", "origin/a");
    env.git_in(&b_into_a, &["merge", "-q", "--no-edit", "origin/b"]);
    let a_into_b = clone(&env, "a-into-b", "origin/b");
    env.git_in(&a_into_b, &["merge", "-q", "--no-edit", "origin/a"]);
    let rebased = clone(&env, "a-rebased-onto-b", "origin/a");
    env.git_in(&rebased, &["rebase", "-q", "origin/b"]);
    // a's directive, its events (`git swarm commit`), then the outcomes.
    assert_eq!(
        env.git_in(&rebased, &["rev-list", "--count", "origin/b..HEAD"]),
        "3\n",
        "the rebase did not replay every commit of a"
    );

    // Every event of both branches, each line once.
    let expected: HashSet<String> = ids_at(&env, "a")
        .into_iter()
        .chain(ids_at(&env, "b"))
        .collect();
    // Plus the escalation the two recorded checks of from-a and of from-b
    // open (the shared directive is critical + enforce already: none).
    assert_eq!(expected.len(), 3 + 5 + 7 + 2);
    for dir in [&b_into_a, &a_into_b, &rebased] {
        let ids = file_ids(dir);
        assert_eq!(ids.len(), expected.len(), "{}", dir.display());
        assert_eq!(ids.into_iter().collect::<HashSet<_>>(), expected);
        for d in ["from-a", "from-b"] {
            assert!(dir.join(format!(".swarm/directives/{d}.toml")).is_file());
        }
    }

    // The control: it is the committed attribute that makes these merges
    // clean. Overridden locally, the same merge conflicts.
    let control = clone(&env, "control", "origin/b");
    env.write(
        "../control/.git/info/attributes",
        ".swarm/events/*.jsonl merge=text\n",
    );
    let merge = env
        .command("git", &control)
        .args(["merge", "-q", "--no-edit", "origin/a"])
        .output()
        .expect("run git merge");
    assert!(
        !merge.status.success(),
        "without merge=union the merge should conflict"
    );
    assert!(
        env.git_in(&control, &["diff", "--name-only", "--diff-filter=U"])
            .contains(MONTH_FILE)
    );

    let first = folded(&env, &b_into_a);
    assert_eq!(folded(&env, &a_into_b), first, "a into b folds differently");
    assert_eq!(
        folded(&env, &rebased),
        first,
        "the rebase folds differently"
    );

    // And the fold is the sum of both branches, in time order.
    let log = json(&first.log);
    let log = log.as_array().expect("array");
    assert_eq!(log.len(), expected.len());
    let order: Vec<(&str, &str)> = log
        .iter()
        .map(|e| (e["ts"].as_str().expect("ts"), e["id"].as_str().expect("id")))
        .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}");
    let list = json(&first.list);
    let counts = |id: &str| {
        list.as_array()
            .expect("array")
            .iter()
            .find(|r| r["id"] == id)
            .unwrap_or_else(|| panic!("{id} not listed"))["events"]
            .clone()
    };
    assert_eq!(
        counts(SHARED),
        serde_json::json!({"shown": 3, "outcome": 2, "check": 2, "ack": 2})
    );
    assert_eq!(
        counts("from-a"),
        serde_json::json!({"added": 1, "check": 2, "escalation": 1})
    );
    assert_eq!(
        counts("from-b"),
        serde_json::json!({"added": 1, "check": 2, "escalation": 1})
    );

    // Checking out another branch in a clone whose index holds the merged
    // fold: the next command notices and folds what is checked out now.
    env.git_in(&rebased, &["checkout", "-q", "origin/a"]);
    let after_checkout = folded(&env, &rebased);
    assert_ne!(after_checkout, first);
    assert!(!after_checkout.list.contains("from-b"));
    raw(&env, &rebased, &["index", "rebuild"]);
    assert_eq!(folded(&env, &rebased), after_checkout);
}

#[test]
fn a_cherry_pick_that_repeats_events_changes_only_the_duplicate_count() {
    let env = two_branches();
    // b merged into a: the month file reads main, a, b.
    let b_into_a = clone(&env, "b-into-a", "origin/a");
    env.git_in(&b_into_a, &["merge", "-q", "--no-edit", "origin/b"]);
    // a merged into b: main, b, a.
    let a_into_b = clone(&env, "a-into-b", "origin/b");
    env.git_in(&a_into_b, &["merge", "-q", "--no-edit", "origin/a"]);
    let before = folded(&env, &a_into_b);
    let distinct = file_ids(&a_into_b).len();

    // Cherry-picking the other merge (relative to a) brings b's lines again:
    // git inserts them after a's, though they are already there before them.
    env.git_in(&a_into_b, &["fetch", "-q", "../b-into-a", "result"]);
    env.git_in(&a_into_b, &["cherry-pick", "-m", "1", "FETCH_HEAD"]);
    let ids = file_ids(&a_into_b);
    let b_lines = ids_at(&env, "b").len() - ids_at(&env, "main").len();
    assert_eq!(
        ids.len(),
        distinct + b_lines,
        "the cherry-pick did not repeat b's event lines; the test needs them"
    );
    assert_eq!(ids.iter().collect::<HashSet<_>>().len(), distinct);

    // Readers fold one copy of each id: nothing else changes.
    assert_eq!(folded(&env, &a_into_b), before);
    let status = json(&raw(
        &env,
        &a_into_b,
        &["index", "status", "--format", "json"],
    ));
    assert_eq!(status["fresh"], true);
    assert_eq!(status["events"], distinct);
    assert_eq!(status["duplicates"], b_lines);
    // A rebuild from scratch agrees with the incremental refresh.
    let rebuilt = json(&raw(
        &env,
        &a_into_b,
        &["index", "rebuild", "--format", "json"],
    ));
    assert_eq!(rebuilt["events"], distinct);
    assert_eq!(rebuilt["duplicates"], b_lines);
    assert_eq!(folded(&env, &a_into_b), before);

    let doctor = env.swarm_in(&a_into_b, &["doctor"]);
    doctor.success();
    assert_eq!(
        doctor.stdout.matches("warning: event id").count(),
        b_lines,
        "{}",
        doctor.snapshot()
    );
}

/// A deescalation ends the episode it names. Branch b deescalates episode
/// #1 after branch a has already done so and seen episode #2 open: once
/// merged, in either order, b's stale deescalation ends nothing, and the
/// directive stays critical + enforce.
#[test]
fn a_stale_deescalation_from_another_branch_ends_no_later_episode() {
    const RULE: &str = "run-tests-before-handoff";
    let env = TestEnv::initialised();
    let violation = |now: &str, change: &str| {
        swarm_at(
            &env,
            now,
            &[
                "record",
                "check",
                "--directive",
                RULE,
                "--field",
                &format!("change=\"{change}\""),
            ],
        );
    };
    violation("2026-11-10T00:00:00Z", "c1");
    violation("2026-11-11T00:00:00Z", "c2");
    commit(&env, "episode #1");
    let deescalate = |now: &str| {
        swarm_at(
            &env,
            now,
            &[
                "deescalate",
                RULE,
                "--justification",
                "episode one was handled",
            ],
        );
    };
    env.git(&["checkout", "-q", "-b", "a"]);
    deescalate("2026-11-12T00:00:00Z");
    violation("2026-11-13T00:00:00Z", "c3");
    violation("2026-11-14T00:00:00Z", "c4");
    commit(&env, "a: #1 ended, #2 open");
    env.git(&["checkout", "-q", "-b", "b", "main"]);
    deescalate("2026-11-15T00:00:00Z");
    commit(&env, "b: #1 ended too");
    env.git(&["checkout", "-q", "main"]);

    for (name, first, second) in [("ab", "a", "b"), ("ba", "b", "a")] {
        let dir = clone(&env, name, "main");
        for branch in [first, second] {
            env.git_in(
                &dir,
                &["merge", "-q", "--no-edit", &format!("origin/{branch}")],
            );
        }
        let shown = json(&raw(&env, &dir, &["show", RULE, "--format", "json"]));
        assert_eq!(
            (
                shown["effective"]["priority"].as_str(),
                shown["effective"]["enforcement"].as_str()
            ),
            (Some("critical"), Some("enforce")),
            "{name}: {shown:#}"
        );
    }
    // On a alone, as before the merge.
    env.git(&["checkout", "-q", "a"]);
    let shown = json(&raw(&env, &env.root, &["show", RULE, "--format", "json"]));
    assert_eq!(shown["effective"]["priority"], "critical", "{shown:#}");
}
