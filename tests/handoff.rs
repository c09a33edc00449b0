//! `git swarm handoff create|list|show|release` and `git swarm epic
//! status|next`: contracts written once, ownership exclusive among the
//! handoffs still holding it, standing folded from the log.

mod common;

use common::{Run, TestEnv, of_kind, swarm};
use serde_json::Value;

/// `handoff create TASK ARGS…` at the next tick.
fn create(env: &TestEnv, task: &str, args: &[&str]) -> Run {
    let mut all = vec!["handoff", "create", task];
    all.extend_from_slice(args);
    swarm(env, &all)
}

fn json(run: &Run) -> Value {
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}:\n{}", run.snapshot()))
}

/// Appends a `handoff_completed` event for `task`, as `handoff complete` would:
/// that command belongs elsewhere, the fold is what is tested here.
fn complete(env: &TestEnv, task: &str, n: u32) {
    let line = format!(
        "{{\"id\":\"01KAAAAAAAAAAAAAAAAAAAAC{n:02}\",\"ts\":\"2026-11-22T11:00:{n:02}.000Z\",\"kind\":\"handoff_completed\",\"task\":\"{task}\"}}\n"
    );
    let path = env.path(".swarm/events/2026-11.jsonl");
    let mut text = std::fs::read_to_string(&path).unwrap_or_default();
    text.push_str(&line);
    std::fs::write(&path, text).expect("append event");
}

fn standings(env: &TestEnv) -> Vec<(String, String)> {
    let run = swarm(env, &["handoff", "list", "--format", "json"]);
    run.success();
    json(&run)
        .as_array()
        .expect("a list")
        .iter()
        .map(|h| {
            (
                h["task"].as_str().unwrap_or_default().to_owned(),
                h["standing"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

#[test]
fn create_writes_the_contract_records_it_and_prints_the_brief() {
    let env = TestEnv::initialised();
    let head = env.git(&["rev-parse", "HEAD"]).trim().to_owned();
    create(
        &env,
        "db-schema",
        &[
            "--owns",
            "src/db/**",
            "--criteria",
            "Tests pass: cargo test",
            "--epic",
            "e1",
            "--summary",
            "The users table",
        ],
    )
    .success();
    let run = create(
        &env,
        "auth-login",
        &[
            "--owns",
            "src/auth/**",
            "--readonly",
            "src/db/**",
            "--depends",
            "db-schema",
            "--criteria",
            "grep:dbg!:src/**/*.rs",
            "--epic",
            "e1",
            "--role",
            "coder",
            "--next",
            "the logout page",
        ],
    );
    run.success();
    let first = run.stdout.lines().next().unwrap_or_default();
    let contract: Value =
        serde_json::from_str(first.strip_prefix("CONTRACT ").expect("the contract first"))
            .expect("JSON");
    assert_eq!(contract["task"], "auth-login");
    assert_eq!(contract["owns"], serde_json::json!(["src/auth/**"]));
    assert_eq!(contract["readonly"], serde_json::json!(["src/db/**"]));
    assert_eq!(contract["depends"], serde_json::json!(["db-schema"]));
    assert_eq!(contract["base"], head.as_str());
    for expected in [
        "Role: coder",
        "Depends on db-schema: open",
        "  produced: The users table",
        "  met: Tests pass: cargo test",
        "Next: the logout page",
        "Escalate to coordinator:",
    ] {
        assert!(
            run.stdout.contains(expected),
            "{expected}:\n{}",
            run.snapshot()
        );
    }
    // The inject block for the role follows, recorded as a delegation.
    let shown = of_kind(&env, "shown");
    assert_eq!(shown.len(), 1, "{}", run.snapshot());
    // (The harness shows every ULID as `[ULID]`.)
    assert!(shown[0]["id"].as_str().is_some_and(|id| id.len() == 26));
    assert!(
        run.stdout.contains("delegation=\"[ULID]\""),
        "{}",
        run.snapshot()
    );
    assert!(
        run.stderr.contains("delegation [ULID] recorded"),
        "{}",
        run.snapshot()
    );

    let file = env.read(".swarm/handoffs/auth-login.toml");
    assert!(file.contains("task = \"auth-login\""), "{file}");
    assert!(file.contains("created_at = 2026-11-22T"), "{file}");
    assert!(file.contains(&format!("base = \"{head}\"")), "{file}");
    let created = of_kind(&env, "handoff_created");
    assert_eq!(created.len(), 2);
    assert_eq!(created[1]["task"], "auth-login");
    assert_eq!(created[1]["role"], "coder");
    swarm(&env, &["validate"]).success();

    let list = swarm(&env, &["handoff", "list"]);
    list.success();
    assert_eq!(
        list.stdout,
        "auth-login  open       e1  coder  src/auth/**\ndb-schema  open       e1  -  src/db/**\n"
    );
    let show = swarm(&env, &["handoff", "show", "auth-login", "--format", "json"]);
    show.success();
    let v = json(&show);
    assert_eq!(v["standing"], "open");
    assert_eq!(v["contract"]["depends"], serde_json::json!(["db-schema"]));
    assert_eq!(v["events"][0]["kind"], "handoff_created");
    let text = swarm(&env, &["handoff", "show", "auth-login"]);
    assert!(
        text.stdout.contains("handoff_created"),
        "{}",
        text.snapshot()
    );
}

#[test]
fn create_in_json_names_the_file_and_the_delegation() {
    let env = TestEnv::initialised();
    let run = create(
        &env,
        "t1",
        &["--owns", "lib/**", "--role", "coder", "--format", "json"],
    );
    run.success();
    let v = json(&run);
    assert_eq!(v["path"], ".swarm/handoffs/t1.toml");
    assert_eq!(v["contract"]["owns"], serde_json::json!(["lib/**"]));
    assert_eq!(v["delegation"], "[ULID]");
    assert_eq!(of_kind(&env, "shown").len(), 1);
    assert!(
        v["block"]
            .as_str()
            .unwrap_or_default()
            .contains("<delegate_knowledge_directives")
    );
}

#[test]
fn an_overlapping_owns_set_is_refused_naming_the_task_globs_and_a_path() {
    let env = TestEnv::initialised();
    create(&env, "auth", &["--owns", "src/auth/*.rs"]).success();
    let run = create(&env, "wide", &["--owns", "src/**"]);
    run.code(1);
    assert!(
        run.stderr
            .contains("`src/**` overlaps handoff `auth`'s `src/auth/*.rs`: both own src/auth/x.rs"),
        "{}",
        run.snapshot()
    );
    assert!(run.stderr.contains("hint:"), "{}", run.snapshot());
    assert!(!env.exists(".swarm/handoffs/wide.toml"));

    // A glob without `/` matches its name at any depth, as in pathglob.
    create(&env, "docs", &["--owns", "docs/a.md"]).success();
    let run = create(&env, "notes", &["--owns", "*.md"]);
    run.code(1);
    assert!(
        run.stderr.contains("both own docs/a.md"),
        "{}",
        run.snapshot()
    );

    // Disjoint sets are accepted.
    create(&env, "db", &["--owns", "src/db/**", "src/auth/*.md"]).success();
    assert_eq!(of_kind(&env, "handoff_created").len(), 3);
}

#[test]
fn released_and_completed_ownership_can_be_taken_again() {
    let env = TestEnv::initialised();
    create(&env, "auth", &["--owns", "src/auth/**"]).success();
    let short = swarm(&env, &["handoff", "release", "auth", "--reason", "no"]);
    short.code(2);
    assert!(short.stderr.contains("at least 10"), "{}", short.snapshot());
    swarm(
        &env,
        &[
            "handoff",
            "release",
            "auth",
            "--reason",
            "the epic was dropped",
        ],
    )
    .success();
    assert_eq!(
        of_kind(&env, "handoff_released")[0]["reason"],
        "the epic was dropped"
    );
    let again = swarm(
        &env,
        &[
            "handoff",
            "release",
            "auth",
            "--reason",
            "the epic was dropped",
        ],
    );
    again.code(1);
    assert!(
        again.stderr.contains("is released already"),
        "{}",
        again.snapshot()
    );
    assert!(again.stderr.contains("hint:"), "{}", again.snapshot());

    create(&env, "auth-2", &["--owns", "src/auth/login.rs"]).success();
    create(&env, "auth-3", &["--owns", "src/**"]).code(1);
    complete(&env, "auth-2", 1);
    create(&env, "auth-3", &["--owns", "src/**"]).success();
    assert_eq!(
        standings(&env),
        [
            ("auth".into(), "released".into()),
            ("auth-2".into(), "completed".into()),
            ("auth-3".into(), "open".into())
        ]
    );
    let open = swarm(&env, &["handoff", "list", "--open"]);
    assert_eq!(open.stdout, "auth-3  open       -  -  src/**\n");
    let completed = swarm(
        &env,
        &[
            "handoff",
            "release",
            "auth-2",
            "--reason",
            "the epic was dropped",
        ],
    );
    completed.code(1);
    assert!(
        completed.stderr.contains("is completed already"),
        "{}",
        completed.snapshot()
    );
}

#[test]
fn bad_input_is_refused_before_anything_is_written() {
    let env = TestEnv::initialised();
    create(&env, "base", &["--owns", "lib/**"]).success();
    let cases: &[(&str, &[&str], &str)] = &[
        ("Bad_Id", &["--owns", "x/**"], "is not a valid task id"),
        (
            "t2",
            &["--owns", "x/**", "--depends", "basee"],
            "did you mean `base`?",
        ),
        ("t3", &["--owns", "../x"], "contains `..`"),
        (
            "t4",
            &["--owns", "x/**", "--base", "no-such-rev"],
            "does not name a revision",
        ),
        (
            "t5",
            &["--owns", "x/**", "--base", "HEAD^{tree}"],
            "not a commit",
        ),
        (
            "base",
            &["--owns", "y/**"],
            "already exists at .swarm/handoffs/base.toml",
        ),
        (
            "t6",
            &["--owns", "x/**", "--role", "Coder"],
            "is not a role name",
        ),
    ];
    for (task, args, message) in cases {
        let run = create(&env, task, args);
        run.code(2);
        assert!(
            run.stderr.contains(message),
            "{task}: {message}\n{}",
            run.snapshot()
        );
        assert!(run.stderr.contains("hint:"), "{}", run.snapshot());
    }
    assert_eq!(of_kind(&env, "handoff_created").len(), 1);
    let files: Vec<_> = std::fs::read_dir(env.path(".swarm/handoffs"))
        .expect("folder")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".toml"))
        .collect();
    assert_eq!(files, ["base.toml"]);
    let unknown = swarm(&env, &["handoff", "show", "basee"]);
    unknown.code(2);
    assert!(
        unknown.stderr.contains("did you mean `base`?"),
        "{}",
        unknown.snapshot()
    );
}

#[test]
fn a_malformed_handoff_file_is_reported_with_its_place() {
    let env = TestEnv::initialised();
    create(&env, "good", &["--owns", "lib/**"]).success();
    env.write(
        ".swarm/handoffs/bad.toml",
        "task = \"bad\"\ncreated_at = 2026-11-22T10:00:00Z\n[contract]\nowns = [\"a/**\"]\nbase = \"HEAD\"\n",
    );
    let run = swarm(&env, &["validate"]);
    run.code(2);
    assert!(
        run.stdout.contains(".swarm/handoffs/bad.toml:5:1"),
        "{}",
        run.snapshot()
    );
    let list = swarm(&env, &["handoff", "list"]);
    list.success();
    assert_eq!(list.stdout, "good  open       -  -  lib/**\n");
    assert!(
        list.stderr.contains(".swarm/handoffs/bad.toml:5:1"),
        "{}",
        list.snapshot()
    );
}

#[test]
fn epic_status_orders_by_dependency_and_reports_a_cycle() {
    let env = TestEnv::initialised();
    create(&env, "c-ui", &["--owns", "ui/**", "--epic", "e1"]).success();
    create(&env, "a-db", &["--owns", "db/**", "--epic", "e1"]).success();
    create(
        &env,
        "b-api",
        &["--owns", "api/**", "--epic", "e1", "--depends", "a-db"],
    )
    .success();
    create(
        &env,
        "d-page",
        &[
            "--owns",
            "page/**",
            "--epic",
            "e1",
            "--depends",
            "b-api",
            "c-ui",
        ],
    )
    .success();
    create(&env, "other", &["--owns", "other/**", "--epic", "e2"]).success();
    let run = swarm(&env, &["epic", "status", "e1"]);
    run.success();
    assert_eq!(
        run.stdout,
        "a-db  open\nb-api  open\nc-ui  open\nd-page  open\n"
    );

    // A cycle cannot be made by `create` (a dependency must exist first):
    // hand-written files make one, and it is reported, not walked.
    let head = env.git(&["rev-parse", "HEAD"]).trim().to_owned();
    for (task, dep) in [("x1", "x2"), ("x2", "x1")] {
        env.write(
            &format!(".swarm/handoffs/{task}.toml"),
            format!("task = \"{task}\"\nepic = \"e3\"\ncreated_at = 2026-11-22T10:00:00Z\n[contract]\nowns = [\"{task}/**\"]\ndepends = [\"{dep}\"]\nbase = \"{head}\"\n"),
        );
    }
    env.write(
        ".swarm/handoffs/x0.toml",
        format!("task = \"x0\"\nepic = \"e3\"\ncreated_at = 2026-11-22T10:00:00Z\n[contract]\nowns = [\"x0/**\"]\nbase = \"{head}\"\n"),
    );
    let run = swarm(&env, &["epic", "status", "e3", "--format", "json"]);
    run.code(1);
    let v = json(&run);
    assert_eq!(
        v["tasks"],
        serde_json::json!([{"task": "x0", "standing": "open"}])
    );
    assert_eq!(v["cycle"], serde_json::json!(["x1", "x2"]));
    let text = swarm(&env, &["epic", "status", "e3"]);
    assert!(
        text.stderr
            .contains("in a cycle and cannot be ordered: x1, x2"),
        "{}",
        text.snapshot()
    );
    swarm(&env, &["epic", "status", "nope"]).code(2);
}

#[test]
fn epic_next_offers_what_is_ready_and_never_what_is_done() {
    let env = TestEnv::initialised();
    create(
        &env,
        "a-db",
        &[
            "--owns",
            "db/**",
            "--epic",
            "e1",
            "--summary",
            "The users table",
        ],
    )
    .success();
    create(
        &env,
        "b-api",
        &["--owns", "api/**", "--epic", "e1", "--depends", "a-db"],
    )
    .success();
    let ready = |env: &TestEnv| -> Vec<String> {
        let run = swarm(env, &["epic", "next", "e1", "--format", "json"]);
        run.success();
        json(&run)
            .as_array()
            .expect("list")
            .iter()
            .map(|b| {
                b["contract"]["task"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned()
            })
            .collect()
    };
    assert_eq!(ready(&env), ["a-db"]);
    complete(&env, "a-db", 1);
    assert_eq!(ready(&env), ["b-api"]);
    let text = swarm(&env, &["epic", "next", "e1"]);
    assert!(text.stdout.starts_with("CONTRACT {"), "{}", text.snapshot());
    assert!(
        text.stdout
            .contains("Depends on a-db: completed at 2026-11-22T11:00:01.000Z"),
        "{}",
        text.snapshot()
    );
    assert!(
        text.stdout.contains("  produced: The users table"),
        "{}",
        text.snapshot()
    );
    // No delegation is recorded by `next`.
    assert!(of_kind(&env, "shown").is_empty());
    complete(&env, "b-api", 2);
    assert!(ready(&env).is_empty());
    let none = swarm(&env, &["epic", "next", "e1"]);
    assert!(
        none.stdout.contains("no task of epic `e1` is ready"),
        "{}",
        none.snapshot()
    );
}
