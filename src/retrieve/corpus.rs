//! Building the corpus: the directives' text cut into tokens, then the
//! inverted index, the scopes, the path globs, the triggers and the synonym
//! map, laid out in one block ([`super::block`]).

use std::collections::HashMap;

use super::block::{self, Builder};
use super::tokenise::each_token;
use super::{
    Corpus, GlobCache, SYNONYM_MAX_PAIRS, SYNONYM_MIN_COOCCUR, SYNONYM_MIN_JACCARD,
    SYNONYM_TOKENS_PER_DOC, SYNONYMS_PER_TOKEN, TRIGGER_RECALL_MIN_TOKENS, next_token,
};
use crate::directive::Directive;

impl Corpus {
    /// `docs[i]` is document `i`.
    pub fn build(docs: &[&Directive]) -> Corpus {
        Corpus::build_with_blobs(docs, &[])
    }

    /// [`Corpus::build`], with the git blob id of each document's file
    /// (`blobs[i]` for document `i`; missing ones are not known).
    pub fn build_with_blobs(
        docs: &[&Directive],
        blobs: &[Option<crate::reviewed::Blob>],
    ) -> Corpus {
        let (words, mut text) = Text::of(docs);
        let tokens = text.sort_tokens(words);
        let (mut postings, lengths) = unigrams(&text, tokens.len());
        let bigrams = add_bigrams(std::mem::take(&mut text.bi), &text.bi_start, &mut postings);
        let scopes = Scopes::of(docs);
        // By first token: a query finds the triggers starting with each of its tokens.
        text.triggers
            .sort_unstable_by_key(|&[doc, off, _]| (text.trigger_tokens[off as usize], doc, off));
        let synonyms = synonym_map(tokens.len(), &text.concept, &text.concept_start);

        let mut b = Builder::new();
        b.strings(block::IDS, docs.iter().map(|d| d.id.as_str()));
        b.array(
            block::PRIORITY,
            docs.iter().map(|d| d.priority as u32).collect(),
        );
        b.strings(block::TOKENS, tokens.iter().map(String::as_str));
        b.array(block::BIGRAMS, bigrams.into_iter().flatten().collect());
        b.array(block::POST_START, postings.start);
        b.array(block::POST_DOC, postings.doc);
        b.array(block::POST_TF, postings.tf);
        b.array(block::DOC_LEN, lengths.len);
        let bits = lengths.avg.to_bits();
        b.array(block::AVG_LEN, vec![bits as u32, (bits >> 32) as u32]);
        b.array(block::FWD_START, lengths.fwd_start);
        b.array(block::FWD, lengths.fwd);
        b.strings(block::SCOPES, scopes.names.iter().map(String::as_str));
        b.array(block::AGENT_START, scopes.agent_start);
        b.array(block::AGENT_DOC, scopes.agent_doc);
        b.array(block::TOOL_START, scopes.tool_start);
        b.array(block::TOOL_DOC, scopes.tool_doc);
        let mut path_start = Vec::with_capacity(docs.len() + 1);
        path_start.push(0);
        let mut paths = Vec::new();
        for dir in docs {
            paths.extend(dir.paths.iter().map(String::as_str));
            path_start.push(paths.len() as u32);
        }
        b.array(block::PATH_START, path_start);
        b.strings(block::PATHS, paths);
        b.array(
            block::TRIGGERS,
            text.triggers.into_iter().flatten().collect(),
        );
        b.array(block::TRIGGER_TOKENS, text.trigger_tokens);
        b.array(
            block::SYNONYMS,
            synonyms
                .into_iter()
                .flat_map(|k| [(k >> 32) as u32, k as u32])
                .collect(),
        );
        let mut words = Vec::with_capacity(docs.len() * 5);
        for doc in 0..docs.len() {
            let blob = blobs.get(doc).copied().flatten().unwrap_or_default();
            words.extend(
                blob.chunks_exact(4)
                    .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]])),
            );
        }
        b.array(block::BLOBS, words);
        b.array(
            block::ENFORCEMENT,
            docs.iter().map(|d| d.enforcement as u32).collect(),
        );
        b.strings(block::LESSONS, docs.iter().map(|d| d.lesson.as_str()));
        // The tool-call predicates, kept as written: parsed by the hook
        // only for the documents a call can match.
        let call_preds: Vec<Vec<&str>> = docs.iter().map(|d| call_predicates(d)).collect();
        let mut call_start = Vec::with_capacity(docs.len() + 1);
        call_start.push(0);
        for preds in &call_preds {
            call_start.push(call_start[call_start.len() - 1] + preds.len() as u32);
        }
        b.array(block::CALL_START, call_start);
        b.strings(block::CALL_PREDS, call_preds.iter().flatten().copied());
        let lits: Vec<String> = (call_preds.iter().flatten())
            .map(|p| {
                let regex = crate::predicate::split_kind(p).map_or("", |(_, r)| r);
                crate::predicate::required_literals(regex)
            })
            .collect();
        b.strings(block::CALL_LITS, lits.iter().map(String::as_str));
        b.array(
            block::UNTOOLED_CALL,
            (docs.iter().zip(&call_preds).enumerate())
                .filter(|(_, (d, preds))| {
                    d.applies_to_tools.is_empty() && (!d.paths.is_empty() || !preds.is_empty())
                })
                .map(|(doc, _)| doc as u32)
                .collect(),
        );
        let mut agent_start = Vec::with_capacity(docs.len() + 1);
        agent_start.push(0);
        let mut agents = Vec::new();
        for d in docs {
            let mut mine: Vec<u32> = (d.applies_to_agents.iter())
                .filter_map(|a| scopes.names.binary_search(a).ok())
                .map(|s| s as u32)
                .collect();
            mine.sort_unstable();
            mine.dedup();
            agents.extend(mine);
            agent_start.push(agents.len() as u32);
        }
        b.array(block::DOC_AGENT_START, agent_start);
        b.array(block::DOC_AGENTS, agents);
        Corpus {
            token: next_token(),
            block: b.finish(),
            globs: GlobCache::default(),
        }
    }
}

/// The predicates of `d` checked before a tool call (`command:`…), as written.
fn call_predicates(d: &Directive) -> Vec<&str> {
    (d.verify.iter())
        .filter(|v| {
            crate::predicate::split_kind(v)
                .is_some_and(|(kind, _)| crate::predicate::TOOL_CALL_KINDS.contains(&kind))
        })
        .map(String::as_str)
        // As many as the gate lets a directive have: a file over the limit
        // (which fails the gate) costs a hook no more than one within it.
        .take(crate::directive::limits::LIST_MAX)
        .collect()
}

/// The tokens of every document, flat, each list with the offsets where a
/// document's part starts (`n + 1` of them).
#[derive(Default)]
struct Text {
    /// Token occurrences of the lesson and the lists.
    uni: Vec<u32>,
    uni_start: Vec<usize>,
    /// Bigram keys ([`pair`]) of adjacent tokens within a field.
    bi: Vec<u64>,
    bi_start: Vec<usize>,
    /// Tag and trigger tokens: where synonyms are learnt from.
    concept: Vec<u32>,
    concept_start: Vec<usize>,
    /// `[doc, offset, len]` of each trigger long enough for recall, its
    /// tokens at `trigger_tokens[offset..offset + len]`.
    triggers: Vec<[u32; 3]>,
    trigger_tokens: Vec<u32>,
}

#[derive(Clone, Copy)]
enum Field {
    Text,
    Tag,
    Trigger,
}

impl Text {
    /// The documents' tokens, in ids of first appearance, and the words of those ids.
    fn of(docs: &[&Directive]) -> (Vec<String>, Text) {
        let mut interner = Interner::default();
        let n = docs.len();
        let mut text = Text {
            uni_start: Vec::with_capacity(n + 1),
            bi_start: Vec::with_capacity(n + 1),
            concept_start: Vec::with_capacity(n + 1),
            ..Text::default()
        };
        let mut seg: Vec<u32> = Vec::new();
        text.uni_start.push(0);
        text.bi_start.push(0);
        text.concept_start.push(0);
        for (d, dir) in docs.iter().enumerate() {
            let mut add = |field: &str, kind: Field| {
                interner.tokens_of(field, &mut seg);
                text.add(d as u32, &seg, kind);
            };
            add(&dir.lesson, Field::Text);
            // Tags before triggers: they are the first synonym sources.
            for t in &dir.tags {
                add(t, Field::Tag);
            }
            for t in &dir.triggers {
                add(t, Field::Trigger);
            }
            for list in [
                &dir.forbidden_actions,
                &dir.required_actions,
                &dir.verification_checks,
            ] {
                for t in list {
                    add(t, Field::Text);
                }
            }
            text.uni_start.push(text.uni.len());
            text.bi_start.push(text.bi.len());
            text.concept_start.push(text.concept.len());
        }
        (interner.words, text)
    }

    /// The tokens `seg` of one field of document `d`.
    fn add(&mut self, d: u32, seg: &[u32], kind: Field) {
        self.uni.extend_from_slice(seg);
        self.bi.extend(seg.windows(2).map(|w| pair(w[0], w[1])));
        match kind {
            Field::Trigger => {
                self.concept.extend_from_slice(seg);
                if seg.len() >= TRIGGER_RECALL_MIN_TOKENS {
                    self.triggers
                        .push([d, self.trigger_tokens.len() as u32, seg.len() as u32]);
                    self.trigger_tokens.extend_from_slice(seg);
                }
            }
            Field::Tag => self.concept.extend_from_slice(seg),
            Field::Text => {}
        }
    }

    /// Sorts the token table (`words`, by first-appearance id) and renumbers
    /// every token by its place in it; returns the sorted table.
    fn sort_tokens(&mut self, mut words: Vec<String>) -> Vec<String> {
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
        for t in self
            .uni
            .iter_mut()
            .chain(self.concept.iter_mut())
            .chain(self.trigger_tokens.iter_mut())
        {
            *t = remap[*t as usize];
        }
        for k in self.bi.iter_mut() {
            *k = pair(remap[(*k >> 32) as usize], remap[*k as u32 as usize]);
        }
        tokens
    }
}

/// Term postings: the documents holding term `t` are
/// `doc[start[t]..start[t + 1]]`, in document order, with their term
/// frequencies in `tf`.
struct Postings {
    start: Vec<u32>,
    doc: Vec<u32>,
    tf: Vec<u32>,
}

/// Each document's length in tokens and its distinct unigrams (the forward
/// index, for similarity), and the average length.
struct Lengths {
    len: Vec<u32>,
    avg: f64,
    fwd_start: Vec<u32>,
    fwd: Vec<u32>,
}

/// The unigram postings of `n_uni` tokens and the documents' lengths.
fn unigrams(text: &Text, n_uni: usize) -> (Postings, Lengths) {
    let n = text.uni_start.len() - 1;
    // Term frequencies of each document, flat, then turned into postings.
    let mut doc_terms: Vec<(u32, u32)> = Vec::with_capacity(text.uni.len());
    let mut doc_terms_start: Vec<usize> = Vec::with_capacity(n + 1);
    doc_terms_start.push(0);
    let mut fwd_start: Vec<u32> = Vec::with_capacity(n + 1);
    fwd_start.push(0);
    let mut fwd: Vec<u32> = Vec::new();
    let mut len: Vec<u32> = Vec::with_capacity(n);
    let mut df = vec![0u32; n_uni];
    let mut scratch: Vec<u32> = Vec::new();
    for d in 0..n {
        let occurrences = &text.uni[text.uni_start[d]..text.uni_start[d + 1]];
        len.push(occurrences.len() as u32);
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
    let total_len: u64 = len.iter().map(|&l| u64::from(l)).sum();
    let avg = if n == 0 {
        0.0
    } else {
        total_len as f64 / n as f64
    };
    let start = offsets(&df);
    let mut cursor: Vec<u32> = start[..n_uni].to_vec();
    let mut doc = vec![0u32; doc_terms.len()];
    let mut tf = vec![0u32; doc_terms.len()];
    for d in 0..n {
        for &(term, freq) in &doc_terms[doc_terms_start[d]..doc_terms_start[d + 1]] {
            let at = &mut cursor[term as usize];
            doc[*at as usize] = d as u32;
            tf[*at as usize] = freq;
            *at += 1;
        }
    }
    let postings = Postings { start, doc, tf };
    let lengths = Lengths {
        len,
        avg,
        fwd_start,
        fwd,
    };
    (postings, lengths)
}

/// Appends the bigram postings (term `n_uni + j` for the `j`-th bigram) and
/// returns the sorted bigram table. One sort of every (bigram, doc)
/// occurrence gives the table and, run by run, the postings with frequencies.
fn add_bigrams(bi: Vec<u64>, bi_start: &[usize], postings: &mut Postings) -> Vec<[u32; 2]> {
    let mut occurrences: Vec<u128> = Vec::with_capacity(bi.len());
    for (d, w) in bi_start.windows(2).enumerate() {
        occurrences.extend(
            bi[w[0]..w[1]]
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
            postings.doc.push(by_doc[0] as u32);
            postings.tf.push(by_doc.len() as u32);
        }
        postings.start.push(postings.doc.len() as u32);
    }
    bigrams
}

/// The agent and tool names of every directive, sorted, and the documents
/// scoped to each (agents and tools share the table of names).
struct Scopes {
    names: Vec<String>,
    agent_start: Vec<u32>,
    agent_doc: Vec<u32>,
    tool_start: Vec<u32>,
    tool_doc: Vec<u32>,
}

impl Scopes {
    fn of(docs: &[&Directive]) -> Scopes {
        let mut names: Vec<String> = docs
            .iter()
            .flat_map(|d| d.applies_to_agents.iter().chain(&d.applies_to_tools))
            .cloned()
            .collect();
        names.sort_unstable();
        names.dedup();
        let postings = |pick: fn(&Directive) -> &Vec<String>| {
            let mut pairs: Vec<(u32, u32)> = Vec::new();
            let mut of_doc: Vec<u32> = Vec::new();
            for (d, dir) in docs.iter().enumerate() {
                of_doc.clear();
                of_doc.extend(
                    pick(dir)
                        .iter()
                        .filter_map(|name| names.binary_search(name).ok())
                        .map(|s| s as u32),
                );
                of_doc.sort_unstable();
                of_doc.dedup();
                pairs.extend(of_doc.iter().map(|&s| (s, d as u32)));
            }
            group(names.len(), &pairs)
        };
        let (agent_start, agent_doc) = postings(|d| &d.applies_to_agents);
        let (tool_start, tool_doc) = postings(|d| &d.applies_to_tools);
        Scopes {
            names,
            agent_start,
            agent_doc,
            tool_start,
            tool_doc,
        }
    }
}

/// A bigram's key: its two token ids in one word.
fn pair(a: u32, b: u32) -> u64 {
    (u64::from(a) << 32) | u64::from(b)
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

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::super::testing::*;

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
        let load = |range| Corpus::load(Arc::new(bytes.clone()), range).map(|_| ());
        assert_eq!(load(0..0), Err(DamagedCorpus::CutShort));
        assert_eq!(load(0..8), Err(DamagedCorpus::CutShort));
        let len = bytes.len();
        assert_eq!(load(0..len + 4), Err(DamagedCorpus::PastTheEnd));
        assert_eq!(
            load(0..len - 4).map_err(|e| e.to_string()),
            Err(format!(
                "the corpus is {} bytes, its layout says {len}",
                len - 4
            ))
        );
    }

    #[test]
    fn empty_corpus() {
        let c = Corpus::build(&[]);
        assert!(c.is_empty());
        assert!(c.score(&query("anything"), &fresh).is_empty());
        assert!(c.select(&[], 8, 0.5).is_empty());
    }
}
