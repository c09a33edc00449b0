//! `git swarm handoff check|complete|review`: what git says a task's
//! change touched held against its contract, criteria run through the
//! sandboxed runner, reviews counted as events, and the violations a
//! path-scoped directive sees escalating it.

use crate::common;

use common::{Run, TestEnv, of_kind, swarm};
use serde_json::Value;

fn json(run: &Run) -> Value {
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}:\n{}", run.snapshot()))
}

/// Commits the recorded events (`git swarm commit`, in a commit of their
/// own), then every other change, if any.
fn commit_all(env: &TestEnv, message: &str) {
    env.swarm(&["commit", "-m", message]).success();
    env.git(&["add", "-A"]);
    if !env.git(&["status", "--porcelain"]).is_empty() {
        env.git(&["commit", "-q", "-m", message]);
    }
}

/// A repository with a few files committed, the handoffs to come start from.
fn repo() -> TestEnv {
    let env = TestEnv::initialised();
    for f in [
        "src/auth/login.rs",
        "src/auth/old.rs",
        "src/db/schema.rs",
        "docs/guide.md",
        "docs/gone.md",
    ] {
        env.write(f, format!("// {f}\n"));
    }
    commit_all(&env, "files");
    env
}

fn standing(env: &TestEnv, task: &str) -> String {
    let run = swarm(env, &["handoff", "show", task, "--format", "json"]);
    run.success();
    json(&run)["standing"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn scope_creep_read_only_renames_and_deletions_are_caught_from_git() {
    let env = repo();
    swarm(
        &env,
        &[
            "handoff",
            "create",
            "auth-login",
            "--owns",
            "src/auth/**",
            "--readonly",
            "src/db/**",
        ],
    )
    .success();
    env.write("src/auth/login.rs", "// changed\n");
    env.write("docs/guide.md", "// changed outside\n");
    env.write("src/db/schema.rs", "// read-only, changed\n");
    std::fs::create_dir_all(env.path("lib")).expect("mkdir");
    env.git(&["mv", "src/auth/old.rs", "lib/old.rs"]);
    env.git(&["rm", "-q", "docs/gone.md"]);
    commit_all(&env, "work");

    let run = swarm(&env, &["handoff", "check", "auth-login"]);
    run.code(1);
    let lines: Vec<&str> = run.stdout.lines().collect();
    for expected in [
        "scope_creep docs/gone.md",
        "scope_creep docs/guide.md",
        "scope_creep lib/old.rs",
        "readonly_touched src/db/schema.rs",
    ] {
        assert!(lines.contains(&expected), "{expected}:\n{}", run.snapshot());
    }
    // The owned side of the rename and the owned edit are fine.
    assert!(!run.stdout.contains("src/auth/"), "{}", run.snapshot());
    assert!(run.stdout.contains("4 violations"), "{}", run.snapshot());
    let checked = of_kind(&env, "handoff_checked");
    assert_eq!(checked.len(), 1);
    assert_eq!(checked[0]["ok"], false);
    assert_eq!(checked[0]["violations"], 4);
    assert_eq!(of_kind(&env, "handoff_violation").len(), 4);
    assert_eq!(standing(&env, "auth-login"), "violated");

    // The same change checked again records a run, no new violation.
    swarm(&env, &["handoff", "check", "auth-login"]).code(1);
    assert_eq!(of_kind(&env, "handoff_checked").len(), 2);
    assert_eq!(of_kind(&env, "handoff_violation").len(), 4);

    // JSON carries the same violations.
    let run = swarm(
        &env,
        &["handoff", "check", "auth-login", "--format", "json"],
    );
    run.code(1);
    let v = json(&run);
    assert_eq!(v["ok"], false);
    assert_eq!(v["violations"].as_array().map(Vec::len), Some(4));

    // A range that only touches owned paths passes.
    let run = swarm(
        &env,
        &["handoff", "check", "auth-login", "--range", "HEAD..HEAD"],
    );
    run.success();
    assert!(run.stdout.contains("no violation"), "{}", run.snapshot());
}

#[test]
fn criteria_run_through_the_runner_and_prose_is_listed() {
    let env = repo();
    swarm(
        &env,
        &[
            "handoff",
            "create",
            "t1",
            "--owns",
            "src/auth/**",
            "--criteria",
            "Tests pass: sh -c 'test -f src/auth/ok.txt'",
            "--criteria",
            "The login page shows an error on a bad password",
        ],
    )
    .success();
    env.write("src/auth/login.rs", "// work\n");
    commit_all(&env, "work");

    // Not trusted: not run, and not met.
    let run = swarm(&env, &["handoff", "check", "t1"]);
    run.code(1);
    assert!(run.stdout.contains("criterion_failed Tests pass: sh -c 'test -f src/auth/ok.txt': not run: the handoffs' tool criteria are not trusted"), "{}", run.snapshot());
    assert!(
        run.stdout
            .contains("not machine-checked: The login page shows an error on a bad password"),
        "{}",
        run.snapshot()
    );

    // Trusted, but `sh` is not on the allowlist: reported as such, not run.
    let trust = swarm(&env, &["trust"]);
    trust.success();
    assert!(
        trust.stdout.contains("1 handoff tool criterion"),
        "{}",
        trust.snapshot()
    );
    let run = swarm(&env, &["handoff", "check", "t1"]);
    run.code(1);
    assert!(run.stdout.contains("refused"), "{}", run.snapshot());
    assert!(run.stdout.contains("allowTool"), "{}", run.snapshot());

    // Allowlisted and trusted: it runs, and fails while the file is missing.
    env.git(&["config", "--add", "swarm.allowTool", "sh"]);
    let run = swarm(&env, &["handoff", "check", "t1"]);
    run.code(1);
    assert!(
        run.stdout
            .contains("criterion_failed Tests pass: sh -c 'test -f src/auth/ok.txt': `sh -c"),
        "{}",
        run.snapshot()
    );
    assert!(run.stdout.contains("exited with 1"), "{}", run.snapshot());

    env.write("src/auth/ok.txt", "ok\n");
    commit_all(&env, "tests pass");
    let run = swarm(&env, &["handoff", "check", "t1"]);
    run.success();
    assert!(
        run.stdout
            .contains("met: Tests pass: sh -c 'test -f src/auth/ok.txt'"),
        "{}",
        run.snapshot()
    );
    assert_eq!(standing(&env, "t1"), "in_review");
}

#[test]
fn a_predicate_criterion_runs_as_check_runs_it() {
    let env = repo();
    swarm(
        &env,
        &[
            "handoff",
            "create",
            "t1",
            "--owns",
            "src/**",
            "--criteria",
            "grep:dbg!:src/**/*.rs",
        ],
    )
    .success();
    env.write("src/auth/login.rs", "fn f() { dbg!(1); }\n");
    commit_all(&env, "work");
    let run = swarm(&env, &["handoff", "check", "t1"]);
    run.code(1);
    assert!(
        run.stdout
            .contains("criterion_failed grep:dbg!:src/**/*.rs:"),
        "{}",
        run.snapshot()
    );
}

#[test]
fn an_open_dependency_is_a_violation_until_it_completes() {
    let env = repo();
    swarm(&env, &["handoff", "create", "db", "--owns", "src/db/**"]).success();
    swarm(
        &env,
        &[
            "handoff",
            "create",
            "auth",
            "--owns",
            "src/auth/**",
            "--depends",
            "db",
        ],
    )
    .success();
    let run = swarm(&env, &["handoff", "check", "auth"]);
    run.code(1);
    assert!(
        run.stdout.lines().any(|l| l == "dependency_open db"),
        "{}",
        run.snapshot()
    );
    swarm(&env, &["handoff", "complete", "db"]).success();
    assert_eq!(standing(&env, "db"), "completed");
    swarm(&env, &["handoff", "check", "auth"]).success();
}

#[test]
fn complete_gives_the_paths_back_and_only_once() {
    let env = repo();
    swarm(&env, &["handoff", "create", "ta", "--owns", "src/**"]).success();
    swarm(&env, &["handoff", "create", "tb", "--owns", "src/auth/**"]).code(1);

    // A failing check completes nothing.
    env.write("docs/guide.md", "outside\n");
    commit_all(&env, "outside");
    let run = swarm(&env, &["handoff", "complete", "ta"]);
    run.code(1);
    assert!(
        run.stdout.contains("scope_creep docs/guide.md"),
        "{}",
        run.snapshot()
    );
    assert!(
        run.stderr.contains("was not completed"),
        "{}",
        run.snapshot()
    );
    assert!(of_kind(&env, "handoff_completed").is_empty());

    // Nor does a range that leaves the unowned commit out, or the index.
    let base =
        json(&swarm(&env, &["handoff", "show", "ta", "--format", "json"]))["contract"]["base"]
            .as_str()
            .expect("a base")
            .to_owned();
    for flags in [
        &["--range", "HEAD..HEAD"][..],
        &["--staged"][..],
        &["--worktree"][..],
    ] {
        let mut args = vec!["handoff", "complete", "ta"];
        args.extend_from_slice(flags);
        let run = swarm(&env, &args);
        run.code(2);
        assert!(run.stderr.contains("hint:"), "{}", run.snapshot());
        let mut args = vec!["handoff", "review", "ta", "--approve"];
        args.extend_from_slice(flags);
        swarm(&env, &args).code(2);
    }
    let run = swarm(
        &env,
        &["handoff", "complete", "ta", "--range", "HEAD..HEAD"],
    );
    assert!(
        run.stderr
            .contains(&format!("does not start at the handoff's base {base}")),
        "{}",
        run.snapshot()
    );
    assert!(of_kind(&env, "handoff_completed").is_empty());

    // Put back, the change from the base is within `owns`.
    env.write("docs/guide.md", "// docs/guide.md\n");
    commit_all(&env, "put back");
    let head = env.git(&["rev-parse", "HEAD"]);
    swarm(
        &env,
        &["handoff", "complete", "ta", "--range", "HEAD~1..HEAD"],
    )
    .code(2);
    let run = swarm(
        &env,
        &[
            "handoff",
            "complete",
            "ta",
            "--range",
            &format!("{base}..HEAD"),
        ],
    );
    run.success();
    assert!(run.stdout.contains("completed ta"), "{}", run.snapshot());
    assert_eq!(standing(&env, "ta"), "completed");
    assert_eq!(
        of_kind(&env, "handoff_completed")[0]["range"],
        format!("{base}..{}", head.trim())
    );
    swarm(&env, &["handoff", "create", "tb", "--owns", "src/auth/**"]).success();

    let run = swarm(
        &env,
        &["handoff", "complete", "ta", "--range", "HEAD..HEAD"],
    );
    run.code(1);
    assert!(
        run.stderr.contains("is completed already"),
        "{}",
        run.snapshot()
    );
    assert!(run.stderr.contains("hint:"), "{}", run.snapshot());
    assert_eq!(of_kind(&env, "handoff_completed").len(), 1);
}

#[test]
fn three_needs_changes_block_and_approve_completes() {
    let env = repo();
    swarm(&env, &["handoff", "create", "t1", "--owns", "src/auth/**"]).success();
    // A verdict is required, and a note says what to change.
    let run = swarm(&env, &["handoff", "review", "t1"]);
    run.code(2);
    assert!(
        run.stderr.contains("--approve|--needs-changes"),
        "{}",
        run.snapshot()
    );
    // The change flags belong to --approve.
    let run = swarm(
        &env,
        &[
            "handoff",
            "review",
            "t1",
            "--needs-changes",
            "x",
            "--staged",
        ],
    );
    run.code(2);
    assert!(
        run.stderr.contains("cannot be used with"),
        "{}",
        run.snapshot()
    );
    let run = swarm(&env, &["handoff", "review", "t1", "--needs-changes", " "]);
    run.code(2);
    assert!(run.stderr.contains("hint:"), "{}", run.snapshot());
    assert!(of_kind(&env, "handoff_review").is_empty());
    for n in 1..=3 {
        let run = swarm(
            &env,
            &[
                "handoff",
                "review",
                "t1",
                "--needs-changes",
                "show the error",
            ],
        );
        run.success();
        assert!(
            run.stdout.contains(&format!("attempt {n} of 3")),
            "{}",
            run.snapshot()
        );
    }
    assert_eq!(standing(&env, "t1"), "blocked");
    let run = swarm(&env, &["handoff", "review", "t1", "--approve"]);
    run.code(1);
    assert!(run.stderr.contains("is blocked"), "{}", run.snapshot());
    assert!(run.stderr.contains("3 times"), "{}", run.snapshot());
    assert!(
        run.stderr.contains("handoff release t1"),
        "{}",
        run.snapshot()
    );
    assert!(
        run.stderr.contains("max_review_attempts"),
        "{}",
        run.snapshot()
    );
    assert_eq!(of_kind(&env, "handoff_review").len(), 3);
    // Nor does `complete` go around the reviews.
    let run = swarm(&env, &["handoff", "complete", "t1"]);
    run.code(1);
    assert!(run.stderr.contains("is blocked"), "{}", run.snapshot());
    assert!(
        run.stderr.contains("handoff release t1"),
        "{}",
        run.snapshot()
    );
    assert!(of_kind(&env, "handoff_completed").is_empty());
    assert!(of_kind(&env, "handoff_checked").is_empty());

    swarm(&env, &["handoff", "create", "t2", "--owns", "lib/**"]).success();
    // Approve takes the change flags `complete` takes.
    let base =
        json(&swarm(&env, &["handoff", "show", "t2", "--format", "json"]))["contract"]["base"]
            .as_str()
            .expect("a base")
            .to_owned();
    let range = format!("{base}..HEAD");
    let run = swarm(
        &env,
        &["handoff", "review", "t2", "--approve", "--range", &range],
    );
    run.success();
    assert!(
        run.stdout.contains("approved and completed t2"),
        "{}",
        run.snapshot()
    );
    assert_eq!(standing(&env, "t2"), "completed");
    // A completed handoff is not checked again, and nothing is recorded.
    let checks = of_kind(&env, "handoff_checked").len();
    let run = swarm(&env, &["handoff", "check", "t2"]);
    run.code(1);
    assert!(
        run.stderr.contains("is completed already") && run.stderr.contains("hint:"),
        "{}",
        run.snapshot()
    );
    assert_eq!(of_kind(&env, "handoff_checked").len(), checks);
    let reviews = of_kind(&env, "handoff_review");
    assert_eq!(
        reviews.last().map(|r| r["verdict"].clone()),
        Some("approve".into())
    );
}

#[test]
fn approve_refuses_work_that_fails_its_check() {
    let env = repo();
    swarm(&env, &["handoff", "create", "t1", "--owns", "src/auth/**"]).success();
    env.write("docs/guide.md", "outside\n");
    commit_all(&env, "outside");
    let run = swarm(&env, &["handoff", "review", "t1", "--approve"]);
    run.code(1);
    assert!(
        run.stdout.contains("scope_creep docs/guide.md"),
        "{}",
        run.snapshot()
    );
    assert!(of_kind(&env, "handoff_review").is_empty());
    assert!(of_kind(&env, "handoff_completed").is_empty());
}

#[test]
fn review_attempts_from_two_branches_add_up_when_merged() {
    let env = repo();
    swarm(&env, &["handoff", "create", "t1", "--owns", "src/auth/**"]).success();
    commit_all(&env, "handoff");
    env.git(&["checkout", "-q", "-b", "other"]);
    swarm(
        &env,
        &[
            "handoff",
            "review",
            "t1",
            "--needs-changes",
            "from the other branch",
        ],
    )
    .success();
    commit_all(&env, "review on other");
    env.git(&["checkout", "-q", "main"]);
    swarm(
        &env,
        &["handoff", "review", "t1", "--needs-changes", "from main"],
    )
    .success();
    commit_all(&env, "review on main");
    env.git(&["merge", "-q", "--no-edit", "other"]);
    assert_eq!(of_kind(&env, "handoff_review").len(), 2);
    // One attempt is left of three: the next sends it back and blocks it.
    let run = swarm(
        &env,
        &["handoff", "review", "t1", "--needs-changes", "third"],
    );
    run.success();
    assert!(run.stdout.contains("attempt 3 of 3"), "{}", run.snapshot());
    assert_eq!(standing(&env, "t1"), "blocked");
}

#[test]
fn a_path_scoped_directive_escalates_on_the_second_handoff_violation() {
    let env = repo();
    env.write(
        ".swarm/directives/db-owned.toml",
        "id = \"db-owned\"\nlesson = \"Only the db task changes the schema.\"\npriority = \"medium\"\nenforcement = \"warn\"\napplies_to_agents = [\"coder\"]\npaths = [\"src/db/**\"]\nverify = [\"file_modified:src/db/**\"]\n",
    );
    commit_all(&env, "directive");
    swarm(
        &env,
        &["handoff", "create", "auth", "--owns", "src/auth/**"],
    )
    .success();
    env.write("src/db/schema.rs", "// first\n");
    commit_all(&env, "first");
    let run = swarm(&env, &["handoff", "check", "auth"]);
    run.code(1);
    let copies: Vec<Value> = of_kind(&env, "handoff_violation")
        .into_iter()
        .filter(|e| e["directive"] == "db-owned")
        .collect();
    assert_eq!(copies.len(), 1, "{}", run.snapshot());
    assert!(of_kind(&env, "escalation").is_empty());

    // A later commit touching only owned files leaves the offending edit as
    // it was: the same offence, not a second occasion.
    env.write("src/auth/login.rs", "// owned work\n");
    commit_all(&env, "owned");
    let run = swarm(&env, &["handoff", "check", "auth"]);
    run.code(1);
    assert!(
        run.stdout.contains("scope_creep src/db/schema.rs"),
        "{}",
        run.snapshot()
    );
    let violations = of_kind(&env, "handoff_violation");
    assert_eq!(violations.len(), 2, "{violations:?}");
    assert!(of_kind(&env, "escalation").is_empty());

    env.write("src/db/schema.rs", "// second\n");
    commit_all(&env, "second");
    let run = swarm(&env, &["handoff", "check", "auth"]);
    run.code(1);
    assert!(
        run.stderr.contains("escalated db-owned"),
        "{}",
        run.snapshot()
    );
    let escalations = of_kind(&env, "escalation");
    assert_eq!(escalations.len(), 1);
    assert_eq!(escalations[0]["directive"], "db-owned");
    let status = swarm(&env, &["status"]);
    assert!(status.stdout.contains("db-owned"), "{}", status.snapshot());
    let show = swarm(&env, &["show", "db-owned"]);
    show.success();
    assert!(show.stdout.contains("escalat"), "{}", show.snapshot());
}

#[test]
fn status_shows_open_handoffs_blocked_reviews_and_recent_violations() {
    let env = repo();
    let run = swarm(&env, &["status"]);
    run.success();
    assert!(
        run.stdout.contains("Open handoffs: 0\n"),
        "{}",
        run.snapshot()
    );
    swarm(&env, &["handoff", "create", "db", "--owns", "src/db/**"]).success();
    swarm(&env, &["handoff", "create", "done", "--owns", "lib/**"]).success();
    swarm(
        &env,
        &["handoff", "complete", "done", "--range", "HEAD..HEAD"],
    )
    .success();
    for _ in 0..3 {
        swarm(
            &env,
            &["handoff", "review", "db", "--needs-changes", "not yet"],
        )
        .success();
    }
    // What the coordinator recorded is committed before auth's work starts.
    commit_all(&env, "coordination");
    swarm(
        &env,
        &["handoff", "create", "auth", "--owns", "src/auth/**"],
    )
    .success();
    env.write("docs/guide.md", "outside\n");
    commit_all(&env, "outside");
    swarm(&env, &["handoff", "check", "auth"]).code(1);

    let run = swarm(&env, &["status"]);
    run.success();
    let out = &run.stdout;
    assert!(
        out.contains("Open handoffs: 2 (auth, db)\n"),
        "{}",
        run.snapshot()
    );
    assert!(
        out.contains("Blocked reviews:\n  db  sent back 3 time(s)\n"),
        "{}",
        run.snapshot()
    );
    assert!(
        out.contains(
            "Handoff violations (last 7 days):\n  auth  scope_creep docs/guide.md  2026-11-22T"
        ),
        "{}",
        run.snapshot()
    );

    let run = swarm(&env, &["status", "--format", "json"]);
    run.success();
    let h = &json(&run)["handoffs"];
    assert_eq!(h["open"], serde_json::json!(["auth", "db"]));
    assert_eq!(h["blocked"], serde_json::json!([["db", 3]]));
    assert_eq!(h["recent_violations"][0]["what"], "docs/guide.md");
}

#[test]
fn the_default_change_is_the_tasks_worktree_branch_and_its_tools_run_there() {
    let env = repo();
    swarm(
        &env,
        &[
            "handoff",
            "create",
            "t1",
            "--owns",
            "src/auth/**",
            "--criteria",
            "Tests pass: sh -c 'test -f src/auth/ok.txt'",
        ],
    )
    .success();
    commit_all(&env, "handoff");
    swarm(&env, &["trust"]).success();
    env.git(&["config", "--add", "swarm.allowTool", "sh"]);
    let run = swarm(&env, &["worktree", "create", "t1"]);
    run.success();
    // The output names it with the temporary folder normalised.
    assert_eq!(run.stdout.trim(), "$TMP/repo.worktrees/t1");
    let dir = env.root.with_file_name("repo.worktrees").join("t1");
    std::fs::write(dir.join("src/auth/ok.txt"), "ok\n").expect("write");
    std::fs::write(dir.join("docs/guide.md"), "outside\n").expect("write");
    env.git_in(&dir, &["add", "-A"]);
    env.git_in(&dir, &["commit", "-q", "-m", "work in the worktree"]);

    // Checked from the main worktree, whose HEAD has none of it.
    let run = swarm(&env, &["handoff", "check", "t1"]);
    run.code(1);
    assert_eq!(
        run.stdout.lines().next(),
        Some("scope_creep docs/guide.md"),
        "{}",
        run.snapshot()
    );
    assert!(
        run.stdout.contains("met: Tests pass:"),
        "{}",
        run.snapshot()
    );
    assert!(
        run.stdout.contains("..swarm/t1 (2 paths)"),
        "{}",
        run.snapshot()
    );
}

#[test]
fn a_worker_cannot_rewrite_its_own_or_another_contract() {
    let env = repo();
    swarm(&env, &["handoff", "create", "db", "--owns", "src/db/**"]).success();
    commit_all(&env, "db handoff");
    swarm(
        &env,
        &["handoff", "create", "auth-login", "--owns", "src/auth/**"],
    )
    .success();
    let created = of_kind(&env, "handoff_created");
    assert!(
        created
            .iter()
            .all(|e| e["digest"].as_str().is_some_and(|d| d.len() == 40)),
        "{created:?}"
    );
    // The worker widens its own contract and commits it with the work.
    let file = env.path(".swarm/handoffs/auth-login.toml");
    let text = std::fs::read_to_string(&file).expect("read");
    std::fs::write(&file, text.replace("\"src/auth/**\"", "\"**\"")).expect("write");
    env.write("docs/guide.md", "// outside\n");
    commit_all(&env, "work");
    let run = swarm(&env, &["handoff", "check", "auth-login"]);
    run.code(1);
    assert!(
        run.stdout
            .lines()
            .any(|l| l == "contract_edited .swarm/handoffs/auth-login.toml"),
        "{}",
        run.snapshot()
    );
    assert!(run.stderr.contains("never rewritten"), "{}", run.snapshot());
    let run = swarm(&env, &["handoff", "complete", "auth-login"]);
    run.code(1);
    assert!(of_kind(&env, "handoff_completed").is_empty());

    // Restoring its own file is not enough when another's was deleted.
    std::fs::write(&file, &text).expect("write");
    env.write("docs/guide.md", "// docs/guide.md\n");
    env.git(&["rm", "-q", ".swarm/handoffs/db.toml"]);
    commit_all(&env, "restore, drop another");
    let run = swarm(&env, &["handoff", "check", "auth-login"]);
    run.code(1);
    assert!(
        run.stdout
            .lines()
            .any(|l| l == "contract_edited .swarm/handoffs/db.toml"),
        "{}",
        run.snapshot()
    );
    assert!(
        !run.stdout.contains("auth-login.toml"),
        "{}",
        run.snapshot()
    );
    let run = swarm(&env, &["handoff", "review", "auth-login", "--approve"]);
    run.code(1);
    assert!(of_kind(&env, "handoff_completed").is_empty());
}

fn event_file(env: &TestEnv) -> std::path::PathBuf {
    let dir = env.path(".swarm/events");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("events")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    files.pop().expect("an event file")
}

#[test]
fn a_worker_cannot_forge_or_remove_events() {
    let env = repo();
    swarm(&env, &["handoff", "create", "db", "--owns", "src/db/**"]).success();
    swarm(
        &env,
        &["handoff", "review", "db", "--needs-changes", "redo"],
    )
    .success();
    commit_all(&env, "db handoff");
    swarm(
        &env,
        &[
            "handoff",
            "create",
            "auth-login",
            "--owns",
            "src/auth/**",
            "--depends",
            "db",
        ],
    )
    .success();
    // The worker forges the dependency's completion and drops a review.
    let file = event_file(&env);
    let rel = file
        .strip_prefix(env.path(""))
        .expect("inside")
        .to_string_lossy()
        .into_owned();
    let text = std::fs::read_to_string(&file).expect("read");
    let removed = 1 + text
        .lines()
        .position(|l| l.contains("needs_changes"))
        .expect("a review");
    let kept: Vec<&str> = text
        .lines()
        .filter(|l| !l.contains("needs_changes"))
        .collect();
    let forged = r#"{"id":"01KAAAAAAAAAAAAAAAAAAAAAZZ","ts":"2026-11-12T09:00:00.000Z","kind":"handoff_completed","task":"db"}"#;
    std::fs::write(&file, format!("{}\n{forged}\n", kept.join("\n"))).expect("write");
    env.write("src/auth/login.rs", "// work\n");
    commit_all(&env, "work");
    let run = swarm(&env, &["handoff", "check", "auth-login"]);
    run.code(1);
    let lines: Vec<&str> = run.stdout.lines().collect();
    let forged_at = kept.len() + 1;
    for expected in [
        format!("log_edited {rel}:{removed}: a recorded event removed or changed"),
        format!("log_edited {rel}:{forged_at}: adds a `handoff_completed` event"),
    ] {
        assert!(
            lines.contains(&expected.as_str()),
            "{expected}:\n{}",
            run.snapshot()
        );
    }
    // Appending what a check records is fine: only those lines offend.
    assert_eq!(
        lines.iter().filter(|l| l.starts_with("log_edited")).count(),
        2,
        "{}",
        run.snapshot()
    );
    swarm(&env, &["handoff", "complete", "auth-login"]).code(1);
    assert!(of_kind(&env, "handoff_completed").len() == 1);
}

#[test]
fn criteria_run_on_the_commit_checked_not_the_folder_they_are_run_from() {
    let env = repo();
    swarm(
        &env,
        &[
            "handoff",
            "create",
            "t1",
            "--owns",
            "src/auth/**",
            "--criteria",
            "Tests pass: sh -c 'test -f src/auth/ok.txt'",
        ],
    )
    .success();
    let base = env.git(&["rev-parse", "HEAD"]).trim().to_owned();
    commit_all(&env, "handoff");
    swarm(&env, &["trust"]).success();
    env.git(&["config", "--add", "swarm.allowTool", "sh"]);
    swarm(&env, &["worktree", "create", "t1"]).success();
    let dir = env.root.with_file_name("repo.worktrees").join("t1");
    // The branch has owned work but not what the test looks for; the
    // task's folder and the coordinator's checkout both have it, uncommitted.
    std::fs::write(dir.join("src/auth/login.rs"), "// work\n").expect("write");
    env.git_in(&dir, &["add", "src/auth/login.rs"]);
    env.git_in(&dir, &["commit", "-q", "-m", "work"]);
    std::fs::write(dir.join("src/auth/ok.txt"), "ok\n").expect("write");
    env.write("src/auth/ok.txt", "ok\n");

    let range = format!("{base}..swarm/t1");
    for args in [
        vec!["handoff", "check", "t1"],
        vec!["handoff", "check", "t1", "--range", &range],
    ] {
        let run = swarm(&env, &args);
        run.code(1);
        assert!(
            run.stdout.contains("criterion_failed Tests pass:"),
            "{}",
            run.snapshot()
        );
    }
    // Nothing is left of the checkouts made for the runs.
    let list = env.git(&["worktree", "list", "--porcelain"]);
    assert_eq!(list.matches("worktree ").count(), 2, "{list}");

    // Committed on the branch, it is met.
    env.git_in(&dir, &["add", "src/auth/ok.txt"]);
    env.git_in(&dir, &["commit", "-q", "-m", "ok"]);
    let run = swarm(&env, &["handoff", "check", "t1", "--range", &range]);
    run.success();
    assert!(
        run.stdout.contains("met: Tests pass:"),
        "{}",
        run.snapshot()
    );
}

#[test]
fn trusting_the_directives_commands_does_not_trust_a_handoff_named_alike() {
    let env = repo();
    env.write(
        ".swarm/directives/t1.toml",
        "id = \"t1\"\nlesson = \"The check script passes.\"\npriority = \"medium\"\nenforcement = \"warn\"\napplies_to_agents = [\"coder\"]\nverify = [\"tool:sh -c true\"]\n",
    );
    commit_all(&env, "directive");
    env.git(&["config", "--add", "swarm.allowTool", "sh"]);
    let show = swarm(&env, &["trust", "--show"]);
    let fingerprint = show
        .stdout
        .split(['(', ')'])
        .find(|s| s.starts_with("sha1:"))
        .expect("a fingerprint")
        .to_owned();
    // Only the directives' set is trusted.
    env.git(&["config", "--add", "swarm.trustedTools", &fingerprint]);
    swarm(
        &env,
        &[
            "handoff",
            "create",
            "t1",
            "--owns",
            "src/auth/**",
            "--criteria",
            "tool:sh -c true",
        ],
    )
    .success();
    env.write("src/auth/login.rs", "// work\n");
    commit_all(&env, "work");
    let run = swarm(&env, &["handoff", "check", "t1"]);
    run.code(1);
    assert!(
        run.stdout
            .contains("criterion_failed tool:sh -c true: not run"),
        "{}",
        run.snapshot()
    );
    let show = swarm(&env, &["trust", "--show"]);
    assert!(
        show.stdout.contains("criterion is not trusted"),
        "{}",
        show.snapshot()
    );
}

#[test]
fn only_event_logs_and_new_handoffs_are_exempt_under_swarm() {
    let env = repo();
    swarm(&env, &["handoff", "create", "t1", "--owns", "src/auth/**"]).success();
    env.write(".swarm/events/notes.txt", "not an event file\n");
    env.write(".swarm/handoffs/nested/x.toml", "task = \"x\"\n");
    env.write("src/auth/login.rs", "// work\n");
    commit_all(&env, "work");
    let run = swarm(&env, &["handoff", "check", "t1"]);
    run.code(1);
    let lines: Vec<&str> = run.stdout.lines().collect();
    for expected in [
        "scope_creep .swarm/events/notes.txt",
        "scope_creep .swarm/handoffs/nested/x.toml",
    ] {
        assert!(lines.contains(&expected), "{expected}:\n{}", run.snapshot());
    }
    assert_eq!(
        lines.iter().filter(|l| !l.starts_with("checked")).count(),
        2,
        "{}",
        run.snapshot()
    );
}

/// A pattern of role `coder`, learned in an earlier run.
fn coder_pattern(env: &TestEnv) {
    env.write(
        "delib.md",
        "- Finding 1: the login handler must validate the token before the session.\n",
    );
    swarm(
        env,
        &[
            "pattern", "extract", "--role", "coder", "--run", "r0", "delib.md",
        ],
    )
    .success();
    // Not part of any task's change.
    std::fs::remove_file(env.path("delib.md")).expect("rm");
}

fn pattern_grades(env: &TestEnv) -> (u64, u64) {
    let run = swarm(env, &["pattern", "list", "--format", "json"]);
    run.success();
    let p = &json(&run)[0];
    (
        p["outcome_passes"].as_u64().expect("passes"),
        p["outcome_fails"].as_u64().expect("fails"),
    )
}

fn create_for_coder(env: &TestEnv, task: &str, owns: &str) -> Run {
    let run = swarm(
        env,
        &["handoff", "create", task, "--owns", owns, "--role", "coder"],
    );
    run.success();
    run
}

#[test]
fn the_patterns_a_handoff_shows_are_graded_by_how_it_ends() {
    let env = repo();
    coder_pattern(&env);
    let run = create_for_coder(&env, "auth", "src/auth/**");
    assert!(
        run.stdout.contains("=== HISTORICAL PATTERNS (coder) ==="),
        "{}",
        run.snapshot()
    );
    assert!(
        run.stdout.contains("validate the token"),
        "{}",
        run.snapshot()
    );
    let shown = of_kind(&env, "pattern_shown");
    assert_eq!(shown.len(), 1, "{shown:#?}");
    assert_eq!(shown[0]["run"], "handoff-auth");
    assert_eq!(shown[0]["patterns"].as_array().expect("ids").len(), 1);
    assert_eq!(pattern_grades(&env), (0, 0));

    env.write("src/auth/login.rs", "// done\n");
    commit_all(&env, "auth");
    swarm(&env, &["handoff", "complete", "auth"]).success();
    let outcomes = of_kind(&env, "outcome");
    assert_eq!(outcomes.len(), 1, "{outcomes:#?}");
    assert_eq!(outcomes[0]["run"], "handoff-auth");
    assert_eq!(outcomes[0]["result"], "pass");
    assert_eq!(pattern_grades(&env), (1, 0));
    // A run has one outcome: grading it again by hand is refused.
    swarm(
        &env,
        &["pattern", "outcome", "--run", "handoff-auth", "--fail"],
    )
    .code(2);

    // Approving completes, and so passes too.
    create_for_coder(&env, "docs", "docs/**");
    swarm(&env, &["handoff", "review", "docs", "--approve"]).success();
    assert_eq!(of_kind(&env, "outcome").len(), 2);
    assert_eq!(pattern_grades(&env), (2, 0));

    // The review that blocks a task fails its run, once.
    create_for_coder(&env, "db", "src/db/**");
    for n in 1..=3 {
        swarm(
            &env,
            &["handoff", "review", "db", "--needs-changes", "not yet"],
        )
        .success();
        let fails = of_kind(&env, "outcome")
            .iter()
            .filter(|e| e["result"] == "fail")
            .count();
        assert_eq!(fails, usize::from(n == 3), "after review {n}");
    }
    assert_eq!(standing(&env, "db"), "blocked");
    let fail = of_kind(&env, "outcome")
        .into_iter()
        .find(|e| e["result"] == "fail")
        .expect("fail");
    assert_eq!(fail["run"], "handoff-db");
    assert_eq!(pattern_grades(&env), (2, 1));
}

#[test]
fn a_handoff_without_patterns_shown_grades_nothing() {
    let env = repo();
    // A role, but no pattern to show.
    create_for_coder(&env, "auth", "src/auth/**");
    env.write("src/auth/login.rs", "// done\n");
    commit_all(&env, "auth");
    let run = swarm(&env, &["handoff", "complete", "auth"]);
    run.success();
    assert!(!run.stderr.contains("error"), "{}", run.snapshot());
    // A pattern, but no --role: no block.
    coder_pattern(&env);
    commit_all(&env, "records");
    let run = swarm(&env, &["handoff", "create", "db", "--owns", "src/db/**"]);
    run.success();
    assert!(
        !run.stdout.contains("HISTORICAL PATTERNS"),
        "{}",
        run.snapshot()
    );
    env.write("src/db/schema.rs", "// done\n");
    commit_all(&env, "db");
    let run = swarm(&env, &["handoff", "complete", "db"]);
    run.success();
    assert!(!run.stderr.contains("error"), "{}", run.snapshot());
    assert!(of_kind(&env, "pattern_shown").is_empty());
    assert!(of_kind(&env, "outcome").is_empty());
    assert_eq!(pattern_grades(&env), (0, 0));
}
