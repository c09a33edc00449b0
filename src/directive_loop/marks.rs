//! Parsing the marker lines agents and reviewers write.
//!
//! An agent ends its final message with one *ack* per directive it was
//! shown (`KNOWLEDGE_APPLIED:<id>`, `KNOWLEDGE_IGNORED:<id> reason=…`,
//! `KNOWLEDGE_N_A:<id> reason=…`); a reviewer writes one *verdict* per
//! directive of the phase (`VERIFIED:<id> evidence=…`, `VIOLATED:<id>
//! evidence=…`, `N/A:<id> reason=…`). Both parsers are pure: they never
//! fail or panic, and return every marker they recognise in text order,
//! duplicates included (the caller decides what those mean).
//!
//! They are tolerant on purpose (a strict regex once rejected
//! `KNOWLEDGE_APPLIED: <id> - done` and deadlocked agent runs), and strict
//! only where a loose match would credit a marker nobody wrote.
//!
//! # What is a marker
//!
//! - **Keyword**, in any letter case. Acks: `KNOWLEDGE_APPLIED`,
//!   `KNOWLEDGE_IGNORED`, `KNOWLEDGE_N_A` and `KNOWLEDGE_VIOLATED` (the
//!   agent admits it did not follow the directive), with `KNOWLEDGE-` as
//!   well. Verdicts: `VERIFIED`, `VIOLATED`, `N/A`. Not applicable may be
//!   spelled `N_A`, `N-A`, `N/A`, `NOT_APPLICABLE` or `NOT-APPLICABLE`, and
//!   in acks `NA` too.
//! - **Boundary.** The keyword may be wrapped in a run of `*`, `_` and
//!   `` ` ``; the character before keyword and wrapping must not be a
//!   letter, a digit or `_` (`XKNOWLEDGE_APPLIED:a-b` and
//!   `PREVIOUSLY_VERIFIED:abc` are no markers). Bullets, table pipes and
//!   punctuation are fine.
//! - **Colon**, required (`VERIFIED - abc` is no marker). Spaces, tabs and
//!   closing emphasis may precede it (`**VERIFIED**: abc`); spaces and
//!   opening wrappers (`*`, `_`, `` ` ``, `"`, `'`, `(`, `[`) may follow.
//! - **Id**: the longest run of ASCII letters, digits, `.`, `_` and `-`
//!   (`abc - done.`, `abc,` and `abc:` give `abc`), less trailing `.` (and
//!   trailing `_` inside `_` emphasis), lowercased. It must then match
//!   [`is_valid_id`] (`^[a-z0-9][a-z0-9._-]{1,79}$`), or the marker is
//!   dropped: `KNOWLEDGE_APPLIED:` and `KNOWLEDGE_APPLIED:<abc>` are none.
//!   Ids are not checked against any store here.
//! - **Several markers on a line** are all read; a marker's text runs from
//!   its colon to the start (wrapping included) of the next marker of the
//!   same family on the line, or to the end of the line.
//!
//! # Reason and evidence
//!
//! The text after the id is trimmed of whitespace, of the wrappers seen
//! around keyword and id, of leading and trailing separators (`-`, `–`,
//! `—`, `,`, `;`, `|`, and a leading `:`), and of a wrapping pair of
//! quotes, backticks, parentheses or brackets. If it then starts with a key
//! (`reason` for acks; `evidence` or `reason` for verdicts) and `=` or `:`,
//! the note is what follows, trimmed the same way. Without a key, the whole
//! text is the note, except for `KNOWLEDGE_APPLIED` (so
//! `KNOWLEDGE_APPLIED: abc - done.` has none). An empty note is `None`; a
//! verdict's reason is stored as its evidence.
//!
//! # Text that is never read
//!
//! So that an agent quoting its own contract or prompt does not ack for it:
//!
//! - **Echoed blocks**: from `<delegate_knowledge_directives` to the next
//!   `</delegate_knowledge_directives>`, and from `<directives_to_verify`
//!   to the next `</directives_to_verify>`, tags included, in any letter
//!   case, even within one line (the rest of those lines is read). An
//!   opening tag is followed by `>`, whitespace or the end of the text; one
//!   with no closing tag after it is a mention, and hides nothing.
//! - **Fenced code blocks**, as in CommonMark: a line starting (after
//!   indentation) with three or more `` ` `` or `~` opens one (a backtick
//!   fence line has no other backtick, so
//!   ```` ```KNOWLEDGE_APPLIED:abc``` ```` is inline code and is read); it
//!   closes at a line of at least as many of the same character and
//!   whitespace, or at the end of the text.
//! - **Quotes**: a line starting (after indentation) with `>`.
//! - **Placeholders**: a line containing `<id>` (any letter case).
//!
//! Lines are split on `\n` (a trailing `\r` is dropped) and numbered from 1.

use serde::Serialize;

use crate::directive::is_valid_id;
use crate::markdown::{Fence, is_quote};

/// What an agent said about one directive in its final message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Ack {
    /// The directive id, lowercased.
    pub id: String,
    pub status: AckStatus,
    /// Why it was ignored or not applicable (or an explicit `reason=` on
    /// an applied ack).
    pub reason: Option<String>,
    /// 1-based line of the marker in the message.
    pub line: u32,
}

/// The answers an agent can give about a directive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AckStatus {
    Applied,
    Ignored,
    NotApplicable,
    /// `KNOWLEDGE_VIOLATED`: the agent says it did not follow the directive.
    Violated,
}

/// A reviewer's verdict on one directive.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Verdict {
    /// The directive id, lowercased.
    pub id: String,
    pub status: VerdictStatus,
    /// The reviewer's evidence (or reason, for not applicable).
    pub evidence: Option<String>,
    /// 1-based line of the marker in the verdicts text.
    pub line: u32,
}

/// The three verdicts a reviewer can give about a directive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum VerdictStatus {
    Verified,
    Violated,
    NotApplicable,
}

/// Every ack marker in an agent's message, in text order.
pub fn parse_acks(text: &str) -> Vec<Ack> {
    scan(text, Family::Ack)
        .into_iter()
        .filter_map(|m| match m.kind {
            Kind::Ack(status) => Some(Ack {
                id: m.id,
                status,
                reason: m.note,
                line: m.line,
            }),
            Kind::Verdict(_) => None,
        })
        .collect()
}

/// Every verdict marker in a reviewer's text, in text order.
pub fn parse_verdicts(text: &str) -> Vec<Verdict> {
    scan(text, Family::Verdict)
        .into_iter()
        .filter_map(|m| match m.kind {
            Kind::Verdict(status) => Some(Verdict {
                id: m.id,
                status,
                evidence: m.note,
                line: m.line,
            }),
            Kind::Ack(_) => None,
        })
        .collect()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    Ack,
    Verdict,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Ack(AckStatus),
    Verdict(VerdictStatus),
}

impl Kind {
    /// Is the text after the id a note even without a `reason=` key?
    fn free_note(self) -> bool {
        self != Kind::Ack(AckStatus::Applied)
    }
}

/// A recognised marker with a valid id.
struct Mark {
    kind: Kind,
    id: String,
    note: Option<String>,
    line: u32,
}

/// Where a keyword and its colon were found in a line segment.
struct Candidate<'a> {
    kind: Kind,
    /// Start of the wrapping before the keyword (or of the keyword).
    start: usize,
    /// The wrapping before the keyword: `*`, `_` and `` ` `` only.
    opener: &'a str,
    /// Just after the colon.
    body: usize,
}

/// The echoed blocks: opening tag name, closing tag name.
const BLOCKS: [(&str, &str); 2] = [
    (
        "<delegate_knowledge_directives",
        "</delegate_knowledge_directives",
    ),
    ("<directives_to_verify", "</directives_to_verify"),
];

/// The spellings of "not applicable" after the ack prefix or alone.
const NA_FORMS: [&[u8]; 5] = [b"n_a", b"n-a", b"n/a", b"not_applicable", b"not-applicable"];

/// Separators trimmed around a note.
const SEPARATORS: [char; 6] = ['-', '–', '—', ',', ';', '|'];

fn scan(text: &str, family: Family) -> Vec<Mark> {
    let masks = masked_ranges(text);
    let mut mask_cursor = 0;
    let mut fence: Option<Fence> = None;
    let mut out = Vec::new();
    let mut line_start = 0;
    for (n, raw) in text.split('\n').enumerate() {
        let start = line_start;
        line_start += raw.len() + 1;
        let end = start + raw.strip_suffix('\r').unwrap_or(raw).len();
        let line = u32::try_from(n + 1).unwrap_or(u32::MAX);
        let segments = live_segments(start, end, &masks, &mut mask_cursor);
        let Some(&(first_start, first_end)) = segments.first() else {
            continue;
        };
        // Line-level rules look at the line's own start, not at text left
        // after an echoed block closed mid-line.
        let head = (first_start == start).then(|| &text[first_start..first_end]);
        if let Some(f) = fence {
            if head.is_some_and(|h| f.closes(h)) {
                fence = None;
            }
            continue;
        }
        if let Some(h) = head {
            if let Some((f, _)) = Fence::open(h) {
                fence = Some(f);
                continue;
            }
            if is_quote(h) {
                continue;
            }
            // The contract's example line, quoted back, is not an ack.
            if is_example_line(h) {
                continue;
            }
        }
        if segments
            .iter()
            .any(|&(s, e)| contains_ci(&text.as_bytes()[s..e], b"<id>"))
        {
            continue;
        }
        for &(s, e) in &segments {
            read_segment(&text[s..e], family, line, &mut out);
        }
    }
    out
}

/// Does the line start (after list bullets and emphasis) with `Example:`,
/// as the contract's example line does?
fn is_example_line(line: &str) -> bool {
    let t =
        line.trim_start_matches(|c: char| c.is_whitespace() || matches!(c, '-' | '*' | '_' | '`'));
    t.get(..8)
        .is_some_and(|w| w.eq_ignore_ascii_case("example:"))
}

/// The byte ranges of `text` inside echoed blocks, sorted and disjoint.
fn masked_ranges(text: &str) -> Vec<(usize, usize)> {
    // ASCII lowercasing keeps every byte offset.
    let lower = text.to_ascii_lowercase();
    let last_close: Vec<Option<usize>> = BLOCKS.iter().map(|(_, c)| lower.rfind(c)).collect();
    let mut out = Vec::new();
    let mut pos = 0;
    // The next real opening tag of each block at or after `pos`, once
    // searched for (`Some(None)`: there is none left).
    let mut next: [Option<Option<usize>>; 2] = [None; 2];
    while pos < lower.len() {
        for (k, (open, _)) in BLOCKS.iter().enumerate() {
            if next[k].is_some_and(|n| n.is_none_or(|at| at >= pos)) {
                continue;
            }
            next[k] = Some(find_opening(&lower, pos, open));
        }
        let best = (0..BLOCKS.len())
            .filter_map(|k| next[k].flatten().map(|at| (at, k)))
            .min();
        let Some((at, k)) = best else { break };
        let (open, close) = BLOCKS[k];
        let open_end = at + open.len();
        let close_at = last_close[k]
            .filter(|&c| c >= open_end)
            .and_then(|_| lower[open_end..].find(close))
            .map(|off| open_end + off);
        match close_at {
            Some(c) => {
                let mut end = c + close.len();
                let rest = lower[end..].trim_start_matches([' ', '\t']);
                if rest.starts_with('>') {
                    end = lower.len() - rest.len() + 1;
                }
                out.push((at, end));
                pos = end;
            }
            // A mention of the block, not an echo of it.
            None => pos = open_end,
        }
    }
    out
}

/// The first `open` at or after `from` that is a tag: followed by `>`,
/// whitespace or the end of the text.
fn find_opening(lower: &str, mut from: usize, open: &str) -> Option<usize> {
    while let Some(off) = lower.get(from..)?.find(open) {
        let at = from + off;
        let after = lower.as_bytes().get(at + open.len());
        if after.is_none_or(|&b| b == b'>' || b.is_ascii_whitespace()) {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

/// The parts of the line `[start, end)` outside masked ranges.
fn live_segments(
    start: usize,
    end: usize,
    masks: &[(usize, usize)],
    cursor: &mut usize,
) -> Vec<(usize, usize)> {
    while *cursor < masks.len() && masks[*cursor].1 <= start {
        *cursor += 1;
    }
    let mut out = Vec::new();
    let mut pos = start;
    for &(ms, me) in masks[*cursor..].iter().take_while(|m| m.0 < end) {
        if ms > pos {
            out.push((pos, ms));
        }
        pos = pos.max(me);
    }
    if pos < end {
        out.push((pos, end));
    }
    out
}

fn contains_ci(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len())
        .any(|w| w.eq_ignore_ascii_case(needle))
}

/// Reads every marker of `family` in one live part of a line.
fn read_segment(seg: &str, family: Family, line: u32, out: &mut Vec<Mark>) {
    let candidates = find_candidates(seg, family);
    for (k, c) in candidates.iter().enumerate() {
        let end = candidates.get(k + 1).map_or(seg.len(), |next| next.start);
        let keys: &[&str] = match family {
            Family::Ack => &["reason"],
            Family::Verdict => &["evidence", "reason"],
        };
        if let Some((id, note)) = read_body(&seg[c.body..end], c.opener, c.kind.free_note(), keys) {
            out.push(Mark {
                kind: c.kind,
                id,
                note,
                line,
            });
        }
    }
}

/// Every keyword-and-colon of `family` in `seg` that starts at a boundary.
fn find_candidates(seg: &str, family: Family) -> Vec<Candidate<'_>> {
    let b = seg.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if let Some((kind, kw_end)) = match_keyword(b, i, family) {
            let gap = b[kw_end..]
                .iter()
                .take_while(|&&c| matches!(c, b' ' | b'\t' | b'*' | b'`' | b'_'))
                .count();
            let colon = kw_end + gap;
            if b.get(colon) == Some(&b':') {
                // Only ASCII bytes are stepped over, so `start` is a char boundary.
                let mut start = i;
                while start > 0 && matches!(b[start - 1], b'*' | b'_' | b'`') {
                    start -= 1;
                }
                let at_boundary = seg[..start]
                    .chars()
                    .next_back()
                    .is_none_or(|c| !c.is_alphanumeric());
                if at_boundary {
                    out.push(Candidate {
                        kind,
                        start,
                        opener: &seg[start..i],
                        body: colon + 1,
                    });
                    i = colon + 1;
                    continue;
                }
            }
        }
        i += 1;
    }
    out
}

/// The marker keyword of `family` starting at byte `i`, and its end.
fn match_keyword(b: &[u8], i: usize, family: Family) -> Option<(Kind, usize)> {
    use AckStatus as A;
    use VerdictStatus as V;
    let (j, words, na): (usize, &[(&[u8], Kind)], Kind) = match family {
        Family::Ack => {
            let j = eat(b, i, b"knowledge")?;
            if !matches!(b.get(j), Some(b'_' | b'-')) {
                return None;
            }
            let words: &[(&[u8], Kind)] = &[
                (b"applied", Kind::Ack(A::Applied)),
                (b"ignored", Kind::Ack(A::Ignored)),
                (b"violated", Kind::Ack(A::Violated)),
            ];
            (j + 1, words, Kind::Ack(A::NotApplicable))
        }
        Family::Verdict => {
            let words: &[(&[u8], Kind)] = &[
                (b"verified", Kind::Verdict(V::Verified)),
                (b"violated", Kind::Verdict(V::Violated)),
            ];
            (i, words, Kind::Verdict(V::NotApplicable))
        }
    };
    // Acks also take a bare `NA`, after the longer spellings.
    let bare_na = (family == Family::Ack).then_some(&b"na"[..]);
    words
        .iter()
        .copied()
        .chain(NA_FORMS.iter().chain(&bare_na).map(|&f| (f, na)))
        .find_map(|(word, kind)| Some((kind, eat(b, j, word)?)))
}

/// If `word` (lowercase ASCII) is at `b[i..]` in any case, the end of it.
fn eat(b: &[u8], i: usize, word: &[u8]) -> Option<usize> {
    let end = i.checked_add(word.len())?;
    b.get(i..end)
        .is_some_and(|w| w.eq_ignore_ascii_case(word))
        .then_some(end)
}

/// The id and note of a marker, from the text after its colon.
fn read_body(
    body: &str,
    opener: &str,
    free_note: bool,
    keys: &[&str],
) -> Option<(String, Option<String>)> {
    // Closers of the wrapping around the keyword, and of the id.
    let outer: Vec<char> = opener.chars().collect();
    let mut inner = outer.clone();
    let mut t = body;
    while let Some(c) = t.chars().next() {
        let closer = match c {
            '*' | '_' | '`' | '"' | '\'' => c,
            '(' => ')',
            '[' => ']',
            c if c.is_whitespace() => {
                t = &t[c.len_utf8()..];
                continue;
            }
            _ => break,
        };
        inner.push(closer);
        t = &t[c.len_utf8()..];
    }
    let run = t
        .bytes()
        .take_while(|&b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
        .count();
    // An id runs to a word's end: `crit-aé` or `crit-a/x` is not `crit-a`.
    // Text in a script written without spaces (`crit-a已完成`) may follow.
    if t[run..].chars().next().is_some_and(|c| {
        (c.is_alphanumeric() && !unspaced_script(c))
            || matches!(c, '/' | '\\' | '@' | '+' | '~' | '#')
    }) {
        return None;
    }
    let underscored = outer.contains(&'_');
    let id = t[..run]
        .trim_end_matches(|c| c == '.' || (underscored && c == '_'))
        .to_ascii_lowercase();
    if !is_valid_id(&id) {
        return None;
    }
    let rest = t[run..]
        .trim_start_matches(|c: char| c.is_whitespace() || inner.contains(&c))
        .trim_end_matches(|c: char| {
            c.is_whitespace() || outer.contains(&c) || SEPARATORS.contains(&c)
        })
        .trim_start_matches(|c: char| c.is_whitespace() || c == ':' || SEPARATORS.contains(&c));
    let rest = unwrap_pairs(rest);
    let note = match strip_key(rest, keys) {
        Some(value) => Some(value),
        None if free_note => Some(rest),
        None => None,
    };
    let note = note
        .map(|n| {
            unwrap_pairs(n.trim_end_matches(|c: char| c.is_whitespace() || SEPARATORS.contains(&c)))
        })
        .filter(|n| !n.is_empty() && !is_placeholder(n))
        .map(str::to_owned);
    Some((id, note))
}

/// A note copied from the contract rather than written: `<why>`, `…`.
fn is_placeholder(note: &str) -> bool {
    let inner = note.strip_prefix('<').and_then(|n| n.strip_suffix('>'));
    inner.is_some_and(|i| !i.contains(['<', '>']))
        || note
            .chars()
            .all(|c| c == '.' || c == '…' || c.is_whitespace())
}

/// Is `c` of a script written without spaces between words (Chinese,
/// Japanese, Korean, Thai, and their full-width forms)?
fn unspaced_script(c: char) -> bool {
    matches!(c,
        '\u{0E00}'..='\u{0EFF}'
        | '\u{1100}'..='\u{11FF}'
        | '\u{3000}'..='\u{9FFF}'
        | '\u{AC00}'..='\u{D7AF}'
        | '\u{F900}'..='\u{FAFF}'
        | '\u{FF00}'..='\u{FFEF}'
        | '\u{20000}'..='\u{3FFFF}')
}

/// The value after `key=` or `key:` at the start of `t`, for any of `keys`.
fn strip_key<'a>(t: &'a str, keys: &[&str]) -> Option<&'a str> {
    keys.iter().find_map(|k| {
        let head = t.as_bytes().get(..k.len())?;
        if !head.eq_ignore_ascii_case(k.as_bytes()) {
            return None;
        }
        // `k` is ASCII and matched, so `k.len()` is a char boundary.
        t[k.len()..].trim_start().strip_prefix(['=', ':'])
    })
}

/// Trims `s` and removes wrapping quotes, backticks, parentheses or
/// brackets, as long as the closer does not also occur inside.
fn unwrap_pairs(mut s: &str) -> &str {
    loop {
        s = s.trim();
        let mut chars = s.chars();
        let (Some(first), Some(last)) = (chars.next(), chars.next_back()) else {
            return s;
        };
        let close = match first {
            '"' | '\'' | '`' => first,
            '“' => '”',
            '‘' => '’',
            '(' => ')',
            '[' => ']',
            _ => return s,
        };
        let inner = &s[first.len_utf8()..s.len() - last.len_utf8()];
        if last != close || inner.contains(close) {
            return s;
        }
        s = inner;
    }
}

#[cfg(test)]
mod tests;
