mod common;

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
    assert_eq!(
        env.git(&["status", "--porcelain"]),
        "A  .swarm/.gitattributes\nA  .swarm/.gitignore\nA  .swarm/README.md\nA  .swarm/config.toml\nA  .swarm/directives/lockfile-with-manifest.toml\nA  .swarm/directives/no-private-keys.toml\nA  .swarm/directives/run-tests-before-handoff.toml\nA  .swarm/events/.gitkeep\nA  .swarm/quarantine/.gitkeep\n"
    );
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
