//! Scoring: what a query matches in the corpus (BM25 over unigrams and
//! bigrams, synonyms, trigger recall, role, tools, files), then each match's
//! parts once the directives' track records are known.

use super::block::View;
use super::tokenise::each_token;
use super::{
    BM25_B, BM25_K1, COLD_START, COLD_START_MAX_SHOWN, CONTEXT_PATH, CONTEXT_PRIORITY,
    CONTEXT_ROLE, CONTEXT_TOOL, CONTEXT_TOOL_MAX, Corpus, OUTCOME_MAX, OUTCOME_PRIOR, Parts, Query,
    SYNONYM_BONUS, Scored, TRIGGER_RECALL, Track, csr, rank_order,
};
use crate::pathglob::PathGlob;

/// What a query matches in a corpus ([`Corpus::matches`]): each document's
/// BM25 and how it matched, before the track records count.
#[derive(Debug, Clone)]
pub struct Matches {
    /// The [`Corpus::token`] of the corpus searched.
    pub(super) corpus: u64,
    pub(super) query: Query,
    raw: Vec<f64>,
    pub(super) flags: Vec<u8>,
    touched: Vec<u32>,
}

impl Matches {
    /// The best BM25 of a document matched.
    pub(super) fn best(&self) -> f64 {
        self.touched
            .iter()
            .map(|&d| self.raw[d as usize])
            .fold(0.0, f64::max)
    }
}

/// Not a token id.
const NONE: u32 = u32::MAX;

// Flags of a document during one query.
pub(super) const SEEN: u8 = 1;
const SYN: u8 = 2;
const TRIGGER: u8 = 4;
const ROLE: u8 = 8;
const PATH: u8 = 16;
const TOOL1: u8 = 32;
const TOOL2: u8 = 64;

impl Corpus {
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
        let mut found = Matches {
            corpus: self.token,
            query: q.clone(),
            raw: vec![0f64; n],
            flags: vec![0u8; n],
            touched: Vec::new(),
        };
        if n > 0 {
            let (qids, terms) = query_terms(&v, &q.text);
            found.bm25(&v, &terms);
            found.synonyms(&v, &terms);
            found.triggers(&v, &qids);
            found.scopes(&v, q);
            if !q.files.is_empty() && !v.paths.is_empty() {
                found.files(&v, self.globs.get(v.paths), &q.files);
            }
        }
        found
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
}

/// The query's tokens as token ids ([`NONE`] for one the corpus lacks),
/// and the terms to look up: the known tokens and bigrams, sorted, once each.
fn query_terms(v: &View<'_>, text: &str) -> (Vec<u32>, Vec<u32>) {
    let n_uni = v.tokens.len();
    let mut qids: Vec<u32> = Vec::new();
    each_token(text, |t| qids.push(v.token_id(t).unwrap_or(NONE)));
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
    (qids, terms)
}

/// How [`Corpus::matches`] fills in each document's BM25 and flags, and
/// the documents matched, in the order first matched.
impl Matches {
    fn mark(&mut self, d: u32, flag: u8) {
        let f = &mut self.flags[d as usize];
        if *f & SEEN == 0 {
            self.touched.push(d);
        }
        *f |= SEEN | flag;
    }

    fn bm25(&mut self, v: &View<'_>, terms: &[u32]) {
        let n = v.ids.len();
        let avg_len = if v.avg_len > 0.0 { v.avg_len } else { 1.0 };
        for &t in terms {
            let (docs, tfs) = v.postings(t);
            let df = docs.len() as f64;
            let idf = libm::log(1.0 + (n as f64 - df + 0.5) / (df + 0.5));
            for (&d, &tf) in docs.iter().zip(tfs) {
                let tf = f64::from(tf);
                let len = f64::from(v.doc_len[d as usize]);
                let norm = BM25_K1 * (1.0 - BM25_B + BM25_B * len / avg_len);
                self.raw[d as usize] += idf * tf * (BM25_K1 + 1.0) / (tf + norm);
                self.mark(d, 0);
            }
        }
    }

    /// Synonyms of the query's tokens that are not query tokens themselves.
    fn synonyms(&mut self, v: &View<'_>, terms: &[u32]) {
        let n_uni = v.tokens.len();
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
                self.mark(d, SYN);
            }
        }
    }

    /// Trigger recall: a long trigger found as is among the query's tokens.
    fn triggers(&mut self, v: &View<'_>, qids: &[u32]) {
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
                    self.mark(doc, TRIGGER);
                }
            }
        }
    }

    /// Role and tools (scope names are lowercase).
    fn scopes(&mut self, v: &View<'_>, q: &Query) {
        if let Some(role) = &q.role
            && let Some(s) = v.scopes.find(&role.trim().to_lowercase())
        {
            for &d in csr(v.agent_start, v.agent_doc, s) {
                self.mark(d, ROLE);
            }
        }
        let mut tools: Vec<String> = q.tools.iter().map(|t| t.trim().to_lowercase()).collect();
        tools.sort_unstable();
        tools.dedup();
        for tool in tools {
            if let Some(s) = v.scopes.find(&tool) {
                for &d in csr(v.tool_start, v.tool_doc, s) {
                    let more = if self.flags[d as usize] & TOOL1 != 0 {
                        TOOL2
                    } else {
                        TOOL1
                    };
                    self.mark(d, more);
                }
            }
        }
    }

    /// Files under the directive's path globs (`globs`, one for each of `v.paths`).
    fn files(&mut self, v: &View<'_>, globs: &[Option<PathGlob>], files: &[String]) {
        for d in 0..v.ids.len() {
            let range = v.path_start[d] as usize..v.path_start[d + 1] as usize;
            let hit = globs[range]
                .iter()
                .flatten()
                .any(|g| files.iter().any(|f| g.is_match(f)));
            if hit {
                self.mark(d as u32, PATH);
            }
        }
    }
}

impl<'a> View<'a> {
    /// The parts of document `d`'s score, as [`Corpus::finish`] gives
    /// them, `best` being the best BM25 of `m`.
    pub(super) fn parts(
        &self,
        m: &Matches,
        best: f64,
        d: usize,
        track: &dyn Fn(usize) -> Track,
    ) -> Parts {
        let f = m.flags[d];
        let raw = m.raw[d];
        let bm25 = if best > 0.0 { raw / best } else { 0.0 };
        let mut context = CONTEXT_PRIORITY[self.priority(d) as usize];
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
    pub(super) fn scored(&self, d: usize, parts: Parts) -> Scored<'a> {
        Scored {
            doc: d,
            id: self.ids.get(d),
            total: parts.total(),
            parts,
        }
    }
}

/// The outcome part: applied minus violated over all outcomes, a prior of
/// [`OUTCOME_PRIOR`] keeping a directive with few records near 0.
fn outcome(t: Track) -> f64 {
    let (a, v) = (t.applied as f64, t.violated as f64);
    OUTCOME_MAX * (a - v) / (a + v + OUTCOME_PRIOR)
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;

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
        let track = |applied, violated, shown| Track {
            applied,
            violated,
            shown,
        };
        assert_eq!(part(Track::default()).cold_start, COLD_START);
        assert_eq!(part(track(0, 0, 2)).cold_start, COLD_START);
        assert_eq!(part(track(0, 0, 3)).cold_start, 0.0);
        let p = part(track(1, 0, 1));
        assert_eq!(p.cold_start, 0.0);
        assert!((p.outcome - 0.1 / 3.0).abs() < 1e-12);
        assert!((part(track(0, 2, 5)).outcome + 0.05).abs() < 1e-12);
        assert!(part(track(1_000_000, 0, 1_000_000)).outcome < OUTCOME_MAX);
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
}
