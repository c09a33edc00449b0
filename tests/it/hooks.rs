//! `git swarm hooks install|uninstall|status` and the hidden `git swarm
//! hook`, driven through real `git commit`, `git checkout`, `git merge` and
//! `git push` (to a local bare remote).

use crate::common;

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use common::{Run, TestEnv};

/// What a directory holds, recursively: path → (kind and mode, contents or
/// link target). `None` when the directory does not exist.
type Listing = Option<BTreeMap<String, (String, Vec<u8>)>>;

fn listing(dir: &Path) -> Listing {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, (String, Vec<u8>)>) {
        for entry in std::fs::read_dir(dir).expect("read dir") {
            let path = entry.expect("entry").path();
            let rel = path
                .strip_prefix(root)
                .expect("under root")
                .to_string_lossy()
                .into_owned();
            let meta = std::fs::symlink_metadata(&path).expect("metadata");
            let mode = meta.permissions().mode() & 0o7777;
            if meta.file_type().is_symlink() {
                let target = std::fs::read_link(&path).expect("read link");
                let target = target.to_string_lossy().as_bytes().to_vec();
                out.insert(rel, ("symlink".into(), target));
            } else if meta.is_dir() {
                out.insert(rel.clone(), (format!("dir {mode:o}"), Vec::new()));
                walk(root, &path, out);
            } else {
                let bytes = std::fs::read(&path).expect("read file");
                out.insert(rel, (format!("file {mode:o}"), bytes));
            }
        }
    }
    if !dir.exists() {
        return None;
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    Some(out)
}

/// Runs git in `dir` with extra environment; does not panic when it fails.
fn git_with(env: &TestEnv, dir: &Path, args: &[&str], vars: &[(&str, &str)]) -> Output {
    let mut cmd = env.command("git", dir);
    cmd.args(args);
    for (k, v) in vars {
        cmd.env(k, v);
    }
    cmd.output().expect("run git")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `git swarm ARGS` in `dir`, through git.
fn swarm_in(env: &TestEnv, dir: &Path, args: &[&str]) -> Run {
    env.swarm_in(dir, args)
}

const TRACE: (&str, &str) = ("GIT_SWARM_TRACE", "1");

fn hooks_dir(env: &TestEnv) -> PathBuf {
    env.path(".git/hooks")
}

/// Writes an executable hook script.
fn write_hook(path: &Path, body: &str, mode: u32) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, format!("#!/bin/sh\n{body}\n")).expect("write hook");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

fn head(env: &TestEnv) -> String {
    env.git(&["rev-parse", "HEAD"]).trim().to_owned()
}

fn index_file(env: &TestEnv) -> PathBuf {
    env.path(".git/swarm/index")
}

#[test]
fn installed_hooks_run_on_commit_checkout_and_merge() {
    let env = TestEnv::initialised();
    let run = env.swarm(&["hooks", "install"]);
    run.success();
    insta::assert_snapshot!(run.snapshot());
    for name in ["pre-commit", "pre-push", "post-merge", "post-checkout"] {
        let meta = std::fs::metadata(hooks_dir(&env).join(name)).expect("shim");
        assert_eq!(meta.permissions().mode() & 0o777, 0o755, "{name}");
    }

    env.write("a.txt", "a\n");
    env.write("untracked.txt", "u\n");
    env.git(&["add", "a.txt"]);
    let out = git_with(&env, &env.root, &["commit", "-q", "-m", "a"], &[TRACE]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("git-swarm: hook pre-commit\n"),
        "pre-commit did not run: {}",
        stderr(&out)
    );
    // A hook never stages anything: the untracked file is still untracked.
    assert_eq!(env.git(&["status", "--porcelain"]), "?? untracked.txt\n");

    // post-checkout refreshes the index (and gets git's three arguments).
    let _ = std::fs::remove_file(index_file(&env));
    let before = head(&env);
    let out = git_with(
        &env,
        &env.root,
        &["checkout", "-q", "-b", "topic"],
        &[TRACE],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!(
            "git-swarm: hook post-checkout {before} {before} 1\n"
        )),
        "{}",
        stderr(&out)
    );
    assert!(
        index_file(&env).exists(),
        "post-checkout did not refresh the index"
    );

    env.write("b.txt", "b\n");
    env.git(&["add", "b.txt"]);
    env.git(&["commit", "-q", "-m", "b"]);
    env.git(&["checkout", "-q", "main"]);

    // post-merge too, after a fast-forward merge.
    std::fs::remove_file(index_file(&env)).expect("index exists after checkout");
    let out = git_with(
        &env,
        &env.root,
        &["merge", "-q", "--ff-only", "topic"],
        &[TRACE],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("git-swarm: hook post-merge 0\n"),
        "{}",
        stderr(&out)
    );
    assert!(
        index_file(&env).exists(),
        "post-merge did not refresh the index"
    );
}

#[test]
fn a_user_hook_is_kept_runs_first_and_its_failure_still_blocks() {
    let env = TestEnv::initialised();
    let marker = env.tmp.path().join("user-hook-ran");
    let user_hook = hooks_dir(&env).join("pre-commit");
    write_hook(
        &user_hook,
        &format!(
            "echo \"args:$*\" >> '{}'\nif [ -e block ]; then echo 'user hook: blocked' >&2; exit 1; fi",
            marker.display()
        ),
        0o750,
    );
    let user_bytes = std::fs::read(&user_hook).expect("read");

    let run = env.swarm(&["hooks", "install"]);
    run.success();
    assert!(
        run.stdout.contains("swarm-orig/pre-commit"),
        "{}",
        run.stdout
    );
    let kept = hooks_dir(&env).join("swarm-orig/pre-commit");
    assert_eq!(std::fs::read(&kept).expect("kept hook"), user_bytes);
    assert_eq!(
        std::fs::metadata(&kept).expect("kept").permissions().mode() & 0o777,
        0o750,
        "the kept hook lost its mode"
    );

    // It runs, before ours, and the commit goes through.
    env.write("a.txt", "a\n");
    env.git(&["add", "a.txt"]);
    let out = git_with(&env, &env.root, &["commit", "-q", "-m", "a"], &[TRACE]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&marker).expect("marker"), "args:\n");
    assert!(
        stderr(&out).contains("git-swarm: hook pre-commit"),
        "{}",
        stderr(&out)
    );

    // Its failure still blocks the commit.
    let before = head(&env);
    env.write("block", "");
    env.git(&["add", "block"]);
    let out = git_with(
        &env,
        &env.root,
        &["commit", "-q", "-m", "blocked"],
        &[TRACE],
    );
    assert!(
        !out.status.success(),
        "the user's failing hook did not block"
    );
    assert!(
        stderr(&out).contains("user hook: blocked"),
        "{}",
        stderr(&out)
    );
    assert_eq!(head(&env), before);
    assert_eq!(
        std::fs::read_to_string(&marker).expect("marker"),
        "args:\nargs:\n"
    );
}

#[test]
fn skip_env_skips_git_swarm_but_not_the_user_hook() {
    let env = TestEnv::initialised();
    let marker = env.tmp.path().join("user-hook-ran");
    write_hook(
        &hooks_dir(&env).join("pre-commit"),
        &format!("touch '{}'", marker.display()),
        0o755,
    );
    env.swarm(&["hooks", "install"]).success();
    env.write("a.txt", "a\n");
    env.git(&["add", "a.txt"]);
    let out = git_with(
        &env,
        &env.root,
        &["commit", "-q", "-m", "a"],
        &[TRACE, ("GIT_SWARM_SKIP", "1")],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        !stderr(&out).contains("git-swarm: hook"),
        "ours ran despite GIT_SWARM_SKIP=1: {}",
        stderr(&out)
    );
    assert!(marker.exists(), "the user's hook was skipped too");

    // The shim does not even start git-swarm: a stand-in on PATH records calls.
    let fake_bin = env.tmp.path().join("fake-bin");
    let called = env.tmp.path().join("git-swarm-called");
    write_hook(
        &fake_bin.join("git-swarm"),
        &format!("echo \"$*\" >> '{}'", called.display()),
        0o755,
    );
    let path = format!(
        "{}:{}",
        fake_bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for (skip, expect_call) in [("1", false), ("0", true)] {
        env.write("b.txt", skip);
        env.git(&["add", "b.txt"]);
        let out = git_with(
            &env,
            &env.root,
            &["commit", "-q", "-m", "b"],
            &[("PATH", &path), ("GIT_SWARM_SKIP", skip)],
        );
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(called.exists(), expect_call, "GIT_SWARM_SKIP={skip}");
    }
    assert_eq!(
        std::fs::read_to_string(&called).expect("called"),
        "hook pre-commit\n"
    );

    // The hidden command itself also returns at once. (No stdin is given: it
    // may exit before a writer could finish, which the harness treats as an error.)
    for name in ["pre-commit", "pre-push", "post-merge", "post-checkout"] {
        let run = env.swarm_with(&["hook", name], &[TRACE, ("GIT_SWARM_SKIP", "1")], None);
        run.success();
        assert_eq!(
            (run.stdout.as_str(), run.stderr.as_str()),
            ("", ""),
            "{name}"
        );
    }
}

#[test]
fn install_twice_changes_nothing_and_uninstall_restores_byte_for_byte() {
    let env = TestEnv::initialised();
    let dir = hooks_dir(&env);
    write_hook(&dir.join("pre-commit"), "exit 0", 0o700);
    write_hook(&dir.join("post-merge"), "echo merged", 0o644); // not executable: git ignores it
    std::fs::write(env.tmp.path().join("shared-hook"), "#!/bin/sh\n").expect("write");
    std::os::unix::fs::symlink(env.tmp.path().join("shared-hook"), dir.join("pre-push"))
        .expect("symlink");
    let before = listing(&dir);
    assert!(
        before
            .as_ref()
            .is_some_and(|l| l.contains_key("pre-commit.sample"))
    );

    env.swarm(&["hooks", "install"]).success();
    let once = listing(&dir);
    assert_ne!(once, before);
    let again = env.swarm(&["hooks", "install"]);
    again.success();
    assert_eq!(
        again.stdout,
        "git-swarm's hooks are already installed in .git/hooks; nothing changed.\n"
    );
    assert_eq!(
        listing(&dir),
        once,
        "a second install changed the hooks dir"
    );

    let run = env.swarm(&["hooks", "uninstall"]);
    run.success();
    insta::assert_snapshot!(run.snapshot());
    assert_eq!(
        listing(&dir),
        before,
        "uninstall did not restore the hooks dir"
    );
    let again = env.swarm(&["hooks", "uninstall"]);
    again.success();
    assert_eq!(
        again.stdout,
        "No git-swarm hooks in .git/hooks; nothing changed.\n"
    );
    assert_eq!(listing(&dir), before);
}

#[test]
fn a_hooks_dir_install_created_is_gone_after_uninstall() {
    let env = TestEnv::initialised();
    let dir = hooks_dir(&env);
    std::fs::remove_dir_all(&dir).expect("remove hooks dir");
    let git_dir_before = listing(&env.path(".git"));

    let run = env.swarm(&["hooks", "install"]);
    run.success();
    assert!(
        run.stdout.starts_with("Created .git/hooks.\n"),
        "{}",
        run.stdout
    );
    env.write("a.txt", "a\n");
    env.git(&["add", "a.txt"]);
    let out = git_with(&env, &env.root, &["commit", "-q", "-m", "a"], &[TRACE]);
    assert!(
        stderr(&out).contains("git-swarm: hook pre-commit"),
        "{}",
        stderr(&out)
    );
    let once = listing(&dir);
    env.swarm(&["hooks", "install"]).success();
    assert_eq!(listing(&dir), once);

    env.swarm(&["hooks", "uninstall"]).success();
    assert_eq!(
        listing(&dir),
        None,
        "the hooks dir install created is still there"
    );
    // Nothing else under .git/ is left behind by install or uninstall (the
    // commit above changed objects, refs and logs, so compare only hooks).
    assert!(git_dir_before.is_some_and(|l| !l.contains_key("hooks")));

    // core.hooksPath to a directory several levels deep that does not exist.
    env.git(&["config", "core.hooksPath", "tools/git/hooks"]);
    env.swarm(&["hooks", "install"]).success();
    assert!(env.path("tools/git/hooks/pre-commit").is_file());
    // Something else lands in `tools/`: that level stays, the rest goes.
    env.write("tools/README", "mine\n");
    env.swarm(&["hooks", "uninstall"]).success();
    assert!(
        !env.path("tools/git").exists(),
        "created levels left behind"
    );
    assert_eq!(env.read("tools/README"), "mine\n");
}

#[test]
fn core_hooks_path_relative_absolute_and_home() {
    let env = TestEnv::initialised();
    let default_dir = listing(&hooks_dir(&env));

    // Relative: to the work tree root, wherever install is run from.
    env.git(&["config", "core.hooksPath", "githooks"]);
    std::fs::create_dir_all(env.path("src/deep")).expect("mkdir");
    let run = swarm_in(&env, &env.path("src/deep"), &["hooks", "install"]);
    run.success();
    assert!(
        run.stdout
            .contains("Installed git-swarm's hooks in githooks:"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("core.hooksPath is set"),
        "{}",
        run.stdout
    );
    assert!(env.path("githooks/pre-commit").is_file());
    assert!(!env.path("src/deep/githooks").exists());
    assert_eq!(
        listing(&hooks_dir(&env)),
        default_dir,
        "wrote to .git/hooks"
    );
    let status = swarm_in(&env, &env.path("src/deep"), &["hooks", "status"]);
    status.success();
    assert!(
        status
            .stdout
            .starts_with("hooks dir: githooks (from core.hooksPath)\n"),
        "{}",
        status.stdout
    );
    env.write("a.txt", "a\n");
    env.git(&["add", "a.txt"]);
    let out = git_with(&env, &env.root, &["commit", "-q", "-m", "a"], &[TRACE]);
    assert!(
        stderr(&out).contains("git-swarm: hook pre-commit"),
        "{}",
        stderr(&out)
    );
    env.swarm(&["hooks", "uninstall"]).success();
    assert!(!env.path("githooks").exists());

    // Absolute.
    let outside = env.tmp.path().join("shared hooks");
    env.git(&["config", "core.hooksPath", outside.to_str().expect("utf-8")]);
    env.swarm(&["hooks", "install"]).success();
    assert!(outside.join("pre-push").is_file());
    env.write("b.txt", "b\n");
    env.git(&["add", "b.txt"]);
    let out = git_with(&env, &env.root, &["commit", "-q", "-m", "b"], &[TRACE]);
    assert!(
        stderr(&out).contains("git-swarm: hook pre-commit"),
        "{}",
        stderr(&out)
    );
    env.swarm(&["hooks", "uninstall"]).success();
    assert!(!outside.exists());

    // `~/` is the home directory, as git expands it.
    env.git(&["config", "core.hooksPath", "~/githooks"]);
    env.swarm(&["hooks", "install"]).success();
    assert!(env.home().join("githooks/post-merge").is_file());
    env.write("c.txt", "c\n");
    env.git(&["add", "c.txt"]);
    let out = git_with(&env, &env.root, &["commit", "-q", "-m", "c"], &[TRACE]);
    assert!(
        stderr(&out).contains("git-swarm: hook pre-commit"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_linked_worktree_uses_the_shared_hooks_dir() {
    let env = TestEnv::initialised();
    let wt = env.tmp.path().join("wt");
    env.git(&[
        "worktree",
        "add",
        "-q",
        "-b",
        "wt",
        wt.to_str().expect("utf-8"),
    ]);

    let run = swarm_in(&env, &wt, &["hooks", "install"]);
    run.success();
    assert!(
        hooks_dir(&env).join("pre-commit").is_file(),
        "{}",
        run.stdout
    );
    assert!(!env.path(".git/worktrees/wt/hooks").exists());

    std::fs::write(wt.join("w.txt"), "w\n").expect("write");
    env.git_in(&wt, &["add", "w.txt"]);
    let out = git_with(
        &env,
        &wt,
        &["commit", "-q", "-m", "in the worktree"],
        &[TRACE],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("git-swarm: hook pre-commit"),
        "{}",
        stderr(&out)
    );

    // post-checkout in the worktree refreshes the worktree's own index.
    let wt_index = env.path(".git/worktrees/wt/swarm/index");
    let _ = std::fs::remove_file(&wt_index);
    env.git_in(&wt, &["checkout", "-q", "-b", "wt2"]);
    assert!(
        wt_index.exists(),
        "post-checkout did not refresh the worktree's index"
    );

    let status = env.swarm(&["hooks", "status", "--format", "json"]);
    status.success();
    let json: serde_json::Value = serde_json::from_str(&status.stdout).expect("json");
    assert_eq!(json["hooks_dir"], ".git/hooks");
    assert!(
        json["hooks"]
            .as_array()
            .expect("hooks")
            .iter()
            .all(|h| h["state"] == "installed"),
        "{json}"
    );
    swarm_in(&env, &wt, &["hooks", "uninstall"]).success();
    assert!(!hooks_dir(&env).join("pre-commit").exists());
}

/// Prepares a repository for one case.
type Setup = dyn Fn(&TestEnv);

#[test]
fn frameworks_are_detected_and_install_refuses_unless_forced() {
    let cases: &[(&str, &Setup)] = &[
        ("husky", &|env: &TestEnv| {
            env.write(".husky/pre-commit", "npm test\n")
        }),
        ("husky", &|env: &TestEnv| {
            env.git(&["config", "core.hooksPath", ".husky/_"]);
        }),
        ("lefthook", &|env: &TestEnv| {
            env.write("lefthook.yml", "pre-commit:\n")
        }),
        ("lefthook", &|env: &TestEnv| {
            env.write(".lefthook.yml", "pre-commit:\n")
        }),
        ("pre-commit", &|env: &TestEnv| {
            env.write(".pre-commit-config.yaml", "repos: []\n")
        }),
        ("pre-commit", &|env: &TestEnv| {
            write_hook(
                &hooks_dir(env).join("pre-commit"),
                "# File generated by pre-commit: https://pre-commit.com\nexit 0",
                0o755,
            )
        }),
    ];
    for (i, (framework, setup)) in cases.iter().enumerate() {
        let env = TestEnv::initialised();
        setup(&env);
        let dir = PathBuf::from(env.git(&["rev-parse", "--git-path", "hooks"]).trim());
        let dir = env.root.join(dir);
        let before = listing(&dir);
        let run = env.swarm(&["hooks", "install"]);
        run.code(1);
        assert!(
            run.stderr.starts_with(&format!(
                "error: this repository's hooks are managed by {framework};"
            )),
            "case {i}: {}",
            run.stderr
        );
        assert!(
            run.stdout.contains("git swarm hook pre-commit"),
            "case {i}: {}",
            run.stdout
        );
        assert_eq!(
            listing(&dir),
            before,
            "case {i}: a refused install wrote hooks"
        );
        if i == 0 || i == 2 || i == 4 {
            insta::assert_snapshot!(format!("refused_{framework}"), run.snapshot());
        }
        let status = env.swarm(&["hooks", "status"]);
        assert!(
            status.stdout.contains(&format!("framework: {framework} (")),
            "case {i}: {}",
            status.stdout
        );

        env.swarm(&["hooks", "install", "--force"]).success();
        assert!(dir.join("pre-commit").is_file(), "case {i}");
        env.swarm(&["hooks", "uninstall"]).success();
        assert_eq!(listing(&dir), before, "case {i}: uninstall after --force");
    }
}

#[test]
fn pre_push_gives_the_ref_lines_to_the_user_hook_and_to_git_swarm() {
    let env = TestEnv::initialised();
    let remote = env.tmp.path().join("remote.git");
    env.git_in(
        env.tmp.path(),
        &["init", "-q", "--bare", remote.to_str().expect("utf-8")],
    );
    env.git(&["remote", "add", "origin", remote.to_str().expect("utf-8")]);
    let seen = env.tmp.path().join("user-pre-push-stdin");
    let args = env.tmp.path().join("user-pre-push-args");
    write_hook(
        &hooks_dir(&env).join("pre-push"),
        &format!(
            "echo \"$*\" > '{}'\ncat > '{}'",
            args.display(),
            seen.display()
        ),
        0o755,
    );
    env.swarm(&["hooks", "install"]).success();

    let sha = head(&env);
    let out = git_with(&env, &env.root, &["push", "-q", "origin", "main"], &[TRACE]);
    assert!(out.status.success(), "{}", stderr(&out));
    let zero = "0".repeat(40);
    let line = format!("refs/heads/main {sha} refs/heads/main {zero}");
    assert_eq!(
        std::fs::read_to_string(&seen).expect("stdin"),
        format!("{line}\n")
    );
    assert_eq!(
        std::fs::read_to_string(&args).expect("args"),
        format!("origin {}\n", remote.display())
    );
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "git-swarm: hook pre-push origin {}\ngit-swarm:   {line}\n",
            remote.display()
        )),
        "{err}"
    );

    // Two refs in one push: both reach both hooks.
    env.git(&["branch", "topic"]);
    env.git(&["tag", "v1"]);
    let out = git_with(
        &env,
        &env.root,
        &["push", "-q", "origin", "topic", "v1"],
        &[TRACE],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let seen = std::fs::read_to_string(&seen).expect("stdin");
    assert_eq!(seen.lines().count(), 2, "{seen}");
    for l in seen.lines() {
        assert!(
            stderr(&out).contains(&format!("git-swarm:   {l}\n")),
            "{}",
            stderr(&out)
        );
    }

    // The user's failing pre-push still blocks the push.
    write_hook(
        &hooks_dir(&env).join("swarm-orig/pre-push"),
        "cat > /dev/null\nexit 1",
        0o755,
    );
    env.write("x.txt", "x\n");
    env.git(&["add", "x.txt"]);
    env.git(&["commit", "-q", "-m", "x"]);
    let out = git_with(&env, &env.root, &["push", "-q", "origin", "main"], &[]);
    assert!(
        !out.status.success(),
        "the user's failing pre-push did not block"
    );
}

#[test]
fn without_git_swarm_on_path_the_shims_say_so_and_do_not_block() {
    let env = TestEnv::initialised();
    env.swarm(&["hooks", "install"]).success();
    let bin_dir = common::bin().parent().expect("bin dir").to_path_buf();
    let path: Vec<PathBuf> = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .filter(|p| *p != bin_dir && !p.join("git-swarm").exists())
        .collect();
    let path = std::env::join_paths(path).expect("join PATH");
    env.write("a.txt", "a\n");
    env.git(&["add", "a.txt"]);
    let mut cmd = env.command("git", &env.root);
    cmd.args(["commit", "-q", "-m", "a"]).env("PATH", &path);
    let out = cmd.output().expect("run git");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("git-swarm: not on PATH, so its pre-commit hook did not run"),
        "{}",
        stderr(&out)
    );
    assert_eq!(env.git(&["log", "-1", "--format=%s"]), "a\n");
}

/// `git swarm hook install` is a typo of `hooks install` from a person's
/// terminal: bad usage, exit 2, with the command meant. A hook git has and
/// git-swarm has not, called by git through a shim, still lets git go on.
#[test]
fn a_name_that_is_no_git_hook_is_bad_usage_and_one_git_calls_fails_open() {
    let env = TestEnv::initialised();
    let run = env.swarm(&["hook", "install"]);
    run.code(2);
    assert_eq!(
        run.stderr,
        "error: `install` is not a git hook: `git swarm hook NAME` is what git's hooks call\nhint: did you mean `git swarm hooks install`?\n"
    );
    assert!(
        !hooks_dir(&env).join("pre-commit").exists(),
        "nothing was installed"
    );
    let run = env.swarm(&["hook", "bogus"]);
    run.code(2);
    assert!(
        run.stderr.contains("`bogus` is not a git hook")
            && run
                .stderr
                .contains("`git swarm hooks install` installs the hooks"),
        "{}",
        run.snapshot()
    );
    // So even with GIT_SWARM_SKIP=1: a typo is not a hook to skip.
    env.swarm_with(&["hook", "uninstall"], &[("GIT_SWARM_SKIP", "1")], None)
        .code(2);

    // git runs post-commit (which git-swarm has not) through a shim.
    write_hook(
        &hooks_dir(&env).join("post-commit"),
        "exec git swarm hook post-commit \"$@\"",
        0o755,
    );
    env.write("a.txt", "a\n");
    env.git(&["add", "a.txt"]);
    let out = git_with(&env, &env.root, &["commit", "-q", "-m", "a"], &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).starts_with("warning: git-swarm has no `post-commit` hook"),
        "{}",
        stderr(&out)
    );
    assert_eq!(env.git(&["log", "-1", "--format=%s"]), "a\n");
}

#[test]
fn the_hidden_hook_command_never_blocks_for_reasons_other_than_a_check() {
    // No .swarm/: silent success.
    let env = TestEnv::new();
    for name in ["pre-commit", "post-merge", "post-checkout"] {
        let run = env.swarm_with(&["hook", name], &[], None);
        assert_eq!(
            (run.code, run.stdout.as_str(), run.stderr.as_str()),
            (0, "", ""),
            "{name}"
        );
    }
    let run = env.swarm_with(
        &["hook", "pre-push", "origin", "url"],
        &[],
        Some(b"garbage\n"),
    );
    assert_eq!((run.code, run.stderr.as_str()), (0, ""));

    let env = TestEnv::initialised();
    // An unknown hook name: a warning, exit 0.
    let run = env.swarm_with(&["hook", "pre-rebase", "--onto"], &[], None);
    run.success();
    assert!(
        run.stderr
            .starts_with("warning: git-swarm has no `pre-rebase` hook"),
        "{}",
        run.stderr
    );
    // Malformed pre-push input (git never writes it): a warning naming the line, exit 0.
    let run = env.swarm_with(
        &["hook", "pre-push", "origin", "url"],
        &[],
        Some(b"refs/heads/main abc\n"),
    );
    run.success();
    assert!(
        run.stderr.contains("pre-push input line 1"),
        "{}",
        run.stderr
    );
    // post-checkout builds the index.
    let _ = std::fs::remove_file(index_file(&env));
    env.swarm_with(&["hook", "post-checkout", "a", "b", "1"], &[], None)
        .success();
    assert!(index_file(&env).exists());
}

#[test]
fn install_leaves_alone_what_it_cannot_move_aside_and_updates_older_shims() {
    let env = TestEnv::initialised();
    let dir = hooks_dir(&env);
    write_hook(&dir.join("pre-commit"), "echo mine", 0o755);
    write_hook(&dir.join("pre-commit.swarm-orig"), "echo older", 0o755);
    write_hook(
        &dir.join("post-merge"),
        "# git-swarm hook shim v0\ngit-swarm hook post-merge",
        0o755,
    );
    std::fs::create_dir(dir.join("post-checkout")).expect("mkdir");
    let run = env.swarm(&["hooks", "install"]);
    run.code(1);
    insta::assert_snapshot!(run.snapshot());
    assert_eq!(
        std::fs::read_to_string(dir.join("pre-commit")).expect("read"),
        "#!/bin/sh\necho mine\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("pre-commit.swarm-orig")).expect("read"),
        "#!/bin/sh\necho older\n"
    );
    assert!(dir.join("post-checkout").is_dir());

    let status = env.swarm(&["hooks", "status", "--format", "json"]);
    let json: serde_json::Value = serde_json::from_str(&status.stdout).expect("json");
    let states: Vec<_> = json["hooks"]
        .as_array()
        .expect("hooks")
        .iter()
        .map(|h| {
            format!(
                "{} {} current={} stray={}",
                h["name"].as_str().unwrap_or_default(),
                h["state"].as_str().unwrap_or_default(),
                h["current"],
                h["stray_original"]
            )
        })
        .collect();
    assert_eq!(
        states,
        [
            "pre-commit foreign current=false stray=true",
            "pre-push installed current=true stray=false",
            "post-merge installed current=true stray=false",
            "post-checkout foreign current=false stray=false",
        ]
    );
}

#[test]
fn status_names_each_state() {
    let env = TestEnv::initialised();
    let dir = hooks_dir(&env);
    write_hook(&dir.join("pre-commit"), "exit 0", 0o755);
    write_hook(&dir.join("post-checkout"), "exit 0", 0o755);
    let run = env.swarm(&["hooks", "status"]);
    run.success();
    insta::assert_snapshot!("status_before", run.snapshot());
    env.swarm(&["hooks", "install"]).success();
    std::fs::remove_file(dir.join("post-checkout")).expect("remove shim");
    std::fs::set_permissions(
        dir.join("post-merge"),
        std::fs::Permissions::from_mode(0o644),
    )
    .expect("chmod");
    let run = env.swarm(&["hooks", "status"]);
    run.success();
    insta::assert_snapshot!("status_after", run.snapshot());
}

/// The shims are POSIX sh: `sh -n` accepts each, and each has the marker.
#[test]
fn the_shims_parse_as_sh() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("hooks");
    for name in ["pre-commit", "pre-push", "post-merge", "post-checkout"] {
        let path = root.join(name);
        let text = std::fs::read_to_string(&path).expect("shim");
        assert!(
            text.starts_with("#!/bin/sh\n# git-swarm hook shim v2"),
            "{name}"
        );
        assert!(text.contains(&format!("hook={name}\n")), "{name}");
        let out = std::process::Command::new("sh")
            .arg("-n")
            .arg(&path)
            .stdin(Stdio::null())
            .output()
            .expect("run sh");
        assert!(out.status.success(), "{name}: {}", stderr(&out));
    }
}

/// Uninstall puts a `<name>.swarm-orig` back only in place of git-swarm's
/// own shim: one found without the shim (never installed, or left alone by
/// install) stays where it is, so that a hook that was off is not turned on.
#[test]
fn uninstall_puts_back_a_kept_hook_only_where_it_removes_the_shim() {
    let env = TestEnv::initialised();
    let dir = hooks_dir(&env);

    // Nothing was ever installed.
    write_hook(
        &dir.join("pre-commit.swarm-orig"),
        "echo blocked; exit 1",
        0o755,
    );
    let before = listing(&dir);
    let run = env.swarm(&["hooks", "uninstall"]);
    run.success();
    assert_eq!(
        run.stdout,
        "No git-swarm hooks in .git/hooks; nothing changed.\n"
    );
    assert!(
        run.stderr.starts_with(
            "pre-commit.swarm-orig in .git/hooks is not next to git-swarm's pre-commit shim, so it was left as it is"
        ),
        "{}",
        run.snapshot()
    );
    assert_eq!(listing(&dir), before, "uninstall changed the hooks dir");
    // The hook is still off: a commit goes through.
    env.write("a.txt", "a\n");
    env.git(&["add", "a.txt"]);
    env.git(&["commit", "-q", "-m", "a"]);

    // Install left pre-commit alone (a hook of the user's is in the way);
    // uninstall removes the other shims and leaves both pre-commit files.
    write_hook(&dir.join("pre-commit"), "echo mine", 0o755);
    let before = listing(&dir);
    env.swarm(&["hooks", "install"]).code(1);
    let run = env.swarm(&["hooks", "uninstall"]);
    run.success();
    assert_eq!(
        run.stdout,
        "Uninstalled git-swarm's hooks from .git/hooks:\n  pre-commit     not installed\n  pre-push       removed\n  post-merge     removed\n  post-checkout  removed\n"
    );
    assert!(
        run.stderr.contains("keep the one you want as pre-commit"),
        "{}",
        run.snapshot()
    );
    assert_eq!(listing(&dir), before, "uninstall changed the hooks dir");
}

/// The note that every repository using the directory runs the hooks is
/// for a `core.hooksPath` outside the repository only.
#[test]
fn install_says_the_hooks_are_shared_only_for_a_hooks_path_outside_the_repository() {
    let env = TestEnv::initialised();
    let shared = "every repository using that directory runs them";
    for inside in ["githooks", ".git/swarm-hooks"] {
        env.git(&["config", "core.hooksPath", inside]);
        let run = env.swarm(&["hooks", "install"]);
        run.success();
        assert!(
            run.stdout
                .contains("core.hooksPath is set, so they went there.\n")
                && !run.stdout.contains(shared),
            "{inside}:\n{}",
            run.snapshot()
        );
        env.swarm(&["hooks", "uninstall"]).success();
    }
    let outside = env.tmp.path().join("shared-hooks");
    env.git(&["config", "core.hooksPath", outside.to_str().expect("utf-8")]);
    let run = env.swarm(&["hooks", "install"]);
    run.success();
    assert!(run.stdout.contains(shared), "{}", run.snapshot());
}
