//! Which finding a validator's false positive names.

use serde::Serialize;
use unicode_segmentation::UnicodeSegmentation;

use super::label::{LABEL_ONLY, bare_label, finding_label, label_key};
use super::{Observation, STOP_WORDS, normalise, tokens};

/// Fewest words a false positive has to name a finding.
pub const MIN_FALSE_POSITIVE_WORDS: usize = 3;
/// Fewest of those words that are not [`STOP_WORDS`].
pub const MIN_FALSE_POSITIVE_CONTENT_WORDS: usize = 2;

/// Where a false positive was found among observations.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Match {
    /// The false positive's words are the finding's, or a run of them in
    /// order (or the finding's words are a run of the false positive's).
    Phrase { index: usize },
    /// The best token overlap, at or above the threshold.
    Overlap { index: usize, score: f64 },
    /// Several findings match equally well: none is chosen.
    Ambiguous { indices: Vec<usize> },
    /// The false positive is only a finding's id (`S3`, `Finding 3`), and
    /// the finding with that id is this one.
    Label { index: usize },
    /// Too few words (or only stop words) to name a finding.
    TooShort,
    /// Nothing matched; the best overlap seen.
    None { best: f64 },
}

/// Locate a validator's false-positive text among a deliberation's
/// observations. Texts are compared as the words of their [`normalise`]d
/// forms (Unicode word boundaries), never as raw substrings: `e` is not
/// part of `tenant`.
///
/// 1. A false positive of fewer than [`MIN_FALSE_POSITIVE_WORDS`] words, or
///    fewer than [`MIN_FALSE_POSITIVE_CONTENT_WORDS`] that are not stop
///    words, is [`Match::TooShort`]: it cannot name a finding.
/// 2. The observation with exactly the same words is the match.
/// 3. Else the observations holding the false positive's words as a run
///    of whole words, in order, or whose words are such a run of the false
///    positive's (a quote with a comment added): one is a
///    [`Match::Phrase`], several are [`Match::Ambiguous`].
/// 4. Else the observations with the highest token [`jaccard`](super::jaccard), if that is
///    at least `threshold` and above 0: one is a [`Match::Overlap`],
///    several tied are [`Match::Ambiguous`].
/// 5. Else [`Match::None`] with the best score seen.
///
/// A finding label the validator quoted (`Finding 3: …`, as [`extract`](fn@super::extract)
/// reads them) is not part of the text.
pub fn find_finding(observations: &[Observation], false_positive: &str, threshold: f64) -> Match {
    Finder::new(observations).find(false_positive, threshold)
}

/// The observations of one deliberation, to look up many false positives
/// in: each observation's words and tokens are computed once, when a false
/// positive first needs them.
pub struct Finder<'a> {
    observations: &'a [Observation],
    /// Per observation: its words in order, and its [`tokens`].
    words: std::cell::OnceCell<Vec<(Vec<&'a str>, Vec<String>)>>,
}

/// Is `needle` a run of consecutive items of `hay`?
fn holds_run(hay: &[&str], needle: &[&str]) -> bool {
    !needle.is_empty() && hay.windows(needle.len()).any(|w| w == needle)
}

impl<'a> Finder<'a> {
    pub fn new(observations: &'a [Observation]) -> Finder<'a> {
        Finder {
            observations,
            words: std::cell::OnceCell::new(),
        }
    }

    /// [`find_finding`] of `false_positive`.
    pub fn find(&self, false_positive: &str, threshold: f64) -> Match {
        if LABEL_ONLY.is_match(false_positive.trim()) {
            let key = label_key(false_positive);
            let named: Vec<usize> = (0..self.observations.len())
                .filter(|&i| {
                    self.observations[i]
                        .label
                        .as_deref()
                        .is_some_and(|l| bare_label(l) == bare_label(&key))
                })
                .collect();
            match named[..] {
                [index] => return Match::Label { index },
                [] => {}
                _ => return Match::Ambiguous { indices: named },
            }
        }
        let mut fp = normalise(false_positive);
        if let Some(rest) = finding_label(&fp) {
            fp = normalise(rest);
        }
        let fp_words: Vec<&str> = fp.unicode_words().collect();
        let content = fp_words.iter().filter(|w| !STOP_WORDS.contains(w)).count();
        if fp_words.len() < MIN_FALSE_POSITIVE_WORDS || content < MIN_FALSE_POSITIVE_CONTENT_WORDS {
            return Match::TooShort;
        }
        let all = self.words.get_or_init(|| {
            self.observations
                .iter()
                .map(|o| {
                    (
                        o.normalised.unicode_words().collect(),
                        tokens(&o.normalised),
                    )
                })
                .collect()
        });
        let one_of = |indices: Vec<usize>, found: &dyn Fn(usize) -> Match| match indices[..] {
            [] => None,
            [index] => Some(found(index)),
            _ => Some(Match::Ambiguous { indices }),
        };
        let exact: Vec<usize> = (0..all.len()).filter(|&i| all[i].0 == fp_words).collect();
        if let Some(m) = one_of(exact, &|index| Match::Phrase { index }) {
            return m;
        }
        let phrase: Vec<usize> = (0..all.len())
            .filter(|&i| holds_run(&all[i].0, &fp_words) || holds_run(&fp_words, &all[i].0))
            .collect();
        if let Some(m) = one_of(phrase, &|index| Match::Phrase { index }) {
            return m;
        }
        let fp_tokens = tokens(&fp);
        let scores: Vec<f64> = all
            .iter()
            .map(|(_, t)| jaccard_sorted(&fp_tokens, t))
            .collect();
        let best = scores.iter().copied().fold(0.0, f64::max);
        if best <= 0.0 || best < threshold {
            return Match::None { best };
        }
        let tied: Vec<usize> = (0..scores.len()).filter(|&i| scores[i] == best).collect();
        one_of(tied, &|index| Match::Overlap { index, score: best }).unwrap_or(Match::None { best })
    }
}

/// [`jaccard`](super::jaccard) of two lists that are sorted and without duplicates, as
/// [`tokens`] returns them: one merge, no sets.
fn jaccard_sorted(a: &[String], b: &[String]) -> f64 {
    let common = crate::retrieve::common_sorted(a, b);
    let union = a.len() + b.len() - common;
    if union == 0 {
        return 0.0;
    }
    common as f64 / union as f64
}

#[cfg(test)]
mod tests {
    use super::super::{extract, jaccard};
    use super::*;

    // --- find_finding -------------------------------------------------------

    fn observations(md: &str) -> Vec<Observation> {
        extract(md).expect("valid test input")
    }

    const DELIBERATION: &str = "\
- The cache key must include the tenant id.
- Retries are unbounded when the server returns 503.
- The lock is held across an await point in the handler.
";

    #[test]
    fn find_by_phrase_either_way() {
        let obs = observations(DELIBERATION);
        for (fp, index) in [
            ("retries are UNBOUNDED", 1),
            (
                "**Finding**: the lock is held across an await point in the handler. It is fine.",
                2,
            ),
            ("The cache key must include the tenant id", 0),
        ] {
            assert_eq!(find_finding(&obs, fp, 0.5), Match::Phrase { index }, "{fp}");
        }
    }

    /// A phrase is whole words: a letter or a piece of a word is not.
    #[test]
    fn find_matches_whole_words_only() {
        let obs = observations(DELIBERATION);
        for short in [
            "e",
            "tenant",
            "cache key",
            "the the the",
            "of the a",
            "",
            " **.** ",
        ] {
            assert_eq!(find_finding(&obs, short, 0.0), Match::TooShort, "{short:?}");
        }
        // Pieces of words are not the words.
        assert_eq!(
            find_finding(&obs, "ache key must inclu", 0.9),
            Match::None { best: 2.0 / 8.0 }
        );
        // Words out of order are an overlap at best.
        assert_eq!(
            find_finding(&obs, "unbounded are retries", 0.9),
            Match::None { best: 2.0 / 6.0 }
        );
    }

    /// The same words are the match even when a longer finding holds them.
    #[test]
    fn find_prefers_the_finding_with_the_same_words() {
        let obs = observations(
            "- The cache key must include the tenant id.\n- The cache key must include the tenant id and the region.\n",
        );
        for (fp, index) in [
            ("the cache key must include the tenant id", 0),
            ("the tenant id and the region", 1),
        ] {
            assert_eq!(find_finding(&obs, fp, 0.5), Match::Phrase { index }, "{fp}");
        }
        assert_eq!(
            find_finding(&obs, "must include the tenant id", 0.5),
            Match::Ambiguous {
                indices: vec![0, 1]
            }
        );
    }

    /// A finding's id (`S3`) is kept as its label and left out of its
    /// text; a false positive that is only an id names that finding.
    #[test]
    fn a_false_positive_written_as_the_finding_id_matches_it() {
        let md = "\
- **S1**: The cache key must include the tenant id.
- S2: Retrying without a backoff floods the API.
- [S3] The migration drops the users index.
**S4** — The lock is taken twice in the handler.

Finding #5: The parser accepts a trailing comma.
";
        let obs = observations(md);
        let labels: Vec<Option<&str>> = obs.iter().map(|o| o.label.as_deref()).collect();
        assert_eq!(
            labels,
            [
                Some("s1"),
                Some("s2"),
                Some("s3"),
                Some("s4"),
                Some("finding 5")
            ]
        );
        assert_eq!(obs[2].text, "The migration drops the users index.");
        for (fp, index) in [
            ("S3", 2),
            ("s3", 2),
            ("**S1**", 0),
            ("[S2]", 1),
            ("S4:", 3),
            ("Finding 5", 4),
            ("finding #5", 4),
        ] {
            assert_eq!(find_finding(&obs, fp, 0.5), Match::Label { index }, "{fp}");
        }
        // An id no finding has is too short to name one.
        assert_eq!(find_finding(&obs, "S9", 0.5), Match::TooShort);
        // Two findings with one id: neither is chosen.
        let obs = observations(
            "- S1: The cache key must include the tenant id.\n- S1: The lock is taken twice in the handler.\n",
        );
        assert_eq!(
            find_finding(&obs, "S1", 0.5),
            Match::Ambiguous {
                indices: vec![0, 1]
            }
        );
        // Words that merely look like ids stay in the text.
        let obs = observations(
            "- HTTP2 frames must be acknowledged before the window grows.\n- CVE-2024-1234 is fixed by the upgrade of the parser crate.\n",
        );
        assert!(obs.iter().all(|o| o.label.is_none()), "{obs:?}");
    }

    /// A validator quoting the finding with its label (`Finding 3: …`)
    /// names the same finding: the label is not part of the text.
    #[test]
    fn find_a_false_positive_quoted_with_its_label() {
        let obs = observations(
            "- Finding 3: the retry loop must stop after five attempts\n  see src/net.rs:40\n",
        );
        for fp in [
            "Finding 3: the retry loop must stop after five attempts",
            "**Issue #3** - The retry loop must stop",
        ] {
            assert_eq!(
                find_finding(&obs, fp, 0.9),
                Match::Phrase { index: 0 },
                "{fp}"
            );
        }
    }

    #[test]
    fn sorted_jaccard_agrees_with_the_set_one() {
        let lists = [
            tokens("the cache key must include the tenant id"),
            tokens("tenant id and cache"),
            tokens(""),
            tokens("completely different words here"),
        ];
        for a in &lists {
            for b in &lists {
                assert_eq!(jaccard_sorted(a, b), jaccard(a, b), "{a:?} {b:?}");
            }
        }
    }

    #[test]
    fn find_by_token_overlap() {
        let obs = observations(DELIBERATION);
        let m = find_finding(&obs, "the handler holds the lock across await", 0.3);
        let Match::Overlap { index, score } = m else {
            panic!("{m:?}");
        };
        assert_eq!(index, 2);
        // {lock, across, await, handler} of {handler, holds, lock, across, await, held, point}
        assert_eq!(score, 4.0 / 7.0);
    }

    #[test]
    fn find_ties_are_ambiguous() {
        let obs = observations("- alpha beta gamma delta\n- alpha beta epsilon zeta");
        assert_eq!(
            find_finding(&obs, "alpha omega beta", 0.1),
            Match::Ambiguous {
                indices: vec![0, 1]
            }
        );
        assert_eq!(
            find_finding(&obs, "alpha beta omega gamma", 0.1),
            Match::Overlap {
                index: 0,
                score: 3.0 / 5.0
            }
        );
    }

    #[test]
    fn find_nothing() {
        let obs = observations(DELIBERATION);
        let m = find_finding(&obs, "the handler holds the lock across await", 0.9);
        assert_eq!(m, Match::None { best: 4.0 / 7.0 });
        assert_eq!(
            find_finding(&obs, "completely unrelated words", 0.1),
            Match::None { best: 0.0 }
        );
        assert_eq!(
            find_finding(&[], "anything at all", 0.0),
            Match::None { best: 0.0 }
        );
    }
}
