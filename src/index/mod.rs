//! The derived index in `$GIT_DIR/swarm/index`: parsed directives, the
//! fold of the event log, and the stamps of the files they came from.
//!
//! Files are the truth; the index is a cache. It is keyed by a fingerprint
//! of `.swarm/` (each file's path, size, mtime and inode), refreshed by
//! whatever command finds it stale, never read back into files, and safe to
//! delete.
//!
//! Refreshing is incremental where it can be: a changed directive file is
//! parsed again on its own; an event file that only grew has just its new
//! lines parsed and folded (after checking that the bytes already folded are
//! unchanged). A file that shrank or was rewritten, or a removed event file,
//! makes the whole event log fold again. Like git's index, a file modified
//! within two seconds of the last refresh is "racy" and is re-checked by
//! content, since its mtime cannot tell a second edit from the first.
//!
//! A reading command that finds only a few appended events (under 64 KiB)
//! folds them in memory and leaves the file as it is: the next command folds
//! them again, which costs less than rewriting the whole index each time.
//! `git swarm index refresh` and the hooks always write.
//!
//! Every new event must sort after the last one folded, (ts, id) being the
//! fold's order: then it cannot be a copy of a folded event (a copy has the
//! same ts and id), so no set of folded ids needs to be kept or read. New
//! events that sort earlier — brought in by a merge, a rebase or a
//! cherry-pick — make the index fold the whole log again.
//!
//! The file has three sections (see [`file`]): the head (stamps, event files,
//! the fold), the entries (parsed directives) and the retrieval corpus. A
//! refresh that finds the directive files unchanged copies the entries and
//! the corpus as bytes, without decoding them; only commands that read
//! directives decode the entries, and `inject` and `search` decode only the
//! corpus.

mod entries;
mod events;
mod file;
mod scan;
mod trees;
pub mod watch;

use std::path::PathBuf;
use std::time::{Instant, SystemTime};

use serde::{Deserialize, Serialize};

pub use entries::{entry_from_bytes, read_capped, read_entry};
pub use file::PatternViews;
pub use scan::{Listing, Scan, Stamp, scan};
pub use trees::{DirectiveBlob, SnapshotDirectives, directives_from_blobs, directives_in_tree};

use crate::directive::Directive;
use crate::error::{Error, Result};
use crate::fold::{EventHead, Fold, fold_both};
use crate::problem::Problem;
use crate::retrieve::Corpus;
use crate::store::Store;

/// Files modified this close to a refresh are re-checked by content next time.
const RACY_NS: i64 = 2_000_000_000;

/// Appended event bytes a reading command folds without writing the index
/// back (about 400 events): cheaper to fold again than to rewrite the file.
const DEFER_WRITE_BYTES: u64 = 64 * 1024;

/// A directive (or quarantined entry) file as indexed.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DirectiveEntry {
    /// File name in its folder (`<id>.toml`).
    pub file: String,
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

/// A file's stamp as the index last saw it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileStamp {
    pub file: String,
    stamp: Stamp,
    /// Modified within two seconds of the refresh that saw it: check again.
    racy: bool,
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

/// The index: what the commands read.
#[derive(Debug, Clone)]
pub struct Index {
    pub fingerprint: u64,
    built_at_ns: i64,
    config: Option<Stamp>,
    /// Fingerprint of the directive and quarantine files' stamps, and whether
    /// any of them was racy: enough to tell they are unchanged without
    /// decoding the entries.
    entries_fingerprint: u64,
    entries_racy: bool,
    directive_count: usize,
    quarantine_count: usize,
    /// The directives folder's stamp and names, when the stamp was not racy.
    listing: Option<(Stamp, file::Names)>,
    /// Stamps of the directive and quarantine files; loaded with the entries.
    directive_stamps: Vec<FileStamp>,
    quarantine_stamps: Vec<FileStamp>,
    /// Errors in directive and quarantine files (counted without decoding them).
    pub entry_errors: u64,
    /// Parsed directive files, sorted by file name. Empty when loaded without entries.
    pub directives: Vec<DirectiveEntry>,
    /// Parsed quarantine files, sorted by file name. Empty when loaded without entries.
    pub quarantine: Vec<DirectiveEntry>,
    pub event_files: Vec<EventFileEntry>,
    pub fold: Fold,
    /// The retrieval corpus of the active directives; loaded only by [`corpus`].
    pub corpus: Option<Corpus>,
    /// The pattern fold; loaded only by [`patterns`] (and when pattern events arrive).
    pub patterns: Option<crate::pattern::fold::PatternFold>,
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
    /// For [`pattern_views`] and [`delegation`]: the index file's patterns,
    /// when `index.patterns` is `None` (else the fold, just updated, is the
    /// one to read).
    pub pattern_views: Option<PatternViews>,
    /// Pattern events appended since the index file's pattern section, in
    /// order, not folded into it: the views read are patched with them
    /// (see [`Patched`]) rather than the whole fold decoded and written.
    pending_patterns: Vec<EventHead>,
    patched: std::sync::OnceLock<std::result::Result<Patched, String>>,
    /// Why the updated index could not be written, if it could not: it is
    /// only a cache, so commands go on (`index refresh` reports it).
    pub write_error: Option<Error>,
}

/// The patterns [`Loaded::pending_patterns`] touch, after those events:
/// each seeded from its view (a view holds the whole record), or, when one
/// of them has no view but a record in the fold, the whole fold.
#[derive(Debug)]
enum Patched {
    Touched(crate::pattern::fold::PatternFold),
    Whole(crate::pattern::fold::PatternFold),
}

impl Loaded {
    fn new(index: Index, refresh: Refresh, elapsed: std::time::Duration) -> Loaded {
        Loaded {
            index,
            refresh,
            elapsed,
            pattern_views: None,
            pending_patterns: Vec::new(),
            patched: std::sync::OnceLock::new(),
            write_error: None,
        }
    }

    /// The observed patterns `pattern inject` ranks for `role`: its own and
    /// the promoted ones of other roles (from the fold, all of them).
    pub fn pattern_views(&self, role: &str) -> Result<Vec<crate::pattern::fold::View<'_>>> {
        use crate::pattern::fold::{PatternFold, View};
        fn all(fold: &PatternFold) -> Vec<View<'_>> {
            fold.observed().map(|(id, p)| p.view(id)).collect()
        }
        if let Some(fold) = &self.index.patterns {
            return Ok(all(fold));
        }
        let Some(v) = &self.pattern_views else {
            return Ok(Vec::new());
        };
        let parts = v.parts()?;
        let own = parts.group(role)?;
        let promoted = parts.group(file::PROMOTED)?;
        let (own, promoted) = match self.patched(role, &[&own, &promoted])? {
            None => (own, promoted),
            Some(Patched::Whole(fold)) => return Ok(all(fold)),
            Some(Patched::Touched(touched)) => (
                patch_group(own, touched, |p| p.role == role),
                patch_group(promoted, touched, |p| p.promoted.is_some()),
            ),
        };
        let mut views: Vec<View<'_>> = own;
        views.extend(promoted.into_iter().filter(|p| p.role != role));
        Ok(views)
    }

    /// The observed patterns of `role` alone, as `pattern feedback` reads
    /// them: one role's views, not the whole fold.
    pub fn role_patterns(&self, role: &str) -> Result<RolePatterns<'_>> {
        fn whole<'a>(fold: &'a crate::pattern::fold::PatternFold, role: &str) -> RolePatterns<'a> {
            RolePatterns {
                views: fold
                    .observed()
                    .filter(|(_, p)| p.role == role)
                    .map(|(id, p)| p.view(id))
                    .collect(),
                aliases: fold.alias_pairs().collect(),
                unobserved: fold.unobserved().collect(),
            }
        }
        if let Some(fold) = &self.index.patterns {
            return Ok(whole(fold, role));
        }
        let Some(v) = &self.pattern_views else {
            return Ok(RolePatterns {
                views: Vec::new(),
                aliases: Vec::new(),
                unobserved: Vec::new(),
            });
        };
        let parts = v.parts()?;
        let own = parts.group(role)?;
        Ok(match self.patched(role, &[&own])? {
            None => RolePatterns {
                views: own,
                aliases: parts.aliases,
                unobserved: parts.unobserved,
            },
            Some(Patched::Whole(fold)) => whole(fold, role),
            Some(Patched::Touched(touched)) => {
                let views = patch_group(own, touched, |p| p.role == role);
                // The aliases the new events add come after the index's: the first stays.
                let mut aliases = parts.aliases;
                for (a, p) in &touched.aliases {
                    if let Err(at) = aliases.binary_search_by(|(x, _)| (*x).cmp(a.as_str())) {
                        aliases.insert(at, (a.as_str(), p.as_str()));
                    }
                }
                // New records the events made without observing them.
                let mut records = parts.unobserved;
                records.extend(touched.unobserved());
                records.sort_unstable();
                records.dedup();
                RolePatterns {
                    views,
                    aliases,
                    unobserved: records,
                }
            }
        })
    }

    /// The pending pattern events applied to the patterns they touch, once
    /// (`known`, groups the reader decoded already, its own `role`'s first,
    /// are only where to look first); `None` when there are none.
    fn patched(
        &self,
        role: &str,
        known: &[&[crate::pattern::fold::View<'_>]],
    ) -> Result<Option<&Patched>> {
        if self.pending_patterns.is_empty() {
            return Ok(None);
        }
        let Some(v) = &self.pattern_views else {
            return Ok(None);
        };
        self.patched
            .get_or_init(|| {
                patch(v, &self.pending_patterns, (role, known)).map_err(|e| e.to_string())
            })
            .as_ref()
            .map(Some)
            .map_err(|message| crate::error::Error::Index {
                message: message.clone(),
            })
    }
}

/// Folds `pending` into the patterns they touch, each seeded from its view;
/// the whole fold when one of them has a record but no view.
fn patch(
    v: &PatternViews,
    pending: &[EventHead],
    (first, known): (&str, &[&[crate::pattern::fold::View<'_>]]),
) -> Result<Patched> {
    use crate::pattern::fold::{Pattern, PatternFold};
    let parts = v.parts()?;
    let mut wanted: std::collections::BTreeMap<&str, Option<&str>> = Default::default();
    for e in pending.iter().filter_map(|h| h.pattern.as_ref()) {
        for id in e.ids() {
            // An observation names its role: the group to look in.
            let hint = e
                .role
                .as_deref()
                .filter(|_| e.pattern.as_deref() == Some(id));
            let slot = wanted.entry(id.as_str()).or_insert(None);
            if slot.is_none() {
                *slot = hint;
            }
        }
    }
    if wanted
        .keys()
        .any(|id| parts.unobserved.binary_search(id).is_ok())
    {
        let mut fold = v.fold()?;
        for h in pending {
            fold.apply_head(h);
        }
        return Ok(Patched::Whole(fold));
    }
    let mut fold = PatternFold {
        outcomes: parts
            .outcomes
            .iter()
            .map(|(run, o)| ((*run).to_owned(), *o))
            .collect(),
        ..PatternFold::default()
    };
    fn seed(
        views: &[crate::pattern::fold::View<'_>],
        wanted: &mut std::collections::BTreeMap<&str, Option<&str>>,
        fold: &mut PatternFold,
    ) {
        wanted.retain(|id, _| match views.binary_search_by(|v| v.id.cmp(id)) {
            Ok(i) => {
                fold.patterns
                    .insert((*id).to_owned(), Pattern::from_view(&views[i]));
                false
            }
            Err(_) => true,
        });
    }
    // Every observed pattern is in its role's group, in id order (and a
    // promoted one in that group too): the groups the reader has first
    // (the patterns it was shown are there), then the others only as needed.
    for views in known {
        seed(views, &mut wanted, &mut fold);
    }
    for (group, _) in &parts.groups {
        if wanted.is_empty() {
            break;
        }
        let unhinted = wanted.values().any(Option::is_none);
        if *group == file::PROMOTED
            || *group == first
            || (!unhinted && !wanted.values().any(|h| h == &Some(*group)))
        {
            continue;
        }
        seed(&parts.group(group)?, &mut wanted, &mut fold);
    }
    for h in pending {
        fold.apply_head(h);
    }
    Ok(Patched::Touched(fold))
}

/// A group's views with the touched patterns in their new state: replaced,
/// and those that now belong to it (`belongs`) added, in id order.
fn patch_group<'a>(
    group: Vec<crate::pattern::fold::View<'a>>,
    touched: &'a crate::pattern::fold::PatternFold,
    belongs: impl Fn(&crate::pattern::fold::Pattern) -> bool,
) -> Vec<crate::pattern::fold::View<'a>> {
    let mut out: Vec<crate::pattern::fold::View<'a>> = group
        .into_iter()
        .filter(|v| !touched.patterns.contains_key(v.id))
        .collect();
    out.extend(
        touched
            .observed()
            .filter(|(_, p)| belongs(p))
            .map(|(id, p)| p.view(id)),
    );
    out.sort_unstable_by(|a, b| a.id.cmp(b.id));
    out
}

/// One role's observed patterns, in id order, with the aliases of
/// near-duplicates (see [`Loaded::role_patterns`]).
#[derive(Debug)]
pub struct RolePatterns<'a> {
    pub views: Vec<crate::pattern::fold::View<'a>>,
    aliases: Vec<(&'a str, &'a str)>,
    /// Patterns of any role with a record but never observed, sorted.
    unobserved: Vec<&'a str>,
}

impl<'a> RolePatterns<'a> {
    /// Does the fold hold a record for this id (through an alias), observed
    /// or not — as [`crate::pattern::fold::PatternFold::resolve`] finds one?
    pub fn has_record(&self, id: &str) -> bool {
        self.resolve(id).is_some() || self.unobserved.binary_search(&self.target(id)).is_ok()
    }

    /// The pattern an id names, following a near-duplicate's alias, as
    /// [`crate::pattern::fold::PatternFold::resolve`] does.
    pub fn resolve(&self, id: &str) -> Option<&crate::pattern::fold::View<'a>> {
        let id = self.target(id);
        self.views
            .binary_search_by(|v| v.id.cmp(id))
            .ok()
            .map(|i| &self.views[i])
    }

    /// The pattern an id stands for: the one it joined, if it is an alias.
    fn target<'s>(&'s self, id: &'s str) -> &'s str {
        match self.aliases.binary_search_by(|(a, _)| (*a).cmp(id)) {
            Ok(i) => self.aliases[i].1,
            Err(_) => id,
        }
    }
}

impl Index {
    /// Problems in the files the index read: every one when the entries are
    /// loaded, the event files' otherwise.
    pub fn problems(&self) -> impl Iterator<Item = &Problem> {
        self.directives
            .iter()
            .chain(&self.quarantine)
            .flat_map(|d| &d.problems)
            .chain(self.event_files.iter().flat_map(|e| &e.problems))
    }

    /// Errors in all the files the index read, whether or not the entries are loaded.
    pub fn error_count(&self) -> u64 {
        let events = self
            .event_files
            .iter()
            .flat_map(|e| &e.problems)
            .filter(|p| p.is_error())
            .count();
        self.entry_errors + events as u64
    }

    /// How many directive files there are.
    pub fn directive_count(&self) -> usize {
        self.directive_count
    }

    /// How many quarantine files there are.
    pub fn quarantine_count(&self) -> usize {
        self.quarantine_count
    }

    pub fn event_lines(&self) -> u64 {
        self.event_files.iter().map(|e| e.events).sum()
    }

    pub fn directive(&self, id: &str) -> Option<&DirectiveEntry> {
        entries::find_entry(&self.directives, &format!("{id}.toml"))
    }

    pub fn quarantined(&self, id: &str) -> Option<&DirectiveEntry> {
        entries::find_entry(&self.quarantine, &format!("{id}.toml"))
    }

    /// Whether the directive `id` is retired: no longer checked, injected,
    /// gating a phase or owing anything (its violations and missing acks
    /// are answered by the retirement).
    pub fn is_retired(&self, id: &str) -> bool {
        self.directive(id)
            .and_then(|e| e.directive.as_ref())
            .is_some_and(|d| d.status == crate::directive::Status::Retired)
    }
}

/// Where the index of a store lives.
pub fn index_path(store: &Store) -> PathBuf {
    store.git_dir.join("swarm").join("index")
}

/// Opens the index with its parsed directives, refreshing it if `.swarm/` changed.
pub fn load(store: &Store) -> Result<Loaded> {
    open(store, Want::Entries)
}

/// Brings the index up to date without decoding the directives unless they
/// changed (`index.directives` and `index.quarantine` may come back empty).
pub fn refresh(store: &Store) -> Result<Loaded> {
    open(store, Want::Nothing)
}

/// The fold of the event log, up to date, for a command that takes its
/// directives from elsewhere (a check of a range reads them from the
/// range's tree): only `config.toml` and the event files are looked at.
/// The directive part of the index is left as it was, to be brought up to
/// date by the next command that reads it; `index.directives` is empty.
pub fn refresh_fold(store: &Store) -> Result<Loaded> {
    open(store, Want::Fold)
}

/// The index up to date with its retrieval corpus (`index.corpus` is
/// `Some`), decoded from the index or built when the directives changed;
/// `index.directives` may be empty.
pub fn corpus(store: &Store) -> Result<Loaded> {
    open(store, Want::Corpus)
}

/// The corpus [`crate::retrieve`] ranks: the parsed active directives, in file-name order.
pub fn corpus_of(entries: &[DirectiveEntry]) -> Corpus {
    Corpus::build(&active(entries))
}

/// The parsed, active directives of `entries`, in order: document `i` of [`corpus_of`].
pub fn active(entries: &[DirectiveEntry]) -> Vec<&Directive> {
    entries
        .iter()
        .filter_map(|e| e.directive.as_ref())
        .filter(|d| d.status == crate::directive::Status::Active)
        .collect()
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Want {
    Entries,
    Nothing,
    Fold,
    Corpus,
    Patterns,
    /// The pattern views: what `pattern inject` reads.
    Views,
    /// Corpus and pattern views: what `inject` reads.
    Delegation,
}

impl Want {
    fn corpus(self) -> bool {
        matches!(self, Want::Corpus | Want::Delegation)
    }

    fn patterns(self) -> bool {
        self == Want::Patterns
    }

    fn views(self) -> bool {
        matches!(self, Want::Views | Want::Delegation)
    }
}

/// [`corpus`] and [`pattern_views`] at once.
pub fn delegation(store: &Store) -> Result<Loaded> {
    open(store, Want::Delegation)
}

/// [`delegation`], calling `during` with the corpus the index holds while
/// the files are stat'ed (on this thread), so that work on it is done by
/// the time the index is known to be up to date. The corpus of the result
/// may be another (rebuilt, when directives changed): [`Corpus::matches`]
/// tells.
pub fn delegation_with(store: &Store, during: &mut dyn FnMut(&Corpus)) -> Result<Loaded> {
    open_with(store, Want::Delegation, during)
}

/// The index up to date, for reading patterns through [`Loaded::pattern_views`]
/// without decoding the whole pattern fold.
pub fn pattern_views(store: &Store) -> Result<Loaded> {
    open(store, Want::Views)
}

/// The index up to date with its pattern fold (`index.patterns` is `Some`);
/// `index.directives` may be empty.
pub fn patterns(store: &Store) -> Result<Loaded> {
    open(store, Want::Patterns)
}

fn open(store: &Store, want: Want) -> Result<Loaded> {
    open_with(store, want, &mut |_| {})
}

fn open_with(store: &Store, want: Want, during: &mut dyn FnMut(&Corpus)) -> Result<Loaded> {
    let start = Instant::now();
    let path = index_path(store);
    let mut on_disk = file::read(&path, store);
    crate::trace::mark("index head read");
    // The fold (the rest of the head) is decoded while the files are stat'ed.
    let mut rest = Ok(());
    // A fold-only scan leaves the directive files out anyway.
    let watcher = if want == Want::Fold {
        None
    } else {
        watch::ask(store)
    };
    crate::trace::mark("watcher asked");
    let scan = match (&mut on_disk, want) {
        // The directive files are left as the index saw them (their stamps
        // are not even decoded): see `entries_seen` in `update`.
        (Some(d), Want::Fold) => {
            rest = d.load_rest();
            scan::scan_events(store)?
        }
        (Some(d), _) => {
            // A racy index is checked by content, which needs the stamps.
            let vouched = watcher.is_some_and(|w| {
                !d.index.entries_racy && watch::vouches(store, w, d.index.entries_fingerprint)
            });
            let listed = (d.index.listing.clone()).map(|(dir, names)| Listing { dir, names });
            let mut meanwhile = || {
                rest = d.load_rest();
                crate::trace::mark("fold decoded");
                if rest.is_ok() && want.corpus() {
                    // A damaged section is found again, and reported, by the update.
                    let _ = d.load_corpus();
                    crate::trace::mark("corpus loaded");
                    if let Some(corpus) = &d.index.corpus {
                        during(corpus);
                        crate::trace::mark("corpus searched");
                    }
                }
            };
            if vouched {
                meanwhile();
                let scan = scan::scan_events(store)?;
                crate::trace::mark("scan (directive files vouched for by the watcher)");
                scan
            } else {
                // Stat the files while the fold and the corpus, likely still good, are read.
                scan::scan_while(store, listed, meanwhile)?
            }
        }
        (None, _) => scan(store, None)?,
    };
    crate::trace::mark("scan");
    // What a full scan found, with the answer asked before it.
    if let Some(w) = watcher
        && !scan.unstamped
    {
        watch::record(store, w, scan.entries_fingerprint());
    }
    // A section found damaged (by its checksum, or as it is decoded) makes
    // the index rebuilt, as a missing one is: it is only a cache.
    let mut damaged = rest.err();
    let mut pattern_views = None;
    if let Some(d) = &on_disk
        && want.views()
    {
        match d.pattern_views() {
            Ok(v) => pattern_views = Some(v),
            Err(e) => damaged = Some(e),
        }
    }
    let updated = match on_disk {
        Some(on_disk) if damaged.is_none() => match update(store, &scan, on_disk, want) {
            Ok(updated) => Some(updated),
            Err(e @ Error::Index { .. }) => {
                damaged = Some(e);
                None
            }
            Err(e) => return Err(e),
        },
        _ => None,
    };
    let (index, refresh, entries, pending) = match updated {
        Some(updated) => updated,
        None => {
            let full;
            let scan = if damaged.is_some() {
                // The scan above may have left the directive files out.
                full = self::scan(store, None)?;
                &full
            } else {
                &scan
            };
            let mut index = build(store, scan)?;
            if want.corpus() {
                index.corpus = Some(corpus_of(&index.directives));
            }
            let reason = match &damaged {
                Some(e) => format!("the index was damaged: {e}"),
                None => "no usable index".into(),
            };
            (
                index,
                Refresh::Rebuilt { reason },
                Some(file::Sources::encode()),
                Vec::new(),
            )
        }
    };
    crate::trace::mark("index updated");
    let mut write_error = None;
    if let Some(entries) = entries {
        // The index is only a cache: a read-only git dir must not stop a command.
        write_error = file::write(&path, store, &index, entries).err();
        crate::trace::mark("index written");
    }
    let mut loaded = Loaded::new(index, refresh, start.elapsed());
    loaded.pattern_views = pattern_views;
    loaded.pending_patterns = pending;
    loaded.write_error = write_error;
    Ok(loaded)
}

/// Builds the index from scratch and writes it.
pub fn rebuild(store: &Store) -> Result<Loaded> {
    let start = Instant::now();
    let scan = scan(store, None)?;
    let index = build(store, &scan)?;
    file::write(&index_path(store), store, &index, file::Sources::encode())?;
    Ok(Loaded::new(
        index,
        Refresh::Rebuilt {
            reason: "asked for".into(),
        },
        start.elapsed(),
    ))
}

/// What `index status` and `doctor` find at the index's path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Health {
    /// An index that matches `.swarm/` now.
    Fresh,
    /// An index older than `.swarm/`: the next command refreshes it.
    Stale,
    /// Nothing there: the next command builds it.
    Missing,
    /// A folder in its place: no command can write the index.
    Folder,
    /// Something else there (damage, another format, a FIFO, a link): the
    /// next command replaces it.
    Unreadable,
}

impl Health {
    pub fn as_str(self) -> &'static str {
        match self {
            Health::Fresh => "fresh",
            Health::Stale => "stale",
            Health::Missing => "missing",
            Health::Folder => "folder",
            Health::Unreadable => "unreadable",
        }
    }
}

/// The index on disk (without its entries), the scan of `.swarm/` now, and
/// how the two compare. `None` when there is no usable index.
pub fn status(store: &Store) -> Result<(Option<Index>, Scan, Health)> {
    let scan = scan(store, None)?;
    let path = index_path(store);
    let old = file::read_whole_head(&path, store).map(|d| d.index);
    let health = match &old {
        // Racy entries are re-checked by the next refresh, but a matching
        // fingerprint means nothing visible has changed since the index was built.
        Some(o) if o.fingerprint == scan.fingerprint() => Health::Fresh,
        Some(_) => Health::Stale,
        None => match std::fs::symlink_metadata(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Health::Missing,
            Ok(m) if m.is_dir() => Health::Folder,
            _ => Health::Unreadable,
        },
    };
    Ok((old, scan, health))
}

/// A cache file's bytes: `magic`, the xxh3-64 of `body` (u64 LE), `body`.
pub(crate) fn sealed(magic: &[u8], body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(magic.len() + 8 + body.len());
    out.extend_from_slice(magic);
    out.extend_from_slice(&xxhash_rust::xxh3::xxh3_64(body).to_le_bytes());
    out.extend_from_slice(body);
    out
}

/// The body of a [`sealed`] cache file; `None` if it has another magic or
/// its bytes were damaged.
pub(crate) fn unsealed<'a>(magic: &[u8], bytes: &'a [u8]) -> Option<&'a [u8]> {
    let rest = bytes.strip_prefix(magic)?;
    let (sum, body) = rest.split_at_checked(8)?;
    (u64::from_le_bytes(sum.try_into().ok()?) == xxhash_rust::xxh3::xxh3_64(body)).then_some(body)
}

/// A [`sealed`] cache file, mapped, whose magic and checksum were found right.
pub(crate) struct SealedFile {
    map: file::Map,
    magic_len: usize,
}

impl SealedFile {
    /// The file at `path` when it is a regular file (not a FIFO, device or
    /// link: those are cache misses) with this magic and an intact body.
    pub(crate) fn open(path: &std::path::Path, magic: &[u8]) -> Option<SealedFile> {
        let file = crate::safe_fs::open_read(path).ok()?;
        let map = file::Map::open(&file)?;
        unsealed(magic, map.bytes())?;
        Some(SealedFile {
            map,
            magic_len: magic.len(),
        })
    }

    /// The body, after the magic and the checksum.
    pub(crate) fn body(&self) -> &[u8] {
        &self.map.bytes()[self.magic_len + 8..]
    }
}

/// Waits for a worker thread; a panic in it becomes an error, not a crash.
fn join<T>(handle: std::thread::ScopedJoinHandle<'_, Result<T>>, what: &str) -> Result<T> {
    handle.join().unwrap_or_else(|_| {
        Err(crate::error::Error::Index {
            message: format!("a thread reading {what} panicked"),
        })
    })
}

fn now_ns() -> i64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
}

/// Which files an index must check by content: its entries (as one), and
/// its event files by name.
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

fn racy(built_at_ns: i64, mtime_ns: i64) -> bool {
    mtime_ns >= built_at_ns - RACY_NS
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

/// The listing to record for the directives folder, if its stamp can be trusted.
fn listing_of(scan: &Scan, built_at_ns: i64) -> Option<(Stamp, file::Names)> {
    scan.directives_dir
        .filter(|d| !racy(built_at_ns, d.mtime_ns))
        .map(|d| {
            (
                d,
                file::Names::owned(scan::joined(
                    scan.directives().iter().map(|(n, _)| n.as_str()),
                )),
            )
        })
}

fn any_racy(files: &[(String, Stamp)], built_at_ns: i64) -> bool {
    files.iter().any(|(_, s)| racy(built_at_ns, s.mtime_ns))
}

fn count_errors(entries: &[DirectiveEntry]) -> u64 {
    entries
        .iter()
        .flat_map(|e| &e.problems)
        .filter(|p| p.is_error())
        .count() as u64
}

fn build(store: &Store, scan: &Scan) -> Result<Index> {
    let built_at_ns = now_ns();
    let directives = entries::load_all(store, "directives", scan.directives(), false);
    let quarantine = entries::load_all(store, "quarantine", &scan.quarantine, true);
    let (event_files, heads) = events::read_all(store, &scan.events, built_at_ns)?;
    let (fold, patterns) = fold_both(heads);
    Ok(Index {
        fingerprint: scan.fingerprint(),
        built_at_ns,
        config: scan.config,
        entries_fingerprint: scan.entries_fingerprint(),
        entries_racy: any_racy(scan.directives(), built_at_ns)
            || any_racy(&scan.quarantine, built_at_ns),
        directive_count: scan.directive_count(),
        quarantine_count: scan.quarantine.len(),
        listing: listing_of(scan, built_at_ns),
        directive_stamps: stamps(scan.directives(), built_at_ns),
        quarantine_stamps: stamps(&scan.quarantine, built_at_ns),
        entry_errors: count_errors(&directives) + count_errors(&quarantine),
        directives,
        quarantine,
        event_files,
        fold,
        corpus: None,
        patterns: Some(patterns),
    })
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

/// What an update produced: the index, how, and where a write takes the
/// entries section from (`None`: not worth writing).
/// The index, how the refresh went, what to write (nothing: the write is
/// deferred) and the pattern events folded into neither (see [`Loaded`]).
type Updated = (Index, Refresh, Option<file::Sources>, Vec<EventHead>);

fn update(store: &Store, scan: &Scan, on_disk: file::OnDisk, want: Want) -> Result<Updated> {
    let want_entries = want == Want::Entries;
    let mut on_disk = on_disk;
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

    // A scan that did not stat the directive files (fold-only, or vouched
    // for by a watcher) takes them as the index last saw them.
    let entries_seen = if scan.unstamped {
        old.entries_fingerprint
    } else {
        scan.entries_fingerprint()
    };
    if entries_unchanged
        && config_unchanged
        && events_unchanged
        && old.fingerprint == scan.fingerprint_with(entries_seen)
    {
        if want_entries {
            on_disk.load_entries()?;
        }
        if want.corpus() && on_disk.index.corpus.is_none() {
            on_disk.load_corpus()?;
        }
        if want.patterns() {
            on_disk.load_patterns()?;
        }
        return Ok((on_disk.index, Refresh::Fresh, None, Vec::new()));
    }

    let built_at_ns = now_ns();
    let mut changed_directives = 0;
    if entries_unchanged && want.corpus() && on_disk.index.corpus.is_none() {
        on_disk.load_corpus()?;
    }
    if entries_unchanged && want_entries {
        on_disk.load_entries()?;
    } else if !entries_unchanged {
        on_disk.load_entries()?;
        let index = &mut on_disk.index;
        changed_directives = count_changed(scan.directives(), &index.directive_stamps)
            + count_changed(&scan.quarantine, &index.quarantine_stamps);
        index.directives = entries::load_changed(
            store,
            "directives",
            scan.directives(),
            std::mem::take(&mut index.directives),
            &index.directive_stamps,
            false,
        );
        index.quarantine = entries::load_changed(
            store,
            "quarantine",
            &scan.quarantine,
            std::mem::take(&mut index.quarantine),
            &index.quarantine_stamps,
            true,
        );
        index.entry_errors = count_errors(&index.directives) + count_errors(&index.quarantine);
        index.directive_stamps = stamps(scan.directives(), built_at_ns);
        index.quarantine_stamps = stamps(&scan.quarantine, built_at_ns);
        index.entries_fingerprint = scan.entries_fingerprint();
        index.entries_racy =
            any_racy(scan.directives(), built_at_ns) || any_racy(&scan.quarantine, built_at_ns);
        index.directive_count = scan.directive_count();
        index.quarantine_count = scan.quarantine.len();
        index.listing = listing_of(scan, built_at_ns);
        // Built now rather than when written, since it is wanted; else the write builds it.
        index.corpus = (want.corpus()).then(|| corpus_of(&index.directives));
    }
    // Unchanged entries are copied over as bytes; changed ones were decoded and are encoded again.
    let (mut index, mut old) = on_disk.into_parts();
    if want.patterns() {
        index.patterns = Some(old.patterns()?);
    }

    // The settings decide which event lines are accepted (events.max_line_bytes).
    let events = if config_unchanged {
        events::update(store, &scan.events, &mut index, built_at_ns)?
    } else {
        Err(if config_same_stamp {
            // Its stamp is the same, but too close to when the index was built to tell.
            "config.toml may have changed (written within 2 s of the last refresh)".to_owned()
        } else {
            "config.toml changed".to_owned()
        })
    };
    // The pattern fold is decoded only when pattern events arrived (or it is wanted).
    let mut patterns_changed = false;
    let mut appended = u64::MAX;
    let mut pending = Vec::new();
    // Whether a write can wait (see `defer` below), but for the pattern events.
    let could_defer = |index: &Index, appended: u64| {
        want != Want::Nothing
            && (!was_racy || racy_files(index) == racy_before)
            && entries_unchanged
            && config_unchanged
            && appended <= DEFER_WRITE_BYTES
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
                && want.views()
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
            let (event_files, heads) = events::read_all(store, &scan.events, built_at_ns)?;
            index.event_files = event_files;
            let (fold, patterns) = fold_both(heads);
            index.fold = fold;
            index.patterns = Some(patterns);
            patterns_changed = true;
            Refresh::Rebuilt { reason }
        }
    };
    index.fingerprint = scan.fingerprint_with(index.entries_fingerprint);
    index.built_at_ns = built_at_ns;
    index.config = scan.config;
    // A few appended events (the `shown` event of the last `inject`, say) are
    // folded again by each command rather than the whole file rewritten for them.
    // A write while the same files are still racy would record nothing new:
    // the next command checks them by content all the same.
    let defer = could_defer(&index, appended) && !patterns_changed;
    let sources = file::Sources {
        old: Some(old),
        copy_entries: entries_unchanged,
        copy_patterns: !patterns_changed,
    };
    Ok((index, refresh, (!defer).then_some(sources), pending))
}

/// Folds `heads` (new events) into `fold` if they all sort after what is
/// folded; `Err` with the reason when the whole log must be folded again.
/// Returns the pattern events among them, in order, for the pattern fold.
fn fold_new(
    fold: &mut Fold,
    mut heads: Vec<EventHead>,
) -> std::result::Result<Vec<EventHead>, String> {
    heads.sort_unstable_by_key(|h| (h.key, h.ts));
    let before = heads.len() as u64;
    heads.dedup_by_key(|h| h.key);
    let copies = before - heads.len() as u64;
    heads.sort_unstable_by_key(EventHead::order);
    // One pass over the new events (sorted): the first refused says why.
    for h in &heads {
        if !fold.accepts_next(h) {
            return Err(if fold.last.is_some_and(|last| h.order() <= last) {
                "new events sort before ones already folded (a merge, rebase or cherry-pick)".into()
            } else {
                "a new event's id is older than its time (an edited or copied line)".into()
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
