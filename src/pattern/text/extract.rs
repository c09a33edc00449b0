//! Findings of a deliberation (the rules users read are in
//! docs/patterns.md, "Extract").
//!
//! pulldown-cmark says which lines are paragraph text, in a list item or
//! not ([`Document`]); the heuristics below read those lines (split on
//! `\n`, a trailing `\r` dropped, numbered from 1). Findings are bullet
//! items with their deeper-indented continuation lines, lines opening with
//! a finding label (`Finding 3:`, dropped from the text) up to a blank
//! line, and other paragraphs of at most [`MAX_PARAGRAPH_CHARS`] that do
//! not greet or wrap up and are not under a prose heading (`Summary`, …).
//! Label-only lines, metadata fields, verdict lines and ack lines are never
//! findings.
//!
//! An observation is dropped when its normalised text has fewer than
//! [`MIN_WORDS`] words or its text is over [`MAX_CHARS`] characters
//! (dropped, not cut: a cut text would hash differently on every run).
//! Within one deliberation the first of several with the same normalised
//! text is kept.

use std::collections::HashSet;
use std::sync::LazyLock;

use regex::Regex;
use unicode_segmentation::UnicodeSegmentation;

use super::blocks::{Document, LineKind};
use super::inline::clean_inline;
use super::label::labelled;
use super::{
    MAX_CHARS, MAX_PARAGRAPH_CHARS, MIN_WORDS, Observation, TextError, classify, front_matter_end,
    normalise, nul_line, regex,
};

/// Recurring observations of a markdown deliberation, in text order (see
/// the module documentation for what counts).
///
/// Malformed input is an error naming the line: a NUL byte (its line), an
/// unterminated ```` ``` ```` or `~~~` fence (the line where it opened), an
/// unterminated html comment (the line where it opened). An empty or
/// observation-free deliberation is `Ok(vec![])`.
pub fn extract(markdown: &str) -> Result<Vec<Observation>, TextError> {
    if let Some(line) = nul_line(markdown) {
        return Err(TextError::new(line, "NUL byte in the deliberation"));
    }
    let skip = front_matter_end(markdown).unwrap_or(0);
    let from = markdown
        .split_inclusive('\n')
        .take(skip)
        .map(str::len)
        .sum::<usize>();
    let doc = Document::read(&markdown[from..])
        .map_err(|(line, message)| TextError::new(skip + line + 1, message))?;
    let mut ex = Extractor::default();
    for (i, (line, kind)) in doc.lines().enumerate() {
        ex.line(skip + i + 1, line, kind);
    }
    ex.flush();
    Ok(ex.out)
}

#[derive(Default)]
struct Extractor {
    block: Option<Block>,
    /// The current section introduces prose (a summary): its plain
    /// paragraphs are not findings.
    prose_section: bool,
    seen: HashSet<String>,
    out: Vec<Observation>,
}

struct Block {
    kind: BlockKind,
    line: usize,
    parts: Vec<String>,
    /// The id the deliberation gave the finding (`S3`, `Finding 3`).
    label: Option<String>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum BlockKind {
    /// `skip`: boilerplate (an ack or verdict bullet) whose lines are
    /// swallowed and none kept.
    Item {
        indent: usize,
        skip: bool,
    },
    Finding,
    Paragraph {
        greeting: bool,
    },
}

impl Extractor {
    /// Line `n`, `live` (its text, or a heading's source), as `kind`.
    fn line(&mut self, n: usize, live: &str, kind: LineKind) {
        let t = live.trim();
        match kind {
            LineKind::Heading { .. } => {
                self.flush();
                self.set_section(t);
                return;
            }
            LineKind::Skipped => {
                self.flush();
                return;
            }
            LineKind::Text => {}
        }
        if t.is_empty() || t.starts_with('|') {
            // A blank line, or a table row written without a separator row.
            self.flush();
            return;
        }
        let indent = indent_width(live);
        if let Some((marker_indent, content)) = bullet(live) {
            self.flush();
            let content = CHECKBOX
                .find(content)
                .map_or(content, |m| &content[m.end()..]);
            let skip = is_boilerplate(&clean_inline(content));
            let (label, content) = labelled(content).unwrap_or((None, content));
            let kind = BlockKind::Item {
                indent: marker_indent,
                skip,
            };
            self.open(kind, n, content.trim(), label);
            return;
        }
        if let Some(Block {
            kind: BlockKind::Item { indent: item, .. },
            parts,
            ..
        }) = &mut self.block
            && indent > *item
        {
            parts.push(t.to_owned());
            return;
        }
        let cleaned = clean_inline(t);
        if is_boilerplate(&cleaned) {
            self.flush();
            return;
        }
        if let Some((label, rest)) = labelled(t) {
            self.open(BlockKind::Finding, n, rest.trim(), label);
            return;
        }
        let in_text = matches!(
            self.block.as_ref().map(|b| b.kind),
            Some(BlockKind::Paragraph { .. } | BlockKind::Finding)
        );
        if is_label_line(t, &cleaned, in_text) {
            self.flush();
            self.set_section(&cleaned);
            return;
        }
        if BOLD_FIELD.is_match(t) {
            // `**Impact**: …` starts a paragraph of its own.
            self.open(BlockKind::Paragraph { greeting: false }, n, t, None);
            return;
        }
        if in_text && let Some(b) = &mut self.block {
            b.parts.push(t.to_owned());
            return;
        }
        let greeting = GREETING.is_match(&cleaned.to_lowercase());
        self.open(BlockKind::Paragraph { greeting }, n, t, None);
    }

    /// Ends the current block and opens one of `kind` at line `n`.
    fn open(&mut self, kind: BlockKind, n: usize, text: &str, label: Option<String>) {
        self.flush();
        self.block = Some(Block {
            kind,
            line: n,
            parts: vec![text.to_owned()],
            label,
        });
    }

    fn set_section(&mut self, title: &str) {
        let norm = normalise(title);
        self.prose_section =
            norm.unicode_words().any(|w| PROSE_SECTIONS.contains(&w)) || norm.contains("tl;dr");
    }

    fn flush(&mut self) {
        let Some(b) = self.block.take() else { return };
        if let BlockKind::Item { skip: true, .. } = b.kind {
            return;
        }
        let text = clean_inline(&b.parts.join(" "));
        if let BlockKind::Paragraph { greeting } = b.kind
            && (greeting || self.prose_section || text.chars().count() > MAX_PARAGRAPH_CHARS)
        {
            return;
        }
        if text.chars().count() > MAX_CHARS {
            return;
        }
        let normalised = normalise(&text);
        if normalised.unicode_words().count() < MIN_WORDS || !self.seen.insert(normalised.clone()) {
            return;
        }
        let category = classify(&text);
        self.out.push(Observation {
            text,
            normalised,
            category,
            line: b.line,
            label: b.label,
        });
    }
}

/// Headings and labels whose paragraphs are prose about the change, not
/// findings.
const PROSE_SECTIONS: [&str; 11] = [
    "summary",
    "overview",
    "context",
    "background",
    "introduction",
    "tldr",
    "description",
    "verdict",
    "conclusion",
    "conclusions",
    "recap",
];

static CHECKBOX: LazyLock<Regex> = LazyLock::new(|| regex(r"^\[[ xX]\](?:[ \t]+|$)"));

static BULLET: LazyLock<Regex> =
    LazyLock::new(|| regex(r"^([ \t]*)(?:[-*+]|[0-9]{1,9}[.)])(?:[ \t]+(.*))?$"));

static ACK_LINE: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"^(?:(?i:knowledge[_-][a-z_/-]+)|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|VERIFIED|VIOLATED|N/A|N-A)[ \t]*:",
    )
});

static VERDICT_LINE: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?xi)^(?:(?:final|overall)\s+)?
        (?:verdict|result|status|decision|outcome|recommendation)\s*(?:[:=]|[-–—])\s*
        (?:pass(?:ed)?|fail(?:ed)?|approved?|rejected?|blocked|lgtm|ok|accepted?
          |request(?:ed)?\s+changes|changes\s+requested|needs\s+(?:work|changes))
        [^\p{L}\p{N}]*$",
    )
});

/// Fields that locate or grade a finding rather than state it.
static META_FIELD: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?xi)^(?:severity|priority|confidence|category|type|id|location|locations|file|files
        |line|lines|path|paths|ref|refs|reference|references|label|labels|tag|tags)\s*:",
    )
});

/// A line opening with a bold key: `**Impact**: …`, `__Fix:__ …`.
static BOLD_FIELD: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"^(?:\*\*[^*:]{1,40}(?:\*\*[ \t]*:|:[ \t]*\*\*)|__[^_:]{1,40}(?:__[ \t]*:|:[ \t]*__))")
});

/// Openings of paragraphs that greet, thank, praise or wrap up.
static GREETING: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?x)^(?:
          (?:hi|hello|hey|greetings|dear|thanks|thank\s+you|cheers)\b
        | (?:sure|certainly|ok|okay|great|yes|alright)\s*(?:[,!.:;—–-]|$)
        | (?:good\s+(?:morning|afternoon|evening)|here\s+(?:is|are)|here['’]s
            |below\s+(?:is|are)|i\s+(?:have\s+|['’]ve\s+)?(?:reviewed|read|looked)
            |let\s+me|hope\s+this\s+helps|(?:great|nice|good)\s+(?:work|job)|well\s+done|lgtm
            |in\s+(?:summary|conclusion|short)
            |to\s+sum\s+up|all\s+in\s+all)\b
        # `Overall` wraps up when what follows judges the whole change, not
        # when it opens a finding (`Overall, the retry loop leaks …`).
        | overall\s*[,:]?\s*(?:
            (?:this|it|that)(?:\s+(?:is|looks|seems|was|reads|feels|should|could)|['’]s)\b
          | (?:the|this)\s+(?:change|pr|pull\s+request|patch|diff|code|plan|design
              |implementation|approach|work|review|proposal|refactor(?:ing)?|update
              |submission|branch|commit|fix)(?:es|s)?\b
          | (?:looks|seems|good|great|solid|fine|lgtm|nice|well\s+done
              |a\s+(?:good|solid|nice|great|clean|reasonable))\b
          | $)
        | (?:(?:this|it|everything|all)\s+)?(?:looks|seems)\s+
            (?:good|great|fine|solid|sound|reasonable|ok|okay)\b
        | (?:all\s+good|good\s+to\s+go|ship\s+it|happy\s+to\s+approve
            |(?:excellent|solid)\s+(?:work|job)|that\s+is\s+all|that['’]s\s+all
            |no\s+(?:further|other|more)\s+(?:comments|concerns|issues|findings|remarks)
            |nothing\s+(?:else|more|further)\s+(?:to\s+add|from\s+me))\b
        )",
    )
});

/// Columns of leading whitespace, a tab reaching the next multiple of 4.
fn indent_width(line: &str) -> usize {
    let mut col = 0;
    for c in line.chars() {
        match c {
            ' ' => col += 1,
            '\t' => col += 4 - col % 4,
            _ => break,
        }
    }
    col
}

/// A bullet line: the marker's indentation and the item's text.
fn bullet(line: &str) -> Option<(usize, &str)> {
    let c = BULLET.captures(line)?;
    let indent = c.get(1).map_or(0, |m| indent_width(m.as_str()));
    Some((indent, c.get(2).map_or("", |m| m.as_str())))
}

/// An ack line, a verdict line or a metadata field: never a finding.
fn is_boilerplate(cleaned: &str) -> bool {
    ACK_LINE.is_match(cleaned) || VERDICT_LINE.is_match(cleaned) || META_FIELD.is_match(cleaned)
}

/// A line that only names a section: `Findings:`, `**Summary**`, or one or
/// two words on their own at the start of a block.
fn is_label_line(raw: &str, cleaned: &str, in_text: bool) -> bool {
    let words = cleaned.unicode_words().count();
    if cleaned.ends_with(':') && words <= 5 {
        return true;
    }
    let bold = ["**", "__"]
        .iter()
        .any(|m| raw.starts_with(m) && raw.trim_end_matches(':').ends_with(m));
    if bold && words <= 3 {
        return true;
    }
    !in_text && words <= 2 && !cleaned.ends_with(['.', '!', '?', ';'])
}

#[cfg(test)]
mod tests {
    use super::super::Category;
    use super::super::testing::{assert_text_lines, assert_texts, err, lines_of, texts};
    use super::*;

    // --- extract: what is read ---------------------------------------------

    #[test]
    fn a_realistic_deliberation() {
        let md = "\
# Judge review of PR #12

Hello! Here is my review.

## Summary
The change adds caching to the resolver and looks mostly fine.

## Findings
- The cache key must include the tenant id, otherwise data leaks across tenants.
- `resolve()` is called twice because the memo is reset on every call.
- [ ] Error paths never close the file handle.

**Finding 4**: The retry loop has no upper bound on attempts.

| file | risk |
|------|------|
| a.rs | high |

```rust
// The cache key must include the tenant id in this code block.
let x = 1;
```

> You are the Judge. You must report every finding as a bullet.

KNOWLEDGE_APPLIED:cache-keys
<!-- jkz:verdict-json {\"verdict\": \"FAIL\"} -->

---
Verdict: FAIL
";
        let got = extract(md).expect("valid test input");
        let summary: Vec<(&str, Category, usize)> = got
            .iter()
            .map(|o| (o.text.as_str(), o.category, o.line))
            .collect();
        assert_eq!(
            summary,
            vec![
                (
                    "The cache key must include the tenant id, otherwise data leaks across tenants.",
                    Category::Rule,
                    9
                ),
                (
                    "resolve() is called twice because the memo is reset on every call.",
                    Category::Causal,
                    10
                ),
                (
                    "Error paths never close the file handle.",
                    Category::Rule,
                    11
                ),
                (
                    "The retry loop has no upper bound on attempts.",
                    Category::Observation,
                    13
                ),
            ]
        );
        assert_eq!(
            got[0].normalised,
            "the cache key must include the tenant id, otherwise data leaks across tenants"
        );
    }

    #[test]
    fn bullets_of_every_marker() {
        let md = "- dash items are read here\n* star items are read here\n+ plus items are read here\n1. dot numbered items are read\n2) paren numbered items are read\n10. two digit numbers are read";
        assert_texts(
            md,
            &[
                "dash items are read here",
                "star items are read here",
                "plus items are read here",
                "dot numbered items are read",
                "paren numbered items are read",
                "two digit numbers are read",
            ],
        );
        assert_eq!(lines_of(md), vec![1, 2, 3, 4, 5, 6]);
    }

    #[test]
    fn checklist_items() {
        let md = "- [ ] the migration is not reversible\n- [x] the index covers the new query\n* [X] the flag defaults to off";
        assert_texts(
            md,
            &[
                "the migration is not reversible",
                "the index covers the new query",
                "the flag defaults to off",
            ],
        );
    }

    #[test]
    fn not_bullets() {
        // Emphasis, a signed number and a rule are not bullets; as
        // paragraphs they are short of words or not findings.
        assert_texts("**bold** start", &[]);
        assert_texts("-5 degrees", &[]);
        assert_texts("* * *\n- - -\n___", &[]);
        assert_texts("-\n1.\n+", &[]);
    }

    #[test]
    fn continuation_lines_join_their_bullet() {
        let md = "- The cache key must include\n  the tenant id\n    and the region.\n- Second item stands on its own.";
        assert_text_lines(
            md,
            &[
                (
                    "The cache key must include the tenant id and the region.",
                    1,
                ),
                ("Second item stands on its own.", 4),
            ],
        );
        // Tabs indent too; a numbered item's continuation.
        assert_texts(
            "1. Retries are unbounded\n\twhen the server returns 503.",
            &["Retries are unbounded when the server returns 503."],
        );
    }

    #[test]
    fn unindented_or_blank_ends_a_bullet() {
        let md = "- The first bullet is complete\nThis line is a paragraph of its own.\n- Another bullet item here\n\n  an indented paragraph after a blank line.";
        assert_texts(
            md,
            &[
                "The first bullet is complete",
                "This line is a paragraph of its own.",
                "Another bullet item here",
                "an indented paragraph after a blank line.",
            ],
        );
    }

    #[test]
    fn nested_bullets_are_their_own_items() {
        let md = "- The parent item is about caching\n  - the child item is about eviction\n  - another child about cache warming";
        assert_texts(
            md,
            &[
                "The parent item is about caching",
                "the child item is about eviction",
                "another child about cache warming",
            ],
        );
    }

    #[test]
    fn finding_lines() {
        for md in [
            "Finding: the lock is held across await",
            "Issue: the lock is held across await",
            "**Finding 3**: the lock is held across await",
            "**Finding 3:** the lock is held across await",
            "Issue #2 - the lock is held across await",
            "Risk (high): the lock is held across await",
            "Concern 1. the lock is held across await",
            "BUG: the lock is held across await",
            "- **Issue 1**: the lock is held across await",
        ] {
            assert_texts(md, &["the lock is held across await"]);
        }
        // The label may stand alone, the finding on the next lines.
        assert_texts(
            "**Finding 1:**\nThe lock is held\nacross an await point.",
            &["The lock is held across an await point."],
        );
    }

    #[test]
    fn finding_label_near_misses() {
        // Not labels: the text is kept whole.
        for md in [
            "Issue-tracking links are missing from the changelog",
            "Issues with the cache are not covered by tests",
            "Issue. This sentence starts with the word issue",
        ] {
            assert_texts(md, &[md]);
        }
    }

    #[test]
    fn a_long_finding_is_kept_a_long_paragraph_is_not() {
        let body = "the handler retries forever ".repeat(10);
        assert!(body.len() > MAX_PARAGRAPH_CHARS && body.len() < MAX_CHARS);
        assert_eq!(texts(&format!("Finding: {body}")).len(), 1);
        assert_eq!(texts(&format!("- {body}")).len(), 1);
        assert_texts(&body, &[]);
    }

    #[test]
    fn short_paragraphs_are_findings() {
        let md = "The handler swallows the timeout error.\n\nThe retry loop\nhas no upper bound.";
        assert_text_lines(
            md,
            &[
                ("The handler swallows the timeout error.", 1),
                ("The retry loop has no upper bound.", 3),
            ],
        );
    }

    #[test]
    fn prose_sections_hold_no_paragraph_findings() {
        let md = "## Summary\nThe change adds caching to the resolver.\n- but bullets in a summary still count\n\n## Findings\nThe retry loop has no upper bound.";
        assert_texts(
            md,
            &[
                "but bullets in a summary still count",
                "The retry loop has no upper bound.",
            ],
        );
        // Labels and setext headings open sections too.
        let md = "**Summary**\nThe change adds caching to the resolver.\n\nOverview:\nThe change adds caching to the resolver.\n\nTL;DR\n=====\nThe change adds caching to the resolver.\n\nDetails\n-------\nThe retry loop has no upper bound.";
        assert_texts(md, &["The retry loop has no upper bound."]);
    }

    // --- extract: what is not read -----------------------------------------

    #[test]
    fn wrap_ups_are_not_observations() {
        for md in [
            "Looks good to me overall, thanks for the work!",
            "This looks good to me, ship it when CI is green.",
            "Seems fine to me after the second round of fixes.",
            "All good from my side, nothing blocking here.",
            "No further comments from me on this change.",
            "Nothing else to add, the plan is ready to go.",
            "That's all I have for this round of review.",
            "Excellent work on the migration and its tests.",
        ] {
            assert_texts(md, &[]);
        }
        // A finding that merely contains the words is kept.
        for md in [
            "The handler looks good on paper but drops errors.",
            "- Looks good is not a test: the retry path has none.",
        ] {
            assert_eq!(texts(md).len(), 1, "{md:?}");
        }
    }

    #[test]
    fn boilerplate_is_not_observations() {
        for md in [
            "Hello, I have looked at the whole change.",
            "Hi! Here is what I found in this change.",
            "Thanks! That is all from me for today.",
            "Here is my review of the pull request.",
            "I have reviewed the diff and the tests.",
            "Great work on this change, nicely done.",
            "Hello team — here is my audit of the plan.",
            "Thanks for the thorough plan and the diagrams.",
            "Overall this is a solid plan but needs the fixes above.",
            "Overall, the change is ready once the fixes above are in.",
            "Overall: the change is ready once the fixes above are in.",
            "Overall, it's close; the two fixes above are all it needs.",
            "Overall the PR is in good shape apart from the nits above.",
            "Overall, looks good once the cache key includes the tenant.",
            "Overall, a solid refactor with a couple of rough edges.",
            "Overall:",
            "In summary the change is safe to merge today.",
            "Summary",
            "**Findings:**",
            "Recommendations for the author:",
            "Verdict: PASS",
            "**Verdict:** FAIL",
            "Final verdict - approved.",
            "- Verdict: PASS ✅",
            "KNOWLEDGE_APPLIED:cache-keys",
            "- `KNOWLEDGE_IGNORED:abc reason=not relevant to this diff at all`",
            "VERIFIED:abc evidence=tests pass in the ci run",
            "PATTERN_ACK: p0123 was applied in this review",
            "---",
            "***",
            "|---|:---:|",
            "> You must report every finding as a bullet item.",
            "<!-- jkz:verdict-json {\"verdict\": \"PASS\"} -->",
        ] {
            assert_texts(md, &[]);
        }
    }

    #[test]
    fn boilerplate_near_misses_are_read() {
        for md in [
            "OK responses must include a body",
            "Overall latency grows by a fifth under load",
            "Overall throughput drops when the cache is cold",
            "Overall, the retry loop leaks a connection on every timeout",
            "Overall the p99 latency doubles when the cache is cold",
            "Overall: the tenant id is missing from every cache key",
            "Here the lock is taken twice in a row",
            "Verdict: FAIL because the cache leaks across tenants",
            "The status code is wrong for empty results",
            "tenant_id: must be set on every query",
        ] {
            assert_eq!(texts(md).len(), 1, "{md:?}");
        }
        // A bullet continuing an ack line is swallowed with it.
        assert_texts(
            "- KNOWLEDGE_APPLIED:abc\n  applied to the whole of the cache layer",
            &[],
        );
    }

    #[test]
    fn short_and_long_observations_are_dropped() {
        assert_texts("- too short here", &[]);
        assert_texts("- **just** four words here", &["just four words here"]);
        let long = format!("- {}", "word ".repeat(81));
        assert!(long.trim().len() > MAX_CHARS);
        assert_texts(&long, &[]);
        let fits = format!("- {}", "word ".repeat(79));
        assert_eq!(texts(&fits).len(), 1);
    }

    #[test]
    fn duplicates_keep_the_first() {
        let md = "- The cache key must include the tenant.\n- the CACHE key must   include the **tenant**\n- `The cache key must include the tenant`";
        let got = extract(md).expect("valid test input");
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].line, 1);
        assert_eq!(got[0].text, "The cache key must include the tenant.");
    }

    #[test]
    fn markup_is_stripped_from_text() {
        for (md, want) in [
            (
                "- **Never** call `unwrap()` on _user_ input",
                "Never call unwrap() on user input",
            ),
            (
                "- See [the docs](https://x.dev/a \"t\") for the ~~old~~ rules",
                "See the docs for the old rules",
            ),
            (
                "- ![diagram](a.png) shows the [flow][ref] of <https://x.dev> here",
                "diagram shows the flow of https://x.dev here",
            ),
            (
                "- keep snake_case and `__init__` and 2*3 as written",
                "keep snake_case and __init__ and 2*3 as written",
            ),
            (
                "- an escaped \\*star\\* stays in the text",
                "an escaped *star* stays in the text",
            ),
            (
                "- [`Foo::bar`](https://docs.rs/x) panics on empty input",
                "Foo::bar panics on empty input",
            ),
        ] {
            assert_texts(md, &[want]);
        }
    }

    #[test]
    fn empty_and_observation_free_input() {
        for md in [
            "",
            "\n\n  \r\n",
            "# Title\n## Section\n### Sub",
            "Verdict: PASS\n",
        ] {
            assert_eq!(extract(md).expect("valid test input"), vec![], "{md:?}");
        }
    }

    // --- extract: malformed input ------------------------------------------

    #[test]
    fn a_nul_byte_is_an_error_on_its_line() {
        let e = err("- fine line\n- second line\nbad \0 line");
        assert_eq!(e.line, 3);
        assert!(e.message.contains("NUL"), "{e}");
        assert_eq!(err("\0").line, 1);
    }

    #[test]
    fn metadata_fields_are_not_part_of_a_finding() {
        let md = "**Finding 1**: The lock is held across an await.\n**Severity**: high\n**Location:** src/a.rs:12\nSeverity: medium\n**Impact**: requests stall under load for seconds.\n- Location: src/b.rs:40 in the handler\n- File: src/c.rs is touched here";
        assert_text_lines(
            md,
            &[
                ("The lock is held across an await.", 1),
                ("Impact: requests stall under load for seconds.", 5),
            ],
        );
        // Near miss: a word that starts like a field.
        assert_texts(
            "Typed errors: every module defines its own enum",
            &["Typed errors: every module defines its own enum"],
        );
    }
}
