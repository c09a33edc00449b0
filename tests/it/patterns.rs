//! The pattern learning loop from the real binary: extract, list, show,
//! inject, feedback, outcome, promote and deprecate, and a merge of two
//! branches' records.

use crate::common;

use common::{Run, TestEnv, of_kind, swarm};
use serde_json::Value;

fn swarm_at(env: &TestEnv, at: &str, args: &[&str]) -> Run {
    env.swarm_with(args, &[("GIT_SWARM_NOW", at)], None)
}

const DELIBERATION: &str = "\
# Audit of the plan

Hello team, here is my review.

## Findings

- The cache key must include the tenant id, or tenants read each other's data.
- Retrying the upload without a backoff leads to a thundering herd on the API.
- The migration in src/db/schema.rs adds two columns to the users table.
- **Severity**: high
";

const EXECUTION: &str = "\n```sh\n$ cargo test\ntest result: ok. 12 passed; 0 failed\n```\n";
const CITATION: &str = "\nSee src/db/schema.rs:42 for the new columns.\n";

fn extract(env: &TestEnv, role: &str, run: &str, extra: &[&str], text: &str) -> Run {
    env.write("delib.md", text);
    let mut args = vec!["pattern", "extract", "--role", role, "--run", run];
    args.extend_from_slice(extra);
    args.push("delib.md");
    swarm(env, &args)
}

fn list(env: &TestEnv) -> Vec<Value> {
    let run = swarm(env, &["pattern", "list", "--format", "json"]);
    run.success();
    serde_json::from_str::<Value>(&run.stdout)
        .expect("json")
        .as_array()
        .expect("array")
        .clone()
}

fn by_text<'a>(patterns: &'a [Value], start: &str) -> &'a Value {
    patterns
        .iter()
        .find(|p| p["text"].as_str().is_some_and(|t| t.starts_with(start)))
        .unwrap_or_else(|| panic!("no pattern starting with {start}: {patterns:#?}"))
}

fn verdict(env: &TestEnv, json: &str) {
    env.write(
        "verdict.md",
        format!("Checked.\n<!-- jkz:verdict-json {json} -->\n"),
    );
}

fn feedback(env: &TestEnv, role: &str, run: &str) -> Run {
    swarm(
        env,
        &[
            "pattern",
            "feedback",
            "--adversarial-role",
            role,
            "--validator-role",
            "curator",
            "--run",
            run,
            "--deliberation",
            "delib.md",
            "--verdict",
            "verdict.md",
        ],
    )
}

#[test]
fn extract_classifies_findings_and_counts_one_observation_per_run() {
    let env = TestEnv::initialised();
    let run = extract(&env, "auditor", "r1", &["--labels", "db"], DELIBERATION);
    run.success();
    assert!(
        run.stdout.contains("Recorded 3 observation(s) of 3"),
        "{}",
        run.stdout
    );
    let ps = list(&env);
    assert_eq!(ps.len(), 3, "{ps:#?}");
    assert_eq!(by_text(&ps, "The cache key")["category"], "rule");
    assert_eq!(by_text(&ps, "Retrying")["category"], "causal");
    assert_eq!(by_text(&ps, "The migration")["category"], "observation");
    assert_eq!(by_text(&ps, "The cache key")["state"], "observed");

    // The same run again records nothing; another run is a second sighting.
    let again = extract(&env, "auditor", "r1", &["--labels", "db"], DELIBERATION);
    again.success();
    assert!(
        again.stdout.contains("Recorded 0 observation(s)"),
        "{}",
        again.stdout
    );
    extract(&env, "auditor", "r2", &["--labels", "db"], DELIBERATION).success();
    assert_eq!(by_text(&list(&env), "The cache key")["state"], "candidate");
    // A run in another context verifies it.
    extract(&env, "auditor", "r3", &["--labels", "api"], DELIBERATION).success();
    let ps = list(&env);
    assert_eq!(by_text(&ps, "The cache key")["state"], "verified");
    assert_eq!(by_text(&ps, "The cache key")["observations"], 3);

    // The same text from another role is another pattern.
    extract(&env, "judge", "r1", &[], DELIBERATION).success();
    assert_eq!(list(&env).len(), 6);

    // A near-duplicate joins the existing pattern.
    let near = extract(
        &env,
        "auditor",
        "r4",
        &[],
        "- The cache key must include the tenant id, or tenants read each other's data too.\n",
    );
    near.success();
    assert!(near.stdout.contains("joined"), "{}", near.stdout);
    assert_eq!(list(&env).len(), 6);
    assert_eq!(of_kind(&env, "pattern_observed").len(), 13);
}

#[test]
fn malformed_input_is_reported_with_its_line_and_nothing_is_recorded() {
    let env = TestEnv::initialised();
    let run = extract(
        &env,
        "auditor",
        "r1",
        &[],
        "- fine finding about the cache here\n```sh\nnever closed\n",
    );
    run.code(2);
    assert!(run.stderr.contains("delib.md:2:"), "{}", run.stderr);
    assert!(of_kind(&env, "pattern_observed").is_empty());

    extract(&env, "auditor", "r1", &[], DELIBERATION).success();
    let before = env.event_lines().len();
    env.write("verdict.md", "PASS, no json here\n");
    let run = feedback(&env, "auditor", "r1");
    run.code(2);
    assert!(run.stderr.contains("verdict.md:1:"), "{}", run.stderr);
    env.write(
        "verdict.md",
        "ok\n<!-- jkz:verdict-json {\"verdict\": \"PASS\", -->\n",
    );
    let run = feedback(&env, "auditor", "r1");
    run.code(2);
    assert!(run.stderr.contains("verdict.md:2:"), "{}", run.stderr);
    assert_eq!(env.event_lines().len(), before);
}

#[test]
fn false_positives_are_matched_by_phrase_then_overlap_and_weighted_by_role() {
    let env = TestEnv::initialised();
    extract(&env, "sentinel", "r1", &[], DELIBERATION).success();
    verdict(
        &env,
        r#"{"verdict":"FAIL","must_fix":["x"],"false_positives":[
            "without a backoff leads to a thundering herd",
            {"summary":"cache key tenant id tenants read data each other's"},
            "something the auditor never said at all"]}"#,
    );
    let run = feedback(&env, "sentinel", "r1");
    run.success();
    assert!(run.stdout.contains("matched by phrase"), "{}", run.stdout);
    assert!(
        run.stdout.contains("matched by token overlap"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("not found in the deliberation"),
        "{}",
        run.stdout
    );
    let ignored = of_kind(&env, "pattern_ignored");
    assert_eq!(ignored.len(), 2);
    assert!(
        ignored
            .iter()
            .all(|e| e["weight"] == 1.5 && e["regression"] == false)
    );
    // FAIL with must-fix items reinforces nothing.
    assert!(of_kind(&env, "pattern_validated").is_empty());
    let ps = list(&env);
    assert_eq!(by_text(&ps, "Retrying")["ignore_weight"], 1.5);
    assert_eq!(by_text(&ps, "The cache key")["ignored"], 1);

    // Another role's ignores weigh 1.0.
    extract(&env, "auditor", "r1", &[], DELIBERATION).success();
    verdict(
        &env,
        r#"{"verdict":"FAIL","must_fix":["x"],"false_positives":["leads to a thundering herd"]}"#,
    );
    feedback(&env, "auditor", "r1").success();
    let last = of_kind(&env, "pattern_ignored").pop().expect("ignored");
    assert_eq!(last["weight"], 1.0);
}

#[test]
fn a_pass_reinforces_only_on_grounded_evidence_and_flags_regressions() {
    let env = TestEnv::initialised();
    // Level 3: reasoning only.
    extract(
        &env,
        "judge",
        "r1",
        &["--files", "src/db/schema.rs"],
        DELIBERATION,
    )
    .success();
    verdict(&env, r#"{"verdict":"PASS"}"#);
    let run = feedback(&env, "judge", "r1");
    run.success();
    assert!(run.stdout.contains("level 3"), "{}", run.stdout);
    assert!(of_kind(&env, "pattern_validated").is_empty());

    // Level 2: a file:line of the change.
    extract(
        &env,
        "judge",
        "r2",
        &["--files", "src/db/schema.rs"],
        &format!("{DELIBERATION}{CITATION}"),
    )
    .success();
    let run = feedback(&env, "judge", "r2");
    run.success();
    assert!(run.stdout.contains("evidence level 2"), "{}", run.stdout);
    assert_eq!(
        of_kind(&env, "pattern_validated").len(),
        3,
        "{}",
        run.stdout
    );

    // Level 1, FAIL with an empty must_fix counts as a PASS; with
    // reinforce_top = 1 one is validated (the file-relevant one) and the rest aged.
    env.write(".swarm/config.toml", "[patterns]\nreinforce_top = 1\n");
    extract(
        &env,
        "judge",
        "r3",
        &["--files", "src/db/schema.rs"],
        &format!("{DELIBERATION}{EXECUTION}"),
    )
    .success();
    verdict(&env, r#"{"verdict":"FAIL","must_fix":[]}"#);
    let run = feedback(&env, "judge", "r3");
    run.success();
    assert!(run.stdout.contains("evidence level 1"), "{}", run.stdout);
    let validated = of_kind(&env, "pattern_validated");
    assert_eq!(validated.len(), 4, "{}", run.stdout);
    assert!(
        run.stdout.contains("validated p")
            && run
                .stdout
                .contains("(cites a file of the change): The migration"),
        "{}",
        run.stdout
    );
    let aged_r3 = of_kind(&env, "pattern_aged")
        .into_iter()
        .filter(|e| e["run"] == "r3")
        .count();
    assert_eq!(aged_r3, 2, "{}", run.stdout);

    // A validated pattern called a false positive is a regression.
    extract(&env, "judge", "r4", &[], DELIBERATION).success();
    verdict(
        &env,
        r#"{"verdict":"FAIL","must_fix":["y"],"false_positives":["The cache key must include the tenant id"]}"#,
    );
    let run = feedback(&env, "judge", "r4");
    run.success();
    assert!(run.stdout.contains("REGRESSION"), "{}", run.stdout);
    assert_eq!(of_kind(&env, "pattern_ignored")[0]["regression"], true);
    assert_eq!(by_text(&list(&env), "The cache key")["regressions"], 1);
}

#[test]
fn scores_decay_until_three_validations() {
    let env = TestEnv::initialised();
    env.write(
        "delib.md",
        "- Never log the session token in plain text anywhere.\n",
    );
    let day = |d: u32| format!("2026-11-{:02}T10:00:00Z", d);
    swarm_at(
        &env,
        &day(1),
        &[
            "pattern", "extract", "--role", "judge", "--run", "r1", "delib.md",
        ],
    )
    .success();
    let score_at = |d: u32| -> Value {
        let run = swarm_at(&env, &day(d), &["pattern", "list", "--format", "json"]);
        serde_json::from_str::<Value>(&run.stdout).expect("json")[0]["score"].clone()
    };
    let close = |v: &Value, want: f64| {
        let got = v.as_f64().expect("number");
        assert!((got - want).abs() < 1e-9, "{got} != {want}");
    };
    close(&score_at(1)["total"], 0.5 * 1.3);
    close(&score_at(15)["decay"], (-1f64).exp());
    close(&score_at(29)["decay"], (-2f64).exp());
    // Three validations (three grounded PASS verdicts) make it immune.
    env.write(
        "delib.md",
        format!("- Never log the session token in plain text anywhere.\n{EXECUTION}"),
    );
    env.write(
        "verdict.md",
        "<!-- jkz:verdict-json {\"verdict\":\"PASS\"} -->\n",
    );
    for (i, run) in ["r1", "r2", "r3"].iter().enumerate() {
        if i > 0 {
            swarm_at(
                &env,
                &day(1),
                &[
                    "pattern", "extract", "--role", "judge", "--run", run, "delib.md",
                ],
            )
            .success();
        }
        let fb = swarm_at(
            &env,
            &day(1),
            &[
                "pattern",
                "feedback",
                "--adversarial-role",
                "judge",
                "--validator-role",
                "inspector",
                "--run",
                run,
                "--deliberation",
                "delib.md",
                "--verdict",
                "verdict.md",
            ],
        );
        fb.success();
        let validations = of_kind(&env, "pattern_validated").len();
        assert_eq!(validations, i + 1, "{}", fb.stdout);
        let decay = &score_at(29)["decay"];
        if i < 2 {
            close(decay, (-2f64).exp());
        } else {
            close(decay, 1.0);
        }
    }
    close(&score_at(29)["total"], 1.3);
}

#[test]
fn inject_prints_the_block_within_budget_and_the_directive_loop_appends_it() {
    let env = TestEnv::initialised();
    let many: String = (0..60)
        .map(|i| {
            format!("- Finding {i}: the handler must validate input field number {i} first.\n")
        })
        .collect();
    extract(&env, "judge", "r1", &[], &many).success();
    let run = swarm(
        &env,
        &["pattern", "inject", "--role", "judge", "--format", "json"],
    );
    run.success();
    let block: Value = serde_json::from_str(&run.stdout).expect("json");
    // The first read folded the new events; with nothing new, the next reads
    // the index's copy of the role's patterns: the same lines (the clock
    // moves between runs, so the unrounded scores may not be equal).
    let again = swarm(
        &env,
        &["pattern", "inject", "--role", "judge", "--format", "json"],
    );
    let again: Value = serde_json::from_str(&again.stdout).expect("json");
    let lines = |b: &Value| -> Vec<Value> {
        b["lines"]
            .as_array()
            .expect("lines")
            .iter()
            .map(|l| l["line"].clone())
            .collect()
    };
    assert_eq!(lines(&again), lines(&block));
    assert!(!lines(&block).is_empty());
    assert_eq!(block["budget"], 800);
    assert!(block["tokens"].as_u64().expect("tokens") <= 800);
    assert!(block["left_out"].as_u64().expect("left out") > 0);
    let text = swarm(
        &env,
        &["pattern", "inject", "--role", "judge", "--budget", "60"],
    );
    text.success();
    assert!(
        text.stdout
            .starts_with("=== HISTORICAL PATTERNS (judge) ===\n"),
        "{}",
        text.stdout
    );
    let tokens: usize = text
        .stdout
        .lines()
        .map(|l| l.chars().count().div_ceil(4))
        .sum();
    assert!(tokens <= 60, "{tokens}: {}", text.stdout);
    assert!(text.stdout.contains("(score:0.65)"), "{}", text.stdout);
    // Too little room left: skipped.
    let skipped = swarm(
        &env,
        &["pattern", "inject", "--role", "judge", "--remaining", "150"],
    );
    skipped.success();
    assert_eq!(skipped.stdout, "");
    // Another role sees it only once promoted, marked via.
    assert_eq!(
        swarm(&env, &["pattern", "inject", "--role", "coder"]).stdout,
        ""
    );
    let id = list(&env)[0]["id"].as_str().expect("id").to_owned();
    swarm(
        &env,
        &[
            "pattern",
            "promote",
            &id,
            "--justification",
            "holds everywhere",
        ],
    )
    .success();
    let coder = swarm(&env, &["pattern", "inject", "--role", "coder"]);
    assert!(coder.stdout.contains("via:judge"), "{}", coder.stdout);
    let again = swarm(&env, &["pattern", "inject", "--role", "coder"]);
    assert_eq!(again.stdout, coder.stdout);
    // The directive loop's inject appends the block after the directives.
    let inj = swarm(
        &env,
        &["inject", "--role", "coder", "--task", "validate input"],
    );
    inj.success();
    let block_at = inj
        .stdout
        .find("=== HISTORICAL PATTERNS (coder) ===")
        .expect("block");
    assert!(
        inj.stdout[..block_at].contains("</delegate_knowledge_directives>"),
        "{}",
        inj.stdout
    );
    // Deprecated: gone.
    swarm(
        &env,
        &["pattern", "deprecate", &id, "--reason", "superseded"],
    )
    .success();
    assert_eq!(
        swarm(&env, &["pattern", "inject", "--role", "coder"]).stdout,
        ""
    );
    let show = swarm(&env, &["pattern", "show", &id]);
    show.success();
    assert!(
        show.stdout.contains("state:     deprecated"),
        "{}",
        show.stdout
    );
    assert!(show.stdout.contains("pattern_promoted"), "{}", show.stdout);
}

#[test]
fn outcome_grades_the_runs_patterns_once() {
    let env = TestEnv::initialised();
    extract(&env, "auditor", "r1", &[], DELIBERATION).success();
    env.write(
        "other.md",
        "- Unrelated finding in a different run entirely here.\n",
    );
    swarm(
        &env,
        &[
            "pattern", "extract", "--role", "auditor", "--run", "r2", "other.md",
        ],
    )
    .success();
    let run = swarm(&env, &["pattern", "outcome", "--run", "r1", "--pass"]);
    run.success();
    assert!(run.stdout.contains("3 pattern(s) graded"), "{}", run.stdout);
    swarm(&env, &["pattern", "outcome", "--run", "r1", "--fail"]).code(2);
    let ps = list(&env);
    assert_eq!(by_text(&ps, "The cache key")["outcome_passes"], 1);
    assert_eq!(by_text(&ps, "Unrelated")["outcome_passes"], 0);
    // 0.5 credit, no ignores: a success rate of 1.
    assert_eq!(by_text(&ps, "The cache key")["score"]["success_rate"], 1.0);
    swarm(&env, &["pattern", "outcome", "--run", "r2"]).code(2);
}

#[test]
fn one_pattern_learned_on_two_branches_merges_into_the_sum() {
    let env = TestEnv::initialised();
    env.git(&["add", "-A"]);
    env.git(&["commit", "-q", "-m", "base", "--allow-empty"]);
    env.git(&["checkout", "-q", "-b", "a"]);
    extract(
        &env,
        "auditor",
        "ra",
        &["--labels", "x"],
        &format!("{DELIBERATION}{EXECUTION}"),
    )
    .success();
    verdict(&env, r#"{"verdict":"PASS"}"#);
    feedback(&env, "auditor", "ra").success();
    swarm(&env, &["commit", "-m", "learn on a"]).success();
    assert_eq!(
        env.git(&["status", "--porcelain", ".swarm"]),
        "",
        "all learned is committed"
    );
    env.git(&["checkout", "-q", "main"]);
    env.git(&["checkout", "-q", "-b", "b"]);
    extract(
        &env,
        "auditor",
        "rb",
        &["--labels", "y"],
        &format!("{DELIBERATION}{EXECUTION}"),
    )
    .success();
    feedback(&env, "auditor", "rb").success();
    swarm(&env, &["commit", "-m", "learn on b"]).success();
    assert_eq!(
        env.git(&["status", "--porcelain", ".swarm"]),
        "",
        "all learned is committed"
    );
    env.git(&["merge", "-q", "--no-edit", "a"]);
    let ps = list(&env);
    assert_eq!(ps.len(), 3, "{ps:#?}");
    let p = by_text(&ps, "The cache key");
    assert_eq!(p["observations"], 2);
    assert_eq!(p["validated"], 2);
    assert_eq!(p["state"], "verified");
}

/// `pattern feedback` reads one role's patterns from the index file: as
/// written, patched with a few pattern events appended since, or from the
/// fold when the index is folded again. All three give the same result, a
/// near-duplicate's alias included.
#[test]
fn feedback_reads_the_same_from_the_index_as_from_new_events() {
    const NEAR: &str =
        "- The cache key must include the tenant id, or tenants read each other's data too.\n";
    // The index as of r1 with r2's events new to it, written after r2, or
    // not written (the events are folded each time).
    #[derive(PartialEq)]
    enum Index {
        Pending,
        Written,
        Folded,
    }
    let runs: Vec<(String, Vec<Value>)> = [Index::Folded, Index::Written, Index::Pending]
        .into_iter()
        .map(|index| {
            let env = TestEnv::initialised();
            let files = ["--files", "src/db/schema.rs"];
            extract(&env, "judge", "r1", &files, DELIBERATION).success();
            let settle = || {
                // Files older than the index are not racy: it is trusted as written.
                age_tree(&env.path(".swarm"));
                env.swarm(&["index", "refresh"]).success();
            };
            if index == Index::Pending {
                settle();
            }
            // Joins "The cache key …" of r1 under an alias.
            let near = extract(&env, "judge", "r2", &files, &format!("{NEAR}{CITATION}"));
            assert!(near.stdout.contains("joined"), "{}", near.stdout);
            // delib.md is r2's: the false positive names the near-duplicate.
            verdict(
                &env,
                r#"{"verdict":"PASS","false_positives":["Finding 1: The cache key must include the tenant id, or tenants read each other's data too."]}"#,
            );
            if index == Index::Written {
                settle();
            }
            let written = std::fs::read(env.path(".git/swarm/index")).ok();
            let run = feedback(&env, "judge", "r2");
            run.success();
            if index == Index::Pending {
                assert!(
                    std::fs::read(env.path(".git/swarm/index")).ok() == written,
                    "the index was written for r2's few events"
                );
            }
            let mut events = of_kind(&env, "pattern_ignored");
            events.extend(of_kind(&env, "pattern_validated"));
            events.extend(of_kind(&env, "pattern_aged"));
            let events = events
                .into_iter()
                .map(|e| {
                    serde_json::json!({
                        "kind": e["kind"],
                        "pattern": e["pattern"],
                        "run": e["run"],
                        "weight": e["weight"],
                        "level": e["level"],
                    })
                })
                .collect();
            (format!("{}{}", near.stdout, run.stdout), events)
        })
        .collect();
    assert!(
        runs[0].0.contains("ignored p") && runs[0].0.contains("matched by phrase"),
        "{}",
        runs[0].0
    );
    assert!(runs[0].0.contains("evidence level 2"), "{}", runs[0].0);
    assert_eq!(runs[0], runs[1]);
    assert_eq!(runs[0], runs[2]);
}

/// Sets every file and folder under `dir` an hour back.
fn age_tree(dir: &std::path::Path) {
    let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    for entry in std::fs::read_dir(dir).expect("list") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            age_tree(&path);
        }
        std::fs::File::open(&path)
            .and_then(|f| f.set_modified(hour_ago))
            .unwrap_or_else(|e| panic!("cannot age {}: {e}", path.display()));
    }
}

/// A few pattern events appended since the index was written (a new
/// pattern, a repeated observation, a promotion, a `--run` use, a second
/// outcome for a run that has one) are applied
/// to the views `pattern inject` reads, rather than the whole pattern fold
/// being decoded and written back: the blocks are those of the refreshed
/// index. (Commands that read the whole fold, such as `extract`, fold them
/// in and write it; `record` appends without reading.)
#[test]
fn inject_patches_the_views_with_new_pattern_events() {
    const AT: &str = "2026-12-01T00:00:00Z";
    let env = TestEnv::initialised();
    let findings = |n: usize, what: &str| -> String {
        (0..n)
            .map(|i| {
                format!("- Finding {i}: the {what} must validate input field number {i} first.\n")
            })
            .collect()
    };
    extract(
        &env,
        "judge",
        "r1",
        &["--labels", "api"],
        &findings(12, "handler"),
    )
    .success();
    extract(&env, "auditor", "r1", &[], &findings(3, "parser")).success();
    let patterns = list(&env);
    let id_of = |role: &str| {
        patterns
            .iter()
            .find(|p| p["role"] == role)
            .and_then(|p| p["id"].as_str().map(str::to_owned))
            .expect("a pattern")
    };
    let (auditor, judge) = (id_of("auditor"), id_of("judge"));
    // Run r1 failed; a second outcome for it (below) must not count again.
    let outcome = [
        "record",
        "outcome",
        "--field",
        "run=r1",
        "--field",
        "result=fail",
        "--field",
    ];
    let graded = format!("patterns=[\"{judge}\"]");
    let mut args = outcome.to_vec();
    args.push(&graded);
    swarm(&env, &args).success();
    age_tree(&env.path(".swarm"));
    env.swarm(&["index", "refresh"]).success();
    let index = || env.index_bytes();
    let written = index();

    let record = |kind: &str, fields: &[&str]| {
        let mut args = vec!["record", kind];
        for f in fields {
            args.extend(["--field", f]);
        }
        swarm(&env, &args).success();
    };
    let observed = |id: &str, text: &str| {
        let (pattern, text) = (format!("pattern={id}"), format!("text={text}"));
        record(
            "pattern_observed",
            &[
                &pattern,
                "role=judge",
                &text,
                "category=rule",
                "run=r2",
                "labels=[\"db\"]",
            ],
        )
    };
    // Hand-written, as a harness would: a new pattern, a repeated one.
    observed(
        "pnew0000000000001",
        "The cache must expire entries after an hour.",
    );
    observed(&judge, "seen again");
    let promoted = format!("pattern={auditor}");
    record("pattern_promoted", &[&promoted]);
    // Another of r1's patterns, graded by a second outcome of r1: ignored.
    let other = patterns
        .iter()
        .filter(|p| p["role"] == "judge")
        .filter_map(|p| p["id"].as_str())
        .find(|id| *id != judge)
        .expect("another judge pattern");
    let regraded = format!("patterns=[\"{other}\"]");
    let mut again_args = outcome.to_vec();
    again_args.push(&regraded);
    swarm(&env, &again_args).success();
    swarm(
        &env,
        &["pattern", "inject", "--role", "judge", "--run", "r3"],
    )
    .success();
    let blocks = || -> Vec<String> {
        ["judge", "coder"]
            .into_iter()
            .map(|role| {
                let run = swarm_at(
                    &env,
                    AT,
                    &[
                        "pattern", "inject", "--role", role, "--labels", "db", "--format", "json",
                    ],
                );
                run.success();
                run.stdout
            })
            .collect()
    };
    let patched = blocks();
    assert!(index() == written, "the index was written for a few events");
    assert!(patched[0].contains("cache must expire"), "{}", patched[0]);
    assert!(patched[1].contains("via"), "{}", patched[1]);

    env.swarm(&["index", "refresh"]).success();
    assert!(index() != written);
    assert_eq!(blocks(), patched);
}

/// A pattern shown by id before it was ever observed has a record in the
/// fold but no view. When a new event is about it, the reader folds the
/// whole pattern fold rather than patching: here the record's earlier use
/// in run r1 is what makes feedback for r1 reinforce it.
#[test]
fn a_new_event_about_a_pattern_without_a_view_reads_the_whole_fold() {
    let env = TestEnv::initialised();
    let record = |kind: &str, fields: &[&str]| {
        let mut args = vec!["record", kind, "--role", "judge"];
        for f in fields {
            args.extend(["--field", f]);
        }
        swarm(&env, &args).success();
    };
    record(
        "pattern_shown",
        &["patterns=[\"pzzz000000000001\"]", "run=r1"],
    );
    age_tree(&env.path(".swarm"));
    env.swarm(&["index", "refresh"]).success();
    record(
        "pattern_observed",
        &[
            "pattern=pzzz000000000001",
            "role=judge",
            "text=The cache key must include the tenant id.",
            "category=rule",
            "run=r2",
        ],
    );
    env.write(
        "delib.md",
        format!("- The cache key must include the tenant id.\n{EXECUTION}"),
    );
    verdict(&env, r#"{"verdict":"PASS"}"#);
    let run = feedback(&env, "judge", "r1");
    run.success();
    assert!(
        run.stdout.contains("validated pzzz000000000001"),
        "{}",
        run.stdout
    );
}

/// A pattern shown by id before it was ever observed has a record: the
/// first observation of its text is reported as seen again, as from the
/// whole fold, when extract reads the role's patterns from the index.
#[test]
fn extract_recognises_a_record_that_was_never_observed() {
    const TEXT: &str = "- The cache key must include the tenant id.\n";
    let id = {
        let scratch = TestEnv::initialised();
        let run = extract(&scratch, "judge", "r0", &["--format", "json"], TEXT);
        run.success();
        let out: Value = serde_json::from_str(&run.stdout).expect("json");
        out["observations"][0]["id"]
            .as_str()
            .expect("id")
            .to_owned()
    };
    let env = TestEnv::initialised();
    let shown = format!("patterns=[\"{id}\"]");
    swarm(
        &env,
        &[
            "record",
            "pattern_shown",
            "--field",
            &shown,
            "--field",
            "run=r0",
        ],
    )
    .success();
    age_tree(&env.path(".swarm"));
    env.swarm(&["index", "refresh"]).success();
    let run = extract(&env, "judge", "r1", &["--format", "json"], TEXT);
    run.success();
    let out: Value = serde_json::from_str(&run.stdout).expect("json");
    assert_eq!(out["observations"][0]["id"], id.as_str());
    assert_eq!(out["observations"][0]["stored"], "again", "{}", run.stdout);
}

/// A false positive names a finding by whole words: a letter, a pair of
/// words or only stop words name none, and a phrase that several findings
/// hold is reported, not given to the first of them.
#[test]
fn a_false_positive_names_a_finding_by_whole_words() {
    let env = TestEnv::initialised();
    extract(
        &env,
        "judge",
        "r1",
        &[],
        "- The cache key must include the tenant id.\n\
         - Retries need an exponential backoff with jitter.\n\
         - The tenant id is checked on every request.\n",
    )
    .success();
    verdict(
        &env,
        r#"{"verdict":"FAIL","must_fix":["x"],"false_positives":
            ["e", "", "tenant id", "of the a", "the tenant id", "an exponential backoff with"]}"#,
    );
    let run = feedback(&env, "judge", "r1");
    run.success();
    let out = &run.stdout;
    for fp in ["e", "", "tenant id", "of the a"] {
        assert!(
            out.contains(&format!(
                "too short to name a finding (it needs 3 words, 2 of them not stop words), nothing recorded: {fp}\n"
            )),
            "{fp:?}: {out}"
        );
    }
    assert!(
        out.contains("false positive matches 2 findings alike (lines 1, 3), nothing recorded; quote more of the finding: the tenant id\n"),
        "{out}"
    );
    assert!(
        out.contains(
            "(weight 1, matched by phrase): Retries need an exponential backoff with jitter."
        ),
        "{out}"
    );
    let ignored = of_kind(&env, "pattern_ignored");
    assert_eq!(ignored.len(), 1, "{out}");
    assert_eq!(ignored[0]["match"], "phrase");
    assert_eq!(ignored[0]["false_positive"], "an exponential backoff with");
    let ps = list(&env);
    assert_eq!(by_text(&ps, "The cache key")["ignored"], 0);
    assert_eq!(by_text(&ps, "The tenant id")["ignored"], 0);
    assert_eq!(by_text(&ps, "Retries")["ignored"], 1);
}

/// Front matter, a setext heading's whole paragraph, wrap-ups and html
/// blocks are not findings.
#[test]
fn extract_skips_front_matter_setext_titles_wrap_ups_and_html() {
    let env = TestEnv::initialised();
    let run = extract(
        &env,
        "judge",
        "r1",
        &["--format", "json"],
        "---\n\
         title: Audit of the cache layer for the tenant work\n\
         author: judge\n\
         tags: [cache]\n\
         ---\n\
         \n\
         Audit of the cache layer for the tenants\n\
         **Author**: judge, in the second pass\n\
         ---\n\
         \n\
         - The cache key must include the tenant id.\n\
         \n\
         Looks good to me overall, thanks for the work!\n\
         \n\
         <details><summary>raw</summary>\n\
         some raw output with many words in it\n\
         </details>\n",
    );
    run.success();
    let out: Value = serde_json::from_str(&run.stdout).expect("json");
    let found: Vec<(&str, u64)> = out["observations"]
        .as_array()
        .expect("observations")
        .iter()
        .map(|o| {
            (
                o["text"].as_str().unwrap_or(""),
                o["line"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    assert_eq!(
        found,
        vec![("The cache key must include the tenant id.", 11)],
        "{}",
        run.stdout
    );
    assert_eq!(of_kind(&env, "pattern_observed").len(), 1);
}

/// An outcome locks its run: one for a run no pattern joined (a mistyped
/// id) is refused and records nothing.
#[test]
fn an_outcome_for_a_run_without_patterns_is_refused() {
    let env = TestEnv::initialised();
    extract(&env, "judge", "r1", &[], DELIBERATION).success();
    let run = swarm(&env, &["pattern", "outcome", "--run", "future", "--pass"]);
    run.code(2);
    assert!(
        run.stderr
            .contains("no pattern was observed in or injected for run `future`"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("nothing was recorded"),
        "{}",
        run.stderr
    );
    assert!(of_kind(&env, "outcome").is_empty());

    // The run, once it has patterns, takes its outcome.
    extract(&env, "judge", "future", &[], DELIBERATION).success();
    let run = swarm(&env, &["pattern", "outcome", "--run", "future", "--pass"]);
    run.success();
    assert!(run.stdout.contains("3 pattern(s) graded"), "{}", run.stdout);
    assert_eq!(by_text(&list(&env), "The cache key")["outcome_passes"], 1);

    // A run patterns were injected for is graded too.
    swarm(
        &env,
        &["pattern", "inject", "--role", "judge", "--run", "r9"],
    )
    .success();
    let run = swarm(&env, &["pattern", "outcome", "--run", "r9", "--fail"]);
    run.success();
    assert!(run.stdout.contains("3 pattern(s) graded"), "{}", run.stdout);
}

/// Items of comma lists are trimmed; empty ones are dropped and match
/// nothing.
#[test]
fn comma_lists_are_trimmed_and_empty_items_dropped() {
    let env = TestEnv::initialised();
    extract(
        &env,
        "judge",
        "r1",
        &["--labels", "a,,b, c ,a", "--files", ",, ,"],
        "- The cache key must include the tenant id.\n",
    )
    .success();
    let observed = of_kind(&env, "pattern_observed");
    assert_eq!(observed[0]["labels"], serde_json::json!(["a", "b", "c"]));
    assert_eq!(observed[0]["files"], serde_json::json!([]));
    let p = list(&env).remove(0);
    assert_eq!(p["labels"], serde_json::json!(["a", "b", "c"]));
    assert_eq!(p["files"], serde_json::json!([]));

    let inject = |extra: &[&str]| {
        let mut args = vec!["pattern", "inject", "--role", "judge", "--format", "json"];
        args.extend_from_slice(extra);
        let run = swarm_at(&env, common::NOW, &args);
        run.success();
        let b: Value = serde_json::from_str(&run.stdout).expect("json");
        b["lines"][0]["score"].as_f64().expect("a score")
    };
    let plain = inject(&[]);
    // An empty label or file is no context.
    assert_eq!(inject(&["--labels", ""]), plain);
    assert_eq!(inject(&["--labels", ",", "--files", " ,"]), plain);
    // A padded one is the label.
    assert!(inject(&["--labels", " c "]) > plain);

    // Feedback's --files too: an empty item is not a file of the change.
    env.write(
        "delib.md",
        "- The cache key must include the tenant id.\n\nSee src/db/schema.rs:42 for it.\n",
    );
    verdict(&env, r#"{"verdict":"PASS"}"#);
    let run = swarm(
        &env,
        &[
            "pattern",
            "feedback",
            "--adversarial-role",
            "judge",
            "--validator-role",
            "curator",
            "--run",
            "r1",
            "--deliberation",
            "delib.md",
            "--verdict",
            "verdict.md",
            "--files",
            " src/db/schema.rs ,,",
        ],
    );
    run.success();
    assert!(run.stdout.contains("evidence level 2"), "{}", run.stdout);
}

/// Every option and argument of the pattern commands says what it is.
#[test]
fn every_pattern_option_is_described_in_help() {
    let env = TestEnv::initialised();
    for (command, entries) in [
        ("extract", &["--role <ROLE>", "--run <RUN>", "[FILE]"][..]),
        ("inject", &["--role <ROLE>", "--run <RUN>"][..]),
        (
            "feedback",
            &["--run <RUN>", "--deliberation <FILE>", "--verdicts <FILE>"][..],
        ),
        ("outcome", &["--run <RUN>"][..]),
        ("show", &["<ID>"][..]),
        ("promote", &["<ID>"][..]),
        ("deprecate", &["<ID>"][..]),
    ] {
        let run = swarm(&env, &["pattern", command, "-h"]);
        run.success();
        for entry in entries {
            let described = run.stdout.lines().any(|l| {
                l.trim_start()
                    .strip_prefix(entry)
                    .is_some_and(|rest| !rest.trim().is_empty())
            });
            assert!(described, "pattern {command}: {entry}\n{}", run.stdout);
        }
    }
}

/// Bytes that are not UTF-8 are reported at FILE:LINE:COL, and an unclosed
/// fence is quoted readably.
#[test]
fn input_errors_name_the_place_and_quote_readably() {
    let env = TestEnv::initialised();
    env.write("bu.md", b"- ok line\n- caf\xc3\xa9 \xff bad\n");
    let run = swarm(
        &env,
        &[
            "pattern", "extract", "--role", "judge", "--run", "r1", "bu.md",
        ],
    );
    run.code(2);
    assert!(
        run.stderr
            .contains("error: bu.md:2:8: not UTF-8 text (byte 0xff)"),
        "{}",
        run.stderr
    );
    let run = extract(&env, "judge", "r1", &[], "x\n````rust\nfn main() {}\n");
    run.code(2);
    assert!(
        run.stderr
            .contains("error: delib.md:2: code fence \"````\" is never closed"),
        "{}",
        run.stderr
    );
    // The verdict is read the same way.
    extract(&env, "judge", "r1", &[], DELIBERATION).success();
    env.write("verdict.md", b"\xfe{}\n");
    let run = feedback(&env, "judge", "r1");
    run.code(2);
    assert!(
        run.stderr
            .contains("verdict.md:1:1: not UTF-8 text (byte 0xfe)"),
        "{}",
        run.stderr
    );
    assert!(of_kind(&env, "pattern_ignored").is_empty());
}

/// Patterns that could not be written never reached the agent: the run
/// does not count them as used.
#[test]
fn an_inject_that_cannot_be_written_records_no_use() {
    if !std::path::Path::new("/dev/full").exists() {
        return;
    }
    let env = TestEnv::initialised();
    extract(&env, "judge", "r1", &[], DELIBERATION).success();
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("open /dev/full");
    let out = env
        .command(common::bin(), &env.root)
        .args(["pattern", "inject", "--role", "judge", "--run", "r2"])
        .stdout(full)
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(of_kind(&env, "pattern_shown").is_empty());
    swarm(
        &env,
        &["pattern", "inject", "--role", "judge", "--run", "r2"],
    )
    .success();
    assert_eq!(of_kind(&env, "pattern_shown").len(), 1);
}

/// A validator naming a finding by the id the deliberation gave it (`"S3"`)
/// ignores that finding's pattern; a wrap-up (`Overall, …`) is no finding.
#[test]
fn a_false_positive_given_as_the_finding_id_ignores_that_finding() {
    let env = TestEnv::initialised();
    let delib = "\
## Findings

- **S1**: The cache key must include the tenant id, or tenants read each other's data.
- **S2**: Retrying the upload without a backoff leads to a thundering herd on the API.
- **S3**: The migration in src/db/schema.rs drops the index on the users table.

Overall, the change is close to ready once the fixes above are in.
";
    let run = extract(&env, "sentinel", "r1", &[], delib);
    run.success();
    assert!(
        run.stdout.contains("Recorded 3 observation(s) of 3"),
        "{}",
        run.stdout
    );
    assert!(
        list(&env).iter().all(|p| !p["text"]
            .as_str()
            .unwrap_or_default()
            .starts_with("Overall")),
        "the wrap-up is not a pattern"
    );
    verdict(
        &env,
        r#"{"verdict":"FAIL","must_fix":["x"],"false_positives":["S3", {"id": "S1"}]}"#,
    );
    let run = feedback(&env, "sentinel", "r1");
    run.success();
    assert!(run.stdout.contains("matched by label"), "{}", run.stdout);
    let ignored = of_kind(&env, "pattern_ignored");
    assert_eq!(ignored.len(), 2, "{ignored:#?}");
    let ps = list(&env);
    assert_eq!(by_text(&ps, "The migration")["ignored"], 1);
    assert_eq!(by_text(&ps, "The cache key")["ignored"], 1);
    assert_eq!(by_text(&ps, "Retrying")["ignored"], 0);
}

/// A false positive may name a finding as `Finding S3`, `#3` or `Issue 3`
/// when the deliberation labelled it `S3` or `Finding 3`; a paragraph that
/// opens with `Overall` but is a finding is kept, a wrap-up is not.
#[test]
fn false_positives_name_findings_with_or_without_the_word_finding() {
    let env = TestEnv::initialised();
    let delib = "\
## Findings

- Finding 1: The cache key must include the tenant id, or tenants read each other's data.
- Finding 2: Retrying the upload without a backoff leads to a thundering herd on the API.
- Finding 3: The migration in src/db/schema.rs drops the index on the users table.

Overall, the retry loop leaks a connection on every timeout of the upload.

Overall, the change is close to ready once the fixes above are in.
";
    let run = extract(&env, "sentinel", "r1", &[], delib);
    run.success();
    assert!(
        run.stdout.contains("Recorded 4 observation(s) of 4"),
        "{}",
        run.stdout
    );
    by_text(&list(&env), "Overall, the retry loop leaks");
    verdict(
        &env,
        r##"{"verdict":"FAIL","must_fix":["x"],"false_positives":["#3", "Issue 1"]}"##,
    );
    let run = feedback(&env, "sentinel", "r1");
    run.success();
    let ps = list(&env);
    assert_eq!(
        by_text(&ps, "The migration")["ignored"],
        1,
        "{}",
        run.stdout
    );
    assert_eq!(
        by_text(&ps, "The cache key")["ignored"],
        1,
        "{}",
        run.stdout
    );
    assert_eq!(by_text(&ps, "Retrying")["ignored"], 0);

    let env = TestEnv::initialised();
    let delib = "\
- **S1**: The cache key must include the tenant id, or tenants read each other's data.
- **S2**: Retrying the upload without a backoff leads to a thundering herd on the API.
";
    extract(&env, "sentinel", "r1", &[], delib).success();
    verdict(
        &env,
        r#"{"verdict":"FAIL","must_fix":["x"],"false_positives":["Finding S2"]}"#,
    );
    let run = feedback(&env, "sentinel", "r1");
    run.success();
    assert!(run.stdout.contains("matched by label"), "{}", run.stdout);
    assert_eq!(by_text(&list(&env), "Retrying")["ignored"], 1);
}
