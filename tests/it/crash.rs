//! Crashes: a writer killed with SIGKILL in the middle of a stream of
//! appends loses no complete line; a torn final line is reported by `doctor`
//! and repaired by `doctor --fix` (its bytes saved aside, nothing else lost),
//! and an append after a torn line saves it aside and appends to a whole log.

use crate::common;

use std::collections::HashSet;
use std::os::unix::process::ExitStatusExt;
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::TestEnv;
use serde_json::Value;

/// Where the commands below append: the pending log.
const MONTH_FILE: &str = common::PENDING_NOV;
const DIRECTIVE: &str = "no-private-keys";

fn month_bytes(env: &TestEnv) -> Vec<u8> {
    match std::fs::read(env.path(MONTH_FILE)) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => panic!("read {MONTH_FILE}: {e}"),
    }
}

/// The bytes up to and including the last newline: the complete lines.
fn complete_prefix(bytes: &[u8]) -> &[u8] {
    let keep = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    &bytes[..keep]
}

/// Parses every complete line as an event; returns the ids in file order.
#[track_caller]
fn complete_event_ids(bytes: &[u8]) -> Vec<String> {
    let text = std::str::from_utf8(complete_prefix(bytes)).expect("complete lines are UTF-8");
    text.lines()
        .enumerate()
        .map(|(n, line)| {
            let e: Value = serde_json::from_str(line).unwrap_or_else(|err| {
                panic!("{MONTH_FILE}:{}: not an event ({err}): {line:?}", n + 1)
            });
            for key in ["ts", "kind"] {
                assert!(
                    e[key].is_string(),
                    "{MONTH_FILE}:{}: no `{key}`: {line}",
                    n + 1
                );
            }
            e["id"]
                .as_str()
                .unwrap_or_else(|| panic!("{MONTH_FILE}:{}: no `id`: {line}", n + 1))
                .to_owned()
        })
        .collect()
}

/// Where torn tails are saved: by an append to the pending log, beside it
/// in the git dir; by `doctor --fix`, in `.swarm/local/torn/`.
const TORN_DIRS: [&str; 2] = [".git/swarm/local/torn", ".swarm/local/torn"];

/// Saved torn tails, sorted by name.
fn torn_files(env: &TestEnv) -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = TORN_DIRS
        .iter()
        .flat_map(|dir| {
            std::fs::read_dir(env.path(dir))
                .map(|d| d.filter_map(|e| e.ok()).map(|e| e.path()).collect())
                .unwrap_or_else(|_| Vec::new())
        })
        .collect();
    files.sort();
    files
}

/// `git swarm log --format json`, ids raw (not normalised).
fn log_ids(env: &TestEnv) -> Vec<String> {
    let out = env
        .command(common::bin(), &env.root)
        .args(["log", "--format", "json"])
        .output()
        .expect("run git-swarm log");
    assert!(out.status.success(), "log failed");
    let v: Value = serde_json::from_slice(&out.stdout).expect("log prints JSON");
    v.as_array()
        .expect("array")
        .iter()
        .map(|e| e["id"].as_str().expect("id").to_owned())
        .collect()
}

#[test]
fn writers_killed_mid_stream_lose_no_complete_line() {
    let env = TestEnv::initialised();
    let mut kills = 0;
    for round in 0..20u64 {
        let before = month_bytes(&env);
        let mut writer = env
            .command(common::bin(), &env.root)
            .args([
                "record",
                "note",
                "--custom",
                "--directive",
                DIRECTIVE,
                "--field",
            ])
            .arg(format!("round={round}"))
            .args(["--count", "100000"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn git-swarm record");
        // Kill it mid-stream: only once it has appended, then after 5–50 ms.
        let started = Instant::now();
        while std::fs::metadata(env.path(MONTH_FILE)).map_or(0, |m| m.len()) <= before.len() as u64
        {
            if let Some(status) = writer.try_wait().expect("poll writer") {
                panic!("round {round}: the writer exited ({status}) before appending");
            }
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "round {round}: the writer appended nothing"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        std::thread::sleep(Duration::from_millis(5 + round * 17 % 46));
        writer.kill().expect("kill writer");
        let status = writer.wait().expect("reap writer");
        if status.signal() == Some(9) {
            kills += 1;
        }

        let after = month_bytes(&env);
        assert!(
            after.starts_with(complete_prefix(&before)),
            "round {round}: a complete line written before this round changed"
        );
    }
    // 100,000 appends take far longer than 50 ms; were one to finish, the
    // test would not be testing a crash.
    assert_eq!(kills, 20, "not every writer was killed mid-stream");

    let bytes = month_bytes(&env);
    let ids = complete_event_ids(&bytes);
    assert!(!ids.is_empty());
    assert_eq!(
        ids.iter().collect::<HashSet<_>>().len(),
        ids.len(),
        "an id appears twice"
    );
    let torn = bytes.len() - complete_prefix(&bytes).len();

    let doctor = env.swarm(&["doctor"]);
    if torn > 0 {
        doctor.code(1);
        let at = format!("{MONTH_FILE}:{}:1:", ids.len() + 1);
        assert!(doctor.stdout.contains(&at), "{}", doctor.snapshot());
        env.swarm(&["validate"]).code(2);
        env.swarm(&["doctor", "--fix"]).success();
        // Earlier torn tails were set aside by the next round's first append;
        // this one by --fix. Whichever did it, the bytes are kept.
        let saved = torn_files(&env);
        assert!(
            saved
                .iter()
                .any(|f| std::fs::read(f).expect("read saved tail") == bytes[bytes.len() - torn..]),
            "{saved:?}"
        );
    } else {
        doctor.success();
        // At most a stale-index warning: nothing torn, nothing malformed.
        assert!(!doctor.stdout.contains("error:"), "{}", doctor.snapshot());
    }
    let fixed = month_bytes(&env);
    assert_eq!(fixed, complete_prefix(&bytes), "a complete line was lost");
    env.swarm(&["validate"]).success();
    env.swarm(&["doctor"]).success();
    let logged = log_ids(&env);
    assert_eq!(logged.len(), ids.len());
    assert_eq!(
        logged.iter().collect::<HashSet<_>>(),
        ids.iter().collect::<HashSet<_>>()
    );
}

/// Cuts `n` bytes off the end of the month file, leaving a torn last line.
fn tear(env: &TestEnv, n: usize) -> Vec<u8> {
    let bytes = month_bytes(env);
    let cut = bytes.len() - n;
    assert!(
        bytes.ends_with(b"\n") && !bytes[cut..bytes.len() - 1].contains(&b'\n'),
        "cutting {n} bytes would not leave one torn line"
    );
    std::fs::write(env.path(MONTH_FILE), &bytes[..cut]).expect("truncate");
    bytes[..cut].to_vec()
}

#[test]
fn doctor_reports_a_torn_tail_and_fix_saves_it_aside() {
    let env = TestEnv::initialised();
    env.swarm(&[
        "record",
        "note",
        "--custom",
        "--directive",
        DIRECTIVE,
        "--count",
        "10",
    ])
    .success();
    let torn = tear(&env, 20);
    let tail = torn[complete_prefix(&torn).len()..].to_vec();
    let ids = complete_event_ids(&torn);
    assert_eq!(ids.len(), 9);

    let doctor = env.swarm(&["doctor"]);
    doctor.code(1);
    assert!(
        doctor.stdout.contains(&format!(
            "{MONTH_FILE}:10:1: error: last line is incomplete ({} bytes with no newline)",
            tail.len()
        )),
        "{}",
        doctor.snapshot()
    );
    assert!(
        doctor.stderr.contains("doctor --fix"),
        "{}",
        doctor.snapshot()
    );
    assert_eq!(
        month_bytes(&env),
        torn,
        "doctor without --fix changed the log"
    );

    let fix = env.swarm(&["doctor", "--fix"]);
    fix.success();
    assert!(
        fix.stdout.contains(&format!(
            "{MONTH_FILE}:10:1: fixed: last line is incomplete"
        )),
        "{}",
        fix.snapshot()
    );
    assert_eq!(month_bytes(&env), complete_prefix(&torn));
    let saved = torn_files(&env);
    assert_eq!(saved.len(), 1, "{saved:?}");
    assert_eq!(std::fs::read(&saved[0]).expect("read saved tail"), tail);
    env.swarm(&["validate"]).success();
    env.swarm(&["doctor"]).success();
    assert_eq!(log_ids(&env), ids);

    // A second crash and repair, within the same (fixed) millisecond: the
    // first saved tail is kept and the second is saved beside it.
    env.swarm(&["record", "note", "--custom", "--directive", DIRECTIVE])
        .success();
    let torn2 = tear(&env, 7);
    let tail2 = torn2[complete_prefix(&torn2).len()..].to_vec();
    env.swarm(&["doctor"]).code(1);
    env.swarm(&["doctor", "--fix"]).success();
    assert_eq!(month_bytes(&env), complete_prefix(&torn2));
    let saved = torn_files(&env);
    assert_eq!(saved.len(), 2, "{saved:?}");
    let contents: HashSet<Vec<u8>> = saved
        .iter()
        .map(|p| std::fs::read(p).expect("read saved tail"))
        .collect();
    assert_eq!(contents, HashSet::from([tail, tail2]));
    env.swarm(&["validate"]).success();
}

#[test]
fn an_append_after_a_torn_tail_saves_it_aside_and_starts_clean() {
    let env = TestEnv::initialised();
    env.swarm(&[
        "record",
        "note",
        "--custom",
        "--directive",
        DIRECTIVE,
        "--count",
        "3",
    ])
    .success();
    let torn = tear(&env, 30);
    let complete = complete_prefix(&torn).to_vec();
    let tail = torn[complete.len()..].to_vec();

    // Under the lock no writer can be mid-line, so the torn bytes are a dead
    // writer's: the append keeps them aside and the log stays whole.
    let out = env
        .command(common::bin(), &env.root)
        .args(["record", "outcome", "--directive", DIRECTIVE, "--print-ids"])
        .output()
        .expect("run git-swarm record");
    assert!(out.status.success(), "record after a torn tail failed");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("warning: an incomplete line at the end of the event log (a write cut short) was moved to .git/swarm/local/torn/"),
        "the move is reported: {stderr}"
    );
    let new_id = String::from_utf8(out.stdout).expect("UTF-8");
    let new_id = new_id.trim();

    let text = String::from_utf8(month_bytes(&env)).expect("UTF-8");
    assert!(
        text.starts_with(std::str::from_utf8(&complete).expect("UTF-8")),
        "complete lines kept as they were"
    );
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    let new: Value = serde_json::from_str(lines[2]).expect("the new event is a whole line");
    assert_eq!(new["id"], new_id);
    let saved = torn_files(&env);
    assert_eq!(saved.len(), 1);
    assert_eq!(
        std::fs::read(&saved[0]).expect("read saved"),
        tail,
        "the torn bytes are kept, byte for byte"
    );

    env.swarm(&["validate"]).success();
    let logged = log_ids(&env);
    assert_eq!(logged.len(), 3);
    assert!(logged.iter().any(|id| id == new_id), "{logged:?}");
}

/// A committed symlink in place of an event file (a pull request can hold
/// one) is never written through: recording goes to the pending log, and
/// `git swarm commit` refuses it (bad input). A link in the pending log's
/// place is refused by the append itself. A FIFO is skipped and reported
/// by readers, not waited on.
#[cfg(unix)]
#[test]
fn an_event_file_that_is_not_a_plain_file_is_refused() {
    let env = TestEnv::initialised();
    let outside = env.tmp.path().join("victim.txt");
    std::fs::write(&outside, "line one\nlast line without newline").expect("write");
    let untouched = |run: &common::Run| {
        assert_eq!(
            std::fs::read_to_string(&outside).expect("read"),
            "line one\nlast line without newline",
            "the file outside the repository is untouched: {}",
            run.snapshot()
        );
    };
    std::os::unix::fs::symlink(&outside, env.path(".swarm/events/2026-11.jsonl")).expect("symlink");
    env.git(&["add", "-A"]);
    env.git(&["commit", "-q", "-m", "a link in the log"]);
    let run = env.swarm(&["record", "note", "--custom"]);
    common::assert_no_panic(&run);
    run.success();
    untouched(&run);
    let run = env.swarm(&["commit"]);
    common::assert_no_panic(&run);
    run.code(2);
    assert!(
        run.stderr.contains("not a regular file"),
        "{}",
        run.snapshot()
    );
    untouched(&run);
    assert_eq!(
        env.read(MONTH_FILE).lines().count(),
        1,
        "the event is still pending"
    );

    std::fs::remove_file(env.path(MONTH_FILE)).expect("rm");
    std::os::unix::fs::symlink(&outside, env.path(MONTH_FILE)).expect("symlink");
    let run = env.swarm(&["record", "note", "--custom"]);
    common::assert_no_panic(&run);
    run.code(2);
    assert!(
        run.stderr.contains("not a regular file"),
        "{}",
        run.snapshot()
    );
    untouched(&run);

    std::fs::remove_file(env.path(".swarm/events/2026-11.jsonl")).expect("rm");
    let fifo = env.path(".swarm/events/2026-10.jsonl");
    common::mkfifo(&fifo);
    let run = env.swarm(&["log"]);
    common::assert_no_panic(&run);
    run.code(0);
    assert!(
        run.stderr
            .contains("2026-10.jsonl: error: a FIFO (named pipe), not a regular file"),
        "{}",
        run.snapshot()
    );
}

/// A whole event that only lacks its newline (written by hand or by
/// another tool) stays in the log when the next event is appended.
#[test]
fn a_last_event_without_its_newline_is_kept() {
    let env = TestEnv::initialised();
    let line = r#"{"id":"01M84SRTBFRXAZJDSYBEX40AAA","ts":"2026-11-20T10:00:00.000Z","kind":"note","directive":"no-private-keys"}"#;
    std::fs::create_dir_all(env.path(common::PENDING)).expect("mkdir");
    env.write(MONTH_FILE, line);
    let run = env.swarm(&["record", "note", "--custom"]);
    run.success();
    assert_eq!(run.stderr, "", "nothing was set aside");
    let lines = env.event_lines();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(lines[0], line);
    assert!(torn_files(&env).is_empty());
}
