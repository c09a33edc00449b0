//! What the tests of the pattern text share: reading a deliberation into
//! what a test compares.

use super::{Observation, TextError, extract};

pub(super) fn texts(md: &str) -> Vec<String> {
    extract(md)
        .expect("valid test input")
        .into_iter()
        .map(|o| o.text)
        .collect()
}

/// Asserts the texts of the observations `md` gives.
#[track_caller]
pub(super) fn assert_texts(md: &str, want: &[&str]) {
    assert_eq!(texts(md), strings(want), "{md:?}");
}

pub(super) fn lines_of(md: &str) -> Vec<usize> {
    extract(md)
        .expect("valid test input")
        .into_iter()
        .map(|o| o.line)
        .collect()
}

/// Asserts the text and line of each observation `md` gives, and returns
/// them.
#[track_caller]
pub(super) fn assert_text_lines(md: &str, want: &[(&str, usize)]) -> Vec<Observation> {
    let got = extract(md).expect("valid test input");
    let text_lines: Vec<(&str, usize)> = got.iter().map(|o| (o.text.as_str(), o.line)).collect();
    assert_eq!(text_lines, want, "{md:?}");
    got
}

pub(super) fn err(md: &str) -> TextError {
    extract(md).unwrap_err()
}

pub(super) fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}
