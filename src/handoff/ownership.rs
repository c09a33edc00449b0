//! Exclusive ownership: two handoffs may not own a path in common. Whether
//! two globs could match the same path is decided on the globs themselves,
//! before any such file exists, by walking them a path part at a time:
//! `**` stands for any number of parts, two single parts meet when some
//! name matches both, and a glob is read as `pathglob` reads it (a glob
//! without `/` matches its name at any depth, so `*.md` owns
//! `docs/a.md`; a last part without wildcard owns what is below it). Every
//! witness the walk builds is matched against both globs before it is
//! believed; when the walk finds none (shapes it does not model, such as a
//! `{a/b,c}` alternative across folders), a tracked file matching both is
//! the witness.

use globset::GlobBuilder;

use crate::pathglob::PathGlob;

/// Two globs, one of each set, and a path both match.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Overlap {
    pub mine: String,
    pub theirs: String,
    pub witness: String,
}

/// The first pair of globs of `a` and `b` that could match one path, with
/// that path; `tracked` (the repository's files) gives a witness for
/// shapes the walk on the globs does not decide. Globs that do not parse
/// own nothing.
pub fn overlaps(a: &[String], b: &[String], tracked: &[String]) -> Option<Overlap> {
    for ga in a {
        let Ok(pa) = PathGlob::parse(ga) else {
            continue;
        };
        for gb in b {
            let Ok(pb) = PathGlob::parse(gb) else {
                continue;
            };
            if let Some(witness) = witness(ga, &pa, gb, &pb, tracked) {
                return Some(Overlap {
                    mine: ga.clone(),
                    theirs: gb.clone(),
                    witness,
                });
            }
        }
    }
    None
}

/// A path both globs match, if the walk or the tracked files find one.
fn witness(ga: &str, pa: &PathGlob, gb: &str, pb: &PathGlob, tracked: &[String]) -> Option<String> {
    let both = |p: &str| pa.is_match(p) && pb.is_match(p);
    let (sa, sb) = (parts(ga), parts(gb));
    let mut memo = std::collections::HashSet::new();
    if let Some(found) = walk(&sa, &sb, &mut memo) {
        let path = found.join("/");
        // A folder's glob (`src/**`) wants something below the folder.
        for candidate in [
            path.clone(),
            format!("{path}/file"),
            format!("{path}/f/file"),
        ] {
            let candidate = candidate.trim_start_matches('/').to_owned();
            if !candidate.is_empty() && both(&candidate) {
                return Some(candidate);
            }
        }
    }
    tracked.iter().find(|p| both(p)).cloned()
}

/// The glob's parts as `pathglob` reads it: a bare name at any depth
/// (`**/name`), a trailing `/` or a literal last part also covering what is
/// below (`**` appended).
fn parts(source: &str) -> Vec<String> {
    let trimmed = source.trim_end_matches('/');
    let pattern = match trimmed.strip_prefix("./") {
        Some(rest) => rest.to_owned(),
        None if trimmed.contains('/') => trimmed.to_owned(),
        None => format!("**/{trimmed}"),
    };
    let mut parts: Vec<String> = pattern.split('/').map(str::to_owned).collect();
    let last_is_literal = parts.last().is_some_and(|p| !has_wildcard(p));
    if source.ends_with('/') || last_is_literal {
        parts.push("**".to_owned());
    }
    parts
}

fn has_wildcard(part: &str) -> bool {
    part.contains(['*', '?', '[', ']', '{', '}'])
}

/// Path parts matching both part lists, `**` matching zero or more parts.
/// `memo` holds the positions already found to lead nowhere, so that the
/// walk stays quadratic in the number of parts.
fn walk(
    a: &[String],
    b: &[String],
    memo: &mut std::collections::HashSet<(usize, usize)>,
) -> Option<Vec<String>> {
    let key = (a.len(), b.len());
    if memo.contains(&key) {
        return None;
    }
    let found = match (a.first().map(String::as_str), b.first().map(String::as_str)) {
        (None, None) => Some(Vec::new()),
        (Some("**"), _) => walk(&a[1..], b, memo).or_else(|| {
            let first = b.first()?;
            let name = if first == "**" {
                None
            } else {
                Some(sample(first))
            };
            let mut rest = walk(a, &b[1..], memo)?;
            if let Some(name) = name {
                rest.insert(0, name);
            }
            Some(rest)
        }),
        // Written out rather than `walk(b, a, memo)`: the memo's positions are (a, b).
        (Some(first), Some("**")) => walk(a, &b[1..], memo).or_else(|| {
            let mut rest = walk(&a[1..], b, memo)?;
            rest.insert(0, sample(first));
            Some(rest)
        }),
        (None, Some("**")) => walk(a, &b[1..], memo),
        (Some(x), Some(y)) => {
            let name = meet(x, y)?;
            let mut rest = walk(&a[1..], &b[1..], memo)?;
            rest.insert(0, name);
            Some(rest)
        }
        _ => None,
    };
    if found.is_none() {
        memo.insert(key);
    }
    found
}

/// A name matching the single part `part`: its wildcards filled with `x`,
/// or with the first thing they allow.
fn sample(part: &str) -> String {
    let mut out = String::new();
    let mut chars = part.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '*' | '?' => out.push('x'),
            '[' => {
                let mut first = None;
                for c in chars.by_ref() {
                    if c == ']' {
                        break;
                    }
                    if first.is_none() && c != '!' && c != '^' {
                        first = Some(c);
                    }
                }
                out.push(first.unwrap_or('x'));
            }
            '{' => {
                let mut depth = 1;
                let mut taking = true;
                for c in chars.by_ref() {
                    match c {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        ',' if depth == 1 => taking = false,
                        _ if taking => out.push(c),
                        _ => {}
                    }
                }
            }
            c => out.push(c),
        }
    }
    if out.is_empty() { "x".to_owned() } else { out }
}

/// A name both single parts match, tried from their literal starts and ends.
fn meet(x: &str, y: &str) -> Option<String> {
    if !has_wildcard(x) && !has_wildcard(y) {
        return (x == y).then(|| x.to_owned());
    }
    let matcher = |part: &str| {
        GlobBuilder::new(part)
            .literal_separator(true)
            .backslash_escape(false)
            .build()
            .ok()
            .map(|g| g.compile_matcher())
    };
    let (mx, my) = (matcher(x)?, matcher(y)?);
    let ends = |p: &str| {
        let start = p.find(['*', '?', '[', '{']).map_or(p.len(), |i| i);
        let end = p.rfind(['*', '?', ']', '}']).map_or(0, |i| i + 1);
        (p[..start].to_owned(), p[end.max(start)..].to_owned())
    };
    let ((px, sx), (py, sy)) = (ends(x), ends(y));
    let candidates = [
        sample(x),
        sample(y),
        format!("{px}{sy}"),
        format!("{py}{sx}"),
        format!("{px}{py}{sy}{sx}"),
        format!("{py}{px}{sx}{sy}"),
        format!("{px}{py}{sx}{sy}"),
        format!("{py}{px}{sy}{sx}"),
        format!("{px}x{sy}"),
        format!("{py}x{sx}"),
    ];
    candidates
        .into_iter()
        .find(|c| !c.is_empty() && mx.is_match(c) && my.is_match(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(a: &str, b: &str) -> Option<String> {
        overlaps(&[a.to_owned()], &[b.to_owned()], &[]).map(|o| o.witness)
    }

    #[test]
    fn globs_that_share_a_path_overlap() {
        let w = check("src/**", "src/auth/*.rs").expect("overlap");
        assert!(w.starts_with("src/auth/") && w.ends_with(".rs"), "{w}");
        assert_eq!(check("*.md", "docs/a.md").as_deref(), Some("docs/a.md"));
        assert!(check("src", "src/a/b.rs").is_some());
        assert!(check("src/a*.rs", "src/*b.rs").is_some());
        assert!(check("**/test/**", "src/**").is_some());
        assert!(check("src/auth/**", "src/auth/").is_some());
        assert!(check("src/auth/*.rs", "src/**").is_some());
        assert_eq!(
            check("a/**/b/*.rs", "a/x/**").as_deref(),
            Some("a/x/b/x.rs")
        );
    }

    #[test]
    fn disjoint_globs_do_not() {
        assert_eq!(check("src/auth/**", "src/db/**"), None);
        assert_eq!(check("*.rs", "*.md"), None);
        assert_eq!(check("docs/*.md", "docs/api/x.md"), None);
        assert_eq!(check("src/a.rs", "src/ab.rs"), None);
    }

    #[test]
    fn a_tracked_file_is_the_witness_the_walk_misses() {
        let tracked = vec!["lib/x/y.rs".to_owned()];
        let o = overlaps(
            &["{lib/x,bin}/**".to_owned()],
            &["lib/**/*.rs".to_owned()],
            &tracked,
        );
        assert_eq!(o.map(|o| o.witness).as_deref(), Some("lib/x/y.rs"));
    }
}
