//! "Did you mean": the known name a mistyped one is most likely a typo of,
//! by one rule for every message that offers one (directive keys, ids,
//! roles, phases, event kinds).

/// The name among `known` closest to `name`, if it is close enough to be a
/// typo: a third of the name may differ, and a prefix counts when it is
/// more than a single letter.
pub fn closest<'a>(name: &str, known: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    known
        .into_iter()
        .filter(|k| {
            edit_distance(k, name) <= (name.chars().count() / 3).max(1)
                || (name.len() > 1 && (k.starts_with(name) || name.starts_with(*k)))
        })
        .min_by_key(|k| edit_distance(k, name))
}

/// `a`, `b`, `c` (the first `max`, then `…`), for a hint naming what exists.
pub fn name_list<'a>(names: impl IntoIterator<Item = &'a str>, max: usize) -> String {
    let names: Vec<&str> = names.into_iter().collect();
    let mut out: Vec<String> = names.iter().take(max).map(|n| format!("`{n}`")).collect();
    if names.len() > max {
        out.push("…".into());
    }
    out.join(", ")
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != *cb))
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::closest;

    #[test]
    fn a_typo_finds_its_name_and_a_stranger_finds_none() {
        let known = ["coder", "reviewer", "test_engineer"];
        assert_eq!(closest("codr", known), Some("coder"));
        assert_eq!(closest("review", known), Some("reviewer"));
        assert_eq!(closest("designer", known), None);
        assert_eq!(closest("x", known), None);
    }
}
