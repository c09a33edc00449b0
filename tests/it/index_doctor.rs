//! The derived index (`index status|rebuild`, where it lives, transparent
//! refresh, disposability) and `git swarm doctor` (`--fix`).

use crate::common;

use common::{Run, TestEnv, age, age_directives, directive_toml};
use serde_json::Value;

/// Replaces what changes from run to run: the fingerprint (made of mtimes)
/// and the rebuild time.
fn stable(run: &Run) -> String {
    let fingerprint = regex::Regex::new(r"\b[0-9a-f]{16}\b").expect("regex");
    let millis = regex::Regex::new(r"in \d+ ms").expect("regex");
    let s = fingerprint
        .replace_all(&run.snapshot(), "[FINGERPRINT]")
        .into_owned();
    millis.replace_all(&s, "in [N] ms").into_owned()
}

fn status_json(env: &TestEnv, dir: &std::path::Path) -> Value {
    let run = env.swarm_in(dir, &["index", "status", "--format", "json"]);
    run.success();
    serde_json::from_str(&run.stdout).expect("JSON")
}

/// The total in the EVENTS column of `list` for one directive.
fn listed_events(env: &TestEnv, id: &str) -> u64 {
    let run = env.swarm(&["list"]);
    run.success();
    let line = run
        .stdout
        .lines()
        .find(|l| l.split_whitespace().next() == Some(id))
        .unwrap_or_else(|| panic!("{id} not listed:\n{}", run.snapshot()));
    line.split_whitespace()
        .nth(4)
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count in {line}"))
}

fn event(id: &str, ts: &str, kind: &str, directive: &str) -> String {
    format!(r#"{{"id":"{id}","ts":"{ts}","kind":"{kind}","directive":"{directive}"}}"#) + "\n"
}

fn append(env: &TestEnv, rel: &str, text: &str) {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(env.path(rel))
        .expect("open for append");
    f.write_all(text.as_bytes()).expect("append");
}

#[test]
fn index_status_missing_fresh_stale_and_rebuild() {
    let env = TestEnv::initialised();
    let run = env.swarm(&["index", "status"]);
    run.success();
    insta::assert_snapshot!(stable(&run), @r"
    [exit 0]
    --- stdout
    index:       .git/swarm/index
    fingerprint: [FINGERPRINT] (of .swarm/ now)
    state:       missing (the next command builds it)
    watcher:     none (commands stat the directive files)
    ");
    assert!(!env.exists(".git/swarm/index"));

    // Any reading command builds it, in the git dir and not in the tree.
    env.swarm(&["list"]).success();
    assert!(env.exists(".git/swarm/index"));
    assert_eq!(env.git(&["status", "--porcelain"]), "");
    let run = env.swarm(&["index", "status"]);
    insta::assert_snapshot!(stable(&run), @r"
    [exit 0]
    --- stdout
    index:       .git/swarm/index
    fingerprint: [FINGERPRINT] (of .swarm/ now)
    state:       fresh
    directives:  6 (0 quarantined)
    events:      0 distinct in 0 file(s), 0 duplicate line(s)
    watcher:     none (commands stat the directive files)
    ");

    // A hand edit makes it stale until the next command.
    append(
        &env,
        ".swarm/directives/no-private-keys.toml",
        "# reviewed again\n",
    );
    let run = env.swarm(&["index", "status"]);
    insta::assert_snapshot!(stable(&run), @r"
    [exit 0]
    --- stdout
    index:       .git/swarm/index
    fingerprint: [FINGERPRINT] (of .swarm/ now)
    state:       stale (the next command refreshes it)
    directives:  6 (0 quarantined)
    events:      0 distinct in 0 file(s), 0 duplicate line(s)
    watcher:     none (commands stat the directive files)
    ");
    env.swarm(&["show", "no-private-keys"]).success();
    assert_eq!(status_json(&env, &env.root)["fresh"], true);

    // rebuild, after events arrived.
    env.swarm(&[
        "record",
        "shown",
        "--directive",
        "no-private-keys",
        "--count",
        "3",
    ])
    .success();
    append(
        &env,
        ".swarm/events/2026-11.jsonl",
        &event("dup", "2026-11-01T00:00:00.000Z", "ack", "x"),
    );
    append(
        &env,
        ".swarm/events/2026-11.jsonl",
        &event("dup", "2026-11-01T00:00:00.000Z", "ack", "x"),
    );
    let run = env.swarm(&["index", "rebuild"]);
    run.success();
    insta::assert_snapshot!(stable(&run), @"
    [exit 0]
    --- stdout
    Rebuilt .git/swarm/index: 6 directives, 0 quarantined, 4 events from 2 file(s) in [N] ms.
    ");
    let template = common::template_directive_ids().len();
    let v = status_json(&env, &env.root);
    assert_eq!(v["path"], ".git/swarm/index");
    assert_eq!(v["exists"], true);
    assert_eq!(v["fresh"], true);
    assert_eq!(v["directives"], template);
    assert_eq!(v["quarantined"], 0);
    // The recorded events wait in the pending log; the copies by hand are tracked.
    assert_eq!(v["event_files"], 2);
    assert_eq!(v["events"], 4);
    assert_eq!(v["duplicates"], 1);

    let run = env.swarm(&["index", "rebuild", "--format", "json"]);
    run.success();
    let v: Value = serde_json::from_str(&run.stdout).expect("JSON");
    assert_eq!(v["events"], 4);
    assert_eq!(v["duplicates"], 1);
    assert_eq!(v["directives"], template);
}

#[test]
fn a_linked_worktree_has_its_own_index_in_its_own_git_dir() {
    let env = TestEnv::initialised();
    let wt = env.tmp.path().join("wt");
    env.git(&["worktree", "add", "-q", wt.to_str().expect("utf-8 path")]);
    let wt_index = env.path(".git/worktrees/wt/swarm/index");

    let v = status_json(&env, &wt);
    assert_eq!(v["exists"], false);
    assert_eq!(
        v["path"].as_str().map(|p| env.normalise(p)),
        Some("$TMP/repo/.git/worktrees/wt/swarm/index".to_owned())
    );
    env.swarm_in(&wt, &["list"]).success();
    assert!(wt_index.is_file(), "no index in the worktree's git dir");
    assert!(
        !env.exists(".git/swarm/index"),
        "the worktree wrote the main worktree's index"
    );
    assert!(!wt.join(".swarm/index").exists());
    assert_eq!(env.git_in(&wt, &["status", "--porcelain"]), "");

    // Each worktree's index follows its own .swarm/.
    std::fs::write(
        wt.join(".swarm/directives/only-in-wt.toml"),
        directive_toml("only-in-wt", "Only the linked worktree has this one"),
    )
    .expect("write");
    let in_wt = env.swarm_in(&wt, &["list"]);
    assert!(in_wt.stdout.contains("only-in-wt"), "{}", in_wt.snapshot());
    let in_main = env.swarm(&["list"]);
    assert!(
        !in_main.stdout.contains("only-in-wt"),
        "{}",
        in_main.snapshot()
    );
    assert!(env.exists(".git/swarm/index"));
    let template = common::template_directive_ids().len();
    assert_eq!(status_json(&env, &wt)["directives"], template + 1);
    assert_eq!(status_json(&env, &env.root)["directives"], template);
    env.swarm_in(&wt, &["index", "rebuild"]).success();
    assert_eq!(status_json(&env, &env.root)["fresh"], true);
}

#[test]
fn the_index_follows_hand_edits() {
    let env = TestEnv::initialised();
    let file = ".swarm/directives/no-private-keys.toml";
    let before = env.swarm(&["show", "no-private-keys"]);
    before.success();
    assert!(before.stdout.contains("credentials; load them"));

    // The same length, written right after the index was built: only the
    // content tells the versions apart.
    let text = env.read(file);
    let edited = text.replace("credentials; load them", "credentials: read them");
    assert_eq!(edited.len(), text.len());
    env.write(file, &edited);
    let after = env.swarm(&["show", "no-private-keys"]);
    assert!(
        after.stdout.contains("credentials: read them"),
        "{}",
        after.snapshot()
    );
    let listed = env.swarm(&["list"]);
    assert!(
        listed.stdout.contains("credentials: read them"),
        "{}",
        listed.snapshot()
    );

    // A new file, a removed file.
    env.write(
        ".swarm/directives/fresh-one.toml",
        directive_toml("fresh-one", "A directive written by hand"),
    );
    std::fs::remove_file(env.path(".swarm/directives/lockfile-with-manifest.toml")).expect("rm");
    let ids: Vec<String> = env
        .swarm(&["list"])
        .stdout
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
        .collect();
    let mut expected: Vec<&str> = common::template_directive_ids()
        .into_iter()
        .filter(|id| *id != "lockfile-with-manifest")
        .chain(["fresh-one"])
        .collect();
    expected.sort_unstable();
    assert_eq!(ids, expected);

    // Events appended by hand change the counts, in order or not.
    let events = ".swarm/events/2026-11.jsonl";
    assert_eq!(listed_events(&env, "fresh-one"), 0);
    append(
        &env,
        events,
        &event("ev-2", "2026-11-10T00:00:00.000Z", "check", "fresh-one"),
    );
    assert_eq!(listed_events(&env, "fresh-one"), 1);
    append(
        &env,
        events,
        &event("ev-3", "2026-11-11T00:00:00.000Z", "check", "fresh-one"),
    );
    assert_eq!(listed_events(&env, "fresh-one"), 2);
    // One that sorts before everything folded so far, as a merge brings in.
    append(
        &env,
        events,
        &event("ev-1", "2026-11-01T00:00:00.000Z", "shown", "fresh-one"),
    );
    assert_eq!(listed_events(&env, "fresh-one"), 3);
    // A copy of a line already folded counts once.
    append(
        &env,
        events,
        &event("ev-2", "2026-11-10T00:00:00.000Z", "check", "fresh-one"),
    );
    assert_eq!(listed_events(&env, "fresh-one"), 3);
    // A new month file.
    env.write(
        ".swarm/events/2026-12.jsonl",
        event("ev-4", "2026-12-01T00:00:00.000Z", "ack", "fresh-one"),
    );
    assert_eq!(listed_events(&env, "fresh-one"), 4);
    // A rewritten file (not an append) and a removed one.
    env.write(
        events,
        event("ev-9", "2026-11-09T00:00:00.000Z", "check", "fresh-one"),
    );
    assert_eq!(listed_events(&env, "fresh-one"), 2);
    std::fs::remove_file(env.path(".swarm/events/2026-12.jsonl")).expect("rm");
    assert_eq!(listed_events(&env, "fresh-one"), 1);
}

#[test]
fn deleting_or_corrupting_the_index_changes_nothing_but_speed() {
    let env = TestEnv::initialised();
    env.swarm(&["add", "--lesson", "Too vague to keep yet"])
        .code(1);
    env.swarm(&[
        "record",
        "note",
        "--custom",
        "--directive",
        "no-private-keys",
        "--count",
        "2",
    ])
    .success();
    append(
        &env,
        ".swarm/events/2026-11.jsonl",
        &event(
            "ev-1",
            "2026-11-01T00:00:00.000Z",
            "shown",
            "no-private-keys",
        ),
    );
    append(
        &env,
        ".swarm/events/2026-11.jsonl",
        &event(
            "ev-1",
            "2026-11-01T00:00:00.000Z",
            "shown",
            "no-private-keys",
        ),
    );
    let commands: &[&[&str]] = &[
        &["list"],
        &["list", "--format", "json"],
        &["list", "--quarantined"],
        &["show", "no-private-keys", "--format", "json"],
        &["show", "too-vague-to-keep-yet"],
        &["log"],
    ];
    let outputs = |env: &TestEnv| -> Vec<String> {
        commands.iter().map(|c| env.swarm(c).snapshot()).collect()
    };
    let with_index = outputs(&env);
    assert!(with_index[0].contains("no-private-keys"));
    let counts = status_json(&env, &env.root);
    assert_eq!(counts["events"], 4);

    std::fs::remove_file(env.path(".git/swarm/index")).expect("rm index");
    assert_eq!(status_json(&env, &env.root)["exists"], false);
    assert_eq!(outputs(&env), with_index);

    std::fs::write(
        env.path(".git/swarm/index"),
        b"GITSWARM\x01\x00\x00\x00garbage",
    )
    .expect("write");
    assert_eq!(outputs(&env), with_index);
    std::fs::write(env.path(".git/swarm/index"), b"").expect("write");
    assert_eq!(outputs(&env), with_index);
    // All that is derived in .git/swarm/, but not the recorded events
    // waiting there (the pending log).
    for entry in std::fs::read_dir(env.path(".git/swarm")).expect("list") {
        let path = entry.expect("entry").path();
        if path.file_name().is_some_and(|n| n == "pending") {
            continue;
        }
        if path.is_dir() {
            std::fs::remove_dir_all(&path).expect("rm dir");
        } else {
            std::fs::remove_file(&path).expect("rm");
        }
    }
    assert!(env.exists(common::PENDING_NOV));
    assert_eq!(outputs(&env), with_index);
    let v = status_json(&env, &env.root);
    assert_eq!(v["fresh"], true);
    assert_eq!(v["events"], counts["events"]);
    assert_eq!(v["duplicates"], counts["duplicates"]);
}

/// Bytes damaged anywhere in the index — the head, the pattern fold, the
/// parsed directive files, the retrieval corpus — are found by the
/// sections' checksums: the index is rebuilt and no command answers from
/// wrong values, nor fails until `index rebuild`.
#[test]
fn damaged_bytes_anywhere_in_the_index_are_found_and_rebuilt() {
    let env = TestEnv::initialised();
    env.swarm(&[
        "record",
        "note",
        "--custom",
        "--directive",
        "no-private-keys",
    ])
    .success();
    let commands: &[&[&str]] = &[
        &["list", "--format", "json"],
        &["show", "no-private-keys", "--format", "json"],
        &["search", "private keys"],
        &["status", "--format", "json"],
        &["pattern", "list"],
    ];
    // `status` says how the index was refreshed: everything else must agree.
    let outputs = |env: &TestEnv| -> Vec<String> {
        commands
            .iter()
            .map(|c| {
                let run = env.swarm(c);
                match serde_json::from_str::<Value>(&run.stdout) {
                    Ok(mut v) if c[0] == "status" => {
                        v["index"] = Value::Null;
                        format!("{}\n{}", run.code, v)
                    }
                    _ => run.snapshot(),
                }
            })
            .collect()
    };
    // Settled (nothing racy), so that a refresh rebuilds only for damage.
    for rel in [".swarm/config.toml", ".swarm/events", common::PENDING] {
        age(&env, rel);
    }
    for dir in [".swarm/events", common::PENDING] {
        for entry in std::fs::read_dir(env.path(dir)).expect("events") {
            let name = entry.expect("entry").file_name();
            age(&env, &format!("{dir}/{}", name.to_string_lossy()));
        }
    }
    age_directives(&env);
    env.swarm(&["index", "rebuild"]).success();
    let fresh = env.swarm(&["index", "refresh", "--format", "json"]);
    fresh.success();
    assert!(
        fresh.stdout.contains(r#""refresh": "fresh""#),
        "{}",
        fresh.stdout
    );
    let good = outputs(&env);
    let index = env.path(".git/swarm/index");
    let bytes = std::fs::read(&index).expect("index");
    // Past the magic and format: the padding after them, then every
    // section (their fields and padding included).
    let positions: Vec<usize> = (12..16)
        .chain((0..40).map(|i| 16 + i * (bytes.len() - 17) / 39))
        .collect();
    for at in positions {
        let mut damaged = bytes.clone();
        damaged[at] ^= 0x20;
        std::fs::write(&index, &damaged).expect("write");
        // `index refresh` reads the head, so it finds damage there (the
        // padding included); a section is checked when a command reads it.
        let refresh = env.swarm(&["index", "refresh", "--format", "json"]);
        refresh.success();
        let v: Value = serde_json::from_str(&refresh.stdout).expect("json");
        let detail = v["detail"].as_str().unwrap_or_default();
        match v["refresh"].as_str() {
            Some("rebuilt") => assert!(
                detail.contains("no usable index") || detail.contains("damaged"),
                "byte {at} of {}: rebuilt for another reason: {detail}",
                bytes.len()
            ),
            _ => assert_eq!(v["refresh"], "fresh", "byte {at} of {}: {v}", bytes.len()),
        }
        std::fs::write(&index, &damaged).expect("write");
        assert_eq!(outputs(&env), good, "byte {at} of {}", bytes.len());
        // The commands that read every section found it and replaced the file.
        assert!(
            env.index_bytes() != damaged,
            "byte {at} of {}: the damaged index was kept",
            bytes.len()
        );
    }
}

/// The index is a cache: a command goes on when it cannot be written, but
/// `index refresh`, asked to write it, says it could not.
#[test]
fn index_refresh_reports_an_index_it_cannot_write() {
    let env = TestEnv::initialised();
    std::fs::remove_file(env.path(".git/swarm/index")).ok();
    std::fs::create_dir_all(env.path(".git/swarm/index/in-the-way")).expect("mkdir");
    env.swarm(&["list"]).success();
    let run = env.swarm(&["index", "refresh"]);
    assert_ne!(run.code, 0, "{}", run.snapshot());
    assert!(
        run.stderr.contains(".git/swarm/index"),
        "names the file: {}",
        run.snapshot()
    );
}

/// A folder in the index's place is not "missing": `index status` says no
/// command can write the index, `doctor` reports it as an error and `--fix`
/// removes it only when it is empty. Something else in its place (a FIFO) is
/// unreadable, and the next command replaces it.
#[test]
fn index_status_and_doctor_tell_a_folder_in_the_way_from_a_missing_index() {
    let env = TestEnv::initialised();
    let index = env.path(".git/swarm/index");
    std::fs::remove_file(&index).ok();
    assert_eq!(status_json(&env, &env.root)["state"], "missing");

    std::fs::create_dir_all(index.join("in-the-way")).expect("mkdir");
    let run = env.swarm(&["index", "status"]);
    run.success();
    assert!(
        run.stdout
            .contains("state:       a folder is in its place, so no command can write the index")
            && run
                .stderr
                .contains("warning: .git/swarm/index is a folder, not the index"),
        "{}",
        run.snapshot()
    );
    let v = status_json(&env, &env.root);
    assert_eq!(
        (v["state"].as_str(), &v["exists"]),
        (Some("folder"), &Value::Bool(false))
    );

    let doctor = env.swarm(&["doctor", "--fix"]);
    doctor.code(1);
    assert!(
        doctor.stdout.contains(
            ".git/swarm/index: error: a folder is in the index's place: no command can write the index"
        ),
        "{}",
        doctor.snapshot()
    );
    assert!(
        index.join("in-the-way").is_dir(),
        "a folder with something in it is kept"
    );

    std::fs::remove_dir(index.join("in-the-way")).expect("rmdir");
    let doctor = env.swarm(&["doctor", "--fix"]);
    doctor.success();
    assert!(
        doctor
            .stdout
            .contains(".git/swarm/index: fixed: a folder is in the index's place"),
        "{}",
        doctor.snapshot()
    );
    assert_eq!(status_json(&env, &env.root)["state"], "fresh");

    std::fs::remove_file(&index).expect("rm index");
    common::mkfifo(&index);
    assert_eq!(status_json(&env, &env.root)["state"], "unreadable");
    env.swarm(&["list"]).success();
    assert_eq!(status_json(&env, &env.root)["state"], "fresh");
}

const GOOD: [&str; 3] = [
    r#"{"id":"ev-1","ts":"2026-11-01T00:00:00.000Z","kind":"shown","directive":"no-private-keys"}"#,
    r#"{"id":"ev-2","ts":"2026-11-02T00:00:00.000Z","kind":"check","directive":"no-private-keys"}"#,
    r#"{"id":"ev-3","ts":"2026-11-03T00:00:00.000Z","kind":"ack","directive":"no-private-keys"}"#,
];
const TORN: &str = r#"{"id":"ev-4","ts":"2026-11-04T00:0"#;

#[test]
fn doctor_on_a_healthy_store() {
    let env = TestEnv::initialised();
    env.swarm(&["record", "shown", "--directive", "no-private-keys"])
        .success();
    env.swarm(&["list"]).success();
    let run = env.swarm(&["doctor"]);
    run.success();
    insta::assert_snapshot!(run.snapshot(), @r"
    [exit 0]
    --- stdout
    Checked 1 event in 1 file: 0 findings open, 0 fixed.
    ");
    let run = env.swarm(&["doctor", "--format", "json"]);
    run.success();
    let v: Value = serde_json::from_str(&run.stdout).expect("JSON");
    assert_eq!(
        v,
        serde_json::json!({ "event_files": 1, "events": 1, "findings": [] })
    );

    // A missing index is only a warning, which --fix rebuilds.
    std::fs::remove_file(env.path(".git/swarm/index")).expect("rm");
    let run = env.swarm(&["doctor"]);
    run.success();
    insta::assert_snapshot!(run.snapshot(), @r"
    [exit 0]
    --- stdout
    .git/swarm/index: warning: the index is missing, unreadable or older than .swarm/
      hint: any command refreshes it; `git swarm index rebuild` (or doctor --fix) rebuilds it now
    Checked 1 event in 1 file: 1 finding open, 0 fixed.
    ");
    let run = env.swarm(&["doctor", "--fix"]);
    run.success();
    assert!(
        run.stdout
            .starts_with(".git/swarm/index: fixed: the index is missing"),
        "{}",
        run.snapshot()
    );
    assert!(env.exists(".git/swarm/index"));
}

#[test]
fn doctor_reports_a_torn_tail_and_fix_saves_it_aside() {
    let env = TestEnv::initialised();
    let complete = GOOD.iter().map(|l| format!("{l}\n")).collect::<String>();
    env.write(".swarm/events/2026-11.jsonl", format!("{complete}{TORN}"));
    env.swarm(&["list"]).success();

    let run = env.swarm(&["doctor"]);
    run.code(1);
    insta::assert_snapshot!(run.snapshot(), @r"
    [exit 1]
    --- stdout
    .swarm/events/2026-11.jsonl:4:1: error: last line is incomplete (34 bytes with no newline)
      hint: a write was cut short (crash or full disk); `git swarm doctor --fix` saves it aside and truncates it
    Checked 3 events in 1 file: 1 finding open, 0 fixed.
    --- stderr
    hint: `git swarm doctor --fix` repairs torn lines and the index; conflict markers and malformed lines need a person
    ");
    // Reporting changes nothing.
    assert_eq!(
        env.read(".swarm/events/2026-11.jsonl"),
        format!("{complete}{TORN}")
    );

    let run = env.swarm(&["doctor", "--fix"]);
    run.success();
    insta::assert_snapshot!(run.snapshot(), @r"
    [exit 0]
    --- stdout
    .swarm/events/2026-11.jsonl:4:1: fixed: last line is incomplete (34 bytes with no newline)
    .git/swarm/index: fixed: the index is missing, unreadable or older than .swarm/
    Checked 3 events in 1 file: 0 findings open, 2 fixed.
    ");
    // Every complete line survives, byte for byte; the torn bytes are kept aside.
    assert_eq!(env.read(".swarm/events/2026-11.jsonl"), complete);
    let torn_dir = env.path(".swarm/local/torn");
    let saved: Vec<_> = std::fs::read_dir(&torn_dir)
        .expect("torn dir")
        .map(|e| e.expect("entry").path())
        .collect();
    assert_eq!(saved.len(), 1, "{saved:?}");
    let name = saved[0]
        .file_name()
        .expect("name")
        .to_string_lossy()
        .into_owned();
    assert!(name.starts_with("2026-11.jsonl."), "{name}");
    assert_eq!(std::fs::read_to_string(&saved[0]).expect("read"), TORN);
    // local/ is ignored by git.
    assert_eq!(
        env.git(&["status", "--porcelain", "--untracked-files=all"]),
        "?? .swarm/events/2026-11.jsonl\n"
    );

    env.swarm(&["doctor"]).success();
    env.swarm(&["validate"]).success();
    assert_eq!(listed_events(&env, "no-private-keys"), 3);
    // Appends after the repair land on lines of their own.
    env.swarm(&["record", "ack", "--directive", "no-private-keys"])
        .success();
    assert_eq!(env.event_lines().len(), 4);
    env.swarm(&["validate"]).success();
    assert_eq!(listed_events(&env, "no-private-keys"), 4);
}

#[test]
fn a_malformed_line_in_the_middle_is_reported_and_not_repaired() {
    let env = TestEnv::initialised();
    // A torn line that something other than git-swarm followed with a newline
    // and more events: a malformed line in the middle of the file.
    env.write(
        ".swarm/events/2026-11.jsonl",
        format!("{}\n{TORN}\n{}\n", GOOD[0], GOOD[1]),
    );
    env.swarm(&["record", "ack", "--directive", "no-private-keys"])
        .success();
    let lines = env.event_lines();
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[1], TORN);

    let before = env.read(".swarm/events/2026-11.jsonl");
    let run = env.swarm(&["doctor", "--fix"]);
    run.code(1);
    assert!(
        run.stdout.starts_with(
            ".swarm/events/2026-11.jsonl:2:34: error: malformed event: EOF while parsing"
        ),
        "{}",
        run.snapshot()
    );
    assert_eq!(
        env.read(".swarm/events/2026-11.jsonl"),
        before,
        "--fix rewrote a line in the middle"
    );
    assert!(!env.exists(".swarm/local/torn"));
}

#[test]
fn doctor_warns_about_duplicate_ids_and_unknown_kinds() {
    let env = TestEnv::initialised();
    env.write(
        ".swarm/events/2026-11.jsonl",
        [
            GOOD[0],
            r#"{"id":"ev-7","ts":"2026-11-05T00:00:00.000Z","kind":"telepathy"}"#,
            GOOD[0],
            r#"{"id":"ev-8","ts":"2026-11-06T00:00:00.000Z","kind":"telepathy","directive":"no-private-keys"}"#,
        ]
        .iter()
        .map(|l| format!("{l}\n"))
        .collect::<String>(),
    );
    env.write(
        ".swarm/events/2026-10.jsonl",
        format!("{}\n", GOOD[1].replace("2026-11-02", "2026-10-02")),
    );
    append(
        &env,
        ".swarm/events/2026-10.jsonl",
        &format!(
            "{}\n",
            GOOD[2]
                .replace("2026-11-03", "2026-10-03")
                .replace("ev-3", "ev-7")
        ),
    );
    env.swarm(&["list"]).success();
    let run = env.swarm(&["doctor"]);
    run.success();
    insta::assert_snapshot!(run.snapshot(), @r"
    [exit 0]
    --- stdout
    .swarm/events/2026-11.jsonl:2: warning: event id ev-7 was already used at .swarm/events/2026-10.jsonl:2
      hint: harmless: readers fold one copy (a cherry-pick or rebase repeats lines)
    .swarm/events/2026-11.jsonl:3: warning: event id ev-1 was already used at .swarm/events/2026-11.jsonl:1
      hint: harmless: readers fold one copy (a cherry-pick or rebase repeats lines)
    .swarm/events/2026-11.jsonl: warning: 2 event(s) of unknown kind `telepathy`, first at .swarm/events/2026-11.jsonl:2
      hint: kept and ignored: written by a newer git-swarm or another tool
    Checked 6 events in 2 files: 3 findings open, 0 fixed.
    ");
    let v: Value =
        serde_json::from_str(&env.swarm(&["doctor", "--format", "json"]).stdout).expect("JSON");
    let codes: Vec<(&str, &str)> = v["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| {
            (
                f["code"].as_str().unwrap_or(""),
                f["severity"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        codes,
        [
            ("duplicate_id", "warning"),
            ("duplicate_id", "warning"),
            ("unknown_kind", "warning")
        ]
    );
    // Unknown kinds are kept and counted; duplicates fold once. ev-7 is used
    // twice with different contents: the earliest copy (the `ack`) wins, in
    // the index's fold and in `log` alike.
    let shown = env.swarm(&["show", "no-private-keys", "--format", "json"]);
    let v: Value = serde_json::from_str(&shown.stdout).expect("JSON");
    assert_eq!(
        v["events"],
        serde_json::json!({ "shown": 1, "check": 1, "ack": 1, "telepathy": 1 })
    );
    let log: Value =
        serde_json::from_str(&env.swarm(&["log", "--format", "json"]).stdout).expect("JSON");
    let kinds: Vec<(&str, &str)> = log
        .as_array()
        .expect("events")
        .iter()
        .map(|e| {
            (
                e["id"].as_str().unwrap_or(""),
                e["kind"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            ("ev-2", "check"),
            ("ev-7", "ack"),
            ("ev-1", "shown"),
            ("ev-8", "telepathy")
        ]
    );
}

#[test]
fn doctor_needs_an_initialised_store() {
    let env = TestEnv::new();
    for args in [&["doctor"][..], &["index", "status"], &["index", "rebuild"]] {
        let run = env.swarm(args);
        run.code(2);
        assert!(
            run.stderr.starts_with("error: no .swarm/ in $TMP/repo\n"),
            "{}",
            run.snapshot()
        );
    }
    assert!(!env.exists(".git/swarm"));
}

/// The settings decide which event lines count: raising the line limit in
/// config.toml brings a long line into the fold without a manual rebuild.
#[test]
fn a_config_change_refolds_the_events() {
    let env = TestEnv::initialised();
    let long = format!(
        "{{\"id\":\"01KAAAAAAAAAAAAAAAAAAAAAA1\",\"ts\":\"2026-11-01T00:00:00.000Z\",\"kind\":\"note\",\"directive\":\"no-private-keys\",\"text\":\"{}\"}}\n",
        "x".repeat(70_000)
    );
    env.write(".swarm/events/2026-11.jsonl", &long);
    let count = |env: &TestEnv| {
        let run = env.swarm(&["show", "no-private-keys", "--format", "json"]);
        run.success();
        let v: serde_json::Value = serde_json::from_str(&run.stdout).expect("json");
        v["events"]["note"].as_u64().unwrap_or(0)
    };
    assert_eq!(count(&env), 0, "a 70 kB line is over the default limit");
    let config = env
        .read(".swarm/config.toml")
        .replace("max_line_bytes = 65536", "max_line_bytes = 131072");
    env.write(".swarm/config.toml", config);
    assert_eq!(count(&env), 1, "raising the limit must bring the line in");
}

/// A refresh says why it refolds: a config.toml whose stamp changed, or one
/// written too close to the last refresh to tell from its stamp.
#[test]
fn a_refresh_says_whether_config_changed_or_only_may_have() {
    let env = TestEnv::initialised();
    // A minute ahead: however slow the machine, too recent to trust.
    let soon = std::time::SystemTime::now() + std::time::Duration::from_secs(60);
    std::fs::File::open(env.path(".swarm/config.toml"))
        .and_then(|f| f.set_modified(soon))
        .expect("set mtime");
    env.swarm(&["index", "rebuild"]).success();
    let run = env.swarm(&["index", "refresh"]);
    run.success();
    assert!(
        run.stdout
            .contains("config.toml may have changed (written within 2 s of the last refresh)"),
        "{}",
        run.snapshot()
    );
    age(&env, ".swarm/config.toml");
    let mut config = env.read(".swarm/config.toml");
    config.push('\n');
    env.write(".swarm/config.toml", config);
    let run = env.swarm(&["index", "refresh"]);
    assert!(
        run.stdout.contains("rebuilt: config.toml changed in"),
        "{}",
        run.snapshot()
    );
}

/// The index keeps the directives folder's listing and, while the folder's
/// stamp is unchanged, stats only the names it listed: files added, edited
/// in place and removed must all still be seen.
#[test]
fn an_unchanged_directives_folder_is_not_listed_again_yet_changes_are_seen() {
    let env = TestEnv::initialised();
    env.write(
        ".swarm/directives/parser-errors.toml",
        directive_toml(
            "parser-errors",
            "Keep the parser error context when wrapping",
        ),
    );
    age_directives(&env);
    let ids = |env: &TestEnv| -> Vec<String> {
        env.swarm(&["list"])
            .stdout
            .lines()
            .skip(1)
            .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
            .collect()
    };
    assert!(ids(&env).contains(&"parser-errors".to_owned()));
    // Built with an aged folder: the listing is recorded. Edit in place (the
    // folder's mtime does not move) and age the folder again to be sure.
    env.write(
        ".swarm/directives/parser-errors.toml",
        directive_toml(
            "parser-errors",
            "Keep the parser source error when wrapping",
        ),
    );
    age(&env, ".swarm/directives");
    let shown = env.swarm(&["show", "parser-errors"]);
    assert!(
        shown.stdout.contains("parser source error"),
        "{}",
        shown.snapshot()
    );
    let injected = env.swarm(&["inject", "--role", "coder", "--task", "parser error"]);
    injected.success();
    assert!(
        injected.stdout.contains("parser source error"),
        "{}",
        injected.snapshot()
    );
    // A new file and a removed one move the folder's mtime.
    age_directives(&env);
    env.swarm(&["list"]).success();
    env.write(
        ".swarm/directives/fresh-one.toml",
        directive_toml("fresh-one", "A directive written by hand today"),
    );
    std::fs::remove_file(env.path(".swarm/directives/lockfile-with-manifest.toml")).expect("rm");
    let now = ids(&env);
    assert!(now.contains(&"fresh-one".to_owned()), "{now:?}");
    assert!(
        !now.contains(&"lockfile-with-manifest".to_owned()),
        "{now:?}"
    );
}

/// A folder of more than a thousand directives is stat'ed on helper
/// threads, a chunk of names each at a time: every stamp must still land
/// on its own name, so an edit in place is seen wherever the file falls
/// (the first chunk, the middle of one, the short last one) and an
/// unchanged folder is found fresh.
#[test]
fn a_large_directives_folder_is_stamped_on_several_threads_name_by_name() {
    let env = TestEnv::initialised();
    let n = 1_300;
    let id = |i: usize| format!("bulk-{i:04}");
    for i in 0..n {
        env.write(
            &format!(".swarm/directives/{}.toml", id(i)),
            directive_toml(&id(i), &format!("Bulk lesson number {i}")),
        );
    }
    age_directives(&env);
    let listed = env.swarm(&["list"]);
    listed.success();
    assert_eq!(
        listed
            .stdout
            .lines()
            .filter(|l| l.starts_with("bulk-"))
            .count(),
        n
    );
    assert_eq!(status_json(&env, &env.root)["fresh"], true);
    for i in [0, 700, n - 1] {
        env.write(
            &format!(".swarm/directives/{}.toml", id(i)),
            directive_toml(&id(i), &format!("Bulk lesson number {i}, edited")),
        );
    }
    age(&env, ".swarm/directives");
    assert_eq!(status_json(&env, &env.root)["fresh"], false);
    for i in [0, 700, n - 1] {
        let shown = env.swarm(&["show", &id(i)]);
        assert!(
            shown.stdout.contains(&format!("number {i}, edited")),
            "{}",
            shown.snapshot()
        );
    }
    // Neighbours of the edited files are as they were.
    for i in [1, 699, 701, n - 2] {
        let shown = env.swarm(&["show", &id(i)]);
        assert!(
            shown.stdout.contains(&format!("number {i}")) && !shown.stdout.contains("edited"),
            "{}",
            shown.snapshot()
        );
    }
    assert_eq!(status_json(&env, &env.root)["fresh"], true);
}

/// [`one_event_aged_store`] with its event file aged too, and an index
/// written by a reading command: the index's bytes.
fn one_event_indexed(env: &TestEnv) -> Vec<u8> {
    // Files changed within two seconds of a refresh are re-read anyway: age them.
    one_event_aged_store(env);
    age(env, ".swarm/events/2026-11.jsonl");
    env.swarm(&["list"]).success();
    env.index_bytes()
}

/// One `shown` event in `2026-11.jsonl`; the directives and config aged
/// (the event file is left as just written).
fn one_event_aged_store(env: &TestEnv) {
    append(
        env,
        ".swarm/events/2026-11.jsonl",
        &event(
            "ev-0",
            "2026-11-09T00:00:00.000Z",
            "shown",
            "no-private-keys",
        ),
    );
    age_directives(env);
    age(env, ".swarm/config.toml");
}

/// A few appended events are folded by the command that reads them without
/// rewriting the index; `index refresh` writes them in.
#[test]
fn a_few_appended_events_are_folded_without_rewriting_the_index() {
    let env = TestEnv::initialised();
    let before = one_event_indexed(&env);
    let index = || env.index_bytes();
    append(
        &env,
        ".swarm/events/2026-11.jsonl",
        &event(
            "ev-1",
            "2026-11-10T00:00:00.000Z",
            "check",
            "no-private-keys",
        ),
    );
    assert_eq!(listed_events(&env, "no-private-keys"), 2);
    assert!(index() == before, "the index was rewritten for one event");
    append(
        &env,
        ".swarm/events/2026-11.jsonl",
        &event(
            "ev-2",
            "2026-11-11T00:00:00.000Z",
            "check",
            "no-private-keys",
        ),
    );
    assert_eq!(listed_events(&env, "no-private-keys"), 3);
    assert_eq!(status_json(&env, &env.path(""))["fresh"], false);
    let refresh = env.swarm(&["index", "refresh"]);
    refresh.success();
    assert!(
        refresh.stdout.contains("1 event file(s)"),
        "{}",
        refresh.snapshot()
    );
    assert!(index() != before, "index refresh did not write");
    assert_eq!(status_json(&env, &env.path(""))["fresh"], true);
    assert_eq!(listed_events(&env, "no-private-keys"), 3);
}

/// Past an eighth of the index's size (at least 8 KiB) of appended events,
/// the command that reads them writes them in: every command until the
/// next write would fold them again.
#[test]
fn many_appended_events_are_written_in_by_the_command_that_reads_them() {
    let env = TestEnv::initialised();
    let before = one_event_indexed(&env);
    let index = || env.index_bytes();
    assert!(before.len() < 64 * 1024, "{} bytes", before.len());
    // About 11 KiB: over the bound of a small index, under the 64 KiB it was.
    let events: String = (1..=120)
        .map(|i| {
            let ts = format!("2026-11-10T{:02}:{:02}:00.000Z", i / 60, i % 60);
            event(&format!("ev-{i:03}"), &ts, "check", "no-private-keys")
        })
        .collect();
    assert!((8 * 1024..64 * 1024).contains(&events.len()));
    append(&env, ".swarm/events/2026-11.jsonl", &events);
    age(&env, ".swarm/events/2026-11.jsonl");
    assert_eq!(listed_events(&env, "no-private-keys"), 121);
    assert!(index() != before, "the index was not written");
    assert_eq!(status_json(&env, &env.path(""))["fresh"], true);
    assert_eq!(listed_events(&env, "no-private-keys"), 121);
}

/// Files written just before the index was built are re-checked by content
/// until an index is written that records them settled: a reading command
/// writes one even when nothing was appended.
#[test]
fn racy_event_files_are_settled_by_the_next_write() {
    let env = TestEnv::initialised();
    one_event_aged_store(&env);
    env.swarm(&["list"]).success();
    // Built within two seconds of the append: the event file is racy. Once
    // it is older, the next command checks it and writes the index again.
    age(&env, ".swarm/events/2026-11.jsonl");
    env.swarm(&["list"]).success();
    assert_eq!(status_json(&env, &env.path(""))["fresh"], true);
    assert_eq!(listed_events(&env, "no-private-keys"), 1);
}

/// While the same event files are still racy, a write would record nothing
/// new (the next command checks them by content all the same), so reading
/// commands do not rewrite the index; once the files settle, one does.
#[test]
fn a_reading_command_does_not_rewrite_the_index_while_the_same_files_are_racy() {
    let env = TestEnv::initialised();
    one_event_aged_store(&env);
    // Stamped in the future, the event file stays racy however slow the machine.
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(3600);
    std::fs::File::open(env.path(".swarm/events/2026-11.jsonl"))
        .and_then(|f| f.set_modified(later))
        .expect("stamp the event file");
    env.swarm(&["list"]).success();
    let index = || env.index_bytes();
    let before = index();
    assert_eq!(listed_events(&env, "no-private-keys"), 1);
    env.swarm(&["list"]).success();
    assert!(
        index() == before,
        "the index was rewritten while still racy"
    );
    // Settled: the next command writes it, and it is fresh.
    age(&env, ".swarm/events/2026-11.jsonl");
    env.swarm(&["list"]).success();
    assert!(index() != before, "the settled file was not written");
    assert_eq!(status_json(&env, &env.path(""))["fresh"], true);
    assert_eq!(listed_events(&env, "no-private-keys"), 1);
}

/// With the clock fixed (`GIT_SWARM_NOW`, as in reproducible runs) every
/// event has the same time; ids still grow from one command to the next,
/// so the index folds each command's events onto what it has rather than
/// folding the whole log again. (With ids ordered at random, each refresh
/// below had an even chance of a rebuild.)
#[test]
fn events_of_later_commands_sort_later_at_the_same_time() {
    let env = TestEnv::initialised();
    // Only the events change: nothing else is racy.
    age_directives(&env);
    age(&env, ".swarm/config.toml");
    let at = [("GIT_SWARM_NOW", "2026-11-20T12:00:00Z")];
    let mut ids = Vec::new();
    for i in 0..8 {
        let directive = format!("--directive=d{i}");
        env.swarm_with(&["record", "check", &directive], &at, None)
            .success();
        let refresh = env.swarm_with(&["index", "refresh"], &at, None);
        refresh.success();
        if i > 0 {
            assert!(
                !refresh.stdout.contains("rebuilt"),
                "event {i}: {}",
                refresh.stdout
            );
        }
        let last = env.event_lines().pop().expect("an event");
        let event: serde_json::Value = serde_json::from_str(&last).expect("json");
        ids.push(event["id"].as_str().expect("id").to_owned());
    }
    let mut sorted = ids.clone();
    sorted.sort();
    assert_eq!(ids, sorted);
}

/// A check of a staged change or a range folds the events without
/// stat'ing the directive files; when it writes the index, the index must
/// still say fresh for the directives it kept, not look stale to the next
/// command.
#[test]
fn an_index_written_by_a_check_is_fresh() {
    let env = TestEnv::initialised();
    age_directives(&env);
    age(&env, ".swarm/config.toml");
    env.swarm(&["list"]).success();
    // A pattern event makes the check fold the patterns too, and write.
    env.swarm(&[
        "record",
        "pattern_observed",
        "--field",
        "pattern=p1",
        "--field",
        "role=judge",
        "--field",
        "text=The cache key must include the tenant id.",
        "--field",
        "run=r1",
    ])
    .success();
    age(&env, common::PENDING_NOV);
    let before = env.index_bytes();
    env.swarm(&["check", "--staged"]).success();
    let after = env.index_bytes();
    assert!(after != before, "the check did not write the index");
    assert_eq!(status_json(&env, &env.path(""))["fresh"], true);
}

/// A copy of a folded event with a later time (an edited line) sorts after
/// everything folded, but is the same event: the command that folds it
/// counts it once, as a rebuild does (it was counted twice).
#[test]
fn a_copy_of_an_event_with_a_later_time_counts_once() {
    let env = TestEnv::initialised();
    env.swarm_with(
        &["record", "check", "--directive", "no-private-keys"],
        &[("GIT_SWARM_NOW", "2026-11-10T00:00:00Z")],
        None,
    )
    .success();
    let file = common::PENDING_NOV;
    // Aged, so that the copy is folded as an append, not by re-reading the file.
    age_directives(&env);
    age(&env, ".swarm/config.toml");
    age(&env, file);
    env.swarm(&["index", "rebuild"]).success();
    assert_eq!(listed_events(&env, "no-private-keys"), 1);
    let line = env.read(file);
    let copy = line.replace("2026-11-10T00:00:00.000Z", "2026-11-20T00:00:00.000Z");
    assert_ne!(copy, line);
    append(&env, file, &copy);
    assert_eq!(listed_events(&env, "no-private-keys"), 1);
    env.swarm(&["index", "refresh"]).success();
    assert_eq!(listed_events(&env, "no-private-keys"), 1);
    env.swarm(&["index", "rebuild"]).success();
    assert_eq!(listed_events(&env, "no-private-keys"), 1);
    assert_eq!(status_json(&env, &env.root)["duplicates"], 1);
}

/// An edit in place that keeps the size and puts the old mtime back (as
/// `touch -r`, `rsync -t` or a restore does) is still seen: the stamp holds
/// the ctime, which no program can set back.
#[test]
fn an_edit_that_restores_the_mtime_is_seen() {
    let env = TestEnv::initialised();
    let rel = ".swarm/directives/no-private-keys.toml";
    age_directives(&env);
    age(&env, ".swarm/config.toml");
    let mtime = std::fs::metadata(env.path(rel))
        .and_then(|m| m.modified())
        .expect("mtime");
    env.swarm(&["index", "rebuild"]).success();
    let before = env.swarm(&["show", "no-private-keys"]);
    assert!(
        before.stdout.contains("Never commit"),
        "{}",
        before.snapshot()
    );
    let text = env.read(rel);
    let edited = text.replacen("Never commit", "Don't commit", 1);
    assert_eq!(edited.len(), text.len());
    // Written in place: same inode, same size, then the old mtime again.
    std::fs::OpenOptions::new()
        .write(true)
        .open(env.path(rel))
        .and_then(|mut f| {
            std::io::Write::write_all(&mut f, edited.as_bytes())?;
            f.set_modified(mtime)
        })
        .expect("edit in place");
    let after = env.swarm(&["show", "no-private-keys"]);
    assert!(
        after.stdout.contains("Don't commit"),
        "{}",
        after.snapshot()
    );
}

/// A FIFO, or a link to a device, in place of the index (or a cache beside
/// it) is not read — it hung every command, or filled memory from
/// `/dev/zero` — but replaced, like any damaged index.
#[cfg(unix)]
#[test]
fn a_fifo_or_device_in_place_of_the_index_is_replaced_not_read() {
    let env = TestEnv::initialised();
    let good = env.swarm(&["list"]).snapshot();
    let index = env.path(".git/swarm/index");
    for make in ["fifo", "link"] {
        std::fs::remove_file(&index).expect("rm index");
        match make {
            "fifo" => common::mkfifo(&index),
            _ => std::os::unix::fs::symlink("/dev/zero", &index).expect("symlink"),
        }
        assert_eq!(env.swarm(&["list"]).snapshot(), good, "{make}");
        assert!(
            std::fs::symlink_metadata(&index).is_ok_and(|m| m.is_file()),
            "{make}: the index was written in its place"
        );
    }
    // A check that reads the grep_tree cache, a FIFO now.
    env.write(
        ".swarm/directives/tree-rule.toml",
        "id = \"tree-rule\"\nlesson = \"Keep every FIXME out of the tree\"\napplies_to_agents = [\"coder\"]\nverify = [\"grep_tree:FIXME:*.txt\"]\n",
    );
    env.write("a.txt", "fine\n");
    env.git(&["add", "-A"]);
    std::fs::remove_file(env.path(".git/swarm/grep-tree")).ok();
    common::mkfifo(&env.path(".git/swarm/grep-tree"));
    let check = env.swarm(&["check", "--staged", "--directive", "tree-rule"]);
    check.success();
    assert!(check.stdout.contains("1 passed"), "{}", check.snapshot());
    assert!(
        std::fs::symlink_metadata(env.path(".git/swarm/grep-tree")).is_ok_and(|m| m.is_file()),
        "the cache was written in its place"
    );
    // The parse of the staged directives, kept in `swarm/trees/`: a FIFO
    // and a link to /dev/zero in its place are misses, not reads.
    let parses: Vec<_> = std::fs::read_dir(env.path(".git/swarm/trees"))
        .expect("the parse is kept")
        .map(|e| e.expect("entry").path())
        .collect();
    assert!(!parses.is_empty());
    for make in ["fifo", "link"] {
        for path in &parses {
            std::fs::remove_file(path).ok();
            match make {
                "fifo" => common::mkfifo(path),
                _ => std::os::unix::fs::symlink("/dev/zero", path).expect("symlink"),
            }
        }
        let again = env.swarm(&["check", "--staged", "--directive", "tree-rule"]);
        assert_eq!(again.snapshot(), check.snapshot(), "{make}");
    }
}

/// The index keeps the directives folder's names one a line: a file name
/// with a line break (never a directive id) is left out of it, not split
/// into other names, and `validate` reports the file.
#[test]
fn a_file_name_with_a_line_break_is_left_to_validate() {
    let env = TestEnv::initialised();
    env.write(".swarm/directives/odd\nname.toml", "id = \"x\"\n");
    env.write(
        ".swarm/directives/name.toml",
        directive_toml("name", "Name things clearly"),
    );
    let list = env.swarm(&["list"]);
    list.success();
    assert!(list.stdout.contains("name "), "{}", list.snapshot());
    assert!(!list.stdout.contains("odd"), "{}", list.snapshot());
    // Twice: the second run reads the names from the index's listing.
    age_directives(&env);
    env.swarm(&["index", "refresh"]).success();
    let again = env.swarm(&["list"]);
    assert_eq!(again.stdout, list.stdout, "{}", again.snapshot());
    let validate = env.swarm(&["validate"]);
    assert_eq!(validate.code, 2, "{}", validate.snapshot());
    assert!(
        validate.stdout.contains("odd\\nname.toml") || validate.stderr.contains("odd\\nname.toml"),
        "{}",
        validate.snapshot()
    );
}

/// A log of thousands of copies of one line (a rebase gone round in
/// circles, or a pull request's) lists the first copies and counts the
/// rest: `doctor`'s findings are bounded like every reader's problems.
#[test]
fn doctor_lists_the_first_duplicate_ids_and_counts_the_rest() {
    let env = TestEnv::initialised();
    let copies: String = std::iter::repeat_n(format!("{}\n", GOOD[0]), 5_001).collect();
    env.write(".swarm/events/2026-11.jsonl", copies);
    let run = env.swarm(&["doctor"]);
    run.success();
    let listed = run
        .stdout
        .lines()
        .filter(|l| l.contains("warning: event id ev-1 was already used"))
        .count();
    assert_eq!(listed, 100, "{}", run.snapshot());
    assert!(
        run.stdout
            .contains(".swarm/events: warning: … and 4900 more event ids already used"),
        "{}",
        run.snapshot()
    );
}

/// An event naming several directives that have no events yet, not in
/// their order (a `shown` event names them by priority), is counted for
/// each of them when the index takes it in, as a rebuild counts it: an
/// index that inserted their rows one by one counted some on another's.
#[test]
fn an_event_naming_new_directives_out_of_order_counts_for_each_of_them() {
    let env = TestEnv::initialised();
    // An index of a settled store (nothing racy) that holds an event
    // takes the next ones in one by one; a racy log is read whole.
    env.swarm(&["record", "shown", "--directive", "no-verify-bypass"])
        .success();
    for rel in [".swarm/config.toml", common::PENDING, common::PENDING_NOV] {
        age(&env, rel);
    }
    age_directives(&env);
    env.swarm(&["index", "rebuild"]).success();
    let ids = [
        "run-tests-before-handoff",
        "lockfile-with-manifest",
        "no-private-keys",
    ];
    let list = format!("directives={}", serde_json::json!(ids));
    // Later than the first: taken in after it, not refolded with it.
    env.swarm_with(
        &["record", "shown", "--field", &list],
        &[("GIT_SWARM_NOW", "2026-11-23T10:00:00Z")],
        None,
    )
    .success();
    let events = |env: &TestEnv| -> Vec<String> {
        ids.iter()
            .map(|id| {
                let run = env.swarm(&["show", id]);
                run.success();
                let line = run.stdout.lines().find(|l| l.starts_with("events "));
                line.unwrap_or_default().to_owned()
            })
            .collect()
    };
    let taken_in = events(&env);
    for line in &taken_in {
        assert!(line.contains("shown 1 (total 1,"), "{taken_in:#?}");
    }
    env.swarm(&["index", "rebuild"]).success();
    assert_eq!(events(&env), taken_in);
}
