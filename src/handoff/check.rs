//! `handoff check`: what git says the task's change touched, held against
//! the contract — every touched path owned, no read-only path touched, every
//! dependency completed, every machine-checkable criterion met.

use serde::Serialize;

use crate::change::Change;
use crate::check::{Candidate, CheckDirective, Outcome, ToolRunner, Warning};
use crate::directive::{Directive, Enforcement, Priority, Status};
use crate::error::Result;
use crate::event::{Body, Event};
use crate::pathglob::PathGlob;
use crate::predicate::Predicate;
use crate::store::Store;

use super::{Handoff, Standing, standing};

/// The criterion prefixes that name a command: `Tests pass: cargo test`
/// runs `cargo test` as the predicate `tool:cargo test`. Only these two, so
/// that a prose criterion with a colon is never run as a program.
pub const COMMAND_PREFIXES: &[&str] = &["Tests pass:", "Type check passes:"];

/// What git-swarm itself writes while tasks are handed out and worked on:
/// the event log's files, and handoff files a coordinator adds beside the
/// work. Nothing else under `.swarm/` is exempt from scope: a handoff that
/// was there before the change is a contract the change may not touch.
enum Coordination {
    /// An event log file: exempt.
    Log,
    /// A handoff file the change adds: exempt.
    NewHandoff,
    /// A handoff file that was there before: changing it is `contract_edited`.
    Contract,
    /// Any other path: held against `owns` and `readonly`.
    Work,
}

/// Is `path` `dir` + a single file name ending in `ext`?
fn flat_in(path: &str, dir: &str, ext: &str) -> bool {
    path.strip_prefix(dir)
        .is_some_and(|name| !name.contains('/') && name.ends_with(ext) && name.len() > ext.len())
}

fn coordination(path: &str, f: &crate::change::ChangedFile) -> Coordination {
    use crate::change::FileStatus;
    if flat_in(path, ".swarm/events/", ".jsonl") {
        return Coordination::Log;
    }
    if flat_in(path, ".swarm/handoffs/", ".toml") {
        // The new side of an addition, copy or rename is a new file; a
        // deletion, an edit or the old side of a rename changes one there.
        let added = f.path == path
            && matches!(
                f.status,
                FileStatus::Added | FileStatus::Copied | FileStatus::Renamed
            );
        return if added {
            Coordination::NewHandoff
        } else {
            Coordination::Contract
        };
    }
    Coordination::Work
}

/// The kinds a worker's change may not add to the log: they decide where a
/// handoff stands, whether a dependency is done, and what escalates.
const DECIDING_KINDS: &[&str] = &[
    "handoff_created",
    "handoff_completed",
    "handoff_review",
    "handoff_released",
    "escalation",
    "deescalation",
    "override",
];

/// The log is append-only and standing is folded from it: in the task's
/// change an event file may only gain lines, and none of a kind that
/// decides (a forged `handoff_completed` for a dependency, a removed
/// `needs_changes`). Each offending line is a `log_edited` violation.
fn log_edits(
    repo: &gix::Repository,
    f: &crate::change::ChangedFile,
    path: &str,
    new_tasks: &[String],
    out: &mut Vec<Violation>,
) -> Result<()> {
    // The old side of a rename is the path that lost its lines.
    let (old, new) = if f.path == path {
        (&f.old, &f.new)
    } else {
        (&f.old, &crate::change::Content::Absent)
    };
    let end = f.end_id(repo, path.into());
    let old = crate::change::content(repo, old)?.unwrap_or_default();
    let new = crate::change::content(repo, new)?.unwrap_or_default();
    let mut at = |line: u32, detail: String| {
        out.push(Violation {
            violation: "log_edited",
            path: Some(path.to_owned()),
            line: Some(line),
            task: None,
            criterion: None,
            detail: Some(detail),
            end: Some(end.clone()),
        })
    };
    for line in crate::change::removed_lines(&old, &new) {
        at(line, "a recorded event removed or changed".into());
    }
    for added in crate::change::added_lines(&old, &new) {
        let Ok(event) = serde_json::from_slice::<serde_json::Value>(&added.text) else {
            continue;
        };
        let field = |name: &str| event.get(name).and_then(|k| k.as_str());
        let Some(kind) = field("kind").filter(|k| DECIDING_KINDS.contains(k)) else {
            continue;
        };
        let beside_its_file = kind == "handoff_created"
            && field("task").is_some_and(|t| new_tasks.iter().any(|n| n == t));
        if !beside_its_file {
            at(added.line, format!("adds a `{kind}` event"));
        }
    }
    Ok(())
}

/// The predicate a criterion is checked by, if a machine can check it:
/// `Tests pass: CMD` and `Type check passes: CMD` become `tool:CMD`, a
/// predicate string is itself; anything else is prose, for a reviewer.
pub fn criterion_predicate(criterion: &str) -> Option<String> {
    for prefix in COMMAND_PREFIXES {
        if let Some(cmd) = criterion.strip_prefix(prefix) {
            return Some(format!("tool:{}", cmd.trim()));
        }
    }
    match Predicate::parse(criterion) {
        Ok(_) => Some(criterion.to_owned()),
        // A known kind written wrong is a criterion that cannot pass, not prose.
        Err(e)
            if !e.message.starts_with("unknown predicate kind")
                && !e.message.ends_with("has no kind") =>
        {
            Some(criterion.to_owned())
        }
        Err(_) => None,
    }
}

/// One thing the change broke.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Violation {
    /// `scope_creep`, `readonly_touched`, `contract_edited`, `dependency_open`
    /// or `criterion_failed`.
    pub violation: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The line of `path` for `log_edited`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// The dependency's task for `dependency_open`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub criterion: Option<String>,
    /// Why a criterion failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// What the offending path holds at the end of the change (its blob
    /// id, `-` when gone): with the path, the offence a violation is
    /// recorded and counted once for.
    #[serde(skip)]
    pub end: Option<String>,
}

impl Violation {
    /// What makes two records of a violation one offence: the path and
    /// what it holds at the end of the change (the same edit seen on a
    /// later change, or by another command, is the same offence), the
    /// log line, the criterion, or the dependency.
    pub fn offence(&self) -> String {
        let mut key = match (&self.path, &self.criterion, &self.task) {
            (Some(p), ..) => p.clone(),
            (_, Some(c), _) => c.clone(),
            (_, _, Some(t)) => t.clone(),
            _ => String::new(),
        };
        if let Some(l) = self.line {
            key.push_str(&format!(":{l}"));
        }
        if let Some(end) = &self.end {
            key.push('@');
            key.push_str(end);
        }
        key
    }
}

impl Violation {
    fn at(violation: &'static str, path: &str) -> Violation {
        Violation {
            violation,
            path: Some(path.to_owned()),
            line: None,
            task: None,
            criterion: None,
            detail: None,
            end: None,
        }
    }

    fn ending(mut self, end: String) -> Violation {
        self.end = Some(end);
        self
    }

    /// The one line a person reads: `scope_creep src/db/x.rs`.
    pub fn line(&self) -> String {
        match (self.violation, &self.path, &self.task, &self.criterion) {
            (v, Some(p), _, _) => match (self.line, &self.detail) {
                (Some(l), Some(d)) => format!("{v} {p}:{l}: {d}"),
                _ => format!("{v} {p}"),
            },
            (v, _, Some(t), _) => format!("{v} {t}"),
            (v, _, _, Some(c)) => match &self.detail {
                Some(d) => format!("{v} {c}: {d}"),
                None => format!("{v} {c}"),
            },
            (v, ..) => v.to_owned(),
        }
    }
}

/// What one check of a handoff found.
#[derive(Debug, Clone, Serialize)]
pub struct Checked {
    pub task: String,
    /// The change checked, as `check` names it (`A..B`, `staged`, `worktree`).
    pub change: String,
    /// Identifies the change's content: violations are recorded once per change.
    pub fingerprint: String,
    /// Paths git says the change touched (both sides of a rename).
    pub touched: usize,
    pub ok: bool,
    pub violations: Vec<Violation>,
    /// Criteria a machine checked and found met.
    pub met: Vec<String>,
    /// Prose criteria: for a reviewer.
    pub not_machine_checked: Vec<String>,
    #[serde(skip)]
    pub warnings: Vec<Warning>,
}

/// Checks `change` against `h`'s contract. Criteria run through `tools`
/// (the caller's sandboxed runner: allowlist, trust, time limit). `edited`:
/// the handoff file differs from the digest `handoff create` recorded
/// ([`super::edited`]), a `contract_edited` violation.
pub fn check(
    repo: &gix::Repository,
    change: &Change,
    h: &Handoff,
    edited: bool,
    log: &[Event],
    max_attempts: u32,
    tools: &dyn ToolRunner,
) -> Result<Checked> {
    let c = &h.contract;
    let globs = |list: &[String]| -> Vec<PathGlob> {
        // Validated when the file was read.
        list.iter()
            .filter_map(|g| PathGlob::parse(g).ok())
            .collect()
    };
    let (owns, readonly) = (globs(&c.owns), globs(&c.readonly));
    let mut violations = Vec::new();
    let file = format!(".swarm/handoffs/{}.toml", h.task);
    if edited {
        violations.push(Violation::at("contract_edited", &file));
    }
    // The tasks whose handoff files the change adds: their creation may be
    // recorded beside them (a coordinator committing `handoff create`).
    let new_tasks: Vec<String> = change
        .files
        .iter()
        .flat_map(|f| f.paths().map(move |p| (f, p.to_string())))
        .filter(|(f, p)| matches!(coordination(p, f), Coordination::NewHandoff))
        .filter_map(|(_, p)| {
            p.strip_prefix(".swarm/handoffs/")
                .and_then(|n| n.strip_suffix(".toml"))
                .map(str::to_owned)
        })
        .collect();
    let mut touched: Vec<String> = Vec::new();
    for f in &change.files {
        for p in f.paths() {
            let path = p.to_string();
            match coordination(&path, f) {
                Coordination::Log => {
                    log_edits(repo, f, &path, &new_tasks, &mut violations)?;
                    continue;
                }
                Coordination::NewHandoff => continue,
                Coordination::Contract => violations
                    .push(Violation::at("contract_edited", &path).ending(f.end_id(repo, p))),
                Coordination::Work => {
                    if readonly.iter().any(|g| g.is_match(&path)) {
                        violations.push(
                            Violation::at("readonly_touched", &path).ending(f.end_id(repo, p)),
                        );
                    } else if !owns.iter().any(|g| g.is_match(&path)) {
                        violations
                            .push(Violation::at("scope_creep", &path).ending(f.end_id(repo, p)));
                    }
                }
            }
            touched.push(path);
        }
    }
    touched.sort();
    touched.dedup();
    violations.sort_by(|a, b| (&a.path, a.violation).cmp(&(&b.path, b.violation)));
    violations.dedup();
    for d in &c.depends {
        if standing(d, log, max_attempts) != Standing::Completed {
            violations.push(Violation {
                violation: "dependency_open",
                path: None,
                line: None,
                task: Some(d.clone()),
                criterion: None,
                detail: None,
                end: None,
            });
        }
    }
    let mut machine: Vec<(String, String)> = Vec::new();
    let mut not_machine_checked = Vec::new();
    for criterion in &c.criteria {
        match criterion_predicate(criterion) {
            Some(p) => machine.push((criterion.clone(), p)),
            None => not_machine_checked.push(criterion.clone()),
        }
    }
    // Each criterion is a directive of one predicate to `check::evaluate`:
    // the same predicates, runner and limits as `check`, no second evaluator.
    let directives: Vec<CheckDirective<'_>> = machine
        .iter()
        .map(|(criterion, predicate)| CheckDirective {
            id: &h.task,
            lesson: criterion,
            status: Status::Active,
            priority: Priority::High,
            enforcement: Enforcement::Enforce,
            paths: Box::new([]),
            verify: Box::new([predicate.as_str()]),
        })
        .collect();
    let candidates: Vec<Candidate<'_>> = directives
        .iter()
        .map(|d| Candidate {
            directive: d,
            path: &file,
            enforcement: d.enforcement,
            priority: d.priority,
            gated: false,
        })
        .collect();
    let report = crate::check::evaluate(repo, change, &candidates, tools)?;
    let mut met = Vec::new();
    for r in &report.results {
        let why = r
            .predicates
            .iter()
            .find(|p| matches!(p.outcome, Outcome::Fail | Outcome::Error))
            .and_then(|p| p.message.clone());
        match r.outcome {
            Outcome::Pass => met.push(r.lesson.to_owned()),
            Outcome::Fail | Outcome::Error => violations.push(Violation {
                violation: "criterion_failed",
                path: None,
                line: None,
                task: None,
                criterion: Some(r.lesson.to_owned()),
                detail: Some(why.unwrap_or_else(|| "failed".into())),
                end: None,
            }),
            // A criterion not run (tool criteria not trusted, an empty
            // change) is not met: the work cannot be called done on it.
            Outcome::NotApplicable | Outcome::Skipped => violations.push(Violation {
                violation: "criterion_failed",
                path: None,
                line: None,
                task: None,
                criterion: Some(r.lesson.to_owned()),
                detail: Some(
                    r.predicates
                        .iter()
                        .find_map(|p| p.message.clone())
                        .or(r.reason.map(str::to_owned))
                        .unwrap_or_else(|| "not run".into()),
                ),
                end: None,
            }),
        }
    }
    Ok(Checked {
        task: h.task.clone(),
        change: report.change,
        fingerprint: report.fingerprint,
        touched: touched.len(),
        ok: violations.is_empty(),
        violations,
        met,
        not_machine_checked,
        warnings: report.warnings,
    })
}

/// The events a check records: one `handoff_checked`, one
/// `handoff_violation` per violation, and a copy of a path's violation for
/// each active directive whose `paths` cover that path (its envelope's
/// `directive` set), which the directive loop counts as a violation of it.
pub fn events(store: &Store, checked: &Checked, directives: &[&Directive]) -> Vec<Event> {
    let mut out = vec![store.event(Body::HandoffChecked {
        task: checked.task.clone(),
        ok: checked.ok,
        range: checked.change.clone(),
        violations: checked.violations.len() as u32,
    })];
    for v in &checked.violations {
        // A fresh event (and id) for each copy.
        let event = || {
            store.event(Body::HandoffViolation {
                task: checked.task.clone(),
                violation: v.violation.to_owned(),
                path: v.path.clone(),
                criterion: v.criterion.clone(),
                detail: match (v.line, &v.detail) {
                    (Some(l), Some(d)) => Some(format!("line {l}: {d}")),
                    _ => v.detail.clone().or_else(|| v.task.clone()),
                },
                change: Some(v.offence()),
            })
        };
        if let Some(path) = &v.path
            && matches!(v.violation, "scope_creep" | "readonly_touched")
        {
            for d in directives.iter().filter(|d| {
                d.status == Status::Active
                    && !d.paths.is_empty()
                    && d.paths
                        .iter()
                        .filter_map(|g| PathGlob::parse(g).ok())
                        .any(|g| g.is_match(path))
            }) {
                out.push(event().about(d.id.clone()));
            }
        }
        out.push(event());
    }
    out
}

/// Is `line` (a recorded event) the record of `e`: the same violation of
/// the same task, the same offence ([`Violation::offence`]), seen by the
/// same directive? Re-running a check, or checking a later change that
/// leaves the offending path as it was, then records nothing new.
pub fn same_violation(e: &Event, line: &Event) -> bool {
    // A criterion's detail (a tool's output) may differ run to run.
    // An open dependency's detail is the dependency; a log edit's, its line.
    let dependency = matches!(
        e.str_field("violation"),
        Some("dependency_open" | "log_edited")
    );
    let fields: &[&str] = if dependency {
        &["task", "violation", "path", "detail", "change"]
    } else {
        &["task", "violation", "path", "criterion", "change"]
    };
    line.kind == e.kind
        && line.directive == e.directive
        && fields.iter().all(|f| line.data.get(*f) == e.data.get(*f))
}

/// The `tool:` predicates the criteria of `handoffs` run, named by task:
/// one set, trusted by `git swarm trust` beside the directives' own, so
/// that a command in a handoff someone committed never runs unread.
pub fn tool_criteria(handoffs: &[Handoff]) -> Vec<crate::trust::ToolPredicate> {
    let pairs: Vec<(&str, String)> = handoffs
        .iter()
        .flat_map(|h| {
            h.contract
                .criteria
                .iter()
                .filter_map(|c| criterion_predicate(c))
                .map(|p| (h.task.as_str(), p))
        })
        .collect();
    crate::trust::tool_predicates(pairs.iter().map(|(t, p)| (*t, p.as_str())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_two_prefixes_and_predicate_strings_are_machine_checked() {
        let p = |c: &str| criterion_predicate(c);
        assert_eq!(
            p("Tests pass: cargo test").as_deref(),
            Some("tool:cargo test")
        );
        assert_eq!(
            p("Type check passes:  tsc --noEmit").as_deref(),
            Some("tool:tsc --noEmit")
        );
        assert_eq!(
            p("grep:dbg!:src/**/*.rs").as_deref(),
            Some("grep:dbg!:src/**/*.rs")
        );
        // A known kind written wrong fails as a criterion rather than pass as prose.
        assert_eq!(p("tool:./run.sh").as_deref(), Some("tool:./run.sh"));
        assert_eq!(p("Lint passes: cargo clippy"), None);
        assert_eq!(p("The login page shows an error"), None);
        assert_eq!(p("Note: keep it short"), None);
    }
}
