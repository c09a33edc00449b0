//! `git swarm hive report`: what a project's event log says of a hive's
//! directives, written back into the hive, so that its owners see which
//! lessons work across projects (docs/hive.md).
//!
//! A report is events, not a file of totals: one `hive_report` event per
//! hive directive with any signal, appended to the hive's own log on a
//! branch of the project's (`reports/<project>`), which the owners merge
//! like any change. Event lines merge with `merge=union`, so the reports
//! of many projects meet in the hive's log without a conflict, and a
//! project that reports again adds a dated set: `stats` in the hive takes
//! each project's latest.

use std::collections::{BTreeMap, HashMap};

use crate::config::HiveSubscription;
use crate::error::{Error, Result};
use crate::event::{Body, Event, Kind};
use crate::fold::{EventHead, Fold};
use crate::store::Store;

use super::branch::{HiveWrite, check_branch_name};

/// What a project's log says of one directive.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Signals {
    /// Delegations that showed it (a tool call's lessons are not one).
    pub shown: u64,
    /// Delegations whose latest ack of it is `applied`.
    pub applied: u64,
    /// Violations, as escalation counts them (recorded check failures,
    /// `violated` acks and verdicts, unacknowledged criticals…).
    pub violated: u64,
    /// Tool calls its guard refused.
    pub prevented: u64,
}

impl Signals {
    /// Whether the log says anything of it.
    pub fn any(&self) -> bool {
        self.shown + self.applied + self.violated + self.prevented > 0
    }
}

/// The signals of every directive the log names, by id. `events` is the
/// de-duplicated log in (time, id) order, as
/// [`crate::directive_loop::records::read_log`] reads it: violations come
/// from the same [`Fold`] that escalates, and acks are counted as `stats`
/// counts them (the latest ack of a delegation stands).
pub fn signals(events: &[Event]) -> BTreeMap<String, Signals> {
    let mut out: BTreeMap<String, Signals> = BTreeMap::new();
    let mut fold = Fold::default();
    let mut acks: HashMap<(&str, &str), bool> = HashMap::new();
    for e in events {
        if let Some(head) = serde_json::to_vec(e)
            .ok()
            .and_then(|b| EventHead::parse(&b))
        {
            fold.apply(&head);
        }
        match e.known_kind() {
            Some(Kind::Shown) if !e.data.contains_key("call") => {
                let mut ids: Vec<String> = e
                    .shown_entries()
                    .unwrap_or_default()
                    .into_iter()
                    .map(|s| s.id)
                    .collect();
                ids.sort();
                ids.dedup();
                for id in ids {
                    out.entry(id).or_default().shown += 1;
                }
            }
            Some(Kind::Ack) => {
                if let (Some(d), Some(id), Some(status)) = (
                    e.str_field("delegation"),
                    e.directive.as_deref(),
                    e.str_field("status"),
                ) {
                    acks.insert((d, id), status == "applied");
                }
            }
            Some(Kind::Prevented) => {
                if let Some(id) = &e.directive {
                    out.entry(id.clone()).or_default().prevented += 1;
                }
            }
            _ => {}
        }
    }
    for ((_, id), applied) in acks {
        if applied {
            out.entry(id.to_owned()).or_default().applied += 1;
        }
    }
    for (id, state) in fold.loop_states() {
        if state.violations > 0 {
            out.entry(id.to_owned()).or_default().violated = state.violations;
        }
    }
    out
}

/// The `hive_report` events of this project about the directives of the
/// hive `sub` at its pinned revision: one per directive with a signal or
/// switched off here. A directive of the project's own with the same id
/// wins over the hive's, so its signals are not the hive's and are left out.
pub fn report_events(
    store: &Store,
    sub: &HiveSubscription,
    project: &str,
    events: &[Event],
) -> Vec<Event> {
    let signals = signals(events);
    let dir = super::pinned_dir(&store.common_dir, &sub.name, &sub.rev);
    let mut ids: Vec<String> = crate::safe_fs::names_ending(&dir, ".toml")
        .unwrap_or_default()
        .into_iter()
        .take(super::MAX_DIRECTIVES)
        .filter_map(|f| f.strip_suffix(".toml").map(str::to_owned))
        .chain(sub.off.keys().cloned())
        .filter(|id| crate::directive::is_valid_id(id))
        .collect();
    ids.sort();
    ids.dedup();
    ids.into_iter()
        .filter(|id| {
            store
                .directives_dir()
                .join(format!("{id}.toml"))
                .symlink_metadata()
                .is_err()
        })
        .filter_map(|id| {
            let s = signals.get(&id).copied().unwrap_or_default();
            let reason = sub.off.get(&id).cloned();
            (s.any() || reason.is_some()).then(|| {
                store
                    .event(Body::HiveReport {
                        project: project.to_owned(),
                        shown: s.shown,
                        applied: s.applied,
                        violated: s.violated,
                        prevented: s.prevented,
                        switched_off: reason.is_some(),
                        reason,
                    })
                    .about(id)
            })
        })
        .collect()
}

/// Where a report went.
#[derive(Debug, Clone)]
pub struct Reported {
    /// The hive's branch, `reports/<project>`.
    pub branch: String,
    /// The commit pushed there.
    pub commit: String,
    /// Whether the branch was made by this report (from the hive's head).
    pub created: bool,
    /// The event files appended to, relative to the hive's root.
    pub files: Vec<String>,
    /// The `hive_report` events written.
    pub events: Vec<Event>,
}

/// The hive branch a project's reports go to.
pub fn branch_name(project: &str) -> String {
    format!("reports/{project}")
}

/// Reports this project's signals about the directives of the hive `sub`
/// (see [`report_events`]): fetches the hive, then appends the events to
/// its log on its branch `reports/<project>` (made from the hive's head
/// when missing), as one commit by the user, pushed to the hive. `log` is
/// the project's event log; `head_commit` its current commit. `None` when
/// there is nothing to report (nothing is pushed).
pub fn report(
    store: &Store,
    review: &crate::reviewed::Review,
    sub: &HiveSubscription,
    project: &str,
    head_commit: Option<&str>,
    log: &[Event],
) -> Result<Option<Reported>> {
    let hive = HiveWrite::open(store, review, sub)?;
    super::materialize(&store.common_dir, &sub.name, &sub.rev)?;
    let events = report_events(store, sub, project, log);
    if events.is_empty() {
        return Ok(None);
    }
    let branch = branch_name(project);
    check_branch_name(&branch)?;
    let tip = hive.remote_branch(&branch)?;
    let created = tip.is_none();
    let base = tip.clone().unwrap_or_else(|| hive.head.clone());
    let mut by_month: BTreeMap<String, String> = BTreeMap::new();
    for e in &events {
        let month = e.month_file().ok_or_else(|| Error::InvalidEvent {
            message: format!("event {} has no time to file it by", e.id),
        })?;
        by_month.entry(month).or_default().push_str(&e.to_line());
    }
    let limit = store.config.events.max_file_bytes;
    let mut files = Vec::new();
    for (month, lines) in by_month {
        let rel = format!(".swarm/events/{month}");
        let mut bytes = hive.read_file(&base, &rel, limit)?.unwrap_or_default();
        if !bytes.is_empty() && !bytes.ends_with(b"\n") {
            bytes.push(b'\n');
        }
        bytes.extend_from_slice(lines.as_bytes());
        if bytes.len() as u64 > limit {
            return Err(Error::usage(
                format!(
                    "{rel} of hive `{}` would grow past {limit} bytes on {branch}",
                    sub.name
                ),
                "ask the hive's owners to merge the reports, then report again",
            ));
        }
        files.push((rel, bytes));
    }
    let count = events.len();
    let at = head_commit.map_or_else(String::new, |c| format!(" at {}", super::short(c)));
    let message = format!(
        "Signals of {project} about {count} directive{} of this hive\n\n\
         One `hive_report` event per directive, from the event log of \
         {project}{at}: the delegations that showed it, those that applied it, \
         its violations, the tool calls its guard refused, and whether the \
         project switched it off and why. Merged, `git swarm stats` shows \
         them under \"Reported by projects\".\n\n(git swarm hive report)\n",
        if count == 1 { "" } else { "s" }
    );
    let commit = hive.commit(&base, &files, &message)?;
    hive.push(&commit, &branch, tip.as_deref())?;
    Ok(Some(Reported {
        branch,
        commit,
        created,
        files: files.into_iter().map(|(rel, _)| rel).collect(),
        events,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(line: &str) -> Event {
        serde_json::from_str(line).expect("valid test input")
    }

    #[test]
    fn signals_count_delegations_latest_acks_violations_and_refusals() {
        let log = [
            r#"{"id":"01KAAAAAAAAAAAAAAAAAAAAA01","ts":"2026-11-01T00:00:00.000Z","kind":"shown","directives":["ab","cd"],"shown":[{"id":"ab","priority":"high"},{"id":"cd","priority":"low"}],"tools":[]}"#,
            r#"{"id":"01KAAAAAAAAAAAAAAAAAAAAA02","ts":"2026-11-01T00:01:00.000Z","kind":"ack","directive":"ab","delegation":"01KAAAAAAAAAAAAAAAAAAAAA01","status":"applied"}"#,
            r#"{"id":"01KAAAAAAAAAAAAAAAAAAAAA03","ts":"2026-11-01T00:02:00.000Z","kind":"ack","directive":"cd","delegation":"01KAAAAAAAAAAAAAAAAAAAAA01","status":"applied"}"#,
            r#"{"id":"01KAAAAAAAAAAAAAAAAAAAAA04","ts":"2026-11-01T00:03:00.000Z","kind":"ack","directive":"cd","delegation":"01KAAAAAAAAAAAAAAAAAAAAA01","status":"violated"}"#,
            r#"{"id":"01KAAAAAAAAAAAAAAAAAAAAA05","ts":"2026-11-02T00:00:00.000Z","kind":"shown","directives":["ab"],"shown":[{"id":"ab","priority":"high"}],"tools":[],"call":"c1"}"#,
            r#"{"id":"01KAAAAAAAAAAAAAAAAAAAAA06","ts":"2026-11-02T00:00:01.000Z","kind":"prevented","directive":"ab","tool":"Bash","predicates":[],"harness":"claude-code"}"#,
        ]
        .map(event);
        let s = signals(&log);
        assert_eq!(
            s["ab"],
            Signals {
                shown: 1,
                applied: 1,
                violated: 0,
                prevented: 1
            }
        );
        assert_eq!(
            s["cd"],
            Signals {
                shown: 1,
                applied: 0,
                violated: 1,
                prevented: 0
            }
        );
    }
}
