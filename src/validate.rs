//! `git swarm validate`: lint everything under `.swarm/` and report every
//! problem at once, each with its place and a hint. Made for CI.
//!
//! It reads the files themselves, not the index, so it checks exactly what
//! is in the tree. [`staged`] applies the same rules to what the index holds.

pub mod staged;

use std::collections::BTreeMap;
use std::path::Path;

use crate::error::{Error, Result};
use crate::event::{is_month_file, read_event_file};
use crate::index::read_entry;
use crate::problem::{Problem, Problems};
use crate::store::Store;

/// What `validate` looked at and found.
#[derive(Debug, Default)]
pub struct Report {
    pub files: usize,
    pub directives: usize,
    pub quarantined: usize,
    pub events: usize,
    /// Kept up to a cap (in the order found, then sorted), counted past it.
    pub problems: Problems,
}

impl Report {
    pub fn errors(&self) -> usize {
        usize::try_from(self.problems.error_count()).unwrap_or(usize::MAX)
    }
}

/// Largest `.swarm/.gitattributes` read, in bytes (it holds a line or two).
const GITATTRIBUTES_MAX: u64 = 64 * 1024;
const KNOWN_FILES: &[&str] = &["config.toml", ".gitattributes", ".gitignore", "README.md"];

pub fn validate(store: &Store) -> Result<Report> {
    let mut r = Report {
        problems: store.config_problems.clone().into(),
        ..Report::default()
    };
    if store.swarm_dir.join("config.toml").is_file() {
        r.files += 1;
    }
    check_top_level(store, &mut r)?;

    let mut ids: BTreeMap<String, String> = BTreeMap::new();
    for (folder, quarantine) in [("directives", false), ("quarantine", true)] {
        for name in list(&store.swarm_dir.join(folder), folder, &mut r)? {
            let rel = format!(".swarm/{folder}/{name}");
            if !name.ends_with(".toml") {
                r.problems.extend(stray(
                    &rel,
                    &name,
                    "a .toml file",
                    format!("entries in {folder}/ are `<id>.toml` files; move or delete this one"),
                ));
                continue;
            }
            r.files += 1;
            let path = store.swarm_dir.join(folder).join(&name);
            let entry = read_entry(&path, &rel, &name, quarantine);
            if quarantine {
                r.quarantined += 1;
            } else {
                r.directives += 1;
            }
            r.problems.extend(entry.problems);
            let stem = name.trim_end_matches(".toml").to_owned();
            if let Some(first) = ids.insert(stem.clone(), rel.clone()) {
                r.problems.push(
                    at_id_key(
                        &path,
                        Problem::error(
                            &rel,
                            "duplicate_id",
                            format!("id `{stem}` is also used by {first}"),
                        ),
                    )
                    .with_hint(
                        "ids are unique across directives/ and quarantine/: remove or rename one",
                    ),
                );
            }
        }
    }

    // The log, for the standing of handoffs below.
    let mut log = Vec::new();
    // The tracked log, then the pending one (where commands record; its
    // files are month files: `event_files` lists only those), named as the
    // index names them (see `Store::event_file`).
    let mut files = list(&store.events_dir(), "events", &mut r)?;
    for path in crate::event::event_files(&store.pending_dir())? {
        if let Some(name) = path.file_name().and_then(|n| n.to_str()) {
            files.push(format!("{}{name}", crate::store::PENDING_PREFIX));
        }
    }
    for key in files {
        let (path, rel) = store.event_file(&key);
        let name = key.trim_start_matches(crate::store::PENDING_PREFIX);
        if !is_month_file(name) {
            r.problems.extend(stray(
                &rel,
                name,
                "an event file (YYYY-MM.jsonl)",
                "event files are named by month, e.g. 2026-11.jsonl".into(),
            ));
            continue;
        }
        r.files += 1;
        let file = read_event_file(&path, &rel, &store.config.events)?;
        for line in &file.events {
            if line.event.month_file().as_deref() != Some(name) {
                r.problems.push(
                    Problem::warning(
                        &rel,
                        "wrong_month",
                        format!(
                            "event {} at {} belongs in {}",
                            line.event.id,
                            line.event.ts,
                            line.event.month_file().unwrap_or_default()
                        ),
                    )
                    .at_line(line.line)
                    .with_hint("events are filed by their UTC month; readers still fold it"),
                );
            }
        }
        log.extend(file.events.iter().map(|line| line.event.clone()));
        r.events += file.events.len();
        r.problems.append(file.problems);
    }

    // Proposals are read by `proposal` and `reflect macro`, which skip a bad one.
    let (proposals, problems) = crate::proposal::load_all(store)?;
    r.files += proposals.len() + problems.len();
    r.problems.extend(problems);

    // Handoffs are read by `handoff` and `epic`, which skip a bad one.
    let (handoffs, problems) = crate::handoff::load_all(store)?;
    r.files += handoffs.len() + problems.len();
    r.problems.extend(problems);
    // Overlaps only a merge can bring: `handoff create` refuses the others.
    // In the order `records::read_log` folds it: by time, then id, each id once.
    log.sort_by(|a: &crate::event::Event, b| (a.ts_millis(), &a.id).cmp(&(b.ts_millis(), &b.id)));
    let mut seen = std::collections::HashSet::new();
    log.retain(|e| seen.insert(e.id.clone()));
    r.problems
        .extend(crate::handoff::standing_overlaps(store, &handoffs, &log));

    check_gitattributes(store, &mut r);
    r.problems.sort_kept();
    Ok(r)
}

/// A file that is not `what`, ignored (a `.gitkeep` is not reported).
fn stray(rel: &str, name: &str, what: &str, hint: String) -> Option<Problem> {
    (name != ".gitkeep").then(|| {
        Problem::warning(
            rel,
            "stray_file",
            format!("`{name}` is not {what} and is ignored"),
        )
        .with_hint(hint)
    })
}

/// Places a problem about an entry's id at its `id` key (at the top of the
/// file when the file cannot be read or has no such key).
fn at_id_key(path: &Path, problem: Problem) -> Problem {
    let text = crate::safe_fs::read(path, crate::directive::limits::FILE_MAX)
        .ok()
        .and_then(|b| String::from_utf8(b).ok());
    match text {
        Some(text) => {
            let offset = crate::directive::key_offset(&text, "id").unwrap_or(0);
            problem.at_offset(&text, offset)
        }
        None => problem.at(1, 1),
    }
}

fn check_top_level(store: &Store, r: &mut Report) -> Result<()> {
    let entries =
        std::fs::read_dir(&store.swarm_dir).map_err(|e| Error::io(&store.swarm_dir, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(&store.swarm_dir, e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let is_dir = entry.file_type().map(|t| t.is_dir()).unwrap_or(false);
        // A known folder that is a link is reported by the store.
        let known = crate::store::FOLDERS.contains(&name.as_str())
            || (!is_dir && KNOWN_FILES.contains(&name.as_str()));
        if name == "local" && is_dir {
            stale_local(store, r);
        }
        if !known {
            r.problems.push(
                Problem::warning(
                    format!(".swarm/{name}"),
                    "stray_file",
                    format!("`{name}` is not part of the .swarm/ layout and is ignored"),
                )
                .with_hint("see docs/formats.md for what .swarm/ holds"),
            );
        }
    }
    Ok(())
}

/// What lies in `.swarm/local/` but `torn/` (where torn lines are saved):
/// nothing there is read any more, since per-clone state moved into the git
/// dir, where no pull request can put it; a file there is left over, or planted.
fn stale_local(store: &Store, r: &mut Report) {
    let dir = store.swarm_dir.join("local");
    let Ok(Some(entries)) = crate::safe_fs::read_dir(&dir) else {
        return;
    };
    for entry in entries.flatten().take(100) {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name == "torn" {
            continue;
        }
        r.problems.push(
            Problem::warning(
                format!(".swarm/local/{name}"),
                "stray_file",
                format!("`local/{name}` is not read: per-clone state lives in the git dir (.git/swarm/local/), out of reach of a pull request"),
            )
            .with_hint("delete it; if it is tracked, `git rm` it: a tracked file here is either left over or planted"),
        );
    }
}

fn list(dir: &Path, folder: &str, r: &mut Report) -> Result<Vec<String>> {
    let mut names = Vec::new();
    // A linked folder is not listed; the store reports it.
    let Some(entries) = crate::safe_fs::read_dir(dir).map_err(|e| Error::io(dir, e))? else {
        return Ok(names);
    };
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(dir, e))?;
        match entry.file_name().into_string() {
            Ok(name) => {
                // A link is listed (not followed), to be reported when read.
                if entry.file_type().is_ok_and(|t| t.is_dir()) {
                    r.problems.push(
                        Problem::warning(
                            format!(".swarm/{folder}/{name}"),
                            "stray_file",
                            format!("`{name}` is a directory and is ignored"),
                        )
                        .with_hint(format!("{folder}/ holds files only")),
                    );
                } else {
                    names.push(name);
                }
            }
            Err(raw) => r.problems.push(
                Problem::error(
                    format!(".swarm/{folder}/{}", raw.to_string_lossy()),
                    "bad_file_name",
                    "file name is not valid UTF-8",
                )
                .with_hint("rename the file; entry file names are `<id>.toml`"),
            ),
        }
    }
    names.sort();
    Ok(names)
}

fn check_gitattributes(store: &Store, r: &mut Report) {
    let path = store.swarm_dir.join(".gitattributes");
    let read = crate::safe_fs::read(&path, GITATTRIBUTES_MAX);
    // git does not read an in-tree `.gitattributes` link either: no union merge.
    if let Some(kind) = read.as_ref().err().and_then(crate::safe_fs::not_regular) {
        r.problems.push(
            Problem::warning(
                ".swarm/.gitattributes",
                crate::event::NOT_REGULAR,
                format!("{kind}, not a regular file: not read (nor by git), so event files are not marked `merge=union`"),
            )
            .with_hint("replace it with a regular file holding `events/*.jsonl merge=union` (git swarm init writes it)"),
        );
        return;
    }
    let ok = read
        .ok()
        .and_then(|b| String::from_utf8(b).ok())
        .is_some_and(|t| {
            t.lines().map(str::trim).any(|l| {
                l.starts_with("events/*.jsonl") && l.split_whitespace().any(|a| a == "merge=union")
            })
        });
    if !ok {
        r.problems.push(
            Problem::warning(".swarm/.gitattributes", "no_union_merge", "event files are not marked `merge=union`")
                .with_hint("add the line `events/*.jsonl merge=union` (git swarm init writes it), or merges of events/ may conflict"),
        );
    }
}
