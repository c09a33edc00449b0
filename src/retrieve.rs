//! Retrieval: rank the directives for a delegation query.
//!
//! *anchor* cut the corpus to 20 entries by metadata before looking at the
//! text, so an exact text match could be missed, and it took seconds a query.
//! Here every directive is scored, through an inverted index built once
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

use std::collections::HashMap;
use std::fmt;
use std::sync::OnceLock;

use serde::Serialize;
use unicode_segmentation::UnicodeSegmentation;

use crate::directive::{Directive, Priority};
use crate::pathglob::PathGlob;

mod block;
use block::{Block, Builder, Strs, View};

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

pub use block::Shared;

/// A new [`Corpus::token`].
fn next_token() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// What a query matches in a corpus ([`Corpus::matches`]): each document's
/// BM25 and how it matched, before the track records count.
#[derive(Debug, Clone)]
pub struct Matches {
    corpus: u64,
    query: Query,
    raw: Vec<f64>,
    flags: Vec<u8>,
    touched: Vec<u32>,
}

impl Matches {
    /// The best BM25 of a document matched.
    fn best(&self) -> f64 {
        self.touched
            .iter()
            .map(|&d| self.raw[d as usize])
            .fold(0.0, f64::max)
    }
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

/// Not a token id.
const NONE: u32 = u32::MAX;

// Flags of a document during one query.
const SEEN: u8 = 1;
const SYN: u8 = 2;
const TRIGGER: u8 = 4;
const ROLE: u8 = 8;
const PATH: u8 = 16;
const TOOL1: u8 = 32;
const TOOL2: u8 = 64;

impl Corpus {
    /// `docs[i]` is document `i`.
    pub fn build(docs: &[&Directive]) -> Corpus {
        let mut interner = Interner::default();
        let n = docs.len();
        // Token occurrences, bigram keys and synonym-source tokens of each
        // document, flat, in temporary (first-seen) token ids.
        let mut uni: Vec<u32> = Vec::new();
        let mut uni_start: Vec<usize> = Vec::with_capacity(n + 1);
        let mut bi: Vec<u64> = Vec::new();
        let mut bi_start: Vec<usize> = Vec::with_capacity(n + 1);
        let mut concept: Vec<u32> = Vec::new();
        let mut concept_start: Vec<usize> = Vec::with_capacity(n + 1);
        let mut triggers: Vec<[u32; 3]> = Vec::new();
        let mut trigger_tokens: Vec<u32> = Vec::new();
        let mut seg: Vec<u32> = Vec::new();
        uni_start.push(0);
        bi_start.push(0);
        concept_start.push(0);
        for (d, dir) in docs.iter().enumerate() {
            let mut add = |text: &str, kind: Field, interner: &mut Interner| {
                interner.tokens_of(text, &mut seg);
                uni.extend_from_slice(&seg);
                bi.extend(seg.windows(2).map(|w| pair(w[0], w[1])));
                match kind {
                    Field::Trigger => {
                        concept.extend_from_slice(&seg);
                        if seg.len() >= TRIGGER_RECALL_MIN_TOKENS {
                            triggers.push([
                                d as u32,
                                trigger_tokens.len() as u32,
                                seg.len() as u32,
                            ]);
                            trigger_tokens.extend_from_slice(&seg);
                        }
                    }
                    Field::Tag => concept.extend_from_slice(&seg),
                    Field::Text => {}
                }
            };
            add(&dir.lesson, Field::Text, &mut interner);
            // Tags before triggers: they are the first synonym sources.
            for t in &dir.tags {
                add(t, Field::Tag, &mut interner);
            }
            for t in &dir.triggers {
                add(t, Field::Trigger, &mut interner);
            }
            for list in [
                &dir.forbidden_actions,
                &dir.required_actions,
                &dir.verification_checks,
            ] {
                for t in list {
                    add(t, Field::Text, &mut interner);
                }
            }
            uni_start.push(uni.len());
            bi_start.push(bi.len());
            concept_start.push(concept.len());
        }

        // Sort the token table and renumber.
        let mut words = interner.words;
        let mut order: Vec<u32> = (0..words.len() as u32).collect();
        order.sort_unstable_by(|&a, &b| words[a as usize].cmp(&words[b as usize]));
        let mut remap = vec![0u32; words.len()];
        for (new, &old) in order.iter().enumerate() {
            remap[old as usize] = new as u32;
        }
        let tokens: Vec<String> = order
            .iter()
            .map(|&o| std::mem::take(&mut words[o as usize]))
            .collect();
        for t in uni
            .iter_mut()
            .chain(concept.iter_mut())
            .chain(trigger_tokens.iter_mut())
        {
            *t = remap[*t as usize];
        }
        for k in bi.iter_mut() {
            *k = pair(remap[(*k >> 32) as usize], remap[*k as u32 as usize]);
        }
        let n_uni = tokens.len();

        // Unigrams: term frequencies of each document, the forward index,
        // the lengths, then the postings in document order.
        let mut doc_terms: Vec<(u32, u32)> = Vec::with_capacity(uni.len());
        let mut doc_terms_start: Vec<usize> = Vec::with_capacity(n + 1);
        doc_terms_start.push(0);
        let mut fwd_start: Vec<u32> = Vec::with_capacity(n + 1);
        fwd_start.push(0);
        let mut fwd: Vec<u32> = Vec::new();
        let mut doc_len: Vec<u32> = Vec::with_capacity(n);
        let mut df = vec![0u32; n_uni];
        let mut scratch: Vec<u32> = Vec::new();
        for d in 0..n {
            let occurrences = &uni[uni_start[d]..uni_start[d + 1]];
            doc_len.push(occurrences.len() as u32);
            scratch.clear();
            scratch.extend_from_slice(occurrences);
            scratch.sort_unstable();
            for (term, tf) in runs(&scratch) {
                doc_terms.push((term, tf));
                fwd.push(term);
                df[term as usize] += 1;
            }
            fwd_start.push(fwd.len() as u32);
            doc_terms_start.push(doc_terms.len());
        }
        let total_len: u64 = doc_len.iter().map(|&l| u64::from(l)).sum();
        let avg_len = if n == 0 {
            0.0
        } else {
            total_len as f64 / n as f64
        };
        let mut post_start = offsets(&df);
        let mut cursor: Vec<u32> = post_start[..n_uni].to_vec();
        let mut post_doc = vec![0u32; doc_terms.len()];
        let mut post_tf = vec![0u32; doc_terms.len()];
        for d in 0..n {
            for &(term, tf) in &doc_terms[doc_terms_start[d]..doc_terms_start[d + 1]] {
                let at = &mut cursor[term as usize];
                post_doc[*at as usize] = d as u32;
                post_tf[*at as usize] = tf;
                *at += 1;
            }
        }

        // Bigrams: one sort of every (bigram, doc) occurrence gives the
        // sorted bigram table and, run by run, the postings with frequencies.
        let mut occurrences: Vec<u128> = Vec::with_capacity(bi.len());
        for d in 0..n {
            occurrences.extend(
                bi[bi_start[d]..bi_start[d + 1]]
                    .iter()
                    .map(|&k| (u128::from(k) << 32) | d as u128),
            );
        }
        drop(bi);
        occurrences.sort_unstable();
        let mut bigrams: Vec<[u32; 2]> = Vec::new();
        for by_key in occurrences.chunk_by(|a, b| a >> 32 == b >> 32) {
            bigrams.push([(by_key[0] >> 64) as u32, (by_key[0] >> 32) as u32]);
            for by_doc in by_key.chunk_by(|a, b| a == b) {
                post_doc.push(by_doc[0] as u32);
                post_tf.push(by_doc.len() as u32);
            }
            post_start.push(post_doc.len() as u32);
        }

        // Agent and tool scopes.
        let mut scopes: Vec<String> = docs
            .iter()
            .flat_map(|d| d.applies_to_agents.iter().chain(&d.applies_to_tools))
            .cloned()
            .collect();
        scopes.sort_unstable();
        scopes.dedup();
        let scope_postings = |pick: fn(&Directive) -> &Vec<String>| {
            let mut pairs: Vec<(u32, u32)> = Vec::new();
            let mut names: Vec<u32> = Vec::new();
            for (d, dir) in docs.iter().enumerate() {
                names.clear();
                names.extend(
                    pick(dir)
                        .iter()
                        .filter_map(|name| scopes.binary_search(name).ok())
                        .map(|s| s as u32),
                );
                names.sort_unstable();
                names.dedup();
                pairs.extend(names.iter().map(|&s| (s, d as u32)));
            }
            group(scopes.len(), &pairs)
        };
        let (agent_start, agent_doc) = scope_postings(|d| &d.applies_to_agents);
        let (tool_start, tool_doc) = scope_postings(|d| &d.applies_to_tools);

        let mut path_start = Vec::with_capacity(n + 1);
        path_start.push(0);
        let mut paths = Vec::new();
        for dir in docs {
            paths.extend(dir.paths.iter().cloned());
            path_start.push(paths.len() as u32);
        }

        triggers.sort_unstable_by_key(|&[doc, off, _]| (trigger_tokens[off as usize], doc, off));

        let synonyms = synonym_map(n_uni, &concept, &concept_start);

        let mut b = Builder::new();
        b.strings(block::IDS, docs.iter().map(|d| d.id.as_str()));
        b.array(
            block::PRIORITY,
            docs.iter()
                .map(|d| priority_rank(d.priority) as u32)
                .collect(),
        );
        b.strings(block::TOKENS, tokens.iter().map(String::as_str));
        b.array(block::BIGRAMS, bigrams.into_iter().flatten().collect());
        b.array(block::POST_START, post_start);
        b.array(block::POST_DOC, post_doc);
        b.array(block::POST_TF, post_tf);
        b.array(block::DOC_LEN, doc_len);
        let bits = avg_len.to_bits();
        b.array(block::AVG_LEN, vec![bits as u32, (bits >> 32) as u32]);
        b.array(block::FWD_START, fwd_start);
        b.array(block::FWD, fwd);
        b.strings(block::SCOPES, scopes.iter().map(String::as_str));
        b.array(block::AGENT_START, agent_start);
        b.array(block::AGENT_DOC, agent_doc);
        b.array(block::TOOL_START, tool_start);
        b.array(block::TOOL_DOC, tool_doc);
        b.array(block::PATH_START, path_start);
        b.strings(block::PATHS, paths.iter().map(String::as_str));
        b.array(block::TRIGGERS, triggers.into_iter().flatten().collect());
        b.array(block::TRIGGER_TOKENS, trigger_tokens);
        b.array(
            block::SYNONYMS,
            synonyms
                .into_iter()
                .flat_map(|k| [(k >> 32) as u32, k as u32])
                .collect(),
        );
        Corpus {
            token: next_token(),
            block: b.finish(),
            globs: GlobCache::default(),
        }
    }

    /// The corpus stored at `range` of `bytes` (as [`Corpus::encoded`]
    /// gave it), read in place; an error names what is damaged.
    pub fn load(bytes: Shared, range: std::ops::Range<usize>) -> Result<Corpus, String> {
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

    /// Scores every document for the query. Returns each document that
    /// matches it — through a query token or bigram, a synonym, a trigger, the
    /// role, a tool or a file — sorted by total descending, then id.
    /// Priority, cold start and outcome only adjust the score of a match.
    pub fn score(&self, q: &Query, track: &dyn Fn(usize) -> Track) -> Vec<Scored<'_>> {
        let mut out = self.finish(&self.matches(q), track);
        out.sort_unstable_by(rank_order);
        out
    }

    /// What `q` matches, before the directives' track records count: the
    /// larger part of [`Corpus::score`], which a caller can have done
    /// while the track records are being read.
    pub fn matches(&self, q: &Query) -> Matches {
        let v = self.view();
        let n = v.ids.len();
        let mut m = Matches {
            corpus: self.token,
            query: q.clone(),
            raw: Vec::new(),
            flags: Vec::new(),
            touched: Vec::new(),
        };
        if n == 0 {
            return m;
        }
        let n_uni = v.tokens.len();
        let mut qids: Vec<u32> = Vec::new();
        each_token(&q.text, |t| qids.push(v.token_id(t).unwrap_or(NONE)));
        let mut terms: Vec<u32> = qids.iter().copied().filter(|&t| t != NONE).collect();
        for w in qids.windows(2) {
            if w[0] != NONE
                && w[1] != NONE
                && let Ok(j) = v.bigrams.binary_search(&[w[0], w[1]])
            {
                terms.push((n_uni + j) as u32);
            }
        }
        terms.sort_unstable();
        terms.dedup();

        let mut raw = vec![0f64; n];
        let mut flags = vec![0u8; n];
        let mut touched: Vec<u32> = Vec::new();
        let mut mark = |d: u32, flag: u8, flags: &mut [u8]| {
            let f = &mut flags[d as usize];
            if *f & SEEN == 0 {
                touched.push(d);
            }
            *f |= SEEN | flag;
        };

        // BM25.
        let avg_len = if v.avg_len > 0.0 { v.avg_len } else { 1.0 };
        for &t in &terms {
            let (docs, tfs) = v.postings(t);
            let df = docs.len() as f64;
            let idf = libm::log(1.0 + (n as f64 - df + 0.5) / (df + 0.5));
            for (&d, &tf) in docs.iter().zip(tfs) {
                let tf = f64::from(tf);
                let len = f64::from(v.doc_len[d as usize]);
                let norm = BM25_K1 * (1.0 - BM25_B + BM25_B * len / avg_len);
                raw[d as usize] += idf * tf * (BM25_K1 + 1.0) / (tf + norm);
                mark(d, 0, &mut flags);
            }
        }

        // Synonyms of the query's tokens that are not query tokens themselves.
        let mut expansions: Vec<u32> = Vec::new();
        for &t in terms.iter().take_while(|&&t| (t as usize) < n_uni) {
            for &[_, s] in v.synonyms_of(t) {
                if terms.binary_search(&s).is_err() {
                    expansions.push(s);
                }
            }
        }
        expansions.sort_unstable();
        expansions.dedup();
        for &s in &expansions {
            for &d in v.postings(s).0 {
                mark(d, SYN, &mut flags);
            }
        }

        // Trigger recall: a long trigger found as is among the query's tokens.
        for (i, &t) in qids.iter().enumerate() {
            if t == NONE {
                continue;
            }
            let lo = v
                .triggers
                .partition_point(|tr| v.trigger_tokens[tr[1] as usize] < t);
            for &[doc, off, len] in &v.triggers[lo..] {
                let seq = &v.trigger_tokens[off as usize..(off + len) as usize];
                if seq[0] != t {
                    break;
                }
                if qids[i..].starts_with(seq) {
                    mark(doc, TRIGGER, &mut flags);
                }
            }
        }

        // Role and tools (scope names are lowercase).
        if let Some(role) = &q.role
            && let Some(s) = v.scopes.find(&role.trim().to_lowercase())
        {
            for &d in csr(v.agent_start, v.agent_doc, s) {
                mark(d, ROLE, &mut flags);
            }
        }
        let mut tools: Vec<String> = q.tools.iter().map(|t| t.trim().to_lowercase()).collect();
        tools.sort_unstable();
        tools.dedup();
        for tool in tools {
            if let Some(s) = v.scopes.find(&tool) {
                for &d in csr(v.tool_start, v.tool_doc, s) {
                    let more = if flags[d as usize] & TOOL1 != 0 {
                        TOOL2
                    } else {
                        TOOL1
                    };
                    mark(d, more, &mut flags);
                }
            }
        }

        // Files under the directive's path globs.
        if !q.files.is_empty() && !v.paths.is_empty() {
            let globs = self.globs.get(v.paths);
            for d in 0..n {
                let range = v.path_start[d] as usize..v.path_start[d + 1] as usize;
                let hit = globs[range]
                    .iter()
                    .flatten()
                    .any(|g| q.files.iter().any(|f| g.is_match(f)));
                if hit {
                    mark(d as u32, PATH, &mut flags);
                }
            }
        }

        m.raw = raw;
        m.flags = flags;
        m.touched = touched;
        m
    }

    /// [`Corpus::score`], unsorted, from what [`Corpus::matches`] found
    /// (in this corpus: matches found in another are found again).
    pub fn finish(&self, m: &Matches, track: &dyn Fn(usize) -> Track) -> Vec<Scored<'_>> {
        if m.corpus != self.token {
            return self.finish(&self.matches(&m.query), track);
        }
        let v = self.view();
        let best = m.best();
        m.touched
            .iter()
            .map(|&d| v.scored(d as usize, v.parts(m, best, d as usize, track)))
            .collect()
    }

    /// [`Corpus::select_with`] over every document `keep` keeps: those
    /// that match (as [`Corpus::finish`] scores them) and, after them, those
    /// that do not (a total of 0). Only what is picked gets a [`Scored`]:
    /// the others are ranked by their total alone (with 10,000 directives
    /// that matched, building, sorting and copying a record for each took
    /// longer than the rest). Returns the picks and the number of
    /// candidates.
    pub fn pick(
        &self,
        m: &Matches,
        track: &dyn Fn(usize) -> Track,
        keep: &dyn Fn(usize) -> bool,
        k: usize,
        lambda: f64,
        is_critical: &dyn Fn(usize) -> bool,
    ) -> (Vec<Scored<'_>>, usize) {
        if m.corpus != self.token {
            return self.pick(&self.matches(&m.query), track, keep, k, lambda, is_critical);
        }
        let v = self.view();
        let best = m.best();
        // A document that matches nothing scores 0 in every part.
        let parts = |d: usize| {
            if m.flags.get(d).is_some_and(|f| f & SEEN != 0) {
                v.parts(m, best, d, track)
            } else {
                Parts::default()
            }
        };
        let candidates: Vec<Candidate> = (0..v.ids.len())
            .filter(|&d| keep(d))
            .map(|d| {
                let p = parts(d);
                Candidate {
                    total: p.total(),
                    doc: d as u32,
                    critical: is_critical(d) && v.matches(d, &p),
                }
            })
            .collect();
        let count = candidates.len();
        let picked = v.select(candidates, k, lambda, &|d| v.scored(d, parts(d)));
        (picked, count)
    }

    /// Picks up to `k` of `scored`: first the critical directives that match
    /// (by the text, a trigger, or the role, a tool or a file — not by
    /// priority alone), best first, counting toward `k`; then, among the best
    /// [`MMR_POOL`] others, repeatedly the one maximising
    /// `lambda * relevance - (1 - lambda) * max similarity to those picked`,
    /// where relevance is the total divided by the best total of the pool and
    /// similarity is the cosine of the documents' token sets. `lambda` is
    /// clamped to 0..1 ([`MMR_LAMBDA`] if not a number). Ties go to the higher
    /// total, then the smaller id.
    pub fn select<'a>(&self, scored: &[Scored<'a>], k: usize, lambda: f64) -> Vec<Scored<'a>> {
        let v = self.view();
        self.select_with(scored, k, lambda, &|doc| {
            v.priority(doc) == Priority::Critical
        })
    }

    /// As [`Corpus::select`], with the caller deciding which documents are
    /// critical (the effective priority: an escalated directive is critical
    /// whatever its file declares).
    pub fn select_with<'a>(
        &self,
        scored: &[Scored<'a>],
        k: usize,
        lambda: f64,
        is_critical: &dyn Fn(usize) -> bool,
    ) -> Vec<Scored<'a>> {
        let v = self.view();
        // The best-ranked entry of each document.
        let mut best: Vec<Option<&Scored<'a>>> = vec![None; v.ids.len()];
        for s in scored.iter().filter(|s| s.doc < v.ids.len()) {
            let slot = &mut best[s.doc];
            if slot.is_none_or(|b| rank_order(s, b).is_lt()) {
                *slot = Some(s);
            }
        }
        let candidates = best
            .iter()
            .flatten()
            .map(|s| Candidate {
                total: s.total,
                doc: s.doc as u32,
                critical: is_critical(s.doc) && v.matches(s.doc, &s.parts),
            })
            .collect();
        v.select(candidates, k, lambda, &|d| {
            best[d].cloned().unwrap_or_else(|| Scored {
                doc: d,
                id: "",
                total: 0.0,
                parts: Parts::default(),
            })
        })
    }
}

/// A document in the running for [`View::select`]: its total, and whether
/// it is a critical one that matches.
#[derive(Clone, Copy)]
struct Candidate {
    total: f64,
    doc: u32,
    critical: bool,
}

impl<'a> View<'a> {
    /// The parts of document `d`'s score, as [`Corpus::finish`] gives
    /// them, `best` being the best BM25 of `m`.
    fn parts(&self, m: &Matches, best: f64, d: usize, track: &dyn Fn(usize) -> Track) -> Parts {
        let f = m.flags[d];
        let raw = m.raw[d];
        let bm25 = if best > 0.0 { raw / best } else { 0.0 };
        let mut context = CONTEXT_PRIORITY[priority_rank(self.priority(d))];
        if f & ROLE != 0 {
            context += CONTEXT_ROLE;
        }
        let tool_hits = if f & TOOL2 != 0 {
            2.0
        } else if f & TOOL1 != 0 {
            1.0
        } else {
            0.0
        };
        context += (CONTEXT_TOOL * tool_hits).min(CONTEXT_TOOL_MAX);
        if f & PATH != 0 {
            context += CONTEXT_PATH;
        }
        let tr = track(d);
        Parts {
            bm25,
            context,
            cold_start: if tr.applied == 0 && tr.shown < COLD_START_MAX_SHOWN {
                COLD_START
            } else {
                0.0
            },
            trigger_recall: if f & TRIGGER != 0 {
                TRIGGER_RECALL
            } else {
                0.0
            },
            synonym: if f & SYN != 0 && raw == 0.0 {
                SYNONYM_BONUS
            } else {
                0.0
            },
            outcome: outcome(tr),
        }
    }

    /// Document `d` scored with `parts`.
    fn scored(&self, d: usize, parts: Parts) -> Scored<'a> {
        Scored {
            doc: d,
            id: self.ids.get(d),
            total: parts.total(),
            parts,
        }
    }

    /// Picks up to `k` of `candidates` as [`Corpus::select`] says; `make`
    /// gives the [`Scored`] of a document picked.
    fn select<'s>(
        &self,
        candidates: Vec<Candidate>,
        k: usize,
        lambda: f64,
        make: &dyn Fn(usize) -> Scored<'s>,
    ) -> Vec<Scored<'s>> {
        let lambda = if lambda.is_nan() {
            MMR_LAMBDA
        } else {
            lambda.clamp(0.0, 1.0)
        };
        let order = |a: &Candidate, b: &Candidate| self.rank(a, b);
        let (mut critical, mut rest): (Vec<Candidate>, Vec<Candidate>) =
            candidates.into_iter().partition(|c| c.critical);
        // Only the best critical ones and the top of the rest are ranked: a
        // query over 10,000 directives need not sort them all.
        if k > 0 && critical.len() > k {
            critical.select_nth_unstable_by(k - 1, order);
        }
        critical.truncate(k);
        critical.sort_unstable_by(order);
        let mut picked: Vec<Scored<'s>> = critical.iter().map(|c| make(c.doc as usize)).collect();
        let pool = MMR_POOL.max(k);
        if rest.len() > pool {
            rest.select_nth_unstable_by(pool - 1, order);
            rest.truncate(pool);
        }
        rest.sort_unstable_by(order);
        if picked.len() >= k || rest.is_empty() {
            return picked;
        }
        let best = rest.iter().map(|c| c.total).fold(f64::MIN, f64::max);
        let relevance = |c: &Candidate| if best > 0.0 { c.total / best } else { 0.0 };
        let mut max_sim: Vec<f64> = rest
            .iter()
            .map(|c| {
                picked
                    .iter()
                    .map(|p| self.similarity(p.doc, c.doc as usize))
                    .fold(0.0, f64::max)
            })
            .collect();
        let mut taken = vec![false; rest.len()];
        while picked.len() < k {
            let mut choice: Option<(usize, f64)> = None;
            for (i, c) in rest.iter().enumerate() {
                if taken[i] {
                    continue;
                }
                let mmr = lambda * relevance(c) - (1.0 - lambda) * max_sim[i];
                if choice.is_none_or(|(_, m)| mmr > m) {
                    choice = Some((i, mmr));
                }
            }
            let Some((i, _)) = choice else { break };
            taken[i] = true;
            let doc = rest[i].doc as usize;
            picked.push(make(doc));
            for (j, c) in rest.iter().enumerate() {
                if !taken[j] {
                    max_sim[j] = max_sim[j].max(self.similarity(doc, c.doc as usize));
                }
            }
        }
        picked
    }

    /// [`rank_order`] for candidates: total descending, then id, then document.
    fn rank(&self, a: &Candidate, b: &Candidate) -> std::cmp::Ordering {
        b.total
            .total_cmp(&a.total)
            .then_with(|| {
                self.ids
                    .get(a.doc as usize)
                    .cmp(self.ids.get(b.doc as usize))
            })
            .then_with(|| a.doc.cmp(&b.doc))
    }

    /// Does document `doc`, scored `parts`, match the query by more than its priority bonus?
    fn matches(&self, doc: usize, parts: &Parts) -> bool {
        let own = CONTEXT_PRIORITY[priority_rank(self.priority(doc))];
        parts.bm25 > 0.0 || parts.trigger_recall > 0.0 || parts.context > own + 1e-9
    }

    /// Cosine similarity of the token sets of two documents.
    fn similarity(&self, a: usize, b: usize) -> f64 {
        let x = csr(self.fwd_start, self.fwd, a);
        let y = csr(self.fwd_start, self.fwd, b);
        if x.is_empty() || y.is_empty() {
            return 0.0;
        }
        common_sorted(x, y) as f64 / ((x.len() * y.len()) as f64).sqrt()
    }

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

/// Tokens of `text`: lowercase words by the Unicode word boundaries (UAX #29),
/// each CJK ideograph a token of its own, accents kept (`café` is not
/// `cafe`), without one-character ASCII tokens and a short English stop list.
/// Negations (`no`, `not`, `never`) are kept: they matter in a lesson.
pub fn tokenize(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    each_token(text, |t| out.push(t.to_owned()));
    out
}

fn each_token(text: &str, mut f: impl FnMut(&str)) {
    let lower = text.to_lowercase();
    let mut emit = |t: &str| {
        if keep(t) {
            f(t)
        }
    };
    for word in lower.unicode_words() {
        if !word.chars().any(is_ideograph) {
            emit(word);
            continue;
        }
        let mut run: Option<usize> = None;
        for (i, c) in word.char_indices() {
            if is_ideograph(c) {
                if let Some(s) = run.take() {
                    emit(&word[s..i]);
                }
                emit(&word[i..i + c.len_utf8()]);
            } else if run.is_none() {
                run = Some(i);
            }
        }
        if let Some(s) = run {
            emit(&word[s..]);
        }
    }
}

fn keep(t: &str) -> bool {
    // A one-byte token is a single ASCII character.
    t.len() > 1 && !is_stop_word(t)
}

fn is_stop_word(t: &str) -> bool {
    matches!(
        t,
        "an" | "and"
            | "are"
            | "as"
            | "at"
            | "be"
            | "by"
            | "for"
            | "from"
            | "has"
            | "have"
            | "if"
            | "in"
            | "into"
            | "is"
            | "it"
            | "its"
            | "of"
            | "on"
            | "or"
            | "so"
            | "than"
            | "that"
            | "the"
            | "their"
            | "then"
            | "there"
            | "these"
            | "this"
            | "those"
            | "to"
            | "was"
            | "we"
            | "were"
            | "which"
            | "with"
            | "you"
            | "your"
    )
}

/// CJK unified ideographs (with extensions A to H) and compatibility ideographs.
fn is_ideograph(c: char) -> bool {
    matches!(
        c as u32,
        0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0x20000..=0x2FA1F | 0x30000..=0x323AF
    )
}

fn pair(a: u32, b: u32) -> u64 {
    (u64::from(a) << 32) | u64::from(b)
}

/// The priority of document `doc`, from the ranks of [`priority_rank`].
fn priority_of(ranks: &[u32], doc: usize) -> Priority {
    match ranks.get(doc) {
        Some(3) => Priority::Critical,
        Some(2) => Priority::High,
        Some(1) => Priority::Medium,
        _ => Priority::Low,
    }
}

fn priority_rank(p: Priority) -> usize {
    match p {
        Priority::Low => 0,
        Priority::Medium => 1,
        Priority::High => 2,
        Priority::Critical => 3,
    }
}

fn outcome(t: Track) -> f64 {
    let (a, v) = (t.applied as f64, t.violated as f64);
    OUTCOME_MAX * (a - v) / (a + v + OUTCOME_PRIOR)
}

/// Total descending, then id, then document number.
/// How many values two ascending lists without duplicates share: one merge.
pub(crate) fn common_sorted<T: Ord>(x: &[T], y: &[T]) -> usize {
    let (mut i, mut j, mut common) = (0, 0, 0);
    while i < x.len() && j < y.len() {
        match x[i].cmp(&y[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                common += 1;
                i += 1;
                j += 1;
            }
        }
    }
    common
}

fn rank_order(a: &Scored, b: &Scored) -> std::cmp::Ordering {
    b.total
        .total_cmp(&a.total)
        .then_with(|| a.id.cmp(b.id))
        .then_with(|| a.doc.cmp(&b.doc))
}

/// Runs of equal values in a sorted slice, as (value, count).
fn runs(sorted: &[u32]) -> impl Iterator<Item = (u32, u32)> + '_ {
    sorted
        .chunk_by(|a, b| a == b)
        .map(|run| (run[0], run.len() as u32))
}

/// Prefix sums of `counts`: offsets with one more entry than `counts`.
fn offsets(counts: &[u32]) -> Vec<u32> {
    let mut start = Vec::with_capacity(counts.len() + 1);
    let mut at = 0u32;
    start.push(0);
    for &c in counts {
        at += c;
        start.push(at);
    }
    start
}

/// Groups `(key, value)` pairs (values ascending within a key) by key.
fn group(n_keys: usize, pairs: &[(u32, u32)]) -> (Vec<u32>, Vec<u32>) {
    let mut counts = vec![0u32; n_keys];
    for &(k, _) in pairs {
        counts[k as usize] += 1;
    }
    let start = offsets(&counts);
    let mut cursor = start[..n_keys].to_vec();
    let mut values = vec![0u32; pairs.len()];
    for &(k, v) in pairs {
        values[cursor[k as usize] as usize] = v;
        cursor[k as usize] += 1;
    }
    (start, values)
}

fn csr<'a>(start: &[u32], values: &'a [u32], key: usize) -> &'a [u32] {
    &values[start[key] as usize..start[key + 1] as usize]
}

/// The synonym map: pairs of tag and trigger tokens that appear together in
/// at least [`SYNONYM_MIN_COOCCUR`] directives with a Jaccard index of at
/// least [`SYNONYM_MIN_JACCARD`], best first (Jaccard, then count, then
/// token ids), each token taking at most [`SYNONYMS_PER_TOKEN`], at most
/// [`SYNONYM_MAX_PAIRS`] pairs in all. Returned both ways, sorted.
fn synonym_map(n_tokens: usize, concept: &[u32], concept_start: &[usize]) -> Vec<u64> {
    let mut df = vec![0u32; n_tokens];
    let mut pairs: Vec<u64> = Vec::new();
    let mut set: Vec<u32> = Vec::new();
    for w in concept_start.windows(2) {
        set.clear();
        for &t in &concept[w[0]..w[1]] {
            if set.len() == SYNONYM_TOKENS_PER_DOC {
                break;
            }
            if !set.contains(&t) {
                set.push(t);
            }
        }
        set.sort_unstable();
        for (i, &a) in set.iter().enumerate() {
            df[a as usize] += 1;
            for &b in &set[i + 1..] {
                pairs.push(pair(a, b));
            }
        }
    }
    pairs.sort_unstable();
    let mut candidates: Vec<(f64, u32, u64)> = pairs
        .chunk_by(|x, y| x == y)
        .filter_map(|run| {
            let count = run.len() as u32;
            if count < SYNONYM_MIN_COOCCUR {
                return None;
            }
            let key = run[0];
            let (a, b) = ((key >> 32) as usize, key as u32 as usize);
            let jaccard = f64::from(count) / f64::from(df[a] + df[b] - count);
            (jaccard >= SYNONYM_MIN_JACCARD).then_some((jaccard, count, key))
        })
        .collect();
    candidates.sort_by(|x, y| {
        y.0.total_cmp(&x.0)
            .then_with(|| y.1.cmp(&x.1))
            .then_with(|| x.2.cmp(&y.2))
    });
    let mut degree: HashMap<u32, usize> = HashMap::new();
    let mut out: Vec<u64> = Vec::new();
    for (_, _, key) in candidates {
        if out.len() / 2 >= SYNONYM_MAX_PAIRS {
            break;
        }
        let (a, b) = ((key >> 32) as u32, key as u32);
        if degree.get(&a).copied().unwrap_or(0) >= SYNONYMS_PER_TOKEN
            || degree.get(&b).copied().unwrap_or(0) >= SYNONYMS_PER_TOKEN
        {
            continue;
        }
        *degree.entry(a).or_default() += 1;
        *degree.entry(b).or_default() += 1;
        out.push(pair(a, b));
        out.push(pair(b, a));
    }
    out.sort_unstable();
    out
}

#[derive(Clone, Copy)]
enum Field {
    Text,
    Tag,
    Trigger,
}

/// Token table under construction: ids in order of first appearance.
#[derive(Default)]
struct Interner {
    ids: HashMap<String, u32>,
    words: Vec<String>,
}

impl Interner {
    fn tokens_of(&mut self, text: &str, out: &mut Vec<u32>) {
        out.clear();
        each_token(text, |t| {
            let id = match self.ids.get(t) {
                Some(&id) => id,
                None => {
                    let id = self.words.len() as u32;
                    self.words.push(t.to_owned());
                    self.ids.insert(t.to_owned(), id);
                    id
                }
            };
            out.push(id);
        });
    }
}

/// The corpus's path globs, parsed on first use. A cache, not state: it is
/// not serialised and never makes two corpora unequal.
#[derive(Clone, Default)]
struct GlobCache(OnceLock<Vec<Option<PathGlob>>>);

impl GlobCache {
    /// One entry for each of `paths`; `None` for a glob that does not parse.
    fn get(&self, paths: Strs<'_>) -> &[Option<PathGlob>] {
        self.0
            .get_or_init(|| paths.iter().map(|p| PathGlob::parse(p).ok()).collect())
    }
}

impl PartialEq for GlobCache {
    fn eq(&self, _: &GlobCache) -> bool {
        true
    }
}

impl fmt::Debug for GlobCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("GlobCache")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn dir(id: &str, lesson: &str) -> Directive {
        Directive::new(id, lesson)
    }

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    fn fresh(_: usize) -> Track {
        Track::default()
    }

    fn seasoned(_: usize) -> Track {
        Track {
            applied: 5,
            violated: 5,
            shown: 20,
        }
    }

    fn query(text: &str) -> Query {
        Query {
            text: text.into(),
            ..Query::default()
        }
    }

    /// The corpus of `docs`, stored and loaded back as the index does.
    fn corpus(docs: &[Directive]) -> Corpus {
        let refs: Vec<&Directive> = docs.iter().collect();
        stored(&Corpus::build(&refs))
    }

    /// `c` stored and loaded back.
    fn stored(c: &Corpus) -> Corpus {
        let bytes = c.encoded().into_owned();
        let len = bytes.len();
        Corpus::load(Arc::new(bytes), 0..len).expect("loads")
    }

    fn ids<'a>(scored: &[Scored<'a>]) -> Vec<&'a str> {
        scored.iter().map(|s| s.id).collect()
    }

    /// Only the critical entries and the top of the rest are ranked; with
    /// λ = 1 (relevance alone) the result must be what a full sort gives:
    /// the matching criticals first (at most k), then the best of the rest,
    /// each document once even when it is given twice.
    #[test]
    fn selection_agrees_with_a_full_sort() {
        let docs: Vec<Directive> = (0..600)
            .map(|i| {
                // The best matches come last, beyond the first MMR_POOL.
                let lead = if i >= 590 { "quickly " } else { "" };
                let mut d = dir(
                    &format!("d{i:03}"),
                    &format!(
                        "{lead}retry upload {} handler {}",
                        "cache ".repeat(i % 7),
                        i % 13
                    ),
                );
                if i % 97 == 0 {
                    d.priority = Priority::Critical;
                }
                d
            })
            .collect();
        let c = corpus(&docs);
        let mut scored = c.score(&query("quickly retry the cache upload handler"), &fresh);
        assert!(scored.len() > MMR_POOL, "{}", scored.len());
        // A second, worse entry for some documents.
        let extra: Vec<Scored> = scored
            .iter()
            .step_by(5)
            .map(|s| Scored {
                total: s.total / 2.0,
                ..s.clone()
            })
            .collect();
        scored.extend(extra);
        for k in [1, 3, 8, 20] {
            let mut all: Vec<&Scored> = scored.iter().collect();
            all.sort_by(|a, b| rank_order(a, b));
            let mut seen = std::collections::HashSet::new();
            all.retain(|s| seen.insert(s.doc));
            let (crit, rest): (Vec<&Scored>, Vec<&Scored>) = all.into_iter().partition(|s| {
                c.priority(s.doc) == Priority::Critical && c.view().matches(s.doc, &s.parts)
            });
            let want: Vec<&str> = crit
                .iter()
                .take(k)
                .chain(rest.iter())
                .take(k)
                .map(|s| s.id)
                .collect();
            assert_eq!(ids(&c.select(&scored, k, 1.0)), want, "k = {k}");
        }
    }

    #[test]
    fn exact_text_match_ranks_first_among_a_thousand() {
        let lesson = "Quote identifiers when building dynamic SQL for the reporting service";
        let mut docs: Vec<Directive> = (0..999)
            .map(|i| {
                let mut d = dir(
                    &format!("filler-{i:04}"),
                    &format!(
                        "Check the reporting service dashboard {} before building release {i}",
                        ["daily", "weekly", "hourly"][i % 3]
                    ),
                );
                d.confidence = 0.99;
                d.priority = Priority::High;
                d.applies_to_agents = strings(&["coder"]);
                d.tags = strings(&["reporting", "service"]);
                d
            })
            .collect();
        let mut target = dir("target", lesson);
        target.confidence = 0.1;
        target.priority = Priority::Low;
        docs.insert(517, target);
        let c = corpus(&docs);
        let q = Query {
            text: lesson.into(),
            role: Some("coder".into()),
            ..Query::default()
        };
        let got = c.score(&q, &seasoned);
        assert_eq!(got[0].id, "target", "{:?}", &got[..3]);
        assert_eq!(got[0].parts.bm25, 1.0);
        assert_eq!(got.len(), 1000);
        let picked = c.select(&got, 8, MMR_LAMBDA);
        assert_eq!(picked[0].id, "target");
        assert_eq!(picked.len(), 8);
    }

    #[test]
    fn one_word_query_ranks_by_relevance() {
        let docs = [
            dir(
                "some",
                "Retry the flaky integration suite once before reporting a failure upstream in the tracker",
            ),
            dir(
                "most",
                "Quarantine flaky tests: a flaky test hides real bugs",
            ),
            dir("none", "Keep the changelog sorted by release date"),
        ];
        let c = corpus(&docs);
        let got = c.score(&query("Flaky"), &seasoned);
        assert_eq!(ids(&got), ["most", "some"]);
        assert_eq!(got[0].parts.bm25, 1.0);
        assert!(got[1].parts.bm25 > 0.0 && got[1].parts.bm25 < 1.0);
        assert!(c.score(&query("unrelated"), &seasoned).is_empty());
        assert!(c.score(&query(""), &fresh).is_empty());
    }

    #[test]
    fn tokens_are_unicode_words() {
        assert_eq!(
            tokenize("Résumé parsing, CAFÉ & café!"),
            ["résumé", "parsing", "café", "café"]
        );
        assert_ne!(tokenize("résumé"), tokenize("resume"));
        assert_eq!(tokenize("数据库"), ["数", "据", "库"]);
        assert_eq!(
            tokenize("用Rust写数据库"),
            ["用", "rust", "写", "数", "据", "库"]
        );
        // One-character ASCII tokens and stop words go; negations stay.
        assert_eq!(
            tokenize("Do not use a x in the loop"),
            ["do", "not", "use", "loop"]
        );
        assert_eq!(tokenize("é 1 ü"), ["é", "ü"]);

        let docs = [
            dir("accent", "Store the résumé as UTF-8 without normalising it"),
            dir("plain", "Resume the interrupted upload from the last chunk"),
            dir("cjk", "迁移数据库之前先备份 the production data"),
        ];
        let c = corpus(&docs);
        assert_eq!(ids(&c.score(&query("résumé"), &seasoned)), ["accent"]);
        assert_eq!(ids(&c.score(&query("resume"), &seasoned)), ["plain"]);
        assert_eq!(ids(&c.score(&query("数据库"), &seasoned)), ["cjk"]);
        assert_eq!(ids(&c.score(&query("库"), &seasoned)), ["cjk"]);
    }

    #[test]
    fn bigrams_favour_the_phrase() {
        let docs = [
            dir(
                "phrase",
                "Close the connection pool on shutdown of the worker",
            ),
            dir(
                "apart",
                "Pool the workers; close each connection on shutdown",
            ),
        ];
        let c = corpus(&docs);
        let got = c.score(&query("connection pool"), &seasoned);
        assert_eq!(ids(&got), ["phrase", "apart"]);
        assert!(got[1].parts.bm25 < 1.0);
    }

    #[test]
    fn trigger_recall_needs_the_whole_trigger_in_order() {
        let mut d = dir(
            "rollback",
            "Write the down migration together with the up migration",
        );
        d.triggers = strings(&["database migration rollback", "schema"]);
        let other = dir(
            "other",
            "Keep the release notes short and link the pull request",
        );
        let c = corpus(&[d, other]);
        let got = c.score(
            &query("Plan the database migration rollback for Friday"),
            &seasoned,
        );
        assert_eq!(got[0].id, "rollback");
        assert_eq!(got[0].parts.trigger_recall, TRIGGER_RECALL);
        let got = c.score(&query("rollback the database migration"), &seasoned);
        assert_eq!(got[0].parts.trigger_recall, 0.0);
        // A short trigger never gives recall, only BM25.
        let got = c.score(&query("schema"), &seasoned);
        assert_eq!(got[0].parts.trigger_recall, 0.0);
        assert_eq!(got[0].parts.bm25, 1.0);
    }

    #[test]
    fn cold_start_and_outcome() {
        let c = corpus(&[dir("new", "Pin the toolchain version in CI")]);
        let q = query("toolchain");
        let part = |t: Track| c.score(&q, &move |_| t)[0].parts.clone();
        assert_eq!(part(Track::default()).cold_start, COLD_START);
        let shown_twice = Track {
            shown: 2,
            ..Track::default()
        };
        assert_eq!(part(shown_twice).cold_start, COLD_START);
        let shown_thrice = Track {
            shown: 3,
            ..Track::default()
        };
        assert_eq!(part(shown_thrice).cold_start, 0.0);
        let applied = Track {
            applied: 1,
            shown: 1,
            ..Track::default()
        };
        let p = part(applied);
        assert_eq!(p.cold_start, 0.0);
        assert!((p.outcome - 0.1 / 3.0).abs() < 1e-12);
        let violated = Track {
            applied: 0,
            violated: 2,
            shown: 5,
        };
        assert!((part(violated).outcome + 0.05).abs() < 1e-12);
        let many = Track {
            applied: 1_000_000,
            violated: 0,
            shown: 1_000_000,
        };
        assert!(part(many).outcome < OUTCOME_MAX);
        // Cold start alone never surfaces a directive.
        assert!(c.score(&query("nothing"), &fresh).is_empty());
    }

    #[test]
    fn context_bonuses() {
        let mut d = dir(
            "scoped",
            "Run the formatter before committing generated code",
        );
        d.applies_to_agents = strings(&["coder", "docs"]);
        d.applies_to_tools = strings(&["cargo", "rustfmt", "git"]);
        d.paths = strings(&["src/**/*.rs"]);
        d.priority = Priority::High;
        let c = corpus(&[
            d,
            dir("other", "Ask the reviewer before force-pushing a branch"),
        ]);
        let q = Query {
            text: String::new(),
            role: Some("coder".into()),
            tools: strings(&["git", "cargo", "rustfmt", "cargo"]),
            files: strings(&["src/cli/main.rs"]),
        };
        let got = c.score(&q, &seasoned);
        assert_eq!(ids(&got), ["scoped"]);
        let want = CONTEXT_ROLE + CONTEXT_TOOL_MAX + CONTEXT_PATH + CONTEXT_PRIORITY[2];
        assert!((got[0].parts.context - want).abs() < 1e-12);
        // A tool alone surfaces it; a file outside its globs does not.
        let q = Query {
            tools: strings(&["git"]),
            ..Query::default()
        };
        assert!((c.score(&q, &seasoned)[0].parts.context - 0.16).abs() < 1e-12);
        let q = Query {
            files: strings(&["docs/readme.md"]),
            role: Some("tester".into()),
            ..Query::default()
        };
        assert!(c.score(&q, &seasoned).is_empty());
    }

    #[test]
    fn synonyms_expand_the_query() {
        let mut a = dir("pg-pool", "Size the connection pool below max_connections");
        a.tags = strings(&["postgres", "database"]);
        let mut b = dir("pg-index", "Create indexes concurrently on large tables");
        b.tags = strings(&["postgres", "database"]);
        let mut c = dir("pg-vacuum", "Schedule vacuum after bulk deletes");
        c.tags = strings(&["postgres"]);
        let d = dir("unrelated", "Keep the release notes short");
        let corpus = corpus(&[a, b, c, d]);
        assert_eq!(corpus.synonyms("database"), ["postgres"]);
        assert_eq!(corpus.synonyms("postgres"), ["database"]);
        assert!(corpus.synonyms("release").is_empty());
        let got = corpus.score(&query("database"), &seasoned);
        assert_eq!(ids(&got), ["pg-index", "pg-pool", "pg-vacuum"]);
        let vacuum = &got[2];
        assert_eq!(vacuum.parts.bm25, 0.0);
        assert_eq!(vacuum.parts.synonym, SYNONYM_BONUS);
        assert_eq!(got[0].parts.synonym, 0.0);
    }

    #[test]
    fn synonym_map_is_capped() {
        // Every directive shares the same ten tags: each token could pair
        // with nine others, but keeps four.
        let tags: Vec<String> = (0..10).map(|i| format!("tag{i}")).collect();
        let docs: Vec<Directive> = (0..5)
            .map(|i| {
                let mut d = dir(&format!("d{i}"), "A lesson long enough to pass");
                d.tags = tags.clone();
                d
            })
            .collect();
        let c = corpus(&docs);
        for t in &tags {
            assert_eq!(c.synonyms(t).len(), SYNONYMS_PER_TOKEN, "{t}");
        }
        assert_eq!(c.view().synonyms.len(), 2 * 10 * SYNONYMS_PER_TOKEN / 2);
    }

    #[test]
    fn mmr_prefers_diverse_entries() {
        let docs = [
            dir(
                "dup-a",
                "Invalidate the cache keys after every schema change",
            ),
            dir(
                "dup-b",
                "Invalidate the cache keys after each schema change",
            ),
            dir(
                "dup-c",
                "Always invalidate cache keys after a schema change",
            ),
            dir(
                "other",
                "Version the serialised format; old readers must fail loudly",
            ),
        ];
        let c = corpus(&docs);
        let got = c.score(
            &query("invalidate cache keys on a schema change and version the format"),
            &seasoned,
        );
        assert_eq!(got.len(), 4);
        assert_eq!(got[3].id, "other");
        let picked = c.select(&got, 2, 0.5);
        assert_eq!(ids(&picked), [got[0].id, "other"]);
        // Pure relevance keeps the score order.
        let picked = c.select(&got, 2, 1.0);
        assert_eq!(ids(&picked), ids(&got[..2]));
        assert!(c.select(&got, 0, 0.5).is_empty());
        assert_eq!(c.select(&got, 10, 0.5).len(), 4);
    }

    #[test]
    fn matching_criticals_are_pinned_and_count_toward_k() {
        let mut docs: Vec<Directive> = (0..5)
            .map(|i| {
                dir(
                    &format!("best-{i}"),
                    &format!("Sanitise shell arguments before spawning the runner, case {i}"),
                )
            })
            .collect();
        for i in 0..3 {
            let mut d = dir(
                &format!("crit-{i}"),
                &format!("Long unrelated prose about shell number {i} and much more text here"),
            );
            d.priority = Priority::Critical;
            docs.push(d);
        }
        // Critical, but matching by nothing but its priority: never returned.
        let mut idle = dir("crit-idle", "Rotate the signing keys every quarter");
        idle.priority = Priority::Critical;
        docs.push(idle);
        let c = corpus(&docs);
        let got = c.score(&query("sanitise shell arguments runner"), &seasoned);
        assert!(!ids(&got).contains(&"crit-idle"));
        assert!(got[0].id.starts_with("best-"));
        let picked = c.select(&got, 2, MMR_LAMBDA);
        assert_eq!(ids(&picked), ["crit-0", "crit-1"]);
        let picked = c.select(&got, 4, MMR_LAMBDA);
        assert_eq!(&ids(&picked)[..3], ["crit-0", "crit-1", "crit-2"]);
        assert!(picked[3].id.starts_with("best-"));
    }

    #[test]
    fn deterministic_and_serialisable() {
        let make = || {
            let mut docs = Vec::new();
            for i in 0..50 {
                let mut d = dir(
                    &format!("d{i:02}"),
                    &format!("Lesson {} about topic {} and area {}", i % 7, i % 5, i % 3),
                );
                d.tags = vec![format!("t{}", i % 4), format!("u{}", i % 6)];
                d.triggers = vec![format!("when touching area {} code", i % 3)];
                docs.push(d);
            }
            corpus(&docs)
        };
        let (a, b) = (make(), make());
        assert_eq!(a, b);
        let q = query("when touching area 1 code about topic 3 t1");
        let first = a.score(&q, &fresh);
        assert_eq!(first, b.score(&q, &fresh));
        assert_eq!(a.select(&first, 8, 0.5), b.select(&first, 8, 0.5));
        let back = stored(&a);
        assert_eq!(back, a);
        assert_eq!(back.score(&q, &fresh), first);
        let mut shuffled = first.clone();
        shuffled.reverse();
        assert_eq!(a.select(&shuffled, 8, 0.5), a.select(&first, 8, 0.5));
    }

    #[test]
    fn stored_block_read_in_place_or_copied() {
        let mut docs = Vec::new();
        for i in 0..20 {
            let mut d = dir(
                &format!("d{i:02}"),
                &format!("Réglez l'erreur {i} 設定 in parser"),
            );
            d.tags = vec![format!("t{}", i % 3)];
            d.triggers = vec![format!("when parsing field {}", i % 4)];
            d.applies_to_agents = vec!["coder".into()];
            d.paths = vec![format!("src/m{i}/**")];
            docs.push(d);
        }
        let built = Corpus::build(&docs.iter().collect::<Vec<_>>());
        let bytes = built.encoded().into_owned();
        assert_eq!(bytes.len() % 4, 0);
        let q = Query {
            files: vec!["src/m3/x.rs".into()],
            ..query("when parsing field 2 erreur 設定")
        };
        let want = built.score(&q, &fresh);
        assert!(want.len() > 5);
        // Not aligned to a word: copied, and the same.
        let mut shifted = vec![0u8];
        shifted.extend_from_slice(&bytes);
        let len = shifted.len();
        let copied = Corpus::load(Arc::new(shifted), 1..len).expect("loads");
        assert_eq!(copied, built);
        assert_eq!(copied.score(&q, &fresh), want);
        assert_eq!(stored(&built).score(&q, &fresh), want);
        assert_eq!(copied.synonyms("t1"), built.synonyms("t1"));
    }

    #[test]
    fn damaged_block_is_an_error_or_harmless_never_a_panic() {
        let mut docs = Vec::new();
        for i in 0..6 {
            let mut d = dir(&format!("d{i}"), &format!("lesson {i} about the parser"));
            d.tags = vec!["parse".into(), format!("t{}", i % 2)];
            d.triggers = vec!["when the parser fails badly".into()];
            d.applies_to_agents = vec!["coder".into()];
            d.applies_to_tools = vec!["cargo".into()];
            d.paths = vec!["src/**".into()];
            docs.push(d);
        }
        let bytes = Corpus::build(&docs.iter().collect::<Vec<_>>())
            .encoded()
            .into_owned();
        let q = Query {
            role: Some("coder".into()),
            tools: vec!["cargo".into()],
            files: vec!["src/a.rs".into()],
            ..query("when the parser fails badly lesson 3 parse")
        };
        let mut errors = 0;
        for at in (0..bytes.len()).step_by(4) {
            for value in [u32::MAX, 0, 1, 7] {
                let mut damaged = bytes.clone();
                damaged[at..at + 4].copy_from_slice(&value.to_le_bytes());
                let len = damaged.len();
                match Corpus::load(Arc::new(damaged), 0..len) {
                    Err(_) => errors += 1,
                    Ok(c) => {
                        let scored = c.score(&q, &fresh);
                        c.select(&scored, 3, 0.5);
                        c.in_scope("coder", &["cargo".into()]);
                        for d in 0..c.len() {
                            c.id(d);
                            c.priority(d);
                        }
                    }
                }
            }
        }
        assert!(errors > 0);
        // Cut short anywhere.
        for len in 0..bytes.len() {
            assert!(
                Corpus::load(Arc::new(bytes.clone()), 0..len).is_err(),
                "{len}"
            );
        }
    }

    #[test]
    fn matches_found_in_a_replaced_corpus_are_found_again() {
        let old = corpus(&[dir("a", "retry the flaky network call")]);
        let new = corpus(&[
            dir("a", "close the file handle"),
            dir("b", "retry the flaky network call"),
        ]);
        let q = query("flaky network");
        let m = old.matches(&q);
        assert_eq!(ids(&old.finish(&m, &fresh)), ["a"]);
        // The same query, searched again in the corpus that replaced it.
        assert_eq!(ids(&new.finish(&m, &fresh)), ["b"]);
        assert_eq!(new.finish(&m, &fresh), new.score(&q, &fresh));
        // A clone is the same corpus.
        assert_eq!(ids(&old.clone().finish(&m, &fresh)), ["a"]);
    }

    #[test]
    fn pick_is_select_over_every_candidate() {
        let docs = synthetic(400);
        let c = corpus(&docs);
        let track = |d: usize| Track {
            applied: (d % 5) as u64,
            violated: u64::from(d.is_multiple_of(7)),
            shown: (d % 4) as u64,
        };
        for text in [
            docs[17].lesson.as_str(),
            docs[3].triggers[0].as_str(),
            "nothing matches this",
            "",
        ] {
            let q = Query {
                role: Some("coder".into()),
                tools: vec!["cargo".into()],
                ..query(text)
            };
            let m = c.matches(&q);
            let keep = |d: usize| d % 3 != 1;
            let critical = |d: usize| c.priority(d) == Priority::Critical || d.is_multiple_of(11);
            let mut scored: Vec<Scored> = c
                .finish(&m, &track)
                .into_iter()
                .filter(|s| keep(s.doc))
                .collect();
            let matched: Vec<usize> = scored.iter().map(|s| s.doc).collect();
            for d in (0..c.len()).filter(|&d| keep(d) && !matched.contains(&d)) {
                scored.push(Scored {
                    doc: d,
                    id: c.id(d),
                    total: 0.0,
                    parts: Parts::default(),
                });
            }
            for (k, lambda) in [(1, 0.5), (8, 0.5), (8, 0.0), (30, 1.0), (500, 0.3)] {
                let (picked, count) = c.pick(&m, &track, &keep, k, lambda, &critical);
                assert_eq!(count, scored.len());
                assert_eq!(
                    picked,
                    c.select_with(&scored, k, lambda, &critical),
                    "{text:?} k={k} lambda={lambda}"
                );
            }
        }
    }

    #[test]
    fn empty_corpus() {
        let c = Corpus::build(&[]);
        assert!(c.is_empty());
        assert!(c.score(&query("anything"), &fresh).is_empty());
        assert!(c.select(&[], 8, 0.5).is_empty());
    }

    /// A deterministic corpus of `n` directives for the timing check.
    fn synthetic(n: usize) -> Vec<Directive> {
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = move |m: usize| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((state >> 33) as usize) % m
        };
        let syllables = [
            "ka", "lo", "mi", "re", "tu", "sen", "dor", "vi", "pa", "qua",
        ];
        let words: Vec<String> = (0..4000)
            .map(|i| {
                let mut w = String::new();
                let mut x = i;
                for _ in 0..3 {
                    w.push_str(syllables[x % 10]);
                    x /= 10;
                }
                w.push_str(syllables[i % 7]);
                w
            })
            .collect();
        let roles = [
            "coder",
            "reviewer",
            "test_engineer",
            "sme",
            "docs",
            "designer",
        ];
        let tools = ["cargo", "git", "npm", "grep", "sed", "python", "make"];
        let phrase = |len: usize, next: &mut dyn FnMut(usize) -> usize| {
            (0..len)
                .map(|_| words[next(words.len()).min(next(words.len()))].as_str())
                .collect::<Vec<_>>()
                .join(" ")
        };
        // Fifty topics of eight tags each: tags and triggers co-occur within a topic.
        (0..n)
            .map(|i| {
                let topic = next(50);
                let tag = |next: &mut dyn FnMut(usize) -> usize| {
                    words[3000 + topic * 8 + next(8)].clone()
                };
                let len = 12 + next(14);
                let mut d = dir(&format!("d{i:05}"), &phrase(len, &mut next));
                d.tags = (0..3).map(|_| tag(&mut next)).collect();
                d.triggers = (0..2)
                    .map(|_| format!("{} {}", tag(&mut next), phrase(2 + next(2), &mut next)))
                    .collect();
                d.forbidden_actions = vec![phrase(5, &mut next)];
                d.required_actions = vec![phrase(5, &mut next)];
                d.applies_to_agents = vec![roles[next(roles.len())].to_string()];
                d.applies_to_tools = vec![tools[next(tools.len())].to_string()];
                d.priority = Priority::ALL[next(4)];
                d
            })
            .collect()
    }

    #[test]
    #[ignore = "timing helper: cargo test --release --lib retrieve -- --ignored --nocapture"]
    fn timing() {
        use std::time::Instant;
        let docs = synthetic(10_000);
        let refs: Vec<&Directive> = docs.iter().collect();
        let mut c = Corpus::default();
        let runs = 5;
        let t = Instant::now();
        for _ in 0..runs {
            c = Corpus::build(&refs);
        }
        let build = t.elapsed() / runs;
        let bytes: Shared = Arc::new(c.encoded().into_owned());
        let t = Instant::now();
        let back =
            Corpus::load(Arc::clone(&bytes), 0..bytes.as_ref().as_ref().len()).expect("loads");
        let load = t.elapsed();
        assert_eq!(back, c);
        let queries: Vec<Query> = (0..100)
            .map(|i| Query {
                text: (0..10)
                    .map(|j| {
                        docs[(i * 37 + j * 101) % docs.len()]
                            .lesson
                            .split(' ')
                            .nth(j % 5)
                    })
                    .map(|w| w.unwrap_or("x"))
                    .collect::<Vec<_>>()
                    .join(" "),
                role: Some("coder".into()),
                tools: vec!["cargo".into(), "git".into()],
                files: Vec::new(),
            })
            .collect();
        let track = |_: usize| Track::default();
        let t = Instant::now();
        let mut hits = 0;
        for q in &queries {
            hits += c.score(q, &track).len();
        }
        let score = t.elapsed() / queries.len() as u32;
        let scored = c.score(&queries[0], &track);
        let t = Instant::now();
        let picked = c.select(&scored, 8, MMR_LAMBDA);
        let select = t.elapsed();
        eprintln!(
            "10k directives: build {build:?}, {} bytes (load {load:?}), \
             score {score:?} a query ({} hits on average), select {select:?} ({} of {}), \
             {} tokens, {} bigrams, {} synonym pairs",
            bytes.as_ref().as_ref().len(),
            hits / queries.len(),
            picked.len(),
            scored.len(),
            c.view().tokens.len(),
            c.view().bigrams.len(),
            c.view().synonyms.len() / 2,
        );
    }
}
