//! The event logs of the two sides: each folded (effective state, patterns,
//! handoffs), and the events one side has that the other has not.
//!
//! The log is union-merged and de-duplicated by id, so the events a change
//! records are the ids present on the new side and not on the old one. An
//! event file with the same blob id on both sides holds the same events: it
//! is never compared, and none of its events is new or missing. Events on the
//! old side and not on the new one should not exist (the log is append-only)
//! and are reported as an anomaly.
//!
//! What a side's log folds to is kept in the git dir ([`SideLog`]), keyed on
//! its event files' names and blob ids: the same files fold the same way, so
//! a side seen before is never parsed again. And since the log is
//! append-only, the new side is usually the old one with lines appended to
//! its files: then only the appended lines are parsed, and the new side's
//! fold is the old one's with them applied ([`Fold::accepts_next`]). Anything
//! else (a line removed or rewritten, an event that sorts before the old
//! side's last) takes the whole path: both logs parsed and folded.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;

use gix::ObjectId;
use serde::{Deserialize, Serialize};

use super::side::Side;
use crate::config::EventsConfig;
use crate::error::{Error, Result};
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
    pub added: Vec<Logged>,
    /// Events of the old side the new one lacks (an anomaly), in (ts, id) order.
    pub missing: Vec<Logged>,
    /// Malformed lines and unreadable files among the event files that differ.
    pub problems: Vec<Problem>,
}

/// An event one side has and the other lacks: its head, which is all most
/// of the report reads, and its line, parsed in full only when asked. The
/// line stays in its file's bytes, shared: a change that adds a large log
/// costs no second copy of it.
#[derive(Debug)]
pub struct Logged {
    pub head: EventHead,
    bytes: Arc<Vec<u8>>,
    range: std::ops::Range<usize>,
}

impl Logged {
    fn line(&self) -> &[u8] {
        self.bytes.get(self.range.clone()).unwrap_or_default()
    }

    /// The whole event (`None` for a line that parses as a head and not as
    /// an event: not counted as either).
    pub fn event(&self) -> Option<Event> {
        crate::event::parse_event_line(self.line(), u64::MAX).ok()
    }

    /// An ack's status and a verdict's outcome: all the per-directive
    /// counts read of thousands of events (the other fields are skipped).
    pub fn outcome(&self) -> Outcome {
        serde_json::from_slice(self.line()).unwrap_or_default()
    }
}

/// The fields of an event that say how it went.
#[derive(Debug, Default, Deserialize)]
pub struct Outcome {
    pub status: Option<String>,
    pub verdict: Option<String>,
}

/// An event file's lines, parsed.
struct Parsed {
    bytes: Arc<Vec<u8>>,
    /// Each well-formed line's head with the byte range of the line.
    heads: Vec<(EventHead, std::ops::Range<usize>)>,
    problems: Vec<Problem>,
    /// Lines in the file (a torn last line included).
    lines: u32,
    /// Was it read (not over its limit, not unreadable)?
    read: bool,
}

/// A side's log as the cache keeps it: its fold, and what it takes to tell
/// the events of another side from its own without reading it again.
#[derive(Default, Serialize, Deserialize)]
struct SideLog {
    fold: Fold,
    patterns: PatternFold,
    /// The lines of its handoff events, in fold order.
    handoffs: Vec<String>,
    /// The key of every event of the side: kept after the rest in the
    /// cache file and read there in place, since only a side compared
    /// as the old one looks them up (a few, of a hundred thousand).
    #[serde(skip)]
    keys: Keys,
    /// Each regular event file of the side.
    files: Vec<FileInfo>,
}

/// Event keys, sorted, distinct, 16 big-endian bytes each.
enum Keys {
    /// Of a log just folded.
    Owned(Vec<u8>),
    /// In the kept file, from byte `start` of its body.
    Kept {
        file: crate::index::SealedFile,
        start: usize,
    },
}

impl Default for Keys {
    fn default() -> Self {
        Keys::Owned(Vec::new())
    }
}

impl Keys {
    fn bytes(&self) -> &[u8] {
        match self {
            Keys::Owned(bytes) => bytes,
            Keys::Kept { file, start } => file.body().get(*start..).unwrap_or_default(),
        }
    }
}

/// What is known of an event file without reading it again.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct FileInfo {
    /// Its blob id.
    id: Vec<u8>,
    len: u64,
    lines: u32,
    read: bool,
    /// Its malformed lines (their path is the file's wherever it is found).
    problems: Vec<Problem>,
}

impl SideLog {
    fn has(&self, key: u128) -> bool {
        let (keys, key) = (self.keys.bytes(), key.to_be_bytes());
        let (mut lo, mut hi) = (0, keys.len() / 16);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match keys[mid * 16..mid * 16 + 16].cmp(&key[..]) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return true,
            }
        }
        false
    }

    fn info(&self) -> HashMap<&[u8], &FileInfo> {
        self.files.iter().map(|f| (f.id.as_slice(), f)).collect()
    }

    fn folded(self) -> Folded {
        Folded {
            fold: self.fold,
            patterns: self.patterns,
            handoff_events: self
                .handoffs
                .iter()
                .filter_map(|l| crate::event::parse_event_line(l.as_bytes(), u64::MAX).ok())
                .collect(),
        }
    }
}

/// An event file of a side: path below `.swarm/`, blob id, is it a regular file.
type EventFile<'a> = (&'a str, ObjectId, bool);

/// The event files of a side: (path below `.swarm/`, blob id) of the regular month files.
fn event_files(side: &Side) -> Vec<EventFile<'_>> {
    side.files
        .iter()
        .filter_map(|(path, f)| {
            let name = path.strip_prefix("events/")?;
            crate::event::is_month_file(name).then_some((path.as_str(), f.id, f.kind.is_none()))
        })
        .collect()
}

/// Reads, compares and folds the logs of `old` and `new`, keeping each
/// side's fold in `cache` (a folder in the git dir; `None`: keep nothing).
pub fn read(
    repo: &gix::Repository,
    old: &Side,
    new: &Side,
    cfg: &EventsConfig,
    cache: Option<&Path>,
) -> Result<Logs> {
    let (old_files, new_files) = (event_files(old), event_files(new));
    let old_ids: HashSet<ObjectId> = old_files.iter().map(|f| f.1).collect();
    let new_ids: HashSet<ObjectId> = new_files.iter().map(|f| f.1).collect();
    let mut logs = Logs::default();
    for (side, files, other) in [(old, &old_files, &new_ids), (new, &new_files, &old_ids)] {
        for (path, id, regular) in files.iter() {
            if !regular && !other.contains(id) {
                let kind = side.files[*path]
                    .kind
                    .unwrap_or(crate::safe_fs::FileKind::Other);
                logs.problems
                    .push(super::side::not_regular(&format!(".swarm/{path}"), kind));
            }
        }
    }
    let (old_path, new_path) = (
        cache.map(|c| c.join(cache_name(&old_files, cfg))),
        cache.map(|c| c.join(cache_name(&new_files, cfg))),
    );
    let mut parsed: HashMap<ObjectId, Parsed> = HashMap::new();
    let old_log = match old_path.as_deref().and_then(load) {
        Some(log) => log,
        None => {
            parse_side(repo, old, &old_files, cfg, &mut parsed)?;
            let log = build(&old_files, &parsed);
            store(old_path.as_deref(), &log);
            log
        }
    };
    crate::trace::mark("old log folded");
    let cached_new = new_path.as_deref().and_then(load);
    let appended = appended(repo, cfg, &old_log, (old, &old_files), (new, &new_files))?;
    crate::trace::mark("appended lines read");
    let new_log = match appended {
        Some(app) => {
            // The old files that differ: their problems are known already.
            let info = old_log.info();
            let mut seen = HashSet::new();
            for (path, id, regular) in &old_files {
                if *regular && !new_ids.contains(id) && seen.insert(*id) {
                    let rel = format!(".swarm/{path}");
                    if let Some(f) = info.get(id.as_bytes()) {
                        logs.problems.extend(f.problems.iter().map(|p| at(p, &rel)));
                    }
                }
            }
            logs.problems.extend(app.problems.iter().cloned());
            let log = match cached_new {
                Some(log) => log,
                None => {
                    let log = match extend(&old_log, &app, &new_files) {
                        Some(log) => log,
                        None => {
                            parse_side(repo, new, &new_files, cfg, &mut parsed)?;
                            build(&new_files, &parsed)
                        }
                    };
                    store(new_path.as_deref(), &log);
                    log
                }
            };
            logs.added = app.heads;
            log
        }
        None => {
            parse_side(repo, old, &old_files, cfg, &mut parsed)?;
            parse_side(repo, new, &new_files, cfg, &mut parsed)?;
            whole(
                &mut logs,
                &parsed,
                (&old_files, &new_files),
                (&old_ids, &new_ids),
            );
            match cached_new {
                Some(log) => log,
                None => {
                    let log = build(&new_files, &parsed);
                    store(new_path.as_deref(), &log);
                    log
                }
            }
        }
    };
    crate::trace::mark("new log folded");
    logs.old = old_log.folded();
    logs.new = new_log.folded();
    Ok(logs)
}

/// A problem found in a file, at `rel` (where the same blob is now).
fn at(p: &Problem, rel: &str) -> Problem {
    Problem {
        path: rel.to_owned(),
        ..p.clone()
    }
}

/// Bump when [`SideLog`] (or what it holds: the fold, the pattern fold) changes layout,
/// or what it keeps (v3: a file's problems capped).
const FORMAT: &[u8] = b"git-swarm diff side log v3\n";

/// How many sides' logs are kept; the oldest are removed.
const KEEP: usize = 8;

/// The cache file name of a side: its event files' names and blob ids fix
/// its log (a tree's are what its `events/` tree id stands for; the working
/// tree's are hashed as `git add` would), read within the same limits, by
/// the same version of git-swarm.
fn cache_name(files: &[EventFile<'_>], cfg: &EventsConfig) -> String {
    let mut key = xxhash_rust::xxh3::Xxh3::new();
    key.update(env!("CARGO_PKG_VERSION").as_bytes());
    key.update(&[0]);
    key.update(FORMAT);
    key.update(&cfg.max_file_bytes.to_le_bytes());
    key.update(&cfg.max_line_bytes.to_le_bytes());
    for (path, id, regular) in files {
        key.update(path.as_bytes());
        key.update(&[0, u8::from(*regular)]);
        key.update(id.as_bytes());
    }
    format!("{:032x}", key.digest128())
}

/// The side log kept at `path`, if it is there, whole, and of this format:
/// anything else is a miss (and is rewritten). The file's body is the
/// length of the log's encoding (u64 LE), that encoding, then the keys.
fn load(path: &Path) -> Option<SideLog> {
    let file = crate::index::SealedFile::open(path, FORMAT)?;
    let body = file.body();
    let (len, rest) = body.split_at_checked(8)?;
    let len = usize::try_from(u64::from_le_bytes(len.try_into().ok()?)).ok()?;
    let (encoded, keys) = rest.split_at_checked(len)?;
    let mut log: SideLog = postcard::from_bytes(encoded).ok()?;
    if !keys.len().is_multiple_of(16) {
        return None;
    }
    log.keys = Keys::Kept {
        file,
        start: 8 + len,
    };
    Some(log)
}

/// Keeps `log` at `path`. Only a cache: a read-only git dir must not stop a diff.
fn store(path: Option<&Path>, log: &SideLog) {
    let Some(path) = path else { return };
    let Ok(encoded) = postcard::to_stdvec(log) else {
        return;
    };
    let keys = log.keys.bytes();
    let mut body = Vec::with_capacity(8 + encoded.len() + keys.len());
    body.extend_from_slice(&(encoded.len() as u64).to_le_bytes());
    body.extend_from_slice(&encoded);
    body.extend_from_slice(keys);
    let _ = crate::index::write_sealed(path, FORMAT, &body, KEEP);
}

/// Reads and parses the regular event files of a side not parsed yet, half
/// on each core (a whole log is what a first diff spends its time on).
fn parse_side(
    repo: &gix::Repository,
    side: &Side,
    files: &[EventFile<'_>],
    cfg: &EventsConfig,
    parsed: &mut HashMap<ObjectId, Parsed>,
) -> Result<()> {
    let mut todo: Vec<(&str, ObjectId)> = Vec::new();
    for (path, id, regular) in files {
        if *regular && !parsed.contains_key(id) && !todo.iter().any(|(_, t)| t == id) {
            todo.push((path, *id));
        }
    }
    let done = super::on_two_threads(repo, &todo, |repo, (path, _)| {
        let rel = format!(".swarm/{path}");
        Ok(match side.bytes(repo, path, cfg.max_file_bytes)? {
            Ok(bytes) => parse(bytes, 0, 0, &rel, cfg.max_line_bytes),
            Err(problem) => Parsed {
                bytes: Arc::default(),
                heads: Vec::new(),
                problems: vec![problem],
                lines: 0,
                read: false,
            },
        })
    })?;
    for ((_, id), p) in todo.iter().zip(done) {
        parsed.insert(*id, p);
    }
    Ok(())
}

/// A side's log from its files, all parsed: folded from scratch.
fn build(files: &[EventFile<'_>], parsed: &HashMap<ObjectId, Parsed>) -> SideLog {
    let mut seen = HashSet::new();
    let mut heads = Vec::new();
    let mut handoffs = Vec::new();
    let mut infos = Vec::new();
    for (_, id, _) in files {
        if !seen.insert(*id) {
            continue;
        }
        let Some(p) = parsed.get(id) else { continue };
        infos.push(FileInfo {
            id: id.as_bytes().to_vec(),
            len: p.bytes.len() as u64,
            lines: p.lines,
            read: p.read,
            problems: p.problems.clone(),
        });
        for (head, range) in &p.heads {
            if head.known.is_some_and(crate::handoff::is_handoff_kind) {
                let line = &p.bytes[range.clone()];
                if crate::event::parse_event_line(line, u64::MAX).is_ok()
                    && let Ok(text) = std::str::from_utf8(line)
                {
                    handoffs.push((head.order(), text.to_owned()));
                }
            }
            heads.push(head);
        }
    }
    handoffs.sort_by_key(|(order, _)| *order);
    handoffs.dedup_by_key(|(order, _)| order.1);
    let mut keys: Vec<u128> = heads.iter().map(|h| h.key).collect();
    keys.sort_unstable();
    keys.dedup();
    let (fold, patterns) = crate::fold::fold_both(heads);
    SideLog {
        fold,
        patterns,
        handoffs: handoffs.into_iter().map(|(_, l)| l).collect(),
        keys: key_bytes(&keys),
        files: infos,
    }
}

fn key_bytes(keys: &[u128]) -> Keys {
    Keys::Owned(keys.iter().flat_map(|k| k.to_be_bytes()).collect())
}

/// The lines the new side appended to the old one's files.
#[derive(Default)]
struct Appended {
    /// Each appended well-formed line, in (ts, id) order.
    heads: Vec<Logged>,
    /// The problems of the new side's files that differ.
    problems: Vec<Problem>,
    /// Those files.
    files: Vec<FileInfo>,
}

/// The lines the new side appended to the old side's event files, when
/// that is all it did: every old file that differs grew in place (the old
/// bytes, ending a line, are a prefix of the new, as git's blob id of that
/// prefix shows), and every appended event is new (no copy of an old one,
/// no two copies). `None` for anything else: then the whole logs are compared.
fn appended(
    repo: &gix::Repository,
    cfg: &EventsConfig,
    old_log: &SideLog,
    (old, old_files): (&Side, &[EventFile<'_>]),
    (new, new_files): (&Side, &[EventFile<'_>]),
) -> Result<Option<Appended>> {
    let old_ids: HashSet<ObjectId> = old_files.iter().map(|f| f.1).collect();
    let new_ids: HashSet<ObjectId> = new_files.iter().map(|f| f.1).collect();
    let info = old_log.info();
    let grown = |path: &str| -> Option<ObjectId> {
        let f = old.files.get(path)?;
        (f.kind.is_none() && !new_ids.contains(&f.id)).then_some(f.id)
    };
    for (path, id, regular) in old_files {
        if !regular || new_ids.contains(id) {
            continue;
        }
        let known = info.get(id.as_bytes()).is_some_and(|f| f.read);
        let replaced = new
            .files
            .get(*path)
            .is_some_and(|f| f.kind.is_none() && !old_ids.contains(&f.id));
        if !known || !replaced {
            return Ok(None);
        }
    }
    let mut out = Appended::default();
    let mut done = HashSet::new();
    let mut seen = HashSet::new();
    for (path, id, regular) in new_files {
        if !regular || old_ids.contains(id) || !done.insert(*id) {
            continue;
        }
        let rel = format!(".swarm/{path}");
        let Ok(bytes) = new.bytes(repo, path, cfg.max_file_bytes)? else {
            return Ok(None);
        };
        let (start, lines, mut problems) = match grown(path) {
            None => (0, 0, Vec::new()),
            Some(base) => {
                let Some(f) = info.get(base.as_bytes()) else {
                    return Ok(None);
                };
                let Ok(len) = usize::try_from(f.len) else {
                    return Ok(None);
                };
                let prefix = bytes
                    .get(..len)
                    .filter(|p| p.is_empty() || p.ends_with(b"\n"));
                match prefix {
                    Some(prefix) if blob_id(repo, prefix)? == base => {}
                    _ => return Ok(None),
                }
                (
                    len,
                    f.lines,
                    f.problems.iter().map(|p| at(p, &rel)).collect(),
                )
            }
        };
        let p = parse(bytes, start, lines, &rel, cfg.max_line_bytes);
        problems.extend(p.problems);
        for (head, range) in p.heads {
            if old_log.has(head.key) || !seen.insert(head.key) {
                return Ok(None);
            }
            out.heads.push(Logged {
                head,
                bytes: p.bytes.clone(),
                range,
            });
        }
        out.files.push(FileInfo {
            id: id.as_bytes().to_vec(),
            len: p.bytes.len() as u64,
            lines: p.lines,
            read: true,
            problems: problems.clone(),
        });
        out.problems.extend(problems);
    }
    out.heads.sort_by_key(|l| l.head.order());
    Ok(Some(out))
}

fn blob_id(repo: &gix::Repository, bytes: &[u8]) -> Result<ObjectId> {
    gix::objs::compute_hash(repo.object_hash(), gix::objs::Kind::Blob, bytes)
        .map_err(|e| Error::git("hashing an event file", e))
}

/// The new side's log as the old one's with the appended events applied,
/// when they all sort after it; `None` when one does not.
fn extend(old: &SideLog, app: &Appended, new_files: &[EventFile<'_>]) -> Option<SideLog> {
    let mut fold = old.fold.clone();
    let mut patterns = old.patterns.clone();
    let mut handoffs = old.handoffs.clone();
    for logged in &app.heads {
        let head = &logged.head;
        if !fold.accepts_next(head) {
            return None;
        }
        fold.apply(head);
        patterns.apply_head(head);
        if head.known.is_some_and(crate::handoff::is_handoff_kind)
            && logged.event().is_some()
            && let Ok(text) = std::str::from_utf8(logged.line())
        {
            handoffs.push(text.to_owned());
        }
    }
    let mut keys: Vec<u128> = old
        .keys
        .bytes()
        .chunks_exact(16)
        .filter_map(|c| c.try_into().ok().map(u128::from_be_bytes))
        .chain(app.heads.iter().map(|l| l.head.key))
        .collect();
    keys.sort_unstable();
    let info: HashMap<&[u8], &FileInfo> = old
        .files
        .iter()
        .chain(&app.files)
        .map(|f| (f.id.as_slice(), f))
        .collect();
    let mut seen = HashSet::new();
    let files = new_files
        .iter()
        .filter(|(_, id, regular)| *regular && seen.insert(*id))
        .filter_map(|(_, id, _)| info.get(id.as_bytes()).map(|f| (*f).clone()))
        .collect();
    Some(SideLog {
        fold,
        patterns,
        handoffs,
        keys: key_bytes(&keys),
        files,
    })
}

/// The whole comparison, both sides parsed: the problems of the files that
/// differ, the events added and the events missing.
fn whole(
    logs: &mut Logs,
    parsed: &HashMap<ObjectId, Parsed>,
    (old_files, new_files): (&[EventFile<'_>], &[EventFile<'_>]),
    (old_ids, new_ids): (&HashSet<ObjectId>, &HashSet<ObjectId>),
) {
    // Problems in a file both sides share are not the change's doing.
    let mut reported = HashSet::new();
    for (files, other) in [(old_files, new_ids), (new_files, old_ids)] {
        for (path, id, regular) in files {
            if !regular || other.contains(id) || !reported.insert(*id) {
                continue;
            }
            if let Some(p) = parsed.get(id) {
                let rel = format!(".swarm/{path}");
                logs.problems.extend(p.problems.iter().map(|p| at(p, &rel)));
            }
        }
    }
    let keys_of = |files: &[EventFile<'_>]| -> HashSet<u128> {
        files
            .iter()
            .filter_map(|f| parsed.get(&f.1))
            .flat_map(|p| p.heads.iter().map(|(h, _)| h.key))
            .collect()
    };
    let (old_keys, new_keys) = (keys_of(old_files), keys_of(new_files));
    let only = |files: &[EventFile<'_>], others: &HashSet<ObjectId>, keys: &HashSet<u128>| {
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
                out.push(Logged {
                    head: head.clone(),
                    bytes: p.bytes.clone(),
                    range: range.clone(),
                });
            }
        }
        out.sort_by_key(|a| a.head.order());
        out
    };
    logs.added = only(new_files, old_ids, &old_keys);
    logs.missing = only(old_files, new_ids, &new_keys);
}

/// Parses an event file's lines from byte `start`, which begins line
/// `lines + 1`: the heads of the good ones, a problem (file:line:col) for
/// each bad one.
fn parse(bytes: Arc<Vec<u8>>, start: usize, lines: u32, rel: &str, max_line: u64) -> Parsed {
    let mut heads = Vec::new();
    // Kept up to a cap and counted past it: a pull request's file of
    // millions of malformed lines is a hundred problems and a count.
    let mut problems = crate::problem::Problems::new();
    let mut start = start;
    let mut line_no = lines;
    while start < bytes.len() {
        line_no += 1;
        let end = memchr::memchr(b'\n', &bytes[start..]).map_or(bytes.len(), |i| start + i);
        let raw = &bytes[start..end];
        if end == bytes.len() && !raw.is_empty() {
            problems.push_always(
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
                None => problems.push_error_with(rel, || {
                    let (col, message, hint) = match crate::event::parse_event_line(raw, max_line) {
                        Err(e) => e,
                        Ok(_) => (
                            1,
                            "malformed event".to_owned(),
                            "each line must be one JSON object with `id`, `ts` and `kind`",
                        ),
                    };
                    Problem::error(rel, "bad_event", message)
                        .at(line_no, col)
                        .with_hint(hint)
                }),
            }
        }
        start = end + 1;
    }
    Parsed {
        bytes,
        heads,
        problems: problems.into_list(),
        lines: line_no,
        read: true,
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
