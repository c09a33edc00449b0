//! `git swarm doctor`: find what is wrong with the event log and the index,
//! and with `--fix` repair what can be repaired without losing anything.
//!
//! The only repair of the log itself is a torn final line (a write cut short
//! by a crash or a full disk): its bytes are saved under `.swarm/local/torn/`
//! and the file is truncated to its last complete line, under the same lock
//! appends take. Malformed lines in the middle of a file are reported, never
//! rewritten: the log is append-only, and other clones have those lines too.
//!
//! Conflict markers left by a merge in any file under `.swarm/` are
//! reported line by line and never repaired: which side is right is a
//! person's call. (Event files merge with `merge=union` and so get none,
//! unless that attribute is off.)

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs::OpenOptions;
use std::path::Path;
use std::time::Duration;

use crate::error::{Error, Result};
use crate::event::{lock_with_retry, read_event_file};
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
    let conflicts = conflict_markers(store);
    let markers: HashSet<(String, Option<u32>)> =
        conflicts.iter().map(|p| (p.path.clone(), p.line)).collect();
    report
        .findings
        .extend(conflicts.into_iter().map(|problem| Finding {
            problem,
            fixed: false,
        }));
    let mut first_seen: HashMap<String, String> = HashMap::new();
    let mut duplicates = 0usize;
    let mut unknown: BTreeMap<String, (usize, String)> = BTreeMap::new();
    for (path, rel) in store.event_files()? {
        report.event_files += 1;
        // A symlink, FIFO or device, or a file over events.max_file_bytes,
        // is one finding, never read (nor repaired).
        let file = read_event_file(&path, &rel, &store.config.events)?;
        report.events += file.events.len();
        for line in &file.events {
            let here = format!("{rel}:{}", line.line);
            if let Some(first) = first_seen.get(&line.event.id) {
                // A log of millions of copies lists the first, and counts the rest.
                duplicates += 1;
                if duplicates > crate::problem::Problems::CAP {
                    continue;
                }
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
        for problem in file.problems.kept().iter().cloned() {
            // A marker line is reported as one; not again as a malformed event.
            if markers.contains(&(problem.path.clone(), problem.line)) {
                continue;
            }
            let fixed = if problem.code == "torn_line" && fix {
                repair_torn_tail(store, &path)?
            } else {
                false
            };
            report.findings.push(Finding { problem, fixed });
        }
        // Past the cap, bad lines are counted: one finding says how many.
        for more in file.problems.more() {
            report.findings.push(Finding {
                problem: more.as_problem(),
                fixed: false,
            });
        }
    }
    if let Some(more) = duplicates
        .checked_sub(crate::problem::Problems::CAP)
        .filter(|&n| n > 0)
    {
        report.findings.push(Finding {
            problem: Problem::warning(
                ".swarm/events",
                "duplicate_id",
                format!(
                    "… and {more} more event id{} already used",
                    if more == 1 { "" } else { "s" }
                ),
            )
            .with_hint("harmless: readers fold one copy (a cherry-pick or rebase repeats lines)"),
            fixed: false,
        });
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
        // Beside the log it is cut from, as an append sets one aside: the
        // pending log's under `$GIT_COMMON_DIR/swarm/local/torn/`.
        Ok(_) => crate::event::set_aside_torn_tail(
            &mut file,
            path,
            path.parent()
                .and_then(std::path::Path::parent)
                .unwrap_or(&store.swarm_dir),
            store.clock.now().as_millisecond(),
        )
        .map(|saved| saved.is_some()),
        Err(e) => Err(e),
    };
    let _ = file.unlock();
    result
}

/// How deep under `.swarm/` conflict markers are looked for: its folders
/// are one level deep; a deeper tree is not git-swarm's.
const MAX_DEPTH: usize = 4;

/// Every conflict marker line in the regular files under `.swarm/` (not
/// `local/`, which git does not track), by path and line. Links are not
/// followed; each file is read up to its own kind's limit (other checks
/// report a file over it), so a low `events.max_file_bytes` does not hide
/// the markers of a directive.
pub fn conflict_markers(store: &Store) -> Vec<Problem> {
    let mut files = Vec::new();
    collect_files(&store.swarm_dir, 0, &mut files);
    files.retain(|p| {
        p.strip_prefix(&store.swarm_dir)
            .map_or(true, |rel| !rel.starts_with("local"))
    });
    files.sort();
    let mut out = Vec::new();
    for path in files {
        let Ok(bytes) = crate::safe_fs::read(&path, read_limit(store, &path)) else {
            continue;
        };
        let rel = store.rel(&path);
        for (line_no, marker) in markers_in(&bytes) {
            out.push(
                Problem::error(
                    &rel,
                    "conflict_marker",
                    format!("conflict marker `{marker}` left by a merge"),
                )
                .at(line_no, 1)
                .with_hint("resolve the conflict in this file (keep what each side needs, remove the markers), then run `git swarm validate`"),
            );
        }
    }
    out
}

/// The most of `path` its readers read: what validate bounds each kind of
/// file by (events by `events.max_file_bytes`, a directive, quarantined
/// directive or proposal by the directive limit, a handoff by its own), and
/// the config's limit for anything else.
fn read_limit(store: &Store, path: &Path) -> u64 {
    let folder = path
        .strip_prefix(&store.swarm_dir)
        .ok()
        .and_then(|rel| rel.components().next())
        .and_then(|c| c.as_os_str().to_str());
    match folder {
        Some("events") => store.config.events.max_file_bytes,
        Some("directives" | "quarantine" | "proposals") => crate::directive::limits::FILE_MAX,
        Some("handoffs") => crate::handoff::HANDOFF_MAX,
        _ => crate::store::CONFIG_MAX,
    }
}

/// The marker lines of a file, by 1-based line: `<<<<<<<` and `>>>>>>>`
/// always; `=======` and `|||||||` only between a `<<<<<<<` and the next
/// `>>>>>>>`, since alone they are ordinary text (a setext heading, a line
/// of a TOML multi-line string).
fn markers_in(bytes: &[u8]) -> Vec<(u32, &'static str)> {
    let lines: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
    let mut out = Vec::new();
    // The open `<<<<<<<`'s line index, and the middle markers seen since.
    let mut open: Option<Vec<(u32, &'static str)>> = None;
    for (i, line) in lines.iter().enumerate() {
        let Some(marker) = conflict_marker(line) else {
            continue;
        };
        let line_no = u32::try_from(i + 1).unwrap_or(u32::MAX);
        match marker {
            "<<<<<<<" => {
                out.push((line_no, marker));
                // A second opening before a close: the middles seen belong
                // to no closed conflict.
                open = Some(Vec::new());
            }
            ">>>>>>>" => {
                out.extend(open.take().unwrap_or_default());
                out.push((line_no, marker));
            }
            _ => {
                if let Some(middles) = open.as_mut() {
                    middles.push((line_no, marker));
                }
            }
        }
    }
    out.sort_unstable();
    out
}

/// The marker `line` is, if it is one: `<<<<<<< `, `||||||| ` or
/// `>>>>>>> ` followed by a label, or `=======` alone (a CR before the
/// newline allowed). A marker inside a line (a JSON string) is not one.
fn conflict_marker(line: &[u8]) -> Option<&'static str> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line == b"=======" {
        return Some("=======");
    }
    ["<<<<<<<", "|||||||", ">>>>>>>"].into_iter().find(|m| {
        line.strip_prefix(m.as_bytes())
            .is_some_and(|rest| rest.is_empty() || rest.starts_with(b" "))
    })
}

/// The regular files under `dir`, not through links, at most [`MAX_DEPTH`] deep.
fn collect_files(dir: &Path, depth: usize, out: &mut Vec<std::path::PathBuf>) {
    let Ok(Some(listing)) = crate::safe_fs::read_dir(dir) else {
        return;
    };
    for entry in listing.flatten() {
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_file() {
            out.push(entry.path());
        } else if kind.is_dir() && depth < MAX_DEPTH {
            collect_files(&entry.path(), depth + 1, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{conflict_marker, markers_in};

    #[test]
    fn middle_markers_count_only_inside_a_conflict() {
        let heading = b"Title\n=======\ntext\n";
        assert!(markers_in(heading).is_empty());
        let conflict = b"a\n<<<<<<< HEAD\nx\n||||||| base\n=======\ny\n>>>>>>> f\n=======\n";
        let found: Vec<u32> = markers_in(conflict).iter().map(|m| m.0).collect();
        assert_eq!(found, [2, 4, 5, 7]);
        // An unclosed `<<<<<<<` is reported, its middles are not.
        assert_eq!(markers_in(b"<<<<<<< HEAD\n=======\n"), [(1, "<<<<<<<")]);
    }

    #[test]
    fn only_whole_line_markers_count() {
        assert_eq!(conflict_marker(b"<<<<<<< HEAD"), Some("<<<<<<<"));
        assert_eq!(conflict_marker(b"=======\r"), Some("======="));
        assert_eq!(conflict_marker(b">>>>>>> feature"), Some(">>>>>>>"));
        assert_eq!(conflict_marker(b"||||||| base"), Some("|||||||"));
        assert_eq!(conflict_marker(b"======= "), None);
        assert_eq!(conflict_marker(b"<<<<<<<<"), None);
        assert_eq!(conflict_marker(br#"{"id":"x","note":"=======\n"}"#), None);
    }
}
