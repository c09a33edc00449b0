//! The derived index in `$GIT_DIR/swarm/index`: parsed directives, the
//! fold of the event log, and the stamps of the files they came from.
//!
//! Files are the truth; the index is a cache. It is keyed by a fingerprint
//! of `.swarm/` (each file's path, size and mtime), refreshed by whatever
//! command finds it stale, never read back into files, and safe to delete.
//!
//! Refreshing is incremental where it can be: a changed directive file is
//! parsed again on its own; an event file that only grew has just its new
//! lines parsed and folded (after checking that the bytes already folded are
//! unchanged). A file that shrank or was rewritten, a removed file, or a new
//! event that sorts before the last one folded (a merge) makes the whole
//! event log fold again. Like git's index, a file modified within two
//! seconds of the last refresh is "racy" and is re-checked by content, since
//! its mtime cannot tell a second edit from the first.
//!
//! Layout: `GITSWARM` magic, format version (u32 LE), meta length (u64 LE),
//! the meta (postcard), then the sorted event id keys as raw 16-byte LE
//! integers, read only when new events have to be de-duplicated.

use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime};

use serde::{Deserialize, Serialize};

use crate::directive::{Directive, parse_directive_toml, parse_quarantined_toml};
use crate::error::{Error, Result};
use crate::event::{is_month_file, parse_event_line};
use crate::fold::{EventHead, Fold, fold_all};
use crate::problem::Problem;
use crate::store::Store;

const MAGIC: &[u8; 8] = b"GITSWARM";
/// Bump when the meta layout or the fold changes; an index of another format is rebuilt.
const FORMAT: u32 = 2;
const RACY_NS: i64 = 2_000_000_000;

/// Size, mtime and inode of a file: what the fingerprint is made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stamp {
    pub len: u64,
    pub mtime_ns: i64,
    pub ino: u64,
}

impl Stamp {
    fn of(meta: &std::fs::Metadata) -> Stamp {
        let mtime_ns = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
            .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX));
        #[cfg(unix)]
        let ino = std::os::unix::fs::MetadataExt::ino(meta);
        #[cfg(not(unix))]
        let ino = 0;
        Stamp {
            len: meta.len(),
            mtime_ns,
            ino,
        }
    }
}

/// A directive (or quarantined entry) file as indexed.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DirectiveEntry {
    /// File name in its folder (`<id>.toml`).
    pub file: String,
    stamp: Stamp,
    racy: bool,
    /// The entry, when it parsed (it may still have gate problems).
    pub directive: Option<Directive>,
    /// For quarantined entries: the reason and detail recorded in the file.
    pub quarantine: Option<(String, Option<String>)>,
    /// Everything wrong with the file; empty for a healthy entry.
    pub problems: Vec<Problem>,
}

impl DirectiveEntry {
    pub fn stem(&self) -> &str {
        self.file.strip_suffix(".toml").unwrap_or(&self.file)
    }
}

/// An event file as indexed.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EventFileEntry {
    pub file: String,
    stamp: Stamp,
    racy: bool,
    /// Bytes folded: up to and including the last newline.
    consumed: u64,
    /// xxh3 of the bytes folded, to tell an append from a rewrite.
    consumed_hash: u64,
    /// Lines in the bytes folded.
    pub lines: u32,
    /// Events in the file (duplicates included).
    pub events: u64,
    /// Malformed lines and a torn tail.
    pub problems: Vec<Problem>,
}

/// The index's contents, apart from the id keys.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Index {
    format: u32,
    /// The `.swarm/` this was built from (an index copied elsewhere is rebuilt).
    swarm_dir: String,
    pub fingerprint: u64,
    built_at_ns: i64,
    config: Option<Stamp>,
    pub directives: Vec<DirectiveEntry>,
    pub quarantine: Vec<DirectiveEntry>,
    pub event_files: Vec<EventFileEntry>,
    pub fold: Fold,
    id_count: u64,
}

/// How a refresh went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refresh {
    /// Nothing had changed.
    Fresh,
    /// Only changed files were read again.
    Updated { directives: usize, events: usize },
    /// Built from scratch, and why.
    Rebuilt { reason: String },
}

/// An index ready to read, and what it took to get it.
#[derive(Debug)]
pub struct Loaded {
    pub index: Index,
    pub refresh: Refresh,
    pub elapsed: std::time::Duration,
}

impl Index {
    /// Every problem the index knows of, in path order.
    pub fn problems(&self) -> impl Iterator<Item = &Problem> {
        self.directives
            .iter()
            .chain(&self.quarantine)
            .flat_map(|d| &d.problems)
            .chain(self.event_files.iter().flat_map(|e| &e.problems))
    }

    pub fn event_lines(&self) -> u64 {
        self.event_files.iter().map(|e| e.events).sum()
    }

    pub fn directive(&self, id: &str) -> Option<&DirectiveEntry> {
        self.directives.iter().find(|d| d.stem() == id)
    }

    pub fn quarantined(&self, id: &str) -> Option<&DirectiveEntry> {
        self.quarantine.iter().find(|d| d.stem() == id)
    }
}

/// Where the index of a store lives.
pub fn index_path(store: &Store) -> PathBuf {
    store.git_dir.join("swarm").join("index")
}

/// The files the index is built from, with their stamps.
#[derive(Debug, Default)]
pub struct Scan {
    config: Option<Stamp>,
    directives: Vec<(String, Stamp)>,
    quarantine: Vec<(String, Stamp)>,
    events: Vec<(String, Stamp)>,
}

impl Scan {
    pub fn fingerprint(&self) -> u64 {
        let mut h = xxhash_rust::xxh3::Xxh3::new();
        let mut add = |tag: &str, name: &str, s: &Stamp| {
            h.update(tag.as_bytes());
            h.update(name.as_bytes());
            h.update(&[0]);
            h.update(&s.len.to_le_bytes());
            h.update(&s.mtime_ns.to_le_bytes());
            h.update(&s.ino.to_le_bytes());
        };
        if let Some(s) = &self.config {
            add("c", "config.toml", s);
        }
        for (n, s) in &self.directives {
            add("d", n, s);
        }
        for (n, s) in &self.quarantine {
            add("q", n, s);
        }
        for (n, s) in &self.events {
            add("e", n, s);
        }
        h.digest()
    }
}

/// Stats every file the index depends on.
pub fn scan(store: &Store) -> Result<Scan> {
    let swarm = &store.swarm_dir;
    let config = match std::fs::metadata(swarm.join("config.toml")) {
        Ok(m) => Some(Stamp::of(&m)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(Error::io(&swarm.join("config.toml"), e)),
    };
    Ok(Scan {
        config,
        directives: scan_dir(&swarm.join("directives"), |n| n.ends_with(".toml"))?,
        quarantine: scan_dir(&swarm.join("quarantine"), |n| n.ends_with(".toml"))?,
        events: scan_dir(&swarm.join("events"), is_month_file)?,
    })
}

fn scan_dir(dir: &Path, keep: impl Fn(&str) -> bool) -> Result<Vec<(String, Stamp)>> {
    let mut out = Vec::new();
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(Error::io(dir, e)),
    };
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(dir, e))?;
        let Ok(name) = entry.file_name().into_string() else {
            continue; // Not UTF-8: cannot be a directive or event file; `validate` reports it.
        };
        if !keep(&name) {
            continue;
        }
        // Follows symlinks like a read would; a dangling link reads as missing.
        match std::fs::metadata(entry.path()) {
            Ok(meta) if meta.is_file() => out.push((name, Stamp::of(&meta))),
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(&entry.path(), e)),
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}

/// Opens the index, refreshing (or rebuilding) it if `.swarm/` changed.
pub fn load(store: &Store) -> Result<Loaded> {
    let start = Instant::now();
    let scan = scan(store)?;
    let path = index_path(store);
    let old = read_meta(&path, store).ok().flatten();
    let (index, refresh) = match old {
        None => (
            build(store, &scan, None)?,
            Refresh::Rebuilt {
                reason: "no usable index".into(),
            },
        ),
        Some(old) => refresh(store, &scan, old)?,
    };
    if refresh != Refresh::Fresh {
        // The index is only a cache: a read-only git dir must not stop a command.
        let _ = write(&path, &index.0, &index.1);
    }
    Ok(Loaded {
        index: index.0,
        refresh,
        elapsed: start.elapsed(),
    })
}

/// Builds the index from scratch and writes it.
pub fn rebuild(store: &Store) -> Result<Loaded> {
    let start = Instant::now();
    let scan = scan(store)?;
    let (index, ids) = build(store, &scan, None)?;
    write(&index_path(store), &index, &ids)?;
    Ok(Loaded {
        index,
        refresh: Refresh::Rebuilt {
            reason: "asked for".into(),
        },
        elapsed: start.elapsed(),
    })
}

/// Is the index on disk up to date with `.swarm/`? `None` when there is no usable index.
pub fn status(store: &Store) -> Result<(Option<Index>, Scan, bool)> {
    let scan = scan(store)?;
    let old = read_meta(&index_path(store), store).ok().flatten();
    // Racy entries are re-checked by the next refresh, but a matching
    // fingerprint means nothing visible has changed since the index was built.
    let fresh = old
        .as_ref()
        .is_some_and(|o| o.fingerprint == scan.fingerprint());
    Ok((old, scan, fresh))
}

fn now_ns() -> i64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
}

fn racy(built_at_ns: i64, mtime_ns: i64) -> bool {
    mtime_ns >= built_at_ns - RACY_NS
}

type Built = (Index, Vec<u128>);

fn build(store: &Store, scan: &Scan, reuse: Option<&Index>) -> Result<Built> {
    let built_at_ns = now_ns();
    let directives = load_entries(
        store,
        "directives",
        &scan.directives,
        reuse.map(|i| &i.directives[..]),
        built_at_ns,
        false,
    )?;
    let quarantine = load_entries(
        store,
        "quarantine",
        &scan.quarantine,
        reuse.map(|i| &i.quarantine[..]),
        built_at_ns,
        true,
    )?;
    let (event_files, heads) = read_all_events(store, &scan.events, built_at_ns)?;
    let (fold, ids) = fold_all(heads);
    let index = Index {
        format: FORMAT,
        swarm_dir: store.swarm_dir.to_string_lossy().into_owned(),
        fingerprint: scan.fingerprint(),
        built_at_ns,
        config: scan.config,
        directives,
        quarantine,
        event_files,
        fold,
        id_count: ids.len() as u64,
    };
    Ok((index, ids))
}

fn refresh(store: &Store, scan: &Scan, old: Index) -> Result<(Built, Refresh)> {
    let unchanged = old.fingerprint == scan.fingerprint()
        && !old.directives.iter().chain(&old.quarantine).any(|d| d.racy)
        && !old.event_files.iter().any(|e| e.racy)
        && scan
            .config
            .is_none_or(|c| !racy(old.built_at_ns, c.mtime_ns));
    if unchanged {
        return Ok(((old, Vec::new()), Refresh::Fresh));
    }
    let built_at_ns = now_ns();
    let changed_directives = count_changed(&scan.directives, &old.directives)
        + count_changed(&scan.quarantine, &old.quarantine);
    let directives = load_entries(
        store,
        "directives",
        &scan.directives,
        Some(&old.directives),
        built_at_ns,
        false,
    )?;
    let quarantine = load_entries(
        store,
        "quarantine",
        &scan.quarantine,
        Some(&old.quarantine),
        built_at_ns,
        true,
    )?;

    // Events: try to fold only what was appended.
    let mut files = Vec::with_capacity(scan.events.len());
    let mut new_heads = Vec::new();
    let mut changed_events = 0;
    let mut rebuild_reason = None;
    if old
        .event_files
        .iter()
        .any(|e| scan.events.iter().all(|(n, _)| *n != e.file))
    {
        rebuild_reason = Some("an event file was removed".to_owned());
    }
    for (name, stamp) in &scan.events {
        if rebuild_reason.is_some() {
            break;
        }
        let prev = old.event_files.iter().find(|e| e.file == *name);
        match prev {
            Some(p) if p.stamp == *stamp && !p.racy => files.push(p.clone()),
            _ => {
                changed_events += 1;
                let path = store.swarm_dir.join("events").join(name);
                let bytes = std::fs::read(&path).map_err(|e| Error::io(&path, e))?;
                let (start, lines, mut problems) = match prev {
                    Some(p) => {
                        let end = usize::try_from(p.consumed).unwrap_or(usize::MAX);
                        if bytes.len() < end
                            || xxhash_rust::xxh3::xxh3_64(&bytes[..end]) != p.consumed_hash
                        {
                            rebuild_reason =
                                Some(format!("events/{name} was rewritten, not appended to"));
                            break;
                        }
                        (
                            end,
                            p.lines,
                            p.problems
                                .iter()
                                .filter(|p| p.code != "torn_line")
                                .cloned()
                                .collect(),
                        )
                    }
                    None => (0, 0, Vec::new()),
                };
                let rel = format!(".swarm/events/{name}");
                let parsed = parse_events(
                    &bytes[start..],
                    &rel,
                    lines,
                    store.config.events.max_line_bytes,
                );
                problems.extend(parsed.problems);
                let consumed = (start + parsed.consumed) as u64;
                let consumed_len = usize::try_from(consumed).unwrap_or(usize::MAX);
                files.push(EventFileEntry {
                    file: name.clone(),
                    stamp: *stamp,
                    racy: racy(built_at_ns, stamp.mtime_ns),
                    consumed,
                    consumed_hash: xxhash_rust::xxh3::xxh3_64(&bytes[..consumed_len]),
                    lines: parsed.lines,
                    events: prev.map_or(0, |p| p.events) + parsed.heads.len() as u64,
                    problems,
                });
                new_heads.extend(parsed.heads);
            }
        }
    }

    let mut fold = old.fold.clone();
    let mut ids = None;
    if rebuild_reason.is_none() && !new_heads.is_empty() {
        let old_ids = read_ids(&index_path(store), &old)?;
        new_heads.sort_unstable_by_key(|h| (h.key, h.ts));
        let before = new_heads.len() as u64;
        new_heads.dedup_by_key(|h| h.key);
        fold.duplicates += before - new_heads.len() as u64;
        let (dupes, fresh): (Vec<_>, Vec<_>) = new_heads
            .into_iter()
            .partition(|h| old_ids.binary_search(&h.key).is_ok());
        fold.duplicates += dupes.len() as u64;
        let mut fresh = fresh;
        fresh.sort_unstable_by_key(EventHead::order);
        if fresh.first().is_some_and(|h| !fold.accepts_next(h)) {
            rebuild_reason = Some("new events sort before ones already folded (a merge)".into());
        } else {
            for h in &fresh {
                fold.apply(h);
            }
            let mut keys: Vec<u128> = fresh.iter().map(|h| h.key).collect();
            keys.sort_unstable();
            ids = Some(merge_sorted(&old_ids, &keys));
        }
    }
    if let Some(reason) = rebuild_reason {
        let (event_files, heads) = read_all_events(store, &scan.events, built_at_ns)?;
        let (fold, ids) = fold_all(heads);
        let index = Index {
            format: FORMAT,
            swarm_dir: old.swarm_dir,
            fingerprint: scan.fingerprint(),
            built_at_ns,
            config: scan.config,
            directives,
            quarantine,
            id_count: ids.len() as u64,
            event_files,
            fold,
        };
        return Ok(((index, ids), Refresh::Rebuilt { reason }));
    }
    let ids = match ids {
        Some(ids) => ids,
        None => read_ids(&index_path(store), &old)?,
    };
    let index = Index {
        format: FORMAT,
        swarm_dir: old.swarm_dir,
        fingerprint: scan.fingerprint(),
        built_at_ns,
        config: scan.config,
        directives,
        quarantine,
        id_count: ids.len() as u64,
        event_files: files,
        fold,
    };
    Ok((
        (index, ids),
        Refresh::Updated {
            directives: changed_directives,
            events: changed_events,
        },
    ))
}

fn count_changed(scan: &[(String, Stamp)], old: &[DirectiveEntry]) -> usize {
    let changed = scan
        .iter()
        .filter(|(n, s)| !old.iter().any(|o| o.file == *n && o.stamp == *s && !o.racy))
        .count();
    let removed = old
        .iter()
        .filter(|o| scan.iter().all(|(n, _)| *n != o.file))
        .count();
    changed + removed
}

fn merge_sorted(a: &[u128], b: &[u128]) -> Vec<u128> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if a[i] <= b[j] {
            out.push(a[i]);
            i += 1;
        } else {
            out.push(b[j]);
            j += 1;
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

fn load_entries(
    store: &Store,
    folder: &str,
    files: &[(String, Stamp)],
    reuse: Option<&[DirectiveEntry]>,
    built_at_ns: i64,
    quarantine: bool,
) -> Result<Vec<DirectiveEntry>> {
    let dir = store.swarm_dir.join(folder);
    let mut out = Vec::with_capacity(files.len());
    for (name, stamp) in files {
        if let Some(prev) = reuse.and_then(|r| r.iter().find(|e| e.file == *name))
            && prev.stamp == *stamp
            && !prev.racy
        {
            out.push(prev.clone());
            continue;
        }
        let rel = format!(".swarm/{folder}/{name}");
        let mut entry = read_entry(&dir.join(name), &rel, name, quarantine);
        entry.stamp = *stamp;
        entry.racy = racy(built_at_ns, stamp.mtime_ns);
        out.push(entry);
    }
    Ok(out)
}

/// Reads and checks one directive or quarantine file.
pub fn read_entry(path: &Path, rel: &str, name: &str, quarantine: bool) -> DirectiveEntry {
    let mut entry = DirectiveEntry {
        file: name.to_owned(),
        stamp: Stamp {
            len: 0,
            mtime_ns: 0,
            ino: 0,
        },
        racy: true,
        directive: None,
        quarantine: None,
        problems: Vec::new(),
    };
    let bytes = match read_capped(path, crate::directive::limits::FILE_MAX) {
        Ok(b) => b,
        Err(message) => {
            // The whole file is the problem: point at its start, so that the
            // report keeps the `path:line:col` form that editors and CI parse.
            entry.problems.push(
                Problem::error(rel, "unreadable", message)
                    .at(1, 1)
                    .with_hint("a directive file is a small TOML file; replace this one"),
            );
            return entry;
        }
    };
    let text = match std::str::from_utf8(&bytes) {
        Ok(t) => t,
        Err(e) => {
            let good = String::from_utf8_lossy(&bytes[..e.valid_up_to()]).into_owned();
            entry.problems.push(
                Problem::error(rel, "not_utf8", "file is not valid UTF-8")
                    .at_offset(&good, good.len())
                    .with_hint("TOML files are UTF-8; re-save the file as UTF-8"),
            );
            return entry;
        }
    };
    let stem = name.strip_suffix(".toml").unwrap_or(name);
    if quarantine {
        let (q, problems) = parse_quarantined_toml(text, rel);
        entry.problems = problems;
        if let Some(q) = q {
            entry.quarantine = Some((q.quarantine_reason.as_str().to_owned(), q.quarantine_detail));
            entry.directive = Some(q.directive);
        }
    } else {
        let loaded = parse_directive_toml(text, rel);
        entry.problems = loaded.problems.clone();
        entry.problems.extend(loaded.gate_problems(text, rel));
        entry.directive = loaded.directive;
    }
    if let Some(d) = &entry.directive
        && d.id != stem
    {
        let offset = crate::directive::key_offset(text, "id").unwrap_or(0);
        entry.problems.push(
            Problem::error(
                rel,
                "id_mismatch",
                format!("id `{}` does not match the file name `{name}`", d.id),
            )
            .at_offset(text, offset)
            .with_hint(format!(
                "rename the file to `{}.toml`, or set `id = \"{stem}\"`",
                d.id
            )),
        );
    }
    entry
}

/// Reads a file of at most `max` bytes; a larger one is refused unread.
pub fn read_capped(path: &Path, max: u64) -> std::result::Result<Vec<u8>, String> {
    let file = File::open(path).map_err(|e| format!("cannot read: {e}"))?;
    let mut bytes = Vec::new();
    file.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read: {e}"))?;
    if bytes.len() as u64 > max {
        return Err(format!("file is over the {max}-byte limit"));
    }
    Ok(bytes)
}

struct ParsedEvents {
    heads: Vec<EventHead>,
    problems: Vec<Problem>,
    /// Bytes up to and including the last newline.
    consumed: usize,
    /// Line count after this chunk (complete lines only).
    lines: u32,
}

fn parse_events(bytes: &[u8], rel: &str, first_line: u32, max_line: u64) -> ParsedEvents {
    let mut out = ParsedEvents {
        heads: Vec::with_capacity(bytes.len() / 160),
        problems: Vec::new(),
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
        let head = if raw.len() as u64 > max_line {
            None
        } else {
            EventHead::parse(raw)
        };
        match head {
            Some(h) => out.heads.push(h),
            None => {
                let (col, message, hint) = match parse_event_line(raw, max_line) {
                    Err(e) => e,
                    Ok(_) => (
                        1,
                        "event fields have unexpected types".to_owned(),
                        "see docs/formats.md for the event fields",
                    ),
                };
                out.problems.push(
                    Problem::error(rel, "bad_event", message)
                        .at(out.lines, col)
                        .with_hint(hint),
                );
            }
        }
    }
    out.consumed = start;
    if start < bytes.len() {
        out.problems.push(
            Problem::error(rel, "torn_line", format!("last line is incomplete ({} bytes with no newline)", bytes.len() - start))
                .at(out.lines + 1, 1)
                .with_hint("a write was cut short (crash or full disk); `git swarm doctor --fix` saves it aside and truncates it"),
        );
    }
    out
}

/// One event file read by a worker: its position in the scan, its entry, its events.
type ReadFile = (usize, EventFileEntry, Vec<EventHead>);

fn read_all_events(
    store: &Store,
    files: &[(String, Stamp)],
    built_at_ns: i64,
) -> Result<(Vec<EventFileEntry>, Vec<EventHead>)> {
    let dir = store.swarm_dir.join("events");
    let max_line = store.config.events.max_line_bytes;
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 8)
        .min(files.len().max(1));
    let read_one = |(name, stamp): &(String, Stamp)| -> Result<(EventFileEntry, Vec<EventHead>)> {
        let path = dir.join(name);
        let bytes = std::fs::read(&path).map_err(|e| Error::io(&path, e))?;
        let parsed = parse_events(&bytes, &format!(".swarm/events/{name}"), 0, max_line);
        let entry = EventFileEntry {
            file: name.clone(),
            stamp: *stamp,
            racy: racy(built_at_ns, stamp.mtime_ns),
            consumed: parsed.consumed as u64,
            consumed_hash: xxhash_rust::xxh3::xxh3_64(&bytes[..parsed.consumed]),
            lines: parsed.lines,
            events: parsed.heads.len() as u64,
            problems: parsed.problems,
        };
        Ok((entry, parsed.heads))
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
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(Error::Index {
                        message: "an event reader thread panicked".into(),
                    })
                })
            })
            .collect()
    });
    let mut entries: Vec<Option<EventFileEntry>> = vec![None; files.len()];
    let mut heads = Vec::new();
    for r in results {
        for (i, e, h) in r? {
            entries[i] = Some(e);
            if heads.is_empty() {
                heads = h;
            } else {
                heads.extend(h);
            }
        }
    }
    Ok((entries.into_iter().flatten().collect(), heads))
}

fn read_meta(path: &Path, store: &Store) -> Result<Option<Index>> {
    let mut file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(path, e)),
    };
    let mut header = [0u8; 20];
    if file.read_exact(&mut header).is_err() || &header[..8] != MAGIC {
        return Ok(None);
    }
    let format = u32::from_le_bytes([header[8], header[9], header[10], header[11]]);
    if format != FORMAT {
        return Ok(None);
    }
    let mut len = [0u8; 8];
    len.copy_from_slice(&header[12..20]);
    let meta_len = u64::from_le_bytes(len);
    let file_len = file.metadata().map_err(|e| Error::io(path, e))?.len();
    if meta_len > file_len {
        return Ok(None);
    }
    let mut meta = vec![0u8; usize::try_from(meta_len).unwrap_or(0)];
    if file.read_exact(&mut meta).is_err() {
        return Ok(None);
    }
    let Ok(index) = postcard::from_bytes::<Index>(&meta) else {
        return Ok(None);
    };
    if index.format != FORMAT || index.swarm_dir != store.swarm_dir.to_string_lossy() {
        return Ok(None);
    }
    if file_len != 20 + meta_len + index.id_count * 16 {
        return Ok(None);
    }
    Ok(Some(index))
}

fn read_ids(path: &Path, index: &Index) -> Result<Vec<u128>> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    let start = bytes
        .len()
        .saturating_sub(usize::try_from(index.id_count * 16).unwrap_or(0));
    let ids: Vec<u128> = bytes[start..]
        .chunks_exact(16)
        .map(|c| {
            let mut b = [0u8; 16];
            b.copy_from_slice(c);
            u128::from_le_bytes(b)
        })
        .collect();
    if ids.len() as u64 != index.id_count {
        return Err(Error::Index {
            message: format!(
                "{} holds {} ids, expected {}",
                path.display(),
                ids.len(),
                index.id_count
            ),
        });
    }
    Ok(ids)
}

fn write(path: &Path, index: &Index, ids: &[u128]) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let meta = postcard::to_stdvec(index).map_err(|e| Error::Index {
        message: e.to_string(),
    })?;
    let mut buf = Vec::with_capacity(20 + meta.len() + ids.len() * 16);
    buf.extend_from_slice(MAGIC);
    buf.extend_from_slice(&FORMAT.to_le_bytes());
    buf.extend_from_slice(&(meta.len() as u64).to_le_bytes());
    buf.extend_from_slice(&meta);
    for id in ids {
        buf.extend_from_slice(&id.to_le_bytes());
    }
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(|e| Error::io(dir, e))?;
    tmp.write_all(&buf).map_err(|e| Error::io(tmp.path(), e))?;
    tmp.persist(path).map_err(|e| Error::io(path, e.error))?;
    Ok(())
}
