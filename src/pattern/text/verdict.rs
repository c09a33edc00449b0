//! The machine-readable verdict a validator writes about a deliberation.

use std::fmt;
use std::marker::PhantomData;

use pulldown_cmark::{CodeBlockKind, Event, Parser, Tag, TagEnd};

use serde::de::value::MapAccessDeserializer;
use serde::de::{self, Deserializer, Error as _, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_path_to_error::Segment;

use super::TextError;
use super::blocks::{comment_open, unclosed_fence};

/// A validator's overall verdict. Serialized as `"PASS"` / `"FAIL"`; read
/// in any letter case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, strum::IntoStaticStr)]
#[serde(rename_all = "UPPERCASE")]
#[strum(serialize_all = "UPPERCASE")]
pub enum VerdictKind {
    Pass,
    Fail,
}

impl VerdictKind {
    pub fn as_str(&self) -> &'static str {
        self.into()
    }
}

/// `"PASS"` or `"FAIL"`, in any letter case, surrounding whitespace ignored.
impl<'de> Deserialize<'de> for VerdictKind {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::String(s) if s.trim().eq_ignore_ascii_case("pass") => Ok(VerdictKind::Pass),
            Value::String(s) if s.trim().eq_ignore_ascii_case("fail") => Ok(VerdictKind::Fail),
            Value::String(s) => Err(D::Error::custom(format!(
                "must be \"PASS\" or \"FAIL\", found {}",
                Value::String(s)
            ))),
            other => Err(found("a string", json_kind(&other))),
        }
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
    /// for in the deliberation (see [`find_finding`](super::find_finding)).
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
        TextError::new(line, format!("invalid verdict JSON: {message}")).caused_by(e)
    })?;
    verdict_from_json(value, block.line)
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

/// The verdict blocks of `markdown` in order, as pulldown-cmark finds its
/// fenced blocks and html comments (none inside code).
fn scan_verdict_blocks(markdown: &str) -> Result<VerdictScan, TextError> {
    let line_of = |at: usize| markdown[..at].matches('\n').count() + 1;
    let mut blocks = Vec::new();
    let mut unclosed = None;
    // The verdict block of the open fenced block, if it is one.
    let mut fenced: Option<RawBlock> = None;
    let mut in_code = false;
    // Where the last comment read ends: events before it are inside it.
    let mut after_comment = 0;
    for (event, range) in Parser::new(markdown).into_offset_iter() {
        if range.start < after_comment {
            continue;
        }
        // An html comment opens in html, or in text (see `comment_open`).
        match event {
            Event::Start(Tag::CodeBlock(kind)) => {
                in_code = true;
                let CodeBlockKind::Fenced(info) = kind else {
                    continue;
                };
                let line = line_of(range.start);
                let verdict = info
                    .split_whitespace()
                    .next()
                    .is_some_and(|w| w.eq_ignore_ascii_case(VERDICT_INFO));
                if let Some(fence) = unclosed_fence(markdown, range) {
                    if verdict {
                        return Err(TextError::new(
                            line,
                            format!("\"{}{VERDICT_INFO}\" block is never closed", fence.marker()),
                        ));
                    }
                    unclosed = Some(format!(
                        "the code fence \"{}\" opened at line {line} is never closed",
                        fence.marker()
                    ));
                }
                fenced = verdict.then(|| RawBlock {
                    line,
                    json_line: line + 1,
                    json: String::new(),
                });
                continue;
            }
            Event::End(TagEnd::CodeBlock) => {
                in_code = false;
                blocks.extend(fenced.take());
                continue;
            }
            Event::Text(text) if in_code => {
                if let Some(b) = &mut fenced {
                    b.json.push_str(&text);
                }
                continue;
            }
            Event::Html(_) | Event::InlineHtml(_) | Event::Text(_) => {}
            _ => continue,
        };
        let mut from = range.start.max(after_comment);
        while from < range.end {
            let Some(open) = comment_open(markdown, from, range.end) else {
                break;
            };
            let body_at = open + 4;
            let Some(close) = markdown[body_at..].find("-->").map(|c| body_at + c) else {
                let line = line_of(open);
                if verdict_tag(markdown[body_at..].trim_start()).is_some() {
                    return Err(TextError::new(
                        line,
                        format!("\"<!-- {VERDICT_TAG}\" comment is never closed"),
                    ));
                }
                unclosed = Some(format!(
                    "the html comment opened at line {line} is never closed"
                ));
                return Ok(VerdictScan { blocks, unclosed });
            };
            let body = markdown[body_at..close].trim_start();
            if let Some(json) = verdict_tag(body) {
                blocks.push(RawBlock {
                    line: line_of(open),
                    json_line: line_of(close - body.len()),
                    json: json.to_owned(),
                });
            }
            after_comment = close + 3;
            from = after_comment;
        }
    }
    Ok(VerdictScan { blocks, unclosed })
}

/// The text after a leading `jkz:verdict-json` tag (any case), which must
/// end there.
fn verdict_tag(body: &str) -> Option<&str> {
    let tag = body.get(..VERDICT_TAG.len())?;
    let after = &body[VERDICT_TAG.len()..];
    let ends = !after.starts_with(|c: char| c.is_alphanumeric() || c == '-' || c == '_');
    (tag.eq_ignore_ascii_case(VERDICT_TAG) && ends).then_some(after)
}

/// The lists of the verdict JSON. Each field says which JSON kinds it
/// takes; a value of another kind is an error at its JSON path.
#[derive(Deserialize)]
struct VerdictJson {
    #[serde(default, deserialize_with = "list")]
    issues: Vec<Issue>,
    #[serde(default, deserialize_with = "list")]
    must_fix: Vec<MustFix>,
    #[serde(default, deserialize_with = "list")]
    false_positives: Vec<FalsePositive>,
}

/// The verdict alone, read first so that a missing or wrong verdict is the
/// error reported before any in the lists.
#[derive(Deserialize)]
struct VerdictOnly {
    #[serde(default)]
    verdict: Option<VerdictKind>,
}

fn verdict_from_json(value: Value, line: usize) -> Result<VerdictDoc, TextError> {
    let err = |message: String| TextError::new(line, message);
    if !value.is_object() {
        return Err(err(format!(
            "verdict JSON must be an object, found {}",
            json_kind(&value)
        )));
    }
    let at_path = |e: serde_path_to_error::Error<serde_json::Error>| {
        // A top-level key is quoted (`"issues" must be …`), a deeper path
        // is not (`issues[0].summary must be …`).
        let path = match e.path().iter().collect::<Vec<_>>()[..] {
            [Segment::Map { key }] => format!("\"{key}\""),
            _ => e.path().to_string(),
        };
        let message = format!("{path} {}", e.inner());
        err(message).caused_by(e.into_inner())
    };
    let only: VerdictOnly = serde_path_to_error::deserialize(&value).map_err(at_path)?;
    let Some(verdict) = only.verdict else {
        return Err(err(
            "verdict JSON has no \"verdict\" (expected \"PASS\" or \"FAIL\")".into(),
        ));
    };
    let json: VerdictJson = serde_path_to_error::deserialize(&value).map_err(at_path)?;
    Ok(VerdictDoc {
        verdict,
        issues: json.issues,
        must_fix: json.must_fix.into_iter().map(|MustFix(s)| s).collect(),
        false_positives: json
            .false_positives
            .into_iter()
            .map(|FalsePositive(s)| s)
            .collect(),
        line,
    })
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

fn found<E: de::Error>(expected: &str, kind: &str) -> E {
    E::custom(format!("must be {expected}, found {kind}"))
}

/// A string, or a number written as one when `numbers`; null is `None`.
/// `expected` is what the message names as allowed.
fn string<E: de::Error>(v: Value, numbers: bool, expected: &str) -> Result<Option<String>, E> {
    match v {
        Value::Null => Ok(None),
        Value::String(s) => Ok(Some(s)),
        Value::Number(n) if numbers => Ok(Some(n.to_string())),
        other => Err(found(expected, json_kind(&other))),
    }
}

fn text<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    string(Value::deserialize(d)?, false, "a string")
}

/// An entry's id: a number is taken, but not named in messages, as an
/// entry's id is one of the strings to look for.
fn entry_id<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    string(Value::deserialize(d)?, true, "a string")
}

fn issue_id<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    string(Value::deserialize(d)?, true, "a string or a number")
}

/// An array of `T`; null is empty.
fn list<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Vec<T>, D::Error> {
    match d.deserialize_any(Shape::new(Kinds::Array))? {
        Shaped::Array(items) => Ok(items),
        Shaped::Object(_) | Shaped::String(_) => unreachable!("only arrays are taken"),
    }
}

/// A string entry, or the first of its fields an object entry has (`names`
/// lists them for the message).
fn entry<'de, D: Deserializer<'de>, F: Deserialize<'de>>(
    d: D,
    first: fn(F) -> Option<String>,
    names: &str,
) -> Result<String, D::Error> {
    match d.deserialize_any(Shape::new(Kinds::StringOrObject))? {
        Shaped::String(s) => Ok(s),
        Shaped::Object(f) => {
            first(f).ok_or_else(|| D::Error::custom(format!("has none of {names}")))
        }
        Shaped::Array(_) => unreachable!("arrays are not taken"),
    }
}

#[derive(Deserialize)]
struct IssueFields {
    #[serde(default, deserialize_with = "issue_id")]
    id: Option<String>,
    #[serde(default, deserialize_with = "text")]
    severity: Option<String>,
    #[serde(default, deserialize_with = "text")]
    summary: Option<String>,
    #[serde(default, deserialize_with = "text")]
    location: Option<String>,
    #[serde(default, deserialize_with = "text")]
    fix_hint: Option<String>,
}

/// An `issues` entry: an object with a string `summary`.
impl<'de> Deserialize<'de> for Issue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let Shaped::Object(f) = d.deserialize_any(Shape::<IssueFields>::new(Kinds::Object))? else {
            unreachable!("only objects are taken")
        };
        Ok(Issue {
            summary: f
                .summary
                .ok_or_else(|| D::Error::custom("has no \"summary\""))?,
            id: f.id,
            severity: f.severity,
            location: f.location,
            fix_hint: f.fix_hint,
        })
    }
}

/// The fields an object entry may name its issue by, in order of preference.
#[derive(Deserialize)]
struct MustFixFields {
    #[serde(default, deserialize_with = "entry_id")]
    id: Option<String>,
    #[serde(default, deserialize_with = "text")]
    summary: Option<String>,
}

/// A `must_fix` entry: a string, or an object's `id`, else its `summary`.
struct MustFix(String);

impl<'de> Deserialize<'de> for MustFix {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let first = |f: MustFixFields| f.id.or(f.summary);
        entry(d, first, r#""id", "summary""#).map(MustFix)
    }
}

#[derive(Deserialize)]
struct FalsePositiveFields {
    #[serde(default, deserialize_with = "text")]
    summary: Option<String>,
    #[serde(default, deserialize_with = "text")]
    finding: Option<String>,
    #[serde(default, deserialize_with = "text")]
    text: Option<String>,
    #[serde(default, deserialize_with = "entry_id")]
    id: Option<String>,
}

/// A `false_positives` entry: a string, or an object's `summary`, else
/// `finding`, else `text`, else `id`.
struct FalsePositive(String);

impl<'de> Deserialize<'de> for FalsePositive {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let first = |f: FalsePositiveFields| f.summary.or(f.finding).or(f.text).or(f.id);
        entry(d, first, r#""summary", "finding", "text", "id""#).map(FalsePositive)
    }
}

/// The JSON kinds a [`Shape`] takes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kinds {
    /// An array, or null for an empty one.
    Array,
    Object,
    StringOrObject,
}

enum Shaped<T> {
    String(String),
    Object(T),
    Array(Vec<T>),
}

/// A visitor that takes the JSON kinds `kinds` (an object read as `T`, an
/// array of `T`) and names any other kind in its error. It reads the
/// elements and fields through the deserializer it is given, so an error
/// inside them keeps its JSON path.
struct Shape<T>(Kinds, PhantomData<T>);

impl<T> Shape<T> {
    fn new(kinds: Kinds) -> Shape<T> {
        Shape(kinds, PhantomData)
    }

    fn other<E: de::Error>(&self, kind: &str) -> Result<Shaped<T>, E> {
        Err(found(self.expected(), kind))
    }

    fn expected(&self) -> &'static str {
        match self.0 {
            Kinds::Array => "an array",
            Kinds::Object => "an object",
            Kinds::StringOrObject => "a string or an object",
        }
    }
}

impl<'de, T: Deserialize<'de>> Visitor<'de> for Shape<T> {
    type Value = Shaped<T>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.expected())
    }

    fn visit_unit<E: de::Error>(self) -> Result<Shaped<T>, E> {
        match self.0 {
            Kinds::Array => Ok(Shaped::Array(Vec::new())),
            Kinds::Object | Kinds::StringOrObject => self.other("null"),
        }
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Shaped<T>, E> {
        self.other("a boolean")
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Shaped<T>, E> {
        self.other("a number")
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Shaped<T>, E> {
        self.other("a number")
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Shaped<T>, E> {
        self.other("a number")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Shaped<T>, E> {
        match self.0 {
            Kinds::StringOrObject => Ok(Shaped::String(v.to_owned())),
            Kinds::Array | Kinds::Object => self.other("a string"),
        }
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Shaped<T>, A::Error> {
        if self.0 != Kinds::Array {
            return self.other("an array");
        }
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Shaped::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Shaped<T>, A::Error> {
        if self.0 == Kinds::Array {
            return self.other("an object");
        }
        T::deserialize(MapAccessDeserializer::new(map)).map(Shaped::Object)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::strings;
    use super::*;

    // --- parse_verdict ------------------------------------------------------

    fn read(md: &str) -> VerdictDoc {
        parse_verdict(md).expect("valid test input")
    }

    fn verdict_err(md: &str) -> TextError {
        parse_verdict(md).unwrap_err()
    }

    #[test]
    fn verdict_in_an_html_comment() {
        let md = "# Inspector verdict\n\nLooks fine.\n\n<!-- jkz:verdict-json {\"verdict\": \"PASS\", \"issues\": [], \"must_fix\": [], \"false_positives\": [\"the cache leaks\"]} -->\n";
        let doc = read(md);
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
        let doc = read(md);
        assert_eq!(doc.verdict, VerdictKind::Fail);
        assert_eq!(doc.must_fix, strings(&["I1"]));
        assert_eq!(doc.line, 2);
    }

    #[test]
    fn verdict_in_a_fenced_block() {
        let md = "Verdict below.\r\n\r\n```verdict-json\r\n{\r\n  \"verdict\": \"Fail\",\r\n  \"issues\": [{\"id\": 1, \"severity\": \"high\", \"summary\": \"leak\", \"location\": \"src/a.rs:3\", \"fix_hint\": \"scope the key\"}],\r\n  \"must_fix\": [{\"id\": 1}]\r\n}\r\n```\r\n";
        let doc = read(md);
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
        assert_eq!(read(md).verdict, VerdictKind::Pass);
    }

    #[test]
    fn the_last_verdict_block_wins() {
        let md = "<!-- jkz:verdict-json {\"verdict\": \"FAIL\"} -->\n```verdict-json\n{\"verdict\": \"PASS\"}\n```\n";
        let doc = read(md);
        assert_eq!((doc.verdict, doc.line), (VerdictKind::Pass, 2));
        let md = "```verdict-json\n{\"verdict\": \"PASS\"}\n```\ntext <!-- jkz:verdict-json {\"verdict\": \"FAIL\"} --> <!-- jkz:verdict-json {\"verdict\": \"PASS\", \"must_fix\": [\"x\"]} -->";
        let doc = read(md);
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
        let doc = read(md);
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
        let doc = read(md);
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
        let doc = read("<!-- jkz:verdict-json {\"verdict\": \"PASS\", \"issues\": null} -->");
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

    /// A JSON error is kept as the cause; a missing block has none.
    #[test]
    fn json_errors_keep_their_cause() {
        use std::error::Error as _;
        for md in [
            "<!-- jkz:verdict-json {\"verdict\": PASS} -->",
            "<!-- jkz:verdict-json {\"verdict\": \"PASS\", \"issues\": [3]} -->",
        ] {
            let e = verdict_err(md);
            let cause = e.source().map(ToString::to_string).unwrap_or_default();
            assert!(!cause.is_empty(), "{md}: {e}");
        }
        assert!(verdict_err("no block").source().is_none());
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
}
