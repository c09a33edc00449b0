//! One-line fields of a directive (the lesson, every list item, the
//! source) hold one line of visible text: a control character, a line or
//! paragraph separator or a bidirectional control is refused with the
//! field named — by `add` and `edit` (exit 2, nothing written) and by
//! `validate` (at its file:line).

use crate::common;

use common::{TestEnv, directive, repo_without_directives};

/// The characters refused, each with how its message names it.
const REFUSED: &[(char, &str)] = &[
    ('\r', "a carriage return (U+000D)"),
    ('\u{1b}', "an escape (U+001B)"),
    ('\u{7}', "a bell (U+0007)"),
    ('\t', "a tab (U+0009)"),
    ('\u{85}', "a next line (U+0085)"),
    ('\u{2028}', "a line separator (U+2028)"),
    ('\u{2029}', "a paragraph separator (U+2029)"),
    ('\u{202a}', "a bidirectional control (U+202A)"),
    ('\u{202e}', "a bidirectional control (U+202E)"),
    ('\u{2066}', "a bidirectional control (U+2066)"),
    ('\u{2069}', "a bidirectional control (U+2069)"),
];

/// Every file under `.swarm/` with its bytes, to tell that nothing was written.
fn snapshot(env: &TestEnv) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut dirs = vec![env.path(".swarm")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("read dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                let bytes = std::fs::read(&path).expect("read");
                out.push((path, bytes));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn add_refuses_a_control_separator_or_bidi_character_in_a_one_line_field() {
    let env = repo_without_directives();
    let before = snapshot(&env);
    for (c, named) in REFUSED {
        let lesson = format!("Keep the tests green{c}before every merge");
        let run = env.swarm(&[
            "add",
            "--lesson",
            &lesson,
            "--agents",
            "coder",
            "--forbid",
            "merging red",
        ]);
        common::assert_no_panic(&run);
        run.code(2);
        assert!(
            run.stderr
                .contains(&format!("error: lesson contains {named} at character 21")),
            "{named}:\n{}",
            run.snapshot()
        );
        assert!(run.stderr.contains("\nhint: "), "{}", run.snapshot());
        assert!(!run.stderr.contains(*c), "echoed raw:\n{}", run.snapshot());
        assert_eq!(snapshot(&env), before, "{named}: nothing is written");
    }
    let run = env.swarm(&[
        "add",
        "--lesson",
        "Keep the tests green before every merge",
        "--agents",
        "coder",
        "--forbid",
        "merging red",
        "--forbid",
        "ring\u{7} the bell",
    ]);
    run.code(2);
    assert!(
        run.stderr
            .contains("error: forbidden_actions[1] contains a bell (U+0007) at character 5"),
        "{}",
        run.snapshot()
    );
    assert_eq!(snapshot(&env), before);
    // NUL cannot be an argument: it comes in a file.
    env.write(
        "new.toml",
        "lesson = \"Keep the tests green before every merge\"\napplies_to_agents = [\"coder\"]\nrequired_actions = [\"run\\u0000 them\"]\n",
    );
    let run = env.swarm(&["add", "--from", "new.toml"]);
    run.code(2);
    assert!(
        run.stderr
            .contains("required_actions[0] contains a NUL (U+0000)"),
        "{}",
        run.snapshot()
    );
    assert_eq!(snapshot(&env), before);
}

#[test]
fn validate_and_edit_refuse_them_at_their_place() {
    let env = repo_without_directives();
    directive(
        &env,
        "bell",
        "lesson = \"Keep the tests green before every merge\"\napplies_to_agents = [\"coder\"]\nforbidden_actions = [\"ring\\u0007 the bell\"]\nsource = \"PR\\u001b[2J 12\"",
    );
    let run = env.swarm(&["validate"]);
    run.code(2);
    for expected in [
        ".swarm/directives/bell.toml:4:22: error: forbidden_actions[0] contains a bell (U+0007) at character 5",
        ".swarm/directives/bell.toml:5:10: error: source contains an escape (U+001B) at character 3",
    ] {
        assert!(
            run.stdout.lines().any(|l| l.starts_with(expected)),
            "{expected}:\n{}",
            run.snapshot()
        );
    }

    directive(
        &env,
        "fine",
        "lesson = \"Keep the tests green before every merge\"\napplies_to_agents = [\"coder\"]\nforbidden_actions = [\"merging red\"]",
    );
    let before = env.read(".swarm/directives/fine.toml");
    let run = env.swarm_with(
        &["edit", "fine"],
        &[(
            "GIT_EDITOR",
            r#"sed -i -e 's/lesson = "Keep/lesson = "\\u202eKeep/'"#,
        )],
        None,
    );
    common::assert_no_panic(&run);
    run.code(2);
    assert!(
        run.stderr
            .contains("lesson contains a bidirectional control (U+202E) at character 1"),
        "{}",
        run.snapshot()
    );
    assert_eq!(env.read(".swarm/directives/fine.toml"), before);
}
