//! `git swarm worktree create|merge|abort|list|prune`: real repositories,
//! real linked worktrees, real cherry-picks; and the hooks and `check`
//! working inside a task's worktree.

use crate::common;

use std::path::{Path, PathBuf};

use common::{Run, TestEnv};
use serde_json::Value;

/// Split so that no line of this file is a key line (this repository checks
/// its own commits with `no-private-keys`).
const KEY_LINE: &str = concat!("-----BEGIN ", "OPENSSH PRIVATE KEY-----");

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}):\n{text}"))
}

/// The task worktree's default place.
fn wt(env: &TestEnv, task: &str) -> PathBuf {
    env.tmp.path().join("repo.worktrees").join(task)
}

fn commit_in(env: &TestEnv, dir: &Path, file: &str, contents: &str, message: &str) {
    let path = dir.join(file);
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, contents).expect("write");
    env.git_in(dir, &["add", "--", file]);
    env.git_in(dir, &["commit", "-q", "-m", message]);
}

fn head(env: &TestEnv, dir: &Path) -> String {
    env.git_in(dir, &["rev-parse", "HEAD"]).trim().to_owned()
}

fn branch_exists(env: &TestEnv, branch: &str) -> bool {
    env.command("git", &env.root)
        .args([
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("refs/heads/{branch}"),
        ])
        .output()
        .expect("git")
        .status
        .success()
}

/// A repository with `.swarm/` and one tracked file, committed.
fn repo() -> TestEnv {
    let env = TestEnv::initialised();
    env.write("f.txt", "base\n");
    env.git(&["add", "f.txt"]);
    env.git(&["commit", "-q", "-m", "add f"]);
    env
}

fn create(env: &TestEnv, task: &str) -> PathBuf {
    let run = env.swarm(&["worktree", "create", task]);
    run.success();
    assert_eq!(run.stdout, format!("$TMP/repo.worktrees/{task}\n"));
    wt(env, task)
}

#[test]
fn create_merge_and_abort_with_a_clean_pick() {
    let env = repo();
    let base = head(&env, &env.root);
    let dir = create(&env, "auth-login");
    assert!(dir.join("f.txt").is_file());
    assert_eq!(head(&env, &dir), base);
    assert_eq!(
        env.git_in(&dir, &["symbolic-ref", "--short", "HEAD"])
            .trim(),
        "swarm/auth-login"
    );
    // Nothing recorded under .swarm/, the record is in the common dir.
    assert!(env.exists(".git/swarm/worktrees/auth-login.json"));
    assert_eq!(env.git(&["status", "--porcelain"]), "");

    commit_in(&env, &dir, "src/login.rs", "fn login() {}\n", "add login");
    commit_in(&env, &dir, "f.txt", "base\nlogin\n", "mention login");
    // The user's branch moved on meanwhile, elsewhere.
    commit_in(&env, &env.root, "other.txt", "other\n", "other work");

    let merge = env.swarm(&["worktree", "merge", "auth-login"]);
    merge.success();
    assert!(
        merge
            .stdout
            .starts_with("Picked 2 commits onto main, oldest first:\n"),
        "{}",
        merge.stdout
    );
    let log = env.git(&["log", "--format=%s", "-4"]);
    assert_eq!(log, "mention login\nadd login\nother work\nadd f\n");
    assert_eq!(env.read("f.txt"), "base\nlogin\n");
    assert_eq!(env.read("src/login.rs"), "fn login() {}\n");
    assert_eq!(env.git(&["status", "--porcelain"]), "");

    let abort = env.swarm(&["worktree", "abort", "auth-login"]);
    abort.success();
    assert!(
        abort
            .stdout
            .contains("Removed the worktree $TMP/repo.worktrees/auth-login."),
        "{}",
        abort.stdout
    );
    assert!(
        abort.stdout.contains("Deleted the branch swarm/auth-login"),
        "{}",
        abort.stdout
    );
    assert!(!dir.exists());
    assert!(!branch_exists(&env, "swarm/auth-login"));
    assert!(!env.exists(".git/swarm/worktrees/auth-login.json"));
    // The picked commits stay on main.
    assert_eq!(env.read("src/login.rs"), "fn login() {}\n");
}

#[test]
fn a_conflict_rolls_every_pick_back_and_names_the_files() {
    let env = repo();
    let dir = create(&env, "t1");
    commit_in(&env, &dir, "g.txt", "new\n", "add g");
    commit_in(&env, &dir, "f.txt", "task\n", "task changes f");
    commit_in(&env, &env.root, "f.txt", "main\n", "main changes f");
    // Untracked and ignored-by-nobody files the picks do not touch stay.
    env.write("notes.txt", "mine\n");

    let before_head = head(&env, &env.root);
    let before_ref = std::fs::read(env.path(".git/refs/heads/main")).expect("ref");
    let before_index = std::fs::read(env.path(".git/index")).expect("index");
    let before_status = env.git(&["status", "--porcelain", "--untracked-files=all"]);

    let merge = env.swarm(&["worktree", "merge", "t1"]);
    merge.code(1);
    assert!(
        merge.stderr.contains("conflicts in f.txt"),
        "{}",
        merge.stderr
    );
    assert!(
        merge
            .stderr
            .contains("the 1 earlier pick was not applied either"),
        "{}",
        merge.stderr
    );
    assert!(merge.stderr.contains("hint:"), "{}", merge.stderr);
    assert_eq!(merge.stdout, "f.txt\n");

    assert_eq!(head(&env, &env.root), before_head);
    assert_eq!(
        std::fs::read(env.path(".git/refs/heads/main")).expect("ref"),
        before_ref
    );
    assert_eq!(
        std::fs::read(env.path(".git/index")).expect("index"),
        before_index,
        "the index is byte-identical"
    );
    assert_eq!(
        env.git(&["status", "--porcelain", "--untracked-files=all"]),
        before_status
    );
    assert_eq!(env.read("f.txt"), "main\n");
    assert_eq!(env.read("notes.txt"), "mine\n");
    assert!(!env.exists("g.txt"), "the first pick was rolled back");
    assert!(!env.exists(".git/CHERRY_PICK_HEAD"));
    assert!(!env.exists(".git/sequencer"));
    // The task's own branch and worktree are untouched.
    assert_eq!(
        std::fs::read_to_string(dir.join("f.txt")).expect("read"),
        "task\n"
    );
}

#[test]
fn a_dirty_main_worktree_is_refused_with_a_hint() {
    let env = repo();
    let dir = create(&env, "t1");
    commit_in(&env, &dir, "g.txt", "from the task\n", "add g");
    let before = head(&env, &env.root);

    env.write("f.txt", "edited, not committed\n");
    let run = env.swarm(&["worktree", "merge", "t1"]);
    run.code(2);
    assert!(
        run.stderr.contains("uncommitted changes: f.txt"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("hint:"), "{}", run.stderr);
    assert_eq!(head(&env, &env.root), before);
    assert_eq!(env.read("f.txt"), "edited, not committed\n");
    env.git(&["checkout", "--", "f.txt"]);

    // An untracked file the pick would overwrite.
    env.write("g.txt", "my own g\n");
    let run = env.swarm(&["worktree", "merge", "t1"]);
    run.code(2);
    assert!(
        run.stderr
            .contains("untracked files would be overwritten by the task's commits: g.txt"),
        "{}",
        run.stderr
    );
    assert_eq!(env.read("g.txt"), "my own g\n");
    assert_eq!(head(&env, &env.root), before);

    std::fs::remove_file(env.path("g.txt")).expect("rm");
    env.swarm(&["worktree", "merge", "t1"]).success();
    assert_eq!(env.read("g.txt"), "from the task\n");
}

/// A bad commit in the task worktree is refused by the pre-commit hook
/// installed from the main worktree; `check` works there too.
fn hooks_block_in_the_task_worktree(env: &TestEnv) {
    env.swarm(&["hooks", "install"]).success();
    let dir = create(env, "t1");
    let key = format!("{KEY_LINE}\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n");
    std::fs::write(dir.join("id_deploy"), key).expect("write");
    env.git_in(&dir, &["add", "id_deploy"]);

    let check = env.swarm_in(&dir, &["check", "--staged"]);
    check.code(1);
    assert!(
        check.stdout.contains("no-private-keys"),
        "{}",
        check.snapshot()
    );

    let before = head(env, &dir);
    let commit = env
        .command("git", &dir)
        .args(["commit", "-q", "-m", "add a key"])
        .output()
        .expect("git commit");
    assert!(!commit.status.success(), "the hook blocked the commit");
    let said = String::from_utf8_lossy(&commit.stderr);
    assert!(said.contains("no-private-keys"), "{said}");
    assert_eq!(head(env, &dir), before);
    // The index the hook checked is the worktree's own.
    assert!(
        env.git(&["status", "--porcelain"]).is_empty(),
        "the main worktree's index is untouched"
    );
}

#[test]
fn the_main_repositorys_hooks_block_a_bad_commit_in_the_task_worktree() {
    let env = repo();
    hooks_block_in_the_task_worktree(&env);
}

#[test]
fn with_core_hooks_path_the_hooks_still_block_in_the_task_worktree() {
    let env = repo();
    let shared = env.tmp.path().join("shared-hooks");
    env.git(&["config", "core.hooksPath", shared.to_str().expect("utf-8")]);
    hooks_block_in_the_task_worktree(&env);
    assert!(shared.join("pre-commit").is_file());
    assert!(!env.exists(".git/hooks/pre-commit"));
}

#[test]
fn events_git_swarm_appended_since_do_not_stop_a_merge() {
    let env = repo();
    let dir = create(&env, "t1");
    commit_in(&env, &dir, "g.txt", "from the task\n", "add g");
    // A check run before the merge records an event: it waits in the
    // pending log, in the git dir, which no merge touches.
    env.swarm(&["record", "shown", "--role", "coder"]).success();
    env.swarm(&["commit", "-m", "events"]).success();
    env.swarm(&["record", "shown", "--role", "coder"]).success();
    assert_eq!(
        env.git(&["status", "--porcelain", "--untracked-files=no"]),
        ""
    );
    let pending_before = env.read(common::PENDING_NOV);
    assert_eq!(pending_before.lines().count(), 1);
    // A line appended to the tracked log in the work tree (as git-swarm
    // recorded before events waited in the git dir): an uncommitted change
    // of the coordinator's own, which no pick touches.
    let tracked = ".swarm/events/2026-11.jsonl";
    let mut text = env.read(tracked);
    text.push_str(
        r#"{"id":"01KAAAAAAAAAAAAAAAAAAAAAZZ","ts":"2026-11-22T10:00:00.000Z","kind":"note"}"#,
    );
    text.push('\n');
    env.write(tracked, &text);
    let log = env.git(&["status", "--porcelain", "--untracked-files=no"]);
    assert!(log.contains(".swarm/events/"), "{log}");
    let events_before = env.git(&["diff", "--", ".swarm/events"]);

    let run = env.swarm(&["worktree", "merge", "t1"]);
    run.success();
    assert_eq!(env.read("g.txt"), "from the task\n");
    // The recorded events are still there: pending, and uncommitted.
    assert_eq!(env.read(common::PENDING_NOV), pending_before);
    assert_eq!(env.git(&["diff", "--", ".swarm/events"]), events_before);

    // Any other uncommitted change still refuses.
    commit_in(&env, &dir, "h.txt", "more\n", "add h");
    env.write("f.txt", "edited, not committed\n");
    let run = env.swarm(&["worktree", "merge", "t1"]);
    run.code(2);
    assert!(
        run.stderr.contains("uncommitted changes: f.txt"),
        "{}",
        run.stderr
    );
}

#[test]
fn abort_touches_nothing_else() {
    let env = repo();
    env.git(&["branch", "other"]);
    env.git(&["worktree", "add", "-q", "../other-wt", "other"]);
    let t1 = create(&env, "t1");
    let t2 = create(&env, "t2");
    commit_in(&env, &t2, "t2.txt", "t2\n", "t2 work");
    commit_in(&env, &t1, "t1.txt", "t1\n", "t1 work");
    let refs = |env: &TestEnv| {
        env.git(&["for-each-ref", "--format=%(refname) %(objectname)"])
            .lines()
            .filter(|l| !l.starts_with("refs/heads/swarm/t1 "))
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    let before = refs(&env);

    // Uncommitted changes refuse the abort.
    std::fs::write(t1.join("scratch.txt"), "wip\n").expect("write");
    let refused = env.swarm(&["worktree", "abort", "t1"]);
    refused.code(2);
    assert!(
        refused.stderr.contains("uncommitted changes: scratch.txt"),
        "{}",
        refused.stderr
    );
    assert!(refused.stderr.contains("--force"), "{}", refused.stderr);
    assert!(t1.join("scratch.txt").is_file());
    assert!(branch_exists(&env, "swarm/t1"));

    let forced = env.swarm(&["worktree", "abort", "t1", "--force"]);
    forced.success();
    assert!(!t1.exists());
    assert!(!branch_exists(&env, "swarm/t1"));
    assert_eq!(refs(&env), before, "no other ref moved");
    assert!(t2.join("t2.txt").is_file());
    assert!(env.tmp.path().join("other-wt/f.txt").is_file());
    let listed = env.git(&["worktree", "list", "--porcelain"]);
    assert!(listed.contains("other-wt"), "{listed}");
    assert!(listed.contains("repo.worktrees/t2"), "{listed}");
    assert!(!listed.contains("repo.worktrees/t1"), "{listed}");

    // A task unknown to `worktree create` is refused, and so is a branch
    // of that name that git-swarm did not create.
    env.swarm(&["worktree", "abort", "other"]).code(2);
    env.git(&["branch", "swarm/t3"]);
    let run = env.swarm(&["worktree", "create", "t3"]);
    run.code(2);
    assert!(
        run.stderr.contains("the branch `swarm/t3` exists already"),
        "{}",
        run.stderr
    );
    assert!(!wt(&env, "t3").exists());
    assert!(!env.exists(".git/swarm/worktrees/t3.json"));
}

#[test]
fn the_place_follows_swarm_worktree_dir_and_stays_outside_the_work_tree() {
    let env = repo();
    env.git(&["config", "swarm.worktreeDir", "tasks/{repo}-{task}"]);
    let run = env.swarm(&["worktree", "create", "t1"]);
    run.success();
    assert_eq!(run.stdout, "$TMP/tasks/repo-t1\n");
    assert!(env.tmp.path().join("tasks/repo-t1/f.txt").is_file());

    env.git(&["config", "swarm.worktreeDir", "repo/inside/{task}"]);
    let run = env.swarm(&["worktree", "create", "t2"]);
    run.code(2);
    assert!(
        run.stderr.contains("inside the repository's working tree"),
        "{}",
        run.stderr
    );
    assert!(!env.exists("inside"));
    assert!(!branch_exists(&env, "swarm/t2"));

    // An existing folder is never reused.
    env.git(&["config", "--unset", "swarm.worktreeDir"]);
    std::fs::create_dir_all(wt(&env, "t2")).expect("mkdir");
    let run = env.swarm(&["worktree", "create", "t2"]);
    run.code(2);
    assert!(run.stderr.contains("exists already"), "{}", run.stderr);
    assert!(!branch_exists(&env, "swarm/t2"));
    env.swarm(&["worktree", "create", "Bad/Task"]).code(2);
}

#[test]
fn the_base_comes_from_the_handoff_or_from_base() {
    let env = repo();
    let first = head(&env, &env.root);
    commit_in(&env, &env.root, "later.txt", "later\n", "later");
    env.write(
        ".swarm/handoffs/h1.toml",
        format!(
            "task = \"h1\"\ncreated_at = 2026-11-25T12:00:00Z\n[contract]\nowns = [\"src/**\"]\nbase = \"{first}\"\n"
        ),
    );
    let dir = create(&env, "h1");
    assert_eq!(head(&env, &dir), first);
    assert!(!dir.join("later.txt").exists());

    let run = env.swarm(&["worktree", "create", "h2", "--base", "HEAD~1"]);
    run.success();
    assert_eq!(head(&env, &wt(&env, "h2")), first);

    env.write(
        ".swarm/handoffs/h3.toml",
        format!(
            "task = \"h3\"\ncreated_at = 2026-11-25T12:00:00Z\n[contract]\nowns = [\"lib/**\"]\nbase = \"{first}\"\n"
        ),
    );
    let run = env.swarm(&["worktree", "create", "h3", "--base", "HEAD"]);
    run.code(2);
    assert!(
        run.stderr.contains("is not the base of the handoff"),
        "{}",
        run.stderr
    );

    env.write(".swarm/handoffs/h4.toml", "task = \"h4\"\n[contract\n");
    let run = env.swarm(&["worktree", "create", "h4"]);
    run.code(2);
    assert!(
        run.stderr.contains(".swarm/handoffs/h4.toml:"),
        "{}",
        run.stderr
    );
}

fn list(env: &TestEnv) -> Vec<Value> {
    let run: Run = env.swarm(&["worktree", "list", "--format", "json"]);
    run.success();
    json(&run.stdout).as_array().expect("array").clone()
}

#[test]
fn list_and_prune() {
    let env = repo();
    let empty = env.swarm(&["worktree", "list"]);
    empty.success();
    assert_eq!(empty.stdout, "No task worktrees.\n");

    let t1 = create(&env, "t1");
    let t2 = create(&env, "t2");
    commit_in(&env, &t1, "a.txt", "a\n", "a");
    std::fs::write(t2.join("f.txt"), "dirty\n").expect("write");

    let rows = list(&env);
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["task"], "t1");
    assert_eq!(rows[0]["branch"], "swarm/t1");
    assert_eq!(rows[0]["ahead"], 1);
    assert_eq!(rows[0]["dirty"], false);
    assert_eq!(rows[0]["present"], true);
    assert_eq!(rows[0]["base"], head(&env, &env.root));
    assert_eq!(rows[1]["task"], "t2");
    assert_eq!(rows[1]["ahead"], 0);
    assert_eq!(rows[1]["dirty"], true);
    let text = env.swarm(&["worktree", "list"]);
    text.success();
    assert!(
        text.stdout
            .contains("t1  $TMP/repo.worktrees/t1  swarm/t1  base "),
        "{}",
        text.stdout
    );
    assert!(text.stdout.contains("1 ahead  clean"), "{}", text.stdout);

    std::fs::remove_dir_all(&t2).expect("rm");
    let rows = list(&env);
    assert_eq!(rows[1]["present"], false);
    assert_eq!(rows[1]["dirty"], Value::Null);

    let prune = env.swarm(&["worktree", "prune"]);
    prune.success();
    assert_eq!(
        prune.stdout,
        "Forgot t2 ($TMP/repo.worktrees/t2 is gone; the branch swarm/t2 is kept).\n"
    );
    let rows = list(&env);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["task"], "t1");
    assert!(branch_exists(&env, "swarm/t2"));
    assert!(!env.git(&["worktree", "list"]).contains("repo.worktrees/t2"));
    assert_eq!(
        env.swarm(&["worktree", "prune"]).stdout,
        "Nothing to prune.\n"
    );
}

#[test]
fn a_relative_core_hooks_path_works_when_committed_and_is_warned_about_when_not() {
    let env = repo();
    env.git(&["config", "core.hooksPath", ".githooks"]);
    env.swarm(&["hooks", "install"]).success();
    assert!(env.exists(".githooks/pre-commit"));

    // Not committed: the new worktree has no .githooks, and is told so.
    let run = env.swarm(&["worktree", "create", "bare-hooks"]);
    run.success();
    assert!(
        run.stderr.contains(
            "but git runs the new worktree's hooks from $TMP/repo.worktrees/bare-hooks/.githooks"
        ),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("hint: core.hooksPath is relative"),
        "{}",
        run.stderr
    );

    // Committed: the worktree carries them, and they block there.
    env.git(&["add", ".githooks"]);
    env.git(&["commit", "-q", "-m", "share the hooks"]);
    hooks_block_in_the_task_worktree(&env);
}

#[test]
fn inject_works_inside_the_task_worktree_with_its_own_index() {
    let env = repo();
    let dir = create(&env, "t1");
    let run = env.swarm_in(
        &dir,
        &["inject", "--role", "coder", "--task", "add a deploy key"],
    );
    run.success();
    assert!(
        run.stdout.contains("<delegate_knowledge_directives"),
        "{}",
        run.stdout
    );
    // The delegation is recorded in the clone's pending log (shared by its
    // worktrees: removing the task's loses no event), not in the task's
    // tree; its index lives in the worktree's git dir.
    let log = env.swarm_in(&dir, &["log", "--kind", "shown", "--format", "json"]);
    log.success();
    assert_eq!(json(&log.stdout).as_array().expect("array").len(), 1);
    assert!(env.exists(".git/worktrees/t1/swarm/index"));
    assert!(!env.exists(".git/worktrees/t1/swarm/pending"));
    assert!(!dir.join(".swarm/events/2026-11.jsonl").exists());
    assert_eq!(env.read(common::PENDING_NOV).lines().count(), 1);
    assert!(
        !env.exists(".git/swarm/index"),
        "the task's worktree wrote the main worktree's index"
    );
    let main_log = env.swarm(&["log", "--kind", "shown", "--format", "json"]);
    assert_eq!(json(&main_log.stdout).as_array().expect("array").len(), 1);
}

#[test]
fn an_outer_hooks_git_variables_do_not_redirect_the_merge() {
    let env = repo();
    let dir = create(&env, "t1");
    commit_in(&env, &dir, "g.txt", "g\n", "add g");
    // As a hook would see them: another index, git's prefix.
    let run = env.swarm_with(
        &["worktree", "merge", "t1"],
        &[
            ("GIT_INDEX_FILE", "elsewhere.index"),
            ("GIT_PREFIX", "src/"),
        ],
        None,
    );
    run.success();
    assert!(!env.exists("elsewhere.index"));
    assert_eq!(env.git(&["status", "--porcelain"]), "");
    assert_eq!(env.read("g.txt"), "g\n");
}

#[test]
fn abort_after_the_folder_was_deleted_by_hand() {
    let env = repo();
    let dir = create(&env, "t1");
    std::fs::remove_dir_all(&dir).expect("rm");
    let run = env.swarm(&["worktree", "abort", "t1"]);
    run.success();
    assert!(
        run.stdout.starts_with(
            "The worktree $TMP/repo.worktrees/t1 was already gone.\nDeleted the branch swarm/t1"
        ),
        "{}",
        run.stdout
    );
    assert!(!branch_exists(&env, "swarm/t1"));
    assert!(!env.git(&["worktree", "list"]).contains("repo.worktrees/t1"));
    // Nothing left: the task can start over.
    create(&env, "t1");
}

#[test]
fn a_damaged_record_is_reported_with_its_path_and_pruned() {
    let env = repo();
    create(&env, "t1");
    env.write(
        ".git/swarm/worktrees/t2.json",
        "{\"task\": \"t2\", \"path\": \"/x\", \"branch\": \"swarm/t2\", \"base\": \"--all\"}\n",
    );
    env.write(".git/swarm/worktrees/t3.json", "{ not json\n");
    let run = env.swarm(&["worktree", "list", "--format", "json"]);
    run.success();
    assert_eq!(json(&run.stdout).as_array().expect("array").len(), 1);
    assert!(run.stderr.contains("t2.json"), "{}", run.stderr);
    assert!(
        run.stderr.contains("not a full commit id"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("t3.json:1:3"), "{}", run.stderr);
    let merge = env.swarm(&["worktree", "merge", "t2"]);
    merge.code(2);
    assert!(
        merge.stderr.contains("not a full commit id"),
        "{}",
        merge.stderr
    );

    env.swarm(&["worktree", "prune"]).success();
    assert!(!env.exists(".git/swarm/worktrees/t2.json"));
    assert!(!env.exists(".git/swarm/worktrees/t3.json"));
    assert!(env.exists(".git/swarm/worktrees/t1.json"));
}

#[test]
fn merging_twice_adds_nothing_the_second_time() {
    let env = repo();
    let dir = create(&env, "t1");
    commit_in(&env, &dir, "a.txt", "a\n", "add a");
    env.swarm(&["worktree", "merge", "t1"]).success();
    let after_first = head(&env, &env.root);

    let again = env.swarm(&["worktree", "merge", "t1"]);
    again.success();
    assert_eq!(
        again.stdout,
        "Nothing to merge: the 1 commit of swarm/t1 since its base is already on this branch.\n"
    );
    assert_eq!(head(&env, &env.root), after_first);

    // A later commit alone is picked; the merged one is left out.
    commit_in(&env, &dir, "b.txt", "b\n", "add b");
    let third = env.swarm(&["worktree", "merge", "t1"]);
    third.success();
    assert!(
        third.stdout.starts_with("Picked 1 commit onto main"),
        "{}",
        third.stdout
    );
    assert!(
        third
            .stderr
            .contains("Left out 1 commit whose change main already has."),
        "{}",
        third.stderr
    );
    assert_eq!(
        env.git(&["log", "--format=%s", "-3"]),
        "add b\nadd a\nadd f\n"
    );
}

#[test]
fn a_branch_without_new_commits_has_nothing_to_merge() {
    let env = repo();
    create(&env, "t1");
    let run = env.swarm(&["worktree", "merge", "t1"]);
    run.success();
    assert_eq!(
        run.stdout,
        "Nothing to merge: swarm/t1 has no commit since its base.\n"
    );
}

#[test]
fn a_file_where_the_task_needs_a_folder_is_refused_before_any_pick() {
    let env = repo();
    let dir = create(&env, "t1");
    std::fs::create_dir_all(dir.join("ign2")).expect("mkdir");
    std::fs::write(dir.join("ign2/x.txt"), "task\n").expect("write");
    env.git_in(&dir, &["add", "-f", "--", "ign2/x.txt"]);
    env.git_in(&dir, &["commit", "-q", "-m", "add ign2/x.txt"]);
    commit_in(&env, &dir, "f.txt", "task\n", "task changes f");
    commit_in(&env, &env.root, "f.txt", "main\n", "main changes f");
    let before = head(&env, &env.root);

    // An ignored file of the user's where the task needs the folder `ign2`.
    std::fs::write(env.path(".git/info/exclude"), "ign2\n").expect("exclude");
    env.write("ign2", "mine, ignored\n");
    let run = env.swarm(&["worktree", "merge", "t1"]);
    run.code(2);
    assert!(
        run.stderr
            .contains("untracked files would be overwritten by the task's commits: ign2"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("hint: move them away"),
        "{}",
        run.stderr
    );
    assert_eq!(env.read("ign2"), "mine, ignored\n");
    assert_eq!(head(&env, &env.root), before);

    // Not ignored: refused the same way, in readable words.
    std::fs::write(env.path(".git/info/exclude"), "").expect("exclude");
    let run = env.swarm(&["worktree", "merge", "t1"]);
    run.code(2);
    assert!(
        run.stderr
            .contains("untracked files would be overwritten by the task's commits: ign2"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("\\n"), "{}", run.stderr);
    assert_eq!(env.read("ign2"), "mine, ignored\n");
    assert_eq!(head(&env, &env.root), before);
}

/// A smudge filter that fails, required for a tracked file: git cannot
/// check that file out, which a roll-back by `reset --hard` needed.
fn failing_filter(env: &TestEnv) {
    std::fs::write(env.path(".git/info/attributes"), "x.bin filter=boom\n").expect("attributes");
    env.git(&["config", "filter.boom.smudge", "false"]);
    env.git(&["config", "filter.boom.clean", "cat"]);
    env.git(&["config", "filter.boom.required", "true"]);
}

#[test]
fn a_conflict_at_a_later_pick_touches_nothing_even_where_git_cannot_check_out() {
    let env = repo();
    env.write("x.bin", "binary\n");
    env.git(&["add", "x.bin"]);
    env.git(&["commit", "-q", "-m", "add x.bin"]);
    let dir = create(&env, "t1");
    commit_in(&env, &dir, "x.bin", "task binary\n", "task changes x.bin");
    commit_in(&env, &dir, "f.txt", "task\n", "task changes f");
    commit_in(&env, &env.root, "f.txt", "main\n", "main changes f");
    failing_filter(&env);

    let before_ref = std::fs::read(env.path(".git/refs/heads/main")).expect("ref");
    let before_index = std::fs::read(env.path(".git/index")).expect("index");
    let merge = env.swarm(&["worktree", "merge", "t1"]);
    merge.code(1);
    assert!(
        merge.stderr.contains("conflicts in f.txt"),
        "{}",
        merge.stderr
    );
    assert_eq!(
        std::fs::read(env.path(".git/refs/heads/main")).expect("ref"),
        before_ref
    );
    assert_eq!(
        std::fs::read(env.path(".git/index")).expect("index"),
        before_index
    );
    assert_eq!(env.read("x.bin"), "binary\n");
    assert_eq!(env.read("f.txt"), "main\n");
    assert!(!env.exists(".git/AUTO_MERGE"));
    assert!(!env.exists(".git/CHERRY_PICK_HEAD"));
}

#[test]
fn files_git_cannot_write_put_the_branch_and_the_index_back() {
    let env = repo();
    env.write("x.bin", "binary\n");
    env.git(&["add", "x.bin"]);
    env.git(&["commit", "-q", "-m", "add x.bin"]);
    let dir = create(&env, "t1");
    commit_in(&env, &dir, "x.bin", "task binary\n", "task changes x.bin");
    failing_filter(&env);

    let before = head(&env, &env.root);
    let before_index = std::fs::read(env.path(".git/index")).expect("index");
    let merge = env.swarm(&["worktree", "merge", "t1"]);
    merge.code(2);
    assert!(
        merge.stderr.contains("git could not update the files"),
        "{}",
        merge.stderr
    );
    assert!(
        merge.stderr.contains(&format!("back at {}", &before[..12])),
        "{}",
        merge.stderr
    );
    assert!(
        merge
            .stderr
            .contains("x.bin: smudge filter boom failed; these files could not be put back: x.bin"),
        "{}",
        merge.stderr
    );
    assert_eq!(head(&env, &env.root), before);
    assert_eq!(
        std::fs::read(env.path(".git/index")).expect("index"),
        before_index
    );
}

#[test]
fn abort_leaves_a_worktree_and_a_branch_the_user_made_at_the_same_names() {
    let env = repo();
    let dir = create(&env, "t1");
    // The task's worktree and branch removed by hand, then the user's own
    // branch `swarm/t1` and a worktree of theirs at the same path.
    env.git(&[
        "worktree",
        "remove",
        "--force",
        dir.to_str().expect("utf-8"),
    ]);
    env.git(&["branch", "-D", "swarm/t1"]);
    env.git(&["branch", "swarm/t1"]);
    env.git(&["branch", "mine"]);
    env.git(&[
        "worktree",
        "add",
        "-q",
        dir.to_str().expect("utf-8"),
        "mine",
    ]);

    let run = env.swarm(&["worktree", "abort", "t1"]);
    run.code(2);
    assert_eq!(
        run.stderr,
        "error: the worktree at $TMP/repo.worktrees/t1 (on `mine`) is not the one `git swarm worktree create t1` made: nothing was removed\n\
         hint: it is left as it is; move it away (`git worktree move $TMP/repo.worktrees/t1 NEW-PATH`) and run `git swarm worktree abort t1` again to drop the task's branch and record\n",
        "{}",
        run.snapshot()
    );
    assert!(dir.join("f.txt").is_file());
    assert!(branch_exists(&env, "swarm/t1"));
    assert!(branch_exists(&env, "mine"));
    assert!(env.git(&["worktree", "list"]).contains("repo.worktrees/t1"));
}

/// Issue 37: the task's worktree removed by hand and another added at its
/// path on the task's own branch, with files of the user's: `abort`, even
/// forced, removes none of it (it was not `create`'s).
#[test]
fn abort_refuses_a_worktree_on_the_task_branch_that_create_did_not_make() {
    let env = repo();
    let dir = create(&env, "t1");
    let path = dir.to_str().expect("utf-8");
    env.git(&["worktree", "remove", "--force", path]);
    env.git(&["worktree", "add", "-q", path, "swarm/t1"]);
    std::fs::write(dir.join("notes.txt"), "mine\n").expect("write");

    let run = env.swarm(&["worktree", "abort", "t1", "--force"]);
    run.code(2);
    assert!(
        run.stderr.starts_with(
            "error: the worktree at $TMP/repo.worktrees/t1 (on `swarm/t1`) is not the one `git swarm worktree create t1` made: nothing was removed\nhint: "
        ),
        "{}",
        run.snapshot()
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("notes.txt")).expect("kept"),
        "mine\n"
    );
    assert!(branch_exists(&env, "swarm/t1"));
    assert!(env.git(&["worktree", "list"]).contains("repo.worktrees/t1"));

    // Moved away, the task's branch and record go, and the worktree stays.
    let moved = env.tmp.path().join("moved");
    env.git(&["worktree", "move", path, moved.to_str().expect("utf-8")]);
    env.git_in(&moved, &["checkout", "-q", "--detach"]);
    let run = env.swarm(&["worktree", "abort", "t1", "--force"]);
    run.success();
    assert!(moved.join("notes.txt").is_file());
    assert!(!branch_exists(&env, "swarm/t1"));
}

#[test]
fn abort_keeps_unmerged_commits_unless_forced() {
    let env = repo();
    let dir = create(&env, "t1");
    commit_in(&env, &dir, "g.txt", "work\n", "the only copy");
    let tip = head(&env, &dir);

    let run = env.swarm(&["worktree", "abort", "t1"]);
    run.code(2);
    assert!(
        run.stderr.contains(&format!(
            "`swarm/t1` has 1 commit no other branch has (the newest {})",
            &tip[..12]
        )),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("--force"), "{}", run.stderr);
    assert!(dir.join("g.txt").is_file());
    assert!(branch_exists(&env, "swarm/t1"));

    let run = env.swarm(&["worktree", "abort", "t1", "--force"]);
    run.success();
    assert!(
        run.stdout
            .contains(&format!("`git branch swarm/t1 {tip}` restores it")),
        "{}",
        run.stdout
    );
    assert!(!branch_exists(&env, "swarm/t1"));
}

#[test]
fn a_worktree_dir_with_dot_dot_after_a_missing_folder_is_still_refused_inside() {
    let env = repo();
    env.git(&[
        "config",
        "swarm.worktreeDir",
        "nonexist/../repo/inside/{task}",
    ]);
    let run = env.swarm(&["worktree", "create", "p1"]);
    run.code(2);
    assert!(
        run.stderr.contains("inside the repository's working tree"),
        "{}",
        run.stderr
    );
    assert!(!env.exists("inside"));
    assert!(!branch_exists(&env, "swarm/p1"));

    // A `..` after a symlink goes where the symlink points: here, inside.
    std::fs::create_dir_all(env.path("sub")).expect("mkdir");
    std::os::unix::fs::symlink(env.path("sub"), env.tmp.path().join("link")).expect("symlink");
    env.git(&["config", "swarm.worktreeDir", "link/../inside/{task}"]);
    let run = env.swarm(&["worktree", "create", "p1"]);
    run.code(2);
    assert!(
        run.stderr.contains("inside the repository's working tree"),
        "{}",
        run.stderr
    );
    assert!(!env.exists("inside"));
    assert!(!env.tmp.path().join("inside").exists());
    assert!(!branch_exists(&env, "swarm/p1"));
}

#[test]
fn abort_of_a_deleted_folder_keeps_gits_record_of_other_missing_worktrees() {
    let env = repo();
    let dir = create(&env, "t1");
    env.git(&["worktree", "add", "-q", "-b", "other", "../other-wt"]);
    std::fs::remove_dir_all(&dir).expect("rm");
    std::fs::remove_dir_all(env.tmp.path().join("other-wt")).expect("rm");

    env.swarm(&["worktree", "abort", "t1"]).success();
    let listed = env.git(&["worktree", "list", "--porcelain"]);
    assert!(!listed.contains("repo.worktrees/t1"), "{listed}");
    assert!(listed.contains("other-wt"), "{listed}");
}

#[test]
fn a_pick_keeps_the_task_commits_author_date_and_message() {
    let env = repo();
    let dir = create(&env, "t1");
    std::fs::write(dir.join("g.txt"), "g\n").expect("write");
    env.git_in(&dir, &["add", "g.txt"]);
    env.command("git", &dir)
        .args([
            "commit",
            "-q",
            "--author=Task Author <task@example.com>",
            "--date=2001-02-03T04:05:06+07:00",
            "-m",
            "add g\n\nwith a body line\n  indented",
        ])
        .output()
        .expect("git");
    let task = head(&env, &dir);
    env.swarm(&["worktree", "merge", "t1"]).success();
    let show = |rev: &str| env.git(&["log", "-1", "--format=%an|%ae|%ad|%B", "--date=raw", rev]);
    assert_eq!(show("HEAD"), show(&task));
    assert!(show("HEAD").starts_with(
        "Task Author|task@example.com|981147906 +0700|add g\n\nwith a body line\n  indented"
    ));
    assert_eq!(
        env.git(&["rev-parse", "HEAD^{tree}"]),
        env.git(&["rev-parse", &format!("{task}^{{tree}}")])
    );
    assert_eq!(env.read("g.txt"), "g\n");
    assert_eq!(env.git(&["status", "--porcelain"]), "");
}
