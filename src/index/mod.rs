//! The derived index in `$GIT_DIR/swarm/index`: parsed directives, the
//! fold of the event log, and the stamps of the files they came from.
//!
//! Files are the truth; the index is a cache, keyed by a fingerprint of
//! `.swarm/`, refreshed by whatever command finds it stale, and safe to
//! delete. A changed directive file is parsed again on its own; an event
//! file that only grew has just its new lines folded. As in git's index, a
//! file modified within two seconds of the last refresh is "racy" and
//! re-checked by content.
//!
//! Every new event must sort after the last one folded, (ts, id) being the
//! fold's order: then it cannot be a copy of a folded event, so no set of
//! folded ids need be kept. New events that sort earlier (a merge, a rebase,
//! a cherry-pick), a file that shrank or was rewritten, or a removed event
//! file make the whole log fold again.
//!
//! The modules: [`load`](mod@load) (one loader per kind of command),
//! [`update`] (build and refresh), [`events`] and [`entries`] (reading
//! files), [`scan`](mod@scan) (stamping them), [`watch`] (the optional
//! watcher), [`contents`] (what the index holds), [`file`](mod@file),
//! [`mapped`] and [`pattern_section`] (the format), [`patterns`] (one role's
//! patterns read in place), [`trees`] and [`sealed`](mod@sealed) (caches for `check`).

mod contents;
mod entries;
mod error;
mod events;
mod file;
pub mod hive;
mod load;
mod mapped;
mod pattern_section;
mod patterns;
mod scan;
mod sealed;
mod trees;
mod update;
pub mod watch;

pub use contents::{DirectiveEntry, Index, Loaded, RebuildReason, Refresh, Summary, active};
pub use entries::{entry_from_bytes, read_capped, read_entry, too_large_entry};
pub use error::Error;
pub use load::{
    Delegation, Health, Ranking, index_path, load, load_call_corpus, load_corpus, load_delegation,
    load_delegation_with_entries, load_fold, load_pattern_views, load_patterns, rebuild, refresh,
    status,
};
pub use pattern_section::PatternViews;
pub use patterns::{Patterns, RolePatterns};
pub(crate) use sealed::{SealedFile, sealed, write_sealed};
pub use trees::{DirectiveBlob, SnapshotDirectives, directives_from_blobs, directives_in_tree};
