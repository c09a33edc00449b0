//! Issue 37: every file under `.swarm/` is written by whoever opened a pull
//! request, so what a reader keeps of it is bounded, in memory as on disk.

use crate::common;

use common::TestEnv;

/// What `git swarm hook agent claude-code session-start` reads, as Claude
/// Code sends it (tests/fixtures/agents/captured/), for `env`'s repository.
fn session_start_payload(env: &TestEnv) -> String {
    serde_json::json!({
        "session_id": "3afc09ba-ac19-4056-b890-24f9d304a1e0",
        "transcript_path": env.home().join("transcript.jsonl"),
        "cwd": env.root,
        "hook_event_name": "SessionStart",
        "source": "startup",
    })
    .to_string()
}

/// 20,000 malformed event lines: readers keep the first problems and count
/// the rest (and say how many), and the index stores only what was kept.
#[test]
fn malformed_event_lines_are_kept_up_to_a_cap_and_counted() {
    let env = TestEnv::initialised();
    env.write(".swarm/events/2026-11.jsonl", "x\n".repeat(20_000));

    let validate = env.swarm(&["validate"]);
    validate.code(2);
    let listed = (validate.stdout.lines())
        .filter(|l| l.starts_with(".swarm/events/2026-11.jsonl:"))
        .count();
    assert_eq!(listed, 100, "{}", &validate.stdout[..2000]);
    assert!(
        validate
            .stdout
            .contains("… and 19,900 more problems in .swarm/events/2026-11.jsonl\n"),
        "{}",
        validate.stdout
    );
    assert!(
        validate.stdout.ends_with(": 20000 errors, 0 warnings.\n"),
        "{}",
        validate.stdout
    );

    // The index keeps the count, not 20,000 problems.
    let list = env.swarm(&["list"]);
    list.success();
    assert!(
        list.stderr.contains("warning: 20000 problems in .swarm/"),
        "{}",
        list.snapshot()
    );
    let index = env.index_bytes().len();
    assert!(index < 64 * 1024, "the index is {index} bytes");

    let log = env.swarm(&["log"]);
    log.success();
    assert!(
        log.stderr
            .ends_with("… and 19,900 more problems in .swarm/events/2026-11.jsonl\n"),
        "{}",
        log.stderr
    );
    assert!(log.stderr.lines().count() < 250, "{}", log.stderr);

    let hook = env.swarm_with(
        &["hook", "agent", "claude-code", "session-start"],
        &[],
        Some(session_start_payload(&env).as_bytes()),
    );
    hook.success();
    let check = env.swarm(&["check", "--staged"]);
    common::assert_no_panic(&check);

    // Appended bad lines are counted into what the index kept.
    let mut more = env.read(".swarm/events/2026-11.jsonl");
    more.push_str("y\n");
    env.write(".swarm/events/2026-11.jsonl", more);
    let list = env.swarm(&["list"]);
    assert!(
        list.stderr.contains("warning: 20001 problems in .swarm/"),
        "{}",
        list.snapshot()
    );
    assert!(env.index_bytes().len() < 64 * 1024);
}

/// `import opencode-swarm` of a file of 20,000 malformed lines around two
/// entries with one id: the first problems are listed, the rest counted,
/// the second entry skipped (ids are looked up in a set: 450,000 entries
/// took over 10 minutes with a list).
#[test]
fn import_lists_the_first_malformed_lines_and_counts_the_rest() {
    let env = TestEnv::initialised();
    let entry = r#"{"id":"run-tests-first","lesson":"Run the whole test suite before every handoff","applies_to_agents":["coder"],"required_actions":["run cargo test"]}"#;
    let text = format!(
        "{entry}\n{}{entry}\n{}",
        "x\n".repeat(10_000),
        "{\"id\":\n".repeat(10_000)
    );
    env.write("knowledge.jsonl", text);

    let run = env.swarm(&["import", "opencode-swarm", "knowledge.jsonl", "--dry-run"]);
    run.code(2);
    let listed = (run.stderr.lines())
        .filter(|l| l.starts_with("knowledge.jsonl:"))
        .count();
    assert_eq!(listed, 100, "{}", &run.stderr[..2000]);
    assert!(
        run.stderr
            .ends_with("… and 19,900 more problems in knowledge.jsonl\n"),
        "{}",
        run.stderr
    );
    assert_eq!(
        run.stdout,
        "knowledge.jsonl:1: added run-tests-first\n\
         knowledge.jsonl:10002: skipped run-tests-first (the same id appears earlier in the file)\n\
         1 added, 0 quarantined, 1 skipped, 20000 malformed lines (dry run: nothing written).\n"
    );
}

/// `serve` reads the log once and shares what the page needs of it across
/// requests (a whole-log load per request was 7.8 GB for 12 requests on a
/// 117 MB log): what it shares follows the log, a line appended between
/// two requests is in the second, and 20,000 malformed lines are 100
/// problems and a count.
#[test]
fn serve_answers_follow_the_log_and_bound_its_problems() {
    let env = common::repo_without_directives();
    common::directive(
        &env,
        "tenant-keys",
        "lesson = \"Prefix every cache key with the tenant id\"\napplies_to_agents = [\"coder\"]\nrequired_actions = [\"build keys with tenant_key()\"]",
    );
    let first = r#"{"id":"01KAAAAAAAAAAAAAAAAAAAAAA1","ts":"2026-11-20T09:00:00.000Z","kind":"check","directive":"tenant-keys","change":"c1"}"#;
    env.write(
        ".swarm/events/2026-11.jsonl",
        format!("{first}\n{}", "x\n".repeat(20_000)),
    );
    let served = crate::serve_support::Served::start(&env, &[]);
    for _ in 0..3 {
        let o = served.json("/api/overview.json");
        assert_eq!(o["violations"].as_array().map(Vec::len), Some(1), "{o}");
    }
    let o = served.json("/api/overview.json");
    let problems = o["problems"].as_array().expect("problems");
    assert_eq!(problems.len(), 101, "{o}");
    assert_eq!(
        problems[100]["message"],
        "… and 19,900 more problems in .swarm/events/2026-11.jsonl"
    );

    let second = r#"{"id":"01KAAAAAAAAAAAAAAAAAAAAAA2","ts":"2026-11-21T09:00:00.000Z","kind":"check","directive":"tenant-keys","change":"c2"}"#;
    let mut log = env.read(".swarm/events/2026-11.jsonl");
    log.push_str(second);
    log.push('\n');
    env.write(".swarm/events/2026-11.jsonl", log);
    let o = served.json("/api/overview.json");
    let ids: Vec<&str> = (o["violations"].as_array().expect("violations").iter())
        .map(|v| v["id"].as_str().expect("id"))
        .collect();
    assert_eq!(
        ids,
        ["01KAAAAAAAAAAAAAAAAAAAAAA2", "01KAAAAAAAAAAAAAAAAAAAAAA1"],
        "{o}"
    );
    let s = served.json("/api/series.json");
    let row = &s["series"][0];
    assert_eq!(row["directive"], "tenant-keys");
    assert_eq!(row["violations"][28], 1, "{s}");
    assert_eq!(row["violations"][27], 1, "{s}");
}

/// `git swarm diff` of a commit that adds 20,000 malformed event lines:
/// the first problems and one that counts the rest, not 20,000.
#[test]
fn diff_lists_the_first_malformed_lines_and_counts_the_rest() {
    let env = TestEnv::initialised();
    env.write(".swarm/events/2026-11.jsonl", "x\n".repeat(20_000));
    env.git(&["add", "-A"]);
    env.git(&["commit", "-q", "-m", "bad lines"]);

    let run = env.swarm(&["diff", "HEAD~1..HEAD", "--format", "json"]);
    common::assert_no_panic(&run);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).expect("JSON");
    let problems = report["problems"].as_array().expect("problems");
    assert_eq!(problems.len(), 101, "{}", run.stderr);
    let more: Vec<_> = (problems.iter())
        .filter(|p| p["code"] == "more_problems")
        .collect();
    assert_eq!(more.len(), 1, "{problems:?}");
    let last = more[0];
    assert_eq!(last["path"], ".swarm/events/2026-11.jsonl");
    assert_eq!(last["code"], "more_problems");
    assert_eq!(last["message"], "… and 19,900 more problems in this file");
    assert!(
        run.stderr.contains(
            ".swarm/events/2026-11.jsonl: error: … and 19,900 more problems in this file\n"
        ),
        "{}",
        run.stderr
    );
}
