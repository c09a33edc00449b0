//! Results of `grep_tree` predicates, keyed by what they searched.
//!
//! A `grep_tree` predicate reads every file its glob names in the snapshot
//! and runs its regex over them. When those files are git blobs (a staged,
//! range or commit check) the result is a function of the predicate, the
//! files' paths and their blob ids, so it is kept in
//! `$GIT_COMMON_DIR/swarm/grep-tree` and reused while none of them changes:
//! a hook checking commit after commit searches only folders that changed.
//! Working-tree checks read files, not blobs, and are never cached.
//!
//! It is only a cache: a file that is missing, unreadable, from another
//! version of git-swarm or corrupt is ignored, and a failed write is not an
//! error.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{Finding, Outcome, PredicateResult};

/// Starts the file; bumped with any change to what is stored or to how
/// `grep_tree` searches. The crate version is part of every key as well.
const MAGIC: &[u8] = b"git-swarm grep-tree cache 1\n";

/// Entries kept from earlier runs besides those this run used.
const KEEP: usize = 4096;

#[derive(Serialize, Deserialize)]
struct Stored {
    outcome: u8,
    message: Option<String>,
    findings: Vec<(String, Option<u32>, Option<String>)>,
}

/// The cache for one check.
#[derive(Default)]
pub struct GrepTreeCache {
    path: Option<PathBuf>,
    loaded: bool,
    old: HashMap<u128, Stored>,
    used: HashMap<u128, Stored>,
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

    pub fn get(&mut self, key: u128, predicate: &str) -> Option<PredicateResult> {
        self.load();
        let stored = match self.used.get(&key) {
            Some(s) => s,
            None => {
                let s = self.old.remove(&key)?;
                self.used.entry(key).or_insert(s)
            }
        };
        Some(PredicateResult {
            predicate: predicate.to_owned(),
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
        })
    }

    pub fn put(&mut self, key: u128, result: &PredicateResult) {
        self.load();
        self.used.insert(
            key,
            Stored {
                outcome: outcome_code(result.outcome),
                message: result.message.clone(),
                findings: result
                    .findings
                    .iter()
                    .map(|f| (f.path.clone(), f.line, f.text.clone()))
                    .collect(),
            },
        );
        self.dirty = true;
    }

    /// Writes the entries used by this run and up to `KEEP` others, if
    /// anything was added. Failures are ignored: it is only a cache.
    pub fn save(self) {
        let Some(path) = self.path else { return };
        if !self.dirty {
            return;
        }
        let mut entries: Vec<(u128, Stored)> = self.used.into_iter().collect();
        entries.extend(self.old.into_iter().take(KEEP));
        let Ok(body) = postcard::to_stdvec(&entries) else {
            return;
        };
        let Some(dir) = path.parent() else { return };
        let _ = (|| -> std::io::Result<()> {
            std::fs::create_dir_all(dir)?;
            let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
            tmp.write_all(MAGIC)?;
            tmp.write_all(&body)?;
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
        let Ok(bytes) = std::fs::read(path) else {
            return;
        };
        let Some(body) = bytes.strip_prefix(MAGIC) else {
            return;
        };
        if let Ok(entries) = postcard::from_bytes::<Vec<(u128, Stored)>>(body) {
            self.old = entries.into_iter().collect();
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
