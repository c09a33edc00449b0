//! The command line's surface as a user meets it: untrusted text shown
//! escaped, typos refused or flagged, and one spelling per flag (the old
//! spellings still accepted).

mod common;

use common::{Run, TestEnv, tick};
use serde_json::Value;

fn swarm(env: &TestEnv, args: &[&str]) -> Run {
    env.swarm_with(args, &[("GIT_SWARM_NOW", &tick())], None)
}

fn swarm_in(env: &TestEnv, args: &[&str], stdin: &str) -> Run {
    env.swarm_with(args, &[("GIT_SWARM_NOW", &tick())], Some(stdin.as_bytes()))
}

/// A repository with no template directives; tests add their own.
fn repo() -> TestEnv {
    let env = TestEnv::initialised();
    env.git(&["rm", "-q", "-r", ".swarm/directives"]);
    env.git(&["commit", "-q", "-m", "no template directives"]);
    env
}

fn directive(env: &TestEnv, id: &str, fields: &str) {
    env.write(
        &format!(".swarm/directives/{id}.toml"),
        format!("id = \"{id}\"\n{fields}\n"),
    );
}

fn coder_rule(env: &TestEnv, id: &str, priority: &str) {
    directive(
        env,
        id,
        &format!(
            "lesson = \"The lesson called {id} for coders\"\npriority = \"{priority}\"\napplies_to_agents = [\"coder\"]\nrequired_actions = [\"do {id}\"]"
        ),
    );
}

fn events_of(env: &TestEnv, kind: &str) -> Vec<Value> {
    env.event_lines()
        .iter()
        .map(|l| serde_json::from_str::<Value>(l).expect("event json"))
        .filter(|e| e["kind"] == kind)
        .collect()
}

/// Characters that reorder or hide text on a terminal.
const HIDDEN: &[char] = &[
    '\u{202e}', '\u{202c}', '\u{2066}', '\u{2069}', '\u{200b}', '\u{200e}', '\u{feff}', '\u{2060}',
    '\u{1b}',
];

#[track_caller]
fn assert_shown_escaped(what: &str, run: &Run, escapes: &[&str]) {
    for c in HIDDEN {
        assert!(
            !run.stdout.contains(*c) && !run.stderr.contains(*c),
            "{what} sent U+{:04X} raw:\n{}",
            *c as u32,
            run.snapshot()
        );
    }
    for e in escapes {
        assert!(
            run.stdout.contains(e),
            "{what} should show `{e}`:\n{}",
            run.snapshot()
        );
    }
}

/// A lesson and a `tool:` predicate with bidirectional overrides and
/// zero-width characters (written as TOML escapes, as a pulled branch
/// could): every command that prints them shows them as escapes, and
/// `trust` lists the predicate as it really reads before recording trust.
#[test]
fn bidi_and_zero_width_characters_are_shown_escaped_everywhere() {
    let env = repo();
    env.write(
        ".swarm/directives/sneaky.toml",
        "id = \"sneaky\"\nlesson = \"Run the linter \\u202Eylno\\u202C before \\u200Bpushing\\u2066 code\"\npriority = \"critical\"\nenforcement = \"enforce\"\napplies_to_agents = [\"coder\"]\nverify = [\"tool:cargo clippy \\u202E; hsab\\u202C\", \"grep:TODO\"]\n",
    );
    env.write("src/a.rs", "ok\n");
    env.git(&["add", "-A"]);
    env.git(&["commit", "-q", "-m", "base"]);

    let lesson = "Run the linter \\u{202e}ylno\\u{202c} before \\u{200b}pushing\\u{2066} code";
    let predicate = "tool:cargo clippy \\u{202e}; hsab\\u{202c}";
    assert_shown_escaped("list", swarm(&env, &["list"]).success(), &["\\u{202e}ylno"]);
    assert_shown_escaped(
        "show",
        swarm(&env, &["show", "sneaky"]).success(),
        &[lesson, predicate],
    );
    let trust = swarm(&env, &["trust"]);
    assert_shown_escaped("trust", trust.success(), &[predicate]);
    assert_shown_escaped(
        "trust --show",
        swarm(&env, &["trust", "--show"]).success(),
        &[predicate],
    );

    // A failing check shows the lesson, the predicate and the finding escaped.
    env.write("src/a.rs", "ok\n// TODO \u{202e}later\u{2069}\n");
    let check = swarm(&env, &["check", "--worktree"]);
    check.code(1);
    assert_shown_escaped(
        "check",
        &check,
        &[lesson, "src/a.rs:2: // TODO \\u{202e}later\\u{2069}"],
    );

    // JSON keeps the text as it is (serde escapes only what JSON needs).
    let json = swarm(&env, &["show", "sneaky", "--format", "json"]);
    let v: Value = serde_json::from_str(&json.stdout).expect("json");
    assert!(
        v["directive"]["lesson"]
            .as_str()
            .is_some_and(|l| l.contains('\u{202e}')),
        "{}",
        json.snapshot()
    );
}

/// A pattern's text from an adversarial role's deliberation is shown
/// escaped by `pattern list` and `pattern show`.
#[test]
fn pattern_text_is_shown_escaped() {
    let env = repo();
    env.write(
        "deliberation.md",
        "- Always validate the \u{202e}tupni\u{202c} before parsing the request body\n",
    );
    swarm(
        &env,
        &[
            "pattern",
            "extract",
            "--role",
            "auditor",
            "--run",
            "r1",
            "deliberation.md",
        ],
    )
    .success();
    let list = swarm(&env, &["pattern", "list"]);
    assert_shown_escaped("pattern list", list.success(), &["\\u{202e}tupni\\u{202c}"]);
    let id = list.stdout.split_whitespace().next().expect("a pattern id");
    assert_shown_escaped(
        "pattern show",
        swarm(&env, &["pattern", "show", id]).success(),
        &["\\u{202e}tupni\\u{202c}"],
    );
}

/// A finding keeps its tabs and trailing whitespace visible: a finding
/// about trailing whitespace shows what it found.
#[test]
fn findings_show_tabs_and_trailing_whitespace() {
    let env = repo();
    directive(
        &env,
        "no-trailing-space",
        "lesson = \"Never leave trailing whitespace in sources\"\napplies_to_agents = [\"coder\"]\nenforcement = \"enforce\"\nverify = ['grep:[ \\t]+$:src/**']",
    );
    env.git(&["add", "-A"]);
    env.git(&["commit", "-q", "-m", "base"]);
    env.write("src/a.rs", "fn a() {}  \n\tlet x = 1;\t\n   \n");
    let check = swarm(&env, &["check", "--worktree"]);
    check.code(1);
    for line in [
        "src/a.rs:1: fn a() {}\\u{20}\\u{20}\n",
        "src/a.rs:2: \\tlet x = 1;\\t\n",
        "src/a.rs:3: \\u{20}\\u{20}\\u{20}\n",
    ] {
        assert!(
            check.stdout.contains(line),
            "want {line:?}:\n{}",
            check.snapshot()
        );
    }
}
