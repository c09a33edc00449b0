//! `git swarm doctor` after a merge that stopped on a conflict: every
//! conflict marker git left under `.swarm/` is reported with its file and
//! line (exit 1, and `--fix` leaves them to a person); a marker inside a
//! JSON string of an event line is not one.

use crate::common;

use common::TestEnv;

const DIRECTIVE: &str = ".swarm/directives/no-private-keys.toml";

/// Two branches that change the same line of a directive differently,
/// merged with real git, which stops and writes the markers.
fn conflicted() -> TestEnv {
    let env = TestEnv::initialised();
    let text = env.read(DIRECTIVE);
    env.git(&["checkout", "-q", "-b", "side"]);
    env.write(
        DIRECTIVE,
        text.replace("confidence = 0.9", "confidence = 0.7"),
    );
    env.git(&["commit", "-q", "-am", "side: less sure"]);
    env.git(&["checkout", "-q", "main"]);
    env.write(
        DIRECTIVE,
        text.replace("confidence = 0.9", "confidence = 0.95"),
    );
    env.git(&["commit", "-q", "-am", "main: surer"]);
    env.merge_stopping_on_conflict("side");
    env
}

/// The 1-based lines of `rel` that git's conflict markers are on, as `grep -n` finds them.
fn marker_lines(env: &TestEnv, rel: &str) -> Vec<usize> {
    env.read(rel)
        .lines()
        .enumerate()
        .filter(|(_, l)| l.starts_with("<<<<<<< ") || *l == "=======" || l.starts_with(">>>>>>> "))
        .map(|(i, _)| i + 1)
        .collect()
}

#[test]
fn doctor_names_every_marker_git_left_in_a_directive() {
    let env = conflicted();
    let lines = marker_lines(&env, DIRECTIVE);
    assert_eq!(
        lines.len(),
        3,
        "git wrote the markers:\n{}",
        env.read(DIRECTIVE)
    );
    let run = env.swarm(&["doctor"]);
    run.code(1);
    for line in &lines {
        let at = format!("{DIRECTIVE}:{line}:1: error: conflict marker");
        assert!(
            run.stdout.contains(&at),
            "{at} missing:\n{}",
            run.snapshot()
        );
    }
    insta::assert_snapshot!("doctor_conflict_in_a_directive", run.snapshot());

    // --fix does not touch them, and says they are open.
    let before = env.read(DIRECTIVE);
    env.swarm(&["doctor", "--fix"]).code(1);
    assert_eq!(env.read(DIRECTIVE), before);

    // Resolved (main's side kept): nothing to report.
    let resolved: String = before
        .lines()
        .filter(|l| {
            !(l.starts_with("<<<<<<< ")
                || *l == "======="
                || l.starts_with(">>>>>>> ")
                || *l == "confidence = 0.7")
        })
        .map(|l| format!("{l}\n"))
        .collect();
    env.write(DIRECTIVE, resolved);
    let run = env.swarm(&["doctor"]);
    assert!(!run.stdout.contains("conflict"), "{}", run.snapshot());
}

#[test]
fn event_files_conflict_only_without_union_merge_and_json_strings_are_not_markers() {
    let env = TestEnv::initialised();
    let rel = ".swarm/events/2026-11.jsonl";
    // A line whose text holds a marker, and `merge=union` turned off for
    // this clone (info/attributes wins over .gitattributes).
    let base = r#"{"id":"ev-1","ts":"2026-11-01T00:00:00.000Z","kind":"retired","directive":"a-b","reason":"=======\n<<<<<<< HEAD"}"#;
    env.write(rel, format!("{base}\n"));
    env.git(&["add", "-A"]);
    env.git(&["commit", "-q", "-m", "base event"]);
    std::fs::write(
        env.path(".git/info/attributes"),
        ".swarm/events/*.jsonl merge=text\n",
    )
    .expect("write attributes");
    env.git(&["checkout", "-q", "-b", "side"]);
    let side = r#"{"id":"ev-2","ts":"2026-11-02T00:00:00.000Z","kind":"retired","directive":"c-d","reason":"side"}"#;
    env.write(rel, format!("{base}\n{side}\n"));
    env.git(&["commit", "-q", "-am", "side event"]);
    env.git(&["checkout", "-q", "main"]);
    let ours = r#"{"id":"ev-3","ts":"2026-11-03T00:00:00.000Z","kind":"retired","directive":"e-f","reason":"main"}"#;
    env.write(rel, format!("{base}\n{ours}\n"));
    env.git(&["commit", "-q", "-am", "main event"]);
    env.merge_stopping_on_conflict("side");

    let lines = marker_lines(&env, rel);
    assert_eq!(
        lines,
        [2, 4, 6],
        "git wrote the markers:\n{}",
        env.read(rel)
    );
    let run = env.swarm(&["doctor"]);
    run.code(1);
    let reported: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.contains("conflict marker"))
        .collect();
    assert_eq!(reported.len(), 3, "{}", run.snapshot());
    for (line, found) in lines.iter().zip(&reported) {
        assert!(
            found.starts_with(&format!("{rel}:{line}:1: error:")),
            "{found}"
        );
    }
    // Line 1 holds `=======` inside a JSON string: not a marker, and a
    // marker line is not reported a second time as a malformed event.
    assert!(
        !run.stdout.contains(&format!("{rel}:1:")),
        "{}",
        run.snapshot()
    );
    assert!(!run.stdout.contains("malformed"), "{}", run.snapshot());

    // With the union merge the repository ships, the same merge is clean.
    env.git(&["merge", "--abort"]);
    std::fs::remove_file(env.path(".git/info/attributes")).expect("remove attributes");
    env.git(&["merge", "-q", "--no-edit", "side"]);
    let run = env.swarm(&["doctor"]);
    assert!(!run.stdout.contains("conflict"), "{}", run.snapshot());
}

/// A bare `=======` outside a conflict is text (a setext heading, a line of
/// a TOML multi-line string), and a low events limit does not stop the
/// markers of a directive from being found.
#[test]
fn a_bare_separator_is_text_and_each_file_has_its_own_limit() {
    let env = conflicted();
    let lines = marker_lines(&env, DIRECTIVE);
    env.write(
        ".swarm/README.md",
        "Lessons\n=======\n\nWhat agents learnt.\n",
    );
    let config = env.read(".swarm/config.toml");
    // The events section, its file limit set (or replaced) to 64 bytes.
    let mut low: Vec<String> = config
        .lines()
        .filter(|l| !l.starts_with("max_file_bytes"))
        .map(str::to_owned)
        .collect();
    let events = low
        .iter()
        .position(|l| l == "[events]")
        .unwrap_or_else(|| panic!("no [events] in {config}"));
    low.insert(events + 1, "max_file_bytes = 64".to_owned());
    let low = low.join("\n") + "\n";
    env.write(".swarm/config.toml", low);
    let run = env.swarm(&["doctor"]);
    run.code(1);
    assert!(
        !run.stdout.contains(".swarm/README.md"),
        "a setext heading is not a marker:\n{}",
        run.snapshot()
    );
    for line in &lines {
        let at = format!("{DIRECTIVE}:{line}:1: error: conflict marker");
        assert!(
            run.stdout.contains(&at),
            "{at} missing with events.max_file_bytes = 64:\n{}",
            run.snapshot()
        );
    }
}
