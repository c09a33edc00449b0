//! The actionability gate every minting path passes (DESIGN §2).
//!
//! An entry is actionable when it says what to check (a forbidden or required
//! action, a verification check, or a `verify` predicate) *and* whom it is
//! for (an agent role or a tool). Stricter than opencode-swarm's gate: every
//! predicate must parse and the shape limits must hold, so nothing that
//! reaches `directives/` can fail later for a reason visible now.

use super::{Directive, is_valid_scope_name};
use crate::pathglob::PathGlob;
use crate::predicate::Predicate;

/// Shape limits of a directive.
pub mod limits {
    pub const LESSON_MIN: usize = 15;
    pub const LESSON_MAX: usize = 280;
    pub const LIST_MAX: usize = 20;
    pub const ITEM_MAX: usize = 200;
    pub const TAG_MAX: usize = 64;
    pub const RATIONALE_MAX: usize = 4000;
    pub const SOURCE_MAX: usize = 200;
    /// Largest directive file read, in bytes.
    pub const FILE_MAX: u64 = 64 * 1024;
}

string_enum!(
    /// Why an entry was quarantined.
    QuarantineReason {
        MissingPredicate => "missing_predicate",
        MissingScope => "missing_scope",
        MissingPredicateAndScope => "missing_predicate_and_scope",
        InvalidPredicate => "invalid_predicate",
        InvalidShape => "invalid_shape",
    }
);

/// One field that breaks the gate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShapeIssue {
    /// Which rule it breaks (an entry breaking several is quarantined for
    /// the first of shape, predicate, missing predicate or scope).
    pub reason: QuarantineReason,
    /// The TOML key.
    pub field: &'static str,
    /// The list index, for list fields.
    pub index: Option<usize>,
    /// The byte offset in the item of what is wrong, when one place is.
    pub at: Option<usize>,
    pub message: String,
    pub hint: String,
}

/// Why an entry did not pass the gate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GateFailure {
    pub reason: QuarantineReason,
    pub issues: Vec<ShapeIssue>,
}

impl GateFailure {
    /// One paragraph: every issue with its hint.
    pub fn detail(&self) -> String {
        self.issues
            .iter()
            .map(|i| format!("{}: {} ({})", i.field, i.message, i.hint))
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// What to do about a character a one-line field refuses.
pub const ONE_LINE_HINT: &str = "write it as one line of visible text: no control character (line break, tab, escape…), no line or paragraph separator, no bidirectional control";

/// What a one-line field (a lesson, a list item, a source, a proposal's
/// title) cannot hold, named for a message; `None` for a character it may.
///
/// Such a field is shown inside a line that something else builds: an
/// agent's prompt, a terminal, an exported Markdown file. A line break or
/// separator would start a line of its own there (a forged block line), a
/// control character would act on a terminal (ESC) or cut a C string
/// (NUL), and a bidirectional control reorders what a reviewer reads, so
/// that the text reviewed is not the text an agent is given.
fn refused_in_a_line(c: char) -> Option<&'static str> {
    Some(match c {
        '\n' => "a line feed",
        '\r' => "a carriage return",
        '\t' => "a tab",
        '\0' => "a NUL",
        '\u{7}' => "a bell",
        '\u{8}' => "a backspace",
        '\u{1b}' => "an escape",
        '\u{7f}' => "a delete",
        '\u{85}' => "a next line",
        '\u{2028}' => "a line separator",
        '\u{2029}' => "a paragraph separator",
        '\u{061c}'
        | '\u{200e}'
        | '\u{200f}'
        | '\u{202a}'..='\u{202e}'
        | '\u{2066}'..='\u{2069}' => "a bidirectional control",
        c if c.is_control() => "a control character",
        _ => return None,
    })
}

/// The first character of a text that a one-line field refuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineFault {
    /// Its byte offset in the text.
    pub at: usize,
    /// Its place in the text, counted in characters from 1.
    pub position: usize,
    pub char: char,
    what: &'static str,
}

impl LineFault {
    /// The first character of `text` a one-line field refuses, if any.
    pub fn find(text: &str) -> Option<LineFault> {
        text.char_indices().enumerate().find_map(|(n, (at, c))| {
            refused_in_a_line(c).map(|what| LineFault {
                at,
                position: n + 1,
                char: c,
                what,
            })
        })
    }

    /// What is wrong, naming `field`: `title contains a bell (U+0007) at character 5`.
    /// The character itself is named, never shown.
    pub fn message(&self, field: &str) -> String {
        format!(
            "{field} contains {} (U+{:04X}) at character {}",
            self.what, self.char as u32, self.position
        )
    }
}

/// Refuses `text`, the one-line field `field` (`title`,
/// `forbidden_actions[2]`), when it holds a character [`LineFault`] finds:
/// bad input, with what to do about it.
pub fn check_one_line(field: &str, text: &str) -> crate::error::Result<()> {
    match LineFault::find(text) {
        None => Ok(()),
        Some(fault) => Err(crate::error::Error::usage(
            fault.message(field),
            ONE_LINE_HINT,
        )),
    }
}

/// Refuses a directive with a one-line field (`lesson`, `source`, any list
/// item) that [`check_one_line`] refuses. The gate reports the same issue
/// (an entry read from a file is quarantined or reported at its place);
/// a command given the text by hand (`add`) refuses it outright, before
/// anything is written, since there is nothing to keep.
pub fn check_lines(d: &Directive) -> crate::error::Result<()> {
    check_one_line("lesson", &d.lesson)?;
    if let Some(source) = &d.source {
        check_one_line("source", source)?;
    }
    for (field, items) in d.lists() {
        for (i, item) in items.iter().enumerate() {
            check_one_line(&format!("{field}[{i}]"), item)?;
        }
    }
    Ok(())
}

/// The gate's issue for the one-line field `field` (item `index` of a
/// list), when it holds a character [`LineFault`] finds.
fn line_issue(field: &'static str, index: Option<usize>, text: &str) -> Option<ShapeIssue> {
    let fault = LineFault::find(text)?;
    let name = match index {
        Some(i) => format!("{field}[{i}]"),
        None => field.to_owned(),
    };
    Some(ShapeIssue {
        reason: QuarantineReason::InvalidShape,
        field,
        index,
        at: Some(fault.at),
        message: fault.message(&name),
        hint: ONE_LINE_HINT.to_owned(),
    })
}

const PREDICATE_HINT: &str = "add at least one of `forbidden_actions`, `required_actions`, `verification_checks` or `verify` (flags --forbid, --require, --verification-check, --verify)";
const SCOPE_HINT: &str =
    "add at least one of `applies_to_agents` or `applies_to_tools` (flags --agents, --tools)";

/// Runs the gate. `Ok` means the entry may go to `directives/`. Every
/// issue is listed, not only those of the first rule broken: fixing an
/// entry takes one round, not one per rule.
pub fn check_gate(d: &Directive) -> Result<(), GateFailure> {
    let mut shape = Vec::new();
    let mut issue = |field, index, message: String, hint: &str| {
        shape.push(ShapeIssue {
            reason: QuarantineReason::InvalidShape,
            field,
            index,
            at: None,
            message,
            hint: hint.to_owned(),
        })
    };

    // Characters a one-line field refuses, reported after the other shape issues.
    let mut lines: Vec<ShapeIssue> = Vec::new();
    let lesson_len = d.lesson.chars().count();
    lines.extend(line_issue("lesson", None, &d.lesson));
    if !(limits::LESSON_MIN..=limits::LESSON_MAX).contains(&lesson_len) {
        issue(
            "lesson",
            None,
            format!(
                "lesson is {lesson_len} character{}, outside {}–{}",
                if lesson_len == 1 { "" } else { "s" },
                limits::LESSON_MIN,
                limits::LESSON_MAX
            ),
            "say what to do or not do in one sentence; move the why to `rationale`",
        );
    }
    if !(0.0..=1.0).contains(&d.confidence) || d.confidence.is_nan() {
        issue(
            "confidence",
            None,
            format!("confidence {} is outside 0..1", d.confidence),
            "use a number from 0.0 to 1.0",
        );
    }
    for (field, text, max, hint) in [
        (
            "rationale",
            &d.rationale,
            limits::RATIONALE_MAX,
            "shorten it; link to the discussion in `source`",
        ),
        (
            "source",
            &d.source,
            limits::SOURCE_MAX,
            "name the PR, run or review, not its content",
        ),
    ] {
        if text.as_ref().is_some_and(|t| t.chars().count() > max) {
            issue(
                field,
                None,
                format!("{field} is over {max} characters"),
                hint,
            );
        }
    }
    // The rationale is free text, over several lines; the source is one line.
    if let Some(source) = &d.source {
        lines.extend(line_issue("source", None, source));
    }

    for (field, items) in d.lists() {
        let item_max = match field {
            "applies_to_agents" | "applies_to_tools" => 64,
            "verify" => crate::predicate::MAX_LEN,
            "tags" => limits::TAG_MAX,
            _ => limits::ITEM_MAX,
        };
        if items.len() > limits::LIST_MAX {
            issue(
                field,
                None,
                format!(
                    "{field} has {} items, over {}",
                    items.len(),
                    limits::LIST_MAX
                ),
                "split the directive, or keep the items that matter",
            );
        }
        for (i, item) in items.iter().enumerate() {
            let n = item.chars().count();
            let (what, hint) = if item.trim().is_empty() {
                ("is empty".to_owned(), "remove the empty item")
            } else if n > item_max {
                (
                    format!("is {n} characters, over {item_max}"),
                    "shorten the item",
                )
            } else {
                lines.extend(line_issue(field, Some(i), item));
                continue;
            };
            issue(field, Some(i), format!("{field}[{i}] {what}"), hint);
        }
    }
    // The scope lists come first.
    for (field, items) in &d.lists()[..2] {
        for (i, name) in items.iter().enumerate() {
            if !name.is_empty() && !is_valid_scope_name(name) {
                let mapped = (*field == "applies_to_agents")
                    .then(|| crate::agent_hook::roles::harness_type(&Default::default(), name))
                    .flatten();
                let hint = match mapped {
                    Some((role, whose)) => format!(
                        "`{name}` is an agent type ({whose}) that git-swarm maps to the role `{role}`: write `{role}`"
                    ),
                    None => "names are lowercase letters, digits and `_`, starting with a letter (e.g. `test_engineer`)".to_owned(),
                };
                issue(
                    field,
                    Some(i),
                    format!("`{name}` is not a valid name"),
                    &hint,
                );
            }
        }
    }
    // An item already refused for its shape (empty, too long, several
    // lines) is not parsed too: one problem, not two.
    let globs = d.paths.iter().map(|g| PathGlob::parse(g).err());
    let globs = globs.map(|e| e.map(|e| (e.at, e.message, e.hint)));
    let predicates = d.verify.iter().map(|p| Predicate::parse(p).err());
    let predicates = predicates.map(|e| e.map(|e| (e.at, e.message, e.hint)));
    let parsed: [(&str, QuarantineReason, Vec<_>); 2] = [
        ("paths", QuarantineReason::InvalidShape, globs.collect()),
        (
            "verify",
            QuarantineReason::InvalidPredicate,
            predicates.collect(),
        ),
    ];
    shape.extend(lines);
    let mut issues = shape;
    for (field, reason, errors) in parsed {
        for (i, error) in errors.into_iter().enumerate() {
            let Some((at, message, hint)) = error else {
                continue;
            };
            if !issues
                .iter()
                .any(|s| s.field == field && s.index == Some(i))
            {
                issues.push(ShapeIssue {
                    reason,
                    field,
                    index: Some(i),
                    at,
                    message,
                    hint,
                });
            }
        }
    }

    let has_predicate = !d.forbidden_actions.is_empty()
        || !d.required_actions.is_empty()
        || !d.verification_checks.is_empty()
        || !d.verify.is_empty();
    let has_scope = d.has_scope();
    let missing = match (has_predicate, has_scope) {
        (true, true) => None,
        (false, true) => Some(QuarantineReason::MissingPredicate),
        (true, false) => Some(QuarantineReason::MissingScope),
        (false, false) => Some(QuarantineReason::MissingPredicateAndScope),
    };
    if let Some(reason) = missing {
        let mut lacks = |field, message: &str, hint: &str| {
            issues.push(ShapeIssue {
                reason,
                field,
                index: None,
                at: None,
                message: message.to_owned(),
                hint: hint.to_owned(),
            })
        };
        if !has_predicate {
            lacks("verify", "nothing says what to check", PREDICATE_HINT);
        }
        if !has_scope {
            lacks(
                "applies_to_agents",
                "nothing says whom it is for",
                SCOPE_HINT,
            );
        }
    }
    // The entry is quarantined for the first rule it breaks, in this order.
    match issues.first() {
        None => Ok(()),
        Some(first) => Err(GateFailure {
            reason: first.reason,
            issues,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> Directive {
        let mut d = Directive::new("ab", "Run the tests before you commit");
        d.applies_to_agents = vec!["coder".into()];
        d.verify = vec!["file_modified:tests/**".into()];
        d
    }

    #[test]
    fn reasons() {
        use QuarantineReason::*;
        assert!(check_gate(&base()).is_ok());
        type Change = fn(&mut Directive);
        let cases: [(Change, QuarantineReason); 5] = [
            (|d| d.verify.clear(), MissingPredicate),
            (
                |d| {
                    d.verify.clear();
                    d.applies_to_agents.clear();
                },
                MissingPredicateAndScope,
            ),
            (|d| d.applies_to_agents.clear(), MissingScope),
            (|d| d.verify = vec!["grep:(".into()], InvalidPredicate),
            (|d| d.lesson = "short".into(), InvalidShape),
        ];
        for (change, want) in cases {
            let mut d = base();
            change(&mut d);
            assert_eq!(check_gate(&d).unwrap_err().reason, want);
        }
    }

    /// A one-line field holding a control character, a separator or a
    /// bidirectional control fails the gate, named with its place.
    #[test]
    fn one_line_fields_refuse_controls_separators_and_bidi() {
        for (c, what) in [
            ('\u{7}', "a bell (U+0007)"),
            ('\r', "a carriage return (U+000D)"),
            ('\u{2029}', "a paragraph separator (U+2029)"),
            ('\u{2067}', "a bidirectional control (U+2067)"),
        ] {
            let mut d = base();
            d.forbidden_actions = vec!["fine".into(), format!("ring{c} it")];
            let failure = check_gate(&d).expect_err("refused");
            assert_eq!(failure.reason, QuarantineReason::InvalidShape);
            let issue = &failure.issues[0];
            assert_eq!(
                (issue.field, issue.index, issue.at),
                ("forbidden_actions", Some(1), Some(4))
            );
            assert_eq!(
                issue.message,
                format!("forbidden_actions[1] contains {what} at character 5")
            );
        }
        let mut d = base();
        d.rationale = Some("Two lines\nof rationale are fine.".into());
        d.lesson = "Run the tests before you commit, ünïcödé and emoji 👩‍💻 included".into();
        assert!(check_gate(&d).is_ok());
    }

    /// Every rule broken is listed at once, the entry's reason being the first.
    #[test]
    fn every_issue_is_listed() {
        let mut d = base();
        d.lesson = "short".into();
        d.applies_to_agents.clear();
        d.paths = vec!["".into(), "/abs".into()];
        d.verify = vec![
            "grep:(".into(),
            "file_modified:src/**".into(),
            String::new(),
        ];
        let failure = check_gate(&d).expect_err("fails the gate");
        assert_eq!(failure.reason, QuarantineReason::InvalidShape);
        let got: Vec<(&str, Option<usize>, QuarantineReason)> = failure
            .issues
            .iter()
            .map(|i| (i.field, i.index, i.reason))
            .collect();
        use QuarantineReason::*;
        assert_eq!(
            got,
            [
                ("lesson", None, InvalidShape),
                ("paths", Some(0), InvalidShape),
                ("verify", Some(2), InvalidShape),
                ("paths", Some(1), InvalidShape),
                ("verify", Some(0), InvalidPredicate),
                ("applies_to_agents", None, MissingScope),
            ],
            "{failure:#?}"
        );
    }
}
