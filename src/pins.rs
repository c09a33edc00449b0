//! Where a hive's pinned revisions live in the git dir, and which hives a
//! revision subscribes to (docs/hive.md): what the index, the review of
//! hive directives and the hive commands share.

use std::path::{Path, PathBuf};

use crate::config::HiveSubscription;
use crate::problem::Problem;

/// Most directive files read from one hive revision.
pub const MAX_DIRECTIVES: usize = 20_000;

/// In a pinned folder, the git blob ids of its directive files, sorted
/// (20 bytes each), written with them: the review reads these rather than
/// hashing a thousand files whenever the trusted revision moves.
pub const BLOBS: &str = ".blobs";

/// `$GIT_COMMON_DIR/swarm/hives`: the mirrors and the pinned folders.
pub fn hives_dir(common_dir: &Path) -> PathBuf {
    common_dir.join("swarm").join("hives")
}

/// The bare mirror of the hive `name`.
pub fn mirror_dir(common_dir: &Path, name: &str) -> PathBuf {
    hives_dir(common_dir).join(format!("{name}.git"))
}

/// The directives of the hive `name` at `rev`, as checked and written out.
pub fn pinned_dir(common_dir: &Path, name: &str, rev: &str) -> PathBuf {
    hives_dir(common_dir).join(format!("{name}@{rev}"))
}

/// How a hive directive is named where its origin is shown.
pub fn origin_name(hive: &str, id: &str) -> String {
    format!("hive:{hive}/{id}")
}

/// A commit id cut for reading.
pub fn short(rev: &str) -> &str {
    rev.get(..12).unwrap_or(rev)
}

/// The hives the trusted revision's `.swarm/config.toml` subscribes to
/// (see [`crate::reviewed`]): only their pinned content counts as reviewed.
pub fn trusted_subscriptions(
    repo: &gix::Repository,
    commit: gix::ObjectId,
) -> Vec<HiveSubscription> {
    match repo.find_commit(commit).ok().and_then(|c| c.tree_id().ok()) {
        Some(tree) => subscriptions_in_tree(repo, tree.detach()),
        None => Vec::new(),
    }
}

/// The hives the `.swarm/config.toml` of `tree` subscribes to (none when
/// it is missing, a link, too large or invalid).
pub fn subscriptions_in_tree(repo: &gix::Repository, tree: gix::ObjectId) -> Vec<HiveSubscription> {
    let entry = (|| {
        let tree = repo.find_tree(tree).ok()?;
        let entry = tree.lookup_entry_by_path(".swarm/config.toml").ok()??;
        (entry.mode().is_blob() && !entry.mode().is_link()).then(|| entry.oid().to_owned())
    })();
    entry.map_or_else(Vec::new, |blob| subscriptions_in_blob(repo, blob))
}

/// The hives a `config.toml` held in `blob` subscribes to (none when it is
/// too large or invalid): a tree's, or the one staged in git's index.
pub fn subscriptions_in_blob(repo: &gix::Repository, blob: gix::ObjectId) -> Vec<HiveSubscription> {
    let Some(text) = (|| {
        if repo.find_header(blob).ok()?.size() > CONFIG_MAX {
            return None;
        }
        let blob = repo.find_object(blob).ok()?;
        String::from_utf8(blob.data.clone()).ok()
    })() else {
        return Vec::new();
    };
    let (config, problems) = crate::config::Config::parse(&text, ".swarm/config.toml");
    if problems.iter().any(Problem::is_error) {
        return Vec::new();
    }
    config.hive
}

/// Largest config.toml read from a revision.
const CONFIG_MAX: u64 = 1024 * 1024;
