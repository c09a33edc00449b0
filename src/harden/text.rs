//! Editing a quarantine file's text while keeping what a person wrote:
//! comments, order and layout stay, only the named top-level keys change.

use toml::de::DeTable;

/// The byte range of each top-level key named in `keys` in `text`, from
/// the start of its line to the end of its value's line (the newline
/// included), in file order. `None` if `text` does not parse.
fn key_lines(text: &str, keys: &[&str]) -> Option<Vec<(std::ops::Range<usize>, usize)>> {
    let table = DeTable::parse(text).ok()?;
    let mut lines: Vec<_> = table
        .get_ref()
        .iter()
        .filter(|(k, _)| keys.contains(&k.get_ref().as_ref()))
        .map(|(k, v)| {
            let start = text[..k.span().start].rfind('\n').map_or(0, |n| n + 1);
            let end = v.span().end;
            let end = text[end..].find('\n').map_or(text.len(), |n| end + n + 1);
            (start..end, k.span().start)
        })
        .collect();
    lines.sort_by_key(|(r, _)| r.start);
    Some(lines)
}

/// `text` without the top-level keys `keys` (each with its line). `None`
/// if `text` does not parse, or a key shares its line with something else
/// than a comment (it could not be removed alone).
pub fn without_keys(text: &str, keys: &[&str]) -> Option<String> {
    let lines = key_lines(text, keys)?;
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (line, key_start) in lines {
        // Only blanks before the key (after its value TOML allows only a comment).
        if !text[line.start..key_start].trim().is_empty() {
            return None;
        }
        out.push_str(&text[at..line.start]);
        at = line.end;
    }
    out.push_str(&text[at..]);
    Some(out)
}

/// `text` with each top-level key of `set` given its value (a TOML value
/// as written, e.g. `"a reason"`, `3`, `true`): an existing value replaced
/// where it stands, a new key added on a line of its own after
/// `quarantine_reason` (at the top when there is none). `None` if `text`
/// does not parse.
pub fn with_keys(text: &str, set: &[(&str, toml::Value)]) -> Option<String> {
    let mut out = text.to_owned();
    for (key, value) in set {
        let table = DeTable::parse(&out).ok()?;
        let span = |name: &str| {
            table
                .get_ref()
                .iter()
                .find(|(k, _)| k.get_ref() == name)
                .map(|(_, v)| v.span())
        };
        let written = value.to_string();
        if let Some(span) = span(key) {
            out.replace_range(span, &written);
            continue;
        }
        let after = span("quarantine_reason").map_or(0, |s| {
            out[s.end..].find('\n').map_or(out.len(), |n| s.end + n + 1)
        });
        let mut line = format!("{key} = {written}\n");
        if after == out.len() && !out.is_empty() && !out.ends_with('\n') {
            line.insert(0, '\n');
        }
        out.insert_str(after, &line);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_removed_with_their_lines_and_the_rest_kept() {
        let text = "# why it was kept\nquarantine_reason = \"missing_scope\"\nquarantine_detail = \"\"\"\nsee\nbelow\"\"\" # note\nid = \"ab\" # the id\nlesson = \"x\"\nretire_candidate = true\n";
        assert_eq!(
            without_keys(
                text,
                &["quarantine_reason", "quarantine_detail", "retire_candidate"]
            )
            .expect("parses"),
            "# why it was kept\nid = \"ab\" # the id\nlesson = \"x\"\n"
        );
        assert!(without_keys("id = ", &["id"]).is_none());
    }

    #[test]
    fn keys_are_replaced_in_place_or_added_after_the_reason() {
        let text =
            "quarantine_reason = \"missing_scope\" # why\nid = \"ab\"\nharden_attempts = 1\n";
        let set = [
            ("harden_attempts", toml::Value::Integer(3)),
            ("harden_reason", toml::Value::String("it \"hung\"".into())),
        ];
        assert_eq!(
            with_keys(text, &set).expect("parses"),
            "quarantine_reason = \"missing_scope\" # why\nharden_reason = 'it \"hung\"'\nid = \"ab\"\nharden_attempts = 3\n"
        );
    }
}
