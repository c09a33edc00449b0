//! Reading the markdown of the pattern loop: an adversarial role's
//! deliberation and the verdict its validator writes about it.
//!
//! Everything here is pure: text in, values out, no I/O. [`extract`](fn@extract),
//! [`parse_verdict`] and the helpers never panic on any input; the two
//! parsers that can reject input return a [`TextError`] naming the line.
//!
//! The reading is a heuristic on purpose. A deliberation is free-form
//! markdown written by a model, and a full CommonMark parser would still
//! not tell a finding from a greeting. What matters for the loop is that
//! the same observation, written on another run with other emphasis,
//! numbering or wrapping, gives the same [`normalise`]d text and so the
//! same [`pattern_id`]; and that boilerplate every deliberation repeats
//! (greetings, "Verdict: PASS", ack lines) never becomes a pattern,
//! because it would be "validated" on every run without saying anything.
//!
//! One file per concern: `blocks.rs` says which lines are paragraph text
//! (pulldown-cmark parses the blocks), `extract.rs` which are findings,
//! `label.rs` reads the ids that name one, `inline.rs` strips inline
//! markup, `verdict.rs` reads the validator's JSON, `evidence.rs` how well
//! a deliberation grounds what it says, and `matching.rs` which finding a
//! validator's false positive names. This file holds what identifies a
//! pattern: [`normalise`], [`classify`], [`tokens`] and [`pattern_id`].

mod blocks;
mod evidence;
mod extract;
mod inline;
mod label;
mod matching;
#[cfg(test)]
mod pinned;
#[cfg(test)]
mod testing;
mod verdict;

use std::collections::BTreeSet;
use std::sync::{Arc, LazyLock};

use regex::Regex;
use serde::{Deserialize, Serialize};
use unicode_segmentation::UnicodeSegmentation;

use inline::{collapse_whitespace, drop_escapes, replace_links, strip_markup};

pub use evidence::{Evidence, Level, evidence};
pub use extract::extract;
pub use label::label_key;
pub use matching::{
    Finder, MIN_FALSE_POSITIVE_CONTENT_WORDS, MIN_FALSE_POSITIVE_WORDS, Match, find_finding,
};
pub use verdict::{Issue, VerdictDoc, VerdictKind, parse_verdict};

pub const MIN_WORDS: usize = 4;
/// Most characters an observation's text has.
pub const MAX_CHARS: usize = 400;
/// Most characters a plain paragraph has to count as a finding.
pub const MAX_PARAGRAPH_CHARS: usize = 240;
/// Most characters of [`Evidence::excerpt`].
pub const MAX_EXCERPT_CHARS: usize = 120;

crate::directive::string_enum!(
    /// What kind of knowledge an observation carries. Rules weigh more than
    /// causal links, which weigh more than plain observations.
    Category {
        Rule => "rule",
        Causal => "causal",
        Observation => "observation",
    }
);

/// One recurring observation read from a deliberation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Observation {
    /// The observation as written, markdown markup removed.
    pub text: String,
    /// [`normalise`]d `text`: what identifies the pattern.
    pub normalised: String,
    pub category: Category,
    /// 1-based line in the input where the observation starts.
    pub line: usize,
    /// The id the deliberation gave the finding, as [`label_key`] writes
    /// it (`s3` for `**S3**:`, `finding 3` for `Finding #3:`): a validator
    /// may name the finding by it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
}

/// Input that cannot be read, and where.
#[derive(Debug, Clone, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct TextError {
    /// 1-based line of the problem.
    pub line: usize,
    pub message: String,
    /// The JSON error behind an invalid verdict, whose text `message` holds.
    #[source]
    source: Option<Arc<serde_json::Error>>,
}

impl TextError {
    fn new(line: usize, message: impl Into<String>) -> TextError {
        TextError {
            line,
            message: message.into(),
            source: None,
        }
    }

    fn caused_by(mut self, source: serde_json::Error) -> TextError {
        self.source = Some(Arc::new(source));
        self
    }
}

/// Errors are equal when they say the same about the same line.
impl PartialEq for TextError {
    fn eq(&self, other: &TextError) -> bool {
        (self.line, &self.message) == (other.line, &other.message)
    }
}

impl Eq for TextError {}

static LEADING_MARKER: LazyLock<Regex> =
    LazyLock::new(|| regex(r"^(?:(?:#{1,6}|[-*+•]|[0-9]{1,9}[.)]|\[[ x]\])(?:\s+|$)|>+\s*)"));

/// Characters trimmed from the end of a normalised text.
const TRAILING: &[char] = &['.', ',', ';', ':', '!', '?', '…', '。'];

/// The identity of an observation's text: lowercase (Unicode), links by
/// their text, emphasis, backticks and escapes removed, leading bullet,
/// number, checklist, heading and quote markers removed, whitespace
/// collapsed, trailing punctuation (`. , ; : ! ? …`) trimmed. Two texts
/// differing only in case, spacing, emphasis or a trailing period
/// normalise equal.
pub fn normalise(text: &str) -> String {
    let mut plain = replace_links(&drop_escapes(text));
    // Escapes are gone already: an escaped `*` is as much markup as any.
    // Removing markup can join two runs into one (`~**~` leaves `~~`),
    // so it repeats until nothing more goes.
    loop {
        let mut next = String::with_capacity(plain.len());
        strip_markup(&plain, &[], false, &mut next);
        if next == plain {
            break;
        }
        plain = next;
    }
    let mut s = collapse_whitespace(&plain.to_lowercase());
    loop {
        let before = s.len();
        if let Some(m) = LEADING_MARKER.find(&s) {
            s = s[m.end()..].to_owned();
        }
        let trimmed = s.trim_end_matches(|c: char| c.is_whitespace() || TRAILING.contains(&c));
        s.truncate(trimmed.len());
        if s.len() == before {
            return s;
        }
    }
}

static RULE: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?xi)\b(?:must(?:\s+not)?|mustn['’]t|never|always|should(?:\s+not)?|shouldn['’]t
        |shall(?:\s+not)?|do\s+not|don['’]t|required|forbidden|prohibited|mandatory|avoid)\b",
    )
});

static CAUSAL: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?xi)\b(?:because|causes|caused|causing|leads?\s+to|led\s+to|leading\s+to
        |results?\s+in|resulted\s+in|resulting\s+in|due\s+to|so\s+that|therefore
        |which\s+means|hence|thus|as\s+a\s+result|consequently)\b",
    )
});

/// Does `re` match `text` as a whole word (`\b`, and not glued by a hyphen,
/// so `always-on` is not `always`)?
fn has_word(re: &Regex, text: &str) -> bool {
    re.find_iter(text)
        .any(|m| !text[..m.start()].ends_with('-') && !text[m.end()..].starts_with('-'))
}

/// The category of an observation's text: a rule if it holds a modal or
/// imperative marker (`RULE`) as a whole word, else causal if it holds a
/// causal marker (`CAUSAL`), else an observation. `alwaysOn`,
/// `always_on` and `always-on` are not `always`.
pub fn classify(text: &str) -> Category {
    let norm = normalise(text);
    if has_word(&RULE, &norm) {
        Category::Rule
    } else if has_word(&CAUSAL, &norm) {
        Category::Causal
    } else {
        Category::Observation
    }
}

/// English stop words left out of [`tokens`].
pub const STOP_WORDS: [&str; 20] = [
    "the", "a", "an", "of", "to", "in", "is", "are", "and", "or", "for", "on", "it", "this",
    "that", "be", "with", "as", "at", "by",
];

/// The words of the [`normalise`]d text (Unicode word boundaries,
/// lowercase) without [`STOP_WORDS`], sorted and deduplicated.
pub fn tokens(text: &str) -> Vec<String> {
    let norm = normalise(text);
    norm.unicode_words()
        .map(str::to_lowercase)
        .filter(|w| !STOP_WORDS.contains(&w.as_str()))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect()
}

/// `|A ∩ B| / |A ∪ B|` of two token lists (any order; duplicates count
/// once); 0.0 when both are empty.
pub fn jaccard(a: &[String], b: &[String]) -> f64 {
    let a: BTreeSet<&str> = a.iter().map(String::as_str).collect();
    let b: BTreeSet<&str> = b.iter().map(String::as_str).collect();
    let union = a.union(&b).count();
    if union == 0 {
        return 0.0;
    }
    a.intersection(&b).count() as f64 / union as f64
}

/// The pattern id of a normalised text as written by `role`: `p` and the
/// first 16 lowercase hex digits of the 128-bit XXH3 (seed 0) of the bytes
/// of `role`, a NUL byte, and the bytes of `normalised`.
///
/// Ids are stored in event files, so this function is stable across
/// versions: changing it (or [`normalise`]) would orphan every recorded
/// pattern. A test pins a value.
pub fn pattern_id(normalised: &str, role: &str) -> String {
    let mut bytes = Vec::with_capacity(role.len() + 1 + normalised.len());
    bytes.extend_from_slice(role.as_bytes());
    bytes.push(0);
    bytes.extend_from_slice(normalised.as_bytes());
    let hash = xxhash_rust::xxh3::xxh3_128(&bytes);
    format!("p{:016x}", (hash >> 64) as u64)
}

pub(super) fn regex(pattern: &str) -> Regex {
    Regex::new(pattern).expect("a constant pattern compiles")
}

pub(super) fn front_matter_end(text: &str) -> Option<usize> {
    let mut it = lines(text);
    let (_, first) = it.next()?;
    if first.trim_start_matches('\u{feff}').trim_end() != "---" {
        return None;
    }
    let (_, key) = it.next()?;
    if !YAML_KEY.is_match(key) {
        return None;
    }
    it.find(|(_, l)| matches!(l.trim_end(), "---" | "..."))
        .map(|(n, _)| n)
}

static YAML_KEY: LazyLock<Regex> =
    LazyLock::new(|| regex(r#"^(?:[A-Za-z_][\w .-]*|"[^"]*"|'[^']*')[ \t]*:(?:[ \t]|$)"#));

/// Line of the first NUL byte.
pub(super) fn nul_line(text: &str) -> Option<usize> {
    let at = text.find('\0')?;
    Some(text[..at].matches('\n').count() + 1)
}

/// Lines numbered from 1, split on `\n`, a trailing `\r` dropped.
pub(super) fn lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.split('\n')
        .enumerate()
        .map(|(i, l)| (i + 1, l.strip_suffix('\r').unwrap_or(l)))
}

#[cfg(test)]
mod tests {
    use super::testing::strings;
    use std::collections::HashSet;

    use proptest::prelude::*;

    use crate::markdown::arbitrary;

    use super::label::finding_label;
    use super::*;

    // --- normalise, classify, tokens, jaccard, pattern_id -------------------

    #[test]
    fn normalise_ignores_case_spacing_emphasis_and_the_final_period() {
        let want = "the cache key must include the tenant id";
        for text in [
            "The cache key must include the tenant id.",
            "the  cache key\tmust include the tenant id",
            "THE CACHE KEY MUST INCLUDE THE TENANT ID",
            "The cache key **must** include the _tenant id_.",
            "The `cache key` must include the tenant id!",
            "- The cache key must include the tenant id",
            "12. The cache key must include the tenant id;",
            "* [x] The cache key must include the tenant id",
            "> ## The cache key must include the [tenant id](https://x.dev).",
            "  The cache key must include the tenant id ...  ",
        ] {
            assert_eq!(normalise(text), want, "{text:?}");
        }
    }

    #[test]
    fn normalise_keeps_what_is_not_markup() {
        for (text, want) in [
            ("Use tenant_id, not TenantId", "use tenant_id, not tenantid"),
            ("3.5 seconds is too slow", "3.5 seconds is too slow"),
            ("ÉCOLE Straße ΣΊΣΥΦΟΣ", "école straße σίσυφος"),
            ("a * b is not emphasis", "a * b is not emphasis"),
            ("-> arrows stay", "-> arrows stay"),
            ("", ""),
            (" - . ", ""),
        ] {
            assert_eq!(normalise(text), want, "{text:?}");
        }
    }

    #[test]
    fn normalise_is_idempotent_on_samples() {
        for text in [
            "- **Never** call `unwrap()` on _user_ input.",
            "[[nested](a)](b) links",
            "`__init__` must be called",
            "\\*escaped\\* stars \\\\*",
            "1. 2. - double markers...",
            "~~gone~~ and ~kept~",
            "~**~ and ~`~ join into runs",
        ] {
            let once = normalise(text);
            assert_eq!(normalise(&once), once, "{text:?}");
        }
    }

    #[test]
    fn classify_rule_markers() {
        for text in [
            "Handlers must validate input",
            "Handlers must not panic",
            "Handlers mustn't panic",
            "Never log tokens",
            "Always close the file",
            "Callers should retry",
            "Callers shouldn't retry",
            "The client shall retry",
            "Do not log tokens",
            "Don't log tokens",
            "Don’t log tokens",
            "A lock is required here",
            "Raw SQL is forbidden",
            "Raw SQL is prohibited",
            "Review is mandatory",
            "Avoid global state",
            "**MUST** validate input",
        ] {
            assert_eq!(classify(text), Category::Rule, "{text:?}");
        }
    }

    #[test]
    fn classify_causal_markers() {
        for text in [
            "The test flakes because the clock is shared",
            "The shared clock causes flakes",
            "Flakes are caused by the shared clock",
            "The shared clock leads to flakes",
            "The shared clock results in flakes",
            "Flakes happen due to the shared clock",
            "Pin the seed so that runs repeat",
            "The clock is shared; therefore runs differ",
            "The clock is shared, which means runs differ",
            "The clock is shared, hence flakes",
            "As a result the runs differ",
        ] {
            assert_eq!(classify(text), Category::Causal, "{text:?}");
        }
        // A rule marker wins over a causal one.
        assert_eq!(
            classify("Never share the clock because runs differ"),
            Category::Rule
        );
    }

    #[test]
    fn classify_near_misses_are_observations() {
        for text in [
            "The alwaysOn flag is set",
            "The always_on flag is set",
            "The always-on flag is set",
            "Nevertheless the tests pass",
            "The shoulder case is handled",
            "Avoidance of locks is documented",
            "The mustard field is optional",
            "The required_fields list is empty",
            "A must-have feature is missing",
            "The becauseOf helper is unused",
            "The thusly variable is unused",
            "The cause is unclear",
            "",
        ] {
            assert_eq!(classify(text), Category::Observation, "{text:?}");
        }
    }

    #[test]
    fn category_names() {
        assert_eq!(Category::Rule.as_str(), "rule");
        assert_eq!(Category::Causal.as_str(), "causal");
        assert_eq!(Category::Observation.as_str(), "observation");
        assert_eq!(
            serde_json::to_string(&Category::Causal).expect("valid test input"),
            r#""causal""#
        );
        assert_eq!(
            serde_json::from_str::<Category>(r#""rule""#).expect("valid test input"),
            Category::Rule
        );
    }

    #[test]
    fn tokens_are_sorted_unique_and_without_stop_words() {
        assert_eq!(
            tokens("The cache KEY is the key of the **cache**, and it is stale."),
            strings(&["cache", "key", "stale"])
        );
        assert_eq!(
            tokens("tenant_id can't be 3.5"),
            strings(&["3.5", "can't", "tenant_id"])
        );
        assert_eq!(tokens("日本語のテキスト"), tokens("日本語のテキスト。"));
        assert!(!tokens("日本語のテキスト").is_empty());
        assert_eq!(tokens("the a an of"), Vec::<String>::new());
        assert_eq!(tokens(""), Vec::<String>::new());
    }

    #[test]
    fn jaccard_scores() {
        let a = strings(&["cache", "key", "tenant"]);
        let b = strings(&["cache", "key", "region"]);
        assert_eq!(jaccard(&a, &b), 0.5);
        assert_eq!(jaccard(&a, &a), 1.0);
        assert_eq!(jaccard(&a, &[]), 0.0);
        assert_eq!(jaccard(&[], &[]), 0.0);
        assert_eq!(jaccard(&a, &strings(&["x"])), 0.0);
        // Order and duplicates do not matter.
        assert_eq!(jaccard(&strings(&["key", "cache", "key"]), &b), 2.0 / 3.0);
    }

    #[test]
    fn pattern_id_is_pinned() {
        // This value is stored in event files: it must never change.
        assert_eq!(
            pattern_id("the cache key must include the tenant id", "judge"),
            "pe2b15b9f2fab384f"
        );
        // The dependency still computes the reference XXH3-128.
        assert_eq!(
            xxhash_rust::xxh3::xxh3_128(b""),
            0x99aa_06d3_0147_98d8_6001_c324_468d_497f
        );
    }

    #[test]
    fn pattern_id_shape_and_inputs() {
        let id = pattern_id("some text", "auditor");
        assert_eq!(id.len(), 17);
        assert!(id.starts_with('p'));
        assert!(
            id[1..]
                .chars()
                .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
        );
        assert_eq!(id, pattern_id("some text", "auditor"));
        assert_ne!(id, pattern_id("some text", "judge"));
        assert_ne!(id, pattern_id("some text.", "auditor"));
        // The NUL separator keeps role and text apart.
        assert_ne!(pattern_id("b c", "a"), pattern_id("c", "a b"));
        let hash = xxhash_rust::xxh3::xxh3_128(b"auditor\0some text");
        assert_eq!(id, format!("p{}", &format!("{hash:032x}")[..16]));
    }

    // --- no panics ----------------------------------------------------------

    #[test]
    fn odd_inputs() {
        let huge = "word ".repeat(200_000);
        let ticks = "`".repeat(10_000) + "a" + &"``".repeat(5_000);
        for md in [
            "",
            "\n",
            "\r\n\r\n",
            "\r",
            "#",
            "# \n## \n###### x",
            "######## not a heading but seven hashes",
            "-",
            "- ",
            "1.",
            "```",
            "~~~",
            "<!--",
            "-->",
            "<!---->",
            "[](",
            "![",
            "**",
            "\\",
            "`",
            "\u{feff}- a bom before the bullet marker",
            "- 日本語のテキストはここにあります、そして続きます",
            "- 🦀🦀🦀 🦀 crabs all the way down",
            "- \u{2028}line\u{2029}separators in the item",
            "- e\u{301}\u{301}\u{301} combining marks everywhere",
            &huge,
            &format!("- {huge}"),
            &ticks,
        ] {
            let _ = extract(md);
            let _ = parse_verdict(md);
            let _ = evidence(md, &strings(&["a.rs"]));
            let _ = normalise(md);
            let _ = classify(md);
            let _ = tokens(md);
        }
        assert!(extract(&huge).expect("valid test input").is_empty());
        assert!(
            extract(&format!("- {huge}"))
                .expect("valid test input")
                .is_empty()
        );
    }

    /// Markdown pieces the reading treats specially, for the inputs of
    /// `never_panics`.
    const PIECES: &[&str] = &[
        "- ",
        "* ",
        "+ ",
        "1. ",
        "2) ",
        "- [ ] ",
        "- [x] ",
        "# ",
        "## ",
        "> ",
        "```",
        "~~~",
        "```verdict-json",
        "<!--",
        "-->",
        "<!-- jkz:verdict-json ",
        "{\"verdict\": \"PASS\"}",
        "{\"verdict\": 1}",
        "\"must_fix\"",
        "[",
        "]",
        "(",
        ")",
        "{",
        "}",
        "**",
        "__",
        "_",
        "*",
        "`",
        "``",
        "~~",
        "\\",
        "|",
        "|---|",
        "---",
        "===",
        "Finding 1: ",
        "**Issue**: ",
        "Verdict: PASS",
        "KNOWLEDGE_APPLIED:",
        "must ",
        "never ",
        "because ",
        "due to ",
        "$ cargo test",
        "test result: ok",
        "3 passed, 0 failed",
        "exit code 1",
        "src/a.rs:12",
        "./a.rs#L3",
        "http://x.dev/a.rs:1",
        "tenant_id",
        "the ",
        "cache ",
        "key ",
        "\n",
        "\r\n",
        "\r",
        "\t",
        "    ",
        " ",
        "\0",
        "é",
        "日本",
        "🦀",
        "\u{feff}",
        "\u{2028}",
        "\u{301}",
        "’",
        "…",
        ".",
        ":",
        ";",
        "!",
        "?",
    ];

    proptest! {
        #![proptest_config(arbitrary::config())]

        /// Whatever the text, the readers return without panicking, their
        /// lines are in the text, and what identifies a pattern is stable.
        #[test]
        fn never_panics(s in arbitrary::text(PIECES, 2, 60, 8)) {
            let changed = strings(&["src/a.rs", "a.rs"]);
            let line_count = s.split('\n').count();
            match extract(&s) {
                Ok(obs) => {
                    let mut seen = HashSet::new();
                    for o in &obs {
                        assert!((1..=line_count).contains(&o.line), "{s:?}: {o:?}");
                        assert!(o.text.chars().count() <= MAX_CHARS, "{s:?}: {o:?}");
                        assert!(
                            o.normalised.unicode_words().count() >= MIN_WORDS,
                            "{s:?}: {o:?}"
                        );
                        assert_eq!(o.normalised, normalise(&o.text), "{s:?}");
                        assert!(seen.insert(o.normalised.clone()), "{s:?}: {o:?}");
                        assert!(!o.text.contains(['\n', '\r', '\0']), "{s:?}: {o:?}");
                    }
                    for (i, o) in obs.iter().enumerate() {
                        let words = |n: &str| n.unicode_words().map(str::to_owned).collect();
                        let mine: Vec<String> = words(&o.normalised);
                        let same: Vec<usize> = (0..obs.len())
                            .filter(|&j| words(&obs[j].normalised) == mine)
                            .collect();
                        match find_finding(&obs, &o.text, 0.5) {
                            // Its own text finds it, unless another has the same words.
                            Match::Phrase { index } => {
                                assert!(same == [index] || finding_label(&o.normalised).is_some());
                                assert!(index == i || finding_label(&o.normalised).is_some());
                            }
                            Match::Ambiguous { indices } => {
                                assert!(indices.len() > 1, "{s:?}");
                            }
                            Match::TooShort | Match::Overlap { .. } | Match::None { .. } => {
                                assert!(same.len() <= 1, "{s:?}");
                            }
                            Match::Label { .. } => {
                                panic!("an observation is more than a label: {s:?}: {o:?}")
                            }
                        }
                    }
                }
                Err(e) => assert!((1..=line_count).contains(&e.line), "{s:?}: {e}"),
            }
            match parse_verdict(&s) {
                Ok(doc) => assert!((1..=line_count).contains(&doc.line), "{s:?}"),
                Err(e) => assert!((1..=line_count).contains(&e.line), "{s:?}: {e}"),
            }
            let ev = evidence(&s, &changed);
            if let Some(line) = ev.line {
                assert!((1..=line_count).contains(&line), "{s:?}");
            }
            assert_eq!(ev.line.is_some(), ev.level != Level::Reasoning, "{s:?}");
            assert!(
                ev.excerpt
                    .as_ref()
                    .is_none_or(|e| e.chars().count() <= MAX_EXCERPT_CHARS)
            );
            let n = normalise(&s);
            assert_eq!(normalise(&n), n, "{s:?}");
            assert_eq!(classify(&s), classify(&n), "{s:?}");
            let t = tokens(&s);
            assert!(t.windows(2).all(|w| w[0] < w[1]), "{s:?}");
            let j = jaccard(&t, &tokens(&n));
            assert!(t.is_empty() || j == 1.0, "{s:?}: {j}");
        }
    }
}
