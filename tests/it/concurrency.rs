//! Concurrent appends: many processes appending to one month file at once
//! lose nothing, tear nothing and mint no id twice — and readers running
//! alongside them never fail and end on the right counts.
//!
//! The harness fixes `GIT_SWARM_NOW`, so every event here has the same
//! timestamp: ids must be distinct on their random part alone.

use crate::common;

use std::collections::{HashMap, HashSet};
use std::process::{Child, Stdio};

use common::TestEnv;
use serde_json::Value;

/// Where commands record: the pending log (see `git swarm commit`).
const MONTH_FILE: &str = common::PENDING_NOV;
/// A directive of the template, so `show` and `list` count the events.
const DIRECTIVE: &str = "no-private-keys";

/// Starts `git-swarm record check … --count N` as writer `writer`, without waiting.
fn spawn_writer(env: &TestEnv, writer: usize, count: usize) -> Child {
    env.command(common::bin(), &env.root)
        // Not a violation kind: these writers test appends, not escalation.
        .args([
            "record",
            "note",
            "--custom",
            "--directive",
            DIRECTIVE,
            "--field",
        ])
        .arg(format!("writer={writer}"))
        .arg("--count")
        .arg(count.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn git-swarm record")
}

#[track_caller]
fn wait_all(writers: Vec<Child>) {
    for (i, child) in writers.into_iter().enumerate() {
        let out = child.wait_with_output().expect("wait for writer");
        assert!(
            out.status.success(),
            "writer {i} failed ({}):\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

fn json(stdout: &str) -> Value {
    serde_json::from_str(stdout).unwrap_or_else(|e| panic!("not JSON ({e}):\n{stdout}"))
}

/// Checks the month file line by line: every line a whole event of this
/// test, ids distinct, and each writer's events in the order it appended them.
#[track_caller]
fn check_file(env: &TestEnv, writers: usize, per_writer: usize) {
    let bytes = std::fs::read(env.path(MONTH_FILE)).expect("read month file");
    assert!(bytes.ends_with(b"\n"), "the month file ends mid-line");
    let text = String::from_utf8(bytes).expect("month file is UTF-8");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), writers * per_writer, "line count");

    let mut ids = HashSet::new();
    let mut last_id_of: HashMap<u64, String> = HashMap::new();
    let mut per: HashMap<u64, usize> = HashMap::new();
    for (n, line) in lines.iter().enumerate() {
        let event: Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("{MONTH_FILE}:{}: not JSON ({e}): {line:?}", n + 1));
        let id = event["id"].as_str().expect("id is a string").to_owned();
        assert_eq!(event["ts"], "2026-11-22T10:00:00.000Z", "line {}", n + 1);
        assert_eq!(event["kind"], "note", "line {}", n + 1);
        assert_eq!(event["directive"], DIRECTIVE, "line {}", n + 1);
        let writer = event["writer"].as_u64().expect("writer field");
        // One process mints monotonic ids and appends them one after another.
        if let Some(prev) = last_id_of.insert(writer, id.clone()) {
            assert!(
                prev < id,
                "writer {writer}: {id} (line {}) after {prev}",
                n + 1
            );
        }
        *per.entry(writer).or_default() += 1;
        assert!(ids.insert(id.clone()), "id {id} appears twice");
    }
    assert_eq!(per.len(), writers, "events per writer: {per:?}");
    assert!(per.values().all(|&n| n == per_writer), "{per:?}");
}

/// Checks what the commands say about the log: validate, log, show, index status.
#[track_caller]
fn check_commands(env: &TestEnv, total: u64) {
    let validate = env.swarm(&["validate", "--format", "json"]);
    validate.success();
    let v = json(&validate.stdout);
    assert_eq!(v["events"], total, "{}", validate.stdout);
    assert_eq!(v["errors"], 0, "{}", validate.stdout);

    // The binary directly: `Run` normalises ids, and these must be compared raw.
    let log = env
        .command(common::bin(), &env.root)
        .args(["log", "--format", "json"])
        .output()
        .expect("run git-swarm log");
    assert!(log.status.success(), "log failed");
    assert_eq!(
        String::from_utf8_lossy(&log.stderr),
        "",
        "log reported problems"
    );
    let events: Value = serde_json::from_slice(&log.stdout).expect("log prints JSON");
    let ids: Vec<&str> = events
        .as_array()
        .expect("log is an array")
        .iter()
        .map(|e| e["id"].as_str().expect("id is a string"))
        .collect();
    assert_eq!(ids.len() as u64, total, "events in log");
    // Ordered by (ts, id) with one ts: strictly increasing ids, so each id once.
    assert!(
        ids.windows(2).all(|w| w[0] < w[1]),
        "log is not de-duplicated and ordered by id"
    );

    let show = env.swarm(&["show", DIRECTIVE, "--format", "json"]);
    show.success();
    assert_eq!(
        json(&show.stdout)["events"]["note"],
        total,
        "{}",
        show.stdout
    );

    let status = env.swarm(&["index", "status", "--format", "json"]);
    status.success();
    let s = json(&status.stdout);
    assert_eq!(s["fresh"], true, "{}", status.stdout);
    assert_eq!(s["events"], total, "{}", status.stdout);
    assert_eq!(s["duplicates"], 0, "{}", status.stdout);
}

#[test]
fn sixteen_processes_append_a_thousand_events_each() {
    let env = TestEnv::initialised();
    let writers: Vec<Child> = (0..16).map(|w| spawn_writer(&env, w, 1000)).collect();
    wait_all(writers);
    check_file(&env, 16, 1000);
    check_commands(&env, 16_000);
}

#[test]
fn readers_and_index_rebuilds_alongside_writers_never_fail() {
    let env = TestEnv::initialised();
    // Fold an empty log first, so the readers below refresh an index incrementally.
    env.swarm(&["list"]).success();
    let (writers, per_writer) = (8, 500);
    let total = (writers * per_writer) as u64;
    let children: Vec<Child> = (0..writers)
        .map(|w| spawn_writer(&env, w, per_writer))
        .collect();
    let done = std::sync::atomic::AtomicBool::new(false);

    std::thread::scope(|s| {
        let lister = s.spawn(|| {
            // Counts seen by successive `list` runs: an event once folded stays folded.
            let mut seen = Vec::new();
            loop {
                let finished = done.load(std::sync::atomic::Ordering::SeqCst);
                let run = env.swarm_with(&["list", "--format", "json"], &[], None);
                run.success();
                let rows = json(&run.stdout);
                let row = rows
                    .as_array()
                    .expect("list is an array")
                    .iter()
                    .find(|r| r["id"] == DIRECTIVE)
                    .expect("the directive is listed");
                let n = row["events"]["note"].as_u64().unwrap_or(0);
                assert!(n <= total, "list counted {n} of {total} events");
                seen.push(n);
                if finished {
                    break;
                }
            }
            seen
        });
        let rebuilder = s.spawn(|| {
            let mut runs = 0;
            loop {
                let finished = done.load(std::sync::atomic::Ordering::SeqCst);
                let run = env.swarm_with(&["index", "rebuild", "--format", "json"], &[], None);
                run.success();
                let n = json(&run.stdout)["events"].as_u64().expect("events");
                assert!(n <= total, "rebuild folded {n} of {total} events");
                runs += 1;
                if finished {
                    break;
                }
            }
            runs
        });
        wait_all(children);
        done.store(true, std::sync::atomic::Ordering::SeqCst);
        let seen = lister.join().expect("lister thread");
        assert!(
            seen.windows(2).all(|w| w[0] <= w[1]),
            "a later list saw fewer events: {seen:?}"
        );
        // The last run started after every writer had finished.
        assert_eq!(seen.last(), Some(&total), "{seen:?}");
        assert!(rebuilder.join().expect("rebuilder thread") >= 1);
    });

    check_file(&env, writers, per_writer);
    check_commands(&env, total);
}

/// A held lock makes an append wait and retry; past `events.lock_timeout_ms`
/// it fails loudly (exit 3) and writes nothing, never a silent drop.
#[test]
fn a_held_lock_is_waited_for_then_reported_never_skipped() {
    let env = TestEnv::initialised();
    let month = env.path(MONTH_FILE);
    std::fs::create_dir_all(env.path(common::PENDING)).expect("create the pending log");
    std::fs::write(&month, "").expect("create the month file");
    let config = env
        .read(".swarm/config.toml")
        .replace("lock_timeout_ms = 10000", "lock_timeout_ms = 300");
    env.write(".swarm/config.toml", config);

    let holder = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&month)
        .expect("open");
    holder.lock().expect("take the lock");
    let run = env.swarm(&["record", "check", "--directive", "no-private-keys"]);
    run.code(3);
    assert!(
        run.stderr
            .contains("error: timed out after 0.3 s waiting for the lock on"),
        "{}",
        run.snapshot()
    );
    assert!(
        run.stderr
            .contains("hint: another git-swarm process holds the lock"),
        "{}",
        run.snapshot()
    );
    assert_eq!(
        env.read(MONTH_FILE),
        "",
        "nothing may be written without the lock"
    );

    // Released while the writer waits: the writer retries and the event lands.
    let config = env
        .read(".swarm/config.toml")
        .replace("lock_timeout_ms = 300", "lock_timeout_ms = 10000");
    env.write(".swarm/config.toml", config);
    let release = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(400));
        holder.unlock().expect("unlock");
    });
    let run = env.swarm(&["record", "check", "--directive", "no-private-keys"]);
    release.join().expect("release thread");
    run.success();
    assert_eq!(
        env.event_lines().len(),
        1,
        "the waiting append must land once"
    );
}

/// Eight `check --record` of one change at once record its violation once:
/// each check had read the log before any recorded, and the duplicate test
/// was made outside the lock, so six to eight identical violations were
/// written (and `status` counted them all).
#[test]
fn racing_checks_of_one_change_record_one_violation() {
    let env = TestEnv::initialised();
    env.write(
        ".swarm/directives/warn-todo.toml",
        "id = \"warn-todo\"\nlesson = \"Never leave TODO markers in committed code\"\nenforcement = \"warn\"\napplies_to_agents = [\"coder\"]\nverify = [\"grep:TODO\"]\n",
    );
    env.git(&["add", "-A"]);
    env.git(&["commit", "-q", "-m", "directive"]);
    env.write("a.txt", "TODO\n");
    env.git(&["add", "a.txt"]);
    // Build the index first, so that every check starts at once.
    env.swarm(&["list"]).success();
    let checks: Vec<Child> = (0..8)
        .map(|_| {
            env.command(common::bin(), &env.root)
                .args(["check", "--record"])
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .expect("spawn git-swarm check")
        })
        .collect();
    wait_all(checks);
    let text = std::fs::read_to_string(env.path(MONTH_FILE)).expect("read month file");
    let recorded: Vec<Value> = text
        .lines()
        .map(json)
        .filter(|e| e["kind"] == "check" && e["directive"] == "warn-todo")
        .collect();
    assert_eq!(recorded.len(), 1, "{text}");
    // A later retry records nothing either.
    let run = env.swarm(&["check", "--record"]);
    run.success();
    assert!(!run.stderr.contains("recorded"), "{}", run.snapshot());
}
