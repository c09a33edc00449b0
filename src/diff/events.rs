//! The event logs of the two sides: each folded (effective state, patterns,
//! handoffs), and the events one side has that the other has not.
//!
//! The log is union-merged and de-duplicated by id, so the events a change
//! records are the ids present on the new side and not on the old one. An
//! event file with the same blob id on both sides holds the same events: it
//! is parsed once, and none of its events is new or missing. Events on the
//! old side and not on the new one should not exist (the log is append-only)
//! and are reported as an anomaly.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use gix::ObjectId;

use super::side::Side;
use crate::config::EventsConfig;
use crate::error::Result;
use crate::event::{Event, Kind};
use crate::fold::{EventHead, Fold};
use crate::pattern::fold::PatternFold;
use crate::problem::Problem;

/// One side's log, folded.
#[derive(Debug, Default)]
pub struct Folded {
    pub fold: Fold,
    pub patterns: PatternFold,
    /// Its handoff events, in fold order (the standing of a handoff is their fold).
    pub handoff_events: Vec<Event>,
}

/// What the two logs say.
#[derive(Debug, Default)]
pub struct Logs {
    pub old: Folded,
    pub new: Folded,
    /// Events of the new side the old one lacks, in (ts, id) order.
    pub added: Vec<(EventHead, Event)>,
    /// Events of the old side the new one lacks (an anomaly), in (ts, id) order.
    pub missing: Vec<(EventHead, Event)>,
    /// Malformed lines and unreadable files among the event files that differ.
    pub problems: Vec<Problem>,
}

/// An event file's lines, parsed.
struct Parsed {
    bytes: Arc<Vec<u8>>,
    /// Each well-formed line's head with the byte range of the line.
    heads: Vec<(EventHead, std::ops::Range<usize>)>,
    problems: Vec<Problem>,
}

/// The event files of a side: (path below `.swarm/`, blob id) of the regular month files.
fn event_files(side: &Side) -> Vec<(&str, ObjectId, bool)> {
    side.files
        .iter()
        .filter_map(|(path, f)| {
            let name = path.strip_prefix("events/")?;
            crate::event::is_month_file(name).then_some((path.as_str(), f.id, f.kind.is_none()))
        })
        .collect()
}

/// Reads, compares and folds the logs of `old` and `new`.
pub fn read(repo: &gix::Repository, old: &Side, new: &Side, cfg: &EventsConfig) -> Result<Logs> {
    let (old_files, new_files) = (event_files(old), event_files(new));
    let old_ids: HashSet<ObjectId> = old_files.iter().map(|f| f.1).collect();
    let new_ids: HashSet<ObjectId> = new_files.iter().map(|f| f.1).collect();
    let mut logs = Logs::default();
    let mut parsed: HashMap<ObjectId, Parsed> = HashMap::new();
    for (side, files, other) in [(old, &old_files, &new_ids), (new, &new_files, &old_ids)] {
        for (path, id, regular) in files {
            let shared = other.contains(id);
            if !regular {
                if !shared {
                    let kind = side.files[*path]
                        .kind
                        .unwrap_or(crate::safe_fs::FileKind::Other);
                    logs.problems
                        .push(super::side::not_regular(&format!(".swarm/{path}"), kind));
                }
                continue;
            }
            if parsed.contains_key(id) {
                continue;
            }
            let rel = format!(".swarm/{path}");
            let p = match side.bytes(repo, path, cfg.max_file_bytes)? {
                Ok(bytes) => parse(bytes, &rel, cfg.max_line_bytes),
                Err(problem) => Parsed {
                    bytes: Arc::default(),
                    heads: Vec::new(),
                    problems: vec![problem],
                },
            };
            // Problems in a file both sides share are not the change's doing.
            if !shared {
                logs.problems.extend(p.problems.iter().cloned());
            }
            parsed.insert(*id, p);
        }
    }
    let keys_of = |files: &[(&str, ObjectId, bool)]| -> HashSet<u128> {
        files
            .iter()
            .filter_map(|f| parsed.get(&f.1))
            .flat_map(|p| p.heads.iter().map(|(h, _)| h.key))
            .collect()
    };
    let (old_keys, new_keys) = (keys_of(&old_files), keys_of(&new_files));
    let only = |files: &[(&str, ObjectId, bool)],
                others: &HashSet<ObjectId>,
                keys: &HashSet<u128>| {
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        for (_, id, _) in files {
            let Some(p) = parsed.get(id).filter(|_| !others.contains(id)) else {
                continue;
            };
            for (head, range) in &p.heads {
                if keys.contains(&head.key) || !seen.insert(head.key) {
                    continue;
                }
                if let Ok(event) = crate::event::parse_event_line(&p.bytes[range.clone()], u64::MAX)
                {
                    out.push((head.clone(), event));
                }
            }
        }
        out.sort_by_key(|a| a.0.order());
        out
    };
    logs.added = only(&new_files, &old_ids, &old_keys);
    logs.missing = only(&old_files, &new_ids, &new_keys);
    let fold = |files: &[(&str, ObjectId, bool)]| {
        let mut seen = HashSet::new();
        let mut heads = Vec::new();
        let mut handoffs = Vec::new();
        for (_, id, _) in files {
            if !seen.insert(*id) {
                continue;
            }
            let Some(p) = parsed.get(id) else { continue };
            for (head, range) in &p.heads {
                if head.known.is_some_and(crate::handoff::is_handoff_kind)
                    && let Ok(e) = crate::event::parse_event_line(&p.bytes[range.clone()], u64::MAX)
                {
                    handoffs.push((head.order(), e));
                }
                heads.push(head.clone());
            }
        }
        handoffs.sort_by_key(|(order, _)| *order);
        handoffs.dedup_by_key(|(order, _)| order.1);
        let (fold, patterns) = crate::fold::fold_both(heads);
        Folded {
            fold,
            patterns,
            handoff_events: handoffs.into_iter().map(|(_, e)| e).collect(),
        }
    };
    // The two folds are independent: one on each core.
    let (old_fold, new_fold) = std::thread::scope(|s| {
        let old = s.spawn(|| fold(&old_files));
        let new = fold(&new_files);
        (old.join(), new)
    });
    logs.old = old_fold.unwrap_or_default();
    logs.new = new_fold;
    Ok(logs)
}

/// Parses an event file's lines: the heads of the good ones, a problem
/// (file:line:col) for each bad one.
fn parse(bytes: Arc<Vec<u8>>, rel: &str, max_line: u64) -> Parsed {
    let mut heads = Vec::new();
    let mut problems = Vec::new();
    let mut start = 0;
    let mut line_no = 0u32;
    while start < bytes.len() {
        line_no += 1;
        let end = memchr::memchr(b'\n', &bytes[start..]).map_or(bytes.len(), |i| start + i);
        let raw = &bytes[start..end];
        if end == bytes.len() && !raw.is_empty() {
            problems.push(
                Problem::error(rel, "torn_line", "last line is incomplete (no newline)")
                    .at(line_no, 1)
                    .with_hint("a write was cut short; `git swarm doctor --fix` saves it aside"),
            );
            break;
        }
        if !raw.iter().all(u8::is_ascii_whitespace) {
            let head = (raw.len() as u64 <= max_line)
                .then(|| EventHead::parse(raw))
                .flatten();
            match head {
                Some(h) => heads.push((h, start..end)),
                None => {
                    let (col, message, hint) = match crate::event::parse_event_line(raw, max_line) {
                        Err(e) => e,
                        Ok(_) => (
                            1,
                            "malformed event".to_owned(),
                            "each line must be one JSON object with `id`, `ts` and `kind`",
                        ),
                    };
                    problems.push(
                        Problem::error(rel, "bad_event", message)
                            .at(line_no, col)
                            .with_hint(hint),
                    );
                }
            }
        }
        start = end + 1;
    }
    Parsed {
        bytes,
        heads,
        problems,
    }
}

/// The events per directive that a list of events holds: what the
/// "signals" section of a diff counts.
pub fn is_violation(head: &EventHead) -> bool {
    matches!(head.signal, crate::fold::Signal::Violation { .. })
}

/// Is `event` of kind `kind`?
pub fn is(head: &EventHead, kind: Kind) -> bool {
    head.known == Some(kind)
}
