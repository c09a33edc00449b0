//! Results of `grep_tree` predicates, keyed by what they searched.
//!
//! When the files a `grep_tree` predicate searches are git blobs (a staged,
//! range or commit check), its result is a function of the predicate and of
//! the folder its glob names, so it is kept in
//! `$GIT_COMMON_DIR/swarm/grep-tree` and reused while that folder does not
//! change. A folder is recognised by the tree id of any folder above it
//! (checking the same snapshot again reads no tree), by its own, or by the
//! paths and blob ids of the files searched (a staged folder whose
//! cache-tree entry git has invalidated). Working-tree checks read files,
//! not blobs, and are never cached.
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
const MAGIC: &[u8] = b"git-swarm grep-tree cache 7\n";

/// Keys kept from earlier runs besides those this run used.
const KEEP: usize = 4096;

/// Encoded as it always was: postcard writes the outcome's variant index as
/// the one byte the format had, and a finding as its three fields.
#[derive(Clone, Serialize, Deserialize)]
struct Stored {
    outcome: Outcome,
    message: Option<String>,
    findings: Vec<Finding>,
    omitted: usize,
}

/// The cache file, mapped: a check decodes only the results it looks up.
///
/// After the magic and the checksum of the rest, little-endian: the number
/// of keys and of results (`u32` each); the keys, sorted, each with the
/// index of its result (`u128`, `u32`); each result's offset and length in
/// the data (`u32`, `u32`); the data, one postcard-encoded [`Stored`] per
/// result (a result is kept once, under every key that finds it).
struct File {
    sealed: crate::index::SealedFile,
    keys: usize,
    results: usize,
}

const KEY: usize = 20;
const SPAN: usize = 8;

impl File {
    fn open(path: &Path) -> Option<File> {
        let sealed = crate::index::SealedFile::open(path, MAGIC)?;
        let body = sealed.body();
        let count = |at: usize| Some(u32::from_le_bytes(body.get(at..at + 4)?.try_into().ok()?));
        let keys = count(0)? as usize;
        let results = count(4)? as usize;
        let data = 8usize
            .checked_add(keys.checked_mul(KEY)?)?
            .checked_add(results.checked_mul(SPAN)?)?;
        (data <= body.len()).then_some(File {
            sealed,
            keys,
            results,
        })
    }

    fn body(&self) -> &[u8] {
        self.sealed.body()
    }

    fn key(&self, i: usize) -> (u128, u32) {
        let at = 8 + i * KEY;
        let b = &self.body()[at..at + KEY];
        let key = u128::from_le_bytes(b[..16].try_into().unwrap_or_default());
        (
            key,
            u32::from_le_bytes(b[16..].try_into().unwrap_or_default()),
        )
    }

    /// The result kept under `key`, if there is one and it decodes.
    fn find(&self, key: u128) -> Option<(u32, Stored)> {
        let (mut lo, mut hi) = (0, self.keys);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let (k, result) = self.key(mid);
            match k.cmp(&key) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some((result, self.result(result)?)),
            }
        }
        None
    }

    fn result(&self, i: u32) -> Option<Stored> {
        let i = i as usize;
        if i >= self.results {
            return None;
        }
        let body = self.body();
        let spans = 8 + self.keys * KEY;
        let data = spans + self.results * SPAN;
        let span = &body[spans + i * SPAN..spans + (i + 1) * SPAN];
        let at = u32::from_le_bytes(span[..4].try_into().ok()?) as usize;
        let len = u32::from_le_bytes(span[4..].try_into().ok()?) as usize;
        let start = data.checked_add(at)?;
        postcard::from_bytes(body.get(start..start.checked_add(len)?)?).ok()
    }
}

/// The cache for one check.
#[derive(Default)]
pub struct GrepTreeCache {
    path: Option<PathBuf>,
    loaded: bool,
    file: Option<File>,
    /// Results added by this run, under each of their keys.
    used: HashMap<u128, Rc<Stored>>,
    /// Keys this run found in the file, with their result's index there:
    /// kept first when the file is rewritten. Only pushed to: a check
    /// that adds nothing (the usual case) never rewrites the file, and
    /// hashing each hit into a map cost more than the lookup itself.
    hits: Vec<(u128, u32)>,
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
        if let Some(stored) = self.used.get(&key) {
            return Some(result_of(predicate, (**stored).clone()));
        }
        let (i, stored) = self.file.as_ref()?.find(key)?;
        self.hits.push((key, i));
        Some(result_of(predicate, stored))
    }

    /// Keeps `result` under each of `keys`.
    pub fn put(&mut self, keys: &[u128], result: &PredicateResult) {
        if keys.is_empty() {
            return;
        }
        self.load();
        let stored = Rc::new(Stored {
            outcome: result.outcome,
            message: result.message.clone(),
            findings: result.findings.clone(),
            omitted: result.omitted,
        });
        for &key in keys {
            self.used.insert(key, stored.clone());
        }
        self.dirty = true;
    }

    /// Writes the entries used by this run and up to `KEEP` others, if
    /// anything was added. Failures are ignored: it is only a cache.
    pub fn save(mut self) {
        let Some(path) = self.path.take() else { return };
        if !self.dirty {
            return;
        }
        // The keys this run found in the file, then its other keys up to
        // KEEP, with the results they find (one decode per result,
        // whatever keys find it).
        if let Some(file) = &self.file {
            let mut decoded: HashMap<u32, Rc<Stored>> = HashMap::new();
            let hits = std::mem::take(&mut self.hits);
            let others = (0..file.keys).map(|i| (file.key(i), false));
            let mut others_kept = 0;
            for ((key, result), hit) in hits.into_iter().map(|k| (k, true)).chain(others) {
                if !hit && others_kept == KEEP {
                    break;
                }
                if self.used.contains_key(&key) {
                    continue;
                }
                let stored = match decoded.get(&result) {
                    Some(s) => s.clone(),
                    None => match file.result(result) {
                        Some(s) => decoded.entry(result).or_insert(Rc::new(s)).clone(),
                        None => continue,
                    },
                };
                if !hit {
                    others_kept += 1;
                }
                self.used.insert(key, stored);
            }
        }
        let mut keys: Vec<(u128, Rc<Stored>)> = self.used.drain().collect();
        keys.sort_by_key(|(key, _)| *key);
        // One copy of each result, with every key it is kept under.
        let mut index: HashMap<*const Stored, u32> = HashMap::new();
        let mut spans: Vec<u8> = Vec::new();
        let mut data: Vec<u8> = Vec::new();
        let mut table = Vec::with_capacity(keys.len() * KEY);
        for (key, stored) in &keys {
            let next = index.len() as u32;
            let i = *index.entry(Rc::as_ptr(stored)).or_insert_with(|| {
                let at = data.len() as u32;
                let _ = postcard::to_io(&**stored, &mut data);
                spans.extend_from_slice(&at.to_le_bytes());
                spans.extend_from_slice(&(data.len() as u32 - at).to_le_bytes());
                next
            });
            table.extend_from_slice(&key.to_le_bytes());
            table.extend_from_slice(&i.to_le_bytes());
        }
        let (Ok(count), Ok(_)) = (u32::try_from(keys.len()), u32::try_from(data.len())) else {
            return;
        };
        let mut body = Vec::with_capacity(8 + table.len() + spans.len() + data.len());
        body.extend_from_slice(&count.to_le_bytes());
        body.extend_from_slice(&(index.len() as u32).to_le_bytes());
        body.extend_from_slice(&table);
        body.extend_from_slice(&spans);
        body.extend_from_slice(&data);
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
        // A missing, damaged or foreign file is a cache miss.
        self.file = self.path.as_deref().and_then(File::open);
    }
}

/// A kept result as the result of `predicate`.
fn result_of(predicate: &str, stored: Stored) -> PredicateResult<'_> {
    PredicateResult {
        predicate,
        outcome: stored.outcome,
        message: stored.message,
        findings: stored.findings,
        omitted: stored.omitted,
    }
}
