use crate::common;

use common::TestEnv;

#[test]
fn init_creates_the_store_and_is_idempotent() {
    let env = TestEnv::new();
    let run = env.swarm(&["init"]);
    run.success();
    insta::assert_snapshot!(run.snapshot());
    for f in [
        ".swarm/config.toml",
        ".swarm/README.md",
        ".swarm/.gitattributes",
        ".swarm/.gitignore",
        ".swarm/events/.gitkeep",
        ".swarm/quarantine/.gitkeep",
    ] {
        assert!(env.exists(f), "{f} missing");
    }
    assert!(
        env.read(".swarm/.gitattributes")
            .contains("events/*.jsonl merge=union")
    );
    assert_eq!(
        env.read(".swarm/.gitignore")
            .lines()
            .filter(|l| !l.starts_with('#'))
            .collect::<Vec<_>>(),
        ["local/"]
    );
    env.git(&["add", "-A"]);
    let before = env.git(&["write-tree"]);

    let again = env.swarm(&["init"]);
    again.success();
    insta::assert_snapshot!(again.snapshot());
    env.git(&["add", "-A"]);
    assert_eq!(
        env.git(&["write-tree"]),
        before,
        "a second init changed the tree"
    );
    // Every file of the template, and nothing else.
    let mut staged: Vec<String> = git_swarm::init::TEMPLATE
        .iter()
        .map(|(rel, _)| format!("A  .swarm/{rel}\n"))
        .collect();
    staged.sort_unstable();
    assert_eq!(env.git(&["status", "--porcelain"]), staged.concat());
    env.swarm(&["validate"]).success();
}

#[test]
fn init_outside_a_repository_exits_2() {
    let env = TestEnv::new();
    let outside = env.tmp.path().join("elsewhere");
    std::fs::create_dir_all(&outside).unwrap();
    let run = env.swarm_in(&outside, &["init"]);
    // Run through `git swarm`, git itself finds no repository but still runs the subcommand.
    run.code(2);
    assert!(
        run.stderr.starts_with("error: not a git repository"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("hint:"), "{}", run.stderr);
    assert!(!outside.join(".swarm").exists());
}

/// Files written under `.swarm/` (by `init`, `add`, `retire`) get the mode
/// any file the user writes gets — 0666 less the umask — not a temporary
/// file's 0600, which would hide them from the rest of a shared checkout.
#[cfg(unix)]
#[test]
fn files_written_under_swarm_honour_the_umask() {
    use std::os::unix::fs::PermissionsExt;
    let env = TestEnv::new();
    let under_umask = |umask: &str, args: &[&str]| {
        let out = env
            .command("sh", &env.root)
            .arg("-c")
            .arg(format!("umask {umask} && exec git swarm \"$@\""))
            .arg("sh")
            .args(args)
            .output()
            .expect("run git swarm under a umask");
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let mode = |rel: &str| {
        std::fs::metadata(env.path(rel))
            .expect("written")
            .permissions()
            .mode()
            & 0o777
    };
    under_umask("022", &["init"]);
    for rel in [
        ".swarm/config.toml",
        ".swarm/README.md",
        ".swarm/.gitattributes",
        ".swarm/directives/no-private-keys.toml",
    ] {
        assert_eq!(mode(rel), 0o644, "{rel}");
    }
    under_umask(
        "002",
        &[
            "add",
            "--id",
            "tests-first",
            "--lesson",
            "Write the failing test before the fix",
            "--tools",
            "cargo",
            "--require",
            "a test that fails without the fix",
        ],
    );
    assert_eq!(mode(".swarm/directives/tests-first.toml"), 0o664);
    under_umask(
        "027",
        &[
            "retire",
            "tests-first",
            "--justification",
            "the suite now runs before every handoff",
        ],
    );
    assert_eq!(mode(".swarm/directives/tests-first.toml"), 0o640);
}
