//! Where git-swarm finds its repository: a linked worktree (with its own
//! index, in its own git dir), a subdirectory, and a bare repository (which
//! has no work tree and is refused).

use crate::common;

use std::path::Path;

use common::TestEnv;
use serde_json::Value;

/// Where commands record: the pending log, in the clone's common git dir.
const MONTH_FILE: &str = common::PENDING_NOV;

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}):\n{text}"))
}

fn lines(path: &Path) -> usize {
    std::fs::read_to_string(path).map_or(0, |t| t.lines().count())
}

#[test]
fn a_linked_worktree_has_its_own_store_and_index() {
    let env = TestEnv::new();
    env.git(&["commit", "-q", "--allow-empty", "-m", "start"]);
    env.git(&["worktree", "add", "-q", "-b", "side", "../wt"]);
    let wt = env.tmp.path().join("wt");
    let wt_git_dir = env.root.join(".git/worktrees/wt");
    assert!(wt_git_dir.is_dir());

    let init = env.swarm_in(&wt, &["init"]);
    init.success();
    assert!(wt.join(".swarm/config.toml").is_file());
    assert!(
        !env.exists(".swarm"),
        "init in the worktree wrote to the main one"
    );
    env.swarm_in(&wt, &["init"]).success();

    env.swarm_in(&wt, &["record", "check", "--directive", "no-private-keys"])
        .success();
    // Recorded in the pending log of the clone, shared by its worktrees (a
    // removed worktree loses no event), not in the worktree's tree.
    assert_eq!(lines(&env.path(MONTH_FILE)), 1);
    assert!(!wt.join(".swarm/events/2026-11.jsonl").exists());
    assert!(!wt_git_dir.join("swarm/pending").exists());
    let list = env.swarm_in(&wt, &["list", "--format", "json"]);
    list.success();
    let rows = json(&list.stdout);
    let row = rows
        .as_array()
        .expect("array")
        .iter()
        .find(|r| r["id"] == "no-private-keys")
        .expect("template directive listed");
    assert_eq!(row["events"]["check"], 1);

    // The index is per worktree, in the worktree's git dir.
    assert!(wt_git_dir.join("swarm/index").is_file());
    assert!(
        !env.exists(".git/swarm/index"),
        "the worktree wrote the main index"
    );
    let status = env.swarm_in(&wt, &["index", "status", "--format", "json"]);
    status.success();
    let s = json(&status.stdout);
    assert_eq!(s["fresh"], true, "{}", status.stdout);
    assert_eq!(s["events"], 1, "{}", status.stdout);
    assert!(
        s["path"]
            .as_str()
            .is_some_and(|p| p.ends_with(".git/worktrees/wt/swarm/index")),
        "{}",
        status.stdout
    );

    // The main worktree, once it has a .swarm/ too, keeps its own index.
    env.swarm(&["init"]).success();
    env.swarm(&["list"]).success();
    assert!(env.exists(".git/swarm/index"));
    let main_status = json(&env.swarm(&["index", "status", "--format", "json"]).stdout);
    assert_eq!(main_status["path"], ".git/swarm/index");
    // It folds the clone's pending log too.
    assert_eq!(main_status["events"], 1);
    // Neither disturbed the other.
    assert_eq!(
        json(
            &env.swarm_in(&wt, &["index", "status", "--format", "json"])
                .stdout
        )["events"],
        1
    );
}

#[test]
fn commands_work_from_a_subdirectory() {
    let env = TestEnv::initialised();
    let deep = env.path("src/deep/er");
    std::fs::create_dir_all(&deep).expect("mkdir");

    env.swarm_in(
        &deep,
        &["record", "check", "--directive", "no-private-keys"],
    )
    .success();
    assert_eq!(lines(&env.path(MONTH_FILE)), 1);
    assert!(!deep.join(".swarm").exists());
    assert!(!deep.join(".git").exists());

    let add = env.swarm_in(
        &deep,
        &[
            "add",
            "--id",
            "from-deep",
            "--lesson",
            "Run the linters before every handoff",
            "--agents",
            "coder",
            "--require",
            "run the linters",
        ],
    );
    add.success();
    assert!(env.exists(".swarm/directives/from-deep.toml"));

    let list = env.swarm_in(&deep, &["list", "--format", "json"]);
    list.success();
    let ids: Vec<String> = json(&list.stdout)
        .as_array()
        .expect("array")
        .iter()
        .map(|r| r["id"].as_str().expect("id").to_owned())
        .collect();
    assert!(ids.iter().any(|i| i == "from-deep"), "{ids:?}");
    env.swarm_in(&deep, &["show", "from-deep"]).success();
    env.swarm_in(&deep, &["validate"]).success();
    env.swarm_in(&deep, &["doctor"]).success();
    let log = json(&env.swarm_in(&deep, &["log", "--format", "json"]).stdout);
    assert_eq!(log.as_array().expect("array").len(), 2);
    assert!(env.exists(".git/swarm/index"));
}

#[test]
fn a_bare_repository_is_refused_with_exit_2() {
    let env = TestEnv::new();
    let bare = env.tmp.path().join("bare.git");
    env.git_in(env.tmp.path(), &["init", "-q", "--bare", "bare.git"]);
    for args in [
        &["init"][..],
        &["list"],
        &["validate"],
        &["record", "check"],
    ] {
        let via_git = env.swarm_in(&bare, args);
        via_git.code(2);
        assert!(
            via_git.stderr.starts_with(
                "error: $TMP/bare.git is a bare repository; git-swarm needs a work tree"
            ),
            "{args:?}: {}",
            via_git.snapshot()
        );
        assert_eq!(via_git.stdout, "", "{args:?}");
        let direct = env
            .command(common::bin(), &bare)
            .args(args)
            .output()
            .expect("run git-swarm");
        assert_eq!(direct.status.code(), Some(2), "{args:?}");
    }
    assert!(!bare.join(".swarm").exists());
    assert!(!bare.join("swarm").exists());
}
