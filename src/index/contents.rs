//! What the index holds, and what its loaders hand out.

use std::sync::Arc;
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use super::mapped::Map;
use crate::directive::Directive;
use crate::fold::Fold;
use crate::problem::{Problem, Problems};

/// A directive (or quarantined entry) file as indexed.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct DirectiveEntry {
    /// File name in its folder (`<id>.toml`).
    pub file: String,
    /// The entry, when it parsed (it may still have gate problems).
    pub directive: Option<Directive>,
    /// For quarantined entries: the reason and detail recorded in the file.
    pub quarantine: Option<(String, Option<String>)>,
    /// Everything wrong with the file; empty for a healthy entry.
    pub problems: Vec<Problem>,
    /// The file's git blob id, when it was read: what tells a reviewed
    /// directive from one that is not (see [`crate::reviewed`]).
    pub blob: Option<crate::reviewed::Blob>,
    /// The hive it comes from (`[[hive]]` of config.toml), for a hive's
    /// directive; `None` for the project's own.
    pub origin: Option<String>,
}

impl DirectiveEntry {
    pub fn stem(&self) -> &str {
        self.file.strip_suffix(".toml").unwrap_or(&self.file)
    }

    /// The id as people read it: `hive:NAME/ID` for a hive's directive.
    pub fn shown_id(&self) -> std::borrow::Cow<'_, str> {
        match &self.origin {
            Some(hive) => crate::pins::origin_name(hive, self.stem()).into(),
            None => self.stem().into(),
        }
    }
}

/// A file's stamp as the index last saw it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileStamp {
    pub file: String,
    pub(super) stamp: Stamp,
    /// Modified within two seconds of the refresh that saw it: check again.
    pub(super) racy: bool,
}

/// An event file as indexed.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EventFileEntry {
    pub file: String,
    pub(super) stamp: Stamp,
    pub(super) racy: bool,
    /// Bytes folded: up to and including the last newline.
    pub(super) consumed: u64,
    /// xxh3 of the bytes folded, to tell an append from a rewrite.
    pub(super) consumed_hash: u64,
    /// Lines in the bytes folded.
    pub lines: u32,
    /// Events in the file (duplicates included).
    pub events: u64,
    /// Malformed lines (kept up to a cap, counted past it) and a torn tail.
    pub problems: Problems,
}

/// The whole index, its directive files parsed: what [`super::load`](fn@super::load) gives.
/// The fields the commands do not read are what a refresh needs to know.
#[derive(Debug, Clone, Default)]
pub struct Index {
    pub fingerprint: u64,
    pub(super) built_at_ns: i64,
    pub(super) config: Option<Stamp>,
    /// Fingerprint of the directive and quarantine files' stamps, and whether
    /// any was racy: enough to tell they are unchanged without decoding them.
    pub(super) entries_fingerprint: u64,
    pub(super) entries_racy: bool,
    /// [`super::hive::state_key`] when the entries were read: a change (a
    /// pin fetched or moved) is never vouched for by the watcher or the
    /// directives folder's stamp, which do not see it.
    pub(super) hive_key: u64,
    /// The directives folder's listing, when its stamp was not racy.
    pub(super) listing: Option<Listing>,
    /// Stamps of the directive and quarantine files; loaded with the entries.
    pub(super) directive_stamps: Vec<FileStamp>,
    pub(super) quarantine_stamps: Vec<FileStamp>,
    /// Parsed directive files, sorted by file name.
    pub directives: Vec<DirectiveEntry>,
    /// Parsed quarantine files, sorted by file name.
    pub quarantine: Vec<DirectiveEntry>,
    pub summary: Summary,
    /// The retrieval corpus, when it was decoded or built on the way.
    pub(super) corpus: Option<crate::retrieve::Corpus>,
    /// The pattern fold, when it was decoded or updated on the way.
    pub(super) patterns: Option<crate::pattern::fold::PatternFold>,
}

impl std::ops::Deref for Index {
    type Target = Summary;

    fn deref(&self) -> &Summary {
        &self.summary
    }
}

impl Index {
    pub fn directive(&self, id: &str) -> Option<&DirectiveEntry> {
        find_entry(&self.directives, &format!("{id}.toml"))
    }

    pub fn quarantined(&self, id: &str) -> Option<&DirectiveEntry> {
        find_entry(&self.quarantine, &format!("{id}.toml"))
    }

    /// Whether the directive `id` is retired: no longer checked, injected,
    /// gating a phase or owing anything.
    pub fn is_retired(&self, id: &str) -> bool {
        self.directive(id)
            .and_then(|e| e.directive.as_ref())
            .is_some_and(|d| d.status == crate::directive::Status::Retired)
    }

    /// The index without its parsed directive files, and those files.
    pub fn split_directives(self) -> (Summary, Vec<DirectiveEntry>) {
        (self.summary, self.directives)
    }
}

/// The index without its parsed directive files: the event files, the fold
/// of the event log, and the directive files counted.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    pub event_files: Vec<EventFileEntry>,
    pub fold: Fold,
    pub(super) directive_count: usize,
    pub(super) quarantine_count: usize,
    /// Errors in directive and quarantine files (counted without decoding them).
    pub(super) entry_errors: u64,
}

impl Summary {
    /// Errors in all the files the index read.
    pub fn error_count(&self) -> u64 {
        let events: u64 = (self.event_files.iter())
            .map(|e| e.problems.error_count())
            .sum();
        self.entry_errors + events
    }

    /// How many directive files there are.
    pub fn directive_count(&self) -> usize {
        self.directive_count
    }

    /// How many quarantine files there are.
    pub fn quarantine_count(&self) -> usize {
        self.quarantine_count
    }
}

/// What a loader read (`index`), and how the index was brought up to date.
#[derive(Debug)]
pub struct Loaded<T = Index> {
    pub index: T,
    pub refresh: Refresh,
    pub elapsed: std::time::Duration,
    /// Why the updated index could not be written: it is only a cache, so
    /// commands go on (`index refresh` reports it).
    pub write_error: Option<crate::Error>,
}

/// How a refresh went.
#[derive(Debug)]
pub enum Refresh {
    /// Nothing had changed.
    Fresh,
    /// Only changed files were read again.
    Updated { directives: usize, events: usize },
    /// Built from scratch (or its event log folded again), and why.
    Rebuilt { reason: RebuildReason },
}

/// Why the index was built from scratch, or its event log folded again.
#[derive(Debug, thiserror::Error)]
pub enum RebuildReason {
    /// No index, or one of another format or for another `.swarm/`.
    #[error("no usable index")]
    Missing,
    /// A section that failed its checksum or did not decode.
    #[error("the index was damaged: {0}")]
    Damaged(crate::Error),
    /// `git swarm index rebuild`.
    #[error("asked for")]
    Asked,
    #[error("config.toml changed")]
    ConfigChanged,
    #[error("config.toml may have changed (written within 2 s of the last refresh)")]
    ConfigMayHaveChanged,
    #[error("an event file was removed")]
    EventFileRemoved,
    #[error("events/{file} is no longer a regular file")]
    EventFileNotRegular { file: String },
    #[error("events/{file} is over events.max_file_bytes")]
    EventFileTooLarge { file: String },
    #[error("events/{file} was rewritten, not appended to")]
    EventFileRewritten { file: String },
    #[error("new events sort before ones already folded (a merge, rebase or cherry-pick)")]
    EventsSortBefore,
    #[error("a new event's id is older than its time (an edited or copied line)")]
    EventIdOlderThanTime,
}

/// The corpus [`crate::retrieve`] ranks: the parsed active directives, in file-name order.
pub fn corpus_of(entries: &[DirectiveEntry]) -> crate::retrieve::Corpus {
    let blobs: Vec<Option<crate::reviewed::Blob>> = entries
        .iter()
        .filter(|e| {
            e.directive
                .as_ref()
                .is_some_and(|d| d.status == crate::directive::Status::Active)
        })
        .map(|e| e.blob)
        .collect();
    crate::retrieve::Corpus::build_with_blobs(&active(entries), &blobs)
}

/// The parsed, active directives of `entries`, in order: document `i` of [`corpus_of`].
pub fn active(entries: &[DirectiveEntry]) -> Vec<&Directive> {
    entries
        .iter()
        .filter_map(|e| e.directive.as_ref())
        .filter(|d| d.status == crate::directive::Status::Active)
        .collect()
}

/// Size, mtime, ctime and inode of a file: what the fingerprint is made of.
/// The ctime, which no program can set, catches an edit that restores the
/// others (as git's index does); racy files are told by their mtime.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stamp {
    pub len: u64,
    pub mtime_ns: i64,
    pub ctime_ns: i64,
    pub ino: u64,
}

impl Stamp {
    pub(super) fn of(meta: &std::fs::Metadata) -> Stamp {
        let mtime_ns = meta.modified().map_or(0, epoch_ns);
        #[cfg(unix)]
        let (ino, ctime_ns) = {
            use std::os::unix::fs::MetadataExt;
            let ns = i128::from(meta.ctime()) * 1_000_000_000 + i128::from(meta.ctime_nsec());
            (meta.ino(), i64::try_from(ns).unwrap_or(i64::MAX))
        };
        #[cfg(not(unix))]
        let (ino, ctime_ns) = (0, 0);
        Stamp {
            len: meta.len(),
            mtime_ns,
            ctime_ns,
            ino,
        }
    }
}

/// Nanoseconds from the epoch to `t` (0 for a time before it).
pub(super) fn epoch_ns(t: SystemTime) -> i64 {
    (t.duration_since(SystemTime::UNIX_EPOCH))
        .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
}

/// Files modified this close to a refresh are re-checked by content next time.
pub(super) const RACY_NS: i64 = 2_000_000_000;

/// Whether a file modified at `mtime_ns` is racy for an index built at
/// `built_at_ns`: its mtime cannot tell a later edit from the one seen.
pub(super) fn racy(built_at_ns: i64, mtime_ns: i64) -> bool {
    mtime_ns >= built_at_ns - RACY_NS
}

/// The directives folder as the index last listed it. Creating, removing
/// or renaming an entry changes a folder's mtime, so while the folder's
/// stamp is the one recorded, the listing (much of a scan's time) is
/// skipped. A racy stamp (see [`RACY_NS`]) is not recorded.
#[derive(Debug, Clone)]
pub(super) struct Listing {
    pub dir: Stamp,
    /// The names, each followed by a newline, sorted.
    pub names: Names,
}

/// A [`Listing`]'s names: left in the mapped file, or new.
#[derive(Debug, Clone)]
pub(super) enum Names {
    Mapped {
        map: Arc<Map>,
        at: usize,
        len: usize,
    },
    Owned(String),
}

impl Names {
    /// The names, each followed by a newline (none if the mapped ones are not UTF-8).
    pub(super) fn as_str(&self) -> &str {
        match self {
            Names::Owned(s) => s,
            Names::Mapped { map, at, len } => map
                .bytes()
                .get(*at..at + len)
                .and_then(|b| std::str::from_utf8(b).ok())
                .unwrap_or_default(),
        }
    }
}

impl Default for Names {
    fn default() -> Names {
        Names::Owned(String::new())
    }
}

/// The entry for file `name`; entries are kept sorted by file name, as the scan lists them.
pub fn find_entry<'a>(entries: &'a [DirectiveEntry], name: &str) -> Option<&'a DirectiveEntry> {
    entries
        .binary_search_by(|e| e.file.as_str().cmp(name))
        .ok()
        .map(|i| &entries[i])
}

#[cfg(test)]
mod tests {
    use super::RebuildReason;

    /// `index refresh` and `status` print the reason as it always read.
    #[test]
    fn rebuild_reasons_read_as_before() {
        let file = || "2026-11.jsonl".to_owned();
        let cases = [
            (RebuildReason::Missing, "no usable index"),
            (RebuildReason::Asked, "asked for"),
            (RebuildReason::ConfigChanged, "config.toml changed"),
            (
                RebuildReason::ConfigMayHaveChanged,
                "config.toml may have changed (written within 2 s of the last refresh)",
            ),
            (RebuildReason::EventFileRemoved, "an event file was removed"),
            (
                RebuildReason::EventFileNotRegular { file: file() },
                "events/2026-11.jsonl is no longer a regular file",
            ),
            (
                RebuildReason::EventFileTooLarge { file: file() },
                "events/2026-11.jsonl is over events.max_file_bytes",
            ),
            (
                RebuildReason::EventFileRewritten { file: file() },
                "events/2026-11.jsonl was rewritten, not appended to",
            ),
            (
                RebuildReason::EventsSortBefore,
                "new events sort before ones already folded (a merge, rebase or cherry-pick)",
            ),
            (
                RebuildReason::EventIdOlderThanTime,
                "a new event's id is older than its time (an edited or copied line)",
            ),
            (
                RebuildReason::Damaged(crate::index::Error::Damaged { what: "entries" }.into()),
                "the index was damaged: index: the index's entries are damaged (their checksum does not match)",
            ),
        ];
        for (reason, text) in cases {
            assert_eq!(reason.to_string(), text);
        }
    }
}
