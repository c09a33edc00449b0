//! `git swarm index watch`: a watcher that vouches for the directive files,
//! so that commands skip stat'ing them, and must never vouch for a change
//! it has not seen.
#![cfg(target_os = "linux")]

use crate::common;

use common::{Run, TestEnv, age, age_directives, directive_toml};

const VOUCHED: &str = "scan (directive files vouched for by the watcher)";

/// Stops the watcher of a test however the test ends.
struct Watching<'a>(&'a TestEnv);

impl Watching<'_> {
    fn start(env: &TestEnv) -> Watching<'_> {
        let run = env.swarm(&["index", "watch", "--detach"]);
        run.success();
        assert!(
            run.stdout.starts_with("Started the watcher (pid "),
            "{}",
            run.snapshot()
        );
        Watching(env)
    }
}

impl Drop for Watching<'_> {
    fn drop(&mut self) {
        let _ = self.0.swarm(&["index", "watch", "--stop"]);
    }
}

/// Runs `args` with phase timings on: whether the watcher vouched shows there.
fn traced(env: &TestEnv, args: &[&str]) -> (Run, bool) {
    let run = env.swarm_with(args, &[("GIT_SWARM_TRACE_PERF", "1")], None);
    run.success();
    let vouched = run.stderr.contains(VOUCHED);
    (run, vouched)
}

fn show(env: &TestEnv, id: &str) -> (String, bool) {
    let (run, vouched) = traced(env, &["show", id]);
    (run.stdout, vouched)
}

fn listed(env: &TestEnv) -> (Vec<String>, bool) {
    let (run, vouched) = traced(env, &["list"]);
    let ids = run
        .stdout
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
        .collect();
    (ids, vouched)
}

/// An aged store (nothing racy) with one directive of our own.
fn store() -> TestEnv {
    let env = TestEnv::initialised();
    env.write(
        ".swarm/directives/parser-errors.toml",
        directive_toml("parser-errors", "Keep the parser error context"),
    );
    age_directives(&env);
    age(&env, ".swarm/config.toml");
    env
}

/// The first command after a change stats the files (the watcher saw the
/// change); the one after it is vouched for again.
#[track_caller]
fn settles(env: &TestEnv) {
    let (_, vouched) = listed(env);
    assert!(!vouched, "vouched for right after a change");
    vouched_next(env);
}

/// The next command takes the files on the watcher's word.
#[track_caller]
fn vouched_next(env: &TestEnv) {
    let (_, vouched) = listed(env);
    assert!(vouched, "not vouched for once settled");
}

#[test]
fn a_watched_store_skips_the_stat_and_still_sees_every_change() {
    let env = store();
    let _w = Watching::start(&env);
    let status = env.swarm(&["index", "status"]);
    assert!(
        status.stdout.contains("watcher:     pid ")
            && status.stdout.contains("vouching for the directive files"),
        "{}",
        status.snapshot()
    );
    // The first command stats the files and records what it found; the
    // next ones take them on the watcher's word.
    let (_, vouched) = listed(&env);
    assert!(!vouched);
    let (_, vouched) = traced(&env, &["inject", "--role", "coder", "--task", "parser"]);
    assert!(vouched);

    // Edited in place, same size, the old mtime put back: only the ctime
    // and the watcher tell. With the watcher vouching, it alone does.
    let rel = ".swarm/directives/parser-errors.toml";
    let text = env.read(rel);
    let edited = text.replacen("error context", "error message", 1);
    assert_eq!(edited.len(), text.len());
    std::fs::OpenOptions::new()
        .write(true)
        .open(env.path(rel))
        .and_then(|mut f| std::io::Write::write_all(&mut f, edited.as_bytes()))
        .expect("edit in place");
    age(&env, rel);
    let (out, vouched) = show(&env, "parser-errors");
    assert!(!vouched);
    assert!(out.contains("error message"), "{out}");
    vouched_next(&env);

    // A file added, one removed, one renamed.
    env.write(
        ".swarm/directives/fresh-one.toml",
        directive_toml("fresh-one", "Written by hand today"),
    );
    age(&env, ".swarm/directives/fresh-one.toml");
    let (ids, vouched) = listed(&env);
    assert!(!vouched);
    assert!(ids.contains(&"fresh-one".to_owned()), "{ids:?}");
    vouched_next(&env);
    std::fs::remove_file(env.path(".swarm/directives/fresh-one.toml")).expect("rm");
    let (ids, vouched) = listed(&env);
    assert!(!vouched);
    assert!(!ids.contains(&"fresh-one".to_owned()), "{ids:?}");
    vouched_next(&env);
    std::fs::rename(
        env.path(".swarm/directives/parser-errors.toml"),
        env.path(".swarm/directives/parser-errors.toml.off"),
    )
    .expect("rename");
    let (ids, vouched) = listed(&env);
    assert!(!vouched);
    assert!(!ids.contains(&"parser-errors".to_owned()), "{ids:?}");
    vouched_next(&env);

    // A quarantined entry counts too.
    env.write(
        ".swarm/quarantine/held.toml",
        directive_toml("held", "Held for review"),
    );
    age(&env, ".swarm/quarantine/held.toml");
    settles(&env);
    let run = env.swarm(&["index", "status", "--format", "json"]);
    let json: serde_json::Value = serde_json::from_str(&run.stdout).expect("JSON");
    assert_eq!(json["quarantined"], 1, "{}", run.stdout);
    assert_eq!(json["fresh"], true, "{}", run.stdout);
    assert_eq!(json["watcher"]["vouching"], true, "{}", run.stdout);
}

/// A folder replaced (as a checkout of another branch may do) is watched
/// anew: edits in the new folder are seen.
#[test]
fn a_directives_folder_replaced_is_watched_anew() {
    let env = store();
    let _w = Watching::start(&env);
    settles(&env);
    let dir = env.path(".swarm/directives");
    std::fs::rename(&dir, env.path(".swarm/directives-old")).expect("rename");
    std::fs::create_dir(&dir).expect("mkdir");
    env.write(
        ".swarm/directives/only-one.toml",
        directive_toml("only-one", "The only lesson left"),
    );
    age_directives(&env);
    let (ids, vouched) = listed(&env);
    assert!(!vouched);
    assert_eq!(ids, vec!["only-one".to_owned()]);
    vouched_next(&env);
    // In the new folder, an edit is seen; in the old one, nothing matters.
    env.write(
        ".swarm/directives/only-one.toml",
        directive_toml("only-one", "The only lesson, edited"),
    );
    age_directives(&env);
    let (out, vouched) = show(&env, "only-one");
    assert!(!vouched);
    assert!(out.contains("lesson, edited"), "{out}");
    vouched_next(&env);
}

/// An entry that is a symbolic link changes where no watch sees it: the
/// watcher says it cannot vouch, and commands stat the files.
#[test]
fn the_watcher_does_not_vouch_for_a_linked_entry() {
    let env = store();
    env.write(
        "elsewhere/linked.toml",
        directive_toml("linked", "A lesson kept elsewhere"),
    );
    std::os::unix::fs::symlink(
        "../../elsewhere/linked.toml",
        env.path(".swarm/directives/linked.toml"),
    )
    .expect("symlink");
    let started = env.swarm(&["index", "watch", "--detach"]);
    started.success();
    let _w = Watching(&env);
    assert!(
        started.stderr.contains("does not vouch")
            && started.stderr.contains(".swarm/directives/linked.toml"),
        "{}",
        started.snapshot()
    );
    listed(&env);
    let (_, vouched) = listed(&env);
    assert!(!vouched);
    // Its target is never read: the entry is reported, not loaded.
    let run = env.swarm(&["show", "linked"]);
    run.code(2);
    assert!(
        run.stderr
            .contains("linked.toml: error: a symbolic link, not a regular file"),
        "{}",
        run.snapshot()
    );
    // Once the link is gone, it vouches again.
    std::fs::remove_file(env.path(".swarm/directives/linked.toml")).expect("rm");
    age(&env, ".swarm/directives");
    settles(&env);
}

/// A write through another name of a directive file (a hard link made
/// after the watcher looked) reaches no watch of the folder: the file's own
/// watch sees it.
#[test]
fn a_write_through_a_hard_link_made_later_is_seen() {
    let env = store();
    let _w = Watching::start(&env);
    settles(&env);
    std::fs::create_dir_all(env.path("elsewhere")).expect("mkdir");
    std::fs::hard_link(
        env.path(".swarm/directives/parser-errors.toml"),
        env.path("elsewhere/other-name.toml"),
    )
    .expect("link");
    // The link itself changes the file's link count (and ctime): seen.
    settles(&env);
    let text = env.read("elsewhere/other-name.toml");
    let edited = text.replacen("error context", "error message", 1);
    std::fs::OpenOptions::new()
        .write(true)
        .open(env.path("elsewhere/other-name.toml"))
        .and_then(|mut f| std::io::Write::write_all(&mut f, edited.as_bytes()))
        .expect("edit in place");
    age(&env, "elsewhere/other-name.toml");
    let (out, vouched) = show(&env, "parser-errors");
    assert!(!vouched);
    assert!(out.contains("error message"), "{out}");
    vouched_next(&env);
}

/// A folder that is a symbolic link can be swapped, or a path it goes
/// through, where no watch sees it: the watcher does not vouch.
#[test]
fn the_watcher_does_not_vouch_for_a_linked_folder() {
    let env = store();
    std::fs::rename(env.path(".swarm/quarantine"), env.path("held")).expect("move");
    std::os::unix::fs::symlink("../held", env.path(".swarm/quarantine")).expect("symlink");
    let started = env.swarm(&["index", "watch", "--detach"]);
    started.success();
    let _w = Watching(&env);
    assert!(
        started
            .stderr
            .contains(".swarm/quarantine is a symbolic link"),
        "{}",
        started.snapshot()
    );
    listed(&env);
    let (_, vouched) = listed(&env);
    assert!(!vouched);
}

/// A watcher that stopped and started again is another watcher: what the
/// first vouched for is not taken on the second's word.
#[test]
fn a_restarted_watcher_is_not_taken_for_the_one_before() {
    let env = store();
    {
        let _w = Watching::start(&env);
        settles(&env);
    }
    let status = env.swarm(&["index", "status"]);
    assert!(
        status.stdout.contains("watcher:     none"),
        "{}",
        status.snapshot()
    );
    // Changed while no watcher ran.
    env.write(
        ".swarm/directives/parser-errors.toml",
        directive_toml("parser-errors", "Keep the parser error chain"),
    );
    age_directives(&env);
    let _w = Watching::start(&env);
    let (out, vouched) = show(&env, "parser-errors");
    assert!(!vouched);
    assert!(out.contains("error chain"), "{out}");
    vouched_next(&env);
}

#[test]
fn one_watcher_a_repository_and_stop_ends_it() {
    let env = store();
    let w = Watching::start(&env);
    let again = env.swarm(&["index", "watch", "--detach"]);
    again.code(2);
    assert!(
        again
            .stderr
            .contains("a watcher already runs for this repository (pid "),
        "{}",
        again.snapshot()
    );
    // Nor in the foreground.
    env.swarm(&["index", "watch"]).code(2);
    std::mem::forget(w);
    let stopped = env.swarm(&["index", "watch", "--stop"]);
    stopped.success();
    assert_eq!(
        stopped.stdout,
        "Stopped the watcher at .git/swarm/watch.sock.\n"
    );
    let log = env.read(".git/swarm/watch.log");
    assert!(log.contains("Watcher stopped: asked to stop."), "{log}");
    assert!(!env.exists(".git/swarm/watch.sock"));
    let none = env.swarm(&["index", "watch", "--stop"]);
    none.code(2);
    assert!(
        none.stderr
            .contains("no watcher answers at .git/swarm/watch.sock"),
        "{}",
        none.snapshot()
    );
    // Without it, commands work as before.
    let (ids, vouched) = listed(&env);
    assert!(!vouched);
    assert!(ids.contains(&"parser-errors".to_owned()));
}

/// With `.swarm/` gone there is nothing to watch: the watcher stops and
/// takes its socket with it.
#[test]
fn the_watcher_stops_when_swarm_goes() {
    let env = store();
    let _w = Watching::start(&env);
    std::fs::rename(env.path(".swarm"), env.path("swarm-elsewhere")).expect("rename");
    // It says so as it exits.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let stopped = "Watcher stopped: .swarm/ was removed or renamed.";
    while !env.read(".git/swarm/watch.log").contains(stopped) {
        assert!(
            std::time::Instant::now() < deadline,
            "the watcher still runs:\n{}",
            env.read(".git/swarm/watch.log")
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(!env.exists(".git/swarm/watch.sock"));
}

/// A stale socket (a watcher killed) is neither trusted nor in the way.
#[test]
fn a_stale_socket_is_ignored_and_replaced() {
    let env = store();
    let w = Watching::start(&env);
    let status = env.swarm(&["index", "status", "--format", "json"]);
    let json: serde_json::Value = serde_json::from_str(&status.stdout).expect("JSON");
    let pid = json["watcher"]["pid"].as_u64().expect("pid");
    std::mem::forget(w);
    let killed = std::process::Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .expect("kill");
    assert!(killed.success());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while std::path::Path::new(&format!("/proc/{pid}/status")).exists()
        && !std::fs::read_to_string(format!("/proc/{pid}/status"))
            .unwrap_or_default()
            .contains("zombie")
    {
        assert!(std::time::Instant::now() < deadline, "not killed");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(env.exists(".git/swarm/watch.sock"));
    let (ids, vouched) = listed(&env);
    assert!(!vouched);
    assert!(ids.contains(&"parser-errors".to_owned()));
    let _w = Watching::start(&env);
    settles(&env);
}
