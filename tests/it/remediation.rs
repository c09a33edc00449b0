//! Violations recorded by the pre-commit hook are remediated by a later
//! passing check of the same directive on the same branch: real `git
//! commit`s through installed hooks, on days set with `GIT_SWARM_NOW`.

use crate::common;

use common::{Run, TestEnv};
use serde_json::Value;

/// An `enforce` directive (not critical, so an escalation changes it) that
/// forbids adding `HARDCODED_TOKEN` to a `.txt` file.
const DIRECTIVE: &str = "id = \"no-hardcoded-token\"\nlesson = \"Never hardcode the service token in a text file\"\npriority = \"high\"\nenforcement = \"enforce\"\napplies_to_agents = [\"coder\"]\nverify = [\"grep:HARDCODED_TOKEN:*.txt\"]\n";

fn repo() -> TestEnv {
    let env = TestEnv::initialised();
    env.write(".swarm/directives/no-hardcoded-token.toml", DIRECTIVE);
    env.git(&["add", "-A"]);
    env.git(&["commit", "-q", "-m", "a directive"]);
    env.swarm(&["hooks", "install"]).success();
    env
}

/// `git commit -q -m MESSAGE` with the hook's clock at `now`.
fn commit(env: &TestEnv, message: &str, now: &str) -> Run {
    let out = env
        .command("git", &env.root)
        .args(["commit", "-q", "-m", message])
        .env("GIT_SWARM_NOW", now)
        .output()
        .expect("run git");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: env.normalise(&String::from_utf8_lossy(&out.stdout)),
        stderr: env.normalise(&String::from_utf8_lossy(&out.stderr)),
    }
}

fn status(env: &TestEnv, now: &str) -> Value {
    let run = env.swarm_with(
        &["status", "--format", "json"],
        &[("GIT_SWARM_NOW", now)],
        None,
    );
    run.success();
    serde_json::from_str(&run.stdout).expect("status json")
}

fn unremediated(status: &Value) -> Vec<String> {
    status["unremediated_violations"]
        .as_array()
        .expect("array")
        .iter()
        .map(|u| u["id"].as_str().expect("id").to_owned())
        .collect()
}

fn escalated(status: &Value) -> usize {
    status["recently_escalated"]
        .as_array()
        .expect("array")
        .len()
}

fn check_events(env: &TestEnv) -> Vec<Value> {
    env.event_lines()
        .iter()
        .map(|l| serde_json::from_str::<Value>(l).expect("event json"))
        .filter(|e| e["kind"] == "check" || e["kind"] == "check_passed")
        .collect()
}

const DAY1: &str = "2026-11-20T10:00:00Z";
const DAY1_LATER: &str = "2026-11-20T11:00:00Z";
const DAY3: &str = "2026-11-22T10:00:00Z";

#[test]
fn a_fixed_commit_remediates_the_blocked_one_and_a_later_block_does_not_escalate() {
    let env = repo();
    env.write("notes.txt", "token = HARDCODED_TOKEN\n");
    env.git(&["add", "notes.txt"]);
    commit(&env, "notes", DAY1).code(1);
    assert_eq!(unremediated(&status(&env, DAY1)), ["no-hardcoded-token"]);

    // The fix is committed: the hook records the pass that clears the violation.
    env.write("notes.txt", "token = read from the environment\n");
    env.git(&["add", "notes.txt"]);
    let fixed = commit(&env, "notes", DAY1_LATER);
    fixed.success();
    assert!(
        fixed.stderr.contains("passing on refs/heads/main"),
        "{}",
        fixed.snapshot()
    );
    let events = check_events(&env);
    assert_eq!(events.len(), 2, "{events:#?}");
    assert_eq!(events[0]["kind"], "check");
    assert_eq!(events[0]["branch"], "refs/heads/main");
    assert_eq!(events[1]["kind"], "check_passed");
    assert_eq!(events[1]["branch"], "refs/heads/main");
    assert_eq!(events[1]["directive"], "no-hardcoded-token");
    assert!(unremediated(&status(&env, DAY1_LATER)).is_empty());

    // A passing commit with nothing to clear records nothing.
    env.write("more.txt", "more notes\n");
    env.git(&["add", "more.txt"]);
    commit(&env, "more", DAY1_LATER).success();
    assert_eq!(check_events(&env).len(), 2);

    // Another blocked commit two days later: a new violation, not an escalation.
    env.write("other.txt", "HARDCODED_TOKEN\n");
    env.git(&["add", "other.txt"]);
    let blocked = commit(&env, "other", DAY3);
    blocked.code(1);
    assert!(
        !blocked.stderr.contains("escalat"),
        "{}",
        blocked.snapshot()
    );
    let s = status(&env, DAY3);
    assert_eq!(escalated(&s), 0, "{s:#}");
    assert_eq!(unremediated(&s), ["no-hardcoded-token"]);
}

#[test]
fn two_blocked_commits_without_a_fix_between_still_escalate() {
    let env = repo();
    env.write("notes.txt", "HARDCODED_TOKEN\n");
    env.git(&["add", "notes.txt"]);
    commit(&env, "notes", DAY1).code(1);
    env.write("notes.txt", "HARDCODED_TOKEN again\n");
    env.git(&["add", "notes.txt"]);
    commit(&env, "notes", DAY3).code(1);
    let s = status(&env, DAY3);
    assert_eq!(escalated(&s), 1, "{s:#}");
    assert_eq!(unremediated(&s), ["no-hardcoded-token"]);

    // The fix remediates the violations but does not end the episode:
    // only a deescalation does.
    env.write("notes.txt", "clean\n");
    env.git(&["add", "notes.txt"]);
    commit(&env, "notes", DAY3).success();
    let s = status(&env, DAY3);
    assert!(unremediated(&s).is_empty(), "{s:#}");
    assert_eq!(escalated(&s), 1, "{s:#}");
    let explained = env.swarm(&["explain", "no-hardcoded-token", "--format", "json"]);
    explained.success();
    let json: Value = serde_json::from_str(&explained.stdout).expect("explain json");
    assert_eq!(json["effective_priority"], "critical", "{json:#}");
    assert!(json["episodes"][0]["ended"].is_null(), "{json:#}");
}

#[test]
fn a_pass_on_another_branch_does_not_remediate() {
    let env = repo();
    env.write("notes.txt", "HARDCODED_TOKEN\n");
    env.git(&["add", "notes.txt"]);
    commit(&env, "notes", DAY1).code(1);
    env.git(&["reset", "-q"]);
    std::fs::remove_file(env.path("notes.txt")).expect("remove");

    env.git(&["switch", "-q", "-c", "topic"]);
    env.write("notes.txt", "clean\n");
    env.git(&["add", "notes.txt"]);
    commit(&env, "notes", DAY1_LATER).success();
    assert_eq!(check_events(&env).len(), 1, "no pass recorded on topic");
    assert_eq!(
        unremediated(&status(&env, DAY1_LATER)),
        ["no-hardcoded-token"]
    );

    // Back on main, the passing commit clears it.
    env.git(&["switch", "-q", "main"]);
    env.write("notes.txt", "clean on main\n");
    env.git(&["add", "notes.txt"]);
    commit(&env, "notes", DAY1_LATER).success();
    assert!(unremediated(&status(&env, DAY1_LATER)).is_empty());
}

#[test]
fn check_record_on_a_commit_records_the_pass_of_its_branch() {
    let env = repo();
    env.write("notes.txt", "HARDCODED_TOKEN\n");
    env.git(&["add", "notes.txt"]);
    commit(&env, "notes", DAY1).code(1);
    // Committed past the hook, then fixed in the next commit.
    env.write("notes.txt", "clean\n");
    env.git(&["add", "notes.txt"]);
    let out = env
        .command("git", &env.root)
        .args(["commit", "-q", "-m", "fix"])
        .env("GIT_SWARM_SKIP", "1")
        .output()
        .expect("commit");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = env.swarm_with(
        &["check", "--commit", "main", "--record"],
        &[("GIT_SWARM_NOW", DAY1_LATER)],
        None,
    );
    run.success();
    let events = check_events(&env);
    assert_eq!(
        events.last().expect("events")["kind"],
        "check_passed",
        "{events:#?}"
    );
    assert!(unremediated(&status(&env, DAY1_LATER)).is_empty());
}

#[test]
fn a_commit_made_during_a_rebase_is_on_the_branch_being_rebased() {
    let env = repo();
    for name in ["a", "b"] {
        env.write(&format!("{name}.txt"), "clean\n");
        env.git(&["add", "-A"]);
        commit(&env, name, DAY1).success();
    }
    // Stop at the first commit to edit it: HEAD is detached, and git knows
    // the rebase is of main.
    let out = env
        .command("git", &env.root)
        .args(["rebase", "-q", "-i", "HEAD~2"])
        .env("GIT_SEQUENCE_EDITOR", "sed -i -e '1s/^pick/edit/'")
        .output()
        .expect("run git");
    assert!(out.status.success(), "{out:?}");
    assert!(env.git(&["branch"]).contains("rebasing main"));
    env.write("c.txt", "HARDCODED_TOKEN\n");
    env.git(&["add", "c.txt"]);
    commit(&env, "c", DAY1).code(1);
    env.write("c.txt", "clean\n");
    env.git(&["add", "c.txt"]);
    commit(&env, "c", DAY1_LATER).success();
    let events = check_events(&env);
    assert_eq!(events.len(), 2, "{events:#?}");
    assert_eq!(events[0]["branch"], "refs/heads/main");
    assert_eq!(events[1]["kind"], "check_passed");
    assert_eq!(events[1]["branch"], "refs/heads/main");
    assert!(unremediated(&status(&env, DAY1_LATER)).is_empty());
}

#[test]
fn a_pass_of_a_commit_older_than_the_violation_clears_nothing() {
    let env = repo();
    env.write("a.txt", "clean\n");
    env.git(&["add", "a.txt"]);
    let out = env
        .command("git", &env.root)
        .args(["commit", "-q", "-m", "a"])
        .env("GIT_COMMITTER_DATE", "2026-11-19T10:00:00Z")
        .output()
        .expect("commit");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Blocked; the bad change is still staged.
    env.write("c.txt", "HARDCODED_TOKEN\n");
    env.git(&["add", "c.txt"]);
    commit(&env, "c", DAY1).code(1);
    // HEAD, made the day before, passes: no fix of what was blocked since.
    for args in [
        ["check", "--record", "--commit", "HEAD"],
        ["check", "--record", "--range", "HEAD~1..main"],
    ] {
        env.swarm_with(&args, &[("GIT_SWARM_NOW", DAY1_LATER)], None)
            .success();
    }
    assert_eq!(check_events(&env).len(), 1, "{:#?}", check_events(&env));
    assert_eq!(
        unremediated(&status(&env, DAY1_LATER)),
        ["no-hardcoded-token"]
    );
    // The blocked change committed past the hook and checked: its own
    // failure, recorded once; a fix committed after it clears it.
    let out = env
        .command("git", &env.root)
        .args(["commit", "-q", "-m", "c"])
        .env("GIT_SWARM_SKIP", "1")
        .output()
        .expect("commit");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    env.write("c.txt", "clean\n");
    env.git(&["add", "c.txt"]);
    commit(&env, "fix", DAY3).success();
    assert!(unremediated(&status(&env, DAY3)).is_empty());
}

#[test]
fn the_same_change_blocked_again_after_a_remediation_is_a_violation_again() {
    let env = repo();
    env.write("c.txt", "HARDCODED_TOKEN\n");
    env.git(&["add", "c.txt"]);
    commit(&env, "c", DAY1).code(1);
    // Remediated by an applied ack while the change is still staged.
    env.swarm_with(
        &[
            "record",
            "ack",
            "--directive",
            "no-hardcoded-token",
            "--field",
            "status=applied",
        ],
        &[("GIT_SWARM_NOW", DAY1)],
        None,
    )
    .success();
    assert!(unremediated(&status(&env, DAY1)).is_empty());
    // The same change, blocked again: the violation stands again.
    commit(&env, "c", DAY1_LATER).code(1);
    let events = check_events(&env);
    assert_eq!(events.len(), 2, "{events:#?}");
    assert_eq!(events[0]["change"], events[1]["change"]);
    assert_eq!(
        unremediated(&status(&env, DAY1_LATER)),
        ["no-hardcoded-token"]
    );
    // Retrying it without a remediation between records nothing more.
    commit(&env, "c", DAY3).code(1);
    assert_eq!(check_events(&env).len(), 2);
    // One change: one occasion, no escalation.
    assert_eq!(escalated(&status(&env, DAY3)), 0);
}

#[test]
fn a_pass_that_would_sort_before_the_violation_is_not_recorded() {
    let env = repo();
    // Recorded by a clock two days ahead of the one that checks the fixes.
    env.write("c.txt", "HARDCODED_TOKEN\n");
    env.git(&["add", "c.txt"]);
    commit(&env, "c", DAY3).code(1);
    env.write("c.txt", "clean\n");
    env.git(&["add", "c.txt"]);
    commit(&env, "c", DAY1).success();
    env.write("d.txt", "clean too\n");
    env.git(&["add", "d.txt"]);
    commit(&env, "d", DAY1_LATER).success();
    // Each pass would sort before the violation and clear nothing: none
    // is recorded, rather than one for every passing commit.
    let events = check_events(&env);
    assert_eq!(events.len(), 1, "{events:#?}");
    // A clock past the violation records the pass that clears it.
    env.write("e.txt", "clean as well\n");
    env.git(&["add", "e.txt"]);
    commit(&env, "e", "2026-11-22T11:00:00Z").success();
    assert_eq!(check_events(&env).len(), 2);
    assert!(unremediated(&status(&env, "2026-11-22T11:00:00Z")).is_empty());
}
