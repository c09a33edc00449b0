//! Retrieval: rank the directives for a delegation query.
//!
//! Every directive is scored (none is cut by metadata first, so an exact
//! text match is never missed), through an inverted index built once
//! ([`Corpus::build`]) and stored by the caller with its on-disk index:
//!
//! - BM25 over the unigrams and bigrams of the lesson, triggers, tags,
//!   forbidden and required actions and verification checks, normalised to
//!   0..1 per query (the best document scores 1);
//! - the directive's context: the query role among its agents, query tools
//!   among its tools, a query file under its path globs, and its priority;
//! - a cold-start bonus, so a new lesson gets a fair shot;
//! - trigger recall: a trigger of three or more tokens found as is in the task;
//! - synonym expansion from a map of tag and trigger tokens that co-occur
//!   across entries, built with the corpus (not a tracked file);
//! - an outcome signal from how often the directive was applied or violated.
//!
//! [`Corpus::select`] then picks the few to show: the critical directives that
//! match come first, and the rest is filled by maximal marginal relevance
//! (MMR), so near-duplicates do not crowd out the other lessons.
//!
//! Everything is deterministic: the same corpus and query give the same list.
//! The module does no I/O.
//!
//! One file per stage: `tokenise` cuts text into tokens, `corpus` builds
//! the corpus, laid out by `block` as it is stored, `score` finds what a
//! query matches and scores it, and `select` picks what to show.

use std::fmt;
use std::sync::OnceLock;

use serde::Serialize;

use crate::directive::Priority;
use crate::pathglob::PathGlob;

mod block;
mod calls;
pub use calls::CallDoc;
mod corpus;
mod score;
mod select;
#[cfg(test)]
mod synthetic;
mod tokenise;

#[cfg(test)]
use crate::directive::Directive;

use block::{Block, Strs, View};
pub use block::{DamagedCorpus, Shared};
pub use score::Matches;
pub(crate) use select::common_sorted;
pub use tokenise::tokenize;

/// BM25 term-frequency saturation.
pub const BM25_K1: f64 = 1.2;
/// BM25 length normalisation (0: none, 1: full).
pub const BM25_B: f64 = 0.75;
/// Context bonus when the query role is one of the directive's `applies_to_agents`.
pub const CONTEXT_ROLE: f64 = 0.2;
/// Context bonus for each query tool among the directive's `applies_to_tools`...
pub const CONTEXT_TOOL: f64 = 0.1;
/// ...up to this much in all.
pub const CONTEXT_TOOL_MAX: f64 = 0.2;
/// Context bonus when a query file matches one of the directive's `paths` globs.
pub const CONTEXT_PATH: f64 = 0.1;
/// Context bonus by priority (low, medium, high, critical), given only to a
/// directive that matches the query some other way: it orders otherwise
/// similar matches, it never surfaces a directive on its own.
pub const CONTEXT_PRIORITY: [f64; 4] = [0.0, 0.03, 0.06, 0.1];
/// Bonus for a directive never applied and shown fewer than [`COLD_START_MAX_SHOWN`] times.
pub const COLD_START: f64 = 0.08;
/// See [`COLD_START`].
pub const COLD_START_MAX_SHOWN: u64 = 3;
/// Bonus when one of the directive's triggers of at least
/// [`TRIGGER_RECALL_MIN_TOKENS`] tokens is a contiguous run of the query's tokens.
pub const TRIGGER_RECALL: f64 = 0.3;
/// See [`TRIGGER_RECALL`].
pub const TRIGGER_RECALL_MIN_TOKENS: usize = 3;
/// Bonus for a directive that matches the query only through a synonym of a query token.
pub const SYNONYM_BONUS: f64 = 0.15;
/// At most this many synonyms a token.
pub const SYNONYMS_PER_TOKEN: usize = 4;
/// At most this many synonym pairs in a corpus.
pub const SYNONYM_MAX_PAIRS: usize = 500;
/// Two tokens are synonym candidates when they appear together in the tags and
/// triggers of at least this many directives...
pub const SYNONYM_MIN_COOCCUR: u32 = 2;
/// ...and their Jaccard index (directives with both / directives with either)
/// is at least this, so a token found everywhere pairs with nothing.
pub const SYNONYM_MIN_JACCARD: f64 = 0.2;
/// Only the first this-many distinct tag and trigger tokens of a directive
/// (tags first) count for synonyms, which bounds the pairs a directive adds.
pub const SYNONYM_TOKENS_PER_DOC: usize = 24;
/// Outcome signal: `OUTCOME_MAX * (applied - violated) / (applied + violated + OUTCOME_PRIOR)`,
/// so it stays strictly between -0.1 and +0.1 and needs a few outcomes to move far
/// (one application: +0.033, ten: +0.083; two violations: -0.05).
pub const OUTCOME_MAX: f64 = 0.1;
/// See [`OUTCOME_MAX`].
pub const OUTCOME_PRIOR: f64 = 2.0;
/// The MMR relevance-diversity trade-off used when the caller has no setting.
pub const MMR_LAMBDA: f64 = 0.5;
/// MMR looks at the best this-many candidates (or `k`, if larger).
pub const MMR_POOL: usize = 200;

/// Per-directive signals from the event log (filled by the caller from the fold).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Track {
    pub applied: u64,
    pub violated: u64,
    pub shown: u64,
}

/// A delegation query.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Query {
    /// The task text; may be empty.
    pub text: String,
    /// The delegate's role, matched against `applies_to_agents`.
    pub role: Option<String>,
    /// The tools the delegate is expected to use, matched against `applies_to_tools`.
    pub tools: Vec<String>,
    /// Repository-relative paths the task touches, matched against `paths`.
    pub files: Vec<String>,
}

/// One ranked directive.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Scored<'a> {
    /// The document number in the corpus (the index in the slice given to [`Corpus::build`]).
    pub doc: usize,
    /// Borrowed from the corpus: a query over 10,000 directives scores most of them.
    pub id: &'a str,
    /// The sum of the parts.
    pub total: f64,
    pub parts: Parts,
}

/// Every part of a score, so `git swarm search` can show them.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Parts {
    /// BM25 divided by the best document's BM25 for this query: 0..1.
    pub bm25: f64,
    /// Role, tool, path and priority bonuses.
    pub context: f64,
    pub cold_start: f64,
    pub trigger_recall: f64,
    pub synonym: f64,
    /// Between -[`OUTCOME_MAX`] and +[`OUTCOME_MAX`].
    pub outcome: f64,
}

impl Parts {
    /// The score: the sum of the parts.
    pub fn total(&self) -> f64 {
        self.bm25
            + self.context
            + self.cold_start
            + self.trigger_recall
            + self.synonym
            + self.outcome
    }
}

/// The searchable corpus.
///
/// Terms are unigrams (ids `0..tokens.len()`, the index in the sorted token
/// table) and bigrams (id `tokens.len() + j` for the `j`-th key of the sorted
/// bigram table). Lists keyed by term, scope name or document are stored
/// flat, with a `*_start` array of offsets (CSR), in one block of words
/// ([`block`]) that a corpus loaded from the index reads in place.
#[derive(Clone)]
pub struct Corpus {
    /// Which corpus this is, for [`Matches`]: unique to a build or a load.
    token: u64,
    block: Block,
    /// The parsed `paths`, on the first query with files.
    globs: GlobCache,
}

/// A new [`Corpus::token`].
fn next_token() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

impl Default for Corpus {
    fn default() -> Corpus {
        Corpus::build(&[])
    }
}

impl PartialEq for Corpus {
    fn eq(&self, other: &Corpus) -> bool {
        self.encoded() == other.encoded()
    }
}

impl fmt::Debug for Corpus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Corpus")
            .field("documents", &self.len())
            .field("bytes", &self.encoded().len())
            .finish_non_exhaustive()
    }
}

impl Corpus {
    /// The corpus stored at `range` of `bytes` (as [`Corpus::encoded`]
    /// gave it), read in place; an error names what is damaged.
    pub fn load(bytes: Shared, range: std::ops::Range<usize>) -> Result<Corpus, DamagedCorpus> {
        Ok(Corpus {
            token: next_token(),
            block: Block::load(bytes, range)?,
            globs: GlobCache::default(),
        })
    }

    /// The corpus as stored, for [`Corpus::load`].
    pub fn encoded(&self) -> std::borrow::Cow<'_, [u8]> {
        self.block.encoded()
    }

    /// The corpus's arrays, borrowed (empty for a block whose pairs and
    /// triples do not come out whole, which a built or loaded one never is).
    fn view(&self) -> View<'_> {
        self.block.view().unwrap_or_else(View::empty)
    }

    pub fn len(&self) -> usize {
        self.block.strs(block::IDS).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The directive id of document `doc` (empty past the last one).
    pub fn id(&self, doc: usize) -> &str {
        self.block.strs(block::IDS).get(doc)
    }

    /// The directive ids, by document number.
    pub fn ids(&self) -> impl ExactSizeIterator<Item = &str> + Clone + '_ {
        let ids = self.block.strs(block::IDS);
        (0..ids.len()).map(move |d| ids.get(d))
    }

    /// The priority of document `doc` (low past the last one).
    pub fn priority(&self, doc: usize) -> Priority {
        priority_of(self.block.array(block::PRIORITY), doc)
    }

    /// The git blob id of document `doc`'s file, when the corpus was built knowing it.
    pub fn blob(&self, doc: usize) -> Option<crate::reviewed::Blob> {
        let words = self.block.array(block::BLOBS).get(doc * 5..doc * 5 + 5)?;
        let mut blob = [0u8; 20];
        for (out, w) in blob.chunks_exact_mut(4).zip(words) {
            out.copy_from_slice(&w.to_le_bytes());
        }
        (blob != [0; 20]).then_some(blob)
    }

    /// Which documents are meant for `role` or `tools`: those with no agent
    /// and no tool scope, and those with the role among their
    /// `applies_to_agents` or one of the tools among their `applies_to_tools`.
    pub fn in_scope(&self, role: &str, tools: &[String]) -> Vec<bool> {
        let v = self.view();
        let n = v.ids.len();
        let mut targeted = vec![false; n];
        for &d in v.agent_doc.iter().chain(v.tool_doc) {
            targeted[d as usize] = true;
        }
        let mut scope: Vec<bool> = targeted.iter().map(|t| !t).collect();
        let mut mark = |start: &[u32], docs: &[u32], name: &str| {
            if let Some(s) = v.scopes.find(name) {
                for &d in csr(start, docs, s) {
                    scope[d as usize] = true;
                }
            }
        };
        mark(v.agent_start, v.agent_doc, &role.trim().to_lowercase());
        for t in tools {
            mark(v.tool_start, v.tool_doc, &t.trim().to_lowercase());
        }
        scope
    }

    /// The synonyms the corpus learnt for `token` (a token as [`tokenize`] gives it).
    pub fn synonyms(&self, token: &str) -> Vec<&str> {
        let v = self.view();
        match v.token_id(token) {
            Some(t) => v
                .synonyms_of(t)
                .iter()
                .map(|&[_, s]| v.tokens.get(s as usize))
                .collect(),
            None => Vec::new(),
        }
    }
}

impl<'a> View<'a> {
    fn token_id(&self, token: &str) -> Option<u32> {
        self.tokens.find(token).map(|i| i as u32)
    }

    /// Documents and term frequencies of term `t`.
    fn postings(&self, t: u32) -> (&'a [u32], &'a [u32]) {
        let range = self.post_start[t as usize] as usize..self.post_start[t as usize + 1] as usize;
        (&self.post_doc[range.clone()], &self.post_tf[range])
    }

    /// Synonym pairs (`[t, synonym]`) of token `t`.
    fn synonyms_of(&self, t: u32) -> &'a [[u32; 2]] {
        let lo = self.synonyms.partition_point(|&[k, _]| k < t);
        let hi = self.synonyms.partition_point(|&[k, _]| k <= t);
        &self.synonyms[lo..hi]
    }

    /// The priority of document `doc` (low past the last one).
    fn priority(&self, doc: usize) -> Priority {
        priority_of(self.priority, doc)
    }
}

/// Total descending, then id, then document number.
fn rank_order(a: &Scored, b: &Scored) -> std::cmp::Ordering {
    b.total
        .total_cmp(&a.total)
        .then_with(|| a.id.cmp(b.id))
        .then_with(|| a.doc.cmp(&b.doc))
}

/// The priority of document `doc`, stored as its rank (`Priority as u32`,
/// low to critical); low past the last one.
fn priority_of(ranks: &[u32], doc: usize) -> Priority {
    ranks
        .get(doc)
        .and_then(|&r| Priority::ALL.get(r as usize))
        .copied()
        .unwrap_or(Priority::Low)
}

/// The values of `key` in a CSR list: `values[start[key]..start[key + 1]]`.
fn csr<'a>(start: &[u32], values: &'a [u32], key: usize) -> &'a [u32] {
    &values[start[key] as usize..start[key + 1] as usize]
}

/// The corpus's path globs, parsed on first use: a cache, not serialised.
#[derive(Clone, Default)]
struct GlobCache(OnceLock<Vec<Option<PathGlob>>>);

impl GlobCache {
    /// One entry for each of `paths`; `None` for a glob that does not parse.
    fn get(&self, paths: Strs<'_>) -> &[Option<PathGlob>] {
        self.0
            .get_or_init(|| paths.iter().map(|p| PathGlob::parse(p).ok()).collect())
    }
}

/// Directives, queries and corpora for the tests of every stage.
#[cfg(test)]
mod testing {
    use std::sync::Arc;

    pub(super) use super::synthetic::synthetic;
    pub(super) use super::*;
    pub(super) use crate::directive::Directive;

    pub(super) fn dir(id: &str, lesson: &str) -> Directive {
        Directive::new(id, lesson)
    }

    pub(super) fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    pub(super) fn fresh(_: usize) -> Track {
        Track::default()
    }

    pub(super) fn seasoned(_: usize) -> Track {
        Track {
            applied: 5,
            violated: 5,
            shown: 20,
        }
    }

    pub(super) fn query(text: &str) -> Query {
        Query {
            text: text.into(),
            ..Query::default()
        }
    }

    /// The corpus of `docs`, stored and loaded back as the index does.
    pub(super) fn corpus(docs: &[Directive]) -> Corpus {
        let refs: Vec<&Directive> = docs.iter().collect();
        stored(&Corpus::build(&refs))
    }

    /// `c` stored and loaded back.
    pub(super) fn stored(c: &Corpus) -> Corpus {
        let bytes = c.encoded().into_owned();
        let len = bytes.len();
        Corpus::load(Arc::new(bytes), 0..len).expect("loads")
    }

    pub(super) fn ids<'a>(scored: &[Scored<'a>]) -> Vec<&'a str> {
        scored.iter().map(|s| s.id).collect()
    }
}
