//! Repository layouts, with git itself as the reference: which work tree
//! git-swarm uses when `GIT_DIR`, `GIT_WORK_TREE` or `core.worktree` say
//! where the repository is (it must be `git rev-parse --show-toplevel`'s),
//! and how `check` reads the history of a shallow clone.

use crate::common;

use std::path::Path;

use common::{Run, TestEnv};
use serde_json::Value;

/// Extra environment variables of a command.
type Vars<'a> = &'a [(&'a str, &'a str)];

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}):\n{text}"))
}

/// `git swarm ARGS` through git, in `dir`, with extra environment.
fn swarm_env(env: &TestEnv, dir: &Path, vars: &[(&str, &str)], args: &[&str]) -> Run {
    let mut cmd = env.command("git", dir);
    cmd.arg("swarm").args(args);
    for (k, v) in vars {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run git swarm");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: env.normalise(&String::from_utf8_lossy(&out.stdout)),
        stderr: env.normalise(&String::from_utf8_lossy(&out.stderr)),
    }
}

/// What `git rev-parse --show-toplevel` says in `dir` with extra
/// environment (`$TMP`-normalised), or `None` when git finds no work tree.
fn git_toplevel(env: &TestEnv, dir: &Path, vars: &[(&str, &str)]) -> Option<String> {
    let mut cmd = env.command("git", dir);
    cmd.args(["rev-parse", "--show-toplevel"]);
    for (k, v) in vars {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run git");
    out.status.success().then(|| {
        let top = String::from_utf8_lossy(&out.stdout).trim_end().to_owned();
        let top = std::fs::canonicalize(&top)
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or(top);
        env.normalise(&top)
    })
}

/// The work tree top git-swarm uses in `dir`: none of these layouts has a
/// `.swarm/`, so `list` names the top it looked in (`None`: no work tree).
fn swarm_toplevel(env: &TestEnv, dir: &Path, vars: &[(&str, &str)]) -> Option<String> {
    let run = swarm_env(env, dir, vars, &["list"]);
    run.code(2);
    if let Some(rest) = run.stderr.strip_prefix("error: no .swarm/ in ") {
        return Some(rest.lines().next().expect("a line").to_owned());
    }
    assert!(
        run.stderr
            .contains("is a bare repository; git-swarm needs a work tree"),
        "{}",
        run.snapshot()
    );
    None
}

#[test]
fn the_work_tree_is_the_one_git_uses_for_every_layout() {
    let env = TestEnv::new();
    env.git(&["commit", "-q", "--allow-empty", "-m", "start"]);
    env.git(&["worktree", "add", "-q", "-b", "side", "../wt"]);
    let tmp = env.tmp.path();
    let elsewhere = tmp.join("elsewhere");
    let deep = elsewhere.join("deep");
    std::fs::create_dir_all(&deep).expect("mkdir");
    let sub = env.path("sub");
    std::fs::create_dir_all(&sub).expect("mkdir");
    // A repository whose git dir is apart from its work tree.
    env.git_in(
        tmp,
        &["init", "-q", "--separate-git-dir", "sep.git", "sep-wt"],
    );
    std::fs::create_dir_all(tmp.join("sep-wt/sub")).expect("mkdir");
    // One with core.worktree, and one with core.bare.
    env.git_in(tmp, &["init", "-q", "cw"]);
    env.git_in(&tmp.join("cw"), &["config", "core.worktree", "../../wt"]);
    env.git_in(tmp, &["init", "-q", "--bare", "bare.git"]);

    let git_dir = env.root.join(".git");
    let git_dir = git_dir.to_str().expect("utf-8");
    let linked = env.root.join(".git/worktrees/wt");
    let linked = linked.to_str().expect("utf-8");
    let root = env.root.to_str().expect("utf-8");
    let cases: &[(&str, &Path, Vars)] = &[
        ("no environment, a subdirectory", &sub, &[]),
        ("no environment, a linked worktree", &tmp.join("wt"), &[]),
        ("a separate git dir", &tmp.join("sep-wt/sub"), &[]),
        // git: with GIT_DIR alone, the current directory is the top.
        ("GIT_DIR elsewhere", &elsewhere, &[("GIT_DIR", git_dir)]),
        ("GIT_DIR, a subdirectory", &deep, &[("GIT_DIR", git_dir)]),
        (
            "GIT_DIR relative",
            &elsewhere,
            &[("GIT_DIR", "../repo/.git")],
        ),
        (
            "GIT_DIR in its own work tree",
            &sub,
            &[("GIT_DIR", "../.git")],
        ),
        (
            "GIT_DIR of a linked worktree",
            &elsewhere,
            &[("GIT_DIR", linked)],
        ),
        (
            "GIT_DIR of a linked worktree, in it",
            &tmp.join("wt"),
            &[("GIT_DIR", linked)],
        ),
        (
            "GIT_DIR named otherwise",
            &elsewhere,
            &[("GIT_DIR", "../sep.git")],
        ),
        (
            "GIT_DIR and GIT_WORK_TREE",
            &elsewhere,
            &[("GIT_DIR", git_dir), ("GIT_WORK_TREE", root)],
        ),
        (
            "GIT_WORK_TREE alone",
            &sub,
            &[("GIT_WORK_TREE", "../../wt")],
        ),
        (
            "GIT_DIR with core.worktree",
            &elsewhere,
            &[("GIT_DIR", "../cw/.git")],
        ),
        (
            "GIT_DIR of a bare repository",
            &elsewhere,
            &[("GIT_DIR", "../bare.git")],
        ),
        (
            "GIT_DIR with GIT_IMPLICIT_WORK_TREE=0",
            &elsewhere,
            &[("GIT_DIR", git_dir), ("GIT_IMPLICIT_WORK_TREE", "0")],
        ),
    ];
    for (what, dir, vars) in cases {
        let git = git_toplevel(&env, dir, vars);
        let swarm = swarm_toplevel(&env, dir, vars);
        assert_eq!(swarm, git, "{what}: git-swarm's work tree is not git's");
    }
    // The cases above do tell the layouts apart.
    assert_eq!(
        git_toplevel(&env, &deep, &[("GIT_DIR", git_dir)]).as_deref(),
        Some("$TMP/elsewhere/deep")
    );
    assert_eq!(
        git_toplevel(&env, &elsewhere, &[("GIT_DIR", "../cw/.git")]).as_deref(),
        Some("$TMP/wt")
    );
}

#[test]
fn git_dir_alone_reads_and_writes_the_current_directorys_swarm() {
    let env = TestEnv::initialised();
    let other = env.tmp.path().join("other");
    std::fs::create_dir_all(&other).expect("mkdir");
    // A copy of the .swarm/ with one directive changed, in another directory.
    let copy = env
        .command("cp", env.tmp.path())
        .args(["-r", "repo/.swarm", "other/"])
        .status();
    assert!(copy.expect("cp").success());
    let file = other.join(".swarm/directives/run-tests-before-handoff.toml");
    let text = std::fs::read_to_string(&file).expect("read");
    assert!(text.contains("priority = \"high\""), "{text}");
    std::fs::write(
        &file,
        text.replace("priority = \"high\"", "priority = \"low\""),
    )
    .expect("write");

    let git_dir = env.root.join(".git");
    let vars = [("GIT_DIR", git_dir.to_str().expect("utf-8"))];
    // git sees the current directory as the work tree: the copy is modified.
    let mut status = env.command("git", &other);
    status.args(["status", "--short"]).envs(vars);
    let status = String::from_utf8(status.output().expect("git status").stdout).expect("utf-8");
    assert_eq!(
        status,
        " M .swarm/directives/run-tests-before-handoff.toml\n"
    );

    let list = swarm_env(&env, &other, &vars, &["list", "--format", "json"]);
    list.success();
    let priority = json(&list.stdout)
        .as_array()
        .expect("array")
        .iter()
        .find(|d| d["id"] == "run-tests-before-handoff")
        .map(|d| d["effective"]["priority"].clone());
    assert_eq!(priority, Some(Value::from("low")), "{}", list.stdout);

    let add = swarm_env(
        &env,
        &other,
        &vars,
        &[
            "add",
            "--lesson",
            "Never push directly to the main branch",
            "--agents",
            "coder",
            "--require",
            "open a PR",
        ],
    );
    add.success();
    let added = ".swarm/directives/never-push-directly-to-the-main-branch.toml";
    assert!(other.join(added).is_file(), "{}", add.snapshot());
    assert!(
        !env.exists(added),
        "add wrote into the repository's own work tree"
    );
    let mut status = env.command("git", &other);
    status
        .args(["status", "--short", "--untracked-files=all"])
        .envs(vars);
    let status = String::from_utf8(status.output().expect("git status").stdout).expect("utf-8");
    assert!(status.contains(&format!("?? {added}\n")), "{status}");
    assert_eq!(env.git(&["status", "--short"]), "");
}

/// A repository with `.swarm/` committed (1), an empty commit on top (2),
/// then a `topic` branch adding a file (3) beside main adding another (4);
/// and a shallow clone of it `depth` commits deep, every branch fetched.
fn shallow_clone(depth: &str) -> (TestEnv, std::path::PathBuf) {
    let env = TestEnv::initialised();
    env.git(&["commit", "-q", "--allow-empty", "-m", "2"]);
    env.git(&["checkout", "-q", "-b", "topic"]);
    env.write("a.txt", "a\n");
    env.git(&["add", "a.txt"]);
    env.git(&["commit", "-q", "-m", "3"]);
    env.git(&["checkout", "-q", "main"]);
    env.write("b.txt", "b\n");
    env.git(&["add", "b.txt"]);
    env.git(&["commit", "-q", "-m", "4"]);
    let url = format!("file://{}", env.root.display());
    env.git_in(
        env.tmp.path(),
        &[
            "clone",
            "-q",
            "--no-single-branch",
            "--depth",
            depth,
            &url,
            "shallow",
        ],
    );
    let clone = env.tmp.path().join("shallow");
    assert_eq!(
        env.git_in(&clone, &["rev-parse", "--is-shallow-repository"]),
        "true\n"
    );
    (env, clone)
}

/// How many files git lists for `rev` (with `--root`: a parentless commit
/// against the empty tree), and git-swarm's `check --commit REV` report.
fn commit_files(env: &TestEnv, clone: &Path, rev: &str) -> (usize, Value) {
    let git = env
        .git_in(
            clone,
            &[
                "diff-tree",
                "--root",
                "--no-commit-id",
                "-r",
                "--name-only",
                rev,
            ],
        )
        .lines()
        .count();
    let run = swarm_env(
        env,
        clone,
        &[],
        &["check", "--commit", rev, "--format", "json"],
    );
    run.success();
    (git, json(&run.stdout))
}

#[test]
fn check_commit_at_a_shallow_boundary_is_a_root_commit() {
    let (env, clone) = shallow_clone("1");
    // HEAD (commit 4) is at the boundary: git lists every file as added.
    let (git, report) = commit_files(&env, &clone, "HEAD");
    assert!(git > 5, "{git}");
    assert_eq!(report["files"].as_u64(), Some(git as u64), "{report:#}");
    assert_eq!(report["change"], "commit HEAD", "{report:#}");

    // One deeper, HEAD has its parent: it adds one file, and its parent
    // (the empty commit 2), now at the boundary, adds everything.
    let (env, clone) = shallow_clone("2");
    let (git, report) = commit_files(&env, &clone, "HEAD");
    assert_eq!((git, report["files"].as_u64()), (1, Some(1)), "{report:#}");
    let (git, report) = commit_files(&env, &clone, "HEAD~1");
    assert!(git > 5, "{git}");
    assert_eq!(report["files"].as_u64(), Some(git as u64), "{report:#}");
}

#[test]
fn a_range_beyond_a_shallow_boundary_says_the_clone_is_shallow() {
    let (env, clone) = shallow_clone("1");
    // The merge base of main and topic (commit 2) is not fetched: git finds none.
    let git = env
        .command("git", &clone)
        .args(["diff", "origin/main...origin/topic"])
        .output()
        .expect("git diff");
    assert!(!git.status.success());
    let run = swarm_env(
        &env,
        &clone,
        &[],
        &["check", "--range", "origin/main...origin/topic"],
    );
    run.code(2);
    assert!(
        run.stderr.starts_with(
            "error: `origin/main` and `origin/topic` have no merge base in this shallow clone\n"
        ),
        "{}",
        run.snapshot()
    );
    assert!(
        run.stderr.contains("`git fetch --deepen=<n>`")
            && run.stderr.contains("`git fetch --unshallow`"),
        "{}",
        run.snapshot()
    );
    // Both ends are there: a two-dot range works.
    swarm_env(
        &env,
        &clone,
        &[],
        &["check", "--range", "origin/main..origin/topic"],
    )
    .success();
    // One deeper, the base is there too.
    let (env2, clone2) = shallow_clone("2");
    let run = swarm_env(
        &env2,
        &clone2,
        &[],
        &[
            "check",
            "--range",
            "origin/main...origin/topic",
            "--format",
            "json",
        ],
    );
    run.success();
    assert_eq!(
        json(&run.stdout)["files"].as_u64(),
        Some(1),
        "{}",
        run.stdout
    );

    // A side beyond the boundary: git knows no `HEAD~1` either.
    let git = env
        .command("git", &clone)
        .args(["rev-parse", "--verify", "-q", "HEAD~1"])
        .output()
        .expect("git rev-parse");
    assert!(!git.status.success());
    let run = swarm_env(&env, &clone, &[], &["check", "--range", "HEAD~1..HEAD"]);
    run.code(2);
    assert!(
        run.stderr
            .starts_with("error: `HEAD~1` does not name a revision in this repository\n"),
        "{}",
        run.snapshot()
    );
    assert!(
        run.stderr.contains("this clone is shallow")
            && run.stderr.contains("`git fetch --unshallow`"),
        "{}",
        run.snapshot()
    );
}
