//! The pattern ids of every deliberation the tests feed [`extract`] are
//! pinned in `tests/fixtures/deliberations.jsonl`: repositories hold these
//! ids, so a change to the reading must not move them.

use serde::{Deserialize, Serialize};

use super::{Category, evidence, extract, pattern_id};

#[derive(Debug, PartialEq, Serialize, Deserialize)]
pub(super) struct Case {
    markdown: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    patterns: Vec<Pinned>,
    /// The evidence level and line, changed files `src/a.rs`, `a.rs`.
    evidence: String,
}

#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct Pinned {
    /// [`pattern_id`] for the role `judge`.
    id: String,
    line: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    label: Option<String>,
    category: Category,
    text: String,
}

pub(super) fn case(markdown: &str) -> Case {
    let (error, patterns) = match extract(markdown) {
        Ok(obs) => (
            None,
            obs.into_iter()
                .map(|o| Pinned {
                    id: pattern_id(&o.normalised, "judge"),
                    line: o.line,
                    label: o.label,
                    category: o.category,
                    text: o.text,
                })
                .collect(),
        ),
        Err(e) => (Some(e.to_string()), Vec::new()),
    };
    let ev = evidence(markdown, &["src/a.rs".to_owned(), "a.rs".to_owned()]);
    Case {
        markdown: markdown.to_owned(),
        error,
        patterns,
        evidence: format!("{:?}@{:?}", ev.level, ev.line),
    }
}

#[test]
fn every_pinned_deliberation_gives_the_same_patterns() {
    let pinned = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/deliberations.jsonl"
    ));
    let mut count = 0;
    let mut moved = Vec::new();
    for line in pinned.lines() {
        let want: Case = serde_json::from_str(line).expect("a pinned case");
        let got = case(&want.markdown);
        if got != want {
            moved.push(format!("want {want:?}\n got {got:?}"));
        }
        count += 1;
    }
    assert!(moved.is_empty(), "{}", moved.join("\n\n"));
    assert!(count > 100, "{count} cases");
}
