//! Trust in a repository's `tool:` predicates, like `direnv allow`.
//!
//! The allowlist says which programs may run; trust says the user has seen
//! the arguments this repository runs them with. `git swarm trust` records
//! a fingerprint of the set of (directive id, `tool:` predicate) pairs in
//! the local git config (`swarm.trustedTools`, one value per trusted set);
//! when a pulled branch changes the set, its fingerprint is new and the
//! tool predicates are skipped, with a warning, until trusted again.
//!
//! The fingerprint is SHA-1 with collision detection, as git uses for its
//! objects: a branch cannot be crafted to match a set the user trusted.

use std::process::Command;

use crate::directive::Directive;
use crate::error::{Error, Result};
use crate::predicate::Predicate;
use crate::store::Repo;

/// The local git config key holding the trusted fingerprints.
pub const TRUST_KEY: &str = "swarm.trustedTools";

/// What a fingerprint starts with when the input looked like a SHA-1
/// collision attack; such a set can never be trusted.
const UNTRUSTABLE: &str = "untrustable:";

/// One `tool:` predicate and the directive it belongs to.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct ToolPredicate {
    pub directive: String,
    /// The `verify` entry exactly as written.
    pub predicate: String,
}

/// The `tool:` predicates among `verify` entries given as (directive id,
/// entry) — of every directive, whatever its status: a retired directive
/// can be re-activated by a pull — sorted and without duplicates. Entries
/// that do not parse are not tool predicates: they never run.
pub fn tool_predicates<'a>(
    verify: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Vec<ToolPredicate> {
    let mut out: Vec<ToolPredicate> = verify
        .into_iter()
        .filter(|(_, v)| matches!(Predicate::parse(v), Ok(Predicate::Tool { .. })))
        .map(|(id, v)| ToolPredicate {
            directive: id.to_owned(),
            predicate: v.to_owned(),
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The `verify` entries of `directives`, as (directive id, entry).
pub fn verify_entries<'a>(
    directives: impl IntoIterator<Item = &'a Directive>,
) -> impl Iterator<Item = (&'a str, &'a str)> {
    directives
        .into_iter()
        .flat_map(|d| d.verify.iter().map(|v| (d.id.as_str(), v.as_str())))
}

/// The fingerprint of a sorted set of the directives' tool predicates: `sha1:<hex>`.
pub fn fingerprint(predicates: &[ToolPredicate]) -> String {
    fingerprint_in(b"git-swarm tool predicates v1\n", predicates)
}

/// The fingerprint of a sorted set of the handoffs' tool criteria: its own
/// domain, so that trusting one set can never stand for the other (a
/// handoff named like a directive, with the same commands).
pub fn criteria_fingerprint(predicates: &[ToolPredicate]) -> String {
    fingerprint_in(b"git-swarm handoff tool criteria v1\n", predicates)
}

fn fingerprint_in(domain: &[u8], predicates: &[ToolPredicate]) -> String {
    let mut hasher = gix::hash::hasher(gix::hash::Kind::Sha1);
    hasher.update(domain);
    for p in predicates {
        // Length-prefixed, so no two different sets encode the same.
        for field in [&p.directive, &p.predicate] {
            hasher.update(format!("{}:", field.len()).as_bytes());
            hasher.update(field.as_bytes());
        }
    }
    match hasher.try_finalize() {
        Ok(id) => format!("sha1:{}", id.to_hex()),
        Err(_) => format!("{UNTRUSTABLE}sha1-collision-attack"),
    }
}

/// The fingerprint of the `tool:` predicates among `verify` entries given
/// as (directive id, entry).
pub fn tool_predicates_fingerprint<'a>(
    verify: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> String {
    fingerprint(&tool_predicates(verify))
}

/// Has the user trusted this set of tool predicates in this repository?
/// An empty set needs no trust; callers skip the question when there are no
/// tool predicates.
pub fn is_trusted(repo: &Repo, fingerprint: &str) -> bool {
    !fingerprint.starts_with(UNTRUSTABLE)
        && repo
            .config_values(TRUST_KEY)
            .iter()
            .any(|v| v.trim() == fingerprint)
}

/// Records `fingerprint` as trusted in the repository's local git config.
/// Returns false when it already was.
pub fn record_trust(repo: &Repo, fingerprint: &str) -> Result<bool> {
    if fingerprint.starts_with(UNTRUSTABLE) {
        return Err(Error::usage(
            "the tool predicates look like a SHA-1 collision attack; they cannot be trusted",
            "inspect the directives' `verify` entries and where they came from",
        ));
    }
    if is_trusted(repo, fingerprint) {
        return Ok(false);
    }
    // A rare write: git takes the config lock and keeps the file's layout.
    let out = Command::new("git")
        .arg("--git-dir")
        .arg(&repo.git_dir)
        .args(["config", "--local", "--add", TRUST_KEY, fingerprint])
        .output()
        .map_err(|e| {
            Error::refused(
                "could not run `git config` to record the trust",
                Some("git must be on PATH".into()),
                e,
            )
        })?;
    if !out.status.success() {
        return Err(Error::usage(
            format!(
                "`git config --local --add {TRUST_KEY}` failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ),
            "check that .git/config is writable",
        ));
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn directive(id: &str, verify: &[&str]) -> Directive {
        let mut d = Directive::new(id, "a lesson that is long enough");
        d.verify = verify.iter().map(|v| (*v).to_owned()).collect();
        d
    }

    #[test]
    fn the_fingerprint_covers_the_tool_predicates_and_nothing_else() {
        let a = directive("a", &["tool:git diff --check", "file_modified:src/**"]);
        let b = directive("b", &["tool:true"]);
        let base = tool_predicates_fingerprint(verify_entries([&a, &b]));
        assert!(base.starts_with("sha1:"), "{base}");
        // Order does not matter.
        assert_eq!(tool_predicates_fingerprint(verify_entries([&b, &a])), base);
        // Other predicates do not matter.
        let a2 = directive("a", &["tool:git diff --check", "grep:x"]);
        assert_eq!(tool_predicates_fingerprint(verify_entries([&a2, &b])), base);
        // Changing a tool predicate or moving it to another directive does.
        let a3 = directive("a", &["tool:git diff --check --cached"]);
        assert_ne!(tool_predicates_fingerprint(verify_entries([&a3, &b])), base);
        let b2 = directive("c", &["tool:true"]);
        assert_ne!(tool_predicates_fingerprint(verify_entries([&a, &b2])), base);
        // Field boundaries cannot be shifted.
        let x = directive("ab", &["tool:c"]);
        let y = directive("a", &["btool:c"]);
        assert_ne!(
            fingerprint(&tool_predicates(verify_entries([&x]))),
            fingerprint(&[ToolPredicate {
                directive: y.id.clone(),
                predicate: y.verify[0].clone()
            }])
        );
    }
}
