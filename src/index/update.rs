//! Bringing the index up to date: built from scratch, or refreshed from
//! what changed since it was written.

use std::time::SystemTime;

use super::contents::{
    DirectiveEntry, FileStamp, Index, Listing, Names, RebuildReason, Refresh, Stamp, corpus_of,
    epoch_ns, racy,
};
use super::scan::Scan;
use super::{entries, events, file};
use crate::error::Result;
use crate::fold::{EventHead, fold_both};
use crate::store::Store;

bitflags::bitflags! {
    /// What a loader reads beyond the index's head: a refresh decodes (or
    /// builds) just that, and it decides whether a write can wait.
    #[derive(Debug, Clone, Copy)]
    pub(super) struct Reads: u8 {
        /// Stat only `config.toml` and the event files: the directive files
        /// are taken as the index last saw them.
        const FOLD_ONLY = 1;
        /// The parsed directive files.
        const ENTRIES = 1 << 1;
        /// The retrieval corpus.
        const CORPUS = 1 << 2;
        /// The pattern section, for views patched with new pattern events.
        const VIEWS = 1 << 3;
        /// The whole pattern fold, decoded.
        const PATTERN_FOLD = 1 << 4;
        /// Write the index whenever it changed. Else a few appended events are
        /// folded again by the next command rather than the file rewritten.
        const ALWAYS_WRITE = 1 << 5;
        /// Take the directive files as the index last saw them when their
        /// folder's stamp is unchanged (no file added, removed or renamed
        /// into it, as git and most editors write): a hook before every
        /// tool call stats one folder, not every directive. A file edited
        /// in place is read by the next command that scans.
        const LISTED = 1 << 6;
    }
}

/// Appended event bytes a reading command folds without writing the index
/// back: an eighth of the index's size, between 8 and 64 KiB (50 to 400
/// events). Folding a byte again costs about what writing one does, and
/// every command until the next write folds them again: a session's hooks
/// run several readers for each event appended (docs/performance.md).
fn defer_write_bytes(index_len: u64) -> u64 {
    (index_len / 8).clamp(8 * 1024, 64 * 1024)
}

/// Which files an index must check by content: its entries, and its event files.
fn racy_files(index: &Index) -> (bool, Vec<String>) {
    (
        index.entries_racy,
        index
            .event_files
            .iter()
            .filter(|e| e.racy)
            .map(|e| e.file.clone())
            .collect(),
    )
}

fn stamps(files: &[(String, Stamp)], built_at_ns: i64) -> Vec<FileStamp> {
    files
        .iter()
        .map(|(file, stamp)| FileStamp {
            file: file.clone(),
            stamp: *stamp,
            racy: racy(built_at_ns, stamp.mtime_ns),
        })
        .collect()
}

pub(super) fn build(store: &Store, scan: &Scan) -> Result<Index> {
    let built_at_ns = epoch_ns(SystemTime::now());
    let mut index = Index {
        fingerprint: scan.fingerprint(),
        built_at_ns,
        config: scan.config,
        ..Index::default()
    };
    fold_log(store, scan, built_at_ns, &mut index)?;
    set_entries(store, &mut index, scan, built_at_ns);
    Ok(index)
}

/// Reads every event file of `scan` into `index` and folds the whole log.
fn fold_log(store: &Store, scan: &Scan, built_at_ns: i64, index: &mut Index) -> Result<()> {
    let (event_files, heads) = events::read_all(store, &scan.events, built_at_ns)?;
    let (fold, patterns) = fold_both(heads);
    (index.summary.event_files, index.summary.fold) = (event_files, fold);
    index.patterns = Some(patterns);
    Ok(())
}

/// Records in `index` the directive and quarantine files of `scan`, those
/// that changed since `index` saw them parsed again.
fn set_entries(store: &Store, index: &mut Index, scan: &Scan, built_at_ns: i64) {
    // The hive's entries are read again whenever the entries changed (their
    // own folders never change; the subscriptions may have).
    let (old_hive, old): (Vec<_>, Vec<_>) = std::mem::take(&mut index.directives)
        .into_iter()
        .partition(|e| e.origin.is_some());
    // The same files by name: the same of the hive's are shadowed.
    let same_names = old.len() == scan.directives().len()
        && old
            .iter()
            .zip(scan.directives())
            .all(|(e, (n, _))| e.file == *n);
    let mut directives = entries::load_changed(
        store,
        "directives",
        scan.directives(),
        old,
        &index.directive_stamps,
    );
    if !store.config.hive.is_empty() {
        // A pinned folder never changes: with the same pins (and the same
        // project files shadowing them) the hive's entries stand as read.
        let hive = if same_names && scan.hive_key == index.hive_key && !old_hive.is_empty() {
            old_hive
        } else {
            let (hive, _) = super::hive::subscribed_entries(store);
            // The project's own directive of an id wins over a hive's.
            let own: std::collections::HashSet<&str> =
                directives.iter().map(|e| e.file.as_str()).collect();
            hive.into_iter()
                .filter(|e| !own.contains(e.file.as_str()))
                .collect()
        };
        directives.extend(hive);
        directives.sort_by(|a, b| a.file.cmp(&b.file));
    }
    let quarantine = entries::load_changed(
        store,
        "quarantine",
        &scan.quarantine,
        std::mem::take(&mut index.quarantine),
        &index.quarantine_stamps,
    );
    let count_errors = |entries: &[DirectiveEntry]| {
        (entries.iter().flat_map(|e| &e.problems))
            .filter(|p| p.is_error())
            .count() as u64
    };
    index.summary.entry_errors = count_errors(&directives) + count_errors(&quarantine);
    index.summary.directive_count = scan.directive_count();
    index.summary.quarantine_count = scan.quarantine.len();
    index.directives = directives;
    index.quarantine = quarantine;
    index.directive_stamps = stamps(scan.directives(), built_at_ns);
    index.quarantine_stamps = stamps(&scan.quarantine, built_at_ns);
    index.entries_fingerprint = scan.entries_fingerprint();
    index.hive_key = scan.hive_key;
    let any_racy =
        |files: &[(String, Stamp)]| files.iter().any(|(_, s)| racy(built_at_ns, s.mtime_ns));
    index.entries_racy = any_racy(scan.directives()) || any_racy(&scan.quarantine);
    // The listing is recorded only when the folder's stamp can be trusted.
    let names = || super::scan::joined(scan.directives().iter().map(|(n, _)| n.as_str()));
    index.listing = (scan.directives_dir)
        .filter(|d| !racy(built_at_ns, d.mtime_ns))
        .map(|dir| Listing {
            dir,
            names: Names::Owned(names()),
        });
}

/// How many of `scan` differ from what the index saw (added, changed, racy or removed).
fn count_changed(scan: &[(String, Stamp)], seen: &[FileStamp]) -> usize {
    let find = |name: &str| {
        seen.binary_search_by(|f| f.file.as_str().cmp(name))
            .ok()
            .map(|i| &seen[i])
    };
    let changed = scan
        .iter()
        .filter(|(n, s)| find(n).is_none_or(|f| f.stamp != *s || f.racy))
        .count();
    let removed = seen
        .iter()
        .filter(|f| {
            scan.binary_search_by(|(n, _)| n.as_str().cmp(&f.file))
                .is_err()
        })
        .count();
    changed + removed
}

/// What an update produced.
pub(super) struct Updated {
    pub index: Index,
    pub refresh: Refresh,
    /// Where a write takes each section from; `None`: the write waits.
    pub write: Option<file::Sources>,
    /// Pattern events appended since the pattern section, not folded (see [`super::Patterns`]).
    pub pending_patterns: Vec<EventHead>,
}

/// Refreshes the index read from disk against `scan`: only what changed is
/// read again, and of the rest only what `reads` asks for is decoded.
pub(super) fn update(
    store: &Store,
    scan: &Scan,
    mut on_disk: file::OnDisk,
    reads: Reads,
) -> Result<Updated> {
    let defer_bytes = defer_write_bytes(on_disk.file_len());
    let old = &on_disk.index;
    // Racy files are checked by content until a write records them settled.
    let was_racy = old.entries_racy || old.event_files.iter().any(|e| e.racy);
    let racy_before = racy_files(old);
    let entries_unchanged = scan.unstamped
        || (scan.entries_fingerprint() == old.entries_fingerprint && !old.entries_racy);
    let config_same_stamp = scan.config == old.config;
    let config_unchanged = config_same_stamp
        && scan
            .config
            .is_none_or(|c| !racy(old.built_at_ns, c.mtime_ns));
    let events_unchanged = scan.events.len() == old.event_files.len()
        && scan
            .events
            .iter()
            .zip(&old.event_files)
            .all(|((n, s), e)| *n == e.file && *s == e.stamp && !e.racy);

    // A scan that did not stat the directive files takes them as the index saw them.
    let entries_seen = if scan.unstamped {
        old.entries_fingerprint
    } else {
        scan.entries_fingerprint()
    };
    let fresh = entries_unchanged
        && config_unchanged
        && events_unchanged
        && old.fingerprint == scan.fingerprint_with(entries_seen);
    // Of the sections that did not change, those the loader reads are decoded.
    if entries_unchanged && reads.contains(Reads::ENTRIES) {
        on_disk.load_entries()?;
    }
    if entries_unchanged && reads.contains(Reads::CORPUS) && on_disk.index.corpus.is_none() {
        on_disk.load_corpus()?;
    }
    if reads.contains(Reads::PATTERN_FOLD) {
        on_disk.load_patterns()?;
    }
    if fresh {
        return Ok(Updated {
            index: on_disk.index,
            refresh: Refresh::Fresh,
            write: None,
            pending_patterns: Vec::new(),
        });
    }

    let built_at_ns = epoch_ns(SystemTime::now());
    let mut changed_directives = 0;
    if !entries_unchanged {
        on_disk.load_entries()?;
        let index = &mut on_disk.index;
        changed_directives = count_changed(scan.directives(), &index.directive_stamps)
            + count_changed(&scan.quarantine, &index.quarantine_stamps);
        set_entries(store, index, scan, built_at_ns);
        // Built now rather than when written, since it is wanted; else the write builds it.
        index.corpus = reads
            .contains(Reads::CORPUS)
            .then(|| corpus_of(&index.directives));
    }
    // Unchanged entries are copied over as bytes; changed ones were decoded and are encoded again.
    let (mut index, mut old) = on_disk.into_parts();

    // The settings decide which event lines are accepted (events.max_line_bytes).
    let events = if config_unchanged {
        events::update(store, &scan.events, &mut index.summary, built_at_ns)?
    } else {
        Err(if config_same_stamp {
            // Its stamp is the same, but too close to when the index was built to tell.
            RebuildReason::ConfigMayHaveChanged
        } else {
            RebuildReason::ConfigChanged
        })
    };
    // The pattern fold is decoded only when pattern events arrived (or it is wanted).
    let mut patterns_changed = false;
    let mut appended = u64::MAX;
    let mut pending = Vec::new();
    // Whether a write can wait (see `defer` below), but for the pattern events.
    let could_defer = |index: &Index, appended: u64| {
        !reads.contains(Reads::ALWAYS_WRITE)
            && (!was_racy || racy_files(index) == racy_before)
            && entries_unchanged
            && config_unchanged
            && appended <= defer_bytes
    };
    let refresh = match events {
        Ok(events::Appended {
            files: changed_events,
            bytes,
            pattern_heads,
        }) => {
            appended = bytes;
            // A reader of views patches them with a few new pattern events
            // rather than decoding the whole fold and writing it back.
            if !pattern_heads.is_empty()
                && reads.contains(Reads::VIEWS)
                && index.patterns.is_none()
                && could_defer(&index, bytes)
            {
                pending = pattern_heads;
            } else if !pattern_heads.is_empty() {
                if index.patterns.is_none() {
                    index.patterns = Some(old.patterns()?);
                }
                let fold = index.patterns.get_or_insert_default();
                for h in &pattern_heads {
                    fold.apply_head(h);
                }
                patterns_changed = true;
            }
            Refresh::Updated {
                directives: changed_directives,
                events: changed_events,
            }
        }
        Err(reason) => {
            fold_log(store, scan, built_at_ns, &mut index)?;
            patterns_changed = true;
            Refresh::Rebuilt { reason }
        }
    };
    index.fingerprint = scan.fingerprint_with(index.entries_fingerprint);
    index.built_at_ns = built_at_ns;
    index.config = scan.config;
    // A few appended events (the last `inject`'s `shown`, say) are folded again
    // by each command rather than the file rewritten for them; so are files
    // still racy, which a write would record no better.
    let defer = could_defer(&index, appended) && !patterns_changed;
    let sources = file::Sources {
        old: Some(old),
        copy_entries: entries_unchanged,
        copy_patterns: !patterns_changed,
    };
    Ok(Updated {
        index,
        refresh,
        write: (!defer).then_some(sources),
        pending_patterns: pending,
    })
}
