//! Hooks found in place keep running under the name git gives them, after
//! `git swarm hooks install`: a shared script that dispatches on
//! `basename "$0"` (linked from several hook names), and a husky-style
//! hook that finds its files by `dirname "$0"`. Installs made by earlier
//! versions (`<name>.swarm-orig`) still uninstall and are upgraded.

use crate::common;

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Output;

use common::TestEnv;

const HOOKS: [&str; 4] = ["pre-commit", "pre-push", "post-merge", "post-checkout"];

/// path → (kind and mode, contents or link target), recursively.
fn listing(dir: &Path) -> BTreeMap<String, (String, Vec<u8>)> {
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
                out.insert(
                    rel,
                    (
                        "symlink".into(),
                        target.to_string_lossy().as_bytes().to_vec(),
                    ),
                );
            } else if meta.is_dir() {
                out.insert(rel.clone(), (format!("dir {mode:o}"), Vec::new()));
                walk(root, &path, out);
            } else {
                let bytes = std::fs::read(&path).expect("read file");
                out.insert(rel, (format!("file {mode:o}"), bytes));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

fn write_exec(path: &Path, text: &str, mode: u32) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

fn git_traced(env: &TestEnv, args: &[&str]) -> Output {
    env.command("git", &env.root)
        .args(args)
        .env("GIT_SWARM_TRACE", "1")
        .output()
        .expect("run git")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn head(env: &TestEnv) -> String {
    env.git(&["rev-parse", "HEAD"]).trim().to_owned()
}

/// A `dispatch` script that acts on the name it was run under, with
/// `pre-commit -> dispatch` and `post-merge -> pre-commit`, as people share
/// one script between hooks. It logs each run to `log`, and its pre-commit
/// blocks while a file `block` is staged.
fn dispatch_hooks(dir: &Path, shebang: &str, log: &Path) {
    let script = format!(
        "{shebang}\n\
         case \"$(basename \"$0\")\" in\n\
         pre-commit)\n\
         \x20   echo pre-commit >> '{log}'\n\
         \x20   if git diff --cached --name-only | grep -qx block; then echo 'dispatch: blocked' >&2; exit 1; fi ;;\n\
         post-merge) echo \"post-merge $*\" >> '{log}' ;;\n\
         *) echo \"unknown $0\" >> '{log}' ;;\n\
         esac\n",
        log = log.display()
    );
    write_exec(&dir.join("dispatch"), &script, 0o755);
    std::os::unix::fs::symlink("dispatch", dir.join("pre-commit")).expect("symlink");
    std::os::unix::fs::symlink("pre-commit", dir.join("post-merge")).expect("symlink");
}

/// Commits `block` (which the dispatching pre-commit refuses), then a file
/// it accepts, then fast-forward merges a branch; returns what ran.
fn exercise(env: &TestEnv, log: &Path, round: &str) -> (bool, bool, String, String) {
    let _ = std::fs::remove_file(log);
    env.write("block", round);
    env.git(&["add", "block"]);
    let before = head(env);
    let blocked = git_traced(env, &["commit", "-q", "-m", "blocked"]);
    let was_blocked = !blocked.status.success() && head(env) == before;
    assert!(
        !was_blocked || stderr(&blocked).contains("dispatch: blocked"),
        "{}",
        stderr(&blocked)
    );
    env.git(&["rm", "-q", "--cached", "block"]);
    std::fs::remove_file(env.path("block")).expect("remove block");

    env.git(&["checkout", "-q", "-b", &format!("topic-{round}")]);
    env.write(&format!("{round}.txt"), round);
    env.git(&["add", &format!("{round}.txt")]);
    let commit = git_traced(env, &["commit", "-q", "-m", round]);
    let committed = commit.status.success();
    env.git(&["checkout", "-q", "main"]);
    let merge = git_traced(
        env,
        &["merge", "-q", "--ff-only", &format!("topic-{round}")],
    );
    assert!(merge.status.success(), "{}", stderr(&merge));
    let ran = std::fs::read_to_string(log).unwrap_or_default();
    (was_blocked, committed, ran, stderr(&merge))
}

#[test]
fn a_hook_that_dispatches_on_its_name_keeps_its_name_and_blocks() {
    let mut shebangs = vec!["#!/bin/sh"];
    if Path::new("/bin/bash").exists() {
        // Not sourced by the shim: run through swarm-orig/<name>.
        shebangs.push("#!/bin/bash");
    } else {
        common::skipped(
            "bash",
            "/bin/bash is not on this machine: the #!/bin/bash case was not tried",
        );
    }
    for shebang in shebangs {
        let env = TestEnv::initialised();
        let dir = env.path(".git/hooks");
        let log = env.tmp.path().join("dispatch.log");
        dispatch_hooks(&dir, shebang, &log);
        let before = listing(&dir);

        // Git is the reference: what the hooks do with no git-swarm.
        let (blocked, committed, ran, _) = exercise(&env, &log, "plain");
        assert!(
            blocked && committed,
            "{shebang}: the fixture itself is wrong"
        );
        assert_eq!(ran, "pre-commit\npre-commit\npost-merge 0\n", "{shebang}");

        let install = env.swarm(&["hooks", "install"]);
        install.success();
        assert!(
            install
                .stdout
                .contains("pre-commit     added; the hook that was there is kept as swarm-orig/pre-commit and runs first"),
            "{}",
            install.snapshot()
        );
        let again = env.swarm(&["hooks", "install"]);
        assert!(
            again.stdout.contains("nothing changed"),
            "{}",
            again.snapshot()
        );

        let (blocked, committed, ran, merge_err) = exercise(&env, &log, "installed");
        assert!(blocked, "{shebang}: the user's pre-commit no longer blocks");
        assert!(committed, "{shebang}");
        assert_eq!(
            ran, "pre-commit\npre-commit\npost-merge 0\n",
            "{shebang}: the user's hooks ran under other names"
        );
        assert!(
            merge_err.contains("git-swarm: hook post-merge 0\n"),
            "{merge_err}"
        );
        assert!(
            !merge_err.contains("git-swarm: hook pre-commit"),
            "{shebang}: git-swarm's pre-commit ran on merge: {merge_err}"
        );

        let status = env.swarm(&["hooks", "status", "--format", "json"]);
        let json: serde_json::Value = serde_json::from_str(&status.stdout).expect("json");
        assert_eq!(json["hooks"][0]["state"], "wrapped");
        assert_eq!(json["hooks"][0]["original"], "swarm-orig/pre-commit.link");

        env.swarm(&["hooks", "uninstall"]).success();
        assert_eq!(
            listing(&dir),
            before,
            "{shebang}: uninstall did not restore"
        );
        let (blocked, _, ran, _) = exercise(&env, &log, "uninstalled");
        assert!(blocked);
        assert_eq!(ran, "pre-commit\npre-commit\npost-merge 0\n");
    }
}

/// husky v9's layout: `core.hooksPath=.husky/_`, where every hook is
/// `. "$(dirname "$0")/h"` and `h` runs `.husky/<basename "$0">`.
#[test]
fn a_husky_style_hook_finds_its_files_and_blocks() {
    let env = TestEnv::initialised();
    let dir = env.path(".husky/_");
    write_exec(
        &dir.join("h"),
        "#!/usr/bin/env sh\n\
         n=$(basename \"$0\")\n\
         s=$(dirname \"$(dirname \"$0\")\")/$n\n\
         [ ! -f \"$s\" ] && exit 0\n\
         sh -e \"$s\" \"$@\"\n",
        0o644,
    );
    for hook in HOOKS {
        write_exec(
            &dir.join(hook),
            "#!/usr/bin/env sh\n. \"$(dirname \"$0\")/h\"",
            0o755,
        );
    }
    write_exec(
        &env.path(".husky/pre-commit"),
        "if git diff --cached --name-only | grep -qx block; then echo 'husky: blocked' >&2; exit 1; fi\n",
        0o644,
    );
    env.git(&["config", "core.hooksPath", ".husky/_"]);
    let before = listing(&dir);

    env.swarm(&["hooks", "install"]).code(1);
    env.swarm(&["hooks", "install", "--force"]).success();
    env.write("block", "x");
    env.git(&["add", "block"]);
    let out = git_traced(&env, &["commit", "-q", "-m", "blocked"]);
    assert!(!out.status.success(), "husky's pre-commit no longer blocks");
    assert!(stderr(&out).contains("husky: blocked"), "{}", stderr(&out));
    env.git(&["rm", "-q", "--cached", "block"]);
    env.write("ok.txt", "x");
    env.git(&["add", "ok.txt"]);
    let out = git_traced(&env, &["commit", "-q", "-m", "ok"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("git-swarm: hook pre-commit"),
        "{}",
        stderr(&out)
    );

    env.swarm(&["hooks", "uninstall"]).success();
    assert_eq!(listing(&dir), before);
}

fn v1_shim(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/hooks-v1")
        .join(name);
    std::fs::read_to_string(path).expect("v1 shim")
}

/// What an install by an earlier version left: every shim at v1, the
/// user's pre-commit (a file) and post-merge (a link to `dispatch`) beside
/// them as `<name>.swarm-orig`. Returns the hooks directory as it was
/// before that install.
fn earlier_install(env: &TestEnv, log: &Path) -> BTreeMap<String, (String, Vec<u8>)> {
    let dir = env.path(".git/hooks");
    write_exec(
        &dir.join("pre-commit"),
        &format!(
            "#!/bin/sh\necho \"pre-commit as $(basename \"$0\")\" >> '{}'\n\
             if git diff --cached --name-only | grep -qx block; then exit 1; fi\n",
            log.display()
        ),
        0o750,
    );
    write_exec(
        &dir.join("dispatch"),
        &format!(
            "#!/bin/sh -e\necho \"dispatch as $(basename \"$0\")\" >> '{}'\n",
            log.display()
        ),
        0o755,
    );
    std::os::unix::fs::symlink("dispatch", dir.join("post-merge")).expect("symlink");
    let before = listing(&dir);
    for name in ["pre-commit", "post-merge"] {
        std::fs::rename(dir.join(name), dir.join(format!("{name}.swarm-orig"))).expect("rename");
    }
    for name in HOOKS {
        write_exec(&dir.join(name), &v1_shim(name), 0o755);
    }
    before
}

#[test]
fn an_install_by_an_earlier_version_uninstalls_and_is_upgraded() {
    let env = TestEnv::initialised();
    let dir = env.path(".git/hooks");
    let log = env.tmp.path().join("hooks.log");
    let before = earlier_install(&env, &log);

    // Uninstall puts back what was there before.
    let run = env.swarm(&["hooks", "uninstall"]);
    run.success();
    assert!(
        run.stdout.contains(
            "pre-commit     removed; the hook it wrapped is back from pre-commit.swarm-orig"
        ),
        "{}",
        run.snapshot()
    );
    assert_eq!(listing(&dir), before);

    // Install over it moves the kept hooks into swarm-orig/.
    std::fs::remove_dir_all(&dir).expect("clear");
    let before = earlier_install(&env, &log);
    let run = env.swarm(&["hooks", "install"]);
    run.success();
    for name in HOOKS {
        assert!(
            run.stdout
                .contains(&format!("{name:<14} updated to this version")),
            "{}",
            run.snapshot()
        );
    }
    let after = listing(&dir);
    assert!(
        !after.keys().any(|k| k.ends_with(".swarm-orig")),
        "{after:?}"
    );
    assert_eq!(
        after.get("swarm-orig/post-merge"),
        Some(&("symlink".to_owned(), b"../dispatch".to_vec()))
    );
    assert_eq!(
        after.get("swarm-orig/post-merge.link"),
        Some(&("symlink".to_owned(), b"dispatch".to_vec()))
    );
    assert_eq!(
        after
            .get("swarm-orig/pre-commit")
            .map(|(kind, _)| kind.as_str()),
        Some("file 750")
    );

    // The kept hooks run under their own names and still block.
    env.write("block", "x");
    env.git(&["add", "block"]);
    let out = git_traced(&env, &["commit", "-q", "-m", "blocked"]);
    assert!(!out.status.success(), "{}", stderr(&out));
    env.git(&["rm", "-q", "--cached", "block"]);
    env.git(&["checkout", "-q", "-b", "topic"]);
    env.write("t.txt", "t");
    env.git(&["add", "t.txt"]);
    env.git(&["commit", "-q", "-m", "t"]);
    env.git(&["checkout", "-q", "main"]);
    env.git(&["merge", "-q", "--ff-only", "topic"]);
    assert_eq!(
        std::fs::read_to_string(&log).expect("log"),
        "pre-commit as pre-commit\npre-commit as pre-commit\ndispatch as post-merge\n"
    );

    env.swarm(&["hooks", "uninstall"]).success();
    assert_eq!(listing(&dir), before);
}

/// A hook linked from the work tree (`ln -s ../../scripts/pre-commit`) is
/// run through a relative link that leads to the same file, so it still
/// runs, and blocks, after the repository is moved.
#[test]
fn a_relative_link_out_of_the_hooks_dir_still_runs_after_the_repository_moves() {
    let env = TestEnv::initialised();
    let dir = env.path(".git/hooks");
    write_exec(
        &env.path("scripts/pre-commit"),
        "#!/bin/sh -e\nif git diff --cached --name-only | grep -qx block; then echo 'script: blocked' >&2; exit 1; fi\n",
        0o755,
    );
    std::os::unix::fs::symlink("../../scripts/pre-commit", dir.join("pre-commit"))
        .expect("symlink");
    let before = listing(&dir);
    env.swarm(&["hooks", "install"]).success();
    assert_eq!(
        std::fs::read_link(dir.join("swarm-orig/pre-commit")).expect("run link"),
        Path::new("../../../scripts/pre-commit")
    );

    let moved = env.tmp.path().join("moved");
    std::fs::rename(&env.root, &moved).expect("move the repository");
    let git = |args: &[&str]| {
        env.command("git", &moved)
            .args(args)
            .output()
            .expect("run git")
    };
    std::fs::write(moved.join("block"), "x").expect("write");
    assert!(git(&["add", "block"]).status.success());
    let out = git(&["commit", "-q", "-m", "blocked"]);
    assert!(
        !out.status.success(),
        "the moved repository's hook did not block"
    );
    assert!(stderr(&out).contains("script: blocked"), "{}", stderr(&out));

    let run = env.swarm_in(&moved, &["hooks", "uninstall"]);
    run.success();
    assert_eq!(listing(&moved.join(".git/hooks")), before);
}
