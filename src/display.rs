//! Text from `.swarm/` (which a pull request controls) made safe to show.
//!
//! Two readers, two treatments of the same set of characters. An agent
//! reads a prompt: [`crate::directive_loop::inject::sanitise`] drops what [`is_hidden`]
//! names, so a lesson can neither hide words nor forge a line. A person
//! reads a terminal: [`escape`] shows the same characters as visible
//! escapes (`\u{202e}`), so a reordered or hidden part of a lesson or a
//! `tool:` predicate is seen for what it is, and no escape sequence reaches
//! the terminal. Backslashes are left as they are: a regex stays readable.

use std::borrow::Cow;

/// Characters that change how the text around them is shown without
/// showing themselves: bidirectional controls (which reorder a line),
/// zero-width characters, and the other invisible carriers of hidden text
/// (the tag characters spell ASCII unseen). Control characters are handled
/// on their own (see [`escape`] and [`crate::directive_loop::inject::sanitise`]).
pub fn is_hidden(c: char) -> bool {
    matches!(c,
        '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2064}'
        | '\u{2066}'..='\u{2069}' | '\u{FEFF}' | '\u{00AD}'
        | '\u{180E}' | '\u{061C}' | '\u{115F}' | '\u{1160}' | '\u{3164}' | '\u{FFA0}'
        | '\u{FE00}'..='\u{FE0F}' | '\u{FFF9}'..='\u{FFFB}' | '\u{1D173}'..='\u{1D17A}'
        | '\u{E0000}'..='\u{E007F}' | '\u{E0100}'..='\u{E01EF}')
}

/// Shown escaped on a terminal: control characters (C0, DEL, C1, so ESC
/// and every escape sequence), the line and paragraph separators, and
/// [`is_hidden`] characters.
fn needs_escape(c: char) -> bool {
    c.is_control() || matches!(c, '\u{2028}' | '\u{2029}') || is_hidden(c)
}

/// `s` as it may be shown on a terminal: every character of
/// [`needs_escape`] written as a Rust-style escape (`\t`, `\n`, `\u{1b}`,
/// `\u{202e}`), the rest as it is.
pub fn escape(s: &str) -> Cow<'_, str> {
    if !s.chars().any(needs_escape) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        if needs_escape(c) {
            // `\t`, `\n`, `\r` by name; anything else as `\u{…}`.
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// A line of a file as a finding shows it: [`escape`]d (a tab is `\t`, a
/// CR `\r`), and the whitespace it ends with escaped too (a space is
/// `\u{20}`), so a finding about trailing whitespace shows what it found.
/// `s` cut to `max` characters, the last of them `…`.
pub fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_owned();
    }
    let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
    t.push('…');
    t
}

pub fn escape_line(s: &str) -> String {
    let body = s.trim_end_matches(char::is_whitespace);
    let mut out = escape(body).into_owned();
    for c in s[body.len()..].chars() {
        match c {
            '\t' | '\r' | '\n' => out.extend(c.escape_default()),
            // `escape_default` leaves a space (printable ASCII) as it is.
            c => out.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hidden_and_control_characters_are_shown_escaped() {
        assert_eq!(
            escape("tool:echo \u{202e}hsab\u{202c} ok"),
            "tool:echo \\u{202e}hsab\\u{202c} ok"
        );
        assert_eq!(
            escape("a\u{200b}b\u{2066}c\u{feff}"),
            "a\\u{200b}b\\u{2066}c\\u{feff}"
        );
        assert_eq!(escape("\x1b[31mred\x1b[0m"), "\\u{1b}[31mred\\u{1b}[0m");
        assert_eq!(escape("a\tb\nc\u{85}"), "a\\tb\\nc\\u{85}");
        assert_eq!(
            escape("grep:\\bunwrap\\(\\) é …"),
            "grep:\\bunwrap\\(\\) é …"
        );
        assert!(matches!(escape("plain"), Cow::Borrowed(_)));
    }

    #[test]
    fn a_line_shows_its_tabs_and_trailing_whitespace() {
        assert_eq!(escape_line("\tlet x = 1;  "), "\\tlet x = 1;\\u{20}\\u{20}");
        assert_eq!(escape_line("ok\r"), "ok\\r");
        assert_eq!(escape_line("   "), "\\u{20}\\u{20}\\u{20}");
        assert_eq!(escape_line("a b"), "a b");
        assert_eq!(escape_line("x\u{202e}\t"), "x\\u{202e}\\t");
    }
}
