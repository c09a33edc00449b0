//! Selection: the few directives to show. The critical ones that match
//! come first; the rest is filled by maximal marginal relevance (MMR), so
//! that near-duplicates do not crowd out the other lessons.

use super::block::View;
use super::rank_order;
use super::score::{Matches, SEEN};
use super::{CONTEXT_PRIORITY, Corpus, MMR_LAMBDA, MMR_POOL, Parts, Scored, Track, csr};
use crate::directive::Priority;

impl Corpus {
    /// [`Corpus::select_with`] over every document `keep` keeps: those
    /// that match (as [`Corpus::finish`] scores them), then those that do
    /// not (a total of 0). Only what is picked gets a [`Scored`], which for
    /// 10,000 matches is most of the time saved. Returns the picks and the
    /// number of candidates.
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

impl View<'_> {
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
        let own = CONTEXT_PRIORITY[self.priority(doc) as usize];
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
}

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

#[cfg(test)]
mod tests {
    use super::super::testing::*;

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
}
