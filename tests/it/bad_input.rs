//! The bad input corpus: every kind of broken file under `.swarm/` makes
//! `validate` exit 2 naming file:line, never panics, and loses nothing else:
//! the good directives still list and the good events still log.

use crate::common;

use common::{Run, TestEnv, directive_toml};

const GOOD_EVENTS: [&str; 2] = [
    r#"{"id":"ev-good-1","ts":"2026-11-01T00:00:00.000Z","kind":"shown","directive":"good-one"}"#,
    r#"{"id":"ev-good-2","ts":"2026-11-02T00:00:00.000Z","kind":"check","directive":"good-two"}"#,
];

/// A store with two good directives and two good events, plus `bad` files.
fn store_with(bad: &[(&str, Vec<u8>)]) -> TestEnv {
    let env = TestEnv::initialised();
    for f in common::template_directive_ids() {
        std::fs::remove_file(env.path(&format!(".swarm/directives/{f}.toml"))).expect("rm");
    }
    env.write(
        ".swarm/directives/good-one.toml",
        directive_toml("good-one", "The first directive that is fine"),
    );
    env.write(
        ".swarm/directives/good-two.toml",
        directive_toml("good-two", "The second directive that is fine"),
    );
    let mut events = Vec::new();
    events.extend_from_slice(GOOD_EVENTS[0].as_bytes());
    events.push(b'\n');
    env.write(".swarm/events/2026-11.jsonl", &events);
    for (rel, bytes) in bad {
        if rel.ends_with(".jsonl") && env.exists(rel) {
            let mut all = std::fs::read(env.path(rel)).expect("read");
            all.extend_from_slice(bytes);
            env.write(rel, all);
        } else {
            env.write(rel, bytes);
        }
    }
    // The second good event comes after the bad lines.
    let mut all = std::fs::read(env.path(".swarm/events/2026-11.jsonl")).expect("read");
    if !all.ends_with(b"\n") {
        all.push(b'\n');
    }
    all.extend_from_slice(GOOD_EVENTS[1].as_bytes());
    all.push(b'\n');
    env.write(".swarm/events/2026-11.jsonl", all);
    env
}

/// Runs validate, list, show and log on the store and checks the contract:
/// validate exits 2 and names `expected` (a `path:line` prefix), nothing
/// panics, the good directives list and show, the good events log.
#[track_caller]
fn check_corpus_entry(env: &TestEnv, expected: &str) -> Run {
    let validate = env.swarm(&["validate"]);
    common::assert_no_panic(&validate);
    validate.code(2);
    let located = regex::Regex::new(r"^\.swarm/\S+:\d+(:\d+)?: error: ").expect("regex");
    let errors: Vec<&str> = validate
        .stdout
        .lines()
        .filter(|l| l.contains(": error: "))
        .collect();
    assert!(!errors.is_empty(), "{}", validate.snapshot());
    for line in &errors {
        assert!(located.is_match(line), "no file:line in {line}");
        assert!(
            line.len() < 1000,
            "an error line echoes the input: {line:.200}…"
        );
    }
    assert!(
        errors.iter().any(|l| l.starts_with(expected)),
        "`{expected}` not reported:\n{}",
        validate.snapshot()
    );
    let json = env.swarm(&["validate", "--format", "json"]);
    common::assert_no_panic(&json);
    json.code(2);
    let v: serde_json::Value = serde_json::from_str(&json.stdout).expect("validate JSON");
    assert_eq!(v["ok"], false);

    let list = env.swarm(&["list"]);
    common::assert_no_panic(&list);
    list.success();
    for id in ["good-one", "good-two"] {
        assert!(
            list.stdout.lines().any(|l| l.starts_with(id)),
            "{id} lost:\n{}",
            list.snapshot()
        );
        let show = env.swarm(&["show", id]);
        common::assert_no_panic(&show);
        show.success();
    }
    let log = env.swarm(&["log", "--format", "json"]);
    common::assert_no_panic(&log);
    log.success();
    let events: serde_json::Value = serde_json::from_str(&log.stdout).expect("log JSON");
    let ids: Vec<&str> = events
        .as_array()
        .expect("array")
        .iter()
        .filter_map(|e| e["id"].as_str())
        .collect();
    assert!(
        ids.contains(&"ev-good-1") && ids.contains(&"ev-good-2"),
        "good events lost: {ids:?}"
    );
    for args in [&["doctor"][..], &["index", "status"], &["index", "rebuild"]] {
        common::assert_no_panic(&env.swarm(args));
    }
    validate
}

#[test]
fn malformed_toml() {
    let env = store_with(&[(
        ".swarm/directives/broken.toml",
        b"id = \"broken\"\nlesson = \"Run the tests\napplies_to_agents = [\"coder\"\n[[[\n"
            .to_vec(),
    )]);
    check_corpus_entry(&env, ".swarm/directives/broken.toml:2:");
}

#[test]
fn wrong_types() {
    let env = store_with(&[(
        ".swarm/directives/types.toml",
        b"id = [\"types\"]\nlesson = 42\npriority = true\nconfidence = \"0.5\"\napplies_to_agents = \"coder\"\nverify = [{ kind = \"grep\" }]\ncreated_at = 2026\nstatus = 1.5\n".to_vec(),
    )]);
    let validate = check_corpus_entry(&env, ".swarm/directives/types.toml:1:6:");
    for line in 1..=8 {
        assert!(
            validate
                .stdout
                .contains(&format!(".swarm/directives/types.toml:{line}:")),
            "line {line} not reported:\n{}",
            validate.stdout
        );
    }
    let show = env.swarm(&["show", "types"]);
    common::assert_no_panic(&show);
    show.code(2);
    assert!(
        show.stderr
            .contains("\n.swarm/directives/types.toml:1:6: error: `id` must be a string"),
        "{}",
        show.snapshot()
    );
    assert_eq!(
        validate.stdout.matches("types.toml:").count(),
        8,
        "one problem per bad line:\n{}",
        validate.stdout
    );
}

#[test]
fn a_lesson_of_ten_thousand_characters() {
    let env = store_with(&[(
        ".swarm/directives/long-lesson.toml",
        directive_toml("long-lesson", &"z".repeat(10_000)).into_bytes(),
    )]);
    let validate = check_corpus_entry(
        &env,
        ".swarm/directives/long-lesson.toml:2:10: error: lesson is 10000 characters, outside 15–280",
    );
    assert!(validate.stdout.contains("1 error,"), "{}", validate.stdout);

    // Through `add`, the same lesson is quarantined, not written to directives/.
    let lesson = "y".repeat(10_000);
    let run = env.swarm(&[
        "add",
        "--id",
        "long-from-flags",
        "--lesson",
        &lesson,
        "--agents",
        "coder",
        "--require",
        "x",
    ]);
    common::assert_no_panic(&run);
    run.code(1);
    assert!(
        env.read(".swarm/quarantine/long-from-flags.toml")
            .starts_with("quarantine_reason = \"invalid_shape\"\n")
    );
    assert!(!env.exists(".swarm/directives/long-from-flags.toml"));
}

#[test]
fn a_directive_file_of_a_hundred_kilobytes() {
    let mut big = directive_toml("big", "A directive with a huge rationale").into_bytes();
    big.extend_from_slice(b"rationale = \"");
    big.extend(std::iter::repeat_n(b'r', 100 * 1024));
    big.extend_from_slice(b"\"\n");
    let env = store_with(&[(".swarm/directives/big.toml", big.clone())]);
    let validate = check_corpus_entry(
        &env,
        ".swarm/directives/big.toml:1:1: error: file is over the 65536-byte limit",
    );
    insta::assert_snapshot!(validate.snapshot(), @r"
    [exit 2]
    --- stdout
    .swarm/directives/big.toml:1:1: error: file is over the 65536-byte limit
      hint: a directive file is a small TOML file; replace this one
    5 files checked (3 directives, 0 quarantined, 2 events): 1 error, 0 warnings.
    ");
    let show = env.swarm(&["show", "big"]);
    common::assert_no_panic(&show);
    show.code(2);

    // `add --from` refuses it too, from a file and from stdin.
    env.write("big.toml", &big);
    let run = env.swarm(&["add", "--from", "big.toml"]);
    common::assert_no_panic(&run);
    run.code(2);
    assert!(!env.exists(".swarm/directives/big.toml.tmp"));
    let run = env.swarm_with(&["add", "--from", "-"], &[], Some(&big));
    common::assert_no_panic(&run);
    run.code(2);
    assert!(
        run.stderr
            .starts_with("<stdin>: error: input is over the 65536-byte limit"),
        "{}",
        run.snapshot()
    );
}

#[test]
fn invalid_utf8_in_a_directive_file() {
    let env = store_with(&[(
        ".swarm/directives/latin1.toml",
        b"id = \"latin1\"\nlesson = \"Caf\xe9 r\xe8gles: run the tests\"\napplies_to_agents = [\"coder\"]\n".to_vec(),
    )]);
    check_corpus_entry(
        &env,
        ".swarm/directives/latin1.toml:2:14: error: file is not valid UTF-8",
    );
    env.write(
        "latin1.toml",
        b"lesson = \"Caf\xe9 r\xe8gles: run the tests\"\n",
    );
    let run = env.swarm(&["add", "--from", "latin1.toml"]);
    common::assert_no_panic(&run);
    run.code(2);
    insta::assert_snapshot!(run.snapshot(), @r"
    [exit 2]
    --- stderr
    latin1.toml:1:14: error: file is not valid UTF-8
      hint: save the file as UTF-8
    ");
}

#[test]
fn invalid_utf8_in_an_event_line() {
    let mut line = br#"{"id":"ev-bad","ts":"2026-11-01T12:00:00.000Z","kind":"shown","directive":"good-one","note":"caf"#.to_vec();
    line.extend_from_slice(b"\xe9\"}\n");
    let env = store_with(&[(".swarm/events/2026-11.jsonl", line)]);
    check_corpus_entry(
        &env,
        ".swarm/events/2026-11.jsonl:2:97: error: line is not valid UTF-8",
    );
    let log = env.swarm(&["log"]);
    assert!(
        log.stderr
            .starts_with(".swarm/events/2026-11.jsonl:2:97: error: line is not valid UTF-8"),
        "{}",
        log.snapshot()
    );
    assert!(!log.stdout.contains("ev-bad"));
    // The fold behind list and show skips the line the readers skip.
    let show = env.swarm(&["show", "good-one", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&show.stdout).expect("JSON");
    assert_eq!(v["events"], serde_json::json!({ "shown": 1 }));
}

#[test]
fn an_event_line_of_ten_megabytes() {
    let mut line =
        br#"{"id":"ev-huge","ts":"2026-11-01T12:00:00.000Z","kind":"shown","blob":""#.to_vec();
    line.extend(std::iter::repeat_n(b'b', 10 * 1024 * 1024));
    line.extend_from_slice(b"\"}\n");
    let env = store_with(&[(".swarm/events/2026-11.jsonl", line)]);
    let validate = check_corpus_entry(
        &env,
        ".swarm/events/2026-11.jsonl:2:1: error: line is 10485833 bytes, over the 65536-byte limit",
    );
    assert!(validate.stdout.len() < 10_000, "the line was echoed");
    let log = env.swarm(&["log"]);
    assert!(log.stdout.len() < 10_000, "the line was printed");
    assert!(!log.stdout.contains("ev-huge"));
    let doctor = env.swarm(&["doctor"]);
    doctor.code(1);
    assert!(
        doctor
            .stdout
            .starts_with(".swarm/events/2026-11.jsonl:2:1: error: line is 10485833 bytes"),
        "{}",
        doctor.snapshot()
    );
    // `record` refuses to write a line over the limit; nothing is appended.
    let before = env.read(".swarm/events/2026-11.jsonl").len();
    let field = format!("blob={}", "c".repeat(70 * 1024));
    let run = env.swarm(&["record", "shown", "--field", &field]);
    common::assert_no_panic(&run);
    run.code(2);
    assert!(
        run.stderr.contains("over events.max_line_bytes (65536)"),
        "{}",
        run.snapshot()
    );
    assert_eq!(env.read(".swarm/events/2026-11.jsonl").len(), before);
}

/// `record` is plumbing, yet what it writes is read by every command:
/// a field with no key, a directive that is no id, a role that is no
/// role and a count of zero are refused, and nothing is appended.
#[test]
fn record_refuses_what_no_event_should_hold() {
    let env = TestEnv::initialised();
    for (args, says) in [
        (
            &["record", "note", "--custom", "--field", "=v"][..],
            "--field `=v` has no usable key",
        ),
        (
            &["record", "note", "--custom", "--field", "a b=v"],
            "has no usable key",
        ),
        (
            &["record", "note", "--custom", "--directive", "Bad ID!"],
            "`Bad ID!` is not a directive id",
        ),
        (
            &["record", "note", "--custom", "--role", "Lead Dev"],
            "`Lead Dev` is not a role name",
        ),
        (&["record", "note", "--custom", "--count", "0"], "--count"),
    ] {
        let run = env.swarm(args);
        common::assert_no_panic(&run);
        run.code(2);
        assert!(run.stderr.contains(says), "{args:?}: {}", run.snapshot());
    }
    assert!(env.event_lines().is_empty(), "{:?}", env.event_lines());
    env.swarm(&[
        "record",
        "note",
        "--custom",
        "--directive",
        "no-private-keys",
        "--field",
        "ticket.id=T-1",
    ])
    .success();
    assert_eq!(env.event_lines().len(), 1);
}

#[test]
fn a_directive_whose_id_climbs_out_of_the_store() {
    let env = store_with(&[(
        ".swarm/directives/x.toml",
        b"id = \"../etc\"\nlesson = \"Run the tests before you commit\"\napplies_to_agents = [\"coder\"]\nverify = [\"file_modified:src/**\"]\n".to_vec(),
    )]);
    let validate = check_corpus_entry(
        &env,
        ".swarm/directives/x.toml:1:6: error: id `../etc` is not a valid id",
    );
    insta::assert_snapshot!(validate.snapshot(), @r"
    [exit 2]
    --- stdout
    .swarm/directives/x.toml:1:6: error: id `../etc` is not a valid id
      hint: ids are 2–80 characters of a-z, 0-9, `.`, `_` and `-`, starting with a letter or digit
    5 files checked (3 directives, 0 quarantined, 2 events): 1 error, 0 warnings.
    ");
    let list = env.swarm(&["list"]);
    assert!(!list.stdout.contains("../etc"), "{}", list.snapshot());
    for id in ["../etc", "x"] {
        let show = env.swarm(&["show", id]);
        common::assert_no_panic(&show);
        show.code(2);
    }
}

#[test]
fn deep_nesting_and_control_bytes() {
    let mut deep =
        b"id = \"deep\"\nlesson = \"Run the tests before you commit\"\nverify = ".to_vec();
    deep.extend(std::iter::repeat_n(b'[', 20_000));
    deep.extend(std::iter::repeat_n(b']', 20_000));
    deep.push(b'\n');
    let mut deep_event =
        br#"{"id":"ev-deep","ts":"2026-11-01T12:00:00.000Z","kind":"shown","x":"#.to_vec();
    deep_event.extend(std::iter::repeat_n(b'[', 20_000));
    deep_event.extend(std::iter::repeat_n(b']', 20_000));
    deep_event.extend_from_slice(b"}\n\0\0\0\n");
    let env = store_with(&[
        (".swarm/directives/deep.toml", deep),
        (
            ".swarm/directives/nul.toml",
            b"id = \"nul\"\nlesson = \"Run the\0 tests before you commit\"\n".to_vec(),
        ),
        (".swarm/events/2026-11.jsonl", deep_event),
    ]);
    let validate = check_corpus_entry(&env, ".swarm/directives/deep.toml:3:");
    for expected in [
        ".swarm/directives/nul.toml:2:",
        ".swarm/events/2026-11.jsonl:2:",
        ".swarm/events/2026-11.jsonl:3:1:",
    ] {
        assert!(
            validate.stdout.lines().any(|l| l.starts_with(expected)),
            "`{expected}` not reported:\n{}",
            validate.stdout
        );
    }
}

#[test]
fn the_whole_corpus_at_once() {
    let mut big = directive_toml("big", "A directive with a huge rationale").into_bytes();
    big.extend_from_slice(b"rationale = \"");
    big.extend(std::iter::repeat_n(b'r', 100 * 1024));
    big.extend_from_slice(b"\"\n");
    let mut events =
        br#"{"id":"ev-bad","ts":"2026-11-01T12:00:00.000Z","kind":"shown","note":"caf"#.to_vec();
    events.extend_from_slice(b"\xe9\"}\n");
    events.extend_from_slice(
        br#"{"id":"ev-huge","ts":"2026-11-01T12:00:00.000Z","kind":"shown","blob":""#,
    );
    events.extend(std::iter::repeat_n(b'b', 10 * 1024 * 1024));
    events.extend_from_slice(b"\"}\nnot json\n");
    let env = store_with(&[
        (
            ".swarm/directives/broken.toml",
            b"id = \"broken\"\nlesson = \"Run the tests\n".to_vec(),
        ),
        (
            ".swarm/directives/types.toml",
            b"id = \"types\"\nlesson = 42\n".to_vec(),
        ),
        (
            ".swarm/directives/long-lesson.toml",
            directive_toml("long-lesson", &"z".repeat(10_000)).into_bytes(),
        ),
        (".swarm/directives/big.toml", big),
        (
            ".swarm/directives/latin1.toml",
            b"id = \"latin1\"\nlesson = \"Caf\xe9\"\n".to_vec(),
        ),
        (
            ".swarm/directives/x.toml",
            b"id = \"../etc\"\nlesson = \"Run the tests before you commit\"\n".to_vec(),
        ),
        (".swarm/events/2026-11.jsonl", events),
    ]);
    let validate = check_corpus_entry(&env, ".swarm/directives/big.toml:1:1:");
    insta::assert_snapshot!(validate.snapshot(), @r#"
    [exit 2]
    --- stdout
    .swarm/directives/big.toml:1:1: error: file is over the 65536-byte limit
      hint: a directive file is a small TOML file; replace this one
    .swarm/directives/broken.toml:2:24: error: TOML syntax: invalid basic string, expected `"`
      hint: fix the TOML syntax; see https://toml.io
    .swarm/directives/latin1.toml:2:14: error: file is not valid UTF-8
      hint: TOML files are UTF-8; re-save the file as UTF-8
    .swarm/directives/long-lesson.toml:2:10: error: lesson is 10000 characters, outside 15–280
      hint: say what to do or not do in one sentence; move the why to `rationale`
    .swarm/directives/types.toml:1:1: error: nothing says what to check
      hint: add at least one of `forbidden_actions`, `required_actions`, `verification_checks` or `verify` (flags --forbid, --require, --verification-check, --verify)
    .swarm/directives/types.toml:1:1: error: nothing says whom it is for
      hint: add at least one of `applies_to_agents` or `applies_to_tools` (flags --agents, --tools)
    .swarm/directives/types.toml:2:10: error: `lesson` must be a string, found integer
      hint: write `lesson` as a string
    .swarm/directives/x.toml:1:1: error: nothing says what to check
      hint: add at least one of `forbidden_actions`, `required_actions`, `verification_checks` or `verify` (flags --forbid, --require, --verification-check, --verify)
    .swarm/directives/x.toml:1:1: error: nothing says whom it is for
      hint: add at least one of `applies_to_agents` or `applies_to_tools` (flags --agents, --tools)
    .swarm/directives/x.toml:1:6: error: id `../etc` is not a valid id
      hint: ids are 2–80 characters of a-z, 0-9, `.`, `_` and `-`, starting with a letter or digit
    .swarm/events/2026-11.jsonl:2:74: error: line is not valid UTF-8
      hint: event lines are UTF-8 JSON; remove or re-encode the line
    .swarm/events/2026-11.jsonl:3:1: error: line is 10485833 bytes, over the 65536-byte limit
      hint: an event line is a few hundred bytes; this one was not written by git-swarm. Remove it
    .swarm/events/2026-11.jsonl:4:2: error: malformed event: expected ident
      hint: each line must be one JSON object with `id`, `ts` and `kind`
    10 files checked (8 directives, 0 quarantined, 2 events): 13 errors, 0 warnings.
    "#);
    let list = env.swarm(&["list"]);
    insta::assert_snapshot!(list.snapshot(), @r"
    [exit 0]
    --- stdout
    ID           PRIORITY  ENFORCEMENT  STATUS   EVENTS  LESSON
    good-one     high      warn         active        1  The first directive that is fine
    good-two     high      warn         active        1  The second directive that is fine
    long-lesson  high      warn         active        0  zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz…
    --- stderr
    warning: 13 problems in .swarm/ (files that do not parse and malformed event lines are left out)
    hint: run `git swarm validate` to see them
    ");
}
