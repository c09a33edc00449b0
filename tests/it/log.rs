//! `git swarm log`: events folded (de-duplicated by id, ordered by (ts, id))
//! across month files, the filters, JSON, and malformed lines reported while
//! the rest still prints.

use crate::common;

use common::TestEnv;
use serde_json::Value;

/// The November file, written out of order, with a line repeated (as a
/// union merge or a cherry-pick leaves it), two events at the same instant,
/// one event about two directives and one with a non-UTC offset.
const NOVEMBER: &str = r#"{"id":"ev-05","ts":"2026-11-20T08:00:00.000Z","kind":"check","directive":"alpha","result":"pass"}
{"id":"ev-02","ts":"2026-11-02T09:00:00.000Z","kind":"shown","actor":{"role":"coder"},"directive":"alpha"}
{"id":"ev-04","ts":"2026-11-15T09:00:00.000Z","kind":"verdict","directives":["alpha","beta"],"verdict":"VERIFIED"}
{"id":"ev-03b","ts":"2026-11-10T00:00:00.000Z","kind":"shown","directive":"beta"}
{"id":"ev-02","ts":"2026-11-02T09:00:00.000Z","kind":"shown","actor":{"role":"coder"},"directive":"alpha"}
{"id":"ev-03a","ts":"2026-11-10T00:00:00.000Z","kind":"ack","directive":"beta"}
{"id":"ev-06","ts":"2026-11-21T11:00:00.000+01:00","kind":"check","directive":"beta","result":"fail"}
"#;

/// The October file: the oldest event, and a copy of a November one.
const OCTOBER: &str = r#"{"id":"ev-01","ts":"2026-10-30T23:00:00.000Z","kind":"added","directive":"alpha","path":".swarm/directives/alpha.toml"}
{"id":"ev-05","ts":"2026-11-20T08:00:00.000Z","kind":"check","directive":"alpha","result":"pass"}
"#;

fn store() -> TestEnv {
    let env = TestEnv::initialised();
    env.write(".swarm/events/2026-11.jsonl", NOVEMBER);
    env.write(".swarm/events/2026-10.jsonl", OCTOBER);
    env
}

/// The event ids `log --format json ARGS` prints, in order.
fn logged_ids(env: &TestEnv, args: &[&str]) -> Vec<String> {
    let mut all = vec!["log", "--format", "json"];
    all.extend_from_slice(args);
    let run = env.swarm(&all);
    run.success();
    let v: Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}):\n{}", run.snapshot()));
    v.as_array()
        .expect("an array")
        .iter()
        .map(|e| e["id"].as_str().expect("id").to_owned())
        .collect()
}

#[test]
fn log_orders_by_time_then_id_and_drops_duplicates() {
    let env = store();
    let run = env.swarm(&["log"]);
    run.success();
    insta::assert_snapshot!(run.snapshot(), @r#"
    [exit 0]
    --- stdout
    2026-10-30T23:00:00.000Z  added        alpha                    ev-01  path=.swarm/directives/alpha.toml
    2026-11-02T09:00:00.000Z  shown        alpha                    ev-02  role=coder
    2026-11-10T00:00:00.000Z  ack          beta                     ev-03a
    2026-11-10T00:00:00.000Z  shown        beta                     ev-03b
    2026-11-15T09:00:00.000Z  verdict      -                        ev-04  directives=["alpha","beta"]  verdict=VERIFIED
    2026-11-20T08:00:00.000Z  check        alpha                    ev-05  result=pass
    2026-11-21T11:00:00.000+01:00  check        beta                     ev-06  result=fail
    "#);
    assert_eq!(
        logged_ids(&env, &[]),
        [
            "ev-01", "ev-02", "ev-03a", "ev-03b", "ev-04", "ev-05", "ev-06"
        ]
    );

    // The order of lines and files does not matter: reversed, same log.
    let reversed = |s: &str| {
        s.lines()
            .rev()
            .map(|l| format!("{l}\n"))
            .collect::<String>()
    };
    env.write(".swarm/events/2026-11.jsonl", reversed(NOVEMBER));
    env.write(".swarm/events/2026-10.jsonl", reversed(OCTOBER));
    assert_eq!(env.swarm(&["log"]).stdout, run.stdout);
}

#[test]
fn log_filters_by_kind() {
    let env = store();
    assert_eq!(logged_ids(&env, &["--kind", "check"]), ["ev-05", "ev-06"]);
    assert_eq!(
        logged_ids(&env, &["--kind", "shown,ack"]),
        ["ev-02", "ev-03a", "ev-03b"]
    );
    assert_eq!(
        logged_ids(&env, &["--kind", "shown", "--kind", "added"]),
        ["ev-01", "ev-02", "ev-03b"]
    );
    let run = env.swarm(&["log", "--kind", "nothing_like_this"]);
    run.success();
    assert_eq!(run.stdout, "");
}

/// A kind git-swarm does not know and the log does not hold is likely a
/// typo: a warning with the likeliest kind, still exit 0 (another tool's
/// kinds are legitimate). A kind the log holds, known or not, is quiet.
#[test]
fn log_warns_of_a_mistyped_kind() {
    let env = store();
    let run = env.swarm(&["log", "--kind", "ackk"]);
    run.success();
    assert_eq!(run.stdout, "");
    assert!(
        run.stderr.contains(
            "warning: no event in the log is of kind `ackk`, and git-swarm knows no such kind"
        ) && run.stderr.contains("hint: did you mean `ack`?"),
        "{}",
        run.snapshot()
    );
    env.write(
        ".swarm/events/2026-12.jsonl",
        "{\"id\":\"ev-07\",\"ts\":\"2026-12-01T00:00:00.000Z\",\"kind\":\"deploy\"}\n",
    );
    for kinds in ["ack", "deploy"] {
        let run = env.swarm(&["log", "--kind", kinds]);
        run.success();
        assert_eq!(run.stderr, "", "{kinds}");
    }
}

#[test]
fn log_filters_by_since() {
    let env = store();
    // An RFC 3339 time: at or after it.
    assert_eq!(
        logged_ids(&env, &["--since", "2026-11-15T09:00:00Z"]),
        ["ev-04", "ev-05", "ev-06"]
    );
    assert_eq!(
        logged_ids(&env, &["--since", "2026-11-15T10:00:00+01:00"]),
        ["ev-04", "ev-05", "ev-06"]
    );
    // A date: from its start, UTC.
    assert_eq!(
        logged_ids(&env, &["--since", "2026-11-10"]),
        ["ev-03a", "ev-03b", "ev-04", "ev-05", "ev-06"]
    );
    // An age, counted back from GIT_SWARM_NOW (2026-11-22T10:00:00Z).
    assert_eq!(logged_ids(&env, &["--since", "7d"]), ["ev-05", "ev-06"]);
    assert_eq!(logged_ids(&env, &["--since", "1w"]), ["ev-05", "ev-06"]);
    assert_eq!(logged_ids(&env, &["--since", "24h"]), ["ev-06"]);
    assert_eq!(logged_ids(&env, &["--since", "30m"]), Vec::<String>::new());
    // The same age against another "now": the bound is inclusive.
    let run = env.swarm_with(
        &["log", "--since", "7d", "--format", "json"],
        &[("GIT_SWARM_NOW", "2026-11-17T00:00:00Z")],
        None,
    );
    run.success();
    let v: Value = serde_json::from_str(&run.stdout).expect("JSON");
    let ids: Vec<&str> = v
        .as_array()
        .expect("array")
        .iter()
        .filter_map(|e| e["id"].as_str())
        .collect();
    assert_eq!(ids, ["ev-03a", "ev-03b", "ev-04", "ev-05", "ev-06"]);

    for bad in ["yesterday", "7", "d", "-3d", "2026-13-01"] {
        let flag = format!("--since={bad}");
        let run = env.swarm(&["log", &flag]);
        run.code(2);
        assert!(
            run.stderr.starts_with(&format!(
                "error: --since `{bad}` is not a time, a date or an age\n"
            )),
            "{}",
            run.snapshot()
        );
        assert!(run.stderr.contains("hint: use 2026-11-22T10:00:00Z"));
        assert_eq!(run.stdout, "");
    }
}

#[test]
fn log_filters_by_directive_and_count() {
    let env = store();
    // `directive` and `directives` both name a directive.
    assert_eq!(
        logged_ids(&env, &["--directive", "alpha"]),
        ["ev-01", "ev-02", "ev-04", "ev-05"]
    );
    assert_eq!(
        logged_ids(&env, &["--directive", "beta"]),
        ["ev-03a", "ev-03b", "ev-04", "ev-06"]
    );
    assert_eq!(
        logged_ids(&env, &["--directive", "gamma"]),
        Vec::<String>::new()
    );
    // -n keeps the last N that match, still oldest first.
    assert_eq!(logged_ids(&env, &["-n", "2"]), ["ev-05", "ev-06"]);
    assert_eq!(
        logged_ids(&env, &["--max-count", "3", "--directive", "alpha"]),
        ["ev-02", "ev-04", "ev-05"]
    );
    assert_eq!(logged_ids(&env, &["-n", "100"]).len(), 7);
    assert_eq!(logged_ids(&env, &["-n", "0"]), Vec::<String>::new());
    // Filters combine.
    assert_eq!(
        logged_ids(
            &env,
            &[
                "--kind",
                "check",
                "--directive",
                "beta",
                "--since",
                "2026-11-01"
            ]
        ),
        ["ev-06"]
    );
}

#[test]
fn log_format_json_keeps_every_field() {
    let env = store();
    let run = env.swarm(&["log", "--format", "json", "--directive", "alpha", "-n", "3"]);
    run.success();
    assert_eq!(run.stderr, "");
    let v: Value = serde_json::from_str(&run.stdout).expect("JSON");
    assert_eq!(
        v,
        serde_json::json!([
            {"id":"ev-02","ts":"2026-11-02T09:00:00.000Z","kind":"shown","actor":{"role":"coder"},"directive":"alpha"},
            {"id":"ev-04","ts":"2026-11-15T09:00:00.000Z","kind":"verdict","directives":["alpha","beta"],"verdict":"VERIFIED"},
            {"id":"ev-05","ts":"2026-11-20T08:00:00.000Z","kind":"check","directive":"alpha","result":"pass"},
        ])
    );
    let run = env.swarm(&["log", "--format", "json", "--kind", "none"]);
    run.success();
    assert_eq!(run.stdout.trim(), "[]");
}

#[test]
fn log_reports_malformed_lines_and_prints_the_rest() {
    let env = store();
    let mut november = NOVEMBER.to_owned();
    november.insert_str(
        NOVEMBER.find("{\"id\":\"ev-04\"").expect("ev-04"),
        "this is not json\n{\"id\":\"ev-x\",\"kind\":\"shown\"}\n",
    );
    november.push_str("{\"id\":\"ev-07\",\"ts\":\"2026-11-2");
    env.write(".swarm/events/2026-11.jsonl", november);
    let run = env.swarm(&["log"]);
    run.success();
    insta::assert_snapshot!(run.snapshot(), @r#"
    [exit 0]
    --- stdout
    2026-10-30T23:00:00.000Z  added        alpha                    ev-01  path=.swarm/directives/alpha.toml
    2026-11-02T09:00:00.000Z  shown        alpha                    ev-02  role=coder
    2026-11-10T00:00:00.000Z  ack          beta                     ev-03a
    2026-11-10T00:00:00.000Z  shown        beta                     ev-03b
    2026-11-15T09:00:00.000Z  verdict      -                        ev-04  directives=["alpha","beta"]  verdict=VERIFIED
    2026-11-20T08:00:00.000Z  check        alpha                    ev-05  result=pass
    2026-11-21T11:00:00.000+01:00  check        beta                     ev-06  result=fail
    --- stderr
    .swarm/events/2026-11.jsonl:3:2: error: malformed event: expected ident
      hint: each line must be one JSON object with `id`, `ts` and `kind`
    .swarm/events/2026-11.jsonl:4:28: error: malformed event: missing field `ts`
      hint: each line must be one JSON object with `id`, `ts` and `kind`
    .swarm/events/2026-11.jsonl:10:1: error: last line is incomplete (29 bytes with no newline)
      hint: a write was cut short (crash or full disk); `git swarm doctor --fix` saves it aside and truncates it
    "#);
    // JSON on stdout stays parseable; the problems go to stderr.
    let run = env.swarm(&["log", "--format", "json"]);
    run.success();
    let v: Value = serde_json::from_str(&run.stdout).expect("JSON");
    assert_eq!(v.as_array().map(Vec::len), Some(7));
    assert_eq!(
        run.stderr
            .lines()
            .filter(|l| l.contains(": error: "))
            .count(),
        3
    );
}

#[test]
fn log_shows_recorded_events_and_nothing_without_events() {
    let env = TestEnv::initialised();
    let run = env.swarm(&["log"]);
    run.success();
    assert_eq!(run.snapshot(), "[exit 0]\n");

    env.swarm(&[
        "record",
        "check",
        "--directive",
        "no-private-keys",
        "--role",
        "coder",
        "--field",
        "result=pass",
        "--field",
        "files=3",
    ])
    .success();
    // Events at the same millisecond from two processes order by their random
    // id bits, so the second one is recorded a second later.
    env.swarm_with(
        &["record", "phase", "--field", "phase=review"],
        &[("GIT_SWARM_NOW", "2026-11-22T10:00:01Z")],
        None,
    )
    .success();
    let run = env.swarm(&["log"]);
    run.success();
    insta::assert_snapshot!(run.snapshot(), @r"
    [exit 0]
    --- stdout
    2026-11-22T10:00:00.000Z  check        no-private-keys          [ULID]  role=coder  files=3  result=pass
    2026-11-22T10:00:01.000Z  phase        -                        [ULID]  phase=review
    ");
}

/// A folder named like an event file is not one: every reader leaves it
/// out (it stopped `log` and `doctor`), and `validate` says so.
#[test]
fn a_folder_named_like_an_event_file_is_left_out_by_every_reader() {
    let env = common::TestEnv::initialised();
    env.swarm(&[
        "record",
        "note",
        "--custom",
        "--directive",
        "no-private-keys",
    ])
    .success();
    std::fs::create_dir_all(env.path(".swarm/events/2026-12.jsonl")).expect("mkdir");
    for args in [
        &["log"][..],
        &["doctor"],
        &["status"],
        &["list"],
        &["index", "refresh"],
    ] {
        let run = env.swarm(args);
        assert_eq!(run.code, 0, "{args:?}:\n{}", run.snapshot());
    }
    assert!(env.swarm(&["log"]).stdout.contains("note"));
    let validate = env.swarm(&["validate"]);
    validate.success();
    assert!(
        validate
            .stdout
            .contains("`2026-12.jsonl` is a directory and is ignored"),
        "{}",
        validate.snapshot()
    );
}
