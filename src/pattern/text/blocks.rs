//! Which lines of a deliberation are paragraph text: pulldown-cmark
//! parses the CommonMark blocks, and every line outside a heading, code
//! block, html block, table, rule or blockquote is text for
//! [`extract`](fn@super::extract) to read.

use std::ops::Range;

use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag, TagEnd};

use crate::markdown::Fence;

/// What CommonMark makes of a line of the deliberation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum LineKind {
    /// Paragraph text, in a list item or not: what the heuristics read.
    Text,
    /// The first line of a heading, whose source is `start..end`: it opens
    /// a section.
    Heading { start: usize, end: usize },
    /// The rest of a heading, or a line of a code block, an html block, a
    /// table or a blockquote: never read.
    Skipped,
}

/// A deliberation's lines as pulldown-cmark parses them: which are text,
/// and the text with its inline html comments blanked out.
pub(super) struct Document<'a> {
    source: &'a str,
    /// `source` with inline html comments replaced by spaces.
    live: String,
    /// Per line of `source`, what it is.
    kinds: Vec<LineKind>,
}

impl<'a> Document<'a> {
    /// Parses `source`; an error is the line (0-based) where an unclosed
    /// code fence or html comment opens, and what it is.
    pub(super) fn read(source: &'a str) -> Result<Document<'a>, (usize, String)> {
        let starts: Vec<usize> = std::iter::once(0)
            .chain(source.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        let line_of = |at: usize| starts.partition_point(|&s| s <= at) - 1;
        let mut doc = Document {
            source,
            live: source.to_owned(),
            kinds: vec![LineKind::Text; starts.len()],
        };
        let mark = |kinds: &mut Vec<LineKind>, range: &Range<usize>, kind: LineKind| {
            let last = line_of(range.end.saturating_sub(1).max(range.start));
            for k in &mut kinds[line_of(range.start)..=last] {
                *k = kind;
            }
        };
        let mut comments = Vec::new();
        let mut in_code = false;
        for (event, range) in Parser::new_ext(source, Options::ENABLE_TABLES).into_offset_iter() {
            match event {
                Event::End(TagEnd::CodeBlock) => in_code = false,
                Event::Start(Tag::CodeBlock(kind)) => {
                    in_code = true;
                    if let CodeBlockKind::Fenced(_) = kind
                        && let Some(fence) = unclosed_fence(source, range.clone())
                    {
                        let message = format!("code fence \"{}\" is never closed", fence.marker());
                        return Err((line_of(range.start), message));
                    }
                    mark(&mut doc.kinds, &range, LineKind::Skipped);
                }
                Event::Start(Tag::HtmlBlock | Tag::Table(_) | Tag::BlockQuote(_)) | Event::Rule => {
                    mark(&mut doc.kinds, &range, LineKind::Skipped);
                }
                Event::Start(Tag::Heading { .. }) => {
                    mark(&mut doc.kinds, &range, LineKind::Skipped);
                    doc.kinds[line_of(range.start)] = LineKind::Heading {
                        start: range.start,
                        end: range.end,
                    };
                }
                Event::InlineHtml(html) if html.starts_with("<!--") => comments.push(range),
                Event::Text(_) | Event::Html(_) | Event::InlineHtml(_) if !in_code => {
                    if let Some(open) = comment_open(source, range.start, range.end)
                        && !source[open..].contains("-->")
                    {
                        let message = "html comment `<!--` is never closed".to_owned();
                        return Err((line_of(open), message));
                    }
                }
                _ => {}
            }
        }
        for range in comments {
            doc.live.replace_range(
                range.clone(),
                &source[range]
                    .chars()
                    .map(|c| if c == '\n' { '\n' } else { ' ' })
                    .collect::<String>(),
            );
        }
        Ok(doc)
    }

    /// Each line of live text (a trailing `\r` dropped) and what it is.
    pub(super) fn lines(&self) -> impl Iterator<Item = (&str, LineKind)> {
        let lines = self.live.split('\n').zip(&self.kinds);
        lines.map(|(line, &kind)| match kind {
            LineKind::Heading { start, end } => (&self.source[start..end], kind),
            _ => (line.strip_suffix('\r').unwrap_or(line), kind),
        })
    }
}

/// Where the first `<!--` opening in `source[from..end]` (an event's text)
/// is. A `<!--` that never closes is text to pulldown-cmark, split after
/// its `<`, so the search reads on past `end`.
pub(super) fn comment_open(source: &str, from: usize, end: usize) -> Option<usize> {
    let text = source.get(from..source.len().min(end + 3));
    let open = text.unwrap_or(&source[from..end]).find("<!--")? + from;
    (open < end).then_some(open)
}

/// The fence of the fenced block at `range` when it opens its line and
/// runs to the end of `markdown` without closing. A fence in a list item
/// or a quote ends with it, so only one that opens its line can be left
/// open by mistake.
pub(super) fn unclosed_fence(markdown: &str, range: Range<usize>) -> Option<Fence> {
    let line_start = markdown[..range.start].rfind('\n').map_or(0, |i| i + 1);
    let block = markdown[range.clone()].trim_end();
    let (fence, _) = Fence::open(block.lines().next()?)?;
    let closed = block.lines().count() > 1 && block.lines().last().is_some_and(|l| fence.closes(l));
    let opens_line = markdown[line_start..range.start].trim().is_empty();
    (opens_line && !closed && markdown[range.end..].trim().is_empty()).then_some(fence)
}

#[cfg(test)]
mod tests {
    use super::super::testing::{assert_text_lines, assert_texts, err, lines_of, strings, texts};
    use super::super::{Level, TextError, evidence, extract};

    #[test]
    fn headings_are_not_observations() {
        let md = "# The cache key must include the tenant\n### Finding 1: retries are unbounded here\nSetext heading with enough words\n===\nAnother setext heading with words\n---";
        assert_texts(md, &[]);
        // `#hashtag` is not a heading.
        assert_texts(
            "#hashtag is not a heading at all",
            &["#hashtag is not a heading at all"],
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
            assert_texts(md, &[]);
        }
        // Its title opens a section as any heading does.
        let md = "Summary of the review\n**Scope**: the resolver\n---\nThe change adds caching to the resolver.";
        assert_texts(md, &[]);
        // A blank line in between: a horizontal rule, the paragraph stays.
        assert_texts(
            "The retry loop has no upper bound.\n\n---\n",
            &["The retry loop has no upper bound."],
        );
        // A list item above: a horizontal rule.
        assert_texts(
            "- The retry loop has no upper bound.\n---\n",
            &["The retry loop has no upper bound."],
        );
    }

    #[test]
    fn front_matter_is_skipped() {
        let md = "---\ntitle: Audit of the cache layer for the tenant work\nauthor: judge\ntags: [cache]\n---\n\n- The cache key must include the tenant id.\n";
        assert_texts(md, &["The cache key must include the tenant id."]);
        assert_eq!(lines_of(md), vec![7]);
        // `...` closes it too, and a BOM may come first.
        let md = "\u{feff}---\ntitle: words words words words\n...\n- The cache key must include the tenant id.";
        assert_texts(md, &["The cache key must include the tenant id."]);
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
            evidence(
                "---\nsource: src/a.rs:12\n---\nno evidence",
                &strings(&["src/a.rs"])
            )
            .level,
            Level::Reasoning
        );
    }

    #[test]
    fn html_blocks_are_not_observations() {
        let md = "<details><summary>raw</summary>\nsome raw output with many words in it\n</details>\n\n- The cache key must include the tenant id.\n";
        assert_texts(md, &["The cache key must include the tenant id."]);
        // Markdown after a blank line inside the element is read.
        let md = "<details>\n<summary>Raw notes of the run</summary>\n\n- The cache key must include the tenant id.\n\n</details>";
        assert_texts(md, &["The cache key must include the tenant id."]);
        // `<pre>` runs to its closing tag, blank lines included.
        let md = "<pre>\nthe output line one of many\n\nthe output line two of many\n</pre>\n- The cache key must include the tenant id.";
        assert_texts(md, &["The cache key must include the tenant id."]);
        // A lone tag of any name, not inside a paragraph.
        assert_texts(
            "<custom-note kind=\"x\">\nwords words words words here\n",
            &[],
        );
        // Inline html in a sentence, or a tag inside a paragraph, is text.
        assert_texts(
            "The <code>cache</code> key must include the tenant id.",
            &["The <code>cache</code> key must include the tenant id."],
        );
        assert_texts(
            "The cache key must include the tenant id\n<br>\nin every query.",
            &["The cache key must include the tenant id <br> in every query."],
        );
    }

    #[test]
    fn code_fences_are_skipped() {
        let md = "```\n- not a bullet inside a fence block\n```\n~~~python\n- nor inside a tilde fence block\n~~~\n- but this bullet is read fine";
        assert_text_lines(md, &[("but this bullet is read fine", 7)]);
        // A longer fence needs a longer close; an indented fence counts.
        let md = "````md\n```\n- still inside the outer fence\n````\n  ```\n  - inside an indented fence here\n  ```\n- read after both of the fences";
        assert_texts(md, &["read after both of the fences"]);
        // Inline triple backticks are code, not a fence.
        assert_texts(
            "```inline``` code is not a fence at all",
            &["inline code is not a fence at all"],
        );
    }

    #[test]
    fn indented_code_is_skipped_list_content_is_not() {
        let md = "Some paragraph that introduces code:\n\n    let the_code = is_skipped_here(1, 2);\n\n- A bullet that goes on further\n\n    indented text under the bullet item";
        assert_texts(
            md,
            &[
                "A bullet that goes on further",
                "indented text under the bullet item",
            ],
        );
    }

    #[test]
    fn html_comments_are_skipped() {
        let md = "<!-- a comment\n- that spans lines with a bullet\n-->\n- read after the comment ends\n- inline <!-- hidden words --> text is kept here";
        assert_text_lines(
            md,
            &[
                ("read after the comment ends", 4),
                ("inline text is kept here", 5),
            ],
        );
        let md = "<!-- jkz:verdict-json\n{\"verdict\": \"PASS\", \"issues\": []}\n-->\n- the only observation left here";
        assert_texts(md, &["the only observation left here"]);
        // `<!--` in inline code does not open a comment.
        assert_texts(
            "- write `<!--` to open an html comment",
            &["write <!-- to open an html comment"],
        );
    }

    #[test]
    fn tables_are_skipped() {
        let md = "Header one | header two here\n--- | ---\ncell text one | cell text two here\n\n| a | b |\n|---|---|\n| the row of a table here | x |\n\n- read after the tables end";
        assert_texts(md, &["read after the tables end"]);
    }

    #[test]
    fn crlf_input() {
        let md = "# Findings\r\n\r\n- The lock is held across await.\r\n  It blocks the runtime.\r\n\r\n```\r\n- skipped in a fence\r\n```\r\n- Second finding is read too\r\n";
        let got = assert_text_lines(
            md,
            &[
                ("The lock is held across await. It blocks the runtime.", 3),
                ("Second finding is read too", 9),
            ],
        );
        assert!(got.iter().all(|o| !o.text.contains('\r')));
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
}
