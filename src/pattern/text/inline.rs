//! Inline markdown: html comments, code spans, links, emphasis.

use std::collections::HashMap;
use std::sync::LazyLock;

use regex::Regex;

use super::regex;

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

static LINK: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r#"!?\[([^\[\]]*)\]\([^()\s]*(?:\s+"[^"]*")?\)|\[([^\[\]]+)\]\[[^\[\]]*\]|<((?:https?|ftp|mailto):[^<>\s]+)>"#,
    )
});

/// Links and images replaced by their text, innermost first.
pub(super) fn replace_links(s: &str) -> String {
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
pub(super) fn strip_markup(
    s: &str,
    spans: &[(usize, usize, usize)],
    escapes: bool,
    out: &mut String,
) {
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

pub(super) fn collapse_whitespace(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Readable text of markdown: links by their text, emphasis and code
/// backticks removed (code content kept as is), whitespace collapsed.
pub(super) fn clean_inline(s: &str) -> String {
    let s = replace_links(s);
    let mut out = String::with_capacity(s.len());
    strip_markup(&s, &code_spans(&s), true, &mut out);
    collapse_whitespace(&out)
}

/// `s` without the backslashes that escape ASCII punctuation. Each
/// backslash looks at the character after it as written, so `\\\\*`
/// loses both: escapes are markup too, and dropping them all at once keeps
/// [`normalise`](super::normalise) idempotent.
pub(super) fn drop_escapes(s: &str) -> String {
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
