//! `git swarm reflect macro` and `git swarm proposal`: motifs that recur
//! across phases proposed, and a person's decision on each.
//!
//! The motifs are made as a harness makes them: `phase start`, then tool
//! calls read by `reflect micro` (the plain `{tool, input, output,
//! exit_code, session}` payload, or Claude Code's `PostToolUseFailure`),
//! folded by `reflect meso`; violations by `inject` and `ack`.

use crate::common;

use common::{Run, TestEnv, of_kind, swarm, tick};
use serde_json::{Value, json};

const TENANT_FAILS: &str = "test cache::tests::tenant_key ... FAILED\n\ntest result: FAILED. 9 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out";

/// A Claude Code `PostToolUseFailure` of `command` by a coder in `session`.
fn failure(session: &str, command: &str, output: &str) -> String {
    json!({
        "session_id": session,
        "transcript_path": format!("/home/u/.claude/projects/p/{session}.jsonl"),
        "cwd": "/home/u/proj",
        "hook_event_name": "PostToolUseFailure",
        "tool_name": "Bash",
        "tool_input": {"command": command, "description": "Run it"},
        "tool_use_id": format!("toolu_{session}"),
        "error": format!("Exit code 101\n{output}"),
        "agent_id": format!("{session}-agent"),
        "agent_type": "coder",
    })
    .to_string()
}

/// `reflect micro` of `payload` at the next tick, the phase from `phase start`.
fn micro(env: &TestEnv, payload: &str) {
    let run = env.swarm_with(
        &["reflect", "micro"],
        &[("GIT_SWARM_NOW", &tick())],
        Some(payload.as_bytes()),
    );
    run.success();
    assert_eq!(run.stderr, "", "{}", run.snapshot());
}

/// `reflect micro` of a plain payload in `phase`: `command` failed in
/// `session`, a test named after it failing (a signature keeps a command's
/// first two words only).
fn plain_failure(env: &TestEnv, phase: &str, session: &str, command: &str) {
    let payload = json!({"tool": "bash", "input": command, "exit_code": 101, "session": session,
        "output": format!("test {} ... FAILED\n\ntest result: FAILED. 1 passed; 1 failed; 0 ignored", command.replace(' ', "_"))});
    let run = env.swarm_with(
        &["reflect", "micro", "--phase", phase, "--role", "coder"],
        &[("GIT_SWARM_NOW", &tick())],
        Some(payload.to_string().as_bytes()),
    );
    run.success();
}

fn macro_json(env: &TestEnv) -> Value {
    let run = swarm(env, &["reflect", "macro", "--format", "json"]);
    run.success();
    serde_json::from_str(&run.stdout).expect("macro json")
}

fn proposal_files(env: &TestEnv) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(env.path(".swarm/proposals"))
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".md"))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

fn candidates(env: &TestEnv) -> usize {
    if !env.exists(".git/swarm/local/candidates.jsonl") {
        return 0;
    }
    env.read(".git/swarm/local/candidates.jsonl")
        .lines()
        .count()
}

fn show(env: &TestEnv, slug: &str) -> Value {
    let run = swarm(env, &["proposal", "show", slug, "--format", "json"]);
    run.success();
    serde_json::from_str(&run.stdout).expect("show json")
}

/// Two phases in each of which two coders fail `cargo test` the same way:
/// meso makes a lesson of the first, and finds the second covered by it.
fn tests_fail_in_two_phases(env: &TestEnv) {
    for phase in ["build-1", "build-2"] {
        swarm(env, &["phase", "start", phase]).success();
        for session in ["s1", "s2"] {
            micro(
                env,
                &failure(&format!("{phase}-{session}"), "cargo test", TENANT_FAILS),
            );
        }
        swarm(env, &["reflect", "meso", "--phase", phase]).success();
    }
}

/// The one proposal of the repository: its slug.
fn the_proposal(env: &TestEnv) -> String {
    let files = proposal_files(env);
    assert_eq!(files.len(), 1, "{files:?}");
    files[0].trim_end_matches(".md").to_owned()
}

#[test]
fn a_motif_across_two_phases_makes_one_proposal_whose_predicate_parses() {
    let env = common::repo_without_directives();
    tests_fail_in_two_phases(&env);
    let reflected = of_kind(&env, "reflected");
    let outcomes: Vec<&Value> = reflected.iter().map(|e| &e["outcome"]).collect();
    // The second phase finds meso's lesson of the first written already.
    assert_eq!(outcomes, ["added", "existing"]);
    let lesson = reflected[0]["directive"].as_str().expect("lesson id");

    let run = swarm(&env, &["reflect", "macro"]);
    run.success();
    let slug = the_proposal(&env);
    assert!(slug.starts_with("macro-run-cargo-test-"), "{slug}");
    // Meso's lesson is active and the failure went on: a stronger rule.
    assert_eq!(
        run.stdout,
        format!(
            "proposed {slug} (.swarm/proposals/{slug}.md, 2 phases, tool:cargo test): Still failing in 2 phases (build-1, build-2) despite `{lesson}`: Run `cargo test` before handing off: it failed the same way in 2 tasks of phase build-1 (test cache::tests::tenant_key ... FAILED)\n"
        )
    );
    let text = env.read(&format!(".swarm/proposals/{slug}.md"));
    assert!(text.starts_with(&format!("---\nslug: {slug}\n")), "{text}");
    assert!(text.contains("\nstatus: open\n"), "{text}");
    assert!(text.contains("\nverify:\n- tool:cargo test\n"), "{text}");
    assert!(text.contains("\napplies_to_agents:\n- coder\n"), "{text}");
    // The prose names the phases, the events and the directive that did
    // not stop it.
    assert!(
        text.contains("phase `build-2`: `reflected` event"),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "Directive `{lesson}` is active: it did not stop the failure"
        )),
        "{text}"
    );
    assert!(
        text.contains("Suggested predicate: `tool:cargo test`."),
        "{text}"
    );

    // The file reads back: every field, the evidence the reflected events.
    let p = show(&env, &slug);
    assert_eq!(p["slug"], slug);
    assert_eq!(p["status"], "open");
    assert_eq!(p["source"], "git swarm reflect macro");
    assert_eq!(p["verify"], json!(["tool:cargo test"]));
    assert_eq!(p["applies_to_tools"], json!(["bash"]));
    assert_eq!(
        p["key"],
        "signature: failure:test:cargo test:test cache::tests::tenant_key ... failed"
    );
    // The evidence is the reflected events (ids are masked in the output:
    // read the file).
    let ids: Vec<&str> = reflected
        .iter()
        .map(|e| e["id"].as_str().expect("id"))
        .collect();
    assert!(
        text.contains(&format!("\nevidence:\n- {}\n- {}\n", ids[0], ids[1])),
        "{text}"
    );
    assert!(
        p["body"]
            .as_str()
            .expect("body")
            .starts_with("Seen in 2 phases (build-1, build-2).")
    );
    let proposed = of_kind(&env, "proposed");
    assert_eq!(proposed.len(), 1);
    assert_eq!(proposed[0]["directive"], slug);
    assert_eq!(proposed[0]["path"], format!(".swarm/proposals/{slug}.md"));
    assert_eq!(proposed[0]["key"], p["key"]);
    env.swarm(&["validate"]).success();

    // A second run finds the motif proposed, and proposes nothing.
    let again = swarm(&env, &["reflect", "macro"]);
    again.success();
    assert_eq!(
        again.stdout,
        format!(
            "already proposed as {slug} (open): signature: failure:test:cargo test:test cache::tests::tenant_key ... failed\n"
        )
    );
    assert_eq!(proposal_files(&env).len(), 1);
    assert_eq!(of_kind(&env, "proposed").len(), 1);

    // A run stopped after writing the proposal, before its event: the next
    // records the event, once.
    let month = common::PENDING_NOV;
    let log: String = env
        .read(month)
        .lines()
        .filter(|l| !l.contains("\"kind\":\"proposed\""))
        .map(|l| format!("{l}\n"))
        .collect();
    env.write(month, log);
    assert!(of_kind(&env, "proposed").is_empty());
    swarm(&env, &["reflect", "macro"]).success();
    swarm(&env, &["reflect", "macro"]).success();
    let proposed = of_kind(&env, "proposed");
    assert_eq!(proposed.len(), 1);
    assert_eq!(proposed[0]["directive"], slug);
}

#[test]
fn accept_makes_a_directive_that_passes_validate() {
    let env = common::repo_without_directives();
    plain_failure(&env, "p1", "s1", "cargo test -p app");
    plain_failure(&env, "p2", "s2", "cargo test -p app");
    let report = macro_json(&env);
    assert_eq!(report["proposed"].as_array().map(Vec::len), Some(1));
    assert_eq!(report["left"], 0);
    assert_eq!(candidates(&env), 0, "the candidates used are consumed");
    let slug = the_proposal(&env);
    let before = env.read(&format!(".swarm/proposals/{slug}.md"));

    let run = swarm(&env, &["proposal", "accept", &slug]);
    run.success();
    assert_eq!(
        run.stdout,
        format!("accepted {slug}: added `{slug}` at .swarm/directives/{slug}.toml\n")
    );
    let d: toml::Value =
        toml::from_str(&env.read(&format!(".swarm/directives/{slug}.toml"))).expect("toml");
    assert_eq!(
        d["verify"],
        toml::Value::Array(vec!["tool:cargo test -p app".into()])
    );
    assert_eq!(
        d["source"].as_str(),
        Some(format!("proposal {slug} (git swarm reflect macro)").as_str())
    );
    env.swarm(&["validate"]).success();
    let p = show(&env, &slug);
    assert_eq!(p["status"], "accepted");
    assert_eq!(p["directive"], slug);
    assert!(p["decided_at"].is_string());
    assert_eq!(of_kind(&env, "added").len(), 1);
    let accepted = of_kind(&env, "proposal_accepted");
    assert_eq!(accepted.len(), 1);
    assert_eq!(accepted[0]["outcome"], "added");
    assert_eq!(accepted[0]["directive"], slug);

    // Decided is decided.
    let run = swarm(&env, &["proposal", "accept", &slug]);
    run.code(2);
    assert!(
        run.stderr
            .starts_with(&format!("error: proposal `{slug}` was accepted already")),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("hint: "), "{}", run.stderr);
    let run = swarm(
        &env,
        &["proposal", "reject", &slug, "--reason", "changed my mind"],
    );
    run.code(2);
    assert_eq!(
        swarm(&env, &["proposal", "list"]).stdout,
        "no open proposals\n"
    );
    let listed = swarm(&env, &["proposal", "list", "--status", "accepted"]);
    assert!(
        listed.stdout.starts_with(&format!("{slug}  accepted")),
        "{}",
        listed.stdout
    );

    // An accept cut short after the directive and its events, before the
    // proposal was marked, is finished by the next without a duplicate.
    env.write(&format!(".swarm/proposals/{slug}.md"), &before);
    let run = swarm(&env, &["proposal", "accept", &slug]);
    run.success();
    assert!(run.stderr.contains("finished"), "{}", run.stderr);
    assert_eq!(show(&env, &slug)["status"], "accepted");
    assert_eq!(of_kind(&env, "added").len(), 1);
    assert_eq!(of_kind(&env, "proposal_accepted").len(), 1);
}

#[test]
fn accept_refuses_an_id_another_directive_holds_and_quarantines_what_fails_the_gate() {
    let env = common::repo_without_directives();
    // A command failing with no role known, from a tool no scope names:
    // nothing to scope the lesson to.
    for (phase, session) in [("p1", "s1"), ("p2", "s2")] {
        let payload = json!({"tool": "Deploy-Tool", "input": {"target": "prod"}, "session": session,
            "error": "deploy refused: the release is not signed"});
        let run = env.swarm_with(
            &["reflect", "micro", "--phase", phase],
            &[("GIT_SWARM_NOW", &tick())],
            Some(payload.to_string().as_bytes()),
        );
        run.success();
    }
    macro_json(&env);
    let slug = the_proposal(&env);
    let text = env.read(&format!(".swarm/proposals/{slug}.md"));
    assert!(text.contains("No predicate could be derived"), "{text}");
    assert!(
        text.contains("accepting it quarantines the directive"),
        "{text}"
    );

    common::directive(
        &env,
        &slug,
        "lesson = \"Someone else's lesson under this id\"\napplies_to_agents = [\"coder\"]\nrequired_actions = [\"something\"]",
    );
    let run = swarm(&env, &["proposal", "accept", &slug]);
    run.code(2);
    assert!(
        run.stderr.contains("did not come from proposal"),
        "{}",
        run.stderr
    );
    assert_eq!(show(&env, &slug)["status"], "open");
    std::fs::remove_file(env.path(&format!(".swarm/directives/{slug}.toml"))).expect("rm");

    let run = swarm(&env, &["proposal", "accept", &slug]);
    run.code(1);
    assert!(
        run.stdout.starts_with(&format!(
            "accepted {slug}: quarantined `{slug}` at .swarm/quarantine/{slug}.toml: missing_scope"
        )),
        "{}",
        run.stdout
    );
    assert!(env.exists(&format!(".swarm/quarantine/{slug}.toml")));
    assert_eq!(show(&env, &slug)["status"], "accepted");
    assert_eq!(of_kind(&env, "quarantined").len(), 1);
    assert_eq!(
        of_kind(&env, "proposal_accepted")[0]["outcome"],
        "quarantined"
    );
}

#[test]
fn reject_records_the_reason_and_the_motif_is_not_proposed_again() {
    let env = common::repo_without_directives();
    plain_failure(&env, "p1", "s1", "npm test");
    plain_failure(&env, "p2", "s2", "npm test");
    macro_json(&env);
    let slug = the_proposal(&env);

    let run = swarm(&env, &["proposal", "reject", &slug]);
    run.code(2);
    assert!(run.stderr.contains("--reason"), "{}", run.stderr);
    let run = swarm(&env, &["proposal", "reject", &slug, "--reason", "  "]);
    run.code(2);
    assert!(run.stderr.contains("hint: "), "{}", run.stderr);

    let run = swarm(
        &env,
        &[
            "proposal",
            "reject",
            &slug,
            "--reason",
            "flaky runner, not the code",
        ],
    );
    run.success();
    assert_eq!(
        run.stdout,
        format!("rejected {slug} (.swarm/proposals/{slug}.md): flaky runner, not the code\n")
    );
    let text = env.read(&format!(".swarm/proposals/{slug}.md"));
    assert!(text.contains("\nstatus: rejected\n"), "{text}");
    assert!(
        text.contains("\nreason: flaky runner, not the code\n"),
        "{text}"
    );
    let rejected = of_kind(&env, "proposal_rejected");
    assert_eq!(rejected.len(), 1);
    assert_eq!(rejected[0]["reason"], "flaky runner, not the code");
    assert_eq!(rejected[0]["directive"], slug);
    assert!(!env.exists(&format!(".swarm/directives/{slug}.toml")));
    env.swarm(&["validate"]).success();

    // The same motif again: not proposed, its candidates left to meso.
    plain_failure(&env, "p3", "s3", "npm test");
    plain_failure(&env, "p4", "s4", "npm test");
    let run = swarm(&env, &["reflect", "macro"]);
    run.success();
    assert!(
        run.stdout
            .starts_with(&format!("already proposed as {slug} (rejected): ")),
        "{}",
        run.stdout
    );
    assert_eq!(proposal_files(&env).len(), 1);
    assert_eq!(candidates(&env), 2);
}

#[test]
fn at_most_ten_proposals_a_run_the_strongest_first_the_rest_next_time() {
    let env = common::repo_without_directives();
    // Digits are normalised out of a signature: the crates are told apart by name.
    let crates = [
        "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india",
        "juliet", "kilo", "lima",
    ];
    for (i, name) in crates.iter().enumerate() {
        let command = format!("cargo test -p {name}");
        plain_failure(&env, "p1", &format!("a{i}"), &command);
        plain_failure(&env, "p2", &format!("b{i}"), &command);
    }
    // The last by name, but seen in three phases: the strongest.
    plain_failure(&env, "p3", "c11", "cargo test -p lima");
    let run = swarm(&env, &["reflect", "macro"]);
    run.success();
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), 11, "{}", run.stdout);
    assert!(
        lines[0].contains("3 phases") && lines[0].contains("-p lima"),
        "{}",
        lines[0]
    );
    assert_eq!(
        lines[10],
        "2 more motifs left for the next run (at most 10 proposals a run)"
    );
    assert_eq!(proposal_files(&env).len(), 10);
    assert_eq!(of_kind(&env, "proposed").len(), 10);
    assert_eq!(
        candidates(&env),
        4,
        "the two motifs left keep their candidates"
    );

    let report = macro_json(&env);
    assert_eq!(report["proposed"].as_array().map(Vec::len), Some(2));
    assert_eq!(report["already"].as_array().map(Vec::len), Some(0));
    assert_eq!(report["left"], 0);
    assert_eq!(proposal_files(&env).len(), 12);
    assert_eq!(of_kind(&env, "proposed").len(), 12);
    assert_eq!(candidates(&env), 0);
    let list = swarm(&env, &["proposal", "list", "--format", "json"]);
    list.success();
    let list: Value = serde_json::from_str(&list.stdout).expect("list json");
    assert_eq!(list.as_array().map(Vec::len), Some(12));
}

#[test]
fn a_directive_violated_in_two_phases_is_proposed_with_its_own_predicates() {
    let env = common::repo_without_directives();
    common::directive(
        &env,
        "migrations-reviewed",
        "lesson = \"Touch a migration only with the schema file beside it\"\npriority = \"high\"\napplies_to_agents = [\"coder\"]\npaths = [\"migrations/**\"]\nverify = [\"file_modified:schema.sql\"]",
    );
    env.git(&["add", "-A"]);
    env.git(&["commit", "-q", "-m", "directive"]);
    for phase in ["p1", "p2"] {
        let run = swarm(&env, &["inject", "--role", "coder", "--phase", phase]);
        run.success();
        let shown = of_kind(&env, "shown");
        let delegation = shown.last().expect("shown")["id"]
            .as_str()
            .expect("id")
            .to_owned();
        let ack = env.swarm_with(
            &["ack", "--delegation", &delegation, "-"],
            &[("GIT_SWARM_NOW", &tick())],
            Some(b"KNOWLEDGE_VIOLATED:migrations-reviewed reason=no time\n"),
        );
        ack.success();
    }
    let report = macro_json(&env);
    let proposed = report["proposed"].as_array().expect("proposed");
    assert_eq!(proposed.len(), 1, "{report:#}");
    assert_eq!(proposed[0]["key"], "violated: migrations-reviewed");
    assert_eq!(proposed[0]["phases"], json!(["p1", "p2"]));
    let slug = proposed[0]["slug"].as_str().expect("slug");
    let p = show(&env, slug);
    assert_eq!(p["verify"], json!(["file_modified:schema.sql"]));
    assert_eq!(p["paths"], json!(["migrations/**"]));
    assert_eq!(p["applies_to_agents"], json!(["coder"]));
    assert!(
        p["title"]
            .as_str()
            .expect("title")
            .starts_with("Enforce `migrations-reviewed`: violated in 2 phases (p1, p2)"),
        "{p:#}"
    );
    // The evidence is the two acks (ids are masked in the output: read the file).
    assert_eq!(p["evidence"].as_array().map(Vec::len), Some(2));
    let text = env.read(&format!(".swarm/proposals/{slug}.md"));
    for ack in of_kind(&env, "ack") {
        let id = ack["id"].as_str().expect("id");
        assert!(text.contains(&format!("\n- {id}\n")), "{text}");
    }
    swarm(&env, &["proposal", "accept", slug]).success();
    env.swarm(&["validate"]).success();
}

#[test]
fn a_broken_proposal_is_reported_with_its_line_and_the_others_still_read() {
    let env = common::repo_without_directives();
    plain_failure(&env, "p1", "s1", "go test ./...");
    plain_failure(&env, "p2", "s2", "go test ./...");
    macro_json(&env);
    let slug = the_proposal(&env);
    env.write(
        ".swarm/proposals/broken.md",
        "---\nslug: broken\nstatus: maybe\n---\n\nprose\n",
    );
    let bad = ".swarm/proposals/broken.md:3: error: unknown variant `maybe`, expected one of open, accepted, rejected\n";

    let run = swarm(&env, &["proposal", "list"]);
    run.success();
    assert!(run.stderr.starts_with(bad), "{}", run.stderr);
    assert!(
        run.stdout.starts_with(&format!("{slug}  open")),
        "{}",
        run.stdout
    );
    let run = swarm(
        &env,
        &["proposal", "list", "--status", "all", "--format", "json"],
    );
    run.success();
    let list: Value = serde_json::from_str(&run.stdout).expect("json");
    assert_eq!(list[0]["slug"], slug);
    assert_eq!(list[0]["path"], format!(".swarm/proposals/{slug}.md"));

    let run = env.swarm(&["validate"]);
    run.code(2);
    assert!(
        run.stdout.contains(bad) || run.stderr.contains(bad),
        "{}",
        run.snapshot()
    );

    let run = swarm(&env, &["proposal", "show", "broken"]);
    run.code(2);
    assert!(run.stderr.starts_with(bad), "{}", run.stderr);
    let run = swarm(&env, &["proposal", "accept", "broken"]);
    run.code(2);

    // A run of reflect macro reports it, and goes on.
    plain_failure(&env, "p1", "s1", "pytest -q");
    plain_failure(&env, "p2", "s2", "pytest -q");
    let run = swarm(&env, &["reflect", "macro"]);
    run.success();
    assert!(run.stderr.starts_with(bad), "{}", run.stderr);
    assert!(
        run.stdout.starts_with("proposed macro-run-pytest-q"),
        "{}",
        run.stdout
    );
}

#[test]
fn an_unknown_slug_names_the_closest() {
    let env = common::repo_without_directives();
    plain_failure(&env, "p1", "s1", "cargo clippy");
    plain_failure(&env, "p2", "s2", "cargo clippy");
    macro_json(&env);
    let slug = the_proposal(&env);
    let typo = &slug[..slug.len() - 2];
    let run: Run = swarm(&env, &["proposal", "show", typo]);
    run.code(2);
    assert_eq!(
        run.stderr,
        format!(
            "error: no proposal `{typo}`\nhint: did you mean `{slug}`? `git swarm proposal list --status all` lists them\n"
        )
    );
    let run = swarm(&env, &["reflect", "macro", "--since", "soon"]);
    run.code(2);
    assert!(run.stderr.contains("--since `soon`"), "{}", run.stderr);
}

#[test]
fn since_leaves_out_older_evidence() {
    let env = common::repo_without_directives();
    // Ten days before the other phase.
    let payload = json!({"tool": "bash", "input": "make check", "exit_code": 2, "session": "old",
        "output": "make: *** [check] Error 1"});
    env.swarm_with(
        &["reflect", "micro", "--phase", "p0", "--role", "coder"],
        &[("GIT_SWARM_NOW", "2026-11-12T10:00:00Z")],
        Some(payload.to_string().as_bytes()),
    )
    .success();
    let payload = json!({"tool": "bash", "input": "make check", "exit_code": 2, "session": "new",
        "output": "make: *** [check] Error 1"});
    plain_failure(&env, "p1", "s1", "unrelated");
    env.swarm_with(
        &["reflect", "micro", "--phase", "p1", "--role", "coder"],
        &[("GIT_SWARM_NOW", &tick())],
        Some(payload.to_string().as_bytes()),
    )
    .success();
    let run = swarm(&env, &["reflect", "macro", "--since", "7d"]);
    run.success();
    assert_eq!(run.stdout, "no motif recurs across phases\n");
    assert!(proposal_files(&env).is_empty());
    let run = swarm(&env, &["reflect", "macro", "--since", "2026-11-01"]);
    run.success();
    assert!(run.stdout.starts_with("proposed "), "{}", run.stdout);
}

#[cfg(unix)]
#[test]
fn a_run_stopped_before_consuming_is_finished_by_the_next() {
    let env = common::repo_without_directives();
    plain_failure(&env, "p1", "s1", "cargo test -p app");
    plain_failure(&env, "p2", "s2", "cargo test -p app");
    // The candidates' lock cannot be taken: the run writes its proposal and
    // records it, then stops before it consumes the candidates.
    std::fs::remove_file(env.path(".git/swarm/local/candidates.lock")).expect("rm lock");
    common::mkfifo(&env.path(".git/swarm/local/candidates.lock"));
    let run = swarm(&env, &["reflect", "macro"]);
    assert_ne!(run.code, 0, "{}", run.snapshot());
    assert!(run.stderr.contains("candidates.lock"), "{}", run.stderr);
    let slug = the_proposal(&env);
    assert_eq!(candidates(&env), 2, "nothing lost");
    assert_eq!(of_kind(&env, "proposed").len(), 1);

    std::fs::remove_file(env.path(".git/swarm/local/candidates.lock")).expect("rm fifo");
    let run = swarm(&env, &["reflect", "macro"]);
    run.success();
    assert!(
        run.stdout
            .starts_with(&format!("already proposed as {slug} (open): ")),
        "{}",
        run.stdout
    );
    assert_eq!(candidates(&env), 0, "consumed now");
    assert_eq!(proposal_files(&env).len(), 1, "no duplicate");
    assert_eq!(of_kind(&env, "proposed").len(), 1);
}

#[cfg(unix)]
#[test]
fn a_motif_of_a_thousand_calls_makes_a_proposal_that_reads_back() {
    let env = common::repo_without_directives();
    plain_failure(&env, "p1", "s1", "cargo test -p big");
    plain_failure(&env, "p2", "s2", "cargo test -p big");
    // 1,200 more failing calls of the same motif, across the two phases,
    // each with a long task name.
    let file = ".git/swarm/local/candidates.jsonl";
    let template: Value =
        serde_json::from_str(env.read(file).lines().next().expect("a candidate")).expect("json");
    let mut lines = env.read(file);
    for i in 0..1200 {
        let mut c = template.clone();
        c["id"] = json!(format!("{}{i:04}", template["id"].as_str().expect("id")));
        c["phase"] = json!(if i % 2 == 0 { "p1" } else { "p2" });
        c["task"] = json!(format!("task-{i}-{}", "x".repeat(150)));
        lines.push_str(&format!("{c}\n"));
    }
    env.write(file, lines);
    assert_eq!(candidates(&env), 1202);

    // The first run stops before it consumes the candidates (their lock
    // cannot be taken); the next consumes them all, not only those listed.
    std::fs::remove_file(env.path(".git/swarm/local/candidates.lock")).expect("rm lock");
    common::mkfifo(&env.path(".git/swarm/local/candidates.lock"));
    let run = swarm(&env, &["reflect", "macro"]);
    assert_ne!(run.code, 0, "{}", run.snapshot());
    assert_eq!(candidates(&env), 1202);
    std::fs::remove_file(env.path(".git/swarm/local/candidates.lock")).expect("rm fifo");
    let run = swarm(&env, &["reflect", "macro"]);
    run.success();
    assert!(!run.stderr.contains("error"), "{}", run.snapshot());
    let slug = the_proposal(&env);
    let rel = format!(".swarm/proposals/{slug}.md");
    let size = std::fs::metadata(env.path(&rel)).expect("stat").len();
    assert!(size < 64 * 1024, "{size} bytes");
    assert_eq!(candidates(&env), 0, "every candidate of the motif consumed");

    // It reads back: listed without a problem, the latest evidence listed
    // and the rest counted.
    let list = swarm(&env, &["proposal", "list"]);
    list.success();
    assert_eq!(list.stderr, "", "{}", list.snapshot());
    assert!(
        list.stdout.starts_with(&format!("{slug}  open")),
        "{}",
        list.stdout
    );
    let p = show(&env, &slug);
    assert_eq!(p["evidence"].as_array().map(Vec::len), Some(50));
    let text = env.read(&rel);
    assert!(text.contains("-1199-"), "the latest is listed");
    assert!(!text.contains("task-0-"), "the earliest is not");
    let body = p["body"].as_str().expect("body");
    assert!(
        body.contains(
            "- and 1182 more before these (0 events and 1202 insight candidates in all)\n"
        ),
        "{body}"
    );
    assert_eq!(
        body.lines()
            .filter(|l| l.contains("insight candidate "))
            .count(),
        20,
        "{body}"
    );
}

#[test]
fn a_proposal_too_large_is_reported_with_a_hint() {
    let env = common::repo_without_directives();
    env.write(
        ".swarm/proposals/huge.md",
        format!(
            "---\nslug: huge\ntitle: A proposal far too long to be read back\nsource: x\nkey: k\ncreated_at: 2026-11-22T10:00:00Z\n---\n\n{}\n",
            "word ".repeat(60_000)
        ),
    );
    let run = swarm(&env, &["proposal", "list"]);
    run.success();
    assert!(
        run.stderr.starts_with(".swarm/proposals/huge.md: error: "),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("hint: a proposal is at most 262144 bytes"),
        "{}",
        run.stderr
    );
}

#[test]
fn two_runs_at_once_record_each_proposal_once() {
    let env = common::repo_without_directives();
    let crates = [
        "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel",
    ];
    for (i, name) in crates.iter().enumerate() {
        let command = format!("cargo test -p {name}");
        plain_failure(&env, "p1", &format!("a{i}"), &command);
        plain_failure(&env, "p2", &format!("b{i}"), &command);
    }
    let now = tick();
    let runs: Vec<std::process::Child> = (0..2)
        .map(|_| {
            env.command(common::bin(), &env.root)
                .args(["reflect", "macro"])
                .env("GIT_SWARM_NOW", &now)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("spawn reflect macro")
        })
        .collect();
    let mut proposed = 0;
    for child in runs {
        let out = child.wait_with_output().expect("wait");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stdout}{stderr}");
        assert!(!stderr.contains("error"), "{stderr}");
        // One run proposes, the other finds the proposals readable.
        assert!(!stdout.contains("unreadable"), "{stdout}");
        proposed += stdout
            .lines()
            .filter(|l| l.starts_with("proposed "))
            .count();
    }
    assert_eq!(proposed, 8, "each motif proposed by one run");
    assert_eq!(proposal_files(&env).len(), 8);
    let mut slugs: Vec<String> = of_kind(&env, "proposed")
        .iter()
        .map(|e| e["directive"].as_str().expect("slug").to_owned())
        .collect();
    slugs.sort();
    let files: Vec<String> = proposal_files(&env)
        .iter()
        .map(|f| f.trim_end_matches(".md").to_owned())
        .collect();
    assert_eq!(slugs, files, "one `proposed` event a proposal");
    assert_eq!(candidates(&env), 0);
}

#[cfg(unix)]
#[test]
fn a_link_to_nowhere_at_a_proposals_path_is_reported_and_the_run_goes_on() {
    // The slug the motif gets, from a repository of its own.
    let first = common::repo_without_directives();
    plain_failure(&first, "p1", "s1", "cargo test -p app");
    plain_failure(&first, "p2", "s2", "cargo test -p app");
    macro_json(&first);
    let slug = the_proposal(&first);

    let env = common::repo_without_directives();
    plain_failure(&env, "p1", "s1", "cargo test -p app");
    plain_failure(&env, "p2", "s2", "cargo test -p app");
    plain_failure(&env, "p1", "s3", "cargo test -p web");
    plain_failure(&env, "p2", "s4", "cargo test -p web");
    std::fs::create_dir_all(env.path(".swarm/proposals")).expect("mkdir");
    let rel = format!(".swarm/proposals/{slug}.md");
    std::os::unix::fs::symlink("/nonexistent/elsewhere.md", env.path(&rel)).expect("symlink");

    for round in 0..2 {
        let run = swarm(&env, &["reflect", "macro"]);
        run.success();
        assert!(
            run.stderr.starts_with(&format!(
                "{rel}: error: a symbolic link, not a regular file: not read\n"
            )),
            "{}",
            run.stderr
        );
        assert!(!run.stderr.contains("--id"), "{}", run.stderr);
        assert!(
            run.stdout
                .contains(&format!("already proposed as {slug} (unreadable): ")),
            "{}",
            run.stdout
        );
        // The other motif is proposed all the same, once.
        assert_eq!(
            run.stdout.contains("proposed macro-run-cargo-test-p-web"),
            round == 0,
            "{}",
            run.stdout
        );
    }
    assert_eq!(of_kind(&env, "proposed").len(), 1);
    assert_eq!(candidates(&env), 2, "the motif's candidates are kept");
    assert!(
        std::fs::symlink_metadata(env.path(&rel))
            .expect("stat")
            .is_symlink()
    );

    // The link removed, the motif is proposed.
    std::fs::remove_file(env.path(&rel)).expect("rm link");
    let run = swarm(&env, &["reflect", "macro"]);
    run.success();
    assert!(
        run.stdout.starts_with(&format!("proposed {slug} ")),
        "{}",
        run.stdout
    );
    assert_eq!(candidates(&env), 0);
}

#[cfg(unix)]
#[test]
fn a_reject_cut_short_is_finished_by_the_next_with_one_event() {
    let env = common::repo_without_directives();
    plain_failure(&env, "p1", "s1", "npm test");
    plain_failure(&env, "p2", "s2", "npm test");
    macro_json(&env);
    let slug = the_proposal(&env);
    let rel = format!(".swarm/proposals/{slug}.md");
    let open = env.read(&rel);
    let reject = |reason: &str| swarm(&env, &["proposal", "reject", &slug, "--reason", reason]);

    // The pending log cannot be appended to: nothing is decided.
    let month = common::PENDING_NOV;
    let log = env.read(month);
    std::fs::remove_file(env.path(month)).expect("rm log");
    common::mkfifo(&env.path(month));
    let run = reject("flaky runner");
    run.code(2);
    assert!(
        run.stderr.contains("2026-11.jsonl is a FIFO"),
        "the append refused it: {}",
        run.stderr
    );
    assert_eq!(env.read(&rel), open, "the proposal is still open");
    std::fs::remove_file(env.path(month)).expect("rm fifo");
    env.write(month, &log);

    // Recorded, then cut short before the proposal was marked: the next
    // reject marks it with the reason recorded, and records nothing more.
    reject("flaky runner").success();
    env.write(&rel, &open);
    let run = reject("another reason");
    run.success();
    assert!(run.stderr.contains("marked now"), "{}", run.stderr);
    assert_eq!(
        run.stdout,
        format!("rejected {slug} ({rel}): flaky runner\n")
    );
    assert!(env.read(&rel).contains("\nreason: flaky runner\n"));
    assert_eq!(of_kind(&env, "proposal_rejected").len(), 1);

    // Marked but never recorded (as a reject that wrote the file first
    // left it): the next records it, with the proposal's reason.
    let log: String = env
        .read(month)
        .lines()
        .filter(|l| !l.contains("\"kind\":\"proposal_rejected\""))
        .map(|l| format!("{l}\n"))
        .collect();
    env.write(month, log);
    let run = reject("yet another");
    run.success();
    assert!(run.stderr.contains("recorded now"), "{}", run.stderr);
    let rejected = of_kind(&env, "proposal_rejected");
    assert_eq!(rejected.len(), 1);
    assert_eq!(rejected[0]["reason"], "flaky runner");
    assert_eq!(rejected[0]["directive"], slug);

    // Both done: decided is decided.
    let run = reject("once more");
    run.code(2);
    assert!(
        run.stderr.contains("was rejected already"),
        "{}",
        run.stderr
    );
    assert_eq!(of_kind(&env, "proposal_rejected").len(), 1);
}
