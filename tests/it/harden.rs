//! `git swarm harden`: hand-fixed entries promoted, the others sent to the
//! user's curator program (a small script each test writes), with its
//! retry, its time limit and its daily quota.

use crate::common;

use std::collections::BTreeMap;
use std::path::PathBuf;

use common::{TestEnv, of_kind};
use serde_json::Value;

/// A repository with no directives and a quarantined entry `id` (no scope).
fn with_quarantined(ids: &[&str]) -> TestEnv {
    let env = common::repo_without_directives();
    for id in ids {
        quarantine(&env, id);
    }
    env
}

/// Quarantines `id` through `git swarm add` (it has no scope).
fn quarantine(env: &TestEnv, id: &str) {
    let run = env.swarm(&[
        "add",
        "--id",
        id,
        "--lesson",
        &format!("Run the test suite before handing back {id}"),
        "--verify",
        "file_modified:tests/**",
    ]);
    run.code(1);
    assert!(env.exists(&q(id)));
    // `add` points at the way out of quarantine.
    assert!(
        run.stderr.contains(&format!(
            "hint: fix {}, then `git swarm harden` promotes it",
            q(id)
        )),
        "{}",
        run.snapshot()
    );
}

fn q(id: &str) -> String {
    format!(".swarm/quarantine/{id}.toml")
}

fn d(id: &str) -> String {
    format!(".swarm/directives/{id}.toml")
}

/// Writes an executable curator script and configures it.
fn curator(env: &TestEnv, body: &str) -> PathBuf {
    let path = env.tmp.path().join("curator.sh");
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).expect("write curator");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    env.git(&["config", "swarm.curator", &path.to_string_lossy()]);
    path
}

/// A curator that logs each request to `requests.jsonl` and prints `reply`.
fn logging_curator(env: &TestEnv, reply: &str) -> PathBuf {
    let log = env.tmp.path().join("requests.jsonl");
    curator(
        env,
        &format!(
            "cat >> '{}'\necho >> '{}'\nprintf '%s' '{reply}'",
            log.display(),
            log.display()
        ),
    );
    log
}

fn requests(log: &PathBuf) -> Vec<Value> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_str(l).expect("a request is JSON"))
        .collect()
}

fn schema(name: &str) -> jsonschema::Validator {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("schema")
        .join(name);
    let text = std::fs::read_to_string(path).expect("schema file");
    jsonschema::validator_for(&serde_json::from_str(&text).expect("schema is JSON"))
        .expect("schema compiles")
}

fn harden_json(env: &TestEnv, args: &[&str]) -> (i32, Value) {
    let mut all = vec!["harden", "--format", "json"];
    all.extend_from_slice(args);
    let run = env.swarm(&all);
    common::assert_no_panic(&run);
    let report = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("JSON output ({e}):\n{}", run.snapshot()));
    (run.code, report)
}

/// The entry of `report` about `id`.
fn entry<'a>(report: &'a Value, id: &str) -> &'a Value {
    report["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .find(|e| e["id"] == id)
        .unwrap_or_else(|| panic!("no entry {id} in {report:#}"))
}

fn toml_table(text: &str) -> toml::Table {
    toml::from_str(text).expect("TOML")
}

/// Every file under `.swarm/` that is tracked or meant to be, with its bytes.
fn tracked_files(env: &TestEnv) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    for folder in ["directives", "quarantine", "events"] {
        let Ok(listing) = std::fs::read_dir(env.path(&format!(".swarm/{folder}"))) else {
            continue;
        };
        for e in listing {
            let e = e.expect("entry");
            out.insert(
                format!("{folder}/{}", e.file_name().to_string_lossy()),
                std::fs::read(e.path()).expect("read"),
            );
        }
    }
    out
}

#[test]
fn a_hand_fixed_entry_is_promoted_with_every_field_kept_and_passes_validate() {
    let env = common::repo_without_directives();
    env.swarm(&[
        "add",
        "--id",
        "tests-first",
        "--lesson",
        "Run the whole test suite before handing work back",
        "--rationale",
        "Reviewers found broken tests twice.",
        "--category",
        "testing",
        "--priority",
        "high",
        "--enforcement",
        "enforce",
        "--confidence",
        "0.8",
        "--paths",
        "src/**",
        "--trigger",
        "hand back",
        "--forbid",
        "Handing back with failing tests",
        "--require",
        "Run cargo test",
        "--verification-check",
        "The test log is attached",
        "--verify",
        "file_modified:tests/**",
        "--tag",
        "ci",
        "--source",
        "PR #12",
    ])
    .code(1);
    let before = env.read(&q("tests-first"));
    // The person adds a scope, and a comment of their own.
    let fixed = before.replace(
        "id = \"tests-first\"\n",
        "id = \"tests-first\"\n# for the coders only\napplies_to_agents = [\"coder\"]\n",
    );
    assert_ne!(fixed, before);
    env.write(&q("tests-first"), &fixed);

    let run = env.swarm(&["harden"]);
    run.success();
    assert_eq!(
        run.stdout,
        "promoted tests-first by hand: .swarm/directives/tests-first.toml\n"
    );
    assert!(!env.exists(&q("tests-first")));
    let promoted = env.read(&d("tests-first"));
    assert!(promoted.contains("# for the coders only\n"), "{promoted}");
    // Every field the person wrote is there, and nothing else.
    let mut want = toml_table(&fixed);
    for key in ["quarantine_reason", "quarantine_detail"] {
        assert!(want.remove(key).is_some(), "{key}");
    }
    assert_eq!(toml_table(&promoted), want);
    assert!(want.len() >= 17, "{want:#?}");

    let validate = env.swarm(&["validate"]);
    validate.success();
    let promoted_events = of_kind(&env, "promoted");
    assert_eq!(promoted_events.len(), 1);
    assert_eq!(promoted_events[0]["directive"], "tests-first");
    assert_eq!(promoted_events[0]["by"], "hand");
    assert_eq!(promoted_events[0]["from"], q("tests-first"));
    assert_eq!(promoted_events[0]["path"], d("tests-first"));
    // The directive is in use.
    env.swarm(&["show", "tests-first"]).success();
}

#[test]
fn without_a_curator_nothing_but_hand_fixed_entries_changes() {
    let env = with_quarantined(&["first-entry", "second-entry"]);
    let before = tracked_files(&env);
    let run = env.swarm(&["harden"]);
    run.success();
    assert_eq!(tracked_files(&env), before, "nothing changed");
    assert!(
        run.stdout
            .contains("skipped first-entry: missing_scope; fix it by hand"),
        "{}",
        run.snapshot()
    );
    assert!(
        run.stderr
            .contains("No curator is configured: 2 entries that fail the gate stay in quarantine"),
        "{}",
        run.snapshot()
    );
    assert!(
        run.stderr.contains("hint:") && run.stderr.contains("git config swarm.curator"),
        "{}",
        run.snapshot()
    );
    let (code, report) = harden_json(&env, &[]);
    assert_eq!(code, 0);
    assert_eq!(report["curator"], Value::Null);
    assert_eq!(entry(&report, "second-entry")["outcome"], "skipped");
    assert_eq!(tracked_files(&env), before);
    assert!(!env.exists(".git/swarm/local/curator-calls.jsonl"));

    let empty = common::repo_without_directives();
    let run = empty.swarm(&["harden"]);
    run.success();
    assert_eq!(run.stdout, "The quarantine is empty: nothing to harden.\n");
}

#[test]
fn a_promotion_cut_short_is_finished_and_a_clash_is_left_for_a_person() {
    let env = with_quarantined(&["cut-short", "clash"]);
    for id in ["cut-short", "clash"] {
        let text = env
            .read(&q(id))
            .replace("verify = [", "applies_to_agents = [\"coder\"]\nverify = [");
        env.write(&q(id), &text);
        // What a promotion writes, before it removes the quarantine file.
        let directive: String = text
            .lines()
            .filter(|l| !l.starts_with("quarantine_"))
            .map(|l| format!("{l}\n"))
            .collect();
        let directive = if id == "clash" {
            directive.replace("Run the test suite", "Run every test suite")
        } else {
            directive
        };
        env.write(&d(id), directive);
    }
    let clash = env.read(&q("clash"));
    let cut_short = env.read(&d("cut-short"));
    // Both at once is what validate calls a duplicate.
    let validate = env.swarm(&["validate"]);
    validate.code(2);
    assert!(
        validate
            .stdout
            .contains("error: id `cut-short` is also used by .swarm/directives/cut-short.toml"),
        "{}",
        validate.snapshot()
    );

    let run = env.swarm(&["harden"]);
    run.code(1);
    assert!(
        run.stdout.contains("repaired cut-short:"),
        "{}",
        run.snapshot()
    );
    assert!(
        run.stdout.contains("conflict clash: .swarm/directives/clash.toml and .swarm/quarantine/clash.toml both exist and differ"),
        "{}",
        run.snapshot()
    );
    assert!(!env.exists(&q("cut-short")));
    assert_eq!(env.read(&d("cut-short")), cut_short);
    assert_eq!(env.read(&q("clash")), clash, "a clash is left alone");
    assert!(env.exists(&d("clash")));
    let promoted = of_kind(&env, "promoted");
    assert_eq!(promoted.len(), 1);
    assert_eq!(promoted[0]["by"], "repair");

    // The person settles the clash; then all is valid.
    std::fs::remove_file(env.path(&q("clash"))).expect("rm");
    env.swarm(&["validate"]).success();
}

#[test]
fn a_curator_that_returns_garbage_leaves_the_entry_with_the_reason() {
    let env = with_quarantined(&["garbled"]);
    let log = logging_curator(&env, "Sure! Here is your entry: {applies_to_agents: coder}");
    let (code, report) = harden_json(&env, &[]);
    assert_eq!(code, 0);
    let e = entry(&report, "garbled");
    // A reply that is not JSON is the curator's failure, as a hang is: no
    // retry, no flag.
    assert_eq!(e["outcome"], "kept", "{report:#}");
    assert_eq!(e["calls"], 1);
    assert!(e["reason"].as_str().expect("reason").contains("not JSON"));
    assert_eq!(requests(&log).len(), 1);

    let kept = env.read(&q("garbled"));
    let table = toml_table(&kept);
    assert!(
        table["harden_reason"]
            .as_str()
            .expect("reason")
            .starts_with("the curator's reply is not JSON"),
        "{kept}"
    );
    assert_eq!(table["harden_attempts"].as_integer(), Some(1));
    assert!(table.get("retire_candidate").is_none(), "{kept}");
    assert_eq!(table["quarantine_reason"].as_str(), Some("missing_scope"));
    assert!(!env.exists(&d("garbled")));
    env.swarm(&["validate"]).success();
    let failed = of_kind(&env, "harden_failed");
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0]["directive"], "garbled");
    assert_eq!(failed[0]["calls"], 1);
    assert_eq!(failed[0]["retire_candidate"], false);

    // Not flagged: a later run asks again.
    let run = env.swarm(&["harden"]);
    run.success();
    assert!(
        run.stdout
            .starts_with("kept garbled (1 curator call): the curator's reply is not JSON"),
        "{}",
        run.snapshot()
    );
    assert_eq!(requests(&log).len(), 2);
    assert_eq!(
        toml_table(&env.read(&q("garbled")))["harden_attempts"].as_integer(),
        Some(2)
    );
}

#[test]
fn a_broken_curator_never_flags_good_entries() {
    let env = with_quarantined(&["binary", "huge", "no-entry"]);
    // Not UTF-8, over the reply limit, or JSON that is no entry (another
    // program's output): each entry is kept, the reason recorded.
    let replies = [
        (
            "binary",
            "printf '\\377\\376\\000'",
            "the curator's reply is not UTF-8",
        ),
        (
            "huge",
            "head -c 300000 /dev/zero | tr '\\000' ' '; echo '{}'",
            "the curator's reply is 300003 bytes, over the 262144-byte limit",
        ),
        (
            "no-entry",
            "echo '{\"result\": \"ok\"}'",
            "the curator's reply is not a directive: unknown field `result`",
        ),
    ];
    let cases: String = replies
        .iter()
        .map(|(id, reply, _)| format!("  *'\"{id}\"'*) {reply} ;;\n"))
        .collect();
    curator(
        &env,
        &format!("input=$(cat)\ncase \"$input\" in\n{cases}esac"),
    );
    let (code, report) = harden_json(&env, &[]);
    assert_eq!(code, 0);
    for (id, _, why) in replies {
        let e = entry(&report, id);
        assert_eq!(e["outcome"], "kept", "{report:#}");
        assert!(
            e["reason"].as_str().expect("reason").starts_with(why),
            "{report:#}"
        );
        let table = toml_table(&env.read(&q(id)));
        assert!(table.get("retire_candidate").is_none(), "{id}");
        assert!(
            table["harden_reason"]
                .as_str()
                .expect("reason")
                .starts_with(why),
            "{id}"
        );
    }
    // Garbage is not retried; JSON that is no entry is, once, with why.
    assert_eq!(entry(&report, "binary")["calls"], 1);
    assert_eq!(entry(&report, "huge")["calls"], 1);
    assert_eq!(entry(&report, "no-entry")["calls"], 2);
    assert!(
        of_kind(&env, "harden_failed")
            .iter()
            .all(|e| e["retire_candidate"] == false)
    );
    env.swarm(&["validate"]).success();
}

#[test]
fn an_entry_still_failing_after_the_retry_is_a_retire_candidate() {
    let env = with_quarantined(&["hopeless"]);
    // A well-formed reply that does not add what is missing.
    let log = logging_curator(&env, r#"{"rationale": "It matters a great deal."}"#);
    let run = env.swarm(&["harden"]);
    run.success();
    assert!(
        run.stdout.starts_with(
            "retire candidate hopeless (2 curator calls): the enriched entry still fails the gate"
        ),
        "{}",
        run.snapshot()
    );
    // The request, then the retry naming what is missing and why, both as
    // the documented schema says.
    let sent = requests(&log);
    assert_eq!(sent.len(), 2);
    let request_schema = schema("curator-request.schema.json");
    for request in &sent {
        let errors: Vec<String> = request_schema
            .iter_errors(request)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{request:#}: {errors:?}");
    }
    assert_eq!(sent[0]["id"], "hopeless");
    assert_eq!(sent[0]["attempt"], 1);
    assert_eq!(sent[0]["quarantine_reason"], "missing_scope");
    assert_eq!(sent[0]["verify"][0], "file_modified:tests/**");
    assert!(sent[0].get("missing").is_none());
    assert_eq!(sent[1]["attempt"], 2);
    assert_eq!(sent[1]["missing"], serde_json::json!(["applies_to_agents"]));
    assert!(
        sent[1]["refused"]
            .as_str()
            .expect("refused")
            .contains("still fails the gate")
    );
    let table = toml_table(&env.read(&q("hopeless")));
    assert_eq!(table["retire_candidate"].as_bool(), Some(true));
    assert_eq!(table["harden_attempts"].as_integer(), Some(2));
    let failed = of_kind(&env, "harden_failed");
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0]["calls"], 2);
    assert_eq!(failed[0]["retire_candidate"], true);

    // Flagged: not sent again, and said so.
    let run = env.swarm(&["harden"]);
    run.success();
    assert!(
        run.stdout
            .starts_with("retire candidate hopeless: flagged before"),
        "{}",
        run.snapshot()
    );
    assert_eq!(requests(&log).len(), 2);
    // The reply was not written: the entry is as it was but for the record.
    assert!(table.get("rationale").is_none());

    // A person fixes it by hand after all: promoted, the record left out.
    let text = env
        .read(&q("hopeless"))
        .replace("verify = [", "applies_to_tools = [\"bash\"]\nverify = [");
    env.write(&q("hopeless"), text);
    let run = env.swarm(&["harden"]);
    run.success();
    assert!(
        run.stdout.starts_with("promoted hopeless by hand"),
        "{}",
        run.snapshot()
    );
    let promoted = toml_table(&env.read(&d("hopeless")));
    for key in [
        "harden_reason",
        "harden_attempts",
        "retire_candidate",
        "quarantine_reason",
    ] {
        assert!(promoted.get(key).is_none(), "{key}");
    }
    env.swarm(&["validate"]).success();
}

#[test]
fn a_curator_that_hangs_is_stopped_at_its_time_limit_and_the_entry_kept() {
    let env = with_quarantined(&["slow"]);
    curator(&env, "exec sleep 60");
    env.git(&["config", "swarm.curatorTimeout", "1"]);
    let start = std::time::Instant::now();
    let (code, report) = harden_json(&env, &[]);
    assert!(start.elapsed().as_secs() < 20, "took {:?}", start.elapsed());
    assert_eq!(code, 0);
    let e = entry(&report, "slow");
    assert_eq!(e["outcome"], "kept", "{report:#}");
    // A hang is the curator's trouble: no retry, no flag.
    assert_eq!(e["calls"], 1);
    let table = toml_table(&env.read(&q("slow")));
    assert_eq!(
        table["harden_reason"].as_str(),
        Some("the curator did not answer within 1s (git config swarm.curatorTimeout)")
    );
    assert_eq!(table["harden_attempts"].as_integer(), Some(1));
    assert!(table.get("retire_candidate").is_none());
    let failed = of_kind(&env, "harden_failed");
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0]["retire_candidate"], false);

    // A curator that fails is the same: kept, what it said recorded.
    curator(&env, "echo 'no API key' >&2\nexit 3");
    let run = env.swarm(&["harden"]);
    run.success();
    assert!(
        run.stdout
            .contains("kept slow (1 curator call): the curator exited with 3: no API key"),
        "{}",
        run.snapshot()
    );
    let table = toml_table(&env.read(&q("slow")));
    assert_eq!(table["harden_attempts"].as_integer(), Some(2));
}

#[test]
fn the_daily_quota_is_kept_and_a_damaged_ledger_never_raises_it() {
    let env = with_quarantined(&["one", "three", "two"]);
    let good = r#"{"applies_to_agents": ["coder"]}"#;
    let log = logging_curator(&env, good);
    env.git(&["config", "swarm.curatorQuota", "1"]);
    let (code, report) = harden_json(&env, &[]);
    assert_eq!(code, 0);
    assert_eq!(entry(&report, "one")["outcome"], "promoted");
    for id in ["three", "two"] {
        let e = entry(&report, id);
        assert_eq!(e["outcome"], "skipped");
        assert_eq!(
            e["reason"],
            "the daily curator quota (1 call) is used up; kept for tomorrow"
        );
        assert!(
            !env.read(&q(id)).contains("harden_"),
            "not the entry's fault"
        );
    }
    assert_eq!(report["quota"], serde_json::json!({"limit": 1, "used": 1}));
    assert_eq!(requests(&log).len(), 1);

    // The same day: nothing more.
    let before = tracked_files(&env);
    let run = env.swarm(&["harden"]);
    run.success();
    assert_eq!(tracked_files(&env), before);
    assert!(
        run.stderr.contains("Curator calls today: 1 of 1"),
        "{}",
        run.snapshot()
    );

    // The next day, a damaged ledger line counts as a call of that day.
    let ledger = env.path(".git/swarm/local/curator-calls.jsonl");
    std::fs::write(
        &ledger,
        "{\"ts\":\"2026-11-22T10:00:00Z\",\"entry\":\"one\"}\nnot a call\n",
    )
    .expect("write ledger");
    let next_day = [("GIT_SWARM_NOW", "2026-11-23T09:00:00Z")];
    let run = env.swarm_with(&["harden"], &next_day, None);
    run.success();
    assert!(
        run.stderr
            .contains(".git/swarm/local/curator-calls.jsonl:2: error: not a curator call"),
        "{}",
        run.snapshot()
    );
    assert!(
        run.stdout
            .contains("skipped three: the daily curator quota"),
        "{}",
        run.snapshot()
    );
    assert_eq!(requests(&log).len(), 1);
    // Yesterday's call was dropped from the ledger, the damaged line kept.
    assert_eq!(
        std::fs::read_to_string(&ledger).expect("ledger"),
        "not a call\n"
    );

    // With the line removed, the day's call is made.
    std::fs::remove_file(&ledger).expect("rm ledger");
    let run = env.swarm_with(&["harden"], &next_day, None);
    run.success();
    assert!(
        run.stdout.contains("promoted three by the curator"),
        "{}",
        run.snapshot()
    );
    assert!(
        run.stdout.contains("skipped two: the daily curator quota"),
        "{}",
        run.snapshot()
    );
}

#[test]
fn max_bounds_the_entries_sent_to_the_curator() {
    let env = with_quarantined(&["a1", "a2", "a3"]);
    let log = logging_curator(&env, r#"{"applies_to_tools": ["bash"]}"#);
    let (code, report) = harden_json(&env, &["--max", "2"]);
    assert_eq!(code, 0);
    assert_eq!(entry(&report, "a1")["outcome"], "promoted");
    assert_eq!(entry(&report, "a2")["outcome"], "promoted");
    let a3 = entry(&report, "a3");
    assert_eq!(a3["outcome"], "skipped");
    assert_eq!(
        a3["reason"],
        "over --max 2 entries sent to the curator in one run"
    );
    assert_eq!(requests(&log).len(), 2);
    assert!(env.exists(&q("a3")));
    env.swarm(&["validate"]).success();
}

#[test]
fn a_curators_tool_predicate_does_not_run_before_trust() {
    let env = with_quarantined(&["guarded"]);
    let reply = r#"{"applies_to_agents": ["coder"], "enforcement": "enforce", "paths": ["src/**"], "verify": ["file_modified:tests/**", "tool:false"], "quarantine_reason": "echoed back", "attempt": 1}"#;
    logging_curator(&env, reply);
    let (code, report) = harden_json(&env, &[]);
    assert_eq!(code, 0);
    let e = entry(&report, "guarded");
    assert_eq!(e["outcome"], "promoted", "{report:#}");
    assert_eq!(e["by"], "curator");
    assert_eq!(e["untrusted_tools"], serde_json::json!(["tool:false"]));
    let promoted = toml_table(&env.read(&d("guarded")));
    assert_eq!(promoted["enforcement"].as_str(), Some("enforce"));
    // The entry's own fields are kept where the reply is silent.
    assert_eq!(
        promoted["lesson"].as_str(),
        Some("Run the test suite before handing back guarded")
    );
    assert!(promoted.get("quarantine_reason").is_none());
    env.swarm(&["validate"]).success();
    let promoted_events = of_kind(&env, "promoted");
    assert_eq!(promoted_events[0]["by"], "curator");

    // A change the directive applies to, and a test change so that only
    // the tool predicate could fail.
    env.write("src/lib.rs", "fn main() {}\n");
    env.write("tests/t.rs", "#[test] fn t() {}\n");
    let check = env.swarm(&["check", "--worktree"]);
    check.success();
    assert!(
        check.stderr.contains("tool predicates were skipped"),
        "{}",
        check.snapshot()
    );
    env.swarm(&["trust"]).success();
    let check = env.swarm(&["check", "--worktree"]);
    check.code(1);
}

#[test]
fn a_curator_from_the_repository_or_a_relative_path_never_runs() {
    let env = with_quarantined(&["entry-x"]);
    let marker = env.tmp.path().join("ran");
    let script = format!("#!/bin/sh\ntouch '{}'\necho '{{}}'\n", marker.display());
    env.write("tools/curator.sh", &script);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(
            env.path("tools/curator.sh"),
            std::fs::Permissions::from_mode(0o755),
        )
        .expect("chmod");
    }
    let before = tracked_files(&env);
    for value in [
        "tools/curator.sh".to_owned(),
        env.path("tools/curator.sh").to_string_lossy().into_owned(),
    ] {
        env.git(&["config", "swarm.curator", &value]);
        let run = env.swarm(&["harden"]);
        run.success();
        assert!(
            run.stderr.contains("warning: the curator cannot run"),
            "{}",
            run.snapshot()
        );
        assert!(
            run.stdout
                .contains("skipped entry-x: the curator cannot run")
        );
        assert!(!marker.exists(), "{value} ran");
        assert_eq!(tracked_files(&env), before);
        // A program that never ran is no call against the quota.
        assert!(!env.exists(".git/swarm/local/curator-calls.jsonl"));
    }
    // Unbalanced quotes are a usage error that names the key.
    env.git(&["config", "swarm.curator", "curate 'oops"]);
    let run = env.swarm(&["harden"]);
    run.code(2);
    assert!(run.stderr.contains("swarm.curator"), "{}", run.snapshot());
}

#[test]
fn a_reply_that_changes_the_id_or_breaks_the_format_is_refused() {
    let env = with_quarantined(&["keep-id"]);
    let log = logging_curator(
        &env,
        r#"{"id": "other-id", "applies_to_agents": ["coder"]}"#,
    );
    let run = env.swarm(&["harden"]);
    run.success();
    assert!(run.stdout.contains("changes the id"), "{}", run.snapshot());
    assert!(!env.exists(&d("other-id")) && !env.exists(&d("keep-id")));
    assert_eq!(requests(&log).len(), 2);

    let reply_schema = schema("curator-reply.schema.json");
    assert!(!reply_schema.is_valid(&serde_json::json!({"applies_to_agent": ["coder"]})));
    assert!(
        reply_schema.is_valid(&serde_json::json!({"applies_to_agents": ["coder"], "attempt": 2}))
    );
    let env = with_quarantined(&["typed"]);
    logging_curator(&env, r#"{"applies_to_agent": ["coder"]}"#);
    let run = env.swarm(&["harden"]);
    run.success();
    assert!(
        run.stdout
            .contains("is not a directive: unknown field `applies_to_agent`"),
        "{}",
        run.snapshot()
    );
}

#[test]
fn a_curator_named_without_a_path_is_found_on_path() {
    let env = with_quarantined(&["by-name"]);
    let bin = env.tmp.path().join("bin");
    std::fs::create_dir_all(&bin).expect("mkdir");
    let log = env.tmp.path().join("requests.jsonl");
    let script = bin.join("my-curator");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\ncat > '{}'\necho '{{\"applies_to_agents\": [\"coder\"], \"source\": \"'\"$1\"'\"}}'\n",
            log.display()
        ),
    )
    .expect("write");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    env.git(&["config", "swarm.curator", "my-curator 'curated by a test'"]);
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let run = env.swarm_with(&["harden"], &[("PATH", &path)], None);
    run.success();
    assert!(
        run.stdout
            .starts_with("promoted by-name by the curator (1 curator call)"),
        "{}",
        run.snapshot()
    );
    let promoted = toml_table(&env.read(&d("by-name")));
    assert_eq!(promoted["source"].as_str(), Some("curated by a test"));
    assert_eq!(requests(&log)[0]["id"], "by-name");
}

#[test]
fn a_quarantine_file_that_does_not_parse_is_reported_and_left_alone() {
    let env = with_quarantined(&["fine-entry"]);
    env.write(".swarm/quarantine/bad\u{1b}[31mname.toml", "lesson = \n");
    let before = tracked_files(&env);
    let run = env.swarm(&["harden"]);
    run.success();
    assert!(
        !run.stdout.contains('\u{1b}') && !run.stderr.contains('\u{1b}'),
        "{}",
        run.snapshot()
    );
    assert!(
        run.stdout
            .contains("unreadable bad\\u{1b}[31mname: TOML syntax"),
        "{}",
        run.snapshot()
    );
    // Reported with its place, as validate does.
    assert!(run.stderr.contains(".toml:1:"), "{}", run.snapshot());
    assert!(
        run.stdout.contains("skipped fine-entry"),
        "{}",
        run.snapshot()
    );
    assert_eq!(tracked_files(&env), before);
}

#[test]
fn a_file_named_with_toml_twice_keeps_its_own_id() {
    let env = with_quarantined(&["twice"]);
    std::fs::rename(
        env.path(&q("twice")),
        env.path(".swarm/quarantine/twice.toml.toml"),
    )
    .expect("rename");
    let (code, report) = harden_json(&env, &[]);
    assert_eq!(code, 0);
    let entries = report["entries"].as_array().expect("entries");
    assert_eq!(entries.len(), 1, "{report:#}");
    // The file says `id = "twice"`, its name `twice.toml`: a mismatch, left alone.
    assert_eq!(entries[0]["id"], "twice.toml", "{report:#}");
    assert_eq!(entries[0]["outcome"], "unreadable", "{report:#}");
    assert!(env.exists(".swarm/quarantine/twice.toml.toml"));
    assert!(!env.exists(&d("twice")));
}

/// The entry `id` of `env`'s quarantine given a scope: it passes the gate.
fn fix_by_hand(env: &TestEnv, id: &str) -> String {
    let text = env
        .read(&q(id))
        .replace("verify = [", "applies_to_agents = [\"coder\"]\nverify = [");
    env.write(&q(id), &text);
    text
}

#[test]
fn a_promotion_whose_event_cannot_be_appended_keeps_the_quarantine_file() {
    let env = with_quarantined(&["held"]);
    fix_by_hand(&env, "held");
    let config = env
        .read(".swarm/config.toml")
        .replace("lock_timeout_ms = 10000", "lock_timeout_ms = 200");
    env.write(".swarm/config.toml", &config);
    let holder = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(env.path(common::PENDING_NOV))
        .expect("open the pending month file");
    holder.lock().expect("hold the log's lock");
    let run = env.swarm(&["harden"]);
    run.code(3);
    assert!(
        run.stderr.contains("waiting for the lock"),
        "{}",
        run.snapshot()
    );
    // The directive is written but not recorded: the quarantine file stays,
    // so the next run can tell and record it.
    assert!(env.exists(&d("held")));
    assert!(env.exists(&q("held")), "{}", run.snapshot());
    assert!(of_kind(&env, "promoted").is_empty());

    holder.unlock().expect("unlock");
    let run = env.swarm(&["harden"]);
    run.success();
    assert!(
        run.stdout.starts_with("repaired held:"),
        "{}",
        run.snapshot()
    );
    assert!(!env.exists(&q("held")));
    let promoted = of_kind(&env, "promoted");
    assert_eq!(promoted.len(), 1);
    assert_eq!(promoted[0]["by"], "repair");
    assert_eq!(promoted[0]["directive"], "held");
    env.swarm(&["validate"]).success();
}

#[test]
fn a_promotion_cut_short_after_its_event_is_not_recorded_twice() {
    let env = with_quarantined(&["recorded"]);
    let fixed = fix_by_hand(&env, "recorded");
    env.swarm(&["harden"]).success();
    assert_eq!(of_kind(&env, "promoted").len(), 1);
    // What a run cut short after the event, before the removal, leaves.
    env.write(&q("recorded"), &fixed);
    let (code, report) = harden_json(&env, &[]);
    assert_eq!(code, 0);
    let e = entry(&report, "recorded");
    assert_eq!(e["outcome"], "repaired", "{report:#}");
    assert!(
        e["reason"]
            .as_str()
            .expect("reason")
            .contains("written and recorded"),
        "{report:#}"
    );
    assert!(!env.exists(&q("recorded")));
    let promoted = of_kind(&env, "promoted");
    assert_eq!(promoted.len(), 1, "{promoted:#?}");
    assert_eq!(promoted[0]["by"], "hand");

    // Quarantined again later (a new life of the id): a repair then is recorded.
    std::fs::remove_file(env.path(&d("recorded"))).expect("rm");
    quarantine(&env, "recorded");
    let fixed = fix_by_hand(&env, "recorded");
    let directive: String = fixed
        .lines()
        .filter(|l| !l.starts_with("quarantine_"))
        .map(|l| format!("{l}\n"))
        .collect();
    env.write(&d("recorded"), directive);
    env.swarm(&["harden"]).success();
    let promoted = of_kind(&env, "promoted");
    assert_eq!(promoted.len(), 2, "{promoted:#?}");
    assert_eq!(promoted[1]["by"], "repair");
}

#[test]
fn a_second_run_refuses_at_once_naming_the_first() {
    let env = with_quarantined(&["busy-one"]);
    let started = env.tmp.path().join("started");
    curator(
        &env,
        &format!(
            "cat > /dev/null\ntouch '{}'\nsleep 3\necho '{{\"applies_to_agents\": [\"coder\"]}}'",
            started.display()
        ),
    );
    let mut first = env
        .command(common::bin(), &env.root)
        .args(["harden"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start the first run");
    let wait = std::time::Instant::now();
    while !started.exists() {
        assert!(wait.elapsed().as_secs() < 30, "the curator never started");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let before = tracked_files(&env);
    let start = std::time::Instant::now();
    let run = env.swarm(&["harden"]);
    assert!(
        start.elapsed() < std::time::Duration::from_millis(1500),
        "took {:?}",
        start.elapsed()
    );
    run.code(3);
    assert!(run.stdout.is_empty(), "{}", run.snapshot());
    assert!(
        run.stderr.contains(&format!(
            "error: another `git swarm harden` is running (pid {})",
            first.id()
        )),
        "{}",
        run.snapshot()
    );
    assert!(
        run.stderr
            .contains("hint: wait for it to finish, then run `git swarm harden` again"),
        "{}",
        run.snapshot()
    );
    assert!(
        !run.stderr.contains("lock_timeout_ms"),
        "{}",
        run.snapshot()
    );
    assert_eq!(
        tracked_files(&env),
        before,
        "the second run changed nothing"
    );

    assert!(first.wait().expect("first run").success());
    assert!(env.exists(&d("busy-one")));
    // Once it ended, a run goes ahead.
    env.swarm(&["harden"]).success();
}

#[cfg(unix)]
#[test]
fn a_linked_quarantine_is_said_to_be_unread_not_empty() {
    let env = with_quarantined(&["behind-link"]);
    let elsewhere = env.tmp.path().join("elsewhere");
    std::fs::rename(env.path(".swarm/quarantine"), &elsewhere).expect("move");
    std::os::unix::fs::symlink(&elsewhere, env.path(".swarm/quarantine")).expect("symlink");
    for format in ["text", "json"] {
        let run = env.swarm(&["harden", "--format", format]);
        run.code(2);
        assert!(run.stdout.is_empty(), "{}", run.snapshot());
        assert!(
            run.stderr.contains(
                "error: $TMP/repo/.swarm/quarantine is a symbolic link, not a folder of its own: git-swarm does not read or write through it"
            ),
            "{}",
            run.snapshot()
        );
        assert!(run.stderr.contains("hint: replace it with a real folder"));
    }
    assert!(elsewhere.join("behind-link.toml").exists());
    assert!(!env.exists(&d("behind-link")));
}
