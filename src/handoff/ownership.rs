//! Exclusive ownership: two handoffs may not own a path in common. Handoffs
//! are made before their files exist, so whether two globs could match one
//! path is decided on the globs themselves, exactly: each glob's regex
//! ([`PathGlob::regex`], the one it matches with) is compiled to a DFA, and
//! a breadth-first search over pairs of states looks for a path both accept. The path it
//! finds is the witness, the shortest there is. The search is bounded: a
//! pair it cannot decide within the bound counts as overlapping (unless a
//! tracked file decides it), so no pair gets through undecided.

use regex_automata::{
    Anchored,
    dfa::{Automaton, StartKind, dense},
    nfa::thompson,
    util::{primitives::StateID, start, syntax},
};

use crate::pathglob::PathGlob;

/// How many pairs of states the search visits before it gives up.
pub const MAX_STATES: usize = 20_000;

/// How large one glob's DFA may grow, in bytes, before it gives up.
pub const DFA_LIMIT: usize = 1 << 20;

type Dfa = dense::DFA<Vec<u32>>;

/// Two globs, one of each set, and a path both match.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Overlap {
    pub mine: String,
    pub theirs: String,
    /// A path both globs match; empty when `decided` is false.
    pub witness: String,
    /// False when the search hit its bound (or a glob's automaton grew too
    /// large) without finding a shared path or proving there is none: the
    /// pair is then refused as if it overlapped.
    pub decided: bool,
}

/// The first pair of globs of `a` and `b` that could match one path, with
/// that path. `tracked` (the repository's files) gives a witness for a pair
/// the search could not decide. Globs that do not parse own nothing.
pub fn overlaps(a: &[String], b: &[String], tracked: &[String]) -> Option<Overlap> {
    let compiled = |globs: &[String]| -> Vec<(String, PathGlob, Option<Dfa>)> {
        globs
            .iter()
            .filter_map(|g| {
                let parsed = PathGlob::parse(g).ok()?;
                let dfa = dfa(&parsed);
                Some((g.clone(), parsed, dfa))
            })
            .collect()
    };
    let (ca, cb) = (compiled(a), compiled(b));
    for (ga, pa, da) in &ca {
        for (gb, pb, db) in &cb {
            // A witness whose parts do not start with `.` reads better
            // (`src/x.rs`, not `src/.rs`); only when there is none is every
            // path searched.
            let found = match (da, db) {
                (Some(da), Some(db)) => match search(da, db, false) {
                    Search::Shared(w) => Search::Shared(w),
                    _ => search(da, db, true),
                },
                _ => Search::Undecided,
            };
            let overlap = |witness: String, decided| Overlap {
                mine: ga.clone(),
                theirs: gb.clone(),
                witness,
                decided,
            };
            match found {
                Search::Disjoint => {}
                Search::Shared(witness) => return Some(overlap(witness, true)),
                Search::Undecided => {
                    return Some(
                        match tracked.iter().find(|p| pa.is_match(p) && pb.is_match(p)) {
                            Some(p) => overlap(p.clone(), true),
                            None => overlap(String::new(), false),
                        },
                    );
                }
            }
        }
    }
    None
}

/// The regex `glob` matches with, as an anchored DFA; `None`
/// when it does not build within [`DFA_LIMIT`].
fn dfa(glob: &PathGlob) -> Option<Dfa> {
    let regex = glob.regex()?;
    dense::Builder::new()
        .configure(
            dense::Config::new()
                .start_kind(StartKind::Anchored)
                .dfa_size_limit(Some(DFA_LIMIT))
                .determinize_size_limit(Some(DFA_LIMIT)),
        )
        // As globset builds its matcher: bytes, `.` matching any byte.
        .syntax(
            syntax::Config::new()
                .unicode(false)
                .utf8(false)
                .dot_matches_new_line(true),
        )
        .thompson(thompson::Config::new().utf8(false))
        .build(&regex)
        .ok()
}

enum Search {
    Disjoint,
    Shared(String),
    Undecided,
}

/// Bytes in the order the search tries them, so that a witness reads as a
/// path: lowercase letters and digits first, then the rest.
fn byte_order() -> Vec<u8> {
    let first = b"xabcdefghijklmnopqrstuvwyz0123456789._-/";
    let mut order = first.to_vec();
    order.extend((1..=255u8).filter(|b| !first.contains(b)));
    order
}

/// A breadth-first search over pairs of DFA states for a path both accept.
/// A path is non-empty, has no NUL, no empty part and no trailing `/`; the
/// third part of a node says whether the next byte starts a part.
/// Without `dotted`, parts starting with `.` are left out.
fn search(a: &Dfa, b: &Dfa, dotted: bool) -> Search {
    let config = start::Config::new().anchored(Anchored::Yes);
    let (Ok(sa), Ok(sb)) = (a.start_state(&config), b.start_state(&config)) else {
        return Search::Undecided;
    };
    type Node = (StateID, StateID, bool);
    let mut seen: std::collections::HashMap<Node, Option<(Node, u8)>> =
        std::collections::HashMap::new();
    let mut queue = std::collections::VecDeque::new();
    let root = (sa, sb, true);
    seen.insert(root, None);
    queue.push_back(root);
    let order = byte_order();
    while let Some(node) = queue.pop_front() {
        let (x, y, at_part_start) = node;
        if !at_part_start
            && a.is_match_state(a.next_eoi_state(x))
            && b.is_match_state(b.next_eoi_state(y))
        {
            let mut bytes = Vec::new();
            let mut at = node;
            while let Some(Some((parent, byte))) = seen.get(&at) {
                bytes.push(*byte);
                at = *parent;
            }
            bytes.reverse();
            return Search::Shared(String::from_utf8_lossy(&bytes).into_owned());
        }
        for &byte in &order {
            if at_part_start && (byte == b'/' || (byte == b'.' && !dotted)) {
                continue;
            }
            let (nx, ny) = (a.next_state(x, byte), b.next_state(y, byte));
            if a.is_dead_state(nx) || b.is_dead_state(ny) {
                continue;
            }
            if a.is_quit_state(nx) || b.is_quit_state(ny) {
                return Search::Undecided;
            }
            let next = (nx, ny, byte == b'/');
            if seen.contains_key(&next) {
                continue;
            }
            if seen.len() >= MAX_STATES {
                return Search::Undecided;
            }
            seen.insert(next, Some((node, byte)));
            queue.push_back(next);
        }
    }
    Search::Disjoint
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(a: &str, b: &str) -> Option<String> {
        let o = overlaps(&[a.to_owned()], &[b.to_owned()], &[])?;
        assert!(o.decided, "{a} vs {b} undecided");
        let parse = |g: &str| PathGlob::parse(g).expect("the test's globs parse");
        let (pa, pb) = (parse(a), parse(b));
        assert!(
            pa.is_match(&o.witness) && pb.is_match(&o.witness),
            "{a} vs {b}: witness {} matches both",
            o.witness
        );
        Some(o.witness)
    }

    #[test]
    fn globs_that_share_a_path_overlap() {
        for (a, b) in [
            ("src/**", "src/auth/*.rs"),
            ("src", "src/a/b.rs"),
            ("src/a*.rs", "src/*b.rs"),
            ("**/test/**", "src/**"),
            ("src/auth/**", "src/auth/"),
            ("a/**/b/*.rs", "a/x/**"),
            ("src/*auth*", "src/*login*"),
            ("*a*", "*b*"),
            ("src/{a,b}.rs", "src/{c,b}.rs"),
            ("src/[ab].rs", "src/[cb].rs"),
            ("src/[a-c]*", "src/[!a]*"),
            ("src/a?c", "src/?b?"),
            ("{docs,src}/**", "{lib,src}/*.rs"),
            ("{src/a,lib}/**", "src/a/x.rs"),
        ] {
            assert!(check(a, b).is_some(), "{a} vs {b}");
            assert!(check(b, a).is_some(), "{b} vs {a}");
        }
        assert_eq!(check("*.md", "docs/a.md").as_deref(), Some("docs/a.md"));
    }

    #[test]
    fn disjoint_globs_do_not() {
        for (a, b) in [
            ("src/auth/**", "src/db/**"),
            ("src/a/**", "src/b/**"),
            ("*.rs", "*.md"),
            ("docs/*.md", "docs/api/x.md"),
            ("docs/*.md", "docs/x/*.md"),
            ("src/a.rs", "src/ab.rs"),
            ("src/[ab].rs", "src/[cd].rs"),
        ] {
            assert_eq!(check(a, b), None, "{a} vs {b}");
            assert_eq!(check(b, a), None, "{b} vs {a}");
        }
    }
}
