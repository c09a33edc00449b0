//! Files under `.swarm/` are untrusted input: a pull request can commit a
//! symbolic link in place of an event file, a directive, `config.toml` or a
//! whole folder, pointing anywhere; a local user can leave a FIFO. Only
//! regular files inside the repository are read or written (DESIGN §2,
//! principle 5), and no further than the configured limits: anything else
//! is skipped and reported (`validate` exits 2, other commands warn and go
//! on), never followed, read, written through or waited on, and the hooks
//! still block.
//!
//! Every command here runs under a time limit: a command that waits on a
//! FIFO or reads `/dev/zero` fails the test instead of hanging it.
#![cfg(unix)]

use crate::common;

use std::os::unix::fs::symlink;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{Run, TestEnv};

/// Split so that no line of this file is a key line: this repository
/// checks its own commits with `no-private-keys`.
const KEY_LINE: &str = concat!("-----BEGIN ", "OPENSSH PRIVATE KEY-----");

/// What a file outside the repository holds: it must never be shown.
const SECRET: &str = "token = \"hunter2-SECRET-TOKEN\"\n";

/// Runs `cmd` with a time limit, its output in files (never a full pipe);
/// kills its whole process group and fails the test when it runs over.
fn timed(env: &TestEnv, mut cmd: Command, what: &str) -> Run {
    let out_path = env.tmp.path().join("timed.out");
    let err_path = env.tmp.path().join("timed.err");
    let out = std::fs::File::create(&out_path).expect("stdout file");
    let err = std::fs::File::create(&err_path).expect("stderr file");
    cmd.stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .process_group(0);
    let mut child = cmd.spawn().expect("spawn");
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if start.elapsed() > Duration::from_secs(30) {
            // SAFETY: kill(2) on the process group this test started.
            unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
            let _ = child.wait();
            panic!("`{what}` did not finish within 30 s: it waited on or read a hostile file");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let read = |p: &Path| {
        env.normalise(&String::from_utf8_lossy(
            &std::fs::read(p).expect("read output"),
        ))
    };
    let run = Run {
        code: status.code().unwrap_or(-1),
        stdout: read(&out_path),
        stderr: read(&err_path),
    };
    common::assert_no_panic(&run);
    assert!(
        !run.stdout.contains("hunter2") && !run.stderr.contains("hunter2"),
        "`{what}` showed what a file outside the repository holds:\n{}",
        run.snapshot()
    );
    run
}

/// `git-swarm ARGS` in the repository, under the time limit.
fn swarm(env: &TestEnv, args: &[&str]) -> Run {
    let mut cmd = env.command(common::bin(), &env.root);
    cmd.args(args);
    timed(env, cmd, &format!("git swarm {}", args.join(" ")))
}

/// `git ARGS` in the repository (hooks included), under the time limit.
fn git(env: &TestEnv, args: &[&str]) -> Run {
    let mut cmd = env.command("git", &env.root);
    cmd.args(args);
    timed(env, cmd, &format!("git {}", args.join(" ")))
}

/// A file outside the repository, next to it, holding [`SECRET`].
fn outside_file(env: &TestEnv, name: &str) -> std::path::PathBuf {
    let path = env.tmp.path().join(name);
    std::fs::write(&path, SECRET).expect("write outside file");
    path
}

fn head(env: &TestEnv) -> String {
    env.git(&["rev-parse", "HEAD"]).trim().to_owned()
}

/// Stages a private key and tries to commit it with the hooks installed:
/// the template's `no-private-keys` (enforce, critical) must refuse it.
#[track_caller]
fn assert_key_commit_refused(env: &TestEnv) {
    assert_key_commit_refused_by(env, git);
}

/// [`assert_key_commit_refused`], with `git` running the commit.
#[track_caller]
fn assert_key_commit_refused_by(env: &TestEnv, git: fn(&TestEnv, &[&str]) -> Run) {
    env.write("deploy.pem", format!("{KEY_LINE}\nAAAA\n"));
    env.git(&["add", "deploy.pem"]);
    let before = head(env);
    let run = git(env, &["commit", "-q", "-m", "add the deploy key"]);
    run.code(1);
    assert!(
        run.stderr.contains("no-private-keys") && !run.stderr.contains("did not run"),
        "{}",
        run.snapshot()
    );
    assert_eq!(head(env), before, "no commit was made");
    env.git(&["rm", "-q", "--cached", "deploy.pem"]);
    std::fs::remove_file(env.path("deploy.pem")).expect("rm key");
}

/// The commands that read `.swarm/`: none may stop (exit 3), hang or show
/// what a link points to; `validate` fails (exit 2) and names `rel`.
#[track_caller]
fn assert_readers_skip(env: &TestEnv, rel: &str, what: &str) {
    let run = swarm(env, &["validate"]);
    run.code(2);
    assert!(
        run.stdout.contains(rel) || run.stderr.contains(rel),
        "{}",
        run.snapshot()
    );
    assert!(
        run.stdout.contains(what) || run.stderr.contains(what),
        "{}",
        run.snapshot()
    );
    for args in [
        &["list"][..],
        &["status"],
        &["log"],
        &["doctor"],
        &["search", "private keys"],
        &["inject", "--role", "coder"],
        &["check", "--staged"],
        &["show", "no-private-keys"],
    ] {
        let run = swarm(env, args);
        assert!(
            run.code != 3,
            "`{}` stopped:\n{}",
            args.join(" "),
            run.snapshot()
        );
    }
}

/// A symlink committed as an event file, pointing at a file outside the
/// repository whose last line has no newline (what `doctor --fix` would
/// cut as a torn line): `doctor` reports it, `--fix` leaves the file as it
/// was, and nothing reads it.
#[test]
fn doctor_fix_never_cuts_a_file_outside_through_an_event_link() {
    let env = TestEnv::initialised();
    let notes = env.tmp.path().join("notes.txt");
    std::fs::write(&notes, "one\ntwo\nhunter2 last line without newline").expect("write");
    symlink(
        "../../../notes.txt",
        env.path(".swarm/events/2020-01.jsonl"),
    )
    .expect("symlink");
    env.git(&["add", "-A"]);
    env.git(&["commit", "-q", "-m", "a link in the log"]);

    let run = swarm(&env, &["doctor"]);
    run.code(1);
    assert!(
        run.stdout
            .contains(".swarm/events/2020-01.jsonl: error: a symbolic link, not a regular file"),
        "{}",
        run.snapshot()
    );
    assert!(
        !run.stdout.contains("torn") && !run.stdout.contains("incomplete"),
        "{}",
        run.snapshot()
    );
    let run = swarm(&env, &["doctor", "--fix"]);
    run.code(1);
    assert_eq!(
        std::fs::read_to_string(&notes).expect("read"),
        "one\ntwo\nhunter2 last line without newline",
        "the file outside the repository is untouched"
    );
    assert!(!env.exists(".swarm/local/torn"), "nothing was set aside");
    assert_readers_skip(&env, ".swarm/events/2020-01.jsonl", "symbolic link");
}

/// `/dev/zero` and a FIFO in the log: read neither (no memory exhausted,
/// no wait), each reported.
#[test]
fn an_event_file_that_is_a_device_or_a_fifo_is_not_read() {
    let env = TestEnv::initialised();
    symlink("/dev/zero", env.path(".swarm/events/2020-01.jsonl")).expect("symlink");
    common::mkfifo(&env.path(".swarm/events/2020-02.jsonl"));
    let run = swarm(&env, &["doctor", "--fix"]);
    run.code(1);
    assert!(
        run.stdout.contains("2020-01.jsonl: error: a symbolic link"),
        "{}",
        run.snapshot()
    );
    assert!(
        run.stdout
            .contains("2020-02.jsonl: error: a FIFO (named pipe), not a regular file"),
        "{}",
        run.snapshot()
    );
    assert_readers_skip(&env, ".swarm/events/2020-02.jsonl", "FIFO");
    std::fs::remove_file(env.path(".swarm/events/2020-02.jsonl")).expect("rm");
    // `git swarm commit` refuses a FIFO in place of this month's tracked
    // file: bad input, not a hang, and the events stay pending.
    common::mkfifo(&env.path(".swarm/events/2026-11.jsonl"));
    commit_refuses(&env, "is a FIFO (named pipe), not a regular file");
    std::fs::remove_file(env.path(".swarm/events/2026-11.jsonl")).expect("rm");
    // Appends refuse the FIFO in place of this month's pending file.
    // `inject` above recorded a `shown` event there.
    std::fs::remove_file(env.path(common::PENDING_NOV)).expect("rm");
    common::mkfifo(&env.path(common::PENDING_NOV));
    let run = swarm(&env, &["record", "--custom", "note"]);
    run.code(2);
    assert!(
        run.stderr
            .contains("is a FIFO (named pipe), not a regular file"),
        "{}",
        run.snapshot()
    );
}

/// One link in `.swarm/events/` does not turn the gate off: every reading
/// command goes on with a warning, and the pre-commit hook still refuses a
/// private key — also when the link stands for this month's file, where
/// `git swarm commit` would put the failed check the hook recorded.
#[test]
fn an_event_file_link_does_not_turn_the_gate_off() {
    let env = TestEnv::initialised();
    let target = outside_file(&env, "passwd");
    symlink(&target, env.path(".swarm/events/2020-01.jsonl")).expect("symlink");
    symlink(&target, env.path(".swarm/events/2026-11.jsonl")).expect("symlink");
    env.git(&["add", "-A"]);
    env.git(&["commit", "-q", "-m", "links in the log"]);
    env.swarm(&["hooks", "install"]).success();

    let run = swarm(&env, &["list"]);
    run.success();
    assert!(
        run.stderr.contains("warning: 2 problems in .swarm/"),
        "{}",
        run.snapshot()
    );
    assert_readers_skip(&env, ".swarm/events/2026-11.jsonl", "symbolic link");
    assert_key_commit_refused(&env);
    assert_eq!(
        std::fs::read_to_string(&target).expect("read"),
        SECRET,
        "nothing was written through the link"
    );
    // Recorded in the pending log; the commit that would move it through
    // the link is refused.
    swarm(&env, &["record", "--custom", "note"]).success();
    let run = swarm(&env, &["commit"]);
    run.code(2);
    assert!(
        run.stderr
            .contains("2026-11.jsonl is a symbolic link, not a regular file"),
        "{}",
        run.snapshot()
    );
    assert_eq!(std::fs::read_to_string(&target).expect("read"), SECRET);
}

/// `config.toml` as a link to `/dev/zero`, `/dev/stdin` or a file outside,
/// or as a FIFO: not read (the defaults are used, the problem reported), no
/// command hangs, and the hook still blocks.
#[test]
fn a_config_toml_that_is_not_a_regular_file_is_not_read() {
    let env = TestEnv::initialised();
    env.swarm(&["hooks", "install"]).success();
    let config = env.path(".swarm/config.toml");
    let outside = outside_file(&env, "config.toml");
    for (target, what) in [
        (Some(Path::new("/dev/zero")), "a symbolic link"),
        (Some(Path::new("/dev/stdin")), "a symbolic link"),
        (Some(outside.as_path()), "a symbolic link"),
        (None, "a FIFO (named pipe)"),
    ] {
        std::fs::remove_file(&config).expect("rm config");
        match target {
            Some(t) => symlink(t, &config).expect("symlink"),
            None => common::mkfifo(&config),
        }
        let run = swarm(&env, &["list"]);
        run.success();
        assert!(
            run.stderr.contains(&format!(
                ".swarm/config.toml: error: {what}, not a regular file: not read, the defaults are in use"
            )),
            "{}",
            run.snapshot()
        );
        assert_readers_skip(&env, ".swarm/config.toml", what);
        assert_key_commit_refused(&env);
    }
}

/// A directive file that is a link to a credentials file outside: never
/// read, so its values are never echoed; every command says what it is —
/// in the working tree, in the index (the hook) and in a commit.
#[test]
fn a_directive_link_is_not_followed() {
    let env = TestEnv::initialised();
    let creds = outside_file(&env, "creds.toml");
    symlink(&creds, env.path(".swarm/directives/creds.toml")).expect("symlink");
    let said = ".swarm/directives/creds.toml: error: a symbolic link, not a regular file: skipped, not read";

    let run = swarm(&env, &["validate"]);
    run.code(2);
    assert!(run.stdout.contains(said), "{}", run.snapshot());
    let run = swarm(&env, &["show", "creds"]);
    run.code(2);
    assert!(run.stderr.contains(said), "{}", run.snapshot());
    let run = swarm(&env, &["check", "--worktree"]);
    run.code(2);
    assert!(run.stderr.contains(said), "{}", run.snapshot());
    assert_readers_skip(&env, ".swarm/directives/creds.toml", "symbolic link");

    // Staged: the hook reports it and still checks the other directives,
    // and refuses the commit that brings it.
    env.swarm(&["hooks", "install"]).success();
    env.git(&["add", "-A"]);
    assert_key_commit_refused(&env);
    let run = git(&env, &["commit", "-q", "-m", "a directive link"]);
    run.code(1);
    assert!(
        run.stderr.contains(said) && run.stderr.contains("rejects: .swarm/directives/creds.toml"),
        "{}",
        run.snapshot()
    );
    env.git(&["commit", "-q", "--no-verify", "-m", "a directive link"]);
    // Committed: read from the tree, where a link is a blob holding its target's path.
    let run = swarm(&env, &["check", "--commit", "HEAD"]);
    run.code(2);
    assert!(run.stderr.contains(said), "{}", run.snapshot());
    assert!(!run.stderr.contains("creds.toml\""), "{}", run.snapshot());
}

/// Replaces `.swarm/<folder>` (or `.swarm/` itself, for "") by a link to a
/// folder outside holding the same files; returns that folder.
fn link_folder(env: &TestEnv, folder: &str) -> std::path::PathBuf {
    let rel = if folder.is_empty() {
        ".swarm".to_owned()
    } else {
        format!(".swarm/{folder}")
    };
    let outside = env
        .tmp
        .path()
        .join(format!("outside-{}", folder.replace('/', "-")));
    std::fs::rename(env.path(&rel), &outside).expect("move the folder out");
    symlink(&outside, env.path(&rel)).expect("symlink");
    outside
}

/// Every file under `dir`, with its contents.
fn snapshot_of(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).expect("list") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                todo.push(p);
            } else {
                out.push((p.display().to_string(), std::fs::read(&p).expect("read")));
            }
        }
    }
    out.sort();
    out
}

/// `.swarm/events` as a link to a folder outside: nothing is written there
/// (the hook's record, `inject`'s `shown` event and `record` wait in the
/// pending log; `git swarm commit` refuses to move them through the link),
/// and the hook still blocks.
#[test]
fn no_event_is_written_through_a_linked_events_folder() {
    let env = TestEnv::initialised();
    let outside = link_folder(&env, "events");
    let before = snapshot_of(&outside);
    env.swarm(&["hooks", "install"]).success();
    assert_key_commit_refused(&env);
    for args in [
        &["inject", "--role", "coder"][..],
        &["record", "--custom", "note"],
    ] {
        swarm(&env, args).success();
    }
    commit_refuses(
        &env,
        "error: $TMP/repo/.swarm/events is a symbolic link, not a folder of its own",
    );
    let run = swarm(&env, &["validate"]);
    run.code(2);
    assert!(
        run.stdout
            .contains(".swarm/events: error: a symbolic link, not a folder"),
        "{}",
        run.snapshot()
    );
    assert_eq!(
        snapshot_of(&outside),
        before,
        "nothing was written outside the repository"
    );
}

/// `.swarm/directives` as a link: its files are not read, and `add` does not
/// write there.
#[test]
fn no_directive_is_read_or_written_through_a_linked_folder() {
    let env = TestEnv::initialised();
    let outside = link_folder(&env, "directives");
    std::fs::write(outside.join("creds.toml"), SECRET).expect("write");
    let before = snapshot_of(&outside);
    let run = swarm(&env, &["list"]);
    run.success();
    assert!(
        run.stdout.contains("No directives match"),
        "{}",
        run.snapshot()
    );
    assert!(
        run.stderr
            .contains(".swarm/directives: error: a symbolic link, not a folder"),
        "{}",
        run.snapshot()
    );
    let run = swarm(
        &env,
        &[
            "add",
            "--lesson",
            "Pin every tool version in CI",
            "--agents",
            "coder",
            "--require",
            "a pinned version",
        ],
    );
    run.code(2);
    assert!(
        run.stderr
            .contains("is a symbolic link, not a folder of its own"),
        "{}",
        run.snapshot()
    );
    // Nor do the commands that change a directive's file in place.
    for args in [
        &[
            "retire",
            "no-private-keys",
            "--reason",
            "no longer needed here",
        ][..],
        &["edit", "no-private-keys"],
    ] {
        let run = edit_with_sed(&env, args);
        run.code(2);
        assert!(
            run.stderr.contains(
                "error: $TMP/repo/.swarm/directives is a symbolic link, not a folder of its own"
            ),
            "{}",
            run.snapshot()
        );
    }
    assert_readers_skip(&env, ".swarm/directives", "symbolic link");
    assert_eq!(
        snapshot_of(&outside),
        before,
        "nothing was written outside the repository"
    );
}

/// `git swarm ARGS` with an editor that would lower `critical` to `low`.
fn edit_with_sed(env: &TestEnv, args: &[&str]) -> Run {
    let mut cmd = env.command(common::bin(), &env.root);
    cmd.args(args).env("GIT_EDITOR", "sed -i s/critical/low/");
    timed(env, cmd, &format!("git swarm {}", args.join(" ")))
}

/// `.swarm/` itself as a link: every command refuses it (bad input), none
/// reads or writes through it; the hook says so and git goes on (there is
/// no knowledge inside the repository to check with).
#[test]
fn a_linked_swarm_folder_is_refused() {
    let env = TestEnv::initialised();
    env.swarm(&["hooks", "install"]).success();
    let outside = link_folder(&env, "");
    let before = snapshot_of(&outside);
    for args in [
        &["list"][..],
        &["validate"],
        &["init"],
        &["record", "--custom", "note"],
        &["inject", "--role", "coder"],
    ] {
        let run = swarm(&env, args);
        run.code(2);
        assert!(
            run.stderr
                .contains("error: $TMP/repo/.swarm is a symbolic link, not a folder of its own"),
            "{}",
            run.snapshot()
        );
    }
    env.write("notes.txt", "notes\n");
    env.git(&["add", "notes.txt"]);
    let run = git(&env, &["commit", "-q", "-m", "notes"]);
    run.success();
    assert!(
        run.stderr.contains("hook did not run") && run.stderr.contains("symbolic link"),
        "{}",
        run.snapshot()
    );
    assert_eq!(
        snapshot_of(&outside),
        before,
        "nothing was written outside the repository"
    );
}

/// A staged link whose target path is, byte for byte, a directive that was
/// staged before as a regular file: the same blob id. The parse cached for
/// the regular file is not taken for the link, which is reported.
#[test]
fn a_staged_link_is_not_taken_for_the_file_with_the_same_blob() {
    let env = TestEnv::initialised();
    let text = common::directive_toml("tricky", "A lesson that is also a link target");
    env.write(".swarm/directives/tricky.toml", &text);
    env.git(&["add", "-A"]);
    let run = swarm(&env, &["check", "--staged"]);
    run.success();
    let before = env.git(&["ls-files", "-s", ".swarm/directives/tricky.toml"]);
    std::fs::remove_file(env.path(".swarm/directives/tricky.toml")).expect("rm");
    symlink(&text, env.path(".swarm/directives/tricky.toml")).expect("symlink");
    env.git(&["add", "-A"]);
    let after = env.git(&["ls-files", "-s", ".swarm/directives/tricky.toml"]);
    assert_eq!(
        before.split_whitespace().nth(1),
        after.split_whitespace().nth(1),
        "the same blob"
    );
    assert!(after.starts_with("120000"), "{after}");
    let run = swarm(&env, &["check", "--staged"]);
    run.code(2);
    assert!(
        run.stderr
            .contains(".swarm/directives/tricky.toml: error: a symbolic link, not a regular file"),
        "{}",
        run.snapshot()
    );
}

/// `.swarm/local` is ignored by git only as a folder: a link of that name
/// can be committed. Nothing is written through it — `ack`'s audit of
/// unacknowledged criticals goes to the git dir, a torn line an append to
/// the pending log sets aside goes to the git dir too, and one that
/// `git swarm commit` meets in the tracked log is not set aside there.
#[test]
fn nothing_is_written_through_a_linked_local_folder() {
    let env = TestEnv::initialised();
    let outside = env.tmp.path().join("outside-local");
    std::fs::create_dir(&outside).expect("mkdir");
    symlink(&outside, env.path(".swarm/local")).expect("symlink");
    env.git(&["add", "-A"]);
    env.git(&["commit", "-q", "-m", "a linked local folder"]);

    swarm(&env, &["inject", "--role", "coder"]).success();
    // The delegation is the `shown` event (output is normalised: ids read from the log).
    let lines = env.event_lines();
    let shown: serde_json::Value =
        serde_json::from_str(lines.last().expect("a shown event")).expect("json");
    let delegation = shown["id"].as_str().expect("delegation id").to_owned();
    env.write("final.txt", "Done: the change is in.\n");
    let run = swarm(&env, &["ack", "--delegation", &delegation, "final.txt"]);
    run.success();
    assert!(
        env.exists(".git/swarm/local/unacknowledged-criticals.jsonl"),
        "{}",
        run.snapshot()
    );
    assert_eq!(snapshot_of(&outside), Vec::new(), "{}", run.snapshot());

    env.write(
        common::PENDING_NOV,
        format!("{}{{\"id\":\"torn", env.read(common::PENDING_NOV)),
    );
    let run = swarm(&env, &["record", "--custom", "note"]);
    run.success();
    let tracked = ".swarm/events/2026-11.jsonl";
    env.write(tracked, "{\"id\":\"torn");
    swarm(&env, &["commit"]).success();
    // `edit` keeps its copy in the git dir: not through the link.
    edit_with_sed(&env, &["edit", "no-private-keys"]).success();
    assert_eq!(
        snapshot_of(&outside),
        Vec::new(),
        "nothing was written outside the repository"
    );
}

/// A submodule (a gitlink, mode 160000) staged or committed as a directive
/// file: its id is a commit's, not a blob's, so it is reported as what it
/// is and skipped; it neither stops the check (exit 3) nor turns the
/// pre-commit hook off, and a submodule standing for the whole folder is
/// reported too.
#[test]
fn a_submodule_in_place_of_a_directive_does_not_turn_the_gate_off() {
    let env = TestEnv::initialised();
    env.swarm(&["hooks", "install"]).success();
    let commit = head(&env);
    env.git(&[
        "update-index",
        "--add",
        "--cacheinfo",
        &format!("160000,{commit},.swarm/directives/sub.toml"),
    ]);
    let said = ".swarm/directives/sub.toml: error: a submodule (gitlink), not a regular file: skipped, not read";
    let run = swarm(&env, &["check", "--staged"]);
    run.code(2);
    assert!(run.stderr.contains(said), "{}", run.snapshot());
    assert_key_commit_refused(&env);
    env.git(&["commit", "-q", "-m", "a submodule among the directives"]);
    let run = swarm(&env, &["check", "--commit", "HEAD"]);
    run.code(2);
    assert!(run.stderr.contains(said), "{}", run.snapshot());

    // The whole folder a submodule, in a commit.
    env.git(&["rm", "-q", "-r", "--cached", ".swarm/directives"]);
    env.git(&[
        "update-index",
        "--add",
        "--cacheinfo",
        &format!("160000,{commit},.swarm/directives"),
    ]);
    env.git(&[
        "commit",
        "-q",
        "--no-verify",
        "-m",
        "a submodule as the folder",
    ]);
    let run = swarm(&env, &["check", "--commit", "HEAD"]);
    assert!(
        run.stderr.contains(
            ".swarm/directives: error: a submodule (gitlink), not a folder: skipped, no directive in it is read"
        ),
        "{}",
        run.snapshot()
    );
}

/// Caps the data segment of `cmd` (and of what it starts: git's hooks) at
/// `bytes`: a command that reads a file of gigabytes whole runs out of
/// memory and fails, where it would otherwise only be slow.
fn cap_memory(cmd: &mut Command, bytes: u64) {
    // SAFETY: setrlimit(2) is async-signal-safe; it only limits the child.
    unsafe {
        cmd.pre_exec(move || {
            let limit = libc::rlimit {
                rlim_cur: bytes,
                rlim_max: bytes,
            };
            if libc::setrlimit(libc::RLIMIT_DATA, &limit) == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        });
    }
}

/// A directive committed as a blob far over the 64 KiB limit (zeros, which
/// git stores in a few hundred KB): its size is read from the object's
/// header, so the blob is never inflated. Run with the data segment capped
/// well below the blob's size, the check reports the file and goes on.
#[test]
fn a_huge_committed_directive_is_not_inflated() {
    let env = TestEnv::initialised();
    let big = env.path(".swarm/directives/big.toml");
    std::fs::File::create(&big)
        .and_then(|f| f.set_len(200 << 20))
        .expect("a 200 MB file of zeros");
    env.git(&["add", ".swarm/directives/big.toml"]);
    std::fs::remove_file(&big).expect("rm");
    let said = ".swarm/directives/big.toml:1:1: error: file is over the 65536-byte limit";
    for args in [&["check", "--staged"][..], &["check", "--commit", "HEAD"]] {
        if args[1] == "--commit" {
            env.git(&["commit", "-q", "--no-verify", "-m", "a huge directive"]);
        }
        let mut cmd = env.command(common::bin(), &env.root);
        cmd.args(args);
        cap_memory(&mut cmd, 100 << 20);
        let run = timed(&env, cmd, &format!("git swarm {}", args.join(" ")));
        run.code(2);
        assert!(run.stderr.contains(said), "{}", run.snapshot());
    }
}

/// `.swarm/local` committed as a regular file (git ignores `local/` only as
/// a folder): reported as what it is, and nothing is written under it.
#[test]
fn a_regular_file_in_place_of_a_folder_is_named_as_one() {
    let env = TestEnv::initialised();
    env.write(".swarm/local", "not a folder\n");
    env.git(&["add", "-f", ".swarm/local"]);
    env.git(&["commit", "-q", "-m", "a file as .swarm/local"]);
    let run = swarm(&env, &["validate"]);
    run.code(2);
    assert!(
        run.stdout.contains(
            ".swarm/local: error: a regular file, not a folder: skipped, nothing in it is read and nothing is written through it"
        ),
        "{}",
        run.snapshot()
    );
    swarm(&env, &["inject", "--role", "coder"]).success();
    let lines = env.event_lines();
    let shown: serde_json::Value =
        serde_json::from_str(lines.last().expect("a shown event")).expect("json");
    let delegation = shown["id"].as_str().expect("delegation id").to_owned();
    env.write("final.txt", "Done: the change is in.\n");
    let run = swarm(&env, &["ack", "--delegation", &delegation, "final.txt"]);
    run.success();
    assert!(
        env.exists(".git/swarm/local/unacknowledged-criticals.jsonl"),
        "{}",
        run.snapshot()
    );
    assert_eq!(env.read(".swarm/local"), "not a folder\n");
}

/// `.swarm/.gitattributes` as a link (to a file that marks the union merge):
/// not read, by git-swarm or by git, and `validate` says why the union
/// merge is missing.
#[test]
fn a_gitattributes_link_is_named_as_one() {
    let env = TestEnv::initialised();
    let attributes = env.path(".swarm/.gitattributes");
    let outside = env.tmp.path().join("gitattributes");
    std::fs::copy(&attributes, &outside).expect("copy");
    std::fs::remove_file(&attributes).expect("rm");
    symlink(&outside, &attributes).expect("symlink");
    let run = swarm(&env, &["validate"]);
    assert!(
        run.stdout.contains(
            ".swarm/.gitattributes: warning: a symbolic link, not a regular file: not read (nor by git), so event files are not marked `merge=union`"
        ),
        "{}",
        run.snapshot()
    );
}

/// An edit saved over the 64 KiB limit is read no further than the limit:
/// bad input (exit 2), the directive unchanged, the edit kept.
#[test]
fn an_edit_over_the_size_limit_is_refused_and_kept() {
    let env = TestEnv::initialised();
    let before = env.read(".swarm/directives/no-private-keys.toml");
    let mut cmd = env.command(common::bin(), &env.root);
    cmd.args(["edit", "no-private-keys"]).env(
        "GIT_EDITOR",
        "f() { head -c 70000 /dev/zero | tr '\\0' '#' >> \"$1\"; }; f",
    );
    let run = timed(&env, cmd, "git swarm edit no-private-keys");
    run.code(2);
    assert!(
        run.stderr.contains(
            "edit/no-private-keys.toml: file is over the 65536-byte limit: .swarm/directives/no-private-keys.toml is unchanged"
        ) && run.stderr.contains("hint: the edit is kept in .git/swarm/local/edit/no-private-keys.toml"),
        "{}",
        run.snapshot()
    );
    assert_eq!(env.read(".swarm/directives/no-private-keys.toml"), before);
}

/// A `config.toml` with the shortest lock wait, and the log's lock held by
/// another process (an agent appending, say) while a commit is made: the
/// failed check cannot be recorded, which is said, and the commit is still
/// refused. Recording never decides a check.
#[test]
fn a_log_that_cannot_be_locked_does_not_turn_the_gate_off() {
    let env = TestEnv::initialised();
    env.swarm(&["hooks", "install"]).success();
    let config = env
        .read(".swarm/config.toml")
        .replace("lock_timeout_ms = 10000", "lock_timeout_ms = 1");
    assert!(config.contains("lock_timeout_ms = 1\n"), "{config}");
    env.write(".swarm/config.toml", config);
    let held = common::hold_the_logs_lock(&env);

    env.write("deploy.pem", format!("{KEY_LINE}\nAAAA\n"));
    env.git(&["add", "deploy.pem"]);
    let before = head(&env);
    let run = git(&env, &["commit", "-q", "-m", "add the deploy key"]);
    run.code(1);
    assert!(
        run.stderr
            .contains("warning: the failed checks were not recorded: timed out")
            && run
                .stderr
                .contains("blocked by 1 directive: no-private-keys")
            && !run.stderr.contains("did not run"),
        "{}",
        run.snapshot()
    );
    assert_eq!(head(&env), before, "no commit was made");
    drop(held);
}

/// `git-swarm ARGS` under the time limit and a memory cap far below the
/// event files of the tests that use it.
fn capped_swarm(env: &TestEnv, args: &[&str]) -> Run {
    let mut cmd = env.command(common::bin(), &env.root);
    cmd.args(args);
    cap_memory(&mut cmd, 200 << 20);
    timed(env, cmd, &format!("git swarm {}", args.join(" ")))
}

/// `git ARGS` (hooks included) under the same cap.
fn capped_git(env: &TestEnv, args: &[&str]) -> Run {
    let mut cmd = env.command("git", &env.root);
    cmd.args(args);
    cap_memory(&mut cmd, 200 << 20);
    timed(env, cmd, &format!("git {}", args.join(" ")))
}

/// The commands that read the log, with `rel` an event file over
/// `events.max_file_bytes` (`limit`): each skips it and says so, none reads
/// it (they run under a memory cap far below its size), `doctor --fix`
/// leaves it as it is, an append to it is refused, and the pre-commit hook
/// still refuses a private key.
#[track_caller]
fn assert_over_limit_log_skipped(env: &TestEnv, rel: &str, limit: u64) {
    let path = env.path(rel);
    let size = std::fs::metadata(&path).expect("stat").len();
    let over = format!("{rel}: file is over events.max_file_bytes ({limit} bytes)");
    let said = over.replace(": file", ": error: file");
    let run = capped_swarm(env, &["validate"]);
    run.code(2);
    assert!(run.stdout.contains(&said), "{}", run.snapshot());
    for args in [&["status"][..], &["log"], &["list"], &["check", "--staged"]] {
        let run = capped_swarm(env, args);
        run.success();
        assert!(
            run.stderr.contains(&over)
                || run.stderr.contains(&said)
                || run.stderr.contains("warning: 1 problem in .swarm/"),
            "`{}`:\n{}",
            args.join(" "),
            run.snapshot()
        );
    }
    for args in [&["doctor"][..], &["doctor", "--fix"]] {
        let run = capped_swarm(env, args);
        run.code(1);
        assert!(run.stdout.contains(&said), "{}", run.snapshot());
    }
    assert_eq!(
        std::fs::metadata(&path).expect("stat").len(),
        size,
        "untouched"
    );
    assert!(!env.exists(".swarm/local/torn"), "nothing was set aside");
    assert!(
        !env.exists(".git/swarm/local/torn"),
        "nothing was set aside"
    );
    // Recorded in the pending log; the commit that would append to the
    // file is refused.
    capped_swarm(env, &["record", "--custom", "note"]).success();
    let run = capped_swarm(env, &["commit"]);
    run.code(2);
    assert!(
        run.stderr.contains(&format!(
            "{rel} is {size} bytes, over events.max_file_bytes ({limit}): no event is appended to it"
        )),
        "{}",
        run.snapshot()
    );
    assert_eq!(
        std::fs::metadata(&path).expect("stat").len(),
        size,
        "untouched"
    );
    assert_key_commit_refused_by(env, capped_git);
}

/// A sparse event file of 3 GB (what a pull request can commit, zeros
/// compressing to nothing), with no newline at its end: over the default
/// `events.max_file_bytes` (256 MiB), it is sized from its descriptor and
/// never read, by readers, by `doctor --fix` (its "torn line" is all of
/// it) or by an append.
#[test]
fn an_event_file_of_gigabytes_is_not_read() {
    let env = TestEnv::initialised();
    env.swarm(&["hooks", "install"]).success();
    let rel = ".swarm/events/2026-11.jsonl";
    std::fs::File::create(env.path(rel))
        .and_then(|f| f.set_len(3 << 30))
        .expect("a sparse 3 GB file");
    assert_over_limit_log_skipped(&env, rel, 256 << 20);
}

/// With `events.max_file_bytes = 2048`, a log of genuine events over it is
/// skipped the same way, also committed (`explain` never inflates its
/// blob); an append that would take a pending file over the bound is
/// refused; and the bound's own range is checked.
#[test]
fn an_event_file_over_the_configured_bound_is_skipped() {
    let env = TestEnv::initialised();
    env.swarm(&["hooks", "install"]).success();
    env.swarm(&["record", "--custom", "note"]).success();
    let rel = ".swarm/events/2026-11.jsonl";
    let line = env.read(common::PENDING_NOV);
    std::fs::remove_file(env.path(common::PENDING_NOV)).expect("rm");
    let id = line.split('"').nth(3).expect("the id").to_owned();
    let log: String = (0..60)
        .map(|i| line.replace(&id, &format!("01KTESTEVENT{i:014}")))
        .collect();
    env.write(rel, &log);
    let config = env.read(".swarm/config.toml");
    let set = |bytes: &str| {
        let c = config.replace(
            "max_file_bytes = 268435456",
            &format!("max_file_bytes = {bytes}"),
        );
        assert!(c.contains(&format!("max_file_bytes = {bytes}\n")), "{c}");
        env.write(".swarm/config.toml", c);
    };
    set("100");
    let run = swarm(&env, &["validate"]);
    run.code(2);
    assert!(
        run.stdout
            .contains("error: `events.max_file_bytes` is out of range"),
        "{}",
        run.snapshot()
    );
    set("2048");
    env.git(&["add", "-A"]);
    env.git(&["commit", "-q", "--no-verify", "-m", "a log over the bound"]);
    assert!(log.len() > 4096, "{}", log.len());
    assert_over_limit_log_skipped(&env, rel, 2048);
    capped_swarm(&env, &["explain", "no-private-keys"]).success();

    // Under the bound, but not with one more event: the tracked file
    // (`git swarm commit` appends to it) and the pending one (where
    // commands record; here the same events again, folded once).
    let size = log.len() as u64;
    set(&(size + 10).to_string());
    let run = swarm(&env, &["validate"]);
    assert!(!run.stdout.contains("max_file_bytes"), "{}", run.snapshot());
    swarm(&env, &["record", "--custom", "note"]).success();
    commit_refuses(
        &env,
        &format!(
            "{rel} is {size} bytes: the events would take it over events.max_file_bytes ({})",
            size + 10
        ),
    );
    assert_eq!(env.read(rel), log, "nothing was appended");
    let pending_rel = common::PENDING_NOV;
    env.write(pending_rel, &log);
    let run = swarm(&env, &["record", "--custom", "note"]);
    run.code(2);
    assert!(
        run.stderr.contains(&format!(
            "{pending_rel} is {size} bytes: the events would take it over events.max_file_bytes ({})",
            size + 10
        )),
        "{}",
        run.snapshot()
    );
    assert_eq!(env.read(pending_rel), log, "nothing was appended");
    // inject finds it before it prints a block it could not record.
    let run = swarm(&env, &["inject", "--role", "coder"]);
    run.code(2);
    assert!(
        run.stdout.is_empty() && run.stderr.contains("the events would take it over"),
        "{}",
        run.snapshot()
    );
    assert_eq!(env.read(pending_rel), log, "nothing was appended");
    std::fs::remove_file(env.path(pending_rel)).expect("rm");

    // Folded by the index while under the bound, then grown past it: the
    // index does not read it again, even the part folded already.
    common::age(&env, ".swarm/config.toml");
    common::age(&env, rel);
    swarm(&env, &["status"]).success();
    let mut grown = std::fs::OpenOptions::new()
        .append(true)
        .open(env.path(rel))
        .expect("open the log");
    std::io::Write::write_all(&mut grown, line.as_bytes()).expect("append");
    let run = capped_swarm(&env, &["check", "--staged"]);
    run.success();
    assert!(
        run.stderr.contains(&format!(
            "{rel}: file is over events.max_file_bytes ({} bytes)",
            size + 10
        )),
        "{}",
        run.snapshot()
    );
}

/// Old versions of an event file in the history are sized from their
/// object headers: one over `events.max_file_bytes` (300 MB of zeros, which
/// git stores in a few hundred KB, committed and then cut back) is never
/// inflated, by `status` (counting the lines HEAD holds) or by `explain`
/// (finding the commit that recorded an event).
#[test]
fn a_huge_committed_event_file_is_not_inflated() {
    let env = TestEnv::initialised();
    let config = env
        .read(".swarm/config.toml")
        .replace("max_file_bytes = 268435456", "max_file_bytes = 65536");
    env.write(".swarm/config.toml", config);
    env.swarm(&[
        "record",
        "--custom",
        "note",
        "--directive",
        "no-private-keys",
    ])
    .success();
    env.git(&["add", "-A"]);
    env.git(&["commit", "-q", "--no-verify", "-m", "the bound"]);
    swarm(&env, &["commit", "-m", "a note"]).success();
    let rel = ".swarm/events/2026-11.jsonl";
    let small = std::fs::read(env.path(rel)).expect("read the log");
    std::fs::OpenOptions::new()
        .append(true)
        .open(env.path(rel))
        .and_then(|f| f.set_len(small.len() as u64 + (300 << 20)))
        .expect("300 MB of zeros after the note");
    env.git(&["add", rel]);
    env.git(&["commit", "-q", "--no-verify", "-m", "a huge log"]);
    std::fs::write(env.path(rel), &small).expect("cut back");

    // HEAD holds the huge version, not read: its lines are not counted
    // (rather than all of the work tree's taken for uncommitted).
    let run = capped_swarm(&env, &["status"]);
    run.success();
    assert!(
        run.stdout.contains("Events not yet committed: 0"),
        "{}",
        run.snapshot()
    );
    env.git(&["commit", "-q", "--no-verify", "-am", "cut back"]);
    let run = capped_swarm(&env, &["explain", "no-private-keys"]);
    run.success();
    assert!(run.stdout.contains("note"), "{}", run.snapshot());
}

/// `git swarm commit` refuses with exit 2 and `says`, and every pending
/// event stays pending.
#[track_caller]
fn commit_refuses(env: &TestEnv, says: &str) {
    let pending = env.read(common::PENDING_NOV);
    let run = swarm(env, &["commit"]);
    run.code(2);
    assert!(run.stderr.contains(says), "{}", run.snapshot());
    assert_eq!(env.read(common::PENDING_NOV), pending, "still pending");
}
