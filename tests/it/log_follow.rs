//! `git swarm log --follow`: the log so far, then each event appended by
//! another process as it lands — in a month file created after the follower
//! started too — filtered as `log` filters, each id once, malformed lines
//! reported once on stderr, and a closed pipe ending it with exit 0.

use crate::common;

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use common::TestEnv;
use serde_json::Value;

/// How long an event may take to show: generous for a loaded machine; the
/// follower wakes on inotify at once, or polls every 200 ms.
const DEADLINE: Duration = Duration::from_secs(10);

/// A running `log --follow`, its stdout lines arriving on a channel.
struct Follow {
    child: Child,
    lines: Receiver<String>,
    stderr: std::process::ChildStderr,
}

impl Follow {
    fn start(env: &TestEnv, args: &[&str]) -> Follow {
        let mut cmd = env.command(common::bin(), &env.root);
        cmd.args(["log", "--follow"])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("spawn log --follow");
        let stdout = child.stdout.take().expect("stdout");
        let stderr = child.stderr.take().expect("stderr");
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Follow {
            child,
            lines,
            stderr,
        }
    }

    /// The next line, within the deadline.
    #[track_caller]
    fn next(&self, waiting_for: &str) -> String {
        match self.lines.recv_timeout(DEADLINE) {
            Ok(line) => line,
            Err(RecvTimeoutError::Timeout) => panic!("no line within {DEADLINE:?}: {waiting_for}"),
            Err(RecvTimeoutError::Disconnected) => panic!("the follower exited: {waiting_for}"),
        }
    }

    /// The next event's (id-free) kind and directive, as JSON shows them.
    #[track_caller]
    fn next_event(&self, waiting_for: &str) -> Value {
        let line = self.next(waiting_for);
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not one JSON object ({e}): {line}"))
    }

    /// Nothing more arrives for a while (used after a line that must not print).
    #[track_caller]
    fn quiet_for(&self, d: Duration, why: &str) {
        if let Ok(line) = self.lines.recv_timeout(d) {
            panic!("{why}, yet it printed: {line}");
        }
    }

    /// Stops the follower and returns what it wrote on stderr.
    fn stop(mut self) -> String {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let mut err = String::new();
        let _ = self.stderr.read_to_string(&mut err);
        err
    }
}

fn record(env: &TestEnv, now: &str, args: &[&str]) {
    let mut all = vec!["record"];
    all.extend_from_slice(args);
    env.swarm_with(&all, &[("GIT_SWARM_NOW", now)], None)
        .success();
}

fn append(env: &TestEnv, rel: &str, text: &str) {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(env.path(rel))
        .expect("open event file");
    f.write_all(text.as_bytes()).expect("append");
}

#[test]
fn follow_prints_new_events_across_a_new_month_once_each() {
    let env = TestEnv::initialised();
    record(
        &env,
        "2026-11-20T10:00:00Z",
        &["added", "--directive", "old-one", "--field", "path=x"],
    );
    let follow = Follow::start(&env, &["--format", "json"]);
    let first = follow.next_event("the event already in the log");
    assert_eq!(first["directive"], "old-one");

    // Appended by another process, in this month's file.
    record(
        &env,
        "2026-11-30T23:59:00Z",
        &["retired", "--directive", "late-nov", "--field", "reason=r"],
    );
    let e = follow.next_event("an event recorded in November");
    assert_eq!(
        (e["kind"].as_str(), e["directive"].as_str()),
        (Some("retired"), Some("late-nov"))
    );

    // The next month's file does not exist yet: the follower sees it created
    // (in the pending log, where commands record).
    let dec = ".git/swarm/pending/2026-12.jsonl";
    assert!(!env.exists(dec));
    record(
        &env,
        "2026-12-01T00:01:00Z",
        &["retired", "--directive", "early-dec", "--field", "reason=r"],
    );
    assert!(env.exists(dec));
    let e = follow.next_event("an event recorded in a new month file");
    assert_eq!(e["directive"], "early-dec");

    // A copy of a line already seen (a union merge, a pull: in a tracked
    // file) prints nothing; a malformed line is reported, and a good line
    // after both still prints.
    let copy = env.read(dec);
    append(&env, ".swarm/events/2026-11.jsonl", &copy);
    append(&env, dec, "not json\n");
    record(
        &env,
        "2026-12-02T00:00:00Z",
        &[
            "retired",
            "--directive",
            "after-copy",
            "--field",
            "reason=r",
        ],
    );
    let e = follow.next_event("the event after the copy");
    assert_eq!(e["directive"], "after-copy", "the copy printed twice");

    // A torn line prints nothing until its newline lands.
    let line = r#"{"id":"01KTORNTORNTORNTORNTORNTOR","ts":"2026-12-03T00:00:00.000Z","kind":"retired","directive":"torn-then-whole","reason":"r"}"#;
    let (head, rest) = line.split_at(40);
    append(&env, dec, head);
    follow.quiet_for(Duration::from_millis(1500), "half a line was written");
    append(&env, dec, &format!("{rest}\n"));
    let e = follow.next_event("the torn line once whole");
    assert_eq!(e["directive"], "torn-then-whole");
    follow.quiet_for(Duration::from_millis(500), "nothing else was appended");

    let stderr = follow.stop();
    let reports: Vec<&str> = stderr.lines().filter(|l| l.contains("error:")).collect();
    assert_eq!(
        reports.len(),
        1,
        "the malformed line is reported once:\n{stderr}"
    );
    assert!(
        reports[0].contains(".git/swarm/pending/2026-12.jsonl:2:"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("incomplete"),
        "a line being written is no problem:\n{stderr}"
    );
}

#[test]
fn follow_applies_the_filters_and_n() {
    let env = TestEnv::initialised();
    for d in ["one", "two", "three"] {
        record(
            &env,
            "2026-11-20T10:00:00Z",
            &["retired", "--directive", d, "--field", "reason=r"],
        );
    }
    let follow = Follow::start(
        &env,
        &[
            "--format",
            "json",
            "--kind",
            "retired",
            "--directive",
            "watched",
            "-n",
            "1",
        ],
    );
    let also = Follow::start(&env, &["--format", "json", "-n", "1", "--kind", "retired"]);
    let last = also.next_event("the last of the three");
    assert_eq!(last["directive"], "three");
    also.quiet_for(
        Duration::from_millis(300),
        "-n 1 shows one event of the log",
    );

    record(
        &env,
        "2026-11-21T10:00:00Z",
        &["retired", "--directive", "other", "--field", "reason=r"],
    );
    record(
        &env,
        "2026-11-21T10:00:00Z",
        &["added", "--directive", "watched", "--field", "path=x"],
    );
    record(
        &env,
        "2026-11-21T10:00:00Z",
        &["retired", "--directive", "watched", "--field", "reason=r"],
    );
    let e = follow.next_event("the one event that passes every filter");
    assert_eq!(
        (e["kind"].as_str(), e["directive"].as_str()),
        (Some("retired"), Some("watched"))
    );
    follow.quiet_for(Duration::from_millis(500), "the other events do not match");
    assert_eq!(also.next_event("retired other")["directive"], "other");
    assert_eq!(also.next_event("retired watched")["directive"], "watched");
    follow.stop();
    also.stop();
}

#[test]
fn a_closed_pipe_ends_follow_quietly() {
    let env = TestEnv::initialised();
    record(
        &env,
        "2026-11-20T10:00:00Z",
        &["added", "--directive", "first", "--field", "path=x"],
    );
    let mut cmd = env.command(common::bin(), &env.root);
    cmd.args(["log", "--follow"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("spawn");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut line = String::new();
    stdout.read_line(&mut line).expect("first line");
    assert!(line.contains("first"), "{line}");
    // The reader goes away, as `| head -1` does; the next event ends it.
    drop(stdout);
    record(
        &env,
        "2026-11-21T10:00:00Z",
        &["added", "--directive", "second", "--field", "path=x"],
    );
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if start.elapsed() > DEADLINE {
            let _ = child.kill();
            panic!("log --follow kept running after its reader left");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut err = String::new();
    child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut err)
        .expect("stderr");
    assert_eq!(status.code(), Some(0), "stderr:\n{err}");
    assert_eq!(err, "", "a closed pipe is not an error");
}

/// A pull that replaces a month file with one holding a line merged in
/// before what was read (local A,B; the clone merged A,C,B): C prints, and
/// no half line is reported. The file is rewritten in place, as a file
/// system that hands the new file the old inode leaves it, then replaced
/// by a rename over it.
#[test]
fn a_line_merged_in_before_the_offset_prints_when_the_file_is_replaced() {
    let env = TestEnv::initialised();
    let nov = ".swarm/events/2026-11.jsonl";
    let line = |id: &str, day: u8, name: &str| {
        format!(
            r#"{{"id":"{id}","ts":"2026-11-{day:02}T00:00:00.000Z","kind":"retired","directive":"{name}","reason":"r"}}"#
        ) + "\n"
    };
    let a = line("01KAAAAAAAAAAAAAAAAAAAAAAA", 1, "a");
    let b = line("01KBBBBBBBBBBBBBBBBBBBBBBB", 3, "b");
    let c = line("01KCCCCCCCCCCCCCCCCCCCCCCC", 2, "c");
    let d = line("01KDDDDDDDDDDDDDDDDDDDDDDD", 4, "d");
    env.write(nov, a.clone() + &b);
    let follow = Follow::start(&env, &["--format", "json"]);
    assert_eq!(follow.next_event("a")["directive"], "a");
    assert_eq!(follow.next_event("b")["directive"], "b");

    // Rewritten in place: the same inode, a line before the old offset.
    std::fs::write(env.path(nov), a.clone() + &c + &b).expect("rewrite");
    assert_eq!(follow.next_event("c, merged in before b")["directive"], "c");

    // Replaced by a rename over it, another line before the offset.
    let tmp = env.path(".swarm/events/tmp-replace");
    std::fs::write(&tmp, a.clone() + &d + &c + &b).expect("write");
    std::fs::rename(&tmp, env.path(nov)).expect("rename");
    assert_eq!(follow.next_event("d, merged in before c")["directive"], "d");
    follow.quiet_for(Duration::from_millis(500), "nothing else is new");
    let stderr = follow.stop();
    assert!(!stderr.contains("error:"), "no problem:\n{stderr}");
}
