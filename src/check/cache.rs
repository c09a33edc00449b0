//! Results of `grep_tree` predicates, keyed by what they searched.
//!
//! A `grep_tree` predicate reads every file its glob names in the snapshot
//! and runs its regex over them. When those files are git blobs (a staged,
//! range or commit check) the result is a function of the predicate and of
//! the folder its glob names, so it is kept in
//! `$GIT_COMMON_DIR/swarm/grep-tree` and reused while that folder does not
//! change. A folder is recognised by the tree id of any folder above it
//! (the root included: checking the same snapshot again reads no tree), by
//! its own tree id, or by the paths and blob ids of the files searched (a
//! staged folder whose cache-tree entry git has invalidated). A hook
//! checking commit after commit reads only the trees along the changed
//! paths and searches only folders that changed. Working-tree checks read
//! files, not blobs, and are never cached.
//!
//! It is only a cache: a file that is missing, unreadable, from another
//! version of git-swarm or corrupt is ignored, and a failed write is not an
//! error.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use serde::{Deserialize, Serialize};

use super::{Finding, Outcome, PredicateResult};

/// Starts the file; bumped with any change to what is stored or to how
/// `grep_tree` searches. The crate version is part of every key as well.
const MAGIC: &[u8] = b"git-swarm grep-tree cache 6\n";

/// Keys kept from earlier runs besides those this run used.
const KEEP: usize = 4096;

#[derive(Serialize, Deserialize)]
struct Stored {
    outcome: u8,
    message: Option<String>,
    findings: Vec<(String, Option<u32>, Option<String>)>,
    omitted: usize,
}

/// The cache for one check.
#[derive(Default)]
pub struct GrepTreeCache {
    path: Option<PathBuf>,
    loaded: bool,
    old: HashMap<u128, Rc<Stored>>,
    used: HashMap<u128, Rc<Stored>>,
    dirty: bool,
}

impl GrepTreeCache {
    /// A cache kept in `<git common dir>/swarm/grep-tree`.
    pub fn at(common_dir: &Path) -> GrepTreeCache {
        GrepTreeCache {
            path: Some(common_dir.join("swarm").join("grep-tree")),
            ..GrepTreeCache::default()
        }
    }

    /// The key of a predicate over these files (path, blob id), in snapshot order.
    pub fn key<'a>(predicate: &str, files: impl Iterator<Item = (&'a [u8], &'a gix::oid)>) -> u128 {
        let mut h = xxhash_rust::xxh3::Xxh3::new();
        h.update(env!("CARGO_PKG_VERSION").as_bytes());
        h.update(&[0]);
        h.update(predicate.as_bytes());
        h.update(&[0]);
        for (path, id) in files {
            h.update(path);
            h.update(&[0]);
            h.update(id.as_bytes());
        }
        h.digest128()
    }

    /// The key of a predicate over the folder `level` of the snapshot,
    /// whose tree is `tree`: the tree id fixes every file below it.
    pub fn tree_key(predicate: &str, level: &str, tree: &gix::oid) -> u128 {
        let mut h = xxhash_rust::xxh3::Xxh3::new();
        h.update(env!("CARGO_PKG_VERSION").as_bytes());
        h.update(&[1]);
        h.update(predicate.as_bytes());
        h.update(&[0]);
        h.update(level.as_bytes());
        h.update(&[0]);
        h.update(tree.as_bytes());
        h.digest128()
    }

    pub fn get<'a>(&mut self, key: u128, predicate: &'a str) -> Option<PredicateResult<'a>> {
        self.load();
        let stored = match self.used.get(&key) {
            Some(s) => s,
            None => {
                let s = self.old.remove(&key)?;
                self.used.entry(key).or_insert(s)
            }
        };
        Some(PredicateResult {
            predicate,
            outcome: outcome_from(stored.outcome)?,
            message: stored.message.clone(),
            findings: stored
                .findings
                .iter()
                .map(|(path, line, text)| Finding {
                    path: path.clone(),
                    line: *line,
                    text: text.clone(),
                })
                .collect(),
            omitted: stored.omitted,
        })
    }

    /// Keeps `result` under each of `keys`.
    pub fn put(&mut self, keys: &[u128], result: &PredicateResult) {
        if keys.is_empty() {
            return;
        }
        self.load();
        let stored = Rc::new(Stored {
            outcome: outcome_code(result.outcome),
            message: result.message.clone(),
            findings: result
                .findings
                .iter()
                .map(|f| (f.path.clone(), f.line, f.text.clone()))
                .collect(),
            omitted: result.omitted,
        });
        for &key in keys {
            self.old.remove(&key);
            self.used.insert(key, stored.clone());
        }
        self.dirty = true;
    }

    /// Writes the entries used by this run and up to `KEEP` others, if
    /// anything was added. Failures are ignored: it is only a cache.
    pub fn save(self) {
        let Some(path) = self.path else { return };
        if !self.dirty {
            return;
        }
        // One copy of each result, with every key it is kept under.
        let mut groups: HashMap<*const Stored, (Vec<u128>, Rc<Stored>)> = HashMap::new();
        for (key, stored) in self.used.into_iter().chain(self.old.into_iter().take(KEEP)) {
            groups
                .entry(Rc::as_ptr(&stored))
                .or_insert_with(|| (Vec::new(), stored.clone()))
                .0
                .push(key);
        }
        let entries: Vec<(Vec<u128>, &Stored)> = groups
            .values()
            .map(|(keys, stored)| (keys.clone(), &**stored))
            .collect();
        let Ok(body) = postcard::to_stdvec(&entries) else {
            return;
        };
        let Some(dir) = path.parent() else { return };
        let _ = (|| -> std::io::Result<()> {
            std::fs::create_dir_all(dir)?;
            let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
            tmp.write_all(&crate::index::sealed(MAGIC, &body))?;
            tmp.persist(&path)?;
            Ok(())
        })();
    }

    fn load(&mut self) {
        if self.loaded {
            return;
        }
        self.loaded = true;
        let Some(path) = &self.path else { return };
        let Ok(bytes) = crate::event::read_plain_file(path) else {
            return;
        };
        // A damaged file is a cache miss.
        let Some(body) = crate::index::unsealed(MAGIC, &bytes) else {
            return;
        };
        if let Ok(entries) = postcard::from_bytes::<Vec<(Vec<u128>, Stored)>>(body) {
            for (keys, stored) in entries {
                let stored = Rc::new(stored);
                for key in keys {
                    self.old.insert(key, stored.clone());
                }
            }
        }
    }
}

fn outcome_code(o: Outcome) -> u8 {
    match o {
        Outcome::Pass => 0,
        Outcome::Fail => 1,
        Outcome::NotApplicable => 2,
        Outcome::Error => 3,
        Outcome::Skipped => 4,
    }
}

fn outcome_from(code: u8) -> Option<Outcome> {
    Some(match code {
        0 => Outcome::Pass,
        1 => Outcome::Fail,
        2 => Outcome::NotApplicable,
        3 => Outcome::Error,
        4 => Outcome::Skipped,
        _ => return None,
    })
}
