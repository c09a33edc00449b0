//! Reading the markdown of the pattern loop: an adversarial role's
//! deliberation and the verdict its validator writes about it.
//!
//! Everything here is pure: text in, values out, no I/O. [`extract`],
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
//! # What [`extract`] reads
//!
//! Lines are split on `\n` (a trailing `\r` is dropped) and numbered from 1.
//!
//! - **Bullet items** (`-`, `*`, `+`, `1.`, `1)`), checklist items
//!   (`- [ ]`, `- [x]`) included. A following line indented deeper than
//!   the item's marker joins the item; a blank line, another bullet or an
//!   unindented line ends it. Nested bullets are items of their own.
//! - **Finding lines**: a line (or bullet) starting with a label such as
//!   `Finding:`, `Issue 2:`, `**Finding 3**:`, `Risk (high) - …`
//!   (`finding`, `issue`, `problem`, `concern`, `risk`, `bug`, `blocker`,
//!   `defect`, `observation`, any case, optionally numbered). The label is
//!   dropped; following lines up to a blank line join the finding.
//! - **Short paragraphs**: other runs of text lines, when at most 240
//!   characters long, not opening with a greeting or a wrap-up (`Hi,`,
//!   `Thanks for …`, `Here is my review`, `I have reviewed …`,
//!   `Overall, …`, `In summary …`, `Looks good …`, `This seems fine …`,
//!   `All good`, `No further comments …`, `Nothing else to add`,
//!   `That's all …`), and not under a heading or label that
//!   introduces prose (`Summary`, `Overview`, `Context`, `Background`,
//!   `Introduction`, `TL;DR`, `Description`, `Verdict`, `Conclusion`). A
//!   line opening with a bold key (`**Impact**: …`) starts a paragraph.
//!
//! Never read: YAML front matter (a first line `---`, then `key:` lines,
//! up to a `---` or `...` line), headings (ATX, and setext: the whole
//! paragraph above the underline), label-only lines (`Findings:`,
//! `**Summary**`, a line of one or two words on its own), metadata fields
//! (`Severity: high`, `**Location**: src/a.rs:3`, `File:`, `Id:`, …),
//! horizontal rules, tables (rows and separators), blockquotes, fenced
//! code blocks, indented code blocks, html comments
//! (`<!-- jkz:verdict-json … -->` included, across lines), html blocks (a
//! line opening with a block-level tag such as `<details>` or `</div>`, or
//! a line of one tag of any name outside a paragraph, up to a blank line;
//! `<pre>`, `<script>`, `<style>`, `<textarea>` up to their closing tag),
//! verdict lines
//! (`Verdict: PASS`, `Status - approved`) and ack lines
//! (`KNOWLEDGE_APPLIED:abc`, `VERIFIED:abc`, any `UPPER_SNAKE:` marker).
//!
//! Each observation's `text` has links replaced by their text, emphasis
//! and code backticks removed (code content kept verbatim) and whitespace
//! collapsed. An observation is dropped when its normalised text has fewer
//! than 4 words (stop words count) or its text is over 400 characters
//! (dropped, not cut: a cut text would hash differently on every run).
//! Within one deliberation the first of several observations with the same
//! normalised text is kept.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::LazyLock;

use regex::Regex;
use serde::de::{Deserializer, Error as _, Unexpected};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use unicode_segmentation::UnicodeSegmentation;

/// Fewest words (stop words included) an observation's normalised text has.
pub const MIN_WORDS: usize = 4;
/// Most characters an observation's text has.
pub const MAX_CHARS: usize = 400;
/// Most characters a plain paragraph has to count as a finding.
pub const MAX_PARAGRAPH_CHARS: usize = 240;
/// Most characters of [`Evidence::excerpt`].
pub const MAX_EXCERPT_CHARS: usize = 120;

/// What kind of knowledge an observation carries. Rules weigh more than
/// causal links, which weigh more than plain observations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    Rule,
    Causal,
    Observation,
}

impl Category {
    pub fn as_str(&self) -> &'static str {
        match self {
            Category::Rule => "rule",
            Category::Causal => "causal",
            Category::Observation => "observation",
        }
    }
}

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
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct TextError {
    /// 1-based line of the problem.
    pub line: usize,
    pub message: String,
}

impl TextError {
    fn new(line: usize, message: impl Into<String>) -> TextError {
        TextError {
            line,
            message: message.into(),
        }
    }
}

// ---------------------------------------------------------------------------
// Extraction
// ---------------------------------------------------------------------------

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
    let mut ex = Extractor::default();
    let skip = front_matter_end(markdown).unwrap_or(0);
    for (n, line) in lines(markdown).skip(skip) {
        ex.line(n, line);
    }
    if let Some(f) = ex.fence {
        return Err(TextError::new(
            f.line,
            format!("code fence {} is never closed", f.quoted()),
        ));
    }
    if let Some(line) = ex.comment {
        return Err(TextError::new(line, "html comment `<!--` is never closed"));
    }
    ex.flush();
    Ok(ex.out)
}

#[derive(Default)]
struct Extractor {
    fence: Option<Fence>,
    /// The line where the open html comment started.
    comment: Option<usize>,
    /// An open html block, and what ends it.
    html: Option<HtmlEnd>,
    /// The open paragraph in the CommonMark sense: its lines, and where its
    /// observations start in `out` (a setext underline takes them back).
    para: Option<Para>,
    block: Option<Block>,
    /// Indentation of the last bullet, while its list goes on: indented
    /// lines there are list content, not indented code.
    list_indent: Option<usize>,
    /// After a table separator, until a blank line.
    in_table: bool,
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
    /// Boilerplate (an ack or verdict bullet): swallow the lines, keep none.
    skip: bool,
    /// The id the deliberation gave the finding (`S3`, `Finding 3`).
    label: Option<String>,
}

struct Para {
    out_len: usize,
    lines: Vec<String>,
}

/// What ends an html block (CommonMark's block kinds 1, 6 and 7).
#[derive(Clone, Copy, PartialEq, Eq)]
enum HtmlEnd {
    /// A blank line.
    Blank,
    /// A line holding `</tag>` (`script`, `pre`, `style`, `textarea`).
    Close(&'static str),
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum BlockKind {
    Item { indent: usize },
    Finding,
    Paragraph { greeting: bool },
}

impl Extractor {
    fn line(&mut self, n: usize, raw: &str) {
        if let Some(f) = self.fence {
            if fence_closes(raw, f) {
                self.fence = None;
            }
            return;
        }
        let live = strip_comments(raw, n, &mut self.comment);
        let t = live.trim();
        match self.html {
            Some(HtmlEnd::Blank) if t.is_empty() => self.html = None,
            Some(HtmlEnd::Close(tag)) => {
                if closes_html(raw, tag) {
                    self.html = None;
                }
                return;
            }
            Some(HtmlEnd::Blank) => return,
            None => {}
        }
        // The open paragraph, kept below only if this line goes on with it.
        let para = self.para.take();
        if t.is_empty() {
            self.flush();
            self.in_table = false;
            return;
        }
        let indent = indent_width(&live);
        if let Some((ch, len, _)) = fence_open(&live) {
            self.flush();
            self.fence = Some(Fence { ch, len, line: n });
            return;
        }
        if indent >= 4 && self.block.is_none() && self.list_indent.is_none() && para.is_none() {
            return; // indented code
        }
        if t.starts_with('>') {
            self.flush();
            return;
        }
        if let Some(end) = html_block(&live, para.is_some()) {
            self.flush();
            self.list_indent = None;
            if let HtmlEnd::Close(tag) = end
                && closes_html(raw, tag)
            {
                return;
            }
            self.html = Some(end);
            return;
        }
        if let Some(title) = atx_heading(&live) {
            self.flush();
            self.list_indent = None;
            self.set_section(title);
            return;
        }
        if let Some(ch) = underline(t) {
            if let Some(p) = &para
                && (ch == '=' || t.len() >= 2)
            {
                // Setext heading: the whole paragraph above is its title,
                // and none of it is an observation.
                for o in self.out.drain(p.out_len..) {
                    self.seen.remove(&o.normalised);
                }
                self.block = None;
                self.set_section(&p.lines.join(" "));
                self.list_indent = None;
                return;
            }
            if ch == '=' {
                return;
            }
        }
        if THEMATIC_BREAK.is_match(&live) {
            self.flush();
            self.list_indent = None;
            return;
        }
        if is_table_separator(t) {
            // The paragraph above was the table's header row.
            if matches!(
                self.block.as_ref().map(|b| b.kind),
                Some(BlockKind::Paragraph { .. })
            ) {
                self.block = None;
            }
            self.flush();
            self.in_table = true;
            return;
        }
        if t.starts_with('|') || (self.in_table && t.contains('|')) {
            self.flush();
            return;
        }
        if let Some((marker_indent, content)) = bullet(&live) {
            self.flush();
            self.list_indent = Some(marker_indent);
            let content = CHECKBOX
                .find(content)
                .map_or(content, |m| &content[m.end()..]);
            let cleaned = clean_inline(content);
            let skip =
                is_ack_line(&cleaned) || is_verdict_line(&cleaned) || META_FIELD.is_match(&cleaned);
            let (label, content) = labelled(content).unwrap_or((None, content));
            self.block = Some(Block {
                kind: BlockKind::Item {
                    indent: marker_indent,
                },
                line: n,
                parts: vec![content.trim().to_owned()],
                skip,
                label,
            });
            return;
        }
        if let Some(Block {
            kind: BlockKind::Item { indent: item },
            parts,
            ..
        }) = &mut self.block
            && indent > *item
        {
            parts.push(t.to_owned());
            return;
        }
        if self.list_indent.is_some_and(|l| indent <= l) {
            self.list_indent = None;
        }
        // From here on the line is paragraph text, in the CommonMark sense.
        let mut para = para.unwrap_or_else(|| {
            self.flush();
            Para {
                out_len: self.out.len(),
                lines: Vec::new(),
            }
        });
        para.lines.push(t.to_owned());
        self.para = Some(para);
        let cleaned = clean_inline(t);
        if is_ack_line(&cleaned) || is_verdict_line(&cleaned) {
            self.flush();
            return;
        }
        if META_FIELD.is_match(&cleaned) {
            self.flush();
            return;
        }
        if let Some((label, rest)) = labelled(t) {
            self.flush();
            self.block = Some(Block {
                kind: BlockKind::Finding,
                line: n,
                parts: vec![rest.trim().to_owned()],
                skip: false,
                label,
            });
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
            self.flush();
            self.block = Some(Block {
                kind: BlockKind::Paragraph { greeting: false },
                line: n,
                parts: vec![t.to_owned()],
                skip: false,
                label: None,
            });
            return;
        }
        if in_text && let Some(b) = &mut self.block {
            b.parts.push(t.to_owned());
            return;
        }
        self.flush();
        self.block = Some(Block {
            kind: BlockKind::Paragraph {
                greeting: GREETING.is_match(&cleaned.to_lowercase()),
            },
            line: n,
            parts: vec![t.to_owned()],
            skip: false,
            label: None,
        });
    }

    fn set_section(&mut self, title: &str) {
        let norm = normalise(title);
        self.prose_section =
            norm.unicode_words().any(|w| PROSE_SECTIONS.contains(&w)) || norm.contains("tl;dr");
    }

    fn flush(&mut self) {
        let Some(b) = self.block.take() else { return };
        if b.skip {
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

static THEMATIC_BREAK: LazyLock<Regex> =
    LazyLock::new(|| regex(r"^ {0,3}(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})$"));

static ATX_HEADING: LazyLock<Regex> =
    LazyLock::new(|| regex(r"^ {0,3}#{1,6}(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$"));

static FINDING_LABEL: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?xi)^
        (?:\*\*|__)?[\x20\t]*
        (?:finding|issue|problem|concern|risk|bug|blocker|defect|observation)s?
        (?:[\x20\t]*\#?([0-9]{1,6}))?
        [\x20\t]*(?:\([^()]{0,40}\)|\[[^\[\]]{0,40}\])?
        [\x20\t]*(?:\*\*|__)?[\x20\t]*
        (:|[.)]|[-–—](?:[\x20\t]|$))
        [\x20\t]*(?:\*\*|__)?[\x20\t]*",
    )
});

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

/// Block-level html tags (CommonMark's html block kind 6).
const HTML_BLOCK_TAGS: [&str; 62] = [
    "address",
    "article",
    "aside",
    "base",
    "basefont",
    "blockquote",
    "body",
    "caption",
    "center",
    "col",
    "colgroup",
    "dd",
    "details",
    "dialog",
    "dir",
    "div",
    "dl",
    "dt",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "frame",
    "frameset",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "head",
    "header",
    "hr",
    "html",
    "iframe",
    "legend",
    "li",
    "link",
    "main",
    "menu",
    "menuitem",
    "nav",
    "noframes",
    "ol",
    "optgroup",
    "option",
    "p",
    "param",
    "search",
    "section",
    "summary",
    "table",
    "tbody",
    "td",
    "tfoot",
    "th",
    "thead",
    "title",
    "tr",
    "track",
    "ul",
];

/// Tags whose html block runs to their closing tag (CommonMark kind 1).
const HTML_RAW_TAGS: [&str; 4] = ["script", "pre", "style", "textarea"];

/// The tag name a line opens with: `<name` or `</name`, up to 3 spaces
/// of indentation, and whether it is a closing tag.
static HTML_TAG_START: LazyLock<Regex> =
    LazyLock::new(|| regex(r"^ {0,3}<(/?)([A-Za-z][A-Za-z0-9-]*)(?:[ \t>]|/>|$)"));

/// A line of one complete open or closing tag (CommonMark kind 7).
static HTML_LONE_TAG: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r#"^ {0,3}(?:<[A-Za-z][A-Za-z0-9-]*(?:[ \t]+[A-Za-z_:][A-Za-z0-9_.:-]*(?:[ \t]*=[ \t]*(?:[^ \t"'=<>`]+|'[^']*'|"[^"]*"))?)*[ \t]*/?>|</[A-Za-z][A-Za-z0-9-]*[ \t]*>)[ \t]*$"#,
    )
});

/// Does `line` start an html block, and what ends it? A line opening
/// with a block-level tag (`<details>`, `</div>`, …) starts one that ends
/// at a blank line, as does a line of one complete tag of any name when
/// it does not interrupt a paragraph; `<pre>`, `<script>`, `<style>` and
/// `<textarea>` run to their closing tag.
fn html_block(line: &str, in_paragraph: bool) -> Option<HtmlEnd> {
    let c = HTML_TAG_START.captures(line)?;
    let name = c.get(2).map_or("", |m| m.as_str()).to_ascii_lowercase();
    let closing = c.get(1).is_some_and(|m| !m.as_str().is_empty());
    if !closing && let Some(raw) = HTML_RAW_TAGS.iter().find(|t| **t == name) {
        return Some(HtmlEnd::Close(raw));
    }
    if HTML_BLOCK_TAGS.contains(&name.as_str())
        || (!in_paragraph
            && !HTML_RAW_TAGS.contains(&name.as_str())
            && HTML_LONE_TAG.is_match(line))
    {
        return Some(HtmlEnd::Blank);
    }
    None
}

/// Does `line` hold `</tag>` (any case)?
fn closes_html(line: &str, tag: &str) -> bool {
    line.to_ascii_lowercase().contains(&format!("</{tag}>"))
}

/// The line that closes a YAML front matter block at the very start of a
/// deliberation: line 1 is `---` (after a byte order mark, if any), the
/// next line opens a mapping (`key:`), and the block ends at the next line
/// that is `---` or `...`. `None` when there is no front matter, or it
/// never closes (then the `---` is a horizontal rule).
fn front_matter_end(text: &str) -> Option<usize> {
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
fn nul_line(text: &str) -> Option<usize> {
    let at = text.find('\0')?;
    Some(text[..at].matches('\n').count() + 1)
}

/// Lines numbered from 1, split on `\n`, a trailing `\r` dropped.
fn lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.split('\n')
        .enumerate()
        .map(|(i, l)| (i + 1, l.strip_suffix('\r').unwrap_or(l)))
}

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

fn atx_heading(line: &str) -> Option<&str> {
    let c = ATX_HEADING.captures(line)?;
    Some(c.get(1).map_or("", |m| m.as_str()))
}

/// A line of only `=` or only `-`: a setext underline candidate.
fn underline(t: &str) -> Option<char> {
    ['=', '-']
        .into_iter()
        .find(|&ch| t.chars().all(|c| c == ch))
}

fn is_table_separator(t: &str) -> bool {
    t.contains('|') && t.contains('-') && t.chars().all(|c| "|:- \t".contains(c))
}

/// A finding's id at the start of a line: `S3:`, `**S3**`, `[S3]`,
/// `H-12.` — one to three capital letters and a number, bold, bracketed or
/// followed by `:`, `.`, `)` or a dash.
static ID_LABEL: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?x)^[\x20\t]*(?:
          (?:\*\*|__)\[?([A-Z]{1,3}-?[0-9]{1,4})\]?[\x20\t]*:?[\x20\t]*(?:\*\*|__)
            [\x20\t]*(?:[:.)]|[-–—](?:[\x20\t]|$))?
        | \[([A-Z]{1,3}-?[0-9]{1,4})\][\x20\t]*(?:[:.)]|[-–—](?:[\x20\t]|$))?
        | ([A-Z]{1,3}-?[0-9]{1,4})(?::|[.)][\x20\t]|[\x20\t]+[-–—](?:[\x20\t]|$))
        )[\x20\t]*",
    )
});

/// A false positive that is only a finding's id: `S3`, `**S3**`,
/// `[S3]`, `Finding 3`, `finding #3:`, `#3`, `Finding S3`.
static LABEL_ONLY: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?xi)^[\x20\t]*(?:\*\*|__)?[\x20\t]*[\[(]?[\x20\t]*
        (?:(?:finding|issue|problem|concern|risk|bug|blocker|defect|observation)[\x20\t]*)?
        (?:[a-z]{1,3}-?[0-9]{1,4}|\#?[0-9]{1,6})
        [\x20\t]*[\])]?[\x20\t]*(?:\*\*|__)?[\x20\t]*[:.]?[\x20\t]*$",
    )
});

/// A [`label_key`] without the word that names it a finding: `Finding 3`,
/// `issue #3` and `#3` all name finding `3`, `Finding S3` names `s3`.
fn bare_label(key: &str) -> &str {
    const WORDS: [&str; 9] = [
        "finding",
        "issue",
        "problem",
        "concern",
        "risk",
        "bug",
        "blocker",
        "defect",
        "observation",
    ];
    key.split_once(' ')
        .filter(|(word, _)| WORDS.contains(&word.trim_end_matches('s')))
        .map_or(key, |(_, rest)| rest)
}

/// How a finding's id is compared: lowercase letters and digits, with one
/// space between a word and a number (`**S-3**` and `s3` are `s3`;
/// `Finding #3` is `finding 3`).
pub fn label_key(label: &str) -> String {
    let mut out = String::new();
    for word in label
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        let long_word = out.chars().filter(|c| c.is_alphabetic()).count() > 3;
        if !out.is_empty() && long_word {
            out.push(' ');
        }
        out.push_str(&word.to_lowercase());
    }
    out
}

/// The finding's id (if it has one) and the text after its label, or
/// `None` when `t` opens with no label.
fn labelled(t: &str) -> Option<(Option<String>, &str)> {
    if let Some(c) = ID_LABEL.captures(t) {
        let id = c
            .get(1)
            .or(c.get(2))
            .or(c.get(3))
            .map(|m| label_key(m.as_str()));
        let end = c.get(0).map_or(0, |m| m.end());
        return Some((id, &t[end..]));
    }
    let rest = finding_label(t)?;
    let id = FINDING_LABEL
        .captures(t)
        .and_then(|c| c.get(1))
        .map(|n| label_key(&t[..n.end()]));
    Some((id, rest))
}

/// The text after a finding label, or `None` when `t` has no label.
fn finding_label(t: &str) -> Option<&str> {
    let c = FINDING_LABEL.captures(t)?;
    let sep = c.get(2).map_or("", |m| m.as_str());
    // `Issue. …` is a sentence; `Issue 3. …` is a numbered finding.
    if (sep == "." || sep == ")") && c.get(1).is_none() {
        return None;
    }
    let end = c.get(0).map_or(0, |m| m.end());
    Some(&t[end..])
}

fn is_ack_line(cleaned: &str) -> bool {
    ACK_LINE.is_match(cleaned)
}

fn is_verdict_line(cleaned: &str) -> bool {
    VERDICT_LINE.is_match(cleaned)
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

// ---------------------------------------------------------------------------
// Fences, comments, code spans
// ---------------------------------------------------------------------------

#[derive(Debug, Clone, Copy)]
struct Fence {
    ch: u8,
    len: usize,
    line: usize,
}

impl Fence {
    fn marker(&self) -> String {
        char::from(self.ch).to_string().repeat(self.len)
    }

    /// The fence run in double quotes, for messages: `"```"`.
    fn quoted(&self) -> String {
        format!("\"{}\"", self.marker())
    }
}

/// A fence opening line, CommonMark style at any indentation: the fence
/// character, the run length and the info string.
fn fence_open(line: &str) -> Option<(u8, usize, &str)> {
    let t = line.trim_start();
    let ch = *t.as_bytes().first()?;
    if ch != b'`' && ch != b'~' {
        return None;
    }
    let len = t.bytes().take_while(|&b| b == ch).count();
    if len < 3 {
        return None;
    }
    let info = t[len..].trim();
    if ch == b'`' && info.contains('`') {
        return None; // inline code, not a fence
    }
    Some((ch, len, info))
}

fn fence_closes(line: &str, fence: Fence) -> bool {
    let t = line.trim();
    t.len() >= fence.len && t.bytes().all(|b| b == fence.ch)
}

/// `line` without its html comments. `open` is the line where a comment
/// left open by an earlier line started; it is updated for the next line.
fn strip_comments(line: &str, n: usize, open: &mut Option<usize>) -> String {
    let mut out = String::new();
    let mut rest = line;
    loop {
        if open.is_some() {
            match rest.find("-->") {
                Some(i) => {
                    *open = None;
                    rest = &rest[i + 3..];
                    out.push(' ');
                }
                None => return out,
            }
        } else {
            match find_outside_code(rest, "<!--") {
                Some(i) => {
                    out.push_str(&rest[..i]);
                    *open = Some(n);
                    rest = &rest[i + 4..];
                }
                None => {
                    out.push_str(rest);
                    return out;
                }
            }
        }
    }
}

/// Inline code spans of one line: start of the opening backtick run, its
/// length, start of the matching closing run (CommonMark: the next run of
/// the same length).
fn code_spans(s: &str) -> Vec<(usize, usize, usize)> {
    let b = s.as_bytes();
    let mut runs = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'`' {
            let len = b[i..].iter().take_while(|&&c| c == b'`').count();
            runs.push((i, len));
            i += len;
        } else {
            i += 1;
        }
    }
    let mut by_len: HashMap<usize, Vec<usize>> = HashMap::new();
    for (k, &(_, len)) in runs.iter().enumerate() {
        by_len.entry(len).or_default().push(k);
    }
    let mut spans = Vec::new();
    let mut k = 0;
    while k < runs.len() {
        let (start, len) = runs[k];
        let same = by_len.get(&len).map_or(&[][..], Vec::as_slice);
        match same.get(same.partition_point(|&x| x <= k)) {
            Some(&close) => {
                spans.push((start, len, runs[close].0));
                k = close + 1;
            }
            None => k += 1,
        }
    }
    spans
}

/// First `pat` in `s` that is not inside an inline code span.
fn find_outside_code(s: &str, pat: &str) -> Option<usize> {
    let mut from = 0;
    for (open, len, close) in code_spans(s) {
        if let Some(i) = s[from..open].find(pat) {
            return Some(from + i);
        }
        from = close + len;
    }
    s[from..].find(pat).map(|i| from + i)
}

// ---------------------------------------------------------------------------
// Inline markup, normalisation, classification, tokens
// ---------------------------------------------------------------------------

static LINK: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r#"!?\[([^\[\]]*)\]\([^()\s]*(?:\s+"[^"]*")?\)|\[([^\[\]]+)\]\[[^\[\]]*\]|<((?:https?|ftp|mailto):[^<>\s]+)>"#,
    )
});

/// Links and images replaced by their text, innermost first.
fn replace_links(s: &str) -> String {
    let mut s = s.to_owned();
    // Nesting deeper than this is not markdown anyone writes; stopping
    // keeps the work linear.
    for _ in 0..8 {
        let next = LINK.replace_all(&s, "${1}${2}${3}");
        if next == s {
            break;
        }
        s = next.into_owned();
    }
    s
}

/// `s` with emphasis (`*`, `_`, `~~`) and stray backticks removed, and
/// backslash escapes too when `escapes`; the `spans` (see [`code_spans`])
/// keep their content verbatim without their backticks.
fn strip_markup(s: &str, spans: &[(usize, usize, usize)], escapes: bool, out: &mut String) {
    let mut spans = spans.iter().peekable();
    let mut i = 0;
    while i < s.len() {
        if let Some(&&(open, len, close)) = spans.peek()
            && i == open
        {
            out.push_str(&s[open + len..close]);
            i = close + len;
            spans.next();
            continue;
        }
        let Some(c) = s[i..].chars().next() else {
            break;
        };
        match c {
            '\\' if escapes => match s[i + 1..].chars().next() {
                Some(next) if next.is_ascii_punctuation() => {
                    out.push(next);
                    i += 2;
                }
                _ => {
                    out.push('\\');
                    i += 1;
                }
            },
            '`' => i += 1,
            '*' | '_' | '~' => {
                let run = s[i..].bytes().take_while(|&b| b == c as u8).count();
                let prev = s[..i].chars().next_back();
                let next = s[i + run..].chars().next();
                if keep_run(c, run, prev, next) {
                    out.push_str(&s[i..i + run]);
                }
                i += run;
            }
            _ => {
                out.push(c);
                i += c.len_utf8();
            }
        }
    }
}

/// Is a run of `*`, `_` or `~` text rather than emphasis?
fn keep_run(c: char, run: usize, prev: Option<char>, next: Option<char>) -> bool {
    let space = |o: Option<char>| o.is_none_or(char::is_whitespace);
    if space(prev) && space(next) {
        return true; // `a * b`, a lone `_`
    }
    let alnum = |o: Option<char>| o.is_some_and(char::is_alphanumeric);
    match c {
        '_' => alnum(prev) && alnum(next), // snake_case
        '*' => run == 1 && prev.is_some_and(|p| p.is_ascii_digit()) && alnum(next),
        _ => run != 2, // only `~~` is strikethrough
    }
}

fn collapse_whitespace(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Readable text of markdown: links by their text, emphasis and code
/// backticks removed (code content kept as is), whitespace collapsed.
fn clean_inline(s: &str) -> String {
    let s = replace_links(s);
    let mut out = String::with_capacity(s.len());
    strip_markup(&s, &code_spans(&s), true, &mut out);
    collapse_whitespace(&out)
}

/// `s` without the backslashes that escape ASCII punctuation. Each
/// backslash looks at the character after it as written, so `\\\\*`
/// loses both: escapes are markup too, and dropping them all at once keeps
/// [`normalise`] idempotent.
fn drop_escapes(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        let escape = c == '\\' && chars.peek().is_some_and(char::is_ascii_punctuation);
        if !escape {
            out.push(c);
        }
    }
    out
}

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
    let linked = replace_links(&drop_escapes(text));
    let mut plain = String::with_capacity(linked.len());
    // Escapes are gone already: an escaped `*` is as much markup as any.
    strip_markup(&linked, &[], false, &mut plain);
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
/// imperative marker as a whole word (`must`, `must not`, `mustn't`,
/// `never`, `always`, `should`, `shouldn't`, `shall`, `do not`, `don't`,
/// `required`, `forbidden`, `prohibited`, `mandatory`, `avoid`); else
/// causal if it holds a causal marker (`because`, `causes`, `caused`,
/// `leads to`, `results in`, `due to`, `so that`, `therefore`,
/// `which means`, `hence`, `thus`, `as a result`, `consequently`, …); else
/// an observation. `alwaysOn`, `always_on` and `always-on` are not
/// `always`.
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
/// of `role`, a NUL byte, and the bytes of `normalised`; that is, the high
/// 64 bits of the hash as 16 hex digits.
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

fn regex(pattern: &str) -> Regex {
    Regex::new(pattern).expect("a constant pattern compiles")
}

// ---------------------------------------------------------------------------
// Verdicts
// ---------------------------------------------------------------------------

/// A validator's overall verdict. Serialized as `"PASS"` / `"FAIL"`; read
/// in any letter case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum VerdictKind {
    Pass,
    Fail,
}

impl VerdictKind {
    /// `PASS` or `FAIL` in any letter case, surrounding whitespace ignored.
    pub fn parse(s: &str) -> Option<VerdictKind> {
        let s = s.trim();
        if s.eq_ignore_ascii_case("pass") {
            Some(VerdictKind::Pass)
        } else if s.eq_ignore_ascii_case("fail") {
            Some(VerdictKind::Fail)
        } else {
            None
        }
    }

    pub fn as_str(&self) -> &'static str {
        match self {
            VerdictKind::Pass => "PASS",
            VerdictKind::Fail => "FAIL",
        }
    }
}

impl<'de> Deserialize<'de> for VerdictKind {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        VerdictKind::parse(&s)
            .ok_or_else(|| D::Error::invalid_value(Unexpected::Str(&s), &"PASS or FAIL"))
    }
}

/// One issue a validator lists.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Issue {
    /// A string, or a number written as a string.
    pub id: Option<String>,
    pub severity: Option<String>,
    pub summary: String,
    pub location: Option<String>,
    pub fix_hint: Option<String>,
}

/// The machine-readable part of a validator's verdict.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VerdictDoc {
    pub verdict: VerdictKind,
    pub issues: Vec<Issue>,
    /// Ids (or summaries) of the issues that must be fixed.
    pub must_fix: Vec<String>,
    /// The adversarial findings the validator rejected, as text to look
    /// for in the deliberation (see [`find_finding`]).
    pub false_positives: Vec<String>,
    /// 1-based line where the JSON block starts.
    pub line: usize,
}

const VERDICT_TAG: &str = "jkz:verdict-json";
const VERDICT_INFO: &str = "verdict-json";

/// The verdict JSON of a validator's verdict markdown: in an html comment
/// `<!-- jkz:verdict-json {…} -->` (which may span lines) or in a fenced
/// block whose info string is `verdict-json`. When there are several, the
/// last one wins. Comments inside other fenced blocks are examples, not
/// verdicts.
///
/// `must_fix` entries are strings or objects (their `id`, else their
/// `summary`); `false_positives` entries are strings or objects (their
/// `summary`, else `finding`, else `text`, else `id`); `issues` entries are
/// objects with a string `summary` and optional `id` (string or number),
/// `severity`, `location` and `fix_hint` (strings). A missing or null
/// list is empty.
///
/// Errors name the line where the block starts, or the line of a JSON
/// syntax error: no block at all (line 1), an unterminated block, invalid
/// JSON, a missing verdict or one other than PASS / FAIL, a value of the
/// wrong type.
pub fn parse_verdict(markdown: &str) -> Result<VerdictDoc, TextError> {
    let scan = scan_verdict_blocks(markdown)?;
    let Some(block) = scan.blocks.into_iter().next_back() else {
        let mut message = format!(
            "no verdict block: expected an html comment \"<!-- {VERDICT_TAG} {{…}} -->\" \
             or a fenced block \"```{VERDICT_INFO}\""
        );
        if let Some(hint) = scan.unclosed {
            message.push_str(&format!(" ({hint})"));
        }
        return Err(TextError::new(1, message));
    };
    let value: Value = serde_json::from_str(&block.json).map_err(|e| {
        let line = if e.line() == 0 {
            block.line
        } else {
            block.json_line + e.line() - 1
        };
        let full = e.to_string();
        let suffix = format!(" at line {} column {}", e.line(), e.column());
        let message = full.strip_suffix(&suffix).unwrap_or(&full);
        TextError::new(line, format!("invalid verdict JSON: {message}"))
    })?;
    verdict_from_json(&value, block.line)
}

/// A verdict block's JSON text and where it is.
struct RawBlock {
    /// Line of the comment or fence opening.
    line: usize,
    /// Line of the first character of `json`.
    json_line: usize,
    json: String,
}

struct VerdictScan {
    blocks: Vec<RawBlock>,
    /// An ordinary fence or comment that never closes (it may hide the
    /// verdict block).
    unclosed: Option<String>,
}

fn scan_verdict_blocks(markdown: &str) -> Result<VerdictScan, TextError> {
    let mut blocks = Vec::new();
    let mut unclosed = None;
    // An open fence, and the verdict block it holds, if it is one.
    let mut fence: Option<(Fence, Option<RawBlock>)> = None;
    // An open comment: the line where it opened, and what it holds.
    let mut comment: Option<(usize, Held)> = None;
    for (n, line) in lines(markdown) {
        if let Some((f, held)) = &mut fence {
            if fence_closes(line, *f) {
                blocks.extend(held.take());
                fence = None;
            } else if let Some(b) = held {
                b.json.push_str(line);
                b.json.push('\n');
            }
            continue;
        }
        let mut rest = line;
        let mut at_start = true;
        loop {
            if let Some((open, held)) = &mut comment {
                if let Held::Undecided = held {
                    // The tag may come on the first non-blank line.
                    let body = rest.trim_start();
                    if body.is_empty() {
                        break;
                    }
                    *held = match verdict_tag(body) {
                        Some(after) => {
                            rest = after;
                            Held::Verdict(RawBlock {
                                line: *open,
                                json_line: n,
                                json: String::new(),
                            })
                        }
                        None => Held::Other,
                    };
                }
                let Some(i) = rest.find("-->") else {
                    if let Held::Verdict(b) = held {
                        b.json.push_str(rest);
                        b.json.push('\n');
                    }
                    break;
                };
                if let Held::Verdict(b) = held {
                    b.json.push_str(&rest[..i]);
                }
                if let Some((_, Held::Verdict(b))) = comment.take() {
                    blocks.push(b);
                }
                rest = &rest[i + 3..];
                at_start = false;
                continue;
            }
            if at_start && let Some((ch, len, info)) = fence_open(rest) {
                let verdict = info
                    .split_whitespace()
                    .next()
                    .is_some_and(|w| w.eq_ignore_ascii_case(VERDICT_INFO));
                let held = verdict.then(|| RawBlock {
                    line: n,
                    json_line: n + 1,
                    json: String::new(),
                });
                fence = Some((Fence { ch, len, line: n }, held));
                break;
            }
            let Some(i) = find_outside_code(rest, "<!--") else {
                break;
            };
            rest = &rest[i + 4..];
            comment = Some((n, Held::Undecided));
            at_start = false;
        }
    }
    if let Some((f, held)) = fence {
        if held.is_some() {
            return Err(TextError::new(
                f.line,
                format!("\"{}{VERDICT_INFO}\" block is never closed", f.marker()),
            ));
        }
        unclosed = Some(format!(
            "the code fence {} opened at line {} is never closed",
            f.quoted(),
            f.line
        ));
    }
    if let Some((line, held)) = comment {
        if let Held::Verdict(_) = held {
            return Err(TextError::new(
                line,
                format!("\"<!-- {VERDICT_TAG}\" comment is never closed"),
            ));
        }
        unclosed = Some(format!(
            "the html comment opened at line {line} is never closed"
        ));
    }
    Ok(VerdictScan { blocks, unclosed })
}

/// What an open html comment holds.
enum Held {
    /// Nothing but whitespace yet: the tag may still come.
    Undecided,
    Verdict(RawBlock),
    Other,
}

/// The text after a leading `jkz:verdict-json` tag (any case), which must
/// end there.
fn verdict_tag(body: &str) -> Option<&str> {
    let tag = body.get(..VERDICT_TAG.len())?;
    let after = &body[VERDICT_TAG.len()..];
    let ends = !after.starts_with(|c: char| c.is_alphanumeric() || c == '-' || c == '_');
    (tag.eq_ignore_ascii_case(VERDICT_TAG) && ends).then_some(after)
}

/// JSON value kinds, for messages.
fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn verdict_from_json(value: &Value, line: usize) -> Result<VerdictDoc, TextError> {
    let err = |message: String| TextError::new(line, message);
    let Value::Object(obj) = value else {
        return Err(err(format!(
            "verdict JSON must be an object, found {}",
            json_kind(value)
        )));
    };
    let verdict = match obj.get("verdict") {
        None | Some(Value::Null) => {
            return Err(err(
                "verdict JSON has no \"verdict\" (expected \"PASS\" or \"FAIL\")".into(),
            ));
        }
        Some(Value::String(s)) => VerdictKind::parse(s).ok_or_else(|| {
            err(format!(
                "\"verdict\" must be \"PASS\" or \"FAIL\", found {}",
                Value::String(s.clone())
            ))
        })?,
        Some(other) => {
            return Err(err(format!(
                "\"verdict\" must be a string, found {}",
                json_kind(other)
            )));
        }
    };
    let issues = list(obj, "issues", line)?
        .iter()
        .enumerate()
        .map(|(i, v)| issue(v, i, line))
        .collect::<Result<_, _>>()?;
    let must_fix = list(obj, "must_fix", line)?
        .iter()
        .enumerate()
        .map(|(i, v)| entry(v, "must_fix", i, &["id", "summary"], line))
        .collect::<Result<_, _>>()?;
    let false_positives = list(obj, "false_positives", line)?
        .iter()
        .enumerate()
        .map(|(i, v)| {
            entry(
                v,
                "false_positives",
                i,
                &["summary", "finding", "text", "id"],
                line,
            )
        })
        .collect::<Result<_, _>>()?;
    Ok(VerdictDoc {
        verdict,
        issues,
        must_fix,
        false_positives,
        line,
    })
}

/// The array under `key`; missing or null is empty.
fn list<'a>(obj: &'a Map<String, Value>, key: &str, line: usize) -> Result<&'a [Value], TextError> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(&[]),
        Some(Value::Array(items)) => Ok(items),
        Some(other) => Err(TextError::new(
            line,
            format!("\"{key}\" must be an array, found {}", json_kind(other)),
        )),
    }
}

/// A string, or a number written as a string; `None` for other kinds.
fn text_or_number(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// A `must_fix` or `false_positives` entry: a string, or the first of
/// `keys` an object has (ids may be numbers).
fn entry(v: &Value, list: &str, i: usize, keys: &[&str], line: usize) -> Result<String, TextError> {
    let at = format!("{list}[{i}]");
    match v {
        Value::String(s) => Ok(s.clone()),
        Value::Object(obj) => {
            for key in keys {
                match obj.get(*key) {
                    None | Some(Value::Null) => continue,
                    Some(Value::String(s)) => return Ok(s.clone()),
                    Some(n @ Value::Number(_)) if *key == "id" => {
                        return Ok(n.to_string());
                    }
                    Some(other) => {
                        return Err(TextError::new(
                            line,
                            format!("{at}.{key} must be a string, found {}", json_kind(other)),
                        ));
                    }
                }
            }
            Err(TextError::new(
                line,
                format!("{at} has none of {}", quoted(keys)),
            ))
        }
        other => Err(TextError::new(
            line,
            format!(
                "{at} must be a string or an object, found {}",
                json_kind(other)
            ),
        )),
    }
}

fn quoted(keys: &[&str]) -> String {
    keys.iter()
        .map(|k| format!("\"{k}\""))
        .collect::<Vec<_>>()
        .join(", ")
}

fn issue(v: &Value, i: usize, line: usize) -> Result<Issue, TextError> {
    let at = format!("issues[{i}]");
    let err = |message: String| TextError::new(line, message);
    let Value::Object(obj) = v else {
        return Err(err(format!(
            "{at} must be an object, found {}",
            json_kind(v)
        )));
    };
    let string = |key: &str| -> Result<Option<String>, TextError> {
        match obj.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(err(format!(
                "{at}.{key} must be a string, found {}",
                json_kind(other)
            ))),
        }
    };
    let summary = string("summary")?.ok_or_else(|| err(format!("{at} has no \"summary\"")))?;
    let id = match obj.get("id") {
        None | Some(Value::Null) => None,
        Some(v) => Some(text_or_number(v).ok_or_else(|| {
            err(format!(
                "{at}.id must be a string or a number, found {}",
                json_kind(v)
            ))
        })?),
    };
    Ok(Issue {
        id,
        severity: string("severity")?,
        summary,
        location: string("location")?,
        fix_hint: string("fix_hint")?,
    })
}

// ---------------------------------------------------------------------------
// Evidence
// ---------------------------------------------------------------------------

/// How well a deliberation grounds what it says; lower is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[repr(u8)]
pub enum Level {
    /// Output of a command or a test run.
    Execution = 1,
    /// A `path:line` citation of a changed file.
    Citation = 2,
    /// Nothing but reasoning.
    Reasoning = 3,
}

impl Level {
    pub fn as_u8(self) -> u8 {
        self as u8
    }
}

/// The evidence a deliberation gives.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Evidence {
    /// The best level found.
    pub level: Level,
    /// 1-based line that proves `level` (none for [`Level::Reasoning`]).
    pub line: Option<usize>,
    /// That line, trimmed, at most [`MAX_EXCERPT_CHARS`] characters.
    pub excerpt: Option<String>,
    /// Every changed file cited with a line, in order of first citation,
    /// spelled as in `changed`.
    pub cited_files: Vec<String>,
}

/// Command runners whose lines start a command in a code block.
const RUNNERS: [&str; 12] = [
    "cargo", "npm", "npx", "pnpm", "yarn", "pytest", "make", "git", "node", "python", "python3",
    "go test",
];

static TEST_RESULT: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?x)
          (?i:\btest\s+result:\s*(?:ok|failed)\b)
        | (?i:\b[0-9]+\s+(?:passed|failed)\s*[,;]\s*[0-9]+\s+(?:passed|failed|skipped|ignored|errors?)\b)
        | (?i:\b[0-9]+\s+(?:passed|failed)(?:,\s*[0-9]+\s+\w+)*\s+in\s+[0-9]+(?:\.[0-9]+)?\s*s\b)
        | (?i:\btests?:\s+[0-9]+\s+(?:failed|passed|skipped|todo|total)\b)
        | \bFAILED\s+\S+::\S+
        | (?i:\bexit(?:ed)?\s+(?:code|status)\s*[:=]?\s*-?[0-9]+\b)
        | (?i:\bexited\s+with\s+(?:code\s+|status\s+)?-?[0-9]+\b)
        | ^(?:ok|FAIL)\s+\S+\s+[0-9]+(?:\.[0-9]+)?s\b
        | ^\s*---\s+(?:PASS|FAIL):\s+\S",
    )
});

static CITATION: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?:^|[^\w./:@#-])([\w.@+-]+(?:/[\w.@+-]+)*)(?::[0-9]+(?:[-–][0-9]+|:[0-9]+)?|#L[0-9]+(?:-L?[0-9]+)?)",
    )
});

/// Classify a deliberation's evidence.
///
/// - [`Level::Execution`]: a fenced code block with a command line (`$ `
///   or `> ` prompt, or a runner: `cargo`, `npm`, `npx`, `pnpm`, `yarn`,
///   `pytest`, `go test`, `make`, `git`, `node`, `python`) followed in the
///   block by at least one output line; or a test result line anywhere
///   (`test result: ok. 12 passed`, `12 passed, 0 failed`,
///   `3 passed in 0.2s`, `Tests: 3 passed`, `FAILED tests/x.py::t`,
///   `exit code 0`, `exit status 1`, `exited with 2`, go's `ok pkg 0.1s`
///   and `--- FAIL: TestX`).
/// - [`Level::Citation`]: `path:line`, `path:line:col`, `path:12-20` or
///   `path#L12` whose path (a leading `./` ignored) is one of `changed`;
///   with no `changed` files, any cited path with an extension.
/// - [`Level::Reasoning`]: anything else.
///
/// Blockquotes outside code blocks (an echoed prompt) and YAML front
/// matter (as [`extract`] skips it) are not read. A code fence that never
/// closes runs to the end.
pub fn evidence(deliberation: &str, changed: &[String]) -> Evidence {
    let wanted: Vec<(&str, &String)> = changed.iter().map(|c| (strip_dot(c), c)).collect();
    let mut exec: Option<(usize, &str)> = None;
    let mut cite: Option<(usize, &str)> = None;
    let mut cited_files: Vec<String> = Vec::new();
    let mut fence: Option<Fence> = None;
    // The first command of the open fence still waiting for its output.
    let mut command: Option<(usize, &str)> = None;
    let skip = front_matter_end(deliberation).unwrap_or(0);
    for (n, line) in lines(deliberation).skip(skip) {
        if let Some(f) = fence {
            if fence_closes(line, f) {
                fence = None;
                command = None;
                continue;
            }
            let t = line.trim();
            if is_command(t) {
                command.get_or_insert((n, line));
            } else if !t.is_empty()
                && let Some(cmd) = command
            {
                exec.get_or_insert(cmd);
            }
        } else if let Some((ch, len, _)) = fence_open(line) {
            fence = Some(Fence { ch, len, line: n });
            continue;
        } else if line.trim_start().starts_with('>') {
            continue;
        }
        if exec.is_none() && TEST_RESULT.is_match(line) {
            exec = Some((n, line));
        }
        for c in CITATION.captures_iter(line) {
            let (Some(all), Some(path)) = (c.get(0), c.get(1)) else {
                continue;
            };
            if line[all.end()..].starts_with(|ch: char| ch.is_alphanumeric() || ch == '_') {
                continue; // `a.rs:12px`, not a line number
            }
            let path = strip_dot(path.as_str());
            if let Some(&(_, spelled)) = wanted.iter().find(|(w, _)| *w == path) {
                cite.get_or_insert((n, line));
                if !cited_files.contains(spelled) {
                    cited_files.push(spelled.clone());
                }
            } else if wanted.is_empty() && has_extension(path) {
                cite.get_or_insert((n, line));
            }
        }
    }
    let (level, proof) = match (exec, cite) {
        (Some(p), _) => (Level::Execution, Some(p)),
        (None, Some(p)) => (Level::Citation, Some(p)),
        (None, None) => (Level::Reasoning, None),
    };
    Evidence {
        level,
        line: proof.map(|(n, _)| n),
        excerpt: proof.map(|(_, l)| excerpt(l)),
        cited_files,
    }
}

/// A command line in a code block: a prompt or a known runner.
fn is_command(t: &str) -> bool {
    if t.starts_with("$ ") || t.starts_with("> ") {
        return true;
    }
    RUNNERS.iter().any(|r| {
        t.strip_prefix(r)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t']))
    })
}

fn strip_dot(path: &str) -> &str {
    let mut p = path;
    while let Some(rest) = p.strip_prefix("./") {
        p = rest;
    }
    p
}

/// Does the last path segment have an extension with a letter in it
/// (`a.rs`, `x.tsx`; not `v1.2`, not `.env`)?
fn has_extension(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    match name.rfind('.') {
        Some(dot) if dot > 0 => {
            let ext = &name[dot + 1..];
            !ext.is_empty() && ext.chars().any(|c| c.is_alphabetic())
        }
        _ => false,
    }
}

fn excerpt(line: &str) -> String {
    let t = line.trim();
    if t.chars().count() <= MAX_EXCERPT_CHARS {
        return t.to_owned();
    }
    let mut s: String = t.chars().take(MAX_EXCERPT_CHARS - 1).collect();
    s.push('…');
    s
}

// ---------------------------------------------------------------------------
// Matching a validator's false positive
// ---------------------------------------------------------------------------

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
/// 4. Else the observations with the highest token [`jaccard`], if that is
///    at least `threshold` and above 0: one is a [`Match::Overlap`],
///    several tied are [`Match::Ambiguous`].
/// 5. Else [`Match::None`] with the best score seen.
///
/// A finding label the validator quoted (`Finding 3: …`, as [`extract`]
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

/// [`jaccard`] of two lists that are sorted and without duplicates, as
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
    use super::*;

    fn texts(md: &str) -> Vec<String> {
        extract(md)
            .expect("valid test input")
            .into_iter()
            .map(|o| o.text)
            .collect()
    }

    fn lines_of(md: &str) -> Vec<usize> {
        extract(md)
            .expect("valid test input")
            .into_iter()
            .map(|o| o.line)
            .collect()
    }

    fn err(md: &str) -> TextError {
        extract(md).unwrap_err()
    }

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

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
        assert_eq!(
            texts(md),
            strings(&[
                "dash items are read here",
                "star items are read here",
                "plus items are read here",
                "dot numbered items are read",
                "paren numbered items are read",
                "two digit numbers are read",
            ])
        );
        assert_eq!(lines_of(md), vec![1, 2, 3, 4, 5, 6]);
    }

    #[test]
    fn checklist_items() {
        let md = "- [ ] the migration is not reversible\n- [x] the index covers the new query\n* [X] the flag defaults to off";
        assert_eq!(
            texts(md),
            strings(&[
                "the migration is not reversible",
                "the index covers the new query",
                "the flag defaults to off",
            ])
        );
    }

    #[test]
    fn not_bullets() {
        // Emphasis, a signed number and a rule are not bullets; as
        // paragraphs they are short of words or not findings.
        assert_eq!(texts("**bold** start"), Vec::<String>::new());
        assert_eq!(texts("-5 degrees"), Vec::<String>::new());
        assert_eq!(texts("* * *\n- - -\n___"), Vec::<String>::new());
        assert_eq!(texts("-\n1.\n+"), Vec::<String>::new());
    }

    #[test]
    fn continuation_lines_join_their_bullet() {
        let md = "- The cache key must include\n  the tenant id\n    and the region.\n- Second item stands on its own.";
        let got = extract(md).expect("valid test input");
        assert_eq!(
            got.iter()
                .map(|o| (o.text.as_str(), o.line))
                .collect::<Vec<_>>(),
            vec![
                (
                    "The cache key must include the tenant id and the region.",
                    1
                ),
                ("Second item stands on its own.", 4),
            ]
        );
        // Tabs indent too; a numbered item's continuation.
        assert_eq!(
            texts("1. Retries are unbounded\n\twhen the server returns 503."),
            strings(&["Retries are unbounded when the server returns 503."])
        );
    }

    #[test]
    fn unindented_or_blank_ends_a_bullet() {
        let md = "- The first bullet is complete\nThis line is a paragraph of its own.\n- Another bullet item here\n\n  an indented paragraph after a blank line.";
        assert_eq!(
            texts(md),
            strings(&[
                "The first bullet is complete",
                "This line is a paragraph of its own.",
                "Another bullet item here",
                "an indented paragraph after a blank line.",
            ])
        );
    }

    #[test]
    fn nested_bullets_are_their_own_items() {
        let md = "- The parent item is about caching\n  - the child item is about eviction\n  - another child about cache warming";
        assert_eq!(
            texts(md),
            strings(&[
                "The parent item is about caching",
                "the child item is about eviction",
                "another child about cache warming",
            ])
        );
    }

    #[test]
    fn finding_lines() {
        for (md, want) in [
            (
                "Finding: the lock is held across await",
                "the lock is held across await",
            ),
            (
                "Issue: the lock is held across await",
                "the lock is held across await",
            ),
            (
                "**Finding 3**: the lock is held across await",
                "the lock is held across await",
            ),
            (
                "**Finding 3:** the lock is held across await",
                "the lock is held across await",
            ),
            (
                "Issue #2 - the lock is held across await",
                "the lock is held across await",
            ),
            (
                "Risk (high): the lock is held across await",
                "the lock is held across await",
            ),
            (
                "Concern 1. the lock is held across await",
                "the lock is held across await",
            ),
            (
                "BUG: the lock is held across await",
                "the lock is held across await",
            ),
            (
                "- **Issue 1**: the lock is held across await",
                "the lock is held across await",
            ),
        ] {
            assert_eq!(texts(md), strings(&[want]), "{md:?}");
        }
        // The label may stand alone, the finding on the next lines.
        assert_eq!(
            texts("**Finding 1:**\nThe lock is held\nacross an await point."),
            strings(&["The lock is held across an await point."])
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
            assert_eq!(texts(md), strings(&[md]), "{md:?}");
        }
    }

    #[test]
    fn a_long_finding_is_kept_a_long_paragraph_is_not() {
        let body = "the handler retries forever ".repeat(10);
        assert!(body.len() > MAX_PARAGRAPH_CHARS && body.len() < MAX_CHARS);
        assert_eq!(texts(&format!("Finding: {body}")).len(), 1);
        assert_eq!(texts(&format!("- {body}")).len(), 1);
        assert_eq!(texts(&body), Vec::<String>::new());
    }

    #[test]
    fn short_paragraphs_are_findings() {
        let md = "The handler swallows the timeout error.\n\nThe retry loop\nhas no upper bound.";
        let got = extract(md).expect("valid test input");
        assert_eq!(
            got.iter()
                .map(|o| (o.text.as_str(), o.line))
                .collect::<Vec<_>>(),
            vec![
                ("The handler swallows the timeout error.", 1),
                ("The retry loop has no upper bound.", 3),
            ]
        );
    }

    #[test]
    fn prose_sections_hold_no_paragraph_findings() {
        let md = "## Summary\nThe change adds caching to the resolver.\n- but bullets in a summary still count\n\n## Findings\nThe retry loop has no upper bound.";
        assert_eq!(
            texts(md),
            strings(&[
                "but bullets in a summary still count",
                "The retry loop has no upper bound.",
            ])
        );
        // Labels and setext headings open sections too.
        let md = "**Summary**\nThe change adds caching to the resolver.\n\nOverview:\nThe change adds caching to the resolver.\n\nTL;DR\n=====\nThe change adds caching to the resolver.\n\nDetails\n-------\nThe retry loop has no upper bound.";
        assert_eq!(texts(md), strings(&["The retry loop has no upper bound."]));
    }

    // --- extract: what is not read -----------------------------------------

    #[test]
    fn headings_are_not_observations() {
        let md = "# The cache key must include the tenant\n### Finding 1: retries are unbounded here\nSetext heading with enough words\n===\nAnother setext heading with words\n---";
        assert_eq!(texts(md), Vec::<String>::new());
        // `#hashtag` is not a heading.
        assert_eq!(
            texts("#hashtag is not a heading at all"),
            strings(&["#hashtag is not a heading at all"])
        );
    }

    /// A setext underline makes the whole paragraph above it the heading,
    /// whatever its lines look like.
    #[test]
    fn a_setext_heading_takes_the_whole_paragraph() {
        for md in [
            "Audit of the cache layer for tenants\n**Author**: judge, in the second pass\n---",
            "Review of the cache layer here\nfor the tenant isolation work:\n---",
            "The cache key must include the tenant id\nSeverity: high\n===",
            "Finding: the cache key must include the tenant id\nand more words on it\n---",
        ] {
            assert_eq!(texts(md), Vec::<String>::new(), "{md:?}");
        }
        // Its title opens a section as any heading does.
        let md = "Summary of the review\n**Scope**: the resolver\n---\nThe change adds caching to the resolver.";
        assert_eq!(texts(md), Vec::<String>::new());
        // A blank line in between: a horizontal rule, the paragraph stays.
        assert_eq!(
            texts("The retry loop has no upper bound.\n\n---\n"),
            strings(&["The retry loop has no upper bound."])
        );
        // A list item above: a horizontal rule.
        assert_eq!(
            texts("- The retry loop has no upper bound.\n---\n"),
            strings(&["The retry loop has no upper bound."])
        );
    }

    #[test]
    fn front_matter_is_skipped() {
        let md = "---\ntitle: Audit of the cache layer for the tenant work\nauthor: judge\ntags: [cache]\n---\n\n- The cache key must include the tenant id.\n";
        assert_eq!(
            texts(md),
            strings(&["The cache key must include the tenant id."])
        );
        assert_eq!(lines_of(md), vec![7]);
        // `...` closes it too, and a BOM may come first.
        let md = "\u{feff}---\ntitle: words words words words\n...\n- The cache key must include the tenant id.";
        assert_eq!(
            texts(md),
            strings(&["The cache key must include the tenant id."])
        );
        // Not at the start, not a mapping, or never closed: not front matter.
        for md in [
            "\n---\ntitle: x\n- The cache key must include the tenant id.\n---\n",
            "---\n- The cache key must include the tenant id.\n---\n",
            "---\ntitle: x\n- The cache key must include the tenant id.\n",
        ] {
            assert!(
                texts(md).iter().any(|t| t.contains("tenant id")),
                "{md:?}: {:?}",
                texts(md)
            );
        }
        // Evidence is not read there either.
        assert_eq!(
            level("---\nsource: src/a.rs:12\n---\nno evidence", &["src/a.rs"]),
            Level::Reasoning
        );
    }

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
            assert_eq!(texts(md), Vec::<String>::new(), "{md:?}");
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
    fn html_blocks_are_not_observations() {
        let md = "<details><summary>raw</summary>\nsome raw output with many words in it\n</details>\n\n- The cache key must include the tenant id.\n";
        assert_eq!(
            texts(md),
            strings(&["The cache key must include the tenant id."])
        );
        // Markdown after a blank line inside the element is read.
        let md = "<details>\n<summary>Raw notes of the run</summary>\n\n- The cache key must include the tenant id.\n\n</details>";
        assert_eq!(
            texts(md),
            strings(&["The cache key must include the tenant id."])
        );
        // `<pre>` runs to its closing tag, blank lines included.
        let md = "<pre>\nthe output line one of many\n\nthe output line two of many\n</pre>\n- The cache key must include the tenant id.";
        assert_eq!(
            texts(md),
            strings(&["The cache key must include the tenant id."])
        );
        // A lone tag of any name, not inside a paragraph.
        assert_eq!(
            texts("<custom-note kind=\"x\">\nwords words words words here\n"),
            Vec::<String>::new()
        );
        // Inline html in a sentence, or a tag inside a paragraph, is text.
        assert_eq!(
            texts("The <code>cache</code> key must include the tenant id."),
            strings(&["The <code>cache</code> key must include the tenant id."])
        );
        assert_eq!(
            texts("The cache key must include the tenant id\n<br>\nin every query."),
            strings(&["The cache key must include the tenant id <br> in every query."])
        );
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
            assert_eq!(texts(md), Vec::<String>::new(), "{md:?}");
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
        assert_eq!(
            texts("- KNOWLEDGE_APPLIED:abc\n  applied to the whole of the cache layer"),
            Vec::<String>::new()
        );
    }

    #[test]
    fn code_fences_are_skipped() {
        let md = "```\n- not a bullet inside a fence block\n```\n~~~python\n- nor inside a tilde fence block\n~~~\n- but this bullet is read fine";
        let got = extract(md).expect("valid test input");
        assert_eq!(
            got.iter()
                .map(|o| (o.text.as_str(), o.line))
                .collect::<Vec<_>>(),
            vec![("but this bullet is read fine", 7)]
        );
        // A longer fence needs a longer close; an indented fence counts.
        let md = "````md\n```\n- still inside the outer fence\n````\n  ```\n  - inside an indented fence here\n  ```\n- read after both of the fences";
        assert_eq!(texts(md), strings(&["read after both of the fences"]));
        // Inline triple backticks are code, not a fence.
        assert_eq!(
            texts("```inline``` code is not a fence at all"),
            strings(&["inline code is not a fence at all"])
        );
    }

    #[test]
    fn indented_code_is_skipped_list_content_is_not() {
        let md = "Some paragraph that introduces code:\n\n    let the_code = is_skipped_here(1, 2);\n\n- A bullet that goes on further\n\n    indented text under the bullet item";
        assert_eq!(
            texts(md),
            strings(&[
                "A bullet that goes on further",
                "indented text under the bullet item",
            ])
        );
    }

    #[test]
    fn html_comments_are_skipped() {
        let md = "<!-- a comment\n- that spans lines with a bullet\n-->\n- read after the comment ends\n- inline <!-- hidden words --> text is kept here";
        let got = extract(md).expect("valid test input");
        assert_eq!(
            got.iter()
                .map(|o| (o.text.as_str(), o.line))
                .collect::<Vec<_>>(),
            vec![
                ("read after the comment ends", 4),
                ("inline text is kept here", 5),
            ]
        );
        let md = "<!-- jkz:verdict-json\n{\"verdict\": \"PASS\", \"issues\": []}\n-->\n- the only observation left here";
        assert_eq!(texts(md), strings(&["the only observation left here"]));
        // `<!--` in inline code does not open a comment.
        assert_eq!(
            texts("- write `<!--` to open an html comment"),
            strings(&["write <!-- to open an html comment"])
        );
    }

    #[test]
    fn tables_are_skipped() {
        let md = "Header one | header two here\n--- | ---\ncell text one | cell text two here\n\n| a | b |\n|---|---|\n| the row of a table here | x |\n\n- read after the tables end";
        assert_eq!(texts(md), strings(&["read after the tables end"]));
    }

    #[test]
    fn short_and_long_observations_are_dropped() {
        assert_eq!(texts("- too short here"), Vec::<String>::new());
        assert_eq!(
            texts("- **just** four words here"),
            strings(&["just four words here"])
        );
        let long = format!("- {}", "word ".repeat(81));
        assert!(long.trim().len() > MAX_CHARS);
        assert_eq!(texts(&long), Vec::<String>::new());
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
            assert_eq!(texts(md), strings(&[want]), "{md:?}");
        }
    }

    #[test]
    fn crlf_input() {
        let md = "# Findings\r\n\r\n- The lock is held across await.\r\n  It blocks the runtime.\r\n\r\n```\r\n- skipped in a fence\r\n```\r\n- Second finding is read too\r\n";
        let got = extract(md).expect("valid test input");
        assert_eq!(
            got.iter()
                .map(|o| (o.text.as_str(), o.line))
                .collect::<Vec<_>>(),
            vec![
                ("The lock is held across await. It blocks the runtime.", 3),
                ("Second finding is read too", 9),
            ]
        );
        assert!(got.iter().all(|o| !o.text.contains('\r')));
    }

    #[test]
    fn empty_and_observation_free_input() {
        assert_eq!(extract("").expect("valid test input"), vec![]);
        assert_eq!(extract("\n\n  \r\n").expect("valid test input"), vec![]);
        assert_eq!(
            extract("# Title\n## Section\n### Sub").expect("valid test input"),
            vec![]
        );
        assert_eq!(
            extract("Verdict: PASS\n").expect("valid test input"),
            vec![]
        );
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
    fn an_unterminated_fence_is_an_error_where_it_opened() {
        let e = err("- a finding that is fine\n\n```rust\nfn main() {}\n");
        assert_eq!(e, TextError::new(3, "code fence \"```\" is never closed"));
    }

    #[test]
    fn an_unterminated_tilde_fence_is_an_error_where_it_opened() {
        let e = err("intro\n~~~~\n~~~\nstill inside");
        assert_eq!(e.line, 2);
        assert!(e.message.contains("~~~~"), "{e}");
        // A closing run shorter than the opening does not close it.
        assert_eq!(err("````\n```\n").line, 1);
    }

    #[test]
    fn an_unterminated_comment_is_an_error_where_it_opened() {
        let e = err("- fine line\n- text <!-- opens here\nand never\ncloses");
        assert_eq!(e.line, 2);
        assert!(e.message.contains("<!--"), "{e}");
        assert_eq!(e.to_string(), format!("line 2: {}", e.message));
        // A comment inside a fence opens nothing; one after a closed
        // comment on the same line does.
        assert!(extract("```\n<!--\n```").is_ok());
        assert_eq!(err("x <!-- a --> y <!-- b").line, 1);
    }

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
        assert_eq!(
            normalise("Use tenant_id, not TenantId"),
            "use tenant_id, not tenantid"
        );
        assert_eq!(
            normalise("3.5 seconds is too slow"),
            "3.5 seconds is too slow"
        );
        assert_eq!(normalise("ÉCOLE Straße ΣΊΣΥΦΟΣ"), "école straße σίσυφος");
        assert_eq!(normalise("a * b is not emphasis"), "a * b is not emphasis");
        assert_eq!(normalise("-> arrows stay"), "-> arrows stay");
        assert_eq!(normalise(""), "");
        assert_eq!(normalise(" - . "), "");
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

    // --- parse_verdict ------------------------------------------------------

    fn verdict_err(md: &str) -> TextError {
        parse_verdict(md).unwrap_err()
    }

    #[test]
    fn verdict_in_an_html_comment() {
        let md = "# Inspector verdict\n\nLooks fine.\n\n<!-- jkz:verdict-json {\"verdict\": \"PASS\", \"issues\": [], \"must_fix\": [], \"false_positives\": [\"the cache leaks\"]} -->\n";
        let doc = parse_verdict(md).expect("valid test input");
        assert_eq!(
            doc,
            VerdictDoc {
                verdict: VerdictKind::Pass,
                issues: vec![],
                must_fix: vec![],
                false_positives: strings(&["the cache leaks"]),
                line: 5,
            }
        );
    }

    #[test]
    fn verdict_comment_across_lines() {
        let md = "text\n<!--\n  jkz:verdict-json\n{\n  \"verdict\": \"fail\",\n  \"must_fix\": [\"I1\"]\n}\n-->\nafter";
        let doc = parse_verdict(md).expect("valid test input");
        assert_eq!(doc.verdict, VerdictKind::Fail);
        assert_eq!(doc.must_fix, strings(&["I1"]));
        assert_eq!(doc.line, 2);
    }

    #[test]
    fn verdict_in_a_fenced_block() {
        let md = "Verdict below.\r\n\r\n```verdict-json\r\n{\r\n  \"verdict\": \"Fail\",\r\n  \"issues\": [{\"id\": 1, \"severity\": \"high\", \"summary\": \"leak\", \"location\": \"src/a.rs:3\", \"fix_hint\": \"scope the key\"}],\r\n  \"must_fix\": [{\"id\": 1}]\r\n}\r\n```\r\n";
        let doc = parse_verdict(md).expect("valid test input");
        assert_eq!(doc.verdict, VerdictKind::Fail);
        assert_eq!(doc.line, 3);
        assert_eq!(
            doc.issues,
            vec![Issue {
                id: Some("1".into()),
                severity: Some("high".into()),
                summary: "leak".into(),
                location: Some("src/a.rs:3".into()),
                fix_hint: Some("scope the key".into()),
            }]
        );
        assert_eq!(doc.must_fix, strings(&["1"]));
        // A tilde fence, an info string with more words.
        let md = "~~~~ Verdict-JSON extra\n{\"verdict\": \"PASS\"}\n~~~~";
        assert_eq!(
            parse_verdict(md).expect("valid test input").verdict,
            VerdictKind::Pass
        );
    }

    #[test]
    fn the_last_verdict_block_wins() {
        let md = "<!-- jkz:verdict-json {\"verdict\": \"FAIL\"} -->\n```verdict-json\n{\"verdict\": \"PASS\"}\n```\n";
        let doc = parse_verdict(md).expect("valid test input");
        assert_eq!((doc.verdict, doc.line), (VerdictKind::Pass, 2));
        let md = "```verdict-json\n{\"verdict\": \"PASS\"}\n```\ntext <!-- jkz:verdict-json {\"verdict\": \"FAIL\"} --> <!-- jkz:verdict-json {\"verdict\": \"PASS\", \"must_fix\": [\"x\"]} -->";
        let doc = parse_verdict(md).expect("valid test input");
        assert_eq!(
            (doc.verdict, doc.must_fix, doc.line),
            (VerdictKind::Pass, strings(&["x"]), 4)
        );
        // Even an invalid last block wins over a valid earlier one.
        let md =
            "<!-- jkz:verdict-json {\"verdict\": \"PASS\"} -->\n<!-- jkz:verdict-json {nope} -->";
        assert_eq!(verdict_err(md).line, 2);
    }

    #[test]
    fn examples_in_other_fences_and_inline_code_are_not_verdicts() {
        let md = "<!-- jkz:verdict-json {\"verdict\": \"FAIL\"} -->\n```markdown\n<!-- jkz:verdict-json {\"verdict\": \"PASS\"} -->\n```\nWrite `<!-- jkz:verdict-json {...} -->` at the end.";
        let doc = parse_verdict(md).expect("valid test input");
        assert_eq!((doc.verdict, doc.line), (VerdictKind::Fail, 1));
        // Other comments and near-miss tags are not verdicts.
        let md = "<!-- note -->\n<!-- jkz:verdict-jsonx {\"verdict\": \"PASS\"} -->";
        assert_eq!(verdict_err(md).line, 1);
    }

    #[test]
    fn string_and_object_entries() {
        let md = r#"<!-- jkz:verdict-json {
  "verdict": "FAIL",
  "must_fix": ["I1", {"id": "I2"}, {"id": 3}, {"summary": "close the handle"}, {"id": null, "summary": "s"}],
  "false_positives": [
    "plain text",
    {"summary": "from summary", "finding": "no"},
    {"finding": "from finding"},
    {"text": "from text", "id": "no"},
    {"id": "from id"}
  ],
  "issues": [{"summary": "only a summary"}, {"id": "I2", "summary": "s", "severity": null}]
} -->"#;
        let doc = parse_verdict(md).expect("valid test input");
        assert_eq!(
            doc.must_fix,
            strings(&["I1", "I2", "3", "close the handle", "s"])
        );
        assert_eq!(
            doc.false_positives,
            strings(&[
                "plain text",
                "from summary",
                "from finding",
                "from text",
                "from id"
            ])
        );
        assert_eq!(doc.issues.len(), 2);
        assert_eq!(doc.issues[0].id, None);
        assert_eq!(doc.issues[1].id.as_deref(), Some("I2"));
        assert_eq!(doc.issues[1].severity, None);
    }

    #[test]
    fn missing_and_null_lists_are_empty() {
        let doc =
            parse_verdict("<!-- jkz:verdict-json {\"verdict\": \"PASS\", \"issues\": null} -->")
                .expect("valid test input");
        assert!(doc.issues.is_empty() && doc.must_fix.is_empty() && doc.false_positives.is_empty());
    }

    #[test]
    fn no_verdict_block_is_an_error_on_line_1() {
        for md in [
            "",
            "# Verdict\n\nPASS, all good.\n",
            "```json\n{\"verdict\": \"PASS\"}\n```",
        ] {
            let e = verdict_err(md);
            assert_eq!(e.line, 1, "{md:?}");
            assert!(e.message.contains("<!-- jkz:verdict-json"), "{e}");
            assert!(e.message.contains("```verdict-json"), "{e}");
        }
        // An unclosed ordinary fence that may hide the block is named.
        let e = verdict_err("x\n```\n<!-- jkz:verdict-json {\"verdict\": \"PASS\"} -->");
        assert!(e.message.contains("line 2 is never closed"), "{e}");
        let e = verdict_err("<!-- a comment\n<!-- jkz:verdict-json {\"verdict\": \"PASS\"}");
        assert!(e.message.contains("line 1 is never closed"), "{e}");
    }

    #[test]
    fn unterminated_verdict_blocks_are_errors_where_they_open() {
        let e = verdict_err("a\n\n```verdict-json\n{\"verdict\": \"PASS\"}\n");
        assert_eq!(e.line, 3);
        assert!(e.message.contains("never closed"), "{e}");
        let e = verdict_err("a\nb <!-- jkz:verdict-json {\"verdict\": \"PASS\"}\n");
        assert_eq!(e.line, 2);
        assert!(e.message.contains("never closed"), "{e}");
    }

    #[test]
    fn invalid_json_names_the_line_of_the_error() {
        let md = "intro\n```verdict-json\n{\n  \"verdict\": \"PASS\"\n  \"issues\": []\n}\n```";
        let e = verdict_err(md);
        assert_eq!(e.line, 5);
        assert!(
            e.message
                .starts_with("invalid verdict JSON: expected `,` or `}`"),
            "{e}"
        );
        assert!(!e.message.contains("column"), "{e}");
        let md = "x\n<!-- jkz:verdict-json {\"verdict\": PASS} -->";
        let e = verdict_err(md);
        assert_eq!(e.line, 2);
        assert!(e.message.starts_with("invalid verdict JSON: "), "{e}");
        let md = "<!-- jkz:verdict-json -->";
        assert_eq!(verdict_err(md).line, 1);
        let md = "<!-- jkz:verdict-json {\"verdict\": \"PASS\"} trailing -->";
        assert!(verdict_err(md).message.contains("trailing characters"));
    }

    #[test]
    fn verdict_value_errors() {
        for (json, needle) in [
            (r#"{}"#, r#"no "verdict""#),
            (r#"{"verdict": null}"#, r#"no "verdict""#),
            (
                r#"{"verdict": "MAYBE"}"#,
                r#""verdict" must be "PASS" or "FAIL", found "MAYBE""#,
            ),
            (
                r#"{"verdict": true}"#,
                r#""verdict" must be a string, found a boolean"#,
            ),
            (r#"["PASS"]"#, "must be an object, found an array"),
        ] {
            let md = format!("a\n\n<!-- jkz:verdict-json {json} -->");
            let e = verdict_err(&md);
            assert_eq!(e.line, 3, "{json}");
            assert!(e.message.contains(needle), "{json}: {e}");
        }
    }

    #[test]
    fn verdict_type_errors() {
        for (json, needle) in [
            (
                r#""issues": {}"#,
                r#""issues" must be an array, found an object"#,
            ),
            (
                r#""must_fix": "I1""#,
                r#""must_fix" must be an array, found a string"#,
            ),
            (
                r#""issues": ["x"]"#,
                "issues[0] must be an object, found a string",
            ),
            (r#""issues": [{"id": 1}]"#, r#"issues[0] has no "summary""#),
            (
                r#""issues": [{"summary": 3}]"#,
                "issues[0].summary must be a string, found a number",
            ),
            (
                r#""issues": [{"summary": "s", "id": []}]"#,
                "issues[0].id must be a string or a number, found an array",
            ),
            (
                r#""issues": [{"summary": "s", "location": {"file": "a"}}]"#,
                "issues[0].location must be a string, found an object",
            ),
            (
                r#""must_fix": ["a", 7]"#,
                "must_fix[1] must be a string or an object, found a number",
            ),
            (
                r#""must_fix": [{"severity": "high"}]"#,
                r#"must_fix[0] has none of "id", "summary""#,
            ),
            (
                r#""must_fix": [{"id": true}]"#,
                "must_fix[0].id must be a string, found a boolean",
            ),
            (
                r#""false_positives": [{"finding": 2}]"#,
                "false_positives[0].finding must be a string, found a number",
            ),
            (
                r#""false_positives": [{}]"#,
                r#"false_positives[0] has none of "summary", "finding", "text", "id""#,
            ),
            (
                r#""false_positives": [null]"#,
                "false_positives[0] must be a string or an object, found null",
            ),
        ] {
            let md = format!("```verdict-json\n{{\"verdict\": \"FAIL\", {json}}}\n```");
            let e = verdict_err(&md);
            assert_eq!(e.line, 1, "{json}");
            assert!(e.message.contains(needle), "{json}: {e}");
        }
    }

    #[test]
    fn verdict_kind_serde() {
        assert_eq!(
            serde_json::to_string(&VerdictKind::Pass).expect("valid test input"),
            r#""PASS""#
        );
        assert_eq!(
            serde_json::to_string(&VerdictKind::Fail).expect("valid test input"),
            r#""FAIL""#
        );
        for (s, want) in [
            (r#""PASS""#, VerdictKind::Pass),
            (r#""pass""#, VerdictKind::Pass),
            (r#""Fail""#, VerdictKind::Fail),
        ] {
            assert_eq!(
                serde_json::from_str::<VerdictKind>(s).expect("valid test input"),
                want
            );
        }
        assert!(serde_json::from_str::<VerdictKind>(r#""passed""#).is_err());
        assert!(serde_json::from_str::<VerdictKind>("1").is_err());
        assert_eq!(VerdictKind::Fail.as_str(), "FAIL");
    }

    // --- evidence -----------------------------------------------------------

    fn level(md: &str, changed: &[&str]) -> Level {
        evidence(md, &strings(changed)).level
    }

    #[test]
    fn execution_from_a_command_with_output() {
        for block in [
            "```\n$ cargo test\nrunning 3 tests\n```",
            "```console\n> npm test\n\n  3 passing\n```",
            "```sh\ncargo test --lib\n   Compiling x v0.1.0\n```",
            "```\npytest -q\n...\n```",
            "```\ngo test ./...\nok  example.com/x\n```",
            "```\nmake\nmake: Nothing to be done for 'all'.\n```",
            "```\ngit status\nOn branch main\n```",
            "```\n$ ls\n$ cat a.txt\nhello\n```",
        ] {
            let md = format!("I ran it:\n\n{block}\n");
            let ev = evidence(&md, &[]);
            assert_eq!(ev.level, Level::Execution, "{block:?}");
            assert_eq!(ev.line, Some(4), "{block:?}");
        }
        let ev = evidence("```\n  $ cargo test   \nok\n```", &[]);
        assert_eq!(ev.excerpt.as_deref(), Some("$ cargo test"));
    }

    #[test]
    fn a_code_block_without_a_command_or_output_is_not_execution() {
        for md in [
            "```rust\nfn main() {\n    println!(\"hi\");\n}\n```",
            "```\n$ cargo test\n```",
            "```\n$ cargo test\n\n```\nrunning 3 tests",
            "```\ncargo test\n$ cargo build\n```",
            "```python\nmake_thing()\ngitlab = 1\n```",
            "$ cargo test\nrunning 3 tests",
            "> $ cargo test\n> running 3 tests",
            "I ran the tests and they all passed.",
        ] {
            assert_eq!(level(md, &[]), Level::Reasoning, "{md:?}");
        }
    }

    #[test]
    fn execution_from_test_result_lines() {
        for line in [
            "test result: ok. 12 passed; 0 failed; 0 ignored",
            "test result: FAILED. 1 passed; 2 failed",
            "Summary: 12 passed, 0 failed",
            "=== 3 passed, 1 skipped in 0.52s ===",
            "Tests:       3 passed, 3 total",
            "FAILED tests/test_x.py::test_cache - AssertionError",
            "the command finished with exit code 0",
            "exit status 1",
            "Process exited with 2",
            "the job exited with code 137",
            "ok  \texample.com/pkg\t0.013s",
            "--- FAIL: TestCache (0.00s)",
        ] {
            let ev = evidence(&format!("Ran it.\n{line}\n"), &[]);
            assert_eq!(ev.level, Level::Execution, "{line:?}");
            assert_eq!(ev.line, Some(2), "{line:?}");
            assert_eq!(ev.excerpt.as_deref(), Some(line.trim()), "{line:?}");
        }
    }

    #[test]
    fn narrative_about_tests_is_not_execution() {
        for md in [
            "All tests passed.",
            "The tests should pass once this is fixed.",
            "12 tests passed according to the author",
            "It failed the test suite",
            "We exit early in the loop",
            "Failed to see how this works",
        ] {
            assert_eq!(level(md, &[]), Level::Reasoning, "{md:?}");
        }
    }

    #[test]
    fn citation_of_a_changed_file() {
        let changed = ["src/cache.rs", "./web/app.tsx"];
        for md in [
            "The key is built at src/cache.rs:42 without the tenant.",
            "See `src/cache.rs:42:7`.",
            "See (./src/cache.rs:42).",
            "Lines src/cache.rs:40-48 are the problem.",
            "[here](src/cache.rs#L42) is the bug",
            "Also web/app.tsx#L3-L9.",
            "**src/cache.rs:42**",
        ] {
            let ev = evidence(md, &strings(&changed));
            assert_eq!(ev.level, Level::Citation, "{md:?}");
            assert_eq!(ev.line, Some(1), "{md:?}");
        }
        let ev = evidence(
            "src/cache.rs:1 and web/app.tsx:2\nsrc/cache.rs:9 and src/other.rs:3",
            &strings(&changed),
        );
        assert_eq!(ev.cited_files, strings(&["src/cache.rs", "./web/app.tsx"]));
        assert_eq!(
            ev.excerpt.as_deref(),
            Some("src/cache.rs:1 and web/app.tsx:2")
        );
    }

    #[test]
    fn citations_that_do_not_count() {
        let changed = ["src/cache.rs"];
        for md in [
            "The bug is in src/other.rs:42.",
            "The bug is in src/cache.rs near the top.",
            "See lib/src/cache.rs:42.",
            "src/cache.rsx:42",
            "src/cache.rs:42px",
            "https://example.com/src/cache.rs:42",
            "> src/cache.rs:42 was in the prompt",
            "at 12:30 the job ran",
        ] {
            let ev = evidence(md, &strings(&changed));
            assert_eq!(ev.level, Level::Reasoning, "{md:?}");
            assert!(ev.cited_files.is_empty(), "{md:?}");
        }
    }

    #[test]
    fn with_no_changed_files_any_path_with_an_extension_counts() {
        assert_eq!(level("see src/anything.py:3", &[]), Level::Citation);
        assert_eq!(level("see Makefile:3", &[]), Level::Reasoning);
        assert_eq!(level("version v1.2:3", &[]), Level::Reasoning);
        assert_eq!(level("at 12:30", &[]), Level::Reasoning);
        assert!(evidence("see src/a.rs:3", &[]).cited_files.is_empty());
        // Without an extension, a changed file still counts.
        assert_eq!(level("see Makefile:3", &["Makefile"]), Level::Citation);
    }

    #[test]
    fn the_best_level_wins_and_cited_files_are_always_filled() {
        let md = "The key at src/cache.rs:42 ignores the tenant.\n\n```\n$ cargo test\ntest result: FAILED. 1 passed; 1 failed\n```";
        let ev = evidence(md, &strings(&["src/cache.rs"]));
        assert_eq!(ev.level, Level::Execution);
        assert_eq!(ev.line, Some(4));
        assert_eq!(ev.cited_files, strings(&["src/cache.rs"]));
    }

    #[test]
    fn pure_reasoning() {
        let ev = evidence("I believe the cache is wrong.", &strings(&["src/a.rs"]));
        assert_eq!(
            ev,
            Evidence {
                level: Level::Reasoning,
                line: None,
                excerpt: None,
                cited_files: vec![],
            }
        );
        assert_eq!(evidence("", &[]).level, Level::Reasoning);
    }

    #[test]
    fn excerpts_are_cut_to_120_characters() {
        let line = format!("src/a.rs:1 {}", "é".repeat(200));
        let ev = evidence(&line, &[]);
        let ex = ev.excerpt.expect("valid test input");
        assert_eq!(ex.chars().count(), MAX_EXCERPT_CHARS);
        assert!(ex.ends_with('…'));
    }

    #[test]
    fn levels_order_and_number() {
        assert!(Level::Execution < Level::Citation && Level::Citation < Level::Reasoning);
        assert_eq!(
            [Level::Execution, Level::Citation, Level::Reasoning].map(Level::as_u8),
            [1, 2, 3]
        );
    }

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
        assert_eq!(
            find_finding(&obs, "retries are UNBOUNDED", 0.5),
            Match::Phrase { index: 1 }
        );
        assert_eq!(
            find_finding(
                &obs,
                "**Finding**: the lock is held across an await point in the handler. It is fine.",
                0.5
            ),
            Match::Phrase { index: 2 }
        );
        assert_eq!(
            find_finding(&obs, "The cache key must include the tenant id", 0.5),
            Match::Phrase { index: 0 }
        );
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
        assert_eq!(
            find_finding(&obs, "the cache key must include the tenant id", 0.5),
            Match::Phrase { index: 0 }
        );
        assert_eq!(
            find_finding(&obs, "the tenant id and the region", 0.5),
            Match::Phrase { index: 1 }
        );
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
        assert_eq!(
            find_finding(
                &obs,
                "Finding 3: the retry loop must stop after five attempts",
                0.9
            ),
            Match::Phrase { index: 0 }
        );
        assert_eq!(
            find_finding(&obs, "**Issue #3** - The retry loop must stop", 0.9),
            Match::Phrase { index: 0 }
        );
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

    /// A fixed linear congruential generator: the same inputs every run.
    struct Lcg(u64);

    impl Lcg {
        fn next(&mut self) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            self.0 >> 33
        }
    }

    #[test]
    fn never_panics() {
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
        let mut rng = Lcg(0x5eed);
        let changed = strings(&["src/a.rs", "a.rs"]);
        for round in 0..3000 {
            let len = rng.next() % 60;
            let mut s = String::new();
            for _ in 0..len {
                match rng.next() % 4 {
                    0 => s.push(
                        char::from_u32((rng.next() % 0x11_0000) as u32).unwrap_or('\u{fffd}'),
                    ),
                    1 => s.push(char::from(b' ' + (rng.next() % 95) as u8)),
                    _ => s.push_str(PIECES[(rng.next() as usize) % PIECES.len()]),
                }
            }
            if round % 7 == 0 {
                let bytes: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
                s.push_str(&String::from_utf8_lossy(&bytes));
            }
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

    #[test]
    fn metadata_fields_are_not_part_of_a_finding() {
        let md = "**Finding 1**: The lock is held across an await.\n**Severity**: high\n**Location:** src/a.rs:12\nSeverity: medium\n**Impact**: requests stall under load for seconds.\n- Location: src/b.rs:40 in the handler\n- File: src/c.rs is touched here";
        let got = extract(md).expect("valid test input");
        assert_eq!(
            got.iter()
                .map(|o| (o.text.as_str(), o.line))
                .collect::<Vec<_>>(),
            vec![
                ("The lock is held across an await.", 1),
                ("Impact: requests stall under load for seconds.", 5),
            ]
        );
        // Near miss: a word that starts like a field.
        assert_eq!(
            texts("Typed errors: every module defines its own enum"),
            strings(&["Typed errors: every module defines its own enum"])
        );
    }
}

/// The pattern ids of every deliberation the tests feed [`extract`] are
/// pinned in `tests/fixtures/deliberations.jsonl`: repositories hold these
/// ids, so a change to the reading must not move them.
#[cfg(test)]
mod pinned {
    use super::*;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    pub(super) struct Case {
        markdown: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        patterns: Vec<Pinned>,
        /// The evidence level and line, changed files `src/a.rs`, `a.rs`.
        evidence: String,
    }

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Pinned {
        /// [`pattern_id`] for the role `judge`.
        id: String,
        line: usize,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        label: Option<String>,
        category: Category,
        text: String,
    }

    pub(super) fn case(markdown: &str) -> Case {
        let (error, patterns) = match extract(markdown) {
            Ok(obs) => (
                None,
                obs.into_iter()
                    .map(|o| Pinned {
                        id: pattern_id(&o.normalised, "judge"),
                        line: o.line,
                        label: o.label,
                        category: o.category,
                        text: o.text,
                    })
                    .collect(),
            ),
            Err(e) => (Some(e.to_string()), Vec::new()),
        };
        let ev = evidence(markdown, &["src/a.rs".to_owned(), "a.rs".to_owned()]);
        Case {
            markdown: markdown.to_owned(),
            error,
            patterns,
            evidence: format!("{:?}@{:?}", ev.level, ev.line),
        }
    }

    #[test]
    fn every_pinned_deliberation_gives_the_same_patterns() {
        let pinned = include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/deliberations.jsonl"
        ));
        let mut count = 0;
        for line in pinned.lines() {
            let want: Case = serde_json::from_str(line).expect("a pinned case");
            assert_eq!(case(&want.markdown), want);
            count += 1;
        }
        assert!(count > 100, "{count} cases");
    }
}
