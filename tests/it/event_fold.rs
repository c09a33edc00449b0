//! Event files written by earlier versions fold exactly as they always have:
//! a fixture with every kind git-swarm knows (odd but accepted values,
//! unknown kinds and unknown fields included) is folded by the library and
//! read by the commands, and the results are compared with snapshots.

use crate::common;

use common::TestEnv;

const FIXTURE: &str = include_str!("../fixtures/events/every-kind.jsonl");

/// The directive and pattern folds of the fixture, as the index keeps them.
#[test]
fn every_kind_folds_as_before() {
    let heads: Vec<_> = FIXTURE
        .lines()
        .filter_map(|l| git_swarm::fold::EventHead::parse(l.as_bytes()))
        .collect();
    let (fold, patterns) = git_swarm::fold::fold_both(heads);
    let mut out = format!("events {} duplicates {}\n", fold.events, fold.duplicates);
    for (kind, n) in fold.kinds() {
        out.push_str(&format!("kind {kind} {n}\n"));
    }
    for id in ["ab", "cd", "qq", "zz"] {
        if let Some(d) = fold.directive(id) {
            out.push_str(&format!(
                "directive {id} counts {:?} total {} last {}\n",
                d.counts(),
                d.total(),
                d.last_ts()
            ));
        }
    }
    for (id, state) in fold.loop_states() {
        out.push_str(&format!("loop {id} {state:?}\n"));
    }
    out.push_str(&format!("{patterns:#?}\n"));
    insta::assert_snapshot!("every_kind_fold", out);
}

fn env_with_fixture() -> TestEnv {
    let env = TestEnv::initialised();
    let dir = env.root.join(".swarm/directives");
    std::fs::write(
        dir.join("ab.toml"),
        "id = \"ab\"\nlesson = \"Never call unwrap on user input\"\npriority = \"high\"\nenforcement = \"enforce\"\napplies_to_agents = [\"coder\"]\nforbidden_actions = [\"unwrap on input\"]\n",
    )
    .expect("write directive");
    std::fs::write(
        dir.join("cd.toml"),
        "id = \"cd\"\nlesson = \"Write the test before the fix\"\napplies_to_tools = [\"bash\"]\nrequired_actions = [\"add a failing test first\"]\n",
    )
    .expect("write directive");
    std::fs::write(env.root.join(".swarm/events/2026-11.jsonl"), FIXTURE).expect("write events");
    env
}

/// What the commands that read the log print of it.
#[test]
fn every_kind_reads_as_before() {
    let env = env_with_fixture();
    let mut out = String::new();
    for args in [
        &["log", "--format", "json"][..],
        &["log"],
        &["list", "--format", "json"],
        &["status", "--format", "json"],
        &["status"],
        &["show", "ab", "--format", "json"],
        &["explain", "ab", "--format", "json"],
        &["explain", "cd"],
        &["pattern", "list", "--format", "json"],
        &["pattern", "show", "pat-1"],
        &["review", "--phase", "p1"],
        &["doctor", "--format", "json"],
        &["doctor", "--fix"],
    ] {
        let run = env.swarm(args);
        out.push_str(&format!(
            "$ git swarm {}\n{}\n",
            args.join(" "),
            run.snapshot()
        ));
    }
    let after =
        std::fs::read_to_string(env.root.join(".swarm/events/2026-11.jsonl")).expect("read events");
    assert_eq!(after, FIXTURE, "doctor --fix keeps every line as it was");
    insta::assert_snapshot!("every_kind_commands", out);
}

/// What the commands that decide from the log (the gate, `ack`) make of
/// it: a field of the wrong type reads as absent, and the line is kept.
#[test]
fn every_kind_decides_as_before() {
    let mut out = String::new();
    for (args, stdin) in [
        (&["phase", "complete", "p1", "--format", "json"][..], None),
        (&["phase", "complete", "p9"], None),
        (&["phase", "complete", "2"], None),
        (
            &[
                "ack",
                "--delegation",
                "01KAAAAAAAAAAAAAAAAAAAAA04",
                "--format",
                "json",
            ],
            Some("KNOWLEDGE_APPLIED:ab\nKNOWLEDGE_N_A:cd reason=not here\nKNOWLEDGE_APPLIED:zz\n"),
        ),
    ] {
        // Each on the fixture as it is: these commands append.
        let env = env_with_fixture();
        let run = env.swarm_with(args, &[], stdin.map(str::as_bytes));
        out.push_str(&format!(
            "$ git swarm {}\n{}\n",
            args.join(" "),
            run.snapshot()
        ));
    }
    insta::assert_snapshot!("every_kind_decisions", out);
}
