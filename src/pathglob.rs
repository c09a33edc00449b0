//! Repository-relative path globs, gitignore-style.
//!
//! `*` and `?` never cross `/`; `**` does. A glob without a `/` matches the
//! file name at any depth (as in `.gitignore`: `*.rs` is every Rust file); a
//! glob with a `/` is anchored at the repository root. A leading `./`
//! anchors a glob that has no other `/` (`./Makefile` is only the root one).
//! A glob whose last part has no wildcard names a file or a folder, and
//! matches everything below it too (`src`, `vendor`, `docs/api`), as in
//! `.gitignore` and as `git diff -- src` reads a path.
//! Globs are relative: absolute paths and `..` are refused, so a directive
//! from a pull request cannot point outside the repository.

use std::fmt;

use globset::{Glob, GlobBuilder, GlobMatcher};

/// A parsed, validated path glob.
#[derive(Clone)]
pub struct PathGlob {
    /// The normalised pattern, then the glob as written: one allocation
    /// for a glob (a check parses a thousand predicates' globs).
    text: String,
    pattern_len: usize,
    /// Every path the glob matches starts with the pattern's first
    /// `prefix_len` bytes (none when it matches at any depth).
    prefix_len: usize,
    /// Where the name, or the end of a name, that the shape tests starts
    /// in the pattern.
    tail: usize,
    /// The common shapes are matched without a regex.
    shape: Shape,
    /// The last part has no wildcard: a path below a match matches too.
    or_below: bool,
    /// Compiled on the first path that passes the prefix test: most globs of
    /// a large set never meet a path that could match.
    matcher: std::sync::OnceLock<GlobMatcher>,
}

/// How a glob is matched. Most globs in directives are a folder (`src/**`),
/// a file type in a folder (`src/*.rs`, `src/**/*.rs`, `*.rs`) or one file;
/// those are string tests on the path. The rest compile to a regex.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Shape {
    /// No wildcard: the path itself.
    Exact,
    /// `P/**`: anything below the prefix.
    Below,
    /// `P/*S`: a file directly in the prefix's folder whose name ends with `S` (the tail).
    NameEndsIn,
    /// `P/**/*S` or `**/*S`: a file at any depth below the prefix whose name ends with `S`.
    DeepNameEndsIn,
    /// `P/**/N` or `**/N`: a file named `N` at any depth below the prefix.
    DeepName,
    /// Anything else: compiled to a regex by globset.
    Regex(Glob),
}

impl Shape {
    /// The shape of a normalised pattern whose literal prefix is its first
    /// `prefix` bytes, with where its tail starts, when a string test
    /// decides it; `None` when it needs globset's regex.
    fn of(pattern: &str, prefix: usize) -> Option<(Shape, usize)> {
        let literal = |s: &str| !s.contains(['*', '?', '[', ']', '{', '}', ',', '\\', '/']);
        let end = pattern.len();
        if prefix == end {
            return Some((Shape::Exact, end));
        }
        let rest = &pattern[prefix..];
        if rest == "**" && prefix > 0 {
            return Some((Shape::Below, end));
        }
        if let Some(name) = rest.strip_prefix("**/") {
            if let Some(suffix) = name.strip_prefix('*')
                && literal(suffix)
            {
                return Some((Shape::DeepNameEndsIn, end - suffix.len()));
            }
            if !name.is_empty() && literal(name) {
                return Some((Shape::DeepName, end - name.len()));
            }
            return None;
        }
        match rest.strip_prefix('*') {
            Some(suffix) if literal(suffix) => Some((Shape::NameEndsIn, end - suffix.len())),
            _ => None,
        }
    }

    /// Does `path`, which starts with the glob's `prefix`, match? `tail` is
    /// the name or name ending the shape tests. (Not for the `Regex` shape,
    /// which the compiled matcher decides.) With `or_below`, a path below a
    /// match matches too.
    fn is_match(&self, prefix: &str, tail: &str, path: &[u8], or_below: bool) -> bool {
        let rest = &path[prefix.len()..];
        let name = match rest.iter().rposition(|&b| b == b'/') {
            Some(i) => &rest[i + 1..],
            None => rest,
        };
        let tail = tail.as_bytes();
        match self {
            Shape::Exact => rest.is_empty() || (or_below && rest.starts_with(b"/")),
            Shape::Below => !rest.is_empty(),
            Shape::NameEndsIn => !rest.contains(&b'/') && rest.ends_with(tail),
            Shape::DeepNameEndsIn => name.ends_with(tail),
            // Past the prefix (which ends with `/`): a whole part, the name or a folder's.
            Shape::DeepName if or_below => rest.split(|&b| b == b'/').any(|p| p == tail),
            Shape::DeepName => name == tail,
            Shape::Regex(_) => false,
        }
    }
}

/// Why a glob was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct GlobError {
    pub message: String,
    pub hint: String,
    /// The byte offset in the glob of what is wrong, when one place is.
    pub at: Option<usize>,
}

/// The longest glob accepted, in bytes (a predicate's own limit).
pub const MAX_LEN: usize = 1024;

/// How deep `{…}` alternatives may nest. globset turns each level into a
/// nested regex group, and a regex nested too deep (or grown too large)
/// makes it panic when a check first matches a path, long after the glob
/// was accepted. With this depth and [`MAX_LEN`], every glob that parses
/// compiles (see the tests), so the limits are decided when a directive is
/// read, and `validate` and `add` report them.
pub const MAX_BRACE_DEPTH: usize = 8;

/// Where a `{` opens an alternative deeper than [`MAX_BRACE_DEPTH`]: its
/// byte offset. Every `{` counts, even one inside `[…]`, so the count never
/// falls short of globset's.
fn too_deep(source: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (i, b) in source.bytes().enumerate() {
        match b {
            b'{' => {
                depth += 1;
                if depth > MAX_BRACE_DEPTH {
                    return Some(i);
                }
            }
            b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

/// The start of a long glob, for messages.
fn shown(source: &str) -> String {
    match source.char_indices().nth(40) {
        Some((i, _)) => format!("{}…", &source[..i]),
        None => source.to_owned(),
    }
}

impl PathGlob {
    pub fn parse(source: &str) -> Result<PathGlob, GlobError> {
        let refuse = |message: String, hint: &str| GlobError {
            message,
            hint: hint.to_owned(),
            at: None,
        };
        if source.len() > MAX_LEN {
            return Err(refuse(
                format!(
                    "glob `{}` is {} bytes long, over the {MAX_LEN}-byte limit",
                    shown(source),
                    source.len()
                ),
                "name a folder (`src/gen/`) or a pattern (`src/**/*.rs`) instead of listing paths",
            ));
        }
        if let Some(at) = too_deep(source) {
            return Err(GlobError {
                at: Some(at),
                ..refuse(
                    format!(
                        "glob `{}` nests `{{…}}` more than {MAX_BRACE_DEPTH} deep (at character {})",
                        shown(source),
                        source[..at].chars().count() + 1
                    ),
                    "list the alternatives side by side (`{a,b,c}`) instead of nesting them",
                )
            });
        }
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
        let mut text = String::with_capacity(trimmed.len() + 6 + source.len());
        if let Some(rest) = trimmed.strip_prefix("./") {
            text.push_str(rest);
        } else if trimmed.contains('/') {
            text.push_str(trimmed);
        } else {
            text.push_str("**/");
            text.push_str(trimmed);
        }
        // A glob naming a directory also covers everything below it, as in gitignore.
        if source.ends_with('/') {
            text.push_str("/**");
        }
        let pattern = text.as_str();
        // One definition of the literal start, shared with callers that
        // read it from the text without parsing (`check`'s unparsed path
        // predicates): the normalised pattern starts with it.
        let prefix_len = literal_prefix_of(source).len();
        debug_assert!(pattern.starts_with(literal_prefix_of(source)));
        // A pattern of plain names, `/`, `*` and `**` in the shapes above
        // always parses: only the others are handed to globset (which
        // builds a regex even for a glob it will never match with).
        let (shape, tail) = match Shape::of(pattern, prefix_len) {
            Some(shape) if !pattern.contains(['?', '[', ']', '{', '}', ',', '\\']) => shape,
            _ => (
                Shape::Regex(build(pattern).map_err(|e| {
                    refuse(
                        format!("glob `{source}` does not parse: {}", e.kind()),
                        "globs use `*`, `?`, `**`, `[abc]` and `{a,b}`",
                    )
                })?),
                pattern.len(),
            ),
        };
        let last = pattern.rsplit('/').next().unwrap_or_default();
        let or_below = !last.contains(['*', '?', '[', ']', '{', '}', ',']);
        let pattern_len = text.len();
        text.push_str(source);
        Ok(PathGlob {
            text,
            pattern_len,
            prefix_len,
            tail,
            shape,
            or_below,
            matcher: std::sync::OnceLock::new(),
        })
    }

    /// Does this glob match a repository-relative path (with `/` separators)?
    pub fn is_match(&self, path: &str) -> bool {
        self.is_match_bytes(path.as_bytes())
    }

    /// As [`PathGlob::is_match`], for a path that may not be UTF-8 (git paths are bytes).
    pub fn is_match_bytes(&self, path: &[u8]) -> bool {
        let prefix = self.literal_prefix();
        if !path.starts_with(prefix.as_bytes()) {
            return false;
        }
        let Shape::Regex(glob) = &self.shape else {
            let tail = &self.text[self.tail..self.pattern_len];
            return self.shape.is_match(prefix, tail, path, self.or_below);
        };
        let matcher = self.matcher.get_or_init(|| glob.compile_matcher());
        let is_match = |path: &[u8]| match std::str::from_utf8(path) {
            Ok(p) => matcher.is_match(p),
            Err(_) => matcher.is_match_candidate(&globset::Candidate::new(&bytes_path(path))),
        };
        is_match(path)
            || (self.or_below
                && (0..path.len())
                    .filter(|&i| path[i] == b'/')
                    .any(|i| is_match(&path[..i])))
    }

    /// The regular expression this glob matches a path with, as globset
    /// compiles it (on bytes, `.` matching any byte), with "or below" for a
    /// last part without wildcard: for questions about the glob itself, such
    /// as whether two globs can match one path.
    pub fn regex(&self) -> Option<String> {
        let regex = match &self.shape {
            Shape::Regex(glob) => glob.regex().to_owned(),
            _ => build(&self.text[..self.pattern_len])
                .ok()?
                .regex()
                .to_owned(),
        };
        Some(match (self.or_below, regex.strip_suffix('$')) {
            (true, Some(body)) => format!("{body}(?:/.*)?$"),
            _ => regex,
        })
    }

    /// A literal start every matching path has: the folders before the first
    /// wildcard (`src/m001/` for `src/m001/**/*.rs`), the whole path for a
    /// glob without wildcards, empty for one that matches at any depth.
    /// Lets a caller with sorted paths look at a range instead of all of them.
    pub fn literal_prefix(&self) -> &str {
        &self.text[..self.prefix_len]
    }

    pub fn as_str(&self) -> &str {
        &self.text[self.pattern_len..]
    }
}

/// The literal start of the glob `source` ([`PathGlob::literal_prefix`],
/// which takes it from here), read from the text alone: for a glob known to
/// parse (a gated directive's), it tells without parsing that the glob
/// names none of a change's paths, or which folder holds all it can name.
pub fn literal_prefix_of(source: &str) -> &str {
    let trimmed = source.trim_end_matches('/');
    let pattern = match trimmed.strip_prefix("./") {
        Some(rest) => rest,
        // No `/`: the name matches at any depth.
        None if !trimmed.contains('/') => return "",
        None => trimmed,
    };
    let len = literal_prefix_len(pattern);
    if len == pattern.len() && trimmed.len() < source.len() {
        // A folder glob (`src/gen/`) is `src/gen/**`: the `/` is literal too.
        let start = trimmed.len() - pattern.len();
        return &source[start..start + len + 1];
    }
    &pattern[..len]
}

fn build(pattern: &str) -> Result<Glob, globset::Error> {
    GlobBuilder::new(pattern)
        .literal_separator(true)
        .backslash_escape(false)
        .empty_alternates(true)
        .build()
}

/// How long the literal prefix of `pattern` is: see [`PathGlob::literal_prefix`].
fn literal_prefix_len(pattern: &str) -> usize {
    match pattern.find(['*', '?', '[', '{', '\\']) {
        None => pattern.len(),
        Some(first) => pattern[..first].rfind('/').map_or(0, |slash| slash + 1),
    }
}

/// A repository-relative git path as a filesystem path (bytes kept as they are on Unix).
#[cfg(unix)]
pub fn bytes_path(path: &[u8]) -> std::path::PathBuf {
    use std::os::unix::ffi::OsStrExt;
    std::path::PathBuf::from(std::ffi::OsStr::from_bytes(path))
}

#[cfg(not(unix))]
pub fn bytes_path(path: &[u8]) -> std::path::PathBuf {
    std::path::PathBuf::from(String::from_utf8_lossy(path).into_owned())
}

fn has_drive_prefix(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':'
}

impl fmt::Debug for PathGlob {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PathGlob({:?})", self.as_str())
    }
}

impl PartialEq for PathGlob {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
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
        // A glob whose last part has no wildcard is a file or a folder.
        assert!(m("src", "src/a/b.rs"));
        assert!(m("vendor", "x/vendor/lib.c"));
        assert!(m("docs/api", "docs/api/index.md"));
        assert!(m("./Makefile", "Makefile/x"));
        assert!(m("{a,b}/x", "b/x/y.txt"));
        assert!(!m("src", "srcx/a.rs"));
        assert!(!m("docs/api", "docs/apix/a.md"));
        assert!(!m("vendor", "vendored/a.c"));
        assert!(!m("src/*", "src/a/b.rs"), "`*` never crosses `/`");
        assert!(!m("*.rs", "a.rs/x.txt"));
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

    /// The prefix read from the text is the parsed glob's, and every path
    /// the glob matches starts with it.
    #[test]
    fn literal_prefix_of_the_text_is_the_parsed_ones() {
        let parts = [
            "src", "m001", "*", "**", "*.rs", "a.b", "{x,y}", "[ab]", "?", ".",
        ];
        let mut globs = vec![
            "./Makefile".to_owned(),
            "./src/*.rs".to_owned(),
            "docs/".to_owned(),
            "src/gen/".to_owned(),
            "src//x".to_owned(),
            "a/b/c.txt".to_owned(),
        ];
        for a in parts {
            globs.push(a.to_owned());
            globs.push(format!("{a}/"));
            globs.push(format!("./{a}"));
            for b in parts {
                globs.push(format!("{a}/{b}"));
                globs.push(format!("./{a}/{b}/"));
                for c in parts {
                    globs.push(format!("{a}/{b}/{c}"));
                }
            }
        }
        let paths = [
            "src/m001/a.rs",
            "src/a.b",
            "x/src/m001",
            "m001/x/y.rs",
            "a/b/c.txt",
        ];
        for g in &globs {
            let Ok(glob) = PathGlob::parse(g) else {
                continue;
            };
            let quick = literal_prefix_of(g);
            assert_eq!(glob.literal_prefix(), quick, "{g}");
            // What the normalised pattern itself says its literal start is.
            let pattern = &glob.text[..glob.pattern_len];
            assert_eq!(&pattern[..literal_prefix_len(pattern)], quick, "{g}");
            for p in paths {
                assert!(!glob.is_match(p) || p.starts_with(quick), "{g} matches {p}");
            }
        }
        assert_eq!(literal_prefix_of("src/m001/**/*.rs"), "src/m001/");
        assert_eq!(literal_prefix_of("./Makefile"), "Makefile");
        assert_eq!(literal_prefix_of("*.rs"), "");
        assert_eq!(literal_prefix_of("docs/"), "");
        assert_eq!(literal_prefix_of("src/gen//"), "src/gen/");
        assert_eq!(literal_prefix_of("./x/"), "x/");
    }

    /// The string tests agree with the regex globset compiles, on globs of
    /// every shape and paths at the edges (empty names, dotfiles, depth 0).
    #[test]
    fn shapes_agree_with_globset() {
        let globs = [
            "src/**",
            "src/",
            "a/b/c.txt",
            "Makefile",
            "./Makefile",
            "src/*.rs",
            "src/*",
            "src/**/*.rs",
            "*.rs",
            "*",
            "**/*.rs",
            "src/**/mod.rs",
            "mod.rs",
            "src/**/*",
            ".swarm/**",
            "src/*.tar.gz",
            "src/m0/d00/*.rs",
            "src/**/x/*.rs",
            "a,b/*.c",
        ];
        let paths = [
            "src",
            "src/a.rs",
            "src/.rs",
            "src/a/b.rs",
            "src/a/b/c.rs",
            "a.rs",
            "rs",
            "Makefile",
            "sub/Makefile",
            "a/b/c.txt",
            "a/b/c.txtx",
            "src/mod.rs",
            "mod.rs",
            "src/x/mod.rs",
            "src/xmod.rs",
            "src/a.tar.gz",
            "src/x/a.tar.gz",
            ".swarm/a",
            "src/m0/d00/f.rs",
            "src/m0/d00/e/f.rs",
            "src/x/x/a.rs",
            "src/x/a.rs",
            "a,b/x.c",
            "srcx/a.rs",
            "x/src/a.rs",
            "a/b/c.txt/d",
            "sub/Makefile/x",
            "src/x/mod.rs/y",
            "a,b/x.c/d",
        ];
        for g in globs {
            let glob = PathGlob::parse(g).expect("valid glob");
            let pattern = match g.strip_prefix("./") {
                Some(rest) => rest.to_owned(),
                None if g.trim_end_matches('/').contains('/') => g.to_owned(),
                None => format!("**/{g}"),
            };
            let pattern = match pattern.strip_suffix('/') {
                Some(dir) => format!("{dir}/**"),
                None => pattern,
            };
            let regex = build(&pattern).expect("valid glob").compile_matcher();
            // Below a match of a glob whose last part is literal.
            let last = pattern.rsplit('/').next().unwrap_or_default();
            let below = (!last.contains(['*', '?', '{', ','])).then(|| {
                build(&format!("{pattern}/**"))
                    .expect("valid glob")
                    .compile_matcher()
            });
            for p in paths {
                assert_eq!(
                    glob.is_match(p),
                    regex.is_match(p) || below.as_ref().is_some_and(|b| b.is_match(p)),
                    "glob {g:?} (shape {:?}) on {p:?}",
                    glob.shape
                );
            }
        }
        let shape = |g: &str| {
            let glob = PathGlob::parse(g).expect("valid glob");
            let tail = glob.text[glob.tail..glob.pattern_len].to_owned();
            (glob.shape, tail)
        };
        assert_eq!(shape("src/**"), (Shape::Below, String::new()));
        assert_eq!(shape("src/*.rs"), (Shape::NameEndsIn, ".rs".into()));
        assert_eq!(shape("*.rs"), (Shape::DeepNameEndsIn, ".rs".into()));
        assert_eq!(shape("src/**/mod.rs"), (Shape::DeepName, "mod.rs".into()));
        assert_eq!(shape("a/b/c.txt"), (Shape::Exact, String::new()));
        assert!(matches!(shape("src/**/x/*.rs").0, Shape::Regex(_)));
    }

    /// Globs of a simple shape skip globset, so its syntax errors must
    /// still be found for every character it gives a meaning to.
    #[test]
    fn simple_shapes_with_special_characters_still_go_through_globset() {
        for g in ["a}/**", "a}b", "src/}/*.rs", "x/**/a}.rs"] {
            let err = PathGlob::parse(g).expect_err(g);
            assert!(
                err.message.contains("does not parse"),
                "{g}: {}",
                err.message
            );
        }
        for g in ["a,b/**", "a]b/*.rs", "a?b/**"] {
            let glob = PathGlob::parse(g).expect(g);
            assert!(matches!(glob.shape, Shape::Regex(_)), "{g}");
        }
    }

    /// Nested alternatives past the limit are refused where the first
    /// `{` too deep is; anything within the limits compiles, so no glob that
    /// parses can make globset panic when it is first matched.
    #[test]
    fn globs_within_the_limits_always_compile() {
        let nested = |depth: usize, inner: &str| {
            format!("{}{inner}{}", "{a,".repeat(depth), "}".repeat(depth))
        };
        let e = PathGlob::parse(&nested(125, "b")).expect_err("125 deep");
        assert_eq!(e.at, Some(3 * MAX_BRACE_DEPTH), "{e:?}");
        assert!(
            e.message.contains("more than 8 deep (at character 25)"),
            "{e:?}"
        );
        assert!(PathGlob::parse(&"a".repeat(MAX_LEN + 1)).is_err());
        let mut worst = Vec::new();
        for inner in ["b", "**/x/**", "[!a-z]*?", "é*"] {
            worst.push(nested(MAX_BRACE_DEPTH, inner));
        }
        worst.push(nested(MAX_BRACE_DEPTH - 1, "{x,[!y]}"));
        // As long as allowed, of each construct and at the deepest nesting.
        for unit in ["**/", "*?", "[!a-\u{10FFFF}]", "{a,**/b}/", "x,"] {
            let mut g = "{".repeat(MAX_BRACE_DEPTH - 1);
            while g.len() + unit.len() + MAX_BRACE_DEPTH <= MAX_LEN {
                g.push_str(unit);
            }
            g.push_str(&"}".repeat(MAX_BRACE_DEPTH - 1));
            worst.push(g);
        }
        for g in &worst {
            let glob = PathGlob::parse(g).unwrap_or_else(|e| panic!("{g}: {e:?}"));
            let Shape::Regex(built) = &glob.shape else {
                panic!("{g} is matched by a regex");
            };
            // Compiled as a check compiles it on its first path.
            let compiled = std::panic::catch_unwind(|| built.compile_matcher());
            assert!(compiled.is_ok(), "{g} does not compile");
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
