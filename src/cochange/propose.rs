//! Co-change rules as proposals: "when X changes, Y changes too", for a
//! person to accept or reject (`git swarm proposal`), never written
//! straight into `directives/`: mined pairs are often noise.

use serde::Serialize;

use super::{Mined, Options, Rule};
use crate::directive::Category;
use crate::error::{Error, Result};
use crate::event::Event;
use crate::predicate::Predicate;
use crate::problem::Problem;
use crate::proposal::{self, Proposal, ProposalStatus};
use crate::store::Store;

/// The `source` of a co-change proposal and its event.
pub const SOURCE: &str = "git swarm cochange";
/// The role co-change lessons are for: the one that edits files.
pub const ROLE: &str = "coder";

/// A proposal written (or, with a dry run, that would be).
#[derive(Debug, Clone, Serialize)]
pub struct Written {
    pub slug: String,
    /// The file, relative to the repository.
    pub path: String,
    pub when: String,
    pub then: String,
}

/// What proposing did.
#[derive(Debug, Default, Serialize)]
pub struct Proposed {
    pub written: Vec<Written>,
    /// Rules proposed before, in any status (open, accepted, rejected).
    pub already_proposed: usize,
    /// Rules left for a later run: at most `proposal::MAX_PER_RUN` a run.
    pub left_for_later: usize,
    /// Rules whose paths cannot be written as a literal glob (they hold
    /// `*`, `?`, `[`, `{`, `\` or a control character): not proposed.
    pub not_expressible: usize,
    /// Proposal files that could not be read (skipped, their keys unknown),
    /// and entries at a proposal's path that are not one (not replaced).
    #[serde(skip)]
    pub problems: Vec<Problem>,
    /// One `proposed` event per proposal written, and one per co-change
    /// proposal the log has none for, for the caller to append.
    #[serde(skip)]
    pub events: Vec<Event>,
    /// The write that failed, stopping the run: the caller appends
    /// `events` (for what was written before it) first, then reports it.
    #[serde(skip)]
    pub error: Option<Error>,
}

/// `path` as a glob that matches that file only, or `None` when it holds a
/// glob's special characters or a control character (a newline: a
/// directive's path that the actionability gate would quarantine). A path
/// with no `/` is anchored with `./` (a bare name would match at any depth).
pub fn literal_glob(path: &str) -> Option<String> {
    if path.contains(['*', '?', '[', ']', '{', '}', '\\', '!']) || path.contains(char::is_control) {
        return None;
    }
    Some(if path.contains('/') {
        path.to_owned()
    } else {
        format!("./{path}")
    })
}

/// The proposal for `rule`, or `None` when its paths make no glob that parses.
pub fn proposal_for(rule: &Rule, mined: &Mined, options: &Options, now: &str) -> Option<Proposal> {
    let (when, then) = (literal_glob(&rule.when)?, literal_glob(&rule.then)?);
    let verify = format!("file_modified:{then}");
    Predicate::parse(&verify).ok()?;
    crate::pathglob::PathGlob::parse(&when).ok()?;
    let title = crate::display::truncate(
        &format!(
            "When {} changes, {} changes too: together in {} of its {} commits",
            rule.when, rule.then, rule.support, rule.when_commits
        ),
        280,
    );
    let recency = if options.half_life_days > 0.0 {
        format!(
            "recent commits weigh more, half as much every {} days",
            options.half_life_days
        )
    } else {
        "every commit weighs the same".to_owned()
    };
    let body = format!(
        "`{w}` and `{t}` changed together in {s} commits of the {n} read from HEAD \
         (merge commits and commits of more than {max} files left out): `{w}` changed \
         in {wc} of them, `{t}` in {tc}.\n\n\
         NPMI {npmi:.2}, P(`{t}` | `{w}`) = {conf:.2} ({recency}).\n\n\
         Commits that changed both: {commits}.\n\n\
         Accepted, it is a directive for the `{ROLE}` role: a change that touches \
         `{w}` is checked to touch `{t}` too.",
        w = rule.when,
        t = rule.then,
        s = rule.support,
        n = mined.commits - mined.bulk_skipped,
        max = options.max_files,
        wc = rule.when_commits,
        tc = rule.then_commits,
        npmi = rule.npmi,
        conf = rule.confidence,
        commits = rule.commits.join(", "),
    );
    Some(Proposal {
        slug: proposal::slug(
            "cochange",
            &format!("{} {}", rule.when, rule.then),
            &rule.key,
        ),
        title,
        status: ProposalStatus::Open,
        source: SOURCE.into(),
        category: Category::Architecture,
        applies_to_agents: vec![ROLE.into()],
        applies_to_tools: Vec::new(),
        paths: vec![when],
        verify: vec![verify],
        required_actions: Vec::new(),
        forbidden_actions: Vec::new(),
        evidence: Vec::new(),
        key: rule.key.clone(),
        created_at: now.to_owned(),
        decided_at: None,
        reason: None,
        directive: None,
        body,
    })
}

/// Writes proposals for the best rules not proposed before, at most
/// `proposal::MAX_PER_RUN`; with `dry_run`, says which it would write and
/// writes nothing. Co-change proposals with no `proposed` event in `log`
/// (a run stopped between writing and recording) get theirs.
pub fn propose(
    store: &Store,
    mined: &Mined,
    options: &Options,
    log: &[Event],
    dry_run: bool,
) -> Result<Proposed> {
    let (existing, problems) = proposal::load_all(store)?;
    let known: std::collections::HashSet<&str> = existing.iter().map(|p| p.key.as_str()).collect();
    let now = crate::event::format_ts(store.clock.now());
    let mut out = Proposed {
        problems,
        ..Proposed::default()
    };
    if !dry_run {
        out.events =
            proposal::unrecorded(store, existing.iter().filter(|p| p.source == SOURCE), log);
    }
    for rule in &mined.rules {
        if known.contains(rule.key.as_str()) {
            out.already_proposed += 1;
            continue;
        }
        let Some(p) = proposal_for(rule, mined, options, &now) else {
            out.not_expressible += 1;
            continue;
        };
        if out.written.len() >= proposal::MAX_PER_RUN {
            out.left_for_later += 1;
            continue;
        }
        let full = proposal::path(store, &p.slug);
        let path = store.rel(&full);
        // Anything at the path holds the slug (which hashes the key), a
        // link to nowhere included: a file that did not read, or another
        // entry. It is not replaced, and said unless load_all said it.
        if std::fs::symlink_metadata(&full).is_ok() {
            if !out.problems.iter().any(|pr| pr.path == path) {
                out.problems.push(
                    Problem::error(
                        &path,
                        "unreadable",
                        "not a proposal that can be read: not replaced",
                    )
                    .with_hint("remove it, and the next `git swarm cochange` proposes the rule"),
                );
            }
            out.already_proposed += 1;
            continue;
        }
        if !dry_run {
            if let Err(e) = proposal::write_new(store, &p) {
                out.error = Some(e);
                break;
            }
            out.events.push(proposal::proposed_event(store, &p));
        }
        out.written.push(Written {
            slug: p.slug,
            path,
            when: rule.when.clone(),
            then: rule.then.clone(),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_becomes_a_glob_of_that_file_alone() {
        assert_eq!(literal_glob("src/a.rs").as_deref(), Some("src/a.rs"));
        assert_eq!(literal_glob("build.rs").as_deref(), Some("./build.rs"));
        assert_eq!(literal_glob("src/[id].ts"), None);
        assert_eq!(literal_glob("src/a\nb.rs"), None);
        assert_eq!(literal_glob("src/a\tb.rs"), None);
        assert_eq!(literal_glob("src/a\u{7f}b.rs"), None);
        let glob = crate::pathglob::PathGlob::parse("./build.rs").expect("parses");
        assert!(glob.is_match("build.rs"));
        assert!(!glob.is_match("sub/build.rs"));
    }
}
