//! What a recorded check (`git swarm check --record`, the pre-commit hook) appends to
//! the directive loop: a failure once per change while it stands, and a
//! pass only where it clears a violation on the same branch.

use crate::change::Selection;
use crate::event::{Body, CheckOutcome, Event};
use crate::fold::Fold;
use crate::store::Store;

/// The full ref name of the branch a checked change is on: HEAD's (during a
/// rebase, the branch being rebased, as `git status` says), or the one a
/// range's or commit's tip names. `None` on a detached HEAD or a tip that is
/// no branch (`HEAD~2`, an id): violations found there are remediated only
/// by an applied ack or a verified verdict.
pub fn checked_branch(repo: &gix::Repository, selection: &Selection) -> Option<String> {
    let tip = tip(selection).unwrap_or("HEAD");
    let name = if tip == "HEAD" || tip == "@" {
        match repo.head_name().ok().flatten() {
            Some(name) => name,
            None => return rebased_branch(repo),
        }
    } else {
        let reference = repo.try_find_reference(tip).ok().flatten()?;
        reference.name().to_owned()
    };
    let name = name.as_bstr().to_string();
    name.starts_with("refs/heads/").then_some(name)
}

/// The revision a committed change ends at; `None` for a staged or
/// working-tree change.
fn tip(selection: &Selection) -> Option<&str> {
    match selection {
        Selection::Staged | Selection::Worktree => None,
        Selection::Range { to, .. } if to.is_empty() => Some("HEAD"),
        Selection::Range { to, .. } => Some(to),
        Selection::Commit(c) => Some(c),
    }
}

/// The branch an interactive or plain rebase in progress is rebasing, as
/// git records it in `rebase-merge/head-name` (or `rebase-apply/`, for
/// `git rebase --apply`) of this worktree's git directory.
fn rebased_branch(repo: &gix::Repository) -> Option<String> {
    use std::io::Read;
    ["rebase-merge", "rebase-apply"].iter().find_map(|dir| {
        let file = std::fs::File::open(repo.git_dir().join(dir).join("head-name")).ok()?;
        // A ref name: a line; anything longer is not one git wrote.
        let mut text = String::new();
        file.take(4096).read_to_string(&mut text).ok()?;
        let name = text.trim_end_matches(['\n', '\r']);
        (name.starts_with("refs/heads/") && !name.contains('\n')).then(|| name.to_owned())
    })
}

/// When the tip of a committed change was made (committer time, in ms, at
/// the end of its second); `None` for a staged or working-tree change,
/// which is the state of things now.
pub fn tip_time(repo: &gix::Repository, selection: &Selection) -> Option<i64> {
    let commit = repo
        .rev_parse_single(tip(selection)?)
        .ok()?
        .object()
        .ok()?
        .peel_to_commit()
        .ok()?;
    let seconds = commit.time().ok()?.seconds;
    Some(seconds.saturating_mul(1000).saturating_add(999))
}

/// An event a recorded check appends, and what an event of the log must
/// sort after to be the same record (see [`check_events`]).
#[derive(Debug)]
pub struct CheckRecord {
    pub event: Event,
    /// A line of the same kind, directive and change records this one only
    /// if it sorts after this (ts, event key): a failure recorded before the
    /// directive's last remediation, or a pass before the violation it is
    /// to clear, is an earlier occasion, not this one.
    pub after: Option<(i64, u128)>,
}

impl CheckRecord {
    /// Is `line`, read from the log, this record made already?
    pub fn recorded_by(&self, line: &Event) -> bool {
        let e = &self.event;
        line.kind == e.kind
            && line.directive == e.directive
            && line.check_key() == e.check_key()
            && self.after.is_none_or(|after| {
                line.ts_millis()
                    .is_some_and(|ts| (ts, crate::event::id_key(&line.id)) > after)
            })
    }
}

/// The events a recorded check appends: a `check` failure per failing
/// directive not recorded for this change since its last remediation, and a
/// `check_passed` only where it clears an unremediated violation on `branch`,
/// so passing commits do not fill the log. A change whose `tip` (see
/// [`tip_time`]) predates the violation is no fix of it.
pub fn check_events(
    store: &Store,
    fold: &Fold,
    report: &crate::check::Report<'_>,
    branch: Option<&str>,
    tip: Option<i64>,
) -> Vec<CheckRecord> {
    use crate::check::Outcome;
    let mut records = Vec::new();
    for r in &report.results {
        let state = fold.loop_state(r.id);
        let (e, after) = match r.outcome {
            Outcome::Fail => {
                // The same change failing again is one violation while it
                // stands; once remediated, it is a new one.
                let standing = match branch {
                    Some(b) => state.is_some_and(|s| s.open_on_branch(b)),
                    None => state.is_none_or(crate::fold::LoopState::unremediated),
                };
                if fold.has_check(r.id, &report.fingerprint) && standing {
                    continue;
                }
                let failed = r
                    .predicates
                    .iter()
                    .filter(|p| p.outcome == Outcome::Fail)
                    .map(|p| p.predicate.to_owned())
                    .collect();
                (
                    store.event(Body::Check {
                        outcome: CheckOutcome::Fail,
                        change: report.fingerprint.clone(),
                        selection: report.change.clone(),
                        enforcement: r.enforcement,
                        predicates: failed,
                        branch: branch.map(str::to_owned),
                    }),
                    state.and_then(|s| s.last_remediation),
                )
            }
            Outcome::Pass => {
                let Some(open) = branch
                    .and_then(|b| state.and_then(|s| s.open_on_branch_at(b)))
                    .filter(|(ts, _)| tip.is_none_or(|tip| *ts <= tip))
                else {
                    continue;
                };
                let e = store.event(Body::CheckPassed {
                    change: report.fingerprint.clone(),
                    selection: report.change.clone(),
                    branch: branch.map(str::to_owned),
                });
                // A pass sorting before the violation (a clock behind the
                // one that recorded it) would clear nothing, and be recorded
                // again by every passing check until the clock caught up.
                if e.ts_millis()
                    .is_none_or(|ts| (ts, crate::event::id_key(&e.id)) <= open)
                {
                    continue;
                }
                (e, Some(open))
            }
            _ => continue,
        };
        records.push(CheckRecord {
            event: e.about(r.id),
            after,
        });
    }
    records
}
