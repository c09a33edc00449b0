//! Meso reflection: a phase's insight candidates folded into lessons. A
//! failure seen in two tasks the same way (one signature) becomes a
//! directive, through the actionability gate like any other; one an active
//! directive covers already makes none.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::PathBuf;

use serde::Serialize;

use super::{Candidate, Class, Sub};
use crate::directive::{Category, Directive, Status};
use crate::display::truncate;
use crate::error::Result;
use crate::event::{Body, Event};
use crate::pattern::text::{jaccard, tokens};
use crate::predicate::Predicate;
use crate::problem::Problem;
use crate::store::{Minted, Store};

/// Fewest tasks a failure is seen in before it is a lesson.
pub const MIN_TASKS: usize = 2;
/// Token overlap with an active directive's text above which a failure is
/// covered by it.
pub const COVERED_SIMILARITY: f64 = 0.5;
/// Days a candidate waits to be folded: one of no phase, or seen in a
/// single task, would otherwise stay until the file is full.
pub const CANDIDATE_DAYS: i64 = 30;

/// What became of one signature's candidates.
#[derive(Debug, Clone, Serialize)]
pub struct Group {
    pub signature: String,
    pub class: Class,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sub: Option<Sub>,
    pub tasks: Vec<String>,
    pub candidates: usize,
    #[serde(flatten)]
    pub outcome: GroupOutcome,
}

#[derive(Debug, Clone, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum GroupOutcome {
    /// A new active directive.
    Added { id: String, path: String },
    /// A lesson that failed the gate, kept in `quarantine/` with its reason.
    Quarantined {
        id: String,
        path: String,
        reason: String,
    },
    /// The lesson was written by an earlier run that stopped before it
    /// consumed its candidates.
    Existing { id: String },
    /// An active directive covers it already.
    Covered { by: String },
    /// Seen in too few tasks yet: the candidates stay.
    Waiting,
}

/// What `reflect meso` decided.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub phase: String,
    pub groups: Vec<Group>,
    /// Candidates of any phase older than [`CANDIDATE_DAYS`], dropped unfolded.
    pub expired: usize,
    /// Malformed lines of the candidates file (kept, and skipped).
    #[serde(skip)]
    pub problems: Vec<Problem>,
    /// Events to append: `added`/`quarantined` for each lesson written, and
    /// `reflected` for each group used.
    #[serde(skip)]
    pub events: Vec<Event>,
    /// Ids of the candidates used, to consume once the events are appended.
    #[serde(skip)]
    pub used: HashSet<String>,
}

/// Folds the candidates of `phase`: writes the lessons (directive or
/// quarantine files) and returns the events to append and the candidates to
/// consume. A lesson's id comes from its signature, so a run that stopped
/// between writing it and consuming its candidates is finished, not
/// repeated, by the next.
pub fn fold(store: &Store, active: &[Directive], phase: &str) -> Result<Report> {
    let (candidates, problems) = super::read_candidates(store)?;
    let cutoff = store
        .clock
        .now()
        .checked_sub(jiff::SignedDuration::from_hours(CANDIDATE_DAYS * 24))
        .unwrap_or(jiff::Timestamp::MIN);
    // A time that does not parse is no reason to keep a candidate forever.
    let expired: HashSet<String> = candidates
        .iter()
        .filter(|c| c.ts.parse::<jiff::Timestamp>().map_or(true, |t| t < cutoff))
        .map(|c| c.id.clone())
        .collect();
    let mut groups: BTreeMap<&str, Vec<&Candidate>> = BTreeMap::new();
    for c in candidates
        .iter()
        .filter(|c| c.phase.as_deref() == Some(phase) && !expired.contains(&c.id))
    {
        groups.entry(c.signature.as_str()).or_default().push(c);
    }
    let mut report = Report {
        phase: phase.to_owned(),
        groups: Vec::new(),
        expired: expired.len(),
        problems,
        events: Vec::new(),
        used: expired,
    };
    for (signature, members) in groups {
        let tasks: BTreeSet<String> = members
            .iter()
            .map(|c| {
                c.task
                    .clone()
                    .unwrap_or_else(|| format!("candidate {}", c.id))
            })
            .collect();
        let first = members[0];
        let lesson = lesson(first, &members, tasks.len(), phase, store);
        let outcome = if tasks.len() < MIN_TASKS {
            GroupOutcome::Waiting
        } else if store.id_taken(&lesson.id).is_some() {
            GroupOutcome::Existing {
                id: lesson.id.clone(),
            }
        } else if let Some(by) = covered_by(&lesson, active) {
            GroupOutcome::Covered { by }
        } else {
            match store.mint(lesson.clone())? {
                Minted::Added { path, event } => {
                    report.events.push(event);
                    GroupOutcome::Added {
                        id: lesson.id.clone(),
                        path: store.rel(&path),
                    }
                }
                Minted::Quarantined {
                    path,
                    event,
                    failure,
                } => {
                    report.events.push(event);
                    GroupOutcome::Quarantined {
                        id: lesson.id.clone(),
                        path: store.rel(&path),
                        reason: failure.reason.as_str().to_owned(),
                    }
                }
            }
        };
        if !matches!(outcome, GroupOutcome::Waiting) {
            report.used.extend(members.iter().map(|c| c.id.clone()));
            let directive = match &outcome {
                GroupOutcome::Covered { by } => by.clone(),
                _ => lesson.id.clone(),
            };
            report.events.push(
                store
                    .event(Body::Reflected {
                        phase: phase.to_owned(),
                        signature: signature.to_owned(),
                        candidates: members.iter().map(|c| c.id.clone()).collect(),
                        tasks: tasks.iter().cloned().collect(),
                        outcome: outcome_name(&outcome).to_owned(),
                    })
                    .about(&directive),
            );
        }
        report.groups.push(Group {
            signature: signature.to_owned(),
            class: first.class,
            sub: first.sub,
            tasks: tasks.into_iter().collect(),
            candidates: members.len(),
            outcome,
        });
    }
    Ok(report)
}

fn outcome_name(o: &GroupOutcome) -> &'static str {
    match o {
        GroupOutcome::Added { .. } => "added",
        GroupOutcome::Quarantined { .. } => "quarantined",
        GroupOutcome::Existing { .. } => "existing",
        GroupOutcome::Covered { .. } => "covered",
        GroupOutcome::Waiting => "waiting",
    }
}

/// The active directive that says this lesson already: one that runs the
/// same `tool:` command, or whose text shares most of its words.
fn covered_by(lesson: &Directive, active: &[Directive]) -> Option<String> {
    let tool = |d: &Directive| -> Vec<Vec<String>> {
        d.verify
            .iter()
            .filter_map(|v| match Predicate::parse(v) {
                Ok(Predicate::Tool { argv }) => Some(argv),
                _ => None,
            })
            .collect()
    };
    let mine = tool(lesson);
    let words = |d: &Directive| {
        let mut text = d.lesson.clone();
        for t in d
            .triggers
            .iter()
            .chain(&d.required_actions)
            .chain(&d.forbidden_actions)
        {
            text.push(' ');
            text.push_str(t);
        }
        tokens(&text)
    };
    let my_words = words(lesson);
    active
        .iter()
        .filter(|d| d.status == Status::Active)
        .find(|d| {
            tool(d).iter().any(|argv| mine.contains(argv))
                || jaccard(&my_words, &words(d)) >= COVERED_SIMILARITY
        })
        .map(|d| d.id.clone())
}

/// The lesson a group of candidates teaches, with its id, rationale and
/// source: meso's own.
fn lesson(
    first: &Candidate,
    members: &[&Candidate],
    tasks: usize,
    phase: &str,
    store: &Store,
) -> Directive {
    let hash = xxhash_rust::xxh3::xxh3_64(first.signature.as_bytes());
    let sub = first.sub.map_or("call", Sub::as_str);
    let mut d = draft(first, members, &format!("{tasks} tasks of phase {phase}"));
    d.id = format!("reflect-{sub}-{hash:016x}");
    d.rationale = Some(format!(
        "Reflected from {} insight candidates of phase {phase} (signature `{}`).",
        members.len(),
        one_line(&first.signature)
    ));
    d.source = Some(format!("git swarm reflect meso --phase {phase}"));
    d.created_at = Some(
        store
            .clock
            .now()
            .round(jiff::Unit::Second)
            .unwrap_or(store.clock.now())
            .to_string(),
    );
    d
}

/// What a group of the same failure teaches, `seen` saying where it was
/// seen: the lesson, its actions, a `tool:` check where the failing command
/// is one program, the category and the scope (the roles and tools seen).
/// No id: meso and macro reflection each name what they make.
pub(super) fn draft(first: &Candidate, members: &[&Candidate], seen: &str) -> Directive {
    let mut d = Directive::new(String::new(), String::new());
    let command = first.command.as_deref().map(one_line);
    let what = first.excerpt.as_deref().map(one_line);
    let text = match (first.class, first.sub, &command) {
        (Class::Blocked, _, Some(c)) => {
            d.forbidden_actions
                .push(truncate(&format!("running `{c}`"), 200));
            format!("Do not run `{c}`: it was refused in {seen}")
        }
        (_, Some(Sub::Test | Sub::Lint | Sub::Typecheck | Sub::Build), Some(c)) => {
            d.required_actions.push(truncate(
                &format!("run `{c}` and fix what it reports before handing off"),
                200,
            ));
            if let Ok(Predicate::Tool { .. }) = Predicate::parse(&format!("tool:{c}")) {
                d.verify.push(format!("tool:{c}"));
            }
            format!("Run `{c}` before handing off: it failed the same way in {seen}")
        }
        (_, Some(Sub::Revert), Some(c)) => {
            d.required_actions
                .push("check the approach with a test before editing".to_owned());
            format!("Work was undone with `{c}` in {seen}: check the approach before editing")
        }
        (_, _, Some(c)) => {
            d.verification_checks
                .push(truncate(&format!("`{c}` runs without this failure"), 200));
            format!("`{c}` failed the same way in {seen}")
        }
        (_, _, None) => {
            d.verification_checks.push(truncate(
                &format!("{} calls do not fail this way", first.tool),
                200,
            ));
            format!("{} calls failed the same way in {seen}", first.tool)
        }
    };
    d.lesson = truncate(
        &match &what {
            Some(w) => format!("{text} ({w})"),
            None => text,
        },
        280,
    );
    d.category = match first.sub {
        Some(Sub::Test) => Category::Testing,
        Some(Sub::Lint | Sub::Typecheck | Sub::Build) => Category::Tooling,
        _ => Category::Process,
    };
    let scope = |names: Vec<Option<String>>| -> Vec<String> {
        let set: BTreeSet<String> = names
            .into_iter()
            .flatten()
            .map(|n| n.to_ascii_lowercase())
            .filter(|n| crate::directive::is_valid_scope_name(n))
            .collect();
        set.into_iter().take(20).collect()
    };
    d.applies_to_agents = scope(members.iter().map(|c| c.role.clone()).collect());
    // By what the tool does, not the harness's name for it: a lesson from
    // Gemini CLI's `run_shell_command` is about Claude Code's `Bash` too.
    d.applies_to_tools = scope(
        (members.iter())
            .map(|c| {
                let common = crate::reflect::payload::common_tool_name(&c.tool);
                Some(common.map_or_else(|| c.tool.clone(), str::to_owned))
            })
            .collect(),
    );
    d
}

pub(super) fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The candidates file after `used` are taken out, written whole.
pub fn consume(store: &Store, used: &HashSet<String>) -> Result<Option<PathBuf>> {
    super::rewrite_candidates(store, |c| !used.contains(&c.id))
}
