//! The command line's surface as a user meets it: untrusted text shown
//! escaped, typos refused or flagged, and one spelling per flag (the old
//! spellings still accepted).

use crate::common;

use common::{Run, TestEnv, directive, repo_without_directives, swarm, tick};
use serde_json::Value;

fn swarm_in(env: &TestEnv, args: &[&str], stdin: &str) -> Run {
    env.swarm_with(args, &[("GIT_SWARM_NOW", &tick())], Some(stdin.as_bytes()))
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
    let env = repo_without_directives();
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

    // Such a lesson or predicate does not pass the gate (one-line fields
    // refuse bidirectional controls): `check` refuses the directive, naming
    // the field and the character, never printing it.
    env.write("src/a.rs", "ok\n// TODO \u{202e}later\u{2069}\n");
    let refused = swarm(&env, &["check", "--worktree"]);
    refused.code(2);
    assert_shown_escaped("check", &refused, &[]);
    assert!(
        refused
            .stderr
            .contains("error: lesson contains a bidirectional control (U+202E) at character 16"),
        "{}",
        refused.snapshot()
    );
    // A failing check shows the finding escaped.
    directive(
        &env,
        "sneaky",
        "lesson = \"Run the linter before pushing code\"\npriority = \"critical\"\nenforcement = \"enforce\"\napplies_to_agents = [\"coder\"]\nverify = [\"grep:TODO\"]",
    );
    let check = swarm(&env, &["check", "--worktree"]);
    check.code(1);
    assert_shown_escaped(
        "check",
        &check,
        &["src/a.rs:2: // TODO \\u{202e}later\\u{2069}"],
    );
}

/// A pattern's text from an adversarial role's deliberation is shown
/// escaped by `pattern list` and `pattern show`.
#[test]
fn pattern_text_is_shown_escaped() {
    let env = repo_without_directives();
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
    let env = repo_without_directives();
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

/// `inject --role` with a role nothing names warns, with the likeliest
/// intended role, and still prints the block (a new role is legitimate:
/// the directives meant for every role apply). A known role says nothing.
#[test]
fn inject_for_an_unknown_role_warns_with_a_hint() {
    let env = repo_without_directives();
    coder_rule(&env, "coder-rule", "high");
    directive(
        &env,
        "release-rule",
        "lesson = \"Tag every release from the main branch\"\napplies_to_agents = [\"release_manager\"]\nrequired_actions = [\"tag from main\"]",
    );
    let typo = swarm(&env, &["inject", "--role", "codr"]);
    typo.success();
    assert!(
        typo.stderr
            .contains("warning: no directive and no config names the role `codr`")
            && typo.stderr.contains("did you mean `coder`?"),
        "{}",
        typo.snapshot()
    );
    let typo = swarm(&env, &["inject", "--role", "release_manger"]);
    assert!(
        typo.stderr.contains("did you mean `release_manager`?"),
        "{}",
        typo.snapshot()
    );
    // A role only a directive names is known; so is one from the config.
    for role in ["release_manager", "coder", "auditor"] {
        let run = swarm(&env, &["inject", "--role", role]);
        run.success();
        assert!(
            !run.stderr.contains("warning"),
            "{role}:\n{}",
            run.snapshot()
        );
    }
    env.write(".swarm/config.toml", "[roles]\nplanner = [\"read\"]\n");
    let planner = swarm(&env, &["inject", "--role", "planner"]);
    assert!(
        !planner.stderr.contains("warning"),
        "{}",
        planner.snapshot()
    );
}

/// `inject --dry-run` prints the same block and records nothing: no
/// `shown` event, so no delegation whose criticals are later unacknowledged.
#[test]
fn inject_dry_run_prints_the_block_and_records_nothing() {
    let env = repo_without_directives();
    coder_rule(&env, "critical-rule", "critical");
    let before = env.event_lines().len();
    let dry = swarm(
        &env,
        &["inject", "--role", "coder", "--phase", "p1", "--dry-run"],
    );
    dry.success();
    assert!(
        dry.stdout.contains("<delegate_knowledge_directives")
            && dry.stdout.contains("critical-rule"),
        "{}",
        dry.snapshot()
    );
    assert!(dry.stderr.contains("dry run:"), "{}", dry.snapshot());
    assert_eq!(env.event_lines().len(), before, "{:?}", env.event_lines());
    // The phase saw nothing: it is not blocked by the critical shown in the dry run.
    swarm(&env, &["phase", "complete", "p1"]).code(2);
    let real = swarm(&env, &["inject", "--role", "coder", "--phase", "p1"]);
    real.success();
    assert_eq!(events_of(&env, "shown").len(), 1);
    let strip = |s: &str| {
        s.lines()
            .filter(|l| !l.contains("delegation"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(strip(&dry.stdout), strip(&real.stdout));
}

/// `phase complete` for a phase nothing was shown in is refused as a
/// likely typo, naming the phases that exist; `--allow-empty` completes it.
#[test]
fn phase_complete_of_an_unknown_phase_is_refused() {
    let env = repo_without_directives();
    coder_rule(&env, "a-rule", "medium");
    swarm(&env, &["inject", "--role", "coder", "--phase", "build"]).success();
    let typo = swarm(&env, &["phase", "complete", "buld"]);
    typo.code(2);
    assert!(
        typo.stderr
            .contains("error: no directive was shown in phase `buld`")
            && typo.stderr.contains("did you mean `build`?"),
        "{}",
        typo.snapshot()
    );
    assert!(events_of(&env, "phase").is_empty());
    let empty = swarm(&env, &["phase", "complete", "7", "--allow-empty"]);
    empty.success();
    assert_eq!(events_of(&env, "phase").len(), 1, "{}", empty.snapshot());
    // Once complete, asking again is not an error.
    swarm(&env, &["phase", "complete", "7"]).success();
    swarm(&env, &["phase", "complete", "build"]).success();
}

/// Verdicts for a mistyped phase are refused as `phase complete` refuses
/// it (exit 2, the likeliest phase named), and a verdict for a mistyped id
/// names the id that was shown.
#[test]
fn review_verdicts_for_a_mistyped_phase_or_id_say_so() {
    let env = repo_without_directives();
    coder_rule(&env, "a-rule", "critical");
    swarm(&env, &["inject", "--role", "coder", "--phase", "build"]).success();
    env.write("verdicts.txt", "VERIFIED: a-rul evidence=tests pass\n");
    let typo = swarm(
        &env,
        &["review", "--phase", "buld", "--verdicts", "verdicts.txt"],
    );
    typo.code(2);
    assert!(
        typo.stderr
            .contains("error: no directive was shown in phase `buld`: no verdict recorded")
            && typo.stderr.contains("did you mean `build`?"),
        "{}",
        typo.snapshot()
    );
    assert!(events_of(&env, "verdict").is_empty());
    let run = swarm(
        &env,
        &["review", "--phase", "build", "--verdicts", "verdicts.txt"],
    );
    run.success();
    assert!(
        run.stderr.contains("warning: verdict for `a-rul` ignored")
            && run.stderr.contains("hint: did you mean `a-rule`?"),
        "{}",
        run.snapshot()
    );
}

/// `record` refuses a kind it does not know (exit 2, with the likeliest
/// intended kind and the list); `--custom` records one deliberately.
#[test]
fn record_refuses_an_unknown_kind_unless_custom() {
    let env = repo_without_directives();
    let typo = swarm(&env, &["record", "ackk"]);
    typo.code(2);
    assert!(
        typo.stderr
            .contains("error: `ackk` is not an event kind git-swarm knows")
            && typo.stderr.contains("did you mean `ack`?")
            && typo.stderr.contains("`pattern_observed`"),
        "{}",
        typo.snapshot()
    );
    assert!(env.event_lines().is_empty());
    swarm(&env, &["record", "outcome"]).success();
    swarm(&env, &["record", "note", "--custom"]).success();
    assert_eq!(events_of(&env, "note").len(), 1);
}

/// A silent delegate (an empty or blank final message) acknowledges
/// nothing: the criticals it was shown are recorded `unacknowledged`, and
/// `ack` exits as it does for a message without acks (0), with a warning
/// that the message was empty.
#[test]
fn an_empty_message_records_the_criticals_shown_unacknowledged() {
    let env = repo_without_directives();
    coder_rule(&env, "critical-rule", "critical");
    coder_rule(&env, "high-rule", "high");
    let delegation = |env: &TestEnv| {
        swarm(env, &["inject", "--role", "coder"]).success();
        events_of(env, "shown")
            .last()
            .and_then(|e| e["id"].as_str())
            .expect("id")
            .to_owned()
    };
    // The non-acknowledging case, for reference.
    let said = delegation(&env);
    let silent_words = swarm_in(&env, &["ack", "--delegation", &said], "Done.\n");
    for (message, stdin) in [("empty", ""), ("blank", "  \n\n\t\n")] {
        let d = delegation(&env);
        let run = swarm_in(&env, &["ack", "--delegation", &d], stdin);
        assert_eq!(
            run.code,
            silent_words.code,
            "{message}:\n{}",
            run.snapshot()
        );
        run.success();
        assert_eq!(
            run.stdout,
            "unacknowledged  critical-rule  (critical, shown, and not acknowledged: a violation)\n",
            "{message}:\n{}",
            run.snapshot()
        );
        assert!(
            run.stderr
                .contains("warning: standard input is empty: no acks in it"),
            "{message}:\n{}",
            run.snapshot()
        );
        let recorded: Vec<Value> = events_of(&env, "unacknowledged")
            .into_iter()
            .filter(|e| e["delegation"] == d.as_str())
            .collect();
        assert_eq!(recorded.len(), 1, "{message}: {recorded:?}");
        assert_eq!(recorded[0]["directive"], "critical-rule");
        // Again: recorded once.
        let again = swarm_in(&env, &["ack", "--delegation", &d], stdin);
        again.success();
        assert!(
            again.stdout.contains("[recorded before]"),
            "{}",
            again.snapshot()
        );
    }
    let d = delegation(&env);
    env.write("final.md", "");
    let file = swarm(&env, &["ack", "--delegation", &d, "final.md"]);
    file.success();
    assert!(
        file.stderr.contains("warning: final.md is empty"),
        "{}",
        file.snapshot()
    );
    assert_eq!(events_of(&env, "unacknowledged").len(), 4);
    assert!(events_of(&env, "ack").is_empty());
}

/// A 100 KB reason does not fail the whole ack: it is cut, with a warning
/// naming the message's line, and the other acks are recorded.
#[test]
fn an_ack_with_a_huge_reason_is_cut_and_the_rest_recorded() {
    let env = repo_without_directives();
    coder_rule(&env, "a-rule", "critical");
    coder_rule(&env, "b-rule", "critical");
    swarm(&env, &["inject", "--role", "coder"]).success();
    let delegation = events_of(&env, "shown")[0]["id"]
        .as_str()
        .expect("id")
        .to_owned();
    let message = format!(
        "Done.\nKNOWLEDGE_APPLIED: a-rule\nKNOWLEDGE_IGNORED: b-rule reason={}\n",
        "y".repeat(100 * 1024)
    );
    let run = swarm_in(&env, &["ack", "--delegation", &delegation], &message);
    run.success();
    assert!(
        run.stderr.contains(
            "warning: standard input:3: the reason for `b-rule` is 102400 characters: only the first 500 are recorded"
        ),
        "{}",
        run.snapshot()
    );
    let acks = events_of(&env, "ack");
    assert_eq!(acks.len(), 2, "{acks:?}");
    let reason = acks
        .iter()
        .find(|e| e["directive"] == "b-rule")
        .and_then(|e| e["reason"].as_str())
        .expect("reason");
    assert_eq!(reason.chars().count(), 501);
    assert!(events_of(&env, "unacknowledged").is_empty());
}

/// One spelling per meaning across commands, and the old spellings still
/// accepted (hidden): the same command under either gives the same answer.
#[test]
fn old_flag_spellings_still_work() {
    let env = repo_without_directives();
    coder_rule(&env, "a-rule", "high");
    coder_rule(&env, "b-rule", "low");
    directive(
        &env,
        "cargo-rule",
        "lesson = \"Read every lockfile change before approving\"\napplies_to_tools = [\"cargo\"]\nrequired_actions = [\"read it\"]",
    );
    directive(
        &env,
        "npm-rule",
        "lesson = \"Pin the registry in every npm config file\"\napplies_to_tools = [\"npm\"]\nrequired_actions = [\"pin it\"]",
    );
    directive(
        &env,
        "old-rule",
        "lesson = \"Run the old integration script before merging\"\nstatus = \"retired\"\napplies_to_agents = [\"coder\"]\nrequired_actions = [\"run it\"]",
    );
    let same = |new: &[&str], old: &[&str]| {
        let a = swarm(&env, new);
        let b = swarm(&env, old);
        a.success();
        assert_eq!(
            a.stdout,
            b.stdout,
            "{new:?} vs {old:?}:\n{}\n{}",
            a.snapshot(),
            b.snapshot()
        );
        assert_eq!(a.code, b.code);
        a.stdout.clone()
    };
    let retired = same(
        &["list", "--state", "retired"],
        &["list", "--status", "retired"],
    );
    assert!(
        retired.contains("old-rule") && !retired.contains("a-rule"),
        "{retired}"
    );
    let cargo = same(&["list", "--tools", "cargo"], &["list", "--tool", "cargo"]);
    assert!(
        cargo.contains("cargo-rule") && !cargo.contains("npm-rule"),
        "{cargo}"
    );
    let both = same(
        &["list", "--tools", "cargo,npm"],
        &["list", "--tools", "cargo", "--tools", "npm"],
    );
    assert!(
        both.contains("cargo-rule") && both.contains("npm-rule"),
        "{both}"
    );
    let one = same(
        &[
            "inject",
            "--role",
            "coder",
            "-n",
            "1",
            "--dry-run",
            "--format",
            "json",
        ],
        &[
            "inject",
            "--role",
            "coder",
            "--max",
            "1",
            "--dry-run",
            "--format",
            "json",
        ],
    );
    let v: Value = serde_json::from_str(&one).expect("json");
    assert_eq!(v["directives"].as_array().map(Vec::len), Some(1), "{one}");
    same(
        &[
            "inject",
            "--role",
            "coder",
            "--max-count",
            "1",
            "--dry-run",
            "--format",
            "json",
        ],
        &[
            "inject",
            "--role",
            "coder",
            "--max",
            "1",
            "--dry-run",
            "--format",
            "json",
        ],
    );
    same(
        &[
            "inject",
            "--role",
            "x_bot",
            "--tools",
            "cargo,npm",
            "--dry-run",
            "--format",
            "json",
        ],
        &[
            "inject",
            "--role",
            "x_bot",
            "--tools",
            "cargo",
            "--tools",
            "npm",
            "--dry-run",
            "--format",
            "json",
        ],
    );

    // Patterns: --state/--status, --verdicts/--verdict, --justification/--reason.
    env.write(
        "deliberation.md",
        "- Always validate the input before parsing the request body\n- Never log secrets from the environment at startup\n",
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
    let observed = same(
        &["pattern", "list", "--state", "observed"],
        &["pattern", "list", "--status", "observed"],
    );
    let ids: Vec<&str> = observed
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(ids.len(), 2, "{observed}");
    swarm(
        &env,
        &[
            "pattern",
            "deprecate",
            ids[0],
            "--justification",
            "superseded by a lint",
        ],
    )
    .success();
    swarm(
        &env,
        &[
            "pattern",
            "deprecate",
            ids[1],
            "--reason",
            "superseded by a lint",
        ],
    )
    .success();
    assert_eq!(events_of(&env, "pattern_deprecated").len(), 2);
    for flag in ["--verdicts", "--verdict"] {
        let run = swarm(
            &env,
            &[
                "pattern",
                "feedback",
                "--adversarial-role",
                "auditor",
                "--validator-role",
                "judge",
                "--run",
                "r1",
                "--deliberation",
                "deliberation.md",
                flag,
                "missing.md",
            ],
        );
        run.code(2);
        assert!(
            run.stderr.contains("cannot read missing.md"),
            "{flag}:\n{}",
            run.snapshot()
        );
    }
}

/// `review --verdicts` takes the change selectors of `check`: --commit and
/// --worktree as well as --staged and --range; the old `--verdict` too.
#[test]
fn review_takes_the_change_selectors_of_check() {
    let env = repo_without_directives();
    directive(
        &env,
        "no-todo",
        "lesson = \"Do not leave TODO markers in source files\"\npriority = \"critical\"\napplies_to_agents = [\"coder\"]\nverify = [\"grep:TODO:src/**\"]",
    );
    env.git(&["add", "-A"]);
    env.git(&["commit", "-q", "-m", "rule"]);
    swarm(&env, &["inject", "--role", "coder", "--phase", "r1"]).success();
    env.write("src/lib.rs", "fn f() {} // TODO later\n");
    env.git(&["add", "-A"]);
    env.git(&["commit", "-q", "-m", "work"]);
    env.write("verdicts.md", "VERIFIED:no-todo evidence=looked\n");

    let run = swarm(
        &env,
        &[
            "review",
            "--phase",
            "r1",
            "--verdicts",
            "verdicts.md",
            "--commit",
            "HEAD",
        ],
    );
    run.success();
    assert!(
        run.stdout
            .contains("violated  no-todo  (reviewer: verified, machine: fail)"),
        "{}",
        run.snapshot()
    );
    // The working tree has the TODO removed: no finding there.
    env.write("src/lib.rs", "fn f() {}\n");
    let run = swarm(
        &env,
        &[
            "review",
            "--phase",
            "r1",
            "--verdict",
            "verdicts.md",
            "--worktree",
        ],
    );
    run.success();
    assert!(
        run.stdout
            .contains("verified  no-todo  (reviewer: verified, machine:"),
        "{}",
        run.snapshot()
    );
    let verdicts = events_of(&env, "verdict");
    assert_eq!(verdicts.len(), 2, "{verdicts:?}");
    assert_eq!(verdicts[0]["machine"], "fail");
    // A change without --verdicts is refused, as before.
    swarm(&env, &["review", "--phase", "r1", "--commit", "HEAD"]).code(2);
    swarm(
        &env,
        &[
            "review",
            "--phase",
            "r1",
            "--staged",
            "--commit",
            "HEAD",
            "--verdicts",
            "verdicts.md",
        ],
    )
    .code(2);
}

/// A reviewer's 100 KB evidence is cut as an ack's reason is, and the
/// verdicts are recorded.
#[test]
fn a_verdict_with_huge_evidence_is_cut_and_recorded() {
    let env = repo_without_directives();
    coder_rule(&env, "a-rule", "critical");
    swarm(&env, &["inject", "--role", "coder", "--phase", "r1"]).success();
    env.write(
        "verdicts.md",
        format!("VERIFIED:a-rule evidence={}\n", "z".repeat(100 * 1024)),
    );
    let run = swarm(
        &env,
        &["review", "--phase", "r1", "--verdicts", "verdicts.md"],
    );
    run.success();
    assert!(
        run.stderr.contains(
            "warning: verdicts.md:1: the evidence for `a-rule` is 102400 characters: only the first 500 are recorded"
        ),
        "{}",
        run.snapshot()
    );
    let verdicts = events_of(&env, "verdict");
    assert_eq!(verdicts.len(), 1);
    assert_eq!(
        verdicts[0]["evidence"].as_str().map(|e| e.chars().count()),
        Some(501)
    );
}
