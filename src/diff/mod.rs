//! `git swarm diff`: the semantic change of `.swarm/` between two
//! revisions — what a reviewer wants to read instead of raw TOML and JSONL.
//!
//! Both sides are listed by blob id (a tree, or the working tree hashed as
//! `git add` would), so that only the files that differ are parsed; the
//! event logs of both sides are folded, since the effective state of a
//! directive depends on its whole history. Everything is sorted by id and
//! nothing depends on the clock: the same two revisions give the same report.

pub mod directives;
pub mod events;
pub mod files;
pub mod side;

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Serialize;

use directives::Which;
pub use directives::{DirectiveChange, DirectiveChangeKind, FieldChange, FieldDiff, WordOp, Words};
pub use files::{
    ConfigChange, HandoffChange, HandoffChangeKind, ProposalChange, ProposalChangeKind,
    QuarantineChange, QuarantineChangeKind,
};
use side::{Side, Source};

use crate::config::Config;
use crate::error::{Error, Result};
use crate::event::{Kind, Level};
use crate::problem::Problem;

/// Which two snapshots of `.swarm/` to compare, as `git diff` takes them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Revisions {
    /// `A..B` (A's tree against B's), or `A...B` (their merge base against B).
    Range {
        from: String,
        to: String,
        symmetric: bool,
    },
    /// One revision against the working tree.
    Worktree(String),
    /// The merge base of HEAD and its upstream against the working tree.
    Upstream,
}

impl Revisions {
    /// Reads the argument as `git diff` does: `A..B`, `A...B` or a single `A`.
    pub fn parse(spec: &str) -> Result<Revisions> {
        if spec.contains("..") {
            match crate::change::Selection::range(spec)? {
                crate::change::Selection::Range {
                    from,
                    to,
                    symmetric,
                } => Ok(Revisions::Range {
                    from,
                    to,
                    symmetric,
                }),
                _ => Err(Error::usage(
                    format!("`{spec}` is not a range"),
                    "write A..B or A...B",
                )),
            }
        } else {
            Ok(Revisions::Worktree(spec.to_owned()))
        }
    }
}

/// The whole report.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(title = "git-swarm diff report")]
pub struct Report {
    pub from: Revision,
    pub to: Revision,
    pub summary: Summary,
    pub directives: Vec<DirectiveChange>,
    pub effective: Vec<EffectiveChange>,
    pub signals: Vec<Signals>,
    pub patterns: Vec<PatternChange>,
    pub quarantine: Vec<QuarantineChange>,
    pub proposals: Vec<ProposalChange>,
    pub handoffs: Vec<HandoffChange>,
    pub config: Vec<ConfigChange>,
    /// Events the old side has and the new one lacks: the log is
    /// append-only, so these were removed or rewritten by hand.
    pub missing_events: Vec<EventRef>,
    /// Paths below `.swarm/` that git-swarm does not read, added, removed
    /// or changed (`.gitattributes`, `README.md`, `local/…`): review them as code.
    pub other_files: Vec<OtherFile>,
    /// How the revisions were chosen, when that is worth saying (no upstream).
    pub notes: Vec<String>,
    /// Files that could not be read, malformed event lines, links skipped.
    pub problems: Vec<ProblemRef>,
    /// The hives whose pin moved, added or removed in `config.toml`, each
    /// with what the move changes in the hive (docs/hive.md).
    pub hives: Vec<HiveMove>,
}

/// A subscribed hive whose pin differs between the sides.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct HiveMove {
    pub name: String,
    /// The pinned commit on each side (none: not subscribed there).
    pub from: Option<String>,
    pub to: Option<String>,
    /// The hive's own knowledge diff between the two pins, read from its
    /// mirror in the git dir, when that has them.
    pub report: Option<Box<Report>>,
    /// Why there is no report.
    pub note: Option<String>,
}

/// One side of the diff.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Revision {
    /// As named (`main`, `HEAD`, the merge base of …), or `working tree`.
    pub name: String,
    /// The commit, when the side is one.
    pub commit: Option<String>,
}

/// Counts of everything below, for a one-line summary.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Summary {
    pub directives_added: usize,
    pub directives_removed: usize,
    pub directives_renamed: usize,
    pub directives_retired: usize,
    pub directives_reactivated: usize,
    pub directives_edited: usize,
    pub escalated: usize,
    pub deescalated: usize,
    pub overrides: usize,
    pub events_added: usize,
    pub violations: u64,
    pub acks: u64,
    pub verdicts: u64,
    /// Tool calls a guard refused (`prevented` events).
    pub prevented: u64,
    pub patterns_promoted: usize,
    pub patterns_deprecated: usize,
    pub quarantined: usize,
    pub unquarantined: usize,
    pub proposals_added: usize,
    pub proposals_decided: usize,
    pub handoffs_opened: usize,
    pub handoffs_completed: usize,
    pub config_keys: usize,
    pub missing_events: usize,
    pub other_files: usize,
    pub problems: usize,
}

/// A path below `.swarm/` git-swarm does not read, changed between the sides.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct OtherFile {
    /// From the repository's root (`.swarm/.gitattributes`).
    pub path: String,
    /// `added`, `removed` or `changed`.
    pub change: String,
}

/// The other paths of the two sides that differ, in path order.
fn other_files(old: &Side, new: &Side) -> Vec<OtherFile> {
    let mut out = Vec::new();
    for (path, id) in &new.others {
        match old.others.get(path) {
            None => out.push((path, "added")),
            Some(before) if before != id => out.push((path, "changed")),
            Some(_) => {}
        }
    }
    for path in old.others.keys() {
        if !new.others.contains_key(path) {
            out.push((path, "removed"));
        }
    }
    out.sort();
    out.into_iter()
        .map(|(path, change)| OtherFile {
            path: format!(".swarm/{path}"),
            change: change.to_owned(),
        })
        .collect()
}

/// A directive whose effective priority or enforcement changed, or about
/// which an escalation, deescalation or override was recorded.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct EffectiveChange {
    pub id: String,
    /// In force on each side (none: no directive there).
    pub from: Option<Level>,
    pub to: Option<Level>,
    /// Escalated (an open episode) on each side.
    pub escalated_from: bool,
    pub escalated_to: bool,
    pub causes: Vec<Cause>,
}

/// Why an effective state changed.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Cause {
    /// `escalation`, `deescalation`, `override`, `declared` (its file
    /// changed), `episode_opened` or `episode_ended` (the fold, with no
    /// event recorded yet).
    pub kind: String,
    /// The event, when one records it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub episode: Option<String>,
    /// The justification or reason given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The violations that opened an episode (event ids).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub violations: Vec<String>,
}

/// The learning signals recorded about one directive on the new side.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct Signals {
    pub id: String,
    /// Events that count as violations (check failures, violated acks and
    /// verdicts, unacknowledged criticals, handoff violations).
    pub violations: u64,
    /// Acks by status (`applied`, `ignored`, `n_a`, `violated`).
    pub acks: BTreeMap<String, u64>,
    /// Verdicts by outcome (`verified`, `violated`, `n_a`).
    pub verdicts: BTreeMap<String, u64>,
    /// Times shown to a delegate (or to an agent at a tool call).
    pub shown: u64,
    /// Agents' tool calls its guard refused: mistakes stopped before they happened.
    pub prevented: u64,
    /// Every event about it, by kind.
    pub kinds: BTreeMap<String, u64>,
}

/// A pattern promoted or deprecated by hand on the new side.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct PatternChange {
    pub id: String,
    /// `promoted` or `deprecated`.
    pub change: String,
    pub event: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The justification or reason given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// An event named in a report.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct EventRef {
    pub id: String,
    pub ts: String,
    pub kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub directive: Option<String>,
}

/// A problem, as JSON shows it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ProblemRef {
    pub path: String,
    pub line: Option<u32>,
    pub column: Option<u32>,
    /// `error` or `warning`.
    pub severity: String,
    pub code: String,
    pub message: String,
    pub hint: Option<String>,
}

impl From<&Problem> for ProblemRef {
    fn from(p: &Problem) -> Self {
        ProblemRef {
            path: p.path.clone(),
            line: p.line,
            column: p.column,
            severity: if p.is_error() { "error" } else { "warning" }.into(),
            code: p.code.clone(),
            message: p.message.clone(),
            hint: p.hint.clone(),
        }
    }
}

impl Report {
    /// Nothing changed in `.swarm/`.
    pub fn is_empty(&self) -> bool {
        self.summary == Summary::default()
    }
}

/// `f` over `items`, half on each core: each half gets its own gix handle
/// (one is not shared between threads). The results keep the items' order.
fn on_two_threads<I: Sync, T: Send>(
    repo: &gix::Repository,
    items: &[I],
    f: impl Fn(&gix::Repository, &I) -> Result<T> + Sync,
) -> Result<Vec<T>> {
    let run = |repo: &gix::Repository, items: &[I]| -> Result<Vec<T>> {
        items.iter().map(|item| f(repo, item)).collect()
    };
    let (first, second) = items.split_at(items.len() / 2);
    let (first, second) = std::thread::scope(|s| {
        let handle = (!first.is_empty()).then(|| {
            let other = repo.clone();
            let run = &run;
            s.spawn(move || run(&other, first))
        });
        let second = run(repo, second);
        (handle.map(|h| h.join()), second)
    });
    let mut out = match first {
        None => Vec::new(),
        Some(joined) => joined.map_err(|_| {
            Error::git("reading .swarm", std::io::Error::other("a reader panicked"))
        })??,
    };
    out.extend(second?);
    Ok(out)
}

/// The two sides resolved: what each is called and where its files are.
struct Sides {
    old: (Revision, Source),
    new: (Revision, Source),
    notes: Vec<String>,
}

/// Compares the `.swarm/` of two snapshots of the repository at `root`.
pub fn diff(
    repo: &gix::Repository,
    root: &std::path::Path,
    revisions: &Revisions,
) -> Result<Report> {
    diff_with(repo, root, revisions, true)
}

/// [`diff`]; with `hives`, the knowledge diff of each hive whose pin moved
/// (a hive's own diff does not follow its config's hives).
fn diff_with(
    repo: &gix::Repository,
    root: &std::path::Path,
    revisions: &Revisions,
    hives: bool,
) -> Result<Report> {
    let sides = resolve(repo, root, revisions)?;
    crate::trace::mark("revisions resolved");
    // The old side's limits bound every read: the new side is what is under review.
    let (old, new) = std::thread::scope(|s| {
        // A gix handle is not shared between threads: the reader gets its own.
        let other = repo.clone();
        let source = &sides.old.1;
        let old =
            s.spawn(move || Side::read(&other, source, Config::default().events.max_file_bytes));
        let new = Side::read(repo, &sides.new.1, Config::default().events.max_file_bytes);
        (old.join(), new)
    });
    let old =
        old.map_err(|_| Error::git("reading .swarm", std::io::Error::other("a reader panicked")))??;
    let new = new?;
    crate::trace::mark("sides listed");
    let config = side_config(repo, &old)?;
    let mut problems = Vec::new();
    for side in [&old, &new] {
        problems.extend(side.problems.iter().cloned());
    }
    let mut declared = directives::Declared::default();
    // Each side's folded log is kept in the git dir: a side seen before is not folded again.
    let cache = repo.git_dir().join("swarm").join("diff");
    // The logs and the directive files are read at once, each on a core.
    let (directives, logs) = std::thread::scope(|s| {
        let other = repo.clone();
        let (old, new, events) = (&old, &new, &config.events);
        let logs = s.spawn(move || events::read(&other, old, new, events, Some(&cache)));
        let directives = directives::compare(repo, old, new, &mut declared, &mut problems);
        (directives, logs.join())
    });
    let directives = directives?;
    crate::trace::mark("directives compared");
    let logs = logs
        .map_err(|_| Error::git("reading .swarm", std::io::Error::other("a reader panicked")))??;
    problems.extend(logs.problems.iter().cloned());
    crate::trace::mark("logs folded");
    let effective = effective(repo, (&old, &new), &mut declared, &directives, &logs)?;
    crate::trace::mark("effective states");
    let signals = signals(&logs);
    let patterns = patterns(&logs);
    let quarantine = files::quarantine(repo, &old, &new, &mut problems)?;
    let proposals = files::proposals(repo, &old, &new, &mut problems)?;
    let handoffs = files::handoffs(
        repo,
        &old,
        &new,
        &logs,
        config.handoffs.max_review_attempts,
        &mut problems,
    )?;
    let (config_changes, pins) = files::config(repo, &old, &new, &mut problems)?;
    crate::trace::mark("files compared");
    problems.sort_by(|a, b| {
        (&a.path, a.line, a.column, &a.message).cmp(&(&b.path, b.line, b.column, &b.message))
    });
    problems.dedup();
    let missing_events: Vec<EventRef> = logs
        .missing
        .iter()
        .filter_map(|logged| logged.event())
        .map(|e| EventRef {
            id: e.id,
            ts: e.ts,
            kind: e.kind,
            directive: e.directive,
        })
        .collect();
    let mut report = Report {
        from: sides.old.0,
        to: sides.new.0,
        summary: Summary::default(),
        directives,
        effective,
        signals,
        patterns,
        quarantine,
        proposals,
        handoffs,
        config: config_changes,
        missing_events,
        other_files: other_files(&old, &new),
        notes: sides.notes,
        problems: problems.iter().map(ProblemRef::from).collect(),
        hives: Vec::new(),
    };
    if hives {
        report.hives = hive_moves(repo, &pins);
    }
    let overrides = logs
        .added
        .iter()
        .filter(|logged| logged.head.known == Some(Kind::Override))
        .count();
    report.summary = summarise(&report, logs.added.len(), overrides);
    crate::trace::mark("report assembled");
    Ok(report)
}

/// The old side's settings (the defaults where it has none or they do not parse).
fn side_config(repo: &gix::Repository, side: &Side) -> Result<Config> {
    Ok(
        match side.bytes(repo, "config.toml", crate::store::CONFIG_MAX)? {
            Ok(bytes) if !bytes.is_empty() => match std::str::from_utf8(&bytes) {
                Ok(text) => Config::parse(text, ".swarm/config.toml").0,
                Err(_) => Config::default(),
            },
            _ => Config::default(),
        },
    )
}

fn summarise(r: &Report, events_added: usize, overrides: usize) -> Summary {
    let count = |k: DirectiveChangeKind| r.directives.iter().filter(|d| d.change == k).count();
    Summary {
        directives_added: count(DirectiveChangeKind::Added),
        directives_removed: count(DirectiveChangeKind::Removed),
        directives_renamed: count(DirectiveChangeKind::Renamed),
        directives_retired: count(DirectiveChangeKind::Retired),
        directives_reactivated: count(DirectiveChangeKind::Reactivated),
        directives_edited: count(DirectiveChangeKind::Edited)
            + count(DirectiveChangeKind::Unreadable),
        escalated: r
            .effective
            .iter()
            .filter(|e| e.escalated_to && !e.escalated_from)
            .count(),
        deescalated: r
            .effective
            .iter()
            .filter(|e| e.escalated_from && !e.escalated_to)
            .count(),
        overrides,
        events_added,
        violations: r.signals.iter().map(|s| s.violations).sum(),
        acks: r.signals.iter().flat_map(|s| s.acks.values()).sum(),
        verdicts: r.signals.iter().flat_map(|s| s.verdicts.values()).sum(),
        prevented: r.signals.iter().map(|s| s.prevented).sum(),
        patterns_promoted: r.patterns.iter().filter(|p| p.change == "promoted").count(),
        patterns_deprecated: r
            .patterns
            .iter()
            .filter(|p| p.change == "deprecated")
            .count(),
        quarantined: r
            .quarantine
            .iter()
            .filter(|q| q.change == QuarantineChangeKind::Added)
            .count(),
        unquarantined: r
            .quarantine
            .iter()
            .filter(|q| {
                matches!(
                    q.change,
                    QuarantineChangeKind::Promoted | QuarantineChangeKind::Removed
                )
            })
            .count(),
        proposals_added: r
            .proposals
            .iter()
            .filter(|p| p.change == ProposalChangeKind::Added)
            .count(),
        proposals_decided: r
            .proposals
            .iter()
            .filter(|p| p.change == ProposalChangeKind::Decided)
            .count(),
        handoffs_opened: r
            .handoffs
            .iter()
            .filter(|h| h.change == HandoffChangeKind::Opened)
            .count(),
        handoffs_completed: r
            .handoffs
            .iter()
            .filter(|h| {
                h.to.as_deref() == Some("completed") && h.from.as_deref() != Some("completed")
            })
            .count(),
        config_keys: r.config.len(),
        missing_events: r.missing_events.len(),
        other_files: r.other_files.len(),
        problems: r.problems.len(),
    }
}

/// The signals the new side's added events record, per directive.
fn signals(logs: &events::Logs) -> Vec<Signals> {
    let mut by_id: BTreeMap<&str, Signals> = BTreeMap::new();
    for logged in &logs.added {
        let head = &logged.head;
        // An ack's status or a verdict's outcome, read once for all its directives.
        let outcome = match head.known {
            Some(Kind::Ack) => logged.outcome().status,
            Some(Kind::Verdict) => logged.outcome().verdict,
            _ => None,
        };
        let outcome = outcome.as_deref().unwrap_or("?");
        for d in &head.directives {
            let s = by_id.entry(d.as_str()).or_default();
            *s.kinds.entry(head.kind.clone()).or_default() += 1;
            if events::is_violation(head) {
                s.violations += 1;
            }
            match head.known {
                Some(Kind::Ack) => *s.acks.entry(outcome.to_owned()).or_default() += 1,
                Some(Kind::Verdict) => *s.verdicts.entry(outcome.to_owned()).or_default() += 1,
                Some(Kind::Shown) => s.shown += 1,
                Some(Kind::Prevented) => s.prevented += 1,
                _ => {}
            }
        }
    }
    by_id
        .into_iter()
        .map(|(id, s)| Signals {
            id: id.to_owned(),
            ..s
        })
        .collect()
}

/// Patterns promoted or deprecated by the added events.
fn patterns(logs: &events::Logs) -> Vec<PatternChange> {
    let mut out = Vec::new();
    for logged in &logs.added {
        let (change, reason) = match logged.head.known {
            Some(Kind::PatternPromoted) => ("promoted", "justification"),
            Some(Kind::PatternDeprecated) => ("deprecated", "reason"),
            _ => continue,
        };
        let Some(e) = logged.event() else { continue };
        let reason = e.str_field(reason);
        let Some(id) = e.str_field("pattern") else {
            continue;
        };
        let known = logs.new.patterns.resolve(id).map(|(_, p)| p);
        out.push(PatternChange {
            id: id.to_owned(),
            change: change.to_owned(),
            event: e.id.clone(),
            role: known.map(|p| p.role.clone()).filter(|r| !r.is_empty()),
            text: known.map(|p| p.text.clone()).filter(|t| !t.is_empty()),
            reason: reason.map(str::to_owned),
        });
    }
    out.sort_by(|a, b| (&a.id, &a.event).cmp(&(&b.id, &b.event)));
    out
}

/// Effective priority and enforcement on each side of every directive the
/// change could have moved: its file changed, or events about it were
/// recorded (or lost).
fn effective(
    repo: &gix::Repository,
    (old, new): (&Side, &Side),
    declared: &mut directives::Declared,
    changes: &[DirectiveChange],
    logs: &events::Logs,
) -> Result<Vec<EffectiveChange>> {
    let mut ids: std::collections::BTreeSet<String> =
        changes.iter().map(|c| c.id.clone()).collect();
    ids.extend(
        changes
            .iter()
            .filter_map(|c| c.old_path.as_deref().map(directives::stem)),
    );
    for logged in logs.added.iter().chain(&logs.missing) {
        ids.extend(logged.head.directives.iter().cloned());
    }
    // The events that can be a cause, by directive: looked up, not searched for each.
    let mut recorded_by: std::collections::HashMap<
        &str,
        Vec<(&crate::fold::EventHead, crate::event::Event)>,
    > = std::collections::HashMap::new();
    for added in &logs.added {
        let head = &added.head;
        if !matches!(
            head.known,
            Some(Kind::Escalation | Kind::Deescalation | Kind::Override)
        ) {
            continue;
        }
        let Some(event) = added.event() else { continue };
        for d in &head.directives {
            recorded_by
                .entry(d.as_str())
                .or_default()
                .push((head, event.clone()));
        }
    }
    // A directive whose file both sides share, whose escalation stands as it
    // did and that no escalation or deescalation names has the same
    // effective state on both sides (an override alone makes no row): its
    // file need not be parsed.
    let same_file = |id: &str| {
        let path = format!("directives/{id}.toml");
        match (old.files.get(&path), new.files.get(&path)) {
            (Some(a), Some(b)) => a.same(b),
            (None, None) => true,
            _ => false,
        }
    };
    let escalation_named = |id: &str| {
        recorded_by.get(id).is_some_and(|events| {
            events
                .iter()
                .any(|(h, _)| matches!(h.known, Some(Kind::Escalation | Kind::Deescalation)))
        })
    };
    let ids: Vec<String> = ids
        .into_iter()
        .filter(|id| {
            !same_file(id)
                || escalation_named(id)
                || logs.old.fold.escalated(id).is_some() != logs.new.fold.escalated(id).is_some()
        })
        .collect();
    let path = |id: &str| format!("directives/{id}.toml");
    // A link or a missing file declares nothing: only regular files are parsed.
    let regular =
        |side: &Side, id: &str| side.files.get(&path(id)).is_some_and(|f| f.kind.is_none());
    declared.parse(
        repo,
        (old, new),
        ids.iter().flat_map(|id| {
            [
                regular(old, id).then(|| (Which::Old, path(id))),
                regular(new, id).then(|| (Which::New, path(id))),
            ]
            .into_iter()
            .flatten()
        }),
    )?;
    let mut out = Vec::new();
    for id in ids {
        let parsed = |which: Which, side: &Side| {
            if !regular(side, &id) {
                return None;
            }
            declared
                .get(which, &path(&id))
                .and_then(|l| l.as_ref().ok())
        };
        let (a, b) = (parsed(Which::Old, old), parsed(Which::New, new));
        let level = |fold: &crate::fold::Fold, d: Option<&crate::directive::Directive>| {
            d.map(|d| {
                let (priority, enforcement) = fold.effective(d);
                Level {
                    priority,
                    enforcement,
                }
            })
        };
        let (from, to) = (level(&logs.old.fold, a), level(&logs.new.fold, b));
        let escalated_from = a.is_some() && logs.old.fold.escalated(&id).is_some();
        let escalated_to = b.is_some() && logs.new.fold.escalated(&id).is_some();
        let mut causes = Vec::new();
        for (head, e) in recorded_by.get(id.as_str()).into_iter().flatten() {
            let (kind, text) = match head.known {
                Some(Kind::Escalation) => ("escalation", e.str_field("reason")),
                Some(Kind::Deescalation) => ("deescalation", e.str_field("justification")),
                Some(Kind::Override) => ("override", e.str_field("justification")),
                _ => continue,
            };
            let violations = e
                .data
                .get("violations")
                .and_then(|v| v.as_array())
                .map(|l| {
                    l.iter()
                        .filter_map(|v| v.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default();
            causes.push(Cause {
                kind: kind.into(),
                event: Some(e.id.clone()),
                episode: e.str_field("episode").map(str::to_owned),
                text: text.map(str::to_owned),
                violations,
            });
        }
        let recorded = |causes: &[Cause], k: &str| causes.iter().any(|c| c.kind == k);
        if escalated_to && !escalated_from && !recorded(&causes, "escalation") {
            let state = logs.new.fold.loop_state(&id);
            causes.push(Cause {
                kind: "episode_opened".into(),
                event: None,
                episode: state.and_then(|s| s.open_key(&id)),
                text: None,
                violations: state
                    .and_then(|s| s.open())
                    .map(|e| {
                        e.violations
                            .iter()
                            .map(|k| crate::event::id_of_key(*k))
                            .collect()
                    })
                    .unwrap_or_default(),
            });
        }
        if escalated_from && !escalated_to && b.is_some() && !recorded(&causes, "deescalation") {
            causes.push(Cause {
                kind: "episode_ended".into(),
                event: None,
                episode: None,
                text: None,
                violations: Vec::new(),
            });
        }
        let declared_changed = matches!((a, b), (Some(a), Some(b)) if (a.priority, a.enforcement) != (b.priority, b.enforcement));
        if from != to && from.is_some() && to.is_some() && declared_changed {
            causes.push(Cause {
                kind: "declared".into(),
                event: None,
                episode: None,
                text: None,
                violations: Vec::new(),
            });
        }
        let moved = from.is_some() && to.is_some() && from != to;
        let escalated_new = from.is_none() && escalated_to;
        // An override lets a blocked change through: it moves no state, so
        // alone it makes no row (the summary and the signals count it).
        let caused = causes.iter().any(|c| c.kind != "override");
        if moved || escalated_new || escalated_from != escalated_to || caused {
            out.push(EffectiveChange {
                id,
                from,
                to,
                escalated_from,
                escalated_to,
                causes,
            });
        }
    }
    Ok(out)
}

/// The two sides of `revisions`.
fn resolve(repo: &gix::Repository, root: &std::path::Path, revisions: &Revisions) -> Result<Sides> {
    let worktree = || {
        (
            Revision {
                name: "working tree".into(),
                commit: None,
            },
            Source::Worktree(root.to_path_buf()),
        )
    };
    let at = |name: String, spec: &str| -> Result<(Revision, Source)> {
        let (commit, tree) = crate::change::tree_of(repo, spec)?;
        Ok((
            Revision {
                name,
                commit: Some(commit.to_string()),
            },
            Source::Tree(Some(tree)),
        ))
    };
    match revisions {
        Revisions::Range {
            from,
            to,
            symmetric: false,
        } => Ok(Sides {
            old: at(from.clone(), from)?,
            new: at(to.clone(), to)?,
            notes: Vec::new(),
        }),
        Revisions::Range {
            from,
            to,
            symmetric: true,
        } => {
            let base = merge_base(repo, from, to)?;
            Ok(Sides {
                old: at(format!("merge base of {from} and {to}"), &base.to_string())?,
                new: at(to.clone(), to)?,
                notes: Vec::new(),
            })
        }
        Revisions::Worktree(from) => Ok(Sides {
            old: at(from.clone(), from)?,
            new: worktree(),
            notes: Vec::new(),
        }),
        Revisions::Upstream => {
            let head = match repo.head_id() {
                Ok(id) => id.detach(),
                // No commit yet: everything in the working tree is new.
                Err(_) => {
                    return Ok(Sides {
                        old: (
                            Revision {
                                name: "the empty tree (no commit yet)".into(),
                                commit: None,
                            },
                            Source::Tree(None),
                        ),
                        new: worktree(),
                        notes: vec!["HEAD has no commit yet: comparing the empty tree with the working tree".into()],
                    });
                }
            };
            match upstream(repo)? {
                Ok((name, id)) => {
                    let none = || {
                        Error::usage(
                            format!("HEAD and its upstream {name} have no merge base"),
                            "name the revisions: `git swarm diff A..B`",
                        )
                    };
                    let base = repo
                        .merge_base(head, id)
                        .map_err(|_| none())?
                        .ok_or_else(none)?
                        .detach();
                    Ok(Sides {
                        old: at(format!("merge base of HEAD and {name}"), &base.to_string())?,
                        new: worktree(),
                        notes: Vec::new(),
                    })
                }
                Err(why) => Ok(Sides {
                    old: at("HEAD".into(), "HEAD")?,
                    new: worktree(),
                    notes: vec![format!("{why}: comparing HEAD with the working tree")],
                }),
            }
        }
    }
}

fn merge_base(repo: &gix::Repository, from: &str, to: &str) -> Result<gix::ObjectId> {
    let (a, _) = crate::change::tree_of(repo, from)?;
    let (b, _) = crate::change::tree_of(repo, to)?;
    let none = || {
        Error::usage(
            format!("`{from}` and `{to}` have no merge base"),
            "use A..B for unrelated histories",
        )
    };
    Ok(repo
        .merge_base(a, b)
        .map_err(|_| none())?
        .ok_or_else(none)?
        .detach())
}

/// HEAD's upstream (its short name and commit), or why there is none.
fn upstream(
    repo: &gix::Repository,
) -> Result<std::result::Result<(String, gix::ObjectId), String>> {
    let Some(head) = repo
        .head_name()
        .map_err(|e| Error::git("reading HEAD", e))?
    else {
        return Ok(Err("HEAD is detached, so it has no upstream".into()));
    };
    let branch = head.shorten().to_string();
    let Some(tracking) =
        repo.branch_remote_tracking_ref_name(head.as_ref(), gix::remote::Direction::Fetch)
    else {
        return Ok(Err(format!(
            "no upstream is configured for branch {branch}"
        )));
    };
    let Ok(tracking) = tracking else {
        return Ok(Err(format!(
            "the upstream of branch {branch} cannot be read"
        )));
    };
    let name = tracking.shorten().to_string();
    match repo.try_find_reference(tracking.as_ref()) {
        Ok(Some(mut r)) => match r.peel_to_id() {
            Ok(id) => Ok(Ok((name, id.detach()))),
            Err(_) => Ok(Err(format!(
                "the upstream {name} of branch {branch} names no commit"
            ))),
        },
        _ => Ok(Err(format!(
            "the upstream {name} of branch {branch} does not exist (fetch it?)"
        ))),
    }
}

/// The hives whose pin differs between the two sides' `pins`, each with
/// the hive's knowledge diff from its mirror (docs/hive.md).
fn hive_moves(repo: &gix::Repository, [old, new]: &[files::HivePins; 2]) -> Vec<HiveMove> {
    let names: std::collections::BTreeSet<&String> = old.keys().chain(new.keys()).collect();
    let mut moves = Vec::new();
    for name in names {
        let (from, to) = (old.get(name).cloned(), new.get(name).cloned());
        if from == to {
            continue;
        }
        let (report, note) = match &to {
            None => (None, None),
            Some(to) => match hive_report(repo, name, from.as_deref(), to) {
                Ok(r) => (Some(Box::new(r)), None),
                Err(e) => (None, Some(e)),
            },
        };
        moves.push(HiveMove {
            name: name.clone(),
            from,
            to,
            report,
            note,
        });
    }
    moves
}

/// The diff of hive `name`'s `.swarm/` from `from` (none: nothing) to `to`,
/// in its mirror.
fn hive_report(
    repo: &gix::Repository,
    name: &str,
    from: Option<&str>,
    to: &str,
) -> std::result::Result<Report, String> {
    let mirror = crate::pins::mirror_dir(repo.common_dir(), name);
    let not_here = || {
        format!(
            "the hive's revisions are not fetched here: `git swarm hive fetch {name}` shows what the move changes"
        )
    };
    if !mirror.symlink_metadata().is_ok_and(|m| m.is_dir()) {
        return Err(not_here());
    }
    let hive = gix::open(&mirror).map_err(|_| not_here())?;
    let commit = |rev: &str| {
        gix::ObjectId::from_hex(rev.as_bytes())
            .ok()
            .filter(|id| hive.find_commit(*id).is_ok())
    };
    let to = commit(to).ok_or_else(not_here)?;
    let from = match from {
        Some(f) => commit(f).ok_or_else(not_here)?,
        None => gix::ObjectId::empty_tree(gix::hash::Kind::Sha1),
    };
    let revisions = Revisions::parse(&format!("{from}..{to}")).map_err(|e| e.to_string())?;
    diff_with(&hive, &mirror, &revisions, false).map_err(|e| e.to_string())
}
