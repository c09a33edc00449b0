//! git is the reference: on generated repositories with adds, edits,
//! deletes, renames, binary files, CRLF, a non-UTF-8 path, files in new
//! untracked directories and a submodule entry, the change git-swarm reads
//! agrees with `git diff --name-only` / `--name-status` (paths), with
//! `git diff -U0` (added lines), and `grep_tree` with `git grep`.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};

use common::TestEnv;
use serde_json::Value;

#[cfg(unix)]
fn odd_name() -> std::ffi::OsString {
    use std::os::unix::ffi::OsStringExt;
    std::ffi::OsString::from_vec(b"odd-\xff-name.txt".to_vec())
}

/// Lossy text of a path as git prints it with -z.
fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn git_bytes(env: &TestEnv, args: &[&str]) -> Vec<u8> {
    let out = env
        .command("git", &env.root)
        .args(args)
        .output()
        .expect("git");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// A repository whose first commit has a bit of everything, and a second
/// state (staged, then committed) that changes all of it.
fn fixture() -> TestEnv {
    let env = TestEnv::initialised();
    env.write("a.txt", "one\ntwo\nthree\nfour\nfive\n");
    env.write("b.txt", "to be deleted\n");
    env.write(
        "old/name.txt",
        "alpha\nbeta\ngamma\ndelta\nepsilon\nzeta\neta\ntheta\n",
    );
    env.write("bin.dat", b"\x00\x01\x02binary\n");
    env.write("crlf.txt", "first\r\nsecond\r\n");
    env.write("docs/guide.md", "# Guide\nTODO: write\n");
    #[cfg(unix)]
    std::fs::write(env.root.join(odd_name()), "odd\n").expect("odd file");
    env.git(&["add", "-A"]);
    stage_submodule(&env, "sub");
    // An unpopulated submodule is an empty directory; without it `add -A` would stage a deletion.
    std::fs::create_dir_all(env.path("sub")).expect("mkdir sub");
    env.git(&["commit", "-q", "-m", "base"]);

    // The change.
    env.write("a.txt", "one\nTWO\nthree\nfour\nfive\nsix TODO\n");
    std::fs::remove_file(env.path("b.txt")).expect("rm b");
    std::fs::create_dir_all(env.path("new")).expect("mkdir");
    std::fs::rename(env.path("old/name.txt"), env.path("new/name.txt")).expect("mv");
    env.write(
        "new/name.txt",
        "alpha\nbeta\ngamma\ndelta\nepsilon\nzeta\neta\ntheta\niota TODO\n",
    );
    env.write("bin.dat", b"\x00\x01\x02binary changed\n");
    env.write("crlf.txt", "first\r\nsecond\r\nthird\r\n");
    env.write("fresh/deep/dir/file.txt", "brand new\nTODO here\n");
    #[cfg(unix)]
    std::fs::write(env.root.join(odd_name()), "odd\nmore\n").expect("odd file");
    env.git(&["add", "-A"]);
    stage_submodule(&env, "sub2");
    env
}

/// Stages a submodule entry `sub` pointing at a new commit (made from the index's tree).
fn stage_submodule(env: &TestEnv, message: &str) {
    let commit = env.git(&[
        "commit-tree",
        "-m",
        message,
        env.git(&["write-tree"]).trim(),
    ]);
    env.git(&[
        "update-index",
        "--add",
        "--cacheinfo",
        &format!("160000,{},sub", commit.trim()),
    ]);
}

fn ours(env: &TestEnv, selection: &[&str]) -> Vec<Value> {
    let mut args = vec!["changes", "--lines"];
    args.extend_from_slice(selection);
    let run = env.swarm_with(&args, &[], None);
    run.success();
    serde_json::from_str::<Value>(&run.stdout)
        .expect("json")
        .as_array()
        .expect("array")
        .clone()
}

/// (new paths, rename sources) from `git diff --name-status -z -M`.
fn git_paths(env: &TestEnv, diff_args: &[&str]) -> (BTreeSet<String>, BTreeSet<String>) {
    let mut args = vec!["-M"];
    args.extend_from_slice(diff_args);
    git_paths_as_configured(env, &args)
}

/// (new paths, rename sources) from `git diff --name-status -z`, renames
/// as the repository's configuration sets them.
fn git_paths_as_configured(
    env: &TestEnv,
    diff_args: &[&str],
) -> (BTreeSet<String>, BTreeSet<String>) {
    let mut args = vec!["diff", "--name-status", "-z", "--no-ext-diff"];
    args.extend_from_slice(diff_args);
    let out = git_bytes(env, &args);
    let mut fields = out.split(|&b| b == 0).filter(|f| !f.is_empty());
    let (mut paths, mut sources) = (BTreeSet::new(), BTreeSet::new());
    while let Some(status) = fields.next() {
        let first = lossy(fields.next().expect("path"));
        if status.starts_with(b"R") || status.starts_with(b"C") {
            sources.insert(first);
            paths.insert(lossy(fields.next().expect("new path")));
        } else {
            paths.insert(first);
        }
    }
    (paths, sources)
}

/// path → added (line, text) from `git diff -U0 -M`.
fn git_added(env: &TestEnv, diff_args: &[&str]) -> BTreeMap<String, Vec<(u64, String)>> {
    let mut args = vec!["-M"];
    args.extend_from_slice(diff_args);
    git_added_as_configured(env, &args)
}

/// path → added (line, text) from `git diff -U0`, renames as configured.
fn git_added_as_configured(
    env: &TestEnv,
    diff_args: &[&str],
) -> BTreeMap<String, Vec<(u64, String)>> {
    let mut args = vec![
        "-c",
        "core.quotePath=false",
        "diff",
        "-U0",
        "--no-color",
        "--no-ext-diff",
        "--src-prefix=a/",
        "--dst-prefix=b/",
    ];
    args.extend_from_slice(diff_args);
    let text = lossy(&git_bytes(env, &args));
    let mut out: BTreeMap<String, Vec<(u64, String)>> = BTreeMap::new();
    let (mut file, mut next) = (String::new(), 0u64);
    for line in text.split_inclusive('\n') {
        let line = line.strip_suffix('\n').unwrap_or(line);
        if let Some(p) = line.strip_prefix("+++ ") {
            file = p.strip_prefix("b/").unwrap_or(p).to_owned();
            if file != "/dev/null" {
                out.entry(file.clone()).or_default();
            }
        } else if line.starts_with("@@") {
            let plus = line
                .split(' ')
                .find(|w| w.starts_with('+'))
                .expect("hunk header");
            next = plus[1..]
                .split(',')
                .next()
                .expect("start")
                .parse()
                .expect("number");
        } else if let Some(added) = line.strip_prefix('+') {
            out.entry(file.clone())
                .or_default()
                .push((next, added.to_owned()));
            next += 1;
        }
    }
    out
}

fn compare(env: &TestEnv, selection: &[&str], diff_args: &[&str]) {
    let (our_paths, our_sources) = agrees_with_git(env, selection, diff_args);
    assert!(
        our_paths.contains("new/name.txt") && our_sources.contains("old/name.txt"),
        "the rename was detected: {our_paths:?}, from {our_sources:?}"
    );
    assert!(our_paths.contains("sub"), "the submodule entry is a change");
    assert!(our_paths.contains("bin.dat"), "binary files are changes");
}

/// Asserts that the change `selection` selects has the paths, rename
/// sources and added lines `git diff` gives for `diff_args`; returns the
/// paths and the rename sources.
fn agrees_with_git(
    env: &TestEnv,
    selection: &[&str],
    diff_args: &[&str],
) -> (BTreeSet<String>, BTreeSet<String>) {
    let mut args = vec!["-M"];
    args.extend_from_slice(diff_args);
    agrees_with_git_as_configured(env, selection, &args)
}

/// As [`agrees_with_git`], against `git diff` with renames as the
/// repository's configuration sets them (`diff.renames`, `diff.renameLimit`).
fn agrees_with_git_as_configured(
    env: &TestEnv,
    selection: &[&str],
    diff_args: &[&str],
) -> (BTreeSet<String>, BTreeSet<String>) {
    let files = ours(env, selection);
    let our_paths: BTreeSet<String> = files
        .iter()
        .map(|f| f["path"].as_str().expect("path").to_owned())
        .collect();
    let our_sources: BTreeSet<String> = files
        .iter()
        .filter_map(|f| f["old_path"].as_str().map(str::to_owned))
        .collect();
    let (paths, sources) = git_paths_as_configured(env, diff_args);
    assert_eq!(
        our_paths, paths,
        "paths differ from git diff --name-status {diff_args:?}"
    );
    assert_eq!(
        our_sources, sources,
        "rename sources differ from git diff {diff_args:?}"
    );

    let reference = git_added_as_configured(env, diff_args);
    for f in &files {
        let path = f["path"].as_str().expect("path");
        let ours: Vec<(u64, String)> = f["added"]
            .as_array()
            .expect("added")
            .iter()
            .map(|l| {
                (
                    l[0].as_u64().expect("line"),
                    l[1].as_str().expect("text").to_owned(),
                )
            })
            .collect();
        // git renders a submodule's new commit as a pseudo-line; it is not file
        // content, and git-swarm gives a submodule entry no added lines.
        let theirs: Vec<(u64, String)> = reference
            .get(path)
            .cloned()
            .unwrap_or_default()
            .into_iter()
            .filter(|(_, text)| !(path == "sub" && text.starts_with("Subproject commit ")))
            .collect();
        assert_eq!(
            ours, theirs,
            "added lines of {path} differ from git diff -U0 {diff_args:?}"
        );
    }
    (our_paths, our_sources)
}

#[test]
fn staged_change_agrees_with_git_diff_cached() {
    let env = fixture();
    compare(&env, &["--staged"], &["--cached"]);
}

#[test]
fn range_and_commit_agree_with_git_diff() {
    let env = fixture();
    env.git(&["commit", "-q", "-m", "change"]);
    compare(&env, &["--range", "HEAD~1..HEAD"], &["HEAD~1", "HEAD"]);
    compare(&env, &["--commit", "HEAD"], &["HEAD~1", "HEAD"]);
    env.git(&["branch", "side", "HEAD~1"]);
    compare(&env, &["--range", "side...HEAD"], &["side...HEAD"]);
}

#[test]
fn worktree_change_lists_untracked_files_one_by_one() {
    let env = fixture();
    env.git(&["commit", "-q", "-m", "change"]);
    env.write("a.txt", "one\nTWO\nthree\nfour\nfive\nsix TODO\nseven\n");
    env.write("untracked/nested/deeper/x.txt", "x\n");
    env.write("untracked/nested/y.txt", "y\n");
    env.write(".gitignore", "ignored/\n");
    env.write("ignored/z.txt", "z\n");
    let files = ours(&env, &["--worktree"]);
    let paths: BTreeSet<&str> = files
        .iter()
        .map(|f| f["path"].as_str().expect("path"))
        .collect();
    let mut expected: BTreeSet<String> = git_paths(&env, &["HEAD"]).0;
    for p in env
        .git(&["ls-files", "--others", "--exclude-standard"])
        .lines()
    {
        expected.insert(p.to_owned());
    }
    assert_eq!(
        paths,
        expected.iter().map(String::as_str).collect::<BTreeSet<_>>()
    );
    assert!(paths.contains("untracked/nested/deeper/x.txt") && !paths.contains("ignored/z.txt"));
    let a = files.iter().find(|f| f["path"] == "a.txt").expect("a.txt");
    assert_eq!(a["added"], serde_json::json!([[7, "seven"]]));
}

/// `grep_tree` finds what `git grep` finds, in the index and in a revision.
#[test]
fn grep_tree_agrees_with_git_grep() {
    let env = fixture();
    env.write(
        ".swarm/directives/no-todo.toml",
        "id = \"no-todo\"\nlesson = \"Leave no TODO in text files of the tree\"\napplies_to_agents = [\"coder\"]\nverify = [\"grep_tree:TODO:*.{txt,md}\"]\n",
    );
    env.git(&["add", ".swarm/directives/no-todo.toml"]);
    let findings = |run: &common::Run| -> BTreeSet<(String, u64)> {
        let v: Value = serde_json::from_str(&run.stdout).expect("json");
        let r = v["results"]
            .as_array()
            .expect("results")
            .iter()
            .find(|r| r["id"] == "no-todo")
            .expect("no-todo result")
            .clone();
        r["predicates"][0]["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .map(|f| {
                (
                    f["path"].as_str().expect("path").to_owned(),
                    f["line"].as_u64().expect("line"),
                )
            })
            .collect()
    };
    let git_grep = |extra: &[&str]| -> BTreeSet<(String, u64)> {
        let mut args = vec!["grep", "-n", "-I", "--no-color", "-e", "TODO"];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--", "*.txt", "*.md"]);
        let out = env
            .command("git", &env.root)
            .args(&args)
            .output()
            .expect("git grep");
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| {
                let l = l.strip_prefix("HEAD:").unwrap_or(l);
                let mut parts = l.splitn(3, ':');
                (
                    parts.next().expect("path").to_owned(),
                    parts.next().expect("line").parse().expect("n"),
                )
            })
            .collect()
    };
    let staged = env.swarm(&[
        "check",
        "--staged",
        "--directive",
        "no-todo",
        "--format",
        "json",
    ]);
    staged.code(0); // the directive is `warn`
    let expected = git_grep(&["--cached"]);
    assert!(!expected.is_empty());
    assert_eq!(findings(&staged), expected);

    env.git(&["add", "-A"]);
    env.git(&["commit", "-q", "-m", "change"]);
    let range = env.swarm(&[
        "check",
        "--range",
        "HEAD~1..HEAD",
        "--directive",
        "no-todo",
        "--format",
        "json",
    ]);
    assert_eq!(findings(&range), git_grep(&["HEAD"]));
}

/// Zero files matched is an error, not a vacuous pass.
#[test]
fn grep_tree_with_no_matching_file_is_an_error() {
    let env = fixture();
    env.write(
        ".swarm/directives/no-secrets-in-config.toml",
        "id = \"no-secrets-in-config\"\nlesson = \"Keep secrets out of the config folder\"\nenforcement = \"enforce\"\napplies_to_agents = [\"coder\"]\nverify = [\"grep_tree:password:config/**\"]\n",
    );
    env.git(&["add", ".swarm/directives"]);
    let run = env.swarm(&["check", "--directive", "no-secrets-in-config"]);
    run.code(1);
    assert!(
        run.stdout.contains("ERROR no-secrets-in-config"),
        "{}",
        run.snapshot()
    );
    assert!(
        run.stdout
            .contains("no file of the checked snapshot matches `config/**`"),
        "{}",
        run.snapshot()
    );
}

/// Changes with no candidate renames take the cache-tree walk instead of
/// gix's generic status; it must agree with git just the same.
#[test]
fn cache_tree_walk_agrees_with_git_diff_cached() {
    let env = fixture();
    env.git(&["commit", "-q", "-m", "change"]);
    // Modifications, a mode change and additions in new folders: no
    // deletion, so no rename to look for.
    env.write("a.txt", "one\nTWO\nthree\nfour\nfive\nsix TODO\nseven\n");
    env.write("fresh/deep/dir/file.txt", "brand new\nTODO here\nmore\n");
    env.write("another/new/file.txt", "x\n");
    env.git(&["add", "-A"]);
    env.git(&["update-index", "--chmod=+x", "crlf.txt"]);
    compare_paths_and_lines(&env);
    env.git(&["commit", "-q", "-m", "more"]);
    // Deletions only, one of a whole folder.
    env.git(&["rm", "-q", "-r", "fresh", "a.txt"]);
    compare_paths_and_lines(&env);
    env.git(&["commit", "-q", "-m", "less"]);
    // Nothing staged at all.
    assert_eq!(ours(&env, &["--staged"]), Vec::<Value>::new());
}

/// A range with no deleted file, or none added, is diffed without the
/// rename tracker; it must agree with git just the same.
#[test]
fn range_with_no_rename_candidates_agrees_with_git_diff() {
    let env = fixture();
    env.git(&["commit", "-q", "-m", "change"]);
    // Modifications, a mode change and additions in new folders.
    env.write("a.txt", "one\nTWO\nthree\nfour\nfive\nsix TODO\nseven\n");
    env.write("fresh/deep/dir/file.txt", "brand new\nTODO here\nmore\n");
    env.git(&["add", "-A"]);
    env.git(&["update-index", "--chmod=+x", "crlf.txt"]);
    env.git(&["commit", "-q", "-m", "more"]);
    let range = ["--range", "HEAD~1..HEAD"];
    let (paths, sources) = agrees_with_git(&env, &range, &["HEAD~1", "HEAD"]);
    assert!(paths.contains("fresh/deep/dir/file.txt") && sources.is_empty());
    // Deletions only, one of a whole folder.
    env.git(&["rm", "-q", "-r", "fresh", "a.txt"]);
    env.git(&["commit", "-q", "-m", "less"]);
    let (paths, _) = agrees_with_git(&env, &range, &["HEAD~1", "HEAD"]);
    assert!(paths.contains("a.txt") && paths.contains("fresh/deep/dir/file.txt"));
    agrees_with_git(&env, &["--commit", "HEAD"], &["HEAD~1", "HEAD"]);
    // Both at once: the rename tracker runs and pairs them.
    env.write("moved.md", "# Guide\nTODO: write\nand more TODO\n");
    env.git(&["rm", "-q", "docs/guide.md"]);
    env.git(&["add", "-A"]);
    env.git(&["commit", "-q", "-m", "both"]);
    let (paths, sources) = agrees_with_git(&env, &range, &["HEAD~1", "HEAD"]);
    assert!(paths.contains("moved.md") && sources.contains("docs/guide.md"));
    agrees_with_git(&env, &["--range", "HEAD~2..HEAD"], &["HEAD~2", "HEAD"]);
}

fn compare_paths_and_lines(env: &TestEnv) {
    let files = ours(env, &["--staged"]);
    let paths: BTreeSet<String> = files
        .iter()
        .map(|f| f["path"].as_str().expect("path").to_owned())
        .collect();
    assert_eq!(paths, git_paths(env, &["--cached"]).0);
    let reference = git_added(env, &["--cached"]);
    for f in &files {
        let path = f["path"].as_str().expect("path");
        let ours: Vec<(u64, String)> = f["added"]
            .as_array()
            .expect("added")
            .iter()
            .map(|l| {
                (
                    l[0].as_u64().expect("line"),
                    l[1].as_str().expect("text").to_owned(),
                )
            })
            .collect();
        assert_eq!(
            ours,
            reference.get(path).cloned().unwrap_or_default(),
            "{path}"
        );
    }
}

/// A merge stopped by conflicts: the unmerged paths are part of the staged
/// change, as `git diff --cached --name-status` lists them (`U`), with no
/// added lines (git shows none), and are reported with the status `unmerged`.
#[test]
fn unmerged_paths_of_a_stopped_merge_agree_with_git_diff_cached() {
    let env = TestEnv::initialised();
    env.write("a.txt", "base\n");
    env.write("b.txt", "base\n");
    env.git(&["add", "-A"]);
    env.git(&["commit", "-q", "-m", "base"]);
    env.git(&["checkout", "-q", "-b", "side"]);
    env.write("a.txt", "side\n");
    env.git(&["commit", "-q", "-am", "side"]);
    env.git(&["checkout", "-q", "-"]);
    env.write("a.txt", "main\n");
    env.write("b.txt", "main\n");
    env.git(&["commit", "-q", "-am", "main"]);
    env.merge_stopping_on_conflict("side");
    env.write("c.txt", "new\n");
    env.git(&["add", "c.txt"]);

    let files = ours(&env, &["--staged"]);
    let paths: BTreeSet<String> = files
        .iter()
        .map(|f| f["path"].as_str().expect("path").to_owned())
        .collect();
    assert_eq!(paths, git_paths(&env, &["--cached"]).0);
    let a = files.iter().find(|f| f["path"] == "a.txt").expect("a.txt");
    assert_eq!(a["status"], "unmerged");
    assert_eq!(a["added"], serde_json::json!([]));
    assert!(!git_added(&env, &["--cached"]).contains_key("a.txt"));
    let c = files.iter().find(|f| f["path"] == "c.txt").expect("c.txt");
    assert_eq!(c["added"], serde_json::json!([[1, "new"]]));
}

/// `n` lines of the same length, named by `tag`: distinct per tag, so that
/// files of different tags share nothing.
fn lines(tag: &str, range: std::ops::Range<usize>) -> String {
    range.map(|i| format!("{tag} line {i:03}\n")).collect()
}

/// Status, path and source of each file of the change, as `changes` lists them.
fn statuses(env: &TestEnv, selection: &[&str]) -> BTreeSet<(String, String, String)> {
    ours(env, selection)
        .iter()
        .map(|f| {
            (
                f["status"].as_str().expect("status").to_owned(),
                f["path"].as_str().expect("path").to_owned(),
                f["old_path"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

/// One commit of renames where pairing matters: git's rules decide which
/// deleted file each added one came from, and so which lines it adds.
fn rename_fixture() -> TestEnv {
    let env = TestEnv::initialised();
    // Two destinations want one source: the better (90%) gets it, the
    // other (60%) is an added file.
    env.write("src/engine.c", lines("engine", 0..20));
    // An identical file is paired before a similar one with the same name.
    env.write("docs/guide.md", lines("guide", 0..20));
    // A base name unique on both sides pairs at 80%, before a 95% match
    // with another name.
    env.write("old/config.rs", lines("config", 0..20));
    // Equal scores (50%): git's order of its candidate matrix decides.
    env.write("x/first.txt", lines("tie", 0..5) + &lines("one", 5..10));
    env.write("y/second.txt", lines("two", 0..5) + &lines("tie", 5..10));
    // Exactly 50% similar: a rename; 40%: a deletion and an addition.
    env.write("b/half.txt", lines("half", 0..10));
    env.write("b/less.txt", lines("less", 0..10));
    // Renamed with two lines edited: only those are added.
    env.write("keep/mod.rs", lines("keep", 0..20));
    env.git(&["add", "-A"]);
    env.git(&["commit", "-q", "-m", "base"]);

    env.git(&[
        "rm", "-q", "-r", "src", "docs", "old", "x", "y", "b", "keep",
    ]);
    env.write(
        "lib/alpha.c",
        lines("engine", 0..12) + &lines("alpha", 12..20),
    );
    env.write(
        "lib/beta.c",
        lines("engine", 0..18) + &lines("beta", 18..20),
    );
    env.write("notes/manual.md", lines("guide", 0..20));
    env.write(
        "other/guide.md",
        lines("guide", 0..19) + &lines("other", 19..20),
    );
    env.write(
        "new/config.rs",
        lines("config", 0..16) + &lines("new", 16..20),
    );
    env.write(
        "new/settings.rs",
        lines("config", 0..19) + &lines("settings", 19..20),
    );
    env.write("z/third.txt", lines("tie", 0..10));
    env.write("c/halved.txt", lines("half", 0..5) + &lines("HALF", 5..10));
    env.write("c/lesser.txt", lines("less", 0..4) + &lines("LESS", 4..10));
    env.write(
        "moved/mod.rs",
        lines("keep", 0..9) + &lines("KEEP", 9..11) + &lines("keep", 11..20),
    );
    env.git(&["add", "-A"]);
    env
}

/// The pairs git makes in [`rename_fixture`] (checked against git too).
const RENAME_PAIRS: &[(&str, &str)] = &[
    ("src/engine.c", "lib/beta.c"),
    ("docs/guide.md", "notes/manual.md"),
    ("old/config.rs", "new/config.rs"),
    ("y/second.txt", "z/third.txt"),
    ("b/half.txt", "c/halved.txt"),
    ("keep/mod.rs", "moved/mod.rs"),
];

#[test]
fn renames_are_paired_as_git_pairs_them() {
    let env = rename_fixture();
    let check = |selection: &[&str], diff_args: &[&str]| {
        let (_, sources) = agrees_with_git(&env, selection, diff_args);
        let pairs: BTreeSet<(String, String)> = statuses(&env, selection)
            .into_iter()
            .filter(|(status, ..)| status == "renamed")
            .map(|(_, path, old)| (old, path))
            .collect();
        let expected: BTreeSet<(String, String)> = RENAME_PAIRS
            .iter()
            .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
            .collect();
        assert_eq!(pairs, expected, "{selection:?}");
        assert_eq!(sources.len(), RENAME_PAIRS.len());
    };
    check(&["--staged"], &["--cached"]);
    // Everything is staged: the working tree's change is the same one.
    check(&["--worktree"], &["HEAD"]);
    env.git(&["commit", "-q", "-m", "moves"]);
    check(&["--range", "HEAD~1..HEAD"], &["HEAD~1", "HEAD"]);
    check(&["--commit", "HEAD"], &["HEAD~1", "HEAD"]);

    // `grep` sees the lines git adds: the two edited lines of the
    // rename, every line of a file that was no rename.
    env.write(
        ".swarm/directives/no-shouting.toml",
        "id = \"no-shouting\"\nlesson = \"Write no line in capitals into moved files\"\napplies_to_agents = [\"coder\"]\nverify = [\"grep:KEEP|LESS:**\"]\n",
    );
    env.git(&["add", ".swarm"]);
    env.git(&["commit", "-q", "-m", "directive"]);
    let run = env.swarm(&[
        "check",
        "--range",
        "HEAD~2..HEAD",
        "--directive",
        "no-shouting",
        "--format",
        "json",
    ]);
    let v: Value = serde_json::from_str(&run.stdout).expect("json");
    let findings: Vec<(String, u64)> = v["results"][0]["predicates"][0]["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| {
            (
                f["path"].as_str().expect("path").to_owned(),
                f["line"].as_u64().expect("line"),
            )
        })
        .collect();
    let mut expected: Vec<(String, u64)> = Vec::new();
    for (path, added) in git_added(&env, &["HEAD~2", "HEAD"]) {
        for (line, text) in added {
            if (text.contains("KEEP") || text.contains("LESS")) && !path.starts_with(".swarm/") {
                expected.push((path.clone(), line));
            }
        }
    }
    assert_eq!(findings, expected);
    assert!(findings.contains(&("moved/mod.rs".to_owned(), 10)));
    assert!(!findings.iter().any(|(p, l)| p == "moved/mod.rs" && *l == 1));
}

/// `diff.renames = copies`: a new file taken from a modified one is a
/// copy, as `git diff` says.
#[test]
fn copies_are_found_when_diff_renames_says_copies() {
    let env = TestEnv::initialised();
    env.write("src/a.txt", lines("a", 0..20));
    env.git(&["add", "-A"]);
    env.git(&["commit", "-q", "-m", "base"]);
    env.git(&["config", "diff.renames", "copies"]);
    env.write("src/a.txt", lines("a", 0..19) + "edited\n");
    env.write("src/b.txt", lines("a", 0..18) + "copied\n");
    env.git(&["add", "-A"]);
    env.git(&["commit", "-q", "-m", "copy"]);
    for selection in [&["--range", "HEAD~1..HEAD"][..], &["--commit", "HEAD"]] {
        agrees_with_git_as_configured(&env, selection, &["HEAD~1", "HEAD"]);
        let files = statuses(&env, selection);
        assert!(
            files.contains(&("copied".into(), "src/b.txt".into(), "src/a.txt".into())),
            "{files:?}"
        );
    }
}

/// `diff.renames = false` turns rename detection off for every change,
/// as it does for `git diff`.
#[test]
fn diff_renames_false_is_honoured_by_every_selector() {
    let env = TestEnv::initialised();
    env.write("old/name.txt", lines("n", 0..20));
    env.git(&["add", "-A"]);
    env.git(&["commit", "-q", "-m", "base"]);
    env.git(&["config", "diff.renames", "false"]);
    std::fs::create_dir_all(env.path("new")).expect("mkdir");
    env.git(&["mv", "old/name.txt", "new/name.txt"]);
    let moved = |selection: &[&str], diff_args: &[&str]| {
        let (paths, sources) = agrees_with_git_as_configured(&env, selection, diff_args);
        assert!(sources.is_empty(), "{selection:?}: {sources:?}");
        assert!(paths.contains("old/name.txt") && paths.contains("new/name.txt"));
    };
    moved(&["--staged"], &["--cached"]);
    moved(&["--worktree"], &["HEAD"]);
    env.git(&["commit", "-q", "-m", "move"]);
    moved(&["--range", "HEAD~1..HEAD"], &["HEAD~1", "HEAD"]);
    moved(&["--commit", "HEAD"], &["HEAD~1", "HEAD"]);
}

/// Over `diff.renameLimit`, git skips the similarity matrix (exact renames
/// and unique base names are still paired) and warns; so does a check.
#[test]
fn rename_limit_exceeded_skips_inexact_renames_and_warns() {
    let env = TestEnv::initialised();
    env.write("a/one.txt", lines("one", 0..20));
    env.write("a/two.txt", lines("two", 0..20));
    env.write("a/same.txt", lines("same", 0..20));
    env.write("a/kept.txt", lines("kept", 0..20));
    env.git(&["add", "-A"]);
    env.git(&["commit", "-q", "-m", "base"]);
    env.git(&["config", "diff.renameLimit", "1"]);
    env.git(&["rm", "-q", "-r", "a"]);
    env.write("b/uno.txt", lines("one", 0..19) + "x\n");
    env.write("b/dos.txt", lines("two", 0..19) + "y\n");
    env.write("b/exact.txt", lines("same", 0..20));
    env.write("b/kept.txt", lines("kept", 0..18) + "z\nw\n");
    env.git(&["add", "-A"]);
    env.git(&["commit", "-q", "-m", "moves"]);
    let git_warning = env
        .command("git", &env.root)
        .args(["diff", "--name-status", "HEAD~1", "HEAD"])
        .output()
        .expect("git diff");
    assert!(String::from_utf8_lossy(&git_warning.stderr).contains("diff.renameLimit"));
    let (_, sources) =
        agrees_with_git_as_configured(&env, &["--range", "HEAD~1..HEAD"], &["HEAD~1", "HEAD"]);
    let expected: BTreeSet<String> = ["a/kept.txt", "a/same.txt"].map(String::from).into();
    assert_eq!(sources, expected);

    let run = env.swarm(&["check", "--range", "HEAD~1..HEAD"]);
    run.success();
    assert!(
        run.stderr.contains("rename detection")
            && run.stderr.contains("`git config diff.renameLimit 2`"),
        "{}",
        run.snapshot()
    );
}

/// A file moved on disk without `git mv` and edited: `--worktree` pairs it
/// as the commit of it will (`git add -A`, then `git diff --cached -M`),
/// and only the edited lines are added.
#[test]
fn worktree_pairs_a_file_moved_on_disk() {
    let env = TestEnv::initialised();
    env.write("old/notes.txt", lines("note", 0..20));
    env.git(&["add", "-A"]);
    env.git(&["commit", "-q", "-m", "base"]);
    std::fs::remove_dir_all(env.path("old")).expect("rm old");
    env.write(
        "new/notes.txt",
        lines("note", 0..10) + "TODO an edit\n" + &lines("note", 11..20),
    );
    let before = ours(&env, &["--worktree"]);
    env.git(&["add", "-A"]);
    let (_, sources) = agrees_with_git(&env, &["--staged"], &["--cached"]);
    assert!(sources.contains("old/notes.txt"));
    assert_eq!(before, ours(&env, &["--staged"]));
    let moved = before
        .iter()
        .find(|f| f["path"] == "new/notes.txt")
        .expect("new/notes.txt");
    assert_eq!(moved["status"], "renamed");
    assert_eq!(moved["added"], serde_json::json!([[11, "TODO an edit"]]));
}

/// Settings given with `git -c` (git passes them in GIT_CONFIG_PARAMETERS,
/// and those of `--config-env` too) count as the same key in `.git/config`
/// does, over it and over GIT_CONFIG_COUNT's, as git orders them: the
/// change a check looks at is the one `git diff` shows with the same flags.
#[test]
fn git_dash_c_settings_count_as_they_do_for_git() {
    let env = TestEnv::initialised();
    env.write("old/name.txt", lines("n", 0..20));
    env.git(&["add", "-A"]);
    env.git(&["commit", "-q", "-m", "base"]);
    std::fs::create_dir_all(env.path("new")).expect("mkdir");
    env.git(&["mv", "old/name.txt", "new/name.txt"]);
    env.git(&["commit", "-q", "-m", "move"]);
    // (status letter, path, source) of each file, by `git swarm changes`
    // and by `git diff --name-status`, both run as `git FLAGS …`.
    let run = |flags: &[&str], args: &[&str], vars: &[(&str, &str)]| {
        let mut cmd = env.command("git", &env.root);
        cmd.args(flags).args(args);
        for (k, v) in vars {
            cmd.env(k, v);
        }
        let out = cmd.output().expect("git");
        assert!(
            out.status.success(),
            "{flags:?} {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let both = |flags: &[&str], vars: &[(&str, &str)]| {
        let ours: Value =
            serde_json::from_str(&run(flags, &["swarm", "changes", "--commit", "HEAD"], vars))
                .expect("json");
        let ours: BTreeSet<(String, String)> = ours
            .as_array()
            .expect("array")
            .iter()
            .map(|f| {
                let status = f["status"].as_str().expect("status");
                let letter = status[..1].to_uppercase();
                (letter, f["path"].as_str().expect("path").to_owned())
            })
            .collect();
        let theirs: BTreeSet<(String, String)> = run(
            flags,
            &["diff", "--name-status", "--no-ext-diff", "HEAD~1", "HEAD"],
            vars,
        )
        .lines()
        .map(|l| {
            let fields: Vec<&str> = l.split('\t').collect();
            (
                fields[0][..1].to_owned(),
                fields[fields.len() - 1].to_owned(),
            )
        })
        .collect();
        assert_eq!(ours, theirs, "git {flags:?} with {vars:?}");
        ours.iter().any(|(s, _)| s == "R")
    };
    assert!(both(&[], &[]), "renames are on by default");
    assert!(!both(&["-c", "diff.renames=false"], &[]));
    assert!(!both(
        &["--config-env=diff.renames=RENAMES"],
        &[("RENAMES", "false")]
    ));
    // Over GIT_CONFIG_COUNT's, which git applies first.
    let count = [
        ("GIT_CONFIG_COUNT", "1"),
        ("GIT_CONFIG_KEY_0", "diff.renames"),
        ("GIT_CONFIG_VALUE_0", "true"),
    ];
    assert!(both(&[], &count));
    assert!(!both(&["-c", "diff.renames=false"], &count));
    // Over the repository's configuration.
    env.git(&["config", "diff.renames", "false"]);
    assert!(!both(&[], &[]));
    assert!(both(&["-c", "diff.renames=true"], &[]));
    // A quoted value and a bare key (true) read as git reads them.
    assert!(both(
        &["-c", "x.y=it's a 'quote'!", "-c", "diff.renames"],
        &[]
    ));
}
