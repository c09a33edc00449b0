//! `git swarm check`: each predicate kind on a real change, the outcomes and
//! exit codes, every way to select a change (and the `.swarm/` each one
//! uses), bad input, the machine formats and `--record`.
//!
//! git-as-reference agreement (paths, added lines, `git grep`) is in
//! `check_git_reference.rs`; hooks are in `hooks.rs` and `hooks_block.rs`.

use crate::common;

use std::collections::BTreeMap;

use common::{Run, TestEnv};
use serde_json::Value;

/// Split so that no line of this file is a key line: this repository checks
/// its own commits with the `no-private-keys` directive.
const KEY: &str = concat!("-----BEGIN ", "RSA PRIVATE KEY-----");

/// The template's directives a change is checked against, which `repo()`
/// takes out.
const CHECKED_ON_A_CHANGE: [&str; 3] = [
    "no-private-keys",
    "lockfile-with-manifest",
    "run-tests-before-handoff",
];

/// A repository with a committed `.swarm/` and none of the template's
/// directives a change is checked against, so that every test states the
/// directives it checks. The template's tool-call directives stay (see
/// [`tool_call_directives`]): `n/a` on every change.
fn repo() -> TestEnv {
    let env = TestEnv::initialised();
    let mut args = vec!["rm".to_owned(), "-q".to_owned()];
    args.extend(
        CHECKED_ON_A_CHANGE
            .iter()
            .map(|id| format!(".swarm/directives/{id}.toml")),
    );
    env.git(&args.iter().map(String::as_str).collect::<Vec<_>>());
    env.git(&["commit", "-q", "-m", "no template directives"]);
    env
}

/// The template's directives that `repo()` keeps: those whose predicates are
/// all `command:` ones, checked before an agent's tool call and never on a
/// change.
fn tool_call_directives() -> Vec<&'static str> {
    common::template_directive_ids()
        .into_iter()
        .filter(|id| !CHECKED_ON_A_CHANGE.contains(id))
        .collect()
}

/// Writes `.swarm/directives/<id>.toml`: an id, a lesson, a scope and `fields`.
/// Writes a directive and stages it: `--staged` checks with the directives in
/// the index, the ones the commit will carry.
fn directive(env: &TestEnv, id: &str, fields: &str) {
    let path = format!(".swarm/directives/{id}.toml");
    env.write(
        &path,
        format!(
            "id = \"{id}\"\nlesson = \"The lesson of {id}\"\napplies_to_agents = [\"coder\"]\n{fields}\n"
        ),
    );
    env.git(&["add", &path]);
}

fn commit_all(env: &TestEnv, message: &str) {
    env.git(&["add", "-A"]);
    env.git(&["commit", "-q", "-m", message]);
}

fn check(env: &TestEnv, args: &[&str]) -> Run {
    let mut all = vec!["check"];
    all.extend_from_slice(args);
    env.swarm(&all)
}

/// `check ARGS --format json`, parsed.
#[track_caller]
fn json(env: &TestEnv, args: &[&str]) -> (i32, Value) {
    let mut all = args.to_vec();
    all.extend_from_slice(&["--format", "json"]);
    let run = check(env, &all);
    let value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}):\n{}", run.snapshot()));
    (run.code, value)
}

/// id → outcome of every directive in a report.
fn outcomes(report: &Value) -> BTreeMap<String, String> {
    report["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| {
            (
                r["id"].as_str().expect("id").to_owned(),
                r["outcome"].as_str().expect("outcome").to_owned(),
            )
        })
        .collect()
}

fn result<'a>(report: &'a Value, id: &str) -> &'a Value {
    report["results"]
        .as_array()
        .expect("results")
        .iter()
        .find(|r| r["id"] == id)
        .unwrap_or_else(|| panic!("no result for {id}: {report:#}"))
}

/// (path, line, text) of every finding of a directive's predicates.
fn findings(report: &Value, id: &str) -> Vec<(String, Option<u64>, String)> {
    result(report, id)["predicates"]
        .as_array()
        .expect("predicates")
        .iter()
        .flat_map(|p| p["findings"].as_array().expect("findings").iter())
        .map(|f| {
            (
                f["path"].as_str().expect("path").to_owned(),
                f["line"].as_u64(),
                f["text"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
        .collect()
}

/// [`map`] of `pairs`, and each of the template's tool-call directives `n/a`,
/// as every check of a change in [`repo`] reports them.
fn with_tool_calls_na(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    let mut all = map(pairs);
    for id in tool_call_directives() {
        assert!(
            all.insert(id.to_owned(), "n/a".to_owned()).is_none(),
            "{id}"
        );
    }
    all
}

fn schema(name: &str) -> jsonschema::Validator {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("schema")
        .join(name);
    let text = std::fs::read_to_string(path).expect("schema file");
    jsonschema::options()
        .should_validate_formats(true)
        .build(&serde_json::from_str(&text).expect("schema is JSON"))
        .expect("schema compiles")
}

// --- each predicate kind on a staged change ---------------------------------

#[test]
fn file_modified_holds_when_the_change_touches_a_matching_path() {
    let env = repo();
    directive(
        &env,
        "changelog-with-src",
        "enforcement = \"enforce\"\npaths = [\"src/**\"]\nverify = [\"file_modified:CHANGELOG.md\"]",
    );
    env.write("src/lib.rs", "pub fn a() {}\n");
    env.write("CHANGELOG.md", "# Changes\n\n- a\n");
    commit_all(&env, "base");

    env.write("src/lib.rs", "pub fn a() {}\npub fn b() {}\n");
    env.git(&["add", "src/lib.rs"]);
    let run = check(&env, &[]);
    run.code(1);
    insta::assert_snapshot!("failing_check_without_findings", run.snapshot());

    env.write("CHANGELOG.md", "# Changes\n\n- a\n- b\n");
    env.git(&["add", "CHANGELOG.md"]);
    let run = check(&env, &[]);
    run.code(0);
    insta::assert_snapshot!("passing_check", run.snapshot());

    // A rename touches its old path too.
    env.git(&["checkout", "-q", "HEAD", "--", "CHANGELOG.md"]);
    env.git(&["mv", "CHANGELOG.md", "CHANGES.md"]);
    let (code, report) = json(&env, &[]);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(
        outcomes(&report),
        with_tool_calls_na(&[("changelog-with-src", "pass")]),
        "the rename's old path counts"
    );
}

#[test]
fn file_not_modified_fails_on_every_touched_path_old_or_new() {
    let env = repo();
    directive(
        &env,
        "vendor-is-read-only",
        "enforcement = \"enforce\"\nverify = [\"file_not_modified:vendor/**\"]",
    );
    env.write("vendor/zlib/inflate.c", "int inflate(void);\n");
    env.write("src/main.c", "int main(void) { return 0; }\n");
    commit_all(&env, "base");

    env.write("src/main.c", "int main(void) { return 1; }\n");
    env.git(&["add", "src/main.c"]);
    let (code, report) = json(&env, &[]);
    assert_eq!(
        (code, outcomes(&report)),
        (0, with_tool_calls_na(&[("vendor-is-read-only", "pass")]))
    );

    env.write("vendor/zlib/inflate.c", "int inflate(int);\n");
    env.git(&["add", "vendor/zlib/inflate.c"]);
    let (code, report) = json(&env, &[]);
    assert_eq!(code, 1);
    assert_eq!(
        findings(&report, "vendor-is-read-only"),
        [(
            "vendor/zlib/inflate.c".to_owned(),
            None,
            "modified".to_owned()
        )]
    );

    // Moving a file out of vendor/ touches vendor/ (the rename's old path).
    env.git(&["reset", "-q", "--hard"]);
    env.git(&["mv", "vendor/zlib/inflate.c", "src/inflate.c"]);
    let (code, report) = json(&env, &[]);
    assert_eq!(code, 1, "{report:#}");
    assert_eq!(
        findings(&report, "vendor-is-read-only"),
        [(
            "vendor/zlib/inflate.c".to_owned(),
            None,
            "renamed".to_owned()
        )]
    );
}

/// A glob with no wildcard in its last part names a file or a folder, as
/// `git diff --name-only -- vendor` reads a path: `vendor` is every file
/// below any folder of that name, `lib/gen` every file below that one.
#[test]
fn a_glob_naming_a_folder_covers_the_files_below_it() {
    let env = repo();
    directive(
        &env,
        "vendor-is-read-only",
        "enforcement = \"enforce\"\nverify = [\"file_not_modified:vendor\"]",
    );
    directive(
        &env,
        "no-todo-in-generated",
        "enforcement = \"enforce\"\nverify = [\"grep:TODO:lib/gen\"]",
    );
    env.write("third_party/vendor/zlib/inflate.c", "int inflate(void);\n");
    env.write("lib/gen/a.rs", "// generated\n");
    env.write("lib/generated.rs", "// not below lib/gen\n");
    commit_all(&env, "base");

    env.write("third_party/vendor/zlib/inflate.c", "int inflate(int);\n");
    env.write("lib/gen/a.rs", "// generated TODO\n");
    env.write("lib/generated.rs", "// TODO: not below lib/gen\n");
    env.git(&["add", "-A"]);
    let (code, report) = json(&env, &[]);
    assert_eq!(code, 1, "{report:#}");
    assert_eq!(
        findings(&report, "vendor-is-read-only"),
        [(
            "third_party/vendor/zlib/inflate.c".to_owned(),
            None,
            "modified".to_owned()
        )]
    );
    assert_eq!(
        findings(&report, "no-todo-in-generated"),
        [(
            "lib/gen/a.rs".to_owned(),
            Some(1),
            "// generated TODO".to_owned()
        )]
    );
    // As git reads the same path.
    let git = env.git(&["diff", "--cached", "--name-only", "--", "lib/gen"]);
    assert_eq!(git.trim(), "lib/gen/a.rs");
}

#[test]
fn grep_looks_only_at_added_lines() {
    let env = repo();
    directive(
        &env,
        "no-todo-in-rust",
        "enforcement = \"enforce\"\nverify = ['grep:\\bTODO\\b:*.rs']",
    );
    env.write("src/a.rs", "fn a() {} // TODO old\n");
    env.write("notes.txt", "nothing\n");
    commit_all(&env, "base");

    // An edited file that already had a matching line: the old line is not the change's.
    env.write("src/a.rs", "fn a() {} // TODO old\nfn b() {}\n");
    env.git(&["add", "src/a.rs"]);
    let (code, report) = json(&env, &[]);
    assert_eq!(
        (code, outcomes(&report)),
        (0, with_tool_calls_na(&[("no-todo-in-rust", "pass")])),
        "{report:#}"
    );

    // A matching line in a file outside the glob is not a finding.
    env.write("notes.txt", "nothing\nTODO: write notes\n");
    env.git(&["add", "notes.txt"]);
    let (code, _) = json(&env, &[]);
    assert_eq!(code, 0);

    // An added line, and an edited old line (an edit adds the new text).
    env.write(
        "src/a.rs",
        "fn a() {} // TODO old, still\nfn b() {}\nfn c() {} // TODO new\n",
    );
    env.git(&["add", "src/a.rs"]);
    let run = check(&env, &[]);
    run.code(1);
    insta::assert_snapshot!("failing_check", run.snapshot());
    let (code, report) = json(&env, &[]);
    assert_eq!(code, 1);
    assert_eq!(
        findings(&report, "no-todo-in-rust"),
        [
            (
                "src/a.rs".to_owned(),
                Some(1),
                "fn a() {} // TODO old, still".to_owned()
            ),
            (
                "src/a.rs".to_owned(),
                Some(3),
                "fn c() {} // TODO new".to_owned()
            ),
        ]
    );
}

#[test]
fn grep_tree_searches_the_whole_snapshot_and_fails_closed_on_no_file() {
    let env = repo();
    directive(
        &env,
        "no-fixme-in-docs",
        "enforcement = \"enforce\"\nverify = [\"grep_tree:FIXME:docs/**\"]",
    );
    env.write("docs/a.md", "# A\n");
    env.write("docs/b.md", "# B\n\nFIXME: say more\n");
    commit_all(&env, "base");

    // The change does not touch docs/, yet the snapshot has a match.
    env.write("src/x.rs", "fn x() {}\n");
    env.git(&["add", "src/x.rs"]);
    let (code, report) = json(&env, &[]);
    assert_eq!(code, 1);
    assert_eq!(
        findings(&report, "no-fixme-in-docs"),
        [(
            "docs/b.md".to_owned(),
            Some(3),
            "FIXME: say more".to_owned()
        )]
    );

    // Fixed in the working tree only: the staged snapshot (the index) still has it.
    env.write("docs/b.md", "# B\n\nMore said.\n");
    let (code, _) = json(&env, &[]);
    assert_eq!(code, 1, "--staged reads the index, not the working tree");
    let (code, report) = json(&env, &["--worktree"]);
    assert_eq!(
        (code, outcomes(&report)),
        (0, with_tool_calls_na(&[("no-fixme-in-docs", "pass")]))
    );
    env.git(&["add", "docs/b.md"]);
    let (code, _) = json(&env, &[]);
    assert_eq!(code, 0);

    // Zero files matched: an error, which fails closed for `enforce`.
    directive(
        &env,
        "no-password-in-config",
        "enforcement = \"enforce\"\npriority = \"high\"\nverify = [\"grep_tree:password:config/**\"]",
    );
    let run = check(&env, &["--directive", "no-password-in-config"]);
    run.code(1);
    insta::assert_snapshot!("error_result", run.snapshot());
}

/// `grep_tree` results are kept in the git dir, keyed by the predicate and
/// the blobs searched: a second run answers the same, a changed file is
/// searched again, and a damaged cache file is ignored.
#[test]
fn grep_tree_results_are_reused_only_for_the_same_blobs() {
    let env = repo();
    directive(
        &env,
        "no-fixme-in-docs",
        "enforcement = \"enforce\"\nverify = [\"grep_tree:FIXME:docs/*.md\"]",
    );
    env.write("docs/a.md", "# A\n");
    env.write("docs/b.md", "# B\n\nFIXME: say more\n");
    commit_all(&env, "base");
    env.write("docs/c.md", "# C\n");
    commit_all(&env, "c");
    env.git(&["tag", "c"]);

    let first = check(&env, &["--range", "c~1..c"]);
    first.code(1);
    let cache = env.root.join(".git/swarm/grep-tree");
    assert!(cache.is_file(), "the result is cached");
    let again = check(&env, &["--range", "c~1..c"]);
    assert_eq!(again.snapshot(), first.snapshot());

    // The same folder with b.md fixed: new blobs, a new search.
    env.write("docs/b.md", "# B\n\nMore said.\n");
    commit_all(&env, "fix b");
    check(&env, &["--range", "HEAD~1..HEAD"]).success();
    // The staged check of the same content agrees, and so does the old range.
    env.write("docs/a.md", "# A\nFIXME again\n");
    env.git(&["add", "docs/a.md"]);
    let (code, report) = json(&env, &[]);
    assert_eq!(code, 1);
    assert_eq!(
        findings(&report, "no-fixme-in-docs"),
        [("docs/a.md".to_owned(), Some(2), "FIXME again".to_owned())]
    );
    assert_eq!(
        check(&env, &["--range", "c~1..c"]).snapshot(),
        first.snapshot()
    );

    // A damaged cache is a miss, not an error.
    std::fs::write(&cache, b"git-swarm grep-tree cache 3\n\xff\xff\xff").expect("write");
    assert_eq!(
        check(&env, &["--range", "c~1..c"]).snapshot(),
        first.snapshot()
    );
}

/// A folder whose tree did not change is recognised by its tree id: a
/// later commit is checked without reading that tree or its files. Here
/// they are removed from the object database after the first check, and
/// the second still reports the finding, while a third check, whose folder
/// changed, searches it again.
#[test]
fn grep_tree_recognises_an_unchanged_folder_by_its_tree() {
    let env = repo();
    directive(
        &env,
        "no-fixme-in-docs",
        "enforcement = \"enforce\"\nverify = [\"grep_tree:FIXME:docs/*.md\"]",
    );
    env.write("docs/b.md", "# B\n\nFIXME: say more\n");
    commit_all(&env, "docs");
    env.write("src/x.rs", "fn x() {}\n");
    commit_all(&env, "x");
    env.write("src/y.rs", "fn y() {}\n");
    commit_all(&env, "y");

    let first = check(&env, &["--range", "HEAD~2..HEAD~1"]);
    first.code(1);
    assert!(
        first.stdout.contains("docs/b.md:3: FIXME: say more"),
        "{}",
        first.stdout
    );
    let objects = remove_objects(&env, &["HEAD:docs", "HEAD:docs/b.md"]);
    let later = check(&env, &["--range", "HEAD~1..HEAD"]);
    later.code(1);
    assert!(
        later.stdout.contains("docs/b.md:3: FIXME: say more"),
        "{}",
        later.stdout
    );

    // A changed folder has a new tree: it is searched (and its files read).
    restore_objects(objects);
    env.write("docs/b.md", "# B\n\nSaid.\n");
    commit_all(&env, "fix b");
    check(&env, &["--range", "HEAD~1..HEAD"]).success();
}

/// Removes the loose objects `specs` name (as `git rev-parse` reads them)
/// and returns them, for [`restore_objects`].
fn remove_objects(env: &TestEnv, specs: &[&str]) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut args = vec!["rev-parse"];
    args.extend_from_slice(specs);
    env.git(&args)
        .lines()
        .map(|id| {
            let path = env.path(&format!(".git/objects/{}/{}", &id[..2], &id[2..]));
            let bytes = std::fs::read(&path).expect("a loose object");
            std::fs::remove_file(&path).expect("remove");
            (path, bytes)
        })
        .collect()
}

fn restore_objects(objects: Vec<(std::path::PathBuf, Vec<u8>)>) {
    for (path, bytes) in objects {
        std::fs::write(path, bytes).expect("restore");
    }
}

/// The directives of a checked commit are parsed once and kept under the
/// tree id of its `.swarm/directives/`: checking it again reads neither
/// that tree nor its files (here removed from the object database). A
/// damaged parse is ignored.
#[test]
fn a_range_reuses_the_parse_of_its_directives_folder() {
    let env = repo();
    directive(
        &env,
        "no-todo",
        "enforcement = \"enforce\"\nverify = [\"grep:TODO\"]",
    );
    commit_all(&env, "directive");
    env.write("src/a.rs", "// TODO\n");
    commit_all(&env, "a");
    let first = check(&env, &["--range", "HEAD~1..HEAD"]);
    first.code(1);
    assert!(first.stdout.contains("FAIL  no-todo"), "{}", first.stdout);

    let objects = remove_objects(
        &env,
        &[
            "HEAD:.swarm/directives",
            "HEAD:.swarm/directives/no-todo.toml",
        ],
    );
    assert_eq!(
        check(&env, &["--range", "HEAD~1..HEAD"]).snapshot(),
        first.snapshot()
    );
    restore_objects(objects);

    let cached: Vec<_> = std::fs::read_dir(env.path(".git/swarm/trees"))
        .expect("the parse is kept")
        .map(|e| e.expect("entry").path())
        .collect();
    assert!(!cached.is_empty());
    for path in cached {
        std::fs::write(path, b"git-swarm tree directives v1\n\xff\xff").expect("damage");
    }
    assert_eq!(
        check(&env, &["--range", "HEAD~1..HEAD"]).snapshot(),
        first.snapshot()
    );
}

#[test]
fn out_of_scope_and_unverifiable_directives_are_na_and_retired_ones_are_not_checked() {
    let env = repo();
    directive(
        &env,
        "api-changes-noted",
        "enforcement = \"enforce\"\npaths = [\"api/**\"]\nverify = [\"file_modified:api/CHANGES.md\"]",
    );
    directive(
        &env,
        "ask-a-reviewer",
        "enforcement = \"enforce\"\nrequired_actions = [\"ask a reviewer before merging\"]",
    );
    directive(
        &env,
        "retired-rule",
        "enforcement = \"enforce\"\nstatus = \"retired\"\nverify = [\"grep:.\"]",
    );
    commit_all(&env, "directives");

    env.write("src/x.rs", "fn x() {}\n");
    env.git(&["add", "src/x.rs"]);
    let run = check(&env, &[]);
    run.code(0);
    insta::assert_snapshot!("not_applicable", run.snapshot());

    let (code, report) = json(&env, &[]);
    assert_eq!(code, 0);
    assert_eq!(
        outcomes(&report),
        with_tool_calls_na(&[("api-changes-noted", "n/a"), ("ask-a-reviewer", "n/a")]),
        "retired-rule is not checked at all"
    );
    assert_eq!(
        result(&report, "api-changes-noted")["reason"],
        "the change touches none of its paths"
    );
    assert!(
        result(&report, "ask-a-reviewer")["reason"]
            .as_str()
            .expect("reason")
            .contains("no machine-checkable predicate"),
        "{report:#}"
    );
    // The template's tool-call directives (the force-push and --no-verify
    // guards, the hard-reset warning): only `command:` predicates, which a
    // change has no command line for.
    let tool_calls = tool_call_directives();
    assert!(
        tool_calls.contains(&"no-force-push-default-branch"),
        "{tool_calls:?}"
    );
    for id in tool_calls {
        let r = result(&report, id);
        assert_eq!(
            r["reason"], "its predicates are checked before agents' tool calls",
            "{r:#}"
        );
        let predicates = r["predicates"].as_array().expect("predicates");
        assert!(!predicates.is_empty(), "{r:#}");
        for p in predicates {
            assert_eq!(p["outcome"], "n/a", "{r:#}");
            assert_eq!(
                p["message"], "checked before an agent's tool call, not on a change",
                "{r:#}"
            );
        }
    }

    // In scope, the same directive is checked.
    env.write("api/v1.rs", "fn v1() {}\n");
    env.git(&["add", "api/v1.rs"]);
    let (code, report) = json(&env, &[]);
    assert_eq!(code, 1);
    assert_eq!(result(&report, "api-changes-noted")["outcome"], "fail");

    // --directive with a retired id: it is not an active directive.
    let run = check(&env, &["--directive", "retired-rule"]);
    run.code(2);
    assert!(
        run.stderr
            .contains("no active directive `retired-rule` in the checked snapshot"),
        "{}",
        run.snapshot()
    );
}

/// grep reads the text git stores: a CRLF line keeps its `\r`, a binary file
/// and a submodule entry add no lines (git's `Subproject commit …` is not content).
#[test]
fn grep_sees_crlf_and_not_binary_files_or_submodule_pseudo_lines() {
    let env = repo();
    directive(
        &env,
        "no-banned",
        "enforcement = \"enforce\"\nverify = ['grep:BANNED|Subproject:*.{txt,dat}', 'grep:^Subproject commit']",
    );
    commit_all(&env, "directive");
    env.write("crlf.txt", "ok\r\nBANNED here\r\n");
    env.write("blob.dat", b"\x00\x01BANNED\n");
    let tree = env.git(&["write-tree"]);
    let commit = env.git(&["commit-tree", "-m", "sub", tree.trim()]);
    env.git(&[
        "update-index",
        "--add",
        "--cacheinfo",
        &format!("160000,{},vendored.txt", commit.trim()),
    ]);
    env.git(&["add", "crlf.txt", "blob.dat"]);
    let (code, report) = json(&env, &[]);
    assert_eq!(code, 1, "{report:#}");
    assert_eq!(
        findings(&report, "no-banned"),
        [("crlf.txt".to_owned(), Some(2), "BANNED here\r".to_owned())],
        "only the text file's line, with its CR"
    );
    assert_eq!(
        report["files"], 3,
        "the binary file and the submodule are changes"
    );
}

/// `grep_tree` reads a CRLF file's lines with their `\r`, as `grep` and
/// `git grep` do: `l1$` does not match `l1\r`, `l1\r$` does.
#[test]
fn grep_tree_keeps_the_cr_of_crlf_lines_as_git_grep_does() {
    let env = repo();
    directive(&env, "plain-end", "verify = ['grep_tree:l1$:crlf.txt']");
    directive(&env, "cr-end", "verify = ['grep_tree:l1\\r$:crlf.txt']");
    commit_all(&env, "directives");
    env.write("crlf.txt", "l1\r\nl2\r\n");
    env.git(&["add", "crlf.txt"]);
    let git_grep = |pattern: &str| {
        env.command("git", &env.root)
            .args(["grep", "--cached", "-P", "-q", pattern, "--", "crlf.txt"])
            .status()
            .expect("run git grep")
            .success()
    };
    assert!(!git_grep("l1$") && git_grep("l1\\r$"), "the reference");
    let (_, report) = json(&env, &[]);
    assert_eq!(
        outcomes(&report),
        with_tool_calls_na(&[("cr-end", "fail"), ("plain-end", "pass")]),
        "{report:#}"
    );
    assert_eq!(
        findings(&report, "cr-end"),
        [("crlf.txt".to_owned(), Some(1), "l1\r".to_owned())]
    );
}

/// A glob-less `grep` leaves `.swarm/` out (a directive's own text would
/// match it), so the template's key directive searches `.swarm/` with a
/// second predicate: a key quoted in a file there is blocked too, while the
/// commit that adds the directive itself passes.
#[test]
fn the_template_blocks_a_key_under_swarm_too() {
    let env = TestEnv::new();
    env.swarm(&["init"]).success();
    env.git(&["add", "-A"]);
    check(&env, &[]).success();
    commit_all(&env, "init");
    env.write(
        ".swarm/README.md",
        format!("{}\n{KEY}\n", env.read(".swarm/README.md")),
    );
    env.git(&["add", "-A"]);
    let (code, report) = json(&env, &[]);
    assert_eq!(code, 1, "{report:#}");
    let found = findings(&report, "no-private-keys");
    assert_eq!(found.len(), 1, "{report:#}");
    assert_eq!(found[0].0, ".swarm/README.md");
}

// --- exit codes ---------------------------------------------------------------

#[test]
fn exit_codes_follow_enforcement_and_strict() {
    let env = repo();
    for (id, level) in [
        ("enforce-fail", "enforce"),
        ("warn-fail", "warn"),
        ("advisory-fail", "advisory"),
    ] {
        directive(
            &env,
            id,
            &format!("enforcement = \"{level}\"\nverify = [\"grep:BAD:*.txt\"]"),
        );
    }
    for (id, level) in [
        ("enforce-error", "enforce"),
        ("warn-error", "warn"),
        ("advisory-error", "advisory"),
    ] {
        directive(
            &env,
            id,
            &format!("enforcement = \"{level}\"\nverify = [\"grep_tree:x:nowhere/**\"]"),
        );
    }
    commit_all(&env, "directives");
    env.write("a.txt", "BAD\n");
    env.git(&["add", "a.txt"]);

    let cases = [
        ("enforce-fail", "fail", 1, 1),
        ("warn-fail", "fail", 0, 1),
        ("advisory-fail", "fail", 0, 0),
        ("enforce-error", "error", 1, 1),
        ("warn-error", "error", 0, 1),
        ("advisory-error", "error", 0, 0),
    ];
    for (id, outcome, code, strict_code) in cases {
        let (got, report) = json(&env, &["--directive", id]);
        assert_eq!(
            (got, outcomes(&report)),
            (code, map(&[(id, outcome)])),
            "{id}"
        );
        let (got, _) = json(&env, &["--directive", id, "--strict"]);
        assert_eq!(got, strict_code, "{id} --strict");
    }

    let run = check(&env, &[]);
    run.code(1);
    assert!(
        run.stdout
            .ends_with("blocked by 2 directives: enforce-error, enforce-fail\n"),
        "{}",
        run.snapshot()
    );
    let run = check(&env, &["--strict"]);
    run.code(1);
    assert!(
        run.stdout.ends_with(
            "blocked by 4 directives: enforce-error, enforce-fail, warn-error, warn-fail\n"
        ),
        "{}",
        run.snapshot()
    );
}

// --- selecting the change, and the `.swarm/` it brings ------------------------

#[test]
fn a_range_is_checked_with_the_directives_at_its_end() {
    let env = repo();
    directive(
        &env,
        "old-rule",
        "enforcement = \"enforce\"\nverify = [\"grep:FORBIDDEN:src/**\"]",
    );
    commit_all(&env, "A: old-rule");
    env.git(&["tag", "a"]);
    std::fs::remove_file(env.path(".swarm/directives/old-rule.toml")).expect("rm");
    directive(
        &env,
        "new-rule",
        "enforcement = \"enforce\"\nverify = [\"grep:BANNED:src/**\"]",
    );
    env.write("src/x.rs", "// FORBIDDEN\n// BANNED\n");
    commit_all(&env, "B: new-rule, old-rule gone, both words added");
    env.git(&["tag", "b"]);
    // The working tree goes back to A, whose .swarm/ has only old-rule.
    env.git(&["checkout", "-q", "a"]);

    for selection in [
        &["--range", "a..b"][..],
        &["--range", "a...b"],
        &["--commit", "b"],
    ] {
        let (code, report) = json(&env, selection);
        assert_eq!(code, 1, "{selection:?}");
        assert_eq!(
            outcomes(&report),
            with_tool_calls_na(&[("new-rule", "fail")]),
            "{selection:?}: B's directives, not the working tree's"
        );
        assert_eq!(
            findings(&report, "new-rule"),
            [("src/x.rs".to_owned(), Some(2), "// BANNED".to_owned())]
        );
    }
    let (_, report) = json(&env, &["--range", "a..b"]);
    assert_eq!(report["change"], "a..b");

    // The working tree need not have a .swarm/ at all.
    std::fs::remove_dir_all(env.path(".swarm")).expect("rm .swarm");
    let (code, report) = json(&env, &["--range", "a..b"]);
    assert_eq!(
        (code, outcomes(&report)),
        (1, with_tool_calls_na(&[("new-rule", "fail")]))
    );
    // While --staged needs one.
    check(&env, &[]).code(2);
}

#[test]
fn a_three_dot_range_starts_at_the_merge_base() {
    let env = repo();
    directive(
        &env,
        "main-txt-untouched",
        "enforcement = \"enforce\"\nverify = [\"file_not_modified:main.txt\"]",
    );
    commit_all(&env, "base");
    env.git(&["checkout", "-q", "-b", "side"]);
    env.write("side.txt", "side\n");
    commit_all(&env, "side");
    env.git(&["checkout", "-q", "main"]);
    env.write("main.txt", "main\n");
    commit_all(&env, "main moves on");

    // main..side compares the two tips: main.txt is gone on side.
    let (code, report) = json(&env, &["--range", "main..side"]);
    assert_eq!((code, report["files"].as_u64()), (1, Some(2)), "{report:#}");
    assert_eq!(
        findings(&report, "main-txt-untouched"),
        [("main.txt".to_owned(), None, "deleted".to_owned())]
    );
    // main...side is what side did since it left main: side.txt only.
    let (code, report) = json(&env, &["--range", "main...side"]);
    assert_eq!((code, report["files"].as_u64()), (0, Some(1)), "{report:#}");
    assert_eq!(report["change"], "main...side");
}

/// A side left out of a range is HEAD, as `git diff main..` reads it.
#[test]
fn a_range_side_left_out_is_head() {
    let env = repo();
    directive(
        &env,
        "main-txt-untouched",
        "enforcement = \"enforce\"\nverify = [\"file_not_modified:main.txt\"]",
    );
    commit_all(&env, "base");
    env.git(&["checkout", "-q", "-b", "side"]);
    env.write("main.txt", "side\n");
    commit_all(&env, "side changes main.txt");
    for (args, code, change) in [
        (&["--range", "main.."][..], 1, "main..HEAD"),
        (&["--range", "main..."], 1, "main...HEAD"),
        (&["--range", "..main"], 1, "HEAD..main"),
        (&["--range", "...main"], 0, "HEAD...main"),
    ] {
        let (got, report) = json(&env, args);
        assert_eq!(got, code, "{args:?}: {report:#}");
        assert_eq!(report["change"], change, "{args:?}");
    }
    // Both left out is HEAD..HEAD, as for `git diff ..`: an empty change.
    for (spec, change) in [("..", "HEAD..HEAD"), ("...", "HEAD...HEAD")] {
        let (got, report) = json(&env, &["--range", spec]);
        assert_eq!(got, 0, "{spec}: {report:#}");
        assert_eq!(report["change"], change);
        assert_eq!(report["files"], 0);
    }
    let run = check(&env, &["--range", "...."]);
    assert_eq!(run.code, 2, "{}", run.snapshot());
    assert!(
        run.stderr.contains("`....` is not a range"),
        "{}",
        run.snapshot()
    );
}

/// A blob (`HEAD:path`) is not a commit: bad input, exit 2, whichever
/// side of a range or commit names it, as a tree already was.
#[test]
fn a_blob_is_bad_input_not_an_internal_error() {
    let env = repo();
    env.write("main.txt", "base\n");
    commit_all(&env, "base");
    for args in [
        &["--commit", "HEAD:main.txt"][..],
        &["--range", "HEAD..HEAD:main.txt"],
        &["--range", "HEAD:main.txt...HEAD"],
    ] {
        let run = check(&env, args);
        assert_eq!(run.code, 2, "{args:?}: {}", run.snapshot());
        assert!(
            run.stderr
                .contains("names a file's content (a blob), not a commit")
                && run.stderr.contains("hint: name a commit")
                && !run.stderr.contains("fsck"),
            "{}",
            run.snapshot()
        );
    }
}

/// Annotated tags name their commits, as for `git diff` (release-tag CI
/// checks `--range v1...v2` and `--commit v2`); a revision that does not
/// resolve is bad usage in words a user can act on.
#[test]
fn annotated_tags_are_peeled_to_their_commits() {
    let env = repo();
    directive(
        &env,
        "main-txt-untouched",
        "enforcement = \"enforce\"\nverify = [\"file_not_modified:main.txt\"]",
    );
    env.write("main.txt", "base\n");
    commit_all(&env, "base");
    env.write("other.txt", "other\n");
    commit_all(&env, "other.txt only");
    env.git(&["tag", "-a", "-m", "one", "v1"]);
    env.write("main.txt", "changed\n");
    commit_all(&env, "main.txt changes");
    env.git(&["tag", "-a", "-m", "two", "v2"]);
    for args in [
        &["--commit", "v2"][..],
        &["--range", "v1..v2"],
        &["--range", "v1...v2"],
    ] {
        let (code, report) = json(&env, args);
        assert_eq!(
            (code, report["files"].as_u64()),
            (1, Some(1)),
            "{args:?}: {report:#}"
        );
        assert_eq!(
            findings(&report, "main-txt-untouched"),
            [("main.txt".to_owned(), None, "modified".to_owned())],
            "{args:?}"
        );
    }
    let (code, report) = json(&env, &["--commit", "v1"]);
    assert_eq!((code, report["files"].as_u64()), (0, Some(1)), "{report:#}");

    let run = check(&env, &["--commit", "HEAD~5"]);
    assert_eq!(run.code, 2, "{}", run.snapshot());
    assert!(
        run.stderr
            .contains("`HEAD~5` does not name a revision in this repository"),
        "{}",
        run.snapshot()
    );
    assert!(!run.stderr.contains("delegate"), "{}", run.snapshot());
}

#[test]
fn commit_checks_one_commit_against_its_parent_and_a_root_commit_against_nothing() {
    let env = TestEnv::new();
    env.swarm(&["init"]).success();
    env.write("deploy/key.pem", format!("{KEY}\n"));
    commit_all(&env, "root: swarm and a key");
    let tracked = env.git(&["ls-files"]).lines().count();

    let (code, report) = json(&env, &["--commit", "HEAD"]);
    assert_eq!(code, 1, "{report:#}");
    assert_eq!(
        report["files"].as_u64(),
        Some(tracked as u64),
        "every file of a root commit is added"
    );
    assert_eq!(
        findings(&report, "no-private-keys"),
        [("deploy/key.pem".to_owned(), Some(1), KEY.to_owned())]
    );

    env.write("README.md", "# Project\n");
    commit_all(&env, "a clean commit on top");
    let (code, report) = json(&env, &["--commit", "HEAD"]);
    assert_eq!((code, report["files"].as_u64()), (0, Some(1)));
    assert_eq!(report["change"], "commit HEAD");
    let (code, _) = json(&env, &["--commit", "HEAD~1"]);
    assert_eq!(code, 1);
}

#[test]
fn worktree_includes_untracked_files_in_new_directories() {
    let env = repo();
    directive(
        &env,
        "no-banned",
        "enforcement = \"enforce\"\nverify = [\"grep:BANNED\"]",
    );
    env.write(".gitignore", "build/\n");
    commit_all(&env, "directive");
    env.write("fresh/deep/dir/x.txt", "fine\nBANNED\n");
    env.write("build/out.txt", "BANNED\n");

    let (code, report) = json(&env, &[]);
    assert_eq!(
        (code, report["files"].as_u64()),
        (0, Some(0)),
        "untracked files are not staged"
    );
    let (code, report) = json(&env, &["--worktree"]);
    assert_eq!(code, 1, "{report:#}");
    assert_eq!(report["change"], "worktree");
    assert_eq!(
        findings(&report, "no-banned"),
        [(
            "fresh/deep/dir/x.txt".to_owned(),
            Some(2),
            "BANNED".to_owned()
        )],
        "listed one by one; ignored files are not"
    );
}

/// The paths `git diff HEAD --name-status` lists, with their status letters.
fn git_worktree_status(env: &TestEnv) -> BTreeMap<String, String> {
    env.git(&["diff", "HEAD", "--name-status", "--no-renames"])
        .lines()
        .filter_map(|l| l.split_once('\t'))
        .map(|(st, p)| (p.to_owned(), st.to_owned()))
        .collect()
}

/// Ours, as letters: `file_not_modified:**` names every touched path.
fn our_worktree_status(env: &TestEnv) -> BTreeMap<String, String> {
    let (_, report) = json(env, &["--worktree", "--directive", "every-path"]);
    findings(&report, "every-path")
        .into_iter()
        .map(|(path, _, what)| {
            let letter = match what.as_str() {
                "added" => "A",
                "deleted" => "D",
                "modified" => "M",
                "type changed" => "T",
                other => panic!("{other}"),
            };
            (path, letter.to_owned())
        })
        .collect()
}

/// `--worktree` against `git diff HEAD`: a submodule whose checkout moved
/// (staged or not), an executable bit, and a file that became a symlink
/// with the same text.
#[test]
fn worktree_sees_submodule_moves_mode_and_type_changes_as_git_does() {
    let env = repo();
    directive(&env, "every-path", "verify = [\"file_not_modified:**\"]");
    let src = env.root.parent().expect("parent").join("subsrc");
    std::fs::create_dir_all(&src).expect("mkdir");
    env.git_in(&src, &["init", "-q", "-b", "main"]);
    std::fs::write(src.join("s"), "one\n").expect("write");
    env.git_in(&src, &["add", "s"]);
    env.git_in(&src, &["commit", "-q", "-m", "one"]);
    std::fs::write(src.join("s"), "two\n").expect("write");
    env.git_in(&src, &["commit", "-q", "-am", "two"]);
    env.git(&[
        "-c",
        "protocol.file.allow=always",
        "submodule",
        "add",
        "-q",
        src.to_str().expect("utf-8"),
        "sub",
    ]);
    env.write("f", "x\n");
    env.write("tgt", "base.txt");
    commit_all(&env, "with a submodule");
    assert_eq!(our_worktree_status(&env), BTreeMap::new());

    env.git_in(&env.root.join("sub"), &["checkout", "-q", "HEAD~1"]);
    assert_eq!(git_worktree_status(&env), map(&[("sub", "M")]));
    assert_eq!(
        our_worktree_status(&env),
        git_worktree_status(&env),
        "unstaged"
    );
    env.git(&["add", "sub"]);
    assert_eq!(
        our_worktree_status(&env),
        git_worktree_status(&env),
        "staged"
    );

    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let f = env.path("f");
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        std::fs::remove_file(env.path("tgt")).expect("rm");
        std::os::unix::fs::symlink("base.txt", env.path("tgt")).expect("symlink");
        assert_eq!(
            git_worktree_status(&env),
            map(&[("f", "M"), ("sub", "M"), ("tgt", "T")])
        );
        assert_eq!(
            our_worktree_status(&env),
            git_worktree_status(&env),
            "mode and type"
        );
        env.git(&["config", "core.fileMode", "false"]);
        assert_eq!(
            our_worktree_status(&env),
            git_worktree_status(&env),
            "core.fileMode false"
        );
    }
}

#[test]
fn directive_limits_the_check_to_one_and_an_unknown_id_is_bad_usage() {
    let env = repo();
    for id in ["first-rule", "second-rule"] {
        directive(
            &env,
            id,
            "enforcement = \"enforce\"\nverify = [\"grep:BAD:*.txt\"]",
        );
    }
    commit_all(&env, "directives");
    env.write("a.txt", "BAD\n");
    env.git(&["add", "a.txt"]);
    let (code, report) = json(&env, &[]);
    assert_eq!(
        (code, outcomes(&report)),
        (
            1,
            with_tool_calls_na(&[("first-rule", "fail"), ("second-rule", "fail")])
        )
    );
    let (code, report) = json(&env, &["--directive", "second-rule"]);
    assert_eq!(
        (code, outcomes(&report)),
        (1, map(&[("second-rule", "fail")]))
    );

    let run = check(&env, &["--directive", "no-such-rule"]);
    run.code(2);
    assert_eq!(run.stdout, "");
    assert!(
        run.stderr
            .contains("error: no active directive `no-such-rule` in the checked snapshot")
            && run
                .stderr
                .contains("hint: `git swarm list --state active` shows the ids"),
        "{}",
        run.snapshot()
    );
}

// --- bad input ------------------------------------------------------------------

#[test]
fn a_broken_directive_file_is_bad_input_naming_the_file() {
    let cases = [
        (
            "unknown-kind",
            "lesson = \"A predicate of no known kind\"\napplies_to_agents = [\"coder\"]\nverify = [\"grep_files:x\"]\n",
            ".swarm/directives/unknown-kind.toml:4:",
            "unknown predicate kind `grep_files`",
        ),
        (
            "bad-regex",
            "lesson = \"A regex that does not compile\"\napplies_to_agents = [\"coder\"]\nverify = [\"grep:(unclosed:src/**\"]\n",
            ".swarm/directives/bad-regex.toml:4:",
            "`grep` regex `(unclosed` does not parse",
        ),
        (
            // Parses, but the regex crate would refuse to compile it.
            "huge-regex",
            "lesson = \"A regex far too large to compile\"\napplies_to_agents = [\"coder\"]\nverify = [\"grep_tree:a{99999999}:src/**\"]\n",
            ".swarm/directives/huge-regex.toml:4:",
            "too large to compile",
        ),
        (
            // A shell would read `# x` as a comment and run `grep -c` alone.
            "hash-word",
            "lesson = \"A tool predicate whose last words a shell would drop\"\napplies_to_agents = [\"coder\"]\nverify = [\"tool:grep -c # x\"]\n",
            ".swarm/directives/hash-word.toml:4:",
            "has a word starting with `#`",
        ),
        (
            "bad-toml",
            "lesson = \"A string that never ends\napplies_to_agents = [\"coder\"]\n",
            ".swarm/directives/bad-toml.toml:2:",
            "TOML syntax",
        ),
    ];
    for (id, rest, place, what) in cases {
        let env = repo();
        env.write("a.txt", "a\n");
        env.git(&["add", "a.txt"]);
        env.write(
            &format!(".swarm/directives/{id}.toml"),
            format!("id = \"{id}\"\n{rest}"),
        );
        env.git(&["add", ".swarm/directives"]);
        let run = check(&env, &[]);
        run.code(2);
        assert_eq!(run.stdout, "", "{id}");
        assert!(
            run.stderr.contains(place) && run.stderr.contains(what),
            "{id}: expected `{place}` and `{what}`:\n{}",
            run.snapshot()
        );
        common::assert_no_panic(&run);

        // The same file in a checked commit is bad input too.
        commit_all(&env, "broken directive");
        let run = check(&env, &["--commit", "HEAD"]);
        run.code(2);
        assert!(run.stderr.contains(place), "{id}:\n{}", run.snapshot());
    }
}

// --- formats --------------------------------------------------------------------

/// A repository whose staged change makes one directive of each outcome.
fn mixed() -> TestEnv {
    let env = repo();
    directive(
        &env,
        "no-full-disk",
        "enforcement = \"enforce\"\nverify = [\"grep:100%:*.txt\"]",
    );
    directive(
        &env,
        "changelog-noted",
        "paths = [\"src/**\"]\nverify = [\"file_modified:CHANGELOG.md\"]",
    );
    directive(
        &env,
        "secrets-in-config",
        "enforcement = \"advisory\"\nverify = [\"grep_tree:password:config/**\"]",
    );
    directive(
        &env,
        "docs-reviewed",
        "paths = [\"docs/**\"]\nverify = [\"file_modified:docs/**\"]",
    );
    directive(
        &env,
        "lock-untouched",
        "verify = [\"file_not_modified:Cargo.lock\"]",
    );
    commit_all(&env, "directives");
    env.write("a,b:c.txt", "fine\ndisk at 100%\n");
    env.write("src/lib.rs", "fn f() {}\n");
    env.git(&["add", "a,b:c.txt", "src/lib.rs"]);
    env
}

#[test]
fn json_report_matches_its_schema() {
    let env = mixed();
    let (code, report) = json(&env, &[]);
    assert_eq!(code, 1);
    let validator = schema("check-report.schema.json");
    let errors: Vec<String> = validator
        .iter_errors(&report)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:?}\n{report:#}");
    assert_eq!(
        outcomes(&report),
        with_tool_calls_na(&[
            ("changelog-noted", "fail"),
            ("docs-reviewed", "n/a"),
            ("lock-untouched", "pass"),
            ("no-full-disk", "fail"),
            ("secrets-in-config", "error"),
        ])
    );
    assert_eq!(
        report["counts"],
        serde_json::json!({"pass": 1, "fail": 2, "error": 1, "n/a": 1 + tool_call_directives().len()})
    );
    assert_eq!(report["change"], "staged");
    assert_eq!(report["files"], 2);
    let fingerprint = report["fingerprint"].as_str().expect("fingerprint");
    assert!(
        fingerprint.len() == 32 && fingerprint.bytes().all(|b| b.is_ascii_hexdigit()),
        "{fingerprint}"
    );
    // The schema rejects what it should (it is not `true`).
    let mut broken = report.clone();
    broken["results"][0]["outcome"] = "maybe".into();
    assert!(!validator.is_valid(&broken));
}

#[test]
fn github_format_is_one_workflow_command_per_finding() {
    let env = mixed();
    let run = check(&env, &["--format", "github"]);
    run.code(1);
    assert_eq!(run.stderr, "");
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(
        lines,
        [
            "::warning file=.swarm/directives/changelog-noted.toml,line=1,title=changelog-noted (fail)::The lesson of changelog-noted%0Afile_modified:CHANGELOG.md: the change touches no path matching `CHANGELOG.md`",
            "::error file=a%2Cb%3Ac.txt,line=2,title=no-full-disk (fail)::The lesson of no-full-disk%0Agrep:100%25:*.txt: 1 added line(s) match `100%25`",
            "::warning file=.swarm/directives/secrets-in-config.toml,line=1,title=secrets-in-config (error)::The lesson of secrets-in-config%0Agrep_tree:password:config/**: no file of the checked snapshot matches `config/**`, so nothing was searched",
        ],
        "{}",
        run.stdout
    );

    // Nothing failed: nothing to say.
    env.git(&["reset", "-q"]);
    env.write("config/settings.toml", "user = \"me\"\n");
    env.git(&["add", "config/settings.toml"]);
    let run = check(&env, &["--format", "github"]);
    run.code(0);
    assert_eq!((run.stdout.as_str(), run.stderr.as_str()), ("", ""));
}

#[test]
fn codequality_format_is_what_gitlab_reads() {
    let env = mixed();
    let run = check(&env, &["--format", "codequality"]);
    run.code(1);
    let issues: Value = serde_json::from_str(&run.stdout).expect("a Code Quality report is JSON");
    let issues = issues.as_array().expect("an array of issues");
    let summary: Vec<(&str, &str, &str, u64)> = issues
        .iter()
        .map(|i| {
            (
                i["check_name"].as_str().expect("check_name"),
                i["severity"].as_str().expect("severity"),
                i["location"]["path"].as_str().expect("path"),
                i["location"]["lines"]["begin"].as_u64().expect("line"),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            (
                "git-swarm/changelog-noted",
                "major",
                ".swarm/directives/changelog-noted.toml",
                1
            ),
            ("git-swarm/no-full-disk", "blocker", "a,b:c.txt", 2),
            (
                "git-swarm/secrets-in-config",
                "major",
                ".swarm/directives/secrets-in-config.toml",
                1
            ),
        ]
    );
    assert_eq!(
        issues[1]["description"],
        "The lesson of no-full-disk — grep:100%:*.txt: 1 added line(s) match `100%`"
    );
    let mut fingerprints: Vec<&str> = issues
        .iter()
        .map(|i| i["fingerprint"].as_str().expect("fingerprint"))
        .collect();
    fingerprints.sort_unstable();
    fingerprints.dedup();
    assert_eq!(fingerprints.len(), issues.len(), "fingerprints are unique");
    // The same change gives the same fingerprints, so GitLab keeps one issue.
    assert_eq!(check(&env, &["--format", "codequality"]).stdout, run.stdout);

    // Nothing failed: an empty report, which GitLab reads as "no issues".
    env.git(&["reset", "-q"]);
    env.write("config/settings.toml", "user = \"me\"\n");
    env.git(&["add", "config/settings.toml"]);
    let run = check(&env, &["--format", "codequality"]);
    run.code(0);
    assert_eq!(run.stdout.trim(), "[]");
}

#[test]
fn sarif_format_is_what_code_scanning_reads() {
    let env = mixed();
    let run = check(&env, &["--format", "sarif"]);
    run.code(1);
    let sarif: Value = serde_json::from_str(&run.stdout).expect("SARIF is JSON");
    assert_eq!(sarif["version"], "2.1.0");
    assert_eq!(sarif["runs"].as_array().map(Vec::len), Some(1));
    let run0 = &sarif["runs"][0];
    assert_eq!(run0["tool"]["driver"]["name"], "git-swarm");
    let rules = run0["tool"]["driver"]["rules"].as_array().expect("rules");
    let rule_ids: Vec<&str> = rules
        .iter()
        .map(|r| r["id"].as_str().expect("rule id"))
        .collect();
    // Every directive checked is a rule, the `n/a` ones too, in id order.
    let mut expected = vec![
        "changelog-noted",
        "docs-reviewed",
        "lock-untouched",
        "no-full-disk",
        "secrets-in-config",
    ];
    expected.extend(tool_call_directives());
    expected.sort_unstable();
    assert_eq!(rule_ids, expected);
    let results = run0["results"].as_array().expect("results");
    let mut seen = Vec::new();
    for r in results {
        let id = r["ruleId"].as_str().expect("ruleId");
        let index = r["ruleIndex"].as_u64().expect("ruleIndex") as usize;
        assert_eq!(rules[index]["id"], id, "ruleIndex points at the rule");
        let level = r["level"].as_str().expect("level");
        assert!(["error", "warning", "note"].contains(&level), "{level}");
        assert!(
            !r["message"]["text"]
                .as_str()
                .expect("message.text")
                .is_empty(),
            "{r:#}"
        );
        let location = &r["locations"][0]["physicalLocation"];
        let uri = location["artifactLocation"]["uri"]
            .as_str()
            .expect("artifactLocation.uri");
        let line = location["region"]["startLine"]
            .as_u64()
            .expect("region.startLine");
        assert!(line >= 1);
        seen.push((id.to_owned(), level.to_owned(), uri.to_owned(), line));
    }
    seen.sort();
    assert_eq!(
        seen,
        [
            (
                "changelog-noted".to_owned(),
                "warning".to_owned(),
                ".swarm/directives/changelog-noted.toml".to_owned(),
                1
            ),
            (
                "no-full-disk".to_owned(),
                "error".to_owned(),
                "a%2Cb%3Ac.txt".to_owned(),
                2
            ),
            (
                "secrets-in-config".to_owned(),
                "warning".to_owned(),
                ".swarm/directives/secrets-in-config.toml".to_owned(),
                1
            ),
        ]
    );
}

// --- --record -------------------------------------------------------------------

fn check_events(env: &TestEnv) -> Vec<Value> {
    let run = env.swarm(&["log", "--kind", "check", "--format", "json"]);
    run.success();
    serde_json::from_str::<Value>(&run.stdout)
        .expect("log json")
        .as_array()
        .expect("array")
        .clone()
}

/// Under `--worktree` the event file `--record` appends to is part of the
/// change; a retry is still the same change, and one violation.
#[test]
fn worktree_retries_record_one_violation() {
    let env = repo();
    directive(
        &env,
        "no-fixme",
        "enforcement = \"enforce\"\nverify = [\"grep:FIXME\"]",
    );
    commit_all(&env, "directives");
    env.write("a.txt", "FIXME one\n");
    for _ in 0..3 {
        check(&env, &["--worktree", "--record"]).code(1);
    }
    assert_eq!(check_events(&env).len(), 1);
    assert!(
        !env.swarm(&["log", "--kind", "escalation"])
            .stdout
            .contains("no-fixme"),
        "a retry must not escalate"
    );
    // A different change is a new violation still.
    env.write("a.txt", "FIXME one\nFIXME two\n");
    check(&env, &["--worktree", "--record"]).code(1);
    assert_eq!(check_events(&env).len(), 2);
}

/// One edit checked in the working tree, then staged and checked again (an
/// agent's harness, then the pre-commit hook) is one change: its working-tree
/// files are named by the blob id git gives them when staged, line endings
/// converted, not by a hash of their bytes. It was two violations, which
/// escalated a `warn` directive after a single mistake.
#[test]
fn an_edit_checked_in_the_worktree_then_staged_is_one_violation() {
    let env = repo();
    directive(&env, "no-fixme", "verify = [\"grep:FIXME\"]");
    commit_all(&env, "directives");
    env.git(&["config", "core.autocrlf", "true"]);
    env.write("a.txt", "FIXME one\r\nmore\r\n");
    check(&env, &["--worktree", "--record"]).success();
    env.git(&["add", "a.txt"]);
    let staged = check(&env, &["--staged", "--record"]);
    staged.success();
    assert!(!staged.stderr.contains("recorded"), "{}", staged.snapshot());
    assert_eq!(check_events(&env).len(), 1);
    assert_eq!(
        json(&env, &["--worktree"]).1["fingerprint"],
        json(&env, &["--staged"]).1["fingerprint"]
    );
    assert!(
        !env.swarm(&["log", "--kind", "escalation"])
            .stdout
            .contains("no-fixme"),
        "one edit must not escalate"
    );
}

#[test]
fn record_appends_one_event_per_failing_directive_and_change() {
    let env = repo();
    directive(
        &env,
        "enforced-rule",
        "enforcement = \"enforce\"\nverify = [\"grep:BAD:*.txt\"]",
    );
    directive(&env, "warned-rule", "verify = [\"grep:BAD:*.txt\"]");
    directive(
        &env,
        "passing-rule",
        "enforcement = \"enforce\"\nverify = [\"grep:NEVER:*.txt\"]",
    );
    directive(
        &env,
        "erring-rule",
        "enforcement = \"enforce\"\nverify = [\"grep_tree:x:nowhere/**\"]",
    );
    commit_all(&env, "directives");
    env.write("a.txt", "BAD\n");
    env.git(&["add", "a.txt"]);
    let (_, report) = json(&env, &[]);
    let fingerprint = report["fingerprint"]
        .as_str()
        .expect("fingerprint")
        .to_owned();

    let run = check(&env, &["--record"]);
    run.code(1);
    assert!(
        run.stderr
            .contains("recorded 2 violation(s) (`git swarm commit` shares them)"),
        "{}",
        run.snapshot()
    );
    let events = check_events(&env);
    let mut recorded: Vec<(String, String, String)> = events
        .iter()
        .map(|e| {
            (
                e["directive"].as_str().expect("directive").to_owned(),
                e["change"].as_str().expect("change").to_owned(),
                e["outcome"].as_str().expect("outcome").to_owned(),
            )
        })
        .collect();
    recorded.sort();
    assert_eq!(
        recorded,
        [
            (
                "enforced-rule".to_owned(),
                fingerprint.clone(),
                "fail".to_owned()
            ),
            (
                "warned-rule".to_owned(),
                fingerprint.clone(),
                "fail".to_owned()
            ),
        ]
    );
    assert!(events.iter().all(|e| e["selection"] == "staged"));

    // The same change again: nothing new (and JSON output stays JSON).
    let (code, _) = json(&env, &["--record"]);
    assert_eq!(code, 1);
    let run = check(&env, &["--record"]);
    assert!(!run.stderr.contains("recorded"), "{}", run.snapshot());
    assert_eq!(check_events(&env).len(), 2);

    // A different change is a new violation.
    env.write("a.txt", "BAD\nBAD again\n");
    env.git(&["add", "a.txt"]);
    check(&env, &["--record"]).code(1);
    let events = check_events(&env);
    assert_eq!(events.len(), 4);
    let fingerprints: std::collections::BTreeSet<&str> = events
        .iter()
        .map(|e| e["change"].as_str().expect("change"))
        .collect();
    assert_eq!(fingerprints.len(), 2, "{events:?}");
}

/// DESIGN §3: "the knowledge used is the `.swarm/` of the snapshot checked".
/// For --staged that snapshot is the index, which `git commit` records; an
/// unstaged edit of a directive must neither switch it off nor on.
#[test]

fn staged_uses_the_directives_in_the_index() {
    let env = TestEnv::initialised();
    let path = ".swarm/directives/no-private-keys.toml";
    let retired = env
        .read(path)
        .replace("status = \"active\"", "status = \"retired\"");
    assert_ne!(retired, env.read(path));
    env.write(path, retired);
    env.write("deploy/key.pem", format!("{KEY}\n"));
    env.git(&["add", "deploy/key.pem"]);
    // The commit would hold the key and the directive still active.
    let run = check(&env, &[]);
    run.code(1);
}

/// SARIF 2.1.0 §3.10.2: `artifactLocation.uri` is a URI reference, so a path
/// with a space, a `%` or a `:` in its first segment must be percent-encoded
/// (RFC 3986); GitHub code scanning resolves it as a URI against the checkout.
#[test]

fn sarif_uris_are_percent_encoded() {
    let env = repo();
    directive(
        &env,
        "no-banned",
        "enforcement = \"enforce\"\nverify = [\"grep:BANNED\"]",
    );
    commit_all(&env, "directive");
    for path in ["notes/my notes 100%.txt", "a:b.txt"] {
        env.write(path, "BANNED\n");
    }
    env.git(&["add", "-A"]);
    let run = check(&env, &["--format", "sarif"]);
    run.code(1);
    let sarif: Value = serde_json::from_str(&run.stdout).expect("SARIF is JSON");
    let mut uris: Vec<&str> = sarif["runs"][0]["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| {
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                .as_str()
                .expect("uri")
        })
        .collect();
    uris.sort();
    assert_eq!(uris, ["a%3Ab.txt", "notes/my%20notes%20100%25.txt"]);
}

/// A lesson usually names what it forbids, so a `grep` without a glob finds
/// the directive's own file (its `lesson` and `verify` lines) in the change
/// that adds it: with the hooks installed, the directive blocks its own commit.
#[test]

fn a_new_directive_does_not_fail_on_its_own_file() {
    let env = repo();
    env.swarm(&[
        "add",
        "--lesson",
        "Leave no FIXME marker in committed code",
        "--agents",
        "coder",
        "--verify",
        "grep:FIXME",
        "--enforcement",
        "enforce",
    ])
    .success();
    env.git(&["add", ".swarm"]);
    let (code, report) = json(&env, &[]);
    assert_eq!(code, 0, "{report:#}");
}

/// With `core.autocrlf=true` (git for Windows' default) the blobs hold LF and
/// the files on disk CRLF; `git diff` compares them after its clean
/// conversion, so appending a line adds one line.
#[test]

fn worktree_added_lines_follow_autocrlf_like_git_diff() {
    let env = repo();
    env.git(&["config", "core.autocrlf", "true"]);
    directive(
        &env,
        "no-todo",
        "enforcement = \"enforce\"\nverify = [\"grep:TODO:*.txt\"]",
    );
    env.write("a.txt", "old TODO\r\nline 2\r\n");
    commit_all(&env, "base");
    env.write("a.txt", "old TODO\r\nline 2\r\nline 3\r\n");
    let diff = env.git(&["diff", "-U0", "--no-color", "a.txt"]);
    assert!(
        diff.ends_with("@@ -2,0 +3 @@ line 2\n+line 3\n"),
        "git adds one line:\n{diff}"
    );
    let (code, report) = json(&env, &["--worktree"]);
    assert_eq!(
        (code, findings(&report, "no-todo")),
        (0, vec![]),
        "{report:#}"
    );
}

/// A staged check of a repository whose `.swarm/` is not in the index says
/// so: the commit would carry no directive.
#[test]
fn a_staged_check_without_staged_directives_says_so() {
    let env = TestEnv::new();
    env.swarm(&["init"]).success();
    env.write("a.txt", "a\n");
    env.git(&["add", "a.txt"]);
    let run = check(&env, &[]);
    run.success();
    assert!(
        run.stderr.contains("warning: no directive is staged"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("hint: `git add .swarm`"),
        "{}",
        run.stderr
    );
    env.git(&["add", ".swarm"]);
    assert!(!check(&env, &[]).stderr.contains("no directive is staged"));
}

/// A directive file left in conflict by a stopped merge has no staged
/// version: `check --staged` refuses with the file named (it used to drop the
/// directive without a word), and the hook's lenient mode says so and checks
/// the rest. The conflicted paths are reported as checked by name only.
#[test]
fn a_directive_file_in_merge_conflict_is_reported_not_dropped() {
    let env = repo();
    directive(
        &env,
        "no-todo",
        "enforcement = \"enforce\"\nverify = [\"grep:TODO\"]",
    );
    commit_all(&env, "base");
    env.git(&["checkout", "-q", "-b", "side"]);
    directive(
        &env,
        "no-todo",
        "enforcement = \"enforce\"\nverify = [\"grep:TODO|FIXME\"]",
    );
    commit_all(&env, "side");
    env.git(&["checkout", "-q", "-"]);
    directive(
        &env,
        "no-todo",
        "enforcement = \"enforce\"\nverify = [\"grep:TODO|XXX\"]",
    );
    commit_all(&env, "main");
    env.merge_stopping_on_conflict("side");
    env.write("src/a.rs", "// TODO\n");
    env.git(&["add", "src/a.rs"]);

    let run = check(&env, &["--staged"]);
    run.code(2);
    assert!(
        run.stderr.contains(
            ".swarm/directives/no-todo.toml: error: the file has an unresolved merge conflict"
        ),
        "{}",
        run.snapshot()
    );
    assert!(
        run.stderr
            .contains("warning: 1 path(s) have unresolved merge conflicts"),
        "{}",
        run.snapshot()
    );
    let hook = env.swarm(&["hook", "pre-commit"]);
    hook.success();
    assert!(
        hook.stderr.contains("unresolved merge conflict")
            && hook.stderr.contains("those directives were not checked"),
        "{}",
        hook.snapshot()
    );
}

/// The caches a check keeps in the git dir (parsed directives of a tree,
/// `grep_tree` results) are checksummed: a damaged byte anywhere in them is
/// a cache miss, never a different answer.
#[test]
fn damaged_check_caches_change_no_answer() {
    let env = repo();
    directive(
        &env,
        "no-todo",
        "enforcement = \"enforce\"\nverify = [\"grep:TODO\", \"grep_tree:FIXME:src/**\"]",
    );
    env.write("src/a.rs", "// FIXME later\n");
    commit_all(&env, "base");
    env.write("src/a.rs", "// FIXME later\n// TODO now\n");
    commit_all(&env, "change");
    let args = ["--commit", "HEAD"];
    let (code, good) = json(&env, &args);
    assert_eq!(code, 1, "{good:#}");
    let mut files = Vec::new();
    for dir in ["trees", "grep-tree"] {
        if let Ok(listing) = std::fs::read_dir(env.path(&format!(".git/swarm/{dir}"))) {
            files.extend(listing.map(|e| e.expect("entry").path()));
        }
    }
    let caches: Vec<_> = std::fs::read_dir(env.path(".git/swarm"))
        .expect("git dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.is_file() && !p.ends_with("index"))
        .chain(files)
        .filter(|p| p.is_file())
        .collect();
    assert!(caches.len() >= 2, "caches written: {caches:?}");
    for file in &caches {
        let bytes = std::fs::read(file).expect("cache");
        for i in 0..16 {
            let at = i * (bytes.len() - 1) / 15;
            let mut damaged = bytes.clone();
            damaged[at] ^= 0x04;
            std::fs::write(file, &damaged).expect("write");
            assert_eq!(
                json(&env, &args),
                (code, good.clone()),
                "{} damaged at {at}",
                file.display()
            );
        }
        std::fs::write(file, &bytes).expect("restore");
    }
}

/// Warnings about the change itself (a path with an unresolved conflict) and
/// about the evaluation (untrusted tool predicates, skipped) reach every
/// format: JSON's `warnings`, a `::warning` workflow command with the hint,
/// SARIF's tool execution notifications. They used to go to stderr alone, so
/// a CI job reading JSON or annotations never saw them.
#[test]
fn warnings_reach_the_json_github_and_sarif_reports() {
    let env = repo();
    directive(
        &env,
        "no-todo",
        "enforcement = \"enforce\"\nverify = [\"grep:TODO\", \"tool:git diff --cached --check\"]",
    );
    env.write("src/a.rs", "base\n");
    commit_all(&env, "base");
    env.git(&["checkout", "-q", "-b", "side"]);
    env.write("src/a.rs", "side\n");
    commit_all(&env, "side");
    env.git(&["checkout", "-q", "-"]);
    env.write("src/a.rs", "main\n");
    commit_all(&env, "main");
    env.merge_stopping_on_conflict("side");

    let conflict = "1 path(s) have unresolved merge conflicts: only their names were checked";
    let untrusted =
        "tool predicates were skipped: this repository's set of tool predicates is not trusted";

    let (code, report) = json(&env, &["--staged"]);
    assert_eq!(code, 0, "{report:#}");
    let warnings: Vec<&str> = report["warnings"]
        .as_array()
        .expect("warnings")
        .iter()
        .map(|w| w.as_str().expect("a warning is a string"))
        .collect();
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(warnings[0].starts_with(conflict), "{warnings:?}");
    assert!(warnings[1].starts_with(untrusted), "{warnings:?}");

    let run = check(&env, &["--staged", "--format", "github"]);
    run.success();
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert!(
        lines[0].starts_with(&format!("::warning title=git-swarm::{conflict}"))
            && lines[0].contains("%0Ahint: git commits nothing until they are resolved"),
        "{}",
        run.snapshot()
    );
    assert!(
        lines[1].starts_with(&format!("::warning title=git-swarm::{untrusted}"))
            && lines[1]
                .ends_with("%0Ahint: run `git swarm trust` once you have read the tool predicates"),
        "{}",
        run.snapshot()
    );

    let run = check(&env, &["--staged", "--format", "sarif"]);
    run.success();
    let sarif: Value = serde_json::from_str(&run.stdout).expect("SARIF is JSON");
    let notes = &sarif["runs"][0]["invocations"][0];
    assert_eq!(notes["executionSuccessful"], true);
    let texts: Vec<&str> = notes["toolExecutionNotifications"]
        .as_array()
        .expect("notifications")
        .iter()
        .map(|n| {
            assert_eq!(n["level"], "warning");
            n["message"]["text"].as_str().expect("text")
        })
        .collect();
    assert_eq!(texts, warnings);

    // Text: on stderr, each with its own hint (the trust hint only on the
    // trust warning).
    let run = check(&env, &["--staged"]);
    run.success();
    let stderr = &run.stderr;
    let at = stderr.find(conflict).expect("conflict warning");
    let next = &stderr[at..];
    assert!(
        next.lines()
            .nth(1)
            .is_some_and(|l| l.contains("hint: git commits nothing")),
        "{}",
        run.snapshot()
    );
    assert_eq!(
        stderr.matches("git swarm trust` once").count(),
        1,
        "{}",
        run.snapshot()
    );
}

/// A predicate lists its first 1,000 findings and counts the rest: a
/// generated file of many matching lines made a report of gigabytes (SARIF
/// took 2 GB of memory for 200,000 lines), and code scanning refuses a run of
/// more than 25,000 results, so SARIF stops there and says what it left out.
#[test]
fn findings_are_listed_up_to_a_cap_and_counted_beyond_it() {
    let env = repo();
    directive(
        &env,
        "no-todo",
        "enforcement = \"enforce\"\nverify = [\"grep:TODO\"]",
    );
    commit_all(&env, "directive");
    let lines: String = (1..=1200).map(|n| format!("TODO {n}\n")).collect();
    env.write("many.txt", &lines);
    env.git(&["add", "many.txt"]);

    let (code, report) = json(&env, &["--staged"]);
    assert_eq!(code, 1);
    let p = &result(&report, "no-todo")["predicates"][0];
    assert_eq!(p["message"], "1200 added line(s) match `TODO`");
    assert_eq!(p["findings"].as_array().map(Vec::len), Some(1000));
    assert_eq!(p["findings"][999]["line"], 1000);
    assert_eq!(p["omitted"], 200);

    let run = check(&env, &["--staged"]);
    run.code(1);
    assert!(
        run.stdout.contains("        … and 1180 more\n"),
        "{}",
        run.snapshot()
    );

    let run = check(&env, &["--staged", "--format", "github"]);
    assert_eq!(run.stdout.lines().count(), 1000);

    // 26 directives of 1,000 findings each: 26,000 results, 25,000 kept.
    for n in 0..25 {
        directive(
            &env,
            &format!("no-todo-{n:02}"),
            "enforcement = \"enforce\"\nverify = [\"grep:TODO\"]",
        );
    }
    let run = check(&env, &["--staged", "--format", "sarif"]);
    run.code(1);
    let sarif: Value = serde_json::from_str(&run.stdout).expect("SARIF is JSON");
    let r = &sarif["runs"][0];
    assert_eq!(r["results"].as_array().map(Vec::len), Some(25_000));
    let notes: Vec<&str> = r["invocations"][0]["toolExecutionNotifications"]
        .as_array()
        .expect("notifications")
        .iter()
        .filter_map(|n| n["message"]["text"].as_str())
        .collect();
    assert_eq!(
        notes,
        [
            "5200 finding(s) not listed: a predicate lists at most 1000; the result messages count them all",
            "1000 result(s) left out: code scanning takes at most 25000 a run",
        ]
    );
}

/// A lesson holding a raw ESC and a C1 CSI (TOML escapes, as a pulled
/// branch could write them) no longer passes the gate, whose one-line
/// fields refuse control characters: `check` refuses the directive (exit
/// 2), naming the field and the character, and no control character
/// reaches the terminal.
#[test]
fn control_characters_of_a_failing_directive_are_refused_never_shown() {
    let env = repo();
    env.write(
        ".swarm/directives/escape.toml",
        "id = \"escape\"\nlesson = \"Looks harmless \\u001b]0;pwned\\u0007 and \\u009b2J until shown\"\napplies_to_agents = [\"coder\"]\nverify = [\"grep:TODO\"]\n",
    );
    env.write("src/a.rs", "// TODO\n");
    env.git(&["add", "-A"]);
    let run = check(&env, &["--staged"]);
    run.code(2);
    for text in [&run.stdout, &run.stderr] {
        assert!(
            !text.contains(['\u{1b}', '\u{7}', '\u{9b}']),
            "a raw control character reached the terminal:\n{}",
            run.snapshot()
        );
    }
    assert!(
        run.stderr.contains(
            ".swarm/directives/escape.toml:2:10: error: lesson contains an escape (U+001B) at character 16"
        ),
        "{}",
        run.snapshot()
    );
}

/// A directive whose glob nests `{…}` 125 deep passed `validate` and
/// `add`, then made every `check` and the pre-commit hook panic in globset
/// (exit 101), blocking every commit. Now the file is a problem with its
/// place; `check` refuses it as bad input (exit 2), and the hook checks it
/// as written: what cannot be evaluated is an error, which blocks for
/// `enforce` and only warns for `warn`.
#[test]
fn a_directive_check_cannot_evaluate_is_an_error_never_a_panic() {
    let env = repo();
    let nested = format!("{}b{}", "{a,".repeat(125), "}".repeat(125));
    directive(
        &env,
        "nested",
        &format!("enforcement = \"enforce\"\nverify = [\"file_modified:{nested}\"]"),
    );
    directive(
        &env,
        "huge-regex",
        "enforcement = \"warn\"\nverify = ['grep:\\pL{900}']\npaths = [\"src/{a,{b,{c,{d,{e,{f,{g,{h,{i,j}}}}}}}}}\", \"src/\"]",
    );
    env.write("src/a.rs", "fn main() {}\n");
    commit_all(&env, "bad directives");

    let run = check(&env, &["--commit", "HEAD"]);
    run.code(2);
    assert!(!run.stderr.contains("panicked"), "{}", run.snapshot());
    for expected in [
        ".swarm/directives/nested.toml:5:50: error: glob `{a,{a,{a,{a,{a,{a,{a,{a,{a,{a,{a,{a,{a,{…` nests `{…}` more than 8 deep (at character 25)",
        ".swarm/directives/huge-regex.toml:5:11: error: `grep` regex `\\pL{900}` is too large to compile",
        ".swarm/directives/huge-regex.toml:6:39: error: glob `src/{a,{b,{c,{d,{e,{f,{g,{h,{i,j}}}}}}}}…` nests `{…}` more than 8 deep (at character 29)",
    ] {
        assert!(
            run.stderr.lines().any(|l| l.starts_with(expected)),
            "no `{expected}` in:\n{}",
            run.snapshot()
        );
    }

    // The hook, through a real commit: blocked by the `enforce` directive.
    env.swarm(&["hooks", "install"]).success();
    env.write("src/b.rs", "fn b() {}\n");
    env.git(&["add", "src/b.rs"]);
    let mut commit = env.command("git", &env.root);
    commit.args(["commit", "-q", "-m", "blocked"]);
    let out = commit.output().expect("git commit");
    let shown = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(1), "{shown}");
    assert!(!shown.contains("panicked"), "{shown}");
    assert!(shown.contains("ERROR nested [enforce, medium]"), "{shown}");
    assert!(shown.contains("blocked by 1 directive: nested"), "{shown}");
    assert!(
        shown.contains("problem(s) in directives checked as written"),
        "{shown}"
    );

    // As `warn` (committed past the hook, which refuses a commit that
    // brings a broken directive), it is reported and the commit goes through.
    directive(
        &env,
        "nested",
        &format!("enforcement = \"warn\"\nverify = [\"file_modified:{nested}\"]"),
    );
    env.git(&["reset", "-q", "--", "src/b.rs"]);
    let mut commit = env.command("git", &env.root);
    commit
        .args(["commit", "-q", "-m", "warn it"])
        .env("GIT_SWARM_SKIP", "1");
    assert!(commit.status().expect("git commit").success());
    env.git(&["add", "src/b.rs"]);
    let mut commit = env.command("git", &env.root);
    commit.args(["commit", "-q", "-m", "warned"]);
    let out = commit.output().expect("git commit");
    let shown = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{shown}");
    assert!(shown.contains("ERROR nested [warn, medium]"), "{shown}");
}

/// A pull request branched before the knowledge existed has no `.swarm/`:
/// checked on its own it is checked against no directive, which is said on
/// stderr in every format (and by the hook), never a silent pass;
/// `--knowledge main` checks it with the base branch's directives.
#[test]
fn knowledge_from_another_revision_and_a_warning_on_zero_directives() {
    let env = TestEnv::new();
    env.write("README.md", "old history\n");
    commit_all(&env, "before the knowledge");
    env.git(&["branch", "old-pr"]);
    env.swarm(&["init"]).success();
    directive(
        &env,
        "no-todo",
        "enforcement = \"enforce\"\nverify = [\"grep:TODO:*.txt\"]",
    );
    commit_all(&env, "knowledge");
    env.git(&["checkout", "-q", "old-pr"]);
    env.write("work.txt", "TODO finish\n");
    commit_all(&env, "pull request");

    let range = "main...old-pr";
    for format in ["text", "json", "github", "sarif"] {
        let run = check(&env, &["--range", range, "--format", format]);
        assert_eq!(run.code, 0, "{format}: {}", run.snapshot());
        assert!(
            run.stderr
                .contains("warning: no active directive in `old-pr`'s .swarm/directives/")
                && run.stderr.contains("--knowledge REV"),
            "{format}: {}",
            run.snapshot()
        );
    }
    let (_, report) = json(&env, &["--range", range]);
    assert!(
        report["warnings"][0]
            .as_str()
            .is_some_and(|w| w.contains("checked against none")),
        "{report:#}"
    );

    let run = check(&env, &["--range", range, "--knowledge", "main"]);
    run.code(1);
    assert!(run.stdout.contains("FAIL  no-todo"), "{}", run.snapshot());
    assert!(
        !run.stderr.contains("no active directive"),
        "{}",
        run.snapshot()
    );
    // The same with a commit, and a knowledge revision that is no revision.
    check(&env, &["--commit", "HEAD", "--knowledge", "main"]).code(1);
    let run = check(&env, &["--commit", "HEAD", "--knowledge", "nope"]);
    run.code(2);
    assert!(
        run.stderr.contains("`nope` does not name a revision"),
        "{}",
        run.snapshot()
    );

    // The pre-commit hook says it too, once no directive is left.
    env.git(&["checkout", "-q", "main"]);
    env.swarm(&["hooks", "install"]).success();
    env.git(&["rm", "-q", "-r", ".swarm/directives"]);
    env.write("more.txt", "more\n");
    env.git(&["add", "more.txt"]);
    let commit = env
        .command("git", &env.root)
        .args(["commit", "-q", "-m", "more"])
        .output()
        .expect("git commit");
    assert!(commit.status.success());
    assert!(
        String::from_utf8_lossy(&commit.stderr).contains("no active directive in the index"),
        "{}",
        String::from_utf8_lossy(&commit.stderr)
    );
}
