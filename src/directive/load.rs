//! Reading directive files, reporting every problem with its line and column.
//!
//! serde stops at the first error; a linter must not. So the TOML is parsed
//! into a spanned document first and each key is checked on its own: an
//! unknown key, a wrong type and a bad enum value in the same file are three
//! problems, each at its own place.

use std::collections::HashMap;
use std::ops::Range;

use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::{Directive, QuarantineReason, Quarantined, check_gate, is_valid_id};
use crate::problem::Problem;

/// A directive file as read: the directive, if it could be built, and every
/// problem found on the way.
#[derive(Debug, Clone, Default)]
pub struct LoadedDirective {
    pub directive: Option<Directive>,
    pub problems: Vec<Problem>,
    spans: HashMap<&'static str, (Range<usize>, Vec<Range<usize>>)>,
    /// What could be read of a file with problems, fields with a problem
    /// left at their defaults: the gate still judges the others, so that a
    /// file's every problem is reported in one run.
    partial: Option<Directive>,
    /// The fields with a problem of their own (a wrong type, a bad value, missing).
    bad_fields: Vec<&'static str>,
    /// The lists with an item that is no string: their other items are
    /// still judged, but an empty list may be only that item's doing.
    bad_items: Vec<&'static str>,
}

impl LoadedDirective {
    /// The gate's verdict as problems placed at the offending field or item
    /// (at the offending character of an item written without escapes).
    /// A field with a problem of its own is not judged again: `lesson = 3`
    /// is one problem, not also a lesson too short.
    pub fn gate_problems(&self, text: &str, path: &str) -> Vec<Problem> {
        let Some(d) = self.directive.as_ref().or(self.partial.as_ref()) else {
            return Vec::new();
        };
        let Err(failure) = check_gate(d) else {
            return Vec::new();
        };
        let bad = |field: &str| self.bad_fields.contains(&field);
        let bad_item = |field: &str| self.bad_items.contains(&field);
        failure
            .issues
            .iter()
            .filter(|issue| match issue.reason {
                QuarantineReason::MissingPredicate
                | QuarantineReason::MissingScope
                | QuarantineReason::MissingPredicateAndScope => {
                    // Nothing to check, or nobody to check it for, may only
                    // be a field that could not be read.
                    let group: &[&str] = if issue.field == "verify" {
                        &[
                            "forbidden_actions",
                            "required_actions",
                            "verification_checks",
                            "verify",
                        ]
                    } else {
                        &["applies_to_agents", "applies_to_tools"]
                    };
                    !group.iter().any(|f| bad(f) || bad_item(f))
                }
                _ => !bad(issue.field),
            })
            .map(|issue| {
                // A missing field has no place of its own: point at the top of the file.
                let offset = self.spans.get(issue.field).map_or(0, |(whole, items)| {
                    match issue.index.and_then(|i| items.get(i)) {
                        Some(item) => item.start + inside(text, item, issue.at),
                        None => whole.start,
                    }
                });
                Problem::error(path, issue.reason.as_str(), issue.message.clone())
                    .at_offset(text, offset)
                    .with_hint(issue.hint.clone())
            })
            .collect()
    }

    /// The valid `id` the file gives, whatever else is wrong with it.
    pub fn id(&self) -> Option<&str> {
        let d = self.directive.as_ref().or(self.partial.as_ref())?;
        (!d.id.is_empty()).then_some(d.id.as_str())
    }
}

/// How far into the TOML string `item` (its span, quotes included) byte
/// `at` of its value is: past the opening quote when the value is written
/// as it reads (no escapes, no leading newline); at the quote otherwise.
fn inside(text: &str, item: &Range<usize>, at: Option<usize>) -> usize {
    let Some(at) = at else { return 0 };
    let raw = text.get(item.clone()).unwrap_or_default();
    let quote = if raw.starts_with("'''") || raw.starts_with("\"\"\"") {
        3
    } else {
        1
    };
    let body = raw
        .get(quote..raw.len().saturating_sub(quote))
        .unwrap_or_default();
    let as_written = raw.starts_with('\'') || !body.contains('\\');
    if as_written && at <= body.len() && !body.starts_with('\n') {
        quote + at
    } else {
        0
    }
}

const KEYS: &[&str] = &[
    "id",
    "lesson",
    "rationale",
    "category",
    "priority",
    "enforcement",
    "status",
    "confidence",
    "applies_to_agents",
    "applies_to_tools",
    "paths",
    "triggers",
    "forbidden_actions",
    "required_actions",
    "verification_checks",
    "verify",
    "tags",
    "created_at",
    "source",
];

/// Parses the text of `directives/<id>.toml`. `path` is used in problems.
pub fn parse_directive_toml(text: &str, path: &str) -> LoadedDirective {
    parse(text, path, false, true).0
}

/// As [`parse_directive_toml`], but `id` may be left out (`git swarm add
/// --from` derives one from the lesson); the directive then has an empty id.
pub fn parse_directive_toml_without_id(text: &str, path: &str) -> LoadedDirective {
    parse(text, path, false, false).0
}

/// Parses the text of `quarantine/<id>.toml`: a directive plus
/// `quarantine_reason` (required), `quarantine_detail`, and what `harden`
/// recorded (`harden_reason`, `harden_attempts`, `retire_candidate`).
pub fn parse_quarantined_toml(text: &str, path: &str) -> (Option<Quarantined>, Vec<Problem>) {
    let (loaded, keys) = parse(text, path, true, true);
    // A missing or bad `quarantine_reason` is among the problems.
    let q = match (loaded.directive, keys.reason) {
        (Some(directive), Some(quarantine_reason)) => Some(Quarantined {
            directive,
            quarantine_reason,
            quarantine_detail: keys.detail,
            harden_reason: keys.harden_reason,
            harden_attempts: keys.harden_attempts,
            retire_candidate: keys.retire_candidate,
        }),
        _ => None,
    };
    (q, loaded.problems)
}

/// The keys of a quarantine file beyond a directive's.
#[derive(Default)]
struct QuarantineKeys {
    reason: Option<QuarantineReason>,
    detail: Option<String>,
    harden_reason: Option<String>,
    harden_attempts: u32,
    retire_candidate: bool,
}

fn parse(
    text: &str,
    path: &str,
    quarantine: bool,
    require_id: bool,
) -> (LoadedDirective, QuarantineKeys) {
    let mut out = LoadedDirective::default();
    let (table, errors) = DeTable::parse_recoverable(text);
    if !errors.is_empty() {
        for e in errors {
            let offset = e.span().map_or(0, |s| s.start);
            out.problems.push(
                Problem::error(
                    path,
                    "toml_syntax",
                    format!("TOML syntax: {}", e.message().trim()),
                )
                .at_offset(text, offset)
                .with_hint("fix the TOML syntax; see https://toml.io"),
            );
        }
        return (out, QuarantineKeys::default());
    }
    let table = table.into_inner();
    let mut x = Extract {
        text,
        path,
        problems: Vec::new(),
    };
    let mut d = Directive::new(String::new(), String::new());
    let mut keys = QuarantineKeys::default();

    for (key, value) in table.iter() {
        let name: &str = key.get_ref();
        let span = value.span();
        let Some(&field) = KEYS.iter().find(|k| **k == name) else {
            if quarantine && name == "quarantine_reason" {
                if let Some(s) = x.string(name, value) {
                    match s.parse() {
                        Ok(r) => keys.reason = Some(r),
                        Err(_) => x.push(
                            span.start,
                            "bad_value",
                            format!("`quarantine_reason` is `{s}`, not a known reason"),
                            format!("use one of {}", QuarantineReason::NAMES.join(", ")),
                        ),
                    }
                }
                continue;
            }
            if quarantine && name == "quarantine_detail" {
                keys.detail = x.string(name, value);
                continue;
            }
            if quarantine && name == "harden_reason" {
                keys.harden_reason = x.string(name, value);
                continue;
            }
            if quarantine && name == "harden_attempts" {
                match value.get_ref() {
                    DeValue::Integer(i) if i.radix() == 10 => {
                        match i.as_str().replace('_', "").parse::<u32>() {
                            Ok(n) => keys.harden_attempts = n,
                            Err(_) => x.type_error(name, value, "a count (0 or more)"),
                        }
                    }
                    _ => x.type_error(name, value, "a count (0 or more)"),
                }
                continue;
            }
            if quarantine && name == "retire_candidate" {
                match value.get_ref() {
                    DeValue::Boolean(b) => keys.retire_candidate = *b,
                    _ => x.type_error(name, value, "true or false"),
                }
                continue;
            }
            x.push(
                key.span().start,
                "unknown_key",
                format!("unknown key `{name}`"),
                suggest(name),
            );
            continue;
        };
        // The spans of the items read (strings only, so that the gate's item
        // index finds its item when a list also holds a wrong-typed one).
        let item_spans = match value.get_ref() {
            DeValue::Array(items) => items
                .iter()
                .filter(|i| matches!(i.get_ref(), DeValue::String(_)))
                .map(|i| i.span())
                .collect(),
            _ => Vec::new(),
        };
        let is_array = matches!(value.get_ref(), DeValue::Array(_));
        out.spans.insert(field, (span.clone(), item_spans));
        let problems_before = x.problems.len();
        match field {
            "id" => {
                if let Some(id) = x.string(field, value) {
                    if is_valid_id(&id) {
                        d.id = id;
                    } else {
                        x.push(
                            span.start,
                            "bad_id",
                            format!("id `{}` is not a valid id", escape(&id)),
                            "ids are 2–80 characters of a-z, 0-9, `.`, `_` and `-`, starting with a letter or digit".into(),
                        );
                    }
                }
            }
            "lesson" => d.lesson = x.string(field, value).unwrap_or_default(),
            "rationale" => d.rationale = x.string(field, value),
            "source" => d.source = x.string(field, value),
            "category" => x.enumerated(field, value, &mut d.category),
            "priority" => x.enumerated(field, value, &mut d.priority),
            "enforcement" => x.enumerated(field, value, &mut d.enforcement),
            "status" => x.enumerated(field, value, &mut d.status),
            "confidence" => {
                let number = match value.get_ref() {
                    DeValue::Float(f) => f.as_str().replace('_', "").parse::<f64>().ok(),
                    DeValue::Integer(i) => {
                        i64::from_str_radix(&i.as_str().replace('_', ""), i.radix())
                            .ok()
                            .map(|v| v as f64)
                    }
                    _ => None,
                };
                match number {
                    Some(v) => d.confidence = v,
                    None => x.type_error(field, value, "a number from 0.0 to 1.0"),
                }
            }
            "created_at" => match value.get_ref() {
                DeValue::Datetime(dt)
                    if dt.date.is_some() && dt.time.is_some() && dt.offset.is_some() =>
                {
                    d.created_at = Some(dt.to_string())
                }
                DeValue::String(s) if s.parse::<jiff::Timestamp>().is_ok() => {
                    d.created_at = Some(s.to_string())
                }
                _ => x.type_error(
                    field,
                    value,
                    "a date-time with an offset, such as 2026-11-22T10:00:00Z",
                ),
            },
            list => {
                let items = x.list(list, value);
                if let Some(target) = d.list_mut(list) {
                    *target = items;
                }
            }
        }
        if x.problems.len() > problems_before {
            if is_array && d.list_mut(field).is_some() {
                // Only items of the list were wrong: the others are judged.
                out.bad_items.push(field);
            } else {
                out.bad_fields.push(field);
            }
        }
    }
    // A key present but bad (a wrong type, an invalid id) was reported where it is.
    let missing = |key: &str| !table.iter().any(|(k, _)| k.get_ref() == key);
    let reasons = QuarantineReason::NAMES.join(", ");
    let required = [
        (require_id, "id", "add `id = \"<file stem>\"`".to_owned()),
        (
            true,
            "lesson",
            "add `lesson = \"...\"`: one line saying what to do or not do".to_owned(),
        ),
        (
            quarantine,
            "quarantine_reason",
            format!("add `quarantine_reason = \"...\"`, one of {reasons}"),
        ),
    ];
    for (wanted, key, hint) in required {
        if wanted && missing(key) {
            x.push(0, "missing_key", format!("missing key `{key}`"), hint);
        }
    }
    if missing("lesson") {
        out.bad_fields.push("lesson");
    }
    out.problems = x.problems;
    if out.problems.is_empty() {
        out.directive = Some(d);
    } else {
        out.partial = Some(d);
    }
    (out, keys)
}

/// Byte offset of the top-level key `key` in the TOML `text`: where a
/// problem about that key (an id that does not match the file name, an id
/// used twice) is reported. `None` if the text does not parse or has no such key.
pub fn key_offset(text: &str, key: &str) -> Option<usize> {
    let table = DeTable::parse(text).ok()?;
    table
        .get_ref()
        .iter()
        .find(|(k, _)| k.get_ref() == key)
        .map(|(k, _)| k.span().start)
}

struct Extract<'a> {
    text: &'a str,
    path: &'a str,
    problems: Vec<Problem>,
}

impl Extract<'_> {
    fn push(&mut self, offset: usize, code: &str, message: String, hint: String) {
        self.problems.push(
            Problem::error(self.path, code, message)
                .at_offset(self.text, offset)
                .with_hint(hint),
        );
    }

    fn type_error(&mut self, field: &str, value: &Spanned<DeValue<'_>>, expected: &str) {
        self.push(
            value.span().start,
            "bad_type",
            format!(
                "`{field}` must be {expected}, found {}",
                value.get_ref().type_str()
            ),
            format!("write `{field}` as {expected}"),
        );
    }

    fn string(&mut self, field: &str, value: &Spanned<DeValue<'_>>) -> Option<String> {
        match value.get_ref() {
            DeValue::String(s) => Some(s.to_string()),
            _ => {
                self.type_error(field, value, "a string");
                None
            }
        }
    }

    fn enumerated<T: std::str::FromStr<Err = super::UnknownName>>(
        &mut self,
        field: &str,
        value: &Spanned<DeValue<'_>>,
        target: &mut T,
    ) {
        if let Some(s) = self.string(field, value) {
            match s.parse::<T>() {
                Ok(v) => *target = v,
                Err(e) => self.push(
                    value.span().start,
                    "bad_value",
                    format!("`{field}`: {e}"),
                    format!("set `{field}` to one of the listed values"),
                ),
            }
        }
    }

    fn list(&mut self, field: &str, value: &Spanned<DeValue<'_>>) -> Vec<String> {
        let DeValue::Array(items) = value.get_ref() else {
            self.type_error(field, value, "an array of strings");
            return Vec::new();
        };
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            match item.get_ref() {
                DeValue::String(s) => out.push(s.to_string()),
                other => self.push(
                    item.span().start,
                    "bad_type",
                    format!(
                        "`{field}[{i}]` must be a string, found {}",
                        other.type_str()
                    ),
                    format!("quote the item: `{field} = [\"...\"]`"),
                ),
            }
        }
        out
    }
}

fn suggest(name: &str) -> String {
    match crate::suggest::closest(name, KEYS.iter().copied()) {
        Some(k) => format!("did you mean `{k}`? (known keys: {})", KEYS.join(", ")),
        None => format!("known keys: {}", KEYS.join(", ")),
    }
}

/// Shows control characters and overlong text safely in a message.
pub(crate) fn escape(s: &str) -> String {
    let mut out: String = s.chars().take(80).flat_map(char::escape_debug).collect();
    if s.chars().count() > 80 {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_every_problem_with_its_place() {
        let text = "id = \"ab\"\nlesson = 3\npriority = \"urgent\"\ncolour = \"red\"\ntags = [1]\n";
        let loaded = parse_directive_toml(text, "d/ab.toml");
        let got: Vec<String> = loaded.problems.iter().map(|p| p.to_string()).collect();
        assert_eq!(got.len(), 4, "{got:#?}");
        for (got, want) in got.iter().zip([
            "d/ab.toml:2:10: `lesson` must be a string",
            "d/ab.toml:3:12: `priority`",
            "d/ab.toml:4:1: unknown key `colour`",
            "d/ab.toml:5:9: `tags[0]`",
        ]) {
            assert!(got.starts_with(want), "{got}");
        }
    }

    #[test]
    fn a_bad_id_is_reported_once() {
        for text in [
            "id = 3\nlesson = \"Run the tests first\"\n",
            "id = \"../x\"\nlesson = \"Run the tests first\"\n",
        ] {
            let loaded = parse_directive_toml(text, "x.toml");
            let codes: Vec<&str> = loaded.problems.iter().map(|p| p.code.as_str()).collect();
            assert_eq!(codes.len(), 1, "{text}: {codes:?}");
            assert_ne!(codes[0], "missing_key", "{text}");
        }
        let loaded = parse_directive_toml("lesson = \"Run the tests first\"\n", "x.toml");
        assert_eq!(loaded.problems[0].code, "missing_key");
    }

    #[test]
    fn the_good_items_of_a_list_with_a_bad_one_are_still_judged() {
        let text = "id = \"ab\"\nlesson = \"Run the tests before handing back\"\napplies_to_agents = [\"Coder\", 5]\nverify = [3, \"tool:\"]\n";
        let loaded = parse_directive_toml(text, "ab.toml");
        let mut got: Vec<String> = loaded.problems.iter().map(|p| p.to_string()).collect();
        got.extend(
            loaded
                .gate_problems(text, "ab.toml")
                .iter()
                .map(|p| p.to_string()),
        );
        assert_eq!(got.len(), 4, "{got:#?}");
        for (place, word) in [
            ("ab.toml:3:31: `applies_to_agents[1]`", ""),
            ("ab.toml:4:11: `verify[0]`", ""),
            ("ab.toml:3:22:", "Coder"),
            ("ab.toml:4:14:", ""),
        ] {
            let found = got.iter().any(|p| p.starts_with(place) && p.contains(word));
            assert!(found, "{place}: {got:#?}");
        }

        // A list whose only item is wrong is one problem, not also an empty scope.
        let text = "id = \"ab\"\nlesson = \"Run the tests before handing back\"\napplies_to_agents = [5]\nverify = [\"file_modified:x\"]\n";
        let loaded = parse_directive_toml(text, "ab.toml");
        assert_eq!(loaded.problems.len(), 1, "{:#?}", loaded.problems);
        assert!(loaded.gate_problems(text, "ab.toml").is_empty());
    }

    #[test]
    fn syntax_errors_have_places() {
        let loaded = parse_directive_toml("id = \"ab\"\nlesson = \"x\n", "x.toml");
        assert_eq!(loaded.problems[0].line, Some(2), "{:?}", loaded.problems);
    }
}
