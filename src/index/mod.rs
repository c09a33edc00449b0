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
//! The file has sections (see [`file`](mod@file)): the head (stamps, event files, the
//! fold), the pattern fold, the entries (parsed directives) and the
//! retrieval corpus. Each loader (see [`load`](mod@load)) decodes only the sections
//! its command reads, and a refresh that finds the directive files
//! unchanged copies the entries and the corpus as bytes.
//!
//! The modules:
//! - [`load`](mod@load): the loaders, one per kind of command, and `status`;
//! - [`update`]: building the index, and refreshing it from what changed;
//! - [`events`], [`entries`]: reading event files (appended bytes only)
//!   and directive files;
//! - [`scan`](mod@scan): stamping the files, on helper threads for a large folder;
//! - [`watch`]: the optional watcher that vouches for the directive files,
//!   so that they need not be stat'ed;
//! - [`contents`]: what the index holds (entries, stamps, the fold);
//! - [`file`](mod@file): the file format, [`mapped`] its bytes as mapped, and
//!   [`pattern_section`] the layout of its pattern section; [`patterns`]:
//!   reading one role's patterns in place, patched with new pattern events;
//! - [`trees`], [`sealed`](mod@sealed): the caches of committed directives for `check`.

mod contents;
mod entries;
mod error;
mod events;
mod file;
mod load;
mod mapped;
mod pattern_section;
mod patterns;
mod scan;
mod sealed;
mod trees;
mod update;
pub mod watch;

pub use contents::{
    DirectiveEntry, EventFileEntry, FileStamp, Index, Loaded, RebuildReason, Refresh, Stamp,
    Summary, active, corpus_of,
};
pub use entries::{CappedReadError, entry_from_bytes, read_capped, read_entry};
pub use error::Error;
pub use load::{
    Delegation, Health, Ranking, index_path, load, load_corpus, load_delegation, load_fold,
    load_pattern_views, load_patterns, rebuild, refresh, status,
};
pub use pattern_section::PatternViews;
pub use patterns::{Patterns, RolePatterns};
pub use scan::{Listing, Scan, scan};
pub(crate) use sealed::{SealedFile, sealed};
pub use trees::{DirectiveBlob, SnapshotDirectives, directives_from_blobs, directives_in_tree};
