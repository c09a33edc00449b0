//! The hive directives the index takes: those of each subscribed hive's
//! pinned revision, as written out in the git dir (docs/hive.md).

use std::path::{Path, PathBuf};

use super::DirectiveEntry;
use crate::config::HiveSubscription;
use crate::pins::{MAX_DIRECTIVES, pinned_dir, short};
use crate::problem::Problem;
use crate::store::Store;

/// What the index takes from the hives: every subscribed hive's entries
/// (those switched off left out, a directive of two hives taken from the
/// first), and a warning for each hive whose pinned revision is not here.
pub fn subscribed_entries(store: &Store) -> (Vec<DirectiveEntry>, Vec<Problem>) {
    entries_of(&store.common_dir, &store.config.hive)
}

/// [`subscribed_entries`] of the subscriptions `subs` (a revision's).
pub fn entries_of(
    common_dir: &Path,
    subs: &[HiveSubscription],
) -> (Vec<DirectiveEntry>, Vec<Problem>) {
    let mut out: Vec<DirectiveEntry> = Vec::new();
    let mut problems = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for sub in subs {
        let dir = pinned_dir(common_dir, &sub.name, &sub.rev);
        let Some(names) = is_fetched(common_dir, sub)
            .then(|| crate::safe_fs::names_ending(&dir, ".toml").ok())
            .flatten()
        else {
            problems.push(not_fetched(sub));
            continue;
        };
        for file in names.into_iter().take(MAX_DIRECTIVES) {
            let id = file.strip_suffix(".toml").unwrap_or(&file);
            if sub.off.contains_key(id) || !seen.insert(id.to_owned()) {
                continue;
            }
            let rel = format!("hive:{}/{file}", sub.name);
            let mut entry = crate::index::read_entry(&dir.join(&file), &rel, &file, false);
            entry.origin = Some(sub.name.clone());
            out.push(entry);
        }
    }
    out.sort_by(|a, b| a.file.cmp(&b.file));
    (out, problems)
}

/// A warning for each subscribed hive whose pinned revision is not
/// fetched here (a stat each): its directives are left out until it is.
pub fn unfetched(store: &Store) -> Vec<Problem> {
    (store.config.hive.iter())
        .filter(|sub| !is_fetched(&store.common_dir, sub))
        .map(not_fetched)
        .collect()
}

/// Whether `sub`'s pinned revision is written out here.
pub fn is_fetched(common_dir: &Path, sub: &HiveSubscription) -> bool {
    pinned_dir(common_dir, &sub.name, &sub.rev)
        .symlink_metadata()
        .is_ok_and(|m| m.is_dir())
}

/// The warning for a hive whose pinned revision is not here.
fn not_fetched(sub: &HiveSubscription) -> Problem {
    Problem::warning(
        ".swarm/config.toml",
        "hive",
        format!(
            "hive `{}`: its pinned revision {} is not fetched here: its directives are left out",
            sub.name,
            short(&sub.rev)
        ),
    )
    .with_hint("`git swarm hive fetch` fetches every subscribed hive")
}

/// The subscription named `name`, or an error naming the ones there are.
pub fn subscription<'s>(
    store: &'s Store,
    name: &str,
) -> crate::error::Result<&'s HiveSubscription> {
    let hives = &store.config.hive;
    hives.iter().find(|h| h.name == name).ok_or_else(|| {
        let names: Vec<&str> = hives.iter().map(|h| h.name.as_str()).collect();
        crate::error::Error::usage(
            format!("no hive named `{name}` in .swarm/config.toml"),
            if names.is_empty() {
                "`git swarm hive add URL` subscribes to one".to_owned()
            } else {
                format!("the hives here: {}", names.join(", "))
            },
        )
    })
}

/// A key of what [`subscribed_entries`] reads: the subscriptions, and
/// whether each pinned folder is there. 0 with no hive.
pub fn state_key(store: &Store) -> u64 {
    if store.config.hive.is_empty() {
        return 0;
    }
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    for sub in &store.config.hive {
        h.update(sub.name.as_bytes());
        h.update(&[0]);
        h.update(sub.rev.as_bytes());
        for id in sub.off.keys() {
            h.update(id.as_bytes());
            h.update(&[0]);
        }
        h.update(&[u8::from(is_fetched(&store.common_dir, sub)), 1]);
    }
    h.digest() | 1
}

/// The file of hive directive `id` this project takes, if any: the first
/// subscribed hive that has it and has not been switched off for it.
pub fn directive_file<'s>(store: &'s Store, id: &str) -> Option<(PathBuf, &'s HiveSubscription)> {
    if !crate::directive::is_valid_id(id) {
        return None;
    }
    store.config.hive.iter().find_map(|sub| {
        let path = pinned_dir(&store.common_dir, &sub.name, &sub.rev).join(format!("{id}.toml"));
        (!sub.off.contains_key(id) && path.symlink_metadata().is_ok_and(|m| m.is_file()))
            .then_some((path, sub))
    })
}
