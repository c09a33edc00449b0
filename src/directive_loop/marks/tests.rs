use proptest::prelude::*;

use crate::markdown::arbitrary;

use super::*;

fn ack(id: &str, status: AckStatus, reason: Option<&str>, line: u32) -> Ack {
    Ack {
        id: id.into(),
        status,
        reason: reason.map(Into::into),
        line,
    }
}

fn verdict(id: &str, status: VerdictStatus, evidence: Option<&str>, line: u32) -> Verdict {
    Verdict {
        id: id.into(),
        status,
        evidence: evidence.map(Into::into),
        line,
    }
}

use AckStatus::{Applied, Ignored, NotApplicable as AckNa};
use VerdictStatus::{NotApplicable as VerdictNa, Verified, Violated};

fn applied(id: &str) -> Vec<Ack> {
    vec![ack(id, Applied, None, 1)]
}

#[test]
fn an_admitted_violation_is_an_ack() {
    assert_eq!(
        parse_acks(
            "- `KNOWLEDGE_VIOLATED: abc-123` - ran out of time\nknowledge-violated:def reason=skipped"
        ),
        [
            ack("abc-123", AckStatus::Violated, Some("ran out of time"), 1),
            ack("def", AckStatus::Violated, Some("skipped"), 2),
        ]
    );
    // A verdict, not an ack; nor a marker inside a word.
    assert!(parse_acks("VIOLATED:abc-123\nXKNOWLEDGE_VIOLATED:abc-123").is_empty());
}

#[test]
fn plain_ack() {
    assert_eq!(parse_acks("KNOWLEDGE_APPLIED:abc-123"), applied("abc-123"));
}

#[test]
fn tolerated_spellings() {
    for text in [
        // Any case, and spaces after the colon.
        "knowledge_applied: abc-123",
        "Knowledge_Applied:    abc-123",
        "KNOWLEDGE_APPLIED:\tabc-123",
        "KNOWLEDGE-APPLIED: abc-123",
        "KNOWLEDGE_APPLIED : abc-123",
        // Backticks and emphasis.
        "`KNOWLEDGE_APPLIED:abc-123`",
        "**KNOWLEDGE_APPLIED:abc-123**",
        "**KNOWLEDGE_APPLIED**: abc-123",
        "**KNOWLEDGE_APPLIED:** abc-123",
        "`KNOWLEDGE_APPLIED`: `abc-123`",
        "__KNOWLEDGE_APPLIED:abc-123__",
        "_KNOWLEDGE_APPLIED: abc-123_",
        "*KNOWLEDGE_APPLIED: \"abc-123\"*",
        "KNOWLEDGE_APPLIED: [abc-123]",
        // Trailing text and punctuation.
        "KNOWLEDGE_APPLIED: abc-123 - done.",
        "KNOWLEDGE_APPLIED: abc-123 — done",
        "KNOWLEDGE_APPLIED:abc-123.",
        "KNOWLEDGE_APPLIED:abc-123...",
        "KNOWLEDGE_APPLIED:abc-123,",
        "KNOWLEDGE_APPLIED:abc-123;",
        "KNOWLEDGE_APPLIED:abc-123:",
        "KNOWLEDGE_APPLIED:abc-123, and the tests pass",
        "KNOWLEDGE_APPLIED:abc-123 (see src/lib.rs)",
        "KNOWLEDGE_APPLIED:abc-123已完成",
    ] {
        assert_eq!(parse_acks(text), applied("abc-123"), "{text:?}");
    }
}

#[test]
fn a_placeholder_copied_from_the_contract_is_no_reason() {
    let want = vec![ack("abc-123", Ignored, None, 1)];
    for text in [
        "KNOWLEDGE_IGNORED:abc-123 reason=<why>",
        "KNOWLEDGE_IGNORED:abc-123 reason: <reason>",
        "KNOWLEDGE_IGNORED:abc-123 reason=…",
        "KNOWLEDGE_IGNORED:abc-123 reason=...",
    ] {
        assert_eq!(parse_acks(text), want, "{text:?}");
    }
    assert_eq!(
        parse_acks("KNOWLEDGE_IGNORED:abc-123 reason=<b> is bold here</b>")[0].reason,
        Some("<b> is bold here</b>".to_owned())
    );
}

#[test]
fn ignored_with_reason() {
    let want = vec![ack("abc-123", Ignored, Some("not relevant here"), 1)];
    for text in [
        "KNOWLEDGE_IGNORED:abc-123 reason=not relevant here",
        "KNOWLEDGE_IGNORED:abc-123 reason: not relevant here",
        "KNOWLEDGE_IGNORED: abc-123 REASON = not relevant here  ",
        "KNOWLEDGE_IGNORED:abc-123 reason=\"not relevant here\"",
        "KNOWLEDGE_IGNORED:abc-123 reason='not relevant here'",
        "KNOWLEDGE_IGNORED:abc-123 reason=`not relevant here`",
        "KNOWLEDGE_IGNORED:abc-123 reason=“not relevant here”",
        "KNOWLEDGE_IGNORED:abc-123 - reason: not relevant here",
        "KNOWLEDGE_IGNORED:abc-123 (reason: not relevant here)",
        "`KNOWLEDGE_IGNORED:abc-123 reason=not relevant here`",
        "**KNOWLEDGE_IGNORED:abc-123** reason=not relevant here",
        "**KNOWLEDGE_IGNORED:abc-123 reason=not relevant here**",
        "KNOWLEDGE_IGNORED: `abc-123` reason: `not relevant here`",
        "KNOWLEDGE_IGNORED:abc-123 - not relevant here",
        "KNOWLEDGE_IGNORED:abc-123: not relevant here",
        "| KNOWLEDGE_IGNORED:abc-123 | not relevant here |",
    ] {
        assert_eq!(parse_acks(text), want, "{text:?}");
    }
}

#[test]
fn reason_keeps_inner_quotes_and_punctuation() {
    assert_eq!(
        parse_acks("KNOWLEDGE_IGNORED:abc reason=uses `foo`, not \"bar\"."),
        vec![ack("abc", Ignored, Some("uses `foo`, not \"bar\"."), 1)]
    );
    assert_eq!(
        parse_acks("KNOWLEDGE_IGNORED:abc reason='a' or 'b'"),
        vec![ack("abc", Ignored, Some("'a' or 'b'"), 1)]
    );
}

#[test]
fn ignored_without_reason() {
    let want = vec![ack("abc", Ignored, None, 1)];
    for text in [
        "KNOWLEDGE_IGNORED:abc",
        "KNOWLEDGE_IGNORED:abc reason=",
        "KNOWLEDGE_IGNORED:abc reason=\"\"",
        "KNOWLEDGE_IGNORED:abc -",
    ] {
        assert_eq!(parse_acks(text), want, "{text:?}");
    }
}

#[test]
fn applied_reason_only_with_a_key() {
    assert_eq!(
        parse_acks("KNOWLEDGE_APPLIED:abc reason=used the helper"),
        vec![ack("abc", Applied, Some("used the helper"), 1)]
    );
    assert_eq!(
        parse_acks("KNOWLEDGE_APPLIED:abc used the helper"),
        applied("abc")
    );
}

#[test]
fn not_applicable_forms() {
    let want = vec![ack("abc", AckNa, Some("no UI in this task"), 1)];
    for text in [
        "KNOWLEDGE_N_A:abc reason=no UI in this task",
        "knowledge_n_a: abc reason: no UI in this task",
        "KNOWLEDGE_N-A:abc reason=no UI in this task",
        "KNOWLEDGE_N/A:abc reason=no UI in this task",
        "KNOWLEDGE_NA:abc reason=no UI in this task",
        "KNOWLEDGE_NOT_APPLICABLE:abc reason=no UI in this task",
        "KNOWLEDGE_N_A:abc - no UI in this task",
    ] {
        assert_eq!(parse_acks(text), want, "{text:?}");
    }
}

#[test]
fn list_bullets() {
    let text = "Done.\n- KNOWLEDGE_APPLIED:a1\n* KNOWLEDGE_APPLIED:a2\n1. KNOWLEDGE_APPLIED:a3\n  12) KNOWLEDGE_APPLIED:a4\n+ KNOWLEDGE_APPLIED:a5";
    assert_eq!(
        parse_acks(text),
        vec![
            ack("a1", Applied, None, 2),
            ack("a2", Applied, None, 3),
            ack("a3", Applied, None, 4),
            ack("a4", Applied, None, 5),
            ack("a5", Applied, None, 6),
        ]
    );
}

#[test]
fn several_markers_on_a_line() {
    let text =
        "KNOWLEDGE_APPLIED:a1 KNOWLEDGE_IGNORED:b2 reason=too slow, KNOWLEDGE_N_A:c3 reason: no db";
    assert_eq!(
        parse_acks(text),
        vec![
            ack("a1", Applied, None, 1),
            ack("b2", Ignored, Some("too slow"), 1),
            ack("c3", AckNa, Some("no db"), 1),
        ]
    );
    let text = "`KNOWLEDGE_IGNORED:b2 reason=x` - `KNOWLEDGE_APPLIED:a1`,KNOWLEDGE_APPLIED:a3";
    assert_eq!(
        parse_acks(text),
        vec![
            ack("b2", Ignored, Some("x"), 1),
            ack("a1", Applied, None, 1),
            ack("a3", Applied, None, 1),
        ]
    );
}

#[test]
fn a_reason_stops_at_a_marker_with_a_bad_id() {
    assert_eq!(
        parse_acks("KNOWLEDGE_IGNORED:abc reason=x KNOWLEDGE_APPLIED: KNOWLEDGE_APPLIED:def"),
        vec![
            ack("abc", Ignored, Some("x"), 1),
            ack("def", Applied, None, 1)
        ]
    );
}

#[test]
fn ids_of_every_shape_lowercased() {
    for (text, id) in [
        ("KNOWLEDGE_APPLIED:fix.cache_v2", "fix.cache_v2"),
        ("KNOWLEDGE_APPLIED:42", "42"),
        (
            "KNOWLEDGE_APPLIED:550e8400-e29b-41d4-a716-446655440000",
            "550e8400-e29b-41d4-a716-446655440000",
        ),
        (
            "KNOWLEDGE_APPLIED:550E8400-E29B-41D4-A716-446655440000",
            "550e8400-e29b-41d4-a716-446655440000",
        ),
        ("KNOWLEDGE_APPLIED:No-Console-Log", "no-console-log"),
    ] {
        assert_eq!(parse_acks(text), applied(id), "{text:?}");
    }
    let long = "a".repeat(80);
    assert_eq!(
        parse_acks(&format!("KNOWLEDGE_APPLIED:{long}")),
        applied(&long)
    );
}

#[test]
fn duplicates_are_kept_in_order() {
    let text = "KNOWLEDGE_APPLIED:abc\nKNOWLEDGE_IGNORED:abc reason=changed my mind\nKNOWLEDGE_APPLIED:abc";
    assert_eq!(
        parse_acks(text),
        vec![
            ack("abc", Applied, None, 1),
            ack("abc", Ignored, Some("changed my mind"), 2),
            ack("abc", Applied, None, 3),
        ]
    );
}

#[test]
fn line_numbers_with_crlf() {
    let text = "intro\r\n\r\nKNOWLEDGE_APPLIED:abc\r\nKNOWLEDGE_IGNORED:def reason=x\r\n";
    assert_eq!(
        parse_acks(text),
        vec![
            ack("abc", Applied, None, 3),
            ack("def", Ignored, Some("x"), 4),
        ]
    );
}

#[test]
fn near_misses() {
    let long = "a".repeat(81);
    for text in [
        // Inside a word.
        "XKNOWLEDGE_APPLIED:a-b",
        "foo_KNOWLEDGE_APPLIED:abc",
        "foo__KNOWLEDGE_APPLIED:abc",
        "foo**KNOWLEDGE_APPLIED:abc",
        "éKNOWLEDGE_APPLIED:abc",
        "9KNOWLEDGE_APPLIED:abc",
        "KNOWLEDGE_APPLIED:abc-123é",
        "KNOWLEDGE_APPLIED:abc-123/extra",
        "KNOWLEDGE_APPLIED:abc-123@v2",
        // Keyword variants.
        "KNOWLEDGE_APPLIEDX:abc",
        "KNOWLEDGE_APPLIED_BY:abc",
        "KNOWLEDGE_APPLIED abc",
        "KNOWLEDGE_APPLIED - abc",
        "KNOWLEDGE_APPLIED= abc",
        "KNOWLEDGEAPPLIED:abc",
        "KNOWLEDGE APPLIED:abc",
        "KNOWLEDGE_NAME:abc",
        // Bad ids.
        "KNOWLEDGE_APPLIED:",
        "KNOWLEDGE_APPLIED:   ",
        "KNOWLEDGE_APPLIED: - done",
        "KNOWLEDGE_APPLIED:a",
        "KNOWLEDGE_APPLIED:-abc",
        "KNOWLEDGE_APPLIED:.abc",
        "KNOWLEDGE_APPLIED:<abc-123>",
        "KNOWLEDGE_APPLIED:<directive-id>",
        "KNOWLEDGE_APPLIED:日本",
        &format!("KNOWLEDGE_APPLIED:{long}"),
        // Placeholder lines.
        "KNOWLEDGE_APPLIED:<id>",
        "KNOWLEDGE_APPLIED:<ID>",
        "- `KNOWLEDGE_IGNORED:<id> reason=…`",
        "Use KNOWLEDGE_APPLIED:<id>, e.g. KNOWLEDGE_APPLIED:abc-123",
        "Example: KNOWLEDGE_APPLIED:abc-123",
        "- **example:** KNOWLEDGE_APPLIED:abc-123",
        // Quotes.
        "> KNOWLEDGE_APPLIED:abc",
        ">KNOWLEDGE_APPLIED:abc",
        "   > > KNOWLEDGE_APPLIED:abc",
    ] {
        assert_eq!(parse_acks(text), vec![], "{text:?}");
    }
    assert_eq!(parse_verdicts("PREVIOUSLY_VERIFIED:abc"), vec![]);
    assert_eq!(parse_verdicts("UNVERIFIED:abc"), vec![]);
    assert_eq!(parse_verdicts("KNOWLEDGE_N/A:abc"), vec![]);
    assert_eq!(
        parse_verdicts("VERIFIED:<id> evidence=… e.g. VERIFIED:abc"),
        vec![]
    );
    assert_eq!(
        parse_acks("> KNOWLEDGE_APPLIED:abc\nKNOWLEDGE_APPLIED:def"),
        vec![ack("def", Applied, None, 2)]
    );
}

#[test]
fn near_miss_fenced_code() {
    let text = "Contract:\n```\nKNOWLEDGE_APPLIED:abc\n```\nKNOWLEDGE_APPLIED:def";
    assert_eq!(parse_acks(text), vec![ack("def", Applied, None, 5)]);
    let text = "~~~text\nKNOWLEDGE_APPLIED:abc\n~~~\nKNOWLEDGE_APPLIED:def";
    assert_eq!(parse_acks(text), vec![ack("def", Applied, None, 4)]);
    // An info string, indentation, and a fence line that is not a close.
    let text = "  ```markdown\nKNOWLEDGE_APPLIED:abc\n```not a close\n~~~\nKNOWLEDGE_APPLIED:ghi\n  ````  \nKNOWLEDGE_APPLIED:def";
    assert_eq!(parse_acks(text), vec![ack("def", Applied, None, 7)]);
    // A longer opening needs a longer close.
    let text = "````\n```\nKNOWLEDGE_APPLIED:abc\n````\nKNOWLEDGE_APPLIED:def";
    assert_eq!(parse_acks(text), vec![ack("def", Applied, None, 5)]);
    // A fence that never closes runs to the end.
    assert_eq!(parse_acks("```\nKNOWLEDGE_APPLIED:abc"), vec![]);
    // Inline triple backticks are code, not a fence.
    assert_eq!(
        parse_acks("```KNOWLEDGE_APPLIED:abc```\nKNOWLEDGE_APPLIED:def"),
        vec![ack("abc", Applied, None, 1), ack("def", Applied, None, 2)]
    );
}

#[test]
fn near_miss_echoed_directive_block() {
    let text = "<delegate_knowledge_directives delegation=\"d1\">\n- abc: do x\nKNOWLEDGE_APPLIED:abc\n```\n</delegate_knowledge_directives>\nKNOWLEDGE_APPLIED:def";
    assert_eq!(parse_acks(text), vec![ack("def", Applied, None, 6)]);
    let text = "pre KNOWLEDGE_APPLIED:a1 <DELEGATE_KNOWLEDGE_DIRECTIVES>KNOWLEDGE_APPLIED:abc</Delegate_Knowledge_Directives > KNOWLEDGE_APPLIED:a2";
    assert_eq!(
        parse_acks(text),
        vec![ack("a1", Applied, None, 1), ack("a2", Applied, None, 1)]
    );
    // The text left after a block closes mid-line is not a quote or fence line.
    let text = "<delegate_knowledge_directives>\nx\n</delegate_knowledge_directives>> KNOWLEDGE_APPLIED:abc";
    assert_eq!(parse_acks(text), vec![ack("abc", Applied, None, 3)]);
}

#[test]
fn an_unclosed_block_is_a_mention() {
    let text = "I followed the `<delegate_knowledge_directives>` block:\nKNOWLEDGE_APPLIED:abc";
    assert_eq!(parse_acks(text), vec![ack("abc", Applied, None, 2)]);
    // Not an opening tag: the name goes on.
    let text = "<delegate_knowledge_directives_v2>\nKNOWLEDGE_APPLIED:abc\n</delegate_knowledge_directives>";
    assert_eq!(parse_acks(text), vec![ack("abc", Applied, None, 2)]);
}

#[test]
fn near_miss_echoed_review_block() {
    let text = "<directives_to_verify phase=\"p1\">\nVERIFIED:abc evidence=x\n</directives_to_verify>\nVIOLATED:def evidence=y";
    assert_eq!(
        parse_verdicts(text),
        vec![verdict("def", Violated, Some("y"), 4)]
    );
    let text = "<directives_to_verify>VERIFIED:abc</directives_to_verify> VERIFIED:def";
    assert_eq!(
        parse_verdicts(text),
        vec![verdict("def", Verified, None, 1)]
    );
    // Each family ignores both blocks.
    let text = "<directives_to_verify>\nKNOWLEDGE_APPLIED:abc\n</directives_to_verify>";
    assert_eq!(parse_acks(text), vec![]);
}

#[test]
fn verdict_forms() {
    for (text, want) in [
        (
            "VERIFIED:abc evidence=tests pass",
            verdict("abc", Verified, Some("tests pass"), 1),
        ),
        (
            "verified: ABC evidence: tests pass",
            verdict("abc", Verified, Some("tests pass"), 1),
        ),
        (
            "VIOLATED: abc evidence: console.log in src/a.ts:12",
            verdict("abc", Violated, Some("console.log in src/a.ts:12"), 1),
        ),
        (
            "VIOLATED:abc evidence=\"console.log in src/a.ts\".",
            verdict("abc", Violated, Some("\"console.log in src/a.ts\"."), 1),
        ),
        (
            "N/A:abc reason=no frontend",
            verdict("abc", VerdictNa, Some("no frontend"), 1),
        ),
        ("N-A:abc", verdict("abc", VerdictNa, None, 1)),
        ("N_A:abc", verdict("abc", VerdictNa, None, 1)),
        ("n/a: abc.", verdict("abc", VerdictNa, None, 1)),
        (
            "NOT_APPLICABLE:abc reason: no frontend",
            verdict("abc", VerdictNa, Some("no frontend"), 1),
        ),
        (
            "- **VERIFIED**: `abc` - tests pass",
            verdict("abc", Verified, Some("tests pass"), 1),
        ),
        (
            "1. `VIOLATED:abc evidence=found it`",
            verdict("abc", Violated, Some("found it"), 1),
        ),
        (
            "VERIFIED:abc - the check passed",
            verdict("abc", Verified, Some("the check passed"), 1),
        ),
    ] {
        assert_eq!(parse_verdicts(text), vec![want], "{text:?}");
    }
}

#[test]
fn several_verdicts_on_a_line() {
    assert_eq!(
        parse_verdicts("VERIFIED:a1 evidence=x; VIOLATED:b2 evidence=y | N/A:c3"),
        vec![
            verdict("a1", Verified, Some("x"), 1),
            verdict("b2", Violated, Some("y"), 1),
            verdict("c3", VerdictNa, None, 1),
        ]
    );
}

#[test]
fn verdict_near_misses() {
    for text in [
        "VERIFIED - abc",
        "VERIFIED abc",
        "VERIFIED:",
        "VERIFIED:<abc>",
        "> VERIFIED:abc",
        "```\nVERIFIED:abc\n```",
        "N/Abc:abc",
        "NA:abc",
    ] {
        assert_eq!(parse_verdicts(text), vec![], "{text:?}");
    }
}

#[test]
fn families_do_not_mix() {
    let text = "KNOWLEDGE_APPLIED:abc\nVERIFIED:def";
    assert_eq!(parse_acks(text), applied("abc"));
    assert_eq!(
        parse_verdicts(text),
        vec![verdict("def", Verified, None, 2)]
    );
}

#[test]
fn statuses_serialize_in_snake_case() {
    let a = ack("abc", AckNa, Some("x"), 3);
    assert_eq!(
        serde_json::to_string(&a).expect("valid test input"),
        r#"{"id":"abc","status":"not_applicable","reason":"x","line":3}"#
    );
    assert_eq!(
        serde_json::to_string(&Violated).expect("valid test input"),
        r#""violated""#
    );
}

#[test]
fn many_unclosed_tags_stay_linear() {
    let mut text = "<directives_to_verify>".repeat(50_000);
    text.push_str("KNOWLEDGE_APPLIED:abc <delegate_knowledge_directives>");
    text.push_str(&"KNOWLEDGE_APPLIED:".repeat(20_000));
    assert_eq!(parse_acks(&text), applied("abc"));
}

/// Marker pieces and markdown the reading treats specially, for the
/// inputs of `never_panics`.
const PIECES: &[&str] = &[
    "KNOWLEDGE_APPLIED:",
    "knowledge_ignored:",
    "KNOWLEDGE_N/A:",
    "VERIFIED:",
    "violated:",
    "N/A:",
    "N-A:",
    "reason=",
    "evidence:",
    "abc-123",
    "ABC",
    "<id>",
    "<delegate_knowledge_directives>",
    "</delegate_knowledge_directives",
    "<directives_to_verify ",
    "</directives_to_verify>",
    "```",
    "~~~",
    ">",
    "\n",
    "\r\n",
    "\r",
    " ",
    "\t",
    "**",
    "`",
    "_",
    "\"",
    "'",
    "(",
    ")",
    "[",
    ".",
    "-",
    ":",
    "=",
    "é",
    "日本",
    "🦀",
    "\u{0}",
    "\u{feff}",
    "\u{2028}",
    "“",
    "”",
    "—",
];

proptest! {
    #![proptest_config(arbitrary::config())]

    /// Whatever the text, reading it does not panic, and what it reads
    /// is well formed and on a line of the text.
    #[test]
    fn never_panics(s in arbitrary::text(PIECES, 1, 40, 6)) {
        let lines = u32::try_from(s.split('\n').count()).expect("valid test input");
        for a in parse_acks(&s) {
            assert!(is_valid_id(&a.id), "{s:?}: {a:?}");
            assert!((1..=lines).contains(&a.line), "{s:?}: {a:?}");
            assert!(a.reason.as_deref() != Some(""), "{s:?}: {a:?}");
        }
        for v in parse_verdicts(&s) {
            assert!(is_valid_id(&v.id), "{s:?}: {v:?}");
            assert!((1..=lines).contains(&v.line), "{s:?}: {v:?}");
            assert!(v.evidence.as_deref() != Some(""), "{s:?}: {v:?}");
        }
    }
}
