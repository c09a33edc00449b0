//! The man pages in docs/man/ and the help text are generated from the
//! command definitions; these tests keep the committed copies current, so a
//! help change shows in review.

use crate::common;

use std::path::PathBuf;

use common::TestEnv;

const SUBCOMMANDS: &[&[&str]] = &[
    &[],
    &["init"],
    &["add"],
    &["list"],
    &["show"],
    &["validate"],
    &["check"],
    &["log"],
    &["diff"],
    &["stats"],
    &["serve"],
    &["index"],
    &["index", "status"],
    &["index", "refresh"],
    &["index", "rebuild"],
    &["doctor"],
    &["generate"],
    &["trust"],
    &["hooks"],
    &["hooks", "install"],
    &["hooks", "uninstall"],
    &["hooks", "status"],
    &["inject"],
    &["search"],
    &["ack"],
    &["review"],
    &["phase", "complete"],
    &["deescalate"],
    &["status"],
    &["record"],
    &["retire"],
    &["edit"],
    &["explain"],
    &["pattern", "extract"],
    &["pattern", "feedback"],
    &["pattern", "list"],
];

#[test]
fn help_reference() {
    let env = TestEnv::new();
    let mut reference = String::new();
    for sub in SUBCOMMANDS {
        let mut args: Vec<&str> = sub.to_vec();
        args.push("--help");
        let run = env.swarm_with(&args, &[("COLUMNS", "100")], None);
        run.success();
        reference.push_str(&format!(
            "=== git swarm {}\n{}\n",
            sub.join(" "),
            run.stdout
        ));
    }
    insta::assert_snapshot!(reference);
}

#[test]
fn man_pages_are_current() {
    let env = TestEnv::new();
    let out = env.tmp.path().join("man");
    env.swarm_with(
        &["generate", "man", out.to_str().expect("utf-8 temp path")],
        &[],
        None,
    )
    .success();
    let committed = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/man");
    let update = std::env::var_os("UPDATE_DOCS").is_some();
    let mut names: Vec<String> = std::fs::read_dir(&out)
        .expect("generated")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert!(names.contains(&"git-swarm.1".to_owned()), "{names:?}");
    if update {
        let _ = std::fs::remove_dir_all(&committed);
        std::fs::create_dir_all(&committed).expect("mkdir docs/man");
    }
    for name in &names {
        let generated = std::fs::read_to_string(out.join(name)).expect("read page");
        if update {
            std::fs::write(committed.join(name), &generated).expect("write page");
        } else {
            let current = std::fs::read_to_string(committed.join(name)).unwrap_or_default();
            assert_eq!(
                current, generated,
                "docs/man/{name} is stale: run `UPDATE_DOCS=1 cargo test --test it cli_docs::`"
            );
        }
    }
    let mut committed_names: Vec<String> = std::fs::read_dir(&committed)
        .expect("docs/man")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    committed_names.sort();
    assert_eq!(
        committed_names, names,
        "docs/man/ has pages for commands that no longer exist"
    );
}

#[test]
fn completions_are_generated() {
    let env = TestEnv::new();
    let run = env.swarm_with(&["generate", "completions", "bash"], &[], None);
    run.success();
    assert!(
        run.stdout.contains("git__swarm") || run.stdout.contains("git-swarm"),
        "{}",
        &run.stdout[..run.stdout.len().min(300)]
    );
    assert!(run.stdout.contains("validate"));
}

/// A completion script written to a full disk or a closed pipe is an
/// error like any other output's, not a panic.
#[test]
fn completions_to_a_full_disk_or_a_closed_pipe_do_not_panic() {
    let env = TestEnv::new();
    if std::path::Path::new("/dev/full").exists() {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .expect("open /dev/full");
        let out = env
            .command(common::bin(), env.tmp.path())
            .args(["generate", "completions", "bash"])
            .stdout(full)
            .output()
            .expect("run");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{stderr}");
        assert!(stderr.contains("No space left on device"), "{stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
    let mut child = env
        .command(common::bin(), env.tmp.path())
        .args(["generate", "completions", "bash"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("wait");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(0),
        "a closed pipe ends quietly: {stderr}"
    );
    assert_eq!(stderr, "");
}

/// A nested command's page shows the words that run it.
#[test]
fn nested_man_pages_show_their_whole_command() {
    let env = TestEnv::new();
    let out = env.tmp.path().join("man");
    env.swarm(&["generate", "man", out.to_str().expect("utf-8 temp path")])
        .success();
    for (page, words) in [
        ("git-swarm-pattern-inject.1", "git swarm pattern inject"),
        ("git-swarm-hooks-status.1", "git swarm hooks status"),
        ("git-swarm-index-status.1", "git swarm index status"),
        ("git-swarm-list.1", "git swarm list"),
    ] {
        let text = std::fs::read_to_string(out.join(page)).expect("read page");
        let synopsis = text
            .split(".SH SYNOPSIS\n")
            .nth(1)
            .and_then(|s| s.lines().next())
            .unwrap_or_default();
        assert!(
            synopsis.starts_with(&format!("\\fB{words}\\fR")),
            "{page}: {synopsis}"
        );
    }
}

/// Each command's summary in `git swarm -h` is one short line: a summary
/// that wraps is a paragraph that belongs in the command's own help.
#[test]
fn command_summaries_fit_on_one_line() {
    let env = TestEnv::new();
    for group in [
        &[][..],
        &["pattern"],
        &["hooks"],
        &["index"],
        &["phase"],
        &["generate"],
    ] {
        let mut args = group.to_vec();
        args.push("-h");
        let run = env.swarm_with(&args, &[("COLUMNS", "100")], None);
        run.success();
        let commands: Vec<&str> = run
            .stdout
            .lines()
            .skip_while(|l| *l != "Commands:")
            .skip(1)
            .take_while(|l| !l.is_empty())
            .collect();
        assert!(commands.len() > 1, "{}", run.stdout);
        for line in commands {
            assert!(
                !line.starts_with("    "),
                "a summary wraps onto a second line: {line:?}\n{}",
                run.stdout
            );
        }
    }
}
