//! git is the reference: on generated repositories with adds, edits,
//! deletes, renames, binary files, CRLF, a non-UTF-8 path, files in new
//! untracked directories and a submodule entry, the change git-swarm reads
//! agrees with `git diff --name-only` / `--name-status` (paths), with
//! `git diff -U0` (added lines), and `grep_tree` with `git grep`.

mod common;

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
    let mut args = vec!["diff", "--name-status", "-z", "-M", "--no-ext-diff"];
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

/// path → added (line, text) from `git diff -U0`.
fn git_added(env: &TestEnv, diff_args: &[&str]) -> BTreeMap<String, Vec<(u64, String)>> {
    let mut args = vec![
        "-c",
        "core.quotePath=false",
        "diff",
        "-U0",
        "-M",
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
    let files = ours(env, selection);
    let our_paths: BTreeSet<String> = files
        .iter()
        .map(|f| f["path"].as_str().expect("path").to_owned())
        .collect();
    let our_sources: BTreeSet<String> = files
        .iter()
        .filter_map(|f| f["old_path"].as_str().map(str::to_owned))
        .collect();
    let (paths, sources) = git_paths(env, diff_args);
    assert_eq!(
        our_paths, paths,
        "paths differ from git diff --name-status {diff_args:?}"
    );
    assert_eq!(
        our_sources, sources,
        "rename sources differ from git diff {diff_args:?}"
    );

    let reference = git_added(env, diff_args);
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
