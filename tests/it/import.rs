//! `git swarm import opencode-swarm`: a real-shaped `knowledge.jsonl` with
//! good, prose-only, broken and untranslatable entries goes through the gate;
//! a second import changes nothing.

use crate::common;

use common::{TestEnv, of_kind, repo_without_directives};
use serde_json::Value;

const KNOWLEDGE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/import/knowledge.jsonl"
);

/// Every file under `.swarm/` with its bytes, for comparing whole trees.
fn tree(env: &TestEnv) -> Vec<(String, Vec<u8>)> {
    fn walk(dir: &std::path::Path, base: &std::path::Path, out: &mut Vec<(String, Vec<u8>)>) {
        for e in std::fs::read_dir(dir).expect("read_dir") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                walk(&p, base, out);
            } else {
                let rel = p.strip_prefix(base).expect("inside").display().to_string();
                out.push((rel, std::fs::read(&p).expect("read")));
            }
        }
    }
    let mut out = Vec::new();
    walk(&env.path(".swarm"), &env.root, &mut out);
    out.sort();
    out
}

fn import(env: &TestEnv, extra: &[&str]) -> common::Run {
    let mut args = vec!["import", "opencode-swarm", KNOWLEDGE];
    args.extend_from_slice(extra);
    env.swarm(&args)
}

#[test]
fn entries_go_through_the_gate_and_a_second_import_changes_nothing() {
    let env = repo_without_directives();
    let run = import(&env, &[]);
    // Two malformed lines were skipped and reported: bad input, exit 2.
    run.code(2);
    assert!(
        run.stdout
            .ends_with("7 added, 2 quarantined, 0 skipped, 2 malformed lines.\n"),
        "{}",
        run.stdout
    );
    assert!(
        run.stderr
            .contains("knowledge.jsonl:4: error: not a knowledge entry: EOF while parsing"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("knowledge.jsonl:11: error: not a knowledge entry: missing field `lesson`"),
        "{}",
        run.stderr
    );

    // A good entry keeps its UUID, its scope, priority and its predicate, now a `verify`.
    let good = env.read(".swarm/directives/3f2a9c1e-8b7d-4e6f-9a0b-1c2d3e4f5a6b.toml");
    assert!(
        good.contains("lesson = \"Never leave console.log calls in shipped TypeScript sources\""),
        "{good}"
    );
    assert!(
        good.contains("priority = \"high\"\nenforcement = \"enforce\""),
        "{good}"
    );
    assert!(good.contains("applies_to_agents = [\"coder\"]"), "{good}");
    assert!(
        good.contains(r"verify = ['grep_tree:console\.log\(:src/**/*.ts']"),
        "{good}"
    );
    assert!(good.contains("created_at = 2026-05-01T08:00:00Z"), "{good}");
    // A literal `./path` of file_modified becomes a glob from the root.
    let spec = env.read(".swarm/directives/5b1e7d20-4c3a-4f8e-b2d1-9e8f7a6b5c4d.toml");
    assert!(
        spec.contains("verify = [\"file_modified:openapi.yaml\"]"),
        "{spec}"
    );
    assert!(
        spec.contains("applies_to_tools = [\"edit\", \"write\"]"),
        "{spec}"
    );
    let hive = env.read(".swarm/directives/0a1b2c3d-4e5f-4a6b-8c7d-8e9f0a1b2c3d.toml");
    assert!(hive.contains("verify = [\"tool:cargo test\"]"), "{hive}");
    assert!(hive.contains("priority = \"critical\""), "{hive}");

    // Prose only: quarantined with the reason, never lost.
    let prose = env.read(".swarm/quarantine/a0c4e8f2-1b3d-4a5c-8e7f-6d5c4b3a2910.toml");
    assert!(
        prose.contains("quarantine_reason = \"missing_predicate_and_scope\""),
        "{prose}"
    );
    assert!(run.stdout.contains("knowledge.jsonl:3: quarantined a0c4e8f2-1b3d-4a5c-8e7f-6d5c4b3a2910 (missing_predicate_and_scope)"), "{}", run.stdout);
    let unscoped = env.read(".swarm/quarantine/1b2c3d4e-5f6a-4b7c-8d9e-0f1a2b3c4d5e.toml");
    assert!(
        unscoped.contains("quarantine_reason = \"missing_scope\""),
        "{unscoped}"
    );

    // A predicate git-swarm does not run is kept as prose and reported.
    let lint = env.read(".swarm/directives/d1e2f3a4-b5c6-4d7e-8f90-a1b2c3d4e5f6.toml");
    assert!(
        lint.contains(
            "verification_checks = [\"opencode-swarm predicate (not run): lint:eslint src/\"]"
        ),
        "{lint}"
    );
    assert!(!lint.contains("verify ="), "{lint}");
    assert!(
        run.stdout
            .contains("note: verification_predicate `lint:eslint src/` not translated"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("look-around"), "{}", run.stdout);
    // `archived` is retired; an id that is no valid id is derived and said.
    let archived = env.read(".swarm/directives/f0e1d2c3-b4a5-4968-8776-655443322110.toml");
    assert!(archived.contains("status = \"retired\""), "{archived}");
    assert!(run.stdout.contains("note: id `Lesson #9 (legacy)` is not a valid id; imported as `keep-database-migrations-reversible-with-a-down`"), "{}", run.stdout);
    assert!(env.exists(".swarm/directives/keep-database-migrations-reversible-with-a-down.toml"));

    // Events as `add` records them, one per entry written.
    assert_eq!(of_kind(&env, "added").len(), 7);
    let quarantined = of_kind(&env, "quarantined");
    assert_eq!(quarantined.len(), 2);
    assert_eq!(quarantined[0]["reason"], "missing_predicate_and_scope");
    // What was written is valid to git-swarm's own checks.
    env.swarm(&["validate"]).success();

    let before = tree(&env);
    let again = import(&env, &[]);
    again.code(2);
    assert!(
        again
            .stdout
            .ends_with("0 added, 0 quarantined, 9 skipped, 2 malformed lines.\n"),
        "{}",
        again.stdout
    );
    assert!(again.stdout.contains("knowledge.jsonl:1: skipped 3f2a9c1e-8b7d-4e6f-9a0b-1c2d3e4f5a6b (already present at .swarm/directives/3f2a9c1e-8b7d-4e6f-9a0b-1c2d3e4f5a6b.toml)"), "{}", again.stdout);
    assert_eq!(tree(&env), before, "a second import changes nothing");
}

#[test]
fn dry_run_reports_outcomes_as_json_and_writes_nothing() {
    let env = repo_without_directives();
    let before = tree(&env);
    let run = import(&env, &["--dry-run", "--format", "json"]);
    run.code(2);
    let report: Value = serde_json::from_str(&run.stdout).expect("json");
    assert_eq!(report["dry_run"], true);
    assert_eq!(report["added"], 7);
    assert_eq!(report["quarantined"], 2);
    assert_eq!(report["malformed"], 2);
    assert_eq!(report["entries"][2]["status"], "quarantined");
    assert_eq!(
        report["entries"][2]["reason"],
        "missing_predicate_and_scope"
    );
    assert_eq!(report["entries"][2]["line"], 3);
    assert_eq!(tree(&env), before);
}

#[test]
fn a_clean_file_imports_with_exit_zero_and_a_missing_one_is_an_error() {
    let env = repo_without_directives();
    let good: String = std::fs::read_to_string(KNOWLEDGE)
        .expect("fixture")
        .lines()
        .take(2)
        .map(|l| format!("{l}\n"))
        .collect();
    env.write("knowledge.jsonl", good);
    let run = env.swarm(&["import", "opencode-swarm", "knowledge.jsonl"]);
    run.success();
    assert_eq!(
        run.stdout,
        "knowledge.jsonl:1: added 3f2a9c1e-8b7d-4e6f-9a0b-1c2d3e4f5a6b\nknowledge.jsonl:2: added 5b1e7d20-4c3a-4f8e-b2d1-9e8f7a6b5c4d\n2 added, 0 quarantined, 0 skipped, 0 malformed lines.\n"
    );
    let missing = env.swarm(&["import", "opencode-swarm", "nope.jsonl"]);
    missing.code(2);
    assert!(missing.stderr.contains("hint:"), "{}", missing.stderr);
    assert!(missing.stderr.contains("nope.jsonl"), "{}", missing.stderr);
}

#[test]
fn a_file_modified_path_stays_literal_even_with_glob_characters() {
    let env = repo_without_directives();
    let entry = r#"{"id": "7c1e2d3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f", "lesson": "Keep the slug page in step with its loader", "applies_to_agents": ["coder"], "status": "established", "verification_predicate": "file_modified:app/[slug]/page.tsx", "created_at": "2026-05-01T08:00:00.000Z"}"#;
    env.write("k.jsonl", format!("{entry}\n"));
    let k = env.path("k.jsonl");
    env.swarm(&["import", "opencode-swarm", k.to_str().expect("utf-8")])
        .success();
    let d = env.read(".swarm/directives/7c1e2d3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f.toml");
    assert!(
        d.contains("verify = [\"file_modified:app/[[]slug]/page.tsx\"]"),
        "{d}"
    );
}

#[test]
fn an_entry_opencode_swarm_had_quarantined_stays_quarantined() {
    let env = repo_without_directives();
    let entry = r#"{"id": "9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b6a", "lesson": "Always run the database migrations in a transaction", "applies_to_agents": ["coder"], "required_actions": ["wrap the migration in BEGIN/COMMIT"], "status": "quarantined_unactionable"}"#;
    env.write("k.jsonl", format!("{entry}\n"));
    let k = env.path("k.jsonl");
    let run = env.swarm(&["import", "opencode-swarm", k.to_str().expect("utf-8")]);
    run.success();
    assert!(
        run.stdout
            .ends_with("0 added, 1 quarantined, 0 skipped, 0 malformed lines.\n"),
        "{}",
        run.stdout
    );
    assert!(
        !env.exists(".swarm/directives/9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b6a.toml"),
        "an entry quarantined there is not active here"
    );
    let q = env.read(".swarm/quarantine/9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b6a.toml");
    assert!(
        q.contains(
            "quarantine_detail = \"quarantined in opencode-swarm: status `quarantined_unactionable`\""
        ),
        "{q}"
    );
}

#[test]
fn a_derived_id_taken_by_another_lesson_gets_a_hash_and_a_reimport_skips() {
    let env = repo_without_directives();
    let a = r#"{"id": "no id one", "lesson": "Run the database migrations inside one transaction before deploying the api", "applies_to_agents": ["coder"], "required_actions": ["BEGIN; migrate; COMMIT"]}"#;
    let b = r#"{"id": "no id two", "lesson": "Run the database migrations inside one transaction before deploying the web app", "applies_to_agents": ["coder"], "required_actions": ["BEGIN; migrate; COMMIT"]}"#;
    env.write("a.jsonl", format!("{a}\n"));
    env.write("b.jsonl", format!("{b}\n"));
    let (pa, pb) = (env.path("a.jsonl"), env.path("b.jsonl"));
    let (pa, pb) = (pa.to_str().expect("utf-8"), pb.to_str().expect("utf-8"));
    env.swarm(&["import", "opencode-swarm", pa]).success();
    let run = env.swarm(&["import", "opencode-swarm", pb, "--format", "json"]);
    run.success();
    let report: Value = serde_json::from_str(&run.stdout).expect("json");
    let entry = &report["entries"][0];
    assert_eq!(entry["status"], "added", "{report}");
    let id = entry["id"].as_str().expect("id");
    // The first entry kept the plain slug; this one has a hash added.
    assert!(env.exists(".swarm/directives/run-the-database-migrations-inside-one.toml"));
    assert_eq!(
        id.strip_prefix("run-the-database-migrations-inside-one-")
            .map(str::len),
        Some(8),
        "{id}"
    );
    assert!(
        env.read(&format!(".swarm/directives/{id}.toml"))
            .contains("web app")
    );

    // The same lesson again is the same entry: skipped, nothing written.
    let before = tree(&env);
    let again = env.swarm(&["import", "opencode-swarm", pb]);
    again.success();
    assert!(
        again.stdout.contains("0 added, 0 quarantined, 1 skipped"),
        "{}",
        again.stdout
    );
    assert_eq!(tree(&env), before);
}
