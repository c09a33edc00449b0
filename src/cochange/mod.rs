//! Co-change mining: files that change together in the history, read
//! in-process with gix, scored by normalised pointwise mutual information
//! and turned into proposals "when X changes, Y changes too" (`propose`).
//!
//! The walk goes from HEAD, newest first, over every non-merge commit
//! (as `git log --no-merges`), and stops at `max_commits` or `since`. Each
//! commit is diffed against its parent with renames paired as `git diff`
//! pairs them (`diff.renames`), so an older name maps to the file's name at
//! HEAD and a pair's history survives a rename; files gone at HEAD drop
//! out. Commits touching more than `max_files` files (bulk: reformatting,
//! imports, mass renames) still teach renames but count for nothing else.
//! Recent commits weigh more: a commit's weight halves every `half_life_days`
//! before the newest one read. See docs/cochange.md.

mod bases;
pub mod propose;
pub mod rules;

use std::collections::HashMap;

use gix::ObjectId;
use gix::bstr::{BStr, BString, ByteSlice};
use serde::Serialize;

use crate::change::{ChangedFile, FileStatus, Renames};
use crate::error::{Error, Result};

/// What to mine and what to keep.
#[derive(Debug, Clone)]
pub struct Options {
    /// Most non-merge commits read.
    pub max_commits: usize,
    /// Commits older than this (seconds since the epoch) are not read.
    pub since: Option<i64>,
    /// Fewest commits a pair must change together in.
    pub min_support: u32,
    /// Lowest NPMI a pair keeps.
    pub min_npmi: f64,
    /// Lowest confidence P(Y | X) for "when X changes, Y changes too".
    pub min_confidence: f64,
    /// A commit touching more files than this is bulk.
    pub max_files: usize,
    /// A commit's weight halves every this many days before the newest
    /// commit read; 0 weighs every commit the same.
    pub half_life_days: f64,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            max_commits: 2000,
            since: None,
            min_support: 3,
            min_npmi: 0.5,
            min_confidence: 0.5,
            max_files: 30,
            half_life_days: 180.0,
        }
    }
}

/// A rule found: when `when` changes, `then` changes too.
#[derive(Debug, Clone, Serialize)]
pub struct Rule {
    pub when: String,
    pub then: String,
    /// Commits (not bulk, not merges) that changed both.
    pub support: u32,
    /// Commits that changed `when`, and `then`.
    pub when_commits: u32,
    pub then_commits: u32,
    /// Normalised pointwise mutual information of the pair, -1..1, recency-weighted.
    pub npmi: f64,
    /// P(then | when), recency-weighted.
    pub confidence: f64,
    /// The newest commits that changed both, abbreviated.
    pub commits: Vec<String>,
    /// What the rule is, for telling it found again: `cochange:WHEN -> THEN`.
    pub key: String,
}

/// What the walk read.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Mined {
    /// Non-merge commits read.
    pub commits: usize,
    pub merges_skipped: usize,
    /// Commits over `max_files` files: renames followed, nothing counted.
    pub bulk_skipped: usize,
    /// Renames followed (an older name mapped to the current one).
    pub renames: usize,
    /// Files counted (existing at HEAD, not ignored).
    pub files: usize,
    /// Files at HEAD left out because their paths are not UTF-8: a
    /// directive's path glob cannot name them.
    pub non_utf8_paths: usize,
    /// Why the walk stopped: `max_commits`, `since` or `history` (it ran out).
    pub stopped_at: &'static str,
    /// The `diff.renameLimit` rename detection would have needed in some
    /// commit, when it was exceeded there (renames of that commit missed).
    pub rename_limit_needed: Option<u64>,
    pub rules: Vec<Rule>,
}

/// How many commit ids a rule keeps as evidence.
const EVIDENCE: usize = 5;
/// Hex digits of an abbreviated commit id.
const SHORT: usize = 10;

/// A pair's counts.
#[derive(Default)]
struct PairStat {
    raw: u32,
    weight: f64,
    /// The newest commits (ordinals) that changed both.
    commits: [u32; EVIDENCE],
}

/// What a path seen in an older commit stands for.
#[derive(Clone, Copy)]
enum Alias {
    /// The file at HEAD with this number.
    File(u32),
    /// A file not at HEAD (deleted, or replaced by another of the same name).
    Gone,
}

struct Miner {
    /// Every file at HEAD: read once, as looking each path up in HEAD's
    /// tree would copy its large folders again and again.
    at_head: std::collections::HashSet<BString>,
    /// Paths as they stood at the point of the walk, and what each is now.
    aliases: HashMap<BString, Alias>,
    names: Vec<String>,
    file_raw: Vec<u32>,
    file_weight: Vec<f64>,
    pairs: HashMap<u64, PairStat>,
    total_weight: f64,
    commit_ids: Vec<ObjectId>,
    /// Files at HEAD whose paths are not UTF-8, left out.
    non_utf8: usize,
}

impl Miner {
    /// The file at HEAD that `path` names at this point of the walk.
    fn resolve(&mut self, path: &BStr) -> Alias {
        if let Some(a) = self.aliases.get(path) {
            return *a;
        }
        let alias = match path.to_str() {
            Ok(name) if self.at_head.contains(path) && !rules::ignored(name) => {
                let n = self.names.len() as u32;
                self.names.push(name.to_owned());
                self.file_raw.push(0);
                self.file_weight.push(0.0);
                Alias::File(n)
            }
            Err(_) if self.at_head.contains(path) => {
                self.non_utf8 += 1;
                Alias::Gone
            }
            _ => Alias::Gone,
        };
        self.aliases.insert(path.to_owned(), alias);
        alias
    }

    /// Counts one commit's files, then moves the names it changed to what
    /// they were before it, for the older commits.
    fn commit(&mut self, files: &[ChangedFile], counted: Option<f64>) -> usize {
        let mut ids = Vec::new();
        for f in files {
            if let Alias::File(n) = self.resolve(f.path.as_bstr()) {
                ids.push(n);
            }
        }
        // What each renamed file is now, read before any name moves.
        let moved: Vec<(&BString, Alias)> = files
            .iter()
            .filter(|f| f.status == FileStatus::Renamed)
            .filter_map(|f| Some((f.old_path.as_ref()?, self.resolve(f.path.as_bstr()))))
            .collect();
        for f in files {
            // Before it was added (or a rename's or copy's destination)
            // the name was free, and a deleted file is not at HEAD: an
            // older file of that name is another file.
            if f.status != FileStatus::Modified && f.status != FileStatus::TypeChanged {
                self.aliases.insert(f.path.clone(), Alias::Gone);
            }
        }
        // Last, so that a name freed by a rename and taken by a new file in
        // the same commit still leads to the renamed file before it.
        for (old, now) in &moved {
            self.aliases.insert((*old).clone(), *now);
        }
        let renames = moved.len();
        let Some(weight) = counted else {
            return renames;
        };
        ids.sort_unstable();
        ids.dedup();
        let ordinal = self.commit_ids.len() as u32 - 1;
        self.total_weight += weight;
        for (i, &a) in ids.iter().enumerate() {
            self.file_raw[a as usize] += 1;
            self.file_weight[a as usize] += weight;
            for &b in &ids[i + 1..] {
                let pair = self
                    .pairs
                    .entry(u64::from(a) << 32 | u64::from(b))
                    .or_default();
                if (pair.raw as usize) < EVIDENCE {
                    pair.commits[pair.raw as usize] = ordinal;
                }
                pair.raw += 1;
                pair.weight += weight;
            }
        }
        renames
    }

    fn rules(&self, options: &Options) -> Vec<Rule> {
        let mut rules = Vec::new();
        if self.total_weight <= 0.0 {
            return rules;
        }
        for (&key, pair) in &self.pairs {
            if pair.raw < options.min_support {
                continue;
            }
            let (a, b) = ((key >> 32) as usize, (key & 0xffff_ffff) as usize);
            let (name_a, name_b) = (&self.names[a], &self.names[b]);
            if rules::test_and_implementation(name_a, name_b) {
                continue;
            }
            let npmi = npmi(
                pair.weight / self.total_weight,
                self.file_weight[a] / self.total_weight,
                self.file_weight[b] / self.total_weight,
            );
            if npmi < options.min_npmi {
                continue;
            }
            let commits: Vec<String> = pair.commits[..(pair.raw as usize).min(EVIDENCE)]
                .iter()
                .map(|&c| {
                    self.commit_ids[c as usize]
                        .to_hex_with_len(SHORT)
                        .to_string()
                })
                .collect();
            for (when, then) in [(a, b), (b, a)] {
                // No weight, no confidence: 0/0 is not "always".
                if self.file_weight[when] <= 0.0 {
                    continue;
                }
                let confidence = pair.weight / self.file_weight[when];
                if confidence < options.min_confidence {
                    continue;
                }
                let (w, t) = (&self.names[when], &self.names[then]);
                rules.push(Rule {
                    when: w.clone(),
                    then: t.clone(),
                    support: pair.raw,
                    when_commits: self.file_raw[when],
                    then_commits: self.file_raw[then],
                    npmi: round(npmi),
                    confidence: round(confidence.min(1.0)),
                    commits: commits.clone(),
                    key: format!("cochange:{w} -> {t}"),
                });
            }
        }
        rules.sort_by(|x, y| {
            y.npmi
                .total_cmp(&x.npmi)
                .then(y.confidence.total_cmp(&x.confidence))
                .then(y.support.cmp(&x.support))
                .then_with(|| (&x.when, &x.then).cmp(&(&y.when, &y.then)))
        });
        rules
    }
}

/// Four decimals: scores read the same in text and JSON, and on every run.
fn round(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

/// Normalised PMI: ln(p(x,y) / (p(x) p(y))) / -ln p(x,y), in -1..1; 1 when
/// the two always change together in every commit read.
pub fn npmi(pxy: f64, px: f64, py: f64) -> f64 {
    if pxy <= 0.0 {
        return -1.0;
    }
    let h = -libm::log(pxy);
    if h <= f64::EPSILON {
        return 1.0;
    }
    (libm::log(pxy / (px * py)) / h).clamp(-1.0, 1.0)
}

/// A commit to diff: its id, its parent (none: against the empty tree) and
/// its commit time.
struct ToDiff {
    id: ObjectId,
    parent: Option<ObjectId>,
    time: i64,
}

/// What one commit's diff keeps: the files it changed (of a bulk commit,
/// only those that move names: see [`Diffed::of`]), whether it is bulk, and
/// the `diff.renameLimit` its renames needed.
struct Diffed {
    files: Vec<ChangedFile>,
    bulk: bool,
    rename_limit_needed: Option<u64>,
}

impl Diffed {
    /// A commit of more than `max_files` files counts for nothing: of its
    /// diff only the renames, additions, deletions and copies are kept,
    /// which move or end a name's history for the older commits. Its
    /// modifications, most of a bulk commit, are dropped before the next
    /// commit is diffed rather than kept until counting.
    fn of(mut files: Vec<ChangedFile>, needed: Option<u64>, max_files: usize) -> Diffed {
        let bulk = files.len() > max_files;
        if bulk {
            files.retain(|f| {
                f.status != FileStatus::Modified && f.status != FileStatus::TypeChanged
            });
            files.shrink_to_fit();
        }
        Diffed {
            files,
            bulk,
            rename_limit_needed: needed,
        }
    }
}

/// Bytes of delta bases kept, shared by the threads: a third of git's
/// `core.deltaBaseCacheLimit` kept the same speed with half the memory.
const DELTA_BASES: usize = 32 * 1024 * 1024;
/// Bytes of whole objects (trees, commits) each thread keeps for the next
/// commit's diff, which reads the same folders on its other side: a few
/// commits' worth is all that is read again.
const OBJECTS: usize = 8 * 1024 * 1024;

/// A handle on `repo` with the caches a history walk needs. Trees are read
/// again by neighbouring commits' diffs, and each is a delta on another in
/// a pack: without a cache of delta bases every read inflates its whole
/// chain again.
fn walking(repo: &gix::Repository, delta_bases: usize) -> gix::Repository {
    let mut repo = repo.clone();
    repo.object_cache_size(OBJECTS);
    repo.objects.set_pack_cache(move || {
        Box::new(gix::odb::pack::cache::lru::MemoryCappedHashmap::new(
            delta_bases,
        ))
    });
    // Pack entries are read by location to follow delta chains (`bases`).
    repo.objects.prevent_pack_unload();
    repo
}

/// Diffs `commits` in order, each against its parent.
fn diff_all(
    repo: &gix::Repository,
    commits: &[ToDiff],
    renames: Renames,
    max_files: usize,
    delta_bases: usize,
) -> Result<Vec<Diffed>> {
    let repo = walking(repo, delta_bases);
    let bases = bases::Bases::new(&repo);
    let mut state = gix::diff::tree::State::default();
    let tree = |id: ObjectId| -> Result<ObjectId> {
        repo.find_commit(id)
            .and_then(|c| c.tree_id())
            .map(|t| t.detach())
            .map_err(|e| Error::git(format!("reading commit {id}"), e))
    };
    let mut out = Vec::with_capacity(commits.len());
    // The parent's tree is the next commit's own, most often: read once.
    let mut last: Option<(ObjectId, ObjectId)> = None;
    for c in commits {
        let new = match last {
            Some((id, tree)) if id == c.id => tree,
            _ => tree(c.id)?,
        };
        let old = match c.parent {
            Some(p) => {
                let t = tree(p)?;
                last = Some((p, t));
                Some(t)
            }
            None => None,
        };
        let (files, needed) =
            crate::change::diff_trees_in(&repo, &bases, &mut state, old, new, renames)?;
        out.push(Diffed::of(files, needed, max_files));
    }
    Ok(out)
}

/// Commits below this many are diffed on one thread.
const PARALLEL_FROM: usize = 256;

/// Diffs `commits` on up to `threads` threads, each a run of neighbouring
/// commits (whose trees share deltas), in the order given.
fn diff_parallel(
    repo: &gix::Repository,
    commits: &[ToDiff],
    renames: Renames,
    max_files: usize,
    threads: usize,
) -> Result<Vec<Diffed>> {
    if threads < 2 || commits.len() < PARALLEL_FROM {
        return diff_all(repo, commits, renames, max_files, DELTA_BASES);
    }
    let shared = repo.clone().into_sync();
    let chunk = commits.len().div_ceil(threads);
    let delta_bases = DELTA_BASES / threads;
    let results: Vec<Result<Vec<Diffed>>> = std::thread::scope(|scope| {
        let workers: Vec<_> = commits
            .chunks(chunk)
            .map(|part| {
                let shared = &shared;
                scope.spawn(move || {
                    diff_all(
                        &shared.to_thread_local(),
                        part,
                        renames,
                        max_files,
                        delta_bases,
                    )
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| {
                w.join().unwrap_or_else(|_| {
                    Err(Error::git(
                        "diffing the history",
                        std::io::Error::other("a diff thread panicked"),
                    ))
                })
            })
            .collect()
    });
    let mut out = Vec::with_capacity(commits.len());
    for r in results {
        out.extend(r?);
    }
    Ok(out)
}

/// Mines the history of `repo` from HEAD, diffing on up to `threads`
/// threads. An unborn HEAD has no history: nothing is found.
pub fn mine(repo: &gix::Repository, options: &Options, threads: usize) -> Result<Mined> {
    let mut mined = Mined {
        stopped_at: "history",
        ..Mined::default()
    };
    let head = match repo.head_id() {
        Ok(id) => id.detach(),
        Err(_) => return Ok(mined),
    };
    let head_tree = repo
        .find_commit(head)
        .and_then(|c| c.tree())
        .map_err(|e| Error::git("reading HEAD's tree", e))?;
    let renames = Renames::of(repo)?;
    let boundary: Vec<ObjectId> = repo
        .shallow_commits()
        .map_err(|e| Error::git("reading the shallow file", e))?
        .map(|b| b.iter().copied().collect())
        .unwrap_or_default();
    use gix::revision::walk::Sorting;
    use gix::traverse::commit::simple::CommitTimeOrder;
    // Newest first over every queued commit: the first commit older than
    // `since` says that all the rest are older too, and that the walk
    // stopped there (a cut-off walk would end as quietly as a history
    // read to its root).
    let walk = repo
        .rev_walk([head])
        .sorting(Sorting::ByCommitTime(CommitTimeOrder::NewestFirst))
        .all()
        .map_err(|e| Error::git("walking the history", e))?;
    let mut commits = Vec::new();
    for info in walk {
        let info = info.map_err(|e| Error::git("walking the history", e))?;
        let time = info.commit_time.unwrap_or_default();
        if options.since.is_some_and(|since| time < since) {
            mined.stopped_at = "since";
            break;
        }
        // As in git, a commit at a shallow clone's boundary has no parents:
        // a root, even when it was a merge.
        let at_boundary = boundary.contains(&info.id);
        if info.parent_ids.len() > 1 && !at_boundary {
            mined.merges_skipped += 1;
            continue;
        }
        if commits.len() >= options.max_commits {
            mined.stopped_at = "max_commits";
            break;
        }
        let parent = match info.parent_ids.first() {
            Some(&p) if !at_boundary => Some(p),
            _ => None,
        };
        commits.push(ToDiff {
            id: info.id,
            parent,
            time,
        });
    }
    crate::trace::mark("history walked");
    let diffs = diff_parallel(repo, &commits, renames, options.max_files, threads)?;
    crate::trace::mark("commits diffed");
    let mut files_at_head = gix::traverse::tree::Recorder::default();
    head_tree
        .traverse()
        .breadthfirst(&mut files_at_head)
        .map_err(|e| Error::git("reading HEAD's tree", e))?;
    let mut miner = Miner {
        at_head: files_at_head
            .records
            .into_iter()
            .filter(|e| !e.mode.is_tree())
            .map(|e| e.filepath)
            .collect(),
        aliases: HashMap::new(),
        names: Vec::new(),
        file_raw: Vec::new(),
        file_weight: Vec::new(),
        pairs: HashMap::new(),
        total_weight: 0.0,
        commit_ids: Vec::with_capacity(commits.len()),
        non_utf8: 0,
    };
    let newest = commits.first().map_or(0, |c| c.time);
    for (c, diffed) in commits.iter().zip(diffs) {
        if let Some(n) = diffed.rename_limit_needed {
            mined.rename_limit_needed = mined.rename_limit_needed.max(Some(n));
        }
        mined.commits += 1;
        miner.commit_ids.push(c.id);
        let counted = if diffed.bulk {
            mined.bulk_skipped += 1;
            None
        } else {
            Some(weight(newest - c.time, options.half_life_days))
        };
        mined.renames += miner.commit(&diffed.files, counted);
    }
    mined.files = miner.file_raw.iter().filter(|&&n| n > 0).count();
    mined.non_utf8_paths = miner.non_utf8;
    mined.rules = miner.rules(options);
    Ok(mined)
}

/// Most half-lives a commit's age counts for: 2^-300 is far from
/// underflowing to 0, even multiplied by another such weight (NPMI's
/// p(x) p(y)), so every commit read keeps a weight.
const MAX_HALF_LIVES: f64 = 300.0;

/// The weight of a commit `age` seconds older than the newest read.
fn weight(age: i64, half_life_days: f64) -> f64 {
    if half_life_days <= 0.0 {
        return 1.0;
    }
    let days = age.max(0) as f64 / 86_400.0;
    libm::exp2(-(days / half_life_days).min(MAX_HALF_LIVES))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn npmi_is_one_for_pairs_that_always_change_together_and_zero_for_independent_ones() {
        assert_eq!(npmi(0.1, 0.1, 0.1), 1.0);
        assert!((npmi(0.25, 0.5, 0.5)).abs() < 1e-12);
        assert_eq!(npmi(0.0, 0.5, 0.5), -1.0);
        assert_eq!(npmi(1.0, 1.0, 1.0), 1.0);
        let x = npmi(0.05, 0.1, 0.2);
        assert!(x > 0.0 && x < 1.0, "{x}");
    }

    /// Diffing on several threads finds what one thread finds, on this
    /// repository's own history (when it has one to read).
    #[test]
    fn threads_change_nothing_found() {
        let Ok(repo) = gix::open(env!("CARGO_MANIFEST_DIR")) else {
            return;
        };
        let options = Options {
            max_commits: 600,
            ..Options::default()
        };
        let one = mine(&repo, &options, 1).expect("mined");
        let two = mine(&repo, &options, 3).expect("mined");
        assert_eq!(one.commits, two.commits);
        assert_eq!(one.renames, two.renames);
        assert_eq!(
            serde_json::to_string(&one).expect("json"),
            serde_json::to_string(&two).expect("json")
        );
    }

    #[test]
    fn a_commit_weighs_half_after_one_half_life() {
        assert_eq!(weight(0, 180.0), 1.0);
        assert!((weight(180 * 86_400, 180.0) - 0.5).abs() < 1e-12);
        assert_eq!(weight(10_000_000, 0.0), 1.0);
        // A century at a half-life of a day keeps a weight, and a square.
        let old = weight(100 * 365 * 86_400, 1.0);
        assert!(old > 0.0 && old * old > 0.0, "{old}");
    }

    /// A bulk commit keeps only what moves names: its modifications go.
    #[test]
    fn a_bulk_diff_keeps_only_what_moves_names() {
        let file = |path: &str, status, old: Option<&str>| ChangedFile {
            path: path.into(),
            old_path: old.map(Into::into),
            status,
            old: crate::change::Content::Absent,
            new: crate::change::Content::Absent,
        };
        let files = || {
            vec![
                file("a.rs", FileStatus::Modified, None),
                file("b.rs", FileStatus::Renamed, Some("old_b.rs")),
                file("c.rs", FileStatus::Added, None),
                file("d.rs", FileStatus::TypeChanged, None),
            ]
        };
        let small = Diffed::of(files(), None, 4);
        assert!(!small.bulk);
        assert_eq!(small.files.len(), 4);
        let bulk = Diffed::of(files(), Some(7), 3);
        assert!(bulk.bulk);
        assert_eq!(bulk.rename_limit_needed, Some(7));
        let kept: Vec<String> = bulk.files.iter().map(|f| f.path.to_string()).collect();
        assert_eq!(kept, ["b.rs", "c.rs"]);
    }

    /// A pair whose files have no weight has no confidence, not 1.
    #[test]
    fn a_direction_with_no_weight_is_not_a_rule() {
        let mut pairs = HashMap::new();
        pairs.insert(
            1,
            PairStat {
                raw: 3,
                weight: 0.0,
                commits: [0; EVIDENCE],
            },
        );
        let miner = Miner {
            at_head: Default::default(),
            aliases: HashMap::new(),
            names: vec!["a.rs".into(), "b.rs".into()],
            file_raw: vec![3, 3],
            file_weight: vec![0.0, 0.0],
            pairs,
            total_weight: 1.0,
            commit_ids: vec![ObjectId::null(gix::hash::Kind::Sha1)],
            non_utf8: 0,
        };
        let options = Options {
            min_npmi: -1.0,
            min_confidence: 0.0,
            ..Options::default()
        };
        let rules = miner.rules(&options);
        assert!(rules.is_empty(), "{rules:?}");
    }
}
