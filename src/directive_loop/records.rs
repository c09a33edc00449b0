//! The directive loop's reading of the event log: delegations (what was
//! shown, what was acknowledged), phases (verdicts, overrides, the gate),
//! and the `escalation` records of episodes the fold has opened.
//!
//! Counts and escalation state come from the fold (in the index); the
//! commands here that need whole events (one delegation, one phase) read the
//! log itself, de-duplicated by id and in (ts, id) order like the fold.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use serde::Serialize;
use serde_json::Value;

use crate::directive::{Enforcement, Priority};
use crate::error::Result;
use crate::event::{Event, event_files, read_event_file};
use crate::fold::Fold;
use crate::index::Index;
use crate::problem::Problem;
use crate::store::Store;

/// The whole log, de-duplicated by id, in (ts, id) order, with the problems
/// of the lines skipped.
pub fn read_log(store: &Store) -> Result<(Vec<Event>, Vec<Problem>)> {
    let mut events: Vec<(i64, Event)> = Vec::new();
    let mut problems = Vec::new();
    for path in event_files(&store.events_dir())? {
        let rel = store.rel(&path);
        let file = read_event_file(&path, &rel, &store.config.events)?;
        problems.extend(file.problems);
        events.extend(
            file.events
                .into_iter()
                .filter_map(|l| l.event.ts_millis().map(|t| (t, l.event))),
        );
    }
    events.sort_by(|a, b| (a.0, &a.1.id).cmp(&(b.0, &b.1.id)));
    let mut seen = HashSet::new();
    events.retain(|(_, e)| seen.insert(e.id.clone()));
    Ok((events.into_iter().map(|(_, e)| e).collect(), problems))
}

fn str_field<'a>(e: &'a Event, key: &str) -> Option<&'a str> {
    e.data.get(key).and_then(Value::as_str)
}

/// One directive as a `shown` event recorded it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ShownDirective {
    pub id: String,
    pub priority: Priority,
}

/// A delegation: one `shown` event (its id is the delegation's id).
#[derive(Debug, Clone, Serialize)]
pub struct Delegation {
    pub id: String,
    pub ts: String,
    pub role: Option<String>,
    pub phase: Option<String>,
    pub shown: Vec<ShownDirective>,
}

impl Delegation {
    fn from_event(e: &Event) -> Option<Delegation> {
        if e.kind != "shown" {
            return None;
        }
        let shown = e
            .data
            .get("shown")
            .and_then(Value::as_array)?
            .iter()
            .filter_map(|v| {
                Some(ShownDirective {
                    id: v.get("id")?.as_str()?.to_owned(),
                    priority: serde_json::from_value(v.get("priority")?.clone()).ok()?,
                })
            })
            .collect();
        Some(Delegation {
            id: e.id.clone(),
            ts: e.ts.clone(),
            role: e.actor.role.clone(),
            phase: str_field(e, "phase").map(str::to_owned),
            shown,
        })
    }

    pub fn shows(&self, id: &str) -> bool {
        self.shown.iter().any(|s| s.id == id)
    }
}

/// The delegation with this id, if the log has it.
pub fn delegation(events: &[Event], id: &str) -> Option<Delegation> {
    events
        .iter()
        .find(|e| e.id == id)
        .and_then(Delegation::from_event)
}

/// Every delegation of a phase.
pub fn phase_delegations(events: &[Event], phase: &str) -> Vec<Delegation> {
    events
        .iter()
        .filter(|e| e.kind == "shown" && str_field(e, "phase") == Some(phase))
        .filter_map(Delegation::from_event)
        .collect()
}

/// What the log says of one directive in a phase.
#[derive(Debug, Clone, Default, Serialize)]
pub struct PhaseRecord {
    pub id: String,
    /// Critical when shown, or escalated now.
    pub critical: bool,
    /// The latest terminal outcome in the phase: `applied`, `verified`,
    /// `ignored`, `n_a` (the last two only with a reason).
    pub terminal: Option<String>,
    /// Accepted by an `override` in this phase.
    pub overridden: bool,
}

/// Why a critical directive blocks a phase.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Blocker {
    pub id: String,
    pub reason: String,
}

/// The directives shown in a phase, with their outcomes in it; a directive
/// retired since is left out (it no longer gates a phase or owes a verdict).
pub fn phase_records(events: &[Event], phase: &str, index: &Index) -> Vec<PhaseRecord> {
    let fold = &index.fold;
    let delegations = phase_delegations(events, phase);
    let ids: BTreeSet<&str> = delegations
        .iter()
        .flat_map(|d| d.shown.iter().map(|s| s.id.as_str()))
        .filter(|id| !index.is_retired(id))
        .collect();
    let in_phase: HashSet<&str> = delegations.iter().map(|d| d.id.as_str()).collect();
    let mut records: BTreeMap<&str, PhaseRecord> = ids
        .iter()
        .map(|id| {
            let critical = delegations
                .iter()
                .flat_map(|d| &d.shown)
                .any(|s| s.id == *id && s.priority == Priority::Critical)
                || fold.escalated(id).is_some();
            (
                *id,
                PhaseRecord {
                    id: (*id).to_owned(),
                    critical,
                    ..PhaseRecord::default()
                },
            )
        })
        .collect();
    for e in events {
        let Some(id) = e.directive.as_deref() else {
            continue;
        };
        let Some(r) = records.get_mut(id) else {
            continue;
        };
        let reason = str_field(e, "reason").is_some_and(|r| !r.trim().is_empty());
        match e.kind.as_str() {
            "ack" if str_field(e, "delegation").is_some_and(|d| in_phase.contains(d)) => {
                match str_field(e, "status") {
                    Some("applied") => r.terminal = Some("applied".into()),
                    Some(s @ ("ignored" | "n_a")) if reason => r.terminal = Some(s.into()),
                    _ => {}
                }
            }
            "verdict" if str_field(e, "phase") == Some(phase) => match str_field(e, "verdict") {
                Some("verified") => r.terminal = Some("verified".into()),
                Some("n_a") if reason => r.terminal = Some("n_a".into()),
                _ => {}
            },
            "override" if str_field(e, "phase") == Some(phase) => r.overridden = true,
            _ => {}
        }
    }
    records.into_values().collect()
}

/// The critical directives that block completing a phase.
pub fn phase_blockers(records: &[PhaseRecord], fold: &Fold) -> Vec<Blocker> {
    let mut out = Vec::new();
    for r in records.iter().filter(|r| r.critical && !r.overridden) {
        let unremediated = fold
            .loop_state(&r.id)
            .is_some_and(crate::fold::LoopState::unremediated);
        let reason = match (&r.terminal, unremediated) {
            (_, true) => "violation with no later applied or verified outcome",
            (None, false) => {
                "no terminal outcome (applied, verified, or ignored/n_a with a reason)"
            }
            (Some(_), false) => continue,
        };
        out.push(Blocker {
            id: r.id.clone(),
            reason: reason.into(),
        });
    }
    out
}

/// Has the phase been recorded as complete?
pub fn phase_completed<'a>(events: &'a [Event], phase: &str) -> Option<&'a Event> {
    events
        .iter()
        .rev()
        .find(|e| e.kind == "phase" && str_field(e, "phase") == Some(phase))
}

/// `escalation` events for the open episodes that no event records yet:
/// the command that recorded the violations appends them. `declared`
/// gives a directive's declared priority and enforcement (for the `from`
/// part) when it is known.
pub fn escalations_due(
    store: &Store,
    fold: &Fold,
    declared: impl Fn(&str) -> Option<(Priority, Enforcement)>,
) -> Vec<Event> {
    let mut out = Vec::new();
    for (id, state) in fold.loop_states() {
        let Some(ep) = state.open() else { continue };
        if ep.recorded {
            continue;
        }
        let declared = declared(id);
        // Already critical + enforce: escalating changes nothing, and an
        // event (and a warning) would only leave a human an episode to end.
        if declared == Some((Priority::Critical, Enforcement::Enforce)) {
            continue;
        }
        let from = declared.map(|(priority, enforcement)| {
            serde_json::json!({
                "priority": priority,
                "enforcement": enforcement,
            })
        });
        let violations: Vec<String> = ep
            .violations
            .iter()
            .map(|k| crate::event::id_of_key(*k))
            .collect();
        let mut e = store
            .event("escalation")
            .with("from", from.unwrap_or(Value::Null))
            .with(
                "to",
                serde_json::json!({"priority": "critical", "enforcement": "enforce"}),
            )
            .with(
                "reason",
                "violated on 2 occasions within 30 days".to_owned(),
            )
            .with("violations", violations)
            .with("episode", state.open_key(id).unwrap_or_default());
        e.directive = Some(id.to_owned());
        out.push(e);
    }
    out
}

/// The branch a checked change is on, as a full ref name: HEAD's branch for
/// a staged or working-tree change (and for a range or commit whose tip is
/// `HEAD`), the branch a range's or commit's tip names otherwise. During a
/// rebase, HEAD is detached but git knows the branch being rebased (`git
/// status` names it): a commit made then is on that branch. `None` on
/// another detached HEAD or a tip that is not a branch name (`HEAD~2`, an
/// id): a check there is on no branch, and its violations are remediated
/// only by an applied ack or a verified verdict.
pub fn checked_branch(
    repo: &gix::Repository,
    selection: &crate::change::Selection,
) -> Option<String> {
    use crate::change::Selection;
    let tip = match selection {
        Selection::Staged | Selection::Worktree => "HEAD",
        Selection::Range { to, .. } if to.is_empty() => "HEAD",
        Selection::Range { to, .. } => to,
        Selection::Commit(c) => c,
    };
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
pub fn tip_time(repo: &gix::Repository, selection: &crate::change::Selection) -> Option<i64> {
    use crate::change::Selection;
    let tip = match selection {
        Selection::Staged | Selection::Worktree => return None,
        Selection::Range { to, .. } if to.is_empty() => "HEAD",
        Selection::Range { to, .. } => to,
        Selection::Commit(c) => c,
    };
    let commit = repo
        .rev_parse_single(tip)
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
            && line.data.get("change") == e.data.get("change")
            && line.data.get("branch") == e.data.get("branch")
            && self.after.is_none_or(|after| {
                line.ts_millis()
                    .is_some_and(|ts| (ts, crate::event::id_key(&line.id)) > after)
            })
    }
}

/// The events a recorded check appends: one `check` failure per failing
/// directive not recorded for this change since its last remediation, and
/// one `check_passed` per passing directive that has a check violation on
/// `branch` no later outcome has remediated — a pass is recorded only where
/// it clears something, so passing commits do not fill the log. A committed
/// change (`tip`: when its tip was made, see [`tip_time`]) made before that
/// violation was recorded is no fix of it: checking an older commit that
/// passes must not clear a change blocked since.
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
                let failed: Vec<&str> = r
                    .predicates
                    .iter()
                    .filter(|p| p.outcome == Outcome::Fail)
                    .map(|p| p.predicate)
                    .collect();
                (
                    store
                        .event("check")
                        .with("outcome", "fail")
                        .with("change", report.fingerprint.clone())
                        .with("selection", report.change.clone())
                        .with("enforcement", r.enforcement.as_str())
                        .with("predicates", failed),
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
                let e = store
                    .event("check_passed")
                    .with("change", report.fingerprint.clone())
                    .with("selection", report.change.clone());
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
        let mut e = match branch {
            Some(b) => e.with("branch", b),
            None => e,
        };
        e.directive = Some(r.id.to_owned());
        records.push(CheckRecord { event: e, after });
    }
    records
}
