//! Tokenisation: the words of a lesson or a query, as both the corpus and
//! the queries cut them, so that a query token finds the same token stored.

use unicode_segmentation::UnicodeSegmentation;

/// Tokens of `text`: lowercase words by the Unicode word boundaries (UAX #29),
/// each CJK ideograph a token of its own, accents kept (`café` is not
/// `cafe`), without one-character ASCII tokens and a short English stop list.
/// Negations (`no`, `not`, `never`) are kept: they matter in a lesson.
pub fn tokenize(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    each_token(text, |t| out.push(t.to_owned()));
    out
}

pub(super) fn each_token(text: &str, mut f: impl FnMut(&str)) {
    let lower = text.to_lowercase();
    let mut emit = |t: &str| {
        if keep(t) {
            f(t)
        }
    };
    for word in lower.unicode_words() {
        if !word.chars().any(is_ideograph) {
            emit(word);
            continue;
        }
        let mut run: Option<usize> = None;
        for (i, c) in word.char_indices() {
            if is_ideograph(c) {
                if let Some(s) = run.take() {
                    emit(&word[s..i]);
                }
                emit(&word[i..i + c.len_utf8()]);
            } else if run.is_none() {
                run = Some(i);
            }
        }
        if let Some(s) = run {
            emit(&word[s..]);
        }
    }
}

fn keep(t: &str) -> bool {
    // A one-byte token is a single ASCII character.
    t.len() > 1 && !is_stop_word(t)
}

fn is_stop_word(t: &str) -> bool {
    matches!(
        t,
        "an" | "and"
            | "are"
            | "as"
            | "at"
            | "be"
            | "by"
            | "for"
            | "from"
            | "has"
            | "have"
            | "if"
            | "in"
            | "into"
            | "is"
            | "it"
            | "its"
            | "of"
            | "on"
            | "or"
            | "so"
            | "than"
            | "that"
            | "the"
            | "their"
            | "then"
            | "there"
            | "these"
            | "this"
            | "those"
            | "to"
            | "was"
            | "we"
            | "were"
            | "which"
            | "with"
            | "you"
            | "your"
    )
}

/// CJK unified ideographs (with extensions A to H) and compatibility ideographs.
fn is_ideograph(c: char) -> bool {
    matches!(
        c as u32,
        0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0x20000..=0x2FA1F | 0x30000..=0x323AF
    )
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::*;

    #[test]
    fn tokens_are_unicode_words() {
        assert_eq!(
            tokenize("Résumé parsing, CAFÉ & café!"),
            ["résumé", "parsing", "café", "café"]
        );
        assert_ne!(tokenize("résumé"), tokenize("resume"));
        assert_eq!(tokenize("数据库"), ["数", "据", "库"]);
        assert_eq!(
            tokenize("用Rust写数据库"),
            ["用", "rust", "写", "数", "据", "库"]
        );
        // One-character ASCII tokens and stop words go; negations stay.
        assert_eq!(
            tokenize("Do not use a x in the loop"),
            ["do", "not", "use", "loop"]
        );
        assert_eq!(tokenize("é 1 ü"), ["é", "ü"]);

        let docs = [
            dir("accent", "Store the résumé as UTF-8 without normalising it"),
            dir("plain", "Resume the interrupted upload from the last chunk"),
            dir("cjk", "迁移数据库之前先备份 the production data"),
        ];
        let c = corpus(&docs);
        assert_eq!(ids(&c.score(&query("résumé"), &seasoned)), ["accent"]);
        assert_eq!(ids(&c.score(&query("resume"), &seasoned)), ["plain"]);
        assert_eq!(ids(&c.score(&query("数据库"), &seasoned)), ["cjk"]);
        assert_eq!(ids(&c.score(&query("库"), &seasoned)), ["cjk"]);
    }
}
