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

/// Each observation's text and line.
pub(super) fn text_lines(got: &[Observation]) -> Vec<(&str, usize)> {
    got.iter().map(|o| (o.text.as_str(), o.line)).collect()
}

pub(super) fn err(md: &str) -> TextError {
    extract(md).unwrap_err()
}

pub(super) fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}
