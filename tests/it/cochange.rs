//! `git swarm cochange`: files a generated history changes together are
//! found and proposed; renames are followed; bulk and merge commits, tests
//! beside their implementation, `.swarm/` and lock files are left out. And
//! one run on this repository's own history.

use crate::common;

use std::cell::Cell;

use common::TestEnv;
use serde_json::Value;

/// A history generator: each commit an hour after the last, from a fixed date.
struct History {
    env: TestEnv,
    hour: Cell<u32>,
}

impl History {
    fn new() -> History {
        History {
            env: TestEnv::initialised(),
            hour: Cell::new(0),
        }
    }

    fn date(&self) -> String {
        let h = self.hour.get();
        self.hour.set(h + 1);
        format!("2026-10-{:02}T{:02}:00:00Z", 1 + h / 24, h % 24)
    }

    /// Commits `rels`, each with a line that makes it change.
    fn change(&self, rels: &[&str], message: &str) {
        let n = self.hour.get();
        for rel in rels {
            let mut text = if self.env.exists(rel) {
                self.env.read(rel)
            } else {
                String::new()
            };
            text.push_str(&format!("{message} {n}\n"));
            self.env.write(rel, text);
        }
        self.commit(message);
    }

    fn commit(&self, message: &str) {
        let date = self.date();
        self.env.git(&["add", "-A"]);
        let out = self
            .env
            .command("git", &self.env.root)
            .args(["commit", "-q", "-m", message])
            .env("GIT_AUTHOR_DATE", &date)
            .env("GIT_COMMITTER_DATE", &date)
            .output()
            .expect("git commit");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Noise: files that each change alone, so that pairs are rare.
    fn noise(&self, commits: usize) {
        for i in 0..commits {
            self.change(&[&format!("noise/n{}.txt", i % 7)], "noise");
        }
    }

    fn json(&self, args: &[&str]) -> Value {
        let mut all = vec!["cochange", "--format", "json"];
        all.extend_from_slice(args);
        let run = self.env.swarm(&all);
        run.success();
        serde_json::from_str(&run.stdout).expect("cochange --format json prints JSON")
    }
}

/// The rules of an answer as (when, then, support).
fn rules(answer: &Value) -> Vec<(String, String, u64)> {
    answer["rules"]
        .as_array()
        .expect("rules")
        .iter()
        .map(|r| {
            (
                r["when"].as_str().expect("when").to_owned(),
                r["then"].as_str().expect("then").to_owned(),
                r["support"].as_u64().expect("support"),
            )
        })
        .collect()
}

fn rule<'a>(answer: &'a Value, when: &str, then: &str) -> Option<&'a Value> {
    answer["rules"]
        .as_array()?
        .iter()
        .find(|r| r["when"] == when && r["then"] == then)
}

fn names_file(answer: &Value, pred: impl Fn(&str) -> bool) -> bool {
    rules(answer).iter().any(|(w, t, _)| pred(w) || pred(t))
}

/// The generated history every test below mines.
fn planted() -> History {
    let h = History::new();
    h.noise(10);
    // A pair changed together four times.
    for _ in 0..4 {
        h.change(&["src/api.rs", "docs/api.md"], "api");
        h.noise(2);
    }
    // A pair changed together twice, then one of them renamed, then twice more.
    for _ in 0..2 {
        h.change(&["src/old_name.rs", "db/schema.sql"], "schema");
        h.noise(1);
    }
    h.env.git(&["mv", "src/old_name.rs", "src/new_name.rs"]);
    h.commit("rename old_name to new_name");
    for _ in 0..2 {
        h.change(&["src/new_name.rs", "db/schema.sql"], "schema");
        h.noise(1);
    }
    // A pair changed together twice alone and twice in bulk commits.
    let bulk: Vec<String> = (0..35).map(|i| format!("gen/f{i:02}.txt")).collect();
    for round in 0..4 {
        let mut files = vec!["lib/x.rs", "lib/y.rs"];
        if round % 2 == 1 {
            files.extend(bulk.iter().map(String::as_str));
        }
        h.change(&files, "xy");
        h.noise(1);
    }
    // Tests beside their implementation, four times each.
    for _ in 0..4 {
        h.change(&["src/parser.rs", "tests/parser.rs"], "parser");
        h.change(&["pkg/foo.go", "pkg/foo_test.go"], "foo");
        h.change(&["web/view.ts", "web/view.test.ts"], "view");
        h.noise(1);
    }
    // A manifest with its lock file and git-swarm's own files.
    for _ in 0..4 {
        h.change(&["Cargo.toml", "Cargo.lock", ".swarm/README.md"], "deps");
        h.noise(1);
    }
    // A pair changed together twice directly and twice only by merges (each
    // side on the branch in a commit of its own).
    for round in 0..4 {
        if round % 2 == 0 {
            h.change(&["m/one.txt", "m/two.txt"], "m");
        } else {
            let branch = format!("side{round}");
            h.env.git(&["checkout", "-q", "-b", &branch]);
            h.change(&["m/one.txt"], "side one");
            h.change(&["m/two.txt"], "side two");
            h.env.git(&["checkout", "-q", "main"]);
            h.noise(1);
            let date = h.date();
            let out = h
                .env
                .command("git", &h.env.root)
                .args(["merge", "-q", "--no-ff", "-m", "merge", &branch])
                .env("GIT_AUTHOR_DATE", &date)
                .env("GIT_COMMITTER_DATE", &date)
                .output()
                .expect("git merge");
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        h.noise(1);
    }
    h.noise(5);
    h
}

#[test]
fn planted_pairs_are_found_and_the_rest_left_out() {
    let h = planted();
    let answer = h.json(&["--dry-run"]);
    let found = rules(&answer);
    // The planted pair, both ways, with its support and scores.
    let api = rule(&answer, "src/api.rs", "docs/api.md").unwrap_or_else(|| panic!("{found:?}"));
    assert_eq!(api["support"], 4);
    assert_eq!(api["when_commits"], 4);
    assert_eq!(api["npmi"], 1.0);
    assert_eq!(api["confidence"], 1.0);
    assert_eq!(api["commits"].as_array().expect("commits").len(), 4);
    assert_eq!(api["key"], "cochange:src/api.rs -> docs/api.md");
    assert!(rule(&answer, "docs/api.md", "src/api.rs").is_some());
    // The rename is followed: four co-changes under the current name, none
    // under the old one.
    let renamed =
        rule(&answer, "db/schema.sql", "src/new_name.rs").unwrap_or_else(|| panic!("{found:?}"));
    assert_eq!(renamed["support"], 4);
    assert_eq!(renamed["confidence"], 1.0);
    let npmi = renamed["npmi"].as_f64().expect("npmi");
    assert!(npmi > 0.8 && npmi < 1.0, "{npmi}");
    assert!(
        !names_file(&answer, |p| p.contains("old_name")),
        "{found:?}"
    );
    assert!(answer["renames"].as_u64().expect("renames") >= 1);
    // Bulk commits, merges, tests beside their code, .swarm/ and lock files.
    assert_eq!(answer["bulk_skipped"], 2);
    assert_eq!(answer["merges_skipped"], 2);
    assert!(
        !names_file(&answer, |p| p.starts_with("lib/") || p.starts_with("gen/")),
        "{found:?}"
    );
    assert!(!names_file(&answer, |p| p.starts_with("m/")), "{found:?}");
    for file in [
        "src/parser.rs",
        "tests/parser.rs",
        "pkg/foo.go",
        "web/view.ts",
    ] {
        assert!(!names_file(&answer, |p| p == file), "{file}: {found:?}");
    }
    assert!(
        !names_file(&answer, |p| p.starts_with(".swarm/") || p == "Cargo.lock"),
        "{found:?}"
    );
    assert!(
        !names_file(&answer, |p| p.starts_with("noise/")),
        "{found:?}"
    );
    assert_eq!(found.len(), 4, "{found:?}");
    assert_eq!(answer["stopped_at"], "history");
    // A dry run writes nothing.
    assert!(!h.env.exists(".swarm/proposals"));
    assert!(
        h.env
            .event_lines()
            .iter()
            .all(|l| !l.contains("\"proposed\""))
    );
}

#[test]
fn the_pairs_left_out_are_found_when_the_rules_allow_them() {
    // The same history with the limits lifted: what the rules leave out is
    // really there, so the test above cannot pass for want of data.
    let h = planted();
    let answer = h.json(&["--dry-run", "--max-files", "100"]);
    let xy = rule(&answer, "lib/x.rs", "lib/y.rs").expect("bulk pair counted");
    assert_eq!(xy["support"], 4);
    assert_eq!(answer["bulk_skipped"], 0);
    let strict = h.json(&["--dry-run", "--min-support", "5"]);
    assert_eq!(rules(&strict), Vec::new());
    let few = h.json(&["--dry-run", "--max-commits", "10"]);
    assert_eq!(few["commits"], 10);
    assert_eq!(few["stopped_at"], "max_commits");
    // Without rename detection the pair's history stops at the rename.
    h.env.git(&["config", "diff.renames", "false"]);
    let unfollowed = h.json(&["--dry-run"]);
    assert!(rule(&unfollowed, "db/schema.sql", "src/new_name.rs").is_none());
    assert_eq!(unfollowed["renames"], 0);
}

#[test]
fn proposals_are_written_once_with_an_event_each() {
    let h = planted();
    let run = h.env.swarm(&["cochange"]);
    run.success();
    assert!(
        run.stdout
            .contains("when src/api.rs changes, docs/api.md changes too: 4 commits together"),
        "{}",
        run.stdout
    );
    let dir = h.env.path(".swarm/proposals");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("proposals written")
        .map(|e| e.expect("entry").path())
        .collect();
    files.sort();
    assert_eq!(files.len(), 4, "{files:?}");
    let mut keys = Vec::new();
    let mut parsed = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("read proposal");
        let p = git_swarm::proposal::Proposal::parse(&text, "p.md").expect("proposal parses");
        assert_eq!(p.status, git_swarm::proposal::ProposalStatus::Open);
        assert_eq!(p.applies_to_agents, ["coder"]);
        assert_eq!(p.source, "git swarm cochange");
        assert_eq!(p.paths.len(), 1);
        assert_eq!(p.verify.len(), 1);
        for v in &p.verify {
            assert!(v.starts_with("file_modified:"), "{v}");
            git_swarm::predicate::Predicate::parse(v).expect("verify parses");
        }
        assert!(p.body.contains("Commits that changed both: "), "{}", p.body);
        assert_eq!(
            file.file_stem().and_then(|s| s.to_str()),
            Some(p.slug.as_str())
        );
        assert!(
            run.stdout.contains(&format!("proposed {}", p.slug)),
            "{}",
            run.stdout
        );
        keys.push(p.key.clone());
        parsed.push(p);
    }
    keys.sort();
    assert!(
        keys.contains(&"cochange:src/new_name.rs -> db/schema.sql".to_owned()),
        "{keys:?}"
    );
    let api = parsed
        .iter()
        .find(|p| p.key == "cochange:src/api.rs -> docs/api.md")
        .unwrap_or_else(|| panic!("{keys:?}"));
    assert_eq!(api.paths, ["src/api.rs"]);
    assert_eq!(api.verify, ["file_modified:docs/api.md"]);
    assert!(
        api.title
            .starts_with("When src/api.rs changes, docs/api.md changes too"),
        "{}",
        api.title
    );
    let proposed: Vec<Value> = h
        .env
        .event_lines()
        .iter()
        .map(|l| serde_json::from_str(l).expect("event"))
        .filter(|e: &Value| e["kind"] == "proposed")
        .collect();
    assert_eq!(proposed.len(), 4);
    assert!(proposed.iter().all(|e| e["source"] == "git swarm cochange"));
    // No directive is written by mining.
    let directives = std::fs::read_dir(h.env.path(".swarm/directives"))
        .map(|d| d.count())
        .unwrap_or(0);
    let again = h.env.swarm(&["cochange"]);
    again.success();
    assert!(
        !again.stdout.contains("proposed cochange-"),
        "{}",
        again.stdout
    );
    assert!(
        again.stdout.contains("not proposed: 4 proposed before"),
        "{}",
        again.stdout
    );
    assert_eq!(std::fs::read_dir(&dir).expect("dir").count(), 4);
    assert_eq!(
        std::fs::read_dir(h.env.path(".swarm/directives"))
            .map(|d| d.count())
            .unwrap_or(0),
        directives
    );
    let events_after = h
        .env
        .event_lines()
        .iter()
        .filter(|l| l.contains("\"proposed\""))
        .count();
    assert_eq!(events_after, 4);
}

/// A run cut short: an entry planted at one proposal's path is reported
/// and left, the others are written and recorded; events lost after the
/// writes are appended by the next run, one per proposal.
#[test]
fn a_run_cut_short_is_finished_by_the_next() {
    let h = planted();
    let dry = h.json(&["--dry-run"]);
    let written = dry["proposals"]["written"].as_array().expect("written");
    assert_eq!(written.len(), 4, "{dry}");
    let blocked = written[1]["path"].as_str().expect("path").to_owned();
    std::fs::create_dir_all(h.env.path(&blocked)).expect("plant a folder");
    let run = h.env.swarm(&["cochange"]);
    run.success();
    assert!(run.stderr.contains(&blocked), "{}", run.stderr);
    assert!(run.stderr.contains("hint:"), "{}", run.stderr);
    let proposed = |h: &History| -> Vec<String> {
        h.env
            .event_lines()
            .iter()
            .map(|l| serde_json::from_str::<Value>(l).expect("event"))
            .filter(|e| e["kind"] == "proposed")
            .map(|e| e["path"].as_str().expect("path").to_owned())
            .collect()
    };
    let mut first = proposed(&h);
    first.sort();
    assert_eq!(first.len(), 3, "{first:?}");
    assert!(!first.contains(&blocked), "{first:?}");
    // The events of the three are lost, as by a run stopped after writing.
    for e in std::fs::read_dir(h.env.path(common::PENDING)).expect("events") {
        let path = e.expect("entry").path();
        let text = std::fs::read_to_string(&path).expect("read log");
        let kept: String = text
            .lines()
            .filter(|l| !l.contains("\"proposed\""))
            .map(|l| format!("{l}\n"))
            .collect();
        std::fs::write(&path, kept).expect("write log");
    }
    assert!(proposed(&h).is_empty());
    std::fs::remove_dir(h.env.path(&blocked)).expect("unplant");
    h.env.swarm(&["cochange"]).success();
    let mut after = proposed(&h);
    after.sort();
    let mut all: Vec<String> = written
        .iter()
        .map(|w| w["path"].as_str().expect("path").to_owned())
        .collect();
    all.sort();
    assert_eq!(after, all, "one event per proposal");
    h.env.swarm(&["cochange"]).success();
    assert_eq!(proposed(&h).len(), 4, "recorded once");
}

#[test]
fn at_most_ten_proposals_a_run() {
    let h = History::new();
    h.noise(20);
    // Eight pairs, sixteen rules.
    for round in 0..3 {
        for p in 0..8 {
            h.change(&[&format!("a/p{p}.rs"), &format!("b/q{p}.rs")], "pair");
        }
        h.noise(round + 1);
    }
    let run = |expect_written: usize| {
        let answer = h.json(&[]);
        assert_eq!(rules(&answer).len(), 16, "{answer}");
        let written = answer["proposals"]["written"]
            .as_array()
            .expect("written")
            .len();
        assert_eq!(written, expect_written, "{answer}");
        answer
    };
    let first = run(10);
    assert_eq!(first["proposals"]["left_for_later"], 6);
    let second = run(6);
    assert_eq!(second["proposals"]["already_proposed"], 10);
    let third = run(0);
    assert_eq!(third["proposals"]["already_proposed"], 16);
    assert_eq!(
        std::fs::read_dir(h.env.path(".swarm/proposals"))
            .expect("dir")
            .count(),
        16
    );
}

#[test]
fn bad_arguments_are_refused_with_a_hint() {
    let h = History::new();
    let run = h.env.swarm(&["cochange", "--min-npmi", "2"]);
    run.code(2);
    assert!(
        run.stderr.contains("--min-npmi 2 is out of range"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("hint:"), "{}", run.stderr);
    for bad in ["0.5", "-1", "NaN"] {
        let run = h.env.swarm(&["cochange", &format!("--half-life={bad}")]);
        run.code(2);
        assert!(
            run.stderr
                .contains(&format!("--half-life {bad} is out of range")),
            "{}",
            run.stderr
        );
        assert!(run.stderr.contains("hint: give 0"), "{}", run.stderr);
    }
    for bad in ["1", "1001", "100000"] {
        let run = h.env.swarm(&["cochange", "--max-files", bad]);
        run.code(2);
        assert!(run.stderr.contains("--max-files"), "{}", run.stderr);
        assert!(run.stderr.contains("2..=1000"), "{}", run.stderr);
    }
    h.env
        .swarm(&["cochange", "--max-files", "1000", "--dry-run"])
        .success();
    let run = h.env.swarm(&["cochange", "--since", "yesterday"]);
    run.code(2);
    assert!(run.stderr.contains("--since `yesterday`"), "{}", run.stderr);
}

#[test]
fn a_negative_min_npmi_is_taken() {
    let h = planted();
    let strict = h.json(&["--dry-run"]);
    let loose = h.json(&["--dry-run", "--min-npmi", "-0.2"]);
    assert!(rules(&loose).len() >= rules(&strict).len(), "{loose}");
    let run = h.env.swarm(&["cochange", "--min-npmi", "-1.5"]);
    run.code(2);
    assert!(
        run.stderr.contains("--min-npmi -1.5 is out of range"),
        "{}",
        run.stderr
    );
}

/// A shallow clone whose boundary is a merge: git reads the boundary as a
/// root (`git log --no-merges` lists it), and so does cochange.
#[test]
fn a_merge_at_a_shallow_boundary_is_a_root() {
    let h = History::new();
    h.noise(3);
    h.env.git(&["checkout", "-q", "-b", "side"]);
    h.change(&["side.txt"], "side");
    h.env.git(&["checkout", "-q", "-"]);
    h.change(&["main.txt"], "main");
    let date = h.date();
    let out = h
        .env
        .command("git", &h.env.root)
        .args(["merge", "-q", "--no-ff", "-m", "merge", "side"])
        .env("GIT_AUTHOR_DATE", &date)
        .env("GIT_COMMITTER_DATE", &date)
        .output()
        .expect("git merge");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    h.change(&["after.txt"], "after");
    h.change(&["after.txt"], "after");
    let clone = h.env.tmp.path().join("shallow");
    let url = format!("file://{}", h.env.root.display());
    let out = h
        .env
        .command("git", h.env.tmp.path())
        .args(["clone", "-q", "--depth", "3", &url])
        .arg(&clone)
        .output()
        .expect("git clone");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let boundary = std::fs::read_to_string(clone.join(".git/shallow")).expect("shallow file");
    let merge = h.env.git_in(&clone, &["rev-parse", "HEAD~2"]);
    assert_eq!(boundary.trim(), merge.trim(), "the boundary is the merge");
    let count = h
        .env
        .git_in(&clone, &["rev-list", "--count", "--no-merges", "HEAD"]);
    assert_eq!(count.trim(), "3");
    let run = h
        .env
        .swarm_in(&clone, &["cochange", "--dry-run", "--format", "json"]);
    run.success();
    let answer: Value = serde_json::from_str(&run.stdout).expect("json");
    assert_eq!(answer["commits"], 3, "{answer}");
    assert_eq!(answer["merges_skipped"], 0, "{answer}");
}

/// A file whose path is not UTF-8 cannot be named by a directive: it is
/// left out, and said so.
#[cfg(unix)]
#[test]
fn a_path_not_utf8_is_left_out_and_counted() {
    use std::os::unix::ffi::OsStrExt;
    let h = History::new();
    let bad = h.env.root.join(std::ffi::OsStr::from_bytes(b"odd\xff.txt"));
    for n in 0..4 {
        std::fs::write(&bad, format!("{n}\n")).expect("write");
        h.change(&["src/good.rs"], "pair");
    }
    h.noise(8);
    let answer = h.json(&["--dry-run", "--min-support", "1", "--min-npmi", "-1"]);
    assert_eq!(answer["non_utf8_paths"], 1, "{answer}");
    assert!(!names_file(&answer, |p| p.starts_with("odd")), "{answer}");
    let run = h.env.swarm(&["cochange", "--dry-run"]);
    run.success();
    assert!(
        run.stdout
            .contains("1 file left out: its path is not UTF-8"),
        "{}",
        run.stdout
    );
}

#[test]
fn since_stops_the_walk_at_a_date() {
    let h = History::new();
    // Ten commits on 1 October, the rest from 2 October.
    h.noise(30);
    let answer = h.json(&["--since", "2026-10-02", "--dry-run"]);
    assert_eq!(answer["commits"], 6, "{answer}");
    assert_eq!(answer["stopped_at"], "since");
    // Every commit is newer: the whole history was read.
    let answer = h.json(&["--since", "2026-09-30", "--dry-run"]);
    assert_eq!(answer["commits"], 31, "{answer}");
    assert_eq!(answer["stopped_at"], "history", "{answer}");
    let run = h
        .env
        .swarm(&["cochange", "--since", "2026-09-30", "--dry-run"]);
    assert!(run.stdout.contains("(the whole history;"), "{}", run.stdout);
}

#[test]
fn an_empty_repository_has_no_history_to_mine() {
    let env = TestEnv::new();
    env.swarm(&["init"]).success();
    let run = env.swarm(&["cochange", "--format", "json"]);
    run.success();
    let answer: Value = serde_json::from_str(&run.stdout).expect("json");
    assert_eq!(answer["commits"], 0);
    assert_eq!(rules(&answer), Vec::new());
}

/// This repository's own history, cloned: it runs, reads commits, and no
/// pair names `.swarm/` or a lock file or pairs a test with its code.
#[test]
fn this_repository_s_own_history() {
    let source = env!("CARGO_MANIFEST_DIR");
    let env = TestEnv::new();
    let clone = env.tmp.path().join("self");
    let out = env
        .command("git", env.tmp.path())
        .args(["clone", "-q", "--no-local", source])
        .arg(&clone)
        .output()
        .expect("git clone");
    if !out.status.success() {
        common::skipped(
            "history",
            &format!(
                "cannot clone {source}: {}",
                String::from_utf8_lossy(&out.stderr)
            ),
        );
        return;
    }
    let count = env.git_in(&clone, &["rev-list", "--count", "--no-merges", "HEAD"]);
    let count: usize = count.trim().parse().expect("a count");
    let shallow = env.git_in(&clone, &["rev-parse", "--is-shallow-repository"]);
    if count < 50 || shallow.trim() == "true" {
        common::skipped(
            "history",
            &format!(
                "{count} commits{}, too little history to mine",
                if shallow.trim() == "true" {
                    " (shallow)"
                } else {
                    ""
                }
            ),
        );
        return;
    }
    if !clone.join(".swarm").exists() {
        env.swarm_in(&clone, &["init"]).success();
    }
    let listing = |dir: &std::path::Path| -> Vec<String> {
        let mut names: Vec<String> = walk(dir)
            .into_iter()
            .map(|p| p.strip_prefix(dir).expect("below").display().to_string())
            .collect();
        names.sort();
        names
    };
    let before = listing(&clone.join(".swarm"));
    let run = env.swarm_in(&clone, &["cochange", "--dry-run", "--format", "json"]);
    run.success();
    let answer: Value = serde_json::from_str(&run.stdout).expect("json");
    assert_eq!(
        answer["commits"].as_u64().expect("commits") as usize,
        count.min(2000),
        "{}",
        run.stdout
    );
    assert!(
        !names_file(&answer, |p| p.starts_with(".swarm/")
            || p.ends_with(".lock")),
        "{}",
        run.stdout
    );
    for (w, t, support) in rules(&answer) {
        assert!(support >= 3, "{w} {t}");
        assert_ne!(w, t);
        let is_test = |p: &str| p.starts_with("tests/") && p.ends_with(".rs");
        let stem = |p: &str| {
            let p = p.trim_end_matches("/mod.rs").trim_end_matches(".rs");
            p.rsplit('/').next().unwrap_or(p).to_owned()
        };
        let parent = |p: &str| p.rsplit('/').nth(1).unwrap_or("").to_owned();
        if is_test(&w) != is_test(&t) && w.ends_with(".rs") && t.ends_with(".rs") {
            let (test, code) = if is_test(&w) { (&w, &t) } else { (&t, &w) };
            let test_stem = stem(test);
            let first_word = test_stem.split('_').next().unwrap_or("");
            assert_ne!(first_word, stem(code), "a test beside its code: {w} {t}");
            assert_ne!(first_word, parent(code), "a test beside its code: {w} {t}");
        }
    }
    assert_eq!(
        listing(&clone.join(".swarm")),
        before,
        "--dry-run wrote nothing"
    );
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(walk(&p));
            }
            out.push(p);
        }
    }
    out
}
