//! `git swarm doctor`: find what is wrong with the event log and the index,
//! and with `--fix` repair what can be repaired without losing anything.
//!
//! The only repair of the log itself is a torn final line (a write cut short
//! by a crash or a full disk): its bytes are saved under `.swarm/local/torn/`
//! and the file is truncated to its last complete line, under the same lock
//! appends take. Malformed lines in the middle of a file are reported, never
//! rewritten: the log is append-only, and other clones have those lines too.

use std::collections::{BTreeMap, HashMap};
use std::fs::OpenOptions;
use std::time::Duration;

use crate::error::{Error, Result};
use crate::event::{event_files, lock_with_retry, read_event_file};
use crate::problem::Problem;
use crate::store::Store;

/// One finding, and whether `--fix` repaired it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Finding {
    #[serde(flatten)]
    pub problem: Problem,
    pub fixed: bool,
}

#[derive(Debug, Default, serde::Serialize)]
pub struct Report {
    pub event_files: usize,
    pub events: usize,
    pub findings: Vec<Finding>,
}

impl Report {
    /// Findings still standing (errors and warnings alike).
    pub fn unresolved(&self) -> usize {
        self.findings.iter().filter(|f| !f.fixed).count()
    }
}

pub fn doctor(store: &Store, fix: bool) -> Result<Report> {
    let mut report = Report::default();
    let mut first_seen: HashMap<String, String> = HashMap::new();
    let mut unknown: BTreeMap<String, (usize, String)> = BTreeMap::new();
    for path in event_files(&store.events_dir())? {
        report.event_files += 1;
        let rel = store.rel(&path);
        // A symlink, FIFO or device, or a file over events.max_file_bytes,
        // is one finding, never read (nor repaired).
        let file = read_event_file(&path, &rel, &store.config.events)?;
        report.events += file.events.len();
        for line in &file.events {
            let here = format!("{rel}:{}", line.line);
            if let Some(first) = first_seen.get(&line.event.id) {
                report.findings.push(Finding {
                    problem: Problem::warning(
                        &rel,
                        "duplicate_id",
                        format!("event id {} was already used at {first}", line.event.id),
                    )
                    .at_line(line.line)
                    .with_hint(
                        "harmless: readers fold one copy (a cherry-pick or rebase repeats lines)",
                    ),
                    fixed: false,
                });
            } else {
                first_seen.insert(line.event.id.clone(), here.clone());
            }
            if line.event.known_kind().is_none() {
                let e = unknown.entry(line.event.kind.clone()).or_insert((0, here));
                e.0 += 1;
            }
        }
        for problem in file.problems {
            let fixed = if problem.code == "torn_line" && fix {
                repair_torn_tail(store, &path)?
            } else {
                false
            };
            report.findings.push(Finding { problem, fixed });
        }
    }
    for (kind, (count, first)) in unknown {
        report.findings.push(Finding {
            problem: Problem::warning(
                first.rsplit_once(':').map_or(first.as_str(), |(p, _)| p),
                "unknown_kind",
                format!("{count} event(s) of unknown kind `{kind}`, first at {first}"),
            )
            .with_hint("kept and ignored: written by a newer git-swarm or another tool"),
            fixed: false,
        });
    }

    let (_, _, health) = crate::index::status(store)?;
    let index = crate::index::index_path(store);
    match health {
        crate::index::Health::Fresh => {}
        crate::index::Health::Folder => {
            // Only an empty folder is removed: whatever is in one is not ours.
            let fixed =
                fix && std::fs::remove_dir(&index).is_ok() && crate::index::rebuild(store).is_ok();
            report.findings.push(Finding {
                problem: Problem::error(
                    store.rel(&index),
                    "index_blocked",
                    "a folder is in the index's place: no command can write the index, so every command reads .swarm/ again",
                )
                .with_hint("remove the folder (doctor --fix removes it when it is empty); the index is derived from .swarm/"),
                fixed,
            });
        }
        _ => {
            let fixed = fix && crate::index::rebuild(store).is_ok();
            report.findings.push(Finding {
                problem: Problem::warning(store.rel(&index), "stale_index", "the index is missing, unreadable or older than .swarm/")
                    .with_hint("any command refreshes it; `git swarm index rebuild` (or doctor --fix) rebuilds it now"),
                fixed,
            });
        }
    }
    Ok(report)
}

/// Saves the torn tail of `path` aside and truncates the file to its last
/// complete line. Returns false if, under the lock, the tail is no longer
/// torn, or the file has grown over `events.max_file_bytes`.
fn repair_torn_tail(store: &Store, path: &std::path::Path) -> Result<bool> {
    let mut file = crate::safe_fs::open(path, OpenOptions::new().read(true).write(true))
        .map_err(|e| Error::io(path, e))?;
    lock_with_retry(
        &file,
        path,
        Duration::from_millis(store.config.events.lock_timeout_ms),
    )?;
    let result = match file.metadata().map_err(|e| Error::io(path, e)) {
        // Grown past the bound since it was read: its "torn line" could be
        // gigabytes, and is not read.
        Ok(m) if m.len() > store.config.events.max_file_bytes => Ok(false),
        Ok(_) => crate::event::set_aside_torn_tail(
            &mut file,
            path,
            &store.swarm_dir,
            store.clock.now().as_millisecond(),
        )
        .map(|saved| saved.is_some()),
        Err(e) => Err(e),
    };
    let _ = file.unlock();
    result
}
