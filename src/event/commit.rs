//! `git swarm commit`: the pending log (recorded events, waiting in the git
//! dir) moved into the tracked log in a commit of its own.
//!
//! Events never wait in the work tree: a file there that one clone appends
//! to and another commits makes `git pull` refuse ("untracked working tree
//! files would be overwritten"). The tracked month files change only here,
//! and only in the commit made here, so no pull, merge, rebase, checkout or
//! stash meets an uncommitted event line. An event in both logs (a commit
//! whose clean-up was cut short) is folded once, as every copy is.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use super::{Event, event_files, parse_event_line};
use crate::error::Error;
use crate::problem::{Problem, Problems};
use crate::store::Store;

/// A pending file as read: the whole lines taken, and where they end.
struct Taken {
    path: PathBuf,
    /// The month file's name (`2026-11.jsonl`).
    name: String,
    /// Bytes taken: up to and including the last newline read.
    len: usize,
    events: Vec<Event>,
    /// Lines that are no event: they stay pending, reported.
    bad: Vec<u8>,
}

/// What [`commit`] did.
#[derive(Debug, Default)]
pub struct Committed {
    /// Events moved into the tracked log.
    pub events: usize,
    /// The tracked files changed, relative to the work tree.
    pub files: Vec<String>,
    /// Lines of the pending log that are no event: left there.
    pub problems: Problems,
    /// Torn lines found at the end of a tracked file and saved aside.
    pub torn: Vec<PathBuf>,
}

/// Lines waiting in the pending log (each bounded read; an unreadable file
/// counts none).
pub fn pending_lines(store: &Store) -> Result<u64, Error> {
    let mut n = 0;
    for path in event_files(&store.pending_dir())? {
        if let Ok(bytes) = crate::safe_fs::read(&path, store.config.events.max_file_bytes) {
            n += memchr::memchr_iter(b'\n', &bytes).count() as u64;
        }
    }
    Ok(n)
}

/// Moves every pending event into its month file of `.swarm/events/` and
/// commits those files alone (`git commit --only`, the user's hooks run;
/// whatever else is staged stays staged), then drops from the pending log
/// what was committed. Events recorded meanwhile stay pending. When git
/// refuses the commit, the tracked files and their index entries are put
/// back and nothing leaves the pending log.
pub fn commit(store: &Store, message: Option<&str>) -> Result<Committed, Error> {
    let cfg = &store.config.events;
    // One commit at a time: each drops from the pending files what it read.
    let lock = store.common_dir.join("swarm").join("pending.lock");
    crate::safe_fs::create_dir_all(&store.common_dir, &store.common_dir.join("swarm"))?;
    let _one = super::open_locked(&lock, Duration::from_millis(cfg.lock_timeout_ms))?;
    let mut out = Committed::default();
    let mut taken = Vec::new();
    for path in event_files(&store.pending_dir())? {
        let Some(name) = path.file_name().and_then(|n| n.to_str()).map(str::to_owned) else {
            continue;
        };
        let rel = store.rel(&path);
        let bytes = match crate::safe_fs::read(&path, cfg.max_file_bytes) {
            Ok(b) => b,
            Err(e) => match super::skipped_problem(&rel, &e) {
                Some(p) => {
                    out.problems.push(p);
                    continue;
                }
                None => return Err(Error::io(&path, e)),
            },
        };
        // A line still being written has no newline yet: it waits.
        let len = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let mut t = Taken {
            path,
            name,
            len,
            events: Vec::new(),
            bad: Vec::new(),
        };
        for (i, line) in bytes[..len].split(|&b| b == b'\n').enumerate() {
            if line.is_empty() {
                continue;
            }
            match parse_event_line(line, cfg.max_line_bytes) {
                Ok(e) if e.month_file().as_deref() == Some(t.name.as_str()) => t.events.push(e),
                Ok(_) | Err(_) => {
                    out.problems.push(
                        Problem::error(&rel, "bad_event", "not an event of this month's file: left pending")
                            .at_line(i as u32 + 1)
                            .with_hint("remove the line if no tool of yours wrote it; `git swarm commit` leaves it where it is"),
                    );
                    t.bad.extend_from_slice(line);
                    t.bad.push(b'\n');
                }
            }
        }
        taken.push(t);
    }
    let events: Vec<Event> = taken
        .iter()
        .flat_map(|t| t.events.iter().cloned())
        .collect();
    if events.is_empty() {
        return Ok(out);
    }
    // Where the tracked files stand, to put them back if git refuses.
    let tracked = store.events_dir();
    let mut before = Vec::new();
    for t in taken.iter().filter(|t| !t.events.is_empty()) {
        let path = tracked.join(&t.name);
        let len = std::fs::symlink_metadata(&path).ok().map(|m| m.len());
        before.push((path, len));
    }
    // Appended into the tracked files, under their locks; an event one
    // holds already (a commit whose clean-up was cut short) is not again.
    let dirs = super::LogDirs {
        pending: tracked.clone(),
        tracked: None,
    };
    let (_, torn) = super::append_unrecorded(
        &dirs,
        &events,
        |e| format!("\"id\":{}", serde_json::Value::from(e.id.as_str())),
        |e, old| old.id == e.id,
        cfg,
    )?;
    out.torn = torn;
    out.files = before.iter().map(|(p, _)| store.rel(p)).collect();
    let message = message.map_or_else(
        || {
            format!(
                "swarm: record {} event{}",
                events.len(),
                if events.len() == 1 { "" } else { "s" }
            )
        },
        str::to_owned,
    );
    if let Err(e) = git_commit(&store.root, &out.files, &message) {
        put_back(&store.root, &before, &out.files);
        return Err(e);
    }
    out.events = events.len();
    for t in &taken {
        drop_taken(t, cfg)?;
    }
    Ok(out)
}

/// `git add` then `git commit --only` of `files`, in `root`.
fn git_commit(root: &Path, files: &[String], message: &str) -> Result<(), Error> {
    let run = |args: &[&str]| -> Result<(), Error> {
        let out = Command::new("git")
            .current_dir(root)
            .args(args)
            .output()
            .map_err(|e| Error::io(Path::new("git"), e))?;
        if out.status.success() {
            return Ok(());
        }
        let said = String::from_utf8_lossy(&out.stderr);
        let said = if said.trim().is_empty() {
            String::from_utf8_lossy(&out.stdout).into_owned()
        } else {
            said.into_owned()
        };
        Err(Error::Usage {
            message: format!(
                "`git {}` failed: {}",
                args.first().copied().unwrap_or_default(),
                said.trim()
            ),
            hint: Some(
                "nothing left the pending log; fix what git says (a merge or rebase in progress ends first), then run `git swarm commit` again".into(),
            ),
        })
    };
    let mut add = vec!["add", "--"];
    add.extend(files.iter().map(String::as_str));
    run(&add)?;
    let mut commit = vec!["commit", "--quiet", "--only", "-m", message, "--"];
    commit.extend(files.iter().map(String::as_str));
    run(&commit)
}

/// Puts the tracked files back as they were (`before`: each path and its
/// length, `None` when missing) and their index entries as HEAD has them.
fn put_back(root: &Path, before: &[(PathBuf, Option<u64>)], files: &[String]) {
    for (path, len) in before {
        match len {
            Some(len) => {
                if let Ok(f) = std::fs::OpenOptions::new().write(true).open(path) {
                    let _ = f.set_len(*len);
                }
            }
            None => {
                let _ = std::fs::remove_file(path);
            }
        }
    }
    let _ = Command::new("git")
        .current_dir(root)
        .args(["reset", "--quiet", "--"])
        .args(files)
        .output();
}

/// Drops what `t` took from its pending file, under the file's lock: the
/// file is replaced by its lines that are no event and what was appended
/// since (a writer waiting on the old file opens the new one), or removed
/// when that is nothing.
fn drop_taken(t: &Taken, cfg: &crate::config::EventsConfig) -> Result<(), Error> {
    use std::io::{Read, Seek, SeekFrom};
    let wait = Duration::from_millis(cfg.lock_timeout_ms);
    let mut file = super::append::open_current_locked(&t.path, wait)?;
    let io = |e| Error::io(&t.path, e);
    let mut rest = Vec::new();
    file.seek(SeekFrom::Start(t.len as u64)).map_err(io)?;
    (&mut file)
        .take(cfg.max_file_bytes)
        .read_to_end(&mut rest)
        .map_err(io)?;
    let mut keep = t.bad.clone();
    keep.extend_from_slice(&rest);
    let result = if keep.is_empty() {
        std::fs::remove_file(&t.path).map_err(io)
    } else {
        crate::safe_fs::replace(&t.path, &keep)
    };
    let _ = file.unlock();
    result
}
