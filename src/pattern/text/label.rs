//! The labels that name a finding: `Finding 3:`, `**S3**`, `[H-12]`.

use std::sync::LazyLock;

use regex::Regex;

use super::regex;

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
pub(super) static LABEL_ONLY: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?xi)^[\x20\t]*(?:\*\*|__)?[\x20\t]*[\[(]?[\x20\t]*
        (?:(?:finding|issue|problem|concern|risk|bug|blocker|defect|observation)[\x20\t]*)?
        (?:[a-z]{1,3}-?[0-9]{1,4}|\#?[0-9]{1,6})
        [\x20\t]*[\])]?[\x20\t]*(?:\*\*|__)?[\x20\t]*[:.]?[\x20\t]*$",
    )
});

/// A [`label_key`] without the word that names it a finding: `Finding 3`,
/// `issue #3` and `#3` all name finding `3`, `Finding S3` names `s3`.
pub(super) fn bare_label(key: &str) -> &str {
    // The words `FINDING_LABEL` and `LABEL_ONLY` take.
    const WORDS: &str = "finding|issue|problem|concern|risk|bug|blocker|defect|observation";
    key.split_once(' ')
        .filter(|(word, _)| WORDS.split('|').any(|w| w == word.trim_end_matches('s')))
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
pub(super) fn labelled(t: &str) -> Option<(Option<String>, &str)> {
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
pub(super) fn finding_label(t: &str) -> Option<&str> {
    let c = FINDING_LABEL.captures(t)?;
    let sep = c.get(2).map_or("", |m| m.as_str());
    // `Issue. …` is a sentence; `Issue 3. …` is a numbered finding.
    if (sep == "." || sep == ")") && c.get(1).is_none() {
        return None;
    }
    let end = c.get(0).map_or(0, |m| m.end());
    Some(&t[end..])
}
