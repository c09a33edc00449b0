//! The loaders: each brings the index up to date and hands out what one
//! kind of command reads, decoding nothing else.
//!
//! | loader | reads | used by |
//! |---|---|---|
//! | [`load`] | every section: the parsed directives | most commands |
//! | [`load_fold`] | the fold; only `config.toml` and the event files stat'ed | `check` of a commit or range, escalation |
//! | [`load_corpus`] | the retrieval corpus | `search` |
//! | [`load_delegation`] | the corpus, matched against the task while the files are stat'ed, and the pattern views | `inject` |
//! | [`load_delegation_with_entries`] | that, and the parsed directives | the session's briefing, which also names directives |
//! | [`load_pattern_views`] | one role's pattern views, in place | `pattern inject`, `extract`, `feedback` |
//! | [`load_patterns`] | the whole pattern fold | the other `pattern` commands |
//! | [`refresh`] | nothing but what changed; always writes | `index refresh`, the hooks |

use std::path::PathBuf;
use std::time::Instant;

use super::contents::{Index, Loaded, RebuildReason, Refresh, Summary, corpus_of};
use super::patterns::Patterns;
use super::scan::{self as stamps, Scan, scan_events, scan_while};
use super::update::{Reads, Updated, build, update};
use super::{file, watch};
use crate::error::{Error, Result};
use crate::pattern::fold::PatternFold;
use crate::retrieve::{Corpus, Matches, Query};
use crate::store::Store;

/// Where the index of a store lives.
pub fn index_path(store: &Store) -> PathBuf {
    store.git_dir.join("swarm").join("index")
}

/// The index up to date with its parsed directives.
pub fn load(store: &Store) -> Result<Loaded> {
    Ok(open(store, Reads::ENTRIES, None)?.loaded(|index| index))
}

/// The index brought up to date and written, without decoding the
/// directives unless they changed: what `index refresh` and the hooks do.
pub fn refresh(store: &Store) -> Result<Loaded<Summary>> {
    Ok(open(store, Reads::ALWAYS_WRITE, None)?.loaded(|index| index.summary))
}

/// The fold of the event log, up to date, for a command that takes its
/// directives from elsewhere (a range's tree): only `config.toml` and the
/// event files are looked at; the directive part is left as it was.
pub fn load_fold(store: &Store) -> Result<Summary> {
    Ok(open(store, Reads::FOLD_ONLY, None)?.index.summary)
}

/// What a command that ranks directives reads.
#[derive(Debug)]
pub struct Ranking {
    /// The retrieval corpus of the active directives.
    pub corpus: Corpus,
    pub summary: Summary,
}

/// The retrieval corpus, decoded from the index or built when the directives changed.
pub fn load_corpus(store: &Store) -> Result<Ranking> {
    let mut opened = open(store, Reads::CORPUS, None)?;
    Ok(Ranking {
        corpus: opened.take_corpus(),
        summary: opened.index.summary,
    })
}

/// The corpus for a hook before a tool call: the directive files taken
/// as the index saw them while their folder is unchanged (see
/// `Reads::LISTED`), so that the hook stats one folder, not the store.
pub fn load_call_corpus(store: &Store) -> Result<Ranking> {
    let mut opened = open(store, Reads::CORPUS | Reads::LISTED, None)?;
    Ok(Ranking {
        corpus: opened.take_corpus(),
        summary: opened.index.summary,
    })
}

/// What `inject` reads.
#[derive(Debug)]
pub struct Delegation {
    pub corpus: Corpus,
    /// What the task matched in the corpus as the index held it (matched
    /// again should the corpus have been rebuilt).
    pub matches: Matches,
    pub patterns: Patterns,
    /// The index; its parsed directive files only from
    /// [`load_delegation_with_entries`] (else they are left empty).
    pub index: Index,
}

/// The corpus and the pattern views. The corpus the index holds is matched
/// against `query` while the files are stat'ed, so that the ranking is
/// mostly done by the time the index is known to be up to date.
pub fn load_delegation(store: &Store, query: &Query) -> Result<Delegation> {
    delegation(store, query, Reads::CORPUS | Reads::VIEWS)
}

/// [`load_delegation`] and the parsed directive files, for a caller that
/// reads both: `.swarm/` is stat'ed and the appended events folded once,
/// not once for each.
pub fn load_delegation_with_entries(store: &Store, query: &Query) -> Result<Delegation> {
    delegation(store, query, Reads::CORPUS | Reads::VIEWS | Reads::ENTRIES)
}

fn delegation(store: &Store, query: &Query, reads: Reads) -> Result<Delegation> {
    let mut opened = open(store, reads, Some(query))?;
    let corpus = opened.take_corpus();
    let matches = (opened.matches.take()).unwrap_or_else(|| corpus.matches(query));
    let patterns = opened.take_patterns();
    Ok(Delegation {
        corpus,
        matches,
        patterns,
        index: opened.index,
    })
}

/// The observed patterns, read in place without decoding the whole pattern fold.
pub fn load_pattern_views(store: &Store) -> Result<Patterns> {
    Ok(open(store, Reads::VIEWS, None)?.take_patterns())
}

/// The whole pattern fold, up to date.
pub fn load_patterns(store: &Store) -> Result<PatternFold> {
    Ok(open(store, Reads::PATTERN_FOLD, None)?
        .index
        .patterns
        .unwrap_or_default())
}

/// Builds the index from scratch and writes it.
pub fn rebuild(store: &Store) -> Result<Loaded> {
    let start = Instant::now();
    let scan = stamps::scan(store, None)?;
    let index = build(store, &scan)?;
    file::write(&index_path(store), store, &index, file::Sources::default())?;
    Ok(Loaded {
        index,
        refresh: Refresh::Rebuilt {
            reason: RebuildReason::Asked,
        },
        elapsed: start.elapsed(),
        write_error: None,
    })
}

/// What `index status` and `doctor` find at the index's path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr)]
#[strum(serialize_all = "snake_case")]
pub enum Health {
    /// An index that matches `.swarm/` now.
    Fresh,
    /// An index older than `.swarm/`: the next command refreshes it.
    Stale,
    /// Nothing there: the next command builds it.
    Missing,
    /// A folder in its place: no command can write the index.
    Folder,
    /// Something else there (damage, another format, a link): the next command replaces it.
    Unreadable,
}

impl Health {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// The index on disk (`None` when unusable), the scan of `.swarm/` now, and how they compare.
pub fn status(store: &Store) -> Result<(Option<Summary>, Scan, Health)> {
    let scan = stamps::scan(store, None)?;
    let path = index_path(store);
    let old = file::read(&path, store).and_then(|mut d| d.load_rest().ok().map(|()| d.index));
    let health = match &old {
        // Racy entries are re-checked by the next refresh, but nothing visible changed.
        Some(o) if o.fingerprint == scan.fingerprint() => Health::Fresh,
        Some(_) => Health::Stale,
        None => match std::fs::symlink_metadata(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Health::Missing,
            Ok(m) if m.is_dir() => Health::Folder,
            _ => Health::Unreadable,
        },
    };
    Ok((old.map(|o| o.summary), scan, health))
}

/// An index brought up to date, the sections `Reads` asked for decoded (or built).
struct Opened {
    index: Index,
    refresh: Refresh,
    elapsed: std::time::Duration,
    write_error: Option<Error>,
    /// The pattern section, when views were asked for and the fold was not decoded.
    views: Option<super::PatternViews>,
    pending_patterns: Vec<crate::fold::EventHead>,
    /// What the query matched in the corpus on disk, when it could be read.
    matches: Option<Matches>,
}

impl Opened {
    fn loaded<T>(self, part: impl FnOnce(Index) -> T) -> Loaded<T> {
        Loaded {
            index: part(self.index),
            refresh: self.refresh,
            elapsed: self.elapsed,
            write_error: self.write_error,
        }
    }

    /// The corpus, which `Reads::CORPUS` has decoded or built.
    fn take_corpus(&mut self) -> Corpus {
        self.index.corpus.take().unwrap_or_default()
    }

    /// The patterns for `Reads::VIEWS`: the fold when it was decoded on
    /// the way, else the file's section and the events that came after it.
    fn take_patterns(&mut self) -> Patterns {
        match (self.index.patterns.take(), self.views.take()) {
            (Some(fold), _) => Patterns::from_fold(fold),
            (None, Some(views)) => {
                Patterns::from_section(views, std::mem::take(&mut self.pending_patterns))
            }
            (None, None) => Patterns::from_fold(PatternFold::default()),
        }
    }
}

/// Reads the index, brings it up to date with `.swarm/` (built from
/// scratch when there is none, or it is damaged) and writes it back when
/// that is worth it.
fn open(store: &Store, reads: Reads, query: Option<&Query>) -> Result<Opened> {
    let start = Instant::now();
    let path = index_path(store);
    let mut on_disk = file::read(&path, store);
    crate::trace::mark("index head read");
    let (scan, rest, matches) = stat(store, on_disk.as_mut(), reads, query)?;
    // A section found damaged (by its checksum, or as it is decoded) makes
    // the index rebuilt, as a missing one is: it is only a cache.
    let mut damaged = rest.err();
    let mut views = None;
    let mut updated = None;
    if let Some(d) = on_disk
        && damaged.is_none()
    {
        let tried = (|| {
            views = reads
                .contains(Reads::VIEWS)
                .then(|| d.pattern_views())
                .transpose()?;
            update(store, &scan, d, reads)
        })();
        match tried {
            Ok(u) => updated = Some(u),
            Err(e @ Error::Index(_)) => damaged = Some(e),
            Err(e) => return Err(e),
        }
    }
    let Updated {
        index,
        refresh,
        write,
        pending_patterns,
    } = match updated {
        Some(updated) => updated,
        None => rebuilt(store, &scan, reads, damaged)?,
    };
    crate::trace::mark("index updated");
    let mut write_error = None;
    if let Some(sources) = write {
        // The index is only a cache: a read-only git dir must not stop a command.
        write_error = file::write(&path, store, &index, sources).err();
        crate::trace::mark("index written");
    }
    Ok(Opened {
        index,
        refresh,
        elapsed: start.elapsed(),
        write_error,
        views,
        pending_patterns,
        matches,
    })
}

/// The index built from scratch, when there was none to update or it was `damaged`.
fn rebuilt(store: &Store, scan: &Scan, reads: Reads, damaged: Option<Error>) -> Result<Updated> {
    let full;
    let scan = if damaged.is_some() {
        // The scan before may have left the directive files out.
        full = stamps::scan(store, None)?;
        &full
    } else {
        scan
    };
    let mut index = build(store, scan)?;
    if reads.contains(Reads::CORPUS) {
        index.corpus = Some(corpus_of(&index.directives));
    }
    let reason = damaged.map_or(RebuildReason::Missing, RebuildReason::Damaged);
    Ok(Updated {
        index,
        refresh: Refresh::Rebuilt { reason },
        write: Some(file::Sources::default()),
        pending_patterns: Vec::new(),
    })
}

/// Stats `.swarm/` and meanwhile decodes the rest of the index's head and
/// (for `Reads::CORPUS`) its corpus, matching `query` against it, as both
/// are likely still good. Returns the scan, how decoding the rest went, and
/// what the query matched in the corpus on disk.
///
/// The directive files are left out for `Reads::FOLD_ONLY`, or when a
/// watcher (optional) vouches that they are as the index saw them.
fn stat(
    store: &Store,
    on_disk: Option<&mut file::OnDisk>,
    reads: Reads,
    query: Option<&Query>,
) -> Result<(Scan, Result<()>, Option<Matches>)> {
    let watcher = if reads.contains(Reads::FOLD_ONLY) {
        None
    } else {
        watch::ask(store)
    };
    crate::trace::mark("watcher asked");
    let mut rest = Ok(());
    let mut matches = None;
    let scan = match on_disk {
        None => stamps::scan(store, None)?,
        // The directive files are left as the index saw them (their stamps
        // are not even decoded): see `entries_seen` in `update`.
        Some(d) if reads.contains(Reads::FOLD_ONLY) => {
            rest = d.load_rest();
            scan_events(store)?
        }
        Some(d) => {
            // A racy index is checked by content, which needs the stamps.
            let vouched = !d.index.entries_racy
                && super::hive::state_key(store) == d.index.hive_key
                && (watcher.is_some_and(|w| watch::vouches(store, w, d.index.entries_fingerprint))
                    || reads.contains(Reads::LISTED)
                        && d.index.listing.as_ref().is_some_and(|l| {
                            stamps::directives_dir_stamp(store).ok().flatten() == Some(l.dir)
                        }));
            let listed = d.index.listing.clone();
            let mut meanwhile = || {
                rest = d.load_rest();
                crate::trace::mark("fold decoded");
                if rest.is_ok() && reads.contains(Reads::CORPUS) {
                    // A damaged section is found again, and reported, by the update.
                    let _ = d.load_corpus();
                    crate::trace::mark("corpus loaded");
                    if let (Some(corpus), Some(query)) = (&d.index.corpus, query) {
                        matches = Some(corpus.matches(query));
                        crate::trace::mark("corpus searched");
                    }
                }
            };
            if vouched {
                meanwhile();
                let scan = scan_events(store)?;
                crate::trace::mark("scan (directive files vouched for by the watcher)");
                scan
            } else {
                scan_while(store, listed, meanwhile)?
            }
        }
    };
    crate::trace::mark("scan");
    // What a full scan found, with the answer asked before it.
    if let Some(w) = watcher
        && !scan.unstamped
    {
        watch::record(store, w, scan.entries_fingerprint());
    }
    Ok((scan, rest, matches))
}
