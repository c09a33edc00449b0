//! Managing directives with commands: `retire`, `edit` and `explain`.

use crate::common;

use common::{Run, TestEnv, of_kind, swarm, tick};
use serde_json::Value;

/// A directive as a human wrote it: comments, key order and spacing that
/// a command must keep.
const HAND_WRITTEN: &str = "\
# Reviewed in #42.
id = \"no-hardcoded-token\"
lesson   = \"Never hardcode the service token in a text file\"   # short
priority = \"high\"
enforcement = \"enforce\"
applies_to_agents = [\"coder\"]
verify = [
  \"grep:HARDCODED_TOKEN:*.txt\",  # the token's marker
]
";

const REL: &str = ".swarm/directives/no-hardcoded-token.toml";

fn repo() -> TestEnv {
    let env = TestEnv::initialised();
    env.write(REL, HAND_WRITTEN);
    env.git(&["add", "-A"]);
    env.git(&["commit", "-q", "-m", "a hand-written directive"]);
    env
}

#[test]
fn retire_sets_the_status_keeps_the_file_and_records_the_reason() {
    let env = repo();
    let run = swarm(
        &env,
        &[
            "retire",
            "no-hardcoded-token",
            "--reason",
            "the token is gone since the vault move",
        ],
    );
    run.success();
    assert!(
        run.stdout.contains("retired no-hardcoded-token"),
        "{}",
        run.snapshot()
    );
    assert_eq!(
        env.read(REL),
        HAND_WRITTEN.replace(
            "id = \"no-hardcoded-token\"\n",
            "id = \"no-hardcoded-token\"\nstatus = \"retired\"\n"
        )
    );
    let retired = of_kind(&env, "retired");
    assert_eq!(retired.len(), 1);
    assert_eq!(retired[0]["directive"], "no-hardcoded-token");
    assert_eq!(
        retired[0]["reason"],
        "the token is gone since the vault move"
    );
    swarm(&env, &["validate"]).success();
    // No longer checked.
    env.write("notes.txt", "HARDCODED_TOKEN\n");
    let check = swarm(&env, &["check", "--worktree", "--format", "json"]);
    check.success();
    assert!(
        !check.stdout.contains("no-hardcoded-token"),
        "{}",
        check.stdout
    );

    // Twice: refused, nothing written.
    let again = swarm(
        &env,
        &[
            "retire",
            "no-hardcoded-token",
            "--reason",
            "the token is gone since the vault move",
        ],
    );
    again.code(2);
    assert!(
        again.stderr.contains("is retired already"),
        "{}",
        again.snapshot()
    );
    assert_eq!(of_kind(&env, "retired").len(), 1);

    // An unknown id, or a reason too short: bad usage with a hint.
    let unknown = swarm(
        &env,
        &["retire", "no-such-rule", "--reason", "a reason long enough"],
    );
    unknown.code(2);
    assert!(
        unknown.stderr.contains("error:") && unknown.stderr.contains("hint:"),
        "{}",
        unknown.snapshot()
    );
    swarm(&env, &["retire", "no-hardcoded-token", "--reason", "old"]).code(2);
}

#[test]
fn retire_replaces_an_existing_status_in_place() {
    let env = repo();
    let text = HAND_WRITTEN.replace(
        "priority = \"high\"\n",
        "priority = \"high\"\nstatus = 'active'  # for now\n",
    );
    env.write(REL, &text);
    swarm(
        &env,
        &[
            "retire",
            "no-hardcoded-token",
            "--reason",
            "superseded by no-secrets",
        ],
    )
    .success();
    assert_eq!(
        env.read(REL),
        text.replace("status = 'active'", "status = \"retired\"")
    );
}

/// An editor script: `sed` through `sh -c`, as git runs editors.
fn edit(env: &TestEnv, editor: &str) -> Run {
    env.swarm_with(
        &["edit", "no-hardcoded-token"],
        &[("GIT_SWARM_NOW", &tick()), ("EDITOR", editor)],
        None,
    )
}

#[test]
fn edit_saves_a_valid_change_and_refuses_an_invalid_one() {
    let env = repo();
    let run = edit(&env, "sed -i -e s/high/critical/");
    run.success();
    assert_eq!(
        env.read(REL),
        HAND_WRITTEN.replace("\"high\"", "\"critical\"")
    );
    assert!(!env.exists(".git/swarm/local/edit/no-hardcoded-token.toml"));

    // GIT_EDITOR comes first, as in git.
    let run = env.swarm_with(
        &["edit", "no-hardcoded-token"],
        &[
            ("GIT_EDITOR", "sed -i -e s/critical/medium/"),
            ("EDITOR", "false"),
        ],
        None,
    );
    run.success();
    assert!(env.read(REL).contains("priority = \"medium\""));

    // An invalid priority: refused, with the line and column, the file unchanged.
    let before = env.read(REL);
    let run = edit(&env, "sed -i -e s/medium/urgent/");
    run.code(2);
    assert!(
        run.stderr
            .contains(".git/swarm/local/edit/no-hardcoded-token.toml:4:12"),
        "{}",
        run.snapshot()
    );
    assert!(run.stderr.contains("is unchanged"), "{}", run.snapshot());
    assert!(
        run.stderr.contains("git swarm edit no-hardcoded-token"),
        "{}",
        run.snapshot()
    );
    assert_eq!(env.read(REL), before);
    assert!(
        env.read(".git/swarm/local/edit/no-hardcoded-token.toml")
            .contains("urgent")
    );

    // Run again: the kept edit is reopened, and a fix saves it.
    let run = edit(&env, "sed -i -e s/urgent/low/");
    run.success();
    assert!(
        run.stderr.contains("reopening the edit kept"),
        "{}",
        run.snapshot()
    );
    assert!(env.read(REL).contains("priority = \"low\""));
    assert!(!env.exists(".git/swarm/local/edit/no-hardcoded-token.toml"));

    // Removing what makes it actionable, or changing the id, is refused too.
    for script in [
        "sed -i -e /applies_to_agents/d",
        "sed -i -e s/no-hardcoded-token/other-id/",
    ] {
        let before = env.read(REL);
        edit(&env, script).code(2);
        assert_eq!(env.read(REL), before, "{script}");
        std::fs::remove_file(env.path(".git/swarm/local/edit/no-hardcoded-token.toml"))
            .expect("kept copy");
    }

    // No change: nothing written.
    let run = edit(&env, "true");
    run.success();
    assert!(run.stdout.contains("no change"), "{}", run.snapshot());

    // An editor that fails leaves the directive alone.
    let before = env.read(REL);
    edit(&env, "sed -i -e s/low/high/ && false").code(2);
    assert_eq!(env.read(REL), before);

    // An unknown id.
    env.swarm_with(&["edit", "nope-nope"], &[("EDITOR", "true")], None)
        .code(2);
}

#[test]
fn explain_lists_the_events_in_time_order_with_their_commits() {
    let env = repo();
    env.swarm(&["hooks", "install"]).success();
    let commit = |message: &str, now: &str| {
        env.command("git", &env.root)
            .args(["commit", "-q", "-m", message])
            .env("GIT_SWARM_NOW", now)
            .output()
            .expect("git commit")
            .status
            .code()
    };
    // Two blocked commits on two days: escalated.
    env.write("a.txt", "HARDCODED_TOKEN\n");
    env.git(&["add", "a.txt"]);
    assert_eq!(commit("a", "2026-11-20T10:00:00Z"), Some(1));
    env.write("a.txt", "HARDCODED_TOKEN again\n");
    env.git(&["add", "a.txt"]);
    assert_eq!(commit("a", "2026-11-21T10:00:00Z"), Some(1));
    // The violations are committed; later events stay uncommitted.
    env.git(&["reset", "-q"]);
    std::fs::remove_file(env.path("a.txt")).expect("rm");
    // The hook would record the commit's own check: skipped, as before.
    env.swarm_with(
        &["commit", "-m", "record the violations"],
        &[("GIT_SWARM_SKIP", "1")],
        None,
    )
    .success();
    let recording = env.git(&["rev-parse", "HEAD"]).trim().to_owned();
    env.swarm_with(
        &[
            "deescalate",
            "no-hardcoded-token",
            "--justification",
            "the team moved to the vault",
        ],
        &[("GIT_SWARM_NOW", "2026-11-22T09:00:00Z")],
        None,
    )
    .success();

    let run = env.swarm_with(
        &["explain", "no-hardcoded-token", "--format", "json"],
        &[("GIT_SWARM_NOW", "2026-11-22T10:00:00Z")],
        None,
    );
    run.success();
    let x: Value = serde_json::from_str(&run.stdout).expect("json");
    assert_eq!(x["declared_priority"], "high");
    assert_eq!(x["effective_priority"], "high");
    let kinds: Vec<&str> = x["events"]
        .as_array()
        .expect("events")
        .iter()
        .map(|e| e["event"]["kind"].as_str().expect("kind"))
        .collect();
    assert_eq!(kinds, ["check", "check", "escalation", "deescalation"]);
    let commits: Vec<Option<&str>> = x["events"]
        .as_array()
        .expect("events")
        .iter()
        .map(|e| e["commit"]["id"].as_str())
        .collect();
    assert_eq!(
        commits,
        [
            Some(recording.as_str()),
            Some(recording.as_str()),
            Some(recording.as_str()),
            None
        ]
    );
    assert_eq!(x["episodes"].as_array().expect("episodes").len(), 1);
    assert!(x["episodes"][0]["ended"].is_string());

    // While escalated, the text says why.
    env.write("b.txt", "HARDCODED_TOKEN\n");
    env.git(&["add", "b.txt"]);
    assert_eq!(commit("b", "2026-11-23T10:00:00Z"), Some(1));
    env.write("b.txt", "HARDCODED_TOKEN again\n");
    env.git(&["add", "b.txt"]);
    assert_eq!(commit("b", "2026-11-24T10:00:00Z"), Some(1));
    let run = swarm(&env, &["explain", "no-hardcoded-token"]);
    run.success();
    let text = &run.stdout;
    assert!(
        text.starts_with("no-hardcoded-token: critical/enforce in force (declared high/enforce)"),
        "{text}"
    );
    assert!(text.contains("episode no-hardcoded-token#2"), "{text}");
    assert!(
        text.contains(&format!("recorded in {}", &recording[..12])),
        "{text}"
    );
    assert!(text.contains("uncommitted"), "{text}");
    let at = |needle: &str| {
        text.find(needle)
            .unwrap_or_else(|| panic!("{needle}: {text}"))
    };
    assert!(
        at("\n  2026-11-20T10") < at("\n  2026-11-21T10")
            && at("\n  2026-11-22T09") < at("\n  2026-11-24T10")
    );

    swarm(&env, &["explain", "no-such-rule"]).code(2);
}

/// Events brought in by a union merge were recorded by the commits of the
/// branch that made them, not by the merge.
#[test]
fn explain_names_the_branch_commit_not_the_merge() {
    let env = repo();
    env.git(&["switch", "-q", "-c", "topic"]);
    env.write("a.txt", "HARDCODED_TOKEN\n");
    env.git(&["add", "a.txt"]);
    swarm(&env, &["check", "--record"]).code(1);
    env.git(&["reset", "-q"]);
    env.swarm(&["commit", "-m", "topic: record a violation"])
        .success();
    let on_topic = env.git(&["rev-parse", "HEAD"]).trim().to_owned();
    std::fs::remove_file(env.path("a.txt")).expect("rm");

    env.git(&["switch", "-q", "main"]);
    env.write("b.txt", "HARDCODED_TOKEN\n");
    env.git(&["add", "b.txt"]);
    swarm(&env, &["check", "--record"]).code(1);
    env.git(&["reset", "-q"]);
    env.swarm(&["commit", "-m", "main: record a violation"])
        .success();
    let on_main = env.git(&["rev-parse", "HEAD"]).trim().to_owned();
    std::fs::remove_file(env.path("b.txt")).expect("rm");
    env.git(&["merge", "-q", "--no-edit", "topic"]);

    let run = swarm(&env, &["explain", "no-hardcoded-token", "--format", "json"]);
    run.success();
    let x: Value = serde_json::from_str(&run.stdout).expect("json");
    let mut commits: Vec<&str> = x["events"]
        .as_array()
        .expect("events")
        .iter()
        .filter(|e| e["event"]["kind"] == "check")
        .map(|e| e["commit"]["id"].as_str().expect("committed"))
        .collect();
    commits.sort_unstable();
    let mut expected = [on_topic.as_str(), on_main.as_str()];
    expected.sort_unstable();
    assert_eq!(commits, expected);
}

/// A change made to the directive while it was open in the editor (a pull,
/// another edit) is not saved over unseen: the save is refused once, the
/// edit kept; reopening it then saves it over the new version.
#[test]
fn edit_refuses_to_save_over_a_change_made_meanwhile() {
    let env = repo();
    let directive = env.path(REL);
    let editor = format!(
        "sed -i -e s/HARDCODED_TOKEN/SERVICE_TOKEN/ {} && sed -i -e s/high/critical/",
        directive.display()
    );
    let run = edit(&env, &editor);
    run.code(2);
    assert!(
        run.stderr.contains(
            "error: .swarm/directives/no-hardcoded-token.toml changed on disk since the edit began"
        ),
        "{}",
        run.snapshot()
    );
    // The change made meanwhile stands; the edit is kept.
    let meanwhile = env.read(REL);
    assert!(meanwhile.contains("SERVICE_TOKEN") && meanwhile.contains("\"high\""));
    assert!(
        env.read(".git/swarm/local/edit/no-hardcoded-token.toml")
            .contains("\"critical\"")
    );
    // Reopened, having been told: saved over the new version.
    edit(&env, "true").success();
    assert!(env.read(REL).contains("\"critical\""));

    // A kept edit reopened after the file changed (a checkout) is refused once too.
    edit(&env, "sed -i -e s/critical/urgent/").code(2);
    env.git(&["checkout", "-q", "--", REL]);
    let run = edit(&env, "sed -i -e s/urgent/low/");
    run.code(2);
    assert!(
        run.stderr.contains("changed on disk since the edit began"),
        "{}",
        run.snapshot()
    );
    assert_eq!(env.read(REL), HAND_WRITTEN);
    edit(&env, "true").success();
    assert!(env.read(REL).contains("priority = \"low\""));
    assert!(!env.exists(".git/swarm/local/edit/no-hardcoded-token.toml"));
}

/// Emptying the file abandons the edit, as an empty message aborts a
/// commit; no editor at all writes nothing; an editor given with a path
/// holding a space and its own arguments runs as git would run it.
#[test]
fn edit_abandoned_or_without_an_editor_leaves_nothing_behind() {
    let env = repo();
    let run = edit(&env, "cp /dev/null");
    run.code(2);
    assert!(
        run.stderr.contains(
            "error: the edit is empty: .swarm/directives/no-hardcoded-token.toml is unchanged"
        ),
        "{}",
        run.snapshot()
    );
    assert_eq!(env.read(REL), HAND_WRITTEN);
    assert!(!env.exists(".git/swarm/local/edit/no-hardcoded-token.toml"));
    // So does removing it (bad input, not an internal error).
    let run = edit(&env, "rm");
    run.code(2);
    assert!(
        run.stderr.contains("error: the edit is empty"),
        "{}",
        run.snapshot()
    );
    assert_eq!(env.read(REL), HAND_WRITTEN);

    // No GIT_EDITOR, core.editor, VISUAL or EDITOR, and no terminal: refused before anything is written.
    let run = env.swarm_with(&["edit", "no-hardcoded-token"], &[("TERM", "dumb")], None);
    run.code(2);
    assert!(
        run.stderr.contains("error: no editor is set"),
        "{}",
        run.snapshot()
    );
    assert!(
        !env.exists(".git/swarm/local/edit/no-hardcoded-token.toml"),
        "{}",
        run.snapshot()
    );
    assert!(!run.stderr.contains("reopening"), "{}", run.snapshot());

    let dir = env.tmp.path().join("my editors");
    std::fs::create_dir(&dir).expect("mkdir");
    let script = dir.join("set priority");
    std::fs::write(
        &script,
        "#!/bin/sh\n[ \"$1\" = --to ] || exit 9\nsed -i -e \"s/high/$2/\" \"$3\"\n",
    )
    .expect("write editor");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    edit(&env, &format!("'{}' --to medium", script.display())).success();
    assert!(env.read(REL).contains("priority = \"medium\""));
}

/// `edit` and `retire` neither read nor write through a linked
/// `.swarm/directives` (a pull request controls it) or `.git/swarm/local`.
#[test]
fn edit_and_retire_do_not_go_through_a_linked_folder() {
    use std::os::unix::fs::symlink;
    let env = repo();
    let outside = env.tmp.path().join("outside-directives");
    std::fs::rename(env.path(".swarm/directives"), &outside).expect("move");
    symlink(&outside, env.path(".swarm/directives")).expect("symlink");
    let target = outside.join("no-hardcoded-token.toml");
    let retire = swarm(
        &env,
        &[
            "retire",
            "no-hardcoded-token",
            "--justification",
            "the token is gone since the vault move",
        ],
    );
    retire.code(2);
    assert!(
        retire
            .stderr
            .contains("error: $TMP/repo/.swarm/directives is a symbolic link"),
        "{}",
        retire.snapshot()
    );
    edit(&env, "sed -i -e s/high/low/").code(2);
    assert_eq!(
        std::fs::read_to_string(&target).expect("read"),
        HAND_WRITTEN
    );
    assert!(of_kind(&env, "retired").is_empty());
    std::fs::remove_file(env.path(".swarm/directives")).expect("unlink");
    std::fs::rename(&outside, env.path(".swarm/directives")).expect("move back");

    let local = env.tmp.path().join("outside-local");
    std::fs::create_dir(&local).expect("mkdir");
    std::fs::create_dir_all(env.path(".git/swarm")).expect("mkdir");
    symlink(&local, env.path(".git/swarm/local")).expect("symlink");
    let run = edit(&env, "sed -i -e s/high/low/");
    run.code(2);
    assert!(
        run.stderr
            .contains("error: $TMP/repo/.git/swarm/local is a symbolic link"),
        "{}",
        run.snapshot()
    );
    assert_eq!(env.read(REL), HAND_WRITTEN);
    assert_eq!(
        std::fs::read_dir(&local).expect("list").count(),
        0,
        "nothing written outside the repository"
    );
}

/// `--justification` says why, as for `deescalate` and `phase complete`;
/// `--reason`, the name users meet first, is accepted and shown as its alias.
#[test]
fn retire_takes_justification_and_the_old_reason() {
    let env = repo();
    let help = swarm(&env, &["retire", "-h"]);
    help.success();
    assert!(
        help.stdout.contains("--justification <TEXT>") && help.stdout.contains("[alias: --reason]"),
        "{}",
        help.stdout
    );
    swarm(
        &env,
        &[
            "retire",
            "no-hardcoded-token",
            "--justification",
            "the token is gone since the vault move",
        ],
    )
    .success();
    env.git(&["checkout", "-q", "--", REL]);
    swarm(
        &env,
        &[
            "retire",
            "no-hardcoded-token",
            "--reason",
            "the token is gone since the vault move",
        ],
    )
    .success();
    assert_eq!(of_kind(&env, "retired").len(), 2);
}

/// A retired directive and a quarantined entry have nothing in force, and
/// `explain` says so rather than show the file's priority as in force.
#[test]
fn explain_says_nothing_is_in_force_for_a_retired_or_quarantined_entry() {
    let env = repo();
    swarm(
        &env,
        &[
            "retire",
            "no-hardcoded-token",
            "--justification",
            "the token is gone since the vault move",
        ],
    )
    .success();
    let run = swarm(&env, &["explain", "no-hardcoded-token"]);
    run.success();
    assert!(
        run.stdout.starts_with(
            "no-hardcoded-token: nothing in force (declared high/enforce, retired)\n  retired: not checked or injected"
        ),
        "{}",
        run.snapshot()
    );

    let add = swarm(
        &env,
        &[
            "add",
            "--lesson",
            "Keep the changelog in step with the code",
            "--verify",
            "file_modified:CHANGELOG.md",
        ],
    );
    add.code(1);
    let run = swarm(
        &env,
        &["explain", "keep-the-changelog-in-step-with-the-code"],
    );
    run.success();
    assert!(
        run.stdout.starts_with(
            "keep-the-changelog-in-step-with-the-code: nothing in force\n  quarantined (missing_scope)"
        ),
        "{}",
        run.snapshot()
    );
    let json = swarm(
        &env,
        &[
            "explain",
            "keep-the-changelog-in-step-with-the-code",
            "--format",
            "json",
        ],
    );
    json.success();
    let x: Value = serde_json::from_str(&json.stdout).expect("json");
    assert!(x["effective_priority"].is_null());
    assert!(
        x["why"].as_str().expect("why").starts_with("quarantined"),
        "{x}"
    );
}

/// A justification the log cannot take leaves the directive as it was: a
/// retirement is the file and its event, or neither.
#[test]
fn retire_with_a_justification_the_log_cannot_take_changes_nothing() {
    let env = repo();
    let huge = "a".repeat(100_000);
    let run = swarm(
        &env,
        &["retire", "no-hardcoded-token", "--justification", &huge],
    );
    run.code(2);
    assert!(
        run.stderr
            .contains("error: the justification is 100000 characters; at most 500 are recorded"),
        "{}",
        run.snapshot()
    );
    assert_eq!(env.read(REL), HAND_WRITTEN);

    // Within the character limit, but over the configured line size.
    let config = env.read(".swarm/config.toml");
    assert!(config.contains("max_line_bytes = 65536"), "{config}");
    env.write(
        ".swarm/config.toml",
        config.replace("max_line_bytes = 65536", "max_line_bytes = 1024"),
    );
    let wide = "🦀".repeat(400);
    let run = swarm(
        &env,
        &["retire", "no-hardcoded-token", "--justification", &wide],
    );
    run.code(2);
    assert!(
        run.stderr.contains("over events.max_line_bytes (1024)"),
        "{}",
        run.snapshot()
    );
    assert_eq!(env.read(REL), HAND_WRITTEN);
    assert!(of_kind(&env, "retired").is_empty());
}

/// A mistyped id names the likeliest intended one, in every command that
/// takes a directive's id.
#[test]
fn a_mistyped_id_names_the_likeliest_directive() {
    let env = repo();
    for args in [
        &["show", "no-hardcoded-tokn"][..],
        &["explain", "no-hardcoded-tokn"],
        &["edit", "no-hardcoded-tokn"],
        &[
            "retire",
            "no-hardcoded-tokn",
            "--justification",
            "the token is gone since the vault move",
        ],
    ] {
        let run = env.swarm_with(args, &[("EDITOR", "true")], None);
        run.code(2);
        assert!(
            run.stderr
                .contains("error: no directive or quarantined entry with id `no-hardcoded-tokn`")
                && run
                    .stderr
                    .contains("hint: did you mean `no-hardcoded-token`?"),
            "{args:?}: {}",
            run.snapshot()
        );
    }
}

/// A directive whose file does not pass `validate` is not retired (it would
/// be written back as broken), and the refusal says how to mend it.
#[test]
fn retire_of_a_broken_directive_says_how_to_mend_it() {
    let env = repo();
    let broken = HAND_WRITTEN.replace("\"high\"", "\"urgent\"");
    env.write(REL, &broken);
    let run = swarm(
        &env,
        &[
            "retire",
            "no-hardcoded-token",
            "--justification",
            "the token is gone since the vault move",
        ],
    );
    run.code(2);
    assert!(
        run.stderr
            .contains(".swarm/directives/no-hardcoded-token.toml:4:12: error:")
            && run.stderr.contains(
                "error: .swarm/directives/no-hardcoded-token.toml has 1 problem(s): not retired"
            )
            && run
                .stderr
                .contains("hint: fix them with `git swarm edit no-hardcoded-token`"),
        "{}",
        run.snapshot()
    );
    assert_eq!(env.read(REL), broken);
    assert!(of_kind(&env, "retired").is_empty());
}

#[test]
fn explain_names_the_rebased_commit_a_cherry_pick_and_nothing_uncommitted() {
    let env = repo();
    let recorded = |file: &str, message: &str| {
        env.write(file, "HARDCODED_TOKEN\n");
        env.git(&["add", file]);
        swarm(&env, &["check", "--record"]).code(1);
        env.git(&["reset", "-q"]);
        std::fs::remove_file(env.path(file)).expect("rm");
        env.swarm(&["commit", "-m", message]).success();
        env.git(&["rev-parse", "HEAD"]).trim().to_owned()
    };
    env.git(&["switch", "-q", "-c", "topic"]);
    let before_rebase = recorded("a.txt", "topic: record a violation");
    env.git(&["switch", "-q", "main"]);
    let on_main = recorded("b.txt", "main: record a violation");
    // Rebased onto main: the line is recorded by the new commit.
    env.git(&["switch", "-q", "topic"]);
    env.git(&["rebase", "-q", "main"]);
    let rebased = env.git(&["rev-parse", "HEAD"]).trim().to_owned();
    assert_ne!(rebased, before_rebase);
    // Cherry-picked onto another branch from main: two commits add the line.
    env.git(&["switch", "-q", "-c", "copy", &on_main]);
    env.write("other.md", "unrelated\n");
    env.git(&["add", "other.md"]);
    env.git(&["commit", "-q", "-m", "copy: something else"]);
    env.git(&["cherry-pick", &rebased]);
    let picked = env.git(&["rev-parse", "HEAD"]).trim().to_owned();
    env.git(&["merge", "-q", "--no-edit", "topic"]);
    let merge = env.git(&["rev-parse", "HEAD"]).trim().to_owned();
    assert!(env.git(&["rev-parse", "HEAD^2"]).contains(&rebased));
    assert_ne!(picked, rebased);
    // One more, never committed.
    env.write("c.txt", "HARDCODED_TOKEN\n");
    env.git(&["add", "c.txt"]);
    swarm(&env, &["check", "--record"]).code(1);

    let run = swarm(&env, &["explain", "no-hardcoded-token", "--format", "json"]);
    run.success();
    let x: Value = serde_json::from_str(&run.stdout).expect("json");
    let commits: Vec<Value> = x["events"]
        .as_array()
        .expect("events")
        .iter()
        .filter(|e| e["event"]["kind"] == "check")
        .map(|e| e["commit"]["id"].clone())
        .collect();
    assert_eq!(commits.len(), 3, "{x:#}");
    let commit = |c: &str| Value::from(c);
    // Oldest first: the one recorded on topic, then main's.
    assert!(
        [commit(&rebased), commit(&picked)].contains(&commits[0]),
        "neither the commit before the rebase nor the merge: {x:#}"
    );
    assert_ne!(commits[0], commit(&merge));
    assert_eq!(commits[1], commit(&on_main), "{x:#}");
    assert_eq!(commits[2], Value::Null, "uncommitted: {x:#}");
    let text = swarm(&env, &["explain", "no-hardcoded-token"]);
    assert!(text.stdout.contains("uncommitted"), "{}", text.snapshot());
}

#[test]
fn a_retired_directive_is_not_injected_listed_as_a_violation_or_gating_a_phase() {
    let env = repo();
    env.write(
        ".swarm/directives/release-review.toml",
        "id = \"release-review\"\nlesson = \"Never push to the release branch without a review\"\npriority = \"critical\"\nenforcement = \"enforce\"\napplies_to_agents = [\"coder\"]\nverify = [\"grep:PUSH_RELEASE:*.sh\"]\n",
    );
    env.git(&["add", "-A"]);
    env.git(&["commit", "-q", "-m", "a critical directive"]);
    let block = swarm(
        &env,
        &[
            "inject",
            "--role",
            "coder",
            "--task",
            "release push",
            "--phase",
            "1",
        ],
    );
    block.success();
    assert!(
        block.stdout.contains("release-review"),
        "{}",
        block.snapshot()
    );
    let delegation = of_kind(&env, "shown")[0]["id"]
        .as_str()
        .expect("a delegation id")
        .to_owned();
    env.write("final.md", "Done, without acks.\n");
    swarm(&env, &["ack", "--delegation", &delegation, "final.md"]).success();
    swarm(&env, &["phase", "complete", "1"]).code(1);
    let status: Value =
        serde_json::from_str(&swarm(&env, &["status", "--format", "json"]).stdout).expect("json");
    let unremediated = |status: &Value| -> Vec<String> {
        status["unremediated_violations"]
            .as_array()
            .expect("array")
            .iter()
            .map(|u| u["id"].as_str().expect("id").to_owned())
            .collect()
    };
    assert!(unremediated(&status).contains(&"release-review".to_owned()));
    let unacknowledged = |status: &Value| -> Vec<String> {
        status["unacknowledged_criticals"]
            .as_array()
            .expect("array")
            .iter()
            .map(|u| u[0].as_str().expect("id").to_owned())
            .collect()
    };
    assert!(unacknowledged(&status).contains(&"release-review".to_owned()));

    swarm(
        &env,
        &[
            "retire",
            "release-review",
            "--reason",
            "the release branch is protected on the server now",
        ],
    )
    .success();
    assert_eq!(of_kind(&env, "retired").len(), 1);
    let listed = swarm(&env, &["list", "--state", "retired"]);
    assert!(
        listed.stdout.contains("release-review"),
        "{}",
        listed.snapshot()
    );
    let active = swarm(&env, &["list", "--state", "active"]);
    assert!(
        !active.stdout.contains("release-review"),
        "{}",
        active.snapshot()
    );
    let block = swarm(
        &env,
        &[
            "inject",
            "--role",
            "coder",
            "--task",
            "release push",
            "--phase",
            "2",
        ],
    );
    assert!(
        !block.stdout.contains("release-review"),
        "{}",
        block.snapshot()
    );
    let status: Value =
        serde_json::from_str(&swarm(&env, &["status", "--format", "json"]).stdout).expect("json");
    assert!(
        !unremediated(&status).contains(&"release-review".to_owned())
            && !unacknowledged(&status).contains(&"release-review".to_owned()),
        "{status:#}"
    );
    let explained = swarm(&env, &["explain", "release-review"]);
    explained.success();
    assert!(
        explained
            .stdout
            .starts_with("release-review: nothing in force (declared critical/enforce, retired)"),
        "{}",
        explained.snapshot()
    );
    // The starter critical still gates the phase; the retired one no longer does.
    let gate = swarm(&env, &["phase", "complete", "1"]);
    gate.code(1);
    assert!(
        !gate.stdout.contains("release-review"),
        "{}",
        gate.snapshot()
    );
    assert!(
        gate.stdout.contains("no-private-keys"),
        "{}",
        gate.snapshot()
    );
    // A review of the phase owes it no verdict: no omission is recorded.
    env.write("verdicts.txt", "VERIFIED:no-private-keys\n");
    swarm(
        &env,
        &["review", "--phase", "1", "--verdicts", "verdicts.txt"],
    );
    assert!(
        of_kind(&env, "verdict")
            .iter()
            .all(|v| v["directive"] != "release-review"),
        "{:#?}",
        of_kind(&env, "verdict")
    );
}
