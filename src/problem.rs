//! Problems found in files under `.swarm/`.
//!
//! Readers never stop at the first bad record: they return what they could
//! load together with a list of [`Problem`]s, each naming the file and, where
//! it has one, the line and column. The caller decides what is fatal —
//! `validate` fails on any, a hook keeps going with the good records.

use std::fmt;

use serde::{Deserialize, Serialize};

/// How serious a [`Problem`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing; `validate` still passes.
    Warning,
    /// The file (or line) is not usable as it is.
    Error,
}

/// One thing wrong with one file, at one place.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Problem {
    /// Path relative to the repository root, with `/` separators.
    pub path: String,
    /// 1-based line, when the problem has one.
    #[serde(default)]
    pub line: Option<u32>,
    /// 1-based column in characters, when the problem has one.
    #[serde(default)]
    pub column: Option<u32>,
    pub severity: Severity,
    /// A stable, machine-readable name for the kind of problem.
    pub code: String,
    pub message: String,
    #[serde(default)]
    pub hint: Option<String>,
}

impl Problem {
    pub fn error(path: impl Into<String>, code: &str, message: impl Into<String>) -> Self {
        Problem {
            path: path.into(),
            line: None,
            column: None,
            severity: Severity::Error,
            code: code.to_owned(),
            message: message.into(),
            hint: None,
        }
    }

    pub fn warning(path: impl Into<String>, code: &str, message: impl Into<String>) -> Self {
        Problem {
            severity: Severity::Warning,
            ..Problem::error(path, code, message)
        }
    }

    pub fn at(mut self, line: u32, column: u32) -> Self {
        self.line = Some(line);
        self.column = Some(column);
        self
    }

    pub fn at_line(mut self, line: u32) -> Self {
        self.line = Some(line);
        self
    }

    /// Places the problem at a byte offset of `text`.
    pub fn at_offset(self, text: &str, offset: usize) -> Self {
        let (line, column) = line_col(text, offset);
        self.at(line, column)
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// `path:line:col`, as much of it as is known.
    pub fn location(&self) -> String {
        match (self.line, self.column) {
            (Some(l), Some(c)) => format!("{}:{l}:{c}", self.path),
            (Some(l), None) => format!("{}:{l}", self.path),
            _ => self.path.clone(),
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.location(), self.message)
    }
}

/// Problems kept by a reader, up to [`Problems::CAP`], and a count of the rest.
///
/// Every file under `.swarm/` comes from whoever opened a pull request: an
/// event file of 4 million malformed lines would otherwise be 4 million
/// problems in memory, in the index and on the screen. The first problems
/// say what is wrong; the rest are counted per file, so that nothing is
/// silently dropped ("… and 3,999,900 more problems in …").
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Problems {
    kept: Vec<Problem>,
    more: Vec<More>,
}

/// Problems past the cap in one file: counted, not kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct More {
    /// Path relative to the repository root, as the problems name it.
    pub path: String,
    /// How many problems were not kept.
    pub count: u64,
    /// How many of them were errors.
    pub errors: u64,
}

impl More {
    /// `… and 3,999,900 more problems in PATH`.
    pub fn sentence(&self) -> String {
        format!(
            "… and {} more problem{} in {}",
            thousands(self.count),
            if self.count == 1 { "" } else { "s" },
            self.path
        )
    }
}

impl More {
    /// The count as a problem of its own (`… and N more problems in this
    /// file`), for reports that are a list of problems.
    pub fn as_problem(&self) -> Problem {
        Problem::error(
            &self.path,
            "more_problems",
            format!(
                "… and {} more problem{} in this file",
                thousands(self.count),
                if self.count == 1 { "" } else { "s" }
            ),
        )
        .with_hint(
            "only the first problems of a file are listed; remove or repair its malformed lines",
        )
    }
}

impl Problems {
    /// How many problems one collection keeps.
    pub const CAP: usize = 100;

    pub fn new() -> Problems {
        Problems::default()
    }

    /// Whether the next problem will only be counted.
    pub fn is_full(&self) -> bool {
        self.kept.len() >= Self::CAP
    }

    /// Keeps `p`, or counts it when the collection is full.
    pub fn push(&mut self, p: Problem) {
        if self.is_full() {
            self.count(&p.path, p.is_error());
        } else {
            self.kept.push(p);
        }
    }

    /// Keeps the problem `make` builds, or, when the collection is full,
    /// only counts an error in `path` (without building it: a reader of
    /// millions of bad lines formats none of their messages).
    pub fn push_error_with(&mut self, path: &str, make: impl FnOnce() -> Problem) {
        if self.is_full() {
            self.count(path, true);
        } else {
            self.kept.push(make());
        }
    }

    /// Keeps `p` past the cap: for the one problem a file can have that
    /// says how the whole file was read (torn, skipped), never one a line.
    pub fn push_always(&mut self, p: Problem) {
        self.kept.push(p);
    }

    /// Counts one problem of `path` not kept.
    pub fn count(&mut self, path: &str, error: bool) {
        self.count_many(path, 1, u64::from(error));
    }

    fn count_many(&mut self, path: &str, count: u64, errors: u64) {
        if count == 0 {
            return;
        }
        // Readers go file by file: the last entry is almost always this one.
        let at = match self.more.iter().rposition(|m| m.path == path) {
            Some(i) => i,
            None => {
                self.more.push(More {
                    path: path.to_owned(),
                    count: 0,
                    errors: 0,
                });
                self.more.len() - 1
            }
        };
        let m = &mut self.more[at];
        m.count = m.count.saturating_add(count);
        m.errors = m.errors.saturating_add(errors);
    }

    /// Adds `other`'s problems, kept up to the cap, and its counts.
    pub fn append(&mut self, other: Problems) {
        for p in other.kept {
            self.push(p);
        }
        for m in other.more {
            self.count_many(&m.path, m.count, m.errors);
        }
    }

    /// Keeps only the kept problems `f` accepts (counts are left alone).
    pub fn retain(&mut self, f: impl FnMut(&Problem) -> bool) {
        self.kept.retain(f);
    }

    /// Sorts the problems kept by place: path, line, column.
    pub fn sort_kept(&mut self) {
        (self.kept).sort_by(|a, b| (&a.path, a.line, a.column).cmp(&(&b.path, b.line, b.column)));
    }

    /// The problems kept, in the order found.
    pub fn kept(&self) -> &[Problem] {
        &self.kept
    }

    /// The counts of problems not kept, one per file.
    pub fn more(&self) -> &[More] {
        &self.more
    }

    /// Problems kept and counted.
    pub fn total(&self) -> u64 {
        self.kept.len() as u64 + self.more.iter().map(|m| m.count).sum::<u64>()
    }

    /// Errors kept and counted.
    pub fn error_count(&self) -> u64 {
        self.kept.iter().filter(|p| p.is_error()).count() as u64
            + self.more.iter().map(|m| m.errors).sum::<u64>()
    }

    pub fn is_empty(&self) -> bool {
        self.kept.is_empty() && self.more.is_empty()
    }

    pub fn iter(&self) -> std::slice::Iter<'_, Problem> {
        self.kept.iter()
    }

    /// The problems kept, then one per file for those counted
    /// ([`More::as_problem`]): at most [`Problems::CAP`] and a few.
    pub fn into_list(self) -> Vec<Problem> {
        let more = self.more.iter().map(More::as_problem);
        self.kept.into_iter().chain(more).collect()
    }
}

impl From<Vec<Problem>> for Problems {
    fn from(list: Vec<Problem>) -> Problems {
        let mut out = Problems::new();
        for p in list {
            out.push(p);
        }
        out
    }
}

impl Extend<Problem> for Problems {
    fn extend<I: IntoIterator<Item = Problem>>(&mut self, iter: I) {
        for p in iter {
            self.push(p);
        }
    }
}

impl<'a> IntoIterator for &'a Problems {
    type Item = &'a Problem;
    type IntoIter = std::slice::Iter<'a, Problem>;

    fn into_iter(self) -> Self::IntoIter {
        self.kept.iter()
    }
}

/// `n` with its thousands grouped by commas: `3,999,900`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// 1-based line and column (in characters) of byte `offset` in `text`.
pub fn line_col(text: &str, offset: usize) -> (u32, u32) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.bytes().filter(|&b| b == b'\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() + 1;
    (saturate(line), saturate(column))
}

fn saturate(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_counts_chars_not_bytes() {
        let text = "a = 1\nbé = \"x\"\n";
        assert_eq!(line_col(text, 0), (1, 1));
        assert_eq!(line_col(text, 6), (2, 1));
        // byte 10 is the `=` after "bé " (b: 1 byte, é: 2 bytes, space): the 4th character
        assert_eq!(line_col(text, 10), (2, 4));
        assert_eq!(line_col(text, 1000), (3, 1));
    }

    #[test]
    fn problems_past_the_cap_are_counted_per_file() {
        let mut problems = Problems::new();
        for i in 0..Problems::CAP as u32 + 5 {
            problems.push(Problem::error("a.jsonl", "bad_event", "x").at_line(i + 1));
        }
        problems.push_error_with("b.jsonl", || unreachable!("not built once full"));
        problems.push_always(Problem::error("a.jsonl", "torn_line", "torn"));
        assert_eq!(problems.kept().len(), Problems::CAP + 1);
        assert_eq!(problems.total(), Problems::CAP as u64 + 7);
        assert_eq!(problems.error_count(), problems.total());
        let said: Vec<_> = problems.more().iter().map(More::sentence).collect();
        assert_eq!(
            said,
            [
                "… and 5 more problems in a.jsonl",
                "… and 1 more problem in b.jsonl"
            ]
        );
    }

    #[test]
    fn thousands_are_grouped() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(3_999_900), "3,999,900");
    }
}
