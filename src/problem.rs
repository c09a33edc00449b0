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
}
