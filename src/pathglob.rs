//! Repository-relative path globs, gitignore-style.
//!
//! `*` and `?` never cross `/`; `**` does. A glob without a `/` matches the
//! file name at any depth (as in `.gitignore`: `*.rs` is every Rust file); a
//! glob with a `/` is anchored at the repository root. A leading `./`
//! anchors a glob that has no other `/` (`./Makefile` is only the root one).
//! Globs are relative: absolute paths and `..` are refused, so a directive
//! from a pull request cannot point outside the repository.

use std::fmt;

use globset::{Glob, GlobBuilder, GlobMatcher};

/// A parsed, validated path glob.
#[derive(Clone)]
pub struct PathGlob {
    source: String,
    glob: Glob,
    /// Compiled on the first path that passes the prefix test: most globs of
    /// a large set never meet a path that could match.
    matcher: std::sync::OnceLock<GlobMatcher>,
    /// Every path the glob matches starts with this (empty when it matches at any depth).
    prefix: String,
}

/// Why a glob was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GlobError {
    pub message: String,
    pub hint: String,
}

impl PathGlob {
    pub fn parse(source: &str) -> Result<PathGlob, GlobError> {
        let refuse = |message: String, hint: &str| GlobError {
            message,
            hint: hint.to_owned(),
        };
        if source.trim().is_empty() {
            return Err(refuse(
                "empty glob".into(),
                "write a path glob such as `src/**/*.rs`",
            ));
        }
        if source.starts_with('/') || source.starts_with('\\') || has_drive_prefix(source) {
            return Err(refuse(
                format!("glob `{source}` is an absolute path"),
                "globs are relative to the repository root: drop the leading `/` (use `./name` to anchor a bare file name)",
            ));
        }
        if source.contains('\\') {
            return Err(refuse(
                format!("glob `{source}` contains a backslash"),
                "separate directories with `/`; backslash escapes are not supported",
            ));
        }
        if source.split('/').any(|part| part == "..") {
            return Err(refuse(
                format!("glob `{source}` contains `..`"),
                "globs may not leave the repository; name the path from the repository root",
            ));
        }
        let trimmed = source.trim_end_matches('/');
        let pattern = if let Some(rest) = trimmed.strip_prefix("./") {
            rest.to_owned()
        } else if trimmed.contains('/') {
            trimmed.to_owned()
        } else {
            format!("**/{trimmed}")
        };
        // A glob naming a directory also covers everything below it, as in gitignore.
        let pattern = if source.ends_with('/') {
            format!("{pattern}/**")
        } else {
            pattern
        };
        let glob = GlobBuilder::new(&pattern)
            .literal_separator(true)
            .backslash_escape(false)
            .empty_alternates(true)
            .build()
            .map_err(|e| {
                refuse(
                    format!("glob `{source}` does not parse: {}", e.kind()),
                    "globs use `*`, `?`, `**`, `[abc]` and `{a,b}`",
                )
            })?;
        Ok(PathGlob {
            source: source.to_owned(),
            glob,
            matcher: std::sync::OnceLock::new(),
            prefix: literal_prefix(&pattern),
        })
    }

    /// Does this glob match a repository-relative path (with `/` separators)?
    pub fn is_match(&self, path: &str) -> bool {
        path.starts_with(&self.prefix) && self.matcher().is_match(path)
    }

    /// As [`PathGlob::is_match`], for a path that may not be UTF-8 (git paths are bytes).
    pub fn is_match_bytes(&self, path: &[u8]) -> bool {
        match std::str::from_utf8(path) {
            _ if !path.starts_with(self.prefix.as_bytes()) => false,
            Ok(p) => self.matcher().is_match(p),
            Err(_) => self
                .matcher()
                .is_match_candidate(&globset::Candidate::new(&bytes_path(path))),
        }
    }

    fn matcher(&self) -> &GlobMatcher {
        self.matcher.get_or_init(|| self.glob.compile_matcher())
    }

    /// A literal start every matching path has: the folders before the first
    /// wildcard (`src/m001/` for `src/m001/**/*.rs`), the whole path for a
    /// glob without wildcards, empty for one that matches at any depth.
    /// Lets a caller with sorted paths look at a range instead of all of them.
    pub fn literal_prefix(&self) -> &str {
        &self.prefix
    }

    pub fn as_str(&self) -> &str {
        &self.source
    }
}

fn literal_prefix(pattern: &str) -> String {
    match pattern.find(['*', '?', '[', '{', '\\']) {
        None => pattern.to_owned(),
        Some(first) => match pattern[..first].rfind('/') {
            Some(slash) => pattern[..=slash].to_owned(),
            None => String::new(),
        },
    }
}

#[cfg(unix)]
fn bytes_path(path: &[u8]) -> std::path::PathBuf {
    use std::os::unix::ffi::OsStrExt;
    std::path::PathBuf::from(std::ffi::OsStr::from_bytes(path))
}

#[cfg(not(unix))]
fn bytes_path(path: &[u8]) -> std::path::PathBuf {
    std::path::PathBuf::from(String::from_utf8_lossy(path).into_owned())
}

fn has_drive_prefix(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':'
}

impl fmt::Debug for PathGlob {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PathGlob({:?})", self.source)
    }
}

impl PartialEq for PathGlob {
    fn eq(&self, other: &Self) -> bool {
        self.source == other.source
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(glob: &str, path: &str) -> bool {
        PathGlob::parse(glob).expect("valid glob").is_match(path)
    }

    #[test]
    fn gitignore_style_matching() {
        assert!(m("*.rs", "src/lib.rs"));
        assert!(m("*.rs", "lib.rs"));
        assert!(m("src/*.rs", "src/lib.rs"));
        assert!(!m("src/*.rs", "src/cli/mod.rs"));
        assert!(m("src/**/*.rs", "src/cli/mod.rs"));
        assert!(m("./Makefile", "Makefile"));
        assert!(!m("./Makefile", "sub/Makefile"));
        assert!(m("docs/", "docs/a/b.md"));
        assert!(m("{a,b}/x", "b/x"));
    }

    #[test]
    fn literal_prefixes() {
        let p = |g: &str| {
            PathGlob::parse(g)
                .expect("valid glob")
                .literal_prefix()
                .to_owned()
        };
        assert_eq!(p("src/m001/**/*.rs"), "src/m001/");
        assert_eq!(p("src/*.rs"), "src/");
        assert_eq!(p("docs/"), "", "a bare folder name matches at any depth");
        assert_eq!(p("src/gen/"), "src/gen/");
        assert_eq!(p("./Makefile"), "Makefile");
        assert_eq!(p("a/b/c.txt"), "a/b/c.txt");
        assert_eq!(p("*.rs"), "");
        assert_eq!(p("{a,b}/x"), "");
        for (glob, path) in [
            ("src/m001/**/*.rs", "src/m001/x/y.rs"),
            ("docs/", "docs/a.md"),
            ("a/b/c.txt", "a/b/c.txt"),
        ] {
            assert!(
                path.starts_with(&p(glob))
                    && PathGlob::parse(glob).expect("valid glob").is_match(path)
            );
        }
    }

    #[test]
    fn refuses_paths_that_leave_the_repository() {
        for bad in [
            "",
            "/etc/passwd",
            "../x",
            "a/../../b",
            "C:/x",
            "a\\b",
            "[z-a]",
        ] {
            assert!(PathGlob::parse(bad).is_err(), "{bad:?} should be refused");
        }
    }
}
