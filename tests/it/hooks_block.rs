//! Hooks that block: real `git commit` and `git push` (to a local bare
//! remote) refused or let through by the directives of a committed
//! `.swarm/` — the template's `no-private-keys` is `enforce` and `critical`.
//!
//! Installing, wrapping and uninstalling hooks is tested in `hooks.rs`.

use crate::common;

use std::path::PathBuf;

use common::{Run, TestEnv};
use serde_json::Value;

/// Split so that no line of this file (or of its snapshots) is a key line:
/// this repository checks its own commits with `no-private-keys`.
const KEY_LINE: &str = concat!("-----BEGIN ", "OPENSSH PRIVATE KEY-----");

fn key_file() -> String {
    format!(
        "# deploy key\n{KEY_LINE}\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----\n"
    )
}

/// `git swarm init`, committed, and the hooks installed.
fn repo() -> TestEnv {
    let env = TestEnv::initialised();
    env.swarm(&["hooks", "install"]).success();
    env
}

/// Runs git with extra environment; never panics on failure.
fn git(env: &TestEnv, args: &[&str], vars: &[(&str, &str)]) -> Run {
    let mut cmd = env.command("git", &env.root);
    cmd.args(args);
    for (k, v) in vars {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run git");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: env.normalise(&String::from_utf8_lossy(&out.stdout)),
        stderr: env.normalise(&String::from_utf8_lossy(&out.stderr)),
    }
}

/// What the user saw: git sends a pre-commit hook's output to stderr, and a
/// pre-push hook's stdout to its own stdout.
fn shown(run: &Run) -> String {
    format!("{}{}", run.stdout, run.stderr)
}

const SKIP: (&str, &str) = ("GIT_SWARM_SKIP", "1");

fn head(env: &TestEnv) -> String {
    env.git(&["rev-parse", "HEAD"]).trim().to_owned()
}

fn check_events(env: &TestEnv) -> Vec<Value> {
    let run = env.swarm(&["log", "--kind", "check", "--format", "json"]);
    run.success();
    serde_json::from_str::<Value>(&run.stdout)
        .expect("log json")
        .as_array()
        .expect("array")
        .clone()
}

#[test]
fn a_commit_adding_a_private_key_is_refused_and_recorded_once() {
    let env = repo();
    let before = head(&env);
    env.write("deploy/id_ed25519", key_file());
    env.git(&["add", "deploy/id_ed25519"]);

    let first = git(&env, &["commit", "-q", "-m", "add the deploy key"], &[]);
    first.code(1);
    insta::assert_snapshot!(
        "refused_commit",
        first.snapshot().replace(KEY_LINE, "[the key line]")
    );
    for needle in [
        "FAIL  no-private-keys [enforce, critical]",
        &format!("deploy/id_ed25519:2: {KEY_LINE}"),
        "blocked by 1 directive: no-private-keys",
    ] {
        assert!(
            first.stderr.contains(needle),
            "missing `{needle}`:\n{}",
            first.snapshot()
        );
    }
    assert_eq!(head(&env), before, "no commit was made");

    // Retrying the same blocked commit is the same violation, recorded once.
    git(&env, &["commit", "-q", "-m", "add the deploy key"], &[]).code(1);
    assert_eq!(head(&env), before);
    let events = check_events(&env);
    assert_eq!(events.len(), 1, "{events:#?}");
    assert_eq!(events[0]["directive"], "no-private-keys");
    let run = env.swarm(&["check", "--format", "json"]);
    let report: Value = serde_json::from_str(&run.stdout).expect("json");
    assert_eq!(events[0]["change"], report["fingerprint"]);

    // GIT_SWARM_SKIP=1 lets it through, and records nothing.
    git(&env, &["commit", "-q", "-m", "add the deploy key"], &[SKIP]).success();
    assert_ne!(head(&env), before);
    assert_eq!(
        env.git(&["show", "--name-only", "--format=", "HEAD"]),
        "deploy/id_ed25519\n"
    );
    assert_eq!(check_events(&env).len(), 1);
}

#[test]
fn a_warn_failure_is_shown_and_does_not_block() {
    let env = repo();
    env.write(
        ".swarm/directives/no-todo-in-notes.toml",
        "id = \"no-todo-in-notes\"\nlesson = \"Turn TODOs in notes into issues\"\napplies_to_agents = [\"coder\"]\nverify = [\"grep:TODO:*.txt\"]\n",
    );
    env.git(&["add", "-A"]);
    git(&env, &["commit", "-q", "-m", "a warn directive"], &[]).success();

    let before = head(&env);
    env.write("notes.txt", "TODO: file an issue\n");
    env.git(&["add", "notes.txt"]);
    let run = git(&env, &["commit", "-q", "-m", "notes"], &[]);
    run.success();
    assert_ne!(head(&env), before, "the commit was made");
    assert!(
        run.stderr.contains("FAIL  no-todo-in-notes [warn, medium]")
            && run.stderr.contains("notes.txt:1: TODO: file an issue"),
        "{}",
        run.snapshot()
    );
    assert!(!run.stderr.contains("blocked by"), "{}", run.snapshot());
}

/// A `.swarm/` file the commit brings is held to `validate`'s rules: one
/// that fails them blocks with its place. Only the staged content counts,
/// and a file broken on HEAD that the commit leaves alone blocks nobody.
#[test]
fn a_staged_broken_directive_blocks_the_commit_and_only_its_staged_content_counts() {
    let env = repo();
    env.write(
        ".swarm/directives/broken.toml",
        "id = \"broken\"\nlesson = \"never closed\n",
    );
    let before = head(&env);
    env.write("a.txt", "a\n");
    env.git(&["add", "a.txt", ".swarm/directives/broken.toml"]);
    let run = git(&env, &["commit", "-q", "-m", "a"], &[]);
    run.code(1);
    assert_eq!(head(&env), before, "no commit was made");
    for needle in [
        ".swarm/directives/broken.toml:2:",
        "error: the commit brings 1 file under .swarm/ that `git swarm validate` rejects: .swarm/directives/broken.toml",
        "`git add` it and commit again",
    ] {
        assert!(
            run.stderr.contains(needle),
            "no `{needle}` in:\n{}",
            run.snapshot()
        );
    }
    assert!(!run.stderr.contains("fix the change"), "{}", run.snapshot());

    // Broken in the working tree but not staged: not what the commit records.
    env.git(&["reset", "-q", "--", ".swarm/directives/broken.toml"]);
    git(&env, &["commit", "-q", "-m", "a"], &[]).success();

    // Committed broken (the hooks skipped): a later commit that leaves it
    // alone is reported to, and not blocked.
    env.git(&["add", ".swarm/directives/broken.toml"]);
    git(&env, &["commit", "-q", "-m", "broken"], &[SKIP]).success();
    env.write("b.txt", "b\n");
    env.git(&["add", "b.txt"]);
    let run = git(&env, &["commit", "-q", "-m", "b"], &[]);
    run.success();
    assert!(
        run.stderr.contains(".swarm/directives/broken.toml:2:")
            && run.stderr.contains("not checked")
            && !run.stderr.contains("the commit brings"),
        "{}",
        run.snapshot()
    );

    // The other directives were still checked.
    let before = head(&env);
    env.write("key.pem", key_file());
    env.git(&["add", "key.pem"]);
    let run = git(&env, &["commit", "-q", "-m", "key"], &[]);
    run.code(1);
    assert!(
        run.stderr.contains("broken.toml") && run.stderr.contains("no-private-keys"),
        "{}",
        run.snapshot()
    );
    assert_eq!(head(&env), before);

    // Fixed, and the fix staged: the commit goes through.
    env.git(&["reset", "-q", "--", "key.pem"]);
    env.write(
        ".swarm/directives/broken.toml",
        common::directive_toml("broken", "Close every string you open in TOML"),
    );
    env.git(&["add", ".swarm/directives/broken.toml"]);
    git(&env, &["commit", "-q", "-m", "fix broken"], &[]).success();
}

/// An `enforce` directive whose own regex does not parse: staged, the
/// commit that brings it is refused for it; committed, it fails closed in
/// its own scope, and the hook says the directive is broken, not the change.
#[test]
fn a_directive_with_a_broken_regex_is_blamed_not_the_change() {
    let env = repo();
    common::directive(
        &env,
        "no-todo",
        "lesson = \"Turn TODO markers into issues before committing\"\nenforcement = \"enforce\"\napplies_to_agents = [\"coder\"]\nverify = [\"grep:TODO(:src/**\"]",
    );
    env.write("src/a.rs", "fn a() {}\n");
    env.git(&["add", "-A"]);
    let run = git(&env, &["commit", "-q", "-m", "no-todo"], &[]);
    run.code(1);
    insta::assert_snapshot!("broken_regex_staged", shown(&run));

    // Committed anyway: a change outside its scope goes through, warned.
    git(&env, &["commit", "-q", "-m", "no-todo"], &[SKIP]).success();
    env.write("notes.txt", "notes\n");
    env.git(&["add", "notes.txt"]);
    let run = git(&env, &["commit", "-q", "-m", "notes"], &[]);
    run.success();
    assert!(
        run.stderr.contains(".swarm/directives/no-todo.toml:5:"),
        "{}",
        run.snapshot()
    );

    // One in its scope is blocked, the directive named as what to fix.
    let before = head(&env);
    env.write("src/a.rs", "fn a() { b() }\n");
    env.git(&["add", "src/a.rs"]);
    let run = git(&env, &["commit", "-q", "-m", "edit a"], &[]);
    run.code(1);
    assert_eq!(head(&env), before);
    insta::assert_snapshot!("broken_regex_committed", shown(&run));
    assert!(!run.stderr.contains("fix the change"), "{}", run.snapshot());
}

/// Every kind of `.swarm/` file is held to `validate` when staged: the
/// config, an event file, an id two folders use; a warning does not block.
#[test]
fn staged_swarm_files_of_every_kind_are_validated_and_warnings_do_not_block() {
    let env = repo();
    let commit = |message: &str| git(&env, &["commit", "-q", "-m", message], &[]);
    let rejects = |run: &Run, path: &str| {
        run.code(1);
        assert!(
            run.stderr
                .contains(&format!("`git swarm validate` rejects: {path}")),
            "{}",
            run.snapshot()
        );
    };

    env.write(".swarm/config.toml", "[events\n");
    env.git(&["add", ".swarm/config.toml"]);
    let run = commit("config");
    rejects(&run, ".swarm/config.toml");
    assert!(
        run.stderr
            .contains(".swarm/config.toml:1:8: error: config: unclosed table"),
        "{}",
        run.snapshot()
    );
    // `check --staged`, the command, refuses it as bad input.
    env.swarm(&["check", "--staged"]).code(2);
    env.git(&["checkout", "HEAD", "--", ".swarm/config.toml"]);

    env.write(".swarm/events/2026-11.jsonl", "{not json\n");
    env.git(&["add", ".swarm/events/2026-11.jsonl"]);
    let run = commit("events");
    rejects(&run, ".swarm/events/2026-11.jsonl");
    assert!(
        run.stderr.contains(".swarm/events/2026-11.jsonl:1:"),
        "{}",
        run.snapshot()
    );
    env.git(&["rm", "-q", "--cached", ".swarm/events/2026-11.jsonl"]);
    std::fs::remove_file(env.path(".swarm/events/2026-11.jsonl")).expect("rm");

    // A directive whose id a quarantined entry has: the clash is reported
    // at the quarantined file, and the commit that brings it is refused.
    env.write(
        ".swarm/quarantine/twice.toml",
        "id = \"twice\"\nlesson = \"A lesson that was quarantined first\"\nquarantine_reason = \"missing_scope\"\n",
    );
    env.git(&["add", ".swarm/quarantine/twice.toml"]);
    commit("quarantined").success();
    env.write(
        ".swarm/directives/twice.toml",
        common::directive_toml("twice", "A lesson learned a second time"),
    );
    env.git(&["add", ".swarm/directives/twice.toml"]);
    let run = commit("twice");
    rejects(&run, ".swarm/quarantine/twice.toml");
    assert!(
        run.stderr.contains("duplicate") || run.stderr.contains("also used by"),
        "{}",
        run.snapshot()
    );
    env.git(&["rm", "-q", "--cached", ".swarm/directives/twice.toml"]);

    // A stray file: `validate` warns, and so does the hook; it does not block.
    env.write(".swarm/notes.txt", "notes\n");
    env.git(&["add", ".swarm/notes.txt"]);
    let run = commit("stray");
    run.success();
    assert!(
        run.stderr.contains(".swarm/notes.txt: warning:"),
        "{}",
        run.snapshot()
    );
}

/// `git commit -a` and `git commit PATH` commit from a temporary index
/// (GIT_INDEX_FILE); the hook checks what is committed, not the real index.
#[test]
fn commit_with_a_temporary_index_is_checked_on_what_it_commits() {
    let env = repo();
    env.write("notes.txt", "notes\n");
    env.write("other.txt", "other\n");
    env.git(&["add", "notes.txt", "other.txt"]);
    git(&env, &["commit", "-q", "-m", "base"], &[]).success();
    let before = head(&env);

    // -a: the key is only in the working tree; the real index is clean.
    env.write("notes.txt", format!("notes\n{KEY_LINE}\n"));
    assert_eq!(env.git(&["diff", "--cached", "--name-only"]), "");
    let run = git(&env, &["commit", "-q", "-a", "-m", "everything"], &[]);
    run.code(1);
    assert!(
        run.stderr.contains(&format!("notes.txt:2: {KEY_LINE}")),
        "{}",
        run.snapshot()
    );
    assert_eq!(head(&env), before);

    // --only PATH: the key is staged in the real index, but only other.txt is committed.
    env.git(&["add", "notes.txt"]);
    env.write("other.txt", "other, edited\n");
    let run = git(
        &env,
        &["commit", "-q", "-m", "other only", "--", "other.txt"],
        &[],
    );
    run.success();
    assert_eq!(
        env.git(&["show", "--name-only", "--format=", "HEAD"]),
        "other.txt\n"
    );
    assert_eq!(
        env.git(&["diff", "--cached", "--name-only"]),
        "notes.txt\n",
        "the key is still staged, not committed"
    );
}

/// A bare remote at `remote.git`, added as `origin`, with main pushed.
fn with_remote(env: &TestEnv) -> PathBuf {
    let remote = env.tmp.path().join("remote.git");
    env.git_in(
        env.tmp.path(),
        &["init", "-q", "--bare", remote.to_str().expect("utf-8")],
    );
    env.git(&["remote", "add", "origin", remote.to_str().expect("utf-8")]);
    git(env, &["push", "-q", "origin", "main"], &[]).success();
    remote
}

fn remote_refs(env: &TestEnv) -> String {
    env.git(&["ls-remote", "--heads", "origin"])
}

fn commit_file(env: &TestEnv, path: &str, contents: &str, vars: &[(&str, &str)]) {
    env.write(path, contents);
    env.git(&["add", path]);
    git(env, &["commit", "-q", "-m", path], vars).success();
}

#[test]
fn pre_push_refuses_pushed_commits_that_add_a_key() {
    let env = repo();
    with_remote(&env);

    // A new branch whose first commit adds a key (committed past the hook) and whose tip is clean.
    env.git(&["checkout", "-q", "-b", "leak"]);
    commit_file(&env, "deploy/key", &key_file(), &[SKIP]);
    commit_file(&env, "clean.txt", "clean\n", &[]);
    let run = git(&env, &["push", "-q", "origin", "leak"], &[]);
    assert_ne!(run.code, 0, "{}", run.snapshot());
    assert!(
        shown(&run).contains("no-private-keys")
            && shown(&run).contains(&format!("deploy/key:2: {KEY_LINE}")),
        "{}",
        run.snapshot()
    );
    assert!(!remote_refs(&env).contains("refs/heads/leak"));

    // A new branch without one is accepted.
    env.git(&["checkout", "-q", "main"]);
    env.git(&["checkout", "-q", "-b", "feature"]);
    commit_file(&env, "feature.txt", "feature\n", &[]);
    git(&env, &["push", "-q", "origin", "feature"], &[]).success();
    assert!(remote_refs(&env).contains("refs/heads/feature"));

    // Deleting a branch pushes no commits and is accepted.
    git(&env, &["push", "-q", "origin", ":feature"], &[]).success();
    assert!(!remote_refs(&env).contains("refs/heads/feature"));

    // An update is checked on its range: a clean commit goes, a key on top does not.
    env.git(&["checkout", "-q", "main"]);
    commit_file(&env, "one.txt", "one\n", &[]);
    git(&env, &["push", "-q", "origin", "main"], &[]).success();
    let pushed = head(&env);
    commit_file(&env, "config/id_rsa", &key_file(), &[SKIP]);
    let run = git(&env, &["push", "-q", "origin", "main"], &[]);
    assert_ne!(run.code, 0, "{}", run.snapshot());
    assert!(
        shown(&run).contains(&format!("config/id_rsa:2: {KEY_LINE}")),
        "{}",
        run.snapshot()
    );
    assert_eq!(
        env.git(&["rev-parse", "origin/main"]).trim(),
        pushed,
        "the remote did not move"
    );
    // And GIT_SWARM_SKIP=1 pushes it anyway.
    git(&env, &["push", "-q", "origin", "main"], &[SKIP]).success();
}

/// A new branch is checked on its commits that are on no remote ref: a key
/// already on the remote (pushed past the hook) does not block every branch
/// that grows from it.
#[test]
fn a_new_branch_is_checked_on_its_own_commits_only() {
    let env = repo();
    with_remote(&env);
    env.git(&["checkout", "-q", "-b", "old-leak"]);
    commit_file(&env, "deploy/key", &key_file(), &[SKIP]);
    git(&env, &["push", "-q", "origin", "old-leak"], &[SKIP]).success();

    env.git(&["checkout", "-q", "-b", "fix-on-top"]);
    commit_file(&env, "fix.txt", "fix\n", &[]);
    let run = git(&env, &["push", "-q", "origin", "fix-on-top"], &[]);
    run.success();
    assert!(remote_refs(&env).contains("refs/heads/fix-on-top"));
}

/// The key's rationale: "a key pushed once stays in the history of every
/// clone, even after the file is deleted". A push whose first commit adds a
/// key and whose second deletes it puts the key in the remote's history.
#[test]

fn pre_push_sees_a_key_added_and_deleted_within_the_push() {
    let env = repo();
    with_remote(&env);
    env.git(&["checkout", "-q", "-b", "add-and-remove"]);
    commit_file(&env, "deploy/key", &key_file(), &[SKIP]);
    env.git(&["rm", "-q", "deploy/key"]);
    git(&env, &["commit", "-q", "-m", "remove the key"], &[]).success();
    let run = git(&env, &["push", "-q", "origin", "add-and-remove"], &[]);
    assert_ne!(
        run.code,
        0,
        "the key reached the remote:\n{}",
        run.snapshot()
    );
}

fn remote_tags(env: &TestEnv) -> String {
    env.git(&["ls-remote", "--tags", "origin"])
}

/// An annotated tag is pushed as a tag object: the hook checks the commits
/// it points at as for a branch — `git push origin TAG`, `--follow-tags`, a
/// tag moved with `-f` (whose remote side is the old tag object) — and a
/// tag of a tree brings no commits.
#[test]
fn pushed_annotated_tags_are_checked_on_the_commits_they_point_at() {
    let env = repo();
    with_remote(&env);

    // On a commit the remote has: nothing new to check, nothing said.
    env.git(&["tag", "-a", "v1.0", "-m", "release 1.0"]);
    let run = git(&env, &["push", "-q", "origin", "v1.0"], &[]);
    run.success();
    assert_eq!(shown(&run), "", "{}", run.snapshot());
    assert!(remote_tags(&env).contains("refs/tags/v1.0"));

    // A clean commit with a tag on it, pushed with --follow-tags.
    commit_file(&env, "one.txt", "one\n", &[]);
    env.git(&["tag", "-a", "v1.1", "-m", "release 1.1"]);
    let run = git(
        &env,
        &["push", "-q", "--follow-tags", "origin", "main"],
        &[],
    );
    run.success();
    assert_eq!(shown(&run), "", "{}", run.snapshot());
    assert!(remote_tags(&env).contains("refs/tags/v1.1"));

    // A tag of a tree has no commits to check.
    env.git(&["tag", "-a", "tree-tag", "-m", "a tree", "HEAD^{tree}"]);
    git(&env, &["push", "-q", "origin", "tree-tag"], &[]).success();

    // Moving a tag (-f) to a commit the remote has: the remote side is the old tag object.
    env.git(&[
        "tag",
        "-f",
        "-a",
        "v1.0",
        "-m",
        "release 1.0, moved",
        "HEAD",
    ]);
    let run = git(&env, &["push", "-q", "-f", "origin", "v1.0"], &[]);
    run.success();
    assert_eq!(shown(&run), "", "{}", run.snapshot());

    // A key committed past the hook, and tagged: the tag alone is refused...
    commit_file(&env, "config/id_rsa", &key_file(), &[SKIP]);
    env.git(&["tag", "-a", "v2.0", "-m", "release 2.0"]);
    let key_at = format!("config/id_rsa:2: {KEY_LINE}");
    let run = git(&env, &["push", "-q", "origin", "v2.0"], &[]);
    assert_ne!(run.code, 0, "{}", run.snapshot());
    assert!(
        shown(&run).contains("FAIL  no-private-keys") && shown(&run).contains(&key_at),
        "{}",
        run.snapshot()
    );
    assert!(!remote_tags(&env).contains("refs/tags/v2.0"));

    // ...and so are the branch and its tag, the commit reported once.
    let run = git(
        &env,
        &["push", "-q", "--follow-tags", "origin", "main"],
        &[],
    );
    assert_ne!(run.code, 0, "{}", run.snapshot());
    assert_eq!(
        shown(&run).matches(&key_at).count(),
        1,
        "{}",
        run.snapshot()
    );
    assert!(!remote_tags(&env).contains("refs/tags/v2.0"));

    // ...and so is an existing tag moved onto it.
    env.git(&[
        "tag",
        "-f",
        "-a",
        "v1.1",
        "-m",
        "release 1.1, moved",
        "HEAD",
    ]);
    let run = git(&env, &["push", "-q", "-f", "origin", "v1.1"], &[]);
    assert_ne!(run.code, 0, "{}", run.snapshot());
    assert!(shown(&run).contains(&key_at), "{}", run.snapshot());
    assert_eq!(
        env.git(&["ls-remote", "origin", "refs/tags/v1.1^{}"])
            .split('\t')
            .next(),
        Some(env.git(&["rev-parse", "HEAD~1"]).trim()),
        "the remote's tag did not move"
    );

    // The remote side of a tag moved on is its old commit, even when no
    // remote branch has it: a key pushed past the hook under a tag is not
    // checked again when the tag moves to a fix on top.
    git(&env, &["push", "-q", "origin", "v2.0"], &[SKIP]).success();
    commit_file(&env, "fix.txt", "fix\n", &[]);
    env.git(&["tag", "-f", "-a", "v2.0", "-m", "2.0, fixed", "HEAD"]);
    let run = git(&env, &["push", "-q", "-f", "origin", "v2.0"], &[]);
    run.success();
    assert_eq!(shown(&run), "", "{}", run.snapshot());
}

/// Only a failed check blocks: a pushed ref the hook cannot walk is a
/// warning naming it, and the other refs are still checked (and block).
#[test]
fn a_pushed_ref_that_cannot_be_checked_is_a_warning_not_a_block() {
    let env = TestEnv::initialised();
    let zero = "0".repeat(40);
    let missing = "1".repeat(40);
    let ghost = format!("refs/heads/ghost {missing} refs/heads/ghost {zero}\n");
    let pre_push = ["hook", "pre-push", "origin", "url"];

    let run = env.swarm_with(&pre_push, &[], Some(ghost.as_bytes()));
    run.success();
    assert!(
        run.stderr.starts_with(
            "warning: git-swarm's pre-push hook did not check the commits pushed to refs/heads/ghost: "
        ),
        "{}",
        run.snapshot()
    );

    env.git(&["checkout", "-q", "-b", "leak"]);
    env.write("deploy/key", key_file());
    env.git(&["add", "deploy/key"]);
    env.git(&["commit", "-q", "-m", "key"]);
    let leak = format!("refs/heads/leak {} refs/heads/leak {zero}\n", head(&env));
    let run = env.swarm_with(&pre_push, &[], Some(format!("{ghost}{leak}").as_bytes()));
    run.code(1);
    assert!(
        run.stderr.contains("refs/heads/ghost")
            && shown(&run).contains(&format!("deploy/key:2: {KEY_LINE}")),
        "{}",
        run.snapshot()
    );
}

/// A `config.toml` that does not parse is reported once per hook run (the
/// defaults are used and nothing blocks), not once by the hook and again by
/// its check.
#[test]
fn a_broken_config_is_reported_once_per_hook_run() {
    let env = repo();
    with_remote(&env);
    env.write(".swarm/config.toml", "[events\n");
    let reported = |run: &Run| {
        shown(run)
            .lines()
            .filter(|l| l.starts_with(".swarm/config.toml:"))
            .count()
    };

    env.write("a.txt", "a\n");
    env.git(&["add", "a.txt"]);
    let run = git(&env, &["commit", "-q", "-m", "a"], &[]);
    run.success();
    assert_eq!(reported(&run), 1, "{}", run.snapshot());
    env.write("b.txt", "b\n");
    env.git(&["add", "b.txt"]);
    git(&env, &["commit", "-q", "-m", "b"], &[]).success();

    // Two pushed commits, each checked: the problem is still said once.
    let run = git(&env, &["push", "-q", "origin", "main"], &[]);
    run.success();
    assert_eq!(reported(&run), 1, "{}", run.snapshot());

    let run = git(&env, &["checkout", "-q", "-b", "other"], &[]);
    run.success();
    assert_eq!(reported(&run), 1, "{}", run.snapshot());
}
