//! Event files as the index holds them: parsed in parallel on a rebuild,
//! and only their appended bytes on a refresh.

use super::contents::{EventFileEntry, RebuildReason, Stamp, Summary, racy};
use crate::error::{Error, Result};
use crate::event::parse_event_line;
use crate::fold::{EventHead, Fold};
use crate::problem::{Problem, Problems};
use crate::store::Store;

struct ParsedEvents {
    heads: Vec<EventHead>,
    problems: Problems,
    /// Bytes up to and including the last newline.
    consumed: usize,
    /// Line count after this chunk (complete lines only).
    lines: u32,
}

/// Parses `bytes` (lines after `first_line`), adding bad lines to `problems`.
fn parse_events(
    bytes: &[u8],
    rel: &str,
    first_line: u32,
    max_line: u64,
    problems: Problems,
) -> ParsedEvents {
    let mut out = ParsedEvents {
        heads: Vec::with_capacity(bytes.len() / 160),
        problems,
        consumed: 0,
        lines: first_line,
    };
    let mut start = 0;
    for end in memchr::memchr_iter(b'\n', bytes) {
        out.lines += 1;
        let raw = &bytes[start..end];
        start = end + 1;
        if raw.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match (raw.len() as u64 <= max_line)
            .then(|| EventHead::parse(raw))
            .flatten()
        {
            Some(h) => out.heads.push(h),
            None => {
                let line = out.lines;
                out.problems.push_error_with(rel, || {
                    let (col, message, hint) = match parse_event_line(raw, max_line) {
                        Err(e) => e,
                        Ok(_) => (
                            1,
                            "event fields have unexpected types".to_owned(),
                            "see docs/formats.md for the event fields",
                        ),
                    };
                    Problem::error(rel, "bad_event", message)
                        .at(line, col)
                        .with_hint(hint)
                });
            }
        }
    }
    out.consumed = start;
    if start < bytes.len() {
        out.problems.push_always(
            Problem::error(rel, "torn_line", format!("last line is incomplete ({} bytes with no newline)", bytes.len() - start))
                .at(out.lines + 1, 1)
                .with_hint("a write was cut short (crash or full disk); `git swarm doctor --fix` saves it aside and truncates it"),
        );
    }
    out
}

/// One event file read by a worker: its place in the scan, its entry, its events.
type ReadFile = (usize, EventFileEntry, Vec<EventHead>);

/// Reads and parses every event file, in parallel.
pub fn read_all(
    store: &Store,
    files: &[(String, Stamp)],
    built_at_ns: i64,
) -> Result<(Vec<EventFileEntry>, Vec<EventHead>)> {
    let max_line = store.config.events.max_line_bytes;
    let max_file = store.config.events.max_file_bytes;
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 8)
        .min(files.len().max(1));
    let read_one = |(name, stamp): &(String, Stamp)| -> Result<(EventFileEntry, Vec<EventHead>)> {
        let (path, rel) = store.event_file(name);
        let bytes = match crate::safe_fs::read(&path, max_file) {
            Ok(bytes) => bytes,
            Err(e) => match crate::event::skipped_problem(&rel, &e) {
                Some(problem) => {
                    return Ok((entry(name, *stamp, built_at_ns, one(problem)), Vec::new()));
                }
                None => return Err(Error::io(&path, e)),
            },
        };
        let parsed = parse_events(&bytes, &rel, 0, max_line, Problems::new());
        let read = EventFileEntry {
            consumed: parsed.consumed as u64,
            consumed_hash: xxhash_rust::xxh3::xxh3_64(&bytes[..parsed.consumed]),
            lines: parsed.lines,
            events: parsed.heads.len() as u64,
            ..entry(name, *stamp, built_at_ns, parsed.problems)
        };
        Ok((read, parsed.heads))
    };
    // Largest files first, dealt round-robin, keeps the workers about even.
    let mut order: Vec<usize> = (0..files.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(files[i].1.len));
    let results: Vec<Result<Vec<ReadFile>>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                let mine: Vec<usize> = order.iter().copied().skip(w).step_by(workers).collect();
                let read_one = &read_one;
                s.spawn(move || {
                    mine.into_iter()
                        .map(|i| read_one(&files[i]).map(|(e, h)| (i, e, h)))
                        .collect::<Result<Vec<_>>>()
                })
            })
            .collect();
        // A panic in a worker becomes an error, not a crash.
        let panicked = || {
            Err(super::Error::WorkerPanicked {
                what: "event files",
            }
            .into())
        };
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| panicked()))
            .collect()
    });
    let mut entries: Vec<Option<EventFileEntry>> = vec![None; files.len()];
    let mut heads = Vec::new();
    for r in results {
        for (i, e, h) in r? {
            entries[i] = Some(e);
            // The first (and largest) file's events are taken, not copied.
            if heads.is_empty() {
                heads = h;
            } else {
                heads.extend(h);
            }
        }
    }
    Ok((entries.into_iter().flatten().collect(), heads))
}

/// The entry of an event file nothing is folded from (yet, or ever: one skipped).
fn entry(name: &str, stamp: Stamp, built_at_ns: i64, problems: Problems) -> EventFileEntry {
    EventFileEntry {
        file: name.to_owned(),
        stamp,
        racy: racy(built_at_ns, stamp.mtime_ns),
        consumed: 0,
        consumed_hash: xxhash_rust::xxh3::xxh3_64(&[]),
        lines: 0,
        events: 0,
        problems,
    }
}

/// The problems of a file skipped whole: just this one.
fn one(problem: Problem) -> Problems {
    let mut problems = Problems::new();
    problems.push_always(problem);
    problems
}

/// Feeds the first `len` bytes of `file` to `hash`; false when the file is shorter.
fn hash_prefix(
    file: &mut std::fs::File,
    len: usize,
    hash: &mut xxhash_rust::xxh3::Xxh3,
) -> std::io::Result<bool> {
    let mut buf = vec![0u8; (1 << 20).min(len.max(1))];
    let mut left = len;
    while left > 0 {
        let want = left.min(buf.len());
        let n = match std::io::Read::read(file, &mut buf[..want]) {
            Ok(0) => return Ok(false),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        hash.update(&buf[..n]);
        left -= n;
    }
    Ok(true)
}

/// Brings the event files and fold of `summary` up to date, reading only what was
/// appended. `Ok(Err(reason))`: the whole log must be folded again.
pub fn update(
    store: &Store,
    files: &[(String, Stamp)],
    summary: &mut Summary,
    built_at_ns: i64,
) -> Result<std::result::Result<Appended, RebuildReason>> {
    let old = std::mem::take(&mut summary.event_files);
    if old.iter().any(|e| {
        files
            .binary_search_by(|(n, _)| n.as_str().cmp(&e.file))
            .is_err()
    }) {
        return Ok(Err(RebuildReason::EventFileRemoved));
    }
    let mut entries = Vec::with_capacity(files.len());
    let mut new_heads = Vec::new();
    let mut changed = 0;
    let mut new_bytes = 0;
    for (name, stamp) in files {
        let prev = old
            .binary_search_by(|e| e.file.as_str().cmp(name))
            .ok()
            .map(|i| &old[i]);
        if let Some(p) = prev
            && p.stamp == *stamp
            && !p.racy
        {
            entries.push(p.clone());
            continue;
        }
        changed += 1;
        let (path, rel) = store.event_file(name);
        let io = |e| Error::io(&path, e);
        let mut file = match crate::safe_fs::open_read(&path) {
            Ok(file) => file,
            Err(e) => match crate::safe_fs::not_regular(&e) {
                // Events folded from it before are gone: fold the log again.
                Some(_) if prev.is_some_and(|p| p.consumed > 0) => {
                    return Ok(Err(RebuildReason::EventFileNotRegular {
                        file: name.clone(),
                    }));
                }
                Some(kind) => {
                    let problem = crate::event::not_regular_problem(&rel, kind);
                    entries.push(entry(name, *stamp, built_at_ns, one(problem)));
                    continue;
                }
                None => return Err(io(e)),
            },
        };
        // Sized from the descriptor before anything is read: a file over
        // the bound is never read, not even the part folded already.
        let max_file = store.config.events.max_file_bytes;
        if file.metadata().map_err(io)?.len() > max_file {
            if prev.is_some_and(|p| p.consumed > 0) {
                return Ok(Err(RebuildReason::EventFileTooLarge { file: name.clone() }));
            }
            let problem = crate::event::too_large_problem(&rel, max_file);
            entries.push(entry(name, *stamp, built_at_ns, one(problem)));
            continue;
        }
        // The part folded already is only hashed, a block at a time (a month's
        // file can run to tens of MB).
        let mut hash = xxhash_rust::xxh3::Xxh3::new();
        let (start, lines, problems, events) = match prev {
            Some(p) => {
                let end = usize::try_from(p.consumed).unwrap_or(usize::MAX);
                if !hash_prefix(&mut file, end, &mut hash).map_err(io)?
                    || hash.digest() != p.consumed_hash
                {
                    return Ok(Err(RebuildReason::EventFileRewritten {
                        file: name.clone(),
                    }));
                }
                let mut kept = p.problems.clone();
                kept.retain(|p| p.code != "torn_line" && !crate::event::is_skipped_file(&p.code));
                (end, p.lines, kept, p.events)
            }
            None => (0, 0, Problems::new(), 0),
        };
        let mut rest = Vec::new();
        // Bounded, should the file have grown since it was sized.
        let room = max_file.saturating_sub(start as u64);
        std::io::Read::read_to_end(&mut std::io::Read::take(&mut file, room), &mut rest)
            .map_err(io)?;
        let max_line = store.config.events.max_line_bytes;
        let parsed = parse_events(&rest, &rel, lines, max_line, problems);
        hash.update(&rest[..parsed.consumed]);
        new_bytes += rest.len() as u64;
        entries.push(EventFileEntry {
            consumed: (start + parsed.consumed) as u64,
            consumed_hash: hash.digest(),
            lines: parsed.lines,
            events: events + parsed.heads.len() as u64,
            ..entry(name, *stamp, built_at_ns, parsed.problems)
        });
        new_heads.extend(parsed.heads);
    }
    let pattern_heads = match fold_new(&mut summary.fold, new_heads) {
        Ok(p) => p,
        Err(reason) => return Ok(Err(reason)),
    };
    summary.event_files = entries;
    Ok(Ok(Appended {
        files: changed,
        bytes: new_bytes,
        pattern_heads,
    }))
}

/// What [`update`] folded.
pub struct Appended {
    /// Event files re-read.
    pub files: usize,
    /// Bytes read past what the index had folded.
    pub bytes: u64,
    /// The pattern events among the new ones, in order.
    pub pattern_heads: Vec<EventHead>,
}

/// Folds `heads` (new events) into `fold` if they all sort after what is
/// folded, and returns the pattern events among them, in order.
fn fold_new(
    fold: &mut Fold,
    mut heads: Vec<EventHead>,
) -> std::result::Result<Vec<EventHead>, RebuildReason> {
    heads.sort_unstable_by_key(|h| (h.key, h.ts));
    let before = heads.len() as u64;
    heads.dedup_by_key(|h| h.key);
    let copies = before - heads.len() as u64;
    heads.sort_unstable_by_key(EventHead::order);
    // One pass over the new events (sorted): the first refused says why.
    for h in &heads {
        if !fold.accepts_next(h) {
            return Err(if fold.last.is_some_and(|last| h.order() <= last) {
                RebuildReason::EventsSortBefore
            } else {
                RebuildReason::EventIdOlderThanTime
            });
        }
    }
    fold.duplicates += copies;
    for h in &heads {
        fold.apply(h);
    }
    heads.retain(|h| h.pattern.is_some());
    Ok(heads)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Indexes written before hashed the folded part in one call: the
    /// streamed hash, a block at a time, must be the same value.
    #[test]
    fn a_prefix_hashed_by_blocks_is_the_one_shot_hash() {
        let bytes: Vec<u8> = (0..3_000_003u32).map(|i| (i % 251) as u8).collect();
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("2026-11.jsonl");
        std::fs::write(&path, &bytes).expect("write");
        for len in [0, 1, 1 << 20, (1 << 20) + 7, bytes.len()] {
            let mut file = std::fs::File::open(&path).expect("open");
            let mut hash = xxhash_rust::xxh3::Xxh3::new();
            assert!(hash_prefix(&mut file, len, &mut hash).expect("read"));
            assert_eq!(
                hash.digest(),
                xxhash_rust::xxh3::xxh3_64(&bytes[..len]),
                "{len}"
            );
        }
        let mut file = std::fs::File::open(&path).expect("open");
        let mut hash = xxhash_rust::xxh3::Xxh3::new();
        assert!(!hash_prefix(&mut file, bytes.len() + 1, &mut hash).expect("read"));
    }
}
