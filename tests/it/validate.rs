//! `git swarm validate`: a clean store passes; a broken one fails with every
//! problem reported at once, each as `path:line:col: error: message` and a
//! hint; `--format json`; `--strict`.

use crate::common;

use common::{Run, TestEnv, directive_toml};
use serde_json::Value;

const GOOD_EVENT_1: &str = r#"{"id":"01KAAAAAAAAAAAAAAAAAAAAAA1","ts":"2026-11-01T00:00:00.000Z","kind":"added","directive":"good"}"#;
const GOOD_EVENT_2: &str = r#"{"id":"01KAAAAAAAAAAAAAAAAAAAAAA2","ts":"2026-11-02T00:00:00.000Z","kind":"shown","directive":"good"}"#;

#[test]
fn a_clean_store_passes() {
    let env = TestEnv::initialised();
    let run = env.swarm(&["validate"]);
    run.success();
    insta::assert_snapshot!(run.snapshot(), @r"
    [exit 0]
    --- stdout
    7 files checked (6 directives, 0 quarantined, 0 events): no problems.
    ");

    // Entries and events written by the commands themselves keep it clean.
    env.swarm(&["add", "--lesson", "Vague but kept for later"])
        .code(1);
    env.swarm(&[
        "add",
        "--lesson",
        "Run the whole test suite before a push",
        "--agents",
        "coder",
        "--require",
        "tests pass",
    ])
    .success();
    env.swarm(&[
        "record",
        "note",
        "--custom",
        "--directive",
        "no-private-keys",
        "--count",
        "2",
    ])
    .success();
    let run = env.swarm(&["validate"]);
    run.success();
    insta::assert_snapshot!(run.snapshot(), @r"
    [exit 0]
    --- stdout
    10 files checked (7 directives, 1 quarantined, 4 events): no problems.
    ");
    let run = env.swarm(&["validate", "--strict"]);
    run.success();
}

#[test]
fn every_predicate_kind_parses_when_valid() {
    let env = TestEnv::initialised();
    env.write(
        ".swarm/directives/all-kinds.toml",
        r#"id = "all-kinds"
lesson = "Every kind of machine check in one place"
applies_to_agents = ["coder"]
verify = [
  "file_modified:src/**",
  "file_modified:{Cargo.toml,package.json}",
  "file_not_modified:Cargo.lock",
  'grep:\.unwrap\(\):src/**/*.rs',
  "grep:TODO",
  "grep:https?://[a-z]+:",
  "grep_tree:-----BEGIN [A-Z ]*PRIVATE KEY-----",
  "grep_tree:dbg!:src/**/*.rs",
  "tool:cargo test --quiet",
  "tool:cargo clippy -- -D warnings 'quoted arg' \"double \\\" quoted\"",
]
"#,
    );
    let run = env.swarm(&["validate", "--strict"]);
    run.success();
    assert!(run.stdout.ends_with("no problems.\n"), "{}", run.snapshot());

    // The same five kinds pass the gate of `add`.
    for (i, predicate) in [
        "file_modified:src/**",
        "file_not_modified:Cargo.lock",
        r"grep:\bpanic!\(:src/**/*.rs",
        "grep_tree:FIXME",
        "tool:cargo fmt --check",
    ]
    .into_iter()
    .enumerate()
    {
        let id = format!("kind-{i}");
        let run = env.swarm(&[
            "add",
            "--id",
            &id,
            "--lesson",
            "A machine check of each predicate kind",
            "--agents",
            "coder",
            "--verify",
            predicate,
        ]);
        run.success();
        assert!(env.exists(&format!(".swarm/directives/{id}.toml")));
    }
    env.swarm(&["validate", "--strict"]).success();
}

/// A store with one of each kind of problem.
fn broken_store() -> TestEnv {
    let env = TestEnv::initialised();
    let d = ".swarm/directives";
    env.write(
        &format!("{d}/good.toml"),
        directive_toml("good", "A good directive among broken ones"),
    );
    env.write(
        &format!("{d}/syntax.toml"),
        "id = \"syntax\"\nlesson = \"an unterminated string\napplies_to_agents = [\"coder\"]\n",
    );
    env.write(
        &format!("{d}/wrong-type.toml"),
        "id = \"wrong-type\"\nlesson = \"Run the tests before you commit\"\npriority = 3\nconfidence = \"sure\"\napplies_to_agents = [\"coder\", 7]\nverify = [\"file_modified:src/**\"]\n",
    );
    env.write(
        &format!("{d}/unknown-key.toml"),
        "id = \"unknown-key\"\nlesson = \"Run the tests before you commit\"\napplies_to_agents = [\"coder\"]\nverify = [\"file_modified:src/**\"]\nverfy = [\"grep:x\"]\n",
    );
    // The word "id" first appears inside the lesson, before the `id` key.
    env.write(
        &format!("{d}/stem.toml"),
        "lesson = \"Avoid global state in the parser\"\nid = \"not-the-stem\"\napplies_to_agents = [\"coder\"]\nverify = [\"file_modified:src/**\"]\n",
    );
    env.write(
        &format!("{d}/twice.toml"),
        directive_toml("twice", "The same id in both folders"),
    );
    env.write(
        ".swarm/quarantine/twice.toml",
        "quarantine_reason = \"missing_scope\"\nid = \"twice\"\nlesson = \"The same id in both folders\"\nverify = [\"file_modified:src/**\"]\n",
    );
    env.write(
        &format!("{d}/too-long.toml"),
        directive_toml("too-long", &"x".repeat(300)),
    );
    env.write(
        &format!("{d}/predicates.toml"),
        r#"id = "predicates"
lesson = "Each predicate kind, broken its own way"
applies_to_agents = ["coder"]
verify = [
  "file_modified:../outside/**",
  "file_not_modified:/etc/passwd",
  "grep:(unclosed:src/**",
  "grep_tree::src/**",
  "tool:/bin/sh -c 'rm -rf /'",
  "tool:cargo 'unclosed",
  "shell:rm -rf /",
  "no kind at all",
]
"#,
    );
    env.write(
        &format!("{d}/no-scope.toml"),
        "id = \"no-scope\"\nlesson = \"Run the tests before you commit\"\nverify = [\"file_modified:src/**\"]\n",
    );
    env.write(
        ".swarm/quarantine/bad-reason.toml",
        "quarantine_reason = \"too_vague\"\nid = \"bad-reason\"\nlesson = \"Run the tests before you commit\"\n",
    );
    env.write(
        ".swarm/events/2026-11.jsonl",
        format!(
            "{GOOD_EVENT_1}\nnot json at all\n{{\"id\":\"01KAAAAAAAAAAAAAAAAAAAAAA3\",\"ts\":\"last tuesday\",\"kind\":\"shown\"}}\n{{\"ts\":\"2026-11-02T00:00:00.000Z\",\"kind\":\"shown\"}}\n{GOOD_EVENT_2}\n{{\"id\":\"01KAAAAAAAA"
        ),
    );
    env
}

#[test]
fn a_broken_store_reports_every_problem_with_its_place() {
    let env = broken_store();
    let run = env.swarm(&["validate"]);
    run.code(2);
    insta::assert_snapshot!(run.snapshot());

    // Every error is `path:line:col: error: message`, followed by a hint.
    let lines: Vec<&str> = run.stdout.lines().collect();
    let summary = lines.last().expect("a summary line");
    let problem = regex::Regex::new(r"^\.swarm/[a-z0-9./_-]+:\d+:\d+: error: \S").expect("regex");
    let mut errors = 0;
    for (i, line) in lines.iter().enumerate() {
        if line.starts_with("  hint: ") || *line == *summary {
            continue;
        }
        assert!(problem.is_match(line), "not path:line:col: error: {line}");
        assert!(
            lines.get(i + 1).is_some_and(|h| h.starts_with("  hint: ")),
            "no hint after {line}"
        );
        errors += 1;
    }
    assert!(
        summary.ends_with(&format!(": {errors} errors, 0 warnings.")),
        "{summary}"
    );

    // Each planted problem is there, at its place.
    for expected in [
        ".swarm/directives/syntax.toml:2:",
        ".swarm/directives/wrong-type.toml:3:12: error: `priority` must be a string",
        ".swarm/directives/wrong-type.toml:4:14: error: `confidence` must be",
        ".swarm/directives/wrong-type.toml:5:31: error: `applies_to_agents[1]` must be a string",
        ".swarm/directives/unknown-key.toml:5:1: error: unknown key `verfy`",
        ".swarm/directives/stem.toml:2:1: error: id `not-the-stem` does not match the file name `stem.toml`",
        ".swarm/quarantine/twice.toml:2:1: error: id `twice` is also used by .swarm/directives/twice.toml",
        ".swarm/directives/too-long.toml:2:10: error: lesson is 300 characters",
        ".swarm/directives/predicates.toml:5:3: error: glob `../outside/**` contains `..`",
        ".swarm/directives/predicates.toml:6:3: error: glob `/etc/passwd` is an absolute path",
        ".swarm/directives/predicates.toml:7:9: error: `grep` regex `(unclosed` does not parse",
        ".swarm/directives/predicates.toml:8:3: error: `grep_tree` predicate has an empty regex",
        ".swarm/directives/predicates.toml:9:3: error: `tool` program `/bin/sh` is a path",
        ".swarm/directives/predicates.toml:10:3: error: `tool` command `cargo 'unclosed` has an unclosed quote",
        ".swarm/directives/predicates.toml:11:3: error: unknown predicate kind `shell`",
        ".swarm/directives/predicates.toml:12:3: error: predicate `no kind at all` has no kind",
        ".swarm/directives/no-scope.toml:1:1: error: nothing says whom it is for",
        ".swarm/quarantine/bad-reason.toml:1:21: error: `quarantine_reason` is `too_vague`",
        ".swarm/events/2026-11.jsonl:2:",
        ".swarm/events/2026-11.jsonl:3:1: error: event time `last tuesday` is not an RFC 3339 time",
        ".swarm/events/2026-11.jsonl:4:",
        ".swarm/events/2026-11.jsonl:6:1: error: last line is incomplete",
    ] {
        assert!(
            run.stdout.lines().any(|l| l.starts_with(expected)),
            "missing `{expected}` in:\n{}",
            run.stdout
        );
    }
    // The good directive and the good event lines have no problem of their own.
    assert!(!run.stdout.contains("good.toml"), "{}", run.stdout);
    assert!(!run.stdout.contains(".jsonl:1:"), "{}", run.stdout);
    assert!(!run.stdout.contains(".jsonl:5:"), "{}", run.stdout);
}

#[test]
fn validate_format_json() {
    let env = broken_store();
    let run = env.swarm(&["validate", "--format", "json"]);
    run.code(2);
    let v: Value = serde_json::from_str(&run.stdout).expect("stdout is JSON");
    assert_eq!(v["ok"], false);
    assert_eq!(v["warnings"], 0);
    assert_eq!(v["events"], 2);
    assert_eq!(v["quarantined"], 2);
    let problems = v["problems"].as_array().expect("problems");
    assert_eq!(v["errors"].as_u64(), Some(problems.len() as u64));
    for p in problems {
        assert_eq!(p["severity"], "error", "{p}");
        assert!(
            p["path"].as_str().is_some_and(|s| s.starts_with(".swarm/")),
            "{p}"
        );
        assert!(p["line"].as_u64().is_some_and(|n| n >= 1), "{p}");
        assert!(p["column"].as_u64().is_some_and(|n| n >= 1), "{p}");
        assert!(p["code"].as_str().is_some_and(|s| !s.is_empty()), "{p}");
        assert!(p["message"].as_str().is_some_and(|s| !s.is_empty()), "{p}");
        assert!(p["hint"].as_str().is_some_and(|s| !s.is_empty()), "{p}");
    }
    // The text and JSON forms report the same problems.
    let text = env.swarm(&["validate"]);
    let from_json: Vec<String> = problems
        .iter()
        .map(|p| {
            format!(
                "{}:{}:{}: error: {}",
                p["path"].as_str().unwrap_or_default(),
                p["line"],
                p["column"],
                p["message"].as_str().unwrap_or_default()
            )
        })
        .collect();
    let from_text: Vec<&str> = text
        .stdout
        .lines()
        .filter(|l| l.starts_with(".swarm/"))
        .collect();
    assert_eq!(from_json, from_text);
    let codes: std::collections::BTreeSet<&str> =
        problems.iter().filter_map(|p| p["code"].as_str()).collect();
    for code in [
        "toml_syntax",
        "bad_type",
        "unknown_key",
        "id_mismatch",
        "duplicate_id",
        "invalid_shape",
        "invalid_predicate",
        "missing_scope",
        "bad_value",
        "bad_event",
        "torn_line",
    ] {
        assert!(codes.contains(code), "no `{code}` in {codes:?}");
    }

    // A clean store in JSON: the template's directives and its config.
    let directives = common::template_directive_ids().len();
    let env = TestEnv::initialised();
    let run = env.swarm(&["validate", "--format", "json"]);
    run.success();
    let v: Value = serde_json::from_str(&run.stdout).expect("stdout is JSON");
    assert_eq!(
        v,
        serde_json::json!({
            "ok": true, "files": directives + 1, "directives": directives, "quarantined": 0, "events": 0,
            "errors": 0, "warnings": 0, "problems": [], "more_problems": [],
        })
    );
}

#[test]
fn warnings_pass_unless_strict() {
    let env = TestEnv::initialised();
    env.write(".swarm/notes.txt", "scratch\n");
    env.write(".swarm/directives/README.md", "what these are\n");
    // An event filed under the wrong month still folds, with a warning.
    env.write(".swarm/events/2026-10.jsonl", format!("{GOOD_EVENT_1}\n"));

    let run = env.swarm(&["validate"]);
    run.success();
    insta::assert_snapshot!(run.snapshot());
    assert!(
        run.stdout.contains(": 0 errors, 3 warnings."),
        "{}",
        run.snapshot()
    );

    let strict = env.swarm(&["validate", "--strict"]);
    strict.code(2);
    assert_eq!(
        strict.stdout, run.stdout,
        "--strict changes the verdict, not the report"
    );

    let json = env.swarm(&["validate", "--strict", "--format", "json"]);
    json.code(2);
    let v: Value = serde_json::from_str(&json.stdout).expect("stdout is JSON");
    assert_eq!(v["ok"], false);
    assert_eq!(v["errors"], 0);
    assert_eq!(v["warnings"], 3);
    let v: Value =
        serde_json::from_str(&env.swarm(&["validate", "--format", "json"]).stdout).expect("JSON");
    assert_eq!(v["ok"], true);
}

#[test]
fn a_broken_config_is_reported_and_validate_needs_a_store() {
    let env = TestEnv::initialised();
    env.write(
        ".swarm/config.toml",
        "[events]\nlock_timeout_ms = \"soon\"\n",
    );
    let run = env.swarm(&["validate"]);
    run.code(2);
    assert!(
        run.stdout.starts_with(
            ".swarm/config.toml:2:19: error: config: `events.lock_timeout_ms`: invalid type"
        ),
        "{}",
        run.snapshot()
    );

    let env = TestEnv::new();
    let run = env.swarm(&["validate"]);
    run.code(2);
    insta::assert_snapshot!(run.snapshot(), @r"
    [exit 2]
    --- stderr
    error: no .swarm/ in $TMP/repo
    hint: run `git swarm init` first
    ");
}

/// Every bad key of config.toml is reported, each where it is set, with
/// the range checks of the keys that do parse — not only the first error.
#[test]
fn every_config_problem_is_reported_at_once() {
    let env = TestEnv::initialised();
    env.write(
        ".swarm/config.toml",
        "colour = \"blue\"\n\n[events]\nfsync = \"sometimes\"\nlock_timeout_ms = \"soon\"\n\n[runner]\ntimeout_secs = 9999\n\n[retrieval]\nmmr_lambda = 0.5\n\n[unknown]\nx = 1\n",
    );
    let (run, errors) = validate_errors(&env);
    assert_eq!(
        errors,
        [
            ".swarm/config.toml:1:1: error: config: `colour`: unknown field `colour`, expected one of `events`, `runner`, `knowledge`, `retrieval`, `patterns`, `handoffs`, `roles`, `agent_types`, `hive`, `promotion`",
            ".swarm/config.toml:4:9: error: config: `events.fsync`: unknown variant `sometimes`, expected `never` or `always`",
            ".swarm/config.toml:5:19: error: config: `events.lock_timeout_ms`: invalid type: string \"soon\", expected u64",
            ".swarm/config.toml:8:16: error: `runner.timeout_secs` is out of range",
            ".swarm/config.toml:13:2: error: config: `unknown`: unknown field `unknown`, expected one of `events`, `runner`, `knowledge`, `retrieval`, `patterns`, `handoffs`, `roles`, `agent_types`, `hive`, `promotion`",
        ],
        "{}",
        run.snapshot()
    );
}

/// A section written as an array was read as its fields in order
/// (`events = ["always", 5, 1024]` set three of them); dotted keys, inline
/// tables and arrays of tables are reported where they are written; a
/// config with thousands of bad keys is reported in time, a few at a time.
#[test]
fn config_sections_must_be_tables_and_positions_follow_the_toml() {
    let env = TestEnv::initialised();
    let errors = |env: &TestEnv, text: &str| -> Vec<String> {
        env.write(".swarm/config.toml", text);
        let run = env.swarm(&["validate"]);
        assert_eq!(run.code, 2, "{text}:\n{}", run.snapshot());
        run.stdout
            .lines()
            .filter(|l| l.contains(": error: "))
            .map(|l| l.trim_start_matches(".swarm/config.toml:").to_owned())
            .collect()
    };
    assert_eq!(
        errors(&env, "events = [\"always\", 5, 1024]\nrunner = []\n"),
        [
            "1:10: error: config: `events`: expected a table of settings (`[events]`)",
            "2:10: error: config: `runner`: expected a table of settings (`[runner]`)",
        ]
    );
    assert_eq!(
        errors(&env, "\n\nevents.fsync = \"x\"\n"),
        ["3:16: error: config: `events.fsync`: unknown variant `x`, expected `never` or `always`"]
    );
    assert_eq!(
        errors(
            &env,
            "\n\nevents = { fsync = \"x\", lock_timeout_ms = 0, bad = 1 }\n"
        ),
        [
            "3:20: error: config: `events.fsync`: unknown variant `x`, expected `never` or `always`",
            "3:43: error: `events.lock_timeout_ms` is out of range",
            "3:46: error: config: `events.bad`: unknown field `bad`, expected one of `fsync`, `lock_timeout_ms`, `max_line_bytes`, `max_file_bytes`",
        ]
    );
    assert_eq!(
        errors(&env, "\n\n[runner]\ntimeout_secs = 601\n\n[[runner.x]]\n"),
        [
            "4:16: error: `runner.timeout_secs` is out of range",
            "6:10: error: config: `runner.x`: unknown field `x`, expected `timeout_secs`",
        ]
    );
    assert_eq!(
        errors(
            &env,
            "[patterns]\nbudget = 0\ndecay_days = 0.0\nignore_weights = { a = 101.0 }\n"
        ),
        [
            "2:10: error: `patterns.budget` is out of range",
            "3:14: error: `patterns.decay_days` is out of range",
            "4:18: error: `patterns.ignore_weights` is out of range",
        ]
    );
    let many: String = (0..20_000).map(|i| format!("k{i} = {i}\n")).collect();
    let start = std::time::Instant::now();
    let listed = errors(&env, &format!("[events]\n{many}"));
    assert!(listed.len() <= 52, "{}", listed.len());
    assert!(
        listed
            .last()
            .is_some_and(|l| l.contains("more problems after this one are not listed"))
    );
    // Not a timing test: a quadratic pass over 20,000 keys took minutes.
    assert!(start.elapsed() < std::time::Duration::from_secs(60));
}

#[test]
fn messages_speak_toml_not_rust() {
    let env = TestEnv::initialised();
    env.write(".swarm/config.toml", "events = 3\n");
    env.write(
        ".swarm/directives/no-private-keys.toml",
        "id = \"no-private-keys\"\nlesson = \"Never commit private keys to the repository\"\napplies_to_agents = [\"coder\"]\nverify = [\"grep:PRIVATE KEY\"]\nx = 1\nverfy = []\n",
    );
    let run = env.swarm(&["validate"]);
    run.code(2);
    assert!(
        run.stdout.contains(
            ".swarm/config.toml:1:10: error: config: `events`: expected a table of settings (`[events]`)"
        ),
        "{}",
        run.snapshot()
    );
    assert!(!run.snapshot().contains("struct"), "{}", run.snapshot());
    // A one-letter key gets no guess; a real typo does.
    let x = run
        .stdout
        .lines()
        .skip_while(|l| !l.contains("unknown key `x`"))
        .nth(1)
        .expect("a hint after the x problem");
    assert!(!x.contains("did you mean"), "{x}");
    let verfy = run
        .stdout
        .lines()
        .skip_while(|l| !l.contains("unknown key `verfy`"))
        .nth(1)
        .expect("a hint after the verfy problem");
    assert!(verfy.contains("did you mean `verify`?"), "{verfy}");
}

/// A file with problems of every kind — a wrong type, a shape out of
/// bounds, a predicate that does not parse, no scope, an id that is not the
/// file's name — has them all reported in one run; it used to take a run
/// for each (the first kind found hid the others).
#[test]
fn every_problem_of_a_file_is_reported_in_one_run() {
    let env = TestEnv::initialised();
    env.write(
        ".swarm/directives/many.toml",
        "id = \"other\"\nlesson = \"short\"\npriority = 3\npaths = [\"/abs\"]\nverify = [\"grep:a(b\", \"tool:\"]\ntags = [\"\"]\n",
    );
    let (run, errors) = validate_errors(&env);
    assert_eq!(
        errors,
        [
            ".swarm/directives/many.toml:1:1: error: nothing says whom it is for",
            ".swarm/directives/many.toml:1:1: error: id `other` does not match the file name `many.toml`",
            ".swarm/directives/many.toml:2:10: error: lesson is 5 characters, outside 15–280",
            ".swarm/directives/many.toml:3:12: error: `priority` must be a string, found integer",
            ".swarm/directives/many.toml:4:10: error: glob `/abs` is an absolute path",
            ".swarm/directives/many.toml:5:18: error: `grep` regex `a(b` does not parse: error: unclosed group",
            ".swarm/directives/many.toml:5:23: error: `tool` predicate names no program",
            ".swarm/directives/many.toml:6:9: error: tags[0] is empty",
        ],
        "{}",
        run.snapshot()
    );
    // A field with a problem of its own is not judged again by the gate:
    // an unreadable lesson or scope is one problem, not two.
    env.write(
        ".swarm/directives/many.toml",
        "id = \"many\"\nlesson = 3\napplies_to_agents = \"coder\"\nverify = [\"grep:x\"]\n",
    );
    let run = env.swarm(&["validate"]);
    run.code(2);
    assert!(
        run.stdout.ends_with(": 2 errors, 0 warnings.\n"),
        "{}",
        run.snapshot()
    );
}

/// A list with one item of the wrong type still has its other items
/// judged in the same run: a bad role name and bad predicates beside a
/// number are reported with it, not one run later.
#[test]
fn the_other_items_of_a_list_with_a_wrong_typed_one_are_judged_too() {
    let env = TestEnv::initialised();
    env.write(
        ".swarm/directives/many.toml",
        "id = \"many\"\nlesson = \"Run the tests before handing back\"\napplies_to_agents = [\"Coder\", 5]\nverify = [\"grep:a(b\", 3, \"tool:\"]\n",
    );
    let (run, errors) = validate_errors(&env);
    assert_eq!(
        errors,
        [
            ".swarm/directives/many.toml:3:22: error: `Coder` is not a valid name",
            ".swarm/directives/many.toml:3:31: error: `applies_to_agents[1]` must be a string, found integer",
            ".swarm/directives/many.toml:4:18: error: `grep` regex `a(b` does not parse: error: unclosed group",
            ".swarm/directives/many.toml:4:23: error: `verify[1]` must be a string, found integer",
            ".swarm/directives/many.toml:4:26: error: `tool` predicate names no program",
        ],
        "{}",
        run.snapshot()
    );
}

/// What `check` cannot build is refused when read, at its place: a glob
/// nesting `{…}` too deep (globset panicked on it), regexes past the regex
/// engine's size limit (the shape-based guess let them through), a glob
/// longer than a predicate may be.
#[test]
fn what_check_cannot_compile_is_refused_where_it_is() {
    let env = TestEnv::initialised();
    let nested = format!("{}b{}", "{a,".repeat(125), "}".repeat(125));
    env.write(
        ".swarm/directives/limits.toml",
        format!(
            "id = \"limits\"\nlesson = \"Checks git-swarm cannot compile\"\napplies_to_agents = [\"coder\"]\nverify = [\n  \"file_modified:{nested}\",\n  'grep:\\pL{{900}}',\n  'grep:\\w{{500}}\\w{{500}}:src/**',\n  'grep:\\w{{50}}:src/**',\n]\npaths = [\"docs/{{a,{{b,{{c,{{d,{{e,{{f,{{g,{{h,{{i,j}}}}}}}}}}}}}}}}}}\"]\n"
        ),
    );
    let (run, errors) = validate_errors(&env);
    assert_eq!(
        errors,
        [
            ".swarm/directives/limits.toml:5:42: error: glob `{a,{a,{a,{a,{a,{a,{a,{a,{a,{a,{a,{a,{a,{…` nests `{…}` more than 8 deep (at character 25)",
            ".swarm/directives/limits.toml:6:3: error: `grep` regex `\\pL{900}` is too large to compile: compiled, it would exceed the regex engine's limit of 10485760 bytes",
            ".swarm/directives/limits.toml:7:3: error: `grep` regex `\\w{500}\\w{500}` is too large to compile: compiled, it would exceed the regex engine's limit of 10485760 bytes",
            ".swarm/directives/limits.toml:10:40: error: glob `docs/{a,{b,{c,{d,{e,{f,{g,{h,{i,j}}}}}}}…` nests `{…}` more than 8 deep (at character 30)",
        ],
        "{}",
        run.snapshot()
    );
    // The same limits as `add`'s gate: quarantined, with the reason.
    let run = env.swarm(&[
        "add",
        "--lesson",
        "Nested alternatives beyond any real use",
        "--agents",
        "coder",
        "--verify",
        &format!("file_modified:{nested}"),
    ]);
    run.code(1);
    assert!(
        run.stdout.contains(": invalid_predicate\n")
            && run
                .stdout
                .contains("nests `{…}` more than 8 deep (at character 25)"),
        "{}",
        run.snapshot()
    );
}

/// `9999-12-31T23:59:59Z` is an RFC 3339 time: what is wrong with it is
/// that it is past the last time the log holds, and the message says so.
#[test]
fn an_event_time_past_the_last_one_the_log_holds_says_so() {
    let env = TestEnv::initialised();
    env.write(
        ".swarm/events/2026-11.jsonl",
        [
            r#"{"id":"01KAAAAAAAAAAAAAAAAAAAAAA1","ts":"9999-12-31T23:59:59Z","kind":"shown"}"#,
            r#"{"id":"01KAAAAAAAAAAAAAAAAAAAAAA2","ts":"9999-12-31T23:59:59.000Z","kind":"shown"}"#,
            r#"{"id":"01KAAAAAAAAAAAAAAAAAAAAAA3","ts":"9999-13-01T00:00:00Z","kind":"shown"}"#,
            "",
        ]
        .join("\n"),
    );
    let (run, errors) = validate_errors(&env);
    assert_eq!(
        errors,
        [
            ".swarm/events/2026-11.jsonl:1:1: error: event time `9999-12-31T23:59:59Z` is later than 9999-12-30T22:00:00.999Z, the last time the event log holds",
            ".swarm/events/2026-11.jsonl:2:1: error: event time `9999-12-31T23:59:59.000Z` is later than 9999-12-30T22:00:00.999Z, the last time the event log holds",
            ".swarm/events/2026-11.jsonl:3:1: error: event time `9999-13-01T00:00:00Z` is not an RFC 3339 time",
        ],
        "{}",
        run.snapshot()
    );
}

/// `validate` run where it must fail (exit 2), and its error lines.
fn validate_errors(env: &TestEnv) -> (Run, Vec<String>) {
    let run = env.swarm(&["validate"]);
    run.code(2);
    let errors = run
        .stdout
        .lines()
        .filter(|l| l.contains(": error: "))
        .map(str::to_owned)
        .collect();
    (run, errors)
}
