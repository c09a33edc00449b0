//! `git swarm add`: minting directives from flags and from TOML files, the
//! actionability gate and quarantine, and the refusal to overwrite anything.

use crate::common;

use common::TestEnv;
use serde_json::Value;

/// Every file under `.swarm/` (relative paths, sorted) with its bytes.
fn swarm_files(env: &TestEnv) -> Vec<(String, Vec<u8>)> {
    fn walk(dir: &std::path::Path, root: &std::path::Path, out: &mut Vec<(String, Vec<u8>)>) {
        for entry in std::fs::read_dir(dir).expect("read dir") {
            let path = entry.expect("dir entry").path();
            if path.is_dir() {
                walk(&path, root, out);
            } else {
                let rel = path.strip_prefix(root).expect("under root");
                out.push((
                    rel.to_string_lossy().into_owned(),
                    std::fs::read(&path).expect("read file"),
                ));
            }
        }
    }
    let mut out = Vec::new();
    walk(&env.path(".swarm"), &env.root, &mut out);
    out.sort();
    out
}

/// The event lines parsed as JSON.
fn events(env: &TestEnv) -> Vec<Value> {
    env.event_lines()
        .iter()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad event line {l}: {e}")))
        .collect()
}

#[test]
fn add_from_flags_writes_the_directive_and_an_added_event() {
    let env = TestEnv::initialised();
    let run = env.swarm(&[
        "add",
        "--lesson",
        "Never call unwrap() in library code; return a typed error",
        "--rationale",
        "A panic in a hook aborts the user's commit with a backtrace.",
        "--category",
        "architecture",
        "--priority",
        "high",
        "--enforcement",
        "enforce",
        "--confidence",
        "0.9",
        "--agents",
        "coder,reviewer",
        "--tools",
        "cargo",
        "--paths",
        "src/**/*.rs",
        "--trigger",
        "unwrap",
        "--forbid",
        "calling unwrap() on a value that input can reach",
        "--require",
        "return Result with a thiserror enum",
        "--verification-check",
        "no new unwrap() outside tests in the diff",
        "--verify",
        r"grep:\.unwrap\(\):src/**/*.rs",
        "--verify",
        "file_not_modified:Cargo.lock",
        "--tag",
        "errors",
        "--source",
        "PR #12",
    ]);
    run.success();
    insta::assert_snapshot!(run.snapshot(), @r"
    [exit 0]
    --- stdout
    Added directive `never-call-unwrap-in-library-code-return-a-typed` at .swarm/directives/never-call-unwrap-in-library-code-return-a-typed.toml
    ");

    let file = ".swarm/directives/never-call-unwrap-in-library-code-return-a-typed.toml";
    insta::assert_snapshot!(env.read(file), @r#"
    id = "never-call-unwrap-in-library-code-return-a-typed"
    lesson = "Never call unwrap() in library code; return a typed error"
    rationale = "A panic in a hook aborts the user's commit with a backtrace."
    category = "architecture"
    priority = "high"
    enforcement = "enforce"
    status = "active"
    confidence = 0.9
    applies_to_agents = ["coder", "reviewer"]
    applies_to_tools = ["cargo"]
    paths = ["src/**/*.rs"]
    triggers = ["unwrap"]
    forbidden_actions = ["calling unwrap() on a value that input can reach"]
    required_actions = ["return Result with a thiserror enum"]
    verification_checks = ["no new unwrap() outside tests in the diff"]
    verify = ['grep:\.unwrap\(\):src/**/*.rs', "file_not_modified:Cargo.lock"]
    tags = ["errors"]
    created_at = 2026-11-22T10:00:00Z
    source = "PR #12"
    "#);
    assert!(!env.exists(".swarm/quarantine/never-call-unwrap-in-library-code-return-a-typed.toml"));

    let events = events(&env);
    assert_eq!(events.len(), 1, "{events:#?}");
    let e = &events[0];
    assert_eq!(e["kind"], "added");
    assert_eq!(
        e["directive"],
        "never-call-unwrap-in-library-code-return-a-typed"
    );
    assert_eq!(e["path"], file);
    assert_eq!(e["ts"], "2026-11-22T10:00:00.000Z");
    assert_eq!(e["id"].as_str().map(str::len), Some(26), "{e}");
    // Recorded in the pending log, not the work tree.
    assert!(env.exists(common::PENDING_NOV));
    assert!(!env.exists(".swarm/events/2026-11.jsonl"));

    // What add writes, validate accepts.
    env.swarm(&["validate"]).success();
}

#[test]
fn add_with_defaults_writes_the_defaults_out() {
    let env = TestEnv::initialised();
    env.swarm(&[
        "add",
        "--id",
        "tests-first",
        "--lesson",
        "Write the failing test before the fix",
        "--tools",
        "cargo",
        "--require",
        "a test that fails without the fix",
    ])
    .success();
    insta::assert_snapshot!(env.read(".swarm/directives/tests-first.toml"), @r#"
    id = "tests-first"
    lesson = "Write the failing test before the fix"
    category = "other"
    priority = "medium"
    enforcement = "warn"
    status = "active"
    confidence = 0.5
    applies_to_tools = ["cargo"]
    required_actions = ["a test that fails without the fix"]
    created_at = 2026-11-22T10:00:00Z
    "#);
}

/// One way to fail the gate: the flags, the reason, and what the hint must name.
struct GateCase {
    name: &'static str,
    args: &'static [&'static str],
    id: &'static str,
    reason: &'static str,
    hints: &'static [&'static str],
}

const GATE_CASES: &[GateCase] = &[
    GateCase {
        name: "missing_predicate",
        args: &[
            "--lesson",
            "Keep functions shorter than a screen",
            "--agents",
            "coder",
        ],
        id: "keep-functions-shorter-than-a-screen",
        reason: "missing_predicate",
        hints: &["--verify", "`verify`", "--forbid", "--require"],
    },
    GateCase {
        name: "missing_scope",
        args: &[
            "--lesson",
            "Keep functions shorter than a screen",
            "--verify",
            "file_modified:src/**",
        ],
        id: "keep-functions-shorter-than-a-screen",
        reason: "missing_scope",
        hints: &["`applies_to_agents`", "--agents", "--tools"],
    },
    GateCase {
        name: "missing_predicate_and_scope",
        args: &["--lesson", "Keep functions shorter than a screen"],
        id: "keep-functions-shorter-than-a-screen",
        reason: "missing_predicate_and_scope",
        hints: &["--verify", "--agents"],
    },
    GateCase {
        name: "invalid_predicate",
        args: &[
            "--lesson",
            "Keep functions shorter than a screen",
            "--agents",
            "coder",
            "--verify",
            "grep:(",
        ],
        id: "keep-functions-shorter-than-a-screen",
        reason: "invalid_predicate",
        hints: &["regex"],
    },
    GateCase {
        name: "invalid_shape",
        args: &[
            "--lesson",
            "Be careful",
            "--agents",
            "coder",
            "--verify",
            "file_modified:src/**",
        ],
        id: "be-careful",
        reason: "invalid_shape",
        hints: &["`rationale`"],
    },
];

#[test]
fn each_gate_failure_is_quarantined_with_its_reason_and_a_hint() {
    for case in GATE_CASES {
        let env = TestEnv::initialised();
        let mut args = vec!["add"];
        args.extend_from_slice(case.args);
        let run = env.swarm(&args);
        run.code(1);
        common::assert_no_panic(&run);
        let rel = format!(".swarm/quarantine/{}.toml", case.id);
        assert!(env.exists(&rel), "{}: {rel} missing", case.name);
        assert!(
            !env.exists(&format!(".swarm/directives/{}.toml", case.id)),
            "{}: a quarantined entry reached directives/",
            case.name
        );
        let text = env.read(&rel);
        assert!(
            text.starts_with(&format!("quarantine_reason = \"{}\"\n", case.reason)),
            "{}: {text}",
            case.name
        );
        for hint in case.hints {
            assert!(
                run.stderr.contains(hint),
                "{}: the hint does not name {hint}:\n{}",
                case.name,
                run.snapshot()
            );
        }
        assert!(
            run.stderr.contains(&format!("hint: fix {rel}")),
            "{}",
            run.snapshot()
        );

        let events = events(&env);
        assert_eq!(events.len(), 1, "{}: {events:#?}", case.name);
        assert_eq!(events[0]["kind"], "quarantined");
        assert_eq!(events[0]["directive"], case.id);
        assert_eq!(events[0]["reason"], case.reason);
        assert_eq!(events[0]["path"], rel.as_str());

        insta::assert_snapshot!(
            format!("gate_{}", case.name),
            format!("{}\n--- {rel}\n{text}", run.snapshot())
        );

        // A quarantined entry is a valid store entry, listed as such.
        env.swarm(&["validate"]).success();
        let listed = env.swarm(&["list", "--quarantined"]);
        listed.success();
        assert!(
            listed
                .stdout
                .lines()
                .any(|l| l.starts_with(case.id) && l.contains(case.reason)),
            "{}",
            listed.snapshot()
        );
    }
}

#[test]
fn derived_ids_are_made_unique_across_directives_and_quarantine() {
    let env = TestEnv::initialised();
    let lesson = "Pin every tool version in CI";
    let good = ["--agents", "coder", "--require", "a pinned version"];

    let mut args = vec!["add", "--lesson", lesson];
    args.extend_from_slice(&good);
    env.swarm(&args).success();
    // The same lesson again, without a predicate: quarantined under the next free id.
    env.swarm(&["add", "--lesson", lesson, "--agents", "coder"])
        .code(1);
    let third = env.swarm(&args);
    third.success();
    insta::assert_snapshot!(third.snapshot(), @r"
    [exit 0]
    --- stdout
    Added directive `pin-every-tool-version-in-ci-3` at .swarm/directives/pin-every-tool-version-in-ci-3.toml
    ");

    assert!(env.exists(".swarm/directives/pin-every-tool-version-in-ci.toml"));
    assert!(env.exists(".swarm/quarantine/pin-every-tool-version-in-ci-2.toml"));
    assert!(env.exists(".swarm/directives/pin-every-tool-version-in-ci-3.toml"));
    assert!(
        env.read(".swarm/quarantine/pin-every-tool-version-in-ci-2.toml")
            .contains("id = \"pin-every-tool-version-in-ci-2\"\n")
    );
    let kinds: Vec<(String, String)> = events(&env)
        .iter()
        .map(|e| (e["kind"].to_string(), e["directive"].to_string()))
        .collect();
    assert_eq!(
        kinds,
        [
            (
                "\"added\"".into(),
                "\"pin-every-tool-version-in-ci\"".into()
            ),
            (
                "\"quarantined\"".into(),
                "\"pin-every-tool-version-in-ci-2\"".into()
            ),
            (
                "\"added\"".into(),
                "\"pin-every-tool-version-in-ci-3\"".into()
            ),
        ]
    );
    env.swarm(&["validate"]).success();
}

#[test]
fn a_lesson_without_ascii_words_gets_a_hashed_id() {
    let env = TestEnv::initialised();
    let run = env.swarm(&[
        "add",
        "--lesson",
        "テストを書く前にコードを書かないでください",
        "--agents",
        "coder",
        "--require",
        "a test first",
    ]);
    run.success();
    let id = run
        .stdout
        .split('`')
        .nth(1)
        .expect("the id in backticks")
        .to_owned();
    assert!(id.starts_with("d-") && id.len() == 10, "{}", run.snapshot());
    assert!(env.exists(&format!(".swarm/directives/{id}.toml")));
    env.swarm(&["validate"]).success();
}

#[test]
fn an_existing_id_is_refused_and_left_untouched() {
    let env = TestEnv::initialised();
    env.swarm(&[
        "add", "--id", "held", "--lesson", "Short", "--agents", "coder",
    ])
    .code(1);
    let before = swarm_files(&env);
    let events_before = env.event_lines();

    // In directives/ (a template directive), with an entry that would pass the gate.
    let run = env.swarm(&[
        "add",
        "--id",
        "no-private-keys",
        "--lesson",
        "Never print secrets into the build log",
        "--agents",
        "coder",
        "--verify",
        "grep:password=:**/*.log",
    ]);
    run.code(2);
    insta::assert_snapshot!(run.snapshot(), @r"
    [exit 2]
    --- stderr
    error: directive `no-private-keys` already exists at .swarm/directives/no-private-keys.toml
    hint: choose another `--id`, or edit the existing file and commit it
    ");
    assert_eq!(swarm_files(&env), before, "a refused add changed .swarm/");

    // In quarantine/, with an entry that passes the gate.
    let run = env.swarm(&[
        "add",
        "--id",
        "held",
        "--lesson",
        "Never print secrets into the build log",
        "--agents",
        "coder",
        "--forbid",
        "echo $TOKEN",
    ]);
    run.code(2);
    insta::assert_snapshot!(run.snapshot(), @r"
    [exit 2]
    --- stderr
    error: directive `held` already exists at .swarm/quarantine/held.toml
    hint: choose another `--id`, or edit the existing file and commit it
    ");

    // With an entry that would be quarantined: refused too, not quarantined over the top.
    let run = env.swarm(&["add", "--id", "no-private-keys", "--lesson", "Short"]);
    run.code(2);
    assert!(!env.exists(".swarm/quarantine/no-private-keys.toml"));

    assert_eq!(swarm_files(&env), before, "a refused add changed .swarm/");
    assert_eq!(
        env.event_lines(),
        events_before,
        "a refused add logged an event"
    );
}

#[test]
fn an_id_that_is_not_a_safe_file_stem_is_refused_before_anything_is_written() {
    let env = TestEnv::initialised();
    let before = swarm_files(&env);
    let outside = env.tmp.path().join("etc.toml");
    for id in [
        "../etc",
        "../../etc",
        "../../../etc",
        "a/b",
        "Upper",
        "x",
        "-dash",
        ".hidden",
    ] {
        let flag = format!("--id={id}");
        let run = env.swarm(&[
            "add",
            &flag,
            "--lesson",
            "Run the whole test suite before a push",
            "--agents",
            "coder",
            "--require",
            "tests pass",
        ]);
        run.code(2);
        common::assert_no_panic(&run);
        assert!(
            run.stderr
                .starts_with(&format!("error: `{id}` is not a valid directive id\n")),
            "{}",
            run.snapshot()
        );
        assert!(run.stderr.contains("hint: ids are"), "{}", run.snapshot());
        assert_eq!(swarm_files(&env), before, "`--id {id}` wrote something");
        assert!(!outside.exists());
        // Where `directives/<id>.toml` or `quarantine/<id>.toml` would land.
        assert!(!env.exists(".swarm/etc.toml"));
        assert!(!env.exists("etc.toml"));
    }
    let run = env.swarm(&[
        "add",
        "--id",
        "../etc",
        "--lesson",
        "Run the whole test suite before a push",
    ]);
    insta::assert_snapshot!(run.snapshot(), @r"
    [exit 2]
    --- stderr
    error: `../etc` is not a valid directive id
    hint: ids are 2–80 characters of a-z, 0-9, `.`, `_` and `-`, starting with a letter or digit
    ");
}

#[test]
fn add_from_a_toml_file() {
    let env = TestEnv::initialised();
    env.write(
        "lesson.toml",
        r#"id = "lockfile-review"
lesson = "Review every lockfile change line by line"
category = "tooling"
priority = "high"
applies_to_agents = ["reviewer"]
paths = ["Cargo.lock"]
verification_checks = ["each changed crate is named in the PR description"]
verify = ["file_modified:Cargo.lock"]
source = "review of PR #40"
"#,
    );
    let run = env.swarm(&["add", "--from", "lesson.toml"]);
    run.success();
    insta::assert_snapshot!(run.snapshot(), @r"
    [exit 0]
    --- stdout
    Added directive `lockfile-review` at .swarm/directives/lockfile-review.toml
    ");
    insta::assert_snapshot!(env.read(".swarm/directives/lockfile-review.toml"), @r#"
    id = "lockfile-review"
    lesson = "Review every lockfile change line by line"
    category = "tooling"
    priority = "high"
    enforcement = "warn"
    status = "active"
    confidence = 0.5
    applies_to_agents = ["reviewer"]
    paths = ["Cargo.lock"]
    verification_checks = ["each changed crate is named in the PR description"]
    verify = ["file_modified:Cargo.lock"]
    created_at = 2026-11-22T10:00:00Z
    source = "review of PR #40"
    "#);
    let events = events(&env);
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["kind"], "added");
    assert_eq!(events[0]["directive"], "lockfile-review");

    // The same file again: its id is taken.
    let again = env.swarm(&["add", "--from", "lesson.toml"]);
    again.code(2);
    assert!(
        again
            .stderr
            .starts_with("error: directive `lockfile-review` already exists"),
        "{}",
        again.snapshot()
    );
    // `--id` overrides the file's id.
    env.swarm(&["add", "--from", "lesson.toml", "--id", "lockfile-review-2"])
        .success();
    assert!(
        env.read(".swarm/directives/lockfile-review-2.toml")
            .starts_with("id = \"lockfile-review-2\"\n")
    );
}

#[test]
fn add_from_a_file_without_an_id_derives_one() {
    let env = TestEnv::initialised();
    env.write(
        "lesson.toml",
        "lesson = \"Regenerate the lockfile after editing the manifest\"\napplies_to_tools = [\"cargo\"]\nrequired_actions = [\"cargo update -p <crate>\"]\n",
    );
    let run = env.swarm(&["add", "--from", "lesson.toml"]);
    run.success();
    insta::assert_snapshot!(run.snapshot(), @r"
    [exit 0]
    --- stdout
    Added directive `regenerate-the-lockfile-after-editing-the` at .swarm/directives/regenerate-the-lockfile-after-editing-the.toml
    ");
    assert!(
        env.read(".swarm/directives/regenerate-the-lockfile-after-editing-the.toml")
            .starts_with("id = \"regenerate-the-lockfile-after-editing-the\"\n")
    );
    // A file that fails the gate is quarantined like flags are.
    env.write(
        "vague.toml",
        "lesson = \"Be more careful with the lockfile\"\n",
    );
    let run = env.swarm(&["add", "--from", "vague.toml"]);
    run.code(1);
    assert!(
        env.read(".swarm/quarantine/be-more-careful-with-the-lockfile.toml")
            .starts_with("quarantine_reason = \"missing_predicate_and_scope\"\n")
    );
}

#[test]
fn add_from_a_file_with_type_errors_lists_every_problem_and_writes_nothing() {
    let env = TestEnv::initialised();
    env.write(
        "bad.toml",
        r#"id = 3
lesson = 5
priority = "urgent"
colour = "red"
verify = [1, "grep:x"]
applies_to_agents = "coder"
confidence = "high"
created_at = "yesterday"
"#,
    );
    let before = swarm_files(&env);
    let run = env.swarm(&["add", "--from", "bad.toml"]);
    run.code(2);
    common::assert_no_panic(&run);
    insta::assert_snapshot!(run.snapshot());
    for line in 1..=8 {
        assert!(
            run.stderr.contains(&format!("bad.toml:{line}:")),
            "line {line} not reported:\n{}",
            run.snapshot()
        );
    }
    assert_eq!(swarm_files(&env), before, "a rejected file changed .swarm/");

    // A syntax error, and an id that is not a file stem, are input errors too.
    env.write("syntax.toml", "lesson = \"unterminated\nid = \"x\"\n");
    let run = env.swarm(&["add", "--from", "syntax.toml"]);
    run.code(2);
    assert!(
        run.stderr.starts_with("syntax.toml:1:"),
        "{}",
        run.snapshot()
    );
    env.write(
        "escape.toml",
        "id = \"../etc\"\nlesson = \"Run the whole test suite before a push\"\napplies_to_agents = [\"coder\"]\nrequired_actions = [\"tests pass\"]\n",
    );
    let run = env.swarm(&["add", "--from", "escape.toml"]);
    run.code(2);
    insta::assert_snapshot!(run.snapshot(), @r"
    [exit 2]
    --- stderr
    escape.toml:1:6: error: id `../etc` is not a valid id
      hint: ids are 2–80 characters of a-z, 0-9, `.`, `_` and `-`, starting with a letter or digit
    ");
    let run = env.swarm(&["add", "--from", "missing.toml"]);
    run.code(2);
    assert!(
        run.stderr.starts_with("missing.toml: error: cannot read"),
        "{}",
        run.snapshot()
    );
    assert_eq!(swarm_files(&env), before, "a rejected file changed .swarm/");
}

#[test]
fn add_from_stdin() {
    let env = TestEnv::initialised();
    let toml = "id = \"from-stdin\"\nlesson = \"Keep the lockfile in step with the manifest\"\napplies_to_tools = [\"cargo\"]\nrequired_actions = [\"run cargo update\"]\n";
    let run = env.swarm_with(&["add", "--from", "-"], &[], Some(toml.as_bytes()));
    run.success();
    insta::assert_snapshot!(run.snapshot(), @r"
    [exit 0]
    --- stdout
    Added directive `from-stdin` at .swarm/directives/from-stdin.toml
    ");
    assert!(
        env.read(".swarm/directives/from-stdin.toml")
            .contains("required_actions = [\"run cargo update\"]\n")
    );

    let run = env.swarm_with(
        &["add", "--from", "-"],
        &[],
        Some(b"lesson = [\"not a string\"]\n"),
    );
    run.code(2);
    insta::assert_snapshot!(run.snapshot(), @r"
    [exit 2]
    --- stderr
    -:1:10: error: `lesson` must be a string, found array
      hint: write `lesson` as a string
    ");
}

#[test]
fn add_format_json() {
    let env = TestEnv::initialised();
    let run = env.swarm(&[
        "add",
        "--format",
        "json",
        "--lesson",
        "Run clippy with warnings denied",
        "--tools",
        "cargo",
        "--verify",
        "tool:cargo clippy --all-targets -- -D warnings",
    ]);
    run.success();
    assert_eq!(run.stderr, "");
    let v: Value = serde_json::from_str(&run.stdout).expect("stdout is JSON");
    assert_eq!(
        v,
        serde_json::json!({
            "status": "added",
            "id": "run-clippy-with-warnings-denied",
            "path": ".swarm/directives/run-clippy-with-warnings-denied.toml",
        })
    );

    let run = env.swarm(&[
        "add",
        "--format",
        "json",
        "--lesson",
        "Run clippy with warnings denied",
        "--verify",
        "grep:(",
    ]);
    run.code(1);
    assert_eq!(run.stderr, "", "JSON mode keeps hints inside the JSON");
    let v: Value = serde_json::from_str(&run.stdout).expect("stdout is JSON");
    insta::assert_snapshot!(serde_json::to_string_pretty(&v).expect("json"), @r#"
    {
      "id": "run-clippy-with-warnings-denied-2",
      "issues": [
        {
          "field": "verify",
          "hint": "the regex syntax is Rust's `regex` crate (no look-around or back-references)",
          "index": 0,
          "message": "`grep` regex `(` does not parse: error: unclosed group"
        },
        {
          "field": "applies_to_agents",
          "hint": "add at least one of `applies_to_agents` or `applies_to_tools` (flags --agents, --tools)",
          "index": null,
          "message": "nothing says whom it is for"
        }
      ],
      "path": ".swarm/quarantine/run-clippy-with-warnings-denied-2.toml",
      "reason": "invalid_predicate",
      "status": "quarantined"
    }
    "#);
}

#[test]
fn add_needs_an_initialised_store() {
    let env = TestEnv::new();
    let run = env.swarm(&[
        "add",
        "--lesson",
        "Run the whole test suite before a push",
        "--agents",
        "coder",
        "--require",
        "tests pass",
    ]);
    run.code(2);
    insta::assert_snapshot!(run.snapshot(), @r"
    [exit 2]
    --- stderr
    error: no .swarm/ in $TMP/repo
    hint: run `git swarm init` first
    ");
    assert!(!env.exists(".swarm"));
}

/// Both routes the quarantine hint gives work: deleting the entry and adding
/// again with the missing fields (the hint used to offer the add alone, which
/// failed: the quarantined file holds the id), and moving a fixed entry into
/// directives/.
#[test]
fn the_quarantine_hint_gives_routes_that_work() {
    let env = TestEnv::initialised();
    let lesson = "Keep every public function documented with an example";
    let first = env.swarm(&["add", "--id", "documented", "--lesson", lesson]);
    first.code(1);
    assert!(
        first
            .stderr
            .contains("or delete it and run `git swarm add` again"),
        "{}",
        first.snapshot()
    );
    std::fs::remove_file(env.path(".swarm/quarantine/documented.toml")).expect("delete");
    let again = env.swarm(&[
        "add",
        "--id",
        "documented",
        "--lesson",
        lesson,
        "--agents",
        "coder",
        "--require",
        "show a runnable example in each doc comment",
    ]);
    again.success();
    assert!(env.exists(".swarm/directives/documented.toml"));

    env.swarm(&["add", "--id", "second", "--lesson", lesson])
        .code(1);
    let text = std::fs::read_to_string(env.path(".swarm/quarantine/second.toml")).expect("read");
    let fixed: String = text
        .lines()
        .filter(|l| !l.starts_with("quarantine_"))
        .map(|l| format!("{l}\n"))
        .collect::<String>()
        + "applies_to_agents = [\"coder\"]\nrequired_actions = [\"show a runnable example in each doc comment\"]\n";
    std::fs::remove_file(env.path(".swarm/quarantine/second.toml")).expect("delete");
    env.write(".swarm/directives/second.toml", &fixed);
    let run = env.swarm(&["validate"]);
    run.success();
    assert!(run.stdout.contains("no problems"), "{}", run.snapshot());
}
