//! What a project gives back to a hive (issue 42, docs/hive.md): `hive
//! promote` proposes a proven, reviewed directive as a branch of the hive,
//! and `hive report` writes the project's signals about the hive's
//! directives as events on a branch of the hive, which `stats` in the hive
//! shows once merged. Real projects and a real hive repository, pushed to
//! as a remote.

use std::path::PathBuf;

use crate::common::{self, Run, TestEnv, directive, of_kind, repo_without_directives, swarm};

/// A lesson for coders that passes the gate.
const RUN_TESTS: &str = "lesson = \"Run the whole test suite before declaring a change done\"\npriority = \"high\"\napplies_to_agents = [\"coder\"]\nrequired_actions = [\"run the test suite\"]";

/// A project whose `main` holds the reviewed directive `run-tests-first`,
/// subscribed to a new hive `team` (its subscription committed too).
fn project_and_hive() -> (TestEnv, PathBuf) {
    let env = repo_without_directives();
    directive(&env, "run-tests-first", RUN_TESTS);
    env.git(&["add", "-A"]);
    env.git(&["commit", "-q", "-m", "a lesson"]);
    let hive = env.tmp.path().join("hive");
    env.swarm(&["hive", "init", &hive.to_string_lossy()])
        .success();
    subscribe(&env, &hive);
    (env, hive)
}

/// Subscribes `env` to `hive` as `team` and commits the subscription.
fn subscribe(env: &TestEnv, hive: &std::path::Path) {
    env.swarm(&["hive", "add", &hive.to_string_lossy(), "--name", "team"])
        .success();
    env.git(&["add", "-A"]);
    env.git(&["commit", "-q", "-m", "subscribe to the team's hive"]);
}

/// Writes and commits a directive in the hive's own repository.
fn hive_directive(env: &TestEnv, hive: &std::path::Path, id: &str, fields: &str) {
    std::fs::write(
        hive.join(format!(".swarm/directives/{id}.toml")),
        format!("id = \"{id}\"\n{fields}\n"),
    )
    .expect("write a hive directive");
    env.git_in(hive, &["add", "-A"]);
    env.git_in(hive, &["commit", "-q", "-m", id]);
}

/// One delegation to a coder, whose final message is `message`.
fn delegate(env: &TestEnv, message: &str) {
    let before = of_kind(env, "shown").len();
    swarm(
        env,
        &["inject", "--role", "coder", "--task", "fix the parser"],
    )
    .success();
    let shown = of_kind(env, "shown");
    assert_eq!(shown.len(), before + 1, "inject recorded a delegation");
    let delegation = shown[before]["id"].as_str().expect("id").to_owned();
    env.swarm_with(
        &["ack", "--delegation", &delegation, "-"],
        &[("GIT_SWARM_NOW", &common::tick())],
        Some(message.as_bytes()),
    )
    .success();
}

fn promote(env: &TestEnv, args: &[&str]) -> Run {
    let mut all = vec!["hive", "promote"];
    all.extend_from_slice(args);
    swarm(env, &all)
}

#[test]
fn promote_below_the_hives_bar_is_refused_with_each_shortfall() {
    let (env, hive) = project_and_hive();
    // The hive allows no violation; the project has one applied ack and one
    // admitted violation.
    let config = hive.join(".swarm/config.toml");
    let text = std::fs::read_to_string(&config).expect("hive config");
    std::fs::write(&config, format!("{text}max_violations = 0\n")).expect("write");
    env.git_in(&hive, &["commit", "-q", "-am", "no violation allowed"]);
    delegate(&env, "Done.\nKNOWLEDGE_APPLIED:run-tests-first\n");
    delegate(
        &env,
        "Done.\nKNOWLEDGE_VIOLATED:run-tests-first reason=no time for the suite\n",
    );

    let run = promote(&env, &["run-tests-first", "--to", "team"]);
    run.code(1);
    assert!(
        run.stdout.contains(
            "hive `team` does not take `run-tests-first` yet (shown 2, applied 1, violated 1):"
        ),
        "{}",
        run.snapshot()
    );
    assert!(
        run.stdout
            .contains("- acknowledged as applied in 1 delegation; the hive asks for at least 2\n"),
        "{}",
        run.snapshot()
    );
    assert!(
        run.stdout
            .contains("- violated 1 time; the hive allows at most 0\n"),
        "{}",
        run.snapshot()
    );
    assert!(run.stderr.contains("hint: "), "{}", run.snapshot());
    let branches = env.git_in(&hive, &["branch", "--list", "promote/*"]);
    assert_eq!(branches, "", "nothing was pushed");
}

#[test]
fn promote_refuses_a_directive_that_is_not_reviewed() {
    let (env, _hive) = project_and_hive();
    // Written by an agent into the work tree, never committed.
    directive(
        &env,
        "agent-minted",
        "lesson = \"Always rerun the flaky suite until it passes\"\napplies_to_agents = [\"coder\"]\nrequired_actions = [\"rerun the suite\"]",
    );
    let run = promote(&env, &["agent-minted", "--to", "team"]);
    run.code(2);
    assert!(
        run.stderr
            .contains("error: `agent-minted` is not reviewed: its content is not on main"),
        "{}",
        run.snapshot()
    );
    assert!(run.stderr.contains("hint: "), "{}", run.snapshot());

    // A reviewed directive edited in the work tree is not reviewed either.
    let path = ".swarm/directives/run-tests-first.toml";
    let edited = env.read(path).replace("high", "critical");
    env.write(path, edited);
    let run = promote(&env, &["run-tests-first", "--to", "team"]);
    run.code(2);
    assert!(
        run.stderr.contains("`run-tests-first` is not reviewed"),
        "{}",
        run.snapshot()
    );
}

#[test]
fn promote_refuses_a_hive_directive_an_unknown_id_and_an_unknown_hive() {
    let (env, hive) = project_and_hive();
    hive_directive(
        &env,
        &hive,
        "no-force-push",
        "lesson = \"Never force-push to the default branch of a remote\"\napplies_to_agents = [\"coder\"]\nforbidden_actions = [\"git push --force to main\"]",
    );
    env.swarm(&["hive", "update", "team"]).success();

    let run = promote(&env, &["no-force-push", "--to", "team"]);
    run.code(2);
    assert!(
        run.stderr.contains(
            "error: `no-force-push` is a directive of hive `team` (hive:team/no-force-push), not this project's"
        ),
        "{}",
        run.snapshot()
    );

    let run = promote(&env, &["no-such-lesson", "--to", "team"]);
    run.code(2);
    assert!(
        run.stderr
            .contains("error: this project has no directive `no-such-lesson`"),
        "{}",
        run.snapshot()
    );

    let run = promote(&env, &["run-tests-first", "--to", "elsewhere"]);
    run.code(2);
    assert!(
        run.stderr
            .contains("error: no hive named `elsewhere` in .swarm/config.toml"),
        "{}",
        run.snapshot()
    );
}

#[test]
fn a_promoted_directive_reaches_another_project_once_the_hive_merges_it() {
    let (env, hive) = project_and_hive();
    // Another project, subscribed to the same hive before the promotion.
    let other = TestEnv::initialised();
    subscribe(&other, &hive);
    delegate(&env, "Done.\nKNOWLEDGE_APPLIED:run-tests-first\n");
    delegate(&env, "Done. KNOWLEDGE_APPLIED: run-tests-first\n");

    let run = promote(&env, &["run-tests-first", "--to", "team"]);
    run.success();
    let branch = "promote/repo/run-tests-first";
    assert!(
        run.stdout.contains(&format!(
            "promoted `run-tests-first` to hive `team`: branch {branch}"
        )),
        "{}",
        run.snapshot()
    );
    assert!(
        run.stdout.contains("next: open a pull request")
            && run.stdout.contains("git swarm hive update"),
        "{}",
        run.snapshot()
    );

    // The branch in the hive: the directive with its provenance, one
    // commit on the hive's head, by the user.
    let file = env.git_in(
        &hive,
        &[
            "show",
            &format!("{branch}:.swarm/directives/run-tests-first.toml"),
        ],
    );
    let head = env.git(&["rev-parse", "--short=12", "HEAD"]);
    assert!(
        file.contains(&format!(
            "source = \"promoted from repo at {}: shown 2, applied 2, violated 0 (git swarm hive promote)\"",
            head.trim()
        )),
        "{file}"
    );
    assert!(
        file.contains("lesson = \"Run the whole test suite before declaring a change done\""),
        "{file}"
    );
    let parent = env.git_in(&hive, &["rev-parse", &format!("{branch}^")]);
    assert_eq!(parent, env.git_in(&hive, &["rev-parse", "HEAD"]));
    let who = env.git_in(&hive, &["log", "-1", "--format=%an <%ae>|%cn|%s", branch]);
    assert_eq!(
        who.trim(),
        "Test Author <author@example.com>|Test Committer|Promote `run-tests-first` from repo"
    );
    assert_eq!(
        env.git_in(&hive, &["status", "--porcelain"]),
        "",
        "the hive's work tree is untouched"
    );

    // Pushed once: the same branch again is refused.
    let again = promote(&env, &["run-tests-first", "--to", "team"]);
    again.code(2);
    assert!(
        again
            .stderr
            .contains(&format!("hive `team` already has a branch {branch}")),
        "{}",
        again.snapshot()
    );

    // The hive's owners merge it; the other project moves its pin.
    env.git_in(&hive, &["merge", "-q", branch]);
    let update = other.swarm(&["hive", "update", "team"]);
    update.success();
    assert!(
        update.stdout.contains("+ run-tests-first added"),
        "{}",
        update.snapshot()
    );
    let list = other.swarm(&["list", "--format", "json"]);
    list.success();
    assert!(
        list.stdout.contains("\"run-tests-first\""),
        "{}",
        list.snapshot()
    );

    // And the hive has it now: promoting it again under another branch is refused.
    let twice = promote(
        &env,
        &["run-tests-first", "--to", "team", "--branch", "again"],
    );
    twice.code(2);
    assert!(
        twice
            .stderr
            .contains("error: hive `team` already has `run-tests-first` at its head"),
        "{}",
        twice.snapshot()
    );
}

#[test]
fn report_writes_events_to_the_hive_that_stats_there_shows() {
    let (env, hive) = project_and_hive();
    hive_directive(
        &env,
        &hive,
        "no-force-push",
        "lesson = \"Never force-push to the default branch of a remote\"\napplies_to_agents = [\"coder\"]\nforbidden_actions = [\"git push --force to main\"]",
    );
    hive_directive(
        &env,
        &hive,
        "small-commits",
        "lesson = \"Keep each commit to one logical change with its tests\"\napplies_to_agents = [\"reviewer\"]\nrequired_actions = [\"split the commits\"]",
    );
    hive_directive(
        &env,
        &hive,
        "unused-lesson",
        "lesson = \"Write migration notes for every schema change\"\napplies_to_agents = [\"dba\"]\nrequired_actions = [\"write the notes\"]",
    );
    env.swarm(&["hive", "update", "team"]).success();
    env.git(&["commit", "-q", "-am", "move the hive's pin"]);
    env.swarm(&[
        "hive",
        "off",
        "team/small-commits",
        "--reason",
        "we review commits by hand here",
    ])
    .success();
    delegate(
        &env,
        "Done.\nKNOWLEDGE_APPLIED:no-force-push\nKNOWLEDGE_APPLIED:run-tests-first\n",
    );

    let run = swarm(&env, &["hive", "report", "team"]);
    run.success();
    assert!(
        run.stdout
            .contains("reported 2 directives of hive `team` on its branch reports/repo"),
        "{}",
        run.snapshot()
    );
    let read_events = |rev: &str| -> Vec<serde_json::Value> {
        env.git_in(
            &hive,
            &["show", &format!("{rev}:.swarm/events/2026-11.jsonl")],
        )
        .lines()
        .map(|l| serde_json::from_str(l).expect("an event line"))
        .collect()
    };
    let events = read_events("reports/repo");
    assert_eq!(events.len(), 2, "{events:?}");
    let by_id = |id: &str| {
        events
            .iter()
            .find(|e| e["directive"] == id)
            .unwrap_or_else(|| panic!("no report of {id}: {events:?}"))
            .clone()
    };
    let used = by_id("no-force-push");
    assert_eq!(used["kind"], "hive_report");
    assert_eq!(used["project"], "repo");
    assert_eq!(
        (
            &used["shown"],
            &used["applied"],
            &used["violated"],
            &used["prevented"]
        ),
        (&1.into(), &1.into(), &0.into(), &0.into())
    );
    assert_eq!(used["switched_off"], false);
    let off = by_id("small-commits");
    assert_eq!(off["switched_off"], true);
    assert_eq!(off["reason"], "we review commits by hand here");
    // Reported, not recorded: the project's own log has no such event.
    assert!(of_kind(&env, "hive_report").is_empty());

    // Again: a second, dated set with ids of its own, appended.
    swarm(&env, &["hive", "report", "team"]).success();
    let twice = read_events("reports/repo");
    assert_eq!(twice.len(), 4);
    assert_eq!(twice[..2], events[..]);
    assert_ne!(twice[2]["id"], twice[0]["id"]);

    // From a linked worktree, the project is still the main worktree's folder.
    env.git(&["commit", "-q", "-am", "switch small-commits off"]);
    let worktree = env.tmp.path().join("elsewhere");
    env.git(&["worktree", "add", "-q", &worktree.to_string_lossy()]);
    let from_worktree = env.swarm_in(&worktree, &["hive", "report", "team"]);
    from_worktree.success();
    assert!(
        from_worktree
            .stdout
            .contains("on its branch reports/repo (")
            && from_worktree.stdout.contains("appended"),
        "{}",
        from_worktree.snapshot()
    );
    assert_eq!(read_events("reports/repo").len(), 6);

    // The hive's owners merge the branch: `stats` there counts each
    // project's latest report once.
    env.git_in(&hive, &["merge", "-q", "reports/repo"]);
    let stats = env.swarm_in(&hive, &["stats"]);
    stats.success();
    assert!(
        stats.stdout.contains("Reported by projects"),
        "{}",
        stats.snapshot()
    );
    let row = |id: &str| {
        stats
            .stdout
            .lines()
            .find(|l| {
                l.trim_start().starts_with(&format!("{id} ")) && l.split_whitespace().count() == 6
            })
            .unwrap_or_else(|| panic!("no row for {id}:\n{}", stats.stdout))
            .split_whitespace()
            .skip(1)
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert_eq!(row("no-force-push"), "1 1 0 0 0");
    assert_eq!(row("small-commits"), "1 0 0 0 1");
    let json = env.swarm_in(&hive, &["stats", "--format", "json"]);
    json.success();
    let v: serde_json::Value = serde_json::from_str(&json.stdout).expect("JSON");
    assert_eq!(
        v["reported"],
        serde_json::json!([
            {"id": "no-force-push", "projects": 1, "applied": 1, "violated": 0, "prevented": 0, "switched_off": 0},
            {"id": "small-commits", "projects": 1, "applied": 0, "violated": 0, "prevented": 0, "switched_off": 1}
        ])
    );
}

#[test]
fn report_with_nothing_to_say_pushes_nothing() {
    let (env, hive) = project_and_hive();
    let run = swarm(&env, &["hive", "report", "team"]);
    run.success();
    assert!(
        run.stdout.contains("nothing to report"),
        "{}",
        run.snapshot()
    );
    assert_eq!(env.git_in(&hive, &["branch", "--list", "reports/*"]), "");
}
